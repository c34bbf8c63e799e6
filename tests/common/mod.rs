//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

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
