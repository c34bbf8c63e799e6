//! `fleetc check --base REV` end to end, through the binary, on a temporary git repository
//! (the fleet in a subdirectory): a change that skips a Kubernetes or Talos minor, or moves
//! workers ahead of their control plane, is refused with exit 1 and spans in the new
//! fleet.kdl; a one-minor step with the workers pinned passes; without `--base` nothing is
//! compared; an unknown revision is exit 2. Needs the `git` command: without it the tests say
//! so and skip, except under CI (`CI=true`), where they fail.
#![allow(clippy::disallowed_methods)] // tests run the real binary and make a git repository

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common;

const CASE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/upgrade-path-skips");
const BASE: &str = include_str!("../golden/upgrade-path-skips/upgrade-base.kdl");
const SKIPS: &str = include_str!("../golden/upgrade-path-skips/fleet.kdl");

fn fleetc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fleetc")).current_dir(dir).args(args).output().expect("fleetc runs")
}

/// A repository with the base fleet committed in `infra/` (and its vendored manifests).
fn repo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let infra = tmp.path().join("infra");
    fs::create_dir_all(infra.join("vendor")).unwrap();
    for e in fs::read_dir(Path::new(CASE).join("vendor")).unwrap().flatten() {
        fs::copy(e.path(), infra.join("vendor").join(e.file_name())).unwrap();
    }
    common::git(tmp.path(), &["init", "-q", "-b", "main"]);
    fs::write(infra.join("fleet.kdl"), BASE).unwrap();
    common::git(tmp.path(), &["add", "-A"]);
    common::git(tmp.path(), &["commit", "-q", "-m", "base"]);
    tmp
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn skipped_minors_and_workers_ahead_are_refused_against_the_base() {
    if !common::git_available() {
        return;
    }
    let tmp = repo();
    let infra = tmp.path().join("infra");
    fs::write(infra.join("fleet.kdl"), SKIPS).unwrap();
    let o = fleetc(&infra, &["check", "--base", "HEAD", "--format", "short"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for code in [
        "fleet::upgrade::kubernetes-minor-skipped",
        "fleet::upgrade::workers-ahead",
        "fleet::upgrade::talos-minor-skipped",
    ] {
        assert!(err.contains(code), "{code} missing:\n{err}");
    }
    // The spans are on the new fleet's version values: `kubernetes "1.35.0"` on line 6,
    // `talos "v1.14.1"` on line 5.
    assert!(err.lines().any(|l| l.starts_with("fleet.kdl:6:") && l.contains("kubernetes-minor-skipped")), "{err}");
    assert!(err.lines().any(|l| l.starts_with("fleet.kdl:5:") && l.contains("talos-minor-skipped")), "{err}");

    // Without --base, nothing is compared.
    let o = fleetc(&infra, &["check", "--format", "short"]);
    assert!(!stderr(&o).contains("fleet::upgrade::"), "{}", stderr(&o));
}

#[test]
fn one_minor_with_the_workers_pinned_passes() {
    if !common::git_available() {
        return;
    }
    let tmp = repo();
    let infra = tmp.path().join("infra");
    let step = BASE.replacen("kubernetes \"1.33.4\"", "kubernetes \"1.34.2\"", 1).replacen(
        "pool \"workers\"",
        "pool \"workers\" kubernetes=\"1.33.4\"",
        1,
    );
    fs::write(infra.join("fleet.kdl"), &step).unwrap();
    let o = fleetc(&infra, &["check", "--base", "HEAD", "--format", "short"]);
    assert!(!stderr(&o).contains("fleet::upgrade::"), "{}", stderr(&o));
    // The same step with the workers following the control plane: refused.
    let follow = BASE.replacen("kubernetes \"1.33.4\"", "kubernetes \"1.34.2\"", 1);
    fs::write(infra.join("fleet.kdl"), &follow).unwrap();
    let o = fleetc(&infra, &["check", "--base", "HEAD", "--format", "short"]);
    assert!(stderr(&o).contains("fleet::upgrade::workers-ahead"), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn an_unknown_revision_is_an_error() {
    if !common::git_available() {
        return;
    }
    let tmp = repo();
    let o = fleetc(&tmp.path().join("infra"), &["check", "--base", "no-such-rev"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no-such-rev"), "{}", stderr(&o));
}

/// hidden-fleets-3 D1, R14: on a cluster built by OpenTofu, a change that would make the talos
/// provider replace `talos_machine_secrets` (a Talos downgrade) is refused with the identity
/// it would replace; the upgrade to 1.14 that `fleetc upgrade-plan` proposes passes.
#[test]
fn a_change_that_replaces_the_machine_secrets_is_refused() {
    if !common::git_available() {
        return;
    }
    const MINIMAL: &str = include_str!("../golden/scaleway-minimal/fleet.kdl");
    let tmp = tempfile::tempdir().unwrap();
    let infra = tmp.path().join("infra");
    fs::create_dir_all(infra.join("apps/hello")).unwrap();
    let apps = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/scaleway-minimal/apps/hello");
    for e in fs::read_dir(apps).unwrap().flatten() {
        fs::copy(e.path(), infra.join("apps/hello").join(e.file_name())).unwrap();
    }
    fs::write(infra.join("fleet.kdl"), MINIMAL).unwrap();
    common::git(tmp.path(), &["init", "-q", "-b", "main"]);
    common::git(tmp.path(), &["add", "-A"]);
    common::git(tmp.path(), &["commit", "-q", "-m", "base"]);

    fs::write(infra.join("fleet.kdl"), MINIMAL.replacen("talos \"v1.13.9\"", "talos \"v1.13.8\"", 1)).unwrap();
    let o = fleetc(&infra, &["check", "--base", "HEAD", "--format", "short"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with("fleet.kdl:3:") && l.contains("fleet::upgrade::identity-replaced")),
        "{err}"
    );
    assert!(err.contains("identity"), "{err}");
    // Reported once: not also as a plain Talos downgrade.
    assert!(!err.contains("fleet::upgrade::talos-downgrade"), "{err}");

    fs::write(infra.join("fleet.kdl"), MINIMAL.replacen("talos \"v1.13.9\"", "talos \"v1.14.1\"", 1)).unwrap();
    let o = fleetc(&infra, &["check", "--base", "HEAD", "--format", "short"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("fleet::upgrade::"), "{}", stderr(&o));
}
