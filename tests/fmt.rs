//! `fleetc fmt`: on the reference fleet, every golden fleet and the starter of `fleetc init`,
//! its output (a) parses to the same tree, (b) keeps every comment and (c) is a fixed point;
//! whitespace-mangled copies format back; the golden `fmt-*` cases; and the command line.

#![allow(clippy::disallowed_methods)] // tests run the real binary

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fleetc::diag::FileId;
use fleetc::diag::render::{Style, text};
use fleetc::syntax::{self, Node, ValueKind, fmt};

/// A node without spans: name, arguments, properties, children.
#[derive(Debug, PartialEq)]
struct Bare {
    name: String,
    args: Vec<String>,
    props: Vec<(String, String)>,
    children: Option<Vec<Bare>>,
}

/// A value, comparable (`#nan` equals `#nan`: floats compare by their bits).
fn value(v: &ValueKind) -> String {
    match v {
        ValueKind::Float(f) => format!("Float({:x})", f.to_bits()),
        v => format!("{v:?}"),
    }
}

fn bare(nodes: &[Node]) -> Vec<Bare> {
    nodes
        .iter()
        .map(|n| Bare {
            name: n.name.value.clone(),
            args: n.args.iter().map(|a| value(&a.kind)).collect(),
            props: n.props.iter().map(|p| (p.name.value.clone(), value(&p.value.kind))).collect(),
            children: n.children.as_deref().map(bare),
        })
        .collect()
}

fn tree(text: &str) -> Vec<Bare> {
    bare(&syntax::parse(FileId(0), text).unwrap_or_else(|_| panic!("parses:\n{text}")))
}

/// (a) same tree, (b) same comments, (c) fixed point. Returns the formatted text.
#[track_caller]
fn assert_round_trip(name: &str, input: &str) -> String {
    let out = fmt::format(FileId(0), input)
        .unwrap_or_else(|d| panic!("{name}: refused: {:?}", d.iter().map(|d| d.message.clone()).collect::<Vec<_>>()));
    assert_eq!(tree(&out), tree(input), "{name}: the formatted tree differs");
    assert_eq!(fmt::comments(&out), fmt::comments(input), "{name}: comments differ");
    let again = fmt::format(FileId(0), &out).expect("formats its own output");
    assert_eq!(again, out, "{name}: not a fixed point");
    out
}

fn all_fleets() -> Vec<PathBuf> {
    let mut v = vec![common::root().join("fleet.kdl")];
    let mut golden: Vec<PathBuf> = fs::read_dir(common::root().join("golden"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("fleet.kdl"))
        .filter(|p| p.exists())
        .collect();
    golden.sort();
    v.extend(golden);
    v
}

#[test]
fn every_fleet_round_trips() {
    let mut checked = 0;
    for path in all_fleets() {
        let input = fs::read_to_string(&path).unwrap();
        if syntax::parse(FileId(0), &input).is_err() {
            continue; // golden/syntax-invalid-kdl: fmt reports the syntax error (tested below)
        }
        assert_round_trip(&path.display().to_string(), &input);
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} fleets checked");
}

#[test]
fn the_reference_fleet_and_the_starter_are_in_the_canonical_layout() {
    let reference = fs::read_to_string(common::root().join("fleet.kdl")).unwrap();
    assert_eq!(assert_round_trip("fleet.kdl", &reference), reference);
    assert_eq!(assert_round_trip("starter", fleetc::init::STARTER), fleetc::init::STARTER);
    assert_eq!(assert_round_trip("proxmox starter", fleetc::init::PROXMOX_STARTER), fleetc::init::PROXMOX_STARTER);
}

/// A small deterministic generator (no dependency): the same sequence on every run.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// Changes only whitespace and line structure: indentation (spaces, tabs, none), longer runs
/// of blank lines, trailing spaces, spaces around `=`, and a node's entries split with `\` line
/// continuations. The reference fleet has no multi-line string, so every line is free.
fn mangle(text: &str, rng: &mut Lcg) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            // A run of blank lines collapses to the one written.
            out.push_str(&"\n".repeat(1 + rng.next(3) as usize));
            continue;
        }
        let indent = ["", " ", "\t", "  ", "        ", "\t  "][rng.next(6) as usize];
        let mut body = line.trim_start().to_owned();
        if !body.starts_with("//") && !body.contains("//") && rng.next(3) == 0 {
            body = body.replacen("\" ", "\" \\\n   ", 1);
        }
        if !body.starts_with("//") && rng.next(3) == 0 {
            body = body.replacen("=\"", " = \"", 1);
        }
        out.push_str(indent);
        out.push_str(&body);
        out.push_str(["", " ", "\t "][rng.next(3) as usize]);
        out.push_str(if rng.next(5) == 0 { "\r\n" } else { "\n" });
    }
    out
}

