//! YAML output: the one way fleetc writes YAML.
//!
//! Every emitter that produces YAML (Talos machine configs, Cluster API and
//! Argo CD manifests, ...) goes through [`to_yaml`] or [`documents`]. They
//! serialize with `serde-saphyr` under one fixed set of options (see
//! [`options`]) and promise this: **every string in the value reads back as
//! the same string, whether the reader uses YAML 1.2 (core schema) or YAML 1.1
//! implicit typing**. YAML 1.1 matters because the readers that consume
//! fleetc's output, such as kubectl's `sigs.k8s.io/yaml`, go-yaml decoding
//! into typed Go fields, and PyYAML, still turn a bare `on`, `yes`, `n`, `~`,
//! `1:30`, `017`, `0x1F`, `1_000` or `2001-12-14` into a boolean, null, number
//! or timestamp. So any string that some YAML 1.1 or YAML 1.2 resolver would
//! type as something else is quoted. Non-string values (integers, floats,
//! booleans, null) are written in their canonical spelling, which both YAML
//! versions read as the same type and value. Characters that YAML 1.1 treats
//! as line breaks (CR, NEL, U+2028, U+2029) never appear raw; they are escaped
//! inside double quotes.
//!
//! The guarantee is enforced twice. `serde-saphyr` (with `yaml_12: false`, its
//! default) already quotes YAML 1.1 lookalikes. Then [`to_yaml`] re-parses its
//! own output with the event parser and runs [`plain_scalar_hazards`] (each distinct
//! document text once per thread: the verdict depends on the text alone). If any
//! plain scalar could be read as a non-canonical non-string, it returns
//! [`YamlError::Hazard`] rather than output that would be misread. Tests go
//! further with [`typed_scalar_hazards`], which also knows which scalars were
//! strings, so it catches a string `"3"` or `"true"` written bare.
//!
//! Layout: block style with 2-space indentation. Sequences are "compact", in
//! the style `kubectl get -o yaml` writes: a list under a key starts at the
//! key's own column (`containers:\n- name: x`). Map keys are written in
//! serialization order, which is struct field order or `BTreeMap`/`IndexMap`
//! order (emitters must not serialize `HashMap`s). Empty maps and lists are
//! written as `{}` and `[]`, and `None`/unit as `null`. A string with a line
//! break becomes a literal block scalar (`|`, `|-` or `|+` to keep its
//! trailing newlines exactly, plus an indentation indicator such as `|2` when
//! the first line starts with a space). The exception is content a block
//! scalar cannot carry exactly (CR, NEL, U+2028, U+2029, BOM, other control
//! characters), which goes in double quotes with escapes. Long lines are
//! never folded or wrapped. A key longer than YAML's 1024-character limit for
//! implicit keys is written as an explicit `? key` entry. Other Unicode,
//! including emoji and bidi controls such as U+202E, is written as is, and it
//! round-trips.

use std::fmt;

use serde::Serialize;
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

/// Why YAML could not be written.
#[derive(Debug)]
pub enum YamlError {
    /// `serde-saphyr` rejected the value (for example a map with a non-scalar key).
    Serialize(serde_saphyr::SerializeError),
    /// The header passed to [`documents`] is not a single line.
    Header(String),
    /// The serialized text failed the re-parse safety check: it would be misread by a
    /// YAML 1.1 or YAML 1.2 reader, or does not parse at all. Each entry names one problem.
    Hazard(Vec<String>),
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            YamlError::Serialize(e) => write!(f, "cannot serialize as YAML: {e}"),
            YamlError::Header(h) => {
                write!(f, "YAML header comment must be a single line, got {h:?}")
            }
            YamlError::Hazard(hazards) => {
                write!(f, "serialized YAML would be misread by a YAML 1.1 or 1.2 reader: {}", hazards.join("; "))
            }
        }
    }
}

impl std::error::Error for YamlError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            YamlError::Serialize(e) => Some(e),
            _ => None,
        }
    }
}

impl From<serde_saphyr::SerializeError> for YamlError {
    fn from(e: serde_saphyr::SerializeError) -> Self {
        YamlError::Serialize(e)
    }
}

/// The `serde-saphyr` serializer options every fleetc YAML file is written with.
///
/// * `indent_step: 2` with `compact_list_indent: true`: kubectl's layout.
/// * `yaml_12: false` (the default; set explicitly because the guarantee depends on it):
///   quote strings that YAML 1.1 would type (`yes`, `on`, `1:30`, `2001-12-14`, `<<`, ...),
///   not only YAML 1.2 lookalikes. It also leaves out the `%YAML 1.2` directive.
/// * `quote_all: false`: quote only when needed, so manifests stay readable; the
///   re-parse check in [`to_yaml`] covers the quoting decisions.
/// * `prefer_block_scalars: true`: multi-line strings become literal `|` blocks.
/// * `folded_wrap_chars: usize::MAX`: the default (80) turns every single-line string
///   longer than 80 characters into a folded `>-` block that is re-wrapped at spaces.
///   That round-trips only for a reader that gets folding exactly right, and it hurts
///   grep and diff. With no limit, long strings stay on one line.
/// * `tagged_enums: false`: unit enum variants are plain strings, not `!!Enum Variant`.
/// * `empty_as_braces` keeps its default, so empty collections are `{}` and `[]`, not null.
pub fn options() -> serde_saphyr::SerializerOptions {
    serde_saphyr::ser_options! {
        indent_step: 2,
        compact_list_indent: true,
        yaml_12: false,
        quote_all: false,
        prefer_block_scalars: true,
        folded_wrap_chars: usize::MAX,
        tagged_enums: false,
    }
}

