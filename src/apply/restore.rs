//! `fleetc restore <env>/<cluster> --from <snapshot>`: etcd recovered from a snapshot with
//! Talos's own procedure (siderolabs/talos v1.10.9
//! `website/content/v1.10/advanced/disaster-recovery.md` l.55-142, the last version of that
//! page kept in the Talos repository; the same steps as Talos's own test of it, v1.13.9
//! `internal/integration/api/etcd-recover.go` l.58-128):
//!
//! 1. the snapshot is checked as etcd checks it at restore ([`super::snapshot::verify`])
//!    before anything runs: a damaged file stops here, with every node untouched;
//! 2. every control-plane node's EPHEMERAL partition (etcd's data directory) is wiped with
//!    `talosctl reset --graceful=false --reboot --system-labels-to-wipe=EPHEMERAL`;
//! 3. fleetc waits until etcd is `Preparing` on each of them (`talosctl service etcd`: the
//!    `STATE` line, v1.13.9 `pkg/machinery/formatters/formatters.go` l.224; the state's name,
//!    `internal/app/machined/pkg/system/events/events.go` l.42-43): a node that never gets
//!    there stops the run before any bootstrap;
//! 4. `talosctl bootstrap --recover-from=<snapshot>` on the first control-plane node (v1.13.9
//!    `cmd/talosctl/cmd/talos/bootstrap.go` l.39-80); the others join once its API is up;
//! 5. `talosctl health`, then the recovered membership (`talosctl etcd members`: every
//!    control-plane node listed) and every node Ready in the Kubernetes API.
//!
//! The Talos API switch and the operator's path to the Kubernetes API are open only while it
//! runs (R13). Workers are not touched: they rejoin the recovered API server.

use std::path::PathBuf;
use std::time::Duration;

use super::ctx::Inputs;
use super::inventory;
use super::nodes::{Node, health, kubeconfig_file, kubectl, talosconfig, talosctl};
use super::preflight::one_cluster;
use super::runner::Runner;
use super::session::{Failure, Session, Step, StepResult};
use super::snapshot;
use super::switch::{self, Switch};
use super::upgrade::{parse_node, planned_node};
use super::work::display;

#[derive(Debug, Clone, Default)]
pub struct RestoreOptions {
    pub plan: bool,
    pub yes: bool,
    pub identity: Option<PathBuf>,
    /// The snapshot (`talosctl etcd snapshot`, or one `fleetc upgrade` kept).
    pub from: PathBuf,
}

/// How often, and how long apart, fleetc asks a reset node whether etcd is `Preparing`.
pub const PREPARING_POLLS: u32 = 60;
pub const PREPARING_PAUSE: Duration = Duration::from_secs(10);

/// The `STATE` of `talosctl service <id>` output.
pub fn parse_service_state(text: &str) -> Option<String> {
    text.lines().find_map(|l| l.strip_prefix("STATE").map(|r| r.trim().to_owned())).filter(|s| !s.is_empty())
}

/// The `HOSTNAME` column of `talosctl etcd members` (v1.13.9 `cmd/talosctl/cmd/talos/etcd.go`
/// l.224-259: a `NODE` column first when the answer names its node; the columns after
/// `HOSTNAME` hold no spaces before it).
pub fn parse_member_hostnames(text: &str) -> Vec<String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(col) = lines.next().and_then(|h| h.split_whitespace().position(|c| c == "HOSTNAME")) else {
        return Vec::new();
    };
    lines.filter_map(|l| l.split_whitespace().nth(col).map(str::to_owned)).collect()
}

