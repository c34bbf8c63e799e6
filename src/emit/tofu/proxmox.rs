//! Proxmox (bpg/proxmox): the environment module (`proxmox-cloud`: the Talos images,
//! downloaded by Proxmox from the Image Factory at apply time) and the per-cluster module
//! (`proxmox-cluster-cp<N>`: VMs booted from the schematic's image, with static addresses
//! through the NoCloud `initialization` block and a data disk for EPHEMERAL), and the cloud
//! root that calls them.

use super::hclx::{Part, Var, empty, file, idx, nth, object_ty, of, output, r, tpl, ty};
use super::scaleway::{gb, idx_expr};
use super::{Env, Module, RootFiles};
use crate::emit::hcl::{Body, Expr};
use crate::layout::names::{INVENTORY_OUTPUT, ident};
use crate::model::{Cluster, Provider, Role};

pub(super) const CLOUD_MODULE: &str = "proxmox-cloud";

/// The VM resource type.
const VM: &str = "proxmox_virtual_environment_vm";

/// The image download resource: the short name bpg/proxmox has from v0.100.0, the
/// `proxmox_virtual_environment_*` one being deprecated (v0.111.1
/// `fwprovider/nodes/resource_download_file.go`, `DeprecationMessage`).
const DOWNLOAD_FILE: &str = "proxmox_download_file";
/// The type the images were first downloaded under, whose state moves to [`DOWNLOAD_FILE`]
/// (`fwprovider/nodes/resource_download_file_short.go`, `MoveState`).
const LEGACY_DOWNLOAD_FILE: &str = "proxmox_virtual_environment_download_file";

/// The VM templates' disk size: above the Talos disk image's virtual size; each clone's boot
/// volume is resized by CAPMOX to its ProxmoxMachineTemplate's `bootVolume.sizeGb`.
const TEMPLATE_DISK_GB: i64 = 10;

pub(super) fn cluster_module(cp: usize) -> String {
    format!("proxmox-cluster-cp{cp}")
}

fn node_ty() -> Expr {
    object_ty(&[
        ("hostname", ty("string")),
        ("node_name", ty("string")),
        ("address", ty("string")),
        ("guest_agent", ty("bool")),
        ("secure_boot", ty("bool")),
        ("tpm", ty("bool")),
        ("cores", ty("number")),
        ("memory_mib", ty("number")),
        ("image", ty("string")),
        ("system_disk_gb", ty("number")),
        ("data_disk_gb", ty("number")),
    ])
}

/// A VM template's object type, one for the cloud module's variable and the root's that passes it.
fn template_ty() -> Expr {
    object_ty(&[
        ("node_name", ty("string")),
        ("image", ty("string")),
        ("tags", of("list", ty("string"))),
        ("guest_agent", ty("bool")),
        ("secure_boot", ty("bool")),
    ])
}

