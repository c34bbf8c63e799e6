//! Synthetic fleets for the benchmark (`benches/fleet_scale.rs`, docs/performance.md), of any
//! node count, and talhelper's config for the same cluster (the benchmark's peer).
//!
//! [`fleet_kdl`] is pure: the same node count gives the same text. Nodes are spread the way
//! a growing platform would spread them: clusters of at most [`NODES_PER_CLUSTER`] nodes
//! (3 control-plane nodes, a `system` pool of 2 and a `workers` pool with the rest), at most
//! [`CLUSTERS_PER_ENVIRONMENT`] cluster per environment (its own state, as `fleet::tofu::shared-state` asks, R1), environments alternating between
//! Scaleway and Proxmox (Proxmox nodes carry static addresses). [`write`] lays out a fleet
//! directory: `fleet.kdl` plus the vendored manifests and the app directory it names.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::digest::sha256_hex;

pub mod talconfig;

pub const NODES_PER_CLUSTER: usize = 100;
pub const CLUSTERS_PER_ENVIRONMENT: usize = 1;

const ARGOCD: &str = include_str!("../../vendor/argocd-3.6.3-install.yaml");
const CILIUM: &str = include_str!("../../vendor/cilium-1.20.2.yaml");
const KUSTOMIZATION: &str = include_str!("../../apps/platform/kustomization.yaml");
const RECIPIENT: &str = "age1wh7qxmt0740e28qvq0jjz5ylyxfctxtm4skkffn6kers9dln89eswx42s2";

/// The two shapes the benchmark measures (issue 20): a growing fleet of many clusters, and
/// one cluster of 3 control-plane nodes with many workers (the shape talhelper describes:
/// one talconfig.yaml per cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `n` nodes spread over clusters of at most [`NODES_PER_CLUSTER`] (see [`fleet_kdl`]).
    Fleet(usize),
    /// One Scaleway cluster: 3 control-plane nodes and one `workers` pool of `n` nodes.
    Cluster(usize),
}

impl Shape {
    /// The number of nodes the fleet has.
    pub fn nodes(self) -> usize {
        match self {
            Shape::Fleet(n) => n.max(5),
            Shape::Cluster(w) => 3 + w.max(1),
        }
    }

    /// A short label for tables: `3+100` or `10000`.
    pub fn label(self) -> String {
        match self {
            Shape::Fleet(n) => format!("{}", n.max(5)),
            Shape::Cluster(w) => format!("3+{}", w.max(1)),
        }
    }
}

/// The files of a synthetic fleet of `nodes` nodes, as (relative path, text).
pub fn files(nodes: usize) -> Vec<(&'static str, String)> {
    files_of(Shape::Fleet(nodes), RECIPIENT)
}

/// The files of a synthetic fleet of `shape` whose environments seal to `recipient` (an
/// `age1…` public key), as (relative path, text).
pub fn files_of(shape: Shape, recipient: &str) -> Vec<(&'static str, String)> {
    vec![
        ("fleet.kdl", fleet_kdl_of(shape, recipient)),
        ("vendor/argocd-3.6.3-install.yaml", ARGOCD.to_owned()),
        ("vendor/cilium-1.20.2.yaml", CILIUM.to_owned()),
        ("apps/platform/kustomization.yaml", KUSTOMIZATION.to_owned()),
    ]
}

/// Writes a synthetic fleet of `nodes` nodes into `dir` (see [`files`]).
pub fn write(dir: &Path, nodes: usize) -> io::Result<()> {
    write_of(dir, Shape::Fleet(nodes), RECIPIENT)
}

