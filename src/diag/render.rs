//! Rendering diagnostics for people (miette's graphical report) and for machines (JSON).
//! Rendering is deterministic: file names are as the user wrote them, the width is fixed
//! unless a terminal says otherwise, and colour is a caller's choice.

use std::fmt::Write as _;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, SourceCode, SourceSpan, SpanContents};
use serde::Serialize;

use super::{Diagnostic, Diagnostics, Severity, SourceFile, Sources, Span};

/// A source line longer than this (in bytes) is never shown in a snippet: the diagnostic
/// names its place in words instead. miette pads labels with format widths, which cannot
/// exceed 65,535 columns, and a megabyte line is no use on a terminal.
pub const MAX_SNIPPET_LINE: usize = 1_000;
/// A snippet shows at most this many lines; a longer span is named in words.
pub const MAX_SNIPPET_LINES: usize = 100;

/// How text diagnostics look.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    pub width: usize,
}

impl Style {
    /// The style of golden files: no colour, 80 columns.
    pub const PLAIN: Style = Style { color: false, width: 80 };
}

/// Renders every diagnostic, sorted by place, followed by a summary line.
pub fn text(diags: &Diagnostics, sources: &Sources, style: Style) -> String {
    let theme = if style.color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(style.width).with_links(false);
    let mut out = String::new();
    for d in diags.sorted() {
        let report = Report::new(d, sources);
        let _ = handler.render_report(&mut out, &report);
        out.push('\n');
    }
    out.push_str(&summary(diags));
    out.push('\n');
    out
}

/// "2 errors, 1 warning" (or "no problems").
pub fn summary(diags: &Diagnostics) -> String {
    let (e, w) = (diags.error_count(), diags.warning_count());
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    match (e, w) {
        (0, 0) => "no problems".to_owned(),
        (e, 0) => plural(e, "error"),
        (0, w) => plural(w, "warning"),
        (e, w) => format!("{}, {}", plural(e, "error"), plural(w, "warning")),
    }
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'a str,
    severity: &'a str,
    message: &'a str,
    file: Option<&'a str>,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    label: Option<&'a str>,
    help: Option<&'a str>,
    rule: Option<&'a str>,
}

/// A JSON array of diagnostics, one object each, sorted by place.
pub fn json(diags: &Diagnostics, sources: &Sources) -> String {
    let items: Vec<JsonDiagnostic<'_>> = diags
        .sorted()
        .into_iter()
        .map(|d| {
            let place = d.span.map(|s| {
                let (line, column) = sources.line_col(s.file, s.start);
                let (end_line, end_column) = sources.line_col(s.file, s.end());
                (sources.get(s.file).name.as_str(), line, column, end_line, end_column)
            });
            JsonDiagnostic {
                code: d.code.name,
                severity: d.severity.as_str(),
                message: &d.message,
                file: place.map(|p| p.0),
                line: place.map(|p| p.1),
                column: place.map(|p| p.2),
                end_line: place.map(|p| p.3),
                end_column: place.map(|p| p.4),
                label: d.label.as_deref(),
                help: d.help.as_deref(),
                rule: d.code.rule,
            }
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&items).expect("diagnostics serialize");
    s.push('\n');
    s
}

/// One line per diagnostic: `file:line:column: severity[code]: message`, for `--quiet` logs
/// and editors; its help (why, and what to write) follows on a line of its own at the same
/// place, `file:line:column: help: …`, the way compilers print notes.
pub fn short(diags: &Diagnostics, sources: &Sources) -> String {
    let mut out = String::new();
    for d in diags.sorted() {
        let place = match d.span {
            Some(s) => {
                let (line, col) = sources.line_col(s.file, s.start);
                format!("{}:{line}:{col}: ", sources.get(s.file).name)
            }
            None => "fleetc: ".to_owned(),
        };
        let _ = writeln!(out, "{place}{}[{}]: {}", d.severity.as_str(), d.code.name, d.message);
        if let Some(help) = &d.help {
            let _ = writeln!(out, "{place}help: {}", help.replace('\n', " "));
        }
    }
    out
}

/// Whether `span` can be shown in a snippet: few lines, none of them (nor the context line
/// on either side) too long.
fn showable(file: &SourceFile, span: Span) -> bool {
    let len = file.text.len();
    let start = span.start.min(len);
    let end = span.end().min(len);
    let first = file.line_of(start).saturating_sub(1);
    let last = (file.line_of(end) + 1).min(file.line_count() - 1);
    last - first <= MAX_SNIPPET_LINES
        && (first..=last).all(|l| {
            let (a, b) = file.line_range(l);
            b - a <= MAX_SNIPPET_LINE
        })
}

/// A source file as miette reads it: only the lines around a span are handed over, found
/// through the line index, so rendering N diagnostics costs N windows, not N files.
struct Window<'a> {
    file: &'a SourceFile,
}

