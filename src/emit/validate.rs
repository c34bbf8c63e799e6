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
//!   the management cluster; Argo CD's install: each cluster running Argo CD).
//!
//! The Report names, per document family, the schema sets that judged it.
//!
//! Identical documents are judged once per schema set (their text and the set are numbered
//! once, at first sight, and each distinct pair judged once), and a validator is compiled
//! only for a schema file a document needs, once per judging thread (identical schema bytes
//! are one file, so one validator). The distinct pairs are judged in contiguous chunks on up
//! to `threads` threads ([`run_with`]) and read back in document order.

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

/// The strict validator of one schema file of schemas/ (its text), `None` when it does not
/// compile.
pub(crate) fn kube_validator(text: &str) -> Option<Validator> {
    let mut schema: Value = serde_json::from_str(text).ok()?;
    strict(&mut schema, false);
    jsonschema::validator_for(&schema).ok()
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
    /// Compiled per schema file (identical bytes are one file, so one validator).
    kube: HashMap<&'static str, Option<Validator>>,
    /// The distinct schema sets of this run's receiving clusters.
    sets: Vec<SchemaSet>,
    report: Report,
}

impl Judge {
    fn fresh(&mut self, target: Target, text: &str) -> Verdict {
        let value: Value = match serde_saphyr::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                let message = format!("does not parse as YAML: {e}");
                return Verdict {
                    what: "document".into(),
                    judged: true,
                    findings: vec![Finding { pointer: String::new(), message }],
                };
            }
        };
        if value.is_null() {
            return Verdict { what: "empty document".into(), judged: false, findings: Vec::new() };
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
                    return Verdict { what: kind, judged: false, findings: Vec::new() };
                };
                match schema.validator(&kind) {
                    Some(v) => {
                        let by = format!("talos v{}.{}", minor.0, minor.1);
                        self.report.judged_by.entry(format!("talos {kind}")).or_default().insert(by);
                        Verdict { findings: findings(v, &value), what: kind, judged: true }
                    }
                    None => Verdict {
                        findings: vec![Finding {
                            pointer: "/kind".into(),
                            message: format!("Talos v{}.{} has no config document `{kind}`", minor.0, minor.1),
                        }],
                        what: kind,
                        judged: true,
                    },
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
    fn kube(&mut self, set: usize, value: &Value) -> Verdict {
        let str_at = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let (api, kind) = (str_at("apiVersion"), str_at("kind"));
        let name = value.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        let what = if name.is_empty() { kind.clone() } else { format!("{kind} `{name}`") };
        let v = match self.sets[set].schema(&api, &kind) {
            Some((file, text, pick)) => {
                self.report.judged_by.entry(format!("{api} {kind}")).or_default().insert(pick.to_string());
                self.kube.entry(file).or_insert_with(|| kube_validator(text)).as_ref()
            }
            None => None,
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
                Verdict { findings, what, judged: true }
            }
            None => {
                *self.report.unjudged.entry(format!("{api} {kind}")).or_default() += 1;
                Verdict { what, judged: false, findings: Vec::new() }
            }
        }
    }
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
    // the set of every distinct receiving cluster.
    for (m, carried, receivers) in vendored(fleet) {
        let mut sets: Vec<usize> = Vec::new();
        for s in receivers.iter().map(|c| SchemaSet::of(fleet, c)) {
            let s = judge.set(s);
            if !sets.contains(&s) {
                sets.push(s);
            }
        }
        if sets.is_empty() {
            sets.push(judge.set(SchemaSet::unplaced()));
        }
        for &set in &sets {
            let kubernetes = judge.sets[set].pick(crate::upstream::schemas::Module::Kubernetes);
            for (i, object) in m.objects.iter().enumerate() {
                judge.report.documents += 1;
                judge.report.distinct += 1;
                let verdict = judge.kube(set, object);
                if verdict.judged {
                    judge.report.judged += 1;
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
                let verdicts: Vec<Verdict> = chunk.iter().map(|&(target, text)| j.fresh(target, text)).collect();
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

    #[test]
    fn every_embedded_schema_compiles() {
        for (file, text) in crate::upstream::schemas::FILES {
            assert!(kube_validator(text).is_some(), "{file}");
        }
    }

    #[test]
    fn strict_refuses_an_unknown_field_and_a_wrong_type() {
        let text = crate::upstream::schemas::FILES
            .iter()
            .find(|f| f.0 == "kubernetes/v1.36/apps/Deployment_v1.json")
            .unwrap()
            .1;
        let v = kube_validator(text).unwrap();
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
