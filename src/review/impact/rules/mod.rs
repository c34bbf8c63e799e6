//! The impact rules, one file each, listed in [`RULES`]. A rule reads the fact changes and the
//! artifact diff in [`Ctx`], pushes what the change does to running clusters, and claims what
//! it explained; `unknown::unknown` reports everything left unclaimed. Each rule cites the
//! domain ids (../shared/domain.md) its effect rests on, and docs/diff.md lists them. This file
//! holds the registry and the vocabulary several rules share (the changes of entities that stay,
//! the entity a scope names, lists and short IDs as impacts print them); a helper one rule uses
//! lives in that rule's file, and rules never import each other.
//!
//! Adding a rule: a new file `rules/<name>.rs` named after its registry name (a module doc
//! citing its R-/F-ids, and the rule as one `pub(super) fn`), its `mod` line and its row in
//! [`RULES`], and a case in the test table of `rules/tests.rs` (a test fails while a rule has
//! no case); document it in docs/diff.md.

use std::collections::BTreeSet;

mod apply_mode;
mod apps;
mod control_plane_count;
mod disk_security;
mod ephemeral_volume;
mod install_image;
mod kubernetes_version;
mod lifecycle;
mod machine_arguments;
mod sealed_inputs;
mod secrets_version;
mod size_class;
mod talos_api_access;
mod talos_fields;
mod talos_version;
mod template_renamed;
mod tofu_address;
pub(super) mod unknown;
mod worker_count;
pub use talos_fields::{Reach, TABLE as TALOS_FIELDS, changed_paths, effect as field_effect, reach};
pub use tofu_address::resource_effect;

use super::facts::{self, CONTROL_PLANE, EXISTS, FactChange, Scope};
use super::{Ctx, Impact, Outcome, Severity};
use crate::model::{Fleet, Version};
use crate::review::files::Status;

/// One rule: its name (shown in JSON output), the domain ids it cites, what it covers.
pub struct Rule {
    pub name: &'static str,
    pub cites: &'static str,
    pub covers: &'static str,
    pub check: fn(&Ctx<'_>, &mut Outcome),
}

/// Every rule, in the order their impacts are listed within one severity.
pub static RULES: &[Rule] = &[
    Rule {
        name: "lifecycle",
        cites: "R14, F13, R28",
        covers: "environments, clusters, pools and services added, removed, or renamed with or without `was=`; a bucket or registry whose global name changes; the environment's OpenTofu state moved (R28)",
        check: lifecycle::lifecycle,
    },
    Rule {
        name: "install-image",
        cites: "F1, F2, R17",
        covers: "a pool's schematic, or a schematic's content, changed",
        check: install_image::install_image,
    },
    Rule {
        name: "talos-version",
        cites: "F1",
        covers: "a cluster's Talos version changed",
        check: talos_version::talos_version,
    },
    Rule {
        name: "secrets-version",
        cites: "R14",
        covers: "the `talos_version` the cluster root gives the machine secrets changed (with the cluster's Talos version): DANGER when the provider would replace the cluster's identity",
        check: secrets_version::secrets_version,
    },
    Rule {
        name: "disk-security",
        cites: "F1, R17",
        covers: "a pool's disk encryption (volumes, key sources) or SecureBoot changed",
        check: disk_security::disk_security,
    },
    Rule {
        name: "kubernetes-version",
        cites: "F1, R26",
        covers: "a cluster's Kubernetes version changed",
        check: kubernetes_version::kubernetes_version,
    },
    Rule {
        name: "machine-arguments",
        cites: "F1, F4, R29",
        covers: "a value the roots' machines are built from changed (image, instance type, disk sizes, addresses, Proxmox VE node, guest agent, Scaleway project or zone): what its provider does, from the table the emitter reads (emit::tofu::arguments)",
        check: machine_arguments::machine_arguments,
    },
    Rule {
        name: "size-class",
        cites: "F4",
        covers: "a pool's size class, or a class no pool uses, changed without changing what the provider builds",
        check: size_class::size_class,
    },
    Rule {
        name: "control-plane-count",
        cites: "R29",
        covers: "the number of control-plane nodes changed",
        check: control_plane_count::control_plane_count,
    },
    Rule {
        name: "worker-count",
        cites: "R5",
        covers: "the number of nodes of a worker pool changed",
        check: worker_count::worker_count,
    },
    Rule {
        name: "apply-mode",
        cites: "R19, F10",
        covers: "the apply mode changed, or a running cluster with apply mode `reboot` changed",
        check: apply_mode::apply_mode,
    },
    Rule {
        name: "talos-api-access",
        cites: "R13",
        covers: "who reaches the nodes' Talos API: a Scaleway environment's `admin-ranges`, the gateway's SSH bastion (enabled, port, allowed ranges), a gateway rule to port 50000",
        check: talos_api_access::talos_api_access,
    },
    Rule {
        name: "ephemeral-volume",
        cites: "F5, R15",
        covers: "the EPHEMERAL volume's selector (`ephemeral-min-size`) changed",
        check: ephemeral_volume::ephemeral_volume,
    },
    Rule {
        name: "sealed-inputs",
        cites: "R14, F11",
        covers: "a cluster's list of sealed inputs changed (the machine secrets bundle above all)",
        check: sealed_inputs::sealed_inputs,
    },
    Rule { name: "apps", cites: "R23, F7", covers: "an Argo CD app added, removed or changed", check: apps::apps },
    Rule {
        name: "talos-fields",
        cites: "F5, F10, F1",
        covers: "a field of a Talos document under out/talos changed: applied live, reboot, first provisioning, bootstrap or upgrade, per the cluster's Talos version",
        check: talos_fields::talos_fields,
    },
    Rule {
        name: "template-renamed",
        cites: "R26",
        covers: "a Cluster API template (TalosConfigTemplate, …MachineTemplate) renamed in the output",
        check: template_renamed::template_renamed,
    },
    Rule {
        name: "tofu-address",
        cites: "R14",
        covers: "an OpenTofu resource block removed from the output without a `moved` block, or moved",
        check: tofu_address::tofu_address,
    },
];

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// Changes of `field` on entities that exist on both sides.
fn stable_changes<'a>(ctx: &'a Ctx<'_>, field: &'a str) -> impl Iterator<Item = (usize, &'a FactChange)> + 'a {
    ctx.changes
        .iter()
        .enumerate()
        .filter(move |(_, c)| c.field == field && c.old.is_some() && c.new.is_some() && stable(ctx, &c.scope))
}

/// The entity and every entity it lies in exist on both sides.
fn stable(ctx: &Ctx<'_>, scope: &Scope) -> bool {
    !ctx.changes.iter().any(|c| c.field == EXISTS && scope.within(&c.scope))
}

fn env_of<'a>(fleet: &'a Fleet, scope: &Scope) -> Option<&'a crate::model::Environment> {
    fleet.environment(scope.env()?)
}