pub(super) fn cloud_module() -> Module {
    let mut vars = file();
    Var::new(
        "datastore",
        ty("string"),
        "The datastore images are downloaded to on each node (content type `import`, Proxmox VE 8.4+).",
    )
    .write(&mut vars);
    Var::new(
        "images",
        of("map", object_ty(&[("node_name", ty("string")), ("image", ty("string")), ("url", ty("string"))])),
        "Image Factory disk images per Proxmox VE node that needs them, keyed `<node>/<image name>` (R22: name = schematic + Talos version).",
    )
    .write(&mut vars);
    Var::new("template_datastore", ty("string"), "The datastore of the VM templates' disks.").write(&mut vars);
    Var::new("bridge", ty("string"), "The bridge of the VM templates' network interface.").write(&mut vars);
    Var::new(
        "templates",
        of("map", template_ty()),
        "VM templates Cluster API clones, by name (model::VmTemplate: the ProxmoxMachineTemplates select them by these exact tags).",
    )
    .default(empty())
    .write(&mut vars);
    let mut main = file();
    main.comment(
        "R22: Proxmox downloads the schematic's image from the Image Factory at apply time (a network\n\
         operation of tofu, not of fleetc); the name carries the schematic and the Talos version.\n\
         N3: the factory serves qcow2 (`nocloud-amd64.qcow2`) and the file is stored as `.qcow2` in the\n\
         `import` content type, whose extension tells Proxmox VE the source format on import.",
    )
    .block("resource", &[DOWNLOAD_FILE, "image"], |b| {
        b.attr("for_each", r("var.images"))
            .attr("content_type", "import")
            .attr("datastore_id", r("var.datastore"))
            .attr("node_name", r("each.value.node_name"))
            .attr("url", r("each.value.url"))
            .attr("file_name", tpl(vec![Part::E(r("each.value.image")), Part::L(".qcow2".into())]))
            .attr("overwrite", false);
    })
    .blank()
    .comment(
        "The images were downloaded under the deprecated type name; the provider moves their state\n\
         to the short name (bpg v0.100.0+, MoveState), so nothing is downloaded again.",
    )
    .block("moved", &[], |m| {
        m.attr("from", r(&format!("{LEGACY_DOWNLOAD_FILE}.image"))).attr("to", r(&format!("{DOWNLOAD_FILE}.image")));
    })
    .blank()
    .block("locals", &[], |l| {
        l.attr(
            "image_ids",
            Expr::for_object(
                ("k", "f"),
                r(&format!("{DOWNLOAD_FILE}.image")),
                r("k"),
                tpl(vec![
                    Part::E(r("f.datastore_id")),
                    Part::L(":".into()),
                    Part::E(r("f.content_type")),
                    Part::L("/".into()),
                    Part::E(r("f.file_name")),
                ]),
            ),
        );
    })
    .blank()
    .comment(
        "capi-argocd R2: the VM templates the ProxmoxMachineTemplates select (CAPMOX v0.9.0\n\
         FindVMTemplateByTags: a VM with template=1 whose tag set is exactly these tags, one in the\n\
         whole Proxmox VE cluster). Cluster API clones them; CAPMOX sets cores, memory, the boot\n\
         volume's size and the NoCloud data of each clone.",
    )
    .block("resource", &[VM, "template"], |b| {
        b.attr("for_each", r("var.templates"))
            .attr("name", r("each.key"))
            .attr("node_name", r("each.value.node_name"))
            .attr("tags", r("each.value.tags"))
            .attr("template", true)
            .attr("started", false)
            .attr("on_boot", false);
        super::arguments::write_settings(b, VM);
        b.blank()
            .block("cpu", &[], |c| {
                c.attr("cores", 1).attr("type", "host");
            })
            .block("memory", &[], |m| {
                m.attr("dedicated", 2048);
            })
            .block("operating_system", &[], |o| {
                o.attr("type", "l26");
            })
            .block("agent", &[], |a| {
                a.attr("enabled", r("each.value.guest_agent"));
            })
            .block("network_device", &[], |n| {
                n.attr("bridge", r("var.bridge"));
            });
        // A SecureBoot template gets the vTPM too: its clones may seal keys to it.
        firmware(b, r("each.value.secure_boot"), r("each.value.secure_boot"), r("var.template_datastore"));
        b.block("disk", &[], |d| {
            d.attr("datastore_id", r("var.template_datastore"))
                .attr(
                    "import_from",
                    idx_expr(
                        "local.image_ids",
                        tpl(vec![
                            Part::E(r("each.value.node_name")),
                            Part::L("/".into()),
                            Part::E(r("each.value.image")),
                        ]),
                        &[],
                    ),
                )
                .attr("interface", "scsi0")
                .attr("file_format", "raw")
                .attr("size", TEMPLATE_DISK_GB);
        });
        b.blank();
        super::arguments::lifecycle(b, VM);
    });
    let mut outputs = file();
    output(
        &mut outputs,
        "image_ids",
        "File ids of the downloaded images, keyed `<node>/<image name>`: `<datastore>:<content type>/<file name>`, as the provider builds the id (bpg v0.111.1 fwprovider/nodes/resource_download_file.go), known at plan.",
        r("local.image_ids"),
        false,
    );
    Module::new(vec![("main.tf", main), ("variables.tf", vars), ("outputs.tf", outputs)])
}

