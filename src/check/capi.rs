//! Cluster API: the pinned providers are versions whose API fleetc emits, their Kubernetes
//! support covers the clusters they run and manage, identities and credentials come from
//! sealed inputs (R14, F13), worker pools never run ahead of their control plane (R26), and
//! what fleetc cannot make sure of is said (F8; the multi-document patches CABPT may refuse
//! are `emit::capi`'s warning, since only the emitter knows the documents). The tables are
//! `upstream::capi`'s, sourced in docs/capi.md.

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::layout::names::{PROVIDER_ID_ADDON, PROXMOX_API_INPUT, TALOS_SECRETS_INPUT};
use crate::model::{Cluster, ClusterApi, Environment, Fleet, Provider, Proxmox};
use crate::upstream::capi::{core_management_range, core_workload_range, provider_problem};
use crate::upstream::minor_text;

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for env in &fleet.environments {
        for cluster in &env.clusters {
            if let Some(capi) = &cluster.cluster_api {
                providers(cluster, capi, diags);
                super::capi_versions::providers(capi, diags);
            }
            pool_versions(cluster, diags);
            let Some(mgmt_name) = &cluster.managed_by else { continue };
            let Some(mgmt) = env.cluster(&mgmt_name.value) else { continue };
            let Some(capi) = &mgmt.cluster_api else { continue };
            if !matches!(env.provider, Provider::Proxmox(_)) {
                diags.push(
                    Diagnostic::new(
                        &codes::CAPI_INFRASTRUCTURE_UNSUPPORTED,
                        format!("cluster `{}` is managed in a {} environment", cluster.name, env.provider.name()),
                    )
                    .at(mgmt_name.span)
                    .label("managed here")
                    .related(env.provider.span(), "the environment's provider")
                    .help("fleetc emits Cluster API objects for Proxmox (CAPMOX) only; build this cluster with OpenTofu (R27)"),
                );
            } else if cluster.ip_pool.is_none() {
                diags.push(
                    Diagnostic::new(
                        &codes::CAPI_INFRASTRUCTURE_UNSUPPORTED,
                        format!("managed cluster `{}` has no `ip-pool`", cluster.name),
                    )
                    .at(cluster.name.span)
                    .label("no addresses for its machines")
                    .help("CAPMOX gives machines addresses from the cluster's pool: `ip-pool \"192.168.50.100-192.168.50.150\"` (R27)"),
                );
            }
            kubernetes(cluster, capi, mgmt_name.span, diags);
            super::capi_versions::managed(cluster, capi, mgmt_name.span, diags);
            // The lab cloud root creates the template (emit::tofu, model::VmTemplate) unless the
            // cluster says it is made by hand: then the manual step is repeated here.
            let manual = cluster.vm_template_manual.as_ref().is_some_and(|m| m.value);
            if let (Provider::Proxmox(proxmox), true) = (&env.provider, manual) {
                template_not_created(fleet, env, cluster, proxmox, diags);
            }
            sealed(
                cluster,
                TALOS_SECRETS_INPUT,
                "its Talos secrets bundle: the bootstrap provider generates a new identity when the Secret `<cluster>-talos` is missing, and losing the management cluster would lose it (R14, F13)",
                diags,
            );
            if !cluster.addons.iter().any(|a| a.value == PROVIDER_ID_ADDON) {
                diags.push(
                    Diagnostic::new(
                        &codes::CAPI_NO_PROVIDER_ID,
                        format!("managed cluster `{}` has no `{PROVIDER_ID_ADDON}` add-on to set its nodes' provider ID", cluster.name),
                    )
                    .at(cluster.name.span)
                    .label("Machines will not find their Nodes")
                    .help(format!("Talos does not pass the `proxmox://<vm uuid>` that CAPMOX injects to the kubelet; the Talos cloud controller manager sets it (F8, R25): add `{PROVIDER_ID_ADDON}` to the cluster's `addons`")),
                );
            }
        }
    }
}

fn providers(cluster: &Cluster, capi: &ClusterApi, diags: &mut Diagnostics) {
    let pins = [
        ("core", &capi.core),
        ("bootstrap-talos", &capi.bootstrap_talos),
        ("control-plane-talos", &capi.control_plane_talos),
        ("infrastructure-proxmox", &capi.infrastructure_proxmox),
    ];
    for (name, v) in pins {
        if let Some(why) = provider_problem(name, v.value) {
            diags.push(
                Diagnostic::new(
                    &codes::CAPI_PROVIDER_UNSUPPORTED,
                    format!("`{name}` {} is not a version fleetc can emit for", v.value),
                )
                .at(v.span)
                .label("unsupported provider version")
                .help(format!("{why} (R24; the table is in docs/capi.md)")),
            );
        }
    }
    if let Some((lo, hi)) = core_management_range(capi.core.value) {
        let k = cluster.kubernetes.value.minor_version();
        if k < lo || k > hi {
            diags.push(
                Diagnostic::new(
                    &codes::CAPI_KUBERNETES_UNSUPPORTED,
                    format!(
                        "Cluster API {} does not run on a management cluster with Kubernetes {}",
                        capi.core.value, cluster.kubernetes.value
                    ),
                )
                .at(capi.core.span)
                .label(format!("management clusters: {}–{}", minor_text(lo), minor_text(hi)))
                .related(cluster.kubernetes.span, "the management cluster's Kubernetes")
                .help("change the core provider or the management cluster's Kubernetes version (R26)"),
            );
        }
    }
    sealed(
        cluster,
        PROXMOX_API_INPUT,
        "the Proxmox API token CAPMOX works with: a credential never goes into out/ (F11)",
        diags,
    );
}

