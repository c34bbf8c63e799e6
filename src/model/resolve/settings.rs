//! The settings that inherit fleet → environment → cluster (`talos`, `kubernetes`,
//! `apply-mode`, `discovery`, `cni`, `addons`, `runtimes`, `pod-cidr`, `service-cidr`, `patch`)
//! and the pool values that go on to the pool (`pool-defaults`, a pool's own `size=`,
//! `schematic=` and disk sizes): read at each level into [`Settings`] and [`PoolDefaults`],
//! the nearest level winning. They are not model types: `cluster` and `pool` turn them into
//! [`Cluster`](crate::model::Cluster) and [`Pool`](crate::model::Pool) fields.

use super::reader::{Reader, missing};
use super::urls::{UrlUse, expect_url};
use super::{Resolver, one_of};
use crate::diag::{Diagnostic, Span, codes};
use crate::model::backup::Backup;
use crate::model::{ApplyMode, Bytes, Ipv4Net, Patch, Runtime, Spanned, Version, Window};
use crate::syntax::Node;

/// Settings that inherit fleet → environment → cluster (the nearest wins).
#[derive(Clone, Default)]
pub(super) struct Settings {
    pub talos: Option<Spanned<Version>>,
    /// `allow-prerelease=#true` on the `talos` node that set `talos` (it travels with the pin).
    pub talos_allow_prerelease: Option<Spanned<bool>>,
    pub kubernetes: Option<Spanned<Version>>,
    pub apply_mode: Option<Spanned<ApplyMode>>,
    pub discovery: Option<Spanned<bool>>,
    pub cni: Option<Spanned<String>>,
    pub addons: Option<Vec<Spanned<String>>>,
    pub runtimes: Option<Vec<Spanned<Runtime>>>,
    pub pod_cidr: Option<Spanned<Ipv4Net>>,
    pub service_cidr: Option<Spanned<Ipv4Net>>,
    pub pool: PoolDefaults,
    /// Settings written with a value that could not be read (already reported): a cluster
    /// missing one of them is not told it is missing (the cause is the value).
    pub broken: std::collections::BTreeSet<&'static str>,
    /// Where `cni "default"` was written, when it was.
    pub cni_default: Option<Span>,
    /// Talos patches, accumulated level by level (every level's apply, in order).
    pub patches: Vec<Patch>,
    /// `window "sat,sun 02:00-06:00"`: when `fleetc upgrade` may start a disruptive step.
    pub window: Option<Spanned<Window>>,
    /// `etcd-snapshots "/path"`: where `fleetc upgrade` keeps the etcd snapshots it takes.
    pub etcd_snapshots: Option<Spanned<String>>,
    /// `backup schedule=… bucket=… …`: the cluster's scheduled etcd snapshots (R28).
    pub backup: Option<Backup>,
}

/// Pool values that inherit fleet → environment → cluster → pool.
#[derive(Clone, Default)]
pub(super) struct PoolDefaults {
    pub size: Option<Spanned<String>>,
    pub schematic: Option<Spanned<String>>,
    pub ephemeral_min_size: Option<Spanned<Bytes>>,
    pub data_disk_size: Option<Spanned<Bytes>>,
    pub system_disk_size: Option<Spanned<Bytes>>,
}

pub(super) const SETTINGS: &[&str] = &[
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
    "patch",
    "window",
    "etcd-snapshots",
    "backup",
];

/// The properties of `backup` (docs/fleet-language.md).
const BACKUP_PROPS: &[&str] = &["schedule", "bucket", "region", "credentials", "endpoint", "prefix", "path-style"];

const POOL_DEFAULT_PROPS: &[&str] = &[
    "size",
    "schematic",
    "ephemeral-min-size",
    "data-disk-size",
    "system-disk-size",
    "ephemeral-disk",
    "install-disk",
];

