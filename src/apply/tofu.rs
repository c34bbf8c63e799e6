//! OpenTofu commands, and step 3: the cloud root. `init`, `plan -out` into the private
//! directory (with every switch closed: a run that died with a switch open closes it here),
//! `show`, and `apply` of that saved plan only after confirmation or `--yes`.

use serde_json::{Value, json};

use super::ctx::Ctx;
use super::runner::Cmd;
use super::session::{Session, StepResult};
use super::target::ProviderTarget;
use super::work::display;
use crate::layout::names::{GATEWAY_IP_VAR, KUBERNETES_SWITCH_VAR, TALOS_SWITCH_VAR};
use crate::layout::paths::{self, CLOUD};

/// `tofu -chdir=<working copy>/tofu/<env>/<root> <args…>` with the credentials in its
/// environment: tofu never runs in out/ ([`super::work::tofu_copy_root`]).
pub fn tofu(ctx: &Ctx<'_>, root: &str, args: &[&str]) -> Cmd {
    let dir = ctx.tofu_copy.join(paths::tofu_root(&ctx.target.env, root));
    Cmd::new("tofu").arg(format!("-chdir={}", display(&dir))).args(args.iter().copied()).envs(&ctx.tofu_env())
}

pub fn var(name: &str, value: impl std::fmt::Display) -> String {
    format!("-var={name}={value}")
}

/// The switch variables at rest: none where the cloud root has no switch (Proxmox).
pub fn closed_vars(has_switches: bool) -> Vec<String> {
    if has_switches { vec![var(TALOS_SWITCH_VAR, false), var(KUBERNETES_SWITCH_VAR, false)] } else { Vec::new() }
}

/// The `-var`s every plan and apply of the cloud root takes besides the switches: on
/// Scaleway `gateway_ip_id`, the id of the reserved public gateway IP the root imports (R16).
/// fleet.kdl names the address (`gateway`), not the id, and the provider's data source finds
/// an IP by id only, so the id is looked up here, read-only, by that address:
/// `scw vpc-gw ip list zone=… project-id=… -o json`, the one entry whose `address` is
/// fleet.kdl's. None or several is a refusal before anything runs.
pub fn cloud_vars(s: &mut Session<'_>, ctx: &Ctx<'_>) -> StepResult<Vec<String>> {
    let ProviderTarget::Scaleway { project, zone, .. } = &ctx.target.provider else {
        return Ok(Vec::new());
    };
    let Some(address) = ctx.target.gateway.as_deref() else {
        return s.fail(format!(
            "environment `{}` has no `gateway`: its cloud root imports the reserved gateway IP (R13, R16)",
            ctx.target.env
        ));
    };
    let planned = json!([{"id": "<gateway-ip-id>", "address": address, "zone": zone}]).to_string();
    let out = s.run(
        Cmd::new("scw")
            .args(["vpc-gw", "ip", "list", &format!("zone={zone}"), &format!("project-id={project}"), "-o", "json"])
            .envs(&ctx.scw_env())
            .plan_stdout(planned),
    )?;
    match gateway_ip_id(&out.stdout, address, zone) {
        Ok(id) => {
            s.note(&format!("gateway IP {address} is {id}"));
            Ok(vec![var(GATEWAY_IP_VAR, id)])
        }
        Err(e) => s.fail(e),
    }
}

/// `<zone>/<id>` of the one IP of `list` (the CLI's JSON) whose address is `address`.
pub fn gateway_ip_id(list: &[u8], address: &str, zone: &str) -> Result<String, String> {
    let v: Value = serde_json::from_slice(list).map_err(|e| format!("`scw vpc-gw ip list` did not print JSON: {e}"))?;
    let found: Vec<&Value> = v
        .as_array()
        .map(|a| a.iter().filter(|ip| ip.get("address").and_then(Value::as_str) == Some(address)).collect())
        .unwrap_or_default();
    match found.as_slice() {
        [ip] => {
            let id =
                ip.get("id").and_then(Value::as_str).filter(|id| !id.is_empty()).ok_or("the gateway IP has no id")?;
            let z = ip.get("zone").and_then(Value::as_str).unwrap_or(zone);
            Ok(if id.contains('/') { id.to_owned() } else { format!("{z}/{id}") })
        }
        [] => Err(format!(
            "no public gateway IP with address {address} in zone {zone} of the project: reserve one (`scw vpc-gw ip create zone={zone}`) and set fleet.kdl's `gateway` to its address, which the Talos certificates carry (R16)"
        )),
        _ => Err(format!("several public gateway IPs have address {address}")),
    }
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
    // The same -vars as the plan: OpenTofu (>= 1.8) accepts them with a saved plan and refuses
    // any that differ from the planned values (opentofu v1.11.5
    // internal/backend/local/backend_local.go:280-285, internal/tofu/context_apply.go:252-341),
    // so the apply line says what it applies.
    let mut args = vec!["apply", "-input=false"];
    args.extend(extra.iter().map(String::as_str));
    let plan = display(&plan);
    args.push(&plan);
    s.run(tofu(ctx, root, &args))?;
    Ok(())
}

pub fn cloud(s: &mut Session<'_>, ctx: &Ctx<'_>) -> StepResult {
    init(s, ctx, CLOUD)?;
    let mut vars = ctx.cloud_vars.clone();
    vars.extend(closed_vars(ctx.target.provider.has_switches()));
    plan_show_apply(s, ctx, CLOUD, &vars, &format!("apply this plan to the cloud root of `{}`?", ctx.target.env))
}
