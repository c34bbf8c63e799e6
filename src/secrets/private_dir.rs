//! [`PrivateDir`]: where decrypted material lives while a tool needs it as a file. A fresh
//! directory of mode 0700 under the system's temporary directory, files of mode 0600, and
//! everything removed when the guard drops: on success, on error and on panic (unwinding).
//! A process killed outright cannot clean up; the next run sweeps directories whose owner
//! process is gone ([`PrivateDir::sweep_stale`]).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

const PREFIX: &str = "fleetc-private-";

static COUNTER: AtomicU32 = AtomicU32::new(0);

#[derive(Debug)]
pub struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// Creates the directory. Refuses when it would lie inside one of `forbidden` (the output
    /// directory: nothing decrypted is ever written under out/).
    pub fn new(forbidden: &[&Path]) -> io::Result<PrivateDir> {
        Self::new_in(&std::env::temp_dir(), forbidden)
    }

    pub fn new_in(parent: &Path, forbidden: &[&Path]) -> io::Result<PrivateDir> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!("{PREFIX}{}-{n}-{nanos:09}", std::process::id()));
        for f in forbidden {
            if is_inside(&path, f) {
                return Err(io::Error::other(format!(
                    "the temporary directory {} lies inside {}; nothing decrypted may be written there (set TMPDIR elsewhere)",
                    path.display(),
                    f.display()
                )));
            }
        }
        create_private_dir(&path)?;
        Ok(PrivateDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path inside the directory for a tool to write to (a plan file, a download).
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Writes `bytes` to a new file of mode 0600 and returns its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        let path = self.path.join(name);
        let mut f = private_file(&path)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        Ok(path)
    }

    /// Removes private directories left by fleetc processes that no longer run (a run killed
    /// by a signal cannot remove its own). Only Linux can tell (through /proc); elsewhere this
    /// does nothing.
    pub fn sweep_stale() {
        let Ok(rd) = fs::read_dir(std::env::temp_dir()) else { return };
        if !Path::new("/proc/self").exists() {
            return;
        }
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix(PREFIX).and_then(|r| r.split('-').next()) else { continue };
            if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        // Overwrite regular files before unlinking them: cheap, and a copy in a filesystem
        // snapshot taken later holds zeros.
        if let Ok(rd) = fs::read_dir(&self.path) {
            for e in rd.flatten() {
                if let Ok(m) = e.metadata()
                    && m.is_file()
                    && let Ok(mut f) = fs::OpenOptions::new().write(true).open(e.path())
                {
                    let len = usize::try_from(m.len()).unwrap_or(0).min(64 << 20);
                    let _ = f.write_all(&vec![0u8; len]);
                }
            }
        }
        let _ = fs::remove_dir_all(&self.path);
    }
}

fn is_inside(path: &Path, dir: &Path) -> bool {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_owned());
    let dir = canon(dir);
    // The path does not exist yet: canonicalize its parent.
    let path = path.parent().map(|p| canon(p).join(path.file_name().unwrap_or_default())).unwrap_or_default();
    path.starts_with(dir)
}

#[cfg(unix)]
fn create_private_dir(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().mode(0o700).create(path)
}

#[cfg(not(unix))]
fn create_private_dir(path: &Path) -> io::Result<()> {
    fs::create_dir(path)
}

/// Creates a new file of mode 0600 (never opens an existing one).
#[cfg(unix)]
pub fn private_file(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

#[cfg(not(unix))]
pub fn private_file(path: &Path) -> io::Result<fs::File> {
    fs::OpenOptions::new().write(true).create_new(true).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn files_are_0600_and_everything_goes_on_drop() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let dir = PrivateDir::new_in(parent.path(), &[]).unwrap();
        let p = dir.write("bundle.yaml", b"secret").unwrap();
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(dir.path()).unwrap().permissions().mode() & 0o777, 0o700);
        let root = dir.path().to_owned();
        drop(dir);
        assert!(!root.exists());
    }

    #[test]
    fn removed_even_when_the_holder_panics() {
        let parent = tempfile::tempdir().unwrap();
        let parent_path = parent.path().to_owned();
        let r = std::panic::catch_unwind(move || {
            let dir = PrivateDir::new_in(&parent_path, &[]).unwrap();
            dir.write("x", b"secret").unwrap();
            panic!("a step failed");
        });
        assert!(r.is_err());
        assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn refused_inside_the_output_directory() {
        let parent = tempfile::tempdir().unwrap();
        let out = parent.path().join("out");
        fs::create_dir(&out).unwrap();
        let err = PrivateDir::new_in(&out, &[&out]).unwrap_err();
        assert!(err.to_string().contains("nothing decrypted"), "{err}");
        assert_eq!(fs::read_dir(&out).unwrap().count(), 0);
    }
}
