//! Names and settings written twice in one block, found on the tree as written (before
//! `from=` merges anything), so that every level is covered the same way: two environments,
//! clusters, pools, apps, services, sizes, schematics or add-ons of one name, and a setting
//! stated twice where the second would silently replace the first.
//!
//! The named blocks themselves are resolved once (the first); the second is reported and not
//! read further, so that its other problems (a consequence of the duplicate) are not reported
//! in its place.

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::syntax::{Node, ValueKind};

/// Named blocks, with the word messages use for them.
const NAMED: &[(&str, &str)] = &[
    ("environment", "environment"),
    ("cluster", "cluster"),
    ("pool", "pool"),
    ("app", "app"),
    ("postgres", "postgres instance"),
    ("bucket", "bucket"),
    ("registry", "registry"),
    ("secret", "secret"),
    ("size", "size"),
    ("schematic", "schematic"),
    ("addon", "add-on"),
];

/// Nodes stated once per block: a second one would replace the first without a word.
const SINGLE: &[&str] = &[
    "window",
    "etcd-snapshots",
    "backup",
    "talos",
    "kubernetes",
    "apply-mode",
    "discovery",
    "cni",
    "addons",
    "runtimes",
    "pod-cidr",
    "service-cidr",
    "pool-defaults",
    "gitops",
    "argocd",
    "state",
    "network",
    "gateway",
    "admin-ranges",
    "recipients",
    "endpoint",
    "cert-sans",
    "single-node",
    "vm-template-manual",
    "control-plane",
    "cluster-api",
    "ip-pool",
    "dns",
    "addresses",
    "overlay",
    "core",
    "bootstrap-talos",
    "control-plane-talos",
    "infrastructure-proxmox",
    "ipam-in-cluster",
    "operator",
    "cert-manager",
];

/// The block's name for messages: `cluster \`main\``, or the node's name.
fn describe(parent: &Node) -> String {
    match parent.args.first().map(|a| &a.kind) {
        Some(ValueKind::String(s)) => format!("`{} \"{s}\"`", parent.name.value),
        _ => format!("`{}`", parent.name.value),
    }
}

/// `(node name, first string argument)` of a named block.
pub(super) fn named_key(node: &Node) -> Option<(&'static str, String)> {
    let (_, word) = NAMED.iter().find(|(n, _)| *n == node.name.value)?;
    match node.args.first().map(|a| &a.kind) {
        Some(ValueKind::String(s)) => Some((word, s.clone())),
        _ => None,
    }
}

/// Whether `node` repeats a named block, or a setting stated once per block, that comes
/// earlier among `siblings` (the children of a fleet, environment or cluster): the first is
/// read, the repeat only reported.
pub(super) fn is_repeat(node: &Node, siblings: &[Node]) -> bool {
    let earlier =
        || siblings.iter().take_while(|s| !std::ptr::eq(*s, node)).filter(|s| s.name.value == node.name.value);
    match named_key(node) {
        Some(key) => earlier().any(|s| named_key(s).as_ref() == Some(&key)),
        None => SINGLE.contains(&node.name.value.as_str()) && earlier().next().is_some(),
    }
}

/// Reports every duplicate in `nodes` (the children of `parent`) and, recursively, below.
pub(super) fn check(parent: Option<&Node>, nodes: &[Node], diags: &mut Diagnostics) {
    let mut named: BTreeMap<(&str, &'static str, String), Span> = BTreeMap::new();
    let mut single: BTreeMap<&str, Span> = BTreeMap::new();
    for n in nodes {
        if let Some((word, name)) = named_key(n) {
            let span = n.args[0].span;
            match named.get(&(n.name.value.as_str(), word, name.clone())) {
                Some(first) => diags.push(
                    Diagnostic::new(&codes::DUPLICATE_NAME, format!("{word} `{name}` is declared twice"))
                        .at(span)
                        .label("declared again here")
                        .related(*first, "first declared here")
                        .help(format!("names become paths and addresses; give each {word} its own name")),
                ),
                None => {
                    named.insert((n.name.value.as_str(), word, name), span);
                }
            }
        } else if let Some(parent) = parent
            && SINGLE.contains(&n.name.value.as_str())
            // `postgres` and `after` inside an app are lists; `control-plane` is a block.
            && parent.name.value != "app"
        {
            match single.get(n.name.value.as_str()) {
                Some(first) => diags.push(
                    Diagnostic::new(
                        &codes::DUPLICATE_NAME,
                        format!("`{}` is stated twice in {}", n.name.value, describe(parent)),
                    )
                    .at(n.name.span)
                    .label("stated again here")
                    .related(*first, "first stated here")
                    .help("the second would silently replace the first; keep one (a list takes several values on one line)"),
                ),
                None => {
                    single.insert(&n.name.value, n.name.span);
                }
            }
        }
        if let Some(children) = &n.children {
            check(Some(n), children, diags);
        }
    }
}
