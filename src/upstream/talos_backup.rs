//! talos-backup (siderolabs/talos-backup), the backup job `backup` runs (R28): the release
//! fleetc pins and the environment variables it reads, from its source at that tag.
//!
//! - `cmd/talos-backup/main.go`: the talosconfig is `talosconfig.Open("")`, which inside a pod
//!   reads `/var/run/secrets/talos.dev/config` (siderolabs/talos v1.13.9
//!   `pkg/machinery/client/config/path.go` l.60, `constants.ServiceAccountMountPath`);
//! - `pkg/config/service.go` l.36-46 (`GetServiceConfig`): the variables below;
//!   `USE_PATH_STYLE` turns path-style addressing on when it is the string `"false"` (sic,
//!   l.43), and only with a custom endpoint (`pkg/s3/s3.go` l.33-39);
//! - `cmd/talos-backup/service/service.go` l.22-70: the snapshot is encrypted with age unless
//!   `DISABLE_ENCRYPTION` is `"true"` (fleetc never sets it), to one X25519 recipient
//!   (`pkg/encryption/encryption.go`, `age.ParseX25519Recipient`), and uploaded as
//!   `<S3_PREFIX>/<CLUSTER_NAME>-<RFC 3339 time>.snap.age` (`pkg/talos/talos.go` l.44,
//!   `pkg/s3/s3.go` l.58; the file is written relative to the working directory);
//! - nothing deletes an old snapshot: retention is the bucket's lifecycle rule
//!   (docs/day-two.md, "Backups").
//!
//! The credentials are the AWS SDK's own `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`
//! (`config.LoadDefaultConfig`, `pkg/s3/s3.go` l.25).

/// The image of the release (its `Makefile` l.17-19: `ghcr.io/siderolabs`; `Dockerfile`
/// `image-talos-backup`: `/talos-backup` on scratch with CA certificates).
pub const IMAGE: &str = "ghcr.io/siderolabs/talos-backup";
/// The pinned release: the newest tag (2025-02-10), built with the Talos machinery v1.9.3.
pub const VERSION: &str = "v0.1.0-beta.3";

/// `image:tag` of [`IMAGE`] at [`VERSION`].
pub fn image() -> String {
    format!("{IMAGE}:{VERSION}")
}

pub const ENV_BUCKET: &str = "BUCKET";
pub const ENV_REGION: &str = "AWS_REGION";
pub const ENV_ENDPOINT: &str = "CUSTOM_S3_ENDPOINT";
pub const ENV_PREFIX: &str = "S3_PREFIX";
pub const ENV_CLUSTER_NAME: &str = "CLUSTER_NAME";
pub const ENV_PATH_STYLE: &str = "USE_PATH_STYLE";
/// The value of [`ENV_PATH_STYLE`] that turns path-style addressing on.
pub const PATH_STYLE_ON: &str = "false";
pub const ENV_AGE_RECIPIENT: &str = "AGE_X25519_PUBLIC_KEY";
pub const ENV_ACCESS_KEY: &str = "AWS_ACCESS_KEY_ID";
pub const ENV_SECRET_KEY: &str = "AWS_SECRET_ACCESS_KEY";
/// The directory of the talos.dev ServiceAccount's Secret inside the pod.
pub const TALOS_SECRETS_MOUNT: &str = "/var/run/secrets/talos.dev";
