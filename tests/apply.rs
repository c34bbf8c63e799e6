//! `fleetc apply`: the order of the steps, `--plan`, the switch closed after any failure, the
//! refusals (stale out/, Scaleway SDK variables, `reboot` on Talos 1.14), masked logs, the
//! factory's answer and the image pipeline's error states. External tools are replaced by a
//! recording double ([`apply_support::Fake`]); nothing here touches a network.

use crate::apply_support;

use apply_support::{Fake, Fixture, SECRET_VALUES, has, run_apply};
use fleetc::apply::{Output, Step};

#[test]
fn the_steps_run_in_order() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    let at = |needles: &[&str]| {
        fake.index(needles).unwrap_or_else(|| panic!("no command with {needles:?}:\n{}", fake.lines().join("\n")))
    };
    let order = [
        at(&["curl", "/schematics"]),
        at(&["scw", "instance image list"]),
        at(&["curl", "scaleway-amd64.qcow2"]),
        at(&["curl", "--upload-file"]),
        at(&["scw", "import-from-object-storage"]),
        at(&["scw", "instance image create"]),
        at(&["tofu", "/cloud", "init"]),
        at(&["tofu", "/cloud", "plan", "-var=talos_api_open=false"]),
        at(&["tofu", "/cloud", "show"]),
        at(&["tofu", "/cloud", " apply ", "cloud.tfplan"]),
        at(&["tofu", "/cloud", " apply ", "-var=talos_api_open=true"]),
        at(&["tofu", "/cluster", "init"]),
        at(&["tofu", "/cluster", "-target=module.main.talos_machine_configuration_apply.cp_1"]),
        at(&["tofu", "/cluster", " apply ", "main-cp-1.tfplan"]),
        at(&["talosctl", "kubeconfig"]),
        at(&["kubectl", "apply --server-side --field-manager=fleetc -f -"]),
        at(&["talosctl", "health", "--control-plane-nodes <main-cp-1.address>"]),
        at(&["tofu", "/cluster", "-target=module.main.talos_machine_configuration_apply.cp_2"]),
        at(&["tofu", "/cluster", " apply ", "main-cp-2.tfplan"]),
        at(&[
            "talosctl",
            "health",
            "--nodes <main-cp-2.address>",
            "--control-plane-nodes <main-cp-1.address>,<main-cp-2.address>",
        ]),
        at(&["tofu", "/cluster", "-target=module.main.talos_machine_configuration_apply.cp_3"]),
        at(&["tofu", "/cluster", " apply ", "main-cp-3.tfplan"]),
        at(&["tofu", "/cluster", "-target=module.main.talos_machine_configuration_apply.worker[\"main-system-1\"]"]),
        at(&["talosctl", "health", "--worker-nodes <main-system-1.address>"]),
        at(&["tofu", "/cluster", "-target=module.main.talos_machine_configuration_apply.worker[\"main-system-2\"]"]),
        at(&["talosctl", "health", "--worker-nodes <main-system-1.address>,<main-system-2.address>"]),
        at(&["tofu", "/cluster", " apply ", "cluster-rest.tfplan"]),
        at(&["tofu", "/cloud", " apply ", "-auto-approve", "-var=talos_api_open=false -var=kubernetes_api_open=false"]),
        at(&["tofu", "/cloud", " apply ", "-var=talos_api_open=false -var=kubernetes_api_open=true"]),
        fake.calls.borrow().iter().position(|c| stdin_has(c, "argocd.argoproj.io/secret-type")).unwrap(),
        at(&["kubectl", "apply --server-side --field-manager=fleetc -f", "bootstrap"]),
    ];
    for w in order.windows(2) {
        assert!(w[0] < w[1], "out of order at {w:?} in {order:?}:\n{}", fake.lines().join("\n"));
    }
    // The bootstrap goes with the first control-plane node only.
    assert_eq!(fake.lines().iter().filter(|l| l.contains("talos_machine_bootstrap")).count(), 1);
    assert!(fake.lines()[at(&["-target=module.main.talos_machine_bootstrap.this"])].contains("cp_1"));
    assert_eq!(fake.last_switch("talos_api_open"), Some(false));
    assert_eq!(fake.last_switch("kubernetes_api_open"), Some(false));
    assert!(log.iter().any(|l| l == "== 6. close the Talos API switch (R13)"));
}

#[test]
fn plan_runs_nothing_and_prints_every_command() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let opts = fleetc::apply::ApplyOptions { plan: true, yes: false, identity: None, ..fx.options() };
    let (r, log) = run_apply(&fx, &fake, &opts);
    r.unwrap();
    assert!(fake.calls.borrow().is_empty(), "--plan ran {:?}", fake.lines());
    assert_eq!(*fake.sleeps.borrow(), 0);
    let commands: Vec<&String> = log.iter().filter(|l| l.starts_with("$ ")).collect();
    assert!(commands.len() > 20, "{log:#?}");
    assert!(commands[0].starts_with("$ scw vpc-gw ip list "), "{}", commands[0]);
    assert!(commands[1].starts_with("$ curl ") && commands[1].contains("/schematics"));
    assert!(commands.iter().any(|l| l.contains("-target=module.main.talos_machine_configuration_apply.cp_3")));
    // Nothing decrypted without an identity, nothing private written: private paths are placeholders.
    assert!(log.iter().any(|l| l.contains("$PRIVATE/main-talos-secrets.yaml")));
    assert!(log.iter().all(|l| !l.contains("fleetc-private-")), "{log:#?}");
}

#[test]
fn a_stale_out_is_refused_before_anything_runs() {
    let fx = Fixture::new();
    let p = fx.out.join("schematics/isolated.yaml");
    std::fs::write(&p, "customization: {}\n").unwrap();
    let fake = Fake::new();
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let e = r.unwrap_err();
    assert_eq!(e.step, Step::Preflight);
    assert!(e.message.contains("1 stale") && e.message.contains("fleetc build"), "{e}");
    assert!(fake.calls.borrow().is_empty());
}

