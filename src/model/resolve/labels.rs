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
