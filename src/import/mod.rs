//! `fleetc import`: a fleet description of another tool read and written as a fleet directory
//! (fleet.kdl in the canonical layout, the patch files, IMPORT-REPORT.md). It stands beside
//! `init` at the top of the pipeline: it writes the input the pipeline reads, and reads the
//! model's YAML reader and value forms (`model::patch::read_yaml`, `model::values`), the Talos
//! versions fleetc configures (`upstream::talos`: an older cluster is kept and refused, or
//! raised by `--talos-at-least`, `talos_version`), the ownership table the report quotes
//! and the patch check behind `overrides=` (`emit::talos::owned`, run on the written fleet
//! resolved in memory: `needless_overrides`) and the formatter (`syntax::fmt`).
//!
//! talhelper (`talhelper.rs`, talhelper v3.1.16's talconfig.yaml; `env.rs` is its `${VAR}`
//! substitution) and topf (`topf.rs`, postfinance/topf v0.4.2's topf.yaml and patch folders;
//! `gotmpl.rs` renders its Go-templated patches) are the sources; `report.rs` is the report. A source that is not such
//! a config, or a broken one, is one error with a span into that file (`fleet::import::*`),
//! and nothing is written. The output is a pure function of the files read: a second import
//! of the same input writes the same bytes.

pub mod env;
pub mod gotmpl;
pub mod netdocs;
pub mod report;
pub mod talhelper;
pub mod topf;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostics, Sources};
use crate::model::Version;

/// talhelper's env files, read from the talconfig's directory when no `--env` is given
/// (talhelper v3.1.16 `cmd/genconfig.go`: `--env-file` defaults, read from the working
/// directory there).
pub const TALHELPER_ENV_FILES: &[&str] = &["talenv.yaml", "talenv.sops.yaml", "talenv.yml", "talenv.sops.yml"];

/// The report's file name in the fleet directory.
pub const REPORT: &str = "IMPORT-REPORT.md";

/// What the user decides at import, by flag.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// `--talos-at-least`: a cluster whose Talos version is older is imported at this one
    /// (its nodes are upgraded to it first; docs/import.md, "An older Talos").
    pub talos_at_least: Option<Version>,
}

impl Options {
    /// Refuses a `--talos-at-least` older than every minor fleetc configures: the clusters it
    /// raised would still be refused (`fleet::versions::talos-unsupported`).
    fn check(&self) -> Result<(), ImportError> {
        let table = crate::upstream::talos::table();
        match (self.talos_at_least, table.talos.first()) {
            (Some(v), Some(oldest)) if v.minor_version() < oldest.minor => Err(ImportError::Io(format!(
                "--talos-at-least {}: fleetc configures Talos {}.{} and newer (docs/talos.md, \"Versions\"); give a version of those, e.g. {}",
                v.v(),
                oldest.minor.0,
                oldest.minor.1,
                oldest.newest.v()
            ))),
            _ => Ok(()),
        }
    }
}

