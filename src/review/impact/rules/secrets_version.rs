//! R14: the rule `secrets-version`. The cluster root gives `talos_machine_secrets` the
//! cluster's Talos version (`model::Cluster::secrets_talos_version`); the talos provider
//! replaces the secrets, the cluster's identity, when that value sorts below the stored one
//! (`upstream::talos_secrets::requires_replace`, siderolabs/terraform-provider-talos v0.11.0
//! `pkg/talos/talos_machine_secrets_resource.go` l.525-543), and `prevent_destroy` makes the
//! root's plan fail. Such a change is a danger (`fleetc check --base` refuses it:
//! `fleet::upgrade::identity-replaced`); a higher value is an update in place. Only clusters
//! whose cluster root holds the secrets (not Cluster API, not bare metal). The Talos version
//! change itself is the rule `talos-version`'s to claim.

use super::{Ctx, Outcome, Severity, cluster_of, env_of, stable_changes};
use crate::upstream::talos_secrets::requires_replace;

const SOURCE: &str = "terraform-provider-talos v0.11.0 talos_machine_secrets_resource.go l.525-543";

pub(super) fn secrets_version(ctx: &Ctx<'_>, out: &mut Outcome) {
    let Some(old) = ctx.old else { return };
    for (_, c) in stable_changes(ctx, "talos") {
        let (Some(env), Some(old_env)) = (env_of(ctx.new, &c.scope), env_of(old, &c.scope)) else { continue };
        let (Some(now), Some(before)) = (cluster_of(ctx.new, &c.scope), cluster_of(old, &c.scope)) else { continue };
        if !env.secrets_in_cluster_root(now) || !old_env.secrets_in_cluster_root(before) {
            continue;
        }
        let (was, is) = (before.secrets_talos_version(), now.secrets_talos_version());
        if was == is {
            continue;
        }
        let change = format!("`talos_machine_secrets.talos_version` {was} → {is}");
        if requires_replace(&is, &was) {
            out.push(
                Severity::Danger,
                c.scope.subject(),
                format!("{change}: replaces the cluster's identity"),
                format!(
                    "the talos provider replaces the machine secrets when their `talos_version` sorts lower ({SOURCE}); `prevent_destroy` makes the cluster root's plan fail, and a new bundle would be another cluster that the running nodes do not join (R14); `fleetc check --base` refuses it (fleet::upgrade::identity-replaced)"
                ),
            );
        } else {
            out.push(
                Severity::Info,
                c.scope.subject(),
                format!("{change}: updated in place"),
                format!(
                    "the identity is kept: the provider replaces the machine secrets only for a lower value ({SOURCE})"
                ),
            );
        }
    }
}
