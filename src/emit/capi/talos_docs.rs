//! The Talos documents a managed cluster's machines get, as strategic merge patches.
//!
//! The talos family renders the documents of every cluster (`src/emit/talos/`). Until its
//! function is on main, [`role_documents`] is a local stand-in that renders the parts this
//! family depends on; switching over replaces its body with a call and keeps [`PatchDocument`]
//! as the seam. [`disposition`] then says what becomes of each document under Cluster API:
//! a strategic patch, or nothing because Cluster API and CAPMOX provide it otherwise.

use serde_json::{Map, Value, json};

use crate::emit::yaml;
use crate::model::{Cluster, Environment, Fleet, Pool, Role};

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
        ("HostnameConfig", _) => {
            Disposition::Dropped("the hostname is the Machine's name, from CAPMOX's nocloud metadata")
        }
        ("LinkConfig" | "LinkAliasConfig" | "ResolverConfig", _) => Disposition::Dropped(
            "addresses, routes and DNS servers come from CAPMOX's nocloud network config (the IP pool)",
        ),
        ("Layer2VIPConfig", _) => {
            Disposition::Dropped("the API's shared address is written as a v1alpha1 `vip` patch instead")
        }
        _ => Disposition::UnsettledPatch,
    }
}

/// The documents of `pool`'s machines in a managed `cluster`, before [`disposition`].
pub fn role_documents(
    fleet: &Fleet,
    env: &Environment,
    cluster: &Cluster,
    pool: &Pool,
) -> Result<Vec<PatchDocument>, String> {
    let talos = cluster.talos.value;
    let mut machine = Map::new();
    if let Some(s) = fleet.schematic(&pool.schematic.value) {
        // R17: the installer that carries the schematic's extensions.
        machine.insert("install".into(), json!({ "image": s.installer(env.platform(), talos) }));
    }
    // R18: the kubelet registers its private address only.
    machine.insert("kubelet".into(), json!({ "nodeIP": { "validSubnets": [env.network.value.to_string()] } }));
    if !pool.labels.is_empty() {
        let labels: Map<String, Value> =
            pool.labels.iter().map(|(k, v)| (k.clone(), Value::String(v.value.clone()))).collect();
        machine.insert("nodeLabels".into(), Value::Object(labels));
    }
    if !pool.taints.is_empty() {
        let taints: Map<String, Value> = pool
            .taints
            .iter()
            .map(|t| {
                let v = match &t.value {
                    Some(v) => format!("{v}:{}", t.effect.as_str()),
                    None => t.effect.as_str().to_owned(),
                };
                (t.key.clone(), Value::String(v))
            })
            .collect();
        machine.insert("nodeTaints".into(), Value::Object(taints));
    }
    let mut cluster_doc = Map::new();
    // R21: no announcement to the hosted discovery service.
    cluster_doc.insert("discovery".into(), json!({ "enabled": cluster.discovery.value }));
    if cluster.cni.is_some() {
        cluster_doc.insert("network".into(), json!({ "cni": { "name": "none" } }));
    }
    let v1alpha1 = json!({ "machine": machine, "cluster": cluster_doc });
    let mut docs = vec![render("v1alpha1", None, &v1alpha1)?];
    let ephemeral = json!({
        "apiVersion": "v1alpha1",
        "kind": "VolumeConfig",
        "name": "EPHEMERAL",
        "provisioning": {
            "diskSelector": { "match": format!("!system_disk && disk.size >= {}u", pool.ephemeral_min_size.value.0) }
        }
    });
    docs.push(render("VolumeConfig", Some("EPHEMERAL"), &ephemeral)?);
    if pool.role == Role::ControlPlane {
        let vip = json!({
            "apiVersion": "v1alpha1",
            "kind": "Layer2VIPConfig",
            "name": cluster.endpoint.address.value.to_string(),
            "link": "eth0"
        });
        docs.push(render("Layer2VIPConfig", Some(&cluster.endpoint.address.value.to_string()), &vip)?);
    }
    Ok(docs)
}

fn render(kind: &str, name: Option<&str>, v: &Value) -> Result<PatchDocument, String> {
    Ok(PatchDocument {
        kind: kind.to_owned(),
        name: name.map(str::to_owned),
        yaml: yaml::to_yaml(v).map_err(|e| e.to_string())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispositions() {
        assert_eq!(disposition("v1alpha1", None), Disposition::Patch);
        assert!(matches!(disposition("VolumeConfig", Some("EPHEMERAL")), Disposition::Dropped(_)));
        assert!(matches!(disposition("Layer2VIPConfig", Some("10.0.0.1")), Disposition::Dropped(_)));
        assert!(matches!(disposition("ResolverConfig", None), Disposition::Dropped(_)));
        assert_eq!(disposition("VolumeConfig", Some("data")), Disposition::UnsettledPatch);
        assert_eq!(disposition("KubeSpanConfig", None), Disposition::UnsettledPatch);
    }
}
