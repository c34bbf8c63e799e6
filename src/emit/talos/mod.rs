//! Talos machine configuration: per cluster, strategic-merge config patches in Talos's
//! multi-document format, under `talos/<env>/<cluster>/`. Talos's own generators consume them
//! (the OpenTofu talos provider's `config_patches`, the Cluster API Talos providers'
//! `strategicPatches`, `talosctl gen config --config-patch`); they carry no secret: the
//! secrets bundle and credentials join them at apply time (R14, F11).
//!
//! One source of truth, split by who may read it (docs/talos.md):
//!
//! * `common.yaml`: every node of the cluster;
//! * `controlplane.yaml`: the control-plane role and its pool (inline manifests, API server);
//! * `workers/<pool>.yaml`: one per worker pool (its installer, disks, labels, taints);
//! * `nodes/<hostname>.yaml`: one per node of a cluster built by OpenTofu (hostname, static
//!   address). A Cluster API template cannot carry per-node values, so managed clusters get none.
//!
//! [`cluster_documents`] is the pure function behind the files; the Cluster API and OpenTofu
//! emitters call it to reuse the same bytes ([`DocSet::text`]) or paths ([`DocSet::path`]).

pub mod document;
pub mod owned;
pub mod patches;
pub mod runtime;

use std::collections::BTreeMap;

use document::Cluster as ClusterPatch;
use document::*;

use super::{EmitError, EmitResult, HEADER, yaml};
use crate::artifacts::set::ArtifactSet;
use crate::layout::names::TUNNEL_ADDRESS;
use crate::model::backup;
use crate::model::{
    Bytes, Cluster, Environment, Fleet, KeySource, Pool, Provider, Role, Runtime, SystemVolume, VolumeEncryption,
};
use crate::upstream::manifests::{self, CloudController, KUBEPRISM_PORT, KubeProxy};
use crate::upstream::talos::talos_emittable;

/// The alias fleetc gives the one virtio network interface of a Proxmox VM, so that documents
/// name the link without its kernel name (which depends on the PCI slot).
pub const PROXMOX_LINK: &str = "net0";
/// Selects that interface: the only virtio NIC of the VM.
pub const PROXMOX_LINK_MATCH: &str = "link.driver == \"virtio_net\"";

/// One file: its documents and their rendered text.
#[derive(Debug, Clone)]
pub struct DocSet {
    /// Relative to out/, e.g. `talos/staging/main/common.yaml`.
    pub path: String,
    pub docs: Vec<Document>,
    /// The exact bytes written to `path` (header comment, then `---`-separated documents).
    pub text: String,
}

impl DocSet {
    fn new(path: String, docs: Vec<Document>) -> Result<Self, EmitError> {
        let text = yaml::documents(Some(HEADER), &docs).map_err(|e| EmitError(format!("{path}: {e}")))?;
        Ok(DocSet { path, docs, text })
    }
    /// The `v1alpha1` patch of this file, if it has one.
    pub fn v1alpha1(&self) -> Option<&V1Alpha1> {
        self.docs.iter().find_map(Document::as_v1alpha1)
    }
}

/// Every Talos document of one cluster.
#[derive(Debug, Clone)]
pub struct TalosDocs {
    /// `talos/<env>/<cluster>`.
    pub dir: String,
    pub common: DocSet,
    pub controlplane: DocSet,
    /// Per worker pool, by pool name.
    pub workers: BTreeMap<String, DocSet>,
    /// Per node, by hostname; empty for a managed cluster (its nodes come from Cluster API).
    pub nodes: BTreeMap<String, DocSet>,
    /// Which way kube-proxy went, and why (F12).
    pub kube_proxy: KubeProxy,
    /// The user's patches of each pool, by pool name (`cp` for the control plane), in apply
    /// order; their bytes are the patch files' ([`patches`]).
    pub patches: BTreeMap<String, Vec<DocSet>>,
    /// The node level's patches of each named node, by hostname, applied after its pool's
    /// (`patches/nodes/<hostname>/`).
    pub node_patches: BTreeMap<String, Vec<DocSet>>,
}

