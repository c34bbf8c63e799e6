//! What the OpenTofu roots need from fleet.kdl: on Scaleway, the gateway's reserved address
//! (R16) and the admin source ranges of the API switches (R13); on Proxmox, a static address
//! for every node OpenTofu builds. IAM is refused earlier, by the resolver (R8).

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Fleet, Provider};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for env in &fleet.environments {
        shared_state(env, diags);
        match &env.provider {
            Provider::Scaleway(s) => {
                if env.gateway.is_none() {
                    diags.push(
                        Diagnostic::new(
                            &codes::TOFU_NO_GATEWAY,
                            format!("environment `{}` runs on Scaleway and has no `gateway` address", env.name.value),
                        )
                        .at(env.name.span)
                        .label("no gateway")
                        .related(s.span, "nodes here have no public address (R12)"),
                    );
                }
                if env.admin_ranges.is_empty() {
                    diags.push(
                        Diagnostic::new(
                            &codes::TOFU_NO_ADMIN_RANGES,
                            format!(
                                "environment `{}` runs on Scaleway and has no `admin-ranges` for its API switches",
                                env.name.value
                            ),
                        )
                        .at(env.name.span)
                        .label("no admin source range"),
                    );
                }
            }
            // Bare metal: `fleetc apply` reaches each machine at its address (checked in
            // `nodes.rs`); there is no OpenTofu root.
            Provider::Metal(_) => {}
            Provider::Proxmox(_) => {
                for cluster in env.clusters.iter().filter(|c| !c.is_managed()) {
                    for pool in cluster.pools() {
                        // A pool with some addresses but not one per node is the resolver's
                        // count mismatch; this is the pool that gives none.
                        let missing = pool.machines.len();
                        if missing > 0 && pool.machines.iter().all(|m| m.address.is_none()) {
                            diags.push(
                                Diagnostic::new(
                                    &codes::TOFU_NO_ADDRESS,
                                    format!(
                                        "pool `{}` of cluster `{}` gives no static address for its {missing} node(s)",
                                        pool.name.value, cluster.name.value
                                    ),
                                )
                                .at(pool.span)
                                .label("give one address per node"),
                            );
                        } else if let Some(d) = unaddressed(pool) {
                            diags.push(d);
                        }
                    }
                }
            }
        }
    }
}

/// A pool whose machines have static addresses but not all of them (newcomer-3.md m04:
/// `count=4` with 3 named nodes wrote `address = ""` for the 4th VM): the first machine
/// without one, with the count and what gives the others theirs.
fn unaddressed(pool: &crate::model::Pool) -> Option<Diagnostic> {
    // A pool with `addresses` (an unnamed machine has one) that are not one per node is the
    // resolver's count mismatch, reported there: one cause, one error.
    if pool.machines.iter().any(|m| m.name.is_none() && m.address.is_some()) {
        return None;
    }
    let m = pool.machines.iter().find(|m| m.address.is_none())?;
    let given = pool.machines.iter().filter(|m| m.address.is_some()).count();
    let count = pool.count.value;
    let named = pool.machines.iter().filter(|m| m.name.is_some()).count();
    let (label, help) = match &m.name {
        None if named > 0 => (
            format!("machine {} of {count}, and {named} named node(s)", m.index),
            format!(
                "Proxmox gives each VM its static address in the NoCloud `initialization` block, and this one has none (its tfvars would say `address = \"\"`): name node {} with its `address`, or lower `count` to {named}",
                m.index
            ),
        ),
        None => (
            format!("machine {} has no address", m.index),
            "Proxmox gives each VM its static address in the NoCloud `initialization` block: list one per node in `addresses`".to_owned(),
        ),
        Some(n) => (
            format!("node `{}` has no `address`", n.value),
            format!("Proxmox gives each VM its static address in the NoCloud `initialization` block: give node `{}` its `address`", n.value),
        ),
    };
    let at = m.name.as_ref().map_or(pool.count.span, |n| n.span);
    Some(
        Diagnostic::new(
            &codes::TOFU_NO_ADDRESS,
            format!(
                "pool `{}` has {count} machines and {given} static address(es): `{}` has none",
                pool.name.value, m.hostname
            ),
        )
        .at(at)
        .label(label)
        .related(pool.span, "the pool")
        .help(help),
    )
}

/// One state per cluster: an environment's cloud and cluster roots each hold every cluster the
/// roots build there, so two such clusters share a plan (a change to one is planned, and can be
/// applied, with the other). Say so, and how to give each its own state.
fn shared_state(env: &crate::model::Environment, diags: &mut Diagnostics) {
    let built: Vec<&crate::model::Cluster> = env.clusters.iter().filter(|c| !c.is_managed()).collect();
    let [first, second, ..] = built.as_slice() else { return };
    let e = &env.name.value;
    let c = &second.name.value;
    diags.push(
        Diagnostic::new(
            &codes::TOFU_SHARED_STATE,
            format!(
                "clusters `{}` and `{c}` of environment `{e}` share one OpenTofu state: a plan of one is a plan of both",
                first.name.value
            ),
        )
        .at(second.name.span)
        .label("planned with the other clusters of the environment")
        .related(first.name.span, "in the same cloud and cluster roots")
        .help(format!(
            "give `{c}` its own environment (`environment \"{e}-{c}\" from=\"{e}\"`, its own `network`), so that its roots have their own state; move what exists with `tofu state mv -state-out=<new state> module.{c} module.{c}` in `tofu/{e}/cloud` and `tofu/{e}/cluster`, then push each state to its new key (R1)",
        )),
    );
}
