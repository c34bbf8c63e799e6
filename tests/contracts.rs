//! Contracts between artifact families (ARCHITECTURE.md, "Contracts"): each value two families
//! share is one function of the model, and each test here reads both families' output for
//! the reference fleet, so that it breaks when either side changes alone.

use crate::common;

use fleetc::artifacts::ArtifactSet;
use fleetc::compile::{FsLoader, compile};
use serde_json::Value;

fn reference() -> (fleetc::model::Fleet, ArtifactSet) {
    let root = common::root();
    let text = std::fs::read_to_string(root.join("fleet.kdl")).unwrap();
    let c = compile("fleet.kdl", &text, &FsLoader::new(&root));
    assert!(
        !c.diags.has_errors(),
        "{}",
        fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN)
    );
    (c.fleet.unwrap(), c.artifacts.unwrap())
}

fn text<'a>(set: &'a ArtifactSet, path: &str) -> &'a str {
    std::str::from_utf8(set.get(path).unwrap_or_else(|| panic!("no {path}"))).unwrap()
}

/// `name = "<value>"` in a tfvars file.
fn tfvar<'a>(tfvars: &'a str, name: &str) -> &'a str {
    tfvars
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == name).then(|| v.trim().trim_matches('"'))
        })
        .unwrap_or_else(|| panic!("no {name} in {tfvars}"))
}

/// The Secret Manager secret the cloud root creates for a postgres password is the one the
/// ExternalSecret asks for (`Postgres::password_secret`, `Fleet::resource_prefix`; R10 → R23).
#[test]
fn external_secrets_ask_for_the_secret_the_cloud_root_creates() {
    let (fleet, set) = reference();
    let module = text(&set, "tofu/modules/scaleway-cloud/main.tf");
    // The cloud module names each postgres secret from its tfvars entry, written by the model.
    let secret = module
        .split("resource \"scaleway_secret\" \"database_password\"")
        .nth(1)
        .expect("the postgres secret in the cloud module");
    assert!(secret.contains("name       = each.value.password_secret"), "{secret}");
    let mut checked = 0;
    for env in &fleet.environments {
        let Some(cluster) = env.clusters.first() else { continue };
        let platform = format!("argocd/{}/{}/platform/platform.yaml", env.name.value, cluster.name.value);
        let Some(bytes) = set.get(&platform) else { continue };
        let tfvars = text(&set, &format!("tofu/{0}/cloud/{0}.auto.tfvars", env.name.value));
        let prefix = tfvar(tfvars, "name");
        assert_eq!(prefix, fleet.resource_prefix(env), "the cloud root's name prefix");
        let docs: Vec<Value> = serde_saphyr::from_multiple(std::str::from_utf8(bytes).unwrap()).unwrap();
        for pg in &env.postgres {
            let entry =
                tfvars.split(&format!("\n  {} = {{", pg.name.value)).nth(1).expect("the database's tfvars entry");
            let created = tfvar(entry, "password_secret");
            let asked = docs
                .iter()
                .filter(|d| d["kind"] == "ExternalSecret")
                .flat_map(|d| d["spec"]["data"].as_array().cloned().unwrap_or_default())
                .map(|d| d["remoteRef"]["key"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>();
            assert_eq!(asked, [format!("name:{created}")], "{platform}");
            assert_eq!(created, pg.password_secret(&fleet.resource_prefix(env)));
            checked += 1;
        }
    }
    assert!(checked >= 2, "staging and production both read a password");
}

/// The top-level `resource "<ty>" "<name>" { … }` blocks of an HCL file as fleetc writes it.
fn resource_blocks<'a>(hcl: &'a str, ty: &str) -> Vec<&'a str> {
    let open = format!("resource \"{ty}\" ");
    let mut out = Vec::new();
    let mut rest = hcl;
    while let Some(i) = rest.find(&open) {
        let block = &rest[i..];
        let end = block.find("\n}\n").map_or(block.len(), |e| e + 3);
        out.push(&block[..end]);
        rest = &block[end..];
    }
    out
}

