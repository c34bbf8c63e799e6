//! Robustness: no input makes fleetc panic, and every failure is a diagnostic with a place.
//! Inputs are arbitrary text, mutations of the reference fleet, and the shapes the
//! reliability audit found crashing or exhausting fleetc (deep nesting, long lines, huge
//! counts, many diagnostics). Every compilation's diagnostics are also rendered, for people
//! and as JSON: rendering is where a label past column 65,535 used to panic.

use crate::common;

use fleetc::compile::{Compilation, MapLoader, compile};
use fleetc::diag::render::{Style, json, short, text as render_text};
use proptest::prelude::*;

fn loader() -> MapLoader {
    let mut l = MapLoader::default();
    for e in std::fs::read_dir(common::root().join("vendor")).unwrap().flatten() {
        l.files
            .insert(format!("vendor/{}", e.file_name().to_string_lossy()), std::fs::read_to_string(e.path()).unwrap());
    }
    l
}

fn reference() -> String {
    std::fs::read_to_string(common::root().join("fleet.kdl")).unwrap()
}

/// Every error a compilation reports points somewhere in fleet.kdl, inside the text.
fn assert_well_placed(c: &Compilation, text: &str) {
    for d in c.diags.iter() {
        let span = d.span.unwrap_or_else(|| panic!("diagnostic without a place: {d:?}"));
        assert!(span.end() <= text.len().max(1), "span {span:?} past the end of the text: {d:?}");
    }
    let _ = render_text(&c.diags, &c.sources, Style::PLAIN);
    let _ = json(&c.diags, &c.sources);
    let _ = short(&c.diags, &c.sources);
    if c.diags.has_errors() {
        assert!(c.artifacts.is_none(), "a compilation with errors produced artifacts");
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Delete { at: usize, len: usize },
    Insert { at: usize, text: String },
    DuplicateLine { line: usize },
    SwapLines { a: usize, b: usize },
}

fn edit() -> impl Strategy<Value = Edit> {
    let tricky = prop_oneof![
        Just("\"".to_owned()),
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("=".to_owned()),
        Just("#true".to_owned()),
        Just("-1".to_owned()),
        Just("99999999999999999999999999999999999999".to_owned()),
        Just("\u{202e}".to_owned()),
        Just("/*".to_owned()),
        Just("\\".to_owned()),
        Just(" count=0".to_owned()),
        Just(" was=\"x\"".to_owned()),
        Just("{".repeat(2_000)),
        Just("/*".repeat(2_000)),
        Just(format!("\"{}\"", "x".repeat(70_000))),
        Just(format!("// {}", "y".repeat(70_000))),
        Just(" count=2147483649".to_owned()),
        Just(" count=10000001".to_owned()),
        Just(" count=4294967295".to_owned()),
        Just("\nnod \"x\"".repeat(300)),
        "[a-z\" {}=#0-9./-]{1,12}",
    ];
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), tricky).prop_map(|(at, text)| Edit::Insert { at, text }),
        any::<usize>().prop_map(|line| Edit::DuplicateLine { line }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines { a, b }),
    ]
}

fn apply(text: &str, e: &Edit) -> String {
    let boundary = |mut i: usize| {
        i %= text.len() + 1;
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    match e {
        Edit::Delete { at, len } => {
            let a = boundary(*at);
            let b = boundary((a + len).min(text.len()));
            format!("{}{}", &text[..a], &text[b.max(a)..])
        }
        Edit::Insert { at, text: t } => {
            let a = boundary(*at);
            format!("{}{t}{}", &text[..a], &text[a..])
        }
        Edit::DuplicateLine { line } => {
            let mut lines: Vec<&str> = text.lines().collect();
            let i = line % lines.len();
            lines.insert(i, lines[i]);
            lines.join("\n")
        }
        Edit::SwapLines { a, b } => {
            let mut lines: Vec<&str> = text.lines().collect();
            let n = lines.len();
            lines.swap(a % n, b % n);
            lines.join("\n")
        }
    }
}

proptest! {
    // The failures file stays beside this source (tests/<topic>.proptest-regressions): with
    // tests/main.rs present, proptest's default would look in proptest-regressions/ instead.
    #![proptest_config(ProptestConfig {
        cases: 200,
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn hostile_shapes_never_panic(shape in 0usize..8, n in 1usize..4, at in any::<usize>()) {
        let reference = reference();
        let cut = {
            let mut i = at % reference.len();
            while !reference.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let piece = match shape {
            0 => "a {".repeat(1_300 * n),
            1 => format!("x {}", "y".repeat(66_000 * n)),
            2 => "/*".repeat(1_000 * n),
            3 => format!("\"{}", "${".repeat(1_000 * n)),
            4 => "nod \"x\"\n".repeat(2_000 * n),
            5 => format!(" count={}", 2_147_483_648u64 * n as u64),
            6 => "\r\n\u{feff}\u{202e}\u{2028}".repeat(100 * n),
            _ => "} ".repeat(500 * n),
        };
        let text = format!("{}{piece}{}", &reference[..cut], &reference[cut..]);
        let c = compile("fleet.kdl", &text, &loader());
        assert_well_placed(&c, &text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let c = compile("fleet.kdl", &text, &MapLoader::default());
        assert_well_placed(&c, &text);
    }

    #[test]
    fn mutated_reference_fleets_never_panic(edits in proptest::collection::vec(edit(), 1..6)) {
        let mut text = reference();
        for e in &edits {
            text = apply(&text, e);
        }
        let c = compile("fleet.kdl", &text, &loader());
        assert_well_placed(&c, &text);
    }
}

#[test]
fn arbitrary_bytes_read_as_text_never_panic() {
    // Bytes that are not UTF-8 never reach the compiler (the CLI reads text); every
    // other byte sequence does.
    let mut runner = proptest::test_runner::TestRunner::default();
    runner
        .run(&proptest::collection::vec(any::<u8>(), 0..300), |bytes| {
            let text = String::from_utf8_lossy(&bytes);
            let c = compile("fleet.kdl", &text, &MapLoader::default());
            assert_well_placed(&c, &text);
            Ok(())
        })
        .unwrap();
}

/// 20,000 diagnostics took 10.8 s (quadratic de-duplication) before; now at most
/// `MAX_DIAGNOSTICS` are kept and rendered (the bound is what is asserted: speed is measured
/// in the benchmark, never in a test).
#[test]
fn many_diagnostics_are_bounded_and_fast() {
    let text = format!("{}\n{}", reference(), "nod \"x\"\n".repeat(9_000));
    let c = compile("fleet.kdl", &text, &loader());
    let rendered = render_text(&c.diags, &c.sources, Style::PLAIN);
    assert!(c.diags.len() <= fleetc::diag::MAX_DIAGNOSTICS + 1, "{}", c.diags.len());
    assert!(c.diags.omitted() > 8_000);
    assert!(rendered.contains("fleet::limits::too-many-diagnostics"));
    assert_well_placed(&c, &text);
}

#[test]
fn a_nameless_inheriting_environment_is_a_placed_diagnostic() {
    let text = reference().replacen("environment \"production\" from=\"staging\"", "environment from=\"staging\"", 1);
    assert_ne!(text, reference(), "the reference fleet has a production environment inheriting staging");
    let c = compile("fleet.kdl", &text, &loader());
    assert!(c.diags.has_errors());
    assert!(c.diags.iter().all(|d| d.code.name != "fleet::internal::bug"), "{:?}", c.diags);
    assert_well_placed(&c, &text);
}
