//! Issue 34 §1 (R13): no step of `fleetc apply` exposes a node's port 50000 beyond the
//! environment's `admin-ranges`. On Scaleway the build forwards no gateway port to 50000 (the
//! Talos API switch is the gateway's SSH bastion, admitting the admin ranges only), and the
//! apply reaches each node through an ssh tunnel it opens after the bastion's ranges read back
//! as fleet.kdl's, before the first command that talks to a node, and closes before the switch,
//! on success and on failure. The tools are the recording double ([`apply_support::Fake`]).

use crate::apply_support;

use apply_support::{Fake, Fixture, run_apply};
use fleetc::apply::{Cmd, Output};

/// The reference fleet's staging admin ranges, as the variables file writes them.
fn admin_ranges(fx: &Fixture) -> Vec<String> {
    assert!(!fx.target.admin_ranges.is_empty());
    fx.target.admin_ranges.clone()
}

/// Whether `c` talks to a node's Talos API: talosctl with `--nodes`, or a cluster-root plan or
/// apply (the talos provider dials each node's `talos_endpoint`).
fn reaches_a_node(c: &Cmd) -> bool {
    (c.program == "talosctl" && c.args.iter().any(|a| a == "--nodes"))
        || (c.program == "tofu"
            && c.args.first().is_some_and(|a| a.ends_with("/cluster"))
            && c.args.iter().any(|a| a == "plan" || a == "apply"))
}

fn is_open_tunnel(c: &Cmd) -> bool {
    c.program == "ssh" && c.args.iter().any(|a| a == "-M")
}

fn is_close_tunnel(c: &Cmd) -> bool {
    c.program == "ssh" && c.args.windows(2).any(|w| w[0] == "-O" && w[1] == "exit")
}

fn switch(c: &Cmd, open: bool) -> bool {
    c.program == "tofu"
        && c.args.iter().any(|a| a == "-auto-approve")
        && c.args.iter().any(|a| a == &format!("-var=talos_api_open={open}"))
}

/// The window's order: switch opened, tunnel opened, every command that reaches a node,
/// tunnel closed, switch closed; and no node reached outside it.
fn assert_window(fake: &Fake) {
    let calls = fake.calls.borrow();
    let lines = fake.lines().join("\n");
    let pos = |f: &dyn Fn(&Cmd) -> bool| calls.iter().position(f);
    let open_switch = pos(&|c| switch(c, true)).unwrap_or_else(|| panic!("switch never opened:\n{lines}"));
    let open_tunnel = pos(&is_open_tunnel).unwrap_or_else(|| panic!("no tunnel:\n{lines}"));
    let close_tunnel = pos(&is_close_tunnel).unwrap_or_else(|| panic!("tunnel never closed:\n{lines}"));
    let close_switch =
        calls.iter().rposition(|c| switch(c, false)).unwrap_or_else(|| panic!("switch never closed:\n{lines}"));
    assert!(open_switch < open_tunnel && open_tunnel < close_tunnel && close_tunnel < close_switch, "{lines}");
    for (i, _) in calls.iter().enumerate().filter(|(_, c)| reaches_a_node(c)) {
        assert!(open_tunnel < i && i < close_tunnel, "call {i} reaches a node outside the tunnel:\n{lines}");
    }
    assert_eq!(calls.iter().filter(|c| is_open_tunnel(c)).count(), 1, "{lines}");
}

#[test]
fn the_build_forwards_no_port_to_50000_and_the_bastion_admits_the_admin_ranges_only() {
    let fx = Fixture::new();
    for path in fx.build.paths().filter(|p| p.starts_with("tofu/") && p.ends_with(".tf")) {
        let text = std::str::from_utf8(fx.build.get(path).unwrap()).unwrap();
        // A PAT rule to 50000 (the Talos API) is refused on any gateway: it has no source filter.
        for block in text.split("\nresource ").filter(|b| b.starts_with("\"scaleway_vpc_public_gateway_pat_rule\"")) {
            assert!(!block.contains("50000"), "{path}: a gateway rule forwards port 50000:\n{block}");
        }
    }
    let module = std::str::from_utf8(fx.build.get("tofu/modules/scaleway-cloud/main.tf").unwrap()).unwrap();
    assert!(module.contains("bastion_enabled   = var.talos_api_open"), "{module}");
    assert!(module.contains("allowed_ip_ranges = var.admin_ranges"), "{module}");
    let root = std::str::from_utf8(fx.build.get("tofu/staging/cloud/main.tf").unwrap()).unwrap();
    assert!(
        root.contains("admin_ranges    = var.admin_ranges") && root.contains("talos_api_open  = var.talos_api_open")
    );
    let values = std::str::from_utf8(fx.build.get("tofu/staging/cloud/staging.auto.tfvars").unwrap()).unwrap();
    let quoted: Vec<String> = admin_ranges(&fx).iter().map(|r| format!("\"{r}\"")).collect();
    let line = values.lines().find(|l| l.starts_with("admin_ranges ")).unwrap_or_default();
    assert!(line.ends_with(&format!("= [{}]", quoted.join(", "))), "{values}");
    // Every node's Talos endpoint is its end of the tunnel, which its certificate carries.
    let outputs = std::str::from_utf8(fx.build.get("tofu/modules/scaleway-cluster-cp3/outputs.tf").unwrap()).unwrap();
    assert_eq!(outputs.matches("talos_endpoint = \"127.0.0.1:${").count(), 4, "{outputs}");
    let common = std::str::from_utf8(fx.build.get("talos/staging/main/common.yaml").unwrap()).unwrap();
    assert!(common.contains("- \"127.0.0.1\""), "{common}");
}

