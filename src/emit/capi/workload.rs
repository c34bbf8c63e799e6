//! The objects of one managed (workload) cluster, in `capi/<management>/<cluster>/`:
//!
//! - `namespace.yaml`: the Namespace that holds every object of the cluster (its name);
//! - `cluster.yaml`: Cluster and ProxmoxCluster;
//! - `control-plane.yaml`: the control plane's ProxmoxMachineTemplate and TalosControlPlane;
//! - `pool-<name>.yaml`: a worker pool's ProxmoxMachineTemplate, TalosConfigTemplate and
//!   MachineDeployment;
//! - `health.yaml`: one MachineHealthCheck per worker pool.
//!
//! Templates are immutable, so their names end in a hash of their spec: a changed template
//! is a new object, and its owner (TalosControlPlane, MachineDeployment) is repointed, which
//! starts a rolling replacement (R26).

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::objects::*;
use super::talos_docs::{Disposition, disposition, role_documents};
use super::{file, yaml_doc};
use crate::artifacts::set::ArtifactSet;
use crate::emit::EmitError;
use crate::model::{Cluster, Environment, Fleet, Pool, Provider, Proxmox, Role};

/// The Proxmox disk CAPMOX resizes: the Talos nocloud template's boot disk.
const BOOT_DISK: &str = "scsi0";

/// The hash suffix of an immutable template's name: 10 hex digits of the SHA-256 of its spec
/// as JSON.
fn spec_hash<T: Serialize>(spec: &T) -> Result<String, EmitError> {
    let bytes = serde_json::to_vec(spec).map_err(|e| EmitError(e.to_string()))?;
    Ok(crate::digest::sha256_hex(&Sha256::digest(&bytes))[..10].to_owned())
}

fn hashed_name<T: Serialize>(cluster: &str, pool: &str, spec: &T) -> Result<String, EmitError> {
    Ok(format!("{cluster}-{pool}-{}", spec_hash(spec)?))
}

/// Everything one managed cluster's objects are built from.
struct Ctx<'a> {
    fleet: &'a Fleet,
    env: &'a Environment,
    proxmox: &'a Proxmox,
    cluster: &'a Cluster,
    ns: String,
    /// The CABPT release the management cluster runs (its machinery makes the configs).
    bootstrap: crate::model::Version,
}

pub(super) fn emit(
    fleet: &Fleet,
    env: &Environment,
    mgmt: &Cluster,
    cluster: &Cluster,
    out: &mut ArtifactSet,
) -> Result<(), EmitError> {
    let Provider::Proxmox(proxmox) = &env.provider else {
        return Err(EmitError(format!("cluster `{}` is managed outside Proxmox", cluster.name)));
    };
    let name = cluster.name.value.as_str();
    let Some(capi) = mgmt.cluster_api.as_ref() else {
        return Err(EmitError(format!("cluster `{}` pins no Cluster API providers", mgmt.name)));
    };
    let bootstrap = capi.bootstrap_talos.value;
    let ctx = Ctx { fleet, env, proxmox, cluster, ns: name.to_owned(), bootstrap };
    let dir = crate::layout::paths::capi_workload_dir(&mgmt.name.value, name);

    let ns: Object<NoSpec> =
        Object { api_version: "v1", kind: "Namespace", metadata: Metadata::cluster_scoped(name), spec: None };
    out.insert(format!("{dir}/namespace.yaml"), file(&[yaml_doc(&ns)?]))?;

    out.insert(
        format!("{dir}/cluster.yaml"),
        file(&[yaml_doc(&ctx.cluster_object())?, yaml_doc(&ctx.proxmox_cluster()?)?]),
    )?;

    let cp = &cluster.control_plane;
    let (cp_template, cp_template_name) = ctx.machine_template(cp)?;
    out.insert(
        format!("{dir}/control-plane.yaml"),
        file(&[yaml_doc(&cp_template)?, yaml_doc(&ctx.control_plane(&cp_template_name)?)?]),
    )?;

    for pool in &cluster.workers {
        let (template, template_name) = ctx.machine_template(pool)?;
        let (config, config_name) = ctx.config_template(pool)?;
        let md = ctx.machine_deployment(pool, &template_name, &config_name);
        out.insert(
            format!("{dir}/pool-{}.yaml", pool.name),
            file(&[yaml_doc(&template)?, yaml_doc(&config)?, yaml_doc(&md)?]),
        )?;
    }
    if !cluster.workers.is_empty() {
        let checks = cluster.workers.iter().map(|p| yaml_doc(&ctx.health_check(p))).collect::<Result<Vec<_>, _>>()?;
        out.insert(format!("{dir}/health.yaml"), file(&checks))?;
    }
    Ok(())
}

