//! Stand-ins (R11): a vendored manifest whose first lines say `# fleetc: stand-in` keeps only
//! some objects of the add-on it stands for, so the add-on does not run when it is applied.
//! Each vendored manifest fleet.kdl names is reported once, at its `manifest=`: the add-ons,
//! Argo CD's install, and the cert-manager and operator pins of every `cluster-api` (a pin
//! inherited by several clusters is one place in fleet.kdl, reported once).

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Fleet, Vendored};

/// A vendored manifest of a fleet: what it is in fleet.kdl's terms (`add-on `cilium``), the
/// file, and whether what applies it gives its objects a namespace (Argo CD's install, applied
/// with `-n` into the `argocd` block's namespace) or applies them as written.
pub(super) struct Named<'a> {
    pub what: String,
    pub manifest: &'a Vendored,
    pub namespaced_by_apply: bool,
}

/// Every vendored manifest of `fleet`: Argo CD's install, the add-ons, and the cert-manager
/// and operator pins of every `cluster-api` (once per cluster that inherits them).
pub(super) fn vendored(fleet: &Fleet) -> Vec<Named<'_>> {
    let mut all = Vec::new();
    if let Some(argocd) = &fleet.argocd {
        all.push(Named { what: "Argo CD's install".to_owned(), manifest: &argocd.manifest, namespaced_by_apply: true });
    }
    for addon in fleet.addons.values() {
        all.push(Named {
            what: format!("add-on `{}`", addon.name.value),
            manifest: &addon.manifest,
            namespaced_by_apply: false,
        });
    }
    for (_, cluster) in fleet.clusters() {
        let Some(capi) = &cluster.cluster_api else { continue };
        for (what, m) in [("cert-manager", &capi.cert_manager), ("the Cluster API Operator", &capi.operator_manifest)] {
            if let Some(manifest) = m {
                all.push(Named { what: what.to_owned(), manifest, namespaced_by_apply: false });
            }
        }
    }
    all
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    let mut seen: Vec<Span> = Vec::new();
    for Named { what, manifest: m, .. } in vendored(fleet) {
        let Some(leaves_out) = m.stand_in() else { continue };
        if seen.contains(&m.path.span) {
            continue;
        }
        seen.push(m.path.span);
        let said = if leaves_out.is_empty() { String::new() } else { format!(": {leaves_out}") };
        diags.push(
            Diagnostic::new(
                &codes::ADDON_STAND_IN,
                format!("`{}`, the manifest of {what}, says it is a stand-in{said}", m.path.value),
            )
            .at(m.path.span)
            .label("a stand-in, not the real manifest")
            .help(format!(
                "applied as is, {what} does not run, and the cluster does not start able to run a workload (R11); vendor the real render at the pinned version (docs/addons.md), without the `{}` line, and pin its sha256",
                crate::model::STAND_IN_MARKER
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::compile::{Compilation, MapLoader, compile};
    use crate::diag::codes;

    /// A fleet whose add-on `csi` is `manifest`, listed by one cluster.
    fn with_manifest(manifest: &str) -> Compilation {
        let text = format!(
            r#"fleet "demo" {{
    talos "v1.13.9"
    kubernetes "1.36.2"
    schematic "plain"
    addon "csi" version="0.3.4" manifest="vendor/csi.yaml" sha256="{}"
    environment "staging" {{
        scaleway project="11111111-2222-3333-4444-555555555555" region="fr-par" zone="fr-par-2" {{
            size "small" type="PRO2-XS"
        }}
        state bucket="demo-tofu-state"
        network "10.10.0.0/22"
        cluster "main" {{
            endpoint address="10.10.0.10"
            pool-defaults schematic="plain" size="small"
            addons "csi"
            control-plane count=3
        }}
    }}
}}
"#,
            crate::digest::sha256_hex(manifest.as_bytes())
        );
        let mut loader = MapLoader::default();
        loader.files.insert("vendor/csi.yaml".into(), manifest.to_owned());
        compile("fleet.kdl", &text, &loader)
    }

    fn stand_ins(c: &Compilation) -> Vec<String> {
        c.diags.iter().filter(|d| d.code.name == codes::ADDON_STAND_IN.name).map(|d| d.message.clone()).collect()
    }

    const OBJECT: &str = "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: csi.scaleway.com\n";

    #[test]
    fn a_manifest_marked_a_stand_in_is_reported_with_what_it_leaves_out() {
        let c = with_manifest(&format!(
            "# The Scaleway CSI, trimmed.\n# fleetc: stand-in: the CSIDriver only, no controller or node plugin\n{OBJECT}"
        ));
        assert_eq!(
            stand_ins(&c),
            [
                "`vendor/csi.yaml`, the manifest of add-on `csi`, says it is a stand-in: the CSIDriver only, no controller or node plugin"
            ]
        );
        let warning = c.diags.iter().find(|d| d.code.name == codes::ADDON_STAND_IN.name).unwrap();
        assert_eq!(warning.severity, crate::diag::Severity::Warning);
        let bare = with_manifest(&format!("# fleetc: stand-in\n---\n{OBJECT}"));
        assert_eq!(stand_ins(&bare), ["`vendor/csi.yaml`, the manifest of add-on `csi`, says it is a stand-in"]);
    }

    #[test]
    fn a_real_render_is_not_reported() {
        assert!(stand_ins(&with_manifest(OBJECT)).is_empty());
        // the marker counts only among the comment lines at the top, as a whole word
        let quoted = format!("{OBJECT}---\n# fleetc: stand-in: inside, after the first object\n");
        assert!(stand_ins(&with_manifest(&quoted)).is_empty());
        assert!(
            stand_ins(&with_manifest(&format!("# fleetc: stand-ins are documented elsewhere\n{OBJECT}"))).is_empty()
        );
        let cited = format!("# fleetc: upstream's own manifest, unchanged below these lines\n{OBJECT}");
        assert!(stand_ins(&with_manifest(&cited)).is_empty());
    }
}
