//! Identifier checks, string escaping, and the document validator.

use std::collections::HashSet;
use std::fmt::{self, Write as _};

use super::{Body, Expr, HclError, HclErrorKind, Item, NameRole, Step, TemplatePart, Traversal};

/// Why a name is not an identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentError {
    /// The name is empty.
    Empty,
    /// The first character is not an ASCII letter or `_`.
    BadStart(char),
    /// A later character is not an ASCII letter, digit, `_` or `-`.
    BadChar { index: usize, ch: char },
    /// `true`, `false`, `null` or `for` cannot start a reference: HCL reads them
    /// as literals or a `for` expression.
    Keyword,
}

impl fmt::Display for IdentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const RULE: &str =
            "an identifier starts with an ASCII letter or '_' and goes on with ASCII letters, digits, '_' or '-'";
        match self {
            IdentError::Empty => write!(f, "it is empty; {RULE}"),
            IdentError::BadStart(ch) => write!(f, "it starts with {ch:?}; {RULE}"),
            IdentError::BadChar { index, ch } => {
                write!(f, "character {ch:?} at byte {index} is not allowed; {RULE}")
            }
            IdentError::Keyword => f.write_str("it is an HCL keyword (true, false, null, for), not a variable"),
        }
    }
}

impl std::error::Error for IdentError {}

/// Checks `name` against the identifier rule this writer enforces: the ASCII
/// subset of HCL's `ID_Start (ID_Continue | '-')*`, i.e. `[A-Za-z_][A-Za-z0-9_-]*`.
/// Callers use it to refuse a user-supplied name with their own diagnostic.
pub fn validate_identifier(name: &str) -> Result<(), IdentError> {
    let mut chars = name.char_indices();
    match chars.next() {
        None => return Err(IdentError::Empty),
        Some((_, c)) if c.is_ascii_alphabetic() || c == '_' => {}
        Some((_, c)) => return Err(IdentError::BadStart(c)),
    }
    for (index, ch) in chars {
        if !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-') {
            return Err(IdentError::BadChar { index, ch });
        }
    }
    Ok(())
}

/// Keywords that an HCL parser does not read as a plain variable or key.
fn is_keyword(name: &str) -> bool {
    matches!(name, "true" | "false" | "null" | "for")
}

/// True when an object key can be written bare: an identifier that the parser
/// cannot mistake for a literal, a `for` expression or a template keyword.
pub(super) fn is_bare_key(key: &str) -> bool {
    validate_identifier(key).is_ok()
        && !matches!(key, "true" | "false" | "null" | "for" | "in" | "if" | "else" | "endif" | "endfor")
}

/// Characters written as `\uNNNN` even though HCL would accept them raw:
/// control characters and invisible formatting characters (bidi embeddings,
/// overrides and isolates, zero-width characters, line and paragraph
/// separators, BOM, interlinear annotation marks).
pub(super) fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

fn push_unicode_escape(out: &mut String, c: char) {
    let n = u32::from(c);
    // Writing to a String cannot fail.
    let _ = if n <= 0xFFFF { write!(out, "\\u{n:04X}") } else { write!(out, "\\U{n:08X}") };
}

/// Appends `s` escaped for the inside of a quoted HCL string. With
/// `ascii_only`, every non-ASCII character is escaped too (used for object
/// keys, whose width must be known for `=` alignment).
pub(super) fn escape_into(out: &mut String, s: &str, ascii_only: bool) {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if is_hidden(c) || (ascii_only && !c.is_ascii()) => push_unicode_escape(out, c),
            c => out.push(c),
        }
    }
}

/// `s` as a quoted HCL string.
pub(super) fn quoted(s: &str, ascii_only: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    escape_into(&mut out, s, ascii_only);
    out.push('"');
    out
}

