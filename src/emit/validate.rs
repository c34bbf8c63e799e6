//! The last step of emit: every document a build would write, and every vendored manifest it
//! embeds, is validated against the schema of the version the fleet pins before anything is
//! written (`schemas/`, embedded; produced by `oracles/schemas/produce`, provenance in
//! schemas/README.md). A rejection is a `fleet::emit::schema-rejected` diagnostic naming the
//! file in out/ (or the vendored file), the document and the field's JSON pointer; a run with
//! an error writes nothing.
//!
//! What is judged against what:
//!
//! - `talos/<env>/<cluster>/…` (not `patches/`, which `check::patches` already judged against
//!   the same schema with exact places in the patch file): every document against the Talos
//!   config schema of the cluster's Talos minor (`v1alpha1.Config` for the machine config,
//!   the `$defs` entry whose `kind` enum names the document otherwise). Talos's loader
//!   decodes strictly (`configloader`, unknown fields refused), and the schema says so.
//! - `capi/…` and `argocd/…` (not the vendored copies under `capi/<mgmt>/providers/00-crds`
//!   and `10-controllers`, which are judged at their source): every object whose apiVersion
//!   and kind have a schema in the schema set of the cluster that receives it
//!   (`upstream::schemas::SchemaSet::of`: `capi/<mgmt>/…` goes to the management cluster and is
//!   judged with its Kubernetes minor and its `cluster-api { … }` pins, `argocd/<env>/<c>/…`
//!   with cluster `c`'s, Argo CD's objects with the fleet's Argo CD pin) in strict mode: an object schema that lists `properties` and does not
//!   preserve unknown fields refuses any other field, as `kubectl apply` (field validation
//!   `Strict`, the default since Kubernetes 1.27) does. Objects of other kinds are not judged
//!   here (the harness's API server judges them, `oracles/kube`).
//! - vendored manifests (`addon … manifest=`, Cluster API's `cert-manager`/`operator`
//!   `manifest=`, Argo CD's `manifest=`): every object, as above, with the set of every
//!   distinct cluster that receives it (an add-on: the clusters that list it; Cluster API's:
//!   the management cluster; Argo CD's install: each cluster running Argo CD). A set covers
//!   the built-in kinds of the cluster's Kubernetes minor (`schemas/kubernetes/<minor>`: a
//!   kind file and the minor's shared `definitions.json`), the CRDs of its pins and the Talos
//!   CRD; a custom resource of a kind the set lacks is judged with the CRD that a vendored
//!   manifest the same cluster receives installs ([`Installed`]). An object none of these
//!   covers is not judged, and said so: one `fleet::emit::schema-missing` warning per
//!   manifest, naming its documents.
//!
//! The Report names, per document family, the schema sets that judged it.
//!
//! Identical documents are judged once per schema set (their text and the set are numbered
//! once, at first sight, and each distinct pair judged once), and a validator is compiled
//! only for a schema file a document needs, once per judging thread (identical schema bytes
//! are one file, so one validator). The distinct pairs are judged in contiguous chunks on up
//! to `threads` threads ([`run_with`]) and read back in document order. Across the compiles of
//! one process, a verdict is kept by the schemas and the text's digest (a vendored object's by
//! its manifest's digest and place, [`crate::memo`]): an unchanged document is judged once.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use jsonschema::Validator;
use serde_json::Value;

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Cluster, Fleet, Vendored};
use crate::upstream::schemas::{SchemaSet, TalosSchema};

/// Closes every object schema that lists `properties`, unless it preserves unknown fields,
/// already says what else it takes, or describes a CRD object's metadata (which the API
/// server validates as ObjectMeta, not by the CRD's partial listing).
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
    if let Some(Value::Object(defs)) = map.get_mut("$defs") {
        for v in defs.values_mut() {
            strict(v, false);
        }
    }
}

/// A definitions file of schemas/ (`kubernetes/<minor>/definitions.json`), parsed and closed
/// as [`strict`] closes a schema, once per judge: [`kube_validator`] copies in the ones a kind
/// reaches.
pub(crate) fn closed_definitions(text: &str) -> Value {
    let mut defs: Value = serde_json::from_str(text).unwrap_or_default();
    strict(&mut defs, false);
    defs
}

/// The strict validator of one kind's schema file of schemas/ (its text), with the
/// definitions its `$ref`s point into (a built-in kind: its set's
/// `kubernetes/<minor>/definitions.json`, as [`closed_definitions`] gives it; only the
/// definitions the kind reaches are copied in, as its `$defs`). `None` when it does not
/// compile or a `$ref` has no definition.
pub(crate) fn kube_validator(text: &str, definitions: Option<&Value>) -> Option<Validator> {
    let mut schema: Value = serde_json::from_str(text).ok()?;
    with_metadata(&mut schema);
    strict(&mut schema, false);
    if let Some(definitions) = definitions {
        let all = definitions.get("$defs")?.as_object()?;
        let mut reached = serde_json::Map::new();
        let mut todo = Vec::new();
        local_refs(&schema, &mut todo);
        while let Some(name) = todo.pop() {
            if !reached.contains_key(name) {
                let def = all.get(name)?;
                local_refs(def, &mut todo);
                reached.insert(name.to_owned(), def.clone());
            }
        }
        schema.as_object_mut()?.insert("$defs".into(), Value::Object(reached));
    }
    jsonschema::validator_for(&schema).ok()
}

