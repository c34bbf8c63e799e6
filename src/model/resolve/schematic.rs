//! `schematic "<name>" { extension … kernel-arg … meta … overlay … }`: an Image Factory
//! schematic, normalized, encoded canonically and hashed into its ID
//! (`crate::schematic`), into the model's [`Schematic`]. A value that cannot be encoded with
//! certainty is refused where it is written.

use super::Resolver;
use super::reader::{Reader, unknown_child};
use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Schematic, Spanned};
use crate::syntax::Node;

impl Resolver<'_> {
    pub(super) fn schematic(&mut self, node: &Node) -> Option<Schematic> {
        let mut r = Reader::new(node, &[], self.diags);
        let name = r.name_arg(self.diags);
        r.finish(true, self.diags);
        let mut spec = crate::schematic::Schematic::default();
        let mut extensions = Vec::new();
        for child in node.children() {
            let d = &mut *self.diags;
            match child.name.value.as_str() {
                "extension" => {
                    let mut r = Reader::new(child, &[], d);
                    let names = r.rest_str(d, "an extension name");
                    spec.customization.system_extensions.extend(names.iter().map(|s| s.value.clone()));
                    extensions.extend(names);
                    r.finish(false, d);
                }
                "kernel-arg" => {
                    let mut r = Reader::new(child, &[], d);
                    for arg in r.rest_str(d, "a kernel argument") {
                        let mut one = crate::schematic::Schematic::default();
                        one.customization.extra_kernel_args.push(arg.value.clone());
                        if encodable(&one, &arg, d) {
                            spec.customization.extra_kernel_args.push(arg.value);
                        }
                    }
                    r.finish(false, d);
                }
                "meta" => {
                    let r = Reader::new(child, &["key", "value"], d);
                    let key = if r.has_prop("key") {
                        r.prop_int::<u8>("key", d)
                    } else {
                        r.report_missing("key", d);
                        None
                    };
                    let value = r.require_str("value", d);
                    if let (Some(key), Some(value)) = (key, value) {
                        let meta = crate::schematic::Meta { key: key.value, value: value.value.clone() };
                        let mut one = crate::schematic::Schematic::default();
                        one.customization.meta.push(meta.clone());
                        if encodable(&one, &value, d) {
                            spec.customization.meta.push(meta);
                        }
                    }
                    r.finish(false, d);
                }
                "overlay" => {
                    let r = Reader::new(child, &["image", "name"], d);
                    let image = r.require_str("image", d);
                    let oname = r.require_str("name", d);
                    if let (Some(image), Some(name)) = (image, oname) {
                        spec.overlay = Some(crate::schematic::Overlay {
                            image: image.value,
                            name: name.value,
                            ..Default::default()
                        });
                    }
                    r.finish(false, d);
                }
                _ => unknown_child(child, "schematic", &["extension", "kernel-arg", "meta", "overlay"], d),
            }
        }
        let name = name?;
        let spec = spec.normalized();
        let (canonical, id) = match (spec.canonical_yaml(), spec.id()) {
            (Ok(c), Ok(id)) => (c, id),
            (Err(e), _) | (_, Err(e)) => {
                self.diags.push(
                    Diagnostic::new(&codes::SCHEMATIC_UNENCODABLE, format!("schematic `{}`: {e}", name.value))
                        .at(node.head_span())
                        .label("cannot be hashed with certainty"),
                );
                return None;
            }
        };
        Some(Schematic { name, spec, extensions, canonical, id, span: node.head_span() })
    }
}

/// Whether a schematic holding one user value encodes with certainty; if not, the refusal
/// points at that value.
fn encodable(one: &crate::schematic::Schematic, value: &Spanned<String>, d: &mut Diagnostics) -> bool {
    match one.canonical_yaml() {
        Ok(_) => true,
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.split(" (at `").next().unwrap_or(&msg).to_owned();
            d.push(
                Diagnostic::new(&codes::SCHEMATIC_UNENCODABLE, msg)
                    .at(value.span)
                    .label("cannot be hashed with certainty"),
            );
            false
        }
    }
}
