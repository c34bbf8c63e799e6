//! Reading schematic files the way the factory does: go-yaml v4 decoding into
//! the factory's Go structs with unknown fields rejected (`KnownFields`) and
//! duplicate keys rejected (`UniqueKeys`).
//!
//! The YAML syntax is read by the event parser behind serde-saphyr
//! (`granit_parser`), which keeps what go-yaml's decoding depends on and serde
//! would hide: whether a scalar was plain or quoted, and where it is. The Go
//! decoding rules are then applied by hand, field by field:
//!
//! * a Go `string` takes the scalar's text whatever it resolves to (`123`,
//!   `yes`), and a plain null leaves it empty;
//! * null items of a `[]string` or `[]MetaValue` are dropped;
//! * `uint8`/`uint` take plain integers (any Go base-0 syntax, `_` allowed)
//!   and plain non-negative floats (truncated); quoted text is an error;
//! * a `bool` takes `true`/`false` and, as go-yaml allows for typed bools, the
//!   YAML 1.1 words `yes`, `on`, `y`, ... (quoted or not);
//! * `overlay.options` values resolve as go-yaml's `any` does.

use std::collections::BTreeMap;

use serde_saphyr::granit_parser::{self as granit, Event, Parser, ScalarStyle};

use super::resolve::{Plain, resolve_plain};
use super::{
    Customization, DiskImage, Meta, OptionValue, Overlay, ParseError, Schematic, SecureBoot, canonical_bootloader,
};

/// A YAML node with its source span (byte offset, length).
#[derive(Debug, Clone)]
struct YNode {
    kind: Kind,
    span: (usize, usize),
}

#[derive(Debug, Clone)]
enum Kind {
    Scalar { value: String, plain: bool },
    Seq(Vec<YNode>),
    Map(Vec<(YNode, YNode)>),
}

fn error(message: impl Into<String>, span: (usize, usize)) -> ParseError {
    ParseError { message: message.into(), span: Some(span) }
}

/// Parse a schematic file as users paste it (YAML, or JSON since JSON is
/// YAML), keeping list order. Unknown fields are rejected, as the factory's
/// strict decoding rejects them; so are inputs fleetc cannot decode exactly
/// as go-yaml does (tags, merge keys, see the module documentation).
pub fn parse(text: &str) -> Result<Schematic, ParseError> {
    let Some(root) = load(text)? else {
        return Err(ParseError { message: "the schematic is empty".into(), span: None });
    };
    decode_schematic(&root)
}

// ---------------------------------------------------------------------------
// YAML events to a node tree.

enum Frame {
    Seq { items: Vec<YNode>, start: usize, anchor: usize },
    Map { entries: Vec<(YNode, YNode)>, key: Option<YNode>, start: usize, anchor: usize },
}

fn offsets(span: &granit::Span) -> (usize, usize) {
    let start = span.start.byte_offset().unwrap_or(0);
    let end = span.end.byte_offset().unwrap_or(start).max(start);
    (start, end)
}