#[test]
fn the_tunnel_is_opened_before_any_node_is_reached_and_closed_before_the_switch() {
    let fx = Fixture::new();
    let fake = Fake::new();
    let (r, log) = run_apply(&fx, &fake, &fx.options());
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert_window(&fake);
    let calls = fake.calls.borrow();
    let ssh = calls.iter().find(|c| is_open_tunnel(c)).unwrap();
    // Forwards bind on loopback only, one per node, to the node's port 50000; the bastion at
    // the gateway's address; ssh never asks (BatchMode) and gets no key on its command line.
    let forwards: Vec<&String> = ssh.args.windows(2).filter(|w| w[0] == "-L").map(|w| &w[1]).collect();
    assert_eq!(forwards.len(), 5, "{:?}", ssh.args);
    assert!(forwards.iter().all(|f| f.starts_with("127.0.0.1:") && f.ends_with(":50000")), "{forwards:?}");
    assert_eq!(ssh.args.last().map(String::as_str), Some("bastion@51.15.200.10"));
    for needed in ["BatchMode=yes", "ExitOnForwardFailure=yes", "-f", "-N", "-n"] {
        assert!(ssh.args.iter().any(|a| a == needed), "{needed}: {:?}", ssh.args);
    }
    assert!(!ssh.args.iter().any(|a| a == "-i" || a.contains("IdentityFile")), "{:?}", ssh.args);
    assert!(ssh.env.is_empty(), "{:?}", ssh.env);
    // The bastion's ranges were read back before the tunnel opened.
    let read = calls.iter().position(|c| c.args.iter().any(|a| a == "talos_bastion")).unwrap();
    assert!(read < calls.iter().position(is_open_tunnel).unwrap());
}

#[test]
fn a_failure_inside_the_window_closes_the_tunnel_then_the_switch() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.fail_on(|c| c.program == "talosctl" && c.args.iter().any(|a| a == "health"));
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    assert!(r.is_err());
    assert_window(&fake);
    assert_eq!(fake.last_switch("talos_api_open"), Some(false));
}

#[test]
fn a_tunnel_that_fails_to_open_is_still_closed_and_the_switch_too() {
    let fx = Fixture::new();
    let fake = Fake::new();
    fake.on(is_open_tunnel, Output::failed(255, "bastion@51.15.200.10: Permission denied (publickey)."));
    let (r, _) = run_apply(&fx, &fake, &fx.options());
    let e = r.unwrap_err();
    assert!(e.message.contains("Permission denied") || e.message.contains("ssh"), "{e}");
    let calls = fake.calls.borrow();
    assert!(!calls.iter().any(reaches_a_node), "{}", fake.lines().join("\n"));
    let close_tunnel = calls.iter().position(is_close_tunnel).unwrap();
    assert!(close_tunnel < calls.iter().rposition(|c| switch(c, false)).unwrap());
    drop(calls);
    assert_eq!(fake.last_switch("talos_api_open"), Some(false));
}

#[test]
fn a_bastion_admitting_other_ranges_gets_no_tunnel_and_the_switch_closes() {
    for allowed in [vec!["0.0.0.0/0".to_owned()], Vec::new(), vec!["192.0.2.0/24".to_owned()]] {
        let fx = Fixture::new();
        let fake = Fake::new();
        let bastion = serde_json::json!({"address": "51.15.200.10", "port": 61000, "enabled": true, "allowed_ip_ranges": allowed});
        fake.on(
            |c| c.program == "tofu" && c.args.iter().any(|a| a == "talos_bastion"),
            Output::ok(bastion.to_string().into_bytes()),
        );
        let (r, _) = run_apply(&fx, &fake, &fx.options());
        let e = r.unwrap_err();
        assert!(e.message.contains("admin-ranges") && e.message.contains("R13"), "{allowed:?}: {e}");
        let calls = fake.calls.borrow();
        assert!(!calls.iter().any(|c| c.program == "ssh"), "{allowed:?}: {}", fake.lines().join("\n"));
        assert!(!calls.iter().any(reaches_a_node), "{allowed:?}");
        drop(calls);
        assert_eq!(fake.last_switch("talos_api_open"), Some(false), "{allowed:?}");
    }
}

#[test]
fn upgrade_goes_through_the_tunnel_too() {
    let fx = Fixture::new();
    let fake = Fake::new();
    // Every node at the target: upgrade only asks them, through the tunnel.
    fake.on(
        |c| c.program == "talosctl" && c.args.iter().any(|a| a == "version"),
        Output::ok(b"Server:\n\tTag: v1.13.9\n".to_vec()),
    );
    fake.on(
        |c| c.program == "kubectl" && c.args.iter().any(|a| a == "version"),
        Output::ok(br#"{"serverVersion":{"gitVersion":"v1.35.4"}}"#.to_vec()),
    );
    let mut log = Vec::new();
    let mut sink = |l: &str| log.push(l.to_owned());
    let mut runner = fake.clone();
    let opts = fleetc::apply::UpgradeOptions { plan: false, yes: true, identity: Some(fx.identity.clone()) };
    let _ = fleetc::apply::upgrade(&fx.inputs(), "main", &opts, &mut runner, &mut sink);
    assert!(fake.calls.borrow().iter().any(reaches_a_node), "{}", log.join("\n"));
    assert_window(&fake);
}
