//! Real-world patches (issue 27, deliverable 3; tests/corpus/README.md): every patch file of the
//! third-party corpus (talhelper and topf fleets from public repositories, outside the
//! repository: `FLEETC_CORPUS`, else `../shared/corpus` beside the checkout, else
//! /work/shared/corpus) is added as a cluster-level `patch` of the fixture fleet
//! (tests/corpus/fleet/fleet.kdl) and compiled in memory. fleetc's verdict is compared with
//! Talos machinery v1.13.9's, committed in tests/corpus/machinery-v1.13.tsv and re-judged by
//! the harness (oracles/corpus/check, run by oracles/run). A disagreement is fleetc accepting
//! what machinery refuses, or fleetc refusing, other than for an owned field or a rule that
//! cites an R-id, what machinery accepts. The test fails on a disagreement missing from
//! tests/corpus/known-disagreements.tsv, on an entry of that list that no longer disagrees, on
//! README figures that differ from the measured ones, and on an accepted share below
//! [`ACCEPTED_MIN_PERCENT`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fleetc::compile::{MapLoader, compile};
use fleetc::diag::{Diagnostic, Severity};
use sha2::{Digest, Sha256};

use crate::common;

/// The least share (in percent, rounded down) of the judged corpus files that fleetc must
/// accept: today's measured figure (197 of 216, 0 disagreements; issue 27's goal of 90 is
/// met). The 15 left are refusals that each undo fleet.kdl in the merged config
/// (tests/corpus/README.md lists them with the upstream evidence).
const ACCEPTED_MIN_PERCENT: usize = 91;

const FIXTURE: &str = include_str!("corpus/fleet/fleet.kdl");
const MACHINERY: &str = include_str!("corpus/machinery-v1.13.tsv");
const KNOWN: &str = include_str!("corpus/known-disagreements.tsv");
/// The lines of the fixture a corpus patch is added to, per level: the cluster, its control
/// plane, its worker pool.
const CLUSTER_LINE: &str = "        cluster \"main\" {\n";
const CONTROL_PLANE_LINE: &str = "            control-plane count=3\n";
const POOL_LINE: &str = "            pool \"workers\" count=1\n";
/// Where the patch is in the in-memory fleet.
const PATCH_PATH: &str = "patches/corpus.yaml";

fn corpus_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FLEETC_CORPUS") {
        return PathBuf::from(d);
    }
    let beside = common::root().join("../shared/corpus");
    if beside.join("MANIFEST.tsv").is_file() {
        return beside;
    }
    PathBuf::from("/work/shared/corpus")
}

/// A line of the machinery TSV (written by oracles/corpus/check).
struct Judged {
    path: String,
    /// cluster | control-plane | worker: where the corpus fleet applies it.
    level: String,
    kind: String,
    sha256: String,
    verdict: String,
    message: String,
}

fn machinery() -> Vec<Judged> {
    MACHINERY
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.splitn(6, '\t').collect();
            assert_eq!(f.len(), 6, "machinery-v1.13.tsv: a line without six columns: {l}");
            Judged {
                path: f[0].into(),
                level: f[1].into(),
                kind: f[2].into(),
                sha256: f[3].into(),
                verdict: f[4].into(),
                message: f[5].into(),
            }
        })
        .collect()
}

