//! Step 5: the cluster root, node by node (R19, F3). OpenTofu cannot order the instances of
//! one block and returns before a rebooted node is healthy, so fleetc plans the whole root
//! (shown, confirmed), then applies one targeted plan per control-plane node — the first one
//! with the etcd bootstrap — and waits for `talosctl health` after each, then applies the
//! rest (the workers) and checks health once more.
//!
//! Health expects exactly the nodes Kubernetes should list (talosctl compares the sets): on a
//! first build, the control-plane nodes applied so far; on a running cluster (its state holds
//! the bootstrap), every node of the inventory.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Ctx;
use super::layout::{self, APPLY_MODE_VAR, SCALEWAY_CREDENTIALS_VAR, TALOS_SECRETS_VAR};
use super::runner::Cmd;
use super::session::{Session, Step, StepResult};
use super::target::{ClusterTarget, ProviderTarget};
use super::tofu::{tofu, var};
use super::work::display;

/// How long `talosctl health` may wait.
pub const HEALTH_TIMEOUT: &str = "10m";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub hostname: String,
    pub address: String,
    pub talos_endpoint: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nodes {
    pub control_plane: Vec<Node>,
    pub workers: Vec<Node>,
    pub kubernetes_api: Option<String>,
}

/// What the cloud root built, per cluster (its `clusters` output).
pub type Inventory = BTreeMap<String, Nodes>;

/// The placeholder inventory `--plan` shows.
pub fn planned_inventory(ctx: &Ctx<'_>) -> Value {
    let node = |h: &str| json!({"hostname": h, "address": format!("<{h}.address>"), "talos_endpoint": format!("<{h}.talos_endpoint>")});
    let mut m = serde_json::Map::new();
    for c in ctx.built_clusters() {
        let workers: serde_json::Map<String, Value> =
            c.workers.iter().map(|w| (w.hostname.clone(), node(&w.hostname))).collect();
        m.insert(
            c.name.clone(),
            json!({
                "control_plane": c.control_plane.iter().map(|n| node(&n.hostname)).collect::<Vec<_>>(),
                "workers": workers,
                "kubernetes_api": c.kubernetes_api.clone().unwrap_or_else(|| format!("<{}.kubernetes_api>", c.name)),
            }),
        );
    }
    Value::Object(m)
}

pub fn parse_inventory(bytes: &[u8]) -> Result<Inventory, String> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the cloud root's `clusters` output is not JSON: {e}"))?;
    let obj = v.get("value").unwrap_or(&v).as_object().ok_or("the cloud root's `clusters` output is not a map")?;
    let node = |n: &Value| -> Result<Node, String> {
        let f = |k: &str| n.get(k).and_then(Value::as_str).map(str::to_owned).ok_or(format!("a node has no `{k}`"));
        Ok(Node { hostname: f("hostname")?, address: f("address")?, talos_endpoint: f("talos_endpoint")? })
    };
    let mut inv = Inventory::new();
    for (name, c) in obj {
        let control_plane = c
            .get("control_plane")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(node).collect())
            .transpose()?
            .unwrap_or_default();
        let mut workers: Vec<Node> = match c.get("workers") {
            Some(Value::Object(o)) => o.values().map(node).collect::<Result<_, _>>()?,
            Some(Value::Array(a)) => a.iter().map(node).collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        workers.sort_by(|a, b| a.hostname.cmp(&b.hostname));
        let kubernetes_api = c.get("kubernetes_api").and_then(Value::as_str).map(str::to_owned);
        inv.insert(name.clone(), Nodes { control_plane, workers, kubernetes_api });
    }
    Ok(inv)
}

/// Reads the cloud root's inventory.
pub fn inventory(s: &mut Session<'_>, ctx: &Ctx<'_>) -> StepResult<Inventory> {
    let out = s.run(
        tofu(ctx, layout::CLOUD, &["output", "-json", layout::INVENTORY_OUTPUT])
            .plan_stdout(planned_inventory(ctx).to_string()),
    )?;
    parse_inventory(&out.stdout).map_err(|e| s.failure(e))
}

