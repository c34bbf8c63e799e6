//! Talos machine configuration: what fleet.kdl can get wrong that the Talos documents would
//! carry to the nodes. Key material in embedded manifests (R20, F11), certificate SANs fleetc
//! adds anyway (R16), disks that sizes cannot tell apart (F5, R15), a kube-proxy replacement
//! that misses KubePrism (F12), and Talos versions or apply modes fleetc cannot emit (F10).

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{ApplyMode, Fleet, Version};
use crate::upstream::manifests::{self, KubeProxy};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    key_material(fleet, diags);
    for (env, cluster) in fleet.clusters() {
        let talos_v = &cluster.talos;
        if cluster.apply_mode.value == ApplyMode::Reboot && talos_v.value >= Version::new(1, 14, 0) {
            diags.push(
                Diagnostic::new(
                    &codes::REBOOT_APPLY_MODE,
                    format!("Talos {} has no `reboot` apply mode (cluster `{}`)", talos_v.value.v(), cluster.name),
                )
                .at(cluster.apply_mode.span)
                .label("removed in Talos 1.14")
                .related(talos_v.span, "Talos version"),
            );
        }
        let fixed: Vec<(String, &str)> = std::iter::once((cluster.endpoint.host(), "API endpoint"))
            .chain(env.gateway.iter().map(|g| (g.value.to_string(), "gateway")))
            .collect();
        for san in &cluster.cert_sans {
            if let Some((_, what)) = fixed.iter().find(|(a, _)| *a == san.value) {
                diags.push(
                    Diagnostic::new(
                        &codes::REDUNDANT_CERT_SAN,
                        format!("`{}` is the {what}, which fleetc always adds to the certificate SANs", san.value),
                    )
                    .at(san.span)
                    .label("already included"),
                );
            }
        }
        for pool in cluster.pools() {
            let (eph, data, system) = (&pool.ephemeral_min_size, &pool.data_disk_size, &pool.system_disk_size);
            if eph.value > data.value {
                diags.push(
                    Diagnostic::new(
                        &codes::EPHEMERAL_ABOVE_DATA_DISK,
                        format!(
                            "pool `{}` of cluster `{}` needs an ephemeral disk of at least {} but its data disk has {}",
                            pool.name, cluster.name, eph.value, data.value
                        ),
                    )
                    .at(eph.span)
                    .label("larger than the data disk")
                    .related(data.span, "data disk size"),
                );
            }
            if system.value >= eph.value {
                let mut d = Diagnostic::new(
                    &codes::SYSTEM_DISK_NOT_SMALLER,
                    format!(
                        "the system disk of pool `{}` of cluster `{}` ({}) is not smaller than its ephemeral minimum ({})",
                        pool.name, cluster.name, system.value, eph.value
                    ),
                )
                .at(system.span)
                .label("not smaller than the ephemeral minimum");
                if eph.span != pool.span {
                    d = d.related(eph.span, "ephemeral minimum");
                }
                diags.push(d);
            }
        }
        if let Some(cni) = &cluster.cni
            && let Some(addon) = fleet.addons.get(&cni.value)
            && let KubeProxy::Kept { reason, intended: true } = manifests::kube_proxy(addon)
        {
            diags.push(
                Diagnostic::new(
                    &codes::KUBE_PROXY_KEPT,
                    format!("kube-proxy stays on in cluster `{}`: CNI add-on `{}`: {reason}", cluster.name, cni.value),
                )
                .at(cni.span)
                .label("kube-proxy kept")
                .related(addon.manifest.path.span, "the vendored manifest"),
            );
        }
    }
}

/// R20, F11: no embedded add-on manifest carries key material or a credential.
fn key_material(fleet: &Fleet, diags: &mut Diagnostics) {
    for addon in fleet.addons.values() {
        let embedded = fleet.clusters().any(|(_, c)| c.addons.iter().any(|a| a.value == addon.name.value));
        if !embedded {
            continue;
        }
        for found in manifests::key_material(&addon.manifest.content) {
            diags.push(
                Diagnostic::new(
                    &codes::ADDON_KEY_MATERIAL,
                    format!("add-on `{}` embeds key material: `{}` holds {}", addon.name, found.object, found.what),
                )
                .at(addon.manifest.path.span)
                .label("embedded into the control plane's machine config")
                .related(addon.name.span, "add-on declared here"),
            );
        }
    }
}
