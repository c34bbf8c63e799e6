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
pub mod metal;
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
use crate::layout::names::{SCALEWAY_API_KEY_INPUT, TALOS_SECRETS_INPUT};
use crate::model::{ApplyMode, Version};
use crate::secrets::{self, Identity, Plaintext};
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
    if matches!(ctx.target.provider, target::ProviderTarget::Metal) {
        // Bare metal: no image pipeline, no cloud root, no switch (docs/metal.md).
        metal::apply(&mut s, &ctx)?;
        s.begin(Step::ArgoCd);
        argocd::bootstrap(&mut s, &ctx)?;
        s.note("done");
        return Ok(());
    }
    s.begin(Step::Images);
    image::pipeline(&mut s, &ctx)?;
    s.begin(Step::CloudRoot);
    tofu::cloud(&mut s, &ctx)?;
    // The cluster step fetches the kubeconfig Argo CD's step uses (through the Talos API), and
    // where a cluster lists the Scaleway API key it writes that Secret through the operator's
    // path to the Kubernetes API, so that path opens with the Talos API switch (F11, R13).
    let which = if ctx.built_clusters().any(cluster::writes_scaleway_secret(&ctx)) {
        switch::Switch::Both
    } else {
        switch::Switch::TalosApi
    };
    switch::with_switch(&mut s, &ctx, which, |s| cluster::apply(s, &ctx))?;
    s.begin(Step::ArgoCd);
    argocd::bootstrap(&mut s, &ctx)?;
    s.note("done");
    Ok(())
}

/// Checks everything that can be checked before anything runs, and prepares the run. Every
/// refusal is collected first and reported at once, each with its cause first (issue 15):
/// one run tells the operator everything that stops it.
fn preflight<'a>(
    s: &mut Session<'_>,
    inp: &Inputs<'a>,
    mode: Option<ApplyMode>,
    identity: Option<&Path>,
    clusters: &[String],
) -> StepResult<Ctx<'a>> {
    s.begin(Step::Preflight);
    let mut refusals: Vec<String> = Vec::new();
    if let Err(e) = environment::refuse_scaleway_sdk_vars(inp.env) {
        refusals.push(e);
    }
    match inp.build.check(inp.out_dir) {
        Ok(r) if r.is_fresh() => {}
        Ok(r) => refusals.push(format!(
            "{} is not what fleet.kdl builds ({} stale, {} missing, {} extra); apply acts only on a fresh build: run `fleetc build`, review `git diff`, and apply again",
            inp.out_dir.display(),
            r.stale.len(),
            r.missing.len(),
            r.extra.len()
        )),
        Err(e) => refusals.push(format!("cannot read {}: {e}", inp.out_dir.display())),
    }
    let target = inp.target;
    for c in target.clusters.iter().filter(|c| clusters.contains(&c.name)) {
        let effective = mode.unwrap_or(c.apply_mode);
        if effective == ApplyMode::Reboot && c.talos >= TALOS_WITHOUT_REBOOT_MODE {
            refusals.push(format!(
                "cluster `{}` runs Talos {}: the `reboot` apply mode is gone since Talos 1.14 (F10); use `auto` (which no longer reboots there) or `staged`",
                c.name,
                c.talos.v()
            ));
        }
    }
    let creds = match environment::credentials(inp.env, target.provider.name(), s.plan) {
        Ok(c) => c,
        Err(missing) => {
            refusals.push(format!(
                "{} not set: set them (fleetc's own credential variables: the tools receive them under their names, and never a project, region or zone, R9)",
                missing.join(", ")
            ));
            Vec::new()
        }
    };
    refusals.extend(sealed_refusals(s, inp, identity, clusters));
    match refusals.as_slice() {
        [] => {}
        [one] => return s.fail(one.clone()),
        many => {
            let list: Vec<String> = many.iter().map(|r| format!("- {r}")).collect();
            return s.fail(format!("{} problems stop the apply:\n{}", many.len(), list.join("\n")));
        }
    }
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
    let metal = matches!(target.provider, target::ProviderTarget::Metal);
    if metal {
        s.note("bare metal: no OpenTofu root; talosctl configures each machine in maintenance mode (no child gets anything of this shell but its PATH, HOME, locale, terminal and proxies)");
    } else {
        s.note(&format!(
            "every tofu command below also gets {} (scw only the SCW_* among them; no child gets anything else of this shell but its PATH, HOME, locale, terminal and proxies)",
            listed.join(" ")
        ));
    }
    open_sealed(s, &mut ctx, inp, identity, clusters)?;
    if metal {
        return Ok(ctx);
    }
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