impl TalosDocs {
    /// Every file, in a stable order.
    pub fn files(&self) -> impl Iterator<Item = &DocSet> {
        [&self.common, &self.controlplane]
            .into_iter()
            .chain(self.workers.values())
            .chain(self.nodes.values())
            .chain(self.patches.values().flatten())
            .chain(self.node_patches.values().flatten())
    }
    /// A pool's own patches, in apply order (empty when it has none).
    pub fn pool_patches(&self, pool: &Pool) -> &[DocSet] {
        self.patches.get(&pool.name.value).map_or(&[], Vec::as_slice)
    }
    /// The role-and-pool file of a pool: `controlplane.yaml` or `workers/<pool>.yaml`.
    pub fn pool(&self, pool: &Pool) -> Option<&DocSet> {
        match pool.role {
            Role::ControlPlane => Some(&self.controlplane),
            Role::Worker => self.workers.get(&pool.name.value),
        }
    }
    /// The files a node's config is patched with, in order: common, its pool, itself.
    pub fn for_node(&self, pool: &Pool, hostname: &str) -> Vec<&DocSet> {
        [Some(&self.common), self.pool(pool), self.nodes.get(hostname)].into_iter().flatten().collect()
    }
}

pub fn emit(fleet: &Fleet) -> EmitResult {
    let mut out = ArtifactSet::new();
    for (env, cluster) in fleet.clusters() {
        out.merge(emit_cluster(fleet, env, cluster)?)?;
    }
    Ok(out)
}

/// One cluster's part of [`emit`] (`emit::all` runs the clusters as jobs of their own and
/// merges them in [`Fleet::clusters`] order, as `emit` does).
pub fn emit_cluster(fleet: &Fleet, env: &Environment, cluster: &Cluster) -> EmitResult {
    let mut out = ArtifactSet::new();
    for f in cluster_documents(fleet, env, cluster)?.files() {
        out.insert(f.path.clone(), f.text.as_bytes())?;
    }
    Ok(out)
}

/// The cluster's Talos documents, from the model only.
pub fn cluster_documents(fleet: &Fleet, env: &Environment, cluster: &Cluster) -> Result<TalosDocs, EmitError> {
    if !talos_emittable(cluster.talos.value) {
        return Err(EmitError(format!(
            "Talos {} of cluster `{}` has no config schema fleetc emits for",
            cluster.talos.value.v(),
            cluster.name
        )));
    }
    let dir = crate::layout::paths::talos_dir(&env.name.value, &cluster.name.value);
    let kube_proxy = match &cluster.cni {
        None => KubeProxy::TalosDefault,
        // `cni "none"`: Talos deploys no CNI (`cni: none` below) and keeps kube-proxy; the
        // user installs the CNI (docs/fleet-language.md).
        Some(cni) if cni.value == crate::model::CNI_NONE => KubeProxy::TalosDefault,
        Some(cni) => match fleet.addons.get(&cni.value) {
            Some(addon) => manifests::kube_proxy(addon),
            None => return Err(EmitError(format!("the CNI add-on `{}` is not declared", cni.value))),
        },
    };
    let ccms = cloud_controllers(fleet, cluster)?;
    let model = crate::upstream::talos::cluster_documents(fleet, env, cluster);
    let common =
        DocSet::new(format!("{dir}/{}", crate::layout::paths::COMMON_DOC), common_docs(env, cluster, &ccms, model))?;
    let mut cp = vec![Document::V1Alpha1(controlplane_patch(fleet, env, cluster, &kube_proxy, &ccms)?)];
    if let (Provider::Proxmox(_), Some(address)) = (&env.provider, &cluster.endpoint.address) {
        cp.push(Document::Layer2Vip(Layer2VipConfig {
            meta: Meta::new("Layer2VIPConfig"),
            name: address.value.to_string(),
            link: PROXMOX_LINK.to_owned(),
        }));
    }
    let metal = matches!(env.provider, Provider::Metal(_));
    cp.extend(volumes(&cluster.control_plane, metal));
    let controlplane = DocSet::new(format!("{dir}/{}", crate::layout::paths::CONTROL_PLANE_DOC), cp)?;
    let mut workers = BTreeMap::new();
    for pool in &cluster.workers {
        let mut docs = vec![Document::V1Alpha1(V1Alpha1 {
            machine: Some(pool_machine(fleet, env, cluster, pool)?),
            cluster: None,
        })];
        docs.extend(volumes(pool, metal));
        workers.insert(
            pool.name.value.clone(),
            DocSet::new(format!("{dir}/{}", crate::layout::paths::role_doc(false, &pool.name.value)), docs)?,
        );
    }
    let mut nodes = BTreeMap::new();
    let mut node_patches = BTreeMap::new();
    if !cluster.is_managed() {
        for pool in cluster.pools() {
            for m in &pool.machines {
                let docs = node_docs(env, cluster, pool, m);
                nodes.insert(
                    m.hostname.clone(),
                    DocSet::new(format!("{dir}/{}", crate::layout::paths::node_doc(&m.hostname)), docs)?,
                );
                if !m.settings.patches.is_empty() {
                    node_patches.insert(m.hostname.clone(), patches::node_patches(&dir, pool, m, metal)?);
                }
            }
        }
    }
    let mut user_patches = BTreeMap::new();
    for pool in cluster.pools().filter(|p| !p.patches.is_empty()) {
        user_patches.insert(pool.name.value.clone(), patches::pool_patches(&dir, pool, metal)?);
    }
    Ok(TalosDocs { dir, common, controlplane, workers, nodes, kube_proxy, patches: user_patches, node_patches })
}

