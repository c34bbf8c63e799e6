//! The `fleet::tofu` codes: what the emitted OpenTofu needs and the fleet does not say (state,
//! gateways, admin ranges, addresses). Checked in `src/check/tofu.rs`.

codes! {
    TOFU_SHARED_STATE = "fleet::tofu::shared-state", Warning, Some("R1"), None,
"## What it does
Warns when an environment's OpenTofu roots build two or more clusters: their machines live in
one cloud-root state and their Talos configs in one cluster-root state.

## Why (R1)
A state is the unit OpenTofu plans and locks: with two clusters in it, every plan of one is a
plan of the other, an apply meant for one can change the other, and a lock held for one blocks
both. An environment is a directory of roots with its own state keys (R1), so one cluster per
environment gives each cluster its own plan.

## Example
    environment \"lab\" {
        cluster \"mgmt\" { … }
        cluster \"tools\" { … }
    }

## Instead
    environment \"lab\" {
        cluster \"mgmt\" { … }
    }
    environment \"lab-tools\" from=\"lab\" {
        network \"192.168.60.0/24\"
        cluster \"tools\" { … }
    }
and move the existing resources: in `tofu/lab/cloud` and `tofu/lab/cluster`,
`tofu state pull > old.tfstate`, `tofu state mv -state=old.tfstate -state-out=new.tfstate
module.tools module.tools`, then `tofu state push` each into its root (the new environment's
roots read `lab-tools/cloud.tfstate` and `lab-tools/cluster.tfstate`).
";

    TOFU_NO_GATEWAY = "fleet::tofu::missing-gateway", Error, Some("R16"),
    Some("the Talos API switch opens on the public gateway's reserved address, and every node's certificate SANs must carry it before the first apply (R13, R16)"),
"## What it does
Reports a Scaleway environment without a `gateway` address.

## Why (R13, R16)
Nodes have no public address (R12); the Talos API is reached through port-translation rules on
the public gateway, opened only while they are used (R13). The gateway's address must be in
every node's certificate SANs: when it is forgotten, the first apply passes (a maintenance-mode
node verifies nothing) and the refusal comes later, from a machine that can no longer be
reached (R16). So the address is reserved first, written in fleet.kdl, and imported by the
cloud root.

## Example
    environment \"staging\" {
        scaleway project=\"…\" region=\"fr-par\" zone=\"fr-par-2\" { … }
        network \"10.10.0.0/22\"

## Instead
    environment \"staging\" {
        network \"10.10.0.0/22\"
        gateway \"51.15.200.10\"   // the reserved public gateway IP
";

    TOFU_NO_ADMIN_RANGES = "fleet::tofu::missing-admin-ranges", Error, Some("R13"),
    Some("a node in maintenance mode presents no certificate and accepts a config from anyone: the switch to its Talos API must say who may use it (R13)"),
"## What it does
Reports a Scaleway environment without `admin-ranges`.

## Why (R13)
The Talos API switch and the operator's path to the Kubernetes API open on the public
gateway. A new or wiped node in maintenance mode accepts a configuration from anyone, so the
door is off at rest and, when open, meant for the administrators' source ranges only; the
Kubernetes API load balancer admits those ranges and the private network, nothing else.

## Example
    environment \"staging\" {
        gateway \"51.15.200.10\"

## Instead
    environment \"staging\" {
        gateway \"51.15.200.10\"
        admin-ranges \"203.0.113.0/24\"
";

    TOFU_NO_ADDRESS = "fleet::tofu::missing-address", Error, Some("R27"),
    Some("a Proxmox VM takes its static address from the NoCloud `initialization` block and its Talos API is reached there; moving a cluster between providers changes the provider block and the addresses (R27)"),
"## What it does
Reports a node of a Proxmox cluster built by OpenTofu that has no static address: a pool
that gives none, or one whose `count` is more than the nodes it names with an `address` and
the `addresses` it lists (`count=4` with three named nodes: the fourth VM has none).

## Why
On Proxmox the VMs take their address from the NoCloud `initialization` block, and the cluster
root reaches each node's Talos API at that address. Without one there is nothing to write
and nothing to reach. (Clusters managed by Cluster API take theirs from `ip-pool` instead.)
Moving a cluster between providers changes the provider block and the addresses only (R27).

## Example
    control-plane count=3 size=\"small\"

## Instead
    control-plane count=3 size=\"small\" {
        addresses \"10.10.0.11\" \"10.10.0.12\" \"10.10.0.13\"
    }
or, for a pool of named nodes, one `node` with its `address` per machine (or no `count`:
the pool has as many machines as it names).
";

    TOFU_ENDPOINT_PORT = "fleet::tofu::endpoint-port", Error, Some("R12"),
    Some("the Scaleway API load balancer listens on 6443 and forwards to 6443 on the control-plane nodes; remove `port=` or write `port=6443`"),
"## What it does
Reports a cluster on Scaleway whose `endpoint` names a port other than 6443.

## Why (R12)
On Scaleway the Kubernetes API sits behind the private load balancer the cloud root builds:
its frontend listens on 6443 and its backend forwards to 6443 on the control-plane nodes, and
the public gateway's operator rule forwards to it on 6443. Every node and kubeconfig would name
`https://<address>:<port>`, which nothing listens on. On Proxmox and bare metal, and for
clusters managed by Cluster API, the port is the API server's own (`cluster.controlPlane.
localAPIServerPort`), so any port works there.

## Example
    endpoint address=\"172.16.0.10\" port=7443

## Instead
    endpoint address=\"172.16.0.10\"
";
}
