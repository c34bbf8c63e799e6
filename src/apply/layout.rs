//! Where the emitters put what `apply` reads, and the names it passes to the roots: one small
//! function per fact, so that a change of layout in an emitter is a change here only.
//! Paths are relative to the output directory.

/// `schematics/<name>.yaml`: the exact bytes the Image Factory hashes.
pub fn schematic_file(name: &str) -> String {
    format!("schematics/{name}.yaml")
}

/// `tofu/<env>/<root>` for `root` in `bootstrap`, `cloud`, `cluster`.
pub fn tofu_root(env: &str, root: &str) -> String {
    format!("tofu/{env}/{root}")
}

pub const BOOTSTRAP: &str = "bootstrap";
pub const CLOUD: &str = "cloud";
pub const CLUSTER: &str = "cluster";

/// The cloud root's variable that opens the Talos API switch (R13), false at rest.
pub const TALOS_SWITCH_VAR: &str = "talos_api_open";
/// The cloud root's variable that opens the operator's path to the Kubernetes API.
pub const KUBERNETES_SWITCH_VAR: &str = "kubernetes_api_open";
/// The Scaleway cloud root's variable: the id (`<zone>/<uuid>`) of the reserved public gateway
/// IP it imports (R16); `apply` looks it up by fleet.kdl's `gateway` address.
pub const GATEWAY_IP_VAR: &str = "gateway_ip_id";
/// The cluster root's apply mode variable (R19).
pub const APPLY_MODE_VAR: &str = "apply_mode";
/// The cluster root's map `cluster → path of the decrypted secrets bundle`, which its
/// `import` block of `talos_machine_secrets` reads (R14). The files live in a private
/// temporary directory only while tofu runs.
pub const TALOS_SECRETS_VAR: &str = "talos_secrets_files";
/// The sealed input holding the API key of the Scaleway cloud controller manager and CSI
/// driver (F11): a YAML map with `access_key` and `secret_key`. It never reaches a root, a
/// machine config or state: `fleetc apply` writes it into the cluster as [`SCALEWAY_SECRET`].
pub const SCALEWAY_API_KEY_INPUT: &str = "scaleway-api-key";
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
/// The cloud root's output: per cluster, `control_plane` (a list of `{hostname, address,
/// talos_endpoint}` in order), `workers` (a map by hostname of the same) and optionally
/// `kubernetes_api` (`host:port` of the operator's path to the API).
pub const INVENTORY_OUTPUT: &str = "clusters";

/// A HCL identifier from a fleet name (`edge-1` → `edge_1`).
pub fn ident(name: &str) -> String {
    name.replace('-', "_")
}

/// The cluster root's resource that applies the config of control-plane node `index`
/// (1-based): one resource block per control-plane node (F3).
pub fn control_plane_target(cluster: &str, index: usize) -> String {
    format!("module.{}.talos_machine_configuration_apply.cp_{index}", ident(cluster))
}

/// The cluster root's resource that applies the config of worker `host`.
pub fn worker_target(cluster: &str, host: &str) -> String {
    format!("module.{}.talos_machine_configuration_apply.worker[\"{host}\"]", ident(cluster))
}

/// The cluster root's bootstrap resource (on the first control-plane node).
pub fn bootstrap_target(cluster: &str) -> String {
    format!("module.{}.talos_machine_bootstrap.this", ident(cluster))
}

/// `talos/<env>/<cluster>`: the cluster's Talos documents.
pub fn talos_dir(env: &str, cluster: &str) -> String {
    format!("talos/{env}/{cluster}")
}

/// The patches for one node, most general first: the cluster's common documents, its role's
/// (`controlplane.yaml`, or `workers/<pool>.yaml`), then the node's own. Only those present
/// in the build are used.
pub fn node_patch_candidates(env: &str, cluster: &str, control_plane: bool, pool: &str, host: &str) -> Vec<String> {
    let dir = talos_dir(env, cluster);
    let role = if control_plane { format!("{dir}/controlplane.yaml") } else { format!("{dir}/workers/{pool}.yaml") };
    vec![format!("{dir}/common.yaml"), role, format!("{dir}/nodes/{host}.yaml")]
}

/// The directory of a pool's user patches (`emit::talos::patches`): its files, in name
/// order, apply after [`node_patch_candidates`] (docs/talos.md, "Patches").
pub fn pool_patch_dir(env: &str, cluster: &str, control_plane: bool, pool: &str) -> String {
    let dir = talos_dir(env, cluster);
    if control_plane { format!("{dir}/patches/controlplane/") } else { format!("{dir}/patches/workers/{pool}/") }
}

/// The directory of a named node's own patches (`emit::talos::patches::node_dir`): its
/// files, in name order, apply after [`pool_patch_dir`]'s.
pub fn node_patch_dir(env: &str, cluster: &str, host: &str) -> String {
    format!("{}/patches/nodes/{host}/", talos_dir(env, cluster))
}

/// A bare-metal cluster's inventory (`emit::metal::inventory_path`): its machines, their
/// addresses and how each is recognised in maintenance mode.
pub fn metal_inventory(env: &str, cluster: &str) -> String {
    format!("metal/{env}/{cluster}/machines.yaml")
}

/// `argocd/<env>/<cluster>/bootstrap`: what `kubectl apply` takes, in file-name order (the
/// `argocd-cm` health check, the admin project, then the root application: F7).
pub fn argocd_bootstrap_dir(env: &str, cluster: &str) -> String {
    format!("argocd/{env}/{cluster}/bootstrap")
}

/// The sealed input holding Argo CD's repository credential (username/password or
/// sshPrivateKey, as a YAML map).
pub const ARGOCD_REPO_INPUT: &str = "argocd-repo";
