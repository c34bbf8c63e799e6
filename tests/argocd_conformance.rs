//! Conformance: every Argo CD object fleetc emits (reference fleet and every golden case that
//! builds) validates against the CRD schemas in `schemas/crds/argoproj.io/v3.2.1/` (committed; Argo CD 3.2.1, the version the fleets pin),
//! made strict the way the API server is under `kubectl apply --validate=strict`: every object
//! node that lists `properties` and does not say `x-kubernetes-preserve-unknown-fields: true`
//! rejects fields it does not list. The test prints which kinds it covered and which it could
//! not (no schema in `schemas/crds/`).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

/// Closes every object schema that lists `properties`, unless it preserves unknown fields,
/// already says what extra properties may be (a map), or is `metadata` (left to the server).
fn strict(schema: &mut Value) {
    fn walk(node: &mut Value, key: Option<&str>) {
        match node {
            Value::Object(map) => {
                let preserve = map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
                if map.contains_key("properties")
                    && !preserve
                    && !map.contains_key("additionalProperties")
                    && key != Some("metadata")
                {
                    map.insert("additionalProperties".into(), Value::Bool(false));
                }
                for (k, v) in map.iter_mut() {
                    if k == "properties" {
                        if let Value::Object(props) = v {
                            for (name, p) in props.iter_mut() {
                                walk(p, Some(name));
                            }
                        }
                    } else {
                        walk(v, None);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, None)),
            _ => {}
        }
    }
    walk(schema, None);
}

fn schemas(dir: &Path) -> BTreeMap<String, jsonschema::Validator> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir.join("crds/argoproj.io/v3.2.1")).expect("argoproj.io schemas") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let kind = path.file_stem().unwrap().to_string_lossy().split('_').next().unwrap().to_owned();
        let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        strict(&mut schema);
        let v = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.insert(format!("argoproj.io/v1alpha1/{kind}"), v);
    }
    out
}

/// Every YAML document under `argocd/` of every fleet that builds, with its file.
fn emitted() -> Vec<(String, Value)> {
    let mut sets = vec![("fleet.kdl".to_owned(), common::reference_artifacts())];
    for f in common::golden_fleets() {
        let c = common::compile_file(&f);
        if let Some(set) = c.artifacts {
            sets.push((f.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned(), set));
        }
    }
    let mut docs = Vec::new();
    for (fleet, set) in sets {
        for (path, bytes) in set.iter() {
            if !path.starts_with("argocd/") {
                continue;
            }
            let values: Vec<Value> = serde_saphyr::from_multiple(std::str::from_utf8(bytes).unwrap())
                .unwrap_or_else(|e| panic!("{fleet}:{path}: {e}"));
            docs.extend(values.into_iter().map(|v| (format!("{fleet}:{path}"), v)));
        }
    }
    docs
}

fn nulls(v: &Value, at: &str, found: &mut Vec<String>) {
    match v {
        Value::Null => found.push(at.to_owned()),
        Value::Object(m) => m.iter().for_each(|(k, v)| nulls(v, &format!("{at}.{k}"), found)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| nulls(v, &format!("{at}[{i}]"), found)),
        _ => {}
    }
}

#[test]
fn argocd_objects_conform_strictly() {
    let validators = schemas(&common::schemas_dir());
    assert!(validators.contains_key("argoproj.io/v1alpha1/Application"));
    assert!(validators.contains_key("argoproj.io/v1alpha1/AppProject"));
    let mut covered: BTreeMap<String, usize> = BTreeMap::new();
    let mut uncovered: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for (file, doc) in emitted() {
        let mut n = Vec::new();
        nulls(&doc, "", &mut n);
        if !n.is_empty() {
            failures.push(format!("{file}: null at {n:?}"));
        }
        let kind = format!("{}/{}", doc["apiVersion"].as_str().unwrap_or("?"), doc["kind"].as_str().unwrap_or("?"));
        match validators.get(&kind) {
            Some(v) => {
                *covered.entry(kind.clone()).or_default() += 1;
                for e in v.iter_errors(&doc) {
                    failures.push(format!("{file}: {kind} {}: {e}", e.instance_path()));
                }
            }
            None => *uncovered.entry(kind).or_default() += 1,
        }
    }
    eprintln!("covered (validated): {covered:?}");
    eprintln!("not covered (no schema in schemas/crds): {uncovered:?}");
    assert!(covered.get("argoproj.io/v1alpha1/Application").is_some_and(|n| *n > 0));
    assert!(covered.get("argoproj.io/v1alpha1/AppProject").is_some_and(|n| *n > 0));
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
}

/// The strict mode is strict: an unknown field is refused where the schema does not preserve
/// unknown fields, and accepted where it does (Helm `valuesObject`).
#[test]
fn strict_schema_refuses_unknown_fields() {
    let validators = schemas(&common::schemas_dir());
    let app = &validators["argoproj.io/v1alpha1/Application"];
    let good = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "x", "namespace": "argocd", "annotations": {"a": "b"}},
        "spec": {"project": "p", "destination": {"server": "https://kubernetes.default.svc"},
                 "source": {"repoURL": "https://git.example.org/x.git", "path": "x",
                            "helm": {"valuesObject": {"anything": {"goes": 1}}}},
                 "syncPolicy": {"automated": {"prune": true, "selfHeal": true}}}
    });
    assert!(app.is_valid(&good), "{:?}", app.iter_errors(&good).map(|e| e.to_string()).collect::<Vec<_>>());
    let mut bad = good.clone();
    bad["spec"]["syncPolicy"]["automated"]["selfheal"] = json!(true);
    assert!(!app.is_valid(&bad), "a misspelt field must be refused");
    let mut bad = good;
    bad["spec"]["sourcez"] = json!({});
    assert!(!app.is_valid(&bad));
    let project = &validators["argoproj.io/v1alpha1/AppProject"];
    let bad = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": {"name": "p"},
                     "spec": {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "names": ["x"]}]}});
    assert!(!project.is_valid(&bad));
}