/// Upgrades never replace a machine by accident (F1): what the roots ignore on existing
/// machines and the settings that keep a change in place are one table,
/// `emit::tofu::arguments::ARGUMENTS`, and every machine resource of every emitted module
/// carries exactly that table's `ignore_changes` and settings; `fleetc diff`'s
/// `machine-arguments` rule reads the same rows (below).
#[test]
fn the_roots_ignore_exactly_what_the_arguments_table_says_on_every_machine() {
    use fleetc::emit::tofu::arguments::{ARGUMENTS, ignored, settings};
    let (_, set) = reference();
    let types: std::collections::BTreeSet<&str> = ARGUMENTS.iter().map(|a| a.resource).collect();
    let mut seen = 0;
    for (path, bytes) in set.iter() {
        if !(path.starts_with("tofu/modules/") && path.ends_with("/main.tf")) {
            continue;
        }
        let hcl = std::str::from_utf8(bytes).unwrap();
        for ty in &types {
            for block in resource_blocks(hcl, ty) {
                seen += 1;
                let ignore = ignored(ty);
                let line = block.lines().find(|l| l.trim_start().starts_with("ignore_changes"));
                if ignore.is_empty() {
                    assert!(line.is_none(), "{path}: {ty} ignores what the table does not:\n{block}");
                } else {
                    let line = line.unwrap_or_else(|| panic!("{path}: {ty} has no ignore_changes:\n{block}"));
                    let list = line.split_once('=').unwrap().1.trim();
                    assert_eq!(list, format!("[{}]", ignore.join(", ")), "{path}: {block}");
                }
                for (name, value) in settings(ty) {
                    let want = format!("{name} = {value}");
                    assert!(
                        block.lines().any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == want),
                        "{path}: {ty} lacks `{want}`:\n{block}"
                    );
                }
            }
        }
    }
    // The reference fleet builds Scaleway servers and volumes and Proxmox VMs.
    assert!(seen >= 4, "only {seen} machine blocks");
}

/// A Talos version bump of the reference fleet replaces nothing, and `fleetc diff` says so for
/// every environment the roots build, from the same rows the emitter ignored (F1).
#[test]
fn a_talos_bump_of_the_reference_fleet_replaces_no_machine_and_the_review_says_so() {
    use fleetc::emit::tofu::arguments::ARGUMENTS;
    use fleetc::review::impact::Severity;
    let root = common::root();
    let text = std::fs::read_to_string(root.join("fleet.kdl")).unwrap();
    assert!(text.contains("    talos \"v1.13.9\"\n"));
    let base_text = text.replacen("    talos \"v1.13.9\"\n", "    talos \"v1.13.8\"\n", 1);
    let base = compile("fleet.kdl", &base_text, &FsLoader::new(&root));
    assert!(!base.diags.has_errors());
    let (new_fleet, new_set) = reference();
    let r = fleetc::review::review(
        "base".into(),
        base.artifacts.as_ref().unwrap(),
        base.fleet.as_ref(),
        &new_set,
        &new_fleet,
    );
    assert!(!r.impacts.iter().any(|i| i.severity == Severity::Danger), "{:#?}", r.impacts);
    for a in ARGUMENTS.iter().filter(|a| a.ignored && a.from.contains(&"talos")) {
        let hits: Vec<_> = r
            .impacts
            .iter()
            .filter(|i| i.rule == "machine-arguments" && i.effect.contains(&format!("the roots ignore `{}`", a.name())))
            .collect();
        assert!(!hits.is_empty(), "{}: {:#?}", a.name(), r.impacts);
        assert!(hits.iter().all(|i| i.effect.starts_with("no machine is replaced")), "{hits:#?}");
    }
}