/// talhelper's `${NAME}` substitution as oracles/talos/v1.13/corpus/main.go does it (from the
/// fleet's talenv.yaml; `$$` is a literal `$`); the TSV's sha256 proves both sides judge the
/// same bytes.
fn substitute(corpus: &Path, rel: &str, text: &str) -> String {
    // The talenv.yaml nearest above the file, inside its repository's folder.
    let top = corpus.join(rel.split('/').take(2).collect::<Vec<_>>().join("/"));
    let mut dir = corpus.join(rel).parent().unwrap().to_path_buf();
    let env_text = loop {
        if let Ok(t) = std::fs::read_to_string(dir.join("talenv.yaml")) {
            break t;
        }
        if dir == top || !dir.pop() {
            break String::new();
        }
    };
    let mut env = BTreeMap::new();
    for l in env_text.lines().map(str::trim) {
        if l.is_empty() || l.starts_with('#') || l == "---" {
            continue;
        }
        if let Some((k, v)) = l.split_once(':') {
            let v = v.trim();
            let v = match v.as_bytes() {
                [q @ (b'"' | b'\''), .., e] if q == e && v.len() >= 2 => &v[1..v.len() - 1],
                _ => v,
            };
            env.insert(k.trim().to_owned(), v.to_owned());
        }
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if let Some(r) = rest.strip_prefix("$$") {
            out.push('$');
            rest = r;
        } else if let Some(end) = rest.strip_prefix("${").and_then(|r| r.find('}')).map(|e| e + 2)
            && let Some(v) = env.get(&rest[2..end])
        {
            out.push_str(v);
            rest = &rest[end + 1..];
        } else {
            out.push('$');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fleetc {
    Accepted,
    /// Refused only for owned fields or rules that cite an R-id.
    RefusedRule,
    /// Refused for another reason (schema, decoding, …).
    Refused,
}

/// A refusal for an owned field or a fleetc rule: the code is an owned-field code, or the
/// code or the diagnostic's help cites a rule of the domain (R1–R29).
fn is_rule(d: &Diagnostic) -> bool {
    let cites = |s: &str| {
        s.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w.len() > 1 && w.starts_with('R') && w[1..].chars().all(|c| c.is_ascii_digit()))
    };
    d.code.name.contains("owned")
        || d.code.rule.is_some_and(|r| r.starts_with('R'))
        || d.help.as_deref().is_some_and(cites)
        || d.code.help.is_some_and(cites)
}

/// The fixture with the corpus patch added at `level`.
fn fleet_with_patch(level: &str) -> String {
    let (line, with) = match level {
        "cluster" => (CLUSTER_LINE, format!("{CLUSTER_LINE}            patch \"{PATCH_PATH}\"\n")),
        "control-plane" => (
            CONTROL_PLANE_LINE,
            format!(
                "{} {{\n                patch \"{PATCH_PATH}\"\n            }}\n",
                CONTROL_PLANE_LINE.trim_end_matches('\n')
            ),
        ),
        "worker" => (
            POOL_LINE,
            format!(
                "{} {{\n                patch \"{PATCH_PATH}\"\n            }}\n",
                POOL_LINE.trim_end_matches('\n')
            ),
        ),
        other => panic!("machinery-v1.13.tsv: unknown level {other}"),
    };
    assert!(FIXTURE.contains(line), "the fixture has no line {line:?}");
    FIXTURE.replacen(line, &with, 1)
}

fn judge(text: &str, level: &str) -> (Fleetc, String) {
    let fleet = fleet_with_patch(level);
    let mut loader = MapLoader::default();
    loader.files.insert(PATCH_PATH.to_owned(), text.to_owned());
    let c = compile("fleet.kdl", &fleet, &loader);
    let errors: Vec<&Diagnostic> = c.diags.iter().filter(|d| d.severity == Severity::Error).collect();
    let Some(first) = errors.iter().find(|d| !is_rule(d)).or(errors.first()) else {
        return (Fleetc::Accepted, String::new());
    };
    let what = format!("{}: {}", first.code.name, first.message.replace(['\n', '\t'], " "));
    if errors.iter().all(|d| is_rule(d)) { (Fleetc::RefusedRule, what) } else { (Fleetc::Refused, what) }
}

/// The figures block of tests/corpus/README.md.
fn figures(f: &BTreeMap<&str, usize>) -> String {
    let mut s = String::from("| figure | files |\n|---|---|\n");
    for (k, label) in [
        ("files", "corpus files judged (patches, substituted included)"),
        ("templated", "templated files, not judged (counted apart)"),
        ("both-accept", "accepted by both"),
        ("both-refuse", "refused by both"),
        ("rule-only", "refused by fleetc only, for an owned field or a rule (R-id)"),
        ("disagree", "disagreements"),
        ("disagree-accepts", "… fleetc accepts, machinery refuses"),
        ("disagree-refuses", "… fleetc refuses, machinery accepts"),
        ("machinery-accept", "accepted by machinery"),
        ("fleetc-accept", "accepted by fleetc"),
    ] {
        s.push_str(&format!("| {label} | {} |\n", f[k]));
    }
    s
}

#[test]
fn corpus_patches_fleetc_agrees_with_talos_machinery() {
    let corpus = corpus_dir();
    assert!(
        corpus.join("MANIFEST.tsv").is_file(),
        "the corpus is not at {} (set FLEETC_CORPUS to the folder holding MANIFEST.tsv, talhelper/ and topf/)",
        corpus.display()
    );
    let known: BTreeMap<&str, &str> = KNOWN
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split_once('\t').unwrap_or((l, "")))
        .collect();
    let mut f: BTreeMap<&str, usize> = BTreeMap::new();
    for k in [
        "files",
        "templated",
        "both-accept",
        "both-refuse",
        "rule-only",
        "disagree",
        "disagree-accepts",
        "disagree-refuses",
        "machinery-accept",
        "fleetc-accept",
    ] {
        f.insert(k, 0);
    }
    let mut disagreements = BTreeMap::new();
    let mut report = String::new();
    // FLEETC_CORPUS_ALL_CLUSTER=1: every patch at cluster level, as issue 27 first measured it
    // (fleetc's verdicts only: machinery judged each file at its own level). Prints, asserts nothing.
    let all_cluster = std::env::var_os("FLEETC_CORPUS_ALL_CLUSTER").is_some();
    for j in machinery() {
        if j.verdict == "templated" {
            *f.get_mut("templated").unwrap() += 1;
            continue;
        }
        let bytes = std::fs::read(corpus.join(&j.path)).unwrap_or_else(|e| panic!("{}: {e}", j.path));
        let text = String::from_utf8(bytes).unwrap_or_else(|_| panic!("{}: not UTF-8", j.path));
        let text = if j.kind == "substituted" { substitute(&corpus, &j.path, &text) } else { text };
        let sum: String = Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            sum, j.sha256,
            "{}: the bytes judged here are not the ones machinery judged (the corpus changed, or the substitution differs)",
            j.path
        );
        *f.get_mut("files").unwrap() += 1;
        let accept = j.verdict == "accept";
        let (verdict, why) = judge(&text, if all_cluster { "cluster" } else { &j.level });
        if accept {
            *f.get_mut("machinery-accept").unwrap() += 1;
        }
        if verdict == Fleetc::Accepted {
            *f.get_mut("fleetc-accept").unwrap() += 1;
        }
        let key = match (accept, verdict) {
            (true, Fleetc::Accepted) => "both-accept",
            (false, Fleetc::Refused | Fleetc::RefusedRule) => "both-refuse",
            (true, Fleetc::RefusedRule) => "rule-only",
            (false, Fleetc::Accepted) => "disagree-accepts",
            (true, Fleetc::Refused) => "disagree-refuses",
        };
        *f.get_mut(key).unwrap() += 1;
        report.push_str(&format!(
            "{}\t{}\t{}\t{key}\t{why}\t(machinery: {}: {})\n",
            j.path, j.level, j.kind, j.verdict, j.message
        ));
        if key.starts_with("disagree") {
            *f.get_mut("disagree").unwrap() += 1;
            disagreements.insert(j.path.clone(), format!("{key}: {why} (machinery: {} {})", j.verdict, j.message));
        }
    }
    let table = figures(&f);
    println!("{report}\n{table}");
    if all_cluster {
        return;
    }
    let mut problems = Vec::new();
    for (p, why) in &disagreements {
        if !known.contains_key(p.as_str()) {
            problems.push(format!("a new disagreement: {p}: {why}"));
        }
    }
    for p in known.keys() {
        if !disagreements.contains_key(*p) {
            problems.push(format!("{p} no longer disagrees: remove it from tests/corpus/known-disagreements.tsv"));
        }
    }
    let readme = std::fs::read_to_string(common::root().join("tests/corpus/README.md")).unwrap();
    if !readme.contains(&table) {
        problems
            .push(format!("tests/corpus/README.md's figures are not the measured ones; the measured table:\n{table}"));
    }
    let percent = f["fleetc-accept"] * 100 / f["files"].max(1);
    if percent < ACCEPTED_MIN_PERCENT {
        problems.push(format!(
            "fleetc accepts {percent}% of the judged corpus files, below ACCEPTED_MIN_PERCENT ({ACCEPTED_MIN_PERCENT}%)"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_substitution_is_talhelpers_envsubst() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("talhelper/o__r/main");
    std::fs::create_dir_all(repo.join("patches")).unwrap();
    std::fs::write(repo.join("talenv.yaml"), "---\n# c\nversion: \"v1\"\nother: x\n").unwrap();
    let got = substitute(
        dir.path(),
        "talhelper/o__r/main/patches/p.yaml",
        "a: ${version}/${other}\nb: \"$$patch\"\nc: ${missing} $x\n",
    );
    assert_eq!(got, "a: v1/x\nb: \"$patch\"\nc: ${missing} $x\n");
}
