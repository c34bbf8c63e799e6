//! `fleetc import talhelper` (issue 33): the fixtures of `tests/import/<case>/input/` imported
//! and compared with their goldens (`expected/`: every file written, and `check.txt`, what
//! `fleetc check` says of the imported fleet), the refusals (one error with a span into the
//! source, nothing written), the byte-identical second import, and the whole corpus of real
//! talhelper fleets (tests/import/README.md, figures in `corpus.tsv`). `UPDATE_GOLDEN=1`
//! rewrites `expected/`, `check.txt` and `corpus.tsv`; review the diff.
#![allow(clippy::disallowed_methods)] // runs the real binary

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fleetc::compile::{MapLoader, compile};
use fleetc::diag::{Diagnostic, Severity};
use fleetc::import::{ImportError, talhelper};

use crate::common;

pub(crate) fn cases() -> PathBuf {
    common::root().join("tests/import")
}

pub(crate) fn update() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some()
}

fn import(config: &Path) -> Result<BTreeMap<String, String>, ImportError> {
    talhelper(&[config.to_path_buf()], &[], &Default::default()).map(|i| i.files)
}

/// The feature classes: each case's talconfigs, below its `input/`.
const CASES: &[(&str, &[&str])] = &[
    ("single-node", &["talconfig.yaml"]),
    ("multi-node-patches", &["talconfig.yaml"]),
    ("schematics-extensions", &["talconfig.yaml"]),
    ("env-substitution", &["talconfig.yaml"]),
    ("several-clusters", &["main/talconfig.yaml", "utility/talconfig.yaml"]),
];

fn import_case(case: &str) -> BTreeMap<String, String> {
    let (_, configs) = CASES.iter().find(|(c, _)| *c == case).unwrap();
    let paths: Vec<PathBuf> = configs.iter().map(|c| cases().join(case).join("input").join(c)).collect();
    talhelper(&paths, &[], &Default::default()).unwrap_or_else(|e| panic!("{case}: the import failed: {e:?}")).files
}

pub(crate) fn read_tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

/// `fleetc check`'s diagnostics of an imported fleet, one line each (`file:line: code: message`).
pub(crate) fn check(files: &BTreeMap<String, String>) -> (Vec<String>, Vec<Diagnostic>) {
    let loader = MapLoader { files: files.clone() };
    let c = compile("fleet.kdl", &files["fleet.kdl"], &loader);
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for d in c.diags.sorted() {
        let (file, line) = d.span.map_or(("-".to_owned(), 0), |s| {
            let f = c.sources.get(s.file);
            (f.name.clone(), f.line_of(s.start))
        });
        let sev = if d.is_error() { "error" } else { "warning" };
        lines.push(format!("{file}:{line}: {sev}[{}]: {}", d.code.name, d.message));
        if d.is_error() {
            errors.push(d.clone());
        }
    }
    (lines, errors)
}

