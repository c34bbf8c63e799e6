//! One case per rule: a base fleet, an edit, and the impact the rule must report. Every case
//! also runs with its rule removed from the table, and must then report an unknown impact
//! instead: a rule that is deleted fails its case, and what it covered never goes silent.

use super::kubernetes_version::kubernetes_path;
use super::talos_version::talos_path;
use super::*;
use crate::artifacts::ArtifactSet;
use crate::compile::{MapLoader, compile};
use crate::review::files::diff_sets;
use crate::review::impact::{analyze, analyze_with};

const BASE: &str = r#"
fleet "t" {
    talos "v1.12.6"
    kubernetes "1.34.1"
    apply-mode "auto"
    gitops repo="https://git.example.org/t/fleet.git"
    schematic "isolated" {
        extension "siderolabs/gvisor"
    }
    environment "staging" {
        scaleway project="11111111-2222-3333-4444-555555555555" region="fr-par" zone="fr-par-2" {
            size "cp" type="PRO2-XS"
            size "cp2" type="PRO2-XS"
            size "small" type="PRO2-S"
        }
        state bucket="t-tofu-state"
        network "10.10.0.0/22"
        gateway "51.15.200.10"
        admin-ranges "203.0.113.0/24"
        recipients "age1wh7qxmt0740e28qvq0jjz5ylyxfctxtm4skkffn6kers9dln89eswx42s2"
        postgres "app" node-type="DB-DEV-S"
        bucket "app"
        secret "token"
        cluster "main" {
            runtimes "gvisor"
            endpoint address="10.10.0.10"
            pool-defaults schematic="isolated" ephemeral-min-size="100GB" data-disk-size="200GB"
            control-plane count=3 size="cp"
            pool "system" count=2 size="small"
            sealed "talos-secrets" "scaleway-api-key"
            app "hello" path="apps/hello" namespace="hello"
        }
    }
}
"#;

fn fleet(src: &str) -> crate::compile::Compilation {
    let c = compile("fleet.kdl", src, &MapLoader::default());
    assert!(
        !c.diags.has_errors(),
        "{}",
        crate::diag::render::text(&c.diags, &c.sources, crate::diag::render::Style::PLAIN)
    );
    c
}

fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "the base fleet has no `{from}`");
    BASE.replacen(from, to, 1)
}

fn impacts_with(table: &'static [Rule], old: &str, new: &str) -> Vec<Impact> {
    let (o, n) = (fleet(old), fleet(new));
    let files = diff_sets(o.artifacts.as_ref().unwrap(), n.artifacts.as_ref().unwrap());
    analyze_with(table, o.fleet.as_ref(), n.fleet.as_ref().unwrap(), &files)
}

