//! fleetc owns what it emits: a user's patch may add to the Talos config, never silently undo
//! fleet.kdl. The fields fleetc owns are the ones its emitters write ([`cluster_documents`],
//! serialized to JSON: every leaf of every document a machine gets from `common.yaml`, its
//! pool's file and its node's file) plus the three the Talos generator writes from fleetc's
//! arguments (`machine.type`, `cluster.clusterName`, `cluster.controlPlane.endpoint`); the
//! [`OWNERS`] table only says, for each of them, which fleet.kdl property writes it (and its
//! place in the model) and which rule, if any, it enforces. A test holds every emitted field to
//! a row. [`check`] merges a patch document into the documents it reaches as Talos would
//! (`configpatcher/strategic.go`: documents matched by kind and name; `merge/merge.go`: maps
//! merged, lists appended except `merge:"replace"` ones, `$patch: delete` removes), and reports
//! every owned field it sets to another value, adds to or deletes (`fleet::talos::
//! patch-owned-field`), every named document it restates without the CEL selector fleetc
//! writes (`patch-drops-selector`), what it changes that a rule fixes outside the emitted
//! fields (a device-path install disk where no selector stays, R15: `patch-undoes-rule`; beside
//! fleetc's selector it has no effect, `patch-install-disk-unused`, a warning), and
//! an `overrides=` that overrides nothing (`patch-stale-override`). An owned field a rule owns
//! is a warning when the patch says `overrides="R…"`. It reads the emitters' documents, so it
//! lives in the emit floor (check may not import emit) and runs where emit runs: only when
//! `check` found no error (`emit::all`). docs/fleet-language.md ("`patch`") prints the table
//! from [`table_markdown`].

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{TalosDocs, cluster_documents};
use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::patch::PatchDocument;
use crate::model::{Cluster, Environment, Fleet, Ipv4Net, Machine, Patch, Pool};

/// Where an owned value comes from in the model, for one machine (or, in a managed cluster, the
/// pool as a whole).
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub env: &'a Environment,
    pub cluster: &'a Cluster,
    pub pool: &'a Pool,
    pub machine: Option<&'a Machine>,
}

