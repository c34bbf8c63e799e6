//! One test per content rule of the Talos documents: each asserts the specific field and value,
//! so that removing the behaviour fails it.

use super::*;
use crate::compile::{MapLoader, compile};
use crate::diag::render::{Style, text};
use crate::model::Version;

const CILIUM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cilium-config\n  namespace: kube-system\ndata:\n  kube-proxy-replacement: \"true\"\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: cilium\n  namespace: kube-system\nspec:\n  selector:\n    matchLabels:\n      k8s-app: cilium\n  template:\n    metadata:\n      labels:\n        k8s-app: cilium\n    spec:\n      containers:\n      - name: cilium-agent\n        env:\n        - name: KUBERNETES_SERVICE_HOST\n          value: \"localhost\"\n        - name: KUBERNETES_SERVICE_PORT\n          value: \"7445\"\n";
const CCM: &str = "# a comment, kept byte for byte\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ccm\n  namespace: kube-system\n";

fn sha(s: &str) -> String {
    crate::digest::sha256_hex(s.as_bytes())
}

/// A Scaleway fleet (`staging`/`main`) and a Proxmox one (`lab`/`main`, `lab`/`edge`), with
/// `cilium` given as `cilium_text`.
fn fleet_with(cilium_text: &str, talos: &str, extra_cluster: &str) -> Fleet {
    fleet_full(cilium_text, CCM, talos, extra_cluster)
}

/// [`fleet_with`], with the `ccm` add-on given as `ccm_text`.
fn fleet_full(cilium_text: &str, ccm_text: &str, talos: &str, extra_cluster: &str) -> Fleet {
    let kdl = format!(
        r#"fleet "t" {{
    talos "{talos}"
    kubernetes "1.34.1"
    schematic "isolated" {{
        extension "siderolabs/gvisor"
        extension "siderolabs/kata-containers"
    }}
    schematic "plain" {{
        extension "siderolabs/gvisor"
        extension "siderolabs/kata-containers"
        extension "siderolabs/iscsi-tools"
    }}
    addon "cilium" version="1.18.4" manifest="cilium.yaml" sha256="{cs}"
    addon "ccm" version="0.30.0" manifest="ccm.yaml" sha256="{ms}"
    environment "staging" {{
        scaleway project="11111111-2222-3333-4444-555555555555" region="fr-par" zone="fr-par-2" {{
            size "s" type="PRO2-S" kvm=#true
        }}
        state bucket="b"
        network "10.10.0.0/22"
        gateway "51.15.200.10"
        admin-ranges "203.0.113.0/24"
        cluster "main" {{
            cni "cilium"
            addons "cilium" "ccm"
            runtimes "gvisor" "kata"
            pod-cidr "10.244.0.0/16"
            service-cidr "10.96.0.0/12"
            cert-sans "api.example.org" "10.10.0.10"
            endpoint address="10.10.0.10"
            pool-defaults schematic="isolated" size="s"
            control-plane count=3
            pool "system" count=2 ephemeral-min-size="50GB" schematic="plain" {{
                label "node.example/pool" "system"
                annotation "node.example/rack" "r13 a25, row 2"
                taint "dedicated" "system" effect="NoSchedule"
                taint "quiet" effect="PreferNoSchedule"
            }}
            {extra_cluster}
        }}
    }}
    environment "lab" {{
        proxmox endpoint="https://pve:8006" node="pve1" router="192.168.50.1" {{
            dns "192.168.50.2" "192.168.50.3"
            size "m" cores=4 memory="8GiB" kvm=#true
        }}
        state bucket="b" region="fr-par" endpoint="https://s3.fr-par.scw.cloud"
        network "192.168.50.0/24"
        cluster "main" {{
            endpoint address="192.168.50.10"
            pool-defaults schematic="isolated" size="m" ephemeral-min-size="64GiB"
            control-plane count=3 {{
                addresses "192.168.50.11" "192.168.50.12" "192.168.50.13"
            }}
            sealed "proxmox-api"
            cluster-api {{
                core "1.12.10"
                bootstrap-talos "0.6.11"
                control-plane-talos "0.5.12"
                infrastructure-proxmox "0.9.0"
                ipam-in-cluster "1.1.0"
                operator version="0.24.0" manifest="cilium.yaml" sha256="{cs}"
            }}
        }}
        cluster "edge" managed-by="main" {{
            endpoint address="192.168.50.20"
            ip-pool "192.168.50.100-192.168.50.150"
            pool-defaults schematic="isolated" size="m"
            control-plane count=3
            pool "workers" count=2
            sealed "talos-secrets"
        }}
    }}
}}"#,
        cs = sha(cilium_text),
        ms = sha(ccm_text)
    );
    let mut loader = MapLoader::default();
    loader.files.insert("cilium.yaml".into(), cilium_text.into());
    loader.files.insert("ccm.yaml".into(), ccm_text.into());
    let c = compile("fleet.kdl", &kdl, &loader);
    assert!(!c.diags.has_errors(), "{}", text(&c.diags, &c.sources, Style::PLAIN));
    c.fleet.expect("a fleet")
}

