//! OpenTofu roots: shared modules under `tofu/modules/`, and per environment a directory
//! (R1: never a workspace) with three roots: `bootstrap` (local state, creates the state
//! bucket), `cloud` (the infrastructure) and `cluster` (the Talos cluster built on it, R2).
//! Each root is thin: `main.tf` calls modules, `variables.tf` declares, `<env>.auto.tfvars`
//! holds the values (R5), `terraform.tf` pins OpenTofu, exactly the providers used (R4), the
//! S3 backend and state encryption (R3), `outputs.tf` exports. Two environments of the same
//! shape differ only in their values and their state key. docs/tofu.md maps every rule to
//! the place it shows in the output.

pub mod arguments;
mod bootstrap;
mod hclx;
mod moved;
mod placement;
pub mod providers;
mod proxmox;
mod scaleway;
pub mod settings;
mod talos;

use std::collections::{BTreeMap, BTreeSet};

use super::EmitResult;
use super::hcl::Body;
use crate::artifacts::set::ArtifactSet;
use crate::layout::paths::{self, BOOTSTRAP, CLOUD, CLUSTER};
use crate::model::{Cluster, Environment, Fleet, Provider};
use settings::Backend;

pub use scaleway::TALOS_PORT_BASE;

/// One environment as the emitter sees it: its clusters built by OpenTofu (clusters managed
/// by Cluster API are not) and the gateway ports of the API switches.
pub(crate) struct Env<'a> {
    pub fleet: &'a Fleet,
    pub env: &'a Environment,
    /// The environment's OpenTofu state: an environment without one (bare metal) has no root.
    pub state: &'a crate::model::StateBackend,
    pub clusters: Vec<&'a Cluster>,
    talos_ports: BTreeMap<String, u32>,
}

impl<'a> Env<'a> {
    fn new(fleet: &'a Fleet, env: &'a Environment) -> Option<Self> {
        let state = env.state.as_ref()?;
        let clusters: Vec<&Cluster> = env.clusters.iter().filter(|c| !c.is_managed()).collect();
        let mut talos_ports = BTreeMap::new();
        let mut port = TALOS_PORT_BASE;
        for c in &clusters {
            for p in c.pools() {
                for m in &p.machines {
                    port += 1;
                    talos_ports.insert(m.hostname.clone(), port);
                }
            }
        }
        Some(Env { fleet, env, state, clusters, talos_ports })
    }
    /// The gateway port of a node's Talos API rule (R13).
    pub fn talos_port(&self, hostname: &str) -> u32 {
        self.talos_ports.get(hostname).copied().unwrap_or(TALOS_PORT_BASE)
    }
    /// The state object key of a root: `<env>/<root>.tfstate`.
    pub fn state_key(&self, root: &str) -> String {
        format!("{}/{root}.tfstate", self.env.name.value)
    }
}

/// A shared module: file name → body.
pub(crate) struct Module {
    files: Vec<(String, Body)>,
}

impl Module {
    fn new(files: Vec<(&str, Body)>) -> Self {
        Module { files: files.into_iter().map(|(n, b)| (n.to_owned(), b)).collect() }
    }
}

/// The four files of a root fleetc builds before it knows the providers.
pub(crate) struct RootFiles {
    main: Body,
    variables: Body,
    outputs: Body,
    values: Body,
}

/// The passphrase is `ephemeral` (OpenTofu 1.11): a plan file stores the value of every other
/// root variable, sensitive or not, and `tofu show -json` of the plan prints it in the clear
/// (opentofu v1.11.5 `internal/plans/planfile/tfplan.go`, `writeTfplan`: only variables in
/// `EphemeralVariables` are left out); an ephemeral one is kept out of plans and state and must
/// be given again to the apply of a saved plan, which `fleetc apply` does (every tofu command
/// gets `TF_VAR_state_passphrase`).
fn passphrase_var(vars: &mut Body) {
    hclx::Var::new(
        settings::PASSPHRASE_VAR,
        hclx::ty("string"),
        "R3: the state and plan encryption passphrase (16+ characters). Never in a file, a plan or the state (ephemeral): give it to every command, the apply of a saved plan too (TF_VAR_state_passphrase).",
    )
    .sensitive()
    .ephemeral()
    .write(vars);
}

