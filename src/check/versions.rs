//! The Talos ↔ Kubernetes support matrix: each Talos minor supports a window of Kubernetes
//! minors, and fleetc emits configuration only for the Talos minors whose schema it knows.

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{AppSource, Cluster, Fleet, Spanned, Version};

/// A `(major, minor)` pair.
type Minor = (u32, u32);

/// (Talos minor, first and last supported Kubernetes minor).
const MATRIX: &[(Minor, Minor, Minor)] =
    &[((1, 12), (1, 30), (1, 35)), ((1, 13), (1, 31), (1, 36)), ((1, 14), (1, 32), (1, 37))];

/// The newest Talos release of each minor fleetc knows of, the one `upgrade-plan` proposes:
/// v1.12.11 and v1.13.9 (siderolabs/talos tags read for docs/talos.md's audit), v1.14.1
/// (`github.com/siderolabs/talos/pkg/machinery` v1.14.1 in the Go module cache).
const TALOS_NEWEST: &[(Minor, u32)] = &[((1, 12), 11), ((1, 13), 9), ((1, 14), 1)];

/// The newest Kubernetes release of each minor fleetc knows of: 1.34.1 (`k8s.io/api` v0.34.1,
/// the Go module cache), 1.35.2 (Talos v1.12.6's default, machinery `constants/constants.go`
/// l.404), 1.36.6 and 1.37.2 (the newest `k8s.io/api` v0.36.x / v0.37.x the Go module proxy
/// served on 2026-11-25; k8s.io/api is tagged with every Kubernetes patch release).
const KUBERNETES_NEWEST: &[(Minor, u32)] = &[((1, 34), 1), ((1, 35), 2), ((1, 36), 6), ((1, 37), 2)];

/// The newest known Talos release of a minor.
pub fn talos_newest(m: Minor) -> Option<Version> {
    TALOS_NEWEST.iter().find(|(n, _)| *n == m).map(|(n, p)| Version::new(n.0, n.1, *p))
}

/// The newest known Kubernetes release of a minor.
pub fn kubernetes_newest(m: Minor) -> Option<Version> {
    KUBERNETES_NEWEST.iter().find(|(n, _)| *n == m).map(|(n, p)| Version::new(n.0, n.1, *p))
}

/// The Kubernetes minors each add-on release was tested against, as its project states it:
/// `(component, release minor, first and last Kubernetes minor, source)`. Running outside is
/// `fleet::addons::kubernetes-untested` (a warning: the project does not say it breaks, it
/// says it did not test it). docs/talos.md, "Add-on Kubernetes ranges", prints the same rows.
pub const ADDON_KUBERNETES: &[(&str, Minor, (Minor, Minor), &str)] = &[
    (
        "cilium",
        (1, 18),
        ((1, 30), (1, 33)),
        "cilium/cilium v1.18.14 `Documentation/network/kubernetes/compatibility.rst` (\"e2e tested and guaranteed\": 1.30, 1.31, 1.32, 1.33)",
    ),
    (
        "cert-manager",
        (1, 19),
        ((1, 31), (1, 35)),
        "cert-manager/website `content/docs/releases/README.md` (1.19: supported and tested 1.31 → 1.35; cert-manager/website#2007)",
    ),
    (
        "argo-cd",
        (3, 2),
        ((1, 30), (1, 33)),
        "argoproj/argo-cd v3.2.1 `docs/operator-manual/tested-kubernetes-versions.md` l.3 (3.2: v1.33, v1.32, v1.31, v1.30)",
    ),
    (
        "external-secrets",
        (0, 20),
        ((1, 34), (1, 34)),
        "external-secrets.io `introduction/stability-support` (\"0.20.x | 1.34\")",
    ),
];

/// The tested Kubernetes range of `component` at `release`, with its source; `None` when the
/// table does not know the release's minor.
pub fn addon_kubernetes(component: &str, release: Version) -> Option<((Minor, Minor), &'static str)> {
    ADDON_KUBERNETES
        .iter()
        .find(|(c, m, _, _)| *c == component && *m == release.minor_version())
        .map(|(_, _, r, src)| (*r, *src))
}

