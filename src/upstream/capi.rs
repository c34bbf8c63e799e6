//! The versions tables of the Cluster API providers, each row with its source (docs/capi.md,
//! "Version table", prints the same rows): the core provider's Kubernetes support and the
//! newest release of each core minor fleetc proposes; which Talos and Kubernetes minors each
//! release of the Talos bootstrap (CABPT) and control-plane (CACPPT) providers states it
//! supports; what the Proxmox provider (CAPMOX) needs of the core and IPAM providers; and the
//! provider versions whose API fleetc writes. `check::capi` reports a pin outside them (R24,
//! R26), `plan::upgrade` proposes releases from them.

use super::{Minor, minor_text};
use crate::model::Version;

/// One row of the core provider's support matrix: from release `(minor, from_patch)` on, it
/// manages Kubernetes minor `kubernetes` in workload clusters, and runs on a management
/// cluster of that minor too when `management`.
struct CoreRow {
    core: Minor,
    kubernetes: Minor,
    management: bool,
    from_patch: u32,
}

const fn core(core: Minor, kubernetes: Minor, management: bool, from_patch: u32) -> CoreRow {
    CoreRow { core, kubernetes, management, from_patch }
}

/// The core provider's support matrix, patch-aware. 1.11–1.13: kubernetes-sigs/cluster-api
/// v1.13.3 `docs/book/src/reference/versions.md` l.363-374 ("✓ (only workload)" is
/// `management: false`, "✓ >= v1.12.8" is `from_patch: 8`). 1.14: the same table at v1.14.0
/// (1.31–1.36, management from 1.33) and the v1.14.1 release notes (kubernetes-sigs/cluster-api
/// #14169: Kubernetes 1.37 from v1.14.1).
const CORE: &[CoreRow] = &[
    core((1, 11), (1, 28), false, 0),
    core((1, 11), (1, 29), false, 0),
    core((1, 11), (1, 30), true, 0),
    core((1, 11), (1, 31), true, 0),
    core((1, 11), (1, 32), true, 0),
    core((1, 11), (1, 33), true, 0),
    core((1, 11), (1, 34), true, 1),
    core((1, 12), (1, 29), false, 0),
    core((1, 12), (1, 30), false, 0),
    core((1, 12), (1, 31), true, 0),
    core((1, 12), (1, 32), true, 0),
    core((1, 12), (1, 33), true, 0),
    core((1, 12), (1, 34), true, 0),
    core((1, 12), (1, 35), true, 1),
    core((1, 12), (1, 36), true, 8),
    core((1, 13), (1, 30), false, 0),
    core((1, 13), (1, 31), false, 0),
    core((1, 13), (1, 32), true, 0),
    core((1, 13), (1, 33), true, 0),
    core((1, 13), (1, 34), true, 0),
    core((1, 13), (1, 35), true, 0),
    core((1, 13), (1, 36), true, 1),
    core((1, 14), (1, 31), false, 0),
    core((1, 14), (1, 32), false, 0),
    core((1, 14), (1, 33), true, 0),
    core((1, 14), (1, 34), true, 0),
    core((1, 14), (1, 35), true, 0),
    core((1, 14), (1, 36), true, 0),
    core((1, 14), (1, 37), true, 1),
];

/// The newest release of each core minor fleetc knows of, the one `upgrade-plan` proposes:
/// v1.12.11 (its release notes, kubernetes-sigs/cluster-api#14056), v1.13.7 and v1.14.2 (the
/// newest `sigs.k8s.io/cluster-api` module versions the Go module proxy served on 2026-11-25).
pub const CORE_NEWEST: &[(Minor, u32)] = &[((1, 12), 11), ((1, 13), 7), ((1, 14), 2)];

fn range(core: Version, management: bool) -> Option<(Minor, Minor)> {
    let rows = CORE
        .iter()
        .filter(|r| r.core == core.minor_version() && r.from_patch <= core.patch && (r.management || !management));
    let lo = rows.clone().map(|r| r.kubernetes).min()?;
    Some((lo, rows.map(|r| r.kubernetes).max()?))
}

/// The Kubernetes minors a Cluster API core release supports for workload clusters.
pub fn core_workload_range(core: Version) -> Option<(Minor, Minor)> {
    range(core, false)
}

/// The Kubernetes minors a Cluster API core release supports for the management cluster.
pub fn core_management_range(core: Version) -> Option<(Minor, Minor)> {
    range(core, true)
}