fn fleet() -> Fleet {
    fleet_with(CILIUM, "v1.13.9", "")
}

fn docs_of(fleet: &Fleet, env: &str, cluster: &str) -> TalosDocs {
    let env = fleet.environment(env).unwrap();
    cluster_documents(fleet, env, env.cluster(cluster).unwrap()).unwrap()
}

fn machine(set: &DocSet) -> &Machine {
    set.v1alpha1().and_then(|v| v.machine.as_ref()).expect("a machine section")
}

fn cluster_patch(set: &DocSet) -> &ClusterPatch {
    set.v1alpha1().and_then(|v| v.cluster.as_ref()).expect("a cluster section")
}

fn volume(set: &DocSet) -> &VolumeConfig {
    set.docs
        .iter()
        .find_map(|d| match d {
            Document::Volume(v) => Some(v),
            _ => None,
        })
        .expect("a VolumeConfig")
}

#[test]
fn layout_is_common_roles_pools_and_nodes() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    let paths: Vec<&str> = d.files().map(|s| s.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "talos/staging/main/common.yaml",
            "talos/staging/main/controlplane.yaml",
            "talos/staging/main/workers/system.yaml",
            "talos/staging/main/nodes/main-cp-1.yaml",
            "talos/staging/main/nodes/main-cp-2.yaml",
            "talos/staging/main/nodes/main-cp-3.yaml",
            "talos/staging/main/nodes/main-system-1.yaml",
            "talos/staging/main/nodes/main-system-2.yaml",
        ]
    );
    for s in d.files() {
        assert!(s.text.starts_with(&format!("# {HEADER}\n")), "{}", s.path);
    }
    let managed = docs_of(&f, "lab", "edge");
    assert!(managed.nodes.is_empty(), "a Cluster API template cannot carry per-node documents");
    assert!(managed.workers.contains_key("workers"));
}

#[test]
fn install_image_is_the_pools_schematic_installer() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    let cp = machine(&d.controlplane).install.as_ref().unwrap();
    let isolated = f.schematic("isolated").unwrap();
    assert_eq!(cp.image, format!("factory.talos.dev/scaleway-installer/{}:v1.13.9", isolated.id));
    let w = machine(&d.workers["system"]).install.as_ref().unwrap();
    assert_eq!(w.image, f.schematic("plain").unwrap().installer("scaleway", Version::new(1, 13, 9), false));
    assert_ne!(w.image, cp.image);
    let lab = docs_of(&f, "lab", "main");
    assert!(
        machine(&lab.controlplane).install.as_ref().unwrap().image.starts_with("factory.talos.dev/nocloud-installer/")
    );
    assert!(machine(&d.common).install.is_none(), "the installer is a pool's, not the cluster's");
}

#[test]
fn install_disk_is_chosen_by_size_below_the_ephemeral_minimum() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    let sel = |s: &DocSet| machine(s).install.as_ref().unwrap().disk_selector.as_ref().unwrap().size.clone().unwrap();
    assert_eq!(sel(&d.controlplane), "< 100GB");
    assert_eq!(sel(&d.workers["system"]), "< 50GB");
    assert_eq!(sel(&docs_of(&f, "lab", "main").controlplane), "< 64GiB");
}