/// Lists `metadata` at the top of an object's schema where it is missing (a CRD whose schema
/// leaves it out, as Talos's `talos.dev` one does): the API server takes it on every object and
/// validates it as ObjectMeta, not by the CRD's schema (k8s.io/apiextensions-apiserver v0.36.3
/// pkg/apiserver/schema/objectmeta), so strict mode must not refuse it.
fn with_metadata(schema: &mut Value) {
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.entry("metadata").or_insert_with(|| serde_json::json!({"type": "object"}));
    }
}

/// The definition names `v`'s `$ref`s point at (`#/$defs/NAME`), at any depth.
fn local_refs<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x.as_str().and_then(|r| r.strip_prefix("#/$defs/"))) {
                    ("$ref", Some(name)) => out.push(name),
                    _ => local_refs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| local_refs(x, out)),
        _ => {}
    }
}

/// Which schemas judge a document: a Talos minor's, or the schema set of the cluster that
/// receives a Kubernetes object (an index into the run's interned `SchemaSet`s).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Talos((u32, u32)),
    Kube(usize),
}

/// One problem in a document: the field's JSON pointer (empty for the whole document) and
/// what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub pointer: String,
    pub message: String,
}

/// A document's verdict: what it is (`HostnameConfig`, `Deployment cilium-operator`) and
/// its findings (none: accepted, or not judged when `judged` is false).
#[derive(Debug, Clone)]
struct Verdict {
    what: String,
    judged: bool,
    findings: Vec<Finding>,
}

/// A verdict and what it adds to the [`Report`] (the schema set that judged the document's
/// family, or the family no schema covers): the value the memos keep ([`TEXTS`], [`OBJECTS`]).
#[derive(Debug, Clone)]
struct Judged {
    verdict: Verdict,
    by: Option<(String, String)>,
    unjudged: Option<String>,
}

impl Judged {
    fn of(verdict: Verdict) -> Judged {
        Judged { verdict, by: None, unjudged: None }
    }
}

/// Which schemas judge a document, as a memo key: a Talos minor, or the schema set itself
/// (a run's [`Target::Kube`] is an index into that run's sets).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[allow(
    clippy::large_enum_variant,
    reason = "a key made once per document, hashed and compared: its size is not a cost"
)]
enum Schemas {
    Talos((u32, u32)),
    Kube(SchemaSet),
}

/// The verdicts on documents of out/, by their schemas and their text's digest, for the whole
/// process (`crate::memo`): a document a previous compile judged is not parsed or judged again.
static TEXTS: crate::memo::Memo<(Schemas, String), Judged> = crate::memo::Memo::new();

/// The verdicts on vendored objects, by the schema set, the digest of the object (as JSON) and
/// the CRD (its manifest's path, the digest of its schema, apiVersion, kind) that judges a
/// custom resource the set has no schema for.
type ObjectKey = (SchemaSet, String, Option<(String, String, String, String)>);
static OBJECTS: crate::memo::Memo<ObjectKey, Judged> = crate::memo::Memo::new();

/// What a run judged, for the docs and the tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Documents seen (every file's, every vendored manifest's).
    pub documents: usize,
    /// Distinct document texts (each parsed and judged once).
    pub distinct: usize,
    /// Documents judged against a schema.
    pub judged: usize,
    /// `apiVersion kind` of the objects no schema here covers, with how many.
    pub unjudged: BTreeMap<String, usize>,
    /// Per document family (`apiVersion kind`; `talos <kind>`), the schema sets that judged
    /// it (`cabpt v0.6.12`, `kubernetes v1.36 (for 1.37.2)`, `talos v1.13`).
    pub judged_by: BTreeMap<String, BTreeSet<String>>,
}

/// The lazily compiled validators of one judging thread, and what it judged.
#[derive(Default)]
struct Judge {
    talos: BTreeMap<(u32, u32), Option<TalosSchema>>,
    /// Compiled per schema file and the definitions it is resolved with (identical bytes are
    /// one file, so one validator per minor).
    kube: HashMap<(&'static str, Option<&'static str>), Option<Validator>>,
    /// The definitions files, parsed and closed once.
    definitions: HashMap<&'static str, Value>,
    /// Compiled per CRD the fleet's vendored manifests install (judged by, apiVersion, kind).
    crds: HashMap<(String, String, String), Option<Validator>>,
    /// The distinct schema sets of this run's receiving clusters.
    sets: Vec<SchemaSet>,
    report: Report,
}

impl Judge {
    /// Adds what `j` says to the Report and returns its verdict.
    fn record(&mut self, j: Judged) -> Verdict {
        if let Some((family, by)) = j.by {
            self.report.judged_by.entry(family).or_default().insert(by);
        }
        if let Some(family) = j.unjudged {
            *self.report.unjudged.entry(family).or_default() += 1;
        }
        j.verdict
    }

    /// The verdict on one document of out/, from [`TEXTS`] when a compile of this process
    /// judged the same text with the same schemas.
    fn judge_text(&mut self, target: Target, text: &str) -> Verdict {
        let schemas = match target {
            Target::Talos(minor) => Schemas::Talos(minor),
            Target::Kube(set) => Schemas::Kube(self.sets[set]),
        };
        let key = (schemas, crate::digest::sha256_hex(text.as_bytes()));
        let judged = TEXTS.get_or(key, || self.fresh(target, text));
        self.record(judged)
    }

