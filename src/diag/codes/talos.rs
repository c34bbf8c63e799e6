//! The `fleet::talos` codes: Talos machine configuration and the patches applied to it. The
//! checks live in `src/check/talos.rs`, `src/check/patches.rs` (patches against the machinery
//! schema and the rules) and `src/check/cni.rs`; a patch that does not parse and a disk named by
//! device path are reported while resolving, in `src/model/resolve/patches.rs` and
//! `src/model/resolve/mod.rs`.

codes! {
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
    Some("Talos applies RFC 6902 JSON patches to a single-document config only, so fleetc converts one to a strategic merge; this operation has none: write the change as a strategic-merge patch (the YAML it should merge into), with `$patch: delete` to remove"),
"## What it does
Reports an RFC 6902 JSON patch (a list of `op:` entries) with an operation fleetc cannot
convert to the equivalent strategic merge: `test`, `move`, `copy`, a list index (`/0`), the
whole document, a `replace` whose value is a list or a mapping, two operations on one path.
Every other JSON patch is converted (docs/talos.md, \"Patches\"): `add`/`replace` of a key,
`remove` (`$patch: delete`), `add` to `…/-` (an append).

## Why
Talos refuses a JSON patch on a multi-document config (siderolabs/talos v1.13.9
`pkg/machinery/config/configpatcher/json6902.go` l.27-29, from `apply.go` l.81-93), and
every config fleetc hands to Talos is multi-document. A strategic merge cannot say \"the
first item\" or \"only if equal\", and Talos's merge appends to a list and merges into a
mapping (`pkg/machinery/config/merge/merge.go` l.15-25), so replacing one whole has no
equivalent.

## Example
    - op: replace
      path: /cluster/apiServer/certSANs/0
      value: api.example.org

## Instead
    cluster:
      apiServer:
        certSANs:
          - api.example.org
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

    PATCH_UNDOES_RULE = "fleet::talos::patch-undoes-rule", Error, None,
    Some("a patch may not silently undo what fleetc enforces; if it is deliberate, say so on the `patch` line (`overrides=\"R15\"`) and the build warns instead"),
"## What it does
Reports a patch that undoes one of fleetc's rules through a field fleetc does not write: the
install disk named by device path (`machine.install.disk`, R15) where the machine's merged
config has no `machine.install.diskSelector` (the patch deletes fleetc's). Beside the selector
fleetc writes, Talos installs to the selector's match and the device path has no effect: that
is a warning (`fleet::talos::patch-install-disk-unused`). A rule's field that fleetc
does write (discovery R21, the installer R17, the disk selectors R15, the node IP subnets R18,
the certSANs R16) is an owned field (`fleet::talos::patch-owned-field`).

## Why (R15, F5)
Patches apply after fleetc's own documents, so they win: a patch can quietly reintroduce the
failure the rule exists for. A device path names another disk when volumes attach in another
order. A patch that means it says so with `overrides=`, and every build then warns, naming the
rule (`fleet::talos::patch-override`).

## Example
    patch \"patches/disk.yaml\"      # machine.install: { disk: /dev/sda, diskSelector: { $patch: delete } }

## Instead
    patch \"patches/disk.yaml\" overrides=\"R15\"   // or drop it: fleetc selects the disk by size
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

    PATCH_OWNED_FIELD = "fleet::talos::patch-owned-field", Error, None,
    Some("fleetc writes this field from fleet.kdl, and a patch applies after fleetc's documents, so it would silently replace fleet.kdl's value: change the fleet.kdl property instead"),
"## What it does
Reports a patch that sets, changes, adds to or deletes (`$patch: delete`) a field fleetc itself
writes into a Talos machine config document: the CNI, the pod and service subnets, the
control-plane endpoint and certSANs, the kubelet's node IP subnets, the machine type, the
install disk and image, links, addresses, VIPs, discovery, the volume and encryption
documents, node labels and taints (docs/fleet-language.md, \"`patch`\", lists every one). A
field set to exactly fleetc's value is accepted, and so is an addition that keeps what
fleetc's rule needs (docs/talos.md, \"Patches\"): another certSAN (Talos appends it to
fleetc's), another node IP subnet that cannot select another address of the node (a private
IPv4 range where fleetc makes every address the node has: Scaleway, Proxmox). It runs when the
fleet has no other error (it reads the documents fleetc emits: `src/emit/talos/owned.rs`).

## Why
A patch applies after fleetc's documents and wins (siderolabs/talos v1.13.9
`pkg/machinery/config/configpatcher/strategic.go`); a list is appended to, not replaced
(`pkg/machinery/config/merge/merge.go`), except the pod and service subnets
(`merge:\"replace\"`). The checks fleetc runs on fleet.kdl's value (pod subnets off the
network, one CNI, the endpoint in the certSANs, R15–R21) would pass while the nodes run the
patch's value. Where a rule owns the field, `overrides=\"R…\"` on the `patch` line makes it a
warning.

## Example
    cni \"cilium\"
    patch \"patches/cni.yaml\"     # cluster.network.cni.name: flannel

## Instead
    cni \"flannel\"   // or drop the patch
";

    PATCH_DROPS_SELECTOR = "fleet::talos::patch-drops-selector", Error, None,
    Some("Talos's merge replaces a CEL selector with the patch's, even an empty one: restate the selector fleetc writes in the patch, or leave the document to fleetc"),
"## What it does
Reports a patch document that names a document fleetc emits with a CEL selector (the Proxmox
`LinkAliasConfig`'s `selector.match`) without restating that selector. The EPHEMERAL
`VolumeConfig` restated without `provisioning.diskSelector.match` is not refused: fleetc writes
the patch into out/ with the pool's selector added (`fleet::talos::patch-selector-completed`, a
warning); only with `overrides=\"R15\"` is it written as is, and this code's finding becomes the
override's warning.

## Why (R15, F5)
Talos merges a patch document into the one of the same kind and name field by field, and a CEL
expression merges by replacement, before any zero-value check (siderolabs/talos v1.13.9
`pkg/machinery/config/merge/merge.go`, the `merger` interface, and `pkg/machinery/cel/cel.go`,
`Expression.Merge`, which copies the right-hand expression even when it is empty). A patch
that only sets `provisioning.maxSize` therefore wipes fleetc's data-disk selector, and
EPHEMERAL falls back to the system disk (`internal/app/machined/pkg/controllers/block/internal/volumes/volumeconfig/system_volumes.go`).

## Example
    apiVersion: v1alpha1
    kind: VolumeConfig
    name: EPHEMERAL
    provisioning:
      maxSize: 40GB

## Instead
    apiVersion: v1alpha1
    kind: VolumeConfig
    name: EPHEMERAL
    provisioning:
      diskSelector:
        match: '!system_disk && disk.size >= 50u * GB'
      maxSize: 40GB
";

    PATCH_STALE_OVERRIDE = "fleet::talos::patch-stale-override", Warning, None,
    Some("the override switches a rule's protection off for nothing: remove it, so that a later edit that does undo the rule is an error again"),
"## What it does
Warns when a `patch` line says `overrides=\"R…\"` and the patch changes nothing that rule owns.

## Why
An override is a standing permission: a later edit of the patch file that does undo the rule
would pass with a warning only, without review of the `patch` line.

## Example
    patch \"patches/time.yaml\" overrides=\"R21\"   # the file does not touch discovery

## Instead
    patch \"patches/time.yaml\"
";

    PATCH_DEPRECATED = "fleet::talos::patch-deprecated", Warning, None,
    Some("Talos still reads this deprecated v1alpha1 field, but its replacement document is what Talos maintains (schemas/talos/<version>/deprecated.json, from the machinery's `Deprecated:` doc comments)"),
"## What it does
Warns on a v1alpha1 field of a patch that the Talos machinery still decodes but marks
deprecated (`machine.network`, `machine.time`, `machine.install.extraKernelArgs`,
`machine.registries`, …), naming the document that replaces it. The field's own subtree is
still judged as Talos's decoder reads it (unknown fields and wrong types are errors).

## Why
Talos's config schema leaves such fields out (`docgen:nodoc`, siderolabs/talos v1.13.9
`pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`), but its decoder reads them, so a
talhelper-era patch still works. fleetc lists them per Talos minor from the machinery itself
(`oracles/schemas/produce` writes `schemas/talos/<minor>/deprecated.json`). Where fleetc writes
a document for the same setting (a node's `link` is a `LinkConfig`), both configure it.

## Example
    machine:
      time:
        servers: [time.cloudflare.com]

## Instead
    apiVersion: v1alpha1
    kind: TimeSyncConfig
    ntp:
      servers: [time.cloudflare.com]
";

    PATCH_DEPRECATED_CONFLICT = "fleet::talos::patch-deprecated-conflict", Error, None,
    Some("Talos refuses a config that sets this deprecated v1alpha1 field beside the document fleetc writes for the same setting (V1Alpha1ConflictValidate): set it in fleet.kdl instead"),
"## What it does
Reports a deprecated v1alpha1 field in a patch that Talos refuses beside a document fleetc
writes for a machine the patch reaches: `machine.network.hostname` beside fleetc's
`HostnameConfig` (every named machine), `machine.network.nameservers`, `searchDomains` or
`disableSearchDomain` beside its `ResolverConfig` (a node with `nameservers`),
`machine.systemDiskEncryption.state` or `ephemeral` beside the encrypted `VolumeConfig` it
writes for `encrypt` (`config/types/block/volume_config.go` l.282-299).

## Why
Talos validates each new-style document against the v1alpha1 config
(`pkg/machinery/config/container/container.go` l.617, `V1Alpha1ConflictValidate`):
siderolabs/talos v1.13.9 `config/types/network/hostname.go` l.151-160 refuses with \"static
hostname is already set in v1alpha1 config\", `resolver.go` l.146-158 with
\".machine.network.nameservers is already set in v1alpha1 config\". The node's config then
fails to load.

## Example
    machine:
      network:
        hostname: cp-1

## Instead
Name the node in fleet.kdl (`node \"cp-1\"`), and its DNS servers with `nameservers`.
";

    PATCH_KERNEL_ARGS_UKI = "fleet::talos::patch-kernel-args-uki", Error, None,
    Some("Talos 1.12 and later generate `machine.install.grubUseUKICmdline: true` and refuse `extraKernelArgs` beside it: put the arguments in the pool's schematic (`kernel-arg \"…\"`), or set `machine.install.grubUseUKICmdline: false` in the patch"),
"## What it does
Reports a patch that sets `machine.install.extraKernelArgs` for bare-metal machines whose
config keeps `machine.install.grubUseUKICmdline` true: no patch of the machine sets it to
`false`.

## Why
Talos's generator writes `grubUseUKICmdline: true` for Talos 1.12 and later (siderolabs/talos
v1.13.9 `pkg/machinery/config/contract.go` `GrubUseUKICmdlineDefault`, used by
`config/generate/init.go` and `worker.go`), and the config's validation refuses the two
together in the mode that installs, metal (`config/types/v1alpha1/v1alpha1_validation.go`
l.101-117, \"install.extraKernelArgs and install.grubUseUKICmdline can't be used together\";
`internal/app/machined/pkg/runtime/mode.go` `RequiresInstall`; cloud images, Proxmox's nocloud
among them, are installed already and skip the check): the node refuses the config, `talosctl apply-config` and the Talos provider fail. talhelper refuses the
same config (a talconfig imported with such a patch does not generate there either).