#[test]
fn whitespace_mangled_fleets_format_back() {
    let mut rng = Lcg(9);
    for path in [common::root().join("fleet.kdl"), common::root().join("golden/proxmox-minimal/fleet.kdl")] {
        let canonical = fs::read_to_string(&path).unwrap();
        for i in 0..8 {
            let mangled = mangle(&canonical, &mut rng);
            assert_ne!(mangled, canonical);
            let out = assert_round_trip(&format!("{} mangled #{i}", path.display()), &mangled);
            assert_eq!(out, canonical, "mangled #{i} of {}:\n{mangled}", path.display());
        }
    }
}

/// Comments in every place the layout keeps them, and slashdash-commented elements.
#[test]
fn comments_everywhere_are_kept() {
    let input = "/* header */ // and a line\nfleet \"x\" /* after name */ { // after brace\n\
                 \t// own line\n\tpool \"a\" count=1 /* inline */ size=\"s\" // end\n\
                 \t/- pool \"b\" {\n\t  gone #true\n\t}\n\tpool \"c\" /-count=2 count=3 /-{ old } {\n\
                 \t\tlabel \"k\" \"v\" /* last */\n\t\t/* before close */\n\t} // after close\n}\n// tail\n";
    let out = assert_round_trip("comments", input);
    assert_eq!(
        out,
        "/* header */ // and a line\nfleet \"x\" /* after name */ { // after brace\n    // own line\n    \
         pool \"a\" count=1 /* inline */ size=\"s\" // end\n    /- pool \"b\" {\n\t  gone #true\n\t}\n    \
         pool \"c\" /-count=2 count=3 /-{ old } {\n        label \"k\" \"v\" /* last */\n        /* before close */\n    \
         } // after close\n}\n// tail\n"
    );
}

fn update() -> bool {
    std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1")
}

/// `golden/fmt-*/input.kdl` with `expected.kdl` (it formats) or `diagnostics.txt` (refused).
fn run_case(dir: &Path) -> Result<(), String> {
    let input = fs::read_to_string(dir.join("input.kdl")).map_err(|e| e.to_string())?;
    let (actual, file) = match fmt::format(FileId(0), &input) {
        Ok(out) => (out, "expected.kdl"),
        Err(diags) => {
            let mut sources = fleetc::diag::Sources::default();
            sources.add("input.kdl", input.clone());
            (text(&diags, &sources, Style::PLAIN), "diagnostics.txt")
        }
    };
    let other = if file == "expected.kdl" { "diagnostics.txt" } else { "expected.kdl" };
    if update() {
        let _ = fs::remove_file(dir.join(other));
        return fs::write(dir.join(file), &actual).map_err(|e| e.to_string());
    }
    let expected = fs::read_to_string(dir.join(file)).map_err(|_| format!("no {file}; got:\n{actual}"))?;
    if expected != actual {
        let diff = similar::TextDiff::from_lines(&expected, &actual).unified_diff().header(file, "actual").to_string();
        return Err(diff);
    }
    if file == "expected.kdl" {
        assert_round_trip(&dir.display().to_string(), &input);
    }
    Ok(())
}

