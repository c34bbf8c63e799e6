//! Prints a [`Block`] in the canonical layout. Names, keys and string values come decoded
//! from `kdl`'s parse of the same text (zipped in order with the layout's nodes and entries);
//! numbers and keywords are printed as written; comments and slashdashed elements verbatim.

use kdl::{KdlEntry, KdlNode, KdlValue};

use super::layout::{Block, Entry, GroupEntry, ItemKind, Node};
use super::lexer::{Kind, Token, is_disallowed, is_ident_char, is_newline};

const INDENT: &str = "    ";

/// The layout and `kdl`'s tree disagree: a bug of the formatter, never of the input.
#[derive(Debug)]
pub(crate) struct Mismatch(pub usize);

pub(crate) struct Printer<'a> {
    src: &'a str,
    toks: &'a [Token],
    out: String,
}

impl<'a> Printer<'a> {
    pub fn new(src: &'a str, toks: &'a [Token]) -> Self {
        Printer { src, toks, out: String::with_capacity(src.len() + src.len() / 8) }
    }

    pub fn document(mut self, doc: &Block, nodes: &[KdlNode]) -> Result<String, Mismatch> {
        self.block(doc, nodes, 0)?;
        Ok(self.out)
    }

    fn text(&self, r: &std::ops::Range<usize>) -> &'a str {
        &self.src[r.clone()]
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str(INDENT);
        }
    }

    fn block(&mut self, block: &Block, nodes: &[KdlNode], depth: usize) -> Result<(), Mismatch> {
        let mut kdl_nodes = nodes.iter();
        for (i, item) in block.items.iter().enumerate() {
            if i > 0 && item.blank_before {
                self.out.push('\n');
            }
            self.indent(depth);
            match &item.kind {
                ItemKind::Verbatim(r) => self.out.push_str(self.text(r)),
                ItemKind::Node(n) => {
                    let k = kdl_nodes.next().ok_or(Mismatch(n.range.start))?;
                    self.node(n, k, depth)?;
                }
            }
            for t in &item.trailing {
                self.out.push(' ');
                self.out.push_str(self.text(t));
            }
            self.out.push('\n');
        }
        match kdl_nodes.next() {
            Some(k) => Err(Mismatch(k.span().offset())),
            None => Ok(()),
        }
    }

    fn node(&mut self, n: &Node, k: &KdlNode, depth: usize) -> Result<(), Mismatch> {
        let at = Mismatch(n.range.start);
        match (n.ty, k.ty()) {
            (Some(_), Some(ty)) => {
                self.out.push('(');
                self.out.push_str(&ident(ty.value()));
                self.out.push(')');
            }
            (None, None) => {}
            _ => return Err(at),
        }
        self.out.push_str(&ident(k.name().value()));

        // Entries are zipped with kdl's in written order, then printed arguments first.
        let mut kdl_entries = k.entries().iter();
        let mut args = Vec::new();
        let mut props = Vec::new();
        for g in &n.groups {
            let mut s = String::new();
            for l in &g.lead {
                s.push(' ');
                s.push_str(self.text(l));
            }
            s.push(' ');
            match &g.entry {
                GroupEntry::Slashdashed { range, .. } => s.push_str(self.text(range)),
                GroupEntry::Entry(e) => {
                    let ke = kdl_entries.next().ok_or(Mismatch(n.range.start))?;
                    self.entry(&mut s, e, ke).map_err(|()| Mismatch(self.toks[e.value].start))?;
                }
            }
            if g.entry.is_prop() { props.push(s) } else { args.push(s) }
        }
        if kdl_entries.next().is_some() {
            return Err(at);
        }
        for s in args.iter().chain(&props) {
            self.out.push_str(s);
        }
        for t in &n.tail {
            self.out.push(' ');
            self.out.push_str(self.text(t));
        }
        match (&n.children, k.children()) {
            (Some(block), Some(doc)) => {
                if block.items.is_empty() && block.open_trailing.is_empty() {
                    self.out.push_str(" {}");
                } else {
                    self.out.push_str(" {");
                    for t in &block.open_trailing {
                        self.out.push(' ');
                        self.out.push_str(self.text(t));
                    }
                    self.out.push('\n');
                    self.block(block, doc.nodes(), depth + 1)?;
                    self.indent(depth);
                    self.out.push('}');
                }
            }
            (None, None) => {}
            _ => return Err(at),
        }
        for t in &n.after {
            self.out.push(' ');
            self.out.push_str(self.text(t));
        }
        Ok(())
    }

    fn entry(&self, s: &mut String, e: &Entry, k: &KdlEntry) -> Result<(), ()> {
        match (e.key, k.name()) {
            (Some(_), Some(key)) => {
                s.push_str(&ident(key.value()));
                s.push('=');
            }
            (None, None) => {}
            _ => return Err(()),
        }
        match (e.ty, k.ty()) {
            (Some(_), Some(ty)) => {
                s.push('(');
                s.push_str(&ident(ty.value()));
                s.push(')');
            }
            (None, None) => {}
            _ => return Err(()),
        }
        let tok = self.toks[e.value];
        match (tok.kind, k.value()) {
            (Kind::Number | Kind::Keyword, _) => s.push_str(tok.text(self.src)),
            (Kind::Quoted | Kind::Raw | Kind::Ident, KdlValue::String(v)) => s.push_str(&quote(v)),
            _ => return Err(()),
        }
        Ok(())
    }
}

/// A node name, property key or type: bare when KDL v2 reads it back as the same string.
pub(crate) fn ident(s: &str) -> String {
    if is_bare(s) { s.to_owned() } else { quote(s) }
}

fn is_bare(s: &str) -> bool {
    if s.is_empty() || !s.chars().all(is_ident_char) || matches!(s, "true" | "false" | "null" | "inf" | "-inf" | "nan")
    {
        return false;
    }
    let rest = s.strip_prefix(['+', '-']).unwrap_or(s);
    let rest_digit = |r: &str| r.chars().next().is_some_and(|c| c.is_ascii_digit());
    if rest_digit(rest) {
        return false;
    }
    match rest.strip_prefix('.') {
        Some(after_dot) => !rest_digit(after_dot),
        None => true,
    }
}

/// A quoted string with KDL v2 escapes: `"` and `\`, the usual control escapes, and `\u{…}`
/// for every other control, newline or disallowed code point (bidi controls included).
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if is_newline(c) || is_disallowed(c) || c.is_control() => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_only_when_unambiguous() {
        for bare in ["fleet", "pool-defaults", "-x", ".x", "+.x", "a.b", "ä"] {
            assert_eq!(ident(bare), bare);
        }
        for quoted in ["", "1a", "-1", ".5", "+.5", "true", "nan", "-inf", "a b", "a=b", "a/b", "#x", "(x)"] {
            assert_eq!(ident(quoted), quote(quoted), "{quoted}");
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(quote("a\"b\\c\nd\te"), r#""a\"b\\c\nd\te""#);
        assert_eq!(quote("x\u{202e}y\u{85}z\u{7f}"), r#""x\u{202e}y\u{85}z\u{7f}""#);
        assert_eq!(quote("${x} %{y} #: é"), "\"${x} %{y} #: é\"");
    }
}
