//! Issue 27's property test, second half: over the fields of the Talos v1.13 schema that fleetc
//! does not own, `check` accepts every patch Talos machinery accepts. (The first half, random
//! patches of owned fields all refused, is tests/owned.rs.)
//!
//! The set is generated here from the committed schema (schemas/talos/v1.13/config.schema.json)
//! with a fixed seed: [`COUNT`] machine-config patches, each setting one to three random leaves
//! (a scalar, an enum value, a list of scalars, a map entry) of the v1alpha1 document that the
//! corpus fixture's emitted documents do not hold, that no owner row covers
//! (`emit::talos::owned::OWNERS`), and that are not identity or credential fields (R14,
//! `check::SECRET_FIELDS`). A string field with a `pattern` is left out (a generated string
//! would not match it). The set is committed (tests/corpus/generated-v1.13.patches, one
//! `id<TAB>patch` line each, the patch as one line of JSON) so that Talos machinery v1.13.9 can
//! judge the very same bytes: `oracles/corpus/check` runs the corpus oracle's `--generated` mode
//! (each patch at cluster level on the fixture's control-plane and worker configs, strict load,
//! `Validate`) and holds tests/corpus/generated-machinery-v1.13.tsv to it. This test fails when
//! the generated set is not the committed one (`UPDATE_GOLDEN=1` rewrites it; then run
//! `oracles/corpus/check --update`), when a verdict is missing or judged other bytes, when
//! machinery accepts too few for the property to mean something, and on any patch machinery
//! accepts that fleetc refuses, but for a credential (`patch-secret`, R14: fleetc's, not a free
//! field) and the ones tests/corpus/generated-known.tsv lists with their reason (a list that
//! only shrinks).
//!
//! Cost: fleetc compiles the fixture with the accepted patches in batches of [`BATCH`] (each
//! its own cluster-level `patch` file); a batch with an error is compiled again one patch at a
//! time. A batch without error proves each of its patches alone is accepted: fleetc's patch
//! checks look at one file against fleetc's documents, and the checks across files (a file
//! listed twice, an added node IP subnet beside another file's addresses) only add errors.

use std::collections::{BTreeMap, BTreeSet};

use fleetc::compile::{MapLoader, compile};
use fleetc::diag::Severity;
use fleetc::emit::talos::cluster_documents;
use fleetc::emit::talos::owned::{self, Scope};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::common;

const SEED: u64 = 0x0027_5eed_0fad_d17e;
const COUNT: usize = 160;
const BATCH: usize = 10;
/// The least number of generated patches machinery must accept.
const MIN_ACCEPTED: usize = 60;
const FIXTURE: &str = include_str!("corpus/fleet/fleet.kdl");
const PATCHES: &str = "tests/corpus/generated-v1.13.patches";
const MACHINERY: &str = "tests/corpus/generated-machinery-v1.13.tsv";
const CLUSTER_LINE: &str = "        cluster \"main\" {\n";
/// Generated patches machinery accepts and fleetc refuses today, each with its reason: the list
/// only shrinks (an entry fleetc accepts fails the test).
const KNOWN: &str = include_str!("corpus/generated-known.tsv");
const KNOWN_PATH: &str = "tests/corpus/generated-known.tsv";

/// xorshift64*: deterministic, so that the set replays.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A leaf the generator may set: its pointer in the v1alpha1 document and its schema.
struct Leaf {
    pointer: String,
    schema: Value,
}

fn resolve<'s>(defs: &'s Map<String, Value>, s: &'s Value) -> &'s Value {
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) => defs.get(r.trim_start_matches("#/$defs/")).map_or(s, |d| resolve(defs, d)),
        None => s,
    }
}

/// A scalar schema the generator can make a value for.
fn scalar(s: &Value) -> bool {
    if s.get("enum").is_some() {
        return true;
    }
    match s.get("type").and_then(Value::as_str) {
        Some("boolean" | "integer" | "number") => true,
        Some("string") => s.get("pattern").is_none(),
        _ => false,
    }
}

/// An object whose every field is a scalar or a list of scalars.
fn flat_object(defs: &Map<String, Value>, s: &Value) -> bool {
    s.get("properties").and_then(Value::as_object).is_some_and(|p| {
        !p.is_empty()
            && p.values().map(|v| resolve(defs, v)).all(|v| {
                scalar(v) || (v["type"] == "array" && v.get("items").is_some_and(|i| scalar(resolve(defs, i))))
            })
    })
}

