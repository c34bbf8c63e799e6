//! Talos config patches the user writes beside fleet.kdl (`patch "patches/kubelet.yaml"`): a
//! strategic-merge patch in Talos's multi-document format, the same file talosctl's
//! `--config-patch`, the OpenTofu provider's `config_patches` and CABPT's `strategicPatches`
//! take (all through `configpatcher.LoadPatch`, siderolabs/talos v1.13.0
//! `pkg/machinery/config/configpatcher/load.go`).
//!
//! The model reads each file once through the compile's [`Loader`](super::Loader), adds it to
//! the run's sources (so that diagnostics point into it, line and column), and parses it into
//! documents that keep, for every value, where it was written. What a patch may contain (the
//! Talos schema of each version it reaches, fleetc's own rules) is checked in
//! `check::patches`; this module refuses only what is not a strategic-merge patch at all.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::diag::{FileId, Span, Spanned};

/// Where a `patch` is written. Patches apply in this order, after fleetc's own documents
/// (docs/talos.md, "Patches"); a later patch wins where two set the same field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PatchLevel {
    Fleet,
    Environment,
    Cluster,
    /// The role's block: `control-plane` (for the control plane, role and pool are one block).
    Role,
    Pool,
    /// A named node's block (`node "cp-1" { patch "…" }`): applied last, to one machine only.
    Node,
}

impl PatchLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            PatchLevel::Fleet => "fleet",
            PatchLevel::Environment => "environment",
            PatchLevel::Cluster => "cluster",
            PatchLevel::Role => "role",
            PatchLevel::Pool => "pool",
            PatchLevel::Node => "node",
        }
    }
}

/// One `patch` line of fleet.kdl, with the file it names.
#[derive(Debug, Clone)]
pub struct Patch {
    /// The file, relative to fleet.kdl's directory, where the `patch` line names it.
    pub path: Spanned<String>,
    /// The rules this patch says it undoes on purpose (`overrides="R21"`): each is then a
    /// warning naming the rule, not an error.
    pub overrides: Vec<Spanned<String>>,
    pub level: PatchLevel,
    pub file: Arc<PatchFile>,
    /// The `patch` node's head in fleet.kdl.
    pub span: Span,
}

/// The rules a patch may say it undoes on purpose (`overrides=`): the rules of the fields fleetc
/// writes (`emit::talos::owned::rules`, which a test holds equal to this list). Key material
/// (R14, F11) is not among them: a secret in a patch would be in out/ and in git.
pub const OVERRIDABLE: &[&str] = &["R15", "R16", "R17", "R18", "R21"];

impl Patch {
    pub fn overrides(&self, rule: &str) -> bool {
        self.overrides.iter().any(|o| o.value == rule)
    }
}

/// A patch file as read: its text (what diagnostics point into) and its documents. An RFC 6902
/// JSON patch is held converted ([`convert_json6902`]): `documents` is the equivalent strategic
/// merge and `converted` the YAML the consumers get instead of `text`.
#[derive(Debug)]
pub struct PatchFile {
    pub id: FileId,
    pub text: String,
    pub documents: Vec<PatchDocument>,
    pub converted: Option<String>,
}

impl PatchFile {
    /// The bytes the consumers get: the file's own, or its conversion to a strategic merge.
    pub fn emitted(&self) -> &str {
        self.converted.as_deref().unwrap_or(&self.text)
    }
}

/// One YAML document of a patch file, as JSON, with the place of every value.
#[derive(Debug, Clone)]
pub struct PatchDocument {
    pub value: Value,
    /// JSON pointer (`/machine/install/image`) → where that value (or, for `…/@key`, that
    /// key) is written in the patch file.
    pub places: BTreeMap<String, Span>,
    /// The document's first value.
    pub span: Span,
}

