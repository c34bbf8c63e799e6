//! Bare metal (docs/metal.md): `fleetc apply <env>` on a `metal` environment has no OpenTofu
//! root. For each cluster it reads the inventory out/ holds (`metal/<env>/<cluster>/
//! machines.yaml`, written by `emit::metal`, read by `inventory::metal`), and for
//! each machine, control plane first and one at a time, then the workers:
//!
//! 1. **Configured already?** `talosctl … version` at its static address with the cluster's
//!    talosconfig: a machine that answers with the cluster's client certificate runs its
//!    config, and is left as it is (a rerun resumes).
//! 2. **Where is it?** A machine in maintenance mode has no config, so it has the address
//!    DHCP gave it (Talos runs DHCP on every physical link until a config says otherwise:
//!    siderolabs/talos v1.13.9 `internal/app/machined/pkg/controllers/network/
//!    operator_config.go` l.287-335): the node's `maintenance-address`, else the lease of its
//!    MAC in the `--leases` file ([`Leases`]), else its static address (a DHCP reservation).
//! 3. **Is it the declared machine?** A machine in maintenance mode accepts a config from
//!    anyone (R13), so before sending one fleetc asks it what it is, through the maintenance
//!    service (`talosctl get links|disks --insecure -o json`: `cmd/talosctl/cmd/talos/get.go`
//!    l.321, the `--insecure` flag; both resource types are `NonSensitive`, which the access
//!    policy lets anyone read, `internal/app/resources/access.go` l.25-60). It must have the
//!    declared MAC ([`Reported::macs`]), exactly one disk that Talos's install-disk selector
//!    matches ([`disk_matches`]), and every link name its config names ([`super::target::
//!    required_links`]). A machine with nothing to recognise it by is refused before it is
//!    asked. Every difference is listed; nothing is sent.
//! 4. **SecureBoot** (a `secure-boot` pool): `talosctl get securitystate --insecure` must show
//!    `secureBoot: true` (SecureBoot on and the firmware out of setup mode) before a config that
//!    seals a volume to the TPM leaves; fleetc waits for the person enrolling the keys, then
//!    refuses ([`secure_boot`]).
//! 5. **Config**: rendered by Talos's own generator exactly as `fleetc talos render` does
//!    (`render::node_config`), into the private directory, then `talosctl apply-config
//!    --insecure` to the maintenance address; fleetc then waits for the machine at its static
//!    address.
//! 6. The first control-plane node is bootstrapped until its etcd member shows
//!    ([`bootstrap`]), on every run; the kubeconfig is fetched; after each node, `talosctl
//!    health` expects the nodes configured so far.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::ctx::Ctx;
use super::inventory;
use super::nodes::{Node, health, kubeconfig_file, talosconfig, talosctl};
use super::render;
use super::runner::Cmd;
use super::session::{Session, Step, StepResult};
use super::target::{ClusterTarget, NodeTarget};
use super::work::display;
use crate::layout::inventory::{Disk, Machine};
use crate::model::values::{SizeMatch, SizeOp};

/// A disk as a machine in maintenance mode reports it: siderolabs/talos v1.13.9
/// `pkg/machinery/resources/block/disk.go` l.26-53 (`DiskSpec`, its YAML names are the JSON
/// keys of `talosctl get disks -o json`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReportedDisk {
    pub dev_path: String,
    pub size: u64,
    pub model: String,
    pub serial: String,
    pub wwid: String,
    pub bus_path: String,
    pub transport: String,
    pub readonly: bool,
    pub cdrom: bool,
}

/// What a machine in maintenance mode reports of itself.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reported {
    /// Every link's `hardwareAddr` and `permanentAddr`, lower case.
    pub macs: Vec<String>,
    /// Every name a link answers to: its name, alias and alternative names.
    pub links: Vec<String>,
    pub disks: Vec<ReportedDisk>,
}

/// `talosctl get … -o json` prints one JSON object per resource, `{"node", "metadata",
/// "spec"}` (`cmd/talosctl/cmd/talos/output/json.go` l.47-85; cosi-project/runtime v1.14.1
/// `pkg/resource/resource.go` l.62-70, `MarshalYAML`).
fn resources(stdout: &[u8]) -> Vec<Value> {
    serde_json::Deserializer::from_slice(stdout).into_iter::<Value>().filter_map(Result::ok).collect()
}

