//! An environment's infrastructure provider: `scaleway` ([`Scaleway`]), `proxmox`
//! ([`Proxmox`], with its `dns` and the Proxmox VE `nodes` VMs are spread over) and `metal`
//! ([`Metal`], machines declared one by one), each with the `size`s its pools name
//! ([`Size`]), into a [`Provider`].

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use super::Resolver;
use super::reader::{Reader, unknown_child};
use super::urls::{UrlUse, expect_url, parse_ip};
use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{METAL_SIZE, Metal, Provider, Proxmox, Scaleway, Size, Spanned};
use crate::syntax::Node;

impl Resolver<'_> {
    /// `scaleway { … }` or `proxmox { … }`: the provider's children first, then its
    /// properties.
    pub(super) fn provider(&mut self, node: &Node) -> Option<Provider> {
        let d = &mut *self.diags;
        let is_scaleway = node.name.value == "scaleway";
        let block = provider_block(node, is_scaleway, d);
        if is_scaleway { scaleway(node, block.sizes, d) } else { proxmox(node, block, d) }
    }

    /// `metal { }`: machines declared one by one, as named nodes (docs/metal.md).
    pub(super) fn metal(&mut self, node: &Node) -> Option<Provider> {
        let d = &mut *self.diags;
        let r = Reader::new(node, &[], d);
        r.finish(true, d);
        for child in node.children() {
            unknown_child(child, "metal", &[], d);
        }
        let span = node.head_span();
        let mut sizes = BTreeMap::new();
        let name = Spanned::new(METAL_SIZE.to_owned(), span);
        sizes.insert(
            METAL_SIZE.to_owned(),
            Size { name, instance_type: None, cores: None, memory: None, kvm: true, span },
        );
        Some(Provider::Metal(Metal { sizes, span }))
    }
}

/// A provider's children, as read: its sizes by name and, on Proxmox, its `dns` and the
/// Proxmox VE `nodes` (each once) with where they were listed.
struct ProviderBlock {
    sizes: BTreeMap<String, Size>,
    dns: Vec<Spanned<Ipv4Addr>>,
    pve_nodes: Vec<Spanned<String>>,
    nodes_written: Option<Span>,
}

fn provider_block(node: &Node, is_scaleway: bool, d: &mut Diagnostics) -> ProviderBlock {
    let mut b = ProviderBlock { sizes: BTreeMap::new(), dns: Vec::new(), pve_nodes: Vec::new(), nodes_written: None };
    for child in node.children() {
        match child.name.value.as_str() {
            "size" => {
                if let Some(size) = size(child, is_scaleway, d) {
                    let sname = size.name.clone();
                    if let Some(prev) = b.sizes.insert(sname.value.clone(), size) {
                        d.push(
                            Diagnostic::new(
                                &codes::DUPLICATE_NAME,
                                format!("size `{}` is declared twice", sname.value),
                            )
                            .at(sname.span)
                            .related(prev.name.span, "first declared here"),
                        );
                    }
                }
            }
            "dns" if !is_scaleway => {
                let mut r = Reader::new(child, &[], d);
                b.dns = r.rest_str(d, "DNS server addresses").iter().filter_map(|s| parse_ip(s, d)).collect();
                r.finish(false, d);
            }
            "nodes" if !is_scaleway => {
                let mut r = Reader::new(child, &[], d);
                let listed = r.rest_str(d, "Proxmox VE node names");
                r.finish(false, d);
                for n in listed {
                    if let Some(prev) = b.pve_nodes.iter().find(|p: &&Spanned<String>| p.value == n.value) {
                        d.push(
                            Diagnostic::new(
                                &codes::DUPLICATE_NAME,
                                format!("Proxmox VE node `{}` is listed twice", n.value),
                            )
                            .at(n.span)
                            .related(prev.span, "first listed here"),
                        );
                        continue;
                    }
                    b.pve_nodes.push(n);
                }
                b.nodes_written = Some(child.head_span());
            }
            _ => unknown_child(
                child,
                &node.name.value,
                if is_scaleway { &["size"] } else { &["size", "dns", "nodes"] },
                d,
            ),
        }
    }
    b
}

