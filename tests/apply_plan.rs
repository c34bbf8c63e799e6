//! `fleetc apply staging --plan` on the reference fleet prints the full ordered plan and runs
//! nothing: the binary runs with a PATH holding only fake tools that would leave a mark, and
//! its output is compared with `tests/apply-plan/staging.txt` (`UPDATE_GOLDEN=1` re-blesses;
//! review the diff).
#![allow(clippy::disallowed_methods)] // runs the real binary

use std::path::Path;

#[cfg(unix)]
#[test]
fn apply_staging_plan_is_the_golden_plan_and_runs_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = tempfile::tempdir().unwrap();
    let marks = bin.path().join("ran");
    for tool in ["tofu", "talosctl", "kubectl", "curl", "qemu-img", "scw"] {
        let p = bin.path().join(tool);
        std::fs::write(&p, format!("#!/bin/sh\necho {tool} >> '{}'\n", marks.display())).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .current_dir(root)
        .args(["apply", "staging", "--plan"])
        .env_clear()
        .env("PATH", bin.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&o.stderr));
    assert!(!marks.exists(), "--plan ran {}", std::fs::read_to_string(&marks).unwrap_or_default());
    let golden = root.join("tests/apply-plan/staging.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &stdout).unwrap();
    }
    let expected = std::fs::read_to_string(&golden).unwrap_or_default();
    if stdout != expected {
        let diff = similar::TextDiff::from_lines(&expected, &stdout);
        panic!("the plan differs from {} (UPDATE_GOLDEN=1 re-blesses):\n{}", golden.display(), diff.unified_diff());
    }
    // Argo CD goes through the cloud root's `kubernetes_api` (issue #8): the gateway's address
    // and the cluster's PAT port, not a placeholder.
    assert!(stdout.contains(" --server=https://51.15.200.10:6443 "), "{stdout}");
    assert!(!stdout.contains(".kubernetes_api>"), "{stdout}");
    // The plan is complete: every step, in order.
    let steps: Vec<&str> = stdout.lines().filter(|l| l.starts_with("== ")).collect();
    assert_eq!(steps.len(), 8, "{steps:#?}");
}

/// A Proxmox cloud root has no switch (no gateway in front of its nodes): `fleetc apply lab`
/// never passes it `talos_api_open` or `kubernetes_api_open`, which it does not declare.
#[test]
fn a_proxmox_cloud_root_gets_no_switch_variable() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .current_dir(root)
        .args(["apply", "lab", "--plan", "--color", "never"])
        .env_clear()
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&o.stderr));
    let cloud: Vec<&str> = stdout.lines().filter(|l| l.contains("/tofu/lab/cloud ")).collect();
    assert!(cloud.iter().any(|l| l.contains(" plan ")), "{stdout}");
    for l in &cloud {
        assert!(!l.contains("_api_open"), "{l}");
    }
    let declared = std::fs::read_to_string(root.join("out/tofu/lab/cloud/variables.tf")).unwrap();
    assert!(!declared.contains("talos_api_open"), "the test's premise: the root declares no switch");
}

/// Issue 15: `fleetc apply <env> --plan --format json` (the `--format` of build and check)
/// gives CI the same plan as one JSON document: every step in order with its commands and
/// notes, and `ok`.
#[test]
fn the_plan_is_machine_readable_with_format_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .current_dir(root)
        .args(["apply", "staging", "--plan", "--format", "json"])
        .env_clear()
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document on stdout");
    assert_eq!(v["environment"], "staging");
    assert_eq!(v["ok"], true);
    assert!(v["error"].is_null());
    let steps = v["steps"].as_array().unwrap();
    let titles: Vec<&str> = steps.iter().filter_map(|s| s["step"].as_str()).filter(|t| !t.is_empty()).collect();
    assert_eq!(titles.len(), 8, "{titles:#?}");
    let runs: Vec<&str> =
        steps.iter().flat_map(|s| s["entries"].as_array().unwrap()).filter_map(|e| e["run"].as_str()).collect();
    assert!(runs.iter().any(|r| r.contains("-target=module.main.talos_machine_configuration_apply.cp_3")));
    // The plan text and the JSON carry the same commands.
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .current_dir(root)
        .args(["apply", "staging", "--plan"])
        .env_clear()
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let text_runs: Vec<String> = String::from_utf8(text.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("$ ").map(str::to_owned))
        .collect();
    assert_eq!(runs, text_runs);
}
