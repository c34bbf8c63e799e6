//! Which providers a root needs, computed from what is emitted (R4): the type prefix of every
//! `resource`, `data` and `ephemeral` block of the root and of the modules it calls. A root
//! pins exactly those, no more: an unused provider is a download on every cold `init`.

use std::collections::{BTreeMap, BTreeSet};

use crate::emit::hcl::{Body, Expr, Item};

/// A provider fleetc may emit resources for.
pub struct ProviderPin {
    /// Local name, and the prefix of its resource types.
    pub name: &'static str,
    pub source: &'static str,
    /// Version constraint written in every root that uses the provider.
    pub version: &'static str,
}

/// Every provider fleetc knows, by local name. The versions are the floors of the features
/// fleetc emits (docs/tofu.md, "Providers"): write-only attributes on Scaleway, the
/// `on_destroy` attribute and kubeconfig resource of the Talos provider 0.11, the ephemeral
/// `random_password`, and `proxmox_download_file` of bpg/proxmox (v0.100.0, which also moves
/// the state of the deprecated `proxmox_virtual_environment_download_file`).
pub const PROVIDERS: &[ProviderPin] = &[
    ProviderPin { name: "proxmox", source: "bpg/proxmox", version: "~> 0.100" },
    ProviderPin { name: "random", source: "hashicorp/random", version: "~> 3.7" },
    ProviderPin { name: "scaleway", source: "scaleway/scaleway", version: "~> 2.68" },
    ProviderPin { name: "talos", source: "siderolabs/talos", version: crate::upstream::talos::TALOS_PROVIDER_PIN },
];

/// The talos provider as a consumer of fleetc's Talos documents: the release its pin allows
/// (`~> 0.11.0`: every 0.11.x), which the versions table maps to the machinery it runs.
pub fn talos_consumer() -> crate::upstream::talos::Consumer {
    crate::upstream::talos::tofu_consumer()
}

/// Types that belong to OpenTofu itself (`terraform_remote_state`, `terraform_data`).
const BUILTIN: &str = "terraform";

pub fn pin(name: &str) -> Option<&'static ProviderPin> {
    PROVIDERS.iter().find(|p| p.name == name)
}

/// The provider of a resource or data source type: the text before the first `_`.
pub fn provider_of(resource_type: &str) -> &str {
    resource_type.split('_').next().unwrap_or(resource_type)
}

/// Providers used directly by the blocks of `bodies` (not through modules).
pub fn used_in<'a>(bodies: impl IntoIterator<Item = &'a Body>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for body in bodies {
        for item in body.items() {
            if let Item::Block(b) = item
                && matches!(b.ident(), "resource" | "data" | "ephemeral")
                && let Some(t) = b.labels().first()
            {
                let p = provider_of(t);
                if p != BUILTIN {
                    out.insert(p.to_owned());
                }
            }
        }
    }
    out
}

/// The modules called by `bodies`: the last path segment of each `module` block's `source`.
pub fn modules_called<'a>(bodies: impl IntoIterator<Item = &'a Body>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for body in bodies {
        for item in body.items() {
            if let Item::Block(b) = item
                && b.ident() == "module"
            {
                for inner in b.body().items() {
                    if let Item::Attr(a) = inner
                        && a.name() == "source"
                        && let Expr::Str(s) = a.value()
                        && let Some(name) = s.rsplit('/').next()
                    {
                        out.insert(name.to_owned());
                    }
                }
            }
        }
    }
    out
}

/// Providers of a root: its own blocks plus those of every module it calls (modules do not
/// call modules here).
pub fn used_by_root<'a>(
    bodies: impl IntoIterator<Item = &'a Body> + Clone,
    modules: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeSet<String> {
    let mut used = used_in(bodies.clone());
    for m in modules_called(bodies) {
        if let Some(ps) = modules.get(&m) {
            used.extend(ps.iter().cloned());
        }
    }
    used
}

/// `required_providers { name = { source, version } }` for `used`; modules leave out the
/// version (roots pin it) but must name the source of any provider outside `hashicorp/`.
pub fn required_providers(body: &mut Body, used: &BTreeSet<String>, with_version: bool) -> Result<(), String> {
    let mut entries = Vec::new();
    for name in used {
        let p = pin(name).ok_or_else(|| format!("no pinned version for provider `{name}`"))?;
        let mut fields = vec![("source".to_owned(), Expr::from(p.source))];
        if with_version {
            fields.push(("version".to_owned(), Expr::from(p.version)));
        }
        entries.push((name.clone(), Expr::Object(fields)));
    }
    body.block("required_providers", &[], |b| {
        for (k, v) in entries {
            b.attr(k, v);
        }
    });
    Ok(())
}
