//! `fleetc upgrade` (node by node, control plane first, health between, skip what is at the
//! target, one minor at a time, switches closed) and `fleetc talos render` (Talos's generator
//! per node, files 0600, never inside out/).

use crate::apply_support;

use apply_support::{Fake, Fixture, RunningNode, has, running_cluster};
use fleetc::apply::{Output, Step, UpgradeOptions};

fn run_upgrade(fx: &Fixture, fake: &Fake, plan: bool) -> (Result<(), fleetc::apply::Failure>, Vec<String>) {
    let mut log = Vec::new();
    let mut sink = |l: &str| log.push(l.to_owned());
    let mut runner = fake.clone();
    let opts = UpgradeOptions { plan, yes: true, identity: Some(fx.identity.clone()) };
    let r = fleetc::apply::upgrade(&fx.inputs(), "main", &opts, &mut runner, &mut sink);
    (r, log)
}

const SCHEMATIC: &str = "bc9d9abefb95508722f49374f968a9d82cc186057a71ea9345d168a7672a5a9a";

#[test]
fn upgrades_node_by_node_control_plane_first_skipping_nodes_at_the_target() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let mut nodes = vec![RunningNode::new("main-cp-1", "v1.13.9", SCHEMATIC, "v1.35.4")];
    for n in ["main-cp-2", "main-cp-3", "main-system-1", "main-system-2"] {
        nodes.push(RunningNode::new(n, "v1.12.6", &"0".repeat(64), "v1.35.4"));
    }
    let state = running_cluster(&fake, nodes);
    fake.on(|c| has(c, "kubectl", &["version"]), Output::ok(r#"{"serverVersion":{"gitVersion":"v1.35.4"}}"#));
    let (r, log) = run_upgrade(&fx, &fake, false);
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    let lines = fake.lines();
    let upgrades: Vec<&String> = lines.iter().filter(|l| l.contains(" upgrade --image")).collect();
    assert_eq!(upgrades.len(), 4, "main-cp-1 is at the target: {upgrades:#?}");
    let order = ["main-cp-2", "main-cp-3", "main-system-1", "main-system-2"];
    for (u, n) in upgrades.iter().zip(order) {
        assert!(
            u.contains(&format!("<{n}.address>"))
                && u.contains(&format!("factory.talos.dev/scaleway-installer/{SCHEMATIC}:v1.13.9")),
            "{u}"
        );
    }
    // Health after each node, before the next upgrade.
    for w in upgrades.windows(2) {
        let a = lines.iter().position(|l| l == w[0]).unwrap();
        let b = lines.iter().position(|l| l == w[1]).unwrap();
        assert!(lines[a..b].iter().any(|l| l.contains(" health ")), "no health check between {} and {}", w[0], w[1]);
    }
    let k8s = fake.index(&["upgrade-k8s", "--to 1.36.2"]).expect("Kubernetes upgraded");
    assert!(k8s > lines.iter().position(|l| l == upgrades[3]).unwrap(), "Kubernetes after the OS");
    assert_eq!(fake.last_switch("talos_api_open"), Some(false));
    assert_eq!(fake.last_switch("kubernetes_api_open"), Some(false));
    assert!(state.borrow().iter().all(|n| n.tag == "v1.13.9" && n.kubelet == "v1.36.2"), "{:#?}", state.borrow());
}

#[test]
fn the_talos_upgrade_path_is_one_minor_at_a_time() {
    let fx = Fixture::new();
    let fake = Fake::new();
    running_cluster(
        &fake,
        ["main-cp-1", "main-cp-2", "main-cp-3", "main-system-1", "main-system-2"]
            .iter()
            .map(|n| RunningNode::new(n, "v1.11.2", SCHEMATIC, "v1.35.4"))
            .collect(),
    );
    let (r, _) = run_upgrade(&fx, &fake, false);
    let e = r.unwrap_err();
    assert_eq!(e.step, Step::Upgrade);
    assert!(e.message.contains("one minor release at a time") && e.message.contains("v1.12.x"), "{e}");
    assert!(fake.index(&["upgrade --image"]).is_none());
    assert_eq!(fake.last_switch("talos_api_open"), Some(false), "closed after the refusal");
}

#[test]
fn a_failed_health_check_stops_the_upgrade_and_closes_the_switch() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.fail_on(|c| has(c, "talosctl", &["health"]));
    let (r, _) = run_upgrade(&fx, &fake, false);
    assert!(r.unwrap_err().message.contains("not healthy"));
    assert_eq!(fake.lines().iter().filter(|l| l.contains(" upgrade --image")).count(), 1, "stops at the first node");
    assert_eq!(fake.last_switch("talos_api_open"), Some(false));
}

#[test]
fn upgrade_plan_runs_nothing() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let (r, log) = run_upgrade(&fx, &fake, true);
    r.unwrap();
    assert!(fake.calls.borrow().is_empty());
    assert_eq!(log.iter().filter(|l| l.contains(" upgrade --image ")).count(), 5, "{log:#?}");
    assert!(log.iter().any(|l| l.contains("upgrade-k8s --to 1.36.2")));
}

fn run_render(fx: &Fixture, fake: &Fake, dest: std::path::PathBuf) -> Result<(), fleetc::apply::Failure> {
    let mut sink = |_: &str| {};
    let mut runner = fake.clone();
    let opts = fleetc::apply::RenderOptions { plan: false, identity: Some(fx.identity.clone()), dest };
    fleetc::apply::render(&fx.inputs(), "main", &opts, &mut runner, &mut sink)
}

