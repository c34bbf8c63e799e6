//! What no rule explains: the impacts named `unknown`, reported as warnings and never guessed
//! at, once every rule of [`super::RULES`] has claimed what it could. A fact change no rule
//! claimed, a change of the model the facts do not cover, and a changed file no change of the
//! fleet explains (with `--base`: one whose path names no changed environment, cluster or
//! `was=` rename; without it: every file no artifact rule claimed). docs/diff.md, "Unknown
//! impact".

use std::collections::BTreeMap;

use super::{Ctx, EXISTS, FactChange, Impact, Scope, Severity, dir, facts};

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
mod tests {
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
