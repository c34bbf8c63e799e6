//! Where a cluster's nodes are: the one [`Inventory`] every step that talks to nodes reads
//! (the cluster root, Argo CD, `upgrade`). On a cloud it is the cloud root's
//! `clusters` output (`layout::names::INVENTORY_OUTPUT`, read with `tofu output`; under
//! `--plan` a placeholder); on bare metal, which has no cloud root, out/'s machine
//! inventories (`layout::paths::metal_inventory`, the type `layout::inventory::MetalInventory`
//! that `emit::metal` writes), each machine reached at its own address.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::ctx::Ctx;
use super::nodes::{Node, Nodes};
use super::session::{Session, StepResult};
use super::target::ProviderTarget;
use super::tofu::tofu;
use crate::layout::inventory::{Machine, MetalInventory};
use crate::layout::names::{INVENTORY_OUTPUT, TUNNEL_ADDRESS};
use crate::layout::paths::{self, CLOUD};
use crate::model::Role;

/// Each cluster's nodes, by cluster name: what the cloud root built (its `clusters` output),
/// or what out/ declares on bare metal.
pub type Inventory = BTreeMap<String, Nodes>;

/// The placeholder inventory `--plan` shows.
pub fn planned(ctx: &Ctx<'_>) -> Value {
    // On Scaleway a node is reached at its end of the Talos API tunnel (R13, `tunnel.rs`).
    let tunnel = ctx.target.provider.has_switches();
    let endpoint = |h: &str| {
        if tunnel { format!("{TUNNEL_ADDRESS}:<{h}.talos_port>") } else { format!("<{h}.talos_endpoint>") }
    };
    let node = |h: &str| json!({"hostname": h, "address": format!("<{h}.address>"), "talos_endpoint": endpoint(h)});
    let mut m = serde_json::Map::new();
    for c in ctx.target.built_clusters() {
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

/// The cloud root's `clusters` output, as `tofu output -json` prints it.
pub fn parse(bytes: &[u8]) -> Result<Inventory, String> {
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

/// Reads the cloud root's inventory; on bare metal, out/'s machine inventories (no cloud root).
pub fn read(s: &mut Session<'_>, ctx: &Ctx<'_>) -> StepResult<Inventory> {
    if matches!(ctx.target.provider, ProviderTarget::Metal) {
        let mut inv = Inventory::new();
        for c in ctx.target.built_clusters() {
            inv.insert(c.name.clone(), metal_nodes(&metal(s, ctx, &c.name)?));
        }
        return Ok(inv);
    }
    let out = s.run(tofu(ctx, CLOUD, &["output", "-json", INVENTORY_OUTPUT]).plan_stdout(planned(ctx).to_string()))?;
    parse(&out.stdout).map_err(|e| s.failure(e))
}

/// The machine inventory of bare-metal cluster `cluster`, from the checked build.
pub fn metal(s: &Session<'_>, ctx: &Ctx<'_>, cluster: &str) -> StepResult<MetalInventory> {
    let path = paths::metal_inventory(&ctx.target.env, cluster);
    let bytes = ctx.out.get(&path).ok_or_else(|| s.failure(format!("out/ has no {path}")))?;
    let text = std::str::from_utf8(bytes).map_err(|e| s.failure(format!("{path}: {e}")))?;
    serde_saphyr::from_str(text).map_err(|e| s.failure(format!("{path}: {e}")))
}

/// The cluster's nodes as the other steps (health, Argo CD) take them: on bare metal the
/// Talos API is reached at each machine's own address.
pub fn metal_nodes(inv: &MetalInventory) -> Nodes {
    let node = |m: &Machine| Node {
        hostname: m.hostname.clone(),
        address: m.address.clone(),
        talos_endpoint: m.address.clone(),
    };
    let cp = |m: &&Machine| m.role == Role::ControlPlane.as_str();
    let mut workers: Vec<Node> = inv.machines.iter().filter(|m| !cp(m)).map(node).collect();
    workers.sort_by(|a, b| a.hostname.cmp(&b.hostname));
    Nodes { control_plane: inv.machines.iter().filter(cp).map(node).collect(), workers, kubernetes_api: None }
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
        let inv = parse(json).unwrap();
        let main = &inv["main"];
        assert_eq!(main.control_plane[0].talos_endpoint, "51.15.200.10:50001");
        assert_eq!(
            main.workers.iter().map(|w| w.hostname.as_str()).collect::<Vec<_>>(),
            ["main-system-1", "main-system-2"]
        );
        assert!(parse(br#"{"main":{"control_plane":[{"hostname":"x"}]}}"#).is_err());
    }
}