struct Root {
    dir: String,
    env: String,
    files: RootFiles,
    state_key: Option<String>,
    reads_remote_state: bool,
}

/// The environments' directories, in fleet order, with the roots each has.
pub fn emit(fleet: &Fleet) -> EmitResult {
    let mut modules: BTreeMap<String, Module> = BTreeMap::new();
    let mut roots: Vec<Root> = Vec::new();
    let mut readmes: Vec<(String, String)> = Vec::new();
    let mut bucket_owner: BTreeMap<String, String> = BTreeMap::new();
    for environment in &fleet.environments {
        // Bare metal has no infrastructure to build: no OpenTofu root (docs/metal.md).
        if matches!(environment.provider, Provider::Metal(_)) {
            continue;
        }
        let Some(env) = Env::new(fleet, environment) else { continue };
        let name = environment.name.value.clone();
        let dir = |root: &str| paths::tofu_root(&name, root);
        let bucket = env.state.bucket.value.clone();
        let owner = bucket_owner.entry(bucket).or_insert_with(|| name.clone()).clone();
        let bootstrap_here = bootstrap::supported(&env) && owner == name;
        if bootstrap_here {
            modules.entry(bootstrap::MODULE.into()).or_insert_with(bootstrap::module);
            roots.push(Root {
                dir: dir(BOOTSTRAP),
                env: name.clone(),
                files: bootstrap::root(&env),
                state_key: None,
                reads_remote_state: false,
            });
        }
        let cloud = match &environment.provider {
            Provider::Scaleway(_) => {
                modules.entry(scaleway::CLOUD_MODULE.into()).or_insert_with(scaleway::cloud_module);
                for c in &env.clusters {
                    let cp = c.control_plane.machines.len();
                    modules.entry(scaleway::cluster_module(cp)).or_insert_with(|| scaleway::cluster_module_for(cp));
                }
                scaleway::cloud_root(&env)
            }
            Provider::Metal(_) => continue,
            Provider::Proxmox(_) => {
                modules.entry(proxmox::CLOUD_MODULE.into()).or_insert_with(proxmox::cloud_module);
                for c in &env.clusters {
                    let cp = c.control_plane.machines.len();
                    modules.entry(proxmox::cluster_module(cp)).or_insert_with(|| proxmox::cluster_module_for(cp));
                }
                proxmox::cloud_root(&env)
            }
        };
        roots.push(Root {
            dir: dir(CLOUD),
            env: name.clone(),
            files: cloud,
            state_key: Some(env.state_key(CLOUD)),
            reads_remote_state: false,
        });
        if !env.clusters.is_empty() {
            for c in &env.clusters {
                let cp = c.control_plane.machines.len();
                modules.entry(talos::module_name(cp)).or_insert_with(|| talos::module_for(cp));
            }
            roots.push(Root {
                dir: dir(CLUSTER),
                env: name.clone(),
                files: talos::cluster_root(&env),
                state_key: Some(env.state_key(CLUSTER)),
                reads_remote_state: true,
            });
        }
        readmes.push((paths::readme(&paths::tofu_env_dir(&name)), readme(&env, bootstrap_here, &owner)?));
    }

    let mut out = ArtifactSet::new();
    let mut module_providers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, module) in &mut modules {
        place_module(module)?;
        let used = providers::used_in(module.files.iter().map(|(_, b)| b));
        let mut versions = hclx::file();
        let mut err = Ok(());
        versions.block("terraform", &[], |t| {
            t.attr("required_version", settings::REQUIRED_VERSION).blank();
            err = providers::required_providers(t, &used, false);
        });
        err?;
        module.files.push((settings::VERSIONS_FILE.into(), versions));
        module_providers.insert(name.clone(), used);
        for (file, body) in &module.files {
            write(&mut out, &format!("{}/{file}", paths::tofu_module_dir(name)), body)?;
        }
    }
    for root in roots {
        let f = &root.files;
        let bodies = [&f.main, &f.variables, &f.outputs];
        let used = providers::used_by_root(bodies, &module_providers);
        let mut terraform = hclx::file();
        let backend = match &root.state_key {
            Some(key) => Backend::S3 {
                state: env_state(fleet, &root.env)?
                    .state
                    .as_ref()
                    .ok_or_else(|| crate::emit::EmitError("an OpenTofu root without state".into()))?,
                key,
            },
            None => Backend::Local,
        };
        settings::terraform_block(&mut terraform, &used, backend, root.reads_remote_state)?;
        write(&mut out, &format!("{}/terraform.tf", root.dir), &terraform)?;
        let mut versions = hclx::file();
        settings::versions_block(&mut versions);
        write(&mut out, &format!("{}/{}", root.dir, settings::VERSIONS_FILE), &versions)?;
        write(&mut out, &format!("{}/main.tf", root.dir), &f.main)?;
        write(&mut out, &format!("{}/variables.tf", root.dir), &f.variables)?;
        write(&mut out, &format!("{}/outputs.tf", root.dir), &f.outputs)?;
        write(&mut out, &format!("{}/{}.auto.tfvars", root.dir, root.env), &f.values)?;
    }
    for (path, text) in readmes {
        out.insert(path, text.as_bytes())?;
    }
    Ok(out)
}

