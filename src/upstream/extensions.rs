//! The official Talos system extensions, per Talos minor: what the Image Factory offers as
//! `siderolabs/<name>` for a schematic. Data, not code: produced from the `metadata.name` of every
//! `*/manifest.yaml.tmpl` in github.com/siderolabs/extensions at the tags below (the factory
//! serves the extensions image built from that repository at each Talos version; the set is
//! the same for every patch of a minor: v1.12.0 = v1.12.11, v1.13.0 = v1.13.9, compared by
//! `git ls-tree` at both tags). Where a manifest's build is disabled, the Makefile's `TARGETS`
//! win: it is not built, so the factory cannot offer it (`qemu` on 1.14).
//!
//! | minor | tag | commit |
//! |---|---|---|
//! | 1.12 | v1.12.11 | 33ddf1cc497575b560ef8f2749c8d1ecfd5f3377 |
//! | 1.13 | v1.13.9 | ec9d5f68fcfb5d2c109219620ef5625ca9f462d6 |
//! | 1.14 | v1.14.0-rc.1 | 5732907953bd27b8aafbe5cb9c4d6eaceabc6d1d |
//!
//! `check::extensions` refuses a schematic extension that is not in its Talos minor's list (R17).

use super::Minor;

/// siderolabs/extensions v1.12.11.
const V1_12: &[&str] = &[
    "amazon-ena",
    "amd-ucode",
    "amdgpu",
    "binfmt-misc",
    "bird2",
    "bnx2-bnx2x",
    "btrfs",
    "chelsio-drivers",
    "chelsio-firmware",
    "cloudflared",
    "crun",
    "ctr",
    "drbd",
    "dvb-cx23885",
    "dvb-m88ds3103",
    "ecr-credential-provider",
    "fuse3",
    "gasket-driver",
    "glibc",
    "gpio-pinctrl",
    "gvisor",
    "gvisor-debug",
    "hailort",
    "hello-world-service",
    "i915",
    "intel-ice-firmware",
    "intel-ucode",
    "iscsi-tools",
    "kata-containers",
    "lldpd",
    "mdadm",
    "mei",
    "mellanox-mstflint",
    "metal-agent",
    "multipath-tools",
    "nebula",
    "netbird",
    "newt",
    "nfs-utils",
    "nfsd",
    "nfsrahead",
    "nonfree-kmod-nvidia-lts",
    "nonfree-kmod-nvidia-production",
    "nut-client",
    "nvidia-container-toolkit-lts",
    "nvidia-container-toolkit-production",
    "nvidia-fabricmanager-lts",
    "nvidia-fabricmanager-production",
    "nvidia-gdrdrv-device",
    "nvidia-open-gpu-kernel-modules-lts",
    "nvidia-open-gpu-kernel-modules-production",
    "nvme-cli",
    "panfrost",
    "qemu-guest-agent",
    "qlogic-firmware",
    "realtek-firmware",
    "revpi-firmware",
    "soci-snapshotter",
    "spin",
    "stargz-snapshotter",
    "tailscale",
    "tenstorrent",
    "thunderbolt",
    "trident-iscsi-tools",
    "uinput",
    "usb-audio-drivers",
    "usb-modem-drivers",
    "util-linux-tools",
    "v4l-uvc-drivers",
    "vc4",
    "vmtoolsd-guest-agent",
    "wasmedge",
    "xdma-driver",
    "xe",
    "xen-guest-agent",
    "youki",
    "zerotier",
    "zfs",
];

/// siderolabs/extensions v1.13.9.
const V1_13: &[&str] = &[
    "amazon-ena",
    "amd-ucode",
    "amdgpu",
    "binfmt-misc",
    "bird2",
    "bnx2-bnx2x",
    "btrfs",
    "chelsio-drivers",
    "chelsio-firmware",
    "cloudflared",
    "crun",
    "ctr",
    "drbd",
    "dvb-cx23885",
    "dvb-m88ds3103",
    "ecr-credential-provider",
    "fuse3",
    "gasket-driver",
    "glibc",
    "gpio-pinctrl",
    "gvisor",
    "gvisor-debug",
    "hailort",
    "hello-world-service",
    "i915",
    "intel-ice-firmware",
    "intel-npu",
    "intel-ucode",
    "iscsi-tools",
    "joydev",
    "kata-containers",
    "lldpd",
    "mdadm",
    "mei",
    "mellanox-mstflint",
    "metal-agent",
    "multipath-tools",
    "nebula",
    "netbird",
    "newt",
    "nfs-utils",
    "nfsd",
    "nfsrahead",
    "nonfree-kmod-nvidia-lts",
    "nonfree-kmod-nvidia-production",
    "nut-client",
    "nvidia-container-toolkit-lts",
    "nvidia-container-toolkit-production",
    "nvidia-fabricmanager-lts",
    "nvidia-fabricmanager-production",
    "nvidia-gdrdrv-device",
    "nvidia-open-gpu-kernel-modules-lts",
    "nvidia-open-gpu-kernel-modules-production",
    "nvme-cli",
    "panfrost",
    "px-fuse",
    "qemu-guest-agent",
    "qlogic-firmware",
    "realtek-firmware",
    "revpi-firmware",
    "rockchip-rknn",
    "soci-snapshotter",
    "spin",
    "stargz-snapshotter",
    "tailscale",
    "tenstorrent",
    "thunderbolt",
    "trident-iscsi-tools",
    "uhid",
    "uinput",
    "usb-audio-drivers",
    "usb-modem-drivers",
    "util-linux-tools",
    "v4l-uvc-drivers",
    "vc4",
    "vmtoolsd-guest-agent",
    "wasmedge",
    "xdma-driver",
    "xe",
    "xen-guest-agent",
    "youki",
    "zerotier",
    "zfs",
];

