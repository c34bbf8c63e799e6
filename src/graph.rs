//! `fleetc graph`: the fleet's structure (fleet → environments → clusters → pools → nodes, and
//! the clusters Cluster API manages) and each environment's apply order, as a [`Graph`],
//! printed as Mermaid ([`mermaid`]) or Graphviz DOT ([`dot`]). Pure and deterministic: the
//! same fleet gives the same bytes.
//!
//! The apply order is not restated here: it is `apply::order::of`, the one function whose
//! stages `fleetc apply` iterates (R13, R19, F2, F3, F7, R22), drawn step by step: the Image
//! Factory schematics and images (one vertex), the cloud root, the Talos API switch opened
//! where the cloud root has one (Scaleway), each cluster built by OpenTofu with its
//! control-plane nodes one at a time and then its workers, the switch closed, then Argo CD on
//! each when the fleet pins it; on bare metal each machine checked and configured by
//! talosctl. What follows without `fleetc apply` comes last: a cluster managed by Cluster API
//! after its management cluster. The bootstrap root (the state bucket) is never drawn:
//! `fleetc apply` does not run it (docs/apply.md, "bootstrap"), it is created once by hand.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::apply::order::{self, Stage, Then};
use crate::apply::target::{self, ClusterTarget};
use crate::model::{Environment, Fleet, Pool, Role};

/// Vertices and edges, in a fixed order.
#[derive(Debug, Default)]
pub struct Graph {
    pub title: String,
    pub vertices: Vec<Vertex>,
    pub edges: Vec<Edge>,
    /// One chain of steps per environment.
    pub apply: Vec<ApplyOrder>,
}

#[derive(Debug)]
pub struct Vertex {
    pub id: String,
    /// Lines of the label.
    pub label: Vec<String>,
}

#[derive(Debug)]
pub struct Edge {
    pub from: String,
    pub to: String,
    /// A `managed-by` edge (dashed, labelled) rather than a containment edge.
    pub managed_by: bool,
}

#[derive(Debug)]
pub struct ApplyOrder {
    pub id: String,
    pub environment: String,
    /// In order; each step waits for the one before.
    pub steps: Vec<Vertex>,
}

/// Builds the graph of `fleet`.
pub fn build(fleet: &Fleet) -> Graph {
    let mut ids = Ids::default();
    let mut g = Graph { title: format!("fleet {}", fleet.name.value), ..Graph::default() };
    let root = ids.make(&["fleet", &fleet.name.value]);
    g.vertices.push(Vertex { id: root.clone(), label: vec![g.title.clone()] });
    for env in &fleet.environments {
        let env_id = ids.make(&["env", &env.name.value]);
        g.vertices.push(Vertex {
            id: env_id.clone(),
            label: vec![format!("environment {}", env.name.value), env.provider.name().to_owned()],
        });
        g.edges.push(Edge { from: root.clone(), to: env_id.clone(), managed_by: false });
        for cluster in &env.clusters {
            let cl_id = ids.make(&["cluster", &env.name.value, &cluster.name.value]);
            g.vertices.push(Vertex {
                id: cl_id.clone(),
                label: vec![
                    format!("cluster {}", cluster.name.value),
                    format!("Talos {}, Kubernetes {}", cluster.talos.value.v(), cluster.kubernetes.value),
                ],
            });
            g.edges.push(Edge { from: env_id.clone(), to: cl_id.clone(), managed_by: false });
            for pool in cluster.pools() {
                let pool_id = ids.make(&["pool", &env.name.value, &cluster.name.value, &pool.name.value]);
                g.vertices.push(Vertex { id: pool_id.clone(), label: pool_label(pool) });
                g.edges.push(Edge { from: cl_id.clone(), to: pool_id.clone(), managed_by: false });
                for m in &pool.machines {
                    let m_id = ids.make(&["node", &env.name.value, &m.hostname]);
                    let mut label = vec![m.hostname.clone()];
                    label.extend(m.address.as_ref().map(|a| a.value.to_string()));
                    g.vertices.push(Vertex { id: m_id.clone(), label });
                    g.edges.push(Edge { from: pool_id.clone(), to: m_id, managed_by: false });
                }
            }
        }
        for cluster in &env.clusters {
            if let Some(mgmt) = &cluster.managed_by {
                g.edges.push(Edge {
                    from: ids.get(&["cluster", &env.name.value, &cluster.name.value]),
                    to: ids.get(&["cluster", &env.name.value, &mgmt.value]),
                    managed_by: true,
                });
            }
        }
        g.apply.push(apply_order(fleet, env, &mut ids));
    }
    g
}

