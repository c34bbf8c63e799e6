//! Data flows one way through the crate: every top-level module of `src/` stands on a floor
//! ([`FLOORS`], lowest first) and may import its own floor and the floors below it, never one
//! above. `check` and `emit` stand side by side on one floor and never import each other;
//! `layout` imports nothing of the crate; and the import graph between the modules has no
//! circle. The test reads every `use crate::…` statement (braces expanded, across lines),
//! every `crate::<module>::…` path written inline and every `super::…` path that leaves its
//! top-level module, in every file of `src/` but the crate roots (`lib.rs`, `main.rs`).
//! Test modules (`#[cfg(test)] mod …`, inline or in their own file) are left out: they are
//! no part of the library, and they drive the whole pipeline through `compile`.
//!
//! [`KNOWN`] lists the arrows up that exist today because their fix is another change's (the
//! owner is named); each entry must still occur, so the list can only shrink.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The floors, lowest first: `(module path, floor)`. A file belongs to the longest entry its
/// module path starts with (`artifacts::set` before `artifacts`); so does an imported path.
pub(crate) const FLOORS: &[(&str, u32)] = &[
    ("diag", 1),
    ("digest", 1),
    ("parallel", 1),
    ("memo", 1),
    ("secrets", 1),
    ("layout", 1),
    ("syntax", 2),
    ("schematic", 2),
    ("artifacts::set", 2),
    ("model", 3),
    ("upstream", 4),
    ("check", 5),
    ("emit", 5),
    ("artifacts::disk", 6),
    // What `artifacts` holds besides its pure set: the disk side, the stage after emit.
    ("artifacts", 6),
    ("review", 6),
    ("plan", 6),
    ("apply", 7),
    // The drivers.
    ("graph", 8),
    ("compile", 8),
    ("run", 8),
    ("cli", 8),
    ("inputs", 8),
    ("git_loader", 8),
    ("completions", 8),
    ("init", 8),
    ("import", 8),
    ("synth", 8),
];

/// Side by side on one floor, never importing each other.
const SIBLINGS: (&str, &str) = ("check", "emit");

/// Arrows up that exist today: (importing module, imported path prefix, whose change removes
/// it). Remove an entry when its import is gone (the test fails on a stale one).
const KNOWN: &[(&str, &str, &str)] = &[];

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

/// The module path of a file relative to `src/` (`emit/talos/mod.rs` → `emit::talos`).
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// `a::{b, c::{d as x, e}}` → `a::b`, `a::c::d`, `a::c::e` (aliases and whitespace removed).
fn expand(path: &str) -> Vec<String> {
    let mut words = path.split_whitespace();
    let mut path = String::new();
    while let Some(w) = words.next() {
        match w {
            // The alias's name goes; what closes the item after it stays.
            "as" => path.extend(words.next().unwrap_or_default().chars().skip_while(|c| is_ident(*c))),
            w => path.push_str(w),
        }
    }
    let Some(open) = path.find('{') else { return vec![path] };
    let (head, inner) = (&path[..open], &path[open + 1..path.len() - 1]);
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
    items.iter().filter(|i| !i.is_empty()).flat_map(|i| expand(&format!("{head}{i}"))).collect()
}

/// A path as seen from `module` (`crate::…`, or `super::…` that leaves it), made absolute:
/// `crate::x::y`. `None` for a path that stays inside its top-level module or is not a path
/// into the crate.
fn absolute(module: &[String], path: &str) -> Option<String> {
    let path = path.trim_end_matches(';').trim_end_matches(':');
    if let Some(rest) = path.strip_prefix("crate::") {
        return Some(format!("crate::{rest}"));
    }
    let mut at: Vec<&str> = module.iter().map(String::as_str).collect();
    let mut rest = path;
    while let Some(r) = rest.strip_prefix("super::") {
        at.pop()?;
        rest = r;
    }
    (rest != path && at.is_empty()).then(|| format!("crate::{rest}"))
}