/// The first document of `text` as a node tree; `None` when there is none.
fn load(text: &str) -> Result<Option<YNode>, ParseError> {
    let options = granit::options! {
        // go-yaml (a libyaml port) adds no line feed to a block scalar whose
        // last line ends the input.
        block_scalar_eof_without_line_feed: true,
        emit_comments: false,
    };
    let mut parser = Parser::new_from_str_with_options(text, options);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: BTreeMap<usize, YNode> = BTreeMap::new();
    let mut root: Option<YNode> = None;
    let mut documents = 0;

    while let Some(item) = parser.next_event() {
        let (event, span) = item.map_err(|e| {
            let at = e.marker().byte_offset().unwrap_or(0);
            error(format!("invalid YAML: {}", e.info()), (at, 0))
        })?;
        let (start, end) = offsets(&span);
        let complete = match event {
            Event::DocumentStart(..) => {
                documents += 1;
                None
            }
            // The factory decodes one document (`Decoder.Decode` once) and
            // never reads past it: what follows is ignored, even invalid YAML.
            Event::DocumentEnd if documents == 1 => break,
            Event::Scalar(value, style, anchor, tag) => {
                if tag.is_some() {
                    return Err(error("YAML tags are not supported in a schematic", (start, end - start)));
                }
                if style == ScalarStyle::DoubleQuoted {
                    check_escapes(text, (start, end))?;
                }
                let node = YNode {
                    kind: Kind::Scalar { value: value.into_owned(), plain: style == ScalarStyle::Plain },
                    span: (start, end - start),
                };
                Some((node, anchor))
            }
            Event::SequenceStart(_, anchor, tag) | Event::MappingStart(_, anchor, tag) if tag.is_some() => {
                let _ = anchor;
                return Err(error("YAML tags are not supported in a schematic", (start, end - start)));
            }
            Event::SequenceStart(_, anchor, _) => {
                stack.push(Frame::Seq { items: Vec::new(), start, anchor });
                None
            }
            Event::MappingStart(_, anchor, _) => {
                stack.push(Frame::Map { entries: Vec::new(), key: None, start, anchor });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq { items, start, anchor }) => {
                    Some((YNode { kind: Kind::Seq(items), span: (start, end.max(start) - start) }, anchor))
                }
                Some(Frame::Map { entries, start, anchor, .. }) => {
                    Some((YNode { kind: Kind::Map(entries), span: (start, end.max(start) - start) }, anchor))
                }
                None => return Err(error("invalid YAML: unbalanced collection", (start, 0))),
            },
            Event::Alias(id) => {
                let Some(target) = anchors.get(&id) else {
                    return Err(error("invalid YAML: unknown alias", (start, end - start)));
                };
                let mut node = target.clone();
                node.span = (start, end - start);
                Some((node, 0))
            }
            Event::UnresolvedAlias(_) => {
                return Err(error("invalid YAML: unknown alias", (start, end - start)));
            }
            _ => None,
        };
        if let Some((node, anchor)) = complete {
            if anchor != 0 {
                anchors.insert(anchor, node.clone());
            }
            match stack.last_mut() {
                None => root = Some(node),
                Some(Frame::Seq { items, .. }) => items.push(node),
                Some(Frame::Map { entries, key, .. }) => match key.take() {
                    None => *key = Some(node),
                    Some(k) => entries.push((k, node)),
                },
            }
        }
    }
    Ok(root)
}

/// go-yaml's scanner (`scan_flow_scalar`) knows fewer escapes than YAML 1.2:
/// it refuses `\/` ("found unknown escape character") and `\u`/`\U` escapes
/// of UTF-16 surrogates ("found invalid Unicode character escape code"),
/// which the YAML 1.2 parser behind fleetc accepts (a JSON `"\ud83d\ude00"`
/// pair is one such input). Refuse them as the factory does.
fn check_escapes(text: &str, (start, end): (usize, usize)) -> Result<(), ParseError> {
    let Some(raw) = text.get(start..end.min(text.len())) else {
        return Ok(());
    };
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let at = (start + i, 2);
        match bytes.get(i + 1) {
            Some(b'/') => {
                return Err(error(
                    "the factory's YAML reader refuses the escape `\\/` in a double-quoted string (found unknown escape character); write `/`",
                    at,
                ));
            }
            Some(&c @ (b'u' | b'U')) => {
                let n = if c == b'u' { 4 } else { 8 };
                let code = raw.get(i + 2..i + 2 + n).and_then(|h| u32::from_str_radix(h, 16).ok());
                if let Some(code) = code
                    && ((0xD800..=0xDFFF).contains(&code) || code > 0x10FFFF)
                {
                    return Err(error(
                        format!(
                            "the factory's YAML reader refuses the escape of U+{code:04X}, not a Unicode scalar value (found invalid Unicode character escape code); write the character itself"
                        ),
                        (start + i, 2 + n),
                    ));
                }
            }
            _ => {}
        }
        i += 2;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Node tree to the factory's structs, with go-yaml's decoding rules.

/// An untagged plain scalar that resolves to null.
fn is_null(node: &YNode) -> bool {
    matches!(&node.kind, Kind::Scalar { value, plain: true } if resolve_plain(value) == Ok(Plain::Null))
}

fn describe(node: &YNode) -> &'static str {
    match &node.kind {
        Kind::Scalar { .. } => "a scalar",
        Kind::Seq(_) => "a sequence",
        Kind::Map(_) => "a mapping",
    }
}

