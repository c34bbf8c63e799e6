//! The inputs of a build, recorded in out/ (`INPUTS.sha256`): the fleetc version, fleet.kdl
//! and every file the build read through its [`Loader`] (vendored manifests, patches, values,
//! apps), each with its sha256, and every existence probe it made with its answer. The file
//! is an artifact like any other (listed in `MANIFEST.sha256`, compared byte for byte by
//! `build --check`), and a function of the inputs only, so it is deterministic.
//!
//! While every recorded input still reads the same (and every probe answers the same), a
//! build of the same fleet would produce the same bytes (emitters are pure functions of the
//! model, and the model a pure function of these inputs): `fleetc build` and
//! `build --check` then only verify out/ against its manifest and stop without compiling
//! (`run`). A build that had any diagnostic (a warning) records nothing, so that every run
//! of it shows the warning again.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::diag::{Diagnostic, Diagnostics, FileId, Severity, Sources, Span, codes};
use crate::digest::sha256_hex;
use crate::model::Loader;

/// The record's path in out/.
pub const INPUTS: &str = "INPUTS.sha256";
/// Its first line.
pub const INPUTS_HEADER: &str =
    "# fleetc inputs v1: while these are unchanged, `fleetc build` verifies this directory instead of compiling";

/// The version a record names: a record made by another fleetc forces a real build.
pub fn fleetc_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// A loader that remembers what it was asked.
pub struct Recording<'a> {
    inner: &'a dyn Loader,
    reads: RefCell<BTreeMap<String, Option<String>>>,
    probes: RefCell<BTreeMap<String, bool>>,
}

impl<'a> Recording<'a> {
    pub fn new(inner: &'a dyn Loader) -> Self {
        Recording { inner, reads: RefCell::default(), probes: RefCell::default() }
    }

    /// The record's bytes for a build of `fleet_name` (whose text is `fleet_text`) whose
    /// other files have the manifest `manifest` (the manifest without the record's own
    /// line); `None` when a read failed (such a build has errors and writes nothing anyway).
    ///
    /// The build's warnings (`diags`, whose spans point into `sources`) are recorded too, so
    /// that a build that only verifies shows them again exactly; a build with an error, or
    /// with more diagnostics than are reported, records nothing.
    pub fn record(
        &self,
        fleet_name: &str,
        fleet_text: &str,
        manifest: &[u8],
        diags: &Diagnostics,
        sources: &Sources,
    ) -> Option<Vec<u8>> {
        if diags.has_errors() || diags.omitted() > 0 {
            return None;
        }
        let mut s = format!("{INPUTS_HEADER}\nfleetc {}\noutput {}\n", fleetc_version(), sha256_hex(manifest));
        s.push_str(&format!("{}  {fleet_name}\n", sha256_hex(fleet_text.as_bytes())));
        for (path, hash) in self.reads.borrow().iter() {
            s.push_str(&format!("{}  {path}\n", hash.as_ref()?));
        }
        for (path, exists) in self.probes.borrow().iter() {
            s.push_str(&format!("{} {path}\n", if *exists { "exists" } else { "absent" }));
        }
        for f in sources.files().skip(1) {
            s.push_str(&format!("source {}\n", f.name));
        }
        for d in diags.iter() {
            let span = |s: &Span| json!([s.file.0, s.start, s.len]);
            let line = json!({
                "code": d.code.name,
                "severity": d.severity.as_str(),
                "message": d.message,
                "span": d.span.as_ref().map(span),
                "label": d.label,
                "related": d.related.iter().map(|(s, l)| json!([span(s), l])).collect::<Vec<_>>(),
                "help": d.help,
            });
            s.push_str(&format!("diagnostic {line}\n"));
        }
        Some(s.into_bytes())
    }
}

impl Loader for Recording<'_> {
    fn read(&self, rel_path: &str) -> Result<String, String> {
        let r = self.inner.read(rel_path);
        self.reads.borrow_mut().insert(rel_path.to_owned(), r.as_ref().ok().map(|t| sha256_hex(t.as_bytes())));
        r
    }
    fn exists(&self, rel_path: &str) -> bool {
        let e = self.inner.exists(rel_path);
        self.probes.borrow_mut().insert(rel_path.to_owned(), e);
        e
    }
}

/// The digest of the other files' manifest a record names (`output <sha256>`).
pub fn recorded_output(record: &[u8]) -> Option<&str> {
    std::str::from_utf8(record).ok()?.lines().nth(2)?.strip_prefix("output ")
}

/// The manifest `manifest` without the record's own line: what [`Recording::record`] was
/// given when the record was made.
pub fn manifest_without_record(manifest: &[u8]) -> Vec<u8> {
    let suffix = format!("  {INPUTS}");
    let mut out = Vec::with_capacity(manifest.len());
    for line in manifest.split_inclusive(|b| *b == b'\n') {
        if !line.strip_suffix(b"\n").unwrap_or(line).ends_with(suffix.as_bytes()) {
            out.extend_from_slice(line);
        }
    }
    out
}