/// C6: the cluster root's kubeconfig points at the operator's path to the API (the public
/// gateway and the cluster's PAT port on Scaleway, the one `kubernetes_api_open` opens), not at
/// the private load balancer only the nodes reach: the cluster root's value is the cloud
/// root's `kubernetes_api` (`model::Environment::kubernetes_api`), and the module's output uses it.
#[test]
fn the_kubeconfig_server_is_the_operators_path_the_cloud_root_opens() {
    let (fleet, set) = reference();
    // Bare metal has no OpenTofu root (docs/metal.md): its kubeconfig is Talos's own.
    let built = |(e, c): &(&fleetc::model::Environment, &fleetc::model::Cluster)| !c.is_managed() && e.state.is_some();
    for (env, cluster) in fleet.clusters().filter(built) {
        let e = &env.name.value;
        let tfvars = text(&set, &format!("tofu/{e}/cluster/{e}.auto.tfvars"));
        let api = env.kubernetes_api(cluster).unwrap();
        assert!(tfvars.contains(&format!("kubernetes_api        = \"https://{api}\"")), "{e}: {tfvars}");
        if let Some(gateway) = &env.gateway {
            assert!(api.starts_with(&format!("{}:", gateway.value)), "{api}");
            let cloud = text(&set, &format!("tofu/{e}/cloud/{e}.auto.tfvars"));
            let port = api.rsplit(':').next().unwrap();
            assert!(cloud.contains(&format!("kubernetes_api_port = {port}")), "{cloud}");
        }
    }
    let outputs = text(&set, "tofu/modules/talos-cluster-cp3/outputs.tf");
    assert!(outputs.contains("server                     = var.kubernetes_api"), "{outputs}");
    assert!(!outputs.contains("kubeconfig_raw"), "{outputs}");
}

/// capi-argocd R2: the VM template every ProxmoxMachineTemplate selects is one the lab cloud
/// root creates, with exactly the tags selected (`model::Schematic::vm_template`; CAPMOX v0.9.0
/// `FindVMTemplateByTags` with `matchPolicy: exact` wants one template with that tag set).
#[test]
fn every_proxmox_machine_template_selects_a_template_the_cloud_root_creates() {
    let (_, set) = reference();
    let tfvars = text(&set, "tofu/lab/cloud/lab.auto.tfvars");
    let mut selected = 0;
    for (path, bytes) in set.iter().filter(|(p, _)| p.starts_with("capi/") && p.ends_with(".yaml")) {
        let yaml = std::str::from_utf8(bytes).unwrap();
        for doc in yaml.split("\n---\n") {
            if !doc.contains("kind: ProxmoxMachineTemplate") || !doc.contains("matchTags:") {
                continue;
            }
            let tags: Vec<&str> = doc
                .split("matchTags:")
                .nth(1)
                .unwrap()
                .lines()
                .skip(1)
                .take_while(|l| l.trim_start().starts_with("- "))
                .map(|l| l.trim_start().trim_start_matches("- ").trim_matches('"'))
                .collect();
            assert!(doc.contains("matchPolicy: exact"), "{path}");
            let listed =
                format!("tags        = [{}]", tags.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", "));
            assert!(tfvars.contains(&listed), "{path}: {tags:?} is no template of the cloud root:\n{tfvars}");
            selected += 1;
        }
    }
    assert!(selected >= 2, "{selected}");
    // The template is made from an image the cloud module downloads to the template's node.
    let module = text(&set, "tofu/modules/proxmox-cloud/main.tf");
    assert!(module.contains("resource \"proxmox_virtual_environment_vm\" \"template\""), "{module}");
    assert!(module.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["template", "=", "true"]), "{module}");
}