fn cluster_of<'a>(fleet: &'a Fleet, scope: &Scope) -> Option<&'a crate::model::Cluster> {
    env_of(fleet, scope)?.cluster(scope.cluster()?)
}

fn pool_of<'a>(fleet: &'a Fleet, scope: &Scope) -> Option<&'a crate::model::Pool> {
    let Scope::Pool { pool, .. } = scope else { return None };
    cluster_of(fleet, scope)?.pools().find(|p| p.name.value == *pool)
}

fn is_control_plane(scope: &Scope) -> bool {
    matches!(scope, Scope::Pool { pool, .. } if pool == CONTROL_PLANE)
}

fn short_id(id: &str) -> String {
    if id.len() > 12 { format!("{}…", &id[..12]) } else { id.to_owned() }
}

fn list(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

fn version(s: Option<&String>) -> Option<Version> {
    s?.parse().ok()
}

fn hostnames(pool: Option<&crate::model::Pool>) -> BTreeSet<String> {
    pool.map(|p| p.machines.iter().map(|m| m.hostname.clone()).collect()).unwrap_or_default()
}

/// A count change explains the pool's `addresses` change when it only adds the addresses of
/// the added nodes or drops those of the removed ones: every node on both sides keeps its
/// address. Claims that change (a plain scale-up is not an unknown impact).
fn claim_count_addresses(ctx: &Ctx<'_>, out: &mut Outcome, scope: &Scope) {
    let (Some(old), Some(new)) = (ctx.old.and_then(|o| pool_of(o, scope)), pool_of(ctx.new, scope)) else { return };
    let address = |p: &crate::model::Pool, host: &str| {
        p.machines.iter().find(|m| m.hostname == host).map(|m| m.address.as_ref().map(|a| a.value))
    };
    let kept = old.machines.iter().all(|m| match address(new, &m.hostname) {
        Some(a) => a == m.address.as_ref().map(|a| a.value),
        None => true,
    });
    if !kept {
        return;
    }
    if let Some((i, _)) = stable_changes(ctx, "addresses").find(|(_, c)| c.scope == *scope) {
        out.claim(i);
    }
}

fn dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

#[cfg(test)]
mod tests;