    fn fresh(&mut self, target: Target, text: &str) -> Judged {
        let value: Value = match serde_saphyr::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                let message = format!("does not parse as YAML: {e}");
                return Judged::of(Verdict {
                    what: "document".into(),
                    judged: true,
                    findings: vec![Finding { pointer: String::new(), message }],
                });
            }
        };
        if value.is_null() {
            return Judged::of(Verdict { what: "empty document".into(), judged: false, findings: Vec::new() });
        }
        let findings = |v: &Validator, value: &Value| -> Vec<Finding> {
            v.iter_errors(value)
                .map(|e| Finding { pointer: e.instance_path().to_string(), message: e.to_string() })
                .collect()
        };
        match target {
            Target::Talos(minor) => {
                let kind = value.get("kind").and_then(Value::as_str).unwrap_or("v1alpha1").to_owned();
                // fleetc's v1alpha1 document is the form of the generators' contract (1.13 on
                // 1.14 nodes, versions/talos.kdl), whose schema judges it; the other kinds the
                // model's.
                let minor = if kind == "v1alpha1" {
                    minor.min(
                        crate::upstream::talos::table()
                            .generator_contract(crate::model::Version::new(minor.0, minor.1, 0)),
                    )
                } else {
                    minor
                };
                let schema = self.talos.entry(minor).or_insert_with(|| TalosSchema::load(minor));
                let Some(schema) = schema.as_mut() else {
                    return Judged::of(Verdict { what: kind, judged: false, findings: Vec::new() });
                };
                match schema.validator(&kind) {
                    Some(v) => Judged {
                        by: Some((format!("talos {kind}"), format!("talos v{}.{}", minor.0, minor.1))),
                        unjudged: None,
                        verdict: Verdict { findings: findings(v, &value), what: kind, judged: true },
                    },
                    None => Judged::of(Verdict {
                        findings: vec![Finding {
                            pointer: "/kind".into(),
                            message: format!("Talos v{}.{} has no config document `{kind}`", minor.0, minor.1),
                        }],
                        what: kind,
                        judged: true,
                    }),
                }
            }
            Target::Kube(set) => self.kube(set, &value),
        }
    }

    /// The index of a schema set in this run (interned: a handful per fleet).
    fn set(&mut self, s: SchemaSet) -> usize {
        match self.sets.iter().position(|x| *x == s) {
            Some(i) => i,
            None => {
                self.sets.push(s);
                self.sets.len() - 1
            }
        }
    }

    /// The verdict on one Kubernetes object, judged with the schema set `set`.
    fn kube(&mut self, set: usize, value: &Value) -> Judged {
        self.kube_or(set, value, None)
    }

    /// [`Judge::kube`], judging with `installed` (a CRD the fleet's vendored manifests install
    /// for the receiving cluster) when the set has no schema for the object's kind.
    fn kube_or(&mut self, set: usize, value: &Value, installed: Option<&Installed>) -> Judged {
        let str_at = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let (api, kind) = (str_at("apiVersion"), str_at("kind"));
        let name = value.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        let what = if name.is_empty() { kind.clone() } else { format!("{kind} `{name}`") };
        let mut by = None;
        let v = match (self.sets[set].schema(&api, &kind), installed) {
            (Some(k), _) => {
                by = Some((format!("{api} {kind}"), k.pick.to_string()));
                let Judge { kube, definitions, .. } = self;
                kube.entry((k.file, k.definitions.map(|d| d.0)))
                    .or_insert_with(|| {
                        let defs = k
                            .definitions
                            .map(|(file, text)| &*definitions.entry(file).or_insert_with(|| closed_definitions(text)));
                        kube_validator(k.text, defs)
                    })
                    .as_ref()
            }
            (None, Some(crd)) => {
                let crd_by = format!("the CRD in {}", crd.manifest);
                by = Some((format!("{api} {kind}"), crd_by.clone()));
                self.crds.entry((crd_by, api.clone(), kind.clone())).or_insert_with(|| crd.validator()).as_ref()
            }
            (None, None) => None,
        };
        match v {
            Some(v) => {
                // The API server reads a null field as absent: a core kind decodes it into
                // the Go zero value (encoding/json), a custom resource has it pruned before
                // validation (k8s.io/apiextensions-apiserver
                // pkg/apiserver/schema/defaulting/prunenulls.go), as Helm renders leave them.
                let value = without_null_fields(value);
                let findings = v
                    .iter_errors(&value)
                    .map(|e| Finding { pointer: e.instance_path().to_string(), message: e.to_string() })
                    .collect();
                Judged { verdict: Verdict { findings, what, judged: true }, by, unjudged: None }
            }
            None => Judged {
                verdict: Verdict { what, judged: false, findings: Vec::new() },
                by: None,
                unjudged: Some(format!("{api} {kind}")),
            },
        }
    }
}

