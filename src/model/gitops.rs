//! The GitOps plan: what the Argo CD family delivers, decided once from the model and read by
//! `emit::argocd` (which writes it), `check::argocd` (which checks it) and `emit::validate`
//! (which judges Argo CD's install with the clusters that run it): which clusters run Argo CD,
//! the names of the Applications and projects on each Argo CD, and the sync waves derived from
//! `after`. A function of the model only, so it lives with it, below both stages.

use std::collections::{BTreeMap, BTreeSet};

use super::{App, AppSource, Cluster, Environment, Provider};
use crate::diag::Span;

/// In-cluster API server address, the destination of a cluster's own Argo CD.
pub(crate) const IN_CLUSTER: &str = "https://kubernetes.default.svc";
/// Argo CD's namespace when fleet.kdl has no `argocd` block.
pub(crate) const DEFAULT_NAMESPACE: &str = "argocd";

/// The root Application (app of apps) of a cluster's Argo CD.
pub(crate) const ROOT: &str = "fleet-root";
/// The project of the root Application and of the app-of-apps of each workload cluster.
pub(crate) const ADMIN_PROJECT: &str = "fleet-admin";
/// The project of the Cluster API provider Applications.
pub(crate) const CAPI_PROJECT: &str = "fleet-capi";
/// The Application that delivers the secret store and the ExternalSecrets.
pub(crate) const SECRETS: &str = "fleet-secrets";
/// The Application that delivers a cluster's backup job (`backup`, R28).
pub(crate) const BACKUP: &str = "fleet-backup";
/// The chart that installs External Secrets Operator.
pub(crate) const ESO_CHART: &str = "external-secrets";

/// The Cluster API provider stages the capi family writes under `out/capi/<mgmt>/providers/`,
/// with the Application that delivers each and its sync wave (before every app).
pub(crate) const CAPI_STAGES: [(&str, &str, i64); 3] = [
    ("fleet-capi-crds", "00-crds", -3),
    ("fleet-capi-controllers", "10-controllers", -2),
    ("fleet-capi-providers", "20-providers", -1),
];

/// The project of the Applications that deliver the managed clusters' Cluster API objects.
pub(crate) const CAPI_CLUSTERS_PROJECT: &str = "fleet-capi-clusters";

/// The Application, on the management cluster's Argo CD, that delivers a managed cluster's
/// Cluster API objects (`out/capi/<mgmt>/<cluster>/`, R9).
pub(crate) fn capi_cluster_app(workload: &str) -> String {
    format!("fleet-capi-cluster-{workload}")
}

/// Every cluster `mgmt` manages through Cluster API (with apps or not).
pub(crate) fn managed<'a>(env: &'a Environment, mgmt: &'a Cluster) -> impl Iterator<Item = &'a Cluster> {
    env.clusters.iter().filter(move |c| c.managed_by.as_ref().is_some_and(|m| m.value == mgmt.name.value))
}

/// The app of apps, on the management cluster's Argo CD, of a workload cluster's apps.
pub(crate) fn workload_root(workload: &str) -> String {
    format!("fleet-cluster-{workload}")
}

/// The projects of a cluster's own apps and of its generated secrets Application.
pub(crate) fn apps_project(cluster: &str) -> String {
    format!("{cluster}-apps")
}
pub(crate) fn platform_project(cluster: &str) -> String {
    format!("{cluster}-platform")
}
/// The project of [`BACKUP`].
pub(crate) fn backup_project(cluster: &str) -> String {
    format!("{cluster}-backup")
}

/// Whether the cluster's own Argo CD delivers a backup job to it (a managed cluster's backup
/// is refused by check: `fleet::backup::not-delivered`).
pub(crate) fn delivers_backup(c: &Cluster) -> bool {
    runs_argocd(c) && c.backup.is_some()
}

/// Whether the cluster runs its own Argo CD: every cluster built by OpenTofu does; a workload
/// cluster is served by its management cluster's Argo CD.
pub(crate) fn runs_argocd(c: &Cluster) -> bool {
    !c.is_managed()
}

/// The cluster whose Argo CD delivers `c`'s apps.
pub(crate) fn instance_of<'a>(env: &'a Environment, c: &'a Cluster) -> Option<&'a Cluster> {
    match &c.managed_by {
        None => Some(c),
        Some(m) => env.cluster(&m.value),
    }
}

/// Workload clusters of `mgmt` that have apps to deliver.
pub(crate) fn workloads<'a>(env: &'a Environment, mgmt: &'a Cluster) -> impl Iterator<Item = &'a Cluster> {
    env.clusters
        .iter()
        .filter(move |c| c.managed_by.as_ref().is_some_and(|m| m.value == mgmt.name.value) && !c.apps.is_empty())
}

/// The name of `app`'s Application: its own name on the cluster's own Argo CD, prefixed with
/// the cluster's name on a management cluster's Argo CD (it shares that namespace).
pub(crate) fn application_name(target: &Cluster, app: &App) -> String {
    if target.is_managed() { format!("{}-{}", target.name.value, app.name.value) } else { app.name.value.clone() }
}

/// The app that installs External Secrets Operator on the cluster, if any.
pub(crate) fn eso_app(c: &Cluster) -> Option<&App> {
    c.apps.iter().find(|a| matches!(&a.source, AppSource::Chart { chart, .. } if chart.value == ESO_CHART))
}

