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
//!   and kind have a schema here (the CRDs of the pinned providers, the Kubernetes core kinds
//!   fleetc emits) in strict mode: an object schema that lists `properties` and does not
//!   preserve unknown fields refuses any other field, as `kubectl apply` (field validation
//!   `Strict`, the default since Kubernetes 1.27) does. Objects of other kinds are not judged
//!   here (the harness's API server judges them, `oracles/kube`).
//! - vendored manifests (`addon … manifest=`, Cluster API's `cert-manager`/`operator`
//!   `manifest=`, Argo CD's `manifest=`): every object, as above.
//!
//! Identical documents are judged once (their text is the key of a verdict cache), and a
//! validator is compiled only for a schema a document needs, once per run.

use std::collections::{BTreeMap, HashMap};

use jsonschema::Validator;
use serde_json::Value;

use crate::check::patches::Schema as TalosSchema;
use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Fleet, Vendored};

macro_rules! crd {
    ($group:literal, $kind:literal, $version:literal) => {
        (
            concat!($group, "/", $version),
            $kind,
            include_str!(concat!("../../schemas/crds/", $group, "/", $kind, "_", $version, ".json")),
        )
    };
}

macro_rules! kube {
    ($dir:literal, $api:literal, $kind:literal) => {
        ($api, $kind, include_str!(concat!("../../schemas/kubernetes/v1.36/", $dir, "/", $kind, "_v1.json")))
    };
}

/// `(apiVersion, kind, schema)`: the CRDs of the provider versions fleetc pins and the
/// Kubernetes core kinds it emits or embeds. The Kubernetes schemas are v1.36's, the only
/// Kubernetes version schemas/ carries: they serve every cluster (v1 kinds, stable since 1.16).
pub(crate) const KUBE_SCHEMAS: &[(&str, &str, &str)] = &[
    crd!("cluster.x-k8s.io", "Cluster", "v1beta1"),
    crd!("cluster.x-k8s.io", "Cluster", "v1beta2"),
    crd!("cluster.x-k8s.io", "ClusterClass", "v1beta1"),
    crd!("cluster.x-k8s.io", "ClusterClass", "v1beta2"),
    crd!("cluster.x-k8s.io", "MachineDeployment", "v1beta1"),
    crd!("cluster.x-k8s.io", "MachineDeployment", "v1beta2"),
    crd!("cluster.x-k8s.io", "MachineHealthCheck", "v1beta1"),
    crd!("cluster.x-k8s.io", "MachineHealthCheck", "v1beta2"),
    crd!("bootstrap.cluster.x-k8s.io", "TalosConfig", "v1alpha2"),
    crd!("bootstrap.cluster.x-k8s.io", "TalosConfig", "v1alpha3"),
    crd!("bootstrap.cluster.x-k8s.io", "TalosConfigTemplate", "v1alpha2"),
    crd!("bootstrap.cluster.x-k8s.io", "TalosConfigTemplate", "v1alpha3"),
    crd!("controlplane.cluster.x-k8s.io", "TalosControlPlane", "v1alpha3"),
    crd!("infrastructure.cluster.x-k8s.io", "ProxmoxCluster", "v1alpha1"),
    crd!("infrastructure.cluster.x-k8s.io", "ProxmoxCluster", "v1alpha2"),
    crd!("infrastructure.cluster.x-k8s.io", "ProxmoxMachineTemplate", "v1alpha1"),
    crd!("infrastructure.cluster.x-k8s.io", "ProxmoxMachineTemplate", "v1alpha2"),
    crd!("argoproj.io", "Application", "v1alpha1"),
    crd!("argoproj.io", "ApplicationSet", "v1alpha1"),
    crd!("argoproj.io", "AppProject", "v1alpha1"),
    crd!("ipam.cluster.x-k8s.io", "InClusterIPPool", "v1alpha1"),
    crd!("ipam.cluster.x-k8s.io", "InClusterIPPool", "v1alpha2"),
    crd!("ipam.cluster.x-k8s.io", "GlobalInClusterIPPool", "v1alpha1"),
    crd!("ipam.cluster.x-k8s.io", "GlobalInClusterIPPool", "v1alpha2"),
    crd!("operator.cluster.x-k8s.io", "CoreProvider", "v1alpha2"),
    crd!("operator.cluster.x-k8s.io", "BootstrapProvider", "v1alpha2"),
    crd!("operator.cluster.x-k8s.io", "ControlPlaneProvider", "v1alpha2"),
    crd!("operator.cluster.x-k8s.io", "InfrastructureProvider", "v1alpha2"),
    crd!("operator.cluster.x-k8s.io", "IPAMProvider", "v1alpha2"),
    crd!("external-secrets.io", "ExternalSecret", "v1"),
    crd!("external-secrets.io", "SecretStore", "v1"),
    crd!("external-secrets.io", "ClusterSecretStore", "v1"),
    crd!("cert-manager.io", "Certificate", "v1"),
    crd!("cert-manager.io", "Issuer", "v1"),
    crd!("cert-manager.io", "ClusterIssuer", "v1"),
    kube!("core", "v1", "Namespace"),
    kube!("core", "v1", "ConfigMap"),
    kube!("core", "v1", "Secret"),
    kube!("apps", "apps/v1", "Deployment"),
    kube!("apiextensions.k8s.io", "apiextensions.k8s.io/v1", "CustomResourceDefinition"),
];

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

