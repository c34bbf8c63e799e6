//! R13: the rule `talos-api-access`. Who may reach a node's Talos API: a node in maintenance
//! mode (new or wiped) accepts a config from whoever sends one first, so a change to the path
//! to port 50000 is DANGER, whether it comes from fleet.kdl (a Scaleway environment's
//! `admin-ranges`, the only sources the gateway's SSH bastion admits while the Talos API
//! switch is open; also the Kubernetes API load balancer's ACL) or from the output alone (the
//! gateway's bastion settings, or a gateway rule that forwards port 50000, changed by another
//! fleetc). An artifact rule too: it works without the old model.

use super::{Ctx, Outcome, Severity, Status, dir, env_of, stable_changes};
use crate::model::Provider;
use crate::review::object::hcl_attribute;

/// The gateway's attributes that decide who reaches the bastion (scaleway v2.81.0
/// `internal/services/vpcgw/public_gateway.go` l.81-119).
const BASTION_ATTRIBUTES: &[&str] = &["bastion_enabled", "bastion_port", "allowed_ip_ranges"];

pub(super) fn talos_api_access(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "admin-ranges") {
        if !env_of(ctx.new, &c.scope).is_some_and(|e| matches!(e.provider, Provider::Scaleway(_))) {
            continue;
        }
        out.claim(i);
        out.push(
            Severity::Danger,
            c.scope.subject(),
            format!("`admin-ranges` of {}: {}", c.scope.what(), c.values()),
            "who reaches every node's Talos API through the gateway's SSH bastion while the Talos API switch is open (a node in maintenance mode accepts a config from anyone who reaches it), and the Kubernetes API's load balancer: check each range is yours",
        );
    }
    for f in ctx.files {
        for o in &f.objects {
            let Some(ty) = o.key.resource_type() else { continue };
            let old: Vec<&str> = o.old_text.lines().collect();
            let new: Vec<&str> = o.new_text.lines().collect();
            let address = o.key.address().unwrap_or_default();
            if ty == "scaleway_vpc_public_gateway" && o.status != Status::Removed {
                let changed: Vec<&str> = BASTION_ATTRIBUTES
                    .iter()
                    .copied()
                    .filter(|a| o.status == Status::Added || hcl_attribute(&old, a) != hcl_attribute(&new, a))
                    .collect();
                if changed.is_empty() {
                    continue;
                }
                out.claim_file(&f.path);
                let show = |lines: &[&str]| {
                    BASTION_ATTRIBUTES
                        .iter()
                        .map(|a| format!("{a} = {}", hcl_attribute(lines, a).unwrap_or_else(|| "(unset)".to_owned())))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let before = if o.status == Status::Added { "(none)".to_owned() } else { show(&old) };
                out.push(
                    Severity::Danger,
                    dir(&f.path).to_owned(),
                    format!("`{address}`'s SSH bastion ({}): {before} → {}", changed.join(", "), show(&new)),
                    "the path to every node's Talos API (R13): the bastion must admit the admin ranges only and be enabled only while the switch is open",
                );
            }
            if ty == "scaleway_vpc_public_gateway_pat_rule"
                && o.status != Status::Removed
                && hcl_attribute(&new, "private_port").as_deref() == Some("50000")
            {
                out.claim_file(&f.path);
                out.push(
                    Severity::Danger,
                    dir(&f.path).to_owned(),
                    format!("`{address}` forwards a gateway port to port 50000"),
                    "a node's Talos API reachable from any address (a PAT rule has no source filter): a node in maintenance mode takes a config from whoever sends one first",
                );
            }
        }
    }
}
