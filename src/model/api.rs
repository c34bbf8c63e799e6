//! The operator's path to a cluster's Kubernetes API: a resolved value of the model, not a
//! choice of one family. The OpenTofu emitter writes it (the cloud root's `clusters` output
//! carries it as `kubernetes_api`, the cluster root's kubeconfig points at it, C6), and
//! `fleetc apply` reads it (what `--plan` shows before the root is read; `kubectl --server`).

use super::{Cluster, Environment, Provider};

/// The Kubernetes API port, on the load balancer and on the control-plane nodes; on Scaleway
/// also the first gateway port of the operator's path to it ([`Environment::kubernetes_api_port`]).
pub const KUBERNETES_API_PORT: u32 = DEFAULT_API_PORT as u32;

/// The port the API server listens on when the config does not say (`endpoint` without
/// `port=`): Talos's `constants.DefaultControlPlanePort`, the value
/// `ClusterConfig.LocalAPIServerPort()` gives for an absent `cluster.controlPlane.
/// localAPIServerPort` (siderolabs/talos v1.13.9 `pkg/machinery/config/types/v1alpha1/
/// v1alpha1_clusterconfig.go` l.129-136).
pub const DEFAULT_API_PORT: u16 = 6443;

impl Environment {
    /// Whether this environment's cluster root holds the cluster's machine secrets
    /// (`talos_machine_secrets`, R14): a cluster OpenTofu builds on Scaleway or Proxmox. A
    /// cluster managed by Cluster API keeps them in its management cluster; bare metal has no
    /// OpenTofu root.
    pub fn secrets_in_cluster_root(&self, cluster: &Cluster) -> bool {
        !cluster.is_managed() && matches!(self.provider, Provider::Scaleway(_) | Provider::Proxmox(_))
    }

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
                Some(format!("{}:{}", cluster.endpoint.host(), cluster.endpoint.port))
            }
        }
    }
}
