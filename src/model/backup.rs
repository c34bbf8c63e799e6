//! `backup`: a cluster's declared, scheduled etcd snapshots (R28), taken inside the cluster by
//! talos-backup (siderolabs/talos-backup) through the Talos API, encrypted with age and put in
//! an S3-compatible bucket. What both families must agree on is here once:
//! [`TalosApiAccess::of`] is the namespace and Talos roles the control plane's
//! `machine.features.kubernetesTalosAPIAccess` grants (the talos family) and the namespace,
//! ServiceAccount and talos.dev ServiceAccount the job runs with (the Argo CD family).
//! [`cron_error`] reads a schedule as the consumer, a Kubernetes CronJob, does.

use super::{Cluster, Spanned};
use crate::diag::Span;

/// `backup schedule=… bucket=… region=… credentials=… [endpoint=…] [prefix=…] [path-style=#true]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Backup {
    /// The CronJob's `schedule`, as written (checked by `check::backup` with [`cron_error`]).
    pub schedule: Spanned<String>,
    /// The bucket the snapshots go to (talos-backup `BUCKET`).
    pub bucket: Spanned<String>,
    /// The bucket's region (talos-backup `AWS_REGION`).
    pub region: Spanned<String>,
    /// The S3-compatible endpoint (talos-backup `CUSTOM_S3_ENDPOINT`); none: AWS's.
    pub endpoint: Option<Spanned<String>>,
    /// The key prefix inside the bucket (talos-backup `S3_PREFIX`); none: `<env>/<cluster>`
    /// ([`Backup::prefix_for`]).
    pub prefix: Option<Spanned<String>>,
    /// Path-style addressing (`https://endpoint/bucket/key`), for MinIO and the like.
    pub path_style: Option<Spanned<bool>>,
    /// The cluster's sealed input that holds the bucket's access key (a YAML map with
    /// `access_key` and `secret_key`): `fleetc apply` writes it into the cluster as
    /// [`CREDENTIALS_SECRET`].
    pub credentials: Spanned<String>,
    pub span: Span,
}

impl Backup {
    /// The key prefix of the cluster's snapshots: `prefix=`, else `<env>/<cluster>`.
    pub fn prefix_for(&self, c: &Cluster) -> String {
        self.prefix.as_ref().map_or_else(|| format!("{}/{}", c.env, c.name.value), |p| p.value.clone())
    }
}

/// The namespace the backup job runs in.
pub const NAMESPACE: &str = "talos-backup";
/// The Kubernetes ServiceAccount of the job's pods, and the talos.dev ServiceAccount whose
/// Secret (same name, key `config`: a talosconfig) Talos writes into [`NAMESPACE`].
pub const SERVICE_ACCOUNT: &str = "talos-backup";
/// The Secret `fleetc apply` writes from the sealed credentials (keys
/// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`: the AWS SDK's own variables).
pub const CREDENTIALS_SECRET: &str = "talos-backup-s3";
/// The one Talos role a snapshot needs: `EtcdSnapshot` is allowed to `os:etcd:backup`
/// (siderolabs/talos v1.13.9 `pkg/machinery/role/role.go` l.32-33).
pub const ETCD_BACKUP_ROLE: &str = "os:etcd:backup";

/// What a cluster's pods may ask of the Talos API for its backup, and who asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TalosApiAccess {
    pub namespace: &'static str,
    pub roles: &'static [&'static str],
    pub service_account: &'static str,
}

impl TalosApiAccess {
    /// The access the cluster's backup needs; none without a `backup`.
    pub fn of(c: &Cluster) -> Option<TalosApiAccess> {
        c.backup.as_ref().map(|_| TalosApiAccess {
            namespace: NAMESPACE,
            roles: &[ETCD_BACKUP_ROLE],
            service_account: SERVICE_ACCOUNT,
        })
    }
}

