//! Bounds on the text, checked by one linear scan before the KDL parser sees it: size, line
//! length and nesting depth. The parser descends once per `{` (and once per nested `/*`),
//! so text that passes here cannot exhaust its stack; a file that is too large or has a line
//! too long would cost time and memory for nothing. Each limit is its own diagnostic
//! (`fleet::limits::*`) at the place where it is first exceeded.
//!
//! The scan knows exactly as much KDL as it needs to tell braces from text: comments
//! (`//`, nested `/* */`), quoted, multi-line and raw strings. Where it is unsure (an
//! unterminated single-line string) it ends the string at the newline, as the parser does, so
//! it can only count more braces than the parser would, never fewer.

use crate::diag::{Diagnostic, Diagnostics, FileId, Span, codes};

/// Largest fleet.kdl, in bytes.
pub const MAX_BYTES: usize = 1 << 20;
/// Longest line, in characters.
pub const MAX_LINE_CHARS: usize = 16_384;
/// Deepest nesting of `{ }` blocks, and of `/* */` comments.
pub const MAX_DEPTH: usize = 64;
/// Deepest nesting of every `{` and `}` of the text, strings and comments included: the
/// parser recovers from broken text in ways a scan cannot know (a `"` it does not take as a
/// string), so this bound holds whatever it reads as a string. `syntax::parse_kdl` gives the
/// parser the stack for it.
pub const MAX_RAW_DEPTH: usize = 4_096;
/// Most KDL nodes in one file.
pub const MAX_NODES: usize = 10_000;

/// Every limit `text` exceeds, each at its first place; empty when the text is within bounds.
pub fn check(file: FileId, text: &str) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if text.len() > MAX_BYTES {
        diags.push(
            Diagnostic::new(
                &codes::FILE_TOO_LARGE,
                format!("the file has {} bytes; at most {MAX_BYTES} are read", text.len()),
            )
            .at(Span::new(file, MAX_BYTES.min(text.len()), 0))
            .label("the limit is reached here"),
        );
        // Nothing past the limit is scanned: the scan itself stays bounded.
        return diags;
    }
    let mut s = Scan { text, bytes: text.as_bytes(), pos: 0, depth: 0, line_start: 0, line_chars: 0 };
    let mut deep: Option<usize> = None;
    let mut long: Option<usize> = None;
    while s.pos < s.bytes.len() {
        let b = s.bytes[s.pos];
        match b {
            b'{' => {
                s.depth += 1;
                if s.depth > MAX_DEPTH && deep.is_none() {
                    deep = Some(s.pos);
                }
                s.advance(1);
            }
            b'}' => {
                s.depth = s.depth.saturating_sub(1);
                s.advance(1);
            }
            b'/' if s.at(b"//") => {
                while s.pos < s.bytes.len() && s.bytes[s.pos] != b'\n' {
                    s.advance_char(&mut long);
                }
            }
            b'/' if s.at(b"/*") => {
                let mut nest = 0usize;
                while s.pos < s.bytes.len() {
                    if s.at(b"/*") {
                        nest += 1;
                        if nest > MAX_DEPTH && deep.is_none() {
                            deep = Some(s.pos);
                        }
                        s.advance(2);
                    } else if s.at(b"*/") {
                        s.advance(2);
                        nest -= 1;
                        if nest == 0 {
                            break;
                        }
                    } else {
                        s.advance_char(&mut long);
                    }
                }
            }
            b'"' if s.at(b"\"\"\"") => {
                s.advance(3);
                s.string(b"\"\"\"", true, &mut long);
            }
            b'"' => {
                s.advance(1);
                s.string(b"\"", false, &mut long);
            }
            b'#' => {
                let hashes = s.bytes[s.pos..].iter().take_while(|&&c| c == b'#').count();
                let after = &s.bytes[s.pos + hashes..];
                if after.starts_with(b"\"") {
                    let multi = after.starts_with(b"\"\"\"");
                    let quotes = if multi { 3 } else { 1 };
                    let mut close = vec![b'"'; quotes];
                    close.extend(std::iter::repeat_n(b'#', hashes));
                    s.advance(hashes + quotes);
                    s.raw(&close, multi, &mut long);
                } else {
                    s.advance(1);
                }
            }
            _ => s.advance_char(&mut long),
        }
    }
    s.end_line(&mut long);
    if deep.is_none() {
        let mut raw = 0usize;
        for (i, b) in s.bytes.iter().enumerate() {
            match b {
                b'{' => {
                    raw += 1;
                    if raw > MAX_RAW_DEPTH {
                        diags.push(
                            Diagnostic::new(
                                &codes::TOO_DEEP,
                                format!("braces nest deeper than {MAX_RAW_DEPTH} levels, counting those in strings"),
                            )
                            .at(Span::new(file, i, 1))
                            .label(format!("brace {}", MAX_RAW_DEPTH + 1)),
                        );
                        break;
                    }
                }
                b'}' => raw = raw.saturating_sub(1),
                _ => {}
            }
        }
    }
    if let Some(at) = deep {
        diags.push(
            Diagnostic::new(&codes::TOO_DEEP, format!("blocks nest deeper than {MAX_DEPTH} levels"))
                .at(Span::new(file, at, 1))
                .label(format!("level {}", MAX_DEPTH + 1)),
        );
    }
    if let Some(at) = long {
        let len = text[at..].chars().next().map_or(0, char::len_utf8);
        diags.push(
            Diagnostic::new(&codes::LINE_TOO_LONG, format!("a line is longer than {MAX_LINE_CHARS} characters"))
                .at(Span::new(file, at, len))
                .label("the limit is reached here"),
        );
    }
    diags
}