/// Serialize one value as one YAML document (no `---` marker), ending in a newline.
///
/// The layout is described in the [module docs](self). The output is re-parsed and
/// checked with [`plain_scalar_hazards`]; on any finding this returns
/// [`YamlError::Hazard`] instead of the text.
pub fn to_yaml<T: Serialize>(value: &T) -> Result<String, YamlError> {
    let out = unchecked(value)?;
    let mut hazards = Vec::new();
    check_document(&out, None, &mut hazards);
    if hazards.is_empty() { Ok(out) } else { Err(YamlError::Hazard(hazards)) }
}

thread_local! {
    /// The document texts this thread has already checked and found safe. A build writes the
    /// same document into many files (a cluster's shared Talos documents into every node's
    /// config), and the check's verdict depends on the text alone, so each distinct text is
    /// re-parsed once. Only safe texts are kept: a text with hazards fails every time.
    static CHECKED: std::cell::RefCell<std::collections::HashSet<String>> = Default::default();
}

/// The safety check of one document as [`unchecked`] wrote it: [`plain_scalar_hazards`],
/// and the text must be exactly one document, so that it means the same inside a `---`
/// stream as alone. Findings go to `hazards`, prefixed with the document's number in its
/// stream when it has one.
fn check_document(text: &str, index: Option<usize>, hazards: &mut Vec<String>) {
    if CHECKED.with_borrow(|c| c.contains(text)) {
        return;
    }
    let (mut found, starts) = scan(text);
    if starts != 1 && found.is_empty() {
        found.push(format!("the text holds {starts} documents, not one"));
    }
    if found.is_empty() {
        CHECKED.with_borrow_mut(|c| c.insert(text.to_owned()));
        return;
    }
    match index {
        Some(i) => hazards.extend(found.into_iter().map(|h| format!("document {}, {h}", i + 1))),
        None => hazards.extend(found),
    }
}

/// [`to_yaml`] without the re-parse: for [`documents`], which checks each document itself.
fn unchecked<T: Serialize>(value: &T) -> Result<String, YamlError> {
    let mut out = serde_saphyr::to_string_with_options(value, options())?;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// Serialize several values as a multi-document YAML stream.
///
/// With `Some(header)`, the text starts with the comment line `# <header>` (use
/// [`super::HEADER`] for generated files). Documents follow in slice order, each written
/// as [`to_yaml`] writes it and separated by a `---` line. Nothing precedes the first
/// document except the header. An empty slice yields only the header line, or an empty
/// string. Each document is checked alone ([`plain_scalar_hazards`], and it must be one
/// document), which is the same as checking the stream: `---` lines add no scalars. A text
/// already found safe on this thread is not re-parsed (identical documents are checked once).
pub fn documents<T: Serialize>(header: Option<&str>, docs: &[T]) -> Result<String, YamlError> {
    let mut out = String::new();
    if let Some(header) = header {
        if header.chars().any(is_line_break) {
            return Err(YamlError::Header(header.to_owned()));
        }
        out.push('#');
        if !header.is_empty() {
            out.push(' ');
            out.push_str(header);
        }
        out.push('\n');
    }
    let mut hazards = raw_character_hazards(&out);
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let text = unchecked(doc)?;
        check_document(&text, Some(i), &mut hazards);
        out.push_str(&text);
    }
    if hazards.is_empty() { Ok(out) } else { Err(YamlError::Hazard(hazards)) }
}

/// Line breaks in YAML 1.1 (YAML 1.2 drops NEL, LS and PS from this set).
fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

// ---------------------------------------------------------------------------
// Implicit typing of plain scalars under YAML 1.1 and YAML 1.2.
// ---------------------------------------------------------------------------

/// The type a YAML reader gives an untagged plain scalar, from its text alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImplicitType {
    /// A string: the only result that keeps a string a string.
    Str,
    /// `null` and its spellings (`~`, `Null`, empty, ...).
    Null,
    /// `true`/`false`, and in YAML 1.1 also `yes`/`no`/`on`/`off`/`y`/`n` and case variants.
    Bool,
    /// An integer in any base the schema knows.
    Int,
    /// A floating-point number, including `.inf` and `.nan`.
    Float,
    /// YAML 1.1 `!!timestamp` (`2001-12-14`, `2001-12-14t21:59:43.10-05:00`, ...).
    Timestamp,
    /// YAML 1.1 merge key `<<`.
    Merge,
    /// YAML 1.1 value key `=`.
    Value,
}

