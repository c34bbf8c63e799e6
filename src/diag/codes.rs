//! The table of diagnostic codes. One entry per code: its stable name, default severity,
//! the rule of the domain it enforces, a default help, and the long explanation that
//! `fleetc explain CODE` prints (what it does, why, an example, what to write instead).
//!
//! Codes are never renamed or reused; a retired code stays here, marked removed.

use super::Severity;

#[derive(Debug, PartialEq, Eq)]
pub struct Code {
    /// Stable, path-like name: `fleet::<family>::<what>`.
    pub name: &'static str,
    pub severity: Severity,
    /// The domain rule or upstream fact this code enforces (`R29`, `F5`), if any.
    pub rule: Option<&'static str>,
    /// Default help; a diagnostic may replace it with a more precise one.
    pub help: Option<&'static str>,
    /// Long explanation in four parts: what, why, example, instead.
    pub explanation: &'static str,
}

macro_rules! codes {
    ($( $ident:ident = $name:literal, $sev:ident, $rule:expr, $help:expr, $expl:literal; )*) => {
        $(
            pub static $ident: Code = Code {
                name: $name,
                severity: Severity::$sev,
                rule: $rule,
                help: $help,
                explanation: $expl,
            };
        )*
        /// Every code, in table order.
        pub static ALL: &[&Code] = &[$(&$ident),*];
    };
}

/// Looks a code up by its full name, or by its last segment (`even-control-plane`).
pub fn lookup(name: &str) -> Option<&'static Code> {
    ALL.iter().copied().find(|c| c.name == name).or_else(|| {
        let mut found = ALL.iter().copied().filter(|c| c.name.rsplit("::").next() == Some(name));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    })
}

codes! {
    SYNTAX = "fleet::syntax::invalid-kdl", Error, None, None,
"## What it does
Reports text that is not valid KDL v2, the language fleet.kdl is written in.

## Why
Nothing can be understood from a file that does not parse; fleetc reports every syntax error
it can find before stopping.

## Example
    cluster \"main\" {
        endpoint address=10.10.0.10   // bare 10.10.0.10 is not a KDL value

## Instead
    cluster \"main\" {
        endpoint address=\"10.10.0.10\"
";

    FILE_TOO_LARGE = "fleet::limits::file-too-large", Error, None,
    Some("fleetc reads at most 1 MiB of fleet.kdl, so that every run ends in about a second; split vendored content into files under vendor/"),
"## What it does
Refuses a fleet.kdl larger than 1 MiB (1,048,576 bytes) before parsing it.

## Why
The KDL parser reads about 1 MB per second; a fleet of any size fits in a few kilobytes,
because pools carry a `count` rather than one node per machine. A bound keeps every run short
and its memory small, whatever the input.

## Example
    // a 10 MB comment pasted into fleet.kdl

## Instead
Keep long content (manifests, values) in files the fleet references (`vendor/`, `apps/`).
";

    TOO_DEEP = "fleet::limits::too-deep", Error, None,
    Some("blocks nest at most 64 deep (the deepest fleet node is 6); fleetc refuses deeper text before parsing it, so no input can exhaust the parser's stack"),
"## What it does
Refuses text whose `{ }` blocks (or nested `/* */` comments) go deeper than 64 levels, at
the brace that goes one level too deep.

## Why
The KDL parser descends once per level; a few kilobytes of `{` would exhaust its stack and
abort fleetc. The deepest place in the fleet language is six levels down, so 64 leaves room.

## Example
    fleet \"a\" { x { x { x { … 65 levels … } } } }

## Instead
Remove the stray braces; a `{` inside a string value must be quoted.
";

    LINE_TOO_LONG = "fleet::limits::line-too-long", Error, None,
    Some("a line holds at most 16,384 characters; use a multi-line string (`\"\"\"`) or a vendored file for long content"),
"## What it does
Refuses a line longer than 16,384 characters, at the first character past the limit.

## Why
Diagnostics show the line they point at; a line of megabytes cannot be shown, and no
setting of a fleet needs one.

## Example
    fleet \"a\" { gitops repo=\"https://…100,000 characters…\" }

## Instead
Break the value into a multi-line string, or keep it in a file under `vendor/`.
";

    TOO_MANY_NODES = "fleet::limits::too-many-nodes", Error, None,
    Some("a fleet.kdl holds at most 10,000 nodes; machines come from a pool's `count`, not from one node each"),
"## What it does
Refuses a fleet.kdl with more than 10,000 KDL nodes, at the first node past the limit.

## Why
Every node is read, inherited into environments and checked; a bound keeps that work and the
diagnostics it can produce small. The reference fleet has under 100 nodes.

## Example
    label \"a\" \"1\"
    label \"a\" \"1\"   // … 10,000 times

## Instead
Use `count=` on a pool and `pool-defaults` for settings shared by many pools.
";

    TOO_MANY_DIAGNOSTICS = "fleet::limits::too-many-diagnostics", Error, None,
    Some("fleetc reports the first 200 problems; fix them and run again to see the rest"),
"## What it does
Stands for every problem past the 200th: it points at the first one not reported, and the run
fails if any omitted problem is an error.

## Why
Past a few hundred, more diagnostics help nobody and cost time to sort and render; one broken
brace can make thousands.

## Example
    // 10,000 lines of an unknown node
    nod \"x\"

## Instead
Fix the first problems (usually one syntax error causes the rest) and run again.
";

    COUNT_TOO_LARGE = "fleet::limits::count-too-large", Error, None,
    Some("a cluster holds at most 5,000 nodes (Kubernetes' tested limit) and a pool no more nodes than its environment's network has addresses"),
"## What it does
Refuses a pool `count` larger than 5,000, or larger than the number of host addresses of the
environment's private network.

## Why
Kubernetes is tested up to 5,000 nodes per cluster; every node needs an address in the
private network (R6); and fleetc materializes one machine per node, so an unbounded count
would exhaust memory before anything else could be said.

## Example
    network \"10.10.0.0/22\"
    pool \"workers\" count=2147483649

## Instead
    pool \"workers\" count=40
";

    UNKNOWN_NODE = "fleet::model::unknown-node", Error, None, None,
"## What it does
Reports a node name that fleetc does not know at that place in the fleet.

## Why
A misspelt node would otherwise be ignored silently, and the setting it was meant to carry
would not reach the output. docs/fleet-language.md lists every node and where it may stand.

## Example
    cluster \"main\" {
        discovry #false

## Instead
    cluster \"main\" {
        discovery #false
";

    UNKNOWN_PROPERTY = "fleet::model::unknown-property", Error, None, None,
"## What it does
Reports a property (`key=value`) that the node does not take.

## Why
A misspelt property would otherwise be ignored silently.

## Example
    pool \"system\" count=2 sise=\"small\"

## Instead
    pool \"system\" count=2 size=\"small\"
";

    UNEXPECTED_ARGUMENT = "fleet::model::unexpected-argument", Error, None, None,
"## What it does
Reports a positional argument (or a children block) that the node does not take.

## Why
Extra values are a sign that something was meant differently; fleetc does not guess.

## Example
    talos \"v1.13.9\" \"v1.12.0\"

## Instead
    talos \"v1.13.9\"
";

    WRONG_TYPE = "fleet::model::wrong-type", Error, None, None,
"## What it does
Reports a value of the wrong KDL type: a number where a string is expected, a string where
a boolean is expected, and so on.

## Why
KDL distinguishes `3`, `\"3\"` and `#true`; fleetc reads each value as exactly one type so
that what you wrote is what the output says.

## Example
    control-plane count=\"3\"

## Instead
    control-plane count=3
";

    MISSING_VALUE = "fleet::model::missing-value", Error, None, None,
"## What it does
Reports a required value that is not given and cannot be inherited.

## Why
Values inherit fleet → environment → cluster → pool (R5); a value missing at every level
has no safe default.

## Example
    pool \"system\" count=2   // no size here nor in pool-defaults

## Instead
    pool \"system\" count=2 size=\"small\"
";

    DUPLICATE_NAME = "fleet::model::duplicate-name", Error, None, None,
"## What it does
Reports two things of the same kind with the same name in the same scope.

## Why
Names become file paths, OpenTofu addresses and Kubernetes object names: two things with
one name would overwrite each other.

## Example
    pool \"system\" count=2
    pool \"system\" count=3

## Instead
Give each its own name, or merge them.
";

    PVE_NODE_UNLISTED = "fleet::model::pve-node-unlisted", Error, None,
        Some("`node` holds the Talos images and the VM templates that Cluster API clones; list it among `nodes`, or point `node` at one of them"),
"## What it does
Reports a `proxmox` block whose `node` is not one of the Proxmox VE nodes it lists in `nodes`.

## Why
fleetc spreads the VMs over `nodes` (round robin, in machine order) and downloads each image to
every node that runs VMs from it; `node` is where the VM templates live that Cluster API
clones, and it must be a node fleetc knows. A name outside the list is a typo, or a node the
templates would land on while no VM runs there.

## Example
    proxmox endpoint=\"https://pve.lab.example:8006\" node=\"pve0\" router=\"192.168.50.1\" {
        nodes \"pve1\" \"pve2\"
    }

## Instead
    proxmox endpoint=\"https://pve.lab.example:8006\" node=\"pve1\" router=\"192.168.50.1\" {
        nodes \"pve1\" \"pve2\"
    }
";

    DANGLING_REFERENCE = "fleet::model::dangling-reference", Error, None, None,
"## What it does
Reports a reference to something that is not declared: a schematic, an add-on, a size, an
environment in `from=`, a management cluster in `managed-by=`, an app in `after=`.

## Why
A dangling reference cannot be compiled; the help lists the closest declared name.

## Example
    pool \"system\" schematic=\"isolatd\"

## Instead
    pool \"system\" schematic=\"isolated\"
";

    INVALID_VALUE = "fleet::model::invalid-value", Error, None, None,
"## What it does
Reports a value of the right type but the wrong form: a CIDR, an address, a version, a size
such as `100GB`, a sha256, an enumerated word.

## Why
Each value is parsed once, in the model, so every emitter sees the same, valid value.

## Example
    network \"10.10.0.0/33\"

## Instead
    network \"10.10.0.0/22\"
";

    INVALID_NAME = "fleet::names::not-dns-label", Error, None,
    Some("names become hostnames, Kubernetes object names and file paths: use lowercase letters, digits and `-`, starting with a letter and ending with a letter or digit, at most 63 characters (DNS-1123 label)"),
"## What it does
Reports a name (environment, cluster, pool, app, service) that is not a DNS-1123 label.

## Why
Names become node hostnames, Kubernetes object names, OpenTofu addresses and directories
under out/. A name that is valid in one of these and not another breaks late; fleetc
refuses it at the source.

## Example
    cluster \"Main_Cluster\"

## Instead
    cluster \"main\"
";

    INHERITANCE_CYCLE = "fleet::model::inheritance-cycle", Error, None, None,
"## What it does
Reports environments that inherit from each other in a circle through `from=`.

## Why
An environment inherits what it does not state from its `from=` environment (R5); a circle
has no starting point.

## Example
    environment \"a\" from=\"b\"
    environment \"b\" from=\"a\"

