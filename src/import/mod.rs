//! `fleetc import`: a fleet description of another tool read and written as a fleet directory
//! (fleet.kdl in the canonical layout, the patch files, IMPORT-REPORT.md). It stands beside
//! `init` at the top of the pipeline: it writes the input the pipeline reads, and reads only
//! the model's YAML reader (`model::patch::read_yaml`) and the formatter (`syntax::fmt`).
//!
//! talhelper (`talhelper.rs`, talhelper v3.1.16's talconfig.yaml) is the one source today;
//! `env.rs` is its `${VAR}` substitution and `report.rs` the report. A source that is not such
//! a config, or a broken one, is one error with a span into that file (`fleet::import::*`),
//! and nothing is written. The output is a pure function of the files read: a second import
//! of the same input writes the same bytes.

pub mod env;
pub mod report;
pub mod talhelper;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostics, Sources};

/// talhelper's env files, read from the talconfig's directory when no `--env` is given
/// (talhelper v3.1.16 `cmd/genconfig.go`: `--env-file` defaults, read from the working
/// directory there).
pub const TALHELPER_ENV_FILES: &[&str] = &["talenv.yaml", "talenv.sops.yaml", "talenv.yml", "talenv.sops.yml"];

/// The report's file name in the fleet directory.
pub const REPORT: &str = "IMPORT-REPORT.md";

/// An import's files, by path relative to the fleet directory.
#[derive(Debug)]
pub struct Imported {
    pub files: BTreeMap<String, String>,
    pub report: report::Report,
}

/// Why an import wrote nothing.
#[derive(Debug)]
pub enum ImportError {
    /// Problems in the source, with their sources for rendering.
    Problems(Sources, Diagnostics),
    /// A file that cannot be read or written.
    Io(String),
}

/// Imports the talhelper config at `path`, substituting from `env_files` (or, when none is
/// given, the talenv files beside it).
pub fn talhelper(path: &Path, env_files: &[PathBuf]) -> Result<Imported, ImportError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| ImportError::Io(format!("cannot read {}: {e}", path.display())))?;
    let dir = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let name = path.file_name().map_or_else(|| "talconfig.yaml".to_owned(), |n| n.to_string_lossy().into_owned());
    let mut sources = Sources::default();
    let cfg = sources.add(name, text);
    let mut diags = Diagnostics::new();
    let mut env = env::Env::default();
    let envs: Vec<PathBuf> = if env_files.is_empty() {
        TALHELPER_ENV_FILES.iter().map(|f| dir.join(f)).filter(|p| p.is_file()).collect()
    } else {
        env_files.to_vec()
    };
    for p in &envs {
        let t = std::fs::read_to_string(p).map_err(|e| ImportError::Io(format!("cannot read {}: {e}", p.display())))?;
        let n = p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned());
        let id = sources.add(n.clone(), t.clone());
        env.add(id, &n, &t, &mut diags);
    }
    let translated = talhelper::translate(&mut sources, cfg, &dir, &env, &mut diags);
    let t = match translated {
        Some(t) if !diags.has_errors() => t,
        _ => return Err(ImportError::Problems(sources, diags)),
    };
    let generated = sources.add("fleet.kdl (as imported)", t.fleet_kdl.clone());
    let fleet = crate::syntax::fmt::format(generated, &t.fleet_kdl).map_err(|d| ImportError::Problems(sources, d))?;
    let mut files = t.files;
    files.insert("fleet.kdl".to_owned(), fleet);
    files.insert(REPORT.to_owned(), t.report.markdown());
    Ok(Imported { files, report: t.report })
}

/// Writes an import's files into `out` (created if needed). Refuses, writing nothing, when a
/// fleet.kdl is there already: an import never overwrites a fleet.
pub fn write(out: &Path, imported: &Imported) -> Result<(), ImportError> {
    let fleet = out.join("fleet.kdl");
    if fleet.exists() {
        return Err(ImportError::Io(format!(
            "{} already exists; `fleetc import` never overwrites a fleet, and wrote nothing",
            fleet.display()
        )));
    }
    for (rel, text) in &imported.files {
        let p = out.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| ImportError::Io(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&p, text).map_err(|e| ImportError::Io(format!("cannot write {}: {e}", p.display())))?;
    }
    Ok(())
}