/// The certificate SANs of the API server: the API endpoint and the gateway (R16), then the
/// user's own, without repeats.
pub fn cert_sans(env: &Environment, cluster: &Cluster) -> Vec<String> {
    sans_with(env, cluster, None)
}

/// The certificate SANs of machines (the Talos API's certificate): [`cert_sans`], and on
/// Scaleway the loopback address the Talos API tunnel listens on (R13,
/// `layout::names::TUNNEL_ADDRESS`), which talosctl and the talos provider dial and verify
/// the certificate against. Talos adds 127.0.0.1 itself from 1.13 on (siderolabs/talos v1.13.9
/// `internal/app/machined/pkg/controllers/secrets/api_cert_sans.go` l.124) but not in 1.12
/// (v1.12.6, same file l.121-122: the configured SANs and the node's addresses only).
pub fn machine_cert_sans(env: &Environment, cluster: &Cluster) -> Vec<String> {
    let tunnel = matches!(env.provider, crate::model::Provider::Scaleway(_)).then_some(TUNNEL_ADDRESS);
    sans_with(env, cluster, tunnel)
}

fn sans_with(env: &Environment, cluster: &Cluster, tunnel: Option<&str>) -> Vec<String> {
    let mut sans = vec![cluster.endpoint.host()];
    if let Some(gw) = &env.gateway {
        sans.push(gw.value.to_string());
    }
    sans.extend(tunnel.map(str::to_owned));
    for s in &cluster.cert_sans {
        if !sans.contains(&s.value) {
            sans.push(s.value.clone());
        }
    }
    sans
}

/// The cloud controller managers the cluster's embedded add-ons run, in `addons` order. When
/// there is one, every node's kubelet runs with `--cloud-provider=external` (common.yaml), so
/// that nodes are tainted `uninitialized` until the manager sets their providerID (R25, F8).
pub fn cloud_controllers(fleet: &Fleet, cluster: &Cluster) -> Result<Vec<CloudController>, EmitError> {
    let mut out = Vec::new();
    for name in &cluster.addons {
        let addon = fleet
            .addons
            .get(&name.value)
            .ok_or_else(|| EmitError(format!("add-on `{}` is not declared", name.value)))?;
        out.extend(manifests::cloud_controllers_of(&addon.manifest.objects));
    }
    Ok(out)
}

/// The Talos roles a cloud controller manager that reads platform metadata gets
/// (siderolabs/talos-cloud-controller-manager v1.11.0 `docs/install.md`).
pub const TALOS_CCM_ROLES: &[&str] = &["os:reader"];

/// `machine.features.kubernetesTalosAPIAccess` for the control plane: the namespaces of the
/// cloud controller managers that need the Talos API and of the cluster's backup job
/// ([`backup::TalosApiAccess::of`], the one place its namespace and role are decided), with
/// the roles of each; `None` when nothing needs the Talos API. Talos allows every listed role
/// to every listed namespace (siderolabs/talos v1.13.9
/// `internal/app/machined/pkg/controllers/kubeaccess/serviceaccount/crd_controller.go`
/// l.345-380): the lists are unions, sorted.
pub fn talos_api_access(ccms: &[CloudController], cluster: &Cluster) -> Option<TalosApiAccess> {
    let mut namespaces: Vec<String> =
        ccms.iter().filter(|c| c.needs_talos_api()).map(|c| c.namespace.clone()).collect();
    let mut roles: Vec<String> = Vec::new();
    if !namespaces.is_empty() {
        roles.extend(TALOS_CCM_ROLES.iter().map(|r| (*r).to_owned()));
    }
    if let Some(access) = backup::TalosApiAccess::of(cluster) {
        namespaces.push(access.namespace.to_owned());
        roles.extend(access.roles.iter().map(|r| (*r).to_owned()));
    }
    namespaces.sort();
    namespaces.dedup();
    roles.sort();
    roles.dedup();
    (!namespaces.is_empty()).then_some(TalosApiAccess {
        enabled: true,
        allowed_roles: roles,
        allowed_kubernetes_namespaces: namespaces,
    })
}

