//! F5, R15: the rule `ephemeral-volume`. The EPHEMERAL volume's selector
//! (`ephemeral-min-size`) acts only when the volume is first provisioned: running nodes keep
//! their volume, only new or wiped nodes use the new selector.

use super::{Ctx, Outcome, Severity, stable_changes};

/// F5: the EPHEMERAL volume's selector acts only when the volume is first provisioned.
pub(super) fn ephemeral_volume(ctx: &Ctx<'_>, out: &mut Outcome) {
    for (i, c) in stable_changes(ctx, "ephemeral-min-size") {
        out.claim(i);
        out.push(
            Severity::Warning,
            c.scope.subject(),
            format!("EPHEMERAL volume selector of {}: minimum size {}", c.scope.what(), c.values()),
            "only at first provisioning: running nodes keep their EPHEMERAL volume; only new or wiped nodes use the new selector",
        );
    }
}
