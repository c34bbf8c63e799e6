//! The impact rules, one function each, listed in [`RULES`]. A rule reads the fact changes
//! and the artifact diff in [`Ctx`], pushes what the change does to running clusters, and
//! claims what it explained; [`unknown`] reports everything left unclaimed. Each rule cites
//! the domain ids (../shared/domain.md) its effect rests on, and docs/diff.md lists them.
//!
//! Adding a rule: write the function, add its line to [`RULES`], add a case to the test
//! table at the bottom (a test fails while a rule has no case), document it in docs/diff.md.

use std::collections::{BTreeMap, BTreeSet};

mod machine_arguments;
mod talos_fields;
use machine_arguments::machine_arguments;
use talos_fields::talos_fields;
pub use talos_fields::{Reach, TABLE as TALOS_FIELDS};

use super::facts::{self, CONTROL_PLANE, EXISTS, FactChange, Scope};
use super::{Ctx, Impact, Outcome, Severity};
use crate::model::{Fleet, Role, Version};
use crate::review::files::Status;
use crate::review::object::hcl_attribute;

/// One rule: its name (shown in JSON output), the domain ids it cites, what it covers.
pub struct Rule {
    pub name: &'static str,
    pub cites: &'static str,
    pub covers: &'static str,
    pub check: fn(&Ctx<'_>, &mut Outcome),
}

/// Every rule, in the order their impacts are listed within one severity.
pub static RULES: &[Rule] = &[
    Rule {
        name: "lifecycle",
        cites: "R14, F13",
        covers: "environments, clusters, pools and services added, removed, or renamed with or without `was=`; a bucket or registry whose global name changes",
        check: lifecycle,
    },
    Rule {
        name: "install-image",
        cites: "F1, F2, R17",
        covers: "a pool's schematic, or a schematic's content, changed",
        check: install_image,
    },
    Rule { name: "talos-version", cites: "F1", covers: "a cluster's Talos version changed", check: talos_version },
    Rule {
        name: "disk-security",
        cites: "F1, R17",
        covers: "a pool's disk encryption (volumes, key sources) or SecureBoot changed",
        check: disk_security,
    },
    Rule {
        name: "kubernetes-version",
        cites: "F1, R26",
        covers: "a cluster's Kubernetes version changed",
        check: kubernetes_version,
    },
    Rule {
        name: "machine-arguments",
        cites: "F1, F4, R29",
        covers: "a value the roots' machines are built from changed (image, instance type, disk sizes, addresses, Proxmox VE node, guest agent, Scaleway project or zone): what its provider does, from the table the emitter reads (emit::tofu::arguments)",
        check: machine_arguments,
    },
    Rule {
        name: "size-class",
        cites: "F4",
        covers: "a pool's size class, or a class no pool uses, changed without changing what the provider builds",
        check: size_class,
    },
    Rule {
        name: "control-plane-count",
        cites: "R29",
        covers: "the number of control-plane nodes changed",
        check: control_plane_count,
    },
    Rule {
        name: "worker-count",
        cites: "R5",
        covers: "the number of nodes of a worker pool changed",
        check: worker_count,
    },
    Rule {
        name: "apply-mode",
        cites: "R19, F10",
        covers: "the apply mode changed, or a running cluster with apply mode `reboot` changed",
        check: apply_mode,
    },
    Rule {
        name: "ephemeral-volume",
        cites: "F5, R15",
        covers: "the EPHEMERAL volume's selector (`ephemeral-min-size`) changed",
        check: ephemeral_volume,
    },
    Rule {
        name: "sealed-inputs",
        cites: "R14, F11",
        covers: "a cluster's list of sealed inputs changed (the machine secrets bundle above all)",
        check: sealed_inputs,
    },
    Rule { name: "apps", cites: "R23, F7", covers: "an Argo CD app added, removed or changed", check: apps },
    Rule {
        name: "talos-fields",
        cites: "F5, F10, F1",
        covers: "a field of a Talos document under out/talos changed: applied live, reboot, first provisioning, bootstrap or upgrade, per the cluster's Talos version",
        check: talos_fields,
    },
    Rule {
        name: "template-renamed",
        cites: "R26",
        covers: "a Cluster API template (TalosConfigTemplate, …MachineTemplate) renamed in the output",
        check: template_renamed,
    },
    Rule {
        name: "tofu-address",
        cites: "R14",
        covers: "an OpenTofu resource block removed from the output without a `moved` block, or moved",
        check: tofu_address,
    },
];

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// Changes of `field` on entities that exist on both sides.
fn stable_changes<'a>(ctx: &'a Ctx<'_>, field: &'a str) -> impl Iterator<Item = (usize, &'a FactChange)> + 'a {
    ctx.changes
        .iter()
        .enumerate()
        .filter(move |(_, c)| c.field == field && c.old.is_some() && c.new.is_some() && stable(ctx, &c.scope))
}

/// The entity and every entity it lies in exist on both sides.
fn stable(ctx: &Ctx<'_>, scope: &Scope) -> bool {
    !ctx.changes.iter().any(|c| c.field == EXISTS && scope.within(&c.scope))
}

fn env_of<'a>(fleet: &'a Fleet, scope: &Scope) -> Option<&'a crate::model::Environment> {
    fleet.environment(scope.env()?)
}

fn cluster_of<'a>(fleet: &'a Fleet, scope: &Scope) -> Option<&'a crate::model::Cluster> {
    env_of(fleet, scope)?.cluster(scope.cluster()?)
}

