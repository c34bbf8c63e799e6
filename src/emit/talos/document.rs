//! The Talos config documents fleetc writes, as serde structures: a strategic-merge patch of
//! the `v1alpha1` machine config ([`V1Alpha1`]) and the multi-document kinds beside it
//! ([`VolumeConfig`], [`HostnameConfig`], [`LinkAliasConfig`], [`LinkConfig`],
//! [`ResolverConfig`], [`Layer2VipConfig`], [`BondConfig`], [`VlanConfig`]). Field names are the ones of the Talos 1.12 and
//! 1.13 config schemas; every field is optional in a patch, so empty ones are left out.

use std::collections::BTreeMap;

use serde::Serialize;

/// One document of a Talos multi-document config patch.
// A file holds a handful of documents: boxing the v1alpha1 patch would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Document {
    /// The `v1alpha1` machine config patch (no `version:` key: it is a patch).
    V1Alpha1(V1Alpha1),
    Volume(VolumeConfig),
    Hostname(HostnameConfig),
    LinkAlias(LinkAliasConfig),
    Link(LinkConfig),
    Resolver(ResolverConfig),
    Layer2Vip(Layer2VipConfig),
    Bond(BondConfig),
    Vlan(VlanConfig),
    /// The 1.14 model's defaults (`talosctl gen config` at the 1.14 contract).
    SecurityProfile(SecurityProfileConfig),
    FilesystemTrim(FilesystemTrimConfig),
}