fn text(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// Links: `metadata.id` is the link's name; `spec.alias` and `spec.altNames` are names Talos
/// also finds it by (`internal/app/machined/pkg/controllers/network/link_spec.go`
/// l.173-193); `spec.hardwareAddr` and `spec.permanentAddr` its MACs
/// (`pkg/machinery/resources/network/link_status.go` l.29-37).
pub fn parse_links(stdout: &[u8]) -> (Vec<String>, Vec<String>) {
    let mut macs = Vec::new();
    let mut names = Vec::new();
    for r in resources(stdout) {
        let id = r.get("metadata").map(|m| text(m, "id")).unwrap_or_default();
        let spec = r.get("spec").cloned().unwrap_or_default();
        for k in ["hardwareAddr", "permanentAddr"] {
            let m = text(&spec, k).to_ascii_lowercase();
            if !m.is_empty() && m != "00:00:00:00:00:00" {
                macs.push(m);
            }
        }
        names.push(id);
        names.push(text(&spec, "alias"));
        if let Some(alt) = spec.get("altNames").and_then(Value::as_array) {
            names.extend(alt.iter().filter_map(Value::as_str).map(str::to_owned));
        }
    }
    for v in [&mut macs, &mut names] {
        v.retain(|x| !x.is_empty());
        v.sort();
        v.dedup();
    }
    (macs, names)
}

pub fn parse_disks(stdout: &[u8]) -> Vec<ReportedDisk> {
    resources(stdout)
        .iter()
        .filter_map(|r| r.get("spec"))
        .map(|s| ReportedDisk {
            dev_path: text(s, "dev_path"),
            size: s.get("size").and_then(Value::as_u64).unwrap_or(0),
            model: text(s, "model"),
            serial: text(s, "serial"),
            wwid: text(s, "wwid"),
            bus_path: text(s, "bus_path"),
            transport: text(s, "transport"),
            readonly: s.get("readonly").and_then(Value::as_bool).unwrap_or(false),
            cdrom: s.get("cdrom").and_then(Value::as_bool).unwrap_or(false),
        })
        .collect()
}

/// `get securitystate`: `spec.secureBoot` (`pkg/machinery/resources/runtime/
/// security_status.go` l.54-62), true only when SecureBoot is on and the firmware is not in
/// setup mode (`internal/app/machined/pkg/controllers/runtime/security_state.go` l.97-99).
pub fn parse_secure_boot(stdout: &[u8]) -> bool {
    resources(stdout)
        .iter()
        .filter_map(|r| r.get("spec"))
        .any(|s| s.get("secureBoot").and_then(Value::as_bool) == Some(true))
}

/// `get etcdmembers`: the local member, `spec.memberID`, exists only while etcd runs healthy
/// (`pkg/machinery/resources/etcd/member.go` l.16-30; `internal/app/machined/pkg/controllers/
/// etcd/member.go` l.68-96).
pub fn parse_member(stdout: &[u8]) -> Option<String> {
    resources(stdout).iter().filter_map(|r| r.get("spec")).map(|s| text(s, "memberID")).find(|m| !m.is_empty())
}

/// Talos's glob, which its install-disk selector applies to `serial`, `wwid`, `model` and
/// `bus_path` (`pkg/machinery/config/types/v1alpha1/v1alpha1_provider.go` l.1357-1406,
/// `glob(pattern, disk.<field>)`, bound in `pkg/machinery/cel/celenv/celenv.go` l.45-51 to
/// ryanuber/go-glob v1.0.0 `glob.go` l.11-56): `*` anywhere stands for any run of characters,
/// nothing else is special.
pub fn glob(pattern: &str, subject: &str) -> bool {
    if pattern.is_empty() {
        return subject.is_empty();
    }
    if pattern == "*" {
        return true;
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return subject == pattern;
    }
    let leading = pattern.starts_with('*');
    let trailing = pattern.ends_with('*');
    let end = parts.len() - 1;
    let mut rest = subject;
    for (i, part) in parts[..end].iter().enumerate() {
        let Some(idx) = rest.find(part) else { return false };
        if i == 0 && !leading && idx != 0 {
            return false;
        }
        rest = &rest[idx + part.len()..];
    }
    trailing || rest.ends_with(parts[end])
}

/// Whether Talos's install-disk selector `want` selects `d` (`DiskMatchExpression`,
/// `v1alpha1_provider.go` l.1323-1478): every written field matches (`size` by its operator,
/// `==` when none), and the disk has a transport, is not read-only and is not a CD-ROM. A
/// `device` is the disk's path itself.
pub fn disk_matches(want: &Disk, d: &ReportedDisk) -> bool {
    let g = |w: &Option<String>, h: &str| w.as_ref().is_none_or(|w| glob(w, h));
    let size = want.size.as_ref().is_none_or(|s| match s.parse::<SizeMatch>() {
        Ok(m) => match m.op {
            SizeOp::Bare | SizeOp::Eq => d.size == m.bytes,
            SizeOp::Ge => d.size >= m.bytes,
            SizeOp::Le => d.size <= m.bytes,
            SizeOp::Gt => d.size > m.bytes,
            SizeOp::Lt => d.size < m.bytes,
        },
        Err(_) => false,
    });
    g(&want.serial, &d.serial)
        && g(&want.wwid, &d.wwid)
        && g(&want.model, &d.model)
        && g(&want.bus_path, &d.bus_path)
        && want.device.as_ref().is_none_or(|p| *p == d.dev_path)
        && size
        && !d.transport.is_empty()
        && !d.readonly
        && !d.cdrom
}

fn selector_text(d: &Disk) -> String {
    [("serial", &d.serial), ("wwid", &d.wwid), ("model", &d.model), ("bus-path", &d.bus_path), ("size", &d.size)]
        .iter()
        .chain([("device", &d.device)].iter())
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}=\"{v}\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

fn disk_text(d: &ReportedDisk) -> String {
    let mut parts = vec![d.dev_path.clone()];
    for (k, v) in [("serial", &d.serial), ("wwid", &d.wwid), ("model", &d.model), ("transport", &d.transport)] {
        if !v.is_empty() {
            parts.push(format!("{k} {v}"));
        }
    }
    parts.join(" ")
}

/// What recognises `m` in maintenance mode: its MAC, or its install disk's serial or WWID.
/// A model or bus path names a kind of machine, a size or device path any machine (R13).
pub fn identifiable(m: &Machine) -> bool {
    m.mac.is_some() || m.install_disk.as_ref().is_some_and(|d| d.serial.is_some() || d.wwid.is_some())
}

/// Every way the machine that answered differs from the declared one (empty: it is the
/// declared machine).
pub fn differences(m: &Machine, t: &NodeTarget, r: &Reported) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(mac) = &m.mac
        && !r.macs.contains(&mac.to_ascii_lowercase())
    {
        out.push(format!("its links' MAC addresses are [{}], not {mac}", r.macs.join(", ")));
    }
    if let Some(want) = &m.install_disk {
        let matching: Vec<&ReportedDisk> = r.disks.iter().filter(|d| disk_matches(want, d)).collect();
        let all = || r.disks.iter().map(disk_text).collect::<Vec<_>>().join("; ");
        match matching.len() {
            1 => {}
            0 => out.push(format!("no disk matches the install disk {} (its disks: {})", selector_text(want), all())),
            n => out.push(format!(
                "{n} disks match the install disk {} ({}): Talos would install to the first; declare what only one has (its serial)",
                selector_text(want),
                matching.iter().map(|d| disk_text(d)).collect::<Vec<_>>().join("; ")
            )),
        }
    }
    let missing: Vec<&str> = t.required_links.iter().filter(|l| !r.links.contains(l)).map(String::as_str).collect();
    if !missing.is_empty() {
        let have: Vec<&str> = r.links.iter().map(String::as_str).filter(|l| *l != "lo").collect();
        out.push(format!(
            "it has no link {} (its links: {}); a config naming a link it lacks turns off DHCP and leaves it without an address",
            missing.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", "),
            have.join(", ")
        ));
    }
    out
}