/// Whether fleetc delivers a secret store and ExternalSecrets to the cluster: some app reads
/// a postgres password, and the environment's Secret Manager is Scaleway's.
pub(crate) fn needs_secrets(env: &Environment, c: &Cluster) -> bool {
    matches!(env.provider, Provider::Scaleway(_)) && c.apps.iter().any(|a| !a.postgres.is_empty())
}

/// Whether the cluster's Argo CD has anything to deliver.
pub(crate) fn has_root(env: &Environment, c: &Cluster) -> bool {
    runs_argocd(c)
        && (!c.apps.is_empty() || c.cluster_api.is_some() || delivers_backup(c) || workloads(env, c).next().is_some())
}

/// Every Application on the Argo CD of `inst`, with the place of the app that names it
/// (`None` for the Applications fleetc adds).
pub(crate) fn applications(env: &Environment, inst: &Cluster) -> Vec<(String, Option<Span>)> {
    let mut out = vec![(ROOT.to_owned(), None)];
    let add_dir = |c: &Cluster, out: &mut Vec<(String, Option<Span>)>| {
        for a in &c.apps {
            out.push((application_name(c, a), Some(a.name.span)));
        }
        if needs_secrets(env, c) {
            let name = if c.is_managed() { format!("{}-{SECRETS}", c.name.value) } else { SECRETS.to_owned() };
            out.push((name, None));
        }
    };
    add_dir(inst, &mut out);
    if delivers_backup(inst) {
        out.push((BACKUP.to_owned(), None));
    }
    if inst.cluster_api.is_some() {
        out.extend(CAPI_STAGES.iter().map(|(n, _, _)| ((*n).to_owned(), None)));
        out.extend(managed(env, inst).map(|w| (capi_cluster_app(&w.name.value), None)));
    }
    for w in workloads(env, inst) {
        out.push((workload_root(&w.name.value), None));
        add_dir(w, &mut out);
    }
    out
}

/// One node of the order graph of an apps directory.
#[derive(Debug, Clone)]
pub(crate) struct WaveNode {
    pub name: String,
    pub after: Vec<String>,
    pub wave: Option<i64>,
}

/// The order graph of a cluster's apps: its apps, plus the secrets Application when fleetc
/// delivers one (after the app that installs External Secrets Operator, and before every app
/// that reads a password).
pub(crate) fn order_graph(env: &Environment, c: &Cluster) -> Vec<WaveNode> {
    let secrets = needs_secrets(env, c);
    let mut nodes: Vec<WaveNode> = c
        .apps
        .iter()
        .map(|a| {
            let mut after: Vec<String> = a.after.iter().map(|s| s.value.clone()).collect();
            if secrets && !a.postgres.is_empty() {
                after.push(SECRETS.to_owned());
            }
            WaveNode { name: a.name.value.clone(), after, wave: a.wave.as_ref().map(|w| w.value) }
        })
        .collect();
    if secrets {
        let after = eso_app(c).map(|a| vec![a.name.value.clone()]).unwrap_or_default();
        nodes.push(WaveNode { name: SECRETS.to_owned(), after, wave: None });
    }
    nodes
}

/// Sync waves: an explicit `wave` wins; otherwise 0 for a node that waits for nothing, and one
/// more than the highest wave it waits for. Unknown names are ignored and a cycle (which
/// `check` reports) is cut where it closes, so this never fails.
pub(crate) fn waves(nodes: &[WaveNode]) -> BTreeMap<String, i64> {
    fn visit(
        i: usize,
        nodes: &[WaveNode],
        index: &BTreeMap<&str, usize>,
        done: &mut BTreeMap<usize, i64>,
        active: &mut BTreeSet<usize>,
    ) -> i64 {
        if let Some(w) = done.get(&i) {
            return *w;
        }
        if !active.insert(i) {
            return 0;
        }
        let n = &nodes[i];
        let derived = n
            .after
            .iter()
            .filter_map(|a| index.get(a.as_str()))
            .map(|&j| visit(j, nodes, index, done, active) + 1)
            .max()
            .unwrap_or(0);
        active.remove(&i);
        let w = n.wave.unwrap_or(derived);
        done.insert(i, w);
        w
    }
    let index: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut done = BTreeMap::new();
    let mut active = BTreeSet::new();
    for i in 0..nodes.len() {
        visit(i, nodes, &index, &mut done, &mut active);
    }
    nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), done[&i])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, after: &[&str], wave: Option<i64>) -> WaveNode {
        WaveNode { name: name.into(), after: after.iter().map(|s| (*s).to_owned()).collect(), wave }
    }

    #[test]
    fn waves_are_topological_depth() {
        let w =
            waves(&[node("c", &["b"], None), node("b", &["a"], None), node("a", &[], None), node("d", &["a"], None)]);
        assert_eq!((w["a"], w["b"], w["c"], w["d"]), (0, 1, 2, 1));
    }

    #[test]
    fn explicit_wave_wins_and_shifts_dependents() {
        let w = waves(&[node("a", &[], Some(5)), node("b", &["a"], None), node("c", &[], Some(-2))]);
        assert_eq!((w["a"], w["b"], w["c"]), (5, 6, -2));
    }

    #[test]
    fn a_cycle_does_not_loop() {
        let w = waves(&[node("a", &["b"], None), node("b", &["a"], None)]);
        assert_eq!(w.len(), 2);
    }
}
