//! The Cluster API family: names and rollouts, provider IDs, sealed identities, the vendored
//! provider set, and upgrade plans (golden text in `golden/capi-upgrade/`).

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use fleetc::artifacts::ArtifactSet;
use fleetc::compile::{Compilation, FsLoader, compile};
use fleetc::model::Version;
use serde_json::Value;

fn lab_dir() -> PathBuf {
    common::root().join("golden/capi-lab")
}

fn compile_text(dir: &PathBuf, text: &str) -> Compilation {
    compile("fleet.kdl", text, &FsLoader::new(dir))
}

fn lab_text() -> String {
    std::fs::read_to_string(lab_dir().join("fleet.kdl")).unwrap()
}

fn build(text: &str) -> ArtifactSet {
    let c = compile_text(&lab_dir(), text);
    assert!(
        !c.diags.has_errors(),
        "{}",
        fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN)
    );
    c.artifacts.unwrap()
}

/// Every object under `capi/` (vendored copies and sealed.yaml excluded), keyed by kind and name.
fn objects(set: &ArtifactSet) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for (path, bytes) in set.iter() {
        if !path.starts_with("capi/")
            || path.contains("/providers/0")
            || path.contains("/providers/10-")
            || path.ends_with("sealed.yaml")
        {
            continue;
        }
        let docs: Vec<Value> = serde_saphyr::from_multiple(std::str::from_utf8(bytes).unwrap()).unwrap();
        for d in docs {
            let key = (d["kind"].as_str().unwrap().to_owned(), d["metadata"]["name"].as_str().unwrap().to_owned());
            assert!(out.insert(key.clone(), d).is_none(), "{key:?} twice");
        }
    }
    out
}

fn get<'a>(objs: &'a BTreeMap<(String, String), Value>, kind: &str, prefix: &str) -> Vec<&'a Value> {
    objs.iter().filter(|((k, n), _)| k == kind && n.starts_with(prefix)).map(|(_, v)| v).collect()
}