## Instead
Let one of them state everything and the other inherit from it.
";

    FILE_UNREADABLE = "fleet::model::file-unreadable", Error, None, None,
"## What it does
Reports a file that fleet.kdl references (a vendored manifest) and that cannot be read, or
that lies outside the fleet's directory.

## Why
fleetc never downloads anything: vendored manifests live in the repository, beside
fleet.kdl, so that a build is reproducible from git alone (R28).

## Example
    addon \"cilium\" manifest=\"../elsewhere/cilium.yaml\" …

## Instead
Vendor the file under the fleet's directory and reference it by a relative path.
";

    CHECKSUM_MISMATCH = "fleet::model::checksum-mismatch", Error, None,
    Some("vendored manifests are pinned by sha256 so that a changed file is a reviewed change; if the new content is intended, update `sha256=` to the value shown"),
"## What it does
Reports a vendored manifest whose sha256 differs from the one pinned in fleet.kdl.

## Why
A vendored file that changes without its pin changing would change every cluster that
embeds it without anyone reviewing it.

## Example
    addon \"cilium\" manifest=\"vendor/cilium.yaml\" sha256=\"<old>\"

## Instead
Update `sha256=` to the value in the diagnostic once the change is reviewed.
";

    IAM = "fleet::iam::not-expressible", Error, Some("R8"),
    Some("the credential that builds the fleet holds no IAM permission, since writing IAM needs a right whose holder can grant itself anything; IAM stays manual and fleetc never emits it (R8)"),
"## What it does
Reports any attempt to declare IAM (applications, policies, API keys, permission sets) in
fleet.kdl. There is no node for it: this code names the refusal.

## Why (R8)
Writing IAM needs a permission whose holder can grant itself anything. The credential that
builds the fleet therefore holds none, and IAM stays a manual, reviewed operation.

## Example
    environment \"staging\" {
        iam-policy \"ci\" { … }

## Instead
Create IAM applications and policies by hand in the cloud console; give fleetc's apply step
the resulting credential through its environment variables (docs/apply.md).
";

    DEVICE_PATH = "fleet::talos::device-path", Error, Some("R15"),
    Some("volumes attach in an order that can change, and a device path then names the system disk: select the ephemeral disk by size with `ephemeral-min-size` instead (R15, F5)"),
"## What it does
Reports a disk given by device path (`/dev/sdb`, `/dev/vdb`, …).

## Why (R15, F5)
The path in a provider's guide is right until volumes attach in another order; then it names
the system disk. fleetc selects the EPHEMERAL volume's disk with a selector on size that also
excludes the system disk: `!system_disk && disk.size >= 100u * GB`.

## Example
    pool \"system\" ephemeral-disk=\"/dev/sdb\"

## Instead
    pool \"system\" ephemeral-min-size=\"100GB\"
";

    PATCH_INVALID = "fleet::talos::patch-invalid", Error, None,
    Some("a patch is what `talosctl --config-patch` takes: YAML documents, each the machine config (`machine:`/`cluster:`) or a named document with `apiVersion` and `kind` (docs/talos.md, \"Patches\")"),
"## What it does
Reports a `patch` file that is not a Talos strategic-merge patch: not YAML, or a document that
is neither the machine config (a mapping with `machine` or `cluster`) nor a config document
with a `kind`.

## Why
Every consumer of the patch (the OpenTofu talos provider, CABPT, talosctl) loads it with
Talos's `configpatcher.LoadPatch` (siderolabs/talos v1.13.0,
`pkg/machinery/config/configpatcher/load.go`), whose strict decoder refuses anything else; the
failure would come at apply time, on one node.

## Example
    # patches/kubelet.yaml
    kubelet:
      extraArgs:
        max-pods: \"150\"

## Instead
    machine:
      kubelet:
        extraArgs:
          max-pods: \"150\"
";

    PATCH_JSON6902 = "fleet::talos::patch-json6902", Error, None,
    Some("Talos applies RFC 6902 JSON patches to a single-document v1alpha1 config only, and fleetc's configs are multi-document: write the change as a strategic-merge patch (the YAML it should merge into), with `$patch: delete` to remove"),
"## What it does
Reports a `patch` file that is a list of `op:` entries (an RFC 6902 JSON patch).

## Why
Talos refuses a JSON patch on a multi-document config (siderolabs/talos v1.13.0,
`pkg/machinery/config/configpatcher/apply.go`: JSON patches need the config as one v1alpha1
document), and every config fleetc hands to Talos is multi-document (common, role, node
documents). CABPT's README says the same for Talos 1.12 and later.

## Example
    - op: add
      path: /machine/kubelet/extraArgs
      value: {max-pods: \"150\"}

## Instead
    machine:
      kubelet:
        extraArgs:
          max-pods: \"150\"
";

    PATCH_SCHEMA = "fleet::talos::patch-schema", Error, None,
    Some("the patch must be valid for every Talos version it applies to; Talos's strict decoder refuses an unknown field when the config is loaded (schemas/talos/<version>/config.schema.json)"),
"## What it does
Checks every document of a `patch` against the Talos config schema of the document model
fleetc writes for the patched machines (`schemas/talos/v1.12`, `v1.13`, embedded in fleetc;
the 1.13 model on Talos 1.14 nodes, versions/talos.kdl), and reports unknown fields, unknown
document kinds and values of the wrong type, with the line and column in the patch file.

## Why
Talos loads patches with a strict decoder (`configloader/internal/decoder/decoder.go`,
`KnownFields(true)`): an unknown field fails the machine's config at apply time. The patch is
merged into the config the consumer generates for that model's contract (the OpenTofu provider
and CABPT are built on the 1.13 machinery), so the model's schema is what it must fit; a 1.14
document such as `KubeletConfig` next to the 1.13 model's `machine.kubelet` is refused by a
1.14 node as a conflict.

## Example
    machine:
      kubelet:
        extraArg:            # the field is `extraArgs`
          max-pods: \"150\"

## Instead
    machine:
      kubelet:
        extraArgs:
          max-pods: \"150\"
";

    SCHEMA_REJECTED = "fleet::emit::schema-rejected", Error, None,
    Some("fleetc validates every document it would write, and every vendored manifest it embeds, against the schema of the pinned version before writing anything: the tool that reads it would refuse it (Talos's strict config decoder, siderolabs/talos pkg/machinery/config/configloader; the API server's field validation, `Strict` under `kubectl apply` since Kubernetes 1.27)"),
"## What it does
Validates, as the last step of every build and before a single file is written, every YAML
document fleetc would write into out/ (Talos machine config documents, Cluster API and Argo CD
objects) and every vendored manifest the fleet embeds (`addon … manifest=`, Cluster API's
`cert-manager` and `operator` manifests, Argo CD's install) against the schema of the version
the fleet pins: the Talos config schema of the cluster's Talos minor, the CRD schema of the
pinned provider release, the Kubernetes core schema (schemas/, embedded in fleetc; provenance
in schemas/README.md). Object schemas that list their fields refuse any other field. The
message names the file (in out/, or the vendored file), the document (counted from 1) and the
field's JSON pointer.

## Why
A document a tool refuses breaks the fleet at apply time, after `fleetc build` has handed it
over: Talos's loader decodes strictly (siderolabs/talos, pkg/machinery/config/configloader,
unknown fields refused), and `kubectl apply` asks the API server for `Strict` field validation
(the default since Kubernetes 1.27), which refuses unknown fields and wrongly typed values. A
vendored manifest edited by hand, or rendered for another version, is caught here rather than
on a live cluster. A run with this error writes nothing.

## Example
    # vendor/cilium-1.18.4.yaml, a Deployment
    spec:
      replicas: \"two\"

## Instead
    spec:
      replicas: 2
";

    PATCH_UNDOES_RULE = "fleet::talos::patch-undoes-rule", Error, None,
    Some("a patch may not silently undo what fleetc enforces; if it is deliberate, say so on the `patch` line (`overrides=\"R21\"`) and the build warns instead"),
"## What it does
Reports a patch that changes what one of fleetc's rules fixes: discovery turned back on (R21),
an installer image other than the pinned Image Factory one (R17), the install disk or the
EPHEMERAL volume's disk named by device path (R15).

## Why
Patches apply after fleetc's own documents, so they win: a patch can quietly reintroduce the
failure the rule exists for. A patch that means it says so with `overrides=`, and every build
then warns, naming the rule (`fleet::talos::patch-override`).

## Example
    patch \"patches/discovery.yaml\"      # cluster.discovery.enabled: true

## Instead
    patch \"patches/discovery.yaml\" overrides=\"R21\"
";

    PATCH_OVERRIDE = "fleet::talos::patch-override", Warning, None,
    Some("the `patch` line says `overrides=`: the rule's protection is off for the machines it reaches"),
"## What it does
Warns, at every build, that a patch undoes one of fleetc's rules and says so with `overrides=`.

## Why
The override is deliberate, but a reviewer of each change should still see that the rule no
longer holds for these machines.

## Example
    patch \"patches/discovery.yaml\" overrides=\"R21\"

## Instead
Remove the patch (or the part of it that undoes the rule) when the reason is gone.
";

    PATCH_SECRET = "fleet::talos::patch-secret", Error, Some("R14"),
    Some("the cluster's identity comes from the sealed secrets bundle at apply time (R14) and credentials from sealed inputs (F11); a patch is committed and copied into out/, so it never holds key material"),
"## What it does
Reports key material or a credential in a `patch`: the cluster's identity fields (`machine.ca`,
`machine.token`, `cluster.ca`, `cluster.secret`, `cluster.token`, the encryption secrets, the
service account key, the etcd and aggregator CAs, `cluster.id`) or a PEM private key anywhere.
It cannot be overridden.

## Why (R14, F11)
The patch file is committed and fleetc copies it into out/, which is committed too. The
identity is imported from the sealed bundle, never written in a file (R14).

## Example
    cluster:
      secret: c2VjcmV0

## Instead
Leave the identity to the sealed bundle (`fleetc secrets import`); put credentials in a sealed
input.
";

    ADDON_KUBERNETES_UNTESTED = "fleet::addons::kubernetes-untested", Warning, Some("R25"), None,
