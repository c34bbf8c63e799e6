//! A management cluster's provider set, as three directories applied one after the other
//! (`kubectl apply --server-side -f`, or Argo CD sync waves):
//!
//! - `providers/00-crds/`: the CustomResourceDefinitions of the vendored cert-manager and
//!   Cluster API Operator manifests;
//! - `providers/10-controllers/`: the rest of those manifests (cert-manager first);
//! - `providers/20-providers/`: the provider namespaces and the operator's CoreProvider,
//!   BootstrapProvider, ControlPlaneProvider, InfrastructureProvider and IPAMProvider.
//!
//! Vendored manifests are split at their document boundaries and every document is copied
//! byte for byte: fleetc never re-renders what helm rendered (R24), it only sorts documents.

use serde::Deserialize;

use super::objects::{
    EnvVar, FetchConfig, Metadata, NoSpec, OPERATOR_API, Object, ProviderContainer, ProviderDeployment, ProviderSpec,
    SecretReference,
};
use super::{file, yaml_doc};
use crate::artifacts::set::ArtifactSet;
use crate::emit::{EmitError, HEADER};
use crate::model::{ClusterApi, Vendored, Version};

/// The Secret that holds CAPMOX's credentials (`PROXMOX_URL`, `PROXMOX_TOKEN`,
/// `PROXMOX_SECRET`), created from a sealed input at apply time (F11).
pub const CAPMOX_SECRET: &str = "capmox-variables";
pub const CAPMOX_NAMESPACE: &str = "capmox-system";

/// One provider the operator installs.
pub struct Provider {
    pub kind: &'static str,
    pub name: &'static str,
    pub namespace: &'static str,
    /// The provider's GitHub repository, `https://github.com/<owner>/<repo>`.
    pub repo: &'static str,
    /// The release asset that holds its components, as clusterctl's predefined provider list
    /// names it (kubernetes-sigs/cluster-api v1.11.1
    /// `cmd/clusterctl/client/config/providers_client.go`, `defaults`).
    pub asset: &'static str,
}

impl Provider {
    /// The operator's `fetchConfig.url`: the components asset of the pinned release,
    /// `https://github.com/<owner>/<repo>/releases/<tag>/<asset>`. clusterctl's GitHub
    /// repository refuses anything shorter (`repository_github.go`: "a GitHub repository url
    /// should be in the form https://github.com/{owner}/{Repository}/releases/{latest|version-tag}/{componentsClient.yaml}").
    pub fn fetch_url(&self, version: Version) -> String {
        format!("{}/releases/{}/{}", self.repo, version.v(), self.asset)
    }
}

/// The five providers, in installation order.
pub const PROVIDERS: [Provider; 5] = [
    Provider {
        kind: "CoreProvider",
        name: "cluster-api",
        namespace: "capi-system",
        repo: "https://github.com/kubernetes-sigs/cluster-api",
        asset: "core-components.yaml",
    },
    Provider {
        kind: "BootstrapProvider",
        name: "talos",
        namespace: "cabpt-system",
        repo: "https://github.com/siderolabs/cluster-api-bootstrap-provider-talos",
        asset: "bootstrap-components.yaml",
    },
    Provider {
        kind: "ControlPlaneProvider",
        name: "talos",
        namespace: "cacppt-system",
        repo: "https://github.com/siderolabs/cluster-api-control-plane-provider-talos",
        asset: "control-plane-components.yaml",
    },
    Provider {
        kind: "InfrastructureProvider",
        name: "proxmox",
        namespace: CAPMOX_NAMESPACE,
        repo: "https://github.com/ionos-cloud/cluster-api-provider-proxmox",
        asset: "infrastructure-components.yaml",
    },
    Provider {
        kind: "IPAMProvider",
        name: "in-cluster",
        namespace: "capi-ipam-in-cluster-system",
        repo: "https://github.com/kubernetes-sigs/cluster-api-ipam-provider-in-cluster",
        asset: "ipam-components.yaml",
    },
];

fn version_of(capi: &ClusterApi, kind: &str) -> Version {
    match kind {
        "CoreProvider" => capi.core.value,
        "BootstrapProvider" => capi.bootstrap_talos.value,
        "ControlPlaneProvider" => capi.control_plane_talos.value,
        "InfrastructureProvider" => capi.infrastructure_proxmox.value,
        _ => capi.ipam_in_cluster.value,
    }
}

