//! The `fleet::model` codes: fleet.kdl read into the model, where a node, property, value,
//! reference or file is not what the fleet language allows. Raised while resolving, in
//! `src/model/resolve/` (`reader.rs` for nodes, properties and types; `mod.rs` for references,
//! inheritance, files and URLs; `duplicates.rs`, `nodes.rs`, `patches.rs`), and for a few by
//! `src/check/references.rs`, `src/check/names.rs`, `src/check/network.rs` and `src/check/argocd.rs`.

codes! {
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
}