pub(super) fn cluster_module_for(cp: usize) -> Module {
    let mut vars = file();
    Var::new("bridge", ty("string"), "The bridge the VMs' network interfaces attach to.").write(&mut vars);
    Var::new("datastore", ty("string"), "The datastore of the VM disks.").write(&mut vars);
    Var::new("network_prefix", ty("number"), "The private network's prefix length.").write(&mut vars);
    Var::new(
        "router",
        ty("string"),
        "The private network's router (fleet.kdl `proxmox router=`), the nodes' default route.",
    )
    .write(&mut vars);
    Var::new("dns_servers", of("list", ty("string")), "DNS servers given to the nodes.").write(&mut vars);
    Var::new("image_ids", of("map", ty("string")), "Downloaded image file ids, keyed `<node>/<image name>`.")
        .write(&mut vars);
    Var::new("control_plane", of("list", node_ty()), "Control-plane nodes in order (structural: one block per node).")
        .validation(
            Expr::call("contains", [Expr::list([cp as i64]), Expr::call("length", [r("var.control_plane")])]),
            "This module is generated for a fixed number of control-plane nodes; regenerate it with fleetc.",
        )
        .write(&mut vars);
    Var::new("workers", of("map", node_ty()), "Worker nodes by hostname.").default(empty()).write(&mut vars);

    let mut main = file();
    main.comment(
        "F3: one block per control-plane node, each after the previous one, so that a change to the\n\
         VMs reaches one control-plane node at a time (R29).",
    );
    for i in 0..cp {
        let n = format!("cp_{}", i + 1);
        let node = |a: &str| nth("var.control_plane", i, &[a]);
        vm(
            &mut main,
            &n,
            &node,
            Role::ControlPlane,
            false,
            (i > 0).then(|| format!("proxmox_virtual_environment_vm.cp_{i}")),
        );
    }
    let wnode = |a: &str| r(&format!("each.value.{a}"));
    vm(&mut main, "worker", &wnode, Role::Worker, true, None);

    let mut outputs = file();
    let cp_out: Vec<Expr> = (0..cp)
        .map(|i| {
            Expr::object([
                ("hostname", nth("var.control_plane", i, &["hostname"])),
                ("address", nth("var.control_plane", i, &["address"])),
                ("talos_endpoint", nth("var.control_plane", i, &["address"])),
            ])
        })
        .collect();
    output(
        &mut outputs,
        "control_plane",
        "Control-plane nodes in order: hostname, address, Talos API endpoint.",
        Expr::List(cp_out),
        false,
    );
    output(
        &mut outputs,
        "workers",
        "Worker nodes by hostname.",
        Expr::for_object(
            ("k", "n"),
            r("var.workers"),
            r("k"),
            Expr::object([("hostname", r("k")), ("address", r("n.address")), ("talos_endpoint", r("n.address"))]),
        ),
        false,
    );
    Module::new(vec![("main.tf", main), ("variables.tf", vars), ("outputs.tf", outputs)])
}

