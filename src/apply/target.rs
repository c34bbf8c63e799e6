//! [`Target`]: what one environment asks of the apply step, read once from the model into
//! plain values. Everything else `apply` uses comes from the output directory, which it
//! checks to be exactly what fleet.kdl builds before it starts.

use crate::model::{ApplyMode, Environment, Fleet, Provider, Role, Version};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub env: String,
    pub provider: ProviderTarget,
    pub state_bucket: String,
    pub state_region: String,
    pub state_endpoint: String,
    /// The public gateway's reserved address (Scaleway, R16): the cloud root imports the IP
    /// that carries it, whose id `apply` looks up by this address.
    pub gateway: Option<String>,
    /// fleet.kdl's `admin-ranges`: on Scaleway the only sources the gateway's SSH bastion, the
    /// Talos API switch, may admit; `apply` checks the ranges the provider read back (R13).
    pub admin_ranges: Vec<String>,
    pub recipients: Vec<String>,
    pub clusters: Vec<ClusterTarget>,
    /// The images the environment's (non-managed) clusters boot, one per schematic and
    /// Talos version.
    pub images: Vec<ImageTarget>,
    pub argocd: Option<ArgoCdTarget>,
    pub gitops_repo: Option<String>,
}

impl Target {
    /// The clusters the tofu roots (or, on bare metal, talosctl) build, in fleet.kdl's order;
    /// managed clusters come from Cluster API.
    pub fn built_clusters(&self) -> impl Iterator<Item = &ClusterTarget> {
        self.clusters.iter().filter(|c| !c.managed)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderTarget {
    Scaleway {
        project: String,
        region: String,
        zone: String,
    },
    Proxmox,
    /// Bare metal: machines in maintenance mode, configured by talosctl (docs/metal.md).
    Metal,
}

impl ProviderTarget {
    /// Whether the environment's cloud root has the switches (R13): the Talos API switch and
    /// the operator's path to the Kubernetes API are public-gateway rules, which only Scaleway
    /// environments have. A Proxmox cloud root declares neither variable: its nodes are
    /// reached on the operator's network directly.
    pub fn has_switches(&self) -> bool {
        matches!(self, ProviderTarget::Scaleway { .. })
    }
    pub fn name(&self) -> &'static str {
        match self {
            ProviderTarget::Scaleway { .. } => "scaleway",
            ProviderTarget::Proxmox => "proxmox",
            ProviderTarget::Metal => "metal",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterTarget {
    pub name: String,
    pub talos: Version,
    pub kubernetes: Version,
    /// Managed by a Cluster API management cluster: not built by the tofu roots.
    pub managed: bool,
    /// fleet.kdl's apply mode: how `fleetc apply`'s health-gated path applies a change (R19).
    pub apply_mode: ApplyMode,
    /// The mode the cluster root's variables file gives a plain `tofu apply`, which never
    /// reboots a running node ([`ApplyMode::root_mode`]): what `fleetc apply`
    /// passes for a change that needs no reboot, so that both store the same mode.
    pub root_mode: ApplyMode,
    pub endpoint_url: String,
    pub control_plane: Vec<NodeTarget>,
    pub workers: Vec<NodeTarget>,
    pub sealed: Vec<String>,
    /// The operator's path to the Kubernetes API (`host:port`) the cloud root's `clusters`
    /// output carries as `kubernetes_api`; what `--plan` shows before the root is read.
    pub kubernetes_api: Option<String>,
    /// The database passwords the cluster's apps read (R10): each Secret Manager secret
    /// (`Postgres::password_secret`, the name the cloud root writes and the ExternalSecret
    /// asks for) with the `password-version` that generated it. `fleetc apply` marks every
    /// ExternalSecret of the build that reads one with its version, so that a rotation reaches
    /// the cluster's Secret in the same apply.
    pub database_secrets: Vec<DatabaseSecret>,
    /// fleet.kdl's `window`: when `fleetc upgrade` may start a disruptive step.
    pub window: Option<crate::model::Window>,
    /// fleet.kdl's `etcd-snapshots`: where `fleetc upgrade` keeps its etcd snapshots, as
    /// written (`~/` is the operator's home).
    pub etcd_snapshots: Option<String>,
    /// fleet.kdl's `backup credentials=`: the sealed input `fleetc apply` writes into the
    /// cluster as the backup job's bucket key (`model::backup::CREDENTIALS_SECRET`).
    pub backup_credentials: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseSecret {
    /// The Secret Manager secret's name.
    pub secret: String,
    pub password_version: u32,
}

impl ClusterTarget {
    pub fn nodes(&self) -> impl Iterator<Item = &NodeTarget> {
        self.control_plane.iter().chain(self.workers.iter())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeTarget {
    pub hostname: String,
    pub pool: String,
    pub role: Role,
    /// The schematic's ID and the installer image for the cluster's Talos version (R17).
    pub schematic_id: String,
    pub installer: String,
    /// The link names the machine must have before its config arrives (bare metal,
    /// [`required_links`]): its declared physical links, its bonds' members and its VLANs'
    /// parents, less the names the config itself creates.
    pub required_links: Vec<String>,
    /// `secure-boot=#true`: it boots the SecureBoot image and installs the signed UKI.
    pub secure_boot: bool,
    /// A volume of it is sealed to its TPM (`encrypt … key="tpm"`).
    pub seals_to_tpm: bool,
}

/// The link names a machine's config expects to find on it: a `link` names a link the
/// machine has; a `bond`'s `links` and a `vlan`'s parent too, unless they name a bond or VLAN
/// the same config creates. One `LinkConfig` ends DHCP on every link (siderolabs/talos
/// v1.13.9 `pkg/machinery/config/container/container.go` l.408-416,
/// `RunDefaultDHCPOperators`), so a wrong name leaves the machine with no address mid-install.
pub fn required_links(links: &[crate::model::NetLink]) -> Vec<String> {
    use crate::model::LinkKind;
    let created: Vec<&str> =
        links.iter().filter(|l| !matches!(l.kind, LinkKind::Link)).map(|l| l.name.value.as_str()).collect();
    let mut out: Vec<String> = Vec::new();
    for l in links {
        let names: Vec<&str> = match &l.kind {
            LinkKind::Link => vec![l.name.value.as_str()],
            LinkKind::Bond { links, .. } => links.iter().map(|m| m.value.as_str()).collect(),
            LinkKind::Vlan { parent, .. } => vec![parent.value.as_str()],
        };
        for n in names {
            if !created.contains(&n) && !out.iter().any(|o| o == n) {
                out.push(n.to_owned());
            }
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageTarget {
    pub schematic: String,
    pub schematic_id: String,
    pub talos: Version,
    /// Carries the schematic ID and the Talos version (R22): what the pipeline creates and
    /// what the cloud root looks up.
    pub name: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgoCdTarget {
    pub namespace: String,
    pub version: String,
    /// The vendored install manifest, relative to the fleet's directory.
    pub manifest: String,
}

/// The postgres passwords a cluster's apps read (Scaleway: the cloud root writes each to
/// Secret Manager), with their versions.
fn database_secrets(fleet: &Fleet, e: &crate::model::Environment, c: &crate::model::Cluster) -> Vec<DatabaseSecret> {
    if !matches!(e.provider, Provider::Scaleway(_)) {
        return Vec::new();
    }
    let prefix = fleet.resource_prefix(e);
    let mut out: Vec<DatabaseSecret> = e
        .postgres
        .iter()
        .filter(|pg| c.apps.iter().any(|a| a.postgres.iter().any(|p| p.value == pg.name.value)))
        .map(|pg| DatabaseSecret { secret: pg.password_secret(&prefix), password_version: pg.password_version.value })
        .collect();
    out.sort_by(|a, b| a.secret.cmp(&b.secret));
    out
}

/// The environment `env` of `fleet`, or `None` when there is none of that name.
pub fn of(fleet: &Fleet, env: &str) -> Option<Target> {
    fleet.environment(env).map(|e| of_environment(fleet, e))
}

/// The target of environment `e` of `fleet`.
pub fn of_environment(fleet: &Fleet, e: &Environment) -> Target {
    let provider = match &e.provider {
        Provider::Scaleway(s) => ProviderTarget::Scaleway {
            project: s.project.value.clone(),
            region: s.region.value.clone(),
            zone: s.zone.value.clone(),
        },
        Provider::Proxmox(_) => ProviderTarget::Proxmox,
        Provider::Metal(_) => ProviderTarget::Metal,
    };
    let platform = e.platform();
    let mut images: Vec<ImageTarget> = Vec::new();
    let clusters = e
        .clusters
        .iter()
        .map(|c| {
            let talos = c.talos.value;
            let mut node = |pool: &crate::model::Pool, m: &crate::model::Machine| {
                let s = fleet.schematic(&pool.schematic.value);
                let sb = pool.disk.secure_boot();
                if let Some(s) = s
                    && !c.is_managed()
                    && !images.iter().any(|i| i.name == s.image_name(talos, sb))
                {
                    images.push(ImageTarget {
                        schematic: s.name.value.clone(),
                        schematic_id: s.id.clone(),
                        talos,
                        name: s.image_name(talos, sb),
                        url: s.image_url(platform, talos, sb, "qcow2"),
                    });
                }
                NodeTarget {
                    hostname: m.hostname.clone(),
                    pool: pool.name.value.clone(),
                    role: pool.role,
                    schematic_id: s.map(|s| s.id.clone()).unwrap_or_default(),
                    installer: fleet.installer(e, c, pool).unwrap_or_default(),
                    required_links: required_links(&m.settings.links),
                    secure_boot: sb,
                    seals_to_tpm: pool.disk.uses_tpm(),
                }
            };
            let control_plane: Vec<NodeTarget> =
                c.control_plane.machines.iter().map(|m| node(&c.control_plane, m)).collect();
            let mut workers = Vec::new();
            for p in &c.workers {
                for m in &p.machines {
                    workers.push(node(p, m));
                }
            }
            ClusterTarget {
                name: c.name.value.clone(),
                talos,
                kubernetes: c.kubernetes.value,
                managed: c.is_managed(),
                apply_mode: c.apply_mode.value,
                root_mode: c.apply_mode.value.root_mode(talos),
                endpoint_url: c.endpoint_url(),
                control_plane,
                workers,
                sealed: c.sealed.iter().map(|s| s.value.clone()).collect(),
                kubernetes_api: e.kubernetes_api(c),
                database_secrets: database_secrets(fleet, e, c),
                window: c.window.as_ref().map(|w| w.value),
                etcd_snapshots: c.etcd_snapshots.as_ref().map(|p| p.value.clone()),
                backup_credentials: c.backup.as_ref().map(|b| b.credentials.value.clone()),
            }
        })
        .collect();
    Target {
        env: e.name.value.clone(),
        provider,
        // Bare metal keeps no OpenTofu state: empty, and no step reads them there.
        state_bucket: e.state.as_ref().map(|s| s.bucket.value.clone()).unwrap_or_default(),
        state_region: e.state.as_ref().map(|s| s.region.value.clone()).unwrap_or_default(),
        state_endpoint: e.state.as_ref().map(|s| s.endpoint.value.clone()).unwrap_or_default(),
        gateway: e.gateway.as_ref().map(|g| g.value.to_string()),
        admin_ranges: e.admin_ranges.iter().map(|r| r.value.to_string()).collect(),
        recipients: e.recipients.iter().map(|r| r.value.clone()).collect(),
        clusters,
        images,
        argocd: fleet.argocd.as_ref().map(|a| ArgoCdTarget {
            namespace: a.namespace.value.clone(),
            version: a.version.value.to_string(),
            manifest: a.manifest.path.value.clone(),
        }),
        gitops_repo: fleet.gitops.as_ref().map(|g| g.repo.value.clone()),
    }
}
