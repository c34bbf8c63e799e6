//! F5, F10 (and F1): what a changed field of a Talos document under `out/talos/` does to a
//! running node, per the cluster's target Talos version. The two sides of every changed YAML
//! document are compared path by path, and each changed path is looked up in [`TABLE`]
//! (docs/talos.md, "Emitted fields", and Talos's `CanApplyImmediate`): applied live, needs a
//! reboot, acts only at first provisioning or install, only at bootstrap, or only at upgrade.
//! A path the table does not know, a document kind it does not know, or a Talos version it
//! does not cover leaves the file unclaimed: it stays an unknown impact.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Ctx, Outcome, Severity};
use crate::layout::paths;
use crate::model::{ApplyMode, Version};
use crate::review::files::Status;

/// What a changed field does to a running node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// Applied without a reboot (`CanApplyImmediate`, or a document Talos reconciles live).
    Live,
    /// Outside what Talos applies live: the node must reboot for it.
    Reboot,
    /// Read when a volume is first provisioned or the system is installed (F5).
    FirstProvisioning,
    /// Read when the cluster is bootstrapped; a running cluster keeps what it started with.
    Bootstrap,
    /// Stored, used only by the next install or `talosctl upgrade` (F1).
    Upgrade,
}

/// `(document, path prefix, reach)`: the document is `v1alpha1` (the machine config) or a
/// multi-document kind; the first matching prefix wins, so the specific ones come first.
/// Sources: docs/talos.md "Emitted fields" and siderolabs/talos
/// `internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_runtime.go` `CanApplyImmediate`
/// (`.debug`, `.cluster`, `.machine.{ca, acceptedCAs, time, certSANs, install, network, sysfs,
/// sysctls, logging, controlplane, kubelet, kernel, registries, pods, seccompProfiles,
/// nodeAnnotations, nodeLabels, nodeTaints}`, `.machine.features.{kubernetesTalosAPIAccess,
/// kubePrism, hostDNS, imageCache, nodeAddressSortAlgorithm}`; any other change of the v1alpha1
/// document "can't be applied in immediate mode").
pub const TABLE: &[(&str, &[&str], Reach)] = &[
    ("v1alpha1", &["machine", "install", "image"], Reach::Upgrade),
    ("v1alpha1", &["machine", "install"], Reach::FirstProvisioning),
    ("v1alpha1", &["cluster", "network"], Reach::Bootstrap),
    ("v1alpha1", &["cluster", "proxy"], Reach::Bootstrap),
    ("v1alpha1", &["cluster", "inlineManifests"], Reach::Bootstrap),
    ("v1alpha1", &["cluster"], Reach::Live),
    ("v1alpha1", &["debug"], Reach::Live),
    ("v1alpha1", &["machine", "ca"], Reach::Live),
    ("v1alpha1", &["machine", "acceptedCAs"], Reach::Live),
    ("v1alpha1", &["machine", "time"], Reach::Live),
    ("v1alpha1", &["machine", "certSANs"], Reach::Live),
    ("v1alpha1", &["machine", "network"], Reach::Live),
    ("v1alpha1", &["machine", "sysfs"], Reach::Live),
    ("v1alpha1", &["machine", "sysctls"], Reach::Live),
    ("v1alpha1", &["machine", "logging"], Reach::Live),
    ("v1alpha1", &["machine", "controlplane"], Reach::Live),
    ("v1alpha1", &["machine", "kubelet"], Reach::Live),
    ("v1alpha1", &["machine", "kernel"], Reach::Live),
    ("v1alpha1", &["machine", "registries"], Reach::Live),
    ("v1alpha1", &["machine", "pods"], Reach::Live),
    ("v1alpha1", &["machine", "seccompProfiles"], Reach::Live),
    ("v1alpha1", &["machine", "nodeAnnotations"], Reach::Live),
    ("v1alpha1", &["machine", "nodeLabels"], Reach::Live),
    ("v1alpha1", &["machine", "nodeTaints"], Reach::Live),
    ("v1alpha1", &["machine", "features", "kubernetesTalosAPIAccess"], Reach::Live),
    ("v1alpha1", &["machine", "features", "kubePrism"], Reach::Live),
    ("v1alpha1", &["machine", "features", "hostDNS"], Reach::Live),
    ("v1alpha1", &["machine", "features", "imageCache"], Reach::Live),
    ("v1alpha1", &["machine", "features", "nodeAddressSortAlgorithm"], Reach::Live),
    ("v1alpha1", &["machine"], Reach::Reboot),
    ("VolumeConfig", &[], Reach::FirstProvisioning),
    ("HostnameConfig", &[], Reach::Live),
    ("LinkAliasConfig", &[], Reach::Live),
    ("LinkConfig", &[], Reach::Live),
    ("ResolverConfig", &[], Reach::Live),
    ("Layer2VIPConfig", &[], Reach::Live),
];