/// The Talos version a cluster is imported at, as fleet.kdl's `talos` line (with the comment
/// that says why) and the version. `given` is the source's `talosVersion` at `line`; `None`
/// means the source tool's default, `default`, which `default_note` names. A version below
/// `--talos-at-least` is raised to it, with a report row (the nodes' configs are compared at
/// that version). A version older than every row of fleetc's versions table
/// (`versions/talos.kdl`) and not raised stays, marked CHANGE: `fleetc check` refuses it
/// (`fleet::versions::talos-unsupported`), and the comment names the flag.
pub(crate) fn talos_version(
    given: Option<&str>,
    (default, default_note): (&str, &str),
    line: usize,
    opts: &Options,
    report: &mut report::Report,
) -> (String, String) {
    let source = given.map_or_else(|| default.to_owned(), |t| format!("v{}", t.trim_start_matches('v')));
    let head = if given.is_none() { format!("// {default_note}\n") } else { String::new() };
    let parsed = source.parse::<Version>().ok();
    let table = crate::upstream::talos::table();
    let oldest = table.talos.first().map(|r| (r.minor, r.newest));
    let supported = |v: Version| oldest.is_none_or(|(m, _)| v.minor_version() >= m);
    let range = match (table.talos.first(), table.talos.last()) {
        (Some(a), Some(b)) => format!("{}.{} to {}.{}", a.minor.0, a.minor.1, b.minor.0, b.minor.1),
        _ => String::new(),
    };
    if let (Some(v), Some(floor)) = (parsed, opts.talos_at_least)
        && v < floor
    {
        let to = floor.v();
        report.deliberate(
            line,
            "talosVersion",
            &format!("`{source}` imported at `{to}` (`--talos-at-least`): the nodes are to run {to} before fleetc configures them (upgrade them first, one Talos minor at a time; docs/import.md, \"An older Talos\"); the configs are compared at {to}"),
        );
        let kdl = format!(
            "{head}// The source runs Talos {source}; imported at {to} (--talos-at-least): upgrade the nodes\n// to it before `fleetc apply` (docs/import.md, \"An older Talos\").\ntalos {}\n",
            talhelper::q(&to)
        );
        return (kdl, to);
    }
    if let Some(v) = parsed
        && !supported(v)
    {
        let suggest = oldest.map(|(_, n)| n.v()).unwrap_or_default();
        report.placeholder(
            line,
            "talosVersion",
            &format!("Talos `{source}`: fleetc configures Talos {range}, and `fleetc check` refuses this version (`fleet::versions::talos-unsupported`); upgrade the nodes and import again with `--talos-at-least {suggest}` (docs/import.md, \"An older Talos\")"),
        );
        let kdl = format!(
            "{head}// Talos {source} is older than fleetc configures ({range}). CHANGE: upgrade the nodes, then\n// import again with --talos-at-least {suggest} (docs/import.md, \"An older Talos\").\ntalos {}\n",
            talhelper::q(&source)
        );
        return (kdl, source);
    }
    (format!("{head}talos {}\n", talhelper::q(&source)), source)
}

/// An import's files, by path relative to the fleet directory.
#[derive(Debug)]
pub struct Imported {
    pub files: BTreeMap<String, String>,
    /// One per config imported.
    pub reports: Vec<report::Report>,
}

/// Why an import wrote nothing.
#[derive(Debug)]
pub enum ImportError {
    /// Problems in the source, with their sources for rendering.
    Problems(Sources, Diagnostics),
    /// A file that cannot be read or written.
    Io(String),
}

/// Imports the talhelper configs at `paths` (one cluster each; several make one fleet of an
/// environment per config), substituting from `env_files` (or, when none is given, the talenv
/// files beside each config).
///
/// A patch that sets a field fleetc writes by a rule gets `overrides=` with that rule; the fleet
/// written is then compiled in memory and judged as `fleetc build` judges it
/// ([`needless_overrides`]), and an override that overrides nothing (the patch sets the value
/// fleetc writes, or only adds to a list) is left out of a second translation.
pub fn talhelper(paths: &[PathBuf], env_files: &[PathBuf], opts: &Options) -> Result<Imported, ImportError> {
    let first = talhelper_with(paths, env_files, opts, &BTreeSet::new())?;
    let needless = needless_overrides(&first.files);
    if needless.is_empty() {
        return Ok(first);
    }
    talhelper_with(paths, env_files, opts, &needless)
}

/// The `overrides=` of an imported fleet that override nothing, as (patch path, rule): the
/// fleet directory's files compiled in memory, and its patches judged against the documents
/// fleetc writes (`emit::talos::owned::stale`, the check behind `patch-stale-override`). The
/// model is built even where the fleet holds placeholders `check` refuses; a patch on a
/// machine the model cannot hold is not judged, and keeps its overrides.
fn needless_overrides(files: &BTreeMap<String, String>) -> BTreeSet<(String, String)> {
    let Some(text) = files.get("fleet.kdl") else { return BTreeSet::new() };
    let mut sources = Sources::default();
    let id = sources.add("fleet.kdl", text.clone());
    let Ok(nodes) = crate::syntax::parse(id, text) else { return BTreeSet::new() };
    let loader = crate::compile::MapLoader { files: files.clone() };
    let mut diags = Diagnostics::new();
    crate::model::resolve(&nodes, &loader, &mut sources, &mut diags)
        .map(|fleet| crate::emit::talos::owned::stale(&fleet))
        .unwrap_or_default()
}

