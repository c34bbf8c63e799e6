//! Upgrade planning: from a cluster's current Talos and Kubernetes versions to a target, in
//! steps that each keep every support matrix satisfied (R26, F1):
//!
//! - the control plane moves one Kubernetes minor at a time (1.33 → 1.34 → 1.35 → 1.36);
//! - Talos is raised first whenever the next minor is outside its Kubernetes range
//!   ([`crate::upstream::talos::kubernetes_range`]), one Talos minor at a time;
//! - for a Cluster API managed cluster, the management cluster's core provider is raised first
//!   whenever the next minor is outside its workload range, worker pools are pinned to their
//!   version while the control plane goes ahead, never run ahead of it nor lag it by more
//!   than three minors, and follow in one step at the end;
//! - for a cluster built by OpenTofu, each step is the `talosctl upgrade` / `talosctl
//!   upgrade-k8s` operation after the fleet.kdl edit (F1: applying a config with a new image
//!   upgrades nothing).
//!
//! Each [`Step`] is the fleet.kdl edit to commit and what it rolls.
//!
//! A plan starts from what runs, not from an edited fleet.kdl: [`plan_from`] takes the
//! versions the cluster runs ([`Running`]: read from the committed out/ by [`running_in_out`],
//! or the fleet at a base revision as the fleet itself), and plans to targets that default to
//! the edited fleet.kdl's (`fleetc upgrade-plan`, docs/apply.md).

use std::fmt;

use crate::model::{Cluster, Environment, Fleet, Version};
use crate::upstream::capi::{CABPT, CACPPT, Support, core_for, core_management_range, core_workload_range, support};
use crate::upstream::talos::{kubernetes_newest, kubernetes_range, talos_newest};
use crate::upstream::{Minor, minor_text};

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub title: String,
    /// The fleet.kdl edits to commit, one per line.
    pub edits: Vec<String>,
    /// What the edit rolls, or the operations to run after `fleetc build` and apply.
    pub rolls: Vec<String>,
}

/// An ordered upgrade plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub heading: String,
    pub steps: Vec<Step>,
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.heading)?;
        if self.steps.is_empty() {
            return writeln!(f, "\nNothing to do: the cluster already runs these versions.");
        }
        for (i, s) in self.steps.iter().enumerate() {
            writeln!(f, "\nStep {}: {}", i + 1, s.title)?;
            for e in &s.edits {
                writeln!(f, "  edit:  {e}")?;
            }
            for r in &s.rolls {
                writeln!(f, "  then:  {r}")?;
            }
        }
        Ok(())
    }
}

/// The versions a cluster runs, where the plan starts, and where they were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    pub talos: Version,
    pub kubernetes: Version,
    /// Where: `out/tofu/home/cluster/home.auto.tfvars`, `HEAD:fleet.kdl`.
    pub source: String,
}

/// Plans the upgrade of `target` (`<env>/<cluster>`) to Kubernetes `kubernetes` and, when
/// given, Talos `talos`, from the versions `fleet` states. The error says why no plan exists.
pub fn plan(fleet: &Fleet, target: &str, kubernetes: Version, talos: Option<Version>) -> Result<Plan, String> {
    plan_from(fleet, target, kubernetes, talos, None)
}

fn find<'a>(fleet: &'a Fleet, target: &str) -> Result<(&'a Environment, &'a Cluster), String> {
    let (env_name, cluster_name) =
        target.split_once('/').ok_or_else(|| format!("`{target}` is not `<environment>/<cluster>`"))?;
    let env = fleet.environment(env_name).ok_or_else(|| format!("no environment `{env_name}`"))?;
    let cluster = env.cluster(cluster_name).ok_or_else(|| format!("no cluster `{cluster_name}` in `{env_name}`"))?;
    Ok((env, cluster))
}

/// [`plan`] from the versions the cluster runs: `running`'s when given (the fleet's
/// pools that follow the control plane run its version; pinned ones keep their pin), else
/// the fleet's own.
pub fn plan_from(
    fleet: &Fleet,
    target: &str,
    kubernetes: Version,
    talos: Option<Version>,
    running: Option<&Running>,
) -> Result<Plan, String> {
    let (env, cluster) = find(fleet, target)?;
    Planner::new(fleet, env, cluster, kubernetes, talos, running)?.run()
}

