//! The apply mode of the cluster root at rest: fleet.kdl's mode made safe for a plain
//! `tofu apply` (R19, F3). A resolved value of the model, not a choice of one family: the
//! OpenTofu emitter writes it into the cluster root's variables file, and `fleetc apply`
//! passes the same mode to its targeted plans, so that neither shows a change after the other.

use super::{ApplyMode, Version};

/// The Talos release from which a node in maintenance mode accepts `no_reboot` (it applies the
/// config and goes on installing): siderolabs/talos v1.13.9
/// `internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go` l.236-245 (the
/// `CanApplyImmediate` refusal is skipped `inMaintenance`). Talos 1.12's maintenance server
/// takes only `try`, `reboot` and `auto` (v1.12.4 `internal/app/maintenance/server.go` l.91-100).
const NO_REBOOT_IN_MAINTENANCE: Version = Version::new(1, 13, 0);

impl ApplyMode {
    /// The apply mode a plain `tofu apply` of the cluster root uses (the variables file's
    /// value) for fleet.kdl's mode `self` on Talos `talos`: every mode that may reboot a
    /// running node replaced by one that never does (R19, F3: the provider returns before a
    /// rebooted node is healthy, so nothing but `fleetc apply`'s health gate may reboot a
    /// control-plane node). On Talos ≥ 1.13 that is `no_reboot`: Talos refuses a change it
    /// cannot apply without a reboot and changes nothing (v1.13.9 `v1alpha1_server.go`
    /// l.236-239), so such a change can only go through `fleetc apply`, which stages it and
    /// reboots one node at a time with `talosctl health` between. On Talos 1.12, whose
    /// maintenance mode refuses `no_reboot`, it is the provider's `staged_if_needing_reboot`: a
    /// plan-time dry run, staged when the node would reboot (terraform-provider-talos v0.11.0
    /// `talos_machine_configuration_apply_resource.go` `handleRebootPrevention`, l.903-1008),
    /// `auto` only when the dry run cannot run. `staged` and `staged_if_needing_reboot` never
    /// reboot and are kept. `fleetc apply` reads the same function, so its runs and a plain
    /// one store the same mode and neither shows a change.
    pub fn root_mode(self, talos: Version) -> ApplyMode {
        match self {
            ApplyMode::Staged | ApplyMode::StagedIfNeedingReboot => self,
            ApplyMode::Auto | ApplyMode::NoReboot | ApplyMode::Reboot => {
                if talos >= NO_REBOOT_IN_MAINTENANCE {
                    ApplyMode::NoReboot
                } else {
                    ApplyMode::StagedIfNeedingReboot
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// B6/D8 (R19, F3): whatever fleet.kdl's mode and the Talos version, the mode of a plain
    /// `tofu apply` of the cluster root is one that never reboots a running node (`auto` and
    /// `reboot` may), and on Talos ≥ 1.13 it is `no_reboot`, which maintenance mode accepts.
    #[test]
    fn the_roots_own_apply_mode_never_reboots() {
        for (_, mode) in ApplyMode::ALL {
            for talos in [Version::new(1, 12, 4), Version::new(1, 13, 9), Version::new(1, 14, 0)] {
                let root = mode.root_mode(talos);
                assert!(!matches!(root, ApplyMode::Auto | ApplyMode::Reboot), "{mode:?} on {talos:?} → {root:?}");
                if talos >= NO_REBOOT_IN_MAINTENANCE && matches!(mode, ApplyMode::Auto | ApplyMode::Reboot) {
                    assert_eq!(root, ApplyMode::NoReboot);
                }
            }
        }
    }
}
