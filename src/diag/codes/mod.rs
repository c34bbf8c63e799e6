//! The table of diagnostic codes. One entry per code: its stable name, default severity,
//! the rule of the domain it enforces, a default help, and the long explanation that
//! `fleetc explain CODE` prints (what it does, why, an example, what to write instead).
//! Each code is declared in the file of its family, beside the others of that family
//! (`fleet::quorum::even-control-plane` in `quorum.rs`), and listed once in [`ALL`].
//!
//! Codes are never renamed or reused; a retired code stays in its family's file, marked removed.
//! A new code goes into its family's file and at the end of [`ALL`]; a new family is a new file,
//! a `mod` line here and its `FAMILY` in the test `all_lists_every_declared_code_once`.

use super::Severity;

#[derive(Debug, PartialEq, Eq)]
pub struct Code {
    /// Stable, path-like name: `fleet::<family>::<what>`.
    pub name: &'static str,
    pub severity: Severity,
    /// The domain rule or upstream fact this code enforces (`R29`, `F5`), if any.
    pub rule: Option<&'static str>,
    /// Default help; a diagnostic may replace it with a more precise one.
    pub help: Option<&'static str>,
    /// Long explanation in four parts: what, why, example, instead.
    pub explanation: &'static str,
}

/// Declares a family's codes, one `pub static` each, and for the tests `FAMILY`: the module's
/// path and its codes in file order, so that a code missing from [`ALL`] fails a test.
macro_rules! codes {
    ($( $ident:ident = $name:literal, $sev:ident, $rule:expr, $help:expr, $expl:literal; )*) => {
        $(
            pub static $ident: $crate::diag::Code = $crate::diag::Code {
                name: $name,
                severity: $crate::diag::Severity::$sev,
                rule: $rule,
                help: $help,
                explanation: $expl,
            };
        )*
        #[cfg(test)]
        pub(super) static FAMILY: (&str, &[&$crate::diag::Code]) = (module_path!(), &[$(&$ident),*]);
    };
}

mod addons;
mod argocd;
mod backup;
mod capi;
mod discovery;
mod disk;
mod emit;
mod fmt;
mod iam;
mod import;
mod internal;
mod limits;
mod metal;
mod model;
mod names;
mod network;
mod node;
mod quorum;
mod runtimes;
mod schematic;
mod secrets;
mod syntax;
mod talos;
mod tofu;
mod upgrade;
mod versions;

pub use self::{
    addons::*, argocd::*, backup::*, capi::*, discovery::*, disk::*, emit::*, fmt::*, iam::*, import::*, internal::*,
    limits::*, metal::*, model::*, names::*, network::*, node::*, quorum::*, runtimes::*, schematic::*, secrets::*,
    syntax::*, talos::*, tofu::*, upgrade::*, versions::*,
};