/// One served version of a CRD one of the fleet's vendored manifests installs: its custom
/// resources are judged with its `openAPIV3Schema` where schemas/ has no schema for their kind,
/// as the API server judges them once the CRD is applied (strictly: unknown fields and wrong
/// types refused).
struct Installed<'f> {
    /// `<group>/<version>`.
    api: String,
    kind: String,
    schema: &'f Value,
    /// The vendored manifest that installs it.
    manifest: &'f str,
    /// The digest of `schema` (as JSON), for [`OBJECTS`]' key.
    digest: String,
    /// The clusters that receive that manifest (none: it is not placed yet).
    receivers: Vec<&'f Cluster>,
}

impl Installed<'_> {
    /// Every served version of every CRD in `manifests`.
    fn all<'f>(manifests: &[(&'f Vendored, String, Vec<&'f Cluster>)]) -> Vec<Installed<'f>> {
        let mut out = Vec::new();
        for (m, _, receivers) in manifests {
            for crd in m.objects.iter().filter(|o| {
                o.get("apiVersion").and_then(Value::as_str) == Some("apiextensions.k8s.io/v1")
                    && o.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
            }) {
                let at = |p: &str| crd.pointer(p).and_then(Value::as_str);
                let (Some(group), Some(kind)) = (at("/spec/group"), at("/spec/names/kind")) else { continue };
                for v in crd.pointer("/spec/versions").and_then(Value::as_array).into_iter().flatten() {
                    let (Some(name), Some(schema)) =
                        (v.get("name").and_then(Value::as_str), v.pointer("/schema/openAPIV3Schema"))
                    else {
                        continue;
                    };
                    if v.get("served") == Some(&Value::Bool(true)) {
                        out.push(Installed {
                            api: format!("{group}/{name}"),
                            kind: kind.to_owned(),
                            schema,
                            manifest: &m.path.value,
                            digest: json_digest(schema),
                            receivers: receivers.clone(),
                        });
                    }
                }
            }
        }
        out
    }

    /// The CRD of `object` installed for one of `clusters` (none: an unplaced manifest, any).
    fn find<'a, 'f>(all: &'a [Installed<'f>], object: &Value, clusters: &[&Cluster]) -> Option<&'a Installed<'f>> {
        let str_at = |k: &str| object.get(k).and_then(Value::as_str);
        all.iter().find(|c| {
            str_at("apiVersion") == Some(&c.api)
                && str_at("kind") == Some(&c.kind)
                && (clusters.is_empty() || c.receivers.iter().any(|r| clusters.iter().any(|x| std::ptr::eq(*r, *x))))
        })
    }

    /// The strict validator of this version's schema, converted from OpenAPI v3 as
    /// `oracles/schemas/produce` converts the CRDs of schemas/ (`nullable`, boolean exclusive
    /// bounds, `x-kubernetes-int-or-string`), with `apiVersion` and `kind` pinned.
    fn validator(&self) -> Option<Validator> {
        let mut schema = openapi_to_2020(self.schema);
        let root = schema.as_object_mut()?;
        let props = root.entry("properties").or_insert_with(|| Value::Object(Default::default()));
        props.as_object_mut()?.insert("apiVersion".into(), serde_json::json!({"const": self.api}));
        props.as_object_mut()?.insert("kind".into(), serde_json::json!({"const": self.kind}));
        with_metadata(&mut schema);
        strict(&mut schema, false);
        jsonschema::validator_for(&schema).ok()
    }
}

/// The digest of a value's JSON text (serde_json writes an object's keys in its map's order).
fn json_digest(v: &Value) -> String {
    crate::digest::sha256_hex(&serde_json::to_vec(v).unwrap_or_default())
}

/// An OpenAPI v3 schema node of a CRD (Kubernetes's structural schema) as a draft 2020-12 one:
/// `nullable: true` adds `null` to `type`; a boolean `exclusiveMinimum`/`exclusiveMaximum` becomes
/// the numeric form; `x-kubernetes-int-or-string` without `type` or `anyOf` takes an integer or
/// a string (k8s.io/apiextensions-apiserver v0.36.3 pkg/apis/apiextensions/types_jsonschema.go,
/// the fields of `JSONSchemaProps`).
fn openapi_to_2020(node: &Value) -> Value {
    let Value::Object(map) = node else { return node.clone() };
    let mut n = serde_json::Map::new();
    for (k, v) in map {
        let converted = match (k.as_str(), v) {
            ("items" | "additionalProperties" | "not", _) => openapi_to_2020(v),
            ("allOf" | "anyOf" | "oneOf", Value::Array(a)) => Value::Array(a.iter().map(openapi_to_2020).collect()),
            ("properties" | "patternProperties", Value::Object(m)) => {
                Value::Object(m.iter().map(|(name, x)| (name.clone(), openapi_to_2020(x))).collect())
            }
            _ => v.clone(),
        };
        n.insert(k.clone(), converted);
    }
    if n.remove("nullable") == Some(Value::Bool(true)) {
        match n.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                n.insert("type".into(), serde_json::json!([t, "null"]));
            }
            Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => ts.push("null".into()),
            _ => {}
        }
        if let Some(Value::Array(e)) = n.get_mut("enum")
            && !e.contains(&Value::Null)
        {
            e.push(Value::Null);
        }
    }
    for (bound, excl) in [("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")] {
        if let Some(Value::Bool(on)) = n.get(excl).cloned() {
            n.remove(excl);
            if let Some(b) = n.remove(bound) {
                n.insert(if on { excl } else { bound }.into(), b);
            }
        }
    }
    if n.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true))
        && !n.contains_key("type")
        && !n.contains_key("anyOf")
    {
        n.insert("anyOf".into(), serde_json::json!([{"type": "integer"}, {"type": "string"}]));
    }
    Value::Object(n)
}

