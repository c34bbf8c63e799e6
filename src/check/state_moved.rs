//! `fleetc check --base REV`, R28: the environment's OpenTofu state stays where it is. Every
//! root's S3 backend and the bootstrap root's bucket are written from the `state` node's
//! bucket, region and endpoint ([`crate::model::StateBackend::location`]). Changing one points
//! every root at a bucket without its state, and the bootstrap root's bucket would be replaced:
//! its `name` forces a new bucket (scaleway/terraform-provider-scaleway v2.81.0
//! `internal/services/object/bucket.go` l.44-49, `ForceNew`) and `prevent_destroy` refuses that.
//! `fleetc diff` calls the same change DANGER (rule `lifecycle`).

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::Fleet;

pub(super) fn check(old: &Fleet, new: &Fleet, diags: &mut Diagnostics) {
    for env in &new.environments {
        let Some(old_env) = old.environment(&env.name.value) else { continue };
        let (Some(was), Some(now)) = (&old_env.state, &env.state) else { continue };
        if was.location() == now.location() {
            continue;
        }
        diags.push(
            Diagnostic::new(
                &codes::UPGRADE_STATE_MOVED,
                format!("environment `{}` moves its OpenTofu state", env.name.value),
            )
            .at(now.span)
            .label(format!("{} at the base revision, {} now", was.location(), now.location())),
        );
    }
}