fn pool_of<'a>(fleet: &'a Fleet, scope: &Scope) -> Option<&'a crate::model::Pool> {
    let Scope::Pool { pool, .. } = scope else { return None };
    cluster_of(fleet, scope)?.pools().find(|p| p.name.value == *pool)
}

fn is_control_plane(scope: &Scope) -> bool {
    matches!(scope, Scope::Pool { pool, .. } if pool == CONTROL_PLANE)
}

fn short_id(id: &str) -> String {
    if id.len() > 12 { format!("{}…", &id[..12]) } else { id.to_owned() }
}

fn list(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

fn version(s: Option<&String>) -> Option<Version> {
    s?.parse().ok()
}

fn hostnames(pool: Option<&crate::model::Pool>) -> BTreeSet<String> {
    pool.map(|p| p.machines.iter().map(|m| m.hostname.clone()).collect()).unwrap_or_default()
}

/// A count change explains the pool's `addresses` change when it only adds the addresses of
/// the added nodes or drops those of the removed ones: every node on both sides keeps its
/// address. Claims that change (a plain scale-up is not an unknown impact).
fn claim_count_addresses(ctx: &Ctx<'_>, out: &mut Outcome, scope: &Scope) {
    let (Some(old), Some(new)) = (ctx.old.and_then(|o| pool_of(o, scope)), pool_of(ctx.new, scope)) else { return };
    let address = |p: &crate::model::Pool, host: &str| {
        p.machines.iter().find(|m| m.hostname == host).map(|m| m.address.as_ref().map(|a| a.value))
    };
    let kept = old.machines.iter().all(|m| match address(new, &m.hostname) {
        Some(a) => a == m.address.as_ref().map(|a| a.value),
        None => true,
    });
    if !kept {
        return;
    }
    if let Some((i, _)) = stable_changes(ctx, "addresses").find(|(_, c)| c.scope == *scope) {
        out.claim(i);
    }
}

// ---------------------------------------------------------------------------------------
// Rules on the model
// ---------------------------------------------------------------------------------------

/// What destroying an entity does, and how bad it is.
fn destroy_effect(ctx: &Ctx<'_>, scope: &Scope) -> (Severity, String) {
    match scope {
        Scope::Env(_) => (
            Severity::Danger,
            "every resource of the environment is destroyed, its clusters and their machine secrets bundles with them"
                .to_owned(),
        ),
        Scope::Cluster { .. } => {
            let managed = ctx.old.and_then(|o| cluster_of(o, scope)).is_some_and(crate::model::Cluster::is_managed);
            if managed {
                (Severity::Danger, "Cluster API deletes its machines; its identity (the secrets bundle on the management cluster) is lost unless it was sealed".to_owned())
            } else {
                (Severity::Danger, "its nodes are destroyed, and its machine secrets bundle with them: OpenTofu refuses to destroy the bundle, and a new bundle is another cluster that running nodes will not join".to_owned())
            }
        }
        Scope::Pool { .. } => {
            let n = ctx.old.and_then(|o| pool_of(o, scope)).map_or(0, |p| p.machines.len());
            (
                Severity::Warning,
                format!(
                    "its {n} node{} are destroyed; their workloads must fit on the remaining nodes",
                    if n == 1 { "" } else { "s" }
                ),
            )
        }
        Scope::Service { kind, .. } => (
            Severity::Danger,
            match *kind {
                "postgres" => "the database is destroyed with its data".to_owned(),
                "bucket" => "the bucket is destroyed with its objects".to_owned(),
                "registry" => "the registry namespace is destroyed with its images".to_owned(),
                "secret" => "the Secret Manager secret is destroyed with its versions".to_owned(),
                _ => "destroyed".to_owned(),
            },
        ),
        _ => (Severity::Warning, "removed".to_owned()),
    }
}

fn create_effect(scope: &Scope) -> String {
    match scope {
        Scope::Cluster { .. } => {
            "created: new nodes, bootstrapped from a new machine secrets bundle that must be sealed first".to_owned()
        }
        Scope::Pool { .. } => "created: new nodes join the cluster".to_owned(),
        _ => "created".to_owned(),
    }
}

/// Entities added, removed or renamed. A rename declared with `was=` keeps every resource
/// (OpenTofu `moved` blocks); an entity removed while another of its kind appears beside
/// it is treated as what OpenTofu will do: destroy and create.
fn lifecycle(ctx: &Ctx<'_>, out: &mut Outcome) {
    let handled =
        |s: &Scope| matches!(s, Scope::Env(_) | Scope::Service { .. } | Scope::Cluster { .. } | Scope::Pool { .. });
    let top = |c: &FactChange| {
        c.field == EXISTS
            && handled(&c.scope)
            && !ctx.changes.iter().any(|p| p.field == EXISTS && p.scope != c.scope && c.scope.within(&p.scope))
    };
    let removed: Vec<&Scope> = ctx.changes.iter().filter(|c| top(c) && c.new.is_none()).map(|c| &c.scope).collect();
    let added: Vec<&Scope> = ctx.changes.iter().filter(|c| top(c) && c.old.is_none()).map(|c| &c.scope).collect();
    let same_kind = |a: &Scope, b: &Scope| match (a, b) {
        (Scope::Service { env: e1, kind: k1, .. }, Scope::Service { env: e2, kind: k2, .. }) => e1 == e2 && k1 == k2,
        (Scope::Cluster { env: e1, .. }, Scope::Cluster { env: e2, .. }) => e1 == e2,
        (Scope::Pool { env: e1, cluster: c1, .. }, Scope::Pool { env: e2, cluster: c2, .. }) => e1 == e2 && c1 == c2,
        _ => false,
    };
    let name = |s: &Scope| match s {
        Scope::Service { name, .. } => name.clone(),
        Scope::Cluster { cluster, .. } => cluster.clone(),
        Scope::Pool { pool, .. } => pool.clone(),
        Scope::Env(e) => e.clone(),
        _ => String::new(),
    };
    let mut paired = BTreeSet::new();
    for r in &removed {
        let (severity, effect) = destroy_effect(ctx, r);
        let partners: Vec<&&Scope> = added.iter().filter(|a| same_kind(r, a)).collect();
        if let [a] = partners.as_slice() {
            paired.insert((**a).clone());
            out.push(
                severity,
                r.subject(),
                format!("{} removed and {} added, with no `was=`", r.what(), a.what()),
                format!(
                    "destroy and create: {effect}; if this is a rename, write `was=\"{}\"` on `{}` so that it is moved instead",
                    name(r),
                    name(a)
                ),
            );
        } else {
            out.push(severity, r.subject(), format!("{} removed", r.what()), format!("destroy: {effect}"));
        }
    }
    for a in &added {
        if !paired.contains(*a) {
            out.push(Severity::Info, a.subject(), format!("{} added", a.what()), create_effect(a));
        }
    }
    for (i, c) in ctx.changes.iter().enumerate() {
        if removed.iter().chain(added.iter()).any(|s| c.scope.within(s)) {
            out.claim(i);
        }
    }
    out.claim_renames();
    for rn in &ctx.renames.list {
        let what = rn.scope.what();
        out.push(
            Severity::Info,
            rn.scope.subject(),
            format!("{what} renamed from `{}` with `was=`", rn.old_name),
            "moved: OpenTofu keeps its resources (`moved` blocks), nothing is destroyed",
        );
        if matches!(rn.scope, Scope::Cluster { .. } | Scope::Pool { .. }) {
            out.impacts.push(Impact {
                severity: Severity::Warning,
                rule: "unknown",
                cites: "",
                subject: rn.scope.subject(),
                change: match rn.scope {
                    Scope::Pool { .. } => format!("node hostnames change with the name of {what} (`…-{}-N` become `…-{}-N`)", rn.old_name, name(&rn.scope)),
                    _ => format!("node hostnames change with the name of {what} (`{}-…` become `{}-…`)", rn.old_name, name(&rn.scope)),
                },
                effect: "unknown impact: how running nodes take a new hostname is not classified; review the Talos documents in the diff".to_owned(),
            });
        }
    }
    // A service's global name is what the cloud knows it by: it cannot be renamed in place.
    for field in ["bucket-name", "namespace"] {
        for (i, c) in stable_changes(ctx, field) {
            if let Scope::Service { kind, .. } = &c.scope {
                out.claim(i);
                out.push(
                    Severity::Danger,
                    c.scope.subject(),
                    format!("the global name of {} changes: {}", c.scope.what(), c.values()),
                    format!(
                        "destroy and create: {}; set `name=` to the old global name to keep it",
                        destroy_effect(ctx, &Scope::Service { env: String::new(), kind, name: String::new() }).1
                    ),
                );
            }
        }
    }
}

/// F1: the install image is read only by an install or an upgrade.
fn install_image(ctx: &Ctx<'_>, out: &mut Outcome) {
    const EFFECT: &str = "no effect on running nodes until they are upgraded (`fleetc upgrade` / `talosctl upgrade --image …`, control plane first, one node at a time); nodes created from now on install it";
    let Some(old) = ctx.old else {
        // Without the old model, the schematic files tell which image changed, and a file
        // whose only changed lines are installer references follows from that.
        let installer = format!("{}/", crate::model::IMAGE_FACTORY);
        let schematic_changed = ctx.files.iter().any(|f| f.path.starts_with("schematics/"));
        for f in ctx.files {
            let only_installer = f
                .hunks
                .iter()
                .flat_map(|h| &h.lines)
                .filter(|l| l.tag != crate::review::files::Tag::Context)
                .all(|l| l.text.contains(&installer) && l.text.contains("-installer/"));
            if schematic_changed && !f.hunks.is_empty() && only_installer {
                out.claim_file(&f.path);
            }
        }
        for f in ctx.files {
            let Some(name) = f.path.strip_prefix("schematics/").and_then(|p| p.strip_suffix(".yaml")) else { continue };
            out.claim_file(&f.path);
            let users: Vec<(String, Vec<String>)> = ctx
                .new
                .clusters()
                .map(|(e, c)| {
                    (
                        format!("{}/{}", e.name.value, c.name.value),
                        c.pools().filter(|p| p.schematic.value == name).map(|p| pool_name(&p.name.value)).collect(),
                    )
                })
                .filter(|(_, p): &(String, Vec<String>)| !p.is_empty())
                .collect();
            match f.status {
                Status::Changed if !users.is_empty() => {
                    for (subject, pools) in users {
                        out.push(
                            Severity::Warning,
                            subject,
                            format!("install image of {}: schematic `{name}` changed", pools.join(" and ")),
                            EFFECT,
                        );
                    }
                }
                Status::Changed => out.push(
                    Severity::Info,
                    "fleet",
                    format!("schematic `{name}` changed"),
                    "no pool uses it: no effect on nodes",
                ),
                Status::Added => out.push(
                    Severity::Info,
                    "fleet",
                    format!("schematic `{name}` added"),
                    "registered with the Image Factory by the next apply",
                ),
                Status::Removed => out.push(
                    Severity::Info,
                    "fleet",
                    format!("schematic `{name}` removed"),
                    "running nodes keep the image they installed",
                ),
            }
        }
        return;
    };
    // Per cluster, the pools that move from one image to another.
    type Move = (String, String, String);
    let mut by_cluster: BTreeMap<String, BTreeMap<Move, Vec<String>>> = BTreeMap::new();
    for (i, c) in stable_changes(ctx, "schematic-id") {
        out.claim(i);
        let Scope::Pool { pool, .. } = &c.scope else { continue };
        let schematic = pool_of(ctx.new, &c.scope).map(|p| p.schematic.value.clone()).unwrap_or_default();
        let ids =
            (schematic, short_id(c.old.as_deref().unwrap_or_default()), short_id(c.new.as_deref().unwrap_or_default()));
        by_cluster.entry(c.scope.subject()).or_default().entry(ids).or_default().push(pool_name(pool));
    }
    for (subject, moves) in by_cluster {
        let parts: Vec<String> = moves
            .into_iter()
            .map(|((s, from, to), pools)| format!("{}: schematic `{s}` {from} → {to}", pools.join(" and ")))
            .collect();
        out.push(Severity::Warning, subject, format!("install image of {}", parts.join("; ")), EFFECT);
    }
    for (i, c) in stable_changes(ctx, "schematic") {
        out.claim(i);
        let id_changed = ctx.changes.iter().any(|o| o.scope == c.scope && o.field == "schematic-id");
        if !id_changed {
            out.push(
                Severity::Info,
                c.scope.subject(),
                format!("{} uses schematic {}", c.scope.what(), c.values()),
                "the same schematic ID: the same install image, no effect",
            );
        }
    }
    for (i, c) in ctx.changes.iter().enumerate() {
        let Scope::Schematic(name) = &c.scope else { continue };
        out.claim(i);
        let used = ctx.new.clusters().any(|(_, cl)| cl.pools().any(|p| p.schematic.value == *name))
            || old.clusters().any(|(_, cl)| cl.pools().any(|p| p.schematic.value == *name));
        match (c.field.as_str(), &c.old, &c.new) {
            (EXISTS, None, _) => out.push(
                Severity::Info,
                "fleet",
                format!("schematic `{name}` added"),
                "registered with the Image Factory by the next apply",
            ),
            (EXISTS, _, None) => out.push(
                Severity::Info,
                "fleet",
                format!("schematic `{name}` removed"),
                "running nodes keep the image they installed",
            ),
            ("id", Some(_), Some(_)) if !used => out.push(
                Severity::Info,
                "fleet",
                format!("schematic `{name}` changed ({})", c.values()),
                "no pool uses it: no effect on nodes",
            ),
            _ => {}
        }
    }
}

fn pool_name(pool: &str) -> String {
    if pool == CONTROL_PLANE { "the control plane".to_owned() } else { format!("pool `{pool}`") }
}

/// The upgrade path Talos recommends: the latest patch of every minor on the way (only
/// adjacent minors are tested).
pub fn talos_path(from: Version, to: Version) -> String {
    let mut steps = vec![from.v()];
    if from.minor_version() != to.minor_version() {
        steps.push(format!("latest v{}.{}.x", from.major, from.minor));
        if from.major == to.major {
            for m in from.minor + 1..to.minor {
                steps.push(format!("latest v{}.{m}.x", from.major));
            }
        }
    }
    steps.push(to.v());
    steps.join(" → ")
}

/// Kubernetes minors from `from` to `to`, one at a time.
pub fn kubernetes_path(from: Version, to: Version) -> String {
    if from.minor_version() == to.minor_version() || from.major != to.major {
        return format!("{from} → {to}");
    }
    let mut steps: Vec<String> = (from.minor..to.minor).map(|m| format!("{}.{m}", from.major)).collect();
    steps.push(to.to_string());
    steps.join(" → ")
}

/// F1: a Talos version change is an upgrade, its own step, node by node.
fn talos_version(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "talos") {
        out.claim(i);
        let (Some(from), Some(to)) = (version(c.old.as_ref()), version(c.new.as_ref())) else { continue };
        let managed = cluster_of(ctx.new, &c.scope).is_some_and(crate::model::Cluster::is_managed);
        let change = format!("Talos {} → {}", from.v(), to.v());
        if to < from {
            out.push(Severity::Warning, c.scope.subject(), change, "a downgrade: Talos tests upgrades between adjacent minors only; `talosctl rollback` returns a node to its previous image");
        } else if managed {
            out.push(Severity::Warning, c.scope.subject(), change, format!("Cluster API replaces every machine, rolling: a new machine, then the oldest removed (R26); path {}", talos_path(from, to)));
        } else {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                change,
                format!(
                    "upgrade needed: applying the config alone changes nothing on running nodes; `fleetc upgrade` / `talosctl upgrade --image …` node by node, control plane first, health-checked between nodes; path {}",
                    talos_path(from, to)
                ),
            );
        }
    }
}

