//! `fleetc check --base REV`: no version goes backwards. `fleetc diff` calls these changes a
//! downgrade (`review/impact/rules/talos_version.rs`, `kubernetes_version.rs`); the CI gate
//! refuses them.
//!
//! - Kubernetes (control plane or a pinned worker pool): its version skew policy describes
//!   upgrades only (R26);
//! - Talos: upgrades are tested forward, between adjacent minors; `talosctl rollback` is the only
//!   way back, and it is a command on a node, not a lower version in fleet.kdl (F1);
//! - the Cluster API providers a management cluster pins: `clusterctl upgrade` moves providers
//!   forward only, and an older controller cannot read objects its successor stored (R24).

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Fleet, Version};

pub(super) fn check(old: &Fleet, new: &Fleet, diags: &mut Diagnostics) {
    for env in &new.environments {
        let Some(old_env) = old.environment(&env.name.value) else { continue };
        for c in &env.clusters {
            let Some(before) = old_env.clusters.iter().find(|o| {
                o.name.value == c.name.value || c.former_name.as_ref().is_some_and(|f| f.value == o.name.value)
            }) else {
                continue;
            };
            let who = format!("{}/{}", env.name.value, c.name.value);
            if c.kubernetes.value < before.kubernetes.value {
                diags.push(
                    Diagnostic::new(
                        &codes::UPGRADE_KUBERNETES_DOWNGRADE,
                        format!(
                            "cluster `{who}` moves Kubernetes back from {} to {}",
                            before.kubernetes.value, c.kubernetes.value
                        ),
                    )
                    .at(c.kubernetes.span)
                    .label(format!("was {} at the base revision", before.kubernetes.value))
                    .help(
                        "Kubernetes supports upgrades only: its version skew policy describes no way back (R26); keep the version, or build a new cluster at the older one and move the workloads",
                    ),
                );
            } else {
                for p in &c.workers {
                    let Some(k) = &p.kubernetes else { continue };
                    let Some(op) = before.workers.iter().find(|o| o.name.value == p.name.value) else { continue };
                    let was = before.pool_kubernetes(op);
                    if k.value < was {
                        diags.push(
                            Diagnostic::new(
                                &codes::UPGRADE_KUBERNETES_DOWNGRADE,
                                format!(
                                    "pool `{}` of `{who}` moves Kubernetes back from {was} to {}",
                                    p.name.value, k.value
                                ),
                            )
                            .at(k.span)
                            .label(format!("was {was} at the base revision"))
                            .help("a kubelet is upgraded, never downgraded (R26): keep the pool at its version"),
                        );
                    }
                }
            }
            // On a cluster whose cluster root holds the machine secrets, the same change also
            // replaces the cluster's identity: `secrets_version.rs` reports it, once.
            let identity = env.secrets_in_cluster_root(c) && old_env.secrets_in_cluster_root(before);
            if c.talos.value < before.talos.value && !identity {
                diags.push(
                    Diagnostic::new(
                        &codes::UPGRADE_TALOS_DOWNGRADE,
                        format!("cluster `{who}` moves Talos back from {} to {}", before.talos.value.v(), c.talos.value.v()),
                    )
                    .at(c.talos.span)
                    .label(format!("was {} at the base revision", before.talos.value.v()))
                    .help(
                        "Talos tests upgrades forward only (F1): keep the version in fleet.kdl; to take a node back after a failed upgrade, `talosctl rollback` returns it to the image it booted before",
                    ),
                );
            }
            if let (Some(now), Some(was)) = (&c.cluster_api, &before.cluster_api) {
                let pairs: [(&str, &crate::model::Spanned<Version>, Version); 6] = [
                    ("core", &now.core, was.core.value),
                    ("bootstrap-talos", &now.bootstrap_talos, was.bootstrap_talos.value),
                    ("control-plane-talos", &now.control_plane_talos, was.control_plane_talos.value),
                    ("infrastructure-proxmox", &now.infrastructure_proxmox, was.infrastructure_proxmox.value),
                    ("ipam-in-cluster", &now.ipam_in_cluster, was.ipam_in_cluster.value),
                    ("operator", &now.operator, was.operator.value),
                ];
                for (what, v, before) in pairs {
                    if v.value < before {
                        diags.push(
                            Diagnostic::new(
                                &codes::UPGRADE_PROVIDER_DOWNGRADE,
                                format!("management cluster `{who}` moves `{what}` back from {before} to {}", v.value),
                            )
                            .at(v.span)
                            .label(format!("was {before} at the base revision"))
                            .help("`clusterctl upgrade` moves providers forward only, and an older controller cannot read objects stored by a newer one (R24); keep the pin"),
                        );
                    }
                }
            }
        }
    }
}
