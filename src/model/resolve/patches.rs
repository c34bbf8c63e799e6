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
        match patch::parse(id, &text) {
            Ok(documents) => Some(Arc::new(PatchFile { id, text, documents })),
            Err(PatchError::Json6902 { span }) => {
                self.diags.push(
                    Diagnostic::new(&codes::PATCH_JSON6902, format!("`{}` is an RFC 6902 JSON patch", path.value))
                        .at(span)
                        .label("a list of `op:` entries")
                        .related(here, "used as a patch here"),
                );
                None
            }
            Err(PatchError::Yaml { span, message } | PatchError::NotADocument { span, message }) => {
                self.diags.push(
                    Diagnostic::new(
                        &codes::PATCH_INVALID,
                        format!("`{}` is not a Talos config patch: {message}", path.value),
                    )
                    .at(span)
                    .label("here")
                    .related(here, "used as a patch here"),
                );
                None
            }
        }
    }
}
