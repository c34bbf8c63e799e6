//! What a change of each machine argument fleetc sets does to an existing resource, read
//! from the provider's source at the pinned version: one table ([`ARGUMENTS`]) that both the
//! OpenTofu emitter and the review read. The emitter takes from it the arguments the roots
//! tell OpenTofu to ignore on existing machines (`lifecycle { ignore_changes }`) and the
//! settings that make a change safe (`replace_on_type_change = false`, `migrate = true`,
//! `reboot_after_update = false`); `fleetc diff`'s impact rules take from it what a change of
//! fleet.kdl does, node by node (`review::impact::rules::machine_arguments`). A change of the
//! table changes both, and `tests/contracts.rs` checks the emitted roots against it.

/// The provider a row is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    Scaleway,
    Proxmox,
    /// siderolabs/talos: the cluster root, on any cloud.
    Talos,
}

/// What the provider does when the argument changes on a resource that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnChange {
    /// ForceNew: the resource is destroyed and created again.
    Replace,
    /// ForceNew only when the new value is lower (a downgrade, a smaller volume); a higher one
    /// is updated in place.
    ReplaceWhenLower,
    /// Updated in place while the machine runs.
    Live,
    /// Updated in place by stopping the machine and starting it again (a migration).
    Restart,
    /// Updated in place, in effect at the machine's next reboot: the provider does not reboot
    /// it (a [`Argument::settings`] entry forbids it).
    NextReboot,
    /// Moved live to another host.
    Migrate,
    /// Grown in place; a lower value fails the apply.
    GrowOrFail,
    /// Grown in place; a lower value is never applied (every plan shows it again).
    GrowOrNothing,
    /// Read only when the resource is created.
    CreateOnly,
}

/// One argument fleetc sets on a machine (or on what a machine's identity rests on).
#[derive(Debug, Clone, Copy)]
pub struct Argument {
    pub cloud: Cloud,
    pub resource: &'static str,
    /// As `ignore_changes` names it: `image`, `disk[0].import_from`.
    pub argument: &'static str,
    /// What the provider does on a change, with the settings below in place.
    pub on_change: OnChange,
    /// The roots ignore its changes on existing resources (`lifecycle { ignore_changes }`):
    /// an existing machine keeps the old value, a new one gets the new value.
    pub ignored: bool,
    /// Arguments fleetc sets on the resource so that `on_change` holds.
    pub settings: &'static [(&'static str, bool)],
    /// The fleet.kdl values the argument is computed from, as the review's facts name them
    /// (`talos`, `schematic-id`, `instance-type`, `data-disk-size`, …).
    pub from: &'static [&'static str],
    /// What part of the machine it is, in plain words.
    pub part: &'static str,
    /// Where the provider decides it: repository, tag, path, symbol.
    pub source: &'static str,
}

impl Argument {
    /// `scaleway_instance_server.image`
    pub fn name(&self) -> String {
        format!("{}.{}", self.resource, self.argument)
    }
}