impl PatchDocument {
    /// `v1alpha1` for the machine config document (one with `machine` or `cluster`, no
    /// `kind`), else its `kind`.
    pub fn kind(&self) -> &str {
        self.value.get("kind").and_then(Value::as_str).unwrap_or("v1alpha1")
    }
    /// Where the value at `pointer` is written, or the nearest enclosing value's place.
    pub fn place(&self, pointer: &str) -> Span {
        let mut p = pointer;
        loop {
            if let Some(s) = self.places.get(p) {
                return *s;
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return self.span,
            }
        }
    }
    /// Where the key at `pointer` is written (its value's place when the key's is unknown).
    pub fn key_place(&self, pointer: &str) -> Span {
        self.places.get(&format!("{pointer}/@key")).copied().unwrap_or_else(|| self.place(pointer))
    }
}

/// Why a file is not a strategic-merge patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchError {
    /// Not YAML at all.
    Yaml { span: Span, message: String },
    /// A list of `op:` entries: an RFC 6902 JSON patch with an operation that has no
    /// strategic-merge equivalent (`why` says which and why).
    Json6902 { span: Span, why: String },
    /// A document that is not a mapping, or a mapping that is no Talos document.
    NotADocument { span: Span, message: String },
}

/// A parsed patch file: its documents, and for an RFC 6902 JSON patch the YAML of its
/// strategic-merge conversion.
#[derive(Debug)]
pub struct Parsed {
    pub documents: Vec<PatchDocument>,
    pub converted: Option<String>,
}

/// Parses a patch file (`file` is its id in the run's sources); an RFC 6902 JSON patch is
/// converted ([`convert_json6902`]).
pub fn parse_file(file: FileId, text: &str, name: &str) -> Result<Parsed, PatchError> {
    match parse(file, text) {
        Err(PatchError::Json6902 { .. }) => {
            let nodes: Vec<YNode> = serde_saphyr::from_multiple_with_options(
                text,
                serde_saphyr::options! { strict_booleans: true, legacy_octal_numbers: false },
            )
            .unwrap_or_default();
            let Some(list) = nodes.into_iter().find(|n| matches!(n.0.value, Tree::Seq(_))) else {
                return Err(PatchError::Json6902 { span: Span::new(file, 0, 0), why: "no operations".into() });
            };
            let doc = convert_json6902(file, text, &list)?;
            let yaml = serde_saphyr::to_string(&doc.value).unwrap_or_default();
            let converted = format!(
                "# Converted by fleetc from the RFC 6902 JSON patch {name} into the equivalent strategic merge\n# (docs/talos.md, \"Patches\"): Talos applies JSON patches to single-document configs only.\n{yaml}"
            );
            Ok(Parsed { documents: vec![doc], converted: Some(converted) })
        }
        other => other.map(|documents| Parsed { documents, converted: None }),
    }
}

/// One JSON pointer's segments (`~1` is `/`, `~0` is `~`).
fn segments(path: &str) -> Vec<String> {
    path.split('/').skip(1).map(|s| s.replace("~1", "/").replace("~0", "~")).collect()
}

