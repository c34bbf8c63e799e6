//! The `fleet::metal` codes: a bare-metal machine that is not declared one by one (R13),
//! checked in `src/check/nodes.rs`; a control-plane node with no link to hold the endpoint on,
//! checked in `src/check/links.rs`; disks not declared by identity and static links without
//! DNS servers, checked in `src/check/metal.rs`.

codes! {
    METAL_UNDECLARED_MACHINE = "fleet::metal::undeclared-machine", Error, Some("R13"),
    Some("on bare metal nothing creates machines: every machine is a named node with the address `fleetc apply` reaches it at in maintenance mode, and a `mac`, or an `install-disk` with an exact `serial` or `wwid`, by which it is recognised (R13)"),
"## What it does
Reports a machine of a `metal` environment that is not declared one by one: a pool whose
`count` goes beyond its named nodes, a named node without an `address`, or one with neither a
`mac` nor an install disk named by an exact `serial` or `wwid` (a size, a model or a glob fits
other machines as well).

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

    VIP_WITHOUT_LINK = "fleet::metal::vip-without-link", Error, Some("R18"),
    Some("on bare metal the endpoint is a shared address (`Layer2VIPConfig`) each control-plane node holds on the link that carries its own address: declare that link, `link \"eno1\" { address \"<address>/<prefix>\"; route gateway=\"…\" }` (or give the node a patch with that `Layer2VIPConfig`)"),
"## What it does
Reports a control-plane node of a `metal` environment that declares no `link` and has no
patch that holds the endpoint itself (a `Layer2VIPConfig` named by the endpoint's address,
or a v1alpha1 interface's `vip.ip`: what an imported talhelper node carries).

## Why (R18)
On bare metal nothing in front of the cluster carries its API: the endpoint is a shared
address that the control-plane nodes elect among themselves and announce on one of their
links (siderolabs/talos v1.13.9 `pkg/machinery/config/types/network/layer2_vip.go`,
`Layer2VIPConfig`, whose `link` names the link that holds it). fleetc writes that document
on the link that carries the node's own address: a node without a `link` gets no static
address and no shared address, so it never holds the endpoint, and with no node holding it
the cluster's API is unreachable.

## Example
    endpoint address=\"10.30.0.10\"
    control-plane {
        node \"m3\" { address \"10.30.0.13\"; mac \"3c:ec:ef:10:00:13\" }

## Instead
        node \"m3\" {
            address \"10.30.0.13\"
            mac \"3c:ec:ef:10:00:13\"
            link \"eno1\" { address \"10.30.0.13/24\"; route gateway=\"10.30.0.1\" }
        }
";

    DISK_UNIDENTIFIED = "fleet::metal::disk-unidentified", Error, Some("R15"),
    Some("on bare metal fleetc made no disk: name the install disk (and an `ephemeral-disk`) by what the hardware reports, `serial`, `wwid`, `model` (with `size` where two models differ by size) or `bus-path`, as `talosctl get disks --insecure` prints them in maintenance mode (R15)"),
"## What it does
Reports a machine of a `metal` environment whose install disk is not declared by identity:
no `install-disk` at all, or one with only `size=` or `device=`; and an `ephemeral-disk` with
only `size=` or `device=`.

## Why (R15, R13)
On a VM fleetc creates the disks and knows their sizes; on bare metal it does not. A size
alone matches whatever disk happens to be that size, a USB boot stick included: Talos's
selector excludes only disks with no transport, read-only disks and CD-ROMs
(siderolabs/talos v1.13.9 `v1alpha1_provider.go`, `DiskMatchExpression`), and when nothing
matches the maintenance-mode apply is refused (\"no disks matched the expression\",
`v1alpha1_validation.go`). A device path changes with enumeration order. A serial, a WWID,
a model or a bus path names the disk the machine has.

## Example
    node \"m1\" { address \"10.30.0.11\"; mac \"3c:ec:ef:10:00:11\"; install-disk size=\"<= 1TB\" }

## Instead
    node \"m1\" {
        address \"10.30.0.11\"
        mac \"3c:ec:ef:10:00:11\"
        install-disk serial=\"S6PNNS0T500123\"   // as `talosctl get disks --insecure` prints it
    }
";

    LINKS_WITHOUT_NAMESERVERS = "fleet::metal::links-without-nameservers", Warning, None,
    Some("static links turn off DHCP on every link, and the DNS servers DHCP gave with it: declare `nameservers` for the node (or its pool), or Talos falls back to 1.1.1.1 and 8.8.8.8"),
"## What it does
Warns about a machine of a `metal` environment that declares a `link`, `bond` or `vlan` but
no `nameservers`.

## Why
One link document turns off Talos's default DHCP on every link (siderolabs/talos v1.13.9
`internal/app/machined/pkg/controllers/network/operator_config.go`, default DHCP only when no
link is configured), and the DNS servers DHCP supplied go with it. Talos then resolves through
its defaults, 1.1.1.1 and 8.8.8.8 (`pkg/machinery/constants/constants.go`,
`DefaultPrimaryResolver`, `DefaultSecondaryResolver`), which an isolated network does not
reach and which do not know the site's own names (the registry mirror, the NTP server).

## Example
    node \"m1\" { link \"eno1\" { address \"10.30.0.11/24\"; route gateway=\"10.30.0.1\" } }

## Instead
    node \"m1\" {
        link \"eno1\" { address \"10.30.0.11/24\"; route gateway=\"10.30.0.1\" }
        nameservers \"10.30.0.1\"
    }
";
}
