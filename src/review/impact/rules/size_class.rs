//! F4: the rule `size-class`. A size class is a name: what reaches the machines is its
//! instance type or VM shape, which `machine-arguments` reports; this rule says that a pool
//! moved to another class of the same type, or a class no pool uses, changes nothing.

use super::{Ctx, Outcome, Scope, Severity, env_of, stable_changes};

/// A size class is a name: what reaches the machines is its instance type (or VM shape),
/// which `machine-arguments` reports. A pool moved to another class of the same type, or a
/// class no pool uses, changes nothing.
pub(super) fn size_class(ctx: &Ctx<'_>, out: &mut Outcome) {
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
