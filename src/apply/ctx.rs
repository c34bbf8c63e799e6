//! The kit every step of `apply`, `upgrade` and `talos render` takes: [`Inputs`] (what a
//! command reads: the fleet's directory, the checked build, the target, the operator's
//! environment) and [`Ctx`] (what the steps share once the preflight passed: the private
//! directory, credentials, the decrypted sealed inputs, the working copy tofu runs in). The
//! step files import it from here; `mod.rs` only dispatches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::env::Env;
use super::target::{self, Target};
use super::work::{self, Work};
use crate::artifacts::ArtifactSet;
use crate::model::ApplyMode;
use crate::secrets::Plaintext;

/// What every command of `apply` (`apply`, `upgrade`, `talos render`) reads.
pub struct Inputs<'a> {
    /// The fleet's directory (sealed inputs and vendored files live there).
    pub fleet_dir: &'a Path,
    /// The output directory, as the commands show it.
    pub out_dir: &'a Path,
    /// A fresh build of fleet.kdl: out/ must equal it.
    pub build: &'a ArtifactSet,
    pub target: &'a Target,
    /// The operator's environment (see [`super::env::capture`]).
    pub env: &'a Env,
}

/// What the steps share: the checked inputs, the private directory, credentials, and the
/// decrypted sealed inputs (held in memory; the bundle also as a private file for tofu).
pub struct Ctx<'a> {
    pub target: &'a Target,
    pub out: &'a ArtifactSet,
    pub out_dir: &'a Path,
    pub fleet_dir: &'a Path,
    pub work: Work,
    pub(super) creds: Vec<(String, String, bool)>,
    pub(super) scw_config: PathBuf,
    pub mode: Option<ApplyMode>,
    /// `(cluster, input name)` → plaintext.
    pub sealed: BTreeMap<(String, String), Plaintext>,
    /// cluster → the decrypted bundle's private path.
    pub bundles: BTreeMap<String, PathBuf>,
    /// The `-var`s every plan and apply of the cloud root takes besides the switches
    /// ([`super::tofu::cloud_vars`]: on Scaleway the reserved gateway IP's id).
    pub cloud_vars: Vec<String>,
    /// The working copy tofu runs in ([`work::tofu_copy_root`]), never out/.
    pub tofu_copy: PathBuf,
    /// What the operator declared for tofu's network path (`--provider-mirror`,
    /// `--ca-bundle`), as the variables tofu reads them under ([`super::env::ToolPath`]).
    pub tools: Vec<(String, String)>,
    /// Under `--plan`, what a real apply would refuse that does not stop the plan (a
    /// steering variable, a stand-in manifest): listed again at the plan's end.
    pub plan_refusals: Vec<String>,
}

impl Ctx<'_> {
    pub fn credential(&self, name: &str) -> &str {
        self.creds.iter().find(|(k, _, _)| k == name).map_or("", |(_, v, _)| v.as_str())
    }

    /// The `scw` CLI gets the Scaleway API's key pair and the empty config file, nothing of
    /// the state bucket's (see [`super::env::child_env`]).
    pub(super) fn scw_env(&self) -> Vec<(String, String, bool)> {
        self.tofu_env().into_iter().filter(|(k, _, _)| k.starts_with("SCW_")).collect()
    }

    /// Credentials under the tools' names, and `SCW_CONFIG_PATH` pointing at an empty private
    /// file so that no profile on disk chooses a project (R9).
    pub(super) fn tofu_env(&self) -> Vec<(String, String, bool)> {
        let mut v = vec![("TF_IN_AUTOMATION".to_owned(), "1".to_owned(), false)];
        v.extend(self.creds.iter().cloned());
        if matches!(self.target.provider, target::ProviderTarget::Scaleway { .. }) {
            v.push(("SCW_CONFIG_PATH".into(), work::display(&self.scw_config), false));
        }
        v.extend(self.tools.iter().map(|(k, val)| (k.clone(), val.clone(), false)));
        v
    }

    pub fn sealed(&self, cluster: &str, name: &str) -> Option<&Plaintext> {
        self.sealed.get(&(cluster.to_owned(), name.to_owned()))
    }
}
