//! `fleetc::emit::yaml`: strings survive YAML 1.1 and 1.2 readers, and the layout is the
//! documented one.

use std::collections::BTreeMap;

use fleetc::emit::HEADER as GENERATED_BY;
use fleetc::emit::yaml::{YamlError, documents, plain_scalar_hazards, to_yaml, typed_scalar_hazards};
use serde::{Deserialize, Serialize};

/// Strings that YAML readers like to turn into something else, or that stress quoting.
fn nasty_strings() -> Vec<String> {
    let fixed = [
        // YAML 1.1 booleans and nulls.
        "on",
        "On",
        "ON",
        "off",
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "NO",
        "y",
        "Y",
        "n",
        "N",
        "true",
        "True",
        "FALSE",
        "~",
        "null",
        "Null",
        "NULL",
        // Numbers in every base and spelling, base 60, floats, versions and addresses.
        "0",
        "3",
        "-1",
        "+12",
        "1.5",
        "1:30",
        "190:20:30",
        "190:20:30.15",
        "0x1F",
        "0o17",
        "0b101",
        "017",
        "08",
        "1_000",
        "1__0",
        "_1",
        "1_000.5",
        "1e3",
        "1e+3",
        "1.0e+20",
        ".5",
        "1.",
        ".",
        ".inf",
        "-.Inf",
        ".nan",
        "NaN",
        "inf",
        "+infinity",
        "0x1p3",
        "1.2.3",
        "1.31.0",
        "v1.9.0",
        "10.0.0.1",
        "10.0.0.0/8",
        "::1",
        "fd00::1",
        // Timestamps.
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10 -5",
        "2002-1-2",
        // Merge and value keys, indicators, comments, flow characters.
        "<<",
        "=",
        "-",
        "?",
        ":",
        "- x",
        "? x",
        ": x",
        "a: b",
        "a:",
        "a :b",
        "x: ",
        "#x",
        "x #y",
        "x#y",
        "[a]",
        "{a}",
        "a, b",
        "*a",
        "&a",
        "!a",
        "!!str",
        "|",
        ">",
        "|-",
        "%x",
        "@x",
        "`x",
        "\"",
        "'",
        "it's",
        "a'b\"c",
        "\\",
        "\\n",
        "---",
        "...",
        "--- x",
        "${x}",
        "%{x}",
        "{{ .Values.x }}",
        // Whitespace.
        " lead",
        "trail ",
        " both ",
        "",
        " ",
        "  ",
        "\t",
        "a\tb",
        "\tlead",
        "trail\t",
        "x\u{a0}",
        // Line breaks: single, trailing, multiple, CR, indented first line, blank lines.
        "\n",
        "\n\n",
        "a\n",
        "a\nb",
        "a\nb\n",
        "a\nb\n\n",
        "\n\na",
        "a\n\n\nb",
        "a\n ",
        "a \nb",
        "  indented\nline\n",
        "\n  indented after blank\n",
        "\tlead tab\nx\n",
        "a\r",
        "\r\n",
        "a\r\nb\r\n",
        "# comment\n- item\nkey: value\n---\n...\n",
        // Unicode and control characters.
        "\u{202E}abc",
        "a\u{202E}b\n",
        "\u{200B}",
        "a\u{2028}b",
        "a\u{2029}b",
        "a\u{85}b",
        "line\u{2028}\n",
        "\u{feff}bom",
        "a\0b",
        "\0",
        "\u{7f}",
        "\u{1b}[0m",
        "\u{7}",
        "😀",
        "é",
        "日本語",
        "\u{10FFFF}",
    ];
    let mut all: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    all.push("word ".repeat(400));
    all.push("x".repeat(5000));
    all.push(format!("{}: {}", "k".repeat(300), "v".repeat(300)));
    all
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Value {
    value: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Item {
    name: String,
    contents: String,
    tags: Vec<String>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Nested {
    items: Vec<Item>,
    labels: BTreeMap<String, String>,
}

/// Serialize, require the typed YAML 1.1/1.2 check to pass, and read back with serde-saphyr.
fn round_trip<T>(value: &T) -> String
where
    T: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug,
{
    let yaml = to_yaml(value).unwrap_or_else(|e| panic!("{value:?}: {e}"));
    let hazards = typed_scalar_hazards(std::slice::from_ref(value), &yaml);
    assert!(hazards.is_empty(), "{value:?}\n{yaml}\n{hazards:#?}");
    let back: T = serde_saphyr::from_str(&yaml).unwrap_or_else(|e| panic!("{yaml}\n{e}"));
    assert_eq!(&back, value, "{yaml}");
    yaml
}

#[test]
fn nasty_strings_round_trip_in_every_position() {
    for s in nasty_strings() {
        round_trip(&Value { value: s.clone() });
        round_trip(&s);
        round_trip(&vec![s.clone(), s.clone()]);
        round_trip(&Nested {
            items: vec![Item { name: s.clone(), contents: s.clone(), tags: vec![s.clone()] }],
            labels: BTreeMap::from([(s.clone(), s.clone()), ("k".to_owned(), s.clone())]),
        });
        round_trip(&BTreeMap::from([(s.clone(), 1u8)]));
    }
}

#[test]
fn yaml11_lookalikes_are_quoted() {
    for s in [
        "on",
        "yes",
        "No",
        "y",
        "~",
        "null",
        "1:30",
        "0x1F",
        "1_000",
        "017",
        "1e3",
        ".inf",
        "2001-12-14",
        "<<",
        "=",
        "1.2.3",
        "10.0.0.1",
    ] {
        let yaml = round_trip(&Value { value: s.into() });
        assert_eq!(yaml, format!("value: \"{s}\"\n"));
    }
}

#[test]
fn overlong_keys_use_explicit_key_syntax() {
    // YAML limits implicit keys to 1024 characters; serde-saphyr switches to `? key`.
    let key = "k".repeat(2000);
    let yaml = round_trip(&BTreeMap::from([(key.clone(), 1u8)]));
    assert_eq!(yaml, format!("? {key}\n: 1\n"));
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
enum Switch {
    On,
    Off,
    Yes,
    No,
    Y,
    N,
    Null,
    True,
}

#[test]
fn enum_variants_are_strings() {
    use Switch::*;
    let all = vec![On, Off, Yes, No, Y, N, Null, True];
    let yaml = round_trip(&all);
    assert_eq!(yaml, "- \"On\"\n- \"Off\"\n- \"Yes\"\n- \"No\"\n- \"Y\"\n- \"N\"\n- \"Null\"\n- \"True\"\n");
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Container {
    name: String,
    image: String,
    args: Vec<String>,
    env: Vec<BTreeMap<String, String>>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    api_version: String,
    kind: String,
    metadata: BTreeMap<String, BTreeMap<String, String>>,
    replicas: u32,
    ratio: f64,
    big: f64,
    enabled: bool,
    missing: Option<String>,
    empty_map: BTreeMap<String, String>,
    empty_list: Vec<String>,
    containers: Vec<Container>,
    matrix: Vec<Vec<i64>>,
}

#[test]
fn layout_is_kubectl_style() {
    let m = Manifest {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        metadata: BTreeMap::from([(
            "labels".into(),
            BTreeMap::from([("zone".into(), "on".into()), ("app".into(), "web".into())]),
        )]),
        replicas: 3,
        ratio: 0.5,
        big: 1e20,
        enabled: true,
        missing: None,
        empty_map: BTreeMap::new(),
        empty_list: vec![],
        containers: vec![Container {
            name: "web".into(),
            image: "nginx:1.27".into(),
            args: vec!["--port=8080".into(), "-v".into()],
            env: vec![BTreeMap::from([("name".into(), "DEBUG".into()), ("value".into(), "yes".into())])],
        }],
        matrix: vec![vec![1, 2], vec![]],
    };
    let yaml = round_trip(&m);
    let expected = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: web
    zone: "on"
replicas: 3
ratio: 0.5
big: 1.0e+20
enabled: true
missing: null
emptyMap: {}
emptyList: []
containers:
- name: web
  image: nginx:1.27
  args:
  - --port=8080
  - -v
  env:
  - name: DEBUG
    value: "yes"
matrix:
- - 1
  - 2
- []
"#;
    assert_eq!(yaml, expected);
    // Deterministic: same value, same bytes.
    assert_eq!(to_yaml(&m).unwrap(), yaml);
}

/// A ~10 KB multi-document Kubernetes manifest, the kind Talos `inlineManifests` carry.
fn embedded_manifest() -> String {
    let mut text = String::new();
    for i in 0..60 {
        text.push_str(&format!(
            "---\n# object {i}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  \
             labels:\n    enabled: on\ndata:\n  key: \"value: {i}\"\n  script: |\n    \
             echo 'hi' # not a comment\n\n    exit 0\n"
        ));
    }
    text
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct InlineManifest {
    name: String,
    contents: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct ClusterConfig {
    inline_manifests: Vec<InlineManifest>,
}

#[test]
fn long_multiline_strings_are_literal_blocks() {
    let body = embedded_manifest();
    assert!(body.len() > 10_000, "{}", body.len());
    let variants = [
        (body.clone(), "|"),
        (body.trim_end_matches('\n').to_owned(), "|-"),
        (format!("{body}\n\n"), "|+"),
        (format!("  {body}"), "|2"),
        (format!("\n\n{body}"), "|"),
        (format!("{body}{}\n", "z".repeat(3000)), "|"),
    ];
    for (contents, header) in variants {
        let value = ClusterConfig {
            inline_manifests: vec![InlineManifest { name: "cilium".into(), contents: contents.clone() }],
        };
        let yaml = round_trip(&value);
        let start = format!("inlineManifests:\n- name: cilium\n  contents: {header}\n");
        assert!(yaml.starts_with(&start), "{header}: {}", &yaml[..200]);
        // Literal: every content line appears on its own line, indented by 4, never folded
        // or quoted.
        let body_lines: Vec<&str> = yaml.lines().skip(3).collect();
        let content_lines: Vec<&str> = contents.trim_end_matches('\n').split('\n').collect();
        let (body_lines, kept) = body_lines.split_at(content_lines.len());
        // `|+` keeps the extra trailing newlines as empty lines.
        assert!(kept.iter().all(|l| l.is_empty()), "{header}: {kept:?}");
        for (got, want) in body_lines.iter().zip(&content_lines) {
            if want.is_empty() {
                assert_eq!(*got, "");
            } else {
                assert_eq!(*got, format!("    {want}"));
            }
        }
        // Top level too, as a whole document.
        round_trip(&contents);
    }
}

#[test]
fn long_single_line_strings_are_not_folded() {
    for s in ["word ".repeat(400), "x".repeat(5000), format!("{} # {}", "a".repeat(200), "b".repeat(200))] {
        let yaml = round_trip(&Value { value: s.clone() });
        assert_eq!(yaml.lines().count(), 1, "{yaml}");
        assert!(!yaml.contains(">"), "{yaml}");
    }
}

#[test]
fn documents_have_header_and_separators() {
    let docs = vec![Value { value: "on".into() }, Value { value: "a\nb\n".into() }, Value { value: "---".into() }];
    let yaml = documents(Some(GENERATED_BY), &docs).unwrap();
    assert_eq!(yaml, format!("# {GENERATED_BY}\nvalue: \"on\"\n---\nvalue: |\n  a\n  b\n---\nvalue: \"---\"\n"));
    let hazards = typed_scalar_hazards(&docs, &yaml);
    assert!(hazards.is_empty(), "{hazards:#?}");
    let back: Vec<Value> = serde_saphyr::from_multiple(&yaml).unwrap();
    assert_eq!(back, docs);

    assert_eq!(documents(None, &[Value { value: "x".into() }]).unwrap(), "value: x\n");
    assert_eq!(documents::<Value>(Some(GENERATED_BY), &[]).unwrap(), format!("# {GENERATED_BY}\n"));
    assert!(matches!(documents(Some("two\nlines"), &[1]), Err(YamlError::Header(_))));
}

#[test]
fn heterogeneous_documents_via_json_values() {
    let docs = vec![
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "no"}}),
        serde_json::json!({"port": 6443, "ratio": 0.25, "debug": false, "note": null}),
    ];
    let yaml = documents(Some(GENERATED_BY), &docs).unwrap();
    let hazards = typed_scalar_hazards(&docs, &yaml);
    assert!(hazards.is_empty(), "{yaml}\n{hazards:#?}");
    assert!(plain_scalar_hazards(&yaml).is_empty());
    assert!(yaml.contains("name: \"no\"\n"), "{yaml}");
}

#[test]
fn exhaustive_short_strings_over_number_and_date_characters() {
    // Every string of up to 3 characters over the alphabet that YAML 1.1 numbers, dates,
    // booleans and indicators are made of, as a value and as a key.
    let alphabet: Vec<char> = "019._:-+eExobTZ ny~#<=".chars().collect();
    let mut strings = vec![String::new()];
    let mut frontier = vec![String::new()];
    for _ in 0..3 {
        frontier = frontier.iter().flat_map(|p| alphabet.iter().map(move |c| format!("{p}{c}"))).collect();
        strings.extend(frontier.iter().cloned());
    }
    assert!(strings.len() > 10_000);
    for s in strings {
        round_trip(&s);
        round_trip(&BTreeMap::from([(s, 0u8)]));
    }
}
