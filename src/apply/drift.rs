//! `fleetc drift <env>[/<cluster>]` (issue 32, item 1): what runs, compared with what out/
//! would apply, read-only. Like `apply` it is a separate step, never part of build, check or
//! diff (which stay offline); it reads four things and writes none:
//!
//! * each OpenTofu root, planned in the working copy (`tofu plan -detailed-exitcode
//!   -lock=false`, then `tofu show -json` of the saved plan in the private directory when it
//!   plans changes): each change by address, and each object changed outside OpenTofu;
//! * each node's running machine config (`talosctl get machineconfig v1alpha1 -o yaml`)
//!   against the config out/ would apply to it (`talosctl gen config … --output -`, the
//!   command `fleetc talos render` runs, [`super::render::node_config`]), document by
//!   document, both with their secrets taken out in memory ([`crate::secrets::redact`]);
//! * the Talos version and schematic each node runs ([`super::upgrade::running`]) and its
//!   kubelet and `Ready` condition against fleet.kdl's pins;
//! * each Argo CD Application's sync and health status and its objects out of sync.
//!
//! Each difference is classified with the review stage's rules, not a copy of them: a Talos
//! field by [`rules::reach`] and [`rules::field_effect`] (live, reboot, first provisioning,
//! bootstrap, upgrade), a secret that differs as the machine identity, a resource OpenTofu
//! would delete or replace by [`rules::resource_effect`], a control-plane node not `Ready` as
//! etcd's quorum. The result is a [`Review`], printed by the renderers of `fleetc diff`.
//!
//! The Talos API switch and the operator's path to the Kubernetes API are opened only where
//! `apply` opens them (R13, [`switch::with_switch`]: not on a provider without switches) and
//! closed whatever happens. The cloud root is planned before the switch opens, so that the
//! switch's own variables read as at rest.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

use super::ctx::{Ctx, Inputs};
use super::inventory;
use super::nodes::{Node, Nodes, kubeconfig_file, kubectl, talosconfig, talosctl};
use super::preflight::preflight;
use super::render::node_config;
use super::runner::Runner;
use super::session::{Failure, Session, Step, StepResult};
use super::switch::{self, Switch};
use super::target::{ClusterTarget, NodeTarget};
use super::tofu::{closed_vars, tofu};
use super::upgrade::{parse_node, running};
use super::work::display;
use crate::artifacts::ArtifactSet;
use crate::layout::paths::{self, CLOUD, CLUSTER};
use crate::model::Role;
use crate::review::Review;
use crate::review::files::diff_sets;
use crate::review::impact::rules;
use crate::review::impact::{Impact, Severity};
use crate::secrets::redact::{self, Removed};

#[derive(Debug, Clone, Default)]
pub struct DriftOptions {
    /// Print the commands; run nothing (the comparisons are then empty).
    pub plan: bool,
    pub identity: Option<PathBuf>,
}

/// Where the running config of a node shows in the file part of the report: a path of its
/// own, not out/'s (the node's config is the merge of several out/ documents).
pub fn config_path(env: &str, cluster: &str, host: &str) -> String {
    format!("running/{env}/{cluster}/{host}.machineconfig.yaml")
}

