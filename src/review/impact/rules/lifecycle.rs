//! R14, F13: the rule `lifecycle`, entities added, removed or renamed. A rename declared with
//! `was=` keeps every resource (OpenTofu `moved` blocks); an entity removed while another of
//! its kind appears beside it is what OpenTofu will do, destroy and create, with the advice to
//! write `was=`; a bucket's or registry's global name cannot change in place, nor can where the
//! environment's OpenTofu state lives (R28). What destroying
//! each kind of entity loses ([`destroy_effect`]) lives here: no other rule says it.

use std::collections::BTreeSet;

use super::{Ctx, EXISTS, FactChange, Impact, Outcome, Scope, Severity, cluster_of, pool_of, stable_changes};

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
pub(super) fn lifecycle(ctx: &Ctx<'_>, out: &mut Outcome) {
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
    // Every root's backend and the bootstrap root's bucket are written from the state's
    // location: moving it leaves every state behind (R28).
    for (i, c) in stable_changes(ctx, "state") {
        out.claim(i);
        out.push(
            Severity::Danger,
            c.scope.subject(),
            format!("the OpenTofu state of {} moves: {}", c.scope.what(), c.values()),
            "every root's backend points at a bucket without its state: `tofu init` finds none and each plan creates the environment again beside the running one; the bootstrap root replaces its bucket, which OpenTofu refuses to destroy. Copy the state first (`tofu init -migrate-state` in each root), then change fleet.kdl",
        );
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
