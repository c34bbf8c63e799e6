//! The `fleet::network` codes: addresses and networks that contradict each other (outside their
//! network, used twice, overlapping, the router's own). Checked in `src/check/network.rs`, and
//! addresses used twice by nodes also in `src/check/nodes.rs`.

codes! {
    ADDRESS_OUTSIDE_NETWORK = "fleet::network::address-outside-network", Error, Some("R18"),
    Some("nodes live on the environment's private network; the kubelet registers only addresses of that network (R18)"),
"## What it does
Reports a static address (node, endpoint, IP pool) outside the environment's private network.

## Why (R18)
Nodes have no public address (R12) and the kubelet's node IP is restricted to the private
subnet (R18): an address outside it could never be a node's.

## Example
    network \"10.10.0.0/22\"
    …
    address \"10.20.0.5\"

## Instead
Use an address inside the network, here 10.10.0.1–10.10.3.254.
";

    DUPLICATE_ADDRESS = "fleet::network::duplicate-address", Error, None,
    Some("two machines with one address both become unreachable in turn; give each node its own address"),
"## What it does
Reports a static address used twice in one environment (two nodes, or a node and an API
endpoint).

## Why
Two machines answering for one address make both unreachable in turn, and the cluster
flaps in ways that are hard to diagnose.

## Example
    address \"10.10.0.11\"
    address \"10.10.0.11\"

## Instead
Give every node and endpoint its own address.
";

    IP_POOL_TOO_SMALL = "fleet::network::ip-pool-too-small", Error, Some("R26"),
    Some("a rollout creates each pool's new machine before it removes an old one, and a Kubernetes upgrade rolls every pool at once (R26): the IP pool needs one spare address per pool"),
"## What it does
Reports a managed cluster's `ip-pool` with fewer addresses than its nodes plus one per pool
(the control plane counts as a pool).

## Why (R26)
Cluster API rolls a change out by creating a new machine before it deletes an old one: the
control plane and every MachineDeployment fleetc writes have `maxSurge: 1` and
`maxUnavailable: 0`, and a Kubernetes upgrade rolls all of them at once. Each new machine takes
an address from the pool (Cluster API's in-cluster IPAM); when none is left it waits for one
forever (CAPMOX `WaitingForStaticIPAllocation`), nothing old is removed, and the rollout never
ends.

## Example
    control-plane count=3
    pool \"workers\" count=3
    ip-pool \"192.168.50.100-192.168.50.105\"

## Instead
    ip-pool \"192.168.50.100-192.168.50.107\"   // 6 nodes + 2 pools
";

    ENDPOINT_NAME_NOT_METAL = "fleet::network::endpoint-name-not-metal", Error, Some("R12"),
    Some("on a cloud or Proxmox fleetc makes the endpoint itself (a private load balancer, R12; a shared address) and writes its address into every node"),
"## What it does
Reports `endpoint name=…` in a cluster that is not on bare metal.

## Why (R12)
An endpoint by name is one the user runs outside the fleet: DNS round robin over the
control-plane nodes, or a load balancer fleetc does not make, in front of machines that exist.
On Scaleway the API sits behind the private load balancer fleetc makes (R12), and on Proxmox
behind the shared address the control plane holds; both are addresses, written into every
node's configuration and certificates, which a name cannot stand for.

## Example
    environment \"prod\" {
        provider \"scaleway\" { … }
        cluster \"main\" {
            endpoint name=\"k8s.example.com\"

## Instead
    endpoint address=\"10.10.0.10\"
";

    CIDR_OVERLAP = "fleet::network::cidr-overlap", Error, None,
    Some("pod and service addresses are routed inside the cluster; overlapping the nodes' network makes some nodes unreachable from pods"),
"## What it does
Reports a pod or service CIDR that overlaps the private network (or each other).

## Why
Inside the cluster, the CNI routes pod and service ranges itself. If they overlap the nodes'
network, traffic to some nodes is routed into the cluster instead and never arrives.

## Example
    network \"10.96.0.0/22\"
    service-cidr \"10.96.0.0/12\"

## Instead
    service-cidr \"10.112.0.0/12\"
";

    ROUTER_AS_TALOS_ADDRESS = "fleet::network::router-as-talos-address", Error, Some("R16"), None,
"## What it does
On Proxmox, reports an environment whose `gateway` (the public address through which the
Talos API is reached, put into every node's certificate SANs) is the LAN router given by the
`proxmox` block's `router=`.

## Why (R16)
The two are different things: the router is the nodes' default route; `gateway` is the address
talosctl dials from outside. With the router there, every node certificate names the router, and
nothing reaches the Talos API through it. On a flat LAN, talosctl dials the nodes directly: leave
`gateway` out.

## Example
    proxmox endpoint=\"https://pve:8006\" node=\"pve\" router=\"192.168.1.1\"
    gateway \"192.168.1.1\"

## Instead
    proxmox endpoint=\"https://pve:8006\" node=\"pve\" router=\"192.168.1.1\"
";
}
