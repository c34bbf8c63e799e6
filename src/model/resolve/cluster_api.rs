//! `cluster-api { core … bootstrap-talos … operator … cert-manager … }`: the pinned versions of
//! the Cluster API providers a cluster's management runs, and the vendored manifests of the
//! operator and cert-manager (docs/capi.md), into a [`ClusterApi`].

use std::collections::BTreeMap;

use super::Resolver;
use super::reader::{Reader, missing, unknown_child};
use crate::model::{ClusterApi, Spanned, Version};
use crate::syntax::Node;

impl Resolver<'_> {
    pub(super) fn cluster_api(&mut self, node: &Node) -> Option<ClusterApi> {
        let d = &mut *self.diags;
        let r = Reader::new(node, &[], d);
        r.finish(true, d);
        let mut versions: BTreeMap<&str, Spanned<Version>> = BTreeMap::new();
        let mut cert_manager = None;
        let mut cert_manager_version = None;
        let mut operator_manifest = None;
        const PROVIDERS: &[&str] = &[
            "core",
            "bootstrap-talos",
            "control-plane-talos",
            "infrastructure-proxmox",
            "ipam-in-cluster",
            "operator",
            "cert-manager",
        ];
        for child in node.children() {
            let key = child.name.value.as_str();
            match key {
                "cert-manager" | "operator" => {
                    let props: &'static [&'static str] = &["version", "manifest", "sha256"];
                    let r = Reader::new(child, props, self.diags);
                    let version = r.require_parsed::<Version>("version", self.diags);
                    let vendored = self.vendored(&r);
                    r.finish(false, self.diags);
                    if key == "operator" {
                        if let Some(v) = version {
                            versions.insert("operator", v);
                        }
                        operator_manifest = vendored;
                    } else {
                        cert_manager = vendored;
                        cert_manager_version = version;
                    }
                }
                k if PROVIDERS.contains(&k) => {
                    let mut r = Reader::new(child, &[], self.diags);
                    if let Some(v) = r.arg_parsed::<Version>(self.diags, "a version") {
                        versions.insert(PROVIDERS.iter().find(|p| **p == k).copied().unwrap_or("core"), v);
                    }
                    r.finish(false, self.diags);
                }
                _ => unknown_child(child, "cluster-api", PROVIDERS, self.diags),
            }
        }
        let mut take = |k: &str| {
            let v = versions.remove(k);
            if v.is_none() {
                self.diags.push(missing(node, &format!("a pinned `{k}` version")));
            }
            v
        };
        let core = take("core");
        let bootstrap_talos = take("bootstrap-talos");
        let control_plane_talos = take("control-plane-talos");
        let infrastructure_proxmox = take("infrastructure-proxmox");
        let ipam_in_cluster = take("ipam-in-cluster");
        let operator = take("operator");
        Some(ClusterApi {
            core: core?,
            bootstrap_talos: bootstrap_talos?,
            control_plane_talos: control_plane_talos?,
            infrastructure_proxmox: infrastructure_proxmox?,
            ipam_in_cluster: ipam_in_cluster?,
            operator: operator?,
            cert_manager,
            cert_manager_version,
            operator_manifest,
            span: node.head_span(),
        })
    }
}
