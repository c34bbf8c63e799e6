//! A build on one thread and a build on several give the same bytes, the same diagnostics in
//! the same order and the same validation Report (`src/parallel.rs`, docs/performance.md
//! "Threads"). Each test compares a one-thread run with runs on more threads than the
//! work has parts and on a few; none measures time.

use crate::common;

use std::path::Path;

use fleetc::artifacts::ArtifactSet;
use fleetc::compile::{Compilation, FsLoader, compile_with};
use fleetc::diag::render::{Style, text};
use fleetc::emit::validate;

const COUNTS: [usize; 3] = [2, 3, 16];

fn compile_at(path: &Path, threads: usize) -> Compilation {
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    compile_with("fleet.kdl", &src, &FsLoader::new(path.parent().unwrap()), threads)
}

fn files(set: &Option<ArtifactSet>) -> Vec<(String, Vec<u8>)> {
    set.iter().flat_map(|s| s.iter().map(|(p, b)| (p.to_owned(), b.to_vec()))).collect()
}

fn same_compilation(path: &Path) {
    let one = compile_at(path, 1);
    let (one_files, one_diags) = (files(&one.artifacts), text(&one.diags, &one.sources, Style::PLAIN));
    for n in COUNTS {
        let many = compile_at(path, n);
        assert!(one_files == files(&many.artifacts), "{}: the files differ on {n} threads", path.display());
        assert_eq!(one_diags, text(&many.diags, &many.sources, Style::PLAIN), "{}: {n} threads", path.display());
    }
}

/// The reference fleet and every golden case (the failing ones too: their diagnostics in
/// order), on 1 and on several threads.
#[test]
fn every_golden_case_compiles_alike_on_any_thread_count() {
    same_compilation(&common::root().join("fleet.kdl"));
    let mut cases: Vec<_> = std::fs::read_dir(common::root().join("golden"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("fleet.kdl"))
        .filter(|p| p.is_file())
        .collect();
    cases.sort();
    assert!(cases.len() > 50, "the golden cases are missing: {}", cases.len());
    for case in cases {
        same_compilation(&case);
    }
}

/// A synthetic fleet of many clusters (Talos is emitted per cluster, the distinct documents
/// judged in chunks): the same files, and with many documents broken on purpose (an
/// unknown field in every node's Talos config), the same `schema-rejected` diagnostics in
/// the same order and the same Report.
#[test]
fn a_many_cluster_fleet_builds_and_is_judged_alike_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    fleetc::synth::write(dir.path(), 300).unwrap();
    let path = dir.path().join("fleet.kdl");
    same_compilation(&path);

    let c = compile_at(&path, 1);
    let (fleet, set) = (c.fleet.unwrap(), c.artifacts.unwrap());
    let mut broken = ArtifactSet::new();
    for (p, b) in set.iter() {
        let t = String::from_utf8(b.to_vec()).unwrap();
        let t =
            if p.starts_with("talos/") && p.contains("/nodes/") { t.replacen("hostname:", "hostnam:", 1) } else { t };
        broken.insert(p, t).unwrap();
    }
    let judged = |threads: usize| {
        let (diags, report) = validate::run_with(&fleet, broken.iter(), threads);
        (
            diags
                .iter()
                .map(|d| format!("{} {} {:?} {:?}", d.code.name, d.message, d.span, d.label))
                .collect::<Vec<_>>(),
            report,
        )
    };
    let (one, one_report) = judged(1);
    assert!(one.len() > 100, "the broken documents were not refused: {}", one.len());
    assert!(one_report.distinct < one_report.documents, "{one_report:?}");
    assert_eq!(validate::run(&fleet, broken.iter()).1, one_report);
    for n in COUNTS {
        let (many, report) = judged(n);
        assert!(one == many, "{n} threads: the diagnostics differ");
        assert_eq!(one_report, report, "{n} threads");
    }
}

/// Writing on several threads leaves the same tree and the same report as on one, cold and
/// then after a change (files written, removed, unchanged).
#[test]
fn writing_on_several_threads_leaves_the_same_tree() {
    let src = tempfile::tempdir().unwrap();
    fleetc::synth::write(src.path(), 60).unwrap();
    let set = compile_at(&src.path().join("fleet.kdl"), 1).artifacts.unwrap();
    let mut changed = ArtifactSet::new();
    for (i, (p, b)) in set.iter().enumerate() {
        match i % 7 {
            0 => {}
            1 => changed.insert(p, [b, b"# changed\n".as_slice()].concat()).unwrap(),
            _ => changed.insert(p, b.to_vec()).unwrap(),
        }
    }
    let tree = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_owned()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    let rel = e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                    out.push((rel, std::fs::read(e.path()).unwrap()));
                }
            }
        }
        out.sort();
        out
    };
    let one = tempfile::tempdir().unwrap();
    let first = (set.write_with(one.path(), 1).unwrap(), changed.write_with(one.path(), 1).unwrap());
    assert!(!first.0.written.is_empty() && !first.1.written.is_empty() && !first.1.removed.is_empty());
    for n in COUNTS {
        let many = tempfile::tempdir().unwrap();
        let cold = set.write_with(many.path(), n).unwrap();
        assert_eq!(cold, first.0, "cold, {n} threads");
        assert_eq!(changed.write_with(many.path(), n).unwrap(), first.1, "after a change, {n} threads");
        assert!(tree(one.path()) == tree(many.path()), "{n} threads: the trees differ");
    }
}
