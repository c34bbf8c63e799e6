//! Step 5: the cluster root, node by node (R19, F3). OpenTofu cannot order the instances of
//! one block and returns before a rebooted node is healthy, so fleetc plans the whole root
//! (shown, confirmed), then applies one targeted plan per node — control plane first, the
//! first one with the etcd bootstrap, then each worker — and waits for `talosctl health`
//! after each, and finally applies what is left (the kubeconfig resource) and checks health
//! once more.
//!
//! **Reboots are fleetc's, one node at a time.** The variables file's apply mode never
//! reboots a running node ([`crate::model::ApplyMode::root_mode`]), and fleetc passes that
//! same mode to every targeted plan, so a plain `tofu apply` and `fleetc apply` store the same
//! mode and neither shows a change after the other. When fleet.kdl's mode allows a reboot
//! (`auto`) and Talos refuses to apply a change without one (`no_reboot`: v1.13.9
//! `v1alpha1_server.go` l.236-239, nothing is changed), fleetc stages that node's config
//! (`staged`), reboots that node alone (`talosctl reboot --wait`, which returns once the node
//! is back), checks health, and re-applies with the variables file's mode (the same config:
//! Talos changes nothing) so that the state holds it again. `reboot` (Talos < 1.14) reboots a
//! node whose config the plan changes, the same way.
//!
//! **Health expects the nodes that are configured** — those whose apply resource the state
//! held when the run began, plus those applied so far: `talosctl health` compares the set it
//! is given with the nodes Kubernetes lists (`K8sAllNodesReportedAssertion`), so a node that
//! never got a config is never waited for, and a rerun after a failure anywhere resumes.
//!
//! **The API key Secret and the kubeconfig** (F11): right after the first control-plane node
//! (and the bootstrap), through both switches, fleetc fetches the admin kubeconfig
//! (`talosctl kubeconfig`, into the private directory, for this step and Argo CD's) and
//! writes `kube-system/scaleway-secret` from the sealed `scaleway-api-key` with server-side
//! apply, manifest on stdin — before the first health check, whose Kubernetes checks wait for
//! workloads the cloud controller manager gates. Every apply writes it; when the key changed
//! (the Secret's `resourceVersion` moved), the workloads that read it are restarted
//! (`kubectl rollout restart`), since they read it as environment variables at start.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::ctx::Ctx;
use super::inventory::{self, Inventory};
use super::nodes::{HEALTH_TIMEOUT, Node, Nodes, health, health_of, kubeconfig_file, kubectl, talosconfig, talosctl};
use super::preflight::sealed_key_pair;
use super::runner::Cmd;
use super::session::{Session, Step, StepResult};
use super::target::{ClusterTarget, ProviderTarget};
use super::tofu::{tofu, var};
use super::work::display;
use crate::layout::names::{
    self, APPLY_MODE_VAR, FIELD_MANAGER, SCALEWAY_API_KEY_INPUT, SCALEWAY_SECRET, SCALEWAY_SECRET_NAMESPACE,
    TALOS_SECRETS_VAR,
};
use crate::layout::paths::{self, CLUSTER};
use crate::model::ApplyMode;

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

/// The cluster root's one apply-time input: the bundles' private paths (R14). Nothing else:
/// the Scaleway API key never reaches a root (F11, [`scaleway_secret`]).
pub(super) fn cluster_vars(ctx: &Ctx<'_>) -> Vec<(String, String, bool)> {
    let files: BTreeMap<&str, String> = ctx.bundles.iter().map(|(c, p)| (c.as_str(), display(p))).collect();
    vec![(format!("TF_VAR_{TALOS_SECRETS_VAR}"), serde_json::to_string(&files).unwrap_or_default(), false)]
}

