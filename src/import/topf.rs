//! A topf config (github.com/postfinance/topf v0.4.2: `pkg/config/topf_config.go`
//! `TopfConfig`, `pkg/config/node.go` `Node`) and its patch folders, read and translated into
//! one fleet.
//!
//! topf builds each node's config from Talos's generator and the patches of `<patchesDir>/all`,
//! `<patchesDir>/<role>` and `<patchesDir>/node/<host>`, in that order, each folder walked in
//! lexical order, every file whose name matches `.*\.ya?ml(\.tpl)?` (`pkg/config/patches.go`
//! l.37-142); a `.tpl` file is a Go template rendered per node (l.144-188), which `gotmpl.rs`
//! evaluates. Before them comes the installer image,
//! `<factory>/<platform>-installer[-secureboot]/<schematic>:v<talos>` (`internal/topf/node.go`
//! l.68-84, `internal/topf/nodes.go` l.105-140). The import renders every patch for every node
//! it reaches, takes out what fleet.kdl models (the install disk, the hostname, the MAC a
//! link alias selects, the endpoint's VIP), and writes the rest as patch files: once on the
//! level topf applies it to when every node gets the same, else once per node.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::netdocs::{self, prune};
use super::report::Report;
use super::talhelper::{common_name_prefix, dns_label, line, parse_endpoint, q, scalar, schematic_kdl, yaml_docs};
use super::{ImportError, Imported, gotmpl};
use crate::diag::{Diagnostic, Diagnostics, FileId, Sources, Span, codes};
use crate::model::patch::{PatchDocument, PatchError, read_yaml};
use crate::model::values::is_dns_label;

/// topf v0.4.2's Talos version when topf.yaml names none: the machinery module it is built
/// with (`go.mod`: `github.com/siderolabs/talos/pkg/machinery v1.13.3`, whose
/// `gendata/data/tag` is `v1.13.3`; `internal/topf/node.go` l.44-48 falls back to it).
const TOPF_DEFAULT_TALOS: &str = "v1.13.3";

/// The schematic topf installs when none is named (`internal/topf/node.go` l.22,
/// `DefaultSchematic`): the Image Factory's empty schematic.
const DEFAULT_SCHEMATIC: &str = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";

const TOP_FIELDS: &[&str] = &[
    "clusterName",
    "clusterEndpoint",
    "kubernetesVersion",
    "talosVersion",
    "schematicId",
    "factory",
    "platform",
    "secureboot",
    "secretsProvider",
    "nodesProvider",
    "patchesDir",
    "configDir",
    "secretsPath",
    "nodes",
    "data",
];
const NODE_FIELDS: &[&str] =
    &["host", "ip", "role", "data", "talosVersion", "schematicId", "factory", "platform", "secureboot"];

/// A node of topf.yaml.
struct TNode {
    ptr: String,
    host: String,
    /// Its name in fleet.kdl.
    name: String,
    ip: Option<IpAddr>,
    cp: bool,
    /// `schematicId` as written, the node's or the cluster's.
    schematic: Option<String>,
    secure_boot: bool,
    data: Value,
}

/// What the patches of one node say that fleet.kdl models.
#[derive(Default, Clone, PartialEq)]
struct Taken {
    disk: Map<String, Value>,
    hostname: Option<String>,
    mac: Option<String>,
    vip: Option<String>,
    /// `link` and `bond` children of the node, from `LinkConfig` and `BondConfig` documents.
    net: String,
    nameservers: Vec<String>,
    /// An installer image a patch pinned (fleetc's comes from the schematic).
    image: Option<String>,
    /// A bond's `mtu: 1500` (Linux's default) left out.
    mtu_dropped: bool,
}

/// topf.yaml's cluster-wide fields.
struct Top {
    cluster_name: String,
    /// The cluster's name in fleet.kdl.
    cluster: String,
    endpoint: String,
    ep_host: String,
    ep_port: u16,
    kubernetes: Option<String>,
    talos: Option<String>,
    /// fleet.kdl's `talos` line, with its comment (`super::talos_version`).
    talos_kdl: String,
    factory: Option<String>,
    platform: Option<String>,
    data: Value,
    patches_dir: PathBuf,
}

/// Where the patches go: the cluster, the control plane, every worker pool, each node; and
/// what each node's patches said that fleet.kdl models.
struct Placed {
    on_cluster: Vec<String>,
    on_cp: Vec<String>,
    on_workers: Vec<String>,
    on_node: Vec<Vec<String>>,
    taken: Vec<Taken>,
}

/// A patch file of the patch folders.
struct Source {
    /// Its path below the patches folder.
    rel: String,
    file: FileId,
    /// `None`: every node; `Some(true)`: the control plane; `Some(false)`: the workers.
    role: Option<bool>,
    /// The node of a `node/<host>/` file.
    host: Option<String>,
}

/// One patch file as one node gets it.
#[derive(Clone, PartialEq)]
enum Rendered {
    Text(String),
    Nothing,
    Refused(String),
}

/// Imports the topf config at `config`.
pub fn import(config: &Path, opts: &super::Options) -> Result<Imported, ImportError> {
    opts.check()?;
    let text = std::fs::read_to_string(config)
        .map_err(|e| ImportError::Io(format!("cannot read {}: {e}", config.display())))?;
    let dir = config.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let name = config.file_name().map_or_else(|| "topf.yaml".to_owned(), |n| n.to_string_lossy().into_owned());
    let mut sources = Sources::default();
    let mut diags = Diagnostics::new();
    let cfg = sources.add(name.clone(), text.clone());
    let Some(doc) = read_config(cfg, &name, &text, &mut diags) else {
        return Err(ImportError::Problems(sources, diags));
    };
    let mut im = Importer {
        sources: &mut sources,
        cfg,
        doc: &doc,
        dir: &dir,
        diags: &mut diags,
        report: Report { source: name.clone(), tool: "topf".into(), ..Report::default() },
        files: BTreeMap::new(),
        opts,
    };
    let kdl = im.translate();
    let Importer { files, report, .. } = im;
    match kdl {
        Some(kdl) if !diags.has_errors() => super::assemble(sources, &kdl, files, vec![report]),
        _ => Err(ImportError::Problems(sources, diags)),
    }
}

/// The config's document, or `None` (reported) when it is not a topf config.
fn read_config(cfg: FileId, name: &str, text: &str, diags: &mut Diagnostics) -> Option<PatchDocument> {
    let not = |diags: &mut Diagnostics, span: Span, message: String| {
        diags.push(Diagnostic::new(&codes::IMPORT_NOT_TOPF, message).at(span).label("not a topf config"));
    };
    let docs = match read_yaml(cfg, text) {
        Ok(d) => d,
        Err(PatchError::Yaml { span, message }) => {
            let jinja =
                if name.ends_with(".j2") { " (a Jinja template: render it first, then import its output)" } else { "" };
            not(diags, span, format!("{name} is not YAML{jinja}: {message}"));
            return None;
        }
        Err(_) => return None,
    };
    let Some(doc) = docs.into_iter().next() else {
        not(diags, Span::new(cfg, 0, text.find('\n').unwrap_or(text.len())), format!("{name} is empty"));
        return None;
    };
    let v = &doc.value;
    if !v.is_object() {
        not(diags, doc.span, format!("{name} is not a topf config: its document is not a mapping"));
        return None;
    }
    if v.get("clusterEndpoint").is_none() && v.get("nodes").is_none() {
        let why = if v.get("endpoint").is_some() && v.get("clusterName").is_some() {
            "it has no `clusterEndpoint` and no `nodes`: it is a talhelper config (`fleetc import talhelper` reads it)"
        } else {
            "it has no `clusterEndpoint` and no `nodes`"
        };
        not(diags, doc.span, format!("{name} is not a topf config: {why}"));
        return None;
    }
    Some(doc)
}