/// One row of the ownership table: the fields of `kind` (named `name`, any name when `None`)
/// under `prefix` (a JSON pointer; `*` is any one key) belong to `property`.
pub struct Owner {
    pub kind: &'static str,
    pub name: Option<&'static str>,
    pub prefix: &'static str,
    /// The fleet.kdl property that writes the value, as the help names it; empty when fleetc
    /// always writes the same value.
    pub property: &'static str,
    /// Why fleetc writes it (one clause, for the help).
    pub why: &'static str,
    /// The rule that fixes the value, which `overrides=` may name.
    pub rule: Option<&'static str>,
    /// Where the value is written in fleet.kdl.
    span: fn(&Scope<'_>, &str) -> Option<Span>,
}

fn last_key(pointer: &str) -> String {
    pointer.rsplit('/').next().unwrap_or("").replace("~1", "/").replace("~0", "~")
}

fn cluster_span(s: &Scope<'_>, _: &str) -> Option<Span> {
    Some(s.cluster.span)
}
fn endpoint_span(s: &Scope<'_>, _: &str) -> Option<Span> {
    Some(s.cluster.endpoint.host_span())
}
fn network_span(s: &Scope<'_>, _: &str) -> Option<Span> {
    Some(s.env.network.span)
}
fn pool_span(s: &Scope<'_>, _: &str) -> Option<Span> {
    Some(s.pool.span)
}
fn machine_span(s: &Scope<'_>, p: &str) -> Option<Span> {
    s.machine.and_then(|m| m.name.as_ref().map(|n| n.span).or(m.address.as_ref().map(|a| a.span))).or(pool_span(s, p))
}
fn addons_span(s: &Scope<'_>, p: &str) -> Option<Span> {
    s.cluster.addons.first().map(|a| a.span).or(cluster_span(s, p))
}
fn label_span(s: &Scope<'_>, p: &str) -> Option<Span> {
    let key = last_key(p);
    s.machine.and_then(|m| m.settings.labels.get(&key)).or(s.pool.labels.get(&key)).map(|l| l.span).or(pool_span(s, p))
}
fn annotation_span(s: &Scope<'_>, p: &str) -> Option<Span> {
    s.pool.annotations.get(&last_key(p)).map(|a| a.span).or(pool_span(s, p))
}
fn taint_span(s: &Scope<'_>, p: &str) -> Option<Span> {
    let key = last_key(p);
    let mine = s.machine.into_iter().flat_map(|m| &m.settings.taints);
    mine.chain(&s.pool.taints).find(|t| t.key == key).map(|t| t.span).or(pool_span(s, p))
}
fn install_disk_span(s: &Scope<'_>, p: &str) -> Option<Span> {
    s.machine
        .and_then(|m| m.settings.install_disk.as_ref())
        .map(|d| d.span)
        .or(Some(s.pool.ephemeral_min_size.span))
        .or(pool_span(s, p))
}
fn link_span(s: &Scope<'_>, p: &str) -> Option<Span> {
    let links = s.machine.map(|m| &m.settings.links[..]).unwrap_or_default();
    links.first().map(|l| l.span).or(machine_span(s, p))
}
fn state_span(s: &Scope<'_>, p: &str) -> Option<Span> {
    s.pool.disk.volume(crate::model::SystemVolume::State).map(|e| e.span).or(pool_span(s, p))
}
fn ephemeral_encrypt_span(s: &Scope<'_>, p: &str) -> Option<Span> {
    s.pool.disk.volume(crate::model::SystemVolume::Ephemeral).map(|e| e.span).or(pool_span(s, p))
}

const fn row(
    kind: &'static str,
    prefix: &'static str,
    property: &'static str,
    why: &'static str,
    rule: Option<&'static str>,
    span: fn(&Scope<'_>, &str) -> Option<Span>,
) -> Owner {
    Owner { kind, name: None, prefix, property, why, rule, span }
}

const fn named(name: &'static str, o: Owner) -> Owner {
    Owner { name: Some(name), ..o }
}

const V1: &str = "v1alpha1";

/// Every field fleetc writes, by document and pointer, with who owns it. One place: the
/// check, its messages and the docs' table all read it.
pub const OWNERS: &[Owner] = &[
    row(
        V1,
        "/machine/type",
        "the block the node is in (`control-plane` or a `pool`)",
        "a node's role comes from its pool: the Talos generator writes it from the role fleetc passes (`machine_type`), and OpenTofu, Cluster API and the review count the node in that pool",
        None,
        pool_span,
    ),
    row(
        V1,
        "/machine/certSANs",
        "`endpoint address=` (or `name=`), the environment's `gateway` and the cluster's `cert-sans`",
        "the gateway through which the Talos API is reached must be in the certificate (R16)",
        Some("R16"),
        endpoint_span,
    ),
    row(
        V1,
        "/machine/kubelet/nodeIP/validSubnets",
        "the environment's `network`",
        "the kubelet's node IP stays on the private subnet (R18)",
        Some("R18"),
        network_span,
    ),
    row(
        V1,
        "/machine/features/kubePrism",
        "",
        "fleetc always runs KubePrism, the in-cluster API endpoint its add-ons use",
        None,
        cluster_span,
    ),
    row(
        V1,
        "/machine/features/kubernetesTalosAPIAccess",
        "`addons` (a cloud controller manager that reads the Talos API)",
        "the manager reads node metadata through the Talos API",
        None,
        addons_span,
    ),
    row(V1, "/machine/sysctls/*", "`runtimes \"gvisor\"`", "gVisor needs user namespaces", None, cluster_span),
    row(
        V1,
        "/machine/install/image",
        "the pool's `schematic` and the fleet's `talos`",
        "the standard installer removes the schematic's extensions at the next upgrade (R17)",
        Some("R17"),
        |s, _| Some(s.pool.schematic.span),
    ),
    row(
        V1,
        "/machine/install/diskSelector",
        "the pool's `ephemeral-min-size` or the node's `install-disk`",
        "disks are selected by size, never by device path (R15)",
        Some("R15"),
        install_disk_span,
    ),
    row(
        V1,
        "/machine/install/disk",
        "the node's `install-disk device=`",
        "a device path names another disk when volumes attach in another order (R15)",
        Some("R15"),
        install_disk_span,
    ),
    row(
        V1,
        "/machine/nodeLabels/*",
        "`label` (the pool's or the node's)",
        "fleet.kdl declares the node's labels",
        None,
        label_span,
    ),
    row(
        V1,
        "/machine/nodeAnnotations/*",
        "the pool's `annotation`",
        "fleet.kdl declares the node's annotations",
        None,
        annotation_span,
    ),
    row(
        V1,
        "/machine/nodeTaints/*",
        "`taint` (the pool's or the node's)",
        "fleet.kdl declares the node's taints",
        None,
        taint_span,
    ),
    row(
        V1,
        "/machine/kubelet/extraConfig/registerWithTaints",
        "`taint` (a worker pool's or node's)",
        "a worker registers with its taints: NodeRestriction refuses a node that changes its own taints later",
        None,
        |s, p| {
            s.machine
                .and_then(|m| m.settings.taints.first())
                .or(s.pool.taints.first())
                .map(|t| t.span)
                .or(pool_span(s, p))
        },
    ),
    row(
        V1,
        "/cluster/clusterName",
        "the `cluster` name",
        "the Talos generator writes it from the name fleetc passes (`cluster_name`)",
        None,
        |s, _| Some(s.cluster.name.span),
    ),
    row(
        V1,
        "/cluster/controlPlane/endpoint",
        "`endpoint address=` (or `name=`)",
        "the Talos generator writes it from the endpoint fleetc passes (`cluster_endpoint`); the certSANs and the VIP follow the same address",
        None,
        endpoint_span,
    ),
    row(
        V1,
        "/cluster/controlPlane/localAPIServerPort",
        "`endpoint port=`",
        "the API server listens on the port every node's and kubeconfig's endpoint names (written when it is not 6443)",
        None,
        |s, _| Some(s.cluster.endpoint.port_span.unwrap_or(s.cluster.endpoint.span)),
    ),
    row(
        V1,
        "/cluster/externalCloudProvider",
        "`addons` (a cloud controller manager)",
        "nodes wait for the manager to set their providerID (R25)",
        None,
        addons_span,
    ),
    row(
        V1,
        "/cluster/allowSchedulingOnControlPlanes",
        "the cluster's worker `pool`s",
        "with no worker pool the control plane runs the workloads",
        None,
        cluster_span,
    ),
    row(
        V1,
        "/cluster/network/cni",
        "`cni`",
        "one CNI per node: with a CNI add-on Talos deploys none (R25)",
        None,
        |s, p| s.cluster.cni.as_ref().map(|c| c.span).or(cluster_span(s, p)),
    ),
    row(
        V1,
        "/cluster/network/podSubnets",
        "`pod-cidr`",
        "fleetc checks the pod network against the private network and the service network",
        None,
        |s, _| Some(s.cluster.pod_cidr.span),
    ),
    row(
        V1,
        "/cluster/network/serviceSubnets",
        "`service-cidr`",
        "fleetc checks the service network against the private network and the pod network",
        None,
        |s, _| Some(s.cluster.service_cidr.span),
    ),
    row(
        V1,
        "/cluster/discovery/enabled",
        "`discovery`",
        "discovery announces the cluster's members to a hosted service (R21)",
        Some("R21"),
        |s, _| Some(s.cluster.discovery.span),
    ),
    row(
        V1,
        "/cluster/apiServer/certSANs",
        "`endpoint address=` (or `name=`), the environment's `gateway` and the cluster's `cert-sans`",
        "the gateway through which the API is reached must be in the certificate (R16)",
        Some("R16"),
        endpoint_span,
    ),
    row(
        V1,
        "/cluster/proxy",
        "`cni` (its add-on replaces kube-proxy)",
        "kube-proxy and a CNI that replaces it would both program services (F12)",
        None,
        |s, p| s.cluster.cni.as_ref().map(|c| c.span).or(cluster_span(s, p)),
    ),
    row(
        V1,
        "/cluster/etcd/advertisedSubnets",
        "the environment's `network`",
        "etcd advertises its address on the private network, as the kubelet's node IP (R18)",
        Some("R18"),
        network_span,
    ),
    row(
        V1,
        "/cluster/inlineManifests",
        "`addons` and `runtimes`",
        "the add-ons and runtime classes are embedded from fleet.kdl's pinned manifests (R11)",
        None,
        addons_span,
    ),
    named(
        "STATE",
        row(
            "VolumeConfig",
            "/encryption",
            "the pool's `encrypt \"state\"`",
            "fleet.kdl encrypts STATE",
            None,
            state_span,
        ),
    ),
    named(
        "EPHEMERAL",
        row(
            "VolumeConfig",
            "/provisioning/diskSelector/match",
            "the pool's `ephemeral-min-size` (a VM) or the node's `ephemeral-disk` (bare metal)",
            "EPHEMERAL is on the data disk, selected by size (R15, F5)",
            Some("R15"),
            |s, _| Some(s.pool.ephemeral_min_size.span),
        ),
    ),
    named(
        "EPHEMERAL",
        row(
            "VolumeConfig",
            "/provisioning/grow",
            "",
            "EPHEMERAL takes the whole data disk (R15, F5)",
            Some("R15"),
            |s, _| Some(s.pool.ephemeral_min_size.span),
        ),
    ),
    named(
        "EPHEMERAL",
        row(
            "VolumeConfig",
            "/encryption",
            "the pool's `encrypt \"ephemeral\"`",
            "fleet.kdl encrypts EPHEMERAL",
            None,
            ephemeral_encrypt_span,
        ),
    ),
    row(
        "HostnameConfig",
        "/hostname",
        "the node's name (`node \"…\"`, or the pool's generated names)",
        "the hostname is the node's name in OpenTofu, the inventory and review",
        None,
        machine_span,
    ),
    row(
        "HostnameConfig",
        "/auto",
        "",
        "the generated hostname must not compete with the static one",
        None,
        machine_span,
    ),
    row(
        "LinkAliasConfig",
        "/selector/match",
        "",
        "on Proxmox the VM's one virtio NIC is `net0`, whatever its kernel name",
        None,
        cluster_span,
    ),
    row(
        "LinkConfig",
        "/addresses",
        "the node's `address` (or its `link`'s)",
        "fleetc checks the address against the network and the other nodes",
        None,
        link_span,
    ),
    row(
        "LinkConfig",
        "/routes",
        "the node's `link` `route`, or the environment's `router`",
        "the default route is the environment's router",
        None,
        link_span,
    ),
    row("BondConfig", "/", "the node's `bond`", "fleet.kdl declares the node's links", None, link_span),
    row("VLANConfig", "/", "the node's `vlan`", "fleet.kdl declares the node's links", None, link_span),
    row(
        "ResolverConfig",
        "/nameservers",
        "the node's `nameservers`, or the environment's `dns`",
        "fleet.kdl declares the DNS servers",
        None,
        machine_span,
    ),
    row(
        "Layer2VIPConfig",
        "/link",
        "`endpoint address=` and the node's `link` (none for `endpoint name=`)",
        "the control plane holds the endpoint's shared address on this link",
        None,
        endpoint_span,
    ),
];

/// The named documents' CEL selectors Talos replaces on merge (see [`check`]), with what the
/// machine then does.
const SELECTORS: &[(&str, &str, &str)] = &[
    (
        "VolumeConfig",
        "/provisioning/diskSelector/match",
        "the volume falls back to Talos's default, the system disk (siderolabs/talos v1.13.9 `internal/app/machined/pkg/controllers/block/internal/volumes/volumeconfig/system_volumes.go`, `DiskSelector().ValueOr(systemDiskMatch())`), and the data disk goes unused (R15, F5)",
    ),
    (
        "LinkAliasConfig",
        "/selector/match",
        "the alias matches no link, and the documents that name it (the node's address and routes, the VIP) configure nothing",
    ),
];

/// Lists Talos replaces on merge instead of appending to (`merge:"replace"`, siderolabs/talos
/// v1.13.9 `pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`, `ClusterNetworkConfig`).
const REPLACED_LISTS: &[&str] = &["/cluster/network/podSubnets", "/cluster/network/serviceSubnets"];

/// Lists whose items are keyed by `name`: a patch item of another name adds to them.
const KEYED_LISTS: &[&str] = &["/cluster/inlineManifests"];

fn segments(p: &str) -> Vec<&str> {
    p.split('/').skip(1).filter(|s| !s.is_empty()).collect()
}

impl Owner {
    fn covers(&self, kind: &str, name: Option<&str>, pointer: &str) -> bool {
        if self.kind != kind || self.name.is_some_and(|n| Some(n) != name) {
            return false;
        }
        let (row, at) = (segments(self.prefix), segments(pointer));
        row.len() <= at.len() && row.iter().zip(&at).all(|(r, a)| *r == "*" || r == a)
    }
    /// The field as the docs' table shows it.
    fn render_field(&self) -> String {
        let f = dotted(self.prefix);
        if f.is_empty() { "every field".to_owned() } else { format!("`{f}`") }
    }
}

/// The row that owns `pointer` of document `kind`/`name`: the most specific one.
pub fn owner(kind: &str, name: Option<&str>, pointer: &str) -> Option<&'static Owner> {
    OWNERS.iter().filter(|o| o.covers(kind, name, pointer)).max_by_key(|o| segments(o.prefix).len())
}

/// `/machine/install/image` → `machine.install.image`
fn dotted(pointer: &str) -> String {
    segments(pointer).join(".").replace("~1", "/").replace("~0", "~")
}

fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

/// A document's identity as Talos matches documents: its kind and, for a named one, its name.
type DocId = (String, Option<String>);

fn doc_id(v: &Value) -> DocId {
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or(V1).to_owned();
    let name = if kind == V1 { None } else { v.get("name").and_then(Value::as_str).map(str::to_owned) };
    (kind, name)
}

/// JSON merge as fleetc's own files combine (common, pool, node): maps merged, lists appended.
fn merge(into: &mut Value, v: Value) {
    match (into, v) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(x) => merge(x, v),
                    None => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => a.extend(b),
        (x, v) => *x = v,
    }
}

