//! R5: the rule `worker-count`. Worker nodes come and go with the pool's count: nodes added are
//! news, nodes destroyed a warning (their workloads must fit on the rest). As in
//! `control-plane-count`, the pool's `addresses` change a plain scale-up makes is claimed with
//! the count ([`super::claim_count_addresses`]).

use super::{
    Ctx, Outcome, Severity, claim_count_addresses, facts, hostnames, is_control_plane, list, pool_of, stable_changes,
};
use crate::model::Role;

/// Worker nodes come and go with the pool's count.
pub(super) fn worker_count(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "count") {
        if is_control_plane(&c.scope) || facts::role(ctx.new, &c.scope) != Some(Role::Worker) {
            continue;
        }
        out.claim(i);
        claim_count_addresses(ctx, out, &c.scope);
        let old_hosts = hostnames(ctx.old.and_then(|o| pool_of(o, &c.scope)));
        let new_hosts = hostnames(pool_of(ctx.new, &c.scope));
        let added: Vec<String> = new_hosts.difference(&old_hosts).cloned().collect();
        let removed: Vec<String> = old_hosts.difference(&new_hosts).cloned().collect();
        if removed.is_empty() {
            out.push(
                Severity::Info,
                c.scope.subject(),
                format!("{} count {}", c.scope.what(), c.values()),
                format!("nodes added: {}", list(&added)),
            );
        } else {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                format!("{} count {}", c.scope.what(), c.values()),
                format!("nodes destroyed: {}; their workloads must fit on the remaining nodes", list(&removed)),
            );
        }
    }
}
