//! `fleetc upgrade` proves each node (issue 32, item 2): after a node's upgrade what it runs is
//! read back (Talos version, schematic, kubelet, Ready) and must be the target, so a
//! `talosctl upgrade` that reports success with no reboot (home-operations/tuppr#575) stops the
//! run at that node; an etcd snapshot is taken and checked as etcd checks it at restore before
//! each control-plane node, and a damaged one stops the run before the node is touched; a
//! rerun resumes at the first node not at the target, upgrading none twice; outside the
//! fleet's maintenance `window` no disruptive step starts. The fakes are
//! `apply_support::running_cluster` and `apply_support::etcd_snapshot`, whose output shapes
//! cite Talos's, etcd's and Kubernetes' code.

use crate::apply_support;

use std::cell::RefCell;
use std::rc::Rc;

use apply_support::{Fake, Fixture, RunningNode, SATURDAY_0300, has, running_cluster};
use fleetc::apply::{Failure, Output, Step, UpgradeOptions};

const SCHEMATIC: &str = "bc9d9abefb95508722f49374f968a9d82cc186057a71ea9345d168a7672a5a9a";
const NODES: [&str; 5] = ["main-cp-1", "main-cp-2", "main-cp-3", "main-system-1", "main-system-2"];

fn run(fx: &Fixture, fake: &Fake) -> (Result<(), Failure>, Vec<String>) {
    let mut log = Vec::new();
    let mut sink = |l: &str| log.push(l.to_owned());
    let mut runner = fake.clone();
    let opts = UpgradeOptions { plan: false, yes: true, identity: Some(fx.identity.clone()) };
    let r = fleetc::apply::upgrade(&fx.inputs(), "main", &opts, &mut runner, &mut sink);
    (r, log)
}

/// Every node on v1.12.6 with another schematic, Kubernetes 1.35.4 (fleet.kdl: v1.13.9, 1.36.2).
fn old_cluster(fake: &Fake) -> Rc<RefCell<Vec<RunningNode>>> {
    fake.on(|c| has(c, "kubectl", &["version"]), Output::ok(r#"{"serverVersion":{"gitVersion":"v1.35.4"}}"#));
    running_cluster(fake, NODES.iter().map(|n| RunningNode::new(n, "v1.12.6", &"0".repeat(64), "v1.35.4")).collect())
}

fn upgrades(state: &Rc<RefCell<Vec<RunningNode>>>) -> Vec<u32> {
    state.borrow().iter().map(|n| n.upgrades).collect()
}

fn snapshots(fx: &Fixture) -> Vec<String> {
    let dir = fx.dir.path().join("home/.local/state/fleetc/etcd-snapshots/staging/main");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn an_upgrade_that_reports_success_without_a_reboot_stops_at_that_node() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let state = old_cluster(&fake);
    state.borrow_mut()[1].no_reboot = true;
    let (r, log) = run(&fx, &fake);
    let e = r.unwrap_err();
    assert_eq!(e.step, Step::Upgrade);
    assert!(
        e.message.contains("node main-cp-2 after its upgrade")
            && e.message.contains("it runs Talos v1.12.6, not v1.13.9")
            && e.message.contains("Nothing further was touched"),
        "{e}\n{}",
        log.join("\n")
    );
    assert_eq!(upgrades(&state), [1, 1, 0, 0, 0], "main-cp-3 and the workers untouched");
    assert!(fake.index(&["upgrade-k8s"]).is_none());
    assert!(
        log.iter().any(|l| l.contains("node main-cp-1 verified: Talos v1.13.9, kubelet v1.35.4, Ready")),
        "{log:#?}"
    );
    assert_eq!(fake.last_switch("talos_api_open"), Some(false), "the switch is closed after the stop");
    assert!(e.to_string().contains("resumes with the first node not at the target"), "{e}");
}

#[test]
fn a_rerun_after_a_stop_resumes_at_that_node_and_upgrades_none_twice() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let state = old_cluster(&fake);
    state.borrow_mut()[1].no_reboot = true;
    assert!(run(&fx, &fake).0.is_err());
    // The cause fixed (the node reboots into what it installed), the same command again.
    state.borrow_mut()[1].no_reboot = false;
    let first_run = fake.calls.borrow().len();
    let (r, log) = run(&fx, &fake);
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert_eq!(upgrades(&state), [1, 2, 1, 1, 1], "main-cp-1 once; main-cp-2 again, its first upgrade never took");
    let rerun: Vec<String> = fake.lines()[first_run..].to_vec();
    let first_upgrade = rerun.iter().find(|l| l.contains(" upgrade --image")).unwrap();
    assert!(first_upgrade.contains("<main-cp-2.address>"), "{first_upgrade}");
    assert!(log.iter().any(|l| l.contains("node main-cp-1 runs v1.13.9") && l.contains("nothing to do")), "{log:#?}");
    assert!(state.borrow().iter().all(|n| n.tag == "v1.13.9" && n.schematic == SCHEMATIC && n.kubelet == "v1.36.2"));
    assert!(log.iter().any(|l| l.contains("every node's kubelet runs v1.36.2, Ready")), "{log:#?}");
}

#[test]
fn a_snapshot_precedes_each_control_plane_node_and_is_kept_outside_the_repository() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let state = old_cluster(&fake);
    let (r, log) = run(&fx, &fake);
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert_eq!(upgrades(&state), [1, 1, 1, 1, 1]);
    let lines = fake.lines();
    for n in ["main-cp-1", "main-cp-2", "main-cp-3"] {
        let addr = format!("<{n}.address>");
        let snap = lines.iter().position(|l| l.contains("etcd snapshot") && l.contains(&addr)).expect(n);
        let up = lines.iter().position(|l| l.contains(" upgrade --image") && l.contains(&addr)).unwrap();
        assert!(snap < up, "{n}: the snapshot comes first");
    }
    assert!(!lines.iter().any(|l| l.contains("etcd snapshot") && l.contains("main-system")), "workers take none");
    // Named by the injected clock and the node, under the operator's state directory.
    assert_eq!(
        snapshots(&fx),
        ["20261205T030000Z-main-cp-1.db", "20261205T030000Z-main-cp-2.db", "20261205T030000Z-main-cp-3.db"]
    );
    assert!(log.iter().any(|l| l.contains("-main-cp-1.db verified:") && l.contains("sha256")), "{log:#?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = fx.dir.path().join("home/.local/state/fleetc/etcd-snapshots/staging/main");
        assert_eq!(std::fs::metadata(dir).unwrap().permissions().mode() & 0o777, 0o700);
    }
}