/// F1, R26: a Kubernetes version change is an upgrade, one minor at a time.
fn kubernetes_version(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "kubernetes") {
        out.claim(i);
        let (Some(from), Some(to)) = (version(c.old.as_ref()), version(c.new.as_ref())) else { continue };
        let managed = cluster_of(ctx.new, &c.scope).is_some_and(crate::model::Cluster::is_managed);
        let change = format!("Kubernetes {from} → {to}");
        if to < from {
            out.push(
                Severity::Danger,
                c.scope.subject(),
                change,
                "a downgrade: Kubernetes supports upgrades only (its version skew policy describes no way back)",
            );
        } else if managed {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                change,
                format!(
                    "Cluster API rolls every machine, control plane first, one minor at a time: {}",
                    kubernetes_path(from, to)
                ),
            );
        } else {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                change,
                format!("upgrade needed: `talosctl upgrade-k8s --to {to}` (control plane first, then every kubelet), one minor at a time: {}", kubernetes_path(from, to)),
            );
        }
    }
}

/// A size class is a name: what reaches the machines is its instance type (or VM shape),
/// which `machine-arguments` reports. A pool moved to another class of the same type, or a
/// class no pool uses, changes nothing.
fn size_class(ctx: &Ctx<'_>, out: &mut Outcome) {
    let known = |s: &Scope| env_of(ctx.new, s).is_some();
    for (i, c) in stable_changes(ctx, "size") {
        if !known(&c.scope) {
            continue;
        }
        out.claim(i);
        let type_changed = ctx.changes.iter().any(|o| o.scope == c.scope && o.field == "instance-type");
        if !type_changed {
            out.push(
                Severity::Info,
                c.scope.subject(),
                format!("{} size class {}", c.scope.what(), c.values()),
                "the same instance type: no effect",
            );
        }
    }
    for (i, c) in ctx.changes.iter().enumerate() {
        if let (Scope::Env(e), true) = (&c.scope, c.field.starts_with("size ")) {
            if !known(&c.scope) {
                continue;
            }
            out.claim(i);
            let size = &c.field["size ".len()..];
            let used = ctx
                .new
                .environment(e)
                .is_some_and(|env| env.clusters.iter().any(|cl| cl.pools().any(|p| p.size.value == size)));
            if !used {
                out.push(
                    Severity::Info,
                    e.clone(),
                    format!("size class `{size}` {}", c.values()),
                    "no pool uses it: no effect",
                );
            }
        }
    }
}