/// UEFI SecureBoot and the vTPM of a VM (check::disk::PLATFORMS, the Proxmox row): OVMF with
/// an EFI vars disk whose keys are not pre-enrolled, so that the firmware starts in setup mode
/// and the SecureBoot image's systemd-boot enrolls the Image Factory's keys itself (its
/// `loader.conf` says `secure-boot-enroll if-safe`, which enrolls in a VM: siderolabs/talos
/// v1.14.0-alpha.1 `pkg/imager/profile/output.go` l.52-55, `default.go` l.39); a TPM 2.0 state
/// disk when a volume is sealed to the TPM (bpg/terraform-provider-proxmox v0.111.1
/// `proxmoxtf/resource/vm/vm.go` l.217-224, 541-547, 759-830). `seabios` is the provider's
/// default and empty `for_each`s write no block: a machine that asks for neither plans no change.
fn firmware(b: &mut Body, secure_boot: Expr, tpm: Expr, datastore: Expr) {
    let when = |c: Expr| Expr::cond(c, Expr::list([1]), Expr::List(vec![]));
    b.comment("SecureBoot (fleet.kdl `secure-boot`) and the vTPM (`encrypt … key=\"tpm\"`): check::disk::PLATFORMS.")
        .attr("bios", Expr::cond(secure_boot.clone(), "ovmf", "seabios"))
        .block("dynamic", &["efi_disk"], |d| {
            d.attr("for_each", when(secure_boot)).block("content", &[], |c| {
                c.attr("datastore_id", datastore.clone())
                    .attr("file_format", "raw")
                    .attr("type", "4m")
                    .attr("pre_enrolled_keys", false);
            });
        })
        .block("dynamic", &["tpm_state"], |d| {
            d.attr("for_each", when(tpm)).block("content", &[], |c| {
                c.attr("datastore_id", datastore.clone()).attr("version", "v2.0");
            });
        });
}

fn vm(main: &mut Body, name: &str, node: &dyn Fn(&str) -> Expr, role: Role, each: bool, after: Option<String>) {
    main.block("resource", &[VM, name], |b| {
        if each {
            b.attr("for_each", r("var.workers"));
        }
        b.attr("name", node("hostname"))
            .comment("Placement: fleet.kdl's `nodes`, round robin in machine order (model::Proxmox::placement).")
            .attr("node_name", node("node_name"))
            .attr("tags", Expr::list(["talos", role.as_str()]))
            .attr("on_boot", true)
            .attr("stop_on_destroy", true)
            .comment(
                "A new PVE node migrates the VM live instead of replacing it; a change that needs a reboot\n\
                 waits for the VM's next one (`fleetc upgrade` reboots one node at a time) rather than\n\
                 rebooting every VM of the apply at once (emit::tofu::arguments).",
            );
        super::arguments::write_settings(b, VM);
        b.blank()
            .block("cpu", &[], |c| {
                c.attr("cores", node("cores")).attr("type", "host");
            })
            .block("memory", &[], |m| {
                m.attr("dedicated", node("memory_mib"));
            })
            .block("operating_system", &[], |o| {
                o.attr("type", "l26");
            })
            .comment("On when the schematic carries siderolabs/qemu-guest-agent (model::Schematic::has_guest_agent).")
            .block("agent", &[], |a| {
                a.attr("enabled", node("guest_agent"));
            })
            .block("network_device", &[], |n| {
                n.attr("bridge", r("var.bridge"));
            });
        firmware(b, node("secure_boot"), node("tpm"), r("var.datastore"));
        b.comment(
            "The system disk, imported from the schematic's image (R17, R22) through the API (no SSH:\n\
                 bpg v0.111.1 docs/guides/cloud-image.md). Used only when the VM is created.",
        )
        .block("disk", &[], |d| {
            d.attr("datastore_id", r("var.datastore"))
                .attr(
                    "import_from",
                    idx_expr(
                        "var.image_ids",
                        tpl(vec![Part::E(node("node_name")), Part::L("/".into()), Part::E(node("image"))]),
                        &[],
                    ),
                )
                .attr("interface", "scsi0")
                .attr("file_format", "raw")
                .attr("size", node("system_disk_gb"));
        })
        .comment("F5: the data disk that carries EPHEMERAL, selected by size in the Talos config.")
        .block("disk", &[], |d| {
            d.attr("datastore_id", r("var.datastore"))
                .attr("interface", "scsi1")
                .attr("file_format", "raw")
                .attr("size", node("data_disk_gb"));
        })
        .comment("The static address, through NoCloud (the nocloud platform reads it in maintenance mode).")
        .block("initialization", &[], |i| {
            i.attr("datastore_id", r("var.datastore"))
                .block("ip_config", &[], |c| {
                    c.block("ipv4", &[], |v| {
                        v.attr(
                            "address",
                            tpl(vec![Part::E(node("address")), Part::L("/".into()), Part::E(r("var.network_prefix"))]),
                        )
                        .attr("gateway", r("var.router"));
                    });
                })
                .block("dns", &[], |d| {
                    d.attr("servers", r("var.dns_servers"));
                });
        });
        b.blank().comment(
            "F1: a new image (a Talos upgrade, a new schematic) never replaces a running VM: the OS\n\
                 changes through `fleetc upgrade`. `file_id` (ForceNew) is what VMs created before\n\
                 `import_from` were built with. One table, emit::tofu::arguments, which `fleetc diff` reads too.",
        );
        super::arguments::lifecycle(b, VM);
        if let Some(prev) = &after {
            b.blank().attr("depends_on", Expr::list([r(prev)]));
        }
    })
    .blank();
}

