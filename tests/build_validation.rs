//! Validation inside `fleetc build` (issue 16 item 5, `src/emit/validate.rs`): every document
//! a build would write, and every vendored manifest it embeds, is judged against the schema of
//! the pinned version before anything is written; a rejection is
//! `fleet::emit::schema-rejected` naming the file, the document and the field, and the build
//! writes nothing.

#![allow(clippy::disallowed_methods)] // the last test runs the real binary

use crate::common;

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
/// nothing, naming the vendored file and the field's JSON pointer: a ConfigMap, a DaemonSet, a
/// Service and a ClusterRole with a wrongly typed field (the failing goldens
/// `golden/emit-schema-rejected{,-daemonset,-service,-clusterrole}` show the diagnostics).
#[test]
fn a_rejected_build_writes_nothing() {
    for (case, pointer) in [
        ("emit-schema-rejected", "/metadata/labels/app.kubernetes.io~1version"),
        ("emit-schema-rejected-daemonset", "DaemonSet `cilium`): `/spec/revisionHistoryLimit`"),
        ("emit-schema-rejected-service", "Service `hubble-peer`): `/spec/ports/0/port`"),
        ("emit-schema-rejected-clusterrole", "ClusterRole `cilium`): `/rules/0/verbs`"),
    ] {
        let case = common::root().join("golden").join(case);
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
        assert!(err.contains("vendor/cilium.yaml") && err.contains(pointer), "{pointer}: {err}");
        assert!(!dir.path().join("out").exists(), "a refused build wrote out/");
    }
}

/// Every object of the reference fleet's vendored manifests is judged (issue 34 §2): the
/// built-in kinds with their cluster's minor (DaemonSet, Service, the RBAC kinds, CSIDriver,
/// StorageClass, …) and the Talos CCM's `talos.dev` ServiceAccount with the CRD Talos applies.
#[test]
fn every_vendored_object_of_the_reference_fleet_is_judged() {
    let c = common::compile_file(&common::root().join("fleet.kdl"));
    let fleet = c.fleet.unwrap();
    let (diags, report) = validate::run(&fleet, std::iter::empty());
    let found: Vec<String> = diags.iter().map(|d| format!("{} {}", d.code.name, d.message)).collect();
    assert!(found.is_empty(), "{found:#?}");
    assert!(report.unjudged.is_empty(), "vendored objects not judged: {:?}", report.unjudged);
    for family in [
        "apps/v1 DaemonSet",
        "v1 Service",
        "rbac.authorization.k8s.io/v1 ClusterRole",
        "rbac.authorization.k8s.io/v1 RoleBinding",
        "storage.k8s.io/v1 CSIDriver",
        "storage.k8s.io/v1 StorageClass",
        "talos.dev/v1alpha1 ServiceAccount",
    ] {
        assert!(report.judged_by.contains_key(family), "{family} not judged: {report:#?}");
    }
}

/// A custom resource whose kind schemas/ lacks is judged with the CRD a vendored manifest of
/// the same cluster installs (strictly: a wrong type and an unknown field refused); one whose
/// CRD no manifest installs is not judged and is warned about (`fleet::emit::schema-missing`),
/// with the manifest and the document.
#[test]
fn a_custom_resource_is_judged_with_the_crd_the_fleet_installs_or_warned_about() {
    let c = common::compile_file(&common::root().join("fleet.kdl"));
    let mut fleet = c.fleet.unwrap();
    let crd = serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.org"},
        "spec": {"group": "example.org", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object",
                "properties": {"spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "minimum": 1, "exclusiveMinimum": true},
                    "port": {"x-kubernetes-int-or-string": true},
                    "note": {"type": "string", "nullable": true}}}}}}}]}});
    let widget = |spec: serde_json::Value| serde_json::json!({"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec});
    let mut judge = |objects: Vec<serde_json::Value>| {
        let addon = fleet.addons.values_mut().find(|a| a.name.value == "talos-ccm").unwrap();
        addon.manifest.objects = std::sync::Arc::new(objects);
        let (diags, report) = validate::run(&fleet, std::iter::empty());
        (diags.iter().map(|d| format!("{} {}", d.code.name, d.message)).collect::<Vec<_>>(), report)
    };
    let (found, report) =
        judge(vec![crd.clone(), widget(serde_json::json!({"size": 2, "port": "http", "note": null}))]);
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(
        report.judged_by["example.org/v1 Widget"].iter().collect::<Vec<_>>(),
        ["the CRD in vendor/talos-ccm-1.11.0.yaml"]
    );
    for (spec, pointer) in [
        (serde_json::json!({"size": "two"}), "`/spec/size`"),
        (serde_json::json!({"size": 1}), "`/spec/size`"),
        (serde_json::json!({"port": true}), "`/spec/port`"),
        (serde_json::json!({"colour": "red"}), "`/spec`"),
    ] {
        let (found, _) = judge(vec![crd.clone(), widget(spec.clone())]);
        assert!(
            found
                .iter()
                .any(|m| m.starts_with("fleet::emit::schema-rejected vendor/talos-ccm-1.11.0.yaml, document 2")
                    && m.contains(pointer)),
            "{spec}: {found:#?}"
        );
    }
    let (found, report) = judge(vec![widget(serde_json::json!({"size": 2}))]);
    assert_eq!(
        found,
        ["fleet::emit::schema-missing vendor/talos-ccm-1.11.0.yaml: 1 object of a kind fleetc has no schema for, \
          not judged: document 1 (example.org/v1 Widget `w`)"]
    );
    assert_eq!(report.unjudged["example.org/v1 Widget"], 1);
}