/// Resolve a plain scalar the way YAML 1.1 readers do.
///
/// This is the union of the YAML 1.1 type repository regexes (`bool`, `null`, `int`
/// including base 2/8/16/60 and `_` separators, `float` including base 60, `.inf` and
/// `.nan`, `timestamp`, `merge`, `value`), PyYAML's variants of them, and go-yaml's
/// extensions (underscores removed before numeric parsing, `0o`/`0B`/`0X` prefixes via Go's
/// base-0 `ParseInt`, `1e3` floats, one-digit date and time fields). It errs towards
/// reporting a non-string: it is a safety check, not a loader.
pub fn resolve_yaml11(s: &str) -> ImplicitType {
    if matches!(s, "" | "~" | "null" | "Null" | "NULL") {
        ImplicitType::Null
    } else if is_yaml11_bool(s) {
        ImplicitType::Bool
    } else if is_yaml11_int(s) {
        ImplicitType::Int
    } else if is_yaml11_float(s) {
        ImplicitType::Float
    } else if is_yaml11_timestamp(s) {
        ImplicitType::Timestamp
    } else if s == "<<" {
        ImplicitType::Merge
    } else if s == "=" {
        ImplicitType::Value
    } else {
        ImplicitType::Str
    }
}

/// Resolve a plain scalar with the YAML 1.2 core schema (which includes the JSON schema).
pub fn resolve_yaml12(s: &str) -> ImplicitType {
    let unsigned = strip_sign(s);
    if matches!(s, "" | "~" | "null" | "Null" | "NULL") {
        ImplicitType::Null
    } else if matches!(s, "true" | "True" | "TRUE" | "false" | "False" | "FALSE") {
        ImplicitType::Bool
    } else if all_nonempty(unsigned, |b| b.is_ascii_digit())
        || s.strip_prefix("0o").is_some_and(|d| all_nonempty(d, |b| matches!(b, b'0'..=b'7')))
        || s.strip_prefix("0x").is_some_and(|d| all_nonempty(d, |b| b.is_ascii_hexdigit()))
    {
        ImplicitType::Int
    } else if is_json_style_float(s)
        || matches!(unsigned, ".inf" | ".Inf" | ".INF")
        || matches!(s, ".nan" | ".NaN" | ".NAN")
    {
        ImplicitType::Float
    } else {
        ImplicitType::Str
    }
}

/// The spellings fleetc writes for non-string scalars: `true`, `false`, `null`, decimal
/// integers without leading zeros, and floats with a dot and an optional signed exponent
/// (`1.5`, `1.0e+20`), `.inf`, `-.inf` and `.nan`. Each reads as the same type and value
/// under YAML 1.1 and YAML 1.2.
pub fn is_canonical_non_string(s: &str) -> bool {
    if matches!(s, "true" | "false" | "null" | ".inf" | "-.inf" | ".nan") {
        return true;
    }
    let mut c = Cursor::new(s.strip_prefix('-').unwrap_or(s));
    let first = c.rest.first().copied();
    let whole = c.run(|b| b.is_ascii_digit());
    if whole == 0 || (whole > 1 && first == Some(b'0')) {
        return false;
    }
    if c.done() {
        return true;
    }
    if !c.eat(b'.') || c.run(|b| b.is_ascii_digit()) == 0 {
        return false;
    }
    if c.eat_any(b"eE") && (!c.eat_any(b"+-") || c.run(|b| b.is_ascii_digit()) == 0) {
        return false;
    }
    c.done()
}

fn is_yaml11_bool(s: &str) -> bool {
    matches!(
        s,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
    )
}

fn is_yaml11_int(s: &str) -> bool {
    let u = strip_sign(s);
    let bin = |b: u8| matches!(b, b'0' | b'1' | b'_');
    let oct = |b: u8| matches!(b, b'0'..=b'7' | b'_');
    let dec = |b: u8| b.is_ascii_digit() || b == b'_';
    let hex = |b: u8| b.is_ascii_hexdigit() || b == b'_';
    // Spec and PyYAML: 0b[0-1_]+ | 0[0-7_]+ | (0|[1-9][0-9_]*) | 0x[0-9a-fA-F_]+ | base 60.
    let spec = u.strip_prefix("0b").is_some_and(|d| all_nonempty(d, bin))
        || u.strip_prefix("0x").is_some_and(|d| all_nonempty(d, hex))
        || u.strip_prefix('0').is_some_and(|d| d.is_empty() || all_nonempty(d, oct))
        || (u.as_bytes().first().is_some_and(|b| matches!(b, b'1'..=b'9')) && all_nonempty(u, dec))
        || is_sexagesimal(u, false);
    // go-yaml: remove every `_`, then Go's base-0 ParseInt/ParseUint.
    spec || is_go_int(&s.replace('_', ""))
}

