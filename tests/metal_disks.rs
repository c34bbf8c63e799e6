//! Bare metal as hardware has it (issue 30, talos-3 M5, M8, M9, M12, m5, m7, m10; newcomer-3
//! m09, m39, m43, m56): disks named by identity, EPHEMERAL on the system disk unless the
//! machine names another (never a USB disk), the VM size heuristic for VMs only, etcd on the
//! cluster network, and the metal cross-checks of `check`. Each test fails when its rule is
//! broken. The documents' acceptance by Talos itself is `oracles/talos` on the metal goldens.

use crate::common;

use fleetc::compile::{Compilation, FsLoader, compile};
use fleetc::emit::talos::TalosDocs;
use fleetc::emit::talos::document::{Document, VolumeConfig};

fn case(name: &str) -> Compilation {
    let dir = common::root().join("golden").join(name);
    let text = std::fs::read_to_string(dir.join("fleet.kdl")).unwrap();
    compile("fleet.kdl", &text, &FsLoader::new(&dir))
}

/// `golden/<name>/fleet.kdl` with `from` replaced by `to` (which must occur).
fn edited(name: &str, from: &str, to: &str) -> Compilation {
    let dir = common::root().join("golden").join(name);
    let text = std::fs::read_to_string(dir.join("fleet.kdl")).unwrap();
    assert!(text.contains(from), "{name} holds {from:?}");
    compile("fleet.kdl", &text.replacen(from, to, 1), &FsLoader::new(&dir))
}

fn codes(c: &Compilation) -> Vec<&'static str> {
    c.diags.iter().map(|d| d.code.name).collect()
}

fn docs(c: &Compilation, env: &str, cluster: &str) -> TalosDocs {
    assert!(!c.diags.has_errors(), "{:?}", codes(c));
    let fleet = c.fleet.as_ref().unwrap();
    let env = fleet.environment(env).unwrap();
    let cluster = env.cluster(cluster).unwrap();
    fleetc::emit::talos::cluster_documents(fleet, env, cluster).unwrap()
}

fn ephemeral(docs: &[Document]) -> Option<&VolumeConfig> {
    docs.iter().find_map(|d| match d {
        Document::Volume(v) if v.name == "EPHEMERAL" => Some(v),
        _ => None,
    })
}

fn ephemeral_match(docs: &[Document]) -> Option<String> {
    ephemeral(docs).and_then(|v| v.provisioning.as_ref()).map(|p| p.disk_selector.expr.clone())
}

/// A single-disk machine installs where its serial says and keeps EPHEMERAL on that disk:
/// the pool's EPHEMERAL is `system_disk` (Talos's default), no node has one of its own, and
/// no install selector on metal is a size (M5: the VM heuristic never reaches hardware).
#[test]
fn a_single_disk_machine_keeps_ephemeral_on_the_system_disk() {
    let c = case("metal-single-disk");
    let d = docs(&c, "lab", "main");
    assert_eq!(ephemeral_match(&d.controlplane.docs).as_deref(), Some("system_disk"));
    assert_eq!(ephemeral_match(&d.workers["work"].docs).as_deref(), Some("system_disk"));
    assert!(!d.controlplane.text.contains("disk.size"), "no size heuristic on metal:\n{}", d.controlplane.text);
    for (host, set) in &d.nodes {
        assert!(ephemeral(&set.docs).is_none(), "{host} has no EPHEMERAL disk of its own");
        assert!(!set.text.contains("size:"), "{host} installs by identity, not size:\n{}", set.text);
    }
    assert!(d.nodes["main-cp-1"].text.contains("serial: S6PNNS0T500111"), "{}", d.nodes["main-cp-1"].text);
    assert!(d.nodes["main-w-1"].text.contains("wwid: eui.0025388b91b2c3d4"), "{}", d.nodes["main-w-1"].text);
}

