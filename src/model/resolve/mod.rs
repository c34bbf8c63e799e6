//! From the syntax tree to the [`Fleet`]: `from=` inheritance between environments
//! ([`inherit`]), layered defaults (fleet → environment → cluster → pool), typed values, and
//! vendored files read through a [`Loader`].

mod duplicates;
mod inherit;
mod nodes;
mod patches;
mod reader;

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use reader::{Reader, missing, unknown_child};

use super::values;
use super::*;
use crate::diag::{Diagnostic, Diagnostics, Sources, Span, codes};
use crate::syntax::{Node, ValueKind};

/// Reads files that fleet.kdl references, by their path relative to the fleet's directory.
/// The build reads the working tree; `diff --base` reads a git revision.
pub trait Loader {
    /// The file's text, or a message saying why it cannot be read.
    fn read(&self, rel_path: &str) -> Result<String, String>;
    /// Whether a file or directory exists at `rel_path`. A loader that cannot tell says
    /// yes, so that no warning is made up.
    fn exists(&self, _rel_path: &str) -> bool {
        true
    }
    /// The names in the directory `rel_dir` (`""` is fleet.kdl's own), for "did you mean"
    /// helps on a path that does not exist. A loader that cannot list says nothing.
    fn entries(&self, _rel_dir: &str) -> Vec<String> {
        Vec::new()
    }
}

/// The existing path nearest to `rel`, which does not exist: each component that does not
/// exist is replaced by the closest name of its directory (`apps/whoamii` → `apps/whoami`,
/// `vendor/cilium-1.18.5.yaml` → `vendor/cilium-1.18.4.yaml`). `None` when a component has no
/// close name, or the loader cannot list.
pub fn nearest_path(loader: &dyn Loader, rel: &str) -> Option<String> {
    let mut at = String::new();
    let mut changed = false;
    for comp in rel.trim_end_matches('/').split('/') {
        let candidate = if at.is_empty() { comp.to_owned() } else { format!("{at}/{comp}") };
        if !comp.is_empty() && loader.exists(&candidate) {
            at = candidate;
            continue;
        }
        let names = loader.entries(&at);
        let near = crate::diag::did_you_mean(comp, names.iter().map(String::as_str))?.to_owned();
        at = if at.is_empty() { near } else { format!("{at}/{near}") };
        changed = true;
    }
    (changed && loader.exists(&at)).then_some(at)
}

/// ` Did you mean `<path>`?`, when a path close to `rel` exists.
pub(crate) fn path_hint(loader: &dyn Loader, rel: &str) -> String {
    nearest_path(loader, rel).map(|p| format!("; did you mean `{p}`?")).unwrap_or_default()
}

/// Resolves the parsed `fleet.kdl` into a [`Fleet`]. Returns `None` when the fleet is too
/// broken to build a model; every problem is in `diags` either way.
/// Files fleet.kdl references that diagnostics point into (Talos patches) are added to
/// `sources`.
pub fn resolve(nodes: &[Node], loader: &dyn Loader, sources: &mut Sources, diags: &mut Diagnostics) -> Option<Fleet> {
    let mut fleet_node = None;
    for n in nodes {
        if n.name.value == "fleet" && fleet_node.is_none() {
            fleet_node = Some(n);
        } else if n.name.value == "fleet" {
            diags.push(
                Diagnostic::new(&codes::DUPLICATE_NAME, "a file describes one fleet")
                    .at(n.name.span)
                    .label("second `fleet`")
                    .help("put every environment in the first `fleet` block"),
            );
        } else {
            unknown_child(n, "the top level", &["fleet"], diags);
        }
    }
    duplicates::check(None, nodes, diags);
    let Some(node) = fleet_node else {
        diags.push(
            Diagnostic::new(&codes::MISSING_VALUE, "fleet.kdl has no `fleet` node")
                .at(Span::default())
                .help("start with `fleet \"<name>\" { … }` (docs/fleet-language.md)"),
        );
        return None;
    };
    Resolver {
        loader,
        diags,
        cycle_reported: false,
        sources,
        patch_files: BTreeMap::new(),
        patch_level: PatchLevel::Fleet,
    }
    .fleet(node)
}

struct Resolver<'a> {
    loader: &'a dyn Loader,
    diags: &'a mut Diagnostics,
    /// An inheritance circle is reported once, not once per environment on it.
    cycle_reported: bool,
    sources: &'a mut Sources,
    /// Every patch file read so far, once (`None`: it could not be used, already reported).
    patch_files: BTreeMap<String, Option<std::sync::Arc<patch::PatchFile>>>,
    /// The level whose children are being read, for the `patch`es among them.
    patch_level: PatchLevel,
}

/// Settings that inherit fleet → environment → cluster (the nearest wins).
#[derive(Clone, Default)]
struct Settings {
    talos: Option<Spanned<Version>>,
    kubernetes: Option<Spanned<Version>>,
    apply_mode: Option<Spanned<ApplyMode>>,
    discovery: Option<Spanned<bool>>,
    cni: Option<Spanned<String>>,
    addons: Option<Vec<Spanned<String>>>,
    runtimes: Option<Vec<Spanned<Runtime>>>,
    pod_cidr: Option<Spanned<Ipv4Net>>,
    service_cidr: Option<Spanned<Ipv4Net>>,
    pool: PoolDefaults,
    /// Settings written with a value that could not be read (already reported): a cluster
    /// missing one of them is not told it is missing (the cause is the value).
    broken: std::collections::BTreeSet<&'static str>,
    /// Where `cni "default"` was written, when it was.
    cni_default: Option<Span>,
    /// Talos patches, accumulated level by level (every level's apply, in order).
    patches: Vec<Patch>,
}

/// Pool values that inherit fleet → environment → cluster → pool.
#[derive(Clone, Default)]
struct PoolDefaults {
    size: Option<Spanned<String>>,
    schematic: Option<Spanned<String>>,
    ephemeral_min_size: Option<Spanned<Bytes>>,
    data_disk_size: Option<Spanned<Bytes>>,
    system_disk_size: Option<Spanned<Bytes>>,
}

/// The most nodes a cluster holds: Kubernetes is tested up to 5,000 nodes per cluster
/// (kubernetes.io, "Considerations for large clusters"). A pool's `count` past it is refused
/// before a machine is materialized; the network's capacity is checked in `check::network`.
pub const MAX_CLUSTER_NODES: u32 = 5_000;

const SETTINGS: &[&str] = &[
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
];

const POOL_PROPS: &[&str] = &[
    "count",
    "size",
    "schematic",
    "ephemeral-min-size",
    "data-disk-size",
    "system-disk-size",
    "was",
    "ephemeral-disk",
    "install-disk",
    "kubernetes",
    "secure-boot",
];
const POOL_DEFAULT_PROPS: &[&str] = &[
    "size",
    "schematic",
    "ephemeral-min-size",
    "data-disk-size",
    "system-disk-size",
    "ephemeral-disk",
    "install-disk",
];