/// Writes a synthetic fleet of `shape` sealing to `recipient` into `dir` (see [`files_of`]).
pub fn write_of(dir: &Path, shape: Shape, recipient: &str) -> io::Result<()> {
    for (rel, text) in files_of(shape, recipient) {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// The text of a synthetic fleet.kdl with `nodes` nodes (at least 5: one cluster needs 3
/// control-plane nodes and a system pool of 2).
pub fn fleet_kdl(nodes: usize) -> String {
    fleet_kdl_of(Shape::Fleet(nodes), RECIPIENT)
}

/// The text of a synthetic fleet.kdl of `shape` whose environments seal to `recipient`.
pub fn fleet_kdl_of(shape: Shape, recipient: &str) -> String {
    let clusters: Vec<Vec<(&str, usize)>> = match shape {
        Shape::Fleet(nodes) => {
            fleet_sizes(nodes).into_iter().map(|n| vec![("system", 2), ("workers", n - 5)]).collect()
        }
        Shape::Cluster(workers) => vec![vec![("workers", workers.max(1))]],
    };
    let mut o = String::new();
    let _ = writeln!(o, "fleet \"synth\" {{");
    o.push_str("    talos \"v1.13.9\"\n    kubernetes \"1.36.2\"\n    cni \"cilium\"\n    addons \"cilium\"\n    runtimes \"gvisor\"\n");
    o.push_str("    pool-defaults schematic=\"isolated\"\n");
    o.push_str("    gitops repo=\"https://git.example.org/synth/fleet.git\" revision=\"main\"\n");
    let _ = writeln!(
        o,
        "    argocd version=\"3.6.3\" manifest=\"vendor/argocd-3.6.3-install.yaml\" sha256=\"{}\"",
        sha256_hex(ARGOCD.as_bytes())
    );
    o.push_str("    schematic \"isolated\" {\n        extension \"siderolabs/gvisor\"\n    }\n");
    let _ = writeln!(
        o,
        "    addon \"cilium\" version=\"1.20.2\" manifest=\"vendor/cilium-1.20.2.yaml\" sha256=\"{}\"",
        sha256_hex(CILIUM.as_bytes())
    );
    for (e, clusters) in clusters.chunks(CLUSTERS_PER_ENVIRONMENT).enumerate() {
        environment(&mut o, e, clusters, recipient);
    }
    o.push_str("}\n");
    o
}

/// The node counts of the clusters of a [`Shape::Fleet`] of `nodes` nodes.
fn fleet_sizes(nodes: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut left = nodes.max(5);
    while left > 0 {
        let n = left.min(NODES_PER_CLUSTER);
        sizes.push(n);
        left -= n;
    }
    // A remainder too small for a cluster joins the previous one's workers.
    if sizes.len() > 1 && sizes[sizes.len() - 1] < 5 {
        let last = sizes.pop().unwrap_or(0);
        if let Some(prev) = sizes.last_mut() {
            *prev += last;
        }
    }
    sizes
}

/// The second octet of environment `e`'s `/16` (`10.<octet>.0.0/16`): 1, 2, … but never
/// inside the clusters' service network 10.96.0.0/12 (octets 96–111) or their pod network
/// 10.244.0.0/16, which the nodes' network may not overlap (`fleet::check::cidr-overlap`).
fn network_octet(e: usize) -> usize {
    let n = e + 1;
    let n = if n >= 96 { n + 16 } else { n };
    assert!(n < 244, "the synthetic fleet has room for 227 environments");
    n
}

fn environment(o: &mut String, e: usize, clusters: &[Vec<(&str, usize)>], recipient: &str) {
    let proxmox = e % 2 == 1;
    let net = network_octet(e);
    let _ = writeln!(o, "    environment \"env-{e}\" {{");
    if proxmox {
        let _ = writeln!(
            o,
            "        proxmox endpoint=\"https://pve-{e}.example.org:8006\" node=\"pve1\" router=\"10.{net}.0.1\" {{"
        );
        let _ = writeln!(o, "            dns \"10.{net}.0.1\"");
        o.push_str("            size \"cp\" cores=4 memory=\"8GiB\"\n");
        o.push_str("            size \"worker\" cores=8 memory=\"32GiB\" kvm=#true\n        }\n");
        let _ = writeln!(
            o,
            "        state bucket=\"synth-env-{e}-tofu-state\" region=\"fr-par\" endpoint=\"https://s3.fr-par.scw.cloud\""
        );
    } else {
        let _ = writeln!(
            o,
            "        scaleway project=\"00000000-0000-4000-8000-{e:012}\" region=\"fr-par\" zone=\"fr-par-2\" {{"
        );
        o.push_str("            size \"cp\" type=\"PRO2-S\"\n            size \"worker\" type=\"PRO2-M\"\n        }\n");
        let _ = writeln!(o, "        state bucket=\"synth-env-{e}-tofu-state\"");
        let _ = writeln!(o, "        gateway \"51.15.{}.{}\"", e / 250, e % 250 + 1);
    }
    let _ = writeln!(o, "        network \"10.{net}.0.0/16\"");
    o.push_str("        admin-ranges \"203.0.113.0/24\"\n");
    let _ = writeln!(o, "        recipients \"{recipient}\"");
    for (c, pools) in clusters.iter().enumerate() {
        let subnet = c + 1;
        let _ = writeln!(o, "        cluster \"c{c}\" {{");
        let _ = writeln!(o, "            endpoint address=\"10.{net}.{subnet}.10\"");
        let mut next = 11;
        let heads = std::iter::once(("control-plane count=3 size=\"cp\"".to_owned(), 3)).chain(
            pools.iter().map(|&(name, count)| (format!("pool \"{name}\" count={count} size=\"worker\""), count)),
        );
        for (head, count) in heads {
            if count == 0 {
                continue;
            }
            if proxmox {
                let addresses: Vec<String> =
                    (next..next + count).map(|h| format!("\"10.{net}.{subnet}.{h}\"")).collect();
                next += count;
                let _ = writeln!(
                    o,
                    "            {head} {{\n                addresses {}\n            }}",
                    addresses.join(" ")
                );
            } else {
                let _ = writeln!(o, "            {head}");
            }
        }
        let api_key = if proxmox { "" } else { " \"scaleway-api-key\"" };
        let _ = writeln!(o, "            sealed \"talos-secrets\" \"argocd-repo\"{api_key}");
        o.push_str("            app \"platform\" path=\"apps/platform\" namespace=\"platform\"\n");
        o.push_str("        }\n");
    }
    o.push_str("    }\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{MapLoader, compile};

    fn compiled(nodes: usize) -> crate::compile::Compilation {
        let mut loader = MapLoader::default();
        let files = files(nodes);
        for (rel, text) in &files[1..] {
            loader.files.insert((*rel).to_owned(), text.clone());
        }
        compile("fleet.kdl", &files[0].1, &loader)
    }

    #[test]
    fn synthetic_fleets_compile_without_diagnostics_and_have_the_asked_node_count() {
        for nodes in [10, 250, 1000] {
            let c = compiled(nodes);
            assert!(c.diags.is_empty(), "{nodes} nodes: {:?}", c.diags);
            assert!(c.artifacts.is_some(), "{nodes} nodes: no artifacts");
            let fleet = c.fleet.expect("a model");
            let counted: u32 = fleet.clusters().flat_map(|(_, cl)| cl.pools()).map(|p| p.count.value).sum();
            assert_eq!(counted as usize, nodes);
        }
    }

    #[test]
    fn a_single_cluster_has_three_control_plane_nodes_and_the_asked_workers() {
        for workers in [10, 1000] {
            let files = files_of(Shape::Cluster(workers), RECIPIENT);
            let mut loader = MapLoader::default();
            for (rel, text) in &files[1..] {
                loader.files.insert((*rel).to_owned(), text.clone());
            }
            let c = compile("fleet.kdl", &files[0].1, &loader);
            assert!(c.diags.is_empty(), "{workers} workers: {:?}", c.diags);
            let fleet = c.fleet.expect("a model");
            let clusters: Vec<_> = fleet.clusters().collect();
            assert_eq!(clusters.len(), 1);
            let counts: Vec<u32> = clusters[0].1.pools().map(|p| p.count.value).collect();
            assert_eq!(counts, [3, workers as u32]);
            assert_eq!(Shape::Cluster(workers).nodes(), 3 + workers);
        }
    }

    #[test]
    fn the_talconfig_names_every_node_and_the_builds_patches_in_fleetcs_order() {
        let d = tempfile::tempdir().unwrap();
        let files = files_of(Shape::Cluster(10), RECIPIENT);
        let mut loader = MapLoader::default();
        for (rel, text) in &files[1..] {
            loader.files.insert((*rel).to_owned(), text.clone());
        }
        let c = compile("fleet.kdl", &files[0].1, &loader);
        let fleet = c.fleet.expect("a model");
        for (path, bytes) in c.artifacts.expect("artifacts").iter() {
            let p = d.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let t = crate::apply::target::of(&fleet, "env-0").expect("env-0");
        let text = talconfig::talconfig("env-0", &t.clusters[0], &t.images, d.path());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["nodes"].as_array().unwrap().len(), 13);
        assert_eq!(v["talosVersion"], "v1.13.9");
        let common = format!("@{}/talos/env-0/c0/common.yaml", d.path().display());
        assert_eq!(v["patches"], serde_json::json!([common]));
        let first = v["nodes"][0]["patches"].as_array().unwrap();
        assert!(first[0].as_str().unwrap().ends_with("/talos/env-0/c0/controlplane.yaml"), "{first:?}");
        assert!(first[1].as_str().unwrap().ends_with("/talos/env-0/c0/nodes/c0-cp-1.yaml"), "{first:?}");
        let tmpl = v["imageFactory"]["installerURLTmpl"].as_str().unwrap();
        assert!(tmpl.contains("{{.ID}}:{{.Version}}") && tmpl.starts_with("{{.RegistryURL}}/"), "{tmpl}");
        assert_eq!(
            v["nodes"][0]["schematic"]["customization"]["systemExtensions"]["officialExtensions"][0],
            "siderolabs/gvisor"
        );
    }

    #[test]
    fn no_environment_network_overlaps_the_service_or_pod_network() {
        // 10,000 nodes: 100 environments; compiling them here would be slow, the networks suffice.
        let text = fleet_kdl(10_000);
        let octets: Vec<usize> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("network \"10.")?.split('.').next()?.parse().ok())
            .collect();
        assert_eq!(octets.len(), 100);
        assert!(octets.iter().all(|&o| !(96..112).contains(&o) && o != 244), "{octets:?}");
        let mut unique = octets.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), octets.len());
    }

    #[test]
    fn the_generator_is_deterministic_and_uses_both_providers() {
        let big = fleet_kdl(10_000);
        for n in 96..112 {
            assert!(!big.contains(&format!("network \"10.{n}.0.0/16\"")), "10.{n}/16 overlaps the service CIDR");
        }
        let text = fleet_kdl(1000);
        assert_eq!(text, fleet_kdl(1000));
        assert!(text.contains("scaleway project=") && text.contains("proxmox endpoint="));
        assert_eq!(text.matches("cluster \"").count(), 10);
    }
}
