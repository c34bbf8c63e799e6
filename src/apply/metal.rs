//! Bare metal (docs/metal.md): `fleetc apply <env>` on a `metal` environment has no OpenTofu
//! root. For each cluster it reads the inventory out/ holds (`metal/<env>/<cluster>/
//! machines.yaml`, written by `emit::metal`, read by `inventory::metal`), and for
//! each machine, control plane first and one at a time, then the workers:
//!
//! 1. **Configured already?** `talosctl … version` with the cluster's talosconfig: a machine
//!    that answers with the cluster's client certificate runs its config, and is left as it
//!    is (a rerun resumes).
//! 2. **Is it the declared machine?** A machine in maintenance mode accepts a config from
//!    anyone (R13), so before sending one fleetc asks it what it is, through the maintenance
//!    service (`talosctl get links --insecure -o json`, `talosctl get disks --insecure -o
//!    json`: siderolabs/talos v1.13.9 `cmd/talosctl/cmd/talos/get.go` l.321, the
//!    `--insecure` flag; both resource types are `NonSensitive`, so the maintenance service
//!    serves them without a role, `internal/app/resources/access.go`). The declared `mac`
//!    must be one of its links' `hardwareAddr` or `permanentAddr`
//!    (`pkg/machinery/resources/network/link_status.go` l.36-37), and the declared install
//!    disk's `serial`/`wwid`/`model`/`busPath` must be one disk's `serial`/`wwid`/`model`/
//!    `bus_path` (`pkg/machinery/resources/block/disk.go` l.27-42). Otherwise it refuses, and
//!    nothing is sent.
//! 3. **Config**: rendered by Talos's own generator exactly as `fleetc talos render` does
//!    (`render::node_config`), into the private directory, then `talosctl apply-config
//!    --insecure`.
//! 4. The first control-plane node is bootstrapped (etcd, once: only when this run configured
//!    it) and the kubeconfig fetched; after each node, `talosctl health` expects the nodes
//!    configured so far.

use serde_json::Value;

use super::ctx::Ctx;
use super::inventory;
use super::nodes::{Node, health, kubeconfig_file, talosconfig, talosctl};
use super::render;
use super::runner::Cmd;
use super::session::{Session, Step, StepResult};
use super::target::ClusterTarget;
use super::work::display;
use crate::layout::inventory::{Disk, Machine};

/// What a machine in maintenance mode reports of itself.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reported {
    pub macs: Vec<String>,
    pub disks: Vec<Disk>,
}

/// `talosctl get … -o json` prints one JSON object per resource; the spec is under `spec`.
fn specs(stdout: &[u8]) -> Vec<Value> {
    serde_json::Deserializer::from_slice(stdout)
        .into_iter::<Value>()
        .filter_map(Result::ok)
        .filter_map(|v| v.get("spec").cloned())
        .collect()
}

pub fn parse_links(stdout: &[u8]) -> Vec<String> {
    let mut macs: Vec<String> = specs(stdout)
        .iter()
        .flat_map(|s| ["hardwareAddr", "permanentAddr"].map(|k| s.get(k).and_then(Value::as_str).map(str::to_owned)))
        .flatten()
        .filter(|m| !m.is_empty() && m != "00:00:00:00:00:00")
        .map(|m| m.to_ascii_lowercase())
        .collect();
    macs.sort();
    macs.dedup();
    macs
}

pub fn parse_disks(stdout: &[u8]) -> Vec<Disk> {
    let f = |s: &Value, k: &str| s.get(k).and_then(Value::as_str).filter(|v| !v.is_empty()).map(str::to_owned);
    specs(stdout)
        .iter()
        .map(|s| Disk {
            model: f(s, "model"),
            serial: f(s, "serial"),
            wwid: f(s, "wwid"),
            bus_path: f(s, "bus_path"),
            device: f(s, "dev_path"),
            size: None,
        })
        .collect()
}

/// Talos's model matcher takes a glob (`Samsung SSD 980*`): `*` at the end matches any rest.
fn glob(pattern: &str, value: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => value.starts_with(prefix),
        None => pattern == value,
    }
}

/// Why the machine that answered is not the declared one; `None` when it is.
pub fn mismatch(m: &Machine, r: &Reported) -> Option<String> {
    if let Some(mac) = &m.mac
        && !r.macs.contains(&mac.to_ascii_lowercase())
    {
        return Some(format!(
            "the machine at {} reports the MAC addresses [{}], and fleet.kdl declares {} for {}",
            m.address,
            r.macs.join(", "),
            mac,
            m.hostname
        ));
    }
    if let Some(want) = &m.install_disk {
        let identifying =
            want.serial.is_some() || want.wwid.is_some() || want.model.is_some() || want.bus_path.is_some();
        let fits = |d: &Disk| {
            let same = |w: &Option<String>, h: &Option<String>| w.as_ref().is_none_or(|w| h.as_ref() == Some(w));
            same(&want.serial, &d.serial)
                && same(&want.wwid, &d.wwid)
                && same(&want.bus_path, &d.bus_path)
                && want.model.as_ref().is_none_or(|w| d.model.as_ref().is_some_and(|h| glob(w, h)))
        };
        if identifying && !r.disks.iter().any(fits) {
            return Some(format!(
                "the machine at {} has no disk that matches the install disk fleet.kdl declares for {}",
                m.address, m.hostname
            ));
        }
    }
    None
}

