//! Step 0, the preflight of `apply` and `upgrade`: everything that can be checked before
//! anything runs (a stale out/, the operator's environment, a `reboot` mode Talos no longer
//! has, missing credentials or sealed inputs), all refusals reported at once; then the run
//! prepared: the private directory, the decrypted sealed inputs, the working copy of the
//! roots and the cloud root's `-var`s, in a [`Ctx`].

use std::collections::BTreeMap;
use std::path::Path;

use super::ctx::{Ctx, Inputs};
use super::env;
use super::session::{Session, Step, StepResult};
use super::target::{self, ClusterTarget};
use super::tofu;
use super::work::{self, Work};
use crate::layout::names::{SCALEWAY_API_KEY_INPUT, STAND_IN_MARKER, TALOS_SECRETS_INPUT};
use crate::model::{ApplyMode, Version};
use crate::secrets::{self, Identity};

/// The first Talos release without the `reboot` apply mode (F10).
pub const TALOS_WITHOUT_REBOOT_MODE: Version = Version::new(1, 14, 0);

/// Checks everything that can be checked before anything runs, and prepares the run. Every
/// refusal is collected first and reported at once, each with its cause first (issue 15):
/// one run tells the operator everything that stops it.
///
/// `--plan` runs nothing, so what only a real run refuses (a steering variable of the shell,
/// a stand-in manifest) does not stop it: each is noted where it is found, listed again at
/// the end of the plan ([`Ctx::plan_refusals`]), and the plan goes on (issue 28).
/// `stand_ins` is `Some(allowed)` for a command that installs vendored manifests (`apply`).
#[allow(clippy::too_many_arguments)]
pub fn preflight<'a>(
    s: &mut Session<'_>,
    inp: &Inputs<'a>,
    mode: Option<ApplyMode>,
    identity: Option<&Path>,
    clusters: &[String],
    tools: &env::ToolPath,
    stand_ins: Option<bool>,
) -> StepResult<Ctx<'a>> {
    s.begin(Step::Preflight);
    let mut refusals: Vec<String> = Vec::new();
    let mut plan_refusals: Vec<String> = Vec::new();
    let mut refuse_unless_plan = |s: &mut Session<'_>, why: String, refusals: &mut Vec<String>| {
        if s.plan {
            s.note(&format!("apply refuses: {why}"));
            plan_refusals.push(why);
        } else {
            refusals.push(why);
        }
    };
    if let Err(e) = env::refuse_steering_vars(inp.env) {
        refuse_unless_plan(s, e, &mut refusals);
    }
    if let Some(m) = &tools.provider_mirror
        && let Some(why) = env::mirror_problem(m, &std::env::current_dir().unwrap_or_default())
    {
        refusals.push(why);
    }
    if let Some(ca) = &tools.ca_bundle
        && !ca.is_file()
    {
        refusals.push(format!("--ca-bundle {}: no such file", ca.display()));
    }
    if let (Some(allowed), Some(argo)) = (stand_ins, &inp.target.argocd) {
        let text = std::fs::read_to_string(inp.fleet_dir.join(&argo.manifest)).unwrap_or_default();
        if text.starts_with(STAND_IN_MARKER) {
            let what = format!(
                "{} is the stand-in `fleetc init` wrote, not Argo CD {}'s install manifest: it holds one ConfigMap and no CRD, so a cluster without Argo CD would wait for `applications.argoproj.io` in vain",
                argo.manifest, argo.version
            );
            if allowed {
                s.note(&format!(
                    "stand-in allowed (--allow-stand-ins): {what}; it is installed only where Argo CD is absent"
                ));
            } else {
                refuse_unless_plan(
                    s,
                    format!(
                        "{what}. Replace it with the real manifest (its first lines say how) and pin its sha256 in fleet.kdl, or pass `--allow-stand-ins` for a lab whose clusters run Argo CD already"
                    ),
                    &mut refusals,
                );
            }
        }
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
    let creds = match env::credentials(inp.env, target.provider.name(), s.plan) {
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
        tools: Vec::new(),
        plan_refusals,
    };
    tool_path(s, &mut ctx, tools)?;
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

/// What the operator declared for tofu's network path ([`env::ToolPath`]), as the variables
/// tofu reads: the CLI config naming the one provider mirror (written into the private
/// directory), the CA bundle for the S3 backend's SDK and Go's TLS.
fn tool_path(s: &mut Session<'_>, ctx: &mut Ctx<'_>, tools: &env::ToolPath) -> StepResult {
    if let Some(m) = &tools.provider_mirror {
        let base = std::env::current_dir().unwrap_or_default();
        let config = env::tofu_cli_config(m, &base);
        let file = ctx
            .work
            .write("tofu-cli.tfrc", config.as_bytes())
            .map_err(|e| s.failure(format!("cannot write a private file: {e}")))?;
        ctx.tools.push(("TF_CLI_CONFIG_FILE".to_owned(), work::display(&file)));
        s.note(&format!(
            "tofu installs providers from {m} only (--provider-mirror): {} holds\n{config}",
            work::display(&file)
        ));
    }
    if let Some(ca) = &tools.ca_bundle {
        let abs = std::path::absolute(ca).unwrap_or_else(|_| ca.clone());
        let shown = abs.display().to_string();
        ctx.tools.push(("AWS_CA_BUNDLE".to_owned(), shown.clone()));
        ctx.tools.push(("SSL_CERT_FILE".to_owned(), shown));
    }
    Ok(())
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
                scaleway_key(plain.as_str().unwrap_or_default())
                    .map_err(|e| s.failure(format!("the sealed `{name}` of `{}` {e}", c.name)))?;
            }
            ctx.sealed.insert((c.name.clone(), name.clone()), plain);
        }
    }
    s.note(&format!("{} sealed inputs decrypted into memory and a private directory", ctx.sealed.len()));
    Ok(())
}

