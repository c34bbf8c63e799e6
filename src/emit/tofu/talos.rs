//! The cluster layer: the `talos-cluster-cp<N>` module (machine secrets, machine configs from
//! the Talos documents in out/talos, ordered applies, bootstrap, kubeconfig) and the cluster
//! root that reads the cloud root's state and calls it once per cluster (R2, R11, R14, R19).

use super::hclx::{Part, Var, empty, file, ident, idx, nth, object_ty, of, output, r, tpl, ty};
use super::scaleway::idx_expr;
use super::settings::s3_settings;
use super::{Env, Module, RootFiles};
use crate::emit::hcl::{Body, Expr};
use crate::model::{ApplyMode, Provider};

pub(super) fn module_name(cp: usize) -> String {
    format!("talos-cluster-cp{cp}")
}

/// The Secret the Scaleway cloud controller manager and CSI driver read (their vendored
/// manifests reference it by this name, in `kube-system`).
const SCALEWAY_SECRET: &str = "scaleway-secret";

fn node_ty() -> Expr {
    object_ty(&[("hostname", ty("string")), ("address", ty("string")), ("talos_endpoint", ty("string"))])
}

/// The Talos documents of a node, in the order they patch the generated config: the
/// cluster's common document, the role's, the node's own, then extra patches, then the
/// user's patches of the node's pool.
fn patches(role: &str, hostname: Expr, extra: Option<Expr>) -> Expr {
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
            Part::L("workers/".into()),
            Part::E(idx_expr("var.worker_pools", hostname.clone(), &[])),
            Part::L(".yaml".into()),
        ])
    } else {
        dir(vec![Part::L(format!("{role}.yaml"))])
    };
    let hostname_for_patches = hostname.clone();
    let mut list = vec![
        doc(dir(vec![Part::L("common.yaml".into())])),
        doc(role_doc),
        doc(dir(vec![Part::L("nodes/".into()), Part::E(hostname), Part::L(".yaml".into())])),
    ];
    // The user's patches last, in file-name order (docs/talos.md, "Patches"); a pool with
    // none has no directory, and `fileset` of a missing directory is empty (OpenTofu v1.11.5
    // `internal/lang/funcs/filesystem.go`, `doublestar.FilepathGlob`).
    let user_dir = |rest: Vec<Part>| {
        let mut parts = if role == "worker" {
            vec![
                Part::L("patches/workers/".into()),
                Part::E(idx_expr("var.worker_pools", hostname_for_patches.clone(), &[])),
            ]
        } else {
            vec![Part::L("patches/controlplane".into())]
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
    let mut parts = vec![Expr::List(std::mem::take(&mut list))];
    parts.extend(extra);
    parts.push(user);
    Expr::call("concat", parts)
}

pub(super) fn module_for(cp: usize) -> Module {
    let mut vars = file();
    Var::new("cluster_name", ty("string"), "The cluster's name.").write(&mut vars);
    Var::new(
        "cluster_endpoint",
        ty("string"),
        "`https://<endpoint>:6443`: the private load balancer or shared address.",
    )
    .write(&mut vars);
    Var::new("talos_version", ty("string"), "The Talos version the secrets and configs are generated for (R14).")
        .write(&mut vars);
    Var::new("kubernetes_version", ty("string"), "The Kubernetes version.").write(&mut vars);
    Var::new(
        "apply_mode",
        ty("string"),
        "R19/F10: how a changed config is applied; the safe mode depends on the operation.",
    )
    .validation(
        Expr::call("contains", [Expr::list(ApplyMode::ALL.iter().map(|(s, _)| *s)), r("var.apply_mode")]),
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
    Var::new(
        "controlplane_patches",
        of("list", ty("string")),
        "Extra control-plane patches built at apply time from sensitive inputs (F11: credentials never come from files).",
    )
    .default(Expr::list(Vec::<Expr>::new()))
    .sensitive()
    .write(&mut vars);

    let mut main = file();
    main.comment(
        "R14: the cluster's identity. It is imported from the sealed bundle (the root's import\n\
         block), never generated anew, and OpenTofu refuses to destroy it: a second bundle is\n\
         another cluster that the running nodes will not talk to.",
    )
    .block("resource", &["talos_machine_secrets", "this"], |b| {
        b.attr("talos_version", r("var.talos_version")).block("lifecycle", &[], |l| {
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
            .attr("apply_mode", r("var.apply_mode"))
            .comment("A removed node leaves etcd gracefully and is wiped, not left half-joined.")
            .attr("on_destroy", Expr::object([("graceful", true), ("reset", true), ("reboot", false)]));
    };
    main.comment(
        "F3: instances of one count/for_each block cannot be ordered, so each control-plane node has\n\
         its own blocks and waits for the previous one. The provider returns once the node accepted\n\
         the config, not once it is healthy again (v0.11.0 talos_machine_configuration_apply_resource.go,\n\
         Create/Update): with a mode that reboots, a plain `tofu apply` can have two control-plane\n\
         nodes down at once. `fleetc apply` applies one node per targeted run with `talosctl health`\n\
         between them (R19, R29).",
    );
    for i in 0..cp {
        let n = format!("cp_{}", i + 1);
        let node = |a: &str| nth("var.control_plane", i, &[a]);
        main.block("data", &["talos_machine_configuration", &n], |b| {
            common(b, "controlplane", patches("controlplane", node("hostname"), Some(r("var.controlplane_patches"))));
        })
        .blank()
        .block("resource", &["talos_machine_configuration_apply", &n], |b| {
            apply(
                b,
                r(&format!("data.talos_machine_configuration.{n}.machine_configuration")),
                node("address"),
                node("talos_endpoint"),
            );
            if i > 0 {
                b.blank().attr("depends_on", Expr::list([r(&format!("talos_machine_configuration_apply.cp_{i}"))]));
            }
        })
        .blank();
    }
    main.block("data", &["talos_machine_configuration", "worker"], |b| {
        b.attr("for_each", r("var.workers"));
        common(b, "worker", patches("worker", r("each.value.hostname"), None));
    })
    .blank()
    .block("resource", &["talos_machine_configuration_apply", "worker"], |b| {
        b.attr("for_each", r("var.workers"));
        apply(
            b,
            idx_expr("data.talos_machine_configuration.worker", r("each.key"), &["machine_configuration"]),
            r("each.value.address"),
            r("each.value.talos_endpoint"),
        );
        b.blank().attr("depends_on", Expr::list([r(&format!("talos_machine_configuration_apply.cp_{cp}"))]));
    })
    .blank()
    .comment("etcd is bootstrapped once, on the first control-plane node.")
    .block("resource", &["talos_machine_bootstrap", "this"], |b| {
        b.attr("client_configuration", r("talos_machine_secrets.this.client_configuration"))
            .attr("node", nth("var.control_plane", 0, &["address"]))
            .attr("endpoint", nth("var.control_plane", 0, &["talos_endpoint"]))
            .blank()
            .attr("depends_on", Expr::list([r("talos_machine_configuration_apply.cp_1")]));
    })
    .blank()
    .block("resource", &["talos_cluster_kubeconfig", "this"], |b| {
        b.attr("client_configuration", r("talos_machine_secrets.this.client_configuration"))
            .attr("node", nth("var.control_plane", 0, &["address"]))
            .attr("endpoint", nth("var.control_plane", 0, &["talos_endpoint"]))
            .blank()
            .attr("depends_on", Expr::list([r("talos_machine_bootstrap.this")]));
    })
    .blank()
    .block("data", &["talos_client_configuration", "this"], |b| {
        b.attr("cluster_name", r("var.cluster_name"))
            .attr("client_configuration", r("talos_machine_secrets.this.client_configuration"))
            .attr("endpoints", Expr::for_list("n", r("var.control_plane"), r("n.talos_endpoint")))
            .attr("nodes", Expr::for_list("n", r("var.control_plane"), r("n.address")));
    });

    let mut outputs = file();
    output(
        &mut outputs,
        "kubeconfig",
        "The cluster's admin kubeconfig.",
        r("talos_cluster_kubeconfig.this.kubeconfig_raw"),
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

/// Whether the cluster runs a Scaleway add-on that reads the `scaleway-secret` credential.
fn needs_scaleway_secret(env: &Env<'_>, cluster: &crate::model::Cluster) -> bool {
    matches!(env.env.provider, Provider::Scaleway(_)) && cluster.addons.iter().any(|a| a.value.starts_with("scaleway-"))
}

/// The cluster root of an environment.
pub(super) fn cluster_root(env: &Env<'_>) -> RootFiles {
    let mut main = file();
    let mut config: Vec<(String, Expr)> = s3_settings(&env.env.state, r("var.cloud_state.key"));
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
            l.attr("cloud", r("data.terraform_remote_state.cloud.outputs.clusters"));
        })
        .blank();
    let scaleway_secret = env.clusters.iter().any(|c| needs_scaleway_secret(env, c));
    for c in &env.clusters {
        let key = c.name.value.as_str();
        let m = ident(key);
        let cv = |attr: &str| idx("var.clusters", key, &[attr]);
        main.comment("R14: the secrets bundle is imported from the sealed input, decrypted at apply time.")
            .block("import", &[], |i| {
                i.attr("to", r(&format!("module.{m}.talos_machine_secrets.this")))
                    .attr("id", idx("var.talos_secrets_files", key, &[]));
            })
            .blank()
            .block("module", &[&m], |b| {
                b.attr("source", format!("../../modules/{}", module_name(c.control_plane.machines.len())))
                    .blank()
                    .attr("cluster_name", key)
                    .attr("cluster_endpoint", cv("endpoint"))
                    .attr("talos_version", cv("talos_version"))
                    .attr("kubernetes_version", cv("kubernetes_version"))
                    .attr("apply_mode", Expr::call("coalesce", [r("var.apply_mode"), cv("apply_mode")]))
                    .attr(
                        "talos_dir",
                        tpl(vec![Part::E(r("path.root")), Part::L("/".into()), Part::E(cv("talos_dir"))]),
                    )
                    .attr("control_plane", idx("local.cloud", key, &["control_plane"]))
                    .attr("workers", idx("local.cloud", key, &["workers"]))
                    .attr("worker_pools", cv("worker_pools"));
                if needs_scaleway_secret(env, c) {
                    b.attr("controlplane_patches", Expr::list([r("local.scaleway_secret_patch")]));
                }
            })
            .blank();
    }
    if scaleway_secret {
        let Provider::Scaleway(_) = &env.env.provider else { unreachable!() };
        main.comment(
            "F11: the cloud controller manager's and CSI driver's API key enters as a sensitive\n\
             variable at apply time, never as a file; it reaches the cluster as a Secret embedded in\n\
             the control-plane configs, kept in the encrypted state only.",
        )
        .block("locals", &[], |l| {
            let secret = Expr::object([
                ("apiVersion", Expr::from("v1")),
                ("kind", Expr::from("Secret")),
                ("metadata", Expr::object([("name", SCALEWAY_SECRET), ("namespace", "kube-system")])),
                (
                    "stringData",
                    Expr::object([
                        ("SCW_ACCESS_KEY", r("var.scaleway_credentials.access_key")),
                        ("SCW_SECRET_KEY", r("var.scaleway_credentials.secret_key")),
                        ("SCW_DEFAULT_PROJECT_ID", r("var.scaleway_credentials.project_id")),
                        ("SCW_DEFAULT_REGION", r("var.scaleway_credentials.region")),
                        ("SCW_DEFAULT_ZONE", r("var.scaleway_credentials.zone")),
                    ]),
                ),
            ]);
            let patch = Expr::object([(
                "cluster",
                Expr::object([(
                    "inlineManifests",
                    Expr::list([Expr::object([
                        ("name", Expr::from(SCALEWAY_SECRET)),
                        ("contents", Expr::call("yamlencode", [secret])),
                    ])]),
                )]),
            )]);
            l.attr("scaleway_secret_patch", Expr::call("yamlencode", [patch]));
        })
        .blank();
    }
    super::moved::cluster(&mut main, env, &["talos_machine_configuration_apply.worker"]);

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
                ("talos_version", ty("string")),
                ("kubernetes_version", ty("string")),
                ("apply_mode", ty("string")),
                ("talos_dir", ty("string")),
                ("worker_pools", of("map", ty("string"))),
            ]),
        ),
        "Per cluster: versions, endpoint, default apply mode, the Talos documents' directory and each worker's pool.",
    )
    .write(&mut vars);
    Var::new(
        "apply_mode",
        ty("string"),
        "R19: overrides every cluster's apply mode for this run (`-var apply_mode=staged`); null keeps fleet.kdl's.",
    )
    .default(Expr::Null)
    .write(&mut vars);
    Var::new(
        "talos_secrets_files",
        of("map", ty("string")),
        "R14: per cluster, the path of the decrypted machine secrets bundle to import (apply-time input).",
    )
    .write(&mut vars);
    if scaleway_secret {
        Var::new(
            "scaleway_credentials",
            object_ty(&[
                ("access_key", ty("string")),
                ("secret_key", ty("string")),
                ("project_id", ty("string")),
                ("region", ty("string")),
                ("zone", ty("string")),
            ]),
            "F11: the API key of the cloud controller manager and CSI driver (a sealed input, given at apply time).",
        )
        .sensitive()
        .write(&mut vars);
    }
    super::passphrase_var(&mut vars);

    let mut values = file();
    let state = &env.env.state;
    values
        .attr(
            "cloud_state",
            Expr::object([
                ("bucket", Expr::from(state.bucket.value.as_str())),
                ("key", Expr::from(env.state_key("cloud"))),
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
                        ("talos_version", Expr::from(c.talos.value.v())),
                        ("kubernetes_version", Expr::from(c.kubernetes.value.to_string())),
                        ("apply_mode", Expr::from(c.apply_mode.value.as_str())),
                        ("talos_dir", Expr::from(format!("../../../talos/{}/{}", env.env.name.value, c.name.value))),
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
