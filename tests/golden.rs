//! Golden cases: `golden/<case>/fleet.kdl` with either an expected `out/` tree (the case
//! builds) or an expected `diagnostics.txt` (the case fails; the rendered diagnostics,
//! plain, 80 columns). A case with an `upgrade-base.kdl` also checks the version changes from
//! it to fleet.kdl, as `fleetc check --base` does. Compared byte for byte. `UPDATE_GOLDEN=1
//! cargo test --test integration golden::golden_cases` rewrites the expectations; review them
//! with `git diff` before committing. A case is named by what it tests (golden/README.md,
//! checked below).

use crate::common;

use std::fs;
use std::path::Path;

use fleetc::diag::render::{Style, text};

fn update() -> bool {
    std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1")
}

fn run_case(dir: &Path) -> Result<(), String> {
    let fleet = dir.join("fleet.kdl");
    let mut c = common::compile_file(&fleet);
    // A case with an `upgrade-base.kdl` is a `check --base` case: that file stands for the
    // fleet at the base revision, and the version changes since are checked (R26, F1).
    let base = dir.join("upgrade-base.kdl");
    if base.exists() {
        let old = common::compile_file(&base).fleet.expect("upgrade-base.kdl resolves");
        if let Some(new) = &c.fleet {
            fleetc::check::check_upgrade_path(&old, new, &mut c.diags);
        }
    }
    let rendered = text(&c.diags, &c.sources, Style::PLAIN);
    let expect_diags = dir.join("diagnostics.txt");
    let out = dir.join("out");
    match c.artifacts {
        Some(set) if !c.diags.has_errors() => {
            // A fleet that builds with warnings has both `out/` and `diagnostics.txt`.
            if !update() && (expect_diags.exists() || !c.diags.is_empty()) {
                let expected = fs::read_to_string(&expect_diags).unwrap_or_default();
                if expected != rendered {
                    return Err(format!("diagnostics differ; expected:\n{expected}\ngot:\n{rendered}"));
                }
            }
            if update() {
                let _ = fs::remove_file(&expect_diags);
                if out.exists() {
                    fs::remove_dir_all(&out).map_err(|e| e.to_string())?;
                }
                // Written by `fleetc build`, as a user's build writes it: with its inputs record
                // (out/INPUTS.sha256), which CI's `build --check --full` compares too.
                #[allow(clippy::disallowed_methods)] // the update runs the real binary
                let built = std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
                    .args(["build", "--full", "--quiet", "--fleet"])
                    .arg(&fleet)
                    .output()
                    .map_err(|e| e.to_string())?;
                if !built.status.success() {
                    return Err(format!("fleetc build failed: {}", String::from_utf8_lossy(&built.stderr)));
                }
                drop(set);
                if !c.diags.is_empty() {
                    fs::write(&expect_diags, &rendered).map_err(|e| e.to_string())?;
                }
                return Ok(());
            }
            let r = set.check(&out).map_err(|e| e.to_string())?;
            if !r.is_fresh() {
                let mut msg = String::from("output differs from golden:\n");
                let on_disk = fleetc::artifacts::ArtifactSet::read_dir(&out).map_err(|e| e.to_string())?;
                for ch in fleetc::review::files::changes(&on_disk, &set) {
                    msg.push_str(&fleetc::review::files::unified(&ch));
                }
                msg.push_str(&format!("{r:?}"));
                return Err(msg);
            }
            Ok(())
        }
        _ => {
            if update() {
                if out.exists() {
                    fs::remove_dir_all(&out).map_err(|e| e.to_string())?;
                }
                fs::write(&expect_diags, &rendered).map_err(|e| e.to_string())?;
                return Ok(());
            }
            let expected = fs::read_to_string(&expect_diags)
                .map_err(|_| format!("the fleet fails and there is no diagnostics.txt; got:\n{rendered}"))?;
            if expected != rendered {
                let diff = similar::TextDiff::from_lines(&expected, &rendered)
                    .unified_diff()
                    .header("expected", "actual")
                    .to_string();
                return Err(format!("diagnostics differ:\n{diff}"));
            }
            Ok(())
        }
    }
}