fn nodes_of<'a>(s: &Session<'_>, inv: &'a Inventory, c: &ClusterTarget) -> StepResult<&'a Nodes> {
    let n =
        inv.get(&c.name).ok_or_else(|| s.failure(format!("the cloud root's inventory has no cluster `{}`", c.name)))?;
    if n.control_plane.len() != c.control_plane.len() {
        return s.fail(format!(
            "the inventory lists {} control-plane nodes for `{}`, fleet.kdl {}",
            n.control_plane.len(),
            c.name,
            c.control_plane.len()
        ));
    }
    Ok(n)
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
    s.run(cmd).map_err(|f| s.failure(format!("node {} is not healthy: {}", via.hostname, f.message)))?;
    Ok(())
}

/// The cluster root's apply-time inputs: the bundles' private paths, and the Scaleway API key
/// of the cloud controller manager and CSI driver (F11) from the sealed `scaleway-api-key`
/// (a YAML map with `access_key` and `secret_key`), with project, region and zone from
/// fleet.kdl (R9).
fn cluster_vars(s: &mut Session<'_>, ctx: &Ctx<'_>) -> StepResult<Vec<(String, String, bool)>> {
    let files: BTreeMap<&str, String> = ctx.bundles.iter().map(|(c, p)| (c.as_str(), display(p))).collect();
    let mut vars =
        vec![(format!("TF_VAR_{TALOS_SECRETS_VAR}"), serde_json::to_string(&files).unwrap_or_default(), false)];
    let ProviderTarget::Scaleway { project, region, zone } = &ctx.target.provider else {
        return Ok(vars);
    };
    let Some(c) = ctx.built_clusters().find(|c| c.sealed.iter().any(|n| n == layout::SCALEWAY_API_KEY_INPUT)) else {
        return Ok(vars);
    };
    let (access, secret) = match ctx.sealed(&c.name, layout::SCALEWAY_API_KEY_INPUT) {
        None => ("<sealed access_key>".to_owned(), "<sealed secret_key>".to_owned()),
        Some(plain) => {
            let map: BTreeMap<String, String> =
                plain.as_str().and_then(|t| serde_saphyr::from_str(t).ok()).ok_or_else(|| {
                    s.failure(format!(
                        "the sealed `{}` of `{}` is not a YAML map with `access_key` and `secret_key`",
                        layout::SCALEWAY_API_KEY_INPUT,
                        c.name
                    ))
                })?;
            match (map.get("access_key"), map.get("secret_key")) {
                (Some(a), Some(k)) => (a.clone(), k.clone()),
                _ => {
                    return s.fail(format!(
                        "the sealed `{}` of `{}` lacks `access_key` or `secret_key`",
                        layout::SCALEWAY_API_KEY_INPUT,
                        c.name
                    ));
                }
            }
        }
    };
    let value =
        json!({"access_key": access, "secret_key": secret, "project_id": project, "region": region, "zone": zone})
            .to_string();
    if !s.plan {
        s.secret(&secret);
        s.secret(&value);
    }
    vars.push((format!("TF_VAR_{SCALEWAY_CREDENTIALS_VAR}"), value, true));
    Ok(vars)
}

/// `apply -input=false <vars…> <plan>`: a saved plan, with the -vars it was planned with
/// (OpenTofu checks that they match, see [`super::tofu::plan_show_apply`]).
fn saved_plan_apply(vars: &[String], plan: &std::path::Path) -> Vec<String> {
    let mut args = vec!["apply".to_owned(), "-input=false".to_owned()];
    args.extend(vars.iter().cloned());
    args.push(display(plan));
    args
}

