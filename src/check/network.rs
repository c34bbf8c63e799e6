//! Addresses: static addresses and endpoints are unique and inside the private network (R18);
//! pod and service CIDRs overlap neither the private network nor each other.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Fleet, Provider};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for env in &fleet.environments {
        let net = env.network.value;
        let mut seen: BTreeMap<Ipv4Addr, (Span, Owner)> = BTreeMap::new();
        let mut claim = |ip: Ipv4Addr, span: Span, owner: Owner, diags: &mut Diagnostics| {
            if !net.contains(ip) || ip == net.addr || ip == net.broadcast() {
                diags.push(
                    Diagnostic::new(
                        &codes::ADDRESS_OUTSIDE_NETWORK,
                        format!("{} `{ip}` is not a host address of the private network `{net}`", owner.what()),
                    )
                    .at(span)
                    .label(format!("outside {net}"))
                    .related(env.network.span, "the private network"),
                );
            }
            match seen.get(&ip) {
                Some((first, first_owner)) if *first != span => {
                    diags.push(twice(ip, (span, &owner), (*first, first_owner)));
                }
                Some(_) => {}
                None => {
                    seen.insert(ip, (span, owner));
                }
            }
        };
        if let Provider::Proxmox(p) = &env.provider {
            claim(p.gateway.value, p.gateway.span, Owner::Router, diags);
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
            if let Some(endpoint) = &cluster.endpoint.address {
                claim(endpoint.value, endpoint.span, Owner::Endpoint(cluster.name.value.clone()), diags);
            }
            // A name only on bare metal: a cloud's load balancer and Proxmox's shared address are
            // addresses fleetc makes and writes into the nodes (R12).
            if let Some(name) = &cluster.endpoint.name
                && !matches!(env.provider, Provider::Metal(_))
            {
                diags.push(
                    Diagnostic::new(
                        &codes::ENDPOINT_NAME_NOT_METAL,
                        format!("cluster `{}`'s endpoint is the name `{}`, on {}", cluster.name.value, name.value, env.provider.name()),
                    )
                    .at(name.span)
                    .label("a name")
                    .help("an endpoint by name is a DNS name or load balancer outside the fleet, for machines that exist (bare metal); here fleetc makes the endpoint itself (a private load balancer on Scaleway, R12; a shared address on Proxmox): write `address=`"),
                );
            }
            // A one-node control plane whose address is the endpoint holds it itself: one
            // address, claimed once (`Cluster::endpoint_node`).
            let own = cluster.endpoint_node(env).map(|m| m.hostname.as_str());
            for pool in cluster.pools() {
                for m in &pool.machines {
                    if let Some(a) = &m.address
                        && own != Some(m.hostname.as_str())
                    {
                        claim(a.value, a.span, Owner::Node(m.hostname.clone()), diags);
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
            }
            let (pods, services) = (&cluster.pod_cidr, &cluster.service_cidr);
            if pods.value.overlaps(&net) {
                diags.push(
                    Diagnostic::new(
                        &codes::CIDR_OVERLAP,
                        format!(
                            "the pod CIDR `{}` of cluster `{}` overlaps the private network `{net}`",
                            pods.value, cluster.name
                        ),
                    )
                    .at(pods.span)
                    .label("overlaps the nodes' network")
                    .related(env.network.span, "the private network"),
                );
            }
            // One service CIDR that overlaps both the network and the pod CIDR is one
            // mistake: one error at it, naming both (one cause, one error).
            let on_net = services.value.overlaps(&net);
            let on_pods = pods.value.overlaps(&services.value);
            if on_net || on_pods {
                let what: Vec<String> = [
                    on_net.then(|| format!("the private network `{net}`")),
                    on_pods.then(|| format!("the pod CIDR `{}`", pods.value)),
                ]
                .into_iter()
                .flatten()
                .collect();
                let mut d = Diagnostic::new(
                    &codes::CIDR_OVERLAP,
                    format!(
                        "the service CIDR `{}` of cluster `{}` overlaps {}",
                        services.value,
                        cluster.name,
                        what.join(" and ")
                    ),
                )
                .at(services.span)
                .label(if on_net { "overlaps the nodes' network" } else { "overlaps the pod CIDR" });
                if on_net {
                    d = d.related(env.network.span, "the private network");
                }
                if on_pods {
                    d = d.related(pods.span, "pod CIDR");
                }
                diags.push(d);
            }
        }
        pools_hold_free_addresses(env, &seen, diags);
    }
}