fn one_of<T: Copy>(
    table: &[(&'static str, T)],
    s: &Spanned<String>,
    what: &str,
    diags: &mut Diagnostics,
) -> Option<Spanned<T>> {
    match table.iter().find(|(k, _)| *k == s.value) {
        Some((_, v)) => Some(Spanned::new(*v, s.span)),
        None => {
            let names: Vec<&str> = table.iter().map(|(k, _)| *k).collect();
            diags.push(
                Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is not {what}", s.value))
                    .at(s.span)
                    .label("unknown value")
                    .help(match crate::diag::did_you_mean(&s.value, names.iter().copied()) {
                        Some(m) => format!("did you mean `{m}`?"),
                        None => format!("use one of {}", reader::list(&names)),
                    }),
            );
            None
        }
    }
}

impl Resolver<'_> {
    fn fleet(&mut self, node: &Node) -> Option<Fleet> {
        let mut r = Reader::new(node, &[], self.diags);
        let name = r.name_arg(self.diags);
        r.finish(true, self.diags);
        let mut settings = Settings::default();
        let mut gitops = None;
        let mut argocd = None;
        let mut schematics: BTreeMap<String, Schematic> = BTreeMap::new();
        let mut addons: BTreeMap<String, Addon> = BTreeMap::new();
        let mut env_nodes: Vec<&Node> = Vec::new();
        let mut unresolved = std::collections::BTreeSet::new();
        self.patch_level = PatchLevel::Fleet;
        for child in node.children() {
            // A repeat is reported on the tree (`duplicates`) and not read: the first counts.
            if duplicates::is_repeat(child, node.children()) {
                continue;
            }
            if self.setting(child, &mut settings) {
                continue;
            }
            match child.name.value.as_str() {
                "gitops" => gitops = self.gitops(child),
                "argocd" => argocd = self.argocd(child),
                "schematic" => match self.schematic(child) {
                    Some(s) => {
                        schematics.insert(s.name.value.clone(), s);
                    }
                    None => unresolved.extend(duplicates::named_key(child).map(|(_, n)| format!("schematic {n}"))),
                },
                "addon" => match self.addon(child) {
                    Some(a) => {
                        addons.insert(a.name.value.clone(), a);
                    }
                    None => unresolved.extend(duplicates::named_key(child).map(|(_, n)| format!("add-on {n}"))),
                },
                "environment" => env_nodes.push(child),
                _ => unknown_child(
                    child,
                    "fleet",
                    &[SETTINGS, &["gitops", "argocd", "schematic", "addon", "environment"]].concat(),
                    self.diags,
                ),
            }
        }
        let name = name?;
        let fleet_name = name.value.clone();
        let mut environments = Vec::new();
        for env in &env_nodes {
            let Some(merged) = self.inherited_env(env, &env_nodes, &mut Vec::new()) else { continue };
            if let Some(e) = self.environment(&merged, env, &fleet_name, &settings) {
                environments.push(e);
            }
        }
        Some(Fleet { name, gitops, argocd, schematics, addons, environments, unresolved })
    }

    /// The environment's tree with its `from=` chain applied; `None` when the chain is
    /// broken (reported once, at the `from=` that breaks it).
    fn inherited_env(&mut self, env: &Node, all: &[&Node], chain: &mut Vec<String>) -> Option<Node> {
        let Some(from) = env.prop("from") else { return Some(env.clone()) };
        let ValueKind::String(base_name) = &from.value.kind else {
            self.diags.push(reader::wrong_type(&from.value, "`from`", "a string"));
            return None;
        };
        let own = env.args.first().and_then(|a| match &a.kind {
            ValueKind::String(s) => Some(s.clone()),
            _ => None,
        });
        if let Some(own) = &own {
            chain.push(own.clone());
        }
        if chain.contains(base_name) {
            if self.cycle_reported {
                return None;
            }
            self.cycle_reported = true;
            self.diags.push(
                Diagnostic::new(
                    &codes::INHERITANCE_CYCLE,
                    format!("environments inherit in a circle: {} → {base_name}", chain.join(" → ")),
                )
                .at(from.value.span)
                .label("closes the circle"),
            );
            return None;
        }
        let base = all
            .iter()
            .find(|n| n.args.first().is_some_and(|a| matches!(&a.kind, ValueKind::String(s) if s == base_name)));
        let Some(base) = base else {
            let names: Vec<String> = all
                .iter()
                .filter_map(|n| match n.args.first().map(|a| &a.kind) {
                    Some(ValueKind::String(s)) => Some(s.clone()),
                    _ => None,
                })
                .collect();
            let mut d =
                Diagnostic::new(&codes::DANGLING_REFERENCE, format!("no environment `{base_name}` to inherit from"))
                    .at(from.value.span)
                    .label("unknown environment");
            d.help = Some(match crate::diag::did_you_mean(base_name, names.iter().map(String::as_str)) {
                Some(m) => format!("did you mean `{m}`?"),
                None => format!(
                    "`from=` names another environment of this fleet: {}",
                    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                ),
            });
            self.diags.push(d);
            return None;
        };
        let base_tree = self.inherited_env(base, all, chain)?;
        let mut merged = inherit::merge_node(&base_tree, env);
        merged.props.clone_from(&env.props);
        // An environment's name is its own: one written without a name is missing one, it
        // does not become a second copy of its base.
        merged.args.clone_from(&env.args);
        Some(merged)
    }

    /// Reads `node` into `settings` when it is a setting; false otherwise.
    fn setting(&mut self, node: &Node, s: &mut Settings) -> bool {
        let d = &mut *self.diags;
        match node.name.value.as_str() {
            "talos" | "kubernetes" => {
                let mut r = Reader::new(node, &[], d);
                let v = r.arg_parsed::<Version>(d, "a version");
                r.finish(false, d);
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
            "patch" => {
                let level = self.patch_level;
                s.patches.extend(self.patch(node, level));
            }
            _ => return false,
        }
        true
    }

    /// Reads the pool properties `r` has into `p` (overriding what it holds).
    fn pool_values(&mut self, r: &Reader<'_>, p: &mut PoolDefaults) {
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
        if let Some(v) = r.prop_parsed("ephemeral-min-size", d) {
            p.ephemeral_min_size = Some(v);
        }
        if let Some(v) = r.prop_parsed("data-disk-size", d) {
            p.data_disk_size = Some(v);
        }
        if let Some(v) = r.prop_parsed("system-disk-size", d) {
            p.system_disk_size = Some(v);
        }
    }

    fn gitops(&mut self, node: &Node) -> Option<Gitops> {
        let r = Reader::new(node, &["repo", "revision", "path"], self.diags);
        let repo = r.require_str("repo", self.diags);
        if let Some(repo) = &repo {
            expect_url(repo, "the `gitops` repository", UrlUse::GitRepo, self.diags);
        }
        let revision = r.prop_str("revision", self.diags).unwrap_or_else(|| Spanned::new("main".into(), r.span()));
        let path = r.prop_str("path", self.diags).filter(|p| {
            let ok = check_relative(&p.value);
            if let Err(e) = &ok {
                self.diags.push(Diagnostic::new(&codes::INVALID_VALUE, e.clone()).at(p.span).help(
                    "`path` is where fleet.kdl's directory sits inside the repository, e.g. `path=\"infra/fleet\"`",
                ));
            }
            ok.is_ok()
        });
        r.finish(false, self.diags);
        Some(Gitops { repo: repo?, revision, path, span: node.head_span() })
    }

    fn argocd(&mut self, node: &Node) -> Option<ArgoCd> {
        let r = Reader::new(node, &["version", "namespace", "manifest", "sha256"], self.diags);
        let version = r.require_parsed("version", self.diags);
        let namespace = r.prop_str("namespace", self.diags).unwrap_or_else(|| Spanned::new("argocd".into(), r.span()));
        let manifest = self.vendored(&r);
        r.finish(false, self.diags);
        Some(ArgoCd { version: version?, namespace, manifest: manifest?, span: node.head_span() })
    }

    /// Reads `manifest=` and `sha256=`, loads the file and checks its pin.
    fn vendored(&mut self, r: &Reader<'_>) -> Option<Vendored> {
        let path = r.require_str("manifest", self.diags);
        // A missing pin is reported below, once the file is read: its help gives the hash.
        let sha = if r.has_prop("sha256") { r.prop_str("sha256", self.diags) } else { None };
        let sha_missing = !r.has_prop("sha256") && !r.misspelt("sha256");
        let path = path?;
        if !r.has_prop("sha256") && !sha_missing || r.has_prop("sha256") && sha.is_none() {
            return None;
        }
        if let Err(e) = check_relative(&path.value) {
            self.diags.push(Diagnostic::new(&codes::FILE_UNREADABLE, e).at(path.span).label("outside the fleet"));
            return None;
        }
        let content = match self.loader.read(&path.value) {
            Ok(c) => c,
            Err(e) => {
                self.diags.push(
                    Diagnostic::new(&codes::FILE_UNREADABLE, format!("cannot read `{}`: {e}", path.value))
                        .at(path.span)
                        .label("this file")
                        .help(format!(
                            "vendor the rendered manifest in the repository, beside fleet.kdl (fleetc never downloads){}",
                            path_hint(self.loader, &path.value)
                        )),
                );
                return None;
            }
        };
        let actual = crate::digest::sha256_hex(content.as_bytes());
        let Some(sha) = sha else {
            self.diags.push(
                missing(r.node, "property `sha256`").help(format!(
                    "vendored files are pinned so that a changed file is a reviewed change; review `{}`, then pin the sha256 it has now (what `sha256sum {}` prints): `{actual}`",
                    path.value, path.value
                )),
            );
            return None;
        };
        if actual != sha.value {
            self.diags.push(
                Diagnostic::new(&codes::CHECKSUM_MISMATCH, format!("`{}` has sha256 {actual}", path.value))
                    .at(sha.span)
                    .label("pinned sha256 differs"),
            );
        }
        let objects = match manifest_documents(&content) {
            Ok(o) => o,
            Err(e) => {
                self.diags.push(
                    Diagnostic::new(
                        &codes::INVALID_VALUE,
                        format!("`{}` is not a Kubernetes manifest: {e}", path.value),
                    )
                    .at(path.span)
                    .label("this file")
                    .help("vendor a rendered manifest: YAML documents, each an object with `apiVersion` and `kind`"),
                );
                return None;
            }
        };
        Some(Vendored { path, sha256: sha, content, objects: std::sync::Arc::new(objects) })
    }

    fn addon(&mut self, node: &Node) -> Option<Addon> {
        let mut r = Reader::new(node, &["version", "manifest", "sha256"], self.diags);
        let name = r.name_arg(self.diags);
        let version = r.require_str("version", self.diags);
        let manifest = self.vendored(&r);
        r.finish(false, self.diags);
        Some(Addon { name: name?, version: version?, manifest: manifest?, span: node.head_span() })
    }

    fn schematic(&mut self, node: &Node) -> Option<Schematic> {
        let mut r = Reader::new(node, &[], self.diags);
        let name = r.name_arg(self.diags);
        r.finish(true, self.diags);
        let mut spec = crate::schematic::Schematic::default();
        let mut extensions = Vec::new();
        for child in node.children() {
            let d = &mut *self.diags;
            match child.name.value.as_str() {
                "extension" => {
                    let mut r = Reader::new(child, &[], d);
                    let names = r.rest_str(d, "an extension name");
                    spec.customization.system_extensions.extend(names.iter().map(|s| s.value.clone()));
                    extensions.extend(names);
                    r.finish(false, d);
                }
                "kernel-arg" => {
                    let mut r = Reader::new(child, &[], d);
                    for arg in r.rest_str(d, "a kernel argument") {
                        let mut one = crate::schematic::Schematic::default();
                        one.customization.extra_kernel_args.push(arg.value.clone());
                        if encodable(&one, &arg, d) {
                            spec.customization.extra_kernel_args.push(arg.value);
                        }
                    }
                    r.finish(false, d);
                }
                "meta" => {
                    let r = Reader::new(child, &["key", "value"], d);
                    let key = if r.has_prop("key") {
                        r.prop_int::<u8>("key", d)
                    } else {
                        r.report_missing("key", d);
                        None
                    };
                    let value = r.require_str("value", d);
                    if let (Some(key), Some(value)) = (key, value) {
                        let meta = crate::schematic::Meta { key: key.value, value: value.value.clone() };
                        let mut one = crate::schematic::Schematic::default();
                        one.customization.meta.push(meta.clone());
                        if encodable(&one, &value, d) {
                            spec.customization.meta.push(meta);
                        }
                    }
                    r.finish(false, d);
                }
                "overlay" => {
                    let r = Reader::new(child, &["image", "name"], d);
                    let image = r.require_str("image", d);
                    let oname = r.require_str("name", d);
                    if let (Some(image), Some(name)) = (image, oname) {
                        spec.overlay = Some(crate::schematic::Overlay {
                            image: image.value,
                            name: name.value,
                            ..Default::default()
                        });
                    }
                    r.finish(false, d);
                }
                _ => unknown_child(child, "schematic", &["extension", "kernel-arg", "meta", "overlay"], d),
            }
        }
        let name = name?;
        let spec = spec.normalized();
        let (canonical, id) = match (spec.canonical_yaml(), spec.id()) {
            (Ok(c), Ok(id)) => (c, id),
            (Err(e), _) | (_, Err(e)) => {
                self.diags.push(
                    Diagnostic::new(&codes::SCHEMATIC_UNENCODABLE, format!("schematic `{}`: {e}", name.value))
                        .at(node.head_span())
                        .label("cannot be hashed with certainty"),
                );
                return None;
            }
        };
        Some(Schematic { name, spec, extensions, canonical, id, span: node.head_span() })
    }

    #[allow(clippy::too_many_lines)]
    fn environment(&mut self, node: &Node, written: &Node, fleet: &str, inherited: &Settings) -> Option<Environment> {
        let mut r = Reader::new(node, &["from"], self.diags);
        let name = r.name_arg(self.diags);
        let from = r.prop_str("from", self.diags);
        r.finish(true, self.diags);
        let name = name?;
        let mut settings = inherited.clone();
        let mut provider = None;
        let mut state_node = None;
        let mut network = None;
        let mut gateway = None;
        let mut admin_ranges = Vec::new();
        let mut recipients = Vec::new();
        let mut postgres = Vec::new();
        let mut buckets = Vec::new();
        let mut registries = Vec::new();
        let mut secrets = Vec::new();
        let mut cluster_nodes = Vec::new();
        let mut app_nodes: Vec<&Node> = Vec::new();
        self.patch_level = PatchLevel::Environment;
        for child in node.children() {
            // A repeat is reported on the tree (`duplicates`) and not read: the first counts.
            if duplicates::is_repeat(child, node.children()) {
                continue;
            }
            if self.setting(child, &mut settings) {
                continue;
            }
            let d = &mut *self.diags;
            match child.name.value.as_str() {
                "scaleway" | "proxmox" | "metal" => {
                    if let Some(prev) = &provider {
                        let prev: &Provider = prev;
                        d.push(
                            Diagnostic::new(&codes::DUPLICATE_NAME, "an environment has one infrastructure provider")
                                .at(child.name.span)
                                .label("second provider")
                                .related(prev.span(), "first provider")
                                .help("split the environment in two, one per provider (R27: the cluster blocks can stay identical)"),
                        );
                    } else if child.name.value == "metal" {
                        provider = self.metal(child);
                    } else {
                        provider = self.provider(child);
                    }
                }
                "state" => state_node = Some(child),
                "network" => {
                    let mut r = Reader::new(child, &[], d);
                    network = r.arg_parsed::<Ipv4Net>(d, "the private network's CIDR");
                    r.finish(false, d);
                }
                "gateway" => {
                    let mut r = Reader::new(child, &[], d);
                    gateway = r
                        .arg_str(d, "the public address through which the Talos API is reached")
                        .and_then(|s| parse_ip(&s, d));
                    r.finish(false, d);
                }
                "admin-ranges" => {
                    let mut r = Reader::new(child, &[], d);
                    admin_ranges = r.rest_parsed::<Ipv4Net>(d, "source ranges in CIDR form");
                    r.finish(false, d);
                }
                "recipients" => {
                    let mut r = Reader::new(child, &[], d);
                    recipients = r.rest_str(d, "age recipients (age1…)");
                    for rcp in &recipients {
                        if !rcp.value.starts_with("age1") || rcp.value.parse::<age::x25519::Recipient>().is_err() {
                            d.push(
                                Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is not an age x25519 recipient", rcp.value))
                                    .at(rcp.span)
                                    .label("not an age public key")
                                    .help("recipients are the public keys `age-keygen` prints (`age1…`); never put an identity (`AGE-SECRET-KEY-…`) in fleet.kdl"),
                            );
                        }
                    }
                    r.finish(false, d);
                }
                "postgres" => {
                    let mut r = Reader::new(child, &["node-type", "engine", "password-version", "was"], d);
                    let pname = r.name_arg(d);
                    let node_type = r.require_str("node-type", d);
                    let engine =
                        r.prop_str("engine", d).unwrap_or_else(|| Spanned::new("PostgreSQL-16".into(), r.span()));
                    let password_version =
                        r.prop_int::<u32>("password-version", d).unwrap_or_else(|| Spanned::new(1, r.span()));
                    let former_name = r.prop_str("was", d);
                    r.finish(false, d);
                    if let (Some(name), Some(node_type)) = (pname, node_type) {
                        postgres.push(Postgres {
                            name,
                            node_type,
                            engine,
                            password_version,
                            former_name,
                            span: child.head_span(),
                        });
                    }
                }
                "bucket" | "registry" => {
                    let mut r = Reader::new(child, &["name", "was"], d);
                    let lname = r.name_arg(d);
                    let global = r.prop_str("name", d);
                    let former_name = r.prop_str("was", d);
                    r.finish(false, d);
                    if let Some(lname) = lname {
                        let global = global.unwrap_or_else(|| {
                            Spanned::new(format!("{fleet}-{}-{}", name.value, lname.value), lname.span)
                        });
                        if child.name.value == "bucket" {
                            buckets.push(Bucket {
                                name: lname,
                                bucket_name: global,
                                former_name,
                                span: child.head_span(),
                            });
                        } else {
                            registries.push(Registry {
                                name: lname,
                                namespace: global,
                                former_name,
                                span: child.head_span(),
                            });
                        }
                    }
                }
                "secret" => {
                    let mut r = Reader::new(child, &["was"], d);
                    let sname = r.name_arg(d);
                    let former_name = r.prop_str("was", d);
                    r.finish(false, d);
                    if let Some(sname) = sname {
                        secrets.push(SecretItem { name: sname, former_name, span: child.head_span() });
                    }
                }
                "cluster" => cluster_nodes.push(child),
                "app" => app_nodes.push(child),
                _ => unknown_child(
                    child,
                    "environment",
                    &[
                        SETTINGS,
                        &[
                            "scaleway",
                            "proxmox",
                            "state",
                            "network",
                            "gateway",
                            "admin-ranges",
                            "recipients",
                            "postgres",
                            "bucket",
                            "registry",
                            "secret",
                            "cluster",
                            "app",
                        ],
                    ]
                    .concat(),
                    self.diags,
                ),
            }
        }
        let head = written.head_span();
        if let Some(from) = &from
            && !recipients.is_empty()
            && !written.children().iter().any(|c| c.name.value == "recipients")
        {
            let mut d = Diagnostic::new(
                &codes::RECIPIENTS_INHERITED,
                format!(
                    "environment `{}` inherits its age recipients from `{}` without stating them",
                    name.value, from.value
                ),
            )
            .at(from.span)
            .label("recipients inherited from here");
            if let Some(first) = recipients.first() {
                d = d.related(first.span, "the keys that will decrypt this environment's sealed inputs");
            }
            self.diags.push(d);
        }
        // Clusters are resolved even when the environment is incomplete, so that every
        // problem of the run is reported at once.
        if let Some(Provider::Metal(m)) = &provider {
            // A machine is what it is: pools on metal name no size (docs/metal.md).
            settings.pool.size.get_or_insert_with(|| Spanned::new(METAL_SIZE.to_owned(), m.span));
        }
        let mut clusters = Vec::new();
        for c in cluster_nodes {
            if let Some(cluster) = self.cluster(c, &name.value, &settings, &app_nodes) {
                clusters.push(cluster);
            }
        }
        let provider_written =
            node.children().iter().any(|c| matches!(c.name.value.as_str(), "scaleway" | "proxmox" | "metal"));
        let Some(provider) = provider else {
            if provider_written {
                return None;
            }
            self.diags.push(
                missing(written, "an infrastructure provider (`scaleway`, `proxmox` or `metal`)")
                    .help("an environment runs on one provider; state it, or inherit it with `from=`"),
            );
            return None;
        };
        let state =
            match state_node {
                Some(n) => Some(self.state(n, &provider)?),
                // Bare metal has no cloud to hold state for: no OpenTofu root at all.
                None if matches!(provider, Provider::Metal(_)) => None,
                None => {
                    self.diags.push(missing(written, "a `state` backend").help(
                        "OpenTofu state lives in an S3-compatible bucket with locking (R3): `state bucket=\"…\"`",
                    ));
                    return None;
                }
            };
        let Some(network) = network else {
            if node.children().iter().any(|c| c.name.value == "network") {
                return None;
            }
            self.diags.push(
                missing(written, "a private `network`")
                    .help("nodes live on a private network (R6, R12): `network \"10.10.0.0/22\"`"),
            );
            return None;
        };
        Some(Environment {
            name,
            from,
            provider,
            state,
            network,
            gateway,
            admin_ranges,
            recipients,
            postgres,
            buckets,
            registries,
            secrets,
            clusters,
            span: head,
        })
    }

    fn provider(&mut self, node: &Node) -> Option<Provider> {
        let d = &mut *self.diags;
        let mut sizes = BTreeMap::new();
        let mut dns = Vec::new();
        let mut pve_nodes: Vec<Spanned<String>> = Vec::new();
        let mut nodes_written = None;
        let is_scaleway = node.name.value == "scaleway";
        for child in node.children() {
            match child.name.value.as_str() {
                "size" => {
                    let props: &'static [&'static str] =
                        if is_scaleway { &["type", "kvm"] } else { &["cores", "memory", "kvm"] };
                    let mut r = Reader::new(child, props, d);
                    let sname = r.name_arg(d);
                    let (instance_type, cores, memory) = if is_scaleway {
                        (r.require_str("type", d), None, None)
                    } else {
                        let cores = if r.has_prop("cores") {
                            r.prop_int::<u32>("cores", d)
                        } else {
                            r.report_missing("cores", d);
                            None
                        };
                        (None, cores, r.require_parsed::<Bytes>("memory", d))
                    };
                    let kvm = r.prop_bool("kvm", d).is_some_and(|b| b.value);
                    r.finish(false, d);
                    if let Some(sname) = sname {
                        let size =
                            Size { name: sname.clone(), instance_type, cores, memory, kvm, span: child.head_span() };
                        if let Some(prev) = sizes.insert(sname.value.clone(), size) {
                            d.push(
                                Diagnostic::new(
                                    &codes::DUPLICATE_NAME,
                                    format!("size `{}` is declared twice", sname.value),
                                )
                                .at(sname.span)
                                .related(prev.name.span, "first declared here"),
                            );
                        }
                    }
                }
                "dns" if !is_scaleway => {
                    let mut r = Reader::new(child, &[], d);
                    dns = r.rest_str(d, "DNS server addresses").iter().filter_map(|s| parse_ip(s, d)).collect();
                    r.finish(false, d);
                }
                "nodes" if !is_scaleway => {
                    let mut r = Reader::new(child, &[], d);
                    let listed = r.rest_str(d, "Proxmox VE node names");
                    r.finish(false, d);
                    for n in listed {
                        if let Some(prev) = pve_nodes.iter().find(|p: &&Spanned<String>| p.value == n.value) {
                            d.push(
                                Diagnostic::new(
                                    &codes::DUPLICATE_NAME,
                                    format!("Proxmox VE node `{}` is listed twice", n.value),
                                )
                                .at(n.span)
                                .related(prev.span, "first listed here"),
                            );
                            continue;
                        }
                        pve_nodes.push(n);
                    }
                    nodes_written = Some(child.head_span());
                }
                _ => unknown_child(
                    child,
                    &node.name.value,
                    if is_scaleway { &["size"] } else { &["size", "dns", "nodes"] },
                    d,
                ),
            }
        }
        if is_scaleway {
            let r = Reader::new(node, &["project", "region", "zone"], d);
            let project = r.require_str("project", d);
            let region = r.require_str("region", d);
            let zone = r.require_str("zone", d);
            r.finish(true, d);
            Some(Provider::Scaleway(Scaleway {
                project: project?,
                region: region?,
                zone: zone?,
                sizes,
                span: node.head_span(),
            }))
        } else {
            let r = Reader::new(
                node,
                &["endpoint", "node", "bridge", "datastore", "router", "gateway", "insecure", "image-datastore"],
                d,
            );
            let endpoint = r.require_str("endpoint", d);
            if let Some(e) = &endpoint {
                expect_url(e, "the Proxmox `endpoint`", UrlUse::ProxmoxApi, d);
            }
            let pnode = r.require_str("node", d);
            let bridge = r.prop_str("bridge", d).unwrap_or_else(|| Spanned::new("vmbr0".into(), r.span()));
            let datastore = r.prop_str("datastore", d).unwrap_or_else(|| Spanned::new("local-lvm".into(), r.span()));
            // `gateway=` was the router's old spelling: `gateway` is the environment's public
            // Talos address everywhere else. The old spelling is refused, pointing at the new
            // one, and its value is still read so that nothing else is reported in its place.
            let old = node.prop("gateway");
            if let Some(old) = old {
                d.push(
                    Diagnostic::new(&codes::RENAMED, "the Proxmox LAN router is now `router=`, not `gateway=`")
                        .at(old.name.span)
                        .label("write `router=`")
                        .help("`gateway` means one thing in fleet.kdl: the environment's public address through which the Talos API is reached (R16); the nodes' default route on Proxmox is `router=`"),
                );
            }
            let gateway = if old.is_some() && !r.has_prop("router") {
                r.prop_str("gateway", d)
            } else {
                r.require_str("router", d)
            }
            .and_then(|s| parse_ip(&s, d));
            let image_datastore =
                r.prop_str("image-datastore", d).unwrap_or_else(|| Spanned::new("local".into(), r.span()));
            let insecure = r.prop_bool("insecure", d).is_some_and(|b| b.value);
            r.finish(true, d);
            let pnode = pnode?;
            if let Some(list_span) = nodes_written
                && !pve_nodes.is_empty()
                && !pve_nodes.iter().any(|n| n.value == pnode.value)
            {
                d.push(
                    Diagnostic::new(
                        &codes::PVE_NODE_UNLISTED,
                        format!("Proxmox VE node `{}` is not one of the listed `nodes`", pnode.value),
                    )
                    .at(pnode.span)
                    .label("holds the images and VM templates")
                    .related(list_span, "the nodes VMs are spread over"),
                );
            }
            if pve_nodes.is_empty() {
                pve_nodes.push(pnode.clone());
            }
            Some(Provider::Proxmox(Proxmox {
                endpoint: endpoint?,
                node: pnode,
                nodes: pve_nodes,
                insecure,
                image_datastore,
                bridge,
                datastore,
                gateway: gateway?,
                dns,
                sizes,
                span: node.head_span(),
            }))
        }
    }

    /// `metal { }`: machines declared one by one, as named nodes (docs/metal.md).
    fn metal(&mut self, node: &Node) -> Option<Provider> {
        let d = &mut *self.diags;
        let r = Reader::new(node, &[], d);
        r.finish(true, d);
        for child in node.children() {
            unknown_child(child, "metal", &[], d);
        }
        let span = node.head_span();
        let mut sizes = BTreeMap::new();
        let name = Spanned::new(METAL_SIZE.to_owned(), span);
        sizes.insert(
            METAL_SIZE.to_owned(),
            Size { name, instance_type: None, cores: None, memory: None, kvm: true, span },
        );
        Some(Provider::Metal(Metal { sizes, span }))
    }

    fn state(&mut self, node: &Node, provider: &Provider) -> Option<StateBackend> {
        let d = &mut *self.diags;
        let r = Reader::new(node, &["bucket", "region", "endpoint", "skip-checksum"], d);
        let bucket = r.require_str("bucket", d);
        let region = r.prop_str("region", d);
        let endpoint = r.prop_str("endpoint", d);
        if let Some(e) = &endpoint {
            expect_url(e, "the state bucket's `endpoint`", UrlUse::S3, d);
        }
        let skip_checksum = r.prop_bool("skip-checksum", d).is_some_and(|b| b.value);
        r.finish(false, d);
        let (region, endpoint) = match (provider, region, endpoint) {
            (_, Some(region), Some(endpoint)) => (region, endpoint),
            (Provider::Scaleway(s), region, endpoint) => {
                let region = region.unwrap_or_else(|| s.region.clone());
                let endpoint = endpoint
                    .unwrap_or_else(|| Spanned::new(format!("https://s3.{}.scw.cloud", region.value), region.span));
                (region, endpoint)
            }
            (Provider::Proxmox(_) | Provider::Metal(_), _, _) => {
                d.push(
                    missing(node, "`region` and `endpoint`")
                        .help("outside Scaleway, say which S3-compatible store holds the state: `state bucket=\"…\" region=\"…\" endpoint=\"https://…\"`"),
                );
                return None;
            }
        };
        Some(StateBackend { bucket: bucket?, region, endpoint, skip_checksum, span: node.head_span() })
    }

    #[allow(clippy::too_many_lines)]
    fn cluster(&mut self, node: &Node, env: &str, inherited: &Settings, env_apps: &[&Node]) -> Option<Cluster> {
        let mut r = Reader::new(node, &["managed-by", "was"], self.diags);
        let name = r.name_arg(self.diags);
        let managed_by = r.prop_str("managed-by", self.diags);
        let former_name = r.prop_str("was", self.diags);
        r.finish(true, self.diags);
        let name = name?;
        let mut s = inherited.clone();
        let mut endpoint = None;
        let mut cert_sans = Vec::new();
        let mut single_node = None;
        let mut vm_template_manual = None;
        let mut cp_node = None;
        let mut pool_nodes = Vec::new();
        let mut apps: Vec<Node> = env_apps.iter().map(|n| (*n).clone()).collect();
        let mut cluster_api = None;
        let mut ip_pool = None;
        let mut sealed = Vec::new();
        let mut endpoint_written = false;
        self.patch_level = PatchLevel::Cluster;
        for child in node.children() {
            // A repeat is reported on the tree (`duplicates`) and not read: the first counts.
            if duplicates::is_repeat(child, node.children()) {
                continue;
            }
            if self.setting(child, &mut s) {
                continue;
            }
            let d = &mut *self.diags;
            match child.name.value.as_str() {
                "endpoint" => {
                    endpoint_written = true;
                    let r = Reader::new(child, &["address", "port", "public"], d);
                    let address = r.require_str("address", d).and_then(|a| parse_ip(&a, d));
                    let port = r.prop_int::<u16>("port", d).map_or(6443, |p| p.value);
                    let public = r.prop_bool("public", d).is_some_and(|b| b.value);
                    r.finish(false, d);
                    endpoint = address.map(|address| Endpoint { address, port, public, span: child.head_span() });
                }
                "cert-sans" => {
                    let mut r = Reader::new(child, &[], d);
                    cert_sans = r.rest_str(d, "names or addresses");
                    r.finish(false, d);
                }
                "single-node" => {
                    let mut r = Reader::new(child, &[], d);
                    single_node = r.arg_bool(d);
                    r.finish(false, d);
                }
                "vm-template-manual" => {
                    let mut r = Reader::new(child, &[], d);
                    vm_template_manual = r.arg_bool(d);
                    r.finish(false, d);
                }
                "control-plane" => cp_node = Some(child),
                "pool" => pool_nodes.push(child),
                "app" => {
                    let key = child.args.first().map(|a| a.kind.clone());
                    if let Some(i) = apps.iter().position(|a| a.args.first().map(|x| x.kind.clone()) == key) {
                        apps[i] = inherit::merge_node(&apps[i], child);
                    } else {
                        apps.push(child.clone());
                    }
                }
                "cluster-api" => cluster_api = self.cluster_api(child),
                "ip-pool" => {
                    let mut r = Reader::new(child, &[], d);
                    ip_pool = r.arg_parsed::<Ipv4Range>(d, "an address range (first-last)");
                    r.finish(false, d);
                }
                "sealed" => {
                    let mut r = Reader::new(child, &[], d);
                    sealed.extend(r.rest_str(d, "sealed input names"));
                    r.finish(false, d);
                }
                _ => unknown_child(
                    child,
                    "cluster",
                    &[
                        SETTINGS,
                        &[
                            "endpoint",
                            "cert-sans",
                            "single-node",
                            "vm-template-manual",
                            "control-plane",
                            "pool",
                            "app",
                            "cluster-api",
                            "ip-pool",
                            "sealed",
                        ],
                    ]
                    .concat(),
                    self.diags,
                ),
            }
        }
        let head = node.head_span();
        let d = &mut *self.diags;
        let talos = s.talos.clone().or_else(|| {
            if s.broken.contains("talos") {
                return None;
            }
            d.push(
                missing(node, "a Talos version")
                    .help("state `talos \"v1.13.9\"` in the cluster, its environment or the fleet"),
            );
            None
        });
        let kubernetes = s.kubernetes.clone().or_else(|| {
            if s.broken.contains("kubernetes") {
                return None;
            }
            d.push(
                missing(node, "a Kubernetes version")
                    .help("state `kubernetes \"1.36.2\"` in the cluster, its environment or the fleet"),
            );
            None
        });
        let endpoint = endpoint.or_else(|| {
            if endpoint_written {
                // Its value was wrong, and said so: that is the one error.
                return None;
            }
            d.push(
                missing(node, "an `endpoint`")
                    .help("where the Kubernetes API is reached: `endpoint address=\"10.10.0.10\"`"),
            );
            None
        });
        let control_plane = match cp_node {
            Some(n) => self.pool(n, Role::ControlPlane, &name.value, &s.pool, &s.patches),
            None => {
                self.diags.push(missing(node, "a `control-plane`").help("`control-plane count=3 size=\"…\"` (R29)"));
                None
            }
        };
        let mut workers = Vec::new();
        for p in pool_nodes {
            if let Some(pool) = self.pool(p, Role::Worker, &name.value, &s.pool, &s.patches) {
                workers.push(pool);
            }
        }
        let apps = apps.iter().filter_map(|a| self.app(a)).collect();
        Some(Cluster {
            name,
            env: env.to_owned(),
            managed_by,
            former_name,
            talos: talos?,
            kubernetes: kubernetes?,
            endpoint: endpoint?,
            cert_sans,
            discovery: s.discovery.unwrap_or_else(|| Spanned::new(false, head)),
            apply_mode: s.apply_mode.unwrap_or_else(|| Spanned::new(ApplyMode::Auto, head)),
            cni_default: s.cni_default,
            cni: s.cni.filter(|c| c.value != "default"),
            addons: s.addons.unwrap_or_default(),
            runtimes: s.runtimes.unwrap_or_default(),
            pod_cidr: s.pod_cidr.unwrap_or_else(|| Spanned::new("10.244.0.0/16".parse().expect("valid"), head)),
            service_cidr: s.service_cidr.unwrap_or_else(|| Spanned::new("10.96.0.0/12".parse().expect("valid"), head)),
            single_node,
            vm_template_manual,
            control_plane: control_plane?,
            workers,
            apps,
            cluster_api,
            ip_pool,
            sealed,
            span: head,
        })
    }

    fn pool(
        &mut self,
        node: &Node,
        role: Role,
        cluster: &str,
        inherited: &PoolDefaults,
        inherited_patches: &[Patch],
    ) -> Option<Pool> {
        let props: &'static [&'static str] =
            if role == Role::ControlPlane { &POOL_PROPS[..POOL_PROPS.len()] } else { POOL_PROPS };
        let mut r = Reader::new(node, props, self.diags);
        let name = if role == Role::ControlPlane {
            Some(Spanned::new("cp".to_owned(), node.name.span))
        } else {
            r.name_arg(self.diags)
        };
        let mut p = inherited.clone();
        self.pool_values(&r, &mut p);
        let d = &mut *self.diags;
        let named_written = node.children().iter().filter(|c| c.name.value == "node").count() as u32;
        let count = if r.has_prop("count") {
            // Bounded before anything is materialized: one machine per node (R6).
            r.prop_int::<u32>("count", d).filter(|c| {
                let fits = c.value <= MAX_CLUSTER_NODES;
                if !fits {
                    d.push(
                        Diagnostic::new(
                            &codes::COUNT_TOO_LARGE,
                            format!("a pool of {} nodes; a cluster holds at most {MAX_CLUSTER_NODES}", c.value),
                        )
                        .at(c.span)
                        .label(format!("more than {MAX_CLUSTER_NODES}")),
                    );
                }
                fits
            })
        } else if named_written > 0 {
            // A pool of named nodes only: as many nodes as it names.
            Some(Spanned::new(named_written, node.head_span()))
        } else {
            r.report_missing("count", d);
            None
        };
        let former_name = r.prop_str("was", d);
        // A worker pool may pin its own Kubernetes version, behind the control plane's
        // during a staged upgrade (docs/capi.md, "Language additions").
        let kubernetes = r.prop_parsed::<Version>("kubernetes", d);
        if role == Role::ControlPlane
            && let Some(k) = &kubernetes
        {
            d.push(
                Diagnostic::new(&codes::INVALID_VALUE, "the control plane runs the cluster's `kubernetes` version")
                    .at(k.span)
                    .label("not on `control-plane`")
                    .help("set `kubernetes` on the cluster; only worker pools may stay behind it during an upgrade"),
            );
        }
        let secure_boot = r.prop_bool("secure-boot", d);
        r.finish(true, d);
        let mut encrypt: Vec<crate::model::VolumeEncryption> = Vec::new();
        let mut labels: BTreeMap<String, Spanned<String>> = BTreeMap::new();
        let mut label_keys: BTreeMap<String, Span> = BTreeMap::new();
        let mut annotations: BTreeMap<String, Spanned<String>> = BTreeMap::new();
        let mut annotation_keys: BTreeMap<String, Span> = BTreeMap::new();
        let mut taint_keys: BTreeMap<(String, TaintEffect), Span> = BTreeMap::new();
        let mut taints = Vec::new();
        let mut addresses: Option<Vec<Spanned<Ipv4Addr>>> = None;
        let mut patches = inherited_patches.to_vec();
        // The control plane's block is its role's and its pool's at once.
        let level = if role == Role::ControlPlane { PatchLevel::Role } else { PatchLevel::Pool };
        let mut pool_node = NodeSettings::default();
        let mut pool_disks = Vec::new();
        let mut named = Vec::new();
        for child in node.children() {
            if child.name.value == "patch" {
                patches.extend(self.patch(child, level));
                continue;
            }
            if child.name.value == "node" {
                let mut node_patches = Vec::new();
                named.extend(self.named_node(child, &mut node_patches));
                continue;
            }
            if matches!(child.name.value.as_str(), "install-disk" | "nameservers" | "arch") {
                self.node_setting(child, &pool_word(node), &mut pool_node, &mut pool_disks);
                continue;
            }
            let d = &mut *self.diags;
            match child.name.value.as_str() {
                "label" => {
                    let mut r = Reader::new(child, &[], d);
                    let k = r.arg_str(d, "a label key");
                    let v = r.arg_str(d, "a label value");
                    r.finish(false, d);
                    if let (Some(k), Some(v)) = (k, v) {
                        let valid = kubernetes_key(&k, "label", d) & kubernetes_value(&v, "label", d);
                        if let Some(first) = label_keys.get(&k.value) {
                            d.push(
                                Diagnostic::new(
                                    &codes::DUPLICATE_KEY,
                                    format!("label `{}` is set twice on pool `{}`", k.value, pool_word(node)),
                                )
                                .at(k.span)
                                .label("set again here")
                                .related(*first, "first set here"),
                            );
                        } else if valid {
                            label_keys.insert(k.value.clone(), k.span);
                            labels.insert(k.value, v);
                        }
                    }
                }
                "annotation" => {
                    let mut r = Reader::new(child, &[], d);
                    let k = r.arg_str(d, "an annotation key");
                    let v = r.arg_str(d, "an annotation value");
                    r.finish(false, d);
                    if let (Some(k), Some(v)) = (k, v) {
                        let valid = kubernetes_key(&k, "annotation", d) && annotation_not_reserved(&k, d);
                        if let Some(first) = annotation_keys.get(&k.value) {
                            d.push(
                                Diagnostic::new(
                                    &codes::DUPLICATE_KEY,
                                    format!("annotation `{}` is set twice on pool `{}`", k.value, pool_word(node)),
                                )
                                .at(k.span)
                                .label("set again here")
                                .related(*first, "first set here")
                                .help("an annotation key holds one value: the second would silently replace the first"),
                            );
                        } else if valid {
                            annotation_keys.insert(k.value.clone(), k.span);
                            annotations.insert(k.value, v);
                        }
                    }
                }
                "taint" => {
                    let mut r = Reader::new(child, &["effect"], d);
                    let k = r.arg_str(d, "a taint key");
                    let value =
                        if child.args.len() > 1 { r.arg_str(d, "a taint value").map(|v| v.value) } else { None };
                    let effect = r.prop_str("effect", d).map_or(Some(TaintEffect::NoSchedule), |e| {
                        one_of(&TaintEffect::ALL, &e, "a taint effect", d).map(|e| e.value)
                    });
                    r.finish(false, d);
                    if let (Some(k), Some(effect)) = (k, effect) {
                        let mut valid = kubernetes_key(&k, "taint", d);
                        if let (Some(v), Some(arg)) = (&value, child.args.get(1)) {
                            valid &= kubernetes_value(&Spanned::new(v.clone(), arg.span), "taint", d);
                        }
                        if let Some(first) = taint_keys.get(&(k.value.clone(), effect)) {
                            d.push(
                                Diagnostic::new(
                                    &codes::DUPLICATE_KEY,
                                    format!(
                                        "taint `{}` with effect {effect:?} is set twice on pool `{}`",
                                        k.value,
                                        pool_word(node)
                                    ),
                                )
                                .at(k.span)
                                .label("set again here")
                                .related(*first, "first set here"),
                            );
                        } else if valid {
                            taint_keys.insert((k.value.clone(), effect), k.span);
                            taints.push(Taint { key: k.value, value, effect, span: child.head_span() });
                        }
                    }
                }
                "addresses" => {
                    let mut r = Reader::new(child, &[], d);
                    addresses = Some(r.rest_str(d, "node addresses").iter().filter_map(|s| parse_ip(s, d)).collect());
                    r.finish(false, d);
                }
                "encrypt" => {
                    if let Some(e) = encryption(child, d) {
                        if let Some(first) = encrypt.iter().find(|f| f.volume.value == e.volume.value) {
                            d.push(
                                Diagnostic::new(
                                    &codes::DUPLICATE_KEY,
                                    format!(
                                        "volume `{}` is encrypted twice on pool `{}`",
                                        e.volume.value.label(),
                                        pool_word(node)
                                    ),
                                )
                                .at(e.volume.span)
                                .label("set again here")
                                .related(first.volume.span, "first set here"),
                            );
                        } else {
                            encrypt.push(e);
                        }
                    }
                }
                _ => unknown_child(
                    child,
                    &node.name.value,
                    &[
                        "label",
                        "annotation",
                        "taint",
                        "addresses",
                        "patch",
                        "encrypt",
                        "node",
                        "install-disk",
                        "nameservers",
                        "arch",
                    ],
                    d,
                ),
            }
        }
        let d = &mut *self.diags;
        let head = node.head_span();
        let annotation_bytes: usize = annotations.iter().map(|(k, v)| k.len() + v.value.len()).sum();
        if annotation_bytes > ANNOTATIONS_MAX_BYTES {
            d.push(
                Diagnostic::new(
                    &codes::INVALID_LABEL,
                    format!(
                        "the annotations of pool `{}` hold {annotation_bytes} bytes, more than Talos and Kubernetes accept ({ANNOTATIONS_MAX_BYTES})",
                        pool_word(node)
                    ),
                )
                .at(head)
                .label("too much annotation text")
                .help("keys and values together are limited to 256 KiB (Talos `TotalAnnotationSizeLimitB`, the API server's `TotalAnnotationSizeLimitB`): keep large data in a ConfigMap"),
            );
        }
        let need = |v: Option<Spanned<String>>, what: &str, d: &mut Diagnostics| {
            v.or_else(|| {
                d.push(missing(node, what).help(
                    "set it on the pool or in `pool-defaults` at the cluster, environment or fleet (R5)".to_string(),
                ));
                None
            })
        };
        let size = need(p.size, "a `size`", d);
        let schematic = need(p.schematic, "a `schematic`", d);
        let ephemeral_min_size =
            p.ephemeral_min_size.unwrap_or_else(|| Spanned::new("100GB".parse().expect("valid"), head));
        let data_disk_size = p.data_disk_size.unwrap_or(ephemeral_min_size.clone());
        let system_disk_size = p.system_disk_size.unwrap_or_else(|| Spanned::new("20GB".parse().expect("valid"), head));
        let (name, count) = (name?, count?);
        if let Some(addrs) = &addresses
            && addrs.len() != count.value as usize
        {
            d.push(
                Diagnostic::new(
                    &codes::INVALID_VALUE,
                    format!("pool `{}` has {} nodes and {} addresses", name.value, count.value, addrs.len()),
                )
                .at(count.span)
                .label("node count")
                .related(
                    node.children().iter().find(|c| c.name.value == "addresses").map_or(head, Node::head_span),
                    "the addresses",
                )
                .help("give one address per node, in node order"),
            );
        }
        if named.len() as u32 > count.value {
            let extra = &named[count.value as usize];
            d.push(
                Diagnostic::new(
                    &codes::NODE_COUNT,
                    format!("pool `{}` names {} nodes and has `count={}`", name.value, named.len(), count.value),
                )
                .at(extra.name.span)
                .label(format!("node {} of a pool of {}", count.value + 1, count.value))
                .related(count.span, "the node count"),
            );
        }
        // Named nodes are the pool's first machines, in the order written; the others keep
        // their generated names (`<cluster>-<pool>-<n>`).
        let machines = (1..=count.value)
            .map(|i| {
                let own = named.get(i as usize - 1);
                let mut settings = pool_node.clone();
                let mut written = pool_disks.clone();
                if let Some(n) = own {
                    let s = n.settings.clone();
                    if s.install_disk.is_some() {
                        settings.install_disk = s.install_disk;
                    }
                    if !s.nameservers.is_empty() {
                        settings.nameservers = s.nameservers;
                    }
                    if s.arch.is_some() {
                        settings.arch = s.arch;
                    }
                    settings.links = s.links;
                    settings.labels = s.labels;
                    settings.taints = s.taints;
                    settings.patches = s.patches;
                    if !n.install_disks.is_empty() {
                        written = n.install_disks.clone();
                    }
                }
                Machine {
                    hostname: match own {
                        Some(n) => format!("{cluster}-{}", n.name.value),
                        None => format!("{cluster}-{}-{i}", name.value),
                    },
                    index: i,
                    address: own
                        .and_then(|n| n.address.clone())
                        .or_else(|| addresses.as_ref().and_then(|a| a.get(i as usize - 1).cloned())),
                    name: own.map(|n| n.name.clone()),
                    mac: own.and_then(|n| n.mac.clone()),
                    install_disks_written: written,
                    settings,
                }
            })
            .collect();
        Some(Pool {
            name,
            role,
            count,
            size: size?,
            schematic: schematic?,
            ephemeral_min_size,
            data_disk_size,
            system_disk_size,
            labels,
            annotations,
            taints,
            node: pool_node,
            machines,
            patches,
            former_name,
            kubernetes: kubernetes.filter(|_| role == Role::Worker),
            disk: crate::model::DiskSecurity { encrypt, secure_boot },
            span: head,
        })
    }

    fn app(&mut self, node: &Node) -> Option<App> {
        let d = &mut *self.diags;
        let mut r =
            Reader::new(node, &["path", "repo", "chart", "version", "values", "namespace", "after", "wave", "sync"], d);
        let name = r.name_arg(d);
        let path = r.prop_str("path", d);
        let chart = r.prop_str("chart", d);
        let source = match (path, chart) {
            (Some(p), None) => {
                for prop in ["repo", "version", "values"] {
                    if let Some(pr) = node.prop(prop) {
                        d.push(
                            Diagnostic::new(&codes::UNKNOWN_PROPERTY, format!("a `path` app takes no `{prop}`"))
                                .at(pr.name.span)
                                .label("only for chart apps"),
                        );
                    }
                }
                refuse_outside(
                    &p,
                    "`path` is a directory of the fleet's repository, relative to fleet.kdl's directory",
                    d,
                );
                let exists = check_relative(&p.value).is_ok() && self.loader.exists(&p.value);
                let nearest = if exists || check_relative(&p.value).is_err() {
                    None
                } else {
                    nearest_path(self.loader, &p.value)
                };
                Some(AppSource::Path { path: p, exists, nearest })
            }
            (None, Some(chart)) => {
                let repo = r.require_str("repo", d);
                if let Some(repo) = &repo {
                    expect_url(repo, "the chart repository", UrlUse::ChartRepo, d);
                }
                repo.map(|repo| AppSource::Chart {
                    repo,
                    chart,
                    version: r.prop_str("version", d),
                    values: r.prop_str("values", d).inspect(|v| {
                        refuse_outside(
                            v,
                            "`values` is a file of the fleet's repository, relative to fleet.kdl's directory",
                            d,
                        );
                    }),
                })
            }
            (Some(p), Some(_)) => {
                d.push(
                    Diagnostic::new(&codes::INVALID_VALUE, "an app comes from a `path` or a `chart`, not both")
                        .at(p.span)
                        .label("path here")
                        .help("keep one source"),
                );
                None
            }
            (None, None) => {
                d.push(missing(node, "a source: `path=` (a directory of the fleet's repo) or `chart=` with `repo=`"));
                None
            }
        };
        let namespace = if r.has_prop("namespace") || r.misspelt("namespace") {
            r.require_str("namespace", d)
        } else {
            d.push(missing(node, "property `namespace`").help(
                "the namespace Argo CD syncs the app into (created for it: `CreateNamespace=true`), e.g. `namespace=\"hello\"` (R23)",
            ));
            None
        };
        let mut after: Vec<Spanned<String>> = r.prop_str("after", d).into_iter().collect();
        let wave = r.prop_int::<i64>("wave", d);
        let auto_sync = match r.prop_str("sync", d) {
            None => true,
            Some(s) if s.value == "auto" => true,
            Some(s) if s.value == "manual" => false,
            Some(s) => {
                d.push(
                    Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is not a sync policy", s.value))
                        .at(s.span)
                        .help("use `auto` (prune and self-heal, the default) or `manual`"),
                );
                true
            }
        };
        r.finish(true, d);
        let mut postgres = Vec::new();
        for child in node.children() {
            match child.name.value.as_str() {
                "after" => {
                    let mut r = Reader::new(child, &[], d);
                    after.extend(r.rest_str(d, "app names"));
                    r.finish(false, d);
                }
                "postgres" => {
                    let mut r = Reader::new(child, &[], d);
                    postgres.extend(r.rest_str(d, "postgres instance names"));
                    r.finish(false, d);
                }
                _ => unknown_child(child, "app", &["after", "postgres"], d),
            }
        }
        Some(App {
            name: name?,
            source: source?,
            namespace: namespace?,
            after,
            wave,
            auto_sync,
            postgres,
            span: node.head_span(),
        })
    }

    fn cluster_api(&mut self, node: &Node) -> Option<ClusterApi> {
        let d = &mut *self.diags;
        let r = Reader::new(node, &[], d);
        r.finish(true, d);
        let mut versions: BTreeMap<&str, Spanned<Version>> = BTreeMap::new();
        let mut cert_manager = None;
        let mut cert_manager_version = None;
        let mut operator_manifest = None;
        const PROVIDERS: &[&str] = &[
            "core",
            "bootstrap-talos",
            "control-plane-talos",
            "infrastructure-proxmox",
            "ipam-in-cluster",
            "operator",
            "cert-manager",
        ];
        for child in node.children() {
            let key = child.name.value.as_str();
            match key {
                "cert-manager" | "operator" => {
                    let props: &'static [&'static str] = &["version", "manifest", "sha256"];
                    let r = Reader::new(child, props, self.diags);
                    let version = r.require_parsed::<Version>("version", self.diags);
                    let vendored = self.vendored(&r);
                    r.finish(false, self.diags);
                    if key == "operator" {
                        if let Some(v) = version {
                            versions.insert("operator", v);
                        }
                        operator_manifest = vendored;
                    } else {
                        cert_manager = vendored;
                        cert_manager_version = version;
                    }
                }
                k if PROVIDERS.contains(&k) => {
                    let mut r = Reader::new(child, &[], self.diags);
                    if let Some(v) = r.arg_parsed::<Version>(self.diags, "a version") {
                        versions.insert(PROVIDERS.iter().find(|p| **p == k).copied().unwrap_or("core"), v);
                    }
                    r.finish(false, self.diags);
                }
                _ => unknown_child(child, "cluster-api", PROVIDERS, self.diags),
            }
        }
        let mut take = |k: &str| {
            let v = versions.remove(k);
            if v.is_none() {
                self.diags.push(missing(node, &format!("a pinned `{k}` version")));
            }
            v
        };
        let core = take("core");
        let bootstrap_talos = take("bootstrap-talos");
        let control_plane_talos = take("control-plane-talos");
        let infrastructure_proxmox = take("infrastructure-proxmox");
        let ipam_in_cluster = take("ipam-in-cluster");
        let operator = take("operator");
        Some(ClusterApi {
            core: core?,
            bootstrap_talos: bootstrap_talos?,
            control_plane_talos: control_plane_talos?,
            infrastructure_proxmox: infrastructure_proxmox?,
            ipam_in_cluster: ipam_in_cluster?,
            operator: operator?,
            cert_manager,
            cert_manager_version,
            operator_manifest,
            span: node.head_span(),
        })
    }
}

