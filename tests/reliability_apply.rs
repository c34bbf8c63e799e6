//! Issue 19, items 3 and 4, against the real binary and fake tools
//! (`tests/reliability_support`): what each child's environment holds, the signal matrix
//! (SIGINT, SIGTERM, SIGHUP at every command inside a switch window), a hang inside a window
//! (its deadline kills it and the switch closes), and the steering variables refused before
//! any tool runs. The figures these tests assert are those docs/reliability.md records.
#![cfg(unix)]
#![allow(clippy::disallowed_methods)]

use crate::reliability_support;

/// `RELIABILITY_FULL=1` runs every case of the matrices; by default each signal takes every
/// third window command (offset by the signal, so the three together still cover every
/// command once) and the hang test every third, to keep the CI run short: the debug binary
/// compiles the fleet on every run (about a second each).
fn sample(window: &[usize], offset: usize) -> Vec<usize> {
    if std::env::var_os("RELIABILITY_FULL").is_some() {
        return window.to_vec();
    }
    window.iter().enumerate().filter(|(i, _)| i % 3 == offset).map(|(_, &w)| w).collect()
}

use reliability_support::{Fakes, Fixture, SECRET_VALUES, apply};

/// What each tool may hold, by variable-name prefix: everything else of the parent's
/// environment is absent (PATH, HOME, TMPDIR, the locale are the allow-list).
fn allowed(tool: &str, name: &str) -> bool {
    const BASE: &[&str] = &["PATH", "HOME", "TMPDIR", "PWD", "SHLVL", "_", "OLDPWD"];
    if BASE.contains(&name) {
        return true;
    }
    match tool {
        // The S3 backend's pair, the provider's, the passphrase, the cluster root's inputs.
        "tofu" => {
            [
                "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY",
                "SCW_ACCESS_KEY",
                "SCW_SECRET_KEY",
                "SCW_CONFIG_PATH",
                "TF_IN_AUTOMATION",
                "TF_VAR_state_passphrase",
            ]
            .contains(&name)
                || name.starts_with("TF_VAR_talos_secrets_files")
                || name == "TF_VAR_scaleway_credentials"
                || name == "TF_VAR_apply_mode"
        }
        "scw" => ["SCW_ACCESS_KEY", "SCW_SECRET_KEY", "SCW_CONFIG_PATH"].contains(&name),
        // The operator's agent, which holds the key the gateway's SSH bastion takes.
        "ssh" => name == "SSH_AUTH_SOCK",
        _ => false,
    }
}

#[test]
fn no_child_holds_a_secret_it_does_not_need() {
    let fx = Fixture::new();
    let work = tempfile::tempdir().unwrap();
    let fakes = Fakes::new(work.path(), &fx);
    let run = apply(&fx, &fakes, &work.path().join("tmp"), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.private_left, 0);
    let envs = fakes.envs();
    assert!(envs.len() >= 30, "{} calls", envs.len());
    let mut exposures = Vec::new();
    for (n, tool, vars) in &envs {
        for (k, v) in vars {
            if !allowed(tool, k) {
                exposures.push(format!("call {n} {tool}: {k}"));
            }
            // A secret value may reach only the tool that uses it, under the tool's name.
            if SECRET_VALUES.iter().any(|s| v.contains(s)) && !allowed(tool, k) {
                exposures.push(format!("call {n} {tool}: the value of {k}"));
            }
            if v.contains("ambient-token-value-77") || k.starts_with("FLEETC_") {
                exposures.push(format!("call {n} {tool}: {k} from fleetc's own environment"));
            }
        }
    }
    assert!(exposures.is_empty(), "secrets exposed in children's environments:\n{}", exposures.join("\n"));
    // And none on a command line.
    for c in fakes.calls() {
        assert!(!SECRET_VALUES.iter().any(|s| c.contains(s)), "a secret in argv: {c}");
    }
    // Every tool ran at least once, and tofu got what it needs.
    for tool in ["tofu", "talosctl", "kubectl", "curl", "scw", "ssh"] {
        assert!(envs.iter().any(|(_, t, _)| t == tool), "{tool} never ran");
    }
    let tofu = envs.iter().find(|(_, t, _)| t == "tofu").unwrap();
    assert!(tofu.2.iter().any(|(k, v)| k == "AWS_ACCESS_KEY_ID" && v == "STATEACCESSKEYVALUE01"), "{:?}", tofu.2);
}

