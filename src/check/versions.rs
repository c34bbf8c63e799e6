//! The Talos ↔ Kubernetes support matrix: each Talos minor supports a window of Kubernetes
//! minors, and fleetc emits configuration only for the Talos minors whose schema it knows.

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Fleet, Version};

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

/// Whether fleetc can emit configuration for this Talos version.
pub fn talos_supported(talos: Version) -> bool {
    MATRIX.iter().any(|(t, _, _)| *t == talos.minor_version())
}

/// The Kubernetes minors a Talos version supports, first and last.
pub fn kubernetes_range(talos: Version) -> Option<((u32, u32), (u32, u32))> {
    MATRIX.iter().find(|(t, _, _)| *t == talos.minor_version()).map(|(_, lo, hi)| (*lo, *hi))
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
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