/// The entries of a struct-typed mapping, keys as Go reads them into a
/// `string`, after go-yaml's duplicate and unknown-field checks.
fn struct_fields<'a>(node: &'a YNode, path: &str, known: &[&str]) -> Result<Vec<(&'a str, &'a YNode)>, ParseError> {
    if is_null(node) {
        return Ok(Vec::new());
    }
    let Kind::Map(entries) = &node.kind else {
        return Err(error(format!("`{path}` must be a mapping, not {}", describe(node)), node.span));
    };
    let keys = mapping_keys(entries, path)?;
    let mut out = Vec::with_capacity(entries.len());
    for ((key, value), name) in entries.iter().zip(keys) {
        let Some(name) = name else { continue };
        if !known.contains(&name) {
            let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
            let within = if path.is_empty() { "the schematic".to_string() } else { format!("`{path}`") };
            return Err(error(format!("unknown field `{name}` in {within} (expected one of {list})"), key.span));
        }
        out.push((name, value));
    }
    Ok(out)
}

/// The text of each key of a mapping: scalar keys only, no merge keys, no
/// duplicates (go-yaml compares the key text, whatever the quoting). A null
/// key gives `None`: go-yaml drops such an entry when decoding into a struct
/// or a `map[string]any` (image-factory v1.5.0 gives `customization: {~: 1}`
/// the vanilla ID).
fn mapping_keys<'a>(entries: &'a [(YNode, YNode)], path: &str) -> Result<Vec<Option<&'a str>>, ParseError> {
    let mut names: Vec<&str> = Vec::with_capacity(entries.len());
    let mut out = Vec::with_capacity(entries.len());
    for (key, _) in entries {
        let Kind::Scalar { value, plain } = &key.kind else {
            return Err(error(format!("mapping keys in `{path}` must be scalars"), key.span));
        };
        if *plain && value == "<<" {
            return Err(error("YAML merge keys (`<<`) are not supported in a schematic", key.span));
        }
        if is_null(key) {
            out.push(None);
            continue;
        }
        if names.contains(&value.as_str()) {
            return Err(error(format!("duplicate key `{value}` in `{path}`"), key.span));
        }
        names.push(value);
        out.push(Some(value.as_str()));
    }
    Ok(out)
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() { field.to_string() } else { format!("{path}.{field}") }
}

/// A Go `string` field: any scalar's text; `None` for a plain null. A plain
/// timestamp (`2001-01-01`) is refused, as go-yaml v4 refuses it ("cannot
/// construct !!timestamp `2001-01-01` into string").
fn string_value(node: &YNode, path: &str) -> Result<Option<String>, ParseError> {
    match &node.kind {
        Kind::Scalar { value, plain: true } if resolve_plain(value) == Ok(Plain::Timestamp) => Err(error(
            format!("the factory refuses the plain timestamp `{value}` as the string `{path}`; quote it"),
            node.span,
        )),
        Kind::Scalar { value, .. } => Ok((!is_null(node)).then(|| value.clone())),
        _ => Err(error(format!("`{path}` must be a string, not {}", describe(node)), node.span)),
    }
}

/// A Go `[]string`: null items are dropped, as go-yaml drops them.
fn string_list(node: &YNode, path: &str) -> Result<Vec<String>, ParseError> {
    if is_null(node) {
        return Ok(Vec::new());
    }
    let Kind::Seq(items) = &node.kind else {
        return Err(error(format!("`{path}` must be a list of strings, not {}", describe(node)), node.span));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(s) = string_value(item, &format!("{path}[{i}]"))? {
            out.push(s);
        }
    }
    Ok(out)
}

/// A Go unsigned integer up to `max`: plain integers, or plain non-negative
/// floats without a fraction (`10.0`, `1e1`; go-yaml refuses `10.7` with
/// "cannot construct !!float `10.7` into uint8"); `None` for a plain null.
fn uint_value(node: &YNode, path: &str, max: u64) -> Result<Option<u64>, ParseError> {
    let bad = || error(format!("`{path}` must be an integer between 0 and {max}"), node.span);
    let Kind::Scalar { value, plain } = &node.kind else {
        return Err(bad());
    };
    if !plain {
        return Err(bad());
    }
    let n = match resolve_plain(value).map_err(|_| bad())? {
        Plain::Null => return Ok(None),
        Plain::Int(i) => u64::try_from(i).map_err(|_| bad())?,
        Plain::Uint(u) => u,
        Plain::NegativeZero => 0,
        Plain::Float(f) if (0.0..9_223_372_036_854_775_808.0).contains(&f) && f.fract() == 0.0 => f as u64,
        _ => return Err(bad()),
    };
    if n > max { Err(bad()) } else { Ok(Some(n)) }
}

