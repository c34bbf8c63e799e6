//! Syntax: KDL v2 text → a spanned tree of [`Node`]s. This stage knows KDL and nothing of
//! Kubernetes, Talos or clouds: it keeps every name and value with the exact byte span where
//! the user wrote it, so that later stages can point at it. Parse errors become diagnostics
//! (`fleet::syntax::invalid-kdl`), all of them at once, each at the token that is wrong.
//! Before the parser sees the text, [`limits`] bounds its size, line length and nesting
//! depth (`fleet::limits::*`); after it, the number of nodes.

pub mod fmt;
pub mod limits;
mod recover;

use crate::diag::{Diagnostic, Diagnostics, FileId, Span, Spanned, codes};

/// A KDL node: `name arg… key=value… { children }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: Spanned<String>,
    pub args: Vec<Value>,
    pub props: Vec<Prop>,
    /// `None` when the node has no braces; `Some(vec![])` for `{ }`.
    pub children: Option<Vec<Node>>,
    /// The whole node, children included.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Prop {
    pub name: Spanned<String>,
    pub value: Value,
}

/// A KDL value with the span of the value itself (for a property, without `key=`).
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub kind: ValueKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ValueKind {
    String(String),
    Integer(i128),
    Float(f64),
    Bool(bool),
    Null,
}

impl ValueKind {
    /// The KDL type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            ValueKind::String(_) => "a string",
            ValueKind::Integer(_) => "an integer",
            ValueKind::Float(_) => "a number",
            ValueKind::Bool(_) => "a boolean",
            ValueKind::Null => "#null",
        }
    }
}

impl Node {
    pub fn prop(&self, name: &str) -> Option<&Prop> {
        self.props.iter().rev().find(|p| p.name.value == name)
    }
    pub fn children(&self) -> &[Node] {
        self.children.as_deref().unwrap_or(&[])
    }
    /// The span of the node's first line: its name, arguments and properties.
    pub fn head_span(&self) -> Span {
        let end = self
            .props
            .iter()
            .map(|p| p.value.span.end())
            .chain(self.args.iter().map(|a| a.span.end()))
            .chain(std::iter::once(self.name.span.end()))
            .max()
            .unwrap_or(self.name.span.end());
        Span::new(self.span.file, self.name.span.start, end - self.name.span.start)
    }
}

/// Parses `text` (file `file`) into its top-level nodes.
pub fn parse(file: FileId, text: &str) -> Result<Vec<Node>, Diagnostics> {
    let limits = limits::check(file, text);
    if !limits.is_empty() {
        return Err(limits);
    }
    match parse_kdl(text) {
        Ok(doc) => {
            if let Some(at) = limits::first_node_past_limit(&doc) {
                let mut diags = Diagnostics::new();
                diags.push(
                    Diagnostic::new(
                        &codes::TOO_MANY_NODES,
                        format!("the file has more than {} nodes", limits::MAX_NODES),
                    )
                    .at(span(file, at))
                    .label(format!("node {}", limits::MAX_NODES + 1)),
                );
                return Err(diags);
            }
            Ok(doc.nodes().iter().map(|n| convert(file, text, n)).collect())
        }
        Err(err) => {
            let mut diags = Diagnostics::new();
            // KDL v1 spellings are one diagnostic, and the parser's errors on their lines its
            // consequences; an unclosed block is reported at the node that opened it.
            let v1 = recover::kdl_v1(file, text);
            let line_of =
                |o: usize| text[..crate::diag::floor_char_boundary(text, o.min(text.len()))].matches('\n').count();
            let v1_lines: Vec<usize> = v1.iter().flat_map(|(_, r)| r.iter().map(|(s, _)| line_of(*s))).collect();
            let mut unclosed_done = false;
            if let Some((d, _)) = v1 {
                diags.push(d);
            }
            for d in &err.diagnostics {
                let (start, len) = offending_token(text, d.span.offset(), d.span.len());
                if v1_lines.contains(&line_of(start)) {
                    continue;
                }
                let message = d.message.clone().unwrap_or_default();
                if message.to_lowercase().contains("closing '}'") {
                    if unclosed_done {
                        continue;
                    }
                    if let Some(u) = recover::unclosed(file, text) {
                        unclosed_done = true;
                        diags.push(u);
                        continue;
                    }
                }
                let message = d.message.clone().unwrap_or_else(|| "invalid KDL".to_owned());
                let mut diag = Diagnostic::new(&codes::SYNTAX, lowercase_first(&message))
                    .at(Span::new(file, start, len))
                    .label(d.label.clone().unwrap_or_else(|| "here".to_owned()));
                diag.help = d.help.clone();
                let token = text.get(start..start + len).unwrap_or_default();
                if token.starts_with(|c: char| c.is_ascii_digit())
                    && token.contains('.')
                    && token.chars().all(|c| c.is_ascii_digit() || "./:-".contains(c))
                {
                    // An address, CIDR or version written bare: KDL reads it as a broken number.
                    diag.help = Some(format!(
                        "quote it: `\"{token}\"`; addresses, networks and versions are strings in fleet.kdl"
                    ));
                }
                diags.push(diag);
            }
            if diags.is_empty() {
                diags.push(Diagnostic::new(&codes::SYNTAX, "invalid KDL").at(Span::new(file, 0, 0)));
            }
            Err(diags)
        }
    }
}

