//! R29: the control plane has an odd number of nodes, at least three, unless the cluster is
//! explicitly a single-node lab.

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::Fleet;

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for (_, cluster) in fleet.clusters() {
        let count = &cluster.control_plane.count;
        let single = cluster.single_node.as_ref().is_some_and(|s| s.value);
        if single && count.value == 1 {
            continue;
        }
        if count.value < 3 {
            let mut d = Diagnostic::new(
                &codes::SMALL_CONTROL_PLANE,
                format!(
                    "cluster `{}` has {} control-plane node{}",
                    cluster.name,
                    count.value,
                    if count.value == 1 { "" } else { "s" }
                ),
            )
            .at(count.span)
            .label("fewer than 3");
            if let Some(s) = &cluster.single_node
                && s.value
            {
                d = d.related(s.span, "single-node allows exactly one");
            }
            diags.push(d);
        } else if count.value % 2 == 0 {
            diags.push(
                Diagnostic::new(
                    &codes::EVEN_CONTROL_PLANE,
                    format!("cluster `{}` has an even number of control-plane nodes ({})", cluster.name, count.value),
                )
                .at(count.span)
                .label("even count"),
            );
        }
    }
}
