//! F1, R26: the rule `kubernetes-version`. A Kubernetes version change is an upgrade, one minor
//! at a time ([`kubernetes_path`]), by `talosctl upgrade-k8s` or by Cluster API rolling the
//! machines; a downgrade is a danger (the version skew policy describes upgrades only).

use super::{Ctx, Outcome, Severity, Version, cluster_of, stable_changes, version};

/// Kubernetes minors from `from` to `to`, one at a time.
pub(super) fn kubernetes_path(from: Version, to: Version) -> String {
    if from.minor_version() == to.minor_version() || from.major != to.major {
        return format!("{from} → {to}");
    }
    let mut steps: Vec<String> = (from.minor..to.minor).map(|m| format!("{}.{m}", from.major)).collect();
    steps.push(to.to_string());
    steps.join(" → ")
}

/// F1, R26: a Kubernetes version change is an upgrade, one minor at a time.
pub(super) fn kubernetes_version(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "kubernetes") {
        out.claim(i);
        let (Some(from), Some(to)) = (version(c.old.as_ref()), version(c.new.as_ref())) else { continue };
        let managed = cluster_of(ctx.new, &c.scope).is_some_and(crate::model::Cluster::is_managed);
        let change = format!("Kubernetes {from} → {to}");
        if to < from {
            out.push(
                Severity::Danger,
                c.scope.subject(),
                change,
                "a downgrade: Kubernetes supports upgrades only (its version skew policy describes no way back)",
            );
        } else if managed {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                change,
                format!(
                    "Cluster API rolls every machine, control plane first, one minor at a time: {}",
                    kubernetes_path(from, to)
                ),
            );
        } else {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                change,
                format!("upgrade needed: `talosctl upgrade-k8s --to {to}` (control plane first, then every kubelet), one minor at a time: {}", kubernetes_path(from, to)),
            );
        }
    }
}
