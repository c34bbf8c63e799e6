//! `fleetc import topf` (issue 33): the fixtures `tests/import/topf-<case>/input/` imported and
//! compared with their goldens (`expected/`, and `check.txt`, what `fleetc check` says of the
//! result), the refusals (one error with a span into the file, nothing written), the
//! byte-identical second import, and every topf fleet of the corpus (tests/import/README.md,
//! figures in `corpus-topf.tsv`). `UPDATE_GOLDEN=1` rewrites `expected/`, `check.txt` and
//! `corpus-topf.tsv`; review the diff.
#![allow(clippy::disallowed_methods)] // runs the real binary

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fleetc::diag::Severity;
use fleetc::import::report::Kind;
use fleetc::import::{ImportError, topf};

use crate::import::{LIMITS, cases, check, cites_rule, compare_case, corpus_dir, fill, read_tree, update};

/// The feature classes the corpus shows: several nodes with per-node data, templates and
/// patch folders (`all/`, the roles', `node/<host>/`); schematics by file and by ID.
const CASES: &[&str] = &["topf-multi-node", "topf-schematics"];

fn import_case(case: &str) -> BTreeMap<String, String> {
    topf::import(&cases().join(case).join("input/topf.yaml"), &Default::default())
        .unwrap_or_else(|e| panic!("{case}: the import failed: {e:?}"))
        .files
}

#[test]
fn every_topf_feature_class_imports_as_its_golden_and_checks_as_recorded() {
    let mut failures = Vec::new();
    for case in CASES {
        compare_case(case, &import_case(case), &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn templates_are_rendered_per_node_and_what_fleet_kdl_models_is_taken_out() {
    let files = import_case("topf-multi-node");
    let kdl = &files["fleet.kdl"];
    // The install disk, the MAC and the VIP come out of the rendered patches.
    assert!(kdl.contains("install-disk serial=\"S6PNNS0T500111\""), "{kdl}");
    assert!(kdl.contains("mac \"3c:ec:ef:10:00:11\""), "{kdl}");
    assert!(kdl.contains("endpoint address=\"10.20.0.10\""), "{kdl}");
    assert!(kdl.contains("bond \"bond0\" mode=\"active-backup\" {\n                        links \"uplink\"\n                        address \"10.20.0.21/24\"\n                        route gateway=\"10.20.0.1\""), "{kdl}");
    assert!(kdl.contains("nameservers \"10.20.0.1\""), "{kdl}");
    assert!(!files.contains_key("patches/all/03-bond.yaml"), "the bond is fleet.kdl's");
    assert!(
        files["patches/all/11-network.yaml"].contains("kind: ResolverConfig"),
        "the deprecated field's replacement"
    );
    assert!(!files.contains_key("patches/all/01-hostname.yaml"), "fleetc writes the HostnameConfig");
    assert!(!files.contains_key("patches/control-plane/01-vip.yaml"), "fleetc writes the endpoint's VIP");
    // A patch every node renders alike is written once, on its level; one that differs, per node.
    assert!(files["patches/all/00-install.yaml"].contains("wipe: false"));
    assert!(files.contains_key("patches/all/02-link-alias.w-1.yaml"));
    assert!(kdl.contains("patch \"patches/worker/01-sysctls.yaml\""));
    assert_eq!(files["patches/all/10-kubelet.yaml"], read("topf-multi-node/input/all/10-kubelet.yaml"));
    // What cannot be rendered, and a folder of no node, are reported.
    let report = &files["IMPORT-REPORT.md"];
    assert!(report.contains("`patch all/20-registry.yaml.tpl`") && report.contains("`b64enc`"), "{report}");
    assert!(report.contains("`node/lab-old-1/`"), "{report}");
    assert!(report.contains("fleetc secrets import lab/lab talos-secrets"), "{report}");
}

#[test]
fn a_topf_fleet_whose_every_part_fleet_kdl_models_checks_clean() {
    // topf-multi-node's link, bond, VIP, install disks and MACs are all in fleet.kdl.
    let (lines, errors) = check(&import_case("topf-multi-node"));
    assert!(errors.is_empty(), "{}", lines.join("\n"));
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(cases().join(rel)).unwrap()
}

#[test]
fn a_second_topf_import_is_byte_identical_and_never_overwrites() {
    let config = cases().join("topf-multi-node/input/topf.yaml");
    let a = topf::import(&config, &Default::default()).unwrap().files;
    assert_eq!(a, topf::import(&config, &Default::default()).unwrap().files);
    let out = tempfile::tempdir().unwrap();
    let run = |dir: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
            .args(["import", "topf"])
            .arg(&config)
            .arg("--out")
            .arg(dir)
            .output()
            .unwrap()
    };
    let (one, two) = (out.path().join("one"), out.path().join("two"));
    assert!(run(&one).status.success());
    assert!(run(&two).status.success());
    assert_eq!(read_tree(&one), read_tree(&two));
    assert_eq!(read_tree(&one), a, "what is written is what the import returns");
    let again = run(&one);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));
}

