//! fleetc owns what it emits (`emit::talos::owned`): every field an emitter writes has an owner
//! row, over the reference fleet and every golden fleet that builds; the docs print the same
//! table; the rules a patch may override are the table's; and random patches that set, add to
//! or delete random owned fields of a fleet are all refused, but for additions to a list whose
//! additions keep fleetc's items (the certSANs: accepted) (a deterministic pseudo-random walk,
//! in the spirit of tests/robustness.rs, without a new crate).

use crate::common;

use std::collections::BTreeMap;

use fleetc::compile::{MapLoader, compile};
use fleetc::diag::codes;
use fleetc::emit::talos::cluster_documents;
use fleetc::emit::talos::owned::{self, Scope};
use fleetc::model::Fleet;
use serde_json::Value;

/// Every (document kind, name, pointer) an emitter writes for some machine of `fleet`.
fn emitted_fields(fleet: &Fleet) -> Vec<(String, Option<String>, String)> {
    let mut out = Vec::new();
    for (env, cluster) in fleet.clusters() {
        let docs = cluster_documents(fleet, env, cluster).expect("the fleet builds");
        for pool in cluster.pools() {
            let mut scopes = vec![Scope { env, cluster, pool, machine: None }];
            if !cluster.is_managed() {
                scopes.extend(pool.machines.iter().map(|m| Scope { env, cluster, pool, machine: Some(m) }));
            }
            for s in &scopes {
                for ((kind, name), v) in owned::emitted(&docs, s) {
                    for p in owned::leaves(&v, "") {
                        if !owned::is_identity(&kind, &p) {
                            out.push((kind.clone(), name.clone(), p));
                        }
                    }
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn every_field_an_emitter_writes_has_an_owner() {
    let mut fleets = vec![common::root().join("fleet.kdl")];
    fleets.extend(common::golden_fleets());
    let mut missing = Vec::new();
    let mut seen = 0;
    for path in fleets {
        let c = common::compile_file(&path);
        let Some(fleet) = c.fleet.filter(|_| c.artifacts.is_some()) else { continue };
        for (kind, name, p) in emitted_fields(&fleet) {
            seen += 1;
            if owned::owner(&kind, name.as_deref(), &p).is_none() {
                missing.push(format!("{}: {kind} {} {p}", path.display(), name.unwrap_or_default()));
            }
        }
    }
    assert!(seen > 100, "only {seen} emitted fields found");
    assert!(
        missing.is_empty(),
        "emitted fields with no owner row in emit::talos::owned::OWNERS:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_docs_print_the_ownership_table() {
    let doc = std::fs::read_to_string(common::root().join("docs/fleet-language.md")).unwrap();
    let (start, end) =
        ("<!-- owned-fields:start (generated from emit::talos::owned::OWNERS) -->\n", "<!-- owned-fields:end -->");
    let from = doc.find(start).expect("the start marker") + start.len();
    let to = doc[from..].find(end).expect("the end marker") + from;
    // `UPDATE_GOLDEN=1` rewrites the block, as it rewrites the goldens.
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        let text = format!("{}{}{}", &doc[..from], owned::table_markdown(), &doc[to..]);
        std::fs::write(common::root().join("docs/fleet-language.md"), text).unwrap();
        return;
    }
    assert_eq!(doc[from..to], owned::table_markdown(), "docs/fleet-language.md's table differs from the code's");
}

#[test]
fn a_patch_may_override_exactly_the_rules_of_the_owned_fields() {
    let table: Vec<&str> = owned::rules().into_iter().collect();
    assert_eq!(fleetc::model::patch::OVERRIDABLE, table.as_slice());
}

/// xorshift64*: deterministic, so that a failure replays.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A value of the same type as `v`, and different.
fn other(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(format!("{s}-patched")),
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) => Value::from(n.as_u64().map_or(1, |n| if n > 1 { n - 1 } else { n + 1 })),
        Value::Array(a) => Value::Array(vec![a.first().map_or(Value::String("patched".into()), other)]),
        Value::Object(m) if m.is_empty() => Value::String("patched".into()),
        // A list item keeps its `name`: in a list keyed by name (`inlineManifests`) an item of
        // another name is an addition, which a patch may make.
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), if k == "name" { x.clone() } else { other(x) })).collect())
        }
        Value::Null => Value::String("patched".into()),
    }
}

/// The patch document that puts `value` at `pointer` of the document `id`.
fn patch_doc(kind: &str, name: Option<&str>, pointer: &str, value: Value) -> Value {
    let mut v = value;
    for seg in pointer.split('/').skip(1).collect::<Vec<_>>().into_iter().rev() {
        let key = seg.replace("~1", "/").replace("~0", "~");
        v = Value::Object([(key, v)].into_iter().collect());
    }
    if kind != "v1alpha1" {
        let Value::Object(m) = &mut v else { unreachable!() };
        m.insert("apiVersion".into(), "v1alpha1".into());
        m.insert("kind".into(), kind.into());
        if let Some(n) = name {
            m.insert("name".into(), n.into());
        }
    }
    v
}

