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

pub mod addons;
pub mod document;
pub mod patches;
pub mod runtime;

use std::collections::BTreeMap;

pub use addons::KubeProxy;
use document::Cluster as ClusterPatch;
use document::*;

use super::{EmitError, EmitResult, HEADER, yaml};
use crate::artifacts::ArtifactSet;
use crate::model::{Bytes, Cluster, Environment, Fleet, Pool, Provider, Role, Runtime, Version};

/// The Talos minors whose config schema fleetc emits for. Talos 1.14 moves most cluster
/// settings out of `v1alpha1` into new documents and drops the `reboot` apply mode (F10):
/// `check::talos` refuses it until fleetc writes those documents.
pub const SUPPORTED_MINORS: &[(u32, u32)] = &[(1, 12), (1, 13)];

pub fn supported(talos: Version) -> bool {
    SUPPORTED_MINORS.contains(&talos.minor_version())
}

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
}

impl TalosDocs {
    /// Every file, in a stable order.
    pub fn files(&self) -> impl Iterator<Item = &DocSet> {
        [&self.common, &self.controlplane]
            .into_iter()
            .chain(self.workers.values())
            .chain(self.nodes.values())
            .chain(self.patches.values().flatten())
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
        let docs = cluster_documents(fleet, env, cluster)?;
        for f in docs.files() {
            out.insert(f.path.clone(), f.text.as_bytes())?;
        }
    }
    Ok(out)
}

/// The cluster's Talos documents, from the model only.
pub fn cluster_documents(fleet: &Fleet, env: &Environment, cluster: &Cluster) -> Result<TalosDocs, EmitError> {
    if !supported(cluster.talos.value) {
        return Err(EmitError(format!(
            "Talos {} of cluster `{}` has no config schema fleetc emits for",
            cluster.talos.value.v(),
            cluster.name
        )));
    }
    let dir = format!("talos/{}/{}", env.name, cluster.name);
    let kube_proxy = match &cluster.cni {
        None => KubeProxy::TalosDefault,
        // `cni "none"`: Talos deploys no CNI (`cni: none` below) and keeps kube-proxy; the
        // user installs the CNI (docs/fleet-language.md).
        Some(cni) if cni.value == crate::model::CNI_NONE => KubeProxy::TalosDefault,
        Some(cni) => match fleet.addons.get(&cni.value) {
            Some(addon) => addons::kube_proxy(addon),
            None => return Err(EmitError(format!("the CNI add-on `{}` is not declared", cni.value))),
        },
    };
    let ccms = cloud_controllers(fleet, cluster)?;
    let common = DocSet::new(format!("{dir}/common.yaml"), common_docs(env, cluster, &ccms))?;
    let mut cp = vec![Document::V1Alpha1(controlplane_patch(fleet, env, cluster, &kube_proxy, &ccms)?)];
    if let Provider::Proxmox(_) = env.provider {
        cp.push(Document::Layer2Vip(Layer2VipConfig {
            meta: Meta::new("Layer2VIPConfig"),
            name: cluster.endpoint.address.value.to_string(),
            link: PROXMOX_LINK.to_owned(),
        }));
    }
    cp.push(ephemeral_volume(&cluster.control_plane));
    let controlplane = DocSet::new(format!("{dir}/controlplane.yaml"), cp)?;
    let mut workers = BTreeMap::new();
    for pool in &cluster.workers {
        let docs = vec![
            Document::V1Alpha1(V1Alpha1 { machine: Some(pool_machine(fleet, env, cluster, pool)?), cluster: None }),
            ephemeral_volume(pool),
        ];
        workers.insert(pool.name.value.clone(), DocSet::new(format!("{dir}/workers/{}.yaml", pool.name), docs)?);
    }
    let mut nodes = BTreeMap::new();
    if !cluster.is_managed() {
        for pool in cluster.pools() {
            for m in &pool.machines {
                let docs = node_docs(env, &m.hostname, m.address.as_ref().map(|a| a.value));
                nodes.insert(m.hostname.clone(), DocSet::new(format!("{dir}/nodes/{}.yaml", m.hostname), docs)?);
            }
        }
    }
    let mut user_patches = BTreeMap::new();
    for pool in cluster.pools().filter(|p| !p.patches.is_empty()) {
        user_patches.insert(pool.name.value.clone(), patches::pool_patches(&dir, pool)?);
    }
    Ok(TalosDocs { dir, common, controlplane, workers, nodes, kube_proxy, patches: user_patches })
}

