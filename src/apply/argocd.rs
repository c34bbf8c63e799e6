//! Step 7: Argo CD, for each cluster the roots built (F7, R23). Through the operator's path to
//! the Kubernetes API (opened for this step only): a kubeconfig from the node (`talosctl
//! kubeconfig`, into the private directory); Argo CD installed server-side from its vendored
//! manifest when its server deployment is absent, and its CRDs waited for; the repository
//! credential created from the sealed `argocd-repo` input (piped on stdin, never a file, never
//! logged); then the bootstrap documents of out/argocd/<env>/<cluster>/bootstrap applied
//! server-side in file order (argocd-cm, the admin project, the root application).

use serde_json::{Map, Value, json};

use super::Ctx;
use super::cluster::{self, talosctl};
use super::layout::{self, ARGOCD_REPO_INPUT};
use super::runner::Cmd;
use super::session::{Session, StepResult};
use super::switch::{self, Switch};
use super::target::ClusterTarget;
use super::work::display;

/// The name of the repository Secret fleetc creates in Argo CD's namespace.
pub const REPO_SECRET: &str = "fleet-repository";

pub fn bootstrap(s: &mut Session<'_>, ctx: &Ctx<'_>) -> StepResult {
    let Some(argo) = &ctx.target.argocd else {
        s.note("fleet.kdl pins no Argo CD: nothing to do");
        return Ok(());
    };
    let clusters: Vec<&ClusterTarget> = ctx
        .built_clusters()
        .filter(|c| ctx.out.paths().any(|p| p.starts_with(&layout::argocd_bootstrap_dir(&ctx.target.env, &c.name))))
        .collect();
    if clusters.is_empty() {
        s.note("out/ has no Argo CD bootstrap for this environment");
        return Ok(());
    }
    switch::with_switch(s, ctx, Switch::KubernetesApi, |s| {
        let inv = cluster::inventory(s, ctx)?;
        for c in &clusters {
            let nodes =
                inv.get(&c.name).ok_or_else(|| s.failure(format!("the inventory has no cluster `{}`", c.name)))?;
            let first = nodes
                .control_plane
                .first()
                .ok_or_else(|| s.failure(format!("cluster `{}` has no control-plane node", c.name)))?;
            let tc = display(&ctx.work.file(&format!("{}.talosconfig", c.name)));
            if !s.plan && !ctx.work.file(&format!("{}.talosconfig", c.name)).exists() {
                cluster::talosconfig(s, ctx, c)?;
            }
            let kubeconfig = display(&ctx.work.file(&format!("{}.kubeconfig", c.name)));
            s.run(talosctl(&tc, first).args(["kubeconfig", &kubeconfig, "--force"]))?;
            let kubectl = |args: &[&str]| {
                let mut cmd = Cmd::new("kubectl").args(["--kubeconfig", &kubeconfig]);
                if let Some(api) = &nodes.kubernetes_api {
                    cmd = cmd.arg(format!("--server=https://{api}"));
                }
                cmd.args(args.iter().copied())
            };
            let ns = argo.namespace.as_str();
            let present = s.run(
                kubectl(&["get", "deployment", "argocd-server", "-n", ns, "--ignore-not-found", "-o", "name"])
                    .plan_stdout(""),
            )?;
            if present.stdout_str().trim().is_empty() {
                s.note(&format!("Argo CD {} is absent: installing it from {}", argo.version, argo.manifest));
                let has_ns =
                    s.run(kubectl(&["get", "namespace", ns, "--ignore-not-found", "-o", "name"]).plan_stdout(""))?;
                if has_ns.stdout_str().trim().is_empty() {
                    s.run(kubectl(&["create", "namespace", ns]))?;
                }
                let manifest = display(&ctx.fleet_dir.join(&argo.manifest));
                s.run(kubectl(&["apply", "--server-side", "--force-conflicts", "-n", ns, "-f", &manifest]))?;
                s.run(kubectl(&[
                    "wait",
                    "--for=condition=Established",
                    "--timeout=5m",
                    "crd/applications.argoproj.io",
                    "crd/appprojects.argoproj.io",
                ]))?;
            } else {
                s.note(&format!("Argo CD is installed in `{ns}`: left as it is"));
            }
            if c.sealed.iter().any(|n| n == ARGOCD_REPO_INPUT) {
                let secret = repository_secret(s, ctx, c, ns)?;
                s.note(&format!(
                    "repository credential `{REPO_SECRET}` from the sealed `{ARGOCD_REPO_INPUT}` (stdin, not shown)"
                ));
                s.run(kubectl(&["apply", "--server-side", "-f", "-"]).stdin(secret.into_bytes()))?;
            } else {
                s.note(&format!("cluster `{}` lists no sealed `{ARGOCD_REPO_INPUT}`: Argo CD reads the repository without a credential", c.name));
            }
            let dir = layout::argocd_bootstrap_dir(&ctx.target.env, &c.name);
            let mut args = vec!["apply".to_owned(), "--server-side".to_owned()];
            for p in ctx.out.paths().filter(|p| p.starts_with(&format!("{dir}/"))) {
                args.push("-f".to_owned());
                args.push(display(&ctx.tofu_copy.join(p)));
            }
            s.run(kubectl(&args.iter().map(String::as_str).collect::<Vec<_>>()))?;
        }
        Ok(())
    })
}

/// The repository Secret: the sealed input is a YAML map of Argo CD's repository fields
/// (`username`/`password`, or `sshPrivateKey`, …); fleetc adds `url` and `type`.
fn repository_secret(s: &mut Session<'_>, ctx: &Ctx<'_>, c: &ClusterTarget, ns: &str) -> StepResult<String> {
    let mut data = Map::new();
    if let Some(plain) = ctx.sealed(&c.name, ARGOCD_REPO_INPUT) {
        let text =
            plain.as_str().ok_or_else(|| s.failure(format!("the sealed `{ARGOCD_REPO_INPUT}` is not UTF-8 text")))?;
        let fields: std::collections::BTreeMap<String, String> = serde_saphyr::from_str(text)
            .map_err(|_| s.failure(format!("the sealed `{ARGOCD_REPO_INPUT}` of `{}` is not a YAML map of strings (username, password, sshPrivateKey, …)", c.name)))?;
        for (k, v) in fields {
            data.insert(k, Value::String(v));
        }
    }
    let repo = ctx.target.gitops_repo.clone().unwrap_or_default();
    data.insert("url".into(), Value::String(repo));
    data.entry("type").or_insert(Value::String("git".into()));
    let secret = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": REPO_SECRET, "namespace": ns, "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": data,
    });
    Ok(secret.to_string())
}
