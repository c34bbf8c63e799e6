//! The `stat` format: the impact list, then one line per file (`A` added, `D` removed, `M`
//! changed) with its added and removed line counts, each followed by the objects it touches
//! (`+` added, `-` removed, `~` changed), and a total.

use std::fmt::Write as _;

use super::unified::impact_block;
use crate::review::Review;

/// Renders a review as counts per file and per object.
pub fn render(review: &Review, color: bool) -> String {
    let mut out = impact_block(review, color);
    if !out.is_empty() {
        out.push('\n');
    }
    let mut rows: Vec<(String, String)> = Vec::new();
    for f in &review.files {
        let counts =
            if f.binary { "binary".to_owned() } else { format!("+{} -{}", f.added_lines(), f.removed_lines()) };
        rows.push((format!("{} {}", f.status.letter(), f.path), counts));
        for o in &f.objects {
            rows.push((format!("    {} {}", o.status.sign(), o.label()), format!("+{} -{}", o.added, o.removed)));
        }
    }
    let width = rows.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0);
    for (left, right) in rows {
        let pad = width - left.chars().count();
        let _ = writeln!(out, "{left}{}  {right}", " ".repeat(pad));
    }
    let _ = writeln!(out, "{}", review.file_summary());
    out
}
