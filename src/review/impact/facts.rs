//! A fleet flattened into facts: one display value per (entity, field), entities named by
//! [`Scope`]. Comparing the facts of two fleets gives the [`FactChange`]s the impact rules
//! read. Entities renamed with `was=` are matched to their former names first, so a
//! renamed cluster is one cluster whose name changed, not one removed and one added.
//!
//! Derived values are facts too, because they are what reaches a machine: a pool's
//! `instance-type` (its size class as the provider reads it) and `schematic-id` (the
//! installer it boots).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::model::{Cluster, Environment, Fleet, PatchLevel, Pool, Provider, Role};

/// An entity of the fleet. Names are the new fleet's names once renames are applied.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    Fleet,
    Schematic(String),
    Addon(String),
    Env(String),
    /// A cloud service of an environment: `postgres`, `bucket`, `registry`, `secret`.
    Service {
        env: String,
        kind: &'static str,
        name: String,
    },
    Cluster {
        env: String,
        cluster: String,
    },
    Pool {
        env: String,
        cluster: String,
        pool: String,
    },
    App {
        env: String,
        cluster: String,
        app: String,
    },
}

impl Scope {
    pub fn env(&self) -> Option<&str> {
        match self {
            Scope::Env(e)
            | Scope::Service { env: e, .. }
            | Scope::Cluster { env: e, .. }
            | Scope::Pool { env: e, .. }
            | Scope::App { env: e, .. } => Some(e),
            _ => None,
        }
    }
    pub fn cluster(&self) -> Option<&str> {
        match self {
            Scope::Cluster { cluster, .. } | Scope::Pool { cluster, .. } | Scope::App { cluster, .. } => Some(cluster),
            _ => None,
        }
    }
    /// The scope of the cluster this entity belongs to.
    pub fn cluster_scope(&self) -> Option<Scope> {
        Some(Scope::Cluster { env: self.env()?.to_owned(), cluster: self.cluster()?.to_owned() })
    }
    /// True when `self` is `other` or lies inside it (a pool inside its cluster, …).
    pub fn within(&self, other: &Scope) -> bool {
        if self == other {
            return true;
        }
        match other {
            Scope::Env(e) => self.env() == Some(e),
            Scope::Cluster { env, cluster } => self.env() == Some(env) && self.cluster() == Some(cluster),
            _ => false,
        }
    }
    /// Where an impact on this entity is reported: `fleet`, `staging`, `staging/main`.
    pub fn subject(&self) -> String {
        match (self.env(), self.cluster()) {
            (Some(e), Some(c)) => format!("{e}/{c}"),
            (Some(e), None) => e.to_owned(),
            _ => "fleet".to_owned(),
        }
    }
    /// How fleet.kdl names the entity: "worker pool `system`", "bucket `app`", …
    pub fn what(&self) -> String {
        match self {
            Scope::Fleet => "the fleet".to_owned(),
            Scope::Schematic(n) => format!("schematic `{n}`"),
            Scope::Addon(n) => format!("add-on `{n}`"),
            Scope::Env(e) => format!("environment `{e}`"),
            Scope::Service { kind, name, .. } => format!("{kind} `{name}`"),
            Scope::Cluster { cluster, .. } => format!("cluster `{cluster}`"),
            Scope::Pool { pool, .. } if pool == CONTROL_PLANE => "the control plane".to_owned(),
            Scope::Pool { pool, .. } => format!("worker pool `{pool}`"),
            Scope::App { app, .. } => format!("app `{app}`"),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.subject(), self.what())
    }
}

/// The control-plane pool's name in the model.
pub const CONTROL_PLANE: &str = "cp";

/// The field that exists for every entity: present on the side where the entity exists.
pub const EXISTS: &str = "exists";

/// One value that differs between the two fleets. `None` where the entity (or the value)
/// does not exist on that side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactChange {
    pub scope: Scope,
    pub field: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

impl FactChange {
    /// `old → new`, with `(none)` for a missing side.
    pub fn values(&self) -> String {
        format!("{} → {}", self.old.as_deref().unwrap_or("(none)"), self.new.as_deref().unwrap_or("(none)"))
    }
}

/// An entity whose name changed, matched through `was=` in the new fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// The entity, with its new name.
    pub scope: Scope,
    pub old_name: String,
}