struct Importer<'a> {
    sources: &'a mut Sources,
    cfg: FileId,
    doc: &'a PatchDocument,
    dir: &'a Path,
    diags: &'a mut Diagnostics,
    report: Report,
    opts: &'a super::Options,
    files: BTreeMap<String, String>,
}

impl Importer<'_> {
    fn line(&self, ptr: &str) -> usize {
        line(self.sources, self.cfg, self.doc.key_place(ptr))
    }

    fn invalid(&mut self, ptr: &str, message: String, label: &str) {
        let span = self.doc.place(ptr);
        self.diags.push(Diagnostic::new(&codes::IMPORT_INVALID, message).at(span).label(label.to_owned()));
    }

    fn string(&mut self, ptr: &str, field: &str) -> Option<String> {
        match self.doc.value.pointer(ptr) {
            None | Some(Value::Null) => None,
            Some(v) => match scalar(v) {
                Some(s) if !s.is_empty() => Some(s),
                Some(_) => None,
                None => {
                    self.invalid(ptr, format!("`{field}` is not a string"), "topf reads a string here");
                    None
                }
            },
        }
    }

    fn flag(&mut self, ptr: &str, field: &str) -> bool {
        match self.doc.value.pointer(ptr) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                self.invalid(ptr, format!("`{field}` is not a boolean"), "topf reads `true` or `false` here");
                false
            }
        }
    }

    fn translate(&mut self) -> Option<String> {
        let (top, nodes) = self.read_top()?;
        let settings = self.settings(&top);
        // Schematics, in order of first use.
        let schematics = self.schematics(&nodes);
        if self.diags.has_errors() {
            return None;
        }
        let mut schematic_text = String::new();
        for (_, name, text) in &schematics {
            let _ = name;
            schematic_text.push_str(text);
        }

        let placed = self.place_patches(&top, &nodes)?;
        let (env_name, k) = self.environment(&top, &nodes, &schematics, &placed);
        let v = &self.doc.value;
        let secrets_at = match (v.get("secretsProvider").and_then(scalar), v.get("secretsPath").and_then(scalar)) {
            (Some(p), _) => {
                format!("topf's secrets provider `{p}` (`secretsProvider`) keeps it: have it print the bundle")
            }
            (None, Some(p)) => format!("topf keeps it in `{p}` (`secretsPath`), SOPS-encrypted when its name says so"),
            (None, None) => "topf keeps it in `secrets.yaml` beside topf.yaml".to_owned(),
        };
        let target = &self.report.target;
        self.report.secrets = Some(format!(
            "The Talos secrets bundle is not read: {secrets_at}. Decrypt it and seal it for fleetc,\nthen delete the plaintext:\n\n```sh\nsops -d secrets.sops.yaml > secrets.yaml   # when it is encrypted\nfleetc secrets import {target} talos-secrets secrets.yaml && rm secrets.yaml\n```\n"
        ));
        let head = format!(
            "// Imported by `fleetc import topf` (topf v0.4.2's format) from {}.\n// IMPORT-REPORT.md lists what was not carried over, what changed on purpose and why,\n// and the placeholders marked CHANGE that `fleetc check` refuses until they are filled.\nfleet {} {{\n",
            self.report.source,
            q(&env_name)
        );
        Some(format!("{head}{settings}{schematic_text}{k}}}\n"))
    }

    /// topf.yaml's fields and nodes, checked as topf checks them; `None` (reported) when broken.
    fn read_top(&mut self) -> Option<(Top, Vec<TNode>)> {
        let v = self.doc.value.clone();
        let before = self.diags.error_count();
        for k in v.as_object().into_iter().flat_map(|m| m.keys()) {
            if !TOP_FIELDS.contains(&k.as_str()) {
                let l = self.line(&format!("/{k}"));
                self.report.not_carried(l, k, "not a topf field (topf v0.4.2 ignores it too)");
            }
        }
        let cluster_name = self.string("/clusterName", "clusterName");
        if cluster_name.is_none() {
            self.invalid("", "the config has no `clusterName`".into(), "topf requires the cluster's name");
        }
        let endpoint = self.string("/clusterEndpoint", "clusterEndpoint");
        let parsed = endpoint.as_deref().and_then(|e| {
            let p = parse_endpoint(e);
            if p.is_none() {
                self.invalid(
                    "/clusterEndpoint",
                    format!("`{e}` is not a URL"),
                    "topf reads `https://<host>:<port>` here",
                );
            }
            p
        });
        if endpoint.is_none() {
            self.invalid("", "the config has no `clusterEndpoint`".into(), "topf requires the Kubernetes API's URL");
        }
        let kubernetes = self.string("/kubernetesVersion", "kubernetesVersion");
        let talos = self.string("/talosVersion", "talosVersion");
        let cluster_schematic = self.string("/schematicId", "schematicId");
        let factory = self.string("/factory", "factory");
        let platform = self.string("/platform", "platform");
        let secure_boot = self.flag("/secureboot", "secureboot");
        let data = v.get("data").cloned().unwrap_or(Value::Null);
        if !data.is_null() && !data.is_object() {
            self.invalid("/data", "`data` is not a mapping".into(), "topf reads a mapping here");
        }
        let patches_dir = match (self.string("/patchesDir", "patchesDir"), self.string("/configDir", "configDir")) {
            (Some(p), _) => self.dir.join(p),
            (None, Some(c)) => {
                let l = self.line("/configDir");
                self.report.not_carried(l, "configDir", &format!("the name topf used for `patchesDir` before v0.4.0; topf v0.4.2 refuses it (`pkg/config/topf_config.go` l.80-82). The import reads `{c}` as the patches folder"));
                self.dir.join(c)
            }
            (None, None) => self.dir.to_path_buf(),
        };
        let mut nodes = Vec::new();
        match v.get("nodes") {
            Some(Value::Array(items)) => {
                for (i, n) in items.iter().enumerate() {
                    if let Some(n) = self.node(i, n, cluster_schematic.as_deref(), secure_boot) {
                        nodes.push(n);
                    }
                }
            }
            None | Some(Value::Null) => {}
            Some(_) => self.invalid("/nodes", "`nodes` is not a list".into(), "topf reads a list of nodes here"),
        }
        if v.get("nodesProvider").is_some() {
            let l = self.line("/nodesProvider");
            self.report.not_carried(
                l,
                "nodesProvider",
                "a program topf runs for more nodes; the import runs nothing: add the nodes it prints to fleet.kdl",
            );
        }
        if nodes.is_empty() && self.diags.error_count() == before {
            self.invalid("/nodes", "the config has no node".into(), "fleetc imports the nodes topf.yaml lists");
        }
        for (i, n) in nodes.iter().enumerate() {
            if nodes[..i].iter().any(|m| m.host == n.host) {
                let ptr = format!("{}/host", n.ptr);
                self.invalid(&ptr, format!("the host `{}` is listed twice", n.host), "a second node of this host");
            }
        }
        if self.diags.error_count() > before {
            return None;
        }
        let cluster_name = cluster_name.unwrap_or_default();
        let (ep_host, ep_port) = parsed.unwrap_or_default();

        // Names: a host's first label; the cluster is their common `<prefix>-`.
        for n in &mut nodes {
            n.name = dns_label(n.host.split('.').next().unwrap_or_default());
        }
        let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let prefixed = common_name_prefix(&names);
        let cluster = prefixed.clone().unwrap_or_else(|| dns_label(&cluster_name));
        for n in &mut nodes {
            if let Some(rest) = n.name.strip_prefix(&format!("{cluster}-"))
                && is_dns_label(rest)
            {
                n.name = rest.to_owned();
            }
        }
        if cluster != cluster_name {
            let l = self.line("/clusterName");
            self.report.deliberate(l, "clusterName", &format!("the cluster is `{cluster}`{}: Talos's `cluster.clusterName` becomes `{cluster}` instead of `{cluster_name}`", if prefixed.is_some() { " (the hosts' common prefix, so that fleetc's `<cluster>-<node>` keeps their names)" } else { " (a DNS label)" }));
        }
        let talos_at = if talos.is_some() { self.line("/talosVersion") } else { 0 };
        let (talos_kdl, _) = super::talos_version(
            talos.as_deref(),
            (
                TOPF_DEFAULT_TALOS,
                &format!(
                    "topf.yaml names no talosVersion: topf v0.4.2 uses its Talos machinery's, {TOPF_DEFAULT_TALOS}."
                ),
            ),
            talos_at,
            self.opts,
            &mut self.report,
        );
        Some((
            Top {
                cluster_name,
                cluster,
                endpoint: endpoint.unwrap_or_default(),
                ep_host,
                ep_port,
                kubernetes,
                talos,
                talos_kdl,
                factory,
                platform,
                data,
                patches_dir,
            },
            nodes,
        ))
    }

    /// The fleet's `talos` and `kubernetes`, and the report of what topf.yaml sets that
    /// fleetc does not model.
    fn settings(&mut self, top: &Top) -> String {
        let v = self.doc.value.clone();
        let Top { talos, kubernetes, factory, platform, data, .. } = top;
        let (factory, platform) = (factory.clone(), platform.clone());
        // Versions and the platform.
        let mut k = top.talos_kdl.clone();
        match &kubernetes {
            Some(v) => k.push_str(&format!("kubernetes {}\n", q(v.trim_start_matches('v')))),
            None => {
                k.push_str(
                    "// topf.yaml names no kubernetesVersion (topf requires one). CHANGE\nkubernetes \"CHANGE-ME\"\n",
                );
                self.report.placeholder(
                    0,
                    "kubernetesVersion",
                    "the Kubernetes version: topf requires it, and topf.yaml names none",
                );
            }
        }
        if let Some(f) = factory.filter(|f| f != "factory.talos.dev") {
            let l = self.line("/factory");
            self.report.not_carried(
                l,
                "factory",
                &format!("`{f}`: fleetc's installer and boot media come from factory.talos.dev"),
            );
        }
        if let Some(p) = platform.filter(|p| p != "metal") {
            let l = self.line("/platform");
            self.report.not_carried(l, "platform", &format!("`{p}`: the fleet is bare metal (`metal`), the machines topf configures exist already; a cloud's platform is an environment of its own in fleetc"));
        }
        for n in v.get("nodes").and_then(Value::as_array).into_iter().flatten().enumerate() {
            for (key, why) in [
                ("talosVersion", "fleetc runs one Talos version per cluster (`talos`); a node's own is not modeled"),
                ("factory", "fleetc's installer comes from factory.talos.dev"),
                ("platform", "the fleet is bare metal (`metal`)"),
            ] {
                if let Some(x) = n.1.get(key).and_then(scalar) {
                    let same = match key {
                        "talosVersion" => {
                            talos.as_deref().map(|t| t.trim_start_matches('v')) == Some(x.trim_start_matches('v'))
                        }
                        "factory" => x == "factory.talos.dev",
                        _ => x == "metal",
                    };
                    if !same {
                        let l = self.line(&format!("/nodes/{}/{key}", n.0));
                        self.report.not_carried(
                            l,
                            &format!("nodes[{}].{key}", n.1.get("host").and_then(scalar).unwrap_or_default()),
                            why,
                        );
                    }
                }
            }
        }
        self.report.deliberate(0, "cluster.discovery.enabled", "Talos turns discovery on by default and topf keeps it; fleetc turns it off for a cluster with a private endpoint (R21, `fleet::discovery::private-cluster`)");
        if !data.is_null() {
            let l = self.line("/data");
            self.report.not_carried(
                l,
                "data",
                "topf's template data: the import renders the `.tpl` patches with it, and fleet.kdl keeps no copy",
            );
        }
        k
    }

    /// Every patch as each node gets it, what fleet.kdl models taken out, placed on the level
    /// where all its nodes get the same.
    fn place_patches(&mut self, top: &Top, nodes: &[TNode]) -> Option<Placed> {
        let Top { cluster_name, endpoint, kubernetes, talos, data, patches_dir, ep_host, .. } = top;
        // Patches.
        let sources = self.patch_sources(patches_dir, nodes);
        if self.diags.has_errors() {
            return None;
        }
        let ctx = json!({
            "ClusterName": cluster_name,
            "ClusterEndpoint": endpoint,
            "KubernetesVersion": kubernetes.clone().unwrap_or_default(),
            "TalosVersion": talos.clone().unwrap_or_default(),
            "Data": data,
        });
        let ep_ip = ep_host.parse::<Ipv4Addr>().ok();
        let mut taken: Vec<Taken> = vec![Taken::default(); nodes.len()];
        // Per level: the patches fleet.kdl writes on the cluster, the control plane, every
        // worker pool, and each node.
        let mut on_cluster = Vec::new();
        let mut on_cp = Vec::new();
        let mut on_workers = Vec::new();
        let mut on_node: Vec<Vec<String>> = vec![Vec::new(); nodes.len()];
        let mut split_shared = false;
        for src in &sources {
            let reach: Vec<usize> = (0..nodes.len())
                .filter(|&i| match (&src.host, src.role) {
                    (Some(h), _) => *h == nodes[i].host,
                    (None, Some(cp)) => nodes[i].cp == cp,
                    (None, None) => true,
                })
                .collect();
            if reach.is_empty() {
                continue;
            }
            let outs: Vec<Rendered> =
                reach.iter().map(|&i| self.render(src, &nodes[i], &ctx, ep_host, ep_ip, &mut taken[i])).collect();
            if self.diags.has_errors() {
                return None;
            }
            let dest = dest_path(&src.rel);
            if let Some(Rendered::Refused(why)) = outs.iter().find(|o| matches!(o, Rendered::Refused(_))) {
                self.report.not_carried(0, &format!("patch {}", src.rel), why);
                continue;
            }
            if outs.iter().all(|o| *o == outs[0]) {
                if let Rendered::Text(t) = &outs[0] {
                    let path = self.put(dest, t.clone());
                    match (&src.host, src.role) {
                        (Some(_), _) => on_node[reach[0]].push(path),
                        (None, Some(true)) => on_cp.push(path),
                        (None, Some(false)) => on_workers.push(path),
                        (None, None) => on_cluster.push(path),
                    }
                }
                continue;
            }
            split_shared = true;
            for (o, &i) in outs.iter().zip(&reach) {
                if let Rendered::Text(t) = o {
                    let (stem, ext) = dest.rsplit_once('.').unwrap_or((&dest, "yaml"));
                    let path = self.put(format!("{stem}.{}.{ext}", nodes[i].name), t.clone());
                    on_node[i].push(path);
                }
            }
            let l = 0;
            self.report.deliberate(l, &format!("patch {}", src.rel), "its nodes render it differently: written once per node (`<file>.<node>.yaml`), applied after the pools' patches instead of before them");
        }
        if split_shared && (!on_cp.is_empty() || !on_workers.is_empty()) {
            self.report.deliberate(0, "patches (order)", "topf applies `all/`, then the role's folder, then `node/<host>/`; a patch of `all/` written per node comes after the role's patches in fleetc: the configs differ only where both set the same field");
        }

        Some(Placed { on_cluster, on_cp, on_workers, on_node, taken })
    }

    /// The `environment` node: the network, the cluster, its pools and nodes.
    fn environment(
        &mut self,
        top: &Top,
        nodes: &[TNode],
        schematics: &[(Option<String>, String, String)],
        placed: &Placed,
    ) -> (String, String) {
        let Top { cluster_name, cluster, ep_host, ep_port, .. } = top;
        let ep_port = *ep_port;
        let Placed { on_cluster, on_cp, on_workers, on_node, taken } = placed;
        let ep_ip = ep_host.parse::<Ipv4Addr>().ok();
        // The environment.
        let env_name = dns_label(cluster_name);
        let mut k = format!("environment {} {{\n", q(&env_name));
        k.push_str("// topf configures machines that exist (talosctl apply-config): bare metal to fleetc.\nmetal\n");
        match network(nodes, ep_ip) {
            Some(n) => k.push_str(&format!(
                "// The nodes' network, from their addresses (topf.yaml states none): check it.\nnetwork {}\nadmin-ranges {}\n",
                q(&n),
                q(&n)
            )),
            None => {
                k.push_str("// No IPv4 node address to derive the network from (fleetc is IPv4 only). CHANGE\nnetwork \"CHANGE-ME\"\n");
                let l = self.line("/nodes");
                self.report.placeholder(l, "environment network", "the nodes' IPv4 network: no node has an IPv4 `ip`");
            }
        }
        k.push_str(&format!("cluster {} {{\n", q(cluster)));
        self.report.target = format!("{env_name}/{cluster}");
        let port = if ep_port == 6443 { String::new() } else { format!(" port={ep_port}") };
        let vip = taken.iter().zip(nodes).filter(|(_, n)| n.cp).find_map(|(t, _)| t.vip.clone());
        let ep_line = self.line("/clusterEndpoint");
        match (ep_ip, &vip) {
            (Some(ip), _) => {
                k.push_str(&format!("endpoint address={}{port}\n", q(&ip.to_string())));
                // A one-node control plane keeps its own address as the endpoint
                // (`Cluster::endpoint_node`); any other node's address is refused.
                let sole_cp = nodes.iter().filter(|n| n.cp).count() == 1;
                if let Some(n) = nodes.iter().find(|n| n.ip == Some(IpAddr::V4(ip)) && !(n.cp && sole_cp)) {
                    self.report.deliberate(ep_line, "clusterEndpoint", &format!("the endpoint is node `{}`'s own address; on metal fleetc's endpoint is a virtual IP the control plane shares (Layer2VIPConfig), or the node's own address only when it is a one-node control plane: `fleetc check` refuses it until `endpoint address=` names a free address of the network", n.host));
                }
            }
            (None, Some(v)) => {
                k.push_str(&format!("// topf.yaml's endpoint is {ep_host}; fleetc's endpoint is an address: the control plane's VIP.\nendpoint address={}{port}\ncert-sans {}\n", q(v), q(ep_host)));
                self.report.deliberate(ep_line, "clusterEndpoint", &format!("`{ep_host}` is a name; fleetc's endpoint is the VIP `{v}` the patches give the control plane, and `{ep_host}` is kept as a certificate SAN"));
            }
            // A name no patch gives a VIP: the user's DNS or load balancer resolves it, as
            // topf's nodes use it (docs/metal.md, "An endpoint by name").
            (None, None) if crate::model::values::is_dns_name(ep_host) => {
                k.push_str(&format!("// topf.yaml's endpoint is the name {ep_host}, which no patch holds as a VIP: your DNS or\n// load balancer resolves it to the control plane, and fleetc holds no address for it.\nendpoint name={}{port}\n", q(ep_host)));
            }
            (None, None) => {
                k.push_str(&format!("// topf.yaml's endpoint is {ep_host}, neither an address nor a DNS name. CHANGE\nendpoint address=\"CHANGE-ME\"{port}\ncert-sans {}\n", q(ep_host)));
                self.report.placeholder(ep_line, "clusterEndpoint", &format!("the address behind `{ep_host}` (a VIP or a load balancer): fleetc's endpoint is an IPv4 address or a DNS name"));
            }
        }
        if nodes.iter().filter(|n| n.cp).count() == 1 {
            k.push_str(
                "// One control-plane node, as in topf.yaml (R29 asks three; a lab may have one).\nsingle-node #true\n",
            );
        }
        for p in on_cluster {
            k.push_str(&format!("patch {}\n", q(p)));
        }
        let pools = pools(nodes, schematics);
        for (head, members, schematic, sb) in &pools {
            let cp = head == "control-plane";
            let mut props = format!(" schematic={}", q(schematic));
            if *sb {
                props.push_str(" secure-boot=#true");
            }
            k.push_str(&format!("{head}{props} {{\n"));
            for p in if cp { on_cp } else { on_workers } {
                k.push_str(&format!("patch {}\n", q(p)));
            }
            for &i in members {
                k.push_str(&self.node_kdl(&nodes[i], &taken[i], &on_node[i], cluster));
            }
            k.push_str("}\n");
            if cp {
                for &i in members {
                    if nodes[i].schematic != nodes[members[0]].schematic || nodes[i].secure_boot != *sb {
                        let l = self.line(&format!("{}/schematicId", nodes[i].ptr));
                        self.report.deliberate(l, &format!("nodes[{}].schematicId", nodes[i].host), &format!("fleetc has one control-plane pool and a schematic per pool: this node runs the pool's schematic `{schematic}`"));
                    }
                }
            }
        }
        k.push_str(&format!("// The cluster's Talos secrets bundle (R14): topf's secrets.yaml, decrypted with `sops -d`\n// when encrypted, then `fleetc secrets import {env_name}/{cluster} talos-secrets <file>`.\nsealed \"talos-secrets\"\n}}\n}}\n"));
        (env_name, k)
    }

    fn node(&mut self, i: usize, n: &Value, cluster_schematic: Option<&str>, cluster_sb: bool) -> Option<TNode> {
        let ptr = format!("/nodes/{i}");
        let Some(m) = n.as_object() else {
            self.invalid(&ptr, "a node is not a mapping".into(), "topf reads `host`, `ip`, `role`, … here");
            return None;
        };
        let host = self.string(&format!("{ptr}/host"), "host");
        if host.is_none() {
            self.invalid(&ptr, "a node has no `host`".into(), "topf refuses an empty `host` (pkg/config/node.go l.52)");
        }
        let role = self.string(&format!("{ptr}/role"), "role");
        let cp = match role.as_deref() {
            Some("control-plane") => true,
            Some("worker") => false,
            Some(r) => {
                self.invalid(
                    &format!("{ptr}/role"),
                    format!("`{r}` is not a role"),
                    "topf reads `control-plane` or `worker` (pkg/config/node_role.go)",
                );
                false
            }
            None => {
                self.invalid(
                    &ptr,
                    "a node has no `role`".into(),
                    "topf refuses an empty `role` (pkg/config/node.go l.56)",
                );
                false
            }
        };
        let ip = match self.string(&format!("{ptr}/ip"), "ip") {
            None => None,
            Some(s) => match s.parse::<IpAddr>() {
                Ok(a) => Some(a),
                Err(_) => {
                    self.invalid(
                        &format!("{ptr}/ip"),
                        format!("`{s}` is not an IP address"),
                        "topf reads an address here (`netip.Addr`)",
                    );
                    None
                }
            },
        };
        let schematic =
            self.string(&format!("{ptr}/schematicId"), "schematicId").or(cluster_schematic.map(str::to_owned));
        let secure_boot = self.flag(&format!("{ptr}/secureboot"), "secureboot") || cluster_sb;
        let data = m.get("data").cloned().unwrap_or(Value::Null);
        if !data.is_null() && !data.is_object() {
            self.invalid(&format!("{ptr}/data"), "`data` is not a mapping".into(), "topf reads a mapping here");
        }
        let host = host?;
        for key in m.keys().filter(|k| !NODE_FIELDS.contains(&k.as_str())) {
            let l = self.line(&format!("{ptr}/{key}"));
            self.report.not_carried(
                l,
                &format!("nodes[{host}].{key}"),
                "not a topf node field (topf v0.4.2 ignores it too)",
            );
        }
        Some(TNode { ptr, name: host.clone(), host, ip, cp, schematic, secure_boot, data })
    }

    /// The schematics: (schematicId as written, name, fleet.kdl text), in order of first use.
    fn schematics(&mut self, nodes: &[TNode]) -> Vec<(Option<String>, String, String)> {
        let mut out: Vec<(Option<String>, String, String)> = Vec::new();
        for n in nodes {
            if out.iter().any(|(s, _, _)| *s == n.schematic) {
                continue;
            }
            let ptr = if self.doc.value.pointer(&format!("{}/schematicId", n.ptr)).is_some() {
                format!("{}/schematicId", n.ptr)
            } else {
                "/schematicId".to_owned()
            };
            let l = self.line(&ptr);
            let taken: Vec<String> = out.iter().map(|(_, name, _)| name.clone()).collect();
            let unique = |base: String| {
                let mut name = base.clone();
                let mut i = 1;
                while taken.contains(&name) {
                    i += 1;
                    name = format!("{base}-{i}");
                }
                name
            };
            let (name, text) = match n.schematic.as_deref() {
                None | Some(DEFAULT_SCHEMATIC) => {
                    let name = unique("vanilla".into());
                    (
                        name.clone(),
                        format!(
                            "// topf installs the factory's empty schematic ({DEFAULT_SCHEMATIC}).\nschematic {} {{\n}}\n",
                            q(&name)
                        ),
                    )
                }
                Some(s) if s.starts_with('@') => {
                    let rel = s[1..].trim();
                    let path = self.dir.join(rel);
                    let stem = Path::new(rel)
                        .file_name()
                        .map_or_else(|| "schematic".to_owned(), |f| f.to_string_lossy().into_owned());
                    let stem = stem.trim_end_matches(".tpl").trim_end_matches(".yaml").trim_end_matches(".yml");
                    let name = unique(dns_label(stem));
                    match std::fs::read_to_string(&path) {
                        Err(e) => {
                            let span = self.doc.place(&ptr);
                            self.diags.push(
                                Diagnostic::new(
                                    &codes::IMPORT_FILE_UNREADABLE,
                                    format!("cannot read the schematic `{rel}`: {e}"),
                                )
                                .at(span)
                                .label(format!("{} does not read", path.display())),
                            );
                            continue;
                        }
                        Ok(t) if rel.ends_with(".tpl") => {
                            let _ = t;
                            self.report.placeholder(l, &format!("schematic {rel}"), "a Go-templated schematic file, rendered per node by topf: write its extensions into the schematic marked CHANGE");
                            (
                                name.clone(),
                                format!(
                                    "// topf renders {rel} per node (a template). CHANGE: write its extensions here.\nschematic {} {{\nextension \"CHANGE-ME\"\n}}\n",
                                    q(&name)
                                ),
                            )
                        }
                        Ok(t) => {
                            let file = self.sources.add(rel.to_owned(), t.clone());
                            match read_yaml(file, &t) {
                                Ok(docs) if docs.first().is_some_and(|d| d.value.is_object()) => {
                                    let body = schematic_kdl(&docs[0].value, &name, &mut self.report);
                                    (name, format!("// From topf's schematic file {rel}.\n{body}"))
                                }
                                Ok(docs) => {
                                    let span = docs.first().map_or(Span::new(file, 0, 0), |d| d.span);
                                    self.diags.push(
                                        Diagnostic::new(
                                            &codes::IMPORT_INVALID,
                                            format!("the schematic `{rel}` is not a mapping"),
                                        )
                                        .at(span)
                                        .label("topf reads a factory schematic here"),
                                    );
                                    continue;
                                }
                                Err(PatchError::Yaml { span, message }) => {
                                    self.diags.push(
                                        Diagnostic::new(
                                            &codes::IMPORT_INVALID,
                                            format!("the schematic `{rel}` is not YAML: {message}"),
                                        )
                                        .at(span)
                                        .label("here"),
                                    );
                                    continue;
                                }
                                Err(_) => continue,
                            }
                        }
                    }
                }
                Some(id) => {
                    let name = unique(format!("id-{}", id.get(..8).unwrap_or(id).to_ascii_lowercase()));
                    self.report.placeholder(l, &format!("schematicId {id}"), "topf names this schematic by its Image Factory ID, which cannot be read back offline: write its extensions into the schematic marked CHANGE (`curl https://factory.talos.dev/schematics/<id>` prints them); its ID must then match (`fleetc schematic id out/schematics/<name>.yaml`)");
                    (
                        name.clone(),
                        format!(
                            "// topf.yaml names this schematic by its ID only. CHANGE: write its extensions, which\n// `curl https://factory.talos.dev/schematics/{id}` prints.\nschematic {} {{\nextension \"CHANGE-ME\"\n}}\n",
                            q(&name)
                        ),
                    )
                }
            };
            out.push((n.schematic.clone(), name, text));
        }
        out
    }

    /// The patch files topf reads for these nodes, in its order: `all/`, `control-plane/`,
    /// `worker/`, then each `node/<host>/` (every node gets its role's after `all/`, its own
    /// last, `pkg/config/patches.go` l.40-65).
    fn patch_sources(&mut self, dir: &Path, nodes: &[TNode]) -> Vec<Source> {
        let mut out = Vec::new();
        let mut folders: Vec<(String, Option<bool>, Option<String>)> = vec![
            ("all".into(), None, None),
            ("control-plane".into(), Some(true), None),
            ("worker".into(), Some(false), None),
        ];
        for n in nodes {
            folders.push((format!("node/{}", n.host), None, Some(n.host.clone())));
        }
        for (folder, role, host) in folders {
            let mut files = Vec::new();
            walk(&dir.join(&folder), &mut files);
            for path in files {
                let rel = path.strip_prefix(dir).unwrap_or(&path).to_string_lossy().replace('\\', "/");
                match std::fs::read_to_string(&path) {
                    Ok(t) => {
                        let file = self.sources.add(rel.clone(), t);
                        out.push(Source { rel, file, role, host: host.clone() });
                    }
                    Err(e) => {
                        let span = Span::new(self.cfg, 0, 0);
                        self.diags.push(
                            Diagnostic::new(
                                &codes::IMPORT_FILE_UNREADABLE,
                                format!("cannot read the patch `{rel}`: {e}"),
                            )
                            .at(span)
                            .label("topf reads every patch of its folders"),
                        );
                    }
                }
            }
        }
        // Folders of hosts topf.yaml does not list: topf never reads them.
        for e in std::fs::read_dir(dir.join("node")).into_iter().flatten().flatten() {
            let h = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() && !nodes.iter().any(|n| n.host == h) {
                self.report.not_carried(
                    0,
                    &format!("node/{h}/"),
                    "names no node of topf.yaml: topf reads it for no node either",
                );
            }
        }
        out
    }

    /// One patch file as node `n` gets it, with what fleet.kdl models taken out into `taken`.
    fn render(
        &mut self,
        src: &Source,
        n: &TNode,
        ctx: &Value,
        ep_host: &str,
        ep_ip: Option<Ipv4Addr>,
        taken: &mut Taken,
    ) -> Rendered {
        let raw = self.sources.get(src.file).text.clone();
        let template = src.rel.ends_with(".tpl");
        let text = if template {
            let mut c = ctx.clone();
            c["SchematicID"] = Value::String(n.schematic.clone().unwrap_or_else(|| DEFAULT_SCHEMATIC.into()));
            // topf's `config.Node`, its own fields as written (`pkg/config/node.go` l.14-32).
            let own =
                |key: &str| self.doc.value.pointer(&format!("{}/{key}", n.ptr)).and_then(scalar).unwrap_or_default();
            c["Node"] = json!({
                "Host": n.host,
                "IP": n.ip.map(|a| a.to_string()),
                "Role": if n.cp { "control-plane" } else { "worker" },
                "Data": n.data,
                "TalosVersion": own("talosVersion"),
                "SchematicID": own("schematicId"),
                "Factory": own("factory"),
                "Platform": own("platform"),
                "SecureBoot": self.doc.value.pointer(&format!("{}/secureboot", n.ptr)) == Some(&Value::Bool(true)),
            });
            if raw.contains(".PatchesDir") {
                return Rendered::Refused(
                    "uses `.PatchesDir`, the absolute path of topf's folder on the machine that renders it: write the patch by hand".into(),
                );
            }
            if raw.contains(".SchematicID") && n.schematic.as_deref().is_some_and(|s| s.starts_with('@')) {
                return Rendered::Refused(
                    "uses `.SchematicID`, the ID topf computes from a schematic file: write the patch by hand".into(),
                );
            }
            match gotmpl::render(&raw, &c) {
                Ok(t) => t,
                Err(e) => {
                    return Rendered::Refused(format!(
                        "a Go template the import does not render for node `{}` ({e}); write its result as a patch by hand",
                        n.host
                    ));
                }
            }
        } else {
            if raw.contains("sops:") && raw.contains("ENC[") {
                return Rendered::Refused("SOPS-encrypted: not read. Decrypt it, check that it holds no secret fleet.kdl should seal, and add it with `patch`".into());
            }
            if raw.contains("ref+") {
                return Rendered::Refused("holds a vals reference (`ref+…`) topf resolves when it reads the file: resolve it and add the patch with `patch`".into());
            }
            raw.clone()
        };
        let file = if template {
            self.sources.add(format!("{} (rendered for {})", src.rel, n.host), text.clone())
        } else {
            src.file
        };
        let docs = match read_yaml(file, &text) {
            Ok(d) => d,
            Err(PatchError::Yaml { span, message }) => {
                self.diags.push(
                    Diagnostic::new(&codes::IMPORT_INVALID, format!("the patch `{}` is not YAML: {message}", src.rel))
                        .at(span)
                        .label("topf fails to parse this patch too"),
                );
                return Rendered::Nothing;
            }
            Err(_) => return Rendered::Nothing,
        };
        let mut kept = Vec::new();
        let mut changed = false;
        for d in &docs {
            let mut v = d.value.clone();
            match &v {
                Value::Array(_) => {
                    self.diags.push(
                        Diagnostic::new(&codes::IMPORT_INVALID, format!("the patch `{}` is a JSON patch", src.rel))
                            .at(d.span)
                            .label("topf refuses a list of operations (pkg/config/patches.go l.212)"),
                    );
                    return Rendered::Nothing;
                }
                Value::Object(o) if o.is_empty() => continue,
                Value::Object(_) => {}
                _ => {
                    self.diags.push(
                        Diagnostic::new(
                            &codes::IMPORT_INVALID,
                            format!("a document of the patch `{}` is not a mapping", src.rel),
                        )
                        .at(d.span)
                        .label("topf reads a mapping here"),
                    );
                    return Rendered::Nothing;
                }
            }
            if take(&mut v, taken, ep_host, ep_ip, n.cp) {
                changed = true;
            }
            if let Some(resolver) = netdocs::search_domain_as_resolver(&mut v) {
                changed = true;
                kept.push(resolver);
            }
            if v.as_object().is_some_and(|o| !o.is_empty()) {
                kept.push(v);
            }
        }
        if kept.is_empty() {
            return Rendered::Nothing;
        }
        let out = if changed {
            format!(
                "# {} of topf's patches, without what fleet.kdl now says (IMPORT-REPORT.md).\n{}",
                src.rel,
                yaml_docs(&kept)
            )
        } else if template {
            format!(
                "# {} of topf's patches, rendered by `fleetc import topf`.\n{}",
                src.rel,
                text.trim_start_matches('\n')
            )
        } else {
            text
        };
        Rendered::Text(if out.ends_with('\n') { out } else { format!("{out}\n") })
    }

    fn put(&mut self, path: String, text: String) -> String {
        self.files.insert(path.clone(), text);
        path
    }

    fn node_kdl(&mut self, n: &TNode, t: &Taken, patches: &[String], cluster: &str) -> String {
        let mut k = format!("node {} {{\n", q(&n.name));
        match n.ip {
            Some(IpAddr::V4(a)) => k.push_str(&format!("address {}\n", q(&a.to_string()))),
            other => {
                let why = if other.is_some() {
                    "an IPv6 `ip`; fleetc's node address is IPv4"
                } else {
                    "no `ip` (topf then reaches the node by its host name)"
                };
                k.push_str("// CHANGE: the node's IPv4 address.\naddress \"CHANGE-ME\"\n");
                let l = self.line(&n.ptr);
                self.report.placeholder(l, &format!("nodes[{}] ip", n.host), why);
            }
        }
        let serial = t.disk.contains_key("serial") || t.disk.contains_key("wwid");
        match &t.mac {
            Some(m) => k.push_str(&format!("mac {}\n", q(m))),
            None if !serial => {
                k.push_str("// CHANGE: the MAC of its network port (`talosctl get links --insecure -n <ip>`),\n// by which `fleetc apply` recognises the machine before it sends its config (R13).\nmac \"CHANGE-ME\"\n");
                let l = self.line(&n.ptr);
                self.report.placeholder(l, &format!("nodes[{}] mac", n.host), "the MAC of its link (or its install disk's serial): fleetc recognises a machine before it sends it a config (R13)");
            }
            None => {}
        }
        let mut props = Vec::new();
        for (key, prop) in [
            ("size", "size"),
            ("model", "model"),
            ("serial", "serial"),
            ("wwid", "wwid"),
            ("busPath", "bus-path"),
            ("device", "device"),
        ] {
            if let Some(v) = t.disk.get(key).and_then(scalar) {
                props.push(format!("{prop}={}", q(&v)));
            }
        }
        if !props.is_empty() {
            k.push_str(&format!("install-disk {}\n", props.join(" ")));
        }
        k.push_str(&t.net);
        if !t.nameservers.is_empty() {
            k.push_str(&format!("nameservers {}\n", t.nameservers.iter().map(|s| q(s)).collect::<Vec<_>>().join(" ")));
        }
        if let Some(i) = &t.image {
            let l = self.line(&n.ptr);
            self.report.not_carried(l, &format!("nodes[{}] machine.install.image", n.host), &format!("`{i}`, pinned by a patch: fleetc's installer is the pool's schematic's (`factory.talos.dev/metal-installer/<id>:<talos>`)"));
        }
        if t.mtu_dropped {
            let l = self.line(&n.ptr);
            self.report.deliberate(
                l,
                &format!("nodes[{}] BondConfig mtu", n.host),
                "`mtu: 1500`, Linux's default for a bond, left out: fleetc's `bond` has no MTU and writes none",
            );
        }
        for p in patches {
            k.push_str(&format!("patch {}\n", q(p)));
        }
        k.push_str("}\n");
        let fleetc_name = format!("{cluster}-{}", n.name);
        let was = t.hostname.clone().unwrap_or_default();
        if was != fleetc_name {
            let l = self.line(&format!("{}/host", n.ptr));
            let before = if was.is_empty() {
                "topf's patches set no hostname (Talos picks one)".to_owned()
            } else {
                format!("topf's patches name it `{was}`")
            };
            self.report.deliberate(l, &format!("nodes[{}].host", n.host), &format!("fleetc names a node `<cluster>-<name>`, its HostnameConfig: `{fleetc_name}`; {before} (a new Kubernetes Node when it changes: drain and delete the old one, or rename the node in fleet.kdl before you apply to a running cluster)"));
        }
        k
    }
}