/// Why a CronJob would refuse `schedule`, or `None` when it takes it. The API server parses a
/// CronJob's schedule with `cron.ParseStandard` of robfig/cron v3 (v3.0.1 in the module graph
/// of the kube-apiserver the harness builds, oracles/kube/go.mod), and refuses a `TZ=` or
/// `CRON_TZ=` prefix (the time zone is `spec.timeZone`): five fields (minute 0-59, hour 0-23,
/// day of month 1-31, month 1-12 or `jan`-`dec`, day of week 0-6 or `sun`-`sat`), each a
/// comma list of `*`/`?`, `n` or `n-m`, with an optional `/step`; or a descriptor
/// (`@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`,
/// `@every <duration>`) (robfig/cron v3.0.1 `parser.go` l.88-130, l.217-230, l.236-330,
/// l.364-437; bounds `spec.go` l.22-49).
pub fn cron_error(schedule: &str) -> Option<String> {
    if schedule.starts_with("TZ=") || schedule.starts_with("CRON_TZ=") {
        return Some("a CronJob takes no time zone in its schedule (Kubernetes sets it with `timeZone`)".into());
    }
    if let Some(d) = schedule.strip_prefix('@') {
        return match d {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => None,
            _ => match d.strip_prefix("every ") {
                Some(dur) if go_duration(dur) => None,
                Some(dur) => Some(format!("`{dur}` is not a duration (`1h30m`, `90m`)")),
                None => Some(format!("`@{d}` is not a descriptor (`@daily`, `@hourly`, `@every 6h`, …)")),
            },
        };
    }
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "a schedule has five fields (minute hour day-of-month month day-of-week), this one has {}",
            fields.len()
        ));
    }
    const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let bounds: [(&str, u32, u32, &[&str], u32); 5] = [
        ("minute", 0, 59, &[], 0),
        ("hour", 0, 23, &[], 0),
        ("day of month", 1, 31, &[], 0),
        ("month", 1, 12, &MONTHS, 1),
        ("day of week", 0, 6, &DAYS, 0),
    ];
    for (field, (what, min, max, names, first)) in fields.iter().zip(bounds) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            if let Err(e) = cron_range(expr, min, max, names, first) {
                return Some(format!("the {what} field `{field}`: {e}"));
            }
        }
    }
    None
}

/// One `n`, `n-m`, `*` or `?`, with an optional `/step`, within `min..=max`.
fn cron_range(expr: &str, min: u32, max: u32, names: &[&str], first: u32) -> Result<(), String> {
    let value = |s: &str| -> Result<u32, String> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(s)) {
            return Ok(first + u32::try_from(i).unwrap_or(0));
        }
        s.parse::<u32>().map_err(|_| format!("`{s}` is not a number"))
    };
    let mut parts = expr.split('/');
    let range = parts.next().unwrap_or_default();
    let step = parts.next();
    if parts.next().is_some() {
        return Err(format!("too many slashes in `{expr}`"));
    }
    let (start, end) = if range == "*" || range == "?" {
        (min, max)
    } else {
        let mut ends = range.split('-');
        let start = value(ends.next().unwrap_or_default())?;
        let end = match (ends.next(), ends.next()) {
            (None, _) => {
                if step.is_some() {
                    max
                } else {
                    start
                }
            }
            (Some(e), None) => value(e)?,
            (Some(_), Some(_)) => return Err(format!("too many hyphens in `{expr}`")),
        };
        (start, end)
    };
    if let Some(s) = step
        && value(s)? == 0
    {
        return Err(format!("the step of `{expr}` must be positive"));
    }
    if start < min {
        return Err(format!("{start} is below {min}"));
    }
    if end > max {
        return Err(format!("{end} is above {max}"));
    }
    if start > end {
        return Err(format!("`{expr}` starts after it ends"));
    }
    Ok(())
}

/// Whether `s` reads as Go's `time.ParseDuration` reads a duration: numbers (decimals
/// allowed) each with a unit `ns`, `us`, `µs`, `ms`, `s`, `m`, `h`.
fn go_duration(s: &str) -> bool {
    let mut rest = s.strip_prefix('+').unwrap_or(s);
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number = &rest[..digits];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return false;
        }
        rest = &rest[digits..];
        // `ms` before `m`, and the two-letter units before `s`.
        let Some(unit) = ["ns", "us", "µs", "ms", "s", "m", "h"].iter().find(|u| rest.starts_with(**u)) else {
            return false;
        };
        rest = &rest[unit.len()..];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_a_cronjob_takes() {
        for s in [
            "0 3 * * *",
            "*/15 * * * *",
            "0 0/6 * * *",
            "30 2 1-7 * sun",
            "0 4 * jan,jul MON-FRI",
            "0 1 ? * *",
            "@daily",
            "@every 6h",
            "@every 1h30m",
        ] {
            assert_eq!(cron_error(s), None, "{s}");
        }
    }

    #[test]
    fn schedules_a_cronjob_refuses() {
        for s in [
            "0 3 * *",
            "0 24 * * *",
            "60 * * * *",
            "0 0 0 * *",
            "0 0 * 13 *",
            "0 0 * * 7",
            "5-1 * * * *",
            "*/0 * * * *",
            "0 3 * * * *",
            "@fortnightly",
            "@every 6",
            "TZ=Europe/Paris 0 3 * * *",
            "nightly",
        ] {
            assert!(cron_error(s).is_some(), "{s}");
        }
    }
}
