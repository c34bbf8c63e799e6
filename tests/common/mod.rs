//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use fleetc::compile::{Compilation, FsLoader, compile};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The committed conformance schemas, `schemas/` at the repository root (produced by
/// `oracles/schemas/produce` from upstream Go modules; see `schemas/README.md`). They are part
/// of the repository, so a missing file is a failure, never a skip.
pub fn schemas_dir() -> PathBuf {
    let dir = root().join("schemas");
    assert!(dir.is_dir(), "{} is missing: it is committed with the repository", dir.display());
    dir
}

/// Compiles the fleet file at `path` the way `fleetc build` does.
pub fn compile_file(path: &Path) -> Compilation {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    compile(&name, &text, &FsLoader::new(path.parent().unwrap()))
}

/// Compiles the reference fleet and returns its artifacts (panics on diagnostics errors).
pub fn reference_artifacts() -> fleetc::artifacts::ArtifactSet {
    let c = compile_file(&root().join("fleet.kdl"));
    assert!(
        !c.diags.has_errors(),
        "{}",
        fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN)
    );
    c.artifacts.expect("artifacts")
}

/// Every golden case's fleet.kdl that builds (cases with an `out/` directory).
pub fn golden_fleets() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("golden"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.join("out").is_dir())
                .map(|p| p.join("fleet.kdl"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Whether the `git` command is here: under CI=true its absence is a failure, elsewhere the
/// caller skips and says so.
#[allow(clippy::disallowed_methods)] // a test asks whether git is installed
pub fn git_available() -> bool {
    if Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    assert!(std::env::var("CI").map(|v| v != "true").unwrap_or(true), "CI=true but the `git` command is missing");
    eprintln!("skipped: the `git` command is not installed");
    false
}

/// Runs `git` in `dir` with a fixed identity and no system or user configuration.
#[allow(clippy::disallowed_methods)] // a test makes a repository with git
pub fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=fleetc test", "-c", "user.email=test@fleetc.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}
