//! talhelper's env substitution: `${NAME}` in the talhelper config (and in the patch files it
//! names) replaced from its env files (talenv.yaml), the way talhelper v3.1.16 does it
//! (`pkg/substitute/envsubst.go`: github.com/a8m/envsubst `BytesRestricted(…, true, true)`, so
//! an unset or empty variable is an error): `$NAME`, `${NAME}`, `${NAME:-default}`,
//! `${NAME-default}`, and `$$` for a `$`. Only the env files are read, never the process
//! environment: two imports of the same files write the same fleet.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::diag::{Diagnostic, Diagnostics, FileId, codes};
use crate::model::patch::read_yaml;

/// The variables of the env files that were read.
#[derive(Debug, Default)]
pub struct Env {
    pub vars: BTreeMap<String, String>,
    /// Env files that are SOPS-encrypted and were not read (their names).
    pub encrypted: Vec<String>,
    /// Env files that were read (their names).
    pub read: Vec<String>,
}

impl Env {
    /// Reads one env file (`name`, its text as `file` of the run's sources): a YAML mapping of
    /// names to scalars (talhelper reads it with joho/godotenv, which takes `NAME: value`).
    pub fn add(&mut self, file: FileId, name: &str, text: &str, diags: &mut Diagnostics) {
        let docs = match read_yaml(file, text) {
            Ok(d) => d,
            Err(crate::model::patch::PatchError::Yaml { span, message }) => {
                diags.push(
                    Diagnostic::new(&codes::IMPORT_INVALID, format!("{name} is not YAML: {message}"))
                        .at(span)
                        .label("here"),
                );
                return;
            }
            Err(_) => return,
        };
        let mut vars = BTreeMap::new();
        for doc in &docs {
            let Some(map) = doc.value.as_object() else {
                diags.push(
                    Diagnostic::new(&codes::IMPORT_INVALID, format!("{name} is not a mapping of variables"))
                        .at(doc.span)
                        .label("not `NAME: value` lines"),
                );
                return;
            };
            if map.contains_key("sops") {
                self.encrypted.push(name.to_owned());
                return;
            }
            for (k, v) in map {
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    Value::Bool(_) | Value::Number(_) => v.to_string(),
                    _ => {
                        diags.push(
                            Diagnostic::new(&codes::IMPORT_INVALID, format!("`{k}` in {name} is not a scalar"))
                                .at(doc.place(&format!("/{k}")))
                                .label("a list or a mapping"),
                        );
                        continue;
                    }
                };
                vars.insert(k.clone(), s);
            }
        }
        self.vars.extend(vars);
        self.read.push(name.to_owned());
    }

    /// `text` with every variable replaced, or the first variable that is unset or empty.
    pub fn substitute(&self, text: &str) -> Result<String, String> {
        let b = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        let is_name = |c: u8, first: bool| c == b'_' || c.is_ascii_alphabetic() || (!first && c.is_ascii_digit());
        while i < b.len() {
            if b[i] != b'$' {
                let next = text[i..].find('$').map_or(text.len(), |n| i + n);
                out.push_str(&text[i..next]);
                i = next;
                continue;
            }
            match b.get(i + 1) {
                Some(b'$') => {
                    out.push('$');
                    i += 2;
                }
                Some(b'{') => {
                    let Some(close) = text[i..].find('}').map(|n| i + n) else {
                        out.push_str(&text[i..]);
                        break;
                    };
                    let inner = &text[i + 2..close];
                    let end = inner.bytes().position(|c| !is_name(c, false)).unwrap_or(inner.len());
                    let (name, rest) = inner.split_at(end);
                    if name.is_empty() || !is_name(name.as_bytes()[0], true) {
                        out.push_str(&text[i..=close]);
                        i = close + 1;
                        continue;
                    }
                    let value = self.vars.get(name).filter(|v| !v.is_empty());
                    let default =
                        rest.strip_prefix(":-").or_else(|| rest.strip_prefix("-")).or_else(|| rest.strip_prefix(":="));
                    match (value, default) {
                        (Some(v), _) => out.push_str(v),
                        (None, Some(d)) if !d.is_empty() => out.push_str(d),
                        _ => return Err(name.to_owned()),
                    }
                    i = close + 1;
                }
                Some(&c) if is_name(c, true) => {
                    let end = text[i + 1..].bytes().position(|c| !is_name(c, false)).map_or(text.len(), |n| i + 1 + n);
                    let name = &text[i + 1..end];
                    match self.vars.get(name).filter(|v| !v.is_empty()) {
                        Some(v) => out.push_str(v),
                        None => return Err(name.to_owned()),
                    }
                    i = end;
                }
                _ => {
                    out.push('$');
                    i += 1;
                }
            }
        }
        Ok(out)
    }

    /// The help of an unset variable: where it may be.
    pub fn unset_help(&self, name: &str) -> String {
        if self.encrypted.is_empty() {
            format!(
                "define `{name}` in an env file given with `--env FILE` (talenv.yaml beside the talconfig is read on its own), or write a default: `${{{name}:-value}}`"
            )
        } else {
            format!(
                "`{name}` may be in {}, which is SOPS-encrypted and not read: decrypt it (`sops -d`) into a file and give it with `--env FILE`",
                self.encrypted.join(", ")
            )
        }
    }
}

/// Substitutes in every string of `value` (pointer `at`), reporting each unset variable at
/// the place of the string that names it.
pub fn substitute_tree(
    env: &Env,
    value: &mut Value,
    at: &str,
    place: &dyn Fn(&str) -> crate::diag::Span,
    diags: &mut Diagnostics,
) {
    match value {
        Value::String(s) if s.contains('$') => match env.substitute(s) {
            Ok(v) => *s = v,
            Err(name) => diags.push(
                Diagnostic::new(
                    &codes::IMPORT_UNSET_VARIABLE,
                    format!("`${{{name}}}` is not set by any env file read"),
                )
                .at(place(at))
                .label(format!("`{name}` is unset"))
                .help(env.unset_help(&name)),
            ),
        },
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                substitute_tree(env, v, &format!("{at}/{i}"), place, diags);
            }
        }
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                substitute_tree(env, v, &p, place, diags);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env { vars: pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(), ..Env::default() }
    }

    #[test]
    fn every_form_talhelper_substitutes_is_substituted() {
        let e = env(&[("IP", "10.0.0.5"), ("EMPTY", "")]);
        assert_eq!(e.substitute("https://${IP}:6443").unwrap(), "https://10.0.0.5:6443");
        assert_eq!(e.substitute("$IP/24").unwrap(), "10.0.0.5/24");
        assert_eq!(e.substitute("${NOPE:-x} ${NOPE-y}").unwrap(), "x y");
        assert_eq!(e.substitute("$$IP").unwrap(), "$IP");
        assert_eq!(e.substitute("cost: 5$").unwrap(), "cost: 5$");
        assert_eq!(e.substitute("${NOPE}").unwrap_err(), "NOPE");
        assert_eq!(e.substitute("${EMPTY}").unwrap_err(), "EMPTY", "an empty variable is refused, as talhelper does");
    }
}