/// The strategic-merge document equivalent to an RFC 6902 patch on the v1alpha1 document, where
/// every operation maps: `add`/`replace` of a mapping key (`/machine/kubelet/extraArgs/a`) is
/// that key in nested mappings; `remove` of one is `$patch: delete` there (Talos's decoder
/// deletes the key at that path, siderolabs/talos v1.13.9
/// `pkg/machinery/config/configloader/internal/decoder/delete.go`); `add` to `…/-` appends to
/// the list, which is what Talos's merge does with a list (`pkg/machinery/config/merge/merge.go`
/// l.15-25). Refused, naming the operation: `test`, `move`, `copy`, a list index (`/0`), the
/// whole document (`""`), `replace` with a list or a mapping (the merge would append or merge,
/// not replace), and two operations on one path.
fn convert_json6902(file: FileId, text: &str, list: &YNode) -> Result<PatchDocument, PatchError> {
    let Tree::Seq(items) = &list.0.value else {
        return Err(PatchError::Json6902 { span: list.span(file, text), why: "not a list of operations".into() });
    };
    let mut places = BTreeMap::new();
    let all = list.to_json(file, text, String::new(), &mut places);
    let mut out = Value::Object(serde_json::Map::new());
    let mut out_places = BTreeMap::new();
    let mut seen: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let span = item.span(file, text);
        let op = &all[i];
        let refuse = |why: String| PatchError::Json6902 { span, why };
        let name = op.get("op").and_then(Value::as_str).unwrap_or("");
        let Some(path) = op.get("path").and_then(Value::as_str) else {
            return Err(refuse(format!("operation {} has no `path`", i + 1)));
        };
        let what = format!("`{name} {path}`");
        if !matches!(name, "add" | "replace" | "remove") {
            return Err(refuse(format!(
                "{what}: a `{name}` operation has no strategic-merge equivalent (only `add`, `replace` and `remove` map)"
            )));
        }
        let mut segs = segments(path);
        let append = name == "add" && segs.last().is_some_and(|s| s == "-");
        if append {
            segs.pop();
        }
        if segs.is_empty() {
            return Err(refuse(format!(
                "{what}: an operation on the whole document has no strategic-merge equivalent"
            )));
        }
        if let Some(s) = segs.iter().find(|s| *s == "-" || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))) {
            return Err(refuse(format!(
                "{what}: `{s}` is a list index, and a strategic merge cannot address a list item by position"
            )));
        }
        let value = op.get("value").cloned();
        if name != "remove" && value.is_none() {
            return Err(refuse(format!("{what} has no `value`")));
        }
        if name == "replace" && value.as_ref().is_some_and(|v| v.is_array() || v.is_object()) {
            return Err(refuse(format!(
                "{what}: Talos's merge appends to a list and merges into a mapping, so replacing one has no strategic-merge equivalent (delete it in one patch and set it in the next)"
            )));
        }
        let pointer: String = segs.iter().map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1"))).collect();
        if seen
            .iter()
            .any(|p| p == &pointer || p.starts_with(&format!("{pointer}/")) || pointer.starts_with(&format!("{p}/")))
        {
            return Err(refuse(format!("{what}: a second operation on `{path}` (or inside it)")));
        }
        seen.push(pointer.clone());
        let leaf = match name {
            "remove" => serde_json::json!({"$patch": "delete"}),
            _ if append => Value::Array(vec![value.unwrap_or(Value::Null)]),
            _ => value.unwrap_or(Value::Null),
        };
        // Nest it.
        let mut at = &mut out;
        for s in &segs[..segs.len() - 1] {
            let m = at.as_object_mut().expect("a mapping");
            at = m.entry(s.clone()).or_insert_with(|| Value::Object(serde_json::Map::new()));
            if !at.is_object() {
                return Err(refuse(format!("{what}: `{s}` is set by an earlier operation")));
            }
        }
        at.as_object_mut().expect("a mapping").insert(segs[segs.len() - 1].clone(), leaf);
        // Places: the converted value's pointer → where the operation wrote it.
        let path_span = places.get(&format!("/{i}/path")).copied().unwrap_or(span);
        let mut prefix = String::new();
        for s in &segs {
            prefix.push('/');
            prefix.push_str(&s.replace('~', "~0").replace('/', "~1"));
            out_places.entry(prefix.clone()).or_insert(path_span);
            out_places.entry(format!("{prefix}/@key")).or_insert(path_span);
        }
        let from = format!("/{i}/value");
        let to = if append { format!("{pointer}/0") } else { pointer.clone() };
        for (p, sp) in places.range(from.clone()..) {
            let Some(rest) = p.strip_prefix(&from) else { break };
            if rest.is_empty() || rest.starts_with('/') {
                out_places.insert(format!("{to}{rest}"), *sp);
            }
        }
        out_places.insert(pointer.clone(), places.get(&from).copied().unwrap_or(path_span));
    }
    let is_v1alpha1 = out.get("machine").is_some() || out.get("cluster").is_some();
    if !is_v1alpha1 {
        return Err(PatchError::Json6902 {
            span: list.span(file, text),
            why: "its operations address neither `/machine` nor `/cluster` of the v1alpha1 document".into(),
        });
    }
    Ok(PatchDocument { value: out, places: out_places, span: list.span(file, text) })
}

