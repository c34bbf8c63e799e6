//! Saying what a parse error means, where the raw parser message would not: a file written in
//! KDL v1 (fleet.kdl is KDL v2), and a `{` left unclosed (the parser notices only at the end of
//! the file and blames the outermost block). Both read the text with the formatter's lossless
//! lexer, which never fails, so strings and comments are never mistaken for syntax.

use super::fmt::lexer::{Kind, Token, lex};
use crate::diag::{Diagnostic, FileId, Span, codes};

/// A KDL v1 spelling: its span and what to write in KDL v2.
struct V1 {
    start: usize,
    end: usize,
    instead: String,
}

fn v1_tokens(text: &str, toks: &[Token]) -> Vec<V1> {
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.kind != Kind::Ident {
            continue;
        }
        let word = t.text(text);
        // A bare keyword is a node name only at the start of a node; as a value it is v1.
        let is_value = toks[..i].iter().rev().find(|p| p.kind != Kind::Space).is_some_and(|p| {
            !matches!(p.kind, Kind::Newline | Kind::LBrace | Kind::Semi | Kind::RBrace | Kind::LineComment)
        });
        match word {
            "true" | "false" | "null" if is_value => {
                out.push(V1 { start: t.start, end: t.end, instead: format!("#{word}") });
            }
            "r" => {
                if let Some(next) =
                    toks.get(i + 1).filter(|n| n.start == t.end && matches!(n.kind, Kind::Quoted | Kind::Raw))
                {
                    let body = next.text(text);
                    let inner = body.trim_start_matches('#').trim_end_matches('#');
                    let inner = inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(inner);
                    out.push(V1 { start: t.start, end: next.end, instead: format!("#\"{inner}\"#") });
                }
            }
            _ => {}
        }
    }
    out
}

/// One diagnostic for a file that uses KDL v1 spellings, with every place marked, and the
/// byte ranges it covers (parser errors there are its consequences).
pub(super) fn kdl_v1(file: FileId, text: &str) -> Option<(Diagnostic, Vec<(usize, usize)>)> {
    let toks = lex(text);
    let found = v1_tokens(text, &toks);
    let first = found.first()?;
    let mut d = Diagnostic::new(
        &codes::KDL_V1,
        if found.len() == 1 {
            "fleet.kdl is KDL v2, and this is KDL v1".to_owned()
        } else {
            format!("fleet.kdl is KDL v2, and {} values here are written in KDL v1", found.len())
        },
    )
    .at(Span::new(file, first.start, first.end - first.start))
    .label(format!("KDL v2: `{}`", first.instead));
    for v in &found[1..] {
        d = d.related(Span::new(file, v.start, v.end - v.start), format!("KDL v2: `{}`", v.instead));
    }
    let ranges = found.iter().map(|v| (v.start, v.end)).collect();
    Some((d, ranges))
}

/// The block left unclosed: the innermost `{` still open when a later line comes back to (or
/// left of) the indentation of the line that opened it without a `}`.
pub(super) fn unclosed(file: FileId, text: &str) -> Option<Diagnostic> {
    let toks = lex(text);
    // (index of the `{`, start of the opener's first token, its column)
    let mut open: Vec<(usize, usize, usize)> = Vec::new();
    let mut line_first: Option<(usize, usize)> = Some((0, 0)); // (offset, column) of the line's first token
    let mut at_line_start = true;
    let mut line_start = 0;
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Kind::Newline => {
                at_line_start = true;
                line_start = t.end;
                line_first = None;
                continue;
            }
            Kind::Space | Kind::LineComment | Kind::BlockComment if at_line_start => continue,
            _ => {}
        }
        if at_line_start {
            at_line_start = false;
            let column = text.get(line_start..t.start).map_or(0, |l| l.chars().count());
            line_first = Some((t.start, column));
            if t.kind != Kind::RBrace
                && let Some(&(brace, opener, col)) = open.last()
                && column <= col
            {
                let end = toks[brace].end;
                return Some(
                    Diagnostic::new(&codes::UNCLOSED_BLOCK, "this block is never closed")
                        .at(Span::new(file, opener, end - opener))
                        .label("`{` opened here")
                        .related(Span::new(file, t.start, t.end - t.start), "the next line is back at its indentation")
                        .help("add the `}` that ends the block before this line (fleetc fmt keeps the indentation that shows where blocks end)"),
                );
            }
        }
        match t.kind {
            Kind::LBrace => {
                let (start, col) = line_first.unwrap_or((t.start, 0));
                open.push((i, start, col));
            }
            Kind::RBrace => {
                open.pop();
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_values_are_found_outside_strings_and_comments() {
        let text = "fleet \"a\" {\n    discovery false // true\n    cni r\"cilium\"\n    x \"null\" y=null\n}\n";
        let (d, ranges) = kdl_v1(FileId(0), text).unwrap();
        assert_eq!(ranges.len(), 3, "{d:?}");
        assert_eq!(&text[ranges[1].0..ranges[1].1], "r\"cilium\"");
        assert_eq!(d.related.len(), 2);
        assert!(kdl_v1(FileId(0), "true \"x\"\n").is_none(), "a node named true is not a v1 value");
    }

    #[test]
    fn the_unclosed_block_is_the_one_the_indentation_says() {
        let text = "fleet \"a\" {\n    cluster \"c\" {\n        pool \"p\" {\n            addresses \"1\"\n        sealed \"x\"\n    }\n}\n";
        let d = unclosed(FileId(0), text).unwrap();
        let s = d.span.unwrap();
        assert_eq!(&text[s.start..s.end()], "pool \"p\" {");
    }
}