/// Every code, in the order the codes were added: `fleetc explain` lists them so.
pub static ALL: &[&Code] = &[
    &syntax::SYNTAX,
    &limits::FILE_TOO_LARGE,
    &limits::TOO_DEEP,
    &limits::LINE_TOO_LONG,
    &limits::TOO_MANY_NODES,
    &limits::TOO_MANY_DIAGNOSTICS,
    &limits::COUNT_TOO_LARGE,
    &model::UNKNOWN_NODE,
    &model::UNKNOWN_PROPERTY,
    &model::UNEXPECTED_ARGUMENT,
    &model::WRONG_TYPE,
    &model::MISSING_VALUE,
    &model::DUPLICATE_NAME,
    &model::PVE_NODE_UNLISTED,
    &model::DANGLING_REFERENCE,
    &model::INVALID_VALUE,
    &names::INVALID_NAME,
    &model::INHERITANCE_CYCLE,
    &model::FILE_UNREADABLE,
    &model::CHECKSUM_MISMATCH,
    &iam::IAM,
    &talos::DEVICE_PATH,
    &talos::PATCH_INVALID,
    &talos::PATCH_JSON6902,
    &talos::PATCH_SCHEMA,
    &emit::SCHEMA_REJECTED,
    &talos::PATCH_UNDOES_RULE,
    &talos::PATCH_OVERRIDE,
    &talos::PATCH_SECRET,
    &addons::ADDON_KUBERNETES_UNTESTED,
    &secrets::KEY_MATERIAL_IN_FLEET,
    &talos::ADDON_KEY_MATERIAL,
    &talos::REDUNDANT_CERT_SAN,
    &talos::EPHEMERAL_ABOVE_DATA_DISK,
    &talos::SYSTEM_DISK_NOT_SMALLER,
    &talos::KUBE_PROXY_KEPT,
    &talos::REBOOT_APPLY_MODE,
    &quorum::EVEN_CONTROL_PLANE,
    &quorum::SMALL_CONTROL_PLANE,
    &network::ADDRESS_OUTSIDE_NETWORK,
    &network::DUPLICATE_ADDRESS,
    &network::IP_POOL_TOO_SMALL,
    &network::CIDR_OVERLAP,
    &versions::KUBERNETES_UNSUPPORTED,
    &versions::TALOS_UNSUPPORTED,
    &versions::TALOS_NEWER_THAN_TABLE,
    &runtimes::RUNTIME_EXTENSION,
    &runtimes::KATA_KVM,
    &discovery::DISCOVERY_PRIVATE,
    &schematic::SCHEMATIC_UNENCODABLE,
    &argocd::NO_GITOPS,
    &argocd::APP_CYCLE,
    &argocd::WAVE_BEFORE_DEPENDENCY,
    &argocd::APP_PATH_MISSING,
    &argocd::CHART_UNPINNED,
    &argocd::APPLICATION_NAME_CLASH,
    &argocd::NO_SECRET_STORE,
    &argocd::NO_SECRET_OPERATOR,
    &argocd::WAITS_FOR_MANUAL,
    &argocd::NO_STORE_CREDENTIAL,
    &capi::CAPI_PROVIDER_UNSUPPORTED,
    &capi::CAPI_KUBERNETES_UNSUPPORTED,
    &capi::CAPI_IDENTITY_NOT_SEALED,
    &capi::CAPI_INFRASTRUCTURE_UNSUPPORTED,
    &capi::CAPI_WORKER_SKEW,
    &capi::CAPI_NO_PROVIDER_ID,
    &capi::CAPI_PROVIDER_COMBINATION,
    &capi::CAPI_TEMPLATE_NOT_CREATED,
    &capi::CAPI_MULTIDOC_PATCH,
    &tofu::TOFU_SHARED_STATE,
    &tofu::TOFU_NO_GATEWAY,
    &tofu::TOFU_NO_ADMIN_RANGES,
    &tofu::TOFU_NO_ADDRESS,
    &fmt::FMT_CANNOT_REPRINT,
    &upgrade::UPGRADE_KUBERNETES_MINOR_SKIPPED,
    &upgrade::UPGRADE_WORKERS_AHEAD,
    &upgrade::UPGRADE_TALOS_MINOR_SKIPPED,
    &names::INVALID_LABEL,
    &names::DUPLICATE_KEY,
    &schematic::UNKNOWN_EXTENSION,
    &talos::TWO_CNIS,
    &network::ROUTER_AS_TALOS_ADDRESS,
    &secrets::RECIPIENTS_INHERITED,
    &model::URL_NOT_ADDRESS,
    &names::INVALID_IDENTIFIER,
    &model::NOT_A_URL,
    &model::RENAMED,
    &syntax::KDL_V1,
    &syntax::UNCLOSED_BLOCK,
    &upgrade::UPGRADE_KUBERNETES_DOWNGRADE,
    &upgrade::UPGRADE_TALOS_DOWNGRADE,
    &upgrade::UPGRADE_PROVIDER_DOWNGRADE,
    &disk::DISK_SECURE_BOOT_UNAVAILABLE,
    &disk::DISK_KEY_SOURCE_UNAVAILABLE,
    &disk::DISK_TPM_NEEDS_SECURE_BOOT,
    &disk::DISK_STATIC_KEY_PERSISTED,
    &disk::DISK_KEY_SETTINGS,
    &internal::INTERNAL,
    &node::NODE_COUNT,
    &node::INSTALL_DISK_TWICE,
    &node::INSTALL_DISK_PATH,
    &node::NODE_HOSTNAME_TWICE,
    &node::NODE_MANAGED,
    &metal::METAL_UNDECLARED_MACHINE,
    &node::ADDRESS_NOT_ON_LINK,
    &talos::PATCH_OWNED_FIELD,
    &talos::PATCH_DROPS_SELECTOR,
    &talos::PATCH_STALE_OVERRIDE,
    &node::IDENTITY_TWICE,
    &node::GATEWAY_OFF_LINK,
    &metal::VIP_WITHOUT_LINK,
    &secrets::SEALED_NOT_IMPORTED,
    &talos::PATCH_DEPRECATED,
    &talos::PATCH_DEPRECATED_CONFLICT,
    &talos::PATCH_EMPTY,
    &talos::PATCH_KERNEL_ARGS_UKI,
    &talos::PATCH_TWICE,
    &talos::PATCH_DUPLICATE_DOCUMENT,
    &talos::PATCH_LINK_MTU,
    &versions::TALOS_RELEASE_UNKNOWN,
    &versions::KUBERNETES_RELEASE_UNKNOWN,
    &node::INSTALL_DISK_SIZE,
    &node::INSTALL_DISK_SELECTOR,
    &talos::MACHINE_BELOW_MINIMUM,
    &names::NODE_RESTRICTED_LABEL,
    &argocd::APP_VALUES_MISSING,
    &versions::TALOS_PRERELEASE,
    &talos::PATCH_INSTALL_DISK_UNUSED,
    &talos::PATCH_SELECTOR_COMPLETED,
    &capi::CAPI_PROVIDER_UNTESTED,
    &upgrade::UPGRADE_IDENTITY_REPLACED,
    &upgrade::UPGRADE_STATE_MOVED,
    &tofu::TOFU_ENDPOINT_PORT,
    &metal::DISK_UNIDENTIFIED,
    &metal::LINKS_WITHOUT_NAMESERVERS,
    &node::LINK_NOT_ON_VM,
    &node::MAINTENANCE_ADDRESS_ON_VM,
    &node::EPHEMERAL_DISK_ON_VM,
    &import::IMPORT_NOT_TALHELPER,
    &import::IMPORT_INVALID,
    &import::IMPORT_UNSET_VARIABLE,
    &import::IMPORT_FILE_UNREADABLE,
    &import::IMPORT_NOT_TOPF,
    &emit::SCHEMA_MISSING,
    &addons::ADDON_STAND_IN,
    &addons::ADDON_NAMESPACE_MISSING,
    &backup::BACKUP_SCHEDULE_INVALID,
    &backup::BACKUP_CREDENTIALS_NOT_SEALED,
    &backup::BACKUP_NO_RECIPIENT,
    &backup::BACKUP_ONE_RECIPIENT,
    &backup::BACKUP_NOT_DELIVERED,
    &network::ENDPOINT_NAME_NOT_METAL,
];