impl Resolver<'_> {
    /// Reads `node` into `settings` when it is a setting; false otherwise.
    pub(super) fn setting(&mut self, node: &Node, s: &mut Settings) -> bool {
        let d = &mut *self.diags;
        match node.name.value.as_str() {
            "talos" | "kubernetes" => {
                let talos = node.name.value == "talos";
                let mut r = Reader::new(node, if talos { &["allow-prerelease"] } else { &[] }, d);
                let v = r.arg_parsed::<Version>(d, "a version");
                let allow = if talos { r.prop_bool("allow-prerelease", d) } else { None };
                r.finish(false, d);
                if talos && v.is_some() {
                    s.talos_allow_prerelease = allow;
                }
                if v.is_none() {
                    s.broken.insert(if node.name.value == "talos" { "talos" } else { "kubernetes" });
                }
                if node.name.value == "talos" {
                    s.talos = v.or(s.talos.take());
                } else {
                    s.kubernetes = v.or(s.kubernetes.take());
                }
            }
            "apply-mode" => {
                let mut r = Reader::new(node, &[], d);
                if let Some(v) = r.arg_str(d, "an apply mode") {
                    s.apply_mode = one_of(&ApplyMode::ALL, &v, "an apply mode", d).or(s.apply_mode.take());
                }
                r.finish(false, d);
            }
            "discovery" => {
                let mut r = Reader::new(node, &[], d);
                s.discovery = r.arg_bool(d).or(s.discovery.take());
                r.finish(false, d);
            }
            "cni" => {
                let mut r = Reader::new(node, &[], d);
                let cni = r.arg_str(d, "the add-on that provides the CNI, \"default\" or \"none\"");
                r.finish(false, d);
                if let Some(c) = cni {
                    s.cni_default = (c.value == "default").then_some(c.span);
                    s.cni = Some(c);
                }
            }
            "addons" => {
                let mut r = Reader::new(node, &[], d);
                s.addons = Some(r.rest_str(d, "add-on names"));
                r.finish(false, d);
            }
            "runtimes" => {
                let mut r = Reader::new(node, &[], d);
                let names = r.rest_str(d, "runtime names");
                s.runtimes = Some(names.iter().filter_map(|n| one_of(&Runtime::ALL, n, "a runtime", d)).collect());
                r.finish(false, d);
            }
            "pod-cidr" | "service-cidr" => {
                let mut r = Reader::new(node, &[], d);
                let v = r.arg_parsed::<Ipv4Net>(d, "a CIDR");
                r.finish(false, d);
                if node.name.value == "pod-cidr" {
                    s.pod_cidr = v.or(s.pod_cidr.take());
                } else {
                    s.service_cidr = v.or(s.service_cidr.take());
                }
            }
            "pool-defaults" => {
                let r = Reader::new(node, POOL_DEFAULT_PROPS, d);
                self.pool_values(&r, &mut s.pool);
                r.finish(false, self.diags);
            }
            "window" => {
                let mut r = Reader::new(node, &[], d);
                s.window =
                    r.arg_parsed::<Window>(d, "a maintenance window (`sat,sun 02:00-06:00`, UTC)").or(s.window.take());
                r.finish(false, d);
            }
            "etcd-snapshots" => {
                let mut r = Reader::new(node, &[], d);
                s.etcd_snapshots = r.arg_str(d, "a directory outside the repository").or(s.etcd_snapshots.take());
                r.finish(false, d);
            }
            "backup" => {
                let r = Reader::new(node, BACKUP_PROPS, d);
                let schedule = r.require_str("schedule", d);
                let bucket = r.require_str("bucket", d);
                let region = r.require_str("region", d);
                let credentials = r.require_str("credentials", d);
                let endpoint = r.prop_str("endpoint", d);
                let prefix = r.prop_str("prefix", d);
                let path_style = r.prop_bool("path-style", d);
                if let Some(e) = &endpoint {
                    expect_url(e, "the backup's `endpoint`", UrlUse::BackupS3, d);
                }
                if path_style.as_ref().is_some_and(|p| p.value) && endpoint.is_none() {
                    // talos-backup sets path-style only on a custom endpoint (`pkg/s3/s3.go`
                    // l.33-39): without one the setting would be ignored.
                    d.push(missing(node, "property `endpoint`").help(
                        "`path-style=#true` applies to an S3-compatible endpoint only: add `endpoint=\"https://…\"`",
                    ));
                }
                r.finish(false, d);
                if let (Some(schedule), Some(bucket), Some(region), Some(credentials)) =
                    (schedule, bucket, region, credentials)
                {
                    s.backup = Some(Backup {
                        schedule,
                        bucket,
                        region,
                        endpoint,
                        prefix,
                        path_style,
                        credentials,
                        span: node.head_span(),
                    });
                }
            }
            "patch" => {
                let level = self.patch_level;
                s.patches.extend(self.patch(node, level));
            }
            _ => return false,
        }
        true
    }

    /// Reads the pool properties `r` has into `p` (overriding what it holds).
    pub(super) fn pool_values(&mut self, r: &Reader<'_>, p: &mut PoolDefaults) {
        let d = &mut *self.diags;
        for prop in ["ephemeral-disk", "install-disk"] {
            if let Some(v) = r.prop_str(prop, d) {
                d.push(
                    Diagnostic::new(
                        &codes::DEVICE_PATH,
                        format!("`{prop}` names a disk by device path (`{}`)", v.value),
                    )
                    .at(v.span)
                    .label("device paths change with attach order"),
                );
            }
        }
        if let Some(v) = r.prop_str("size", d) {
            p.size = Some(v);
        }
        if let Some(v) = r.prop_str("schematic", d) {
            p.schematic = Some(v);
        }
        if let Some(v) = r.prop_bytes("ephemeral-min-size", d) {
            p.ephemeral_min_size = Some(v);
        }
        if let Some(v) = r.prop_bytes("data-disk-size", d) {
            p.data_disk_size = Some(v);
        }
        if let Some(v) = r.prop_bytes("system-disk-size", d) {
            p.system_disk_size = Some(v);
        }
    }
}