/// `v` without the object fields whose value is null, at any depth.
fn without_null_fields(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter().filter(|(_, x)| !x.is_null()).map(|(k, x)| (k.clone(), without_null_fields(x))).collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_null_fields).collect()),
        other => other.clone(),
    }
}

/// Which schemas judge a file's documents: a Talos minor's, or the set of the receiving
/// cluster (`None`: not in fleet.kdl, judged with `SchemaSet::unplaced`).
enum Place<'f> {
    Talos((u32, u32)),
    Kube(Option<&'f Cluster>),
}

/// Where a file of out/ belongs in fleet.kdl: the cluster its path names, and the schemas of
/// its documents (those of the cluster that receives them: `capi/<mgmt>/…` goes to the
/// management cluster, `argocd/<env>/<cluster>/…` to that cluster). `None`: not judged here
/// (see the module doc).
fn place_of<'f>(fleet: &'f Fleet, path: &str) -> Option<(Place<'f>, Option<Span>)> {
    if !path.ends_with(".yaml") {
        return None;
    }
    let parts: Vec<&str> = path.split('/').collect();
    let cluster = |env: Option<&str>, name: &str| {
        fleet
            .clusters()
            .find(|(e, c)| c.name.value == name && env.is_none_or(|env| e.name.value == env))
            .map(|(_, c)| c)
    };
    match parts.as_slice() {
        ["talos", env, name, rest @ ..] if rest.first() != Some(&"patches") => {
            let (e, c) = fleet.clusters().find(|(e, c)| c.name.value == *name && e.name.value == *env)?;
            // The schema of the document model fleetc writes for this cluster's nodes
            // (versions/talos.kdl), as `check::patches` judges the user's patches.
            Some((Place::Talos(crate::upstream::talos::cluster_documents(fleet, e, c)), Some(c.name.span)))
        }
        ["capi", _, "providers", "00-crds" | "10-controllers", ..] => None,
        ["capi", mgmt, second, ..] => {
            let span = cluster(None, second).or_else(|| cluster(None, mgmt)).map(|c| c.name.span);
            Some((Place::Kube(cluster(None, mgmt)), span))
        }
        ["argocd", env, name, ..] => {
            let c = cluster(Some(env), name);
            Some((Place::Kube(c), c.map(|c| c.name.span)))
        }
        _ => None,
    }
}

/// The vendored manifests a fleet embeds: the file, where fleet.kdl names it, which out/
/// files carry it, and the clusters that receive it (an add-on: the clusters that list it;
/// Cluster API's cert-manager and operator: the management cluster; Argo CD's install: every
/// cluster that runs its own Argo CD).
fn vendored(fleet: &Fleet) -> Vec<(&Vendored, String, Vec<&Cluster>)> {
    let mut out = Vec::new();
    for addon in fleet.addons.values() {
        let receivers: Vec<(String, &Cluster)> = fleet
            .clusters()
            .filter(|(_, c)| c.addons.iter().any(|a| a.value == addon.name.value))
            .map(|(e, c)| (crate::layout::paths::talos_role_doc(&e.name.value, &c.name.value, true, ""), c))
            .collect();
        let carried = match receivers.as_slice() {
            [] => "embedded nowhere yet".to_owned(),
            [(one, _)] => format!("embedded in out/{one}"),
            [(first, _), rest @ ..] => format!("embedded in out/{first} and {} more", rest.len()),
        };
        out.push((&addon.manifest, carried, receivers.into_iter().map(|(_, c)| c).collect()));
    }
    for (_, c) in fleet.clusters() {
        if let Some(capi) = &c.cluster_api {
            for (file, m) in [("00-cert-manager", &capi.cert_manager), ("10-capi-operator", &capi.operator_manifest)] {
                if let Some(m) = m {
                    out.push((m, format!("embedded in out/capi/{}/providers/…/{file}.yaml", c.name.value), vec![c]));
                }
            }
        }
    }
    if let Some(argocd) = &fleet.argocd {
        let receivers = fleet.clusters().map(|(_, c)| c).filter(|c| crate::model::gitops::runs_argocd(c)).collect();
        out.push((&argocd.manifest, "applied by `fleetc apply` as Argo CD's install".to_owned(), receivers));
    }
    out
}

fn diagnostic(file: &str, index: usize, verdict: &Verdict, f: &Finding) -> Diagnostic {
    let field = if f.pointer.is_empty() { "the document".to_owned() } else { format!("`{}`", f.pointer) };
    Diagnostic::new(
        &codes::SCHEMA_REJECTED,
        format!("{file}, document {} ({}): {field}: {}", index + 1, verdict.what, f.message),
    )
}

/// Validates every document of `files` (a build's output, path → bytes) and of the vendored
/// manifests `fleet` embeds. Returns the diagnostics (empty: everything accepted) and what
/// was judged. One thread: [`run_with`].
pub fn run<'a>(fleet: &'a Fleet, files: impl Iterator<Item = (&'a str, &'a [u8])>) -> (Diagnostics, Report) {
    run_with(fleet, files, 1)
}

