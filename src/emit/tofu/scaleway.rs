//! Scaleway: the environment module (`scaleway-cloud`: VPC, private network, public gateway,
//! PostgreSQL, buckets, registry namespaces, Secret Manager secrets) and the per-cluster
//! module (`scaleway-cluster-cp<N>`: instances with a data volume, the private API load
//! balancer, the Talos and Kubernetes API switches), and the cloud root that calls them.

use super::hclx::{Part, Var, empty, file, idx, nth, object_ty, of, output, r, tpl, ty, var};
use super::{Env, Module, RootFiles};
use crate::emit::hcl::{Body, Expr};
use crate::layout::names::{
    BASTION_OUTPUT, BASTION_PORT, GATEWAY_IP_VAR, INVENTORY_OUTPUT, KUBERNETES_SWITCH_VAR, TALOS_SWITCH_VAR,
    TUNNEL_ADDRESS, ident,
};
use crate::model::{Cluster, KUBERNETES_API_PORT, Provider, Role};

/// The first local port of the Talos API tunnel (R13): node `n` of the environment is reached
/// at `127.0.0.1:TALOS_PORT_BASE + n` on the operator's machine (1-based, in cluster, pool,
/// node order), forwarded through the gateway's SSH bastion to its port 50000.
pub const TALOS_PORT_BASE: u32 = 50_000;
/// IOPS class of the data volumes (Scaleway Block Storage `sbs_5k`): a value of the variables
/// file (R5), not in fleet.kdl yet.
const DATA_VOLUME_IOPS: u32 = 5000;
/// The public gateway's offer, a value of the variables file (R5).
const GATEWAY_TYPE: &str = "VPC-GW-S";
/// The API load balancer's offer, a value of the variables file (R5).
const LB_TYPE: &str = "LB-S";
/// The special characters of the database password: every one is in Scaleway's policy list,
/// and none needs escaping in a connection URL.
const PASSWORD_SPECIAL: &str = "!*-_.";

pub(super) const CLOUD_MODULE: &str = "scaleway-cloud";

pub(super) fn cluster_module(cp: usize) -> String {
    format!("scaleway-cluster-cp{cp}")
}

fn node_ty() -> Expr {
    object_ty(&[
        ("hostname", ty("string")),
        ("type", ty("string")),
        ("image", ty("string")),
        ("system_disk_gb", ty("number")),
        ("data_disk_gb", ty("number")),
        ("talos_port", ty("number")),
    ])
}

// ------------------------------------------------------------------ environment module