pub(super) fn cloud_root(env: &Env<'_>) -> RootFiles {
    let Provider::Proxmox(px) = &env.env.provider else { unreachable!("a Proxmox environment") };
    let mut main = file();
    main.comment(
        "Credentials come from the environment at apply time (PROXMOX_VE_API_TOKEN), never from files.\n\
         A self-signed API certificate: `insecure` (fleet.kdl `insecure=#true`), or a CA bundle in\n\
         SSL_CERT_FILE, which the provider's client honours through Go's system roots (bpg v0.111.1\n\
         proxmox/api/client.go: a tls.Config with InsecureSkipVerify and no RootCAs of its own).",
    )
    .block("provider", &["proxmox"], |p| {
        p.attr("endpoint", r("var.proxmox_endpoint")).attr("insecure", r("var.proxmox_insecure"));
    })
    .blank()
    .block("module", &["cloud"], |m| {
        m.attr("source", format!("../../modules/{CLOUD_MODULE}"))
            .blank()
            .attr("datastore", r("var.image_datastore"))
            .attr("images", r("var.images"))
            .attr("template_datastore", r("var.datastore"))
            .attr("bridge", r("var.bridge"))
            .attr("templates", r("var.templates"));
    })
    .blank();
    // Images were keyed by name alone before they were downloaded per node; the new keys
    // download each once more (a running VM keeps its disk: `import_from` is ignored), and no
    // `moved` block is emitted without a `was=` (docs/tofu.md).
    let images = images(env);
    for c in &env.clusters {
        let key = c.name.value.as_str();
        let cv = |attr: &str| idx("var.clusters", key, &[attr]);
        main.block("module", &[&ident(key)], |m| {
            m.attr("source", format!("../../modules/{}", cluster_module(c.control_plane.machines.len())))
                .blank()
                .attr("bridge", r("var.bridge"))
                .attr("datastore", r("var.datastore"))
                .attr("network_prefix", r("var.network_prefix"))
                .attr("router", r("var.router"))
                .attr("dns_servers", r("var.dns_servers"))
                .attr("image_ids", r("module.cloud.image_ids"))
                .attr("control_plane", cv("control_plane"))
                .attr("workers", cv("workers"));
        })
        .blank();
    }
    super::moved::cloud(&mut main, env, &[], &["proxmox_virtual_environment_vm.worker"]);

    let mut vars = file();
    Var::new("proxmox_endpoint", ty("string"), "The Proxmox VE API URL.").write(&mut vars);
    Var::new(
        "proxmox_insecure",
        ty("bool"),
        "Accept the API's self-signed certificate (fleet.kdl `insecure`); else give its CA in SSL_CERT_FILE.",
    )
    .write(&mut vars);
    Var::new("bridge", ty("string"), "The bridge of the VMs' network interfaces.").write(&mut vars);
    Var::new("datastore", ty("string"), "The datastore of the VM disks.").write(&mut vars);
    Var::new("image_datastore", ty("string"), "The datastore images are downloaded to.").write(&mut vars);
    Var::new("network_cidr", ty("string"), "The private network.").write(&mut vars);
    Var::new("network_prefix", ty("number"), "The private network's prefix length.").write(&mut vars);
    Var::new(
        "router",
        ty("string"),
        "The private network's router (fleet.kdl `proxmox router=`), the nodes' default route.",
    )
    .write(&mut vars);
    Var::new("dns_servers", of("list", ty("string")), "DNS servers.").write(&mut vars);
    Var::new(
        "images",
        of("map", object_ty(&[("node_name", ty("string")), ("image", ty("string")), ("url", ty("string"))])),
        "Image Factory disk images per node, keyed `<node>/<image name>` (R22).",
    )
    .write(&mut vars);
    Var::new(
        "templates",
        of("map", template_ty()),
        "The VM templates Cluster API clones, by name (model::VmTemplate).",
    )
    .write(&mut vars);
    Var::new(
        "clusters",
        of("map", object_ty(&[("control_plane", of("list", node_ty())), ("workers", of("map", node_ty()))])),
        "Machines per cluster (R5; the control-plane count is structural, R29).",
    )
    .write(&mut vars);
    super::passphrase_var(&mut vars);

    let mut values = file();
    let e = env.env;
    values
        .attr("proxmox_endpoint", px.endpoint.value.as_str())
        .attr("proxmox_insecure", px.insecure)
        .attr("bridge", px.bridge.value.as_str())
        .attr("datastore", px.datastore.value.as_str())
        .attr("image_datastore", px.image_datastore.value.as_str())
        .attr("network_cidr", e.network.value.to_string())
        .attr("network_prefix", i64::from(e.network.value.prefix))
        .attr("router", px.gateway.value.to_string())
        .attr("dns_servers", Expr::list(px.dns.iter().map(|d| d.value.to_string())))
        .blank()
        .attr(
            "images",
            Expr::Object(
                images
                    .iter()
                    .map(|(k, (node, image, url))| {
                        (
                            k.clone(),
                            Expr::object([
                                ("node_name", Expr::from(node.as_str())),
                                ("image", Expr::from(image.as_str())),
                                ("url", Expr::from(url.as_str())),
                            ]),
                        )
                    })
                    .collect(),
            ),
        )
        .attr(
            "templates",
            Expr::Object(
                templates(env)
                    .into_iter()
                    .map(|(t, agent)| {
                        (
                            t.name.clone(),
                            Expr::object([
                                ("node_name", Expr::from(px.node.value.as_str())),
                                ("image", Expr::from(t.image.as_str())),
                                ("tags", Expr::list(t.tags.iter().map(String::as_str))),
                                ("guest_agent", Expr::from(agent)),
                                ("secure_boot", Expr::from(t.secure_boot)),
                            ]),
                        )
                    })
                    .collect(),
            ),
        )
        .blank()
        .attr("clusters", Expr::object(env.clusters.iter().map(|c| (c.name.value.clone(), cluster_values(env, c)))));

    let mut outputs = file();
    output(&mut outputs, "network_cidr", "The private network, for the cluster root.", r("var.network_cidr"), false);
    output(
        &mut outputs,
        INVENTORY_OUTPUT,
        "Per cluster: control-plane nodes in order, workers by hostname, and the Kubernetes API endpoint (`kubernetes_api`, `<address>:<port>`).",
        Expr::object(env.clusters.iter().map(|c| {
            let m = ident(&c.name.value);
            (
                c.name.value.clone(),
                Expr::object([
                    ("control_plane", r(&format!("module.{m}.control_plane"))),
                    ("workers", r(&format!("module.{m}.workers"))),
                    ("kubernetes_api", Expr::from(env.env.kubernetes_api(c).unwrap_or_default())),
                ]),
            )
        })),
        false,
    );
    RootFiles { main, variables: vars, outputs, values }
}

