//! Values that reach out/ as strings are judged against their consumer (issue 28, deliverable
//! 1): hostile strings (quotes, line breaks, template markers, control characters, spaces,
//! empty) in every value that becomes a file name, an identifier or a disk selector are
//! refused with an error on that value; the newcomer's mistakes of newcomer-3.md §3 that no
//! golden shows are refused or warned about here.

use crate::common;

use fleetc::compile::{Compilation, MapLoader, compile};
use fleetc::diag::Severity;

/// The strings a hostile-strings run sends (reliability.md §5), those a release, a file name
/// or a disk's serial can never hold.
const HOSTILE: &[&str] = &[
    "",
    "\"",
    "a\"b",
    "'",
    "a\nb",
    "a\rb",
    "a\tb",
    "${x}",
    "%{ if true }x%{ endif }",
    "{{ .Version }}",
    "`x`",
    " 1.0",
    "1.0 ",
    "a b",
    "../../etc/passwd",
    "a\u{0}b",
    "a\u{2028}b",
    "x: y",
];

/// What no disk's serial, model or WWID holds as the kernel reports it: nothing, line breaks,
/// control characters, surrounding spaces.
const NOT_A_DISK_FIELD: &[&str] = &["", " ", "a\nb", "a\rb", "a\tb", "a\u{0}b", "a\u{2028}b", " S6PN", "S6PN "];

/// `s` as a KDL v2 string, with escapes for what a quoted string cannot hold as it is.
fn kdl_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn loader() -> MapLoader {
    let mut l = MapLoader::default();
    for dir in ["vendor", "values", "apps", "patches"] {
        add_dir(&mut l, &common::root(), dir);
    }
    l
}

fn add_dir(l: &mut MapLoader, root: &std::path::Path, rel: &str) {
    for e in std::fs::read_dir(root.join(rel)).unwrap().flatten() {
        let r = format!("{rel}/{}", e.file_name().to_string_lossy());
        if e.path().is_dir() {
            add_dir(l, root, &r);
        } else {
            l.files.insert(r, std::fs::read_to_string(e.path()).unwrap());
        }
    }
}

/// `text` with `needle` (unique) replaced by `with`, where `{}` is `value` as a KDL string;
/// the compilation and the byte offset of the value.
fn with_value(text: &str, needle: &str, with: &str, value: &str, loader: &MapLoader) -> (Compilation, usize) {
    assert_eq!(text.matches(needle).count(), 1, "needle `{needle}` is not unique");
    let at = text.find(needle).unwrap() + with.find("{}").unwrap();
    let edited = text.replacen(needle, &with.replace("{}", &kdl_quote(value)), 1);
    (compile("fleet.kdl", &edited, loader), at)
}

fn refused_at(c: &Compilation, at: usize, codes: &[&str]) -> bool {
    c.diags.iter().any(|d| {
        d.severity == Severity::Error
            && codes.contains(&d.code.name)
            && d.span.is_some_and(|s| s.start <= at + 1 && at <= s.start + s.len)
    })
}