fn leaves(defs: &Map<String, Value>, s: &Value, at: &str, depth: usize, out: &mut Vec<Leaf>) {
    let s = resolve(defs, s);
    if depth > 8 {
        return;
    }
    if scalar(s) {
        out.push(Leaf { pointer: at.to_owned(), schema: s.clone() });
        return;
    }
    match s.get("type").and_then(Value::as_str) {
        Some("array") => {
            // A list of scalars, or of objects whose fields are scalars (one item, with its
            // required fields and some others).
            if let Some(items) = s.get("items").map(|i| resolve(defs, i))
                && (scalar(items) || flat_object(defs, items))
            {
                out.push(Leaf { pointer: at.to_owned(), schema: s.clone() });
            }
        }
        Some("object") => {
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    leaves(defs, v, &format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), depth + 1, out);
                }
            } else if let Some(ap) = s.get("additionalProperties").filter(|a| a.is_object())
                && (scalar(resolve(defs, ap)) || ap.get("oneOf").is_some())
            {
                // A map: one generated key.
                out.push(Leaf { pointer: at.to_owned(), schema: s.clone() });
            }
        }
        _ => {}
    }
}

fn value(defs: &Map<String, Value>, s: &Value, rng: &mut Rng) -> Value {
    let s = resolve(defs, s);
    if let Some(Value::Array(e)) = s.get("enum") {
        return e[rng.below(e.len())].clone();
    }
    if let Some(Value::Array(alts)) = s.get("oneOf") {
        let simple: Vec<&Value> = alts.iter().filter(|a| scalar(resolve(defs, a))).collect();
        if let Some(a) = simple.first() {
            return value(defs, a, rng);
        }
    }
    match s.get("type").and_then(Value::as_str) {
        Some("boolean") => Value::Bool(rng.below(2) == 1),
        Some("integer") => Value::from(1 + rng.below(1000) as u64),
        Some("number") => Value::from(0.5 + rng.below(100) as f64),
        Some("string") => Value::from(format!("gen-{:04x}", rng.below(0x10000))),
        Some("array") => {
            let items = s.get("items").cloned().unwrap_or(Value::Null);
            Value::Array((0..1 + rng.below(2)).map(|_| value(defs, &items, rng)).collect())
        }
        Some("object") if s.get("properties").is_some() => {
            let props = s["properties"].as_object().unwrap();
            let required: Vec<&str> =
                s.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            let mut m = Map::new();
            for (k, v) in props {
                if required.contains(&k.as_str()) || rng.below(3) == 0 {
                    m.insert(k.clone(), value(defs, v, rng));
                }
            }
            Value::Object(m)
        }
        Some("object") => {
            let ap = s.get("additionalProperties").cloned().unwrap_or(Value::Null);
            let key = format!("gen-key-{}", rng.below(100));
            Value::Object([(key, value(defs, &ap, rng))].into_iter().collect())
        }
        _ => Value::Null,
    }
}

fn put(doc: &mut Value, pointer: &str, v: Value) {
    let segs: Vec<String> = pointer.split('/').skip(1).map(|s| s.replace("~1", "/").replace("~0", "~")).collect();
    let mut at = doc;
    for (i, s) in segs.iter().enumerate() {
        let m = at.as_object_mut().expect("an object on the way");
        if i + 1 == segs.len() {
            m.insert(s.clone(), v);
            return;
        }
        at = m.entry(s.clone()).or_insert_with(|| Value::Object(Map::new()));
        if !at.is_object() {
            return;
        }
    }
}

/// The fixture fleet with the given patch files added at cluster level.
fn fleet_with(patches: &[(String, String)]) -> (String, MapLoader) {
    let mut lines = String::from(CLUSTER_LINE);
    let mut loader = MapLoader::default();
    for (name, text) in patches {
        lines.push_str(&format!("            patch \"patches/{name}.json\"\n"));
        loader.files.insert(format!("patches/{name}.json"), text.clone());
    }
    (FIXTURE.replacen(CLUSTER_LINE, &lines, 1), loader)
}

