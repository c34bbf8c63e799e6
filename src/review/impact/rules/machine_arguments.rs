//! F1, F4, R29: what a change of fleet.kdl does to the machines the OpenTofu roots build,
//! read from the same table the emitter writes the roots from ([`ARGUMENTS`]: each machine
//! argument, what its provider does on a change, whether the roots ignore it). A change that
//! replaces a machine, or the volume etcd keeps its data on, is a danger named node by node;
//! an argument the roots ignore is said to replace nothing; the others say when they act.
//! Clusters managed by Cluster API are not built by the roots and are left to the other rules.

use std::collections::BTreeSet;

use super::{Ctx, Outcome, Severity, cluster_of, env_of, pool_of, stable_changes};
use crate::emit::tofu::arguments::{ARGUMENTS, Argument, Cloud, OnChange};
use crate::model::{Bytes, Environment, Fleet, Provider, Version};
use crate::review::impact::facts::{CONTROL_PLANE, FactChange, Scope};

/// The fact fields some row of the table is computed from.
fn fields() -> BTreeSet<&'static str> {
    ARGUMENTS.iter().flat_map(|a| a.from.iter().copied()).collect()
}

/// The cloud whose machine arguments apply; `None` on bare metal (no OpenTofu machine).
fn cloud(env: &Environment) -> Option<Cloud> {
    match env.provider {
        Provider::Scaleway(_) => Some(Cloud::Scaleway),
        Provider::Proxmox(_) => Some(Cloud::Proxmox),
        Provider::Metal(_) => None,
    }
}

/// The existing machines a change reaches: (hostname, control plane?), in fleet order. Only
/// machines on both sides: a new machine is created with the new value.
fn machines(old: &Fleet, new: &Fleet, scope: &Scope) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let Some(env) = env_of(new, scope) else { return out };
    for c in env.clusters.iter().filter(|c| !c.is_managed()) {
        if scope.cluster().is_some_and(|n| n != c.name.value) {
            continue;
        }
        let cs = Scope::Cluster { env: env.name.value.clone(), cluster: c.name.value.clone() };
        let Some(oc) = cluster_of(old, &cs) else { continue };
        for p in c.pools() {
            if let Scope::Pool { pool, .. } = scope
                && *pool != p.name.value
            {
                continue;
            }
            let Some(op) = oc.pools().find(|o| o.name.value == p.name.value) else { continue };
            for m in &p.machines {
                if op.machines.iter().any(|o| o.hostname == m.hostname) {
                    out.push((m.hostname.clone(), p.name.value == CONTROL_PLANE));
                }
            }
        }
    }
    out
}

/// Whether the change lowers the value: a smaller size, an older version.
fn lower(c: &FactChange) -> bool {
    let (Some(o), Some(n)) = (c.old.as_deref(), c.new.as_deref()) else { return false };
    if let (Ok(o), Ok(n)) = (o.parse::<Bytes>(), n.parse::<Bytes>()) {
        return n < o;
    }
    if let (Ok(o), Ok(n)) = (o.parse::<Version>(), n.parse::<Version>()) {
        return n < o;
    }
    false
}

/// The Scaleway project or zone differs (the region alone moves no instance).
fn scaleway_placement_changed(old: &Fleet, new: &Fleet, scope: &Scope) -> bool {
    match (env_of(old, scope).map(|e| &e.provider), env_of(new, scope).map(|e| &e.provider)) {
        (Some(Provider::Scaleway(o)), Some(Provider::Scaleway(n))) => {
            o.project.value != n.project.value || o.zone.value != n.zone.value
        }
        _ => false,
    }
}

fn hosts(ms: &[(String, bool)]) -> String {
    ms.iter().map(|(h, _)| format!("`{h}`")).collect::<Vec<_>>().join(", ")
}

