//! The Talos ↔ Kubernetes support matrix, checked: every cluster's Talos minor is one fleetc
//! can configure (a row of the versions table, or a newer minor whose schema is in schemas/,
//! with a warning), its Kubernetes is in that Talos's range, and each add-on runs on a
//! Kubernetes its project tested. The tables are `upstream::talos`'.

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{AppSource, Cluster, Fleet, Spanned, Version};
use crate::upstream::schemas::has_talos_schema;
use crate::upstream::talos::{Table, addon_kubernetes, kubernetes_published, kubernetes_range, table, talos_newest};

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

/// A pin of a minor whose row was read from a pre-release, without `allow-prerelease=#true`
/// on its `talos` node (docs/talos.md, "Release day").
fn prerelease(
    table: &Table,
    talos: &Spanned<Version>,
    allow: Option<&Spanned<bool>>,
    cluster: &str,
) -> Option<Diagnostic> {
    let row = table.row(talos.value.minor_version()).filter(|r| r.prerelease)?;
    if allow.is_some_and(|a| a.value) {
        return None;
    }
    Some(
        Diagnostic::new(
            &codes::TALOS_PRERELEASE,
            format!("Talos {} is a minor fleetc knows from a pre-release only (cluster `{cluster}`)", talos.value.v(),),
        )
        .at(talos.span)
        .label(format!("versions/talos.kdl: talos \"{}.{}\" prerelease=#true", row.minor.0, row.minor.1)),
    )
}

/// A Talos minor without a row: newer than the table with its schema in schemas/ is a warning
/// (fleetc writes the newest row's document model, which that schema judges); anything else
/// is refused (the policy in docs/talos.md, "Versions").
fn unknown_talos(table: &Table, talos: &Spanned<Version>, schema: bool) -> Diagnostic {
    let newest = table.newest_minor();
    if talos.value.minor_version() > newest && schema {
        let (a, b) = table.documents(talos.value);
        return Diagnostic::new(
            &codes::TALOS_NEWER_THAN_TABLE,
            format!(
                "Talos {} is newer than fleetc's versions table (newest: {}.{}): fleetc writes the {a}.{b} document model for it",
                talos.value.v(),
                newest.0,
                newest.1
            ),
        )
        .at(talos.span)
        .label(format!("no row in versions/talos.kdl; schemas/talos/v{}.{} is", talos.value.major, talos.value.minor));
    }
    let minors: Vec<String> = table.talos.iter().map(|r| format!("{}.{}", r.minor.0, r.minor.1)).collect();
    Diagnostic::new(
        &codes::TALOS_UNSUPPORTED,
        format!("Talos {} is not a version fleetc can configure", talos.value.v()),
    )
    .at(talos.span)
    .label(if talos.value.minor_version() > newest {
        format!("newer than the table ({}), and no schema in schemas/talos/", minors.join(", "))
    } else {
        format!("fleetc knows Talos {}", minors.join(", "))
    })
}