#[test]
fn golden_fmt_cases() {
    let mut cases: Vec<PathBuf> = fs::read_dir(common::root().join("golden"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("input.kdl").exists())
        .collect();
    cases.sort();
    assert!(cases.len() >= 2, "golden/fmt-* cases missing");
    let failures: Vec<String> =
        cases.iter().filter_map(|c| run_case(c).err().map(|e| format!("── {} ──\n{e}", c.display()))).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ── the command line ──

fn fleetc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("fleetc runs")
}

fn out(o: &Output) -> (i32, String, String) {
    (
        o.status.code().expect("exit code"),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn fmt_check_passes_on_the_reference_fleet() {
    let (code, stdout, stderr) = out(&fleetc(&common::root(), &["fmt", "--check"]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stdout, "");
}

#[test]
fn fmt_check_lists_a_file_to_change_and_fmt_rewrites_it() {
    let dir = tempfile::tempdir().unwrap();
    let canonical = fs::read_to_string(common::root().join("fleet.kdl")).unwrap();
    let mangled = mangle(&canonical, &mut Lcg(3));
    fs::write(dir.path().join("fleet.kdl"), &mangled).unwrap();

    let (code, stdout, stderr) = out(&fleetc(dir.path(), &["fmt", "--check"]));
    assert_eq!((code, stdout.as_str()), (1, "fleet.kdl\n"), "{stderr}");
    assert!(stderr.contains("run `fleetc fmt`"), "{stderr}");
    assert_eq!(fs::read_to_string(dir.path().join("fleet.kdl")).unwrap(), mangled, "--check wrote");

    let (code, stdout, stderr) = out(&fleetc(dir.path(), &["fmt"]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("formatted fleet.kdl"), "{stderr}");
    assert_eq!(fs::read_to_string(dir.path().join("fleet.kdl")).unwrap(), canonical);
    let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(leftovers, ["fleet.kdl"], "temporary file left behind");

    let (code, _, _) = out(&fleetc(dir.path(), &["fmt", "--check"]));
    assert_eq!(code, 0);
}

#[test]
fn quiet_and_verbose() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("fleet.kdl"), "a   1\n").unwrap();
    let (code, stdout, stderr) = out(&fleetc(dir.path(), &["fmt", "--check", "--verbose"]));
    assert_eq!(code, 1);
    assert_eq!(stdout, "fleet.kdl\n");
    assert!(stderr.contains("-a   1\n+a 1\n"), "--verbose shows the diff: {stderr}");
    let (code, stdout, stderr) = out(&fleetc(dir.path(), &["fmt", "--quiet"]));
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
    let (code, _, stderr) = out(&fleetc(dir.path(), &["fmt"]));
    assert_eq!(code, 0);
    assert!(stderr.contains("fleet.kdl is in the canonical layout"), "{stderr}");
}

#[test]
fn a_refused_or_invalid_file_is_left_alone_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    for (input, code) in
        [("n count= /* was 3 */ 2\n", "fleet::fmt::cannot-reprint"), ("n {\n", "fleet::syntax::invalid-kdl")]
    {
        fs::write(dir.path().join("fleet.kdl"), input).unwrap();
        let (exit, _, stderr) = out(&fleetc(dir.path(), &["fmt"]));
        assert_eq!(exit, 1, "{stderr}");
        assert!(stderr.lines().any(|l| l == code), "{stderr}");
        assert_eq!(fs::read_to_string(dir.path().join("fleet.kdl")).unwrap(), input);
    }
    let (exit, _, _) = out(&fleetc(dir.path(), &["fmt", "--fleet", "missing.kdl"]));
    assert_eq!(exit, 2);
}

#[cfg(unix)]
#[test]
fn fmt_keeps_permissions_and_writes_through_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.kdl");
    fs::write(&real, "a   1\n").unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("real.kdl", dir.path().join("fleet.kdl")).unwrap();
    let (code, _, stderr) = out(&fleetc(dir.path(), &["fmt"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(fs::symlink_metadata(dir.path().join("fleet.kdl")).unwrap().file_type().is_symlink());
    assert_eq!(fs::read_to_string(&real).unwrap(), "a 1\n");
    assert_eq!(fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
}

/// Pieces of KDL that the mutations below splice in: comments, slashdashes, strings with
/// escapes, raw and multi-line strings, type annotations, terminators, continuations.
const PIECES: &[&str] = &[
    " /* c */ ",
    "// c\n",
    " /-x ",
    "/-",
    "\n",
    "\n\n",
    ";",
    " \\\n ",
    " #\"r\\\"\"# ",
    " \"\"\"\n  m\n  \"\"\" ",
    " (t)1 ",
    " k=(t)\"v\" ",
    " 0x0A ",
    " {",
    "}",
    " { }",
    "\t",
    " \"a\\u{202e}b\" ",
    " /*/* n */*/",
    " =",
    "(",
    " #nan ",
    " -.x ",
    " \"\\\n  \" ",
];

/// Random splices into the reference fleet: whatever `kdl` accepts, fmt either formats with
/// the three properties or refuses with a diagnostic; it never panics.
#[test]
fn spliced_fleets_round_trip_or_are_refused() {
    let base = fs::read_to_string(common::root().join("fleet.kdl")).unwrap();
    let mut rng = Lcg(42);
    let (mut formatted, mut refused) = (0, 0);
    for i in 0..60 {
        let mut text = base.clone();
        for _ in 0..1 + rng.next(3) {
            let mut at = rng.next(text.len() as u64) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.insert_str(at, PIECES[rng.next(PIECES.len() as u64) as usize]);
        }
        if kdl::KdlDocument::parse_v2(&text).is_err() {
            continue;
        }
        match fmt::format(FileId(0), &text) {
            Ok(_) => {
                assert_round_trip(&format!("splice #{i}:\n{text}"), &text);
                formatted += 1;
            }
            Err(d) => {
                assert!(d.iter().all(|d| d.code.name == "fleet::fmt::cannot-reprint"), "splice #{i}: {d:?}\n{text}");
                refused += 1;
            }
        }
    }
    eprintln!("{formatted} splices formatted, {refused} refused");
    assert!(formatted >= 10, "only {formatted} valid splices formatted ({refused} refused)");
}