/// A DHCP server's leases, MAC → address: `fleetc apply --leases FILE` (docs/metal.md,
/// "Maintenance address"). Two formats, told apart by their content: dnsmasq's lease file
/// (one lease a line: `<expiry> <mac> <ip> <hostname> <client-id>`) and ISC dhcpd's
/// `dhcpd.leases` (`lease <ip> { … hardware ethernet <mac>; binding state active; … }`, later
/// entries superseding earlier ones).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Leases {
    pub by_mac: BTreeMap<String, Ipv4Addr>,
}

fn is_mac(s: &str) -> bool {
    let p: Vec<&str> = s.split(':').collect();
    p.len() == 6 && p.iter().all(|x| x.len() == 2 && x.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl Leases {
    pub fn parse(text: &str) -> Leases {
        let mut by_mac = BTreeMap::new();
        if text.contains("lease ") && text.contains('{') {
            // ISC: blocks in file order, the last one for a MAC wins; a lease no longer
            // active (free, expired, released, abandoned, backup) is no address.
            for block in text.split("lease ").skip(1) {
                let Some((head, body)) = block.split_once('{') else { continue };
                let body = body.split('}').next().unwrap_or("");
                let Ok(ip) = head.trim().parse::<Ipv4Addr>() else { continue };
                let mut mac = None;
                let mut active = true;
                for stmt in body.split(';').map(str::trim) {
                    let words: Vec<&str> = stmt.split_whitespace().collect();
                    match words.as_slice() {
                        ["hardware", "ethernet", m] if is_mac(m) => mac = Some(m.to_ascii_lowercase()),
                        ["binding", "state", state] => active = *state == "active",
                        _ => {}
                    }
                }
                if let Some(mac) = mac {
                    if active {
                        by_mac.insert(mac, ip);
                    } else if by_mac.get(&mac) == Some(&ip) {
                        by_mac.remove(&mac);
                    }
                }
            }
        } else {
            for line in text.lines() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                // dnsmasq: whitespace-separated, the MAC second and the address third.
                let f: Vec<&str> = line.split_whitespace().collect();
                let (ip, mac) = (f.get(2).copied(), f.get(1).copied());
                if let (Some(ip), Some(mac)) = (ip, mac)
                    && is_mac(mac)
                    && let Ok(ip) = ip.parse::<Ipv4Addr>()
                {
                    by_mac.insert(mac.to_ascii_lowercase(), ip);
                }
            }
        }
        Leases { by_mac }
    }

    pub fn read(s: &Session<'_>, path: &Path) -> StepResult<Leases> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| s.failure(format!("cannot read the leases file {}: {e}", path.display())))?;
        let leases = Leases::parse(&text);
        if leases.by_mac.is_empty() {
            return s.fail(format!(
                "the leases file {} holds no lease fleetc can read (a dnsmasq or ISC dhcpd lease file, docs/metal.md)",
                path.display()
            ));
        }
        Ok(leases)
    }
}

/// Where the machine answers in maintenance mode, and why there.
fn maintenance_address(m: &Machine, leases: Option<&Leases>) -> (String, String) {
    if let Some(a) = &m.maintenance_address {
        return (a.clone(), "its `maintenance-address`".into());
    }
    if let (Some(l), Some(mac)) = (leases, &m.mac)
        && let Some(ip) = l.by_mac.get(&mac.to_ascii_lowercase())
    {
        return (ip.to_string(), format!("the lease of {mac} in --leases"));
    }
    (m.address.clone(), "its static address: no `maintenance-address`, no lease; reserve it in DHCP".into())
}

fn insecure_get(what: &str, at: &str) -> Cmd {
    Cmd::new("talosctl").args(["get", what, "--insecure", "--nodes", at, "--endpoints", at, "-o", "json"])
}

/// What the maintenance service at `at` reports of the machine.
fn reported(s: &mut Session<'_>, m: &Machine, t: &NodeTarget, at: &str) -> StepResult<Reported> {
    let links = s.run(insecure_get("links", at).plan_stdout(planned_links(m, t)))?;
    let (macs, names) = parse_links(&links.stdout);
    let mut r = Reported { macs, links: names, disks: Vec::new() };
    if m.install_disk.is_some() {
        let disks = s.run(insecure_get("disks", at).plan_stdout(planned_disks(m)))?;
        r.disks = parse_disks(&disks.stdout);
    }
    Ok(r)
}

/// What `--plan` shows the machine reporting: the declared one.
fn planned_links(m: &Machine, t: &NodeTarget) -> String {
    let mac = m.mac.clone().unwrap_or_default();
    let mut names = t.required_links.clone();
    if names.is_empty() {
        names.push("eno1".into());
    }
    names
        .iter()
        .map(|id| serde_json::json!({"metadata": {"id": id}, "spec": {"hardwareAddr": mac}}).to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn planned_disks(m: &Machine) -> String {
    let d = m.install_disk.clone().unwrap_or_default();
    serde_json::json!({"spec": {"serial": d.serial, "wwid": d.wwid, "model": d.model.map(|x| x.replace('*', "")), "bus_path": d.bus_path, "transport": "nvme"}}).to_string()
}

/// Step 3 on bare metal, on `clusters` (the clusters talosctl builds, [`super::order`]),
/// with the leases file of `--leases`, if given.
pub fn apply(s: &mut Session<'_>, ctx: &Ctx<'_>, clusters: &[&ClusterTarget], leases: Option<&Path>) -> StepResult {
    s.begin(Step::Machines);
    let leases = match leases {
        Some(p) => Some(Leases::read(s, p)?),
        None => None,
    };
    for c in ctx.target.clusters.iter().filter(|c| c.managed) {
        s.note(&format!("cluster `{}` is managed by Cluster API: its management cluster builds it", c.name));
    }
    for c in clusters.iter().copied() {
        one_cluster(s, ctx, c, leases.as_ref())?;
    }
    Ok(())
}

fn one_cluster(s: &mut Session<'_>, ctx: &Ctx<'_>, c: &ClusterTarget, leases: Option<&Leases>) -> StepResult {
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
            configure(s, ctx, c, m, target, node, &tc, bundle, leases)?;
        }
        if cp && i == 0 {
            let others: Vec<&Node> = nodes.control_plane.iter().skip(1).collect();
            bootstrap(s, &tc, node, &others)?;
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

/// Steps 2-5 for one machine in maintenance mode.
#[allow(clippy::too_many_arguments)]
fn configure(
    s: &mut Session<'_>,
    ctx: &Ctx<'_>,
    c: &ClusterTarget,
    m: &Machine,
    target: &NodeTarget,
    node: &Node,
    tc: &str,
    bundle: &Path,
    leases: Option<&Leases>,
) -> StepResult {
    if !identifiable(m) {
        return s.fail(format!(
            "nothing recognises {} in maintenance mode: declare its `mac`, or its install disk's `serial` or `wwid` (R13); refused, no config was sent",
            m.hostname
        ));
    }
    let (at, why) = maintenance_address(m, leases);
    s.note(&format!("{} in maintenance mode is asked at {at} ({why})", m.hostname));
    let r = reported(s, m, target, &at)?;
    let diffs = differences(m, target, &r);
    if !diffs.is_empty() {
        return s.fail(format!(
            "the machine at {at} is not {} as fleet.kdl declares it:\n{}\nrefused, no config was sent (R13)",
            m.hostname,
            diffs.iter().map(|d| format!("- {d}")).collect::<Vec<_>>().join("\n")
        ));
    }
    s.note(&format!("{} is the declared machine ({})", node.hostname, identity(m, target)));
    if target.secure_boot {
        secure_boot(s, m, target, &at)?;
    }
    let file = ctx.work.file(&format!("{}.machine.yaml", node.hostname));
    let cmd = render::node_config(s, &ctx.work, ctx.out, &ctx.target.env, c, target, bundle)?;
    s.run(cmd.args(["--output", &display(&file), "--force"]))?;
    s.run(Cmd::new("talosctl").args([
        "apply-config",
        "--insecure",
        "--nodes",
        &at,
        "--endpoints",
        &at,
        "--file",
        &display(&file),
    ]))?;
    wait_up(s, tc, node)
}

/// How often, and how many times, fleetc asks a SecureBoot machine whether SecureBoot is on:
/// the person at its console enrols the keys and it reboots (10 minutes in all).
pub const SECURE_BOOT_INTERVAL: Duration = Duration::from_secs(10);
pub const SECURE_BOOT_TRIES: u32 = 60;

/// A SecureBoot machine must report SecureBoot on before its config leaves: a TPM key with
/// `checkSecurebootStatusOnEnroll` (what `emit::talos` writes for a SecureBoot pool) fails to
/// enrol with SecureBoot off or in setup mode (siderolabs/talos v1.13.9
/// `internal/pkg/encryption/keys/tpm2.go` l.56-65), and STATE is never provisioned.
fn secure_boot(s: &mut Session<'_>, m: &Machine, t: &NodeTarget, at: &str) -> StepResult {
    let get = || insecure_get("securitystate", at).plan_stdout(r#"{"spec": {"secureBoot": true}}"#);
    if s.plan {
        s.run(get())?;
        s.note(&format!(
            "waits until {} reports `secureBoot: true` (keys enrolled, not in setup mode; every {}s, at most {} times); refuses otherwise",
            m.hostname,
            SECURE_BOOT_INTERVAL.as_secs(),
            SECURE_BOOT_TRIES
        ));
        return Ok(());
    }
    for n in 0..SECURE_BOOT_TRIES {
        let out = s.try_run(get())?;
        if out.success() && parse_secure_boot(&out.stdout) {
            s.note(&format!("{} boots with SecureBoot on", m.hostname));
            return Ok(());
        }
        if n == 0 {
            s.note(&format!(
                "{} does not report SecureBoot on: enrol the keys at its console (docs/metal.md, \"SecureBoot\"); fleetc waits",
                m.hostname
            ));
        }
        s.sleep(SECURE_BOOT_INTERVAL);
    }
    let seal = if t.seals_to_tpm {
        "its config seals a volume to the TPM, which Talos refuses while SecureBoot is off or in setup mode"
    } else {
        "its pool declares `secure-boot`"
    };
    s.fail(format!(
        "{} at {at} never reported SecureBoot on (`talosctl get securitystate --insecure`: `secureBoot: false`); {seal}. Enrol the SecureBoot keys (docs/metal.md, \"SecureBoot\") and run apply again; refused, no config was sent",
        m.hostname
    ))
}

/// How often, and how many times, fleetc asks a machine that took its config whether it runs
/// it yet: it installs to its disk and reboots first (15 minutes in all).
pub const UP_INTERVAL: Duration = Duration::from_secs(10);
pub const UP_TRIES: u32 = 90;

/// Waits until the machine answers at its static address with the cluster's client
/// certificate.
fn wait_up(s: &mut Session<'_>, tc: &str, node: &Node) -> StepResult {
    if s.plan {
        s.note(&format!(
            "waits until {} installs, reboots and answers `version` at {} with the cluster's certificate (every {}s, at most {} times)",
            node.hostname,
            node.address,
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
        "{} took its config and never answered at {} with the cluster's certificate; look at its console",
        node.hostname, node.address
    ))
}

/// How often, and how many times, fleetc tries the etcd bootstrap (5 minutes in all).
pub const BOOTSTRAP_INTERVAL: Duration = Duration::from_secs(10);
pub const BOOTSTRAP_TRIES: u32 = 30;

/// Bootstraps etcd on the first control-plane node until its member shows, on every run: a
/// bootstrap that failed (Talos answers FailedPrecondition until time syncs and bootstrap is
/// allowed, siderolabs/talos v1.13.9 `internal/app/machined/internal/server/v1alpha1/
/// v1alpha1_server.go` l.439-458; `talosctl bootstrap` does not retry,
/// `cmd/talosctl/cmd/talos/bootstrap.go` l.69-74) is tried again, and a rerun after one
/// bootstraps. AlreadyExists (etcd has data) is not an error: fleetc waits for the member.
/// Never while another control-plane node runs the cluster's config: etcd exists there, and a
/// bootstrap of a replaced first node would start a second cluster beside it (it joins).
fn bootstrap(s: &mut Session<'_>, tc: &str, node: &Node, others: &[&Node]) -> StepResult {
    let members = || talosctl(tc, node).args(["get", "etcdmembers", "-o", "json"]).plan_stdout("");
    if s.plan {
        s.note(
            "etcd: bootstrapped on the first control-plane node unless its member shows already or another control-plane node runs the cluster's config (it joins that etcd)",
        );
        s.run(members())?;
        s.run(talosctl(tc, node).args(["bootstrap"]))?;
        s.note(&format!(
            "both again, every {}s and at most {} times, until `get etcdmembers` shows the member",
            BOOTSTRAP_INTERVAL.as_secs(),
            BOOTSTRAP_TRIES
        ));
        return Ok(());
    }
    let mut last = String::new();
    for n in 0..BOOTSTRAP_TRIES {
        let out = s.try_run(members())?;
        if out.success()
            && let Some(id) = parse_member(&out.stdout)
        {
            s.note(&format!("etcd runs on {} (member {id})", node.hostname));
            return Ok(());
        }
        if n == 0 {
            for o in others {
                if s.try_run(talosctl(tc, o).args(["version", "--short"]))?.success() {
                    s.note(&format!(
                        "{} runs the cluster's config: etcd exists, {} joins it (no bootstrap)",
                        o.hostname, node.hostname
                    ));
                    return Ok(());
                }
            }
        }
        let b = s.try_run(talosctl(tc, node).args(["bootstrap"]))?;
        let stderr = String::from_utf8_lossy(&b.stderr);
        last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
        if b.success() {
            s.note("etcd bootstrap accepted; waiting for its member");
        } else if last.contains("AlreadyExists") {
            s.note("etcd has data already (AlreadyExists): waiting for its member");
        } else {
            s.note(&format!("etcd bootstrap not taken yet ({last}): again"));
        }
        s.sleep(BOOTSTRAP_INTERVAL);
    }
    s.fail(format!(
        "etcd on {} never showed a member after {BOOTSTRAP_TRIES} bootstrap attempts (last: {last}); look at `talosctl --nodes {} service etcd` and run apply again",
        node.hostname, node.address
    ))
}

fn identity(m: &Machine, t: &NodeTarget) -> String {
    let mut parts = Vec::new();
    if let Some(mac) = &m.mac {
        parts.push(format!("MAC {mac}"));
    }
    if let Some(d) = &m.install_disk {
        parts.push(format!("one install disk {}", selector_text(d)));
    }
    if !t.required_links.is_empty() {
        parts.push(format!("links {}", t.required_links.join(", ")));
    }
    parts.join(", ")
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

    fn target(links: &[&str]) -> NodeTarget {
        NodeTarget {
            hostname: "main-cp-1".into(),
            pool: "cp".into(),
            role: crate::model::Role::ControlPlane,
            schematic_id: String::new(),
            installer: String::new(),
            required_links: links.iter().map(|l| (*l).to_owned()).collect(),
            secure_boot: false,
            seals_to_tpm: false,
        }
    }

    fn nvme(serial: &str) -> ReportedDisk {
        ReportedDisk {
            dev_path: "/dev/nvme0n1".into(),
            size: 512_110_190_592,
            serial: serial.into(),
            model: "Samsung SSD 980 PRO 500GB".into(),
            transport: "nvme".into(),
            ..ReportedDisk::default()
        }
    }

    /// `talosctl get links -o json`: one object per link, pretty-printed one after another.
    #[test]
    fn links_and_disks_are_read_from_talosctl_json() {
        let links = br#"{
    "metadata": {"namespace": "network", "type": "LinkStatuses.net.talos.dev", "id": "eno1"},
    "node": "10.30.0.11",
    "spec": {"altNames": ["enp3s0"], "hardwareAddr": "3C:EC:EF:10:00:11", "permanentAddr": "3c:ec:ef:10:00:11"}
}
{
    "metadata": {"namespace": "network", "type": "LinkStatuses.net.talos.dev", "id": "lo"},
    "node": "10.30.0.11",
    "spec": {"hardwareAddr": "00:00:00:00:00:00"}
}"#;
        let (macs, names) = parse_links(links);
        assert_eq!(macs, ["3c:ec:ef:10:00:11"]);
        assert_eq!(names, ["eno1", "enp3s0", "lo"]);
        let disks = br#"{"spec": {"dev_path": "/dev/nvme0n1", "size": 512110190592, "serial": "S6PNNS0T500123", "model": "Samsung SSD 980 PRO", "transport": "nvme", "readonly": false, "cdrom": false}}"#;
        let d = parse_disks(disks);
        assert_eq!(d[0].serial, "S6PNNS0T500123");
        assert_eq!(d[0].size, 512_110_190_592);
        assert_eq!(d[0].transport, "nvme");
        assert!(parse_secure_boot(br#"{"metadata": {"id": "securitystate"}, "spec": {"secureBoot": true}}"#));
        assert!(!parse_secure_boot(br#"{"metadata": {"id": "securitystate"}, "spec": {"secureBoot": false}}"#));
        assert_eq!(
            parse_member(br#"{"metadata": {"id": "local"}, "spec": {"memberID": "8a1c6d7e2f3b4c5d"}}"#).as_deref(),
            Some("8a1c6d7e2f3b4c5d")
        );
        assert_eq!(parse_member(b""), None);
    }

    /// ryanuber/go-glob v1.0.0 `glob_test.go`'s cases, as Talos's disk selector applies them.
    #[test]
    fn the_glob_is_talos_s() {
        assert!(glob("S6PN*", "S6PNNS0T500123"));
        assert!(glob("*980*", "Samsung SSD 980 PRO"));
        assert!(glob("*PRO", "Samsung SSD 980 PRO"));
        assert!(glob("Sam*980*PRO", "Samsung SSD 980 PRO"));
        assert!(glob("*", ""));
        assert!(glob("", ""));
        assert!(!glob("", "x"));
        assert!(!glob("S6PN", "S6PNNS0T500123"), "no glob: equality");
        assert!(!glob("*980", "Samsung SSD 980 PRO"));
        assert!(!glob("X*", "Samsung"));
        assert!(!glob("S?PN*", "S6PNNS0T500123"), "only `*` is special");
    }

    #[test]
    fn every_difference_is_listed() {
        let r = Reported {
            macs: vec!["3c:ec:ef:10:00:11".into()],
            links: vec!["enp3s0".into(), "lo".into()],
            disks: vec![nvme("S6PNNS0T500123")],
        };
        assert!(differences(&machine(Some("3C:EC:EF:10:00:11"), Some("S6PN*")), &target(&["enp3s0"]), &r).is_empty());
        let d = differences(&machine(Some("3c:ec:ef:10:00:99"), Some("OTHER")), &target(&["eno1", "enp3s0"]), &r);
        assert_eq!(d.len(), 3, "{d:#?}");
        assert!(d[0].contains("3c:ec:ef:10:00:99"));
        assert!(d[1].contains("no disk matches") && d[1].contains("S6PNNS0T500123"));
        assert!(d[2].contains("`eno1`") && !d[2].contains("`enp3s0`"));
    }

    /// Exactly one disk: two that match the selector are a difference; a USB stick, a CD-ROM,
    /// a read-only disk or one without a transport is never a match (Talos excludes them).
    #[test]
    fn the_install_disk_matches_one_disk_as_talos_selects() {
        let want = Disk { model: Some("Samsung*".into()), ..Disk::default() };
        let m =
            Machine { install_disk: Some(want.clone()), mac: Some("3c:ec:ef:10:00:11".into()), ..machine(None, None) };
        let mut r = Reported { macs: vec!["3c:ec:ef:10:00:11".into()], links: vec![], disks: vec![nvme("A")] };
        assert!(differences(&m, &target(&[]), &r).is_empty());
        r.disks.push(ReportedDisk { dev_path: "/dev/nvme1n1".into(), ..nvme("B") });
        let d = differences(&m, &target(&[]), &r);
        assert!(d[0].starts_with("2 disks match"), "{d:?}");
        for (f, label) in [
            (Box::new(|d: &mut ReportedDisk| d.transport.clear()) as Box<dyn Fn(&mut ReportedDisk)>, "no transport"),
            (Box::new(|d: &mut ReportedDisk| d.readonly = true), "read-only"),
            (Box::new(|d: &mut ReportedDisk| d.cdrom = true), "cdrom"),
        ] {
            let mut x = nvme("A");
            f(&mut x);
            assert!(!disk_matches(&want, &x), "{label}");
        }
        let sized = Disk { size: Some("<= 600GB".into()), serial: Some("A".into()), ..Disk::default() };
        assert!(disk_matches(&sized, &nvme("A")));
        assert!(!disk_matches(&Disk { size: Some("> 600GB".into()), ..sized }, &nvme("A")));
    }

    #[test]
    fn a_machine_with_nothing_to_recognise_it_by_is_not_identifiable() {
        assert!(identifiable(&machine(Some("3c:ec:ef:10:00:11"), None)));
        assert!(identifiable(&machine(None, Some("S6PN"))));
        let sized = Machine {
            install_disk: Some(Disk { size: Some("<= 1TB".into()), ..Disk::default() }),
            ..machine(None, None)
        };
        assert!(!identifiable(&sized));
        let model = Machine {
            install_disk: Some(Disk { model: Some("Samsung*".into()), ..Disk::default() }),
            ..machine(None, None)
        };
        assert!(!identifiable(&model));
    }

    #[test]
    fn leases_are_read_from_dnsmasq_and_isc_dhcpd() {
        let dnsmasq = "1733400000 3c:ec:ef:10:00:11 10.30.0.101 cp-1 01:3c:ec:ef:10:00:11\n1733400000 3C:EC:EF:10:00:12 10.30.0.102 * *\nduid 00:01:00:01\n";
        let l = Leases::parse(dnsmasq);
        assert_eq!(l.by_mac.get("3c:ec:ef:10:00:11"), Some(&Ipv4Addr::new(10, 30, 0, 101)));
        assert_eq!(l.by_mac.get("3c:ec:ef:10:00:12"), Some(&Ipv4Addr::new(10, 30, 0, 102)));
        let isc = "# The format of this file is documented in the dhcpd.leases(5) manual page.\nlease 10.30.0.150 {\n  starts 4 2026/12/03 10:00:00;\n  binding state active;\n  hardware ethernet 3c:ec:ef:10:00:11;\n}\nlease 10.30.0.151 {\n  binding state active;\n  hardware ethernet 3c:ec:ef:10:00:12;\n}\nlease 10.30.0.151 {\n  binding state free;\n  hardware ethernet 3c:ec:ef:10:00:12;\n}\n";
        let l = Leases::parse(isc);
        assert_eq!(l.by_mac.get("3c:ec:ef:10:00:11"), Some(&Ipv4Addr::new(10, 30, 0, 150)));
        assert_eq!(l.by_mac.get("3c:ec:ef:10:00:12"), None, "a freed lease is no address");
    }

    #[test]
    fn the_maintenance_address_is_declared_then_leased_then_static() {
        let leases = Leases::parse("1 3c:ec:ef:10:00:11 10.30.0.101 * *\n");
        let m = machine(Some("3c:ec:ef:10:00:11"), None);
        assert_eq!(maintenance_address(&m, Some(&leases)).0, "10.30.0.101");
        assert_eq!(maintenance_address(&m, None).0, "10.30.0.11");
        let declared = Machine { maintenance_address: Some("10.30.0.200".into()), ..m };
        assert_eq!(maintenance_address(&declared, Some(&leases)).0, "10.30.0.200");
    }
}