/// Every `was=` rename that matched an entity of the old fleet.
#[derive(Debug, Clone, Default)]
pub struct Renames {
    pub list: Vec<Rename>,
    clusters: BTreeMap<(String, String), String>,
    pools: BTreeMap<(String, String, String), String>,
    services: BTreeMap<(String, &'static str, String), String>,
}

impl Renames {
    /// The old fleet's scope under the new fleet's names.
    fn translate(&self, s: Scope) -> Scope {
        let cl = |env: &str, c: String| self.clusters.get(&(env.to_owned(), c.clone())).cloned().unwrap_or(c);
        match s {
            Scope::Cluster { env, cluster } => Scope::Cluster { cluster: cl(&env, cluster), env },
            Scope::Pool { env, cluster, pool } => {
                let cluster = cl(&env, cluster);
                let pool = self.pools.get(&(env.clone(), cluster.clone(), pool.clone())).cloned().unwrap_or(pool);
                Scope::Pool { env, cluster, pool }
            }
            Scope::App { env, cluster, app } => Scope::App { cluster: cl(&env, cluster), env, app },
            Scope::Service { env, kind, name } => {
                let name = self.services.get(&(env.clone(), kind, name.clone())).cloned().unwrap_or(name);
                Scope::Service { env, kind, name }
            }
            s => s,
        }
    }
}

type Facts = BTreeMap<(Scope, String), String>;

fn join<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items.into_iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
}

fn put(f: &mut Facts, scope: &Scope, field: &str, value: impl fmt::Display) {
    f.insert((scope.clone(), field.to_owned()), value.to_string());
}

/// A service of an environment: kind, name, former name, and its fields.
type Service = (&'static str, String, Option<String>, Vec<(&'static str, String)>);

fn services(env: &Environment) -> Vec<Service> {
    let mut v = Vec::new();
    for p in &env.postgres {
        v.push((
            "postgres",
            p.name.value.clone(),
            p.former_name.as_ref().map(|n| n.value.clone()),
            vec![
                ("node-type", p.node_type.value.clone()),
                ("engine", p.engine.value.clone()),
                ("password-version", p.password_version.value.to_string()),
            ],
        ));
    }
    for b in &env.buckets {
        v.push((
            "bucket",
            b.name.value.clone(),
            b.former_name.as_ref().map(|n| n.value.clone()),
            vec![("bucket-name", b.bucket_name.value.clone())],
        ));
    }
    for r in &env.registries {
        v.push((
            "registry",
            r.name.value.clone(),
            r.former_name.as_ref().map(|n| n.value.clone()),
            vec![("namespace", r.namespace.value.clone())],
        ));
    }
    for s in &env.secrets {
        v.push(("secret", s.name.value.clone(), s.former_name.as_ref().map(|n| n.value.clone()), Vec::new()));
    }
    v
}

/// The provider's reading of a size class: the Scaleway instance type, or a Proxmox VM shape.
pub fn instance_type(env: &Environment, size: &str) -> String {
    match env.size(size) {
        None => format!("(no size `{size}`)"),
        Some(s) => match (&s.instance_type, &s.cores, &s.memory) {
            (Some(t), _, _) => t.value.clone(),
            (None, cores, memory) => {
                let mut parts = Vec::new();
                if let Some(c) = cores {
                    parts.push(format!("{} cores", c.value));
                }
                if let Some(m) = memory {
                    parts.push(format!("{} memory", m.value));
                }
                if s.kvm {
                    parts.push("kvm".to_owned());
                }
                parts.join(", ")
            }
        },
    }
}

/// A pool's encrypted volumes and their key sources (`STATE:tpm, EPHEMERAL:kms`).
pub const DISK_ENCRYPTION: &str = "disk-encryption";
/// A pool's boot: `on` with SecureBoot.
pub const SECURE_BOOT: &str = "secure-boot";

