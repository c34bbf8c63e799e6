use super::*;

/// Formats `input` and compares with `expect`; also checks that the result is a fixed point.
#[track_caller]
fn check(input: &str, expect: &str) {
    let out = match format(FileId(0), input) {
        Ok(o) => o,
        Err(d) => panic!("refused: {:?}", d.iter().map(|d| &d.message).collect::<Vec<_>>()),
    };
    assert_eq!(out, expect, "\n--- got ---\n{out}--- expected ---\n{expect}");
    let again = format(FileId(0), &out).expect("formats its own output");
    assert_eq!(again, out, "not a fixed point");
}

/// Formatting `input` is refused; returns (message, refused text) pairs.
#[track_caller]
fn refused(input: &str) -> Vec<(String, String)> {
    let d = format(FileId(0), input).expect_err("refused");
    d.iter()
        .map(|d| {
            assert_eq!(d.code.name, "fleet::fmt::cannot-reprint");
            let s = d.span.unwrap();
            (d.message.clone(), input[s.start..s.end()].to_owned())
        })
        .collect()
}

#[test]
fn indentation_and_one_node_per_line() {
    check("a {\n  b 1; c 2\n\t\td {e}\n}\n", "a {\n    b 1\n    c 2\n    d {\n        e\n    }\n}\n");
}

#[test]
fn strings_quoted_names_bare_numbers_as_written() {
    check(
        "\"fleet\" bare #\"raw \"q\"\"# 0x0A 1_000 1.50 #true #null #-inf key=value\n",
        "fleet \"bare\" \"raw \\\"q\\\"\" 0x0A 1_000 1.50 #true #null #-inf key=\"value\"\n",
    );
    check("\"a b\" \"key x\"=1\n", "\"a b\" \"key x\"=1\n");
    check("n \"\"\"\n    one\n      two\n    \"\"\"\n", "n \"one\\n  two\"\n");
}

#[test]
fn arguments_before_properties_each_in_written_order() {
    check("n b=2 \"x\" a=1 \"y\"\n", "n \"x\" \"y\" b=2 a=1\n");
}

#[test]
fn type_annotations_are_kept() {
    check("(t)n (u8)5 k=(date)\"2024\" ( spaced )\"v\"\n", "(t)n (u8)5 (spaced)\"v\" k=(date)\"2024\"\n");
}

#[test]
fn whitespace_around_equals_and_line_continuations_go() {
    check("n a = 1 \\\n   b=2\n", "n a=1 b=2\n");
}

#[test]
fn blank_lines_collapse_to_one_and_vanish_at_block_edges() {
    check("\n\na\n\n\n\nb {\n\n    c\n\n    d\n\n}\n\n\n", "a\n\nb {\n    c\n\n    d\n}\n");
}

#[test]
fn empty_children() {
    check("a { }\nb {\n}\n", "a {}\nb {}\n");
}

#[test]
fn comments_on_their_own_lines_and_at_line_ends() {
    check(
        "// top\n  a 1   // end of a   \n/* block */\nb { // after brace\n  c\n  // before close\n}   // after b\n",
        "// top\na 1 // end of a\n/* block */\nb { // after brace\n    c\n    // before close\n} // after b\n",
    );
}

#[test]
fn inline_block_comments_travel_with_the_next_entry() {
    check("n k=1 /* for x */ \"x\" /* end */\n", "n /* for x */ \"x\" k=1 /* end */\n");
    check("n /* before children */ {\n}\n", "n /* before children */ {}\n");
    check("a /* x */; b\n", "a /* x */\nb\n");
    check("/* lead */ a\n", "/* lead */\na\n");
}

#[test]
fn multi_line_block_comments_are_verbatim() {
    check("a {\n  /* one\n     two */\n  b\n}\n", "a {\n    /* one\n     two */\n    b\n}\n");
}

#[test]
fn slashdash_is_verbatim() {
    check(
        "/-  old  1 {\n  x\n}\na b=1 /-\"gone\" /- c=2 /-{ y } {\n  z\n}   /-{ w }\n",
        "/-  old  1 {\n  x\n}\na /-\"gone\" b=1 /- c=2 /-{ y } {\n    z\n} /-{ w }\n",
    );
    check("a\n/- kdl-version 2\n", "a\n/- kdl-version 2\n");
}

#[test]
fn comments_it_cannot_place_are_refused() {
    let r = refused("n count= /* was 3 */ 2\n");
    assert_eq!(
        r,
        vec![(
            "a comment between `=` and a property's value has no place in the canonical layout".to_owned(),
            "/* was 3 */".to_owned()
        )]
    );
    let r = refused("n (/*t*/u8)1 k /*x*/ =2 \\ // c\n  3\n");
    let places: Vec<&str> = r.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(places, ["/*t*/", "/*x*/", "// c"]);
    // In a slashdash-commented element everything is verbatim: nothing to refuse.
    check("/-n (/*t*/u8)1\n", "/-n (/*t*/u8)1\n");
}

#[test]
fn invalid_kdl_is_a_syntax_diagnostic() {
    let d = format(FileId(0), "a {\n").unwrap_err();
    assert!(d.iter().all(|d| d.code.name == "fleet::syntax::invalid-kdl"));
}

#[test]
fn comments_are_collected_from_tokens_and_slashdashes() {
    assert_eq!(
        comments("a // x  \n/* y */ b /-c\n/-d {\n// z\n}\n"),
        ["/* y */", "/-c", "/-d {\n// z\n}", "// x", "// z"]
    );
}
