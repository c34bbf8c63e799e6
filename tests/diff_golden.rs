//! Golden diff cases: `golden/diff-<case>/` holds `base.kdl` (the fleet before) and
//! `fleet.kdl` (after), and the review `fleetc diff` prints for the change in each format:
//! `expected.unified`, `expected.stat`, `expected.md`, `expected.json` (no colour, the
//! default markdown cap). Compared byte for byte; `UPDATE_GOLDEN=1 cargo test --test
//! integration diff_golden::` rewrites them; review them with `git diff`. They grow with the emitters: a
//! family that lands adds its files to the diffs (re-bless, and read what changed).

use crate::common;

use std::fs;
use std::path::Path;

use fleetc::diag::render::{Style, text};
use fleetc::review::render::{json, markdown, stat, unified};
use fleetc::review::review;

fn update() -> bool {
    std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1")
}

fn build(path: &Path) -> Result<(fleetc::artifacts::ArtifactSet, fleetc::model::Fleet), String> {
    let c = common::compile_file(path);
    let rendered = text(&c.diags, &c.sources, Style::PLAIN);
    match (c.artifacts, c.fleet) {
        (Some(a), Some(f)) if !c.diags.has_errors() => Ok((a, f)),
        _ => Err(format!("{} has errors:\n{rendered}", path.display())),
    }
}

fn run_case(dir: &Path) -> Result<(), String> {
    let (old_set, old_fleet) = build(&dir.join("base.kdl"))?;
    let (new_set, new_fleet) = build(&dir.join("fleet.kdl"))?;
    let r = review("base.kdl".to_owned(), &old_set, Some(&old_fleet), &new_set, &new_fleet);
    if r.impacts.is_empty() {
        return Err("a diff case must have an impact".to_owned());
    }
    let outputs = [
        ("expected.unified", unified::render(&r, false)),
        ("expected.stat", stat::render(&r, false)),
        ("expected.md", markdown::render(&r, markdown::DEFAULT_CAP)),
        ("expected.json", json::render(&r)),
    ];
    let mut errors = Vec::new();
    for (file, actual) in outputs {
        let path = dir.join(file);
        if update() {
            fs::write(&path, &actual).map_err(|e| e.to_string())?;
            continue;
        }
        match fs::read_to_string(&path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => errors.push(format!(
                "{file} differs:\n{}",
                similar::TextDiff::from_lines(&expected, &actual).unified_diff().header("expected", "actual")
            )),
            Err(_) => errors.push(format!("{file} is missing; got:\n{actual}")),
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors.join("\n")) }
}