/// Looks a code up by its full name, or by its last segment (`even-control-plane`).
pub fn lookup(name: &str) -> Option<&'static Code> {
    ALL.iter().copied().find(|c| c.name == name).or_else(|| {
        let mut found = ALL.iter().copied().filter(|c| c.name.rsplit("::").next() == Some(name));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut names: Vec<&str> = ALL.iter().map(|c| c.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate code names");
        for c in ALL {
            assert!(c.name.starts_with("fleet::"), "{}", c.name);
            assert!(c.explanation.contains("## What it does"), "{} has no explanation", c.name);
            assert!(c.explanation.contains("## Instead"), "{} says not what to write instead", c.name);
            if let Some(rule) = c.rule {
                assert!(
                    c.explanation.contains(rule) || c.help.is_some_and(|h| h.contains(rule)),
                    "{} cites {rule} nowhere",
                    c.name
                );
            }
        }
    }

    #[test]
    fn lookup_by_suffix() {
        assert_eq!(lookup("even-control-plane").map(|c| c.name), Some(EVEN_CONTROL_PLANE.name));
        assert!(lookup("nope").is_none());
    }

    #[test]
    fn all_lists_every_declared_code_once() {
        let families = [
            addons::FAMILY,
            argocd::FAMILY,
            backup::FAMILY,
            capi::FAMILY,
            discovery::FAMILY,
            disk::FAMILY,
            emit::FAMILY,
            fmt::FAMILY,
            import::FAMILY,
            iam::FAMILY,
            internal::FAMILY,
            limits::FAMILY,
            metal::FAMILY,
            model::FAMILY,
            names::FAMILY,
            network::FAMILY,
            node::FAMILY,
            quorum::FAMILY,
            runtimes::FAMILY,
            schematic::FAMILY,
            secrets::FAMILY,
            syntax::FAMILY,
            talos::FAMILY,
            tofu::FAMILY,
            upgrade::FAMILY,
            versions::FAMILY,
        ];
        let mut declared = 0;
        for (module, codes) in families {
            let family = module.rsplit("::").next();
            for &c in codes {
                assert_eq!(c.name.split("::").nth(1), family, "{} is declared in {module}", c.name);
                let listed = ALL.iter().filter(|&&a| std::ptr::eq(a, c)).count();
                assert_eq!(listed, 1, "{} is listed {listed} times in ALL", c.name);
            }
            declared += codes.len();
        }
        assert_eq!(declared, ALL.len(), "ALL lists a code no family declares");
    }
}