/// The certificate SANs of machines and of the API server: the API endpoint and the gateway
/// through which the Talos API is reached (R16), then the user's own, without repeats.
pub fn cert_sans(env: &Environment, cluster: &Cluster) -> Vec<String> {
    let mut sans = vec![cluster.endpoint.address.value.to_string()];
    if let Some(gw) = &env.gateway {
        sans.push(gw.value.to_string());
    }
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
pub fn cloud_controllers(fleet: &Fleet, cluster: &Cluster) -> Result<Vec<addons::CloudController>, EmitError> {
    let mut out = Vec::new();
    for name in &cluster.addons {
        let addon = fleet
            .addons
            .get(&name.value)
            .ok_or_else(|| EmitError(format!("add-on `{}` is not declared", name.value)))?;
        out.extend(addons::cloud_controllers_of(&addon.manifest.objects));
    }
    Ok(out)
}

/// The Talos roles a cloud controller manager that reads platform metadata gets
/// (siderolabs/talos-cloud-controller-manager v1.11.0 `docs/install.md`).
pub const TALOS_CCM_ROLES: &[&str] = &["os:reader"];

/// `machine.features.kubernetesTalosAPIAccess` for the control plane: the namespaces of the
/// cloud controller managers that need the Talos API, `None` when none does.
pub fn talos_api_access(ccms: &[addons::CloudController]) -> Option<TalosApiAccess> {
    let mut namespaces: Vec<String> =
        ccms.iter().filter(|c| c.needs_talos_api()).map(|c| c.namespace.clone()).collect();
    namespaces.sort();
    namespaces.dedup();
    (!namespaces.is_empty()).then(|| TalosApiAccess {
        enabled: true,
        allowed_roles: TALOS_CCM_ROLES.iter().map(|r| (*r).to_owned()).collect(),
        allowed_kubernetes_namespaces: namespaces,
    })
}

fn common_docs(env: &Environment, cluster: &Cluster, ccms: &[addons::CloudController]) -> Vec<Document> {
    let mut sysctls = BTreeMap::new();
    if cluster.runtimes.iter().any(|r| r.value == Runtime::Gvisor) {
        let (k, v) = runtime::MAX_USER_NAMESPACES;
        sysctls.insert(k.to_owned(), v.to_owned());
    }
    let machine = Machine {
        cert_sans: cert_sans(env, cluster),
        kubelet: Some(Kubelet { node_ip: NodeIp { valid_subnets: vec![env.network.value.to_string()] } }),
        features: Some(Features {
            kube_prism: Some(KubePrism { enabled: true, port: addons::KUBEPRISM_PORT }),
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
    docs
}

fn controlplane_patch(
    fleet: &Fleet,
    env: &Environment,
    cluster: &Cluster,
    kube_proxy: &KubeProxy,
    ccms: &[addons::CloudController],
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
        ..ClusterPatch::default()
    };
    let mut machine = pool_machine(fleet, env, cluster, &cluster.control_plane)?;
    if let Some(access) = talos_api_access(ccms) {
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

/// The EPHEMERAL volume's disk: not the system disk, and at least the pool's minimum (F5, R15).
pub fn ephemeral_match(pool: &Pool) -> String {
    format!("!system_disk && disk.size >= {}", cel_size(pool.ephemeral_min_size.value))
}

fn pool_machine(fleet: &Fleet, env: &Environment, cluster: &Cluster, pool: &Pool) -> Result<Machine, EmitError> {
    let schematic = fleet
        .schematic(&pool.schematic.value)
        .ok_or_else(|| EmitError(format!("schematic `{}` of pool `{}` is not declared", pool.schematic, pool.name)))?;
    let taints = pool
        .taints
        .iter()
        .map(|t| {
            let v = match &t.value {
                Some(v) => format!("{v}:{}", t.effect.as_str()),
                None => t.effect.as_str().to_owned(),
            };
            (t.key.clone(), v)
        })
        .collect();
    Ok(Machine {
        install: Some(Install {
            image: schematic.installer(env.platform(), cluster.talos.value),
            disk_selector: Some(InstallDiskSelector { size: install_disk_size(cluster, pool) }),
        }),
        node_labels: pool.labels.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect(),
        node_taints: taints,
        ..Machine::default()
    })
}

fn ephemeral_volume(pool: &Pool) -> Document {
    Document::Volume(VolumeConfig {
        meta: Meta::new("VolumeConfig"),
        name: "EPHEMERAL".to_owned(),
        provisioning: Provisioning { disk_selector: DiskSelector { expr: ephemeral_match(pool) }, grow: true },
    })
}

fn node_docs(env: &Environment, hostname: &str, address: Option<std::net::Ipv4Addr>) -> Vec<Document> {
    let mut docs = vec![Document::Hostname(HostnameConfig {
        meta: Meta::new("HostnameConfig"),
        hostname: hostname.to_owned(),
        auto: "off",
    })];
    if let (Provider::Proxmox(p), Some(ip)) = (&env.provider, address) {
        docs.push(Document::Link(LinkConfig {
            meta: Meta::new("LinkConfig"),
            name: PROXMOX_LINK.to_owned(),
            addresses: vec![Address { address: format!("{ip}/{}", env.network.value.prefix) }],
            routes: vec![Route { gateway: p.gateway.value.to_string() }],
        }));
        if !p.dns.is_empty() {
            docs.push(Document::Resolver(ResolverConfig {
                meta: Meta::new("ResolverConfig"),
                nameservers: p.dns.iter().map(|d| Nameserver { address: d.value.to_string() }).collect(),
            }));
        }
    }
    docs
}

#[cfg(test)]
mod tests;