/// A Go `bool`: `true`/`false` (plain), or a YAML 1.1 word such as `yes`,
/// `on`, `n` (plain or quoted); a plain null leaves it false.
fn bool_value(node: &YNode, path: &str) -> Result<bool, ParseError> {
    let bad = || error(format!("`{path}` must be `true` or `false`"), node.span);
    let Kind::Scalar { value, plain } = &node.kind else {
        return Err(bad());
    };
    let word = |s: &str| match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    };
    if !plain {
        return word(value).ok_or_else(bad);
    }
    match resolve_plain(value).map_err(|_| bad())? {
        Plain::Null => Ok(false),
        Plain::Bool(b) => Ok(b),
        Plain::Str => word(value).ok_or_else(bad),
        _ => Err(bad()),
    }
}

fn decode_schematic(root: &YNode) -> Result<Schematic, ParseError> {
    if !matches!(root.kind, Kind::Map(_)) && !is_null(root) {
        return Err(error("a schematic must be a YAML mapping", root.span));
    }
    let mut s = Schematic::default();
    for (name, value) in struct_fields(root, "", &["owner", "overlay", "customization"])? {
        match name {
            "owner" => s.owner = string_value(value, "owner")?.filter(|o| !o.is_empty()),
            "overlay" => s.overlay = decode_overlay(value)?,
            _ => s.customization = decode_customization(value)?,
        }
    }
    Ok(s)
}

fn decode_overlay(node: &YNode) -> Result<Option<Overlay>, ParseError> {
    let mut o = Overlay::default();
    for (name, value) in struct_fields(node, "overlay", &["image", "name", "options"])? {
        let path = join("overlay", name);
        match name {
            "image" => o.image = string_value(value, &path)?.unwrap_or_default(),
            "name" => o.name = string_value(value, &path)?.unwrap_or_default(),
            _ => o.options = decode_options(value, &path)?,
        }
    }
    let zero = o.image.is_empty() && o.name.is_empty() && o.options.is_empty();
    Ok((!zero).then_some(o))
}

/// `overlay.options`, a Go `map[string]any`: its keys are read into strings
/// whatever they look like (`1: x` gives the key `"1"`).
fn decode_options(node: &YNode, path: &str) -> Result<BTreeMap<String, OptionValue>, ParseError> {
    if is_null(node) {
        return Ok(BTreeMap::new());
    }
    let Kind::Map(entries) = &node.kind else {
        return Err(error(format!("`{path}` must be a mapping, not {}", describe(node)), node.span));
    };
    let keys = mapping_keys(entries, path)?;
    let mut out = BTreeMap::new();
    for ((_, value), key) in entries.iter().zip(keys) {
        let Some(key) = key else { continue };
        let child = join(path, key);
        out.insert(key.to_string(), option_value(value, &child)?);
    }
    Ok(out)
}