/// R29: the control plane's size decides how many losses etcd survives.
/// Encryption and the boot variant are read when a machine installs (Talos provisions a volume
/// once; the installer is used only by an install or an upgrade, F1): running nodes keep
/// their disks and boot, new or reinstalled nodes get the new ones.
fn disk_security(ctx: &Ctx<'_>, out: &mut Outcome) {
    for field in [facts::DISK_ENCRYPTION, facts::SECURE_BOOT] {
        for (i, c) in stable_changes(ctx, field) {
            out.claim(i);
            let effect = if field == facts::SECURE_BOOT {
                "running nodes keep their boot: the SecureBoot installer and image reach a node only when it is installed again (reset and reinstall one node at a time, control plane first); on Proxmox the VM's firmware (OVMF, EFI vars disk, vTPM) changes with it, and a VM installed from the standard image must be reinstalled to boot under it (R17)"
            } else {
                "running nodes keep their volumes as they were provisioned: Talos reads `encryption` only when it creates a volume, so existing disks change only when a node is reset and reinstalled; nodes created from now on get it (F1)"
            };
            out.push(
                Severity::Warning,
                c.scope.subject(),
                format!("{} of {}: {}", field, c.scope.what(), c.values()),
                effect,
            );
        }
    }
}

fn control_plane_count(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "count") {
        if !is_control_plane(&c.scope) {
            continue;
        }
        out.claim(i);
        claim_count_addresses(ctx, out, &c.scope);
        let (Some(from), Some(to)) =
            (c.old.as_ref().and_then(|v| v.parse::<u32>().ok()), c.new.as_ref().and_then(|v| v.parse::<u32>().ok()))
        else {
            continue;
        };
        let survives = |n: u32| n.saturating_sub(1) / 2;
        let old_hosts = hostnames(ctx.old.and_then(|o| pool_of(o, &c.scope)));
        let new_hosts = hostnames(pool_of(ctx.new, &c.scope));
        let nodes = if to > from {
            format!("nodes added: {}", list(&new_hosts.difference(&old_hosts).cloned().collect::<Vec<_>>()))
        } else {
            format!(
                "nodes removed, each leaving etcd as it is reset: {}",
                list(&old_hosts.difference(&new_hosts).cloned().collect::<Vec<_>>())
            )
        };
        let severity = if to < 3 && from >= 3 { Severity::Danger } else { Severity::Warning };
        out.push(
            severity,
            c.scope.subject(),
            format!("control-plane count {from} → {to}"),
            format!(
                "etcd quorum changes: {from} members survive {} lost → {to} members survive {}; {nodes}",
                survives(from),
                survives(to)
            ),
        );
    }
}