#[test]
fn any_scaleway_sdk_variable_is_refused_even_empty() {
    for (name, value) in [
        ("SCW_DEFAULT_PROJECT_ID", "66666666-7777-8888-9999-000000000000"),
        ("SCW_ACCESS_KEY", ""),
        ("SCW_PROFILE", "prod"),
        ("SCW_CONFIG_PATH", ""),
        ("SCW_ORGANIZATION", "x"),
        ("SCW_REGION", ""),
        ("SCALEWAY_ORGANIZATION", "x"),
    ] {
        let mut fx = Fixture::new();
        fx.env.insert(name.to_owned(), value.to_owned());
        let fake = Fake::new();
        let (r, _) = run_apply(&fx, &fake, &fx.options());
        let e = r.unwrap_err();
        assert_eq!(e.step, Step::Preflight, "{name}");
        assert!(e.message.contains(name) && e.message.contains("unset") && e.message.contains("docs/apply.md"), "{e}");
        assert!(fake.calls.borrow().is_empty(), "{name}");
    }
}

#[test]
fn credentials_come_from_fleetc_variables_and_never_decide_the_project() {
    let mut fx = Fixture::new();
    fx.env.remove("FLEETC_SCW_SECRET_KEY");
    let fake = Fake::new();
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    assert!(r.unwrap_err().message.contains("FLEETC_SCW_SECRET_KEY"));

    let fx = Fixture::new();
    let fake = Fake::new();
    run_apply(&fx, &fake, &fx.options()).0.unwrap();
    for c in fake.calls.borrow().iter().filter(|c| c.program == "tofu" || c.program == "scw") {
        let names: Vec<&str> = c.env.iter().map(|(k, _)| k.as_str()).collect();
        assert!(names.contains(&"SCW_ACCESS_KEY"), "{names:?}");
        // The state bucket's pair goes to tofu (the S3 backend) only, never to scw.
        assert_eq!(names.contains(&"AWS_SECRET_ACCESS_KEY"), c.program == "tofu", "{names:?}");
        assert!(
            names
                .iter()
                .all(|n| !n.contains("PROJECT") && !n.contains("REGION") && !n.contains("ZONE") && *n != "SCW_PROFILE"),
            "{names:?}"
        );
    }
    // The scw CLI is told the project and zone from fleet.kdl explicitly.
    assert!(fake.index(&["scw", "project-id=11111111-2222-3333-4444-555555555555", "zone=fr-par-2"]).is_some());
}

#[test]
fn reboot_mode_is_refused_on_talos_1_14() {
    let mut fx = Fixture::new();
    let fake = Fake::new();
    let mut opts = fx.options();
    opts.mode = Some(fleetc::model::ApplyMode::Reboot);
    // Talos 1.13 still has it.
    let (r, _) = run_apply(&fx, &fake, &fleetc::apply::ApplyOptions { plan: true, ..opts.clone() });
    r.unwrap();
    fx.target.clusters[0].talos = fleetc::model::Version::new(1, 14, 0);
    let (r, _) = run_apply(&fx, &fake, &opts);
    let e = r.unwrap_err();
    assert!(e.message.contains("Talos 1.14") && e.message.contains("F10"), "{e}");
    assert!(fake.calls.borrow().is_empty());
}

#[test]
fn the_chosen_mode_reaches_every_cluster_root_plan() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let mut opts = fx.options();
    opts.mode = Some(fleetc::model::ApplyMode::Staged);
    fake.on(
        |c| has(c, "tofu", &["state", "list"]),
        Output::ok(state_with(&[1, 2, 3], &["main-system-1", "main-system-2"])),
    );
    run_apply(&fx, &fake, &opts).0.unwrap();
    let plans: Vec<String> = fake
        .lines()
        .into_iter()
        .filter(|l| l.contains("/cluster") && l.contains(" plan ") && l.contains("-target="))
        .collect();
    assert_eq!(plans.len(), 5, "{plans:#?}");
    assert!(plans.iter().all(|l| l.contains("-var=apply_mode=staged")), "{plans:#?}");
}

type Matcher = Box<dyn Fn(&fleetc::apply::Cmd) -> bool>;

fn stdin_has(c: &fleetc::apply::Cmd, needle: &str) -> bool {
    c.stdin.as_ref().is_some_and(|b| String::from_utf8_lossy(b).contains(needle))
}

/// Failure points: a command that fails, and the step the failure is reported in.
fn failure_points() -> Vec<(&'static str, Matcher, Step)> {
    vec![
        ("gateway IP lookup", Box::new(|c| has(c, "scw", &["vpc-gw"])), Step::Preflight),
        ("factory", Box::new(|c| has(c, "curl", &["/schematics"])), Step::Schematics),
        ("image list", Box::new(|c| has(c, "scw", &["image", "list"])), Step::Images),
        ("upload", Box::new(|c| has(c, "curl", &["--upload-file"])), Step::Images),
        ("cloud plan", Box::new(|c| has(c, "tofu", &["/cloud", "plan"])), Step::CloudRoot),
        ("switch open", Box::new(|c| has(c, "tofu", &["/cloud", "-var=talos_api_open=true"])), Step::OpenSwitch),
        ("inventory", Box::new(|c| has(c, "tofu", &["output"])), Step::OpenSwitch),
        ("cluster init", Box::new(|c| has(c, "tofu", &["/cluster", "init"])), Step::ClusterRoot),
        ("cluster plan", Box::new(|c| has(c, "tofu", &["/cluster", "-out=", "cluster.tfplan"])), Step::ClusterRoot),
        ("talosconfig", Box::new(|c| has(c, "talosctl", &["gen"])), Step::ClusterRoot),
        ("cp-2 apply", Box::new(|c| has(c, "tofu", &["/cluster", "main-cp-2.tfplan"])), Step::ClusterRoot),
        ("health", Box::new(|c| has(c, "talosctl", &["health"])), Step::ClusterRoot),
        ("workers", Box::new(|c| has(c, "tofu", &["/cluster", "cluster-rest.tfplan"])), Step::ClusterRoot),
        ("kubeconfig", Box::new(|c| has(c, "talosctl", &["kubeconfig"])), Step::ClusterRoot),
        ("scaleway secret", Box::new(|c| stdin_has(c, "SCW_SECRET_KEY")), Step::ClusterRoot),
        ("worker apply", Box::new(|c| has(c, "tofu", &["/cluster", "main-main-system-2.tfplan"])), Step::ClusterRoot),
        ("argocd install check", Box::new(|c| has(c, "kubectl", &["get", "deployment"])), Step::ArgoCd),
        ("repository credential", Box::new(|c| stdin_has(c, "argocd.argoproj.io")), Step::ArgoCd),
        ("root application", Box::new(|c| has(c, "kubectl", &["bootstrap"])), Step::ArgoCd),
    ]
}