#[test]
fn diff_golden_cases() {
    let mut cases: Vec<_> = fs::read_dir(common::root().join("golden"))
        .expect("golden/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("base.kdl").exists())
        .collect();
    cases.sort();
    let names: Vec<String> = cases.iter().map(|c| c.file_name().unwrap().to_string_lossy().into_owned()).collect();
    for required in [
        "diff-worker-count",
        "diff-talos-upgrade",
        "diff-talos-upgrade-1-14",
        "diff-new-app",
        "diff-rename-moved",
        "diff-rename-destroy",
        "diff-sealed",
        "diff-data-disk-shrink",
        "diff-talos-patch-reboot",
        "diff-talos-patch-reboot-upgrade",
        "diff-talos-patch-overrides",
    ] {
        assert!(names.iter().any(|n| n == required), "golden case {required} is missing");
    }
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = run_case(case) {
            failures.push(format!("── {} ──\n{e}", case.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(failures.is_empty(), "{} of {} diff cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    eprintln!("{} diff cases passed", cases.len());
}

/// The impact each required case exists for, so that a re-blessed golden cannot lose it.
#[test]
fn each_case_shows_the_impact_it_is_for() {
    let expect: &[(&str, &str, &str, &str)] = &[
        ("diff-worker-count", "worker-count", "info", "nodes added: `main-system-3`"),
        ("diff-talos-upgrade", "talos-version", "warning", "path v1.12.6 → v1.12.11 → v1.13.9"),
        // hidden-fleets-3 D1: the secrets' talos_version moves forward with Talos 1.14.
        (
            "diff-talos-upgrade-1-14",
            "secrets-version",
            "info",
            "`talos_machine_secrets.talos_version` v1.13.9 → v1.14.1: updated in place",
        ),
        ("diff-talos-upgrade", "kubernetes-version", "warning", "1.34 → 1.35.2"),
        ("diff-new-app", "apps", "info", "new app `web` in namespace `web`"),
        ("diff-rename-moved", "lifecycle", "info", "cluster `core` renamed from `main` with `was=`"),
        (
            "diff-rename-destroy",
            "lifecycle",
            "danger",
            "cluster `main` removed and cluster `core` added, with no `was=`",
        ),
        ("diff-rename-destroy", "lifecycle", "danger", "bucket `app` removed and bucket `assets` added"),
        ("diff-sealed", "sealed-inputs", "danger", "a new cluster identity"),
        ("diff-schematic", "install-image", "warning", "no effect on running nodes until they are upgraded"),
        ("diff-control-plane", "machine-arguments", "danger", "etcd loses quorum"),
        (
            "diff-talos-upgrade",
            "machine-arguments",
            "info",
            "no machine is replaced: the roots ignore `scaleway_instance_server.image`",
        ),
        (
            "diff-data-disk-shrink",
            "machine-arguments",
            "danger",
            "replaces the data volume (EPHEMERAL, and etcd's data on a control-plane node) of `main-cp-1`",
        ),
        (
            "diff-data-disk-shrink",
            "machine-arguments",
            "danger",
            "of `main-system-2` → `scaleway_block_volume.size_in_gb` forces a new resource",
        ),
        ("diff-control-plane", "control-plane-count", "warning", "etcd quorum changes"),
        ("diff-apply-reboot", "apply-mode", "warning", "one at a time with `talosctl health` after each"),
        ("diff-apply-reboot", "ephemeral-volume", "warning", "only at first provisioning"),
        (
            "diff-talos-live",
            "talos-fields",
            "info",
            "Talos field `machine.certSANs` changed (common.yaml) → applied live",
        ),
        ("diff-talos-live", "talos-fields", "info", "`machine.nodeLabels.\"node.demo.example/tier\"` changed"),
        // Issue 27: a reboot-needing patch change names each node that reboots, alone and
        // bundled with a Talos minor upgrade (newcomer-3.md §4: it used to get no line).
        (
            "diff-talos-patch-reboot",
            "talos-fields",
            "warning",
            "`machine.udev.rules` changed (patches/workers/system/01-udev.yaml) → reboot: Talos v1.13.9 cannot apply it live (F10); `fleetc apply staging` (the cluster root) reboots `main-system-1`, `main-system-2`",
        ),
        (
            "diff-talos-patch-reboot-upgrade",
            "talos-fields",
            "warning",
            "reboots `main-system-1`, `main-system-2`, one at a time, on the Talos v1.13.9 they run then",
        ),
        ("diff-talos-patch-reboot-upgrade", "talos-version", "warning", "Talos v1.13.9 → v1.14.1"),
        ("diff-talos-patch-overrides", "talos-fields", "warning", "rule R21 overridden on purpose for `main-cp-1`"),
        // A worker keeps the taints it registered with: NodeRestriction refuses its own change.
        (
            "diff-worker-taint",
            "talos-fields",
            "warning",
            "`machine.nodeTaints.dedicated` changed (workers/system.yaml) → only when a node registers",
        ),
    ];
    for (case, rule, severity, fragment) in expect {
        let dir = common::root().join("golden").join(case);
        let (o, of) = build(&dir.join("base.kdl")).unwrap();
        let (n, nf) = build(&dir.join("fleet.kdl")).unwrap();
        let r = review("base.kdl".to_owned(), &o, Some(&of), &n, &nf);
        assert!(
            r.impacts
                .iter()
                .any(|i| i.rule == *rule && i.severity.as_str() == *severity && i.line().contains(fragment)),
            "{case}: no {severity} `{rule}` impact containing `{fragment}`:\n{:#?}",
            r.impacts
        );
    }
}
