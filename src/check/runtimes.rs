//! R17 and F6: a declared runtime needs its system extension in every pool's schematic, and
//! Kata needs hardware virtualization on the instance type.

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Fleet, Runtime};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    for (env, cluster) in fleet.clusters() {
        for runtime in &cluster.runtimes {
            for pool in cluster.pools() {
                let Some(schematic) = fleet.schematic(&pool.schematic.value) else { continue };
                let ext = runtime.value.extension();
                if !schematic.has_extension(ext) {
                    diags.push(
                        Diagnostic::new(
                            &codes::RUNTIME_EXTENSION,
                            format!("runtime `{}` needs `{ext}`, which schematic `{}` (pool `{}` of cluster `{}`) lacks", runtime.value.as_str(), schematic.name, pool.name, cluster.name),
                        )
                        .at(pool.schematic.span)
                        .label(format!("no `{ext}` here"))
                        .related(runtime.span, "runtime declared here")
                        .help(format!(
                            "add `extension \"{ext}\"` to schematic `{}`: the installer must carry the extension, or the runtime's handler is missing and the standard installer strips it at the next upgrade (R17)",
                            schematic.name
                        )),
                    );
                }
                if runtime.value == Runtime::Kata
                    && let Some(size) = env.size(&pool.size.value)
                    && !size.kvm
                {
                    diags.push(
                                Diagnostic::new(
                                    &codes::KATA_KVM,
                                    format!("Kata needs hardware virtualization, which size `{}` does not declare (pool `{}` of cluster `{}`)", size.name, pool.name, cluster.name),
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
