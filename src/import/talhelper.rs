//! A talhelper config (github.com/budimanjojo/talhelper v3.1.16, `pkg/config/config.go`
//! `TalhelperConfig`) read and translated into one fleet: fleet.kdl's text (not yet in the
//! canonical layout), the patch files it names and the report of what was not carried over.
//!
//! talhelper's merge is followed (`pkg/config/nodeconfigs.go` `mergeNodeConfigs`): a node's
//! own `NodeConfigs` field replaces its group's (`controlPlane:` or `worker:`) when it is not
//! empty, except `patches`, `extraManifests` and `certSANs`, which the group's come before
//! (after, for the last two) unless the node sets `override…`. Each node's effective settings
//! are computed first; a setting every node of a pool has alike is written once on the pool,
//! else on each node, so that fleetc's stacking (pool, then node) gives each node what
//! talhelper gave it.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value, json};

use super::env::{Env, substitute_tree};
use super::netdocs::{is_zero, prune, search_domain_as_resolver};
use super::report::Report;
use crate::diag::{Diagnostic, Diagnostics, FileId, Sources, Span, codes};
use crate::emit::talos::owned;
use crate::model::patch::{PatchDocument, read_yaml};
use crate::model::values::is_dns_label;

/// talhelper v3.1.16's Talos version when the config names none (`pkg/config/defaults.go`
/// `LatestTalosVersion`).
const TALHELPER_DEFAULT_TALOS: &str = "v1.13.8";

/// The fields of talhelper's `NodeConfigs` (a node group's, or a node's own).
const NODE_CONFIGS: &[&str] = &[
    "nodeLabels",
    "nodeAnnotations",
    "nodeTaints",
    "machineDisks",
    "machineFiles",
    "disableSearchDomain",
    "kernelModules",
    "nameservers",
    "networkInterfaces",
    "extraManifests",
    "certSANs",
    "patches",
    "talosImageURL",
    "noSchematicValidate",
    "schematic",
    "imageSchematic",
    "machineSpec",
    "ingressFirewall",
    "extensionServices",
    "volumes",
    "userVolumes",
    "filenameTmpl",
];
/// A node's own fields besides its `NodeConfigs`.
const NODE_FIELDS: &[&str] = &[
    "hostname",
    "ipAddress",
    "controlPlane",
    "installDisk",
    "installDiskSelector",
    "ignoreHostname",
    "overridePatches",
    "overrideExtraManifests",
    "overrideMachineCertSANs",
];
const TOP_FIELDS: &[&str] = &[
    "clusterName",
    "talosVersion",
    "kubernetesVersion",
    "endpoint",
    "domain",
    "allowSchedulingOnMasters",
    "allowSchedulingOnControlPlanes",
    "additionalMachineCertSans",
    "additionalApiServerCertSans",
    "inlineManifests",
    "clusterPodNets",
    "clusterSvcNets",
    "cniConfig",
    "patches",
    "nodes",
    "imageFactory",
    "controlPlane",
    "worker",
];

/// What an import produces: fleet.kdl's text and the other files, by relative path.
pub struct Translation {
    /// The fleet's name (talhelper's clusterName).
    pub fleet_name: String,
    /// `talos`, `kubernetes` and `cni`: fleet-level for one config, the environment's for several.
    pub settings: String,
    /// The `schematic` nodes (fleet-level).
    pub schematics: String,
    /// The `environment "…" { … }` node, its first line the head.
    pub environment: String,
    pub files: BTreeMap<String, String>,
    pub report: Report,
}

/// Where one config's translation goes in a fleet of several: the environment names already
/// taken, and whether its files and schematics are put under its environment's name.
pub struct Placement<'a> {
    pub taken: &'a [String],
    pub several: bool,
    pub opts: &'a super::Options,
    /// The `overrides=` a first translation wrote that override nothing (patch path, rule):
    /// `fleetc build` would warn of each as stale, so this translation leaves them out.
    pub needless: &'a BTreeSet<(String, String)>,
}

/// One patch talhelper applies: where it is written in the config, and the string.
#[derive(Clone, PartialEq)]
struct PatchRef {
    origin: String,
    text: String,
}

struct TNode {
    ptr: String,
    hostname: String,
    name: String,
    ip: Option<String>,
    cp: bool,
    install_disk: Option<String>,
    selector: Option<Map<String, Value>>,
    /// The effective NodeConfigs (talhelper's merge), patches left out.
    eff: Map<String, Value>,
    patches: Vec<PatchRef>,
}

/// A node's own `nameservers`, when it has some.
fn nameservers(n: &TNode) -> Option<&Value> {
    n.eff.get("nameservers").filter(|v| !is_zero(v))
}

/// The `nameservers` every node has, when they all have the same.
fn shared_nameservers(nodes: &[TNode]) -> Option<Value> {
    nodes.first().and_then(nameservers).filter(|v| nodes.iter().all(|n| nameservers(n) == Some(*v))).cloned()
}

fn as_bool(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true",
        _ => false,
    }
}

pub(super) fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) => Some(v.to_string()),
        _ => None,
    }
}

/// A KDL string literal.
pub fn q(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub(super) fn yaml_docs(docs: &[Value]) -> String {
    docs.iter().map(|d| serde_saphyr::to_string(d).unwrap_or_default()).collect::<Vec<_>>().join("---\n")
}

struct Ctx<'a> {
    doc: &'a PatchDocument,
    diags: &'a mut Diagnostics,
}

impl Ctx<'_> {
    fn place(&self, ptr: &str) -> Span {
        self.doc.place(ptr)
    }
    fn invalid(&mut self, ptr: &str, message: String, label: &str) {
        let span = self.place(ptr);
        self.diags.push(Diagnostic::new(&codes::IMPORT_INVALID, message).at(span).label(label.to_owned()));
    }
    fn string(&mut self, v: &Value, ptr: &str, field: &str) -> Option<String> {
        match v.pointer(ptr) {
            None | Some(Value::Null) => None,
            Some(x) => match scalar(x) {
                Some(s) => Some(s),
                None => {
                    self.invalid(ptr, format!("`{field}` is not a string"), "talhelper reads a string here");
                    None
                }
            },
        }
    }
    fn list_of_strings(&mut self, v: &Value, ptr: &str, field: &str) -> Vec<String> {
        match v.pointer(ptr) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, x)| {
                    let s = scalar(x);
                    if s.is_none() {
                        self.invalid(
                            &format!("{ptr}/{i}"),
                            format!("an entry of `{field}` is not a string"),
                            "not a string",
                        );
                    }
                    s
                })
                .collect(),
            Some(_) => {
                self.invalid(ptr, format!("`{field}` is not a list"), "talhelper reads a list of strings here");
                Vec::new()
            }
        }
    }
}

/// Reads the config (`cfg` of the run's sources, in `dir`) and translates it; `None` when
/// there were errors (in `diags`).
pub fn translate(
    sources: &mut Sources,
    cfg: FileId,
    dir: &Path,
    env: &Env,
    at: &Placement<'_>,
    diags: &mut Diagnostics,
) -> Option<Translation> {
    let text = sources.get(cfg).text.clone();
    let file_name = sources.get(cfg).name.clone();
    let docs = match read_yaml(cfg, &text) {
        Ok(d) => d,
        Err(crate::model::patch::PatchError::Yaml { span, message }) => {
            diags.push(
                Diagnostic::new(&codes::IMPORT_NOT_TALHELPER, format!("{file_name} is not YAML: {message}"))
                    .at(span)
                    .label("here"),
            );
            return None;
        }
        Err(_) => return None,
    };
    let whole = Span::new(cfg, 0, text.find('\n').unwrap_or(text.len()));
    let Some(doc) = docs.first() else {
        diags.push(
            Diagnostic::new(&codes::IMPORT_NOT_TALHELPER, format!("{file_name} is empty"))
                .at(whole)
                .label("no document"),
        );
        return None;
    };
    let missing: Vec<&str> = ["clusterName", "nodes"].into_iter().filter(|k| doc.value.get(*k).is_none()).collect();
    if !doc.value.is_object() || !missing.is_empty() || docs.len() > 1 {
        let why = if !doc.value.is_object() {
            "its document is not a mapping".to_owned()
        } else if docs.len() > 1 {
            format!("it holds {} YAML documents, and a talhelper config is one", docs.len())
        } else {
            format!("it has no `{}`", missing.join("` and no `"))
        };
        diags.push(
            Diagnostic::new(&codes::IMPORT_NOT_TALHELPER, format!("{file_name} is not a talhelper config: {why}"))
                .at(if docs.len() > 1 { docs[1].span } else { doc.span })
                .label("not a talhelper config"),
        );
        return None;
    }
    let mut value = doc.value.clone();
    let before = diags.error_count();
    substitute_tree(env, &mut value, "", &|p| doc.place(p), diags);
    let mut cx = Ctx { doc, diags };
    let mut report = Report { source: file_name.clone(), ..Report::default() };
    report.env_read.clone_from(&env.read);
    report.env_encrypted.clone_from(&env.encrypted);

    for k in value.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
        if !TOP_FIELDS.contains(&k.as_str()) {
            report.not_carried(
                line(sources, cfg, cx.doc.key_place(&format!("/{k}"))),
                &k,
                "not a talhelper field (talhelper v3.1.16 ignores it too)",
            );
        }
    }

    let cluster_name = cx.string(&value, "/clusterName", "clusterName").unwrap_or_default();
    let talos = cx.string(&value, "/talosVersion", "talosVersion");
    let kubernetes = cx.string(&value, "/kubernetesVersion", "kubernetesVersion");
    let endpoint = cx.string(&value, "/endpoint", "endpoint");
    let Some(Value::Array(raw_nodes)) = value.get("nodes").cloned() else {
        cx.invalid("/nodes", "`nodes` is not a list".into(), "talhelper reads a list of nodes here");
        return None;
    };

    let group =
        |key: &str| -> Map<String, Value> { value.get(key).and_then(Value::as_object).cloned().unwrap_or_default() };
    let (cp_group, worker_group) = (group("controlPlane"), group("worker"));
    for (g, m) in [("controlPlane", &cp_group), ("worker", &worker_group)] {
        if value.get(g).is_some_and(|v| !v.is_object() && !v.is_null()) {
            cx.invalid(&format!("/{g}"), format!("`{g}` is not a mapping"), "talhelper reads a node group here");
        }
        for k in m.keys() {
            if !NODE_CONFIGS.contains(&k.as_str()) {
                report.not_carried(
                    line(sources, cfg, cx.doc.key_place(&format!("/{g}/{k}"))),
                    &format!("{g}.{k}"),
                    "not a field of talhelper's node groups (ignored by talhelper too)",
                );
            }
        }
    }

    let mut nodes = Vec::new();
    for (i, n) in raw_nodes.iter().enumerate() {
        let ptr = format!("/nodes/{i}");
        let Some(m) = n.as_object() else {
            cx.invalid(&ptr, "a node is not a mapping".into(), "talhelper reads `hostname`, `ipAddress`, … here");
            continue;
        };
        nodes.extend(read_node(&mut cx, &value, ptr, m, [&cp_group, &worker_group], &mut report, sources));
    }
    let global_patches: Vec<PatchRef> = cx
        .list_of_strings(&value, "/patches", "patches")
        .into_iter()
        .enumerate()
        .map(|(j, p)| PatchRef { origin: format!("/patches/{j}"), text: p })
        .collect();

    if nodes.is_empty() && cx.diags.error_count() == before {
        cx.invalid("/nodes", "`nodes` is empty".into(), "talhelper requires at least one node");
    }
    let endpoint_parsed = endpoint.as_deref().and_then(|e| {
        let parsed = parse_endpoint(e);
        if parsed.is_none() {
            cx.invalid("/endpoint", format!("`{e}` is not a URL"), "talhelper reads `https://<host>:<port>` here");
        }
        parsed
    });
    if endpoint.is_none() {
        cx.invalid("", "the config has no `endpoint`".into(), "talhelper requires the cluster's endpoint");
    }
    if cx.diags.error_count() > before {
        return None;
    }
    let Ctx { diags, .. } = cx;
    let (ep_host, ep_port) = endpoint_parsed.unwrap_or_default();

    // Cluster name: the hostnames' common `<prefix>-`, so that fleetc's `<cluster>-<node>`
    // keeps every hostname; else talhelper's clusterName, and the hostnames change.
    // A hostname's first label is its name in fleet.kdl (fleetc's hostnames are labels).
    for n in &mut nodes {
        n.name = n.hostname.split('.').next().unwrap_or_default().to_ascii_lowercase();
    }
    let cluster = common_prefix(&nodes).unwrap_or_else(|| dns_label(&cluster_name));
    for n in &mut nodes {
        if let Some(rest) = n.name.strip_prefix(&format!("{cluster}-"))
            && is_dns_label(rest)
        {
            n.name = rest.to_owned();
        }
    }
    for n in nodes.iter().filter(|n| n.hostname != format!("{cluster}-{}", n.name)) {
        report.deliberate(
            line(sources, cfg, doc.place(&format!("{}/hostname", n.ptr))),
            &format!("nodes[{}].hostname", n.hostname),
            &format!(
                "fleetc names a node `<cluster>-<name>`: the hostname becomes `{cluster}-{}` (a new Kubernetes Node: drain and delete the old one, or rename the node in fleet.kdl's cluster before you apply to a running cluster)",
                n.name
            ),
        );
    }
    if cluster != cluster_name {
        report.deliberate(
            line(sources, cfg, doc.place("/clusterName")),
            "clusterName",
            &format!(
                "the cluster is `{cluster}` (the hostnames' common prefix, so that they stay as they are): Talos's `cluster.clusterName` becomes `{cluster}` instead of `{cluster_name}`"
            ),
        );
    }

    read_machine_files(&mut nodes, doc, dir, env, diags);
    if diags.has_errors() {
        return None;
    }
    let mut env_name = dns_label(&cluster_name);
    let mut n = 1;
    while at.taken.contains(&env_name) {
        n += 1;
        env_name = format!("{}-{n}", dns_label(&cluster_name));
    }
    let prefix = if at.several { format!("{env_name}/") } else { String::new() };
    let talos_at = talos.as_ref().map_or(0, |_| line(sources, cfg, doc.key_place("/talosVersion")));
    let (talos_kdl, talos) = super::talos_version(
        talos.as_deref(),
        (
            TALHELPER_DEFAULT_TALOS,
            &format!("talconfig names no talosVersion: talhelper v3.1.16 uses {TALHELPER_DEFAULT_TALOS}."),
        ),
        talos_at,
        at.opts,
        &mut report,
    );
    let mut w = Writer {
        sources,
        cfg,
        dir,
        env,
        report,
        files: BTreeMap::new(),
        diags,
        prefix,
        env_name,
        disk_placeholder: false,
        multidoc_network: multidoc_network(&talos),
        resolver_patches: multidoc_network(&talos) && nodes.iter().any(|n| nameservers(n).is_some()),
        shared_nameservers: shared_nameservers(&nodes).filter(|_| multidoc_network(&talos)),
        needless: at.needless,
        given_sans: Vec::new(),
    };
    let (settings, schematics, environment) = w.fleet(
        &value,
        &cluster_name,
        &cluster,
        &talos_kdl,
        kubernetes.as_deref(),
        (&ep_host, ep_port),
        &nodes,
        &global_patches,
    );
    if w.diags.has_errors() {
        return None;
    }
    let Writer { files, report, .. } = w;
    Some(Translation { fleet_name: dns_label(&cluster_name), settings, schematics, environment, files, report })
}