/// A machine with a second disk names it by `ephemeral-disk`: its own document selects it off
/// the system disk, never on USB, by the declared identity, matched as Talos matches an
/// install disk (a glob); the pool's stays `system_disk`.
#[test]
fn a_second_disk_is_selected_by_its_identity_and_never_on_usb() {
    let c = case("metal-two-disks");
    let d = docs(&c, "lab", "main");
    assert_eq!(ephemeral_match(&d.workers["storage"].docs).as_deref(), Some("system_disk"));
    assert_eq!(
        ephemeral_match(&d.nodes["main-cp-1"].docs).as_deref(),
        Some(r#"!system_disk && disk.transport != "usb" && glob("S6PNNS0T600111", disk.serial)"#)
    );
    assert_eq!(
        ephemeral_match(&d.nodes["main-st-1"].docs).as_deref(),
        Some(r#"!system_disk && disk.transport != "usb" && glob("naa.5000c500a1b2c3d4", disk.wwid)"#)
    );
    // The node's document states only the selector: the pool's encryption stays (Talos merges
    // the two documents by name).
    assert!(ephemeral(&d.nodes["main-st-1"].docs).unwrap().encryption.is_none());
    assert!(ephemeral(&d.workers["storage"].docs).unwrap().encryption.is_some());
}

/// NVMe plus a USB boot stick: the install disk is the NVMe by WWID (no size a stick could
/// have), and the EPHEMERAL selector by model and size still refuses the `usb` transport.
#[test]
fn a_usb_boot_stick_is_never_selected() {
    let c = case("metal-nvme-usb");
    let d = docs(&c, "lab", "edge");
    let node = &d.nodes["edge-nuc-1"];
    assert!(node.text.contains("wwid: eui.0025388b91b2c3d1"), "{}", node.text);
    let m = ephemeral_match(&node.docs).unwrap();
    assert!(m.starts_with(r#"!system_disk && disk.transport != "usb" && "#), "{m}");
    assert!(m.contains("disk.size >= 1000000000000u"), "{m}");
    assert!(m.contains(r#"glob("Samsung SSD 990 PRO*", disk.model)"#), "{m}");
}

/// The VM heuristic stays for VMs: fleetc made the data disk, and selects it by size.
#[test]
fn vms_keep_the_size_heuristic() {
    let c = case("proxmox-minimal");
    let d = docs(&c, "lab", "main");
    assert_eq!(ephemeral_match(&d.controlplane.docs).as_deref(), Some("!system_disk && disk.size >= 100u * GB"));
    assert!(d.nodes.values().all(|n| ephemeral(&n.docs).is_none()));
}

/// R15 on metal: an install disk with only a size or a device path, an EPHEMERAL disk with
/// only a size, and a machine with no install disk are refused, and nothing is built.
#[test]
fn a_metal_disk_without_identity_is_refused() {
    for (from, to) in [
        (r#"install-disk serial="S6PNNS0T500112""#, r#"install-disk size="<= 1TB""#),
        (r#"install-disk serial="S6PNNS0T500112""#, r#"install-disk device="/dev/nvme0n1""#),
        (
            r#"install-disk serial="S6PNNS0T500112""#,
            r#"install-disk serial="S6PNNS0T500112"; ephemeral-disk size=">= 1TB""#,
        ),
        (r#"install-disk serial="S6PNNS0T500112""#, ""),
    ] {
        let c = edited("metal-single-disk", from, to);
        assert!(codes(&c).contains(&"fleet::metal::disk-unidentified"), "{to:?}: {:?}", codes(&c));
        assert!(c.artifacts.is_none(), "{to:?}: nothing is built");
    }
    // A model names the hardware.
    let c =
        edited("metal-single-disk", r#"install-disk serial="S6PNNS0T500112""#, r#"install-disk model="Micron_5300*""#);
    assert!(!codes(&c).contains(&"fleet::metal::disk-unidentified"), "{:?}", codes(&c));
}

/// R13 (M8): a metal machine is recognised by its MAC or by an exact serial or WWID; a model
/// or a glob fits other machines too.
#[test]
fn a_metal_machine_is_recognised_by_a_mac_or_an_exact_disk_identity() {
    let no_mac = |disk: &str| {
        edited(
            "metal-single-disk",
            r#"                    mac "3c:ec:ef:10:00:12"
                    install-disk serial="S6PNNS0T500112""#,
            &format!("                    {disk}"),
        )
    };
    for disk in [r#"install-disk model="Micron_5300*""#, r#"install-disk serial="S6PNNS0T5*""#] {
        let c = no_mac(disk);
        assert!(codes(&c).contains(&"fleet::metal::undeclared-machine"), "{disk}: {:?}", codes(&c));
    }
    for disk in [r#"install-disk serial="S6PNNS0T500112""#, r#"install-disk wwid="naa.5000c500a1b2c3d9""#] {
        let c = no_mac(disk);
        assert!(!codes(&c).contains(&"fleet::metal::undeclared-machine"), "{disk}: {:?}", codes(&c));
    }
}

/// One disk is one piece of hardware: an install disk named again as an EPHEMERAL disk is
/// refused, and so is a serial two environments both claim (newcomer-3 m09, fleet-wide).
#[test]
fn a_disk_identity_is_unique_across_the_fleet() {
    let c = case("node-identity-twice-ephemeral");
    assert_eq!(codes(&c), ["fleet::node::identity-twice"]);
    let dir = common::root().join("golden/metal-single-disk");
    let text = std::fs::read_to_string(dir.join("fleet.kdl")).unwrap();
    let start = text.find("    environment \"lab\"").unwrap();
    let end = text.rfind("}\n").unwrap();
    let env = &text[start..end];
    let second = env
        .replace("environment \"lab\"", "environment \"lab2\"")
        .replace("10.30.0.", "10.31.0.")
        .replace("3c:ec:ef:10:", "3c:ec:ef:20:")
        .replace("S6PNNS0T50011", "S6PNNS0T50021")
        .replace("eui.0025388b91b2c3d4", "eui.0025388b91b2c3e4");
    // Every identity differs but one serial.
    let second = second.replacen("S6PNNS0T500211", "S6PNNS0T500111", 1);
    let both = format!("{}{second}{}", &text[..end], &text[end..]);
    let c = compile("fleet.kdl", &both, &FsLoader::new(&dir));
    let twice: Vec<_> = c.diags.iter().filter(|d| d.code.name == "fleet::node::identity-twice").collect();
    assert_eq!(twice.len(), 1, "{:?}", codes(&c));
}

/// m10: static links without DNS servers are a warning on metal (the build goes on).
#[test]
fn static_links_without_nameservers_warn() {
    let c = case("metal-links-without-nameservers");
    assert_eq!(codes(&c), ["fleet::metal::links-without-nameservers"]);
    assert!(c.artifacts.is_some());
    assert!(codes(&case("metal-single-disk")).is_empty());
}

/// m5: a VM has one NIC (`net0` on Proxmox): a bond, another link name or a VLAN on another
/// parent is refused; `link "net0"` and a VLAN on it are not. `ephemeral-disk` is refused on a
/// VM, whose data disk fleetc creates.
#[test]
fn vm_nodes_declare_only_the_links_and_disks_they_have() {
    assert_eq!(codes(&case("node-link-not-on-vm")), ["fleet::node::link-not-on-vm"]);
    assert_eq!(codes(&case("node-ephemeral-disk-on-vm")), ["fleet::node::ephemeral-disk-on-vm"]);
    assert_eq!(codes(&case("node-maintenance-address-on-vm")), ["fleet::node::maintenance-address-on-vm"]);
    let c = edited("nodes-named", r#"link "net0" {"#, r#"link "eth1" {"#);
    assert!(codes(&c).contains(&"fleet::node::link-not-on-vm"), "{:?}", codes(&c));
    let c = edited("nodes-named", r#"parent="net0""#, r#"parent="eth1""#);
    assert!(codes(&c).contains(&"fleet::node::link-not-on-vm"), "{:?}", codes(&c));
    assert!(!codes(&case("nodes-named")).contains(&"fleet::node::link-not-on-vm"));
}

/// M9/m43: a control-plane node on metal without a link is refused (it could not hold the
/// VIP); with links, the VIP is on the link that carries the node's address.
#[test]
fn the_vip_is_held_on_the_link_of_the_cluster_network() {
    assert!(codes(&case("metal-vip-without-link")).contains(&"fleet::metal::vip-without-link"));
    let c = case("metal-single-disk");
    let d = docs(&c, "lab", "main");
    let vip = d.nodes["main-cp-1"]
        .docs
        .iter()
        .find_map(|x| match x {
            Document::Layer2Vip(v) => Some(v),
            _ => None,
        })
        .expect("cp-1 holds the VIP");
    assert_eq!((vip.name.as_str(), vip.link.as_str()), ("10.30.0.10", "enp1s0"));
}

/// M12: etcd advertises from the cluster network, as the kubelet's node IP (R18), on the
/// clusters fleetc writes node configs for; not on a Cluster API cluster (one NIC, and a
/// changed control-plane config would roll every machine).
#[test]
fn etcd_advertises_on_the_cluster_network() {
    let c = case("metal-two-disks");
    let d = docs(&c, "lab", "main");
    assert!(
        d.controlplane.text.contains("etcd:\n    advertisedSubnets:\n    - 10.30.0.0/24\n"),
        "{}",
        d.controlplane.text
    );
    assert!(d.common.text.contains("- 10.30.0.0/24"), "the kubelet's node IP follows the same network");
    let c = case("capi-lab");
    let fleet = c.fleet.as_ref().unwrap();
    for env in &fleet.environments {
        for cluster in env.clusters.iter().filter(|c| c.is_managed()) {
            let d = fleetc::emit::talos::cluster_documents(fleet, env, cluster).unwrap();
            assert!(!d.controlplane.text.contains("advertisedSubnets"), "{}", cluster.name.value);
        }
    }
}

/// m7: a TPM key on EPHEMERAL is locked to STATE (Talos's advice for non-STATE volumes); STATE's
/// own key is not.
#[test]
fn a_tpm_key_on_ephemeral_is_locked_to_state() {
    let c = case("metal-two-disks");
    let d = docs(&c, "lab", "main");
    let key = &ephemeral(&d.workers["storage"].docs).unwrap().encryption.as_ref().unwrap().keys[0];
    assert!(key.tpm.is_some());
    assert_eq!(key.lock_to_state, Some(true));
    let c = case("disk-proxmox-secureboot");
    let d = docs(&c, "lab", "main");
    let state = d
        .controlplane
        .docs
        .iter()
        .find_map(|x| match x {
            Document::Volume(v) if v.name == "STATE" => Some(v),
            _ => None,
        })
        .unwrap();
    assert_eq!(state.encryption.as_ref().unwrap().keys[0].lock_to_state, None);
}

/// An endpoint by name (docs/metal.md, "An endpoint by name"): the URL's host and a SAN, no
/// `Layer2VIPConfig` and no link needed; one of `address` and `name`, a DNS name, and never an
/// address written as a name. An address endpoint in the same fleet still needs its links.
#[test]
fn an_endpoint_by_name_holds_no_address_and_is_refused_when_malformed() {
    let c = case("metal-endpoint-name");
    let d = docs(&c, "lab", "main");
    let text = format!("{d:?}");
    assert!(!text.contains("Layer2Vip"), "no shared address for a name: {text}");
    assert!(text.contains("k8s.lab.example.org"), "the name is a SAN");
    let url = &c.fleet.as_ref().unwrap().environment("lab").unwrap().cluster("main").unwrap().endpoint_url();
    assert_eq!(url, "https://k8s.lab.example.org:6443");
    for (to, message) in [
        (r#"endpoint name="k8s.lab.example.org" address="10.10.0.10""#, "both `address` and `name`"),
        (r#"endpoint name="10.10.0.10""#, "is an address, not a name"),
        (r#"endpoint name="https://k8s.lab.example.org""#, "is not a DNS name"),
        (r#"endpoint name="K8s_Lab""#, "is not a DNS name"),
    ] {
        let bad = edited("metal-endpoint-name", r#"endpoint name="k8s.lab.example.org""#, to);
        assert!(
            bad.diags.iter().any(|d| d.code.name == "fleet::model::invalid-value" && d.message.contains(message)),
            "{to}: {:?}",
            codes(&bad)
        );
    }
    // The same nodes with a shared address: cp-2 and cp-3 declare no link to hold it (R18).
    let vip =
        edited("metal-endpoint-name", r#"endpoint name="k8s.lab.example.org""#, r#"endpoint address="10.10.0.10""#);
    assert_eq!(codes(&vip).iter().filter(|c| **c == "fleet::metal::vip-without-link").count(), 2, "{:?}", codes(&vip));
}
