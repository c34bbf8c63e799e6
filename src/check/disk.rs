//! Disk encryption and SecureBoot (docs/talos.md, "Disk encryption and SecureBoot"): whether
//! the platform can give a pool's machines what its `encrypt` and `secure-boot=` ask for, and
//! whether a key may travel where the pool's configs go. The platforms' capabilities are one
//! table, [`PLATFORMS`], each cell with its upstream evidence; a platform fleetc learns joins it
//! as a row, and the checks read only the table.

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Cluster, DiskSecurity, Environment, Fleet, KeySource, Pool, Provider};

/// Whether a platform gives a machine a capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// fleetc's output gives the machine what it needs, as the reason says.
    Provided(&'static str),
    /// The platform cannot, as the reason says.
    Absent(&'static str),
}

/// One platform: what its machines can be given.
#[derive(Debug, Clone, Copy)]
pub struct PlatformCaps {
    /// `Provider::name`.
    pub platform: &'static str,
    /// UEFI with SecureBoot, booting the Image Factory's signed UKI.
    pub secure_boot: Capability,
    /// A TPM 2.0 the machine's keys can be sealed to.
    pub tpm: Capability,
}

/// The capability table. Scaleway: Talos's own platform list marks no SecureBoot for it (the
/// factory's SecureBoot assets are offered where `SecureBootSupported` is set:
/// siderolabs/talos v1.13.9 `pkg/machinery/platforms/platforms.go` l.372-390 has none for
/// `scaleway`, l.217-230 sets it for `nocloud`; siderolabs/image-factory v1.4.0
/// `internal/frontend/http/ui.go` l.610), and an instance has no TPM nor a boot-mode argument
/// beyond `boot_type` (local, bootscript, rescue: scaleway/terraform-provider-scaleway v2.81.0
/// `internal/services/instance/server.go` l.269-283; the instance API of scaleway-sdk-go has no
/// TPM field). Proxmox: the VM gets OVMF and an EFI vars disk without pre-enrolled keys, so that
/// the factory's SecureBoot image enrolls its own keys, and a vTPM 2.0 where a key is sealed to
/// it (bpg/terraform-provider-proxmox v0.111.1 `proxmoxtf/resource/vm/vm.go` l.217-224, `bios`,
/// `efi_disk.pre_enrolled_keys`, `tpm_state.version`), written by `emit::tofu::proxmox`.
pub const PLATFORMS: &[PlatformCaps] = &[
    PlatformCaps {
        platform: "scaleway",
        secure_boot: Capability::Absent(
            "Scaleway Instances offer no SecureBoot: Talos lists none for the `scaleway` platform and the instance has no UEFI SecureBoot setting",
        ),
        tpm: Capability::Absent("Scaleway Instances have no TPM (no instance type, no API field offers one)"),
    },
    PlatformCaps {
        platform: "proxmox",
        secure_boot: Capability::Provided(
            "the VM boots OVMF with an EFI vars disk without pre-enrolled keys, where the SecureBoot image enrolls its own",
        ),
        tpm: Capability::Provided("the VM gets a vTPM 2.0 (`tpm_state`)"),
    },
    PlatformCaps {
        platform: "metal",
        secure_boot: Capability::Provided(
            "the machine's own UEFI firmware, once the SecureBoot image's keys are enrolled in it (the ISO's auto-enrol entry with the firmware in setup mode, or by hand for PXE and UKI boots: docs/metal.md); `fleetc apply` reads `securitystate` and sends no config that seals to the TPM before SecureBoot is on",
        ),
        tpm: Capability::Provided(
            "the machine's own TPM 2.0 (fleetc cannot see it: docs/metal.md says to enable it in the firmware)",
        ),
    },
];

/// The row of an environment's platform.
pub fn caps(provider: &Provider) -> Option<&'static PlatformCaps> {
    PLATFORMS.iter().find(|p| p.platform == provider.name())
}

/// Where every config of a cluster's pools is kept once sent, in words: a static passphrase in
/// it would be kept there in clear. Each consumer fleetc emits keeps one: the OpenTofu talos
/// provider stores the config it applies in state (terraform-provider-talos v0.11.0
/// `talos_machine_configuration_apply` `machine_configuration_input`, and state encryption is
/// no place for a disk key, F11); a Cluster API TalosConfigTemplate lives in out/ (git) and the
/// management cluster's etcd. `None` would be a consumer that sends the config and keeps
/// nothing (a render applied by hand with talosctl, as a metal environment can).
pub fn config_keeper(env: &Environment, cluster: &Cluster) -> Option<&'static str> {
    Some(if matches!(env.provider, Provider::Metal(_)) {
        "the node documents in out/ (git), which `fleetc apply` and `fleetc talos render` send as they are: fleetc adds no secret to a metal config at send time"
    } else if cluster.is_managed() {
        "the Cluster API TalosConfigTemplate, which is in out/ (git) and the management cluster's etcd"
    } else {
        "the cluster root's OpenTofu state (`talos_machine_configuration_apply.machine_configuration_input`)"
    })
}

pub fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for env in &fleet.environments {
        for cluster in &env.clusters {
            for pool in cluster.pools() {
                check_security(env, cluster, pool, &pool.disk, diags);
            }
        }
    }
}

