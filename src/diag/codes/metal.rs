//! The `fleet::metal` codes: a bare-metal machine that is not declared one by one (R13),
//! checked in `src/check/nodes.rs`; a control-plane node with no link to hold the endpoint on,
//! checked in `src/check/links.rs`.

codes! {
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

    VIP_WITHOUT_LINK = "fleet::metal::vip-without-link", Error, Some("R18"),
    Some("on bare metal the endpoint is a shared address (`Layer2VIPConfig`) each control-plane node holds on the link that carries its own address: declare that link, `link \"eno1\" { address \"<address>/<prefix>\"; route gateway=\"…\" }`"),
"## What it does
Reports a control-plane node of a `metal` environment that declares no `link`.

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
}