#[test]
fn steering_variables_are_refused_before_any_tool_runs() {
    let fx = Fixture::new();
    let work = tempfile::tempdir().unwrap();
    let fakes = Fakes::new(work.path(), &fx);
    for (name, value) in [
        ("TF_WORKSPACE", "other"),
        ("TF_CLI_ARGS_apply", "-refresh=false"),
        ("TF_VAR_talos_api_open", "true"),
        ("TF_DATA_DIR", "/tmp/x"),
        ("AWS_PROFILE", "prod"),
        ("AWS_SESSION_TOKEN", ""),
        ("AWS_ENDPOINT_URL_S3", "https://evil.example"),
        ("KUBECONFIG", "/tmp/k"),
        ("TALOSCONFIG", "/tmp/t"),
        ("SCW_PROFILE", ""),
    ] {
        fakes.reset(None);
        let run = apply(&fx, &fakes, &work.path().join("tmp"), &[(name, value)]);
        assert_eq!(run.code, Some(1), "{name}: {}", run.stderr);
        assert!(run.stderr.contains(name) && run.stderr.contains("unset"), "{name}: {}", run.stderr);
        assert!(fakes.calls().is_empty(), "{name}: {:?}", fakes.calls());
    }
    // The old spelling of the state bucket's key is refused with the new name.
    let mut fx = fx;
    fx.env.remove("FLEETC_STATE_ACCESS_KEY");
    fakes.reset(None);
    let run = apply(&fx, &fakes, &work.path().join("tmp"), &[]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("FLEETC_STATE_ACCESS_KEY"), "{}", run.stderr);
    assert!(fakes.calls().is_empty());
}

/// Every signal at every command inside a switch window: fleetc forwards it to the tool,
/// closes the switch, removes the private directory, and exits with 128 + the signal.
#[test]
fn a_signal_inside_a_window_closes_the_switch_and_removes_the_private_directory() {
    let fx = Fixture::new();
    let work = tempfile::tempdir().unwrap();
    let fakes = Fakes::new(work.path(), &fx);
    let tmp = work.path().join("tmp");
    assert_eq!(apply(&fx, &fakes, &tmp, &[]).code, Some(0));
    let window = fakes.window_calls();
    assert!(window.len() >= 20, "{window:?}");
    let mut left_open = Vec::new();
    let mut runs = 0;
    for (offset, sig) in ["INT", "TERM", "HUP"].into_iter().enumerate() {
        let number = match sig {
            "INT" => libc::SIGINT,
            "TERM" => libc::SIGTERM,
            _ => libc::SIGHUP,
        };
        for at in sample(&window, offset) {
            runs += 1;
            fakes.reset(Some((at, sig)));
            let run = apply(&fx, &fakes, &tmp, &[]);
            let what = format!("SIG{sig} at call {at} ({})", fakes.calls().get(at - 1).cloned().unwrap_or_default());
            if fakes.open("talos") || fakes.open("kubernetes") || fakes.open("tunnel") {
                left_open.push(format!("{what}: switch or tunnel open"));
            }
            if run.private_left != 0 {
                left_open.push(format!("{what}: private directory left"));
            }
            let closing = fakes.calls().get(at - 1).is_some_and(|c| is_cleanup(c));
            if !closing && run.code != Some(128 + number) {
                left_open.push(format!("{what}: exit {:?} {:?}\n{}", run.code, run.signal, run.stderr));
            }
            // Nothing but the cleanup ran after the signal.
            let after: Vec<String> = fakes.calls().into_iter().skip(at).collect();
            if !closing && after.iter().any(|c| !is_cleanup(c)) {
                left_open.push(format!("{what}: ran after the signal: {after:?}"));
            }
        }
    }
    assert!(left_open.is_empty(), "{} of {runs} runs:\n{}", left_open.len(), left_open.join("\n"));
    eprintln!(
        "signal matrix: {runs} runs, {} window commands, 0 switches left open, 0 private directories left",
        window.len()
    );
}

