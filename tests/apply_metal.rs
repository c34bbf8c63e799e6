//! `fleetc apply` on bare metal (docs/metal.md) against a fake talosctl that models maintenance
//! mode as Talos's maintenance API answers (`apply_support::maintenance`, its output shapes
//! cited there): the reference fleet's `onprem` environment, whose machines are declared by
//! MAC and link (and the storage node by its install disk's serial and its bond's members).

use crate::apply_support;

use apply_support::{Fake, FakeDisk, Fixture, Machine, maintenance, run_apply};

const SEALED: &[&str] = &["talos-secrets", "argocd-repo"];

fn fixture() -> Fixture {
    Fixture::for_env("onprem", SEALED)
}

/// The machines of `onprem` as fleet.kdl declares them, in maintenance mode at their static
/// addresses (a DHCP reservation).
fn declared() -> Vec<Machine> {
    // Each with its install disk's serial as fleet.kdl names it (`install-disk serial=`).
    let mut ms: Vec<Machine> = [
        ("10.30.0.11", "3c:ec:ef:10:00:11", "S6PNNS0T500111"),
        ("10.30.0.12", "3c:ec:ef:10:00:12", "S6PNNS0T500112"),
        ("10.30.0.13", "3c:ec:ef:10:00:13", "S6PNNS0T500113"),
        ("10.30.0.21", "3c:ec:ef:10:00:21", "S6PNNS0T500123"),
    ]
    .into_iter()
    .map(|(a, m, serial)| Machine::new(a, m, serial))
    .collect();
    // The storage node bonds two ports.
    ms[3].links = vec!["enp1s0f0".into(), "enp1s0f1".into()];
    ms
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
    let h2 = fake.index(&["health", "--control-plane-nodes 10.30.0.11,10.30.0.12"]);
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

/// Item 2: a machine in maintenance mode is on DHCP. `--leases` (a dnsmasq lease file) gives
/// each MAC's address; apply checks and configures it there, then reaches it at its static
/// address through the cluster's talosconfig.
#[test]
fn the_dhcp_address_is_found_by_mac_then_the_static_one_is_used() {
    let fx = fixture();
    let fake = Fake::new();
    let mut ms = declared();
    let mut leases = String::new();
    for (i, m) in ms.iter_mut().enumerate() {
        let dhcp = format!("10.30.0.{}", 150 + i);
        leases += &format!("1733400000 {} {dhcp} * 01:{}\n", m.mac.to_uppercase(), m.mac);
        m.dhcp = Some(dhcp);
    }
    let file = fx.dir.path().join("dnsmasq.leases");
    std::fs::write(&file, leases).unwrap();
    let machines = maintenance(&fake, ms.clone());

    // Without the leases, the static address answers nothing: refused there, nothing sent.
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let f = r.expect_err("nothing answers at the static address");
    assert!(f.message.contains("10.30.0.11"), "{}", f.message);
    assert!(apply_configs(&fake).is_empty());

    let fake = Fake::new();
    let machines2 = maintenance(&fake, ms);
    let opts = fleetc::apply::ApplyOptions { leases: Some(file), ..fx.options() };
    let (r, log) = run_apply(&fx, &fake, &opts);
    assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
    assert!(machines2.borrow().iter().all(|m| m.configured));
    assert!(!machines.borrow()[0].configured);
    let check = fake.index(&["get links --insecure", "--nodes 10.30.0.150"]).expect("asked at its lease");
    let sent = fake.index(&["apply-config --insecure", "--nodes 10.30.0.150"]).expect("configured at its lease");
    let up = fake.index(&["--talosconfig", "--nodes 10.30.0.11", "version"]).unwrap();
    let after: Vec<String> = fake.lines()[sent..].to_vec();
    assert!(check < sent);
    assert!(
        after.iter().any(|l| l.contains("--talosconfig") && l.contains("--nodes 10.30.0.11") && l.contains("version")),
        "then at its static address"
    );
    assert!(up < sent, "the configured check comes first, at the static address");
    assert!(
        fake.lines().iter().all(|l| !(l.contains("--insecure") && l.contains("--nodes 10.30.0.11 "))),
        "the maintenance service is never asked at the static address"
    );
    assert!(log.iter().any(|l| l.contains("asked at 10.30.0.150 (the lease of 3c:ec:ef:10:00:11 in --leases)")));
}

/// A declared `maintenance-address` is used as it is (and carried in machines.yaml).
#[test]
fn a_declared_maintenance_address_is_used() {
    let fx = Fixture::for_env_edited("onprem", SEALED, |t| {
        t.replace(
            "mac \"3c:ec:ef:10:00:12\"",
            "mac \"3c:ec:ef:10:00:12\"\n                    maintenance-address \"10.30.0.199\"",
        )
    });
    let inv = std::fs::read_to_string(fx.out.join("metal/onprem/main/machines.yaml")).unwrap();
    assert!(inv.contains("maintenanceAddress: \"10.30.0.199\""), "{inv}");
    let fake = Fake::new();
    let mut ms = declared();
    ms[1].dhcp = Some("10.30.0.199".into());
    maintenance(&fake, ms);
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
    assert!(fake.index(&["apply-config --insecure", "--nodes 10.30.0.199"]).is_some());
}

#[test]
fn a_machine_with_another_mac_gets_no_config() {
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
}

/// Item 3: a declared link the machine does not have is refused before any config is sent
/// (one LinkConfig ends DHCP on every link), with every difference listed.
#[test]
fn a_wrong_link_name_is_refused_before_any_config_is_sent() {
    let fx = fixture();
    let fake = Fake::new();
    let mut ms = declared();
    ms[0].links = vec!["enp3s0".into()]; // fleet.kdl says `link "eno1"`
    ms[0].mac = "52:54:00:aa:bb:cc".into();
    maintenance(&fake, ms);
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    let f = r.expect_err("refused");
    assert!(f.message.contains("no link `eno1`") && f.message.contains("enp3s0"), "{}\n{}", f.message, log.join("\n"));
    assert!(f.message.contains("52:54:00:aa:bb:cc"), "every difference is listed: {}", f.message);
    assert!(apply_configs(&fake).is_empty(), "no config was sent");

    // The storage node's bond members are links it must have.
    let fake = Fake::new();
    let mut ms = declared();
    ms[3].links = vec!["enp1s0f0".into(), "eno2".into()];
    maintenance(&fake, ms);
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    assert!(r.expect_err("refused").message.contains("no link `enp1s0f1`"));
    assert!(fake.index(&["apply-config", "--nodes 10.30.0.21"]).is_none());
}

#[test]
fn a_wrong_disk_serial_is_refused() {
    let fx = fixture();
    let fake = Fake::new();
    let mut ms = declared();
    ms[3].disks = vec![FakeDisk::nvme("WRONG")];
    maintenance(&fake, ms);
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let f = r.expect_err("refused");
    assert!(f.message.contains("no disk matches the install disk serial=\"S6PNNS0T500123\""), "{}", f.message);
    assert!(f.message.contains("WRONG"), "the disks it has are named: {}", f.message);
    assert!(fake.index(&["apply-config", "--nodes 10.30.0.21"]).is_none());
}

/// A single-disk machine installs: its one disk is the install disk. Beside a USB boot stick
/// (another serial) the declared serial still selects exactly one disk.
#[test]
fn a_single_disk_machine_installs() {
    let fx = fixture();
    for with_stick in [false, true] {
        let fake = Fake::new();
        let mut ms = declared();
        if with_stick {
            ms[3].disks.push(FakeDisk {
                dev: "/dev/sda".into(),
                serial: "USB-STICK-1".into(),
                transport: "usb".into(),
                size: 32_000_000_000,
            });
        }
        let machines = maintenance(&fake, ms);
        let (r, log) = run_apply(&fx, &fake, &fx.options());
        assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
        assert!(machines.borrow()[3].configured);
        let check = fake.index(&["get disks --insecure", "--nodes 10.30.0.21"]).unwrap();
        assert!(check < fake.index(&["apply-config --insecure", "--nodes 10.30.0.21"]).unwrap());
    }
}

#[test]
fn a_rerun_resumes_with_the_first_machine_not_configured() {
    let fx = fixture();
    let fake = Fake::new();
    let mut ms = declared();
    ms[0].configured = true;
    ms[0].bootstrapped = true;
    ms[1].configured = true;
    maintenance(&fake, ms);
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
    let applied = apply_configs(&fake);
    assert_eq!(applied.len(), 2, "only the machines not configured yet: {applied:?}");
    assert!(applied[0].contains("10.30.0.13") && applied[1].contains("10.30.0.21"));
    assert!(fake.index(&["get etcdmembers", "--nodes 10.30.0.11"]).is_some(), "etcd's member is looked for");
    assert!(fake.lines().iter().all(|l| !l.ends_with(" bootstrap")), "etcd runs: not bootstrapped again");
    assert!(fake.index(&["get links --insecure", "--nodes 10.30.0.11"]).is_none(), "a configured machine is not asked");
}

/// Item 5: Talos refuses the first bootstraps (FailedPrecondition, time not in sync): fleetc
/// tries again until the member shows; a rerun after a run whose bootstrap never happened
/// bootstraps.
#[test]
fn a_failed_first_bootstrap_is_retried_and_a_rerun_bootstraps() {
    let fx = fixture();
    let fake = Fake::new();
    let mut ms = declared();
    ms[0].bootstrap_refusals = 2;
    let machines = maintenance(&fake, ms);
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
    let boots = fake.lines().into_iter().filter(|l| l.ends_with(" bootstrap")).count();
    assert_eq!(boots, 3, "two refused, the third taken");
    assert!(machines.borrow()[0].bootstrapped);
    assert!(fake.index(&[" bootstrap"]).unwrap() < fake.index(&["apply-config", "--nodes 10.30.0.12"]).unwrap());

    // cp-1 took its config, but the run ended before etcd was bootstrapped.
    let fake = Fake::new();
    let mut ms = declared();
    ms[0].configured = true;
    let machines = maintenance(&fake, ms);
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
    assert!(machines.borrow()[0].bootstrapped, "the rerun bootstraps");
    assert!(fake.index(&["get links --insecure", "--nodes 10.30.0.11"]).is_none());
}

/// A replaced first control-plane node (wiped, in maintenance mode again) beside a running
/// control plane joins its etcd: bootstrapping it would start a second cluster.
#[test]
fn a_replaced_first_node_beside_a_running_control_plane_is_not_bootstrapped() {
    let fx = fixture();
    let fake = Fake::new();
    let mut ms = declared();
    for m in &mut ms[1..] {
        m.configured = true;
    }
    let machines = maintenance(&fake, ms);
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
    assert!(machines.borrow()[0].configured);
    assert!(fake.lines().iter().all(|l| !l.ends_with(" bootstrap")), "{:?}", fake.lines());
    assert!(log.iter().any(|l| l.contains("main-cp-2 runs the cluster's config: etcd exists")));
}

/// The onprem control plane with SecureBoot and STATE sealed to the TPM.
fn secure_boot_fixture() -> Fixture {
    Fixture::for_env_edited("onprem", SEALED, |t| {
        t.replace(
            "            control-plane {\n                node \"cp-1\" {",
            "            control-plane secure-boot=#true {\n                encrypt \"state\" key=\"tpm\"\n                node \"cp-1\" {",
        )
    })
}

/// Item 6: a SecureBoot machine that does not report SecureBoot on (keys not enrolled, setup
/// mode) gets no config that seals to its TPM: apply waits for the person enrolling the keys,
/// and refuses when SecureBoot never comes on.
#[test]
fn secure_boot_not_yet_enabled_waits_and_refuses_to_seal() {
    let fx = secure_boot_fixture();
    // On after three looks: apply waits, then sends the config.
    let fake = Fake::new();
    let mut ms = declared();
    ms[0].secure_boot_after = Some(3);
    let machines = maintenance(&fake, ms);
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    assert!(r.is_ok(), "{r:?}\n{}", log.join("\n"));
    assert!(machines.borrow()[0].configured);
    let looks = fake.lines().iter().filter(|l| l.contains("get securitystate --insecure --nodes 10.30.0.11")).count();
    assert_eq!(looks, 4, "three times off, then on");
    let last_look = fake.lines().iter().rposition(|l| l.contains("get securitystate --insecure --nodes 10.30.0.11"));
    assert!(last_look.unwrap() < fake.index(&["apply-config", "--nodes 10.30.0.11"]).unwrap());
    assert!(fake.index(&["get securitystate", "--nodes 10.30.0.21"]).is_none(), "the storage pool has no SecureBoot");

    // Never on: refused, nothing sent.
    let fake = Fake::new();
    let mut ms = declared();
    ms[0].secure_boot_after = None;
    let machines = maintenance(&fake, ms);
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let f = r.expect_err("refused");
    assert!(f.message.contains("never reported SecureBoot on") && f.message.contains("TPM"), "{}", f.message);
    assert!(!machines.borrow()[0].configured);
    assert!(apply_configs(&fake).is_empty());
    assert!(*fake.sleeps.borrow() >= fleetc::apply::metal::SECURE_BOOT_TRIES - 1, "it waited");
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
    assert!(pos("is the declared machine (MAC 3c:ec:ef:10:00:11") < pos("apply-config --insecure --nodes 10.30.0.11"));
    assert!(pos("apply-config --insecure --nodes 10.30.0.11") < pos("--nodes 10.30.0.11 bootstrap"));
    assert!(pos("get etcdmembers") < pos("--nodes 10.30.0.11 bootstrap"));
    assert!(pos("--nodes 10.30.0.11 bootstrap") < pos("apply-config --insecure --nodes 10.30.0.12"));
    assert!(pos("== 7. Argo CD") > pos("apply-config --insecure --nodes 10.30.0.21"));
    assert!(log.iter().all(|l| !l.starts_with("$ tofu")), "no OpenTofu on bare metal");
}

/// `--leases` where no machine is bare metal is refused before any command runs: no other
/// step reads the file, and an operator would otherwise believe apply used it.
#[test]
fn leases_off_metal_are_refused_before_anything_runs() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let file = fx.dir.path().join("dnsmasq.leases");
    std::fs::write(&file, "1733400000 3c:ec:ef:10:00:11 10.30.0.150 * *\n").unwrap();
    let opts = fleetc::apply::ApplyOptions { leases: Some(file), ..fx.options() };
    let (r, _) = run_apply(&fx, &fake, &opts);
    let f = r.expect_err("a leases file on a Scaleway environment");
    assert!(f.message.contains("only bare-metal apply reads a leases file"), "{}", f.message);
    assert!(fake.lines().is_empty(), "nothing ran:\n{}", fake.lines().join("\n"));
}