pub(super) fn cloud_module() -> Module {
    let mut vars = file();
    Var::new("name", ty("string"), "Prefix of every resource name: `<fleet>-<environment>`.").write(&mut vars);
    Var::new("network_cidr", ty("string"), "The private network the nodes live on (R6).").write(&mut vars);
    Var::new(
        "gateway_address",
        ty("string"),
        "The public gateway's reserved address: the Talos API switch opens there and every node's certificate SANs carry it (R13, R16).",
    )
    .write(&mut vars);
    Var::new("gateway_type", ty("string"), "The public gateway's offer (R5: a value).").write(&mut vars);
    Var::new(
        "admin_ranges",
        of("list", ty("string")),
        "The only source ranges the gateway's SSH bastion admits (R13).",
    )
    .write(&mut vars);
    Var::new(
        TALOS_SWITCH_VAR,
        ty("bool"),
        "The Talos API switch (R13): the gateway's SSH bastion is enabled only while true. Off at rest.",
    )
    .default(false)
    .write(&mut vars);
    Var::new(
        "databases",
        of(
            "map",
            databases_ty(),
        ),
        "PostgreSQL instances by name; `password_version` both regenerates the password and versions its secret (R10); `password_secret` names that secret, as the ExternalSecret reads it.",
    )
    .default(empty())
    .write(&mut vars);
    Var::new("buckets", of("map", ty("string")), "Object Storage buckets: logical name to global bucket name.")
        .default(empty())
        .write(&mut vars);
    Var::new("registries", of("map", ty("string")), "Container registry namespaces: logical name to global name.")
        .default(empty())
        .write(&mut vars);
    Var::new(
        "secrets",
        of("set", ty("string")),
        "Secret Manager secrets (containers; values are written at apply time).",
    )
    .default(Expr::list(Vec::<Expr>::new()))
    .write(&mut vars);

    let mut main = file();
    main.block("resource", &["scaleway_vpc", "this"], |b| {
        b.attr("name", r("var.name"));
    })
    .blank()
    .block("resource", &["scaleway_vpc_private_network", "nodes"], |b| {
        b.attr("name", r("var.name")).attr("vpc_id", r("scaleway_vpc.this.id")).block("ipv4_subnet", &[], |s| {
            s.attr("subnet", r("var.network_cidr"));
        });
    })
    .blank()
    .comment(
        "The gateway's address is reserved once and imported (see the root's import block): it is in\n\
         every node's certificate SANs (R16), so it must never change, and OpenTofu refuses to destroy it.",
    )
    .block("resource", &["scaleway_vpc_public_gateway_ip", "gateway"], |b| {
        b.block("lifecycle", &[], |l| {
            l.attr("prevent_destroy", true).block("postcondition", &[], |p| {
                p.attr("condition", Expr::call("contains", [Expr::list([r("var.gateway_address")]), r("self.address")]))
                    .attr(
                        "error_message",
                        "The imported gateway IP is not the `gateway` address of fleet.kdl, which the Talos certificates carry (R16).",
                    );
            });
        });
    })
    .blank()
    .comment(
        "R13: the Talos API switch is the gateway's SSH bastion, admitting the admin ranges only; each\n\
         node's port 50000 is reached through an SSH tunnel that `fleetc apply` opens. A node in\n\
         maintenance mode accepts a config from anyone, so nothing forwards port 50000 from any\n\
         source. The ranges are set while the bastion is off: one update enables the bastion\n\
         before it sets its ranges (scaleway v2.81.0 internal/services/vpcgw/public_gateway.go\n\
         l.290-352, UpdateGateway then SetBastionAllowedIPs), and creation sets them the same way.",
    )
    .block("resource", &["scaleway_vpc_public_gateway", "gateway"], |b| {
        b.attr("name", r("var.name"))
            .attr("type", r("var.gateway_type"))
            .attr("ip_id", r("scaleway_vpc_public_gateway_ip.gateway.id"))
            .attr("bastion_enabled", var(TALOS_SWITCH_VAR))
            .attr("bastion_port", i64::from(BASTION_PORT))
            .attr("allowed_ip_ranges", r("var.admin_ranges"));
    })
    .blank()
    .comment("Egress for the nodes, which have no public address of their own (R6, R12).")
    .block("resource", &["scaleway_vpc_gateway_network", "nodes"], |b| {
        b.attr("gateway_id", r("scaleway_vpc_public_gateway.gateway.id"))
            .attr("private_network_id", r("scaleway_vpc_private_network.nodes.id"))
            .attr("enable_masquerade", true)
            .block("ipam_config", &[], |i| {
                i.attr("push_default_route", true);
            });
    })
    .blank()
    .comment(
        "R10: the password is ephemeral (never in state nor plan) and reaches the database and Secret\n\
         Manager as write-only attributes. Both are sent only when `password_version` changes, and\n\
         the same input versions both, so a rotation moves the two halves in one apply.",
    )
    .comment(
        "Scaleway's password policy: 8-128 characters with at least one lowercase, one uppercase, one\n\
         digit and one special character among !@#$%^&*()_+-=[]{}|;:,.<>? (scaleway v2.81.0\n\
         docs/resources/rdb_user.md); the special characters here are a URL-safe subset of those.",
    )
    .block("ephemeral", &["random_password", "database"], |b| {
        b.attr("for_each", r("var.databases"))
            .attr("length", 32)
            .attr("special", true)
            .attr("override_special", PASSWORD_SPECIAL)
            .attr("min_lower", 1)
            .attr("min_upper", 1)
            .attr("min_numeric", 1)
            .attr("min_special", 1);
    })
    .blank()
    .block("resource", &["scaleway_rdb_instance", "this"], |b| {
        b.attr("for_each", r("var.databases"))
            .attr("name", tpl(vec![Part::E(r("var.name")), Part::L("-".into()), Part::E(r("each.key"))]))
            .attr("node_type", r("each.value.node_type"))
            .attr("engine", r("each.value.engine"))
            .attr("is_ha_cluster", false)
            .attr("user_name", r("each.key"))
            .attr("password_wo", idx_expr("ephemeral.random_password.database", r("each.key"), &["result"]))
            .attr("password_wo_version", r("each.value.password_version"))
            .blank()
            .comment("Private network only: without a `load_balancer` block there is no public endpoint (R6).")
            .block("private_network", &[], |p| {
                p.attr("pn_id", r("scaleway_vpc_private_network.nodes.id")).attr("enable_ipam", true);
            });
    })
    .blank()
    .block("resource", &["scaleway_secret", "database_password"], |b| {
        b.attr("for_each", r("var.databases"))
            .attr("name", r("each.value.password_secret"));
    })
    .blank()
    .block("resource", &["scaleway_secret_version", "database_password"], |b| {
        b.attr("for_each", r("var.databases"))
            .attr("secret_id", idx_expr("scaleway_secret.database_password", r("each.key"), &["id"]))
            .attr("data_wo", idx_expr("ephemeral.random_password.database", r("each.key"), &["result"]))
            .attr("data_wo_version", r("each.value.password_version"));
    })
    .blank()
    .block("resource", &["scaleway_object_bucket", "this"], |b| {
        b.attr("for_each", r("var.buckets")).attr("name", r("each.value"));
    })
    .blank()
    .block("resource", &["scaleway_registry_namespace", "this"], |b| {
        b.attr("for_each", r("var.registries")).attr("name", r("each.value")).attr("is_public", false);
    })
    .blank()
    .block("resource", &["scaleway_secret", "this"], |b| {
        b.attr("for_each", r("var.secrets"))
            .attr("name", tpl(vec![Part::E(r("var.name")), Part::L("-".into()), Part::E(r("each.key"))]));
    });

    let mut outputs = file();
    output(
        &mut outputs,
        "private_network_id",
        "The nodes' private network.",
        r("scaleway_vpc_private_network.nodes.id"),
        false,
    );
    output(&mut outputs, "network_cidr", "The private network's CIDR.", r("var.network_cidr"), false);
    output(
        &mut outputs,
        "gateway_id",
        "The public gateway (Talos and Kubernetes API switches).",
        r("scaleway_vpc_public_gateway.gateway.id"),
        false,
    );
    output(
        &mut outputs,
        "gateway_address",
        "The public gateway's address.",
        r("scaleway_vpc_public_gateway_ip.gateway.address"),
        false,
    );
    output(
        &mut outputs,
        "bastion",
        "The gateway's SSH bastion, the Talos API switch (R13), as the provider read it back.",
        Expr::object([
            ("address", r("scaleway_vpc_public_gateway_ip.gateway.address")),
            ("port", r("scaleway_vpc_public_gateway.gateway.bastion_port")),
            ("enabled", r("scaleway_vpc_public_gateway.gateway.bastion_enabled")),
            ("allowed_ip_ranges", r("scaleway_vpc_public_gateway.gateway.allowed_ip_ranges")),
        ]),
        false,
    );
    Module::new(vec![("main.tf", main), ("variables.tf", vars), ("outputs.tf", outputs)])
}