pub fn apply(s: &mut Session<'_>, ctx: &Ctx<'_>) -> StepResult {
    let inv = inventory(s, ctx)?;
    s.begin(Step::ClusterRoot);
    for c in ctx.target.clusters.iter().filter(|c| c.managed) {
        s.note(&format!("cluster `{}` is managed by Cluster API: its management cluster builds it", c.name));
    }
    let vars = cluster_vars(s, ctx)?;
    let with = |cmd: Cmd| cmd.envs(&vars);
    let mode: Vec<String> = ctx.mode.map(|m| vec![var(APPLY_MODE_VAR, m.as_str())]).unwrap_or_default();
    s.run(with(tofu(ctx, layout::CLUSTER, &["init", "-input=false"])))?;
    let state = s.run(with(tofu(ctx, layout::CLUSTER, &["state", "list"])).plan_stdout(""))?;
    let state = state.stdout_str();
    let plan_all = ctx.work.file("cluster.tfplan");
    let mut args = vec!["plan".to_owned(), "-input=false".to_owned(), format!("-out={}", display(&plan_all))];
    args.extend(mode.iter().cloned());
    s.run(with(tofu(ctx, layout::CLUSTER, &args.iter().map(String::as_str).collect::<Vec<_>>())))?;
    s.run(with(tofu(ctx, layout::CLUSTER, &["show", &display(&plan_all)])))?;
    s.confirm(&format!(
        "apply this plan to the cluster root of `{}`, one control-plane node at a time?",
        ctx.target.env
    ))?;
    for c in ctx.built_clusters() {
        let nodes = nodes_of(s, &inv, c)?;
        let tc = talosconfig(s, ctx, c)?;
        let running = state.lines().any(|l| l.trim() == layout::bootstrap_target(&c.name));
        s.note(&format!(
            "cluster `{}`: {}",
            c.name,
            if running {
                "running (its state holds the bootstrap): health expects every node"
            } else {
                "first build: health expects the nodes applied so far"
            }
        ));
        let all_cps: Vec<&Node> = nodes.control_plane.iter().collect();
        let all_workers: Vec<&Node> = nodes.workers.iter().collect();
        for (i, node) in nodes.control_plane.iter().enumerate() {
            let index = i + 1;
            s.note(&format!("control-plane node {} ({index}/{})", node.hostname, nodes.control_plane.len()));
            let plan = ctx.work.file(&format!("{}-cp-{index}.tfplan", c.name));
            let mut args = vec!["plan".to_owned(), "-input=false".to_owned(), format!("-out={}", display(&plan))];
            args.extend(mode.iter().cloned());
            args.push(format!("-target={}", layout::control_plane_target(&c.name, index)));
            if index == 1 {
                args.push(format!("-target={}", layout::bootstrap_target(&c.name)));
            }
            s.run(with(tofu(ctx, layout::CLUSTER, &args.iter().map(String::as_str).collect::<Vec<_>>())))?;
            s.run(with(tofu(
                ctx,
                layout::CLUSTER,
                &saved_plan_apply(&mode, &plan).iter().map(String::as_str).collect::<Vec<_>>(),
            )))?;
            let (cps, workers) =
                if running { (all_cps.clone(), all_workers.clone()) } else { (all_cps[..index].to_vec(), Vec::new()) };
            health(s, &tc, node, &cps, &workers)?;
        }
    }
    s.note("the workers and everything else left in the plan");
    let rest = ctx.work.file("cluster-rest.tfplan");
    let mut args = vec!["plan".to_owned(), "-input=false".to_owned(), format!("-out={}", display(&rest))];
    args.extend(mode.iter().cloned());
    s.run(with(tofu(ctx, layout::CLUSTER, &args.iter().map(String::as_str).collect::<Vec<_>>())))?;
    s.run(with(tofu(
        ctx,
        layout::CLUSTER,
        &saved_plan_apply(&mode, &rest).iter().map(String::as_str).collect::<Vec<_>>(),
    )))?;
    for c in ctx.built_clusters() {
        let nodes = nodes_of(s, &inv, c)?;
        let tc = ctx.work.file(&format!("{}.talosconfig", c.name));
        let cps: Vec<&Node> = nodes.control_plane.iter().collect();
        let workers: Vec<&Node> = nodes.workers.iter().collect();
        if let Some(first) = nodes.control_plane.first() {
            health(s, &display(&tc), first, &cps, &workers)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inventory_reads_the_cloud_roots_output() {
        let json = br#"{"main":{"control_plane":[{"hostname":"main-cp-1","address":"10.10.0.2","talos_endpoint":"51.15.200.10:50001"}],
            "workers":{"main-system-2":{"hostname":"main-system-2","address":"10.10.0.6","talos_endpoint":"g:50005"},
                       "main-system-1":{"hostname":"main-system-1","address":"10.10.0.5","talos_endpoint":"g:50004"}},
            "endpoint_address":"10.10.0.10"}}"#;
        let inv = parse_inventory(json).unwrap();
        let main = &inv["main"];
        assert_eq!(main.control_plane[0].talos_endpoint, "51.15.200.10:50001");
        assert_eq!(
            main.workers.iter().map(|w| w.hostname.as_str()).collect::<Vec<_>>(),
            ["main-system-1", "main-system-2"]
        );
        assert!(parse_inventory(br#"{"main":{"control_plane":[{"hostname":"x"}]}}"#).is_err());
    }
}
