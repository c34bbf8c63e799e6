//! `fleetc upgrade <env>/<cluster>` (F1): applying a config whose installer changed only
//! stores it; the OS and Kubernetes upgrades are their own step. fleetc asks each node what
//! it runs — the Talos version (`talosctl version`) and the schematic (`talosctl get
//! extensions`: images from the Image Factory carry a virtual `schematic` extension whose
//! version is the schematic ID) — rather than trusting a recorded state, which a half-done
//! upgrade would have made wrong. Nodes that differ from fleet.kdl are upgraded one at a time,
//! control plane first, with `talosctl upgrade --image <installer>` and `talosctl health`
//! after each; a re-run skips the nodes already at the target. Talos moves one minor release
//! at a time: a larger step or a downgrade is refused. Then, when the API server's version
//! differs, `talosctl upgrade-k8s --to` (one minor at a time too). The Talos API switch and
//! the operator's path to the Kubernetes API are open only while this runs (R13).

use serde_json::Value;

use super::ctx::{Ctx, Inputs};
use super::inventory;
use super::nodes::{Node, Nodes, health, kubeconfig_file, kubectl, talosconfig, talosctl};
use super::preflight::one_cluster;
use super::runner::Runner;
use super::session::{Failure, Session, Step, StepResult};
use super::snapshot;
use super::switch::{self, Switch};
use super::target::{ClusterTarget, NodeTarget};
use crate::model::Version;

#[derive(Debug, Clone, Default)]
pub struct UpgradeOptions {
    pub plan: bool,
    pub yes: bool,
    pub identity: Option<std::path::PathBuf>,
}

/// What a node runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    pub talos: Option<Version>,
    pub schematic: Option<String>,
}

/// The server's `Tag:` in `talosctl version` output.
pub fn parse_version(text: &str) -> Option<Version> {
    let server = text.split("Server:").nth(1)?;
    server.lines().find_map(|l| l.trim().strip_prefix("Tag:").and_then(|t| t.trim().parse().ok()))
}

/// The `schematic` virtual extension's version in `talosctl get extensions -o json` (a stream
/// of JSON objects).
pub fn parse_schematic(text: &str) -> Option<String> {
    let stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    for v in stream.flatten() {
        let meta = v.pointer("/spec/metadata");
        if meta.and_then(|m| m.get("name")).and_then(Value::as_str) == Some("schematic") {
            return meta.and_then(|m| m.get("version")).and_then(Value::as_str).map(str::to_owned);
        }
    }
    None
}

/// What `node` of `c` runs, asked of the node: its Talos version (`talosctl version`) and
/// its schematic (`talosctl get extensions`). `upgrade` reads it before and after each node;
/// `drift` compares it with fleet.kdl's pins.
pub(super) fn running(s: &mut Session<'_>, tc: &str, node: &Node, c: &ClusterTarget) -> StepResult<Running> {
    let version = s.run(talosctl(tc, node).args(["version", "--short"]).plan_stdout(format!(
        "Server:\n\tNODE: {}\n\tTag: {}\n",
        node.address,
        c.talos.v()
    )))?;
    let ext = s.run(
        talosctl(tc, node)
            .args(["get", "extensions", "-o", "json"])
            .plan_stdout("{\"spec\":{\"metadata\":{\"name\":\"schematic\",\"version\":\"<running schematic>\"}}}"),
    )?;
    Ok(Running { talos: parse_version(&version.stdout_str()), schematic: parse_schematic(&ext.stdout_str()) })
}

/// Whether Talos can go from `from` to `to` in one upgrade.
pub fn talos_step(from: Version, to: Version) -> Result<(), String> {
    if to < from {
        return Err(format!("the node runs {} and fleet.kdl says {}: Talos does not downgrade", from.v(), to.v()));
    }
    if to.major != from.major || to.minor > from.minor + 1 {
        return Err(format!(
            "the node runs {} and fleet.kdl says {}: Talos upgrades one minor release at a time; set the latest v{}.{}.x first, upgrade, then continue",
            from.v(),
            to.v(),
            from.major,
            from.minor + 1
        ));
    }
    Ok(())
}