/// One import case against its committed `expected/` tree and `check.txt` (`UPDATE_GOLDEN=1`
/// rewrites both); a difference is pushed onto `failures`.
pub(crate) fn compare_case(case: &str, files: &BTreeMap<String, String>, failures: &mut Vec<String>) {
    let dir = cases().join(case);
    let (lines, _) = check(files);
    let check_txt = lines.join("\n") + "\n";
    if update() {
        let _ = std::fs::remove_dir_all(dir.join("expected"));
        for (rel, text) in files {
            let p = dir.join("expected").join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        std::fs::write(dir.join("check.txt"), &check_txt).unwrap();
        return;
    }
    if &read_tree(&dir.join("expected")) != files {
        failures.push(format!("{case}: the imported files differ from expected/ (UPDATE_GOLDEN=1 rewrites them)"));
    }
    if std::fs::read_to_string(dir.join("check.txt")).unwrap_or_default() != check_txt {
        failures.push(format!("{case}: `fleetc check` of the import differs from check.txt:\n{check_txt}"));
    }
}

#[test]
fn every_feature_class_imports_as_its_golden_and_checks_as_recorded() {
    let mut failures = Vec::new();
    for (case, _) in CASES {
        compare_case(case, &import_case(case), &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_clean_feature_classes_check_without_an_error() {
    // single-node, schematics-extensions and env-substitution are fleets fleetc's rules accept;
    // multi-node-patches keeps two of the original's real problems (check.txt).
    for case in ["single-node", "schematics-extensions", "env-substitution", "several-clusters"] {
        let files = import_case(case);
        let (lines, errors) = check(&files);
        assert!(errors.is_empty(), "{case}:\n{}", lines.join("\n"));
    }
}

#[test]
fn a_second_import_of_the_same_input_is_byte_identical() {
    for case in ["multi-node-patches", "env-substitution"] {
        let config = cases().join(case).join("input/talconfig.yaml");
        let (a, b) = (import(&config).unwrap(), import(&config).unwrap());
        assert_eq!(a, b, "{case}");
        let out = tempfile::tempdir().unwrap();
        let run = |dir: &Path| {
            std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
                .args(["import", "talhelper"])
                .arg(&config)
                .arg("--out")
                .arg(dir)
                .output()
                .unwrap()
        };
        let (one, two) = (out.path().join("one"), out.path().join("two"));
        assert!(run(&one).status.success());
        assert!(run(&two).status.success());
        assert_eq!(read_tree(&one), read_tree(&two), "{case}: two imports on disk differ");
        assert_eq!(read_tree(&one), a, "{case}: what is written is what the import returns");
        // A third import into a fleet directory never overwrites it.
        let again = run(&one);
        assert_eq!(again.status.code(), Some(2), "{case}: importing over a fleet must fail");
        assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));
    }
}

/// A one-node fleet on Talos 1.10 whose patch sets kernel arguments (the corpus has 18 configs
/// on 1.9 to 1.11, 7 of them with such a patch).
const OLD_TALOS: &str = "clusterName: lab\ntalosVersion: v1.10.5\nkubernetesVersion: v1.33.2\nendpoint: https://10.20.0.11:6443\nnodes:\n  - hostname: lab-cp-1\n    ipAddress: 10.20.0.11\n    controlPlane: true\n    installDiskSelector:\n      serial: S6PNNS0T500111\n    patches:\n      - \"@./kernel.yaml\"\n";

fn import_old_talos(opts: &fleetc::import::Options) -> BTreeMap<String, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("talconfig.yaml"), OLD_TALOS).unwrap();
    std::fs::write(
        dir.path().join("kernel.yaml"),
        "machine:\n  install:\n    extraKernelArgs:\n      - mitigations=off\n",
    )
    .unwrap();
    talhelper(&[dir.path().join("talconfig.yaml")], &[], opts).unwrap().files
}

/// [`OLD_TALOS`] at a current Talos and Kubernetes, without its patch.
fn current_talos() -> String {
    OLD_TALOS
        .replace("v1.10.5", "v1.13.9")
        .replace("v1.33.2", "v1.36.2")
        .replace("    patches:\n      - \"@./kernel.yaml\"\n", "")
}

/// Imports `talconfig` with the `files` beside it.
fn import_with(talconfig: &str, files: &[(&str, &str)]) -> BTreeMap<String, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("talconfig.yaml"), talconfig).unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    talhelper(&[dir.path().join("talconfig.yaml")], &[], &Default::default()).unwrap().files
}