fn pool_facts(f: &mut Facts, fleet: &Fleet, env: &Environment, cluster: &Cluster, pool: &Pool) {
    let s =
        Scope::Pool { env: env.name.value.clone(), cluster: cluster.name.value.clone(), pool: pool.name.value.clone() };
    put(f, &s, EXISTS, "yes");
    put(f, &s, "count", pool.count.value);
    put(f, &s, "size", &pool.size.value);
    put(f, &s, "instance-type", instance_type(env, &pool.size.value));
    put(f, &s, "schematic", &pool.schematic.value);
    put(f, &s, "schematic-id", fleet.schematic(&pool.schematic.value).map_or("(unknown)", |s| s.id.as_str()));
    put(f, &s, "ephemeral-min-size", pool.ephemeral_min_size.value);
    put(f, &s, "data-disk-size", pool.data_disk_size.value);
    put(f, &s, "system-disk-size", pool.system_disk_size.value);
    put(f, &s, "labels", join(pool.labels.iter().map(|(k, v)| format!("{k}={}", v.value))));
    put(f, &s, "annotations", join(pool.annotations.iter().map(|(k, v)| format!("{k}={}", v.value))));
    put(
        f,
        &s,
        "taints",
        join(pool.taints.iter().map(|t| {
            format!(
                "{}{}:{}",
                t.key,
                t.value.as_deref().map(|v| format!("={v}")).unwrap_or_default(),
                t.effect.as_str()
            )
        })),
    );
    put(f, &s, "addresses", join(pool.machines.iter().filter_map(|m| m.address.as_ref().map(|a| a.value))));
    let encrypted: Vec<String> =
        pool.disk.encrypt.iter().map(|e| format!("{}:{}", e.volume.value.label(), e.key.value.as_str())).collect();
    put(f, &s, DISK_ENCRYPTION, if encrypted.is_empty() { "none".to_owned() } else { encrypted.join(", ") });
    put(f, &s, SECURE_BOOT, if pool.disk.secure_boot() { "on" } else { "off" });
    if let Provider::Proxmox(px) = &env.provider {
        let agent = fleet.schematic(&pool.schematic.value).is_some_and(crate::model::Schematic::has_guest_agent);
        put(f, &s, "guest-agent", if agent { "enabled" } else { "disabled" });
        put(
            f,
            &s,
            "pve-nodes",
            join(pool.machines.iter().map(|m| format!("{}@{}", m.hostname, px.placement(m.index)))),
        );
    }
    // The user's Talos patches (a file and its content's digest): what they change is read off
    // the pool's patch files under out/talos, like any other Talos field.
    put(f, &s, "patches", join(pool.patches.iter().map(patch_fact)));
    // A named node's own patches (`node "…" { patch … }`), per hostname.
    put(
        f,
        &s,
        NODE_PATCHES,
        join(pool.machines.iter().flat_map(|m| {
            m.settings
                .patches
                .iter()
                .filter(|p| p.level == PatchLevel::Node)
                .map(|p| format!("{}:{}", m.hostname, patch_fact(p)))
        })),
    );
}

/// A patch as a fact: its file, its content's digest, and the rules it overrides
/// (`patches/x.yaml@0123456789ab` or `…@0123456789ab[overrides=R21]`).
fn patch_fact(p: &crate::model::Patch) -> String {
    let digest = &crate::digest::sha256_hex(p.file.text.as_bytes())[..12];
    let overrides: Vec<&str> = p.overrides.iter().map(|o| o.value.as_str()).collect();
    if overrides.is_empty() {
        format!("{}@{digest}", p.path.value)
    } else {
        format!("{}@{digest}[overrides={}]", p.path.value, overrides.join(","))
    }
}

/// The patches of a pool's named nodes (`host:file@digest`).
pub const NODE_PATCHES: &str = "node-patches";

