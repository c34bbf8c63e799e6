//! `fleetc init`: a commented starter fleet per platform that builds and plans as written: a
//! cluster, Talos's default CNI (with the way to Cilium in a comment), an Argo CD pin with one
//! app, the sealed input `fleetc apply` needs, and what to run next. Beside fleet.kdl it writes
//! the files the fleet names: a stand-in for Argo CD's install manifest (pinned, saying how to
//! replace it) and the app's directory, and a `.gitignore` that keeps the plaintext secrets
//! bundle and apply's working copy (`.fleetc/`) out of git. It never overwrites: when any of
//! them exists, nothing is written and the first one is reported; an existing `.gitignore`
//! (a repository's own) is kept and gets the lines it lacks appended.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The platforms a starter exists for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Scaleway,
    Proxmox,
    /// Machines you own, declared one by one (docs/metal.md).
    Metal,
}

/// The Scaleway starter, in the canonical layout of `fleetc fmt`.
pub const STARTER: &str = include_str!("scaleway.kdl");
/// The Proxmox starter.
pub const PROXMOX_STARTER: &str = include_str!("proxmox.kdl");
/// The bare-metal starter.
pub const METAL_STARTER: &str = include_str!("metal.kdl");
/// The stand-in for Argo CD's install manifest that the starters pin.
pub const ARGOCD_STAND_IN: &str = include_str!("argocd-install.yaml");
/// Where the starters pin it.
pub const ARGOCD_PATH: &str = "vendor/argocd-3.6.3-install.yaml";

/// The `.gitignore` a starter writes (or whose missing lines it appends to an existing one).
pub const GITIGNORE: &str = include_str!("gitignore");
/// Where.
pub const GITIGNORE_PATH: &str = ".gitignore";

/// The starter of a platform.
pub fn starter(platform: Platform) -> &'static str {
    match platform {
        Platform::Scaleway => STARTER,
        Platform::Proxmox => PROXMOX_STARTER,
        Platform::Metal => METAL_STARTER,
    }
}

/// Every file a starter writes, relative to its directory, in writing order.
pub fn files(platform: Platform) -> Vec<(&'static str, &'static str)> {
    vec![
        ("fleet.kdl", starter(platform)),
        (ARGOCD_PATH, ARGOCD_STAND_IN),
        ("apps/hello/kustomization.yaml", include_str!("hello/kustomization.yaml")),
        ("apps/hello/configmap.yaml", include_str!("hello/configmap.yaml")),
    ]
}

#[derive(Debug)]
pub enum InitError {
    /// A file the starter would write is already there.
    Exists(PathBuf),
    Io(PathBuf, std::io::Error),
}

impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InitError::Exists(p) => {
                write!(f, "{} already exists; `fleetc init` never overwrites, and wrote nothing", p.display())
            }
            InitError::Io(p, e) => write!(f, "cannot write {}: {e}", p.display()),
        }
    }
}

/// Writes the starter of `platform` into `dir` (created if needed) and returns the path of
/// its fleet.kdl.
pub fn write(dir: &Path, platform: Platform) -> Result<PathBuf, InitError> {
    let files = files(platform);
    if let Some((rel, _)) = files.iter().find(|(rel, _)| dir.join(rel).exists()) {
        return Err(InitError::Exists(dir.join(rel)));
    }
    for (rel, content) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| InitError::Io(parent.to_owned(), e))?;
        }
        // `create_new` makes the refusal atomic: a file appearing meanwhile is not overwritten.
        let mut file = match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(InitError::Exists(path)),
            Err(e) => return Err(InitError::Io(path, e)),
        };
        file.write_all(content.as_bytes()).map_err(|e| InitError::Io(path.clone(), e))?;
    }
    write_gitignore(&dir.join(GITIGNORE_PATH))?;
    Ok(dir.join("fleet.kdl"))
}

/// Writes [`GITIGNORE`] at `path`, or appends to the `.gitignore` already there the patterns
/// it lacks (with the comment above each), never removing or reordering a line of it.
fn write_gitignore(path: &Path) -> Result<(), InitError> {
    let existing = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(InitError::Io(path.to_owned(), e)),
    };
    let text = match &existing {
        None => GITIGNORE.to_owned(),
        Some(t) => {
            let have: std::collections::BTreeSet<&str> = t.lines().map(str::trim).collect();
            let missing: Vec<&str> =
                GITIGNORE.lines().filter(|l| !l.starts_with('#') && !have.contains(l.trim())).collect();
            if missing.is_empty() {
                return Ok(());
            }
            let sep = if t.is_empty() || t.ends_with('\n') { "" } else { "\n" };
            format!(
                "{t}{sep}# Added by `fleetc init` (plaintext secrets, apply's working copy):\n{}\n",
                missing.join("\n")
            )
        }
    };
    std::fs::write(path, text).map_err(|e| InitError::Io(path.to_owned(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starters_pin_the_stand_in_they_write() {
        let sha = crate::digest::sha256_hex(ARGOCD_STAND_IN.as_bytes());
        for p in [Platform::Scaleway, Platform::Proxmox, Platform::Metal] {
            assert!(starter(p).contains(&format!("manifest=\"{ARGOCD_PATH}\" sha256=\"{sha}\"")), "{p:?}");
        }
    }
}