/// What one machine (or a managed pool's template) gets from fleetc, document by document:
/// the emitted documents merged, plus the generator's fields from fleetc's arguments.
pub fn emitted(docs: &TalosDocs, scope: &Scope<'_>) -> BTreeMap<DocId, Value> {
    let mut out: BTreeMap<DocId, Value> = BTreeMap::new();
    let files = match scope.machine {
        Some(m) => docs.for_node(scope.pool, &m.hostname),
        None => [Some(&docs.common), docs.pool(scope.pool)].into_iter().flatten().collect(),
    };
    for f in files {
        for d in &f.docs {
            // The model's defaults (`model_defaults`: 1.14's SecurityProfileConfig and
            // FilesystemTrimConfig) are what `talosctl gen config` gives every new cluster,
            // not a fleet.kdl fact: a patch may change them (docs/talos.md, "The 1.14 model").
            if matches!(d, super::Document::SecurityProfile(_) | super::Document::FilesystemTrim(_)) {
                continue;
            }
            let Ok(v) = serde_json::to_value(d) else { continue };
            let id = doc_id(&v);
            match out.get_mut(&id) {
                Some(x) => merge(x, v),
                None => {
                    out.insert(id, v);
                }
            }
        }
    }
    let endpoint = &scope.cluster.endpoint;
    let generated = serde_json::json!({
        "machine": {"type": scope.pool.role.as_str()},
        "cluster": {
            "clusterName": scope.cluster.name.value,
            "controlPlane": {"endpoint": format!("https://{}:{}", endpoint.host(), endpoint.port)},
        },
    });
    merge(out.entry((V1.to_owned(), None)).or_insert_with(|| Value::Object(Map::new())), generated);
    out
}

/// Every leaf pointer of a value (a list, a scalar or an empty map is a leaf).
pub fn leaves(v: &Value, at: &str) -> Vec<String> {
    match v {
        Value::Object(m) if !m.is_empty() => {
            m.iter().flat_map(|(k, x)| leaves(x, &format!("{at}/{}", escape(k)))).collect()
        }
        _ => vec![at.to_owned()],
    }
}

/// The fields of an emitted document that are its identity, not its content.
pub fn is_identity(kind: &str, pointer: &str) -> bool {
    kind != V1 && matches!(pointer, "/apiVersion" | "/kind" | "/name")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Set,
    Add,
    Delete,
}

/// One owned field a patch document touches: `at` is its pointer in both the patch and the
/// emitted document (a list item's index is the patch's).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Touch {
    at: String,
    action: Action,
}

fn is_delete(v: &Value) -> bool {
    v.get("$patch").and_then(Value::as_str) == Some("delete")
}

/// Merges `patch` into `have` at `at` as Talos would, and records what it changes.
fn walk(patch: &Value, have: Option<&Value>, at: &str, out: &mut Vec<Touch>) {
    let Some(have) = have.filter(|h| !h.is_null()) else { return };
    match patch {
        Value::Null => {}
        Value::Object(m) => {
            if is_delete(patch) {
                out.push(Touch { at: at.to_owned(), action: Action::Delete });
                return;
            }
            let Value::Object(h) = have else {
                out.push(Touch { at: at.to_owned(), action: Action::Set });
                return;
            };
            for (k, v) in m.iter().filter(|(k, _)| *k != "$patch") {
                walk(v, h.get(k), &format!("{at}/{}", escape(k)), out);
            }
        }
        Value::Array(items) => {
            let Value::Array(h) = have else {
                out.push(Touch { at: at.to_owned(), action: Action::Set });
                return;
            };
            let (deletes, rest): (Vec<_>, Vec<_>) = items.iter().enumerate().partition(|(_, v)| is_delete(v));
            for (i, d) in deletes {
                // Talos deletes the items whose first key other than `$patch` has that value
                // (`configloader/internal/decoder/delete.go`, `makeSequenceSelector`).
                let sel = d.as_object().and_then(|m| m.iter().find(|(k, _)| *k != "$patch"));
                if let Some((k, val)) = sel
                    && h.iter().any(|x| x.get(k) == Some(val))
                {
                    out.push(Touch { at: format!("{at}/{i}"), action: Action::Delete });
                }
            }
            if KEYED_LISTS.contains(&at) {
                for (i, item) in &rest {
                    let name = item.get("name");
                    if name.is_some() && h.iter().any(|x| x.get("name") == name) {
                        out.push(Touch { at: format!("{at}/{i}"), action: Action::Set });
                    }
                }
            } else if !rest.is_empty() {
                let rest: Vec<&Value> = rest.into_iter().map(|(_, v)| v).collect();
                if REPLACED_LISTS.contains(&at) {
                    if rest.len() != h.len() || rest.iter().zip(h).any(|(a, b)| *a != b) {
                        out.push(Touch { at: at.to_owned(), action: Action::Set });
                    }
                } else if rest.iter().any(|v| !h.contains(v)) {
                    out.push(Touch { at: at.to_owned(), action: Action::Add });
                }
            }
        }
        scalar => {
            if scalar != have {
                out.push(Touch { at: at.to_owned(), action: Action::Set });
            }
        }
    }
}

/// Owned lists a patch may add to: Talos appends the patch's items to fleetc's (no
/// `merge:"replace"` tag; siderolabs/talos v1.13.9 `pkg/machinery/config/merge/merge.go` l.90), so
/// the merged list keeps every item fleetc writes, and what fleetc's rule needs of it stays.
/// - the certSANs (`v1alpha1_types.go` l.261 `MachineCertSANs`, l.1216 `APIServerConfig.CertSANs`):
///   R16 needs the gateway and the endpoint in the certificate, and they stay in it; another
///   name only widens it. Always an addition.
/// - the kubelet's node IP subnets (l.790 `KubeletNodeIPValidSubnets`): R18 needs the node IP on
///   the private network, so an added subnet is an addition only when it cannot select another
///   address of the node ([`node_ip_subnet`]).
/// - etcd's advertised subnets (`EtcdConfig.EtcdAdvertisedSubnets`, a plain list too, v1.13.9
///   l.1495): etcd advertises every address of the node the subnets select
///   (`controllers/etcd/spec.go`), so an added subnet is judged as a node IP subnet is.
const ADDITIVE_LISTS: &[&str] = &["/machine/certSANs", "/cluster/apiServer/certSANs", VALID_SUBNETS, ETCD_SUBNETS];
const VALID_SUBNETS: &str = "/machine/kubelet/nodeIP/validSubnets";
const ETCD_SUBNETS: &str = "/cluster/etcd/advertisedSubnets";