/// Checks that vendored text is a stream of YAML documents, each an object (or empty), and
/// returns the objects.
fn manifest_documents(content: &str) -> Result<Vec<serde_json::Value>, String> {
    let docs: Vec<Option<serde_json::Value>> = serde_saphyr::from_multiple(content).map_err(|e| {
        let e = e.to_string();
        e.lines().next().unwrap_or("it does not parse as YAML").to_owned()
    })?;
    for (i, d) in docs.iter().enumerate() {
        match d {
            None | Some(serde_json::Value::Object(_)) => {}
            Some(_) => return Err(format!("document {} is not an object", i + 1)),
        }
    }
    Ok(docs.into_iter().flatten().collect())
}

/// Whether a schematic holding one user value encodes with certainty; if not, the refusal
/// points at that value.
fn encodable(one: &crate::schematic::Schematic, value: &Spanned<String>, d: &mut Diagnostics) -> bool {
    match one.canonical_yaml() {
        Ok(_) => true,
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.split(" (at `").next().unwrap_or(&msg).to_owned();
            d.push(
                Diagnostic::new(&codes::SCHEMATIC_UNENCODABLE, msg)
                    .at(value.span)
                    .label("cannot be hashed with certainty"),
            );
            false
        }
    }
}

fn parse_ip(s: &Spanned<String>, d: &mut Diagnostics) -> Option<Spanned<Ipv4Addr>> {
    if let Some((address, port)) = url_address(&s.value) {
        let port_help =
            port.map(|p| format!(" and the port as `port={p}` where the node takes one")).unwrap_or_default();
        d.push(
            Diagnostic::new(
                &codes::URL_NOT_ADDRESS,
                format!("`{}` is a URL; an IPv4 address is expected here", s.value),
            )
            .at(s.span)
            .label("a URL, not an address")
            .help(format!(
                "write the address alone: `\"{address}\"`{port_help}; fleetc builds the URLs the tools need from it"
            )),
        );
        return None;
    }
    match values::parse_ipv4(&s.value) {
        Ok(ip) => Some(Spanned::new(ip, s.span)),
        Err(e) => {
            d.push(Diagnostic::new(&codes::INVALID_VALUE, e).at(s.span).label("invalid address"));
            None
        }
    }
}

