//! The Talos API tunnel on Scaleway (R13, issue 34): nodes have no public address, and no
//! gateway rule forwards their port 50000 (a node in maintenance mode accepts a config from
//! whoever sends one first). While the Talos API switch is open, the public gateway's SSH
//! bastion is enabled, admitting fleet.kdl's `admin-ranges` only; fleetc checks the ranges the
//! provider read back (the cloud root's [`BASTION_OUTPUT`]) and then opens one `ssh` to the
//! bastion that forwards each node's `talos_endpoint` (`127.0.0.1:<port>`, the cloud root's
//! inventory) to the node's private address, port 50000. talosctl and the talos provider dial
//! the loopback end; the Talos API certificate carries 127.0.0.1 (the Talos emitter's
//! `machine_cert_sans`), and the name they verify is the endpoint's host: the Talos client's
//! target is `dns:///<endpoint>` (siderolabs/talos v1.13.9 `pkg/machinery/client/connection.go`
//! `getTarget`) and its TLS config names no server, so gRPC verifies the authority's host.
//!
//! The `ssh` is a control master that goes to the background once the forwards listen
//! (`-f` with `ExitOnForwardFailure`: openssh/openssh-portable V_9_6_P1 `ssh.c` l.2020-2051
//! sets the local listeners up, and fails on one that cannot listen, before `fork_postauth`
//! at l.2301, which detaches and points the standard streams at /dev/null, l.1843-1851), so
//! the command returns when the tunnel is usable. It is closed with `ssh -O exit` through its
//! control socket, in the private directory, before the switch closes; closing the switch
//! (the bastion disabled) ends the tunnel in any case. `BatchMode` makes ssh fail rather than
//! ask for anything: the key comes from the operator's agent or `~/.ssh` (one of the project's
//! SSH keys, which the bastion authenticates), never from an argument. The bastion's host key
//! is kept per environment in the working copy (`ssh/<env>.known_hosts`): the first run
//! records it, a later change fails the run.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::ctx::Ctx;
use super::inventory::Inventory;
use super::runner::Cmd;
use super::session::{Session, StepResult};
use super::work::display;
use crate::layout::names::{BASTION_OUTPUT, BASTION_PORT, BASTION_USER, TALOS_API_PORT, TUNNEL_ADDRESS};
use crate::layout::paths::CLOUD;

/// The gateway's SSH bastion as the cloud root's [`BASTION_OUTPUT`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bastion {
    pub address: String,
    pub port: u16,
    pub enabled: bool,
    pub allowed: BTreeSet<String>,
}

/// The cloud root's [`BASTION_OUTPUT`], as `tofu output -json` prints it.
pub fn parse(bytes: &[u8]) -> Result<Bastion, String> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("the cloud root's `{BASTION_OUTPUT}` output is not JSON: {e}"))?;
    let v = v.get("value").unwrap_or(&v);
    let address = v.get("address").and_then(Value::as_str).ok_or(format!("`{BASTION_OUTPUT}` has no address"))?;
    let port = v
        .get("port")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
        .ok_or(format!("`{BASTION_OUTPUT}` has no port"))?;
    let allowed = v
        .get("allowed_ip_ranges")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(Bastion {
        address: address.to_owned(),
        port,
        enabled: v.get("enabled").and_then(Value::as_bool).unwrap_or(false),
        allowed,
    })
}

/// Refuses a bastion that is not enabled or admits anything but exactly `admin_ranges`.
pub fn check(b: &Bastion, admin_ranges: &[String]) -> Result<(), String> {
    let want: BTreeSet<String> = admin_ranges.iter().cloned().collect();
    if want.is_empty() {
        return Err("fleet.kdl gives no `admin-ranges`: the bastion would admit every address".to_owned());
    }
    if b.allowed != want {
        let show = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(" ");
        return Err(format!(
            "the gateway's SSH bastion admits [{}], not fleet.kdl's admin-ranges [{}]: no tunnel is opened (R13)",
            show(&b.allowed),
            show(&want)
        ));
    }
    if !b.enabled {
        return Err("the gateway's SSH bastion is not enabled after the switch opened".to_owned());
    }
    Ok(())
}

/// One `-L` forward per node of `inv`: its `talos_endpoint` (which must be on
/// [`TUNNEL_ADDRESS`], so that nothing listens beyond the operator's machine) to its address,
/// port 50000.
pub fn forwards(inv: &Inventory) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for nodes in inv.values() {
        for n in nodes.control_plane.iter().chain(&nodes.workers) {
            let port = n
                .talos_endpoint
                .strip_prefix(&format!("{TUNNEL_ADDRESS}:"))
                .filter(|p| !p.is_empty() && !p.contains(':'))
                .ok_or(format!(
                    "node {}'s Talos endpoint `{}` is not on {TUNNEL_ADDRESS}: the cloud root is older than this build (run `fleetc apply` to bring it up to date)",
                    n.hostname, n.talos_endpoint
                ))?;
            out.push(format!("{TUNNEL_ADDRESS}:{port}:{}:{TALOS_API_PORT}", n.address));
        }
    }
    Ok(out)
}

/// An open tunnel: how to close it.
#[derive(Debug, Clone)]
pub struct Tunnel {
    control: String,
    destination: String,
    port: String,
}