/// A tool that hangs inside a window is killed at its deadline, and the switch closes.
#[test]
fn a_hang_inside_a_window_meets_its_deadline_and_the_switch_closes() {
    let fx = Fixture::new();
    let work = tempfile::tempdir().unwrap();
    let fakes = Fakes::new(work.path(), &fx);
    let tmp = work.path().join("tmp");
    assert_eq!(apply(&fx, &fakes, &tmp, &[]).code, Some(0));
    let window = fakes.window_calls();
    let calls = fakes.calls();
    let mut bad = Vec::new();
    let hangs = sample(&window, 1);
    for &at in &hangs {
        let line = calls[at - 1].clone();
        let closing = line.contains("-auto-approve")
            && line.contains("talos_api_open=false")
            && line.contains("kubernetes_api_open=false");
        fakes.reset(Some((at, "hang")));
        let run = apply(&fx, &fakes, &tmp, &[("FLEETC_STEP_TIMEOUT", "1")]);
        if run.code != Some(1) || !run.stderr.contains("deadline") {
            bad.push(format!("hang at {at} ({line}): exit {:?}\n{}", run.code, run.stderr));
        }
        // A hung close is killed too; the failure then says to close by hand.
        if closing {
            if !run.stderr.contains("close it by hand") {
                bad.push(format!("hung close at {at} not reported as open:\n{}", run.stderr));
            }
        } else if fakes.open("talos") || fakes.open("kubernetes") || fakes.open("tunnel") {
            bad.push(format!("hang at {at} ({line}): switch or tunnel left open"));
        }
        if run.private_left != 0 {
            bad.push(format!("hang at {at}: private directory left"));
        }
    }
    assert!(bad.is_empty(), "{} of {} hangs:\n{}", bad.len(), hangs.len(), bad.join("\n"));
    eprintln!("hangs: {} runs, every one killed at its deadline, 0 switches left open", hangs.len());
}

/// The rerun matrix (issue 19, item 3): a first run fails at command `k` (every command of the
/// happy run with `RELIABILITY_FULL=1`, else every fourth); a rerun with nothing failing must
/// succeed, against fakes that model what each switch makes reachable (talosctl only while the
/// Talos API switch is open, kubectl only while the Kubernetes path is) and `talosctl health`'s
/// node-set comparison (the nodes given must be the nodes whose config was applied).
///
/// It prints the figure docs/reliability.md records (the audit's defects 1 and 2: health over
/// the configured nodes, the kubeconfig inside the Talos window).
#[test]
fn a_rerun_after_a_failure_at_any_step_succeeds() {
    let fx = Fixture::new();
    let work = tempfile::tempdir().unwrap();
    let fakes = Fakes::new(work.path(), &fx);
    let tmp = work.path().join("tmp");
    fakes.reset(None);
    fakes.set(None, true);
    let happy = apply(&fx, &fakes, &tmp, &[]);
    let total = fakes.calls().len();
    let mut bad = Vec::new();
    if happy.code != Some(0) {
        bad.push(format!("the first apply, nothing failing, exit {:?}:\n{}", happy.code, tail(&happy.stderr)));
    }
    let full = std::env::var_os("RELIABILITY_FULL").is_some();
    let points: Vec<usize> = (1..=total).filter(|k| full || k % 4 == 1).collect();
    for &k in &points {
        fakes.reset(None);
        fakes.set(Some((k, "fail")), true);
        let first = apply(&fx, &fakes, &tmp, &[]);
        let line = fakes.calls().get(k - 1).cloned().unwrap_or_default();
        fakes.reset_world(false);
        fakes.set(None, true);
        let rerun = apply(&fx, &fakes, &tmp, &[]);
        // A failure some commands tolerate (the Secret's version probe, `kubectl get
        // --ignore-not-found`, reads as "absent") lets the first run finish.
        let tolerated = first.code == Some(0) && line.starts_with("kubectl ") && line.contains(" get ");
        if (first.code != Some(1) && !tolerated)
            || rerun.code != Some(0)
            || fakes.open("talos")
            || fakes.open("kubernetes")
            || fakes.open("tunnel")
        {
            bad.push(format!(
                "failure at {k} ({line}): first exit {:?}, rerun exit {:?}:\n{}",
                first.code,
                rerun.code,
                tail(&rerun.stderr)
            ));
        }
    }
    eprintln!("reruns: {} failure points, {} reruns failed", points.len(), bad.len());
    assert!(bad.is_empty(), "{} of {} reruns:\n{}", bad.len(), points.len(), bad.join("\n"));
}

/// A command of the cleanup: the Talos API tunnel's `ssh -O exit`, or the cloud root's apply
/// that closes both switches.
fn is_cleanup(c: &str) -> bool {
    (c.starts_with("ssh ") && c.contains(" -O exit "))
        || (c.contains("-auto-approve")
            && c.contains("talos_api_open=false")
            && c.contains("kubernetes_api_open=false"))
}

fn tail(s: &str) -> String {
    s.lines().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
}
