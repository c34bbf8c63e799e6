//! Talos patches at every level (docs/fleet-language.md, "`patch`"): a pool's machines get
//! every level's patches in the order fleet → environment → cluster → role → pool, and an
//! environment written `from=` another inherits them unless it states its own.

use fleetc::compile::{MapLoader, compile};
use fleetc::model::PatchLevel;

const FLEET: &str = r#"fleet "demo" {
    talos "v1.13.9"
    kubernetes "1.36.2"
    patch "p/fleet.yaml"
    schematic "s" {
        extension "siderolabs/gvisor"
    }
    environment "staging" {
        scaleway project="11111111-2222-3333-4444-555555555555" region="fr-par" zone="fr-par-2" {
            size "small" type="PRO2-XS"
        }
        state bucket="demo-tofu-state"
        network "10.10.0.0/22"
        gateway "51.15.200.10"
        admin-ranges "203.0.113.0/24"
        recipients "age1wh7qxmt0740e28qvq0jjz5ylyxfctxtm4skkffn6kers9dln89eswx42s2"
        patch "p/env.yaml"
        cluster "main" {
            endpoint address="10.10.0.10"
            pool-defaults schematic="s" size="small"
            patch "p/cluster.yaml"
            control-plane count=3 {
                patch "p/role.yaml"
            }
            pool "system" count=2 {
                patch "p/pool.yaml"
            }
        }
    }
    environment "production" from="staging" {
        network "10.20.0.0/22"
        gateway "51.15.200.20"
        state bucket="demo-production-tofu-state"
        patch "p/production.yaml"
        cluster "main" {
            endpoint address="10.20.0.10"
        }
    }
}
"#;

fn loader() -> MapLoader {
    let mut l = MapLoader::default();
    for name in ["fleet", "env", "cluster", "role", "pool", "production"] {
        l.files.insert(format!("p/{name}.yaml"), format!("machine:\n  nodeLabels:\n    from-{name}: \"yes\"\n"));
    }
    l
}

#[test]
fn patches_apply_fleet_environment_cluster_role_pool_and_inherit_through_from() {
    let c = compile("fleet.kdl", FLEET, &loader());
    let rendered = fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN);
    assert!(!c.diags.has_errors(), "{rendered}");
    let fleet = c.fleet.unwrap();
    let paths = |env: &str, pool: &str| -> Vec<(String, PatchLevel)> {
        let cl = fleet.environment(env).unwrap().cluster("main").unwrap();
        let p = cl.pools().find(|p| p.name.value == pool).unwrap();
        p.patches.iter().map(|x| (x.path.value.clone(), x.level)).collect()
    };
    let names = |v: Vec<(String, PatchLevel)>| v.into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    assert_eq!(
        paths("staging", "cp"),
        vec![
            ("p/fleet.yaml".into(), PatchLevel::Fleet),
            ("p/env.yaml".into(), PatchLevel::Environment),
            ("p/cluster.yaml".into(), PatchLevel::Cluster),
            ("p/role.yaml".into(), PatchLevel::Role),
        ]
    );
    assert_eq!(names(paths("staging", "system")), ["p/fleet.yaml", "p/env.yaml", "p/cluster.yaml", "p/pool.yaml"]);
    // production states its own environment patch: the group replaces staging's; the
    // cluster's and pools' patches come with the inherited blocks.
    assert_eq!(
        names(paths("production", "system")),
        ["p/fleet.yaml", "p/production.yaml", "p/cluster.yaml", "p/pool.yaml"]
    );
    // Each file is read once and the emitted files follow the order.
    let set = c.artifacts.unwrap();
    let files: Vec<&str> =
        set.paths().filter(|p| p.starts_with("talos/production/main/patches/workers/system/")).collect();
    assert_eq!(
        files,
        [
            "talos/production/main/patches/workers/system/01-fleet.yaml",
            "talos/production/main/patches/workers/system/02-production.yaml",
            "talos/production/main/patches/workers/system/03-cluster.yaml",
            "talos/production/main/patches/workers/system/04-pool.yaml",
        ]
    );
}

#[test]
fn a_missing_patch_file_is_reported_at_its_patch_line() {
    let mut l = loader();
    l.files.remove("p/pool.yaml");
    let c = compile("fleet.kdl", FLEET, &l);
    let d = c.diags.iter().find(|d| d.message.contains("p/pool.yaml")).expect("reported");
    let span = d.span.unwrap();
    assert_eq!(&FLEET[span.start..span.end()], "\"p/pool.yaml\"");
    assert!(c.artifacts.is_none(), "a run with errors writes nothing");
}