/// A path fleet.kdl may reference: relative, `/`-separated, without `..`.
/// Refuses a path that leaves the fleet's directory (`..`, absolute, empty parts): Argo CD
/// would read it from elsewhere in, or outside, the repository.
fn refuse_outside(p: &Spanned<String>, help: &str, d: &mut Diagnostics) {
    if let Err(e) = check_relative(&p.value) {
        d.push(Diagnostic::new(&codes::INVALID_VALUE, e).at(p.span).help(help));
    }
}

fn check_relative(path: &str) -> Result<(), String> {
    if path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path.split('/').any(|c| c == ".." || c.is_empty())
        || path.contains(':')
    {
        return Err(format!("`{path}` is not a relative path inside the fleet's directory"));
    }
    Ok(())
}

/// The pool's name for messages (`cp` for the control plane).
/// `encrypt "<volume>" key="<source>" [endpoint="…"] [sealed="…"]`: what is written, read.
/// Whether the platform can provide the key, and where a key may travel, is `check::disk`'s.
fn encryption(child: &Node, d: &mut Diagnostics) -> Option<crate::model::VolumeEncryption> {
    let mut r = Reader::new(child, &["key", "endpoint", "sealed"], d);
    let volume = r
        .arg_str(d, "a volume (`state` or `ephemeral`)")
        .and_then(|v| one_of(&crate::model::SystemVolume::ALL, &v, "an encryptable volume", d));
    let key = r.require_str("key", d).and_then(|k| one_of(&crate::model::KeySource::ALL, &k, "a key source", d));
    let endpoint = r.prop_str("endpoint", d);
    let sealed = r.prop_str("sealed", d);
    r.finish(false, d);
    Some(crate::model::VolumeEncryption { volume: volume?, key: key?, endpoint, sealed, span: child.head_span() })
}