fn common_docs(
    env: &Environment,
    cluster: &Cluster,
    ccms: &[CloudController],
    model: crate::upstream::Minor,
) -> Vec<Document> {
    let mut sysctls = BTreeMap::new();
    if cluster.runtimes.iter().any(|r| r.value == Runtime::Gvisor) {
        let (k, v) = runtime::MAX_USER_NAMESPACES;
        sysctls.insert(k.to_owned(), v.to_owned());
    }
    let machine = Machine {
        cert_sans: machine_cert_sans(env, cluster),
        kubelet: Some(Kubelet {
            node_ip: Some(NodeIp { valid_subnets: vec![env.network.value.to_string()] }),
            extra_config: None,
        }),
        features: Some(Features {
            kube_prism: Some(KubePrism { enabled: true, port: KUBEPRISM_PORT }),
            kubernetes_talos_api_access: None,
        }),
        sysctls,
        ..Machine::default()
    };
    let cluster_cfg = ClusterPatch {
        external_cloud_provider: (!ccms.is_empty()).then_some(ExternalCloudProvider { enabled: true }),
        network: Some(Network {
            cni: cluster.cni.as_ref().map(|_| Cni { name: "none".to_owned() }),
            pod_subnets: vec![cluster.pod_cidr.value.to_string()],
            service_subnets: vec![cluster.service_cidr.value.to_string()],
        }),
        discovery: Some(Discovery { enabled: cluster.discovery.value }),
        ..ClusterPatch::default()
    };
    let mut docs = vec![Document::V1Alpha1(V1Alpha1 { machine: Some(machine), cluster: Some(cluster_cfg) })];
    if let Provider::Proxmox(_) = env.provider {
        docs.push(Document::LinkAlias(LinkAliasConfig {
            meta: Meta::new("LinkAliasConfig"),
            name: PROXMOX_LINK.to_owned(),
            selector: LinkSelector { expr: PROXMOX_LINK_MATCH.to_owned() },
        }));
    }
    docs.extend(model_defaults(model));
    docs
}

/// The documents `talosctl gen config` writes for a new cluster of the model's contract that
/// carry a behaviour of their own (docs/talos.md, "The 1.14 model"): from 1.14, workload
/// isolation and a weekly filesystem trim. The documents 1.14 re-homes v1alpha1 fields into
/// (`UnattendedInstallConfig`, `KubeletConfig`, …) are not: fleetc writes those fields in
/// v1alpha1, under the row's 1.13 contract. Nor is the generator's EPHEMERAL `mount.secure:
/// true`: it is the value an absent field already means (`block/volume_config.go` l.538-545).
pub fn model_defaults(model: crate::upstream::Minor) -> Vec<Document> {
    if model < (1, 14) {
        return Vec::new();
    }
    vec![
        Document::SecurityProfile(SecurityProfileConfig {
            meta: Meta::new("SecurityProfileConfig"),
            workload_isolation: true,
        }),
        Document::FilesystemTrim(FilesystemTrimConfig {
            meta: Meta::new("FilesystemTrimConfig"),
            interval: FILESYSTEM_TRIM_INTERVAL.to_owned(),
        }),
    ]
}

/// `constants.DefaultFilesystemTrimInterval` (7 × 24 h) as Go's yaml prints a `time.Duration`.
pub const FILESYSTEM_TRIM_INTERVAL: &str = "168h0m0s";