/// (rule, text in BASE, its replacement, severity, a fragment of the impact's line)
const CASES: &[(&str, &str, &str, Severity, &str)] = &[
    (
        "disk-security",
        "pool \"system\" count=2 size=\"small\"",
        "pool \"system\" count=2 size=\"small\" {\n                encrypt \"ephemeral\" key=\"nodeid\"\n            }",
        Severity::Warning,
        "disk-encryption of worker pool `system`: none → EPHEMERAL:nodeid → running nodes keep their volumes",
    ),
    (
        "lifecycle",
        "bucket \"app\"",
        "bucket \"assets\"",
        Severity::Danger,
        "bucket `app` removed and bucket `assets` added, with no `was=` → destroy and create: the bucket is destroyed",
    ),
    (
        "lifecycle",
        "postgres \"app\"",
        "postgres \"main\" was=\"app\"",
        Severity::Info,
        "postgres `main` renamed from `app` with `was=` → moved",
    ),
    ("lifecycle", "cluster \"main\" {", "cluster \"core\" {", Severity::Danger, "machine secrets bundle"),
    (
        "lifecycle",
        "state bucket=\"t-tofu-state\"",
        "state bucket=\"t-tofu-state-2\"",
        Severity::Danger,
        "the OpenTofu state of environment `staging` moves",
    ),
    (
        "lifecycle",
        "bucket \"app\"",
        "bucket \"app\" name=\"t-staging-assets\"",
        Severity::Danger,
        "the global name of bucket `app` changes",
    ),
    (
        "install-image",
        "extension \"siderolabs/gvisor\"",
        "extension \"siderolabs/gvisor\" \"siderolabs/kata-containers\"",
        Severity::Warning,
        "no effect on running nodes until they are upgraded",
    ),
    (
        "talos-version",
        "talos \"v1.12.6\"",
        "talos \"v1.13.9\"",
        Severity::Warning,
        "Talos v1.12.6 → v1.13.9 → upgrade needed",
    ),
    (
        "kubernetes-version",
        "kubernetes \"1.34.1\"",
        "kubernetes \"1.35.2\"",
        Severity::Warning,
        "`talosctl upgrade-k8s --to 1.35.2`",
    ),
    (
        "machine-arguments",
        "size \"cp\" type=\"PRO2-XS\"",
        "size \"cp\" type=\"PRO2-S\"",
        Severity::Danger,
        "every control-plane node (3) in the cloud root's apply, one after the other",
    ),
    (
        "machine-arguments",
        "data-disk-size=\"200GB\"",
        "data-disk-size=\"150GB\"",
        Severity::Danger,
        "replaces the data volume (EPHEMERAL, and etcd's data on a control-plane node) of `main-cp-2` → `scaleway_block_volume.size_in_gb` forces a new resource",
    ),
    (
        "machine-arguments",
        "endpoint address=\"10.10.0.10\"",
        "endpoint address=\"10.10.0.9\"",
        Severity::Danger,
        "replaces the Kubernetes API address → `scaleway_ipam_ip.address` forces a new resource",
    ),
    (
        "size-class",
        "control-plane count=3 size=\"cp\"",
        "control-plane count=3 size=\"cp2\"",
        Severity::Info,
        "the same instance type: no effect",
    ),
    (
        "control-plane-count",
        "control-plane count=3",
        "control-plane count=5",
        Severity::Warning,
        "etcd quorum changes: 3 members survive 1 lost → 5 members survive 2; nodes added: `main-cp-4`, `main-cp-5`",
    ),
    (
        "worker-count",
        "pool \"system\" count=2",
        "pool \"system\" count=3",
        Severity::Info,
        "nodes added: `main-system-3`",
    ),
    (
        "worker-count",
        "pool \"system\" count=2",
        "pool \"system\" count=1",
        Severity::Warning,
        "nodes destroyed: `main-system-2`",
    ),
    (
        "apply-mode",
        "apply-mode \"auto\"",
        "apply-mode \"reboot\"",
        Severity::Warning,
        "one at a time with `talosctl health` after each",
    ),
    (
        "talos-api-access",
        "admin-ranges \"203.0.113.0/24\"",
        "admin-ranges \"203.0.113.0/24\" \"0.0.0.0/0\"",
        Severity::Danger,
        "`admin-ranges` of environment `staging`: 203.0.113.0/24 → 203.0.113.0/24 0.0.0.0/0 → who reaches every node's Talos API",
    ),
    (
        "ephemeral-volume",
        "ephemeral-min-size=\"100GB\"",
        "ephemeral-min-size=\"150GB\"",
        Severity::Warning,
        "only at first provisioning",
    ),
    (
        "sealed-inputs",
        "sealed \"talos-secrets\"",
        "sealed \"talos-secrets-v2\"",
        Severity::Danger,
        "a new cluster identity: the running nodes will not join it",
    ),
    (
        "sealed-inputs",
        "sealed \"talos-secrets\" \"scaleway-api-key\"",
        "sealed \"talos-secrets\"",
        Severity::Warning,
        "sealed inputs removed `scaleway-api-key`",
    ),
    (
        "apps",
        "app \"hello\"",
        "app \"web\" path=\"apps/web\" namespace=\"web\"\n            app \"hello\"",
        Severity::Info,
        "new app `web` in namespace `web` → Argo CD syncs it",
    ),
];

fn find<'a>(impacts: &'a [Impact], rule: &str, severity: Severity, fragment: &str) -> Option<&'a Impact> {
    impacts.iter().find(|i| i.rule == rule && i.severity == severity && i.line().contains(fragment))
}

#[test]
fn every_case_reports_its_impact_and_goes_unknown_without_its_rule() {
    for (rule, from, to, severity, fragment) in CASES {
        let new = edit(from, to);
        let all = impacts_with(RULES, BASE, &new);
        assert!(
            find(&all, rule, *severity, fragment).is_some(),
            "{rule}: no {severity:?} impact containing `{fragment}` in\n{all:#?}"
        );
        let without: Vec<Rule> = RULES.iter().filter(|r| r.name != *rule).map(|r| Rule { ..*r }).collect();
        let without: &'static [Rule] = Box::leak(without.into_boxed_slice());
        let rest = impacts_with(without, BASE, &new);
        assert!(!rest.iter().any(|i| i.rule == *rule), "{rule} still reported without its rule");
        assert!(
            rest.iter().any(|i| i.rule == "unknown"),
            "{rule}: without the rule, the change must be an unknown impact: {rest:#?}"
        );
    }
}

#[test]
fn every_rule_has_a_case() {
    for r in RULES {
        let covered =
            CASES.iter().any(|c| c.0 == r.name) || ARTIFACT_RULES.contains(&r.name) || OWN_TEST_RULES.contains(&r.name);
        assert!(covered, "rule `{}` has no test case", r.name);
    }
}