/// The machines whose own value changed, for a field that is per machine (`addresses`).
fn per_machine(old: &Fleet, new: &Fleet, c: &FactChange, ms: Vec<(String, bool)>) -> Vec<(String, bool)> {
    if c.field == "pve-nodes" {
        // `host@node …`
        let at = |v: &Option<String>| -> std::collections::BTreeMap<String, String> {
            v.as_deref()
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|e| e.split_once('@'))
                .map(|(h, n)| (h.to_owned(), n.to_owned()))
                .collect()
        };
        let (o, n) = (at(&c.old), at(&c.new));
        return ms.into_iter().filter(|(h, _)| o.get(h) != n.get(h)).collect();
    }
    if c.field != "addresses" {
        return ms;
    }
    let (Some(op), Some(np)) = (pool_of(old, &c.scope), pool_of(new, &c.scope)) else { return Vec::new() };
    let addr = |p: &crate::model::Pool, h: &str| {
        p.machines.iter().find(|m| m.hostname == h).and_then(|m| m.address.as_ref().map(|a| a.value))
    };
    ms.into_iter().filter(|(h, _)| addr(op, h) != addr(np, h)).collect()
}

/// `old → new`, schematic IDs shortened as the other rules print them.
fn values(c: &FactChange) -> String {
    if c.field == "schematic-id" {
        let s = |v: &Option<String>| v.as_deref().map_or("(none)".to_owned(), super::short_id);
        return format!("{} → {}", s(&c.old), s(&c.new));
    }
    c.values()
}

/// One row's impact on the machines `ms` of `c`.
fn report(out: &mut Outcome, c: &FactChange, a: &Argument, ms: &[(String, bool)]) {
    let what = format!("`{}` of {}", c.field, c.scope.what());
    let vals = values(c);
    let arg = format!("`{}`", a.name());
    let cp = ms.iter().any(|(_, cp)| *cp);
    let replace = |out: &mut Outcome| {
        // The endpoint is the cluster's, not a node's: one impact, every node's kubelet and
        // kubeconfig pointing at it.
        if c.field == "endpoint" {
            out.push(
                Severity::Danger,
                c.scope.subject(),
                format!("{what} {vals}: replaces the {}", a.part),
                format!(
                    "{arg} forces a new resource ({}): the API load balancer moves to the new address while {} and every kubeconfig still name the old one until their configs are applied (R12, R16)",
                    a.source,
                    hosts(ms)
                ),
            );
            return;
        }
        for (h, is_cp) in ms {
            out.push(
                Severity::Danger,
                c.scope.subject(),
                format!("{what} {}: replaces the {} of `{h}`", vals, a.part),
                format!(
                    "{arg} forces a new resource ({}): {}",
                    a.source,
                    if *is_cp {
                        "the node's etcd member is lost with it (its identity and data); the next control-plane replacement before it has rejoined loses quorum (R29)"
                    } else {
                        "a blank machine under the same name; its workloads and local data are gone"
                    }
                ),
            );
        }
    };
    if a.ignored {
        out.push(
            Severity::Info,
            c.scope.subject(),
            format!("{what} {}: the {} of {} changes in the cloud root", vals, a.part, hosts(ms)),
            format!(
                "no machine is replaced: the roots ignore {arg} on existing machines (`lifecycle {{ ignore_changes }}`; {}); machines created from now on use the new value, running ones change OS through `fleetc upgrade`",
                a.source
            ),
        );
        return;
    }
    match a.on_change {
        OnChange::Replace => replace(out),
        OnChange::ReplaceWhenLower if lower(c) => replace(out),
        OnChange::GrowOrFail if lower(c) => out.push(
            Severity::Warning,
            c.scope.subject(),
            format!("{what} {}: the {} of {} shrinks", vals, a.part, hosts(ms)),
            format!("the apply fails: the provider only grows it ({})", a.source),
        ),
        OnChange::GrowOrNothing if lower(c) => out.push(
            Severity::Warning,
            c.scope.subject(),
            format!("{what} {}: the {} of {} shrinks", vals, a.part, hosts(ms)),
            format!("never applied: the provider only grows a disk, and every plan shows the change again ({})", a.source),
        ),
        OnChange::ReplaceWhenLower | OnChange::GrowOrFail | OnChange::GrowOrNothing | OnChange::Live => out.push(
            Severity::Info,
            c.scope.subject(),
            format!("{what} {}: {arg} of {}", vals, hosts(ms)),
            format!("updated in place, no machine is replaced ({})", a.source),
        ),
        OnChange::Restart if cp => out.push(
            Severity::Danger,
            c.scope.subject(),
            format!("{what} {}: {arg} of {}", vals, hosts(ms)),
            format!("stop/migrate/start of every control-plane node ({}) in the cloud root's apply, one after the other (`depends_on`) but with no health check between them: etcd loses quorum if a node has not rejoined when the next one stops; change it with one targeted apply per node and `talosctl health` between them (F4; {})", ms.len(), a.source),
        ),
        OnChange::Restart => out.push(
            Severity::Warning,
            c.scope.subject(),
            format!("{what} {}: {arg} of {}", vals, hosts(ms)),
            format!("stop/migrate/start of the pool's {} nodes at once (in parallel): its capacity is gone during the migration (F4; {})", ms.len(), a.source),
        ),
        OnChange::NextReboot => out.push(
            if cp && c.field == "addresses" { Severity::Danger } else { Severity::Warning },
            c.scope.subject(),
            format!("{what} {}: the {} of {}", vals, a.part, hosts(ms)),
            format!(
                "changed in place, in effect at each VM's next reboot (the provider does not reboot it: `reboot_after_update = false`; {}): reboot one node at a time with `talosctl health` between them{}",
                a.source,
                if cp && c.field == "addresses" {
                    "; a control-plane node's new address is its etcd member's new peer address (R29)"
                } else {
                    ""
                }
            ),
        ),
        OnChange::Migrate => out.push(
            Severity::Warning,
            c.scope.subject(),
            format!("{what} {}: the {} of {}", vals, a.part, hosts(ms)),
            format!("migrated live to the new Proxmox VE node (online, with local disks), not replaced ({})", a.source),
        ),
        OnChange::CreateOnly => {}
    }
}

