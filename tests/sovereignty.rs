//! Sovereignty, proven (R27, issue 18 item 5): the same cluster described on Scaleway, on
//! Proxmox and on bare metal differs only in the provider block and the machines, and the
//! Talos documents fleetc emits for the three differ only where the platform requires it: the
//! platform name in the installer, and the documents that carry addresses (links, the
//! endpoint's shared address, the link alias of a Proxmox VM's one NIC, DNS servers).

use std::collections::BTreeMap;

use fleetc::compile::{MapLoader, compile};

/// The cluster, written once.
const CLUSTER: &str = r#"        cluster "main" {
            runtimes "gvisor"
            endpoint address="10.10.0.10"
            pool-defaults schematic="isolated"
            control-plane {CP}
            pool "system" {COUNT}ephemeral-min-size="50GB" {
                label "node.demo.example/pool" "system"
                taint "dedicated" "system" effect="NoSchedule"
{SYSTEM}            }
            app "hello" path="apps/hello" namespace="hello"
        }
"#;

struct Platform {
    name: &'static str,
    /// The provider block, its state and its size default: what says where the cluster runs.
    provider: &'static str,
    /// The control plane's machines (the block after `control-plane`).
    cp: &'static str,
    /// The system pool's node count, when its machines are not named.
    count: &'static str,
    /// The system pool's machines (children of its block).
    system: &'static str,
}

const PLATFORMS: &[Platform] = &[
    Platform {
        name: "scaleway",
        provider: r#"        scaleway project="11111111-2222-3333-4444-555555555555" region="fr-par" zone="fr-par-2" {
            size "small" type="PRO2-XS"
        }
        state bucket="demo-tofu-state"
        pool-defaults size="small"
"#,
        cp: "count=3",
        count: "count=2 ",
        system: "",
    },
    Platform {
        name: "proxmox",
        provider: r#"        proxmox endpoint="https://pve.example:8006" node="pve1" router="10.10.0.1" {
            size "small" cores=2 memory="4GiB"
        }
        state bucket="demo-tofu-state" region="fr-par" endpoint="https://s3.fr-par.scw.cloud"
        pool-defaults size="small"
"#,
        cp: r#"count=3 {
                addresses "10.10.0.11" "10.10.0.12" "10.10.0.13"
            }"#,
        count: "count=2 ",
        system: "                addresses \"10.10.0.21\" \"10.10.0.22\"\n",
    },
    Platform {
        name: "metal",
        provider: "        metal\n",
        cp: r#"{
                node "cp-1" {
                    address "10.10.0.11"
                    mac "3c:ec:ef:00:00:11"
                    install-disk serial="S6PNNS0T500011"
                    link "eno1" {
                        address "10.10.0.11/22"
                        route gateway="10.10.0.1"
                    }
                }
                node "cp-2" {
                    address "10.10.0.12"
                    mac "3c:ec:ef:00:00:12"
                    install-disk serial="S6PNNS0T500012"
                    link "eno1" {
                        address "10.10.0.12/22"
                        route gateway="10.10.0.1"
                    }
                }
                node "cp-3" {
                    address "10.10.0.13"
                    mac "3c:ec:ef:00:00:13"
                    install-disk serial="S6PNNS0T500013"
                    link "eno1" {
                        address "10.10.0.13/22"
                        route gateway="10.10.0.1"
                    }
                }
            }"#,
        count: "",
        system: r#"                node "system-1" {
                    address "10.10.0.21"
                    mac "3c:ec:ef:00:00:21"
                    install-disk serial="S6PNNS0T500021"
                }
                node "system-2" {
                    address "10.10.0.22"
                    mac "3c:ec:ef:00:00:22"
                    install-disk serial="S6PNNS0T500022"
                }
"#,
    },
];

fn fleet(p: &Platform) -> String {
    let cluster = CLUSTER.replace("{CP}", p.cp).replace("{COUNT}", p.count).replace("{SYSTEM}", p.system);
    format!(
        r#"fleet "demo" {{
    talos "v1.13.9"
    kubernetes "1.36.2"
    gitops repo="https://git.example.org/demo/fleet.git"
    schematic "isolated" {{
        extension "siderolabs/gvisor"
    }}
    environment "prod" {{
{provider}        network "10.10.0.0/22"
        // The public address through which talosctl reaches the nodes (R16), the same everywhere.
        gateway "51.15.200.10"
        admin-ranges "203.0.113.0/24"
{cluster}    }}
}}
"#,
        provider = p.provider
    )
}