/// Every YAML document of `text` (`file` is its id in the run's sources) as JSON with the
/// place of every value, empty documents left out, whatever the documents hold: the reader of
/// foreign files (`fleetc import`). Only text that is not YAML is refused.
pub fn read_yaml(file: FileId, text: &str) -> Result<Vec<PatchDocument>, PatchError> {
    Ok(load(file, text)?
        .into_iter()
        .filter(|n| !matches!(n.0.value, Tree::Null))
        .map(|n| {
            let span = n.span(file, text);
            let mut places = BTreeMap::new();
            let value = n.to_json(file, text, String::new(), &mut places);
            PatchDocument { value, places, span }
        })
        .collect())
}

/// The YAML documents of `text`, each with its place.
fn load(file: FileId, text: &str) -> Result<Vec<YNode>, PatchError> {
    let options = serde_saphyr::options! { strict_booleans: true, legacy_octal_numbers: false };
    serde_saphyr::from_multiple_with_options(text, options).map_err(|e| {
        let (line, col) = e.location().map_or((1, 1), |l| (l.line() as usize, l.column() as usize));
        PatchError::Yaml { span: span_at(file, text, line, col, 1), message: first_line(&e.to_string()) }
    })
}

/// Parses a patch file (`file` is its id in the run's sources).
pub fn parse(file: FileId, text: &str) -> Result<Vec<PatchDocument>, PatchError> {
    let nodes = load(file, text)?;
    let mut docs = Vec::new();
    for n in nodes {
        let span = n.span(file, text);
        match &n.0.value {
            Tree::Null => {}
            Tree::Seq(items) => {
                let ops = items
                    .iter()
                    .any(|i| matches!(&i.0.value, Tree::Map(m) if m.iter().any(|(k, _)| k.as_str() == Some("op"))));
                return Err(if ops {
                    PatchError::Json6902 { span, why: String::new() }
                } else {
                    PatchError::NotADocument { span, message: "a list, not a Talos config document".into() }
                });
            }
            Tree::Map(_) => {
                let mut places = BTreeMap::new();
                let value = n.to_json(file, text, String::new(), &mut places);
                let is_v1alpha1 = value.get("machine").is_some() || value.get("cluster").is_some();
                if value.get("kind").is_none() && !is_v1alpha1 {
                    return Err(PatchError::NotADocument {
                        span,
                        message: "a mapping with neither `kind` nor `machine`/`cluster`".into(),
                    });
                }
                docs.push(PatchDocument { value, places, span });
            }
            _ => {
                return Err(PatchError::NotADocument { span, message: "a scalar, not a Talos config document".into() });
            }
        }
    }
    Ok(docs)
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).to_owned()
}

/// The byte span of 1-based `line`/`col` (in characters), `len` bytes long, cut at the line's end.
fn span_at(file: FileId, text: &str, line: usize, col: usize, len: usize) -> Span {
    let start_of_line: usize =
        text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum::<usize>().min(text.len());
    let line_text = text[start_of_line..].split('\n').next().unwrap_or("");
    let in_line: usize = line_text.chars().take(col.saturating_sub(1)).map(char::len_utf8).sum();
    let start = start_of_line + in_line;
    let rest = line_text.len() - in_line;
    Span::new(file, start, if rest == 0 { 0 } else { len.clamp(1, rest) })
}

/// A YAML node with its place.
#[derive(Deserialize)]
#[serde(transparent)]
struct YNode(serde_saphyr::Spanned<Tree>);

enum Tree {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<YNode>),
    Map(Vec<(YNode, YNode)>),
}