/// One node of the config (at `ptr`), with its settings merged with its group's as talhelper
/// merges them; `None` (reported) when it has no hostname.
fn read_node(
    cx: &mut Ctx<'_>,
    value: &Value,
    ptr: String,
    m: &Map<String, Value>,
    groups: [&Map<String, Value>; 2],
    report: &mut Report,
    sources: &Sources,
) -> Option<TNode> {
    let Some(hostname) = cx.string(value, &format!("{ptr}/hostname"), "hostname") else {
        cx.invalid(&ptr, "a node has no `hostname`".into(), "talhelper requires one per node");
        return None;
    };
    for k in m.keys() {
        if !NODE_CONFIGS.contains(&k.as_str()) && !NODE_FIELDS.contains(&k.as_str()) {
            report.not_carried(
                line(sources, cx.doc.span.file, cx.doc.key_place(&format!("{ptr}/{k}"))),
                &format!("nodes[{hostname}].{k}"),
                "not a talhelper node field (ignored by talhelper too)",
            );
        }
    }
    let cp = as_bool(m.get("controlPlane"));
    let grp = if cp { groups[0] } else { groups[1] };
    let gname = if cp { "controlPlane" } else { "worker" };
    let mut eff = Map::new();
    for f in NODE_CONFIGS.iter().filter(|f| **f != "patches") {
        let own = m.get(*f).filter(|v| !is_zero(v));
        let theirs = grp.get(*f).filter(|v| !is_zero(v));
        let appended = matches!(*f, "extraManifests" | "certSANs");
        let over = match *f {
            "extraManifests" => as_bool(m.get("overrideExtraManifests")),
            "certSANs" => as_bool(m.get("overrideMachineCertSANs")),
            _ => false,
        };
        let v = match (own, theirs) {
            (Some(Value::Array(a)), Some(Value::Array(b))) if appended && !over => {
                Value::Array(a.iter().chain(b.iter()).cloned().collect())
            }
            (Some(o), _) => o.clone(),
            (None, Some(t)) => t.clone(),
            (None, None) => continue,
        };
        eff.insert((*f).to_owned(), v);
    }
    let mut patches = Vec::new();
    if !as_bool(m.get("overridePatches")) {
        for (j, p) in cx.list_of_strings(value, &format!("/{gname}/patches"), "patches").into_iter().enumerate() {
            patches.push(PatchRef { origin: format!("/{gname}/patches/{j}"), text: p });
        }
    }
    for (j, p) in cx.list_of_strings(value, &format!("{ptr}/patches"), "patches").into_iter().enumerate() {
        patches.push(PatchRef { origin: format!("{ptr}/patches/{j}"), text: p });
    }
    let ip = cx.string(value, &format!("{ptr}/ipAddress"), "ipAddress");
    let install_disk = cx.string(value, &format!("{ptr}/installDisk"), "installDisk");
    let selector = m.get("installDiskSelector").and_then(Value::as_object).cloned();
    if as_bool(m.get("ignoreHostname")) {
        report.deliberate(
            line(sources, cx.doc.span.file, cx.doc.key_place(&format!("{ptr}/ignoreHostname"))),
            &format!("nodes[{hostname}].ignoreHostname"),
            "fleetc always names the node (`<cluster>-<node>`, its HostnameConfig); the hostname is not left to DHCP",
        );
    }
    Some(TNode { ptr, name: hostname.clone(), hostname, ip, cp, install_disk, selector, eff, patches })
}

/// A machine file's `content: "@<path>"` is that file's text, env-substituted unless
/// `skipEnvsubst` (talhelper v3.1.16 `pkg/config/loader.go`, `SubstituteFileContent`).
fn read_machine_files(nodes: &mut [TNode], doc: &PatchDocument, dir: &Path, env: &Env, diags: &mut Diagnostics) {
    for n in nodes.iter_mut() {
        let Some(Value::Array(files)) = n.eff.get_mut("machineFiles") else { continue };
        for f in files.iter_mut() {
            let Some(rel) = f.get("content").and_then(Value::as_str).and_then(|c| c.strip_prefix('@')) else {
                continue;
            };
            let path = dir.join(rel.trim());
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let skip = as_bool(f.get("skipEnvsubst"));
                    let text = if skip { Ok(text) } else { substitute_lines(env, &text) };
                    match text {
                        Ok(t) => f["content"] = Value::String(t),
                        Err(name) => diags.push(
                            Diagnostic::new(
                                &codes::IMPORT_UNSET_VARIABLE,
                                format!("`${{{name}}}` in {rel} is not set by any env file read"),
                            )
                            .at(doc.place(&format!("{}/machineFiles", n.ptr)))
                            .label(format!("`{name}` is unset in the file this names"))
                            .help(env.unset_help(&name)),
                        ),
                    }
                }
                Err(e) => diags.push(
                    Diagnostic::new(
                        &codes::IMPORT_FILE_UNREADABLE,
                        format!("cannot read the machine file `{rel}`: {e}"),
                    )
                    .at(doc.place(&format!("{}/machineFiles", n.ptr)))
                    .label(format!("{} does not read", path.display())),
                ),
            }
        }
    }
}

pub(super) fn line(sources: &Sources, file: FileId, span: Span) -> usize {
    sources.line_col(file, span.start).0
}

pub(super) fn dns_label(s: &str) -> String {
    let mut out: String =
        s.to_ascii_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    out = out.trim_matches('-').to_owned();
    out.truncate(63);
    if out.is_empty() { "main".to_owned() } else { out }
}

/// The longest `<p>` such that every node's name is `<p>-<a DNS label>`.
fn common_prefix(nodes: &[TNode]) -> Option<String> {
    common_name_prefix(&nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>())
}

/// The longest `<p>` such that every name is `<p>-<a DNS label>`.
pub(super) fn common_name_prefix(names: &[&str]) -> Option<String> {
    let first = names.first()?;
    let mut best = None;
    for (i, c) in first.char_indices() {
        if c != '-' || i == 0 {
            continue;
        }
        let p = &first[..i];
        let ok = names.iter().all(|n| n.strip_prefix(p).and_then(|r| r.strip_prefix('-')).is_some_and(is_dns_label));
        if ok && is_dns_label(p) {
            best = Some(p.to_owned());
        }
    }
    best
}

/// `https://host:port` → (host, port).
pub(super) fn parse_endpoint(e: &str) -> Option<(String, u16)> {
    let rest = e.strip_prefix("https://").or_else(|| e.strip_prefix("http://"))?;
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.contains('/') {
        return None;
    }
    if let Some(v6) = rest.strip_prefix('[') {
        let (h, p) = v6.split_once(']')?;
        let port = p.strip_prefix(':').map_or(Some(6443), |p| p.parse().ok())?;
        return Some((h.to_owned(), port));
    }
    match rest.rsplit_once(':') {
        Some((h, p)) => Some((h.to_owned(), p.parse().ok()?)),
        None => Some((rest.to_owned(), 6443)),
    }
}

