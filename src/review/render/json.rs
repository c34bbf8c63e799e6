//! The `json` format, for tools: the impact list, then per file its status, line counts,
//! objects and hunks. The structures here exist only for serialization (the diff types stay
//! free of serde), and their field names are the format's contract (docs/diff.md).

use serde::Serialize;

use crate::review::Review;
use crate::review::files::{FileDiff, Hunk, ObjectDiff};
use crate::review::impact::Impact;

#[derive(Serialize)]
struct Out<'a> {
    base: &'a str,
    equal: bool,
    summary: Summary,
    impacts: Vec<ImpactOut<'a>>,
    files: Vec<FileOut<'a>>,
}

#[derive(Serialize)]
struct Summary {
    files_added: usize,
    files_removed: usize,
    files_changed: usize,
    lines_added: usize,
    lines_removed: usize,
    danger: usize,
    warning: usize,
    info: usize,
}

#[derive(Serialize)]
struct ImpactOut<'a> {
    severity: &'static str,
    rule: &'static str,
    cites: &'static str,
    subject: &'a str,
    change: &'a str,
    effect: &'a str,
}

#[derive(Serialize)]
struct FileOut<'a> {
    path: &'a str,
    status: &'static str,
    binary: bool,
    lines_added: usize,
    lines_removed: usize,
    objects: Vec<ObjectOut<'a>>,
    hunks: Vec<HunkOut<'a>>,
}

#[derive(Serialize)]
struct ObjectOut<'a> {
    label: String,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    lines_added: usize,
    lines_removed: usize,
}

#[derive(Serialize)]
struct HunkOut<'a> {
    old_start: usize,
    old_lines: usize,
    new_start: usize,
    new_lines: usize,
    objects: &'a [String],
    /// Each line with its unified-diff prefix: ` ` context, `+` added, `-` removed.
    lines: Vec<String>,
}

fn impact(i: &Impact) -> ImpactOut<'_> {
    ImpactOut {
        severity: i.severity.as_str(),
        rule: i.rule,
        cites: i.cites,
        subject: &i.subject,
        change: &i.change,
        effect: &i.effect,
    }
}

fn object(o: &ObjectDiff) -> ObjectOut<'_> {
    ObjectOut {
        label: o.label(),
        status: o.status.as_str(),
        api_version: o.key.api_version(),
        kind: o.key.kind(),
        namespace: o.key.namespace(),
        name: o.key.name(),
        address: o.key.address(),
        lines_added: o.added,
        lines_removed: o.removed,
    }
}

fn hunk(h: &Hunk) -> HunkOut<'_> {
    HunkOut {
        old_start: h.old_start,
        old_lines: h.old_lines,
        new_start: h.new_start,
        new_lines: h.new_lines,
        objects: &h.objects,
        lines: h.lines.iter().map(|l| format!("{}{}", l.tag.prefix(), l.text)).collect(),
    }
}

fn file(f: &FileDiff) -> FileOut<'_> {
    FileOut {
        path: &f.path,
        status: f.status.as_str(),
        binary: f.binary,
        lines_added: f.added_lines(),
        lines_removed: f.removed_lines(),
        objects: f.objects.iter().map(object).collect(),
        hunks: f.hunks.iter().map(hunk).collect(),
    }
}

/// Renders a review as pretty-printed JSON, with a final newline.
pub fn render(review: &Review) -> String {
    let (fa, fr, fc) = review.file_counts();
    let (la, lr) = review.lines();
    let (d, w, i) = review.severity_counts();
    let out = Out {
        base: &review.base,
        equal: review.is_empty(),
        summary: Summary {
            files_added: fa,
            files_removed: fr,
            files_changed: fc,
            lines_added: la,
            lines_removed: lr,
            danger: d,
            warning: w,
            info: i,
        },
        impacts: review.impacts.iter().map(impact).collect(),
        files: review.files.iter().map(file).collect(),
    };
    let mut s = serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}