fn pool_word(node: &Node) -> String {
    match node.args.first().map(|a| &a.kind) {
        Some(ValueKind::String(s)) => s.clone(),
        _ => "cp".to_owned(),
    }
}

/// A label or taint key Kubernetes accepts (`super::k8s`); reports it otherwise.
fn kubernetes_key(k: &Spanned<String>, what: &str, d: &mut Diagnostics) -> bool {
    let Some(why) = super::k8s::qualified_name_problem(&k.value) else { return true };
    let suggestion = super::k8s::suggest(&k.value);
    let mut diag = Diagnostic::new(
        &codes::INVALID_LABEL,
        format!("{what} key `{}` is not a Kubernetes qualified name: {why}", k.value),
    )
    .at(k.span)
    .label("Kubernetes refuses this key");
    if super::k8s::qualified_name_problem(&suggestion).is_none() && !suggestion.is_empty() {
        diag.help = Some(format!(
            "write `{suggestion}`: Kubernetes refuses the Node update with this key (k8s.io/apimachinery `IsQualifiedName`), so the node would never carry it"
        ));
    }
    d.push(diag);
    false
}

/// The most bytes (keys and values) the annotations of one object may hold: 256 KiB
/// (siderolabs/talos v1.13.9 `pkg/machinery/labels/validate.go` `TotalAnnotationSizeLimitB`).
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// Talos keeps three annotation keys for itself (the keys it owns on the Node) and refuses a
/// config that sets one (siderolabs/talos v1.13.9 `pkg/machinery/labels/validate.go`
/// `ValidateAnnotations`; the keys in `pkg/machinery/constants/constants.go`).
pub(crate) const TALOS_RESERVED_ANNOTATIONS: [&str; 3] =
    ["talos.dev/owned-labels", "talos.dev/owned-annotations", "talos.dev/owned-taints"];