#[test]
fn the_switches_are_closed_after_a_failure_at_any_step() {
    for (name, matches, step) in failure_points() {
        let fx = Fixture::new();
        let fake = Fake::new();
        fake.fail_on(matches);
        let (r, log) = run_apply(&fx, &fake, &fx.options());
        let e = r.expect_err(name);
        assert_eq!(e.step, step, "{name}: {e}");
        assert!(e.to_string().contains("next: "), "{name}: a failure says what to do next");
        assert_ne!(
            fake.last_switch("talos_api_open"),
            Some(true),
            "{name}: Talos API switch left open\n{}",
            log.join("\n")
        );
        assert_ne!(fake.last_switch("kubernetes_api_open"), Some(true), "{name}: Kubernetes API path left open");
        if step >= Step::OpenSwitch && step <= Step::ClusterRoot {
            assert!(log.iter().any(|l| l == "== 6. close the Talos API switch (R13)"), "{name}");
            assert!(log.iter().all(|l| !l.starts_with("== 7.")), "{name}: nothing after a failure");
        }
    }
}

#[test]
fn a_failed_close_is_reported_with_the_first_failure() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.fail_on(|c| has(c, "talosctl", &["health"]));
    fake.fail_on(|c| {
        has(c, "tofu", &["/cloud", "-var=talos_api_open=false"]) && c.args.iter().any(|a| a == "-auto-approve")
    });
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let e = r.unwrap_err();
    assert!(e.message.contains("not healthy") && e.message.contains("closing the switch failed too"), "{e}");
}

#[test]
fn no_secret_value_appears_in_any_log_line() {
    let fx = Fixture::new();
    let fake = Fake::new();
    // Tools that echo secrets back in an error must not leak them either.
    fake.on(
        |c| has(c, "talosctl", &["health"]),
        Output::failed(1, "rpc error: token boottest.0123456789abcdef rejected"),
    );
    let (r, mut log) = run_apply(&fx, &fake, &fx.options());
    log.push(r.unwrap_err().to_string());
    let fake2 = Fake::new();
    let (r2, log2) = run_apply(&fx, &fake2, &fx.options());
    r2.unwrap();
    log.extend(log2);
    for line in &log {
        for secret in SECRET_VALUES {
            assert!(!line.contains(secret), "`{secret}` in: {line}");
        }
    }
    // …while the commands that needed them received them.
    let calls = fake2.calls.borrow();
    let tofu = calls.iter().find(|c| c.program == "tofu").unwrap();
    assert!(tofu.env.iter().any(|(k, v)| k == "TF_VAR_state_passphrase" && v == "state-passphrase-value-01"));
    let secret = calls.iter().find(|c| stdin_has(c, "argocd.argoproj.io")).unwrap();
    let body = String::from_utf8(secret.stdin.clone().unwrap()).unwrap();
    assert!(body.contains("repo-password-value-42") && body.contains("argocd.argoproj.io/secret-type"), "{body}");
    // B7/D6 (F11): the CCM/CSI key reaches the cluster as a Secret written by kubectl from
    // stdin, never through a root (no tofu command carries it), never on a command line.
    for c in calls.iter() {
        let everything = format!("{} {:?}", c.args.join(" "), c.env);
        assert!(!everything.contains("scaleway-api-key-value-42"), "the key in argv or env of {c:?}");
    }
    let key = calls.iter().find(|c| stdin_has(c, "SCW_SECRET_KEY")).expect("the Secret's apply");
    assert!(key.args.iter().any(|a| a == "--field-manager=fleetc") && key.args.iter().any(|a| a == "--server-side"));
    let v: serde_json::Value = serde_json::from_slice(key.stdin.as_ref().unwrap()).unwrap();
    assert_eq!(v["metadata"]["name"], "scaleway-secret");
    assert_eq!(v["metadata"]["namespace"], "kube-system");
    assert_eq!(v["stringData"]["SCW_SECRET_KEY"], "scaleway-api-key-value-42");
    assert_eq!(v["stringData"]["SCW_ACCESS_KEY"], "SCWCCMACCESSKEY01");
    // Project, region and zone come from fleet.kdl, never from the sealed input or the shell (R9).
    assert_eq!(v["stringData"]["SCW_DEFAULT_PROJECT_ID"], "11111111-2222-3333-4444-555555555555");
    assert_eq!(v["stringData"]["SCW_DEFAULT_ZONE"], "fr-par-2");
}

#[test]
fn a_factory_answer_with_another_id_stops_the_apply() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.on(
        |c| has(c, "curl", &["/schematics"]),
        Output::ok(r#"{"id":"376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"}"#),
    );
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let e = r.unwrap_err();
    assert_eq!(e.step, Step::Schematics);
    assert!(e.message.contains("376567988ad3") && e.message.contains("F2"), "{e}");
    assert!(
        fake.lines().last().is_some_and(|l| l.contains("/schematics")),
        "nothing after the factory: {:?}",
        fake.lines()
    );
}