/// Takes what fleet.kdl models out of one patch document; true when it changed it.
fn take(v: &mut Value, t: &mut Taken, ep_host: &str, ep_ip: Option<Ipv4Addr>, cp: bool) -> bool {
    let kind = v.get("kind").and_then(Value::as_str).map(str::to_owned);
    match kind.as_deref() {
        // fleetc writes the node's HostnameConfig from its name.
        Some("HostnameConfig") => {
            t.hostname = v.get("hostname").and_then(scalar);
            *v = json!({});
            true
        }
        // The endpoint's VIP: fleetc writes it from `endpoint` on the control plane's link.
        Some("Layer2VIPConfig") if cp => {
            let name = v.get("name").and_then(scalar).unwrap_or_default();
            let is_ep = ep_ip.map(|i| i.to_string()) == Some(name.clone());
            let ep_is_name = ep_host.parse::<IpAddr>().is_err();
            if (is_ep || ep_is_name) && name.parse::<Ipv4Addr>().is_ok() {
                t.vip = Some(name);
                *v = json!({});
                return true;
            }
            false
        }
        Some("LinkAliasConfig") => {
            if let Some(m) = v.pointer("/selector/match").and_then(Value::as_str).and_then(mac_of) {
                t.mac.get_or_insert(m);
            }
            false
        }
        // A static link or bond fleet.kdl can say (`link`, `bond`): fleetc writes its document.
        Some(k @ ("LinkConfig" | "BondConfig")) => match net_kdl(k, v) {
            Some((text, mtu)) => {
                t.net.push_str(&text);
                t.mtu_dropped |= mtu;
                *v = json!({});
                true
            }
            None => false,
        },
        Some(_) => false,
        None => {
            let mut changed = false;
            if let Some(install) = v.pointer_mut("/machine/install").and_then(Value::as_object_mut) {
                if let Some(d) = install.remove("disk") {
                    if let Some(s) = scalar(&d).filter(|s| !s.is_empty()) {
                        t.disk.insert("device".into(), Value::String(s));
                    }
                    changed = true;
                }
                if let Some(Value::Object(sel)) = install.get_mut("diskSelector") {
                    for key in ["size", "model", "serial", "wwid", "busPath"] {
                        if let Some(x) = sel.remove(key) {
                            if scalar(&x).is_some_and(|s| !s.is_empty()) {
                                t.disk.insert(key.into(), x);
                            }
                            changed = true;
                        }
                    }
                    if sel.is_empty() {
                        install.remove("diskSelector");
                    }
                }
                if let Some(i) = install.remove("image") {
                    t.image = scalar(&i);
                    changed = true;
                }
            }
            // The node's DNS servers: fleetc writes its ResolverConfig from `nameservers`.
            if let Some(Value::Array(ns)) =
                v.pointer_mut("/machine/network").and_then(|n| n.as_object_mut()).and_then(|n| n.remove("nameservers"))
            {
                t.nameservers = ns.iter().filter_map(scalar).collect();
                changed = true;
            }
            if changed {
                prune(v);
            }
            changed
        }
    }
}