struct Writer<'a> {
    sources: &'a mut Sources,
    cfg: FileId,
    dir: &'a Path,
    env: &'a Env,
    report: Report,
    files: BTreeMap<String, String>,
    diags: &'a mut Diagnostics,
    /// Put before every file's path (`<env>/` in a fleet of several configs).
    prefix: String,
    env_name: String,
    /// Whether a node's install disk waits for its serial (the report's row on the selector is
    /// written once).
    disk_placeholder: bool,
    /// Whether talhelper writes the interfaces as multi-document network configuration (Talos
    /// ≥ 1.12, `netdocs`).
    multidoc_network: bool,
    /// Whether fleetc writes a `ResolverConfig` for a node of the cluster (Talos ≥ 1.12, a node
    /// with `nameservers`): a patch's `machine.network.disableSearchDomain` moves into it.
    resolver_patches: bool,
    /// The `nameservers` every node of the cluster has, when they are the same (Talos ≥ 1.12):
    /// a patch's `machine.network.nameservers` equal to them is said already.
    shared_nameservers: Option<Value>,
    /// [`Placement::needless`].
    needless: &'a BTreeSet<(String, String)>,
    /// The names fleet.kdl gives every machine's certificate of the cluster (`cert-sans` and
    /// the endpoint): a node's `certSANs` among them need no patch.
    given_sans: Vec<String>,
}

/// A worker pool's key: its schematic and whether it boots with SecureBoot.
type PoolKey = (Option<String>, bool);

/// A pool as fleet.kdl will hold it.
struct PoolOut<'n> {
    head: String,
    nodes: Vec<&'n TNode>,
    schematic: Option<String>,
    secure_boot: bool,
}

