//! F5, F10 (and F1): what a changed field of a Talos document under `out/talos/` does to a
//! running node, per the cluster's target Talos version. The two sides of every changed YAML
//! document are compared path by path, and each changed path is looked up in [`TABLE`]
//! (docs/talos.md, "Emitted fields", and Talos's `CanApplyImmediate`): applied live, needs a
//! reboot, acts only at first provisioning or install, only at bootstrap, or only at upgrade.
//! A path the table does not know, a document kind it does not know, or a Talos version it
//! does not cover leaves the file unclaimed: it stays an unknown impact.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Ctx, Outcome, Severity, facts};
use crate::layout::paths;
use crate::model::{ApplyMode, Cluster, Fleet, Version};
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
    /// A worker's taints: the Node takes them when it registers; NodeRestriction refuses
    /// the node's own change of them later.
    Registration,
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
const TALOS_ONLY_FACTS: &[&str] =
    &["cert-sans", "discovery", "labels", "annotations", "taints", "patches", facts::NODE_PATCHES];

/// The v1alpha1 forms the table describes: a node of a Talos version gets the v1alpha1 base
/// of its row's contract ([`crate::upstream::talos::Table::generator_contract`]: the 1.13
/// contract for 1.14 nodes, versions/talos.kdl), whose fields this classification covers.
fn covered(talos: Version) -> bool {
    matches!(crate::upstream::talos::table().generator_contract(talos), (1, 12) | (1, 13))
}

