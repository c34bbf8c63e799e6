//! The vocabulary for reaching a running cluster, which every step that talks to nodes
//! shares (the cluster root, bare metal, Argo CD, `upgrade`): a [`Node`] and a cluster's
//! [`Nodes`] (as [`super::inventory`] finds them), the talosconfig made from the sealed
//! bundle, `talosctl` and `talosctl health` against a set of nodes, and `kubectl` through the
//! admin kubeconfig and the operator's path to the Kubernetes API.

use super::ctx::Ctx;
use super::runner::Cmd;
use super::session::{Session, StepResult};
use super::target::ClusterTarget;
use super::work::display;

/// How long `talosctl health` may wait.
pub const HEALTH_TIMEOUT: &str = "10m";

/// A node as the Talos API reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub hostname: String,
    pub address: String,
    pub talos_endpoint: String,
}

/// A cluster's nodes: the control plane in order, the workers by hostname, and the
/// operator's path to its Kubernetes API (`host:port`), when there is one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nodes {
    pub control_plane: Vec<Node>,
    pub workers: Vec<Node>,
    pub kubernetes_api: Option<String>,
}

/// The talosconfig for a cluster, made by Talos's own generator from the decrypted bundle
/// (never taken from state, never written outside the private directory).
pub fn talosconfig(s: &mut Session<'_>, ctx: &Ctx<'_>, c: &ClusterTarget) -> StepResult<String> {
    let file = ctx.work.file(&format!("{}.talosconfig", c.name));
    let bundle = ctx.bundles.get(&c.name).ok_or_else(|| s.failure(format!("no secrets bundle for `{}`", c.name)))?;
    s.run(
        Cmd::new("talosctl")
            .args(["gen", "config", &c.name, &c.endpoint_url, "--with-secrets", &display(bundle)])
            .args(["--output-types", "talosconfig", "--output", &display(&file)]),
    )?;
    Ok(display(&file))
}

pub fn talosctl(talosconfig: &str, node: &Node) -> Cmd {
    Cmd::new("talosctl").args([
        "--talosconfig",
        talosconfig,
        "--endpoints",
        &node.talos_endpoint,
        "--nodes",
        &node.address,
    ])
}

/// `talosctl health` through `via`, expecting exactly `cps` and `workers`.
pub fn health(s: &mut Session<'_>, talosconfig: &str, via: &Node, cps: &[&Node], workers: &[&Node]) -> StepResult {
    health_of(s, talosconfig, via, &via.hostname, cps, workers)
}

/// [`health`] after `subject` was applied (a worker is checked through a control-plane node).
pub fn health_of(
    s: &mut Session<'_>,
    talosconfig: &str,
    via: &Node,
    subject: &str,
    cps: &[&Node],
    workers: &[&Node],
) -> StepResult {
    let list = |ns: &[&Node]| ns.iter().map(|n| n.address.as_str()).collect::<Vec<_>>().join(",");
    let mut cmd = talosctl(talosconfig, via).args([
        "health",
        "--wait-timeout",
        HEALTH_TIMEOUT,
        "--control-plane-nodes",
        &list(cps),
    ]);
    if !workers.is_empty() {
        cmd = cmd.args(["--worker-nodes", &list(workers)]);
    }
    s.run(cmd).map_err(|f| s.failure(format!("node {subject} is not healthy: {}", f.message)))?;
    Ok(())
}

/// The admin kubeconfig of `c`, from its first control-plane node through the Talos API, into
/// the private directory (Argo CD's step reads the same file after the Talos switch closed).
pub fn kubeconfig_file(ctx: &Ctx<'_>, c: &ClusterTarget) -> String {
    display(&ctx.work.file(&format!("{}.kubeconfig", c.name)))
}

/// `kubectl --kubeconfig <file> [--server=https://<operator's path>] <args…>`.
pub fn kubectl(ctx: &Ctx<'_>, c: &ClusterTarget, nodes: &Nodes, args: &[&str]) -> Cmd {
    let mut cmd = Cmd::new("kubectl").args(["--kubeconfig", &kubeconfig_file(ctx, c)]);
    if let Some(api) = &nodes.kubernetes_api {
        cmd = cmd.arg(format!("--server=https://{api}"));
    }
    cmd.args(args.iter().copied())
}