impl SourceCode for Window<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let f = self.file;
        let len = f.text.len();
        let start = span.offset().min(len);
        let end = (span.offset() + span.len()).min(len).max(start);
        let first = f.line_of(start).saturating_sub(before);
        let last = (f.line_of(end) + after).min(f.line_count() - 1);
        let a = f.line_range(first).0;
        let b = f.line_range(last + 1).0.max(f.line_range(last).1).min(len);
        let inner = f.text[a..b].read_span(&SourceSpan::new((start - a).into(), end - start), before, after)?;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            f.name.clone(),
            inner.data(),
            SourceSpan::new((inner.span().offset() + a).into(), inner.span().len()),
            inner.line() + first,
            inner.column(),
            // miette's count is of the line breaks from the start of the file.
            inner.line_count() + first,
        )))
    }
}

/// Adapter from a [`Diagnostic`] to miette's view of one.
struct Report<'a> {
    diag: &'a Diagnostic,
    source: Option<Window<'a>>,
    /// `file:line:column` when the place cannot be shown in a snippet.
    place: Option<String>,
    /// Related places in another file than the primary one (a patch file's diagnostic and
    /// the `patch` line of fleet.kdl), each shown as its own snippet after the report.
    elsewhere: Vec<Elsewhere<'a>>,
}

/// A related place in another source file.
struct Elsewhere<'a> {
    text: &'a str,
    source: Window<'a>,
    span: Span,
}

impl std::fmt::Debug for Elsewhere<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text)
    }
}

impl std::fmt::Display for Elsewhere<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text)
    }
}

impl std::error::Error for Elsewhere<'_> {}

impl miette::Diagnostic for Elsewhere<'_> {
    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Advice)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let l = LabeledSpan::new_primary_with_span(None, SourceSpan::new(self.span.start.into(), self.span.len));
        Some(Box::new(std::iter::once(l)))
    }
}

impl<'a> Report<'a> {
    fn new(diag: &'a Diagnostic, sources: &'a Sources) -> Self {
        let Some(s) = diag.span else { return Report { diag, source: None, place: None, elsewhere: Vec::new() } };
        let file = sources.get(s.file);
        let elsewhere = diag
            .related
            .iter()
            .filter(|(r, _)| r.file != s.file && showable(sources.get(r.file), *r))
            .map(|(r, text)| Elsewhere { text, source: Window { file: sources.get(r.file) }, span: *r })
            .collect();
        if showable(file, s) {
            Report { diag, source: Some(Window { file }), place: None, elsewhere }
        } else {
            let (line, col) = sources.line_col(s.file, s.start);
            Report { diag, source: None, place: Some(format!("{}:{line}:{col}", file.name)), elsewhere }
        }
    }
}

impl std::fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.diag.message)
    }
}

impl std::fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.diag.message)?;
        match &self.place {
            Some(p) => write!(f, " (at {p})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        Some(Box::new(self.diag.code.name))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diag.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }
    fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.diag.help.as_ref().map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }
    fn related<'b>(&'b self) -> Option<Box<dyn Iterator<Item = &'b dyn miette::Diagnostic> + 'b>> {
        if self.elsewhere.is_empty() {
            return None;
        }
        Some(Box::new(self.elsewhere.iter().map(|e| e as &dyn miette::Diagnostic)))
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let file = self.source.as_ref()?.file;
        let primary = self.diag.span?;
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            self.diag.label.clone(),
            SourceSpan::new(primary.start.into(), primary.len),
        )];
        for (span, text) in &self.diag.related {
            if span.file == primary.file && showable(file, *span) {
                labels
                    .push(LabeledSpan::new_with_span(Some(text.clone()), SourceSpan::new(span.start.into(), span.len)));
            }
        }
        Some(Box::new(labels.into_iter()))
    }
}
