//! Differences between two artifact sets, file by file and object by object.
//!
//! [`changes`] lists the files whose bytes differ; [`file_diff`] turns one into a
//! [`FileDiff`]: its hunks (a line diff with three lines of context, as `diff -u` prints it)
//! and the objects it touches ([`ObjectDiff`]: YAML documents by kind and name, Talos
//! documents by kind, OpenTofu blocks by address, see [`super::object`]). Each hunk names the
//! objects its changed lines belong to, and each object says whether it was added, removed or
//! changed, so a review reads "TalosConfigTemplate `x` removed" and not only "line 12
//! changed". Nothing here knows an artifact family: the same code diffs Talos, Cluster API,
//! Argo CD and OpenTofu output.

use std::collections::BTreeMap;

use similar::{Algorithm, DiffOp, capture_diff_slices, group_diff_ops};

use super::object::{self, ObjectKey};
use crate::artifacts::ArtifactSet;

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
    /// One character, as in `git status --short`: `A`, `D`, `M`.
    pub fn letter(self) -> char {
        match self {
            Status::Added => 'A',
            Status::Removed => 'D',
            Status::Changed => 'M',
        }
    }
    /// The sign an object gets in a listing: `+`, `-`, `~`.
    pub fn sign(self) -> char {
        match self {
            Status::Added => '+',
            Status::Removed => '-',
            Status::Changed => '~',
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

/// A plain unified diff of one change (`a/` and `b/` prefixes, 3 lines of context), without
/// object names: what the golden-test harness prints when a case fails.
pub fn unified(change: &FileChange<'_>) -> String {
    let old = String::from_utf8_lossy(change.old);
    let new = String::from_utf8_lossy(change.new);
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
    let (a, b) = headers(change.path, change.status);
    diff.unified_diff().context_radius(3).header(&a, &b).to_string()
}

/// The `---` and `+++` names of a file in a unified diff.
pub fn headers(path: &str, status: Status) -> (String, String) {
    match status {
        Status::Added => ("/dev/null".to_owned(), format!("b/{path}")),
        Status::Removed => (format!("a/{path}"), "/dev/null".to_owned()),
        Status::Changed => (format!("a/{path}"), format!("b/{path}")),
    }
}

/// One file's differences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    pub status: Status,
    /// Not UTF-8 text on one side: no hunks, no objects.
    pub binary: bool,
    /// The objects that were added, removed or changed, in file order.
    pub objects: Vec<ObjectDiff>,
    pub hunks: Vec<Hunk>,
}

impl FileDiff {
    pub fn added_lines(&self) -> usize {
        self.hunks.iter().map(Hunk::added).sum()
    }
    pub fn removed_lines(&self) -> usize {
        self.hunks.iter().map(Hunk::removed).sum()
    }
    /// Objects with the given status.
    pub fn objects_with(&self, status: Status) -> impl Iterator<Item = &ObjectDiff> {
        self.objects.iter().filter(move |o| o.status == status)
    }
}

/// One object that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectDiff {
    pub key: ObjectKey,
    pub status: Status,
    /// Lines of this object added and removed by the line diff.
    pub added: usize,
    pub removed: usize,
    /// The object's text on each side (empty on the side where it does not exist).
    pub old_text: String,
    pub new_text: String,
}

