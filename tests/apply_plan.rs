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

/// A starter fleet written into a temporary directory and built, for the first-run tests.
fn built_starter(platform: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for args in [vec!["init", "--quiet", "--platform", platform], vec!["build", "--quiet"]] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
            .current_dir(tmp.path())
            .args(&args)
            .env_clear()
            .env("PATH", "/nonexistent")
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    tmp
}

fn fleetc_in(dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", "/nonexistent")
        .env("NO_COLOR", "1")
        .envs(vars.iter().copied())
        .output()
        .unwrap()
}

/// Issue 28 (newcomer-3 §2.1): `--plan` runs nothing, so a steering variable of the shell
/// (a corporate CA bundle, a CLI config) does not stop it: the whole plan is printed, the
/// refusal noted where it is found and listed again at the end; a real apply still refuses.
#[test]
fn the_plan_with_a_steering_variable_prints_the_plan_and_the_refusal_list() {
    let tmp = built_starter("proxmox");
    let vars = [("AWS_CA_BUNDLE", "/etc/ssl/corp.pem"), ("TF_CLI_CONFIG_FILE", "/etc/tofu.rc")];
    let o = fleetc_in(tmp.path(), &["apply", "home", "--plan"], &vars);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&o.stderr));
    let steps = stdout.lines().filter(|l| l.starts_with("== ")).count();
    assert!(steps >= 5, "the whole plan: {stdout}");
    let tail = stdout.rsplit("apply refuses, until each is fixed").next().unwrap();
    assert!(stdout.contains("apply refuses, until each is fixed"), "{stdout}");
    for name in ["AWS_CA_BUNDLE", "TF_CLI_CONFIG_FILE", "--provider-mirror", "--ca-bundle"] {
        assert!(tail.contains(name), "the final list names {name}: {tail}");
    }
    // A real apply refuses it before anything runs.
    let o = fleetc_in(tmp.path(), &["apply", "home", "--yes"], &vars);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("AWS_CA_BUNDLE"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Issue 28 (newcomer-3 §2.3): the starter's Argo CD manifest is a stand-in; the plan names
/// it, a real apply refuses it (with the others it finds), `--allow-stand-ins` lets it pass.
#[test]
fn a_stand_in_manifest_is_named_by_the_plan_and_refused_by_a_real_apply() {
    let tmp = built_starter("proxmox");
    let o = fleetc_in(tmp.path(), &["apply", "home", "--plan"], &[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    let named = format!("{} is the stand-in `fleetc init` wrote", fleetc::init::ARGOCD_PATH);
    assert!(stdout.contains(&named) && stdout.contains("--allow-stand-ins"), "{stdout}");
    let o = fleetc_in(tmp.path(), &["apply", "home", "--yes"], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && stderr.contains(&named), "{stderr}");
    let o = fleetc_in(tmp.path(), &["apply", "home", "--yes", "--allow-stand-ins"], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "still refused for the sealed inputs and credentials");
    let refusals = stderr.split("stop the apply").nth(1).expect(&stderr);
    assert!(!refusals.contains(&named), "{stderr}");
    assert!(stderr.contains("stand-in allowed (--allow-stand-ins)"), "{stderr}");
    let o = fleetc_in(tmp.path(), &["apply", "home", "--plan", "--allow-stand-ins"], &[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("stand-in allowed (--allow-stand-ins)") && !stdout.contains("apply refuses, until"),
        "{stdout}"
    );
}

/// Issue 28: a provider mirror and a CA bundle are declared with flags, and tofu gets exactly
/// those: TF_CLI_CONFIG_FILE naming a CLI config that holds the one mirror, AWS_CA_BUNDLE and
/// SSL_CERT_FILE naming the bundle. Nothing of the shell's reaches it. (The CLI config's text
/// is `env::tofu_cli_config`'s, unit-tested there; the harness's tofu is not run here.)
#[test]
fn a_declared_provider_mirror_and_ca_bundle_reach_tofu() {
    let tmp = built_starter("proxmox");
    let ca = tmp.path().join("corp-ca.pem");
    std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\n").unwrap();
    let o = fleetc_in(
        tmp.path(),
        &[
            "apply",
            "home",
            "--plan",
            "--provider-mirror",
            "https://mirror.example.org/providers/",
            "--ca-bundle",
            "corp-ca.pem",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&o.stderr));
    let env_note = stdout.lines().find(|l| l.contains("every tofu command below also gets")).expect(&stdout);
    for want in [
        "TF_CLI_CONFIG_FILE=$PRIVATE/tofu-cli.tfrc".to_owned(),
        format!("AWS_CA_BUNDLE={}", ca.display()),
        format!("SSL_CERT_FILE={}", ca.display()),
    ] {
        assert!(env_note.contains(&want), "{want} in {env_note}");
    }
    assert!(stdout.contains("url = \"https://mirror.example.org/providers/\""), "{stdout}");
    // A mirror that is neither https nor a directory is refused, even by the plan.
    let o = fleetc_in(tmp.path(), &["apply", "home", "--plan", "--provider-mirror", "http://mirror.example.org/"], &[]);
    assert!(!o.status.success());
}
