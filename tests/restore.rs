//! `fleetc restore <env>/<cluster> --from <snapshot>` (issue 32, item 4): the whole recovery
//! of a cluster whose etcd is lost, run against a fake talosctl that models Talos's side of
//! it (siderolabs/talos v1.13.9):
//!
//! * `reset --system-labels-to-wipe=EPHEMERAL --reboot` wipes the node's etcd data and reboots
//!   it (`cmd/talosctl/cmd/talos/reset.go` l.188-193): its API does not answer for a few
//!   polls, then etcd waits in `Preparing` for a bootstrap;
//! * `service etcd` prints `NODE`, `ID`, `STATE`… one per line
//!   (`pkg/machinery/formatters/formatters.go` l.208-237; `Preparing`,
//!   `internal/app/machined/pkg/system/events/events.go` l.42-43);
//! * `bootstrap --recover-from=<file>` prints the snapshot's status
//!   (`cmd/talosctl/cmd/talos/bootstrap.go` l.53-54) and is refused with AlreadyExists on a
//!   node whose etcd data directory is not empty
//!   (`internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go` l.457-459); once one
//!   node recovers, the other wiped control-plane nodes join;
//! * `etcd members` prints a `NODE ID HOSTNAME PEER URLS CLIENT URLS LEARNER` table
//!   (`cmd/talosctl/cmd/talos/etcd.go` l.224-259).

use crate::apply_support;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use apply_support::{Fake, Fixture};
use fleetc::apply::{Cmd, Failure, Output, RestoreOptions, Step};

#[derive(Debug, Clone)]
struct ControlPlane {
    hostname: String,
    /// etcd's data directory holds data.
    data: bool,
    member: bool,
    /// Polls left before the rebooting node answers.
    rebooting: u32,
    /// `reset` does not wipe it (a disk Talos cannot write, say).
    keeps_data: bool,
    /// Does not join the recovered cluster.
    refuses_join: bool,
    resets: u32,
    bootstraps: u32,
}

fn control_plane(n: &str) -> ControlPlane {
    ControlPlane {
        hostname: n.into(),
        data: true,
        member: false,
        rebooting: 0,
        keeps_data: false,
        refuses_join: false,
        resets: 0,
        bootstraps: 0,
    }
}

/// The fake Talos side of a cluster whose etcd lost quorum (see the module's comment).
fn lost_etcd(fake: &Fake) -> Rc<RefCell<Vec<ControlPlane>>> {
    let state = Rc::new(RefCell::new(["main-cp-1", "main-cp-2", "main-cp-3"].map(control_plane).to_vec()));
    let st = state.clone();
    fake.rules.borrow_mut().push(Box::new(move |c: &Cmd| {
        if c.program != "talosctl" {
            return None;
        }
        let addr = c.flag("--nodes")?.to_owned();
        let mut cps = st.borrow_mut();
        let i = cps.iter().position(|n| format!("<{}.address>", n.hostname) == addr)?;
        let has = |a: &str| c.args.iter().any(|x| x == a);
        if has("reset") {
            let n = &mut cps[i];
            assert!(has("--graceful=false") && has("--reboot") && has("--system-labels-to-wipe=EPHEMERAL"), "{c:?}");
            n.resets += 1;
            n.data = n.keeps_data;
            n.member = false;
            n.rebooting = 2;
            return Some(Output::ok(Vec::new()));
        }
        if has("service") && has("etcd") {
            let n = &mut cps[i];
            if n.rebooting > 0 {
                n.rebooting -= 1;
                return Some(Output::failed(
                    1,
                    format!("error getting service info: rpc error: code = Unavailable desc = connection error: dial tcp {addr}:50000: connect: connection refused"),
                ));
            }
            let state = if n.member || n.data { "Running" } else { "Preparing" };
            return Some(Output::ok(format!(
                "NODE     {addr}\nID       etcd\nSTATE    {state}\nHEALTH   ?\nEVENTS   [{state}]: Running pre state (17s ago)\n"
            )));
        }
        if has("bootstrap") {
            let from = c.args.iter().find_map(|a| a.strip_prefix("--recover-from="))?.to_owned();
            cps[i].bootstraps += 1;
            if cps[i].data {
                return Some(Output::failed(
                    1,
                    "error executing bootstrap: rpc error: code = AlreadyExists desc = etcd data directory is not empty",
                ));
            }
            let size = std::fs::metadata(&from).map(|m| m.len()).unwrap_or_default();
            for n in cps.iter_mut().filter(|n| !n.data && !n.refuses_join) {
                n.member = true;
            }
            return Some(Output::ok(format!(
                "recovering from snapshot \"{from}\": hash c25fd181, revision 4193, total keys 1287, total size {}\n",
                size.saturating_sub(32)
            )));
        }
        if has("etcd") && has("members") {
            let mut out = "NODE        ID                 HOSTNAME    PEER URLS                 CLIENT URLS               LEARNER\n".to_owned();
            for (k, n) in cps.iter().enumerate().filter(|(_, n)| n.member) {
                out += &format!(
                    "{addr}   3b5e3a5e1ad1bd6{k}   {}   https://10.10.0.{k}:2380   https://10.10.0.{k}:2379   false\n",
                    n.hostname
                );
            }
            return Some(Output::ok(out));
        }
        None
    }));
    state
}

