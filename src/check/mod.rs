//! Check: the invariants of the domain, run over the resolved [`Fleet`]. One file per rule
//! family; every check runs, whatever the others found, and only pushes diagnostics: the
//! model is never changed here. Each diagnostic's help says why the rule exists (its R-id).
//! The tables the rules hold a fleet against (versions, providers, extensions, schemas, the
//! key-material recognizer) are [`crate::upstream`]'s; `check` and `emit` stand side by side
//! on it and never import each other (`tests/layering.rs`).

mod argocd;
mod backup;
mod capi;
mod capi_versions;
mod cni;
mod discovery;
pub mod disk;
mod downgrades;
mod endpoint_port;
mod extensions;
mod identity;
mod install_disk;
mod key_material;
mod links;
mod machines;
pub mod metal;
mod names;
mod namespaces;
mod network;
mod nodes;
mod patches;
/// The identity and credential fields a patch may not set (R14; the property test of
/// tests/patch_property.rs leaves them out of the fields it generates).
pub use patches::SECRET_FIELDS;
mod quorum;
mod references;
mod runtimes;
mod secrets_version;
mod stand_in;
mod state_moved;
mod talos;
mod tofu;
mod upgrade_path;
mod versions;

use crate::diag::Diagnostics;
use crate::model::Fleet;

/// `fleetc check --base REV`: version changes a running cluster can take (R26, F1): no
/// skipped minor, no workers ahead, no downgrade; no change that replaces a cluster's
/// identity (R14) or moves an environment's OpenTofu state (R28).
pub fn check_upgrade_path(old: &Fleet, new: &Fleet, diags: &mut Diagnostics) {
    upgrade_path::check(old, new, diags);
    downgrades::check(old, new, diags);
    secrets_version::check(old, new, diags);
    state_moved::check(old, new, diags);
}

/// Key material in any string or comment of fleet.kdl (F11, R14), over the syntax tree and
/// the lossless token stream of `text`: it runs whether or not the model can be resolved.
pub fn run_tree(nodes: &[crate::syntax::Node], file: crate::diag::FileId, text: &str, diags: &mut Diagnostics) {
    key_material::check_tree(nodes, diags);
    key_material::check_comments(file, text, diags);
}

/// Runs every check.
pub fn run(fleet: &Fleet, diags: &mut Diagnostics) {
    names::check(fleet, diags);
    references::check(fleet, diags);
    quorum::check(fleet, diags);
    network::check(fleet, diags);
    nodes::check(fleet, diags);
    identity::check(fleet, diags);
    links::check(fleet, diags);
    versions::check(fleet, diags);
    runtimes::check(fleet, diags);
    discovery::check(fleet, diags);
    extensions::check(fleet, diags);
    cni::check(fleet, diags);
    talos::check(fleet, diags);
    patches::check(fleet, diags);
    argocd::check(fleet, diags);
    capi::check(fleet, diags);
    tofu::check(fleet, diags);
    endpoint_port::check(fleet, diags);
    disk::check(fleet, diags);
    install_disk::check(fleet, diags);
    machines::check(fleet, diags);
    metal::check(fleet, diags);
    stand_in::check(fleet, diags);
    namespaces::check(fleet, diags);
    backup::check(fleet, diags);
}

#[cfg(test)]
mod tests {
    use crate::compile::{Compilation, MapLoader, compile};
    use crate::diag::codes;
    use crate::upstream::key_material::Key;
    use crate::upstream::key_material::tests::samples;

    /// A fleet with `key` in a comment of fleet.kdl, in a string of a Talos patch
    /// (`p/key.yaml`, `machine.nodeLabels.note`) and in a vendored manifest's ConfigMap.
    fn with_key(key: &str) -> Compilation {
        with_key_in(key, false)
    }

    /// [`with_key`], or with `key` in YAML comments of the patch and of the manifest
    /// (`in_comments`): both files reach out/ as they are, comments included.
    fn with_key_in(key: &str, in_comments: bool) -> Compilation {
        let (comment, quoted) = if in_comments {
            (key.lines().map(|l| format!("# {l}\n")).collect::<String>(), "plain".to_owned())
        } else {
            (String::new(), serde_json::to_string(key).unwrap())
        };
        let manifest = format!(
            "{comment}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keys\n  namespace: kube-system\ndata:\n  key: {quoted}\n"
        );
        let text = format!(
            r#"/* the old key: {key} */
fleet "demo" {{
    talos "v1.13.9"
    kubernetes "1.36.2"
    schematic "plain"
    addon "keys" version="1.0.0" manifest="vendor/keys.yaml" sha256="{}"
    environment "staging" {{
        scaleway project="11111111-2222-3333-4444-555555555555" region="fr-par" zone="fr-par-2" {{
            size "small" type="PRO2-XS"
        }}
        state bucket="demo-tofu-state"
        network "10.10.0.0/22"
        cluster "main" {{
            endpoint address="10.10.0.10"
            pool-defaults schematic="plain" size="small"
            addons "keys"
            patch "p/key.yaml"
            control-plane count=3
        }}
    }}
}}
"#,
            crate::digest::sha256_hex(manifest.as_bytes())
        );
        let mut loader = MapLoader::default();
        loader.files.insert("p/key.yaml".into(), format!("{comment}machine:\n  nodeLabels:\n    note: {quoted}\n"));
        loader.files.insert("vendor/keys.yaml".into(), manifest);
        compile("fleet.kdl", &text, &loader)
    }

    fn messages(c: &Compilation, code: &codes::Code) -> Vec<String> {
        c.diags.iter().filter(|d| d.code.name == code.name).map(|d| d.message.clone()).collect()
    }

    /// How the patch and manifest checks name a shape: a PEM block in the words they always
    /// used, every other shape as the recognizer describes it.
    fn named(key: Key) -> &'static str {
        if key == Key::Pem { "a PEM private key" } else { key.describe() }
    }

    #[test]
    fn a_private_key_in_a_fleet_kdl_comment_is_refused() {
        for (key, text) in samples() {
            let found = messages(&with_key(&text), &codes::KEY_MATERIAL_IN_FLEET);
            assert_eq!(found, [format!("a comment of fleet.kdl holds key material: {}", key.describe())], "{key:?}");
        }
    }

    #[test]
    fn a_private_key_in_a_patch_file_is_refused() {
        for (key, text) in samples() {
            let found = messages(&with_key(&text), &codes::PATCH_SECRET);
            assert_eq!(found, [format!("`p/key.yaml` holds {} (`machine.nodeLabels.note`)", named(key))], "{key:?}");
        }
    }

    #[test]
    fn a_private_key_in_a_vendored_manifest_is_refused() {
        for (key, text) in samples() {
            let found = messages(&with_key(&text), &codes::ADDON_KEY_MATERIAL);
            let what = named(key);
            assert_eq!(
                found,
                [format!("add-on `keys` embeds key material: `ConfigMap kube-system/keys` holds {what}")]
            );
        }
    }

    #[test]
    fn a_private_key_in_a_comment_of_a_patch_file_or_a_vendored_manifest_is_refused() {
        for (key, text) in samples() {
            let c = with_key_in(&text, true);
            assert_eq!(
                messages(&c, &codes::PATCH_SECRET),
                [format!("`p/key.yaml` holds {} outside its values (in a comment)", key.describe())],
                "{key:?}"
            );
            assert_eq!(
                messages(&c, &codes::ADDON_KEY_MATERIAL),
                [format!("add-on `keys` embeds key material: `a comment of the manifest` holds {}", named(key))],
                "{key:?}"
            );
        }
    }
}
