//! R26: the rule `template-renamed`, a rule on the artifacts (it works without the old model,
//! and for any emitter). Cluster API templates are immutable: a changed one gets a new name,
//! and repointing a pool to it replaces the pool's machines one by one.

use std::collections::BTreeMap;

use super::{Ctx, Outcome, Severity, Status, dir};

fn is_rolling_template(kind: Option<&str>, api_version: Option<&str>) -> bool {
    let Some(k) = kind else { return false };
    api_version.is_some_and(|a| a.contains("cluster.x-k8s.io"))
        && (k == "TalosConfigTemplate" || k.ends_with("MachineTemplate"))
}

/// R26: Cluster API templates are immutable; a changed one gets a new name, and repointing
/// a pool to it replaces the pool's machines one by one.
pub(super) fn template_renamed(ctx: &Ctx<'_>, out: &mut Outcome) {
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