/// A `LinkConfig` or `BondConfig` as a `link` or `bond` of fleet.kdl, when every field it sets
/// has a form there (static IPv4 addresses, routes by gateway; a bond's links and mode, and an
/// MTU of 1500, Linux's default, which is dropped: the flag says so). `None`: kept as a patch.
fn net_kdl(kind: &str, v: &Value) -> Option<(String, bool)> {
    let o = v.as_object()?;
    let name = o.get("name").and_then(Value::as_str)?;
    let bond = kind == "BondConfig";
    let allowed: &[&str] = if bond {
        &["apiVersion", "kind", "name", "links", "bondMode", "addresses", "routes", "mtu", "up"]
    } else {
        &["apiVersion", "kind", "name", "addresses", "routes", "up"]
    };
    if o.keys().any(|k| !allowed.contains(&k.as_str())) || o.get("up").is_some_and(|u| u != &Value::Bool(true)) {
        return None;
    }
    let mtu = match o.get("mtu") {
        None => false,
        Some(m) if m.as_u64() == Some(1500) => true,
        Some(_) => return None,
    };
    let mut body = String::new();
    let addresses = o.get("addresses").and_then(Value::as_array)?;
    if addresses.is_empty() {
        return None;
    }
    for a in addresses {
        let a = a.as_object()?;
        if a.keys().any(|k| k != "address") {
            return None;
        }
        let addr = a.get("address").and_then(Value::as_str)?;
        let (ip, prefix) = addr.split_once('/')?;
        ip.parse::<Ipv4Addr>().ok()?;
        prefix.parse::<u8>().ok().filter(|p| *p <= 32)?;
        body.push_str(&format!("address {}\n", q(addr)));
    }
    for r in o.get("routes").and_then(Value::as_array).into_iter().flatten() {
        let r = r.as_object()?;
        if r.keys().any(|k| !matches!(k.as_str(), "gateway" | "destination")) {
            return None;
        }
        let gw = r.get("gateway").and_then(Value::as_str)?;
        gw.parse::<Ipv4Addr>().ok()?;
        match r.get("destination").and_then(Value::as_str) {
            None | Some("0.0.0.0/0") => body.push_str(&format!("route gateway={}\n", q(gw))),
            Some(d) if !d.contains(':') => body.push_str(&format!("route to={} gateway={}\n", q(d), q(gw))),
            Some(_) => return None,
        }
    }
    if bond {
        let mode = o.get("bondMode").and_then(Value::as_str)?;
        let links: Vec<String> =
            o.get("links").and_then(Value::as_array)?.iter().map(|l| l.as_str().map(q)).collect::<Option<_>>()?;
        if links.is_empty() {
            return None;
        }
        Some((format!("bond {} mode={} {{\nlinks {}\n{body}}}\n", q(name), q(mode), links.join(" ")), mtu))
    } else {
        Some((format!("link {} {{\n{body}}}\n", q(name)), false))
    }
}

