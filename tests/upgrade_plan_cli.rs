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
