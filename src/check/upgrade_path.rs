//! `fleetc check --base REV`: a change of versions must be one a running cluster can take
//! (R26, F1). Pure: it compares the fleet at the base revision (`old`) with the new one and
//! reports on the new fleet's version values.
//!
//! - a cluster's control plane moves at most one Kubernetes minor per change (1.34 → 1.35,
//!   never 1.34 → 1.36): Kubernetes upgrades the API server one minor at a time;
//! - on a cluster Cluster API manages, a worker pool whose Kubernetes changes must not move
//!   into a minor above the one the control plane runs at the base: the MachineDeployments
//!   roll at the same time as the TalosControlPlane, so their kubelets would run ahead of the
//!   API servers. Pin the pool at its version, move the control plane, then the workers.
//!   (A cluster built by OpenTofu upgrades with `talosctl upgrade-k8s`, which does the
//!   control plane first, then every kubelet: no pool can run ahead there.)
//! - Talos moves at most one minor per change (v1.12 → v1.13, never v1.12 → v1.14): the
//!   Talos upgrade path goes through every minor release.
//!
//! Clusters are matched by environment and name; a cluster new in this change has no path to
//! check. Pools are matched by name, or by the `was=` name a renamed pool carries.

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Cluster, Fleet, Pool, Version};

/// Compares `old` (the fleet at the base revision) with `new` and pushes a diagnostic on
/// `new`'s spans for every version change a running cluster cannot take.
pub fn check(old: &Fleet, new: &Fleet, diags: &mut Diagnostics) {
    for env in &new.environments {
        let Some(old_env) = old.environment(&env.name.value) else { continue };
        for c in &env.clusters {
            let Some(before) = old_env.clusters.iter().find(|o| o.name.value == c.name.value) else { continue };
            kubernetes_minor(before, c, &env.name.value, diags);
            workers_ahead(before, c, &env.name.value, diags);
            talos_minor(before, c, &env.name.value, diags);
        }
    }
}

/// `to` is more than one minor above `from` (or in another major).
fn skips_a_minor(from: Version, to: Version) -> bool {
    to > from && (to.major != from.major || to.minor > from.minor + 1)
}

fn kubernetes_minor(old: &Cluster, new: &Cluster, env: &str, diags: &mut Diagnostics) {
    let (from, to) = (old.kubernetes.value, new.kubernetes.value);
    if !skips_a_minor(from, to) {
        return;
    }
    diags.push(
        Diagnostic::new(
            &codes::UPGRADE_KUBERNETES_MINOR_SKIPPED,
            format!(
                "cluster `{env}/{}` moves its control plane from Kubernetes {from} to {to}, skipping {}.{}",
                new.name.value,
                from.major,
                from.minor + 1
            ),
        )
        .at(new.kubernetes.span)
        .label(format!("was {from} at the base revision"))
        .help(format!(
            "the API server upgrades one minor at a time: set {}.{}.x in this change, apply it, then go on (`fleetc upgrade-plan` lists the steps; R26)",
            from.major,
            from.minor + 1
        )),
    );
}

/// The pool of `old` that `pool` continues: same name, or the name it `was`.
fn old_pool<'a>(old: &'a Cluster, pool: &Pool) -> Option<&'a Pool> {
    old.workers
        .iter()
        .find(|p| p.name.value == pool.name.value || pool.former_name.as_ref().is_some_and(|f| f.value == p.name.value))
}

fn workers_ahead(old: &Cluster, new: &Cluster, env: &str, diags: &mut Diagnostics) {
    if !new.is_managed() {
        return;
    }
    let running = old.kubernetes.value;
    for p in &new.workers {
        let to = new.pool_kubernetes(p);
        let from = old_pool(old, p).map(|o| old.pool_kubernetes(o));
        if from == Some(to) || to.minor_version() <= running.minor_version() {
            continue;
        }
        let (span, label) = match &p.kubernetes {
            Some(k) => (k.span, "the pool's version".to_owned()),
            None => (new.kubernetes.span, format!("pool `{}` follows this version", p.name.value)),
        };
        diags.push(
            Diagnostic::new(
                &codes::UPGRADE_WORKERS_AHEAD,
                format!(
                    "pool `{}` of `{env}/{}` moves to Kubernetes {to} while its control plane runs {running}",
                    p.name.value, new.name.value
                ),
            )
            .at(span)
            .label(label)
            .help(format!(
                "the pool's machines roll at the same time as the control plane's, and a kubelet may not be newer than the API server: pin the pool (`kubernetes=\"{}\"`) while the control plane moves, then move the workers in a later change (R26)",
                from.unwrap_or(running)
            )),
        );
    }
}

