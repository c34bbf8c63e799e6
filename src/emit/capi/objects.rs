//! The Kubernetes objects of the Cluster API family, as serde structures. Field names are the
//! ones of the served API versions fleetc targets (docs/capi.md, "Sources"): Cluster API core
//! `cluster.x-k8s.io/v1beta2`, CACPPT 0.5 `controlplane.cluster.x-k8s.io/v1alpha3`, CABPT 0.6
//! `bootstrap.cluster.x-k8s.io/v1alpha3`, CAPMOX `infrastructure.cluster.x-k8s.io/v1alpha2` and
//! the Cluster API Operator `operator.cluster.x-k8s.io/v1alpha2`. Every optional field is left
//! out when empty: the v1beta2 API rejects empty values, and Argo CD would see drift.

use std::collections::BTreeMap;

use serde::Serialize;

pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
pub const DEPLOYMENT_NAME_LABEL: &str = "cluster.x-k8s.io/deployment-name";

pub const CORE_GROUP: &str = "cluster.x-k8s.io";
pub const CORE_API: &str = "cluster.x-k8s.io/v1beta2";
pub const CONTROL_PLANE_GROUP: &str = "controlplane.cluster.x-k8s.io";
pub const CONTROL_PLANE_API: &str = "controlplane.cluster.x-k8s.io/v1alpha3";
pub const BOOTSTRAP_GROUP: &str = "bootstrap.cluster.x-k8s.io";
pub const BOOTSTRAP_API: &str = "bootstrap.cluster.x-k8s.io/v1alpha3";
pub const INFRASTRUCTURE_GROUP: &str = "infrastructure.cluster.x-k8s.io";
pub const INFRASTRUCTURE_API: &str = "infrastructure.cluster.x-k8s.io/v1alpha2";
pub const OPERATOR_API: &str = "operator.cluster.x-k8s.io/v1alpha2";

/// One Kubernetes object: `apiVersion`, `kind`, `metadata`, and a `spec` when it has one.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Object<S: Serialize> {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Metadata,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<S>,
}

