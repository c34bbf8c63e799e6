//! R21: discovery talks to a hosted service; a cluster with no public endpoint keeps it off.

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::Fleet;

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for (_, cluster) in fleet.clusters() {
        if cluster.discovery.value && !cluster.endpoint.public {
            diags.push(
                Diagnostic::new(
                    &codes::DISCOVERY_PRIVATE,
                    format!("discovery is on for cluster `{}`, whose API endpoint is private", cluster.name),
                )
                .at(cluster.discovery.span)
                .label("discovery on")
                .related(cluster.endpoint.span, "private endpoint"),
            );
        }
    }
}
