//! Round trip of hostile strings through the HCL writer.
//!
//! The writer's output is parsed back with `hcl-rs` and every value is
//! evaluated: each string, object key and template must come back unchanged.
//! When `tofu` (or `terraform`) is on PATH, the same file is checked with
//! `fmt -check` and evaluated by the real tool (`apply` of a configuration
//! holding only locals and outputs, then `output -json`); otherwise the test
//! says it skipped that part.

#![allow(clippy::disallowed_methods)] // tests run the real binary and external oracles

use std::path::{Path, PathBuf};
use std::process::Command;

use fleetc::emit::hcl::{Block, Body, Expr, Template, Traversal};

/// Strings that break naive writers. All are in Unicode NFC, since
/// OpenTofu/Terraform normalise strings to NFC when they evaluate them.
const NASTY: &[&str] = &[
    "",
    "plain",
    "say \"hi\"",
    "back\\slash\\",
    "\\\"",
    "line\nbreak",
    "crlf\r\n",
    "tab\there",
    "${x}",
    "${var.x}",
    "%{ if true }yes%{ endif }",
    "$${already escaped}",
    "%%{ directive }",
    "$",
    "$$",
    "ends with $",
    "ends with %",
    "${",
    "$ {x}",
    "# not a comment",
    "// not a comment",
    "/* not a comment */",
    "*/",
    "\u{202E}evil\u{202C}",
    "\u{2066}isolate\u{2069}",
    "zero\u{200B}width\u{FEFF}",
    "line\u{2028}sep",
    "emoji 😀 👩‍👩‍👧 flags 🇫🇷",
    "café ñ 日本語",
    "-leading-dash",
    "--",
    "true",
    "false",
    "null",
    "for",
    "0",
    "-1",
    "1e3",
    "nul\0byte",
    "bell\u{7} esc\u{1b}[31m del\u{7f} c1\u{85}\u{9b}",
    " padded ",
    "=",
    "{ a = 1 }",
    "]",
    "\"\n}\n\nresource \"x\" \"y\" {",
];

fn document() -> Body {
    let mut locals = Body::new();
    for (i, s) in NASTY.iter().enumerate() {
        locals.attr(format!("s{i}"), *s);
        locals.attr(
            format!("t{i}"),
            Template::new()
                .lit(*s)
                .interp(Expr::reference("var.x"))
                .lit(*s)
                .interp(Traversal::path("var.m").index(*s))
                .lit(*s),
        );
        locals.attr(format!("c{i}"), Template::new().lit(*s).interp(*s));
    }
    locals.attr("all", Expr::list(NASTY.iter().copied()));
    locals.attr("keys", Expr::object(NASTY.iter().enumerate().map(|(i, s)| (*s, i as i64))));

    let mut doc = Body::generated();
    doc.block("variable", &["x"], |v| {
        v.attr("default", "X");
    })
    .block("variable", &["m"], |v| {
        v.attr("default", Expr::object(NASTY.iter().enumerate().map(|(i, s)| (*s, format!("m{i}")))));
    })
    .blank()
    .push(Block::new("locals", &[], locals));
    doc.blank();
    for name in output_names() {
        doc.block("output", &[name.as_str()], |o| {
            o.attr("value", Expr::reference(&format!("local.{name}")));
        });
    }
    doc
}

fn output_names() -> Vec<String> {
    let mut names = Vec::new();
    for i in 0..NASTY.len() {
        names.push(format!("s{i}"));
        names.push(format!("t{i}"));
        names.push(format!("c{i}"));
    }
    names.push("all".to_owned());
    names.push("keys".to_owned());
    names
}

/// What each local must evaluate to, as JSON.
fn expected() -> serde_json::Map<String, serde_json::Value> {
    use serde_json::{Value, json};
    let mut map = serde_json::Map::new();
    for (i, s) in NASTY.iter().enumerate() {
        map.insert(format!("s{i}"), json!(s));
        map.insert(format!("t{i}"), json!(format!("{s}X{s}m{i}{s}")));
        map.insert(format!("c{i}"), json!(format!("{s}{s}")));
    }
    map.insert("all".to_owned(), json!(NASTY));
    let keys: serde_json::Map<String, Value> =
        NASTY.iter().enumerate().map(|(i, s)| (s.to_string(), json!(i))).collect();
    map.insert("keys".to_owned(), Value::Object(keys));
    map
}

