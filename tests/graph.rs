//! `fleetc graph`: golden Mermaid and DOT for the reference fleet, the apply order's rules,
//! and the command line.

#![allow(clippy::disallowed_methods)] // tests run the real binary

use crate::common;

use std::fs;
use std::process::Command;

use fleetc::graph::{self, Graph};

fn reference() -> Graph {
    let c = common::compile_file(&common::root().join("fleet.kdl"));
    assert!(!c.diags.has_errors());
    graph::build(c.fleet.as_ref().expect("a model"))
}

/// Compares with `golden/graph-reference/<file>`; `UPDATE_GOLDEN=1` rewrites it.
fn golden(file: &str, actual: &str) {
    let path = common::root().join("golden/graph-reference").join(file);
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, actual).unwrap();
        return;
    }
    let expected = fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        let diff = similar::TextDiff::from_lines(&expected, actual).unified_diff().header(file, "actual").to_string();
        panic!("{file} differs (UPDATE_GOLDEN=1 re-blesses):\n{diff}");
    }
}

#[test]
fn golden_mermaid_and_dot_for_the_reference_fleet() {
    let g = reference();
    golden("graph.mmd", &graph::mermaid(&g));
    golden("graph.dot", &graph::dot(&g));
}

#[test]
fn the_same_fleet_gives_the_same_bytes() {
    assert_eq!(graph::mermaid(&reference()), graph::mermaid(&reference()));
    assert_eq!(graph::dot(&reference()), graph::dot(&reference()));
}

fn steps(g: &Graph, env: &str) -> Vec<String> {
    let a = g.apply.iter().find(|a| a.environment == env).expect("an apply order");
    a.steps.iter().map(|s| s.label.join(" ")).collect()
}

#[test]
fn apply_order_images_cloud_switch_control_plane_one_at_a_time_workers_argocd() {
    let g = reference();
    assert_eq!(
        steps(&g, "staging"),
        [
            "1. Image Factory: isolated at Talos v1.13.9",
            "2. tofu staging/cloud",
            "3. tofu staging/cloud: open the Talos API switch",
            "4. tofu staging/cluster: main-cp-1 (control plane)",
            "5. tofu staging/cluster: main-cp-2 (control plane)",
            "6. tofu staging/cluster: main-cp-3 (control plane)",
            "7. tofu staging/cluster: workers main-system-1, main-system-2",
            "8. tofu staging/cloud: close the Talos API switch",
            "9. Argo CD: cluster main",
        ]
    );
}

/// The graph draws only what `fleetc apply` runs: never the bootstrap root (apply does not
/// run it), no Talos API switch on Proxmox (its cloud root has none), no Argo CD step when
/// the fleet pins no Argo CD.
#[test]
fn only_the_steps_apply_runs_for_the_platform() {
    let lab = steps(&reference(), "lab");
    assert!(lab.iter().all(|s| !s.contains("bootstrap") && !s.contains("switch")), "{lab:?}");
    let dir = tempfile::tempdir().unwrap();
    // The Scaleway starter without its Argo CD pin.
    let unpinned: String = fleetc::init::STARTER
        .lines()
        .filter(|l| !l.trim_start().starts_with("argocd "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.path().join("fleet.kdl"), unpinned).unwrap();
    let c = common::compile_file(&dir.path().join("fleet.kdl"));
    assert!(c.fleet.as_ref().unwrap().argocd.is_none());
    let staging = steps(&graph::build(c.fleet.as_ref().unwrap()), "staging");
    assert!(staging.iter().any(|s| s.contains("switch")), "{staging:?}");
    assert!(staging.iter().all(|s| !s.contains("Argo CD")), "{staging:?}");
}

#[test]
fn a_managed_cluster_comes_after_its_management_cluster() {
    let lab = steps(&reference(), "lab");
    let at = |needle: &str| lab.iter().position(|s| s.contains(needle)).unwrap_or_else(|| panic!("{needle}: {lab:?}"));
    assert!(at("Argo CD: cluster mgmt") < at("Cluster API on mgmt: edge-1-cp-1"));
    assert!(at("edge-1-cp-1 (control plane)") < at("edge-1-cp-2 (control plane)"));
    assert!(at("edge-1-cp-3 (control plane)") < at("workers edge-1-workers-1, edge-1-workers-2"));
    assert!(at("workers edge-1-workers-1") < at("Argo CD: cluster edge-1"));
    // A single-node management cluster has no workers step.
    assert!(!lab.iter().any(|s| s.contains("workers mgmt")));
}

#[test]
fn structure_environments_clusters_pools_nodes_and_managed_by() {
    let g = reference();
    let label = |id: &str| g.vertices.iter().find(|v| v.id == id).map(|v| v.label.join(" ")).unwrap_or_default();
    let edge = |from: &str, to: &str, managed: bool| {
        g.edges.iter().any(|e| e.from == from && e.to == to && e.managed_by == managed)
    };
    assert_eq!(label("env__production"), "environment production scaleway");
    assert_eq!(label("pool__production__main__system"), "pool system 3 nodes of size system");
    assert_eq!(label("node__lab__mgmt_cp_1"), "mgmt-cp-1 192.168.50.11");
    assert!(edge("fleet__acme", "env__lab", false));
    assert!(edge("env__lab", "cluster__lab__edge_1", false));
    assert!(edge("cluster__lab__edge_1", "pool__lab__edge_1__workers", false));
    assert!(edge("pool__lab__edge_1__workers", "node__lab__edge_1_workers_2", false));
    assert!(edge("cluster__lab__edge_1", "cluster__lab__mgmt", true));
    let mermaid = graph::mermaid(&g);
    assert!(mermaid.contains("    cluster__lab__edge_1 -. managed by .-> cluster__lab__mgmt\n"));
    let dot = graph::dot(&g);
    assert!(dot.contains("\"cluster__lab__edge_1\" -> \"cluster__lab__mgmt\" [style=dashed, label=\"managed by\"];\n"));
}

#[test]
fn labels_are_escaped() {
    let g = Graph {
        title: "t".into(),
        vertices: vec![graph::Vertex { id: "v".into(), label: vec!["a \"b\" <c> #d".into(), "e\\f".into()] }],
        ..Graph::default()
    };
    assert!(graph::mermaid(&g).contains("v[\"a #quot;b#quot; #lt;c#gt; #35;d<br/>e\\f\"]"));
    assert!(graph::dot(&g).contains("\"v\" [label=\"a \\\"b\\\" <c> #d\\ne\\\\f\"];"));
}

#[test]
fn the_command_prints_the_golden_text_and_exits_1_on_a_broken_fleet() {
    let run = |dir: &std::path::Path, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_fleetc")).args(args).current_dir(dir).env("NO_COLOR", "1").output().unwrap()
    };
    let root = common::root();
    for (format, file) in [("mermaid", "graph.mmd"), ("dot", "graph.dot")] {
        let o = run(&root, &["graph", "--format", format]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let expected = fs::read_to_string(root.join("golden/graph-reference").join(file)).unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout), expected);
    }
    let o = run(&root, &["graph"]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("flowchart TD\n"), "mermaid is the default");

    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("fleet.kdl"), "fleet \"x\" {\n    talos 1\n}\n").unwrap();
    let o = run(dir.path(), &["graph"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("fleet::"), "diagnostics are printed");
}
