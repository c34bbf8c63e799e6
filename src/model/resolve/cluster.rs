//! `cluster "<name>" { … }`: the settings it overrides, `endpoint` ([`Endpoint`]),
//! `cert-sans`, `single-node`, `vm-template-manual`, `ip-pool`, `sealed`, its pools (the
//! `control-plane` and each `pool`, read in `pool`), `cluster-api` (read in `cluster_api`)
//! and its `app`s, the environment's merged with its own (read in `app`), into a [`Cluster`]
//! whose inherited settings are all resolved to values.

use super::reader::{Reader, missing, unknown_child};
use super::settings::{SETTINGS, Settings};
use super::urls::parse_ip;
use super::{Resolver, duplicates, inherit};
use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{
    ApplyMode, Cluster, DEFAULT_API_PORT, Endpoint, Ipv4Range, PatchLevel, Pool, Role, Spanned, Version,
};
use crate::syntax::Node;
use std::net::Ipv4Addr;

impl Resolver<'_> {
    pub(super) fn cluster(
        &mut self,
        node: &Node,
        env: &str,
        inherited: &Settings,
        env_apps: &[&Node],
    ) -> Option<Cluster> {
        let mut r = Reader::new(node, &["managed-by", "was"], self.diags);
        let name = r.name_arg(self.diags);
        let managed_by = r.prop_str("managed-by", self.diags);
        let former_name = r.prop_str("was", self.diags);
        r.finish(true, self.diags);
        let name = name?;
        let mut s = inherited.clone();
        let mut endpoint = None;
        let mut cert_sans = Vec::new();
        let mut single_node = None;
        let mut vm_template_manual = None;
        let mut cp_node = None;
        let mut pool_nodes = Vec::new();
        let mut apps: Vec<Node> = env_apps.iter().map(|n| (*n).clone()).collect();
        let mut cluster_api = None;
        let mut ip_pool = None;
        let mut sealed = Vec::new();
        let mut endpoint_written = false;
        self.patch_level = PatchLevel::Cluster;
        for child in node.children() {
            // A repeat is reported on the tree (`duplicates`) and not read: the first counts.
            if duplicates::is_repeat(child, node.children()) {
                continue;
            }
            if self.setting(child, &mut s) {
                continue;
            }
            let d = &mut *self.diags;
            match child.name.value.as_str() {
                "endpoint" => {
                    endpoint_written = true;
                    endpoint = api_endpoint(child, d);
                }
                "cert-sans" => {
                    let mut r = Reader::new(child, &[], d);
                    cert_sans = r.rest_str(d, "names or addresses");
                    r.finish(false, d);
                }
                "single-node" => {
                    let mut r = Reader::new(child, &[], d);
                    single_node = r.arg_bool(d);
                    r.finish(false, d);
                }
                "vm-template-manual" => {
                    let mut r = Reader::new(child, &[], d);
                    vm_template_manual = r.arg_bool(d);
                    r.finish(false, d);
                }
                "control-plane" => cp_node = Some(child),
                "pool" => pool_nodes.push(child),
                "app" => {
                    let key = child.args.first().map(|a| a.kind.clone());
                    if let Some(i) = apps.iter().position(|a| a.args.first().map(|x| x.kind.clone()) == key) {
                        apps[i] = inherit::merge_node(&apps[i], child);
                    } else {
                        apps.push(child.clone());
                    }
                }
                "cluster-api" => cluster_api = self.cluster_api(child),
                "ip-pool" => {
                    let mut r = Reader::new(child, &[], d);
                    ip_pool = r.arg_parsed::<Ipv4Range>(d, "an address range (first-last)");
                    r.finish(false, d);
                }
                "sealed" => {
                    let mut r = Reader::new(child, &[], d);
                    sealed.extend(r.rest_str(d, "sealed input names"));
                    r.finish(false, d);
                }
                _ => unknown_child(child, "cluster", &[SETTINGS, CLUSTER_CHILDREN].concat(), self.diags),
            }
        }
        let head = node.head_span();
        let d = &mut *self.diags;
        let talos = required_version(s.talos.clone(), "talos", &s, node, d);
        let kubernetes = required_version(s.kubernetes.clone(), "kubernetes", &s, node, d);
        let endpoint = endpoint.or_else(|| {
            if endpoint_written {
                // Its value was wrong, and said so: that is the one error.
                return None;
            }
            d.push(
                missing(node, "an `endpoint`")
                    .help("where the Kubernetes API is reached: `endpoint address=\"10.10.0.10\"`"),
            );
            None
        });
        let (control_plane, workers) = self.cluster_pools(node, cp_node, pool_nodes, &name.value, &s);
        let apps = apps.iter().filter_map(|a| self.app(a)).collect();
        Some(Cluster {
            name,
            env: env.to_owned(),
            managed_by,
            former_name,
            talos: talos?,
            talos_allow_prerelease: s.talos_allow_prerelease.clone(),
            kubernetes: kubernetes?,
            endpoint: endpoint?,
            cert_sans,
            discovery: s.discovery.unwrap_or_else(|| Spanned::new(false, head)),
            apply_mode: s.apply_mode.unwrap_or_else(|| Spanned::new(ApplyMode::Auto, head)),
            cni_default: s.cni_default,
            cni: s.cni.filter(|c| c.value != "default"),
            addons: s.addons.unwrap_or_default(),
            runtimes: s.runtimes.unwrap_or_default(),
            pod_cidr: s.pod_cidr.unwrap_or_else(|| Spanned::new("10.244.0.0/16".parse().expect("valid"), head)),
            service_cidr: s.service_cidr.unwrap_or_else(|| Spanned::new("10.96.0.0/12".parse().expect("valid"), head)),
            single_node,
            vm_template_manual,
            control_plane: control_plane?,
            workers,
            apps,
            cluster_api,
            ip_pool,
            sealed,
            window: s.window.clone(),
            etcd_snapshots: s.etcd_snapshots.clone(),
            backup: s.backup.clone(),
            span: head,
        })
    }

    /// The cluster's `control-plane` (reported missing when it has none) and its worker
    /// `pool`s, in the order written, each over the cluster's pool values and patches.
    fn cluster_pools(
        &mut self,
        node: &Node,
        cp_node: Option<&Node>,
        pool_nodes: Vec<&Node>,
        cluster: &str,
        s: &Settings,
    ) -> (Option<Pool>, Vec<Pool>) {
        let control_plane = match cp_node {
            Some(n) => self.pool(n, Role::ControlPlane, cluster, &s.pool, &s.patches),
            None => {
                self.diags.push(missing(node, "a `control-plane`").help("`control-plane count=3 size=\"…\"` (R29)"));
                None
            }
        };
        let mut workers = Vec::new();
        for p in pool_nodes {
            if let Some(pool) = self.pool(p, Role::Worker, cluster, &s.pool, &s.patches) {
                workers.push(pool);
            }
        }
        (control_plane, workers)
    }
}