fn annotation_not_reserved(k: &Spanned<String>, d: &mut Diagnostics) -> bool {
    if !TALOS_RESERVED_ANNOTATIONS.contains(&k.value.as_str()) {
        return true;
    }
    d.push(
        Diagnostic::new(&codes::INVALID_LABEL, format!("annotation key `{}` is reserved by Talos", k.value))
            .at(k.span)
            .label("Talos refuses this key")
            .help("Talos records in `talos.dev/owned-labels`, `talos.dev/owned-annotations` and `talos.dev/owned-taints` which Node keys it manages, and refuses a machine config that sets one (Talos `ValidateAnnotations`): choose a key of your own prefix"),
    );
    false
}

/// A label or taint value Kubernetes accepts; reports it otherwise.
fn kubernetes_value(v: &Spanned<String>, what: &str, d: &mut Diagnostics) -> bool {
    let Some(why) = super::k8s::label_value_problem(&v.value) else { return true };
    let suggestion = super::k8s::suggest(&v.value).replace('/', "-");
    let mut diag = Diagnostic::new(
        &codes::INVALID_LABEL,
        format!("{what} value `{}` is not a Kubernetes label value: {why}", v.value),
    )
    .at(v.span)
    .label("Kubernetes refuses this value");
    if super::k8s::label_value_problem(&suggestion).is_none() {
        diag.help = Some(format!(
            "write `{suggestion}`: Kubernetes refuses the Node update with this value (k8s.io/apimachinery `IsValidLabelValue`), so the node would never carry it"
        ));
    }
    d.push(diag);
    false
}

