//! Machine sizes within what Talos and the platform accept: a Proxmox size gives a VM at
//! least one core, and a pool's machines at least Talos's documented minimum of cores and
//! memory for their role; a pool's system and data disks are at least Talos's minimum disk.
//! The minimums are [`MINIMUMS`], with their source; each place is reported once (a size
//! class or an inherited disk size serves many pools).

use std::collections::BTreeSet;

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Bytes, Fleet, Role};

/// Talos's minimum requirements per role: memory, cores, system disk (siderolabs/talos
/// v1.11.6 `website/content/v1.11/introduction/system-requirements.md` l.20-29, the last tag
/// whose repository holds the website; the same table since v1.0: control plane 2 GiB, 2
/// cores, 10 GiB; worker 1 GiB, 1 core, 10 GiB. Its "Storage" section, l.64-67: the
/// EPHEMERAL partition needs at least 10 GiB).
pub const MINIMUMS: [(Role, Bytes, u32, Bytes); 2] =
    [(Role::ControlPlane, Bytes(2 << 30), 2, Bytes(10 << 30)), (Role::Worker, Bytes(1 << 30), 1, Bytes(10 << 30))];

const SOURCE: &str = "Talos's minimum requirements, siderolabs/talos v1.11.6 `website/content/v1.11/introduction/system-requirements.md`";

fn role_word(role: Role) -> &'static str {
    match role {
        Role::ControlPlane => "control-plane",
        Role::Worker => "worker",
    }
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    let mut seen: BTreeSet<(Span, &str)> = BTreeSet::new();
    for env in &fleet.environments {
        for cluster in &env.clusters {
            for pool in cluster.pools() {
                let Some(&(_, memory, cores, disk)) = MINIMUMS.iter().find(|m| m.0 == pool.role) else { continue };
                let role = role_word(pool.role);
                if let Some(size) = env.size(&pool.size.value) {
                    if let Some(c) = &size.cores
                        && c.value < cores
                        && seen.insert((c.span, role))
                    {
                        let why = if c.value == 0 {
                            "a VM needs at least one core: the Proxmox provider refuses `cores = 0` at `tofu plan` (bpg/terraform-provider-proxmox, `cpu.cores`: `IntBetween(1, 2304)`)".to_owned()
                        } else {
                            format!("Talos needs at least {cores} cores on a {role} node ({SOURCE})")
                        };
                        diags.push(
                            Diagnostic::new(
                                &codes::MACHINE_BELOW_MINIMUM,
                                format!(
                                    "size `{}` gives {} node(s) of pool `{}` {} core(s); a {role} node needs at least {cores}",
                                    size.name.value, role, pool.name.value, c.value
                                ),
                            )
                            .at(c.span)
                            .label(format!("fewer than {cores}"))
                            .related(pool.size.span, "the pool's size")
                            .help(format!("{why}: write `cores={cores}` or more")),
                        );
                    }
                    if let Some(m) = &size.memory
                        && m.value < memory
                        && seen.insert((m.span, role))
                    {
                        diags.push(
                            Diagnostic::new(
                                &codes::MACHINE_BELOW_MINIMUM,
                                format!(
                                    "size `{}` gives the {role} nodes of pool `{}` {} of memory; Talos needs at least {memory} on a {role} node",
                                    size.name.value, pool.name.value, m.value
                                ),
                            )
                            .at(m.span)
                            .label(format!("less than {memory}"))
                            .related(pool.size.span, "the pool's size")
                            .help(format!(
                                "below the minimum the node runs out of memory while it boots Kubernetes ({SOURCE}): write `memory=\"{memory}\"` or more"
                            )),
                        );
                    }
                }
                for (what, v) in [
                    ("system-disk-size", &pool.system_disk_size),
                    ("data-disk-size", &pool.data_disk_size),
                    ("ephemeral-min-size", &pool.ephemeral_min_size),
                ] {
                    if v.value < disk && seen.insert((v.span, what)) {
                        diags.push(
                            Diagnostic::new(
                                &codes::MACHINE_BELOW_MINIMUM,
                                format!(
                                    "`{what}` of pool `{}` is {}; Talos needs at least {disk}",
                                    pool.name.value, v.value
                                ),
                            )
                            .at(v.span)
                            .label(format!("less than {disk}"))
                            .help(format!(
                                "Talos needs {disk} for its system disk, and its EPHEMERAL volume (images, container data) at least as much ({SOURCE}): write `{what}=\"20GB\"` or more"
                            )),
                        );
                    }
                }
            }
        }
    }
}
