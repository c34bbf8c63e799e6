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

/// Each document is judged with the schemas of the version its receiving cluster pins: an
/// add-on only edge-1 (Kubernetes 1.35.2) embeds is judged with v1.35's core kinds, not
/// v1.36's. The two differ in PodSpec: `workloadRef` exists in 1.35 (k8s.io/kubernetes v1.35.2
/// `api/openapi-spec/v3/apis__apps__v1_openapi.json`, `io.k8s.api.core.v1.PodSpec`) and is
/// gone in 1.36, which has `schedulingGroup` instead (v1.36.3, same file). Judged with 1.36's
/// schemas, the first Deployment would be refused and the second accepted.
#[test]
fn a_1_35_clusters_document_is_judged_with_1_35_schemas() {
    let c = common::compile_file(&common::root().join("fleet.kdl"));
    let mut fleet = c.fleet.unwrap();
    let receivers: Vec<String> = fleet
        .clusters()
        .filter(|(_, c)| c.addons.iter().any(|a| a.value == "talos-ccm"))
        .map(|(_, c)| format!("{} {}", c.name.value, c.kubernetes.value))
        .collect();
    assert_eq!(receivers, ["edge-1 1.35.2"], "the test needs talos-ccm on edge-1 (1.35) alone");
    let deployment = |pod_extra: serde_json::Value| {
        let mut spec = serde_json::json!({"containers": [{"name": "c", "image": "i"}]});
        spec.as_object_mut().unwrap().extend(pod_extra.as_object().unwrap().clone());
        serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "probe"},
            "spec": {"selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": spec}}})
    };
    let judge = |fleet: &mut fleetc::model::Fleet, object: serde_json::Value| {
        let addon = fleet.addons.values_mut().find(|a| a.name.value == "talos-ccm").unwrap();
        addon.manifest.objects = std::sync::Arc::new(vec![object]);
        let (diags, report) = validate::run(fleet, std::iter::empty());
        let found: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
        (found, report)
    };
    let (found, report) =
        judge(&mut fleet, deployment(serde_json::json!({"workloadRef": {"name": "w", "podGroup": "g"}})));
    assert!(found.is_empty(), "a 1.35 field on a 1.35 cluster was refused: {found:#?}");
    assert!(report.judged_by["apps/v1 Deployment"].contains("kubernetes v1.35"), "{report:?}");
    let (found, _) = judge(&mut fleet, deployment(serde_json::json!({"schedulingGroup": {"podGroupName": "g"}})));
    assert!(
        found.iter().any(|m| m.contains("Deployment `probe`") && m.contains("schedulingGroup")),
        "a 1.36-only field on a 1.35 cluster was accepted: {found:#?}"
    );
}

/// The reference fleet pins CABPT 0.6.12 on `mgmt`: its TalosConfigTemplates are judged by
/// the 0.6.12 set, not by 0.6.11's; the Report says which version judged each family.
#[test]
fn the_report_names_the_pinned_version_that_judged_each_family() {
    let c = common::compile_file(&common::root().join("fleet.kdl"));
    let (fleet, set) = (c.fleet.unwrap(), c.artifacts.unwrap());
    let (_, report) = validate::run(&fleet, set.iter());
    let by = |family: &str| report.judged_by.get(family).cloned().unwrap_or_default().into_iter().collect::<Vec<_>>();
    assert_eq!(by("bootstrap.cluster.x-k8s.io/v1alpha3 TalosConfigTemplate"), ["cabpt v0.6.12"], "{report:#?}");
    assert_eq!(by("controlplane.cluster.x-k8s.io/v1alpha3 TalosControlPlane"), ["cacppt v0.5.13"]);
    assert_eq!(by("argoproj.io/v1alpha1 Application"), ["argocd v3.2.1 (for 3.6.3)"]);
    let deployments = by("apps/v1 Deployment");
    assert!(deployments.contains(&"kubernetes v1.35".to_owned()), "{deployments:?}");
    assert!(deployments.contains(&"kubernetes v1.36".to_owned()), "{deployments:?}");
}