/// [`run`] on up to `threads` threads, with the same diagnostics in the same order and the
/// same Report whatever the count. The files' documents are listed in order and their
/// distinct (schemas, text) pairs numbered at first sight; the distinct pairs are cut into
/// contiguous chunks ([`crate::parallel::chunks`]), each judged on a thread by a Judge of its
/// own (each pair exactly once in the whole run, so `unjudged` counts as on one thread); the
/// verdicts are then read back in document order.
pub fn run_with<'a>(
    fleet: &'a Fleet,
    files: impl Iterator<Item = (&'a str, &'a [u8])>,
    threads: usize,
) -> (Diagnostics, Report) {
    let mut judge = Judge::default();
    let mut diags = Diagnostics::new();
    // Vendored manifests were parsed once, when the fleet was resolved; each is judged with
    // the set of every distinct receiving cluster, a custom resource whose kind schemas/ lacks
    // with the CRD a vendored manifest installs for one of those clusters.
    let manifests = vendored(fleet);
    let installed = Installed::all(&manifests);
    for (m, carried, receivers) in &manifests {
        let mut sets: Vec<(usize, Vec<&Cluster>)> = Vec::new();
        for &c in receivers {
            let s = judge.set(SchemaSet::of(fleet, c));
            match sets.iter_mut().find(|(x, _)| *x == s) {
                Some((_, cs)) => cs.push(c),
                None => sets.push((s, vec![c])),
            }
        }
        if sets.is_empty() {
            sets.push((judge.set(SchemaSet::unplaced()), Vec::new()));
        }
        // The objects no schema judged, by document index: what they are.
        let mut missing: BTreeMap<usize, String> = BTreeMap::new();
        for (set, clusters) in &sets {
            let kubernetes = judge.sets[*set].pick(crate::upstream::schemas::Module::Kubernetes);
            for (i, object) in m.objects.iter().enumerate() {
                judge.report.documents += 1;
                judge.report.distinct += 1;
                // From [`OBJECTS`] when a compile of this process judged the same object alike.
                let crd = Installed::find(&installed, object, clusters);
                let key = (
                    judge.sets[*set],
                    json_digest(object),
                    crd.map(|c| (c.manifest.to_owned(), c.digest.clone(), c.api.clone(), c.kind.clone())),
                );
                let judged = OBJECTS.get_or(key, || judge.kube_or(*set, object, crd));
                let verdict = judge.record(judged);
                if verdict.judged {
                    judge.report.judged += 1;
                } else {
                    let api = object.get("apiVersion").and_then(Value::as_str).unwrap_or("(no apiVersion)");
                    missing.entry(i).or_insert_with(|| format!("{} ({api} {})", i + 1, verdict.what));
                }
                for f in &verdict.findings {
                    let with = match kubernetes {
                        Some(k) if sets.len() > 1 => format!(" (judged with {k})"),
                        _ => String::new(),
                    };
                    diags.push(
                        diagnostic(&m.path.value, i, &verdict, f)
                            .at(m.path.span)
                            .label(format!("this vendored manifest, {carried}{with}")),
                    );
                }
            }
        }
        if !missing.is_empty() {
            let (n, list) = (missing.len(), missing.into_values().collect::<Vec<_>>().join(", "));
            let (objects, documents) =
                if n == 1 { ("1 object".to_owned(), "document") } else { (format!("{n} objects"), "documents") };
            diags.push(
                Diagnostic::new(
                    &codes::SCHEMA_MISSING,
                    format!(
                        "{}: {objects} of a kind fleetc has no schema for, not judged: {documents} {list}",
                        m.path.value
                    ),
                )
                .at(m.path.span)
                .label(format!("this vendored manifest, {carried}")),
            );
        }
    }
    // Every document in order: its file, the place in fleet.kdl, its index in the file and
    // the number of its distinct (schemas, text) pair.
    let mut docs: Vec<(&str, Option<Span>, usize, usize)> = Vec::new();
    let mut distinct: Vec<(Target, &'a str)> = Vec::new();
    let mut number: HashMap<(Target, &'a str), usize> = HashMap::new();
    for (path, bytes) in files {
        let Some((place, span)) = place_of(fleet, path) else { continue };
        let target = match place {
            Place::Talos(minor) => Target::Talos(minor),
            Place::Kube(c) => Target::Kube(judge.set(c.map_or_else(SchemaSet::unplaced, |c| SchemaSet::of(fleet, c)))),
        };
        let Ok(text) = std::str::from_utf8(bytes) else { continue };
        for (i, doc) in super::capi::providers::documents(text).into_iter().enumerate() {
            let n = *number.entry((target, doc)).or_insert_with(|| {
                distinct.push((target, doc));
                distinct.len() - 1
            });
            docs.push((path, span, i, n));
        }
    }
    // The first chunk is judged by this run's Judge (its validators compiled for the
    // vendored manifests serve again), the others by Judges of their own.
    let sets = judge.sets.clone();
    let mut first = Some(std::mem::take(&mut judge));
    let jobs: Vec<_> = crate::parallel::chunks(&distinct, threads)
        .into_iter()
        .map(|chunk| {
            let mut j = first.take().unwrap_or_else(|| Judge { sets: sets.clone(), ..Judge::default() });
            move || {
                let verdicts: Vec<Verdict> = chunk.iter().map(|&(target, text)| j.judge_text(target, text)).collect();
                (verdicts, j)
            }
        })
        .collect();
    let mut verdicts: Vec<Verdict> = Vec::with_capacity(distinct.len());
    let mut judged = crate::parallel::run(threads, jobs).into_iter();
    let mut judge = match judged.next() {
        Some((v, j)) => {
            verdicts.extend(v);
            j
        }
        None => first.take().unwrap_or_default(),
    };
    for (v, other) in judged {
        verdicts.extend(v);
        for (what, n) in other.report.unjudged {
            *judge.report.unjudged.entry(what).or_default() += n;
        }
        for (family, by) in other.report.judged_by {
            judge.report.judged_by.entry(family).or_default().extend(by);
        }
    }
    judge.report.distinct += distinct.len();
    for (path, span, i, n) in docs {
        let verdict = &verdicts[n];
        judge.report.documents += 1;
        if verdict.judged {
            judge.report.judged += 1;
        }
        for f in &verdict.findings {
            let mut d = diagnostic(&format!("out/{path}"), i, verdict, f);
            if let Some(span) = span {
                d = d.at(span).label("this cluster's document");
            }
            diags.push(d);
        }
    }
    (diags, judge.report)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::upstream::schemas::{DEFINITIONS, FILES, INDEX};
    use serde_json::json;

    /// The validator of `apiVersion`/`kind` in the schema set `(key, set)` of schemas/index.rs.
    fn validator(key: &str, set: &str, api: &str, kind: &str) -> Validator {
        let row = INDEX.iter().find(|r| (r.0, r.1, r.2, r.3) == (key, set, api, kind)).expect("in schemas/index.rs");
        let defs = DEFINITIONS.iter().find(|d| (d.0, d.1) == (key, set)).map(|d| closed_definitions(FILES[d.2].1));
        kube_validator(FILES[row.4].1, defs.as_ref()).expect("compiles")
    }

    fn errors(v: &Validator, value: &Value) -> Vec<(String, String)> {
        v.iter_errors(value).map(|e| (e.instance_path().to_string(), e.to_string())).collect()
    }

    /// Every kind of every set compiles, with its set's definitions (a `$ref` with no
    /// definition fails here).
    #[test]
    fn every_embedded_schema_compiles() {
        for (key, set, api, kind, file) in INDEX {
            let defs =
                DEFINITIONS.iter().find(|d| (d.0, d.1) == (*key, *set)).map(|d| closed_definitions(FILES[d.2].1));
            assert!(
                kube_validator(FILES[*file].1, defs.as_ref()).is_some(),
                "{key} {set} {api} {kind}: {}",
                FILES[*file].0
            );
        }
    }

    /// One object of each class of built-in kind (and the Talos CRD) is accepted, and refused
    /// with the JSON pointer of the field once one field has the wrong type or an unknown field
    /// is added: workloads, services and networking, RBAC, admission, policy, batch, storage,
    /// scheduling, coordination, API registration, in both produced minors.
    #[test]
    fn each_kind_class_refuses_a_wrong_type_and_an_unknown_field() {
        let meta = json!({"name": "x", "namespace": "kube-system", "labels": {"app": "x"}});
        let pod = json!({"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
        let selector = json!({"matchLabels": {"app": "x"}});
        // (apiVersion, kind, body without apiVersion/kind/metadata, JSON pointer, wrong value)
        let cases: Vec<(&str, &str, Value, &str, Value)> = vec![
            (
                "apps/v1",
                "DaemonSet",
                json!({"spec": {"selector": selector, "template": pod, "revisionHistoryLimit": 10}}),
                "/spec/revisionHistoryLimit",
                json!("ten"),
            ),
            (
                "apps/v1",
                "StatefulSet",
                json!({"spec": {"selector": selector, "template": pod, "serviceName": "x"}}),
                "/spec/serviceName",
                json!(1),
            ),
            (
                "apps/v1",
                "ReplicaSet",
                json!({"spec": {"selector": selector, "template": pod}}),
                "/spec/minReadySeconds",
                json!("1"),
            ),
            (
                "v1",
                "Pod",
                json!({"spec": {"containers": [{"name": "c", "image": "i"}]}}),
                "/spec/hostNetwork",
                json!("yes"),
            ),
            (
                "v1",
                "Service",
                json!({"spec": {"ports": [{"port": 443, "targetPort": "https"}], "selector": {"app": "x"}}}),
                "/spec/ports/0/port",
                json!("443"),
            ),
            (
                "v1",
                "ServiceAccount",
                json!({"automountServiceAccountToken": false}),
                "/automountServiceAccountToken",
                json!("no"),
            ),
            (
                "networking.k8s.io/v1",
                "NetworkPolicy",
                json!({"spec": {"podSelector": {}, "policyTypes": ["Ingress"]}}),
                "/spec/policyTypes",
                json!("Ingress"),
            ),
            (
                "networking.k8s.io/v1",
                "Ingress",
                json!({"spec": {"ingressClassName": "nginx"}}),
                "/spec/ingressClassName",
                json!(1),
            ),
            (
                "rbac.authorization.k8s.io/v1",
                "ClusterRole",
                json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
                "/rules/0/verbs",
                json!("get"),
            ),
            ("rbac.authorization.k8s.io/v1", "Role", json!({"rules": []}), "/rules", json!({})),
            (
                "rbac.authorization.k8s.io/v1",
                "ClusterRoleBinding",
                json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "x"},
                    "subjects": [{"kind": "ServiceAccount", "name": "x", "namespace": "kube-system"}]}),
                "/subjects/0/name",
                json!(1),
            ),
            (
                "rbac.authorization.k8s.io/v1",
                "RoleBinding",
                json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"}}),
                "/roleRef/name",
                json!(2),
            ),
            (
                "admissionregistration.k8s.io/v1",
                "ValidatingWebhookConfiguration",
                json!({"webhooks": [{"name": "x.example.org", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                    "clientConfig": {"service": {"name": "x", "namespace": "kube-system", "port": 443}}}]}),
                "/webhooks/0/clientConfig/service/port",
                json!("443"),
            ),
            (
                "admissionregistration.k8s.io/v1",
                "MutatingWebhookConfiguration",
                json!({"webhooks": [{"name": "x.example.org", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                    "clientConfig": {"url": "https://x"}, "timeoutSeconds": 5}]}),
                "/webhooks/0/timeoutSeconds",
                json!("5s"),
            ),
            (
                "policy/v1",
                "PodDisruptionBudget",
                json!({"spec": {"maxUnavailable": 1, "selector": selector}}),
                "/spec/selector/matchLabels",
                json!(["app"]),
            ),
            (
                "batch/v1",
                "Job",
                json!({"spec": {"template": pod, "backoffLimit": 3}}),
                "/spec/backoffLimit",
                json!(true),
            ),
            (
                "batch/v1",
                "CronJob",
                json!({"spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": pod}}}}),
                "/spec/schedule",
                json!(0),
            ),
            (
                "storage.k8s.io/v1",
                "StorageClass",
                json!({"provisioner": "csi.example.org", "allowVolumeExpansion": true}),
                "/allowVolumeExpansion",
                json!("true"),
            ),
            (
                "storage.k8s.io/v1",
                "CSIDriver",
                json!({"spec": {"attachRequired": true}}),
                "/spec/attachRequired",
                json!(1),
            ),
            ("scheduling.k8s.io/v1", "PriorityClass", json!({"value": 1000}), "/value", json!("high")),
            (
                "coordination.k8s.io/v1",
                "Lease",
                json!({"spec": {"holderIdentity": "x"}}),
                "/spec/holderIdentity",
                json!(1),
            ),
            (
                "apiregistration.k8s.io/v1",
                "APIService",
                json!({"spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100}}),
                "/spec/groupPriorityMinimum",
                json!("100"),
            ),
            (
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                json!({"spec": {"group": "example.org", "scope": "Namespaced", "names": {"kind": "X", "plural": "xs"},
                    "versions": [{"name": "v1", "served": true, "storage": true}]}}),
                "/spec/versions/0/served",
                json!("true"),
            ),
        ];
        for set in ["v1.35", "v1.36"] {
            for (api, kind, body, pointer, wrong) in &cases {
                let v = validator("kubernetes", set, api, kind);
                let mut good = body.clone();
                good["apiVersion"] = json!(api);
                good["kind"] = json!(kind);
                good["metadata"] = meta.clone();
                assert_eq!(errors(&v, &good), vec![], "{set} {kind}: the good object");
                let mut bad = good.clone();
                let (parent, last) = pointer.rsplit_once('/').unwrap();
                bad.pointer_mut(parent).unwrap_or_else(|| panic!("{kind}: {pointer}"))[last] = wrong.clone();
                let got = errors(&v, &bad);
                assert!(got.iter().any(|(p, _)| p == pointer), "{set} {kind}: wrong type at {pointer}: {got:?}");
                let mut unknown = good.clone();
                unknown["metadata"]["labelz"] = json!({});
                assert!(errors(&v, &unknown).iter().any(|(p, _)| p == "/metadata"), "{set} {kind}: an unknown field");
            }
        }
        let v = validator("talosk8s", "v1.13.9", "talos.dev/v1alpha1", "ServiceAccount");
        let good = json!({"apiVersion": "talos.dev/v1alpha1", "kind": "ServiceAccount", "metadata": meta, "spec": {"roles": ["os:reader"]}});
        assert_eq!(errors(&v, &good), vec![]);
        let mut bad = good.clone();
        bad["spec"]["roles"] = json!("os:reader");
        assert!(errors(&v, &bad).iter().any(|(p, _)| p == "/spec/roles"));
        let mut bad = good;
        bad["spec"]["role"] = json!(["os:reader"]);
        assert!(errors(&v, &bad).iter().any(|(p, _)| p == "/spec"));
    }

    #[test]
    fn strict_refuses_an_unknown_field_and_a_wrong_type() {
        let v = validator("kubernetes", "v1.36", "apps/v1", "Deployment");
        let good = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        assert!(v.is_valid(&good), "{:?}", v.iter_errors(&good).map(|e| e.to_string()).collect::<Vec<_>>());
        let mut bad = good.clone();
        bad["spec"]["replicas"] = Value::String("two".into());
        assert!(!v.is_valid(&bad));
        let mut bad = good.clone();
        bad["spec"]["replica"] = Value::from(1);
        assert!(!v.is_valid(&bad));
    }
}