/// Worker nodes come and go with the pool's count.
fn worker_count(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "count") {
        if is_control_plane(&c.scope) || facts::role(ctx.new, &c.scope) != Some(Role::Worker) {
            continue;
        }
        out.claim(i);
        claim_count_addresses(ctx, out, &c.scope);
        let old_hosts = hostnames(ctx.old.and_then(|o| pool_of(o, &c.scope)));
        let new_hosts = hostnames(pool_of(ctx.new, &c.scope));
        let added: Vec<String> = new_hosts.difference(&old_hosts).cloned().collect();
        let removed: Vec<String> = old_hosts.difference(&new_hosts).cloned().collect();
        if removed.is_empty() {
            out.push(
                Severity::Info,
                c.scope.subject(),
                format!("{} count {}", c.scope.what(), c.values()),
                format!("nodes added: {}", list(&added)),
            );
        } else {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                format!("{} count {}", c.scope.what(), c.values()),
                format!("nodes destroyed: {}; their workloads must fit on the remaining nodes", list(&removed)),
            );
        }
    }
}

/// R19, F10: how a changed machine config reaches the nodes.
fn apply_mode(ctx: &Ctx<'_>, out: &mut Outcome) {
    const REBOOT: &str = "every node whose config changes reboots: `fleetc apply` reboots them one at a time with `talosctl health` after each (R19, F3); a plain `tofu apply` of the cluster root never reboots (its variables file's mode is `no_reboot`, `staged_if_needing_reboot` on Talos 1.12), so such a change waits for `fleetc apply`; Talos 1.14 drops `reboot`";
    let mut reported = BTreeSet::new();
    for (i, c) in stable_changes(ctx, "apply-mode") {
        out.claim(i);
        reported.insert(c.scope.clone());
        let new = c.new.as_deref().unwrap_or_default();
        if new == "reboot" {
            out.push(
                Severity::Warning,
                c.scope.subject(),
                format!("apply mode {} on a running cluster", c.values()),
                REBOOT,
            );
        } else {
            let how = match new {
                "auto" => "Talos applies live what it can and reboots when it must",
                "no_reboot" => "a change that needs a reboot is not applied: `fleetc apply` refuses to reboot for it",
                "staged" => "changes wait for the next reboot",
                "staged_if_needing_reboot" => "changes apply live, or wait for the next reboot when they need one",
                _ => "unknown",
            };
            out.push(
                Severity::Info,
                c.scope.subject(),
                format!("apply mode {}", c.values()),
                format!("from now on: {how}"),
            );
        }
    }
    // A running cluster already in `reboot` mode, with any other change to its configuration.
    for (_, cl) in ctx.new.clusters() {
        if cl.apply_mode.value != crate::model::ApplyMode::Reboot {
            continue;
        }
        let scope = Scope::Cluster { env: cl.env.clone(), cluster: cl.name.value.clone() };
        if reported.contains(&scope) || !stable(ctx, &scope) {
            continue;
        }
        let changed = ctx.changes.iter().any(|c| c.scope.within(&scope) && !matches!(c.scope, Scope::App { .. }));
        if changed {
            out.push(
                Severity::Warning,
                scope.subject(),
                "a change to a running cluster whose apply mode is `reboot`",
                REBOOT,
            );
        }
    }
}

