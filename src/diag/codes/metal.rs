//! The `fleet::metal` code: a bare-metal machine that is not declared one by one (R13). Checked
//! in `src/check/nodes.rs`.

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
}
