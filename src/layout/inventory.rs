//! `metal/<env>/<cluster>/machines.yaml` ([`super::paths::metal_inventory`]): a bare-metal
//! cluster's inventory, one type for both sides. `emit::metal` serializes it (the person at
//! the rack reads it too, docs/metal.md); `fleetc apply` deserializes it from the checked
//! build to find, check and configure each machine in maintenance mode. The field order is
//! the order of the written keys.

use serde::{Deserialize, Serialize};

/// What `fleetc apply` and the person at the rack need of each machine of one cluster.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetalInventory {
    pub cluster: String,
    pub talos_version: String,
    pub kubernetes_version: String,
    pub endpoint: String,
    pub platform: String,
    pub machines: Vec<Machine>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    pub hostname: String,
    /// `controlplane` or `worker` (`model::Role::as_str`).
    pub role: String,
    pub pool: String,
    pub address: String,
    /// Where the machine answers in maintenance mode, before its config gives it `address`:
    /// its DHCP lease, as fleet.kdl declares it (`maintenance-address`). Absent: `fleetc
    /// apply` looks the MAC up in `--leases`, else uses `address` (a DHCP reservation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance_address: Option<String>,
    /// The MAC address `fleetc apply` expects the machine to report in maintenance mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    pub arch: String,
    /// The install disk selector, as written (`serial`, `wwid`, `model`, `size`, `busPath`,
    /// `device`): the machine's disks as reported in maintenance mode must contain one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_disk: Option<Disk>,
    /// The disk EPHEMERAL has to itself (`ephemeral-disk`), as written; absent when EPHEMERAL
    /// shares the install disk. Optional and new (issue 30): an inventory without it reads as
    /// before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_disk: Option<Disk>,
    pub schematic: String,
    pub installer: String,
    pub boot: BootAssets,
}

/// A disk: the install disk selector of fleet.kdl, or a disk a machine reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Disk {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

/// The Image Factory boot assets of one schematic, Talos version and architecture
/// (`emit::metal::boot_assets`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BootAssets {
    /// `metal-<arch>.iso`: the ISO to boot from USB or virtual media.
    pub iso: String,
    /// `kernel-<arch>`, `initramfs-<arch>.xz` and `cmdline-metal-<arch>`: PXE boot.
    pub kernel: String,
    pub initramfs: String,
    pub cmdline: String,
    /// The iPXE script that chains kernel and initramfs (`chain --replace --autofree <url>`).
    pub ipxe: String,
    /// `metal-<arch>.raw.xz`: the disk image to write to the install disk (SBCs).
    pub raw: String,
    /// `metal-<arch>-secureboot-uki.efi`: the signed UKI a SecureBoot machine network-boots
    /// (its kernel and initramfs are inside; the unsigned `kernel`/`initramfs` do not boot under
    /// SecureBoot). Only for a SecureBoot pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uki: Option<String>,
}