/// `apply -input=false <vars…> <plan>`: a saved plan, with the -vars it was planned with
/// (OpenTofu checks that they match, see [`super::tofu::plan_show_apply`]).
fn saved_plan_apply(vars: &[String], plan: &std::path::Path) -> Vec<String> {
    let mut args = vec!["apply".to_owned(), "-input=false".to_owned()];
    args.extend(vars.iter().cloned());
    args.push(display(plan));
    args
}

/// What the state held when the run began: the apply resources of the configured nodes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Configured {
    pub control_plane: Vec<bool>,
    pub workers: std::collections::BTreeSet<String>,
}

/// The nodes of `c` whose config the state (`tofu state list`) says was applied.
pub fn configured(state: &str, c: &ClusterTarget, nodes: &Nodes) -> Configured {
    let lines: std::collections::BTreeSet<&str> = state.lines().map(str::trim).collect();
    Configured {
        control_plane: (1..=nodes.control_plane.len())
            .map(|i| lines.contains(names::control_plane_target(&c.name, i).as_str()))
            .collect(),
        workers: nodes
            .workers
            .iter()
            .filter(|w| lines.contains(names::worker_target(&c.name, &w.hostname).as_str()))
            .map(|w| w.hostname.clone())
            .collect(),
    }
}

/// What fleetc does with a node after a targeted apply in the root's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Never reboot: a change Talos cannot apply without a reboot fails the run.
    Never,
    /// `auto`: if Talos refuses to apply without a reboot, stage the config and reboot the
    /// node alone.
    WhenRefused,
    /// `reboot` (Talos < 1.14): reboot the node whenever the plan changes its config.
    WhenChanged,
    /// `auto` where the root's mode is `staged_if_needing_reboot` (Talos 1.12): reboot the
    /// node when the provider's dry run staged its config (the plan's `resolved_apply_mode`).
    WhenStaged,
}

/// How fleet.kdl's mode (or `--mode`) is carried out on a node (R19): the `-var=apply_mode`
/// of its targeted plan, and what follows.
pub fn gate(mode: ApplyMode, root: ApplyMode, configured: bool) -> (ApplyMode, Gate) {
    // A node that has no config yet is in maintenance mode: `staged` would only store the
    // config there (1.13) or be refused (1.12), while `auto` applies it without a reboot
    // (v1.13.9 `v1alpha1_server.go` l.253-262, `inMaintenance`).
    if !configured {
        return (if root == ApplyMode::Staged { ApplyMode::Auto } else { root }, Gate::Never);
    }
    match mode {
        ApplyMode::Auto if root == ApplyMode::NoReboot => (root, Gate::WhenRefused),
        ApplyMode::Auto if root == ApplyMode::StagedIfNeedingReboot => (root, Gate::WhenStaged),
        ApplyMode::Auto => (root, Gate::Never),
        ApplyMode::Reboot => (root, Gate::WhenChanged),
        // Modes that never reboot are taken as they are (`--mode staged` stages).
        ApplyMode::NoReboot | ApplyMode::Staged | ApplyMode::StagedIfNeedingReboot => (mode, Gate::Never),
    }
}

/// What `tofu show -json <plan>` plans for `address`: whether it changes (create, update or
/// replace), and whether the provider resolved its apply mode to `staged`
/// (`resolved_apply_mode`, set at plan time by terraform-provider-talos v0.11.0
/// `handleRebootPrevention`).
pub fn planned(plan_json: &[u8], address: &str) -> (bool, bool) {
    let Ok(v) = serde_json::from_slice::<Value>(plan_json) else { return (false, false) };
    let Some(r) = v
        .get("resource_changes")
        .and_then(Value::as_array)
        .and_then(|rc| rc.iter().find(|r| r.get("address").and_then(Value::as_str) == Some(address)))
    else {
        return (false, false);
    };
    let changed = r
        .pointer("/change/actions")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|x| matches!(x.as_str(), Some("create" | "update" | "delete"))));
    let staged = r.pointer("/change/after/resolved_apply_mode").and_then(Value::as_str) == Some("staged");
    (changed, changed && staged)
}

