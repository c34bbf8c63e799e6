//! The `fleet::node` codes: the named nodes of a pool (their count, install disks, hostnames,
//! addresses and links). Checked in `src/check/nodes.rs`, and a pool with more named nodes than
//! its `count` while resolving, in `src/model/resolve/mod.rs`.

codes! {
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

    IDENTITY_TWICE = "fleet::node::identity-twice", Error, Some("R15"),
    Some("a MAC address, a disk serial and a WWID each name one piece of hardware: write each machine's own, as `talosctl get links --insecure` and `talosctl get disks --insecure` report them in maintenance mode"),
"## What it does
Reports a MAC address, an `install-disk serial=` or an `install-disk wwid=` that two machines
of one environment declare, or that a pool's `install-disk` gives to all its machines.

## Why (R15)
`fleetc apply` recognises a bare-metal machine in maintenance mode by its declared MAC and
install disk before it sends the config (siderolabs/talos v1.13.9
`pkg/machinery/resources/network/link_status.go`, `HardwareAddr`; `pkg/machinery/resources/block/disk.go`,
`Serial`, `WWID`): with one MAC declared twice, the second machine is refused, or receives the
first one's config. Talos installs to the one disk its selector matches
(`pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`, `InstallDiskSelector`): a serial
copied to a second machine matches no disk there, and the install stops.

## Example
    node \"m1\" { address \"10.30.0.11\"; mac \"3c:ec:ef:10:00:11\" }
    node \"m2\" { address \"10.30.0.12\"; mac \"3c:ec:ef:10:00:11\" }

## Instead
    node \"m1\" { address \"10.30.0.11\"; mac \"3c:ec:ef:10:00:11\" }
    node \"m2\" { address \"10.30.0.12\"; mac \"3c:ec:ef:10:00:12\" }
";

    GATEWAY_OFF_LINK = "fleet::node::gateway-off-link", Error, None,
    Some("a route's gateway must be reachable on its link: give an address of one of the link's subnets (usually the subnet's router), or add the link address that makes it reachable"),
"## What it does
Reports a `route gateway=` of a `link`, `bond` or `vlan` that lies outside the subnets of that
link's addresses.

## Why
Talos adds each route of a `LinkConfig` through netlink with no `onlink` flag
(siderolabs/talos v1.13.9 `internal/app/machined/pkg/controllers/network/route_spec.go`,
`conn.Route.Add`), and its config validation only checks that the gateway is an address
(`pkg/machinery/config/types/network/link.go`, `Validate`). The Linux kernel refuses a
gateway it cannot reach on the link (torvalds/linux `net/ipv4/fib_semantics.c`,
`fib_check_nh_v4_gw`: \"Nexthop has invalid gateway\"), so the route is never installed: a
default route lost this way leaves the node without a way out, and Talos retries it forever.

## Example
    link \"eno1\" {
        address \"10.30.0.11/24\"
        route gateway=\"10.31.0.1\"
    }

## Instead
    link \"eno1\" {
        address \"10.30.0.11/24\"
        route gateway=\"10.30.0.1\"
    }
";

    INSTALL_DISK_SIZE = "fleet::node::install-disk-size", Error, Some("R15"),
    Some("Talos reads an install-disk size as `[>=|<=|>|<|==]<size><unit>` and compares with `==` when no operator is written: state the operator and the unit (R15)"),
"## What it does
Reports an `install-disk size=` matcher that does not select what it seems to: a size with
no operator (an exact byte count), a size with no unit (bytes), or text Talos cannot parse.

## Why (R15)
fleetc writes the matcher as it is into `machine.install.diskSelector.size`. Talos trims
it, takes an optional operator `>=`, `<=`, `>`, `<` or `==`, and parses the rest with
go-humanize `ParseBytes`: digits, then a unit in any case, a space allowed, and no unit
meaning bytes (siderolabs/talos v1.13.9
`pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`, `InstallDiskSizeMatcher.UnmarshalYAML`;
dustin/go-humanize v1.0.1 `bytes.go`). With no operator it compares with `==`
(`pkg/machinery/config/types/v1alpha1/v1alpha1_provider.go`, `DiskMatchExpression`): `500GB`
matches a disk of exactly 500,000,000,000 bytes, and a real \"500 GB\" SSD has
500,107,862,016. No disk matches, and the installation stops. Text it cannot parse makes
Talos refuse the whole machine config.

