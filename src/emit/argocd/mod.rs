//! Argo CD: every cluster's GitOps root (R23, F7). For each cluster that runs Argo CD,
//! `argocd/<env>/<cluster>/` holds
//!
//! - `bootstrap/`: what the apply step puts in place once, in file order, after installing
//!   Argo CD from its vendored manifest: the `argocd-cm` patch that restores the health check
//!   of `argoproj.io/Application` (so that sync waves between child Applications wait for
//!   health, F7), the admin AppProject, and the root Application (app of apps);
//! - `apps/`: what the root Application delivers from git: the AppProjects, one Application
//!   per app with its sync wave, the Cluster API provider stages on a management cluster,
//!   and one app of apps per workload cluster it manages;
//! - `platform/`: the External Secrets objects that hand the apps the passwords the cloud
//!   root writes to Secret Manager (R10 → R23);
//! - `backup/`: a `backup`'s etcd snapshot job and its accounts (R28, `backup.rs`).
//!
//! A workload cluster (`managed-by`) has only `apps/` (and `platform/`): its Applications
//! live on the management cluster's Argo CD and name it as a registered cluster.

mod backup;
mod objects;
mod secrets;

use std::collections::{BTreeMap, BTreeSet};

use objects::{
    ARGO_API, AppProject, Application, ApplicationSpec, Automated, Backoff, ConfigMap, Destination, GroupKind, Helm,
    IgnoreDifference, Meta, Object, ProjectSpec, RESOURCES_FINALIZER, Retry, Source, SyncPolicy,
};

use super::{EmitError, EmitResult, HEADER};
use crate::artifacts::set::ArtifactSet;
use crate::layout::names::{WORKLOAD_CLUSTER_KINDS, WORKLOAD_KINDS};
use crate::layout::paths;
use crate::model::gitops::{
    self, ADMIN_PROJECT, BACKUP, CAPI_CLUSTERS_PROJECT, CAPI_PROJECT, CAPI_STAGES, IN_CLUSTER, ROOT, SECRETS,
};
use crate::model::{App, AppSource, Cluster, Environment, Fleet, Gitops, NAMESPACE_KIND};

/// The `argocd-cm` key that gives `argoproj.io/Application` a health check again (F7).
pub(crate) const APPLICATION_HEALTH_KEY: &str = "resource.customizations.health.argoproj.io_Application";

/// The health of an Application is the health its own status reports; with no status yet,
/// it is still progressing. Argo CD removed this check in 1.8; its health documentation gives
/// it to restore for app-of-apps ordering.
const APPLICATION_HEALTH_LUA: &str = "\
hs = {}
hs.status = \"Progressing\"
hs.message = \"\"
if obj.status ~= nil and obj.status.health ~= nil then
  hs.status = obj.status.health.status
  if obj.status.health.message ~= nil then
    hs.message = obj.status.health.message
  end
end
return hs
";

/// Cluster-scoped kinds the Cluster API provider stages create (CRDs, RBAC, webhooks).
const CAPI_CLUSTER_KINDS: [(&str, &str); 6] = [
    ("", "Namespace"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
];

pub fn emit(fleet: &Fleet) -> EmitResult {
    let mut out = ArtifactSet::new();
    let Some(repo) = &fleet.gitops else { return Ok(out) };
    let namespace = fleet.argocd.as_ref().map_or(gitops::DEFAULT_NAMESPACE, |a| a.namespace.value.as_str());
    let ctx = Ctx { gitops: repo, namespace };
    for env in &fleet.environments {
        for c in &env.clusters {
            let delivered = if gitops::runs_argocd(c) {
                gitops::has_root(env, c)
            } else {
                !c.apps.is_empty() && gitops::instance_of(env, c).is_some_and(gitops::runs_argocd)
            };
            if !delivered {
                continue;
            }
            if gitops::runs_argocd(c) {
                ctx.bootstrap(env, c, &mut out)?;
            }
            ctx.apps(env, c, &mut out)?;
            if gitops::needs_secrets(env, c) {
                secrets::emit(fleet, env, c, &mut out)?;
            }
            if gitops::delivers_backup(c) {
                backup::emit(env, c, &mut out)?;
            }
        }
    }
    Ok(out)
}

pub(crate) struct Ctx<'a> {
    pub gitops: &'a Gitops,
    /// Argo CD's namespace.
    pub namespace: &'a str,
}

