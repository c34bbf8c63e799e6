//! A patch's values as Talos's decoder reads them, before the schema judges them. Talos decodes
//! a patch with go.yaml.in/yaml/v4 (v4.0.0-rc.4, `KnownFields(true)`) into its Go structs
//! (siderolabs/talos v1.13.9 `pkg/machinery/config/configloader/internal/decoder/decoder.go`
//! l.15, l.73-75, `decode`), and that decoder converts some scalars where the JSON schema's
//! `type` would refuse them (`internal/libyaml/constructor.go`, `(*Constructor).scalar`):
//! - into a string field, any non-null scalar, as its text (`vm.dirty_ratio: 15` is `"15"`,
//!   `enable-aggregator-routing: true` is `"true"`; `out.SetString(n.Value)`);
//! - into a boolean field, the YAML 1.1 words `y`, `yes`, `on` (and their capitalised forms) as
//!   true and `n`, `no`, `off` as false, quoted or not;
//! - into an integer field, a float with no fraction (`1e3`); into a float field, an integer;
//! - a null into any field leaves it unset (`(*Constructor).null`; for a scalar field it is a
//!   no-op).
//!
//! No other conversion happens: a string never becomes an integer, a number never a boolean.
//! [`coerce`] applies exactly these to a patch document, guided by the schema, so that the
//! schema judges what the decoder produces. It also finds the v1alpha1 fields the machinery
//! decodes but its schema leaves out ([`pointers`], from `schemas/talos/<minor>/deprecated.json`),
//! and gives the whole view `check::patches` judges ([`decoder_view`]).

use serde_json::Value;

use super::schemas::TalosSchema;

/// A document as Talos's decoder reads it, for judging it with the minor's schema: without the
/// `$patch` directives, without the undocumented fields the decoder takes (judged on their own
/// by `check::patches`), its scalars converted as the decoder converts them (`coerce`, with
/// each scalar's text as serialized). `tests/talos_conformance.rs` judges the user's patch files
/// in out/ this way, as `check::patches` does.
pub fn decoder_view(minor: (u32, u32), doc: &Value) -> Value {
    let mut v = without_directives(doc);
    let Some(schema) = TalosSchema::load(minor) else { return v };
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("v1alpha1");
    if kind == "v1alpha1" {
        for top in schema.decoded().iter().filter(|f| f.within.is_none()) {
            for p in pointers(&v, &top.path) {
                remove(&mut v, &p);
            }
        }
    }
    if let Some(root) = schema.root(kind) {
        coerce(&mut v, root, schema.defs(), &|_| None, "");
    }
    v
}

/// The document without the `$patch` directives Talos's loader accepts in a patch
/// (`configloader.WithAllowPatchDelete`), which are no config fields: a field or list item that
/// is a `$patch: delete` is taken out whole (it deletes what is there, whatever its type,
/// siderolabs/talos v1.13.9 `configloader/internal/decoder/delete.go`), the directive itself
/// elsewhere.
pub fn without_directives(v: &Value) -> Value {
    let deletes = |v: &Value| v.get("$patch").and_then(Value::as_str) == Some("delete");
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, v)| *k != "$patch" && !deletes(v))
                .map(|(k, v)| (k.clone(), without_directives(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().filter(|v| !deletes(v)).map(without_directives).collect()),
        other => other.clone(),
    }
}

/// The subschemas a value must fit at this place: the schema itself with `$ref`s followed,
/// or each branch of its `oneOf`/`anyOf`.
fn alternatives<'a>(schema: &'a Value, defs: &'a Value) -> Vec<&'a Value> {
    let mut s = schema;
    for _ in 0..32 {
        match s.get("$ref").and_then(Value::as_str) {
            Some(r) => match r.rsplit('/').next().and_then(|n| defs.get(n)) {
                Some(d) => s = d,
                None => return vec![],
            },
            None => break,
        }
    }
    let branches: Vec<&Value> =
        ["oneOf", "anyOf"].iter().filter_map(|k| s.get(*k).and_then(Value::as_array)).flatten().collect();
    if branches.is_empty() { vec![s] } else { branches.into_iter().flat_map(|b| alternatives(b, defs)).collect() }
}