/// The newest known release of a core minor.
pub fn core_newest(m: Minor) -> Option<Version> {
    CORE_NEWEST.iter().find(|(n, _)| *n == m).map(|(n, p)| Version::new(n.0, n.1, *p))
}

/// The release `upgrade-plan` proposes for a core that manages Kubernetes `k8s` in workload
/// clusters (or, with `management`, runs on a management cluster of that minor): the newest
/// known release of the oldest minor that does.
pub fn core_for(k8s: Minor, management: bool) -> Option<Version> {
    let mut minors: Vec<Minor> = CORE_NEWEST.iter().map(|(m, _)| *m).collect();
    minors.sort();
    minors.into_iter().filter_map(core_newest).find(|v| {
        let r = if management { core_management_range(*v) } else { core_workload_range(*v) };
        r.is_some_and(|(lo, hi)| lo <= k8s && k8s <= hi)
    })
}

/// Why fleetc cannot emit for a pinned provider version, if it cannot.
pub fn provider_problem(provider: &str, v: Version) -> Option<String> {
    let m = v.minor_version();
    match provider {
        "core" if core_workload_range(v).is_none() => Some(if m < (1, 11) {
            format!("Cluster API {v} does not serve `cluster.x-k8s.io/v1beta2`, which fleetc writes (1.11 and later)")
        } else {
            format!("fleetc knows the Kubernetes support of Cluster API 1.11 to 1.14, not {v}")
        }),
        "control-plane-talos" if m == (0, 6) => Some(format!(
            "CACPPT {v} moves to the v1beta2 contract (`spec.machineTemplate.spec.infrastructureRef`), which fleetc does not support yet"
        )),
        "control-plane-talos" if m != (0, 5) => {
            Some(format!("fleetc writes the TalosControlPlane of CACPPT 0.5, not {v}"))
        }
        "bootstrap-talos" if m == (0, 6) && v.patch < 5 => {
            Some(format!("CABPT {v} has no `strategicPatches` (added in 0.6.5)"))
        }
        "bootstrap-talos" if m != (0, 6) => {
            Some(format!("fleetc writes the TalosConfigTemplate of CABPT 0.6, not {v}"))
        }
        "infrastructure-proxmox" if m < (0, 8) => {
            Some(format!("CAPMOX {v} serves only `v1alpha1`; fleetc writes `v1alpha2` (CAPMOX 0.9)"))
        }
        "infrastructure-proxmox" if m != (0, 9) => {
            Some(format!("fleetc writes the `v1alpha2` objects of CAPMOX 0.9, not {v}"))
        }
        _ => None,
    }
}

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

/// The provider-combination table (`versions/capi.kdl`, embedded): per CAPMOX minor, the core
/// minors its README states and the oldest IPAM in-cluster release it needs, each with its
/// source. `check::capi_versions` refuses a pin outside it; docs/versions.md prints it.
pub const COMBINATIONS_SOURCE: &str = include_str!("../../versions/capi.kdl");

/// One provider minor of `versions/capi.kdl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combination {
    /// The provider (`infrastructure-proxmox`).
    pub provider: String,
    pub minor: Minor,
    /// The core minors the release states, in the file's order.
    pub core: Vec<Minor>,
    pub core_source: String,
    /// The oldest IPAM in-cluster release it needs.
    pub ipam: (u32, u32, u32),
    pub ipam_source: String,
}

fn minor_of(s: &str) -> Result<Minor, String> {
    let mut it = s.split('.');
    match (it.next().map(str::parse), it.next().map(str::parse), it.next()) {
        (Some(Ok(a)), Some(Ok(b)), None) => Ok((a, b)),
        _ => Err(format!("versions/capi.kdl: `{s}` is not a minor (MAJOR.MINOR)")),
    }
}

