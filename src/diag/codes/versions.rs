//! The `fleet::versions` codes: Kubernetes and Talos versions outside the embedded version table
//! (`versions/talos.kdl`). Checked in `src/check/versions.rs`.

codes! {
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
}