/// One node through the gate: a targeted plan and apply in the root's mode, and the reboot
/// fleet.kdl's mode asks for, on this node alone. The caller checks health next.
#[allow(clippy::too_many_arguments)]
fn gated_node(
    s: &mut Session<'_>,
    ctx: &Ctx<'_>,
    vars: &[(String, String, bool)],
    c: &ClusterTarget,
    tc: &str,
    node: &Node,
    plan_name: &str,
    targets: &[String],
    configured: bool,
) -> StepResult {
    let mode = ctx.mode.unwrap_or(c.apply_mode);
    let (var_mode, gate) = gate(mode, c.root_mode, configured);
    let with = |cmd: Cmd| cmd.envs(vars);
    let plan_apply = |s: &mut Session<'_>, m: ApplyMode, file: &str, show: bool| -> StepResult<(bool, bool)> {
        let plan = ctx.work.file(file);
        let mode_var = vec![var(APPLY_MODE_VAR, m.as_str())];
        let mut args = vec!["plan".to_owned(), "-input=false".to_owned(), format!("-out={}", display(&plan))];
        args.extend(mode_var.iter().cloned());
        args.extend(targets.iter().map(|t| format!("-target={t}")));
        s.run(with(tofu(ctx, CLUSTER, &args.iter().map(String::as_str).collect::<Vec<_>>())))?;
        let changed = if show {
            let out = s.run(with(tofu(ctx, CLUSTER, &["show", "-json", &display(&plan)])).plan_stdout("{}"))?;
            planned(&out.stdout, &targets[0])
        } else {
            (false, false)
        };
        let apply = saved_plan_apply(&mode_var, &plan);
        let out = s.try_run(with(tofu(ctx, CLUSTER, &apply.iter().map(String::as_str).collect::<Vec<_>>())))?;
        if out.success() {
            Ok(changed)
        } else {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
            Err(s.failure(format!("`tofu` exited with code {}: {last}", out.code)))
        }
    };
    let reboot = |s: &mut Session<'_>| -> StepResult {
        s.note(&format!("{}: rebooting this node alone, and waiting until it is back (R19)", node.hostname));
        s.run(talosctl(tc, node).args(["reboot", "--wait", "--timeout", HEALTH_TIMEOUT]))?;
        Ok(())
    };
    match gate {
        Gate::Never => {
            plan_apply(s, var_mode, &format!("{plan_name}.tfplan"), false)?;
        }
        Gate::WhenChanged => {
            if plan_apply(s, var_mode, &format!("{plan_name}.tfplan"), true)?.0 {
                reboot(s)?;
            }
        }
        Gate::WhenStaged => {
            if plan_apply(s, var_mode, &format!("{plan_name}.tfplan"), true)?.1 {
                reboot(s)?;
            }
        }
        Gate::WhenRefused => {
            if let Err(first) = plan_apply(s, var_mode, &format!("{plan_name}.tfplan"), false) {
                s.note(&format!(
                    "{}: the apply in mode `{}` failed ({}); if Talos refused a change it cannot apply without a reboot, nothing changed: staging the config and rebooting this node alone (apply mode `auto`)",
                    node.hostname,
                    var_mode.as_str(),
                    first.message
                ));
                plan_apply(s, ApplyMode::Staged, &format!("{plan_name}-staged.tfplan"), false)?;
                reboot(s)?;
                s.note(&format!(
                    "{}: the state takes the variables file's mode `{}` again (same config: Talos changes nothing)",
                    node.hostname,
                    var_mode.as_str()
                ));
                plan_apply(s, var_mode, &format!("{plan_name}-mode.tfplan"), false)?;
            } else if s.plan {
                s.note(&format!(
                    "{}: if Talos refuses to apply the change without a reboot, fleetc stages it, reboots this node alone (`talosctl reboot --wait`) and checks health before the next node",
                    node.hostname
                ));
            }
        }
    }
    Ok(())
}

