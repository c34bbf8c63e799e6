//! `backup/`: the cluster's scheduled etcd snapshots (R28), delivered by the Application
//! `fleet-backup` in project `<cluster>-backup`: the namespace, a Kubernetes ServiceAccount
//! with no API token (the job never calls the Kubernetes API, so it has no Role), the
//! talos.dev ServiceAccount that asks Talos for a talosconfig with the `os:etcd:backup` role
//! (Talos writes it as the Secret of the same name, key `config`: siderolabs/talos v1.13.9
//! `internal/app/machined/pkg/controllers/kubeaccess/serviceaccount/crd_controller.go`
//! l.382-395, l.604-620), and the CronJob that runs talos-backup with it
//! (`upstream::talos_backup`). The namespace, account and role are
//! `model::backup::TalosApiAccess::of`, the same the control plane's
//! `kubernetesTalosAPIAccess` allows. The bucket's key is the Secret
//! `model::backup::CREDENTIALS_SECRET`, which `fleetc apply` writes from the sealed input.

use std::collections::BTreeMap;

use super::objects::{
    Capabilities, Container, ContainerSecurity, CronJob, CronJobSpec, Env, EnvSource, JobSpec, JobTemplate, KeyRef,
    Meta, Namespace, Object, PodSecurity, PodSpec, PodTemplate, Seccomp, SecretVolume, ServiceAccount,
    TalosServiceAccount, TalosServiceAccountSpec, Volume, VolumeMount,
};
use super::{dir, write};
use crate::artifacts::set::ArtifactSet;
use crate::emit::EmitError;
use crate::model::backup::{Backup, CREDENTIALS_SECRET, TalosApiAccess};
use crate::model::{Cluster, Environment};
use crate::upstream::talos_backup as tb;

/// The name of the CronJob, of its container, and of the talos.dev Secret's volume.
const JOB: &str = "talos-backup";
/// The user the job runs as (talos-backup's `cronjob.sample.yaml`): the image is `scratch`
/// with no user of its own.
const USER: i64 = 1000;

/// The namespaced kinds `backup/` holds, `(group, kind)`: the project permits exactly these.
pub(crate) const KINDS: [(&str, &str); 3] =
    [("", "ServiceAccount"), ("batch", "CronJob"), ("talos.dev", "ServiceAccount")];

fn plain(name: &'static str, value: impl Into<String>) -> Env {
    Env { name, value: Some(value.into()), value_from: None }
}

fn secret(name: &'static str, key: &'static str) -> Env {
    Env { name, value: None, value_from: Some(EnvSource { secret_key_ref: KeyRef { name: CREDENTIALS_SECRET, key } }) }
}

/// The talos-backup environment of cluster `c`: where the snapshots go, the age recipient
/// they are encrypted to (the environment's first: talos-backup takes one), the cluster's
/// name (the talosconfig Talos writes names its context `default`, which talos-backup would
/// use otherwise), and the key from [`CREDENTIALS_SECRET`].
fn env_vars(env: &Environment, c: &Cluster, b: &Backup) -> Result<Vec<Env>, EmitError> {
    let recipient = env
        .recipients
        .first()
        .ok_or_else(|| EmitError(format!("environment `{}` has no recipient (check refuses this)", env.name.value)))?;
    let mut vars = vec![
        plain(tb::ENV_CLUSTER_NAME, c.name.value.clone()),
        plain(tb::ENV_BUCKET, b.bucket.value.clone()),
        plain(tb::ENV_REGION, b.region.value.clone()),
    ];
    if let Some(e) = &b.endpoint {
        vars.push(plain(tb::ENV_ENDPOINT, e.value.clone()));
    }
    if b.path_style.as_ref().is_some_and(|p| p.value) {
        vars.push(plain(tb::ENV_PATH_STYLE, tb::PATH_STYLE_ON));
    }
    vars.push(plain(tb::ENV_PREFIX, b.prefix_for(c)));
    vars.push(plain(tb::ENV_AGE_RECIPIENT, recipient.value.clone()));
    vars.push(secret(tb::ENV_ACCESS_KEY, tb::ENV_ACCESS_KEY));
    vars.push(secret(tb::ENV_SECRET_KEY, tb::ENV_SECRET_KEY));
    Ok(vars)
}

/// Writes `backup/talos-backup.yaml` of cluster `c` (which has a `backup`).
pub(super) fn emit(env: &Environment, c: &Cluster, out: &mut ArtifactSet) -> Result<(), EmitError> {
    let (Some(b), Some(access)) = (&c.backup, TalosApiAccess::of(c)) else { return Ok(()) };
    let ns = access.namespace;
    let namespace = Namespace { api_version: "v1", kind: "Namespace", metadata: Meta::new(ns, None) };
    let account = ServiceAccount {
        api_version: "v1",
        kind: "ServiceAccount",
        metadata: Meta::new(access.service_account, Some(ns)),
        automount_service_account_token: false,
    };
    let talos_account = TalosServiceAccount {
        api_version: "talos.dev/v1alpha1",
        kind: "ServiceAccount",
        metadata: Meta::new(access.service_account, Some(ns)),
        spec: TalosServiceAccountSpec { roles: access.roles.iter().map(|r| (*r).to_owned()).collect() },
    };
    let job = CronJob {
        api_version: "batch/v1",
        kind: "CronJob",
        metadata: Meta::new(JOB, Some(ns)),
        spec: CronJobSpec {
            schedule: b.schedule.value.clone(),
            concurrency_policy: "Forbid",
            job_template: JobTemplate {
                spec: JobSpec {
                    backoff_limit: 3,
                    template: PodTemplate {
                        spec: PodSpec {
                            service_account_name: access.service_account.to_owned(),
                            automount_service_account_token: false,
                            restart_policy: "OnFailure",
                            security_context: PodSecurity {
                                run_as_non_root: true,
                                run_as_user: USER,
                                run_as_group: USER,
                                seccomp_profile: Seccomp { kind: "RuntimeDefault" },
                            },
                            containers: vec![Container {
                                name: JOB,
                                image: tb::image(),
                                command: vec!["/talos-backup"],
                                working_dir: "/tmp",
                                env: env_vars(env, c, b)?,
                                security_context: ContainerSecurity {
                                    allow_privilege_escalation: false,
                                    read_only_root_filesystem: true,
                                    capabilities: Capabilities { drop: vec!["ALL"] },
                                },
                                volume_mounts: vec![
                                    VolumeMount { name: "tmp", mount_path: "/tmp", read_only: false },
                                    VolumeMount { name: "talos", mount_path: tb::TALOS_SECRETS_MOUNT, read_only: true },
                                ],
                            }],
                            volumes: vec![
                                Volume { name: "tmp", empty_dir: Some(BTreeMap::new()), secret: None },
                                Volume {
                                    name: "talos",
                                    empty_dir: None,
                                    secret: Some(SecretVolume { secret_name: access.service_account.to_owned() }),
                                },
                            ],
                        },
                    },
                },
            },
        },
    };
    let docs = [
        Object::Namespace(namespace),
        Object::ServiceAccount(account),
        Object::TalosServiceAccount(talos_account),
        Object::CronJob(Box::new(job)),
    ];
    write(out, format!("{}/backup/{JOB}.yaml", dir(env, c)), &docs)
}