fn cluster_facts(f: &mut Facts, fleet: &Fleet, env: &Environment, c: &Cluster) {
    let s = Scope::Cluster { env: env.name.value.clone(), cluster: c.name.value.clone() };
    put(f, &s, EXISTS, "yes");
    put(f, &s, "talos", c.talos.value.v());
    put(f, &s, "kubernetes", c.kubernetes.value);
    put(f, &s, "endpoint", format!("{}{}", c.endpoint_url(), if c.endpoint.public { " (public)" } else { "" }));
    put(f, &s, "cert-sans", join(c.cert_sans.iter().map(|v| &v.value)));
    put(f, &s, "discovery", c.discovery.value);
    put(f, &s, "apply-mode", c.apply_mode.value.as_str());
    put(f, &s, "cni", c.cni.as_ref().map_or("default", |v| v.value.as_str()));
    put(f, &s, "addons", join(c.addons.iter().map(|v| &v.value)));
    put(f, &s, "runtimes", join(c.runtimes.iter().map(|r| r.value.as_str())));
    put(f, &s, "pod-cidr", c.pod_cidr.value);
    put(f, &s, "service-cidr", c.service_cidr.value);
    put(f, &s, "single-node", c.single_node.as_ref().is_some_and(|v| v.value));
    put(f, &s, "managed-by", c.managed_by.as_ref().map_or("", |v| v.value.as_str()));
    put(f, &s, "sealed", join(c.sealed.iter().map(|v| &v.value)));
    put(f, &s, "ip-pool", c.ip_pool.as_ref().map(|v| v.value.to_string()).unwrap_or_default());
    if let Some(api) = &c.cluster_api {
        put(
            f,
            &s,
            "cluster-api",
            format!(
                "core {} bootstrap-talos {} control-plane-talos {} infrastructure-proxmox {} ipam-in-cluster {} operator {}",
                api.core.value,
                api.bootstrap_talos.value,
                api.control_plane_talos.value,
                api.infrastructure_proxmox.value,
                api.ipam_in_cluster.value,
                api.operator.value
            ),
        );
        let manifests = [&api.cert_manager, &api.operator_manifest]
            .into_iter()
            .flatten()
            .map(|v| format!("{}@{}", v.path.value, &v.sha256.value[..v.sha256.value.len().min(12)]));
        put(f, &s, "cluster-api-manifests", join(manifests));
    }
    for pool in c.pools() {
        pool_facts(f, fleet, env, c, pool);
    }
    for app in &c.apps {
        let a = Scope::App { env: env.name.value.clone(), cluster: c.name.value.clone(), app: app.name.value.clone() };
        put(f, &a, EXISTS, "yes");
        let source = match &app.source {
            crate::model::AppSource::Path { path, .. } => format!("path {}", path.value),
            crate::model::AppSource::Chart { repo, chart, version, values, .. } => format!(
                "chart {} from {}{}{}",
                chart.value,
                repo.value,
                version.as_ref().map(|v| format!(" version {}", v.value)).unwrap_or_default(),
                values.as_ref().map(|v| format!(" values {}", v.value)).unwrap_or_default()
            ),
        };
        put(f, &a, "source", source);
        put(f, &a, "namespace", &app.namespace.value);
        put(f, &a, "after", join(app.after.iter().map(|v| &v.value)));
        put(f, &a, "wave", app.wave.as_ref().map(|w| w.value.to_string()).unwrap_or_default());
        put(f, &a, "sync", if app.auto_sync { "auto" } else { "manual" });
        put(f, &a, "postgres", join(app.postgres.iter().map(|p| &p.value)));
    }
}