/// The versions `target` runs according to the committed output directory, whose files
/// `read` returns by their path in it: the cluster root's values
/// (`tofu/<env>/cluster/<env>.auto.tfvars`, its `secrets_talos_version` — the cluster's full
/// Talos version, [`crate::model::Cluster::secrets_talos_version`] — and `kubernetes_version`;
/// an out/ written before that value existed gives its `talos_version`, which was the full
/// version up to Talos 1.13),
/// or for a Cluster API cluster its control plane (`capi/<mgmt>/<cluster>/control-plane.yaml`:
/// the TalosControlPlane's `version` and the installer image's tag). `None` when out/ does
/// not hold the cluster.
pub fn running_in_out(fleet: &Fleet, target: &str, read: &dyn Fn(&str) -> Option<String>) -> Option<Running> {
    let (env, cluster) = find(fleet, target).ok()?;
    let unquote = |v: &str| v.trim().trim_matches('"').to_owned();
    if let Some(mgmt) = &cluster.managed_by {
        let path =
            format!("{}/control-plane.yaml", crate::layout::paths::capi_workload_dir(&mgmt.value, &cluster.name.value));
        let text = read(&path)?;
        let kubernetes = text
            .lines()
            .find_map(|l| l.strip_prefix("  version: "))
            .and_then(|v| unquote(v).trim_start_matches('v').parse().ok())?;
        let talos = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("image: ").filter(|i| i.contains("installer")))
            .and_then(|i| i.rsplit_once(':'))
            .and_then(|(_, tag)| unquote(tag).parse().ok())?;
        return Some(Running { talos, kubernetes, source: format!("out/{path}") });
    }
    let path = format!(
        "{}/{}.auto.tfvars",
        crate::layout::paths::tofu_root(&env.name.value, crate::layout::paths::CLUSTER),
        env.name.value
    );
    let text = read(&path)?;
    // `clusters = { <name> = { … secrets_talos_version = "v1.14.1" … kubernetes_version = "1.36.2" … } }`
    let head = format!("{} = {{", cluster.name.value);
    let mut lines = text.lines().skip_while(|l| l.trim() != "clusters = {").skip_while(|l| l.trim() != head);
    lines.next()?;
    let (mut talos, mut secrets, mut kubernetes) = (None, None, None);
    for l in lines {
        let l = l.trim();
        if l == "}" {
            break;
        }
        if let Some((k, v)) = l.split_once('=') {
            match k.trim() {
                "talos_version" => talos = unquote(v).parse().ok(),
                "secrets_talos_version" => secrets = unquote(v).parse().ok(),
                "kubernetes_version" => kubernetes = unquote(v).parse().ok(),
                _ => {}
            }
        }
    }
    Some(Running { talos: secrets.or(talos)?, kubernetes: kubernetes?, source: format!("out/{path}") })
}

fn minor_of(v: Version) -> Minor {
    v.minor_version()
}

fn next_minor(m: Minor) -> Minor {
    (m.0, m.1 + 1)
}

/// The version to pin for Kubernetes minor `m`: the target itself in its own minor, else the
/// newest release of `m` fleetc knows of (`check::kubernetes_newest`), else `m.0`.
fn pin(m: Minor, target: Version) -> Version {
    if minor_of(target) == m { target } else { kubernetes_newest(m).unwrap_or(Version::new(m.0, m.1, 0)) }
}

/// The Talos release to propose for minor `m`: `--talos` in its own minor, else the newest
/// known release of `m`.
fn talos_pin(m: Minor, target: Option<Version>) -> Version {
    match target {
        Some(t) if minor_of(t) == m => t,
        _ => talos_newest(m).unwrap_or(Version::new(m.0, m.1, 0)),
    }
}

struct Planner<'a> {
    fleet: &'a Fleet,
    env: &'a Environment,
    cluster: &'a Cluster,
    /// Where the current versions were read (`None`: fleet.kdl).
    source: Option<String>,
    mgmt: Option<&'a Cluster>,
    target_k8s: Version,
    target_talos: Option<Version>,
    talos: Version,
    cp: Version,
    /// Worker pools and their current versions, in declaration order.
    pools: Vec<(String, Version)>,
    core: Option<Version>,
    /// The management cluster's CABPT and CACPPT pins (a managed cluster only).
    bootstrap: Option<Version>,
    control_plane: Option<Version>,
    /// The clusters this one manages through Cluster API, with their Kubernetes versions (the
    /// oldest bounds which core this management cluster may run).
    managed: Vec<Version>,
    steps: Vec<Step>,
}

