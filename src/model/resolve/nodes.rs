//! Named nodes and the per-machine settings of a pool (`node "cp-1" { … }`, `install-disk`,
//! `link`/`bond`/`vlan`, `nameservers`): read into [`NodeSettings`], the one struct a pool
//! and a machine both carry (docs/fleet-language.md, "Named nodes").

use std::net::Ipv4Addr;

use super::labels::{kubelet_may_set, kubernetes_key, kubernetes_value};
use super::reader::{Reader, unknown_child};
use super::urls::parse_ip;
use super::{Resolver, one_of};
use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{
    ARCHES, HostAddress, InstallDisk, Ipv4Net, LinkKind, NetLink, NetRoute, NodeSettings, Patch, PatchLevel, Role,
    Spanned, Taint, TaintEffect, values,
};
use crate::syntax::Node;

/// The children a named node's block takes.
pub(super) const NODE_CHILDREN: &[&str] = &[
    "address",
    "maintenance-address",
    "mac",
    "arch",
    "install-disk",
    "ephemeral-disk",
    "link",
    "bond",
    "vlan",
    "nameservers",
    "label",
    "taint",
    "patch",
];

/// The bond modes Talos accepts (siderolabs/talos v1.13.9 `pkg/machinery/nethelpers/bondmode.go`).
pub(super) const BOND_MODES: &[&str] =
    &["balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"];

/// One `node "<name>" { … }` of a pool, as read.
pub(super) struct NamedNode {
    pub name: Spanned<String>,
    pub address: Option<Spanned<Ipv4Addr>>,
    /// `maintenance-address`: where the machine answers before its config (its DHCP lease).
    pub maintenance_address: Option<Spanned<Ipv4Addr>>,
    pub mac: Option<Spanned<String>>,
    pub settings: NodeSettings,
    /// Every `install-disk` written in the block (more than one is reported by `check`).
    pub install_disks: Vec<InstallDisk>,
}

