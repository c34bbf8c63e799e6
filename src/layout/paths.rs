//! Where each family puts what another stage reads: every path under out/ that a writer
//! (`emit`) and a reader (`apply`, the working copy of the roots, `synth`) share, one small
//! function or constant per fact, so that a change of layout is a change here only and both
//! sides follow it. Paths are relative to the output directory, `/`-separated.

/// `schematics`: the canonical schematic documents.
pub const SCHEMATICS_DIR: &str = "schematics";

/// `schematics/<name>.yaml`: the exact bytes the Image Factory hashes.
pub fn schematic_file(name: &str) -> String {
    format!("{SCHEMATICS_DIR}/{name}.yaml")
}

/// `tofu/modules`: the OpenTofu modules every environment's roots share.
pub const TOFU_MODULES_DIR: &str = "tofu/modules";

/// `tofu/modules/<module>`: one shared module.
pub fn tofu_module_dir(module: &str) -> String {
    format!("{TOFU_MODULES_DIR}/{module}")
}

/// `tofu/<env>`: an environment's roots (R1: a directory, never a workspace).
pub fn tofu_env_dir(env: &str) -> String {
    format!("tofu/{env}")
}

/// `tofu/<env>/<root>` for `root` in [`BOOTSTRAP`], [`CLOUD`], [`CLUSTER`].
pub fn tofu_root(env: &str, root: &str) -> String {
    format!("{}/{root}", tofu_env_dir(env))
}

/// The root that creates the state bucket (local state).
pub const BOOTSTRAP: &str = "bootstrap";
/// The root that builds the infrastructure.
pub const CLOUD: &str = "cloud";
/// The root that builds the Talos clusters on it (R2).
pub const CLUSTER: &str = "cluster";

/// `talos`: the Talos documents of every environment.
pub const TALOS_DIR: &str = "talos";

/// `talos/<env>`: the Talos documents of an environment's clusters.
pub fn talos_env_dir(env: &str) -> String {
    format!("{TALOS_DIR}/{env}")
}

/// `talos/<env>/<cluster>`: the cluster's Talos documents.
pub fn talos_dir(env: &str, cluster: &str) -> String {
    format!("{}/{cluster}", talos_env_dir(env))
}

/// The cluster's common document, relative to [`talos_dir`].
pub const COMMON_DOC: &str = "common.yaml";
/// The control plane's role document, relative to [`talos_dir`].
pub const CONTROL_PLANE_DOC: &str = "controlplane.yaml";
/// The directory of the worker pools' role documents (`workers/<pool>.yaml`), relative to
/// [`talos_dir`].
pub const WORKERS_DIR: &str = "workers";
/// The directory of the nodes' own documents (`nodes/<hostname>.yaml`), relative to
/// [`talos_dir`].
pub const NODES_DIR: &str = "nodes";

/// A pool's role document, relative to [`talos_dir`]: `controlplane.yaml` or
/// `workers/<pool>.yaml`.
pub fn role_doc(control_plane: bool, pool: &str) -> String {
    if control_plane { CONTROL_PLANE_DOC.to_owned() } else { format!("{WORKERS_DIR}/{pool}.yaml") }
}

/// A pool's role document, relative to the output directory: [`role_doc`] under
/// [`talos_dir`].
pub fn talos_role_doc(env: &str, cluster: &str, control_plane: bool, pool: &str) -> String {
    format!("{}/{}", talos_dir(env, cluster), role_doc(control_plane, pool))
}

/// A node's own document, relative to [`talos_dir`]: `nodes/<hostname>.yaml`.
pub fn node_doc(host: &str) -> String {
    format!("{NODES_DIR}/{host}.yaml")
}

/// The patches for one node, most general first: the cluster's common documents, its role's
/// ([`role_doc`]), then the node's own ([`node_doc`]). Only those present in the build are
/// used.
pub fn node_patch_candidates(env: &str, cluster: &str, control_plane: bool, pool: &str, host: &str) -> Vec<String> {
    let dir = talos_dir(env, cluster);
    vec![
        format!("{dir}/{COMMON_DOC}"),
        talos_role_doc(env, cluster, control_plane, pool),
        format!("{dir}/{}", node_doc(host)),
    ]
}

