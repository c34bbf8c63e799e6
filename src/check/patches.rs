//! The user's Talos patches (`patch "…"`): every document is checked against the Talos config
//! schema of each Talos version it reaches (`schemas/talos/<minor>/config.schema.json`,
//! embedded by `upstream::schemas`), and for key material, never accepted (R14, F11; private
//! keys as `upstream::key_material` recognizes them in fleet.kdl too). What a patch changes of
//! the fields fleetc writes and the rules it enforces (R15, R17, R18, R21, …; `overrides=`) is
//! judged against the emitted documents, in `emit::talos::owned`. Diagnostics point into the
//! patch file, with the `patch` line as related.

use std::collections::BTreeMap;

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::patch::PatchDocument;
use crate::model::{Cluster, Fleet, Patch, Version};
use crate::upstream::key_material::{self, Key};
use crate::upstream::schemas::TalosSchema;

/// The v1alpha1 fields that hold the cluster's identity or a credential (R14): they come
/// from the sealed secrets bundle at apply time.
const SECRET_FIELDS: &[&str] = &[
    "/machine/ca",
    "/machine/token",
    "/cluster/id",
    "/cluster/secret",
    "/cluster/token",
    "/cluster/ca",
    "/cluster/aggregatorCA",
    "/cluster/serviceAccount",
    "/cluster/aescbcEncryptionSecret",
    "/cluster/secretboxEncryptionSecret",
    "/cluster/etcd/ca",
];

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    let mut schemas: BTreeMap<(u32, u32), Option<TalosSchema>> = BTreeMap::new();
    for (_, cluster) in fleet.clusters() {
        // The patch merges into the document model fleetc writes for this Talos (the 1.13
        // model on 1.14 nodes, versions/talos.kdl): that model's schema judges it, and the
        // node's machinery judges the merged config in the harness (oracles/talos).
        let model = crate::upstream::talos::table().documents(cluster.talos.value);
        let talos = Version::new(model.0, model.1, 0);
        let schema = schemas.entry(model).or_insert_with(|| TalosSchema::load(model));
        for pool in cluster.pools() {
            let node_patches = pool.machines.iter().flat_map(|m| &m.settings.patches);
            for patch in pool.patches.iter().chain(node_patches) {
                check_outside_values(patch, diags);
                for doc in &patch.file.documents {
                    if let Some(schema) = schema.as_mut() {
                        check_schema(patch, doc, talos, schema, diags);
                    }
                    check_rules(patch, doc, cluster, diags);
                }
            }
        }
    }
}

/// `/machine/install/image` → `machine.install.image`
fn dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".").replace("~1", "/").replace("~0", "~")
}

/// The document without the `$patch` directives Talos's loader accepts in a patch
/// (`configloader.WithAllowPatchDelete`), which are no config fields.
fn without_directives(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter().filter(|(k, _)| *k != "$patch").map(|(k, v)| (k.clone(), without_directives(v))).collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_directives).collect()),
        other => other.clone(),
    }
}

/// `talos` is the document model's minor (its patch number is not used).
fn check_schema(patch: &Patch, doc: &PatchDocument, talos: Version, schema: &mut TalosSchema, diags: &mut Diagnostics) {
    let version = format!("v{}.{}", talos.major, talos.minor);
    let kind = doc.kind().to_owned();
    let Some(validator) = schema.validator(&kind) else {
        diags.push(
            Diagnostic::new(&codes::PATCH_SCHEMA, format!("Talos {version} has no config document `{kind}`"))
                .at(doc.place("/kind"))
                .label("unknown kind")
                .related(patch.span, "patch used here"),
        );
        return;
    };
    // A named document deleted as a whole carries only what names it.
    if doc.value.get("$patch").and_then(Value::as_str) == Some("delete") && kind != "v1alpha1" {
        return;
    }
    let value = without_directives(&doc.value);
    for e in validator.iter_errors(&value) {
        let at = e.instance_path().to_string();
        let (span, message, label) = match e.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let field = unexpected.first().cloned().unwrap_or_default();
                let p = format!("{at}/{}", field.replace('~', "~0").replace('/', "~1"));
                let what = if kind == "v1alpha1" { "the machine config" } else { &kind };
                (
                    doc.key_place(&p),
                    format!("`{}` is not a field of {what} in Talos {version}", dotted(&p)),
                    "unknown field",
                )
            }
            _ => {
                let field = if at.is_empty() { kind.clone() } else { dotted(&at) };
                (doc.place(&at), format!("`{field}` is not valid for Talos {version}: {e}"), "invalid here")
            }
        };
        diags.push(
            Diagnostic::new(&codes::PATCH_SCHEMA, message).at(span).label(label).related(patch.span, "patch used here"),
        );
    }
}

fn check_rules(patch: &Patch, doc: &PatchDocument, _cluster: &Cluster, diags: &mut Diagnostics) {
    // What a patch changes of fleetc's own fields and rules (R15, R17, R21, …) is judged
    // against the emitted documents, in `emit::talos::owned`; here only key material.
    let v = &doc.value;
    if doc.kind() == "v1alpha1" {
        for p in SECRET_FIELDS {
            if v.pointer(p).is_some() {
                secret(patch, doc, p, "holds the cluster's identity", diags);
            }
        }
    }
    for (p, s) in strings(v, String::new()) {
        match key_material::find(&s) {
            Some((Key::Pem, _)) => secret(patch, doc, &p, "holds a PEM private key", diags),
            Some((key, _)) => secret(patch, doc, &p, &format!("holds {}", key.describe()), diags),
            None => {}
        }
    }
}

fn secret(patch: &Patch, doc: &PatchDocument, pointer: &str, what: &str, diags: &mut Diagnostics) {
    diags.push(
        Diagnostic::new(&codes::PATCH_SECRET, format!("`{}` {what} (`{}`)", patch.path.value, dotted(pointer)))
            .at(doc.place(pointer))
            .label("key material")
            .related(patch.span, "patch used here"),
    );
}

/// A private key outside every value of a patch file: in a comment, or in a file that does not
/// parse. Its bytes reach out/ as they are (`emit::talos::patches` copies the file, comments
/// included), so such a key is refused like one in a value (R14, F11), at its place in the file.
fn check_outside_values(patch: &Patch, diags: &mut Diagnostics) {
    let in_a_value = patch
        .file
        .documents
        .iter()
        .any(|d| strings(&d.value, String::new()).iter().any(|(_, s)| key_material::find(s).is_some()));
    let Some((key, at)) = key_material::find(&patch.file.text).filter(|_| !in_a_value) else { return };
    let place = if patch.file.documents.is_empty() { "" } else { " outside its values (in a comment)" };
    diags.push(
        Diagnostic::new(&codes::PATCH_SECRET, format!("`{}` holds {}{place}", patch.path.value, key.describe()))
            .at(Span::new(patch.file.id, at.start, at.end - at.start))
            .label("key material")
            .related(patch.span, "patch used here"),
    );
}

/// Every string of a document with its JSON pointer.
fn strings(v: &Value, at: String) -> Vec<(String, String)> {
    match v {
        Value::String(s) => vec![(at, s.clone())],
        Value::Array(a) => a.iter().enumerate().flat_map(|(i, x)| strings(x, format!("{at}/{i}"))).collect(),
        Value::Object(m) => m
            .iter()
            .flat_map(|(k, x)| strings(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"))))
            .collect(),
        _ => Vec::new(),
    }
}