/// The shape of `talosctl gen config` output for Talos 1.13: the v1alpha1 document, the
/// generated `HostnameConfig` (`auto: stable`), fleetc's own documents.
const GROUP: &str = "version: v1alpha1\nmachine:\n    type: controlplane\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\n";

/// A talosctl whose `gen config` of a machine config writes [`GROUP`].
fn talos_like(fake: &Fake) {
    fake.on(
        |c| {
            let machine = has(c, "talosctl", &["gen"]) && c.flag("--output-types") != Some("talosconfig");
            if let (true, Some(out)) = (machine, c.flag("--output")) {
                std::fs::write(out, GROUP).unwrap();
            }
            machine
        },
        Output::ok(""),
    );
}

#[test]
fn render_calls_talosctl_once_per_pool_and_merges_each_nodes_hostname() {
    let fx = Fixture::new();
    let fake = Fake::new();
    talos_like(&fake);
    let dest = fx.dir.path().join("rendered");
    run_render(&fx, &fake, dest.clone()).unwrap();
    let lines = fake.lines();
    assert_eq!(lines.len(), 3, "control plane, the system pool, the talosconfig: {lines:#?}");
    let (cp, w) = (&lines[0], &lines[1]);
    assert!(cp.contains("--output-types controlplane") && w.contains("--output-types worker"), "{lines:#?}");
    // The shared patches only (no node's own), the user's last.
    assert!(!cp.contains("__nodes__") && !w.contains("__nodes__"), "{lines:#?}");
    let order = |l: &str, a: &str, b: &str| l.find(a).zip(l.find(b)).is_some_and(|(x, y)| x < y);
    assert!(order(cp, "__controlplane.yaml", "patches__controlplane__01-registry-mirror.yaml"), "{cp}");
    assert!(order(w, "__workers__system.yaml", "patches__workers__system__02-system-kubelet.yaml"), "{w}");
    for (host, _) in [("main-cp-2", true), ("main-system-2", false)] {
        let got = std::fs::read_to_string(dest.join(format!("{host}.yaml"))).unwrap();
        let want = GROUP.replace("auto: stable\n", &format!("auto: \"off\"\nhostname: {host}\n"));
        assert_eq!(got, want, "{host}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["main-cp-1.yaml", "main-system-2.yaml", "talosconfig"] {
            let mode = std::fs::metadata(dest.join(f)).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{f}");
        }
    }
    let bundle = fake.calls.borrow()[0].flag("--with-secrets").unwrap().to_owned();
    assert!(!std::path::Path::new(&bundle).exists());
}

#[test]
fn render_uses_talos_generator_per_node_with_private_files() {
    // A talosctl whose output `compose` does not know (the fake writes `generated`): after
    // the group's call, one call per node, as before.
    let fx = Fixture::new();
    let fake = Fake::new();
    let dest = fx.dir.path().join("rendered");
    run_render(&fx, &fake, dest.clone()).unwrap();
    let lines: Vec<String> = fake.lines().into_iter().filter(|l| !l.contains("/group-")).collect();
    assert_eq!(fake.lines().len() - lines.len(), 2, "one tried group call per pool");
    assert_eq!(lines.len(), 6, "5 nodes and a talosconfig: {lines:#?}");
    let cp1 = lines.iter().find(|l| l.contains("main-cp-1.yaml")).unwrap();
    assert!(cp1.starts_with("talosctl gen config main https://10.10.0.10:6443 --with-secrets "), "{cp1}");
    assert!(
        cp1.contains("--output-types controlplane")
            && cp1.contains(&format!("--install-image factory.talos.dev/scaleway-installer/{SCHEMATIC}:v1.13.9"))
    );
    let w = lines.iter().find(|l| l.contains("main-system-1.yaml")).unwrap();
    assert!(w.contains("--output-types worker"), "{w}");
    // The patches are private copies of the checked build's bytes, never out/ itself
    // (which may change while talosctl runs).
    for l in lines.iter().filter(|l| l.contains("--config-patch")) {
        assert!(l.contains("/patch-talos__staging__main__") && !l.contains("/out/"), "{l}");
    }
    // The user's patches come after fleetc's own documents, fleet level first (docs/talos.md,
    // "Patches"); their private copies are named by their path in out/, `/` as `__`: the registry mirror everywhere, the kubelet patch on the system pool only.
    let order = |l: &str, a: &str, b: &str| l.find(a).zip(l.find(b)).is_some_and(|(x, y)| x < y);
    assert!(order(cp1, "nodes__main-cp-1.yaml", "patches__controlplane__01-registry-mirror.yaml"), "{cp1}");
    assert!(!cp1.contains("system-kubelet"), "{cp1}");
    assert!(
        order(
            w,
            "patches__workers__system__01-registry-mirror.yaml",
            "patches__workers__system__02-system-kubelet.yaml"
        ),
        "{w}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["main-cp-1.yaml", "main-system-2.yaml", "talosconfig"] {
            let mode = std::fs::metadata(dest.join(f)).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{f}");
        }
    }
    // The decrypted bundle went to a private directory that no longer exists.
    let bundle = fake.calls.borrow()[0].flag("--with-secrets").unwrap().to_owned();
    assert!(!std::path::Path::new(&bundle).exists());
}

#[test]
fn render_refuses_a_directory_inside_out() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let e = run_render(&fx, &fake, fx.out.join("rendered")).unwrap_err();
    assert!(e.message.contains("nothing decrypted is ever written under out/"), "{e}");
    assert!(fake.calls.borrow().is_empty());
    assert!(!fx.out.join("rendered").exists());
}