fn write(out: &mut ArtifactSet, path: String, docs: &[Object]) -> Result<(), EmitError> {
    let text = super::yaml::documents(Some(HEADER), docs).map_err(|e| EmitError(format!("{path}: {e}")))?;
    out.insert(path, text).map_err(EmitError)
}

/// `argocd/<env>/<cluster>`, inside out/.
pub(crate) fn dir(env: &Environment, c: &Cluster) -> String {
    paths::argocd_dir(&env.name.value, &c.name.value)
}

/// Where a cluster's apps go: in-cluster for its own Argo CD, by registered name otherwise.
fn destination(c: &Cluster, namespace: Option<&str>) -> Destination {
    let namespace = namespace.map(str::to_owned);
    if c.is_managed() {
        Destination { name: Some(c.name.value.clone()), namespace, server: None }
    } else {
        Destination { name: None, namespace, server: Some(IN_CLUSTER.to_owned()) }
    }
}

/// How an automated sync that failed is retried: 5 more attempts, 10 s then doubling, at
/// most 5 min apart (about 5 minutes in all, enough for a webhook of an earlier wave to start
/// serving, e.g. cert-manager's before the Cluster API Operator's certificates).
pub(crate) const RETRY_LIMIT: i64 = 5;

/// A sync policy; every automated one retries failed syncs ([`RETRY_LIMIT`]).
fn sync_policy(automated: Option<bool>, options: &[&str]) -> SyncPolicy {
    SyncPolicy {
        retry: automated
            .map(|_| Retry { limit: RETRY_LIMIT, backoff: Backoff { duration: "10s", factor: 2, max_duration: "5m" } }),
        automated: automated.map(|prune| Automated { prune, self_heal: true }),
        sync_options: options.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// The sync option that keeps a sync from overwriting what `ignoreDifferences` names (argo-cd
/// v3.2.1 `controller/sync.go` l.261-264 normalises the target with the ignore rules first).
const RESPECT_IGNORE_DIFFERENCES: &str = "RespectIgnoreDifferences=true";

/// The CA bundles that another controller injects after the apply (cert-manager's cainjector
/// for `cert-manager.io/inject-ca-from`, External Secrets' cert-controller): webhooks' and CRD
/// conversion webhooks' `caBundle`. Without these rules the live object differs from git for
/// ever, and a selfHeal sync would reset the bundle the webhook needs.
pub(crate) fn injected_ca_bundles() -> Vec<IgnoreDifference> {
    vec![
        IgnoreDifference {
            group: "admissionregistration.k8s.io",
            kind: "MutatingWebhookConfiguration",
            jq_path_expressions: vec![".webhooks[]?.clientConfig.caBundle"],
        },
        IgnoreDifference {
            group: "admissionregistration.k8s.io",
            kind: "ValidatingWebhookConfiguration",
            jq_path_expressions: vec![".webhooks[]?.clientConfig.caBundle"],
        },
        IgnoreDifference {
            group: "apiextensions.k8s.io",
            kind: "CustomResourceDefinition",
            jq_path_expressions: vec![".spec.conversion.webhook.clientConfig.caBundle"],
        },
    ]
}

/// The sync options of an app's Application: `CreateNamespace=true` exactly when the app's
/// cluster-scoped kinds (`App::cluster_kinds`, which its project permits) hold `Namespace`.
fn app_sync_options(app: &App) -> Vec<&'static str> {
    let mut options = Vec::new();
    if app.cluster_kinds().contains(&NAMESPACE_KIND) {
        options.push("CreateNamespace=true");
    }
    if matches!(app.source, AppSource::Chart { .. }) {
        options.push(RESPECT_IGNORE_DIFFERENCES);
    }
    options.push("ServerSideApply=true");
    options
}

/// The cluster-scoped kinds the `<cluster>-apps` project permits: the union of its apps'
/// [`App::cluster_kinds`], sorted.
pub(crate) fn apps_cluster_kinds(c: &Cluster) -> BTreeSet<(&'static str, &'static str)> {
    c.apps.iter().flat_map(App::cluster_kinds).collect()
}

impl Ctx<'_> {
    /// An app of apps: the Applications fleetc writes for `c`, read from git into Argo CD's
    /// own namespace (F7: only the admin project may write there).
    fn app_of_apps(&self, env: &Environment, c: &Cluster) -> ApplicationSpec {
        ApplicationSpec {
            project: ADMIN_PROJECT.to_owned(),
            source: Some(self.fleet_source(&format!("out/{}/apps", dir(env, c)))),
            sources: Vec::new(),
            destination: Destination {
                name: None,
                namespace: Some(self.namespace.to_owned()),
                server: Some(IN_CLUSTER.to_owned()),
            },
            sync_policy: sync_policy(Some(true), &["ServerSideApply=true"]),
            ignore_differences: Vec::new(),
        }
    }

    /// A source that reads `rel` (relative to fleet.kdl's directory) from the fleet's repo.
    fn fleet_source(&self, rel: &str) -> Source {
        Source {
            repo_url: self.gitops.repo.value.clone(),
            path: Some(self.gitops.repo_path(rel)),
            target_revision: self.gitops.revision.value.clone(),
            ..Source::default()
        }
    }

    fn application(&self, name: String, wave: Option<i64>, spec: ApplicationSpec, finalizer: bool) -> Object {
        let mut metadata = Meta::new(name, Some(self.namespace));
        if let Some(w) = wave {
            metadata = metadata.wave(w);
        }
        if finalizer {
            metadata.finalizers.push(RESOURCES_FINALIZER.to_owned());
        }
        Object::Application(Box::new(Application { api_version: ARGO_API, kind: "Application", metadata, spec }))
    }

    fn project(&self, name: String, wave: Option<i64>, spec: ProjectSpec) -> Object {
        let mut metadata = Meta::new(name, Some(self.namespace));
        if let Some(w) = wave {
            metadata = metadata.wave(w);
        }
        Object::AppProject(AppProject { api_version: ARGO_API, kind: "AppProject", metadata, spec })
    }

    /// What the apply step puts in place on a cluster that runs Argo CD.
    fn bootstrap(&self, env: &Environment, c: &Cluster, out: &mut ArtifactSet) -> Result<(), EmitError> {
        let base = paths::argocd_bootstrap_dir(&env.name.value, &c.name.value);
        let cm = ConfigMap {
            api_version: "v1",
            kind: "ConfigMap",
            metadata: Meta::new("argocd-cm", Some(self.namespace))
                .label("app.kubernetes.io/name", "argocd-cm")
                .label("app.kubernetes.io/part-of", "argocd"),
            data: BTreeMap::from([(APPLICATION_HEALTH_KEY.to_owned(), APPLICATION_HEALTH_LUA.to_owned())]),
        };
        write(out, format!("{base}/00-argocd-cm.yaml"), &[Object::ConfigMap(cm)])?;
        let admin = self.project(
            ADMIN_PROJECT.to_owned(),
            None,
            ProjectSpec {
                description: format!(
                    "fleetc: the root application of {}/{}; it writes Applications and AppProjects into Argo CD's namespace (F7)",
                    env.name.value, c.name.value
                ),
                source_repos: vec![self.gitops.repo.value.clone()],
                destinations: vec![Destination {
                    name: None,
                    namespace: Some(self.namespace.to_owned()),
                    server: Some(IN_CLUSTER.to_owned()),
                }],
                cluster_resource_whitelist: Vec::new(),
                namespace_resource_whitelist: vec![
                    GroupKind::new("argoproj.io", "AppProject"),
                    GroupKind::new("argoproj.io", "Application"),
                ],
            },
        );
        write(out, format!("{base}/10-project-admin.yaml"), &[admin])?;
        let root = self.application(ROOT.to_owned(), None, self.app_of_apps(env, c), false);
        write(out, format!("{base}/20-root.yaml"), &[root])
    }

    fn app_source(&self, app: &App) -> Result<(Option<Source>, Vec<Source>), EmitError> {
        Ok(match &app.source {
            AppSource::Path { path, .. } => (Some(self.fleet_source(&path.value)), Vec::new()),
            AppSource::Chart { repo, chart, version, values, .. } => {
                let version = version.as_ref().ok_or_else(|| {
                    EmitError(format!("app `{}` has no chart version (check refuses this)", app.name.value))
                })?;
                let mut helm = Helm { release_name: app.name.value.clone(), value_files: Vec::new() };
                let chart_source = |helm: Helm| Source {
                    repo_url: repo.value.clone(),
                    chart: Some(chart.value.clone()),
                    target_revision: version.value.clone(),
                    helm: Some(helm),
                    ..Source::default()
                };
                match values {
                    None => (Some(chart_source(helm)), Vec::new()),
                    Some(v) => {
                        helm.value_files.push(format!("$values/{}", self.gitops.repo_path(&v.value)));
                        let values_source = Source {
                            repo_url: self.gitops.repo.value.clone(),
                            target_revision: self.gitops.revision.value.clone(),
                            reference: Some("values".to_owned()),
                            ..Source::default()
                        };
                        (None, vec![chart_source(helm), values_source])
                    }
                }
            }
        })
    }

    /// `apps/` of cluster `c`: its projects and Applications (and, on a management cluster,
    /// the provider stages and the workload clusters' apps of apps).
    fn apps(&self, env: &Environment, c: &Cluster, out: &mut ArtifactSet) -> Result<(), EmitError> {
        let base = format!("{}/apps", dir(env, c));
        let waves = gitops::waves(&gitops::order_graph(env, c));
        let mut files: BTreeMap<String, (i64, Object)> = BTreeMap::new();
        // Apps synced by hand, placed in the last wave below: a child that never becomes
        // Healthy holds the root's sync at its wave forever, and only the last wave is not
        // waited for (gitops-engine `pkg/sync/sync_context.go`, as docs/argocd.md cites). A
        // manual app with workloads reads Missing until someone syncs it. `check` refuses an
        // app that waits for one, and a `wave` on one (`fleet::argocd::waits-for-manual`).
        let mut manual: Vec<(String, ApplicationSpec)> = Vec::new();
        for app in &c.apps {
            let wave = waves[&app.name.value];
            let (source, sources) = self.app_source(app)?;
            let name = gitops::application_name(c, app);
            let spec = ApplicationSpec {
                project: gitops::apps_project(&c.name.value),
                source,
                sources,
                destination: destination(c, Some(&app.namespace.value)),
                sync_policy: sync_policy(app.auto_sync.then_some(true), &app_sync_options(app)),
                ignore_differences: if matches!(app.source, AppSource::Chart { .. }) {
                    injected_ca_bundles()
                } else {
                    Vec::new()
                },
            };
            if app.auto_sync {
                files.insert(name.clone(), (wave, self.application(name, Some(wave), spec, true)));
            } else {
                manual.push((name, spec));
            }
        }
        if gitops::needs_secrets(env, c) {
            let wave = waves[SECRETS];
            let name = if c.is_managed() { format!("{}-{SECRETS}", c.name.value) } else { SECRETS.to_owned() };
            let spec = ApplicationSpec {
                project: gitops::platform_project(&c.name.value),
                source: Some(self.fleet_source(&format!("out/{}/platform", dir(env, c)))),
                sources: Vec::new(),
                // A namespace its project permits: Argo CD refuses an Application whose
                // destination namespace (even an empty one) matches none of the project's
                // destinations (argo-cd v3.2.1 util/argo/argo.go, ValidatePermissions). Every
                // ExternalSecret names its own namespace; the store is cluster-scoped.
                destination: destination(c, secrets::consumer_namespaces(c).first().map(String::as_str)),
                sync_policy: sync_policy(Some(true), &["ServerSideApply=true"]),
                ignore_differences: Vec::new(),
            };
            files.insert(name.clone(), (wave, self.application(name, Some(wave), spec, true)));
        }
        if gitops::delivers_backup(c) {
            // The backup waits for nothing: its Talos API access comes with the machine
            // config, before Argo CD exists. With the finalizer, removing `backup` from
            // fleet.kdl deletes the job and the talos.dev ServiceAccount (and, through its
            // owner reference, the Secret Talos wrote for it).
            let spec = ApplicationSpec {
                project: gitops::backup_project(&c.name.value),
                source: Some(self.fleet_source(&format!("out/{}/backup", dir(env, c)))),
                sources: Vec::new(),
                destination: destination(c, Some(crate::model::backup::NAMESPACE)),
                sync_policy: sync_policy(Some(true), &["ServerSideApply=true"]),
                ignore_differences: Vec::new(),
            };
            files.insert(BACKUP.to_owned(), (0, self.application(BACKUP.to_owned(), Some(0), spec, true)));
        }
        if gitops::runs_argocd(c) && c.cluster_api.is_some() {
            for (name, stage, wave) in CAPI_STAGES {
                // Never pruned, never cascaded: removing a CRD deletes every object of its
                // kind, and with them the workload clusters.
                let spec = ApplicationSpec {
                    project: CAPI_PROJECT.to_owned(),
                    source: Some(
                        self.fleet_source(&format!("out/{}/{stage}", paths::capi_providers_dir(&c.name.value))),
                    ),
                    sources: Vec::new(),
                    destination: destination(c, None),
                    sync_policy: sync_policy(Some(false), &["ServerSideApply=true", RESPECT_IGNORE_DIFFERENCES]),
                    ignore_differences: injected_ca_bundles(),
                };
                files.insert(name.to_owned(), (wave, self.application(name.to_owned(), Some(wave), spec, false)));
            }
        }
        let last = files.values().map(|(w, _)| *w).max().unwrap_or(0);
        for (name, spec) in manual {
            files.insert(name.clone(), (last + 1, self.application(name, Some(last + 1), spec, false)));
        }
        if gitops::runs_argocd(c) && c.cluster_api.is_some() {
            // R9: each managed cluster's Cluster API objects, from git. Synced by hand, never
            // automatically: its `<cluster>-talos` Secret (capi/<mgmt>/sealed.yaml) must exist
            // before CABPT first reconciles, or CABPT generates a new identity (F13); and a
            // superseded machine template may be pruned only once the rollout that replaced
            // it is done (a sync with prune then; `PruneLast` prunes after the rest applied).
            for w in gitops::managed(env, c) {
                let name = gitops::capi_cluster_app(&w.name.value);
                let spec = ApplicationSpec {
                    project: CAPI_CLUSTERS_PROJECT.to_owned(),
                    source: Some(
                        self.fleet_source(&format!("out/{}", paths::capi_workload_dir(&c.name.value, &w.name.value))),
                    ),
                    sources: Vec::new(),
                    destination: Destination {
                        name: None,
                        namespace: Some(w.name.value.clone()),
                        server: Some(IN_CLUSTER.to_owned()),
                    },
                    sync_policy: sync_policy(None, &["ServerSideApply=true", "PruneLast=true"]),
                    ignore_differences: Vec::new(),
                };
                files.insert(name.clone(), (last + 1, self.application(name, Some(last + 1), spec, false)));
            }
        }
        if gitops::runs_argocd(c) {
            // Last, so that a workload cluster not yet registered never holds back the
            // management cluster's own waves.
            for w in gitops::workloads(env, c) {
                let name = gitops::workload_root(&w.name.value);
                let spec = self.app_of_apps(env, w);
                files.insert(name.clone(), (last + 1, self.application(name, Some(last + 1), spec, false)));
            }
        }
        let first = files.values().map(|(w, _)| *w).min().unwrap_or(0).min(0) - 1;
        let projects = self.projects(env, c, first);
        if !projects.is_empty() {
            write(out, format!("{base}/projects.yaml"), &projects)?;
        }
        for (name, (_, obj)) in files {
            write(out, format!("{base}/{name}.yaml"), &[obj])?;
        }
        Ok(())
    }

    /// The projects of `apps/`, in a wave before every Application.
    fn projects(&self, env: &Environment, c: &Cluster, wave: i64) -> Vec<Object> {
        let cluster = &c.name.value;
        let mut docs = Vec::new();
        let mut repos: BTreeSet<String> = BTreeSet::from([self.gitops.repo.value.clone()]);
        for a in &c.apps {
            if let AppSource::Chart { repo, .. } = &a.source {
                repos.insert(repo.value.clone());
            }
        }
        let namespaces: BTreeSet<&str> = c.apps.iter().map(|a| a.namespace.value.as_str()).collect();
        if !c.apps.is_empty() {
            docs.push(self.project(
                gitops::apps_project(cluster),
                Some(wave),
                ProjectSpec {
                    description: format!(
                        "fleetc: the apps of {}/{cluster}: the fleet's repository and pinned charts, the declared namespaces",
                        env.name.value
                    ),
                    source_repos: repos.into_iter().collect(),
                    destinations: namespaces.iter().map(|ns| destination(c, Some(ns))).collect(),
                    // Exactly the kinds its apps create: their namespaces (F7) and what
                    // their charts install (`App::cluster_kinds`).
                    cluster_resource_whitelist: apps_cluster_kinds(c).into_iter().map(|(g, k)| GroupKind::new(g, k)).collect(),
                    namespace_resource_whitelist: Vec::new(),
                },
            ));
        }
        if gitops::needs_secrets(env, c) {
            let consumers = secrets::consumer_namespaces(c);
            docs.push(self.project(
                gitops::platform_project(cluster),
                Some(wave),
                ProjectSpec {
                    description: format!(
                        "fleetc: the secret store of {}/{cluster} and the ExternalSecrets of its apps (R10, R23)",
                        env.name.value
                    ),
                    source_repos: vec![self.gitops.repo.value.clone()],
                    destinations: consumers.iter().map(|ns| destination(c, Some(ns))).collect(),
                    cluster_resource_whitelist: vec![
                        GroupKind::new("", "Namespace"),
                        GroupKind::new("external-secrets.io", "ClusterSecretStore"),
                    ],
                    namespace_resource_whitelist: vec![GroupKind::new("external-secrets.io", "ExternalSecret")],
                },
            ));
        }
        if gitops::delivers_backup(c) {
            docs.push(self.project(
                gitops::backup_project(cluster),
                Some(wave),
                ProjectSpec {
                    description: format!(
                        "fleetc: the etcd backup job of {}/{cluster} (R28): its namespace, accounts and CronJob",
                        env.name.value
                    ),
                    source_repos: vec![self.gitops.repo.value.clone()],
                    destinations: vec![destination(c, Some(crate::model::backup::NAMESPACE))],
                    cluster_resource_whitelist: vec![GroupKind::new("", "Namespace")],
                    namespace_resource_whitelist: backup::KINDS.iter().map(|(g, k)| GroupKind::new(g, k)).collect(),
                },
            ));
        }
        if gitops::runs_argocd(c) && c.cluster_api.is_some() {
            docs.push(self.project(
                CAPI_PROJECT.to_owned(),
                Some(wave),
                ProjectSpec {
                    description: format!(
                        "fleetc: the Cluster API providers of {}/{cluster} (R24); CRDs and cluster-wide RBAC, in every namespace",
                        env.name.value
                    ),
                    source_repos: vec![self.gitops.repo.value.clone()],
                    destinations: vec![Destination {
                        name: None,
                        namespace: Some("*".to_owned()),
                        server: Some(IN_CLUSTER.to_owned()),
                    }],
                    cluster_resource_whitelist: CAPI_CLUSTER_KINDS.iter().map(|(g, k)| GroupKind::new(g, k)).collect(),
                    namespace_resource_whitelist: Vec::new(),
                },
            ));
        }
        if gitops::runs_argocd(c) && c.cluster_api.is_some() && gitops::managed(env, c).next().is_some() {
            let kinds = |list: &[(&str, &str)]| list.iter().map(|(g, k)| GroupKind::new(g, k)).collect();
            docs.push(self.project(
                CAPI_CLUSTERS_PROJECT.to_owned(),
                Some(wave),
                ProjectSpec {
                    description: format!(
                        "fleetc: the Cluster API objects of the clusters {}/{cluster} manages (R9, R24), each in its own namespace",
                        env.name.value
                    ),
                    source_repos: vec![self.gitops.repo.value.clone()],
                    destinations: gitops::managed(env, c)
                        .map(|w| Destination {
                            name: None,
                            namespace: Some(w.name.value.clone()),
                            server: Some(IN_CLUSTER.to_owned()),
                        })
                        .collect(),
                    cluster_resource_whitelist: kinds(&WORKLOAD_CLUSTER_KINDS),
                    namespace_resource_whitelist: kinds(&WORKLOAD_KINDS),
                },
            ));
        }
        docs
    }
}

#[cfg(test)]
mod tests;