#[test]
fn cert_sans_hold_endpoint_gateway_then_user_sans_once() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    // The Talos API's certificate also names the loopback address the Scaleway tunnel
    // listens on (R13); the Kubernetes API server's does not.
    assert_eq!(machine(&d.common).cert_sans, ["10.10.0.10", "51.15.200.10", "127.0.0.1", "api.example.org"]);
    let want = ["10.10.0.10", "51.15.200.10", "api.example.org"];
    assert_eq!(cluster_patch(&d.controlplane).api_server.as_ref().unwrap().cert_sans, want);
    let lab = docs_of(&f, "lab", "main");
    assert_eq!(machine(&lab.common).cert_sans, ["192.168.50.10"]);
}

#[test]
fn kubelet_node_ip_is_the_private_network() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    assert_eq!(machine(&d.common).kubelet.as_ref().unwrap().node_ip.as_ref().unwrap().valid_subnets, ["10.10.0.0/22"]);
    let lab = docs_of(&f, "lab", "main");
    assert_eq!(
        machine(&lab.common).kubelet.as_ref().unwrap().node_ip.as_ref().unwrap().valid_subnets,
        ["192.168.50.0/24"]
    );
}

#[test]
fn ephemeral_volume_is_selected_by_size_off_the_system_disk() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    let cp = volume(&d.controlplane);
    assert_eq!(cp.name, "EPHEMERAL");
    assert_eq!(cp.provisioning.as_ref().unwrap().disk_selector.expr, "!system_disk && disk.size >= 100u * GB");
    assert_eq!(
        volume(&d.workers["system"]).provisioning.as_ref().unwrap().disk_selector.expr,
        "!system_disk && disk.size >= 50u * GB"
    );
    let lab = docs_of(&f, "lab", "main");
    assert_eq!(
        volume(&lab.controlplane).provisioning.as_ref().unwrap().disk_selector.expr,
        "!system_disk && disk.size >= 64u * GiB"
    );
    assert!(d.controlplane.text.contains("kind: VolumeConfig\nname: EPHEMERAL\n"));
    assert_eq!(cel_size(Bytes(1234)), "1234u");
}

#[test]
fn discovery_follows_the_model() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    assert_eq!(cluster_patch(&d.common).discovery, Some(Discovery { enabled: false }));
    assert!(d.common.text.contains("discovery:\n    enabled: false\n"));
}

#[test]
fn cilium_cni_disables_talos_cni_and_kube_proxy_through_kubeprism() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    assert_eq!(d.kube_proxy, KubeProxy::Replaced);
    let net = cluster_patch(&d.common).network.as_ref().unwrap();
    assert_eq!(net.cni, Some(Cni { name: "none".into() }));
    assert_eq!(cluster_patch(&d.controlplane).proxy, Some(Proxy { disabled: true }));
    assert_eq!(
        machine(&d.common).features,
        Some(Features { kube_prism: Some(KubePrism { enabled: true, port: 7445 }), kubernetes_talos_api_access: None })
    );

    let via_lb = CILIUM.replace("\"localhost\"", "\"10.10.0.10\"");
    let f = fleet_with(&via_lb, "v1.13.9", "");
    let d = docs_of(&f, "staging", "main");
    assert!(matches!(d.kube_proxy, KubeProxy::Kept { .. }));
    assert_eq!(cluster_patch(&d.controlplane).proxy, Some(Proxy { disabled: false }));
    assert_eq!(cluster_patch(&d.common).network.as_ref().unwrap().cni, Some(Cni { name: "none".into() }));

    let lab = docs_of(&f, "lab", "main");
    assert_eq!(lab.kube_proxy, KubeProxy::TalosDefault);
    assert_eq!(cluster_patch(&lab.common).network.as_ref().unwrap().cni, None);
    assert_eq!(cluster_patch(&lab.controlplane).proxy, None);
}

