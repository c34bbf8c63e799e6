//! Disk encryption and SecureBoot (docs/talos.md, "Disk encryption and SecureBoot"): what the
//! Talos documents say for an encrypted pool, and what the checks refuse. The documents'
//! acceptance by Talos itself is `oracles/talos` on golden/disk-proxmox-secureboot and
//! golden/disk-capi-secureboot (CABPT's merge).

use crate::common;

use fleetc::compile::{Compilation, FsLoader, compile};
use fleetc::emit::talos::document::{Document, VolumeConfig};

fn case(name: &str) -> Compilation {
    let dir = common::root().join("golden").join(name);
    let text = std::fs::read_to_string(dir.join("fleet.kdl")).unwrap();
    compile("fleet.kdl", &text, &FsLoader::new(&dir))
}

fn volumes(docs: &[Document]) -> Vec<&VolumeConfig> {
    docs.iter()
        .filter_map(|d| match d {
            Document::Volume(v) => Some(v),
            _ => None,
        })
        .collect()
}

fn codes(c: &Compilation) -> Vec<&'static str> {
    c.diags.iter().map(|d| d.code.name).collect()
}

/// STATE is encrypted by a VolumeConfig with no provisioning (Talos refuses one: siderolabs/talos
/// v1.13.9 `config/types/block/volume_config.go` `Validate`), EPHEMERAL keeps its disk selector
/// beside its encryption, and a TPM key of a SecureBoot pool checks SecureBoot on enrollment.
#[test]
fn an_encrypted_pool_gets_state_and_ephemeral_volume_configs_with_their_keys() {
    let c = case("disk-proxmox-secureboot");
    assert!(!c.diags.has_errors());
    let fleet = c.fleet.unwrap();
    let env = fleet.environment("lab").unwrap();
    let cluster = env.cluster("main").unwrap();
    let docs = fleetc::emit::talos::cluster_documents(&fleet, env, cluster).unwrap();
    let cp = volumes(&docs.controlplane.docs);
    assert_eq!(cp.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["STATE", "EPHEMERAL"]);
    assert!(cp[0].provisioning.is_none(), "STATE takes no provisioning");
    for v in &cp {
        let e = v.encryption.as_ref().unwrap_or_else(|| panic!("{} is encrypted", v.name));
        assert_eq!(e.provider, "luks2");
        assert_eq!(e.keys.len(), 1);
        assert!(e.keys[0].tpm.as_ref().is_some_and(|t| t.check_secureboot_status_on_enroll), "{}", v.name);
    }
    assert!(cp[1].provisioning.is_some(), "EPHEMERAL keeps its data disk");
    let w = volumes(&docs.workers["system"].docs);
    assert_eq!(w.len(), 1, "an unencrypted STATE gets no document");
    let kms = w[0].encryption.as_ref().unwrap().keys[0].kms.as_ref().unwrap();
    assert_eq!(kms.endpoint, "https://10.10.0.5:4443");
}

/// The platform table: Scaleway gives neither SecureBoot nor a TPM, and a run that asks for
/// them writes nothing.
#[test]
fn scaleway_refuses_secure_boot_and_tpm_keys_and_nothing_is_built() {
    let c = case("disk-secure-boot-unavailable");
    assert!(c.artifacts.is_none());
    let found = codes(&c);
    assert!(found.contains(&"fleet::disk::secure-boot-unavailable"), "{found:?}");
    assert!(found.contains(&"fleet::disk::key-source-unavailable"), "{found:?}");
}

/// A static passphrase would sit in the cluster root's state (F11), a TPM key needs the
/// SecureBoot UKI, and a KMS key its endpoint: all refused at once.
#[test]
fn keys_that_cannot_work_as_written_are_refused_together() {
    let c = case("disk-tpm-needs-secure-boot");
    assert!(c.artifacts.is_none());
    let found = codes(&c);
    for code in ["fleet::disk::tpm-needs-secure-boot", "fleet::disk::static-key-persisted", "fleet::disk::key-settings"]
    {
        assert!(found.contains(&code), "{code} missing from {found:?}");
    }
}

/// Every platform fleetc emits for has a capability row, so a new platform (metal) cannot
/// skip the key-source checks.
#[test]
fn every_provider_has_a_capability_row() {
    for p in ["scaleway", "proxmox"] {
        assert!(fleetc::check::disk::PLATFORMS.iter().any(|r| r.platform == p), "{p}");
    }
}

/// The Proxmox row of the table is what the roots emit: each VM's `secure_boot` and `tpm`
/// follow its pool (OVMF and an EFI vars disk without pre-enrolled keys for SecureBoot, a vTPM
/// 2.0 where a key is sealed to it), and a VM that asks for neither keeps `seabios`.
#[test]
fn proxmox_vms_get_uefi_secure_boot_and_a_vtpm_exactly_where_their_pool_asks() {
    let c = case("disk-proxmox-secureboot");
    let set = c.artifacts.unwrap();
    let tfvars = std::str::from_utf8(set.get("tofu/lab/cloud/lab.auto.tfvars").unwrap()).unwrap();
    let flags = |key: &str| -> Vec<bool> {
        tfvars
            .lines()
            .filter_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == key).map(|(_, v)| v.trim() == "true"))
            .collect()
    };
    // Three control-plane VMs (secure-boot, TPM keys), then two system VMs (a KMS key).
    assert_eq!(flags("secure_boot"), [true, true, true, false, false]);
    assert_eq!(flags("tpm"), [true, true, true, false, false]);
    assert!(tfvars.contains("/nocloud-amd64-secureboot.qcow2\""), "the SecureBoot image is downloaded");
    let module = std::str::from_utf8(set.get("tofu/modules/proxmox-cluster-cp3/main.tf").unwrap()).unwrap();
    assert!(module.contains("bios = var.control_plane[0].secure_boot ? \"ovmf\" : \"seabios\""), "{module}");
    assert!(module.contains("dynamic \"efi_disk\"") && module.contains("pre_enrolled_keys = false"), "{module}");
    assert!(module.contains("dynamic \"tpm_state\"") && module.contains("version      = \"v2.0\""), "{module}");
}