fn controlplane_patch(
    fleet: &Fleet,
    env: &Environment,
    cluster: &Cluster,
    kube_proxy: &KubeProxy,
    ccms: &[CloudController],
) -> Result<V1Alpha1, EmitError> {
    let mut inline = Vec::new();
    for name in &cluster.addons {
        let addon = fleet
            .addons
            .get(&name.value)
            .ok_or_else(|| EmitError(format!("add-on `{}` is not declared", name.value)))?;
        inline.push(InlineManifest { name: addon.name.value.clone(), contents: addon.manifest.content.clone() });
    }
    let mut runtimes: Vec<Runtime> = cluster.runtimes.iter().map(|r| r.value).collect();
    runtimes.sort();
    runtimes.dedup();
    for r in runtimes {
        let contents = yaml::to_yaml(&runtime::runtime_class(r)).map_err(|e| EmitError(e.to_string()))?;
        inline.push(InlineManifest { name: runtime::manifest_name(r), contents });
    }
    let cluster_cfg = ClusterPatch {
        // `endpoint port=`: the API server listens where every node and kubeconfig expects it
        // (docs/fleet-language.md; refused on Scaleway, whose load balancer fixes 6443).
        control_plane: (cluster.endpoint.port != crate::model::DEFAULT_API_PORT)
            .then_some(ControlPlane { local_api_server_port: cluster.endpoint.port }),
        api_server: Some(ApiServer { cert_sans: cert_sans(env, cluster) }),
        proxy: match kube_proxy {
            KubeProxy::TalosDefault => None,
            k => Some(Proxy { disabled: k.disabled() }),
        },
        inline_manifests: inline,
        // With no worker pool, the control plane is where workloads run: Talos otherwise
        // taints it `node-role.kubernetes.io/control-plane:NoSchedule`
        // (siderolabs/talos v1.13.9 `controllers/k8s/node_taint_spec.go`).
        allow_scheduling_on_control_planes: cluster.workers.is_empty().then_some(true),
        // etcd on the cluster network, as the kubelet's node IP (R18): a multi-homed
        // control-plane node (bond, VLAN, second NIC, a cloud's public address) would
        // otherwise advertise whichever address sorts first (talos-3 M12). Not on a cluster
        // Cluster API builds: its VMs have the one NIC, and a changed control-plane config
        // would roll every control-plane machine for nothing.
        etcd: (!cluster.is_managed()).then(|| Etcd { advertised_subnets: vec![env.network.value.to_string()] }),
        ..ClusterPatch::default()
    };
    let mut machine = pool_machine(fleet, env, cluster, &cluster.control_plane)?;
    if let Some(access) = talos_api_access(ccms, cluster) {
        // Allowed on control-plane machines only (`v1alpha1_validation.go`).
        machine.features = Some(Features { kube_prism: None, kubernetes_talos_api_access: Some(access) });
    }
    Ok(V1Alpha1 { machine: Some(machine), cluster: Some(cluster_cfg) })
}

/// A size as a CEL constant of Talos's disk selectors: `100u * GB`, `8u * GiB`, `1234u`.
pub fn cel_size(b: Bytes) -> String {
    let text = b.to_string();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    match text.split_at(digits) {
        (n, "B") => format!("{n}u"),
        (n, unit) => format!("{n}u * {unit}"),
    }
}

/// The install disk, chosen by size and never by device path (R15), on every provider alike
/// (R27). A machine with a system disk and a data disk installs on the one smaller than the
/// ephemeral minimum. A machine Cluster API builds has one disk, the boot volume, which holds
/// EPHEMERAL too: it is the disk smaller than its own size plus 1 GiB, in GiB because Proxmox
/// sizes it in GiB ([`Pool::boot_volume_size_g`]) while Talos reads `GB` as 10^9 bytes
/// (siderolabs/talos v1.13.9 `pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`,
/// `InstallDiskSizeMatcher`, `humanize.ParseBytes`). One selector per machine: Talos cannot
/// merge two size matchers (`pkg/machinery/config/merge/merge.go`, "not settable").
pub fn install_disk_size(cluster: &Cluster, pool: &Pool) -> String {
    if cluster.is_managed() {
        format!("< {}", Bytes((pool.boot_volume_size_g() + 1) * Bytes::GIB))
    } else {
        format!("< {}", pool.ephemeral_min_size.value)
    }
}

/// The EPHEMERAL volume's disk as the pool's document states it. On a VM, the data disk
/// fleetc creates: not the system disk, and at least the pool's minimum (F5, R15). On bare
/// metal, the system disk (`system_disk`, Talos's own default for EPHEMERAL,
/// siderolabs/talos v1.13.9 `internal/app/machined/pkg/controllers/block/internal/volumes/
/// volumeconfig/ephemeral.go`): fleetc made no disk there, so a machine's second disk is
/// only what its `ephemeral-disk` names ([`machine_ephemeral_match`], in its own document).
pub fn ephemeral_match(pool: &Pool, metal: bool) -> String {
    if metal {
        return "system_disk".to_owned();
    }
    format!("!system_disk && disk.size >= {}", cel_size(pool.ephemeral_min_size.value))
}

/// A bare-metal machine's `ephemeral-disk` as the CEL of a `VolumeConfig` selector: off the
/// system disk, never a USB disk (a boot stick is an ordinary disk of transport `usb`:
/// `DiskSpec.Transport`, siderolabs/talos v1.13.9 and v1.12.6
/// `pkg/machinery/resources/block/disk.go`, field `transport` of `DiskSpec` in
/// `api/resource/definitions/block/block.proto`), and the declared identity matched the way
/// Talos matches an install disk's: `glob(pattern, disk.<field>)` for `serial`, `wwid`,
/// `model` and `bus_path`, `disk.size <op> <bytes>` for `size` (v1alpha1_provider.go
/// `InstallConfig.DiskMatchExpression`; `glob` is a function of the disk-locator CEL
/// environment, `pkg/machinery/cel/celenv/celenv.go` `DiskLocator`, at both tags).
pub fn machine_ephemeral_match(disk: &crate::model::InstallDisk) -> String {
    let mut terms = vec!["!system_disk".to_owned(), "disk.transport != \"usb\"".to_owned()];
    terms.extend(disk_identity_cel(disk));
    terms.join(" && ")
}