fn pool_label(pool: &Pool) -> Vec<String> {
    let name = match pool.role {
        Role::ControlPlane => "control plane".to_owned(),
        Role::Worker => format!("pool {}", pool.name.value),
    };
    let count = pool.count.value;
    let nodes = if count == 1 { "node" } else { "nodes" };
    vec![name, format!("{count} {nodes} of size {}", pool.size.value)]
}

fn apply_order(fleet: &Fleet, env: &Environment, ids: &mut Ids) -> ApplyOrder {
    let e = &env.name.value;
    let mut labels = Vec::new();
    let target = target::of_environment(fleet, env);
    let order = order::of(&target);
    for stage in &order.stages {
        match stage {
            Stage::Schematics => {
                let images: BTreeSet<String> = env
                    .clusters
                    .iter()
                    .flat_map(|c| {
                        c.pools().map(move |p| format!("{} at Talos {}", p.schematic.value, c.talos.value.v()))
                    })
                    .collect();
                labels.push(format!("Image Factory: {}", images.into_iter().collect::<Vec<_>>().join(", ")));
            }
            // Drawn with the schematics: one Image Factory step.
            Stage::Images => {}
            Stage::CloudRoot => labels.push(format!("tofu {e}/cloud")),
            Stage::ClusterRoot { switch, clusters } => {
                if *switch {
                    labels.push(format!("tofu {e}/cloud: open the Talos API switch"));
                }
                for c in clusters {
                    node_steps(&mut labels, &format!("tofu {e}/cluster"), c);
                }
                if *switch {
                    labels.push(format!("tofu {e}/cloud: close the Talos API switch"));
                }
            }
            Stage::Machines { clusters } => {
                for c in clusters {
                    for (i, n) in c.control_plane.iter().enumerate() {
                        labels.push(format!("talosctl: check and configure {} (control plane)", n.hostname));
                        if i == 0 {
                            labels.push(format!("talosctl: bootstrap etcd on {}", n.hostname));
                        }
                    }
                    for n in &c.workers {
                        labels.push(format!("talosctl: check and configure {} (worker)", n.hostname));
                    }
                }
            }
            Stage::ArgoCd { clusters } => {
                for c in clusters {
                    labels.push(format!("Argo CD: cluster {}", c.name));
                }
            }
        }
    }
    for then in &order.then {
        match then {
            Then::ClusterApi(c) => {
                let mgmt = env.cluster(&c.name).and_then(|m| m.managed_by.as_ref()).map_or("", |m| m.value.as_str());
                node_steps(&mut labels, &format!("Cluster API on {mgmt}"), c);
            }
            Then::ArgoCd(c) => labels.push(format!("Argo CD: cluster {}", c.name)),
        }
    }
    let id = ids.make(&["apply", e]);
    let steps = labels
        .into_iter()
        .enumerate()
        .map(|(i, l)| Vertex {
            id: ids.make(&["apply", e, &(i + 1).to_string()]),
            label: vec![format!("{}. {l}", i + 1)],
        })
        .collect();
    ApplyOrder { id, environment: e.clone(), steps }
}

/// Control-plane nodes one at a time (R19, F3), then all workers.
fn node_steps(labels: &mut Vec<String>, by: &str, c: &ClusterTarget) {
    for n in &c.control_plane {
        labels.push(format!("{by}: {} (control plane)", n.hostname));
    }
    let workers: Vec<&str> = c.workers.iter().map(|n| n.hostname.as_str()).collect();
    if !workers.is_empty() {
        labels.push(format!("{by}: workers {}", workers.join(", ")));
    }
}

