//! Differences between two artifact sets, file by file, as unified diffs.

use super::ArtifactSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Added,
    Removed,
    Changed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Added => "added",
            Status::Removed => "removed",
            Status::Changed => "changed",
        }
    }
}

/// One file that differs between `old` and `new`.
#[derive(Debug, Clone)]
pub struct FileChange<'a> {
    pub path: &'a str,
    pub status: Status,
    pub old: &'a [u8],
    pub new: &'a [u8],
}

/// Every path whose bytes differ, sorted by path.
pub fn changes<'a>(old: &'a ArtifactSet, new: &'a ArtifactSet) -> Vec<FileChange<'a>> {
    let mut paths: Vec<&str> = old.paths().chain(new.paths()).collect();
    paths.sort_unstable();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|path| match (old.get(path), new.get(path)) {
            (None, Some(n)) => Some(FileChange { path, status: Status::Added, old: &[], new: n }),
            (Some(o), None) => Some(FileChange { path, status: Status::Removed, old: o, new: &[] }),
            (Some(o), Some(n)) if o != n => Some(FileChange { path, status: Status::Changed, old: o, new: n }),
            _ => None,
        })
        .collect()
}

/// A unified diff of one change (`a/` and `b/` prefixes, 3 lines of context).
pub fn unified(change: &FileChange<'_>) -> String {
    let old = String::from_utf8_lossy(change.old);
    let new = String::from_utf8_lossy(change.new);
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
    let (a, b) = match change.status {
        Status::Added => ("/dev/null".to_owned(), format!("b/{}", change.path)),
        Status::Removed => (format!("a/{}", change.path), "/dev/null".to_owned()),
        Status::Changed => (format!("a/{}", change.path), format!("b/{}", change.path)),
    };
    diff.unified_diff().context_radius(3).header(&a, &b).to_string()
}