/// F5: the EPHEMERAL volume's selector acts only when the volume is first provisioned.
fn ephemeral_volume(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "ephemeral-min-size") {
        out.claim(i);
        out.push(
            Severity::Warning,
            c.scope.subject(),
            format!("EPHEMERAL volume selector of {}: minimum size {}", c.scope.what(), c.values()),
            "only at first provisioning: running nodes keep their EPHEMERAL volume; only new or wiped nodes use the new selector",
        );
    }
}

/// The sealed input that carries a cluster's machine secrets bundle.
fn is_secrets_bundle(name: &str) -> bool {
    name.starts_with(crate::layout::names::TALOS_SECRETS_INPUT)
}

/// R14: the machine secrets bundle is the cluster's identity; other sealed inputs are
/// credentials that `apply` needs (F11).
fn sealed_inputs(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "sealed") {
        out.claim(i);
        let split = |v: &Option<String>| -> BTreeSet<String> {
            v.as_deref().unwrap_or_default().split_whitespace().map(str::to_owned).collect()
        };
        let (old, new) = (split(&c.old), split(&c.new));
        let gone: Vec<String> = old.difference(&new).cloned().collect();
        let came: Vec<String> = new.difference(&old).cloned().collect();
        if gone.iter().any(|n| is_secrets_bundle(n)) {
            out.push(
                Severity::Danger,
                c.scope.subject(),
                format!("machine secrets reference changed: sealed {}", c.values()),
                "a new cluster identity: the running nodes will not join it (a second bundle is another cluster, not a repair)",
            );
        } else {
            let mut parts = Vec::new();
            if !came.is_empty() {
                parts.push(format!("added {}", list(&came)));
            }
            if !gone.is_empty() {
                parts.push(format!("removed {}", list(&gone)));
            }
            out.push(
                Severity::Warning,
                c.scope.subject(),
                format!("sealed inputs {}", parts.join(", ")),
                "`fleetc apply` needs every listed input sealed, and no longer passes a removed one to the cluster",
            );
        }
    }
}