impl YNode {
    fn as_str(&self) -> Option<&str> {
        match &self.0.value {
            Tree::Str(s) => Some(s),
            _ => None,
        }
    }
    fn span(&self, file: FileId, text: &str) -> Span {
        let loc = self.0.referenced;
        let len = loc.span().byte_len().map_or(1, |l| l as usize);
        span_at(file, text, loc.line() as usize, loc.column() as usize, len)
    }
    fn to_json(&self, file: FileId, text: &str, pointer: String, places: &mut BTreeMap<String, Span>) -> Value {
        places.insert(pointer.clone(), self.span(file, text));
        match &self.0.value {
            Tree::Null => Value::Null,
            Tree::Bool(b) => Value::Bool(*b),
            Tree::Int(i) => Value::from(*i),
            Tree::UInt(u) => Value::from(*u),
            Tree::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Tree::Str(s) => Value::String(s.clone()),
            Tree::Seq(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| n.to_json(file, text, format!("{pointer}/{i}"), places))
                    .collect(),
            ),
            Tree::Map(entries) => {
                let mut m = serde_json::Map::new();
                for (k, v) in entries {
                    let key = match &k.0.value {
                        Tree::Str(s) => s.clone(),
                        Tree::Int(i) => i.to_string(),
                        Tree::UInt(u) => u.to_string(),
                        Tree::Bool(b) => b.to_string(),
                        _ => String::new(),
                    };
                    let p = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                    places.insert(format!("{p}/@key"), k.span(file, text));
                    let v = v.to_json(file, text, p, places);
                    m.insert(key, v);
                }
                Value::Object(m)
            }
        }
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a YAML value")
            }
            fn visit_unit<E>(self) -> Result<Tree, E> {
                Ok(Tree::Null)
            }
            fn visit_none<E>(self) -> Result<Tree, E> {
                Ok(Tree::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
                Tree::deserialize(d)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Tree, E> {
                Ok(Tree::Bool(b))
            }
            fn visit_i64<E>(self, i: i64) -> Result<Tree, E> {
                Ok(Tree::Int(i))
            }
            fn visit_u64<E>(self, u: u64) -> Result<Tree, E> {
                Ok(Tree::UInt(u))
            }
            fn visit_f64<E>(self, f: f64) -> Result<Tree, E> {
                Ok(Tree::Float(f))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Tree, E> {
                Ok(Tree::Str(s.to_owned()))
            }
            fn visit_string<E>(self, s: String) -> Result<Tree, E> {
                Ok(Tree::Str(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Tree, A::Error> {
                let mut v = Vec::new();
                while let Some(n) = a.next_element::<YNode>()? {
                    v.push(n);
                }
                Ok(Tree::Seq(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Tree, A::Error> {
                let mut v = Vec::new();
                while let Some((k, n)) = a.next_entry::<YNode, YNode>()? {
                    v.push((k, n));
                }
                Ok(Tree::Map(v))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: FileId = FileId(1);

    #[test]
    fn a_multi_document_patch_keeps_the_place_of_every_value() {
        let text = "machine:\n  kubelet:\n    extraArgs:\n      max-pods: \"150\"\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: docker.io\nendpoints:\n  - url: https://mirror.example\n";
        let docs = parse(F, text).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].kind(), "v1alpha1");
        assert_eq!(docs[1].kind(), "RegistryMirrorConfig");
        let s = docs[0].place("/machine/kubelet/extraArgs/max-pods");
        assert_eq!(&text[s.start..s.end()], "\"150\"");
        let k = docs[1].key_place("/endpoints");
        assert_eq!(&text[k.start..k.end()], "endpoints");
        let u = docs[1].place("/endpoints/0/url");
        assert_eq!(&text[u.start..u.end()], "https://mirror.example");
    }

    #[test]
    fn a_json_patch_is_not_a_strategic_merge_patch() {
        let text = "- op: add\n  path: /machine/network/hostname\n  value: x\n";
        assert!(matches!(parse(F, text), Err(PatchError::Json6902 { .. })));
        assert!(matches!(parse(F, "foo: bar\n"), Err(PatchError::NotADocument { .. })));
        assert!(matches!(parse(F, "machine: [\n"), Err(PatchError::Yaml { .. })));
    }

    #[test]
    fn delete_directives_are_kept() {
        let text = "apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\n$patch: delete\n";
        let docs = parse(F, text).unwrap();
        assert_eq!(docs[0].value["$patch"], "delete");
    }
}