/// The JSON types a subschema names (`None`: any).
fn types(s: &Value) -> Option<Vec<&str>> {
    match s.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

fn takes(alts: &[&Value], t: &str) -> bool {
    alts.iter().any(|s| types(s).is_none_or(|ts| ts.contains(&t) || (t == "integer" && ts.contains(&"number"))))
}

const YAML11_TRUE: &[&str] = &["y", "Y", "yes", "Yes", "YES", "on", "On", "ON"];
const YAML11_FALSE: &[&str] = &["n", "N", "no", "No", "NO", "off", "Off", "OFF"];

/// The subschema of `key`'s value in an object at this place.
fn child<'a>(alts: &[&'a Value], key: &str) -> Option<&'a Value> {
    alts.iter().find_map(|s| s.get("properties").and_then(|p| p.get(key))).or_else(|| {
        alts.iter().find_map(|s| {
            // Talos's schemas use the pattern `.*` only: any key.
            s.get("patternProperties")
                .and_then(Value::as_object)
                .and_then(|p| p.values().next())
                .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
        })
    })
}

/// The machinery's types with their own `UnmarshalYAML` from a string, which the schema
/// generator renders as an object with no properties: `v1alpha1.Endpoint` (a URL,
/// siderolabs/talos v1.13.9 `pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`
/// l.1116-1135; `machine.logging.destinations[].endpoint`, `cluster.controlPlane.endpoint`).
const FROM_TEXT: &[&str] = &["#/$defs/v1alpha1.Endpoint"];

