//! `fleetc check --base REV`, R14: no change replaces a cluster's machine secrets. The cluster
//! root gives `talos_machine_secrets` the cluster's Talos version
//! ([`crate::model::Cluster::secrets_talos_version`]), and the talos provider replaces the
//! resource when that value sorts below the stored one
//! ([`crate::upstream::talos_secrets::requires_replace`], siderolabs/terraform-provider-talos
//! v0.11.0 `pkg/talos/talos_machine_secrets_resource.go` l.525-543). `prevent_destroy` then
//! makes every plan of the root fail. `fleetc diff` calls the same change DANGER (rule
//! `secrets-version`). Only clusters the roots build: a Cluster API cluster's secrets live in
//! its management cluster, a bare-metal cluster has no OpenTofu root.

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::Fleet;
use crate::upstream::talos_secrets::requires_replace;

pub(super) fn check(old: &Fleet, new: &Fleet, diags: &mut Diagnostics) {
    for env in &new.environments {
        let Some(old_env) = old.environment(&env.name.value) else { continue };
        for c in env.clusters.iter().filter(|c| env.secrets_in_cluster_root(c)) {
            let Some(before) = old_env.clusters.iter().find(|o| {
                o.name.value == c.name.value || c.former_name.as_ref().is_some_and(|f| f.value == o.name.value)
            }) else {
                continue;
            };
            if !old_env.secrets_in_cluster_root(before) {
                continue;
            }
            let (was, now) = (before.secrets_talos_version(), c.secrets_talos_version());
            if !requires_replace(&now, &was) {
                continue;
            }
            diags.push(
                Diagnostic::new(
                    &codes::UPGRADE_IDENTITY_REPLACED,
                    format!(
                        "cluster `{}/{}` moves Talos back from {} to {}: the cluster root would replace its machine secrets, the cluster's identity",
                        env.name.value,
                        c.name.value,
                        before.talos.value.v(),
                        c.talos.value.v()
                    ),
                )
                .at(c.talos.span)
                .label(format!("the secrets' talos_version is {was} at the base revision, {now} now"))
                .help(
                    "the talos provider replaces `talos_machine_secrets` when its talos_version goes lower (terraform-provider-talos v0.11.0 talos_machine_secrets_resource.go l.525-543); `prevent_destroy` makes every plan of the cluster root fail, and a new bundle would be a cluster the running nodes do not join (R14). Keep the version: Talos tests upgrades forward only (F1), and `talosctl rollback` returns a node to its previous image",
                ),
            );
        }
    }
}