/// Whether `record` (an `INPUTS.sha256` as read from out/) still describes the inputs: the
/// same fleetc version, the fleet file `fleet_name` with text `fleet_text`, every recorded
/// file with the same bytes through `loader`, every probe with the same answer. Anything
/// unreadable or unexpected in the record is a change.
pub fn unchanged(record: &[u8], fleet_name: &str, fleet_text: &str, loader: &dyn Loader) -> bool {
    let Ok(text) = std::str::from_utf8(record) else { return false };
    let mut lines = text.lines();
    if lines.next() != Some(INPUTS_HEADER) || lines.next() != Some(&format!("fleetc {}", fleetc_version())) {
        return false;
    }
    if !lines.next().is_some_and(|l| l.starts_with("output ")) {
        return false;
    }
    match lines.next().and_then(|l| l.split_once("  ")) {
        Some((hash, name)) if name == fleet_name && hash == sha256_hex(fleet_text.as_bytes()) => {}
        _ => return false,
    }
    for line in lines {
        if let Some((hash, path)) = line.split_once("  ") {
            match loader.read(path) {
                Ok(t) if sha256_hex(t.as_bytes()) == hash => {}
                _ => return false,
            }
        } else if let Some(path) = line.strip_prefix("exists ") {
            if !loader.exists(path) {
                return false;
            }
        } else if let Some(path) = line.strip_prefix("absent ") {
            if loader.exists(path) {
                return false;
            }
        } else if line.starts_with("source ") || line.starts_with("diagnostic ") {
        } else {
            return false;
        }
    }
    true
}

/// The diagnostics a record holds, with the sources their spans point into (fleet.kdl,
/// then each recorded source read again through `loader`); `None` when the record cannot
/// be read back (the caller then compiles).
pub fn recorded_diagnostics(
    record: &[u8],
    fleet_name: &str,
    fleet_text: &str,
    loader: &dyn Loader,
) -> Option<(Diagnostics, Sources)> {
    let text = std::str::from_utf8(record).ok()?;
    let mut sources = Sources::default();
    sources.add(fleet_name, fleet_text);
    let mut diags = Diagnostics::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("source ") {
            sources.add(name, loader.read(name).ok()?);
        } else if let Some(j) = line.strip_prefix("diagnostic ") {
            let v: Value = serde_json::from_str(j).ok()?;
            let span = |v: &Value| -> Option<Span> {
                let a = v.as_array()?;
                let n = |i: usize| a.get(i).and_then(Value::as_u64).and_then(|x| usize::try_from(x).ok());
                let file = u32::try_from(n(0)?).ok()?;
                ((file as usize) < sources.files().count())
                    .then(|| Span::new(FileId(file), n(1).unwrap_or(0), n(2).unwrap_or(0)))
            };
            let code = codes::lookup(v["code"].as_str()?).filter(|c| c.name == v["code"])?;
            let mut d = Diagnostic::new(code, v["message"].as_str()?);
            d.severity = if v["severity"] == "warning" { Severity::Warning } else { return None };
            d.span = match &v["span"] {
                Value::Null => None,
                s => Some(span(s)?),
            };
            d.label = v["label"].as_str().map(str::to_owned);
            d.help = v["help"].as_str().map(str::to_owned);
            for r in v["related"].as_array()? {
                d.related.push((span(r.get(0)?)?, r.get(1)?.as_str()?.to_owned()));
            }
            diags.push(d);
        }
    }
    Some((diags, sources))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::MapLoader;

    fn loader(files: &[(&str, &str)]) -> MapLoader {
        MapLoader { files: files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect() }
    }

    #[test]
    fn a_record_holds_while_nothing_changes_and_not_after() {
        let l = loader(&[("vendor/a.yaml", "a: 1\n"), ("patches/p.yaml", "b: 2\n")]);
        let rec = Recording::new(&l);
        rec.read("vendor/a.yaml").unwrap();
        rec.read("patches/p.yaml").unwrap();
        let mut sources = Sources::default();
        sources.add("fleet.kdl", "fleet {}");
        sources.add("patches/p.yaml", "b: 2\n");
        let mut diags = Diagnostics::new();
        diags.push(
            Diagnostic::new(&codes::PATCH_OVERRIDE, "a warning")
                .at(Span::new(FileId(1), 0, 1))
                .label("here")
                .related(Span::new(FileId(0), 0, 5), "there"),
        );
        let record = rec.record("fleet.kdl", "fleet {}", b"m", &diags, &sources).unwrap();
        let (back, back_sources) = recorded_diagnostics(&record, "fleet.kdl", "fleet {}", &l).unwrap();
        assert_eq!(back.iter().collect::<Vec<_>>(), diags.iter().collect::<Vec<_>>());
        assert_eq!(back_sources.files().map(|f| f.name.clone()).collect::<Vec<_>>(), ["fleet.kdl", "patches/p.yaml"]);
        assert_eq!(recorded_output(&record), Some(sha256_hex(b"m").as_str()));
        assert!(unchanged(&record, "fleet.kdl", "fleet {}", &l));
        assert!(!unchanged(&record, "fleet.kdl", "fleet { }", &l), "fleet.kdl changed");
        assert!(!unchanged(&record, "other.kdl", "fleet {}", &l), "another fleet file");
        let edited = loader(&[("vendor/a.yaml", "a: 2\n"), ("patches/p.yaml", "b: 2\n")]);
        assert!(!unchanged(&record, "fleet.kdl", "fleet {}", &edited), "a vendored file changed");
        let gone = loader(&[("vendor/a.yaml", "a: 1\n")]);
        assert!(!unchanged(&record, "fleet.kdl", "fleet {}", &gone), "a read file is gone");
        let text = String::from_utf8(record.clone()).unwrap();
        let other = text.replace(&format!("fleetc {}", fleetc_version()), "fleetc 0.0.0-other");
        assert!(!unchanged(other.as_bytes(), "fleet.kdl", "fleet {}", &l), "another fleetc version");
        assert!(!unchanged(b"", "fleet.kdl", "fleet {}", &l));
    }
}
