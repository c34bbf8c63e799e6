//! Every name a fleet refers to is declared: schematics, sizes, add-ons, the CNI add-on,
//! management clusters, apps in `after=`.

use crate::diag::{Diagnostic, Diagnostics, Spanned, codes, did_you_mean};
use crate::model::Fleet;

fn dangling<'a>(what: &str, name: &Spanned<String>, known: impl IntoIterator<Item = &'a str>, diags: &mut Diagnostics) {
    let known: Vec<&str> = known.into_iter().collect();
    let help = match did_you_mean(&name.value, known.iter().copied()) {
        Some(m) => format!("did you mean `{m}`?"),
        None if known.is_empty() => format!("no {what} is declared"),
        None => format!("declared: {}", known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")),
    };
    diags.push(
        Diagnostic::new(&codes::DANGLING_REFERENCE, format!("no {what} `{}`", name.value))
            .at(name.span)
            .label(format!("unknown {what}"))
            .help(help),
    );
}

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    let schematics = || fleet.schematics.keys().map(String::as_str);
    let addons = || fleet.addons.keys().map(String::as_str);
    for env in &fleet.environments {
        let sizes = || env.provider.sizes().keys().map(String::as_str);
        for cluster in &env.clusters {
            for pool in cluster.pools() {
                if fleet.schematic(&pool.schematic.value).is_none()
                    && !fleet.unresolved.contains(&format!("schematic {}", pool.schematic.value))
                {
                    dangling("schematic", &pool.schematic, schematics(), diags);
                }
                if env.size(&pool.size.value).is_none() {
                    dangling("size", &pool.size, sizes(), diags);
                }
            }
            for addon in &cluster.addons {
                if !fleet.addons.contains_key(&addon.value)
                    && !fleet.unresolved.contains(&format!("add-on {}", addon.value))
                {
                    dangling("add-on", addon, addons(), diags);
                }
            }
            if let Some(cni) = &cluster.cni
                && cni.value != crate::model::CNI_NONE
                && !cluster.addons.iter().any(|a| a.value == cni.value)
            {
                diags.push(
                    Diagnostic::new(
                        &codes::DANGLING_REFERENCE,
                        format!("the CNI `{}` is not among the cluster's add-ons", cni.value),
                    )
                    .at(cni.span)
                    .label("not in `addons`")
                    .help(if cni.value == "flannel" {
                        "Talos's default CNI is flannel: write `cni \"default\"` (or leave `cni` out)".to_owned()
                    } else {
                        format!(
                            "add `{}` to the cluster's `addons` (and declare it with `addon \"{}\" …`, docs/addons.md): nodes become Ready only with a CNI (R25)",
                            cni.value, cni.value
                        )
                    }),
                );
            }
            if let Some(mgmt) = &cluster.managed_by {
                match env.cluster(&mgmt.value) {
                    None => dangling("cluster", mgmt, env.clusters.iter().map(|c| c.name.value.as_str()), diags),
                    Some(m) if m.cluster_api.is_none() => diags.push(
                        Diagnostic::new(
                            &codes::DANGLING_REFERENCE,
                            format!("cluster `{}` runs no Cluster API", mgmt.value),
                        )
                        .at(mgmt.span)
                        .label("not a management cluster")
                        .help("a management cluster pins its providers in a `cluster-api { … }` block (R24)"),
                    ),
                    Some(m) if m.managed_by.is_some() => diags.push(
                        Diagnostic::new(
                            &codes::DANGLING_REFERENCE,
                            format!("cluster `{}` is itself managed", mgmt.value),
                        )
                        .at(mgmt.span)
                        .label("managed clusters cannot manage others here")
                        .help("fleetc supports one level of management: the management cluster is built by OpenTofu"),
                    ),
                    Some(_) => {}
                }
            }
            for app in &cluster.apps {
                for a in &app.after {
                    if !cluster.apps.iter().any(|x| x.name.value == a.value) {
                        dangling("app", a, cluster.apps.iter().map(|x| x.name.value.as_str()), diags);
                    }
                }
            }
        }
    }
}