/// R9 in the code: every Scaleway block of the module's `main.tf` names its project, zone and
/// region from variables ([`placement`]), which the module declares and its callers pass.
fn place_module(module: &mut Module) -> Result<(), String> {
    let Some(i) = module.files.iter().position(|(n, _)| n == "main.tf") else { return Ok(()) };
    let placed = placement::place(&module.files[i].1)?;
    let used = placement::used(&placed)?;
    module.files[i].1 = placed;
    if let Some((_, vars)) = module.files.iter_mut().find(|(n, _)| n == "variables.tf") {
        for v in used {
            let description = match v {
                "project_id" => {
                    "The Scaleway project every resource is built in (R9: named on each resource, so that no SCW_* variable decides it)."
                }
                "region" => "The Scaleway region of the regional resources (R9).",
                _ => "The Scaleway zone of the zonal resources (R9).",
            };
            hclx::Var::new(v, hclx::ty("string"), description).write(vars);
        }
    }
    Ok(())
}

fn env_state<'a>(fleet: &'a Fleet, name: &str) -> Result<&'a Environment, String> {
    fleet.environment(name).ok_or_else(|| format!("environment `{name}` vanished"))
}

fn write(out: &mut ArtifactSet, path: &str, body: &Body) -> Result<(), String> {
    let text = body.render().map_err(|e| format!("{path}: {e}"))?;
    out.insert(path.to_owned(), text.as_bytes())
}

const README: &str = r"<!-- {{ header }} -->
# OpenTofu roots of environment `{{ env }}`

This directory is the environment (R1: a directory, never a workspace). Its roots are applied
in this order:

{% if bootstrap %}1. `bootstrap/`: once, with local state. It creates the state bucket `{{ bucket }}` with
   versioning on, so that every state can be restored (R28).
{% else %}1. The state bucket `{{ bucket }}` {% if owner != env %}is created by `../{{ owner }}/bootstrap/`{% else %}lives outside Scaleway: create it by hand, with versioning on (R28){% endif %}.
{% endif %}2. `cloud/`: {{ cloud }}.
{% if scaleway %}   Its instances boot a Talos image by name that must exist in the project before `cloud/`
   can plan: `fleetc apply` makes it (step 2, the image pipeline: Image Factory download,
   upload to the state bucket, snapshot import, image create; R22, docs/apply.md). Running
   tofu by hand, run that pipeline first: `fleetc apply {{ env }} --plan` prints its commands.
{% endif %}{% if clusters %}3. `cluster/`: reads the cloud root's state and builds the Talos cluster{% if clusters|length > 1 %}s{% endif %} {{ clusters|join(', ') }}:
   machine configs from `out/talos/{{ env }}/`, applied one control-plane node at a time, etcd
   bootstrap, kubeconfig and talosconfig as sensitive outputs (R2, R11, R14, R19).
{% endif %}
Each root's values are in `{{ env }}.auto.tfvars` (R5); the code is shared with every other
environment through `../../modules/`.