/// The source of a file without its comments and its test modules, and the names of the
/// test modules it declares in files of their own (`#[cfg(test)] mod tests;`).
fn library_code(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut code, mut test_files) = (Vec::new(), Vec::new());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        if t == "#[cfg(test)]"
            && let Some(next) = lines.peek().copied()
        {
            let item = next.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
            if let Some(name) = item.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                test_files.push(name.to_owned());
                lines.next();
            } else if item.starts_with("mod ") && item.ends_with('{') {
                // The module ends at the `}` with its own indentation.
                let end = format!("{}}}", &next[..next.len() - next.trim_start().len()]);
                lines.by_ref().find(|l| *l == end);
            }
            continue;
        }
        code.push(line.split(" //").next().unwrap_or(line).to_owned());
    }
    (code, test_files)
}

/// Every path into the crate outside `module` that a file's library code names: `use`
/// statements (spanning lines, braces expanded) and inline `crate::…`/`super::…` paths.
fn imports(module: &[String], code: &[String]) -> Vec<String> {
    paths(module, code, absolute)
}

/// The paths a file's library code names, each made absolute by `resolve` (which drops the
/// ones it does not keep).
fn paths(module: &[String], code: &[String], resolve: fn(&[String], &str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = code.iter();
    while let Some(line) = lines.next() {
        let t = line.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub(super) ");
        let t = t.trim_start_matches("pub ");
        if let Some(rest) = t.strip_prefix("use ") {
            let mut stmt = rest.to_owned();
            while !stmt.contains(';') {
                match lines.next() {
                    Some(l) => stmt.push_str(l),
                    None => break,
                }
            }
            let stmt = stmt.split(';').next().unwrap_or_default();
            out.extend(expand(stmt).iter().filter_map(|p| resolve(module, p)));
            continue;
        }
        for start in ["crate::", "super::"] {
            let mut rest = line.as_str();
            while let Some(i) = rest.find(start) {
                let before = rest[..i].chars().last();
                let tail = &rest[i..];
                let end = tail.find(|c: char| !(is_ident(c) || c == ':')).unwrap_or(tail.len());
                if !before.is_some_and(|c| is_ident(c) || c == ':') {
                    out.extend(resolve(module, &tail[..end]));
                }
                rest = &tail[end.max(start.len())..];
            }
        }
    }
    out
}

/// The [`FLOORS`] entry a module path (`emit::talos`, or `crate::emit::talos::…`) belongs to.
fn floor_of(path: &str) -> Option<(&'static str, u32)> {
    let path = path.strip_prefix("crate::").unwrap_or(path);
    FLOORS
        .iter()
        .filter(|(m, _)| path == *m || path.starts_with(&format!("{m}::")))
        .max_by_key(|(m, _)| m.len())
        .copied()
}

/// Every library file of `src/` but the crate roots, as (path relative to `src/`, its code
/// without comments and test modules); files that are test modules are left out.
fn library_files() -> Vec<(String, Vec<String>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.retain(|f| !matches!(f.strip_prefix(&src).unwrap().to_str(), Some("lib.rs" | "main.rs")));
    // First every file's code and the test-module files it declares, then the files that
    // are not test modules.
    let mut test_files: BTreeSet<PathBuf> = BTreeSet::new();
    let mut read = Vec::new();
    for file in files {
        let (code, tests) = library_code(&fs::read_to_string(&file).unwrap());
        let children = if file.file_name().is_some_and(|n| n == "mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for t in tests {
            test_files.extend([children.join(format!("{t}.rs")), children.join(&t).join("mod.rs")]);
        }
        read.push((file, code));
    }
    read.retain(|(file, _)| !test_files.contains(file));
    read.into_iter()
        .map(|(file, code)| (file.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/"), code))
        .collect()
}

/// Every arrow of the crate: (importing file, its FLOORS entry, imported path).
fn arrows() -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    for (rel, code) in library_files() {
        let module = module_of(&rel);
        let (owner, _) = floor_of(&module.join("::")).unwrap_or_else(|| panic!("src/{rel} is on no floor of FLOORS"));
        for p in imports(&module, &code) {
            if floor_of(&p).is_some_and(|(m, _)| m != owner) {
                out.push((format!("src/{rel}"), owner, p));
            }
        }
    }
    out
}

#[test]
fn every_module_of_src_is_on_a_floor() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for e in fs::read_dir(&root).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let module = name.trim_end_matches(".rs");
        if !matches!(module, "lib" | "main") && floor_of(module).is_none() {
            missing.push(module.to_owned());
        }
    }
    assert!(missing.is_empty(), "modules on no floor of FLOORS: {missing:?}");
}

