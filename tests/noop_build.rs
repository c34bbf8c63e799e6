//! The no-op build (issue 20 item 2, `src/inputs.rs`): a build records its inputs in
//! `out/INPUTS.sha256` (listed in the manifest like every artifact); while they are unchanged,
//! `build` and `build --check` verify out/ against its manifest without compiling. A changed
//! input, a changed vendored file and another fleetc version each force a real build; an
//! edited, missing or extra file in out/ is still caught.

#![allow(clippy::disallowed_methods)] // tests run the real binary

use crate::common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const FAST: &str = "inputs unchanged: verified, not compiled";

fn fleetc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("fleetc runs")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn copy_tree(src: &Path, dst: &Path) {
    if !src.exists() {
        return;
    }
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap().flatten() {
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// A copy of the reference fleet, built once.
fn built() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = common::root();
    fs::copy(root.join("fleet.kdl"), dir.path().join("fleet.kdl")).unwrap();
    for d in ["vendor", "apps", "values", "patches"] {
        copy_tree(&root.join(d), &dir.path().join(d));
    }
    let o = fleetc(dir.path(), &["build"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(!err(&o).contains(FAST), "the first build compiles");
    dir
}

#[test]
fn the_record_is_an_artifact_and_a_second_build_only_verifies() {
    let dir = built();
    let manifest = fs::read_to_string(dir.path().join("out/MANIFEST.sha256")).unwrap();
    assert!(manifest.lines().any(|l| l.ends_with("  INPUTS.sha256")), "{manifest}");
    let record = fs::read_to_string(dir.path().join("out/INPUTS.sha256")).unwrap();
    for input in ["  fleet.kdl", "  vendor/cilium-1.20.2.yaml", "fleetc "] {
        assert!(record.contains(input), "{input} not recorded:\n{record}");
    }
    for args in [&["build"][..], &["build", "--check"]] {
        let o = fleetc(dir.path(), args);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        assert!(err(&o).contains(FAST), "{args:?}: {}", err(&o));
    }
    // And `diff` against that out/ sees no change (the record is part of the build).
    let o = fleetc(dir.path(), &["diff"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
}

#[test]
fn a_changed_input_forces_a_real_build() {
    // fleet.kdl itself (a comment: the output stays the same, the inputs do not).
    let dir = built();
    let kdl = dir.path().join("fleet.kdl");
    let text = fs::read_to_string(&kdl).unwrap();
    fs::write(&kdl, format!("// edited\n{text}")).unwrap();
    let o = fleetc(dir.path(), &["build"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(!err(&o).contains(FAST), "{}", err(&o));
    // That build recorded the new inputs: the next one only verifies again.
    assert!(err(&fleetc(dir.path(), &["build"])).contains(FAST));

    // A patch the fleet reads: the build compiles and its output changes.
    let dir = built();
    let patch = fs::read_dir(dir.path().join("patches")).unwrap().flatten().next().unwrap().path();
    let text = fs::read_to_string(&patch).unwrap();
    fs::write(&patch, format!("{text}\n# edited\n")).unwrap();
    let o = fleetc(dir.path(), &["build", "--check"]);
    assert!(!err(&o).contains(FAST), "{}", err(&o));
}

#[test]
fn a_changed_vendored_file_forces_a_real_build() {
    let dir = built();
    let vendored = dir.path().join("vendor/cilium-1.20.2.yaml");
    let text = fs::read_to_string(&vendored).unwrap();
    fs::write(&vendored, format!("{text}# edited\n")).unwrap();
    // The pinned sha256 no longer matches: only a real build can say so.
    let o = fleetc(dir.path(), &["build"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(!err(&o).contains(FAST), "{}", err(&o));
    let o = fleetc(dir.path(), &["build", "--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
}

#[test]
fn another_fleetc_version_forces_a_real_build() {
    let dir = built();
    let path = dir.path().join("out/INPUTS.sha256");
    let record = fs::read_to_string(&path).unwrap();
    let version = format!("fleetc {}", env!("CARGO_PKG_VERSION"));
    assert!(record.contains(&version), "{record}");
    // The record as an older fleetc would have written it, and its manifest line to match,
    // so that nothing but the version differs.
    let older = record.replace(&version, "fleetc 0.0.1");
    fs::write(&path, &older).unwrap();
    let manifest_path = dir.path().join("out/MANIFEST.sha256");
    let manifest = fs::read_to_string(&manifest_path).unwrap();
    let manifest =
        manifest.replace(&fleetc::digest::sha256_hex(record.as_bytes()), &fleetc::digest::sha256_hex(older.as_bytes()));
    fs::write(&manifest_path, manifest).unwrap();
    let o = fleetc(dir.path(), &["build"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(!err(&o).contains(FAST), "{}", err(&o));
    assert!(err(&o).contains("1 written"), "the record is rewritten: {}", err(&o));
    assert_eq!(fs::read_to_string(&path).unwrap(), record);
}

#[test]
fn an_edited_missing_or_extra_file_is_caught_without_compiling() {
    let dir = built();
    let o = dir.path().join("out");
    let node = o.join("talos/production/main/nodes/main-cp-1.yaml");
    let bytes = fs::read(&node).unwrap();
    type Step<'a> = Box<dyn Fn() + 'a>;
    let cases: [(&str, Step, Step); 4] = [
        ("stale", Box::new(|| fs::write(&node, b"edited\n").unwrap()), Box::new(|| fs::write(&node, &bytes).unwrap())),
        ("missing", Box::new(|| fs::remove_file(&node).unwrap()), Box::new(|| fs::write(&node, &bytes).unwrap())),
        (
            "extra",
            Box::new(|| fs::write(o.join("talos/stray.yaml"), b"x\n").unwrap()),
            Box::new(|| fs::remove_file(o.join("talos/stray.yaml")).unwrap()),
        ),
        // An edited file whose new hash was written into the manifest too.
        (
            "stale",
            Box::new(|| {
                let m = fs::read_to_string(o.join("MANIFEST.sha256")).unwrap();
                fs::write(&node, b"edited\n").unwrap();
                let m = m.replace(&fleetc::digest::sha256_hex(&bytes), &fleetc::digest::sha256_hex(b"edited\n"));
                fs::write(o.join("MANIFEST.sha256.orig"), fs::read(o.join("MANIFEST.sha256")).unwrap()).unwrap();
                fs::write(o.join("MANIFEST.sha256"), m).unwrap();
            }),
            Box::new(|| {
                fs::write(&node, &bytes).unwrap();
                fs::rename(o.join("MANIFEST.sha256.orig"), o.join("MANIFEST.sha256")).unwrap();
            }),
        ),
    ];
    for (what, break_it, mend) in &cases {
        break_it();
        let c = fleetc(dir.path(), &["build", "--check"]);
        assert_eq!(c.status.code(), Some(1), "{what}: {}{}", out(&c), err(&c));
        assert!(out(&c).contains(&format!("{what}: ")), "{what}: {}", out(&c));
        mend();
        let c = fleetc(dir.path(), &["build", "--check"]);
        assert_eq!(c.status.code(), Some(0), "{what} mended: {}{}", out(&c), err(&c));
        assert!(err(&c).contains(FAST), "{}", err(&c));
    }
    // `build` repairs what it finds by compiling.
    fs::write(&node, b"edited\n").unwrap();
    let b = fleetc(dir.path(), &["build"]);
    assert_eq!(b.status.code(), Some(0), "{}", err(&b));
    assert!(!err(&b).contains(FAST) && err(&b).contains("1 written"), "{}", err(&b));
    assert_eq!(fs::read(&node).unwrap(), bytes);
}

/// `--full` compiles even when the record matches: a fleetc built from changed sources at the
/// same version (CI) must not trust out/ (`.ci/run` uses it), and it still finds an edited
/// file, by comparing with a fresh build.
#[test]
fn full_compiles_although_the_inputs_are_unchanged() {
    let dir = built();
    for args in [&["build", "--full"][..], &["build", "--check", "--full"]] {
        let o = fleetc(dir.path(), args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
        assert!(!err(&o).contains(FAST), "{args:?} took the no-op path: {}", err(&o));
    }
    let readme = dir.path().join("out/schematics/isolated.yaml");
    let mut text = fs::read_to_string(&readme).unwrap();
    text.push_str("edited\n");
    fs::write(&readme, text).unwrap();
    let o = fleetc(dir.path(), &["build", "--check", "--full"]);
    assert_eq!(o.status.code(), Some(1), "an edited file is stale: {}", err(&o));
}
