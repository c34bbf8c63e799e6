//! `fleetc upgrade-plan` end to end, through the binary: it plans from what runs, not from the
//! edited fleet.kdl (newcomer-3.md §4: "Nothing to do" after the edit). What runs is read from
//! the committed out/ (the cluster root's values for a cluster built by OpenTofu, the
//! TalosControlPlane for a Cluster API one) or, with `--base REV`, from the fleet at a git
//! revision; the targets default to fleet.kdl's, so a Talos-only upgrade needs no
//! `--kubernetes`. The fleet is golden/capi-upgrade's.
//! The `--base` test needs the `git` command: without it it says so and skips, except under CI
//! (`CI=true`), where it fails.
#![allow(clippy::disallowed_methods)] // tests run the real binary and make a git repository

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common;

const CASE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/capi-upgrade");
const BASE: &str = include_str!("../golden/capi-upgrade/fleet.kdl");

fn fleetc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("fleetc runs")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The base fleet and its vendored manifests in a temporary directory.
fn fleet_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir_all(tmp.path().join("vendor")).unwrap();
    for e in fs::read_dir(Path::new(CASE).join("vendor")).unwrap().flatten() {
        fs::copy(e.path(), tmp.path().join("vendor").join(e.file_name())).unwrap();
    }
    fs::write(tmp.path().join("fleet.kdl"), BASE).unwrap();
    tmp
}

/// The edit of the trial: the management cluster's Talos raised one minor in fleet.kdl.
fn edit_talos(dir: &Path) {
    let edited = BASE.replacen("kubernetes \"1.34.3\"", "talos \"v1.13.9\"\n            kubernetes \"1.34.3\"", 1);
    assert_ne!(edited, BASE);
    fs::write(dir.join("fleet.kdl"), edited).unwrap();
}