impl Document {
    /// The document's kind as Talos names it (`v1alpha1` for the machine config).
    pub fn kind(&self) -> &'static str {
        match self {
            Document::V1Alpha1(_) => "v1alpha1",
            Document::Volume(_) => "VolumeConfig",
            Document::Hostname(_) => "HostnameConfig",
            Document::LinkAlias(_) => "LinkAliasConfig",
            Document::Link(_) => "LinkConfig",
            Document::Resolver(_) => "ResolverConfig",
            Document::Layer2Vip(_) => "Layer2VIPConfig",
            Document::Bond(_) => "BondConfig",
            Document::Vlan(_) => "VLANConfig",
            Document::SecurityProfile(_) => "SecurityProfileConfig",
            Document::FilesystemTrim(_) => "FilesystemTrimConfig",
        }
    }
    pub fn as_v1alpha1(&self) -> Option<&V1Alpha1> {
        match self {
            Document::V1Alpha1(v) => Some(v),
            _ => None,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct V1Alpha1 {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Cluster>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    #[serde(rename = "certSANs", skip_serializing_if = "Vec::is_empty")]
    pub cert_sans: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install: Option<Install>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<Kubelet>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub features: Option<Features>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub sysctls: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub node_labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub node_annotations: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub node_taints: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Install {
    /// Empty in a node's own document, which states its disk only (the pool's gives the image).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub image: String,
    /// `machine.install.disk`: a bare device path, only where the user wrote one (R15 warns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_selector: Option<InstallDiskSelector>,
}

/// `machine.install.diskSelector`: every stated field must match (siderolabs/talos v1.13.9
/// `pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`, `InstallDiskSelector`); `size` is
/// Talos's size matcher, `[>=|<=|>|<|==]<size>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallDiskSelector {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wwid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus_path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Kubelet {
    #[serde(rename = "nodeIP", skip_serializing_if = "Option::is_none")]
    pub node_ip: Option<NodeIp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_config: Option<KubeletExtraConfig>,
}

/// `machine.kubelet.extraConfig`: fields of the kubelet's `KubeletConfiguration`
/// (k8s.io/kubelet `config/v1beta1`), which Talos lays over the one it generates
/// (siderolabs/talos v1.13.9 `internal/app/machined/pkg/controllers/k8s/kubelet_spec.go`;
/// `registerWithTaints` is not among `pkg/machinery/kubelet/kubelet.go`
/// `ProtectedConfigurationFields`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeletExtraConfig {
    /// The taints the kubelet creates its Node with. A worker must be tainted at registration:
    /// Talos sets a worker's taints with the kubelet's own credentials, and the API server's
    /// NodeRestriction plugin refuses a node that changes its taints after it registered
    /// (kubernetes v1.35.0 `plugin/pkg/admission/noderestriction/admission.go`, "is not allowed
    /// to modify taints"; Talos v1.13.9 `v1alpha1_types.go` `MachineNodeTaints`, the note).
    pub register_with_taints: Vec<RegisterTaint>,
}

/// One `v1.Taint` of `registerWithTaints` (k8s.io/api `core/v1` `Taint`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegisterTaint {
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub effect: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeIp {
    pub valid_subnets: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Features {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kube_prism: Option<KubePrism>,
    #[serde(rename = "kubernetesTalosAPIAccess", skip_serializing_if = "Option::is_none")]
    pub kubernetes_talos_api_access: Option<TalosApiAccess>,
}

/// `machine.features.kubernetesTalosAPIAccess`: pods of the listed namespaces may reach the
/// Talos API with the listed roles (control-plane nodes only).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TalosApiAccess {
    pub enabled: bool,
    pub allowed_roles: Vec<String>,
    pub allowed_kubernetes_namespaces: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KubePrism {
    pub enabled: bool,
    pub port: u16,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_cloud_provider: Option<ExternalCloudProvider>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_scheduling_on_control_planes: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<Network>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovery: Option<Discovery>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ControlPlane>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_server: Option<ApiServer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy: Option<Proxy>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inline_manifests: Vec<InlineManifest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etcd: Option<Etcd>,
}

/// `cluster.etcd`: the networks etcd advertises its address from (R18). Without it etcd
/// advertises the node's first routed address, sorted by value, whatever its network
/// (siderolabs/talos v1.13.9 and v1.12.6 `internal/app/machined/pkg/controllers/etcd/spec.go`);
/// with it, the addresses of the node in those networks, the endpoint's shared address
/// excluded (`controllers/etcd/config.go`, "filter out any virtual IPs"), and etcd listens on
/// them and on 127.0.0.1 (`listenSubnets` defaults to `advertisedSubnets`,
/// `v1alpha1_types.go` `EtcdConfig.EtcdListenSubnets`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Etcd {
    pub advertised_subnets: Vec<String>,
}

/// `cluster.externalCloudProvider`: kubelets and control plane run with
/// `--cloud-provider=external`, so nodes wait for the cloud controller manager.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExternalCloudProvider {
    pub enabled: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Network {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cni: Option<Cni>,
    pub pod_subnets: Vec<String>,
    pub service_subnets: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cni {
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Discovery {
    pub enabled: bool,
}

/// `cluster.controlPlane` beside the endpoint the generator writes: the port the API server
/// listens on (`--secure-port`), when the endpoint names another than Talos's 6443
/// (siderolabs/talos v1.13.9 `v1alpha1_types.go` l.1176-1180 `LocalAPIServerPort`;
/// `controllers/k8s/control_plane.go` l.201 and `control_plane_static_pod.go` l.388). Control-
/// plane nodes also add `localhost:<port>` to KubePrism's endpoints
/// (`controllers/k8s/kubeprism_endpoints.go` l.59-64).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlane {
    #[serde(rename = "localAPIServerPort")]
    pub local_api_server_port: u16,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApiServer {
    #[serde(rename = "certSANs")]
    pub cert_sans: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proxy {
    pub disabled: bool,
}

/// `cluster.inlineManifests[]`: `contents` is the manifest text, byte for byte.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InlineManifest {
    pub name: String,
    pub contents: String,
}

/// The `apiVersion`/`kind` header every non-v1alpha1 document carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    pub api_version: &'static str,
    pub kind: &'static str,
}

impl Meta {
    pub fn new(kind: &'static str) -> Self {
        Meta { api_version: "v1alpha1", kind }
    }
}

/// `SecurityProfileConfig` (Talos 1.14): `workloadIsolation` runs the container plane (CRI,
/// kubelet, pods) in the namespaces of `sandboxd`, apart from machined. `talosctl gen config`
/// writes it with `workloadIsolation: true` for the 1.14 contract; a node without it keeps
/// the old, non-isolated behaviour (siderolabs/talos pkg/machinery v1.14.1
/// `config/generate/security_profile.go`, `config/contract.go` l.292-296,
/// `config/types/runtime/security_profile_config.go` l.48-53).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecurityProfileConfig {
    #[serde(flatten)]
    pub meta: Meta,
    #[serde(rename = "workloadIsolation")]
    pub workload_isolation: bool,
}

/// `FilesystemTrimConfig` (Talos 1.14): periodic trim of the node's filesystems, every
/// `interval` (a Go duration). `talosctl gen config` writes it with
/// `constants.DefaultFilesystemTrimInterval`, one week, for the 1.14 contract; a node without
/// it runs no periodic trim (machinery v1.14.1 `config/generate/block.go` l.13-25,
/// `config/contract.go` l.287-290, `constants/constants.go` l.1512-1515).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilesystemTrimConfig {
    #[serde(flatten)]
    pub meta: Meta,
    pub interval: String,
}