/// An IP pool hands its addresses to machines (Cluster API's in-cluster IPAM): every address
/// in it must be free. An address the environment already gives a router, an endpoint or a
/// node would be handed out again (two machines on one address), and CAPMOX refuses a cluster
/// whose own endpoint lies in its pool (ionos-cloud/cluster-api-provider-proxmox v0.9.0
/// `internal/webhook/proxmoxcluster_webhook.go`, "addresses may not contain the endpoint IP"):
/// controllers-3 D4. Two pools of one environment overlap the same way.
fn pools_hold_free_addresses(
    env: &crate::model::Environment,
    seen: &BTreeMap<Ipv4Addr, (Span, Owner)>,
    diags: &mut Diagnostics,
) {
    let ranges: Vec<(&crate::model::Cluster, &crate::model::Spanned<crate::model::Ipv4Range>)> =
        env.clusters.iter().filter_map(|c| c.ip_pool.as_ref().map(|r| (c, r))).collect();
    for (i, (c, range)) in ranges.iter().enumerate() {
        let cluster = &c.name.value;
        let taken: Vec<(&Ipv4Addr, &(Span, Owner))> = seen.range(range.value.first..=range.value.last).collect();
        if let Some((ip, (at, owner))) = taken.first() {
            let more = taken.len() - 1;
            let and_more = if more == 0 { String::new() } else { format!(" (and {more} more address(es) in use)") };
            diags.push(
                Diagnostic::new(
                    &codes::DUPLICATE_ADDRESS,
                    format!("the IP pool `{}` of cluster `{cluster}` holds `{ip}`, {}{and_more}", range.value, owner.is()),
                )
                .at(range.span)
                .label("hands out addresses already in use")
                .related(*at, owner.is())
                .help("the pool's addresses go to new machines (Cluster API IPAM): keep every address the environment gives a router, an endpoint or a node out of it; CAPMOX refuses a cluster whose endpoint is in its own pool"),
            );
        }
        // A rollout creates each pool's new machine before it removes an old one (the
        // control plane's and every MachineDeployment's `maxSurge: 1`, `maxUnavailable: 0`),
        // and a Kubernetes upgrade rolls them all at once: one spare address per pool, or the
        // surge machine waits for an address forever (CAPMOX `WaitingForStaticIPAllocation`)
        // and the rollout never ends (controllers-3 D5).
        let nodes: u32 = c.pools().map(|p| p.count.value).sum();
        let pools = u32::try_from(c.pools().count()).unwrap_or(u32::MAX);
        let needed = nodes.saturating_add(pools);
        if range.value.len() < needed {
            diags.push(
                Diagnostic::new(
                    &codes::IP_POOL_TOO_SMALL,
                    format!(
                        "the IP pool `{}` holds {} addresses for {nodes} nodes and the {pools} more a rollout creates",
                        range.value,
                        range.value.len()
                    ),
                )
                .at(range.span)
                .label(format!("too small: {needed} needed"))
                .help("a rolling update creates each pool's new machine before it removes the old one, and a Kubernetes upgrade rolls every pool at once (R26): give the pool one spare address per pool, the control plane included"),
            );
        }
        for (other, o) in &ranges[i + 1..] {
            let other = &other.name.value;
            if range.value.first <= o.value.last && o.value.first <= range.value.last {
                diags.push(
                    Diagnostic::new(
                        &codes::DUPLICATE_ADDRESS,
                        format!("the IP pools of clusters `{cluster}` and `{other}` overlap"),
                    )
                    .at(o.span)
                    .label("overlaps")
                    .related(range.span, format!("cluster `{cluster}`'s pool"))
                    .help("each pool's addresses go to its cluster's new machines: two pools sharing addresses give two machines one address"),
                );
            }
        }
    }
}

/// Who an address of the private network belongs to, so that an address used twice names
/// both owners in plain words (issue 28: "cluster `edge`'s endpoint is cluster `k8s`'s
/// endpoint", "… is the environment's router").
#[derive(Debug, Clone)]
enum Owner {
    /// The Proxmox environment's `router=`.
    Router,
    /// A cluster's API endpoint (the control plane's shared address).
    Endpoint(String),
    /// A node, by hostname.
    Node(String),
}

impl Owner {
    /// The address's role, as the start of a sentence about it.
    fn what(&self) -> &'static str {
        match self {
            Owner::Router => "the router",
            Owner::Endpoint(_) => "the API endpoint",
            Owner::Node(_) => "node address",
        }
    }
    /// The address's role after "is" (`… is cluster `k8s`'s endpoint`).
    fn is(&self) -> String {
        match self {
            Owner::Router => "the environment's router (`router=`)".to_owned(),
            Owner::Endpoint(c) => format!("cluster `{c}`'s endpoint"),
            Owner::Node(h) => format!("node `{h}`'s address"),
        }
    }
}

/// `fleet::network::duplicate-address` for `ip`, claimed by `again` after `first`: the
/// message says whose the address already is, and the help what to do for that pair.
fn twice(ip: Ipv4Addr, again: (Span, &Owner), first: (Span, &Owner)) -> Diagnostic {
    let (at, owner) = again;
    let (first_at, first_owner) = first;
    let subject = match owner {
        Owner::Router => format!("the router `{ip}`"),
        Owner::Endpoint(c) => format!("cluster `{c}`'s endpoint `{ip}`"),
        Owner::Node(h) => format!("node `{h}`'s address `{ip}`"),
    };
    let help = match (owner, first_owner) {
        (Owner::Endpoint(c), Owner::Endpoint(_)) => format!(
            "each cluster's endpoint is a shared address its own control plane holds (R18): two clusters on one address answer for each other's API. Give cluster `{c}` a free address of the private network"
        ),
        (_, Owner::Router) | (Owner::Router, _) => "the router is the nodes' default route: no node or endpoint may take its address. Give this one a free address of the private network".to_owned(),
        (_, Owner::Endpoint(c)) | (Owner::Endpoint(c), _) => format!(
            "cluster `{c}`'s endpoint is the shared address its control plane holds (R18), never a node's own address (except the one node of a one-node control plane on bare metal). Give the node another address, or the endpoint a free one"
        ),
        (Owner::Node(_), Owner::Node(_)) => {
            "two machines with one address both become unreachable in turn; give each node its own address".to_owned()
        }
    };
    Diagnostic::new(&codes::DUPLICATE_ADDRESS, format!("{subject} is {}", first_owner.is()))
        .at(at)
        .label("used again here")
        .related(first_at, first_owner.is())
        .help(help)
}
