//! Namespaces of vendored objects (R11): Talos applies an add-on's namespaced object that has
//! no `metadata.namespace` in `default` (siderolabs/talos v1.13.9
//! `internal/app/machined/pkg/controllers/k8s/manifest_apply.go` l.301-304), and `kubectl
//! apply -f` applies Cluster API's cert-manager and operator pins in its kubeconfig's namespace,
//! `default` too. A chart rendered with `helm template --namespace X` usually writes no
//! namespace (`helm install` sets it), so its Deployment lands away from the RBAC subjects and
//! Secrets that name `X`, and the add-on never starts. Each such manifest is refused once, at
//! its `manifest=`. Argo CD's install is applied with `-n` into its namespace, so it may leave
//! the namespace out.
//!
//! Scope is known for Kubernetes' built-in kinds ([`CLUSTER_SCOPED`]: every other kind of a
//! built-in group is namespaced; the kube oracle checks the table against kube-apiserver's own
//! discovery) and for the kinds of the CRDs a vendored manifest installs (`spec.scope`). An
//! object of any other kind is not judged: the CRD that serves it says, and fleetc has not read it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::stand_in::{Named, vendored};
use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::Fleet;

/// The API groups Kubernetes serves itself (`""` is the core group).
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// The cluster-scoped kinds of the built-in groups, as (group, kind), at Kubernetes 1.35 and
/// 1.36 (k8s.io/kubernetes v1.36.3 `api/openapi-spec/v3`: the kinds whose paths hold no
/// `{namespace}`). `oracles/kube` compares this table with kube-apiserver's discovery
/// (`kubectl api-resources`) and fails on any difference in a kind the server serves.
pub const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "ComponentStatus"),
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "SelfSubjectReview"),
    ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("internal.apiserver.k8s.io", "StorageVersion"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "DeviceTaintRule"),
    ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("storagemigration.k8s.io", "StorageVersionMigration"),
];

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// The group of an object's `apiVersion` (`apps/v1` → `apps`, `v1` → the core group).
fn group(object: &Value) -> &str {
    str_at(object, "/apiVersion").rsplit_once('/').map_or("", |(g, _)| g)
}

/// Whether objects of (group, kind) are namespaced: `Some` for the built-in kinds and the kinds
/// of `crds`, `None` for any other.
fn namespaced(crds: &BTreeMap<(String, String), bool>, group: &str, kind: &str) -> Option<bool> {
    if BUILT_IN_GROUPS.contains(&group) {
        return Some(!CLUSTER_SCOPED.contains(&(group, kind)));
    }
    crds.get(&(group.to_owned(), kind.to_owned())).copied()
}

/// The namespaced objects of `objects` without a namespace, as `Kind `name``.
fn unplaced(objects: &[Value], crds: &BTreeMap<(String, String), bool>) -> Vec<String> {
    objects
        .iter()
        .filter(|o| str_at(o, "/metadata/namespace").is_empty())
        .filter(|o| namespaced(crds, group(o), str_at(o, "/kind")) == Some(true))
        .map(|o| format!("{} `{}`", str_at(o, "/kind"), str_at(o, "/metadata/name")))
        .collect()
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    let all = vendored(fleet);
    // Every CRD any vendored manifest installs: (group, kind) → namespaced.
    let crds: BTreeMap<(String, String), bool> = all
        .iter()
        .flat_map(|n| n.manifest.objects.iter())
        .filter(|o| str_at(o, "/kind") == "CustomResourceDefinition" && group(o) == "apiextensions.k8s.io")
        .map(|o| {
            let key = (str_at(o, "/spec/group").to_owned(), str_at(o, "/spec/names/kind").to_owned());
            (key, str_at(o, "/spec/scope") == "Namespaced")
        })
        .collect();
    let mut seen: Vec<Span> = Vec::new();
    for Named { what, manifest: m, namespaced_by_apply } in all {
        if namespaced_by_apply || seen.contains(&m.path.span) {
            continue;
        }
        seen.push(m.path.span);
        let lost = unplaced(&m.objects, &crds);
        let Some(first) = lost.first() else { continue };
        let listed = match lost.len() {
            1 => first.clone(),
            n if n <= 3 => lost.join(", "),
            n => format!("{} and {} more", lost[..3].join(", "), n - 3),
        };
        let applier = if what.starts_with("add-on") { "Talos applies" } else { "`kubectl apply -f` applies" };
        diags.push(
            Diagnostic::new(
                &codes::ADDON_NAMESPACE_MISSING,
                format!(
                    "`{}`, the manifest of {what}, has {} namespaced object{} without a namespace: {listed}",
                    m.path.value,
                    lost.len(),
                    if lost.len() == 1 { "" } else { "s" }
                ),
            )
            .at(m.path.span)
            .label("applied in `default`")
            .help(format!(
                "{applier} a namespaced object without a namespace in `default`, away from the namespace its RBAC subjects and Secrets name, so {what} does not start (R11); `helm template --namespace` does not set it, `helm install` does: set `metadata.namespace` on each, say so in the file's header, and pin the new sha256"
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn objects(yaml: &str) -> Vec<Value> {
        serde_saphyr::from_multiple::<Value>(yaml).unwrap().into_iter().filter(|v| !v.is_null()).collect()
    }

    #[test]
    fn namespaced_objects_without_a_namespace_are_found_and_the_rest_are_not() {
        let crds = BTreeMap::from([
            (("snapshot.storage.k8s.io".to_owned(), "VolumeSnapshotClass".to_owned()), false),
            (("example.org".to_owned(), "Widget".to_owned()), true),
        ]);
        let found = unplaced(
            &objects(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n---\n\
                 apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n  namespace: kube-system\n---\n\
                 apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cr\n---\n\
                 apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: sc\n---\n\
                 apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata:\n  name: vsc\n---\n\
                 apiVersion: example.org/v1\nkind: Widget\nmetadata:\n  name: w\n---\n\
                 apiVersion: unknown.example/v1\nkind: Gadget\nmetadata:\n  name: g\n---\n\
                 apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n",
            ),
            &crds,
        );
        assert_eq!(found, ["Deployment `d`", "Widget `w`"]);
    }

    #[test]
    fn the_cluster_scoped_table_names_only_built_in_groups_in_order() {
        let mut sorted = CLUSTER_SCOPED.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, CLUSTER_SCOPED, "sorted, no repeats");
        for (g, k) in CLUSTER_SCOPED {
            assert!(BUILT_IN_GROUPS.contains(g), "{g} {k}: not a built-in group");
        }
    }
}
