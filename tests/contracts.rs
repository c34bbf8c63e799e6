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

/// A pool's user patches: the talos family writes them under one directory per pool
/// (`emit::talos::patches`), in apply order; the OpenTofu cluster module lists that directory,
/// `fleetc talos render` (`apply::layout::pool_patch_dir`) reads the same one, and CABPT's
/// strategic patches end with the same bytes (docs/talos.md, "Patches").
#[test]
fn every_consumer_reads_a_pools_patches_where_the_talos_family_writes_them() {
    let (fleet, set) = reference();
    let mut seen = 0;
    for (env, cluster) in fleet.clusters() {
        for pool in cluster.pools() {
            let cp = pool.role == fleetc::model::Role::ControlPlane;
            let dir = fleetc::apply::layout::pool_patch_dir(&env.name.value, &cluster.name.value, cp, &pool.name.value);
            let files: Vec<&str> = set.paths().filter(|p| p.starts_with(&dir)).collect();
            assert_eq!(files.len(), pool.patches.len(), "{dir}: one file per patch of the pool");
            for (file, patch) in files.iter().zip(&pool.patches) {
                assert!(text(&set, file).ends_with(&patch.file.text), "{file} carries {}", patch.path.value);
                seen += 1;
            }
            if cluster.is_managed() {
                let texts: Vec<&str> = files.iter().map(|f| text(&set, f)).collect();
                let capi: String = set
                    .iter()
                    .filter(|(p, _)| {
                        p.starts_with(&format!(
                            "capi/{}/{}/",
                            cluster.managed_by.as_ref().unwrap().value,
                            cluster.name.value
                        ))
                    })
                    .map(|(_, b)| std::str::from_utf8(b).unwrap().to_owned())
                    .collect();
                for t in texts {
                    let first_content_line = t.lines().nth(2).unwrap();
                    assert!(capi.contains(first_content_line), "the Cluster API templates carry {first_content_line}");
                }
            }
        }
    }
    assert!(seen > 0, "the reference fleet uses patches");
    let module = text(&set, "tofu/modules/talos-cluster-cp3/main.tf");
    assert!(module.contains(r#"fileset("${var.talos_dir}/patches/controlplane", "*.yaml")"#), "{module}");
    assert!(
        module.contains(
            r#"fileset("${var.talos_dir}/patches/workers/${var.worker_pools[each.value.hostname]}", "*.yaml")"#
        )
    );
}
