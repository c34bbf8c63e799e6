//! The default format: the impact list, then a unified diff (`diff -u` layout, `a/` and `b/`
//! prefixes) whose hunk headers name the objects they touch, like git names the function a
//! hunk is in. The impact lines come before the first `---`, where `patch` and `git apply`
//! skip text, so the output stays a patch. Colour only when asked for (the caller decides:
//! a terminal, and NO_COLOR unset).

use std::fmt::Write as _;

use crate::review::Review;
use crate::review::files::{Tag, headers};
use crate::review::impact::Severity;

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";

pub(super) fn severity_color(s: Severity) -> &'static str {
    match s {
        Severity::Danger => "\x1b[1;31m",
        Severity::Warning => YELLOW,
        Severity::Info => CYAN,
    }
}

struct Painter {
    color: bool,
}

impl Painter {
    fn paint(&self, out: &mut String, style: &str, text: &str) {
        if self.color {
            let _ = write!(out, "{style}{text}{RESET}");
        } else {
            out.push_str(text);
        }
    }
}

/// The impact block shared by the text formats: a title line and one line per impact.
pub(super) fn impact_block(review: &Review, color: bool) -> String {
    let p = Painter { color };
    let mut out = String::new();
    if review.impacts.is_empty() {
        return out;
    }
    p.paint(&mut out, BOLD, &format!("Impact ({}):", review.severity_summary()));
    out.push('\n');
    for i in &review.impacts {
        out.push_str("  ");
        p.paint(&mut out, severity_color(i.severity), &format!("{:<7}", i.severity.label()));
        let _ = writeln!(out, "  {}", i.line());
    }
    out
}

/// Renders a review as the impact list and a unified diff.
pub fn render(review: &Review, color: bool) -> String {
    let p = Painter { color };
    let mut out = impact_block(review, color);
    if !out.is_empty() && !review.files.is_empty() {
        out.push('\n');
    }
    for f in &review.files {
        let (a, b) = headers(&f.path, f.status);
        if f.binary {
            let _ = writeln!(out, "Binary files {a} and {b} differ");
            continue;
        }
        p.paint(&mut out, BOLD, &format!("--- {a}"));
        out.push('\n');
        p.paint(&mut out, BOLD, &format!("+++ {b}"));
        out.push('\n');
        for h in &f.hunks {
            p.paint(&mut out, CYAN, &h.header());
            if !h.objects.is_empty() {
                let _ = write!(out, " {}", h.objects.join(", "));
            }
            out.push('\n');
            for l in &h.lines {
                let text = format!("{}{}", l.tag.prefix(), l.text);
                match l.tag {
                    Tag::Context => out.push_str(&text),
                    Tag::Added => p.paint(&mut out, GREEN, &text),
                    Tag::Removed => p.paint(&mut out, RED, &text),
                }
                out.push('\n');
                if !l.newline {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
    }
    out
}
