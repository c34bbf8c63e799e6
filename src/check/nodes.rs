//! Named nodes and per-machine settings (docs/fleet-language.md, "Named nodes"): one install
//! disk per machine, never by bare device path without a warning (R15); node names are DNS
//! labels and hostnames unique in their cluster; a node's links carry its address and no
//! link address is used twice (R18); Cluster API managed clusters take no per-machine
//! settings (R26); a node taints no key its pool taints. Named node addresses are
//! `Machine::address`, so `network.rs` checks them like every static address (inside the
//! private network, unique).

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::Fleet;
use crate::model::values::is_dns_label;

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    // A pool-level `install-disk` reaches every machine of the pool: report each place once.
    let mut reported: BTreeSet<Span> = BTreeSet::new();
    for env in &fleet.environments {
        let mut link_addresses: BTreeMap<Ipv4Addr, Span> = BTreeMap::new();
        for cluster in &env.clusters {
            // Hostname → where its node is written, and whether that node is named.
            let mut hostnames: BTreeMap<&str, (Span, bool)> = BTreeMap::new();
            for pool in cluster.pools() {
                for m in &pool.machines {
                    let at = m.name.as_ref().map_or(pool.name.span, |n| n.span);
                    if let Some(name) = &m.name {
                        if !is_dns_label(&name.value) {
                            diags.push(
                                Diagnostic::new(
                                    &codes::INVALID_NAME,
                                    format!("node name `{}` is not a DNS-1123 label", name.value),
                                )
                                .at(name.span)
                                .label("not a DNS label")
                                .help("the node's hostname is `<cluster>-<name>`, the Kubernetes Node's name: lowercase letters, digits and `-`, starting with a letter"),
                            );
                        } else if is_dns_label(&cluster.name.value) && !is_dns_label(&m.hostname) {
                            // A cluster name that is no label is reported once, at the
                            // cluster (`names.rs`), not again at each hostname it makes.
                            diags.push(
                                Diagnostic::new(
                                    &codes::INVALID_NAME,
                                    format!("node hostname `{}` (cluster-name) is not a DNS-1123 label", m.hostname),
                                )
                                .at(name.span)
                                .label("makes a hostname too long")
                                .help("a named node's hostname is `<cluster>-<name>`, at most 63 characters: shorten the name"),
                            );
                        }
                    }
                    match hostnames.get(m.hostname.as_str()) {
                        Some(&(first, first_named)) => {
                            // The cause is the name written, not the name generated.
                            let (at, other) = if m.name.is_none() && first_named { (first, at) } else { (at, first) };
                            diags.push(
                                Diagnostic::new(
                                    &codes::NODE_HOSTNAME_TWICE,
                                    format!("two nodes of cluster `{}` are named `{}`", cluster.name, m.hostname),
                                )
                                .at(at)
                                .label("this node's hostname")
                                .related(other, "the other node"),
                            );
                        }
                        None => {
                            hostnames.insert(&m.hostname, (at, m.name.is_some()));
                        }
                    }
                    if cluster.is_managed() && (m.name.is_some() || !m.settings.is_empty()) {
                        let span = m
                            .name
                            .as_ref()
                            .map_or_else(|| m.install_disks_written.first().map_or(pool.span, |d| d.span), |n| n.span);
                        if reported.insert(span) {
                            diags.push(
                                Diagnostic::new(
                                    &codes::NODE_MANAGED,
                                    format!(
                                        "cluster `{}` is managed by Cluster API, whose templates carry no per-machine settings",
                                        cluster.name
                                    ),
                                )
                                .at(span)
                                .label("one machine's own settings")
                                .related(cluster.managed_by.as_ref().map_or(cluster.span, |b| b.span), "managed here"),
                            );
                        }
                    }
                    // A machine's taints are added to its pool's (Talos appends a worker's
                    // `registerWithTaints` lists, `merge/merge.go`): one key, one place.
                    for t in &m.settings.taints {
                        if let Some(p) = pool.taints.iter().find(|p| p.key == t.key) {
                            diags.push(
                                Diagnostic::new(
                                    &codes::DUPLICATE_KEY,
                                    format!("taint `{}` of node `{}` is its pool's taint too", t.key, m.hostname),
                                )
                                .at(t.span)
                                .label("the node's taint")
                                .related(p.span, "the pool's")
                                .help("a node's taints add to its pool's, and its kubelet registers with both lists (a worker must be tainted when it registers: NodeRestriction refuses a node that changes its own taints later, kubernetes v1.35.0 `plugin/pkg/admission/noderestriction/admission.go`): taint the key in one place, the pool or each node"),
                            );
                        }
                    }
                    for extra in m.install_disks_written.iter().skip(1) {
                        if reported.insert(extra.span) {
                            diags.push(
                                Diagnostic::new(&codes::INSTALL_DISK_TWICE, "a second `install-disk` for one machine")
                                    .at(extra.span)
                                    .label("second install disk")
                                    .related(m.install_disks_written[0].span, "the first"),
                            );
                        }
                    }
                    if let Some(disk) = &m.settings.install_disk
                        && let Some(dev) = &disk.device
                        && reported.insert(dev.span)
                    {
                        diags.push(
                            Diagnostic::new(
                                &codes::INSTALL_DISK_PATH,
                                format!("the install disk is named by device path (`{}`)", dev.value),
                            )
                            .at(dev.span)
                            .label("device names follow enumeration order"),
                        );
                    }
                    if matches!(env.provider, crate::model::Provider::Metal(_)) && !cluster.is_managed() {
                        let problem = match (&m.name, &m.address) {
                            (None, _) => Some(format!(
                                "machine {} of pool `{}` is not declared: on bare metal every machine is a named node",
                                m.index, pool.name.value
                            )),
                            (Some(n), None) => Some(format!("node `{}` has no `address`", n.value)),
                            // R13: apply recognises the machine by its MAC, or by the one
                            // disk an exact serial or WWID names; a size, a model or a glob
                            // fits other machines too (talos-3 M8).
                            (Some(n), Some(_))
                                if m.mac.is_none()
                                    && !m.settings.install_disk.as_ref().is_some_and(super::metal::exact_identity) =>
                            {
                                Some(format!(
                                    "node `{}` has neither a `mac` nor an install disk `serial`/`wwid` to be recognised by",
                                    n.value
                                ))
                            }
                            _ => None,
                        };
                        if let Some(msg) = problem {
                            let span = m.name.as_ref().map_or(pool.count.span, |n| n.span);
                            if reported.insert(span) {
                                diags.push(
                                    Diagnostic::new(&codes::METAL_UNDECLARED_MACHINE, msg)
                                        .at(span)
                                        .label("not declared one by one"),
                                );
                            }
                        }
                    }
                    let links = &m.settings.links;
                    if let (Some(addr), false) = (&m.address, links.is_empty()) {
                        let carried = links
                            .iter()
                            .flat_map(|l| &l.addresses)
                            .any(|a| a.value.addr == addr.value && a.value.prefix == env.network.value.prefix);
                        if !carried {
                            diags.push(
                                Diagnostic::new(
                                    &codes::ADDRESS_NOT_ON_LINK,
                                    format!(
                                        "no link of node `{}` carries its address `{}/{}`",
                                        m.hostname, addr.value, env.network.value.prefix
                                    ),
                                )
                                .at(addr.span)
                                .label("the node's address")
                                .related(links[0].span, "its links"),
                            );
                        }
                    }
                    for a in links.iter().flat_map(|l| &l.addresses) {
                        // The node's own address is claimed by `network.rs` already.
                        if m.address.as_ref().is_some_and(|x| x.value == a.value.addr) {
                            continue;
                        }
                        match link_addresses.get(&a.value.addr) {
                            Some(first) if *first != a.span => diags.push(
                                Diagnostic::new(
                                    &codes::DUPLICATE_ADDRESS,
                                    format!("address `{}` is used twice in environment `{}`", a.value.addr, env.name),
                                )
                                .at(a.span)
                                .label("used again here")
                                .related(*first, "first used here"),
                            ),
                            _ => {
                                link_addresses.insert(a.value.addr, a.span);
                            }
                        }
                    }
                }
            }
        }
        // A link address that is another node's (or the endpoint's) address.
        for cluster in &env.clusters {
            let claimed = cluster
                .endpoint
                .address
                .iter()
                .chain(cluster.pools().flat_map(|p| p.machines.iter().filter_map(|m| m.address.as_ref())));
            for a in claimed {
                if let Some(link) = link_addresses.get(&a.value) {
                    diags.push(
                        Diagnostic::new(
                            &codes::DUPLICATE_ADDRESS,
                            format!("address `{}` is used twice in environment `{}`", a.value, env.name),
                        )
                        .at(*link)
                        .label("a link address")
                        .related(a.span, "also a node's or endpoint's address"),
                    );
                }
            }
        }
    }
}