impl<'a> Planner<'a> {
    fn new(
        fleet: &'a Fleet,
        env: &'a Environment,
        cluster: &'a Cluster,
        target_k8s: Version,
        target_talos: Option<Version>,
        running: Option<&Running>,
    ) -> Result<Self, String> {
        let mgmt = match &cluster.managed_by {
            Some(m) => Some(env.cluster(&m.value).ok_or_else(|| format!("no management cluster `{}`", m.value))?),
            None => None,
        };
        let mgmt_capi = mgmt.and_then(|m| m.cluster_api.as_ref());
        // A managed cluster's core is its management cluster's; a management cluster's is its own.
        let core = mgmt_capi.or(cluster.cluster_api.as_ref()).map(|c| c.core.value);
        let managed = env
            .clusters
            .iter()
            .filter(|c| c.managed_by.as_ref().is_some_and(|m| m.value == cluster.name.value))
            .map(|c| c.kubernetes.value)
            .collect();
        let cp = running.map_or(cluster.kubernetes.value, |r| r.kubernetes);
        let talos = running.map_or(cluster.talos.value, |r| r.talos);
        if target_k8s < cp {
            return Err(format!(
                "Kubernetes {target_k8s} is older than the control plane's {cp}: fleetc plans upgrades only"
            ));
        }
        if let Some(t) = target_talos
            && t < talos
        {
            return Err(format!(
                "Talos {} is older than the cluster's {}: fleetc plans upgrades only",
                t.v(),
                talos.v()
            ));
        }
        // A pool that follows the control plane runs what the control plane runs.
        let pools = cluster
            .workers
            .iter()
            .map(|p| {
                let k = cluster.pool_kubernetes(p);
                (p.name.value.clone(), if k == cluster.kubernetes.value { cp } else { k })
            })
            .collect();
        Ok(Planner {
            fleet,
            env,
            cluster,
            source: running.map(|r| r.source.clone()),
            mgmt,
            target_k8s,
            target_talos,
            talos,
            cp,
            pools,
            core,
            bootstrap: mgmt_capi.map(|c| c.bootstrap_talos.value),
            control_plane: mgmt_capi.map(|c| c.control_plane_talos.value),
            managed,
            steps: Vec::new(),
        })
    }

    fn name(&self) -> &str {
        &self.cluster.name.value
    }

    fn run(mut self) -> Result<Plan, String> {
        let (from_k8s, from_talos) = (self.cp, self.talos);
        let target_minor = minor_of(self.target_k8s);
        while minor_of(self.cp) < target_minor {
            let next = next_minor(minor_of(self.cp));
            self.talos_for(next)?;
            self.core_for(next)?;
            self.management_core_for(next)?;
            self.talos_providers_for(next)?;
            if let Some((_, oldest)) = self.pools.iter().min_by_key(|(_, v)| *v)
                && next.1 > oldest.minor + 3
            {
                self.workers_to(self.cp);
            }
            self.control_plane_to(pin(next, self.target_k8s));
        }
        if self.cp < self.target_k8s {
            self.control_plane_to(self.target_k8s);
        }
        if let Some(t) = self.target_talos {
            while minor_of(self.talos) < minor_of(t) {
                let next = next_minor(minor_of(self.talos));
                self.talos_to(talos_pin(next, Some(t)))?;
            }
            if self.talos < t {
                self.talos_to(t)?;
            }
            self.talos_providers_for(minor_of(self.cp))?;
        }
        if self.mgmt.is_some() && self.pools.iter().any(|(_, v)| *v != self.cp) {
            self.workers_to(self.cp);
        }
        // The heading says where the plan ends, which may be past `--talos` only never: an
        // explicit `--talos` that cannot run a step is refused in `talos_for`.
        let mut heading = format!(
            "Upgrade plan for {}/{} ({}): Kubernetes {} → {}, Talos {} → {}",
            self.cluster.env,
            self.name(),
            match self.mgmt {
                Some(m) => format!("managed by `{}` through Cluster API", m.name),
                None => "built by OpenTofu".to_owned(),
            },
            from_k8s,
            self.cp,
            from_talos.v(),
            self.talos.v(),
        );
        if let Some(source) = &self.source {
            heading.push_str(&format!(
                "\nWhat runs, read from {source}: Kubernetes {from_k8s}, Talos {}.",
                from_talos.v()
            ));
        }
        Ok(Plan { heading, steps: self.steps })
    }

