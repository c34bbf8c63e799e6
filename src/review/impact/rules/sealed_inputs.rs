//! R14, F11: the rule `sealed-inputs`, a cluster's list of sealed inputs changed. The machine
//! secrets bundle is the cluster's identity, so losing it from the list is a danger; the other
//! sealed inputs are credentials that `fleetc apply` needs.

use std::collections::BTreeSet;

use super::{Ctx, Outcome, Severity, list, stable_changes};

/// The sealed input that carries a cluster's machine secrets bundle.
fn is_secrets_bundle(name: &str) -> bool {
    name.starts_with(crate::layout::names::TALOS_SECRETS_INPUT)
}

/// R14: the machine secrets bundle is the cluster's identity; other sealed inputs are
/// credentials that `apply` needs (F11).
pub(super) fn sealed_inputs(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "sealed") {
        out.claim(i);
        let split = |v: &Option<String>| -> BTreeSet<String> {
            v.as_deref().unwrap_or_default().split_whitespace().map(str::to_owned).collect()
        };
        let (old, new) = (split(&c.old), split(&c.new));
        let gone: Vec<String> = old.difference(&new).cloned().collect();
        let came: Vec<String> = new.difference(&old).cloned().collect();
        if gone.iter().any(|n| is_secrets_bundle(n)) {
            out.push(
                Severity::Danger,
                c.scope.subject(),
                format!("machine secrets reference changed: sealed {}", c.values()),
                "a new cluster identity: the running nodes will not join it (a second bundle is another cluster, not a repair)",
            );
        } else {
            let mut parts = Vec::new();
            if !came.is_empty() {
                parts.push(format!("added {}", list(&came)));
            }
            if !gone.is_empty() {
                parts.push(format!("removed {}", list(&gone)));
            }
            out.push(
                Severity::Warning,
                c.scope.subject(),
                format!("sealed inputs {}", parts.join(", ")),
                "`fleetc apply` needs every listed input sealed, and no longer passes a removed one to the cluster",
            );
        }
    }
}