/// The CEL terms that select `disk` by what it declares, in Talos's order.
pub fn disk_identity_cel(disk: &crate::model::InstallDisk) -> Vec<String> {
    let mut terms = Vec::new();
    if let Some(size) = &disk.size
        && let Ok(m) = size.value.parse::<crate::model::values::SizeMatch>()
    {
        use crate::model::values::SizeOp;
        let op = match m.op {
            SizeOp::Bare | SizeOp::Eq => "==",
            SizeOp::Ge => ">=",
            SizeOp::Le => "<=",
            SizeOp::Gt => ">",
            SizeOp::Lt => "<",
        };
        terms.push(format!("disk.size {op} {}u", m.bytes));
    }
    for (field, v) in
        [("wwid", &disk.wwid), ("model", &disk.model), ("serial", &disk.serial), ("bus_path", &disk.bus_path)]
    {
        if let Some(v) = v {
            terms.push(format!("glob({}, disk.{field})", cel_string(&v.value)));
        }
    }
    if let Some(dev) = &disk.device {
        terms.push(format!("disk.dev_path == {}", cel_string(&dev.value)));
    }
    terms
}

/// A CEL string literal: double-quoted, with `\` and `"` escaped.
fn cel_string(v: &str) -> String {
    format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
}

fn pool_machine(fleet: &Fleet, env: &Environment, cluster: &Cluster, pool: &Pool) -> Result<Machine, EmitError> {
    let schematic = fleet
        .schematic(&pool.schematic.value)
        .ok_or_else(|| EmitError(format!("schematic `{}` of pool `{}` is not declared", pool.schematic, pool.name)))?;
    let image = fleet
        .installer(env, cluster, pool)
        .ok_or_else(|| EmitError(format!("no installer for pool `{}` (schematic `{}`)", pool.name, schematic.name)))?;
    Ok(Machine {
        install: Some(Install {
            image,
            disk: None,
            // A pool with a machine of its own disk states every machine's disk in the
            // machine's document: Talos merges two selectors field by field into one that
            // asks for both (`pkg/machinery/config/merge/merge.go`).
            disk_selector: (!own_install_disks(pool)).then(|| InstallDiskSelector {
                size: Some(install_disk_size(cluster, pool)),
                ..InstallDiskSelector::default()
            }),
        }),
        node_labels: pool.labels.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect(),
        node_annotations: pool.annotations.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect(),
        node_taints: node_taints(&pool.taints),
        kubelet: registration(pool, &pool.taints),
        ..Machine::default()
    })
}

/// `machine.nodeTaints`: each taint as `key: value:Effect` (or `key: Effect`).
fn node_taints(taints: &[crate::model::Taint]) -> BTreeMap<String, String> {
    taints
        .iter()
        .map(|t| {
            let v = match &t.value {
                Some(v) => format!("{v}:{}", t.effect.as_str()),
                None => t.effect.as_str().to_owned(),
            };
            (t.key.clone(), v)
        })
        .collect()
}

/// A worker's taints also go to the kubelet, which creates its Node with them: Talos applies
/// `machine.nodeTaints` to a worker with the kubelet's credentials after it registered, and the
/// NodeRestriction admission plugin refuses a node that changes its own taints, with the
/// labels and annotations of the same update (siderolabs/talos v1.13.9
/// `internal/app/machined/pkg/controllers/k8s/node_apply.go`: a worker's client is
/// `NewClientFromKubeletKubeconfig`, and `syncOnce` sends labels, annotations and taints in one
/// `Update`; kubernetes v1.35.0 `plugin/pkg/admission/noderestriction/admission.go`). A taint
/// the Node registered with is one `ApplyTaints` finds equal and takes ownership of, without
/// changing it. Control-plane nodes use an administrator's credentials and need none of this.
/// A machine's own taints are on top of its pool's (Talos appends the two lists,
/// `merge/merge.go`), and a machine never restates its pool's taint key (`check`).
fn registration(pool: &Pool, taints: &[crate::model::Taint]) -> Option<Kubelet> {
    (pool.role == Role::Worker && !taints.is_empty()).then(|| Kubelet {
        node_ip: None,
        extra_config: Some(KubeletExtraConfig {
            register_with_taints: taints
                .iter()
                .map(|t| RegisterTaint {
                    key: t.key.clone(),
                    value: t.value.clone(),
                    effect: t.effect.as_str().to_owned(),
                })
                .collect(),
        }),
    })
}

