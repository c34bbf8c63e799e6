//! The cluster layer: the `talos-cluster-cp<N>` module (machine secrets, machine configs from
//! the Talos documents in out/talos, ordered applies, bootstrap, kubeconfig) and the cluster
//! root that reads the cloud root's state and calls it once per cluster (R2, R11, R14, R19).

use super::hclx::{Part, Var, empty, file, idx, nth, object_ty, of, output, r, tpl, ty, var};
use super::scaleway::idx_expr;
use super::settings::s3_settings;
use super::{Env, Module, RootFiles};
use crate::emit::hcl::{Body, Expr};
use crate::layout::names::{
    APPLY_MODE_VAR, BOOTSTRAP_RESOURCE, CONFIG_APPLY, INVENTORY_OUTPUT, TALOS_SECRETS_VAR, WORKER_APPLY,
    control_plane_apply, ident,
};
use crate::layout::paths::{
    self, CLOUD, COMMON_DOC, CONTROL_PLANE_DOC, CONTROL_PLANE_PATCHES, NODE_PATCHES, NODES_DIR, WORKER_PATCHES,
    WORKERS_DIR,
};
use crate::model::ApplyMode;

pub(super) fn module_name(cp: usize) -> String {
    format!("talos-cluster-cp{cp}")
}

/// The import id of a cluster's secrets bundle when `talos_secrets_files` gives no path (C2).
/// OpenTofu evaluates every import block's id on every plan (opentofu v1.11.5
/// `internal/tofu/node_resource_plan.go` l.179-184, `eval_import.go`
/// `evaluateImportIdExpressionInner`), so the variable has a default (`{}`) and a plan long
/// after the import needs no bundle: with the secrets in state the import is skipped
/// (`node_resource_plan_instance.go` l.743-752, `shouldImport`). Not empty: an empty id would
/// skip the import on a fresh state too, and tofu would plan to *generate* a bundle (R14).
/// This one names no file, so there the provider's import fails loudly instead
/// (terraform-provider-talos v0.11.0 `talos_machine_secrets_resource.go` l.603-610, `os.Stat`).
fn missing_bundle_id(cluster: &str) -> String {
    format!("no bundle given for cluster {cluster} (R14: set {TALOS_SECRETS_VAR}, as fleetc apply does)")
}

fn node_ty() -> Expr {
    object_ty(&[("hostname", ty("string")), ("address", ty("string")), ("talos_endpoint", ty("string"))])
}

