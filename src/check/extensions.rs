//! Schematic extensions are official Talos system extensions of the cluster's Talos minor
//! (R17): the Image Factory builds installers only from those, and an unknown name would fail
//! there, during `fleetc apply`, after the schematic ID in out/ was computed from it. The
//! table is data (`upstream::extensions`, with its sources); a name is checked against the
//! minor of every cluster whose pools run the schematic.

use crate::diag::{Diagnostic, Diagnostics, codes, did_you_mean};
use crate::model::Fleet;
use crate::upstream::extensions::{minors_with, official};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for (_, cluster) in fleet.clusters() {
        let minor = cluster.talos.value.minor_version();
        // An unknown Talos minor is reported by `versions`.
        let Some(names) = official(minor) else { continue };
        let mut seen = Vec::new();
        for pool in cluster.pools() {
            let Some(s) = fleet.schematic(&pool.schematic.value) else { continue };
            if seen.contains(&s.name.value) {
                continue;
            }
            seen.push(s.name.value.clone());
            for ext in &s.extensions {
                let talos = format!("{}.{}", minor.0, minor.1);
                let Some(short) = ext.value.strip_prefix("siderolabs/") else {
                    let bare = ext.value.rsplit('/').next().unwrap_or(&ext.value);
                    let help = if names.contains(&bare) {
                        format!("official extensions are named `siderolabs/<name>`: write `siderolabs/{bare}`")
                    } else {
                        "the Image Factory offers official extensions only, named `siderolabs/<name>` (github.com/siderolabs/extensions); a third-party extension needs an image of your own, which fleetc does not build (R17)".to_owned()
                    };
                    diags.push(
                        Diagnostic::new(
                            &codes::UNKNOWN_EXTENSION,
                            format!("`{}` is not an official Talos extension", ext.value),
                        )
                        .at(ext.span)
                        .label("not `siderolabs/…`")
                        .help(help),
                    );
                    continue;
                };
                if names.contains(&short) {
                    continue;
                }
                let elsewhere = minors_with(short);
                let help = if !elsewhere.is_empty() {
                    let list: Vec<String> = elsewhere.iter().map(|(a, b)| format!("{a}.{b}")).collect();
                    format!(
                        "`{}` is an official extension of Talos {} only; the Image Factory has no such extension for Talos {talos} (R17)",
                        ext.value,
                        list.join(", ")
                    )
                } else if let Some(m) = did_you_mean(short, names.iter().copied()) {
                    format!(
                        "did you mean `siderolabs/{m}`? The Image Factory builds installers only from official extensions, so this one would fail at `fleetc apply` (R17)"
                    )
                } else {
                    format!(
                        "the official extensions of Talos {talos} are listed at github.com/siderolabs/extensions (tag v{talos}.x); the Image Factory knows no other (R17)"
                    )
                };
                diags.push(
                    Diagnostic::new(
                        &codes::UNKNOWN_EXTENSION,
                        format!(
                            "`{}` is not an official extension of Talos {talos} (schematic `{}`, cluster `{}`)",
                            ext.value, s.name.value, cluster.name.value
                        ),
                    )
                    .at(ext.span)
                    .label("unknown extension")
                    .related(cluster.talos.span, "Talos version")
                    .help(help),
                );
            }
        }
    }
}
