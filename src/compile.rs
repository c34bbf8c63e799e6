//! The pipeline, end to end: text → [`syntax`](crate::syntax) → [`model`](crate::model) →
//! [`check`](crate::check) → [`emit`](crate::emit). Errors at any stage are collected; emit
//! runs only when no error was found, so a run with errors produces nothing to write.

use std::path::{Component, Path, PathBuf};

use crate::artifacts::ArtifactSet;
use crate::diag::{Diagnostics, Sources};
use crate::model::{Fleet, Loader};

/// The result of compiling one fleet.kdl: its sources, the model if one could be built,
/// every diagnostic, and the artifacts when there was no error.
pub struct Compilation {
    pub sources: Sources,
    pub fleet: Option<Fleet>,
    pub diags: Diagnostics,
    pub artifacts: Option<ArtifactSet>,
}

/// Compiles `text` (shown in diagnostics as `name`), reading referenced files with `loader`,
/// on [`crate::parallel::threads`] threads (`FLEETC_THREADS`).
pub fn compile(name: &str, text: &str, loader: &dyn Loader) -> Compilation {
    compile_with(name, text, loader, crate::parallel::threads())
}

/// [`compile`] on up to `threads` threads: the same result for every count.
pub fn compile_with(name: &str, text: &str, loader: &dyn Loader, threads: usize) -> Compilation {
    let mut sources = Sources::default();
    let file = sources.add(name, text);
    let mut diags = Diagnostics::new();
    let fleet = match crate::syntax::parse(file, text) {
        Ok(nodes) => {
            crate::check::run_tree(&nodes, file, text, &mut diags);
            crate::model::resolve(&nodes, loader, &mut sources, &mut diags)
        }
        Err(d) => {
            diags.extend(d);
            None
        }
    };
    if let Some(f) = &fleet {
        crate::check::run(f, &mut diags);
    }
    let artifacts = match &fleet {
        Some(f) if !diags.has_errors() => match crate::emit::all(f, threads) {
            Ok((set, warnings)) => {
                diags.extend(warnings);
                Some(set)
            }
            Err(d) => {
                diags.extend(d);
                None
            }
        },
        _ => None,
    };
    // Every diagnostic has a place: one that has none (an emitter's internal error) is put
    // at the file's first line, so that JSON consumers and editors can show it.
    let first_line = text.find('\n').unwrap_or(text.len()).min(crate::diag::render::MAX_SNIPPET_LINE);
    diags.place_unplaced(crate::diag::Span::new(file, 0, first_line), "while compiling this file");
    Compilation { sources, fleet, diags, artifacts }
}

/// Reads referenced files from the fleet's directory on disk. A path must stay inside that
/// directory, links included.
pub struct FsLoader {
    root: PathBuf,
}

impl FsLoader {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FsLoader { root: root.into() }
    }
}

impl Loader for FsLoader {
    fn read(&self, rel: &str) -> Result<String, String> {
        let rel_path = Path::new(rel);
        if rel_path.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err("not a relative path inside the fleet's directory".to_owned());
        }
        let full = self.root.join(rel_path);
        let root = self.root.canonicalize().map_err(|e| io_message(&e))?;
        let real = full.canonicalize().map_err(|e| io_message(&e))?;
        if !real.starts_with(&root) {
            return Err("it resolves (through a link) outside the fleet's directory".to_owned());
        }
        // A FIFO or a device would block the read or never end it.
        match std::fs::metadata(&real) {
            Ok(m) if m.is_file() => {}
            Ok(m) if m.is_dir() => return Err("it is a directory".to_owned()),
            Ok(_) => return Err("it is not a regular file (a FIFO, a socket or a device)".to_owned()),
            Err(e) => return Err(io_message(&e)),
        }
        let bytes = std::fs::read(&real).map_err(|e| io_message(&e))?;
        String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())
    }

    /// Exists inside the fleet's directory once links are resolved: an app's `path=` or
    /// `values=` that is a link to /etc does not.
    fn exists(&self, rel: &str) -> bool {
        let rel_path = Path::new(rel);
        if !rel_path.components().all(|c| matches!(c, Component::Normal(_))) {
            return false;
        }
        match (self.root.canonicalize(), self.root.join(rel_path).canonicalize()) {
            (Ok(root), Ok(real)) => real.starts_with(&root),
            _ => false,
        }
    }

    /// The names in a directory inside the fleet's directory (sorted; none outside it).
    fn entries(&self, rel_dir: &str) -> Vec<String> {
        if !rel_dir.is_empty() && !self.exists(rel_dir) {
            return Vec::new();
        }
        let mut names: Vec<String> = std::fs::read_dir(self.root.join(rel_dir))
            .map(|rd| rd.filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()).collect())
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// An I/O error in words that do not depend on the operating system.
fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        std::io::ErrorKind::IsADirectory => "it is a directory".to_owned(),
        kind => kind.to_string(),
    }
}

/// Reads files from an in-memory map: for tests and for builds of a git revision.
#[derive(Default)]
pub struct MapLoader {
    pub files: std::collections::BTreeMap<String, String>,
}

impl Loader for MapLoader {
    fn read(&self, rel: &str) -> Result<String, String> {
        self.files.get(rel).cloned().ok_or_else(|| "no such file".to_owned())
    }

    /// A file of the map, or a directory that holds one.
    fn exists(&self, rel: &str) -> bool {
        let dir = format!("{}/", rel.trim_end_matches('/'));
        self.files.contains_key(rel) || self.files.range(dir.clone()..).next().is_some_and(|(k, _)| k.starts_with(&dir))
    }

    /// The first component of every file under `rel_dir`.
    fn entries(&self, rel_dir: &str) -> Vec<String> {
        let dir = if rel_dir.is_empty() { String::new() } else { format!("{}/", rel_dir.trim_end_matches('/')) };
        let names: std::collections::BTreeSet<String> = self
            .files
            .keys()
            .filter_map(|k| k.strip_prefix(&dir))
            .filter_map(|rest| rest.split('/').next())
            .map(str::to_owned)
            .collect();
        names.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// m25 and m08 of the newcomer's findings: a path with a typo gets the closest existing one.
    #[test]
    fn the_nearest_existing_path_is_suggested_component_by_component() {
        let mut l = MapLoader::default();
        for f in ["apps/whoami/kustomization.yaml", "apps/web/k.yaml", "vendor/cilium-1.18.4.yaml"] {
            l.files.insert(f.to_owned(), String::new());
        }
        let near = |p| crate::model::nearest_path(&l, p);
        assert_eq!(near("apps/whoamii").as_deref(), Some("apps/whoami"));
        assert_eq!(near("aps/whoami").as_deref(), Some("apps/whoami"));
        assert_eq!(near("vendor/cilium-1.18.5.yaml").as_deref(), Some("vendor/cilium-1.18.4.yaml"));
        assert_eq!(near("apps/whoami").as_deref(), None, "an existing path needs no suggestion");
        assert_eq!(near("apps/database"), None, "nothing close");
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("apps/whoami")).unwrap();
        let fs = FsLoader::new(tmp.path());
        assert_eq!(crate::model::nearest_path(&fs, "apps/whoamii").as_deref(), Some("apps/whoami"));
        assert_eq!(crate::model::nearest_path(&fs, "../etc"), None);
    }
}