/// The Talos documents of a node, in the order they patch the generated config: the
/// cluster's common document, the role's, the node's own, then the user's patches of the
/// node's pool, then the node's own patches (a named node's, `patches/nodes/<hostname>/`).
fn patches(role: &str, hostname: Expr) -> Expr {
    let doc = |name: Expr| Expr::call("file", [name]);
    let dir = |rest: Vec<Part>| {
        let mut parts = vec![Part::E(r("var.talos_dir")), Part::L("/".into())];
        parts.extend(rest);
        tpl(parts)
    };
    // The role's document: one for the control plane, one per worker pool (its installer,
    // disks, labels and taints).
    let role_doc = if role == "worker" {
        dir(vec![
            Part::L(format!("{WORKERS_DIR}/")),
            Part::E(idx_expr("var.worker_pools", hostname.clone(), &[])),
            Part::L(".yaml".into()),
        ])
    } else {
        dir(vec![Part::L(CONTROL_PLANE_DOC.into())])
    };
    let hostname_for_patches = hostname.clone();
    let mut list = vec![
        doc(dir(vec![Part::L(COMMON_DOC.into())])),
        doc(role_doc),
        doc(dir(vec![Part::L(format!("{NODES_DIR}/")), Part::E(hostname), Part::L(".yaml".into())])),
    ];
    // The user's patches last, in file-name order (docs/talos.md, "Patches"); a pool with
    // none has no directory, and `fileset` of a missing directory is empty (OpenTofu v1.11.5
    // `internal/lang/funcs/filesystem.go`, `doublestar.FilepathGlob`).
    let user_dir = |rest: Vec<Part>| {
        let mut parts = if role == "worker" {
            vec![
                Part::L(format!("{WORKER_PATCHES}/")),
                Part::E(idx_expr("var.worker_pools", hostname_for_patches.clone(), &[])),
            ]
        } else {
            vec![Part::L(CONTROL_PLANE_PATCHES.into())]
        };
        parts.extend(rest);
        dir(parts)
    };
    let user = Expr::For(Box::new(crate::emit::hcl::ForExpr {
        key_var: None,
        value_var: "f".into(),
        collection: Expr::call("sort", [Expr::call("fileset", [user_dir(Vec::new()), Expr::from("*.yaml")])]),
        key: None,
        value: doc(user_dir(vec![Part::L("/".into()), Part::E(r("f"))])),
        cond: None,
    }));
    // A named node's own patches after its pool's (`patches/nodes/<hostname>/`); a node
    // with none has no directory, so the list is empty.
    let node_dir = |rest: Vec<Part>| {
        let mut parts = vec![Part::L(format!("{NODE_PATCHES}/")), Part::E(hostname_for_patches.clone())];
        parts.extend(rest);
        dir(parts)
    };
    let own = Expr::For(Box::new(crate::emit::hcl::ForExpr {
        key_var: None,
        value_var: "f".into(),
        collection: Expr::call("sort", [Expr::call("fileset", [node_dir(Vec::new()), Expr::from("*.yaml")])]),
        key: None,
        value: doc(node_dir(vec![Part::L("/".into()), Part::E(r("f"))])),
        cond: None,
    }));
    let parts = vec![Expr::List(std::mem::take(&mut list)), user, own];
    Expr::call("concat", parts)
}