impl Writer<'_> {
    fn line(&self, ptr: &str) -> usize {
        let doc_place = read_yaml(self.cfg, &self.sources.get(self.cfg).text)
            .ok()
            .and_then(|d| d.into_iter().next())
            .map(|d| d.place(ptr));
        doc_place.map_or(1, |s| line(self.sources, self.cfg, s))
    }

    #[allow(clippy::too_many_arguments)]
    fn fleet(
        &mut self,
        top: &Value,
        cluster_name: &str,
        cluster: &str,
        talos: &str,
        kubernetes: Option<&str>,
        (ep_host, ep_port): (&str, u16),
        nodes: &[TNode],
        global_patches: &[PatchRef],
    ) -> (String, String, String) {
        let mut k = talos.to_owned();
        match kubernetes {
            Some(v) => k.push_str(&format!("kubernetes {}\n", q(v.trim_start_matches('v')))),
            None => {
                k.push_str("// talconfig names no kubernetesVersion (talhelper requires one). CHANGE\nkubernetes \"CHANGE-ME\"\n");
                self.report.placeholder(
                    0,
                    "kubernetesVersion",
                    "the Kubernetes version: talhelper requires it, and the config names none",
                );
            }
        }
        // Talos enables discovery by default, and talhelper leaves it; fleetc's is off (R21).
        self.report.deliberate(
            0,
            "cluster.discovery.enabled",
            "Talos turns discovery on by default and talhelper keeps it; fleetc turns it off for a cluster with a private endpoint (R21, `fleet::discovery::private-cluster`)",
        );
        self.report.deliberate(
            0,
            "machine.install.image",
            "talhelper installs `factory.talos.dev/installer/<schematic id>:<talos>`; fleetc the same schematic's metal installer, `factory.talos.dev/metal-installer/<id>:<talos>` (docs/metal.md)",
        );
        self.owned_rows();
        let cni = top.pointer("/cniConfig/name").and_then(Value::as_str);
        match cni {
            None | Some("flannel") => {}
            Some("none") => k.push_str(
                "// talconfig: cniConfig.name: none (the CNI is installed after the cluster).\ncni \"none\"\n",
            ),
            Some(other) => {
                let l = self.line("/cniConfig");
                self.report.not_carried(
                    l,
                    "cniConfig",
                    &format!("a `{other}` CNI from URLs: fleetc's CNI is `cni \"default\"`, `\"none\"` or a pinned add-on (docs/addons.md); the cluster gets `cni \"none\"` here"),
                );
                k.push_str(&format!("// talconfig: cniConfig.name: {other} (IMPORT-REPORT.md).\ncni \"none\"\n"));
            }
        }

        let settings = std::mem::take(&mut k);
        // Schematics, by content, named in order of first use.
        let mut schematics: Vec<(Value, String)> = Vec::new();
        for n in nodes {
            let s = n.eff.get("schematic").cloned().unwrap_or(Value::Null);
            if !schematics.iter().any(|(v, _)| *v == s) {
                let name = if s.is_null() {
                    "vanilla".to_owned()
                } else if schematics.iter().all(|(v, _)| v.is_null()) {
                    "base".to_owned()
                } else {
                    dns_label(&n.name)
                };
                let name = if self.prefix.is_empty() { name } else { format!("{}-{name}", self.env_name) };
                schematics.push((s, name));
            }
        }
        for (s, name) in &schematics {
            k.push_str(&self.schematic(s, name));
        }
        let schematic_text = std::mem::take(&mut k);

        let env_name = self.env_name.clone();
        let _ = cluster_name;
        k.push_str(&format!("environment {} {{\n", q(&env_name)));
        k.push_str(
            "// talhelper configures machines that exist (talosctl apply-config): bare metal to fleetc.\nmetal\n",
        );
        let (network, derived) = self.network(nodes, ep_host);
        match network {
            Some(n) => {
                k.push_str(&format!("// {derived}\nnetwork {}\nadmin-ranges {}\n", q(&n), q(&n)));
            }
            None => {
                k.push_str("// No IPv4 node address to derive the network from (fleetc is IPv4 only). CHANGE\nnetwork \"CHANGE-ME\"\n");
                self.report.placeholder(
                    self.line("/nodes"),
                    "environment network",
                    "the nodes' IPv4 network: no node has an IPv4 address, and fleetc models IPv4 only",
                );
            }
        }
        k.push_str(&format!("cluster {} {{\n", q(cluster)));
        self.report.target = format!("{env_name}/{cluster}");
        // Endpoint.
        let vip = self.vip(nodes);
        let ep_ip = ep_host.parse::<Ipv4Addr>().ok();
        let port = if ep_port == 6443 { String::new() } else { format!(" port={ep_port}") };
        let mut sans: Vec<String> = Vec::new();
        match (ep_ip, vip.clone()) {
            (Some(ip), _) => {
                k.push_str(&format!("endpoint address={}{port}\n", q(&ip.to_string())));
                // A one-node control plane keeps its own address as the endpoint
                // (`Cluster::endpoint_node`); any other node's address is refused.
                let sole_cp = nodes.iter().filter(|n| n.cp).count() == 1;
                if let Some(n) = nodes.iter().find(|n| first_v4(n.ip.as_deref()) == Some(ip) && !(n.cp && sole_cp)) {
                    self.report.deliberate(
                        self.line("/endpoint"),
                        "endpoint",
                        &format!("the endpoint is node `{}`'s own address; on metal fleetc's endpoint is a virtual IP the control plane shares (Layer2VIPConfig), or the node's own address only when it is a one-node control plane: `fleetc check` refuses it until `endpoint address=` names a free address of the network", n.hostname),
                    );
                }
            }
            (None, Some(v)) => {
                k.push_str(&format!(
                    "// talconfig's endpoint is {ep_host}; fleetc's endpoint is an address: the control plane's VIP.\nendpoint address={}{port}\n",
                    q(&v),
                ));
                sans.push(ep_host.to_owned());
                self.report.deliberate(self.line("/endpoint"), "endpoint", &format!("`{ep_host}` is a name; fleetc's endpoint is the VIP `{v}`, and `{ep_host}` is kept as a certificate SAN"));
            }
            // A name no interface gives a VIP: the user's DNS or load balancer resolves it,
            // as talhelper's nodes use it (docs/metal.md, "An endpoint by name").
            (None, None) if crate::model::values::is_dns_name(ep_host) => {
                k.push_str(&format!(
                    "// talconfig's endpoint is the name {ep_host}, which no interface holds as a VIP: your DNS or\n// load balancer resolves it to the control plane, and fleetc holds no address for it.\nendpoint name={}{port}\n",
                    q(ep_host)
                ));
            }
            (None, None) => {
                k.push_str(&format!(
                    "// talconfig's endpoint is {ep_host}, neither an address nor a DNS name. CHANGE\nendpoint address=\"CHANGE-ME\"{port}\n"
                ));
                sans.push(ep_host.to_owned());
                self.report.placeholder(self.line("/endpoint"), "endpoint", &format!("the address behind `{ep_host}` (a VIP or a load balancer): fleetc's endpoint is an IPv4 address or a DNS name"));
            }
        }
        for s in
            top.get("additionalApiServerCertSans").and_then(Value::as_array).into_iter().flatten().filter_map(scalar)
        {
            if !sans.contains(&s) {
                sans.push(s);
            }
        }
        // fleetc adds the endpoint itself (`fleet::talos::redundant-cert-san`).
        let endpoint_address =
            ep_ip.map(|i| i.to_string()).or_else(|| vip.clone()).or_else(|| Some(ep_host.to_owned()));
        sans.retain(|s| Some(s) != endpoint_address.as_ref());
        if !sans.is_empty() {
            k.push_str(&format!("cert-sans {}\n", sans.iter().map(|s| q(s)).collect::<Vec<_>>().join(" ")));
        }
        let cps = nodes.iter().filter(|n| n.cp).count();
        if cps == 1 {
            k.push_str("// One control-plane node, as in the talconfig (R29 asks three; a lab may have one).\nsingle-node #true\n");
        }
        for (key, setting) in [("clusterPodNets", "pod-cidr"), ("clusterSvcNets", "service-cidr")] {
            let nets: Vec<String> = top
                .get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(scalar).collect())
                .unwrap_or_default();
            let v4: Vec<&String> = nets.iter().filter(|n| !n.contains(':')).collect();
            if let Some(first) = v4.first() {
                k.push_str(&format!("{setting} {}\n", q(first)));
            }
            if nets.len() > 1 || (v4.is_empty() && !nets.is_empty()) {
                let l = self.line(&format!("/{key}"));
                self.report.not_carried(
                    l,
                    key,
                    &format!("{} (IPv6 or a second network): fleetc models one IPv4 `{setting}`", nets.join(", ")),
                );
            }
        }
        // The names every machine's certificate carries from fleet.kdl (`cert-sans` and the
        // endpoint, emit::talos `machine_cert_sans`).
        let given: Vec<String> = sans.iter().cloned().chain(endpoint_address).collect();
        let cluster_patches = self.cluster_patches(top, nodes, global_patches, &given);
        self.given_sans = given;
        for p in &cluster_patches {
            k.push_str(&self.patch_line(p));
        }

        let pools = self.pools(nodes, &schematics);
        for p in &pools {
            k.push_str(&self.pool(p));
        }
        k.push_str(&format!(
            "// The cluster's Talos secrets bundle (R14): talhelper's talsecret.sops.yaml, decrypted with\n// `sops -d`, then `fleetc secrets import {env_name}/{cluster} talos-secrets <file>`.\nsealed \"talos-secrets\"\n"
        ));
        k.push_str("}\n}\n");
        (settings, schematic_text, k)
    }

    /// The pools: the control plane (its most common schematic), and one worker pool per
    /// (schematic, SecureBoot), the first `workers`.
    fn pools<'n>(&mut self, nodes: &'n [TNode], schematics: &[(Value, String)]) -> Vec<PoolOut<'n>> {
        let default_schematic = |ns: &[&TNode]| -> Option<String> {
            let mut count: BTreeMap<String, usize> = BTreeMap::new();
            for n in ns {
                let s = n.eff.get("schematic").cloned().unwrap_or(Value::Null);
                if let Some((_, name)) = schematics.iter().find(|(v, _)| *v == s) {
                    *count.entry(name.clone()).or_default() += 1;
                }
            }
            count.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|(n, _)| n)
        };
        let schematic_of = |n: &TNode| -> Option<String> {
            let s = n.eff.get("schematic").cloned().unwrap_or(Value::Null);
            schematics.iter().find(|(v, _)| *v == s).map(|(_, name)| name.clone())
        };
        let secure = |n: &TNode| as_bool(n.eff.get("machineSpec").and_then(|m| m.get("secureboot")));
        let mut pools: Vec<PoolOut> = Vec::new();
        let cp_nodes: Vec<&TNode> = nodes.iter().filter(|n| n.cp).collect();
        if !cp_nodes.is_empty() {
            let s = default_schematic(&cp_nodes);
            for n in &cp_nodes {
                if schematic_of(n) != s {
                    self.report.deliberate(
                        self.line(&format!("{}/schematic", n.ptr)),
                        &format!("nodes[{}].schematic", n.hostname),
                        &format!("fleetc has one control-plane pool and a schematic per pool: this node runs the pool's schematic `{}`", s.as_deref().unwrap_or("(none)")),
                    );
                }
            }
            let sb = cp_nodes.iter().all(|n| secure(n));
            pools.push(PoolOut { head: "control-plane".into(), nodes: cp_nodes, schematic: s, secure_boot: sb });
        }
        // Workers: one pool per (schematic, SecureBoot), the first `workers`.
        let mut groups: Vec<(PoolKey, Vec<&TNode>)> = Vec::new();
        for n in nodes.iter().filter(|n| !n.cp) {
            let key = (schematic_of(n), secure(n));
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(n),
                None => groups.push((key, vec![n])),
            }
        }
        for (i, ((s, sb), ns)) in groups.into_iter().enumerate() {
            let name = if i == 0 {
                "workers".to_owned()
            } else {
                format!("workers-{}", s.clone().unwrap_or_else(|| "plain".into()))
            };
            pools.push(PoolOut { head: format!("pool {}", q(&name)), nodes: ns, schematic: s, secure_boot: sb });
        }
        pools
    }

    /// The cluster's patches: the cluster-wide fields talhelper writes into every node's config
    /// that fleet.kdl has no property for, then talhelper's global patches. `given` are the
    /// certificate names fleet.kdl gives every machine already.
    fn cluster_patches(
        &mut self,
        top: &Value,
        nodes: &[TNode],
        global_patches: &[PatchRef],
        given: &[String],
    ) -> Vec<String> {
        // Cluster-wide fields talhelper writes into every node's config.
        let mut cluster_doc = Map::new();
        let mut fields = Vec::new();
        if let Some(d) = top.get("domain").and_then(scalar) {
            cluster_doc.insert("cluster".into(), json!({"network": {"dnsDomain": d}}));
            fields.push("domain");
        }
        // `additionalMachineCertSans` is every node's `machine.certSANs` under talhelper
        // (talhelper v3.1.16 `pkg/talos/input.go` l.74 sets the generator's
        // `AdditionalMachineCertSANs`, which siderolabs/talos pkg/machinery v1.13.9
        // `config/generate/init.go` and `worker.go` write as `MachineCertSANs`). fleetc's list
        // holds fleet.kdl's `cert-sans` and endpoint already; the other names stay a patch of
        // the list, which Talos appends to fleetc's (a patch may add to it: owned.rs
        // `ADDITIVE_LISTS`).
        let mut machine_sans: Vec<String> = Vec::new();
        for s in top.get("additionalMachineCertSans").and_then(Value::as_array).into_iter().flatten().filter_map(scalar)
        {
            if !given.contains(&s) && !machine_sans.contains(&s) {
                machine_sans.push(s);
            }
        }
        if !machine_sans.is_empty() {
            cluster_doc.insert("machine".into(), json!({"certSANs": machine_sans}));
            fields.push("additionalMachineCertSans");
        }
        let sched = as_bool(top.get("allowSchedulingOnControlPlanes")) || as_bool(top.get("allowSchedulingOnMasters"));
        let has_workers = nodes.iter().any(|n| !n.cp);
        if sched && has_workers {
            let l = self.line("/allowSchedulingOnControlPlanes");
            self.report.deliberate(l, "allowSchedulingOnControlPlanes", "fleetc lets the control plane run workloads only when the cluster has no worker pool (an owned field, `/cluster/allowSchedulingOnControlPlanes`)");
        } else if !sched && !has_workers {
            self.report.deliberate(0, "allowSchedulingOnControlPlanes", "the cluster has no worker: fleetc lets its control plane run workloads (talhelper leaves them off unless asked)");
        }
        for (key, why) in [
            (
                "inlineManifests",
                "inline manifests are fleetc's (`addons`, an owned field `/cluster/inlineManifests`): deliver them with Argo CD (`app`) or pin them as an add-on",
            ),
            (
                "imageFactory",
                "fleetc's installer is `factory.talos.dev/metal-installer/<schematic id>:<talos>` from the schematic; another factory is not modeled",
            ),
        ] {
            if top.get(key).is_some_and(|v| !is_zero(v)) {
                let l = self.line(&format!("/{key}"));
                self.report.not_carried(l, key, why);
            }
        }
        let mut cluster_patches = Vec::new();
        if !cluster_doc.is_empty() {
            let text = self.generated_header(&format!("the cluster-wide fields ({})", fields.join(", ")))
                + &yaml_docs(&[Value::Object(cluster_doc)]);
            cluster_patches.push(self.put("patches/talhelper/cluster.yaml", text));
        }
        for p in global_patches {
            if let Some(path) = self.patch_file(p, "cluster") {
                cluster_patches.push(path);
            }
        }
        if !global_patches.is_empty() && nodes.iter().any(|n| !n.patches.is_empty()) {
            self.report.deliberate(
                self.line("/patches"),
                "patches (order)",
                "talhelper applies the global `patches` after the node groups' and nodes' own (talhelper v3.1.16 `pkg/generate/config.go` l.107-121); fleetc applies a cluster's patches first: the configs differ only where a global patch and a node's patch set the same field",
            );
        }
        cluster_patches
    }

    /// Adds a file at `path` under this config's prefix and returns its full path.
    fn put(&mut self, path: &str, text: String) -> String {
        self.put_at(format!("{}{path}", self.prefix), text)
    }

    /// Adds a file at its full path and returns it.
    fn put_at(&mut self, path: String, text: String) -> String {
        self.files.insert(path.clone(), text);
        path
    }

    /// The `patch` line of a file the import wrote. A patch that sets a field fleetc writes by
    /// a rule a patch may override (`model::patch::OVERRIDABLE`: R15, R16, R17, R18, R21) gets
    /// `overrides=` with those rules, so that it keeps doing what it did under talhelper (which
    /// applied it whole) and `fleetc build` warns of the override instead of refusing the
    /// patch; the report lists each (docs/import.md, "What maps to what").
    fn patch_line(&mut self, path: &str) -> String {
        let line = self.patch_line_alone(path);
        if !(self.multidoc_network && self.files.get(path).is_some_and(|t| kernel_args_without_grub_flag(t))) {
            return line;
        }
        // Talos ≥ 1.12 generates `machine.install.grubUseUKICmdline: true` and refuses
        // `extraKernelArgs` beside it on bare metal (siderolabs/talos v1.12.6
        // pkg/machinery/config/types/v1alpha1/v1alpha1_validation.go l.114-116;
        // `fleet::talos::patch-kernel-args-uki`), which talhelper's genconfig refuses too. Nodes
        // installed before 1.12 run without the flag, GRUB booting with the config's arguments:
        // the import keeps them so, with the flag off beside the patch.
        let grub = self.put(
            GRUB_PATCH,
            format!(
                "# Written by `fleetc import talhelper` from {}: Talos 1.12 and later generate\n# `grubUseUKICmdline: true` and refuse `machine.install.extraKernelArgs` beside it; applied after\n# each patch that sets kernel arguments (IMPORT-REPORT.md). Edit freely: it is a patch.\nmachine:\n  install:\n    grubUseUKICmdline: false\n",
                self.report.source
            ),
        );
        self.report.deliberate(
            0,
            "machine.install.grubUseUKICmdline",
            &format!("`false` beside `{path}`, which sets `machine.install.extraKernelArgs`: Talos 1.12 and later generate `true` and refuse the arguments beside it on bare metal (`fleet::talos::patch-kernel-args-uki`; talhelper genconfig refuses the config at 1.12 for it); `false` keeps GRUB booting with the config's arguments, as nodes installed before 1.12 do. To move the arguments into the schematic instead (`kernel-arg`), drop `{grub}` and the arguments from the patch"),
        );
        format!(
            "{line}// Talos ≥ 1.12 refuses the patch's extraKernelArgs beside the UKI command line (IMPORT-REPORT.md).\npatch {}\n",
            q(&grub)
        )
    }

    /// [`Writer::patch_line`] without the flag patch.
    fn patch_line_alone(&mut self, path: &str) -> String {
        let mut rules = self.files.get(path).map(|t| overridden_rules(t)).unwrap_or_default();
        rules.retain(|(r, _)| !self.needless.contains(&(path.to_owned(), (*r).to_owned())));
        if rules.is_empty() {
            return format!("patch {}\n", q(path));
        }
        let list = rules.iter().map(|(r, _)| *r).collect::<Vec<_>>().join(",");
        for (rule, fields) in &rules {
            self.report.deliberate(
                0,
                &format!("{path} ({rule})"),
                &format!(
                    "the patch sets {}, which fleetc writes by {rule}; talhelper applied it as written, so the import keeps it with `overrides=\"{rule}\"` (`fleetc build` warns of the override; remove it to let fleetc's rule decide)",
                    fields.join(", ")
                ),
            );
        }
        format!(
            "// The patch sets fields fleetc writes by {list}: kept as talhelper applied it (IMPORT-REPORT.md).\npatch {} overrides={}\n",
            q(path),
            q(&list)
        )
    }

    fn generated_header(&self, what: &str) -> String {
        format!(
            "# Written by `fleetc import talhelper` from {}: {what},\n# as talhelper v3.1.16 writes them into the machine config. Edit freely: it is a patch.\n",
            self.report.source
        )
    }

    fn schematic(&mut self, s: &Value, name: &str) -> String {
        schematic_kdl(s, name, &mut self.report)
    }

    /// The environment's network: the prefix of the links that carry the node addresses
    /// (at most /24), widened until it holds every node address and the endpoint.
    fn network(&self, nodes: &[TNode], ep_host: &str) -> (Option<String>, String) {
        let mut addrs: Vec<Ipv4Addr> = nodes.iter().filter_map(|n| first_v4(n.ip.as_deref())).collect();
        if addrs.is_empty() {
            return (None, String::new());
        }
        if let Ok(ep) = ep_host.parse::<Ipv4Addr>() {
            addrs.push(ep);
        }
        let mut prefix = 24u32;
        let mut from_links = false;
        for n in nodes {
            let ip = first_v4(n.ip.as_deref());
            for a in n.eff.get("networkInterfaces").and_then(Value::as_array).into_iter().flatten() {
                for addr in a.get("addresses").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
                {
                    if let Some((h, p)) = addr.split_once('/')
                        && h.parse::<Ipv4Addr>().ok() == ip
                        && let Ok(p) = p.parse::<u32>()
                    {
                        prefix = prefix.min(p);
                        from_links = true;
                    }
                }
            }
        }
        let mask = |p: u32| if p == 0 { 0 } else { u32::MAX << (32 - p) };
        let base = u32::from(addrs[0]);
        while prefix > 0 && addrs.iter().any(|a| u32::from(*a) & mask(prefix) != base & mask(prefix)) {
            prefix -= 1;
        }
        let net = Ipv4Addr::from(base & mask(prefix));
        let why = if from_links {
            "The nodes' network: their interfaces' prefix, holding every node and the endpoint."
        } else {
            "The nodes' network, from their addresses (the talconfig states none): check it."
        };
        (Some(format!("{net}/{prefix}")), why.to_owned())
    }

    fn vip(&self, nodes: &[TNode]) -> Option<String> {
        for n in nodes.iter().filter(|n| n.cp) {
            for a in n.eff.get("networkInterfaces").and_then(Value::as_array).into_iter().flatten() {
                if let Some(ip) = a.pointer("/vip/ip").and_then(Value::as_str) {
                    return Some(ip.to_owned());
                }
                for v in a.get("vlans").and_then(Value::as_array).into_iter().flatten() {
                    if let Some(ip) = v.pointer("/vip/ip").and_then(Value::as_str) {
                        return Some(ip.to_owned());
                    }
                }
            }
        }
        None
    }

    /// Writes one of talhelper's patches as a file of the fleet and returns its path; `None`
    /// (reported) for one that cannot be carried over.
    fn patch_file(&mut self, p: &PatchRef, level: &str) -> Option<String> {
        let l = self.line(&p.origin);
        if let Some(rel) = p.text.strip_prefix('@') {
            let rel = rel.trim();
            let src = self.dir.join(rel);
            let text = match std::fs::read_to_string(&src) {
                Ok(t) => t,
                Err(e) => {
                    let span = read_yaml(self.cfg, &self.sources.get(self.cfg).text)
                        .ok()
                        .and_then(|d| d.into_iter().next())
                        .map_or(Span::new(self.cfg, 0, 0), |d| d.place(&p.origin));
                    self.diags.push(
                        Diagnostic::new(&codes::IMPORT_FILE_UNREADABLE, format!("cannot read the patch `{rel}`: {e}"))
                            .at(span)
                            .label(format!("{} does not read", src.display())),
                    );
                    return None;
                }
            };
            let dest = format!("{}{}", self.prefix, fleet_path(rel));
            if text.contains("sops:") && text.contains("ENC[") {
                self.report.not_carried(l, &format!("patch {rel}"), "SOPS-encrypted: not read. Decrypt it, check that it holds no secret fleet.kdl should seal, and add it with `patch`");
                return None;
            }
            if text.contains("{{") {
                self.report.not_carried(l, &format!("patch {rel}"), "holds a Go template (`{{ … }}`) talhelper renders against the generated config; fleetc writes patches as they are: write the value in its place and add it with `patch`");
                return None;
            }
            // talhelper substitutes the env in a patch file's content too.
            let text = match substitute_lines(self.env, &text) {
                Ok(t) => t,
                Err(name) => {
                    let file = self.sources.add(rel.to_owned(), text.clone());
                    let at = text.find(&format!("${name}")).or_else(|| text.find(&format!("${{{name}"))).unwrap_or(0);
                    self.diags.push(
                        Diagnostic::new(
                            &codes::IMPORT_UNSET_VARIABLE,
                            format!("`${{{name}}}` is not set by any env file read"),
                        )
                        .at(Span::new(file, at, name.len() + 1))
                        .label(format!("`{name}` is unset"))
                        .help(self.env.unset_help(&name)),
                    );
                    return None;
                }
            };
            if text.trim().is_empty() {
                self.report.not_carried(l, &format!("patch {rel}"), "empty: talhelper skips it too");
                return None;
            }
            let text = self.resolver_patch(l, rel, text)?;
            if let Some(old) = self.files.get(&dest)
                && *old != text
            {
                self.report.not_carried(
                    l,
                    &format!("patch {rel}"),
                    "a second file of the same name under another directory; add it by hand",
                );
                return None;
            }
            return Some(self.put_at(dest, text));
        }
        if p.text.contains("{{") {
            self.report.not_carried(l, &format!("inline patch at {}", p.origin), "holds a Go template (`{{ … }}`) talhelper renders against the generated config; fleetc writes patches as they are: write the value in its place and add it with `patch`");
            return None;
        }
        if p.text.trim().is_empty() {
            return None;
        }
        let idx = p.origin.rsplit('/').next().and_then(|i| i.parse::<usize>().ok()).unwrap_or(0) + 1;
        let dest = format!("{}patches/{level}-{idx}.yaml", self.prefix);
        let body = self.resolver_patch(l, &format!("inline patch {}", p.origin), p.text.clone())?;
        let mut text = format!(
            "# Inline patch {} of {}, written out by `fleetc import talhelper`.\n",
            p.origin, self.report.source
        );
        // As written, without a newline added at the end: a patch that ends in a block scalar
        // (`content: |` as the last line of a `|-` inline patch) would gain a line break in its
        // value (oracles/import found it in a corpus machine file).
        text.push_str(&body);
        Some(self.put_at(dest, text))
    }

    /// A patch's resolver settings where fleetc writes a `ResolverConfig` (`resolver_patches`:
    /// Talos ≥ 1.12, nodes with `nameservers`), which Talos refuses beside the v1alpha1 fields,
    /// as it refuses them beside talhelper's own `ResolverConfig` then: its
    /// `machine.network.disableSearchDomain` moves into that document
    /// (`searchDomains.disableDefault`), and its `machine.network.nameservers`, when they are
    /// the ones every node's `nameservers` already says, go. The patch is rewritten (its comments
    /// go), or `None` when nothing of it is left; else its text as it is.
    fn resolver_patch(&mut self, l: usize, what: &str, text: String) -> Option<String> {
        if !self.resolver_patches || !(text.contains("disableSearchDomain") || text.contains("nameservers")) {
            return Some(text);
        }
        let file = self.sources.add(what.to_owned(), text.clone());
        let Ok(docs) = read_yaml(file, &text) else {
            return Some(text);
        };
        let mut kept = Vec::new();
        let (mut moved, mut said) = (false, false);
        for d in docs {
            let mut v = d.value;
            let resolver = search_domain_as_resolver(&mut v);
            moved |= resolver.is_some();
            if self.shared_nameservers.is_some()
                && v.pointer("/machine/network/nameservers") == self.shared_nameservers.as_ref()
                && let Some(net) = v.pointer_mut("/machine/network").and_then(Value::as_object_mut)
            {
                net.remove("nameservers");
                prune(&mut v);
                said = true;
            }
            if !is_zero(&v) {
                kept.push(v);
            }
            kept.extend(resolver);
        }
        if !moved && !said {
            return Some(text);
        }
        let mut changes = Vec::new();
        if moved {
            changes.push("its `machine.network.disableSearchDomain` moved into the `ResolverConfig`");
            self.report.deliberate(
                l,
                "machine.network.disableSearchDomain",
                &format!("{what}: moved into the `ResolverConfig` fleetc writes for `nameservers` (`searchDomains.disableDefault`): Talos ≥ 1.12 refuses the v1alpha1 field beside that document (`fleet::talos::patch-deprecated-conflict`)"),
            );
        }
        if said {
            changes.push("its `machine.network.nameservers` left to the nodes' `nameservers`");
            self.report.deliberate(
                l,
                "machine.network.nameservers",
                &format!("{what}: the nameservers every node's `nameservers` says, which fleetc writes in the `ResolverConfig`: left out of the patch, where Talos ≥ 1.12 refuses them beside that document (`fleet::talos::patch-deprecated-conflict`)"),
            );
        }
        (!kept.is_empty()).then(|| {
            format!(
                "# {what} of talhelper's patches, rewritten for Talos ≥ 1.12 (IMPORT-REPORT.md):\n# {}.\n{}",
                changes.join("; "),
                yaml_docs(&kept)
            )
        })
    }

    fn level_of(p: &PatchRef, nodes: &[&TNode]) -> String {
        if p.origin.starts_with("/controlPlane") {
            "controlplane".into()
        } else if p.origin.starts_with("/worker") {
            "worker".into()
        } else {
            nodes
                .iter()
                .find(|n| p.origin.starts_with(&format!("{}/", n.ptr)))
                .map_or_else(|| "node".into(), |n| n.name.clone())
        }
    }

    fn pool(&mut self, p: &PoolOut) -> String {
        let mut props = String::new();
        if let Some(s) = &p.schematic {
            props.push_str(&format!(" schematic={}", q(s)));
        }
        if p.secure_boot {
            props.push_str(" secure-boot=#true");
        }
        let mut k = format!("{}{props} {{\n", p.head);
        let all_same = |f: &dyn Fn(&TNode) -> Option<Value>| -> Option<Value> {
            let first = f(p.nodes[0]);
            p.nodes.iter().all(|n| f(n) == first).then_some(first).flatten()
        };
        // Labels, annotations, taints, nameservers: on the pool when alike, else per node.
        let get = |key: &'static str| move |n: &TNode| n.eff.get(key).filter(|v| !is_zero(v)).cloned();
        let pool_labels = all_same(&get("nodeLabels"));
        let pool_taints = all_same(&get("nodeTaints"));
        let pool_ns = all_same(&get("nameservers"));
        let pool_ann = all_same(&get("nodeAnnotations"));
        if let Some(v) = &pool_labels {
            k.push_str(&labels(v, "label"));
        }
        if let Some(v) = &pool_ann {
            k.push_str(&labels(v, "annotation"));
        }
        if let Some(v) = &pool_taints {
            k.push_str(&taints(v));
        }
        if let Some(v) = &pool_ns {
            k.push_str(&format!("nameservers {}\n", strings(v)));
        }
        // Patches: the generated document and talhelper's patches, on the pool when alike.
        let gens: Vec<Vec<Value>> = p.nodes.iter().map(|n| self.generated(n, pool_ann.is_none())).collect();
        let pool_gen = gens.iter().all(|g| *g == gens[0]) && !gens[0].is_empty();
        let lists: Vec<&Vec<PatchRef>> = p.nodes.iter().map(|n| &n.patches).collect();
        let common: usize = {
            let mut c = 0;
            // Only a node group's patches go on the pool: a node's own stay on the node.
            while lists.iter().all(|l| l.len() > c && l[c] == lists[0][c])
                && (lists[0][c].origin.starts_with("/controlPlane/") || lists[0][c].origin.starts_with("/worker/"))
            {
                c += 1;
            }
            c
        };
        let level = if p.head == "control-plane" { "controlplane" } else { "workers" };
        if pool_gen {
            let path = format!(
                "patches/talhelper/{level}{}.yaml",
                if p.head == "control-plane" {
                    String::new()
                } else {
                    p.head.trim_start_matches("pool ").trim_matches('"').trim_start_matches("workers").to_owned()
                }
            );
            let text = self.generated_header("the node group's fields") + &yaml_docs(&gens[0]);
            let path = self.put(&path, text);
            k.push_str(&self.patch_line(&path));
        }
        for pr in &lists[0][..common] {
            let lvl = Self::level_of(pr, &p.nodes);
            if let Some(path) = self.patch_file(pr, &lvl) {
                k.push_str(&self.patch_line(&path));
            }
        }
        for (i, n) in p.nodes.iter().enumerate() {
            k.push_str(&format!("node {} {{\n", q(&n.name)));
            if let Some(ip) = first_v4(n.ip.as_deref()) {
                k.push_str(&format!("address {}\n", q(&ip.to_string())));
            } else if let Some(ip) = &n.ip {
                let first = ip.split(',').next().unwrap_or("").trim();
                let name = first.chars().any(|c| c.is_ascii_alphabetic()) && !first.contains([':', '/']);
                if !name {
                    // An IPv6 address or another form: `check` refuses it with its own words
                    // (fleetc's node address is one IPv4 address).
                    k.push_str(&format!("address {}\n", q(first)));
                } else {
                    // A DNS name, by which talosctl reaches the node (talhelper writes it into
                    // talosconfig only): fleetc's node address is the IPv4 address behind it.
                    k.push_str(&format!(
                        "// talconfig reaches the node by the name {first}. CHANGE: its IPv4 address.\naddress \"CHANGE-ME\"\n"
                    ));
                    self.report.placeholder(
                        self.line(&format!("{}/ipAddress", n.ptr)),
                        &format!("nodes[{}] address", n.hostname),
                        &format!("the IPv4 address behind `{first}`: fleetc's node address is an IPv4 address (talosctl's endpoint, and the network's checks)"),
                    );
                }
            }
            if n.ip.as_deref().is_some_and(|s| s.contains(',')) {
                self.report.not_carried(
                    self.line(&format!("{}/ipAddress", n.ptr)),
                    &format!("nodes[{}].ipAddress", n.hostname),
                    "a second address: fleetc's node has one `address` (talosctl's endpoint)",
                );
            }
            let (links, mac) = self.links(n);
            let disk = self.disk(n);
            let props = disk.lines().find(|l| l.starts_with("install-disk ")).unwrap_or("");
            let identified = mac.is_some() || props.contains(" serial=") || props.contains(" wwid=");
            match &mac {
                Some(m) => k.push_str(&format!("mac {}\n", q(m))),
                None if !identified => {
                    k.push_str("// CHANGE: the MAC of its network port (`talosctl get links --insecure -n <ip>`),\n// by which `fleetc apply` recognises the machine before it sends its config (R13).\nmac \"CHANGE-ME\"\n");
                    self.report.placeholder(self.line(&n.ptr), &format!("nodes[{}] mac", n.hostname), "the MAC of its link (or its install disk's serial): fleetc recognises a machine before it sends it a config (R13)");
                }
                None => {}
            }
            if let Some(arch) = n.eff.get("machineSpec").and_then(|m| m.get("arch")).and_then(Value::as_str)
                && arch != "amd64"
            {
                k.push_str(&format!("arch {}\n", q(arch)));
            }
            k.push_str(&disk);
            k.push_str(&links);
            if pool_ns.is_none()
                && let Some(v) = get("nameservers")(n)
            {
                k.push_str(&format!("nameservers {}\n", strings(&v)));
            }
            if pool_labels.is_none()
                && let Some(v) = get("nodeLabels")(n)
            {
                k.push_str(&labels(&v, "label"));
            }
            if pool_taints.is_none()
                && let Some(v) = get("nodeTaints")(n)
            {
                k.push_str(&taints(&v));
            }
            for key in ["nodeLabels", "nodeAnnotations"] {
                for (lk, lv) in n.eff.get(key).and_then(Value::as_object).into_iter().flatten() {
                    if scalar(lv).unwrap_or_default().contains("{{") {
                        self.report.not_carried(
                            self.line(&format!("{}/{key}", n.ptr)),
                            &format!("nodes[{}].{key}.{lk}", n.hostname),
                            "a Go template talhelper renders against the generated config; write the value itself in fleet.kdl",
                        );
                    }
                }
            }
            if drops_lb_exclusion(n) {
                self.report.kept(
                    self.line(&format!("{}/nodeLabels", n.ptr)),
                    &format!("nodes[{}].nodeLabels", n.hostname),
                    &format!("talhelper replaces the generated config's labels with the node's own (v3.1.16 `pkg/talos/nodeconfig.go` `applyNodeOverride`), so its control-plane node lacks the `{LB_EXCLUSION}` label Talos gives one (machinery `config/generate/init.go`); the node's generated patch deletes it (`$patch: delete`) so that load balancers that honour it (MetalLB, a cloud's) keep the node as they have it"),
                );
            }
            if pool_ann.is_none() && get("nodeAnnotations")(n).is_some() {
                self.report.kept(self.line(&format!("{}/nodeAnnotations", n.ptr)), &format!("nodes[{}].nodeAnnotations", n.hostname), "annotations are a pool's in fleetc (`annotation`), and this pool's nodes differ: the node's generated patch sets them (`machine.nodeAnnotations`), as talhelper writes them");
            }
            if !pool_gen && !gens[i].is_empty() {
                let path = format!("patches/talhelper/{}.yaml", n.name);
                let text = self.generated_header("the node's fields") + &yaml_docs(&gens[i]);
                let path = self.put(&path, text);
                k.push_str(&self.patch_line(&path));
            }
            for pr in &n.patches[common..] {
                let lvl = Self::level_of(pr, &p.nodes);
                if let Some(path) = self.patch_file(pr, &lvl) {
                    k.push_str(&self.patch_line(&path));
                }
            }
            for (key, why) in [
                (
                    "talosImageURL",
                    "fleetc's installer comes from the schematic (`factory.talos.dev/metal-installer/<id>`)",
                ),
                ("imageSchematic", "boot media come from the pool's schematic (out/metal/<env>/)"),
            ] {
                if let Some(v) = n.eff.get(key).filter(|v| !is_zero(v)) {
                    // An installer URL names a schematic by its ID, which cannot be read back
                    // offline: the user writes its extensions into the pool's schematic.
                    let why = match (key, v.as_str()) {
                        ("talosImageURL", Some(url)) => format!(
                            "`{url}`: {why}; an ID cannot be read back offline, so write that schematic's extensions into the pool's `schematic` (its ID must then match; `fleetc schematic id out/schematics/<name>.yaml`)"
                        ),
                        _ => why.to_owned(),
                    };
                    self.report.not_carried(
                        self.line(&format!("{}/{key}", n.ptr)),
                        &format!("nodes[{}].{key}", n.hostname),
                        &why,
                    );
                }
            }
            if let Some(ms) = n.eff.get("machineSpec").and_then(Value::as_object) {
                for key in ms.keys().filter(|k| !matches!(k.as_str(), "arch" | "secureboot" | "mode")) {
                    self.report.not_carried(self.line(&format!("{}/machineSpec", n.ptr)), &format!("nodes[{}].machineSpec.{key}", n.hostname), "boot media are listed in out/metal/<env>/ (ISO, PXE, raw image); fleetc does not choose one per node");
                }
            }
            k.push_str("}\n");
        }
        k.push_str("}\n");
        k
    }

    /// The Talos documents talhelper writes from a node's fields that fleetc has no property
    /// for (and that fleetc does not own); with `own_annotations` (its pool's nodes differ in
    /// them) the node's annotations too.
    fn generated(&self, n: &TNode, own_annotations: bool) -> Vec<Value> {
        let e = &n.eff;
        let mut machine = Map::new();
        let mut cluster = Map::new();
        if let Some(v) = e.get("machineDisks") {
            machine.insert("disks".into(), v.clone());
        }
        if let Some(v) = e.get("machineFiles") {
            let files: Vec<Value> = v
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| {
                    let mut f = f.clone();
                    if let Some(o) = f.as_object_mut() {
                        o.remove("skipEnvsubst");
                    }
                    f
                })
                .collect();
            machine.insert("files".into(), Value::Array(files));
        }
        // talhelper writes it into the `ResolverConfig` on Talos ≥ 1.12 (`pkg/talos/multidocs.go`
        // `genMultiDocs`, `GenerateResolverConfig`), where fleetc's own `ResolverConfig` would
        // conflict with the v1alpha1 field (`fleet::talos::patch-deprecated-conflict`).
        let resolver = as_bool(e.get("disableSearchDomain")) && self.multidoc_network;
        if as_bool(e.get("disableSearchDomain")) && !self.multidoc_network {
            machine.insert("network".into(), json!({"disableSearchDomain": true}));
        }
        if let Some(v) = e.get("kernelModules") {
            machine.insert("kernel".into(), json!({"modules": v}));
        }
        // talhelper appends the node's `certSANs` (its group's too) to `machine.certSANs`
        // (v3.1.16 `pkg/talos/nodeconfig.go` l.150-152); the names fleet.kdl gives every
        // machine are in fleetc's list already, the others a patch adds to it.
        let mut sans: Vec<Value> = Vec::new();
        for s in e.get("certSANs").and_then(Value::as_array).into_iter().flatten().filter_map(scalar) {
            if !self.given_sans.contains(&s) && !sans.contains(&Value::String(s.clone())) {
                sans.push(Value::String(s));
            }
        }
        if !sans.is_empty() {
            machine.insert("certSANs".into(), Value::Array(sans));
        }
        if drops_lb_exclusion(n) {
            machine.insert("nodeLabels".into(), json!({LB_EXCLUSION: {"$patch": "delete"}}));
        }
        // A Go-templated value is reported, not written (talhelper renders it against the
        // generated config).
        let own: Map<String, Value> = e
            .get("nodeAnnotations")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(_, v)| !scalar(v).unwrap_or_default().contains("{{"))
            .map(|(k, v)| (k.clone(), Value::String(scalar(v).unwrap_or_default())))
            .collect();
        if own_annotations && !own.is_empty() {
            machine.insert("nodeAnnotations".into(), Value::Object(own));
        }
        if let Some(v) = e.get("extraManifests") {
            cluster.insert("extraManifests".into(), v.clone());
        }
        let (_, _, kept) = self.link_plan(n);
        let mut net_docs = Vec::new();
        if let Some(ifaces) = kept {
            match self.net_documents(&ifaces) {
                Some(d) => net_docs = d,
                None => {
                    let net = machine.entry("network").or_insert_with(|| json!({}));
                    net.as_object_mut().expect("a mapping").insert("interfaces".into(), ifaces);
                }
            }
        }
        let mut docs = Vec::new();
        let mut v1 = Map::new();
        if !machine.is_empty() {
            v1.insert("machine".into(), Value::Object(machine));
        }
        if !cluster.is_empty() {
            v1.insert("cluster".into(), Value::Object(cluster));
        }
        if !v1.is_empty() {
            docs.push(Value::Object(v1));
        }
        if resolver {
            docs.push(
                json!({"apiVersion": "v1alpha1", "kind": "ResolverConfig", "searchDomains": {"disableDefault": true}}),
            );
        }
        docs.extend(net_docs);
        if let Some(fw) = e.get("ingressFirewall") {
            let action = fw.get("defaultAction").and_then(Value::as_str).unwrap_or("block");
            docs.push(json!({"apiVersion": "v1alpha1", "kind": "NetworkDefaultActionConfig", "ingress": action}));
            for r in fw.get("rules").and_then(Value::as_array).into_iter().flatten() {
                let mut d = json!({"apiVersion": "v1alpha1", "kind": "NetworkRuleConfig"});
                for key in ["name", "portSelector", "ingress"] {
                    if let Some(v) = r.get(key) {
                        d[key] = v.clone();
                    }
                }
                docs.push(d);
            }
        }
        for s in e.get("extensionServices").and_then(Value::as_array).into_iter().flatten() {
            let mut d = json!({"apiVersion": "v1alpha1", "kind": "ExtensionServiceConfig"});
            for key in ["name", "configFiles", "environment"] {
                if let Some(v) = s.get(key).filter(|v| !is_zero(v)) {
                    d[key] = v.clone();
                }
            }
            docs.push(d);
        }
        for (key, kind, fields) in [
            ("volumes", "VolumeConfig", &["name", "provisioning", "encryption"][..]),
            (
                "userVolumes",
                "UserVolumeConfig",
                &["name", "volumeType", "provisioning", "filesystem", "encryption"][..],
            ),
        ] {
            for s in e.get(key).and_then(Value::as_array).into_iter().flatten() {
                let mut d = json!({"apiVersion": "v1alpha1", "kind": kind});
                for f in fields {
                    if let Some(v) = s.get(*f).filter(|v| !is_zero(v)) {
                        d[*f] = v.clone();
                    }
                }
                docs.push(d);
            }
        }
        docs
    }

    /// A node's install disk (`install-disk …`).
    fn disk(&mut self, n: &TNode) -> String {
        let mut props = Vec::new();
        if let Some(sel) = &n.selector {
            for (key, prop) in
                [("size", "size"), ("model", "model"), ("serial", "serial"), ("wwid", "wwid"), ("busPath", "bus-path")]
            {
                if let Some(v) = sel.get(key).and_then(scalar) {
                    props.push(format!("{prop}={}", q(&v)));
                }
            }
            for key in sel.keys().filter(|k| !matches!(k.as_str(), "size" | "model" | "serial" | "wwid" | "busPath")) {
                self.report.not_carried(
                    self.line(&format!("{}/installDiskSelector/{key}", n.ptr)),
                    &format!("nodes[{}].installDiskSelector.{key}", n.hostname),
                    "fleetc's `install-disk` selects by size, model, serial, wwid and bus path (R15)",
                );
            }
        }
        let identified = !props.is_empty() && !props.iter().all(|p| p.starts_with("size="));
        if let Some(d) = &n.install_disk {
            props.push(format!("device={}", q(d)));
            if !identified {
                // R15: on metal fleetc names the install disk by what the disk is, not by the order
                // the kernel found it; the serial is a fact of the machine (a user fact), and
                // `fleetc check` refuses the device path alone (`fleet::metal::disk-unidentified`)
                // until it is written, as it refuses a placeholder.
                self.report.placeholder(
                    self.line(&format!("{}/installDisk", n.ptr)),
                    &format!("nodes[{}] install-disk serial", n.hostname),
                    &format!(
                        "`installDisk: {d}` is a device path; on metal fleetc selects the install disk by its serial (or wwid, model, bus path: R15, `fleet::metal::disk-unidentified`): add `serial=` from `talosctl get disks --insecure -n <ip>`"
                    ),
                );
                if !self.disk_placeholder {
                    self.report.deliberate(
                        0,
                        "machine.install.diskSelector",
                        "talhelper installs to the device path (`machine.install.disk`); fleetc to the disk whose serial the node's `install-disk` names (R15), Talos reading the device path only without a selector",
                    );
                }
                self.disk_placeholder = true;
            }
        }
        let size_only = n.install_disk.is_none() && !props.is_empty() && !identified;
        if size_only {
            // R15 again: a size names a kind of disk, not this machine's; the serial is the
            // user's fact, as for a device path.
            self.report.placeholder(
                self.line(&format!("{}/installDiskSelector", n.ptr)),
                &format!("nodes[{}] install-disk serial", n.hostname),
                "`installDiskSelector` names the disk by its size only; on metal fleetc selects the install disk by its serial (or wwid, model, bus path: R15, `fleet::metal::disk-unidentified`): add `serial=` from `talosctl get disks --insecure -n <ip>`",
            );
            self.report.deliberate(
                0,
                "machine.install.diskSelector",
                "talhelper selects the install disk by its size; fleetc by the serial the node's `install-disk` adds to it (R15)",
            );
        }
        if props.is_empty() {
            return String::new();
        }
        let change = if (n.install_disk.is_some() || size_only) && !identified {
            "// CHANGE: add the disk's serial (`talosctl get disks --insecure -n <ip>`), R15.\n"
        } else {
            ""
        };
        format!("{change}install-disk {}\n", props.join(" "))
    }

    /// The node's links as fleet.kdl children, and the MAC of its first selected link.
    fn links(&mut self, n: &TNode) -> (String, Option<String>) {
        let (k, mac, kept) = self.link_plan(n);
        if let Some(ifaces) = kept {
            let why = if self.net_documents(&ifaces).is_some() {
                "kept in the node's generated patch as the documents talhelper writes for Talos ≥ 1.12 (`LinkAliasConfig`, `LinkConfig`, `BondConfig`, `VLANConfig`, `DHCPv4Config`, `Layer2VIPConfig`): a bond, DHCP, an MTU, a route metric, a device selector or a VIP on another address has no `link` form in fleetc"
            } else {
                "kept as `machine.network.interfaces` in the node's generated patch: a bond, DHCP, an MTU, a device selector or a VIP on another address has no `link` form in fleetc"
            };
            self.report.kept(
                self.line(&format!("{}/networkInterfaces", n.ptr)),
                &format!("nodes[{}].networkInterfaces", n.hostname),
                why,
            );
        }
        (k, mac)
    }

    /// talhelper's multi-document form of the interfaces kept as a patch, on Talos ≥ 1.12
    /// (`netdocs`); `None` keeps the v1alpha1 list (older Talos, or a field it does not take).
    fn net_documents(&self, ifaces: &Value) -> Option<Vec<Value>> {
        if !self.multidoc_network {
            return None;
        }
        super::netdocs::documents(ifaces.as_array()?)
    }

    /// The links fleet.kdl can hold, the MAC, and the interfaces kept as a patch instead.
    fn link_plan(&self, n: &TNode) -> (String, Option<String>, Option<Value>) {
        let Some(Value::Array(ifaces)) = n.eff.get("networkInterfaces") else { return (String::new(), None, None) };
        let mac = ifaces
            .iter()
            .find_map(|i| i.pointer("/deviceSelector/hardwareAddr").and_then(Value::as_str))
            .map(str::to_owned);
        let mut k = String::new();
        for i in ifaces {
            match link_kdl(i) {
                Some(s) => k.push_str(&s),
                None => {
                    // talhelper decodes them into Talos's `Device` (yaml.v3, unknown keys dropped).
                    let known: Vec<Value> = ifaces
                        .iter()
                        .map(|i| {
                            let mut i = i.clone();
                            if let Some(o) = i.as_object_mut() {
                                o.retain(|k, _| super::netdocs::DEVICE_FIELDS.contains(&k.as_str()));
                            }
                            i
                        })
                        .collect();
                    return (String::new(), mac, Some(Value::Array(known)));
                }
            }
        }
        (k, mac, None)
    }
}