/// ssh's options: never ask, keep the bastion's key per environment, fail when a forward
/// cannot listen, and notice a dead connection.
fn ssh(ctx: &Ctx<'_>, control: &str, port: &str) -> Cmd {
    let known = ctx.tofu_copy.join("ssh").join(format!("{}.known_hosts", ctx.target.env));
    Cmd::new("ssh").args([
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=accept-new",
        "-o",
        &format!("UserKnownHostsFile={}", display(&known)),
        "-o",
        "ExitOnForwardFailure=yes",
        "-o",
        "ServerAliveInterval=15",
        "-S",
        control,
        "-p",
        port,
    ])
}

/// Reads the bastion, checks its ranges, and opens the tunnel to the nodes of `inv`. `opened`
/// holds the tunnel from the moment its command starts, so that the caller closes it even
/// when that command fails or is interrupted.
pub fn open(s: &mut Session<'_>, ctx: &Ctx<'_>, inv: &Inventory, opened: &mut Option<Tunnel>) -> StepResult {
    let planned = json!({
        "address": ctx.target.gateway.clone().unwrap_or_else(|| "<gateway>".to_owned()),
        "port": BASTION_PORT,
        "enabled": true,
        "allowed_ip_ranges": ctx.target.admin_ranges,
    });
    let out =
        s.run(super::tofu::tofu(ctx, CLOUD, &["output", "-json", BASTION_OUTPUT]).plan_stdout(planned.to_string()))?;
    let bastion = parse(&out.stdout).map_err(|e| s.failure(e))?;
    check(&bastion, &ctx.target.admin_ranges).map_err(|e| s.failure(e))?;
    let forwards = forwards(inv).map_err(|e| s.failure(e))?;
    if !s.plan {
        let dir = ctx.tofu_copy.join("ssh");
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| s.failure(format!("cannot create {}: {e}", dir.display())))?;
    }
    let t = Tunnel {
        control: display(&ctx.work.file("talos-tunnel.ctl")),
        destination: format!("{BASTION_USER}@{}", bastion.address),
        port: bastion.port.to_string(),
    };
    s.note(&format!(
        "the Talos API tunnel: each node's port 50000 through the gateway's SSH bastion, which admits {} only (R13)",
        ctx.target.admin_ranges.join(" ")
    ));
    let mut cmd = ssh(ctx, &t.control, &t.port).args(["-M", "-f", "-N", "-n"]);
    for f in &forwards {
        cmd = cmd.args(["-L", f.as_str()]);
    }
    let cmd = cmd.arg(t.destination.as_str());
    *opened = Some(t);
    s.run(cmd)?;
    Ok(())
}

/// Closes the tunnel (cleanup: it runs after a signal too). Closing the switch next disables
/// the bastion, which ends the tunnel whatever this returns: an ssh that answers with an error
/// (its master already gone) is noted; one that cannot be run or hangs past its deadline is
/// the caller's failure, after the switch closed.
pub fn close(s: &mut Session<'_>, ctx: &Ctx<'_>, t: &Tunnel) -> StepResult {
    let cmd = ssh(ctx, &t.control, &t.port).args(["-O", "exit"]).arg(t.destination.as_str()).cleanup();
    let out = s.try_run(cmd)?;
    if !out.success() {
        s.note(&format!(
            "the tunnel's ssh did not answer `-O exit` (code {}): closing the switch disables the bastion, which ends it",
            out.code
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::inventory;

    #[test]
    fn the_bastion_must_admit_exactly_the_admin_ranges() {
        let b = parse(br#"{"value":{"address":"51.15.200.10","port":61000,"enabled":true,"allowed_ip_ranges":["198.51.100.0/24"]}}"#)
            .unwrap();
        assert_eq!(b.port, 61000);
        assert!(check(&b, &["198.51.100.0/24".to_owned()]).is_ok());
        assert!(check(&b, &["198.51.100.0/24".to_owned(), "192.0.2.0/24".to_owned()]).is_err());
        let open = Bastion { allowed: ["0.0.0.0/0".to_owned()].into(), ..b.clone() };
        assert!(check(&open, &["198.51.100.0/24".to_owned()]).unwrap_err().contains("0.0.0.0/0"));
        assert!(check(&Bastion { allowed: BTreeSet::new(), ..b.clone() }, &[]).is_err());
        assert!(check(&Bastion { enabled: false, ..b }, &["198.51.100.0/24".to_owned()]).is_err());
    }

    #[test]
    fn forwards_listen_on_loopback_only() {
        let inv = inventory::parse(
            br#"{"main":{"control_plane":[{"hostname":"cp-1","address":"10.10.0.2","talos_endpoint":"127.0.0.1:50001"}],
                "workers":{"w-1":{"hostname":"w-1","address":"10.10.0.5","talos_endpoint":"127.0.0.1:50002"}}}}"#,
        )
        .unwrap();
        assert_eq!(forwards(&inv).unwrap(), ["127.0.0.1:50001:10.10.0.2:50000", "127.0.0.1:50002:10.10.0.5:50000"]);
        let old = inventory::parse(
            br#"{"main":{"control_plane":[{"hostname":"cp-1","address":"10.10.0.2","talos_endpoint":"51.15.200.10:50001"}]}}"#,
        )
        .unwrap();
        assert!(forwards(&old).unwrap_err().contains("not on 127.0.0.1"));
    }
}