#[test]
fn no_module_imports_a_floor_above_it() {
    let arrows = arrows();
    let upward: Vec<&(String, &str, String)> = arrows
        .iter()
        .filter(|(_, owner, p)| {
            let from = floor_of(owner).unwrap().1;
            floor_of(p).is_some_and(|(_, to)| to > from)
        })
        .collect();
    let known = |owner: &str, p: &str| KNOWN.iter().any(|(o, kp, _)| *o == owner && p.starts_with(kp));
    let new: Vec<String> =
        upward.iter().filter(|(_, o, p)| !known(o, p)).map(|(f, o, p)| format!("{f} ({o}): {p}")).collect();
    assert!(new.is_empty(), "imports of a floor above (FLOORS, lowest first):\n{}", new.join("\n"));
    let stale: Vec<String> = KNOWN
        .iter()
        .filter(|(o, kp, _)| !upward.iter().any(|(_, uo, p)| uo == o && p.starts_with(kp)))
        .map(|(o, kp, why)| format!("{o} → {kp} ({why})"))
        .collect();
    assert!(stale.is_empty(), "KNOWN lists imports that are gone, remove them:\n{}", stale.join("\n"));
}

#[test]
fn check_and_emit_never_import_each_other() {
    let (a, b) = SIBLINGS;
    assert_eq!(floor_of(a).unwrap().1, floor_of(b).unwrap().1, "siblings stand on one floor");
    let crossing: Vec<String> = arrows()
        .into_iter()
        .filter(|(_, o, p)| {
            let to = floor_of(p).unwrap().0;
            (*o == a && to == b) || (*o == b && to == a)
        })
        .map(|(f, _, p)| format!("{f}: {p}"))
        .collect();
    assert!(crossing.is_empty(), "{a} and {b} import each other:\n{}", crossing.join("\n"));
}

#[test]
fn layout_imports_nothing_of_the_crate() {
    let out: Vec<String> =
        arrows().into_iter().filter(|(_, o, _)| *o == "layout").map(|(f, _, p)| format!("{f}: {p}")).collect();
    assert!(out.is_empty(), "layout imports:\n{}", out.join("\n"));
}

#[test]
fn the_modules_import_graph_has_no_circle() {
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let arrows = arrows();
    for (_, owner, p) in &arrows {
        edges.entry(owner).or_default().insert(floor_of(p).unwrap().0);
    }
    // Depth-first, with the path so far: a module met again on its own path closes a circle.
    fn visit<'a>(
        m: &'a str,
        edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(i) = path.iter().position(|x| *x == m) {
            return Some([&path[i..], &[m]].concat());
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for next in edges.get(m).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        if let Some(circle) = visit(m, &edges, &mut Vec::new(), &mut done) {
            panic!("the modules import each other in a circle: {}", circle.join(" → "));
        }
    }
}

#[test]
fn every_folder_module_has_a_module_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    for dir in dirs.into_iter().filter(|d| d.join("mod.rs").is_file()) {
        let text = fs::read_to_string(dir.join("mod.rs")).unwrap();
        let doc: Vec<&str> = text.lines().take_while(|l| l.starts_with("//!")).collect();
        let first: Vec<&str> = doc.iter().take_while(|l| l.trim() != "//!").copied().collect();
        assert!(first.len() >= 2, "{}/mod.rs opens without a module-doc paragraph", dir.display());
    }
}