/// Runs the binary on `files` (the first is the config) and returns (exit code, stderr, files written).
fn refused(files: &[(&str, &str)]) -> (Option<i32>, String, usize) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = dir.path().join("out");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .args(["--color", "never", "import", "topf"])
        .arg(dir.path().join(files[0].0))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let written = if out.exists() { read_tree(&out).len() } else { 0 };
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), written)
}

fn flat(err: &str) -> String {
    err.split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ")
}

#[test]
fn a_file_that_is_not_a_topf_config_is_one_error_with_a_span_and_nothing_is_written() {
    let talconfig = "clusterName: x\nendpoint: https://10.0.0.10:6443\nnodes:\n  - hostname: cp-1\n";
    // A talconfig has `nodes` but no `clusterEndpoint`: it is named as talhelper's.
    let (code, err, written) =
        refused(&[("talconfig.yaml", "# talhelper\nclusterName: x\nendpoint: https://10.0.0.10:6443\n")]);
    assert_eq!((code, written), (Some(1), 0), "{err}");
    assert_eq!(err.matches("fleet::import::").count(), 1, "one error:\n{err}");
    assert!(err.contains("fleet::import::not-topf") && err.contains("talconfig.yaml:2:1"), "{err}");
    assert!(flat(&err).contains("it is a talhelper config"), "{err}");
    let (code, err, written) = refused(&[("topf.yaml", "clusterName: x\nclusterEndpoint: [\n")]);
    assert_eq!((code, written), (Some(1), 0), "{err}");
    assert!(err.contains("is not YAML") && err.contains("topf.yaml:"), "{err}");
    let _ = talconfig;
}

#[test]
fn a_broken_topf_config_is_refused_field_by_field_and_nothing_is_written() {
    let text = "clusterName: x\nclusterEndpoint: https://10.0.0.10:6443\nkubernetesVersion: 1.36.2\nnodes:\n  - host: cp-1\n    ip: 10.0.0.11\n  - host: w-1\n    role: master\n  - role: worker\n    ip: 10.0.0.300\n";
    let (code, err, written) = refused(&[("topf.yaml", text)]);
    assert_eq!((code, written), (Some(1), 0), "{err}");
    let f = flat(&err);
    assert!(f.contains("a node has no `role`") && err.contains("topf.yaml:5:5"), "{err}");
    assert!(f.contains("`master` is not a role") && err.contains("topf.yaml:8:11"), "{err}");
    assert!(f.contains("a node has no `host`") && err.contains("topf.yaml:9:5"), "{err}");
    assert!(f.contains("`10.0.0.300` is not an IP address") && err.contains("topf.yaml:10:9"), "{err}");
    assert_eq!(err.matches("fleet::import::invalid").count(), 4, "all at once:\n{err}");
}

#[test]
fn a_broken_patch_or_a_missing_schematic_is_refused_in_its_file() {
    let text = "clusterName: x\nclusterEndpoint: https://10.0.0.10:6443\nkubernetesVersion: 1.36.2\nnodes:\n  - host: cp-1\n    ip: 10.0.0.11\n    role: control-plane\n    schematicId: \"@schematic.yaml\"\n";
    let (code, err, written) = refused(&[("topf.yaml", text)]);
    assert_eq!((code, written), (Some(1), 0), "{err}");
    assert!(err.contains("fleet::import::file-unreadable") && err.contains("topf.yaml:8:18"), "{err}");
    let text = "clusterName: x\nclusterEndpoint: https://10.0.0.10:6443\nkubernetesVersion: 1.36.2\nnodes:\n  - host: cp-1\n    ip: 10.0.0.11\n    role: control-plane\n";
    let (code, err, written) =
        refused(&[("topf.yaml", text), ("all/01-json.yaml", "- op: add\n  path: /machine/x\n  value: 1\n")]);
    assert_eq!((code, written), (Some(1), 0), "{err}");
    assert!(flat(&err).contains("is a JSON patch") && err.contains("all/01-json.yaml:1:1"), "{err}");
}

/// The corpus's topf configs that are refused, and why (a listed reason, not a bug).
const REFUSED: &[(&str, &str, &str)] = &[(
    "onedr0p__cluster-template",
    "fleet::import::not-topf",
    "topf.yaml.j2 is a makejinja template of a topf.yaml, not one: rendered first, its output imports",
)];

