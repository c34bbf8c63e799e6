//! Step 7: Argo CD, for each cluster the roots built (F7, R23). Through the operator's path to
//! the Kubernetes API (opened for this step only), with the kubeconfig step 5 fetched while
//! the Talos API switch was open (on Scaleway the Talos endpoint is a gateway rule that exists
//! only while that switch is open, so it cannot be fetched here): Argo CD installed
//! server-side from its vendored manifest when its server deployment is absent (field manager
//! `fleetc-argocd-install`), and its CRDs waited for; the repository credential created from
//! the sealed `argocd-repo` input (piped on stdin, never a file, never logged); then the
//! bootstrap documents of out/argocd/<env>/<cluster>/bootstrap applied server-side in file
//! order (argocd-cm, the admin project, the root application) under fleetc's own field
//! manager, `fleetc`. Under server-side apply a manager that applies a configuration without a
//! field it owned removes that field unless another manager owns it too (Kubernetes docs,
//! "Server-Side Apply", field management); with the default manager (`kubectl`) for both, the
//! partial `argocd-cm` would have disowned — and deleted — the install's default keys
//! (`resource.exclusions`, `resource.customizations.ignoreResourceUpdates.*`). With two
//! managers, the install's keys stay the install's and fleetc owns only its own.
//! The bucket key of a cluster's backup job (`backup credentials=`, R28) is written the same
//! way, from its sealed input on stdin, as the Secret `talos-backup-s3` in the job's namespace
//! (created with it when Argo CD has not made it yet), before the root application delivers
//! the job.
//! The Scaleway API key a secret store of the build reads (R23, F11: the `ClusterSecretStore`
//! under `platform/` names a Secret in External Secrets Operator's namespace) is written the
//! same way from the sealed `scaleway-api-key`, its namespace with it, before the root
//! application delivers the store: without it the store never becomes Ready, the secrets
//! Application is Degraded, and the root stops at its wave.
//! Last, each ExternalSecret that copies a database password is marked with the
//! `password-version` that generated it (`force-sync`), so a rotation reaches the cluster's
//! Secret in this apply rather than at the next hourly refresh (R10).

use serde_json::{Map, Value, json};

use super::ctx::Ctx;
use super::inventory;
use super::nodes::{kubeconfig_file, kubectl};
use super::preflight::sealed_key_pair;
use super::session::{Session, StepResult};
use super::switch::{self, Switch};
use super::target::ClusterTarget;
use super::work::display;
use crate::layout::names::{ARGOCD_INSTALL_FIELD_MANAGER, ARGOCD_REPO_INPUT, FIELD_MANAGER, SCALEWAY_API_KEY_INPUT};
use crate::layout::paths;
use crate::model::backup;
use crate::upstream::talos_backup as tb;

/// The name of the repository Secret fleetc creates in Argo CD's namespace.
pub const REPO_SECRET: &str = "fleet-repository";