// ------------------------------------------------------------------ cluster module

#[allow(
    clippy::too_many_lines,
    reason = "one OpenTofu module written top to bottom as tofu reads it: its variables, resources and outputs in file order"
)]
pub(super) fn cluster_module_for(cp: usize) -> Module {
    let mut vars = file();
    Var::new("name", ty("string"), "Prefix of resource names: `<fleet>-<environment>-<cluster>`.").write(&mut vars);
    Var::new("private_network_id", ty("string"), "The environment's private network.").write(&mut vars);
    Var::new("network_cidr", ty("string"), "The private network's CIDR (allowed to the API load balancer).")
        .write(&mut vars);
    Var::new("gateway_id", ty("string"), "The public gateway that carries the API switches.").write(&mut vars);
    Var::new("gateway_address", ty("string"), "The public gateway's address.").write(&mut vars);
    Var::new(
        "admin_ranges",
        of("list", ty("string")),
        "Source ranges allowed to the Kubernetes API through the gateway (R13).",
    )
    .write(&mut vars);
    Var::new("endpoint_address", ty("string"), "The Kubernetes API's private address: the load balancer's (R12).")
        .write(&mut vars);
    Var::new("lb_type", ty("string"), "The API load balancer's offer (R5: a value).").write(&mut vars);
    Var::new("data_volume_iops", ty("number"), "The data volumes' IOPS class (R5: a value).").write(&mut vars);
    Var::new("kubernetes_api_port", ty("number"), "The gateway port of the operator's path to the Kubernetes API.")
        .write(&mut vars);
    Var::new(
        "control_plane",
        of("list", node_ty()),
        "Control-plane nodes, in order. Structural: this module has one block per node (R29, F3, F4).",
    )
    .validation(
        Expr::call("contains", [Expr::list([cp as i64]), Expr::call("length", [r("var.control_plane")])]),
        "This module is generated for a fixed number of control-plane nodes; regenerate it with fleetc.",
    )
    .write(&mut vars);
    Var::new("workers", of("map", node_ty()), "Worker nodes by hostname (R5: counts and sizes are values).")
        .default(empty())
        .write(&mut vars);
    Var::new(
        KUBERNETES_SWITCH_VAR,
        ty("bool"),
        "The operator's path to the Kubernetes API through the gateway. Off at rest.",
    )
    .default(false)
    .write(&mut vars);

    let mut main = file();
    main.comment("The image is looked up by name: the apply step's image pipeline uploads it first (R22).")
        .block("data", &["scaleway_instance_image", "talos"], |b| {
            b.attr(
                "for_each",
                Expr::call(
                    "toset",
                    [Expr::call(
                        "concat",
                        [
                            Expr::for_list("n", r("var.control_plane"), r("n.image")),
                            Expr::for_list("n", Expr::call("values", [r("var.workers")]), r("n.image")),
                        ],
                    )],
                ),
            )
            .attr("name", r("each.value"))
            .attr("latest", true);
        })
        .blank();
    main.comment(
        "F3/F4: one block per control-plane node, each depending on the previous one, so that a\n\
         type change (a stop, change, start migration: replace_on_type_change stays false, a\n\
         replacement would wipe an etcd member) reaches one control-plane node at a time.",
    );
    for i in 0..cp {
        let n = format!("cp_{}", i + 1);
        let node = |attr: &str| nth("var.control_plane", i, &[attr]);
        server(
            &mut main,
            &n,
            Some(i),
            &node,
            Role::ControlPlane,
            (i > 0).then(|| format!("scaleway_instance_server.cp_{i}")),
        );
    }
    let wnode = |attr: &str| r(&format!("each.value.{attr}"));
    server(&mut main, "worker", None, &wnode, Role::Worker, None);

    // Private load balancer in front of the Kubernetes API (R12).
    let cp_addresses: Vec<Expr> = (1..=cp).map(|i| private_ip(&format!("scaleway_instance_server.cp_{i}"))).collect();
    main.comment(
        "R12: the Kubernetes API sits behind a private load balancer at the endpoint address, not a virtual IP.",
    )
    .block("resource", &["scaleway_ipam_ip", "endpoint"], |b| {
        b.attr("address", r("var.endpoint_address")).block("source", &[], |s| {
            s.attr("private_network_id", r("var.private_network_id"));
        });
    })
    .blank()
    .block("resource", &["scaleway_lb", "api"], |b| {
        b.attr("name", tpl(vec![Part::E(r("var.name")), Part::L("-api".into())]))
            .attr("type", r("var.lb_type"))
            .attr("assign_flexible_ip", false)
            .block("private_network", &[], |p| {
                p.attr("private_network_id", r("var.private_network_id"))
                    .attr("ipam_ids", Expr::list([r("scaleway_ipam_ip.endpoint.id")]));
            });
    })
    .blank()
    .block("resource", &["scaleway_lb_backend", "api"], |b| {
        b.attr("lb_id", r("scaleway_lb.api.id"))
            .attr("name", "kubernetes-api")
            .attr("forward_protocol", "tcp")
            .attr("forward_port", KUBERNETES_API_PORT)
            .attr("server_ips", Expr::List(cp_addresses))
            .block("health_check_tcp", &[], |_| {});
    })
    .blank()
    .block("resource", &["scaleway_lb_frontend", "api"], |b| {
        b.attr("lb_id", r("scaleway_lb.api.id"))
            .attr("backend_id", r("scaleway_lb_backend.api.id"))
            .attr("name", "kubernetes-api")
            .attr("inbound_port", KUBERNETES_API_PORT);
    })
    .blank()
    .comment("Only the private network and the admin ranges reach the API; everything else is refused.")
    .block("resource", &["scaleway_lb_acl", "api_allow"], |b| {
        b.attr("frontend_id", r("scaleway_lb_frontend.api.id"))
            .attr("name", "private-network-and-admin-ranges")
            .attr("index", 0)
            .block("action", &[], |a| {
                a.attr("type", "allow");
            })
            .block("match", &[], |m| {
                m.attr("ip_subnet", Expr::call("concat", [Expr::list([r("var.network_cidr")]), r("var.admin_ranges")]));
            });
    })
    .blank()
    .block("resource", &["scaleway_lb_acl", "api_deny"], |b| {
        b.attr("frontend_id", r("scaleway_lb_frontend.api.id"))
            .attr("name", "everything-else")
            .attr("index", 1)
            .block("action", &[], |a| {
                a.attr("type", "deny");
            })
            .block("match", &[], |m| {
                m.attr("ip_subnet", Expr::list(["0.0.0.0/0"]));
            });
    })
    .blank();

    // R13: no rule forwards a node's port 50000: the Talos API is reached through the gateway's
    // SSH bastion (the environment module), which admits the admin ranges only.
    main.comment("The operator's path to the Kubernetes API: the load balancer's ACL admits the admin ranges only.")
        .block("resource", &["scaleway_vpc_public_gateway_pat_rule", "kubernetes_api"], |b| {
            b.attr("count", Expr::cond(var(KUBERNETES_SWITCH_VAR), 1, 0))
                .attr("gateway_id", r("var.gateway_id"))
                .attr("private_ip", r("var.endpoint_address"))
                .attr("private_port", KUBERNETES_API_PORT)
                .attr("public_port", r("var.kubernetes_api_port"))
                .attr("protocol", "tcp");
        });

    let mut outputs = file();
    // R13: the node's end of the Talos API tunnel on the operator's machine (layout::names::TUNNEL_ADDRESS).
    let talos_endpoint = |port: Expr| tpl(vec![Part::L(format!("{TUNNEL_ADDRESS}:")), Part::E(port)]);
    let cp_out: Vec<Expr> = (0..cp)
        .map(|i| {
            Expr::object([
                ("hostname", nth("var.control_plane", i, &["hostname"])),
                ("address", private_ip(&format!("scaleway_instance_server.cp_{}", i + 1))),
                ("talos_endpoint", talos_endpoint(nth("var.control_plane", i, &["talos_port"]))),
            ])
        })
        .collect();
    output(
        &mut outputs,
        "control_plane",
        "Control-plane nodes in order: hostname, private address, Talos API endpoint.",
        Expr::List(cp_out),
        false,
    );
    output(
        &mut outputs,
        "workers",
        "Worker nodes by hostname: hostname, private address, Talos API endpoint.",
        Expr::for_object(
            ("k", "s"),
            r("scaleway_instance_server.worker"),
            r("k"),
            Expr::object([
                ("hostname", r("k")),
                ("address", worker_ip(r("k"))),
                ("talos_endpoint", talos_endpoint(idx_expr("var.workers", r("k"), &["talos_port"]))),
            ]),
        ),
        false,
    );
    output(
        &mut outputs,
        "endpoint_address",
        "The Kubernetes API load balancer's private address.",
        r("scaleway_ipam_ip.endpoint.address"),
        false,
    );
    output(
        &mut outputs,
        "kubernetes_api",
        "The operator's path to the Kubernetes API (`<gateway address>:<port>`) while `kubernetes_api_open`, else null.",
        Expr::cond(
            var(KUBERNETES_SWITCH_VAR),
            tpl(vec![Part::E(r("var.gateway_address")), Part::L(":".into()), Part::E(r("var.kubernetes_api_port"))]),
            Expr::Null,
        ),
        false,
    );
    Module::new(vec![("main.tf", main), ("variables.tf", vars), ("outputs.tf", outputs)])
}

