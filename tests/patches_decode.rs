//! Patches as Talos reads them (issue 27, deliverable 2): scalars as Talos's YAML decoder takes
//! them (go.yaml.in/yaml/v4 v4.0.0-rc.4 `internal/libyaml/constructor.go`, the decoder of
//! siderolabs/talos v1.13.9 `pkg/machinery/config/configloader/internal/decoder/decoder.go`),
//! the deprecated v1alpha1 fields the machinery still decodes (schemas/talos/<minor>/
//! deprecated.json), RFC 6902 patches converted to a strategic merge, and one diagnostic per
//! file-level mistake.

use fleetc::compile::{MapLoader, compile};

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
            PATCHES
            control-plane count=3
            pool "system" count=2
        }
    }
}
"#;

/// The codes `check` reports for a cluster with these patch files (each listed once, in order).
fn codes(files: &[(&str, &str)]) -> Vec<String> {
    codes_with(files, files.iter().map(|(n, _)| *n).collect())
}

fn codes_with(files: &[(&str, &str)], listed: Vec<&str>) -> Vec<String> {
    let lines: Vec<String> = listed.iter().map(|n| format!("patch \"p/{n}\"")).collect();
    let fleet = FLEET.replace("PATCHES", &lines.join("\n            "));
    let mut l = MapLoader::default();
    for (n, t) in files {
        l.files.insert(format!("p/{n}"), (*t).to_owned());
    }
    let c = compile("fleet.kdl", &fleet, &l);
    c.diags.iter().map(|d| d.code.name.to_owned()).collect()
}

fn converted(text: &str) -> String {
    let fleet = FLEET.replace("PATCHES", "patch \"p/a.yaml\"");
    let mut l = MapLoader::default();
    l.files.insert("p/a.yaml".into(), text.into());
    let c = compile("fleet.kdl", &fleet, &l);
    let rendered = fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN);
    assert!(!c.diags.has_errors(), "{rendered}");
    let fleet = c.fleet.unwrap();
    let cl = fleet.environment("staging").unwrap().cluster("main").unwrap();
    let p = &cl.pools().next().unwrap().patches[0];
    p.file.emitted().to_owned()
}

#[test]
fn a_scalar_into_a_string_field_is_its_text_as_talos_decodes_it() {
    let tuning = "machine:\n  sysctls:\n    vm.dirty_ratio: 15\n    vm.swappiness: 0x0a\ncluster:\n  apiServer:\n    extraArgs:\n      enable-aggregator-routing: true\n";
    assert_eq!(codes(&[("t.yaml", tuning)]), Vec::<String>::new());
    // YAML 1.1 words into a boolean field (yaml/v4 keeps that compatibility), not numbers.
    assert_eq!(codes(&[("t.yaml", "machine:\n  install:\n    wipe: \"yes\"\n")]), Vec::<String>::new());
    assert_eq!(codes(&[("t.yaml", "machine:\n  install:\n    wipe: 1\n")]), ["fleet::talos::patch-schema"]);
    // The reverse never: a string into an integer field is refused, as Talos refuses it.
    let mtu = "apiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\nmtu: \"9000\"\n";
    assert_eq!(codes(&[("t.yaml", mtu)]), ["fleet::talos::patch-schema"]);
}

#[test]
fn a_deprecated_field_talos_still_decodes_is_a_warning_and_its_subtree_is_judged() {
    assert_eq!(
        codes(&[("t.yaml", "machine:\n  time:\n    servers: [time.cloudflare.com]\n")]),
        ["fleet::talos::patch-deprecated"]
    );
    assert_eq!(
        codes(&[("t.yaml", "machine:\n  install:\n    extraKernelArgs: [console=ttyS0]\n")]),
        ["fleet::talos::patch-deprecated"]
    );
    // Inside it, Talos's strict decoder still refuses an unknown field.
    let typo = codes(&[("t.yaml", "machine:\n  time:\n    serverz: [time.cloudflare.com]\n")]);
    assert!(typo.contains(&"fleet::talos::patch-schema".to_owned()), "{typo:?}");
    // Beside fleetc's HostnameConfig, Talos refuses the v1alpha1 hostname.
    assert_eq!(
        codes(&[("t.yaml", "machine:\n  network:\n    hostname: x\n")]),
        ["fleet::talos::patch-deprecated-conflict"]
    );
}

#[test]
fn an_rfc6902_patch_is_converted_where_every_operation_maps() {
    let out = converted(
        "- op: remove\n  path: /cluster/apiServer/admissionControl\n- op: add\n  path: /machine/kernel/modules/-\n  value: {name: br_netfilter}\n",
    );
    assert!(out.starts_with("# Converted by fleetc from the RFC 6902 JSON patch p/a.yaml"), "{out}");
    assert!(out.contains("admissionControl:\n      $patch: delete\n"), "{out}");
    assert!(out.contains("modules:\n    - name: br_netfilter\n"), "{out}");
    for op in [
        "- op: test\n  path: /machine/type\n  value: worker\n",
        "- op: move\n  from: /machine/a\n  path: /machine/b\n",
        "- op: replace\n  path: /machine/certSANs/0\n  value: x\n",
        "- op: replace\n  path: /machine/kubelet/extraArgs\n  value: {a: b}\n",
    ] {
        assert_eq!(codes(&[("j.yaml", op)]), ["fleet::talos::patch-json6902"], "{op}");
    }
}

