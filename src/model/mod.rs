//! Model: the typed, resolved fleet. [`resolve`] reads the syntax tree, applies inheritance
//! (an environment's `from=`, then fleet → environment → cluster → pool defaults), parses
//! every value once (addresses, versions, sizes), reads and pins vendored files, computes
//! schematic IDs, and reports unknown names, wrong types and dangling references. What comes
//! out is complete: every emitter reads plain values from it and never re-derives a default.
//! The model holds no KDL type; user-named values keep their [`Spanned`] place so that
//! `check` can point at them.

mod api;
mod apply_mode;
pub mod backup;
pub mod gitops;
pub mod k8s;
pub mod patch;
mod resolve;
pub use resolve::MAX_CLUSTER_NODES;
pub mod values;
mod window;

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use crate::diag::Span;
pub use crate::diag::Spanned;
pub use api::{DEFAULT_API_PORT, KUBERNETES_API_PORT};
pub use patch::{Patch, PatchLevel};
pub use resolve::{Loader, nearest_path, resolve};
pub use values::{ApplyMode, Bytes, Ipv4Net, Ipv4Range, Runtime, TaintEffect, Version};
pub use window::Window;

/// The whole fleet: pins, schematics, add-ons, and environments in declaration order.
#[derive(Debug, Clone)]
pub struct Fleet {
    pub name: Spanned<String>,
    /// The git repository Argo CD reads, and the revision it follows.
    pub gitops: Option<Gitops>,
    /// Argo CD's pinned version and vendored install manifest.
    pub argocd: Option<ArgoCd>,
    pub schematics: BTreeMap<String, Schematic>,
    pub addons: BTreeMap<String, Addon>,
    pub environments: Vec<Environment>,
    /// Declarations written but not resolved, already reported at their cause (`add-on
    /// cilium`, `schematic base`): references to them are not reported again as dangling.
    pub unresolved: std::collections::BTreeSet<String>,
}

impl Fleet {
    pub fn environment(&self, name: &str) -> Option<&Environment> {
        self.environments.iter().find(|e| e.name.value == name)
    }
    /// Every cluster with its environment, in declaration order.
    pub fn clusters(&self) -> impl Iterator<Item = (&Environment, &Cluster)> {
        self.environments.iter().flat_map(|e| e.clusters.iter().map(move |c| (e, c)))
    }
    pub fn schematic(&self, name: &str) -> Option<&Schematic> {
        self.schematics.get(name)
    }
    /// The installer image a pool's machines install and upgrade to: its schematic's, for the
    /// environment's platform, the cluster's Talos version and the pool's boot (SecureBoot or
    /// not). One function for every consumer: the Talos documents' `machine.install.image`
    /// (which the OpenTofu roots and the Cluster API templates carry), `fleetc talos render`'s
    /// `--install-image` and `fleetc upgrade`'s `--image` (through `apply::target`);
    /// `tests/contracts.rs` breaks when one of them reads it otherwise.
    pub fn installer(&self, env: &Environment, cluster: &Cluster, pool: &Pool) -> Option<String> {
        let s = self.schematic(&pool.schematic.value)?;
        Some(s.installer(env.platform(), cluster.talos.value, pool.disk.secure_boot()))
    }
    /// `<fleet>-<environment>`: the prefix of an environment's cloud resource names (the
    /// cloud root's `name` variable), and of the Secret Manager secrets others look up.
    pub fn resource_prefix(&self, env: &Environment) -> String {
        format!("{}-{}", self.name.value, env.name.value)
    }
}

#[derive(Debug, Clone)]
pub struct Gitops {
    pub repo: Spanned<String>,
    pub revision: Spanned<String>,
    /// Where fleet.kdl's directory sits inside the repository (`path=`, `/`-separated, no
    /// leading or trailing `/`); `None` when fleet.kdl is at the repository root. Every path
    /// Argo CD reads (path apps, values files, fleetc's own `out/`) is prefixed with it.
    pub path: Option<Spanned<String>>,
    pub span: Span,
}

