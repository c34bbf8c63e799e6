//! R17 and F6: a declared runtime needs its system extension in every pool's schematic, and
//! Kata needs hardware virtualization on the instance type.

use std::collections::BTreeSet;

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::{Fleet, Runtime};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    // Pools often share an inherited value (one `pool-defaults` line): one report per
    // written place, not one per pool.
    let mut reported: BTreeSet<(Runtime, Span)> = BTreeSet::new();
    for (env, cluster) in fleet.clusters() {
        for runtime in &cluster.runtimes {
            for pool in cluster.pools() {
                let Some(schematic) = fleet.schematic(&pool.schematic.value) else { continue };
                let ext = runtime.value.extension();
                if !schematic.has_extension(ext) && reported.insert((runtime.value, pool.schematic.span)) {
                    diags.push(
                        Diagnostic::new(
                            &codes::RUNTIME_EXTENSION,
                            format!(
                                "runtime `{}` of cluster `{}` needs `{ext}`, which schematic `{}` lacks",
                                runtime.value.as_str(),
                                cluster.name,
                                schematic.name
                            ),
                        )
                        .at(pool.schematic.span)
                        .label(format!("installs no `{ext}`"))
                        .related(runtime.span, "runtime declared here")
                        .help(format!(
                            "add `extension \"{ext}\"` to schematic `{}`: the installer must carry the extension, or the runtime's handler is missing, and the standard installer strips it at the next upgrade (R17)",
                            schematic.name
                        )),
                    );
                }
                let Some(size) = env.size(&pool.size.value) else { continue };
                if runtime.value == Runtime::Kata && !size.kvm && reported.insert((runtime.value, pool.size.span)) {
                    diags.push(
                        Diagnostic::new(
                            &codes::KATA_KVM,
                            format!(
                                "Kata needs hardware virtualization, which size `{}` does not declare (cluster `{}`)",
                                size.name, cluster.name
                            ),
                        )
                        .at(pool.size.span)
                        .label("no `kvm=#true` on this size")
                        .related(runtime.span, "kata declared here"),
                    );
                }
            }
        }
    }
}
