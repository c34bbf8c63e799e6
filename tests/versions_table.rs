//! The versions table (`versions/talos.kdl`) is one value in one place: docs/talos.md prints
//! exactly it, the explain texts quote its ranges, and no doc says fleetc refuses a minor the
//! table supports. `UPDATE_GOLDEN=1` rewrites the generated block of docs/talos.md.

use crate::common;

use std::fs;

use fleetc::upstream::talos::table;

const START: &str = "<!-- versions-table:start (generated from versions/talos.kdl; tests/versions_table.rs) -->\n";
const END: &str = "<!-- versions-table:end -->";

#[test]
fn docs_talos_prints_the_versions_table() {
    let path = common::root().join("docs/talos.md");
    let doc = fs::read_to_string(&path).unwrap();
    let (i, j) = (doc.find(START).expect("start marker"), doc.find(END).expect("end marker"));
    let printed = &doc[i + START.len()..j];
    let expected = table().markdown();
    if printed != expected && std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(&path, format!("{}{expected}{}", &doc[..i + START.len()], &doc[j..])).unwrap();
        return;
    }
    assert_eq!(printed, expected, "docs/talos.md \"Versions\" is not versions/talos.kdl (UPDATE_GOLDEN=1 rewrites it)");
}

fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_explain_texts_and_the_language_reference_quote_the_tables_kubernetes_ranges() {
    let t = table();
    let ranges: Vec<String> = t
        .talos
        .iter()
        .map(|r| {
            format!(
                "{}.{}: {}.{}–{}.{}",
                r.minor.0, r.minor.1, r.kubernetes.0.0, r.kubernetes.0.1, r.kubernetes.1.0, r.kubernetes.1.1
            )
        })
        .collect();
    let explain = flat(fleetc::diag::codes::KUBERNETES_UNSUPPORTED.explanation);
    let language = flat(&fs::read_to_string(common::root().join("docs/fleet-language.md")).unwrap());
    for r in &ranges {
        assert!(explain.contains(r), "fleet::versions::kubernetes-unsupported does not say `{r}`: {explain}");
        assert!(language.contains(r), "docs/fleet-language.md does not say `{r}`");
    }
}

/// Newcomer finding §8 item 15: the docs said "fleetc knows 1.14" while 1.14 was refused. No
/// doc or help may claim a minor of the table is refused or not emitted.
#[test]
fn no_doc_or_diagnostic_says_a_supported_minor_is_refused() {
    let mut texts: Vec<(String, String)> = Vec::new();
    for dir in ["docs", "."] {
        for e in fs::read_dir(common::root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md") {
                texts.push((p.display().to_string(), fs::read_to_string(&p).unwrap()));
            }
        }
    }
    for e in fs::read_dir(common::root().join("src/diag/codes")).unwrap() {
        let p = e.unwrap().path();
        texts.push((p.display().to_string(), fs::read_to_string(&p).unwrap()));
    }
    for (name, text) in &texts {
        let text = flat(text);
        for r in &table().talos {
            let m = format!("{}.{}", r.minor.0, r.minor.1);
            for claim in [format!("{m} **refused**"), format!("refuses {m}"), format!("Talos {m} is refused")] {
                assert!(!text.contains(&claim), "{name} says `{claim}`");
            }
        }
        assert!(!text.contains("version-not-emitted"), "{name} names the retired fleet::talos::version-not-emitted");
        assert!(!text.contains("1.12 and 1.13 only"), "{name} says fleetc emits 1.12 and 1.13 only");
    }
}
