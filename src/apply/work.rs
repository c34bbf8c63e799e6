//! [`Work`]: the run's private directory (see [`PrivateDir`]), or under `--plan` a
//! placeholder that writes nothing and shows as `$PRIVATE` in the printed commands.

use std::path::{Path, PathBuf};

use crate::layout::paths;
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

/// Where tofu runs: `<fleet dir>/.fleetc/work`, a working copy of the environment's roots,
/// their shared modules and the Talos documents the cluster root reads (B8). Never out/:
/// `tofu init` writes `.terraform/` and `.terraform.lock.hcl` beside the root it runs in, and
/// any file out/ did not get from fleet.kdl makes the next `fleetc build --check` and `apply`
/// refuse it. The copy holds out/'s bytes (no secret: plans, bundles and credentials stay in
/// the private directory or in the environment) and tofu's own files, which it keeps between
/// runs: the providers are not downloaded again and the lock file stays put, so a second
/// apply plans no change and starts no download. Its `.gitignore` keeps it out of git.
pub fn tofu_copy_root(fleet_dir: &Path) -> PathBuf {
    let rel = Path::new(".fleetc").join("work");
    if fleet_dir.as_os_str().is_empty() || fleet_dir == Path::new(".") { rel } else { fleet_dir.join(rel) }
}

/// The directories of the build the working copy of `env` holds.
fn copied_dirs(env: &str) -> [String; 5] {
    [
        paths::TOFU_MODULES_DIR.to_owned(),
        paths::SCHEMATICS_DIR.to_owned(),
        paths::tofu_env_dir(env),
        paths::talos_env_dir(env),
        paths::argocd_env_dir(env),
    ]
}

/// Whether `rel` (a path of the build) belongs in the working copy of `env`: the roots and
/// modules tofu runs, the Talos documents the cluster root reads, and every other file apply
/// hands a tool (the schematics curl posts, the Argo CD bootstrap kubectl applies). Tools
/// read the copy, written from the checked build's bytes, never out/, which may change
/// while they run.
pub fn in_tofu_copy(rel: &str, env: &str) -> bool {
    copied_dirs(env).iter().any(|dir| rel.starts_with(&format!("{dir}/")))
}

/// Brings the working copy of `env` to the build's bytes: writes what differs, removes the
/// generated files the build no longer has, and leaves tofu's own files (`.terraform/`,
/// `.terraform.lock.hcl`) alone. Under `--plan` it writes nothing.
pub fn sync_tofu_copy(
    root: &Path,
    build: &crate::artifacts::ArtifactSet,
    env: &str,
    plan: bool,
) -> std::io::Result<()> {
    if plan {
        return Ok(());
    }
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(root)?;
    let base = root.parent().unwrap_or(root);
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o700))?;
    std::fs::write(base.join(".gitignore"), "# fleetc's working copy for tofu (docs/apply.md)\n*\n")?;
    let wanted: std::collections::BTreeSet<&str> = build.paths().filter(|p| in_tofu_copy(p, env)).collect();
    for dir in copied_dirs(env) {
        remove_stale(root, &root.join(&dir), &wanted)?;
    }
    for rel in &wanted {
        let bytes = build.get(rel).unwrap_or_default();
        let dest = root.join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
        }
        // Not through a link: a link planted in the copy is replaced, never written through.
        let is_file = std::fs::symlink_metadata(&dest).is_ok_and(|m| m.file_type().is_file());
        if is_file && std::fs::read(&dest).is_ok_and(|b| b == bytes) {
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o600))?;
            continue;
        }
        let tmp = dest.with_extension(format!("fleetc-tmp-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        std::io::Write::write_all(&mut f, bytes)?;
        drop(f);
        std::fs::rename(&tmp, &dest)?;
    }
    // Every directory of the copy is 0700 (tofu's own `.terraform/` included).
    set_dirs_private(root)?;
    Ok(())
}

fn set_dirs_private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for e in std::fs::read_dir(dir)?.flatten() {
        if e.file_type()?.is_dir() {
            set_dirs_private(&e.path())?;
        }
    }
    Ok(())
}

fn remove_stale(root: &Path, dir: &Path, wanted: &std::collections::BTreeSet<&str>) -> std::io::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == ".terraform" || name == ".terraform.lock.hcl" || name.starts_with("terraform.tfstate") {
            continue;
        }
        let ft = e.file_type()?;
        if ft.is_dir() {
            remove_stale(root, &p, wanted)?;
        } else if let Ok(rel) = p.strip_prefix(root)
            && !wanted.contains(rel.to_string_lossy().as_ref())
        {
            std::fs::remove_file(&p)?;
        }
    }
    Ok(())
}
