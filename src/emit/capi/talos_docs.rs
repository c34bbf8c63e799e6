//! The Talos documents a managed cluster's machines get, as strategic merge patches.
//!
//! The talos family renders the documents of every cluster (`src/emit/talos/`);
//! [`role_documents`] takes a pool's share of them, and [`disposition`] says what becomes of
//! each document under Cluster API: a strategic patch, or nothing because Cluster API and
//! CAPMOX provide it otherwise.

use crate::emit::talos::{self, document::Document};
use crate::emit::yaml;
use crate::model::{Cluster, Environment, Fleet, Pool};

/// One Talos config document, rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchDocument {
    /// `v1alpha1` for the machine config, else the document's `kind`.
    pub kind: String,
    /// The document's `name`, for named documents (`EPHEMERAL` for a VolumeConfig).
    pub name: Option<String>,
    /// The YAML text (one document, no `---`).
    pub yaml: String,
}

/// What becomes of a Talos document on a Cluster API managed machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Passed to CABPT as a strategic patch, which CABPT accepts for the v1alpha1 document.
    Patch,
    /// Passed as a strategic patch although CABPT may refuse a document of this kind
    /// (`fleet::capi::multidoc-patch` warns).
    UnsettledPatch,
    /// Left out: Cluster API or CAPMOX provides it, for the reason given.
    Dropped(&'static str),
}

/// The fate of a document of `kind` (and `name`) on a managed machine (docs/capi.md, "Talos
/// documents").
pub fn disposition(kind: &str, name: Option<&str>) -> Disposition {
    match (kind, name) {
        ("v1alpha1", _) => Disposition::Patch,
        ("VolumeConfig", Some("EPHEMERAL")) => Disposition::Dropped(
            "CAPMOX machines have one disk: EPHEMERAL stays on the boot volume, which is sized for it",
        ),
        // An encrypted volume's `encryption` alone ([`role_documents`] strips EPHEMERAL's
        // provisioning): the bootstrap provider's Talos library has the VolumeConfig kind with
        // `encryption` (CABPT v0.6.11 and v0.6.12 `go.mod`: siderolabs/talos/pkg/machinery
        // v1.12.0 and v1.13.0, `config/types/block/encryption.go`); `oracles/talos` merges
        // them as CABPT does (golden/disk-capi-secureboot).
        ("VolumeConfig", Some("STATE" | "EPHEMERAL-encrypted")) => Disposition::Patch,
        ("HostnameConfig", _) => {
            Disposition::Dropped("the hostname is the Machine's name, from CAPMOX's nocloud metadata")
        }
        ("LinkConfig" | "ResolverConfig", _) => Disposition::Dropped(
            "addresses, routes and DNS servers come from CAPMOX's nocloud network config (the IP pool)",
        ),
        // The link's name and the API's shared address on it, as on every Proxmox node: CABPT
        // merges each strategic patch with `configpatcher.LoadPatch`, which reads a
        // multi-document patch (siderolabs/cluster-api-bootstrap-provider-talos v0.6.11
        // `controllers/talosconfig_controller.go` l.333-347), and both kinds are in the Talos
        // 1.12 library it is built with (`pkg/machinery/config/types/network/link_alias.go`,
        // `layer2_vip.go`). The v1alpha1 `machine.network.interfaces[].vip` they replace is
        // deprecated (talos v1.13.9 `v1alpha1_types.go` l.803-806).
        ("LinkAliasConfig" | "Layer2VIPConfig", _) => Disposition::Patch,
        _ => Disposition::UnsettledPatch,
    }
}

/// The documents of `pool`'s machines in a managed `cluster`, before [`disposition`]: the
/// cluster's common documents, then its pool's, as the talos family renders them
/// ([`crate::emit::talos::cluster_documents`]).
pub fn role_documents(
    fleet: &Fleet,
    env: &Environment,
    cluster: &Cluster,
    pool: &Pool,
) -> Result<Vec<PatchDocument>, String> {
    let docs = talos::cluster_documents(fleet, env, cluster).map_err(|e| e.0)?;
    let pool_docs = docs.pool(pool).ok_or_else(|| format!("no Talos documents for pool `{}`", pool.name))?;
    docs.common.docs.iter().chain(pool_docs.docs.iter()).map(managed).map(|d| render(&d)).collect()
}

/// A document as a CAPMOX machine takes it: an encrypted EPHEMERAL keeps its `encryption` and
/// loses its provisioning (the machine has one disk, the boot volume, where EPHEMERAL stays).
fn managed(doc: &Document) -> Document {
    match doc {
        Document::Volume(v) if v.name == "EPHEMERAL" && v.encryption.is_some() => {
            Document::Volume(talos::document::VolumeConfig { provisioning: None, ..v.clone() })
        }
        d => d.clone(),
    }
}

/// The user's patches of `pool`, in apply order, as the bytes of their files in out/
/// (`talos/<env>/<cluster>/patches/…`): each becomes one CABPT strategic patch, applied
/// after fleetc's own with Talos's `configpatcher.LoadPatch` (CABPT v0.6.11
/// `controllers/talosconfig_controller.go`).
pub fn user_patches(fleet: &Fleet, env: &Environment, cluster: &Cluster, pool: &Pool) -> Result<Vec<String>, String> {
    let docs = talos::cluster_documents(fleet, env, cluster).map_err(|e| e.0)?;
    Ok(docs.pool_patches(pool).iter().map(|d| d.text.clone()).collect())
}

fn render(doc: &Document) -> Result<PatchDocument, String> {
    let mut name =
        serde_json::to_value(doc).map_err(|e| e.to_string())?.get("name").and_then(|n| n.as_str().map(str::to_owned));
    // The disposition tells an encrypted EPHEMERAL (a patch) from a provisioned one (dropped).
    if let Document::Volume(v) = doc
        && v.name == "EPHEMERAL"
        && v.provisioning.is_none()
    {
        name = Some("EPHEMERAL-encrypted".to_owned());
    }
    Ok(PatchDocument { kind: doc.kind().to_owned(), name, yaml: yaml::to_yaml(doc).map_err(|e| e.to_string())? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispositions() {
        assert_eq!(disposition("v1alpha1", None), Disposition::Patch);
        assert!(matches!(disposition("VolumeConfig", Some("EPHEMERAL")), Disposition::Dropped(_)));
        assert_eq!(disposition("Layer2VIPConfig", Some("10.0.0.1")), Disposition::Patch);
        assert_eq!(disposition("LinkAliasConfig", Some("net0")), Disposition::Patch);
        assert!(matches!(disposition("ResolverConfig", None), Disposition::Dropped(_)));
        assert_eq!(disposition("VolumeConfig", Some("STATE")), Disposition::Patch);
        assert_eq!(disposition("VolumeConfig", Some("EPHEMERAL-encrypted")), Disposition::Patch);
        assert_eq!(disposition("VolumeConfig", Some("data")), Disposition::UnsettledPatch);
        assert_eq!(disposition("KubeSpanConfig", None), Disposition::UnsettledPatch);
    }
}