fn talos_minor(old: &Cluster, new: &Cluster, env: &str, diags: &mut Diagnostics) {
    let (from, to) = (old.talos.value, new.talos.value);
    if !skips_a_minor(from, to) {
        return;
    }
    diags.push(
        Diagnostic::new(
            &codes::UPGRADE_TALOS_MINOR_SKIPPED,
            format!(
                "cluster `{env}/{}` moves from Talos {} to {}, skipping v{}.{}",
                new.name.value,
                from.v(),
                to.v(),
                from.major,
                from.minor + 1
            ),
        )
        .at(new.talos.span)
        .label(format!("was {} at the base revision", from.v()))
        .help({
            // The release `upgrade-plan` proposes for that minor (the versions table's newest).
            let next = (from.major, from.minor + 1);
            let release = crate::upstream::talos::talos_newest(next)
                .map_or_else(|| format!("the latest v{}.{}.x", next.0, next.1), |v| v.v());
            format!(
                "Talos upgrades go through every minor release: set {release} in this change, upgrade the nodes (`fleetc upgrade`), then go on (F1)"
            )
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{FsLoader, compile};

    const BASE: &str = include_str!("../../golden/capi-upgrade/fleet.kdl");

    fn fleet(text: &str) -> Fleet {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/capi-upgrade");
        let c = compile("fleet.kdl", text, &FsLoader::new(dir));
        c.fleet.expect("the fleet resolves")
    }

    fn codes_of(old: &str, new: &str) -> Vec<&'static str> {
        let mut d = Diagnostics::new();
        check(&fleet(old), &fleet(new), &mut d);
        d.iter().map(|d| d.code.name).collect()
    }

    fn edit(from: &str, to: &str) -> String {
        assert!(BASE.contains(from), "the base fleet holds {from}");
        BASE.replacen(from, to, 1)
    }

    #[test]
    fn unchanged_fleet_passes() {
        assert!(codes_of(BASE, BASE).is_empty());
    }

    #[test]
    fn control_plane_skipping_a_kubernetes_minor_is_refused() {
        // edge-1 runs 1.33.4 with a pool pinned to its version.
        let ok = edit("kubernetes \"1.33.4\"", "kubernetes \"1.34.2\"");
        assert!(!codes_of(BASE, &ok).contains(&codes::UPGRADE_KUBERNETES_MINOR_SKIPPED.name));
        let skip = edit("kubernetes \"1.33.4\"", "kubernetes \"1.35.0\"");
        assert!(codes_of(BASE, &skip).contains(&codes::UPGRADE_KUBERNETES_MINOR_SKIPPED.name));
    }

    #[test]
    fn span_is_on_the_new_version_value() {
        let skip = edit("kubernetes \"1.33.4\"", "kubernetes \"1.35.0\"");
        let mut d = Diagnostics::new();
        check(&fleet(BASE), &fleet(&skip), &mut d);
        let diag = d.iter().find(|d| d.code.name == codes::UPGRADE_KUBERNETES_MINOR_SKIPPED.name).unwrap();
        let span = diag.span.expect("a span");
        assert_eq!(&skip[span.start..span.end()], "\"1.35.0\"");
    }

    #[test]
    fn workers_following_the_control_plane_in_the_same_change_are_refused() {
        // edge-1's workers follow the cluster: raising the cluster raises them too.
        let text = unpinned();
        let raised = text.replacen("kubernetes \"1.33.4\"", "kubernetes \"1.34.2\"", 1);
        assert!(codes_of(&text, &raised).contains(&codes::UPGRADE_WORKERS_AHEAD.name));
        // Pinned at their version, they stay behind: accepted.
        assert!(!codes_of(&text, &pin(&raised, "1.33.4")).contains(&codes::UPGRADE_WORKERS_AHEAD.name));
        // Then following a control plane that already runs 1.34: accepted.
        assert!(codes_of(&pin(&raised, "1.33.4"), &raised).is_empty());
    }

    #[test]
    fn a_talos_minor_skip_is_refused() {
        let ok = edit("talos \"v1.12.6\"", "talos \"v1.13.9\"");
        assert!(!codes_of(BASE, &ok).contains(&codes::UPGRADE_TALOS_MINOR_SKIPPED.name));
        let skip = edit("talos \"v1.12.6\"", "talos \"v1.14.1\"");
        assert!(codes_of(BASE, &skip).contains(&codes::UPGRADE_TALOS_MINOR_SKIPPED.name));
    }

    #[test]
    fn skip_rule() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert!(!skips_a_minor(v("1.34.1"), v("1.35.9")));
        assert!(skips_a_minor(v("1.34.1"), v("1.36.0")));
        assert!(skips_a_minor(v("1.34.1"), v("2.0.0")));
        assert!(!skips_a_minor(v("1.36.0"), v("1.34.0")));
    }

    /// The base fleet with edge-1's worker pool following the cluster.
    fn unpinned() -> String {
        BASE.to_owned()
    }

    fn pin(text: &str, version: &str) -> String {
        text.replacen("pool \"workers\"", &format!("pool \"workers\" kubernetes=\"{version}\""), 1)
    }
}
