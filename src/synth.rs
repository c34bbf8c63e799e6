//! Synthetic fleets for the benchmark (`benches/fleet_scale.rs`, docs/performance.md).
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

pub const NODES_PER_CLUSTER: usize = 100;
pub const CLUSTERS_PER_ENVIRONMENT: usize = 1;

const ARGOCD: &str = include_str!("../vendor/argocd-3.2.1-install.yaml");
const CILIUM: &str = include_str!("../vendor/cilium-1.18.4.yaml");
const KUSTOMIZATION: &str = include_str!("../apps/platform/kustomization.yaml");
const RECIPIENT: &str = "age1wh7qxmt0740e28qvq0jjz5ylyxfctxtm4skkffn6kers9dln89eswx42s2";

/// The files of a synthetic fleet of `nodes` nodes, as (relative path, text).
pub fn files(nodes: usize) -> Vec<(&'static str, String)> {
    vec![
        ("fleet.kdl", fleet_kdl(nodes)),
        ("vendor/argocd-3.2.1-install.yaml", ARGOCD.to_owned()),
        ("vendor/cilium-1.18.4.yaml", CILIUM.to_owned()),
        ("apps/platform/kustomization.yaml", KUSTOMIZATION.to_owned()),
    ]
}

/// Writes a synthetic fleet of `nodes` nodes into `dir` (see [`files`]).
pub fn write(dir: &Path, nodes: usize) -> io::Result<()> {
    for (rel, text) in files(nodes) {
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
    let mut o = String::new();
    let _ = writeln!(o, "fleet \"synth\" {{");
    o.push_str("    talos \"v1.13.9\"\n    kubernetes \"1.33.4\"\n    cni \"cilium\"\n    addons \"cilium\"\n    runtimes \"gvisor\"\n");
    o.push_str("    pool-defaults schematic=\"isolated\"\n");
    o.push_str("    gitops repo=\"https://git.example.org/synth/fleet.git\" revision=\"main\"\n");
    let _ = writeln!(
        o,
        "    argocd version=\"3.2.1\" manifest=\"vendor/argocd-3.2.1-install.yaml\" sha256=\"{}\"",
        sha256_hex(ARGOCD.as_bytes())
    );
    o.push_str("    schematic \"isolated\" {\n        extension \"siderolabs/gvisor\"\n    }\n");
    let _ = writeln!(
        o,
        "    addon \"cilium\" version=\"1.18.4\" manifest=\"vendor/cilium-1.18.4.yaml\" sha256=\"{}\"",
        sha256_hex(CILIUM.as_bytes())
    );
    for (e, clusters) in sizes.chunks(CLUSTERS_PER_ENVIRONMENT).enumerate() {
        environment(&mut o, e, clusters);
    }
    o.push_str("}\n");
    o
}

fn environment(o: &mut String, e: usize, clusters: &[usize]) {
    let proxmox = e % 2 == 1;
    // One /16 per environment, skipping 10.96.0.0/12, the clusters' service CIDR
    // (`fleet::network::cidr-overlap`): a 10,000-node fleet has 100 environments.
    let net = if e + 1 >= 96 { e + 17 } else { e + 1 };
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
    let _ = writeln!(o, "        recipients \"{RECIPIENT}\"");
    for (c, &size) in clusters.iter().enumerate() {
        let subnet = c + 1;
        let _ = writeln!(o, "        cluster \"c{c}\" {{");
        let _ = writeln!(o, "            endpoint address=\"10.{net}.{subnet}.10\"");
        let mut next = 11;
        let system = 2;
        let workers = size - 3 - system;
        for (head, count) in [
            ("control-plane count=3 size=\"cp\"".to_owned(), 3),
            (format!("pool \"system\" count={system} size=\"worker\""), system),
            (format!("pool \"workers\" count={workers} size=\"worker\""), workers),
        ] {
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
