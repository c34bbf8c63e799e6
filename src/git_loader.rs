//! Reading the fleet as of a git revision, for `fleetc diff --base REV`: fleet.kdl and every
//! file it references come from the repository's object store through the local `git`
//! command (`git cat-file blob <commit>:<path>`, the plumbing form of `git show
//! REV:<path>`: the blob's exact bytes, no text conversion, no pager). Nothing is checked
//! out, nothing is written, and the network is never used (`GIT_NO_LAZY_FETCH=1` stops a
//! partial clone from fetching a missing object).
//!
//! Besides `apply`, this is the only module that spawns a process, and it spawns only `git`,
//! read-only.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::model::Loader;

/// A revision of the repository that holds the fleet's directory.
#[derive(Debug, Clone)]
pub struct GitLoader {
    /// The fleet's directory (where `git` runs).
    dir: PathBuf,
    /// The revision as the user wrote it, for messages.
    rev: String,
    /// The commit it resolves to.
    commit: String,
    /// The fleet's directory relative to the repository root, `/`-terminated or empty.
    prefix: String,
}

fn git(dir: &Path, args: &[&str]) -> Result<Output, String> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                "the `git` command is not installed (`--base` reads the revision through it)".to_owned()
            } else {
                format!("cannot run `git`: {e}")
            }
        })
}

fn stdout_line(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim_end_matches(['\n', '\r']).to_owned()
}

fn stderr_line(out: &Output) -> String {
    let s = String::from_utf8_lossy(&out.stderr);
    s.lines().last().unwrap_or("").trim().trim_start_matches("fatal: ").to_owned()
}

impl GitLoader {
    /// Resolves `rev` in the repository that contains `dir` (the fleet's directory).
    pub fn open(dir: &Path, rev: &str) -> Result<GitLoader, String> {
        if rev.is_empty() || rev.starts_with('-') || rev.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("`{rev}` is not a git revision"));
        }
        let prefix = git(dir, &["rev-parse", "--show-prefix"])?;
        if !prefix.status.success() {
            return Err(format!("{} is not inside a git repository: {}", dir.display(), stderr_line(&prefix)));
        }
        let spec = format!("{rev}^{{commit}}");
        let commit = git(dir, &["rev-parse", "--verify", "--quiet", "--end-of-options", &spec])?;
        if !commit.status.success() {
            return Err(format!("`{rev}` names no commit of the repository"));
        }
        Ok(GitLoader {
            dir: dir.to_owned(),
            rev: rev.to_owned(),
            commit: stdout_line(&commit),
            prefix: stdout_line(&prefix),
        })
    }

    /// The revision as given.
    pub fn rev(&self) -> &str {
        &self.rev
    }

    /// The full commit hash the revision resolved to.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// The bytes of `rel` (relative to the fleet's directory) at the revision.
    pub fn read_bytes(&self, rel: &str) -> Result<Vec<u8>, String> {
        let object = format!("{}:{}{rel}", self.commit, self.prefix);
        let out = git(&self.dir, &["cat-file", "blob", &object])?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(format!("not in revision `{}` ({})", self.rev, stderr_line(&out)))
        }
    }
}

impl Loader for GitLoader {
    fn read(&self, rel: &str) -> Result<String, String> {
        let bytes = self.read_bytes(rel)?;
        String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())
    }

    /// Whether a file or directory exists at the revision (`git cat-file -e`). When `git`
    /// cannot be asked, it says yes, as the trait asks: no warning is made up.
    fn exists(&self, rel: &str) -> bool {
        let object = format!("{}:{}{}", self.commit, self.prefix, rel.trim_end_matches('/'));
        git(&self.dir, &["cat-file", "-e", &object]).map_or(true, |o| o.status.success())
    }
}
