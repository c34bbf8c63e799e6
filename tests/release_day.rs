//! The release-day procedure's artefacts (docs/talos.md, "Release day"), row by row: every
//! `talos` row of the versions table (`versions/talos.kdl`) has its schema and
//! `deprecated.json` from machinery (`schemas/talos/vX.Y/`, embedded), its extension table,
//! a harness module requiring that minor's machinery and listed by `oracles/talos/check`, a
//! consumer row for the machinery its documents need or a lagging consumer named, and a golden
//! fleet pinned to it (behind `allow-prerelease=#true` while the row is a pre-release's).

use std::fs;

use crate::common;
use fleetc::upstream::talos::{Machinery, table};

fn minor(m: (u32, u32)) -> String {
    format!("v{}.{}", m.0, m.1)
}

#[test]
fn every_talos_row_has_the_artefacts_of_the_procedure() {
    let root = common::root();
    let check = fs::read_to_string(root.join("oracles/talos/check")).unwrap();
    let produce = fs::read_to_string(root.join("oracles/schemas/produce.py")).unwrap();
    let goldens: Vec<(String, String)> = fs::read_dir(root.join("golden"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path().join("fleet.kdl");
            fs::read_to_string(&p).ok().map(|t| (p.display().to_string(), t))
        })
        .collect();
    let t = table();
    let mut missing = Vec::new();
    for r in &t.talos {
        let v = minor(r.minor);
        // Step 3: the schema and deprecated.json from machinery, produced and embedded.
        for f in ["config.schema.json", "deprecated.json"] {
            if !root.join(format!("schemas/talos/{v}/{f}")).is_file() {
                missing.push(format!("{v}: schemas/talos/{v}/{f}"));
            }
        }
        if !fleetc::upstream::schemas::has_talos_schema(r.minor) {
            missing.push(format!("{v}: upstream::schemas::TALOS_SCHEMAS has no {v}"));
        }
        // The schema's machinery is the newest patch the row names or older (a served one).
        if !produce.contains(&format!("(\"{v}\", \"v{}.{}.", r.minor.0, r.minor.1)) {
            missing.push(format!("{v}: oracles/schemas/produce.py TALOS has no {v} machinery"));
        }
        // Step 4: the extension table.
        if fleetc::upstream::extensions::official(r.minor).is_none() {
            missing.push(format!("{v}: src/upstream/extensions.rs has no {v} table"));
        }
        // Step 7: the harness module with that minor's machinery, listed by the check.
        let gomod = fs::read_to_string(root.join(format!("oracles/talos/{v}/go.mod"))).unwrap_or_default();
        let requires = gomod.lines().any(|l| {
            let mut w = l.split_whitespace();
            w.next() == Some("github.com/siderolabs/talos/pkg/machinery")
                && w.next().is_some_and(|ver| ver.starts_with(&format!("{v}.")))
        });
        if !requires {
            missing.push(format!("{v}: oracles/talos/{v}/go.mod does not require machinery {v}.x"));
        }
        if !check.lines().any(|l| l.trim_start().starts_with("minors=(") && l.contains(&v)) {
            missing.push(format!("{v}: oracles/talos/check `minors` has no {v}"));
        }
        // Step 6: the documents' minor is one some consumer's machinery speaks (talosctl's,
        // the node's own, always does); every consumer row names its source.
        let spoken = t.consumers.iter().any(|c| match c.machinery {
            Machinery::Node => true,
            Machinery::Minor(m) => m >= r.documents,
        });
        if !spoken {
            missing.push(format!("{v}: no consumer row runs machinery {}", minor(r.documents)));
        }
        // Step 7: a golden fleet pinned to the minor, behind the flag while it is a pre-release.
        let pin = format!("talos \"v{}.{}.", r.minor.0, r.minor.1);
        let pinned: Vec<&(String, String)> = goldens.iter().filter(|(_, text)| text.contains(&pin)).collect();
        if pinned.is_empty() {
            missing.push(format!("{v}: no golden/*/fleet.kdl pins Talos {v}"));
        }
        if r.prerelease && !pinned.iter().any(|(_, text)| text.contains("allow-prerelease=#true")) {
            missing.push(format!("{v}: a pre-release row and no golden with allow-prerelease=#true"));
        }
    }
    for c in &t.consumers {
        assert!(!c.source.trim().is_empty(), "consumer {} {} has no source", c.name, c.release);
    }
    assert!(
        missing.is_empty(),
        "release-day artefacts missing (docs/talos.md, \"Release day\"):\n{}",
        missing.join("\n")
    );
}

/// The 1.14 row is the native model behind the 1.13 contract, and the defaults it writes are
/// the ones the docs list (docs/talos.md, "The 1.14 model").
#[test]
fn the_1_14_row_writes_the_1_14_defaults_under_the_1_13_contract() {
    let r = table().row((1, 14)).expect("a 1.14 row");
    assert_eq!(r.documents, (1, 14));
    assert_eq!(r.contract, (1, 13));
    for kind in ["SecurityProfileConfig", "FilesystemTrimConfig", "BondConfig", "VLANConfig"] {
        assert!(r.kinds.iter().any(|k| k == kind), "1.14 kinds lack {kind}");
    }
    let kinds: Vec<&str> = fleetc::emit::talos::model_defaults((1, 14)).iter().map(|d| d.kind()).collect();
    assert_eq!(kinds, ["SecurityProfileConfig", "FilesystemTrimConfig"]);
    assert!(fleetc::emit::talos::model_defaults((1, 13)).is_empty());
    let doc = fs::read_to_string(common::root().join("docs/talos.md")).unwrap();
    assert!(doc.contains("### The 1.14 model") && doc.contains("### Release day"));
}

/// Which model a 1.14 cluster gets follows the consumer that builds its configs: talosctl on
/// bare metal (the node's machinery) gets the 1.14 model, the talos provider 0.11 (machinery
/// 1.13.0) the 1.13 model, and every generator is told the 1.13 contract.
#[test]
fn a_1_14_cluster_gets_the_model_of_its_consumer() {
    use fleetc::upstream::talos::{Consumer, cluster_consumer, cluster_documents, consumer_contract};
    for (golden, consumer, model) in [
        ("metal-talos-1-14", Consumer::Talosctl, (1, 14)),
        ("talos-1-14", fleetc::upstream::talos::tofu_consumer(), (1, 13)),
    ] {
        let c = common::compile_file(&common::root().join(format!("golden/{golden}/fleet.kdl")));
        let fleet = c.fleet.expect("the golden compiles");
        for (env, cluster) in fleet.clusters() {
            assert_eq!(cluster_consumer(&fleet, env, cluster), consumer, "{golden}");
            assert_eq!(cluster_documents(&fleet, env, cluster), model, "{golden}");
            assert_eq!(consumer_contract(consumer, cluster.talos.value), "v1.13", "{golden}");
        }
    }
}
