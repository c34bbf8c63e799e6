//! Validation inside `fleetc build` (issue 16 item 5, `src/emit/validate.rs`): every document
//! a build would write, and every vendored manifest it embeds, is judged against the schema of
//! the pinned version before anything is written; a rejection is
//! `fleet::emit::schema-rejected` naming the file, the document and the field, and the build
//! writes nothing.

#![allow(clippy::disallowed_methods)] // the last test runs the real binary

mod common;

use std::fs;
use std::process::Command;

use fleetc::artifacts::ArtifactSet;
use fleetc::emit::validate;

fn rejected(fleet: &fleetc::model::Fleet, set: &ArtifactSet) -> Vec<String> {
    let (diags, _) = validate::run(fleet, set.iter());
    diags.iter().map(|d| format!("{} {}", d.code.name, d.message)).collect()
}

/// The reference fleet and every golden fleet that builds: accepted, and the kinds that must
/// be judged are judged (a validator that judges nothing would pass too).
#[test]
fn every_build_is_accepted_and_judged() {
    let c = common::compile_file(&common::root().join("fleet.kdl"));
    let (fleet, set) = (c.fleet.unwrap(), c.artifacts.unwrap());
    let (diags, report) = validate::run(&fleet, set.iter());
    assert!(diags.is_empty(), "{:?}", rejected(&fleet, &set));
    eprintln!("{report:?}");
    assert!(report.judged > 100, "{report:?}");
    assert!(report.distinct < report.documents, "identical documents are judged once: {report:?}");
    for f in common::golden_fleets() {
        let c = common::compile_file(&f);
        assert!(!c.diags.has_errors(), "{}", f.display());
    }
}

/// An emitted document its schema rejects: a Talos document with an unknown field, a
/// Cluster API object with a wrongly typed field. Each is named with its file, document and
/// JSON pointer.
#[test]
fn an_emitted_document_the_schema_rejects_is_named() {
    let c = common::compile_file(&common::root().join("fleet.kdl"));
    let (fleet, set) = (c.fleet.unwrap(), c.artifacts.unwrap());
    let node = set.paths().find(|p| p.starts_with("talos/") && p.contains("/nodes/")).unwrap().to_owned();
    let capi = set.paths().find(|p| p.starts_with("capi/") && p.ends_with("/health.yaml")).unwrap().to_owned();
    let mut broken = ArtifactSet::new();
    for (p, b) in set.iter() {
        let text = String::from_utf8(b.to_vec()).unwrap();
        let text = if p == node {
            text.replacen("hostname:", "hostnam:", 1)
        } else if p == capi {
            // `nodeStartupTimeoutSeconds` is an integer in v1beta2.
            text.replacen("nodeStartupTimeoutSeconds: 600", "nodeStartupTimeoutSeconds: 10m", 1)
        } else {
            text
        };
        broken.insert(p, text).unwrap();
    }
    let found = rejected(&fleet, &broken);
    assert!(
        found
            .iter()
            .any(|m| m.starts_with("fleet::emit::schema-rejected") && m.contains(&format!("out/{node}, document 1"))),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|m| m.contains(&format!("out/{capi}")) && m.contains("`/spec/checks/nodeStartupTimeoutSeconds`")),
        "{found:#?}"
    );
}

/// `fleetc build` of a fleet whose vendored manifest its schema rejects fails and writes
/// nothing (the failing golden `golden/emit-schema-rejected` shows the diagnostic).
#[test]
fn a_rejected_build_writes_nothing() {
    let case = common::root().join("golden/emit-schema-rejected");
    let dir = tempfile::tempdir().unwrap();
    fs::copy(case.join("fleet.kdl"), dir.path().join("fleet.kdl")).unwrap();
    for sub in ["vendor", "apps/whoami"] {
        fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in fs::read_dir(case.join(sub)).unwrap().flatten() {
            fs::copy(e.path(), dir.path().join(sub).join(e.file_name())).unwrap();
        }
    }
    let o = Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .args(["--diagnostics-format", "short", "build"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("fleet::emit::schema-rejected"), "{err}");
    assert!(err.contains("/metadata/labels/app.kubernetes.io~1version"), "{err}");
    assert!(!dir.path().join("out").exists(), "a refused build wrote out/");
}