#[test]
fn an_unchanged_fleet_has_no_impact() {
    assert!(impacts_with(RULES, BASE, BASE).is_empty());
}

#[test]
fn a_change_no_rule_knows_is_an_unknown_impact() {
    // The recipients decide who can decrypt the sealed inputs, which no rule judges.
    let i = impacts_with(
        RULES,
        BASE,
        &edit(
            "recipients \"age1wh7qxmt0740e28qvq0jjz5ylyxfctxtm4skkffn6kers9dln89eswx42s2\"",
            "recipients \"age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\"",
        ),
    );
    assert_eq!(i.len(), 1, "{i:#?}");
    assert_eq!(i[0].rule, "unknown");
    assert_eq!(i[0].subject, "staging");
    assert!(i[0].change.contains("`recipients` of environment `staging` changed"), "{}", i[0].change);
}

const PROXMOX: &str = r#"
fleet "t" {
    talos "v1.13.9"
    kubernetes "1.36.2"
    gitops repo="https://git.example.org/t/fleet.git"
    schematic "plain" {
        extension "siderolabs/qemu-guest-agent"
    }
    environment "lab" {
        proxmox endpoint="https://pve.example:8006" node="pve1" router="10.10.0.1" {
            size "small" cores=2 memory="4GiB"
        }
        state bucket="t-tofu-state" region="fr-par" endpoint="https://s3.fr-par.scw.cloud"
        network "10.10.0.0/22"
        admin-ranges "10.10.0.0/22"
        cluster "main" {
            endpoint address="10.10.0.10"
            pool-defaults size="small" schematic="plain"
            control-plane count=3 {
                addresses "10.10.0.11" "10.10.0.12" "10.10.0.13"
            }
            pool "system" count=2 {
                addresses "10.10.0.21" "10.10.0.22"
            }
        }
    }
}
"#;

#[test]
fn a_plain_scale_up_with_addresses_has_no_unknown_impact() {
    let up = PROXMOX.replace(
        "pool \"system\" count=2 {\n                addresses \"10.10.0.21\" \"10.10.0.22\"",
        "pool \"system\" count=3 {\n                addresses \"10.10.0.21\" \"10.10.0.22\" \"10.10.0.23\"",
    );
    assert_ne!(up, PROXMOX);
    let i = impacts_with(RULES, PROXMOX, &up);
    assert_eq!(i.len(), 1, "{i:#?}");
    assert_eq!((i[0].rule, i[0].severity), ("worker-count", Severity::Info));
    assert!(i[0].effect.contains("nodes added: `main-system-3`"), "{}", i[0].effect);
    // The same for a scale-down and for the control plane.
    let cp = PROXMOX.replace(
        "count=3 {\n                addresses \"10.10.0.11\" \"10.10.0.12\" \"10.10.0.13\"",
        "count=5 {\n                addresses \"10.10.0.11\" \"10.10.0.12\" \"10.10.0.13\" \"10.10.0.14\" \"10.10.0.15\"",
    );
    // (A control-plane count change also swaps the cluster's modules, whose files are
    // reported on their own; its addresses are explained.)
    let i = impacts_with(RULES, PROXMOX, &cp);
    assert!(!i.iter().any(|i| i.rule == "unknown" && i.change.contains("`addresses`")), "{i:#?}");
    assert!(impacts_with(RULES, &up, PROXMOX).iter().all(|i| i.rule != "unknown"));
    // A node that keeps its name but changes its address: that node, in place at its next
    // reboot (emit::tofu::arguments).
    let moved =
        up.replace("\"10.10.0.21\" \"10.10.0.22\" \"10.10.0.23\"", "\"10.10.0.21\" \"10.10.0.32\" \"10.10.0.23\"");
    let i = impacts_with(RULES, &up, &moved);
    assert!(!i.iter().any(|i| i.rule == "unknown" && i.change.contains("`addresses`")), "{i:#?}");
    let hit = find(
        &i,
        "machine-arguments",
        Severity::Warning,
        "static address (NoCloud) of `main-system-2` → changed in place",
    );
    assert!(hit.is_some(), "{i:#?}");
}