/// The pool's volume documents: STATE when it is encrypted (encryption only: STATE takes no
/// provisioning), then EPHEMERAL, on its data disk and encrypted when the pool says so.
fn volumes(pool: &Pool, metal: bool) -> Vec<Document> {
    let mut docs = Vec::new();
    if let Some(e) = pool.disk.volume(SystemVolume::State) {
        docs.push(Document::Volume(VolumeConfig {
            meta: Meta::new("VolumeConfig"),
            name: SystemVolume::State.label().to_owned(),
            provisioning: None,
            encryption: encryption(pool, e),
        }));
    }
    docs.push(Document::Volume(VolumeConfig {
        meta: Meta::new("VolumeConfig"),
        name: SystemVolume::Ephemeral.label().to_owned(),
        provisioning: Some(Provisioning {
            disk_selector: DiskSelector { expr: ephemeral_match(pool, metal) },
            grow: true,
        }),
        encryption: pool.disk.volume(SystemVolume::Ephemeral).and_then(|e| encryption(pool, e)),
    }));
    docs
}

/// A volume's `encryption`: LUKS2 with one key in slot 0. A static key is never written
/// (`check::disk` refuses it on every consumer that would keep it: the passphrase would sit in
/// out/, a tofu state or a management cluster), so it yields `None` here.
pub fn encryption(pool: &Pool, e: &VolumeEncryption) -> Option<Encryption> {
    let mut key = EncryptionKey { slot: 0, ..EncryptionKey::default() };
    match e.key.value {
        KeySource::Tpm => {
            key.tpm = Some(TpmKey { check_secureboot_status_on_enroll: pool.disk.secure_boot() });
            // Talos's advice for a TPM key on a volume other than STATE (talos-3 m7).
            key.lock_to_state = (e.volume.value != SystemVolume::State).then_some(true);
        }
        KeySource::NodeId => key.node_id = Some(Empty {}),
        KeySource::Kms => key.kms = Some(KmsKey { endpoint: e.endpoint.as_ref()?.value.clone() }),
        KeySource::Static => return None,
    }
    Some(Encryption { provider: "luks2", keys: vec![key] })
}

/// Whether some machine of the pool has an install disk of its own (`install-disk`): then
/// every machine's document states its disk, and the pool's states none.
pub fn own_install_disks(pool: &Pool) -> bool {
    pool.machines.iter().any(|m| m.settings.install_disk.is_some())
}

/// A machine's install disk, as its own document states it (`machine.install`).
fn machine_install(cluster: &Cluster, pool: &Pool, m: &crate::model::Machine) -> Install {
    let sel = match &m.settings.install_disk {
        None => InstallDiskSelector { size: Some(install_disk_size(cluster, pool)), ..InstallDiskSelector::default() },
        Some(d) => {
            let v = |f: &Option<crate::model::Spanned<String>>| f.as_ref().map(|x| x.value.clone());
            InstallDiskSelector {
                size: v(&d.size),
                model: v(&d.model),
                serial: v(&d.serial),
                wwid: v(&d.wwid),
                bus_path: v(&d.bus_path),
            }
        }
    };
    let device = m.settings.install_disk.as_ref().and_then(|d| d.device.as_ref()).map(|d| d.value.clone());
    let empty = sel == InstallDiskSelector::default();
    Install { image: String::new(), disk: device, disk_selector: (!empty).then_some(sel) }
}

/// The Talos documents of a machine's network links (`link`, `bond`, `vlan`).
fn link_docs(links: &[crate::model::NetLink]) -> Vec<Document> {
    use crate::model::LinkKind;
    links
        .iter()
        .map(|l| {
            let addresses = l.addresses.iter().map(|a| Address { address: a.value.to_string() }).collect();
            let routes = l
                .routes
                .iter()
                .map(|r| Route {
                    destination: r.to.as_ref().map(|t| t.value.to_string()),
                    gateway: r.gateway.value.to_string(),
                })
                .collect();
            match &l.kind {
                LinkKind::Link => Document::Link(LinkConfig {
                    meta: Meta::new("LinkConfig"),
                    name: l.name.value.clone(),
                    addresses,
                    routes,
                }),
                LinkKind::Bond { mode, links } => Document::Bond(BondConfig {
                    meta: Meta::new("BondConfig"),
                    name: l.name.value.clone(),
                    links: links.iter().map(|x| x.value.clone()).collect(),
                    bond_mode: mode.value.clone(),
                    // Talos's own example values for an 802.3ad bond (siderolabs/talos
                    // v1.13.9 `config/types/network/bond.go`, `exampleBondConfigV1Alpha1`).
                    miimon: (mode.value == "802.3ad").then_some(100),
                    updelay: (mode.value == "802.3ad").then_some(200),
                    downdelay: (mode.value == "802.3ad").then_some(200),
                    addresses,
                    routes,
                }),
                LinkKind::Vlan { parent, id } => Document::Vlan(VlanConfig {
                    meta: Meta::new("VLANConfig"),
                    name: l.name.value.clone(),
                    vlan_id: id.value,
                    parent: parent.value.clone(),
                    addresses,
                    routes,
                }),
            }
        })
        .collect()
}