/// The rule: every change of a fact some row is computed from, on machines the roots build.
pub(super) fn machine_arguments(ctx: &Ctx<'_>, out: &mut Outcome) {
    let Some(old) = ctx.old else { return };
    let fields = fields();
    let changes: Vec<(usize, &FactChange)> =
        ctx.changes.iter().enumerate().filter(|(_, c)| fields.contains(c.field.as_str())).collect();
    for (i, c) in changes {
        if !stable_changes(ctx, &c.field).any(|(j, _)| j == i) {
            continue;
        }
        let Some(env) = env_of(ctx.new, &c.scope) else { continue };
        if c.field == "provider" && !scaleway_placement_changed(old, ctx.new, &c.scope) {
            continue;
        }
        let ms = per_machine(old, ctx.new, c, machines(old, ctx.new, &c.scope));
        if ms.is_empty() {
            // Only machines added or removed moved (a scale-up): the count rules say which.
            if c.field == "pve-nodes" {
                out.claim(i);
            }
            continue;
        }
        let rows: Vec<&Argument> = ARGUMENTS
            .iter()
            // The cluster root's rows (`Cloud::Talos`) replace nothing; its machine secrets are
            // the rule `secrets-version`'s.
            .filter(|a| Some(a.cloud) == cloud(env) && a.from.contains(&c.field.as_str()))
            .collect();
        for a in rows {
            // An ignored argument says what the roots do not do; what the change does to
            // running machines (an upgrade) is another rule's to say.
            if !a.ignored {
                out.claim(i);
            }
            report(out, c, a, &ms);
        }
    }
}
