//! Data flows one way through the stages: each stage folder of `src/` may import the stages
//! below it and never one above it. The order is data ([`STAGES`]); this test reads every
//! `use crate::…` statement (and every `crate::<stage>::…` path written inline) of each stage
//! folder and fails on an upward import. Modules outside the stage folders (`diag`,
//! `digest`, `schematic`, `plan`, the drivers `compile` and `run`, …) are not stages.
//!
//! [`KNOWN`] lists the upward imports of code this test's author could not change (the
//! folders of other owners); each entry must still occur, so the list can only shrink.

use std::fs;
use std::path::{Path, PathBuf};

/// The stages, lowest first: syntax → model → check → emit → artifacts → review → apply.
const STAGES: &[&str] = &["syntax", "model", "check", "emit", "artifacts", "review", "apply"];

/// Upward imports that exist today: (file, imported path prefix, why). Remove an entry when
/// its import is gone (the test fails on a stale one).
const KNOWN: &[(&str, &str, &str)] = &[
    ("src/check/argocd.rs", "crate::emit::argocd", "check reuses emit's Argo CD plan"),
    ("src/check/capi.rs", "crate::emit::capi", "check reads Cluster API constants of emit"),
    ("src/check/talos.rs", "crate::emit::talos", "check asks emit which Talos versions it writes"),
    ("src/emit/argocd/mod.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/argocd/secrets.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/argocd/tests.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/capi/mod.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/capi/providers.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/capi/workload.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/metal/mod.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/mod.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/schematic/mod.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/talos/mod.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
    ("src/emit/tofu/mod.rs", "crate::artifacts::ArtifactSet", "emit returns artifacts' type"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The full paths a `use crate::…;` statement imports, braces expanded one level
/// (`use crate::{a::b, c}` → `crate::a::b`, `crate::c`).
fn use_paths(stmt: &str) -> Vec<String> {
    let rest = stmt.trim().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
    let Some(rest) = rest.strip_prefix("use crate::") else { return Vec::new() };
    let rest: String = rest.trim_end_matches(';').chars().filter(|c| !c.is_whitespace()).collect();
    match rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        Some(inner) => {
            let (mut items, mut depth, mut cur) = (Vec::new(), 0, String::new());
            for c in inner.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(std::mem::take(&mut cur));
                        continue;
                    }
                    _ => {}
                }
                cur.push(c);
            }
            items.push(cur);
            items.into_iter().filter(|i| !i.is_empty()).map(|i| format!("crate::{i}")).collect()
        }
        None => vec![format!("crate::{rest}")],
    }
}

/// Every `crate::…` path of a file: from its `use crate::` statements (which may span
/// lines) and from inline paths, comments left out.
fn crate_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        if t.trim_start_matches("pub ").trim_start_matches("pub(crate) ").starts_with("use crate::") {
            let mut stmt = t.to_owned();
            while !stmt.contains(';') {
                match lines.next() {
                    Some(l) => stmt.push_str(l),
                    None => break,
                }
            }
            paths.extend(use_paths(&stmt));
            continue;
        }
        let code = t.split(" //").next().unwrap_or(t);
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().last();
            let tail = &rest[i..];
            let end = tail.find(|c: char| !(is_ident(c) || c == ':')).unwrap_or(tail.len());
            if !before.is_some_and(is_ident) {
                paths.push(tail[..end].trim_end_matches(':').to_owned());
            }
            rest = &tail[end.max(7)..];
        }
    }
    paths
}

fn stage_of(path: &str) -> Option<usize> {
    let first = path.strip_prefix("crate::")?.split("::").next()?;
    STAGES.iter().position(|s| *s == first)
}

#[test]
fn no_stage_imports_a_stage_above_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut upward = Vec::new();
    for (level, stage) in STAGES.iter().enumerate() {
        let mut files = Vec::new();
        rust_files(&root.join("src").join(stage), &mut files);
        assert!(!files.is_empty(), "stage folder src/{stage}/ is missing");
        for file in files {
            let rel = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            for p in crate_paths(&fs::read_to_string(&file).unwrap()) {
                if stage_of(&p).is_some_and(|l| l > level) {
                    upward.push((rel.clone(), p));
                }
            }
        }
    }
    let known = |(f, p): &(String, String)| KNOWN.iter().any(|(kf, kp, _)| f == kf && p.starts_with(kp));
    let new: Vec<String> = upward.iter().filter(|u| !known(u)).map(|(f, p)| format!("{f}: {p}")).collect();
    assert!(new.is_empty(), "upward imports (order: {}):\n{}", STAGES.join(" → "), new.join("\n"));
    let stale: Vec<String> = KNOWN
        .iter()
        .filter(|(kf, kp, _)| !upward.iter().any(|(f, p)| f == kf && p.starts_with(kp)))
        .map(|(f, p, why)| format!("{f}: {p} ({why})"))
        .collect();
    assert!(stale.is_empty(), "KNOWN lists imports that are gone, remove them:\n{}", stale.join("\n"));
}

#[test]
fn every_stage_folder_has_a_module_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for stage in STAGES {
        let text = fs::read_to_string(root.join("src").join(stage).join("mod.rs")).unwrap();
        let doc: Vec<&str> = text.lines().take_while(|l| l.starts_with("//!")).collect();
        let first: Vec<&str> = doc.iter().take_while(|l| l.trim() != "//!").copied().collect();
        assert!(first.len() >= 2, "src/{stage}/mod.rs opens without a module-doc paragraph");
    }
}

#[test]
fn the_scanner_reads_grouped_multiline_and_inline_paths() {
    let text = "use crate::{a::b, emit::{x, y}};\nuse crate::{\n    review::files,\n};\n// crate::apply::x\nlet v = crate::artifacts::f(); // crate::apply\n";
    assert_eq!(
        crate_paths(text),
        vec!["crate::a::b", "crate::emit::{x,y}", "crate::review::files", "crate::artifacts::f"]
    );
    assert_eq!(stage_of("crate::emit::{x,y}"), Some(3));
    assert_eq!(stage_of("crate::diag::Span"), None);
}
