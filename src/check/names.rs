//! Names are DNS-1123 labels and unique in their scope: they become hostnames, Kubernetes
//! object names, OpenTofu addresses and paths under out/.

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Diagnostics, Span, Spanned, codes};
use crate::model::Fleet;
use crate::model::values::is_dns_label;

fn label(name: &Spanned<String>, what: &str, diags: &mut Diagnostics) {
    if !is_dns_label(&name.value) {
        let mut d =
            Diagnostic::new(&codes::INVALID_NAME, format!("{what} name `{}` is not a DNS-1123 label", name.value))
                .at(name.span)
                .label("not a DNS label");
        let suggestion: String = name
            .value
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect::<String>()
            .trim_matches('-')
            .to_owned();
        if suggestion != name.value && is_dns_label(&suggestion) {
            let why = d.help.take().unwrap_or_default();
            d.help = Some(format!("write `{suggestion}`; {why}"));
        }
        diags.push(d);
    }
}

/// A list value (`sealed "a" "a"`, `addons "x" "x"`) that names one thing twice. Named blocks
/// written twice are found on the tree, as written, by the model.
fn repeated<'a>(what: &str, names: impl IntoIterator<Item = &'a Spanned<String>>, diags: &mut Diagnostics) {
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    for n in names {
        if let Some(first) = seen.get(n.value.as_str()) {
            if *first != n.span {
                diags.push(
                    Diagnostic::new(&codes::DUPLICATE_NAME, format!("{what} `{}` is listed twice", n.value))
                        .at(n.span)
                        .label("listed again here")
                        .related(*first, "first listed here")
                        .help("each name is listed once; the second adds nothing and is probably meant to be another name"),
                );
            }
        } else {
            seen.insert(&n.value, n.span);
        }
    }
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    label(&fleet.name, "fleet", diags);
    // Argo CD's namespace is a Namespace object's name and reaches `kubectl create namespace`
    // as an argument: `--server=…` there would be a flag (issue 19).
    if let Some(argo) = &fleet.argocd {
        label(&argo.namespace, "Argo CD namespace", diags);
    }
    for s in fleet.schematics.values() {
        label(&s.name, "schematic", diags);
    }
    for a in fleet.addons.values() {
        label(&a.name, "add-on", diags);
    }
    for env in &fleet.environments {
        label(&env.name, "environment", diags);
        repeated("recipient", &env.recipients, diags);
        // The state bucket reaches the image upload's URL path and `scw … bucket=`: a DNS
        // label (a subset of S3's bucket names) cannot become `../other` there (issue 19).
        if let Some(state) = &env.state {
            label(&state.bucket, "state bucket", diags);
        }
        for n in env.postgres.iter().map(|p| &p.name).chain(env.buckets.iter().map(|b| &b.name)) {
            label(n, "service", diags);
        }
        for n in env.registries.iter().map(|r| &r.name).chain(env.secrets.iter().map(|s| &s.name)) {
            label(n, "service", diags);
        }
        for cluster in &env.clusters {
            label(&cluster.name, "cluster", diags);
            repeated("sealed input", &cluster.sealed, diags);
            repeated("add-on", &cluster.addons, diags);
            for app in &cluster.apps {
                repeated("app", &app.after, diags);
                repeated("postgres instance", &app.postgres, diags);
            }
            for pool in &cluster.workers {
                label(&pool.name, "pool", diags);
            }
            for app in &cluster.apps {
                label(&app.name, "app", diags);
                label(&app.namespace, "namespace", diags);
            }
            for pool in cluster.pools().filter(|p| is_dns_label(&cluster.name.value) && is_dns_label(&p.name.value)) {
                if let Some(m) = pool.machines.last()
                    && !is_dns_label(&m.hostname)
                {
                    diags.push(
                            Diagnostic::new(
                                &codes::INVALID_NAME,
                                format!("node name `{}` (cluster-pool-index) is not a DNS-1123 label", m.hostname),
                            )
                            .at(pool.name.span)
                            .label("makes a hostname too long")
                            .help("node hostnames are `<cluster>-<pool>-<n>`, at most 63 characters: shorten the cluster or pool name"),
                        );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compile::{MapLoader, compile};

    /// Issue 19: the Argo CD namespace reached `kubectl create namespace` unchecked, so
    /// `--server=…` became kubectl's flag and the admin kubeconfig went to that host.
    #[test]
    fn the_argocd_namespace_is_a_dns_label() {
        for (ns, ok) in [
            ("argocd", true),
            ("gitops-1", true),
            ("--server=https://evil.example:6443", false),
            ("-n", false),
            ("Argo", false),
        ] {
            let text = format!(
                r#"fleet "acme" {{
    talos "v1.13.9"
    kubernetes "1.36.2"
    argocd version="3.2.1" namespace="{ns}" manifest="vendor/argocd.yaml" sha256="0000000000000000000000000000000000000000000000000000000000000000"
}}"#
            );
            let manifest = "kind: Namespace\n";
            let sha = crate::digest::sha256_hex(manifest.as_bytes());
            let text = text.replace(&"0".repeat(64), &sha);
            let loader = MapLoader { files: [("vendor/argocd.yaml".to_owned(), manifest.to_owned())].into() };
            let c = compile("fleet.kdl", &text, &loader);
            let hit = c
                .diags
                .iter()
                .any(|d| d.code.name == "fleet::names::not-dns-label" && d.message.contains("Argo CD namespace"));
            assert_eq!(
                hit,
                !ok,
                "{ns}: {:?}",
                c.diags.iter().map(|d| (d.code.name, d.message.clone())).collect::<Vec<_>>()
            );
        }
    }
}

#[cfg(test)]
mod bucket_tests {
    use crate::compile::{MapLoader, compile};

    /// The state bucket reached the upload URL `<endpoint>/<bucket>/images/…` unchecked: a
    /// bucket `../other` changed the path curl requested.
    #[test]
    fn the_state_bucket_is_a_dns_label() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fleet.kdl")).unwrap();
        assert!(text.contains("bucket=\"acme-tofu-state\""));
        let bad = text.replacen("bucket=\"acme-tofu-state\"", "bucket=\"../other\"", 1);
        let c = compile("fleet.kdl", &bad, &MapLoader::default());
        assert!(
            c.diags.iter().any(|d| d.code.name == "fleet::names::not-dns-label" && d.message.contains("state bucket"))
        );
    }
}
