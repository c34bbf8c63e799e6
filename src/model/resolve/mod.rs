//! From the syntax tree to the [`Fleet`]: `from=` inheritance between environments
//! ([`inherit`]), layered defaults (fleet → environment → cluster → pool), typed values, and
//! vendored files read through a [`Loader`].
//!
//! One `Resolver` walks the tree from the top; its `impl` continues in one room per node kind:
//! `fleet` (the `fleet` block, `gitops`, `argocd`, `addon`), `schematic`, `vendored`,
//! `settings` (what inherits level by level), `environment`, `provider`, `cluster`,
//! `cluster_api`, `pool`, `nodes`, `app` and `patches`; `labels` (Kubernetes keys and values)
//! and `urls` (URLs and addresses) check values several rooms read. This file keeps the entry
//! point, the resolver's state and the helpers every room shares.

mod app;
mod cluster;
mod cluster_api;
mod duplicates;
mod environment;
mod fleet;
mod inherit;
mod labels;
mod nodes;
mod patches;
mod pool;
mod provider;
mod reader;
mod schematic;
mod settings;
mod urls;
mod vendored;

use std::collections::BTreeMap;

use reader::unknown_child;

use super::patch::{self, PatchLevel};
use super::{Fleet, Spanned};
use crate::diag::{Diagnostic, Diagnostics, Sources, Span, codes};
use crate::syntax::Node;

/// Reads files that fleet.kdl references, by their path relative to the fleet's directory.
/// The build reads the working tree; `diff --base` reads a git revision.
pub trait Loader {
    /// The file's text, or a message saying why it cannot be read.
    fn read(&self, rel_path: &str) -> Result<String, String>;
    /// Whether a file or directory exists at `rel_path`. A loader that cannot tell says
    /// yes, so that no warning is made up.
    fn exists(&self, _rel_path: &str) -> bool {
        true
    }
    /// The names in the directory `rel_dir` (`""` is fleet.kdl's own), for "did you mean"
    /// helps on a path that does not exist. A loader that cannot list says nothing.
    fn entries(&self, _rel_dir: &str) -> Vec<String> {
        Vec::new()
    }
}

/// The existing path nearest to `rel`, which does not exist: each component that does not
/// exist is replaced by the closest name of its directory (`apps/whoamii` → `apps/whoami`,
/// `vendor/cilium-1.18.5.yaml` → `vendor/cilium-1.18.4.yaml`). `None` when a component has no
/// close name, or the loader cannot list.
pub fn nearest_path(loader: &dyn Loader, rel: &str) -> Option<String> {
    let mut at = String::new();
    let mut changed = false;
    for comp in rel.trim_end_matches('/').split('/') {
        let candidate = if at.is_empty() { comp.to_owned() } else { format!("{at}/{comp}") };
        if !comp.is_empty() && loader.exists(&candidate) {
            at = candidate;
            continue;
        }
        let names = loader.entries(&at);
        let near = crate::diag::did_you_mean(comp, names.iter().map(String::as_str))?.to_owned();
        at = if at.is_empty() { near } else { format!("{at}/{near}") };
        changed = true;
    }
    (changed && loader.exists(&at)).then_some(at)
}

/// ` Did you mean `<path>`?`, when a path close to `rel` exists.
pub(crate) fn path_hint(loader: &dyn Loader, rel: &str) -> String {
    nearest_path(loader, rel).map(|p| format!("; did you mean `{p}`?")).unwrap_or_default()
}

/// Resolves the parsed `fleet.kdl` into a [`Fleet`]. Returns `None` when the fleet is too
/// broken to build a model; every problem is in `diags` either way.
/// Files fleet.kdl references that diagnostics point into (Talos patches) are added to
/// `sources`.
pub fn resolve(nodes: &[Node], loader: &dyn Loader, sources: &mut Sources, diags: &mut Diagnostics) -> Option<Fleet> {
    let mut fleet_node = None;
    for n in nodes {
        if n.name.value == "fleet" && fleet_node.is_none() {
            fleet_node = Some(n);
        } else if n.name.value == "fleet" {
            diags.push(
                Diagnostic::new(&codes::DUPLICATE_NAME, "a file describes one fleet")
                    .at(n.name.span)
                    .label("second `fleet`")
                    .help("put every environment in the first `fleet` block"),
            );
        } else {
            unknown_child(n, "the top level", &["fleet"], diags);
        }
    }
    duplicates::check(None, nodes, diags);
    let Some(node) = fleet_node else {
        diags.push(
            Diagnostic::new(&codes::MISSING_VALUE, "fleet.kdl has no `fleet` node")
                .at(Span::default())
                .help("start with `fleet \"<name>\" { … }` (docs/fleet-language.md)"),
        );
        return None;
    };
    Resolver {
        loader,
        diags,
        cycle_reported: false,
        sources,
        patch_files: BTreeMap::new(),
        patch_level: PatchLevel::Fleet,
        role: super::Role::ControlPlane,
    }
    .fleet(node)
}

struct Resolver<'a> {
    loader: &'a dyn Loader,
    diags: &'a mut Diagnostics,
    /// An inheritance circle is reported once, not once per environment on it.
    cycle_reported: bool,
    sources: &'a mut Sources,
    /// Every patch file read so far, once (`None`: it could not be used, already reported).
    patch_files: BTreeMap<String, Option<std::sync::Arc<patch::PatchFile>>>,
    /// The level whose children are being read, for the `patch`es among them.
    patch_level: PatchLevel,
    /// The role of the pool whose block is being read: a worker's labels are set with the
    /// kubelet's credentials, which NodeRestriction limits (`labels::kubelet_may_set`).
    role: super::Role,
}

/// The most nodes a cluster holds: Kubernetes is tested up to 5,000 nodes per cluster
/// (kubernetes.io, "Considerations for large clusters"). A pool's `count` past it is refused
/// before a machine is materialized; the network's capacity is checked in `check::network`.
pub const MAX_CLUSTER_NODES: u32 = 5_000;

fn one_of<T: Copy>(
    table: &[(&'static str, T)],
    s: &Spanned<String>,
    what: &str,
    diags: &mut Diagnostics,
) -> Option<Spanned<T>> {
    match table.iter().find(|(k, _)| *k == s.value) {
        Some((_, v)) => Some(Spanned::new(*v, s.span)),
        None => {
            let names: Vec<&str> = table.iter().map(|(k, _)| *k).collect();
            diags.push(
                Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is not {what}", s.value))
                    .at(s.span)
                    .label("unknown value")
                    .help(match crate::diag::did_you_mean(&s.value, names.iter().copied()) {
                        Some(m) => format!("did you mean `{m}`?"),
                        None => format!("use one of {}", reader::list(&names)),
                    }),
            );
            None
        }
    }
}

/// Refuses a path that leaves the fleet's directory (`..`, absolute, empty parts): Argo CD
/// would read it from elsewhere in, or outside, the repository.
fn refuse_outside(p: &Spanned<String>, help: &str, d: &mut Diagnostics) {
    if let Err(e) = check_relative(&p.value) {
        d.push(Diagnostic::new(&codes::INVALID_VALUE, e).at(p.span).help(help));
    }
}

/// A path fleet.kdl may reference: relative, `/`-separated, without `..`.
fn check_relative(path: &str) -> Result<(), String> {
    if path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path.split('/').any(|c| c == ".." || c.is_empty())
        || path.contains(':')
    {
        return Err(format!("`{path}` is not a relative path inside the fleet's directory"));
    }
    Ok(())
}
