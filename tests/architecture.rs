//! ARCHITECTURE.md is held true by this module: its drawing of the floors is printed from
//! the layering test's [`FLOORS`](super::layering) table (so the drawing and the test that
//! enforces it cannot part), and every row of its Contracts table names, in its "one
//! function" column, an item defined exactly once where the row says (`module::item` in that
//! module's file, `Type::method` in the `impl` of that type), so a row cannot name a place that
//! moved.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use super::layering::FLOORS;

fn architecture() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md")).unwrap()
}

/// The floors as ARCHITECTURE.md draws them, highest first, one line per floor.
fn drawing() -> String {
    let mut floors: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    for (module, floor) in FLOORS {
        floors.entry(*floor).or_default().push(module);
    }
    let mut out = String::new();
    for (floor, modules) in floors.iter().rev() {
        let line = if modules.contains(&"check") && modules.contains(&"emit") {
            let rest: Vec<&str> = modules.iter().copied().filter(|m| !matches!(*m, "check" | "emit")).collect();
            let mut s = "check  |  emit   (siblings: never import each other)".to_owned();
            if !rest.is_empty() {
                s = format!("{s}  {}", rest.join("  "));
            }
            s
        } else {
            modules.join("  ")
        };
        out.push_str(&format!("{floor}  {line}\n"));
    }
    out
}

#[test]
fn the_drawing_of_the_floors_is_the_layering_tests_table() {
    let text = architecture();
    let start = "<!-- floors: printed from tests/layering.rs FLOORS; tests/architecture.rs checks it -->\n```\n";
    let from = text.find(start).expect("ARCHITECTURE.md has the floors drawing") + start.len();
    let to = from + text[from..].find("```").unwrap();
    assert_eq!(&text[from..to], drawing(), "ARCHITECTURE.md's drawing differs from FLOORS; paste the right side");
}

/// The path a contract row's "one function" cell names first, as segments:
/// `layout::paths::pool_patches` → `[layout, paths, pool_patches]`;
/// `Postgres::password_secret(&…)` → `[Postgres, password_secret]`.
fn named_path(cell: &str) -> Option<Vec<String>> {
    let code = cell.split('`').nth(1)?;
    let path = code.split(['(', ' ', '/']).next()?;
    let segments: Vec<String> = path.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect();
    (!segments.is_empty()).then_some(segments)
}

/// A file's library code: comments and an inline `mod tests` left out.
fn library(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.split("#[cfg(test)]\nmod tests {").next().unwrap_or(&text).to_owned();
    Some(text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n"))
}

fn src_files() -> Vec<std::path::PathBuf> {
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// How many times `item` is defined in `code` as a function, constant, static or type.
fn defined(code: &str, item: &str) -> usize {
    let needles = [
        format!("fn {item}("),
        format!("fn {item}<"),
        format!("const {item}:"),
        format!("static {item}:"),
        format!("struct {item} "),
        format!("struct {item}<"),
        format!("struct {item};"),
        format!("enum {item} "),
        format!("type {item} "),
    ];
    code.lines().filter(|l| needles.iter().any(|n| l.contains(n.as_str()))).count()
}

/// Where the cell's path is defined, and how often: a `Type::method` in the files that hold an
/// `impl Type`; a `module::item` in that module's file.
fn definitions(path: &[String]) -> usize {
    let item = path.last().unwrap();
    let owner = path.len().checked_sub(2).map(|i| path[i].as_str());
    if let Some(ty) = owner.filter(|o| o.starts_with(|c: char| c.is_ascii_uppercase())) {
        let impls =
            [format!("impl {ty} "), format!("impl {ty}<"), format!("impl<'a> {ty}<"), format!("impl<'f> {ty}<")];
        // Rust itself refuses a second method of one name on one type; a file may hold the
        // impls of several types, so a method is found (1) or not (0).
        let found = src_files()
            .iter()
            .filter_map(|f| library(f))
            .filter(|code| impls.iter().any(|i| code.contains(i.as_str())))
            .any(|code| defined(&code, item) > 0);
        return usize::from(found);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let module = &path[..path.len() - 1];
    let file = module.iter().fold(root, |p, m| p.join(m));
    [file.with_extension("rs"), file.join("mod.rs")]
        .iter()
        .filter_map(|f| library(f))
        .map(|code| defined(&code, item))
        .sum()
}

#[test]
fn every_contract_row_names_one_item_that_src_defines_once() {
    let text = architecture();
    let table = text.split("## Contracts").nth(1).expect("a Contracts section").split("\n## ").next().unwrap();
    let mut rows = 0;
    let mut wrong = Vec::new();
    for line in table.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| value") && !l.starts_with("|---")) {
        rows += 1;
        let cells: Vec<&str> = line.split(" | ").collect();
        let Some(path) = cells.get(1).and_then(|c| named_path(c)) else {
            wrong.push(format!("no item named: {line}"));
            continue;
        };
        let n = definitions(&path);
        if n != 1 {
            wrong.push(format!(
                "`{}` is defined {n} times where it names (row: {})",
                path.join("::"),
                cells[0].trim_start_matches("| ")
            ));
        }
    }
    assert!(rows >= 15, "the Contracts table has {rows} rows");
    assert!(wrong.is_empty(), "Contracts rows that do not name one item:\n{}", wrong.join("\n"));
}