/// R23: Argo CD delivers what runs after the cluster; the root application syncs the list.
fn apps(ctx: &Ctx<'_>, out: &mut Outcome) {
    let mut changed: BTreeMap<Scope, Vec<String>> = BTreeMap::new();
    for (i, c) in ctx.changes.iter().enumerate() {
        if !matches!(c.scope, Scope::App { .. }) {
            continue;
        }
        let Some(cluster) = c.scope.cluster_scope() else { continue };
        if !stable(ctx, &cluster) {
            continue;
        }
        out.claim(i);
        if c.field != EXISTS {
            if c.old.is_some() && c.new.is_some() {
                changed.entry(c.scope.clone()).or_default().push(format!("`{}` {}", c.field, c.values()));
            }
            continue;
        }
        let app = ctx
            .new
            .environment(c.scope.env().unwrap_or_default())
            .and_then(|e| e.cluster(c.scope.cluster().unwrap_or_default()))
            .and_then(|cl| {
                let Scope::App { app, .. } = &c.scope else { return None };
                cl.apps.iter().find(|a| a.name.value == *app)
            });
        match (&c.old, app) {
            (None, Some(a)) => out.push(
                Severity::Info,
                c.scope.subject(),
                format!("new {} in namespace `{}`", c.scope.what(), a.namespace.value),
                if a.auto_sync {
                    "Argo CD syncs it once the change is merged (the root application picks it up, namespace created)"
                } else {
                    "Argo CD shows it out of sync until someone syncs it (`sync=\"manual\"`)"
                },
            ),
            _ => out.push(
                Severity::Warning,
                c.scope.subject(),
                format!("{} removed", c.scope.what()),
                "the root application prunes its Application; whether the app's resources are deleted depends on the Application's finalizer (docs/argocd.md)",
            ),
        }
    }
    for (scope, fields) in changed {
        out.push(
            Severity::Info,
            scope.subject(),
            format!("{} changed: {}", scope.what(), fields.join("; ")),
            "Argo CD syncs the change once it is merged",
        );
    }
}

// ---------------------------------------------------------------------------------------
// Rules on the artifacts (they work without the old model, and for any emitter)
// ---------------------------------------------------------------------------------------

fn is_rolling_template(kind: Option<&str>, api_version: Option<&str>) -> bool {
    let Some(k) = kind else { return false };
    api_version.is_some_and(|a| a.contains("cluster.x-k8s.io"))
        && (k == "TalosConfigTemplate" || k.ends_with("MachineTemplate"))
}