/// Talos 1.14 dropped the `reboot` apply mode: every change is stored and set without a
/// reboot, and what the running system cannot reconcile waits for the next boot
/// (siderolabs/talos commit 995bc30d5 "feat: drop apply config method reboot", in
/// v1.14.0-rc.1 `internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go`
/// `ApplyConfiguration`: AUTO becomes NO_REBOOT; `CanApplyImmediate` is gone).
fn applies_without_reboot_mode(talos: Version) -> bool {
    talos.minor_version() >= (1, 14)
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
pub fn changed_paths(a: &Value, b: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
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

/// The nodes a file under `talos/<env>/<cluster>/` (`rest`, relative to it) reaches: every
/// node for `common.yaml`, a role's or pool's for its role document and patch directory, one
/// node for its own document and patch directory.
fn nodes_of(cluster: &Cluster, rest: &str) -> BTreeSet<String> {
    let pool_hosts = |p: &crate::model::Pool| p.machines.iter().map(|m| m.hostname.clone()).collect::<Vec<_>>();
    let under = |dir: &str| rest.strip_prefix(dir).and_then(|r| r.strip_prefix('/'));
    let mut out = BTreeSet::new();
    if rest == paths::COMMON_DOC {
        out.extend(cluster.pools().flat_map(pool_hosts));
    } else if rest == paths::CONTROL_PLANE_DOC || under(paths::CONTROL_PLANE_PATCHES).is_some() {
        out.extend(pool_hosts(&cluster.control_plane));
    } else if let Some(pool) = under(paths::WORKERS_DIR)
        .and_then(|f| f.strip_suffix(".yaml"))
        .or_else(|| under(paths::WORKER_PATCHES).and_then(|r| r.split_once('/')).map(|(p, _)| p))
    {
        out.extend(cluster.workers.iter().filter(|p| p.name.value == pool).flat_map(pool_hosts));
    } else if let Some(host) = under(paths::NODES_DIR)
        .and_then(|f| f.strip_suffix(".yaml"))
        .or_else(|| under(paths::NODE_PATCHES).and_then(|r| r.split_once('/')).map(|(h, _)| h))
    {
        out.insert(host.to_owned());
    }
    out
}

/// A field that says a node's taints: `machine.nodeTaints`, and the kubelet's
/// `registerWithTaints` fleetc writes beside it for a worker.
fn is_taint_field(path: &[String]) -> bool {
    let starts = |prefix: &[&str]| prefix.len() <= path.len() && prefix.iter().zip(path).all(|(a, b)| a == b);
    starts(&["machine", "nodeTaints"]) || starts(&["machine", "kubelet", "extraConfig", "registerWithTaints"])
}

/// Whether every node the file reaches is a worker: Talos sets a worker's Node with the
/// kubelet's own credentials (siderolabs/talos v1.13.9
/// `internal/app/machined/pkg/controllers/k8s/node_apply.go`, `getK8sClient`), which
/// NodeRestriction forbids to change the node's taints (kubernetes v1.35.0
/// `plugin/pkg/admission/noderestriction/admission.go`, "is not allowed to modify taints").
fn only_workers(cluster: &Cluster, rest: &str) -> bool {
    let nodes = nodes_of(cluster, rest);
    let worker = |h: &String| cluster.workers.iter().any(|p| p.machines.iter().any(|m| &m.hostname == h));
    !nodes.is_empty() && nodes.iter().all(worker)
}

/// `a`, `b`, `c` and 4 more.
fn node_list(nodes: &BTreeSet<String>) -> String {
    let shown: Vec<String> = nodes.iter().take(6).map(|n| format!("`{n}`")).collect();
    let more = if nodes.len() > 6 { format!(" and {} more", nodes.len() - 6) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

/// What a field's reach does (also what `fleetc drift` says of a running node's field that
/// differs from out/'s), said for the nodes that get it and the step that applies it.
/// `running` is the Talos version the nodes run when the config is applied (the base's: a
/// Talos upgrade in the same change comes after, with `fleetc upgrade`).
pub fn effect(
    reach: Reach,
    mode: ApplyMode,
    running: Version,
    env: &str,
    nodes: &BTreeSet<String>,
) -> (Severity, String) {
    let who = if nodes.is_empty() { "every node that gets it".to_owned() } else { node_list(nodes) };
    let step = format!("`fleetc apply {env}` (the cluster root)");
    match reach {
        Reach::Live => (Severity::Info, "applied live, no reboot".to_owned()),
        Reach::Reboot if applies_without_reboot_mode(running) => (
            Severity::Warning,
            format!(
                "reboot: Talos {} stores it without rebooting (it has no `reboot` apply mode) and the node uses it from its next boot (F10); after {step}, reboot {who}, one at a time",
                running.v()
            ),
        ),
        Reach::Reboot => {
            let what = match mode {
                ApplyMode::Auto | ApplyMode::Reboot => format!("{step} reboots {who}, one at a time"),
                ApplyMode::NoReboot => format!("apply mode `no_reboot` makes {step} fail on {who}"),
                ApplyMode::Staged | ApplyMode::StagedIfNeedingReboot => {
                    format!("staged by {step}: {who} take it at their next reboot")
                }
            };
            (Severity::Warning, format!("reboot: Talos {} cannot apply it live (F10); {what}", running.v()))
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
        Reach::Registration => (
            Severity::Warning,
            format!(
                "only when a node registers: the kubelet creates its Node with these taints, and NodeRestriction forbids a worker to change its own taints after that, so {who} keep the taints they have, and Talos stops updating their labels and annotations too (it sends them in the same refused update) until the Node has the new taints: set them with `kubectl taint nodes` after {step}, or replace the nodes"
            ),
        ),
        Reach::Upgrade => (
            Severity::Info,
            "only at upgrade: stored, used by the next `talosctl upgrade` (`fleetc upgrade`) or install (F1)".to_owned(),
        ),
    }
}

/// Whether a patch file added or removed (`talos/<env>/<cluster>/patches/…`) comes or goes
/// with its pool or node: then it is that entity's change, left to the rules of pools and
/// nodes.
fn moves_with_its_owner(ctx: &Ctx<'_>, patch: &str) -> bool {
    let parts: Vec<&str> = patch.splitn(4, '/').collect();
    let [root, env, cluster, rest] = parts[..] else { return true };
    if root != paths::TALOS_DIR {
        return true;
    }
    let in_dir = |dir: &str| rest.strip_prefix(dir).and_then(|r| r.strip_prefix('/'));
    let role_file = if in_dir(paths::CONTROL_PLANE_PATCHES).is_some_and(|f| !f.contains('/')) {
        paths::talos_role_doc(env, cluster, true, "")
    } else if let Some((pool, f)) = in_dir(paths::WORKER_PATCHES).and_then(|r| r.split_once('/'))
        && !f.contains('/')
    {
        paths::talos_role_doc(env, cluster, false, pool)
    } else if let Some((host, f)) = in_dir(paths::NODE_PATCHES).and_then(|r| r.split_once('/'))
        && !f.contains('/')
    {
        let has = |fleet: Option<&Fleet>| {
            fleet
                .and_then(|f| f.environment(env))
                .and_then(|e| e.cluster(cluster))
                .is_some_and(|c| c.pools().any(|p| p.machines.iter().any(|m| m.hostname == host)))
        };
        return !(has(ctx.old) && has(Some(ctx.new)));
    } else {
        return true;
    };
    ctx.files.iter().any(|g| g.path == role_file && g.status != Status::Changed)
}

/// The patches of a cluster that override a rule (`overrides="R…"`): `(file, digest, rules,
/// level)` of each `patch` line → the nodes it reaches.
type Overriding = BTreeMap<(String, String, Vec<String>, &'static str), BTreeSet<String>>;

fn overriding_patches(c: &Cluster) -> Overriding {
    let mut out = Overriding::new();
    let mut add = |p: &crate::model::Patch, hosts: &mut dyn Iterator<Item = &String>| {
        if !p.overrides.is_empty() {
            let digest = crate::digest::sha256_hex(p.file.text.as_bytes());
            let rules = p.overrides.iter().map(|o| o.value.clone()).collect();
            out.entry((p.path.value.clone(), digest, rules, p.level.as_str())).or_default().extend(hosts.cloned());
        }
    };
    for pool in c.pools() {
        for p in &pool.patches {
            add(p, &mut pool.machines.iter().map(|m| &m.hostname));
        }
        for m in &pool.machines {
            for p in m.settings.patches.iter().filter(|p| p.level == crate::model::PatchLevel::Node) {
                add(p, &mut std::iter::once(&m.hostname));
            }
        }
    }
    out
}

/// The rule: see the module's documentation. With a base fleet, the upgrade and
/// first-provisioning fields are left to the rules that see their cause in the fleet
/// (install-image, talos-version, ephemeral-volume): the file is claimed, no line repeated.
///
/// A user patch has no fleet setting whose rule would explain it: every field a changed,
/// added or removed patch file touches gets a line, classified when the table knows it and
/// an unknown impact naming the field when it does not, so that no other change of the same
/// review (a Talos upgrade above all) can hide it. A field is classified for the Talos
/// version the nodes run when the config is applied: the base's.
///
/// The fleet's settings that reach nothing but the Talos documents (`cert-sans`, `discovery`,
/// a pool's `labels` and `taints`, the patches) are explained here when every changed Talos
/// file of their cluster was classified.
pub(super) fn talos_fields(ctx: &Ctx<'_>, out: &mut Outcome) {
    // (subject, field, reach) → the files it changed in
    let mut found: BTreeMap<(String, String, Reach), Vec<String>> = BTreeMap::new();
    // (subject, field) → the patch files where a field the table does not know changed
    let mut unknown: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    // subject → (env, apply mode, the Talos version the nodes run, the new cluster)
    let mut clusters: BTreeMap<String, (String, ApplyMode, Version, &Cluster)> = BTreeMap::new();
    // Clusters whose changed Talos files were all classified (true) or not (false).
    let mut classified: BTreeMap<String, bool> = BTreeMap::new();
    let considered = |f: &&crate::review::files::FileDiff| {
        f.path.strip_prefix(paths::TALOS_DIR).is_some_and(|r| r.starts_with('/'))
            && match f.status {
                Status::Changed => true,
                Status::Added | Status::Removed => f.path.contains("/patches/") && !moves_with_its_owner(ctx, &f.path),
            }
    };
    for f in ctx.files.iter().filter(considered) {
        let parts: Vec<&str> = f.path.splitn(4, '/').collect();
        let [_, env, cluster, rest] = parts[..] else { continue };
        let Some(c) = ctx.new.environment(env).and_then(|e| e.cluster(cluster)) else {
            continue;
        };
        let running = ctx
            .old
            .and_then(|o| o.environment(env))
            .and_then(|e| e.cluster(cluster))
            .map_or(c.talos.value, |o| o.talos.value);
        let subject = format!("{env}/{cluster}");
        let from_patch = rest.starts_with("patches/");
        let readdressed = super::stable_changes(ctx, "addresses")
            .any(|(_, ch)| ch.scope.env() == Some(env) && ch.scope.cluster() == Some(cluster));
        let mut rows = Vec::new();
        let mut unknown_rows = Vec::new();
        if f.objects.is_empty() {
            unknown_rows.push("(the file's documents)".to_owned());
        }
        for o in &f.objects {
            let (Some((old, k1)), Some((new, k2))) = (parse(&o.old_text), parse(&o.new_text)) else {
                unknown_rows.push(format!("(document `{}`, which fleetc cannot read)", o.label()));
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
                // A node's address in its `LinkConfig`, from a changed `address`: the rule of
                // machine arguments reports that change with its severity (a control-plane
                // node's is DANGER); "applied live" here would contradict it.
                if !from_patch && kind == "LinkConfig" && p.first().is_some_and(|k| k == "addresses") && readdressed {
                    continue;
                }
                match reach(running, &kind, &p) {
                    Some(Reach::Live) if kind == "v1alpha1" && is_taint_field(&p) && only_workers(c, rest) => {
                        rows.push((shown(&kind, &p), Reach::Registration));
                    }
                    Some(r) => rows.push((shown(&kind, &p), r)),
                    None => unknown_rows.push(shown(&kind, &p)),
                }
            }
        }
        let entry = classified.entry(subject.clone()).or_insert(true);
        if !from_patch {
            *entry &= unknown_rows.is_empty();
            if !unknown_rows.is_empty() {
                continue;
            }
        }
        out.claim_file(&f.path);
        clusters.insert(subject.clone(), (env.to_owned(), c.apply_mode.value, running, c));
        for field in unknown_rows {
            unknown.entry((subject.clone(), field)).or_default().push(rest.to_owned());
        }
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
    let files_text = |files: &[String]| {
        let more = if files.len() > 3 { format!(" and {} more", files.len() - 3) } else { String::new() };
        let listed: Vec<&str> = files.iter().take(3).map(String::as_str).collect();
        format!("{}{more}", listed.join(", "))
    };
    for ((subject, field, r), files) in found {
        let Some((env, mode, running, c)) = clusters.get(&subject) else { continue };
        let nodes: BTreeSet<String> = files.iter().flat_map(|f| nodes_of(c, f)).collect();
        let (severity, mut text) = effect(r, *mode, *running, env, &nodes);
        if r == Reach::Reboot && *running != c.talos.value {
            text.push_str(&format!(
                ", on the Talos {} they run then; `fleetc upgrade` to {} comes after and reboots each node again",
                running.v(),
                c.talos.value.v()
            ));
        }
        out.push(severity, subject, format!("Talos field `{field}` changed ({})", files_text(&files)), text);
    }
    for ((subject, field), files) in unknown {
        let Some((_, _, running, c)) = clusters.get(&subject) else { continue };
        let nodes: BTreeSet<String> = files.iter().flat_map(|f| nodes_of(c, f)).collect();
        let on = if nodes.is_empty() { String::new() } else { format!(" on {}", node_list(&nodes)) };
        out.push(
            Severity::Warning,
            subject,
            format!("Talos field `{field}` changed ({})", files_text(&files)),
            format!(
                "unknown impact{on}: the Talos field table (docs/diff.md) does not classify it for Talos {}; review the diff",
                running.v()
            ),
        );
    }
    // A patch that overrides a rule on purpose, new or changed in this review.
    for (env, c) in ctx.new.environments.iter().flat_map(|e| e.clusters.iter().map(move |c| (e, c))) {
        let before = ctx
            .old
            .and_then(|o| o.environment(&env.name.value))
            .and_then(|e| e.cluster(&c.name.value))
            .map(overriding_patches)
            .unwrap_or_default();
        for ((file, digest, rules, level), nodes) in overriding_patches(c) {
            if before.contains_key(&(file.clone(), digest, rules.clone(), level)) {
                continue;
            }
            let ids = rules.join(", ");
            let attr = rules.iter().map(|r| format!("overrides=\"{r}\"")).collect::<Vec<_>>().join(" ");
            out.push(
                Severity::Warning,
                format!("{}/{}", env.name.value, c.name.value),
                format!("patch `{file}` (at the {level} level, `{attr}`) added or changed"),
                format!(
                    "rule {ids} overridden on purpose for {}: fleetc no longer holds it on these nodes, the patch decides (docs/rules.md)",
                    node_list(&nodes)
                ),
            );
        }
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
        assert_eq!(
            reach(v114, "v1alpha1", &p("machine.udev.rules")),
            Some(Reach::Reboot),
            "a 1.14 node gets the 1.13 document model"
        );
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
