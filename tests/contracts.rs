//! Contracts between artifact families (ARCHITECTURE.md, "Contracts"): each value two families
//! share is one function of the model, and each test here reads both families' output for
//! the reference fleet, so that it breaks when either side changes alone.

mod common;

use fleetc::artifacts::ArtifactSet;
use fleetc::compile::{FsLoader, compile};
use serde_json::Value;

fn reference() -> (fleetc::model::Fleet, ArtifactSet) {
    let root = common::root();
    let text = std::fs::read_to_string(root.join("fleet.kdl")).unwrap();
    let c = compile("fleet.kdl", &text, &FsLoader::new(&root));
    assert!(
        !c.diags.has_errors(),
        "{}",
        fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN)
    );
    (c.fleet.unwrap(), c.artifacts.unwrap())
}

fn text<'a>(set: &'a ArtifactSet, path: &str) -> &'a str {
    std::str::from_utf8(set.get(path).unwrap_or_else(|| panic!("no {path}"))).unwrap()
}

/// `name = "<value>"` in a tfvars file.
fn tfvar<'a>(tfvars: &'a str, name: &str) -> &'a str {
    tfvars
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == name).then(|| v.trim().trim_matches('"'))
        })
        .unwrap_or_else(|| panic!("no {name} in {tfvars}"))
}

/// The Secret Manager secret the cloud root creates for a postgres password is the one the
/// ExternalSecret asks for (`Postgres::password_secret`, `Fleet::resource_prefix`; R10 → R23).
#[test]
fn external_secrets_ask_for_the_secret_the_cloud_root_creates() {
    let (fleet, set) = reference();
    let module = text(&set, "tofu/modules/scaleway-cloud/main.tf");
    // The cloud module names each postgres secret from its tfvars entry, written by the model.
    let secret = module
        .split("resource \"scaleway_secret\" \"database_password\"")
        .nth(1)
        .expect("the postgres secret in the cloud module");
    assert!(secret.contains("name       = each.value.password_secret"), "{secret}");
    let mut checked = 0;
    for env in &fleet.environments {
        let Some(cluster) = env.clusters.first() else { continue };
        let platform = format!("argocd/{}/{}/platform/platform.yaml", env.name.value, cluster.name.value);
        let Some(bytes) = set.get(&platform) else { continue };
        let tfvars = text(&set, &format!("tofu/{0}/cloud/{0}.auto.tfvars", env.name.value));
        let prefix = tfvar(tfvars, "name");
        assert_eq!(prefix, fleet.resource_prefix(env), "the cloud root's name prefix");
        let docs: Vec<Value> = serde_saphyr::from_multiple(std::str::from_utf8(bytes).unwrap()).unwrap();
        for pg in &env.postgres {
            let entry =
                tfvars.split(&format!("\n  {} = {{", pg.name.value)).nth(1).expect("the database's tfvars entry");
            let created = tfvar(entry, "password_secret");
            let asked = docs
                .iter()
                .filter(|d| d["kind"] == "ExternalSecret")
                .flat_map(|d| d["spec"]["data"].as_array().cloned().unwrap_or_default())
                .map(|d| d["remoteRef"]["key"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>();
            assert_eq!(asked, [format!("name:{created}")], "{platform}");
            assert_eq!(created, pg.password_secret(&fleet.resource_prefix(env)));
            checked += 1;
        }
    }
    assert!(checked >= 2, "staging and production both read a password");
}

fn docs(set: &ArtifactSet, path: &str) -> Vec<Value> {
    serde_saphyr::from_multiple(text(set, path)).unwrap()
}

/// `(group, kind)` of an object, from its `apiVersion`.
fn group_kind(d: &Value) -> (String, String) {
    let api = d["apiVersion"].as_str().unwrap();
    let group = api.rsplit_once('/').map_or("", |(g, _)| g);
    (group.to_owned(), d["kind"].as_str().unwrap().to_owned())
}

fn kinds(list: &Value) -> std::collections::BTreeSet<(String, String)> {
    list.as_array()
        .map(|a| {
            a.iter()
                .map(|gk| (gk["group"].as_str().unwrap().to_owned(), gk["kind"].as_str().unwrap().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// R9: every managed cluster's Cluster API directory (`emit::capi::workload_dir`) is delivered
/// by exactly one Application on its management cluster's Argo CD, into the cluster's
/// namespace, in a project that permits exactly the kinds the directory holds (cluster-scoped
/// and namespaced apart, `emit::capi::WORKLOAD_CLUSTER_KINDS` / `WORKLOAD_KINDS`).
#[test]
fn the_workload_clusters_capi_objects_are_delivered_by_argocd_in_a_project_that_permits_exactly_them() {
    let (fleet, set) = reference();
    let mut checked = 0;
    for env in &fleet.environments {
        for mgmt in env.clusters.iter().filter(|c| c.cluster_api.is_some()) {
            let apps = format!("argocd/{}/{}/apps", env.name.value, mgmt.name.value);
            let projects = docs(&set, &format!("{apps}/projects.yaml"));
            for w in env.clusters.iter().filter(|c| c.managed_by.as_ref().is_some_and(|m| m.value == mgmt.name.value)) {
                let dir = format!("capi/{}/{}/", mgmt.name.value, w.name.value);
                let delivering: Vec<Value> = set
                    .iter()
                    .filter(|(p, _)| p.starts_with(&format!("{apps}/")) && !p.ends_with("projects.yaml"))
                    .flat_map(|(p, _)| docs(&set, p))
                    .filter(|a| {
                        a["spec"]["source"]["path"].as_str() == Some(&format!("out/{}", dir.trim_end_matches('/')))
                    })
                    .collect();
                assert_eq!(delivering.len(), 1, "{dir} is delivered by one Application");
                let app = &delivering[0];
                assert_eq!(app["spec"]["destination"]["namespace"], w.name.value.as_str());
                assert!(
                    app["spec"]["syncPolicy"]["automated"].is_null(),
                    "synced by hand: the sealed identity first (F13)"
                );
                let project = projects
                    .iter()
                    .find(|p| p["metadata"]["name"] == app["spec"]["project"])
                    .expect("the Application's project");
                assert!(
                    project["spec"]["destinations"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|d| d["namespace"] == w.name.value.as_str()),
                    "the project allows the cluster's namespace"
                );
                let (mut cluster_scoped, mut namespaced) =
                    (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
                for (path, _) in set.iter().filter(|(p, _)| p.starts_with(&dir)) {
                    for d in docs(&set, path) {
                        let gk = group_kind(&d);
                        if d["metadata"]["namespace"].is_null() {
                            cluster_scoped.insert(gk);
                        } else {
                            assert_eq!(d["metadata"]["namespace"], w.name.value.as_str(), "{path}");
                            namespaced.insert(gk);
                        }
                    }
                }
                assert_eq!(kinds(&project["spec"]["clusterResourceWhitelist"]), cluster_scoped, "{dir}");
                assert_eq!(kinds(&project["spec"]["namespaceResourceWhitelist"]), namespaced, "{dir}");
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "the reference fleet has a managed cluster");
}
