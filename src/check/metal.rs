//! Bare-metal machines as hardware has them (issue 30): every metal machine names its install
//! disk, and its `ephemeral-disk` when it has one, by what the disk reports (serial, WWID,
//! model, bus path), since fleetc made no disk there and a size matches a USB boot stick as
//! well as the NVMe (R15); static links come with DNS servers, because they turn DHCP off
//! and its DNS servers with it. On a VM platform the reverse: `ephemeral-disk` and links
//! the VM does not have are refused (fleetc creates the VM's disks and its one NIC), and so is a
//! `maintenance-address`, which only bare-metal apply reads.

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Fleet, InstallDisk, LinkKind, Provider};

/// Whether `disk` names the hardware: a serial, a WWID, a model or a bus path (a size or a
/// device path alone names whatever disk is that size or enumerated there).
pub fn identified(disk: &InstallDisk) -> bool {
    [&disk.serial, &disk.wwid, &disk.model, &disk.bus_path]
        .iter()
        .any(|f| f.as_ref().is_some_and(|v| !v.value.trim().is_empty()))
}

/// Whether `disk` names one disk exactly, as the identity check of `fleetc apply` compares it
/// before any secret leaves (R13): a serial or a WWID without a glob. Talos matches both with
/// go-glob, whose one wildcard is `*` (github.com/ryanuber/go-glob v1.0.0 `glob.go`).
pub fn exact_identity(disk: &InstallDisk) -> bool {
    [&disk.serial, &disk.wwid]
        .iter()
        .any(|f| f.as_ref().is_some_and(|v| !v.value.trim().is_empty() && !v.value.contains('*')))
}

/// The one network interface of a Proxmox VM, as the Talos emitter names it
/// (`emit::talos::PROXMOX_LINK`, its `LinkAliasConfig`): `check` does not import `emit`.
const PROXMOX_NIC: &str = "net0";

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    let mut reported: Vec<Span> = Vec::new();
    let mut once = |s: Span| {
        let new = !reported.contains(&s);
        if new {
            reported.push(s);
        }
        new
    };
    for env in &fleet.environments {
        for cluster in env.clusters.iter().filter(|c| !c.is_managed()) {
            for pool in cluster.pools() {
                for m in &pool.machines {
                    let s = &m.settings;
                    let at = m.name.as_ref().map_or(pool.span, |n| n.span);
                    match &env.provider {
                        Provider::Metal(_) => {
                            match &s.install_disk {
                                None => {
                                    if m.name.is_some() && once(at) {
                                        diags.push(
                                            Diagnostic::new(
                                                &codes::DISK_UNIDENTIFIED,
                                                format!("node `{}` declares no install disk", m.hostname),
                                            )
                                            .at(at)
                                            .label("no `install-disk`"),
                                        );
                                    }
                                }
                                Some(d) if !identified(d) => {
                                    if once(d.span) {
                                        diags.push(
                                            Diagnostic::new(
                                                &codes::DISK_UNIDENTIFIED,
                                                format!(
                                                    "the install disk of node `{}` is named only by {}",
                                                    m.hostname,
                                                    by_what(d)
                                                ),
                                            )
                                            .at(d.span)
                                            .label("no serial, WWID, model or bus path"),
                                        );
                                    }
                                }
                                Some(_) => {}
                            }
                            if let Some(d) = &s.ephemeral_disk
                                && !identified(d)
                                && once(d.span)
                            {
                                diags.push(
                                    Diagnostic::new(
                                        &codes::DISK_UNIDENTIFIED,
                                        format!(
                                            "the EPHEMERAL disk of node `{}` is named only by {}",
                                            m.hostname,
                                            by_what(d)
                                        ),
                                    )
                                    .at(d.span)
                                    .label("no serial, WWID, model or bus path"),
                                );
                            }
                            if !s.links.is_empty() && s.nameservers.is_empty() && once(s.links[0].span) {
                                diags.push(
                                    Diagnostic::new(
                                        &codes::LINKS_WITHOUT_NAMESERVERS,
                                        format!("node `{}` declares links but no `nameservers`", m.hostname),
                                    )
                                    .at(s.links[0].span)
                                    .label("DHCP, and its DNS servers, end here"),
                                );
                            }
                        }
                        provider => {
                            if let Some(a) = &m.maintenance_address
                                && once(a.span)
                            {
                                diags.push(
                                    Diagnostic::new(
                                        &codes::MAINTENANCE_ADDRESS_ON_VM,
                                        format!(
                                            "`maintenance-address` on node `{}`, a {} VM",
                                            m.hostname,
                                            provider.name()
                                        ),
                                    )
                                    .at(a.span)
                                    .label("apply never reads this on a VM"),
                                );
                            }
                            if let Some(d) = &s.ephemeral_disk
                                && once(d.span)
                            {
                                diags.push(
                                    Diagnostic::new(
                                        &codes::EPHEMERAL_DISK_ON_VM,
                                        format!("`ephemeral-disk` on node `{}`, a {} VM", m.hostname, provider.name()),
                                    )
                                    .at(d.span)
                                    .label("fleetc creates this VM's data disk"),
                                );
                            }
                            let nic = match provider {
                                Provider::Proxmox(_) => Some(PROXMOX_NIC),
                                _ => None,
                            };
                            for l in &s.links {
                                let problem = match &l.kind {
                                    LinkKind::Link if Some(l.name.value.as_str()) == nic => None,
                                    LinkKind::Link => Some((l.name.span, format!("link `{}`", l.name.value))),
                                    LinkKind::Bond { .. } => Some((l.span, format!("bond `{}`", l.name.value))),
                                    LinkKind::Vlan { parent, .. } if Some(parent.value.as_str()) == nic => None,
                                    LinkKind::Vlan { parent, .. } => Some((
                                        parent.span,
                                        format!("the parent `{}` of VLAN `{}`", parent.value, l.name.value),
                                    )),
                                };
                                if let Some((span, what)) = problem
                                    && once(span)
                                {
                                    let has = nic.map_or_else(
                                        || "no link fleetc configures".to_owned(),
                                        |n| format!("one network interface, `{n}`"),
                                    );
                                    diags.push(
                                        Diagnostic::new(
                                            &codes::LINK_NOT_ON_VM,
                                            format!(
                                                "{what} of node `{}` is not a link of the VM: a {} VM has {has}",
                                                m.hostname,
                                                provider.name()
                                            ),
                                        )
                                        .at(span)
                                        .label("no such link on the VM"),
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `size="…"`, `device="…"` or both, as written.
fn by_what(d: &InstallDisk) -> String {
    let parts: Vec<String> = [("size", &d.size), ("device", &d.device)]
        .iter()
        .filter_map(|(n, v)| v.as_ref().map(|v| format!("`{n}=\"{}\"`", v.value)))
        .collect();
    if parts.is_empty() { "nothing that names the hardware".to_owned() } else { parts.join(" and ") }
}
