//! `fleetc diff` end to end, through the binary: exit codes (0 equal, 1 different, 2 error),
//! `--base REV` on a temporary git repository (two commits, the fleet in a subdirectory),
//! colour, and formats. Needs the `git` command: without it the `--base` tests say so and
//! skip, except under CI (`CI=true`), where they fail.
#![allow(clippy::disallowed_methods)] // tests run the real binary and make a git repository

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common;

const FLEET: &str = include_str!("../golden/diff-worker-count/base.kdl");
const GROWN: &str = include_str!("../golden/diff-worker-count/fleet.kdl");

fn fleetc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .current_dir(dir)
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("fleetc runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A repository with the fleet in `infra/`: first commit the base fleet, second the grown one.
fn repo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::create_dir(root.join("infra")).unwrap();
    common::git(root, &["init", "-q", "-b", "main"]);
    fs::write(root.join("infra/fleet.kdl"), FLEET).unwrap();
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "base"]);
    fs::write(root.join("infra/fleet.kdl"), GROWN).unwrap();
    common::git(root, &["commit", "-q", "-a", "-m", "grow the system pool"]);
    tmp
}

#[test]
fn base_head_1_compares_two_revisions_without_out() {
    if !common::git_available() {
        return;
    }
    let tmp = repo();
    let infra = tmp.path().join("infra");
    let o = fleetc(&infra, &["diff", "--base", "HEAD~1", "--format", "json"]);
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["base"], "HEAD~1");
    assert_eq!(v["equal"], false);
    let impacts = v["impacts"].as_array().unwrap();
    assert!(
        impacts.iter().any(|i| i["rule"] == "worker-count" && i["effect"].as_str().unwrap().contains("main-system-3")),
        "{impacts:#?}"
    );
    assert!(!infra.join("out").exists(), "--base builds in memory and writes nothing");

    // The working tree equals HEAD: nothing differs.
    let o = fleetc(&infra, &["diff", "--base", "HEAD"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout(&o), "");

    // From the repository root, pointing at the fleet.
    let o = fleetc(tmp.path(), &["diff", "--fleet", "infra/fleet.kdl", "--base", "HEAD~1", "--format", "stat"]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("worker pool `system` count 2 → 3"), "{}", stdout(&o));
}

#[test]
fn a_bad_revision_or_a_broken_fleet_is_exit_2() {
    if !common::git_available() {
        return;
    }
    let tmp = repo();
    let infra = tmp.path().join("infra");
    let o = fleetc(&infra, &["diff", "--base", "no-such-branch"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("`no-such-branch` names no commit"));
    let o = fleetc(&infra, &["diff", "--base", "--upload-pack=x"]);
    assert_eq!(code(&o), 2);

    fs::write(infra.join("fleet.kdl"), GROWN.replace("count=3", "count=\"three\"")).unwrap();
    let o = fleetc(&infra, &["diff", "--base", "HEAD~1", "--diagnostics-format", "short"]);
    assert_eq!(code(&o), 2);
    assert_eq!(stdout(&o), "", "diagnostics go to stderr");
    assert!(String::from_utf8_lossy(&o.stderr).contains("fleet.kdl"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn without_base_the_build_is_compared_with_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("fleet.kdl"), FLEET).unwrap();
    assert_eq!(code(&fleetc(dir, &["build", "--quiet"])), 0);
    let o = fleetc(dir, &["diff"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));

    fs::write(
        dir.join("fleet.kdl"),
        FLEET.replace("extension \"siderolabs/gvisor\"", "extension \"siderolabs/gvisor\" \"siderolabs/iscsi-tools\""),
    )
    .unwrap();
    let o = fleetc(dir, &["diff"]);
    assert_eq!(code(&o), 1);
    let text = stdout(&o);
    assert!(text.starts_with("Impact ("), "impact first: {text}");
    assert!(
        text.contains("schematic `isolated` changed → no effect on running nodes until they are upgraded"),
        "{text}"
    );
    assert!(text.contains("+            - siderolabs/iscsi-tools"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when stdout is not a terminal");

    let o = fleetc(dir, &["--color", "always", "diff"]);
    assert!(stdout(&o).contains("\x1b[32m+"), "colour when asked");
    let o = Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .current_dir(dir)
        .args(["diff"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!stdout(&o).contains('\x1b'));

    let o = fleetc(dir, &["diff", "--format", "markdown"]);
    let md = stdout(&o);
    assert!(md.starts_with("## fleetc diff\n"), "{md}");
    let (impact, files, diffs) =
        (md.find("### Impact").unwrap(), md.find("### Files").unwrap(), md.find("<details>").unwrap());
    assert!(impact < files && files < diffs, "impact, then the summary, then the diffs");

    let o = fleetc(dir, &["diff", "--format", "markdown", "--max-chars", "600"]);
    let md = stdout(&o);
    assert!(!md.contains("<details>"), "{md}");
    assert!(md.contains(" file diffs left out** (+"), "the cap says what it cut: {md}");
    assert!(md.contains("Run `fleetc diff` against `"), "{md}");
}