/// One machine's own documents (`nodes/<hostname>.yaml`): its install disk when its pool has
/// machines of their own disk, its own labels and taints, its hostname, its links (the
/// provider's default link when it declares none) and its DNS servers.
fn node_docs(env: &Environment, cluster: &Cluster, pool: &Pool, m: &crate::model::Machine) -> Vec<Document> {
    let settings = &m.settings;
    let mut docs = Vec::new();
    let install = own_install_disks(pool).then(|| machine_install(cluster, pool, m));
    if install.is_some() || !settings.labels.is_empty() || !settings.taints.is_empty() {
        docs.push(Document::V1Alpha1(V1Alpha1 {
            machine: Some(Machine {
                install,
                node_labels: settings.labels.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect(),
                node_taints: node_taints(&settings.taints),
                kubelet: registration(pool, &settings.taints),
                ..Machine::default()
            }),
            cluster: None,
        }));
    }
    docs.push(Document::Hostname(HostnameConfig {
        meta: Meta::new("HostnameConfig"),
        hostname: m.hostname.clone(),
        auto: "off",
    }));
    // A bare-metal machine's own EPHEMERAL disk: Talos merges this document into its pool's
    // by name, and the selector replaces the pool's (`pkg/machinery/cel/cel.go`
    // `Expression.Merge`, siderolabs/talos v1.13.9).
    if let (Provider::Metal(_), Some(disk)) = (&env.provider, &settings.ephemeral_disk) {
        docs.push(Document::Volume(VolumeConfig {
            meta: Meta::new("VolumeConfig"),
            name: SystemVolume::Ephemeral.label().to_owned(),
            provisioning: Some(Provisioning {
                disk_selector: DiskSelector { expr: machine_ephemeral_match(disk) },
                grow: true,
            }),
            encryption: None,
        }));
    }
    if !settings.links.is_empty() {
        docs.extend(link_docs(&settings.links));
        // On bare metal the API endpoint is a shared address that the control-plane nodes
        // hold in turn, on the link that carries each one's own address (docs/metal.md); not
        // when it is the one control-plane node's own address (`Cluster::endpoint_node`), nor
        // for an endpoint by name, which the user's DNS or load balancer resolves.
        if let (Provider::Metal(_), crate::model::Role::ControlPlane, Some(a), Some(endpoint)) =
            (&env.provider, pool.role, &m.address, &cluster.endpoint.address)
            && cluster.endpoint_node(env).is_none()
            && let Some(link) = settings.links.iter().find(|l| l.addresses.iter().any(|x| x.value.addr == a.value))
        {
            docs.push(Document::Layer2Vip(Layer2VipConfig {
                meta: Meta::new("Layer2VIPConfig"),
                name: endpoint.value.to_string(),
                link: link.name.value.clone(),
            }));
        }
        if !settings.nameservers.is_empty() {
            docs.push(resolver(settings.nameservers.iter().map(|d| d.value)));
        }
        return docs;
    }
    let address = m.address.as_ref().map(|a| a.value);
    if let (Provider::Proxmox(p), Some(ip)) = (&env.provider, address) {
        docs.push(Document::Link(LinkConfig {
            meta: Meta::new("LinkConfig"),
            name: PROXMOX_LINK.to_owned(),
            addresses: vec![Address { address: format!("{ip}/{}", env.network.value.prefix) }],
            routes: vec![Route { destination: None, gateway: p.gateway.value.to_string() }],
        }));
        if settings.nameservers.is_empty() && !p.dns.is_empty() {
            docs.push(resolver(p.dns.iter().map(|d| d.value)));
        }
    }
    if !settings.nameservers.is_empty() {
        docs.push(resolver(settings.nameservers.iter().map(|d| d.value)));
    }
    docs
}

fn resolver(servers: impl Iterator<Item = std::net::Ipv4Addr>) -> Document {
    Document::Resolver(ResolverConfig {
        meta: Meta::new("ResolverConfig"),
        nameservers: servers.map(|d| Nameserver { address: d.to_string() }).collect(),
    })
}

#[cfg(test)]
mod tests;