fn dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// R26: Cluster API templates are immutable; a changed one gets a new name, and repointing
/// a pool to it replaces the pool's machines one by one.
fn template_renamed(ctx: &Ctx<'_>, out: &mut Outcome) {
    let mut gone: BTreeMap<(String, String), Vec<(String, String)>> = BTreeMap::new();
    let mut came: BTreeMap<(String, String), Vec<(String, String)>> = BTreeMap::new();
    for f in ctx.files {
        for o in &f.objects {
            if !is_rolling_template(o.key.kind(), o.key.api_version()) {
                continue;
            }
            let key = (dir(&f.path).to_owned(), o.key.kind().unwrap_or_default().to_owned());
            let entry = (o.key.name().unwrap_or_default().to_owned(), f.path.clone());
            match o.status {
                Status::Removed => gone.entry(key).or_default().push(entry),
                Status::Added => came.entry(key).or_default().push(entry),
                Status::Changed => {}
            }
        }
    }
    for (key, old) in &gone {
        let Some(new) = came.get(key) else { continue };
        for (_, p) in old.iter().chain(new) {
            out.claim_file(p);
        }
        let names = |v: &[(String, String)]| v.iter().map(|(n, _)| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        out.push(
            Severity::Warning,
            key.0.clone(),
            format!("{} renamed: {} → {}", key.1, names(old), names(new)),
            "rolling replacement of the pool: Cluster API creates a new machine, then removes the oldest, until every machine is replaced",
        );
    }
}

fn resource_effect(resource_type: &str) -> (Severity, &'static str) {
    let t = resource_type.to_ascii_lowercase();
    if t.contains("machine_secrets") {
        (
            Severity::Danger,
            "the machine secrets bundle is destroyed (OpenTofu refuses: `prevent_destroy`); a new one is another cluster that running nodes will not join",
        )
    } else if t.contains("rdb") || t.contains("database") || t.contains("postgres") || t.contains("sql") {
        (Severity::Danger, "the database is destroyed with its data")
    } else if t.contains("bucket") {
        (Severity::Danger, "the bucket is destroyed with its objects")
    } else if t.contains("secret") {
        (Severity::Danger, "the secret is destroyed with its versions")
    } else if t.contains("registry") {
        (Severity::Danger, "the registry namespace is destroyed with its images")
    } else {
        (Severity::Warning, "OpenTofu destroys it")
    }
}

/// A resource's address is its identity in the state: one that disappears without a
/// `moved` block is destroyed (and a new address created).
fn tofu_address(ctx: &Ctx<'_>, out: &mut Outcome) {
    let mut moved_from = BTreeSet::new();
    for f in ctx.files {
        for o in f.objects.iter().filter(|o| o.key.block() == Some("moved") && o.status != Status::Removed) {
            let lines: Vec<&str> = o.new_text.lines().collect();
            if let (Some(from), Some(to)) = (hcl_attribute(&lines, "from"), hcl_attribute(&lines, "to")) {
                if o.status == Status::Added {
                    out.claim_file(&f.path);
                    out.push(
                        Severity::Info,
                        dir(&f.path).to_owned(),
                        format!("`moved` block: `{from}` → `{to}`"),
                        "OpenTofu moves the resource in its state: nothing is destroyed",
                    );
                }
                moved_from.insert(from);
            }
        }
    }
    for f in ctx.files {
        for o in f.objects.iter().filter(|o| o.status == Status::Removed && o.key.block() == Some("resource")) {
            let address = o.key.address().unwrap_or_default();
            if moved_from.contains(&address) {
                continue;
            }
            out.claim_file(&f.path);
            let (severity, effect) = resource_effect(o.key.resource_type().unwrap_or_default());
            out.push(
                severity,
                dir(&f.path).to_owned(),
                format!("resource `{address}` removed"),
                format!("destroy: {effect}"),
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// What no rule explains
// ---------------------------------------------------------------------------------------

fn unknown_impact(subject: String, change: String, effect: &str) -> Impact {
    Impact { severity: Severity::Warning, rule: "unknown", cites: "", subject, change, effect: effect.to_owned() }
}

/// Whether a path names `name`: as a directory or file name (extension aside), or as a
/// `-`-separated part of one (a node's hostname is `<cluster>-<pool>-<n>`).
fn names(path: &str, name: &str) -> bool {
    path.split('/').any(|c| {
        let stem = c.split_once('.').map_or(c, |(s, _)| s);
        stem == name
            || stem.starts_with(&format!("{name}-"))
            || stem.ends_with(&format!("-{name}"))
            || stem.contains(&format!("-{name}-"))
    })
}

/// Whether a change of the fleet plausibly produced a change at `path`: a fleet-wide
/// change explains any file; another one, the files that name its environment or cluster.
fn explains(change: &FactChange, path: &str) -> bool {
    match change.scope.env() {
        None => true,
        Some(env) => names(path, env) || change.scope.cluster().is_some_and(|c| names(path, c)),
    }
}

/// Whether a `was=` rename explains a change at `path`: the path names the old or new name.
fn rename_explains(rename: &super::facts::Rename, path: &str) -> bool {
    let new = match &rename.scope {
        Scope::Cluster { cluster, .. } => cluster,
        Scope::Pool { pool, .. } => pool,
        Scope::Service { name, .. } => name,
        _ => return false,
    };
    names(path, new) || names(path, &rename.old_name)
}

/// Unknown impacts: fact changes no rule claimed, model changes the facts do not cover, and
/// changed files that nothing explains.
pub fn unknown(ctx: &Ctx<'_>, claimed: &[bool], claimed_files: &[String], renames_claimed: bool) -> Vec<Impact> {
    let mut out = Vec::new();
    if !renames_claimed {
        for rn in &ctx.renames.list {
            out.push(unknown_impact(
                rn.scope.subject(),
                format!("{} renamed from `{}` with `was=`", rn.scope.what(), rn.old_name),
                "unknown impact: no rule classifies this change; review the diff",
            ));
        }
    }
    for (c, _) in ctx.changes.iter().zip(claimed).filter(|(_, done)| !**done) {
        let change = match (c.field.as_str(), &c.old, &c.new) {
            (EXISTS, None, _) => format!("{} added", c.scope.what()),
            (EXISTS, _, None) => format!("{} removed", c.scope.what()),
            (field, _, _) => format!("`{field}` of {} changed: {}", c.scope.what(), c.values()),
        };
        out.push(unknown_impact(
            c.scope.subject(),
            change,
            "unknown impact: no rule classifies this change; review the diff",
        ));
    }
    if let Some(old) = ctx.old {
        for env in facts::unmodelled(old, ctx.new, &ctx.changes, &ctx.renames) {
            let subject = env.unwrap_or_else(|| "fleet".to_owned());
            out.push(unknown_impact(
                subject,
                "a setting the impact rules do not model changed".to_owned(),
                "unknown impact: review the diff",
            ));
        }
    }
    let mut by_dir: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for f in ctx.files {
        let explained = ctx.changes.iter().any(|c| explains(c, &f.path))
            || ctx.renames.list.iter().any(|r| rename_explains(r, &f.path));
        if claimed_files.contains(&f.path) || (ctx.old.is_some() && explained) {
            continue;
        }
        by_dir.entry(dir(&f.path)).or_default().push(f.path.rsplit('/').next().unwrap_or(&f.path));
    }
    let effect = if ctx.old.is_some() {
        "unknown impact: no change of the fleet explains it (the output of another fleetc version, or an edited output directory)"
    } else {
        "unknown impact: an output directory holds no fleet model to compare with; `fleetc diff --base REV` compares two fleets"
    };
    for (d, names) in by_dir {
        let shown: Vec<String> = names.iter().take(5).map(|n| format!("`{n}`")).collect();
        let more = if names.len() > 5 { format!(" and {} more", names.len() - 5) } else { String::new() };
        let subject = if d.is_empty() { "out".to_owned() } else { d.to_owned() };
        out.push(unknown_impact(subject, format!("{}{more} changed", shown.join(", ")), effect));
    }
    out
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod path_tests {
    use super::names;

    #[test]
    fn paths_name_entities_as_components_or_hostname_parts() {
        assert!(names("talos/staging/main/common.yaml", "main"));
        assert!(names("talos/staging/main/nodes/main-system-1.yaml", "system"));
        assert!(names("capi/mgmt/edge-1/workers.yaml", "edge-1"));
        assert!(!names("talos/staging/mainline/common.yaml", "main"));
        assert!(!names("talos/production/core/common.yaml", "staging"));
    }
}
