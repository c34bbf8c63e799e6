//! Apply: the only part of fleetc that talks to clouds and nodes, and the only one that
//! starts processes (through [`Runner`]; `clippy.toml` forbids `Command::new` elsewhere).
//!
//! `fleetc apply <env>` runs, in order ([`Step::APPLY`]): a preflight that refuses a stale
//! out/, Scaleway SDK variables (R9/F9), a `reboot` mode on Talos ≥ 1.14 (F10), and missing
//! credentials or sealed inputs; (1) schematics registered with the Image Factory (F2); (2) the
//! image pipeline (R22); (3) the cloud root, applied after confirmation; (4) the Talos API
//! switch opened (R13); (5) the cluster root, one control-plane node at a time with
//! `talosctl health` between them, then the workers (R19, F3); (6) the switch closed, whatever
//! happened in 4–5; (7) Argo CD installed if absent, its repository credential created from
//! a sealed input, and the root application applied server-side (F7, R23).
//!
//! `--plan` goes through the same code with a [`Session`] that runs nothing and prints every
//! command. Every command is logged with secrets masked; a failure names its step and what to
//! do next ([`Failure`]); each step is safe to run again (tofu resumes from state, finished
//! images are reused, nodes already at the target are skipped).

mod argocd;
pub mod child_env;
mod cluster;
pub mod environment;
mod factory;
pub mod image;
pub mod layout;
mod render;
mod runner;
mod session;
pub mod signals;
mod switch;
pub mod target;
mod tofu;
mod upgrade;
mod work;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use environment::Env;
pub use render::{RenderOptions, render};
pub use runner::{Cmd, Output, Runner, SystemRunner};
pub use session::{Failure, Masker, Session, Step, StepResult};
pub use target::Target;
pub use upgrade::{UpgradeOptions, upgrade};
pub use work::PLACEHOLDER;

use crate::artifacts::ArtifactSet;
use crate::model::{ApplyMode, Version};
use crate::secrets::{self, Identity, Plaintext, TALOS_SECRETS};
use target::ClusterTarget;
use work::Work;

/// The first Talos release without the `reboot` apply mode (F10).
pub const TALOS_WITHOUT_REBOOT_MODE: Version = Version::new(1, 14, 0);

/// What every command of this module reads.
pub struct Inputs<'a> {
    /// The fleet's directory (sealed inputs and vendored files live there).
    pub fleet_dir: &'a Path,
    /// The output directory, as the commands show it.
    pub out_dir: &'a Path,
    /// A fresh build of fleet.kdl: out/ must equal it.
    pub build: &'a ArtifactSet,
    pub target: &'a Target,
    /// The operator's environment (see [`environment::capture`]).
    pub env: &'a Env,
}

#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    pub plan: bool,
    pub yes: bool,
    /// Overrides the variables file's apply mode for this run (R19).
    pub mode: Option<ApplyMode>,
    pub identity: Option<PathBuf>,
}

/// What the steps share: the checked inputs, the private directory, credentials, and the
/// decrypted sealed inputs (held in memory; the bundle also as a private file for tofu).
pub struct Ctx<'a> {
    pub target: &'a Target,
    pub out: &'a ArtifactSet,
    pub out_dir: &'a Path,
    pub fleet_dir: &'a Path,
    pub work: Work,
    creds: Vec<(String, String, bool)>,
    scw_config: PathBuf,
    pub mode: Option<ApplyMode>,
    /// `(cluster, input name)` → plaintext.
    pub sealed: BTreeMap<(String, String), Plaintext>,
    /// cluster → the decrypted bundle's private path.
    pub bundles: BTreeMap<String, PathBuf>,
    /// The `-var`s every plan and apply of the cloud root takes besides the switches
    /// ([`tofu::cloud_vars`]: on Scaleway the reserved gateway IP's id).
    pub cloud_vars: Vec<String>,
    /// The working copy tofu runs in ([`work::tofu_copy_root`]), never out/.
    pub tofu_copy: PathBuf,
}