#[test]
fn an_older_talos_is_kept_and_refused_or_raised_with_talos_at_least() {
    use fleetc::model::Version;
    // By default the version stays, marked CHANGE, and `fleetc check` refuses it.
    let kept = import_old_talos(&Default::default());
    assert!(kept["fleet.kdl"].contains("talos \"v1.10.5\""), "{}", kept["fleet.kdl"]);
    assert!(kept["fleet.kdl"].contains("CHANGE: upgrade the nodes"), "{}", kept["fleet.kdl"]);
    assert!(kept["IMPORT-REPORT.md"].contains("--talos-at-least v1.12."), "{}", kept["IMPORT-REPORT.md"]);
    let (_, errors) = check(&kept);
    assert!(errors.iter().any(|d| d.code.name == "fleet::versions::talos-unsupported"));
    // Raised: the version, a report row, and `grubUseUKICmdline: false` beside the patch that
    // sets kernel arguments (Talos ≥ 1.12 refuses them beside the `true` it generates).
    let raised = import_old_talos(&fleetc::import::Options { talos_at_least: Some(Version::new(1, 12, 0)) });
    let kdl = &raised["fleet.kdl"];
    assert!(kdl.contains("talos \"v1.12.0\"") && !kdl.contains("v1.10.5\""), "{kdl}");
    assert!(raised["IMPORT-REPORT.md"].contains("| `talosVersion` | `v1.10.5` imported at `v1.12.0`"));
    let grub = "patches/talhelper/grub-uki-cmdline-off.yaml";
    assert!(raised[grub].ends_with("machine:\n  install:\n    grubUseUKICmdline: false\n"), "{}", raised[grub]);
    let kernel = kdl.find("kernel.yaml\"").unwrap();
    assert!(
        kdl[kernel..].contains(&format!("patch \"{grub}\"")),
        "the flag patch follows the kernel-args patch:\n{kdl}"
    );
    let (lines, errors) = check(&raised);
    assert!(errors.is_empty(), "{}", lines.join("\n"));
    // A floor below the version changes nothing.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("talconfig.yaml"),
        OLD_TALOS.replace("v1.10.5", "v1.13.9").replace("v1.33.2", "v1.36.2"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("kernel.yaml"),
        "machine:\n  install:\n    extraKernelArgs:\n      - mitigations=off\n",
    )
    .unwrap();
    let paths = [dir.path().join("talconfig.yaml")];
    let opts = fleetc::import::Options { talos_at_least: Some(Version::new(1, 12, 0)) };
    assert_eq!(
        talhelper(&paths, &[], &opts).unwrap().files,
        talhelper(&paths, &[], &Default::default()).unwrap().files
    );
    // A floor fleetc would still refuse is refused before anything is read.
    let dir = tempfile::tempdir().unwrap();
    let opts = fleetc::import::Options { talos_at_least: Some(Version::new(1, 11, 6)) };
    match talhelper(&[dir.path().join("talconfig.yaml")], &[], &opts) {
        Err(ImportError::Io(e)) => assert!(e.contains("fleetc configures Talos 1.12 and newer"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_size_only_install_disk_is_a_placeholder_for_its_serial() {
    // R15: a size names a kind of disk; on metal the serial is the user's fact, asked for as for
    // a device path (the harness fills both the same way, oracles/import/README.md).
    let dir = tempfile::tempdir().unwrap();
    let text = OLD_TALOS
        .replace("v1.10.5", "v1.13.9")
        .replace("v1.33.2", "v1.36.2")
        .replace("      serial: S6PNNS0T500111\n    patches:\n      - \"@./kernel.yaml\"\n", "      size: <=89GB\n");
    std::fs::write(dir.path().join("talconfig.yaml"), &text).unwrap();
    let files = talhelper(&[dir.path().join("talconfig.yaml")], &[], &Default::default()).unwrap().files;
    let kdl = &files["fleet.kdl"];
    assert!(kdl.contains("// CHANGE: add the disk's serial"), "{kdl}");
    assert!(kdl.contains("install-disk size=\"<=89GB\""), "{kdl}");
    assert!(
        files["IMPORT-REPORT.md"]
            .contains("`nodes[lab-cp-1] install-disk serial` | `installDiskSelector` names the disk by its size only")
    );
    let (_, errors) = check(&files);
    assert!(errors.iter().any(|d| d.code.name == "fleet::metal::disk-unidentified"));
}

#[test]
fn a_patch_disabling_the_search_domain_joins_the_resolver_config_of_nameservers() {
    // Talos ≥ 1.12 refuses `machine.network.disableSearchDomain` beside the `ResolverConfig`
    // fleetc writes for `nameservers` (`fleet::talos::patch-deprecated-conflict`): the import
    // moves the flag into that document; without nameservers the patch stays as written.
    let patch = "# the search domain\nmachine:\n  network:\n    disableSearchDomain: true\n  sysctls:\n    net.core.somaxconn: \"65535\"\n";
    // A patch of the nameservers every node's `nameservers` says is said already.
    let resolvers = "machine:\n  network:\n    nameservers:\n      - 10.20.0.1\n";
    let import = |nameservers: bool| {
        let mut text = current_talos()
            .replace("nodes:\n", "patches:\n  - \"@./network.yaml\"\n  - \"@./resolvers.yaml\"\nnodes:\n");
        if nameservers {
            text = text
                .replace("    controlPlane: true\n", "    controlPlane: true\n    nameservers:\n      - 10.20.0.1\n");
        }
        import_with(&text, &[("network.yaml", patch), ("resolvers.yaml", resolvers)])
    };
    let files = import(true);
    let moved = &files["patches/network.yaml"];
    assert!(
        moved.ends_with(
            "machine:\n  sysctls:\n    net.core.somaxconn: \"65535\"\n---\napiVersion: v1alpha1\nkind: ResolverConfig\nsearchDomains:\n  disableDefault: true\n"
        ),
        "{moved}"
    );
    assert!(files["IMPORT-REPORT.md"].contains("| `machine.network.disableSearchDomain` |"));
    assert!(files["IMPORT-REPORT.md"].contains("| `machine.network.nameservers` |"));
    assert!(!files.contains_key("patches/resolvers.yaml") && !files["fleet.kdl"].contains("resolvers.yaml"));
    let (lines, errors) = check(&files);
    assert!(errors.is_empty(), "{}", lines.join("\n"));
    let kept = import(false);
    assert_eq!(kept["patches/network.yaml"], patch);
    assert_eq!(kept["patches/resolvers.yaml"], resolvers);
    assert!(!kept["IMPORT-REPORT.md"].contains("disableSearchDomain"));
}

#[test]
fn an_override_is_written_only_where_the_patch_overrides() {
    // Both patches set R18's `validSubnets`; the first to the network fleetc writes there
    // (nothing overridden: `fleetc build` would warn of `overrides="R18"` as stale), the second
    // adds a subnet that may select another address of the node (an override).
    let same = "machine:\n  kubelet:\n    nodeIP:\n      validSubnets:\n        - 10.20.0.0/24\n";
    let other = "machine:\n  kubelet:\n    nodeIP:\n      validSubnets:\n        - 10.99.0.0/16\n";
    let text = current_talos().replace("nodes:\n", "patches:\n  - \"@./same.yaml\"\n  - \"@./other.yaml\"\nnodes:\n");
    let files = import_with(&text, &[("same.yaml", same), ("other.yaml", other)]);
    let kdl = &files["fleet.kdl"];
    assert!(kdl.contains("network \"10.20.0.0/24\""), "{kdl}");
    assert!(kdl.contains("patch \"patches/same.yaml\"\n"), "{kdl}");
    assert!(kdl.contains("patch \"patches/other.yaml\" overrides=\"R18\""), "{kdl}");
    let report = &files["IMPORT-REPORT.md"];
    assert!(report.contains("`patches/other.yaml (R18)`") && !report.contains("`patches/same.yaml (R18)`"), "{report}");
    let (lines, errors) = check(&files);
    assert!(errors.is_empty(), "{}", lines.join("\n"));
    assert!(!lines.iter().any(|l| l.contains("patch-stale-override")), "{}", lines.join("\n"));
    assert!(lines.iter().any(|l| l.contains("patch-override") && l.contains("other.yaml")), "{}", lines.join("\n"));
}

#[test]
fn machine_cert_sans_are_carried_by_cert_sans_or_a_patch_of_the_list() {
    // talhelper makes `additionalMachineCertSans` every node's `machine.certSANs`; fleetc's list
    // holds `cert-sans` (from `additionalApiServerCertSans`) and the endpoint: only the other
    // names need a patch, which adds to the list (no override, no report row).
    let import = |machine: &str| {
        let text = current_talos().replace(
            "nodes:\n",
            &format!(
                "additionalApiServerCertSans:\n  - k8s.lab.example\nadditionalMachineCertSans:\n{machine}nodes:\n"
            ),
        );
        import_with(&text, &[])
    };
    let same = import("  - 10.20.0.11\n  - k8s.lab.example\n");
    assert!(same["fleet.kdl"].contains("cert-sans \"k8s.lab.example\""), "{}", same["fleet.kdl"]);
    assert!(!same.contains_key("patches/talhelper/cluster.yaml"), "{:?}", same.keys());
    assert!(!same["IMPORT-REPORT.md"].contains("additionalMachineCertSans"), "{}", same["IMPORT-REPORT.md"]);
    let more = import("  - 10.20.0.11\n  - talos.lab.example\n");
    // A node's `certSANs` (appended to its `machine.certSANs`) likewise.
    let node = |f: &BTreeMap<String, String>| {
        f.iter()
            .filter(|(p, t)| p.starts_with("patches/talhelper/") && t.contains("certSANs"))
            .map(|(_, t)| t.clone())
            .collect::<Vec<_>>()
    };
    assert!(node(&more).len() == 1, "{:?}", node(&more));
    let own = import_with(
        &current_talos().replace(
            "    controlPlane: true\n",
            "    controlPlane: true\n    certSANs:\n      - 10.20.0.11\n      - node.lab.example\n",
        ),
        &[],
    );
    let own_patch = node(&own);
    assert!(own_patch.len() == 1 && own_patch[0].ends_with("certSANs:\n  - node.lab.example\n"), "{own_patch:?}");
    assert!(!own["IMPORT-REPORT.md"].contains("].certSANs"), "{}", own["IMPORT-REPORT.md"]);
    let (lines, errors) = check(&own);
    assert!(errors.is_empty() && !lines.iter().any(|l| l.contains("patches/talhelper")), "{}", lines.join("\n"));
    let patch = &more["patches/talhelper/cluster.yaml"];
    assert!(patch.ends_with("machine:\n  certSANs:\n  - talos.lab.example\n"), "{patch}");
    assert!(more["fleet.kdl"].contains("patch \"patches/talhelper/cluster.yaml\"\n"), "{}", more["fleet.kdl"]);
    let (lines, errors) = check(&more);
    assert!(errors.is_empty(), "{}", lines.join("\n"));
    assert!(!lines.iter().any(|l| l.contains("cluster.yaml")), "{}", lines.join("\n"));
}

#[test]
fn a_node_reached_by_a_dns_name_gets_an_address_placeholder() {
    // talhelper writes `ipAddress` into talosconfig only; a DNS name there is the user's way to
    // reach the node, and fleetc's node address is the IPv4 address behind it: a placeholder
    // `check` refuses, with its report row (an IPv6 address is written as it is, for `check`'s
    // own refusal).
    let with_ip = |ip: &str| {
        import_with(&current_talos().replace("    ipAddress: 10.20.0.11\n", &format!("    ipAddress: {ip}\n")), &[])
    };
    let files = with_ip("cp-1.lab.example");
    let kdl = &files["fleet.kdl"];
    assert!(
        kdl.contains("// talconfig reaches the node by the name cp-1.lab.example. CHANGE: its IPv4 address.\n                    address \"CHANGE-ME\"\n"),
        "{kdl}"
    );
    assert!(
        files["IMPORT-REPORT.md"].contains("| `nodes[lab-cp-1] address` | the IPv4 address behind `cp-1.lab.example`"),
        "{}",
        files["IMPORT-REPORT.md"]
    );
    let (lines, errors) = check(&files);
    assert!(errors.iter().any(|d| d.code.name == "fleet::model::invalid-value"), "{}", lines.join("\n"));
    // An address in CIDR form or an IPv6 address is no name: written as it is, for `check`.
    for ip in ["10.20.0.11/24", "fd00::11"] {
        let kdl = &with_ip(ip)["fleet.kdl"];
        assert!(kdl.contains(&format!("address \"{ip}\"")) && !kdl.contains("reaches the node by the name"), "{kdl}");
    }
}

/// Runs the binary on `text` (written as `name`) and returns (exit code, stderr, files written).
fn refused(name: &str, text: &str, env: Option<&str>) -> (Option<i32>, String, usize) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(name);
    std::fs::write(&config, text).unwrap();
    if let Some(e) = env {
        std::fs::write(dir.path().join("talenv.yaml"), e).unwrap();
    }
    let out = dir.path().join("out");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .args(["--color", "never", "import", "talhelper"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let written = if out.exists() { read_tree(&out).len() } else { 0 };
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), written)
}

#[test]
fn a_file_that_is_not_a_talhelper_config_is_one_error_with_a_span_and_nothing_is_written() {
    let kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - app.yaml\n";
    let (code, err, written) = refused("kustomization.yaml", kustomization, None);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(written, 0);
    assert_eq!(err.matches("fleet::import::").count(), 1, "one error:\n{err}");
    assert!(err.contains("fleet::import::not-talhelper"), "{err}");
    assert!(err.contains("kustomization.yaml:1:1"), "the span points into the file:\n{err}");
    let flat: String = err.split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ");
    assert!(flat.contains("it has no `clusterName` and no `nodes`"), "{err}");

    let (code, err, written) = refused("talconfig.yaml", "clusterName: x\nnodes: [\n", None);
    assert_eq!((code, written), (Some(1), 0), "{err}");
    assert!(err.contains("is not YAML") && err.contains("talconfig.yaml:"), "{err}");
}

#[test]
fn a_broken_config_is_refused_field_by_field_and_nothing_is_written() {
    let text = "clusterName: x\nkubernetesVersion: v1.36.2\nendpoint: 10.0.0.10\nnodes:\n  - ipAddress: 10.0.0.11\n    controlPlane: true\n  - hostname: w-1\n    patches: \"@x.yaml\"\n";
    let (code, err, written) = refused("talconfig.yaml", text, None);
    assert_eq!((code, written), (Some(1), 0), "{err}");
    assert!(err.contains("a node has no `hostname`") && err.contains("talconfig.yaml:5:5"), "{err}");
    assert!(err.contains("`patches` is not a list") && err.contains("talconfig.yaml:8:14"), "{err}");
    assert!(err.contains("`10.0.0.10` is not a URL") && err.contains("talconfig.yaml:3:11"), "{err}");
    assert_eq!(err.matches("fleet::import::invalid").count(), 3, "all at once:\n{err}");
}

#[test]
fn an_unset_variable_is_named_at_its_place_and_nothing_is_written() {
    let text = "clusterName: x\nkubernetesVersion: v1.36.2\nendpoint: https://${VIP}:6443\nnodes:\n  - hostname: cp-1\n    ipAddress: ${SUBNET}.11\n    controlPlane: true\n";
    let (code, err, written) = refused("talconfig.yaml", text, Some("SUBNET: 10.0.0\n"));
    assert_eq!((code, written), (Some(1), 0), "{err}");
    assert!(err.contains("`${VIP}` is not set") && err.contains("talconfig.yaml:3:11"), "{err}");
    assert!(!err.contains("SUBNET"), "SUBNET is defined by talenv.yaml:\n{err}");
    // A SOPS-encrypted env file is not read, and the help says so.
    let (_, err, _) = refused("talconfig.yaml", text, Some("VIP: ENC[AES256_GCM,data:x]\nsops:\n  version: 3.9.0\n"));
    assert!(err.contains("talenv.yaml, which is SOPS-encrypted and not read"), "{err}");
}

#[test]
fn a_patch_file_that_does_not_read_is_refused_at_its_reference() {
    let text = "clusterName: x\nkubernetesVersion: v1.36.2\nendpoint: https://10.0.0.10:6443\npatches:\n  - \"@./patches/missing.yaml\"\nnodes:\n  - hostname: cp-1\n    ipAddress: 10.0.0.11\n    controlPlane: true\n";
    let (code, err, written) = refused("talconfig.yaml", text, None);
    assert_eq!((code, written), (Some(1), 0), "{err}");
    assert!(err.contains("fleet::import::file-unreadable") && err.contains("talconfig.yaml:5:5"), "{err}");
}

pub(crate) fn corpus_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FLEETC_CORPUS") {
        return PathBuf::from(d);
    }
    let beside = common::root().join("../shared/corpus");
    if beside.join("MANIFEST.tsv").is_file() {
        return beside;
    }
    PathBuf::from("/work/shared/corpus")
}

/// Codes that are a fleetc limit the original meets (no R-id): the Talos and Kubernetes
/// versions fleetc configures, IPv4 only, the RFC 6902 operations with a strategic-merge
/// equivalent, Talos's own refusal of a deprecated field beside a document, and a schema
/// refusal of a patch field Talos's strict decoder refuses.
pub(crate) const LIMITS: &[&str] = &[
    "fleet::versions::talos-unsupported",
    "fleet::versions::kubernetes-unsupported",
    "fleet::model::invalid-value",
    "fleet::talos::patch-json6902",
    "fleet::talos::patch-deprecated-conflict",
    "fleet::talos::patch-schema",
    "fleet::network::duplicate-address",
    // Talos refuses the config on the minors fleetc configures (1.12 and later); talhelper
    // refuses the 1.12+ originals too, and the older ones meet `talos-unsupported` first.
    "fleet::talos::patch-kernel-args-uki",
];

pub(crate) fn cites_rule(d: &Diagnostic) -> bool {
    let cites = |s: &str| {
        s.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w.len() > 1 && w.starts_with('R') && w[1..].chars().all(|c| c.is_ascii_digit()))
    };
    d.code.name.contains("owned")
        || d.code.rule.is_some_and(|r| r.starts_with('R'))
        || d.help.as_deref().is_some_and(cites)
        || d.code.help.is_some_and(cites)
}

