//! Apply: the only part of fleetc that talks to clouds and nodes, and the only one that
//! starts processes (through [`Runner`]; `clippy.toml` forbids `Command::new` elsewhere).
//!
//! `fleetc apply <env>` runs, in order ([`order::of`], the steps of [`Step::APPLY`]): a
//! preflight that refuses a stale out/, steering variables of the shell (Scaleway SDK, AWS,
//! OpenTofu…: R9/F9, `env.rs`), a `reboot` mode on Talos ≥ 1.14 (F10), and missing
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
//!
//! Day two (docs/day-two.md): `fleetc upgrade` (`upgrade.rs`: each node read back after its
//! upgrade, an etcd snapshot checked before each control-plane node, `snapshot.rs`) and
//! `fleetc restore` (`restore.rs`: Talos's etcd recovery) run on the same kit, and so does
//! `fleetc drift` (`drift.rs`: what runs against what out/ would apply, read-only).
//!
//! This file only dispatches. The steps share the kit of `ctx.rs` (the inputs and the state a
//! run carries), the vocabulary of `nodes.rs` and the answer of `inventory.rs` (where a
//! cluster's nodes are); none of them imports this file.

mod argocd;
mod cluster;
mod ctx;
mod drift;
pub mod env;
mod factory;
pub mod image;
mod inventory;
pub mod metal;
mod nodes;
pub mod order;
mod preflight;
mod render;
mod restore;
mod runner;
mod session;
pub mod signals;
pub mod snapshot;
mod switch;
pub mod target;
mod tofu;
mod tunnel;
mod upgrade;
mod work;

pub use ctx::Inputs;
pub use drift::{DriftOptions, drift};
pub use env::Env;
pub use preflight::TALOS_WITHOUT_REBOOT_MODE;
pub use render::{RenderOptions, render};
pub use restore::{RestoreOptions, restore};
pub use runner::{Cmd, Output, Runner, SystemRunner};
pub use session::{Failure, Masker, Session, Step, StepResult};
pub use target::Target;
pub use upgrade::{UpgradeOptions, upgrade};
pub use work::PLACEHOLDER;

use std::path::PathBuf;

use crate::model::ApplyMode;
use order::Stage;
use preflight::preflight;

#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    pub plan: bool,
    pub yes: bool,
    /// Overrides the variables file's apply mode for this run (R19).
    pub mode: Option<ApplyMode>,
    pub identity: Option<PathBuf>,
    /// `--allow-stand-ins`: install a stand-in manifest `fleetc init` wrote (a lab whose
    /// clusters run Argo CD already); refused otherwise.
    pub allow_stand_ins: bool,
    /// `--provider-mirror`, `--ca-bundle`: what tofu uses instead of the registry and the
    /// system's CA certificates ([`env::ToolPath`]).
    pub tools: env::ToolPath,
    /// `--leases FILE`: a DHCP server's lease file, where bare-metal apply finds each
    /// machine's maintenance-mode address by its MAC (docs/metal.md, [`metal::Leases`]).
    pub leases: Option<PathBuf>,
}

/// `fleetc apply <env>`: the steps of [`order::of`], in that order.
pub fn apply(
    inp: &Inputs<'_>,
    opts: &ApplyOptions,
    runner: &mut dyn Runner,
    sink: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let mut s = Session::new(runner, opts.plan, opts.yes, sink);
    let order = order::of(inp.target);
    if let Some(path) = &opts.leases
        && !order.stages.iter().any(|st| matches!(st, Stage::Machines { .. }))
    {
        // Only bare-metal machines are found by their DHCP lease; elsewhere the file would be
        // read by nothing, and the operator would believe apply used it.
        return Err(s.failure(format!(
            "--leases {}: `{}` has no bare-metal machines, and only bare-metal apply reads a leases file (docs/metal.md)",
            path.display(),
            inp.target.env
        )));
    }
    let clusters: Vec<String> = inp.target.built_clusters().map(|c| c.name.clone()).collect();
    let ctx = preflight(
        &mut s,
        inp,
        opts.mode,
        opts.identity.as_deref(),
        &clusters,
        &opts.tools,
        Some(opts.allow_stand_ins),
    )?;
    for stage in &order.stages {
        match stage {
            Stage::Schematics => {
                s.begin(Step::Schematics);
                factory::register(&mut s, ctx.target, ctx.out, &ctx.tofu_copy)?;
            }
            Stage::Images => {
                s.begin(Step::Images);
                image::pipeline(&mut s, &ctx)?;
            }
            Stage::CloudRoot => {
                s.begin(Step::CloudRoot);
                tofu::cloud(&mut s, &ctx)?;
            }
            Stage::ClusterRoot { clusters, .. } => {
                // The cluster step fetches the kubeconfig Argo CD's step uses (through the
                // Talos API), and where a cluster lists the Scaleway API key it writes that
                // Secret through the operator's path to the Kubernetes API, so that path opens
                // with the Talos API switch (F11, R13).
                let which = if clusters.iter().copied().any(cluster::writes_scaleway_secret(&ctx)) {
                    switch::Switch::Both
                } else {
                    switch::Switch::TalosApi
                };
                switch::with_switch(&mut s, &ctx, which, |s| cluster::apply(s, &ctx, clusters))?;
            }
            // Bare metal: no image pipeline, no cloud root, no switch (docs/metal.md).
            Stage::Machines { clusters } => metal::apply(&mut s, &ctx, clusters, opts.leases.as_deref())?,
            Stage::ArgoCd { clusters } => {
                s.begin(Step::ArgoCd);
                argocd::bootstrap(&mut s, &ctx, clusters)?;
            }
        }
    }
    if s.plan && !ctx.plan_refusals.is_empty() {
        let list: Vec<String> = ctx.plan_refusals.iter().map(|r| format!("- {r}")).collect();
        s.note(&format!(
            "apply refuses, until each is fixed ({} problems, noted above where found):\n{}",
            list.len(),
            list.join("\n")
        ));
    }
    s.note("done");
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