/// What a URL of fleet.kdl is handed to, and so which forms it may take.
#[derive(Clone, Copy)]
enum UrlUse {
    /// The Proxmox VE API: `https://` only (bpg v0.111.1 `proxmox/api/client.go`).
    ProxmoxApi,
    /// An S3 endpoint: `http://` or `https://`.
    S3,
    /// A git repository Argo CD clones: `https://`, `http://` or SSH (argo-cd v3.2.1
    /// `util/git/git.go`: `^(ssh://)?([^/:]*?)@[^@]+$` is SSH).
    GitRepo,
    /// A Helm chart repository: as a git repository's HTTP forms, or `oci://`.
    ChartRepo,
}

/// Why `s` is not a URL the tool of `usage` takes, with the URL to write instead, or `None`.
fn url_problem(s: &str, usage: UrlUse) -> Option<(String, String)> {
    let scheme = s.split_once("://").map(|(sc, _)| sc.to_ascii_lowercase());
    let rest_after = |s: &str| s.split_once("://").map_or(s.to_owned(), |(_, r)| r.to_owned());
    let host_ok = |s: &str| {
        let h = rest_after(s);
        let host = h.split(['/', ':', '?', '#']).next().unwrap_or("");
        !host.is_empty() && !h.contains(char::is_whitespace)
    };
    let ssh = |s: &str| {
        let body = s.strip_prefix("ssh://").unwrap_or(s);
        match body.split_once('@') {
            Some((user, host)) => {
                !user.contains(['/', ':'])
                    && !host.is_empty()
                    && !host.contains('@')
                    && !s.contains(char::is_whitespace)
            }
            None => false,
        }
    };
    let (allowed, example): (&[&str], String) = match usage {
        UrlUse::ProxmoxApi => {
            let hostport = rest_after(s).trim_end_matches('/').to_owned();
            let port = if hostport.split('/').next().unwrap_or("").contains(':') { "" } else { ":8006" };
            (&["https"], format!("https://{hostport}{port}"))
        }
        UrlUse::S3 => (&["https", "http"], format!("https://{}", rest_after(s))),
        UrlUse::GitRepo => (&["https", "http", "ssh"], format!("https://{}", rest_after(s))),
        UrlUse::ChartRepo => (&["https", "http", "oci"], format!("https://{}", rest_after(s))),
    };
    if matches!(usage, UrlUse::GitRepo) && ssh(s) {
        return None;
    }
    match scheme {
        Some(sc) if allowed.contains(&sc.as_str()) && host_ok(s) => None,
        Some(sc) if allowed.contains(&sc.as_str()) => Some(("it has no host, or holds a space".to_owned(), example)),
        Some(sc) => Some((
            format!(
                "`{sc}://` is not a scheme it takes ({})",
                allowed.iter().map(|a| format!("`{a}://`")).collect::<Vec<_>>().join(", ")
            ),
            example,
        )),
        None => Some(("it has no scheme".to_owned(), example)),
    }
}

