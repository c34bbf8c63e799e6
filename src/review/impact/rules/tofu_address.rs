//! R14: the rule `tofu-address`, a rule on the artifacts (it works without the old model, and
//! for any emitter). A resource's address is its identity in the OpenTofu state: one removed
//! without a `moved` block is destroyed, and what that loses depends on the resource type.

use std::collections::BTreeSet;

use super::{Ctx, Outcome, Severity, Status, dir};
use crate::review::object::hcl_attribute;

/// What destroying a resource of `resource_type` loses (also read by `fleetc drift` for a
/// resource its plan deletes or replaces).
pub fn resource_effect(resource_type: &str) -> (Severity, &'static str) {
    let t = resource_type.to_ascii_lowercase();
    if t.contains("machine_secrets") {
        (
            Severity::Danger,
            "the machine secrets bundle is destroyed (OpenTofu refuses: `prevent_destroy`); a new one is another cluster that running nodes will not join",
        )
    } else if t.contains("rdb") || t.contains("database") || t.contains("postgres") || t.contains("sql") {
        (Severity::Danger, "the database is destroyed with its data")
    } else if t.contains("bucket") {
        (Severity::Danger, "the bucket is destroyed with its objects")
    } else if t.contains("secret") {
        (Severity::Danger, "the secret is destroyed with its versions")
    } else if t.contains("registry") {
        (Severity::Danger, "the registry namespace is destroyed with its images")
    } else {
        (Severity::Warning, "OpenTofu destroys it")
    }
}

/// A resource's address is its identity in the state: one that disappears without a
/// `moved` block is destroyed (and a new address created).
pub(super) fn tofu_address(ctx: &Ctx<'_>, out: &mut Outcome) {
    let mut moved_from = BTreeSet::new();
    for f in ctx.files {
        for o in f.objects.iter().filter(|o| o.key.block() == Some("moved") && o.status != Status::Removed) {
            let lines: Vec<&str> = o.new_text.lines().collect();
            if let (Some(from), Some(to)) = (hcl_attribute(&lines, "from"), hcl_attribute(&lines, "to")) {
                if o.status == Status::Added {
                    out.claim_file(&f.path);
                    out.push(
                        Severity::Info,
                        dir(&f.path).to_owned(),
                        format!("`moved` block: `{from}` → `{to}`"),
                        "OpenTofu moves the resource in its state: nothing is destroyed",
                    );
                }
                moved_from.insert(from);
            }
        }
    }
    for f in ctx.files {
        for o in f.objects.iter().filter(|o| o.status == Status::Removed && o.key.block() == Some("resource")) {
            let address = o.key.address().unwrap_or_default();
            if moved_from.contains(&address) {
                continue;
            }
            out.claim_file(&f.path);
            let (severity, effect) = resource_effect(o.key.resource_type().unwrap_or_default());
            out.push(
                severity,
                dir(&f.path).to_owned(),
                format!("resource `{address}` removed"),
                format!("destroy: {effect}"),
            );
        }
    }
}
