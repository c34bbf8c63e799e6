//! F1: the rule `talos-version`. A Talos version change is an upgrade, its own step, node by
//! node, along the path Talos recommends ([`talos_path`]: the latest patch of every minor on
//! the way); a Cluster API cluster replaces every machine instead (R26), and a downgrade says
//! that `talosctl rollback` is the way back.

use super::{Ctx, Outcome, Severity, Version, cluster_of, stable_changes, version};

/// The upgrade path Talos recommends: the latest patch of every minor on the way (only
/// adjacent minors are tested), named when the versions table knows it
/// ([`crate::upstream::talos::talos_newest`], the release `upgrade-plan` proposes) and left
/// out when it is where the path already stands.
pub(super) fn talos_path(from: Version, to: Version) -> String {
    let mut steps = vec![from.v()];
    let latest = |major, minor| match crate::upstream::talos::talos_newest((major, minor)) {
        Some(v) => v.v(),
        None => format!("latest v{major}.{minor}.x"),
    };
    if from.minor_version() != to.minor_version() {
        if crate::upstream::talos::talos_newest(from.minor_version()).is_none_or(|v| v > from) {
            steps.push(latest(from.major, from.minor));
        }
        if from.major == to.major {
            for m in from.minor + 1..to.minor {
                steps.push(latest(from.major, m));
            }
        }
    }
    steps.push(to.v());
    steps.join(" → ")
}

/// F1: a Talos version change is an upgrade, its own step, node by node.
pub(super) fn talos_version(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "talos") {
        out.claim(i);
        let (Some(from), Some(to)) = (version(c.old.as_ref()), version(c.new.as_ref())) else { continue };
        let managed = cluster_of(ctx.new, &c.scope).is_some_and(crate::model::Cluster::is_managed);
        let change = format!("Talos {} → {}", from.v(), to.v());
        if to < from {
            out.push(Severity::Warning, c.scope.subject(), change, "a downgrade: Talos tests upgrades between adjacent minors only; `talosctl rollback` returns a node to its previous image");
        } else if managed {
            out.push(Severity::Warning, c.scope.subject(), change, format!("Cluster API replaces every machine, rolling: a new machine, then the oldest removed (R26); path {}", talos_path(from, to)));
        } else {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                change,
                format!(
                    "upgrade needed: applying the config alone changes nothing on running nodes; `fleetc upgrade {}` / `talosctl upgrade --image …` node by node, control plane first, health-checked between nodes, and every node reboots once; path {}",
                    c.scope.subject(),
                    talos_path(from, to)
                ),
            );
        }
    }
}