#[test]
fn file_level_mistakes_are_one_diagnostic_each() {
    assert_eq!(codes(&[("e.yaml", "")]), ["fleet::talos::patch-empty"]);
    assert_eq!(codes(&[("e.yaml", "# nothing yet\n")]), ["fleet::talos::patch-empty"]);
    let s = "machine:\n  sysctls:\n    a: \"1\"\n";
    assert_eq!(codes_with(&[("s.yaml", s)], vec!["s.yaml", "s.yaml"]), ["fleet::talos::patch-twice"]);
    let two = "machine:\n  sysctls:\n    a: \"1\"\n---\nmachine:\n  sysctls:\n    b: \"1\"\n";
    assert_eq!(codes(&[("d.yaml", two)]), ["fleet::talos::patch-duplicate-document"]);
    // Deleting a document and writing it again in one patch is no duplicate (Talos takes the
    // delete out first).
    let again = "apiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: docker.io\n$patch: delete\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: docker.io\nendpoints:\n  - url: https://mirror.example\n";
    assert_eq!(codes(&[("d.yaml", again)]), Vec::<String>::new());
}

#[test]
fn credentials_in_a_patch_are_refused() {
    let luks = "apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nencryption:\n  provider: luks2\n  keys:\n    - slot: 0\n      static:\n        passphrase: secret\n";
    assert_eq!(codes(&[("c.yaml", luks)]), ["fleet::talos::patch-secret"]);
    let registry = "apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: u\nidentityToken: t\n";
    assert_eq!(codes(&[("c.yaml", registry)]), ["fleet::talos::patch-secret"]);
    let ts = "apiVersion: v1alpha1\nkind: ExtensionServiceConfig\nname: tailscale\nenvironment:\n  - TS_AUTHKEY=tskey-auth-x\n  - TS_ROUTES=10.0.0.0/8\n";
    assert_eq!(codes(&[("c.yaml", ts)]), ["fleet::talos::patch-secret"]);
}

#[test]
fn an_mtu_above_what_linux_takes_is_refused() {
    let mtu = "apiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\nmtu: 100000\n";
    assert_eq!(codes(&[("m.yaml", mtu)]), ["fleet::talos::patch-link-mtu"]);
    let jumbo = "apiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\nmtu: 9000\n";
    assert_eq!(codes(&[("m.yaml", jumbo)]), Vec::<String>::new());
}

#[test]
fn the_deprecated_field_table_of_the_language_doc_is_talos_s_list() {
    let list: serde_json::Value = serde_json::from_str(include_str!("../schemas/talos/v1.13/deprecated.json")).unwrap();
    let doc = include_str!("../docs/fleet-language.md");
    let section = &doc[doc.find("**Deprecated fields (Talos 1.13).**").expect("the section")..];
    let rows: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| l.starts_with("| `"))
        .collect();
    let mut listed = Vec::new();
    for f in list["fields"].as_array().unwrap() {
        let text = f["deprecated"].as_str().unwrap();
        if text.is_empty() {
            continue;
        }
        let path = f["path"].as_str().unwrap();
        listed.push(path);
        let row = rows.iter().find(|r| r.starts_with(&format!("| `{path}` |"))).unwrap_or_else(|| {
            panic!("docs/fleet-language.md has no row for `{path}` (schemas/talos/v1.13/deprecated.json)")
        });
        assert!(row.contains(text), "the row of `{path}` does not quote Talos's text {text:?}");
    }
    for r in &rows {
        assert!(listed.iter().any(|p| r.starts_with(&format!("| `{p}` |"))), "{r} is not in Talos's list");
    }
}

#[test]
fn legacy_system_disk_encryption_beside_fleetcs_volume_config_is_refused() {
    let fleet = FLEET.replace("PATCHES", "patch \"p/e.yaml\"").replace(
        "control-plane count=3",
        "control-plane count=3 {\n                encrypt \"state\" key=\"nodeid\"\n            }",
    );
    let mut l = MapLoader::default();
    l.files.insert(
        "p/e.yaml".into(),
        "machine:\n  systemDiskEncryption:\n    state:\n      provider: luks2\n      keys:\n        - nodeID: {}\n          slot: 0\n".into(),
    );
    let c = compile("fleet.kdl", &fleet, &l);
    let codes: Vec<&str> = c.diags.iter().map(|d| d.code.name).collect();
    // The refusal comes first; the worker pool, which fleetc does not encrypt, still gets the
    // field's deprecation warning (for the control plane the refusal says it is deprecated).
    assert_eq!(codes, ["fleet::talos::patch-deprecated-conflict", "fleet::talos::patch-deprecated"]);
    // On the control plane alone: one cause, one error (no warning beside the refusal).
    let cp_only = FLEET.replace("PATCHES", "").replace(
        "control-plane count=3",
        "control-plane count=3 {\n                encrypt \"state\" key=\"nodeid\"\n                patch \"p/e.yaml\"\n            }",
    );
    let c = compile("fleet.kdl", &cp_only, &l);
    let codes: Vec<&str> = c.diags.iter().map(|d| d.code.name).collect();
    assert_eq!(codes, ["fleet::talos::patch-deprecated-conflict"]);
    // Without fleetc's encryption of STATE, it is only deprecated.
    let plain = FLEET.replace("PATCHES", "patch \"p/e.yaml\"");
    let c = compile("fleet.kdl", &plain, &l);
    let codes: Vec<&str> = c.diags.iter().map(|d| d.code.name).collect();
    assert_eq!(codes, ["fleet::talos::patch-deprecated"]);
}
