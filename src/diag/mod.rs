//! Diagnostics: every problem fleetc finds in a fleet, with a stable code, a severity, an exact
//! span in a source file, a plain-words message and a help that says why (citing the rule id of
//! the domain, R1–R29). Stages never stop at the first problem: they push into [`Diagnostics`]
//! and the run reports all of them at once. Rendering (text or JSON) lives in [`render`]; the
//! table of codes and their long explanations lives in [`codes`].

pub mod codes;
pub mod render;
pub mod rules;

use std::fmt;

pub use codes::Code;

/// Index of a source file in [`Sources`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub start: usize,
    pub len: usize,
}

impl Span {
    pub fn new(file: FileId, start: usize, len: usize) -> Self {
        Span { file, start, len }
    }
    pub fn end(&self) -> usize {
        self.start + self.len
    }
}

/// A value together with where the user wrote it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Spanned<U> {
        Spanned { value: f(self.value), span: self.span }
    }
    pub fn as_ref(&self) -> Spanned<&T> {
        Spanned { value: &self.value, span: self.span }
    }
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: fmt::Display> fmt::Display for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

/// The source files of a run: `fleet.kdl` first, then every file it references that fleetc
/// reads (vendored manifests). Paths are as the user sees them (relative to the fleet's
/// directory), never absolute, so rendered diagnostics are the same on every machine.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    files: Vec<SourceFile>,
}

#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// Byte offset of the start of every line (the first is 0), for places in O(log n).
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        SourceFile { name: name.into(), text, line_starts }
    }
    /// 0-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }
    /// Byte range of a 0-based line, without its newline.
    pub fn line_range(&self, line: usize) -> (usize, usize) {
        let start = self.line_starts.get(line).copied().unwrap_or(self.text.len());
        let end = self.line_starts.get(line + 1).map_or(self.text.len(), |&e| e - 1);
        (start, end.max(start))
    }
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

impl Sources {
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = FileId(u32::try_from(self.files.len()).expect("fewer than 2^32 source files"));
        self.files.push(SourceFile::new(name, text));
        id
    }
    /// Every file, in the order of their ids.
    pub fn files(&self) -> impl Iterator<Item = &SourceFile> {
        self.files.iter()
    }
    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, id: FileId, offset: usize) -> (usize, usize) {
        let f = self.get(id);
        let offset = floor_char_boundary(&f.text, offset.min(f.text.len()));
        let line = f.line_of(offset);
        let (start, _) = f.line_range(line);
        let column = f.text[start..offset].chars().count() + 1;
        (line + 1, column)
    }
}

pub(crate) fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem. Build it with [`Diagnostic::new`] and the `with_*` methods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static Code,
    pub severity: Severity,
    pub message: String,
    /// Where the problem is; `None` only for problems that have no place in a file.
    pub span: Option<Span>,
    /// Text under the primary span.
    pub label: Option<String>,
    /// Other places that explain the problem (the first declaration of a duplicate, …).
    pub related: Vec<(Span, String)>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(code: &'static Code, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: code.severity,
            message: message.into(),
            span: None,
            label: None,
            related: Vec::new(),
            help: code.help.map(str::to_owned),
        }
    }
    #[must_use]
    pub fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
    #[must_use]
    pub fn related(mut self, span: Span, label: impl Into<String>) -> Self {
        self.related.push((span, label.into()));
        self
    }
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    #[must_use]
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl std::hash::Hash for Diagnostic {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.code.name.hash(state);
        self.severity.hash(state);
        self.message.hash(state);
        self.span.hash(state);
        self.label.hash(state);
        self.related.hash(state);
        self.help.hash(state);
    }
}

/// At most this many diagnostics are kept; the next one becomes a
/// `fleet::limits::too-many-diagnostics` at its place, and the rest are counted, not kept.
pub const MAX_DIAGNOSTICS: usize = 200;

