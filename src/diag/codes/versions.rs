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

    TALOS_RELEASE_UNKNOWN = "fleet::versions::talos-release-unknown", Error, Some("R17"),
    Some("the installer and the disk image are built for this exact release (R17): a release Talos never published has no installer image, and the machines never install"),
"## What it does
Reports a Talos patch release newer than the newest release of its minor that fleetc's
versions table knows (`versions/talos.kdl`, `newest`): `v1.13.99` when the table's newest
1.13 release is `v1.13.9`.

## Why (R17)
fleetc writes the version as it is into the installer image
(`factory.talos.dev/<platform>-installer/<schematic>:<version>`, `Fleet::installer`) and the
disk image URL (`https://factory.talos.dev/image/<schematic>/<version>/…`,
`Schematic::image_url`). Talos publishes each release as a tag of siderolabs/talos with its
images; the table's `newest` is the newest tag fleetc was checked against, and a release past
it is, as far as fleetc knows, one that was never published: the machine finds no image to
boot or install. A table that is out of date is updated (docs/talos.md, \"Versions\").

## Example
    talos \"v1.13.99\"

## Instead
    talos \"v1.13.9\"
";

    KUBERNETES_RELEASE_UNKNOWN = "fleet::versions::kubernetes-release-unknown", Error, Some("R17"),
    Some("the kubelet and control-plane images are pulled at this exact tag: a Kubernetes release that was never published has no images, and the nodes never start Kubernetes (R17)"),
"## What it does
Reports a Kubernetes patch release (the cluster's `kubernetes`, or a worker pool's own
`kubernetes`) newer than the newest release of its minor fleetc knows
(`src/upstream/talos.rs`, `KUBERNETES_PUBLISHED`: the newest `k8s.io/api` tag of each minor).

## Why (R17)
The version goes to Talos's config generator (the OpenTofu talos provider's
`kubernetes_version`, the Cluster API bootstrap provider), which writes every image at
`v<kubernetes>`: `ghcr.io/siderolabs/kubelet`, `registry.k8s.io/kube-apiserver`,
`kube-controller-manager`, `kube-scheduler`, `kube-proxy` (siderolabs/talos v1.13.9
`pkg/machinery/config/generate/init.go` l.28, l.149-160). A release that was never published
has no images, and the node never starts Kubernetes. fleetc knows each minor's newest release
from the tags of `k8s.io/api`, which is tagged with every Kubernetes release.

## Example
    kubernetes \"1.36.60\"

## Instead
    kubernetes \"1.36.6\"
";

    TALOS_PRERELEASE = "fleet::versions::talos-prerelease", Error, None,
    Some("this minor's row in fleetc's versions table was read from a pre-release of Talos (its schema, defaults and Kubernetes range may still change before GA): write `allow-prerelease=#true` on the `talos` node to build for it on purpose (docs/talos.md, \"Release day\")"),
"## What it does
Reports a Talos pin whose minor has a `prerelease=#true` row in fleetc's versions table
(`versions/talos.kdl`) when the `talos` node does not say `allow-prerelease=#true`.

## Why
On the way to a Talos minor's GA, fleetc adds its row from the newest pre-release machinery
the Go module proxy serves (siderolabs/talos `pkg/machinery`, docs/talos.md \"Release day\"), so
that release day is one changed row. Until then the documents, schema and Kubernetes range of
that row are a pre-release's: a fleet meant for production must not move to it by accident.

## Example
    talos \"v1.15.0\"   // versions/talos.kdl: talos \"1.15\" prerelease=#true

## Instead
    talos \"v1.15.0\" allow-prerelease=#true   // a lab fleet, on purpose
    talos \"v1.14.1\"                          // or the newest GA minor
";
}