    /// Raises Talos, one minor at a time, until it runs Kubernetes minor `next`.
    fn talos_for(&mut self, next: Minor) -> Result<(), String> {
        loop {
            let (_, hi) = kubernetes_range(self.talos)
                .ok_or_else(|| format!("fleetc does not know which Kubernetes Talos {} runs", self.talos.v()))?;
            if hi >= next {
                return Ok(());
            }
            let m = next_minor(minor_of(self.talos));
            if let Some(t) = self.target_talos
                && minor_of(t) < m
            {
                return Err(format!(
                    "Talos {} (--talos) runs Kubernetes up to {}; Kubernetes {} needs Talos {} or later",
                    t.v(),
                    minor_text(kubernetes_range(t).map_or(hi, |r| r.1)),
                    minor_text(next),
                    minor_text(m)
                ));
            }
            self.talos_to(talos_pin(m, self.target_talos))?;
        }
    }

    fn talos_to(&mut self, v: Version) -> Result<(), String> {
        // In place (OpenTofu), a node leaves a minor from its newest patch, the path Talos
        // recommends and the one `fleetc diff` names (review::impact's `talos-version`); Cluster
        // API replaces the machines instead.
        if self.mgmt.is_none()
            && minor_of(v) > minor_of(self.talos)
            && let Some(latest) = talos_newest(minor_of(self.talos))
            && latest > self.talos
        {
            self.talos_to(latest)?;
        }
        if !crate::upstream::talos::talos_emittable(v) {
            return Err(format!(
                "the plan needs Talos {}, and fleetc writes no machine configuration for Talos {} (fleet::versions::talos-unsupported; its versions table is versions/talos.kdl): no step would pass `fleetc check`",
                v.v(),
                minor_text(minor_of(v))
            ));
        }
        let (lo, hi) =
            kubernetes_range(v).ok_or_else(|| format!("fleetc does not know which Kubernetes Talos {} runs", v.v()))?;
        let oldest = self.pools.iter().map(|(_, k)| *k).chain(std::iter::once(self.cp)).min().unwrap_or(self.cp);
        if minor_of(oldest) < lo || minor_of(self.cp) > hi {
            return Err(format!(
                "Talos {} runs Kubernetes {}–{}, and the cluster runs {oldest}–{}: no step keeps both in range",
                v.v(),
                minor_text(lo),
                minor_text(hi),
                self.cp
            ));
        }
        // The bootstrap and control-plane providers generate the new Talos's configs: raised
        // first when they do not state support for it.
        self.talos_providers(minor_of(v), minor_of(self.cp))?;
        let from = self.talos;
        self.talos = v;
        let name = self.name().to_owned();
        let mut rolls = Vec::new();
        if self.mgmt.is_some() {
            rolls.push(format!(
                "every machine of `{name}` is replaced, one at a time per rollout: new ProxmoxMachineTemplates (Talos {} image) and TalosConfigTemplates, TalosControlPlane and MachineDeployments repointed",
                v.v()
            ));
        } else {
            rolls.push(
                "`fleetc build`, then apply the cluster root (stores the new installer image; F1: it upgrades nothing)"
                    .into(),
            );
            if !matches!(self.env.provider, crate::model::Provider::Metal(_)) {
                // R14: the secrets' `talos_version` is the cluster's version, and it moves
                // forward with it (model::Cluster::secrets_talos_version).
                rolls.push(format!(
                    "the cluster root's plan updates `talos_machine_secrets` in place, its `talos_version` {} → {}: the identity is kept (the provider replaces it only for a lower value, upstream::talos_secrets)",
                    from.v(),
                    v.v()
                ));
            }
            // Each pool's own installer (its schematic, the SecureBoot variant for a
            // `secure-boot` pool), at the new version: what `fleetc upgrade` passes.
            let target = format!("{}/{name}", self.env.name.value);
            let mut per_pool = Vec::new();
            for pool in self.cluster.pools() {
                let Some(s) = self.fleet.schematic(&pool.schematic.value) else { continue };
                let image = s.installer(self.env.platform(), v, pool.disk.secure_boot());
                let hosts: Vec<String> = pool.machines.iter().map(|m| format!("`{}`", m.hostname)).collect();
                let what = if pool.role == crate::model::Role::ControlPlane {
                    "the control plane".to_owned()
                } else {
                    format!("pool `{}`", pool.name.value)
                };
                per_pool.push(format!("{what} ({}): `talosctl upgrade --image {image}`", hosts.join(", ")));
            }
            rolls.push(format!(
                "`fleetc upgrade {target}`: node by node, control plane first, `talosctl health` between nodes, each node rebooting once into Talos {}; {}",
                v.v(),
                per_pool.join("; ")
            ));
        }
        self.steps.push(Step {
            title: format!(
                "raise Talos {} → {} (it runs Kubernetes {}–{})",
                from.v(),
                v.v(),
                minor_text(kubernetes_range(v).map_or((0, 0), |r| r.0)),
                minor_text(kubernetes_range(v).map_or((0, 0), |r| r.1))
            ),
            edits: vec![format!("cluster \"{name}\" {{ talos \"{}\" }}", v.v())],
            rolls,
        });
        Ok(())
    }