/// The VM templates the environment's cloud root creates: one per image a cluster managed by
/// Cluster API clones (unless its template is made by hand, `vm-template-manual`), with whether
/// its schematic runs the guest agent; by name.
pub(crate) fn templates(env: &Env<'_>) -> Vec<(crate::model::VmTemplate, bool)> {
    let mut out: Vec<(crate::model::VmTemplate, bool)> = Vec::new();
    for c in env.env.clusters.iter().filter(|c| c.is_managed()) {
        if c.vm_template_manual.as_ref().is_some_and(|m| m.value) {
            continue;
        }
        for p in c.pools() {
            if let Some(s) = env.fleet.schematic(&p.schematic.value) {
                let t = s.vm_template(c.talos.value, p.disk.secure_boot());
                if !out.iter().any(|(o, _)| o.name == t.name) {
                    out.push((t, s.has_guest_agent()));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    out
}

/// The images to download, keyed `<node>/<image name>`: (node, image name, URL), for every
/// node a VM of the roots runs on and for the template node's templates.
fn images(env: &Env<'_>) -> std::collections::BTreeMap<String, (String, String, String)> {
    let Provider::Proxmox(px) = &env.env.provider else { return Default::default() };
    let mut out = std::collections::BTreeMap::new();
    let platform = env.env.platform();
    let mut add = |node: &str, s: &crate::model::Schematic, talos: crate::model::Version, sb: bool| {
        let name = s.image_name(talos, sb);
        out.entry(format!("{node}/{name}"))
            .or_insert_with(|| (node.to_owned(), name, s.image_url(platform, talos, sb, "qcow2")));
    };
    for c in &env.clusters {
        for p in c.pools() {
            if let Some(s) = env.fleet.schematic(&p.schematic.value) {
                for m in &p.machines {
                    add(px.placement(m.index), s, c.talos.value, p.disk.secure_boot());
                }
            }
        }
    }
    for c in
        env.env.clusters.iter().filter(|c| c.is_managed() && !c.vm_template_manual.as_ref().is_some_and(|m| m.value))
    {
        for p in c.pools() {
            if let Some(s) = env.fleet.schematic(&p.schematic.value) {
                add(&px.node.value, s, c.talos.value, p.disk.secure_boot());
            }
        }
    }
    out
}

fn cluster_values(env: &Env<'_>, c: &Cluster) -> Expr {
    let node = |pool: &crate::model::Pool, m: &crate::model::Machine| {
        let size = env.env.size(&pool.size.value);
        let schematic = env.fleet.schematic(&pool.schematic.value);
        let Provider::Proxmox(px) = &env.env.provider else { unreachable!("a Proxmox environment") };
        Expr::object([
            ("hostname", Expr::from(m.hostname.as_str())),
            ("node_name", Expr::from(px.placement(m.index))),
            ("address", Expr::from(m.address.as_ref().map(|a| a.value.to_string()).unwrap_or_default())),
            ("guest_agent", Expr::from(schematic.is_some_and(crate::model::Schematic::has_guest_agent))),
            ("secure_boot", Expr::from(pool.disk.secure_boot())),
            ("tpm", Expr::from(pool.disk.uses_tpm())),
            ("cores", Expr::from(size.and_then(|s| s.cores.as_ref()).map_or(0, |c| c.value))),
            (
                "memory_mib",
                Expr::Int(
                    size.and_then(|s| s.memory.as_ref()).map_or(0, |m| i64::try_from(m.value.mib_ceil()).unwrap_or(0)),
                ),
            ),
            (
                "image",
                Expr::from(schematic.map(|s| s.image_name(c.talos.value, pool.disk.secure_boot())).unwrap_or_default()),
            ),
            ("system_disk_gb", gb(pool.system_disk_size.value)),
            ("data_disk_gb", gb(pool.data_disk_size.value)),
        ])
    };
    let cp = c.control_plane.machines.iter().map(|m| node(&c.control_plane, m));
    let workers = c
        .workers
        .iter()
        .flat_map(|p| p.machines.iter().map(move |m| (m.hostname.clone(), node(p, m))))
        .collect::<Vec<_>>();
    Expr::object([("control_plane", Expr::list(cp)), ("workers", Expr::Object(workers))])
}