/// The strict validator of a Kubernetes kind, `None` when schemas/ has none.
pub(crate) fn kube_validator(api_version: &str, kind: &str) -> Option<Validator> {
    let text = KUBE_SCHEMAS.iter().find(|(a, k, _)| *a == api_version && *k == kind)?.2;
    let mut schema: Value = serde_json::from_str(text).ok()?;
    strict(&mut schema, false);
    jsonschema::validator_for(&schema).ok()
}

/// Which schema family judges a document.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Talos((u32, u32)),
    Kube,
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
}

/// The lazily compiled validators and the verdict cache of one run.
#[derive(Default)]
struct Judge<'a> {
    talos: BTreeMap<(u32, u32), Option<TalosSchema>>,
    kube: HashMap<(String, String), Option<Validator>>,
    verdicts: HashMap<(Target, &'a str), Verdict>,
    report: Report,
}

impl<'a> Judge<'a> {
    fn judge(&mut self, target: Target, text: &'a str) -> &Verdict {
        self.report.documents += 1;
        if !self.verdicts.contains_key(&(target, text)) {
            self.report.distinct += 1;
            let v = self.fresh(target, text);
            if v.judged {
                self.report.judged += 1;
            }
            self.verdicts.insert((target, text), v);
        } else if self.verdicts[&(target, text)].judged {
            self.report.judged += 1;
        }
        &self.verdicts[&(target, text)]
    }

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
                let schema = self.talos.entry(minor).or_insert_with(|| TalosSchema::load(minor));
                let Some(schema) = schema.as_mut() else {
                    return Verdict { what: kind, judged: false, findings: Vec::new() };
                };
                match schema.validator(&kind) {
                    Some(v) => Verdict { findings: findings(v, &value), what: kind, judged: true },
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
            Target::Kube => self.kube(&value),
        }
    }

    /// The verdict on one Kubernetes object.
    fn kube(&mut self, value: &Value) -> Verdict {
        let str_at = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let (api, kind) = (str_at("apiVersion"), str_at("kind"));
        let name = value.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        let what = if name.is_empty() { kind.clone() } else { format!("{kind} `{name}`") };
        let v = self.kube.entry((api.clone(), kind.clone())).or_insert_with(|| kube_validator(&api, &kind));
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

/// Where a file of out/ belongs in fleet.kdl: the cluster its path names, and the schema
/// family of its documents. `None`: not judged here (see the module doc).
fn place_of(fleet: &Fleet, path: &str) -> Option<(Target, Option<Span>)> {
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
            let c = cluster(Some(env), name)?;
            // The schema of the document model fleetc writes for this Talos (the 1.13 model on
            // 1.14 nodes, versions/talos.kdl), as `check::patches` judges the user's patches.
            Some((Target::Talos(crate::check::versions::table().documents(c.talos.value)), Some(c.name.span)))
        }
        ["capi", _, "providers", "00-crds" | "10-controllers", ..] => None,
        ["capi", mgmt, second, ..] => {
            let span = cluster(None, second).or_else(|| cluster(None, mgmt)).map(|c| c.name.span);
            Some((Target::Kube, span))
        }
        ["argocd", env, name, ..] => Some((Target::Kube, cluster(Some(env), name).map(|c| c.name.span))),
        _ => None,
    }
}