impl ObjectDiff {
    pub fn label(&self) -> String {
        self.key.label()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Context,
    Added,
    Removed,
}

impl Tag {
    pub fn prefix(self) -> char {
        match self {
            Tag::Context => ' ',
            Tag::Added => '+',
            Tag::Removed => '-',
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub tag: Tag,
    /// The line without its line break.
    pub text: String,
    /// False for a last line that has no line break (`\ No newline at end of file`).
    pub newline: bool,
}

/// A hunk, with its ranges as a unified diff header prints them: `old_start` is 1-based,
/// or, for an empty range, the number of the line before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
    /// Labels of the objects whose lines this hunk adds or removes.
    pub objects: Vec<String>,
    pub lines: Vec<Line>,
}

impl Hunk {
    pub fn added(&self) -> usize {
        self.lines.iter().filter(|l| l.tag == Tag::Added).count()
    }
    pub fn removed(&self) -> usize {
        self.lines.iter().filter(|l| l.tag == Tag::Removed).count()
    }
    /// `@@ -1,3 +1,4 @@` (a length of 1 is left out, as `diff -u` does).
    pub fn header(&self) -> String {
        fn range(start: usize, len: usize) -> String {
            if len == 1 { start.to_string() } else { format!("{start},{len}") }
        }
        format!("@@ -{} +{} @@", range(self.old_start, self.old_lines), range(self.new_start, self.new_lines))
    }
}

/// Lines with their line break (so that a missing final break is a difference).
fn lines_of(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

fn strip(line: &str) -> &str {
    line.strip_suffix('\n').unwrap_or(line)
}

/// Which segment owns each line.
fn owners(segments: &[object::Segment], n: usize) -> Vec<usize> {
    let mut v = vec![0; n];
    for (i, s) in segments.iter().enumerate() {
        for o in &mut v[s.start..s.end] {
            *o = i;
        }
    }
    v
}

fn segment_text(lines: &[&str], s: &object::Segment) -> String {
    lines[s.start..s.end].concat()
}

/// The differences of one file: hunks and objects.
pub fn file_diff(change: &FileChange<'_>) -> FileDiff {
    let (Ok(old), Ok(new)) = (std::str::from_utf8(change.old), std::str::from_utf8(change.new)) else {
        return FileDiff {
            path: change.path.to_owned(),
            status: change.status,
            binary: true,
            objects: Vec::new(),
            hunks: Vec::new(),
        };
    };
    let (old_lines, new_lines) = (lines_of(old), lines_of(new));
    let old_plain: Vec<&str> = old_lines.iter().map(|l| strip(l)).collect();
    let new_plain: Vec<&str> = new_lines.iter().map(|l| strip(l)).collect();
    let old_segs = object::split(change.path, &old_plain);
    let new_segs = object::split(change.path, &new_plain);
    let (old_owner, new_owner) = (owners(&old_segs, old_lines.len()), owners(&new_segs, new_lines.len()));
    let mut old_removed = vec![0usize; old_segs.len()];
    let mut new_added = vec![0usize; new_segs.len()];

    let ops = capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines);
    let mut hunks = Vec::new();
    for group in group_diff_ops(ops, 3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let (os, oe) = (first.old_range().start, last.old_range().end);
        let (ns, ne) = (first.new_range().start, last.new_range().end);
        let mut lines = Vec::new();
        let mut touched: Vec<(bool, usize)> = Vec::new();
        let mut push = |tag: Tag, text: &str, owner: Option<(bool, usize)>| {
            lines.push(Line { tag, text: strip(text).to_owned(), newline: text.ends_with('\n') });
            if let Some(o) = owner
                && !touched.contains(&o)
            {
                touched.push(o);
            }
        };
        for op in &group {
            match *op {
                DiffOp::Equal { old_index, len, .. } => {
                    for l in &old_lines[old_index..old_index + len] {
                        push(Tag::Context, l, None);
                    }
                }
                DiffOp::Delete { old_index, old_len, .. } => {
                    for i in old_index..old_index + old_len {
                        old_removed[old_owner[i]] += 1;
                        push(Tag::Removed, old_lines[i], Some((false, old_owner[i])));
                    }
                }
                DiffOp::Insert { new_index, new_len, .. } => {
                    for j in new_index..new_index + new_len {
                        new_added[new_owner[j]] += 1;
                        push(Tag::Added, new_lines[j], Some((true, new_owner[j])));
                    }
                }
                DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                    for i in old_index..old_index + old_len {
                        old_removed[old_owner[i]] += 1;
                        push(Tag::Removed, old_lines[i], Some((false, old_owner[i])));
                    }
                    for j in new_index..new_index + new_len {
                        new_added[new_owner[j]] += 1;
                        push(Tag::Added, new_lines[j], Some((true, new_owner[j])));
                    }
                }
            }
        }
        let mut objects: Vec<String> = Vec::new();
        for (is_new, i) in touched {
            let label = if is_new { new_segs[i].key.label() } else { old_segs[i].key.label() };
            if !objects.contains(&label) {
                objects.push(label);
            }
        }
        let start = |s: usize, len: usize| if len == 0 { s } else { s + 1 };
        hunks.push(Hunk {
            old_start: start(os, oe - os),
            old_lines: oe - os,
            new_start: start(ns, ne - ns),
            new_lines: ne - ns,
            objects,
            lines,
        });
    }

