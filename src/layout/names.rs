//! Names two stages must spell alike: the sealed inputs a cluster lists (`sealed "…"`), which
//! `fleetc secrets`, `fleetc apply`, the Cluster API family and the review all name; the
//! variables and outputs of the OpenTofu roots and the resource addresses `fleetc apply`
//! passes to them (written by `emit::tofu`); the objects `fleetc apply` writes into a cluster;
//! and the names one family looks for in another's output.

/// The sealed input that holds a cluster's Talos machine secrets bundle (R14): fleetc never
/// generates one; `fleetc secrets import` seals the operator's.
pub const TALOS_SECRETS_INPUT: &str = "talos-secrets";
/// The sealed input of a management cluster that holds the Proxmox API token (CAPMOX's
/// credentials, F11).
pub const PROXMOX_API_INPUT: &str = "proxmox-api";
/// The sealed input holding the API key of the Scaleway cloud controller manager and CSI
/// driver (F11): a YAML map with `access_key` and `secret_key`. It never reaches a root, a
/// machine config or state: `fleetc apply` writes it into the cluster as [`SCALEWAY_SECRET`].
pub const SCALEWAY_API_KEY_INPUT: &str = "scaleway-api-key";
/// The sealed input holding Argo CD's repository credential (username/password or
/// sshPrivateKey, as a YAML map).
pub const ARGOCD_REPO_INPUT: &str = "argocd-repo";
/// The add-on that copies the nocloud `provider-id` into `Node.spec.providerID` (F8).
pub const PROVIDER_ID_ADDON: &str = "talos-ccm";

/// The cloud root's variable that opens the Talos API switch (R13), false at rest.
pub const TALOS_SWITCH_VAR: &str = "talos_api_open";
/// The cloud root's variable that opens the operator's path to the Kubernetes API.
pub const KUBERNETES_SWITCH_VAR: &str = "kubernetes_api_open";
/// The port the Talos API listens on (apid, and the maintenance service).
pub const TALOS_API_PORT: u16 = 50_000;
/// The Scaleway cloud root's output: the public gateway's SSH bastion, which the Talos API
/// switch enables (R13): `{address, port, enabled, allowed_ip_ranges}`, the last three as the
/// provider read them back from the gateway. `fleetc apply` tunnels each node's port 50000
/// through it, and refuses to when the ranges are not fleet.kdl's `admin-ranges`.
pub const BASTION_OUTPUT: &str = "talos_bastion";
/// The port of the gateway's SSH bastion: Scaleway's default, the one value outside
/// 1024-59999 the provider accepts (scaleway/terraform-provider-scaleway v2.81.0
/// `internal/services/vpcgw/public_gateway.go` l.86-98).
pub const BASTION_PORT: u16 = 61_000;
/// The user the gateway's SSH bastion takes (it authenticates the SSH keys of the project).
pub const BASTION_USER: &str = "bastion";
/// The address each tunnel forward listens on, on the operator's machine: a node's
/// `talos_endpoint` on Scaleway is `127.0.0.1:<its port>`, and every Scaleway node's
/// certificate SANs carry this address, so that talosctl and the talos provider verify the
/// node's certificate through the tunnel.
pub const TUNNEL_ADDRESS: &str = "127.0.0.1";
/// The Scaleway cloud root's variable: the id (`<zone>/<uuid>`) of the reserved public gateway
/// IP it imports (R16); `apply` looks it up by fleet.kdl's `gateway` address.
pub const GATEWAY_IP_VAR: &str = "gateway_ip_id";
/// The cluster root's apply mode variable (R19).
pub const APPLY_MODE_VAR: &str = "apply_mode";
/// The cluster root's map `cluster → path of the decrypted secrets bundle`, which its
/// `import` block of `talos_machine_secrets` reads (R14). The files live in a private
/// temporary directory only while tofu runs.
pub const TALOS_SECRETS_VAR: &str = "talos_secrets_files";
/// The cloud root's output: per cluster, `control_plane` (a list of `{hostname, address,
/// talos_endpoint}` in order), `workers` (a map by hostname of the same) and optionally
/// `kubernetes_api` (`host:port` of the operator's path to the API). The cluster root reads
/// it from the cloud root's state, `fleetc apply` with `tofu output`.
pub const INVENTORY_OUTPUT: &str = "clusters";