#[test]
fn a_talos_upgrade_replaces_no_machine_and_a_downgrade_refuses_to_replace_the_identity() {
    let i = impacts_with(RULES, BASE, &edit("talos \"v1.12.6\"", "talos \"v1.13.9\""));
    let hit = find(
        &i,
        "machine-arguments",
        Severity::Info,
        "no machine is replaced: the roots ignore `scaleway_instance_server.image`",
    );
    assert!(hit.is_some(), "{i:#?}");
    assert!(
        hit.unwrap().change.contains("`main-cp-1`, `main-cp-2`, `main-cp-3`, `main-system-1`, `main-system-2`"),
        "{hit:?}"
    );
    assert!(!i.iter().any(|x| x.severity == Severity::Danger), "{i:#?}");
    // The secrets' `talos_version` moves forward with Talos: an update in place.
    assert!(
        find(
            &i,
            "secrets-version",
            Severity::Info,
            "`talos_machine_secrets.talos_version` v1.12.6 → v1.13.9: updated in place"
        )
        .is_some(),
        "{i:#?}"
    );
    let up = edit("talos \"v1.12.6\"", "talos \"v1.13.9\"");
    let i = impacts_with(RULES, &up, BASE);
    assert!(
        find(
            &i,
            "secrets-version",
            Severity::Danger,
            "`talos_machine_secrets.talos_version` v1.13.9 → v1.12.6: replaces the cluster's identity"
        )
        .is_some(),
        "{i:#?}"
    );
    // Without the rule, nothing says the identity goes (the Talos downgrade is a warning).
    let rest = impacts_with(without("secrets-version"), &up, BASE);
    assert!(!rest.iter().any(|x| x.severity == Severity::Danger), "{rest:#?}");
    // A grown data volume is updated in place.
    let i = impacts_with(RULES, BASE, &edit("data-disk-size=\"200GB\"", "data-disk-size=\"300GB\""));
    assert!(
        find(&i, "machine-arguments", Severity::Info, "updated in place, no machine is replaced").is_some(),
        "{i:#?}"
    );
    assert!(!i.iter().any(|x| x.rule == "unknown"), "{i:#?}");
}

#[test]
fn a_renamed_pool_with_was_is_moved_and_keeps_its_facts() {
    let i = impacts_with(RULES, BASE, &edit("pool \"system\" count=2", "pool \"infra\" count=2 was=\"system\""));
    assert!(
        find(&i, "lifecycle", Severity::Info, "worker pool `infra` renamed from `system` with `was=` → moved")
            .is_some(),
        "{i:#?}"
    );
    assert!(!i.iter().any(|x| x.severity == Severity::Danger), "{i:#?}");
    // The hostnames change with the pool's name, and that is said to be unclassified.
    assert!(i.iter().any(|x| x.rule == "unknown" && x.change.contains("node hostnames")), "{i:#?}");
}

#[test]
fn a_worker_instance_type_change_is_a_warning() {
    let i = impacts_with(RULES, BASE, &edit("size \"small\" type=\"PRO2-S\"", "size \"small\" type=\"PRO2-M\""));
    let hit = find(
        &i,
        "machine-arguments",
        Severity::Warning,
        "`instance-type` of worker pool `system` PRO2-S → PRO2-M: `scaleway_instance_server.type` of `main-system-1`, `main-system-2` → stop/migrate/start",
    );
    assert!(hit.is_some(), "{i:#?}");
}

#[test]
fn reboot_mode_on_a_running_cluster_is_danger_for_any_change() {
    let base = edit("apply-mode \"auto\"", "apply-mode \"reboot\"");
    let new = base.replacen("pool \"system\" count=2", "pool \"system\" count=3", 1);
    let i = impacts_with(RULES, &base, &new);
    assert!(find(&i, "apply-mode", Severity::Warning, "apply mode is `reboot`").is_some(), "{i:#?}");
}

#[test]
fn upgrade_paths() {
    let v = |s: &str| s.parse::<Version>().unwrap();
    assert_eq!(talos_path(v("v1.11.2"), v("v1.13.9")), "v1.11.2 → latest v1.11.x → v1.12.11 → v1.13.9");
    // newcomer-3.md §4: from the newest patch of a minor, there is no "latest" step.
    assert_eq!(talos_path(v("v1.13.9"), v("v1.14.1")), "v1.13.9 → v1.14.1");
    assert_eq!(talos_path(v("v1.12.6"), v("v1.13.9")), "v1.12.6 → v1.12.11 → v1.13.9");
    assert_eq!(talos_path(v("v1.13.1"), v("v1.13.9")), "v1.13.1 → v1.13.9");
    assert_eq!(kubernetes_path(v("1.33.0"), v("1.36.2")), "1.33 → 1.34 → 1.35 → 1.36.2");
    assert_eq!(kubernetes_path(v("1.36.0"), v("1.36.2")), "1.36.0 → 1.36.2");
}

/// Rules that speak about a change another rule claims (so that without them it is not an
/// unknown impact), each with its own test that fails without it:
/// `secrets-version` in `a_talos_upgrade_replaces_no_machine_and_a_downgrade_refuses_to_replace_the_identity`.
const OWN_TEST_RULES: &[&str] = &["secrets-version"];

// Rules on the artifacts: the output alone tells, so the cases are artifact sets.

const ARTIFACT_RULES: &[&str] = &["template-renamed", "tofu-address", "talos-fields", "talos-api-access"];