#[test]
fn every_corpus_topf_fleet_imports_twice_alike_and_checks_only_as_its_report_says() {
    let corpus = corpus_dir().join("topf");
    if !corpus.is_dir() {
        println!("SKIPPED: no topf corpus at {} (set FLEETC_CORPUS): nothing was checked", corpus.display());
        return;
    }
    let mut configs: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let dir = e.path();
            let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
                .ok()?
                .flatten()
                .map(|f| f.path())
                .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("topf.yaml")))
                .collect();
            found.sort();
            found.into_iter().next()
        })
        .collect();
    configs.sort();
    assert!(configs.len() >= 10, "{} topf configs in {}", configs.len(), corpus.display());
    let mut rows = vec![
        "# fleet\tverdict\terror codes after filling the MAC placeholders (placeholder | rule: R-id | limit)"
            .to_owned(),
    ];
    let mut other = Vec::new();
    let (mut imported, mut refused_n) = (0, 0);
    for c in &configs {
        let repo = c.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        match topf::import(c, &Default::default()) {
            Err(ImportError::Problems(_, diags)) => {
                refused_n += 1;
                let codes: Vec<&str> =
                    diags.iter().filter(|d| d.severity == Severity::Error).map(|d| d.code.name).collect();
                let listed = REFUSED.iter().find(|(r, _, _)| *r == repo);
                match listed {
                    Some((_, code, _)) if codes.len() == 1 && codes[0] == *code => {}
                    _ => other.push(format!("{repo}: refused with {codes:?}, which REFUSED does not list")),
                }
                rows.push(format!("{repo}\trefused\t{}", codes.join(" ")));
            }
            Err(ImportError::Io(e)) => {
                other.push(format!("{repo}: {e}"));
            }
            Ok(i) => {
                imported += 1;
                let mut files = i.files;
                assert_eq!(
                    topf::import(c, &Default::default()).unwrap().files,
                    files,
                    "{repo}: a second import differs"
                );
                let placeholders = i.reports[0].count(Kind::Placeholder);
                fill(&mut files);
                let (_, errors) = check(&files);
                let mut kinds: Vec<String> = Vec::new();
                for d in &errors {
                    let text =
                        d.span.and_then(|s| files.get("fleet.kdl").and_then(|k| k.get(s.start..s.end()))).unwrap_or("");
                    let kind = if text.contains("CHANGE-ME") {
                        if placeholders == 0 {
                            other.push(format!("{repo}: a CHANGE-ME the report does not list: {}", d.message));
                        }
                        "placeholder"
                    } else if cites_rule(d) {
                        "rule"
                    } else if LIMITS.contains(&d.code.name) {
                        "limit"
                    } else {
                        other.push(format!("{repo}: {}: {}", d.code.name, d.message));
                        "other"
                    };
                    let k = format!("{}({kind})", d.code.name);
                    if !kinds.contains(&k) {
                        kinds.push(k);
                    }
                }
                kinds.sort();
                let verdict = if errors.is_empty() { "clean" } else { "checked" };
                rows.push(format!("{repo}\t{verdict}\t{}", kinds.join(" ")));
            }
        }
    }
    let summary = format!("{} topf configs: {imported} imported, {refused_n} refused", configs.len());
    rows.push(format!("# {summary}"));
    let tsv = rows.join("\n") + "\n";
    println!("{tsv}");
    assert!(
        other.is_empty(),
        "errors that are neither a placeholder, a rule nor a known limit, or an unlisted refusal (an import bug):\n{}",
        other.join("\n")
    );
    let path = cases().join("corpus-topf.tsv");
    if update() {
        std::fs::write(&path, &tsv).unwrap();
    } else {
        assert_eq!(
            std::fs::read_to_string(&path).unwrap_or_default(),
            tsv,
            "tests/import/corpus-topf.tsv differs (UPDATE_GOLDEN=1)"
        );
    }
    let readme = std::fs::read_to_string(cases().join("README.md")).unwrap_or_default();
    assert!(readme.contains(&summary), "tests/import/README.md must state the figures: {summary}");
}

#[test]
fn a_truncated_topf_config_never_panics() {
    let corpus = corpus_dir().join("topf");
    if !corpus.is_dir() {
        println!("SKIPPED: no topf corpus at {}: nothing was checked", corpus.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(&corpus).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("topf.yaml")) else { continue };
        for i in 1..12 {
            let mut cut = text.len() * i / 12;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let f = dir.path().join(format!("{n}.yaml"));
            n += 1;
            std::fs::write(&f, &text[..cut]).unwrap();
            let r = std::panic::catch_unwind(|| topf::import(&f, &Default::default()).map(|_| ()));
            assert!(r.is_ok(), "the import panicked on a cut of {}", e.path().display());
        }
    }
    assert!(n > 80, "{n} variants");
    // Every template of the corpus, cut at a dozen places, renders or is refused, never panics.
    let root = serde_json::json!({"Node": {"Host": "h", "IP": "10.0.0.1", "Role": "worker", "Data": {}}, "Data": {}});
    let mut stack = vec![corpus];
    let mut templates = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if !p.to_string_lossy().contains(".tpl") {
                continue;
            }
            templates += 1;
            let text = std::fs::read_to_string(&p).unwrap();
            for i in 1..=12 {
                let mut cut = text.len() * i / 12;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                let r = std::panic::catch_unwind(|| fleetc::import::gotmpl::render(&text[..cut], &root).map(|_| ()));
                assert!(r.is_ok(), "rendering panicked on a cut of {}", p.display());
            }
        }
    }
    assert!(templates > 20, "{templates} templates");
}
