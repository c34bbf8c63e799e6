//! Review: what a change of the fleet changes, the stage above [`crate::artifacts`] and below
//! [`crate::apply`]. It takes two resolved models (the base one optional: an output directory
//! holds none) and their two artifact sets, and returns one [`Review`]: the file diffs
//! ([`files`], each file split into the objects a reviewer thinks in by [`object`]) and the
//! impact on running clusters ([`impact`], rules over the models and the file diffs). The
//! renderers ([`render`]: unified, stat, markdown, json) only print a finished `Review`.
//! Inside the stage data flows one way too: `object` → `files` → `impact` → `Review` →
//! `render`; nothing here writes a file or starts a process, and nothing below imports it.

pub mod files;
pub mod impact;
pub mod object;
pub mod render;

use crate::artifacts::ArtifactSet;
use crate::model::Fleet;
use files::{FileDiff, Status, diff_sets};
use impact::Severity;

pub use files::by_path;
pub use impact::Impact;

/// What `fleetc diff` reports: the impact of the change, then the files.
#[derive(Debug, Clone, Default)]
pub struct Review {
    /// What the build was compared with: `out/` or a git revision.
    pub base: String,
    pub impacts: Vec<Impact>,
    pub files: Vec<FileDiff>,
}

impl Review {
    /// Nothing differs: the same artifacts, and no change of the fleet with an impact.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.impacts.is_empty()
    }

    /// Files per status: (added, removed, changed).
    pub fn file_counts(&self) -> (usize, usize, usize) {
        let n = |s| self.files.iter().filter(|f| f.status == s).count();
        (n(Status::Added), n(Status::Removed), n(Status::Changed))
    }

    pub fn lines(&self) -> (usize, usize) {
        (self.files.iter().map(FileDiff::added_lines).sum(), self.files.iter().map(FileDiff::removed_lines).sum())
    }

    /// Impacts per severity: (danger, warning, info).
    pub fn severity_counts(&self) -> (usize, usize, usize) {
        let n = |s| self.impacts.iter().filter(|i| i.severity == s).count();
        (n(Severity::Danger), n(Severity::Warning), n(Severity::Info))
    }

    /// `1 danger, 2 warnings, 1 info`
    pub fn severity_summary(&self) -> String {
        let (d, w, i) = self.severity_counts();
        let mut parts = Vec::new();
        if d > 0 {
            parts.push(format!("{d} danger"));
        }
        if w > 0 {
            parts.push(format!("{w} warning{}", if w == 1 { "" } else { "s" }));
        }
        if i > 0 {
            parts.push(format!("{i} info"));
        }
        if parts.is_empty() { "none".to_owned() } else { parts.join(", ") }
    }

    /// `3 files changed (1 added, 2 changed), +12 -3 lines`
    pub fn file_summary(&self) -> String {
        if self.files.is_empty() {
            return "no file changed".to_owned();
        }
        let (a, r, c) = self.file_counts();
        let mut parts = Vec::new();
        for (n, w) in [(a, "added"), (r, "removed"), (c, "changed")] {
            if n > 0 {
                parts.push(format!("{n} {w}"));
            }
        }
        let (plus, minus) = self.lines();
        let n = self.files.len();
        format!(
            "{n} file{} ({}), +{plus} -{minus} lines",
            if n == 1 { " differs" } else { "s differ" },
            parts.join(", ")
        )
    }
}

/// The review of going from `old` to `new`: the file diffs and their impact. `old_fleet`
/// is the base's model when there is one (`--base REV`); an output directory has none.
pub fn review(
    base: String,
    old: &ArtifactSet,
    old_fleet: Option<&Fleet>,
    new: &ArtifactSet,
    new_fleet: &Fleet,
) -> Review {
    let files = diff_sets(old, new);
    let impacts = impact::analyze(old_fleet, new_fleet, &files);
    Review { base, impacts, files }
}