## Example
    machine:
      install:
        extraKernelArgs: [intel_iommu=on]

## Instead
In fleet.kdl, the pool's schematic carries the arguments into the installer the image factory
builds (`schematic \"iommu\" { kernel-arg \"intel_iommu=on\" }`); or keep GRUB's own command
line in the patch:

    machine:
      install:
        grubUseUKICmdline: false
        extraKernelArgs: [intel_iommu=on]
";

    PATCH_EMPTY = "fleet::talos::patch-empty", Error, None,
    Some("Talos reads a patch with no document as an empty RFC 6902 JSON patch, which it refuses on fleetc's multi-document configs: remove the `patch` line or write the change"),
"## What it does
Reports a `patch` file with no document: empty, only comments, or only `---`.

## Why
Talos's `configpatcher.LoadPatch` (siderolabs/talos v1.13.9
`pkg/machinery/config/configpatcher/load.go` l.22-68) first loads the file as config
documents; with none, it takes the input as a JSON 6902 patch (YAML `null` is an empty list of
operations), and `configpatcher.Apply` (`apply.go`) refuses a JSON patch on a multi-document
config, which every config fleetc hands to Talos is.

## Example
    # patches/time.yaml
    # TODO

## Instead
Remove the `patch` line until the file holds a document.
";

    PATCH_TWICE = "fleet::talos::patch-twice", Error, None,
    Some("each patch file applies once per machine: a second application merges its lists again (Talos appends list items), so list it once, at the level that reaches every machine it is for"),
