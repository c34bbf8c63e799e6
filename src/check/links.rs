//! The links a machine declares can carry what it needs (issue 28): each route's gateway is
//! on the subnet of an address of its link (the kernel adds no route through a gateway it
//! cannot reach on that link), and on bare metal every control-plane node declares the link
//! that carries its address, since the cluster's endpoint is a shared address
//! (`Layer2VIPConfig`) that the control-plane nodes hold in turn on that link
//! (docs/metal.md), unless a patch of the node holds it (an imported node's own network
//! documents, docs/import.md).

use std::net::Ipv4Addr;

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::patch::Patch;
use crate::model::{Fleet, HostAddress, Provider, Role};

/// Whether `ip` is on the subnet of the interface address `a` (host bits allowed in `a`).
fn on_subnet(a: &HostAddress, ip: Ipv4Addr) -> bool {
    let mask = if a.prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(a.prefix.min(32))) };
    u32::from(a.addr) & mask == u32::from(ip) & mask
}

/// Whether one of a machine's patches gives it the endpoint's shared address itself: a
/// `Layer2VIPConfig` named by the address (Talos ≥ 1.12's form, whose `link` the patch then
/// names), or the v1alpha1 `machine.network.interfaces[].vip.ip` (or a VLAN's) that Talos 1.12
/// and later still read (siderolabs/talos v1.13.9 `pkg/machinery/config/types/v1alpha1`
/// `Device.VIPConfig`, deprecated). fleetc then writes no `Layer2VIPConfig` of its own for the
/// node, and `fleet::metal::vip-without-link` does not apply.
fn holds_in_patch<'p>(patches: impl Iterator<Item = &'p Patch>, endpoint: Ipv4Addr) -> bool {
    let ep = endpoint.to_string();
    let is_ep = |v: Option<&serde_json::Value>| v.and_then(serde_json::Value::as_str) == Some(ep.as_str());
    patches.flat_map(|p| &p.file.documents).any(|d| match d.kind() {
        "Layer2VIPConfig" => is_ep(d.value.get("name")),
        "v1alpha1" => d
            .value
            .pointer("/machine/network/interfaces")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .any(|i| {
                is_ep(i.pointer("/vip/ip"))
                    || i.get("vlans")
                        .and_then(serde_json::Value::as_array)
                        .into_iter()
                        .flatten()
                        .any(|v| is_ep(v.pointer("/vip/ip")))
            }),
        _ => false,
    })
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for env in &fleet.environments {
        let metal = matches!(env.provider, Provider::Metal(_));
        for cluster in env.clusters.iter().filter(|c| !c.is_managed()) {
            for pool in cluster.pools() {
                // A pool-level link reaches every machine: judge it once.
                let mut judged: Vec<crate::diag::Span> = Vec::new();
                for m in &pool.machines {
                    for link in &m.settings.links {
                        if judged.contains(&link.span) || link.addresses.is_empty() {
                            continue;
                        }
                        judged.push(link.span);
                        for r in &link.routes {
                            let gw = r.gateway.value;
                            if link.addresses.iter().any(|a| on_subnet(&a.value, gw)) {
                                continue;
                            }
                            let subnets: Vec<String> = link
                                .addresses
                                .iter()
                                .map(|a| {
                                    let p = a.value.prefix.min(32);
                                    let mask = if p == 0 { 0 } else { u32::MAX << (32 - u32::from(p)) };
                                    format!("`{}/{p}`", Ipv4Addr::from(u32::from(a.value.addr) & mask))
                                })
                                .collect();
                            diags.push(
                                Diagnostic::new(
                                    &codes::GATEWAY_OFF_LINK,
                                    format!(
                                        "the gateway `{gw}` of link `{}` is not on the link's subnet ({})",
                                        link.name.value,
                                        subnets.join(", ")
                                    ),
                                )
                                .at(r.gateway.span)
                                .label("not reachable on this link")
                                .related(link.addresses[0].span, "the link's address"),
                            );
                        }
                    }
                    // An endpoint by name is the user's DNS or load balancer: no VIP to hold.
                    if metal
                        && pool.role == Role::ControlPlane
                        && m.settings.links.is_empty()
                        && let Some(endpoint) = &cluster.endpoint.address
                        && !holds_in_patch(pool.patches.iter().chain(&m.settings.patches), endpoint.value)
                        && cluster.endpoint_node(env).is_none()
                        && let (Some(name), Some(_)) = (&m.name, &m.address)
                    {
                        diags.push(
                            Diagnostic::new(
                                &codes::VIP_WITHOUT_LINK,
                                format!(
                                    "control-plane node `{}` declares no link, and none of its patches holds the endpoint `{}`",
                                    name.value, endpoint.value
                                ),
                            )
                            .at(name.span)
                            .label("no `link`")
                            .related(endpoint.span, "the shared endpoint address"),
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compile::{MapLoader, compile};

    /// The metal codes a cluster of the given control plane (the endpoint 10.30.0.10) gets, with
    /// `patches` (path, text) loaded.
    fn codes_of(control_plane: &str, patches: &[(&str, &str)]) -> Vec<&'static str> {
        let text = format!(
            r#"fleet "demo" {{
    talos "v1.13.9"
    kubernetes "1.36.2"
    schematic "base" {{
    }}
    environment "lab" {{
        metal
        network "10.30.0.0/24"
        admin-ranges "10.30.0.0/24"
        cluster "main" {{
            single-node #true
            endpoint address="10.30.0.10"
            pool-defaults schematic="base"
            {control_plane}
        }}
    }}
}}"#
        );
        let mut loader = MapLoader::default();
        for (p, t) in patches {
            loader.files.insert((*p).to_owned(), (*t).to_owned());
        }
        let c = compile("fleet.kdl", &text, &loader);
        assert!(!c.diags.iter().any(|d| d.code.name.starts_with("fleet::syntax")), "{:?}", c.diags);
        let mut codes: Vec<&'static str> = c
            .diags
            .iter()
            .map(|d| d.code.name)
            .filter(|n| *n == "fleet::metal::vip-without-link" || *n == "fleet::network::duplicate-address")
            .collect();
        codes.dedup();
        codes
    }

    fn node(name: &str, ip: &str, mac: &str, extra: &str) -> String {
        format!(r#"node "{name}" {{ address "{ip}"; mac "{mac}"; install-disk serial="S-{name}"; {extra} }}"#)
    }

    const VIP: &str = "apiVersion: v1alpha1\nkind: LinkConfig\nname: eno1\naddresses:\n  - address: 10.30.0.11/24\n---\napiVersion: v1alpha1\nkind: Layer2VIPConfig\nname: 10.30.0.10\nlink: eno1\n";

    #[test]
    fn a_one_node_control_plane_may_be_its_own_endpoint() {
        let own = |ip: &str| {
            codes_of(&format!("control-plane count=1 {{ {} }}", node("cp-1", ip, "3c:ec:ef:00:00:11", "")), &[])
        };
        assert!(own("10.30.0.10").is_empty(), "{:?}", own("10.30.0.10"));
        // Another address: the endpoint is shared again, and a node without a link cannot hold it.
        assert_eq!(own("10.30.0.11"), ["fleet::metal::vip-without-link"]);
        // Three nodes: the endpoint is never one node's address.
        let three = format!(
            "control-plane count=3 {{ {}; {}; {} }}",
            node("cp-1", "10.30.0.10", "3c:ec:ef:00:00:11", r#"link "eno1" { address "10.30.0.10/24" }"#),
            node("cp-2", "10.30.0.12", "3c:ec:ef:00:00:12", r#"link "eno1" { address "10.30.0.12/24" }"#),
            node("cp-3", "10.30.0.13", "3c:ec:ef:00:00:13", r#"link "eno1" { address "10.30.0.13/24" }"#),
        );
        assert_eq!(codes_of(&three, &[]), ["fleet::network::duplicate-address"]);
    }

    #[test]
    fn a_node_whose_patch_holds_the_endpoint_needs_no_link() {
        let with = |file: &str| {
            codes_of(
                &format!(
                    "control-plane count=1 {{ {} }}",
                    node("cp-1", "10.30.0.11", "3c:ec:ef:00:00:11", r#"patch "p/net.yaml""#)
                ),
                &[("p/net.yaml", file)],
            )
        };
        assert!(with(VIP).is_empty(), "{:?}", with(VIP));
        // The v1alpha1 form Talos still reads.
        let legacy = "machine:\n  network:\n    interfaces:\n      - interface: eno1\n        dhcp: true\n        vip:\n          ip: 10.30.0.10\n";
        assert!(with(legacy).is_empty(), "{:?}", with(legacy));
        // A VIP of another address holds nothing of this cluster's.
        assert_eq!(with(&VIP.replace("name: 10.30.0.10", "name: 10.30.0.99")), ["fleet::metal::vip-without-link"]);
    }
}