/// A patch release newer than the newest one the table knows of its minor (m03: `v1.13.99`):
/// Talos's for `talos`, Kubernetes' for the cluster's and each worker pool's `kubernetes`.
/// A minor the table has no newest patch for is judged elsewhere (or not at all).
fn releases(fleet: &Fleet, diags: &mut Diagnostics) {
    // One place is reported once: an inherited version is one place for every cluster.
    let mut seen = std::collections::BTreeSet::new();
    for (_, cluster) in fleet.clusters() {
        let t = &cluster.talos;
        if let Some(newest) = talos_newest(t.value.minor_version())
            && t.value > newest
            && seen.insert(t.span)
        {
            diags.push(
                Diagnostic::new(
                    &codes::TALOS_RELEASE_UNKNOWN,
                    format!(
                        "Talos {} is newer than the newest {}.{} release fleetc knows ({})",
                        t.value.v(),
                        t.value.major,
                        t.value.minor,
                        newest.v()
                    ),
                )
                .at(t.span)
                .label(format!("newest known: {}", newest.v()))
                .help(format!(
                    "the Image Factory has no installer or disk image for a release Talos never published, so the machines would never install (R17): write `talos \"{}\"` (the versions table, versions/talos.kdl; docs/talos.md \"Versions\")",
                    newest.v()
                )),
            );
        }
        let pools = cluster.workers.iter().filter_map(|p| p.kubernetes.as_ref());
        for k in std::iter::once(&cluster.kubernetes).chain(pools) {
            if let Some(newest) = kubernetes_published(k.value.minor_version())
                && k.value > newest
                && seen.insert(k.span)
            {
                diags.push(
                    Diagnostic::new(
                        &codes::KUBERNETES_RELEASE_UNKNOWN,
                        format!(
                            "Kubernetes {} is newer than the newest {}.{} release fleetc knows ({newest})",
                            k.value, k.value.major, k.value.minor
                        ),
                    )
                    .at(k.span)
                    .label(format!("newest known: {newest}"))
                    .help(format!(
                        "Talos pulls the kubelet and control-plane images at exactly this tag, and a release never published has none (R17): write `kubernetes \"{newest}\"`"
                    )),
                );
            }
        }
    }
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    addons(fleet, diags);
    releases(fleet, diags);
    for (_, cluster) in fleet.clusters() {
        let (talos, k8s) = (&cluster.talos, &cluster.kubernetes);
        if let Some(d) = prerelease(table(), talos, cluster.talos_allow_prerelease.as_ref(), &cluster.name.value) {
            diags.push(d);
        }
        let Some((lo, hi)) = kubernetes_range(talos.value) else {
            diags.push(unknown_talos(table(), talos, has_talos_schema(talos.value.minor_version())));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::talos::TABLE_SOURCE;

    #[test]
    fn a_minor_newer_than_the_table_is_a_warning_with_its_schema_and_an_error_without() {
        // The table as it was before Talos 1.14 had a row: 1.14 has its schema in schemas/.
        let text: String = TABLE_SOURCE.split("talos \"1.14\"").next().unwrap().to_owned();
        let old = Table::parse(&text).unwrap();
        assert_eq!(old.newest_minor(), (1, 13));
        let at = Spanned { value: Version::new(1, 14, 1), span: Span::default() };
        assert_eq!(unknown_talos(&old, &at, true).code.name, codes::TALOS_NEWER_THAN_TABLE.name);
        assert_eq!(old.documents(Version::new(1, 14, 1)), (1, 13));
        assert_eq!(unknown_talos(&old, &at, false).code.name, codes::TALOS_UNSUPPORTED.name);
        let older = Spanned { value: Version::new(1, 9, 0), span: Span::default() };
        assert_eq!(unknown_talos(&old, &older, true).code.name, codes::TALOS_UNSUPPORTED.name);
    }

    /// A fixture row read from a pre-release (what release-day prep adds for 1.15 before GA):
    /// its pin is refused without `allow-prerelease=#true`, accepted with it, and a GA row
    /// needs no flag.
    #[test]
    fn a_prerelease_row_needs_allow_prerelease() {
        let fixture = format!(
            "{}\ntalos \"1.15\" prerelease=#true {{\n    kubernetes \"1.33\" \"1.38\" source=\"fixture\"\n    newest \"1.15.0\" source=\"fixture\"\n    documents \"1.14\" source=\"fixture\"\n    kinds \"v1alpha1\" source=\"fixture\"\n}}\n",
            crate::upstream::talos::TABLE_SOURCE
        );
        let t = Table::parse(&fixture).unwrap();
        assert!(t.row((1, 15)).unwrap().prerelease);
        assert!(!t.row((1, 14)).unwrap().prerelease);
        let pin = Spanned { value: Version::new(1, 15, 0), span: Span::default() };
        let yes = Spanned { value: true, span: Span::default() };
        let no = Spanned { value: false, span: Span::default() };
        let d = prerelease(&t, &pin, None, "lab").expect("refused without the flag");
        assert_eq!(d.code.name, codes::TALOS_PRERELEASE.name);
        assert!(prerelease(&t, &pin, Some(&no), "lab").is_some());
        assert!(prerelease(&t, &pin, Some(&yes), "lab").is_none());
        let ga = Spanned { value: Version::new(1, 14, 1), span: Span::default() };
        assert!(prerelease(&t, &ga, None, "lab").is_none());
        // The markdown marks the row.
        assert!(t.markdown().contains("| 1.15 (pre-release) |"));
    }
}