"## What it does
Warns when an add-on runs on a cluster whose Kubernetes minor is outside the range its project
tested that release on: an embedded add-on (`addon … version=`, e.g. Cilium), cert-manager
(`cluster-api { cert-manager version= }`), a chart app (`chart=… version=`, e.g. External
Secrets) and Argo CD (`argocd version=`) on each cluster that runs it. The ranges, each with
its source, are `upstream::talos::ADDON_KUBERNETES` (docs/talos.md, \"Add-on Kubernetes
ranges\").

## Why (R25)
A release is built against the Kubernetes APIs of its time: outside its tested range it may
call an API the server no longer serves, or miss one it now needs. Nodes are Ready only with a
working CNI and cloud controller manager, and GitOps only with a working Argo CD: an untested
pair is a risk the project itself has not taken.

## Example
    kubernetes \"1.36.2\"
    addon \"cilium\" version=\"1.18.4\" …   // Cilium 1.18 is tested on 1.30–1.33

## Instead
Pin an add-on release whose project lists the cluster's Kubernetes minor, or keep the cluster
on a minor the add-on lists. When you have tested the pair yourself, the warning stays: it
says what upstream states, not what you found.
";

    KEY_MATERIAL_IN_FLEET = "fleet::secrets::key-material", Error, Some("F11"),
    Some("fleet.kdl is committed to git, and its strings reach out/, machine configs and tools' command lines: a private key belongs in a sealed input (`fleetc secrets import <env>/<cluster> <name> FILE`, named in the cluster's `sealed`), never in fleet.kdl (F11, R14)"),
"## What it does
Reports a string anywhere in fleet.kdl (an argument or a property, of any node, whether
fleetc reads it or not), or a comment (`//`, `/* … */`, or a part commented out with `/-`),
that holds a private key: a PEM private-key block (`-----BEGIN … PRIVATE KEY-----`, PKCS#1/#8,
EC, OpenSSH, encrypted, PGP), the same block base64-encoded, an age identity
(`AGE-SECRET-KEY-1…`, or a plugin identity `AGE-PLUGIN-…-1…`), or a PuTTY key file. In a
comment it points at the key's header or prefix, so that the report does not print the key.
Nothing is built while it is there.

## Why (F11, R14)
fleet.kdl is committed, reviewed in pull requests and copied into out/ (names, labels,
descriptions, patches): a key written there is in git's history for ever, and in every
artifact and log that carries the string. Keys and credentials reach a cluster only from a
sealed input, decrypted at apply time in memory or in a 0600 file.

## Example
    cluster \"main\" {
        label \"-----BEGIN PRIVATE KEY-----\\nMIIEv…\"

## Instead
Remove the string, rotate the key (it has been on disk unencrypted), and seal it:
`fleetc secrets import staging/main scaleway-api-key key.txt`, with `sealed
\"scaleway-api-key\"` in the cluster. Public material (certificates, `age1…` recipients) is fine.
";

    ADDON_KEY_MATERIAL = "fleet::talos::addon-key-material", Error, Some("R20"),
    Some("a manifest embedded in the machine config must render the same every time and carry no credential: generated keys differ at every render, so the config never converges (R20), and credentials join the cluster at apply time from a sealed input (F11)"),
"## What it does
Reports an add-on manifest that holds key material or a credential: a PEM private key, a
Secret of type `kubernetes.io/tls`, a `tls.key` entry, or any Secret with `data` or
`stringData`. fleetc embeds add-on manifests into the control plane's machine config
(`cluster.inlineManifests`, R11), so each of these would end up in out/ and on every node.

## Why (R20, F11)
A chart that makes a certificate authority inside its template (Hubble's) renders differently
every time: two renders of the same version differ and the machine config never converges.
A credential (the Scaleway API key of the cloud controller manager and CSI driver) is a
secret: it never belongs in out/ nor in a config that every node stores; it comes from a
sealed input at apply time.

## Example
    addon \"cilium\" manifest=\"vendor/cilium.yaml\" …   // rendered with hubble.tls.auto
    # vendor/cilium.yaml
    kind: Secret
    type: kubernetes.io/tls
    metadata: { name: hubble-server-certs }

## Instead
Render the manifest without generated keys (`--set hubble.enabled=false`, or certificates
issued in the cluster by cert-manager), and leave credentials out: create their Secret at
apply time from a sealed input (`sealed \"scaleway-api-key\"`).
";

    REDUNDANT_CERT_SAN = "fleet::talos::redundant-cert-san", Warning, Some("R16"),
    Some("fleetc always puts the API endpoint and the gateway into the certificate SANs (R16); listing them again changes nothing"),
"## What it does
Warns when `cert-sans` lists the cluster's API endpoint address or its environment's gateway.

## Why (R16)
Both are always in `machine.certSANs` and `cluster.apiServer.certSANs`: a machine whose
certificate lacks the gateway's address is refused later, from a place where it can no longer
be reached, so fleetc does not leave it to the user. Repeating them suggests they could be
left out, which they cannot.

## Example
    gateway \"51.15.200.10\"
    cluster \"main\" {
        endpoint address=\"10.10.0.10\"
        cert-sans \"10.10.0.10\" \"api.example.org\"

## Instead
    cert-sans \"api.example.org\"
";

    EPHEMERAL_ABOVE_DATA_DISK = "fleet::talos::ephemeral-above-data-disk", Error, Some("F5"),
    Some("the EPHEMERAL volume goes on a non-system disk of at least `ephemeral-min-size`; a data disk smaller than that matches no disk, and EPHEMERAL is only provisioned once (F5, R15)"),
"## What it does
Reports a pool whose `ephemeral-min-size` is larger than the data disk the infrastructure
creates for it (`data-disk-size`).

## Why (F5, R15)
The EPHEMERAL volume is selected with `!system_disk && disk.size >= <ephemeral-min-size>`.
A smaller data disk matches nothing, and Talos reads a VolumeConfig only when it first
provisions the volume: the node comes up without its data disk, and a later fix does not
move it.

## Example
    pool \"system\" ephemeral-min-size=\"200GB\" data-disk-size=\"100GB\"

## Instead
    pool \"system\" ephemeral-min-size=\"100GB\" data-disk-size=\"200GB\"
";

    SYSTEM_DISK_NOT_SMALLER = "fleet::talos::system-disk-not-smaller", Error, Some("R15"),
    Some("fleetc tells the system disk from the data disk by size, never by device path: the system disk must be smaller than `ephemeral-min-size` (R15)"),
"## What it does
Reports a pool whose system disk is not smaller than its `ephemeral-min-size`.

## Why (R15)
Device paths change with attach order, so fleetc picks disks by size: Talos installs on the
disk smaller than `ephemeral-min-size` (`machine.install.diskSelector.size: < 100GB`) and
puts EPHEMERAL on a disk of at least that size which is not the system disk. With a system
disk as large as the minimum, no disk is smaller, and the install selector matches nothing.

## Example
    pool-defaults system-disk-size=\"200GB\" ephemeral-min-size=\"100GB\"

## Instead
    pool-defaults system-disk-size=\"20GB\" ephemeral-min-size=\"100GB\"
";

    KUBE_PROXY_KEPT = "fleet::talos::kube-proxy-kept", Warning, Some("F12"),
    Some("kube-proxy may be disabled only when the CNI replaces it and reaches the API through KubePrism on localhost:7445 (F12); otherwise fleetc keeps it"),
"## What it does
Warns when the CNI add-on's manifest turns Cilium's kube-proxy replacement on
(`kube-proxy-replacement: \"true\"` in `cilium-config`), but the Cilium agent or operator does
not reach the API server through KubePrism (`localhost:7445`). fleetc then keeps kube-proxy
(`cluster.proxy.disabled: false`) and says so.

## Why (F12)
Without kube-proxy, Services work only once the CNI runs, and the CNI must reach the API
server without a Service: through KubePrism, the load balancer Talos runs on every node.
Pointing Cilium at an external address works until that address is the one that fails.
fleetc reads the vendored manifest as the Cilium chart renders it: `k8sServiceHost` and
`k8sServicePort` become the `KUBERNETES_SERVICE_HOST`/`_PORT` environment of the `cilium`
DaemonSet's agent and of the `cilium-operator` Deployment (`k8s.apiServerURLs`, rendered as
`k8s-api-server-urls` in `cilium-config`, comes first when set), and disables kube-proxy only
when both point at KubePrism.

## Example
    # vendor/cilium.yaml, DaemonSet cilium, container cilium-agent
    env:
    - name: KUBERNETES_SERVICE_HOST
      value: \"10.10.0.10\"

## Instead
Render Cilium with `--set kubeProxyReplacement=true --set k8sServiceHost=localhost
--set k8sServicePort=7445`, or with `kubeProxyReplacement=false` to keep kube-proxy on purpose.
";

    REBOOT_APPLY_MODE = "fleet::talos::reboot-apply-mode", Error, Some("F10"),
    Some("Talos 1.14 removes the `reboot` apply mode, and its `auto` never reboots (F10)"),
"## What it does
Reports `apply-mode \"reboot\"` on a cluster running Talos 1.14 or later.

## Why (F10, R19)
Talos 1.14 has no `reboot` apply mode: an apply that asks for it fails. The mode was also the
most aggressive one: on a running cluster nothing orders the applies, so it rebooted every
control-plane node at once and took etcd quorum down (R19).

## Example
    talos \"v1.14.0\"
    apply-mode \"reboot\"

## Instead
    apply-mode \"auto\"   // or \"staged\", then reboot node by node
";

    EVEN_CONTROL_PLANE = "fleet::quorum::even-control-plane", Error, Some("R29"),
    Some("etcd keeps quorum with a majority of members: 4 nodes tolerate one failure, like 3; an even count adds a node and no fault tolerance. Use 3 or 5 (R29)"),
"## What it does
Reports a control plane with an even number of nodes.

## Why (R29)
etcd needs a majority of its members to accept writes. Three nodes tolerate the loss of one;
four nodes also tolerate only one, so the fourth adds cost, a member to replicate to, and no
fault tolerance.

## Example
    control-plane count=4

## Instead
    control-plane count=3   // or 5 in a larger fleet
";

    SMALL_CONTROL_PLANE = "fleet::quorum::too-few-control-plane", Error, Some("R29"),
    Some("with fewer than three control-plane nodes, losing or rebooting one loses etcd quorum and the Kubernetes API (R29); a lab that accepts this says `single-node #true`"),
"## What it does
Reports a control plane with fewer than three nodes, unless the cluster is explicitly a
single-node lab.

## Why (R29)
With one node, every reboot (an upgrade, an apply mode that reboots) takes the API down; with
two, losing either loses quorum.

## Example
    control-plane count=1

## Instead
    control-plane count=3
or, for a lab that accepts the risk:
    single-node #true
    control-plane count=1
";

    ADDRESS_OUTSIDE_NETWORK = "fleet::network::address-outside-network", Error, Some("R18"),
    Some("nodes live on the environment's private network; the kubelet registers only addresses of that network (R18)"),
"## What it does
Reports a static address (node, endpoint, IP pool) outside the environment's private network.

## Why (R18)
Nodes have no public address (R12) and the kubelet's node IP is restricted to the private
subnet (R18): an address outside it could never be a node's.

## Example
    network \"10.10.0.0/22\"
    …
    address \"10.20.0.5\"

## Instead
Use an address inside the network, here 10.10.0.1–10.10.3.254.
";

    DUPLICATE_ADDRESS = "fleet::network::duplicate-address", Error, None,
    Some("two machines with one address both become unreachable in turn; give each node its own address"),
"## What it does
Reports a static address used twice in one environment (two nodes, or a node and an API
endpoint).

## Why
Two machines answering for one address make both unreachable in turn, and the cluster
flaps in ways that are hard to diagnose.

## Example
    address \"10.10.0.11\"
    address \"10.10.0.11\"

## Instead
Give every node and endpoint its own address.
";

    CIDR_OVERLAP = "fleet::network::cidr-overlap", Error, None,
    Some("pod and service addresses are routed inside the cluster; overlapping the nodes' network makes some nodes unreachable from pods"),
"## What it does
Reports a pod or service CIDR that overlaps the private network (or each other).

## Why
Inside the cluster, the CNI routes pod and service ranges itself. If they overlap the nodes'
network, traffic to some nodes is routed into the cluster instead and never arrives.

## Example
    network \"10.96.0.0/22\"
    service-cidr \"10.96.0.0/12\"

## Instead
    service-cidr \"10.112.0.0/12\"
";

    KUBERNETES_UNSUPPORTED = "fleet::versions::kubernetes-unsupported", Error, None, None,
"## What it does
Reports a Kubernetes version that the cluster's Talos version does not support.

## Why
Each Talos release supports a window of Kubernetes minors (Talos 1.12: 1.30–1.35; 1.13:
1.31–1.36; 1.14: 1.32–1.37). Outside it, the kubelet or control-plane images are not tested
with that Talos and upgrades refuse to run.

## Example
    talos \"v1.12.6\"
    kubernetes \"1.36.2\"

## Instead
    talos \"v1.13.9\"
    kubernetes \"1.36.2\"
";

    TALOS_UNSUPPORTED = "fleet::versions::talos-unsupported", Error, None,
    Some("fleetc writes configuration for the Talos minors of its versions table (versions/talos.kdl, docs/talos.md \"Versions\"), and for a newer minor whose config schema is in schemas/talos/; this one is neither"),
"## What it does
Reports a Talos version fleetc cannot emit configuration for: a minor older than its versions
table (`versions/talos.kdl`), or newer than the table with no config schema in
`schemas/talos/`.

## Why
Machine configuration fields change between Talos minors; fleetc emits only documents the
target version's schema knows, and checks patches against that schema. Without the schema it
cannot tell whether the node will accept the documents.

## Example
    talos \"v1.9.0\"

## Instead
    talos \"v1.13.9\"

Adding a Talos minor is a change of `versions/talos.kdl` and `schemas/`: the checklist is in
docs/talos.md, \"Versions\".
";

    TALOS_NEWER_THAN_TABLE = "fleet::versions::talos-newer-than-table", Warning, None,
    Some("fleetc writes the newest document model of its table for it, which this Talos's schema (schemas/talos/) accepts; the Kubernetes range and the consumers' contracts of this minor are not recorded yet: add its row to versions/talos.kdl (docs/talos.md, \"Versions\")"),
"## What it does
Reports a Talos minor newer than every row of fleetc's versions table (`versions/talos.kdl`)
whose config schema is in `schemas/talos/`.

## Why
fleetc supports a new Talos minor on the day it is released (docs/talos.md, \"Versions\"):
it writes the document model of the table's newest row, every patch is checked against the
new minor's own schema, and the harness (`oracles/talos`) judges the output with the new
machinery. What the table would add (the Kubernetes range Talos accepts, the newest patch,
which contract each consumer speaks) is not known to fleetc yet, so the Kubernetes version
is not checked against Talos's range. It is a warning, not a refusal.

## Example
    talos \"v1.15.0\"   // schemas/talos/v1.15 committed, no `talos \"1.15\"` row yet

## Instead
Add the row (the checklist in docs/talos.md, \"Versions\"), or pin a minor of the table.
";

    RUNTIME_EXTENSION = "fleet::runtimes::missing-extension", Error, Some("R17"),
    None,
"## What it does
Reports a runtime (gvisor, kata) declared for a cluster whose pool installs a schematic
without that runtime's system extension.

## Why (R17)
Runtimes are system extensions baked into the installer image. A pool whose schematic lacks
the extension has no `runsc` or `kata` handler: pods asking for the RuntimeClass never start.
And the standard installer removes the extensions from every node at the next upgrade, and
reports success.

## Example
    schematic \"plain\" { }
    runtimes \"gvisor\"
    pool \"system\" schematic=\"plain\"

## Instead
    schematic \"isolated\" { extension \"siderolabs/gvisor\" }
    pool \"system\" schematic=\"isolated\"
";

    KATA_KVM = "fleet::runtimes::kata-needs-kvm", Warning, Some("F6"),
    Some("Kata runs pods in lightweight VMs and needs /dev/kvm (F6); say `kvm=#true` on the size once you know its instances expose it"),
"## What it does
Warns when a cluster declares the Kata runtime on a pool whose size does not say that its
instances expose hardware virtualization.

## Why (F6)
Kata starts every pod in a lightweight virtual machine and needs `/dev/kvm`. Not every
instance type exposes nested virtualization; on those, Kata pods never start.

## Example
    runtimes \"kata\"
    size \"small\" type=\"PRO2-S\"

## Instead
Use a size whose instances expose /dev/kvm and say so:
    size \"metal\" type=\"EM-A115X-SSD\" kvm=#true
";

    DISCOVERY_PRIVATE = "fleet::discovery::private-cluster", Error, Some("R21"),
    Some("Talos discovery talks to a hosted service by default: a cluster with no public address would still announce its membership to a third party (R21)"),
"## What it does
Reports discovery turned on for a cluster whose API endpoint is not public.

## Why (R21)
Talos ships with discovery on, towards a hosted service. A cluster that has no public address
would still announce its members to a third party.

## Example
    endpoint address=\"10.10.0.10\"
    discovery #true

## Instead
    discovery #false   // the default
";

    SCHEMATIC_UNENCODABLE = "fleet::schematic::unencodable", Error, Some("F2"),
    Some("the schematic ID is the SHA-256 of the factory's own encoding; fleetc refuses values whose encoding it cannot reproduce with certainty rather than publish a wrong ID"),
"## What it does
Reports a schematic value (kernel argument, META value, overlay option) whose exact bytes in
the Image Factory's encoding fleetc cannot be sure of.

## Why (F2)
The schematic ID is the SHA-256 of the bytes the factory encodes. A wrong guess gives an ID
that the factory does not serve, or worse, one that names another schematic.

## Example
    kernel-arg \"console=ttyS0\\r\"

## Instead
Remove carriage returns, U+2028/U+2029 and other unusual characters from the value.
";

    NO_GITOPS = "fleet::argocd::no-gitops", Error, Some("R23"),
    Some("Argo CD delivers every app from the fleet's git repository (R23): add `gitops repo=\"https://…\" revision=\"main\"` to the fleet"),
"## What it does
Reports apps declared in a fleet that has no `gitops` block.

## Why (R23)
Everything after the cluster is delivered from git by Argo CD. Without the repository and the
revision Argo CD follows, fleetc cannot write the root application nor any Application.

## Example
    fleet \"acme\" {
        environment \"staging\" {
            cluster \"main\" {
                app \"platform\" path=\"apps/platform\" namespace=\"platform\"

## Instead
    fleet \"acme\" {
        gitops repo=\"https://git.example.org/acme/fleet.git\" revision=\"main\"
";

    APP_CYCLE = "fleet::argocd::after-cycle", Error, Some("F7"),
    Some("an app syncs only after the apps it waits for are healthy (F7); apps that wait for each other never start: remove one `after`"),
"## What it does
Reports apps whose `after` lists wait for each other in a circle, and shows the circle.

## Why (F7)
fleetc turns `after` into Argo CD sync waves: an app goes one wave after the apps it waits for,
and the root application moves to the next wave only when the previous one is healthy. A circle
has no first wave: no order can satisfy it.

## Example
    app \"a\" path=\"apps/a\" namespace=\"a\" after=\"b\"
    app \"b\" path=\"apps/b\" namespace=\"b\" after=\"a\"

## Instead
    app \"a\" path=\"apps/a\" namespace=\"a\"
    app \"b\" path=\"apps/b\" namespace=\"b\" after=\"a\"
";

    WAVE_BEFORE_DEPENDENCY = "fleet::argocd::wave-before-dependency", Error, Some("F7"),
    Some("an explicit `wave` overrides the order derived from `after` (F7): give the app a wave above the apps it waits for, or drop the `wave`"),
"## What it does
Reports an app whose explicit `wave` is not above the wave of an app it waits for (`after`).

## Why (F7)
Sync waves are the only order Argo CD knows between child Applications. An app in the same or
an earlier wave than its dependency starts alongside it or before it, whatever `after` says.

## Example
    app \"db\" path=\"apps/db\" namespace=\"db\" wave=5
    app \"api\" path=\"apps/api\" namespace=\"api\" after=\"db\" wave=2

## Instead
    app \"api\" path=\"apps/api\" namespace=\"api\" after=\"db\"   // wave 6, derived
";

    APP_PATH_MISSING = "fleet::argocd::path-missing", Warning, Some("R23"),
    Some("Argo CD reads the path from the fleet's repository (R23); until the directory is committed there, the app stays out of sync"),
"## What it does
Warns when a path app names a directory that does not exist beside fleet.kdl.

## Why (R23)
Argo CD reads the app's manifests from that directory of the fleet's repository. A path that
does not exist makes the Application fail to generate manifests; a typo shows up only in the
cluster, after the merge.

## Example
    app \"platform\" path=\"apps/platfrom\" namespace=\"platform\"

## Instead
    app \"platform\" path=\"apps/platform\" namespace=\"platform\"
";

    CHART_UNPINNED = "fleet::argocd::chart-unpinned", Error, Some("R28"),
    Some("a chart app without an exact version installs whatever the chart repository serves that day: a restore from git (R28) would not rebuild the same cluster"),
"## What it does
Reports a Helm chart app whose `version` is missing, or is a range or tag (`*`, `1.x`, `^1.2`,
`>=1.0`, `latest`) rather than one exact version.

## Why (R28)
The fleet's description in git is what restores a lost cluster. A chart version that is not
pinned changes under the same commit: two syncs of the same revision install different code.

## Example
    app \"external-secrets\" chart=\"external-secrets\" repo=\"https://charts.external-secrets.io\" namespace=\"external-secrets\"

## Instead
    app \"external-secrets\" chart=\"external-secrets\" repo=\"https://charts.external-secrets.io\" version=\"0.20.4\" namespace=\"external-secrets\"
";

    APPLICATION_NAME_CLASH = "fleet::argocd::application-name-clash", Error, None,
    Some("every Application of one Argo CD lives in its namespace, so their names must differ: rename one of the apps"),
"## What it does
Reports two Applications with the same name on one Argo CD: a management cluster's Argo CD
holds its own apps, the apps of the workload clusters it manages (named
`<cluster>-<app>`), and the Applications fleetc adds (`fleet-root`, `fleet-secrets`,
`fleet-capi-*`, `fleet-cluster-<cluster>`).

## Why
Applications are objects in Argo CD's namespace; a second one with the same name replaces the
first, and one of the two apps silently disappears.

## Example
    cluster \"mgmt\" { app \"edge-1-platform\" path=\"apps/x\" namespace=\"x\" }
    cluster \"edge-1\" managed-by=\"mgmt\" { app \"platform\" path=\"apps/platform\" namespace=\"platform\" }

## Instead
    cluster \"mgmt\" { app \"x\" path=\"apps/x\" namespace=\"x\" }
";

    NO_SECRET_STORE = "fleet::argocd::no-secret-store", Error, Some("R10"),
    Some("fleetc delivers postgres passwords from Scaleway Secret Manager, where the cloud root writes them (R10); this environment has none"),
"## What it does
Reports an app that reads a postgres password (`postgres \"<name>\"`) in an environment whose
provider has no Secret Manager fleetc can read from (only Scaleway has one).

## Why (R10)
The cloud root writes the database password to Secret Manager, write-only; External Secrets
Operator reads it from there into the cluster. Without that store the ExternalSecret could
never resolve and the app would wait for its password forever.

## Example
    environment \"lab\" {
        proxmox …
        cluster \"main\" { app \"api\" path=\"apps/api\" namespace=\"api\" { postgres \"app\" } }

## Instead
Deliver the password another way in that environment, or run the app in a Scaleway one.
";

    NO_SECRET_OPERATOR = "fleet::argocd::no-secret-operator", Warning, Some("R23"),
    Some("the ExternalSecrets fleetc writes need External Secrets Operator in the cluster (R23): deliver it as an app (`chart=\"external-secrets\"`)"),
"## What it does
Warns when an app reads a postgres password but no app of its cluster installs External
Secrets Operator (a chart app with `chart=\"external-secrets\"`).

## Why (R23)
The password reaches the cluster through a ClusterSecretStore and an ExternalSecret, both
custom resources of External Secrets Operator. Without the operator they are never applied
(their kinds do not exist), and fleetc cannot order the secret before the app.

## Example
    app \"platform\" path=\"apps/platform\" namespace=\"platform\" { postgres \"app\" }

## Instead
    app \"external-secrets\" chart=\"external-secrets\" repo=\"https://charts.external-secrets.io\" version=\"0.20.4\" namespace=\"external-secrets\"
    app \"platform\" path=\"apps/platform\" namespace=\"platform\" after=\"external-secrets\" { postgres \"app\" }
";

    CAPI_PROVIDER_UNSUPPORTED = "fleet::capi::provider-unsupported", Error, Some("R24"), None,
"## What it does
Reports a pinned Cluster API provider version whose API fleetc does not emit: the shapes of
the objects under out/capi/ are keyed on the pinned versions, and fleetc knows Cluster API
core 1.11–1.14 (`cluster.x-k8s.io/v1beta2`), the Talos control-plane provider (CACPPT) 0.5,
the Talos bootstrap provider (CABPT) 0.6.5 and later 0.6 releases, and the Proxmox provider
(CAPMOX) 0.9.

## Why (R24)
Each provider line serves its own API versions. CACPPT 0.6 moves to the v1beta2 contract
(`spec.machineTemplate.spec.infrastructureRef` instead of `spec.infrastructureTemplate`);
CAPMOX before 0.8 serves only `v1alpha1`; CABPT before 0.6.5 has no `strategicPatches`. Objects
written for another version are refused by the API server, or worse, pruned silently.

## Example
    cluster-api {
        control-plane-talos \"0.6.0\"

## Instead
    cluster-api {
        control-plane-talos \"0.5.12\"
";

    CAPI_KUBERNETES_UNSUPPORTED = "fleet::capi::kubernetes-unsupported", Error, Some("R26"), None,
"## What it does
Reports a Kubernetes version that the management cluster's pinned Cluster API core does not
support: for a managed cluster (or one of its pools), the range of workload clusters; for the
management cluster itself, the range of management clusters.

## Why (R26)
Each Cluster API minor release supports a window of Kubernetes minors (1.11: workloads
1.28–1.33; 1.12: 1.29–1.35; 1.13: 1.30–1.36; 1.14: 1.31–1.37). Outside it, the controllers
are not tested against that API and upgrades may stop halfway. `fleetc upgrade-plan` raises
the core provider first when a step needs it.

## Example
    core \"1.12.9\"
    …
    cluster \"edge-1\" managed-by=\"mgmt\" {
        kubernetes \"1.36.2\"

## Instead
    core \"1.13.3\"
";

    CAPI_IDENTITY_NOT_SEALED = "fleet::capi::identity-not-sealed", Error, Some("R14"), None,
"## What it does
Reports a managed cluster that lists no `talos-secrets` sealed input, or a management cluster
that lists no `proxmox-api` sealed input.

## Why (R14, F13)
The Talos bootstrap provider keeps a workload cluster's identity in the Secret
`<cluster>-talos` on the management cluster and generates a new one when it is missing: lose
the management cluster and the workload cluster's identity is gone with it. Created from the
sealed bundle before the first sync, the Secret is used instead, and a rebuilt management
cluster finds the same identity. CAPMOX's Proxmox token is a credential: it comes from a
sealed input too, never from out/ (F11).

## Example
    cluster \"edge-1\" managed-by=\"mgmt\" {
        sealed \"scaleway-api-key\"

## Instead
    cluster \"edge-1\" managed-by=\"mgmt\" {
        sealed \"talos-secrets\"
";

    CAPI_INFRASTRUCTURE_UNSUPPORTED = "fleet::capi::infrastructure-unsupported", Error, Some("R27"), None,
"## What it does
Reports a managed cluster that fleetc cannot express with its Cluster API providers: one
outside a Proxmox environment, or one without an `ip-pool` for its machines.

## Why (R27)
fleetc emits the Proxmox infrastructure provider (CAPMOX) only. Its machines take their
addresses from the cluster's IP pool through the ProxmoxCluster's address configuration.

## Example
    environment \"staging\" {
        scaleway …
        cluster \"edge-1\" managed-by=\"mgmt\"

## Instead
Manage the cluster from a Proxmox environment and give it an address range:
    cluster \"edge-1\" managed-by=\"mgmt\" {
        ip-pool \"192.168.50.100-192.168.50.150\"
";

    CAPI_WORKER_SKEW = "fleet::capi::worker-version-skew", Error, Some("R26"), None,
"## What it does
Reports a worker pool whose own `kubernetes` version is ahead of the control plane, more than
three minors behind it, or set on a cluster that Cluster API does not manage.

## Why (R26)
A kubelet may not be newer than the API server, and may lag it by at most three minors. During
a chained upgrade the control plane goes first, one minor at a time, and the workers follow
(`fleetc upgrade-plan`); a pool pin holds them back in the meantime. Clusters built by OpenTofu
upgrade every kubelet with `talosctl upgrade-k8s`, so a pin there would be a lie.

## Example
    kubernetes \"1.34.4\"
    pool \"workers\" count=2 kubernetes=\"1.35.0\"

## Instead
    pool \"workers\" count=2 kubernetes=\"1.33.4\"
";

    CAPI_NO_PROVIDER_ID = "fleet::capi::no-provider-id", Warning, Some("F8"), None,
"## What it does
Warns when a managed cluster has no `talos-ccm` add-on to give its nodes the provider ID
that CAPMOX matches Machines with.

## Why (F8, R25)
CAPMOX matches a Machine to its Node by `proxmox://<vm uuid>`. fleetc has CAPMOX inject that
value into the machine's nocloud metadata, but Talos does not pass it to the kubelet: the
Talos cloud controller manager copies it into `Node.spec.providerID`. Without it, Machines
never get their Node, and rollouts and health checks stall.

## Example
    cluster \"edge-1\" managed-by=\"mgmt\" {
        addons \"cilium\"

## Instead
    cluster \"edge-1\" managed-by=\"mgmt\" {
        addons \"cilium\" \"talos-ccm\"
";

    CAPI_PROVIDER_COMBINATION = "fleet::capi::provider-combination", Warning, Some("R24"), None,
"## What it does
Warns when the pinned Cluster API providers do not state support for each other or for the
Talos and Kubernetes versions they drive: the Talos bootstrap provider (CABPT) and
control-plane provider (CACPPT) release against a managed cluster's Talos and Kubernetes
minors, and the Proxmox provider (CAPMOX) against the core and IPAM in-cluster providers.

## Why (R24)
CABPT and CACPPT generate every machine's config with the Talos library they were built with
and list, release by release, the Talos and Kubernetes minors they support (the compatibility
tables of their READMEs); a config for a newer Talos contract generated by an older library
is outside what anyone tested. CAPMOX 0.9 is built on Cluster API 1.12 and IPAM in-cluster
1.1.0 and names them as prerequisites. fleetc's table, with a source for each row, is in
docs/capi.md (\"Version table\"); a later patch of a known minor inherits its newest row.

## Example
    talos \"v1.13.9\"
    cluster-api {
        bootstrap-talos \"0.6.11\"
        ipam-in-cluster \"1.0.3\"

## Instead
    cluster-api {
        bootstrap-talos \"0.6.12\"
        ipam-in-cluster \"1.1.0\"
";

    CAPI_TEMPLATE_NOT_CREATED = "fleet::capi::template-not-created", Warning, Some("R22"), None,
"## What it does
Warns, for every managed cluster whose VM template is made by hand (`vm-template-manual #true`),
that nothing fleetc emits creates the Proxmox VM template its ProxmoxMachineTemplates select,
and says how to create it. Without `vm-template-manual`, the environment's cloud root creates
the template (`proxmox_virtual_environment_vm.template`, tagged by `model::VmTemplate`).

## Why (R22)
CAPMOX clones every machine from a VM template it finds by tags
(`templateSelector.matchTags`, `matchPolicy: exact`): a VM with `template=1` whose tag set is
exactly the one fleetc writes, `talos-<version>-<schematic id prefix>`. With no template, every
ProxmoxMachine fails with \"found 0 VM templates\" and the cluster never starts. A template made
by hand is a manual step per Talos version and schematic: import the nocloud disk image the
help names into a VM on the Proxmox node, convert it to a template, and tag it.

## Instead
Remove `vm-template-manual` and the cloud root creates the template; or create it by hand
before the cluster's first sync.
";

    CAPI_MULTIDOC_PATCH = "fleet::capi::multidoc-patch", Warning, Some("R24"), None,
"## What it does
Warns when a managed cluster's machines get a Talos document other than the v1alpha1 machine
config as a strategic patch, and the Talos bootstrap provider may refuse it.

## Why (R24)
The bootstrap provider generates each machine's config with the Talos library it was built
with and merges the patches in with `configpatcher.LoadPatch`, which reads multi-document
patches (CABPT v0.6.11 `controllers/talosconfig_controller.go` l.333-347); but a kind that
library does not know fails the machine's bootstrap. The kinds fleetc knows CABPT's library
has (`v1alpha1`, `LinkAliasConfig`, `Layer2VIPConfig`) pass without this warning; the rest
are passed as patches with it (docs/capi.md, \"Talos documents\").

## Instead
Check the machines' bootstrap on a test cluster after a provider or Talos upgrade.
";

    TOFU_SHARED_STATE = "fleet::tofu::shared-state", Warning, Some("R1"), None,
"## What it does
Warns when an environment's OpenTofu roots build two or more clusters: their machines live in
one cloud-root state and their Talos configs in one cluster-root state.

## Why (R1)
A state is the unit OpenTofu plans and locks: with two clusters in it, every plan of one is a
plan of the other, an apply meant for one can change the other, and a lock held for one blocks
both. An environment is a directory of roots with its own state keys (R1), so one cluster per
environment gives each cluster its own plan.

## Example
    environment \"lab\" {
        cluster \"mgmt\" { … }
        cluster \"tools\" { … }
    }

## Instead
    environment \"lab\" {
        cluster \"mgmt\" { … }
    }
    environment \"lab-tools\" from=\"lab\" {
        network \"192.168.60.0/24\"
        cluster \"tools\" { … }
    }
and move the existing resources: in `tofu/lab/cloud` and `tofu/lab/cluster`,
`tofu state pull > old.tfstate`, `tofu state mv -state=old.tfstate -state-out=new.tfstate
module.tools module.tools`, then `tofu state push` each into its root (the new environment's
roots read `lab-tools/cloud.tfstate` and `lab-tools/cluster.tfstate`).
";

    TOFU_NO_GATEWAY = "fleet::tofu::missing-gateway", Error, Some("R16"),
    Some("the Talos API switch opens on the public gateway's reserved address, and every node's certificate SANs must carry it before the first apply (R13, R16)"),
"## What it does
Reports a Scaleway environment without a `gateway` address.

## Why (R13, R16)
Nodes have no public address (R12); the Talos API is reached through port-translation rules on
the public gateway, opened only while they are used (R13). The gateway's address must be in
every node's certificate SANs: when it is forgotten, the first apply passes (a maintenance-mode
node verifies nothing) and the refusal comes later, from a machine that can no longer be
reached (R16). So the address is reserved first, written in fleet.kdl, and imported by the
cloud root.

## Example
    environment \"staging\" {
        scaleway project=\"…\" region=\"fr-par\" zone=\"fr-par-2\" { … }
        network \"10.10.0.0/22\"

## Instead
    environment \"staging\" {
        network \"10.10.0.0/22\"
        gateway \"51.15.200.10\"   // the reserved public gateway IP
";

    TOFU_NO_ADMIN_RANGES = "fleet::tofu::missing-admin-ranges", Error, Some("R13"),
    Some("a node in maintenance mode presents no certificate and accepts a config from anyone: the switch to its Talos API must say who may use it (R13)"),
"## What it does
Reports a Scaleway environment without `admin-ranges`.

## Why (R13)
The Talos API switch and the operator's path to the Kubernetes API open on the public
gateway. A new or wiped node in maintenance mode accepts a configuration from anyone, so the
door is off at rest and, when open, meant for the administrators' source ranges only; the
Kubernetes API load balancer admits those ranges and the private network, nothing else.

## Example
    environment \"staging\" {
        gateway \"51.15.200.10\"

## Instead
    environment \"staging\" {
        gateway \"51.15.200.10\"
        admin-ranges \"203.0.113.0/24\"
";

    TOFU_NO_ADDRESS = "fleet::tofu::missing-address", Error, Some("R27"),
    Some("a Proxmox VM takes its static address from the NoCloud `initialization` block and its Talos API is reached there; moving a cluster between providers changes the provider block and the addresses (R27)"),
"## What it does
Reports a node of a Proxmox cluster built by OpenTofu that has no static address.

## Why
On Proxmox the VMs take their address from the NoCloud `initialization` block, and the cluster
root reaches each node's Talos API at that address. Without one there is nothing to write
and nothing to reach. (Clusters managed by Cluster API take theirs from `ip-pool` instead.)
Moving a cluster between providers changes the provider block and the addresses only (R27).

## Example
    control-plane count=3 size=\"small\"

## Instead
    control-plane count=3 size=\"small\" {
        addresses \"10.10.0.11\" \"10.10.0.12\" \"10.10.0.13\"
    }
";

    FMT_CANNOT_REPRINT = "fleet::fmt::cannot-reprint", Error, None,
    Some("move the comment to its own line above the node, or to the end of the node's line; `fleetc fmt` changes only whitespace and refuses to move or drop a comment"),
"## What it does
`fleetc fmt` reports a comment written where its canonical layout has no room for one:
inside a type annotation `( … )`, between a type annotation and what it annotates, between
a property's name and `=` or between `=` and the value, or after a line continuation `\\`
(where it would end the node's line). The file is left as it is.

## Why
The canonical layout writes `key=value`, `(type)value` and each node on one line. Keeping
such a comment would need moving it, and `fleetc fmt` changes nothing but whitespace: it
refuses rather than reorder or drop what was written.

## Example
    pool \"system\" count= /* was 3 */ 2

## Instead
    pool \"system\" count=2 /* was 3 */
";

    UPGRADE_KUBERNETES_MINOR_SKIPPED = "fleet::upgrade::kubernetes-minor-skipped", Error, Some("R26"), None,
"## What it does
With `fleetc check --base REV`: reports a cluster whose Kubernetes version moves more than one
minor release past the version it has at revision REV.

## Why (R26)
Kubernetes upgrades the control plane one minor at a time (1.34 → 1.35 → 1.36): the API server
and etcd storage migrations of each release assume the previous one ran. A commit that jumps two
minors cannot be applied to the running cluster (`talosctl upgrade-k8s` and Cluster API both
refuse, or worse, half of it happens). Each minor is its own commit, applied before the next.

## Example
    // at REV
    kubernetes \"1.34.3\"
    // now
    kubernetes \"1.36.0\"

## Instead
    kubernetes \"1.35.1\"   // commit, apply, then 1.36 in the next change

`fleetc upgrade-plan <env>/<cluster> --kubernetes 1.36.0` lists every step.
";

    UPGRADE_WORKERS_AHEAD = "fleet::upgrade::workers-ahead", Error, Some("R26"), None,
"## What it does
With `fleetc check --base REV`: reports a worker pool of a Cluster API managed cluster whose
Kubernetes version moves into a minor above the one its control plane runs at revision REV.

## Why (R26)
A kubelet may not be newer than the API server. Cluster API rolls the MachineDeployments and the
TalosControlPlane at the same time when they change in one commit, so workers that follow the
cluster's version (no `kubernetes=` on the pool) would come up on the new minor while the old
API servers still serve. The control plane goes first, the workers follow in a later change.
A cluster built by OpenTofu is not concerned: `talosctl upgrade-k8s` upgrades the control plane
first, then every kubelet.

## Example
    // at REV
    kubernetes \"1.34.3\"
    pool \"workers\" count=2
    // now
    kubernetes \"1.35.1\"
    pool \"workers\" count=2

## Instead
    kubernetes \"1.35.1\"
    pool \"workers\" count=2 kubernetes=\"1.34.3\"   // remove the pin in the next change
";

    UPGRADE_TALOS_MINOR_SKIPPED = "fleet::upgrade::talos-minor-skipped", Error, Some("F1"), None,
"## What it does
With `fleetc check --base REV`: reports a cluster whose Talos version moves more than one minor
release past the version it has at revision REV.

## Why (F1)
Talos is upgraded node by node with `talosctl upgrade --image …` (applying a config with a new
install image upgrades nothing, F1), and the supported upgrade path goes through every minor
release (v1.12 → v1.13 → v1.14), each one's latest patch. `fleetc upgrade` refuses a node that
would skip one; this code says so at review time.

## Example
    // at REV
    talos \"v1.12.6\"
    // now
    talos \"v1.14.1\"

## Instead
    talos \"v1.13.9\"   // commit, `fleetc upgrade`, then v1.14 in the next change
";

    // ---- The first hour (issue 15): mistakes that used to pass silently, said at their cause.

    INVALID_LABEL = "fleet::names::invalid-label", Error, None,
    Some("Kubernetes refuses the Node object with this label, annotation or taint (k8s.io/apimachinery `IsQualifiedName`, `IsValidLabelValue`): the node would never register it"),
"## What it does
Reports a node label, annotation or taint whose key or value Kubernetes or Talos would reject: a
key is `[prefix/]name`, the prefix a DNS subdomain (lowercase, at most 253 characters), the name
at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit; a label
or taint value is empty or follows the name's rule. An annotation's value is free text, but
Talos reserves three keys (`talos.dev/owned-labels`, `talos.dev/owned-annotations`,
`talos.dev/owned-taints`) and the keys and values of one pool's annotations together may hold at
most 256 KiB (siderolabs/talos v1.13.9 `pkg/machinery/labels/validate.go`
`ValidateAnnotations`, which the machine config's validation calls).

## Why
Talos hands the labels and taints of a pool to the kubelet and the API server; the API server
validates them with its own grammar (k8s.io/apimachinery v0.36.3
`pkg/api/validate/content/kube.go`, k8s.io/kubernetes v1.36.3
`pkg/apis/core/validation/validation.go` `validateNodeTaints`) and refuses the whole update. fleetc
checks the same grammar, so the mistake is seen in review, not on a node that never gets its
labels.

## Example
    pool \"workers\" count=2 {
        label \"my label\" \"yes please\"

## Instead
    pool \"workers\" count=2 {
        label \"example.org/tier\" \"yes-please\"
";

    DUPLICATE_KEY = "fleet::names::duplicate-key", Error, None,
    Some("a label key holds one value, and Kubernetes keeps taints unique by key and effect: the second would silently replace the first"),
"## What it does
Reports a pool that sets the same label key twice, or two taints with the same key and effect.

## Why
Node labels are a map: one key, one value. fleetc used to keep the last one written, so the
first was lost without a word. Kubernetes refuses a node whose taints repeat a (key, effect)
pair (`validateNodeTaints`: \"taints must be unique by key and effect pair\").

## Example
    label \"tier\" \"a\"
    label \"tier\" \"b\"

## Instead
    label \"tier\" \"b\"
";

    UNKNOWN_EXTENSION = "fleet::schematic::unknown-extension", Error, Some("R17"), None,
"## What it does
Reports a schematic extension that is not an official Talos system extension of the cluster's
Talos minor (the table fleetc ships, from github.com/siderolabs/extensions at the tag of each
minor; see `src/upstream/extensions.rs`), with the closest official name.

## Why (R17)
The Image Factory builds the installer from the schematic; an unknown name fails at the factory
during `fleetc apply`, long after review, and the schematic ID in out/ is computed from the typo.
The installer must carry the extensions the pools need (R17).

## Example
    schematic \"base\" {
        extension \"siderolabs/qemu-guest-agnet\"
    }

## Instead
    schematic \"base\" {
        extension \"siderolabs/qemu-guest-agent\"
    }
";

    TWO_CNIS = "fleet::talos::two-cnis", Error, Some("R25"), None,
"## What it does
Reports an embedded add-on that installs a CNI (its manifest writes CNI configuration under
`/etc/cni/net.d`, or carries Cilium's `cilium-config`) while the cluster's `cni` is Talos's
default (flannel, with kube-proxy).

## Why (R25)
Two CNIs on one node fight over `/etc/cni/net.d`: pods get addresses from either, and traffic
between them breaks. When an add-on is the CNI, `cni` must name it, so that Talos deploys no
flannel (and, for a Cilium that replaces kube-proxy, no kube-proxy: F12).

## Example
    cni \"default\"
    addons \"cilium\"

## Instead
    cni \"cilium\"
    addons \"cilium\"
";

    ROUTER_AS_TALOS_ADDRESS = "fleet::network::router-as-talos-address", Error, Some("R16"), None,
"## What it does
On Proxmox, reports an environment whose `gateway` (the public address through which the
Talos API is reached, put into every node's certificate SANs) is the LAN router given by the
`proxmox` block's `router=`.

## Why (R16)
The two are different things: the router is the nodes' default route; `gateway` is the address
talosctl dials from outside. With the router there, every node certificate names the router, and
nothing reaches the Talos API through it. On a flat LAN, talosctl dials the nodes directly: leave
`gateway` out.

## Example
    proxmox endpoint=\"https://pve:8006\" node=\"pve\" router=\"192.168.1.1\"
    gateway \"192.168.1.1\"

## Instead
    proxmox endpoint=\"https://pve:8006\" node=\"pve\" router=\"192.168.1.1\"
";

    RECIPIENTS_INHERITED = "fleet::secrets::recipients-inherited", Warning, Some("R14"),
    Some("whoever holds a key of the base environment can decrypt this environment's sealed inputs, its Talos secrets bundle included (R14); state `recipients` here, even the same keys, to make that a decision"),
"## What it does
Warns when an environment inherits its age `recipients` through `from=` without stating them.

## Why (R14)
Sealed inputs (the Talos secrets bundle, the cluster's identity, and API keys) are encrypted to
the environment's recipients. Inheriting them silently gives every holder of a staging key the
keys to production. Stating them in the environment, even the same ones, is the decision.

## Example
    environment \"production\" from=\"staging\" {
        network \"10.40.0.0/22\"
    }

## Instead
    environment \"production\" from=\"staging\" {
        network \"10.40.0.0/22\"
        recipients \"age1…production key…\"
    }
";

    URL_NOT_ADDRESS = "fleet::model::url-not-address", Error, None, None,
"## What it does
Reports a URL (`https://…`, or `host:port`) written where fleet.kdl expects an IPv4 address.

## Why
An address is an address: fleetc builds the URL itself where a tool needs one (the Kubernetes
API is `https://<endpoint>:<port>`, the port is `port=`). One mistake, one error: the message
says which address to write.

## Example
    endpoint address=\"https://192.168.1.50:6443\"

## Instead
    endpoint address=\"192.168.1.50\" port=6443
";

    INVALID_IDENTIFIER = "fleet::names::invalid-identifier", Error, None, None,
"## What it does
Reports a name that fleet.kdl passes to another tool, written in a form that tool refuses:
- the `gitops` `revision` (a branch, a tag or a commit) must be a git ref name: no space, no
  `~ ^ : ? * [ \\`, no `..` nor `@{`, no component starting with `.` or ending with `.lock`, not
  ending with `/` or `.` (git-check-ref-format(1));
- a Proxmox `node` (and each of `nodes`) is a node name, `[A-Za-z0-9]` with `-` inside
  (proxmox/pve-common `src/PVE/JSONSchema.pm` `pve_verify_node_name`); a `datastore` and an
  `image-datastore` are storage IDs, a letter, then letters, digits, `-`, `_`, `.`, ending with a
  letter or digit (`parse_id`); a `bridge` is letters, digits, `-`, `_`, `.` (`parse_bridge_id`);
- a state bucket's `region` is lowercase letters, digits and `-` (an S3 region: `fr-par`,
  `eu-west-1`);
- a cluster's `cert-sans` entry is an IP address or a DNS name (letters, digits and `-` in
  dot-separated labels, a leading `*.` allowed): the API server's certificate names it, and a
  client compares the name it dialed with it.

## Why
Each of these strings reaches out/ as written. Proxmox refuses the API call at `tofu apply`,
Argo CD never resolves the revision, the S3 backend cannot sign for the region at `tofu init`,
and a certificate SAN with a space matches no name a client dials. fleetc reports it in
fleet.kdl, where it was written.

## Example
    gitops repo=\"https://git.example/fleet.git\" revision=\"release 1\"
    proxmox endpoint=\"https://pve:8006\" node=\"pve 1\" router=\"192.168.1.1\" datastore=\"local lvm\"

## Instead
    gitops repo=\"https://git.example/fleet.git\" revision=\"release-1\"
    proxmox endpoint=\"https://pve:8006\" node=\"pve1\" router=\"192.168.1.1\" datastore=\"local-lvm\"
";

    NOT_A_URL = "fleet::model::not-a-url", Error, None, None,
"## What it does
Reports a string written where fleet.kdl expects a URL that the tool reading it would not take
as one: a host without a scheme, or a scheme the tool refuses. The Proxmox `endpoint` must be
`https://host:port/` (bpg/terraform-provider-proxmox v0.111.1 `proxmox/api/client.go`
`NewConnection`: `url.ParseRequestURI`, then only `https`); a state bucket's `endpoint` is an
`http://` or `https://` base URL (OpenTofu 1.11.5 s3 backend, `endpoints.s3`: \"a custom endpoint
URL\"); the `gitops` repository and a chart app's `repo` are what Argo CD fetches:
`https://…`, `http://…` or an SSH URL (`ssh://git@host/…`, `git@host:org/repo.git`; argo-cd
v3.2.1 `util/git/git.go` `IsSSHURL`, `IsHTTPSURL`), and for a chart also `oci://…`.

## Why
Each of these strings goes into out/ as written, and the tool fails only when it first dials
it: at `tofu init`, at `tofu plan`, or as an Argo CD application that never syncs. fleetc
reports it in fleet.kdl, where it was written.

## Example
    proxmox endpoint=\"pve.home.arpa\" node=\"pve\" router=\"192.168.1.1\"
    gitops repo=\"github.com/me/homelab\"

## Instead
    proxmox endpoint=\"https://pve.home.arpa:8006\" node=\"pve\" router=\"192.168.1.1\"
    gitops repo=\"https://github.com/me/homelab.git\"
";

    RENAMED = "fleet::model::renamed", Error, None, None,
"## What it does
Reports a node or property written with a spelling fleetc no longer reads, and names the new
one.

## Why
A word in fleet.kdl means one thing everywhere. `gateway` is the public address through which
the Talos API is reached (an environment node); the Proxmox LAN router, once also `gateway=`, is
now `router=`.

## Example
    proxmox endpoint=\"https://pve:8006\" node=\"pve\" gateway=\"192.168.1.1\"

## Instead
    proxmox endpoint=\"https://pve:8006\" node=\"pve\" router=\"192.168.1.1\"
";

    KDL_V1 = "fleet::syntax::kdl-v1", Error, None,
    Some("fleet.kdl is KDL v2: write booleans `#true`/`#false`, null `#null`, and raw strings `#\"…\"#` (KDL v1's bare `true`, `false`, `null` and `r\"…\"` are not values in v2)"),
"## What it does
Reports a fleet.kdl that uses KDL v1 spellings: bare `true`, `false`, `null`, or raw strings
`r\"…\"` / `r#\"…\"#`. One diagnostic for the whole file, with every place marked.

## Why
fleet.kdl is KDL v2 (kdl.dev). In v2 keywords start with `#` and raw strings are `#\"…\"#`;
the v1 forms are not values at all, so the raw parser message (\"expected identifier string\")
says nothing useful.

## Example
    discovery false
    cni r\"cilium\"

## Instead
    discovery #false
    cni #\"cilium\"#   // or simply \"cilium\"
";

    UNCLOSED_BLOCK = "fleet::syntax::unclosed-block", Error, None, None,
"## What it does
Reports a `{` that is never closed, at the node that opened it: the innermost block whose
next line comes back to the block's own indentation without a `}`.

## Why
The parser only notices at the end of the file and blames the outermost block; the node that
lost its `}` is where the indentation says it is.

## Example
    pool \"workers\" count=2 {
        addresses \"192.168.1.61\" \"192.168.1.62\"
    sealed \"talos-secrets\"

## Instead
    pool \"workers\" count=2 {
        addresses \"192.168.1.61\" \"192.168.1.62\"
    }
    sealed \"talos-secrets\"
";

    UPGRADE_KUBERNETES_DOWNGRADE = "fleet::upgrade::kubernetes-downgrade", Error, Some("R26"), None,
"## What it does
With `fleetc check --base REV`: reports a cluster (or a worker pool) whose Kubernetes version is
lower than at revision REV.

## Why (R26)
Kubernetes supports upgrades only: its version skew policy describes no way back, and etcd
data written by a newer API server is not promised to be readable by an older one. `fleetc diff`
calls it DANGER; the CI gate refuses it.

## Example
    // at REV
    kubernetes \"1.36.3\"
    // now
    kubernetes \"1.34.2\"

## Instead
    kubernetes \"1.36.3\"   // restore the cluster from backup into a new one to go back
";

    UPGRADE_TALOS_DOWNGRADE = "fleet::upgrade::talos-downgrade", Error, Some("F1"), None,
"## What it does
With `fleetc check --base REV`: reports a cluster whose Talos version is lower than at revision
REV.

## Why (F1)
Talos tests upgrades between adjacent minors only, forward; the one way back it offers is
`talosctl rollback`, which returns a node to the image it booted before the last upgrade. A
lower version in fleet.kdl is not that: `fleetc upgrade` would install an older image over a
newer one, node by node. `fleetc diff` reports the same change as a downgrade.

## Example
    // at REV
    talos \"v1.13.9\"
    // now
    talos \"v1.12.6\"

## Instead
    talos \"v1.13.9\"
";

    UPGRADE_PROVIDER_DOWNGRADE = "fleet::upgrade::provider-downgrade", Error, Some("R24"), None,
"## What it does
With `fleetc check --base REV`: reports a management cluster whose pinned Cluster API provider
version is lower than at revision REV.

## Why (R24)
Cluster API stores its objects in the newest API version its CRDs serve; clusterctl upgrades
providers forward only (`clusterctl upgrade` has no downgrade, cluster-api docs
\"clusterctl upgrade\"), and an older controller cannot read objects stored in a newer version.

## Example
    // at REV
    core \"1.13.3\"
    // now
    core \"1.12.0\"

## Instead
    core \"1.13.3\"
";

    DISK_SECURE_BOOT_UNAVAILABLE = "fleet::disk::secure-boot-unavailable", Error, Some("R27"), None,
"## What it does
Refuses `secure-boot=#true` on a pool whose platform cannot boot its machines with UEFI
SecureBoot (the capability table `check::disk::PLATFORMS`).

## Why (R27)
The same model runs on every platform, and where a platform differs the model says so rather
than emitting what cannot work. A SecureBoot pool installs the Image Factory's
`<platform>-installer-secureboot` image, a signed UKI that boots only under UEFI SecureBoot.
Scaleway Instances offer none: Talos's platform list marks no SecureBoot for `scaleway`
(siderolabs/talos v1.13.9 `pkg/machinery/platforms/platforms.go`) and the instance resource has
no such setting (scaleway/terraform-provider-scaleway v2.81.0
`internal/services/instance/server.go`, `boot_type` only).

## Example
    environment \"staging\" {
        scaleway … { size \"cp\" type=\"PRO2-XS\" }
        cluster \"main\" { control-plane count=3 size=\"cp\" secure-boot=#true }
    }

## Instead
Remove `secure-boot`, or run the pool on Proxmox (OVMF, an EFI vars disk fleetc emits).
";

    DISK_KEY_SOURCE_UNAVAILABLE = "fleet::disk::key-source-unavailable", Error, Some("R27"), None,
"## What it does
Refuses an `encrypt` whose key source the platform cannot provide: a TPM-sealed key on a
platform whose machines have no TPM.

## Why (R27)
Talos enrolls a TPM key when it first provisions the volume; with no TPM the enrollment fails
and the volume (STATE: the machine config itself) is never provisioned, so the node never
joins. Scaleway Instances have no TPM (no instance type and no API field offers one:
scaleway/terraform-provider-scaleway v2.81.0 `internal/services/instance/server.go`). On
Proxmox fleetc gives the VM a vTPM 2.0 (`tpm_state`, bpg/terraform-provider-proxmox v0.111.1).

## Example
    control-plane count=3 size=\"cp\" {
        encrypt \"state\" key=\"tpm\"
    }

## Instead
    encrypt \"state\" key=\"kms\" endpoint=\"https://kms.internal:4443\"
or `key=\"nodeid\"` (which protects a disk read elsewhere, not a stolen machine).
";

    DISK_TPM_NEEDS_SECURE_BOOT = "fleet::disk::tpm-needs-secure-boot", Error, Some("R17"), None,
"## What it does
Refuses a TPM-sealed volume on a pool that does not boot with SecureBoot.

## Why (R17)
The installer decides what boots. Talos seals a TPM key under a policy signed by the PCR
signing key that systemd-stub hands over from the signed UKI (siderolabs/talos v1.13.9
`pkg/machinery/constants/constants.go` `PCRPublicKey`; v1.14.0-alpha.1
`internal/pkg/secureboot/tpm2/seal.go`): only the SecureBoot installer and boot assets carry
it, so with the standard installer the enrollment fails and the volume is never provisioned.

## Example
    pool \"workers\" count=2 size=\"medium\" {
        encrypt \"ephemeral\" key=\"tpm\"
    }

## Instead
    pool \"workers\" count=2 size=\"medium\" secure-boot=#true {
        encrypt \"ephemeral\" key=\"tpm\"
    }
";

    DISK_STATIC_KEY_PERSISTED = "fleet::disk::static-key-persisted", Error, Some("F11"), None,
"## What it does
Refuses `key=\"static\"` on a pool whose machine configs are kept, once sent, by the consumer
that applies them.

## Why (F11)
Talos reads a static key from the machine config itself
(`encryption.keys[].static.passphrase`, siderolabs/talos v1.13.9
`pkg/machinery/config/types/block/encryption.go`). Every consumer fleetc emits keeps that
config: the OpenTofu talos provider stores it in the cluster root's state
(`talos_machine_configuration_apply.machine_configuration_input`), a Cluster API
TalosConfigTemplate is in out/ (git) and in the management cluster's etcd. A disk key, like
every secret, never lands in out/, a state or git, even sealed inputs only join at apply time.
A consumer that sends the config and keeps nothing (a render applied by hand to bare metal)
is where a static key could go; none of this fleet's consumers is one.

## Example
    encrypt \"state\" key=\"static\" sealed=\"disk-key\"

## Instead
`key=\"tpm\"` (with `secure-boot=#true`, on a platform with a TPM) or `key=\"kms\"`.
";

    DISK_KEY_SETTINGS = "fleet::disk::key-settings", Error, Some("F11"), None,
"## What it does
Reports an `encrypt` whose settings do not fit its key source: a KMS key with no `https://`
`endpoint`, a static key with no `sealed=` input, or an `endpoint`/`sealed` on a key source
that reads neither.

## Why (F11)
A key source says once where the key lives: Talos's KMS key is sealed by the server at
`kms.endpoint` over TLS at every boot; a static passphrase may only come from a sealed input,
never from fleet.kdl. A setting the key source ignores is a decision nobody can see applied.

## Example
    encrypt \"state\" key=\"kms\"

## Instead
    encrypt \"state\" key=\"kms\" endpoint=\"https://kms.internal:4443\"
";

    INTERNAL = "fleet::internal::bug", Error, None,
    Some("this is a bug in fleetc; please report it with the fleet.kdl that triggers it"),
"## What it does
Reports a failure inside fleetc that is not the fleet's fault.

## Why
fleetc must never panic nor write a broken file; when an emitter fails unexpectedly, the run
stops with this diagnostic and writes nothing.

## Instead
Report it with the input that triggers it.
";

    NODE_COUNT = "fleet::node::more-than-count", Error, None,
    Some("a pool's named nodes are its first machines: name at most `count` nodes, or leave `count` out and the pool has as many nodes as it names"),
"## What it does
Reports a pool that names more nodes (`node \"…\" { … }`) than its `count=` holds.

## Why
Named nodes are the pool's first machines, in the order written; a node beyond `count` would
be declared and never built.

## Example
    control-plane count=1 {
        node \"cp-1\" { address \"10.0.0.11\" }
        node \"cp-2\" { address \"10.0.0.12\" }
    }

## Instead
    control-plane count=3 { … }
or leave `count` out: the pool has as many nodes as it names.
";

    INSTALL_DISK_TWICE = "fleet::node::install-disk-twice", Error, Some("R15"),
    Some("Talos installs to one disk; one `install-disk` states every property that identifies it, and they must all match (R15)"),
"## What it does
Reports a pool or node block with two `install-disk` lines.

## Why (R15)
Talos installs to exactly one disk (`machine.install.diskSelector`, every stated field
matching at once: siderolabs/talos v1.13.9 `v1alpha1_types.go`, `InstallDiskSelector`). Two
selectors would be merged into one that matches neither, or the second would silently win.

## Example
    node \"cp-1\" {
        install-disk model=\"Samsung SSD 980*\"
        install-disk serial=\"S64ANS0T123456\"
    }

## Instead
    node \"cp-1\" {
        install-disk model=\"Samsung SSD 980*\" serial=\"S64ANS0T123456\"
    }
";

    INSTALL_DISK_PATH = "fleet::node::install-disk-device-path", Warning, Some("R15"),
    Some("a device path names whatever disk the kernel enumerated there at boot; select the disk by `serial`, `wwid`, `model`, `size` or `bus-path` instead (R15)"),
"## What it does
Warns about an `install-disk device=\"/dev/…\"`: the install disk named by device path.

## Why (R15)
Device names follow enumeration order: add a disk, move a cable or boot another kernel and
`/dev/sda` is another disk, and Talos installs over it. A selector on what the disk is
(serial, WWID, model, size, bus path) stays true.

## Example
    node \"cp-1\" { install-disk device=\"/dev/sda\" }

## Instead
    node \"cp-1\" { install-disk serial=\"S64ANS0T123456\" }
";

    NODE_HOSTNAME_TWICE = "fleet::node::duplicate-hostname", Error, None,
    Some("every node of a cluster needs its own hostname: it is the Kubernetes Node's name and the key of its Talos documents"),
"## What it does
Reports two nodes of one cluster with the same hostname: a named node `<cluster>-<name>`
that another pool's generated name (`<cluster>-<pool>-<n>`) or another named node also takes.

## Why
The hostname is the Kubernetes Node object's name and the key of the node's Talos documents
(`talos/<env>/<cluster>/nodes/<hostname>.yaml`); two machines with one name overwrite each
other's Node and documents.

## Example
    control-plane count=3 { node \"system-1\" { … } }
    pool \"system\" count=2

## Instead
Name the node after its role or its rack place: `node \"cp-1\"`.
";

    NODE_MANAGED = "fleet::node::managed-cluster", Error, Some("R26"),
    Some("Cluster API creates and replaces a managed cluster's machines from one template (R26): a template cannot carry one machine's address, disk or links; name nodes in a cluster OpenTofu or `fleetc apply` builds"),
"## What it does
Reports a named node (`node \"…\" { … }`) or a per-machine setting in a cluster managed by
Cluster API (`managed-by=`).

## Why (R26)
Cluster API builds every machine of a pool from one template and replaces machines like pods:
a template has no place for one machine's disk, links or patches (the Talos documents of a
managed cluster have no `nodes/` files).

## Example
    cluster \"edge-1\" managed-by=\"mgmt\" {
        pool \"workers\" count=2 { node \"w-1\" { install-disk serial=\"…\" } }

## Instead
Describe what all machines of the pool share at pool level, or build the cluster with
OpenTofu (no `managed-by`).
";

    METAL_UNDECLARED_MACHINE = "fleet::metal::undeclared-machine", Error, Some("R13"),
    Some("on bare metal nothing creates machines: every machine is a named node with the address `fleetc apply` reaches it at in maintenance mode, and a `mac` or an `install-disk` by which it is recognised (R13)"),
"## What it does
Reports a machine of a `metal` environment that is not declared one by one: a pool whose
`count` goes beyond its named nodes, or a named node without an `address`.

## Why (R13)
Bare metal has no API that creates a machine and reports its address. `fleetc apply` sends
each machine its config in maintenance mode, where the Talos API accepts a config from
anyone (R13): it must know where the machine is, and check that it is the declared one
(its MAC address, or its disks) before it sends anything.

## Example
    metal { }
    …
    control-plane count=3 {
        node \"cp-1\" { address \"10.30.0.11\" }
    }

## Instead
    control-plane {
        node \"cp-1\" { address \"10.30.0.11\"; mac \"aa:bb:cc:dd:ee:01\" }
        node \"cp-2\" { address \"10.30.0.12\"; mac \"aa:bb:cc:dd:ee:02\" }
        node \"cp-3\" { address \"10.30.0.13\"; mac \"aa:bb:cc:dd:ee:03\" }
    }
";

    ADDRESS_NOT_ON_LINK = "fleet::node::address-not-on-link", Error, Some("R18"),
    Some("the node's `address` is where the tools reach it and what the kubelet registers (R18): one of its links must carry it, in the private network"),
"## What it does
Reports a named node whose links are declared and none carries its `address` (with the
private network's prefix), or a link address that another node also uses.

## Why (R18)
The node's address is where OpenTofu, talosctl and `fleetc apply` reach it, and the kubelet
registers only addresses of the private network (R18). When the node's links are written,
they are its whole network configuration: an address none of them carries is never up.

## Example
    network \"10.30.0.0/24\"
    node \"cp-1\" {
        address \"10.30.0.11\"
        link \"eno1\" { address \"10.30.0.12/24\" }
    }

## Instead
    node \"cp-1\" {
        address \"10.30.0.11\"
        link \"eno1\" { address \"10.30.0.11/24\"; route gateway=\"10.30.0.1\" }
    }
";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut names: Vec<&str> = ALL.iter().map(|c| c.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate code names");
        for c in ALL {
            assert!(c.name.starts_with("fleet::"), "{}", c.name);
            assert!(c.explanation.contains("## What it does"), "{} has no explanation", c.name);
            assert!(c.explanation.contains("## Instead"), "{} says not what to write instead", c.name);
            if let Some(rule) = c.rule {
                assert!(
                    c.explanation.contains(rule) || c.help.is_some_and(|h| h.contains(rule)),
                    "{} cites {rule} nowhere",
                    c.name
                );
            }
        }
    }

    #[test]
    fn lookup_by_suffix() {
        assert_eq!(lookup("even-control-plane").map(|c| c.name), Some(EVEN_CONTROL_PLANE.name));
        assert!(lookup("nope").is_none());
    }
}
