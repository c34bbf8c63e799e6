//! Kubernetes label, annotation and taint keys and values as Kubernetes and Talos accept them
//! (`model::k8s`), checked where a pool or a named node writes them, so that a node is never
//! configured with a key the API server or Talos refuses.

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Spanned, k8s};

/// A label or taint key Kubernetes accepts (`super::k8s`); reports it otherwise.
pub(super) fn kubernetes_key(k: &Spanned<String>, what: &str, d: &mut Diagnostics) -> bool {
    let Some(why) = k8s::qualified_name_problem(&k.value) else { return true };
    let suggestion = k8s::suggest(&k.value);
    let mut diag = Diagnostic::new(
        &codes::INVALID_LABEL,
        format!("{what} key `{}` is not a Kubernetes qualified name: {why}", k.value),
    )
    .at(k.span)
    .label("Kubernetes refuses this key");
    if k8s::qualified_name_problem(&suggestion).is_none() && !suggestion.is_empty() {
        diag.help = Some(format!(
            "write `{suggestion}`: Kubernetes refuses the Node update with this key (k8s.io/apimachinery `IsQualifiedName`), so the node would never carry it"
        ));
    }
    d.push(diag);
    false
}

/// The most bytes (keys and values) the annotations of one object may hold: 256 KiB
/// (siderolabs/talos v1.13.9 `pkg/machinery/labels/validate.go` `TotalAnnotationSizeLimitB`).
pub(super) const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// Talos keeps three annotation keys for itself (the keys it owns on the Node) and refuses a
/// config that sets one (siderolabs/talos v1.13.9 `pkg/machinery/labels/validate.go`
/// `ValidateAnnotations`; the keys in `pkg/machinery/constants/constants.go`).
const TALOS_RESERVED_ANNOTATIONS: [&str; 3] =
    ["talos.dev/owned-labels", "talos.dev/owned-annotations", "talos.dev/owned-taints"];

pub(super) fn annotation_not_reserved(k: &Spanned<String>, d: &mut Diagnostics) -> bool {
    if !TALOS_RESERVED_ANNOTATIONS.contains(&k.value.as_str()) {
        return true;
    }
    d.push(
        Diagnostic::new(&codes::INVALID_LABEL, format!("annotation key `{}` is reserved by Talos", k.value))
            .at(k.span)
            .label("Talos refuses this key")
            .help("Talos records in `talos.dev/owned-labels`, `talos.dev/owned-annotations` and `talos.dev/owned-taints` which Node keys it manages, and refuses a machine config that sets one (Talos `ValidateAnnotations`): choose a key of your own prefix"),
    );
    false
}

/// A label or taint value Kubernetes accepts; reports it otherwise.
pub(super) fn kubernetes_value(v: &Spanned<String>, what: &str, d: &mut Diagnostics) -> bool {
    let Some(why) = k8s::label_value_problem(&v.value) else { return true };
    let suggestion = k8s::suggest(&v.value).replace('/', "-");
    let mut diag = Diagnostic::new(
        &codes::INVALID_LABEL,
        format!("{what} value `{}` is not a Kubernetes label value: {why}", v.value),
    )
    .at(v.span)
    .label("Kubernetes refuses this value");
    if k8s::label_value_problem(&suggestion).is_none() {
        diag.help = Some(format!(
            "write `{suggestion}`: Kubernetes refuses the Node update with this value (k8s.io/apimachinery `IsValidLabelValue`), so the node would never carry it"
        ));
    }
    d.push(diag);
    false
}

/// The labels a kubelet may set on its own Node under the NodeRestriction admission plugin,
/// which Talos enables (siderolabs/talos v1.13.9
/// `internal/app/machined/pkg/controllers/k8s/control_plane_static_pod.go` l.349): kubernetes
/// v1.35.0 `plugin/pkg/admission/noderestriction/admission.go` `getForbiddenLabels` refuses
/// `node-restriction.kubernetes.io/` (and `*.node-restriction.kubernetes.io/`), and every other
/// key in `kubernetes.io`, `k8s.io` or a subdomain of them outside k8s.io/kubelet v0.35.0
/// `pkg/apis/well_known_labels.go` `IsKubeletLabel`: these keys, and the namespaces
/// `kubelet.kubernetes.io` and `node.kubernetes.io` with their subdomains.
pub const KUBELET_LABELS: [&str; 11] = [
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
];

/// The label namespaces a kubelet may set (`IsKubeletLabel`, with their subdomains).
pub const KUBELET_LABEL_NAMESPACES: [&str; 2] = ["kubelet.kubernetes.io", "node.kubernetes.io"];

/// Why NodeRestriction refuses a node to set the label `key` on itself, or `None`.
pub fn node_restricted(key: &str) -> Option<&'static str> {
    let (ns, _) = key.split_once('/')?;
    let within = |ns: &str, d: &str| ns == d || ns.ends_with(&format!(".{d}"));
    if within(ns, "node-restriction.kubernetes.io") {
        return Some(
            "the `node-restriction.kubernetes.io/` prefix exists so that only an administrator sets it: NodeRestriction refuses it from a node",
        );
    }
    let kubernetes = within(ns, "kubernetes.io") || within(ns, "k8s.io");
    let kubelet = KUBELET_LABELS.contains(&key) || KUBELET_LABEL_NAMESPACES.iter().any(|d| within(ns, d));
    (kubernetes && !kubelet).then_some(
        "NodeRestriction lets a node set only the kubelet's own labels in the `kubernetes.io` and `k8s.io` namespaces (`kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch`, `topology.kubernetes.io/zone|region`, `node.kubernetes.io/instance-type`, and the `kubelet.kubernetes.io/` and `node.kubernetes.io/` prefixes), so that a node cannot steer workloads to itself",
    )
}

/// A worker's label is set on its Node with the kubelet's credentials (siderolabs/talos
/// v1.13.9 `internal/app/machined/pkg/controllers/k8s/node_apply.go` `getK8sClient`: a worker
/// uses the kubelet's kubeconfig, a control-plane node a temporary admin client), in one Node
/// update with all its labels and taints (`syncOnce`): a key NodeRestriction refuses makes the
/// whole update fail, and none of the node's labels apply. Reports such a key.
pub(super) fn kubelet_may_set(k: &Spanned<String>, d: &mut Diagnostics) -> bool {
    let Some(why) = node_restricted(&k.value) else { return true };
    let ns = k.value.split_once('/').map_or("", |(n, _)| n);
    d.push(
        Diagnostic::new(&codes::NODE_RESTRICTED_LABEL, format!("a worker node may not set label `{}` on itself", k.value))
            .at(k.span)
            .label("NodeRestriction refuses this key from a node")
            .help(format!(
                "{why} (kubernetes v1.35 `plugin/pkg/admission/noderestriction`). Talos sets a worker's labels with the kubelet's credentials in one update, so the API server refuses it and none of the node's labels apply. Use a prefix of your own (`node.example.com/{}`), or set `{ns}/…` labels from outside the node (an operator, `kubectl label`)",
                k.value.split_once('/').map_or(k.value.as_str(), |(_, n)| n)
            )),
    );
    false
}