#[test]
fn the_scanner_reads_grouped_multiline_relative_and_inline_paths() {
    let text = "use crate::{a::b, emit::{x as w, y::{z}}};\nuse crate::{\n    review::files,\n};\n// crate::apply::x\nlet v = crate::artifacts::f(); // crate::apply\nuse super::super::model::Fleet;\nlet s = super::sibling::g();\n#[cfg(test)]\nmod tests {\n    use crate::compile::compile;\n}\n#[cfg(test)]\nmod more;\n";
    let (code, tests) = library_code(text);
    assert_eq!(tests, ["more"]);
    let module = ["check".to_owned(), "talos".to_owned()];
    assert_eq!(
        imports(&module, &code),
        [
            "crate::a::b",
            "crate::emit::x",
            "crate::emit::y::z",
            "crate::review::files",
            "crate::artifacts::f",
            "crate::model::Fleet"
        ]
    );
    assert_eq!(floor_of("crate::artifacts::set::ArtifactSet"), Some(("artifacts::set", 2)));
    assert_eq!(floor_of("crate::artifacts::ArtifactSet"), Some(("artifacts", 6)));
    assert_eq!(floor_of("crate::emit::talos"), Some(("emit", 5)));
    assert_eq!(floor_of("crate::emitter"), None);
    assert_eq!(module_of("emit/talos/mod.rs"), ["emit", "talos"]);
}

/// A path as seen from `module`, made absolute whether or not it leaves the top-level module
/// (`super::cluster::Node` from `apply::metal` → `apply::cluster::Node`).
fn absolute_anywhere(module: &[String], path: &str) -> Option<String> {
    let path = path.trim_end_matches(';').trim_end_matches(':');
    if let Some(rest) = path.strip_prefix("crate::") {
        return Some(rest.to_owned());
    }
    let mut at: Vec<String> = module.to_vec();
    let mut rest = path;
    let mut moved = false;
    while let Some(r) = rest.strip_prefix("super::") {
        at.pop()?;
        rest = r;
        moved = true;
    }
    moved.then(|| at.into_iter().chain(rest.split("::").map(str::to_owned)).collect::<Vec<_>>().join("::"))
}

/// Inside every folder, the rooms (its files and sub-folders, the folder's own `mod.rs`
/// aside) import each other one way: no circle between siblings at any depth (house-3.md's
/// circles were `apply/cluster.rs` ↔ `apply/metal.rs`, `apply/child_env.rs` ↔
/// `apply/environment.rs`, `check/patches.rs` ↔ `check/versions.rs` and eight files across
/// `check/` and `emit/`). A folder's `mod.rs` is its door: a child reading its parent's kit
/// is an arrow inward, not a circle.
#[test]
fn no_rooms_of_one_folder_import_each_other_in_a_circle() {
    let mut modules: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    let mut all: BTreeSet<Vec<String>> = BTreeSet::new();
    for (rel, code) in library_files() {
        let module = module_of(&rel);
        all.insert(module.clone());
        let targets = paths(&module, &code, absolute_anywhere);
        modules.insert(module, targets);
    }
    // (folder, from child, to child) for every import between two children of one folder.
    let mut edges: BTreeMap<(Vec<String>, String), BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in &modules {
        for t in targets {
            let parts: Vec<String> = t.split("::").map(str::to_owned).collect();
            // The module the path names: its longest prefix that is a module of the crate.
            let Some(to) = (1..=parts.len()).rev().map(|n| parts[..n].to_vec()).find(|m| all.contains(m)) else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common >= from.len() || common >= to.len() {
                continue; // a parent and its child
            }
            let folder = from[..common].to_vec();
            edges.entry((folder.clone(), from[common].clone())).or_default().insert(to[common].clone());
        }
    }
    let mut circles = Vec::new();
    for (folder, a) in edges.keys() {
        // A path back to `a` from its own arrows, depth first.
        let mut stack: Vec<Vec<String>> = vec![vec![a.clone()]];
        let mut seen = BTreeSet::new();
        while let Some(path) = stack.pop() {
            let last = path.last().unwrap();
            for next in edges.get(&(folder.clone(), last.clone())).into_iter().flatten() {
                if next == a {
                    let mut circle = path.clone();
                    circle.push(a.clone());
                    circles.push(format!("src/{}: {}", folder.join("/"), circle.join(" → ")));
                } else if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push(longer);
                }
            }
        }
    }
    circles.sort();
    circles.dedup();
    assert!(circles.is_empty(), "rooms of one folder that import each other:\n{}", circles.join("\n"));
}
