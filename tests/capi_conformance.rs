//! Conformance: every Cluster API object fleetc emits (reference fleet and golden cases)
//! validates against the CRD schema of its kind and version in
//! `schemas/crds/` (committed), in a strict mode: an object node that lists `properties`
//! and does not preserve unknown fields rejects any other field (as `kubectl apply
//! --validate=strict` does). The test prints which kinds it covered and which have no schema
//! (operator, IPAM, cert-manager, core). No emitted object holds a null, an empty string, an
//! empty list or an empty map.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use fleetc::artifacts::ArtifactSet;
use fleetc::model::Fleet;
use fleetc::upstream::schemas::SchemaSet;
use serde_json::Value;

/// Closes every object schema that lists `properties`, unless it preserves unknown fields,
/// already says what else it takes, or describes object metadata.
fn strict(schema: &mut Value, under_metadata: bool) {
    let Value::Object(map) = schema else { return };
    let preserves = map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if map.contains_key("properties") && !preserves && !under_metadata && !map.contains_key("additionalProperties") {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (k, v) in props.iter_mut() {
            strict(v, under_metadata || k == "metadata");
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(v) = map.get_mut(key) {
            strict(v, under_metadata);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(vs)) = map.get_mut(key) {
            for v in vs {
                strict(v, under_metadata);
            }
        }
    }
}

fn empties(v: &Value, path: &str, found: &mut Vec<String>) {
    match v {
        Value::Null => found.push(format!("{path}: null")),
        Value::String(s) if s.is_empty() => found.push(format!("{path}: empty string")),
        Value::Array(a) if a.is_empty() => found.push(format!("{path}: empty list")),
        Value::Object(o) if o.is_empty() => found.push(format!("{path}: empty map")),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| empties(x, &format!("{path}[{i}]"), found)),
        Value::Object(o) => o.iter().for_each(|(k, x)| empties(x, &format!("{path}.{k}"), found)),
        _ => {}
    }
}

/// The emitted Cluster API objects of a build: `(file, object)`, vendored copies excluded.
fn objects(set: &ArtifactSet) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (path, bytes) in set.iter() {
        let vendored = path.contains("/providers/00-crds/") || path.contains("/providers/10-controllers/");
        if !path.starts_with("capi/") || !path.ends_with(".yaml") || vendored || path.ends_with("/sealed.yaml") {
            continue;
        }
        let text = std::str::from_utf8(bytes).expect("utf-8");
        let docs: Vec<Value> = serde_saphyr::from_multiple(text).unwrap_or_else(|e| panic!("{path}: {e}"));
        out.extend(docs.into_iter().map(|d| (path.to_owned(), d)));
    }
    out
}

fn builds() -> Vec<(String, Fleet, ArtifactSet)> {
    let mut v = Vec::new();
    for f in std::iter::once(common::root().join("fleet.kdl")).chain(common::golden_fleets()) {
        let c = common::compile_file(&f);
        if c.diags.has_errors() {
            continue;
        }
        if let (Some(fleet), Some(set)) = (c.fleet, c.artifacts) {
            v.push((f.display().to_string(), fleet, set));
        }
    }
    v
}

#[test]
fn emitted_objects_validate_strictly_and_hold_no_empty_value() {
    let mut validators: BTreeMap<(&'static str, Option<&'static str>), jsonschema::Validator> = BTreeMap::new();
    let mut covered: BTreeMap<String, usize> = BTreeMap::new();
    let mut uncovered: BTreeSet<String> = BTreeSet::new();
    let mut failures = Vec::new();
    let mut total = 0;
    for (name, fleet, set) in builds() {
        for (path, obj) in objects(&set) {
            // `capi/<mgmt>/…` goes to the management cluster: its pins choose the schemas.
            let mgmt = path.split('/').nth(1).unwrap_or_default();
            let cluster = fleet.clusters().map(|(_, c)| c).find(|c| c.name.value == mgmt).expect("management cluster");
            let schemas = SchemaSet::of(&fleet, cluster);
            let fleet = &name;
            total += 1;
            let api = obj["apiVersion"].as_str().unwrap_or_default().to_owned();
            let kind = obj["kind"].as_str().unwrap_or_default().to_owned();
            let mut found = Vec::new();
            empties(&obj, &kind, &mut found);
            for e in found {
                failures.push(format!("{fleet} {path}: {e}"));
            }
            let validator = schemas.schema(&api, &kind).map(|k| {
                let (file, pick) = (k.file, k.pick);
                // The committed file itself, read from schemas/ (the build embeds the same bytes),
                // with the definitions of its minor for a built-in kind.
                let v = validators.entry((file, k.definitions.map(|d| d.0))).or_insert_with(|| {
                    let read = |file: &str| -> Value {
                        let text = std::fs::read_to_string(common::schemas_dir().join(file)).expect(file);
                        serde_json::from_str(&text).expect("schema is JSON")
                    };
                    let mut schema = read(file);
                    if let Some((defs, _)) = k.definitions {
                        schema["$defs"] = read(defs)["$defs"].clone();
                    }
                    strict(&mut schema, false);
                    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{file}: {e}"))
                });
                (&*v, pick)
            });
            match validator {
                Some((v, pick)) => {
                    *covered.entry(format!("{kind} ({api}) by {pick}")).or_default() += 1;
                    for err in v.iter_errors(&obj) {
                        failures.push(format!("{fleet} {path}: {kind} {}: {err}", err.instance_path()));
                    }
                }
                None => {
                    uncovered.insert(format!("{kind} ({api})"));
                }
            }
        }
    }
    eprintln!("validated {total} objects");
    for (k, n) in &covered {
        eprintln!("covered: {k}: {n}");
    }
    for k in &uncovered {
        eprintln!("not covered (no schema in {} for its cluster's pins): {k}", Path::new("schemas/crds").display());
    }
    for must in [
        "Cluster",
        "ProxmoxCluster",
        "TalosControlPlane",
        "ProxmoxMachineTemplate",
        "TalosConfigTemplate",
        "MachineDeployment",
        "MachineHealthCheck",
    ] {
        assert!(covered.keys().any(|k| k.starts_with(&format!("{must} ("))), "no {must} was validated");
    }
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn strict_mode_rejects_an_unknown_field() {
    let dir = common::schemas_dir();
    let text =
        std::fs::read_to_string(dir.join("crds/cluster.x-k8s.io/v1.13.3/MachineHealthCheck_v1beta2.json")).unwrap();
    let mut schema: Value = serde_json::from_str(&text).unwrap();
    strict(&mut schema, false);
    let v = jsonschema::validator_for(&schema).unwrap();
    let good = serde_json::json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineHealthCheck",
        "metadata": {"name": "x"}, "spec": {"clusterName": "x", "selector": {"matchLabels": {"a": "b"}}}});
    assert!(v.is_valid(&good));
    let mut bad = good.clone();
    bad["spec"]["maxUnhealthy"] = Value::String("40%".into());
    assert!(!v.is_valid(&bad), "a v1beta1 field must be refused in v1beta2");
}