#[test]
fn pod_and_service_cidrs_come_from_the_model() {
    let f = fleet();
    let net = cluster_patch(&docs_of(&f, "staging", "main").common).network.clone().unwrap();
    assert_eq!(net.pod_subnets, ["10.244.0.0/16"]);
    assert_eq!(net.service_subnets, ["10.96.0.0/12"]);
}

#[test]
fn addon_manifests_are_inline_on_the_control_plane_byte_for_byte() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    let inline = &cluster_patch(&d.controlplane).inline_manifests;
    assert_eq!(inline[0], InlineManifest { name: "cilium".into(), contents: CILIUM.into() });
    assert_eq!(inline[1], InlineManifest { name: "ccm".into(), contents: CCM.into() });
    assert!(d.workers["system"].v1alpha1().unwrap().cluster.is_none());
    assert!(cluster_patch(&d.common).inline_manifests.is_empty());
    // What a YAML reader gets back from the file is the manifest, unchanged.
    let back: Vec<serde_json::Value> = serde_saphyr::from_multiple(&d.controlplane.text).unwrap();
    assert_eq!(back[0]["cluster"]["inlineManifests"][1]["contents"], CCM);
}

#[test]
fn runtimes_get_their_runtime_classes_and_sysctl() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    let inline = &cluster_patch(&d.controlplane).inline_manifests;
    let gvisor = inline.iter().find(|m| m.name == "runtimeclass-gvisor").unwrap();
    assert_eq!(
        gvisor.contents,
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: gvisor\nhandler: runsc\n"
    );
    let kata = inline.iter().find(|m| m.name == "runtimeclass-kata").unwrap();
    assert_eq!(
        kata.contents,
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: kata\nhandler: kata\noverhead:\n  podFixed:\n    cpu: 250m\n    memory: 130Mi\n"
    );
    assert_eq!(machine(&d.common).sysctls.get("user.max_user_namespaces").map(String::as_str), Some("11255"));
    let lab = docs_of(&f, "lab", "main");
    assert!(machine(&lab.common).sysctls.is_empty(), "no gVisor, no sysctl");
    assert!(cluster_patch(&lab.controlplane).inline_manifests.is_empty());
}

#[test]
fn pools_carry_labels_and_taints() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    let m = machine(&d.workers["system"]);
    assert_eq!(m.node_labels.get("node.example/pool").map(String::as_str), Some("system"));
    // An annotation's value is free text (Talos `machine.nodeAnnotations`; only its key and
    // the total size are validated: talos v1.13.9 `pkg/machinery/labels/validate.go`).
    assert_eq!(m.node_annotations.get("node.example/rack").map(String::as_str), Some("r13 a25, row 2"));
    assert!(machine(&d.controlplane).node_annotations.is_empty());
    assert_eq!(m.node_taints.get("dedicated").map(String::as_str), Some("system:NoSchedule"));
    assert_eq!(m.node_taints.get("quiet").map(String::as_str), Some("PreferNoSchedule"));
    assert!(machine(&d.controlplane).node_taints.is_empty());
    // A worker registers with its taints (NodeRestriction refuses a node that changes its
    // own taints after it registered): the kubelet's `registerWithTaints` says the same ones.
    let register = &m.kubelet.as_ref().unwrap().extra_config.as_ref().unwrap().register_with_taints;
    let got: Vec<(&str, Option<&str>, &str)> =
        register.iter().map(|t| (t.key.as_str(), t.value.as_deref(), t.effect.as_str())).collect();
    assert_eq!(got, [("dedicated", Some("system"), "NoSchedule"), ("quiet", None, "PreferNoSchedule")]);
}

#[test]
fn a_tainted_control_plane_registers_without_kubelet_taints() {
    // A control-plane node's taints are set with an administrator's credentials: no
    // `registerWithTaints` (siderolabs/talos v1.13.9 `controllers/k8s/node_apply.go`).
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    assert!(machine(&d.controlplane).kubelet.is_none());
    assert!(machine(&d.common).kubelet.as_ref().unwrap().extra_config.is_none());
}