/// Step 7 on `clusters` (the clusters the roots build, none when fleet.kdl pins no Argo CD:
/// [`super::order`]).
pub fn bootstrap(s: &mut Session<'_>, ctx: &Ctx<'_>, clusters: &[&ClusterTarget]) -> StepResult {
    let Some(argo) = &ctx.target.argocd else {
        s.note("fleet.kdl pins no Argo CD: nothing to do");
        return Ok(());
    };
    let clusters: Vec<&ClusterTarget> = clusters
        .iter()
        .copied()
        .filter(|c| ctx.out.paths().any(|p| p.starts_with(&paths::argocd_bootstrap_dir(&ctx.target.env, &c.name))))
        .collect();
    if clusters.is_empty() {
        s.note("out/ has no Argo CD bootstrap for this environment");
        return Ok(());
    }
    switch::with_switch(s, ctx, Switch::KubernetesApi, |s| {
        let inv = inventory::read(s, ctx)?;
        for c in &clusters {
            let nodes =
                inv.get(&c.name).ok_or_else(|| s.failure(format!("the inventory has no cluster `{}`", c.name)))?;
            if !s.plan && !std::path::Path::new(&kubeconfig_file(ctx, c)).exists() {
                return s.fail(format!(
                    "no kubeconfig for `{}`: step 5 fetches it while the Talos API switch is open",
                    c.name
                ));
            }
            let kubectl = |args: &[&str]| kubectl(ctx, c, nodes, args);
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
                let manager = format!("--field-manager={ARGOCD_INSTALL_FIELD_MANAGER}");
                s.run(kubectl(&["apply", "--server-side", "--force-conflicts", &manager, "-n", ns, "-f", &manifest]))?;
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
                let manager = format!("--field-manager={FIELD_MANAGER}");
                s.run(kubectl(&["apply", "--server-side", &manager, "-f", "-"]).stdin(secret.into_bytes()))?;
            } else {
                s.note(&format!("cluster `{}` lists no sealed `{ARGOCD_REPO_INPUT}`: Argo CD reads the repository without a credential", c.name));
            }
            if let Some(input) = &c.backup_credentials {
                let manifest = backup_secret(s, ctx, c, input)?;
                s.note(&format!(
                    "the backup's bucket key as `{}/{}` from the sealed `{input}` (stdin, not shown; F11)",
                    backup::NAMESPACE,
                    backup::CREDENTIALS_SECRET
                ));
                let manager = format!("--field-manager={FIELD_MANAGER}");
                s.run(kubectl(&["apply", "--server-side", &manager, "-f", "-"]).stdin(manifest.into_bytes()))?;
            }
            for cred in store_credentials(ctx, c) {
                if !c.sealed.iter().any(|n| n == SCALEWAY_API_KEY_INPUT) {
                    return s.fail(format!(
                        "the secret store of `{}` reads `{}/{}`, which is written from the sealed `{SCALEWAY_API_KEY_INPUT}`, and the cluster lists no such input (`fleetc check` refuses this)",
                        c.name, cred.namespace, cred.name
                    ));
                }
                let (access, secret) = sealed_key_pair(s, ctx, &c.name, SCALEWAY_API_KEY_INPUT)?;
                s.note(&format!(
                    "the secret store's Scaleway API key as `{}/{}` from the sealed `{SCALEWAY_API_KEY_INPUT}` (stdin, not shown; F11)",
                    cred.namespace, cred.name
                ));
                let manifest = namespaced_secret(
                    &cred.namespace,
                    &cred.name,
                    [(cred.access_key.as_str(), access), (cred.secret_key.as_str(), secret)],
                );
                let manager = format!("--field-manager={FIELD_MANAGER}");
                s.run(kubectl(&["apply", "--server-side", &manager, "-f", "-"]).stdin(manifest.into_bytes()))?;
            }
            let dir = paths::argocd_bootstrap_dir(&ctx.target.env, &c.name);
            let mut args =
                vec!["apply".to_owned(), "--server-side".to_owned(), format!("--field-manager={FIELD_MANAGER}")];
            for p in ctx.out.paths().filter(|p| p.starts_with(&format!("{dir}/"))) {
                args.push("-f".to_owned());
                args.push(display(&ctx.tofu_copy.join(p)));
            }
            s.run(kubectl(&args.iter().map(String::as_str).collect::<Vec<_>>()))?;
            for (ns, name, version) in external_secrets(ctx, c) {
                // ESO refreshes an ExternalSecret whose annotations changed (its `force-sync`
                // recipe); the value is the version, so an unchanged version changes nothing.
                let mark = format!("force-sync=password-version-{version}");
                let out =
                    s.try_run(kubectl(&["annotate", "externalsecret", &name, "-n", &ns, &mark, "--overwrite"]))?;
                if !out.success() {
                    s.note(&format!(
                        "ExternalSecret {ns}/{name} is not there yet (Argo CD has not synced it): its first sync reads the newest password"
                    ));
                }
            }
        }
        Ok(())
    })
}

/// The backup job's namespace and the Secret of its bucket key (`AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, the variables talos-backup's AWS SDK reads:
/// `upstream::talos_backup`), from the sealed input `input`, a YAML map with `access_key` and
/// `secret_key` (as `scaleway-api-key`).
fn backup_secret(s: &mut Session<'_>, ctx: &Ctx<'_>, c: &ClusterTarget, input: &str) -> StepResult<String> {
    let (access, secret) = sealed_key_pair(s, ctx, &c.name, input)?;
    Ok(namespaced_secret(
        backup::NAMESPACE,
        backup::CREDENTIALS_SECRET,
        [(tb::ENV_ACCESS_KEY, access), (tb::ENV_SECRET_KEY, secret)],
    ))
}

