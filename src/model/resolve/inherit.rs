//! `environment "production" from="staging"`: the inheriting environment is the base
//! environment's tree with the inheriting one's nodes laid over it. Every value keeps the
//! span where it was written, so a diagnostic about an inherited value points into the base.
//!
//! Merge rules, the same at every depth:
//! - named blocks (`cluster "x"`, `pool "x"`, `app "x"`, services, sizes) merge by name:
//!   properties override one by one, children merge recursively;
//! - repeatable leaves (`label`, `annotation`, `taint`, `sealed`, `patch`) are replaced as a group: stating any
//!   replaces all of the base's;
//! - every other node is a setting: stating it replaces the base's (arguments and
//!   properties override, children merge).
//!
//! The chain itself (`from=` naming another environment of the fleet, walked to its root) is
//! walked here too, with a circle or a name that is no environment reported once, at the
//! `from=` that breaks it.

use super::{Resolver, reader};
use crate::diag::{Diagnostic, codes};
use crate::syntax::{Node, ValueKind};

const NAMED: &[&str] = &["cluster", "pool", "app", "postgres", "bucket", "registry", "secret", "size", "control-plane"];
const GROUPS: &[&str] = &["label", "annotation", "taint", "sealed", "patch"];

fn key(node: &Node) -> (String, Option<String>) {
    let name = node.name.value.clone();
    if NAMED.contains(&name.as_str()) {
        let arg = node.args.first().and_then(|a| match &a.kind {
            ValueKind::String(s) => Some(s.clone()),
            _ => None,
        });
        (name, arg)
    } else {
        (name, None)
    }
}

/// Lays `over` onto `base` (the children of two environments, or of two blocks).
pub(crate) fn merge_children(base: &[Node], over: &[Node]) -> Vec<Node> {
    let mut out: Vec<Node> = base
        .iter()
        .filter(|b| !(GROUPS.contains(&b.name.value.as_str()) && over.iter().any(|o| o.name.value == b.name.value)))
        .cloned()
        .collect();
    for o in over {
        if GROUPS.contains(&o.name.value.as_str()) {
            out.push(o.clone());
            continue;
        }
        let k = key(o);
        match out.iter().position(|b| key(b) == k) {
            Some(i) => out[i] = merge_node(&out[i], o),
            None => out.push(o.clone()),
        }
    }
    out
}

/// One node laid over another: `over`'s name, arguments if it has any, properties one by
/// one, children merged.
pub(crate) fn merge_node(base: &Node, over: &Node) -> Node {
    let mut props = base.props.clone();
    for p in &over.props {
        props.retain(|b| b.name.value != p.name.value);
        props.push(p.clone());
    }
    let children = match (&base.children, &over.children) {
        (Some(b), Some(o)) => Some(merge_children(b, o)),
        (Some(b), None) => Some(b.clone()),
        (None, o) => o.clone(),
    };
    Node {
        name: over.name.clone(),
        args: if over.args.is_empty() { base.args.clone() } else { over.args.clone() },
        props,
        children,
        span: over.span,
    }
}

impl Resolver<'_> {
    /// The environment's tree with its `from=` chain applied; `None` when the chain is
    /// broken (reported once, at the `from=` that breaks it).
    pub(super) fn inherited_env(&mut self, env: &Node, all: &[&Node], chain: &mut Vec<String>) -> Option<Node> {
        let Some(from) = env.prop("from") else { return Some(env.clone()) };
        let ValueKind::String(base_name) = &from.value.kind else {
            self.diags.push(reader::wrong_type(&from.value, "`from`", "a string"));
            return None;
        };
        let own = env.args.first().and_then(|a| match &a.kind {
            ValueKind::String(s) => Some(s.clone()),
            _ => None,
        });
        if let Some(own) = &own {
            chain.push(own.clone());
        }
        if chain.contains(base_name) {
            if self.cycle_reported {
                return None;
            }
            self.cycle_reported = true;
            self.diags.push(
                Diagnostic::new(
                    &codes::INHERITANCE_CYCLE,
                    format!("environments inherit in a circle: {} → {base_name}", chain.join(" → ")),
                )
                .at(from.value.span)
                .label("closes the circle"),
            );
            return None;
        }
        let base = all
            .iter()
            .find(|n| n.args.first().is_some_and(|a| matches!(&a.kind, ValueKind::String(s) if s == base_name)));
        let Some(base) = base else {
            let names: Vec<String> = all
                .iter()
                .filter_map(|n| match n.args.first().map(|a| &a.kind) {
                    Some(ValueKind::String(s)) => Some(s.clone()),
                    _ => None,
                })
                .collect();
            let mut d =
                Diagnostic::new(&codes::DANGLING_REFERENCE, format!("no environment `{base_name}` to inherit from"))
                    .at(from.value.span)
                    .label("unknown environment");
            d.help = Some(match crate::diag::did_you_mean(base_name, names.iter().map(String::as_str)) {
                Some(m) => format!("did you mean `{m}`?"),
                None => format!(
                    "`from=` names another environment of this fleet: {}",
                    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                ),
            });
            self.diags.push(d);
            return None;
        };
        let base_tree = self.inherited_env(base, all, chain)?;
        let mut merged = merge_node(&base_tree, env);
        merged.props.clone_from(&env.props);
        // An environment's name is its own: one written without a name is missing one, it
        // does not become a second copy of its base.
        merged.args.clone_from(&env.args);
        Some(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::FileId;

    fn parse(s: &str) -> Vec<Node> {
        crate::syntax::parse(FileId(0), s).unwrap()
    }

    fn render(nodes: &[Node]) -> String {
        fn one(n: &Node, out: &mut String) {
            out.push_str(&n.name.value);
            for a in &n.args {
                out.push_str(&format!(" {:?}", a.kind));
            }
            for p in &n.props {
                out.push_str(&format!(" {}={:?}", p.name.value, p.value.kind));
            }
            if let Some(c) = &n.children {
                out.push_str(" {");
                for n in c {
                    out.push(' ');
                    one(n, out);
                    out.push(';');
                }
                out.push_str(" }");
            }
        }
        let mut out = String::new();
        for n in nodes {
            one(n, &mut out);
            out.push('\n');
        }
        out
    }

    #[test]
    fn named_blocks_merge_and_groups_replace() {
        let base = parse(
            r#"talos "v1.13.9"
cluster "main" { pool "system" count=2 size="s" { label "a" "1"; label "b" "2" } }
bucket "app""#,
        );
        let over = parse(
            r#"cluster "main" { pool "system" size="m" { label "c" "3" }; pool "gpu" count=1 }
talos "v1.13.10""#,
        );
        let merged = render(&merge_children(&base, &over));
        assert_eq!(
            merged,
            "talos String(\"v1.13.10\")\n\
             cluster String(\"main\") { pool String(\"system\") count=Integer(2) size=String(\"m\") { label String(\"c\") String(\"3\"); }; pool String(\"gpu\") count=Integer(1); }\n\
             bucket String(\"app\")\n"
        );
    }
}