#[allow(
    clippy::too_many_lines,
    reason = "one OpenTofu module written top to bottom as tofu reads it: its variables, resources and outputs in file order"
)]
pub(super) fn module_for(cp: usize) -> Module {
    let mut vars = file();
    Var::new("cluster_name", ty("string"), "The cluster's name.").write(&mut vars);
    Var::new(
        "cluster_endpoint",
        ty("string"),
        "`https://<endpoint>:6443`: the private load balancer or shared address.",
    )
    .write(&mut vars);
    Var::new(
        "kubernetes_api",
        ty("string"),
        "The operator's path to the Kubernetes API (`https://<gateway>:<port>` on Scaleway, the endpoint on Proxmox): the kubeconfig output's server.",
    )
    .write(&mut vars);
    Var::new(
        "talos_version",
        ty("string"),
        "The Talos version contract the provider generates the configs for: the cluster's version, or the newest contract the provider's machinery speaks (versions/talos.kdl).",
    )
        .write(&mut vars);
    Var::new(
        "secrets_talos_version",
        ty("string"),
        "R14: the machine secrets' `talos_version`: the cluster's Talos version, which only moves forward. The provider replaces the secrets (the cluster's identity) when it sorts below the stored value (terraform-provider-talos v0.11.0 talos_machine_secrets_resource.go l.525-543).",
    )
    .write(&mut vars);
    Var::new("kubernetes_version", ty("string"), "The Kubernetes version.").write(&mut vars);
    Var::new(
        APPLY_MODE_VAR,
        ty("string"),
        "R19/F10: how a changed config is applied; the safe mode depends on the operation.",
    )
    .validation(
        Expr::call("contains", [Expr::list(ApplyMode::ALL.iter().map(|(s, _)| *s)), var(APPLY_MODE_VAR)]),
        "apply_mode is one of auto, no_reboot, reboot, staged, staged_if_needing_reboot (F10).",
    )
    .write(&mut vars);
    Var::new(
        "talos_dir",
        ty("string"),
        "The directory of the cluster's Talos documents (out/talos/<env>/<cluster>): one source, the same bytes.",
    )
    .write(&mut vars);
    Var::new("control_plane", of("list", node_ty()), "Control-plane nodes in order; the first bootstraps etcd.")
        .validation(
            Expr::call("contains", [Expr::list([cp as i64]), Expr::call("length", [r("var.control_plane")])]),
            "This module is generated for a fixed number of control-plane nodes; regenerate it with fleetc.",
        )
        .write(&mut vars);
    Var::new("workers", of("map", node_ty()), "Worker nodes by hostname.").default(empty()).write(&mut vars);
    Var::new(
        "worker_pools",
        of("map", ty("string")),
        "The pool of each worker, by hostname: its Talos document is workers/<pool>.yaml.",
    )
    .default(empty())
    .write(&mut vars);

    let mut main = file();
    main.comment(
        "R14: the cluster's identity. It is imported from the sealed bundle (the root's import\n\
         block), never generated anew, and OpenTofu refuses to destroy it: a second bundle is\n\
         another cluster that the running nodes will not talk to. Its `talos_version` moves only\n\
         forward: the provider replaces the resource when the value sorts lower.",
    )
    .block("resource", &["talos_machine_secrets", "this"], |b| {
        b.attr("talos_version", r("var.secrets_talos_version")).block("lifecycle", &[], |l| {
            l.attr("prevent_destroy", true);
        });
    })
    .blank();
    let common = |b: &mut Body, machine_type: &str, patches: Expr| {
        b.attr("cluster_name", r("var.cluster_name"))
            .attr("cluster_endpoint", r("var.cluster_endpoint"))
            .attr("machine_type", machine_type)
            .attr("machine_secrets", r("talos_machine_secrets.this.machine_secrets"))
            .attr("talos_version", r("var.talos_version"))
            .attr("kubernetes_version", r("var.kubernetes_version"))
            .attr("config_patches", patches);
    };
    let apply = |b: &mut Body, config: Expr, node: Expr, endpoint: Expr| {
        b.attr("client_configuration", r("talos_machine_secrets.this.client_configuration"))
            .attr("machine_configuration_input", config)
            .attr("node", node)
            .attr("endpoint", endpoint)
            .attr("apply_mode", var(APPLY_MODE_VAR))
            .comment("A removed node leaves etcd gracefully and is wiped, not left half-joined.")
            .attr("on_destroy", Expr::object([("graceful", true), ("reset", true), ("reboot", false)]));
    };
    main.comment(
        "F3: instances of one count/for_each block cannot be ordered, so each control-plane node has\n\
         its own blocks and waits for the previous one. The provider returns once the node accepted\n\
         the config, not once it is healthy again (v0.11.0 talos_machine_configuration_apply_resource.go,\n\
         Create/Update), so the chain orders API calls only. The root's apply mode therefore never\n\
         reboots a running node (R19): a change that needs a reboot goes through `fleetc apply`,\n\
         which stages it and reboots one node at a time with `talosctl health` between them.",
    );
    for i in 0..cp {
        let n = control_plane_apply(i + 1);
        let node = |a: &str| nth("var.control_plane", i, &[a]);
        main.block("data", &["talos_machine_configuration", &n], |b| {
            common(b, "controlplane", patches("controlplane", node("hostname")));
        })
        .blank()
        .block("resource", &[CONFIG_APPLY, &n], |b| {
            apply(
                b,
                r(&format!("data.talos_machine_configuration.{n}.machine_configuration")),
                node("address"),
                node("talos_endpoint"),
            );
            if i > 0 {
                b.blank().attr("depends_on", Expr::list([r(&format!("{CONFIG_APPLY}.{}", control_plane_apply(i)))]));
            }
        })
        .blank();
    }
    main.block("data", &["talos_machine_configuration", WORKER_APPLY], |b| {
        b.attr("for_each", r("var.workers"));
        common(b, "worker", patches("worker", r("each.value.hostname")));
    })
    .blank()
    .block("resource", &[CONFIG_APPLY, WORKER_APPLY], |b| {
        b.attr("for_each", r("var.workers"));
        apply(
            b,
            idx_expr(
                &format!("data.talos_machine_configuration.{WORKER_APPLY}"),
                r("each.key"),
                &["machine_configuration"],
            ),
            r("each.value.address"),
            r("each.value.talos_endpoint"),
        );
        b.blank().attr("depends_on", Expr::list([r(&format!("{CONFIG_APPLY}.{}", control_plane_apply(cp)))]));
    })
    .blank()
    .comment("etcd is bootstrapped once, on the first control-plane node.")
    .block("resource", &[BOOTSTRAP_RESOURCE.0, BOOTSTRAP_RESOURCE.1], |b| {
        b.attr("client_configuration", r("talos_machine_secrets.this.client_configuration"))
            .attr("node", nth("var.control_plane", 0, &["address"]))
            .attr("endpoint", nth("var.control_plane", 0, &["talos_endpoint"]))
            .blank()
            .attr("depends_on", Expr::list([r(&format!("{CONFIG_APPLY}.{}", control_plane_apply(1)))]));
    })
    .blank()
    .block("resource", &["talos_cluster_kubeconfig", "this"], |b| {
        b.attr("client_configuration", r("talos_machine_secrets.this.client_configuration"))
            .attr("node", nth("var.control_plane", 0, &["address"]))
            .attr("endpoint", nth("var.control_plane", 0, &["talos_endpoint"]))
            .blank()
            .attr("depends_on", Expr::list([r(&format!("{}.{}", BOOTSTRAP_RESOURCE.0, BOOTSTRAP_RESOURCE.1))]));
    })
    .blank()
    .block("data", &["talos_client_configuration", "this"], |b| {
        b.attr("cluster_name", r("var.cluster_name"))
            .attr("client_configuration", r("talos_machine_secrets.this.client_configuration"))
            .attr("endpoints", Expr::for_list("n", r("var.control_plane"), r("n.talos_endpoint")))
            .attr("nodes", Expr::for_list("n", r("var.control_plane"), r("n.address")));
    });

    let mut outputs = file();
    // C6: the server is the operator's path, not the private endpoint the nodes use; the
    // credentials are the provider's (base64 PEM, as kubeconfig's `*-data` fields take them:
    // v0.11.0 talos_cluster_kubeconfig_resource.go, bytesToBase64).
    let client = |a: &str| r(&format!("talos_cluster_kubeconfig.this.kubernetes_client_configuration.{a}"));
    let user = tpl(vec![Part::L("admin@".into()), Part::E(r("var.cluster_name"))]);
    output(
        &mut outputs,
        "kubeconfig",
        "The cluster's admin kubeconfig, its server the operator's path to the API (`var.kubernetes_api`).",
        Expr::call(
            "yamlencode",
            [Expr::object([
                ("apiVersion", Expr::from("v1")),
                ("kind", Expr::from("Config")),
                (
                    "clusters",
                    Expr::list([Expr::object([
                        ("name", r("var.cluster_name")),
                        (
                            "cluster",
                            Expr::object([
                                ("server", r("var.kubernetes_api")),
                                ("certificate-authority-data", client("ca_certificate")),
                            ]),
                        ),
                    ])]),
                ),
                (
                    "users",
                    Expr::list([Expr::object([
                        ("name", user.clone()),
                        (
                            "user",
                            Expr::object([
                                ("client-certificate-data", client("client_certificate")),
                                ("client-key-data", client("client_key")),
                            ]),
                        ),
                    ])]),
                ),
                (
                    "contexts",
                    Expr::list([Expr::object([
                        ("name", user.clone()),
                        ("context", Expr::object([("cluster", r("var.cluster_name")), ("user", user.clone())])),
                    ])]),
                ),
                ("current-context", user),
            ])],
        ),
        true,
    );
    output(
        &mut outputs,
        "talosconfig",
        "The talosctl client configuration.",
        r("data.talos_client_configuration.this.talos_config"),
        true,
    );
    Module::new(vec![("main.tf", main), ("variables.tf", vars), ("outputs.tf", outputs)])
}