/// The MAC of a link alias's CEL selector: `glob("<mac>", mac(link.hardware_addr))` or
/// `mac(link.hardware_addr) == "<mac>"` (or `link.permanent_addr`, the NIC's own).
fn mac_of(expr: &str) -> Option<String> {
    if !expr.contains("link.hardware_addr") && !expr.contains("link.permanent_addr") {
        return None;
    }
    let start = expr.find('"')? + 1;
    let end = start + expr[start..].find('"')?;
    let m = expr[start..end].to_ascii_lowercase();
    let ok = m.len() == 17
        && m.split(':').count() == 6
        && m.split(':').all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()));
    ok.then_some(m)
}

/// Every file below `dir` whose name matches topf's `.*\.ya?ml(\.tpl)?` (unanchored, as Go's
/// `MatchString`: a name that holds `.yaml` or `.yml` anywhere), in `filepath.WalkDir`'s
/// lexical order, symlinks followed.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.file_name().is_some_and(|n| {
            let n = n.to_string_lossy();
            n.contains(".yaml") || n.contains(".yml")
        }) {
            out.push(p);
        }
    }
}

/// Where a patch of the patches folder goes in the fleet directory.
fn dest_path(rel: &str) -> String {
    format!("patches/{}", rel.strip_suffix(".tpl").unwrap_or(rel))
}