fn build(p: &Platform) -> BTreeMap<String, String> {
    let text = fleet(p);
    let loader =
        MapLoader { files: [("apps/hello/kustomization.yaml".to_owned(), "resources: []\n".to_owned())].into() };
    let c = compile("fleet.kdl", &text, &loader);
    assert!(
        !c.diags.has_errors(),
        "{}: {}\n{text}",
        p.name,
        fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN)
    );
    c.artifacts
        .unwrap()
        .iter()
        .filter(|(path, _)| path.starts_with("talos/"))
        .map(|(path, b)| (path.to_owned(), String::from_utf8(b.to_vec()).unwrap()))
        .collect()
}

/// The document kinds that carry a platform's addresses or links, which differ by design.
const PLATFORM_KINDS: &[&str] = &["LinkConfig", "Layer2VIPConfig", "LinkAliasConfig", "ResolverConfig"];

/// A Talos file with the platform's name taken out of the installer and the address-bearing
/// documents dropped: what must be the same on every platform.
/// The disks differ by design too (R15, issue 30): a VM's are selected by the sizes fleetc gave
/// them, a metal machine's by identity in its own document, with EPHEMERAL on the system disk
/// unless the node names another.
fn normalised(text: &str, platform: &str) -> String {
    let installer = format!("factory.talos.dev/{platform}-installer/");
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // A metal node's own install disk: a document of `machine.install.diskSelector` only.
        if lines[i..].starts_with(&["machine:", "  install:", "    diskSelector:"]) {
            let mut j = i + 3;
            while lines.get(j).is_some_and(|l| l.starts_with("      ")) {
                j += 1;
            }
            if lines.get(j) == Some(&"---") {
                i = j + 1;
                continue;
            }
        }
        if lines[i] == "    diskSelector:" && lines.get(i + 1).is_some_and(|l| l.starts_with("      size: ")) {
            i += 2;
            continue;
        }
        // Scaleway's Talos API is reached through the gateway's SSH tunnel, on the loopback
        // address the machines' certificate must name (`emit::talos::machine_cert_sans`).
        if lines[i] == "  - \"127.0.0.1\"" && lines[..i].contains(&"  certSANs:") {
            i += 1;
            continue;
        }
        kept.push(if lines[i].starts_with("    match: ") { "    match: <the platform's disk>" } else { lines[i] });
        i += 1;
    }
    kept.join("\n")
        .replace(&installer, "factory.talos.dev/<platform>-installer/")
        .split("\n---\n")
        .map(str::trim_end)
        .filter(|doc| !PLATFORM_KINDS.iter().any(|k| doc.lines().any(|l| l == format!("kind: {k}"))))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[test]
fn the_fleets_differ_only_in_the_provider_block_and_the_machines() {
    // Remove each platform's own parts from its text: what is left is one text.
    let rest: Vec<String> = PLATFORMS
        .iter()
        .map(|p| {
            let t = fleet(p).replace(p.provider, "{PROVIDER}").replace(p.cp, "{CP}");
            let t = t.replace(&format!("pool \"system\" {}", p.count), "pool \"system\" {COUNT}");
            if p.system.is_empty() { t } else { t.replace(p.system, "{SYSTEM}") }
        })
        .map(|t| t.replace("{SYSTEM}", ""))
        .collect();
    assert_eq!(rest[0], rest[1]);
    assert_eq!(rest[1], rest[2]);
}

#[test]
fn the_talos_documents_differ_only_where_the_platform_requires() {
    let builds: Vec<(&str, &str, BTreeMap<String, String>)> = PLATFORMS
        .iter()
        .map(|p| {
            let talos_platform = match p.name {
                "proxmox" => "nocloud",
                other => other,
            };
            (p.name, talos_platform, build(p))
        })
        .collect();
    let (base_name, base_platform, base) = &builds[0];
    for (name, platform, files) in &builds[1..] {
        assert_eq!(
            base.keys().collect::<Vec<_>>(),
            files.keys().collect::<Vec<_>>(),
            "{base_name} and {name} write the same Talos files"
        );
        for (path, text) in files {
            assert_eq!(
                normalised(&base[path], base_platform),
                normalised(text, platform),
                "{path}: {base_name} and {name} differ beyond platform name, installer and addresses"
            );
        }
    }
    // And they do differ where the platform requires it: each its own installer.
    for (name, platform, files) in &builds {
        let cp = &files["talos/prod/main/controlplane.yaml"];
        assert!(cp.contains(&format!("factory.talos.dev/{platform}-installer/")), "{name}: {cp}");
    }
    // Metal's and Proxmox's nodes carry their addresses; Scaleway's come from its IPAM.
    assert!(builds[1].2["talos/prod/main/nodes/main-cp-1.yaml"].contains("10.10.0.11/22"));
    assert!(builds[2].2["talos/prod/main/nodes/main-cp-1.yaml"].contains("10.10.0.11/22"));
    assert!(!builds[0].2["talos/prod/main/nodes/main-cp-1.yaml"].contains("10.10.0.11"));
}