/// Parses `versions/capi.kdl`.
pub fn parse_combinations(text: &str) -> Result<Vec<Combination>, String> {
    let doc = crate::syntax::parse_kdl(text).map_err(|e| format!("versions/capi.kdl: {e}"))?;
    let args = |n: &kdl::KdlNode| -> Vec<String> {
        n.entries()
            .iter()
            .filter(|e| e.name().is_none())
            .filter_map(|e| e.value().as_string().map(str::to_owned))
            .collect()
    };
    let source = |n: &kdl::KdlNode| -> Result<String, String> {
        n.get("source")
            .and_then(|v| v.as_string())
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("versions/capi.kdl: `{}` has no source", n.name().value()))
    };
    let mut rows = Vec::new();
    for node in doc.nodes() {
        let provider = node.name().value().to_owned();
        let minor =
            minor_of(args(node).first().ok_or_else(|| format!("versions/capi.kdl: `{provider}` names no minor"))?)?;
        let mut row = Combination {
            provider,
            minor,
            core: Vec::new(),
            core_source: String::new(),
            ipam: (0, 0, 0),
            ipam_source: String::new(),
        };
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            match child.name().value() {
                "core" => {
                    row.core = args(child).iter().map(|m| minor_of(m)).collect::<Result<_, _>>()?;
                    row.core_source = source(child)?;
                }
                "ipam" => {
                    let v: Version = args(child)
                        .first()
                        .and_then(|v| v.parse().ok())
                        .ok_or("versions/capi.kdl: `ipam` takes a release (MAJOR.MINOR.PATCH)")?;
                    row.ipam = (v.major, v.minor, v.patch);
                    row.ipam_source = source(child)?;
                }
                other => return Err(format!("versions/capi.kdl: unknown `{other}`")),
            }
        }
        if row.core.is_empty() || row.ipam_source.is_empty() {
            return Err(format!(
                "versions/capi.kdl: `{}` \"{}\" needs `core` and `ipam`",
                row.provider,
                minor_text(minor)
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// The embedded provider-combination table.
pub fn combinations() -> &'static [Combination] {
    static ROWS: std::sync::LazyLock<Vec<Combination>> = std::sync::LazyLock::new(|| {
        parse_combinations(COMBINATIONS_SOURCE).expect("versions/capi.kdl parses (upstream::capi tests)")
    });
    &ROWS
}

/// The row of `provider` at the minor of `v`, if the table has one.
pub fn combination(provider: &str, v: Version) -> Option<&'static Combination> {
    combinations().iter().find(|c| c.provider == provider && c.minor == v.minor_version())
}

/// The stated support of a release: its own row, or for a later patch of a known minor the
/// newest row of that minor (a README's table only grows within a minor). `None` when the
/// table knows nothing of the release's minor, or the release predates it.
pub fn support(table: &[Support], v: Version) -> Option<Support> {
    let (major, minor, patch) = (v.major, v.minor, v.patch);
    table.iter().rev().find(|s| s.release.0 == major && s.release.1 == minor && s.release.2 <= patch).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn provider_table() {
        assert!(provider_problem("control-plane-talos", v("0.5.12")).is_none());
        assert!(provider_problem("control-plane-talos", v("0.6.0")).unwrap().contains("not support yet"));
        assert!(provider_problem("bootstrap-talos", v("0.6.4")).unwrap().contains("strategicPatches"));
        assert!(provider_problem("bootstrap-talos", v("0.6.11")).is_none());
        assert!(provider_problem("infrastructure-proxmox", v("0.7.5")).unwrap().contains("v1alpha1"));
        assert!(provider_problem("core", v("1.10.4")).unwrap().contains("v1beta2"));
        // R12 (capi-argocd.md): patch-aware; 1.12.9 already manages 1.36, 1.14.0 not 1.37.
        assert_eq!(core_workload_range(v("1.12.9")), Some(((1, 29), (1, 36))));
        assert_eq!(core_workload_range(v("1.12.7")), Some(((1, 29), (1, 35))));
        assert_eq!(core_workload_range(v("1.13.0")), Some(((1, 30), (1, 35))));
        assert_eq!(core_workload_range(v("1.14.0")), Some(((1, 31), (1, 36))));
        assert_eq!(core_workload_range(v("1.14.1")), Some(((1, 31), (1, 37))));
        assert_eq!(core_management_range(v("1.13.3")), Some(((1, 32), (1, 36))));
        assert_eq!(core_for((1, 36), false), Some(v("1.12.11")));
        assert_eq!(core_for((1, 37), false), Some(v("1.14.2")));
        assert_eq!(core_for((1, 37), true), Some(v("1.14.2")));
        assert_eq!(core_for((1, 38), false), None);
    }

    #[test]
    fn the_combination_table_parses_with_a_source_per_value() {
        let rows = parse_combinations(COMBINATIONS_SOURCE).unwrap();
        let capmox = combination("infrastructure-proxmox", v("0.9.0")).unwrap();
        assert_eq!(capmox.core, vec![(1, 11), (1, 12)]);
        assert_eq!(capmox.ipam, (1, 1, 0));
        assert!(rows.iter().all(|r| !r.core_source.is_empty() && !r.ipam_source.is_empty()));
        assert!(combination("infrastructure-proxmox", v("0.10.0")).is_none());
        assert!(parse_combinations("infrastructure-proxmox \"0.9\" { core \"1.12\" }").is_err());
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