/// Converts `v` (at JSON pointer `at`) as the decoder would for `schema`; `raw` gives the
/// text of the scalar written at a pointer (a string field gets that text).
pub fn coerce(v: &mut Value, schema: &Value, defs: &Value, raw: &dyn Fn(&str) -> Option<String>, at: &str) {
    // A type that decodes itself from a string, which the schema shows as an empty object: the
    // decoder reads the string into the struct, so the schema judges that struct.
    if v.is_string() && schema.get("$ref").and_then(Value::as_str).is_some_and(|r| FROM_TEXT.contains(&r)) {
        *v = Value::Object(serde_json::Map::new());
        return;
    }
    let alts = alternatives(schema, defs);
    if alts.is_empty() {
        return;
    }
    match v {
        Value::Bool(_) | Value::Number(_) => {
            let own = match v {
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
                _ => "number",
            };
            // (An integer into a float field, or an integral float into an integer field, is
            // the same number to the schema.)
            if !takes(&alts, own) && takes(&alts, "string") {
                *v = Value::String(raw(at).unwrap_or_else(|| v.to_string()));
            }
        }
        Value::String(s) if !takes(&alts, "string") && takes(&alts, "boolean") => {
            if YAML11_TRUE.contains(&s.as_str()) {
                *v = Value::Bool(true);
            } else if YAML11_FALSE.contains(&s.as_str()) {
                *v = Value::Bool(false);
            }
        }
        Value::Object(m) => {
            // A null leaves the field unset: drop it where the schema does not take a null.
            m.retain(|k, x| !x.is_null() || child(&alts, k).is_none_or(|c| takes(&alternatives(c, defs), "null")));
            for (k, x) in m.iter_mut() {
                if let Some(c) = child(&alts, k) {
                    let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    coerce(x, c, defs, raw, &p);
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = alts.iter().find_map(|s| s.get("items")) {
                for (i, x) in a.iter_mut().enumerate() {
                    coerce(x, items, defs, raw, &format!("{at}/{i}"));
                }
            }
        }
        _ => {}
    }
}

/// The JSON pointers in `v` of a dotted field path (`machine.network.interfaces[].vip`: `[]`
/// is every item of a list or value of a map).
pub fn pointers(v: &Value, path: &str) -> Vec<String> {
    let mut at = vec![(String::new(), v)];
    for part in path.split('.') {
        let name = part.trim_end_matches("[]");
        let items = (part.len() - name.len()) / 2;
        let mut next = Vec::new();
        for (p, x) in at {
            if let Some(c) = x.get(name) {
                next.push((format!("{p}/{}", name.replace('~', "~0").replace('/', "~1")), c));
            }
        }
        for _ in 0..items {
            next = next
                .into_iter()
                .flat_map(|(p, x)| -> Vec<(String, &Value)> {
                    match x {
                        Value::Array(a) => a.iter().enumerate().map(|(i, c)| (format!("{p}/{i}"), c)).collect(),
                        Value::Object(m) => m
                            .iter()
                            .map(|(k, c)| (format!("{p}/{}", k.replace('~', "~0").replace('/', "~1")), c))
                            .collect(),
                        _ => Vec::new(),
                    }
                })
                .collect();
        }
        at = next;
    }
    at.into_iter().map(|(p, _)| p).collect()
}

/// Removes the value at a JSON pointer.
pub fn remove(v: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else { return };
    let key = last.replace("~1", "/").replace("~0", "~");
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.remove(&key);
        }
        Some(Value::Array(a)) => {
            if let Ok(i) = key.parse::<usize>()
                && i < a.len()
            {
                a.remove(i);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(v: Value, schema: Value) -> Value {
        let mut v = v;
        coerce(&mut v, &schema, &json!({}), &|_| None, "");
        v
    }

    #[test]
    fn scalars_into_a_string_field_become_their_text() {
        let s = json!({"type": "object", "patternProperties": {".*": {"type": "string"}}});
        let got = run(json!({"vm.dirty_ratio": 15, "a": true, "b": 1.5, "c": "x"}), s);
        assert_eq!(got, json!({"vm.dirty_ratio": "15", "a": "true", "b": "1.5", "c": "x"}));
    }

    #[test]
    fn the_reverse_is_not_done_except_yaml11_booleans() {
        let s = json!({"type": "object", "properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}, "o": {"type": "boolean"}}});
        let got = run(json!({"n": "15", "b": "yes", "o": "maybe"}), s);
        assert_eq!(got, json!({"n": "15", "b": true, "o": "maybe"}));
        let s = json!({"type": "object", "properties": {"b": {"type": "boolean"}}});
        assert_eq!(run(json!({"b": 1}), s), json!({"b": 1}), "a number never becomes a boolean");
    }

    #[test]
    fn one_of_string_or_list_takes_a_boolean_as_text() {
        let s = json!({"type": "object", "additionalProperties": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}});
        assert_eq!(run(json!({"enable-aggregator-routing": true}), s), json!({"enable-aggregator-routing": "true"}));
    }

    #[test]
    fn a_null_leaves_the_field_unset() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(run(json!({"a": null}), s), json!({}));
    }

    #[test]
    fn an_endpoint_is_read_from_its_url() {
        let schema = json!({"$ref": "#/$defs/v1alpha1.Endpoint"});
        let defs = json!({"v1alpha1.Endpoint": {"type": "object", "additionalProperties": false, "properties": {}}});
        let mut v = json!("tcp://127.0.0.1:6000");
        coerce(&mut v, &schema, &defs, &|_| None, "");
        assert_eq!(v, json!({}));
    }

    #[test]
    fn pointers_expand_lists() {
        let v = json!({"machine": {"network": {"interfaces": [{"vip": {}}, {"cidr": "x"}, {"vip": 1}]}}});
        assert_eq!(
            pointers(&v, "machine.network.interfaces[].vip"),
            vec!["/machine/network/interfaces/0/vip", "/machine/network/interfaces/2/vip"]
        );
    }
}