/// A pool's user patches: the talos family writes them under one directory per pool
/// (`emit::talos::patches`, through `layout::paths::pool_patches`), in apply order; the
/// OpenTofu cluster module lists that directory, `fleetc talos render`
/// (`layout::paths::pool_patch_dir`) reads the same one, and CABPT's strategic patches end
/// with the same bytes (docs/talos.md, "Patches").
#[test]
fn every_consumer_reads_a_pools_patches_where_the_talos_family_writes_them() {
    let (fleet, set) = reference();
    let mut seen = 0;
    for (env, cluster) in fleet.clusters() {
        for pool in cluster.pools() {
            let cp = pool.role == fleetc::model::Role::ControlPlane;
            let dir = fleetc::layout::paths::pool_patch_dir(&env.name.value, &cluster.name.value, cp, &pool.name.value);
            let (e, c, p) = (&env.name.value, &cluster.name.value, &pool.name.value);
            let spelled = if cp {
                format!("talos/{e}/{c}/patches/controlplane/")
            } else {
                format!("talos/{e}/{c}/patches/workers/{p}/")
            };
            assert_eq!(dir, spelled, "the layout docs/talos.md describes");
            let files: Vec<&str> = set.paths().filter(|p| p.starts_with(&dir)).collect();
            assert_eq!(files.len(), pool.patches.len(), "{dir}: one file per patch of the pool");
            for (file, patch) in files.iter().zip(&pool.patches) {
                assert!(text(&set, file).ends_with(patch.file.emitted()), "{file} carries {}", patch.path.value);
                seen += 1;
            }
            if cluster.is_managed() {
                let texts: Vec<&str> = files.iter().map(|f| text(&set, f)).collect();
                let capi: String = set
                    .iter()
                    .filter(|(p, _)| {
                        p.starts_with(&format!(
                            "capi/{}/{}/",
                            cluster.managed_by.as_ref().unwrap().value,
                            cluster.name.value
                        ))
                    })
                    .map(|(_, b)| std::str::from_utf8(b).unwrap().to_owned())
                    .collect();
                for t in texts {
                    let first_content_line = t.lines().nth(2).unwrap();
                    assert!(capi.contains(first_content_line), "the Cluster API templates carry {first_content_line}");
                }
            }
        }
    }
    assert!(seen > 0, "the reference fleet uses patches");
    let module = text(&set, "tofu/modules/talos-cluster-cp3/main.tf");
    assert!(module.contains(r#"fileset("${var.talos_dir}/patches/controlplane", "*.yaml")"#), "{module}");
    assert!(
        module.contains(
            r#"fileset("${var.talos_dir}/patches/workers/${var.worker_pools[each.value.hostname]}", "*.yaml")"#
        )
    );
}

fn docs(set: &ArtifactSet, path: &str) -> Vec<Value> {
    serde_saphyr::from_multiple(text(set, path)).unwrap()
}

/// `(group, kind)` of an object, from its `apiVersion`.
fn group_kind(d: &Value) -> (String, String) {
    let api = d["apiVersion"].as_str().unwrap();
    let group = api.rsplit_once('/').map_or("", |(g, _)| g);
    (group.to_owned(), d["kind"].as_str().unwrap().to_owned())
}

fn kinds(list: &Value) -> std::collections::BTreeSet<(String, String)> {
    list.as_array()
        .map(|a| {
            a.iter()
                .map(|gk| (gk["group"].as_str().unwrap().to_owned(), gk["kind"].as_str().unwrap().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// R9: every managed cluster's Cluster API directory (`layout::paths::capi_workload_dir`) is
/// delivered by exactly one Application on its management cluster's Argo CD, into the
/// cluster's namespace, in a project that permits exactly the kinds the directory holds
/// (cluster-scoped and namespaced apart, `layout::names::WORKLOAD_CLUSTER_KINDS` /
/// `WORKLOAD_KINDS`).
#[test]
fn the_workload_clusters_capi_objects_are_delivered_by_argocd_in_a_project_that_permits_exactly_them() {
    let (fleet, set) = reference();
    let mut checked = 0;
    for env in &fleet.environments {
        for mgmt in env.clusters.iter().filter(|c| c.cluster_api.is_some()) {
            let apps = format!("argocd/{}/{}/apps", env.name.value, mgmt.name.value);
            let projects = docs(&set, &format!("{apps}/projects.yaml"));
            for w in env.clusters.iter().filter(|c| c.managed_by.as_ref().is_some_and(|m| m.value == mgmt.name.value)) {
                let dir = format!("capi/{}/{}/", mgmt.name.value, w.name.value);
                let delivering: Vec<Value> = set
                    .iter()
                    .filter(|(p, _)| p.starts_with(&format!("{apps}/")) && !p.ends_with("projects.yaml"))
                    .flat_map(|(p, _)| docs(&set, p))
                    .filter(|a| {
                        a["spec"]["source"]["path"].as_str() == Some(&format!("out/{}", dir.trim_end_matches('/')))
                    })
                    .collect();
                assert_eq!(delivering.len(), 1, "{dir} is delivered by one Application");
                let app = &delivering[0];
                assert_eq!(app["spec"]["destination"]["namespace"], w.name.value.as_str());
                assert!(
                    app["spec"]["syncPolicy"]["automated"].is_null(),
                    "synced by hand: the sealed identity first (F13)"
                );
                let project = projects
                    .iter()
                    .find(|p| p["metadata"]["name"] == app["spec"]["project"])
                    .expect("the Application's project");
                assert!(
                    project["spec"]["destinations"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|d| d["namespace"] == w.name.value.as_str()),
                    "the project allows the cluster's namespace"
                );
                let (mut cluster_scoped, mut namespaced) =
                    (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
                for (path, _) in set.iter().filter(|(p, _)| p.starts_with(&dir)) {
                    for d in docs(&set, path) {
                        let gk = group_kind(&d);
                        if d["metadata"]["namespace"].is_null() {
                            cluster_scoped.insert(gk);
                        } else {
                            assert_eq!(d["metadata"]["namespace"], w.name.value.as_str(), "{path}");
                            namespaced.insert(gk);
                        }
                    }
                }
                assert_eq!(kinds(&project["spec"]["clusterResourceWhitelist"]), cluster_scoped, "{dir}");
                assert_eq!(kinds(&project["spec"]["namespaceResourceWhitelist"]), namespaced, "{dir}");
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "the reference fleet has a managed cluster");
}

/// A fleet of a golden case, compiled with its own vendored files.
fn golden_case(name: &str) -> (fleetc::model::Fleet, ArtifactSet) {
    let dir = common::root().join("golden").join(name);
    let text = std::fs::read_to_string(dir.join("fleet.kdl")).unwrap();
    let c = compile("fleet.kdl", &text, &FsLoader::new(&dir));
    assert!(
        !c.diags.has_errors(),
        "{}",
        fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN)
    );
    (c.fleet.unwrap(), c.artifacts.unwrap())
}

/// The Image Factory images (`image: factory.talos.dev/…` lines) of a text.
fn images(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("image: "))
        .filter(|i| i.starts_with(fleetc::model::IMAGE_FACTORY))
        .collect()
}

/// The installer a pool's machines install and upgrade to is `Fleet::installer` for every
/// consumer: the Talos documents' `machine.install.image` (which the OpenTofu roots read by
/// path), the Cluster API templates' strategic patches, and `apply::target`'s node installer,
/// which `fleetc talos render` passes as `--install-image` and `fleetc upgrade` as `--image`.
/// A SecureBoot pool gets the `-installer-secureboot` variant everywhere, and keeps it.
#[test]
fn every_consumer_installs_and_upgrades_to_the_installer_of_the_pools_boot() {
    let mut secure = 0;
    for case in ["disk-proxmox-secureboot", "disk-capi-secureboot"] {
        let (fleet, set) = golden_case(case);
        for (env, cluster) in fleet.clusters() {
            let target = fleetc::apply::target::of(&fleet, &env.name.value).unwrap();
            let ct = target.clusters.iter().find(|c| c.name == cluster.name.value).unwrap();
            for pool in cluster.pools() {
                let want = fleet.installer(env, cluster, pool).unwrap();
                assert_eq!(want.contains("-installer-secureboot/"), pool.disk.secure_boot(), "{case}: {want}");
                secure += usize::from(pool.disk.secure_boot());
                let dir = format!("talos/{}/{}", env.name.value, cluster.name.value);
                let doc = match pool.role {
                    fleetc::model::Role::ControlPlane => format!("{dir}/controlplane.yaml"),
                    fleetc::model::Role::Worker => format!("{dir}/workers/{}.yaml", pool.name.value),
                };
                assert_eq!(images(text(&set, &doc)), [want.as_str()], "{case}: {doc}");
                for node in ct.nodes().filter(|n| n.pool == pool.name.value) {
                    assert_eq!(
                        node.installer, want,
                        "{case}: {} renders and upgrades with another image",
                        node.hostname
                    );
                }
                if let Some(mgmt) = &cluster.managed_by {
                    let file = match pool.role {
                        fleetc::model::Role::ControlPlane => "control-plane.yaml".to_owned(),
                        fleetc::model::Role::Worker => format!("pool-{}.yaml", pool.name.value),
                    };
                    let path = format!("capi/{}/{}/{file}", mgmt.value, cluster.name.value);
                    assert!(
                        images(text(&set, &path)).contains(&want.as_str()),
                        "{case}: {path} installs another image"
                    );
                }
            }
        }
    }
    assert!(secure >= 2, "both cases have a SecureBoot pool");
}

/// A bare-metal cluster's inventory: the metal family writes it where `fleetc apply` reads it
/// (`layout::paths::metal_inventory`), in the shape apply reads (`layout::inventory`), with
/// every machine of the model, its address and MAC (docs/metal.md).
#[test]
fn apply_reads_the_metal_inventory_where_the_metal_family_writes_it() {
    let (fleet, set) = reference();
    let mut seen = 0;
    for (env, cluster) in fleet.clusters().filter(|(e, _)| matches!(e.provider, fleetc::model::Provider::Metal(_))) {
        let (e, c) = (&env.name.value, &cluster.name.value);
        let path = fleetc::layout::paths::metal_inventory(e, c);
        assert_eq!(path, format!("metal/{e}/{c}/machines.yaml"), "the layout docs/metal.md describes");
        let inv: fleetc::layout::inventory::MetalInventory = serde_saphyr::from_str(text(&set, &path)).unwrap();
        assert_eq!(&inv.cluster, c);
        let model: Vec<(&fleetc::model::Pool, &fleetc::model::Machine)> =
            cluster.pools().flat_map(|p| p.machines.iter().map(move |m| (p, m))).collect();
        assert_eq!(inv.machines.len(), model.len());
        for (m, (pool, want)) in inv.machines.iter().zip(model) {
            assert_eq!(m.hostname, want.hostname);
            assert_eq!(m.role, pool.role.as_str());
            assert_eq!(m.address, want.address.as_ref().unwrap().value.to_string());
            assert_eq!(m.mac.as_deref(), want.mac.as_ref().map(|x| x.value.as_str()));
            seen += 1;
        }
    }
    assert!(seen > 0, "the reference fleet has a metal environment");
}

/// A named node's own patches: the talos family writes them under `patches/nodes/<hostname>/`
/// (`layout::paths::node_patches`), `fleetc talos render` and bare-metal apply read that
/// directory (`layout::paths::node_patch_dir`), and the OpenTofu cluster module lists it after
/// the pool's (docs/talos.md, "Patches").
#[test]
fn every_consumer_reads_a_nodes_patches_where_the_talos_family_writes_them() {
    let (fleet, set) = reference();
    for (env, cluster) in fleet.clusters() {
        for pool in cluster.pools() {
            for m in &pool.machines {
                let dir = fleetc::layout::paths::node_patch_dir(&env.name.value, &cluster.name.value, &m.hostname);
                assert_eq!(
                    dir,
                    format!("talos/{}/{}/patches/nodes/{}/", env.name.value, cluster.name.value, m.hostname)
                );
                let files = set.paths().filter(|p| p.starts_with(&dir)).count();
                assert_eq!(files, m.settings.patches.len(), "{dir}");
            }
        }
    }
    let module = text(&set, "tofu/modules/talos-cluster-cp3/main.tf");
    assert!(
        module.contains(r#"fileset("${var.talos_dir}/patches/nodes/${each.value.hostname}", "*.yaml")"#),
        "{module}"
    );
}

/// The backup job (Argo CD family) runs in the namespace, with the talos.dev roles, that the
/// control plane's `machine.features.kubernetesTalosAPIAccess` (talos family) allows, and
/// mounts the Secret Talos writes for its talos.dev ServiceAccount (same name, same
/// namespace): all from `model::backup::TalosApiAccess::of`. Talos refuses a talos.dev
/// ServiceAccount outside the allowed namespaces or with a role not allowed (siderolabs/talos
/// v1.13.9 `internal/app/machined/pkg/controllers/kubeaccess/serviceaccount/crd_controller.go`
/// l.345-380). On golden/backup (the reference fleet declares no backup).
#[test]
fn the_backup_job_runs_where_the_control_plane_allows_the_talos_api() {
    let root = common::root().join("golden/backup");
    let text_ = std::fs::read_to_string(root.join("fleet.kdl")).unwrap();
    let c = compile("fleet.kdl", &text_, &FsLoader::new(&root));
    let (fleet, set) = (c.fleet.unwrap(), c.artifacts.unwrap());
    let mut checked = 0;
    for env in &fleet.environments {
        for cluster in &env.clusters {
            let Some(access) = fleetc::model::backup::TalosApiAccess::of(cluster) else { continue };
            let (e, n) = (&env.name.value, &cluster.name.value);
            let cp: Vec<Value> =
                serde_saphyr::from_multiple(text(&set, &format!("talos/{e}/{n}/controlplane.yaml"))).unwrap();
            let allowed = cp
                .iter()
                .find_map(|d| d.pointer("/machine/features/kubernetesTalosAPIAccess"))
                .expect("kubernetesTalosAPIAccess on the control plane");
            assert_eq!(allowed["enabled"], Value::Bool(true));
            let list = |v: &Value| -> Vec<String> {
                v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
            };
            let namespaces = list(&allowed["allowedKubernetesNamespaces"]);
            let roles = list(&allowed["allowedRoles"]);
            let docs: Vec<Value> =
                serde_saphyr::from_multiple(text(&set, &format!("argocd/{e}/{n}/backup/talos-backup.yaml"))).unwrap();
            let talos_sa = docs
                .iter()
                .find(|d| d["apiVersion"] == "talos.dev/v1alpha1" && d["kind"] == "ServiceAccount")
                .expect("the talos.dev ServiceAccount");
            let ns = talos_sa["metadata"]["namespace"].as_str().unwrap();
            let name = talos_sa["metadata"]["name"].as_str().unwrap();
            assert_eq!((ns, name), (access.namespace, access.service_account));
            assert!(namespaces.iter().any(|a| a == ns), "{ns} not in {namespaces:?}");
            for r in list(&talos_sa["spec"]["roles"]) {
                assert!(roles.contains(&r), "{r} not in {roles:?}");
            }
            let job = docs.iter().find(|d| d["kind"] == "CronJob").expect("the CronJob");
            assert_eq!(job["metadata"]["namespace"], ns);
            let pod = &job["spec"]["jobTemplate"]["spec"]["template"]["spec"];
            assert_eq!(pod["serviceAccountName"], name);
            let mounted: Vec<&str> = pod["volumes"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|v| v.pointer("/secret/secretName")?.as_str())
                .collect();
            assert_eq!(mounted, [name], "the job mounts the Secret Talos writes for its ServiceAccount");
            // The snapshots are encrypted to the environment's recipient, the one its sealed
            // inputs are encrypted to (talos-backup encrypts unless DISABLE_ENCRYPTION=true).
            let vars: std::collections::BTreeMap<&str, &Value> = pod["containers"][0]["env"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| (v["name"].as_str().unwrap(), v))
                .collect();
            assert_eq!(vars["AGE_X25519_PUBLIC_KEY"]["value"], env.recipients[0].value.as_str());
            assert!(!vars.contains_key("DISABLE_ENCRYPTION"));
            assert_eq!(
                vars["AWS_SECRET_ACCESS_KEY"]["valueFrom"]["secretKeyRef"]["name"],
                fleetc::model::backup::CREDENTIALS_SECRET
            );
            let app: Value =
                serde_saphyr::from_str(text(&set, &format!("argocd/{e}/{n}/apps/fleet-backup.yaml"))).unwrap();
            assert_eq!(app["spec"]["destination"]["namespace"], ns);
            checked += 1;
        }
    }
    assert_eq!(checked, 1, "golden/backup has one cluster with a backup");
}
