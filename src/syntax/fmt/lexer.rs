//! A lossless KDL v2 lexer for the formatter: every byte of the input belongs to exactly one
//! [`Token`], comments and whitespace included, so that nothing can be dropped without the
//! formatter knowing. It runs only on text that `kdl` has already accepted; on anything else
//! it still never panics (an unexpected character becomes a one-character [`Kind::Other`]).

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A run of `unicode-space` characters (and a byte-order mark).
    Space,
    /// One newline sequence (`\r\n` counts as one).
    Newline,
    /// `// …` up to, not including, the newline.
    LineComment,
    /// `/* … */`, nested comments included.
    BlockComment,
    /// `/-`
    Slashdash,
    /// The `\` of a line continuation.
    Escline,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Semi,
    Equals,
    /// A quoted string, single- or multi-line.
    Quoted,
    /// A raw string (`#"…"#`, `##"""…"""##`).
    Raw,
    /// A bare identifier string.
    Ident,
    /// A number, as written (`0x0A`, `1_000`, `1.5e-3`).
    Number,
    /// `#true`, `#false`, `#null`, `#inf`, `#-inf`, `#nan`.
    Keyword,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

impl Token {
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start..self.end]
    }
    /// A string of any form: a node name, a property key or a string value.
    pub fn is_string(&self) -> bool {
        matches!(self.kind, Kind::Quoted | Kind::Raw | Kind::Ident)
    }
}

