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
    for s in fleet.schematics.values() {
        label(&s.name, "schematic", diags);
    }
    for a in fleet.addons.values() {
        label(&a.name, "add-on", diags);
    }
    for env in &fleet.environments {
        label(&env.name, "environment", diags);
        repeated("recipient", &env.recipients, diags);
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