/// What the maintenance service reports of the machine at `m.address`.
fn reported(s: &mut Session<'_>, m: &Machine, plan_links: String, plan_disks: String) -> StepResult<Reported> {
    let get = |what: &str| {
        Cmd::new("talosctl").args([
            "get",
            what,
            "--insecure",
            "--nodes",
            &m.address,
            "--endpoints",
            &m.address,
            "-o",
            "json",
        ])
    };
    let links = s.run(get("links").plan_stdout(plan_links))?;
    let mut r = Reported { macs: parse_links(&links.stdout), disks: Vec::new() };
    if m.install_disk.is_some() {
        let disks = s.run(get("disks").plan_stdout(plan_disks))?;
        r.disks = parse_disks(&disks.stdout);
    }
    Ok(r)
}

/// What `--plan` shows the machine reporting: the declared one.
fn planned_links(m: &Machine) -> String {
    serde_json::json!({"spec": {"hardwareAddr": m.mac.clone().unwrap_or_default()}}).to_string()
}

fn planned_disks(m: &Machine) -> String {
    let d = m.install_disk.clone().unwrap_or_default();
    serde_json::json!({"spec": {"serial": d.serial, "wwid": d.wwid, "model": d.model.map(|x| x.trim_end_matches('*').to_owned()), "bus_path": d.bus_path}}).to_string()
}

/// Step 3 on bare metal, on `clusters` (the clusters talosctl builds, [`super::order`]).
pub fn apply(s: &mut Session<'_>, ctx: &Ctx<'_>, clusters: &[&ClusterTarget]) -> StepResult {
    s.begin(Step::Machines);
    for c in ctx.target.clusters.iter().filter(|c| c.managed) {
        s.note(&format!("cluster `{}` is managed by Cluster API: its management cluster builds it", c.name));
    }
    for c in clusters.iter().copied() {
        one_cluster(s, ctx, c)?;
    }
    Ok(())
}

fn one_cluster(s: &mut Session<'_>, ctx: &Ctx<'_>, c: &ClusterTarget) -> StepResult {
    let inv = inventory::metal(s, ctx, &c.name)?;
    let nodes = inventory::metal_nodes(&inv);
    let tc = talosconfig(s, ctx, c)?;
    let bundle = ctx.bundles.get(&c.name).ok_or_else(|| s.failure(format!("no secrets bundle for `{}`", c.name)))?;
    let mut done_cp: Vec<&Node> = Vec::new();
    let mut done_w: Vec<&Node> = Vec::new();
    let order: Vec<(&Node, bool)> =
        nodes.control_plane.iter().map(|n| (n, true)).chain(nodes.workers.iter().map(|n| (n, false))).collect();
    for (i, (node, cp)) in order.iter().copied().enumerate() {
        let Some(m) = inv.machines.iter().find(|m| m.hostname == node.hostname) else { continue };
        let Some(target) = c.nodes().find(|n| n.hostname == node.hostname) else {
            return s.fail(format!("{} is in out/ but not in fleet.kdl; run `fleetc build`", node.hostname));
        };
        s.note(&format!("{} {} at {}", if cp { "control-plane node" } else { "worker" }, node.hostname, node.address));
        // Configured already: it answers with the cluster's client certificate.
        let known = s.try_run(talosctl(&tc, node).args(["version", "--short"]).plan_stdout(""))?;
        let configured = !s.plan && known.success();
        if configured {
            s.note(&format!("{} runs the cluster's config already: left as it is", node.hostname));
        } else {
            if s.plan {
                s.note(&format!(
                    "if {} answers with the cluster's certificate (`version` above), it is configured and left as it is; otherwise:",
                    node.hostname
                ));
            }
            let r = reported(s, m, planned_links(m), planned_disks(m))?;
            if let Some(why) = mismatch(m, &r) {
                return s.fail(format!("{why}: refused, no config was sent (R13)"));
            }
            s.note(&format!("{} is the declared machine ({})", node.hostname, identity(m)));
            let file = ctx.work.file(&format!("{}.machine.yaml", node.hostname));
            let cmd = render::node_config(s, &ctx.work, ctx.out, &ctx.target.env, c, target, bundle)?;
            s.run(cmd.args(["--output", &display(&file), "--force"]))?;
            s.run(Cmd::new("talosctl").args([
                "apply-config",
                "--insecure",
                "--nodes",
                &node.address,
                "--endpoints",
                &node.address,
                "--file",
                &display(&file),
            ]))?;
            wait_up(s, &tc, node)?;
        }
        if cp && i == 0 {
            if configured {
                s.note("etcd was bootstrapped when this node was first configured: not again");
            } else {
                s.note("etcd is bootstrapped once, on the first control-plane node");
                s.run(talosctl(&tc, node).args(["bootstrap"]))?;
            }
            s.run(talosctl(&tc, node).args(["kubeconfig", &kubeconfig_file(ctx, c), "--force"]))?;
        }
        if cp {
            done_cp.push(node);
        } else {
            done_w.push(node);
        }
        let via = done_cp.first().copied().unwrap_or(node);
        health(s, &tc, via, &done_cp, &done_w)?;
    }
    Ok(())
}