/// [`talhelper`] leaving out the overrides `needless` names.
fn talhelper_with(
    paths: &[PathBuf],
    env_files: &[PathBuf],
    opts: &Options,
    needless: &BTreeSet<(String, String)>,
) -> Result<Imported, ImportError> {
    opts.check()?;
    let several = paths.len() > 1;
    let mut sources = Sources::default();
    let mut diags = Diagnostics::new();
    let mut parts = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    // Several configs are named by their path below the folder they share.
    let common = common_dir(paths);
    for path in paths {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ImportError::Io(format!("cannot read {}: {e}", path.display())))?;
        let dir = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let name = if several {
            path.strip_prefix(&common).unwrap_or(path).to_string_lossy().replace('\\', "/")
        } else {
            path.file_name().map_or_else(|| "talconfig.yaml".to_owned(), |n| n.to_string_lossy().into_owned())
        };
        let cfg = sources.add(name, text);
        let mut env = env::Env::default();
        let envs: Vec<PathBuf> = if env_files.is_empty() {
            TALHELPER_ENV_FILES.iter().map(|f| dir.join(f)).filter(|p| p.is_file()).collect()
        } else {
            env_files.to_vec()
        };
        for p in &envs {
            let t =
                std::fs::read_to_string(p).map_err(|e| ImportError::Io(format!("cannot read {}: {e}", p.display())))?;
            let n = p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned());
            let id = sources.add(n.clone(), t.clone());
            env.add(id, &n, &t, &mut diags);
        }
        let at = talhelper::Placement { taken: &taken, several, opts, needless };
        if let Some(t) = talhelper::translate(&mut sources, cfg, &dir, &env, &at, &mut diags) {
            taken.push(t.report.target.split('/').next().unwrap_or_default().to_owned());
            parts.push(t);
        }
    }
    if diags.has_errors() || parts.is_empty() {
        return Err(ImportError::Problems(sources, diags));
    }
    let names: Vec<&str> = parts.iter().map(|t| t.report.source.as_str()).collect();
    let from = if several {
        format!(":\n{}", names.iter().map(|n| format!("// - {n}\n")).collect::<String>())
    } else {
        format!(" {}.\n", names[0])
    };
    let mut kdl = format!(
        "// Imported by `fleetc import talhelper` (talhelper v3.1.16's format) from{from}// IMPORT-REPORT.md lists what was not carried over, what changed on purpose and why,\n// and the placeholders marked CHANGE that `fleetc check` refuses until they are filled.\n"
    );
    kdl.push_str(&format!("fleet {} {{\n", talhelper::q(&parts[0].fleet_name)));
    if !several {
        kdl.push_str(&parts[0].settings);
    }
    for t in &parts {
        kdl.push_str(&t.schematics);
    }
    for t in &parts {
        if several {
            // Each config's versions and CNI are its environment's settings (inherited, R5).
            let (head, body) = t.environment.split_once('\n').unwrap_or((&t.environment, ""));
            kdl.push_str(&format!("{head}\n{}{body}", t.settings));
        } else {
            kdl.push_str(&t.environment);
        }
    }
    kdl.push_str("}\n");
    let mut files = BTreeMap::new();
    let mut reports = Vec::new();
    for t in parts {
        files.extend(t.files);
        reports.push(t.report);
    }
    assemble(sources, &kdl, files, reports)
}

/// The import's files: fleet.kdl (`kdl`, in the canonical layout), the patch files and the
/// report of every config read.
fn assemble(
    mut sources: Sources,
    kdl: &str,
    mut files: BTreeMap<String, String>,
    reports: Vec<report::Report>,
) -> Result<Imported, ImportError> {
    let generated = sources.add("fleet.kdl (as imported)", kdl.to_owned());
    let fleet = crate::syntax::fmt::format(generated, kdl).map_err(|d| ImportError::Problems(sources, d))?;
    let report_text = reports.iter().map(report::Report::markdown).collect::<Vec<_>>().join("\n");
    files.insert("fleet.kdl".to_owned(), fleet);
    files.insert(REPORT.to_owned(), report_text);
    Ok(Imported { files, reports })
}

/// The deepest folder holding every path.
fn common_dir(paths: &[PathBuf]) -> PathBuf {
    let mut common = paths.first().and_then(|p| p.parent()).map(Path::to_path_buf).unwrap_or_default();
    while !paths.iter().all(|p| p.starts_with(&common)) && common.pop() {}
    common
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
