//! Getting started: `fleetc init` writes a starter that builds and is formatted, and never
//! overwrites; `fleetc completions` and `fleetc man` print what a shell and `man` need.

#![allow(clippy::disallowed_methods)] // tests run the real binary

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

/// fleetc as a new user's shell runs it: only PATH and HOME of this one (apply refuses the
/// variables that would steer its tools, which a CI machine may set, docs/apply.md).
fn fleetc(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleetc"));
    cmd.args(args).current_dir(dir).env_clear().env("NO_COLOR", "1");
    for keep in ["PATH", "HOME"] {
        if let Some(v) = std::env::var_os(keep) {
            cmd.env(keep, v);
        }
    }
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Each starter builds, checks clean, is formatted, draws its graph, and `fleetc apply <env>
/// --plan` prints a complete plan (every step through Argo CD, nothing run) as written. The
/// bare-metal starter has its own test below (its plan has no cloud root).
#[test]
fn every_starter_builds_checks_clean_and_plans() {
    for (platform, starter, env) in
        [("scaleway", fleetc::init::STARTER, "staging"), ("proxmox", fleetc::init::PROXMOX_STARTER, "home")]
    {
        let tmp = tempfile::tempdir().unwrap();
        let o = fleetc(tmp.path(), &["init", "--dir", "new", "--platform", platform]);
        assert_eq!(o.status.code(), Some(0), "{platform}: {}", stderr(&o));
        let dir = tmp.path().join("new");
        assert_eq!(fs::read_to_string(dir.join("fleet.kdl")).unwrap(), starter);
        assert!(dir.join(fleetc::init::ARGOCD_PATH).is_file() && dir.join("apps/hello").is_dir());

        let o = fleetc(&dir, &["check"]);
        assert_eq!(o.status.code(), Some(0), "{platform}: {}", stderr(&o));
        assert!(stderr(&o).contains("no problems"), "{platform}: no warning either: {}", stderr(&o));
        let o = fleetc(&dir, &["build"]);
        assert_eq!(o.status.code(), Some(0), "{platform}: {}", stderr(&o));
        assert!(dir.join("out/MANIFEST.sha256").exists());
        assert!(
            dir.join(format!("out/argocd/{env}/main/apps")).is_dir(),
            "{platform}: the starter has Argo CD and an app"
        );
        let o = fleetc(&dir, &["fmt", "--check"]);
        assert_eq!(o.status.code(), Some(0), "{platform}: {}", stderr(&o));
        let o = fleetc(&dir, &["graph"]);
        assert_eq!(o.status.code(), Some(0), "{platform}: {}", stderr(&o));
        let o = fleetc(&dir, &["apply", env, "--plan"]);
        assert_eq!(o.status.code(), Some(0), "{platform}: {}", stderr(&o));
        let plan = String::from_utf8_lossy(&o.stdout);
        for step in ["== 1.", "== 3. cloud root", "== 5.", "Argo CD", "installing it from"] {
            assert!(plan.contains(step), "{platform}: the plan lacks `{step}`:\n{plan}");
        }
        assert!(!plan.contains("nothing to do"), "{platform}: {plan}");
    }
}

#[test]
fn the_starter_is_commented_and_marks_what_to_change() {
    let s = fleetc::init::STARTER;
    let comments = fleetc::syntax::fmt::comments(s);
    assert!(comments.len() >= 15, "only {} comments", comments.len());
    assert!(s.matches("// CHANGE").count() >= 4);
    assert!(s.contains("R29") && s.contains("docs/fleet-language.md"));
}

#[test]
fn init_never_overwrites() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("fleet.kdl"), "mine\n").unwrap();
    let o = fleetc(tmp.path(), &["init"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(tmp.path().join("fleet.kdl")).unwrap(), "mine\n");
    assert!(!tmp.path().join("vendor").exists(), "nothing written when one file is there");
    let o = fleetc(tmp.path(), &["init", "--quiet", "--dir", "other"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stderr(&o), "", "--quiet prints nothing on success");
}

#[test]
fn completions_for_every_shell_mention_the_commands() {
    let tmp = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = fleetc(tmp.path(), &["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        for cmd in ["build", "fmt", "graph"] {
            assert!(text.contains(cmd), "{shell} completions lack `{cmd}`");
        }
    }
    let o = fleetc(tmp.path(), &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "an unknown shell is a usage error");
}

#[test]
fn man_page_is_roff_and_lists_the_commands() {
    let o = fleetc(Path::new("."), &["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(".TH fleetc"), "{}", &text[..text.len().min(200)]);
    for cmd in ["build", "fmt", "init", "graph", "completions"] {
        assert!(text.contains(cmd), "man page lacks `{cmd}`");
    }
}

/// `fleetc init --platform metal` (docs/metal.md): the bare-metal starter builds, checks
/// clean and plans, with the machine step (identity check before each config) and no
/// OpenTofu at all.
#[test]
fn the_metal_starter_builds_checks_clean_and_plans() {
    let tmp = tempfile::tempdir().unwrap();
    let o = fleetc(tmp.path(), &["init", "--dir", "new", "--platform", "metal"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = tmp.path().join("new");
    assert_eq!(fs::read_to_string(dir.join("fleet.kdl")).unwrap(), fleetc::init::METAL_STARTER);
    let o = fleetc(&dir, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("no problems"), "no warning either: {}", stderr(&o));
    let o = fleetc(&dir, &["build"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(dir.join("out/metal/rack/main/machines.yaml").is_file());
    assert!(dir.join("out/metal/rack/README.md").is_file());
    assert!(!dir.join("out/tofu/rack").exists(), "no OpenTofu root on bare metal");
    let o = fleetc(&dir, &["fmt", "--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = fleetc(&dir, &["apply", "rack", "--plan"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let plan = String::from_utf8_lossy(&o.stdout);
    for step in [
        "== 1.",
        "== 3. machines in maintenance mode",
        "get links --insecure",
        "apply-config --insecure",
        "bootstrap",
        "Argo CD",
        "installing it from",
    ] {
        assert!(plan.contains(step), "the plan lacks `{step}`:\n{plan}");
    }
    assert!(!plan.contains("$ tofu"), "{plan}");
}

/// Issue 28 (newcomer-3 §2.4): the starter writes a `.gitignore` that keeps the plaintext
/// bundle `talosctl gen secrets -o secrets.yaml` writes, and apply's working copy, out of git;
/// in a directory that has one already, it appends only what it lacks.
#[test]
fn init_writes_a_gitignore_for_the_plaintext_bundle_and_the_working_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let o = fleetc(tmp.path(), &["init", "--dir", "new"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ignore = fs::read_to_string(tmp.path().join("new/.gitignore")).unwrap();
    assert_eq!(ignore, fleetc::init::GITIGNORE);
    for line in ["/secrets.yaml", "/.fleetc/"] {
        assert!(ignore.lines().any(|l| l == line), "{line}: {ignore}");
    }
    assert!(stderr(&o).contains(".gitignore"), "{}", stderr(&o));
    let dir = tmp.path().join("repo");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join(".gitignore"), "/target\n/secrets.yaml\n").unwrap();
    let o = fleetc(&dir, &["init"]);
    assert_eq!(o.status.code(), Some(0), "an existing .gitignore is no reason to refuse: {}", stderr(&o));
    let ignore = fs::read_to_string(dir.join(".gitignore")).unwrap();
    assert!(ignore.starts_with("/target\n/secrets.yaml\n"), "{ignore}");
    assert_eq!(ignore.matches("/secrets.yaml").count(), 1, "{ignore}");
    assert!(ignore.lines().any(|l| l == "/.fleetc/"), "{ignore}");
}
