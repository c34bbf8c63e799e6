//! The pure half of artifacts: [`ArtifactSet`], one build's output as a sorted map from
//! relative path to bytes, with each file's sha256 and the bytes of the manifest that lists
//! them. It is what emit returns, so it sits on a floor below emit and reads nothing but the
//! digest (and `parallel` to hash on two threads); no file is read or written here (disk.rs,
//! the stage after emit, does that, with the same `MANIFEST.sha256` name and header).

use std::collections::BTreeMap;

use crate::digest::sha256_hex;

/// The manifest fleetc keeps in the output directory.
pub const MANIFEST: &str = "MANIFEST.sha256";
/// The first line of a complete manifest (`sha256sum -c` skips `#` lines).
pub const MANIFEST_HEADER: &str = "# fleetc manifest v1: the files fleetc generated here, with their sha256";
/// The threads that hash a set's files and verify out/ against its manifest: two, whatever
/// the build's thread count (the no-op path runs before any compile decides one).
pub(super) const HASH_THREADS: usize = 2;

/// One build's output.
#[derive(Debug, Default, Clone)]
pub struct ArtifactSet {
    pub(super) files: BTreeMap<String, Vec<u8>>,
    /// Each file's sha256, computed once when first asked (the manifest, the manifest in
    /// progress and the inputs record all need them) and kept up to date by `insert`.
    hashes: std::sync::OnceLock<BTreeMap<String, String>>,
}

impl PartialEq for ArtifactSet {
    fn eq(&self, other: &Self) -> bool {
        self.files == other.files
    }
}

impl Eq for ArtifactSet {}

/// Whether a relative output path is well-formed: `/`-separated, no empty, `.` or `..`
/// component, not absolute, no backslash or NUL.
pub fn valid_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains('\0')
        && path.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

impl ArtifactSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file. Emitters build paths from validated names; a malformed path or a second
    /// file at one path is a bug in fleetc, reported by the caller as an internal error.
    pub fn insert(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Result<(), String> {
        let path = path.into();
        if !valid_path(&path) || path == MANIFEST {
            return Err(format!("invalid output path `{path}`"));
        }
        if self.files.contains_key(&path) {
            return Err(format!("two artifacts at `{path}`"));
        }
        let bytes = bytes.into();
        if let Some(h) = self.hashes.get_mut() {
            h.insert(path.clone(), sha256_hex(&bytes));
        }
        self.files.insert(path, bytes);
        Ok(())
    }

    /// Moves every file of `other` into this set.
    pub fn merge(&mut self, other: ArtifactSet) -> Result<(), String> {
        for (p, b) in other.files {
            self.insert(p, b)?;
        }
        Ok(())
    }

    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|(p, b)| (p.as_str(), b.as_slice()))
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every file's sha256 by path, hashed once (on [`HASH_THREADS`] threads) and then
    /// remembered.
    pub fn hashes(&self) -> &BTreeMap<String, String> {
        self.hashes.get_or_init(|| {
            let all: Vec<(&String, &Vec<u8>)> = self.files.iter().collect();
            let jobs: Vec<_> = crate::parallel::chunks(&all, HASH_THREADS)
                .into_iter()
                .map(|part| move || part.iter().map(|(p, b)| ((*p).clone(), sha256_hex(b))).collect::<Vec<_>>())
                .collect();
            crate::parallel::run(HASH_THREADS, jobs).into_iter().flatten().collect()
        })
    }

    /// The manifest's bytes: the header line, then `<sha256>  <path>` per generated file,
    /// sorted by path.
    pub fn manifest(&self) -> Vec<u8> {
        let mut s = String::from(MANIFEST_HEADER);
        s.push('\n');
        for (p, h) in self.hashes() {
            s.push_str(h);
            s.push_str("  ");
            s.push_str(p);
            s.push('\n');
        }
        s.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_validated() {
        let mut s = ArtifactSet::new();
        for bad in ["", "/abs", "a/../b", "a//b", "./a", "a\\b", MANIFEST] {
            assert!(s.insert(bad, "x").is_err(), "{bad}");
        }
        s.insert("a/b.yaml", "x").unwrap();
        assert!(s.insert("a/b.yaml", "y").is_err());
    }
}