/// Every machine argument fleetc sets whose change is not a plain in-place update, and the
/// identity-bearing ones that are (so that the review can say so).
pub static ARGUMENTS: &[Argument] = &[
    Argument {
        cloud: Cloud::Scaleway,
        resource: "scaleway_instance_server",
        argument: "image",
        on_change: OnChange::Replace,
        ignored: true,
        settings: &[],
        from: &["talos", "schematic-id"],
        part: "instance image",
        source: "scaleway/terraform-provider-scaleway v2.81.0 internal/services/instance/server.go customDiffInstanceServerImage (diff.ForceNew(\"image\"))",
    },
    Argument {
        cloud: Cloud::Scaleway,
        resource: "scaleway_instance_server",
        argument: "type",
        on_change: OnChange::Restart,
        ignored: false,
        settings: &[("replace_on_type_change", false)],
        from: &["instance-type"],
        part: "instance type",
        source: "scaleway/terraform-provider-scaleway v2.81.0 internal/services/instance/server.go customDiffInstanceServerType (ForceNew only with replace_on_type_change) and ResourceInstanceServerUpdate (stop, change, start)",
    },
    Argument {
        cloud: Cloud::Scaleway,
        resource: "scaleway_instance_server",
        argument: "root_volume[0].size_in_gb",
        on_change: OnChange::GrowOrFail,
        ignored: false,
        settings: &[],
        from: &["system-disk-size"],
        part: "system volume",
        source: "scaleway/terraform-provider-scaleway v2.81.0 internal/services/instance/server.go customDiffInstanceRootVolumeSize (ForceNew for l_ssd only; fleetc's root volume is sbs_volume) and instanceServerVolumesUpdate (ResizeUnknownVolume)",
    },
    Argument {
        cloud: Cloud::Scaleway,
        resource: "scaleway_block_volume",
        argument: "size_in_gb",
        on_change: OnChange::ReplaceWhenLower,
        ignored: false,
        settings: &[],
        from: &["data-disk-size"],
        part: "data volume (EPHEMERAL, and etcd's data on a control-plane node)",
        source: "scaleway/terraform-provider-scaleway v2.81.0 internal/services/block/helpers_block.go customDiffCannotShrink (customdiff.ForceNewIf old > new), block/volume.go ResourceBlockVolumeUpdate (grows in place)",
    },
    Argument {
        cloud: Cloud::Scaleway,
        resource: "scaleway_instance_server",
        argument: "zone",
        on_change: OnChange::Replace,
        ignored: false,
        settings: &[],
        from: &["provider"],
        part: "instance (its project or zone)",
        source: "scaleway/terraform-provider-scaleway v2.81.0 internal/locality/zonal/schemas.go Schema (ForceNew), internal/services/account/schemas.go ProjectIDSchema (ForceNew)",
    },
    Argument {
        cloud: Cloud::Scaleway,
        resource: "scaleway_ipam_ip",
        argument: "address",
        on_change: OnChange::Replace,
        ignored: false,
        settings: &[],
        from: &["endpoint"],
        part: "Kubernetes API address",
        source: "scaleway/terraform-provider-scaleway v2.81.0 internal/services/ipam/ip.go (address: ForceNew)",
    },
    Argument {
        cloud: Cloud::Proxmox,
        resource: "proxmox_virtual_environment_vm",
        argument: "disk[0].file_id",
        on_change: OnChange::Replace,
        ignored: true,
        settings: &[],
        from: &[],
        part: "system disk image of a VM created before `import_from`",
        source: "bpg/terraform-provider-proxmox v0.111.1 proxmoxtf/resource/vm/disk/schema.go mkDiskFileID (ForceNew)",
    },
    Argument {
        cloud: Cloud::Proxmox,
        resource: "proxmox_virtual_environment_vm",
        argument: "disk[0].import_from",
        on_change: OnChange::CreateOnly,
        ignored: true,
        settings: &[],
        from: &["talos", "schematic-id"],
        part: "system disk image",
        source: "bpg/terraform-provider-proxmox v0.111.1 proxmoxtf/resource/vm/disk/schema.go mkDiskImportFrom (\"only used during initial creation\")",
    },
    Argument {
        cloud: Cloud::Proxmox,
        resource: "proxmox_virtual_environment_vm",
        argument: "node_name",
        on_change: OnChange::Migrate,
        ignored: false,
        settings: &[("migrate", true)],
        from: &["pve-nodes"],
        part: "Proxmox VE node",
        source: "bpg/terraform-provider-proxmox v0.111.1 proxmoxtf/resource/vm/vm.go CustomizeDiff (ForceNewIf node_name unless migrate) and migrateNonHAVM (online, with local disks)",
    },
    Argument {
        cloud: Cloud::Proxmox,
        resource: "proxmox_virtual_environment_vm",
        argument: "cpu[0].cores",
        on_change: OnChange::NextReboot,
        ignored: false,
        settings: &[("reboot_after_update", false)],
        from: &["instance-type"],
        part: "CPU cores and memory",
        source: "bpg/terraform-provider-proxmox v0.111.1 proxmoxtf/resource/vm/vm.go vmUpdate (cpu, memory: rebootRequired) and vmPowerOffForPendingChanges (reboot_after_update = false: a warning, no reboot)",
    },
    Argument {
        cloud: Cloud::Proxmox,
        resource: "proxmox_virtual_environment_vm",
        argument: "disk[0].size",
        on_change: OnChange::GrowOrNothing,
        ignored: false,
        settings: &[],
        from: &["system-disk-size"],
        part: "system disk",
        source: "bpg/terraform-provider-proxmox v0.111.1 proxmoxtf/resource/vm/disk/disk.go Update (ResizeVMDisk only when the planned size is larger)",
    },
    Argument {
        cloud: Cloud::Proxmox,
        resource: "proxmox_virtual_environment_vm",
        argument: "disk[1].size",
        on_change: OnChange::GrowOrNothing,
        ignored: false,
        settings: &[],
        from: &["data-disk-size"],
        part: "data disk (EPHEMERAL)",
        source: "bpg/terraform-provider-proxmox v0.111.1 proxmoxtf/resource/vm/disk/disk.go Update (ResizeVMDisk only when the planned size is larger)",
    },
    Argument {
        cloud: Cloud::Proxmox,
        resource: "proxmox_virtual_environment_vm",
        argument: "initialization[0].ip_config",
        on_change: OnChange::NextReboot,
        ignored: false,
        settings: &[("reboot_after_update", false)],
        from: &["addresses"],
        part: "static address (NoCloud)",
        source: "bpg/terraform-provider-proxmox v0.111.1 proxmoxtf/resource/vm/vm.go vmUpdate (initialization: cloud-init disk rebuilt, rebootRequired)",
    },
    Argument {
        cloud: Cloud::Proxmox,
        resource: "proxmox_virtual_environment_vm",
        argument: "agent[0].enabled",
        on_change: OnChange::NextReboot,
        ignored: false,
        settings: &[("reboot_after_update", false)],
        from: &["guest-agent"],
        part: "QEMU guest agent",
        source: "bpg/terraform-provider-proxmox v0.111.1 proxmoxtf/resource/vm/vm.go vmUpdate (agent: rebootRequired)",
    },
    Argument {
        cloud: Cloud::Talos,
        resource: "talos_machine_bootstrap",
        argument: "node",
        on_change: OnChange::Live,
        ignored: false,
        settings: &[],
        from: &["addresses"],
        part: "etcd bootstrap (never run again: Update only records the new address)",
        source: "siderolabs/terraform-provider-talos v0.11.0 pkg/talos/talos_machine_bootstrap_resource.go Schema (no RequiresReplace) and Update (state only)",
    },
    Argument {
        cloud: Cloud::Talos,
        resource: "talos_machine_configuration_apply",
        argument: "node",
        on_change: OnChange::Live,
        ignored: false,
        settings: &[],
        from: &["addresses"],
        part: "machine config apply (its `on_destroy` reset runs only on destroy)",
        source: "siderolabs/terraform-provider-talos v0.11.0 pkg/talos/talos_machine_configuration_apply_resource.go Schema (node, endpoint: no RequiresReplace)",
    },
];