/// `size "<name>"`: an instance `type=` on Scaleway, `cores=` and `memory=` on Proxmox;
/// `None` when it has no name.
fn size(child: &Node, is_scaleway: bool, d: &mut Diagnostics) -> Option<Size> {
    let props: &'static [&'static str] = if is_scaleway { &["type", "kvm"] } else { &["cores", "memory", "kvm"] };
    let mut r = Reader::new(child, props, d);
    let sname = r.name_arg(d);
    let (instance_type, cores, memory) = if is_scaleway {
        (r.require_str("type", d), None, None)
    } else {
        let cores = if r.has_prop("cores") {
            r.prop_int::<u32>("cores", d)
        } else {
            r.report_missing("cores", d);
            None
        };
        let memory = if r.has_prop("memory") {
            r.prop_bytes("memory", d)
        } else {
            r.report_missing("memory", d);
            None
        };
        (None, cores, memory)
    };
    let kvm = r.prop_bool("kvm", d).is_some_and(|b| b.value);
    r.finish(false, d);
    sname.map(|sname| Size { name: sname, instance_type, cores, memory, kvm, span: child.head_span() })
}

/// `scaleway project=… region=… zone=…`.
fn scaleway(node: &Node, sizes: BTreeMap<String, Size>, d: &mut Diagnostics) -> Option<Provider> {
    let r = Reader::new(node, &["project", "region", "zone"], d);
    let project = r.require_str("project", d);
    let region = r.require_str("region", d);
    let zone = r.require_str("zone", d);
    r.finish(true, d);
    Some(Provider::Scaleway(Scaleway {
        project: project?,
        region: region?,
        zone: zone?,
        sizes,
        span: node.head_span(),
    }))
}

/// `proxmox endpoint=… node=… router=… …`: the API, the Proxmox VE node that holds the
/// images and templates (one of the listed `nodes`, or the only one), the LAN and storage.
fn proxmox(node: &Node, block: ProviderBlock, d: &mut Diagnostics) -> Option<Provider> {
    let ProviderBlock { sizes, dns, mut pve_nodes, nodes_written } = block;
    let r = Reader::new(
        node,
        &["endpoint", "node", "bridge", "datastore", "router", "gateway", "insecure", "image-datastore"],
        d,
    );
    let endpoint = r.require_str("endpoint", d);
    if let Some(e) = &endpoint {
        expect_url(e, "the Proxmox `endpoint`", UrlUse::ProxmoxApi, d);
    }
    let pnode = r.require_str("node", d);
    let bridge = r.prop_str("bridge", d).unwrap_or_else(|| Spanned::new("vmbr0".into(), r.span()));
    let datastore = r.prop_str("datastore", d).unwrap_or_else(|| Spanned::new("local-lvm".into(), r.span()));
    // `gateway=` was the router's old spelling: `gateway` is the environment's public
    // Talos address everywhere else. The old spelling is refused, pointing at the new
    // one, and its value is still read so that nothing else is reported in its place.
    let old = node.prop("gateway");
    if let Some(old) = old {
        d.push(
            Diagnostic::new(&codes::RENAMED, "the Proxmox LAN router is now `router=`, not `gateway=`")
                .at(old.name.span)
                .label("write `router=`")
                .help("`gateway` means one thing in fleet.kdl: the environment's public address through which the Talos API is reached (R16); the nodes' default route on Proxmox is `router=`"),
        );
    }
    let gateway =
        if old.is_some() && !r.has_prop("router") { r.prop_str("gateway", d) } else { r.require_str("router", d) }
            .and_then(|s| parse_ip(&s, d));
    let image_datastore = r.prop_str("image-datastore", d).unwrap_or_else(|| Spanned::new("local".into(), r.span()));
    let insecure = r.prop_bool("insecure", d).is_some_and(|b| b.value);
    r.finish(true, d);
    let pnode = pnode?;
    if let Some(list_span) = nodes_written
        && !pve_nodes.is_empty()
        && !pve_nodes.iter().any(|n| n.value == pnode.value)
    {
        d.push(
            Diagnostic::new(
                &codes::PVE_NODE_UNLISTED,
                format!("Proxmox VE node `{}` is not one of the listed `nodes`", pnode.value),
            )
            .at(pnode.span)
            .label("holds the images and VM templates")
            .related(list_span, "the nodes VMs are spread over"),
        );
    }
    if pve_nodes.is_empty() {
        pve_nodes.push(pnode.clone());
    }
    Some(Provider::Proxmox(Proxmox {
        endpoint: endpoint?,
        node: pnode,
        nodes: pve_nodes,
        insecure,
        image_datastore,
        bridge,
        datastore,
        gateway: gateway?,
        dns,
        sizes,
        span: node.head_span(),
    }))
}