/// A Secret with its namespace, as one `v1` List applied server-side (the namespace is
/// created with it when Argo CD has not made it yet).
fn namespaced_secret<'k>(ns: &str, name: &str, data: impl IntoIterator<Item = (&'k str, String)>) -> String {
    let data: Map<String, Value> = data.into_iter().map(|(k, v)| (k.to_owned(), Value::String(v))).collect();
    json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "namespace": ns},
                "type": "Opaque",
                "stringData": data,
            },
        ],
    })
    .to_string()
}

/// The Secret a secret store of the build reads its Scaleway API key from: where, and under
/// which keys. Read from the `ClusterSecretStore`s under `out/argocd/<env>/<cluster>/`, so the
/// Secret apply writes is, by construction, the one the store names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct StoreCredential {
    pub namespace: String,
    pub name: String,
    pub access_key: String,
    pub secret_key: String,
}

/// The credentials of the build's Scaleway secret stores for cluster `c` (none when no app of
/// the cluster reads a password).
pub fn store_credentials(ctx: &Ctx<'_>, c: &ClusterTarget) -> Vec<StoreCredential> {
    let mut out: Vec<StoreCredential> = argocd_docs(ctx, c)
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some("ClusterSecretStore"))
        .filter_map(|d| {
            let scw = d.pointer("/spec/provider/scaleway")?;
            let field = |key: &str, f: &str| scw.pointer(&format!("/{key}/secretRef/{f}")).and_then(Value::as_str);
            let (ns, name) = (field("accessKey", "namespace")?, field("accessKey", "name")?);
            // Both keys in one Secret: the only shape fleetc writes (emit::argocd::secrets).
            if field("secretKey", "namespace") != Some(ns) || field("secretKey", "name") != Some(name) {
                return None;
            }
            Some(StoreCredential {
                namespace: ns.to_owned(),
                name: name.to_owned(),
                access_key: field("accessKey", "key")?.to_owned(),
                secret_key: field("secretKey", "key")?.to_owned(),
            })
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Every YAML document of the build under `out/argocd/<env>/<cluster>/`.
fn argocd_docs(ctx: &Ctx<'_>, c: &ClusterTarget) -> impl Iterator<Item = Value> {
    let dir = format!("{}/", paths::argocd_dir(&ctx.target.env, &c.name));
    let texts: Vec<String> = ctx
        .out
        .paths()
        .filter(|p| p.starts_with(&dir) && p.ends_with(".yaml"))
        .map(|p| String::from_utf8_lossy(ctx.out.get(p).unwrap_or_default()).into_owned())
        .collect();
    texts.into_iter().flat_map(|t| serde_saphyr::from_multiple::<Value>(&t).unwrap_or_default())
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

/// The ExternalSecrets of the build, under `out/argocd/<env>/<cluster>/`, that read a database
/// password (their `remoteRef.key` is `name:<Secret Manager secret>`, the name
/// [`crate::model::Postgres::password_secret`] gives both families): `(namespace, name,
/// password-version)`.
pub fn external_secrets(ctx: &Ctx<'_>, c: &ClusterTarget) -> Vec<(String, String, u32)> {
    let mut out = Vec::new();
    for d in argocd_docs(ctx, c).filter(|d| d.get("kind").and_then(Value::as_str) == Some("ExternalSecret")) {
        let keys: Vec<&str> = d
            .pointer("/spec/data")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|x| x.pointer("/remoteRef/key").and_then(Value::as_str)).collect())
            .unwrap_or_default();
        let Some(db) = c.database_secrets.iter().find(|db| keys.contains(&format!("name:{}", db.secret).as_str()))
        else {
            continue;
        };
        let ns = d.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("default").to_owned();
        let name = d.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_owned();
        out.push((ns, name, db.password_version));
    }
    out.sort();
    out.dedup();
    out
}