/// One comment line's text made safe: hidden characters shown as `\uNNNN`
/// (tab kept), trailing whitespace dropped.
pub(super) fn comment_text(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c != '\t' && is_hidden(c) {
            push_unicode_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// One step of the path to a node, kept as borrowed parts and written out only when a
/// problem is recorded (most documents have none, and formatting every step was most of the
/// validator's time).
#[derive(Clone, Copy)]
enum PathStep<'a> {
    /// An attribute's name.
    Attr(&'a str),
    /// A block: its type and labels (`resource "a" "b"`).
    Block(&'a str, &'a [String]),
    /// A fixed step: `${}`, `?:`, `for`, `[]`.
    Fixed(&'static str),
    /// A function call's argument, counted from 1.
    Arg(&'a str, usize),
    /// A list element.
    Index(usize),
    /// An object entry.
    Key(&'a str),
}

impl fmt::Display for PathStep<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathStep::Attr(name) => f.write_str(name),
            PathStep::Block(ident, labels) => {
                f.write_str(ident)?;
                for label in labels.iter() {
                    write!(f, " {label:?}")?;
                }
                Ok(())
            }
            PathStep::Fixed(step) => f.write_str(step),
            PathStep::Arg(name, n) => write!(f, "{name}() argument {n}"),
            PathStep::Index(i) => write!(f, "[{i}]"),
            PathStep::Key(key) => write!(f, "[{key:?}]"),
        }
    }
}

/// Walks a document and records every problem, with its location.
#[derive(Default)]
pub(super) struct Validator<'a> {
    pub(super) errors: Vec<HclError>,
    path: Vec<PathStep<'a>>,
}

impl<'a> Validator<'a> {
    fn fail(&mut self, kind: HclErrorKind) {
        let mut at = String::new();
        for (i, step) in self.path.iter().enumerate() {
            if i > 0 {
                at.push_str(" > ");
            }
            let _ = write!(at, "{step}");
        }
        self.errors.push(HclError { at, kind });
    }

    fn name(&mut self, role: NameRole, name: &str) {
        let reason = match validate_identifier(name) {
            Err(reason) => reason,
            Ok(()) if role == NameRole::ReferenceRoot && is_keyword(name) => IdentError::Keyword,
            Ok(()) => return,
        };
        self.fail(HclErrorKind::InvalidName { role, name: name.to_owned(), reason });
    }

    fn nested(&mut self, step: PathStep<'a>, f: impl FnOnce(&mut Self)) {
        self.path.push(step);
        f(self);
        self.path.pop();
    }

    pub(super) fn body(&mut self, body: &'a Body) {
        let mut seen = HashSet::new();
        for item in &body.items {
            match item {
                Item::Attr(attr) => {
                    self.name(NameRole::Attribute, &attr.name);
                    if !seen.insert(attr.name.as_str()) {
                        self.fail(HclErrorKind::DuplicateAttribute(attr.name.clone()));
                    }
                    self.nested(PathStep::Attr(&attr.name), |v| v.expr(&attr.value));
                }
                Item::Block(block) => {
                    self.name(NameRole::BlockType, &block.ident);
                    for label in &block.labels {
                        self.name(NameRole::BlockLabel, label);
                    }
                    self.nested(PathStep::Block(&block.ident, &block.labels), |v| v.body(&block.body));
                }
                Item::Blank | Item::Comment(_) => {}
            }
        }
    }

    fn expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Str(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Null => {}
            Expr::Float(n) => {
                if !n.is_finite() {
                    self.fail(HclErrorKind::NonFiniteNumber);
                }
            }
            Expr::Template(t) => {
                for part in &t.parts {
                    if let TemplatePart::Interp(e) = part {
                        self.nested(PathStep::Fixed("${}"), |v| v.expr(e));
                    }
                }
            }
            Expr::Ref(t) => self.traversal(t),
            Expr::Call(name, args) => {
                if name.contains("::") {
                    for segment in name.split("::") {
                        self.name(NameRole::Function, segment);
                    }
                } else {
                    self.name(NameRole::Function, name);
                }
                for (i, arg) in args.iter().enumerate() {
                    self.nested(PathStep::Arg(name, i + 1), |v| v.expr(arg));
                }
            }
            Expr::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.nested(PathStep::Index(i), |v| v.expr(item));
                }
            }
            Expr::Object(entries) => {
                let mut seen = HashSet::new();
                for (key, value) in entries {
                    if !seen.insert(key.as_str()) {
                        self.fail(HclErrorKind::DuplicateKey(key.clone()));
                    }
                    self.nested(PathStep::Key(key), |v| v.expr(value));
                }
            }
            Expr::Cond(c, a, b) => {
                self.nested(PathStep::Fixed("?:"), |v| {
                    v.expr(c);
                    v.expr(a);
                    v.expr(b);
                });
            }
            Expr::For(f) => {
                if let Some(k) = &f.key_var {
                    self.name(NameRole::ReferenceRoot, k);
                }
                self.name(NameRole::ReferenceRoot, &f.value_var);
                self.nested(PathStep::Fixed("for"), |v| {
                    v.expr(&f.collection);
                    if let Some(k) = &f.key {
                        v.expr(k);
                    }
                    v.expr(&f.value);
                    if let Some(c) = &f.cond {
                        v.expr(c);
                    }
                });
            }
        }
    }

    fn traversal(&mut self, t: &'a Traversal) {
        self.name(NameRole::ReferenceRoot, &t.root);
        for step in &t.steps {
            match step {
                Step::Attr(name) => self.name(NameRole::ReferenceAttribute, name),
                Step::Index(key) => self.nested(PathStep::Fixed("[]"), |v| v.expr(key)),
                Step::Splat => {}
            }
        }
    }
}