    /// Raises the management cluster's core provider until it manages Kubernetes minor `next`.
    fn core_for(&mut self, next: Minor) -> Result<(), String> {
        let (Some(core), Some(mgmt)) = (self.core, self.mgmt) else { return Ok(()) };
        if core_workload_range(core).is_some_and(|(_, hi)| hi >= next) {
            return Ok(());
        }
        let v = core_for(next, false).ok_or_else(|| {
            format!("fleetc knows no Cluster API release that manages Kubernetes {}", minor_text(next))
        })?;
        if let Some((lo, hi)) = core_management_range(v) {
            let k = minor_of(mgmt.kubernetes.value);
            if k < lo || k > hi {
                return Err(format!(
                    "Cluster API {v} (needed for Kubernetes {}) runs on management clusters with Kubernetes {}–{}; upgrade `{}` first",
                    minor_text(next),
                    minor_text(lo),
                    minor_text(hi),
                    mgmt.name
                ));
            }
        }
        self.core = Some(v);
        self.steps.push(Step {
            title: format!(
                "raise Cluster API core {core} → {v} on `{}` (it manages Kubernetes up to {})",
                mgmt.name,
                minor_text(core_workload_range(v).map_or(next, |r| r.1))
            ),
            edits: vec![format!("cluster \"{}\" {{ cluster-api {{ core \"{v}\" }} }}", mgmt.name)],
            rolls: vec![format!(
                "the operator upgrades the CoreProvider on `{}`; no machine of `{}` is replaced",
                mgmt.name,
                self.name()
            )],
        });
        Ok(())
    }

    /// R13 (capi-argocd.md): a management cluster's own Kubernetes must stay inside its core
    /// provider's management range; raise the core first, keeping every cluster it manages
    /// inside the new core's workload range.
    fn management_core_for(&mut self, next: Minor) -> Result<(), String> {
        if self.mgmt.is_some() || self.cluster.cluster_api.is_none() {
            return Ok(());
        }
        let Some(core) = self.core else { return Ok(()) };
        if core_management_range(core).is_some_and(|(lo, hi)| lo <= next && next <= hi) {
            return Ok(());
        }
        let v = core_for(next, true).ok_or_else(|| {
            format!(
                "fleetc knows no Cluster API release that runs on a management cluster with Kubernetes {}",
                minor_text(next)
            )
        })?;
        if let (Some((lo, _)), Some(oldest)) = (core_workload_range(v), self.managed.iter().min())
            && minor_of(*oldest) < lo
        {
            return Err(format!(
                "Kubernetes {} on `{}` needs Cluster API {v}, which manages workload clusters from Kubernetes {} on; a cluster it manages runs {oldest}: upgrade it first",
                minor_text(next),
                self.name(),
                minor_text(lo)
            ));
        }
        self.core = Some(v);
        self.steps.push(Step {
            title: format!(
                "raise Cluster API core {core} → {v} on `{}` (it runs on Kubernetes {})",
                self.name(),
                minor_text(next)
            ),
            edits: vec![format!("cluster \"{}\" {{ cluster-api {{ core \"{v}\" }} }}", self.name())],
            rolls: vec![format!("the operator upgrades the CoreProvider on `{}`; no machine is replaced", self.name())],
        });
        Ok(())
    }

    /// R7: a managed cluster's CABPT and CACPPT must state support for its Talos and for the
    /// Kubernetes minor `next` (`upstream::capi`); raise each to the newest release of
    /// its table that does.
    fn talos_providers_for(&mut self, next: Minor) -> Result<(), String> {
        self.talos_providers(minor_of(self.talos), next)
    }

