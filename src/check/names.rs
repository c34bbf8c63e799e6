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
    identifiers(fleet, diags);
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
            // A sealed input's name becomes a file name (`secrets/<env>/<cluster>/<name>.age`)
            // and a Secret's key at apply time: a DNS label has no quote, line break, `/` or
            // template marker in it.
            for s in &cluster.sealed {
                label(s, "sealed input", diags);
            }
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

/// A git ref name as `git check-ref-format` takes one (git-check-ref-format(1)): what Argo CD
/// resolves a `targetRevision` branch or tag with. A commit SHA is one too.
pub fn is_git_ref(s: &str) -> bool {
    !s.is_empty()
        && s != "@"
        && !s.chars().any(|c| c.is_ascii_control() || " ~^:?*[\\".contains(c))
        && !s.contains("..")
        && !s.contains("@{")
        && !s.ends_with('/')
        && !s.ends_with('.')
        && s.split('/').all(|c| !c.is_empty() && !c.starts_with('.') && !c.ends_with(".lock"))
}

/// A release version as projects tag them (semver and its `v` form, `1.18.4`, `v0.36.2`,
/// `1.0.0-rc.1+build.5`): an ASCII letter or digit first, then letters, digits, `.`, `-`, `+`
/// and `_`, at most 128 characters (a container image tag's length, the longest reader).
pub fn is_release(s: &str) -> bool {
    s.len() <= 128
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || ".-+_".contains(c))
}

/// proxmox/pve-common `src/PVE/JSONSchema.pm` `pve_verify_node_name`:
/// `^([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)$`.
pub fn is_pve_node(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// pve-common `parse_id` (a storage ID): `^[a-z][a-z0-9\-\_\.]*[a-z0-9]$`, case-insensitive.
pub fn is_pve_storage_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
}

/// pve-common `parse_bridge_id`: `^[-_.\w\d]+$`.
pub fn is_pve_bridge(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c))
}

