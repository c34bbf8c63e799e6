//! Addresses: static addresses and endpoints are unique and inside the private network (R18);
//! pod and service CIDRs overlap neither the private network nor each other.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Fleet, Provider};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for env in &fleet.environments {
        let net = env.network.value;
        let mut seen: BTreeMap<Ipv4Addr, Span> = BTreeMap::new();
        let mut claim = |ip: Ipv4Addr, span: Span, what: &str, diags: &mut Diagnostics| {
            if !net.contains(ip) || ip == net.addr || ip == net.broadcast() {
                diags.push(
                    Diagnostic::new(
                        &codes::ADDRESS_OUTSIDE_NETWORK,
                        format!("{what} `{ip}` is not a host address of the private network `{net}`"),
                    )
                    .at(span)
                    .label(format!("outside {net}"))
                    .related(env.network.span, "the private network"),
                );
            }
            match seen.get(&ip) {
                Some(first) if *first != span => diags.push(
                    Diagnostic::new(
                        &codes::DUPLICATE_ADDRESS,
                        format!("address `{ip}` is used twice in environment `{}`", env.name),
                    )
                    .at(span)
                    .label("used again here")
                    .related(*first, "first used here"),
                ),
                Some(_) => {}
                None => {
                    seen.insert(ip, span);
                }
            }
        };
        if let Provider::Proxmox(p) = &env.provider {
            claim(p.gateway.value, p.gateway.span, "the router", diags);
            // The environment's `gateway` is the public address talosctl dials (R16), never
            // the LAN router the nodes route through.
            if let Some(gw) = &env.gateway
                && gw.value == p.gateway.value
            {
                diags.push(
                    Diagnostic::new(
                        &codes::ROUTER_AS_TALOS_ADDRESS,
                        format!(
                            "environment `{}` gives its LAN router `{}` as the public address of the Talos API",
                            env.name, gw.value
                        ),
                    )
                    .at(gw.span)
                    .label("the router, not a Talos address")
                    .related(p.gateway.span, "the router")
                    .help("`gateway` goes into every node's certificate SANs as the address talosctl dials (R16); the router is only the nodes' default route. On a LAN, talosctl dials the nodes directly: remove `gateway`, or give the NAT address that forwards to them"),
                );
            }
        }
        // Every node takes a host address of the private network (R6), and so does every
        // API endpoint. Nodes of one cluster
        // count against the platform's bound too.
        let hosts = (1u64 << (32 - u32::from(net.prefix.min(32)))).saturating_sub(2);
        let mut nodes_so_far = 0u64;
        for cluster in &env.clusters {
            let in_cluster: u64 = cluster.pools().map(|p| u64::from(p.count.value)).sum();
            nodes_so_far += in_cluster + 1;
            if in_cluster > u64::from(crate::model::MAX_CLUSTER_NODES) {
                diags.push(
                    Diagnostic::new(
                        &codes::COUNT_TOO_LARGE,
                        format!(
                            "cluster `{}` has {in_cluster} nodes; a cluster holds at most {}",
                            cluster.name,
                            crate::model::MAX_CLUSTER_NODES
                        ),
                    )
                    .at(cluster.name.span)
                    .label(format!("{in_cluster} nodes")),
                );
            } else if nodes_so_far > hosts {
                let biggest = cluster.pools().max_by_key(|p| p.count.value).expect("a control plane");
                diags.push(
                    Diagnostic::new(
                        &codes::COUNT_TOO_LARGE,
                        format!(
                            "the private network `{net}` has {hosts} host addresses for {nodes_so_far} nodes and endpoints of environment `{}`",
                            env.name
                        ),
                    )
                    .at(biggest.count.span)
                    .label("more nodes than addresses")
                    .related(env.network.span, "the private network"),
                );
            }
        }
        for cluster in &env.clusters {
            claim(cluster.endpoint.address.value, cluster.endpoint.address.span, "the API endpoint", diags);
            for pool in cluster.pools() {
                for m in &pool.machines {
                    if let Some(a) = &m.address {
                        claim(a.value, a.span, "node address", diags);
                    }
                }
            }
            if let Some(range) = &cluster.ip_pool {
                for ip in [range.value.first, range.value.last] {
                    if !net.contains(ip) {
                        diags.push(
                            Diagnostic::new(
                                &codes::ADDRESS_OUTSIDE_NETWORK,
                                format!("the IP pool `{}` leaves the private network `{net}`", range.value),
                            )
                            .at(range.span)
                            .label(format!("outside {net}")),
                        );
                        break;
                    }
                }
                let nodes: u32 = cluster.pools().map(|p| p.count.value).sum();
                if range.value.len() < nodes {
                    diags.push(
                        Diagnostic::new(&codes::INVALID_VALUE, format!("the IP pool `{}` holds {} addresses for {nodes} nodes", range.value, range.value.len()))
                            .at(range.span)
                            .label("too small")
                            .help("a rolling update creates a new machine before it removes the old one (R26): leave room for at least one more node per pool"),
                    );
                }
            }
            let (pods, services) = (&cluster.pod_cidr, &cluster.service_cidr);
            for (cidr, what) in [(pods, "pod"), (services, "service")] {
                if cidr.value.overlaps(&net) {
                    diags.push(
                        Diagnostic::new(
                            &codes::CIDR_OVERLAP,
                            format!(
                                "the {what} CIDR `{}` of cluster `{}` overlaps the private network `{net}`",
                                cidr.value, cluster.name
                            ),
                        )
                        .at(cidr.span)
                        .label("overlaps the nodes' network")
                        .related(env.network.span, "the private network"),
                    );
                }
            }
            if pods.value.overlaps(&services.value) {
                diags.push(
                    Diagnostic::new(
                        &codes::CIDR_OVERLAP,
                        format!(
                            "the pod CIDR `{}` and the service CIDR `{}` of cluster `{}` overlap",
                            pods.value, services.value, cluster.name
                        ),
                    )
                    .at(services.span)
                    .label("overlaps the pod CIDR")
                    .related(pods.span, "pod CIDR"),
                );
            }
        }
    }
}