/// Whether Kubernetes can go from `from` to `to` in one `upgrade-k8s`.
pub fn kubernetes_step(from: Version, to: Version) -> Result<(), String> {
    if to < from {
        return Err(format!("the API server runs {from} and fleet.kdl says {to}: Kubernetes does not downgrade"));
    }
    if to.major != from.major || to.minor > from.minor + 1 {
        return Err(format!(
            "the API server runs {from} and fleet.kdl says {to}: Kubernetes upgrades one minor release at a time; set {}.{}.x first",
            from.major,
            from.minor + 1
        ));
    }
    Ok(())
}

/// What the Kubernetes API says of a node (`kubectl get node <name> -o json`): its kubelet's
/// version (`status.nodeInfo.kubeletVersion`) and its `Ready` condition (kubernetes/api
/// v0.36.3 `core/v1/types.go` l.6695, l.6782, l.6805, l.6912).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeStatus {
    pub kubelet: Option<Version>,
    pub ready: bool,
}

/// [`NodeStatus`] of one Node object.
pub fn parse_node(text: &str) -> Option<NodeStatus> {
    let v: Value = serde_json::from_str(text).ok()?;
    let kubelet = v.pointer("/status/nodeInfo/kubeletVersion").and_then(Value::as_str).and_then(|s| s.parse().ok());
    let ready = v.pointer("/status/conditions").and_then(Value::as_array).is_some_and(|cs| {
        cs.iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some("Ready")
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    });
    Some(NodeStatus { kubelet, ready })
}

/// What `--plan` pretends a node reports: the target, Ready.
pub(super) fn planned_node(hostname: &str, kubelet: Version) -> String {
    serde_json::json!({
        "kind": "Node",
        "metadata": {"name": hostname},
        "status": {
            "nodeInfo": {"kubeletVersion": format!("v{kubelet}")},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    })
    .to_string()
}

pub fn upgrade(
    inp: &Inputs<'_>,
    cluster_name: &str,
    opts: &UpgradeOptions,
    runner: &mut dyn Runner,
    sink: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let mut s = Session::new(runner, opts.plan, opts.yes, sink);
    // Where the snapshots go is settled before anything runs.
    let (c, snapshots, ctx) =
        one_cluster(&mut s, inp, cluster_name, opts.identity.as_deref(), "its management cluster upgrades it", |c| {
            snapshot::dir(inp, c)
        })?;
    if s.plan {
        s.note("--plan cannot ask the nodes what they run: shown as if every node needed the upgrade");
    }
    if let Some(w) = &c.window {
        s.note(&format!("maintenance window: {w}; no node is upgraded outside it"));
    }
    switch::with_switch(&mut s, &ctx, Switch::Both, |s| {
        s.begin(Step::Upgrade);
        let inv = inventory::read(s, &ctx)?;
        let nodes =
            inv.get(&c.name).ok_or_else(|| s.failure(format!("the inventory has no cluster `{}`", c.name)))?.clone();
        let tc = talosconfig(s, &ctx, c)?;
        if let Some(first) = nodes.control_plane.first() {
            s.run(talosctl(&tc, first).args(["kubeconfig", &kubeconfig_file(&ctx, c), "--force"]))?;
        }
        let run = Run { ctx: &ctx, c, nodes: &nodes, tc: &tc, snapshots: &snapshots };
        run.os(s)?;
        run.kubernetes(s)
    })?;
    s.note("done");
    Ok(())
}

/// One upgrade's inputs, shared by its steps.
struct Run<'r> {
    ctx: &'r Ctx<'r>,
    c: &'r ClusterTarget,
    nodes: &'r Nodes,
    tc: &'r str,
    snapshots: &'r std::path::Path,
}