#[test]
fn nodes_get_hostname_and_on_proxmox_their_address() {
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    let node = &d.nodes["main-system-2"];
    assert_eq!(
        node.docs,
        [Document::Hostname(HostnameConfig {
            meta: Meta::new("HostnameConfig"),
            hostname: "main-system-2".into(),
            auto: "off"
        })]
    );
    let lab = docs_of(&f, "lab", "main");
    let n = &lab.nodes["main-cp-2"];
    let link = n
        .docs
        .iter()
        .find_map(|d| match d {
            Document::Link(l) => Some(l),
            _ => None,
        })
        .unwrap();
    assert_eq!(link.name, PROXMOX_LINK);
    assert_eq!(link.addresses, [Address { address: "192.168.50.12/24".into() }]);
    assert_eq!(link.routes, [Route { destination: None, gateway: "192.168.50.1".into() }]);
    assert!(n.docs.iter().any(
        |d| matches!(d, Document::Resolver(r) if r.nameservers.len() == 2 && r.nameservers[0].address == "192.168.50.2")
    ));
    assert!(lab.common.docs.iter().any(|d| matches!(d, Document::LinkAlias(a) if a.name == PROXMOX_LINK)));
    assert!(
        lab.controlplane
            .docs
            .iter()
            .any(|d| matches!(d, Document::Layer2Vip(v) if v.name == "192.168.50.10" && v.link == PROXMOX_LINK))
    );
    assert!(
        !d.controlplane.docs.iter().any(|d| matches!(d, Document::Layer2Vip(_))),
        "Scaleway uses a load balancer (R12)"
    );
}

#[test]
fn talos_1_12_and_1_14_are_emitted_and_1_11_is_not() {
    let f = fleet_with(CILIUM, "v1.12.4", "");
    let d = docs_of(&f, "staging", "main");
    assert!(machine(&d.controlplane).install.as_ref().unwrap().image.ends_with(":v1.12.4"));
    // A 1.14 node gets the 1.13 document model (versions/talos.kdl), its own installer.
    let f = fleet_with(CILIUM, "v1.14.1", "");
    let d = docs_of(&f, "staging", "main");
    assert!(machine(&d.controlplane).install.as_ref().unwrap().image.ends_with(":v1.14.1"));
    assert!(talos_emittable(Version::new(1, 13, 0)));
    assert!(talos_emittable(Version::new(1, 14, 0)));
    assert!(!talos_emittable(Version::new(1, 11, 0)));
}

#[test]
fn emit_is_deterministic() {
    let f = fleet();
    let a = emit(&f).unwrap();
    let b = emit(&f).unwrap();
    assert_eq!(a.manifest(), b.manifest());
    assert!(a.get("talos/lab/edge/controlplane.yaml").is_some());
    assert!(a.get("talos/lab/edge/nodes/edge-cp-1.yaml").is_none());
}

/// A cloud controller manager's Deployment, running `--cloud-provider=<provider>` in `ns`.
fn ccm_manifest(provider: &str, ns: &str) -> String {
    format!(
        "{CCM}---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ccm\n  namespace: {ns}\nspec:\n  selector:\n    matchLabels:\n      app: ccm\n  template:\n    metadata:\n      labels:\n        app: ccm\n    spec:\n      containers:\n        - name: ccm\n          image: ccm\n          args:\n            - --cloud-provider={provider}\n"
    )
}

#[test]
fn an_embedded_cloud_controller_makes_every_kubelet_wait_for_it() {
    // D1: without `externalCloudProvider`, the kubelet never gets `--cloud-provider=external`,
    // nodes are never tainted `uninitialized`, and the CCM never sets their providerID (R25).
    let f = fleet_full(CILIUM, &ccm_manifest("scaleway", "kube-system"), "v1.13.9", "");
    let d = docs_of(&f, "staging", "main");
    assert_eq!(cluster_patch(&d.common).external_cloud_provider, Some(ExternalCloudProvider { enabled: true }));
    assert!(d.common.text.contains("externalCloudProvider:\n    enabled: true"), "{}", d.common.text);
    // The Scaleway CCM reads no Talos API: no access granted.
    assert_eq!(machine(&d.controlplane).features, None);
    // Without a cloud controller manager, kubelets manage their nodes themselves.
    let f = fleet();
    let d = docs_of(&f, "staging", "main");
    assert_eq!(cluster_patch(&d.common).external_cloud_provider, None);
}

