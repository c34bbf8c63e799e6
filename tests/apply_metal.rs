//! `fleetc apply` on bare metal (docs/metal.md) against fake tools that model maintenance
//! mode (`apply_support::maintenance`): the reference fleet's `onprem` environment, whose
//! machines are declared by MAC (and the storage node also by its install disk's serial).

use crate::apply_support;

use apply_support::{Fake, Fixture, Machine, maintenance, run_apply};

fn fixture() -> Fixture {
    Fixture::for_env("onprem", &["talos-secrets", "argocd-repo"])
}

/// The machines of `onprem` as fleet.kdl declares them.
fn declared() -> Vec<Machine> {
    [
        ("10.30.0.11", "3c:ec:ef:10:00:11"),
        ("10.30.0.12", "3c:ec:ef:10:00:12"),
        ("10.30.0.13", "3c:ec:ef:10:00:13"),
        ("10.30.0.21", "3c:ec:ef:10:00:21"),
    ]
    .into_iter()
    .map(|(a, m)| Machine {
        address: a.into(),
        mac: m.into(),
        serial: if a.ends_with(".21") { "S6PNNS0T500123".into() } else { "OTHER".into() },
        configured: false,
    })
    .collect()
}

fn apply_configs(fake: &Fake) -> Vec<String> {
    fake.lines().into_iter().filter(|l| l.starts_with("talosctl apply-config")).collect()
}

#[test]
fn every_declared_machine_is_checked_configured_and_gated_in_order() {
    let fx = fixture();
    let fake = Fake::new();
    let machines = maintenance(&fake, declared());
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
    assert!(machines.borrow().iter().all(|m| m.configured));
    let applied = apply_configs(&fake);
    assert_eq!(applied.len(), 4, "{applied:?}");
    for (i, host) in ["10.30.0.11", "10.30.0.12", "10.30.0.13", "10.30.0.21"].iter().enumerate() {
        assert!(applied[i].contains(&format!("--nodes {host}")), "{i}: {}", applied[i]);
    }
    // The identity check precedes every config sent; the bootstrap runs once, after cp-1.
    for host in ["10.30.0.11", "10.30.0.12", "10.30.0.13", "10.30.0.21"] {
        let check = fake.index(&["get links --insecure", &format!("--nodes {host}")]).unwrap();
        let sent = fake.index(&["apply-config --insecure", &format!("--nodes {host}")]).unwrap();
        assert!(check < sent, "{host}: identity checked before the config is sent");
    }
    assert!(
        fake.index(&["get disks --insecure", "--nodes 10.30.0.21"]).is_some(),
        "the storage node's disk is checked"
    );
    let boots: Vec<String> = fake.lines().into_iter().filter(|l| l.ends_with(" bootstrap")).collect();
    assert_eq!(boots.len(), 1, "{boots:?}");
    let b = fake.index(&[" bootstrap"]).unwrap();
    assert!(fake.index(&["apply-config", "--nodes 10.30.0.11"]).unwrap() < b);
    assert!(b < fake.index(&["apply-config", "--nodes 10.30.0.12"]).unwrap());
    // A health gate after each node, before the next one's config.
    let h2 = fake
        .index(&["health", "--control-plane-nodes 10.30.0.11,10.30.0.12 "])
        .or_else(|| fake.index(&["health", "--control-plane-nodes 10.30.0.11,10.30.0.12"]));
    assert!(h2.unwrap() < fake.index(&["apply-config", "--nodes 10.30.0.13"]).unwrap());
    // The config is Talos's own generator's, with the metal installer.
    assert!(fake.index(&["gen config", "--install-image factory.talos.dev/metal-installer/"]).is_some());
    // No OpenTofu on bare metal.
    assert!(fake.lines().iter().all(|l| !l.starts_with("tofu ")), "{:?}", fake.lines());
    // Argo CD after the machines.
    assert!(
        fake.index(&["kubectl", "argocd-server"]).unwrap()
            > fake.index(&["apply-config", "--nodes 10.30.0.21"]).unwrap()
    );
}

#[test]
fn a_machine_that_is_not_the_declared_one_gets_no_config() {
    let fx = fixture();
    let fake = Fake::new();
    let mut ms = declared();
    ms[1].mac = "52:54:00:aa:bb:cc".into(); // someone else's machine answers at cp-2's address
    let machines = maintenance(&fake, ms);
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    let f = r.expect_err("refused");
    assert!(
        f.message.contains("52:54:00:aa:bb:cc") && f.message.contains("refused"),
        "{}\n{}",
        f.message,
        log.join("\n")
    );
    assert!(!machines.borrow()[1].configured);
    assert!(fake.index(&["apply-config", "--nodes 10.30.0.12"]).is_none(), "nothing was sent to the wrong machine");
    assert!(fake.index(&["apply-config", "--nodes 10.30.0.13"]).is_none(), "the run stops there");

    // A wrong disk refuses too: the storage node is recognised by its install disk's serial.
    let fake = Fake::new();
    let mut ms = declared();
    ms[3].serial = "WRONG".into();
    maintenance(&fake, ms);
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    assert!(r.expect_err("refused").message.contains("no disk that matches"));
    assert!(fake.index(&["apply-config", "--nodes 10.30.0.21"]).is_none());
}

#[test]
fn a_rerun_resumes_with_the_first_machine_not_configured() {
    let fx = fixture();
    let fake = Fake::new();
    let mut ms = declared();
    ms[0].configured = true;
    ms[1].configured = true;
    maintenance(&fake, ms);
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
    let applied = apply_configs(&fake);
    assert_eq!(applied.len(), 2, "only the machines not configured yet: {applied:?}");
    assert!(applied[0].contains("10.30.0.13") && applied[1].contains("10.30.0.21"));
    assert!(fake.lines().iter().all(|l| !l.ends_with(" bootstrap")), "etcd is not bootstrapped again");
    assert!(fake.index(&["get links --insecure", "--nodes 10.30.0.11"]).is_none(), "a configured machine is not asked");
}

#[test]
fn the_plan_lists_the_identity_check_before_each_config() {
    let fx = fixture();
    let fake = Fake::new();
    let mut opts = fx.options();
    opts.plan = true;
    let (r, log) = run_apply(&fx, &fake, &opts);
    assert!(r.is_ok(), "{r:?}");
    let pos = |needle: &str| {
        log.iter().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle}\n{}", log.join("\n")))
    };
    assert!(pos("== 3. machines in maintenance mode") < pos("get links --insecure --nodes 10.30.0.11"));
    assert!(pos("get links --insecure --nodes 10.30.0.11") < pos("apply-config --insecure --nodes 10.30.0.11"));
    assert!(pos("is the declared machine (MAC 3c:ec:ef:10:00:11)") < pos("apply-config --insecure --nodes 10.30.0.11"));
    assert!(pos("apply-config --insecure --nodes 10.30.0.11") < pos("bootstrap"));
    assert!(pos("bootstrap") < pos("apply-config --insecure --nodes 10.30.0.12"));
    assert!(pos("== 7. Argo CD") > pos("apply-config --insecure --nodes 10.30.0.21"));
    assert!(log.iter().all(|l| !l.starts_with("$ tofu")), "no OpenTofu on bare metal");
}