#[test]
fn an_image_in_error_state_stops_the_apply() {
    // An import that ends in error (the CLI's own wait would exit 0).
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.on(|c| has(c, "scw", &["snapshot", "get"]), Output::ok(r#"{"id":"s","status":"error"}"#));
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let e = r.unwrap_err();
    assert_eq!(e.step, Step::Images);
    assert!(e.message.contains("`error`"), "{e}");
    assert!(fake.calls.borrow().iter().all(|c| c.program != "tofu"));
    // An image an earlier run left in error.
    let fake = Fake::new();
    fake.on(
        |c| has(c, "scw", &["image", "list"]),
        Output::ok(r#"[{"id":"i-1","name":"talos-v1.13.9-bc9d9abefb95","state":"error"}]"#),
    );
    let e = run_apply(&fx, &fake, &fx.options()).0.unwrap_err();
    assert!(e.message.contains("in error"), "{e}");
    assert!(fake.calls.borrow().iter().all(|c| c.program != "tofu" && !has(c, "curl", &["--upload-file"])));
}

#[test]
fn polls_until_available_with_a_timeout() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.on(|c| has(c, "scw", &["snapshot", "get"]), Output::ok(r#"{"id":"s","status":"creating"}"#));
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    assert!(r.unwrap_err().message.contains("still `creating` after 30 minutes"));
    assert_eq!(*fake.sleeps.borrow(), 180);
}

#[test]
fn an_image_is_reused_when_an_earlier_run_finished_it() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.on(
        |c| has(c, "scw", &["image", "list"]),
        Output::ok(r#"[{"id":"i-0","name":"talos-v1.13.9-bc9d9abefb95-old","state":"available"},{"id":"i-1","name":"talos-v1.13.9-bc9d9abefb95","state":"available"}]"#),
    );
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    r.unwrap();
    assert!(log.iter().any(|l| l == "# reusing image i-1"));
    assert!(fake.calls.borrow().iter().all(|c| !has(c, "curl", &["--output"]) && !has(c, "scw", &["snapshot"])));
}

#[test]
fn the_header_is_read_before_any_upload() {
    // A raw image is converted first, and the converted file is what goes up.
    let fx = Fixture::new();
    let fake = Fake::new();
    let mut raw = vec![0u8; 1024];
    raw[512..520].copy_from_slice(b"EFI PART");
    *fake.image_bytes.borrow_mut() = raw;
    run_apply(&fx, &fake, &fx.options()).0.unwrap();
    let convert = fake.index(&["qemu-img", "convert -f raw -O qcow2"]).expect("converted");
    let upload = fake.index(&["curl", "--upload-file"]).unwrap();
    assert!(convert < upload);
    assert!(fake.lines()[upload].contains(".qcow2 https://"), "{}", fake.lines()[upload]);
    // A compressed file is refused before anything is sent.
    let fake = Fake::new();
    *fake.image_bytes.borrow_mut() = vec![0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4];
    let e = run_apply(&fx, &fake, &fx.options()).0.unwrap_err();
    assert!(e.message.contains("zstd") && e.message.contains("nothing was uploaded"), "{e}");
    assert!(fake.index(&["--upload-file"]).is_none());
    // An HTML error page (HTTP 200) is not a disk image: neither converted nor uploaded.
    let fake = Fake::new();
    *fake.image_bytes.borrow_mut() = b"<!DOCTYPE html><html><body>rate limited</body></html>".to_vec();
    let e = run_apply(&fx, &fake, &fx.options()).0.unwrap_err();
    assert!(e.message.contains("not a disk image"), "{e}");
    assert!(fake.index(&["qemu-img"]).is_none() && fake.index(&["--upload-file"]).is_none());
    // qcow2 goes as is.
    let fake = Fake::new();
    run_apply(&fx, &fake, &fx.options()).0.unwrap();
    assert!(fake.index(&["qemu-img"]).is_none());
}

/// The `tofu state list` of a cluster root where the given nodes were configured.
fn state_with(cps: &[usize], workers: &[&str]) -> String {
    let mut lines = vec!["module.main.talos_machine_secrets.this".to_owned()];
    for i in cps {
        lines.push(format!("module.main.talos_machine_configuration_apply.cp_{i}"));
    }
    if cps.contains(&1) {
        lines.push("module.main.talos_machine_bootstrap.this".to_owned());
    }
    for w in workers {
        lines.push(format!("module.main.talos_machine_configuration_apply.worker[\"{w}\"]"));
    }
    lines.join("\n") + "\n"
}

fn health_lines(fake: &Fake) -> Vec<String> {
    fake.lines().into_iter().filter(|l| l.contains(" health ")).collect()
}

#[test]
fn a_running_cluster_is_health_checked_with_every_node() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.on(
        |c| has(c, "tofu", &["state", "list"]),
        Output::ok(state_with(&[1, 2, 3], &["main-system-1", "main-system-2"])),
    );
    run_apply(&fx, &fake, &fx.options()).0.unwrap();
    let health = health_lines(&fake);
    assert_eq!(health.len(), 6, "{health:#?}");
    assert!(
        health.iter().all(|l| l.contains("<main-cp-1.address>,<main-cp-2.address>,<main-cp-3.address>")
            && l.contains("--worker-nodes <main-system-1.address>,<main-system-2.address>")),
        "{health:#?}"
    );
}

/// reliability.md: a rerun after a failure past the first control-plane node resumes. Health
/// expects the nodes that are configured (in state, or applied so far), never one that never
/// got a config: here cp-3 and the workers had not been applied when the first run stopped.
#[test]
fn a_rerun_after_a_failure_past_the_first_control_plane_node_resumes() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.on(|c| has(c, "tofu", &["state", "list"]), Output::ok(state_with(&[1, 2], &[])));
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    let health = health_lines(&fake);
    let cp12 = "--control-plane-nodes <main-cp-1.address>,<main-cp-2.address> ";
    let cp123 = "--control-plane-nodes <main-cp-1.address>,<main-cp-2.address>,<main-cp-3.address>";
    assert!(health[0].contains("--nodes <main-cp-1.address>") && health[0].ends_with(cp12.trim_end()), "{health:#?}");
    assert!(health[1].contains("--nodes <main-cp-2.address>") && health[1].ends_with(cp12.trim_end()), "{health:#?}");
    assert!(health[2].ends_with(cp123), "{health:#?}");
    assert!(health[3].ends_with(&format!("{cp123} --worker-nodes <main-system-1.address>")), "{health:#?}");
    assert!(health.iter().take(3).all(|l| !l.contains("--worker-nodes")), "{health:#?}");
    // The resumed nodes are applied, the bootstrap planned with cp-1 again (a no-op in state).
    assert!(fake.index(&["tofu", " apply ", "main-cp-3.tfplan"]).is_some());
}

#[test]
fn missing_sealed_inputs_or_identity_stop_the_preflight() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let (r, _) = run_apply(&fx, &fake, &fleetc::apply::ApplyOptions { identity: None, ..fx.options() });
    assert!(r.unwrap_err().message.contains("FLEETC_AGE_IDENTITY"));
    std::fs::remove_file(fx.root.join("secrets/staging/main/argocd-repo.age")).unwrap();
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let e = r.unwrap_err();
    assert!(
        e.message.contains("secrets/staging/main/argocd-repo.age") && e.message.contains("fleetc secrets import"),
        "{e}"
    );
    assert!(fake.calls.borrow().is_empty());
}

#[test]
fn a_cluster_without_a_sealed_bundle_is_refused_never_generated() {
    let mut fx = Fixture::new();
    fx.target.clusters[0].sealed.retain(|n| n != "talos-secrets");
    let fake = Fake::new();
    let e = run_apply(&fx, &fake, &fx.options()).0.unwrap_err();
    assert!(e.message.contains("never generates") && e.message.contains("R14"), "{e}");
    assert!(fake.calls.borrow().is_empty());
}

#[test]
fn decrypted_material_never_lands_under_out_and_is_removed_after_the_run() {
    let fx = Fixture::new();
    let fake = Fake::new();
    run_apply(&fx, &fake, &fx.options()).0.unwrap();
    let calls = fake.calls.borrow();
    let c = calls.iter().find(|c| c.env.iter().any(|(k, _)| k == "TF_VAR_talos_secrets_files")).unwrap();
    let files = &c.env.iter().find(|(k, _)| k == "TF_VAR_talos_secrets_files").unwrap().1;
    let v: serde_json::Value = serde_json::from_str(files).unwrap();
    let path = std::path::PathBuf::from(v["main"].as_str().unwrap());
    assert!(!path.starts_with(&fx.out));
    assert!(!path.exists(), "the private directory is removed after the run");
    assert!(fleetc::artifacts::ArtifactSet::read_dir(&fx.out).unwrap().paths().all(|p| !p.contains("talos-secrets")));
}

/// The Scaleway cloud root imports the reserved gateway IP (R16) by id, which fleet.kdl does
/// not hold: the preflight looks it up by fleet.kdl's `gateway` address, read-only, and every
/// plan and apply of the cloud root (switches included) gets it.
#[test]
fn the_gateway_ip_is_looked_up_by_address_and_reaches_every_cloud_root_run() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let list = r#"[{"id":"aaaaaaaa-0000-4000-8000-000000000001","address":"51.15.200.99","zone":"fr-par-2"},
                   {"id":"bbbbbbbb-0000-4000-8000-000000000002","address":"51.15.200.10","zone":"fr-par-2"}]"#;
    fake.on(|c| has(c, "scw", &["vpc-gw", "list"]), Output::ok(list.as_bytes().to_vec()));
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    let lookup = fake.index(&["scw", "vpc-gw ip list", "zone=fr-par-2", "project-id=", "-o json"]).expect("the lookup");
    assert!(lookup < fake.index(&["curl", "/schematics"]).unwrap(), "the lookup is part of the preflight");
    let cloud: Vec<String> = fake
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("tofu ") && l.contains("/cloud") && (l.contains(" plan ") || l.contains(" apply ")))
        .collect();
    assert!(cloud.len() >= 6, "{cloud:#?}");
    for l in &cloud {
        assert!(l.contains("-var=gateway_ip_id=fr-par-2/bbbbbbbb-0000-4000-8000-000000000002"), "{l}");
    }
}