/// CAPMOX's TLS verification of the Proxmox API: its manager reads `--proxmox-insecure` from
/// `PROXMOX_INSECURE` and skips verification unless that is `false`
/// (ionos-cloud/cluster-api-provider-proxmox v0.9.0 `cmd/main.go` l.263-265; the container is
/// `manager`, `config/manager/manager.yaml`). fleetc sets it from the environment's Proxmox
/// `insecure`, the value the OpenTofu provider gets, so both verify the same certificate or
/// neither does (controllers-3 D6).
pub const CAPMOX_CONTAINER: &str = "manager";
pub const CAPMOX_INSECURE_ENV: &str = "PROXMOX_INSECURE";

pub(super) fn emit(mgmt: &str, capi: &ClusterApi, insecure: bool, out: &mut ArtifactSet) -> Result<(), EmitError> {
    let base = crate::layout::paths::capi_providers_dir(mgmt);
    let vendored = [("00-cert-manager", &capi.cert_manager), ("10-capi-operator", &capi.operator_manifest)];
    for (name, v) in vendored {
        let Some(v) = v else { continue };
        let (crds, rest) = split_crds(&v.content)?;
        for (dir, docs) in [("00-crds", crds), ("10-controllers", rest)] {
            if !docs.is_empty() {
                out.insert(format!("{base}/{dir}/{name}.yaml"), vendored_file(v, &docs))?;
            }
        }
    }
    let mut docs = Vec::new();
    for p in &PROVIDERS {
        let ns: Object<NoSpec> = Object {
            api_version: "v1",
            kind: "Namespace",
            metadata: Metadata::cluster_scoped(p.namespace),
            spec: None,
        };
        docs.push(yaml_doc(&ns)?);
    }
    for p in &PROVIDERS {
        let spec = ProviderSpec {
            version: version_of(capi, p.kind).v(),
            fetch_config: FetchConfig { url: p.fetch_url(version_of(capi, p.kind)) },
            config_secret: (p.kind == "InfrastructureProvider")
                .then(|| SecretReference { name: CAPMOX_SECRET.into(), namespace: CAPMOX_NAMESPACE.into() }),
            deployment: (p.kind == "InfrastructureProvider").then(|| ProviderDeployment {
                containers: vec![ProviderContainer {
                    name: CAPMOX_CONTAINER,
                    env: vec![EnvVar { name: CAPMOX_INSECURE_ENV, value: insecure.to_string() }],
                }],
            }),
        };
        docs.push(yaml_doc(&Object::new(OPERATOR_API, p.kind, Metadata::named(p.name, p.namespace), spec))?);
    }
    out.insert(format!("{base}/20-providers/providers.yaml"), file(&docs))?;
    Ok(())
}

/// A vendored manifest's documents, re-joined: the header, the source and its pin as
/// comments, then each document's bytes unchanged.
fn vendored_file(v: &Vendored, docs: &[&str]) -> String {
    let mut s = format!("# {HEADER}\n# Documents of {} (sha256 {}), copied unchanged.\n", v.path.value, v.sha256.value);
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            s.push_str("---\n");
        }
        s.push_str(d);
        if !d.ends_with('\n') {
            s.push('\n');
        }
    }
    s
}

#[derive(Deserialize)]
struct Head {
    kind: Option<String>,
}

/// Splits a multi-document YAML stream at its `---` lines into the documents that are
/// CustomResourceDefinitions and the others, each document's text unchanged. Pieces that
/// hold no document (comments only) are dropped.
pub fn split_crds(text: &str) -> Result<(Vec<&str>, Vec<&str>), EmitError> {
    let (mut crds, mut rest) = (Vec::new(), Vec::new());
    for piece in documents(text) {
        let head: Option<Head> = serde_saphyr::from_str(piece)
            .map_err(|e| EmitError(format!("a vendored manifest does not parse as YAML: {e}")))?;
        match head {
            None => {}
            Some(h) if h.kind.as_deref() == Some("CustomResourceDefinition") => crds.push(piece),
            Some(h) if h.kind.is_none() && is_blank(piece) => {}
            Some(_) => rest.push(piece),
        }
    }
    Ok((crds, rest))
}

fn is_blank(piece: &str) -> bool {
    piece.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
}

/// The pieces of a YAML stream between document markers (`---` at the start of a line,
/// alone or followed by a space or a comment), marker lines excluded.
pub fn documents(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare.starts_with("--- ") || bare.starts_with("---\t") {
            pieces.push(&text[start..pos]);
            start = pos + line.len();
        }
        pos += line.len();
    }
    pieces.push(&text[start..]);
    pieces.into_iter().filter(|p| !is_blank(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_every_document_byte_for_byte() {
        let text = "# head\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: b\n--- # c\n# only a comment\n---\nkind: ConfigMap\n";
        let (crds, rest) = split_crds(text).unwrap();
        assert_eq!(
            crds,
            vec!["apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: b\n"]
        );
        assert_eq!(rest, vec!["# head\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n", "kind: ConfigMap\n"]);
    }
}
