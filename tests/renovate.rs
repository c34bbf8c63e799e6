//! The Renovate preset shipped in `renovate/fleetc.json`: every version pin of every fleet in
//! the repository (the reference fleet, each golden case's fleet and `check --base` fleets,
//! each `fleetc init` starter) is matched by exactly one of its regex managers, each manager
//! names a datasource and what it looks up, and no manager matches anything that is not a pin.
//! The matchStrings are applied as Renovate applies them, to the whole file (docs/versions.md,
//! "Renovate").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex::Regex;
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Add-on names the goldens invent to test fleetc itself (no upstream releases them): a pin
/// of theirs is not an upstream pin, so no manager is expected to match it.
const INVENTED_ADDONS: &[&str] = &["gone", "escape", "cni", "ccm", "csi"];

struct Manager {
    description: String,
    patterns: Vec<Regex>,
}

fn preset() -> Value {
    let text = std::fs::read_to_string(Path::new(ROOT).join("renovate/fleetc.json")).unwrap();
    serde_json::from_str(&text).expect("renovate/fleetc.json is JSON")
}

fn managers() -> Vec<Manager> {
    let preset = preset();
    let list = preset["customManagers"].as_array().expect("customManagers");
    list.iter()
        .map(|m| {
            let description = m["description"].as_str().unwrap_or_default().to_owned();
            assert_eq!(m["customType"], "regex", "{description}");
            assert!(m["datasourceTemplate"].is_string(), "{description}: no datasource");
            // A manager whose regex does not capture the package names it in a template.
            let captures_dep =
                m["matchStrings"].as_array().unwrap().iter().all(|s| s.as_str().unwrap().contains("(?<depName>"));
            assert!(captures_dep || m["depNameTemplate"].is_string(), "{description}: no depName");
            if m["datasourceTemplate"] == "helm" {
                let captures_url = m["matchStrings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|s| s.as_str().unwrap().contains("(?<registryUrl>"));
                assert!(
                    captures_url || m["registryUrlTemplate"].is_string(),
                    "{description}: a Helm chart needs its repository"
                );
            }
            let patterns = m["matchStrings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| Regex::new(s.as_str().unwrap()).unwrap_or_else(|e| panic!("{description}: {e}")))
                .collect();
            Manager { description, patterns }
        })
        .collect()
}

/// Every fleet file in the repository.
fn fleets() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut files = vec![root.join("fleet.kdl")];
    for f in ["scaleway", "proxmox", "metal"] {
        files.push(root.join(format!("src/init/{f}.kdl")));
    }
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root.join("golden")).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    for case in cases {
        for name in ["fleet.kdl", "base.kdl", "upgrade-base.kdl"] {
            let f = case.join(name);
            if f.is_file() {
                files.push(f);
            }
        }
    }
    files
}

/// The lines of `text` that pin a version, independently of the preset: a node fleetc reads
/// a release from, with its version.
fn pins(text: &str) -> Vec<usize> {
    let plain = Regex::new(
        r#"^\s*(talos|kubernetes|core|bootstrap-talos|control-plane-talos|infrastructure-proxmox|ipam-in-cluster) ""#,
    )
    .unwrap();
    let property =
        Regex::new(r#"^\s*(argocd|operator|cert-manager|addon "([^"]+)"|app "[^"]+") .*\bversion=""#).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            plain.is_match(l)
                || property.captures(l).is_some_and(|c| c.get(2).is_none_or(|a| !INVENTED_ADDONS.contains(&a.as_str())))
        })
        .map(|(i, _)| i + 1)
        .collect()
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

#[test]
fn every_pin_of_every_fleet_is_matched_by_exactly_one_manager() {
    let managers = managers();
    let mut problems = Vec::new();
    let mut counted = 0;
    for file in fleets() {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(ROOT).unwrap().display().to_string();
        // line → the managers whose currentValue lies on it
        let mut hits: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        for m in &managers {
            for re in &m.patterns {
                for c in re.captures_iter(&text) {
                    let v = c.name("currentValue").expect("every matchString captures currentValue");
                    hits.entry(line_of(&text, v.start())).or_default().push(&m.description);
                }
            }
        }
        let pins = pins(&text);
        for line in &pins {
            counted += 1;
            match hits.get(line).map(Vec::len).unwrap_or(0) {
                1 => {}
                0 => problems.push(format!("{shown}:{line}: no manager matches this pin")),
                _ => problems.push(format!("{shown}:{line}: several managers match: {:?}", hits[line])),
            }
        }
        for (line, who) in &hits {
            if !pins.contains(line) {
                problems.push(format!("{shown}:{line}: {who:?} match a line that is not a pin"));
            }
        }
    }
    assert!(counted > 300, "only {counted} pins found: the pin finder is broken");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_preset_groups_talos_and_refuses_minor_jumps() {
    // Talos and Kubernetes move one minor at a time (fleet::upgrade::*-minor-skipped): the
    // preset asks Renovate for one PR per minor, never one jump across several.
    let preset = preset();
    let rules = preset["packageRules"].as_array().unwrap();
    let talos = rules
        .iter()
        .find(|r| {
            r["matchDepNames"].as_array().is_some_and(|d| d.iter().any(|n| n == "siderolabs/talos"))
                && r["separateMultipleMinor"] == true
        })
        .expect("a rule separating Talos minors");
    assert_eq!(talos["automerge"], false);
    assert!(talos["matchDepNames"].as_array().unwrap().iter().any(|n| n == "ghcr.io/siderolabs/kubelet"));
}
