//! The `fleet::upgrade` codes: a change of versions against the fleet last applied that upstream
//! does not support (a skipped minor, workers ahead, a downgrade). Checked in
//! `src/check/upgrade_path.rs` and `src/check/downgrades.rs`.

codes! {
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

    UPGRADE_STATE_MOVED = "fleet::upgrade::state-moved", Error, Some("R28"),
    Some("every root's backend and the bootstrap root's bucket are written from `state`: a new bucket, region or endpoint leaves every state behind, and each plan would create the environment again beside the running one. Copy the state first (`tofu init -migrate-state` in each root, docs/tofu.md), then change fleet.kdl"),
"## What it does
With `fleetc check --base REV`: reports an environment whose `state` bucket, region or
endpoint differs from revision REV.

## Why (R28)
Every OpenTofu root fleetc writes for the environment keeps its state in that bucket (its S3
backend), and the bootstrap root creates the bucket itself. After the change, `tofu init` in
each root finds an empty bucket: each plan would create the environment's network, gateway,
machines and machine secrets again beside the running ones, and the bootstrap root would
replace its bucket, whose name forces a new one (scaleway/terraform-provider-scaleway v2.81.0
`internal/services/object/bucket.go`, `name` is `ForceNew`) and which `prevent_destroy`
protects. Moving state is an operation on the state, not an edit of fleet.kdl.

## Example
    // at REV
    state bucket=\"demo-tofu-state\"
    // now
    state bucket=\"demo-tofu-state-2\"

## Instead
    state bucket=\"demo-tofu-state\"   // then migrate each root's state by hand, and change both together
";

    UPGRADE_IDENTITY_REPLACED = "fleet::upgrade::identity-replaced", Error, Some("R14"), None,
"## What it does
With `fleetc check --base REV`: reports a cluster built by OpenTofu whose machine secrets would
be replaced by the change: the `talos_version` the cluster root gives `talos_machine_secrets`
(the cluster's Talos version) sorts below the one at revision REV.

## Why (R14)
The machine secrets bundle is the cluster's identity: its certificate authorities, tokens and
keys. The OpenTofu talos provider replaces `talos_machine_secrets` whenever the planned
`talos_version` compares lower than the stored one (siderolabs/terraform-provider-talos v0.11.0
`pkg/talos/talos_machine_secrets_resource.go` l.525-543, `semver.Compare`). The roots protect
it with `prevent_destroy`, so the cluster root's plan fails and no `fleetc apply` of that
environment can plan again; without it, a new bundle would be another cluster that the running
nodes do not join. `fleetc diff` calls the change DANGER (rule `secrets-version`).

## Example
    // at REV
    talos \"v1.13.9\"
    // now
    talos \"v1.12.6\"

## Instead
    talos \"v1.13.9\"   // the version only moves forward, along `fleetc upgrade-plan`
";
}