/// Fills the placeholders a test can fill without knowing the machines: a unique MAC per
/// `mac "CHANGE-ME"`. The others (an endpoint, a version) stay and count as placeholders.
pub(crate) fn fill(files: &mut BTreeMap<String, String>) {
    let kdl = files.get_mut("fleet.kdl").unwrap();
    let mut n = 0u32;
    while let Some(i) = kdl.find("mac \"CHANGE-ME\"") {
        n += 1;
        kdl.replace_range(i..i + 15, &format!("mac \"02:00:00:00:{:02x}:{:02x}\"", n / 256, n % 256));
    }
}

#[test]
fn the_whole_talhelper_corpus_imports_and_checks_as_recorded() {
    let corpus = corpus_dir();
    assert!(corpus.join("MANIFEST.tsv").is_file(), "the corpus is not at {} (set FLEETC_CORPUS)", corpus.display());
    let mut configs = Vec::new();
    let mut stack = vec![corpus.join("talhelper")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("talconfig")) {
                configs.push(p);
            }
        }
    }
    configs.sort();
    let mut rows = vec![
        "# config\tverdict\terror codes after filling the MAC placeholders (rule: R-id; limit: fleetc's model)"
            .to_owned(),
    ];
    let (mut imported, mut clean, mut only_rules, mut placeholders, mut other) = (0, 0, 0, 0, Vec::new());
    for c in &configs {
        let rel = c.strip_prefix(corpus.join("talhelper")).unwrap().to_string_lossy().into_owned();
        let verdict = match import(c) {
            Err(ImportError::Problems(_, diags)) => {
                let mut codes: Vec<&str> =
                    diags.iter().filter(|d| d.severity == Severity::Error).map(|d| d.code.name).collect();
                codes.dedup();
                format!("refused\t{}", codes.join(" "))
            }
            Err(ImportError::Io(e)) => format!("refused\t{e}"),
            Ok(mut files) => {
                imported += 1;
                assert_eq!(import(c).unwrap(), files, "{rel}: a second import differs");
                fill(&mut files);
                let (_, errors) = check(&files);
                let mut kinds: Vec<String> = Vec::new();
                let mut has_placeholder = false;
                let mut all_rules = true;
                for d in &errors {
                    let text = d.span.map(|s| files["fleet.kdl"].get(s.start..s.end()).unwrap_or("")).unwrap_or("");
                    let kind = if text.contains("CHANGE-ME") {
                        has_placeholder = true;
                        "placeholder"
                    } else if cites_rule(d) {
                        "rule"
                    } else if LIMITS.contains(&d.code.name) {
                        all_rules = false;
                        "limit"
                    } else {
                        other.push(format!("{rel}: {}: {}", d.code.name, d.message));
                        "other"
                    };
                    let k = format!("{}({kind})", d.code.name);
                    if !kinds.contains(&k) {
                        kinds.push(k);
                    }
                }
                kinds.sort();
                if errors.is_empty() {
                    clean += 1;
                    "clean\t".to_owned()
                } else {
                    if has_placeholder {
                        placeholders += 1;
                    } else if all_rules {
                        only_rules += 1;
                    }
                    format!("checked\t{}", kinds.join(" "))
                }
            }
        };
        rows.push(format!("{rel}\t{verdict}"));
    }
    let summary = format!(
        "{} talhelper configs: {imported} imported, {} refused; of the imported, {clean} check clean, {only_rules} are refused only for rules with an R-id, {placeholders} wait for a placeholder the test cannot fill (an endpoint, a version), {} meet a fleetc limit",
        configs.len(),
        configs.len() - imported,
        imported - clean - only_rules - placeholders
    );
    rows.push(format!("# {summary}"));
    let tsv = rows.join("\n") + "\n";
    println!("{tsv}");
    assert!(
        other.is_empty(),
        "errors that are neither a placeholder, a rule nor a known limit (an import bug):\n{}",
        other.join("\n")
    );
    let path = cases().join("corpus.tsv");
    if update() {
        std::fs::write(&path, &tsv).unwrap();
    } else {
        assert_eq!(
            std::fs::read_to_string(&path).unwrap_or_default(),
            tsv,
            "tests/import/corpus.tsv differs (UPDATE_GOLDEN=1)"
        );
    }
    let readme = std::fs::read_to_string(cases().join("README.md")).unwrap_or_default();
    assert!(readme.contains(&summary), "tests/import/README.md must state the figures:\n{summary}");
}

