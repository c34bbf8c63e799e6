//! The `fleet::disk` codes: disk encryption whose key source or Secure Boot the machine cannot
//! provide, and key settings that contradict each other. Checked in `src/check/disk.rs`.

codes! {
    DISK_SECURE_BOOT_UNAVAILABLE = "fleet::disk::secure-boot-unavailable", Error, Some("R27"), None,
"## What it does
Refuses `secure-boot=#true` on a pool whose platform cannot boot its machines with UEFI
SecureBoot (the capability table `check::disk::PLATFORMS`).

## Why (R27)
The same model runs on every platform, and where a platform differs the model says so rather
than emitting what cannot work. A SecureBoot pool installs the Image Factory's
`<platform>-installer-secureboot` image, a signed UKI that boots only under UEFI SecureBoot.
Scaleway Instances offer none: Talos's platform list marks no SecureBoot for `scaleway`
(siderolabs/talos v1.13.9 `pkg/machinery/platforms/platforms.go`) and the instance resource has
no such setting (scaleway/terraform-provider-scaleway v2.81.0
`internal/services/instance/server.go`, `boot_type` only).

## Example
    environment \"staging\" {
        scaleway … { size \"cp\" type=\"PRO2-XS\" }
        cluster \"main\" { control-plane count=3 size=\"cp\" secure-boot=#true }
    }

## Instead
Remove `secure-boot`, or run the pool on Proxmox (OVMF, an EFI vars disk fleetc emits).
";

    DISK_KEY_SOURCE_UNAVAILABLE = "fleet::disk::key-source-unavailable", Error, Some("R27"), None,
"## What it does
Refuses an `encrypt` whose key source the platform cannot provide: a TPM-sealed key on a
platform whose machines have no TPM.

## Why (R27)
Talos enrolls a TPM key when it first provisions the volume; with no TPM the enrollment fails
and the volume (STATE: the machine config itself) is never provisioned, so the node never
joins. Scaleway Instances have no TPM (no instance type and no API field offers one:
scaleway/terraform-provider-scaleway v2.81.0 `internal/services/instance/server.go`). On
Proxmox fleetc gives the VM a vTPM 2.0 (`tpm_state`, bpg/terraform-provider-proxmox v0.111.1).

## Example
    control-plane count=3 size=\"cp\" {
        encrypt \"state\" key=\"tpm\"
    }

## Instead
    encrypt \"state\" key=\"kms\" endpoint=\"https://kms.internal:4443\"
or `key=\"nodeid\"` (which protects a disk read elsewhere, not a stolen machine).
";

    DISK_TPM_NEEDS_SECURE_BOOT = "fleet::disk::tpm-needs-secure-boot", Error, Some("R17"), None,
"## What it does
Refuses a TPM-sealed volume on a pool that does not boot with SecureBoot.

## Why (R17)
The installer decides what boots. Talos seals a TPM key under a policy signed by the PCR
signing key that systemd-stub hands over from the signed UKI (siderolabs/talos v1.13.9
`pkg/machinery/constants/constants.go` `PCRPublicKey`; v1.14.0-alpha.1
`internal/pkg/secureboot/tpm2/seal.go`): only the SecureBoot installer and boot assets carry
it, so with the standard installer the enrollment fails and the volume is never provisioned.

## Example
    pool \"workers\" count=2 size=\"medium\" {
        encrypt \"ephemeral\" key=\"tpm\"
    }

## Instead
    pool \"workers\" count=2 size=\"medium\" secure-boot=#true {
        encrypt \"ephemeral\" key=\"tpm\"
    }
";

    DISK_STATIC_KEY_PERSISTED = "fleet::disk::static-key-persisted", Error, Some("F11"), None,
"## What it does
Refuses `key=\"static\"` on a pool whose machine configs are kept, once sent, by the consumer
that applies them.

## Why (F11)
Talos reads a static key from the machine config itself
(`encryption.keys[].static.passphrase`, siderolabs/talos v1.13.9
`pkg/machinery/config/types/block/encryption.go`). Every consumer fleetc emits keeps that
config: the OpenTofu talos provider stores it in the cluster root's state
(`talos_machine_configuration_apply.machine_configuration_input`), a Cluster API
TalosConfigTemplate is in out/ (git) and in the management cluster's etcd. A disk key, like
every secret, never lands in out/, a state or git, even sealed inputs only join at apply time.
A consumer that sends the config and keeps nothing (a render applied by hand to bare metal)
is where a static key could go; none of this fleet's consumers is one.

## Example
    encrypt \"state\" key=\"static\" sealed=\"disk-key\"

## Instead
`key=\"tpm\"` (with `secure-boot=#true`, on a platform with a TPM) or `key=\"kms\"`.
";

    DISK_KEY_SETTINGS = "fleet::disk::key-settings", Error, Some("F11"), None,
"## What it does
Reports an `encrypt` whose settings do not fit its key source: a KMS key with no `https://`
`endpoint`, a static key with no `sealed=` input, or an `endpoint`/`sealed` on a key source
that reads neither.

## Why (F11)
A key source says once where the key lives: Talos's KMS key is sealed by the server at
`kms.endpoint` over TLS at every boot; a static passphrase may only come from a sealed input,
never from fleet.kdl. A setting the key source ignores is a decision nobody can see applied.

## Example
    encrypt \"state\" key=\"kms\"

## Instead
    encrypt \"state\" key=\"kms\" endpoint=\"https://kms.internal:4443\"
";
}
