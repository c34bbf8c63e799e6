//! A cluster's pools: `control-plane` and `pool "<name>"`, their properties (`count`, the
//! values of `pool-defaults`, `was`, `kubernetes`, `secure-boot`) and children (`label`,
//! `annotation`, `taint`, `addresses`, `encrypt`, `patch`, the per-machine settings and named
//! `node`s read in `nodes`), into a [`Pool`] and its [`Machine`]s, one per node of `count`.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use super::labels::{
    ANNOTATIONS_MAX_BYTES, annotation_not_reserved, kubelet_may_set, kubernetes_key, kubernetes_value,
};
use super::nodes::{NamedNode, TAINT_KEY_HELP};
use super::reader::{Reader, missing, unknown_child};
use super::settings::PoolDefaults;
use super::urls::parse_ip;
use super::{MAX_CLUSTER_NODES, Resolver, one_of};
use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{
    InstallDisk, Machine, NodeSettings, Patch, PatchLevel, Pool, Role, Spanned, Taint, TaintEffect, Version,
    VolumeEncryption,
};
use crate::syntax::{Node, ValueKind};

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

/// A pool's properties, as read: its name (`cp` for the control plane), the pool values its
/// levels gave with its own laid over them, and what only a pool says.
struct PoolProps {
    name: Option<Spanned<String>>,
    values: PoolDefaults,
    count: Option<Spanned<u32>>,
    former_name: Option<Spanned<String>>,
    kubernetes: Option<Spanned<Version>>,
    secure_boot: Option<Spanned<bool>>,
}

/// A pool's children, as read. A key set twice is reported at the second and keeps the
/// first (the `*_keys` maps hold where each key was first set).
struct PoolBlock {
    encrypt: Vec<VolumeEncryption>,
    labels: BTreeMap<String, Spanned<String>>,
    label_keys: BTreeMap<String, Span>,
    annotations: BTreeMap<String, Spanned<String>>,
    annotation_keys: BTreeMap<String, Span>,
    taint_keys: BTreeMap<String, Span>,
    taints: Vec<Taint>,
    addresses: Option<Vec<Spanned<Ipv4Addr>>>,
    /// How many `addresses` were written, read or not: an address refused at its value is
    /// not also a count mismatch.
    addresses_written: usize,
    /// The levels' patches, then the pool's own.
    patches: Vec<Patch>,
    /// The per-machine settings written on the pool, for each of its machines.
    node: NodeSettings,
    disks: Vec<InstallDisk>,
    named: Vec<NamedNode>,
}

impl Resolver<'_> {
    pub(super) fn pool(
        &mut self,
        node: &Node,
        role: Role,
        cluster: &str,
        inherited: &PoolDefaults,
        inherited_patches: &[Patch],
    ) -> Option<Pool> {
        self.role = role;
        let props = self.pool_props(node, role, inherited);
        let block = self.pool_block(node, role, inherited_patches);
        let d = &mut *self.diags;
        let head = node.head_span();
        annotations_fit(node, &block.annotations, d);
        let need = |v: Option<Spanned<String>>, what: &str, d: &mut Diagnostics| {
            v.or_else(|| {
                d.push(missing(node, what).help(
                    "set it on the pool or in `pool-defaults` at the cluster, environment or fleet (R5)".to_string(),
                ));
                None
            })
        };
        let p = props.values;
        let size = need(p.size, "a `size`", d);
        let schematic = need(p.schematic, "a `schematic`", d);
        let ephemeral_min_size =
            p.ephemeral_min_size.unwrap_or_else(|| Spanned::new("100GB".parse().expect("valid"), head));
        let data_disk_size = p.data_disk_size.unwrap_or(ephemeral_min_size.clone());
        let system_disk_size = p.system_disk_size.unwrap_or_else(|| Spanned::new("20GB".parse().expect("valid"), head));
        let (name, count) = (props.name?, props.count?);
        counts_agree(node, &name, &count, &block, d);
        let machines = machines(cluster, &name.value, count.value, &block);
        Some(Pool {
            name,
            role,
            count,
            size: size?,
            schematic: schematic?,
            ephemeral_min_size,
            data_disk_size,
            system_disk_size,
            labels: block.labels,
            annotations: block.annotations,
            taints: block.taints,
            node: block.node,
            machines,
            patches: block.patches,
            former_name: props.former_name,
            kubernetes: props.kubernetes.filter(|_| role == Role::Worker),
            disk: crate::model::DiskSecurity { encrypt: block.encrypt, secure_boot: props.secure_boot },
            span: head,
        })
    }

    /// Reads the pool's properties: its values over `inherited`, its `count` (bounded, or as
    /// many as it names nodes), `was`, a worker pool's `kubernetes` and `secure-boot`.
    fn pool_props(&mut self, node: &Node, role: Role, inherited: &PoolDefaults) -> PoolProps {
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
        PoolProps { name, values: p, count, former_name, kubernetes, secure_boot }
    }

    /// Reads the pool's children, in the order written.
    fn pool_block(&mut self, node: &Node, role: Role, inherited_patches: &[Patch]) -> PoolBlock {
        let mut b = PoolBlock {
            encrypt: Vec::new(),
            labels: BTreeMap::new(),
            label_keys: BTreeMap::new(),
            annotations: BTreeMap::new(),
            annotation_keys: BTreeMap::new(),
            taint_keys: BTreeMap::new(),
            taints: Vec::new(),
            addresses: None,
            addresses_written: 0,
            patches: inherited_patches.to_vec(),
            node: NodeSettings::default(),
            disks: Vec::new(),
            named: Vec::new(),
        };
        // The control plane's block is its role's and its pool's at once.
        let level = if role == Role::ControlPlane { PatchLevel::Role } else { PatchLevel::Pool };
        for child in node.children() {
            if child.name.value == "patch" {
                b.patches.extend(self.patch(child, level));
                continue;
            }
            if child.name.value == "node" {
                let mut node_patches = Vec::new();
                b.named.extend(self.named_node(child, &mut node_patches));
                continue;
            }
            if matches!(child.name.value.as_str(), "install-disk" | "ephemeral-disk" | "nameservers" | "arch") {
                self.node_setting(child, &pool_word(node), &mut b.node, &mut b.disks);
                continue;
            }
            let d = &mut *self.diags;
            match child.name.value.as_str() {
                "label" => b.label(child, node, role, d),
                "annotation" => b.annotation(child, node, d),
                "taint" => b.taint(child, node, d),
                "addresses" => {
                    let mut r = Reader::new(child, &[], d);
                    let written = r.rest_str(d, "node addresses");
                    b.addresses_written = written.len();
                    b.addresses = Some(written.iter().filter_map(|s| parse_ip(s, d)).collect());
                    r.finish(false, d);
                }
                "encrypt" => b.encrypt(child, node, d),
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
                        "ephemeral-disk",
                        "nameservers",
                        "arch",
                    ],
                    d,
                ),
            }
        }
        b
    }
}