/// `fleet::addons::kubernetes-untested` when `cluster`'s Kubernetes is outside the tested
/// range of `component` at `release` (pinned at `at`).
pub(super) fn addon_range(component: &str, release: Version, at: Span, cluster: &Cluster) -> Option<Diagnostic> {
    let ((lo, hi), source) = addon_kubernetes(component, release)?;
    let k = &cluster.kubernetes;
    let m = k.value.minor_version();
    if lo <= m && m <= hi {
        return None;
    }
    Some(
        Diagnostic::new(
            &codes::ADDON_KUBERNETES_UNTESTED,
            format!(
                "{component} {} is tested on Kubernetes {}.{}–{}.{}, and cluster `{}` runs {}",
                release, lo.0, lo.1, hi.0, hi.1, cluster.name, k.value
            ),
        )
        .at(at)
        .label(format!("tested on {}.{}–{}.{}", lo.0, lo.1, hi.0, hi.1))
        .related(k.span, "the cluster's Kubernetes")
        .help(format!(
            "an add-on outside its tested range may call APIs this Kubernetes no longer serves or does not know yet, and nodes are Ready only with a working CNI and cloud controller (R25); pin a release tested on {}.{}, or keep the cluster in range (source: {source})",
            m.0, m.1
        )),
    )
}

/// Add-ons (embedded manifests), cert-manager (Cluster API) and chart apps against their
/// tested Kubernetes ranges. Argo CD is checked in `check::argocd`, which knows which
/// clusters run it.
fn addons(fleet: &Fleet, diags: &mut Diagnostics) {
    let release = |s: &str| s.trim_start_matches('v').parse::<Version>().ok();
    for (_, cluster) in fleet.clusters() {
        let mut found = Vec::new();
        for name in &cluster.addons {
            let Some(addon) = fleet.addons.get(&name.value) else { continue };
            if let Some(v) = release(&addon.version.value) {
                found.push(addon_range(&addon.name.value, v, addon.version.span, cluster));
            }
        }
        if let Some(Spanned { value, span }) =
            cluster.cluster_api.as_ref().and_then(|c| c.cert_manager_version.as_ref())
        {
            found.push(addon_range("cert-manager", *value, *span, cluster));
        }
        for app in &cluster.apps {
            if let AppSource::Chart { chart, version: Some(v), .. } = &app.source
                && let Some(r) = release(&v.value)
            {
                found.push(addon_range(&chart.value, r, v.span, cluster));
            }
        }
        for d in found.into_iter().flatten() {
            diags.push(d);
        }
    }
}

/// Whether fleetc can emit configuration for this Talos version.
pub fn talos_supported(talos: Version) -> bool {
    MATRIX.iter().any(|(t, _, _)| *t == talos.minor_version())
}

/// The Kubernetes minors a Talos version supports, first and last.
pub fn kubernetes_range(talos: Version) -> Option<((u32, u32), (u32, u32))> {
    MATRIX.iter().find(|(t, _, _)| *t == talos.minor_version()).map(|(_, lo, hi)| (*lo, *hi))
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    addons(fleet, diags);
    for (_, cluster) in fleet.clusters() {
        let (talos, k8s) = (&cluster.talos, &cluster.kubernetes);
        let Some((lo, hi)) = kubernetes_range(talos.value) else {
            diags.push(
                Diagnostic::new(
                    &codes::TALOS_UNSUPPORTED,
                    format!("Talos {} is not a version fleetc can configure", talos.value.v()),
                )
                .at(talos.span)
                .label("unsupported Talos minor"),
            );
            continue;
        };
        let minor = k8s.value.minor_version();
        if minor < lo || minor > hi {
            diags.push(
                Diagnostic::new(
                    &codes::KUBERNETES_UNSUPPORTED,
                    format!(
                        "Talos {} does not support Kubernetes {} (cluster `{}`)",
                        talos.value.v(),
                        k8s.value,
                        cluster.name
                    ),
                )
                .at(k8s.span)
                .label(format!("supported: {}.{}–{}.{}", lo.0, lo.1, hi.0, hi.1))
                .related(talos.span, "Talos version")
                .help(format!(
                    "Talos {}.{} runs Kubernetes {}.{} to {}.{}; change one of the two versions",
                    talos.value.major, talos.value.minor, lo.0, lo.1, hi.0, hi.1
                )),
            );
        }
    }
}