/// Settings of the fleet whose only output is in the Talos documents.
const TALOS_ONLY_FACTS: &[&str] = &["cert-sans", "discovery", "labels", "annotations", "taints", "patches"];

/// The Talos minors the table describes (the ones fleetc emits machine configs for).
fn covered(talos: Version) -> bool {
    matches!(talos.minor_version(), (1, 12) | (1, 13))
}

/// What changing `path` of a `document` does on Talos `talos`; `None` when unknown.
pub fn reach(talos: Version, document: &str, path: &[String]) -> Option<Reach> {
    if !covered(talos) {
        return None;
    }
    TABLE
        .iter()
        .find(|(doc, prefix, _)| {
            *doc == document && prefix.len() <= path.len() && prefix.iter().zip(path).all(|(a, b)| a == b)
        })
        .map(|(_, _, r)| *r)
}

/// The leaf paths where `a` and `b` differ (lists compare whole; an absent map is empty).
fn changed_paths(a: &Value, b: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let empty = serde_json::Map::new();
    let object = |v: &'_ Value, other: &Value| match v {
        Value::Object(m) => Some(m.clone()),
        Value::Null if other.is_object() => Some(empty.clone()),
        _ => None,
    };
    match (object(a, b), object(b, a)) {
        (Some(x), Some(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                at.push(k.clone());
                changed_paths(x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null), at, out);
                at.pop();
            }
        }
        _ if a != b => out.push(at.clone()),
        _ => {}
    }
}

/// A document's text as a value (`Null` for an empty side), and its kind.
fn parse(text: &str) -> Option<(Value, String)> {
    if text.trim().is_empty() {
        return Some((Value::Null, String::new()));
    }
    let v: Value = serde_saphyr::from_str(text).ok()?;
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("v1alpha1").to_owned();
    Some((v, kind))
}

fn shown(document: &str, path: &[String]) -> String {
    let dotted: Vec<String> =
        path.iter().map(|p| if p.contains('.') { format!("\"{p}\"") } else { p.clone() }).collect();
    if document == "v1alpha1" { dotted.join(".") } else { format!("{document} {}", dotted.join(".")) }
}

fn effect(reach: Reach, mode: ApplyMode) -> (Severity, String) {
    match reach {
        Reach::Live => (Severity::Info, "applied live, no reboot".to_owned()),
        Reach::Reboot => {
            let what = match mode {
                ApplyMode::Auto | ApplyMode::Reboot => "every node that gets it reboots, one at a time",
                ApplyMode::NoReboot => "apply mode `no_reboot` makes the apply fail",
                ApplyMode::Staged | ApplyMode::StagedIfNeedingReboot => {
                    "staged: it takes effect at each node's next reboot"
                }
            };
            (Severity::Warning, format!("reboot: Talos cannot apply it live (F10); {what}"))
        }
        Reach::FirstProvisioning => (
            Severity::Warning,
            "only at first provisioning: running nodes keep what they were installed with; only new or wiped nodes use it (F5)"
                .to_owned(),
        ),
        Reach::Bootstrap => (
            Severity::Warning,
            "only at bootstrap: stored, but a running cluster keeps what it started with".to_owned(),
        ),
        Reach::Upgrade => (
            Severity::Info,
            "only at upgrade: stored, used by the next `talosctl upgrade` (`fleetc upgrade`) or install (F1)".to_owned(),
        ),
    }
}

