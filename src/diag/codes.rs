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
    Some("fleetc knows the configuration schema of Talos 1.12, 1.13 and 1.14; other versions cannot be emitted safely"),
"## What it does
Reports a Talos version fleetc cannot emit configuration for.

## Why
Machine configuration fields change between Talos minors; fleetc emits only fields the target
version's schema knows.

## Example
    talos \"v1.9.0\"

## Instead
    talos \"v1.13.9\"
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