/// How often, and how many times, fleetc asks a machine that took its config whether it runs
/// it yet: it installs to its disk and reboots first (15 minutes in all).
pub const UP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(10);
pub const UP_TRIES: u32 = 90;

/// Waits until the machine answers with the cluster's client certificate.
fn wait_up(s: &mut Session<'_>, tc: &str, node: &Node) -> StepResult {
    if s.plan {
        s.note(&format!(
            "waits until {} installs, reboots and answers `version` with the cluster's certificate (every {}s, at most {} times)",
            node.hostname,
            UP_INTERVAL.as_secs(),
            UP_TRIES
        ));
        return Ok(());
    }
    for _ in 0..UP_TRIES {
        if s.try_run(talosctl(tc, node).args(["version", "--short"]))?.success() {
            return Ok(());
        }
        s.sleep(UP_INTERVAL);
    }
    s.fail(format!(
        "{} took its config and never answered with the cluster's certificate; look at its console (`talosctl dmesg --insecure --nodes {}`)",
        node.hostname, node.address
    ))
}

fn identity(m: &Machine) -> String {
    let mut parts = Vec::new();
    if let Some(mac) = &m.mac {
        parts.push(format!("MAC {mac}"));
    }
    if m.install_disk.is_some() {
        parts.push("its install disk".to_owned());
    }
    parts.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(mac: Option<&str>, serial: Option<&str>) -> Machine {
        Machine {
            hostname: "main-cp-1".into(),
            role: "controlplane".into(),
            address: "10.30.0.11".into(),
            mac: mac.map(Into::into),
            install_disk: serial.map(|s| Disk { serial: Some(s.into()), ..Disk::default() }),
            ..Machine::default()
        }
    }

    /// `talosctl get links -o json`: one object per link, pretty-printed one after another.
    #[test]
    fn links_and_disks_are_read_from_talosctl_json() {
        let links = br#"{
    "node": "10.30.0.11",
    "metadata": {"namespace": "network", "type": "LinkStatuses.net.talos.dev", "id": "eno1"},
    "spec": {"hardwareAddr": "3C:EC:EF:10:00:11", "permanentAddr": "3c:ec:ef:10:00:11"}
}
{
    "node": "10.30.0.11",
    "metadata": {"namespace": "network", "type": "LinkStatuses.net.talos.dev", "id": "lo"},
    "spec": {"hardwareAddr": "00:00:00:00:00:00"}
}"#;
        assert_eq!(parse_links(links), ["3c:ec:ef:10:00:11"]);
        let disks =
            br#"{"spec": {"dev_path": "/dev/nvme0n1", "serial": "S6PNNS0T500123", "model": "Samsung SSD 980 PRO"}}"#;
        let d = parse_disks(disks);
        assert_eq!(d[0].serial.as_deref(), Some("S6PNNS0T500123"));
        assert_eq!(d[0].device.as_deref(), Some("/dev/nvme0n1"));
    }

    #[test]
    fn a_machine_that_is_not_the_declared_one_is_refused() {
        let r = Reported { macs: vec!["3c:ec:ef:10:00:11".into()], disks: Vec::new() };
        assert_eq!(mismatch(&machine(Some("3C:EC:EF:10:00:11"), None), &r), None);
        assert!(mismatch(&machine(Some("3c:ec:ef:10:00:99"), None), &r).is_some());
        let disk = Disk { serial: Some("S6PNNS0T500123".into()), ..Disk::default() };
        let r = Reported { macs: Vec::new(), disks: vec![disk] };
        assert_eq!(mismatch(&machine(None, Some("S6PNNS0T500123")), &r), None);
        assert!(mismatch(&machine(None, Some("OTHER")), &r).is_some());
    }
}