#[test]
fn a_truncated_or_mangled_config_never_panics() {
    // fleetc never panics on any input: every corpus config cut at a dozen places, and with
    // its types swapped, is imported or refused with diagnostics.
    let corpus = corpus_dir();
    let dir = tempfile::tempdir().unwrap();
    let mut stack = vec![corpus.join("talhelper")];
    let mut n = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if !p.file_name().is_some_and(|f| f.to_string_lossy().starts_with("talconfig")) {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let mut variants: Vec<String> = (1..12)
                .map(|i| {
                    let mut cut = text.len() * i / 12;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text[..cut].to_owned()
                })
                .collect();
            variants.push(text.replace("controlPlane: true", "controlPlane: [1]"));
            variants.push(text.replace("hostname:", "hostname: {a: 1}\n    x:"));
            variants.push(text.replace("nodes:", "nodes: 3\nx:"));
            for v in variants {
                let f = dir.path().join(format!("{n}.yaml"));
                n += 1;
                std::fs::write(&f, &v).unwrap();
                let r = std::panic::catch_unwind(|| {
                    talhelper(std::slice::from_ref(&f), &[], &Default::default()).map(|_| ())
                });
                assert!(r.is_ok(), "the import panicked on a variant of {}", p.display());
            }
        }
    }
    assert!(n > 400, "{n} variants");
}
