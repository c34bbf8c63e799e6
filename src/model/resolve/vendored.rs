//! A vendored manifest: the `manifest=` and `sha256=` properties that `argocd`, `addon` and the
//! `cert-manager`/`operator` pins of `cluster-api` take. The file is read through the
//! [`Loader`](super::Loader), its pin checked and its YAML documents parsed once, into
//! [`Vendored`] (fleetc never downloads: a changed file is a reviewed change).

use super::reader::{Reader, missing};
use super::{Resolver, check_relative, path_hint};
use crate::diag::{Diagnostic, codes};
use crate::model::Vendored;

impl Resolver<'_> {
    /// Reads `manifest=` and `sha256=`, loads the file and checks its pin.
    pub(super) fn vendored(&mut self, r: &Reader<'_>) -> Option<Vendored> {
        let path = r.require_str("manifest", self.diags);
        // A missing pin is reported below, once the file is read: its help gives the hash.
        let sha = if r.has_prop("sha256") { r.prop_str("sha256", self.diags) } else { None };
        let sha_missing = !r.has_prop("sha256") && !r.misspelt("sha256");
        let path = path?;
        if !r.has_prop("sha256") && !sha_missing || r.has_prop("sha256") && sha.is_none() {
            return None;
        }
        if let Err(e) = check_relative(&path.value) {
            self.diags.push(Diagnostic::new(&codes::FILE_UNREADABLE, e).at(path.span).label("outside the fleet"));
            return None;
        }
        let content = match self.loader.read(&path.value) {
            Ok(c) => c,
            Err(e) => {
                self.diags.push(
                    Diagnostic::new(&codes::FILE_UNREADABLE, format!("cannot read `{}`: {e}", path.value))
                        .at(path.span)
                        .label("this file")
                        .help(format!(
                            "vendor the rendered manifest in the repository, beside fleet.kdl (fleetc never downloads){}",
                            path_hint(self.loader, &path.value)
                        )),
                );
                return None;
            }
        };
        let actual = crate::digest::sha256_hex(content.as_bytes());
        let Some(sha) = sha else {
            self.diags.push(
                missing(r.node, "property `sha256`").help(format!(
                    "vendored files are pinned so that a changed file is a reviewed change; review `{}`, then pin the sha256 it has now (what `sha256sum {}` prints): `{actual}`",
                    path.value, path.value
                )),
            );
            return None;
        };
        if actual != sha.value {
            self.diags.push(
                Diagnostic::new(&codes::CHECKSUM_MISMATCH, format!("`{}` has sha256 {actual}", path.value))
                    .at(sha.span)
                    .label("pinned sha256 differs"),
            );
        }
        // Parsed once per process and content (`crate::memo`): a second compile of the same
        // fleet (diff's base and head) reads the objects without parsing the text again.
        static OBJECTS: crate::memo::Memo<String, Result<std::sync::Arc<Vec<serde_json::Value>>, String>> =
            crate::memo::Memo::new();
        let objects = match OBJECTS.get_or(actual.clone(), || manifest_documents(&content).map(std::sync::Arc::new)) {
            Ok(o) => o,
            Err(e) => {
                self.diags.push(
                    Diagnostic::new(
                        &codes::INVALID_VALUE,
                        format!("`{}` is not a Kubernetes manifest: {e}", path.value),
                    )
                    .at(path.span)
                    .label("this file")
                    .help("vendor a rendered manifest: YAML documents, each an object with `apiVersion` and `kind`"),
                );
                return None;
            }
        };
        Some(Vendored { path, sha256: sha, content, objects })
    }
}

/// Checks that vendored text is a stream of YAML documents, each an object (or empty), and
/// returns the objects.
fn manifest_documents(content: &str) -> Result<Vec<serde_json::Value>, String> {
    let docs: Vec<Option<serde_json::Value>> = serde_saphyr::from_multiple(content).map_err(|e| {
        let e = e.to_string();
        e.lines().next().unwrap_or("it does not parse as YAML").to_owned()
    })?;
    for (i, d) in docs.iter().enumerate() {
        match d {
            None | Some(serde_json::Value::Object(_)) => {}
            Some(_) => return Err(format!("document {} is not an object", i + 1)),
        }
    }
    Ok(docs.into_iter().flatten().collect())
}