/// Every fact of a fleet, under its own names.
pub fn facts(fleet: &Fleet) -> BTreeMap<(Scope, String), String> {
    let mut f = Facts::new();
    let fl = Scope::Fleet;
    put(&mut f, &fl, "name", &fleet.name.value);
    if let Some(g) = &fleet.gitops {
        put(&mut f, &fl, "gitops", format!("{} at {}", g.repo.value, g.revision.value));
    }
    if let Some(a) = &fleet.argocd {
        put(
            &mut f,
            &fl,
            "argocd",
            format!(
                "{} in namespace {} ({}@{})",
                a.version.value, a.namespace.value, a.manifest.path.value, a.manifest.sha256.value
            ),
        );
    }
    for s in fleet.schematics.values() {
        let sc = Scope::Schematic(s.name.value.clone());
        put(&mut f, &sc, EXISTS, "yes");
        put(&mut f, &sc, "id", &s.id);
    }
    for a in fleet.addons.values() {
        let sc = Scope::Addon(a.name.value.clone());
        put(&mut f, &sc, EXISTS, "yes");
        put(&mut f, &sc, "version", &a.version.value);
        put(&mut f, &sc, "manifest", format!("{}@{}", a.manifest.path.value, a.manifest.sha256.value));
    }
    for env in &fleet.environments {
        let e = Scope::Env(env.name.value.clone());
        put(&mut f, &e, EXISTS, "yes");
        match &env.provider {
            Provider::Scaleway(s) => {
                put(
                    &mut f,
                    &e,
                    "provider",
                    format!("scaleway project {} region {} zone {}", s.project.value, s.region.value, s.zone.value),
                );
            }
            Provider::Metal(_) => put(&mut f, &e, "provider", "metal"),
            Provider::Proxmox(p) => put(
                &mut f,
                &e,
                "provider",
                format!(
                    "proxmox {}{} node {} nodes {} image-datastore {} bridge {} datastore {} gateway {} dns {}",
                    p.endpoint.value,
                    if p.insecure { " (insecure)" } else { "" },
                    p.node.value,
                    join(p.nodes.iter().map(|n| &n.value)),
                    p.image_datastore.value,
                    p.bridge.value,
                    p.datastore.value,
                    p.gateway.value,
                    join(p.dns.iter().map(|d| d.value))
                ),
            ),
        }
        for name in env.provider.sizes().keys() {
            put(&mut f, &e, &format!("size {name}"), instance_type(env, name));
        }
        if let Some(st) = &env.state {
            put(&mut f, &e, "state", st.location());
            put(&mut f, &e, "state-checksum", if st.skip_checksum { "skipped" } else { "verified" });
        }
        put(&mut f, &e, "network", env.network.value);
        put(&mut f, &e, "gateway", env.gateway.as_ref().map(|g| g.value.to_string()).unwrap_or_default());
        put(&mut f, &e, "admin-ranges", join(env.admin_ranges.iter().map(|r| r.value)));
        put(&mut f, &e, "recipients", join(env.recipients.iter().map(|r| &r.value)));
        for (kind, name, _, fields) in services(env) {
            let s = Scope::Service { env: env.name.value.clone(), kind, name };
            put(&mut f, &s, EXISTS, "yes");
            for (k, v) in fields {
                put(&mut f, &s, k, v);
            }
        }
        for c in &env.clusters {
            cluster_facts(&mut f, fleet, env, c);
        }
    }
    f
}

/// Matches `was=` declarations of `new` against the entities of `old`. A `was=` names a
/// former name that `old` has, while `old` has no entity of the new name: otherwise it is a
/// leftover of an earlier rename and means nothing here.
pub fn renames(old: &Fleet, new: &Fleet) -> Renames {
    let mut r = Renames::default();
    for env in &new.environments {
        let Some(old_env) = old.environment(&env.name.value) else { continue };
        let e = env.name.value.clone();
        for c in &env.clusters {
            let mut old_cluster = old_env.cluster(&c.name.value);
            if old_cluster.is_none()
                && let Some(was) = &c.former_name
                && let Some(oc) = old_env.cluster(&was.value)
            {
                r.clusters.insert((e.clone(), was.value.clone()), c.name.value.clone());
                r.list.push(Rename {
                    scope: Scope::Cluster { env: e.clone(), cluster: c.name.value.clone() },
                    old_name: was.value.clone(),
                });
                old_cluster = Some(oc);
            }
            let Some(oc) = old_cluster else { continue };
            for p in &c.workers {
                let exists = oc.workers.iter().any(|op| op.name.value == p.name.value);
                if !exists
                    && let Some(was) = &p.former_name
                    && oc.workers.iter().any(|op| op.name.value == was.value)
                {
                    r.pools.insert((e.clone(), c.name.value.clone(), was.value.clone()), p.name.value.clone());
                    r.list.push(Rename {
                        scope: Scope::Pool {
                            env: e.clone(),
                            cluster: c.name.value.clone(),
                            pool: p.name.value.clone(),
                        },
                        old_name: was.value.clone(),
                    });
                }
            }
        }
        let old_services = services(old_env);
        for (kind, name, was, _) in services(env) {
            let exists = old_services.iter().any(|(k, n, _, _)| *k == kind && *n == name);
            if !exists
                && let Some(was) = was
                && old_services.iter().any(|(k, n, _, _)| *k == kind && *n == was)
            {
                r.services.insert((e.clone(), kind, was.clone()), name.clone());
                r.list.push(Rename { scope: Scope::Service { env: e.clone(), kind, name }, old_name: was });
            }
        }
    }
    r
}