pub fn restore(
    inp: &Inputs<'_>,
    cluster_name: &str,
    opts: &RestoreOptions,
    runner: &mut dyn Runner,
    sink: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let mut s = Session::new(runner, opts.plan, opts.yes, sink);
    let from = display(&opts.from);
    match snapshot::verify(&opts.from) {
        Ok(v) => {
            s.note(&format!("snapshot {from}: {} bytes, sha256 {} (checked as etcd checks it)", v.db_bytes, v.sha256))
        }
        Err(_) if s.plan && !opts.from.exists() => s.note(&format!("snapshot {from}: checked before anything runs")),
        Err(e) => {
            s.begin(Step::Preflight);
            return s.fail(format!("the snapshot {from} cannot be restored: {e}; no node was touched"));
        }
    }
    let (c, (), ctx) = one_cluster(
        &mut s,
        inp,
        cluster_name,
        opts.identity.as_deref(),
        "restore its etcd through its management cluster",
        |_| Ok(()),
    )?;
    switch::with_switch(&mut s, &ctx, Switch::Both, |s| {
        s.begin(Step::Restore);
        let inv = inventory::read(s, &ctx)?;
        let nodes =
            inv.get(&c.name).ok_or_else(|| s.failure(format!("the inventory has no cluster `{}`", c.name)))?.clone();
        let Some(first) = nodes.control_plane.first().cloned() else {
            return s.fail(format!("cluster `{}` has no control-plane node to recover etcd on", c.name));
        };
        let tc = talosconfig(s, &ctx, c)?;
        let names: Vec<&str> = nodes.control_plane.iter().map(|n| n.hostname.as_str()).collect();
        s.confirm(&format!(
            "recover etcd of `{}` from {from}? The EPHEMERAL partition of {} is wiped (etcd's data with it)",
            c.name,
            names.join(", ")
        ))?;
        for n in &nodes.control_plane {
            s.run(talosctl(&tc, n).args([
                "reset",
                "--graceful=false",
                "--reboot",
                "--system-labels-to-wipe=EPHEMERAL",
            ]))
            .map_err(|f| s.failure(format!("node {} was not reset: {}", n.hostname, f.message)))?;
        }
        for n in &nodes.control_plane {
            wait_preparing(s, &tc, n)?;
        }
        s.run(talosctl(&tc, &first).args(["bootstrap", &format!("--recover-from={from}")]))
            .map_err(|f| s.failure(format!("node {} did not recover etcd: {}", first.hostname, f.message)))?;
        let cps: Vec<&Node> = nodes.control_plane.iter().collect();
        let workers: Vec<&Node> = nodes.workers.iter().collect();
        health(s, &tc, &first, &cps, &workers)?;
        let planned = format!(
            "NODE   ID   HOSTNAME   PEER URLS   CLIENT URLS   LEARNER\n{}",
            names.iter().map(|h| format!("{}   0   {h}   -   -   false\n", first.address)).collect::<String>()
        );
        let members = s.run(talosctl(&tc, &first).args(["etcd", "members"]).plan_stdout(planned))?;
        let listed = parse_member_hostnames(&members.stdout_str());
        let missing: Vec<&str> = names.iter().copied().filter(|h| !listed.iter().any(|l| l == h)).collect();
        if !missing.is_empty() {
            return s.fail(format!(
                "etcd was recovered but {} {} not a member: check `talosctl -n <node> service etcd` there",
                missing.join(", "),
                if missing.len() == 1 { "is" } else { "are" }
            ));
        }
        s.run(talosctl(&tc, &first).args(["kubeconfig", &kubeconfig_file(&ctx, c), "--force"]))?;
        for n in nodes.control_plane.iter().chain(&nodes.workers) {
            let out = s.run(
                kubectl(&ctx, c, &nodes, &["get", "node", &n.hostname, "-o", "json"])
                    .plan_stdout(planned_node(&n.hostname, c.kubernetes)),
            )?;
            if !parse_node(&out.stdout_str()).is_some_and(|st| st.ready) {
                return s.fail(format!("etcd is recovered but node {} is not Ready", n.hostname));
            }
        }
        s.note(&format!("etcd of `{}` recovered from {from}: members {}, every node Ready", c.name, names.join(", ")));
        Ok(())
    })?;
    s.note("done");
    Ok(())
}

/// Polls `talosctl service etcd` on `n` until etcd is `Preparing` (waiting for a bootstrap).
fn wait_preparing(s: &mut Session<'_>, tc: &str, n: &Node) -> StepResult {
    let mut last = String::new();
    for i in 0..PREPARING_POLLS {
        if i > 0 {
            s.sleep(PREPARING_PAUSE);
        }
        let out = s.try_run(
            talosctl(tc, n)
                .args(["service", "etcd"])
                .plan_stdout(format!("NODE     {}\nID       etcd\nSTATE    Preparing\n", n.address)),
        )?;
        if !out.success() {
            // Rebooting: the API does not answer yet.
            last = "no answer".to_owned();
            continue;
        }
        match parse_service_state(&out.stdout_str()) {
            Some(state) if state == "Preparing" => return Ok(()),
            Some(state) => last = state,
            None => last = "no state".to_owned(),
        }
    }
    s.fail(format!(
        "etcd on node {} is not `Preparing` after its reset (last: {last}): its data directory may not have been wiped; no bootstrap was started",
        n.hostname
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_talosctl_output() {
        let svc = "NODE     10.10.0.2\nID       etcd\nSTATE    Preparing\nHEALTH   ?\nEVENTS   [Preparing]: Running pre state (17s ago)\n";
        assert_eq!(parse_service_state(svc).as_deref(), Some("Preparing"));
        let with_node = "NODE        ID                 HOSTNAME    PEER URLS                 CLIENT URLS               LEARNER\n10.10.0.2   3b5e3a5e1ad1bd6d   main-cp-1   https://10.10.0.2:2380   https://10.10.0.2:2379   false\n";
        assert_eq!(parse_member_hostnames(with_node), ["main-cp-1"]);
        let without = "ID                 HOSTNAME    PEER URLS   CLIENT URLS   LEARNER\n3b5e3a5e1ad1bd6d   main-cp-2   https://x   https://y     false\n";
        assert_eq!(parse_member_hostnames(without), ["main-cp-2"]);
    }
}