/// The type of a `databases` entry, in the cloud module and in the cloud root alike.
fn databases_ty() -> Expr {
    object_ty(&[
        ("node_type", ty("string")),
        ("engine", ty("string")),
        ("password_version", ty("number")),
        ("password_secret", ty("string")),
    ])
}

/// A control-plane server's private IPv4 address: `data.scaleway_ipam_ip.cp_<i>.address`, the
/// IPv4 address IPAM holds for the server's NIC on the private network (see [`server`]).
fn private_ip(server: &str) -> Expr {
    let name = server.rsplit('.').next().unwrap_or(server);
    r(&format!("data.scaleway_ipam_ip.{name}.address"))
}

/// A worker's private IPv4 address, keyed by its hostname `k`.
fn worker_ip(k: Expr) -> Expr {
    idx_expr("data.scaleway_ipam_ip.worker", k, &["address"])
}

/// `root[key].rest…` with an expression key.
pub(super) fn idx_expr(root: &str, key: Expr, rest: &[&str]) -> Expr {
    let mut t = crate::emit::hcl::Traversal::path(root).index(key);
    for a in rest {
        t = t.attr(*a);
    }
    t.into()
}

/// An instance with its data volume. `i` is the control-plane index (`None` for workers,
/// which iterate `var.workers`).
fn server(
    main: &mut Body,
    name: &str,
    i: Option<usize>,
    node: &dyn Fn(&str) -> Expr,
    role: Role,
    after: Option<String>,
) {
    let volume = format!("{name}_data");
    main.comment(format!(
        "F5: the EPHEMERAL volume lives on this second volume, selected by size in the Talos config{}.",
        if i.is_some() { "" } else { " (workers: one per entry of var.workers)" }
    ))
    .block("resource", &["scaleway_block_volume", &volume], |b| {
        if i.is_none() {
            b.attr("for_each", r("var.workers"));
        }
        b.attr("name", tpl(vec![Part::E(node("hostname")), Part::L("-data".into())]))
            .attr("size_in_gb", node("data_disk_gb"))
            .attr("iops", r("var.data_volume_iops"));
    })
    .blank()
    .block("resource", &["scaleway_instance_server", name], |b| {
        if i.is_none() {
            b.attr("for_each", r("var.workers"));
        }
        let volume_id = if i.is_none() {
            idx_expr(&format!("scaleway_block_volume.{volume}"), r("each.key"), &["id"])
        } else {
            r(&format!("scaleway_block_volume.{volume}.id"))
        };
        b.attr("name", node("hostname"))
            .attr("type", node("type"))
            .attr("image", idx_expr("data.scaleway_instance_image.talos", node("image"), &["id"]))
            .attr("tags", Expr::list(["talos", role.as_str()]))
            .comment("F4: a type change migrates (stop, change, start) rather than replaces the node.");
        super::arguments::write_settings(b, "scaleway_instance_server");
        b.comment("R12: no public address; egress goes through the public gateway.")
            .attr("enable_dynamic_ip", false)
            .attr("additional_volume_ids", Expr::list([volume_id]))
            .blank()
            .block("root_volume", &[], |v| {
                v.attr("size_in_gb", node("system_disk_gb")).attr("volume_type", "sbs_volume");
            })
            .block("private_network", &[], |p| {
                p.attr("pn_id", r("var.private_network_id"));
            });
        b.blank().comment(
            "F1: the image only installs a new machine. A Talos upgrade or a new schematic changes the\n\
                 image id, which would replace the server (scaleway v2.81.0 customDiffInstanceServerImage,\n\
                 ForceNew) and wipe its etcd member; running machines change OS through `fleetc upgrade`.\n\
                 The ignored arguments are one table, emit::tofu::arguments, which `fleetc diff` reads too.",
        );
        super::arguments::lifecycle(b, "scaleway_instance_server");
        let mut deps = vec![r("scaleway_ipam_ip.endpoint")];
        if let Some(prev) = &after {
            deps.push(r(prev));
        }
        b.blank()
            .comment(if after.is_some() {
                "R12: the endpoint's fixed address is reserved before any node takes a dynamic one; F3: one\n\
                 control-plane node after the other."
            } else {
                "R12: the endpoint's fixed address is reserved before any node takes a dynamic one."
            })
            .attr("depends_on", Expr::List(deps));
    })
    .blank()
    .comment(
        "R12, R18: the node's private IPv4 address, as IPAM holds it for the server's NIC. An explicit\n\
         IPv4 lookup: the server's `private_ips` lists IPv4 and IPv6 addresses in IPAM's order.",
    )
    .block("data", &["scaleway_ipam_ip", name], |d| {
        let nics = if i.is_none() {
            d.attr("for_each", r("var.workers"));
            crate::emit::hcl::Traversal::path(&format!("scaleway_instance_server.{name}")).index(r("each.key"))
        } else {
            crate::emit::hcl::Traversal::path(&format!("scaleway_instance_server.{name}"))
        };
        let pnic = nics.attr("private_network").index(Expr::Int(0)).attr("pnic_id");
        d.attr("type", "ipv4").block("resource", &[], |res| {
            res.attr("id", Expr::from(pnic)).attr("type", "instance_private_nic");
        });
    })
    .blank();
}

