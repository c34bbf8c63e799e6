//! The operator's path to a cluster's Kubernetes API: a resolved value of the model, not a
//! choice of one family. The OpenTofu emitter writes it (the cloud root's `clusters` output
//! carries it as `kubernetes_api`, the cluster root's kubeconfig points at it, C6), and
//! `fleetc apply` reads it (what `--plan` shows before the root is read; `kubectl --server`).

use super::{Cluster, Environment, Provider};

/// The Kubernetes API port, on the load balancer and on the control-plane nodes; on Scaleway
/// also the first gateway port of the operator's path to it ([`Environment::kubernetes_api_port`]).
pub const KUBERNETES_API_PORT: u32 = 6443;

impl Environment {
    /// The gateway port of a cluster's Kubernetes API rule on Scaleway: 6443, 6444, … in the
    /// order of the clusters the roots build (clusters managed by Cluster API are not).
    pub fn kubernetes_api_port(&self, cluster: &str) -> u32 {
        let i = self.clusters.iter().filter(|c| !c.is_managed()).position(|c| c.name.value == cluster).unwrap_or(0);
        KUBERNETES_API_PORT + u32::try_from(i).unwrap_or(0)
    }

    /// The operator's path to a cluster's Kubernetes API (`host:port`): on Scaleway the public
    /// gateway's address and the cluster's PAT rule port (the rule exists only while
    /// `kubernetes_api_open`); on Proxmox the endpoint itself. `None` for a cluster the roots
    /// do not build (managed by Cluster API) or a Scaleway environment without a gateway or
    /// state (no OpenTofu root).
    pub fn kubernetes_api(&self, cluster: &Cluster) -> Option<String> {
        if cluster.is_managed() {
            return None;
        }
        match &self.provider {
            Provider::Scaleway(_) => {
                let gateway = self.gateway.as_ref()?;
                self.state.as_ref()?;
                Some(format!("{}:{}", gateway.value, self.kubernetes_api_port(&cluster.name.value)))
            }
            // On Proxmox the operator reaches the endpoint directly; on bare metal `fleetc
            // apply` reaches it on the machines' network.
            Provider::Proxmox(_) | Provider::Metal(_) => {
                Some(format!("{}:{}", cluster.endpoint.address.value, cluster.endpoint.port))
            }
        }
    }
}