/// The cluster root of an environment.
pub(super) fn cluster_root(env: &Env<'_>) -> RootFiles {
    let mut main = file();
    let mut config: Vec<(String, Expr)> = s3_settings(env.state, r("var.cloud_state.key"));
    for (k, v) in &mut config {
        match k.as_str() {
            "bucket" => *v = r("var.cloud_state.bucket"),
            "region" => *v = r("var.cloud_state.region"),
            "endpoints" => *v = Expr::object([("s3", r("var.cloud_state.endpoint"))]),
            "skip_s3_checksum" => *v = r("var.cloud_state.skip_s3_checksum"),
            _ => {}
        }
    }
    config.retain(|(k, _)| k != "use_lockfile");
    main.comment("R2: the cluster root reads the cloud root's (encrypted) state; it never re-creates it.")
        .block("data", &["terraform_remote_state", "cloud"], |b| {
            b.attr("backend", "s3").attr("config", Expr::Object(config));
        })
        .blank()
        .block("locals", &[], |l| {
            l.attr("cloud", r(&format!("data.terraform_remote_state.cloud.outputs.{INVENTORY_OUTPUT}")));
        })
        .blank();
    for c in &env.clusters {
        let key = c.name.value.as_str();
        let m = ident(key);
        let cv = |attr: &str| idx("var.clusters", key, &[attr]);
        main.comment("R14: the secrets bundle is imported from the sealed input, decrypted at apply time.")
            .block("import", &[], |i| {
                i.attr("to", r(&format!("module.{m}.talos_machine_secrets.this"))).attr(
                    "id",
                    Expr::call("lookup", [var(TALOS_SECRETS_VAR), Expr::from(key), Expr::from(missing_bundle_id(key))]),
                );
            })
            .blank()
            .block("module", &[&m], |b| {
                b.attr("source", format!("../../modules/{}", module_name(c.control_plane.machines.len())))
                    .blank()
                    .attr("cluster_name", key)
                    .attr("cluster_endpoint", cv("endpoint"))
                    .attr("kubernetes_api", cv("kubernetes_api"))
                    .attr("talos_version", cv("talos_version"))
                    .attr("secrets_talos_version", cv("secrets_talos_version"))
                    .attr("kubernetes_version", cv("kubernetes_version"))
                    .attr(APPLY_MODE_VAR, Expr::call("coalesce", [var(APPLY_MODE_VAR), cv(APPLY_MODE_VAR)]))
                    .attr(
                        "talos_dir",
                        tpl(vec![Part::E(r("path.root")), Part::L("/".into()), Part::E(cv("talos_dir"))]),
                    )
                    .attr("control_plane", idx("local.cloud", key, &["control_plane"]))
                    .attr("workers", idx("local.cloud", key, &["workers"]))
                    .attr("worker_pools", cv("worker_pools"));
            })
            .blank();
    }
    super::moved::cluster(&mut main, env, &[&format!("{CONFIG_APPLY}.{WORKER_APPLY}")]);

    let mut vars = file();
    Var::new(
        "cloud_state",
        object_ty(&[
            ("bucket", ty("string")),
            ("key", ty("string")),
            ("region", ty("string")),
            ("endpoint", ty("string")),
            ("skip_s3_checksum", ty("bool")),
        ]),
        "Where the cloud root's state lives (read with the same encryption key).",
    )
    .write(&mut vars);
    Var::new(
        "clusters",
        of(
            "map",
            object_ty(&[
                ("endpoint", ty("string")),
                ("kubernetes_api", ty("string")),
                ("talos_version", ty("string")),
                ("secrets_talos_version", ty("string")),
                ("kubernetes_version", ty("string")),
                (APPLY_MODE_VAR, ty("string")),
                ("talos_dir", ty("string")),
                ("worker_pools", of("map", ty("string"))),
            ]),
        ),
        "Per cluster: versions, endpoint, the apply mode of a plain apply (never one that reboots a running node, R19), the Talos documents' directory and each worker's pool.",
    )
    .write(&mut vars);
    Var::new(
        APPLY_MODE_VAR,
        ty("string"),
        "R19: overrides every cluster's apply mode for this run (`-var apply_mode=staged`); null keeps fleet.kdl's.",
    )
    .default(Expr::Null)
    .write(&mut vars);
    Var::new(
        TALOS_SECRETS_VAR,
        of("map", ty("string")),
        "R14: per cluster, the path of the decrypted machine secrets bundle to import (apply-time input). Needed only until the import: a cluster whose secrets are in state plans without it.",
    )
    .default(empty())
    .write(&mut vars);
    super::passphrase_var(&mut vars);

    let mut values = file();
    let state = env.state;
    values
        .attr(
            "cloud_state",
            Expr::object([
                ("bucket", Expr::from(state.bucket.value.as_str())),
                ("key", Expr::from(env.state_key(CLOUD))),
                ("region", Expr::from(state.region.value.as_str())),
                ("endpoint", Expr::from(state.endpoint.value.as_str())),
                ("skip_s3_checksum", Expr::from(state.skip_checksum)),
            ]),
        )
        .blank()
        .attr(
            "clusters",
            Expr::object(env.clusters.iter().map(|c| {
                (
                    c.name.value.clone(),
                    Expr::object([
                        ("endpoint", Expr::from(c.endpoint_url())),
                        // C6: one function with the cloud root's `kubernetes_api` output.
                        (
                            "kubernetes_api",
                            Expr::from(
                                env.env
                                    .kubernetes_api(c)
                                    .map(|a| format!("https://{a}"))
                                    .unwrap_or_else(|| c.endpoint_url()),
                            ),
                        ),
                        // The contract the provider's machinery speaks (versions/talos.kdl).
                        (
                            "talos_version",
                            Expr::from(crate::upstream::talos::consumer_contract(
                                super::providers::talos_consumer(),
                                c.talos.value,
                            )),
                        ),
                        // R14: moves only forward (model::Cluster::secrets_talos_version).
                        ("secrets_talos_version", Expr::from(c.secrets_talos_version())),
                        ("kubernetes_version", Expr::from(c.kubernetes.value.to_string())),
                        (APPLY_MODE_VAR, Expr::from(c.apply_mode.value.root_mode(c.talos.value).as_str())),
                        (
                            "talos_dir",
                            Expr::from(format!("../../../{}", paths::talos_dir(&env.env.name.value, &c.name.value))),
                        ),
                        (
                            "worker_pools",
                            Expr::Object(
                                c.workers
                                    .iter()
                                    .flat_map(|p| {
                                        p.machines
                                            .iter()
                                            .map(move |m| (m.hostname.clone(), Expr::from(p.name.value.clone())))
                                    })
                                    .collect(),
                            ),
                        ),
                    ]),
                )
            })),
        );

    let mut outputs = file();
    for c in &env.clusters {
        let m = ident(&c.name.value);
        output(
            &mut outputs,
            &format!("{m}_kubeconfig"),
            "Admin kubeconfig.",
            r(&format!("module.{m}.kubeconfig")),
            true,
        );
        output(
            &mut outputs,
            &format!("{m}_talosconfig"),
            "talosctl configuration.",
            r(&format!("module.{m}.talosconfig")),
            true,
        );
    }
    RootFiles { main, variables: vars, outputs, values }
}
