//! R23, F7: the rule `apps`, an Argo CD app added, removed or changed. Argo CD delivers what
//! runs after the cluster and the root application syncs the list: an app added is synced (or
//! shown out of sync when its sync is manual), one removed is pruned, one changed is synced.

use std::collections::BTreeMap;

use super::{Ctx, EXISTS, Outcome, Scope, Severity, stable};

/// R23: Argo CD delivers what runs after the cluster; the root application syncs the list.
pub(super) fn apps(ctx: &Ctx<'_>, out: &mut Outcome) {
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