/// The arguments the roots ignore on existing resources of `resource`, in table order.
pub fn ignored(resource: &str) -> Vec<&'static str> {
    ARGUMENTS.iter().filter(|a| a.resource == resource && a.ignored).map(|a| a.argument).collect()
}

/// The settings fleetc writes on `resource` so that the table holds, each once.
pub fn settings(resource: &str) -> Vec<(&'static str, bool)> {
    let mut out: Vec<(&'static str, bool)> = Vec::new();
    for a in ARGUMENTS.iter().filter(|a| a.resource == resource) {
        for s in a.settings {
            if !out.iter().any(|(n, _)| *n == s.0) {
                out.push(*s);
            }
        }
    }
    out
}

/// The rows of `cloud` a change of the fact `field` moves.
pub fn moved_by(cloud: Cloud, field: &str) -> impl Iterator<Item = &'static Argument> + '_ {
    ARGUMENTS.iter().filter(move |a| a.cloud == cloud && a.from.contains(&field))
}

/// `ignore_changes` entries as HCL traversals: `image`, `disk[0].import_from`.
pub(super) fn traversal(argument: &str) -> crate::emit::hcl::Traversal {
    let mut parts = argument.split('.');
    let first = parts.next().unwrap_or_default();
    let (head, index) = split_index(first);
    let mut t = crate::emit::hcl::Traversal::path(head);
    if let Some(i) = index {
        t = t.index(i);
    }
    for p in parts {
        let (name, index) = split_index(p);
        t = t.attr(name);
        if let Some(i) = index {
            t = t.index(i);
        }
    }
    t
}

fn split_index(part: &str) -> (&str, Option<i64>) {
    match part.split_once('[') {
        Some((name, rest)) => (name, rest.trim_end_matches(']').parse().ok()),
        None => (part, None),
    }
}

/// Writes `lifecycle { ignore_changes = […] }` for `resource` when the table ignores any of
/// its arguments.
pub(super) fn lifecycle(b: &mut crate::emit::hcl::Body, resource: &str) {
    let ignored = ignored(resource);
    if ignored.is_empty() {
        return;
    }
    b.block("lifecycle", &[], |l| {
        l.attr(
            "ignore_changes",
            crate::emit::hcl::Expr::list(ignored.iter().map(|a| crate::emit::hcl::Expr::from(traversal(a)))),
        );
    });
}

/// Writes the table's settings of `resource`.
pub(super) fn write_settings(b: &mut crate::emit::hcl::Body, resource: &str) {
    for (name, value) in settings(resource) {
        b.attr(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCALEWAY: &str = "scaleway/terraform-provider-scaleway v2.81.0";
    const BPG: &str = "bpg/terraform-provider-proxmox v0.111.1";

    #[test]
    fn every_row_cites_its_provider_source_and_ignored_rows_are_the_replacing_or_create_only_ones() {
        for a in ARGUMENTS {
            let repo = match a.cloud {
                Cloud::Scaleway => SCALEWAY,
                Cloud::Proxmox => BPG,
                Cloud::Talos => "siderolabs/terraform-provider-talos v0.11.0",
            };
            assert!(a.source.starts_with(repo), "{}: {}", a.name(), a.source);
            if a.ignored {
                assert!(matches!(a.on_change, OnChange::Replace | OnChange::CreateOnly), "{}", a.name());
            }
        }
        assert_eq!(ignored("scaleway_instance_server"), vec!["image"]);
        assert_eq!(ignored("proxmox_virtual_environment_vm"), vec!["disk[0].file_id", "disk[0].import_from"]);
        assert_eq!(settings("proxmox_virtual_environment_vm"), vec![("migrate", true), ("reboot_after_update", false)]);
    }

    #[test]
    fn traversals() {
        let mut b = crate::emit::hcl::Body::new();
        b.attr("x", crate::emit::hcl::Expr::from(traversal("disk[0].import_from")));
        b.attr("y", crate::emit::hcl::Expr::from(traversal("image")));
        assert_eq!(b.render().unwrap(), "x = disk[0].import_from\ny = image\n");
    }
}
