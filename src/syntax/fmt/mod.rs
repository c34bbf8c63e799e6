//! `fleetc fmt`: reprints a KDL v2 document in one canonical layout, keeping every comment.
//!
//! The layout: 4-space indentation, one node per line, children in braces (`{` on the node's
//! line, `}` on its own), arguments then properties (each in written order), string values
//! always quoted with KDL v2 escapes, names and keys bare when KDL reads them back unchanged,
//! numbers and keywords as written, one blank line where one or more were written between two
//! nodes or comments of the same block. Comments (`//`, `/* */`) and slashdash-commented
//! nodes, entries and children are kept verbatim, at the place they were written: on their
//! own line, inline among the entries, or at the end of a line.
//!
//! The stages: [`lexer`] (lossless tokens), [`layout`] (nodes and the comments attached to
//! them), [`printer`]. Values are taken decoded from `kdl`'s parse of the same text. A
//! comment in a place the layout has no room for (inside a type annotation, around a
//! property's `=`, after a line continuation) is refused with `fleet::fmt::cannot-reprint`.
//! Before returning, [`format`] parses its own output and checks that the tree and the
//! comments are the same as the input's: a difference is reported as a fleetc bug, never
//! written.

mod layout;
pub(crate) mod lexer;
mod printer;

use crate::diag::{Diagnostic, Diagnostics, FileId, Span, codes};

/// Formats `text` (file `file`): the canonical text, or the reasons it cannot be formatted
/// (syntax errors, comments with no place in the layout).
pub fn format(file: FileId, text: &str) -> Result<String, Diagnostics> {
    // The parser never sees text past the bounds (its stack depends on them).
    let limits = super::limits::check(file, text);
    if !limits.is_empty() {
        return Err(limits);
    }
    let Ok(doc) = super::parse_kdl(text) else {
        return Err(crate::syntax::parse(file, text).err().unwrap_or_default());
    };
    let toks = lexer::lex(text);
    let mut parser = layout::Parser::new(text, &toks);
    let block = parser.document();
    if !parser.refusals.is_empty() {
        let mut diags = Diagnostics::new();
        for r in &parser.refusals {
            diags.push(
                Diagnostic::new(
                    &codes::FMT_CANNOT_REPRINT,
                    format!("a comment {} has no place in the canonical layout", r.place),
                )
                .at(Span::new(file, r.range.start, r.range.len()))
                .label("this comment"),
            );
        }
        return Err(diags);
    }
    let out = printer::Printer::new(text, &toks)
        .document(&block, doc.nodes())
        .map_err(|m| bug(file, m.0, "the formatter's layout and the KDL parser disagree"))?;
    verify(file, text, &doc, &out)?;
    Ok(out)
}

/// Every comment of `text`: line comments (without trailing whitespace), block comments, and
/// the verbatim text of every slashdash-commented node, entry or children block. `text` must
/// be valid KDL v2.
pub fn comments(text: &str) -> Vec<String> {
    let toks = lexer::lex(text);
    let mut parser = layout::Parser::new(text, &toks);
    let _ = parser.document();
    let mut out: Vec<String> = toks
        .iter()
        .filter(|t| matches!(t.kind, lexer::Kind::LineComment | lexer::Kind::BlockComment))
        .map(|t| t.text(text).trim_end().to_owned())
        .chain(parser.slashdashed.iter().map(|r| text[r.clone()].to_owned()))
        .collect();
    out.sort();
    out
}

/// The byte ranges of every comment of `text`, in order and without overlap: line and block
/// comments, and every slashdash-commented node, entry or children block (a comment inside a
/// slashdashed range is part of that range). The parser drops all of them, so a check that
/// must see what the file holds, not only what it means (key material, F11), reads these.
/// Never panics, even on text `kdl` refuses.
pub fn comment_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let toks = lexer::lex(text);
    let mut parser = layout::Parser::new(text, &toks);
    let _ = parser.document();
    let mut all: Vec<std::ops::Range<usize>> = toks
        .iter()
        .filter(|t| matches!(t.kind, lexer::Kind::LineComment | lexer::Kind::BlockComment))
        .map(|t| t.start..t.end)
        .chain(parser.slashdashed.iter().cloned())
        .collect();
    all.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for r in all {
        match out.last() {
            Some(last) if r.start < last.end => {}
            _ => out.push(r),
        }
    }
    out
}

fn bug(file: FileId, offset: usize, what: &str) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.push(
        Diagnostic::new(&codes::INTERNAL, format!("fleetc fmt cannot reprint this file: {what}"))
            .at(Span::new(file, offset, 0))
            .help("this is a bug in fleetc's formatter; the file was left as it is. Please report it with the file"),
    );
    d
}

/// The output parses to the same tree (names, types, values; arguments and properties each
/// in order) and carries the same comments as the input.
fn verify(file: FileId, input: &str, doc: &kdl::KdlDocument, out: &str) -> Result<(), Diagnostics> {
    let Ok(again) = super::parse_kdl(out) else {
        return Err(bug(file, 0, "its output is not valid KDL"));
    };
    if tree(doc.nodes()) != tree(again.nodes()) {
        return Err(bug(file, 0, "its output would mean something else"));
    }
    if comments(input) != comments(out) {
        return Err(bug(file, 0, "its output would lose a comment"));
    }
    Ok(())
}

/// A node as data: type, name, arguments, properties, children.
#[derive(Debug, PartialEq)]
struct Shape {
    ty: Option<String>,
    name: String,
    args: Vec<(Option<String>, String)>,
    props: Vec<(String, Option<String>, String)>,
    children: Option<Vec<Shape>>,
}

fn tree(nodes: &[kdl::KdlNode]) -> Vec<Shape> {
    nodes
        .iter()
        .map(|n| {
            let mut args = Vec::new();
            let mut props = Vec::new();
            for e in n.entries() {
                let ty = e.ty().map(|t| t.value().to_owned());
                let value = match e.value() {
                    kdl::KdlValue::Float(f) => format!("float {:x}", f.to_bits()),
                    v => format!("{v:?}"),
                };
                match e.name() {
                    Some(k) => props.push((k.value().to_owned(), ty, value)),
                    None => args.push((ty, value)),
                }
            }
            Shape {
                ty: n.ty().map(|t| t.value().to_owned()),
                name: n.name().value().to_owned(),
                args,
                props,
                children: n.children().map(|d| tree(d.nodes())),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
