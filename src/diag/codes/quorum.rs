//! The `fleet::quorum` codes: control planes whose etcd membership cannot keep or survive quorum.
//! Checked in `src/check/quorum.rs`.

codes! {
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
}