/// Whether every item a patch adds to the owned list at `pointer` (of the `kind` document) is
/// an addition, whatever it is: the certSANs.
pub fn always_additive(kind: &str, pointer: &str) -> bool {
    kind == V1 && pointer != VALID_SUBNETS && pointer != ETCD_SUBNETS && ADDITIVE_LISTS.contains(&pointer)
}

/// The items of a patch list that the list it patches does not hold (the `$patch: delete` ones
/// apart: they are judged as deletes).
/// Each with its index in the patch's list.
fn added_items<'v>(patch: Option<&'v Value>, have: Option<&Value>) -> Vec<(usize, &'v Value)> {
    let (Some(Value::Array(p)), Some(Value::Array(h))) = (patch, have) else { return Vec::new() };
    p.iter().enumerate().filter(|(_, v)| !is_delete(v) && !h.contains(v)).collect()
}

/// Whether adding `added` to the owned list at `pointer` is an addition: `None` for a list that
/// is never one, `Some(Ok)` when every item keeps what fleetc's rule needs, `Some(Err(why))`
/// when one does not (the first such item's index in the patch's list, and why).
fn addition(pointer: &str, added: &[(usize, &Value)], node: &NodeNet) -> Option<Result<(), (usize, String)>> {
    if !ADDITIVE_LISTS.contains(&pointer) || added.is_empty() {
        return None;
    }
    if pointer != VALID_SUBNETS && pointer != ETCD_SUBNETS {
        return Some(Ok(()));
    }
    Some(added.iter().try_for_each(|(i, v)| node_ip_subnet(v, node).map_err(|w| (*i, w))))
}

/// What fleetc knows of the networks a machine is on, to judge an added node IP subnet.
pub struct NodeNet {
    /// The environment's network, where fleetc puts the node's address.
    pub network: Ipv4Net,
    /// `None` when fleetc makes every IPv4 address the node has (each in `network` or in
    /// `others`); else why it does not.
    pub unknown: Option<String>,
    /// The addresses fleetc's own documents give the node outside `network` (a `vlan`'s, a
    /// `link`'s), with the document that gives each.
    pub others: Vec<(Ipv4Net, String)>,
}

/// Document kinds that give a link addresses (a static list or a DHCP lease): a patch that has
/// one may bring the node an address outside the environment's network.
const ADDRESS_KINDS: &[&str] =
    &["LinkConfig", "DummyLinkConfig", "BondConfig", "BridgeConfig", "VLANConfig", "WireguardConfig"];

/// The first document of `patches` that gives the node an address of its own: a link document
/// with `addresses`, a DHCP document, or the deprecated `machine.network.interfaces`.
fn address_source<'p>(patches: impl Iterator<Item = &'p Patch>) -> Option<(String, String)> {
    for p in patches {
        for d in &p.file.documents {
            let kind = d.kind();
            let gives = (ADDRESS_KINDS.contains(&kind) && d.value.get("addresses").is_some())
                || matches!(kind, "DHCPv4Config" | "DHCPv6Config")
                || (kind == V1 && d.value.pointer("/machine/network/interfaces").is_some());
            if gives && !is_delete(&d.value) {
                return Some((p.path.value.clone(), kind.to_owned()));
            }
        }
    }
    None
}

/// The networks of the machine (or managed pool) of `scope`. fleetc makes every IPv4 address of
/// the node where it makes the machine and its one network interface:
/// - Scaleway: the server has no public address (`enable_dynamic_ip = false`, R12) and one
///   private NIC on the environment's private network (emit/tofu/scaleway.rs). Talos's Scaleway
///   platform runs DHCP on the public `eth0` only when the metadata has a public IPv4
///   (siderolabs/talos v1.13.9 `internal/app/machined/pkg/runtime/v1alpha1/platform/scaleway/scaleway.go`
///   l.84-93); the private NIC gets Talos's default DHCP (`internal/app/machined/pkg/controllers/network/operator_config.go`
///   l.288-330), a lease from the private network's IPAM, in `network`.
/// - Proxmox: the VM has one `network_device` (emit/tofu/proxmox.rs) with fleetc's static
///   address (the node's `LinkConfig`, and NoCloud's `ip_config`), in `network`.
///
/// Not on bare metal, where Talos runs that default DHCP on every physical link no document
/// configures (`operator_config.go` l.288-330), on networks fleetc does not create; not in a
/// managed cluster, whose machines Cluster API makes; and not when a patch reaching the machine
/// gives it addresses of its own.
pub fn node_net(scope: &Scope<'_>, emitted: &BTreeMap<DocId, Value>) -> NodeNet {
    let network = scope.env.network.value;
    let mut others = Vec::new();
    for ((kind, name), v) in emitted {
        let Some(Value::Array(addrs)) = v.get("addresses").filter(|_| ADDRESS_KINDS.contains(&kind.as_str())) else {
            continue;
        };
        for a in addrs.iter().filter_map(|a| a.get("address").and_then(Value::as_str)) {
            // The host address (`10.10.0.21/22` → `10.10.0.21/32`): what a subnet would select.
            let host = a.split_once('/').map_or(a, |(h, _)| h);
            if let Some(x) = v4_net(host).filter(|x| !network.contains(x.addr)) {
                others.push((x, format!("`{kind}` `{}`", name.as_deref().unwrap_or(""))));
            }
        }
    }
    let mine = scope.machine.into_iter().flat_map(|m| &m.settings.patches);
    let unknown = if scope.cluster.is_managed() {
        Some("Cluster API makes the machines of a managed cluster, and fleetc does not make their links".to_owned())
    } else if matches!(scope.env.provider, crate::model::Provider::Metal(_)) {
        Some("on bare metal Talos runs DHCP on every physical link no document configures (siderolabs/talos v1.13.9 `internal/app/machined/pkg/controllers/network/operator_config.go` l.288-330), on networks fleetc does not create".to_owned())
    } else {
        address_source(scope.pool.patches.iter().chain(mine)).map(|(file, kind)| {
            format!("`{file}` gives the node addresses of its own (`{kind}`), which fleetc does not judge")
        })
    };
    NodeNet { network, unknown, others }
}

/// RFC 1918's private IPv4 ranges.
const PRIVATE_V4: [(u32, u8); 3] = [(0x0a00_0000, 8), (0xac10_0000, 12), (0xc0a8_0000, 16)];

/// An IPv4 or IPv6 subnet or address as Talos's node IP filter reads one
/// (siderolabs/net v0.4.0 `net.go` `FilterIPs` → `ParseSubnetOrAddress`; an address is its /32
/// or /128); `None` when it is neither.
fn parse_subnet(s: &str) -> Option<std::net::IpAddr> {
    let addr = s.split_once('/').map_or(s, |(a, _)| a);
    addr.parse().ok()
}

fn v4_net(s: &str) -> Option<Ipv4Net> {
    let (addr, prefix) = s.split_once('/').unwrap_or((s, "32"));
    let addr: std::net::Ipv4Addr = addr.parse().ok()?;
    let prefix: u8 = prefix.parse().ok().filter(|p| *p <= 32)?;
    let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(prefix)) };
    Some(Ipv4Net { addr: (u32::from(addr) & mask).into(), prefix })
}