/// The children an unknown child's help lists besides the settings.
const CLUSTER_CHILDREN: &[&str] = &[
    "endpoint",
    "cert-sans",
    "single-node",
    "vm-template-manual",
    "control-plane",
    "pool",
    "app",
    "cluster-api",
    "ip-pool",
    "sealed",
];

/// `endpoint address=… [port=6443] [public=#false]`, or on bare metal `endpoint name=…`:
/// where the Kubernetes API is reached.
fn api_endpoint(child: &Node, d: &mut Diagnostics) -> Option<Endpoint> {
    let r = Reader::new(child, &["address", "name", "port", "public"], d);
    let name = r.prop_str("name", d);
    let (address, name) = match name {
        Some(n) if r.has_prop("address") => {
            d.push(
                Diagnostic::new(&codes::INVALID_VALUE, "the endpoint has both `address` and `name`".to_owned())
                    .at(n.span)
                    .label("one of the two")
                    .help("`address=` is a shared address the control plane holds (fleetc writes it); `name=` is a DNS name your DNS or load balancer resolves to the control plane (docs/metal.md, \"An endpoint by name\"): write one"),
            );
            (None, None)
        }
        Some(n) if n.value.parse::<Ipv4Addr>().is_ok() => {
            d.push(
                Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is an address, not a name", n.value))
                    .at(n.span)
                    .label("an address")
                    .help(format!("write `address=\"{}\"`", n.value)),
            );
            (None, None)
        }
        Some(n) if !crate::model::values::is_dns_name(&n.value) => {
            d.push(
                Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is not a DNS name", n.value))
                    .at(n.span)
                    .label("not a DNS name")
                    .help("a name of lowercase letters, digits and `-` in dot-separated labels (`k8s.example.com`), without a scheme or port (`port=` takes the port)"),
            );
            (None, None)
        }
        Some(n) => (None, Some(n)),
        None => (r.require_str("address", d).and_then(|a| parse_ip(&a, d)), None),
    };
    let port = r.prop_int::<u16>("port", d);
    let public = r.prop_bool("public", d).is_some_and(|b| b.value);
    r.finish(false, d);
    (address.is_some() || name.is_some()).then(|| Endpoint {
        address,
        name,
        port: port.as_ref().map_or(DEFAULT_API_PORT, |p| p.value),
        port_span: port.map(|p| p.span),
        public,
        span: child.head_span(),
    })
}

/// A version the cluster needs (`talos` or `kubernetes`), from the nearest level that states
/// it; reported missing unless it was written with a value that could not be read (`broken`,
/// already reported).
fn required_version(
    v: Option<Spanned<Version>>,
    key: &'static str,
    s: &Settings,
    node: &Node,
    d: &mut Diagnostics,
) -> Option<Spanned<Version>> {
    v.or_else(|| {
        if s.broken.contains(key) {
            return None;
        }
        let (what, help) = if key == "talos" {
            ("a Talos version", "state `talos \"v1.13.9\"` in the cluster, its environment or the fleet")
        } else {
            ("a Kubernetes version", "state `kubernetes \"1.36.2\"` in the cluster, its environment or the fleet")
        };
        d.push(missing(node, what).help(help));
        None
    })
}
