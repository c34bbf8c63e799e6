//! The harness judges what a fleet may pin: `oracles/kube/crds.tsv` has a row for every release
//! the versions tables of `src/upstream/capi.rs` name (each CABPT and CACPPT release whose
//! stated support fleetc reads, every core release `upgrade-plan` proposes, the IPAM release
//! each provider combination needs). A release without a row would leave a tree pinning it
//! unjudged by the kube family (`oracles/kube/README.md`, "The CRDs").

use crate::common;

use std::collections::BTreeSet;
use std::fs;

use fleetc::upstream::capi::{CABPT, CACPPT, CORE_NEWEST, Support, combinations};

/// `(key, version)` of every row of crds.tsv.
fn rows() -> BTreeSet<(String, String)> {
    let text = fs::read_to_string(common::root().join("oracles/kube/crds.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split('\t');
            let (key, version) = (f.next().unwrap(), f.next().expect("a row has a version column"));
            assert_eq!(l.split('\t').count(), 7, "crds.tsv: a row has 7 tab-separated columns: {l}");
            (key.to_owned(), version.to_owned())
        })
        .collect()
}

fn release(s: &Support) -> String {
    let (a, b, c) = s.release;
    format!("v{a}.{b}.{c}")
}

#[test]
fn every_release_the_versions_tables_name_has_its_crds_row() {
    let rows = rows();
    let mut wanted: Vec<(&str, String)> = Vec::new();
    wanted.extend(CABPT.iter().map(|s| ("cabpt", release(s))));
    wanted.extend(CACPPT.iter().map(|s| ("cacppt", release(s))));
    wanted.extend(CORE_NEWEST.iter().map(|&((a, b), p)| ("capi", format!("v{a}.{b}.{p}"))));
    for c in combinations() {
        let (a, b, p) = c.ipam;
        wanted.push(("ipam", format!("v{a}.{b}.{p}")));
    }
    let missing: Vec<String> = wanted
        .iter()
        .filter(|(k, v)| !rows.contains(&((*k).to_owned(), v.clone())))
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    assert!(
        missing.is_empty(),
        "oracles/kube/crds.tsv has no row for {} (a tree pinning one is not judged): add the row, or a stand-in \
         row that says why",
        missing.join(", ")
    );
}