/// A value decoded into Go's `any`.
fn option_value(node: &YNode, path: &str) -> Result<OptionValue, ParseError> {
    match &node.kind {
        Kind::Scalar { value, plain: false } => Ok(OptionValue::String(value.clone())),
        Kind::Scalar { value, plain: true } => {
            let resolved = resolve_plain(value).map_err(|u| {
                error(
                    format!("cannot tell how the factory reads `{value}` at `{path}`: it is {}; quote it", u.0),
                    node.span,
                )
            })?;
            Ok(match resolved {
                Plain::Null => OptionValue::Null,
                Plain::Bool(b) => OptionValue::Bool(b),
                Plain::Int(i) => OptionValue::Int(i),
                Plain::Uint(u) => OptionValue::Uint(u),
                Plain::Float(f) => OptionValue::Float(f),
                Plain::Str | Plain::Merge => OptionValue::String(value.clone()),
                Plain::Timestamp => {
                    return Err(error(
                        format!(
                            "the timestamp `{value}` at `{path}` is read differently by go-yaml versions; quote it"
                        ),
                        node.span,
                    ));
                }
                Plain::NegativeZero => {
                    return Err(error(
                        format!("`-0` at `{path}` is read differently by go-yaml versions; write `0` or quote it"),
                        node.span,
                    ));
                }
            })
        }
        Kind::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| option_value(item, &format!("{path}[{i}]")))
            .collect::<Result<_, _>>()
            .map(OptionValue::List),
        Kind::Map(entries) => {
            // Nested maps decode as map[string]any only when every key is a
            // string; fleetc supports only that case.
            let keys = mapping_keys(entries, path)?;
            let mut out = BTreeMap::new();
            for ((key, value), name) in entries.iter().zip(keys) {
                // A null key makes go-yaml decode this map as map[any]any.
                let Some(name) = name else {
                    return Err(error(
                        format!("a null key in `{path}` is not a string to the factory; quote it"),
                        key.span,
                    ));
                };
                let plain = matches!(key.kind, Kind::Scalar { plain: true, .. });
                if plain && resolve_plain(name) != Ok(Plain::Str) {
                    return Err(error(
                        format!("the key `{name}` in `{path}` is not a string to the factory; quote it"),
                        key.span,
                    ));
                }
                out.insert(name.to_string(), option_value(value, &join(path, name))?);
            }
            Ok(OptionValue::Map(out))
        }
    }
}

const CUSTOMIZATION_FIELDS: [&str; 7] = [
    "embeddedMachineConfiguration",
    "extraKernelArgs",
    "meta",
    "systemExtensions",
    "bootloader",
    "secureboot",
    "diskImage",
];

fn decode_customization(node: &YNode) -> Result<Customization, ParseError> {
    let mut c = Customization::default();
    for (name, value) in struct_fields(node, "customization", &CUSTOMIZATION_FIELDS)? {
        let path = join("customization", name);
        match name {
            "embeddedMachineConfiguration" => {
                c.embedded_machine_configuration = string_value(value, &path)?.filter(|s| !s.is_empty());
            }
            "extraKernelArgs" => c.extra_kernel_args = string_list(value, &path)?,
            "meta" => c.meta = decode_meta(value, &path)?,
            "systemExtensions" => {
                for (field, list) in struct_fields(value, &path, &["officialExtensions"])? {
                    c.system_extensions = string_list(list, &join(&path, field))?;
                }
            }
            "bootloader" => {
                c.bootloader = match string_value(value, &path)? {
                    None => None,
                    Some(b) => canonical_bootloader(&b).map_err(|m| error(m, value.span))?.map(str::to_string),
                };
            }
            "secureboot" => c.secureboot = decode_secureboot(value, &path)?,
            _ => {
                for (field, size) in struct_fields(value, &path, &["sectorSize"])? {
                    let sector_size = uint_value(size, &join(&path, field), u64::MAX)?.unwrap_or(0);
                    c.disk_image = (sector_size != 0).then_some(DiskImage { sector_size });
                }
            }
        }
    }
    Ok(c)
}

fn decode_meta(node: &YNode, path: &str) -> Result<Vec<Meta>, ParseError> {
    if is_null(node) {
        return Ok(Vec::new());
    }
    let Kind::Seq(items) = &node.kind else {
        return Err(error(format!("`{path}` must be a list, not {}", describe(node)), node.span));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if is_null(item) {
            continue; // go-yaml drops null items of a typed slice
        }
        let item_path = format!("{path}[{i}]");
        let mut meta = Meta::default();
        for (field, value) in struct_fields(item, &item_path, &["key", "value"])? {
            let field_path = join(&item_path, field);
            if field == "key" {
                meta.key = uint_value(value, &field_path, u64::from(u8::MAX))?.unwrap_or(0) as u8;
            } else {
                meta.value = string_value(value, &field_path)?.unwrap_or_default();
            }
        }
        out.push(meta);
    }
    Ok(out)
}