/// An item a patch adds to the kubelet's node IP subnets, judged by what Talos does with it: the
/// nodeip controller takes the node's routed addresses less the pod and service subnets
/// (siderolabs/talos v1.13.9 `internal/app/machined/pkg/controllers/k8s/nodeip.go` l.84-108,
/// `k8s/address_filter.go` l.128-129), keeps those the subnets select (`!` excludes) and then
/// the first IPv4 and the first IPv6 (l.119-141). fleetc's list is the environment's IPv4
/// network; an added item keeps R18 when it can select no other address of the node:
/// - an exclusion (`!…`) that does not reach the environment's network removes nothing fleetc
///   selects; one that does may remove the node's address.
/// - an IPv6 subnet is refused: the node may have an IPv6 address (Scaleway's private networks
///   have an IPv6 prefix, which Scaleway picks), and an IPv6 node IP beside the IPv4 one is what
///   R18 keeps out.
/// - an IPv4 subnet outside RFC 1918's private ranges is refused (it is not "a private subnet").
/// - a private IPv4 subnet is an addition where fleetc makes every IPv4 address of the node
///   ([`node_net`]): they are all in the environment's network, which fleetc's item selects
///   already.
fn node_ip_subnet(v: &Value, node: &NodeNet) -> Result<(), String> {
    let Some(item) = v.as_str() else { return Err(format!("`{v}` is not a subnet")) };
    let (exclude, s) = match item.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, item),
    };
    let Some(ip) = parse_subnet(s) else { return Err(format!("`{item}` is not a subnet")) };
    let net = &node.network;
    match (exclude, ip) {
        (true, std::net::IpAddr::V6(_)) => Ok(()),
        (true, std::net::IpAddr::V4(_)) => match v4_net(s) {
            Some(x) if !x.overlaps(net) => Ok(()),
            _ => Err(format!(
                "`{item}` excludes addresses of the environment's network `{net}`, where the node's address is"
            )),
        },
        (false, std::net::IpAddr::V6(_)) => Err(format!(
            "`{item}` is an IPv6 subnet: the node's IPv6 prefix is not fleetc's to know, and an IPv6 node IP beside the IPv4 one is what R18 keeps out"
        )),
        (false, std::net::IpAddr::V4(_)) => {
            let Some(x) = v4_net(s) else { return Err(format!("`{item}` is not a subnet")) };
            let private = PRIVATE_V4
                .iter()
                .any(|(a, p)| x.prefix >= *p && Ipv4Net { addr: (*a).into(), prefix: *p }.contains(x.addr));
            if !private {
                return Err(format!("`{item}` is not a private (RFC 1918) range"));
            }
            if let Some((a, doc)) = node.others.iter().find(|(a, _)| a.overlaps(&x)) {
                return Err(format!("`{item}` selects `{}`, the address fleetc gives the node in {doc}", a.addr));
            }
            match &node.unknown {
                Some(why) => Err(format!("`{item}` may select another address of the node: {why}")),
                None => Ok(()),
            }
        }
    }
}

/// The value at a pointer that may end in a list index.
fn at<'v>(v: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() { Some(v) } else { v.pointer(pointer) }
}

/// A finding, before it becomes a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Finding {
    /// `why`: for an addition fleetc judged (an added node IP subnet), the item that is none
    /// (its index in the patch's list) and why.
    Owned {
        doc: usize,
        kind: String,
        name: Option<String>,
        touch: Touch,
        owned: Vec<String>,
        why: Option<(usize, String)>,
    },
    Selector {
        doc: usize,
        kind: String,
        name: Option<String>,
        pointer: String,
    },
    Rule {
        doc: usize,
        rule: &'static str,
        pointer: String,
        what: &'static str,
    },
    /// A device-path install disk beside the `machine.install.diskSelector` fleetc writes and
    /// the patch keeps: Talos installs to the selector's match (a warning).
    UnusedDisk {
        doc: usize,
    },
}

/// What `doc` (a patch document) changes of `emitted`, on a machine whose networks `node` says.
fn findings(doc_index: usize, doc: &PatchDocument, emitted: &BTreeMap<DocId, Value>, node: &NodeNet) -> Vec<Finding> {
    let mut out = Vec::new();
    let (kind, name) = doc_id(&doc.value);
    if let Some(have) = emitted.get(&(kind.clone(), name.clone())) {
        let mut touches = Vec::new();
        walk(&doc.value, Some(have), "", &mut touches);
        for touch in touches {
            let mut why = None;
            if touch.action == Action::Add && kind == V1 {
                let added = added_items(doc.value.pointer(&touch.at), have.pointer(&touch.at));
                match addition(&touch.at, &added, node) {
                    Some(Ok(())) => continue,
                    Some(Err(reason)) => why = Some(reason),
                    None => {}
                }
            }
            // The owned leaves the touch reaches: a deleted or replaced subtree owns all of
            // those under it; a list item, its list.
            let base = at(have, &touch.at).map(|v| leaves(v, &touch.at)).unwrap_or_else(|| vec![touch.at.clone()]);
            let owned: Vec<String> = base.into_iter().filter(|p| !is_identity(&kind, p)).collect();
            if !owned.is_empty() {
                out.push(Finding::Owned { doc: doc_index, kind: kind.clone(), name: name.clone(), touch, owned, why });
            }
        }
        if !is_delete(&doc.value) {
            for (k, p, _) in SELECTORS {
                if *k == kind && have.pointer(p).is_some() && doc.value.pointer(p).is_none() {
                    out.push(Finding::Selector {
                        doc: doc_index,
                        kind: kind.clone(),
                        name: name.clone(),
                        pointer: (*p).to_owned(),
                    });
                }
            }
        }
    }
    if kind == V1 {
        let v = &doc.value;
        // A discovery registry turned back on needs no rule: Talos reads the registries only
        // when `cluster.discovery.enabled` is on (siderolabs/talos v1.13.9
        // `internal/app/machined/pkg/controllers/cluster/config.go`), and that field is owned.
        let have = emitted.get(&(V1.to_owned(), None));
        let owned_disk = have.and_then(|h| h.pointer("/machine/install/disk")).is_some();
        // The selector fleetc writes stays when the patch neither sets nor deletes it (either
        // is an owned-field error of its own): Talos then installs to the selector's match and
        // reads `install.disk` only without a selector (siderolabs/talos v1.13.9
        // `internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer_tasks.go` l.1518-1539).
        let kept_selector = have.and_then(|h| h.pointer("/machine/install/diskSelector")).is_some()
            && v.pointer("/machine/install/diskSelector").is_none()
            && !is_delete(v)
            && v.pointer("/machine/install").is_none_or(|i| !is_delete(i));
        if v.pointer("/machine/install/disk").is_some_and(|d| !d.is_null()) && !owned_disk && kept_selector {
            out.push(Finding::UnusedDisk { doc: doc_index });
        } else if v.pointer("/machine/install/disk").is_some_and(|d| !d.is_null()) && !owned_disk {
            out.push(Finding::Rule {
                doc: doc_index,
                rule: "R15",
                pointer: "/machine/install/disk".to_owned(),
                what: "names the install disk by device path",
            });
        }
    }
    out
}

/// Every patch of the fleet against the documents fleetc emits for the machines it reaches:
/// errors, and warnings for what `overrides=` allows and for stale overrides.
pub fn check(fleet: &Fleet) -> Diagnostics {
    let (mut diags, used) = judge(fleet);
    for (patch, overridden) in used.values() {
        stale_overrides(patch, overridden, &mut diags);
    }
    diags
}

/// The `overrides=` rules of the fleet's patches that override nothing on any machine they
/// reach, as (patch path as fleet.kdl writes it, rule): what [`check`] warns of as
/// `patch-stale-override`. `fleetc import` asks it of the fleet it writes, so that it keeps
/// only the overrides a patch needs (docs/import.md).
pub fn stale(fleet: &Fleet) -> BTreeSet<(String, String)> {
    let (_, used) = judge(fleet);
    used.values()
        .flat_map(|(patch, overridden)| unused(patch, overridden).map(|o| (patch.path.value.clone(), o.value.clone())))
        .collect()
}

/// A patch's `overrides=` rules it was found to override on no machine it reaches.
fn unused<'p>(
    patch: &'p Patch,
    overridden: &BTreeSet<&'static str>,
) -> impl Iterator<Item = &'p crate::model::Spanned<String>> {
    patch.overrides.iter().filter(|o| !overridden.contains(o.value.as_str()))
}