impl Run<'_> {
    /// Stops before a disruptive step outside the maintenance window.
    fn in_window(&self, s: &mut Session<'_>, what: &str) -> StepResult {
        let Some(w) = &self.c.window else { return Ok(()) };
        let now = s.now();
        if s.plan || w.contains(now) {
            return Ok(());
        }
        s.fail(format!(
            "{what} would start at {} UTC, outside the maintenance window ({w}); nothing was started. Run `fleetc upgrade` again inside it: it resumes here",
            snapshot::stamp(now)
        ))
    }

    /// The Node object of `hostname`.
    fn node_status(&self, s: &mut Session<'_>, hostname: &str, planned: Version) -> StepResult<NodeStatus> {
        let out = s.run(
            kubectl(self.ctx, self.c, self.nodes, &["get", "node", hostname, "-o", "json"])
                .plan_stdout(planned_node(hostname, planned)),
        )?;
        parse_node(&out.stdout_str())
            .ok_or_else(|| s.failure(format!("cannot read node {hostname} from the Kubernetes API")))
    }

    /// What node `node` runs: its Talos version and schematic.
    fn running(&self, s: &mut Session<'_>, node: &Node) -> StepResult<Running> {
        running(s, self.tc, node, self.c)
    }

    fn os(&self, s: &mut Session<'_>) -> StepResult {
        let (c, nodes) = (self.c, self.nodes);
        let all_cps: Vec<&Node> = nodes.control_plane.iter().collect();
        let all_workers: Vec<&Node> = nodes.workers.iter().collect();
        let cp_count = c.control_plane.len().min(nodes.control_plane.len());
        let targets = c.control_plane.iter().zip(&nodes.control_plane).chain(c.workers.iter().zip(&nodes.workers));
        let mut asked = false;
        for (i, (want, node)) in targets.enumerate() {
            let running = self.running(s, node)?;
            let Some(talos) = running.talos else {
                return s.fail(format!("cannot read the Talos version node {} runs", node.hostname));
            };
            if talos == c.talos && running.schematic.as_deref() == Some(want.schematic_id.as_str()) {
                // At the target: not upgraded again, but the next node waits until it is Ready.
                let st = self.node_status(s, &node.hostname, c.kubernetes)?;
                if !st.ready {
                    return s.fail(format!(
                        "node {} runs {} but is not Ready: fix it before the next node is upgraded",
                        node.hostname,
                        talos.v()
                    ));
                }
                s.note(&format!(
                    "node {} runs {} with schematic {}: nothing to do",
                    node.hostname,
                    talos.v(),
                    &want.schematic_id[..12]
                ));
                continue;
            }
            talos_step(talos, c.talos).map_err(|e| s.failure(format!("node {}: {e}", node.hostname)))?;
            if !asked {
                s.confirm(&format!("upgrade the nodes of `{}` to {} one at a time?", c.name, want.installer))?;
                asked = true;
            }
            self.in_window(s, &format!("the upgrade of node {}", node.hostname))?;
            let before = self.node_status(s, &node.hostname, c.kubernetes)?;
            if i < cp_count {
                snapshot::take(s, self.tc, node, self.snapshots)?;
            }
            s.note(&format!(
                "node {}: {} schematic {} → {}",
                node.hostname,
                talos.v(),
                running.schematic.as_deref().unwrap_or("(none)"),
                want.installer
            ));
            s.run(talosctl(self.tc, node).args(["upgrade", "--image", &want.installer, "--wait", "--timeout", "20m"]))?;
            health(s, self.tc, node, &all_cps, &all_workers)?;
            self.read_back(s, node, want, before.kubelet)?;
        }
        Ok(())
    }

    /// After a node's upgrade: what it runs must be the target (`talosctl upgrade` can report
    /// success with no reboot: home-operations/tuppr#575), its kubelet the one it ran before
    /// (a Talos upgrade does not change it) and the node Ready. Otherwise the run stops here.
    fn read_back(&self, s: &mut Session<'_>, node: &Node, want: &NodeTarget, kubelet: Option<Version>) -> StepResult {
        let c = self.c;
        let now = self.running(s, node)?;
        let st = self.node_status(s, &node.hostname, kubelet.unwrap_or(c.kubernetes))?;
        if s.plan {
            s.note(&format!(
                "node {} must now run Talos {}, its schematic, its kubelet as before, Ready",
                node.hostname,
                c.talos.v()
            ));
            return Ok(());
        }
        let mut wrong = Vec::new();
        if now.talos != Some(c.talos) {
            wrong.push(format!(
                "it runs Talos {}, not {} (the upgrade reported success without the node rebooting into the new version)",
                now.talos.map_or_else(|| "(unreadable)".to_owned(), |t| t.v()),
                c.talos.v()
            ));
        }
        if now.schematic.as_deref() != Some(want.schematic_id.as_str()) {
            wrong.push(format!(
                "its schematic is {}, not {}",
                now.schematic.as_deref().unwrap_or("(none)"),
                want.schematic_id
            ));
        }
        if st.kubelet != kubelet {
            let v = |k: Option<Version>| k.map_or_else(|| "(none)".to_owned(), |k| format!("v{k}"));
            wrong.push(format!("its kubelet is {}, not {} as before", v(st.kubelet), v(kubelet)));
        }
        if !st.ready {
            wrong.push("it is not Ready".to_owned());
        }
        if !wrong.is_empty() {
            return s.fail(format!(
                "node {} after its upgrade: {}. Nothing further was touched",
                node.hostname,
                wrong.join("; ")
            ));
        }
        s.note(&format!(
            "node {} verified: Talos {}, kubelet {}, Ready",
            node.hostname,
            c.talos.v(),
            st.kubelet.map_or_else(String::new, |k| format!("v{k}"))
        ));
        Ok(())
    }

    fn kubernetes(&self, s: &mut Session<'_>) -> StepResult {
        let (c, nodes) = (self.c, self.nodes);
        let Some(first) = nodes.control_plane.first() else { return Ok(()) };
        let out = s.run(
            kubectl(self.ctx, c, nodes, &["version", "-o", "json"])
                .plan_stdout(format!("{{\"serverVersion\":{{\"gitVersion\":\"v{}\"}}}}", c.kubernetes)),
        )?;
        let server = serde_json::from_slice::<Value>(&out.stdout).ok().and_then(|v| {
            v.pointer("/serverVersion/gitVersion").and_then(Value::as_str).and_then(|s| s.parse::<Version>().ok())
        });
        let Some(server) = server else {
            return s.fail("cannot read the API server's version (`kubectl version -o json`)");
        };
        if server == c.kubernetes && !s.plan {
            s.note(&format!("Kubernetes {server}: nothing to do"));
            return Ok(());
        }
        if s.plan {
            s.note("when the API server's version differs from fleet.kdl's:");
        }
        kubernetes_step(server, c.kubernetes).map_err(|e| s.failure(e))?;
        self.in_window(s, "`talosctl upgrade-k8s`")?;
        s.run(talosctl(self.tc, first).args(["upgrade-k8s", "--to", &c.kubernetes.to_string()]))?;
        // `upgrade-k8s` moves every kubelet too: each node must now report the target, Ready.
        for node in nodes.control_plane.iter().chain(&nodes.workers) {
            let st = self.node_status(s, &node.hostname, c.kubernetes)?;
            if st.kubelet != Some(c.kubernetes) || !st.ready {
                return s.fail(format!(
                    "node {} after `upgrade-k8s`: kubelet {}{}, expected v{} Ready",
                    node.hostname,
                    st.kubelet.map_or_else(|| "(none)".to_owned(), |k| format!("v{k}")),
                    if st.ready { "" } else { ", not Ready" },
                    c.kubernetes
                ));
            }
        }
        s.note(&format!("every node's kubelet runs v{}, Ready", c.kubernetes));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_a_node_runs() {
        let text =
            "Client:\n\tTag:         v1.13.9\nServer:\n\tNODE:        10.10.0.2\n\tTag:         v1.12.4\n\tSHA: abc\n";
        assert_eq!(parse_version(text), Some(Version::new(1, 12, 4)));
        let ext = r#"{"node":"10.10.0.2","spec":{"metadata":{"name":"gvisor","version":"20250505"}}}
{"node":"10.10.0.2","spec":{"metadata":{"name":"schematic","version":"88d1f7a5c4f1d3aba7df787c448c1d3d008ed29cfb34af53fa0df4336a56040b"}}}"#;
        assert_eq!(parse_schematic(ext).unwrap(), "88d1f7a5c4f1d3aba7df787c448c1d3d008ed29cfb34af53fa0df4336a56040b");
    }

    #[test]
    fn one_minor_at_a_time() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert!(talos_step(v("1.12.4"), v("1.13.9")).is_ok());
        assert!(talos_step(v("1.13.1"), v("1.13.9")).is_ok());
        assert!(talos_step(v("1.11.0"), v("1.13.9")).unwrap_err().contains("v1.12.x"));
        assert!(talos_step(v("1.13.9"), v("1.12.0")).unwrap_err().contains("downgrade"));
        assert!(kubernetes_step(v("1.34.1"), v("1.36.2")).unwrap_err().contains("1.35.x"));
    }
}
