//! The `fleet::backup` codes: a cluster's declared etcd backups (`backup`, R28), checked in
//! `src/check/backup.rs`.

codes! {
    BACKUP_SCHEDULE_INVALID = "fleet::backup::schedule-invalid", Error, Some("R28"),
    Some("write the schedule as a Kubernetes CronJob reads it: five fields `minute hour day-of-month month day-of-week` (`0 3 * * *`: every day at 03:00), or `@daily`, `@hourly`, `@every 6h`"),
"## What it does
Reports a `backup schedule=` that a Kubernetes CronJob would refuse.

## Why (R28)
The schedule becomes the `schedule` of the CronJob that takes the cluster's etcd snapshot. The
API server parses it with robfig/cron's standard parser (five fields, or a descriptor) and
refuses anything else: Argo CD's sync of the backup would fail in the cluster, and no backup
would ever be taken, while the fleet built without a word.

## Example
    backup schedule=\"0 3 * * * *\" bucket=\"acme-etcd\" region=\"fr-par\" credentials=\"backup-s3\"

## Instead
    backup schedule=\"0 3 * * *\" bucket=\"acme-etcd\" region=\"fr-par\" credentials=\"backup-s3\"
";

    BACKUP_CREDENTIALS_NOT_SEALED = "fleet::backup::credentials-not-sealed", Error, Some("F11"),
    Some("list the input in the cluster's `sealed` and seal the bucket's key with `fleetc secrets import <env>/<cluster> <name> FILE` (a YAML map with `access_key` and `secret_key`)"),
"## What it does
Reports a `backup credentials=\"<name>\"` that the cluster does not list in its `sealed`
inputs.

## Why (F11, R28)
The bucket's access key is a credential: it reaches the cluster only from a sealed input,
which `fleetc apply` decrypts and writes as the Secret the backup job reads. An input the
cluster does not list is never decrypted for it, so the job would run without a key and every
snapshot upload would fail.

## Example
    backup schedule=\"0 3 * * *\" bucket=\"acme-etcd\" region=\"fr-par\" credentials=\"backup-s3\"
    sealed \"talos-secrets\"

## Instead
    sealed \"talos-secrets\" \"backup-s3\"
";

    BACKUP_NO_RECIPIENT = "fleet::backup::no-recipient", Error, Some("R28"),
    Some("state the environment's age `recipients \"age1…\"`: the snapshots are encrypted to them"),
"## What it does
Reports a `backup` in an environment that has no age `recipients`.

## Why (R28)
An etcd snapshot holds every Secret of the cluster. fleetc has the job encrypt each snapshot
with age to the environment's recipient before it leaves the node, so that the bucket never
holds it in the clear; with no recipient there is nothing to encrypt to, and fleetc does not
turn encryption off.

## Example
    environment \"staging\" {
        backup schedule=\"0 3 * * *\" bucket=\"acme-etcd\" region=\"fr-par\" credentials=\"backup-s3\"

## Instead
    environment \"staging\" {
        recipients \"age1…\"
        backup schedule=\"0 3 * * *\" bucket=\"acme-etcd\" region=\"fr-par\" credentials=\"backup-s3\"
";

    BACKUP_ONE_RECIPIENT = "fleet::backup::one-recipient", Warning, Some("R28"),
    Some("the backup job (talos-backup) encrypts to one age recipient: put the key whose holder restores first in `recipients`, and keep its identity where a restore can reach it"),
"## What it does
Warns when a `backup`'s environment has several age recipients: the snapshots are encrypted to
the first one only.

## Why (R28)
talos-backup takes one X25519 public key (`AGE_X25519_PUBLIC_KEY`, parsed with
`age.ParseX25519Recipient`). Sealed inputs are encrypted to every recipient, so each holder can
open them; a snapshot opens only with the first recipient's identity. A restore that counts on
another key finds snapshots it cannot decrypt.

## Example
    recipients \"age1alice…\" \"age1bob…\"

## Instead
Make sure the first recipient's identity is where a restore can reach it, or list one
recipient.
";

    BACKUP_NOT_DELIVERED = "fleet::backup::not-delivered", Error, Some("R23"),
    Some("a backup is delivered by the cluster's own Argo CD: add `gitops repo=\"https://…\" revision=\"main\"` to the fleet; a cluster Cluster API manages gets no `backup` yet"),
"## What it does
Reports a `backup` on a cluster whose backup fleetc cannot deliver: the fleet has no `gitops`
block, or the cluster is managed by Cluster API (`managed-by`).

## Why (R23, R28)
The backup job is delivered from git by the cluster's Argo CD, like everything after the
cluster. Without a repository there is no Argo CD tree to put it in. A managed cluster's
machine configs come from Cluster API templates, which fleetc does not yet give the Talos API
access the job needs.

## Example
    cluster \"edge-1\" managed-by=\"mgmt\" {
        backup schedule=\"0 3 * * *\" bucket=\"acme-etcd\" region=\"fr-par\" credentials=\"backup-s3\"

## Instead
Back the cluster up with `talosctl etcd snapshot` until fleetc builds it (docs/day-two.md,
\"Backups\").
";
}
