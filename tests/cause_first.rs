//! The cause first (issue 15): when one mistake produces several diagnostics, the one that is
//! the cause comes first and the consequences are not reported. Every failing golden case
//! states its cause in a `cause` file, one line: `<code> <file>:<line>`, the code of the
//! mistake the case demonstrates and the line where it was written. This test compiles each
//! failing case (as `tests/golden.rs` does, `upgrade-base.kdl` included) and asserts that its
//! first diagnostic, in the order fleetc prints them, is that cause. A failing case without a
//! `cause` file fails the test: the statement is written by hand, never blessed.
//!
//! One cause, one error (issue 28): the `cause` file lists **every** error the case prints,
//! one line each, in the order fleetc prints them, the first being the case's cause. A case
//! with one mistake has one line; a case that makes several independent mistakes on purpose
//! (`names-not-dns-label`: a cluster and a pool) has one line per mistake. A consequence of
//! a cause (an error at each hostname of a badly named cluster, "no app" after the app was
//! refused) has no line of its own, so it fails the test until fleetc stops printing it.
//! Warnings are not listed: they never stop a build, and a case may show them on purpose.
//! Lines starting with `#` are comments (why a case has several causes).

use crate::common;

use std::fs;

#[test]
fn every_failing_golden_case_prints_its_cause_first_and_one_error_per_cause() {
    let mut cases: Vec<_> = fs::read_dir(common::root().join("golden"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("fleet.kdl").exists() && !p.join("base.kdl").exists())
        .collect();
    cases.sort();
    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in &cases {
        let mut c = common::compile_file(&dir.join("fleet.kdl"));
        let base = dir.join("upgrade-base.kdl");
        if base.exists() {
            let old = common::compile_file(&base).fleet.expect("upgrade-base.kdl resolves");
            if let Some(new) = &c.fleet {
                fleetc::check::check_upgrade_path(&old, new, &mut c.diags);
            }
        }
        if !c.diags.has_errors() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(stated) = fs::read_to_string(dir.join("cause")) else {
            failures.push(format!("{name}: fails but states no cause (write `<code> fleet.kdl:<line>` in `cause`)"));
            continue;
        };
        let errors: Vec<String> = c
            .diags
            .sorted()
            .into_iter()
            .filter(|d| d.severity == fleetc::diag::Severity::Error)
            .map(|d| {
                let place = d.span.map(|s| {
                    let (line, _) = c.sources.line_col(s.file, s.start);
                    format!("{}:{line}", c.sources.get(s.file).name)
                });
                format!("{} {}", d.code.name, place.unwrap_or_default())
            })
            .collect();
        // `#` lines are comments: why the case has several causes, or which line is a known
        // consequence not yet folded into its cause.
        let stated: Vec<&str> =
            stated.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        if errors.first().map(String::as_str) != stated.first().copied() {
            failures.push(format!(
                "{name}: first diagnostic is `{}`, the stated cause is `{}`",
                errors.first().map_or("", String::as_str),
                stated.first().unwrap_or(&"")
            ));
        } else if errors != stated {
            failures.push(format!(
                "{name}: {} errors for {} stated causes; printed:\n    {}",
                errors.len(),
                stated.len(),
                errors.join("\n    ")
            ));
        }
        checked += 1;
    }
    assert!(checked > 40, "only {checked} failing cases checked");
    assert!(
        failures.is_empty(),
        "{} failing cases do not print their cause first:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