impl Gitops {
    /// `rel` (relative to fleet.kdl's directory) as a path from the repository root.
    pub fn repo_path(&self, rel: &str) -> String {
        match &self.path {
            Some(p) => format!("{}/{rel}", p.value),
            None => rel.to_owned(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ArgoCd {
    pub version: Spanned<Version>,
    /// Argo CD's namespace (`argocd` unless stated).
    pub namespace: Spanned<String>,
    pub manifest: Vendored,
    pub span: Span,
}

/// A file vendored beside fleet.kdl and pinned by sha256. Its content is read once, by the
/// model; fleetc never downloads anything.
#[derive(Debug, Clone)]
pub struct Vendored {
    /// Relative to the fleet's directory, with `/` separators.
    pub path: Spanned<String>,
    pub sha256: Spanned<String>,
    pub content: String,
    /// The manifest's objects (its non-empty documents), parsed once when the fleet is
    /// resolved: every cluster's emitters read them without parsing the text again.
    pub objects: std::sync::Arc<Vec<serde_json::Value>>,
}

/// The line that marks a vendored file as a stand-in (docs/addons.md, "Stand-ins"): among the
/// comment lines at its top, before its first YAML line, followed by what the file leaves out.
pub const STAND_IN_MARKER: &str = "# fleetc: stand-in";

impl Vendored {
    /// What a stand-in says it leaves out (the text after [`STAND_IN_MARKER`], `:` and blanks
    /// trimmed), or `None` for a file that does not say it is one. Only the comment lines at the
    /// top count, so a marker quoted inside a manifest's data is not read as one.
    pub fn stand_in(&self) -> Option<&str> {
        stand_in(&self.content)
    }
}

/// [`Vendored::stand_in`] on a file's text.
pub fn stand_in(content: &str) -> Option<&str> {
    content
        .lines()
        .map(str::trim_end)
        .take_while(|l| l.is_empty() || l.starts_with('#'))
        .find_map(|l| l.strip_prefix(STAND_IN_MARKER))
        .filter(|rest| rest.is_empty() || rest.starts_with(':') || rest.starts_with(' '))
        .map(|rest| rest.trim_start_matches(':').trim())
}

/// A pre-rendered add-on manifest (Cilium, a cloud controller manager, a CSI driver, …),
/// embedded into control-plane configs (R11) or delivered otherwise by the emitters.
#[derive(Debug, Clone)]
pub struct Addon {
    pub name: Spanned<String>,
    pub version: Spanned<String>,
    pub manifest: Vendored,
    pub span: Span,
}

/// An Image Factory schematic, normalised (extensions sorted and de-duplicated), with its
/// canonical bytes and ID computed once for every emitter.
#[derive(Debug, Clone)]
pub struct Schematic {
    pub name: Spanned<String>,
    pub spec: crate::schematic::Schematic,
    /// The extensions as written, with their places (the spec holds them normalised).
    pub extensions: Vec<Spanned<String>>,
    /// The exact bytes the factory hashes.
    pub canonical: String,
    /// Hex SHA-256 of `canonical`: the schematic ID.
    pub id: String,
    pub span: Span,
}

/// The Image Factory host every reference points at.
pub const IMAGE_FACTORY: &str = "factory.talos.dev";

impl Schematic {
    pub fn has_extension(&self, ext: &str) -> bool {
        self.spec.customization.system_extensions.iter().any(|e| e == ext)
    }
    /// The installer image for a platform (`scaleway`, `nocloud`, `metal`), Talos version and
    /// boot: `factory.talos.dev/<platform>-installer/<id>:<version>` (R17), or
    /// `<platform>-installer-secureboot` for a SecureBoot machine (siderolabs/image-factory
    /// v1.4.0, the version oracles/factory pins: `internal/frontend/http/registry.go`
    /// `getRequestedImage` l.66-77 strips `-installer-secureboot` before `-installer`, and
    /// `internal/frontend/http/ui.go` l.700-705 prints exactly these two names). Every
    /// consumer reads it through [`Fleet::installer`].
    pub fn installer(&self, platform: &str, talos: Version, secure_boot: bool) -> String {
        let variant = if secure_boot { "-secureboot" } else { "" };
        format!("{IMAGE_FACTORY}/{platform}-installer{variant}/{}:{}", self.id, talos.v())
    }
    /// The disk image URL, e.g. `https://factory.talos.dev/image/<id>/v1.13.9/scaleway-amd64.qcow2`,
    /// or `…/nocloud-amd64-secureboot.qcow2` for a SecureBoot machine (image-factory v1.4.0
    /// `internal/profile/profile.go` `parsePlatformArch`: `<platform>-<arch>[-secureboot]`).
    pub fn image_url(&self, platform: &str, talos: Version, secure_boot: bool, file: &str) -> String {
        let variant = if secure_boot { "-secureboot" } else { "" };
        format!("https://{IMAGE_FACTORY}/image/{}/{}/{platform}-amd64{variant}.{file}", self.id, talos.v())
    }
    /// The name under which the image pipeline stores the image in a cloud, and under which
    /// the infrastructure looks it up: it carries the schematic ID and the Talos version, so
    /// that a run reuses what an earlier run left (R22), and `-sb` for the SecureBoot image
    /// (another file: a signed UKI, UEFI only).
    pub fn image_name(&self, talos: Version, secure_boot: bool) -> String {
        let variant = if secure_boot { "-sb" } else { "" };
        format!("talos-{}-{}{variant}", talos.v(), &self.id[..12])
    }
    /// The schematic carries the QEMU guest agent extension, so a Proxmox VM booted from it
    /// runs the agent and its VM gets `agent { enabled = true }` (bpg/proxmox waits for an
    /// agent only when it is enabled).
    pub fn has_guest_agent(&self) -> bool {
        self.has_extension(QEMU_GUEST_AGENT)
    }
}

impl Proxmox {
    /// The Proxmox VE node of a pool's `index`-th machine (1-based): round robin over `nodes`,
    /// so that a pool's machines spread over the nodes and a scale-up moves no running VM.
    pub fn placement(&self, index: u32) -> &str {
        let n = self.nodes.len().max(1);
        let i = (index.max(1) as usize - 1) % n;
        self.nodes.get(i).map_or(self.node.value.as_str(), |s| s.value.as_str())
    }
}

/// A Proxmox VM template that Cluster API clones a managed cluster's machines from: its name,
/// its tags (what the ProxmoxMachineTemplate's `templateSelector.matchTags` selects, with
/// `matchPolicy: exact`) and the image it boots. One function for the lab cloud root that
/// creates it and the Cluster API emitter that selects it (ARCHITECTURE.md, contracts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmTemplate {
    /// The VM's name, and its only tag: `talos-<version>-<schematic id prefix>` (R22).
    pub name: String,
    pub tags: Vec<String>,
    /// The image it is imported from (`Schematic::image_name`).
    pub image: String,
    /// It boots the SecureBoot image: OVMF, an EFI vars disk and a vTPM (`check::disk`).
    pub secure_boot: bool,
}

impl Schematic {
    /// The VM template of this schematic at a Talos version and boot.
    pub fn vm_template(&self, talos: Version, secure_boot: bool) -> VmTemplate {
        let name = self.image_name(talos, secure_boot);
        VmTemplate { name: name.clone(), tags: vec![name.clone()], image: name, secure_boot }
    }
}

/// The Image Factory extension of the QEMU guest agent.
pub const QEMU_GUEST_AGENT: &str = "siderolabs/qemu-guest-agent";

#[derive(Debug, Clone)]
pub struct Environment {
    pub name: Spanned<String>,
    /// The environment this one inherits from, if any (already applied).
    pub from: Option<Spanned<String>>,
    pub provider: Provider,
    /// Where OpenTofu keeps state; `None` on bare metal, which has no OpenTofu root.
    pub state: Option<StateBackend>,
    /// The private network the nodes live on.
    pub network: Spanned<Ipv4Net>,
    /// The public address through which the Talos API is reached (the gateway on Scaleway,
    /// R13/R16); it goes into every node's certificate SANs.
    pub gateway: Option<Spanned<Ipv4Addr>>,
    /// Source ranges allowed through the Talos API switch and to the Kubernetes API (R13).
    pub admin_ranges: Vec<Spanned<Ipv4Net>>,
    /// age recipients (x25519 public keys) that sealed inputs are encrypted to.
    pub recipients: Vec<Spanned<String>>,
    pub postgres: Vec<Postgres>,
    pub buckets: Vec<Bucket>,
    pub registries: Vec<Registry>,
    pub secrets: Vec<SecretItem>,
    pub clusters: Vec<Cluster>,
    pub span: Span,
}

impl Environment {
    pub fn cluster(&self, name: &str) -> Option<&Cluster> {
        self.clusters.iter().find(|c| c.name.value == name)
    }
    /// The Talos platform name of this environment's machines (installer and image names).
    pub fn platform(&self) -> &'static str {
        match self.provider {
            Provider::Scaleway(_) => "scaleway",
            Provider::Proxmox(_) => "nocloud",
            Provider::Metal(_) => "metal",
        }
    }
    pub fn size(&self, name: &str) -> Option<&Size> {
        self.provider.sizes().get(name)
    }
}

/// The one infrastructure provider of an environment.
#[derive(Debug, Clone)]
pub enum Provider {
    Scaleway(Scaleway),
    Proxmox(Proxmox),
    /// Bare metal: no API, machines declared one by one (docs/metal.md).
    Metal(Metal),
}

impl Provider {
    pub fn name(&self) -> &'static str {
        match self {
            Provider::Scaleway(_) => "scaleway",
            Provider::Proxmox(_) => "proxmox",
            Provider::Metal(_) => "metal",
        }
    }
    /// Size classes: pools name a size, each provider says what it means (R27: moving a
    /// cluster between providers changes the provider block only).
    pub fn sizes(&self) -> &BTreeMap<String, Size> {
        match self {
            Provider::Scaleway(s) => &s.sizes,
            Provider::Proxmox(p) => &p.sizes,
            Provider::Metal(m) => &m.sizes,
        }
    }
    pub fn span(&self) -> Span {
        match self {
            Provider::Scaleway(s) => s.span,
            Provider::Proxmox(p) => p.span,
            Provider::Metal(m) => m.span,
        }
    }
}

/// The one size class of a metal environment: its pools name none (a machine is what it is).
pub const METAL_SIZE: &str = "machine";

/// Bare metal: no infrastructure API. Its machines are the named nodes of its pools.
#[derive(Debug, Clone)]
pub struct Metal {
    /// [`METAL_SIZE`] only.
    pub sizes: BTreeMap<String, Size>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Scaleway {
    pub project: Spanned<String>,
    pub region: Spanned<String>,
    pub zone: Spanned<String>,
    pub sizes: BTreeMap<String, Size>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Proxmox {
    /// The Proxmox VE API URL (`https://pve.lab.example:8006`).
    pub endpoint: Spanned<String>,
    /// The Proxmox VE node that holds the VM templates Cluster API clones (and the default,
    /// single placement of VMs when `nodes` is not written).
    pub node: Spanned<String>,
    /// The Proxmox VE nodes the VMs are spread over, in fleet.kdl's order (`nodes "pve1"
    /// "pve2"`); `[node]` when not written. `node` is one of them.
    pub nodes: Vec<Spanned<String>>,
    /// Accept the API's self-signed certificate (`insecure=#true`): bpg/proxmox's provider
    /// argument `insecure` (TLS verification off). The alternative, a CA bundle, goes through
    /// `SSL_CERT_FILE` (the provider's client uses Go's system roots).
    pub insecure: bool,
    /// The datastore the Talos disk images are downloaded to on each node that runs VMs
    /// (`image-datastore`, default `local`): it must allow the `import` content type.
    pub image_datastore: Spanned<String>,
    /// The bridge VMs' network interfaces attach to (`vmbr0`).
    pub bridge: Spanned<String>,
    /// The datastore for VM disks (`local-lvm`).
    pub datastore: Spanned<String>,
    /// The private network's router, the nodes' default gateway.
    pub gateway: Spanned<Ipv4Addr>,
    pub dns: Vec<Spanned<Ipv4Addr>>,
    pub sizes: BTreeMap<String, Size>,
    pub span: Span,
}

/// What a size class means on the environment's provider.
#[derive(Debug, Clone)]
pub struct Size {
    pub name: Spanned<String>,
    /// Scaleway: the commercial instance type (`PRO2-S`).
    pub instance_type: Option<Spanned<String>>,
    /// Proxmox: vCPUs and memory of the VM.
    pub cores: Option<Spanned<u32>>,
    pub memory: Option<Spanned<Bytes>>,
    /// The instance exposes hardware virtualization (`/dev/kvm`), which Kata needs (F6).
    pub kvm: bool,
    pub span: Span,
}

/// The S3-compatible bucket that holds OpenTofu state, with locking (R3).
#[derive(Debug, Clone)]
pub struct StateBackend {
    pub bucket: Spanned<String>,
    pub region: Spanned<String>,
    /// The S3 endpoint (`https://s3.fr-par.scw.cloud` by default on Scaleway).
    pub endpoint: Spanned<String>,
    /// Whether the backend skips the S3 checksum (needed by some S3-compatible stores, R3).
    pub skip_checksum: bool,
    pub span: Span,
}

impl StateBackend {
    /// Where every root's state lives: the bucket, its region and the S3 endpoint. The roots'
    /// backends and the bootstrap root's bucket are all written from these three, so a change
    /// of any one moves the state (`check --base` refuses it, `fleetc diff` calls it DANGER).
    pub fn location(&self) -> String {
        format!("{} in {} at {}", self.bucket.value, self.region.value, self.endpoint.value)
    }
}

/// A managed PostgreSQL instance, reachable only from the private network (R6).
#[derive(Debug, Clone)]
pub struct Postgres {
    pub name: Spanned<String>,
    pub node_type: Spanned<String>,
    pub engine: Spanned<String>,
    /// One input both generates the password and versions the secret (R10).
    pub password_version: Spanned<u32>,
    pub former_name: Option<Spanned<String>>,
    pub span: Span,
}

impl Postgres {
    /// The Secret Manager secret that holds the password (written write-only by the cloud
    /// root, R10; read in-cluster by External Secrets Operator, R23):
    /// `<fleet>-<environment>-<name>-postgres-password`, `prefix` being
    /// [`Fleet::resource_prefix`]. The cloud root names it so (its `name` variable, then the
    /// instance's key); `tests/contracts.rs` breaks when either side changes alone.
    pub fn password_secret(&self, prefix: &str) -> String {
        format!("{prefix}-{}-postgres-password", self.name.value)
    }
}

#[derive(Debug, Clone)]
pub struct Bucket {
    /// The logical name (an OpenTofu address part).
    pub name: Spanned<String>,
    /// The bucket's global name (`<fleet>-<env>-<name>` unless stated).
    pub bucket_name: Spanned<String>,
    pub former_name: Option<Spanned<String>>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Registry {
    pub name: Spanned<String>,
    /// The registry namespace's global name (`<fleet>-<env>-<name>` unless stated).
    pub namespace: Spanned<String>,
    pub former_name: Option<Spanned<String>>,
    pub span: Span,
}

/// A Secret Manager secret (its value is written write-only at apply time, R10).
#[derive(Debug, Clone)]
pub struct SecretItem {
    pub name: Spanned<String>,
    pub former_name: Option<Spanned<String>>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Cluster {
    pub name: Spanned<String>,
    /// The environment's name.
    pub env: String,
    /// The management cluster (same environment) whose Cluster API manages this one.
    pub managed_by: Option<Spanned<String>>,
    pub former_name: Option<Spanned<String>>,
    pub talos: Spanned<Version>,
    /// `talos "…" allow-prerelease=#true`: the pin may name a minor whose versions-table row
    /// was read from a pre-release (`fleet::versions::talos-prerelease`).
    pub talos_allow_prerelease: Option<Spanned<bool>>,
    pub kubernetes: Spanned<Version>,
    pub endpoint: Endpoint,
    /// Extra certificate SANs the user asked for (the endpoint and gateway are always added).
    pub cert_sans: Vec<Spanned<String>>,
    pub discovery: Spanned<bool>,
    pub apply_mode: Spanned<ApplyMode>,
    /// The add-on that provides the CNI (e.g. `cilium`), [`CNI_NONE`] for a CNI the user
    /// installs (Talos deploys none), or `None` for Talos's default.
    pub cni: Option<Spanned<String>>,
    /// Where `cni "default"` was written, when it was (Talos's default CNI, stated).
    pub cni_default: Option<Span>,
    /// Add-ons embedded in this cluster, in the order stated.
    pub addons: Vec<Spanned<String>>,
    pub runtimes: Vec<Spanned<Runtime>>,
    pub pod_cidr: Spanned<Ipv4Net>,
    pub service_cidr: Spanned<Ipv4Net>,
    /// Explicitly a single-node lab: a control plane of one is accepted (R29).
    pub single_node: Option<Spanned<bool>>,
    /// A managed cluster whose Proxmox VM template (the one its machines clone) is created by
    /// hand: `fleet::capi::template-not-created` is not repeated (docs/capi.md).
    pub vm_template_manual: Option<Spanned<bool>>,
    pub control_plane: Pool,
    pub workers: Vec<Pool>,
    pub apps: Vec<App>,
    /// Set when this cluster is a management cluster running Cluster API.
    pub cluster_api: Option<ClusterApi>,
    /// For a managed cluster: the addresses IPAM hands to its nodes.
    pub ip_pool: Option<Spanned<Ipv4Range>>,
    /// Names of the sealed inputs this cluster needs at apply time (secrets bundle, API keys).
    pub sealed: Vec<Spanned<String>>,
    /// `window`: when `fleetc upgrade` may start a disruptive step (none: any time).
    pub window: Option<Spanned<Window>>,
    /// `etcd-snapshots`: the directory `fleetc upgrade` keeps its etcd snapshots in (none:
    /// the operator's state directory, docs/day-two.md).
    pub etcd_snapshots: Option<Spanned<String>>,
    /// `backup`: scheduled etcd snapshots to a bucket (R28, docs/day-two.md "Backups").
    pub backup: Option<backup::Backup>,
    pub span: Span,
}

impl Cluster {
    /// The control-plane pool first, then worker pools in declaration order.
    pub fn pools(&self) -> impl Iterator<Item = &Pool> {
        std::iter::once(&self.control_plane).chain(self.workers.iter())
    }
    pub fn is_managed(&self) -> bool {
        self.managed_by.is_some()
    }
    /// The Kubernetes version a pool's kubelets run: its own pin, else the cluster's.
    pub fn pool_kubernetes(&self, pool: &Pool) -> Version {
        pool.kubernetes.as_ref().map_or(self.kubernetes.value, |k| k.value)
    }
    /// The `talos_version` of the cluster's `talos_machine_secrets` in the cluster root (R14):
    /// the cluster's own Talos version, in full. The talos provider replaces the secrets, the
    /// cluster's identity, when this value sorts below the stored one
    /// (`upstream::talos_secrets::requires_replace`), so it must move only forward:
    /// the full version does whenever Talos does (a downgrade is refused at `check --base`),
    /// and it never sorts below what earlier releases of fleetc wrote (the same full version
    /// up to Talos 1.13, the machinery's contract `v1.13` for 1.14). Not the contract the
    /// configs are generated for (`talos_version` of the configuration data sources), which
    /// stays at the provider's machinery when Talos moves past it. `fleetc upgrade-plan` reads
    /// the running version back from it (`plan::upgrade::running_in_out`).
    pub fn secrets_talos_version(&self) -> String {
        self.talos.value.v()
    }
    /// `https://<endpoint>:<port>`
    pub fn endpoint_url(&self) -> String {
        format!("https://{}:{}", self.endpoint.host(), self.endpoint.port)
    }
    /// The control-plane node whose own address is the endpoint, when there is one: on bare
    /// metal a control plane of exactly one node may name its address as the endpoint (Talos's
    /// single-node setup, `talosctl gen config <cluster> https://<node>:6443`), and then
    /// nothing is shared: fleetc writes no `Layer2VIPConfig`, the address is the node's (not
    /// claimed twice), and the node needs no link to hold it (docs/metal.md). `None` elsewhere:
    /// on a VM, or with more control-plane nodes, the endpoint is a shared address of its own.
    pub fn endpoint_node(&self, env: &Environment) -> Option<&Machine> {
        if !matches!(env.provider, Provider::Metal(_)) || self.control_plane.count.value != 1 {
            return None;
        }
        let [m] = self.control_plane.machines.as_slice() else { return None };
        let endpoint = self.endpoint.address.as_ref()?;
        m.address.as_ref().filter(|a| a.value == endpoint.value).map(|_| m)
    }
}

/// `cni "none"`: the cluster gets no CNI from Talos nor from an add-on; the user installs one.
pub const CNI_NONE: &str = "none";

/// Where the Kubernetes API is reached: a private load balancer on Scaleway (R12), a shared
/// virtual IP on Proxmox.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The shared address the control plane holds (`address=`); `None` for an endpoint by
    /// name. Exactly one of `address` and `name` is set.
    pub address: Option<Spanned<Ipv4Addr>>,
    /// `name=`, on bare metal only: a DNS name the user's DNS (round robin) or a load balancer
    /// outside the fleet resolves to the control plane. fleetc holds no shared address for it
    /// (no `Layer2VIPConfig`); the name is the URL's host and a certificate SAN (docs/metal.md,
    /// "An endpoint by name").
    pub name: Option<Spanned<String>>,
    /// The port every node and kubeconfig names; the API server listens on it (written as
    /// `cluster.controlPlane.localAPIServerPort` when it is not Talos's default,
    /// [`DEFAULT_API_PORT`]), except on Scaleway, whose load balancer fixes it at 6443.
    pub port: u16,
    /// Where `port=` is written; `None` when the default applies.
    pub port_span: Option<Span>,
    /// Reachable from the internet. Fleets in the domain keep it private (R12, R21).
    pub public: bool,
    pub span: Span,
}

impl Endpoint {
    /// The URL's host: the address, or the name.
    pub fn host(&self) -> String {
        match (&self.address, &self.name) {
            (Some(a), _) => a.value.to_string(),
            (None, Some(n)) => n.value.clone(),
            (None, None) => String::new(),
        }
    }
    /// Where the host is written.
    pub fn host_span(&self) -> Span {
        self.address.as_ref().map(|a| a.span).or_else(|| self.name.as_ref().map(|n| n.span)).unwrap_or(self.span)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    ControlPlane,
    Worker,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::ControlPlane => "controlplane",
            Role::Worker => "worker",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Pool {
    /// `cp` for the control plane, the declared name for worker pools.
    pub name: Spanned<String>,
    pub role: Role,
    pub count: Spanned<u32>,
    pub size: Spanned<String>,
    pub schematic: Spanned<String>,
    /// Minimum size of the data disk that carries the EPHEMERAL volume (F5, R15).
    pub ephemeral_min_size: Spanned<Bytes>,
    /// Size of the data disk the infrastructure creates for it.
    pub data_disk_size: Spanned<Bytes>,
    /// Size of the system disk.
    pub system_disk_size: Spanned<Bytes>,
    pub labels: BTreeMap<String, Spanned<String>>,
    /// Node annotations (Talos `machine.nodeAnnotations`): keys are checked as Kubernetes
    /// qualified names, the values are free text.
    pub annotations: BTreeMap<String, Spanned<String>>,
    pub taints: Vec<Taint>,
    /// What the pool gives each of its machines (`install-disk`, `nameservers` in the pool's
    /// block); a named node's own settings go on top of these in `Machine::settings`.
    pub node: NodeSettings,
    pub machines: Vec<Machine>,
    /// The user's Talos patches for this pool's machines, in the order they apply (fleet →
    /// environment → cluster → role → pool), after fleetc's own documents.
    pub patches: Vec<Patch>,
    pub former_name: Option<Spanned<String>>,
    /// A worker pool's own Kubernetes version, when it stays behind the control plane during
    /// a staged upgrade of a Cluster API managed cluster; `None` follows the cluster.
    pub kubernetes: Option<Spanned<Version>>,
    /// Disk encryption and SecureBoot of the pool's machines (`encrypt` children,
    /// `secure-boot=`): a small value of its own, so that a named node can carry one too.
    pub disk: DiskSecurity,
    pub span: Span,
}

/// How a machine's system volumes are protected and how it boots: the encrypted Talos
/// volumes with their key sources, and whether it boots the SecureBoot variant of the
/// schematic's installer and image (docs/talos.md, "Disk encryption and SecureBoot").
#[derive(Debug, Clone, Default)]
pub struct DiskSecurity {
    /// One per encrypted volume, in the order written (`encrypt "state" key="tpm"`).
    pub encrypt: Vec<VolumeEncryption>,
    /// `secure-boot=#true`: the SecureBoot installer and boot assets (UKI, signed), UEFI.
    pub secure_boot: Option<Spanned<bool>>,
}

impl DiskSecurity {
    pub fn secure_boot(&self) -> bool {
        self.secure_boot.as_ref().is_some_and(|s| s.value)
    }
    /// The encryption of one volume, if it is encrypted.
    pub fn volume(&self, v: SystemVolume) -> Option<&VolumeEncryption> {
        self.encrypt.iter().find(|e| e.volume.value == v)
    }
    /// Some volume is sealed to the machine's TPM.
    pub fn uses_tpm(&self) -> bool {
        self.encrypt.iter().any(|e| e.key.value == KeySource::Tpm)
    }
}

/// The Talos system volumes a `VolumeConfig` may encrypt (siderolabs/talos v1.13.9
/// `pkg/machinery/config/types/block/volume_config.go`, `Validate`: STATE, EPHEMERAL and
/// IMAGECACHE; fleetc encrypts the first two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SystemVolume {
    State,
    Ephemeral,
}

impl SystemVolume {
    pub const ALL: [(&'static str, SystemVolume); 2] = [("state", Self::State), ("ephemeral", Self::Ephemeral)];
    /// The volume's Talos name (`STATE`, `EPHEMERAL`).
    pub fn label(self) -> &'static str {
        match self {
            SystemVolume::State => "STATE",
            SystemVolume::Ephemeral => "EPHEMERAL",
        }
    }
}

/// Where a LUKS2 key slot's key comes from: the four key kinds of Talos's `EncryptionKey`
/// (`tpm`, `nodeID`, `static`, `kms`; the same at Talos 1.12.6, 1.13.9 and 1.14.1,
/// `pkg/machinery/config/types/block/encryption.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeySource {
    /// Sealed to the machine's TPM 2.0 (PCR 7, and PCR 11 through the UKI's signed policy).
    Tpm,
    /// Derived from the node's UUID and the partition label: protects nothing against a
    /// thief of the whole machine, only against a disk read elsewhere.
    NodeId,
    /// A passphrase in the machine config, from a sealed input.
    Static,
    /// Sealed by a KMS server (siderolabs/kms-client's API) at `endpoint`.
    Kms,
}

impl KeySource {
    pub const ALL: [(&'static str, KeySource); 4] =
        [("tpm", Self::Tpm), ("nodeid", Self::NodeId), ("static", Self::Static), ("kms", Self::Kms)];
    pub fn as_str(self) -> &'static str {
        Self::ALL.iter().find(|(_, k)| *k == self).map_or("", |(n, _)| n)
    }
}

/// `encrypt "<volume>" key="<source>" [endpoint="…"] [sealed="…"]`.
#[derive(Debug, Clone)]
pub struct VolumeEncryption {
    pub volume: Spanned<SystemVolume>,
    pub key: Spanned<KeySource>,
    /// The KMS server (`key="kms"`).
    pub endpoint: Option<Spanned<String>>,
    /// The sealed input that holds the passphrase (`key="static"`).
    pub sealed: Option<Spanned<String>>,
    pub span: Span,
}

impl Pool {
    /// The one disk of a machine Cluster API builds on Proxmox (system and data together), as
    /// the `sizeGb` CAPMOX sends: Proxmox reads it as `<n>G`, 1024-based, so the disk holds
    /// `n` GiB (ionos-cloud/cluster-api-provider-proxmox v0.9.0,
    /// `api/v1alpha2/proxmoxmachine_types.go`, `fmt.Sprintf("%dG", SizeGB)`). Both the
    /// ProxmoxMachineTemplate and the install-disk selector of its Talos config read it.
    pub fn boot_volume_size_g(&self) -> u64 {
        Bytes(self.system_disk_size.value.0 + self.data_disk_size.value.0).gb_ceil()
    }
}

/// One node of a pool, named `<cluster>-<pool>-<n>` (1-based), or `<cluster>-<name>` when
/// the pool names it (`node "cp-1" { … }`, docs/fleet-language.md "Named nodes").
#[derive(Debug, Clone)]
pub struct Machine {
    pub hostname: String,
    pub index: u32,
    /// The static address, where the fleet gives one (Proxmox needs them).
    pub address: Option<Spanned<Ipv4Addr>>,
    /// The name written in `node "<name>"`, for a named node.
    pub name: Option<Spanned<String>>,
    /// `maintenance-address`: the address a bare-metal machine has in maintenance mode (its
    /// DHCP lease, docs/metal.md), where `fleetc apply` checks it and sends its config.
    pub maintenance_address: Option<Spanned<Ipv4Addr>>,
    /// The MAC address of the machine's link (`mac`), by which `fleetc apply` recognises a
    /// bare-metal machine in maintenance mode before it sends the config.
    pub mac: Option<Spanned<String>>,
    /// Every `install-disk` written for this machine (its pool's and its own block's): more
    /// than one in one block is reported by `check` (`fleet::node::install-disk-twice`).
    pub install_disks_written: Vec<InstallDisk>,
    /// The machine's own settings: the pool's ([`Pool::node`]) with the named node's on top.
    pub settings: NodeSettings,
}

/// What one machine may have of its own, and what a pool gives every machine it holds: the
/// one struct a pool (`Pool::node`) and a machine (`Machine::settings`) both carry, so that
/// a per-machine setting is declared once for both levels (docs/fleet-language.md,
/// "Named nodes"). An unnamed machine's settings are its pool's, and the default ones emit
/// nothing (its documents are today's, byte for byte).
#[derive(Debug, Clone, Default)]
pub struct NodeSettings {
    /// The disk Talos installs to (`install-disk`), at most one per machine.
    pub install_disk: Option<InstallDisk>,
    /// The disk EPHEMERAL (`/var`) has to itself on bare metal (`ephemeral-disk`, the same
    /// forms as `install-disk`); without it EPHEMERAL shares the system disk.
    pub ephemeral_disk: Option<InstallDisk>,
    /// The machine's network links (`link`, `bond`, `vlan`): each one Talos document.
    pub links: Vec<NetLink>,
    /// `nameservers`: replaces the provider's DNS servers for this machine.
    pub nameservers: Vec<Spanned<Ipv4Addr>>,
    /// Labels and taints of this machine only, on top of its pool's.
    pub labels: BTreeMap<String, Spanned<String>>,
    pub taints: Vec<Taint>,
    /// The node level's patches, applied last, to this machine only (`PatchLevel::Node`).
    pub patches: Vec<Patch>,
    /// The machine's CPU architecture (`arch "arm64"`), for its boot assets; `amd64` when
    /// not written ([`NodeSettings::arch`]). The installer image is multi-arch.
    pub arch: Option<Spanned<String>>,
}

/// The architectures the Image Factory builds boot assets for (siderolabs/image-factory
/// v1.5.0 `internal/frontend/http/templates/llms.txt`, "`<arch>` is `amd64` or `arm64`").
pub const ARCHES: &[&str] = &["amd64", "arm64"];

impl NodeSettings {
    /// The machine's architecture: its own, else `amd64`.
    pub fn arch(&self) -> &str {
        self.arch.as_ref().map_or("amd64", |a| a.value.as_str())
    }
    /// Nothing of its own: the machine's documents are its pool's.
    pub fn is_empty(&self) -> bool {
        self.install_disk.is_none()
            && self.ephemeral_disk.is_none()
            && self.links.is_empty()
            && self.nameservers.is_empty()
            && self.labels.is_empty()
            && self.taints.is_empty()
            && self.patches.is_empty()
    }
}

/// `install-disk`: Talos's install disk selector (`machine.install.diskSelector`), every
/// field stated matching at once, or a bare device path (`machine.install.disk`, which R15
/// warns against). Field names: siderolabs/talos v1.13.9
/// `pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`, `InstallDiskSelector`.
#[derive(Debug, Clone)]
pub struct InstallDisk {
    /// Talos's size matcher, `[>=|<=|>|<|==]<size>` (`"< 2TB"`, `"1TB"`).
    pub size: Option<Spanned<String>>,
    pub model: Option<Spanned<String>>,
    pub serial: Option<Spanned<String>>,
    pub wwid: Option<Spanned<String>>,
    /// `bus-path`, e.g. `/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0`.
    pub bus_path: Option<Spanned<String>>,
    /// `device`: a bare device path (`/dev/nvme0n1`), accepted with a warning (R15).
    pub device: Option<Spanned<String>>,
    pub span: Span,
}

/// A static IPv4 address with its prefix, as a link carries it (`10.0.0.5/24`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostAddress {
    pub addr: Ipv4Addr,
    pub prefix: u8,
}

impl std::fmt::Display for HostAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// One network link of a machine: a physical link, a bond or a VLAN, with its addresses and
/// routes (Talos's `LinkConfig`, `BondConfig`, `VLANConfig`, siderolabs/talos v1.13.9
/// `pkg/machinery/config/types/network/{link,bond,vlan}.go`).
#[derive(Debug, Clone)]
pub struct NetLink {
    pub name: Spanned<String>,
    pub kind: LinkKind,
    pub addresses: Vec<Spanned<HostAddress>>,
    pub routes: Vec<NetRoute>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum LinkKind {
    /// A physical link, by its kernel or alias name.
    Link,
    /// A bond of `links`, in Talos's bond mode (`802.3ad`, `active-backup`, …).
    Bond { mode: Spanned<String>, links: Vec<Spanned<String>> },
    /// A VLAN `id` on `parent`.
    Vlan { parent: Spanned<String>, id: Spanned<u16> },
}

/// A route of a link: to `to` (the default route when absent) through `gateway`.
#[derive(Debug, Clone)]
pub struct NetRoute {
    pub to: Option<Spanned<Ipv4Net>>,
    pub gateway: Spanned<Ipv4Addr>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: TaintEffect,
    pub span: Span,
}

/// An Argo CD application delivered to a cluster (R23).
#[derive(Debug, Clone)]
pub struct App {
    pub name: Spanned<String>,
    pub source: AppSource,
    pub namespace: Spanned<String>,
    /// Apps this one waits for.
    pub after: Vec<Spanned<String>>,
    /// An explicit sync wave, instead of one derived from `after`.
    pub wave: Option<Spanned<i64>>,
    /// `syncPolicy.automated` with prune and selfHeal (the default).
    pub auto_sync: bool,
    /// Postgres instances of the environment whose password the app reads (`postgres "app"`
    /// children): each becomes an ExternalSecret in the app's namespace (R10 → R23).
    pub postgres: Vec<Spanned<String>>,
    pub span: Span,
}

/// A cluster-scoped kind, as Argo CD names it in a project's whitelist: `(group, kind)`.
pub type GroupKind = (&'static str, &'static str);

/// `Namespace`: what `CreateNamespace=true` creates (F7).
pub const NAMESPACE_KIND: GroupKind = ("", "Namespace");

/// What a Helm chart may install beside its namespaced objects: an operator's CRDs, cluster
/// RBAC and admission webhooks (the External Secrets chart 0.20.4 renders all of them,
/// `deploy/charts/external-secrets/templates/`).
pub const CHART_CLUSTER_KINDS: [GroupKind; 5] = [
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
];

impl App {
    /// The cluster-scoped kinds this app's sync creates: its `Namespace` (the Application
    /// syncs with `CreateNamespace=true`), and for a chart the kinds an operator chart
    /// installs ([`CHART_CLUSTER_KINDS`]). A path app of the fleet's repository delivers
    /// namespaced objects only. The app's project permits exactly the union of its apps'
    /// kinds; the Application reads the same list for its sync options.
    pub fn cluster_kinds(&self) -> Vec<GroupKind> {
        let mut kinds = vec![NAMESPACE_KIND];
        if let AppSource::Chart { .. } = self.source {
            kinds.extend(CHART_CLUSTER_KINDS);
        }
        kinds
    }
}

#[derive(Debug, Clone)]
pub enum AppSource {
    /// A directory of the fleet's git repository, relative to fleet.kdl's directory.
    Path {
        path: Spanned<String>,
        /// Whether the directory exists beside fleet.kdl (as the [`Loader`] saw it).
        exists: bool,
        /// When it does not: the existing path nearest to it, for a "did you mean".
        nearest: Option<String>,
    },
    /// A Helm chart from a chart repository, pinned.
    Chart {
        repo: Spanned<String>,
        chart: Spanned<String>,
        version: Option<Spanned<String>>,
        /// A values file in the fleet's repository.
        values: Option<Spanned<String>>,
        /// Whether the values file exists beside fleet.kdl (as the [`Loader`] saw it); true
        /// without one.
        values_exists: bool,
        /// When it does not: the existing path nearest to it, for a "did you mean".
        values_nearest: Option<String>,
    },
}

/// The Cluster API provider set of a management cluster, with pinned versions (R24).
#[derive(Debug, Clone)]
pub struct ClusterApi {
    pub core: Spanned<Version>,
    pub bootstrap_talos: Spanned<Version>,
    pub control_plane_talos: Spanned<Version>,
    pub infrastructure_proxmox: Spanned<Version>,
    pub ipam_in_cluster: Spanned<Version>,
    pub operator: Spanned<Version>,
    /// cert-manager's pinned release (`cert-manager version=`), for its Kubernetes range.
    pub cert_manager_version: Option<Spanned<Version>>,
    /// Vendored, rendered manifests (fleetc never runs helm).
    pub cert_manager: Option<Vendored>,
    pub operator_manifest: Option<Vendored>,
    pub span: Span,
}
