//! What tells one machine from another is unique (issue 28): a MAC address and an install
//! disk's `serial` or `wwid` name one piece of hardware, so two machines of one environment
//! (one L2 network, one rack), or of two environments, never declare the same; an
//! `ephemeral-disk` is a disk too, and never the machine's install disk. `fleetc apply` recognises a bare-metal
//! machine in maintenance mode by its MAC and its install disk before it sends the config
//! (`src/apply/metal.rs`), and Talos installs to the one disk the selector matches.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Fleet, Machine};

/// How a check names a machine: a named node by its name, another by its hostname.
fn who(m: &Machine) -> String {
    m.name.as_ref().map_or_else(|| format!("`{}`", m.hostname), |n| format!("`{}`", n.value))
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    // One piece of hardware is in one place: across the whole fleet, not per environment
    // (issue 30). (kind, value) → where first written, and by whom.
    let mut seen: BTreeMap<(&'static str, String), (Span, String)> = BTreeMap::new();
    let mut reported: BTreeSet<Span> = BTreeSet::new();
    for env in &fleet.environments {
        for cluster in env.clusters.iter().filter(|c| !c.is_managed()) {
            for pool in cluster.pools() {
                for m in &pool.machines {
                    let disk = m.settings.install_disk.as_ref();
                    let eph = m.settings.ephemeral_disk.as_ref();
                    // (kind, as written, value): an install disk and an EPHEMERAL disk are
                    // disks alike, so one serial in both is one disk named twice.
                    let ids = [
                        ("MAC", "MAC", m.mac.as_ref()),
                        ("serial", "install-disk serial", disk.and_then(|d| d.serial.as_ref())),
                        ("wwid", "install-disk wwid", disk.and_then(|d| d.wwid.as_ref())),
                        ("serial", "ephemeral-disk serial", eph.and_then(|d| d.serial.as_ref())),
                        ("wwid", "ephemeral-disk wwid", eph.and_then(|d| d.wwid.as_ref())),
                    ];
                    for (kind, what, id) in ids {
                        let Some(id) = id.filter(|v| !v.value.trim().is_empty()) else { continue };
                        let key = (kind, id.value.to_ascii_lowercase());
                        match seen.get(&key) {
                            None => {
                                seen.insert(key, (id.span, who(m)));
                            }
                            // One `install-disk` of a pool reaches each of its machines.
                            Some((first, _)) if *first == id.span => {
                                if reported.insert(id.span) {
                                    diags.push(
                                        Diagnostic::new(
                                            &codes::IDENTITY_TWICE,
                                            format!(
                                                "{what} `{}` is given to every machine of pool `{}` ({} machines): it names one disk",
                                                id.value,
                                                pool.name.value,
                                                pool.machines.len()
                                            ),
                                        )
                                        .at(id.span)
                                        .label("one disk, several machines")
                                        .help("a serial or WWID is one disk's: Talos installs only where the selector matches, so every machine but one finds no install disk (R15). Write it in each named node's own block, or select by `size`/`model` at pool level"),
                                    );
                                }
                            }
                            Some((first, first_who)) if *first_who == who(m) => {
                                if reported.insert(id.span) {
                                    diags.push(
                                        Diagnostic::new(
                                            &codes::IDENTITY_TWICE,
                                            format!(
                                                "{what} `{}` names a disk node {first_who} already uses: the install disk and the EPHEMERAL disk are one",
                                                id.value
                                            ),
                                        )
                                        .at(id.span)
                                        .label("the same disk again")
                                        .related(*first, "first named here")
                                        .help("EPHEMERAL on the system disk is the default: remove `ephemeral-disk`, or name the second disk (R15)"),
                                    );
                                }
                            }
                            Some((first, first_who)) => {
                                if reported.insert(id.span) {
                                    diags.push(
                                        Diagnostic::new(
                                            &codes::IDENTITY_TWICE,
                                            format!(
                                                "{what} `{}` is declared for both node {first_who} and node {}",
                                                id.value,
                                                who(m)
                                            ),
                                        )
                                        .at(id.span)
                                        .label("declared again here")
                                        .related(*first, format!("declared first for node {first_who}")),
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
