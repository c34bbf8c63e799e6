//! The versions table of the Cluster API providers: which Talos and Kubernetes minors each
//! release of the Talos bootstrap (CABPT) and control-plane (CACPPT) providers states it
//! supports, and what the Proxmox provider (CAPMOX) needs of the core and IPAM providers.
//! Data, each row with its source; `fleet::capi::provider-combination` reports a pinned
//! combination outside it (R24). docs/capi.md, "Version table", prints the same rows.

use super::capi::Minor;
use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Cluster, ClusterApi, Spanned, Version};

/// One release's stated support: Talos minors and Kubernetes minors, both inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// `(major, minor, patch)` of the provider release.
    pub release: (u32, u32, u32),
    pub talos: (Minor, Minor),
    pub kubernetes: (Minor, Minor),
}

const fn row(patch: u32, minor: u32, talos: (Minor, Minor), kubernetes: (Minor, Minor)) -> Support {
    Support { release: (0, minor, patch), talos, kubernetes }
}

/// CABPT 0.6.x, from the compatibility tables of its README at each tag
/// (siderolabs/cluster-api-bootstrap-provider-talos `README.md`, "Compatibility", rows
/// "CABPT (v0.6.x)": the Kubernetes and Talos columns ticked at that tag).
pub const CABPT: &[Support] = &[
    row(5, 6, ((1, 2), (1, 7)), ((1, 24), (1, 30))),
    row(6, 6, ((1, 2), (1, 8)), ((1, 24), (1, 31))),
    row(7, 6, ((1, 2), (1, 9)), ((1, 25), (1, 32))),
    row(8, 6, ((1, 2), (1, 10)), ((1, 26), (1, 33))),
    row(9, 6, ((1, 2), (1, 10)), ((1, 26), (1, 33))),
    row(10, 6, ((1, 2), (1, 11)), ((1, 26), (1, 34))),
    row(11, 6, ((1, 2), (1, 12)), ((1, 26), (1, 35))),
    row(12, 6, ((1, 2), (1, 13)), ((1, 26), (1, 36))),
];

/// CACPPT 0.5.x, from the compatibility tables of its README at each tag
/// (siderolabs/cluster-api-control-plane-provider-talos `README.md`, rows "CACPPT (v0.5.x)").
/// v0.5.13 (README l.27-43 at that tag, built on talos machinery v1.13.0, `go.mod`) is the
/// first to state Talos 1.13 and Kubernetes 1.36.
pub const CACPPT: &[Support] = &[
    row(5, 5, ((1, 3), (1, 6)), ((1, 25), (1, 29))),
    row(6, 5, ((1, 3), (1, 7)), ((1, 25), (1, 30))),
    row(7, 5, ((1, 3), (1, 8)), ((1, 25), (1, 31))),
    row(8, 5, ((1, 3), (1, 9)), ((1, 25), (1, 32))),
    row(9, 5, ((1, 3), (1, 10)), ((1, 26), (1, 33))),
    row(10, 5, ((1, 3), (1, 10)), ((1, 26), (1, 33))),
    row(11, 5, ((1, 3), (1, 11)), ((1, 26), (1, 34))),
    row(12, 5, ((1, 3), (1, 12)), ((1, 26), (1, 35))),
    row(13, 5, ((1, 3), (1, 13)), ((1, 26), (1, 36))),
];

/// What a CAPMOX minor needs: the oldest core minor and the oldest IPAM in-cluster version.
/// CAPMOX 0.9: ionos-cloud/cluster-api-provider-proxmox v0.9.0 `docs/migration-v0.9.md`
/// ("Prerequisites: Cluster API and clusterctl v1.12; IPAM provider in-cluster v1.1.0"; its
/// `go.mod` builds on cluster-api v1.12.9 and cluster-api-ipam-provider-in-cluster v1.1.0, the
/// first in-cluster release of the v1beta2 contract, `metadata.yaml`).
pub const CAPMOX: &[(Minor, Minor, (u32, u32, u32))] = &[((0, 9), (1, 12), (1, 1, 0))];

/// The stated support of a release: its own row, or for a later patch of a known minor the
/// newest row of that minor (a README's table only grows within a minor). `None` when the
/// table knows nothing of the release's minor, or the release predates it.
pub fn support(table: &[Support], v: Version) -> Option<Support> {
    let (major, minor, patch) = (v.major, v.minor, v.patch);
    table.iter().rev().find(|s| s.release.0 == major && s.release.1 == minor && s.release.2 <= patch).copied()
}

fn within(m: Minor, (lo, hi): (Minor, Minor)) -> bool {
    lo <= m && m <= hi
}

fn fmt(m: Minor) -> String {
    format!("{}.{}", m.0, m.1)
}

/// A managed cluster's Talos and Kubernetes (control plane and every pool pin) against the
/// pinned CABPT and CACPPT releases.
pub fn managed(cluster: &Cluster, capi: &ClusterApi, managed_by: Span, diags: &mut Diagnostics) {
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
            fmt(s.talos.0),
            fmt(s.talos.1),
            fmt(s.kubernetes.0),
            fmt(s.kubernetes.1)
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
pub fn providers(capi: &ClusterApi, diags: &mut Diagnostics) {
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
                    fmt(*core_min),
                    capi.core.value
                ),
            )
            .at(capi.core.span)
            .label(format!("CAPMOX {} needs {}", fmt(capmox.value.minor_version()), fmt(*core_min)))
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
                fmt(capmox.value.minor_version())
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn support_is_per_release_and_later_patches_inherit_the_newest_row() {
        assert_eq!(support(CABPT, v("0.6.11")).unwrap().talos.1, (1, 12));
        assert_eq!(support(CABPT, v("0.6.12")).unwrap().talos.1, (1, 13));
        assert_eq!(support(CABPT, v("0.6.12")).unwrap().kubernetes.1, (1, 36));
        assert_eq!(support(CABPT, v("0.6.20")).unwrap().release, (0, 6, 12));
        assert!(support(CABPT, v("0.6.4")).is_none());
        assert!(support(CABPT, v("0.7.0")).is_none());
        assert_eq!(support(CACPPT, v("0.5.12")).unwrap().kubernetes, ((1, 26), (1, 35)));
        assert_eq!(support(CACPPT, v("0.5.12")).unwrap().talos.1, (1, 12));
        assert_eq!(support(CACPPT, v("0.5.13")).unwrap().talos.1, (1, 13));
        assert_eq!(support(CACPPT, v("0.5.13")).unwrap().kubernetes.1, (1, 36));
    }
}