/// The differences between two fleets, renamed entities matched, in scope order.
pub fn compare(old: &Fleet, new: &Fleet) -> (Vec<FactChange>, Renames) {
    let renames = renames(old, new);
    let old_facts: Facts = facts(old).into_iter().map(|((s, k), v)| ((renames.translate(s), k), v)).collect();
    let new_facts = facts(new);
    let keys: BTreeSet<&(Scope, String)> = old_facts.keys().chain(new_facts.keys()).collect();
    let mut changes = Vec::new();
    for key in keys {
        let (o, n) = (old_facts.get(key), new_facts.get(key));
        if o != n {
            changes.push(FactChange { scope: key.0.clone(), field: key.1.clone(), old: o.cloned(), new: n.cloned() });
        }
    }
    (changes, renames)
}

/// The role of a pool scope in `fleet`, if the pool exists there.
pub fn role(fleet: &Fleet, scope: &Scope) -> Option<Role> {
    let Scope::Pool { env, cluster, pool } = scope else { return None };
    let c = fleet.environment(env)?.cluster(cluster)?;
    c.pools().find(|p| p.name.value == *pool).map(|p| p.role)
}

/// The model's debug text without source positions: equal for two fleets that mean the same.
fn meaning<T: fmt::Debug>(v: &T) -> String {
    let text = format!("{v:?}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find("Span { file: FileId(") {
        out.push_str(&rest[..i]);
        match rest[i..].find('}') {
            Some(j) => rest = &rest[i + j + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    // A `was=` names the past; it changes nothing by itself (a matched rename is a fact).
    let mut clean = String::with_capacity(out.len());
    let mut rest = out.as_str();
    const WAS: &str = "former_name: Some(Spanned { value: \"";
    while let Some(i) = rest.find(WAS) {
        clean.push_str(&rest[..i]);
        clean.push_str("former_name: None");
        match rest[i..].find("span:  })") {
            Some(j) => rest = &rest[i + j + "span:  })".len()..],
            None => rest = "",
        }
    }
    clean.push_str(rest);
    clean
}

/// Environments (and the fleet's own settings, as `None`) that differ in the model while
/// their facts do not: a field added to the model that this module does not know yet.
pub fn unmodelled(old: &Fleet, new: &Fleet, changes: &[FactChange], renames: &Renames) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let fleet_level = |f: &Fleet| meaning(&(&f.name, &f.gitops, &f.argocd, &f.schematics, &f.addons));
    if fleet_level(old) != fleet_level(new) && !changes.iter().any(|c| c.scope.env().is_none()) {
        out.push(None);
    }
    for env in &new.environments {
        let Some(o) = old.environment(&env.name.value) else { continue };
        let name = Some(env.name.value.as_str());
        let explained =
            changes.iter().any(|c| c.scope.env() == name) || renames.list.iter().any(|r| r.scope.env() == name);
        if !explained && meaning(o) != meaning(env) {
            out.push(Some(env.name.value.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_do_not_count_as_meaning() {
        #[derive(Debug)]
        #[allow(dead_code)]
        struct S(crate::diag::Spanned<u32>);
        let a = S(crate::diag::Spanned::new(1, crate::diag::Span::new(crate::diag::FileId(0), 3, 4)));
        let b = S(crate::diag::Spanned::new(1, crate::diag::Span::new(crate::diag::FileId(0), 9, 4)));
        let c = S(crate::diag::Spanned::new(2, crate::diag::Span::new(crate::diag::FileId(0), 9, 4)));
        assert_eq!(meaning(&a), meaning(&b));
        assert_ne!(meaning(&a), meaning(&c));
    }

    #[test]
    fn a_was_alone_means_nothing() {
        #[derive(Debug)]
        #[allow(dead_code)]
        struct P {
            former_name: Option<crate::diag::Spanned<String>>,
            count: u32,
        }
        let span = crate::diag::Span::new(crate::diag::FileId(0), 3, 4);
        let a = P { former_name: None, count: 1 };
        let b = P { former_name: Some(crate::diag::Spanned::new("old".to_owned(), span)), count: 1 };
        let c = P { former_name: Some(crate::diag::Spanned::new("old".to_owned(), span)), count: 2 };
        assert_eq!(meaning(&a), meaning(&b));
        assert_ne!(meaning(&a), meaning(&c));
    }
}