"## What it does
Reports a patch file listed twice at one level, or reaching the same machine twice (once
at the cluster and again at a pool, say).

## Why
Patches apply in order, each merged into the result of the one before. Talos's strategic
merge appends list items (`configpatcher` merge of slices), so a second application doubles
every list the patch sets (`certSANs`, `extraMounts`, `files`), and the out/ copies hide it.

## Example
    cluster \"main\" {
        patch \"patches/time.yaml\"
        patch \"patches/time.yaml\"
    }

## Instead
    cluster \"main\" {
        patch \"patches/time.yaml\"
    }
";

    PATCH_DUPLICATE_DOCUMENT = "fleet::talos::patch-duplicate-document", Error, None,
    Some("Talos refuses a patch with two documents of the same kind and name: merge them into one"),
"## What it does
Reports a multi-document patch with two documents of the same `apiVersion`, `kind` and
`name` (two machine-config documents, two `LinkConfig eth0`).

## Why
Talos's decoder refuses it while loading the patch: \"duplicate document %s/%s/%s is not
allowed\" (siderolabs/talos v1.13.9
`pkg/machinery/config/configloader/internal/decoder/decoder.go` l.121-129).

## Example
    machine: {sysctls: {a: \"1\"}}
    ---
    machine: {sysctls: {b: \"1\"}}

## Instead
    machine: {sysctls: {a: \"1\", b: \"1\"}}
";

    PATCH_LINK_MTU = "fleet::talos::patch-link-mtu", Error, None,
    Some("Linux takes an MTU of at most 65535 on an Ethernet, bond, VLAN or bridge link (ETH_MAX_MTU); Talos's config takes any 32-bit value and the link then never gets it"),
"## What it does
Reports an `mtu` above 65535 in a link document of a patch (`LinkConfig`, `BondConfig`,
`VLANConfig`, `BridgeConfig`, …) or on one of its routes.

## Why
Talos's machinery accepts it: the field is a `uint32` and `CommonLinkConfig.Validate` has no
bound (siderolabs/talos v1.13.9 `pkg/machinery/config/types/network/link.go` l.95, l.247-300).
Linux refuses it when Talos sets the link: every Ethernet driver's `max_mtu` is at most
`ETH_MAX_MTU` (65535, torvalds/linux v6.12 `include/uapi/linux/if_ether.h`), and
`dev_validate_mtu` (`net/core/dev.c`) returns EINVAL above it. The node comes up with the
link's old MTU and the controller retries forever.

## Example
    kind: LinkConfig
    name: net0
    mtu: 100000

## Instead
    mtu: 9000
";

    MACHINE_BELOW_MINIMUM = "fleet::talos::machine-below-minimum", Error, Some("R27"),
    Some("Talos documents a minimum of cores, memory and disk per role (control plane 2 cores, 2 GiB, 10 GiB; worker 1 core, 1 GiB, 10 GiB): below it the node does not boot Kubernetes (R27: the platform gives what the model says)"),
"## What it does
Reports a machine that is smaller than Talos's documented minimum for its role, or that the
platform cannot create: a size class with `cores=0`, fewer cores or less memory than a
control-plane (2 cores, 2 GiB) or worker (1 core, 1 GiB) node needs, or a system disk,
data disk or EPHEMERAL minimum below 10 GiB.

## Why (R27)
The minimums are Talos's own (siderolabs/talos v1.11.6
`website/content/v1.11/introduction/system-requirements.md`, \"Minimum Requirements\" and
\"Storage\": the last tag whose repository holds the website, the same table since v1.0).
Below them the node runs out of memory while it boots Kubernetes, or its EPHEMERAL volume
(images, container data) fills at the first pulls. A VM with no core is refused by the
Proxmox provider at `tofu plan` (bpg/terraform-provider-proxmox `cpu.cores`,
`IntBetween(1, 2304)`).

## Example
    size \"cp\" cores=0 memory=\"512MiB\"

## Instead
    size \"cp\" cores=2 memory=\"4GiB\"   // Talos recommends 4 cores and 4 GiB for a control plane
";

    PATCH_INSTALL_DISK_UNUSED = "fleet::talos::patch-install-disk-unused", Warning, Some("R15"),
    Some("Talos installs to the disk `machine.install.diskSelector` matches and reads `machine.install.disk` only without one; name the disk in fleet.kdl (`install-disk serial=…`, or `install-disk` with another selector) if that is the disk you meant"),
"## What it does
Warns on a patch that names the install disk by device path (`machine.install.disk`) for a
machine whose config keeps the `machine.install.diskSelector` fleetc writes (the pool's size
selector, or the node's `install-disk` selector). The device path has no effect there.

## Why (R15)
Talos's install step uses the selector's first match when there is a selector, and the device
path only when there is none (siderolabs/talos v1.13.9
`internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer_tasks.go` l.1518-1539, `switch {
case matchExpr != nil: … case Install().Disk() != \"\": … }`; `DiskMatchExpression` is non-nil
whenever `diskSelector` is set, `pkg/machinery/config/types/v1alpha1/v1alpha1_provider.go`). So
the machine still installs to the disk fleetc selects, and R15 holds; the line only misleads a
reader. Where fleetc writes no selector (the node's `install-disk device=`), a patch's device
path is the node's install disk and stays an error (`fleet::talos::patch-owned-field`).

## Example
    patch \"patches/disk.yaml\"      # machine.install.disk: /dev/sda

## Instead
    // drop the line from the patch, or name the disk in fleet.kdl:
    node \"cp-1\" { install-disk serial=\"S3Z1NX0K123456\" }
";

    PATCH_SELECTOR_COMPLETED = "fleet::talos::patch-selector-completed", Warning, Some("R15"),
    Some("Talos's merge would empty the EPHEMERAL selector fleetc writes, so fleetc writes the patch into out/ with that selector added: restate it in the patch to silence this"),
"## What it does
Warns on a patch document that restates the EPHEMERAL `VolumeConfig` without
`provisioning.diskSelector.match` (say only `provisioning.maxSize`), and writes the patch into
out/ with the selector fleetc writes for the pool added (each pool's copy its own pool's). A
patch whose own selector differs from fleetc's is an owned field
(`fleet::talos::patch-owned-field`); a `patch` line with `overrides=\"R15\"` is written as is
(`fleet::talos::patch-drops-selector`, then a warning).

## Why (R15, F5)
Talos merges a patch document into the one of the same kind and name field by field, and a CEL
expression merges by replacement even when the patch's is empty (siderolabs/talos v1.13.9
`pkg/machinery/config/merge/merge.go` calls the type's `Merge` first; `pkg/machinery/cel/cel.go`
l.84-94, `Expression.Merge`). The patch as written would move EPHEMERAL to the system disk
(`internal/app/machined/pkg/controllers/block/internal/volumes/volumeconfig/system_volumes.go`);
completed, the merged config keeps fleetc's selector and the patch's other fields.

## Example
    apiVersion: v1alpha1
    kind: VolumeConfig
    name: EPHEMERAL
    provisioning:
      maxSize: 40GB

## Instead
    apiVersion: v1alpha1
    kind: VolumeConfig
    name: EPHEMERAL
    provisioning:
      diskSelector:
        match: '!system_disk && disk.size >= 50u * GB'
      maxSize: 40GB
";
}