fn kubernetes(cluster: &Cluster, capi: &ClusterApi, at: Span, diags: &mut Diagnostics) {
    let Some((lo, hi)) = core_workload_range(capi.core.value) else { return };
    let mut versions = vec![(&cluster.kubernetes, "the control plane".to_owned())];
    for p in &cluster.workers {
        if let Some(k) = &p.kubernetes {
            versions.push((k, format!("pool `{}`", p.name)));
        }
    }
    for (v, what) in versions {
        let k = v.value.minor_version();
        if k < lo || k > hi {
            diags.push(
                Diagnostic::new(
                    &codes::CAPI_KUBERNETES_UNSUPPORTED,
                    format!("Cluster API {} does not manage Kubernetes {} ({what} of `{}`)", capi.core.value, v.value, cluster.name),
                )
                .at(v.span)
                .label(format!("workload clusters: {}–{}", minor_text(lo), minor_text(hi)))
                .related(at, "managed by")
                .related(capi.core.span, "core provider")
                .help("raise the management cluster's `core` provider first, or stay on a supported Kubernetes minor (R26)"),
            );
        }
    }
}

fn pool_versions(cluster: &Cluster, diags: &mut Diagnostics) {
    let cp = cluster.kubernetes.value;
    for p in &cluster.workers {
        let Some(k) = &p.kubernetes else { continue };
        let problem = if !cluster.is_managed() {
            Some((
                format!("pool `{}` pins its own Kubernetes version in a cluster Cluster API does not manage", p.name),
                "not managed",
                "`talosctl upgrade-k8s` upgrades every kubelet of a cluster built by OpenTofu: remove the pin (R26)"
                    .to_owned(),
            ))
        } else if k.value.minor_version() > cp.minor_version()
            || (k.value.minor_version() == cp.minor_version() && k.value > cp)
        {
            Some((
                format!("pool `{}` runs Kubernetes {} ahead of its control plane ({cp})", p.name, k.value),
                "ahead of the control plane",
                "a kubelet may not be newer than the API server: the control plane upgrades first, then the workers (R26)".to_owned(),
            ))
        } else if cp.major == k.value.major && cp.minor > k.value.minor + 3 {
            Some((
                format!("pool `{}` runs Kubernetes {}, more than three minors behind its control plane ({cp})", p.name, k.value),
                "too far behind",
                "a kubelet may lag the API server by three minors at most: upgrade the workers before the control plane goes further (R26)".to_owned(),
            ))
        } else {
            None
        };
        if let Some((msg, label, help)) = problem {
            diags.push(
                Diagnostic::new(&codes::CAPI_WORKER_SKEW, msg)
                    .at(k.span)
                    .label(label)
                    .related(cluster.kubernetes.span, "the control plane's version")
                    .help(help),
            );
        }
    }
}

/// Nothing fleetc emits creates the VM templates a managed cluster's machines are cloned from:
/// say which, and how to make them (R22).
fn template_not_created(
    fleet: &Fleet,
    env: &Environment,
    cluster: &Cluster,
    proxmox: &Proxmox,
    diags: &mut Diagnostics,
) {
    let mut templates: Vec<(String, String)> = Vec::new();
    for pool in cluster.pools() {
        let Some(schematic) = fleet.schematic(&pool.schematic.value) else { continue };
        let sb = pool.disk.secure_boot();
        let tag = schematic.image_name(cluster.talos.value, sb);
        if templates.iter().all(|(t, _)| *t != tag) {
            templates.push((tag, schematic.image_url(env.platform(), cluster.talos.value, sb, "qcow2")));
        }
    }
    let Some((first, _)) = templates.first() else { return };
    let how: Vec<String> =
        templates.iter().map(|(tag, url)| format!("a template tagged exactly `{tag}` from {url}")).collect();
    diags.push(
        Diagnostic::new(
            &codes::CAPI_TEMPLATE_NOT_CREATED,
            format!("the Proxmox VM template `{first}` that `{}`'s machines clone is made by hand (`vm-template-manual`)", cluster.name),
        )
        .at(cluster.talos.span)
        .label("its machines clone a template of this Talos version")
        .related(cluster.name.span, "managed cluster")
        .help(format!(
            "before the first sync, create on Proxmox node `{}` {}: import the disk image into a VM, convert it to a template, and give it only that tag (CAPMOX selects with `matchPolicy: exact`; R22); or remove `vm-template-manual` and the environment's cloud root creates it",
            proxmox.node.value,
            how.join(", and ")
        )),
    );
}

fn sealed(cluster: &Cluster, input: &str, why: &str, diags: &mut Diagnostics) {
    if cluster.sealed.iter().any(|s| s.value == input) {
        return;
    }
    diags.push(
        Diagnostic::new(
            &codes::CAPI_IDENTITY_NOT_SEALED,
            format!("cluster `{}` lists no `{input}` sealed input", cluster.name),
        )
        .at(cluster.name.span)
        .label(format!("no `sealed \"{input}\"`"))
        .help(format!("add `sealed \"{input}\"`: it holds {why}")),
    );
}