/// The rule: see the module's documentation. With a base fleet, the upgrade and
/// first-provisioning fields are left to the rules that see their cause in the fleet
/// (install-image, talos-version, ephemeral-volume): the file is claimed, no line repeated.
///
/// The fleet's settings that reach nothing but the Talos documents (`cert-sans`, `discovery`,
/// a pool's `labels` and `taints`) are explained here when every changed Talos file of their
/// cluster was classified.
pub(super) fn talos_fields(ctx: &Ctx<'_>, out: &mut Outcome) {
    // (subject, field, reach) → the files it changed in
    let mut found: BTreeMap<(String, String, Reach), Vec<String>> = BTreeMap::new();
    let mut modes: BTreeMap<String, ApplyMode> = BTreeMap::new();
    // Clusters whose changed Talos files were all classified (true) or not (false).
    let mut classified: BTreeMap<String, bool> = BTreeMap::new();
    // A user patch added to or removed from a pool that stays: the paths it sets (or set) are
    // changed fields like any other (the other side is empty). A patch of a pool that comes
    // or goes with it is the pool's change, left to the rules of pools and nodes.
    let pool_file_moves = |patch: &str| {
        // `talos/<env>/<cluster>/<pool's patch directory>/<file>` → the pool's role document.
        let parts: Vec<&str> = patch.splitn(4, '/').collect();
        let [root, env, cluster, rest] = parts[..] else { return true };
        let in_dir = |dir: &str| rest.strip_prefix(dir).and_then(|r| r.strip_prefix('/'));
        let role_file = if root != paths::TALOS_DIR {
            return true;
        } else if in_dir(paths::CONTROL_PLANE_PATCHES).is_some_and(|f| !f.contains('/')) {
            paths::talos_role_doc(env, cluster, true, "")
        } else if let Some((pool, f)) = in_dir(paths::WORKER_PATCHES).and_then(|r| r.split_once('/'))
            && !f.contains('/')
        {
            paths::talos_role_doc(env, cluster, false, pool)
        } else {
            return true;
        };
        ctx.files.iter().any(|g| g.path == role_file && g.status != Status::Changed)
    };
    let considered = |f: &&crate::review::files::FileDiff| {
        f.path.strip_prefix(paths::TALOS_DIR).is_some_and(|r| r.starts_with('/'))
            && match f.status {
                Status::Changed => true,
                Status::Added | Status::Removed => f.path.contains("/patches/") && !pool_file_moves(&f.path),
            }
    };
    for f in ctx.files.iter().filter(considered) {
        let parts: Vec<&str> = f.path.splitn(4, '/').collect();
        let [_, env, cluster, rest] = parts[..] else { continue };
        let Some(c) = ctx.new.environment(env).and_then(|e| e.clusters.iter().find(|c| c.name.value == cluster)) else {
            continue;
        };
        let subject = format!("{env}/{cluster}");
        let mut rows = Vec::new();
        let mut all_known = !f.objects.is_empty();
        for o in &f.objects {
            let (Some((old, k1)), Some((new, k2))) = (parse(&o.old_text), parse(&o.new_text)) else {
                all_known = false;
                continue;
            };
            let kind = if k2.is_empty() { k1 } else { k2 };
            let mut paths = Vec::new();
            changed_paths(&old, &new, &mut Vec::new(), &mut paths);
            for p in paths {
                // The kind and apiVersion of a multi-doc document identify it.
                if kind != "v1alpha1" && p.len() == 1 && (p[0] == "kind" || p[0] == "apiVersion") {
                    continue;
                }
                match reach(c.talos.value, &kind, &p) {
                    Some(r) => rows.push((shown(&kind, &p), r)),
                    None => all_known = false,
                }
            }
        }
        let entry = classified.entry(subject.clone()).or_insert(true);
        *entry &= all_known;
        if !all_known {
            continue;
        }
        out.claim_file(&f.path);
        modes.insert(subject.clone(), c.apply_mode.value);
        // A user patch has no fleet setting whose rule would explain its fields.
        let from_patch = rest.starts_with("patches/");
        for (field, r) in rows {
            if ctx.old.is_some() && !from_patch && matches!(r, Reach::Upgrade | Reach::FirstProvisioning) {
                continue;
            }
            found.entry((subject.clone(), field, r)).or_default().push(rest.to_owned());
        }
    }
    for field in TALOS_ONLY_FACTS {
        for (i, c) in super::stable_changes(ctx, field) {
            let subject = c.scope.env().zip(c.scope.cluster()).map(|(e, c)| format!("{e}/{c}"));
            if subject.is_some_and(|s| classified.get(&s) == Some(&true)) {
                out.claim(i);
            }
        }
    }
    for ((subject, field, r), files) in found {
        let (severity, text) = effect(r, modes.get(&subject).copied().unwrap_or(ApplyMode::Auto));
        let more = if files.len() > 3 { format!(" and {} more", files.len() - 3) } else { String::new() };
        let listed: Vec<&str> = files.iter().take(3).map(String::as_str).collect();
        out.push(severity, subject, format!("Talos field `{field}` changed ({}{more})", listed.join(", ")), text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<String> {
        s.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn table_lookups_per_version() {
        let v113: Version = "v1.13.9".parse().unwrap();
        let v114: Version = "v1.14.1".parse().unwrap();
        assert_eq!(reach(v113, "v1alpha1", &p("machine.certSANs")), Some(Reach::Live));
        assert_eq!(reach(v113, "v1alpha1", &p("machine.install.image")), Some(Reach::Upgrade));
        assert_eq!(reach(v113, "v1alpha1", &p("machine.install.diskSelector.size")), Some(Reach::FirstProvisioning));
        assert_eq!(reach(v113, "v1alpha1", &p("cluster.network.podSubnets")), Some(Reach::Bootstrap));
        assert_eq!(reach(v113, "v1alpha1", &p("cluster.discovery.enabled")), Some(Reach::Live));
        assert_eq!(reach(v113, "v1alpha1", &p("machine.features.rbac")), Some(Reach::Reboot));
        assert_eq!(reach(v113, "v1alpha1", &p("machine.features.kubePrism.port")), Some(Reach::Live));
        assert_eq!(reach(v113, "VolumeConfig", &p("provisioning.diskSelector.match")), Some(Reach::FirstProvisioning));
        assert_eq!(reach(v113, "HostnameConfig", &p("hostname")), Some(Reach::Live));
        assert_eq!(reach(v113, "UserVolumeConfig", &p("provisioning")), None, "unknown kind");
        assert_eq!(reach(v113, "v1alpha1", &p("version")), None, "unknown top-level field");
        assert_eq!(reach(v114, "v1alpha1", &p("machine.certSANs")), None, "1.14 is not covered");
    }

    #[test]
    fn changed_paths_are_leaves() {
        let a: Value = serde_json::json!({"machine": {"certSANs": ["a"], "kubelet": {"x": 1}}});
        let b: Value = serde_json::json!({"machine": {"certSANs": ["a", "b"], "kubelet": {"x": 1}}});
        let mut out = Vec::new();
        changed_paths(&a, &b, &mut Vec::new(), &mut out);
        assert_eq!(out, vec![p("machine.certSANs")]);
    }
}