/// siderolabs/extensions v1.14.0-rc.1, less `qemu`: its `manifest.yaml.tmpl` is there, but commit
/// 70aae4e "chore: disable qemu" (2026-08-12, an ancestor of v1.14.0-rc.1) took it out of the
/// Makefile's `TARGETS` and `.kres.yaml`, so no 1.14 extensions image carries it: 86 names, the
/// `TARGETS` of that tag (talos-3.md m11).
const V1_14: &[&str] = &[
    "amazon-ena",
    "amd-ucode",
    "amdgpu",
    "binfmt-misc",
    "bird2",
    "bnx2-bnx2x",
    "btrfs",
    "chelsio-drivers",
    "chelsio-firmware",
    "cloudflared",
    "crun",
    "ctr",
    "drbd",
    "dvb-cx23885",
    "dvb-m88ds3103",
    "ecr-credential-provider",
    "fuse3",
    "gasket-driver",
    "glibc",
    "gpio-pinctrl",
    "gvisor",
    "gvisor-debug",
    "hailort",
    "harbor-credential-provider",
    "hello-world-service",
    "hyperv-guest-agent",
    "i915",
    "intel-ice-firmware",
    "intel-npu",
    "intel-ucode",
    "iscsi-tools",
    "joydev",
    "kata-containers",
    "kata-containers-snp",
    "lldpd",
    "mdadm",
    "mei",
    "mellanox-mstflint",
    "metal-agent",
    "multipath-tools",
    "nebula",
    "netbird",
    "newt",
    "nfs-utils",
    "nfsd",
    "nfsrahead",
    "nonfree-kmod-nvidia-lts",
    "nonfree-kmod-nvidia-production",
    "nut-client",
    "nvidia-container-toolkit-lts",
    "nvidia-container-toolkit-production",
    "nvidia-fabricmanager-lts",
    "nvidia-fabricmanager-production",
    "nvidia-gdrdrv-device",
    "nvidia-open-gpu-kernel-modules-lts",
    "nvidia-open-gpu-kernel-modules-production",
    "nvme-cli",
    "panfrost",
    "px-fuse",
    "qemu-guest-agent",
    "qlogic-firmware",
    "realtek-firmware",
    "revpi-firmware",
    "rockchip-rknn",
    "soci-snapshotter",
    "spin",
    "stargz-snapshotter",
    "tailscale",
    "tenstorrent",
    "thunderbolt",
    "trident-iscsi-tools",
    "uhid",
    "uinput",
    "usb-audio-drivers",
    "usb-modem-drivers",
    "util-linux-tools",
    "v4l-uvc-drivers",
    "vc4",
    "vmtoolsd-guest-agent",
    "wasmedge",
    "xdma-driver",
    "xe",
    "xen-guest-agent",
    "youki",
    "zerotier",
    "zfs",
];

/// `(Talos minor, official extension names without the `siderolabs/` prefix)`, oldest first.
pub const OFFICIAL: &[(Minor, &[&str])] = &[((1, 12), V1_12), ((1, 13), V1_13), ((1, 14), V1_14)];

/// The official extension names (without `siderolabs/`) of a Talos minor, if fleetc has them.
pub fn official(minor: Minor) -> Option<&'static [&'static str]> {
    OFFICIAL.iter().find(|(m, _)| *m == minor).map(|(_, names)| *names)
}

/// The Talos minors whose official extensions include `name`.
pub fn minors_with(name: &str) -> Vec<Minor> {
    OFFICIAL.iter().filter(|(_, names)| names.contains(&name)).map(|(m, _)| *m).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_knows_the_extensions_fleets_use_and_is_sorted() {
        for minor in [(1, 12), (1, 13), (1, 14)] {
            let names = official(minor).unwrap();
            for ext in ["gvisor", "kata-containers", "qemu-guest-agent", "iscsi-tools"] {
                assert!(names.contains(&ext), "{ext} in {minor:?}");
            }
            assert!(names.windows(2).all(|w| w[0] < w[1]), "{minor:?} sorted and unique");
        }
        assert!(!official((1, 12)).unwrap().contains(&"joydev"), "added in 1.13");
        assert!(official((1, 11)).is_none());
    }
}