/// All diagnostics of a run, in the order stages found them; [`Diagnostics::sorted`] orders
/// them by place for reporting.
#[derive(Debug, Default, Clone)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
    /// `items` by hash, for de-duplication in linear time.
    seen: std::collections::HashMap<u64, Vec<usize>>,
    /// Diagnostics past [`MAX_DIAGNOSTICS`], counted but not kept.
    omitted: usize,
}

fn hash_of(d: &Diagnostic) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(d)
}

impl Diagnostics {
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds a diagnostic; an identical one already present is not added twice (inheritance
    /// can make one written value reach several clusters: it is reported once). Past
    /// [`MAX_DIAGNOSTICS`] the first new one is replaced by a limit diagnostic at its place
    /// and later ones are only counted (an omitted error keeps the run failing).
    pub fn push(&mut self, d: Diagnostic) {
        let h = hash_of(&d);
        if self.seen.get(&h).is_some_and(|ix| ix.iter().any(|&i| self.items[i] == d)) {
            return;
        }
        if self.items.len() >= MAX_DIAGNOSTICS {
            if self.omitted == 0 {
                let mut limit = Diagnostic::new(
                    &codes::TOO_MANY_DIAGNOSTICS,
                    format!("more than {MAX_DIAGNOSTICS} problems; the rest are not reported"),
                )
                .label("the first problem not reported")
                .severity(d.severity);
                limit.span = d.span;
                self.items.push(limit);
            } else if d.is_error()
                && let Some(limit) = self.items.iter_mut().rev().find(|x| x.code == &codes::TOO_MANY_DIAGNOSTICS)
            {
                limit.severity = Severity::Error;
            }
            self.omitted += 1;
            return;
        }
        self.seen.entry(h).or_default().push(self.items.len());
        self.items.push(d);
    }
    /// Gives `span` (and `label`, when it has none) to every diagnostic without a place.
    pub fn place_unplaced(&mut self, span: Span, label: &str) {
        if self.items.iter().all(|d| d.span.is_some()) {
            return;
        }
        for d in self.items.iter_mut().filter(|d| d.span.is_none()) {
            d.span = Some(span);
            d.label.get_or_insert_with(|| label.to_owned());
        }
        self.seen.clear();
        for (i, d) in self.items.iter().enumerate() {
            self.seen.entry(hash_of(d)).or_default().push(i);
        }
    }
    /// How many diagnostics were counted past [`MAX_DIAGNOSTICS`] and not kept.
    pub fn omitted(&self) -> usize {
        self.omitted
    }
    pub fn extend(&mut self, other: Diagnostics) {
        for d in other.items {
            self.push(d);
        }
        self.omitted += other.omitted;
    }
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(Diagnostic::is_error)
    }
    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.is_error()).count()
    }
    pub fn warning_count(&self) -> usize {
        self.items.len() - self.error_count()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }
    /// Errors first, then warnings (a warning is never the cause of an error); each ordered by
    /// file, offset, then code. Consequences of a mistake are not pushed at all (the stages
    /// that know the relation skip them), so the first diagnostic is a cause.
    pub fn sorted(&self) -> Vec<&Diagnostic> {
        let mut v: Vec<&Diagnostic> = self.items.iter().collect();
        v.sort_by(|a, b| {
            let ka = (a.severity, a.span.map(|s| (s.file, s.start)), a.code.name, &a.message);
            let kb = (b.severity, b.span.map(|s| (s.file, s.start)), b.code.name, &b.message);
            ka.cmp(&kb)
        });
        v
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// Closest candidate by edit distance, for "did you mean" helps.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min()
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("clustr", ["cluster", "pool"]), Some("cluster"));
        assert_eq!(did_you_mean("zzz", ["cluster", "pool"]), None);
    }

    #[test]
    fn line_col_counts_characters() {
        let mut s = Sources::default();
        let f = s.add("f", "ab\nçd x");
        assert_eq!(s.line_col(f, 0), (1, 1));
        assert_eq!(s.line_col(f, 3), (2, 1));
        assert_eq!(s.line_col(f, 6), (2, 3));
    }
}