fn set(files: &[(&str, &str)]) -> ArtifactSet {
    let mut s = ArtifactSet::new();
    for (p, b) in files {
        s.insert(*p, b.as_bytes()).unwrap();
    }
    s
}

fn template(name: &str) -> String {
    format!(
        "# header\napiVersion: bootstrap.cluster.x-k8s.io/v1alpha3\nkind: TalosConfigTemplate\nmetadata:\n  name: {name}\n  namespace: default\nspec: {{}}\n---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: edge-1-workers\n  namespace: default\nspec:\n  template: {name}\n"
    )
}

fn artifact_impacts(table: &'static [Rule], old: &ArtifactSet, new: &ArtifactSet) -> Vec<Impact> {
    let n = fleet(BASE);
    analyze_with(table, None, n.fleet.as_ref().unwrap(), &diff_sets(old, new))
}

fn without(rule: &str) -> &'static [Rule] {
    let v: Vec<Rule> = RULES.iter().filter(|r| r.name != rule).map(|r| Rule { ..*r }).collect();
    Box::leak(v.into_boxed_slice())
}

#[test]
fn a_renamed_talos_config_template_rolls_the_pool() {
    let old = set(&[("capi/mgmt/edge-1/workers.yaml", &template("edge-1-workers-1a2b3c"))]);
    let new = set(&[("capi/mgmt/edge-1/workers.yaml", &template("edge-1-workers-4d5e6f"))]);
    let i = artifact_impacts(RULES, &old, &new);
    let hit = find(
        &i,
        "template-renamed",
        Severity::Warning,
        "TalosConfigTemplate renamed: `edge-1-workers-1a2b3c` → `edge-1-workers-4d5e6f` → rolling replacement of the pool",
    );
    assert!(hit.is_some(), "{i:#?}");
    assert_eq!(hit.unwrap().subject, "capi/mgmt/edge-1");
    assert!(!i.iter().any(|x| x.rule == "unknown"), "{i:#?}");
    let rest = artifact_impacts(without("template-renamed"), &old, &new);
    assert!(rest.iter().any(|x| x.rule == "unknown" && x.subject == "capi/mgmt/edge-1"), "{rest:#?}");
}

const TF_OLD: &str = "# h\n\nresource \"scaleway_rdb_instance\" \"app\" {\n  name = \"app\"\n}\n\nresource \"scaleway_instance_server\" \"main_cp_1\" {\n  type = \"PRO2-XS\"\n}\n";

#[test]
fn a_removed_resource_address_is_destroyed_and_a_moved_one_is_not() {
    let old = set(&[("tofu/staging/cloud/main.tf", TF_OLD)]);
    let gone = TF_OLD.replace("\"app\" {", "\"main\" {");
    let new = set(&[("tofu/staging/cloud/main.tf", &gone)]);
    let i = artifact_impacts(RULES, &old, &new);
    assert!(
        find(
            &i,
            "tofu-address",
            Severity::Danger,
            "resource `scaleway_rdb_instance.app` removed → destroy: the database is destroyed with its data"
        )
        .is_some(),
        "{i:#?}"
    );
    let rest = artifact_impacts(without("tofu-address"), &old, &new);
    assert!(rest.iter().any(|x| x.rule == "unknown"), "{rest:#?}");

    let moved =
        format!("{gone}\nmoved {{\n  from = scaleway_rdb_instance.app\n  to   = scaleway_rdb_instance.main\n}}\n");
    let i = artifact_impacts(RULES, &old, &set(&[("tofu/staging/cloud/main.tf", &moved)]));
    assert!(!i.iter().any(|x| x.severity == Severity::Danger), "{i:#?}");
    assert!(
        find(
            &i,
            "tofu-address",
            Severity::Info,
            "`moved` block: `scaleway_rdb_instance.app` → `scaleway_rdb_instance.main`"
        )
        .is_some(),
        "{i:#?}"
    );
}

const GATEWAY: &str = "# h\n\nresource \"scaleway_vpc_public_gateway\" \"gateway\" {\n  name              = var.name\n  bastion_enabled   = var.talos_api_open\n  bastion_port      = 61000\n  allowed_ip_ranges = var.admin_ranges\n}\n";

