//! One CNI per cluster (R25): an embedded add-on that installs a CNI while `cni` is Talos's
//! default would leave flannel (and kube-proxy) running beside it. An add-on installs a CNI
//! when its manifest carries Cilium's `cilium-config` ConfigMap, or a DaemonSet that mounts
//! the host's `/etc/cni/net.d`, where the container runtime reads network configurations
//! (containerd/go-cni v1.1.13 `types_others.go`, `DefaultNetDir`) and where Talos's own
//! flannel writes its own (siderolabs/talos v1.14.0-alpha.1,
//! `internal/app/machined/pkg/controllers/k8s/internal/k8stemplates/flannel.go`).

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::Fleet;

/// Why the manifest looks like a CNI, or `None`.
pub fn installs_a_cni(manifest: &str) -> Option<String> {
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(manifest).ok()?;
    for d in docs.iter().filter(|d| !d.is_null()) {
        let kind = d.get("kind").and_then(serde_json::Value::as_str).unwrap_or_default();
        let name = d.pointer("/metadata/name").and_then(serde_json::Value::as_str).unwrap_or_default();
        if kind == "ConfigMap" && name == "cilium-config" {
            return Some("its manifest configures Cilium (ConfigMap `cilium-config`)".to_owned());
        }
        if kind == "DaemonSet"
            && let Some(volumes) = d.pointer("/spec/template/spec/volumes").and_then(serde_json::Value::as_array)
            && volumes.iter().any(|v| {
                v.pointer("/hostPath/path")
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|p| p.trim_end_matches('/') == "/etc/cni/net.d")
            })
        {
            return Some(format!("its DaemonSet `{name}` writes the host's CNI configuration (`/etc/cni/net.d`)"));
        }
    }
    None
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for (_, cluster) in fleet.clusters() {
        if cluster.cni.is_some() {
            continue;
        }
        for addon in &cluster.addons {
            let Some(a) = fleet.addons.get(&addon.value) else { continue };
            let Some(why) = installs_a_cni(&a.manifest.content) else { continue };
            let mut d = Diagnostic::new(
                &codes::TWO_CNIS,
                format!(
                    "add-on `{}` installs a CNI, and cluster `{}` keeps Talos's default CNI too",
                    addon.value, cluster.name.value
                ),
            )
            .at(addon.span)
            .label("a CNI")
            .help(format!(
                "{why}; with `cni` at its default Talos also deploys flannel and kube-proxy, and two CNIs on one node break pod traffic (R25): write `cni \"{}\"`",
                addon.value
            ));
            if let Some(span) = cluster.cni_default {
                d = d.related(span, "Talos's default CNI");
            }
            diags.push(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cilium_and_daemonsets_writing_cni_config_are_cnis() {
        assert!(installs_a_cni("kind: ConfigMap\nmetadata:\n  name: cilium-config\n").is_some());
        let ds = "kind: DaemonSet\nmetadata:\n  name: kube-flannel-ds\nspec:\n  template:\n    spec:\n      volumes:\n      - name: cni\n        hostPath:\n          path: /etc/cni/net.d\n";
        assert!(installs_a_cni(ds).unwrap().contains("kube-flannel-ds"));
        assert!(installs_a_cni("kind: Deployment\nmetadata:\n  name: ccm\n").is_none());
    }
}
