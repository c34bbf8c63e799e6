//! Cluster API: what a management cluster runs and the workload clusters it manages (R24–R27).
//!
//! For every management cluster (a cluster with `cluster-api { … }`), `capi/<mgmt>/`:
//! - `providers/{00-crds,10-controllers,20-providers}/`: the provider set, applied in that
//!   order ([`providers`]);
//! - `<cluster>/`: the objects of each cluster it manages ([`workload`]);
//! - `sealed.yaml`: the Secrets the apply step creates from sealed inputs before anything is
//!   applied; their values are never in out/ (R14, F11, F13).
//!
//! The shapes are those of the pinned provider versions `check` accepts
//! (`fleet::capi::provider-unsupported`): Cluster API core ≥ 1.11 (`v1beta2`), CACPPT 0.5
//! (`v1alpha3` with `infrastructureTemplate`), CABPT 0.6 and CAPMOX 0.9 (`v1alpha2`).
//! docs/capi.md describes the objects, their names and how a change rolls.
//!
//! One warning is this family's own, [`warnings`] (`fleet::capi::multidoc-patch`): which
//! Talos documents a managed machine gets as strategic patches is known only once the talos
//! family has rendered them, and `check` never runs an emitter. Computing it from the model
//! and the versions table's kinds would not be exact (the table lists every kind of a model,
//! not which ones a managed pool receives), so `emit::all` returns it with the artifact set
//! and the compile merges it. It is therefore said only of a fleet without errors (emit runs
//! only then), where `check` used to say it of any fleet; no document fleetc writes today is
//! such a patch, so no output has changed.

pub mod objects;
pub mod providers;
mod talos_docs;
mod workload;

use serde::Serialize;

use super::{EmitError, EmitResult, HEADER, yaml};
use crate::artifacts::set::ArtifactSet;
use crate::diag::{Diagnostic, codes};
use crate::layout::names::{PROXMOX_API_INPUT, TALOS_SECRETS_INPUT};
use crate::model::Fleet;

pub use talos_docs::{Disposition, PatchDocument, disposition};
pub use workload::max_unhealthy;

pub fn emit(fleet: &Fleet) -> EmitResult {
    let mut out = ArtifactSet::new();
    for (env, mgmt) in fleet.clusters() {
        let Some(capi) = &mgmt.cluster_api else { continue };
        let insecure = matches!(&env.provider, crate::model::Provider::Proxmox(p) if p.insecure);
        providers::emit(&mgmt.name.value, capi, insecure, &mut out)?;
        let mut sealed = vec![SealedSecret {
            name: providers::CAPMOX_SECRET.into(),
            namespace: providers::CAPMOX_NAMESPACE.into(),
            cluster: mgmt.name.value.clone(),
            sealed_input: PROXMOX_API_INPUT.into(),
            keys: vec!["PROXMOX_URL", "PROXMOX_TOKEN", "PROXMOX_SECRET"],
            labels: Default::default(),
            used_by: "the InfrastructureProvider `proxmox` (spec.configSecret): CAPMOX's Proxmox API credentials",
        }];
        for cluster in env.clusters.iter().filter(|c| c.managed_by.as_ref().is_some_and(|m| m.value == mgmt.name.value))
        {
            workload::emit(fleet, env, mgmt, cluster, &mut out)?;
            sealed.push(SealedSecret {
                name: format!("{}-talos", cluster.name),
                namespace: cluster.name.value.clone(),
                cluster: cluster.name.value.clone(),
                sealed_input: TALOS_SECRETS_INPUT.into(),
                keys: vec!["bundle"],
                labels: [(objects::CLUSTER_NAME_LABEL.to_owned(), cluster.name.value.clone())].into(),
                used_by: "CABPT (siderolabs/cluster-api-bootstrap-provider-talos v0.6.11 `controllers/secrets.go` l.47): the cluster's Talos secrets bundle, used instead of a generated one; CACPPT reads only the `<cluster>-talosconfig` and `<cluster>-ca` CABPT derives from it",
            });
        }
        let text = format!(
            "# {HEADER}\n# Secrets to create on `{}` from sealed inputs, in this order: each Secret's namespace\n# first (`kubectl create namespace`, when it does not exist yet), then the Secret, then what reads it:\n# the provider set (capi/{}/providers/) and each cluster's objects (capi/{}/<cluster>/). CABPT generates a\n# new identity when `<cluster>-talos` is missing at its first reconcile (F13).\n{}",
            mgmt.name,
            mgmt.name,
            mgmt.name,
            yaml::to_yaml(&SealedSet { secrets: sealed }).map_err(|e| EmitError(e.to_string()))?
        );
        out.insert(format!("{}/sealed.yaml", crate::layout::paths::capi_dir(&mgmt.name.value)), text)?;
    }
    Ok(out)
}

/// `fleet::capi::multidoc-patch` for every managed cluster whose machines get a Talos document
/// as a strategic patch that CABPT may refuse ([`Disposition::UnsettledPatch`]).
pub fn warnings(fleet: &Fleet) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for env in &fleet.environments {
        for cluster in &env.clusters {
            let Some(mgmt) = &cluster.managed_by else { continue };
            if env.cluster(&mgmt.value).is_none_or(|m| m.cluster_api.is_none()) {
                continue;
            }
            let unsettled = workload::unsettled_patches(fleet, env, cluster);
            if !unsettled.is_empty() {
                let list: Vec<String> = unsettled.iter().map(|(p, k)| format!("`{k}` ({p})")).collect();
                out.push(
                    Diagnostic::new(
                        &codes::CAPI_MULTIDOC_PATCH,
                        format!("managed cluster `{}` passes {} to the bootstrap provider as strategic patches", cluster.name, list.join(", ")),
                    )
                    .at(cluster.name.span)
                    .label("may be refused by CABPT")
                    .help("whether CABPT accepts a strategic patch that adds a multi-document Talos document is not settled upstream; check a machine's bootstrap on a test cluster (R24, docs/capi.md)"),
                );
            }
        }
    }
    out
}

#[derive(Serialize)]
struct SealedSet {
    secrets: Vec<SealedSecret>,
}

/// A Secret the apply step creates from a sealed input (never written by fleetc).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SealedSecret {
    namespace: String,
    name: String,
    /// The cluster whose sealed input holds the value.
    cluster: String,
    sealed_input: String,
    keys: Vec<&'static str>,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    labels: std::collections::BTreeMap<String, String>,
    used_by: &'static str,
}

/// One object as one YAML document.
fn yaml_doc<T: Serialize>(v: &T) -> Result<String, EmitError> {
    yaml::to_yaml(v).map_err(|e| EmitError(e.to_string()))
}

/// A manifest file: the header comment, then the documents separated by `---`.
fn file(docs: &[String]) -> String {
    let mut s = format!("# {HEADER}\n");
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            s.push_str("---\n");
        }
        s.push_str(d);
    }
    s
}