/// Reports a string that is not the URL `usage` needs; true when it is one.
fn expect_url(v: &Spanned<String>, what: &str, usage: UrlUse, d: &mut Diagnostics) -> bool {
    let Some((why, instead)) = url_problem(&v.value, usage) else { return true };
    let reader = match usage {
        UrlUse::ProxmoxApi => "the Proxmox provider dials `https://host:port/` only (bpg v0.111.1 `NewConnection`)",
        UrlUse::S3 => {
            "the state lives in an S3 bucket (R3), and OpenTofu's s3 backend takes its endpoint as a base URL"
        }
        UrlUse::GitRepo => {
            "everything after the cluster comes from this repository through Argo CD (R23), which clones `https://`, `http://` or SSH URLs (argo-cd v3.2.1 `util/git/git.go`); anything else it reads as neither and cannot fetch"
        }
        UrlUse::ChartRepo => "Argo CD fetches a chart app (R23) from an `https://`, `http://` or `oci://` repository",
    };
    d.push(
        Diagnostic::new(&codes::NOT_A_URL, format!("{what} `{}` is not a URL the tool takes: {why}", v.value))
            .at(v.span)
            .label("not a URL")
            .help(format!("{reader}: write `{instead}`")),
    );
    false
}

/// `scheme://host[:port][/…]` or `host:port` where an address is expected: the host (and the
/// port, when one is written).
fn url_address(s: &str) -> Option<(String, Option<u16>)> {
    let (rest, had_scheme) = match s.split_once("://") {
        Some((scheme, rest)) if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphabetic()) => (rest, true),
        _ => (s, false),
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().ok()),
        None => (authority, None),
    };
    if had_scheme || (port.is_some() && values::parse_ipv4(host).is_ok()) {
        Some((host.to_owned(), port))
    } else {
        None
    }
}

#[cfg(test)]
mod url_tests {
    use super::{UrlUse, url_problem};

    /// The forms each reader takes (bpg v0.111.1 `NewConnection`; argo-cd v3.2.1
    /// `util/git/git.go` `sshURLRegex`), and the URL the help offers instead.
    #[test]
    fn urls_are_the_forms_their_readers_take() {
        for (s, usage) in [
            ("https://pve.home.arpa:8006", UrlUse::ProxmoxApi),
            ("https://pve.home.arpa:8006/", UrlUse::ProxmoxApi),
            ("http://minio.home.arpa:9000", UrlUse::S3),
            ("https://s3.fr-par.scw.cloud", UrlUse::S3),
            ("https://github.com/me/homelab.git", UrlUse::GitRepo),
            ("git@github.com:me/homelab.git", UrlUse::GitRepo),
            ("ssh://git@git.example.org/me/homelab.git", UrlUse::GitRepo),
            ("https://charts.jetstack.io", UrlUse::ChartRepo),
            ("oci://ghcr.io/stefanprodan/charts", UrlUse::ChartRepo),
        ] {
            assert_eq!(url_problem(s, usage), None, "{s}");
        }
        let instead = |s, usage| url_problem(s, usage).map(|(_, i)| i);
        assert_eq!(instead("pve.home.arpa", UrlUse::ProxmoxApi).as_deref(), Some("https://pve.home.arpa:8006"));
        assert_eq!(instead("http://pve:8006", UrlUse::ProxmoxApi).as_deref(), Some("https://pve:8006"));
        assert_eq!(instead("minio.home.arpa:9000", UrlUse::S3).as_deref(), Some("https://minio.home.arpa:9000"));
        assert_eq!(instead("github.com/me/homelab", UrlUse::GitRepo).as_deref(), Some("https://github.com/me/homelab"));
        assert!(url_problem("ftp://charts.example", UrlUse::ChartRepo).is_some());
        assert!(url_problem("oci://ghcr.io/x", UrlUse::GitRepo).is_some());
        assert!(url_problem("https://", UrlUse::S3).is_some());
        assert!(url_problem("https://git example.org/x", UrlUse::GitRepo).is_some());
    }
}
