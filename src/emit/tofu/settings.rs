//! The `terraform {}` blocks of every root: the OpenTofu version (in a `.tofu` file, where
//! OpenTofu 1.12 reads it), the providers it uses (R4), the S3 backend with locking (R3) and
//! state and plan encryption (R3).

use std::collections::BTreeSet;

use super::hclx::r;
use super::providers;
use crate::emit::hcl::{Body, Expr};
use crate::model::StateBackend;

/// The OpenTofu release every root requires: S3 locking without DynamoDB, early-evaluated
/// variables in the `encryption` block, ephemeral resources and write-only attributes (1.11),
/// and the oldest series upstream still supports: 1.12, until 2027-02-01 (the first line of
/// opentofu/opentofu v1.12.6 `CHANGELOG.md`; 1.11's support ended 2026-08-01, v1.11.14's).
/// The harness runs v1.12.6 (`oracles/tofu/go.mod`), so the floor is the version judged.
pub const REQUIRED_VERSION: &str = ">= 1.12";

/// The file that declares [`REQUIRED_VERSION`], in every root and module. OpenTofu 1.12 checks
/// `required_version` only in files named `.tofu` (a `.tf` one it leaves to Terraform:
/// opentofu/opentofu v1.12.6 `internal/configs/diagnostics.go`, `checkVersionRequirements`,
/// `tofuFileExt`); 1.11 checks it in both (v1.11.5 `internal/configs/parser_config.go`,
/// `sniffCoreVersionRequirements`), and every OpenTofu since 1.8 loads `.tofu` files. No `.tf`
/// of a root or module may be named `versions.tf`: a `.tofu` file drops the `.tf` file of the
/// same name (v1.12.6 `internal/configs/parser_config_dir.go`,
/// `filterTfPathsWithTofuAlternatives`).
pub const VERSIONS_FILE: &str = "versions.tofu";

/// `terraform { required_version }`, the whole of a root's [`VERSIONS_FILE`].
pub fn versions_block(body: &mut Body) {
    body.block("terraform", &[], |t| {
        t.attr("required_version", REQUIRED_VERSION);
    });
}

/// The key provider's type and name. Never change them: OpenTofu records them in every
/// encrypted state and plan, and renaming either makes existing state unreadable (it would
/// need a `fallback` block naming the old pair).
pub const KEY_PROVIDER: (&str, &str) = ("pbkdf2", "fleet");
/// The encryption method's type and name; same rule as [`KEY_PROVIDER`].
pub const METHOD: (&str, &str) = ("aes_gcm", "fleet");
/// The root variable that carries the passphrase. It has no default and no value in any
/// file: the apply step (or `TF_VAR_state_passphrase`, or a `TF_ENCRYPTION` key provider of
/// the same name) supplies it. `init -backend=false` and `validate` need none.
pub const PASSPHRASE_VAR: &str = "state_passphrase";

/// What kind of root the block is for.
#[derive(Clone, Copy)]
pub enum Backend<'a> {
    /// Local state (the bootstrap root, which creates the bucket).
    Local,
    /// The environment's bucket, at `key`.
    S3 { state: &'a StateBackend, key: &'a str },
}

/// The S3 backend's settings for an S3-compatible store, as `(name, value)` pairs, shared
/// by the backend block and the cluster root's `terraform_remote_state` config.
pub fn s3_settings(state: &StateBackend, key: Expr) -> Vec<(String, Expr)> {
    vec![
        ("bucket".into(), state.bucket.value.as_str().into()),
        ("key".into(), key),
        ("region".into(), state.region.value.as_str().into()),
        ("endpoints".into(), Expr::object([("s3", Expr::from(state.endpoint.value.as_str()))])),
        ("use_lockfile".into(), true.into()),
        ("skip_credentials_validation".into(), true.into()),
        ("skip_region_validation".into(), true.into()),
        ("skip_requesting_account_id".into(), true.into()),
        ("skip_metadata_api_check".into(), true.into()),
        ("skip_s3_checksum".into(), state.skip_checksum.into()),
    ]
}

/// `terraform { required_providers, backend, encryption }` (`terraform.tf`; the version is
/// in [`VERSIONS_FILE`]).
pub fn terraform_block(
    body: &mut Body,
    used: &BTreeSet<String>,
    backend: Backend<'_>,
    reads_remote_state: bool,
) -> Result<(), String> {
    let mut err = Ok(());
    body.block("terraform", &[], |t| {
        err = providers::required_providers(t, used, true);
        t.blank();
        if let Backend::S3 { state, key } = backend {
            t.block("backend", &["s3"], |b| {
                for (k, v) in s3_settings(state, key.into()) {
                    b.attr(k, v);
                }
            })
            .blank();
        }
        encryption(t, reads_remote_state);
    });
    err
}

fn encryption(t: &mut Body, reads_remote_state: bool) {
    let (kp_type, kp_name) = KEY_PROVIDER;
    let (m_type, m_name) = METHOD;
    let method = || r(&format!("method.{m_type}.{m_name}"));
    t.block("encryption", &[], |e| {
        e.block("key_provider", &[kp_type, kp_name], |k| {
            k.attr("passphrase", r(&format!("var.{PASSPHRASE_VAR}")));
        });
        e.block("method", &[m_type, m_name], |m| {
            m.attr("keys", r(&format!("key_provider.{kp_type}.{kp_name}")));
        });
        e.block("state", &[], |s| {
            s.attr("method", method()).attr("enforced", true);
        });
        e.block("plan", &[], |s| {
            s.attr("method", method()).attr("enforced", true);
        });
        if reads_remote_state {
            e.block("remote_state_data_sources", &[], |s| {
                s.block("default", &[], |d| {
                    d.attr("method", method());
                });
            });
        }
    });
}