#[test]
fn a_change_to_the_gateways_bastion_or_a_rule_to_50000_is_danger() {
    let path = "tofu/modules/scaleway-cloud/main.tf";
    let old = set(&[(path, GATEWAY)]);
    for edited in [
        GATEWAY.replace("var.talos_api_open", "true"),
        GATEWAY.replace("var.admin_ranges", "[\"0.0.0.0/0\"]"),
        GATEWAY.replace("  allowed_ip_ranges = var.admin_ranges\n", ""),
        format!(
            "{GATEWAY}\nresource \"scaleway_vpc_public_gateway_pat_rule\" \"talos_api\" {{\n  private_ip   = \"10.0.0.2\"\n  private_port = 50000\n  public_port  = 50001\n}}\n"
        ),
    ] {
        let new = set(&[(path, &edited)]);
        let i = artifact_impacts(RULES, &old, &new);
        let hit = i.iter().find(|x| x.rule == "talos-api-access" && x.severity == Severity::Danger);
        assert!(hit.is_some(), "{edited}\n{i:#?}");
        assert!(!i.iter().any(|x| x.rule == "unknown"), "{i:#?}");
        let rest = artifact_impacts(without("talos-api-access"), &old, &new);
        assert!(!rest.iter().any(|x| x.severity == Severity::Danger), "{rest:#?}");
    }
    // Another attribute of the gateway is not this rule's.
    let renamed = set(&[(path, &GATEWAY.replace("var.name", "\"gw\""))]);
    assert!(!artifact_impacts(RULES, &old, &renamed).iter().any(|x| x.rule == "talos-api-access"));
}

#[test]
fn without_a_base_model_a_changed_schematic_file_is_still_an_install_image_change() {
    let image =
        |id: &str| format!("machine:\n  install:\n    image: factory.talos.dev/scaleway-installer/{id}:v1.12.6\n");
    let old = set(&[
        ("schematics/isolated.yaml", "customization: {}\n"),
        ("talos/staging/main/controlplane.yaml", &image("aaa")),
    ]);
    let new = set(&[
        ("schematics/isolated.yaml", "customization:\n  systemExtensions: {}\n"),
        ("talos/staging/main/controlplane.yaml", &image("bbb")),
    ]);
    let n = fleet(BASE);
    let i = analyze(None, n.fleet.as_ref().unwrap(), &diff_sets(&old, &new));
    let hit = find(
        &i,
        "install-image",
        Severity::Warning,
        "staging/main: install image of the control plane and pool `system`",
    );
    assert!(hit.is_some(), "{i:#?}");
    assert!(!i.iter().any(|x| x.rule == "unknown"), "an installer reference follows from the schematic: {i:#?}");
}

#[test]
fn without_a_base_model_other_files_are_unknown() {
    let old = set(&[("talos/staging/main/cp.yaml", "a: 1\n")]);
    let new = set(&[("talos/staging/main/cp.yaml", "a: 2\n")]);
    let i = artifact_impacts(RULES, &old, &new);
    assert_eq!(i.len(), 1);
    assert_eq!((i[0].rule, i[0].subject.as_str()), ("unknown", "talos/staging/main"));
    assert!(i[0].effect.contains("--base"), "{}", i[0].effect);
}

#[test]
fn a_model_change_the_facts_do_not_cover_is_an_unknown_impact() {
    // `kvm` of a Scaleway size is not a fact (the instance type is); the safety net sees it.
    let i =
        impacts_with(RULES, BASE, &edit("size \"small\" type=\"PRO2-S\"", "size \"small\" type=\"PRO2-S\" kvm=#true"));
    assert_eq!(i.len(), 1, "{i:#?}");
    assert_eq!((i[0].rule, i[0].subject.as_str()), ("unknown", "staging"));
    assert!(i[0].change.contains("do not model"), "{}", i[0].change);
}

const COMMON: &str = "machine:\n  certSANs:\n  - 10.10.0.10\n  features:\n    rbac: true\n    kubePrism:\n      enabled: true\ncluster:\n  discovery:\n    enabled: false\n";

fn talos_change(from: &str, to: &str) -> (ArtifactSet, ArtifactSet) {
    assert!(COMMON.contains(from));
    (
        set(&[("talos/staging/main/common.yaml", COMMON)]),
        set(&[("talos/staging/main/common.yaml", &COMMON.replacen(from, to, 1))]),
    )
}

#[test]
fn a_live_talos_field_change_is_applied_live() {
    let (old, new) = talos_change("  - 10.10.0.10\n", "  - 10.10.0.10\n  - 51.15.200.10\n");
    let i = artifact_impacts(RULES, &old, &new);
    let hit = find(
        &i,
        "talos-fields",
        Severity::Info,
        "staging/main: Talos field `machine.certSANs` changed (common.yaml) → applied live, no reboot",
    );
    assert!(hit.is_some(), "{i:#?}");
    assert!(!i.iter().any(|x| x.rule == "unknown"), "{i:#?}");
    let rest = artifact_impacts(without("talos-fields"), &old, &new);
    assert!(rest.iter().any(|x| x.rule == "unknown" && x.subject == "talos/staging/main"), "{rest:#?}");
}

