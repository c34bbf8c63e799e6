//! `platform/`: application secrets the GitOps way (R10 → R23). The cloud root writes each
//! postgres password to Scaleway Secret Manager as `<fleet>-<env>-<name>-postgres-password`
//! (`Postgres::password_secret`); External
//! Secrets Operator reads it through one ClusterSecretStore and writes a Secret
//! `postgres-<name>` (key `password`) in the namespace of every app that declares
//! `postgres "<name>"`. The store's own credential is a Secret that the apply step creates
//! from a sealed input: it is never in out/ (F11).

use std::collections::{BTreeMap, BTreeSet};

use super::objects::{
    ClusterSecretStore, ESO_API, ExternalSecret, ExternalSecretSpec, Meta, Namespace, Object, RemoteRef,
    ScalewayProvider, SecretData, SecretKeySelector, SecretStoreSpec, SecretValue, StoreCondition, StoreProvider,
    StoreRef, Target,
};
use super::{dir, write};
use crate::artifacts::set::ArtifactSet;
use crate::emit::EmitError;
use crate::model::gitops;
use crate::model::{Cluster, Environment, Fleet, Provider};

/// The ClusterSecretStore, and the Secret (in External Secrets Operator's namespace) that
/// holds its API key: keys `access-key` and `secret-key`, created at apply time.
pub(crate) const STORE: &str = "scaleway-secret-manager";
pub(crate) const CREDENTIAL_SECRET: &str = "scaleway-secret-manager";
/// External Secrets Operator's namespace when no app of the cluster installs it.
const ESO_NAMESPACE: &str = "external-secrets";
/// The Scaleway provider's version selector for the newest enabled version: a rotation
/// (R10) adds a version, and the next refresh picks it up.
const LATEST: &str = "latest_enabled";

/// Namespaces of the apps that read a postgres password.
pub(crate) fn consumer_namespaces(c: &Cluster) -> BTreeSet<String> {
    c.apps.iter().filter(|a| !a.postgres.is_empty()).map(|a| a.namespace.value.clone()).collect()
}

pub(super) fn emit(fleet: &Fleet, env: &Environment, c: &Cluster, out: &mut ArtifactSet) -> Result<(), EmitError> {
    let Provider::Scaleway(scw) = &env.provider else { return Ok(()) };
    let base = format!("{}/platform", dir(env, c));
    let eso_namespace = gitops::eso_app(c).map_or(ESO_NAMESPACE, |a| a.namespace.value.as_str());
    let consumers = consumer_namespaces(c);
    let key = |k: &str| SecretValue {
        secret_ref: SecretKeySelector {
            name: CREDENTIAL_SECRET.to_owned(),
            namespace: eso_namespace.to_owned(),
            key: k.to_owned(),
        },
    };
    let store = ClusterSecretStore {
        api_version: ESO_API,
        kind: "ClusterSecretStore",
        metadata: Meta::new(STORE, None),
        spec: SecretStoreSpec {
            provider: StoreProvider {
                scaleway: ScalewayProvider {
                    region: scw.region.value.clone(),
                    project_id: scw.project.value.clone(),
                    access_key: key("access-key"),
                    secret_key: key("secret-key"),
                },
            },
            conditions: vec![StoreCondition { namespaces: consumers.iter().cloned().collect() }],
        },
    };
    write(out, format!("{base}/secret-store.yaml"), &[Object::ClusterSecretStore(store)])?;

    // (namespace → postgres names), de-duplicated.
    let mut wanted: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for a in &c.apps {
        for p in &a.postgres {
            wanted.entry(a.namespace.value.as_str()).or_default().insert(p.value.as_str());
        }
    }
    for (ns, names) in wanted {
        // The app that uses the namespace creates it too (CreateNamespace=true); this copy
        // exists so that the secret can land before the app, and is never pruned or deleted.
        // `Prune=false` keeps it when it leaves the build; `Delete=false` keeps it when
        // `fleet-secrets` itself is deleted: a cascade deletion spares only CRDs, `Delete=false`
        // and Helm's `resource-policy: keep` (argo-cd v3.2.1 `controller/appcontroller.go`
        // l.1166-1170, `shouldBeDeleted`), and with the namespace would go every object of the
        // app that runs in it.
        let mut ns_meta = Meta::new(ns, None);
        ns_meta.annotations.insert("argocd.argoproj.io/sync-options".to_owned(), "Prune=false,Delete=false".to_owned());
        let mut docs = vec![Object::Namespace(Namespace { api_version: "v1", kind: "Namespace", metadata: ns_meta })];
        for name in names {
            let Some(pg) = env.postgres.iter().find(|p| p.name.value == name) else {
                return Err(EmitError(format!("no postgres `{name}` (check refuses this)")));
            };
            let secret = format!("postgres-{name}");
            docs.push(Object::ExternalSecret(ExternalSecret {
                api_version: ESO_API,
                kind: "ExternalSecret",
                metadata: Meta::new(secret.clone(), Some(ns)),
                spec: ExternalSecretSpec {
                    refresh_interval: "1h".to_owned(),
                    secret_store_ref: StoreRef { kind: "ClusterSecretStore", name: STORE.to_owned() },
                    target: Target { name: secret, creation_policy: "Owner", deletion_policy: "Retain" },
                    data: vec![SecretData {
                        secret_key: "password".to_owned(),
                        remote_ref: RemoteRef {
                            key: format!("name:{}", pg.password_secret(&fleet.resource_prefix(env))),
                            version: LATEST.to_owned(),
                            conversion_strategy: "Default",
                            decoding_strategy: "None",
                            metadata_policy: "None",
                        },
                    }],
                },
            }));
        }
        write(out, format!("{base}/{ns}.yaml"), &docs)?;
    }
    Ok(())
}
