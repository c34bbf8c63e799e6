//! `patch "patches/kubelet.yaml" overrides="R21"`: reads the file once through the loader,
//! adds it to the run's sources and parses it (`model::patch`).

use std::sync::Arc;

use super::reader::Reader;
use super::{Resolver, check_relative};
use crate::diag::{Diagnostic, codes};
use crate::model::Spanned;
use crate::model::patch::{self, OVERRIDABLE, Patch, PatchError, PatchFile, PatchLevel};
use crate::syntax::Node;

impl Resolver<'_> {
    pub(super) fn patch(&mut self, node: &Node, level: PatchLevel) -> Option<Patch> {
        let d = &mut *self.diags;
        let mut r = Reader::new(node, &["overrides"], d);
        let path = r.arg_str(d, "the patch file, relative to fleet.kdl");
        let overrides_prop = r.prop_str("overrides", d);
        r.finish(false, d);
        let mut overrides = Vec::new();
        if let Some(o) = overrides_prop {
            for rule in o.value.split([',', ' ']).filter(|s| !s.is_empty()) {
                if OVERRIDABLE.contains(&rule) {
                    overrides.push(Spanned::new(rule.to_owned(), o.span));
                } else {
                    d.push(
                        Diagnostic::new(&codes::INVALID_VALUE, format!("`{rule}` is not a rule a patch may override"))
                            .at(o.span)
                            .label("not overridable")
                            .help(format!(
                                "a patch may say it undoes {} on purpose; key material never belongs in a patch (R14, F11)",
                                OVERRIDABLE.join(", ")
                            )),
                    );
                }
            }
        }
        let path = path?;
        if let Err(e) = check_relative(&path.value) {
            d.push(Diagnostic::new(&codes::FILE_UNREADABLE, e).at(path.span).label("outside the fleet"));
            return None;
        }
        let file = match self.patch_files.get(&path.value) {
            Some(f) => f.clone(),
            None => {
                let f = self.read_patch(&path, node);
                self.patch_files.insert(path.value.clone(), f.clone());
                f
            }
        }?;
        Some(Patch { path, overrides, level, file, span: node.head_span() })
    }

    fn read_patch(&mut self, path: &Spanned<String>, node: &Node) -> Option<Arc<PatchFile>> {
        let text = match self.loader.read(&path.value) {
            Ok(t) => t,
            Err(e) => {
                self.diags.push(
                    Diagnostic::new(&codes::FILE_UNREADABLE, format!("cannot read `{}`: {e}", path.value))
                        .at(path.span)
                        .label("this file")
                        .help(format!(
                            "a patch is a file beside fleet.kdl, named relative to its directory{}",
                            super::path_hint(self.loader, &path.value)
                        )),
                );
                return None;
            }
        };
        let id = self.sources.add(path.value.clone(), text.clone());
        let here = node.head_span();
        let refused = |d: &mut crate::diag::Diagnostics, code, message: String, span, label: &str| {
            d.push(
                Diagnostic::new(code, message).at(span).label(label.to_owned()).related(here, "used as a patch here"),
            );
        };
        match patch::parse_file(id, &text, &path.value) {
            Ok(parsed) if parsed.documents.is_empty() => {
                // Talos loads no document as an empty JSON 6902 patch, refused on a multi-document
                // config (siderolabs/talos v1.13.9 pkg/machinery/config/configloader/configloader.go
                // l.43-45, configpatcher/load.go l.22-68, configpatcher/json6902.go l.27-29).
                let start = text.find(|c: char| !c.is_whitespace()).unwrap_or(0);
                let len = text[start..].find('\n').unwrap_or(text.len() - start);
                let what = if text.trim().is_empty() { "is empty" } else { "holds no document (only comments)" };
                self.diags.push(
                    Diagnostic::new(&codes::PATCH_EMPTY, format!("`{}` {what}", path.value))
                        .at(crate::diag::Span::new(id, start, len))
                        .label("no document")
                        .related(here, "used as a patch here"),
                );
                None
            }
            Ok(parsed) => {
                duplicate_documents(&parsed.documents, &path.value, here, self.diags);
                Some(Arc::new(PatchFile { id, text, documents: parsed.documents, converted: parsed.converted }))
            }
            Err(PatchError::Json6902 { span, why }) => {
                refused(
                    self.diags,
                    &codes::PATCH_JSON6902,
                    format!(
                        "`{}` is an RFC 6902 JSON patch fleetc cannot convert to a strategic merge: {why}",
                        path.value
                    ),
                    span,
                    "this operation",
                );
                None
            }
            Err(PatchError::Yaml { span, message } | PatchError::NotADocument { span, message }) => {
                refused(
                    self.diags,
                    &codes::PATCH_INVALID,
                    format!("`{}` is not a Talos config patch: {message}", path.value),
                    span,
                    "here",
                );
                None
            }
        }
    }
}

/// Two documents of one patch with the same `apiVersion`, `kind` and `name`: Talos's decoder
/// refuses the file ("duplicate document … is not allowed", siderolabs/talos v1.13.9
/// pkg/machinery/config/configloader/internal/decoder/decoder.go l.121-129). A document that
/// is only a `$patch: delete` is not counted there (it is taken out first, l.95-104).
fn duplicate_documents(
    docs: &[patch::PatchDocument],
    file: &str,
    here: crate::diag::Span,
    d: &mut crate::diag::Diagnostics,
) {
    let id = |doc: &patch::PatchDocument| {
        let s = |k: &str| doc.value.get(k).and_then(serde_json::Value::as_str).unwrap_or("").to_owned();
        (s("apiVersion"), doc.kind().to_owned(), s("name"))
    };
    let counted: Vec<&patch::PatchDocument> = docs
        .iter()
        .filter(|doc| doc.value.get("$patch").and_then(serde_json::Value::as_str) != Some("delete"))
        .collect();
    for (i, doc) in counted.iter().enumerate() {
        if let Some(first) = counted[..i].iter().find(|f| id(f) == id(doc)) {
            let (_, kind, name) = id(doc);
            let what = if name.is_empty() { format!("`{kind}`") } else { format!("`{kind}` `{name}`") };
            d.push(
                Diagnostic::new(&codes::PATCH_DUPLICATE_DOCUMENT, format!("`{file}` has two {what} documents"))
                    .at(doc.span)
                    .label("the second")
                    .related(first.span, "the first")
                    .related(here, "used as a patch here")
                    .help("Talos's decoder refuses a patch with two documents of the same kind and name: merge them into one"),
            );
        }
    }
}