/// Whether `fleetc apply` writes the Scaleway API key Secret into a cluster: a Scaleway
/// environment's cluster that lists the sealed `scaleway-api-key`.
pub fn writes_scaleway_secret<'a>(ctx: &'a Ctx<'_>) -> impl Fn(&ClusterTarget) -> bool + 'a {
    move |c| {
        matches!(ctx.target.provider, ProviderTarget::Scaleway { .. })
            && c.sealed.iter().any(|n| n == SCALEWAY_API_KEY_INPUT)
    }
}

/// How many times, 10 s apart, the first write to a new cluster's API is tried while the API
/// server comes up after the bootstrap.
pub const API_ATTEMPTS: u32 = 60;

/// The Secret the Scaleway cloud controller manager and CSI driver read, from the sealed
/// `scaleway-api-key`, with project, region and zone from fleet.kdl (R9) — written into the
/// cluster by server-side apply with the manifest on stdin (never argv, never a file, never
/// logged), under fleetc's field manager (F11). Every apply writes it; when its
/// `resourceVersion` moved (the key was rotated), every workload of the build's embedded
/// manifests that reads it is restarted, so a rotation reaches them in this apply.
fn scaleway_secret(s: &mut Session<'_>, ctx: &Ctx<'_>, c: &ClusterTarget, nodes: &Nodes) -> StepResult {
    let ProviderTarget::Scaleway { project, region, zone } = &ctx.target.provider else { return Ok(()) };
    if !writes_scaleway_secret(ctx)(c) {
        return Ok(());
    }
    let (access, secret) = sealed_key_pair(s, ctx, &c.name, SCALEWAY_API_KEY_INPUT)?;
    let manifest = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SCALEWAY_SECRET, "namespace": SCALEWAY_SECRET_NAMESPACE},
        "type": "Opaque",
        "stringData": {
            "SCW_ACCESS_KEY": access,
            "SCW_SECRET_KEY": secret,
            "SCW_DEFAULT_PROJECT_ID": project,
            "SCW_DEFAULT_REGION": region,
            "SCW_DEFAULT_ZONE": zone,
        },
    })
    .to_string();
    let version = |s: &mut Session<'_>| -> StepResult<String> {
        let out = s.try_run(
            kubectl(
                ctx,
                c,
                nodes,
                &[
                    "get",
                    "secret",
                    SCALEWAY_SECRET,
                    "-n",
                    SCALEWAY_SECRET_NAMESPACE,
                    "--ignore-not-found",
                    "-o",
                    "jsonpath={.metadata.resourceVersion}",
                ],
            )
            .plan_stdout(""),
        )?;
        Ok(if out.success() { out.stdout_str().trim().to_owned() } else { String::new() })
    };
    s.note(&format!(
        "the Scaleway API key as `{}/{}` from the sealed `{}` (stdin, not shown; F11)",
        SCALEWAY_SECRET_NAMESPACE, SCALEWAY_SECRET, SCALEWAY_API_KEY_INPUT
    ));
    let before = version(s)?;
    let apply =
        kubectl(ctx, c, nodes, &["apply", "--server-side", &format!("--field-manager={}", FIELD_MANAGER), "-f", "-"])
            .stdin(manifest.into_bytes());
    let mut attempt = 1;
    loop {
        let out = s.try_run(apply.clone())?;
        if out.success() {
            break;
        }
        if attempt >= API_ATTEMPTS {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
            return s.fail(format!(
                "the Kubernetes API of `{}` did not take the Secret `{}`: {last}",
                c.name, SCALEWAY_SECRET
            ));
        }
        attempt += 1;
        s.sleep(std::time::Duration::from_secs(10));
    }
    let after = version(s)?;
    let consumers = secret_consumers(ctx, c, SCALEWAY_SECRET);
    if s.plan {
        let names: Vec<String> = consumers.iter().map(|(k, ns, n)| format!("{ns}/{k}/{n}")).collect();
        s.note(&format!("when the key changed, restarts {} (they read it at start)", names.join(", ")));
    } else if !before.is_empty() && before != after {
        s.note("the key changed: restarting the workloads that read it");
        for (kind, ns, name) in &consumers {
            s.run(kubectl(ctx, c, nodes, &["rollout", "restart", &format!("{kind}/{name}"), "-n", ns]))?;
        }
    }
    Ok(())
}