#[test]
fn random_patches_of_owned_fields_are_all_refused() {
    let dir = common::root().join("golden/nodes-named");
    let loader = |patch: Option<String>| {
        let mut l = MapLoader::default();
        for rel in ["apps/hello/kustomization.yaml", "patches/cp-1-kubelet.yaml"] {
            if let Ok(t) = std::fs::read_to_string(dir.join(rel)) {
                l.files.insert(rel.to_owned(), t);
            }
        }
        if let Some(p) = patch {
            l.files.insert("patches/cp-1-kubelet.yaml".into(), p);
        }
        l
    };
    let text = std::fs::read_to_string(dir.join("fleet.kdl")).unwrap();
    let c = compile("fleet.kdl", &text, &loader(None));
    let fleet = c.fleet.expect("nodes-named resolves");
    // The fields the node patch of cp-1 reaches: its own view.
    let (env, cluster) = fleet.clusters().next().unwrap();
    let docs = cluster_documents(&fleet, env, cluster).unwrap();
    let pool = &cluster.control_plane;
    let m = pool.machines.iter().find(|m| m.name.as_ref().is_some_and(|n| n.value == "cp-1")).unwrap();
    let view: BTreeMap<_, Value> = owned::emitted(&docs, &Scope { env, cluster, pool, machine: Some(m) });
    let fields: Vec<(String, Option<String>, String, Value)> = view
        .iter()
        .flat_map(|((k, n), v)| {
            owned::leaves(v, "").into_iter().filter(|p| !owned::is_identity(k, p)).map(|p| {
                let leaf = v.pointer(&p).cloned().unwrap_or(Value::Null);
                (k.clone(), n.clone(), p, leaf)
            })
        })
        .collect();
    assert!(fields.len() > 20, "{fields:?}");
    let mut rng = Rng(0x5eed_f1ee_7c0d_e001);
    let refusing = [codes::PATCH_OWNED_FIELD.name, codes::PATCH_DROPS_SELECTOR.name];
    let mut additions = 0;
    for round in 0..200 {
        let (kind, name, pointer, leaf) = &fields[rng.below(fields.len())];
        let mode = rng.below(3);
        let doc = match mode {
            0 => patch_doc(kind, name.as_deref(), pointer, other(leaf)),
            // `$patch: delete` on the field, or on one of its parents (the document itself
            // for a named one).
            1 => {
                let segs: Vec<&str> = pointer.split('/').skip(1).collect();
                let min = usize::from(kind == "v1alpha1");
                let depth = min + rng.below(segs.len() + 1 - min);
                let at: String = segs[..depth].iter().map(|s| format!("/{s}")).collect();
                if at.is_empty() {
                    let mut d = patch_doc(kind, name.as_deref(), "", Value::Object(Default::default()));
                    d.as_object_mut().unwrap().insert("$patch".into(), "delete".into());
                    d
                } else {
                    let del = Value::Object([("$patch".to_owned(), Value::from("delete"))].into_iter().collect());
                    patch_doc(kind, name.as_deref(), &at, del)
                }
            }
            // A list gets one more item; anything else another value.
            _ => match leaf {
                Value::Array(a) => {
                    let mut more = a.clone();
                    more.push(a.first().map_or(Value::from("patched"), other));
                    patch_doc(kind, name.as_deref(), pointer, Value::Array(more))
                }
                _ => patch_doc(kind, name.as_deref(), pointer, other(leaf)),
            },
        };
        let yaml = serde_json::to_string_pretty(&doc).unwrap();
        let c = compile("fleet.kdl", &text, &loader(Some(yaml.clone())));
        let fleet = c.fleet.expect("resolves");
        let found = owned::check(&fleet);
        // Another value of an always-additive list (the certSANs) is an item more, which Talos
        // appends to fleetc's: an addition, accepted (emit::talos::owned::ADDITIVE_LISTS).
        if mode != 1 && owned::always_additive(kind, pointer) {
            additions += 1;
            assert!(
                !found.iter().any(|d| d.severity == fleetc::diag::Severity::Error),
                "round {round}: the addition to {kind} {pointer} was refused:\n{yaml}\n{:?}",
                found.iter().map(|d| &d.message).collect::<Vec<_>>()
            );
            continue;
        }
        assert!(
            found.iter().any(|d| refusing.contains(&d.code.name) && d.severity == fleetc::diag::Severity::Error),
            "round {round}: the patch of {kind} {name:?} {pointer} was not refused:\n{yaml}\n{:?}",
            found.iter().map(|d| &d.message).collect::<Vec<_>>()
        );
    }
    assert!(additions > 0, "no round added to a certSANs list");
}