#[test]
fn a_missing_gateway_ip_stops_the_preflight() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let list = r#"[{"id":"aaaaaaaa-0000-4000-8000-000000000001","address":"51.15.200.99","zone":"fr-par-2"}]"#;
    fake.on(|c| has(c, "scw", &["vpc-gw", "list"]), Output::ok(list.as_bytes().to_vec()));
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let e = r.unwrap_err();
    assert_eq!(e.step, Step::Preflight);
    assert!(e.message.contains("51.15.200.10") && e.message.contains("R16"), "{e}");
    assert_eq!(fake.lines().len(), 1, "nothing runs after the lookup: {:?}", fake.lines());
}

/// A saved plan is applied with the -vars it was planned with (OpenTofu checks they match), so
/// no cloud-root apply runs without the variables the root requires.
#[test]
fn saved_plans_are_applied_with_their_variables() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.on(|c| has(c, "tofu", &["state", "list"]), Output::ok(state_with(&[1, 2, 3], &["main-system-1"])));
    let opts = fleetc::apply::ApplyOptions { mode: Some(fleetc::model::ApplyMode::Staged), ..fx.options() };
    let (r, log) = run_apply(&fx, &fake, &opts);
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    let line = &fake.lines()[fake.index(&["tofu", "/cloud", " apply ", "cloud.tfplan"]).unwrap()];
    assert!(line.contains("-var=talos_api_open=false") && line.contains("-var=gateway_ip_id="), "{line}");
    for plan in ["main-cp-1.tfplan", "main-main-system-1.tfplan"] {
        let line = &fake.lines()[fake.index(&["tofu", "/cluster", " apply ", plan]).unwrap()];
        assert!(line.contains("-var=apply_mode=staged"), "{line}");
    }
    // A node with no config yet is in maintenance mode, where `staged` would only store it:
    // it gets the variables file's mode.
    let line = &fake.lines()[fake.index(&["tofu", "/cluster", " apply ", "main-main-system-2.tfplan"]).unwrap()];
    assert!(line.contains("-var=apply_mode=no_reboot"), "{line}");
}