/// The pointers (and their parents) the fixture's emitted documents hold, by kind, for every
/// machine a cluster-level patch reaches.
fn emitted_pointers() -> BTreeSet<(String, String)> {
    let (text, loader) = fleet_with(&[]);
    let c = compile("fleet.kdl", &text, &loader);
    let fleet = c.fleet.expect("the fixture resolves");
    let mut out = BTreeSet::new();
    for (env, cluster) in fleet.clusters() {
        let docs = cluster_documents(&fleet, env, cluster).expect("the fixture builds");
        for pool in cluster.pools() {
            let machines: Vec<Option<&fleetc::model::Machine>> =
                if pool.machines.is_empty() { vec![None] } else { pool.machines.iter().map(Some).collect() };
            for m in machines {
                let view = owned::emitted(&docs, &Scope { env, cluster, pool, machine: m });
                for ((kind, _), v) in &view {
                    for p in owned::leaves(v, "") {
                        let segs: Vec<&str> = p.split('/').skip(1).collect();
                        for i in 1..=segs.len() {
                            out.insert((kind.clone(), segs[..i].iter().map(|s| format!("/{s}")).collect()));
                        }
                    }
                }
            }
        }
    }
    out
}

/// The generated set: `(id, patch as one line of JSON)`.
fn generate() -> Vec<(String, String)> {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("schemas/talos/v1.13/config.schema.json")).unwrap(),
    )
    .unwrap();
    let defs = schema["$defs"].as_object().unwrap();
    let emitted = emitted_pointers();
    // Every document kind of the schema (its `oneOf`), with its non-owned leaves.
    let mut kinds: Vec<Kind> = Vec::new();
    for d in schema["oneOf"].as_array().unwrap() {
        let def = resolve(defs, d);
        let props = def["properties"].as_object().unwrap();
        let mut all = Vec::new();
        let (kind, api, named) = if props.contains_key("machine") {
            for top in ["machine", "cluster"] {
                leaves(defs, &props[top], &format!("/{top}"), 0, &mut all);
            }
            ("v1alpha1".to_owned(), None, false)
        } else {
            let Some(kind) = props["kind"]["enum"][0].as_str() else { continue };
            for (k, v) in props.iter().filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "name")) {
                leaves(defs, v, &format!("/{k}"), 0, &mut all);
            }
            (kind.to_owned(), props["apiVersion"]["enum"][0].as_str().map(str::to_owned), props.contains_key("name"))
        };
        let name = named.then(|| "gen-doc".to_owned());
        let leaves: Vec<Leaf> = all
            .into_iter()
            .filter(|l| {
                let under = |p: &str| l.pointer == p || l.pointer.starts_with(&format!("{p}/"));
                // A named document gets a name fleetc writes no document of; an unnamed one
                // (a singleton such as `HostnameConfig`) meets fleetc's.
                let mine = !named && emitted.contains(&(kind.clone(), l.pointer.clone()));
                !mine
                    && owned::owner(&kind, name.as_deref(), &l.pointer).is_none()
                    && !(kind == "v1alpha1" && fleetc::check::SECRET_FIELDS.iter().any(|p| under(p)))
            })
            .collect();
        if !leaves.is_empty() {
            kinds.push(Kind { kind, api, named, leaves });
        }
    }
    let total: usize = kinds.iter().map(|k| k.leaves.len()).sum();
    assert!(
        kinds.len() > 20 && total > 150,
        "only {total} non-owned leaves in {} kinds of the v1.13 schema",
        kinds.len()
    );
    let v1 = kinds.iter().find(|k| k.api.is_none()).expect("the machine config");
    let mut rng = Rng(SEED);
    (0..COUNT)
        .map(|i| {
            // Half the patches are the machine config, half another document.
            let k = if rng.below(2) == 0 { v1 } else { &kinds[rng.below(kinds.len())] };
            let mut doc = Value::Object(Map::new());
            if let Some(api) = &k.api {
                put(&mut doc, "/apiVersion", Value::from(api.as_str()));
                put(&mut doc, "/kind", Value::from(k.kind.as_str()));
            }
            if k.named {
                put(&mut doc, "/name", Value::from(format!("gen-doc-{}", rng.below(100))));
            }
            for _ in 0..1 + rng.below(3) {
                let leaf = &k.leaves[rng.below(k.leaves.len())];
                let v = value(defs, &leaf.schema, &mut rng);
                put(&mut doc, &leaf.pointer, v);
            }
            (format!("gen-{i:03}"), serde_json::to_string(&doc).unwrap())
        })
        .collect()
}

/// A document kind of the schema and the leaves the generator may set in it.
struct Kind {
    kind: String,
    /// `None` for the machine config (no `apiVersion`/`kind`).
    api: Option<String>,
    named: bool,
    leaves: Vec<Leaf>,
}