impl<S: Serialize> Object<S> {
    pub fn new(api_version: &'static str, kind: &'static str, metadata: Metadata, spec: S) -> Self {
        Object { api_version, kind, metadata, spec: Some(spec) }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Metadata {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

impl Metadata {
    pub fn named(name: impl Into<String>, namespace: impl Into<String>) -> Self {
        Metadata { name: name.into(), namespace: Some(namespace.into()), labels: BTreeMap::new() }
    }
    pub fn cluster_scoped(name: impl Into<String>) -> Self {
        Metadata { name: name.into(), namespace: None, labels: BTreeMap::new() }
    }
    pub fn label(mut self, k: &str, v: impl Into<String>) -> Self {
        self.labels.insert(k.to_owned(), v.into());
        self
    }
}

/// A v1beta2 contract reference: `{apiGroup, kind, name}` (no version, no namespace).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContractRef {
    pub api_group: &'static str,
    pub kind: &'static str,
    pub name: String,
}

// ── Cluster (cluster.x-k8s.io/v1beta2) ────────────────────────────────────────────────────

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    pub cluster_network: ClusterNetwork,
    pub control_plane_endpoint: Endpoint,
    pub control_plane_ref: ContractRef,
    pub infrastructure_ref: ContractRef,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterNetwork {
    pub api_server_port: u16,
    pub pods: CidrBlocks,
    pub services: CidrBlocks,
    pub service_domain: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CidrBlocks {
    pub cidr_blocks: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

// ── ProxmoxCluster (infrastructure.cluster.x-k8s.io/v1alpha2) ─────────────────────────────

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProxmoxClusterSpec {
    pub control_plane_endpoint: Endpoint,
    /// CRD default `false`, written out.
    pub external_managed_control_plane: bool,
    pub ipv4_config: Ipv4Config,
    pub dns_servers: Vec<String>,
    pub allowed_nodes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Ipv4Config {
    pub addresses: Vec<String>,
    pub prefix: u8,
    pub gateway: String,
    /// CRD default 100, written out.
    pub metric: u32,
}

// ── ProxmoxMachineTemplate (infrastructure.cluster.x-k8s.io/v1alpha2) ──────────────────────

#[derive(Debug, Clone, Serialize)]
pub struct ProxmoxMachineTemplateSpec {
    pub template: ProxmoxMachineTemplateResource,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProxmoxMachineTemplateResource {
    pub spec: ProxmoxMachineSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProxmoxMachineSpec {
    pub template_selector: TemplateSelector,
    /// CRD default `true`, written out.
    pub full: bool,
    pub storage: String,
    pub num_sockets: u32,
    pub num_cores: u32,
    #[serde(rename = "memoryMiB")]
    pub memory_mib: u64,
    pub disks: Disks,
    pub network: Network,
    pub checks: Checks,
    pub metadata_settings: MetadataSettings,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateSelector {
    pub match_tags: Vec<String>,
    /// CRD default `exact`, written out.
    pub match_policy: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Disks {
    pub boot_volume: BootVolume,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BootVolume {
    pub disk: &'static str,
    pub size_gb: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Network {
    pub network_devices: Vec<NetworkDevice>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkDevice {
    /// CRD default `net0`, written out.
    pub name: &'static str,
    pub bridge: String,
    /// CRD default `virtio`, written out.
    pub model: &'static str,
    #[serde(rename = "defaultIPv4")]
    pub default_ipv4: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checks {
    pub skip_cloud_init_status: bool,
    pub skip_qemu_guest_agent: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetadataSettings {
    #[serde(rename = "providerIDInjection")]
    pub provider_id_injection: bool,
}

// ── TalosControlPlane (controlplane.cluster.x-k8s.io/v1alpha3, CACPPT 0.5) ─────────────────

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TalosControlPlaneSpec {
    pub replicas: u32,
    pub version: String,
    pub infrastructure_template: ObjectReference,
    pub control_plane_config: ControlPlaneConfig,
    pub rollout_strategy: RolloutStrategy,
}

/// A core/v1 ObjectReference, as CACPPT 0.5's `infrastructureTemplate` takes it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub name: String,
    pub namespace: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ControlPlaneConfig {
    pub controlplane: TalosConfigSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TalosConfigSpec {
    pub generate_type: &'static str,
    pub talos_version: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub strategic_patches: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStrategy {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub rolling_update: RollingUpdate,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdate {
    pub max_surge: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<u32>,
}

// ── TalosConfigTemplate (bootstrap.cluster.x-k8s.io/v1alpha3, CABPT 0.6) ───────────────────

#[derive(Debug, Clone, Serialize)]
pub struct TalosConfigTemplateSpec {
    pub template: TalosConfigTemplateResource,
}

#[derive(Debug, Clone, Serialize)]
pub struct TalosConfigTemplateResource {
    pub spec: TalosConfigSpec,
}

// ── MachineDeployment (cluster.x-k8s.io/v1beta2) ───────────────────────────────────────────

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentSpec {
    pub cluster_name: String,
    pub replicas: u32,
    pub selector: LabelSelector,
    pub template: MachineTemplate,
    pub rollout: Rollout,
    pub deletion: Deletion,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelRequirement>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LabelRequirement {
    pub key: &'static str,
    pub operator: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct MachineTemplate {
    pub metadata: TemplateMetadata,
    pub spec: MachineSpec,
}

#[derive(Debug, Clone, Serialize)]
pub struct TemplateMetadata {
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    pub cluster_name: String,
    pub version: String,
    pub bootstrap: Bootstrap,
    pub infrastructure_ref: ContractRef,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bootstrap {
    pub config_ref: ContractRef,
}

#[derive(Debug, Clone, Serialize)]
pub struct Rollout {
    pub strategy: RolloutStrategy,
}

#[derive(Debug, Clone, Serialize)]
pub struct Deletion {
    pub order: &'static str,
}

// ── MachineHealthCheck (cluster.x-k8s.io/v1beta2) ──────────────────────────────────────────

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckSpec {
    pub cluster_name: String,
    pub selector: LabelSelector,
    pub checks: HealthChecks,
    pub remediation: Remediation,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthChecks {
    pub node_startup_timeout_seconds: u32,
    pub unhealthy_node_conditions: Vec<NodeCondition>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeCondition {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub status: &'static str,
    pub timeout_seconds: u32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Remediation {
    pub trigger_if: TriggerIf,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TriggerIf {
    /// An absolute count (an IntOrString in the schema): no percentage rounding.
    pub unhealthy_less_than_or_equal_to: u32,
}

// ── Cluster API Operator providers (operator.cluster.x-k8s.io/v1alpha2) ────────────────────

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSpec {
    pub version: String,
    pub fetch_config: FetchConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_secret: Option<SecretReference>,
    /// The operator's overrides of the provider's Deployment (`spec.deployment`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<ProviderDeployment>,
}

/// `spec.deployment`: only the containers' environment, which the operator sets on the
/// container of that name, replacing a variable of the same name (cluster-api-operator
/// v0.28.0 `internal/controller/component_customizer.go` `customizeContainer`).
#[derive(Debug, Clone, Serialize)]
pub struct ProviderDeployment {
    pub containers: Vec<ProviderContainer>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProviderContainer {
    pub name: &'static str,
    pub env: Vec<EnvVar>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnvVar {
    pub name: &'static str,
    pub value: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FetchConfig {
    pub url: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SecretReference {
    pub name: String,
    pub namespace: String,
}

/// An object with no spec (a Namespace).
#[derive(Debug, Clone, Serialize)]
pub struct NoSpec {}