#[test]
fn a_talos_field_outside_the_live_list_needs_a_reboot() {
    let (old, new) = talos_change("rbac: true", "rbac: false");
    let i = artifact_impacts(RULES, &old, &new);
    let hit = find(
        &i,
        "talos-fields",
        Severity::Warning,
        "Talos field `machine.features.rbac` changed (common.yaml) → reboot",
    );
    assert!(hit.is_some(), "{i:#?}");
    assert!(
        hit.unwrap()
            .effect
            .contains("reboots `main-cp-1`, `main-cp-2`, `main-cp-3`, `main-system-1`, `main-system-2`, one at a time"),
        "{i:#?}"
    );
    let rest = artifact_impacts(without("talos-fields"), &old, &new);
    assert!(rest.iter().any(|x| x.rule == "unknown"), "{rest:#?}");
}

#[test]
fn a_talos_field_at_bootstrap_only_and_one_at_first_provisioning() {
    let (old, new) =
        talos_change("    enabled: false\n", "    enabled: false\n  network:\n    podSubnets:\n    - 10.244.0.0/16\n");
    let i = artifact_impacts(RULES, &old, &new);
    assert!(
        find(
            &i,
            "talos-fields",
            Severity::Warning,
            "`cluster.network.podSubnets` changed (common.yaml) → only at bootstrap"
        )
        .is_some(),
        "{i:#?}"
    );
    let vol = |size: &str| {
        format!("apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nprovisioning:\n  minSize: {size}\n")
    };
    let old = set(&[("talos/staging/main/workers/system.yaml", &vol("100GB"))]);
    let new = set(&[("talos/staging/main/workers/system.yaml", &vol("200GB"))]);
    let i = artifact_impacts(RULES, &old, &new);
    let hit = find(
        &i,
        "talos-fields",
        Severity::Warning,
        "Talos field `VolumeConfig provisioning.minSize` changed (workers/system.yaml) → only at first provisioning",
    );
    assert!(hit.is_some(), "{i:#?}");
}

#[test]
fn an_unknown_talos_field_stays_an_unknown_impact() {
    let (old, new) = talos_change("cluster:\n", "version: 2\ncluster:\n");
    let i = artifact_impacts(RULES, &old, &new);
    assert!(!i.iter().any(|x| x.rule == "talos-fields"), "{i:#?}");
    assert!(i.iter().any(|x| x.rule == "unknown" && x.subject == "talos/staging/main"), "{i:#?}");
}

#[test]
fn a_new_proxmox_node_migrates_the_vms_it_takes_and_a_scale_up_moves_none() {
    let spread = PROXMOX.replace(
        "proxmox endpoint=\"https://pve.example:8006\" node=\"pve1\" router=\"10.10.0.1\" {",
        "proxmox endpoint=\"https://pve.example:8006\" node=\"pve1\" router=\"10.10.0.1\" {\n            nodes \"pve1\" \"pve2\"",
    );
    assert_ne!(spread, PROXMOX);
    let i = impacts_with(RULES, PROXMOX, &spread);
    let hit = find(&i, "machine-arguments", Severity::Warning, "the Proxmox VE node of `main-cp-2` → migrated live");
    assert!(hit.is_some(), "{i:#?}");
    assert!(!i.iter().any(|x| x.change.contains("`main-cp-1`") && x.rule == "machine-arguments"), "{i:#?}");
    assert!(!i.iter().any(|x| x.rule == "unknown" && x.change.contains("pve-nodes")), "{i:#?}");
    // A scale-up places the new machine and moves no other.
    let up = spread.replace(
        "pool \"system\" count=2 {\n                addresses \"10.10.0.21\" \"10.10.0.22\"",
        "pool \"system\" count=3 {\n                addresses \"10.10.0.21\" \"10.10.0.22\" \"10.10.0.23\"",
    );
    assert_ne!(up, spread);
    let i = impacts_with(RULES, &spread, &up);
    assert!(i.iter().all(|x| x.rule != "unknown" && x.rule != "machine-arguments"), "{i:#?}");
}

/// The fleets of `PROXMOX` with `patch` lines, and the patch files they read.
fn with_files(src: &str, files: &[(&str, &str)]) -> crate::compile::Compilation {
    let loader = MapLoader { files: files.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect() };
    let c = compile("fleet.kdl", src, &loader);
    assert!(
        !c.diags.has_errors(),
        "{}",
        crate::diag::render::text(&c.diags, &c.sources, crate::diag::render::Style::PLAIN)
    );
    c
}

fn impacts_of(old: &crate::compile::Compilation, new: &crate::compile::Compilation) -> Vec<Impact> {
    let files = diff_sets(old.artifacts.as_ref().unwrap(), new.artifacts.as_ref().unwrap());
    analyze(old.fleet.as_ref(), new.fleet.as_ref().unwrap(), &files)
}

const UDEV_1: &str = "machine:\n  udev:\n    rules:\n      - SUBSYSTEM==\"drm\", GROUP=\"44\"\n";
const UDEV_2: &str = "machine:\n  udev:\n    rules:\n      - SUBSYSTEM==\"drm\", GROUP=\"44\"\n      - SUBSYSTEM==\"drm\", KERNEL==\"card*\"\n";