/// The patches' findings ([`check`] without the stale overrides), and per `patch` line the
/// patch and the rules it was found to override.
#[allow(clippy::type_complexity)]
fn judge(fleet: &Fleet) -> (Diagnostics, BTreeMap<Span, (&Patch, BTreeSet<&'static str>)>) {
    let mut diags = Diagnostics::new();
    // Per `patch` line (inherited ones share it): the patch, and the rules it was found to
    // override on any machine it reaches; an override found nowhere is stale.
    let mut used: BTreeMap<Span, (&Patch, BTreeSet<&'static str>)> = BTreeMap::new();
    for (env, cluster) in fleet.clusters() {
        let has_patches =
            cluster.pools().any(|p| !p.patches.is_empty() || p.machines.iter().any(|m| !m.settings.patches.is_empty()));
        if !has_patches {
            continue;
        }
        // An emitter that fails is reported by `emit::all` itself.
        let Ok(docs) = cluster_documents(fleet, env, cluster) else { continue };
        for pool in cluster.pools() {
            let machines: Vec<Option<&Machine>> = if cluster.is_managed() || pool.machines.is_empty() {
                vec![None]
            } else {
                pool.machines.iter().map(Some).collect()
            };
            let views: Vec<(Scope<'_>, BTreeMap<DocId, Value>)> = machines
                .iter()
                .map(|m| {
                    let s = Scope { env, cluster, pool, machine: *m };
                    let e = emitted(&docs, &s);
                    (s, e)
                })
                .collect();
            for patch in &pool.patches {
                let rules = check_patch(patch, &views, &mut diags);
                used.entry(patch.span).or_insert_with(|| (patch, BTreeSet::new())).1.extend(rules);
            }
            for (s, e) in &views {
                if let Some(m) = s.machine {
                    for patch in &m.settings.patches {
                        let one = [(Scope { machine: Some(m), ..*s }, e.clone())];
                        let rules = check_patch(patch, &one, &mut diags);
                        used.entry(patch.span).or_insert_with(|| (patch, BTreeSet::new())).1.extend(rules);
                    }
                }
            }
        }
    }
    (diags, used)
}

/// One patch against the views of the machines it reaches (each finding once; a finding a
/// patch of a higher level makes in several pools is one diagnostic, as `Diagnostics::push`
/// keeps no duplicate); returns the rules it was found to override.
fn check_patch(
    patch: &Patch,
    views: &[(Scope<'_>, BTreeMap<DocId, Value>)],
    diags: &mut Diagnostics,
) -> BTreeSet<&'static str> {
    // Each finding once, with the first machine it was found on (for the owner's place).
    let mut found: BTreeMap<Finding, &Scope<'_>> = BTreeMap::new();
    for (scope, emitted) in views {
        let node = node_net(scope, emitted);
        for (i, doc) in patch.file.documents.iter().enumerate() {
            for f in findings(i, doc, emitted, &node) {
                found.entry(f).or_insert(scope);
            }
        }
    }
    let mut overridden: BTreeSet<&'static str> = BTreeSet::new();
    for (f, scope) in &found {
        let d = match f {
            Finding::Owned { doc, kind, name, touch, owned, why } => {
                let d = &patch.file.documents[*doc];
                let o = OwnedTouch { kind, name: name.as_deref(), touch, owned, why: why.as_ref() };
                owned_diagnostic(patch, d, &o, scope, &mut overridden)
            }
            Finding::Selector { doc, kind, name, pointer }
                if super::patches::completes_selector(patch, &patch.file.documents[*doc].value) =>
            {
                completed_diagnostic(patch, &patch.file.documents[*doc], kind, name.as_deref(), pointer)
            }
            Finding::Selector { doc, kind, name, pointer } => {
                let d = &patch.file.documents[*doc];
                let rule = owner(kind, name.as_deref(), pointer).and_then(|o| o.rule);
                selector_diagnostic(patch, d, kind, name.as_deref(), pointer, rule, scope, &mut overridden)
            }
            Finding::Rule { doc, rule, pointer, what } => {
                let d = &patch.file.documents[*doc];
                rule_diagnostic(patch, d, rule, pointer, what, &mut overridden)
            }
            Finding::UnusedDisk { doc } => {
                let d = &patch.file.documents[*doc];
                unused_disk_diagnostic(patch, d)
            }
        };
        diags.push(d);
    }
    overridden
}

/// An `overrides=` rule that the patch was found to override on no machine it reaches.
fn stale_overrides(patch: &Patch, overridden: &BTreeSet<&'static str>, diags: &mut Diagnostics) {
    for o in unused(patch, overridden) {
        diags.push(
                Diagnostic::new(
                    &codes::PATCH_STALE_OVERRIDE,
                    format!("`{}` says it overrides {}, and changes nothing {} owns", patch.path.value, o.value, o.value),
                )
                .at(o.span)
                .label("overrides nothing")
                .related(patch.span, "patch used here")
                .help(format!(
                    "an override is a standing permission: a later edit of the file that does undo {} would pass with a warning only; remove `overrides=\"{}\"`",
                    o.value, o.value
                )),
            );
    }
}

fn doc_name(kind: &str, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("`{kind}` `{n}`"),
        None if kind == V1 => "the machine config".to_owned(),
        None => format!("`{kind}`"),
    }
}

/// The warning for an overridden rule, or `None` when `rule` is not overridden by `patch`.
fn overridden_warning(
    patch: &Patch,
    rule: Option<&'static str>,
    what: &str,
    overridden: &mut BTreeSet<&'static str>,
) -> Option<Diagnostic> {
    let rule = rule?;
    let o = patch.overrides.iter().find(|o| o.value == rule)?;
    overridden.insert(rule);
    Some(
        Diagnostic::new(&codes::PATCH_OVERRIDE, format!("`{}` {what}: {rule} is overridden", patch.path.value))
            .label(format!("undoes {rule}"))
            .related(o.span, "overridden here"),
    )
}

/// An owned field a patch touches, as [`Finding::Owned`] found it.
struct OwnedTouch<'f> {
    kind: &'f str,
    name: Option<&'f str>,
    touch: &'f Touch,
    owned: &'f [String],
    why: Option<&'f (usize, String)>,
}

fn owned_diagnostic(
    patch: &Patch,
    doc: &PatchDocument,
    o: &OwnedTouch<'_>,
    scope: &Scope<'_>,
    overridden: &mut BTreeSet<&'static str>,
) -> Diagnostic {
    let OwnedTouch { kind, name, touch, owned, why } = *o;
    let owners: Vec<(&'static Owner, &String)> = {
        let mut seen = Vec::<(&'static Owner, &String)>::new();
        for p in owned {
            if let Some(o) = owner(kind, name, p)
                && !seen.iter().any(|(x, _)| std::ptr::eq(*x, o))
            {
                seen.push((o, p));
            }
        }
        seen
    };
    let field = if touch.at.is_empty() { doc_name(kind, name) } else { format!("`{}`", dotted(&touch.at)) };
    let of = if kind == V1 || touch.at.is_empty() { String::new() } else { format!(" of {}", doc_name(kind, name)) };
    let verb = match touch.action {
        Action::Set => "sets",
        Action::Add => "adds to",
        Action::Delete => "deletes",
    };
    let props: Vec<&str> = owners.iter().map(|(o, _)| o.property).filter(|p| !p.is_empty()).collect();
    let from = if props.is_empty() { "always".to_owned() } else { format!("from {}", props.join(" and ")) };
    let what = format!("{verb} {field}{of}, which fleetc writes {from}");
    let place = match why {
        // The item that is no addition.
        Some((i, _)) if doc.places.contains_key(&format!("{}/{i}", touch.at)) => {
            doc.place(&format!("{}/{i}", touch.at))
        }
        _ if touch.at.is_empty() => doc.key_place("/$patch"),
        _ => doc.key_place(&touch.at),
    };
    // Overridable only when every owner's rule is overridden.
    let rules: Vec<Option<&'static str>> = owners.iter().map(|(o, _)| o.rule).collect();
    if !rules.is_empty() && rules.iter().all(|r| r.is_some_and(|r| patch.overrides(r))) {
        let mut w = None;
        for r in &rules {
            w = overridden_warning(patch, *r, &what, overridden);
        }
        if let Some(w) = w {
            return w.at(place);
        }
    }
    let (first, first_at) = owners.first().copied().map_or((None, None), |(o, p)| (Some(o), Some(p)));
    let owner_span = first.zip(first_at).and_then(|(o, p)| (o.span)(scope, p)).unwrap_or(patch.span);
    let appended = if touch.action == Action::Add {
        " Talos appends a patch's list to the one it patches (siderolabs/talos v1.13.9 `pkg/machinery/config/merge/merge.go`), so the result is fleetc's list and the patch's."
    } else {
        ""
    };
    let appended = match why {
        Some((_, w)) => format!(
            "{appended} An added subnet is accepted when it cannot select another address of the node (docs/talos.md, \"Patches\"); this one can: {w}."
        ),
        None => appended.to_owned(),
    };
    let mut help = String::new();
    for (o, _) in &owners {
        if !help.is_empty() {
            help.push_str("; ");
        }
        help.push_str(o.why);
    }
    let instead = if props.is_empty() {
        "no fleet.kdl property changes it, and a patch may not".to_owned()
    } else {
        format!("change {} in fleet.kdl instead", props.join(" and "))
    };
    let rule_hint: Vec<&str> = rules.iter().flatten().copied().collect();
    let rule_hint = if rule_hint.is_empty() || rule_hint.len() != rules.len() {
        String::new()
    } else {
        let mut r = rule_hint.clone();
        r.dedup();
        format!("; if it is deliberate, write `overrides=\"{}\"` on the `patch` line", r.join(","))
    };
    Diagnostic::new(&codes::PATCH_OWNED_FIELD, format!("`{}` {what}", patch.path.value))
        .at(place)
        .label(if why.is_some() { "not an addition" } else { "owned by fleet.kdl" })
        .related(owner_span, "fleetc writes it from here")
        .help(format!("{help}: {instead}{rule_hint}.{appended}"))
}

#[allow(clippy::too_many_arguments)]
fn selector_diagnostic(
    patch: &Patch,
    doc: &PatchDocument,
    kind: &str,
    name: Option<&str>,
    pointer: &str,
    rule: Option<&'static str>,
    scope: &Scope<'_>,
    overridden: &mut BTreeSet<&'static str>,
) -> Diagnostic {
    let what =
        format!("restates {} without `{}`, and so drops fleetc's selector", doc_name(kind, name), dotted(pointer));
    let place = if doc.places.contains_key("/name") { doc.place("/name") } else { doc.span };
    if let Some(w) = overridden_warning(patch, rule, &what, overridden) {
        return w.at(place);
    }
    let o = owner(kind, name, pointer);
    let owner_span = o.and_then(|o| (o.span)(scope, pointer)).unwrap_or(patch.span);
    let then = SELECTORS.iter().find(|(k, p, _)| *k == kind && *p == pointer).map_or("", |(_, _, t)| t);
    let hint =
        rule.map_or(String::new(), |r| format!("; if it is deliberate, write `overrides=\"{r}\"` on the `patch` line"));
    Diagnostic::new(&codes::PATCH_DROPS_SELECTOR, format!("`{}` {what}", patch.path.value))
        .at(place)
        .label("no selector here")
        .related(owner_span, "fleetc writes the selector from here")
        .help(format!(
            "Talos merges a named document field by field and replaces a CEL expression with the patch's even when the patch has none (siderolabs/talos v1.13.9 `pkg/machinery/config/merge/merge.go` calls the type's `Merge` first; `pkg/machinery/cel/cel.go`, `Expression.Merge`, copies an empty expression), so {then}: restate `{}` with fleetc's value in the patch{hint}",
            dotted(pointer)
        ))
}

fn rule_diagnostic(
    patch: &Patch,
    doc: &PatchDocument,
    rule: &'static str,
    pointer: &str,
    what: &str,
    overridden: &mut BTreeSet<&'static str>,
) -> Diagnostic {
    let field = dotted(pointer);
    let what_field = format!("{what} (`{field}`)");
    if let Some(w) = overridden_warning(patch, Some(rule), &what_field, overridden) {
        return w.at(doc.place(pointer));
    }
    // R15 is the one rule on a field fleetc does not write (`findings`).
    let reason =
        "device paths change with attach order and then name the system disk; fleetc selects disks by size (R15, F5)";
    Diagnostic::new(&codes::PATCH_UNDOES_RULE, format!("`{}` {what_field}, undoing {rule}", patch.path.value))
        .at(doc.place(pointer))
        .label(format!("undoes {rule}"))
        .related(patch.span, "patch used here")
        .help(format!("{reason}; if it is deliberate, write `overrides=\"{rule}\"` on the `patch` line"))
}

/// A named document restated without its selector, which the emitter completes with fleetc's
/// (`patches::completed`). One diagnostic for every pool: each pool's copy gets its own
/// selector.
fn completed_diagnostic(
    patch: &Patch,
    doc: &PatchDocument,
    kind: &str,
    name: Option<&str>,
    pointer: &str,
) -> Diagnostic {
    let place = if doc.places.contains_key("/name") { doc.place("/name") } else { doc.span };
    Diagnostic::new(
        &codes::PATCH_SELECTOR_COMPLETED,
        format!(
            "`{}` restates {} without `{}`: fleetc writes it into out/ with fleetc's selector added",
            patch.path.value,
            doc_name(kind, name),
            dotted(pointer)
        ),
    )
    .at(place)
    .label("selector added here in out/")
    .related(patch.span, "patch used here")
    .help(format!(
        "Talos merges a named document field by field and replaces a CEL expression with the patch's even when the patch has none (siderolabs/talos v1.13.9 `pkg/machinery/cel/cel.go`, `Expression.Merge`, copies an empty expression), so the volume would fall back to the system disk (R15, F5); fleetc adds the selector it writes for the pool (`{}` from `ephemeral-min-size`), so the merged config keeps it. To silence this, restate `{}` in the patch with fleetc's value; to drop the selector on purpose, write `overrides=\"R15\"` on the `patch` line",
        dotted(pointer),
        dotted(pointer)
    ))
}

/// A device-path install disk Talos ignores, beside the selector fleetc writes
/// ([`Finding::UnusedDisk`]). One diagnostic for every machine the patch reaches: its related place is the `patch` line,
/// since the selectors (the pools' sizes) differ.
fn unused_disk_diagnostic(patch: &Patch, doc: &PatchDocument) -> Diagnostic {
    let pointer = "/machine/install/disk";
    Diagnostic::new(
        &codes::PATCH_INSTALL_DISK_UNUSED,
        format!(
            "`{}` names the install disk by device path (`machine.install.disk`), which Talos ignores beside fleetc's `machine.install.diskSelector`",
            patch.path.value
        ),
    )
    .at(doc.place(pointer))
    .label("has no effect")
    .related(patch.span, "patch used here")
    .help(
        "Talos installs to the disk the selector matches and reads `machine.install.disk` only when there is no selector (siderolabs/talos v1.13.9 `internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer_tasks.go` l.1518-1539), so the machine keeps fleetc's disk and R15 holds; if you meant this disk, name it in fleet.kdl (`install-disk serial=…`, or another `install-disk` selector) and drop the line from the patch",
    )
}

/// The rules an owned row or a rule check names: the ones `overrides=` may give.
pub fn rules() -> BTreeSet<&'static str> {
    OWNERS.iter().filter_map(|o| o.rule).chain(["R15"]).collect()
}

/// The ownership table as docs/fleet-language.md prints it (between its `owned-fields` markers).
pub fn table_markdown() -> String {
    let mut s = String::from("| Document | Field | Written from | Rule |\n|---|---|---|---|\n");
    for o in OWNERS {
        let doc = match o.name {
            Some(n) => format!("`{}` `{n}`", o.kind),
            None if o.kind == V1 => "machine config".to_owned(),
            None => format!("`{}`", o.kind),
        };
        let field = o.render_field().replace("`*`", "*").replace(".*", ".<key>");
        let prop = if o.property.is_empty() { "always (fleetc's fixed value)" } else { o.property };
        s.push_str(&format!("| {doc} | {field} | {} | {} |\n", prop.replace('|', "\\|"), o.rule.unwrap_or("")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn touches(patch: Value, have: Value) -> Vec<(String, Action)> {
        let mut out = Vec::new();
        walk(&patch, Some(&have), "", &mut out);
        out.into_iter().map(|t| (t.at, t.action)).collect()
    }

    #[test]
    fn the_same_value_as_fleetc_changes_nothing_and_another_one_is_a_change() {
        let have = json!({"cluster": {"network": {"cni": {"name": "none"}}}});
        assert!(touches(json!({"cluster": {"network": {"cni": {"name": "none"}}}}), have.clone()).is_empty());
        assert_eq!(
            touches(json!({"cluster": {"network": {"cni": {"name": "flannel"}}}}), have),
            [("/cluster/network/cni/name".to_owned(), Action::Set)]
        );
    }

    #[test]
    fn fields_fleetc_does_not_write_are_the_patch_s() {
        let have = json!({"machine": {"kubelet": {"nodeIP": {"validSubnets": ["10.0.0.0/24"]}}}});
        let patch = json!({"machine": {"kubelet": {"extraArgs": {"max-pods": "150"}}, "time": {"servers": ["x"]}}});
        assert!(touches(patch, have).is_empty());
    }

    #[test]
    fn lists_are_appended_to_except_the_replaced_ones() {
        // Talos appends (merge.go): an item fleetc does not write changes the list, one it
        // writes does not.
        let have = json!({"machine": {"certSANs": ["10.0.0.10", "51.15.200.10"]}});
        assert!(touches(json!({"machine": {"certSANs": ["10.0.0.10"]}}), have.clone()).is_empty());
        assert_eq!(touches(json!({"machine": {"certSANs": ["x.example"]}}), have)[0].1, Action::Add);
        // podSubnets is `merge:"replace"`: the patch's list is the result.
        let have = json!({"cluster": {"network": {"podSubnets": ["10.244.0.0/16"]}}});
        assert!(touches(json!({"cluster": {"network": {"podSubnets": ["10.244.0.0/16"]}}}), have.clone()).is_empty());
        assert_eq!(touches(json!({"cluster": {"network": {"podSubnets": ["10.10.0.0/16"]}}}), have)[0].1, Action::Set);
    }

    #[test]
    fn deletes_of_fields_items_and_documents_are_changes() {
        let have = json!({"kind": "VolumeConfig", "name": "STATE", "encryption": {"provider": "luks2"}});
        assert_eq!(touches(json!({"encryption": {"$patch": "delete"}}), have.clone())[0].1, Action::Delete);
        assert_eq!(touches(json!({"kind": "VolumeConfig", "name": "STATE", "$patch": "delete"}), have)[0].0, "");
        // A list item by its first key (configloader/internal/decoder/delete.go).
        let have = json!({"addresses": [{"address": "10.0.0.11/24"}]});
        assert_eq!(
            touches(json!({"addresses": [{"address": "10.0.0.11/24", "$patch": "delete"}]}), have.clone())[0].1,
            Action::Delete
        );
        assert!(touches(json!({"addresses": [{"address": "10.9.9.9/24", "$patch": "delete"}]}), have).is_empty());
        // Deleting what fleetc does not write is the patch's business.
        assert!(
            touches(json!({"machine": {"time": {"$patch": "delete"}}}), json!({"machine": {"type": "worker"}}))
                .is_empty()
        );
    }

    #[test]
    fn inline_manifests_are_keyed_by_name() {
        let have = json!({"cluster": {"inlineManifests": [{"name": "cilium", "contents": "a"}]}});
        let other = json!({"cluster": {"inlineManifests": [{"name": "mine", "contents": "b"}]}});
        assert!(touches(other, have.clone()).is_empty());
        let same = json!({"cluster": {"inlineManifests": [{"name": "cilium", "contents": "b"}]}});
        assert_eq!(touches(same, have)[0].1, Action::Set);
    }

    fn known() -> NodeNet {
        NodeNet { network: "10.10.0.0/22".parse().unwrap(), unknown: None, others: Vec::new() }
    }

    fn added(item: &str, node: &NodeNet) -> Option<Result<(), String>> {
        addition(VALID_SUBNETS, &[(0, &Value::from(item))], node).map(|r| r.map_err(|(_, w)| w))
    }

    #[test]
    fn an_added_cert_san_keeps_fleetc_s_and_is_an_addition() {
        // Talos appends certSANs (no `merge:"replace"`: siderolabs/talos v1.13.9
        // `pkg/machinery/config/types/v1alpha1/v1alpha1_types.go` l.261, l.1216; `merge.go` l.90).
        let x = Value::from("k8s.example.org");
        assert_eq!(addition("/cluster/apiServer/certSANs", &[(0, &x)], &known()), Some(Ok(())));
        assert_eq!(addition("/machine/certSANs", &[(0, &x)], &known()), Some(Ok(())));
        // podSubnets is no addition, ever (replaced).
        assert_eq!(addition("/cluster/network/podSubnets", &[(0, &x)], &known()), None);
    }

    #[test]
    fn an_added_etcd_subnet_is_judged_as_a_node_ip_subnet() {
        // etcd advertises every address its subnets select (siderolabs/talos v1.13.9
        // `controllers/etcd/spec.go`): a private range where fleetc makes every address is an
        // addition, a public one or an IPv6 one is not.
        let node = known();
        assert!(!always_additive(V1, ETCD_SUBNETS));
        assert_eq!(addition(ETCD_SUBNETS, &[(0, &Value::from("10.0.0.0/8"))], &node), Some(Ok(())));
        assert!(matches!(addition(ETCD_SUBNETS, &[(0, &Value::from("8.8.8.0/24"))], &node), Some(Err(_))));
        assert!(matches!(addition(ETCD_SUBNETS, &[(0, &Value::from("fd00::/8"))], &node), Some(Err(_))));
    }

    #[test]
    fn an_added_node_ip_subnet_is_an_addition_only_when_it_selects_no_other_address() {
        // siderolabs/talos v1.13.9 `internal/app/machined/pkg/controllers/k8s/nodeip.go`
        // l.84-141: the node IP is the first IPv4 and IPv6 the list selects (`!` excludes).
        let node = known();
        // A private range beside the network, a superset of it, the network itself.
        for ok in ["192.168.60.0/24", "10.69.1.0/24", "10.0.0.0/8", "10.10.0.0/22", "172.16.5.0/24", "10.1.2.3"] {
            assert_eq!(added(ok, &node), Some(Ok(())), "{ok}");
        }
        // An exclusion outside the network removes nothing fleetc selects.
        assert_eq!(added("!192.168.0.0/16", &node), Some(Ok(())));
        assert_eq!(added("!fd00::/8", &node), Some(Ok(())));
        // What can select or remove another address: IPv6 (R18's very case), a public range,
        // an exclusion of the network, garbage.
        for bad in ["fdd5:aa8:9535:20::/108", "0.0.0.0/0", "51.15.0.0/16", "!10.10.0.0/24", "!10.10.0.10", "nope"] {
            assert!(matches!(added(bad, &node), Some(Err(_))), "{bad}");
        }
        // Where fleetc does not make every address of the node, a private range is no addition.
        let metal = NodeNet { unknown: Some("metal".into()), ..known() };
        assert!(matches!(added("192.168.60.0/24", &metal), Some(Err(w)) if w.contains("metal")));
        assert_eq!(added("!192.168.0.0/16", &metal), Some(Ok(())));
        // A subnet that reaches an address fleet.kdl gives the node on another network.
        let vlan =
            NodeNet { others: vec![("172.16.30.21/32".parse().unwrap(), "`VLANConfig` `bond0.30`".into())], ..known() };
        assert!(matches!(added("172.16.0.0/16", &vlan), Some(Err(w)) if w.contains("bond0.30")));
        assert_eq!(added("192.168.60.0/24", &vlan), Some(Ok(())));
    }

    #[test]
    fn the_most_specific_row_owns_a_field() {
        let o = owner("v1alpha1", None, "/machine/nodeLabels/node.demo.example~1pool").unwrap();
        assert_eq!(o.prefix, "/machine/nodeLabels/*");
        let o = owner("VolumeConfig", Some("EPHEMERAL"), "/provisioning/diskSelector/match").unwrap();
        assert_eq!(o.rule, Some("R15"));
        assert!(owner("VolumeConfig", Some("u-data"), "/provisioning/diskSelector/match").is_none());
        assert!(owner("v1alpha1", None, "/machine/kubelet/extraArgs").is_none());
    }
}