/// What is edited, in which fleet text, the needle and its replacement (`{}` the value), the
/// codes that may refuse it, and the values sent.
type Position<'a> = (&'a str, &'a str, &'a str, &'a str, &'a [&'a str], &'a [&'a str]);

#[test]
fn hostile_strings_are_refused_in_every_name_version_and_disk_selector() {
    let reference = std::fs::read_to_string(common::root().join("fleet.kdl")).unwrap();
    let metal = std::fs::read_to_string(common::root().join("golden/node-install-disk-selector/fleet.kdl")).unwrap();
    let l = loader();
    let positions: [Position; 6] = [
        (
            "add-on version",
            &reference,
            r#"addon "cilium" version="1.20.2""#,
            r#"addon "cilium" version={}"#,
            &["fleet::names::invalid-identifier"],
            HOSTILE,
        ),
        (
            "sealed input name",
            &reference,
            r#"sealed "talos-secrets" "scaleway-api-key" "argocd-repo""#,
            r#"sealed "talos-secrets" "scaleway-api-key" {}"#,
            &["fleet::names::not-dns-label"],
            HOSTILE,
        ),
        (
            "install-disk serial",
            &metal,
            r#"serial="""#,
            "serial={}",
            &["fleet::node::install-disk-selector"],
            NOT_A_DISK_FIELD,
        ),
        (
            "install-disk model",
            &metal,
            r#"serial="""#,
            "model={}",
            &["fleet::node::install-disk-selector"],
            NOT_A_DISK_FIELD,
        ),
        (
            "install-disk wwid",
            &metal,
            r#"serial="""#,
            "wwid={}",
            &["fleet::node::install-disk-selector"],
            NOT_A_DISK_FIELD,
        ),
        ("install-disk size", &metal, r#"serial="""#, "size={}", &["fleet::node::install-disk-size"], HOSTILE),
    ];
    let mut accepted = Vec::new();
    for (what, text, needle, with, codes, values) in positions {
        for value in values {
            let (c, at) = with_value(text, needle, with, value, &l);
            if !refused_at(&c, at, codes) {
                accepted.push(format!(
                    "{what} {value:?}: {:?}",
                    c.diags.iter().map(|d| (d.code.name, d.message.clone())).collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(accepted.is_empty(), "{} hostile values accepted:\n{}", accepted.len(), accepted.join("\n"));
}

#[test]
fn the_reference_values_stay_accepted() {
    let reference = std::fs::read_to_string(common::root().join("fleet.kdl")).unwrap();
    let c = compile("fleet.kdl", &reference, &loader());
    let new_codes = [
        "fleet::versions::talos-release-unknown",
        "fleet::versions::kubernetes-release-unknown",
        "fleet::node::install-disk-size",
        "fleet::node::install-disk-selector",
        "fleet::talos::machine-below-minimum",
        "fleet::names::node-restricted-label",
        "fleet::argocd::values-missing",
    ];
    let hit: Vec<_> = c.diags.iter().filter(|d| new_codes.contains(&d.code.name)).map(|d| d.message.clone()).collect();
    assert!(hit.is_empty(), "{hit:?}");
}

/// newcomer-3.md m50: a chart's values file that does not exist is a warning, as a path
/// app's directory is; and its neighbours: a worker pool's own Kubernetes release, a
/// restricted label on a named worker node and in another namespace, a bare install-disk
/// size without a unit.
#[test]
fn neighbours_of_the_newcomers_mistakes_are_caught() {
    let reference = std::fs::read_to_string(common::root().join("fleet.kdl")).unwrap();
    let l = loader();
    let cases: [(&str, &str, &str); 5] = [
        (
            r#"values="values/external-secrets.yaml""#,
            r#"values="values/external-secret.yaml""#,
            "fleet::argocd::values-missing",
        ),
        (
            r#"pool "system" count=2 size="system" {"#,
            r#"pool "system" count=2 size="system" kubernetes="1.36.9" {"#,
            "fleet::versions::kubernetes-release-unknown",
        ),
        (
            r#"label "node.acme.example/pool" "system""#,
            r#"label "k8s.io/pool" "system""#,
            "fleet::names::node-restricted-label",
        ),
        (
            r#"label "node.acme.example/pool" "system""#,
            r#"label "node-restriction.kubernetes.io/pool" "system""#,
            "fleet::names::node-restricted-label",
        ),
        (
            r#"size "small" cores=4 memory="8GiB" kvm=#true"#,
            r#"size "small" cores=4 memory="1GiB" kvm=#true"#,
            "fleet::talos::machine-below-minimum",
        ),
    ];
    for (needle, with, code) in cases {
        assert_eq!(reference.matches(needle).count(), 1, "{needle}");
        let c = compile("fleet.kdl", &reference.replacen(needle, with, 1), &l);
        assert!(
            c.diags.iter().any(|d| d.code.name == code),
            "{with}: {:?}",
            c.diags.iter().map(|d| (d.code.name, d.message.clone())).collect::<Vec<_>>()
        );
    }
    // Labels a node may set stay accepted: the kubelet's own, and `node.kubernetes.io/…`.
    for ok in ["node.kubernetes.io/pool", "topology.kubernetes.io/zone", "kubelet.kubernetes.io/x"] {
        let c = compile(
            "fleet.kdl",
            &reference.replacen(r#"label "node.acme.example/pool""#, &format!("label \"{ok}\""), 1),
            &l,
        );
        assert!(!c.diags.iter().any(|d| d.code.name == "fleet::names::node-restricted-label"), "{ok}");
    }
}

/// newcomer-3.md m32: an integer outside its type says the range it takes, as the trial's 5/5
/// asks (`endpoint port=70000`: 0 to 65535).
#[test]
fn an_integer_out_of_range_names_the_range() {
    let reference = std::fs::read_to_string(common::root().join("fleet.kdl")).unwrap();
    let edited =
        reference.replacen(r#"endpoint address="10.10.0.10""#, r#"endpoint address="10.10.0.10" port=70000"#, 1);
    let c = compile("fleet.kdl", &edited, &loader());
    let d = c.diags.iter().find(|d| d.message == "`port` is out of range").unwrap_or_else(|| {
        panic!("no out-of-range error: {:?}", c.diags.iter().map(|d| &d.message).collect::<Vec<_>>())
    });
    assert_eq!(d.help.as_deref(), Some("`port` takes a whole number from 0 to 65535"));
}