/// The vendored manifests a fleet embeds: the file, where fleet.kdl names it, and which
/// out/ files carry it.
fn vendored(fleet: &Fleet) -> Vec<(&Vendored, String)> {
    let mut out = Vec::new();
    for addon in fleet.addons.values() {
        let users: Vec<String> = fleet
            .clusters()
            .filter(|(_, c)| c.addons.iter().any(|a| a.value == addon.name.value))
            .map(|(e, c)| format!("talos/{}/{}/controlplane.yaml", e.name.value, c.name.value))
            .collect();
        let carried = match users.as_slice() {
            [] => "embedded nowhere yet".to_owned(),
            [one] => format!("embedded in out/{one}"),
            [first, rest @ ..] => format!("embedded in out/{first} and {} more", rest.len()),
        };
        out.push((&addon.manifest, carried));
    }
    for (e, c) in fleet.clusters() {
        if let Some(capi) = &c.cluster_api {
            let _ = e;
            for (file, m) in [("00-cert-manager", &capi.cert_manager), ("10-capi-operator", &capi.operator_manifest)] {
                if let Some(m) = m {
                    out.push((m, format!("embedded in out/capi/{}/providers/…/{file}.yaml", c.name.value)));
                }
            }
        }
    }
    if let Some(argocd) = &fleet.argocd {
        out.push((&argocd.manifest, "applied by `fleetc apply` as Argo CD's install".to_owned()));
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
/// was judged.
pub fn run<'a>(fleet: &'a Fleet, files: impl Iterator<Item = (&'a str, &'a [u8])>) -> (Diagnostics, Report) {
    let mut judge = Judge::default();
    let mut diags = Diagnostics::new();
    // Vendored manifests were parsed once, when the fleet was resolved.
    for (m, carried) in vendored(fleet) {
        for (i, object) in m.objects.iter().enumerate() {
            judge.report.documents += 1;
            judge.report.distinct += 1;
            let verdict = judge.kube(object);
            if verdict.judged {
                judge.report.judged += 1;
            }
            for f in &verdict.findings {
                diags.push(
                    diagnostic(&m.path.value, i, &verdict, f)
                        .at(m.path.span)
                        .label(format!("this vendored manifest, {carried}")),
                );
            }
        }
    }
    for (path, bytes) in files {
        let Some((target, span)) = place_of(fleet, path) else { continue };
        let Ok(text) = std::str::from_utf8(bytes) else { continue };
        for (i, doc) in super::capi::providers::documents(text).into_iter().enumerate() {
            let verdict = judge.judge(target, doc);
            for f in &verdict.findings {
                let mut d = diagnostic(&format!("out/{path}"), i, verdict, f);
                if let Some(span) = span {
                    d = d.at(span).label("this cluster's document");
                }
                diags.push(d);
            }
        }
    }
    (diags, judge.report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_schema_compiles() {
        for (api, kind, _) in KUBE_SCHEMAS {
            assert!(kube_validator(api, kind).is_some(), "{api} {kind}");
        }
    }

    #[test]
    fn strict_refuses_an_unknown_field_and_a_wrong_type() {
        let v = kube_validator("apps/v1", "Deployment").unwrap();
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
