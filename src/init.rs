//! `fleetc init`: a commented starter fleet.kdl that builds as written (one Scaleway
//! environment, one cluster, no vendored add-on, so no other file is needed). It never
//! overwrites: an existing fleet.kdl is left alone and reported.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The starter fleet, in the canonical layout of `fleetc fmt`.
pub const STARTER: &str = include_str!("init/starter.kdl");

#[derive(Debug)]
pub enum InitError {
    /// `fleet.kdl` is already there.
    Exists(PathBuf),
    Io(PathBuf, std::io::Error),
}

impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InitError::Exists(p) => write!(f, "{} already exists; `fleetc init` never overwrites it", p.display()),
            InitError::Io(p, e) => write!(f, "cannot write {}: {e}", p.display()),
        }
    }
}

/// Writes `dir/fleet.kdl` (creating `dir` if needed) and returns its path.
pub fn write(dir: &Path) -> Result<PathBuf, InitError> {
    let path = dir.join("fleet.kdl");
    std::fs::create_dir_all(dir).map_err(|e| InitError::Io(dir.to_owned(), e))?;
    // `create_new` makes the refusal atomic: a file appearing meanwhile is not overwritten.
    let mut file = match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(InitError::Exists(path)),
        Err(e) => return Err(InitError::Io(path, e)),
    };
    file.write_all(STARTER.as_bytes()).map_err(|e| InitError::Io(path.clone(), e))?;
    Ok(path)
}