/// `fleetc drift <env>` (every cluster the roots build) or `<env>/<cluster>`: the differences
/// between what runs and what out/ would apply, classified.
pub fn drift(
    inp: &Inputs<'_>,
    cluster: Option<&str>,
    opts: &DriftOptions,
    runner: &mut dyn Runner,
    sink: &mut dyn FnMut(&str),
) -> Result<Review, Failure> {
    let mut s = Session::new(runner, opts.plan, true, sink);
    let clusters: Vec<String> = match cluster {
        Some(name) => {
            let Some(c) = inp.target.clusters.iter().find(|c| c.name == name) else {
                s.begin(Step::Preflight);
                return s.fail(format!("environment `{}` has no cluster `{name}`", inp.target.env));
            };
            if c.managed {
                s.begin(Step::Preflight);
                return s.fail(format!(
                    "cluster `{name}` is managed by Cluster API: its management cluster reconciles it (R26)"
                ));
            }
            vec![c.name.clone()]
        }
        None => inp.target.built_clusters().map(|c| c.name.clone()).collect(),
    };
    let ctx = preflight(&mut s, inp, None, opts.identity.as_deref(), &clusters, &Default::default(), None)?;
    s.begin(Step::Drift);
    if s.plan {
        s.note("--plan cannot ask what runs: the commands are shown, and no difference is reported");
    }
    let env = ctx.target.env.clone();
    let mut found = Found::default();
    if has_root(&ctx, CLOUD) {
        let mut vars = ctx.cloud_vars.clone();
        vars.extend(closed_vars(ctx.target.provider.has_switches()));
        plan_root(&mut s, &ctx, CLOUD, &vars, &[], &mut found)?;
    }
    let targets: Vec<&ClusterTarget> = ctx.target.clusters.iter().filter(|c| clusters.contains(&c.name)).collect();
    switch::with_switch(&mut s, &ctx, Switch::Both, |s| {
        s.begin(Step::Drift);
        if has_root(&ctx, CLUSTER) {
            plan_root(s, &ctx, CLUSTER, &[], &super::cluster::cluster_vars(&ctx), &mut found)?;
        }
        let inv = inventory::read(s, &ctx)?;
        for c in &targets {
            let nodes =
                inv.get(&c.name).ok_or_else(|| s.failure(format!("the inventory has no cluster `{}`", c.name)))?;
            cluster_drift(s, &ctx, c, nodes, &mut found)?;
        }
        Ok(())
    })?;
    let Found { mut impacts, running, expected } = found;
    impacts.sort_by_key(|i| std::cmp::Reverse(i.severity));
    let files = diff_sets(&running, &expected);
    s.note(&format!("{} differences", impacts.len()));
    Ok(Review { base: format!("what runs in `{env}`"), impacts, files })
}

/// What the comparisons found: the classified differences, and each node's running and
/// expected config (redacted) where they differ.
#[derive(Default)]
struct Found {
    impacts: Vec<Impact>,
    running: ArtifactSet,
    expected: ArtifactSet,
}

fn has_root(ctx: &Ctx<'_>, root: &str) -> bool {
    let dir = format!("{}/", paths::tofu_root(&ctx.target.env, root));
    ctx.out.paths().any(|p| p.starts_with(&dir))
}