/// The workloads (`deployment`, `daemonset`, `statefulset`) of the cluster's embedded
/// manifests (`cluster.inlineManifests` of its control-plane document in the build) whose pods
/// read the Secret `secret` (`envFrom.secretRef`, `env[].valueFrom.secretKeyRef`, or a
/// `secret` volume): `(kind, namespace, name)`.
pub fn secret_consumers(ctx: &Ctx<'_>, c: &ClusterTarget, secret: &str) -> Vec<(String, String, String)> {
    let path = paths::talos_role_doc(&ctx.target.env, &c.name, true, "");
    ctx.out.get(&path).map(|b| consumers_in(&String::from_utf8_lossy(b), secret)).unwrap_or_default()
}

/// [`secret_consumers`] of one Talos document's text.
pub fn consumers_in(talos_doc: &str, secret: &str) -> Vec<(String, String, String)> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(talos_doc).unwrap_or_default();
    let mut out = Vec::new();
    for d in &docs {
        let Some(manifests) = d.pointer("/cluster/inlineManifests").and_then(Value::as_array) else { continue };
        for m in manifests {
            let Some(text) = m.get("contents").and_then(Value::as_str) else { continue };
            let objects: Vec<Value> = serde_saphyr::from_multiple(text).unwrap_or_default();
            for o in &objects {
                let kind = o.get("kind").and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase();
                if !matches!(kind.as_str(), "deployment" | "daemonset" | "statefulset") {
                    continue;
                }
                let Some(pod) = o.pointer("/spec/template/spec") else { continue };
                if reads_secret(pod, secret) {
                    let ns = o.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("default");
                    let name = o.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
                    out.push((kind, ns.to_owned(), name.to_owned()));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn reads_secret(pod: &Value, secret: &str) -> bool {
    let is = |v: Option<&Value>| v.and_then(Value::as_str) == Some(secret);
    let containers = ["containers", "initContainers"]
        .iter()
        .filter_map(|k| pod.get(*k).and_then(Value::as_array))
        .flatten()
        .collect::<Vec<_>>();
    containers.iter().any(|ct| {
        ct.get("envFrom").and_then(Value::as_array).is_some_and(|a| a.iter().any(|e| is(e.pointer("/secretRef/name"))))
            || ct
                .get("env")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|e| is(e.pointer("/valueFrom/secretKeyRef/name"))))
    }) || pod
        .get("volumes")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| is(v.pointer("/secret/secretName"))))
}