/// `unicode-space` of the KDL v2 grammar, plus the byte-order mark (allowed at the start).
pub(crate) fn is_space(c: char) -> bool {
    matches!(
        c,
        '\u{0009}' | '\u{0020}' | '\u{00A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// `newline` of the KDL v2 grammar (`\r\n` is handled by the lexer as one).
pub(crate) fn is_newline(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{0085}' | '\u{000B}' | '\u{000C}' | '\u{2028}' | '\u{2029}')
}

/// `disallowed-literal-code-points`: never written literally, in strings or elsewhere.
pub(crate) fn is_disallowed(c: char) -> bool {
    matches!(
        c,
        '\u{0000}'..='\u{0008}'
            | '\u{000E}'..='\u{001F}'
            | '\u{007F}'
            | '\u{200E}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

/// `identifier-char`.
pub(crate) fn is_ident_char(c: char) -> bool {
    !is_space(c)
        && !is_newline(c)
        && !is_disallowed(c)
        && !matches!(c, '\\' | '/' | '(' | ')' | '{' | '}' | '[' | ']' | ';' | '"' | '#' | '=')
}

/// Splits `src` into tokens covering every byte, in order.
pub(crate) fn lex(src: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut pos = 0;
    while pos < src.len() {
        let (kind, end) = next(src, pos);
        debug_assert!(end > pos);
        tokens.push(Token { kind, start: pos, end });
        pos = end;
    }
    tokens
}

fn next(src: &str, pos: usize) -> (Kind, usize) {
    let rest = &src[pos..];
    let c = rest.chars().next().expect("pos < len");
    let one = pos + c.len_utf8();
    if is_space(c) {
        return (Kind::Space, pos + take_while(rest, is_space));
    }
    if c == '\r' && rest.starts_with("\r\n") {
        return (Kind::Newline, pos + 2);
    }
    if is_newline(c) {
        return (Kind::Newline, one);
    }
    match c {
        '/' if rest.starts_with("//") => (Kind::LineComment, pos + take_while(rest, |c| !is_newline(c))),
        '/' if rest.starts_with("/*") => (Kind::BlockComment, pos + block_comment(rest)),
        '/' if rest.starts_with("/-") => (Kind::Slashdash, pos + 2),
        '\\' => (Kind::Escline, one),
        '{' => (Kind::LBrace, one),
        '}' => (Kind::RBrace, one),
        '(' => (Kind::LParen, one),
        ')' => (Kind::RParen, one),
        ';' => (Kind::Semi, one),
        '=' => (Kind::Equals, one),
        '"' => (Kind::Quoted, pos + quoted(rest)),
        '#' => {
            let hashes = rest.len() - rest.trim_start_matches('#').len();
            if rest[hashes..].starts_with('"') {
                (Kind::Raw, pos + raw(rest, hashes))
            } else {
                (Kind::Keyword, pos + 1 + take_while(&rest[1..], is_ident_char))
            }
        }
        _ if is_ident_char(c) => {
            let len = take_while(rest, is_ident_char);
            let mut chars = rest.chars();
            let first = chars.next();
            let second = chars.next();
            let numeric = first.is_some_and(|f| f.is_ascii_digit())
                || (matches!(first, Some('+' | '-')) && second.is_some_and(|s| s.is_ascii_digit()));
            (if numeric { Kind::Number } else { Kind::Ident }, pos + len)
        }
        _ => (Kind::Other, one),
    }
}

/// Byte length of the longest prefix whose characters satisfy `f`.
fn take_while(s: &str, f: impl Fn(char) -> bool) -> usize {
    s.char_indices().find(|&(_, c)| !f(c)).map_or(s.len(), |(i, _)| i)
}

/// Length of a (nested) block comment at the start of `s`; the rest of `s` when unclosed.
fn block_comment(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if bytes[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    s.len()
}

/// Length of a quoted string (`"…"` or `"""…"""`) at the start of `s`.
fn quoted(s: &str) -> usize {
    let multi = s.starts_with("\"\"\"");
    let (open, close) = if multi { (3, "\"\"\"") } else { (1, "\"") };
    let bytes = s.as_bytes();
    let mut i = open;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
        } else if bytes[i..].starts_with(close.as_bytes()) {
            return i + close.len();
        } else {
            i += 1;
        }
    }
    floor_boundary(s, s.len())
}

/// Length of a raw string with `hashes` leading `#` at the start of `s`.
fn raw(s: &str, hashes: usize) -> usize {
    let body = &s[hashes..];
    let quotes = if body.starts_with("\"\"\"") { "\"\"\"" } else { "\"" };
    let close = format!("{quotes}{}", "#".repeat(hashes));
    body[quotes.len()..].find(&close).map_or(s.len(), |i| hashes + quotes.len() + i + close.len())
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Kind, &str)> {
        lex(src).into_iter().map(|t| (t.kind, t.text(src))).collect()
    }

    #[test]
    fn every_byte_is_in_one_token() {
        let src = "n (t)0x0A #\"r\"# \"a\\\"b\" k=#true /* x /* y */ */ /-m\r\n// c\n\"\"\"\n  ml\n  \"\"\"";
        let joined: String = lex(src).iter().map(|t| t.text(src)).collect();
        assert_eq!(joined, src);
    }

    #[test]
    fn tokens_of_a_node() {
        use Kind::*;
        assert_eq!(
            kinds("(t)n 0x0A k=#\"r\"# /- x // c\n"),
            vec![
                (LParen, "("),
                (Ident, "t"),
                (RParen, ")"),
                (Ident, "n"),
                (Space, " "),
                (Number, "0x0A"),
                (Space, " "),
                (Ident, "k"),
                (Equals, "="),
                (Raw, "#\"r\"#"),
                (Space, " "),
                (Slashdash, "/-"),
                (Space, " "),
                (Ident, "x"),
                (Space, " "),
                (LineComment, "// c"),
                (Newline, "\n"),
            ]
        );
    }

    #[test]
    fn nested_block_comments_and_multiline_strings() {
        assert_eq!(kinds("/* a /* b */ c */x")[0], (Kind::BlockComment, "/* a /* b */ c */"));
        assert_eq!(kinds("\"\"\"\n a \"\" b\n \"\"\" x")[0], (Kind::Quoted, "\"\"\"\n a \"\" b\n \"\"\""));
        assert_eq!(kinds("##\"a\"#b\"## x")[0], (Kind::Raw, "##\"a\"#b\"##"));
        assert_eq!(kinds("-1.5e-3 -x")[0], (Kind::Number, "-1.5e-3"));
        assert_eq!(kinds("-1.5e-3 -x")[2], (Kind::Ident, "-x"));
        assert_eq!(kinds("#-inf")[0], (Kind::Keyword, "#-inf"));
    }
}