#[test]
fn changing_a_pools_talos_documents_renames_its_config_template_and_repoints_only_its_deployment() {
    let before = objects(&build(&lab_text()));
    let edited =
        lab_text().replace(r#"label "node.acme.example/pool" "workers""#, r#"label "node.acme.example/pool" "batch""#);
    let after = objects(&build(&edited));
    let removed: Vec<_> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let added: Vec<_> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let changed: Vec<_> =
        before.iter().filter(|(k, v)| after.get(*k).is_some_and(|a| a != *v)).map(|(k, _)| k).collect();
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(removed[0].0, "TalosConfigTemplate");
    assert_eq!(added[0].0, "TalosConfigTemplate");
    assert!(removed[0].1.starts_with("edge-1-workers-") && added[0].1.starts_with("edge-1-workers-"));
    assert_ne!(removed[0].1, added[0].1);
    assert_eq!(
        changed,
        vec![&("MachineDeployment".to_owned(), "edge-1-workers".to_owned())],
        "only the deployment changes"
    );
    let md_before = &before[&("MachineDeployment".to_owned(), "edge-1-workers".to_owned())];
    let mut md_after = after[&("MachineDeployment".to_owned(), "edge-1-workers".to_owned())].clone();
    assert_eq!(
        md_after["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"],
        Value::String(added[0].1.clone())
    );
    md_after["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"] = Value::String(removed[0].1.clone());
    assert_eq!(&md_after, md_before, "nothing else in the deployment changes");
}

#[test]
fn changing_a_pools_size_renames_its_machine_template_only() {
    let before = objects(&build(&lab_text()));
    let after = objects(&build(&lab_text().replace(r#"size "medium" cores=8"#, r#"size "medium" cores=12"#)));
    let renamed: Vec<_> = before.keys().filter(|k| !after.contains_key(*k)).map(|k| k.0.as_str()).collect();
    assert!(renamed.iter().all(|k| *k == "ProxmoxMachineTemplate") && !renamed.is_empty(), "{renamed:?}");
    assert!(after.keys().all(|k| before.contains_key(k) || k.0 == "ProxmoxMachineTemplate"));
}

#[test]
fn every_machine_gets_the_capmox_provider_id_and_a_ccm_that_sets_it() {
    let objs = objects(&build(&lab_text()));
    let templates = get(&objs, "ProxmoxMachineTemplate", "edge-1-");
    assert_eq!(templates.len(), 3);
    for t in templates {
        assert_eq!(t["spec"]["template"]["spec"]["metadataSettings"]["providerIDInjection"], Value::Bool(true));
    }
    // The CCM's settings ride in the talos family's common and control-plane documents: every
    // machine's kubelet waits for the CCM (D1), and the control plane lets the Talos CCM read
    // the Talos API (D2).
    let patches_of = |o: &Value, path: &str| -> Vec<Value> {
        o.pointer(path)
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|p| serde_saphyr::from_str::<Value>(p.as_str().unwrap()).unwrap())
            .collect()
    };
    let ecp = |patches: &[Value]| patches.iter().any(|p| p["cluster"]["externalCloudProvider"]["enabled"] == true);
    let access = |patches: &[Value]| {
        patches.iter().find_map(|p| p.pointer("/machine/features/kubernetesTalosAPIAccess").cloned())
    };
    let tcp = &get(&objs, "TalosControlPlane", "edge-1")[0];
    let cp_patches = patches_of(tcp, "/spec/controlPlaneConfig/controlplane/strategicPatches");
    assert!(ecp(&cp_patches));
    assert_eq!(
        access(&cp_patches),
        Some(
            serde_json::json!({"enabled": true, "allowedRoles": ["os:reader"], "allowedKubernetesNamespaces": ["kube-system"]})
        )
    );
    for t in get(&objs, "TalosConfigTemplate", "edge-1-") {
        let patches = patches_of(t, "/spec/template/spec/strategicPatches");
        assert!(ecp(&patches));
        assert_eq!(access(&patches), None, "workers never get Talos API access");
    }
    // Without the add-on: no CCM settings, and a warning that says why.
    let text = lab_text().replace(r#"addons "cilium" "talos-ccm""#, r#"addons "cilium""#);
    let c = compile_text(&lab_dir(), &text);
    assert!(c.diags.iter().any(|d| d.code.name == "fleet::capi::no-provider-id"));
    let objs = objects(&c.artifacts.unwrap());
    let tcp = &get(&objs, "TalosControlPlane", "edge-1")[0];
    let cp_patches = patches_of(tcp, "/spec/controlPlaneConfig/controlplane/strategicPatches");
    assert!(!ecp(&cp_patches) && access(&cp_patches).is_none());
}

#[test]
fn every_worker_pool_has_a_health_check_that_can_remediate_it() {
    // R6: `40%` of a 2-machine pool rounds down to 0, and the check never remediates.
    let objs = objects(&build(&lab_text()));
    // One per pool (`workers`: 2 machines, `gpu`: 1), each watching its own MachineDeployment.
    let checks = get(&objs, "MachineHealthCheck", "edge-1-");
    assert_eq!(checks.len(), 2);
    for (name, mhc) in [("edge-1-gpu", checks[0]), ("edge-1-workers", checks[1])] {
        assert_eq!(mhc["metadata"]["name"], name);
        assert_eq!(mhc["spec"]["selector"]["matchLabels"]["cluster.x-k8s.io/deployment-name"], name);
        assert_eq!(mhc["spec"]["remediation"]["triggerIf"]["unhealthyLessThanOrEqualTo"], 1);
    }
    assert_eq!(fleetc::emit::capi::max_unhealthy(2), 1);
    assert_eq!(fleetc::emit::capi::max_unhealthy(1), 1);
    assert_eq!(fleetc::emit::capi::max_unhealthy(5), 2);
}

#[test]
fn providers_are_fetched_from_a_release_asset_of_the_pinned_version() {
    // R1: clusterctl refuses a bare `…/releases` URL ("invalid url").
    let objs = objects(&build(&lab_text()));
    let text = lab_text();
    for (kind, asset) in [
        ("CoreProvider", "core-components.yaml"),
        ("BootstrapProvider", "bootstrap-components.yaml"),
        ("ControlPlaneProvider", "control-plane-components.yaml"),
        ("InfrastructureProvider", "infrastructure-components.yaml"),
        ("IPAMProvider", "ipam-components.yaml"),
    ] {
        let p = objs.iter().find(|((k, _), _)| k == kind).map(|(_, v)| v).unwrap_or_else(|| panic!("{kind}"));
        let version = p["spec"]["version"].as_str().unwrap();
        let url = p["spec"]["fetchConfig"]["url"].as_str().unwrap();
        let segments: Vec<&str> = url.trim_start_matches("https://github.com/").split('/').collect();
        assert_eq!(segments.len(), 5, "{url}: owner/repo/releases/<tag>/<asset>");
        assert_eq!(&segments[2..], ["releases", version, asset], "{url}");
        assert!(text.contains(&format!("\"{}\"", version.trim_start_matches('v'))), "{version} is the pin");
    }
}

#[test]
fn talos_documents_capi_provides_otherwise_are_not_patches() {
    let objs = objects(&build(&lab_text()));
    let tcp = &get(&objs, "TalosControlPlane", "edge-1")[0];
    let patches: Vec<&str> = tcp["spec"]["controlPlaneConfig"]["controlplane"]["strategicPatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(patches.iter().all(|p| !p.contains("kind: VolumeConfig")));
    // C2 (capi-argocd.md): the shared address is a Layer2VIPConfig on the aliased link, never
    // the deprecated v1alpha1 `machine.network.interfaces[].vip`.
    assert!(
        patches.iter().any(|p| p.contains("kind: Layer2VIPConfig")
            && p.contains("name: \"192.168.50.20\"")
            && p.contains("link: net0")),
        "the API address is a Layer2VIPConfig"
    );
    assert!(patches.iter().any(|p| p.contains("kind: LinkAliasConfig") && p.contains("name: net0")));
    assert!(patches.iter().all(|p| !p.contains("interfaces:") && !p.contains("vip:")), "no deprecated vip");
    assert!(patches[0].contains("validSubnets:\n      - 192.168.50.0/24"), "R18 reaches the kubelet");
    let gpu = &get(&objs, "MachineDeployment", "edge-1-gpu")[0];
    assert_eq!(gpu["spec"]["template"]["spec"]["version"], "v1.35.4", "a pool pin is the deployment's version");
    assert_eq!(tcp["spec"]["version"], "v1.36.2");
    assert_eq!(tcp["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"], 1);
}

#[test]
fn the_identity_comes_from_the_sealed_bundle_and_never_from_out() {
    let set = build(&lab_text());
    let sealed: Value =
        serde_saphyr::from_str(std::str::from_utf8(set.get("capi/mgmt/sealed.yaml").unwrap()).unwrap()).unwrap();
    let talos =
        sealed["secrets"].as_array().unwrap().iter().find(|s| s["name"] == "edge-1-talos").expect("edge-1-talos");
    let objs = objects(&set);
    let cluster = &get(&objs, "Cluster", "edge-1")[0];
    assert_eq!(talos["namespace"], cluster["metadata"]["namespace"], "CABPT looks in the cluster's namespace");
    assert_eq!(talos["keys"], serde_json::json!(["bundle"]));
    assert_eq!(talos["sealedInput"], "talos-secrets");
    // C3 (capi-argocd.md): CABPT reads the bundle (CACPPT reads only what CABPT derives), and
    // the file says to create each namespace before its Secret, and both before what reads it.
    assert!(talos["usedBy"].as_str().unwrap().starts_with("CABPT ("), "{}", talos["usedBy"]);
    assert!(!talos["usedBy"].as_str().unwrap().contains("CABPT and CACPPT"));
    let header = std::str::from_utf8(set.get("capi/mgmt/sealed.yaml").unwrap()).unwrap();
    assert!(header.contains("each Secret's namespace\n# first"), "{header}");
    assert!(!header.contains("before applying anything under"), "{header}");
    for (path, bytes) in set.iter() {
        let text = std::str::from_utf8(bytes).unwrap();
        assert!(!text.contains("kind: Secret\n"), "{path} holds a Secret");
    }
    let text = lab_text().replace("            sealed \"talos-secrets\"\n        }\n    }", "        }\n    }");
    assert_ne!(text, lab_text());
    let c = compile_text(&lab_dir(), &text);
    assert!(c.diags.iter().any(|d| d.code.name == "fleet::capi::identity-not-sealed"));
}

#[test]
fn provider_set_splits_vendored_manifests_byte_for_byte() {
    let set = build(&lab_text());
    for (vendored, name) in
        [("cert-manager-1.19.1.yaml", "00-cert-manager.yaml"), ("capi-operator-0.24.0.yaml", "10-capi-operator.yaml")]
    {
        let original = std::fs::read_to_string(lab_dir().join("vendor").join(vendored)).unwrap();
        let crds =
            std::str::from_utf8(set.get(&format!("capi/mgmt/providers/00-crds/{name}")).unwrap()).unwrap().to_owned();
        let rest = std::str::from_utf8(set.get(&format!("capi/mgmt/providers/10-controllers/{name}")).unwrap())
            .unwrap()
            .to_owned();
        let docs = fleetc::emit::capi::providers::documents(&original);
        assert!(docs.len() >= 2);
        for d in docs {
            let in_crds = crds.contains(d);
            assert!(in_crds ^ rest.contains(d), "each document is in exactly one directory:\n{d}");
            assert_eq!(in_crds, d.contains("kind: CustomResourceDefinition"));
        }
    }
    let providers = std::str::from_utf8(set.get("capi/mgmt/providers/20-providers/providers.yaml").unwrap()).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(providers).unwrap();
    let kinds: Vec<&str> = docs
        .iter()
        .filter(|d| d["apiVersion"] == "operator.cluster.x-k8s.io/v1alpha2")
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["CoreProvider", "BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider", "IPAMProvider"]
    );
    let core = docs.iter().find(|d| d["kind"] == "CoreProvider").unwrap();
    assert_eq!(core["spec"]["version"], "v1.12.10");
    let infra = docs.iter().find(|d| d["kind"] == "InfrastructureProvider").unwrap();
    assert_eq!(infra["spec"]["configSecret"]["name"], "capmox-variables");
    assert_eq!(infra["spec"]["version"], "v0.9.0");
}

/// controllers-3 D6: CAPMOX verifies the Proxmox API's certificate unless fleet.kdl says
/// `insecure=#true`, the same value the OpenTofu provider gets (one model field, both
/// families): `PROXMOX_INSECURE` on CAPMOX's `manager` container, which its manager reads as
/// `--proxmox-insecure`'s default (ionos-cloud/cluster-api-provider-proxmox v0.9.0
/// `cmd/main.go` l.263-265: anything but `false` skips verification).
#[test]
fn capmox_verifies_the_proxmox_certificate_as_opentofu_does() {
    let env_of = |text: &str| {
        let set = build(text);
        let providers = std::str::from_utf8(set.get("capi/mgmt/providers/20-providers/providers.yaml").unwrap())
            .unwrap()
            .to_owned();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&providers).unwrap();
        let infra = docs.iter().find(|d| d["kind"] == "InfrastructureProvider").unwrap().clone();
        let tfvars = std::str::from_utf8(set.get("tofu/lab/cloud/lab.auto.tfvars").expect("the cloud root's values"))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("proxmox_insecure = ").map(str::to_owned))
            .expect("proxmox_insecure in the values");
        (infra["spec"]["deployment"]["containers"].clone(), tfvars)
    };
    let verified = lab_text();
    assert!(!verified.contains("insecure="), "golden/capi-lab states no `insecure`");
    let (containers, tofu) = env_of(&verified);
    assert_eq!(
        containers,
        serde_json::json!([{"name": "manager", "env": [{"name": "PROXMOX_INSECURE", "value": "false"}]}])
    );
    let insecure = verified.replacen("router=\"192.168.50.1\"", "insecure=#true router=\"192.168.50.1\"", 1);
    let (containers, tofu_insecure) = env_of(&insecure);
    assert_eq!(containers[0]["env"][0]["value"], "true");
    assert_eq!((tofu.as_str(), tofu_insecure.as_str()), ("false", "true"), "OpenTofu gets the same value");
}

/// controllers-3 D4, the case beside the endpoint one: two managed clusters whose IP pools
/// share addresses would give two machines one address (each pool's IPAM hands out its own).
#[test]
fn two_managed_clusters_pools_may_not_overlap() {
    let with_second = |pool: &str| {
        let edge = lab_text();
        let start = edge.find("        cluster \"edge-1\"").expect("edge-1 in golden/capi-lab");
        let block_end = start + edge[start..].find("\n        }\n").expect("its block") + "\n        }\n".len();
        let second = edge[start..block_end]
            .replace("\"edge-1\"", "\"edge-2\"")
            .replace("192.168.50.20\"", "192.168.50.30\"")
            .replace("192.168.50.100-192.168.50.150", pool);
        let text = format!("{}{second}{}", &edge[..block_end], &edge[block_end..]);
        let c = compile_text(&lab_dir(), &text);
        c.diags
            .iter()
            .filter(|d| d.code.name == "fleet::network::duplicate-address")
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        with_second("192.168.50.140-192.168.50.190"),
        ["the IP pools of clusters `edge-1` and `edge-2` overlap"]
    );
    assert!(with_second("192.168.50.160-192.168.50.210").is_empty());
}

#[test]
fn emission_is_deterministic() {
    assert_eq!(build(&lab_text()), build(&lab_text()));
}

fn upgrade_fleet() -> fleetc::model::Fleet {
    let c = common::compile_file(&common::root().join("golden/capi-upgrade/fleet.kdl"));
    assert!(!c.diags.has_errors());
    c.fleet.unwrap()
}

fn check_golden(name: &str, actual: &str) {
    let path = common::root().join("golden/capi-upgrade").join(name);
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(expected, actual, "{} differs (UPDATE_GOLDEN=1 rewrites it)", path.display());
}

#[test]
fn golden_upgrade_plan_1_33_to_1_36_for_a_managed_cluster() {
    let v = |s: &str| s.parse::<Version>().unwrap();
    let plan = fleetc::plan::upgrade::plan(&upgrade_fleet(), "lab/edge-1", v("1.36.2"), Some(v("v1.13.9"))).unwrap();
    check_golden("upgrade-plan-edge-1.txt", &plan.to_string());
    let titles: Vec<&str> = plan.steps.iter().map(|s| s.title.as_str()).collect();
    let pos =
        |p: &str| titles.iter().position(|t| t.starts_with(p)).unwrap_or_else(|| panic!("no step `{p}` in {titles:?}"));
    // One minor at a time, in order; Talos and the core provider before 1.36; workers last.
    assert!(pos("control plane to Kubernetes 1.34") < pos("control plane to Kubernetes 1.35"));
    assert!(pos("control plane to Kubernetes 1.35") < pos("raise Talos v1.12.6 → v1.13.9"));
    assert!(pos("raise Talos") < pos("control plane to Kubernetes 1.36.2"));
    // R12: core 1.12.9 already manages 1.36 (≥ v1.12.8), so no core step; intermediate minors
    // go to their newest known patch; CABPT and CACPPT are raised before the Talos they must
    // generate configs for (R7).
    assert!(titles.iter().all(|t| !t.contains("Cluster API core")), "{titles:?}");
    assert!(pos("control plane to Kubernetes 1.34.1") < pos("control plane to Kubernetes 1.35.2"));
    assert!(pos("raise CABPT 0.6.11 → 0.6.12") < pos("raise Talos"));
    assert!(pos("raise CACPPT 0.5.12 → 0.5.13") < pos("raise Talos"));
    assert_eq!(pos("worker pools to Kubernetes 1.36.2"), titles.len() - 1);
    // Workers stay pinned while the control plane moves.
    let cp134 = &plan.steps[pos("control plane to Kubernetes 1.34")];
    assert!(cp134.edits.iter().any(|e| e.contains(r#"pool "workers" kubernetes="1.33.4""#)));
}

#[test]
fn golden_upgrade_plan_for_a_cluster_built_by_opentofu() {
    let v = |s: &str| s.parse::<Version>().unwrap();
    let plan = fleetc::plan::upgrade::plan(&upgrade_fleet(), "lab/mgmt", v("1.35.1"), None).unwrap();
    check_golden("upgrade-plan-mgmt.txt", &plan.to_string());
    assert!(plan.steps.iter().all(|s| !s.title.starts_with("worker pools")), "upgrade-k8s upgrades every kubelet");
    assert!(plan.to_string().contains("talosctl upgrade-k8s --to 1.35.1"));
}

#[test]
fn no_plan_downgrades() {
    let v = |s: &str| s.parse::<Version>().unwrap();
    assert!(
        fleetc::plan::upgrade::plan(&upgrade_fleet(), "lab/edge-1", v("1.32.0"), None).unwrap_err().contains("older")
    );
}

#[test]
fn changing_the_control_planes_talos_documents_repoints_its_machine_template() {
    let before = objects(&build(&lab_text()));
    let edited = lab_text().replace("endpoint address=\"192.168.50.20\"", "endpoint address=\"192.168.50.21\"");
    let after = objects(&build(&edited));
    let cp = |o: &BTreeMap<(String, String), Value>| {
        o[&("TalosControlPlane".to_owned(), "edge-1".to_owned())]["spec"]["infrastructureTemplate"]["name"].clone()
    };
    assert_ne!(cp(&before), cp(&after), "a new control-plane config means a new template name, so CACPPT rolls");
}

/// Talos cannot merge two install-disk size matchers (siderolabs/talos v1.13.9
/// `pkg/machinery/config/merge/merge.go`: "left < 100GB is not settable"), so CABPT's
/// `configpatcher.Apply` fails and no machine boots: one matcher per machine, and it selects the
/// boot volume CAPMOX creates, `sizeGb` read by Proxmox as GiB (the harness's Talos oracle
/// merges these patches with CABPT's own code path).
#[test]
fn each_machine_selects_its_install_disk_once_by_the_boot_volume_in_gib() {
    let objs = objects(&build(&lab_text()));
    let size_g = |name: &str| -> u64 {
        let t = objs.iter().find(|((k, n), _)| k == "ProxmoxMachineTemplate" && n == name).unwrap().1;
        t["spec"]["template"]["spec"]["disks"]["bootVolume"]["sizeGb"].as_u64().unwrap()
    };
    let check = |patches: &Vec<Value>, template: &str| {
        let selectors: Vec<&str> =
            patches.iter().map(|p| p.as_str().unwrap()).filter(|p| p.contains("diskSelector")).collect();
        assert_eq!(selectors.len(), 1, "one install-disk selector, not {}: {selectors:?}", selectors.len());
        let want = format!("size: < {}GiB", size_g(template) + 1);
        assert!(selectors[0].contains(&want), "{want} in {}", selectors[0]);
    };
    let tcp = &get(&objs, "TalosControlPlane", "edge-1")[0];
    let template = tcp["spec"]["infrastructureTemplate"]["name"].as_str().unwrap();
    check(tcp["spec"]["controlPlaneConfig"]["controlplane"]["strategicPatches"].as_array().unwrap(), template);
    for md in get(&objs, "MachineDeployment", "edge-1-") {
        let spec = &md["spec"]["template"]["spec"];
        let cfg = spec["bootstrap"]["configRef"]["name"].as_str().unwrap();
        let tct = objs.iter().find(|((k, n), _)| k == "TalosConfigTemplate" && n == cfg).unwrap().1;
        check(
            tct["spec"]["template"]["spec"]["strategicPatches"].as_array().unwrap(),
            spec["infrastructureRef"]["name"].as_str().unwrap(),
        );
    }
}

/// The fleet.kdl text after every edit of `plan` (the edit forms `upgrade-plan` writes).
fn apply_plan(text: &str, plan: &fleetc::plan::upgrade::Plan) -> String {
    let mut text = text.to_owned();
    for step in &plan.steps {
        for e in &step.edits {
            let q: Vec<&str> = e.split('"').collect();
            if let Some(rest) = e.strip_prefix("cluster \"")
                && !e.contains("cluster-api")
            {
                // cluster "<name>" { <field> "<v>" }: replace the cluster's own line, or add one.
                let (name, field, v) = (q[1], q[2].trim_start_matches(" { ").trim(), q[3]);
                let _ = rest;
                let head = format!("cluster \"{name}\"");
                let start = text.find(&head).unwrap();
                let open = start + text[start..].find("{\n").unwrap() + 2;
                let end = open + text[open..].find("\n        }\n").unwrap();
                let block = &text[open..end];
                let new_block = match block.find(&format!("            {field} \"")) {
                    Some(i) => {
                        let j = i + block[i..].find('\n').unwrap();
                        format!("{}            {field} \"{v}\"{}", &block[..i], &block[j..])
                    }
                    None => format!("            {field} \"{v}\"\n{block}"),
                };
                text.replace_range(open..end, &new_block);
            } else if e.contains("cluster-api {") {
                // cluster "<mgmt>" { cluster-api { <field> "<v>" } }
                let (field, v) = (q[2].trim_start_matches(" { cluster-api { ").trim(), q[3]);
                let i = text.find(&format!("                {field} \"")).unwrap();
                let j = i + text[i..].find('\n').unwrap();
                text.replace_range(i..j, &format!("                {field} \"{v}\""));
            } else if e.starts_with("pool \"") && e.contains("kubernetes=\"") && !e.contains("stays behind") {
                let (pool, v) = (q[1], q[3]);
                let head = format!("pool \"{pool}\"");
                let i = text.find(&head).unwrap() + head.len();
                text.insert_str(i, &format!(" kubernetes=\"{v}\""));
            }
            // "pool …: remove `kubernetes=`" and "(stays behind …)": the base has no pin.
        }
    }
    text
}

fn upgrade_text() -> String {
    std::fs::read_to_string(common::root().join("golden/capi-upgrade/fleet.kdl")).unwrap()
}

fn compile_upgrade(text: &str) -> Compilation {
    compile("fleet.kdl", text, &FsLoader::new(common::root().join("golden/capi-upgrade")))
}

/// Item 4: the plan's end state passes `check` (no error, and no CABPT/CACPPT outside its
/// stated support), and every version it proposes is a release fleetc knows.
#[test]
fn an_upgrade_plans_end_state_passes_check() {
    let v = |s: &str| s.parse::<Version>().unwrap();
    let plan = fleetc::plan::upgrade::plan(&upgrade_fleet(), "lab/edge-1", v("1.36.2"), Some(v("v1.13.9"))).unwrap();
    let end = apply_plan(&upgrade_text(), &plan);
    assert!(end.contains("talos \"v1.13.9\"") && end.contains("control-plane-talos \"0.5.13\""), "{end}");
    let c = compile_upgrade(&end);
    let rendered = fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN);
    assert!(!c.diags.has_errors(), "{rendered}");
    assert!(!rendered.contains("CABPT 0.") && !rendered.contains("CACPPT 0."), "{rendered}");
    // Each step's own state passes too: apply the steps one by one.
    for n in 1..=plan.steps.len() {
        let partial = fleetc::plan::upgrade::Plan { heading: String::new(), steps: plan.steps[..n].to_vec() };
        let c = compile_upgrade(&apply_plan(&upgrade_text(), &partial));
        assert!(
            !c.diags.has_errors(),
            "after step {n}: {}",
            fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN)
        );
    }
}

/// R11 (capi-argocd.md): a target that needs a Talos minor fleetc cannot emit is refused, not
/// planned; C4: an explicit `--talos` that cannot run the target is refused, never overridden.
#[test]
fn upgrade_plans_refuse_what_fleetc_cannot_emit_and_never_override_talos() {
    let v = |s: &str| s.parse::<Version>().unwrap();
    let fleet = upgrade_fleet();
    // Kubernetes 1.38 needs Talos 1.15, newer than the versions table (the OpenTofu-built
    // management cluster: a managed one stops earlier, at CABPT's support of Talos 1.14).
    let e = fleetc::plan::upgrade::plan(&fleet, "lab/mgmt", v("1.38.0"), None).unwrap_err();
    assert!(e.contains("talos-unsupported"), "{e}");
    let e = fleetc::plan::upgrade::plan(&fleet, "lab/edge-1", v("1.37.0"), None).unwrap_err();
    assert!(e.contains("no CABPT 0.6 release fleetc knows states support for Talos 1.14"), "{e}");
    let e = fleetc::plan::upgrade::plan(&fleet, "lab/edge-1", v("1.36.2"), Some(v("v1.12.11"))).unwrap_err();
    assert!(e.contains("v1.12.11 (--talos)"), "{e}");
    // Without --talos the newest known patch of the needed minor is proposed, and the heading
    // says where the plan ends.
    let plan = fleetc::plan::upgrade::plan(&fleet, "lab/edge-1", v("1.36.2"), None).unwrap();
    assert!(plan.heading.ends_with("Talos v1.12.6 → v1.13.9"), "{}", plan.heading);
}

/// R13 (capi-argocd.md): a management cluster's own Kubernetes stays inside its core's
/// management range: the core is raised first.
#[test]
fn upgrading_a_management_cluster_raises_its_core_first() {
    let v = |s: &str| s.parse::<Version>().unwrap();
    let text =
        upgrade_text().replace("core \"1.12.9\"", "core \"1.12.7\"").replace("talos \"v1.12.6\"", "talos \"v1.13.9\"");
    let c = compile_upgrade(&text);
    assert!(!c.diags.has_errors());
    let plan = fleetc::plan::upgrade::plan(c.fleet.as_ref().unwrap(), "lab/mgmt", v("1.36.3"), None).unwrap();
    let titles: Vec<&str> = plan.steps.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles[0], "control plane to Kubernetes 1.35.2", "1.12.7 runs on 1.35");
    assert!(titles[1].starts_with("raise Cluster API core 1.12.7 → 1.12.11 on `mgmt`"), "{titles:?}");
    assert_eq!(titles[2], "control plane to Kubernetes 1.36.3");
    let end = apply_plan(&text, &plan);
    let c = compile_upgrade(&end);
    assert!(
        !c.diags.has_errors(),
        "{}",
        fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN)
    );
}