/// `VolumeConfig`: where a system volume is provisioned and how it is encrypted (both read
/// at first provisioning only). STATE takes no provisioning (siderolabs/talos v1.13.9
/// `pkg/machinery/config/types/block/volume_config.go`, `Validate`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VolumeConfig {
    #[serde(flatten)]
    pub meta: Meta,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioning: Option<Provisioning>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encryption: Option<Encryption>,
}

/// `VolumeConfig.encryption`: the document model of Talos 1.12, 1.13 and 1.14 alike
/// (`pkg/machinery/config/types/block/encryption.go` at v1.12.6, v1.13.9 and v1.14.1, which
/// differ only by 1.14's `allowDiscards`, not written). The legacy
/// `machine.systemDiskEncryption` (`config/types/v1alpha1/v1alpha1_types.go`, "Deprecated: Use
/// `VolumeConfig` instead." at all three) is never written: Talos refuses a volume encrypted in
/// both (`volume_config.go`, `V1Alpha1ConflictValidate`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Encryption {
    /// `luks2`, the one provider Talos accepts (`EncryptionSpec.Validate`).
    pub provider: &'static str,
    pub keys: Vec<EncryptionKey>,
}

/// One LUKS2 key slot. Exactly one of the key kinds is set.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct EncryptionKey {
    pub slot: u32,
    /// `lockToState`: the key opens the volume only with the STATE it was sealed with, which
    /// Talos recommends for a TPM key on a volume other than STATE (siderolabs/talos v1.13.9
    /// and v1.12.6 `pkg/machinery/config/types/block/encryption.go`, `KeyLockToSTATE`; the
    /// field is there from v1.11.0).
    #[serde(rename = "lockToState", skip_serializing_if = "Option::is_none")]
    pub lock_to_state: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpm: Option<TpmKey>,
    #[serde(rename = "nodeID", skip_serializing_if = "Option::is_none")]
    pub node_id: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kms: Option<KmsKey>,
}

/// `tpm`: sealed to PCR 7 (Talos's default when `options` is absent) and, through the UKI's
/// signed policy, PCR 11 (`EncryptionKeyTPM.PCRs`, `PubKeyPCRs`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TpmKey {
    /// Enrolment fails when the firmware does not report SecureBoot on.
    pub check_secureboot_status_on_enroll: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KmsKey {
    pub endpoint: String,
}

/// An empty mapping (`nodeID: {}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Empty {}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Provisioning {
    pub disk_selector: DiskSelector,
    #[serde(skip_serializing_if = "is_false")]
    pub grow: bool,
}

/// A CEL expression over `disk` and `system_disk`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskSelector {
    #[serde(rename = "match")]
    pub expr: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostnameConfig {
    #[serde(flatten)]
    pub meta: Meta,
    pub hostname: String,
    /// `off`: the generated default (`stable`) must not compete with the static name.
    pub auto: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkAliasConfig {
    #[serde(flatten)]
    pub meta: Meta,
    pub name: String,
    pub selector: LinkSelector,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkSelector {
    #[serde(rename = "match")]
    pub expr: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkConfig {
    #[serde(flatten)]
    pub meta: Meta,
    pub name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<Address>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Address {
    pub address: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Route {
    /// The destination network; the default route when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination: Option<String>,
    pub gateway: String,
}

/// `BondConfig` (siderolabs/talos v1.13.9 `pkg/machinery/config/types/network/bond.go`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BondConfig {
    #[serde(flatten)]
    pub meta: Meta,
    pub name: String,
    pub links: Vec<String>,
    pub bond_mode: String,
    /// Link monitoring (ms), and the delays before a link counts as up or down: Talos warns
    /// when an 802.3ad bond states none (`bond.go`, `validateFor8023AD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub miimon: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updelay: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downdelay: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<Address>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
}

/// `VLANConfig` (siderolabs/talos v1.13.9 `pkg/machinery/config/types/network/vlan.go`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VlanConfig {
    #[serde(flatten)]
    pub meta: Meta,
    pub name: String,
    #[serde(rename = "vlanID")]
    pub vlan_id: u16,
    pub parent: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<Address>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolverConfig {
    #[serde(flatten)]
    pub meta: Meta,
    pub nameservers: Vec<Nameserver>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Nameserver {
    pub address: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layer2VipConfig {
    #[serde(flatten)]
    pub meta: Meta,
    /// The virtual IP itself.
    pub name: String,
    pub link: String,
}