#[test]
fn a_snapshot_that_fails_its_checksum_stops_before_the_control_plane_upgrade() {
    let fx = Fixture::new();
    let fake = Fake::new();
    // talosctl's own check (the size) passes; the sha256 trailer does not match.
    let damaged = apply_support::etcd_snapshot_bytes(4, true);
    fake.rules.borrow_mut().push(Box::new(move |c| apply_support::etcd_snapshot(c, &damaged)));
    let state = old_cluster(&fake);
    let (r, log) = run(&fx, &fake);
    let e = r.unwrap_err();
    assert!(
        e.message.contains("taken through node main-cp-1 fails its check")
            && e.message.contains("the file is damaged")
            && e.message.contains("the upgrade of node main-cp-1 did not start"),
        "{e}\n{}",
        log.join("\n")
    );
    assert_eq!(upgrades(&state), [0, 0, 0, 0, 0]);
    assert!(fake.index(&["upgrade --image"]).is_none());
    assert_eq!(fake.last_switch("talos_api_open"), Some(false));
}

#[test]
fn outside_the_window_no_disruptive_step_starts() {
    let edit =
        |t: &str| t.replacen("cluster \"main\" {", "cluster \"main\" {\n            window \"sun 02:00-06:00\"", 1);
    let fx = Fixture::for_env_edited("staging", &["talos-secrets", "scaleway-api-key", "argocd-repo"], edit);
    let c = fx.target.clusters.iter().find(|c| c.name == "main").unwrap();
    assert_eq!(c.window.unwrap().to_string(), "sun 02:00-06:00 UTC");
    let fake = Fake::new();
    let state = old_cluster(&fake);
    // Saturday 03:00 UTC: outside.
    let (r, _) = run(&fx, &fake);
    let e = r.unwrap_err();
    assert!(
        e.message.contains("the upgrade of node main-cp-1 would start at 20261205T030000Z UTC, outside the maintenance window (sun 02:00-06:00 UTC)"),
        "{e}"
    );
    assert_eq!(upgrades(&state), [0, 0, 0, 0, 0]);
    assert!(fake.index(&["etcd snapshot"]).is_none(), "no snapshot either");
    // Sunday 03:00 UTC: inside.
    *fake.clock.borrow_mut() = SATURDAY_0300 + 86_400;
    let (r, log) = run(&fx, &fake);
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert_eq!(upgrades(&state), [1, 1, 1, 1, 1]);
}