/// Go's `strconv.ParseInt(s, 0, 64)` syntax (range not checked).
fn is_go_int(s: &str) -> bool {
    let u = strip_sign(s);
    let b = u.as_bytes();
    match b {
        [b'0', b'b' | b'B', d @ ..] => all_nonempty_bytes(d, |x| matches!(x, b'0' | b'1')),
        [b'0', b'o' | b'O', d @ ..] => all_nonempty_bytes(d, |x| matches!(x, b'0'..=b'7')),
        [b'0', b'x' | b'X', d @ ..] => all_nonempty_bytes(d, |x| x.is_ascii_hexdigit()),
        [b'0', d @ ..] => d.iter().all(|x| matches!(x, b'0'..=b'7')),
        _ => all_nonempty(u, |x| x.is_ascii_digit()),
    }
}

fn is_yaml11_float(s: &str) -> bool {
    let u = strip_sign(s);
    if matches!(u, ".inf" | ".Inf" | ".INF") || matches!(s, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    // Spec: [-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?
    // PyYAML: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? | \.[0-9_]+([eE][-+][0-9]+)?
    // Union: optional [0-9][0-9_]*, a dot, then [0-9._]*, then an optional signed exponent.
    let decimal = {
        let mut c = Cursor::new(u);
        if c.rest.first().is_some_and(u8::is_ascii_digit) {
            c.run(|b| b.is_ascii_digit() || b == b'_');
        }
        c.eat(b'.')
            && {
                c.run(|b| b.is_ascii_digit() || b == b'.' || b == b'_');
                !c.eat_any(b"eE") || (c.eat_any(b"+-") && c.run(|b| b.is_ascii_digit()) > 0)
            }
            && c.done()
    };
    // Base 60: [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
    // go-yaml: underscores removed, then [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    decimal || is_sexagesimal(u, true) || is_json_style_float(&s.replace('_', ""))
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`: the YAML 1.2 core float and
/// go-yaml's float syntax. It also matches integers, which the callers test first.
fn is_json_style_float(s: &str) -> bool {
    let mut c = Cursor::new(strip_sign(s));
    let whole = c.run(|b| b.is_ascii_digit());
    if c.eat(b'.') {
        let fraction = c.run(|b| b.is_ascii_digit());
        if whole == 0 && fraction == 0 {
            return false;
        }
    } else if whole == 0 {
        return false;
    }
    if c.eat_any(b"eE") {
        c.eat_any(b"+-");
        if c.run(|b| b.is_ascii_digit()) == 0 {
            return false;
        }
    }
    c.done()
}

/// YAML 1.1 base 60. Integer: `[1-9][0-9_]*(:[0-5]?[0-9])+`. Float:
/// `[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*`. `s` is already unsigned.
fn is_sexagesimal(s: &str, float: bool) -> bool {
    let mut c = Cursor::new(s);
    match c.rest.first() {
        Some(b'1'..=b'9') => {}
        Some(b'0') if float => {}
        _ => return false,
    }
    c.run(|b| b.is_ascii_digit() || b == b'_');
    let mut groups = 0;
    while c.eat(b':') {
        let n = c.run(|b| b.is_ascii_digit());
        let ok = match n {
            1 => true,
            2 => matches!(c.consumed_last(2)[0], b'0'..=b'5'),
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if float {
        if !c.eat(b'.') {
            return false;
        }
        c.run(|b| b.is_ascii_digit() || b == b'_');
    }
    c.done()
}

/// YAML 1.1 timestamp, widened to go-yaml's formats: `YYYY-M-D`, optionally followed by
/// `T`, `t` or blanks, `h:m:s`, a fraction (`.` or `,`), and a zone (`Z` or `±h[:mm]`,
/// optionally after blanks).
fn is_yaml11_timestamp(s: &str) -> bool {
    let mut c = Cursor::new(s);
    let digits = |c: &mut Cursor, min: usize, max: usize| (min..=max).contains(&c.run(|b| b.is_ascii_digit()));
    if !(digits(&mut c, 4, 4) && c.eat(b'-') && digits(&mut c, 1, 2) && c.eat(b'-') && digits(&mut c, 1, 2)) {
        return false;
    }
    if c.done() {
        return true;
    }
    if !c.eat_any(b"Tt") && c.run(|b| b == b' ' || b == b'\t') == 0 {
        return false;
    }
    if !(digits(&mut c, 1, 2) && c.eat(b':') && digits(&mut c, 1, 2) && c.eat(b':') && digits(&mut c, 1, 2)) {
        return false;
    }
    if c.eat_any(b".,") {
        c.run(|b| b.is_ascii_digit());
    }
    c.run(|b| b == b' ' || b == b'\t');
    if c.done() || (c.eat(b'Z') && c.done()) {
        return true;
    }
    if !(c.eat_any(b"+-") && digits(&mut c, 1, 2)) {
        return false;
    }
    if c.eat(b':') && !digits(&mut c, 2, 2) {
        return false;
    }
    c.done()
}

fn strip_sign(s: &str) -> &str {
    s.strip_prefix(['+', '-']).unwrap_or(s)
}

fn all_nonempty(s: &str, f: impl Fn(u8) -> bool) -> bool {
    all_nonempty_bytes(s.as_bytes(), f)
}

fn all_nonempty_bytes(s: &[u8], f: impl Fn(u8) -> bool) -> bool {
    !s.is_empty() && s.iter().all(|&b| f(b))
}

/// A byte cursor for the small hand-written matchers above.
struct Cursor<'a> {
    all: &'a [u8],
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Cursor { all: s.as_bytes(), rest: s.as_bytes() }
    }
    fn done(&self) -> bool {
        self.rest.is_empty()
    }
    fn eat(&mut self, b: u8) -> bool {
        self.eat_any(&[b])
    }
    fn eat_any(&mut self, set: &[u8]) -> bool {
        match self.rest.split_first() {
            Some((b, rest)) if set.contains(b) => {
                self.rest = rest;
                true
            }
            _ => false,
        }
    }
    /// Consume bytes while `f` holds; return how many.
    fn run(&mut self, f: impl Fn(u8) -> bool) -> usize {
        let n = self.rest.iter().take_while(|&&b| f(b)).count();
        self.rest = &self.rest[n..];
        n
    }
    /// The last `n` consumed bytes.
    fn consumed_last(&self, n: usize) -> &'a [u8] {
        let end = self.all.len() - self.rest.len();
        &self.all[end - n..end]
    }
}

// ---------------------------------------------------------------------------
// Safety checks on YAML text.
// ---------------------------------------------------------------------------

/// Test aid (also the runtime check inside [`to_yaml`]): list every scalar in `yaml`
/// (a stream of any number of documents) that YAML 1.1 and YAML 1.2 readers could take
/// differently from what fleetc means. An empty list means the text is safe.
///
/// A plain (unquoted, untagged) scalar passes if both [`resolve_yaml11`] and
/// [`resolve_yaml12`] read it as a string, or if it is a [canonical](is_canonical_non_string)
/// number, boolean or null that both read as the same type. Anything else is reported: a
/// bare `on`, `~`, `1:30`, `017`, `1_000`, `2001-12-14`, `<<`, and so on. The text must
/// also parse, and must not contain a raw CR, NEL, U+2028, U+2029 or BOM (YAML 1.1 reads
/// the first four as line breaks, so a scalar holding one would change).
///
/// This check cannot tell the string `"true"` from the boolean `true` when both are
/// written bare; [`typed_scalar_hazards`] can, because it knows the value.
pub fn plain_scalar_hazards(yaml: &str) -> Vec<String> {
    scan(yaml).0
}

/// [`plain_scalar_hazards`] and the number of documents `yaml` holds, in one parse.
fn scan(yaml: &str) -> (Vec<String>, usize) {
    let mut hazards = raw_character_hazards(yaml);
    let mut documents = 0;
    for event in Parser::new_from_str(yaml) {
        match event {
            Err(e) => {
                hazards.push(format!("output does not parse as YAML: {e}"));
                break;
            }
            Ok((Event::DocumentStart(..), _)) => documents += 1,
            Ok((Event::Scalar(value, ScalarStyle::Plain, _, None), span)) => {
                let (y11, y12) = (resolve_yaml11(&value), resolve_yaml12(&value));
                let safe = (y11 == ImplicitType::Str && y12 == ImplicitType::Str)
                    || (y11 == y12 && is_canonical_non_string(&value));
                if !safe {
                    hazards.push(format!(
                        "line {}: plain scalar {value:?} reads as {y11:?} in YAML 1.1 and {y12:?} in YAML 1.2",
                        span.start.line()
                    ));
                }
            }
            Ok(_) => {}
        }
    }
    (hazards, documents)
}

/// Test aid: check `yaml` against the values it was serialized from, one per document.
///
/// Each value is converted to `serde_json::Value` and walked together with the parsed
/// YAML. The result lists every place where they disagree:
///
/// * a string must come back as the same string: a plain one must read as a string under
///   both YAML 1.1 and 1.2 ([`resolve_yaml11`], [`resolve_yaml12`]), and quoted or block
///   scalars must decode to exactly the original text;
/// * a number, boolean or null must be a plain scalar in
///   [canonical](is_canonical_non_string) form that both versions read as that type and
///   value (serde_json stores non-finite floats as null, so `.inf`, `-.inf` and `.nan`
///   also pass for null);
/// * maps and lists must have the same shape. Map keys count as strings, the way JSON
///   sees them, so a bare `80:` key is reported even when it came from an integer.
///
/// [`plain_scalar_hazards`] findings are included too.
pub fn typed_scalar_hazards<T: Serialize>(docs: &[T], yaml: &str) -> Vec<String> {
    let mut hazards = plain_scalar_hazards(yaml);
    let parsed = match parse_tree(yaml) {
        Ok(parsed) => parsed,
        Err(e) => {
            hazards.push(e);
            return hazards;
        }
    };
    if parsed.len() != docs.len() {
        hazards.push(format!("expected {} documents, the YAML has {}", docs.len(), parsed.len()));
        return hazards;
    }
    for (i, (doc, node)) in docs.iter().zip(&parsed).enumerate() {
        match serde_json::to_value(doc) {
            Ok(json) => compare(&json, node, &format!("doc {i}:"), &mut hazards),
            Err(e) => hazards.push(format!("doc {i}: value has no JSON form: {e}")),
        }
    }
    hazards
}

fn raw_character_hazards(yaml: &str) -> Vec<String> {
    let mut hazards = Vec::new();
    for (n, line) in yaml.split('\n').enumerate() {
        if let Some(c) = line.chars().find(|&c| is_line_break(c) || c == '\u{feff}') {
            hazards.push(format!("line {}: raw {c:?} in the output (must be escaped in double quotes)", n + 1));
        }
    }
    hazards
}

/// A parsed YAML node, just enough for [`typed_scalar_hazards`].
enum Node {
    Scalar { value: String, style: ScalarStyle, tagged: bool, line: usize },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
    Alias(usize),
}

enum Frame {
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>, Option<Node>),
}

fn parse_tree(yaml: &str) -> Result<Vec<Node>, String> {
    let mut docs = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    for event in Parser::new_from_str(yaml) {
        let (event, span) = event.map_err(|e| format!("output does not parse as YAML: {e}"))?;
        let node = match event {
            Event::Scalar(value, style, _, tag) => {
                Node::Scalar { value: value.into_owned(), style, tagged: tag.is_some(), line: span.start.line() }
            }
            Event::Alias(_) | Event::UnresolvedAlias(_) => Node::Alias(span.start.line()),
            Event::SequenceStart(..) => {
                stack.push(Frame::Seq(Vec::new()));
                continue;
            }
            Event::MappingStart(..) => {
                stack.push(Frame::Map(Vec::new(), None));
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq(items)) => Node::Seq(items),
                _ => return Err("unbalanced sequence events".to_owned()),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map(entries, None)) => Node::Map(entries),
                _ => return Err("unbalanced mapping events".to_owned()),
            },
            Event::StreamStart | Event::StreamEnd | Event::DocumentStart(..) => continue,
            Event::DocumentEnd => continue,
            // Comments and anchor metadata are not nodes.
            other if !other.is_node() => continue,
            other => return Err(format!("unexpected YAML event {other:?}")),
        };
        match stack.last_mut() {
            None => docs.push(node),
            Some(Frame::Seq(items)) => items.push(node),
            Some(Frame::Map(entries, pending)) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => entries.push((key, node)),
            },
        }
    }
    Ok(docs)
}

fn compare(json: &serde_json::Value, node: &Node, path: &str, out: &mut Vec<String>) {
    use serde_json::Value as J;
    let (value, style, tagged, line) = match node {
        Node::Scalar { value, style, tagged, line } => (value.as_str(), *style, *tagged, *line),
        Node::Alias(line) => {
            out.push(format!("{path} line {line}: alias where a value was expected"));
            return;
        }
        Node::Seq(items) => {
            match json {
                J::Array(expected) if expected.len() == items.len() => {
                    for (i, (j, n)) in expected.iter().zip(items).enumerate() {
                        compare(j, n, &format!("{path}/{i}"), out);
                    }
                }
                _ => out.push(format!("{path}: sequence where the value is {json}")),
            }
            return;
        }
        Node::Map(entries) => {
            let J::Object(expected) = json else {
                out.push(format!("{path}: mapping where the value is {json}"));
                return;
            };
            if expected.len() != entries.len() {
                out.push(format!("{path}: mapping has {} entries, the value has {}", entries.len(), expected.len()));
            }
            for (key, item) in entries {
                let Node::Scalar { value: k, .. } = key else {
                    out.push(format!("{path}: non-scalar mapping key"));
                    continue;
                };
                let key_path = format!("{path}/{k}");
                compare(&J::String(k.clone()), key, &format!("{key_path} (key)"), out);
                match expected.get(k.as_str()) {
                    Some(j) => compare(j, item, &key_path, out),
                    None => out.push(format!("{key_path}: key not in the value")),
                }
            }
            return;
        }
    };
    let at = format!("{path} line {line}");
    let plain = style == ScalarStyle::Plain && !tagged;
    let (y11, y12) = (resolve_yaml11(value), resolve_yaml12(value));
    match json {
        J::String(s) => {
            if value != s {
                out.push(format!("{at}: string {s:?} reads back as {value:?}"));
            } else if plain && (y11 != ImplicitType::Str || y12 != ImplicitType::Str) {
                out.push(format!("{at}: string {s:?} is bare and reads as {y11:?} in YAML 1.1, {y12:?} in YAML 1.2"));
            }
        }
        J::Null | J::Bool(_) | J::Number(_) => {
            let expected_type = match json {
                J::Null if matches!(value, ".inf" | "-.inf" | ".nan") => ImplicitType::Float,
                J::Null => ImplicitType::Null,
                J::Bool(_) => ImplicitType::Bool,
                J::Number(n) if n.is_f64() => ImplicitType::Float,
                _ => ImplicitType::Int,
            };
            let same_value = match json {
                J::Bool(b) => value == if *b { "true" } else { "false" },
                J::Number(n) if n.is_f64() => value.parse::<f64>().ok() == n.as_f64(),
                J::Number(n) => value == n.to_string(),
                _ => true,
            };
            if !plain || !is_canonical_non_string(value) || y11 != expected_type || y12 != expected_type || !same_value
            {
                out.push(format!(
                    "{at}: {json} is written as {style:?} {value:?}, read as {y11:?} in YAML 1.1, {y12:?} in YAML 1.2"
                ));
            }
        }
        J::Array(_) | J::Object(_) => {
            out.push(format!("{at}: scalar {value:?} where the value is {json}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ImplicitType::*;
    use std::collections::BTreeMap;

    #[test]
    fn yaml11_patterns_are_not_strings() {
        let cases: &[(&str, ImplicitType)] = &[
            ("y", Bool),
            ("Y", Bool),
            ("yes", Bool),
            ("Yes", Bool),
            ("YES", Bool),
            ("n", Bool),
            ("N", Bool),
            ("no", Bool),
            ("No", Bool),
            ("NO", Bool),
            ("true", Bool),
            ("True", Bool),
            ("TRUE", Bool),
            ("false", Bool),
            ("False", Bool),
            ("FALSE", Bool),
            ("on", Bool),
            ("On", Bool),
            ("ON", Bool),
            ("off", Bool),
            ("Off", Bool),
            ("OFF", Bool),
            ("~", Null),
            ("null", Null),
            ("Null", Null),
            ("NULL", Null),
            ("", Null),
            ("0b1010", Int),
            ("-0b1_0", Int),
            ("0x1F", Int),
            ("0x_1f", Int),
            ("0o17", Int),
            ("0O17", Int),
            ("017", Int),
            ("0", Int),
            ("-12", Int),
            ("+12", Int),
            ("1_000", Int),
            ("1__0", Int),
            // go-yaml drops underscores before parsing numbers; we apply that everywhere.
            ("_1", Int),
            ("1:30", Int),
            ("190:20:30", Int),
            ("-1:30", Int),
            ("1.5", Float),
            ("1.", Float),
            (".5", Float),
            ("-.5", Float),
            ("1_000.5", Float),
            ("1.2.3", Float),
            ("10.0.0.1", Float),
            (".", Float),
            ("1e3", Float),
            ("1e+3", Float),
            ("1.0e+20", Float),
            ("6.8523015e+5", Float),
            (".inf", Float),
            ("-.Inf", Float),
            ("+.INF", Float),
            (".nan", Float),
            (".NaN", Float),
            ("190:20:30.15", Float),
            ("0:30.5", Float),
            ("2001-12-14", Timestamp),
            ("2001-12-14t21:59:43.10-05:00", Timestamp),
            ("2001-12-14T21:59:43Z", Timestamp),
            ("2001-12-14 21:59:43.10 -5", Timestamp),
            ("2001-12-14 21:59:43.10 Z", Timestamp),
            ("2002-1-2", Timestamp),
            ("<<", Merge),
            ("=", Value),
        ];
        for &(s, t) in cases {
            assert_eq!(resolve_yaml11(s), t, "{s:?}");
        }
    }

    #[test]
    fn yaml11_strings_stay_strings() {
        for s in [
            "hello",
            "v1.2.3",
            "1.2.3-rc1",
            "onx",
            "yess",
            "nul",
            "1:60",
            "1:3:",
            "0x",
            "0b",
            "0b2",
            "08.x",
            "1e",
            "e3",
            "+infinity",
            "inf",
            "nan",
            "0x1p3",
            "2001-12",
            "2001-12-14x",
            "2001-12-14T25",
            "<<<",
            "==",
            "10.0.0.1/24",
            "::1",
            "a:b",
            "${x}",
        ] {
            assert_eq!(resolve_yaml11(s), Str, "{s:?}");
        }
    }

    #[test]
    fn yaml12_core_schema() {
        let cases: &[(&str, ImplicitType)] = &[
            ("null", Null),
            ("~", Null),
            ("", Null),
            ("true", Bool),
            ("FALSE", Bool),
            ("yes", Str),
            ("on", Str),
            ("y", Str),
            ("08", Int),
            ("-12", Int),
            ("0o17", Int),
            ("0x1F", Int),
            ("0b101", Str),
            ("1_000", Str),
            ("1:30", Str),
            ("1e3", Float),
            ("1.", Float),
            (".5", Float),
            ("-.inf", Float),
            (".NaN", Float),
            ("2001-12-14", Str),
            ("<<", Str),
            ("=", Str),
        ];
        for &(s, t) in cases {
            assert_eq!(resolve_yaml12(s), t, "{s:?}");
        }
    }

    #[test]
    fn canonical_non_strings() {
        for s in ["true", "false", "null", "0", "-1", "42", "1.5", "-0.0", "1.0e+20", "1.0e-7", ".inf", "-.inf", ".nan"]
        {
            assert!(is_canonical_non_string(s), "{s:?}");
            assert_eq!(resolve_yaml11(s), resolve_yaml12(s), "{s:?}");
        }
        for s in ["yes", "~", "Null", "True", "017", "+1", "1_000", "0x1F", "1e3", "1.", ".5", "1.0e20", "1:30", "-0b1"]
        {
            assert!(!is_canonical_non_string(s), "{s:?}");
        }
    }

    #[test]
    fn plain_check_flags_bare_lookalikes() {
        for s in ["on", "yes", "n", "~", "1:30", "0x1F", "1_000", "017", "1e3", "2001-12-14"] {
            let yaml = format!("a: {s}\n");
            assert_eq!(plain_scalar_hazards(&yaml).len(), 1, "{yaml:?}");
        }
        assert_eq!(plain_scalar_hazards("<<: x\n").len(), 1);
        assert!(plain_scalar_hazards("a: 3\nb: true\nc: null\nd: x\ne: \"on\"\n").is_empty());
        assert_eq!(plain_scalar_hazards("a: \"x\ry\"\nb: x\u{2028}y\n").len(), 2);
        assert_eq!(plain_scalar_hazards("a: [\n").len(), 1);
    }

    #[test]
    fn each_document_is_checked_alone_and_only_safe_texts_are_remembered() {
        // `documents` and `to_yaml` run `check_document` on every document they write.
        for _ in 0..2 {
            let mut hazards = Vec::new();
            check_document("a: on\n", Some(2), &mut hazards);
            assert_eq!(hazards.len(), 1, "a hazard is found every time, never remembered as safe");
            assert!(hazards[0].starts_with("document 3, line 1: plain scalar \"on\""), "{hazards:?}");
        }
        let mut hazards = Vec::new();
        check_document("a: x\n---\nb: z\n", None, &mut hazards);
        assert_eq!(hazards, ["the text holds 2 documents, not one"]);
        let mut hazards = Vec::new();
        check_document("a: \"on\"\n", None, &mut hazards);
        check_document("a: \"on\"\n", None, &mut hazards);
        assert!(hazards.is_empty());
        assert!(CHECKED.with_borrow(|c| c.contains("a: \"on\"\n")));
        // The writers a build calls run the check on each document they write.
        let docs = [BTreeMap::from([("check", "documents-1")]), BTreeMap::from([("check", "documents-2")])];
        documents(Some("h"), &docs).unwrap();
        to_yaml(&BTreeMap::from([("check", "to_yaml")])).unwrap();
        for text in ["check: documents-1\n", "check: documents-2\n", "check: to_yaml\n"] {
            assert!(CHECKED.with_borrow(|c| c.contains(text)), "{text:?} was not checked");
        }
    }

    #[test]
    fn typed_check_knows_strings_from_numbers() {
        #[derive(Serialize)]
        struct S {
            text: String,
            num: u32,
            flag: bool,
        }
        let v = S { text: "3".into(), num: 3, flag: true };
        let one = std::slice::from_ref(&v);
        let count = |yaml: &str| typed_scalar_hazards(one, yaml).len();
        assert_eq!(count("text: \"3\"\nnum: 3\nflag: true\n"), 0);
        // A string written bare, a number quoted, a bool spelled the YAML 1.1 way,
        // a changed string, a missing key.
        assert_eq!(count("text: 3\nnum: 3\nflag: true\n"), 1);
        assert_eq!(count("text: \"3\"\nnum: \"3\"\nflag: true\n"), 1);
        assert_eq!(count("text: \"3\"\nnum: 3\nflag: yes\n"), 2);
        assert_eq!(count("text: \"4\"\nnum: 3\nflag: true\n"), 1);
        assert_eq!(count("text: \"3\"\nnum: 3\n"), 1);
        // The key `n` is a YAML 1.1 boolean.
        assert_eq!(typed_scalar_hazards(&[serde_json::json!({"n": 1})], "n: 1\n").len(), 2);
    }

    #[test]
    fn header_must_be_one_line() {
        assert!(matches!(documents(Some("a\nb"), &[1]), Err(YamlError::Header(_))));
    }
}