/// An S3 region name: lowercase letters, digits and `-`, starting with a letter.
pub fn is_region(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A certificate SAN fleetc writes: an IP address, or a DNS name (labels of letters, digits
/// and `-`, at most 63 characters each, 253 in all), its first label possibly `*`.
pub fn is_san(s: &str) -> bool {
    if s.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    let name = s.strip_prefix("*.").unwrap_or(s);
    !name.is_empty()
        && s.len() <= 253
        && name.split('.').all(|l| {
            let b = l.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}

fn identifier(value: &Spanned<String>, ok: bool, what: &str, why: &str, diags: &mut Diagnostics) {
    if ok {
        return;
    }
    let (subject, not) = what.split_once(" | ").unwrap_or((what, "is not a name its reader takes"));
    diags.push(
        Diagnostic::new(&codes::INVALID_IDENTIFIER, format!("{subject} `{}` {not}", value.value))
            .at(value.span)
            .label("refused by the tool that reads it")
            .help(why.to_owned()),
    );
}

/// The names fleet.kdl hands to another tool, in the grammar of that tool
/// (`fleet::names::invalid-identifier`).
fn identifiers(fleet: &Fleet, diags: &mut Diagnostics) {
    use crate::model::Provider;
    if let Some(g) = &fleet.gitops {
        identifier(
            &g.revision,
            is_git_ref(&g.revision.value),
            "the gitops revision | is not a git ref name",
            "Argo CD resolves `targetRevision` as a git branch, tag or commit, and git refuses this as a ref name (no space, `~^:?*[\\`, `..`, `@{`, no `.lock` component, no trailing `/` or `.`: git-check-ref-format(1)); every Application would stay Unknown",
            diags,
        );
    }
    for a in fleet.addons.values() {
        identifier(
            &a.version,
            is_release(&a.version.value),
            "the add-on version | is not a release version",
            "an add-on's version names the release its vendored manifest renders, and fleetc compares it with the add-on's tested Kubernetes range (`fleet::addons::kubernetes-untested`): write the release as its project tags it, letters, digits, `.`, `-`, `+` and `_` only (`1.18.4`, `v0.36.2`), with no quote, space, line break or template marker",
            diags,
        );
    }
    let pve = "Proxmox VE refuses the API call at `tofu apply` (proxmox/pve-common `src/PVE/JSONSchema.pm`)";
    for env in &fleet.environments {
        if let Provider::Proxmox(px) = &env.provider {
            let node = (!px.nodes.iter().any(|n| n.span == px.node.span)).then_some(&px.node);
            for n in node.into_iter().chain(px.nodes.iter()) {
                identifier(
                    n,
                    is_pve_node(&n.value),
                    "the Proxmox node | is not a Proxmox node name",
                    &format!("{pve}: a node name is letters, digits and `-` inside (`pve_verify_node_name`)"),
                    diags,
                );
            }
            for d in [&px.datastore, &px.image_datastore] {
                identifier(
                    d,
                    is_pve_storage_id(&d.value),
                    "the Proxmox datastore | is not a Proxmox storage ID",
                    &format!(
                        "{pve}: a storage ID is a letter, then letters, digits, `-`, `_`, `.`, ending with a letter or digit (`parse_id`)"
                    ),
                    diags,
                );
            }
            identifier(
                &px.bridge,
                is_pve_bridge(&px.bridge.value),
                "the Proxmox bridge | is not a Proxmox bridge name",
                &format!("{pve}: a bridge is letters, digits, `-`, `_`, `.` (`parse_bridge_id`)"),
                diags,
            );
        }
        if let Some(state) = &env.state {
            identifier(
                &state.region,
                is_region(&state.region.value),
                "the state bucket's region | is not an S3 region name",
                "the S3 backend signs every request for this region (R3), and a region is lowercase letters, digits and `-` (`fr-par`, `eu-west-1`): `tofu init` would fail",
                diags,
            );
        }
        for cluster in &env.clusters {
            for san in &cluster.cert_sans {
                identifier(
                    san,
                    is_san(&san.value),
                    "the certificate name | is neither an IP address nor a DNS name",
                    "`cert-sans` names go into the API server's certificate, and a client compares the name it dialed with them: write an IP address or a DNS name (labels of letters, digits and `-`, a leading `*.` allowed)",
                    diags,
                );
            }
        }
    }
}

#[cfg(test)]
mod identifier_tests {
    use super::*;

    #[test]
    fn each_grammar_takes_what_its_tool_takes_and_refuses_the_rest() {
        for ok in ["main", "release/1.2", "v1.13.9", "0123abcd", "feature/x_y-z"] {
            assert!(is_git_ref(ok), "{ok}");
        }
        for bad in ["release 1", "a..b", "x.lock", "a/", "a.", ".hidden", "@", "a@{1}", "a:b", "a~1", ""] {
            assert!(!is_git_ref(bad), "{bad}");
        }
        assert!(is_pve_node("pve1") && is_pve_node("PVE-2") && !is_pve_node("pve 1") && !is_pve_node("-pve"));
        assert!(is_pve_node("a") && !is_pve_node("pve.lan"));
        assert!(is_pve_storage_id("local-lvm") && is_pve_storage_id("ceph_pool.1") && !is_pve_storage_id("local lvm"));
        assert!(!is_pve_storage_id("1local") && !is_pve_storage_id("local-") && !is_pve_storage_id("l"));
        assert!(is_pve_bridge("vmbr0") && is_pve_bridge("vmbr0.20") && !is_pve_bridge("vmbr 0"));
        assert!(is_region("fr-par") && is_region("eu-west-1") && !is_region("FR-PAR") && !is_region("fr par"));
        assert!(is_san("10.0.0.1") && is_san("api.example.com") && is_san("*.example.com") && is_san("::1"));
        assert!(!is_san("api example") && !is_san("-api.example") && !is_san("https://api") && !is_san(""));
        assert!(is_release("1.18.4") && is_release("v0.36.2") && is_release("1.0.0-rc.1+build.5"));
        assert!(!is_release("") && !is_release("1.0\"") && !is_release("1.0\n") && !is_release("${x}"));
        assert!(!is_release("{{ .Version }}") && !is_release(" 1.0") && !is_release("-1.0"));
    }
}