fn snapshot_file(fx: &Fixture, damaged: bool) -> PathBuf {
    let p = fx.dir.path().join("home/db.snapshot");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, apply_support::etcd_snapshot_bytes(4, damaged)).unwrap();
    p
}

fn run(fx: &Fixture, fake: &Fake, from: PathBuf, plan: bool) -> (Result<(), Failure>, Vec<String>) {
    let mut log = Vec::new();
    let mut sink = |l: &str| log.push(l.to_owned());
    let mut runner = fake.clone();
    let opts = RestoreOptions { plan, yes: true, identity: Some(fx.identity.clone()), from };
    let r = fleetc::apply::restore(&fx.inputs(), "main", &opts, &mut runner, &mut sink);
    (r, log)
}

#[test]
fn the_whole_restore_follows_talos_procedure() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let state = lost_etcd(&fake);
    let from = snapshot_file(&fx, false);
    let (r, log) = run(&fx, &fake, from.clone(), false);
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    let cps = state.borrow();
    assert!(cps.iter().all(|n| n.resets == 1 && n.member), "{cps:#?}");
    assert_eq!(cps.iter().map(|n| n.bootstraps).collect::<Vec<_>>(), [1, 0, 0], "one bootstrap, on the first node");
    let lines = fake.lines();
    assert!(!lines.iter().any(|l| l.contains(" reset ") && l.contains("main-system")), "workers are not reset");
    let last_reset = lines.iter().rposition(|l| l.contains(" reset ")).unwrap();
    let bootstrap = lines.iter().position(|l| l.contains(" bootstrap ")).unwrap();
    let polls: Vec<usize> =
        lines.iter().enumerate().filter(|(_, l)| l.contains(" service etcd")).map(|(i, _)| i).collect();
    assert!(polls.len() >= 3 * 3, "each node polled through its reboot: {polls:?}");
    assert!(last_reset < polls[0] && *polls.last().unwrap() < bootstrap, "reset all, wait for all, then bootstrap");
    assert!(
        lines[bootstrap].ends_with(&format!("bootstrap --recover-from={}", from.display())),
        "{}",
        lines[bootstrap]
    );
    let health = lines.iter().position(|l| l.contains(" health ")).unwrap();
    let members = lines.iter().position(|l| l.contains("etcd members")).unwrap();
    assert!(bootstrap < health && health < members, "{lines:#?}");
    assert!(*fake.sleeps.borrow() >= 6, "waits between polls, through the runner");
    assert!(log.iter().any(|l| l.contains("members main-cp-1, main-cp-2, main-cp-3, every node Ready")), "{log:#?}");
    assert_eq!(fake.last_switch("talos_api_open"), Some(false));
    assert_eq!(fake.last_switch("kubernetes_api_open"), Some(false));
}

#[test]
fn a_damaged_snapshot_is_refused_before_any_node_is_touched() {
    let fx = Fixture::new();
    let fake = Fake::new();
    lost_etcd(&fake);
    let (r, _) = run(&fx, &fake, snapshot_file(&fx, true), false);
    let e = r.unwrap_err();
    assert_eq!(e.step, Step::Preflight);
    assert!(
        e.message.contains("cannot be restored")
            && e.message.contains("damaged")
            && e.message.contains("no node was touched"),
        "{e}"
    );
    assert!(fake.calls.borrow().is_empty());
    let (r, _) = run(&fx, &fake, fx.dir.path().join("nowhere.db"), false);
    assert!(r.unwrap_err().message.contains("cannot read it"));
}

#[test]
fn a_node_whose_etcd_data_survives_its_reset_stops_the_restore_before_the_bootstrap() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let state = lost_etcd(&fake);
    state.borrow_mut()[1].keeps_data = true;
    let (r, _) = run(&fx, &fake, snapshot_file(&fx, false), false);
    let e = r.unwrap_err();
    assert_eq!(e.step, Step::Restore);
    assert!(
        e.message.contains("etcd on node main-cp-2 is not `Preparing`") && e.message.contains("(last: Running)"),
        "{e}"
    );
    assert!(e.message.contains("no bootstrap was started"), "{e}");
    assert!(fake.index(&["bootstrap"]).is_none());
    assert_eq!(fake.last_switch("talos_api_open"), Some(false));
}

#[test]
fn a_control_plane_node_missing_from_the_recovered_members_is_named() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let state = lost_etcd(&fake);
    state.borrow_mut()[2].refuses_join = true;
    let (r, _) = run(&fx, &fake, snapshot_file(&fx, false), false);
    let e = r.unwrap_err();
    assert!(e.message.contains("main-cp-3 is not a member"), "{e}");
}

#[test]
fn restore_plan_runs_nothing_and_shows_the_procedure() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let from = snapshot_file(&fx, false);
    let (r, log) = run(&fx, &fake, from.clone(), true);
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert!(fake.calls.borrow().is_empty());
    assert_eq!(
        log.iter().filter(|l| l.contains("reset --graceful=false --reboot --system-labels-to-wipe=EPHEMERAL")).count(),
        3
    );
    assert!(log.iter().any(|l| l.contains(&format!("bootstrap --recover-from={}", from.display()))), "{log:#?}");
}