impl Resolver<'_> {
    /// A setting of [`NodeSettings`] written in a pool's or node's block; false when `child`
    /// is none of them. `disks` collects every `install-disk`, so that a second one is
    /// reported at its place (`fleet::node::install-disk-twice`).
    pub(super) fn node_setting(
        &mut self,
        child: &Node,
        owner: &str,
        s: &mut NodeSettings,
        disks: &mut Vec<InstallDisk>,
    ) -> bool {
        let d = &mut *self.diags;
        match child.name.value.as_str() {
            "install-disk" => {
                if let Some(disk) = disk_child(child, "install-disk", d) {
                    if disks.is_empty() {
                        s.install_disk = Some(disk.clone());
                    }
                    disks.push(disk);
                }
            }
            "ephemeral-disk" => {
                if let Some(disk) = disk_child(child, "ephemeral-disk", d) {
                    if let Some(first) = &s.ephemeral_disk {
                        d.push(
                            Diagnostic::new(&codes::DUPLICATE_KEY, format!("a second `ephemeral-disk` for `{owner}`"))
                                .at(disk.span)
                                .label("second EPHEMERAL disk")
                                .related(first.span, "the first")
                                .help("Talos provisions EPHEMERAL on one disk: keep one `ephemeral-disk`"),
                        );
                    } else {
                        s.ephemeral_disk = Some(disk);
                    }
                }
            }
            "arch" => {
                let mut r = Reader::new(child, &[], d);
                if let Some(a) = r.arg_str(d, "an architecture") {
                    let known: Vec<(&'static str, &'static str)> = ARCHES.iter().map(|a| (*a, *a)).collect();
                    s.arch = one_of(&known, &a, "an architecture", d).map(|v| Spanned::new(v.value.to_owned(), a.span));
                }
                r.finish(false, d);
            }
            "nameservers" => {
                let mut r = Reader::new(child, &[], d);
                s.nameservers = r.rest_str(d, "DNS server addresses").iter().filter_map(|a| parse_ip(a, d)).collect();
                r.finish(false, d);
            }
            "link" | "bond" | "vlan" => {
                if let Some(l) = self.net_link(child) {
                    s.links.push(l);
                }
            }
            "label" => label_child(child, owner, self.role, s, self.diags),
            "taint" => taint_child(child, owner, s, self.diags),
            _ => return false,
        }
        true
    }

    fn net_link(&mut self, child: &Node) -> Option<NetLink> {
        let d = &mut *self.diags;
        let props: &'static [&'static str] = match child.name.value.as_str() {
            "bond" => &["mode"],
            "vlan" => &["parent", "id"],
            _ => &[],
        };
        let mut r = Reader::new(child, props, d);
        let name = r.name_arg(d);
        let kind = match child.name.value.as_str() {
            "bond" => {
                let mode = r.require_str("mode", d);
                if let Some(m) = &mode
                    && !BOND_MODES.contains(&m.value.as_str())
                {
                    d.push(
                        Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is not a Talos bond mode", m.value))
                            .at(m.span)
                            .label("unknown bond mode")
                            .help(format!("one of {}", BOND_MODES.join(", "))),
                    );
                }
                mode.map(|mode| LinkKind::Bond { mode, links: Vec::new() })
            }
            "vlan" => {
                let parent = r.require_str("parent", d);
                let id = if r.has_prop("id") {
                    r.prop_int::<u16>("id", d).filter(|id| {
                        let ok = (1..=4094).contains(&id.value);
                        if !ok {
                            d.push(
                                Diagnostic::new(&codes::INVALID_VALUE, format!("VLAN id {} is not 1–4094", id.value))
                                    .at(id.span)
                                    .label("not a VLAN id"),
                            );
                        }
                        ok
                    })
                } else {
                    r.report_missing("id", d);
                    None
                };
                match (parent, id) {
                    (Some(parent), Some(id)) => Some(LinkKind::Vlan { parent, id }),
                    _ => None,
                }
            }
            _ => Some(LinkKind::Link),
        };
        r.finish(true, d);
        let mut addresses = Vec::new();
        let mut routes = Vec::new();
        let mut members = Vec::new();
        for c in child.children() {
            let d = &mut *self.diags;
            match c.name.value.as_str() {
                "address" => {
                    let mut r = Reader::new(c, &[], d);
                    for a in r.rest_str(d, "addresses with their prefix (`10.0.0.5/24`)") {
                        match host_address(&a.value) {
                            Ok(h) => addresses.push(Spanned::new(h, a.span)),
                            Err(e) => d.push(super::reader::invalid_value(&e, a.span, "invalid address")),
                        }
                    }
                    r.finish(false, d);
                }
                "route" => {
                    let r = Reader::new(c, &["to", "gateway"], d);
                    let to = r.prop_parsed::<Ipv4Net>("to", d);
                    let gateway = r.require_str("gateway", d).and_then(|g| parse_ip(&g, d));
                    r.finish(false, d);
                    if let Some(gateway) = gateway {
                        routes.push(NetRoute { to, gateway, span: c.head_span() });
                    }
                }
                "links" if child.name.value == "bond" => {
                    let mut r = Reader::new(c, &[], d);
                    members = r.rest_str(d, "the bonded links");
                    r.finish(false, d);
                }
                _ => {
                    let known: &[&str] =
                        if child.name.value == "bond" { &["address", "route", "links"] } else { &["address", "route"] };
                    unknown_child(c, &child.name.value, known, d);
                }
            }
        }
        let mut kind = kind?;
        if let LinkKind::Bond { links, .. } = &mut kind {
            if members.is_empty() {
                self.diags.push(
                    Diagnostic::new(&codes::INVALID_VALUE, "a bond bonds no link")
                        .at(child.head_span())
                        .label("no `links`")
                        .help("list the links it bonds: `links \"enp1s0\" \"enp2s0\"` (Talos refuses a bond without links)"),
                );
            }
            *links = members;
        }
        Some(NetLink { name: name?, kind, addresses, routes, span: child.head_span() })
    }

    /// `node "<name>" { … }` inside a pool.
    pub(super) fn named_node(&mut self, node: &Node, level_patches: &mut Vec<Patch>) -> Option<NamedNode> {
        let d = &mut *self.diags;
        let mut r = Reader::new(node, &[], d);
        let name = r.name_arg(d);
        r.finish(true, d);
        let mut settings = NodeSettings::default();
        let mut install_disks = Vec::new();
        let mut address = None;
        let mut maintenance_address = None;
        let mut mac = None;
        let owner = name.as_ref().map_or_else(String::new, |n| n.value.clone());
        for child in node.children() {
            if child.name.value == "patch" {
                level_patches.extend(self.patch(child, PatchLevel::Node));
                continue;
            }
            if self.node_setting(child, &owner, &mut settings, &mut install_disks) {
                continue;
            }
            let d = &mut *self.diags;
            match child.name.value.as_str() {
                "address" => {
                    let mut r = Reader::new(child, &[], d);
                    address = r.arg_str(d, "the node's address").and_then(|a| parse_ip(&a, d));
                    r.finish(false, d);
                }
                "maintenance-address" => {
                    let mut r = Reader::new(child, &[], d);
                    maintenance_address =
                        r.arg_str(d, "the address the machine has in maintenance mode").and_then(|a| parse_ip(&a, d));
                    r.finish(false, d);
                }
                "mac" => {
                    let mut r = Reader::new(child, &[], d);
                    mac = r.arg_str(d, "the MAC address of the machine's link").filter(|m| {
                        let ok = is_mac(&m.value);
                        if !ok {
                            d.push(
                                Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is not a MAC address", m.value))
                                    .at(m.span)
                                    .label("not six hex pairs")
                                    .help("write it as `aa:bb:cc:dd:ee:ff`, as `talosctl get links` reports it"),
                            );
                        }
                        ok
                    });
                    r.finish(false, d);
                }
                _ => unknown_child(child, "node", NODE_CHILDREN, d),
            }
        }
        settings.patches = std::mem::take(level_patches);
        Some(NamedNode { name: name?, address, maintenance_address, mac, settings, install_disks })
    }
}