## Without any secret

`tofu fmt -check`, lint and `tofu init -backend=false && tofu validate` pass in every root on
a checkout that holds no secret at all: the encryption block names its passphrase through a
variable (R3), and no credential is in any file.

## Inputs given at apply time

- `state_passphrase` (every root): the passphrase of the state and plan encryption, e.g.
  `TF_VAR_state_passphrase`. The key provider (`{{ key_provider }}`) and method (`{{ method }}`)
  names never change: renaming them makes the encrypted state unreadable.
{% if scaleway %}- `gateway_ip_id` (cloud): the id (`<zone>/<uuid>`) of the reserved public gateway IP
  `{{ gateway }}`, which the cloud root imports (R16). `fleetc apply` looks it up by that
  address (`scw vpc-gw ip list`); running tofu by hand, give it with `-var`.
- `talos_api_open=true` (cloud), only while the Talos API is needed (R13), then false again.
{% endif %}{% if proxmox %}- `PROXMOX_VE_API_TOKEN` (cloud, in the environment; `fleetc apply` sets it from
  `FLEETC_PROXMOX_API_TOKEN`). No SSH access to the Proxmox node is needed: the VMs' disks are
  imported through the API (`import_from`, Proxmox VE 8.4+, a datastore with the `import`
  content type).
{% endif %}{% if bootstrap and not scaleway %}- `project_id` (bootstrap): the Scaleway project of the state bucket, with `-var` (not in
  fleet.kdl).
{% endif %}{% if clusters %}- `talos_secrets_files` (cluster): per cluster, the path of the decrypted machine secrets
  bundle that the cluster root imports (R14); needed until the import only.
- `apply_mode` (cluster), to override the variables file's mode for one run (R19). The
  variables file's mode never reboots a running node, so a plain `tofu apply` can never have
  two control-plane nodes down at once; a change that needs a reboot fails there and goes
  through `fleetc apply`, which reboots one node at a time with `talosctl health` between.
  Passing a mode that reboots by hand gives up that guarantee (the provider returns before
  a rebooted node is healthy, F3).
{% endif %}{% if scaleway_credentials %}- No credential of the cloud controller manager and CSI driver: `fleetc apply` writes the
  `scaleway-secret` Secret into the cluster from its sealed input (F11); it never passes
  through a root, a machine config or state.
{% endif %}
Generated by fleetc; docs/tofu.md explains every rule and where it shows.
";

fn readme(env: &Env<'_>, bootstrap_here: bool, owner: &str) -> Result<String, String> {
    let mut jinja = minijinja::Environment::new();
    jinja.set_keep_trailing_newline(true);
    jinja.add_template("readme", README).map_err(|e| e.to_string())?;
    let scaleway = matches!(env.env.provider, Provider::Scaleway(_));
    let cloud = if scaleway {
        "the private network, the public gateway, PostgreSQL, buckets, registry namespaces, Secret Manager \
         secrets, the instances, the private Kubernetes API load balancer and the API switches (R6–R13)"
    } else {
        "the Talos images and the VMs, with static addresses and a data disk for EPHEMERAL"
    };
    let ctx = minijinja::context! {
        header => crate::emit::HEADER,
        env => env.env.name.value,
        bucket => env.state.bucket.value,
        bootstrap => bootstrap_here,
        owner => owner,
        cloud => cloud,
        clusters => env.clusters.iter().map(|c| format!("`{}`", c.name.value)).collect::<Vec<_>>(),
        scaleway => scaleway,
        proxmox => !scaleway,
        gateway => env.env.gateway.as_ref().map(|g| g.value.to_string()).unwrap_or_default(),
        key_provider => format!("{}.{}", settings::KEY_PROVIDER.0, settings::KEY_PROVIDER.1),
        method => format!("{}.{}", settings::METHOD.0, settings::METHOD.1),
        scaleway_credentials => scaleway && env.clusters.iter().any(|c| c.addons.iter().any(|a| a.value.starts_with("scaleway-"))),
    };
    jinja.get_template("readme").and_then(|t| t.render(ctx)).map_err(|e| e.to_string())
}
