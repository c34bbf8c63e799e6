//! The pinned Cluster API providers against each other and against the clusters they serve:
//! the Talos bootstrap (CABPT) and control-plane (CACPPT) providers state which Talos and
//! Kubernetes minors each release supports, and the Proxmox provider (CAPMOX) needs a core and
//! an IPAM provider recent enough. `fleet::capi::provider-untested` warns of a Talos or
//! Kubernetes outside CABPT's and CACPPT's tables (`upstream::capi`);
//! `fleet::capi::provider-combination` refuses provider pins that `versions/capi.kdl` does not
//! list as a combination their upstreams state (R24, docs/versions.md).

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Cluster, ClusterApi, Spanned, Version};
use crate::upstream::capi::{CABPT, CACPPT, combination, support};
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
            &codes::CAPI_PROVIDER_UNTESTED,
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

/// A management cluster's CAPMOX pin against its core and IPAM pins: a combination
/// `versions/capi.kdl` does not list is refused (`fleet::capi::provider-combination`).
pub(super) fn providers(capi: &ClusterApi, diags: &mut Diagnostics) {
    let capmox = &capi.infrastructure_proxmox;
    let Some(row) = combination("infrastructure-proxmox", capmox.value) else {
        return;
    };
    let stated: Vec<String> = row.core.iter().map(|m| minor_text(*m)).collect();
    let core = capi.core.value.minor_version();
    if !row.core.contains(&core) {
        let newer = row.core.iter().all(|m| *m < core);
        let fix = if newer {
            format!(
                "pin `core` to the newest {} release; Cluster API does not support downgrades (versions.md, \"Downgrades\"), so a management cluster already on {} waits for a CAPMOX release that states it",
                stated.last().map(String::as_str).unwrap_or_default(),
                minor_text(core)
            )
        } else {
            format!("raise `core` to {}", stated.join(" or "))
        };
        diags.push(
            Diagnostic::new(
                &codes::CAPI_PROVIDER_COMBINATION,
                format!(
                    "CAPMOX {} states support for Cluster API core {}, not {}",
                    capmox.value,
                    stated.join(" and "),
                    capi.core.value
                ),
            )
            .at(capi.core.span)
            .label(format!("CAPMOX {} states core {}", minor_text(row.minor), stated.join(", ")))
            .related(capmox.span, "the Proxmox provider")
            .help(format!(
                "a provider runs against the core's contract and clusterctl library it was built and tested with, and no CAPMOX release states this core; {fix} (R24; source: {})",
                row.core_source
            )),
        );
    }
    let ipam = &capi.ipam_in_cluster;
    if (ipam.value.major, ipam.value.minor, ipam.value.patch) < row.ipam {
        let (a, b, c) = row.ipam;
        diags.push(
            Diagnostic::new(
                &codes::CAPI_PROVIDER_COMBINATION,
                format!("CAPMOX {} needs the IPAM in-cluster provider {a}.{b}.{c} or later, not {}", capmox.value, ipam.value),
            )
            .at(ipam.span)
            .label("older than CAPMOX's prerequisite")
            .related(capmox.span, "the Proxmox provider")
            .help(format!(
                "pin `ipam-in-cluster \"{a}.{b}.{c}\"`: older releases speak the v1beta1 contract CAPMOX {} was not built against (R24; source: {})",
                minor_text(row.minor),
                row.ipam_source
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::compile::{FsLoader, compile};
    use crate::diag::codes;

    const LAB: &str = include_str!("../../golden/capi-lab/fleet.kdl");

    fn codes_of(text: &str) -> Vec<(&'static str, bool)> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/capi-lab");
        let c = compile("fleet.kdl", text, &FsLoader::new(dir));
        c.diags.iter().map(|d| (d.code.name, d.is_error())).collect()
    }

    fn edit(from: &str, to: &str) -> String {
        assert!(LAB.contains(from), "capi-lab holds {from}");
        LAB.replacen(from, to, 1)
    }

    #[test]
    fn a_core_capmox_does_not_state_is_refused_and_a_stated_one_passes() {
        let combination = codes::CAPI_PROVIDER_COMBINATION.name;
        // capi-lab pins core 1.12.10 with CAPMOX 0.9.0: a combination versions/capi.kdl lists.
        assert!(!codes_of(LAB).iter().any(|(c, _)| *c == combination));
        // CAPMOX 0.9 states core 1.11 and 1.12: 1.13 (newer) and 1.14 are refused, as errors.
        for core in ["1.13.3", "1.14.2"] {
            let found = codes_of(&edit("core \"1.12.10\"", &format!("core \"{core}\"")));
            assert!(found.contains(&(combination, true)), "core {core}: {found:?}");
        }
        // An IPAM release older than CAPMOX's prerequisite is refused too.
        let found = codes_of(&edit("ipam-in-cluster \"1.1.0\"", "ipam-in-cluster \"1.0.3\""));
        assert!(found.contains(&(combination, true)), "{found:?}");
    }
}
