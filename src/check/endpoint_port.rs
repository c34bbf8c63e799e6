//! `endpoint port=` means what it says (R12). On Scaleway the cloud root's API load balancer
//! listens on 6443 and forwards to 6443 (`emit::tofu::scaleway`, `scaleway_lb_frontend.api`
//! `inbound_port`, `scaleway_lb_backend.api` `forward_port`, both [`KUBERNETES_API_PORT`]),
//! and the gateway's operator rule forwards to it on 6443: another port is refused. Elsewhere
//! the API server listens on the endpoint's port: `emit::talos` writes it as
//! `cluster.controlPlane.localAPIServerPort` (an owned field a patch may not change).

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Fleet, KUBERNETES_API_PORT, Provider};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for env in &fleet.environments {
        let Provider::Scaleway(_) = env.provider else { continue };
        for c in env.clusters.iter().filter(|c| !c.is_managed()) {
            let e = &c.endpoint;
            if u32::from(e.port) == KUBERNETES_API_PORT {
                continue;
            }
            diags.push(
                Diagnostic::new(
                    &codes::TOFU_ENDPOINT_PORT,
                    format!(
                        "cluster `{}/{}` names its API endpoint on port {}, and on Scaleway the API load balancer listens on {KUBERNETES_API_PORT} only",
                        env.name.value, c.name.value, e.port
                    ),
                )
                .at(e.port_span.unwrap_or(e.span))
                .label(format!("nothing listens on {}", e.port)),
            );
        }
    }
}