impl PoolBlock {
    /// `label "<key>" "<value>"` of the pool `pool`.
    fn label(&mut self, child: &Node, pool: &Node, role: Role, d: &mut Diagnostics) {
        let mut r = Reader::new(child, &[], d);
        let k = r.arg_str(d, "a label key");
        let v = r.arg_str(d, "a label value");
        r.finish(false, d);
        if let (Some(k), Some(v)) = (k, v) {
            let valid = (kubernetes_key(&k, "label", d) & kubernetes_value(&v, "label", d))
                && (role == Role::ControlPlane || kubelet_may_set(&k, d));
            if let Some(first) = self.label_keys.get(&k.value) {
                d.push(
                    Diagnostic::new(
                        &codes::DUPLICATE_KEY,
                        format!("label `{}` is set twice on pool `{}`", k.value, pool_word(pool)),
                    )
                    .at(k.span)
                    .label("set again here")
                    .related(*first, "first set here"),
                );
            } else if valid {
                self.label_keys.insert(k.value.clone(), k.span);
                self.labels.insert(k.value, v);
            }
        }
    }

    /// `annotation "<key>" "<value>"` of the pool `pool`.
    fn annotation(&mut self, child: &Node, pool: &Node, d: &mut Diagnostics) {
        let mut r = Reader::new(child, &[], d);
        let k = r.arg_str(d, "an annotation key");
        let v = r.arg_str(d, "an annotation value");
        r.finish(false, d);
        if let (Some(k), Some(v)) = (k, v) {
            let valid = kubernetes_key(&k, "annotation", d) && annotation_not_reserved(&k, d);
            if let Some(first) = self.annotation_keys.get(&k.value) {
                d.push(
                    Diagnostic::new(
                        &codes::DUPLICATE_KEY,
                        format!("annotation `{}` is set twice on pool `{}`", k.value, pool_word(pool)),
                    )
                    .at(k.span)
                    .label("set again here")
                    .related(*first, "first set here")
                    .help("an annotation key holds one value: the second would silently replace the first"),
                );
            } else if valid {
                self.annotation_keys.insert(k.value.clone(), k.span);
                self.annotations.insert(k.value, v);
            }
        }
    }

