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
use super::nodes::{Node, Nodes, health, talosconfig, talosctl};
use super::preflight::preflight;
use super::runner::{Cmd, Runner};
use super::session::{Failure, Session, Step, StepResult};
use super::switch::{self, Switch};
use super::target::ClusterTarget;
use super::work::display;
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

pub fn upgrade(
    inp: &Inputs<'_>,
    cluster_name: &str,
    opts: &UpgradeOptions,
    runner: &mut dyn Runner,
    sink: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let mut s = Session::new(runner, opts.plan, opts.yes, sink);
    let Some(c) = inp.target.clusters.iter().find(|c| c.name == cluster_name) else {
        s.begin(Step::Preflight);
        return s.fail(format!("environment `{}` has no cluster `{cluster_name}`", inp.target.env));
    };
    if c.managed {
        s.begin(Step::Preflight);
        return s.fail(format!(
            "cluster `{cluster_name}` is managed by Cluster API: its management cluster upgrades it (R26)"
        ));
    }
    let ctx = preflight(
        &mut s,
        inp,
        None,
        opts.identity.as_deref(),
        std::slice::from_ref(&c.name),
        &super::env::ToolPath::default(),
        None,
    )?;
    if s.plan {
        s.note("--plan cannot ask the nodes what they run: shown as if every node needed the upgrade");
    }
    switch::with_switch(&mut s, &ctx, Switch::Both, |s| {
        s.begin(Step::Upgrade);
        let inv = inventory::read(s, &ctx)?;
        let nodes =
            inv.get(&c.name).ok_or_else(|| s.failure(format!("the inventory has no cluster `{}`", c.name)))?.clone();
        let tc = talosconfig(s, &ctx, c)?;
        os(s, c, &nodes.control_plane, &nodes.workers, &tc)?;
        kubernetes(s, &ctx, c, &nodes, &tc)
    })?;
    s.note("done");
    Ok(())
}

fn os(s: &mut Session<'_>, c: &ClusterTarget, cps: &[Node], workers: &[Node], tc: &str) -> StepResult {
    let all_cps: Vec<&Node> = cps.iter().collect();
    let all_workers: Vec<&Node> = workers.iter().collect();
    let targets = c.control_plane.iter().zip(cps).chain(c.workers.iter().zip(workers.iter()));
    let mut asked = false;
    for (want, node) in targets {
        let version = s.run(talosctl(tc, node).args(["version", "--short"]).plan_stdout(format!(
            "Server:\n\tNODE: {}\n\tTag: {}\n",
            node.address,
            c.talos.v()
        )))?;
        let ext =
            s.run(talosctl(tc, node).args(["get", "extensions", "-o", "json"]).plan_stdout(
                "{\"spec\":{\"metadata\":{\"name\":\"schematic\",\"version\":\"<running schematic>\"}}}",
            ))?;
        let running =
            Running { talos: parse_version(&version.stdout_str()), schematic: parse_schematic(&ext.stdout_str()) };
        let Some(talos) = running.talos else {
            return s.fail(format!("cannot read the Talos version node {} runs", node.hostname));
        };
        if talos == c.talos && running.schematic.as_deref() == Some(want.schematic_id.as_str()) {
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
        s.note(&format!(
            "node {}: {} schematic {} → {}",
            node.hostname,
            talos.v(),
            running.schematic.as_deref().unwrap_or("(none)"),
            want.installer
        ));
        s.run(talosctl(tc, node).args(["upgrade", "--image", &want.installer, "--wait", "--timeout", "20m"]))?;
        health(s, tc, node, &all_cps, &all_workers)?;
    }
    Ok(())
}

fn kubernetes(s: &mut Session<'_>, ctx: &Ctx<'_>, c: &ClusterTarget, nodes: &Nodes, tc: &str) -> StepResult {
    let Some(first) = nodes.control_plane.first() else { return Ok(()) };
    let kubeconfig = display(&ctx.work.file(&format!("{}.kubeconfig", c.name)));
    s.run(talosctl(tc, first).args(["kubeconfig", &kubeconfig, "--force"]))?;
    let mut cmd = Cmd::new("kubectl").args(["--kubeconfig", &kubeconfig]);
    if let Some(api) = &nodes.kubernetes_api {
        cmd = cmd.arg(format!("--server=https://{api}"));
    }
    let out = s.run(
        cmd.args(["version", "-o", "json"])
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
    s.run(talosctl(tc, first).args(["upgrade-k8s", "--to", &c.kubernetes.to_string()]))?;
    Ok(())
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
