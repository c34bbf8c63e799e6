//! Conformance: every Talos document fleetc emits, for the reference fleet and for every golden
//! case that builds, validates against the Talos config schema of its cluster's Talos version
//! (`schemas/talos/<version>/config.schema.json`, committed). Each YAML document is parsed on
//! its own with YAML 1.2 rules; a `v1alpha1` patch (no `kind`) is validated with
//! `version: v1alpha1` added, as Talos reads a complete config.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The schema directory for a Talos minor: `v1.13`, or a pre-release such as `v1.14.0-rc.1`.
fn schema_dir(root: &Path, major: u32, minor: u32) -> Option<PathBuf> {
    let prefix = format!("v{major}.{minor}");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name == prefix || name.starts_with(&format!("{prefix}."))
        })
        .collect();
    dirs.sort();
    dirs.pop()
}

/// YAML 1.2 core schema: only `true`/`false` are booleans, no legacy octals.
fn parse_yaml12(text: &str) -> Vec<Value> {
    let options = serde_saphyr::options! { strict_booleans: true, legacy_octal_numbers: false };
    serde_saphyr::from_multiple_with_options(text, options).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

struct Schemas {
    root: PathBuf,
    loaded: BTreeMap<PathBuf, jsonschema::Validator>,
}

impl Schemas {
    fn validator(&mut self, major: u32, minor: u32) -> (&jsonschema::Validator, String) {
        let dir = schema_dir(&self.root, major, minor)
            .unwrap_or_else(|| panic!("no Talos schema for {major}.{minor} in {}", self.root.display()));
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let v = self.loaded.entry(dir.clone()).or_insert_with(|| {
            let text = std::fs::read_to_string(dir.join("config.schema.json")).unwrap();
            let schema: Value = serde_json::from_str(&text).unwrap();
            jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        });
        (v, name)
    }
}

fn with_version(mut doc: Value) -> Value {
    if doc.get("kind").is_none()
        && let Value::Object(m) = &mut doc
    {
        m.insert("version".into(), Value::String("v1alpha1".into()));
    }
    doc
}

#[test]
fn every_talos_document_validates_against_its_version_schema() {
    let mut schemas = Schemas { root: common::schemas_dir().join("talos"), loaded: BTreeMap::new() };
    let mut fleets = vec![common::root().join("fleet.kdl")];
    fleets.extend(common::golden_fleets());
    let mut failures = Vec::new();
    // (schema dir, kind) → documents validated
    let mut covered: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut files = 0;
    for path in &fleets {
        let c = common::compile_file(path);
        let (Some(fleet), Some(set)) = (&c.fleet, &c.artifacts) else { panic!("{} does not build", path.display()) };
        let label = path.strip_prefix(common::root()).unwrap_or(path).display().to_string();
        for (env, cluster) in fleet.clusters() {
            let dir = format!("talos/{}/{}/", env.name, cluster.name);
            // The document model fleetc writes for this cluster (versions/talos.kdl; the 1.14
            // model through talosctl, the 1.13 model through a consumer on 1.13 machinery),
            // and for the v1alpha1 document the form of the generators' contract (1.13 on 1.14
            // nodes), which the 1.14 machinery accepts (oracles/talos).
            let (major, minor) = fleetc::upstream::talos::cluster_documents(fleet, env, cluster);
            let base = (major, minor).min(fleetc::upstream::talos::table().generator_contract(cluster.talos.value));
            let mut cluster_files = 0;
            for (p, bytes) in set.iter().filter(|(p, _)| p.starts_with(&dir)) {
                cluster_files += 1;
                files += 1;
                let text = std::str::from_utf8(bytes).unwrap();
                for (i, doc) in parse_yaml12(text).into_iter().enumerate() {
                    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("v1alpha1").to_owned();
                    let (major, minor) = if kind == "v1alpha1" { base } else { (major, minor) };
                    let (validator, schema_name) = schemas.validator(major, minor);
                    // A user's patch is judged as Talos's decoder reads it (scalars into string
                    // fields, the deprecated fields it still decodes, `$patch` directives), as
                    // `check::patches` judges it.
                    let doc = if p.contains("/patches/") {
                        fleetc::upstream::talos_decode::decoder_view((major, minor), &doc)
                    } else {
                        doc
                    };
                    let doc = with_version(doc);
                    let errors: Vec<String> =
                        validator.iter_errors(&doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
                    if errors.is_empty() {
                        *covered.entry((schema_name.clone(), kind)).or_default() += 1;
                    } else {
                        failures.push(format!(
                            "{label}: {p} document {i} ({kind}) vs {schema_name}:\n  {}",
                            errors.join("\n  ")
                        ));
                    }
                }
            }
            assert!(cluster_files > 0, "{label}: no Talos documents for cluster `{}`", cluster.name);
        }
    }
    eprintln!("validated {files} files from {} fleets:", fleets.len());
    for ((schema, kind), n) in &covered {
        eprintln!("  {schema:<14} {kind:<18} {n}");
    }
    assert!(failures.is_empty(), "{} documents do not validate:\n{}", failures.len(), failures.join("\n"));
    for minor in ["v1.12", "v1.13"] {
        assert!(covered.keys().any(|(s, _)| s == minor), "no document was validated against {minor}");
    }
}

/// The validation is not vacuous: a field the schema does not know, or a v1alpha1 field that
/// Talos 1.14 moved out, is refused.
#[test]
fn the_schemas_refuse_what_they_do_not_know() {
    let mut schemas = Schemas { root: common::schemas_dir().join("talos"), loaded: BTreeMap::new() };
    let unknown = serde_json::json!({"apiVersion": "v1alpha1", "kind": "VolumeConfig", "name": "EPHEMERAL", "provisioning": {"size": "1GB"}});
    assert!(!schemas.validator(1, 13).0.is_valid(&unknown));
    let install = with_version(serde_json::json!({"machine": {"install": {"image": "x"}}}));
    assert!(schemas.validator(1, 13).0.is_valid(&install));
    assert!(!schemas.validator(1, 14).0.is_valid(&install), "1.14 moved machine.install out of v1alpha1");
}
