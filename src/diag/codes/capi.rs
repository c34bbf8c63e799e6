//! The `fleet::capi` codes: clusters managed by Cluster API, their providers, versions,
//! identities and templates. Checked in `src/check/capi.rs`, and provider combinations against
//! their tested versions in `src/check/capi_versions.rs`.

codes! {
    CAPI_PROVIDER_UNSUPPORTED = "fleet::capi::provider-unsupported", Error, Some("R24"), None,
"## What it does
Reports a pinned Cluster API provider version whose API fleetc does not emit: the shapes of
the objects under out/capi/ are keyed on the pinned versions, and fleetc knows Cluster API
core 1.11–1.14 (`cluster.x-k8s.io/v1beta2`), the Talos control-plane provider (CACPPT) 0.5,
the Talos bootstrap provider (CABPT) 0.6.5 and later 0.6 releases, and the Proxmox provider
(CAPMOX) 0.9.

## Why (R24)
Each provider line serves its own API versions. CACPPT 0.6 moves to the v1beta2 contract
(`spec.machineTemplate.spec.infrastructureRef` instead of `spec.infrastructureTemplate`);
CAPMOX before 0.8 serves only `v1alpha1`; CABPT before 0.6.5 has no `strategicPatches`. Objects
written for another version are refused by the API server, or worse, pruned silently.

## Example
    cluster-api {
        control-plane-talos \"0.6.0\"

## Instead
    cluster-api {
        control-plane-talos \"0.5.12\"
";

    CAPI_KUBERNETES_UNSUPPORTED = "fleet::capi::kubernetes-unsupported", Error, Some("R26"), None,
"## What it does
Reports a Kubernetes version that the management cluster's pinned Cluster API core does not
support: for a managed cluster (or one of its pools), the range of workload clusters; for the
management cluster itself, the range of management clusters.

## Why (R26)
Each Cluster API minor release supports a window of Kubernetes minors (1.11: workloads
1.28–1.33; 1.12: 1.29–1.35; 1.13: 1.30–1.36; 1.14: 1.31–1.37). Outside it, the controllers
are not tested against that API and upgrades may stop halfway. `fleetc upgrade-plan` raises
the core provider first when a step needs it.

## Example
    core \"1.12.9\"
    …
    cluster \"edge-1\" managed-by=\"mgmt\" {
        kubernetes \"1.36.2\"

## Instead
    core \"1.13.3\"
";

    CAPI_IDENTITY_NOT_SEALED = "fleet::capi::identity-not-sealed", Error, Some("R14"), None,
"## What it does
Reports a managed cluster that lists no `talos-secrets` sealed input, or a management cluster
that lists no `proxmox-api` sealed input.

## Why (R14, F13)
The Talos bootstrap provider keeps a workload cluster's identity in the Secret
`<cluster>-talos` on the management cluster and generates a new one when it is missing: lose
the management cluster and the workload cluster's identity is gone with it. Created from the
sealed bundle before the first sync, the Secret is used instead, and a rebuilt management
cluster finds the same identity. CAPMOX's Proxmox token is a credential: it comes from a
sealed input too, never from out/ (F11).

## Example
    cluster \"edge-1\" managed-by=\"mgmt\" {
        sealed \"scaleway-api-key\"

## Instead
    cluster \"edge-1\" managed-by=\"mgmt\" {
        sealed \"talos-secrets\"
";

    CAPI_INFRASTRUCTURE_UNSUPPORTED = "fleet::capi::infrastructure-unsupported", Error, Some("R27"), None,
"## What it does
Reports a managed cluster that fleetc cannot express with its Cluster API providers: one
outside a Proxmox environment, or one without an `ip-pool` for its machines.

## Why (R27)
fleetc emits the Proxmox infrastructure provider (CAPMOX) only. Its machines take their
addresses from the cluster's IP pool through the ProxmoxCluster's address configuration.

## Example
    environment \"staging\" {
        scaleway …
        cluster \"edge-1\" managed-by=\"mgmt\"

## Instead
Manage the cluster from a Proxmox environment and give it an address range:
    cluster \"edge-1\" managed-by=\"mgmt\" {
        ip-pool \"192.168.50.100-192.168.50.150\"
";

    CAPI_WORKER_SKEW = "fleet::capi::worker-version-skew", Error, Some("R26"), None,
"## What it does
Reports a worker pool whose own `kubernetes` version is ahead of the control plane, more than
three minors behind it, or set on a cluster that Cluster API does not manage.

## Why (R26)
A kubelet may not be newer than the API server, and may lag it by at most three minors. During
a chained upgrade the control plane goes first, one minor at a time, and the workers follow
(`fleetc upgrade-plan`); a pool pin holds them back in the meantime. Clusters built by OpenTofu
upgrade every kubelet with `talosctl upgrade-k8s`, so a pin there would be a lie.

## Example
    kubernetes \"1.34.4\"
    pool \"workers\" count=2 kubernetes=\"1.35.0\"

## Instead
    pool \"workers\" count=2 kubernetes=\"1.33.4\"
";

    CAPI_NO_PROVIDER_ID = "fleet::capi::no-provider-id", Warning, Some("F8"), None,
"## What it does
Warns when a managed cluster has no `talos-ccm` add-on to give its nodes the provider ID
that CAPMOX matches Machines with.

## Why (F8, R25)
CAPMOX matches a Machine to its Node by `proxmox://<vm uuid>`. fleetc has CAPMOX inject that
value into the machine's nocloud metadata, but Talos does not pass it to the kubelet: the
Talos cloud controller manager copies it into `Node.spec.providerID`. Without it, Machines
never get their Node, and rollouts and health checks stall.

## Example
    cluster \"edge-1\" managed-by=\"mgmt\" {
        addons \"cilium\"

## Instead
    cluster \"edge-1\" managed-by=\"mgmt\" {
        addons \"cilium\" \"talos-ccm\"
";

    CAPI_PROVIDER_COMBINATION = "fleet::capi::provider-combination", Error, Some("R24"), None,
"## What it does
Refuses a management cluster whose Cluster API provider pins are not a combination their
upstreams state they support: the Proxmox provider (CAPMOX) against the core provider's minor
and the IPAM in-cluster provider's release, from fleetc's table `versions/capi.kdl` (one row per
provider minor, each value with its source; docs/versions.md prints it).

## Why (R24)
A provider is built on one Cluster API release (its go.mod) and tested against the core minors
its README's compatibility matrix ticks. CAPMOX 0.9.0 ticks CAPI v1.11 and v1.12 only
(ionos-cloud/cluster-api-provider-proxmox v0.9.0 `README.md`, \"Compatibility with Cluster
API and Kubernetes Versions\"; its `go.mod` builds on cluster-api v1.12.9) and names IPAM
in-cluster v1.1.0, the first release of the v1beta2 contract, as a prerequisite
(`docs/migration-v0.9.md`). A newer core than any CAPMOX release states is a pairing nobody
tested; Cluster API does not support downgrades (kubernetes-sigs/cluster-api v1.14.0
`docs/book/src/reference/versions.md`, \"Downgrades\"), so pick the combination before the
management cluster is built.

## Example
    cluster-api {
        core \"1.13.3\"
        infrastructure-proxmox \"0.9.0\"
        ipam-in-cluster \"1.0.3\"

## Instead
    cluster-api {
        core \"1.12.10\"
        infrastructure-proxmox \"0.9.0\"
        ipam-in-cluster \"1.1.0\"
";

    CAPI_TEMPLATE_NOT_CREATED = "fleet::capi::template-not-created", Warning, Some("R22"), None,
"## What it does
Warns, for every managed cluster whose VM template is made by hand (`vm-template-manual #true`),
that nothing fleetc emits creates the Proxmox VM template its ProxmoxMachineTemplates select,
and says how to create it. Without `vm-template-manual`, the environment's cloud root creates
the template (`proxmox_virtual_environment_vm.template`, tagged by `model::VmTemplate`).

## Why (R22)
CAPMOX clones every machine from a VM template it finds by tags
(`templateSelector.matchTags`, `matchPolicy: exact`): a VM with `template=1` whose tag set is
exactly the one fleetc writes, `talos-<version>-<schematic id prefix>`. With no template, every
ProxmoxMachine fails with \"found 0 VM templates\" and the cluster never starts. A template made
by hand is a manual step per Talos version and schematic: import the nocloud disk image the
help names into a VM on the Proxmox node, convert it to a template, and tag it.

## Instead
Remove `vm-template-manual` and the cloud root creates the template; or create it by hand
before the cluster's first sync.
";

    CAPI_MULTIDOC_PATCH = "fleet::capi::multidoc-patch", Warning, Some("R24"), None,
"## What it does
Warns when a managed cluster's machines get a Talos document other than the v1alpha1 machine
config as a strategic patch, and the Talos bootstrap provider may refuse it.

## Why (R24)
The bootstrap provider generates each machine's config with the Talos library it was built
with and merges the patches in with `configpatcher.LoadPatch`, which reads multi-document
patches (CABPT v0.6.11 `controllers/talosconfig_controller.go` l.333-347); but a kind that
library does not know fails the machine's bootstrap. The kinds fleetc knows CABPT's library
has (`v1alpha1`, `LinkAliasConfig`, `Layer2VIPConfig`) pass without this warning; the rest
are passed as patches with it (docs/capi.md, \"Talos documents\").

## Instead
Check the machines' bootstrap on a test cluster after a provider or Talos upgrade.
";

    CAPI_PROVIDER_UNTESTED = "fleet::capi::provider-untested", Warning, Some("R24"), None,
"## What it does
Warns when a managed cluster's Talos or Kubernetes minor is outside what the pinned Talos
bootstrap provider (CABPT) or control-plane provider (CACPPT) release states it supports.

## Why (R24)
CABPT and CACPPT generate every machine's config with the Talos library they were built with
and list, release by release, the Talos and Kubernetes minors they support (the compatibility
tables of their READMEs, e.g. siderolabs/cluster-api-control-plane-provider-talos v0.5.13
`README.md` l.27-43); a config for a newer Talos contract generated by an older library is
outside what anyone tested. fleetc's rows, each with its source, are in docs/capi.md
(\"Version table\"); a later patch of a known minor inherits its newest row.

## Example
    talos \"v1.13.9\"
    cluster-api {
        bootstrap-talos \"0.6.11\"
        control-plane-talos \"0.5.12\"

## Instead
    cluster-api {
        bootstrap-talos \"0.6.12\"
        control-plane-talos \"0.5.13\"
";
}