/// B8: tofu runs in a working copy of the roots, never in out/: what `tofu init` writes beside
/// a root (`.terraform/`, `.terraform.lock.hcl`) leaves out/ fresh, so a second apply is not
/// refused; the copy keeps tofu's files across runs and holds out/'s bytes.
#[test]
fn tofu_runs_in_a_working_copy_and_a_second_apply_is_not_refused() {
    let fx = Fixture::new();
    for round in 0..2 {
        let fake = Fake::new();
        let (r, log) = run_apply(&fx, &fake, &fx.options());
        r.unwrap_or_else(|e| panic!("round {round}: {e}\n{}", log.join("\n")));
        let dirs: std::collections::BTreeSet<String> = fake
            .calls
            .borrow()
            .iter()
            .filter(|c| c.program == "tofu")
            .filter_map(|c| c.args.first().and_then(|a| a.strip_prefix("-chdir=")).map(str::to_owned))
            .collect();
        assert!(!dirs.is_empty());
        for d in &dirs {
            let d = std::path::Path::new(d);
            assert!(!d.starts_with(&fx.out), "round {round}: tofu runs in out/: {}", d.display());
            assert!(d.starts_with(fx.root.join(".fleetc/work")), "{}", d.display());
            // What `tofu init` leaves behind.
            std::fs::create_dir_all(d.join(".terraform/providers")).unwrap();
            std::fs::write(d.join(".terraform.lock.hcl"), "# lock\n").unwrap();
            let root = d.file_name().unwrap().to_string_lossy().into_owned();
            let out_root = fx.out.join("tofu/staging").join(&root);
            assert_eq!(std::fs::read(d.join("main.tf")).unwrap(), std::fs::read(out_root.join("main.tf")).unwrap());
        }
        let fresh = fx.build.check(&fx.out).unwrap();
        assert!(fresh.is_fresh(), "round {round}: out/ is no longer what fleet.kdl builds");
        let copy = fx.root.join(".fleetc/work/tofu/staging/cloud");
        assert!(copy.join(".terraform.lock.hcl").is_file(), "tofu's lock file survives the next sync");
        assert!(
            fx.root.join(".fleetc/work/talos/staging/main/common.yaml").is_file(),
            "the cluster root reads the Talos documents"
        );
    }
    // A file the build no longer has is removed from the copy; tofu's are kept.
    std::fs::write(fx.root.join(".fleetc/work/tofu/staging/cloud/stale.tf"), "x").unwrap();
    let fake = Fake::new();
    run_apply(&fx, &fake, &fx.options()).0.unwrap();
    assert!(!fx.root.join(".fleetc/work/tofu/staging/cloud/stale.tf").exists());
    assert!(fx.root.join(".fleetc/work/tofu/staging/cloud/.terraform.lock.hcl").exists());
}

/// `--plan` shows what a refusal stops, as for a missing sealed file, and the rest of the plan.
#[test]
fn plan_notes_a_missing_bundle_and_goes_on() {
    let mut fx = Fixture::new();
    fx.target.clusters[0].sealed.retain(|n| n != "talos-secrets");
    let fake = Fake::new();
    let opts = fleetc::apply::ApplyOptions { plan: true, yes: false, identity: None, ..fx.options() };
    let (r, log) = run_apply(&fx, &fake, &opts);
    r.unwrap();
    assert!(log.iter().any(|l| l.starts_with("# apply refuses: ") && l.contains("R14")), "{log:#?}");
    assert!(log.iter().any(|l| l.contains("/cloud plan ")), "{log:#?}");
}

/// B6/D8 (F3, R19): a plain `tofu apply` of the cluster root never reboots a running node —
/// the variables file's mode is `no_reboot` whatever fleet.kdl says — and a change that needs
/// a reboot goes through fleetc's gate: Talos refuses it in `no_reboot` (changing nothing),
/// fleetc stages it on that node alone, reboots that node (`talosctl reboot --wait` returns
/// once it is back), checks health, puts the variables file's mode back in state, and only
/// then plans the next node.
#[test]
fn a_change_that_needs_a_reboot_reboots_one_control_plane_node_at_a_time() {
    let fx = Fixture::new();
    let tfvars = std::fs::read_to_string(fx.out.join("tofu/staging/cluster/staging.auto.tfvars")).unwrap();
    assert!(tfvars.contains("apply_mode            = \"no_reboot\""), "the root's own mode never reboots:\n{tfvars}");
    let fake = Fake::new();
    fake.on(
        |c| has(c, "tofu", &["state", "list"]),
        Output::ok(state_with(&[1, 2, 3], &["main-system-1", "main-system-2"])),
    );
    fake.on(
        |c| {
            c.program == "tofu"
                && c.args.iter().any(|a| a == "apply")
                && c.args.last().is_some_and(|a| a.ends_with("/main-cp-2.tfplan"))
        },
        Output::failed(
            1,
            "Error: rpc error: code = InvalidArgument desc = this config change can't be applied in immediate mode",
        ),
    );
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    let at =
        |needles: &[&str]| fake.index(needles).unwrap_or_else(|| panic!("{needles:?}:\n{}", fake.lines().join("\n")));
    let refused = at(&["tofu", " apply ", "-var=apply_mode=no_reboot", "main-cp-2.tfplan"]);
    let staged = at(&["tofu", " apply ", "-var=apply_mode=staged", "main-cp-2-staged.tfplan"]);
    let reboot = at(&["talosctl", "--nodes <main-cp-2.address>", "reboot --wait"]);
    let back = at(&["tofu", " apply ", "-var=apply_mode=no_reboot", "main-cp-2-mode.tfplan"]);
    let health = at(&["talosctl", "--nodes <main-cp-2.address>", "health"]);
    let next = at(&["tofu", "plan", "-target=module.main.talos_machine_configuration_apply.cp_3"]);
    assert!(
        refused < staged && staged < reboot && reboot < back && back < health && health < next,
        "{}",
        fake.lines().join("\n")
    );
    let reboots: Vec<String> = fake.lines().into_iter().filter(|l| l.contains(" reboot ")).collect();
    assert_eq!(reboots.len(), 1, "only the node that needed it reboots: {reboots:#?}");
    // Every targeted plan of a configured node is in the variables file's mode.
    for l in fake.lines().iter().filter(|l| l.contains("/cluster plan") && l.contains("-target=")) {
        assert!(l.contains("-var=apply_mode=no_reboot") || l.contains("-staged.tfplan"), "{l}");
    }
}

/// `no_reboot` in fleet.kdl means no reboot at all: the refusal stops the run at that node.
#[test]
fn no_reboot_never_falls_back_to_a_reboot() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.on(|c| has(c, "tofu", &["state", "list"]), Output::ok(state_with(&[1, 2, 3], &[])));
    fake.fail_on(|c| has(c, "tofu", &["main-cp-2.tfplan"]) && c.args.iter().any(|a| a == "apply"));
    let opts = fleetc::apply::ApplyOptions { mode: Some(fleetc::model::ApplyMode::NoReboot), ..fx.options() };
    let e = run_apply(&fx, &fake, &opts).0.unwrap_err();
    assert_eq!(e.step, Step::ClusterRoot);
    assert!(fake.index(&["talosctl", "reboot"]).is_none());
    assert!(fake.index(&["-target=module.main.talos_machine_configuration_apply.cp_3"]).is_none());
}

