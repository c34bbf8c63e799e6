//! R29: the rule `control-plane-count`. The control plane's size decides how many losses etcd
//! survives: the impact names the members before and after and the nodes added or removed, and
//! is a danger when the control plane falls below three. The pool's `addresses` change that
//! only follows the count is claimed with it ([`super::claim_count_addresses`]).

use super::{
    Ctx, Outcome, Severity, claim_count_addresses, hostnames, is_control_plane, list, pool_of, stable_changes,
};

/// R29: the control plane's size decides how many losses etcd survives.
pub(super) fn control_plane_count(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "count") {
        if !is_control_plane(&c.scope) {
            continue;
        }
        out.claim(i);
        claim_count_addresses(ctx, out, &c.scope);
        let (Some(from), Some(to)) =
            (c.old.as_ref().and_then(|v| v.parse::<u32>().ok()), c.new.as_ref().and_then(|v| v.parse::<u32>().ok()))
        else {
            continue;
        };
        let survives = |n: u32| n.saturating_sub(1) / 2;
        let old_hosts = hostnames(ctx.old.and_then(|o| pool_of(o, &c.scope)));
        let new_hosts = hostnames(pool_of(ctx.new, &c.scope));
        let nodes = if to > from {
            format!("nodes added: {}", list(&new_hosts.difference(&old_hosts).cloned().collect::<Vec<_>>()))
        } else {
            format!(
                "nodes removed, each leaving etcd as it is reset: {}",
                list(&old_hosts.difference(&new_hosts).cloned().collect::<Vec<_>>())
            )
        };
        let severity = if to < 3 && from >= 3 { Severity::Danger } else { Severity::Warning };
        out.push(
            severity,
            c.scope.subject(),
            format!("control-plane count {from} → {to}"),
            format!(
                "etcd quorum changes: {from} members survive {} lost → {to} members survive {}; {nodes}",
                survives(from),
                survives(to)
            ),
        );
    }
}