struct Scan<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    line_start: usize,
    line_chars: usize,
}

impl Scan<'_> {
    fn at(&self, s: &[u8]) -> bool {
        self.bytes[self.pos..].starts_with(s)
    }
    /// Advances over ASCII bytes that are neither newlines nor line-long.
    fn advance(&mut self, n: usize) {
        self.pos += n;
        self.line_chars += n;
    }
    /// Advances over one character, keeping line lengths.
    fn advance_char(&mut self, long: &mut Option<usize>) {
        let c = self.text[self.pos..].chars().next().expect("pos < len");
        if c == '\n' {
            self.end_line(long);
            self.pos += 1;
            self.line_start = self.pos;
            self.line_chars = 0;
        } else {
            self.pos += c.len_utf8();
            self.line_chars += 1;
        }
    }
    /// Records the first line longer than the limit, at the first character past it.
    fn end_line(&mut self, long: &mut Option<usize>) {
        if self.line_chars > MAX_LINE_CHARS && long.is_none() {
            let line = &self.text[self.line_start..];
            *long = line.char_indices().nth(MAX_LINE_CHARS).map(|(i, _)| self.line_start + i);
        }
    }
    /// A quoted string's body up to `close`; a single-line one also ends at a newline that
    /// is not escaped (the parser reports it; the scan goes on with the next line as text).
    fn string(&mut self, close: &[u8], multi: bool, long: &mut Option<usize>) {
        while self.pos < self.bytes.len() {
            if self.bytes[self.pos] == b'\\' {
                self.advance(1);
                if self.pos < self.bytes.len() {
                    self.advance_char(long);
                }
            } else if self.at(close) {
                self.advance(close.len());
                return;
            } else if !multi && self.bytes[self.pos] == b'\n' {
                return;
            } else {
                self.advance_char(long);
            }
        }
    }
    /// A raw string's body up to `close` (no escapes).
    fn raw(&mut self, close: &[u8], multi: bool, long: &mut Option<usize>) {
        while self.pos < self.bytes.len() {
            if self.at(close) {
                self.advance(close.len());
                return;
            } else if !multi && self.bytes[self.pos] == b'\n' {
                return;
            } else {
                self.advance_char(long);
            }
        }
    }
}

/// The number of nodes of a parsed document, children and slashdashed ones excluded, and
/// the span of the first node past [`MAX_NODES`].
pub fn first_node_past_limit(doc: &kdl::KdlDocument) -> Option<miette::SourceSpan> {
    let mut count = 0usize;
    let mut stack = vec![doc];
    while let Some(d) = stack.pop() {
        for n in d.nodes() {
            count += 1;
            if count > MAX_NODES {
                return Some(n.name().span());
            }
            if let Some(c) = n.children() {
                stack.push(c);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes_of(text: &str) -> Vec<&'static str> {
        check(FileId(0), text).iter().map(|d| d.code.name).collect()
    }

    #[test]
    fn within_bounds_is_silent() {
        assert!(codes_of("fleet \"a\" { x { y \"{{{{\" /* { */ } }\n").is_empty());
    }

    #[test]
    fn depth_counts_braces_outside_strings_and_comments() {
        let deep = "a {".repeat(MAX_DEPTH + 1);
        let d = check(FileId(0), &deep);
        assert_eq!(d.iter().map(|d| d.code.name).collect::<Vec<_>>(), ["fleet::limits::too-deep"]);
        assert_eq!(d.iter().next().unwrap().span.unwrap().start, deep.len() - 1);
        let quoted = format!("a \"{}\"", "{".repeat(1000));
        assert!(codes_of(&quoted).is_empty());
        let raw = format!("a #\"{}\"# b ##\"\"\"\n{}\"\"\"##", "{".repeat(1000), "{".repeat(1000));
        assert!(codes_of(&raw).is_empty());
        // An unterminated string ends at its line: the braces after it count.
        let lost = format!("a \"x\n{}", "{".repeat(MAX_DEPTH + 1));
        assert_eq!(codes_of(&lost), ["fleet::limits::too-deep"]);
        // However the text reads, more than MAX_RAW_DEPTH unclosed `{` are refused.
        let raw = format!("a \"{}\"", "{".repeat(MAX_RAW_DEPTH + 1));
        assert_eq!(codes_of(&raw), ["fleet::limits::too-deep"]);
        let comments = "/*".repeat(MAX_DEPTH + 1);
        assert_eq!(codes_of(&comments), ["fleet::limits::too-deep"]);
    }

    #[test]
    fn long_lines_and_large_files() {
        let long = format!("a \"{}\"\n", "é".repeat(MAX_LINE_CHARS));
        let d = check(FileId(0), &long);
        let span = d.iter().next().unwrap().span.unwrap();
        assert_eq!(long[..span.start].chars().count(), MAX_LINE_CHARS);
        assert_eq!(codes_of(&"x".repeat(MAX_BYTES + 1)), ["fleet::limits::file-too-large"]);
    }
}