    /// `taint "<key>" ["<value>"] [effect="…"]` of the pool `pool`; one per key and effect.
    fn taint(&mut self, child: &Node, pool: &Node, d: &mut Diagnostics) {
        let mut r = Reader::new(child, &["effect"], d);
        let k = r.arg_str(d, "a taint key");
        let value = if child.args.len() > 1 { r.arg_str(d, "a taint value").map(|v| v.value) } else { None };
        let effect = r.prop_str("effect", d).map_or(Some(TaintEffect::NoSchedule), |e| {
            one_of(&TaintEffect::ALL, &e, "a taint effect", d).map(|e| e.value)
        });
        r.finish(false, d);
        if let (Some(k), Some(effect)) = (k, effect) {
            let mut valid = kubernetes_key(&k, "taint", d);
            if let (Some(v), Some(arg)) = (&value, child.args.get(1)) {
                valid &= kubernetes_value(&Spanned::new(v.clone(), arg.span), "taint", d);
            }
            if let Some(first) = self.taint_keys.get(&k.value) {
                d.push(
                    Diagnostic::new(
                        &codes::DUPLICATE_KEY,
                        format!("taint `{}` is set twice on pool `{}`", k.value, pool_word(pool)),
                    )
                    .at(k.span)
                    .label("set again here")
                    .related(*first, "first set here")
                    .help(TAINT_KEY_HELP),
                );
            } else if valid {
                self.taint_keys.insert(k.value.clone(), k.span);
                self.taints.push(Taint { key: k.value, value, effect, span: child.head_span() });
            }
        }
    }

    /// `encrypt "<volume>" …` of the pool `pool`; one per volume.
    fn encrypt(&mut self, child: &Node, pool: &Node, d: &mut Diagnostics) {
        if let Some(e) = encryption(child, d) {
            if let Some(first) = self.encrypt.iter().find(|f| f.volume.value == e.volume.value) {
                d.push(
                    Diagnostic::new(
                        &codes::DUPLICATE_KEY,
                        format!("volume `{}` is encrypted twice on pool `{}`", e.volume.value.label(), pool_word(pool)),
                    )
                    .at(e.volume.span)
                    .label("set again here")
                    .related(first.volume.span, "first set here"),
                );
            } else {
                self.encrypt.push(e);
            }
        }
    }
}

/// Refuses annotations that together hold more than Talos and Kubernetes accept.
fn annotations_fit(node: &Node, annotations: &BTreeMap<String, Spanned<String>>, d: &mut Diagnostics) {
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
            .at(node.head_span())
            .label("too much annotation text")
            .help("keys and values together are limited to 256 KiB (Talos `TotalAnnotationSizeLimitB`, the API server's `TotalAnnotationSizeLimitB`): keep large data in a ConfigMap"),
        );
    }
}

/// Reports `addresses` that are not one per node, and named nodes past `count`.
fn counts_agree(node: &Node, name: &Spanned<String>, count: &Spanned<u32>, b: &PoolBlock, d: &mut Diagnostics) {
    let head = node.head_span();
    if let Some(addrs) = &b.addresses
        && addrs.len() != count.value as usize
        && b.addresses_written != count.value as usize
    {
        d.push(
            Diagnostic::new(
                &codes::INVALID_VALUE,
                format!("pool `{}` has {} nodes and {} addresses", name.value, count.value, b.addresses_written),
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
    if b.named.len() as u32 > count.value {
        let extra = &b.named[count.value as usize];
        d.push(
            Diagnostic::new(
                &codes::NODE_COUNT,
                format!("pool `{}` names {} nodes and has `count={}`", name.value, b.named.len(), count.value),
            )
            .at(extra.name.span)
            .label(format!("node {} of a pool of {}", count.value + 1, count.value))
            .related(count.span, "the node count"),
        );
    }
}

/// The pool's `count` machines. Named nodes are the pool's first machines, in the order
/// written; the others keep their generated names (`<cluster>-<pool>-<n>`).
fn machines(cluster: &str, pool: &str, count: u32, b: &PoolBlock) -> Vec<Machine> {
    (1..=count)
        .map(|i| {
            let own = b.named.get(i as usize - 1);
            let mut settings = b.node.clone();
            let mut written = b.disks.clone();
            if let Some(n) = own {
                let s = n.settings.clone();
                if s.install_disk.is_some() {
                    settings.install_disk = s.install_disk;
                }
                if s.ephemeral_disk.is_some() {
                    settings.ephemeral_disk = s.ephemeral_disk;
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
                    None => format!("{cluster}-{pool}-{i}"),
                },
                index: i,
                address: own
                    .and_then(|n| n.address.clone())
                    .or_else(|| b.addresses.as_ref().and_then(|a| a.get(i as usize - 1).cloned())),
                name: own.map(|n| n.name.clone()),
                maintenance_address: own.and_then(|n| n.maintenance_address.clone()),
                mac: own.and_then(|n| n.mac.clone()),
                install_disks_written: written,
                settings,
            }
        })
        .collect()
}

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

/// The pool's name for messages (`cp` for the control plane).
fn pool_word(node: &Node) -> String {
    match node.args.first().map(|a| &a.kind) {
        Some(ValueKind::String(s)) => s.clone(),
        _ => "cp".to_owned(),
    }
}
