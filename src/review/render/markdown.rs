//! The `markdown` format: a pull-request comment. The impact table comes first (what the
//! change does to running clusters), then a summary table of files and their objects, then
//! one collapsible `<details>` block per file with its diff. A comment has a size limit
//! (GitHub's is 65,536 characters), so the output stays under a cap: the impact table is
//! always complete, the file table and the diffs stop at the cap and the comment says what
//! was left out and how to see it.

use std::fmt::Write as _;

use crate::review::Review;
use crate::review::files::headers;
use crate::review::impact::Severity;

/// The default cap, below GitHub's 65,536-character limit for a comment.
pub const DEFAULT_CAP: usize = 60_000;

/// Room kept for the closing note about what was cut.
const NOTE_ROOM: usize = 400;

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Danger => "🔴 **danger**",
        Severity::Warning => "🟠 warning",
        Severity::Info => "🔵 info",
    }
}

/// Text safe inside a table cell: no raw HTML, no column break, one line.
fn cell(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('|', "\\|").replace('\n', " ")
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A code fence longer than any run of backticks in `body`.
fn fence(body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Renders a review as a pull-request comment of at most about `cap` characters.
pub fn render(review: &Review, cap: usize) -> String {
    let mut out = String::from("## fleetc diff\n\n");
    if review.is_empty() {
        let _ = writeln!(out, "No change: this fleet builds the same artifacts as `{}`.", review.base);
        return out;
    }
    let _ = writeln!(
        out,
        "Compared with `{}`: {}. Impact: {}.\n",
        review.base,
        review.file_summary(),
        review.severity_summary()
    );
    if !review.impacts.is_empty() {
        out.push_str("### Impact\n\n| Severity | Where | Change | Effect | Rule |\n| --- | --- | --- | --- | --- |\n");
        for i in &review.impacts {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} | {} |",
                severity(i.severity),
                cell(&i.subject),
                cell(&i.change),
                cell(&i.effect),
                cell(i.cites)
            );
        }
        out.push('\n');
    }
    if review.files.is_empty() {
        out.push_str("No artifact file differs: the change is in the fleet's model only (for instance an emitter for it is not there yet).\n");
        return out;
    }
    out.push_str("### Files\n\n| File | Status | Objects | Lines |\n| --- | --- | --- | --- |\n");
    let mut rows_cut = 0;
    for f in &review.files {
        let objects: Vec<String> =
            f.objects.iter().map(|o| format!("{} {}", o.status.sign(), cell(&o.label()))).collect();
        let lines =
            if f.binary { "binary".to_owned() } else { format!("+{} −{}", f.added_lines(), f.removed_lines()) };
        let row = format!("| `{}` | {} | {} | {lines} |\n", cell(&f.path), f.status.as_str(), objects.join("<br>"));
        if out.len() + row.len() + NOTE_ROOM > cap {
            rows_cut += 1;
        } else {
            out.push_str(&row);
        }
    }
    if rows_cut > 0 {
        let _ = writeln!(out, "| … | {rows_cut} more file{} | | |", if rows_cut == 1 { "" } else { "s" });
    }
    out.push_str("\n### Diffs\n\n");
    let mut cut = (0, 0, 0);
    for f in &review.files {
        let mut body = String::new();
        if f.binary {
            let (a, b) = headers(&f.path, f.status);
            let _ = writeln!(body, "Binary files {a} and {b} differ");
        }
        for h in &f.hunks {
            body.push_str(&h.header());
            if !h.objects.is_empty() {
                let _ = write!(body, " {}", h.objects.join(", "));
            }
            body.push('\n');
            for l in &h.lines {
                body.push(l.tag.prefix());
                body.push_str(&l.text);
                body.push('\n');
                if !l.newline {
                    body.push_str("\\ No newline at end of file\n");
                }
            }
        }
        let fence = fence(&body);
        let block = format!(
            "<details>\n<summary><code>{}</code>: {}, +{} −{}</summary>\n\n{fence}diff\n{body}{fence}\n\n</details>\n\n",
            html(&f.path),
            f.status.as_str(),
            f.added_lines(),
            f.removed_lines()
        );
        if cut.0 > 0 || out.len() + block.len() + NOTE_ROOM > cap {
            cut = (cut.0 + 1, cut.1 + f.added_lines(), cut.2 + f.removed_lines());
        } else {
            out.push_str(&block);
        }
    }
    if cut.0 > 0 {
        let _ = writeln!(
            out,
            "> **{} of {} file diffs left out** (+{} −{} lines) to keep this comment under {cap} characters. Run `fleetc diff` against `{}` to see every diff.",
            cut.0,
            review.files.len(),
            cut.1,
            cut.2,
            review.base
        );
    }
    // Trailing blank lines are noise in a comment.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_backticks_in_the_body() {
        assert_eq!(fence("a"), "```");
        assert_eq!(fence("x ```` y"), "`````");
    }

    #[test]
    fn cells_cannot_break_the_table_or_open_html() {
        assert_eq!(cell("a|b<script>\nc"), "a\\|b&lt;script&gt; c");
    }
}