/// The control plane's user patches, relative to [`talos_dir`].
pub const CONTROL_PLANE_PATCHES: &str = "patches/controlplane";
/// The directory of the worker pools' user patches (`patches/workers/<pool>`), relative to
/// [`talos_dir`].
pub const WORKER_PATCHES: &str = "patches/workers";
/// The directory of the named nodes' own patches (`patches/nodes/<hostname>`), relative to
/// [`talos_dir`].
pub const NODE_PATCHES: &str = "patches/nodes";

/// The directory of a pool's user patches, relative to [`talos_dir`] (no trailing `/`).
pub fn pool_patches(control_plane: bool, pool: &str) -> String {
    if control_plane { CONTROL_PLANE_PATCHES.to_owned() } else { format!("{WORKER_PATCHES}/{pool}") }
}

/// The directory of a named node's own patches, relative to [`talos_dir`] (no trailing `/`).
pub fn node_patches(host: &str) -> String {
    format!("{NODE_PATCHES}/{host}")
}

/// The directory of a pool's user patches ([`pool_patches`], with a trailing `/`): its files,
/// in name order, apply after [`node_patch_candidates`] (docs/talos.md, "Patches").
pub fn pool_patch_dir(env: &str, cluster: &str, control_plane: bool, pool: &str) -> String {
    format!("{}/{}/", talos_dir(env, cluster), pool_patches(control_plane, pool))
}

/// The directory of a named node's own patches ([`node_patches`], with a trailing `/`): its
/// files, in name order, apply after [`pool_patch_dir`]'s.
pub fn node_patch_dir(env: &str, cluster: &str, host: &str) -> String {
    format!("{}/{}/", talos_dir(env, cluster), node_patches(host))
}

/// `metal/<env>`: a bare-metal environment's inventories and README.
pub fn metal_env_dir(env: &str) -> String {
    format!("metal/{env}")
}

/// `metal/<env>/<cluster>/machines.yaml`: a bare-metal cluster's inventory
/// ([`super::inventory::MetalInventory`]): its machines, their addresses and how each is recognised
/// in maintenance mode.
pub fn metal_inventory(env: &str, cluster: &str) -> String {
    format!("{}/{cluster}/machines.yaml", metal_env_dir(env))
}

/// `argocd/<env>`: the Argo CD roots of an environment's clusters.
pub fn argocd_env_dir(env: &str) -> String {
    format!("argocd/{env}")
}

/// `argocd/<env>/<cluster>`: one cluster's GitOps root.
pub fn argocd_dir(env: &str, cluster: &str) -> String {
    format!("{}/{cluster}", argocd_env_dir(env))
}

/// `argocd/<env>/<cluster>/bootstrap`: what `kubectl apply` takes, in file-name order (the
/// `argocd-cm` health check, the admin project, then the root application: F7).
pub fn argocd_bootstrap_dir(env: &str, cluster: &str) -> String {
    format!("{}/bootstrap", argocd_dir(env, cluster))
}

/// `capi/<mgmt>`: what a management cluster runs and the workload clusters it manages.
pub fn capi_dir(mgmt: &str) -> String {
    format!("capi/{mgmt}")
}

/// `capi/<mgmt>/providers`: the provider set of a management cluster.
pub fn capi_providers_dir(mgmt: &str) -> String {
    format!("{}/providers", capi_dir(mgmt))
}

/// `capi/<mgmt>/<cluster>`: the objects of one managed cluster. The Argo CD family delivers
/// exactly this directory (`fleet-capi-cluster-<cluster>`, R9).
pub fn capi_workload_dir(mgmt: &str, cluster: &str) -> String {
    format!("{}/{cluster}", capi_dir(mgmt))
}

/// `<dir>/README.md`: the README of an output directory.
pub fn readme(dir: &str) -> String {
    format!("{dir}/README.md")
}