/// Apply twice in a row is clean: fleetc passes the variables file's own mode to every
/// targeted plan, so its runs and a plain `tofu apply` store the same `apply_mode` and a
/// second run (or a plain plan after it) has nothing to change; the second run refuses
/// nothing and reboots nothing.
#[test]
fn apply_twice_in_a_row_stores_the_variables_files_mode_and_refuses_nothing() {
    let fx = Fixture::new();
    for state in [state_with(&[], &[]), state_with(&[1, 2, 3], &["main-system-1", "main-system-2"])] {
        let fake = Fake::new();
        fake.on(|c| has(c, "tofu", &["state", "list"]), Output::ok(state.clone()));
        let (r, log) = run_apply(&fx, &fake, &fx.options());
        r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
        let modes: std::collections::BTreeSet<String> = fake
            .lines()
            .into_iter()
            .filter(|l| l.contains("/cluster "))
            .flat_map(|l| {
                l.split(' ').filter(|w| w.starts_with("-var=apply_mode=")).map(str::to_owned).collect::<Vec<_>>()
            })
            .collect();
        // The mode the variables file gives a plain apply, read from the build itself.
        let tfvars = std::fs::read_to_string(fx.out.join("tofu/staging/cluster/staging.auto.tfvars")).unwrap();
        let root = tfvars
            .lines()
            .find_map(|l| {
                l.trim().strip_prefix("apply_mode").map(|v| v.trim().trim_start_matches('=').trim().trim_matches('"'))
            })
            .unwrap()
            .to_owned();
        assert_eq!(modes.into_iter().collect::<Vec<_>>(), [format!("-var=apply_mode={root}")]);
        assert!(fake.index(&["talosctl", "reboot"]).is_none());
    }
}

/// B7/D6 (F11, R10): the key is written into the cluster every apply; when it changed (the
/// Secret's resourceVersion moved) the workloads of the embedded manifests that read it are
/// restarted in the same apply; when it did not, nothing restarts.
#[test]
fn a_rotated_scaleway_key_reaches_its_consumers_in_one_apply() {
    let version = |c: &fleetc::apply::Cmd| has(c, "kubectl", &["get", "secret", "scaleway-secret"]);
    for (before, after, restarts) in [("100", "100", false), ("100", "181", true), ("", "5", false)] {
        let fx = Fixture::new();
        let fake = Fake::new();
        fake.on_seq(version, vec![Output::ok(before), Output::ok(after)]);
        let (r, log) = run_apply(&fx, &fake, &fx.options());
        r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
        let restart =
            fake.index(&["kubectl", "rollout restart deployment/scaleway-cloud-controller-manager -n kube-system"]);
        assert_eq!(restart.is_some(), restarts, "{before} → {after}:\n{}", fake.lines().join("\n"));
        if let Some(i) = restart {
            let write = fake.calls.borrow().iter().position(|c| stdin_has(c, "SCW_SECRET_KEY")).unwrap();
            assert!(write < i && i < fake.index(&["talosctl", "health"]).unwrap());
        }
    }
    // The cluster root has no way to carry the key: no such variable, no embedded Secret.
    let fx = Fixture::new();
    for p in fx.build.paths().filter(|p| p.starts_with("tofu/") || p.starts_with("talos/")) {
        let text = String::from_utf8_lossy(fx.build.get(p).unwrap()).into_owned();
        assert!(!text.contains("scaleway_credentials") && !text.contains("SCW_SECRET_KEY"), "{p}");
    }
}

/// reliability.md: the first Scaleway apply installs Argo CD. The kubeconfig comes from the
/// node through the Talos API, whose Scaleway endpoint is a gateway rule that exists only
/// while that switch is open: every talosctl command runs inside that window.
#[test]
fn every_talos_api_call_runs_while_the_talos_switch_is_open() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    let (open, closed) = fake.by_talos_switch();
    assert!(open.iter().any(|l| l.starts_with("talosctl ") && l.contains(" kubeconfig ")), "{open:#?}");
    let outside: Vec<&String> =
        closed.iter().filter(|l| l.starts_with("talosctl ") && !l.contains(" gen config ")).collect();
    assert!(outside.is_empty(), "talosctl without the switch: {outside:#?}");
    // Argo CD's step uses that kubeconfig.
    let kubeconfig = fake.lines()[fake.index(&["talosctl", " kubeconfig "]).unwrap()]
        .split(' ')
        .find(|w| w.ends_with("main.kubeconfig"))
        .unwrap()
        .to_owned();
    assert!(fake.lines()[fake.index(&["kubectl", "get deployment argocd-server"]).unwrap()].contains(&kubeconfig));
}

/// capi-argocd.md R10: `argocd-cm` is applied under fleetc's own field manager, not the one
/// the install manifest was applied with, so server-side apply never removes the install's
/// default keys that fleetc's document omits.
#[test]
fn argocd_cm_has_its_own_field_manager() {
    let fx = Fixture::new();
    let fake = Fake::new();
    run_apply(&fx, &fake, &fx.options()).0.unwrap();
    let install = &fake.lines()[fake.index(&["kubectl", "apply --server-side", "argocd-3.6.3-install.yaml"]).unwrap()];
    assert!(install.contains("--field-manager=fleetc-argocd-install"), "{install}");
    let bootstrap = &fake.lines()[fake.index(&["kubectl", "apply --server-side", "00-argocd-cm.yaml"]).unwrap()];
    assert!(bootstrap.contains("--field-manager=fleetc "), "{bootstrap}");
}

/// R10: a bumped `password-version` reaches the cluster in the same apply: the cloud root
/// rotates the database and Secret Manager together, and step 7 marks each ExternalSecret
/// with the version (ESO refreshes on an annotation change), the same value every run until
/// the next bump.
#[test]
fn a_bumped_password_version_marks_every_external_secret() {
    for version in [1u32, 2] {
        let mut fx = Fixture::new();
        for d in &mut fx.target.clusters[0].database_secrets {
            d.password_version = version;
        }
        let fake = Fake::new();
        run_apply(&fx, &fake, &fx.options()).0.unwrap();
        let mark = format!("force-sync=password-version-{version}");
        let at = fake.index(&["kubectl", "annotate externalsecret postgres-app", &mark, "--overwrite"]);
        assert!(at.is_some(), "{}", fake.lines().join("\n"));
        assert!(at > fake.index(&["tofu", "/cloud", " apply ", "cloud.tfplan"]));
    }
}