    // Objects, matched by key in file order.
    let old_keys: Vec<&ObjectKey> = old_segs.iter().map(|s| &s.key).collect();
    let new_keys: Vec<&ObjectKey> = new_segs.iter().map(|s| &s.key).collect();
    let mut objects = Vec::new();
    let removed = |i: usize, objects: &mut Vec<ObjectDiff>| {
        objects.push(ObjectDiff {
            key: old_segs[i].key.clone(),
            status: Status::Removed,
            added: 0,
            removed: old_removed[i],
            old_text: segment_text(&old_lines, &old_segs[i]),
            new_text: String::new(),
        });
    };
    let added = |j: usize, objects: &mut Vec<ObjectDiff>| {
        objects.push(ObjectDiff {
            key: new_segs[j].key.clone(),
            status: Status::Added,
            added: new_added[j],
            removed: 0,
            old_text: String::new(),
            new_text: segment_text(&new_lines, &new_segs[j]),
        });
    };
    for op in capture_diff_slices(Algorithm::Myers, &old_keys, &new_keys) {
        match op {
            DiffOp::Equal { old_index, new_index, len } => {
                for k in 0..len {
                    let (i, j) = (old_index + k, new_index + k);
                    let (ot, nt) = (segment_text(&old_lines, &old_segs[i]), segment_text(&new_lines, &new_segs[j]));
                    if ot != nt {
                        objects.push(ObjectDiff {
                            key: new_segs[j].key.clone(),
                            status: Status::Changed,
                            added: new_added[j],
                            removed: old_removed[i],
                            old_text: ot,
                            new_text: nt,
                        });
                    }
                }
            }
            DiffOp::Delete { old_index, old_len, .. } => {
                (old_index..old_index + old_len).for_each(|i| removed(i, &mut objects))
            }
            DiffOp::Insert { new_index, new_len, .. } => {
                (new_index..new_index + new_len).for_each(|j| added(j, &mut objects))
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                (old_index..old_index + old_len).for_each(|i| removed(i, &mut objects));
                (new_index..new_index + new_len).for_each(|j| added(j, &mut objects));
            }
        }
    }
    FileDiff { path: change.path.to_owned(), status: change.status, binary: false, objects, hunks }
}

/// Every differing file of two sets, diffed.
pub fn diff_sets(old: &ArtifactSet, new: &ArtifactSet) -> Vec<FileDiff> {
    changes(old, new).iter().map(file_diff).collect()
}

/// Objects per file, for callers that look things up by path.
pub fn by_path(files: &[FileDiff]) -> BTreeMap<&str, &FileDiff> {
    files.iter().map(|f| (f.path.as_str(), f)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(files: &[(&str, &str)]) -> ArtifactSet {
        let mut s = ArtifactSet::new();
        for (p, b) in files {
            s.insert(*p, b.as_bytes()).unwrap();
        }
        s
    }

    const OLD: &str = "# h\napiVersion: v1\nkind: A\nmetadata:\n  name: one\ndata:\n  x: 1\n---\napiVersion: v1\nkind: A\nmetadata:\n  name: two\ndata:\n  y: 1\n";

    #[test]
    fn hunks_name_the_documents_they_touch() {
        let new = OLD.replace("y: 1", "y: 2");
        let d = diff_sets(&set(&[("a.yaml", OLD)]), &set(&[("a.yaml", &new)]));
        assert_eq!(d.len(), 1);
        let f = &d[0];
        assert_eq!(f.objects.len(), 1);
        assert_eq!(f.objects[0].label(), "A/two");
        assert_eq!(f.objects[0].status, Status::Changed);
        assert_eq!((f.objects[0].added, f.objects[0].removed), (1, 1));
        assert_eq!(f.hunks.len(), 1);
        assert_eq!(f.hunks[0].objects, vec!["A/two"]);
        assert_eq!(f.hunks[0].header(), "@@ -11,4 +11,4 @@");
    }

    #[test]
    fn a_renamed_document_is_one_removed_and_one_added() {
        let new = OLD.replace("name: two", "name: three");
        let d = diff_sets(&set(&[("a.yaml", OLD)]), &set(&[("a.yaml", &new)]));
        let st: Vec<(String, Status)> = d[0].objects.iter().map(|o| (o.label(), o.status)).collect();
        assert_eq!(st, vec![("A/two".to_owned(), Status::Removed), ("A/three".to_owned(), Status::Added)]);
        assert_eq!(d[0].hunks[0].objects, vec!["A/two", "A/three"]);
    }

    #[test]
    fn added_and_removed_files_list_all_their_objects() {
        let d = diff_sets(&set(&[("gone.yaml", OLD)]), &set(&[("new.tf", "resource \"a\" \"b\" {\n}\n")]));
        assert_eq!(d[0].path, "gone.yaml");
        assert_eq!(d[0].status, Status::Removed);
        assert_eq!(d[0].objects.len(), 2);
        assert_eq!(d[0].hunks[0].header(), "@@ -1,14 +0,0 @@");
        assert_eq!(d[1].status, Status::Added);
        assert_eq!(d[1].objects[0].label(), "a.b");
        assert_eq!(d[1].hunks[0].header(), "@@ -0,0 +1,2 @@");
    }

    #[test]
    fn a_missing_final_newline_is_a_difference() {
        let d = diff_sets(&set(&[("a.txt", "x\n")]), &set(&[("a.txt", "x")]));
        let lines = &d[0].hunks[0].lines;
        assert_eq!(lines.len(), 2);
        assert!(lines[0].newline && !lines[1].newline);
    }

    #[test]
    fn binary_files_have_no_hunks() {
        let mut a = ArtifactSet::new();
        a.insert("b.bin", vec![0xff, 0xfe]).unwrap();
        let d = diff_sets(&ArtifactSet::new(), &a);
        assert!(d[0].binary && d[0].hunks.is_empty());
    }
}
