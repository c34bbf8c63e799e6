//! The switches of the cloud root (R13): the Talos API switch (the gateway's SSH bastion,
//! admin ranges only, and the tunnel through it to each node's port 50000, `tunnel.rs`) and
//! the operator's path to the Kubernetes API. Both are off
//! at rest. [`with_switch`] opens one, runs the body, and closes it on every exit path: after
//! success, after a failure of the body or of the opening itself (which may have opened part
//! of it), after a panic (caught, the switch closed, the panic resumed), after a SIGINT,
//! SIGTERM or SIGHUP (the running tool gets it, then the body fails: [`super::signals`]),
//! and after a command that hangs (every command between the opening and the closing has a
//! deadline, [`super::runner::DEADLINE_VAR`]).

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use super::ctx::Ctx;
use super::session::{Failure, Session, Step, StepResult};
use super::tofu::{tofu, var};
use crate::layout::names::{KUBERNETES_SWITCH_VAR, TALOS_SWITCH_VAR};
use crate::layout::paths::{self, CLOUD};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    TalosApi,
    KubernetesApi,
    /// Both, for `upgrade` (talosctl and kubectl).
    Both,
}

impl Switch {
    fn talos(self) -> bool {
        matches!(self, Switch::TalosApi | Switch::Both)
    }
    fn kubernetes(self) -> bool {
        matches!(self, Switch::KubernetesApi | Switch::Both)
    }
}

fn set(s: &mut Session<'_>, ctx: &Ctx<'_>, which: Switch, open: bool) -> StepResult {
    if !ctx.target.provider.has_switches() {
        // No gateway in front of the nodes on this provider (Proxmox): the cloud root has no
        // switch variable, and there is nothing to open or close.
        if which != Switch::KubernetesApi {
            s.note("no switch on this provider: the nodes are reached on the operator's network directly");
        }
        return Ok(());
    }
    let mut args = vec!["apply".to_owned(), "-input=false".to_owned(), "-auto-approve".to_owned()];
    args.extend(ctx.cloud_vars.iter().cloned());
    args.push(var(TALOS_SWITCH_VAR, open && which.talos()));
    args.push(var(KUBERNETES_SWITCH_VAR, open && which.kubernetes()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let cmd = tofu(ctx, CLOUD, &args);
    // Closing is cleanup: it still runs after a signal, and is not interrupted by another.
    s.run(if open { cmd } else { cmd.cleanup() })?;
    Ok(())
}

/// Opens `which`, runs `body`, closes `which` whatever happened.
pub fn with_switch<T>(
    s: &mut Session<'_>,
    ctx: &Ctx<'_>,
    which: Switch,
    body: impl FnOnce(&mut Session<'_>) -> StepResult<T>,
) -> StepResult<T> {
    let (open_step, close_step) = match which {
        Switch::TalosApi | Switch::Both => (Some(Step::OpenSwitch), Some(Step::CloseSwitch)),
        Switch::KubernetesApi => (None, None),
    };
    let outer = s.step;
    // From the opening command to the closing one, every command has a deadline.
    let outer_window = std::mem::replace(&mut s.window, true);
    if let Some(st) = open_step {
        s.begin(st);
    } else {
        s.note("opening the operator's path to the Kubernetes API");
    }
    let mut tunnel = None;
    let result = catch_unwind(AssertUnwindSafe(|| {
        set(s, ctx, which, true)?;
        if which.talos() && ctx.target.provider.has_switches() {
            // R13: the switch enabled the gateway's SSH bastion; each node's port 50000 is
            // reached through it, from the operator's machine only (`tunnel.rs`).
            let inv = super::inventory::read(s, ctx)?;
            super::tunnel::open(s, ctx, &inv, &mut tunnel)?;
        }
        if open_step.is_none() {
            s.step = outer;
        }
        body(s)
    }));
    if let Some(st) = close_step {
        s.begin(st);
    } else {
        s.note("closing the operator's path to the Kubernetes API");
    }
    let tunnel_closed = tunnel.as_ref().map_or(Ok(()), |t| super::tunnel::close(s, ctx, t));
    let closed = set(s, ctx, which, false);
    s.window = outer_window;
    if close_step.is_none() {
        s.step = outer;
    }
    let closed = closed.map_err(|c| Failure {
        step: c.step,
        message: format!(
            "{}; the {} may still be open: close it by hand with `tofu -chdir={} apply {} -var={TALOS_SWITCH_VAR}=false -var={KUBERNETES_SWITCH_VAR}=false` (the credentials in its environment, docs/apply.md)",
            c.message,
            if which == Switch::KubernetesApi { "operator's path to the Kubernetes API" } else { "Talos API switch" },
            super::work::display(&ctx.tofu_copy.join(paths::tofu_root(&ctx.target.env, CLOUD))),
            ctx.cloud_vars.join(" "),
        ),
    });
    // The switch closed, which ends the tunnel (the bastion is disabled): a tunnel whose ssh
    // could not be told to exit is reported, not left unsaid.
    let closed = closed.and_then(|()| {
        tunnel_closed.map_err(|f| Failure {
            step: f.step,
            message: format!("closing the Talos API tunnel: {}; the switch is closed, which ends it", f.message),
        })
    });
    match result {
        Err(panic) => resume_unwind(panic),
        Ok(Ok(v)) => closed.map(|()| v),
        Ok(Err(e)) => match closed {
            Ok(()) => {
                s.note("the switch is closed");
                Err(e)
            }
            Err(c) => Err(Failure {
                step: e.step,
                message: format!(
                    "{}; closing the switch failed too ({}); close it before anything else",
                    e.message, c.message
                ),
            }),
        },
    }
}
