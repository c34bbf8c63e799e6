//! The order of `fleetc apply <env>`, decided once from the environment's [`Target`] and
//! nothing else: which steps run, one after the other, on which clusters. [`super::apply`]
//! iterates it, each step acting on the clusters its [`Stage`] names; `fleetc graph` draws
//! it (`graph::build`), so the drawing cannot tell another order than the one that runs.
//! What follows without `fleetc apply` (the clusters Cluster API builds) is [`Order::then`].

use super::target::{ClusterTarget, ProviderTarget, Target};

/// One step of `fleetc apply <env>`, with what it acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage<'a> {
    /// Step 1 (F2): every schematic the environment boots, registered with the Image Factory.
    Schematics,
    /// Step 2 (R22): the image pipeline. Not on bare metal.
    Images,
    /// Step 3: the cloud root, applied after confirmation. Not on bare metal.
    CloudRoot,
    /// Steps 4–6: the Talos API switch opened where the cloud root has one (`switch`,
    /// [`ProviderTarget::has_switches`]), the cluster root applied to `clusters` one
    /// control-plane node at a time, then their workers (R19, F3), and the switch closed
    /// whatever happened.
    ClusterRoot { switch: bool, clusters: Vec<&'a ClusterTarget> },
    /// Step 3 on bare metal (docs/metal.md): each machine of `clusters` checked and configured
    /// in maintenance mode, control plane one at a time (etcd bootstrapped on the first), then
    /// the workers (R13, F3).
    Machines { clusters: Vec<&'a ClusterTarget> },
    /// Step 7 (F7, R23): Argo CD on each of `clusters`; none when fleet.kdl pins no Argo CD.
    ArgoCd { clusters: Vec<&'a ClusterTarget> },
}

/// What follows `fleetc apply` on its own, in fleet.kdl's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Then<'a> {
    /// A cluster its management cluster's Cluster API builds, once that cluster's Argo CD
    /// delivered its objects (R24–R27), control plane first.
    ClusterApi(&'a ClusterTarget),
    /// Its apps, delivered by the management cluster's Argo CD.
    ArgoCd(&'a ClusterTarget),
}

/// The steps of `fleetc apply <env>` in the order they run, then what follows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order<'a> {
    pub stages: Vec<Stage<'a>>,
    pub then: Vec<Then<'a>>,
}

/// The order of `fleetc apply` for `target`. The bootstrap root (the state bucket) is never
/// in it: `fleetc apply` does not run it (docs/apply.md, "bootstrap").
pub fn of(target: &Target) -> Order<'_> {
    let built: Vec<&ClusterTarget> = target.built_clusters().collect();
    let argocd = target.argocd.is_some();
    let argocd_on = if argocd { built.clone() } else { Vec::new() };
    let stages = if matches!(target.provider, ProviderTarget::Metal) {
        // Bare metal: no image pipeline, no cloud root, no switch.
        vec![Stage::Schematics, Stage::Machines { clusters: built }, Stage::ArgoCd { clusters: argocd_on }]
    } else {
        vec![
            Stage::Schematics,
            Stage::Images,
            Stage::CloudRoot,
            Stage::ClusterRoot { switch: target.provider.has_switches(), clusters: built },
            Stage::ArgoCd { clusters: argocd_on },
        ]
    };
    let mut then = Vec::new();
    for c in target.clusters.iter().filter(|c| c.managed) {
        then.push(Then::ClusterApi(c));
        if argocd {
            then.push(Then::ArgoCd(c));
        }
    }
    Order { stages, then }
}