// ------------------------------------------------------------------ cloud root

/// The cloud root of a Scaleway environment.
pub(super) fn cloud_root(env: &Env<'_>) -> RootFiles {
    let Provider::Scaleway(scw) = &env.env.provider else { unreachable!("a Scaleway environment") };
    let mut main = file();
    main.comment(
        "R9/F9: project, region and zone come from the variables file. The SDK prefers SCW_* variables\n\
         over these provider arguments, so every resource also names them itself (the modules'\n\
         project_id, region and zone), and the apply step refuses to run with SCW_* exported.",
    )
    .block("provider", &["scaleway"], |p| {
        p.attr("project_id", r("var.project_id")).attr("region", r("var.region")).attr("zone", r("var.zone"));
    })
    .blank()
    .block("module", &["cloud"], |m| {
        m.attr("source", format!("../../modules/{CLOUD_MODULE}"))
            .blank()
            .attr("project_id", r("var.project_id"))
            .attr("region", r("var.region"))
            .attr("zone", r("var.zone"))
            .attr("name", r("var.name"))
            .attr("network_cidr", r("var.network_cidr"))
            .attr("gateway_address", r("var.gateway_address"))
            .attr("gateway_type", r("var.gateway_type"))
            .attr("admin_ranges", r("var.admin_ranges"))
            .attr(TALOS_SWITCH_VAR, var(TALOS_SWITCH_VAR))
            .attr("databases", r("var.databases"))
            .attr("buckets", r("var.buckets"))
            .attr("registries", r("var.registries"))
            .attr("secrets", r("var.secrets"));
    })
    .blank()
    .comment(
        "The reserved gateway address (R16) is imported, never created: its id is an apply-time input\n\
         that `fleetc apply` looks up by fleet.kdl's `gateway` address (`scw vpc-gw ip list`).",
    )
    .block("import", &[], |i| {
        i.attr("to", r("module.cloud.scaleway_vpc_public_gateway_ip.gateway")).attr("id", var(GATEWAY_IP_VAR));
    })
    .blank();
    for c in &env.clusters {
        let key = c.name.value.as_str();
        let cv = |attr: &str| idx("var.clusters", key, &[attr]);
        main.block("module", &[&ident(key)], |m| {
            m.attr("source", format!("../../modules/{}", cluster_module(c.control_plane.machines.len())))
                .blank()
                .attr("project_id", r("var.project_id"))
                .attr("region", r("var.region"))
                .attr("zone", r("var.zone"))
                .attr("name", tpl(vec![Part::E(r("var.name")), Part::L(format!("-{key}"))]))
                .attr("private_network_id", r("module.cloud.private_network_id"))
                .attr("network_cidr", r("module.cloud.network_cidr"))
                .attr("gateway_id", r("module.cloud.gateway_id"))
                .attr("gateway_address", r("module.cloud.gateway_address"))
                .attr("admin_ranges", r("var.admin_ranges"))
                .attr("endpoint_address", cv("endpoint_address"))
                .attr("lb_type", r("var.lb_type"))
                .attr("data_volume_iops", r("var.data_volume_iops"))
                .attr("kubernetes_api_port", cv("kubernetes_api_port"))
                .attr("control_plane", cv("control_plane"))
                .attr("workers", cv("workers"))
                .attr(KUBERNETES_SWITCH_VAR, var(KUBERNETES_SWITCH_VAR));
        })
        .blank();
    }
    super::moved::cloud(
        &mut main,
        env,
        &[
            ("scaleway_rdb_instance.this", Kind::Postgres),
            ("scaleway_secret.database_password", Kind::Postgres),
            ("scaleway_secret_version.database_password", Kind::Postgres),
            ("scaleway_object_bucket.this", Kind::Bucket),
            ("scaleway_registry_namespace.this", Kind::Registry),
            ("scaleway_secret.this", Kind::Secret),
        ],
        &["scaleway_instance_server.worker", "scaleway_block_volume.worker_data"],
    );

    let mut vars = file();
    Var::new("project_id", ty("string"), "The Scaleway project every resource is built in (R9).").write(&mut vars);
    Var::new("region", ty("string"), "The Scaleway region.").write(&mut vars);
    Var::new("zone", ty("string"), "The Scaleway zone.").write(&mut vars);
    Var::new("name", ty("string"), "Prefix of every resource name: `<fleet>-<environment>`.").write(&mut vars);
    Var::new("network_cidr", ty("string"), "The private network (R6).").write(&mut vars);
    Var::new("gateway_address", ty("string"), "The public gateway's reserved address (R13, R16).").write(&mut vars);
    Var::new(
        GATEWAY_IP_VAR,
        ty("string"),
        "The id (`<zone>/<uuid>`) of the reserved gateway IP to import (R16): not a secret, not in fleet.kdl (which names its address); `fleetc apply` looks it up by that address and passes it.",
    )
    .write(&mut vars);
    Var::new("admin_ranges", of("list", ty("string")), "Source ranges allowed through the API switches (R13).")
        .write(&mut vars);
    Var::new("gateway_type", ty("string"), "The public gateway's offer (R5).").write(&mut vars);
    Var::new("lb_type", ty("string"), "The API load balancers' offer (R5).").write(&mut vars);
    Var::new("data_volume_iops", ty("number"), "The data volumes' IOPS class (R5).").write(&mut vars);
    Var::new(
        "databases",
        of(
            "map",
            databases_ty(),
        ),
        "PostgreSQL instances (R6, R10); `password_secret` is the Secret Manager secret the cluster's ExternalSecret reads.",
    )
    .write(&mut vars);
    Var::new("buckets", of("map", ty("string")), "Object Storage buckets (R6).").write(&mut vars);
    Var::new("registries", of("map", ty("string")), "Container registry namespaces (R6).").write(&mut vars);
    Var::new("secrets", of("set", ty("string")), "Secret Manager secrets (R6).").write(&mut vars);
    Var::new(
        "clusters",
        of(
            "map",
            object_ty(&[
                ("endpoint_address", ty("string")),
                ("kubernetes_api_port", ty("number")),
                ("control_plane", of("list", node_ty())),
                ("workers", of("map", node_ty())),
            ]),
        ),
        "Machines per cluster (R5: counts and sizes are values; the control-plane count is structural, R29).",
    )
    .write(&mut vars);
    Var::new(TALOS_SWITCH_VAR, ty("bool"), "Open the Talos API switch (R13). Off at rest.")
        .default(false)
        .write(&mut vars);
    Var::new(KUBERNETES_SWITCH_VAR, ty("bool"), "Open the operator's path to the Kubernetes API. Off at rest.")
        .default(false)
        .write(&mut vars);
    super::passphrase_var(&mut vars);

    let mut values = file();
    let e = env.env;
    values
        .attr("project_id", scw.project.value.as_str())
        .attr("region", scw.region.value.as_str())
        .attr("zone", scw.zone.value.as_str())
        .attr("name", env.fleet.resource_prefix(e))
        .attr("network_cidr", e.network.value.to_string())
        .attr("gateway_address", e.gateway.as_ref().map(|g| g.value.to_string()).unwrap_or_default())
        .attr("admin_ranges", Expr::list(e.admin_ranges.iter().map(|a| a.value.to_string())))
        .attr("gateway_type", GATEWAY_TYPE)
        .attr("lb_type", LB_TYPE)
        .attr("data_volume_iops", DATA_VOLUME_IOPS)
        .blank()
        .attr(
            "databases",
            Expr::object(e.postgres.iter().map(|p| {
                (
                    p.name.value.clone(),
                    Expr::object([
                        ("node_type", Expr::from(p.node_type.value.as_str())),
                        ("engine", Expr::from(p.engine.value.as_str())),
                        ("password_version", Expr::from(p.password_version.value)),
                        // One name, one place: the ExternalSecret asks for the same (R10 → R23).
                        ("password_secret", Expr::from(p.password_secret(&env.fleet.resource_prefix(e)))),
                    ]),
                )
            })),
        )
        .attr(
            "buckets",
            Expr::object(e.buckets.iter().map(|b| (b.name.value.clone(), Expr::from(b.bucket_name.value.as_str())))),
        )
        .attr(
            "registries",
            Expr::object(e.registries.iter().map(|b| (b.name.value.clone(), Expr::from(b.namespace.value.as_str())))),
        )
        .attr("secrets", Expr::list(e.secrets.iter().map(|s| s.name.value.as_str())))
        .blank()
        .attr("clusters", Expr::object(env.clusters.iter().map(|c| (c.name.value.clone(), cluster_values(env, c)))));

    let mut outputs = file();
    output(
        &mut outputs,
        "network_cidr",
        "The private network, for the cluster root.",
        r("module.cloud.network_cidr"),
        false,
    );
    output(&mut outputs, "gateway_address", "The public gateway's address.", r("module.cloud.gateway_address"), false);
    output(
        &mut outputs,
        BASTION_OUTPUT,
        "The gateway's SSH bastion, the Talos API switch (R13): address, port, and whether it is enabled and from which ranges, as the provider read them back.",
        r("module.cloud.bastion"),
        false,
    );
    output(
        &mut outputs,
        INVENTORY_OUTPUT,
        "Per cluster: control-plane nodes in order, workers by hostname, the API load balancer's address and the operator's path to the Kubernetes API (`kubernetes_api`, null while closed).",
        Expr::object(env.clusters.iter().map(|c| {
            let m = ident(&c.name.value);
            (
                c.name.value.clone(),
                Expr::object([
                    ("control_plane", r(&format!("module.{m}.control_plane"))),
                    ("workers", r(&format!("module.{m}.workers"))),
                    ("endpoint_address", r(&format!("module.{m}.endpoint_address"))),
                    ("kubernetes_api", r(&format!("module.{m}.kubernetes_api"))),
                ]),
            )
        })),
        false,
    );
    RootFiles { main, variables: vars, outputs, values }
}