/// Issue 15: the preflight lists every refusal at once, each with its cause, and runs nothing.
#[test]
fn the_preflight_lists_every_refusal_at_once() {
    let mut fx = Fixture::new();
    fx.env.remove("FLEETC_SCW_SECRET_KEY");
    fx.env.insert("SCW_PROFILE".into(), String::new());
    std::fs::remove_file(fx.root.join("secrets/staging/main/argocd-repo.age")).unwrap();
    let fake = Fake::new();
    let opts = fleetc::apply::ApplyOptions { identity: None, ..fx.options() };
    let e = run_apply(&fx, &fake, &opts).0.unwrap_err();
    assert_eq!(e.step, Step::Preflight);
    assert!(e.message.starts_with("4 problems stop the apply:"), "{e}");
    for needle in ["SCW_PROFILE", "FLEETC_SCW_SECRET_KEY not set", "argocd-repo.age", "no age identity"] {
        assert!(e.message.contains(needle), "{needle}: {e}");
    }
    assert!(fake.calls.borrow().is_empty());
}

/// A cluster's backup (R28): `fleetc apply` writes the bucket key from the sealed input named
/// by `backup credentials=` as the Secret the job's CronJob reads (`talos-backup-s3`, keys
/// `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`), with its namespace, server-side from stdin,
/// before the Argo CD root that delivers the job; the key never appears in a command line,
/// an environment or the log (F11).
#[test]
fn a_backup_gets_its_bucket_key_from_the_sealed_input() {
    let fx = Fixture::for_env_edited(
        "staging",
        &["talos-secrets", "scaleway-api-key", "argocd-repo", "backup-s3"],
        |t| {
            t.replacen(
            "sealed \"talos-secrets\" \"scaleway-api-key\" \"argocd-repo\"",
            "sealed \"talos-secrets\" \"scaleway-api-key\" \"argocd-repo\" \"backup-s3\"\n            backup schedule=\"0 3 * * *\" bucket=\"acme-etcd\" region=\"fr-par\" endpoint=\"https://s3.fr-par.scw.cloud\" credentials=\"backup-s3\"",
            1,
        )
        },
    );
    assert!(
        fx.build.paths().any(|p| p == "argocd/staging/main/backup/talos-backup.yaml"),
        "the edit declares a backup"
    );
    let fake = Fake::new();
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    r.unwrap();
    for line in &log {
        assert!(!line.contains("backup-secret-value-42"), "the key in: {line}");
    }
    let calls = fake.calls.borrow();
    for c in calls.iter() {
        let everything = format!("{} {:?}", c.args.join(" "), c.env);
        assert!(!everything.contains("backup-secret-value-42"), "the key in argv or env of {c:?}");
    }
    let at = calls.iter().position(|c| stdin_has(c, "talos-backup-s3")).expect("the Secret's apply");
    let key = &calls[at];
    assert!(key.args.iter().any(|a| a == "--field-manager=fleetc") && key.args.iter().any(|a| a == "--server-side"));
    let v: serde_json::Value = serde_json::from_slice(key.stdin.as_ref().unwrap()).unwrap();
    assert_eq!(v["items"][0]["kind"], "Namespace");
    assert_eq!(v["items"][0]["metadata"]["name"], "talos-backup");
    let secret = &v["items"][1];
    assert_eq!(secret["metadata"]["namespace"], "talos-backup");
    assert_eq!(secret["stringData"]["AWS_ACCESS_KEY_ID"], "BACKUPACCESSKEY01");
    assert_eq!(secret["stringData"]["AWS_SECRET_ACCESS_KEY"], "backup-secret-value-42");
    let root = calls.iter().position(|c| c.args.iter().any(|a| a.ends_with("20-root.yaml"))).expect("the root applied");
    assert!(at < root, "the key is in place before the root delivers the job");
}

/// The secret store's API key (controllers-3 D1): the ClusterSecretStore in out/ reads a Secret
/// in External Secrets Operator's namespace, and `fleetc apply` writes exactly that Secret
/// (namespace, name and keys read from the store) from the sealed `scaleway-api-key`, with its
/// namespace, server-side from stdin, before the root application delivers the store; the key
/// never appears in a command line or an environment (F11).
#[test]
fn the_secret_store_gets_its_api_key_from_the_sealed_input() {
    let fx = Fixture::new();
    let store_text =
        String::from_utf8(fx.build.get("argocd/staging/main/platform/secret-store.yaml").unwrap().to_vec()).unwrap();
    let store: serde_json::Value = serde_saphyr::from_str(&store_text).unwrap();
    let reference = &store["spec"]["provider"]["scaleway"];
    let fake = Fake::new();
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    r.unwrap();
    let calls = fake.calls.borrow();
    for c in calls.iter() {
        let everything = format!("{} {:?}", c.args.join(" "), c.env);
        assert!(!everything.contains("scaleway-api-key-value-42"), "the key in argv or env of {c:?}");
    }
    let name = reference["accessKey"]["secretRef"]["name"].as_str().unwrap();
    let at = calls
        .iter()
        .position(|c| stdin_has(c, &format!("\"name\":\"{name}\"")) && stdin_has(c, "\"kind\":\"List\""))
        .expect("the store's Secret applied");
    let key = &calls[at];
    assert!(key.args.iter().any(|a| a == "--field-manager=fleetc") && key.args.iter().any(|a| a == "--server-side"));
    let v: serde_json::Value = serde_json::from_slice(key.stdin.as_ref().unwrap()).unwrap();
    let ns = reference["accessKey"]["secretRef"]["namespace"].as_str().unwrap();
    assert_eq!(v["items"][0]["kind"], "Namespace");
    assert_eq!(v["items"][0]["metadata"]["name"], ns);
    let secret = &v["items"][1];
    assert_eq!((secret["metadata"]["namespace"].as_str(), secret["metadata"]["name"].as_str()), (Some(ns), Some(name)));
    let data = &secret["stringData"];
    assert_eq!(data[reference["accessKey"]["secretRef"]["key"].as_str().unwrap()], "SCWCCMACCESSKEY01");
    assert_eq!(data[reference["secretKey"]["secretRef"]["key"].as_str().unwrap()], "scaleway-api-key-value-42");
    let root = calls.iter().position(|c| c.args.iter().any(|a| a.ends_with("20-root.yaml"))).expect("the root applied");
    assert!(at < root, "the key is in place before the root delivers the store");
}
