//! The reference fleet applies no stand-in (issue 34 §3): `fleetc check` reports none of its
//! vendored manifests as `fleet::addons::stand-in`, and no file under `vendor/` carries the
//! marker (docs/addons.md, "Stand-ins"). Whether each file is the real render is
//! `oracles/renders/run`'s to prove (oracles/README.md, "Real add-on renders").

use crate::common;

#[test]
fn the_reference_fleet_reports_no_stand_in() {
    let c = common::compile_file(&common::root().join("fleet.kdl"));
    let found: Vec<&str> = c
        .diags
        .iter()
        .filter(|d| d.code.name == fleetc::diag::codes::ADDON_STAND_IN.name)
        .map(|d| d.message.as_str())
        .collect();
    assert!(found.is_empty(), "the reference fleet applies stand-ins: {found:?}");
}

#[test]
fn no_vendored_file_of_the_reference_fleet_is_marked_a_stand_in() {
    let dir = common::root().join("vendor");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(fleetc::model::stand_in(&text), None, "{} says it is a stand-in", path.display());
        read += 1;
    }
    assert!(read >= 7, "vendor/ holds the reference fleet's add-ons");
}
