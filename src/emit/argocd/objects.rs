//! The Kubernetes objects this family writes, as serde structures: Argo CD's Application and
//! AppProject (`argoproj.io/v1alpha1`), the `argocd-cm` patch, and External Secrets
//! Operator's ClusterSecretStore and ExternalSecret (`external-secrets.io/v1`), and a
//! `backup`'s Namespace, ServiceAccounts (`v1`, `talos.dev/v1alpha1`) and CronJob
//! (`batch/v1`). Field names
//! follow the upstream types (see docs/argocd.md, "Verified upstream"). Empty values are left
//! out, never written as `null`.

use std::collections::BTreeMap;

use serde::Serialize;

pub(crate) const ARGO_API: &str = "argoproj.io/v1alpha1";
pub(crate) const ESO_API: &str = "external-secrets.io/v1";
pub(crate) const SYNC_WAVE: &str = "argocd.argoproj.io/sync-wave";
/// Deleting an Application with this finalizer deletes the resources it made.
pub(crate) const RESOURCES_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

#[derive(Debug, Clone, Serialize, Default)]
pub(crate) struct Meta {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
}

impl Meta {
    pub(crate) fn new(name: impl Into<String>, namespace: Option<&str>) -> Self {
        Meta { name: name.into(), namespace: namespace.map(str::to_owned), ..Meta::default() }
    }
    #[must_use]
    pub(crate) fn wave(mut self, wave: i64) -> Self {
        self.annotations.insert(SYNC_WAVE.to_owned(), wave.to_string());
        self
    }
    #[must_use]
    pub(crate) fn label(mut self, k: &str, v: &str) -> Self {
        self.labels.insert(k.to_owned(), v.to_owned());
        self
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Application {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Meta,
    pub spec: ApplicationSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApplicationSpec {
    pub project: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Source>,
    pub destination: Destination,
    pub sync_policy: SyncPolicy,
    /// Fields other controllers own (CA bundles injected into webhooks and CRDs), left out of
    /// the diff and, with `RespectIgnoreDifferences=true`, out of the sync.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignore_differences: Vec<IgnoreDifference>,
}

/// One `spec.ignoreDifferences[]` entry (argo-cd v3.2.1
/// `pkg/apis/application/v1alpha1/types.go` `ResourceIgnoreDifferences`, l.115-123).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IgnoreDifference {
    pub group: &'static str,
    pub kind: &'static str,
    pub jq_path_expressions: Vec<&'static str>,
}

#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Source {
    #[serde(rename = "repoURL")]
    pub repo_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chart: Option<String>,
    pub target_revision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub helm: Option<Helm>,
    /// Names this source for `$<ref>/…` value files (multi-source Applications).
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Helm {
    pub release_name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub value_files: Vec<String>,
}

/// Where an Application deploys, or what a project allows: `server` for a cluster's own
/// Argo CD, `name` for a cluster registered in a management cluster's Argo CD.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Destination {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SyncPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automated: Option<Automated>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sync_options: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
}

/// `syncPolicy.retry`: an automated sync that failed is retried with backoff; without it,
/// Argo CD never re-attempts the same revision (argo-cd v3.2.1 `controller/appcontroller.go`,
/// "Skipping auto-sync: failed previous sync attempt").
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Retry {
    pub limit: i64,
    pub backoff: Backoff,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Backoff {
    pub duration: &'static str,
    pub factor: i64,
    pub max_duration: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Automated {
    pub prune: bool,
    pub self_heal: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AppProject {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Meta,
    pub spec: ProjectSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProjectSpec {
    pub description: String,
    pub source_repos: Vec<String>,
    pub destinations: Vec<Destination>,
    /// Cluster-scoped kinds the project may create; left out, it allows none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cluster_resource_whitelist: Vec<GroupKind>,
    /// Namespaced kinds the project may create; left out, it allows every kind.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub namespace_resource_whitelist: Vec<GroupKind>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct GroupKind {
    pub group: String,
    pub kind: String,
}

impl GroupKind {
    pub(crate) fn new(group: &str, kind: &str) -> Self {
        GroupKind { group: group.to_owned(), kind: kind.to_owned() }
    }
}

/// A partial ConfigMap: applied server-side, it sets only the keys it holds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConfigMap {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Meta,
    pub data: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Namespace {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Meta,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClusterSecretStore {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Meta,
    pub spec: SecretStoreSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SecretStoreSpec {
    pub provider: StoreProvider,
    /// Namespaces whose ExternalSecrets may use the store.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<StoreCondition>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct StoreProvider {
    pub scaleway: ScalewayProvider,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScalewayProvider {
    pub region: String,
    pub project_id: String,
    pub access_key: SecretValue,
    pub secret_key: SecretValue,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SecretValue {
    pub secret_ref: SecretKeySelector,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SecretKeySelector {
    pub name: String,
    pub namespace: String,
    pub key: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct StoreCondition {
    pub namespaces: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExternalSecret {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Meta,
    pub spec: ExternalSecretSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExternalSecretSpec {
    pub refresh_interval: String,
    pub secret_store_ref: StoreRef,
    pub target: Target,
    pub data: Vec<SecretData>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct StoreRef {
    pub kind: &'static str,
    pub name: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Target {
    pub name: String,
    pub creation_policy: &'static str,
    pub deletion_policy: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SecretData {
    pub secret_key: String,
    pub remote_ref: RemoteRef,
}

/// `spec.data[].remoteRef`. `data` is an atomic list (no list-map keys) in External Secrets'
/// CRD, so Argo CD's server-side-apply diff compares each element whole, without the API
/// server's defaulting: an element missing a field the CRD defaults reads OutOfSync forever
/// and self-heal re-applies it in a loop. The three strategies are therefore written at the
/// values the CRD defaults them to (external-secrets v0.20.4
/// `config/crds/bases/external-secrets.io_externalsecrets.yaml`, version v1); v2.9.0's CRD
/// defaults none of them and reads these values as it reads their absence
/// (`runtime/esutils/utils.go` l.275 `Default` or empty, `runtime/decoding/decoding.go`
/// `None` or empty; its providers fetch metadata only for `Fetch`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RemoteRef {
    pub key: String,
    pub version: String,
    pub conversion_strategy: &'static str,
    pub decoding_strategy: &'static str,
    pub metadata_policy: &'static str,
}

// A `backup`'s job and its accounts (`backup.rs`): `v1` ServiceAccount, `talos.dev/v1alpha1`
// ServiceAccount, `batch/v1` CronJob, with only the fields fleetc writes.

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServiceAccount {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Meta,
    pub automount_service_account_token: bool,
}

/// `talos.dev/v1alpha1` `ServiceAccount` (the CRD Talos applies itself, schemas/crds/talos.dev).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TalosServiceAccount {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Meta,
    pub spec: TalosServiceAccountSpec,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct TalosServiceAccountSpec {
    pub roles: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CronJob {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Meta,
    pub spec: CronJobSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CronJobSpec {
    pub schedule: String,
    /// A snapshot still running when the next one is due: the next one waits.
    pub concurrency_policy: &'static str,
    pub job_template: JobTemplate,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct JobTemplate {
    pub spec: JobSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobSpec {
    pub backoff_limit: i64,
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct PodTemplate {
    pub spec: PodSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodSpec {
    pub service_account_name: String,
    pub automount_service_account_token: bool,
    pub restart_policy: &'static str,
    pub security_context: PodSecurity,
    pub containers: Vec<Container>,
    pub volumes: Vec<Volume>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodSecurity {
    pub run_as_non_root: bool,
    pub run_as_user: i64,
    pub run_as_group: i64,
    pub seccomp_profile: Seccomp,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Seccomp {
    #[serde(rename = "type")]
    pub kind: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Container {
    pub name: &'static str,
    pub image: String,
    pub command: Vec<&'static str>,
    /// talos-backup writes the snapshot relative to it; the root file system is read-only.
    pub working_dir: &'static str,
    pub env: Vec<Env>,
    pub security_context: ContainerSecurity,
    pub volume_mounts: Vec<VolumeMount>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Env {
    pub name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvSource>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EnvSource {
    pub secret_key_ref: KeyRef,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct KeyRef {
    pub name: &'static str,
    pub key: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContainerSecurity {
    pub allow_privilege_escalation: bool,
    pub read_only_root_filesystem: bool,
    pub capabilities: Capabilities,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Capabilities {
    pub drop: Vec<&'static str>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VolumeMount {
    pub name: &'static str,
    pub mount_path: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Volume {
    pub name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_dir: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretVolume>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SecretVolume {
    pub secret_name: String,
}

/// Any object of this family, so that one YAML stream can hold several kinds.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum Object {
    Application(Box<Application>),
    AppProject(AppProject),
    ConfigMap(ConfigMap),
    Namespace(Namespace),
    ClusterSecretStore(ClusterSecretStore),
    ExternalSecret(ExternalSecret),
    ServiceAccount(ServiceAccount),
    TalosServiceAccount(TalosServiceAccount),
    CronJob(Box<CronJob>),
}
