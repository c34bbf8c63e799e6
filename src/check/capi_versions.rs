//! The pinned Cluster API providers against each other and against the clusters they serve:
//! the Talos bootstrap (CABPT) and control-plane (CACPPT) providers state which Talos and
//! Kubernetes minors each release supports, and the Proxmox provider (CAPMOX) needs a core and
//! an IPAM provider recent enough; `fleet::capi::provider-combination` reports a pinned
//! combination outside the tables of `upstream::capi` (R24, docs/capi.md "Version table").

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Cluster, ClusterApi, Spanned, Version};
use crate::upstream::capi::{CABPT, CACPPT, CAPMOX, support};
use crate::upstream::{Minor, minor_text};

fn within(m: Minor, (lo, hi): (Minor, Minor)) -> bool {
    lo <= m && m <= hi
}

/// A managed cluster's Talos and Kubernetes (control plane and every pool pin) against the
/// pinned CABPT and CACPPT releases.
pub(super) fn managed(cluster: &Cluster, capi: &ClusterApi, managed_by: Span, diags: &mut Diagnostics) {
    let providers = [
        ("CABPT", "bootstrap-talos", CABPT, &capi.bootstrap_talos),
        ("CACPPT", "control-plane-talos", CACPPT, &capi.control_plane_talos),
    ];
    let mut kubernetes: Vec<(&Spanned<Version>, String)> = vec![(&cluster.kubernetes, "its control plane".to_owned())];
    for p in &cluster.workers {
        if let Some(k) = &p.kubernetes {
            kubernetes.push((k, format!("pool `{}`", p.name)));
        }
    }
    for (short, name, table, pin) in providers {
        // Versions fleetc cannot emit for at all are `fleet::capi::provider-unsupported`.
        let Some(s) = support(table, pin.value) else { continue };
        let mut outside: Vec<(Span, String)> = Vec::new();
        if !within(cluster.talos.value.minor_version(), s.talos) {
            outside.push((cluster.talos.span, format!("Talos {}", cluster.talos.value.v())));
        }
        for (k, what) in &kubernetes {
            // The bootstrap provider configures every machine; the control-plane provider the
            // control plane only.
            if short == "CACPPT" && what != "its control plane" {
                continue;
            }
            if !within(k.value.minor_version(), s.kubernetes) {
                outside.push((k.span, format!("Kubernetes {} ({what})", k.value)));
            }
        }
        if outside.is_empty() {
            continue;
        }
        let list: Vec<&str> = outside.iter().map(|(_, w)| w.as_str()).collect();
        let mut d = Diagnostic::new(
            &codes::CAPI_PROVIDER_COMBINATION,
            format!("{short} {} does not state support for {} of `{}`", pin.value, list.join(", "), cluster.name),
        )
        .at(pin.span)
        .label(format!(
            "supports Talos {}–{}, Kubernetes {}–{}",
            minor_text(s.talos.0),
            minor_text(s.talos.1),
            minor_text(s.kubernetes.0),
            minor_text(s.kubernetes.1)
        ))
        .related(managed_by, "managed here");
        for (span, what) in &outside {
            d = d.related(*span, what.clone());
        }
        let newest = table.last().map(|s| s.release);
        let hint = match newest {
            Some((a, b, c)) if (a, b, c) > (pin.value.major, pin.value.minor, pin.value.patch) => {
                format!("raise `{name}` (the table knows up to {a}.{b}.{c}) or ")
            }
            _ => String::new(),
        };
        diags.push(d.help(format!(
            "{short} generates machine configs with the Talos library it was built with; {hint}keep the cluster on a Talos and Kubernetes minor its README lists (R24, docs/capi.md \"Version table\")"
        )));
    }
}

/// A management cluster's CAPMOX pin against its core and IPAM pins.
pub(super) fn providers(capi: &ClusterApi, diags: &mut Diagnostics) {
    let capmox = &capi.infrastructure_proxmox;
    let Some((_, core_min, ipam_min)) = CAPMOX.iter().find(|(m, _, _)| *m == capmox.value.minor_version()) else {
        return;
    };
    if capi.core.value.minor_version() < *core_min {
        diags.push(
            Diagnostic::new(
                &codes::CAPI_PROVIDER_COMBINATION,
                format!(
                    "CAPMOX {} needs Cluster API core {} or later, not {}",
                    capmox.value,
                    minor_text(*core_min),
                    capi.core.value
                ),
            )
            .at(capi.core.span)
            .label(format!("CAPMOX {} needs {}", minor_text(capmox.value.minor_version()), minor_text(*core_min)))
            .related(capmox.span, "the Proxmox provider")
            .help("raise `core` or use a CAPMOX release built for this core (R24, docs/capi.md \"Version table\")"),
        );
    }
    let ipam = &capi.ipam_in_cluster;
    if (ipam.value.major, ipam.value.minor, ipam.value.patch) < *ipam_min {
        let (a, b, c) = ipam_min;
        diags.push(
            Diagnostic::new(
                &codes::CAPI_PROVIDER_COMBINATION,
                format!("CAPMOX {} needs the IPAM in-cluster provider {a}.{b}.{c} or later, not {}", capmox.value, ipam.value),
            )
            .at(ipam.span)
            .label("older than CAPMOX's prerequisite")
            .related(capmox.span, "the Proxmox provider")
            .help(format!(
                "pin `ipam-in-cluster \"{a}.{b}.{c}\"`: older releases speak the v1beta1 contract CAPMOX {} was not built against (R24)",
                minor_text(capmox.value.minor_version())
            )),
        );
    }
}