/// A HCL identifier from a fleet name (a DNS label): `-` becomes `_`, and a leading digit
/// gets an `n` prefix (`edge-1` → `edge_1`, `1a` → `n1a`). Names are unique DNS labels
/// (checked), so identifiers are unique too. The cluster root calls each cluster's module
/// by this name.
pub fn ident(name: &str) -> String {
    let s = name.replace('-', "_");
    if s.starts_with(|c: char| c.is_ascii_digit()) { format!("n{s}") } else { s }
}

/// The Talos cluster module's resource type that applies a node's config.
pub const CONFIG_APPLY: &str = "talos_machine_configuration_apply";
/// The [`CONFIG_APPLY`] resource (and its `data` source) of control-plane node `index`
/// (1-based): one block per control-plane node (F3).
pub fn control_plane_apply(index: usize) -> String {
    format!("cp_{index}")
}
/// The [`CONFIG_APPLY`] resource (and its `data` source) of the workers, `for_each` by
/// hostname.
pub const WORKER_APPLY: &str = "worker";
/// The Talos cluster module's bootstrap resource `(type, name)` (on the first control-plane
/// node).
pub const BOOTSTRAP_RESOURCE: (&str, &str) = ("talos_machine_bootstrap", "this");

/// The cluster root's resource that applies the config of control-plane node `index`
/// (1-based).
pub fn control_plane_target(cluster: &str, index: usize) -> String {
    format!("module.{}.{CONFIG_APPLY}.{}", ident(cluster), control_plane_apply(index))
}

/// The cluster root's resource that applies the config of worker `host`.
pub fn worker_target(cluster: &str, host: &str) -> String {
    format!("module.{}.{CONFIG_APPLY}.{WORKER_APPLY}[\"{host}\"]", ident(cluster))
}

/// The cluster root's bootstrap resource (on the first control-plane node).
pub fn bootstrap_target(cluster: &str) -> String {
    format!("module.{}.{}.{}", ident(cluster), BOOTSTRAP_RESOURCE.0, BOOTSTRAP_RESOURCE.1)
}

/// The Secret the Scaleway cloud controller manager and CSI driver read (their vendored
/// manifests reference it by this name, `envFrom.secretRef`), in [`SCALEWAY_SECRET_NAMESPACE`].
pub const SCALEWAY_SECRET: &str = "scaleway-secret";
pub const SCALEWAY_SECRET_NAMESPACE: &str = "kube-system";
/// The field manager of every object `fleetc apply` writes into a cluster with server-side
/// apply: its own, so that a field it stops setting is removed only if nobody else owns it.
pub const FIELD_MANAGER: &str = "fleetc";
/// The field manager of Argo CD's install manifest: not the one of the bootstrap documents,
/// so that fleetc's `argocd-cm` keys never disown the install's defaults (capi-argocd R10).
pub const ARGOCD_INSTALL_FIELD_MANAGER: &str = "fleetc-argocd-install";

/// The `(group, kind)` of the cluster-scoped objects a managed cluster's Cluster API
/// directory (`paths::capi_workload_dir`) holds (the cluster's namespace), and of its
/// namespaced ones below: the Cluster API family writes only these, and the AppProject of the
/// Argo CD Application that delivers the directory permits exactly these (contract test:
/// `tests/contracts.rs`).
pub const WORKLOAD_CLUSTER_KINDS: [(&str, &str); 1] = [("", "Namespace")];
/// See [`WORKLOAD_CLUSTER_KINDS`].
pub const WORKLOAD_KINDS: [(&str, &str); 7] = [
    ("bootstrap.cluster.x-k8s.io", "TalosConfigTemplate"),
    ("cluster.x-k8s.io", "Cluster"),
    ("cluster.x-k8s.io", "MachineDeployment"),
    ("cluster.x-k8s.io", "MachineHealthCheck"),
    ("controlplane.cluster.x-k8s.io", "TalosControlPlane"),
    ("infrastructure.cluster.x-k8s.io", "ProxmoxCluster"),
    ("infrastructure.cluster.x-k8s.io", "ProxmoxMachineTemplate"),
];

/// The first line of every stand-in manifest `fleetc init` writes (its Argo CD install
/// manifest): `fleetc apply --plan` names a vendored file that starts with it as a stand-in,
/// and `fleetc apply` refuses to install it unless `--allow-stand-ins` is given (issue 28).
pub const STAND_IN_MARKER: &str = "# Stand-in written by `fleetc init`";