fn sha256(s: &str) -> String {
    Sha256::digest(s.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The errors fleetc reports for the fixture with `patches`, as `code: message` lines.
fn errors(patches: &[(String, String)]) -> Vec<String> {
    let (text, loader) = fleet_with(patches);
    let c = compile("fleet.kdl", &text, &loader);
    c.diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {}", d.code.name, d.message.replace('\n', " ")))
        .collect()
}

#[test]
fn fleetc_accepts_every_generated_non_owned_patch_that_machinery_accepts() {
    let set = generate();
    let text: String = set.iter().map(|(id, p)| format!("{id}\t{p}\n")).collect();
    let header = format!(
        "# Generated by tests/patch_property.rs (seed {SEED:#x}, {COUNT} patches over the non-owned fields of schemas/talos/v1.13): do not edit; UPDATE_GOLDEN=1 rewrites it\n"
    );
    let path = common::root().join(PATCHES);
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::write(&path, format!("{header}{text}")).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed,
        format!("{header}{text}"),
        "{PATCHES} is not the generated set (UPDATE_GOLDEN=1 rewrites it; then oracles/corpus/check --update judges it)"
    );
    // Machinery's verdicts (oracles/corpus/check --generated).
    let verdicts: BTreeMap<String, (String, String, String)> = std::fs::read_to_string(common::root().join(MACHINERY))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.splitn(6, '\t').collect();
            assert_eq!(f.len(), 6, "{MACHINERY}: a line without six columns: {l}");
            (f[0].to_owned(), (f[3].to_owned(), f[4].to_owned(), f[5].to_owned()))
        })
        .collect();
    let mut accepted = Vec::new();
    let mut refused = 0;
    // FLEETC_PROPERTY_REFUSED=1: also print the patches machinery refuses and fleetc accepts
    // (the other direction; printed, not asserted: the property is one-way).
    let other_way = std::env::var_os("FLEETC_PROPERTY_REFUSED").is_some();
    for (id, p) in &set {
        let (sum, verdict, _) = verdicts
            .get(id)
            .unwrap_or_else(|| panic!("{MACHINERY} has no verdict for {id}: run oracles/corpus/check --update"));
        assert_eq!(
            *sum,
            sha256(&format!("{p}\n")),
            "{id}: machinery judged other bytes: run oracles/corpus/check --update"
        );
        match verdict.as_str() {
            "accept" => accepted.push((id.clone(), p.clone())),
            _ => {
                refused += 1;
                if other_way && errors(&[(id.clone(), p.clone())]).is_empty() {
                    println!("machinery refuses, fleetc accepts: {id}: {p}\n    {}", verdicts[id].2);
                }
            }
        }
    }
    assert_eq!(verdicts.len(), set.len(), "{MACHINERY} judges patches the set does not have");
    assert!(accepted.len() >= MIN_ACCEPTED, "machinery accepts only {} of {COUNT} generated patches", accepted.len());
    let known: BTreeMap<&str, &str> = KNOWN
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split_once('\t').unwrap_or((l, "")))
        .collect();
    let (mut credentials, mut problems, mut seen) = (0, Vec::new(), BTreeSet::new());
    for batch in accepted.chunks(BATCH) {
        if errors(batch).is_empty() {
            continue;
        }
        for one in batch {
            let e = errors(std::slice::from_ref(one));
            if e.is_empty() {
                continue;
            }
            // A credential (a registry password, …) is fleetc's by R14 (`patch-secret`, never
            // overridable: the patch is committed and copied into out/), not a free field.
            if e.iter().all(|e| e.starts_with(fleetc::diag::codes::PATCH_SECRET.name)) {
                credentials += 1;
            } else if known.contains_key(one.0.as_str()) {
                seen.insert(one.0.clone());
            } else {
                problems.push(format!("{}: {}\n    {}", one.0, one.1, e.join("\n    ")));
            }
        }
    }
    for id in known.keys().filter(|id| !seen.contains(**id)) {
        problems.push(format!("{id} is accepted now: remove it from tests/corpus/generated-known.tsv"));
    }
    println!(
        "generated {COUNT}: machinery accepts {}, refuses {refused}; of the accepted, fleetc refuses {credentials} for a credential (R14) and {} known ({KNOWN_PATH})",
        accepted.len(),
        seen.len()
    );
    assert!(
        problems.is_empty(),
        "fleetc refuses patches of non-owned fields that machinery accepts:\n{}",
        problems.join("\n")
    );
}