#[test]
fn the_snapshot_directory_is_what_fleet_kdl_says_and_never_inside_the_fleet() {
    let fx = Fixture::for_env_edited("staging", &["talos-secrets", "scaleway-api-key", "argocd-repo"], |t| {
        t.replacen(
            "environment \"staging\" {",
            "environment \"staging\" {\n        etcd-snapshots \"~/backups/etcd\"",
            1,
        )
    });
    let c = fx.target.clusters.iter().find(|c| c.name == "main").unwrap();
    assert_eq!(c.etcd_snapshots.as_deref(), Some("~/backups/etcd"), "inherited from the environment");
    let fake = Fake::new();
    old_cluster(&fake);
    let (r, log) = run(&fx, &fake);
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert_eq!(std::fs::read_dir(fx.dir.path().join("home/backups/etcd/staging/main")).unwrap().count(), 3);

    // A directory inside the fleet's (a git repository) is refused before anything runs.
    let mut fx = Fixture::new();
    let inside = fx.root.join("snapshots").display().to_string();
    for c in &mut fx.target.clusters {
        c.etcd_snapshots = Some(inside.clone());
    }
    let fake = Fake::new();
    let (r, _) = run(&fx, &fake);
    let e = r.unwrap_err();
    assert_eq!(e.step, Step::Preflight);
    assert!(e.message.contains("inside the fleet's directory") && e.message.contains("R28"), "{e} ({inside})");
    assert!(fake.calls.borrow().is_empty(), "nothing ran");
}

#[test]
fn a_node_left_not_ready_stops_the_rerun_before_the_next_node() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let state = old_cluster(&fake);
    {
        let mut s = state.borrow_mut();
        s[0].tag = "v1.13.9".into();
        s[0].schematic = SCHEMATIC.into();
        s[0].ready = false;
    }
    let (r, _) = run(&fx, &fake);
    let e = r.unwrap_err();
    assert!(e.message.contains("node main-cp-1 runs v1.13.9 but is not Ready"), "{e}");
    assert_eq!(upgrades(&state), [0, 0, 0, 0, 0]);
}

/// The reference fleet with `edit` applied, compiled; its diagnostics one a line
/// (`file:line:column: severity[code]: message`).
fn diagnostics(edit: impl Fn(&str) -> String) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = edit(&std::fs::read_to_string(root.join("fleet.kdl")).unwrap());
    let c = fleetc::compile::compile("fleet.kdl", &text, &fleetc::compile::FsLoader::new(root));
    fleetc::diag::render::short(&c.diags, &c.sources)
}

#[test]
fn a_window_fleet_kdl_cannot_read_is_an_error_at_its_value() {
    let line = |t: &str| t.lines().position(|l| l.contains("cluster \"main\" {")).unwrap() + 2;
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fleet.kdl")).unwrap();
    let add = |w: &'static str| {
        move |t: &str| t.replacen("cluster \"main\" {", &format!("cluster \"main\" {{\n            {w}"), 1)
    };
    let d = diagnostics(add("window \"sat 02:00-30:00\""));
    assert!(d.contains(&format!("fleet.kdl:{}:20: error", line(&text))) && d.contains("not a time of day"), "{d}");
    let d = diagnostics(add("window \"someday 02:00-03:00\""));
    assert!(d.contains("`someday` is not a day"), "{d}");
    let d = diagnostics(add("etcd-snapshots \"/a\"\n            etcd-snapshots \"/b\""));
    assert!(d.contains("etcd-snapshots"), "written twice: {d}");
    assert!(diagnostics(add("window \"sat,sun 02:00-06:00\"\n            etcd-snapshots \"~/b\"")).is_empty());
}
