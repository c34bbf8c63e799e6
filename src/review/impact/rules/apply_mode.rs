//! R19, F10: the rule `apply-mode`, how a changed machine config reaches the nodes. A move to
//! `reboot` on a running cluster, or any other change to a running cluster already in `reboot`
//! mode, reboots every node whose config changes (one at a time under `fleetc apply`, R19); the
//! other modes say what they do from now on.

use std::collections::BTreeSet;

use super::{Ctx, Outcome, Scope, Severity, stable, stable_changes};

/// R19, F10: how a changed machine config reaches the nodes.
pub(super) fn apply_mode(ctx: &Ctx<'_>, out: &mut Outcome) {
    const REBOOT: &str = "every node whose config changes reboots: `fleetc apply` reboots them one at a time with `talosctl health` after each (R19, F3); a plain `tofu apply` of the cluster root never reboots (its variables file's mode is `no_reboot`, `staged_if_needing_reboot` on Talos 1.12), so such a change waits for `fleetc apply`; Talos 1.14 drops `reboot`";
    let mut reported = BTreeSet::new();
    for (i, c) in stable_changes(ctx, "apply-mode") {
        out.claim(i);
        reported.insert(c.scope.clone());
        let new = c.new.as_deref().unwrap_or_default();
        if new == "reboot" {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                format!("apply mode {} on a running cluster", c.values()),
                REBOOT,
            );
        } else {
            let how = match new {
                "auto" => "Talos applies live what it can and reboots when it must",
                "no_reboot" => "a change that needs a reboot is not applied: `fleetc apply` refuses to reboot for it",
                "staged" => "changes wait for the next reboot",
                "staged_if_needing_reboot" => "changes apply live, or wait for the next reboot when they need one",
                _ => "unknown",
            };
            out.push(
                Severity::Info,
                c.scope.subject(),
                format!("apply mode {}", c.values()),
                format!("from now on: {how}"),
            );
        }
    }
    // A running cluster already in `reboot` mode, with any other change to its configuration.
    for (_, cl) in ctx.new.clusters() {
        if cl.apply_mode.value != crate::model::ApplyMode::Reboot {
            continue;
        }
        let scope = Scope::Cluster { env: cl.env.clone(), cluster: cl.name.value.clone() };
        if reported.contains(&scope) || !stable(ctx, &scope) {
            continue;
        }
        let changed = ctx.changes.iter().any(|c| c.scope.within(&scope) && !matches!(c.scope, Scope::App { .. }));
        if changed {
            out.push(
                Severity::Warning,
                scope.subject(),
                "a change to a running cluster whose apply mode is `reboot`",
                REBOOT,
            );
        }
    }
}