/// The environment's network: the nodes' (and the endpoint's) /24, widened until it holds
/// them all.
fn network(nodes: &[TNode], ep: Option<Ipv4Addr>) -> Option<String> {
    let mut addrs: Vec<u32> = nodes
        .iter()
        .filter_map(|n| match n.ip {
            Some(IpAddr::V4(a)) => Some(u32::from(a)),
            _ => None,
        })
        .collect();
    let base = *addrs.first()?;
    addrs.extend(ep.map(u32::from));
    let mask = |p: u32| if p == 0 { 0 } else { u32::MAX << (32 - p) };
    let mut prefix = 24;
    while prefix > 0 && addrs.iter().any(|a| a & mask(prefix) != base & mask(prefix)) {
        prefix -= 1;
    }
    Some(format!("{}/{prefix}", Ipv4Addr::from(base & mask(prefix))))
}

type Pool = (String, Vec<usize>, String, bool);

/// The pools: the control plane (its most common schematic), and one worker pool per
/// (schematic, SecureBoot), the first `workers`.
fn pools(nodes: &[TNode], schematics: &[(Option<String>, String, String)]) -> Vec<Pool> {
    let name_of = |n: &TNode| {
        schematics.iter().find(|(s, _, _)| *s == n.schematic).map(|(_, name, _)| name.clone()).unwrap_or_default()
    };
    let mut out = Vec::new();
    let cps: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].cp).collect();
    if !cps.is_empty() {
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for &i in &cps {
            *count.entry(name_of(&nodes[i])).or_default() += 1;
        }
        let best =
            count.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|(n, _)| n).unwrap_or_default();
        let sb = cps.iter().all(|&i| nodes[i].secure_boot);
        out.push(("control-plane".to_owned(), cps, best, sb));
    }
    let mut groups: Vec<((String, bool), Vec<usize>)> = Vec::new();
    for i in (0..nodes.len()).filter(|&i| !nodes[i].cp) {
        let key = (name_of(&nodes[i]), nodes[i].secure_boot);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    for (j, ((s, sb), members)) in groups.into_iter().enumerate() {
        let name = if j == 0 { "workers".to_owned() } else { format!("workers-{s}") };
        out.push((format!("pool {}", q(&name)), members, s, sb));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_alias_selector_gives_its_mac() {
        assert_eq!(
            mac_of("glob(\"A4:BB:6D:6B:05:88\", mac(link.hardware_addr))").as_deref(),
            Some("a4:bb:6d:6b:05:88")
        );
        assert_eq!(mac_of("mac(link.hardware_addr) == \"a4:bb:6d:6b:05:88\"").as_deref(), Some("a4:bb:6d:6b:05:88"));
        assert_eq!(mac_of("mac(link.permanent_addr) == \"6c:4b:90:21:be:a5\"").as_deref(), Some("6c:4b:90:21:be:a5"));
        assert_eq!(mac_of("link.driver == \"e1000\""), None);
    }

    #[test]
    fn the_install_disk_and_hostname_are_taken_out_of_a_patch() {
        let mut t = Taken::default();
        let mut v = json!({"machine": {"install": {"disk": "/dev/sda", "wipe": true}}});
        assert!(take(&mut v, &mut t, "10.0.0.10", "10.0.0.10".parse().ok(), true));
        assert_eq!(v, json!({"machine": {"install": {"wipe": true}}}));
        assert_eq!(t.disk.get("device"), Some(&json!("/dev/sda")));
        let mut v = json!({"machine": {"install": {"diskSelector": {"serial": "S1"}}}});
        assert!(take(&mut v, &mut t, "10.0.0.10", None, true));
        assert_eq!(v, json!({}));
        let mut v = json!({"apiVersion": "v1alpha1", "kind": "HostnameConfig", "hostname": "cp-1"});
        assert!(take(&mut v, &mut t, "10.0.0.10", None, true));
        assert_eq!(t.hostname.as_deref(), Some("cp-1"));
    }

    #[test]
    fn topf_reads_every_name_that_holds_yaml() {
        assert_eq!(dest_path("all/01-hostname.yaml.tpl"), "patches/all/01-hostname.yaml");
        assert_eq!(dest_path("node/cp-1/a.yml"), "patches/node/cp-1/a.yml");
    }
}