fn decode_secureboot(node: &YNode, path: &str) -> Result<Option<SecureBoot>, ParseError> {
    let mut sb = SecureBoot::default();
    for (field, value) in struct_fields(node, path, &["enrollKeys", "includeWellKnownCertificates"])? {
        let field_path = join(path, field);
        if field == "enrollKeys" {
            // A plain Go `string` in the factory's struct: any text is
            // stored and hashed (the value is checked only when an image is
            // built, internal/profile); empty means unset.
            sb.enroll_keys = string_value(value, &field_path)?.filter(|k| !k.is_empty());
        } else {
            sb.include_well_known_certificates = bool_value(value, &field_path)?;
        }
    }
    let zero = sb.enroll_keys.is_none() && !sb.include_well_known_certificates;
    Ok((!zero).then_some(sb))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> ParseError {
        parse(text).unwrap_err()
    }

    #[test]
    fn vanilla_forms() {
        for text in
            ["{}", "customization: {}", "customization:", "customization: {\"extraKernelArgs\": []}", "---\n", "~"]
        {
            assert_eq!(parse(text).unwrap(), Schematic::default(), "{text:?}");
        }
        assert!(err("").message.contains("empty"));
        assert!(err("# only a comment\n").message.contains("empty"));
    }

    #[test]
    fn json_and_yaml_agree() {
        let json = r#"{"customization": {"meta": [{"key": 10, "value": "foo"}], "extraKernelArgs": [], "systemExtensions": {}}}"#;
        let yaml = "customization:\n  meta:\n    - key: 0xa\n      value: foo\n";
        assert_eq!(parse(json).unwrap(), parse(yaml).unwrap());
        assert_eq!(parse(yaml).unwrap().customization.meta, [Meta { key: 10, value: "foo".into() }]);
    }

    #[test]
    fn unknown_fields_are_named_with_a_span() {
        let text = "customization:\n  extraKernelArg: [a]\n";
        let e = err(text);
        assert!(e.message.starts_with("unknown field `extraKernelArg` in `customization`"), "{e}");
        let (at, len) = e.span.unwrap();
        assert_eq!(&text[at..at + len], "extraKernelArg");
        assert!(err("overlay: {image: a, nam: b}").message.contains("`nam`"));
        assert!(err("customization: {meta: [{key: 1, val: x}]}").message.contains("`val`"));
        assert!(err("foo: 1").message.contains("unknown field `foo` in the schematic"));
    }

    #[test]
    fn go_string_fields_take_any_scalar_text() {
        let s = parse("customization:\n  extraKernelArgs: [1, yes, 0x10, ~, \"\", 'a b', 1.50]\n  meta: [{key: 1, value: 123}, ~, {key: 2}]\n").unwrap();
        assert_eq!(s.customization.extra_kernel_args, ["1", "yes", "0x10", "", "a b", "1.50"]);
        assert_eq!(s.customization.meta, [Meta { key: 1, value: "123".into() }, Meta { key: 2, value: String::new() }]);
    }

    #[test]
    fn meta_keys_like_go_uint8() {
        for (text, key) in [
            ("10", 10),
            ("0xa", 10),
            ("012", 10),
            ("0o12", 10),
            ("1_0", 10),
            ("10.0", 10),
            ("1e1", 10),
            ("255", 255),
            ("-0", 0),
        ] {
            let s = parse(&format!("customization: {{meta: [{{key: {text}, value: v}}]}}")).unwrap();
            assert_eq!(s.customization.meta[0].key, key, "{text}");
        }
        for text in ["256", "-1", "\"10\"", "abc", ".nan", "true", "[1]", "10.7", "255.9"] {
            let e = err(&format!("customization: {{meta: [{{key: {text}, value: v}}]}}"));
            assert!(
                e.message.contains("`customization.meta[0].key` must be an integer between 0 and 255"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn booleans_and_bootloaders() {
        for (text, b) in [("true", true), ("yes", true), ("\"on\"", true), ("No", false), ("~", false)] {
            let s = parse(&format!("customization: {{secureboot: {{includeWellKnownCertificates: {text}}}}}")).unwrap();
            assert_eq!(s.customization.secureboot.is_some(), b, "{text}");
        }
        assert!(
            err("customization: {secureboot: {includeWellKnownCertificates: \"true\"}}")
                .message
                .contains("must be `true` or `false`")
        );
        assert_eq!(
            parse("customization: {bootloader: SD-Boot}").unwrap().customization.bootloader.as_deref(),
            Some("sd-boot")
        );
        assert_eq!(parse("customization: {bootloader: none}").unwrap(), Schematic::default());
        assert!(err("customization: {bootloader: lilo}").message.contains("unknown bootloader `lilo`"));
        assert_eq!(
            parse("customization: {secureboot: {enrollKeys: force}}").unwrap().customization.secureboot,
            Some(SecureBoot { enroll_keys: Some("force".into()), include_well_known_certificates: false })
        );
        // enrollKeys is a plain string to the factory: any value is hashed.
        assert_eq!(
            parse("customization: {secureboot: {enrollKeys: Force}}").unwrap().customization.secureboot,
            Some(SecureBoot { enroll_keys: Some("Force".into()), include_well_known_certificates: false })
        );
        assert!(err("customization: {bootloader: auto}").message.contains("unknown bootloader `auto`"));
    }

    #[test]
    fn overlay_options_like_go_any() {
        let s = parse("overlay:\n  name: rpi_generic\n  image: siderolabs/sbc-raspberrypi\n  options:\n    1: a\n    data: \"mydata\"\n    n: 0x10\n    f: 1.50\n    b: yes\n    t: True\n    z: ~\n    l: [1, \"2\", null]\n    m: {\"k\": v}\n").unwrap();
        let o = s.overlay.unwrap().options;
        assert_eq!(o["1"], OptionValue::String("a".into()));
        assert_eq!(o["data"], OptionValue::String("mydata".into()));
        assert_eq!(o["n"], OptionValue::Int(16));
        assert_eq!(o["f"], OptionValue::Float(1.5));
        assert_eq!(o["b"], OptionValue::String("yes".into()));
        assert_eq!(o["t"], OptionValue::Bool(true));
        assert_eq!(o["z"], OptionValue::Null);
        assert_eq!(
            o["l"],
            OptionValue::List(vec![OptionValue::Int(1), OptionValue::String("2".into()), OptionValue::Null])
        );
        assert!(err("overlay: {options: {d: 2024-01-01}}").message.contains("timestamp"));
        assert!(err("overlay: {options: {m: {1: x}}}").message.contains("not a string"));
    }

    #[test]
    fn refused_yaml_features() {
        assert!(err("customization: !!map {}").message.contains("tags"));
        assert!(err("a: &x {}\n<<: *x\n").message.contains("merge"));
        assert!(err("customization: {}\ncustomization: {}\n").message.contains("duplicate key `customization`"));
        assert!(err("overlay: {options: {a: 1, \"a\": 2}}").message.contains("duplicate key `a`"));
        // The factory reads the first document only, and nothing after it.
        assert_eq!(
            parse("customization: {}\n---\ncustomization: {extraKernelArgs: [a]}\n").unwrap(),
            Schematic::default()
        );
        assert_eq!(parse("---\ncustomization: {}\n---\n[: not yaml").unwrap(), Schematic::default());
        assert!(err("customization: {extraKernelArgs: [\"a\\/b\"]}").message.contains("`\\/`"));
        assert!(err("{\"customization\": {\"extraKernelArgs\": [\"\\ud83d\\ude00\"]}}").message.contains("U+D83D"));
        assert!(err("[]").message.contains("must be a YAML mapping"));
        assert!(err("customization: {extraKernelArgs: a}").message.contains("must be a list of strings"));
        assert!(err("customization: [").message.starts_with("invalid YAML"));
    }

    #[test]
    fn aliases_are_expanded() {
        let s = parse(
            "customization:\n  extraKernelArgs: &args [a, b]\noverlay:\n  name: x\n  image: y\n  options: {k: *args}\n",
        )
        .unwrap();
        assert_eq!(
            s.overlay.unwrap().options["k"],
            OptionValue::List(vec![OptionValue::String("a".into()), OptionValue::String("b".into())])
        );
    }

    #[test]
    fn block_scalars_keep_their_text() {
        let s = parse(
            "customization:\n  embeddedMachineConfiguration: |\n    apiVersion: v1alpha1\n    kind: HostnameConfig\n",
        )
        .unwrap();
        assert_eq!(
            s.customization.embedded_machine_configuration.as_deref(),
            Some("apiVersion: v1alpha1\nkind: HostnameConfig\n")
        );
        // At the end of input without a line break, libyaml adds none.
        let s = parse("customization:\n  embeddedMachineConfiguration: |\n    a").unwrap();
        assert_eq!(s.customization.embedded_machine_configuration.as_deref(), Some("a"));
    }
}