## Example
    install-disk size=\"500GB\"

## Instead
    install-disk size=\">= 480GB\"
";

    INSTALL_DISK_SELECTOR = "fleet::node::install-disk-selector", Error, Some("R15"),
    Some("Talos compares each stated selector field with what the kernel reports for the disk, and skips an empty one: state each field as `talosctl get disks` prints it (R15)"),
"## What it does
Reports an `install-disk` field (`serial`, `model`, `wwid`, `bus-path`, `device`) that is
empty, holds a line break, a control character or surrounding spaces, a bus path that does
not start with `/`, or a device path outside `/dev/`.

## Why (R15)
Talos turns each non-empty field into a condition on the disk it reads from the kernel
(`disk.serial`, `disk.model`, `disk.wwid`: a glob) and **skips an empty one**
(siderolabs/talos v1.13.9 `pkg/machinery/config/types/v1alpha1/v1alpha1_provider.go`,
`DiskMatchExpression`: `if selector.Serial != \"\"`). So `serial=\"\"` selects by nothing, and
the selector may pick another disk and install over it; a value with a line break or stray
spaces matches no disk at all.

## Example
    install-disk serial=\"\"

## Instead
    install-disk serial=\"S6PNNS0T500123\"   // as `talosctl get disks` prints it
";

    LINK_NOT_ON_VM = "fleet::node::link-not-on-vm", Error, None,
    Some("a VM has the one network interface the platform gives it (`net0` on Proxmox): state its address on `link \"net0\"`, and VLANs on `net0`; bonds and other link names are bare-metal settings"),
"## What it does
Reports, on a VM platform (Proxmox, Scaleway), a `link` whose name is not the VM's network
interface, a `bond`, or a `vlan` whose parent is not that interface.

## Why
fleetc creates each VM with one network interface (the Proxmox modules' one
`network_device`, named `net0` by fleetc's `LinkAliasConfig`). A link by another name, or
the second member of a bond, is a device the VM does not have: Talos waits for it and the
address never comes up, and on a control-plane node the endpoint's shared address stays on
`net0`, which a bond would have taken as its member (talos-3 m5). On Scaleway fleetc writes no
link at all.

## Example
    bond \"bond0\" mode=\"active-backup\" { links \"net0\" \"net1\"; address \"10.10.0.21/22\" }

## Instead
    link \"net0\" { address \"10.10.0.21/22\"; route gateway=\"10.10.0.1\" }
";

    MAINTENANCE_ADDRESS_ON_VM = "fleet::node::maintenance-address-on-vm", Error, Some("R13"),
    Some("a VM is reached before its config where fleetc put it (its static address on Proxmox, the gateway on Scaleway): remove `maintenance-address`, which is for bare metal on DHCP"),
"## What it does
Reports a `maintenance-address` outside a `metal` environment.

## Why (R13)
`fleetc apply` sends a bare-metal machine its first config at the address it has in
maintenance mode, after checking the machine is the one fleet.kdl names (docs/metal.md). A
VM fleetc created has no such address: on Proxmox it boots with its static address from the
NoCloud data fleetc wrote, on Scaleway it is reached through the gateway. A
`maintenance-address` there would be silently ignored, and whoever reads fleet.kdl would
believe apply talks to it.

## Example
    proxmox { … }
    …
    node \"w1\" { maintenance-address \"10.10.0.150\" }

## Instead
    node \"w1\" { address \"10.10.0.21\" }
";

    EPHEMERAL_DISK_ON_VM = "fleet::node::ephemeral-disk-on-vm", Error, Some("R15"),
    Some("on a VM fleetc creates the data disk and selects it by size (`ephemeral-min-size`, `data-disk-size`): remove `ephemeral-disk`, which is for bare metal"),
"## What it does
Reports an `ephemeral-disk` outside a `metal` environment.

## Why (R15)
On a VM fleetc creates the system disk and the data disk, and selects EPHEMERAL's by the
size it gave it (`!system_disk && disk.size >= <ephemeral-min-size>`). An `ephemeral-disk`
there would name a disk fleetc does not create.

## Example
    proxmox { … }
    …
    node \"w1\" { ephemeral-disk serial=\"S6PNNS0T500123\" }

## Instead
    pool \"w\" ephemeral-min-size=\"100GB\" data-disk-size=\"200GB\" { … }
";
}
