//! The cause first (issue 15): when one mistake produces several diagnostics, the one that is
//! the cause comes first and the consequences are not reported. Every failing golden case
//! states its cause in a `cause` file, one line: `<code> <file>:<line>`, the code of the
//! mistake the case demonstrates and the line where it was written. This test compiles each
//! failing case (as `tests/golden.rs` does, `upgrade-base.kdl` included) and asserts that its
//! first diagnostic, in the order fleetc prints them, is that cause. A failing case without a
//! `cause` file fails the test: the statement is written by hand, never blessed.

use crate::common;

use std::fs;

#[test]
fn every_failing_golden_case_prints_its_cause_first() {
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
        let first = c.diags.sorted()[0];
        let place = first.span.map(|s| {
            let (line, _) = c.sources.line_col(s.file, s.start);
            format!("{}:{line}", c.sources.get(s.file).name)
        });
        let actual = format!("{} {}", first.code.name, place.unwrap_or_default());
        if actual != stated.trim() {
            failures.push(format!("{name}: first diagnostic is `{actual}`, the stated cause is `{}`", stated.trim()));
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