    /// [`Self::talos_providers_for`] for Talos minor `talos` (a raise about to happen).
    fn talos_providers(&mut self, talos: Minor, next: Minor) -> Result<(), String> {
        let Some(mgmt) = self.mgmt else { return Ok(()) };
        let fits =
            |s: Support| s.talos.0 <= talos && talos <= s.talos.1 && s.kubernetes.0 <= next && next <= s.kubernetes.1;
        let providers: [(&str, &str, &[Support], Option<Version>); 2] = [
            ("CABPT", "bootstrap-talos", CABPT, self.bootstrap),
            ("CACPPT", "control-plane-talos", CACPPT, self.control_plane),
        ];
        for (short, field, table, pin) in providers {
            let Some(pin) = pin else { continue };
            if support(table, pin).is_some_and(fits) {
                continue;
            }
            let Some(row) = table.iter().rev().find(|s| fits(**s) && s.release.1 == pin.minor) else {
                return Err(format!(
                    "no {short} {}.{} release fleetc knows states support for Talos {} with Kubernetes {}",
                    pin.major,
                    pin.minor,
                    minor_text(talos),
                    minor_text(next)
                ));
            };
            let v = Version::new(row.release.0, row.release.1, row.release.2);
            if v <= pin {
                continue;
            }
            if short == "CABPT" {
                self.bootstrap = Some(v);
            } else {
                self.control_plane = Some(v);
            }
            self.steps.push(Step {
                title: format!(
                    "raise {short} {pin} → {v} on `{}` (it supports Talos {}–{}, Kubernetes {}–{})",
                    mgmt.name,
                    minor_text(row.talos.0),
                    minor_text(row.talos.1),
                    minor_text(row.kubernetes.0),
                    minor_text(row.kubernetes.1)
                ),
                edits: vec![format!("cluster \"{}\" {{ cluster-api {{ {field} \"{v}\" }} }}", mgmt.name)],
                rolls: vec![format!(
                    "the operator upgrades the provider on `{}`; no machine of `{}` is replaced",
                    mgmt.name,
                    self.name()
                )],
            });
        }
        Ok(())
    }

    fn control_plane_to(&mut self, v: Version) {
        let name = self.name().to_owned();
        let mut edits = vec![format!("cluster \"{name}\" {{ kubernetes \"{v}\" }}")];
        let mut rolls = Vec::new();
        if self.mgmt.is_some() {
            for (pool, k) in &self.pools {
                edits.push(format!("pool \"{pool}\" kubernetes=\"{k}\" (stays behind the control plane)"));
            }
            rolls.push(format!(
                "TalosControlPlane `{name}` (version {}): control-plane machines replaced one at a time; worker pools do not roll",
                v.v()
            ));
        } else {
            rolls.push("`fleetc build`, then apply the cluster root".into());
            let first =
                self.cluster.control_plane.machines.first().map_or("<a control-plane node>", |m| m.hostname.as_str());
            rolls.push(format!(
                "`talosctl upgrade-k8s --to {v}` through `{first}`, the first control-plane node (`fleetc upgrade {}/{name}` runs it): control-plane components first, then every kubelet",
                self.env.name.value
            ));
            for p in &mut self.pools {
                p.1 = v;
            }
        }
        if minor_of(self.cp) != minor_of(v)
            && kubernetes_newest(minor_of(v)).is_none()
            && minor_of(v) != minor_of(self.target_k8s)
        {
            edits.push(format!("(fleetc knows no {} patch release: pin the newest)", minor_text(minor_of(v))));
        }
        self.steps.push(Step { title: format!("control plane to Kubernetes {v}"), edits, rolls });
        self.cp = v;
    }

    fn workers_to(&mut self, v: Version) {
        let mut edits = Vec::new();
        let mut rolled = Vec::new();
        for (pool, k) in &mut self.pools {
            if *k != v {
                edits.push(if v == self.cp {
                    format!("pool \"{pool}\": remove `kubernetes=` (follows the control plane)")
                } else {
                    format!("pool \"{pool}\" kubernetes=\"{v}\"")
                });
                rolled.push(format!("MachineDeployment `{}-{pool}`", self.cluster.name));
                *k = v;
            }
        }
        if edits.is_empty() {
            return;
        }
        self.steps.push(Step {
            title: format!("worker pools to Kubernetes {v}"),
            edits,
            rolls: vec![format!("{}: machines replaced one at a time (a new one first, R26)", rolled.join(", "))],
        });
    }
}
