//! Check: the invariants of the domain, run over the resolved [`Fleet`]. One file per rule
//! family; every check runs, whatever the others found, and only pushes diagnostics: the
//! model is never changed here. Each diagnostic's help says why the rule exists (its R-id).

mod argocd;
mod capi;
mod capi_versions;
mod cni;
mod discovery;
pub mod disk;
mod downgrades;
mod extensions;
mod key_material;
mod names;
mod network;
mod nodes;
mod patches;
mod quorum;
mod references;
mod runtimes;
mod talos;
mod tofu;
mod upgrade_path;
mod versions;

use crate::diag::Diagnostics;
use crate::model::Fleet;

/// `fleetc check --base REV`: version changes a running cluster can take (R26, F1): no
/// skipped minor, no workers ahead, no downgrade.
pub fn check_upgrade_path(old: &Fleet, new: &Fleet, diags: &mut Diagnostics) {
    upgrade_path::check(old, new, diags);
    downgrades::check(old, new, diags);
}

/// Key material in any string or comment of fleet.kdl (F11, R14), over the syntax tree and
/// the lossless token stream of `text`: it runs whether or not the model can be resolved.
pub fn run_tree(nodes: &[crate::syntax::Node], file: crate::diag::FileId, text: &str, diags: &mut Diagnostics) {
    key_material::check_tree(nodes, diags);
    key_material::check_comments(file, text, diags);
}

/// Runs every check.
pub fn run(fleet: &Fleet, diags: &mut Diagnostics) {
    names::check(fleet, diags);
    references::check(fleet, diags);
    quorum::check(fleet, diags);
    network::check(fleet, diags);
    nodes::check(fleet, diags);
    versions::check(fleet, diags);
    runtimes::check(fleet, diags);
    discovery::check(fleet, diags);
    extensions::check(fleet, diags);
    cni::check(fleet, diags);
    talos::check(fleet, diags);
    patches::check(fleet, diags);
    argocd::check(fleet, diags);
    capi::check(fleet, diags);
    tofu::check(fleet, diags);
    disk::check(fleet, diags);
}
