//! OpenTofu commands, and step 3: the cloud root. `init`, `plan -out` into the private
//! directory (with every switch closed: a run that died with a switch open closes it here),
//! `show`, and `apply` of that saved plan only after confirmation or `--yes`.

use super::Ctx;
use super::layout::{self, KUBERNETES_SWITCH_VAR, TALOS_SWITCH_VAR};
use super::runner::Cmd;
use super::session::{Session, StepResult};
use super::work::display;

/// `tofu -chdir=<out>/tofu/<env>/<root> <args…>` with the credentials in its environment.
pub fn tofu(ctx: &Ctx<'_>, root: &str, args: &[&str]) -> Cmd {
    let dir = ctx.out_dir.join(layout::tofu_root(&ctx.target.env, root));
    Cmd::new("tofu").arg(format!("-chdir={}", display(&dir))).args(args.iter().copied()).envs(&ctx.tofu_env())
}

pub fn var(name: &str, value: impl std::fmt::Display) -> String {
    format!("-var={name}={value}")
}

/// The switch variables at rest.
pub fn closed_vars(has_kubernetes_switch: bool) -> Vec<String> {
    let mut v = vec![var(TALOS_SWITCH_VAR, false)];
    if has_kubernetes_switch {
        v.push(var(KUBERNETES_SWITCH_VAR, false));
    }
    v
}

/// Whether the environment's cloud root has the operator's path to the Kubernetes API.
pub fn has_kubernetes_switch(ctx: &Ctx<'_>) -> bool {
    matches!(ctx.target.provider, super::target::ProviderTarget::Scaleway { .. })
}

pub fn init(s: &mut Session<'_>, ctx: &Ctx<'_>, root: &str) -> StepResult {
    s.run(tofu(ctx, root, &["init", "-input=false"]))?;
    Ok(())
}

/// `plan -out`, `show`, confirmation, `apply` of the saved plan.
pub fn plan_show_apply(s: &mut Session<'_>, ctx: &Ctx<'_>, root: &str, extra: &[String], question: &str) -> StepResult {
    let plan = ctx.work.file(&format!("{root}.tfplan"));
    let out = format!("-out={}", display(&plan));
    let mut args = vec!["plan", "-input=false", out.as_str()];
    args.extend(extra.iter().map(String::as_str));
    s.run(tofu(ctx, root, &args))?;
    s.run(tofu(ctx, root, &["show", &display(&plan)]))?;
    s.confirm(question)?;
    s.run(tofu(ctx, root, &["apply", "-input=false", &display(&plan)]))?;
    Ok(())
}

pub fn cloud(s: &mut Session<'_>, ctx: &Ctx<'_>) -> StepResult {
    init(s, ctx, layout::CLOUD)?;
    let vars = closed_vars(has_kubernetes_switch(ctx));
    plan_show_apply(
        s,
        ctx,
        layout::CLOUD,
        &vars,
        &format!("apply this plan to the cloud root of `{}`?", ctx.target.env),
    )
}