fn cluster_values(env: &Env<'_>, c: &Cluster) -> Expr {
    let node = |pool: &crate::model::Pool, m: &crate::model::Machine| {
        let size = env.env.size(&pool.size.value);
        let schematic = env.fleet.schematic(&pool.schematic.value);
        Expr::object([
            ("hostname", Expr::from(m.hostname.as_str())),
            (
                "type",
                Expr::from(size.and_then(|s| s.instance_type.as_ref()).map(|t| t.value.clone()).unwrap_or_default()),
            ),
            (
                "image",
                Expr::from(schematic.map(|s| s.image_name(c.talos.value, pool.disk.secure_boot())).unwrap_or_default()),
            ),
            ("system_disk_gb", gb(pool.system_disk_size.value)),
            ("data_disk_gb", gb(pool.data_disk_size.value)),
            ("talos_port", Expr::from(env.talos_port(&m.hostname))),
        ])
    };
    let cp = c.control_plane.machines.iter().map(|m| node(&c.control_plane, m));
    let workers = c
        .workers
        .iter()
        .flat_map(|p| p.machines.iter().map(move |m| (m.hostname.clone(), node(p, m))))
        .collect::<Vec<_>>();
    Expr::object([
        ("endpoint_address", Expr::from(c.endpoint.host())),
        ("kubernetes_api_port", Expr::from(env.env.kubernetes_api_port(&c.name.value))),
        ("control_plane", Expr::list(cp)),
        ("workers", Expr::Object(workers)),
    ])
}

pub(super) fn gb(b: crate::model::Bytes) -> Expr {
    Expr::Int(i64::try_from(b.gb_ceil()).unwrap_or(i64::MAX))
}

pub(super) use super::moved::Kind;