/// The stack the KDL parser runs on: it descends about 6 KB per level of nesting, and
/// [`limits`] lets through at most [`limits::MAX_RAW_DEPTH`] levels however the text is read,
/// so this is room for all of them and more (reserved, not committed, until used).
const PARSER_STACK: usize = 256 << 20;

/// `kdl::KdlDocument::parse_v2` on a thread of its own with [`PARSER_STACK`] of stack:
/// defence in depth behind [`limits`], whose scan cannot know every way the parser recovers
/// from broken text.
pub(crate) fn parse_kdl(text: &str) -> Result<kdl::KdlDocument, kdl::KdlError> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("kdl-parser".to_owned())
            .stack_size(PARSER_STACK)
            .spawn_scoped(s, || kdl::KdlDocument::parse_v2(text))
            .map_or_else(
                |_| kdl::KdlDocument::parse_v2(text),
                |h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            )
    })
}

/// The parser's span of an error may start far before it (at the start of the file, or of
/// the enclosing node) and end at the token it could not take: a span over several lines is
/// narrowed to its last token, so that an editor shows the error where it is.
fn offending_token(text: &str, offset: usize, len: usize) -> (usize, usize) {
    use crate::diag::floor_char_boundary;
    let start = floor_char_boundary(text, offset.min(text.len()));
    let end = floor_char_boundary(text, offset.saturating_add(len).min(text.len())).max(start);
    if !text[start..end].contains('\n') {
        return (start, end - start);
    }
    let end = start + text[start..end].trim_end().len();
    let line_start = text[..end].rfind('\n').map_or(0, |i| i + 1).max(start);
    let is_delim = |c: char| c.is_whitespace() || "={};()".contains(c);
    let token_start = text[line_start..end].rfind(is_delim).map_or(line_start, |i| line_start + i + 1);
    if token_start < end {
        return (token_start, end - token_start);
    }
    // The span ends on a delimiter: point at that character.
    match text[..end].chars().next_back() {
        Some(c) if end > start => (end - c.len_utf8(), c.len_utf8()),
        _ => (end, 0),
    }
}

fn lowercase_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if !s.starts_with("KDL") => {
            f.to_lowercase().chain(c).collect::<String>().trim_end_matches('.').to_owned()
        }
        _ => s.trim_end_matches('.').to_owned(),
    }
}

fn span(file: FileId, s: miette::SourceSpan) -> Span {
    Span::new(file, s.offset(), s.len())
}