#[test]
fn the_talos_cloud_controller_gets_talos_api_access_for_its_namespace() {
    // D2: the Talos CCM reads platform metadata (the provider ID) through the Talos API.
    let f = fleet_full(CILIUM, &ccm_manifest("talos", "ccm-system"), "v1.13.9", "");
    let d = docs_of(&f, "staging", "main");
    let access = machine(&d.controlplane).features.as_ref().and_then(|f| f.kubernetes_talos_api_access.clone());
    assert_eq!(
        access,
        Some(TalosApiAccess {
            enabled: true,
            allowed_roles: vec!["os:reader".into()],
            allowed_kubernetes_namespaces: vec!["ccm-system".into()],
        })
    );
    assert_eq!(cluster_patch(&d.common).external_cloud_provider, Some(ExternalCloudProvider { enabled: true }));
    // Control-plane machines only: Talos refuses the feature on workers.
    assert!(machine(&d.workers["system"]).features.is_none());
    assert!(machine(&d.common).features.as_ref().unwrap().kubernetes_talos_api_access.is_none());
}

#[test]
fn a_cluster_without_workers_schedules_on_its_control_plane() {
    // D3: a single-node management cluster would keep the control-plane NoSchedule taint.
    let f = fleet();
    let lab = docs_of(&f, "lab", "main");
    assert_eq!(cluster_patch(&lab.controlplane).allow_scheduling_on_control_planes, Some(true));
    assert!(lab.controlplane.text.contains("allowSchedulingOnControlPlanes: true"));
    let staging = docs_of(&f, "staging", "main");
    assert_eq!(cluster_patch(&staging.controlplane).allow_scheduling_on_control_planes, None);
    assert_eq!(cluster_patch(&staging.common).allow_scheduling_on_control_planes, None);
}

#[test]
fn a_backup_adds_its_namespace_and_role_to_the_talos_api_access() {
    // R28: the backup job's talos.dev ServiceAccount asks for `os:etcd:backup` in its own
    // namespace; Talos allows every listed role to every listed namespace, so the lists are
    // the unions of the CCM's and the backup's (`model::backup::TalosApiAccess::of`).
    let with_backup = |mut f: Fleet| {
        let c = &mut f.environments[0].clusters[0];
        let s = |v: &str| crate::model::Spanned::new(v.to_owned(), c.span);
        c.backup = Some(crate::model::backup::Backup {
            schedule: s("0 3 * * *"),
            bucket: s("b"),
            region: s("fr-par"),
            endpoint: None,
            prefix: None,
            path_style: None,
            credentials: s("backup-s3"),
            span: c.span,
        });
        f
    };
    let f = with_backup(fleet_full(CILIUM, &ccm_manifest("talos", "ccm-system"), "v1.13.9", ""));
    let d = docs_of(&f, "staging", "main");
    let access = machine(&d.controlplane).features.as_ref().and_then(|f| f.kubernetes_talos_api_access.clone());
    assert_eq!(
        access,
        Some(TalosApiAccess {
            enabled: true,
            allowed_roles: vec!["os:etcd:backup".into(), "os:reader".into()],
            allowed_kubernetes_namespaces: vec!["ccm-system".into(), "talos-backup".into()],
        })
    );
    // Without a CCM that reads the Talos API, the backup's alone.
    let f = with_backup(fleet_full(CILIUM, &ccm_manifest("scaleway", "kube-system"), "v1.13.9", ""));
    let d = docs_of(&f, "staging", "main");
    let access = machine(&d.controlplane).features.as_ref().and_then(|f| f.kubernetes_talos_api_access.clone());
    assert_eq!(
        access,
        Some(TalosApiAccess {
            enabled: true,
            allowed_roles: vec!["os:etcd:backup".into()],
            allowed_kubernetes_namespaces: vec!["talos-backup".into()],
        })
    );
    assert!(machine(&d.workers["system"]).features.is_none());
}
