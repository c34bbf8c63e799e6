//! [`Work`]: the run's private directory (see [`PrivateDir`]), or under `--plan` a
//! placeholder that writes nothing and shows as `$PRIVATE` in the printed commands.

use std::path::{Path, PathBuf};

use crate::secrets::PrivateDir;

pub enum Work {
    Real(PrivateDir),
    Plan,
}

/// How a private path shows in a plan.
pub const PLACEHOLDER: &str = "$PRIVATE";

impl Work {
    pub fn new(plan: bool, forbidden: &[&Path]) -> std::io::Result<Work> {
        if plan {
            Ok(Work::Plan)
        } else {
            PrivateDir::sweep_stale();
            PrivateDir::new(forbidden).map(Work::Real)
        }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        match self {
            Work::Real(d) => d.file(name),
            Work::Plan => Path::new(PLACEHOLDER).join(name),
        }
    }

    /// Writes a private file (mode 0600); under `--plan` only returns where it would be.
    pub fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
        match self {
            Work::Real(d) => d.write(name, bytes),
            Work::Plan => Ok(self.file(name)),
        }
    }
}

pub fn display(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}
