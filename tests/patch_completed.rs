//! Patches whose effect keeps fleetc's rule in the config Talos merges (issue 27): a device-path
//! `machine.install.disk` beside the `machine.install.diskSelector` fleetc writes is inert
//! (siderolabs/talos v1.13.9 `internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer_tasks.go`
//! l.1518-1539: the selector's match wins), so it is a warning; with the selector deleted, the
//! device path is the install disk and R15 refuses it. A patch restating the EPHEMERAL
//! `VolumeConfig` without its selector is written into out/ with each pool's selector added
//! (`emit::talos::patches::completed`; `pkg/machinery/cel/cel.go` `Expression.Merge` would empty it).

use fleetc::compile::{Compilation, MapLoader, compile};
use fleetc::diag::codes;

const FLEET: &str = r#"fleet "demo" {
    talos "v1.13.9"
    kubernetes "1.36.2"
    schematic "s" {
        extension "siderolabs/gvisor"
    }
    environment "staging" {
        scaleway project="11111111-2222-3333-4444-555555555555" region="fr-par" zone="fr-par-2" {
            size "small" type="PRO2-XS"
        }
        state bucket="demo-tofu-state"
        network "10.10.0.0/22"
        gateway "51.15.200.10"
        admin-ranges "203.0.113.0/24"
        recipients "age1wh7qxmt0740e28qvq0jjz5ylyxfctxtm4skkffn6kers9dln89eswx42s2"
        cluster "main" {
            endpoint address="10.10.0.10"
            pool-defaults schematic="s" size="small"
            patch "p/patch.yaml"
            control-plane count=3
            pool "system" count=2 ephemeral-min-size="50GB"
        }
    }
}
"#;

fn build(patch: &str) -> (Compilation, String) {
    let mut l = MapLoader::default();
    l.files.insert("p/patch.yaml".into(), patch.into());
    let c = compile("fleet.kdl", FLEET, &l);
    let rendered = fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN);
    (c, rendered)
}

fn codes_of(c: &Compilation) -> Vec<&'static str> {
    c.diags.iter().map(|d| d.code.name).collect()
}

#[test]
fn a_device_path_beside_fleetc_s_disk_selector_is_a_warning() {
    let (c, r) = build("machine:\n  install:\n    disk: /dev/sda\n");
    assert!(!c.diags.has_errors(), "{r}");
    assert_eq!(codes_of(&c), [codes::PATCH_INSTALL_DISK_UNUSED.name], "{r}");
    assert!(r.contains("v1alpha1_sequencer_tasks.go") && r.contains("R15"), "{r}");
    assert!(c.artifacts.is_some());
}

#[test]
fn a_device_path_with_fleetc_s_selector_deleted_undoes_r15() {
    let (c, r) = build("machine:\n  install:\n    disk: /dev/sda\n    diskSelector:\n      $patch: delete\n");
    assert!(c.diags.has_errors(), "{r}");
    let codes = codes_of(&c);
    assert!(codes.contains(&codes::PATCH_UNDOES_RULE.name), "{r}");
    assert!(!codes.contains(&codes::PATCH_INSTALL_DISK_UNUSED.name), "{r}");
}

/// The patch's copy in `pool`'s patch directory.
fn written(c: &Compilation, dir: &str) -> String {
    let set = c.artifacts.as_ref().expect("the fleet builds");
    let path = set.paths().find(|p| p.starts_with(dir) && p.ends_with("-patch.yaml")).expect("the patch is written");
    String::from_utf8(set.get(path).unwrap().to_vec()).unwrap()
}

#[test]
fn an_ephemeral_volume_restated_without_its_selector_is_written_with_each_pool_s() {
    let (c, r) = build("apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nprovisioning:\n  maxSize: 40GB\n");
    assert!(!c.diags.has_errors(), "{r}");
    assert_eq!(codes_of(&c), [codes::PATCH_SELECTOR_COMPLETED.name], "{r}");
    assert!(r.contains("cel.go") && r.contains("R15"), "{r}");
    // Each pool's copy gets its own pool's selector (the control plane's default minimum, the
    // system pool's 50GB), and keeps the patch's maxSize.
    let cp = written(&c, "talos/staging/main/patches/controlplane/");
    let sys = written(&c, "talos/staging/main/patches/workers/system/");
    for (text, pool) in [(&cp, "controlplane"), (&sys, "system")] {
        assert!(text.contains("maxSize: 40GB") && text.contains("diskSelector:"), "{pool}:\n{text}");
    }
    assert!(sys.contains("match: \"!system_disk && disk.size >= 50u * GB\""), "{sys}");
    assert_ne!(cp, sys, "the control plane's selector is its own");
}

#[test]
fn an_ephemeral_volume_with_its_own_selector_or_an_r15_override_is_not_completed() {
    let own = "apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nprovisioning:\n  diskSelector:\n    match: system_disk\n";
    let (c, r) = build(own);
    assert!(codes_of(&c).contains(&codes::PATCH_OWNED_FIELD.name), "{r}");
    let over = FLEET.replace(r#"patch "p/patch.yaml""#, r#"patch "p/patch.yaml" overrides="R15""#);
    let mut l = MapLoader::default();
    l.files.insert(
        "p/patch.yaml".into(),
        "apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nprovisioning:\n  maxSize: 40GB\n".into(),
    );
    let c = compile("fleet.kdl", &over, &l);
    assert!(!c.diags.has_errors());
    assert!(codes_of(&c).contains(&codes::PATCH_OVERRIDE.name));
    assert!(!codes_of(&c).contains(&codes::PATCH_SELECTOR_COMPLETED.name));
    assert!(!written(&c, "talos/staging/main/patches/controlplane/").contains("diskSelector"));
}
