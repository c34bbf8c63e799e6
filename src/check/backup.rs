//! `backup` (R28): a schedule a CronJob takes, a credential from a sealed input the cluster
//! lists (F11), an age recipient to encrypt the snapshots to, and a cluster whose Argo CD can
//! deliver the job (R23).

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::Fleet;
use crate::model::backup::cron_error;

pub fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for env in &fleet.environments {
        for c in &env.clusters {
            let Some(b) = &c.backup else { continue };
            if let Some(why) = cron_error(&b.schedule.value) {
                diags.push(
                    Diagnostic::new(
                        &codes::BACKUP_SCHEDULE_INVALID,
                        format!(
                            "the backup schedule `{}` of `{}` is not a CronJob schedule: {why}",
                            b.schedule.value, c.name.value
                        ),
                    )
                    .at(b.schedule.span)
                    .label("a CronJob refuses this schedule"),
                );
            }
            if !c.sealed.iter().any(|s| s.value == b.credentials.value) {
                diags.push(
                    Diagnostic::new(
                        &codes::BACKUP_CREDENTIALS_NOT_SEALED,
                        format!(
                            "the backup credentials `{}` are not a sealed input of cluster `{}`",
                            b.credentials.value, c.name.value
                        ),
                    )
                    .at(b.credentials.span)
                    .label("not in the cluster's `sealed`")
                    .related(c.name.span, "this cluster's `sealed` does not list it"),
                );
            }
            match env.recipients.as_slice() {
                [] => diags.push(
                    Diagnostic::new(
                        &codes::BACKUP_NO_RECIPIENT,
                        format!(
                            "environment `{}` has no age recipient to encrypt the etcd snapshots of `{}` to",
                            env.name.value, c.name.value
                        ),
                    )
                    .at(b.span)
                    .label("nothing to encrypt the snapshots to"),
                ),
                [_] => {}
                [first, ..] => diags.push(
                    Diagnostic::new(
                        &codes::BACKUP_ONE_RECIPIENT,
                        format!(
                            "the etcd snapshots of `{}` are encrypted to the first of {} recipients only",
                            c.name.value,
                            env.recipients.len()
                        ),
                    )
                    .at(b.span)
                    .label("one recipient")
                    .related(first.span, "only this key opens the snapshots"),
                ),
            }
            let why = if c.is_managed() {
                Some("Cluster API manages it, and its templates do not yet get the Talos API access the job needs")
            } else if fleet.gitops.is_none() {
                Some("the fleet has no `gitops` block, so no Argo CD delivers the job")
            } else {
                None
            };
            if let Some(why) = why {
                diags.push(
                    Diagnostic::new(
                        &codes::BACKUP_NOT_DELIVERED,
                        format!("the backup of `{}` cannot be delivered: {why}", c.name.value),
                    )
                    .at(b.span)
                    .label("not delivered"),
                );
            }
        }
    }
}