#[test]
fn golden_cases() {
    let mut cases: Vec<_> = fs::read_dir(common::root().join("golden"))
        .expect("golden/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("fleet.kdl").exists())
        // A case with a `base.kdl` is a diff case (tests/diff_golden.rs).
        .filter(|p| !p.join("base.kdl").exists())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no golden cases found");
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = run_case(case) {
            failures.push(format!("── {} ──\n{e}", case.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(failures.is_empty(), "{} of {} golden cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    eprintln!("{} golden cases passed", cases.len());
}

/// Every diagnostic code is shown failing by at least one golden case (only the internal
/// error, which no input should trigger, is exempt).
#[test]
fn every_code_has_a_failing_golden_case() {
    let mut rendered = String::new();
    for entry in fs::read_dir(common::root().join("golden")).unwrap().flatten() {
        if let Ok(t) = fs::read_to_string(entry.path().join("diagnostics.txt")) {
            rendered.push_str(&t);
        }
    }
    // `capi::multidoc-patch` warns about Talos document kinds that no document source emits
    // yet (docs/capi.md, "Known limitations"); its disposition table has a unit test.
    // `versions::talos-newer-than-table` needs a Talos minor whose schema is in schemas/ but
    // that has no row in versions/talos.kdl; every schema fleetc carries (1.12–1.14) has its
    // row, so no fleet.kdl can show it: src/check/versions.rs tests it on the table as it was
    // before 1.14's row, and `golden/versions-talos-unsupported` shows the refusal without a schema.
    // `versions::talos-prerelease` needs a `prerelease=#true` row; while the table has none
    // (Talos 1.15 is blocked on the module proxy, docs/talos.md "Release day") no fleet.kdl
    // can show it and src/check/versions.rs tests it on a fixture row. Once a row has the
    // flag, its golden (release-day step 7) is required again.
    // `import::*` are raised by `fleetc import` on a foreign file, never on a fleet.kdl: each
    // has its test with a span into that file in tests/import.rs (topf: tests/import_topf.rs).
    let prerelease_row = fleetc::upstream::talos::table().talos.iter().any(|r| r.prerelease);
    let mut exempt = vec![
        fleetc::diag::codes::IMPORT_NOT_TALHELPER.name,
        fleetc::diag::codes::IMPORT_INVALID.name,
        fleetc::diag::codes::IMPORT_UNSET_VARIABLE.name,
        fleetc::diag::codes::IMPORT_FILE_UNREADABLE.name,
        fleetc::diag::codes::IMPORT_NOT_TOPF.name,
        fleetc::diag::codes::INTERNAL.name,
        fleetc::diag::codes::CAPI_MULTIDOC_PATCH.name,
        fleetc::diag::codes::TALOS_NEWER_THAN_TABLE.name,
    ];
    if !prerelease_row {
        exempt.push(fleetc::diag::codes::TALOS_PRERELEASE.name);
    }
    let missing: Vec<&str> = fleetc::diag::codes::ALL
        .iter()
        .map(|c| c.name)
        .filter(|n| !exempt.contains(n) && !rendered.lines().any(|l| l == *n))
        .collect();
    assert!(missing.is_empty(), "codes without a failing golden case: {missing:?}");
}

/// Every case is named by what it tests (golden/README.md): a failing case by the code it
/// states in `cause` (`fleet::<family>::<what>` → `<family>-<what>`, plus a suffix where
/// several cases share the code), a building case never by a stage or by where it came from,
/// and the cases of one command by that command. So `ls golden | grep <what>` finds the case of
/// a code.
#[test]
fn every_golden_case_is_named_by_what_it_tests() {
    // The commands whose cases are named by the command (`diff-`, `fmt-`, `graph-` cases
    // hold no `cause` and no `out/`; the `upgrade-` cases are `check --base` cases).
    const COMMANDS: [&str; 4] = ["diff-", "fmt-", "graph-", "upgrade-"];
    // Prefixes that name a stage of the compiler or a case's provenance, not what it shows.
    const NOT_A_FEATURE: [&str; 5] = ["check-", "model-", "first-", "emit-", "syntax-"];
    let mut wrong = Vec::new();
    let mut names = 0;
    for entry in fs::read_dir(common::root().join("golden")).unwrap().flatten() {
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        names += 1;
        let command = COMMANDS.iter().any(|p| name.starts_with(p));
        if let Ok(cause) = fs::read_to_string(dir.join("cause")) {
            let code = cause.split_whitespace().next().unwrap_or_default();
            let Some((family, what)) = code.strip_prefix("fleet::").and_then(|c| c.split_once("::")) else {
                wrong.push(format!("{name}: `cause` does not start with a code (`{code}`)"));
                continue;
            };
            let stem = format!("{family}-{what}");
            if !name.starts_with(&format!("{family}-")) {
                wrong.push(format!("{name}: fails with `{code}` first, so its name starts with `{family}-`"));
            } else if !command && name != stem && !name.starts_with(&format!("{stem}-")) {
                wrong.push(format!("{name}: fails with `{code}` first, so its name is `{stem}` or `{stem}-<suffix>`"));
            }
        } else if dir.join("out").is_dir() {
            if let Some(p) = NOT_A_FEATURE.iter().find(|p| name.starts_with(*p)) {
                wrong.push(format!("{name}: builds, so it is named by family or platform and feature, not `{p}`"));
            }
        } else if !command {
            wrong.push(format!("{name}: neither fails (`cause`) nor builds (`out/`), so it is named by its command"));
        }
    }
    assert!(names > 100, "only {names} golden cases found");
    assert!(wrong.is_empty(), "golden cases not named by what they test (golden/README.md):\n{}", wrong.join("\n"));
}