/// `install-disk` or `ephemeral-disk`: a disk by the fields Talos matches (both take the same
/// forms, docs/fleet-language.md "Named nodes"); `None` (reported) when it states none.
fn disk_child(child: &Node, what: &str, d: &mut Diagnostics) -> Option<InstallDisk> {
    let r = Reader::new(child, &["size", "model", "serial", "wwid", "bus-path", "device"], d);
    let disk = InstallDisk {
        size: r.prop_str("size", d),
        model: r.prop_str("model", d),
        serial: r.prop_str("serial", d),
        wwid: r.prop_str("wwid", d),
        bus_path: r.prop_str("bus-path", d),
        device: r.prop_str("device", d),
        span: child.head_span(),
    };
    r.finish(false, d);
    if [&disk.size, &disk.model, &disk.serial, &disk.wwid, &disk.bus_path, &disk.device].iter().all(|v| v.is_none()) {
        d.push(
            Diagnostic::new(&codes::INVALID_VALUE, format!("`{what}` selects no disk"))
                .at(child.head_span())
                .label("no property")
                .help("state what identifies the disk: `serial`, `wwid`, `model`, `bus-path` or `size` (R15)"),
        );
        return None;
    }
    Some(disk)
}

/// `10.0.0.5/24`: an address and its prefix, host bits allowed (it is an interface's address).
fn host_address(s: &str) -> Result<HostAddress, String> {
    let (a, p) = s.split_once('/').ok_or_else(|| format!("`{s}` has no prefix; write it as `{s}/24`"))?;
    let addr = values::parse_ipv4(a)?;
    let prefix = p.parse::<u8>().ok().filter(|p| *p <= 32).ok_or_else(|| format!("`/{p}` is not a prefix length"))?;
    Ok(HostAddress { addr, prefix })
}

fn is_mac(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() == 6 && parts.iter().all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `label "<key>" "<value>"` of a pool or node.
pub(super) fn label_child(child: &Node, owner: &str, role: Role, s: &mut NodeSettings, d: &mut Diagnostics) {
    let mut r = Reader::new(child, &[], d);
    let k = r.arg_str(d, "a label key");
    let v = r.arg_str(d, "a label value");
    r.finish(false, d);
    if let (Some(k), Some(v)) = (k, v) {
        let valid = (kubernetes_key(&k, "label", d) & kubernetes_value(&v, "label", d))
            && (role == Role::ControlPlane || kubelet_may_set(&k, d));
        if let Some(first) = s.labels.get(&k.value) {
            let first = first.span;
            d.push(
                Diagnostic::new(&codes::DUPLICATE_KEY, format!("label `{}` is set twice on `{owner}`", k.value))
                    .at(k.span)
                    .label("set again here")
                    .related(first, "first set here"),
            );
        } else if valid {
            s.labels.insert(k.value, v);
        }
    }
}

/// Why a taint key is set once: Talos holds a machine's taints as a map by key.
pub(super) const TAINT_KEY_HELP: &str = "Talos's `machine.nodeTaints` maps a key to one `value:Effect` (siderolabs/talos v1.13.9 `v1alpha1_types.go` `MachineNodeTaints`), so a second taint of the same key, even with another effect, would replace the first: keep one per key";

/// `taint "<key>" ["<value>"] effect=…` of a pool or node.
pub(super) fn taint_child(child: &Node, owner: &str, s: &mut NodeSettings, d: &mut Diagnostics) {
    let mut r = Reader::new(child, &["effect"], d);
    let k = r.arg_str(d, "a taint key");
    let value = if child.args.len() > 1 { r.arg_str(d, "a taint value").map(|v| v.value) } else { None };
    let effect = r
        .prop_str("effect", d)
        .map_or(Some(TaintEffect::NoSchedule), |e| one_of(&TaintEffect::ALL, &e, "a taint effect", d).map(|e| e.value));
    r.finish(false, d);
    if let (Some(k), Some(effect)) = (k, effect) {
        let mut valid = kubernetes_key(&k, "taint", d);
        if let (Some(v), Some(arg)) = (&value, child.args.get(1)) {
            valid &= kubernetes_value(&Spanned::new(v.clone(), arg.span), "taint", d);
        }
        if let Some(first) = s.taints.iter().find(|t| t.key == k.value) {
            let first = first.span;
            d.push(
                Diagnostic::new(&codes::DUPLICATE_KEY, format!("taint `{}` is set twice on `{owner}`", k.value))
                    .at(k.span)
                    .label("set again here")
                    .related(first, "first set here")
                    .help(TAINT_KEY_HELP),
            );
        } else if valid {
            s.taints.push(Taint { key: k.value, value, effect, span: child.head_span() });
        }
    }
}