/// `tofu plan -detailed-exitcode` of `root` (0: no change, 2: changes, anything else an
/// error: opentofu v1.12.6 `internal/command/plan.go` l.110-119 and its help l.265-269), and
/// when it plans changes, `tofu show -json` of the saved plan for them by address.
fn plan_root(
    s: &mut Session<'_>,
    ctx: &Ctx<'_>,
    root: &str,
    vars: &[String],
    env_vars: &[(String, String, bool)],
    found: &mut Found,
) -> StepResult {
    s.run(tofu(ctx, root, &["init", "-input=false"]).envs(env_vars))?;
    let plan = ctx.work.file(&format!("drift-{root}.tfplan"));
    let out_flag = format!("-out={}", display(&plan));
    // `-lock=false`: reading takes no lock in the state backend (nothing is written there).
    let mut args = vec!["plan", "-input=false", "-lock=false", "-detailed-exitcode", out_flag.as_str()];
    args.extend(vars.iter().map(String::as_str));
    let ran = s.try_run(tofu(ctx, root, &args).envs(env_vars).capture())?;
    match ran.code {
        0 => return Ok(()),
        2 => {}
        code => {
            let stderr = String::from_utf8_lossy(&ran.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
            return s.fail(format!("`tofu plan` of the {root} root exited with code {code}: {last}"));
        }
    }
    let shown = s.run(tofu(ctx, root, &["show", "-json", &display(&plan)]).envs(env_vars).plan_stdout("{}"))?;
    let subject = paths::tofu_root(&ctx.target.env, root);
    found.impacts.extend(tofu_impacts(&subject, &shown.stdout).map_err(|e| s.failure(e))?);
    Ok(())
}

/// The changes of a `tofu show -json` plan, classified: `resource_changes` (what an apply
/// would do) and `resource_drift` (objects changed outside OpenTofu since the last apply),
/// each with its `address`, `type` and `change.actions` (opentofu v1.12.6
/// `internal/command/jsonplan/plan.go` l.62-65 and l.85-104: `no-op`, `create`, `read`,
/// `update`, `delete`+`create` or `create`+`delete` for a replacement, `delete`, `forget`).
/// Values are never read: a plan holds the roots' secrets.
pub fn tofu_impacts(subject: &str, plan_json: &[u8]) -> Result<Vec<Impact>, String> {
    let v: Value = serde_json::from_slice(plan_json).map_err(|e| format!("`tofu show -json` is not JSON: {e}"))?;
    let mut out = Vec::new();
    let list = |k: &str| v.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
    for r in list("resource_drift") {
        let address = r.get("address").and_then(Value::as_str).unwrap_or_default();
        let actions = actions(&r);
        if actions.iter().all(|a| a == "no-op" || a == "read") {
            continue;
        }
        out.push(impact(
            Severity::Warning,
            "tofu-address",
            "R14",
            subject,
            format!("`{address}` changed outside OpenTofu ({})", actions.join(", ")),
            "live: the next `fleetc apply` sets it back to what out/ declares, unless fleet.kdl takes the change"
                .to_owned(),
        ));
    }
    for r in list("resource_changes") {
        let address = r.get("address").and_then(Value::as_str).unwrap_or_default();
        let kind = r.get("type").and_then(Value::as_str).unwrap_or_default();
        let actions = actions(&r);
        let has = |a: &str| actions.iter().any(|x| x == a);
        let (severity, what, effect) = if has("delete") && has("create") {
            let (sev, effect) = rules::resource_effect(kind);
            (
                sev.max(Severity::Warning),
                "replaced",
                format!("replace: OpenTofu destroys it and creates it again; {effect}"),
            )
        } else if has("delete") {
            let (sev, effect) = rules::resource_effect(kind);
            (sev, "deleted", format!("destroy: {effect}"))
        } else if has("update") {
            (Severity::Info, "updated in place", "live: changed in place, nothing is replaced".to_owned())
        } else if has("create") {
            (Severity::Info, "created", "create: out/ declares it and nothing runs for it".to_owned())
        } else if has("forget") {
            (Severity::Info, "forgotten", "OpenTofu forgets it; the object stays".to_owned())
        } else {
            continue;
        };
        out.push(impact(severity, "tofu-address", "R14", subject, format!("`{address}` would be {what}"), effect));
    }
    Ok(out)
}

fn actions(r: &Value) -> Vec<String> {
    r.pointer("/change/actions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn impact(
    severity: Severity,
    rule: &'static str,
    cites: &'static str,
    subject: &str,
    change: String,
    effect: String,
) -> Impact {
    Impact { severity, rule, cites, subject: subject.to_owned(), change, effect }
}

/// One cluster: each node's config, versions and `Ready`, then its Argo CD applications.
fn cluster_drift(
    s: &mut Session<'_>,
    ctx: &Ctx<'_>,
    c: &ClusterTarget,
    nodes: &Nodes,
    found: &mut Found,
) -> StepResult {
    let env = ctx.target.env.as_str();
    let subject = format!("{env}/{}", c.name);
    let tc = talosconfig(s, ctx, c)?;
    let bundle = ctx.bundles.get(&c.name).ok_or_else(|| s.failure(format!("no secrets bundle for `{}`", c.name)))?;
    if let Some(first) = nodes.control_plane.first() {
        s.run(talosctl(&tc, first).args(["kubeconfig", &kubeconfig_file(ctx, c), "--force"]))?;
    }
    for node in nodes.control_plane.iter().chain(&nodes.workers) {
        let Some(want) = c.nodes().find(|n| n.hostname == node.hostname) else {
            found.impacts.push(impact(
                Severity::Warning,
                "lifecycle",
                "R14",
                &subject,
                format!("node `{}` runs but fleet.kdl does not declare it", node.hostname),
                "unknown impact: the inventory lists a node out/ builds no config for; review the cloud root"
                    .to_owned(),
            ));
            continue;
        };
        let cmd = node_config(s, &ctx.work, ctx.out, env, c, want, bundle)?;
        let expected = s.run(cmd.args(["--output", "-"]).plan_stdout(""))?;
        let runs =
            s.run(talosctl(&tc, node).args(["get", "machineconfig", "v1alpha1", "-o", "yaml"]).plan_stdout(""))?;
        if !s.plan {
            config_drift(s, ctx, c, want, &expected.stdout_str(), &runs.stdout_str(), found)?;
        }
        versions(s, ctx, c, nodes, want, node, &tc, found)?;
    }
    if ctx.target.argocd.is_some() {
        let out = s.run(
            kubectl(ctx, c, nodes, &["get", "applications.argoproj.io", "--all-namespaces", "-o", "json"])
                .plan_stdout("{\"items\":[]}"),
        )?;
        found.impacts.extend(argocd_impacts(&subject, &out.stdout).map_err(|e| s.failure(e))?);
    }
    Ok(())
}

/// A node's Talos version and schematic, its kubelet and its `Ready` condition, against
/// fleet.kdl.
#[allow(clippy::too_many_arguments)]
fn versions(
    s: &mut Session<'_>,
    ctx: &Ctx<'_>,
    c: &ClusterTarget,
    nodes: &Nodes,
    want: &NodeTarget,
    node: &Node,
    tc: &str,
    found: &mut Found,
) -> StepResult {
    let subject = format!("{}/{}", ctx.target.env, c.name);
    let now = running(s, tc, node, c)?;
    let st = s.run(
        kubectl(ctx, c, nodes, &["get", "node", &node.hostname, "-o", "json"])
            .plan_stdout(super::upgrade::planned_node(&node.hostname, c.kubernetes)),
    )?;
    if s.plan {
        return Ok(());
    }
    let st = parse_node(&st.stdout_str());
    let host = &node.hostname;
    let upgrade = format!("`fleetc upgrade {}/{}`", ctx.target.env, c.name);
    if now.talos != Some(c.talos) {
        let runs = now.talos.map_or_else(|| "(unreadable)".to_owned(), |t| t.v());
        let step = now.talos.map(|t| super::upgrade::talos_step(t, c.talos));
        let how = match step {
            Some(Ok(())) => format!("{upgrade} upgrades it, rebooting the node"),
            Some(Err(e)) => e,
            None => "the node's version cannot be read: check it with `talosctl version`".to_owned(),
        };
        found.impacts.push(impact(
            Severity::Warning,
            "talos-version",
            "F1",
            &subject,
            format!("node `{host}` runs Talos {runs}, fleet.kdl pins {}", c.talos.v()),
            format!("reboot: {how}"),
        ));
    } else if now.schematic.as_deref() != Some(want.schematic_id.as_str()) {
        found.impacts.push(impact(
            Severity::Warning,
            "install-image",
            "F1, F2, R17",
            &subject,
            format!(
                "node `{host}` runs schematic {}, out/ installs {}",
                now.schematic.as_deref().unwrap_or("(none)"),
                want.schematic_id
            ),
            format!("reboot: {upgrade} installs {} and reboots the node", want.installer),
        ));
    }
    let Some(st) = st else {
        return s.fail(format!("cannot read node {host} from the Kubernetes API"));
    };
    if st.kubelet != Some(c.kubernetes) {
        let runs = st.kubelet.map_or_else(|| "(none)".to_owned(), |k| format!("v{k}"));
        found.impacts.push(impact(
            Severity::Warning,
            "kubernetes-version",
            "F1, R26",
            &subject,
            format!("node `{host}`'s kubelet is {runs}, fleet.kdl pins v{}", c.kubernetes),
            format!("live: {upgrade} runs `talosctl upgrade-k8s`, which restarts the kubelets without a reboot"),
        ));
    }
    if !st.ready {
        let (severity, effect) = if want.role == Role::ControlPlane {
            (
                Severity::Danger,
                format!(
                    "quorum: etcd counts on {} control-plane members; another one down loses quorum when fewer than {} remain",
                    c.control_plane.len(),
                    c.control_plane.len() / 2 + 1
                ),
            )
        } else {
            (Severity::Warning, "its workloads are rescheduled elsewhere; check it with `talosctl health`".to_owned())
        };
        found.impacts.push(impact(
            severity,
            "control-plane-count",
            "R29",
            &subject,
            format!("node `{host}` is not Ready"),
            effect,
        ));
    }
    Ok(())
}

/// The machine config in a `talosctl get machineconfig -o yaml` answer: the resource's
/// `spec`, the config's YAML as one string (siderolabs/talos v1.13.9
/// `pkg/machinery/resources/config/machine_config.go` l.41-50, `MarshalYAML`; talosctl prints
/// `node: <address>` and the resource's `metadata` and `spec`, `---` between resources,
/// `cmd/talosctl/cmd/talos/output/yaml.go` l.43-70).
pub fn running_config(answer: &str) -> Option<String> {
    let first = answer.split("\n---\n").next()?;
    let v: Value = serde_saphyr::from_str(first).ok()?;
    v.get("spec").and_then(Value::as_str).map(str::to_owned)
}

/// A config's documents, each as `(kind/name, value)`: the v1alpha1 document has no `kind`,
/// a multi-document kind is told apart by its `name`.
fn documents(text: &str) -> Result<Vec<(String, String, Value)>, String> {
    let mut out = Vec::new();
    let mut doc = String::new();
    let mut flush = |doc: &mut String| -> Result<(), String> {
        if !doc.trim().is_empty() {
            let v: Value = serde_saphyr::from_str(doc).map_err(|e| format!("a document fleetc cannot read: {e}"))?;
            if !v.is_null() {
                let kind = v.get("kind").and_then(Value::as_str).unwrap_or("v1alpha1").to_owned();
                let name = v.get("name").and_then(Value::as_str).unwrap_or_default();
                let key = if name.is_empty() { kind.clone() } else { format!("{kind}/{name}") };
                out.push((key, kind, v));
            }
        }
        doc.clear();
        Ok(())
    };
    for line in text.lines() {
        if line == "---" {
            flush(&mut doc)?;
        } else {
            doc.push_str(line);
            doc.push('\n');
        }
    }
    flush(&mut doc)?;
    Ok(out)
}

/// A redacted document: its key (`kind/name`), kind, value, and the secrets taken out of it.
type Doc = (String, String, Value, Vec<Removed>);

/// Each document of `text` redacted, and the secrets taken out by document key. The secret
/// values are registered with the session's masker too, so that no log line can show one.
fn redacted(s: &mut Session<'_>, text: &str) -> Result<Vec<Doc>, String> {
    let mut out = Vec::new();
    for (key, kind, mut v) in documents(text)? {
        let removed = redact::redact(&mut v);
        for r in &removed {
            s.secret(&r.value);
        }
        out.push((key, kind, v, removed));
    }
    Ok(out)
}

fn yaml_of(docs: &[Doc]) -> String {
    docs.iter().map(|(_, _, v, _)| serde_saphyr::to_string(v).unwrap_or_default()).collect::<Vec<_>>().join("---\n")
}

/// One node's running config against out/'s, document by document, each changed field
/// classified for the Talos version the cluster runs.
fn config_drift(
    s: &mut Session<'_>,
    ctx: &Ctx<'_>,
    c: &ClusterTarget,
    want: &NodeTarget,
    expected: &str,
    answer: &str,
    found: &mut Found,
) -> StepResult {
    let env = ctx.target.env.as_str();
    let host = &want.hostname;
    let subject = format!("{env}/{}", c.name);
    let Some(runs) = running_config(answer) else {
        return s.fail(format!("node {host}: `talosctl get machineconfig` did not answer with a machine config"));
    };
    let runs = redacted(s, &runs).map_err(|e| s.failure(format!("node {host}'s running config: {e}")))?;
    let wants = redacted(s, expected).map_err(|e| s.failure(format!("node {host}'s config from out/: {e}")))?;
    let nodes: BTreeSet<String> = std::iter::once(host.clone()).collect();
    let keys: BTreeSet<&String> = runs.iter().chain(&wants).map(|(k, ..)| k).collect();
    let null = Value::Null;
    let mut differs = false;
    for key in keys {
        let r = runs.iter().find(|(k, ..)| k == key);
        let w = wants.iter().find(|(k, ..)| k == key);
        let kind = r.or(w).map(|(_, kind, ..)| kind.as_str()).unwrap_or_default();
        // A secret that differs: the node holds another identity than the sealed bundle's.
        let secrets = |d: Option<&Doc>| d.map(|(.., rm)| rm.clone()).unwrap_or_default();
        let (rs, ws) = (secrets(r), secrets(w));
        let paths: BTreeSet<&Vec<String>> = rs.iter().chain(&ws).map(|x| &x.path).collect();
        for p in paths {
            let a = rs.iter().find(|x| &x.path == p).map(|x| &x.value);
            let b = ws.iter().find(|x| &x.path == p).map(|x| &x.value);
            if a != b {
                differs = true;
                found.impacts.push(impact(
                    Severity::Danger,
                    "secrets-version",
                    "R14",
                    &subject,
                    format!("node `{host}`: secret field `{}` differs from the sealed bundle's (value not shown)", shown(kind, p)),
                    "identity: the node holds other machine secrets than the cluster's sealed bundle; applying out/ gives it another identity, which the running cluster does not trust".to_owned(),
                ));
            }
        }
        let (rv, wv) = (r.map_or(&null, |d| &d.2), w.map_or(&null, |d| &d.2));
        let mut changed = Vec::new();
        rules::changed_paths(rv, wv, &mut Vec::new(), &mut changed);
        for p in changed {
            differs = true;
            let field = shown(kind, &p);
            let (severity, effect) = match rules::reach(c.talos, kind, &p) {
                Some(reach) => rules::field_effect(reach, c.apply_mode, c.talos, env, &nodes),
                None => (
                    Severity::Warning,
                    format!(
                        "unknown impact on `{host}`: the Talos field table (docs/diff.md) does not classify it for Talos {}; review the diff",
                        c.talos.v()
                    ),
                ),
            };
            found.impacts.push(impact(
                severity,
                "talos-fields",
                "F5, F10, F1",
                &subject,
                format!("node `{host}`: Talos field `{field}` differs from out/"),
                effect,
            ));
        }
    }
    if differs {
        let path = config_path(env, &c.name, host);
        found.running.insert(path.clone(), yaml_of(&runs)).map_err(|e| s.failure(e))?;
        found.expected.insert(path, yaml_of(&wants)).map_err(|e| s.failure(e))?;
    }
    Ok(())
}

fn shown(kind: &str, path: &[String]) -> String {
    let dotted = path.join(".");
    if kind == "v1alpha1" { dotted } else { format!("{kind} {dotted}") }
}

/// Each Argo CD Application that is not `Synced` and `Healthy`, with its objects out of sync,
/// from `kubectl get applications.argoproj.io -o json` (argoproj/argo-cd v3.5.1
/// `pkg/apis/application/v1alpha1/types.go`: `status.sync.status` l.1217 and l.1942-1944,
/// `Synced`/`OutOfSync`/`Unknown` l.1884-1889; `status.health.status` l.1219 and l.1954-1956;
/// `status.resources[]` with `group`, `kind`, `namespace`, `name`, `status` l.1215 and
/// l.2231-2245).
pub fn argocd_impacts(subject: &str, list_json: &[u8]) -> Result<Vec<Impact>, String> {
    let v: Value = serde_json::from_slice(list_json).map_err(|e| format!("the Applications are not JSON: {e}"))?;
    let mut out = Vec::new();
    for app in v.get("items").and_then(Value::as_array).into_iter().flatten() {
        let name = app.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        let sync = app.pointer("/status/sync/status").and_then(Value::as_str).unwrap_or("Unknown");
        let health = app.pointer("/status/health/status").and_then(Value::as_str).unwrap_or("Unknown");
        let objects: Vec<String> = app
            .pointer("/status/resources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|r| r.get("status").and_then(Value::as_str) == Some("OutOfSync"))
            .map(|r| {
                let f = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
                let ns = if f("namespace").is_empty() { String::new() } else { format!("{}/", f("namespace")) };
                format!("`{}` {ns}{}", f("kind"), f("name"))
            })
            .collect();
        if sync != "Synced" {
            let which = if objects.is_empty() { String::new() } else { format!(": {}", objects.join(", ")) };
            out.push(impact(
                Severity::Warning,
                "apps",
                "R23, F7",
                subject,
                format!("Argo CD app `{name}` is {sync}{which}"),
                "live: Argo CD syncs the objects back to the repository's (automated sync, or `argocd app sync`)"
                    .to_owned(),
            ));
        }
        if health != "Healthy" {
            out.push(impact(
                Severity::Warning,
                "apps",
                "R23, F7",
                subject,
                format!("Argo CD app `{name}` is {health}"),
                "live: its workloads are not what the repository asks for; see `kubectl describe` of its objects"
                    .to_owned(),
            ));
        }
    }
    Ok(out)
}