/// Identifiers made of names (DNS labels: `-` becomes `_`, parts join with `__`), unique.
#[derive(Default)]
struct Ids {
    used: BTreeSet<String>,
    made: std::collections::BTreeMap<Vec<String>, String>,
}

impl Ids {
    fn make(&mut self, parts: &[&str]) -> String {
        let key: Vec<String> = parts.iter().map(|p| (*p).to_owned()).collect();
        let base: String = parts
            .iter()
            .map(|p| p.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect::<String>())
            .collect::<Vec<_>>()
            .join("__");
        let mut id = base.clone();
        let mut n = 2;
        while self.used.contains(&id) {
            id = format!("{base}_{n}");
            n += 1;
        }
        self.used.insert(id.clone());
        self.made.insert(key, id.clone());
        id
    }
    fn get(&self, parts: &[&str]) -> String {
        let key: Vec<String> = parts.iter().map(|p| (*p).to_owned()).collect();
        self.made.get(&key).cloned().unwrap_or_default()
    }
}

/// Mermaid flowchart text.
pub fn mermaid(g: &Graph) -> String {
    let label = |v: &Vertex| {
        v.label
            .iter()
            .map(|l| l.replace('#', "#35;").replace('"', "#quot;").replace('<', "#lt;").replace('>', "#gt;"))
            .collect::<Vec<_>>()
            .join("<br/>")
    };
    let mut s = String::from("flowchart TD\n");
    let _ = writeln!(s, "    %% {}: {}", g.title, crate::emit::HEADER);
    for v in &g.vertices {
        let _ = writeln!(s, "    {}[\"{}\"]", v.id, label(v));
    }
    for e in &g.edges {
        if e.managed_by {
            let _ = writeln!(s, "    {} -. managed by .-> {}", e.from, e.to);
        } else {
            let _ = writeln!(s, "    {} --> {}", e.from, e.to);
        }
    }
    for a in &g.apply {
        let _ = writeln!(s, "    subgraph {}[\"apply order: {}\"]", a.id, a.environment);
        s.push_str("        direction TB\n");
        for v in &a.steps {
            let _ = writeln!(s, "        {}[\"{}\"]", v.id, label(v));
        }
        for w in a.steps.windows(2) {
            let _ = writeln!(s, "        {} --> {}", w[0].id, w[1].id);
        }
        s.push_str("    end\n");
    }
    s
}

/// Graphviz DOT text.
pub fn dot(g: &Graph) -> String {
    let quote = |t: &str| format!("\"{}\"", t.replace('\\', "\\\\").replace('"', "\\\""));
    let label = |v: &Vertex| quote(&v.label.join("\n")).replace('\n', "\\n");
    let mut s = format!("// {}: {}\ndigraph {} {{\n", g.title, crate::emit::HEADER, quote(&g.title));
    s.push_str("    rankdir=TB;\n    node [shape=box];\n");
    for v in &g.vertices {
        let _ = writeln!(s, "    {} [label={}];", quote(&v.id), label(v));
    }
    for e in &g.edges {
        if e.managed_by {
            let _ = writeln!(s, "    {} -> {} [style=dashed, label=\"managed by\"];", quote(&e.from), quote(&e.to));
        } else {
            let _ = writeln!(s, "    {} -> {};", quote(&e.from), quote(&e.to));
        }
    }
    for a in &g.apply {
        let _ = writeln!(s, "    subgraph {} {{", quote(&format!("cluster_{}", a.id)));
        let _ = writeln!(s, "        label={};", quote(&format!("apply order: {}", a.environment)));
        for v in &a.steps {
            let _ = writeln!(s, "        {} [label={}];", quote(&v.id), label(v));
        }
        for w in a.steps.windows(2) {
            let _ = writeln!(s, "        {} -> {};", quote(&w[0].id), quote(&w[1].id));
        }
        s.push_str("    }\n");
    }
    s.push_str("}\n");
    s
}