impl Ctx<'_> {
    pub fn credential(&self, name: &str) -> &str {
        self.creds.iter().find(|(k, _, _)| k == name).map_or("", |(_, v, _)| v.as_str())
    }

    /// The `scw` CLI gets the Scaleway API's key pair and the empty config file, nothing of
    /// the state bucket's (see [`child_env`]).
    fn scw_env(&self) -> Vec<(String, String, bool)> {
        self.tofu_env().into_iter().filter(|(k, _, _)| k.starts_with("SCW_")).collect()
    }

    /// Credentials under the tools' names, and `SCW_CONFIG_PATH` pointing at an empty private
    /// file so that no profile on disk chooses a project (R9).
    fn tofu_env(&self) -> Vec<(String, String, bool)> {
        let mut v = vec![("TF_IN_AUTOMATION".to_owned(), "1".to_owned(), false)];
        v.extend(self.creds.iter().cloned());
        if matches!(self.target.provider, target::ProviderTarget::Scaleway { .. }) {
            v.push(("SCW_CONFIG_PATH".into(), work::display(&self.scw_config), false));
        }
        v
    }

    /// The clusters the tofu roots build (managed clusters come from Cluster API).
    pub fn built_clusters(&self) -> impl Iterator<Item = &ClusterTarget> {
        self.target.clusters.iter().filter(|c| !c.managed)
    }

    pub fn sealed(&self, cluster: &str, name: &str) -> Option<&Plaintext> {
        self.sealed.get(&(cluster.to_owned(), name.to_owned()))
    }
}

/// `fleetc apply <env>`.
pub fn apply(
    inp: &Inputs<'_>,
    opts: &ApplyOptions,
    runner: &mut dyn Runner,
    sink: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let mut s = Session::new(runner, opts.plan, opts.yes, sink);
    let clusters: Vec<String> = inp.target.clusters.iter().filter(|c| !c.managed).map(|c| c.name.clone()).collect();
    let ctx = preflight(&mut s, inp, opts.mode, opts.identity.as_deref(), &clusters)?;
    s.begin(Step::Schematics);
    factory::register(&mut s, ctx.target, ctx.out, &ctx.tofu_copy)?;
    s.begin(Step::Images);
    image::pipeline(&mut s, &ctx)?;
    s.begin(Step::CloudRoot);
    tofu::cloud(&mut s, &ctx)?;
    switch::with_switch(&mut s, &ctx, switch::Switch::TalosApi, |s| cluster::apply(s, &ctx))?;
    s.begin(Step::ArgoCd);
    argocd::bootstrap(&mut s, &ctx)?;
    s.note("done");
    Ok(())
}

/// Checks everything that can be checked before anything runs, and prepares the run.
fn preflight<'a>(
    s: &mut Session<'_>,
    inp: &Inputs<'a>,
    mode: Option<ApplyMode>,
    identity: Option<&Path>,
    clusters: &[String],
) -> StepResult<Ctx<'a>> {
    s.begin(Step::Preflight);
    if let Err(e) = environment::refuse_scaleway_sdk_vars(inp.env) {
        return s.fail(e);
    }
    match inp.build.check(inp.out_dir) {
        Ok(r) if r.is_fresh() => {}
        Ok(r) => {
            return s.fail(format!(
                "{} is not what fleet.kdl builds ({} stale, {} missing, {} extra); apply acts only on a fresh build: run `fleetc build`, review `git diff`, and apply again",
                inp.out_dir.display(),
                r.stale.len(),
                r.missing.len(),
                r.extra.len()
            ));
        }
        Err(e) => return s.fail(format!("cannot read {}: {e}", inp.out_dir.display())),
    }
    let target = inp.target;
    for c in target.clusters.iter().filter(|c| clusters.contains(&c.name)) {
        let effective = mode.map_or_else(|| c.apply_mode.clone(), |m| m.as_str().to_owned());
        if effective == ApplyMode::Reboot.as_str() && c.talos >= TALOS_WITHOUT_REBOOT_MODE {
            return s.fail(format!(
                "cluster `{}` runs Talos {}: the `reboot` apply mode is gone since Talos 1.14 (F10); use `auto` (which no longer reboots there) or `staged`",
                c.name,
                c.talos.v()
            ));
        }
    }
    let creds = match environment::credentials(inp.env, target.provider.name(), s.plan) {
        Ok(c) => c,
        Err(missing) => {
            return s.fail(format!(
                "set {} (fleetc's own credential variables: the tools receive them under their names, and never a project, region or zone, R9)",
                missing.join(", ")
            ));
        }
    };
    for (_, v, secret) in &creds {
        if *secret && !s.plan {
            s.secret(v);
        }
    }
    let out_dir_abs = inp.out_dir.to_owned();
    let work =
        Work::new(s.plan, &[&out_dir_abs]).map_err(|e| s.failure(format!("cannot create a private directory: {e}")))?;
    let scw_config =
        work.write("scw-config.yaml", b"").map_err(|e| s.failure(format!("cannot write a private file: {e}")))?;
    let mut ctx = Ctx {
        target,
        out: inp.build,
        out_dir: inp.out_dir,
        fleet_dir: inp.fleet_dir,
        work,
        creds,
        scw_config,
        mode,
        sealed: BTreeMap::new(),
        bundles: BTreeMap::new(),
        cloud_vars: Vec::new(),
        tofu_copy: work::tofu_copy_root(inp.fleet_dir),
    };
    let listed: Vec<String> = ctx
        .tofu_env()
        .iter()
        .map(|(k, v, secret)| {
            s.quiet_env.insert(k.clone());
            if *secret { format!("{k}=***") } else { format!("{k}={v}") }
        })
        .collect();
    s.note(&format!(
        "every tofu command below also gets {} (scw only the SCW_* among them; no child gets anything else of this shell but its PATH, HOME, locale, terminal and proxies)",
        listed.join(" ")
    ));
    open_sealed(s, &mut ctx, inp, identity, clusters)?;
    work::sync_tofu_copy(&ctx.tofu_copy, inp.build, &target.env, s.plan)
        .map_err(|e| s.failure(format!("cannot write tofu's working copy {}: {e}", ctx.tofu_copy.display())))?;
    s.note(&format!(
        "tofu runs in a working copy of the roots, {} (never in {})",
        work::display(&ctx.tofu_copy),
        inp.out_dir.display()
    ));
    ctx.cloud_vars = tofu::cloud_vars(s, &ctx)?;
    Ok(ctx)
}

