//! F1, R17: the rule `disk-security`, a pool's disk encryption (volumes, key sources) or
//! SecureBoot changed. Both are read only when a machine installs, so running nodes keep their
//! disks and boot until they are reset and reinstalled; on Proxmox the VM's firmware changes
//! with SecureBoot.

use super::{Ctx, Outcome, Severity, facts, stable_changes};

/// Encryption and the boot variant are read when a machine installs (Talos provisions a volume
/// once; the installer is used only by an install or an upgrade, F1): running nodes keep
/// their disks and boot, new or reinstalled nodes get the new ones.
pub(super) fn disk_security(ctx: &Ctx<'_>, out: &mut Outcome) {
    for field in [facts::DISK_ENCRYPTION, facts::SECURE_BOOT] {
        for (i, c) in stable_changes(ctx, field) {
            out.claim(i);
            let effect = if field == facts::SECURE_BOOT {
                "running nodes keep their boot: the SecureBoot installer and image reach a node only when it is installed again (reset and reinstall one node at a time, control plane first); on Proxmox the VM's firmware (OVMF, EFI vars disk, vTPM) changes with it, and a VM installed from the standard image must be reinstalled to boot under it (R17)"
            } else {
                "running nodes keep their volumes as they were provisioned: Talos reads `encryption` only when it creates a volume, so existing disks change only when a node is reset and reinstalled; nodes created from now on get it (F1)"
            };
            out.push(
                Severity::Warning,
                c.scope.subject(),
                format!("{} of {}: {}", field, c.scope.what(), c.values()),
                effect,
            );
        }
    }
}