/// A factory schematic (`customization` and `overlay`, as talhelper's `schematic` and topf's
/// schematic files hold it) as a fleet.kdl `schematic`; what it cannot hold is reported.
pub(super) fn schematic_kdl(s: &Value, name: &str, report: &mut Report) -> String {
    let mut k = String::new();
    if s.is_null() {
        k.push_str("// Nodes without a schematic in the talconfig: talhelper installs the factory's plain image.\n");
    }
    k.push_str(&format!("schematic {} {{\n", q(name)));
    let c = s.get("customization");
    let exts: Vec<String> = c
        .and_then(|c| c.pointer("/systemExtensions/officialExtensions"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(scalar).collect())
        .unwrap_or_default();
    for e in &exts {
        k.push_str(&format!("extension {}\n", q(e)));
    }
    for a in c.and_then(|c| c.get("extraKernelArgs")).and_then(Value::as_array).into_iter().flatten().filter_map(scalar)
    {
        k.push_str(&format!("kernel-arg {}\n", q(&a)));
    }
    for m in c.and_then(|c| c.get("meta")).and_then(Value::as_array).into_iter().flatten() {
        if let (Some(key), Some(v)) = (m.get("key").and_then(Value::as_u64), m.get("value").and_then(scalar)) {
            k.push_str(&format!("meta key={key} value={}\n", q(&v)));
        }
    }
    if let Some(o) = s.get("overlay") {
        if let (Some(img), Some(n)) = (o.get("image").and_then(scalar), o.get("name").and_then(scalar)) {
            k.push_str(&format!("overlay image={} name={}\n", q(&img), q(&n)));
        }
        if o.get("options").is_some_and(|v| !is_zero(v)) {
            report.not_carried(
                0,
                &format!("schematic `{name}` overlay.options"),
                "fleetc's `overlay` takes an image and a name, no options",
            );
        }
    }
    if let Some(c) = c.and_then(Value::as_object) {
        for key in c.keys().filter(|k| !matches!(k.as_str(), "systemExtensions" | "extraKernelArgs" | "meta")) {
            report.not_carried(
                0,
                &format!("schematic `{name}` customization.{key}"),
                "not modeled by fleetc's `schematic` (docs/schematics.md)",
            );
        }
    }
    k.push_str("}\n");
    k
}

/// The rules of fleetc's ownership table a patch's fields fall under that `overrides=` may
/// name, each with the fields (dotted, `Kind name: field` for a named document), in rule order.
/// The patch the import writes beside a patch that sets kernel arguments (`Writer::patch_line`).
const GRUB_PATCH: &str = "patches/talhelper/grub-uki-cmdline-off.yaml";

/// Whether a patch sets `machine.install.extraKernelArgs` (non-empty) and leaves
/// `grubUseUKICmdline` to the generator.
fn kernel_args_without_grub_flag(text: &str) -> bool {
    let Ok(docs) = read_yaml(FileId::default(), text) else { return false };
    let v1 = || docs.iter().filter(|d| d.kind() == "v1alpha1");
    v1().any(|d| {
        d.value.pointer("/machine/install/extraKernelArgs").and_then(Value::as_array).is_some_and(|a| !a.is_empty())
    }) && !v1().any(|d| d.value.pointer("/machine/install/grubUseUKICmdline").is_some())
}

fn overridden_rules(text: &str) -> Vec<(&'static str, Vec<String>)> {
    let Ok(docs) = read_yaml(FileId::default(), text) else { return Vec::new() };
    let mut out: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for d in docs.iter().filter(|d| d.value.is_object()) {
        let kind = d.kind();
        let name = d.value.get("name").and_then(Value::as_str);
        for leaf in owned::leaves(&d.value, "") {
            if owned::is_identity(kind, &leaf) {
                continue;
            }
            if let Some(rule) = owned::owner(kind, name, &leaf).and_then(|o| o.rule)
                && crate::model::patch::OVERRIDABLE.contains(&rule)
            {
                let field = leaf.trim_start_matches('/').replace('/', ".");
                let field = match name {
                    Some(n) if kind != "v1alpha1" => format!("`{kind}` `{n}` `{field}`"),
                    _ => format!("`{field}`"),
                };
                let v = out.entry(rule).or_default();
                if !v.contains(&field) {
                    v.push(field);
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The label Talos's generator gives every control-plane node (siderolabs/talos machinery
/// `config/generate/init.go`, `constants.LabelExcludeFromExternalLB`).
const LB_EXCLUSION: &str = "node.kubernetes.io/exclude-from-external-load-balancers";

/// Whether talhelper's config of a control-plane node lacks [`LB_EXCLUSION`]: its `nodeLabels`
/// (any map, even empty) replace the generated ones.
fn drops_lb_exclusion(n: &TNode) -> bool {
    n.cp && n.eff.get("nodeLabels").is_some_and(|v| !v.is_null())
}

/// Whether talhelper writes multi-document network configuration for this Talos version
/// (above 1.11: siderolabs/talos machinery v1.14.0-alpha.2 `pkg/machinery/config/contract.go`
/// `MultidocNetworkConfigSupported`, the machinery talhelper v3.1.16 builds with).
fn multidoc_network(talos: &str) -> bool {
    let mut parts = talos.trim_start_matches('v').split('.').map(|p| p.parse::<u64>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) > (1, 11),
        _ => true,
    }
}

/// One interface as a `link` (and its `vlan`s), when every field it sets has a fleet.kdl form.
fn link_kdl(i: &Value) -> Option<String> {
    let o = i.as_object()?;
    let name = o.get("interface").and_then(Value::as_str)?;
    let allowed = ["interface", "addresses", "routes", "dhcp", "vlans", "vip"];
    if o.keys().any(|k| !allowed.contains(&k.as_str())) || as_bool(o.get("dhcp")) {
        return None;
    }
    let mut k = format!("link {} {{\n", q(name));
    k.push_str(&addr_routes(o)?);
    k.push_str("}\n");
    for v in o.get("vlans").and_then(Value::as_array).into_iter().flatten() {
        let vo = v.as_object()?;
        if vo.keys().any(|k| !["vlanId", "addresses", "routes", "dhcp", "vip"].contains(&k.as_str()))
            || as_bool(vo.get("dhcp"))
        {
            return None;
        }
        let id = vo.get("vlanId").and_then(Value::as_u64)?;
        k.push_str(&format!("vlan {} parent={} id={id} {{\n", q(&format!("{name}.{id}")), q(name)));
        k.push_str(&addr_routes(vo)?);
        k.push_str("}\n");
    }
    Some(k)
}

fn addr_routes(o: &Map<String, Value>) -> Option<String> {
    let mut k = String::new();
    for a in o.get("addresses").and_then(Value::as_array).into_iter().flatten() {
        let a = a.as_str()?;
        if a.contains(':') || !a.contains('/') {
            return None;
        }
        k.push_str(&format!("address {}\n", q(a)));
    }
    for r in o.get("routes").and_then(Value::as_array).into_iter().flatten() {
        let r = r.as_object()?;
        if r.keys().any(|k| !["network", "gateway"].contains(&k.as_str())) {
            return None;
        }
        let gw = r.get("gateway").and_then(Value::as_str)?;
        if gw.contains(':') {
            return None;
        }
        match r.get("network").and_then(Value::as_str) {
            None | Some("0.0.0.0/0") => k.push_str(&format!("route gateway={}\n", q(gw))),
            Some(net) if !net.contains(':') => k.push_str(&format!("route to={} gateway={}\n", q(net), q(gw))),
            Some(_) => return None,
        }
    }
    Some(k)
}

fn first_v4(ip: Option<&str>) -> Option<Ipv4Addr> {
    ip?.split(',').map(str::trim).find_map(|s| s.parse::<Ipv4Addr>().ok())
}

fn strings(v: &Value) -> String {
    v.as_array().into_iter().flatten().filter_map(scalar).map(|s| q(&s)).collect::<Vec<_>>().join(" ")
}

/// Labels or annotations; a value with a Go template (`{{ … }}`, talhelper renders it) is
/// left out (and reported, in `Writer::pool`).
fn labels(v: &Value, node: &str) -> String {
    v.as_object()
        .into_iter()
        .flatten()
        .filter(|(_, val)| !scalar(val).unwrap_or_default().contains("{{"))
        .map(|(key, val)| format!("{node} {} {}\n", q(key), q(&scalar(val).unwrap_or_default())))
        .collect()
}

/// talhelper's `nodeTaints: {key: "value:Effect"}` (Talos's `machine.nodeTaints` form).
fn taints(v: &Value) -> String {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(key, val)| {
            let s = scalar(val).unwrap_or_default();
            let (value, effect) = match s.rsplit_once(':') {
                Some((v, e)) => (v.to_owned(), Some(e.to_owned())),
                None if matches!(s.as_str(), "NoSchedule" | "PreferNoSchedule" | "NoExecute") => {
                    (String::new(), Some(s.clone()))
                }
                None => (s.clone(), None),
            };
            let mut line = format!("taint {}", q(key));
            if !value.is_empty() {
                line.push_str(&format!(" {}", q(&value)));
            }
            if let Some(e) = effect {
                line.push_str(&format!(" effect={}", q(&e)));
            }
            line.push('\n');
            line
        })
        .collect()
}

/// Where a patch file `@<rel>` goes in the fleet directory: its path under the talconfig's
/// directory, or `patches/external/<name>` for one outside it.
fn fleet_path(rel: &str) -> String {
    let p = PathBuf::from(rel);
    let mut parts = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => {
                let name = p.file_name().map_or_else(|| "patch.yaml".into(), |n| n.to_string_lossy().into_owned());
                return format!("patches/external/{name}");
            }
        }
    }
    let joined = parts.join("/");
    if joined.starts_with("patches/") { joined } else { format!("patches/{joined}") }
}

/// Env substitution of a patch file's text, comment lines left as they are (talhelper strips
/// comments before it substitutes).
fn substitute_lines(env: &Env, text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    for l in text.split_inclusive('\n') {
        if l.trim_start().starts_with('#') || !l.contains('$') {
            out.push_str(l);
        } else {
            out.push_str(&env.substitute(l)?);
        }
    }
    Ok(out)
}

/// The keys used, for tests: every NodeConfigs field is read or reported.
#[cfg(test)]
pub(super) fn node_config_fields() -> std::collections::BTreeSet<&'static str> {
    NODE_CONFIGS.iter().copied().collect()
}

/// The fields fleetc writes on every imported node by a rule of its own, where talhelper leaves
/// Talos's default: the configs differ there on purpose (oracles/import proves there is no other
/// difference). The reason and the rule are the ownership table's ([`owned::OWNERS`]), so that the
/// report says what `fleetc explain` and the patch diagnostics say.
const OWNED_DIFFERENCES: &[(&str, Option<&str>, &str, &str)] = &[
    ("v1alpha1", None, "/machine/certSANs", "machine.certSANs"),
    ("v1alpha1", None, "/cluster/apiServer/certSANs", "cluster.apiServer.certSANs"),
    ("v1alpha1", None, "/machine/kubelet/nodeIP/validSubnets", "machine.kubelet.nodeIP.validSubnets"),
    ("v1alpha1", None, "/cluster/etcd/advertisedSubnets", "cluster.etcd.advertisedSubnets"),
    ("VolumeConfig", Some("EPHEMERAL"), "/provisioning/diskSelector/match", "VolumeConfig EPHEMERAL"),
];

impl Writer<'_> {
    fn owned_rows(&mut self) {
        for (kind, name, pointer, field) in OWNED_DIFFERENCES {
            let Some(o) = owned::owner(kind, *name, pointer) else { continue };
            let rule = o.rule.filter(|r| !o.why.contains(r)).map(|r| format!(" ({r})")).unwrap_or_default();
            self.report.deliberate(
                0,
                field,
                &format!("fleetc writes it, talhelper leaves Talos's default: {}{rule}", o.why),
            );
        }
        // Not a field fleetc owns: `talosctl gen config`, which `fleetc talos render` runs, keeps its
        // default `--install-disk /dev/sda` beside the selector fleetc writes; Talos installs to the
        // selector's match and reads the device path only without one
        // (`fleet::talos::patch-install-disk-unused` cites the install step).
        self.report.deliberate(
            0,
            "machine.install.disk",
            "`fleetc talos render` keeps `talosctl gen config`'s default `/dev/sda` beside fleetc's `machine.install.diskSelector`; Talos installs to the selector's disk and ignores the device path there (R15, `fleet::talos::patch-install-disk-unused`)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_as_talhelper_writes_them() {
        assert_eq!(parse_endpoint("https://10.0.0.10:6443"), Some(("10.0.0.10".into(), 6443)));
        assert_eq!(parse_endpoint("https://k8s.lan:443/"), Some(("k8s.lan".into(), 443)));
        assert_eq!(parse_endpoint("https://[fd00::1]:6443"), Some(("fd00::1".into(), 6443)));
        assert_eq!(parse_endpoint("10.0.0.10"), None);
        assert!(node_config_fields().contains("userVolumes"));
    }

    #[test]
    fn taints_take_talos_value_effect_form() {
        let t = taints(&json!({"a": "x:NoSchedule", "b": "NoExecute", "c": ":PreferNoSchedule"}));
        assert_eq!(
            t,
            "taint \"a\" \"x\" effect=\"NoSchedule\"\ntaint \"b\" effect=\"NoExecute\"\ntaint \"c\" effect=\"PreferNoSchedule\"\n"
        );
    }

    #[test]
    fn patch_files_keep_their_place_under_patches() {
        assert_eq!(fleet_path("./patches/global/kubelet.yaml"), "patches/global/kubelet.yaml");
        assert_eq!(fleet_path("controller/a.yaml"), "patches/controller/a.yaml");
        assert_eq!(fleet_path("../shared/a.yaml"), "patches/external/a.yaml");
    }
}