/// Step 5 on `clusters` (the clusters the roots build, [`super::order`]).
pub fn apply(s: &mut Session<'_>, ctx: &Ctx<'_>, clusters: &[&ClusterTarget]) -> StepResult {
    let inv = inventory::read(s, ctx)?;
    s.begin(Step::ClusterRoot);
    for c in ctx.target.clusters.iter().filter(|c| c.managed) {
        s.note(&format!("cluster `{}` is managed by Cluster API: its management cluster builds it", c.name));
    }
    let vars = cluster_vars(ctx);
    let with = |cmd: Cmd| cmd.envs(&vars);
    s.run(with(tofu(ctx, CLUSTER, &["init", "-input=false"])))?;
    let state = s.run(with(tofu(ctx, CLUSTER, &["state", "list"])).plan_stdout(""))?;
    let state = state.stdout_str();
    // The whole root, in the variables file's modes (never a reboot), shown and confirmed.
    let plan_all = ctx.work.file("cluster.tfplan");
    s.run(with(tofu(ctx, CLUSTER, &["plan", "-input=false", &format!("-out={}", display(&plan_all))])))?;
    s.run(with(tofu(ctx, CLUSTER, &["show", &display(&plan_all)])))?;
    s.confirm(&format!(
        "apply this plan to the cluster root of `{}`, one node at a time with a health check after each?",
        ctx.target.env
    ))?;
    for c in clusters.iter().copied() {
        let nodes = nodes_of(s, &inv, c)?;
        let tc = talosconfig(s, ctx, c)?;
        let done = configured(&state, c, nodes);
        let mode = ctx.mode.unwrap_or(c.apply_mode);
        s.note(&format!(
            "cluster `{}`: {} of {} control-plane nodes and {} of {} workers configured; health expects those and the nodes applied so far. Apply mode `{}` (fleet.kdl{}), through the variables file's `{}` (never a reboot) and fleetc's gate",
            c.name,
            done.control_plane.iter().filter(|d| **d).count(),
            nodes.control_plane.len(),
            done.workers.len(),
            nodes.workers.len(),
            mode.as_str(),
            if ctx.mode.is_some() { ", overridden by --mode" } else { "" },
            c.root_mode.as_str()
        ));
        let mut cps_in: Vec<bool> = done.control_plane.clone();
        let mut workers_in = done.workers.clone();
        let expected = |cps_in: &[bool], workers_in: &std::collections::BTreeSet<String>| {
            let cps: Vec<&Node> = nodes.control_plane.iter().zip(cps_in).filter(|(_, d)| **d).map(|(n, _)| n).collect();
            let ws: Vec<&Node> = nodes.workers.iter().filter(|w| workers_in.contains(&w.hostname)).collect();
            (cps, ws)
        };
        for (i, node) in nodes.control_plane.iter().enumerate() {
            let index = i + 1;
            s.note(&format!("control-plane node {} ({index}/{})", node.hostname, nodes.control_plane.len()));
            let mut targets = vec![names::control_plane_target(&c.name, index)];
            if index == 1 {
                targets.push(names::bootstrap_target(&c.name));
            }
            gated_node(
                s,
                ctx,
                &vars,
                c,
                &tc,
                node,
                &format!("{}-cp-{index}", c.name),
                &targets,
                done.control_plane[i],
            )?;
            cps_in[i] = true;
            if index == 1 {
                s.run(talosctl(&tc, node).args(["kubeconfig", &kubeconfig_file(ctx, c), "--force"]))?;
                scaleway_secret(s, ctx, c, nodes)?;
            }
            let (cps, ws) = expected(&cps_in, &workers_in);
            health(s, &tc, node, &cps, &ws)?;
        }
        let Some(first) = nodes.control_plane.first() else { continue };
        for w in &nodes.workers {
            s.note(&format!("worker {}", w.hostname));
            let targets = vec![names::worker_target(&c.name, &w.hostname)];
            let was = done.workers.contains(&w.hostname);
            gated_node(s, ctx, &vars, c, &tc, w, &format!("{}-{}", c.name, w.hostname), &targets, was)?;
            workers_in.insert(w.hostname.clone());
            let (cps, ws) = expected(&cps_in, &workers_in);
            health_of(s, &tc, first, &w.hostname, &cps, &ws)?;
        }
    }
    s.note("everything else left in the plan (the kubeconfig resource), in the variables file's modes");
    let rest = ctx.work.file("cluster-rest.tfplan");
    s.run(with(tofu(ctx, CLUSTER, &["plan", "-input=false", &format!("-out={}", display(&rest))])))?;
    s.run(with(tofu(ctx, CLUSTER, &saved_plan_apply(&[], &rest).iter().map(String::as_str).collect::<Vec<_>>())))?;
    for c in clusters.iter().copied() {
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