impl Ctx<'_> {
    fn name(&self) -> &str {
        &self.cluster.name.value
    }

    fn meta(&self, name: impl Into<String>) -> Metadata {
        Metadata::named(name, self.ns.clone()).label(CLUSTER_NAME_LABEL, self.name())
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint { host: self.cluster.endpoint.host(), port: self.cluster.endpoint.port }
    }

    fn cluster_object(&self) -> Object<ClusterSpec> {
        let c = self.cluster;
        let spec = ClusterSpec {
            cluster_network: ClusterNetwork {
                api_server_port: c.endpoint.port,
                pods: CidrBlocks { cidr_blocks: vec![c.pod_cidr.value.to_string()] },
                services: CidrBlocks { cidr_blocks: vec![c.service_cidr.value.to_string()] },
                service_domain: "cluster.local".into(),
            },
            control_plane_endpoint: self.endpoint(),
            control_plane_ref: ContractRef {
                api_group: CONTROL_PLANE_GROUP,
                kind: "TalosControlPlane",
                name: self.name().to_owned(),
            },
            infrastructure_ref: ContractRef {
                api_group: INFRASTRUCTURE_GROUP,
                kind: "ProxmoxCluster",
                name: self.name().to_owned(),
            },
        };
        Object::new(CORE_API, "Cluster", self.meta(self.name()), spec)
    }

    fn proxmox_cluster(&self) -> Result<Object<ProxmoxClusterSpec>, EmitError> {
        let pool = self
            .cluster
            .ip_pool
            .as_ref()
            .ok_or_else(|| EmitError(format!("managed cluster `{}` has no `ip-pool`", self.name())))?;
        let mut dns: Vec<String> = self.proxmox.dns.iter().map(|d| d.value.to_string()).collect();
        if dns.is_empty() {
            dns.push(self.proxmox.gateway.value.to_string());
        }
        let spec = ProxmoxClusterSpec {
            control_plane_endpoint: self.endpoint(),
            external_managed_control_plane: false,
            ipv4_config: Ipv4Config {
                addresses: vec![pool.value.to_string()],
                prefix: self.env.network.value.prefix,
                gateway: self.proxmox.gateway.value.to_string(),
                metric: 100,
            },
            dns_servers: dns,
            allowed_nodes: vec![self.proxmox.node.value.clone()],
        };
        Ok(Object::new(INFRASTRUCTURE_API, "ProxmoxCluster", self.meta(self.name()), spec))
    }

    /// The ProxmoxMachineTemplate of a pool, and its content-hashed name.
    fn machine_template(&self, pool: &Pool) -> Result<(Object<ProxmoxMachineTemplateSpec>, String), EmitError> {
        let size = self
            .env
            .size(&pool.size.value)
            .ok_or_else(|| EmitError(format!("pool `{}` has no size `{}`", pool.name, pool.size.value)))?;
        let schematic = self
            .fleet
            .schematic(&pool.schematic.value)
            .ok_or_else(|| EmitError(format!("pool `{}` has no schematic `{}`", pool.name, pool.schematic.value)))?;
        let (Some(cores), Some(memory)) = (&size.cores, &size.memory) else {
            return Err(EmitError(format!("size `{}` has no cores or memory", size.name)));
        };
        let spec = ProxmoxMachineTemplateSpec {
            template: ProxmoxMachineTemplateResource {
                spec: ProxmoxMachineSpec {
                    template_selector: TemplateSelector {
                        // One function with the lab cloud root that creates the template.
                        match_tags: schematic.vm_template(self.cluster.talos.value, pool.disk.secure_boot()).tags,
                        match_policy: "exact",
                    },
                    full: true,
                    storage: self.proxmox.datastore.value.clone(),
                    num_sockets: 1,
                    num_cores: cores.value,
                    memory_mib: memory.value.mib_ceil(),
                    disks: Disks { boot_volume: BootVolume { disk: BOOT_DISK, size_gb: pool.boot_volume_size_g() } },
                    network: Network {
                        network_devices: vec![NetworkDevice {
                            name: "net0",
                            bridge: self.proxmox.bridge.value.clone(),
                            model: "virtio",
                            default_ipv4: true,
                        }],
                    },
                    checks: Checks {
                        // Talos runs no cloud-init, and has a QEMU guest agent only as an extension.
                        skip_cloud_init_status: true,
                        skip_qemu_guest_agent: !schematic.has_extension("siderolabs/qemu-guest-agent"),
                    },
                    // F8: CAPMOX writes `provider-id: proxmox://<vm uuid>` into the nocloud metadata.
                    metadata_settings: MetadataSettings { provider_id_injection: true },
                },
            },
        };
        // The control plane's template name also hashes its Talos config: CACPPT 0.5 replaces
        // machines when the infrastructure template changes, so a config change rolls too.
        let name = if pool.role == Role::ControlPlane {
            hashed_name(self.name(), &pool.name.value, &(&spec, self.talos_config(pool)?))?
        } else {
            hashed_name(self.name(), &pool.name.value, &spec)?
        };
        Ok((Object::new(INFRASTRUCTURE_API, "ProxmoxMachineTemplate", self.meta(name.clone()), spec), name))
    }

    /// The strategic patches of a pool's machines: the Talos documents the talos family
    /// renders for it (minus those Cluster API provides otherwise), then this family's own.
    fn patches(&self, pool: &Pool) -> Result<Vec<String>, EmitError> {
        let mut patches = Vec::new();
        for doc in role_documents(self.fleet, self.env, self.cluster, pool).map_err(EmitError)? {
            match disposition(&doc.kind, doc.name.as_deref()) {
                Disposition::Patch | Disposition::UnsettledPatch => patches.push(doc.yaml),
                Disposition::Dropped(_) => {}
            }
        }
        // The install disk (the boot volume, by its own size) is in the role document already:
        // `talos::install_disk_size` knows a managed cluster's machines have one disk (R15).
        // The API's shared address (a `Layer2VIPConfig` on the link the `LinkAliasConfig`
        // names) is in the control plane's role documents, as on every Proxmox node.
        // The user's patches last, each file one strategic patch (docs/talos.md, "Patches").
        patches.extend(super::talos_docs::user_patches(self.fleet, self.env, self.cluster, pool).map_err(EmitError)?);
        // `cluster.externalCloudProvider` (the kubelet waits for the cloud controller manager,
        // which sets the providerID, R25, F8) and the Talos CCM's Talos API access are in the
        // role documents already: `talos::cloud_controllers` reads them off the add-ons.
        Ok(patches)
    }

    fn talos_config(&self, pool: &Pool) -> Result<TalosConfigSpec, EmitError> {
        Ok(TalosConfigSpec {
            generate_type: match pool.role {
                Role::ControlPlane => "controlplane",
                Role::Worker => "worker",
            },
            // The contract CABPT's machinery speaks (versions/talos.kdl).
            talos_version: crate::upstream::talos::consumer_contract(
                crate::upstream::talos::Consumer::Cabpt(self.bootstrap),
                self.cluster.talos.value,
            ),
            strategic_patches: self.patches(pool)?,
        })
    }

    fn control_plane(&self, template: &str) -> Result<Object<TalosControlPlaneSpec>, EmitError> {
        let cp = &self.cluster.control_plane;
        let spec = TalosControlPlaneSpec {
            replicas: cp.count.value,
            version: self.cluster.kubernetes.value.v(),
            infrastructure_template: ObjectReference {
                api_version: INFRASTRUCTURE_API,
                kind: "ProxmoxMachineTemplate",
                name: template.to_owned(),
                namespace: self.ns.clone(),
            },
            control_plane_config: ControlPlaneConfig { controlplane: self.talos_config(cp)? },
            // The defaults of CACPPT's webhook, written out: one machine more, then the oldest goes.
            rollout_strategy: RolloutStrategy {
                kind: "RollingUpdate",
                rolling_update: RollingUpdate { max_surge: 1, max_unavailable: None },
            },
        };
        Ok(Object::new(CONTROL_PLANE_API, "TalosControlPlane", self.meta(self.name()), spec))
    }

    fn config_template(&self, pool: &Pool) -> Result<(Object<TalosConfigTemplateSpec>, String), EmitError> {
        let spec = TalosConfigTemplateSpec { template: TalosConfigTemplateResource { spec: self.talos_config(pool)? } };
        let name = hashed_name(self.name(), &pool.name.value, &spec)?;
        Ok((Object::new(BOOTSTRAP_API, "TalosConfigTemplate", self.meta(name.clone()), spec), name))
    }

    fn machine_deployment(&self, pool: &Pool, template: &str, config: &str) -> Object<MachineDeploymentSpec> {
        let name = self.deployment_name(pool);
        let labels: BTreeMap<String, String> =
            [(CLUSTER_NAME_LABEL.to_owned(), self.name().to_owned()), (DEPLOYMENT_NAME_LABEL.to_owned(), name.clone())]
                .into();
        let spec = MachineDeploymentSpec {
            cluster_name: self.name().to_owned(),
            replicas: pool.count.value,
            selector: LabelSelector { match_labels: labels.clone(), match_expressions: Vec::new() },
            template: MachineTemplate {
                metadata: TemplateMetadata { labels },
                spec: MachineSpec {
                    cluster_name: self.name().to_owned(),
                    version: self.cluster.pool_kubernetes(pool).v(),
                    bootstrap: Bootstrap {
                        config_ref: ContractRef {
                            api_group: BOOTSTRAP_GROUP,
                            kind: "TalosConfigTemplate",
                            name: config.to_owned(),
                        },
                    },
                    infrastructure_ref: ContractRef {
                        api_group: INFRASTRUCTURE_GROUP,
                        kind: "ProxmoxMachineTemplate",
                        name: template.to_owned(),
                    },
                },
            },
            // Cluster API's defaults, written out: a new machine first, none removed before it is Ready.
            rollout: Rollout {
                strategy: RolloutStrategy {
                    kind: "RollingUpdate",
                    rolling_update: RollingUpdate { max_surge: 1, max_unavailable: Some(0) },
                },
            },
            deletion: Deletion { order: "Random" },
        };
        Object::new(CORE_API, "MachineDeployment", self.meta(name), spec)
    }

    /// A worker pool's MachineDeployment: its name, and the `deployment-name` label its
    /// MachineHealthCheck selects.
    fn deployment_name(&self, pool: &Pool) -> String {
        format!("{}-{}", self.name(), pool.name)
    }

    /// The MachineHealthCheck of one worker pool: it watches that pool's MachineDeployment
    /// only, and may remediate [`max_unhealthy`] of its machines at a time.
    fn health_check(&self, pool: &Pool) -> Object<MachineHealthCheckSpec> {
        let deployment = self.deployment_name(pool);
        let spec = MachineHealthCheckSpec {
            cluster_name: self.name().to_owned(),
            selector: LabelSelector {
                match_labels: [
                    (CLUSTER_NAME_LABEL.to_owned(), self.name().to_owned()),
                    (DEPLOYMENT_NAME_LABEL.to_owned(), deployment.clone()),
                ]
                .into(),
                match_expressions: Vec::new(),
            },
            checks: HealthChecks {
                node_startup_timeout_seconds: 600,
                unhealthy_node_conditions: vec![
                    NodeCondition { kind: "Ready", status: "False", timeout_seconds: 300 },
                    NodeCondition { kind: "Ready", status: "Unknown", timeout_seconds: 300 },
                ],
            },
            remediation: Remediation {
                trigger_if: TriggerIf { unhealthy_less_than_or_equal_to: max_unhealthy(pool.count.value) },
            },
        };
        Object::new(CORE_API, "MachineHealthCheck", self.meta(deployment), spec)
    }
}

/// How many of a pool's `count` machines its MachineHealthCheck may remediate at once: 40%,
/// rounded down, but never less than one. Cluster API rounds a percentage down against the
/// machines it watches (kubernetes-sigs/cluster-api v1.13.3
/// `internal/controllers/machinehealthcheck/machinehealthcheck_controller.go`,
/// `GetScaledValueFromIntOrPercent(…, false)`), so `40%` of a 2-machine pool is 0 and the
/// check never remediates anything; an absolute count has no rounding.
pub fn max_unhealthy(count: u32) -> u32 {
    (count * 2 / 5).max(1)
}

/// The Talos document kinds of a managed cluster that go to CABPT as patches although it may
/// refuse them: `(pool, kind)` pairs, for [`super::warnings`].
pub(super) fn unsettled_patches(fleet: &Fleet, env: &Environment, cluster: &Cluster) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for pool in cluster.pools() {
        for doc in role_documents(fleet, env, cluster, pool).unwrap_or_default() {
            if disposition(&doc.kind, doc.name.as_deref()) == Disposition::UnsettledPatch {
                found.push((pool.name.value.clone(), doc.kind));
            }
        }
    }
    found
}