#[test]
fn hostile_strings_round_trip_through_hcl_rs() {
    use hcl::eval::{Context, Evaluate};

    let text = document().render().expect("valid document");
    assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
    assert!(text.lines().all(|l| l == l.trim_end()), "trailing spaces");
    // Nothing hidden reaches the file: only tab and newline among controls,
    // no bidi or zero-width characters.
    assert!(
        !text.chars().any(|c| (c.is_control() && c != '\n') || ('\u{2000}'..='\u{206F}').contains(&c)),
        "hidden character in output"
    );

    let body = hcl::parse(&text).unwrap_or_else(|e| panic!("hcl-rs: {e}\n{text}"));

    // Declare the variables from their parsed defaults.
    let mut ctx = Context::new();
    let mut vars = hcl::Map::new();
    for block in body.blocks().filter(|b| b.identifier() == "variable") {
        let name = block.labels()[0].as_str().to_owned();
        let default = block
            .body()
            .attributes()
            .find(|a| a.key() == "default")
            .expect("default")
            .expr()
            .evaluate(&ctx)
            .expect("evaluate default");
        vars.insert(name, default);
    }
    ctx.declare_var("var", hcl::Value::Object(vars));

    let locals = body.blocks().find(|b| b.identifier() == "locals").expect("locals block");
    let expected = expected();
    let mut seen = 0;
    for attr in locals.body().attributes() {
        let got = attr.expr().evaluate(&ctx).unwrap_or_else(|e| panic!("evaluate {}: {e}", attr.key()));
        let got = serde_json::to_value(&got).expect("to json");
        assert_eq!(&got, &expected[attr.key()], "local {}", attr.key());
        seen += 1;
    }
    assert_eq!(seen, expected.len());
}

/// `tofu`, else `terraform`, from PATH.
fn tool() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["tofu", "terraform"]
        .iter()
        .find_map(|name| std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file()))
}

fn run(bin: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    let rc = dir.join("cli.rc");
    std::fs::write(&rc, "").expect("write cli config");
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("CHECKPOINT_DISABLE", "1")
        .env("TF_CLI_CONFIG_FILE", &rc)
        .env("TF_IN_AUTOMATION", "1")
        .output()
        .expect("run tool")
}

// An oracle that needs tofu or terraform: ignored (said, never a silent `ok`) unless asked
// for with `cargo test -- --ignored`, where a missing tool fails.
#[test]
#[ignore = "needs tofu or terraform on PATH: cargo test --test integration hcl_roundtrip:: -- --ignored"]
fn hostile_strings_are_fmt_stable_and_evaluate_unchanged_in_tofu() {
    let bin = tool().expect("tofu or terraform on PATH (this oracle was asked for with --ignored)");
    let dir = tempfile::tempdir().expect("temp dir");
    let text = document().render().expect("valid document");
    std::fs::write(dir.path().join("main.tf"), &text).expect("write main.tf");

    let fmt = run(&bin, dir.path(), &["fmt", "-check", "-diff", "-no-color"]);
    assert!(
        fmt.status.success(),
        "fmt would change the output:\n{}{}",
        String::from_utf8_lossy(&fmt.stdout),
        String::from_utf8_lossy(&fmt.stderr)
    );

    for args in
        [&["init", "-input=false", "-no-color"][..], &["apply", "-auto-approve", "-input=false", "-no-color"][..]]
    {
        let out = run(&bin, dir.path(), args);
        assert!(
            out.status.success(),
            "{args:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run(&bin, dir.path(), &["output", "-json"]);
    assert!(out.status.success(), "output -json failed");
    let outputs: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("outputs json");
    for (name, want) in expected() {
        assert_eq!(&outputs[&name]["value"], &want, "output {name}");
    }
}