/// The sealed `scaleway-api-key`: a YAML map with `access_key` and `secret_key`.
pub fn scaleway_key(text: &str) -> Result<(String, String), String> {
    let map: BTreeMap<String, String> =
        serde_saphyr::from_str(text).map_err(|_| "is not a YAML map with `access_key` and `secret_key`".to_owned())?;
    match (map.get("access_key"), map.get("secret_key")) {
        (Some(a), Some(k)) if !a.is_empty() && !k.is_empty() => Ok((a.clone(), k.clone())),
        _ => Err("lacks `access_key` or `secret_key`".to_owned()),
    }
}

/// The access and secret key of cluster `cluster`'s sealed `input` (a YAML map as
/// `scaleway-api-key`), masked in everything the session prints; placeholders under `--plan`,
/// where nothing is decrypted.
pub fn sealed_key_pair(s: &mut Session<'_>, ctx: &Ctx<'_>, cluster: &str, input: &str) -> StepResult<(String, String)> {
    let (access, secret) = match ctx.sealed(cluster, input) {
        None => ("<sealed access_key>".to_owned(), "<sealed secret_key>".to_owned()),
        Some(plain) => scaleway_key(plain.as_str().unwrap_or_default())
            .map_err(|e| s.failure(format!("the sealed `{input}` of `{cluster}` {e}")))?,
    };
    if !s.plan {
        s.secret(&access);
        s.secret(&secret);
    }
    Ok((access, secret))
}

/// The start of a command on one running cluster that fleetc built (`upgrade`, `restore`):
/// the cluster, refused when the environment has none of that name or when Cluster API
/// manages it (`managed` says what to do instead), then the command's own check of it
/// (`first`, before anything runs), then [`preflight`] for it alone.
pub fn one_cluster<'a, R>(
    s: &mut Session<'_>,
    inp: &Inputs<'a>,
    name: &str,
    identity: Option<&Path>,
    managed: &str,
    first: impl FnOnce(&super::target::ClusterTarget) -> Result<R, String>,
) -> StepResult<(&'a super::target::ClusterTarget, R, Ctx<'a>)> {
    let Some(c) = inp.target.clusters.iter().find(|c| c.name == name) else {
        s.begin(Step::Preflight);
        return s.fail(format!("environment `{}` has no cluster `{name}`", inp.target.env));
    };
    if c.managed {
        s.begin(Step::Preflight);
        return s.fail(format!("cluster `{name}` is managed by Cluster API: {managed} (R26)"));
    }
    let checked = first(c).map_err(|e| {
        s.begin(Step::Preflight);
        s.failure(e)
    })?;
    let ctx = preflight(s, inp, None, identity, std::slice::from_ref(&c.name), &env::ToolPath::default(), None)?;
    Ok((c, checked, ctx))
}
