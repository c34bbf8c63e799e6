//! F1, F2, R17: the rule `install-image`, a pool's schematic or a schematic's content (its ID)
//! changed. The install image is read only by an install or an upgrade, so running nodes see
//! it only when they are upgraded. With the old model the fact changes say which pools move;
//! without it the `schematics/` files do, and a file whose only changed lines are installer
//! references follows from them.

use std::collections::BTreeMap;

use super::{CONTROL_PLANE, Ctx, EXISTS, Outcome, Scope, Severity, Status, pool_of, short_id, stable_changes};

/// F1: the install image is read only by an install or an upgrade.
pub(super) fn install_image(ctx: &Ctx<'_>, out: &mut Outcome) {
    const EFFECT: &str = "no effect on running nodes until they are upgraded (`fleetc upgrade` / `talosctl upgrade --image …`, control plane first, one node at a time); nodes created from now on install it";
    let Some(old) = ctx.old else {
        // Without the old model, the schematic files tell which image changed, and a file
        // whose only changed lines are installer references follows from that.
        let installer = format!("{}/", crate::model::IMAGE_FACTORY);
        let schematics = format!("{}/", crate::layout::paths::SCHEMATICS_DIR);
        let schematic_changed = ctx.files.iter().any(|f| f.path.starts_with(&schematics));
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
            let Some(name) = f.path.strip_prefix(&schematics).and_then(|p| p.strip_suffix(".yaml")) else { continue };
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
