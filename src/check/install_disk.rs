//! Install-disk selectors as Talos reads them (R15): a `size` is a matcher Talos parses
//! (`model::values::SizeMatch`) and compares with `==` when it has no operator, so a bare
//! size is refused with the `>=` to write; `serial`, `model`, `wwid`, `bus-path` and `device`
//! are non-empty and well-formed, because Talos skips an empty field and compares the others
//! with what the kernel reports, byte for byte (a glob). Every `install-disk` written, at the
//! pool or a named node, is judged once.

use std::collections::BTreeSet;

use crate::diag::{Diagnostic, Diagnostics, Span, Spanned, codes};
use crate::model::values::{SizeMatch, SizeOp};
use crate::model::{Fleet, InstallDisk};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    let mut seen: BTreeSet<Span> = BTreeSet::new();
    for (_, cluster) in fleet.clusters() {
        for pool in cluster.pools() {
            let written = pool.machines.iter().flat_map(|m| &m.install_disks_written);
            for disk in pool.node.install_disk.iter().chain(written) {
                if seen.insert(disk.span) {
                    one(disk, "install-disk", diags);
                }
            }
            let ephemeral = pool.machines.iter().filter_map(|m| m.settings.ephemeral_disk.as_ref());
            for disk in pool.node.ephemeral_disk.iter().chain(ephemeral) {
                if seen.insert(disk.span) {
                    one(disk, "ephemeral-disk", diags);
                }
            }
        }
    }
}

fn one(disk: &InstallDisk, what: &str, diags: &mut Diagnostics) {
    if let Some(size) = &disk.size {
        size_matcher(size, diags);
    }
    let fields = [
        ("serial", &disk.serial, "/sys/block/<dev>/serial"),
        ("model", &disk.model, "/sys/block/<dev>/device/model"),
        ("wwid", &disk.wwid, "/sys/block/<dev>/wwid"),
        ("bus-path", &disk.bus_path, "the disk's bus path"),
        ("device", &disk.device, "the device path"),
    ];
    for (name, value, sysfs) in fields {
        if let Some(v) = value
            && let Some((why, help)) = field_problem(name, &v.value, sysfs)
        {
            diags.push(
                Diagnostic::new(&codes::INSTALL_DISK_SELECTOR, format!("{what} `{name}` {why}"))
                    .at(v.span)
                    .label(format!("`{name}` matches no disk as written"))
                    .help(help),
            );
        }
    }
}

/// What is wrong with one selector field, and the help, or `None`.
fn field_problem(name: &str, v: &str, sysfs: &str) -> Option<(String, String)> {
    if v.trim().is_empty() {
        return Some((
            "is empty".to_owned(),
            format!(
                "Talos adds a condition only for a field that is not empty (siderolabs/talos v1.13.9 `v1alpha1_provider.go` `DiskMatchExpression`), so an empty `{name}` selects by nothing and the selector can match another disk (R15): give the value `talosctl get disks` reports, or remove `{name}`"
            ),
        ));
    }
    if v.chars().any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')) || v.trim() != v {
        return Some((
            "holds a line break, a control character or surrounding spaces".to_owned(),
            format!(
                "Talos compares `{name}` with {sysfs} as a glob, character for character: write the value alone, as `talosctl get disks` prints it (R15)"
            ),
        ));
    }
    if name == "bus-path" && !v.starts_with('/') {
        return Some((
            format!("`{v}` is not a bus path"),
            "a bus path starts with `/`, as `talosctl get disks` prints it (`/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0`, or a glob such as `/pci0000:00/*`; siderolabs/talos v1.13.9 `v1alpha1_types.go` `InstallDiskSelector.BusPath`)".to_owned(),
        ));
    }
    if name == "device" && (!v.starts_with("/dev/") || v.len() == "/dev/".len()) {
        return Some((
            format!("`{v}` is not a device path"),
            "a device path is `/dev/<name>` (`/dev/nvme0n1`); better, select the disk by `serial` or `wwid` (R15)"
                .to_owned(),
        ));
    }
    None
}

/// A `size` matcher: one Talos reads, with an operator, and with a unit.
fn size_matcher(size: &Spanned<String>, diags: &mut Diagnostics) {
    let m = match size.value.parse::<SizeMatch>() {
        Ok(m) => m,
        Err(e) => {
            let (message, help) = e.split_once('\n').unwrap_or((&e, ""));
            diags.push(
                Diagnostic::new(&codes::INSTALL_DISK_SIZE, message.to_owned())
                    .at(size.span)
                    .label("Talos refuses this matcher")
                    .help(format!(
                        "{help}: Talos refuses the whole machine config otherwise (siderolabs/talos v1.13.9 `v1alpha1_types.go` `InstallDiskSizeMatcher.UnmarshalYAML`, R15)"
                    )),
            );
            return;
        }
    };
    let written = size.value.trim();
    let bare = written.trim_start_matches(['>', '<', '=']).trim();
    if m.unitless {
        diags.push(
            Diagnostic::new(
                &codes::INSTALL_DISK_SIZE,
                format!("install-disk size `{written}` has no unit: Talos reads it as {} bytes", m.bytes),
            )
            .at(size.span)
            .label(format!("{} bytes", m.bytes))
            .help(format!(
                "a size takes a unit, which Talos reads as go-humanize does (siderolabs/talos v1.13.9 `InstallDiskSizeMatcher.UnmarshalYAML`): write `size=\">= {bare}GB\"` (R15)"
            )),
        );
        return;
    }
    if m.op == SizeOp::Bare {
        diags.push(
            Diagnostic::new(
                &codes::INSTALL_DISK_SIZE,
                format!(
                    "install-disk size `{written}` has no operator: Talos matches only a disk of exactly {} bytes",
                    group(m.bytes)
                ),
            )
            .at(size.span)
            .label("an exact byte count")
            .help(format!(
                "Talos compares a size without an operator with `==` (siderolabs/talos v1.13.9 `v1alpha1_provider.go` `DiskMatchExpression`), and a disk sold as {bare} holds a few more bytes than that (a \"500 GB\" SSD has 500,107,862,016): write `size=\">= {bare}\"`, or `== {bare}` if you mean exactly (R15)"
            )),
        );
    }
}

/// `500000000000` as `500,000,000,000`.
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_judged_as_talos_compares_them() {
        assert!(field_problem("serial", "", "").is_some());
        assert!(field_problem("serial", "  ", "").is_some());
        assert!(field_problem("serial", "S6PNNS0T500123\n", "").is_some());
        assert!(field_problem("serial", "S6PNNS0T500123", "").is_none());
        assert!(field_problem("model", "Samsung SSD 980*", "").is_none());
        assert!(field_problem("bus-path", "pci0000:00/*", "").is_some());
        assert!(field_problem("bus-path", "/pci0000:00/*", "").is_none());
        assert!(field_problem("device", "sda", "").is_some());
        assert!(field_problem("device", "/dev/", "").is_some());
        assert!(field_problem("device", "/dev/sda", "").is_none());
        assert_eq!(group(500_000_000_000), "500,000,000,000");
        assert_eq!(group(12), "12");
    }
}