/// Every sealed input the clusters list must exist; the bundle must be listed (fleetc never
/// generates one, R14). Outside `--plan` they are decrypted now, so that a wrong identity
/// stops the run before anything changed.
fn open_sealed(
    s: &mut Session<'_>,
    ctx: &mut Ctx<'_>,
    inp: &Inputs<'_>,
    identity: Option<&Path>,
    clusters: &[String],
) -> StepResult {
    let wanted: Vec<&ClusterTarget> = ctx.target.clusters.iter().filter(|c| clusters.contains(&c.name)).collect();
    let mut missing = Vec::new();
    for c in &wanted {
        if !c.sealed.iter().any(|n| n == TALOS_SECRETS) {
            let why = format!(
                "cluster `{}` lists no `sealed \"{TALOS_SECRETS}\"`: fleetc never generates a secrets bundle (R14); make one with `talosctl gen secrets`, seal it with `fleetc secrets import {}/{} {TALOS_SECRETS} secrets.yaml`, and list it",
                c.name, ctx.target.env, c.name
            );
            if !s.plan {
                return s.fail(why);
            }
            // `--plan` shows what would run and, as for a missing sealed file, what stops it.
            s.note(&format!("apply refuses: {why}"));
        }
        for name in &c.sealed {
            let rel = secrets::rel_path(&ctx.target.env, &c.name, name);
            if !inp.fleet_dir.join(&rel).is_file() {
                missing.push(rel);
            }
        }
    }
    if s.plan {
        for c in &wanted {
            for name in &c.sealed {
                let rel = secrets::rel_path(&ctx.target.env, &c.name, name);
                let state =
                    if missing.contains(&rel) { "missing: apply refuses until it is imported" } else { "present" };
                s.note(&format!("sealed input {rel} ({state})"));
            }
            ctx.bundles.insert(c.name.clone(), ctx.work.file(&format!("{}-{TALOS_SECRETS}.yaml", c.name)));
        }
        return Ok(());
    }
    if !missing.is_empty() {
        return s.fail(format!(
            "sealed inputs are missing: {}; seal each with `fleetc secrets import`",
            missing.join(", ")
        ));
    }
    let Some(path) = Identity::locate(identity, inp.env.get(secrets::IDENTITY_VAR).map(Into::into)) else {
        return s.fail(format!(
            "decrypting the sealed inputs needs an age identity: pass --identity FILE or set {}",
            secrets::IDENTITY_VAR
        ));
    };
    let id = Identity::from_file(&path).map_err(|e| s.failure(e.to_string()))?;
    for c in &wanted {
        for name in &c.sealed {
            let plain = secrets::open_file(inp.fleet_dir, &ctx.target.env, &c.name, name, &id)
                .map_err(|e| s.failure(e.to_string()))?;
            if let Some(text) = plain.as_str() {
                s.secret(text);
            }
            if name == TALOS_SECRETS {
                secrets::bundle::validate(plain.bytes())
                    .map_err(|e| s.failure(format!("the sealed bundle of `{}` is not valid: {e}", c.name)))?;
                let file = ctx
                    .work
                    .write(&format!("{}-{TALOS_SECRETS}.yaml", c.name), plain.bytes())
                    .map_err(|e| s.failure(format!("cannot write a private file: {e}")))?;
                ctx.bundles.insert(c.name.clone(), file);
            }
            ctx.sealed.insert((c.name.clone(), name.clone()), plain);
        }
    }
    s.note(&format!("{} sealed inputs decrypted into memory and a private directory", ctx.sealed.len()));
    Ok(())
}