/// newcomer-3.md §4: a named node's patch gains a udev rule. The reboot names that one node
/// and the step, and no "a setting the impact rules do not model changed" comes with it.
#[test]
fn a_node_patch_needing_a_reboot_names_its_node_and_nothing_else() {
    let named = PROXMOX.replace(
        "pool \"system\" count=2 {\n                addresses \"10.10.0.21\" \"10.10.0.22\"\n            }",
        "pool \"system\" {\n                node \"w-1\" {\n                    address \"10.10.0.21\"\n                }\n                node \"w-2\" {\n                    address \"10.10.0.22\"\n                    patch \"udev.yaml\"\n                }\n            }",
    );
    assert_ne!(named, PROXMOX);
    let old = with_files(&named, &[("udev.yaml", UDEV_1)]);
    let new = with_files(&named, &[("udev.yaml", UDEV_2)]);
    let i = impacts_of(&old, &new);
    let hit = find(&i, "talos-fields", Severity::Warning, "Talos field `machine.udev.rules` changed (patches/nodes/");
    assert!(hit.is_some(), "{i:#?}");
    assert!(
        hit.unwrap().effect.contains("`fleetc apply lab` (the cluster root) reboots `main-w-2`, one at a time"),
        "{i:#?}"
    );
    assert!(!hit.unwrap().effect.contains("main-w-1"), "{i:#?}");
    assert!(!i.iter().any(|x| x.rule == "unknown"), "{i:#?}");
}

/// On a base already at Talos 1.14 (which gets the 1.13 document model), a patch change is
/// classified, not an unknown impact; 1.14 stores it without a reboot mode.
#[test]
fn a_patch_change_on_talos_1_14_is_classified() {
    let v114 = PROXMOX
        .replace("talos \"v1.13.9\"", "talos \"v1.14.1\"")
        .replace("pool \"system\" count=2 {", "pool \"system\" count=2 {\n                patch \"udev.yaml\"");
    let old = with_files(&v114, &[("udev.yaml", UDEV_1)]);
    let new = with_files(&v114, &[("udev.yaml", UDEV_2)]);
    let i = impacts_of(&old, &new);
    let hit = find(&i, "talos-fields", Severity::Warning, "`machine.udev.rules` changed (patches/workers/system/");
    assert!(hit.is_some(), "{i:#?}");
    let e = &hit.unwrap().effect;
    assert!(
        e.contains("Talos v1.14.1 stores it without rebooting")
            && e.contains("reboot `main-system-1`, `main-system-2`, one at a time"),
        "{e}"
    );
    assert!(!i.iter().any(|x| x.rule == "unknown" || x.effect.contains("unknown impact")), "{i:#?}");
}

/// A patch field the table does not know still gets its line, naming the field and the
/// nodes, even beside a Talos upgrade that explains the cluster's other files.
#[test]
fn an_unknown_patch_field_is_never_hidden_by_another_change() {
    let with =
        PROXMOX.replace("pool \"system\" count=2 {", "pool \"system\" count=2 {\n                patch \"p.yaml\"");
    let bumped = with.replace("talos \"v1.13.9\"", "talos \"v1.14.1\"");
    let old =
        with_files(&with, &[("p.yaml", "apiVersion: v1alpha1\nkind: WatchdogTimerConfig\ndevice: /dev/watchdog0\n")]);
    let new =
        with_files(&bumped, &[("p.yaml", "apiVersion: v1alpha1\nkind: WatchdogTimerConfig\ndevice: /dev/watchdog1\n")]);
    let i = impacts_of(&old, &new);
    let hit = find(&i, "talos-fields", Severity::Warning, "Talos field `WatchdogTimerConfig device` changed");
    assert!(hit.is_some(), "{i:#?}");
    assert!(hit.unwrap().effect.contains("unknown impact on `main-system-1`, `main-system-2`"), "{i:#?}");
}

/// newcomer-3.md §4: a control-plane node's new address is DANGER (machine-arguments), and
/// its `LinkConfig addresses` is then not also "applied live".
#[test]
fn a_danger_address_change_is_not_also_applied_live() {
    let moved = PROXMOX.replace("\"10.10.0.13\"", "\"10.10.0.14\"");
    let i = impacts_with(RULES, PROXMOX, &moved);
    assert!(i.iter().any(|x| x.severity == Severity::Danger && x.rule == "machine-arguments"), "{i:#?}");
    assert!(!i.iter().any(|x| x.effect.contains("applied live") && x.change.contains("addresses")), "{i:#?}");
    assert!(!i.iter().any(|x| x.rule == "unknown"), "{i:#?}");
}