/// What stops the sealed inputs from opening, all at once: a cluster that lists no bundle
/// (fleetc never generates one, R14), sealed files that are missing, no identity. `--plan`
/// notes them instead and shows the rest of the plan.
fn sealed_refusals(s: &mut Session<'_>, inp: &Inputs<'_>, identity: Option<&Path>, clusters: &[String]) -> Vec<String> {
    let target = inp.target;
    let mut refusals = Vec::new();
    let mut missing = Vec::new();
    for c in target.clusters.iter().filter(|c| clusters.contains(&c.name)) {
        if !c.sealed.iter().any(|n| n == TALOS_SECRETS_INPUT) {
            let why = format!(
                "cluster `{}` lists no `sealed \"{TALOS_SECRETS_INPUT}\"`: fleetc never generates a secrets bundle (R14); first list it (`sealed \"{TALOS_SECRETS_INPUT}\"` in cluster `{}`: `secrets import` accepts only a listed name), then make one with `talosctl gen secrets` and seal it with `fleetc secrets import {}/{} {TALOS_SECRETS_INPUT} secrets.yaml`",
                c.name, c.name, target.env, c.name
            );
            if s.plan {
                // `--plan` shows what would run and, as for a missing sealed file, what stops it.
                s.note(&format!("apply refuses: {why}"));
            } else {
                refusals.push(why);
            }
        }
        for name in &c.sealed {
            let rel = secrets::rel_path(&target.env, &c.name, name);
            let present = inp.fleet_dir.join(&rel).is_file();
            if s.plan {
                let state = if present { "present" } else { "missing: apply refuses until it is imported" };
                s.note(&format!("sealed input {rel} ({state})"));
            } else if !present {
                missing.push(rel);
            }
        }
    }
    if s.plan {
        return refusals;
    }
    if !missing.is_empty() {
        refusals
            .push(format!("sealed inputs are missing: {}; seal each with `fleetc secrets import`", missing.join(", ")));
    }
    if Identity::locate(identity, inp.env.get(secrets::IDENTITY_VAR).map(Into::into)).is_none() {
        refusals.push(format!(
            "no age identity: decrypting the sealed inputs needs one; pass --identity FILE or set {}",
            secrets::IDENTITY_VAR
        ));
    }
    refusals
}

/// Decrypts the sealed inputs the clusters list (checked by [`sealed_refusals`]) into memory,
/// the bundle also into a private file for tofu's import; under `--plan` only names the
/// bundle's private path. Outside `--plan` this happens before anything runs, so that a
/// wrong identity stops the run before anything changed.
fn open_sealed(
    s: &mut Session<'_>,
    ctx: &mut Ctx<'_>,
    inp: &Inputs<'_>,
    identity: Option<&Path>,
    clusters: &[String],
) -> StepResult {
    let wanted: Vec<&ClusterTarget> = ctx.target.clusters.iter().filter(|c| clusters.contains(&c.name)).collect();
    if s.plan {
        for c in &wanted {
            ctx.bundles.insert(c.name.clone(), ctx.work.file(&format!("{}-{TALOS_SECRETS_INPUT}.yaml", c.name)));
        }
        return Ok(());
    }
    let Some(path) = Identity::locate(identity, inp.env.get(secrets::IDENTITY_VAR).map(Into::into)) else {
        return s.fail(format!(
            "no age identity: decrypting the sealed inputs needs one; pass --identity FILE or set {}",
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
            if name == TALOS_SECRETS_INPUT {
                secrets::bundle::validate(plain.bytes())
                    .map_err(|e| s.failure(format!("the sealed bundle of `{}` is not valid: {e}", c.name)))?;
                let file = ctx
                    .work
                    .write(&format!("{}-{TALOS_SECRETS_INPUT}.yaml", c.name), plain.bytes())
                    .map_err(|e| s.failure(format!("cannot write a private file: {e}")))?;
                ctx.bundles.insert(c.name.clone(), file);
            }
            if name == SCALEWAY_API_KEY_INPUT {
                cluster::scaleway_key(plain.as_str().unwrap_or_default())
                    .map_err(|e| s.failure(format!("the sealed `{name}` of `{}` {e}", c.name)))?;
            }
            ctx.sealed.insert((c.name.clone(), name.clone()), plain);
        }
    }
    s.note(&format!("{} sealed inputs decrypted into memory and a private directory", ctx.sealed.len()));
    Ok(())
}

/// `fleetc apply <env> --plan --format json`: the plan as one JSON document for CI, from the
/// same lines `--plan` prints (`== <step>`, `# <note>`, `$ <command>`): the environment,
/// whether the plan is complete (`ok`), each step with its entries in order (`{"run": …}` a
/// command as printed, secrets masked; `{"note": …}` a comment, among them `asks:` and
/// `apply refuses:`), and the refusal, if any, with its step and next action.
pub fn plan_json(env: &str, lines: &[String], result: &Result<(), Failure>) -> serde_json::Value {
    use serde_json::{Value, json};
    let mut steps: Vec<Value> = Vec::new();
    let mut entries: Vec<Value> = Vec::new();
    let mut title: Option<String> = None;
    let mut flush = |title: &mut Option<String>, entries: &mut Vec<Value>| {
        if title.is_some() || !entries.is_empty() {
            steps.push(json!({"step": title.take().unwrap_or_default(), "entries": std::mem::take(entries)}));
        }
    };
    for l in lines {
        if let Some(t) = l.strip_prefix("== ") {
            flush(&mut title, &mut entries);
            title = Some(t.to_owned());
        } else if let Some(c) = l.strip_prefix("$ ") {
            entries.push(json!({"run": c}));
        } else if let Some(n) = l.strip_prefix("# ") {
            entries.push(json!({"note": n}));
        } else {
            entries.push(json!({"note": l}));
        }
    }
    flush(&mut title, &mut entries);
    let error = match result {
        Ok(()) => Value::Null,
        Err(f) => json!({"step": f.step.title(), "message": f.message, "next": f.step.next()}),
    };
    json!({"environment": env, "ok": result.is_ok(), "steps": steps, "error": error})
}