#[test]
fn after_the_edit_it_plans_from_the_committed_out_with_no_flag() {
    let tmp = fleet_dir();
    let o = fleetc(tmp.path(), &["build"]);
    assert!(o.status.success(), "{}", text(&o).1);
    edit_talos(tmp.path());
    // No flag: the targets are fleet.kdl's, the start is out/'s.
    let o = fleetc(tmp.path(), &["upgrade-plan", "lab/mgmt"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("Talos v1.12.6 → v1.13.9"), "{out}");
    assert!(out.contains("read from out/tofu/lab/cluster/lab.auto.tfvars: Kubernetes 1.34.3, Talos v1.12.6"), "{out}");
    assert!(!out.contains("Nothing to do"), "{out}");
    // The Talos step names the nodes, the installer and the command.
    assert!(out.contains("`fleetc upgrade lab/mgmt`"), "{out}");
    assert!(out.contains("the control plane (`mgmt-cp-1`, `mgmt-cp-2`, `mgmt-cp-3`): `talosctl upgrade --image factory.talos.dev/nocloud-installer/"), "{out}");
    assert!(out.contains(":v1.13.9`"), "{out}");
    assert!(!out.contains("<installer of") && !out.contains("Fleet::installer"), "{out}");
    // The trial's command line (a Kubernetes target equal to what runs, and the Talos one).
    let o = fleetc(tmp.path(), &["upgrade-plan", "lab/mgmt", "--kubernetes", "1.34.3", "--talos", "v1.13.9"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    // Through the newest v1.12 patch, the path `fleetc diff` names too.
    assert!(out.contains("Talos v1.12.6 → v1.13.9"), "{out}");
    assert!(
        out.contains("Step 1: raise Talos v1.12.6 → v1.12.11")
            && out.contains("Step 2: raise Talos v1.12.11 → v1.13.9"),
        "{out}"
    );
    // A Talos-only target needs no --kubernetes.
    let o = fleetc(tmp.path(), &["upgrade-plan", "lab/mgmt", "--talos", "v1.13.9"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("Kubernetes 1.34.3 → 1.34.3, Talos v1.12.6 → v1.13.9"), "{out}");
}

#[test]
fn a_managed_cluster_runs_what_its_control_plane_in_out_says() {
    let tmp = fleet_dir();
    let o = fleetc(tmp.path(), &["build"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = fleetc(tmp.path(), &["upgrade-plan", "lab/edge-1"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("read from out/capi/mgmt/edge-1/control-plane.yaml: Kubernetes 1.33.4, Talos v1.12.6"),
        "{out}"
    );
    assert!(out.contains("Nothing to do"), "nothing was edited: {out}");
}

#[test]
fn without_out_it_says_it_plans_from_fleet_kdl() {
    let tmp = fleet_dir();
    let o = fleetc(tmp.path(), &["upgrade-plan", "lab/mgmt", "--kubernetes", "1.35.2"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("holds no build of `lab/mgmt`") && err.contains("--base REV"), "{err}");
    assert!(out.contains("Kubernetes 1.34.3 → 1.35.2"), "{out}");
}

#[test]
fn with_base_it_plans_from_the_revision() {
    if !common::git_available() {
        return;
    }
    let tmp = fleet_dir();
    common::git(tmp.path(), &["init", "-q", "-b", "main"]);
    common::git(tmp.path(), &["add", "-A"]);
    common::git(tmp.path(), &["commit", "-q", "-m", "base"]);
    edit_talos(tmp.path());
    let o = fleetc(tmp.path(), &["upgrade-plan", "lab/mgmt", "--base", "HEAD"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("Talos v1.12.6 → v1.13.9"), "{out}");
    assert!(out.contains("read from `HEAD:fleet.kdl` (--base)"), "{out}");
    let o = fleetc(tmp.path(), &["upgrade-plan", "lab/mgmt", "--base", "no-such-rev"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
}

/// hidden-fleets-3 D1: golden/scaleway-minimal upgraded from Talos 1.13 to 1.14 along fleetc's
/// own plan. The plan says the secrets' `talos_version` moves forward (an update in place);
/// after the edit the cluster root carries the cluster's full version, which the talos
/// provider does not treat as lower than the stored one (`upstream::talos_secrets`, its
/// rule read from terraform-provider-talos v0.11.0 `talos_machine_secrets_resource.go`
/// l.525-543), and the plan reads the running Talos back from it (before, a 1.14 cluster's
/// `talos_version = "v1.13"` read as no version at all).
#[test]
fn a_scaleway_cluster_upgraded_to_talos_1_14_keeps_its_machine_secrets() {
    use fleetc::upstream::talos_secrets::requires_replace;
    const MINIMAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/scaleway-minimal");
    let tmp = tempfile::tempdir().unwrap();
    let minimal = fs::read_to_string(Path::new(MINIMAL).join("fleet.kdl")).unwrap();
    fs::write(tmp.path().join("fleet.kdl"), &minimal).unwrap();
    fs::create_dir_all(tmp.path().join("apps/hello")).unwrap();
    for e in fs::read_dir(Path::new(MINIMAL).join("apps/hello")).unwrap().flatten() {
        fs::copy(e.path(), tmp.path().join("apps/hello").join(e.file_name())).unwrap();
    }
    let o = fleetc(tmp.path(), &["build"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let tfvars = tmp.path().join("out/tofu/staging/cluster/staging.auto.tfvars");
    let secrets = |text: &str| -> String {
        let line = text.lines().find(|l| l.trim_start().starts_with("secrets_talos_version")).expect("the value");
        line.split('"').nth(1).unwrap().to_owned()
    };
    let before = secrets(&fs::read_to_string(&tfvars).unwrap());
    assert_eq!(before, "v1.13.9");

    let o = fleetc(tmp.path(), &["upgrade-plan", "staging/main", "--talos", "v1.14.1"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("Talos v1.13.9 → v1.14.1"), "{out}");
    assert!(out.contains("updates `talos_machine_secrets` in place, its `talos_version` v1.13.9 → v1.14.1"), "{out}");

    // The step's edit, then the build the plan asks for.
    fs::write(tmp.path().join("fleet.kdl"), minimal.replacen("talos \"v1.13.9\"", "talos \"v1.14.1\"", 1)).unwrap();
    let o = fleetc(tmp.path(), &["build"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let text_after = fs::read_to_string(&tfvars).unwrap();
    let after = secrets(&text_after);
    assert_eq!(after, "v1.14.1");
    // The configs' contract stays at the provider's machinery (versions/talos.kdl), which is
    // what sorted lower before: the secrets no longer follow it.
    assert!(text_after.contains("talos_version         = \"v1.13\""), "{text_after}");
    assert!(requires_replace("v1.13", &before), "the value fleetc wrote before would replace the secrets");
    assert!(!requires_replace(&after, &before), "{before} → {after} replaces the secrets");
    // What runs is read back from the new out/.
    let o = fleetc(tmp.path(), &["upgrade-plan", "staging/main"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("Talos v1.14.1"), "{out}");
    assert!(out.contains("Nothing to do"), "{out}");
}