fn convert(file: FileId, text: &str, node: &kdl::KdlNode) -> Node {
    let name = Spanned::new(node.name().value().to_owned(), span(file, node.name().span()));
    let mut args = Vec::new();
    let mut props = Vec::new();
    for entry in node.entries() {
        let entry_span = span(file, entry.span());
        let kind = match entry.value() {
            kdl::KdlValue::String(s) => ValueKind::String(s.clone()),
            kdl::KdlValue::Integer(i) => ValueKind::Integer(*i),
            kdl::KdlValue::Float(f) => ValueKind::Float(*f),
            kdl::KdlValue::Bool(b) => ValueKind::Bool(*b),
            kdl::KdlValue::Null => ValueKind::Null,
        };
        match entry.name() {
            None => args.push(Value { kind, span: trim(text, entry_span) }),
            Some(key) => {
                let key_span = span(file, key.span());
                let value_span = after_equals(text, key_span.end(), entry_span);
                props.push(Prop {
                    name: Spanned::new(key.value().to_owned(), key_span),
                    value: Value { kind, span: value_span },
                });
            }
        }
    }
    let children = node.children().map(|doc| doc.nodes().iter().map(|n| convert(file, text, n)).collect());
    Node { name, args, props, children, span: trim(text, span(file, node.span())) }
}

/// Entry spans may include leading whitespace; point at the value itself.
fn trim(text: &str, s: Span) -> Span {
    let slice = text.get(s.start..s.end()).unwrap_or("");
    let lead = slice.len() - slice.trim_start().len();
    let body = slice.trim();
    Span::new(s.file, s.start + lead, body.len())
}

/// The value of `key = value` starts after the `=` and any whitespace.
fn after_equals(text: &str, key_end: usize, entry: Span) -> Span {
    let bytes = text.as_bytes();
    let mut i = key_end;
    while i < entry.end() && bytes.get(i).is_some_and(|b| b.is_ascii_whitespace() || *b == b'=') {
        i += 1;
    }
    let end = entry.end().max(i);
    trim(text, Span::new(entry.file, i, end - i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, s: Span) -> &str {
        &text[s.start..s.end()]
    }

    #[test]
    fn spans_point_at_values() {
        let text = "fleet \"acme\" {\n    pool \"system\" count=2 size = \"small\"\n}\n";
        let nodes = parse(FileId(0), text).unwrap();
        let pool = &nodes[0].children()[0];
        assert_eq!(slice(text, pool.name.span), "pool");
        assert_eq!(slice(text, pool.args[0].span), "\"system\"");
        assert_eq!(slice(text, pool.props[0].name.span), "count");
        assert_eq!(slice(text, pool.props[0].value.span), "2");
        assert_eq!(slice(text, pool.props[1].value.span), "\"small\"");
        assert_eq!(slice(text, pool.head_span()), "pool \"system\" count=2 size = \"small\"");
    }

    #[test]
    fn syntax_errors_point_at_the_token() {
        let text = "fleet \"a\" {\n    talos \"v1\"\n    endpoint address=10.10.0.10\n}\n";
        let diags = parse(FileId(0), text).unwrap_err();
        let d = diags.iter().next().unwrap();
        let s = d.span.unwrap();
        assert!(!text[s.start..s.end()].contains('\n'), "{:?}", &text[s.start..s.end()]);
        assert!(s.start > text.find("address").unwrap(), "{s:?}");
    }

    #[test]
    fn deep_nesting_is_refused_before_the_parser() {
        // Deep enough to overflow the parser's stack many times over.
        let text = "a {".repeat(100_000);
        let diags = parse(FileId(0), &text).unwrap_err();
        assert_eq!(diags.iter().next().unwrap().code.name, "fleet::limits::too-deep");
        assert!(fmt::format(FileId(0), &text).is_err());
    }

    #[test]
    fn node_count_is_bounded() {
        let text = "x\n".repeat(limits::MAX_NODES + 1);
        let diags = parse(FileId(0), &text).unwrap_err();
        let d = diags.iter().next().unwrap();
        assert_eq!(d.code.name, "fleet::limits::too-many-nodes");
        assert_eq!(d.span.unwrap().start, limits::MAX_NODES * 2);
    }

    #[test]
    fn syntax_errors_are_diagnostics() {
        let diags = parse(FileId(0), "fleet \"a\" {\n  x = \n").unwrap_err();
        assert!(diags.has_errors());
        assert!(diags.iter().all(|d| d.code.name == "fleet::syntax::invalid-kdl"));
    }
}