/// One pool's (or, later, one node's) [`DiskSecurity`] against its platform and consumers.
pub fn check_security(env: &Environment, cluster: &Cluster, pool: &Pool, sec: &DiskSecurity, diags: &mut Diagnostics) {
    let Some(caps) = caps(&env.provider) else { return };
    let platform = env.provider.name();
    if let Some(sb) = sec.secure_boot.as_ref().filter(|s| s.value)
        && let Capability::Absent(why) = caps.secure_boot
    {
        diags.push(
            Diagnostic::new(
                &codes::DISK_SECURE_BOOT_UNAVAILABLE,
                format!("pool `{}` boots with SecureBoot, which {platform} cannot give its machines", pool.name),
            )
            .at(sb.span)
            .label("no SecureBoot here")
            .help(format!(
                "{why}; the SecureBoot installer would install a signed UKI the machine cannot boot (R27: the platform differs, the model says so). Remove `secure-boot`, or move the pool to a platform that has it"
            )),
        );
    }
    for e in &sec.encrypt {
        let vol = e.volume.value.label();
        match e.key.value {
            KeySource::Tpm => {
                if let Capability::Absent(why) = caps.tpm {
                    diags.push(
                        Diagnostic::new(
                            &codes::DISK_KEY_SOURCE_UNAVAILABLE,
                            format!("{vol} of pool `{}` is sealed to a TPM, which {platform} machines lack", pool.name),
                        )
                        .at(e.key.span)
                        .label("no TPM here")
                        .help(format!(
                            "{why}: the node would fail to enroll the key and never provision {vol} (R27). Use `key=\"kms\"` (a KMS server the nodes reach) or `key=\"nodeid\"`"
                        )),
                    );
                } else if !sec.secure_boot() {
                    diags.push(
                        Diagnostic::new(
                            &codes::DISK_TPM_NEEDS_SECURE_BOOT,
                            format!("{vol} of pool `{}` is sealed to the TPM, but the pool does not boot with SecureBoot", pool.name),
                        )
                        .at(e.key.span)
                        .label("TPM key without SecureBoot")
                        .related(pool.span, "add `secure-boot=#true` here")
                        .help(
                            "Talos seals a TPM key with the PCR signing key that the signed UKI of the SecureBoot boot assets carries; the standard installer boots none, and enrollment fails (R17: the installer decides what boots). Set `secure-boot=#true` on the pool",
                        ),
                    );
                }
            }
            KeySource::Static => {
                let keeper = config_keeper(env, cluster);
                if let Some(keeper) = keeper {
                    diags.push(
                        Diagnostic::new(
                            &codes::DISK_STATIC_KEY_PERSISTED,
                            format!("a static key for {vol} of pool `{}` would be kept in clear", pool.name),
                        )
                        .at(e.key.span)
                        .label("a passphrase inside the machine config")
                        .help(format!(
                            "Talos reads a static key from the machine config itself (`encryption.keys[].static.passphrase`), and this cluster's config is kept by {keeper}: a disk key never lands in out/ or a state (F11). Use `key=\"tpm\"` or `key=\"kms\"`"
                        )),
                    );
                }
                if e.sealed.is_none() {
                    diags.push(
                        Diagnostic::new(
                            &codes::DISK_KEY_SETTINGS,
                            format!("the static key of {vol} on pool `{}` names no sealed input", pool.name),
                        )
                        .at(e.span)
                        .label("`sealed=` missing")
                        .help("a static passphrase comes only from a sealed input (`sealed=\"<name>\"`, listed in the cluster's `sealed`), never from fleet.kdl (F11)"),
                    );
                }
            }
            KeySource::Kms => {
                let ok = e.endpoint.as_ref().is_some_and(|u| {
                    u.value.strip_prefix("https://").is_some_and(|h| !h.is_empty() && !h.contains(char::is_whitespace))
                });
                if !ok {
                    let mut diag = Diagnostic::new(
                        &codes::DISK_KEY_SETTINGS,
                        format!("the KMS key of {vol} on pool `{}` has no `https://` endpoint", pool.name),
                    );
                    diag = match &e.endpoint {
                        Some(u) => diag.at(u.span).label("not an https:// URL"),
                        None => diag.at(e.span).label("`endpoint=` missing"),
                    };
                    diags.push(diag.help(
                        "Talos seals and unseals the key through the KMS server at `endpoint` (`encryption.keys[].kms.endpoint`); the node reaches it over TLS at every boot (F11: the key never leaves it in clear)",
                    ));
                }
            }
            KeySource::NodeId => {}
        }
        if e.key.value != KeySource::Kms
            && let Some(u) = &e.endpoint
        {
            diags.push(
                Diagnostic::new(
                    &codes::DISK_KEY_SETTINGS,
                    format!("`endpoint` is for `key=\"kms\"`, not `{}`", e.key.value.as_str()),
                )
                .at(u.span)
                .label("unused")
                .help("remove it, or use `key=\"kms\"` (F11: a key source says where the key lives, once)"),
            );
        }
        if e.key.value != KeySource::Static
            && let Some(s) = &e.sealed
        {
            diags.push(
                Diagnostic::new(
                    &codes::DISK_KEY_SETTINGS,
                    format!("`sealed` is for `key=\"static\"`, not `{}`", e.key.value.as_str()),
                )
                .at(s.span)
                .label("unused")
                .help("remove it, or use `key=\"static\"` (F11: a key source says where the key lives, once)"),
            );
        }
    }
}
