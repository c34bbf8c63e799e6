//! YAML streams split into documents. fleetc's YAML writer ([`crate::emit::yaml::documents`])
//! separates documents with a `---` line and puts its header comment before the first one;
//! each document's segment starts at its separator, so the header belongs to the first
//! document. Each document is parsed (with `serde_saphyr`) only for its identity: apiVersion,
//! kind, `metadata.namespace`, and `metadata.name` (or a top-level `name`, as Talos config
//! documents such as `VolumeConfig` carry it).

use serde::Deserialize;

use super::object::{ObjectKey, Segment};

#[derive(Deserialize, Default)]
struct Identity {
    #[serde(rename = "apiVersion")]
    api_version: Option<serde_json::Value>,
    kind: Option<serde_json::Value>,
    name: Option<serde_json::Value>,
    metadata: Option<Metadata>,
}

#[derive(Deserialize, Default)]
struct Metadata {
    name: Option<serde_json::Value>,
    namespace: Option<serde_json::Value>,
}

fn text(v: Option<serde_json::Value>) -> Option<String> {
    match v? {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn is_separator(line: &str) -> bool {
    line == "---" || line.starts_with("--- ")
}

/// The documents of a YAML stream, or `None` when a document does not parse (the caller
/// then treats the file as one object rather than guess at its structure).
pub(super) fn split(lines: &[&str]) -> Option<Vec<Segment>> {
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(lines.iter().enumerate().filter(|(i, l)| *i > 0 && is_separator(l)).map(|(i, _)| i));
    bounds.push(lines.len());
    let mut segments = Vec::new();
    let mut unnamed = 0;
    for w in bounds.windows(2) {
        let (start, end) = (w[0], w[1]);
        if start == end {
            continue;
        }
        let body: String = lines[start..end].iter().flat_map(|l| [*l, "\n"]).collect();
        let id: Identity = if body.lines().all(|l| {
            let t = l.trim();
            t.is_empty() || t.starts_with('#') || is_separator(t)
        }) {
            Identity::default()
        } else {
            match serde_saphyr::from_str::<Identity>(&body) {
                Ok(id) => id,
                // A document that is not a mapping (a list, a scalar) has no identity.
                Err(_) if serde_saphyr::from_str::<serde_json::Value>(&body).is_ok() => Identity::default(),
                Err(_) => return None,
            }
        };
        let meta = id.metadata.unwrap_or_default();
        let kind = text(id.kind);
        let name = text(meta.name).or_else(|| text(id.name));
        let ordinal = if kind.is_none() && name.is_none() {
            unnamed += 1;
            unnamed - 1
        } else {
            0
        };
        segments.push(Segment {
            key: ObjectKey::Yaml {
                api_version: text(id.api_version),
                kind,
                namespace: text(meta.namespace),
                name,
                ordinal,
            },
            start,
            end,
        });
    }
    Some(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<(String, usize, usize)> {
        let lines: Vec<&str> = text.lines().collect();
        split(&lines).unwrap().into_iter().map(|s| (s.key.label(), s.start, s.end)).collect()
    }

    #[test]
    fn documents_are_named_by_kind_and_name() {
        let t = "# header\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: x\n---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\n---\nmachine:\n  install: {}\n---\ncluster: {}\n";
        assert_eq!(
            keys(t),
            vec![
                ("ConfigMap x/a".to_owned(), 0, 6),
                ("VolumeConfig EPHEMERAL".to_owned(), 6, 10),
                ("document 1".to_owned(), 10, 13),
                ("document 2".to_owned(), 13, 15),
            ]
        );
    }

    #[test]
    fn a_leading_separator_opens_the_first_document() {
        assert_eq!(keys("---\nkind: A\nname: a\n"), vec![("A a".to_owned(), 0, 3)]);
    }

    #[test]
    fn a_broken_document_makes_the_file_one_object() {
        let lines: Vec<&str> = "a: [1\n---\nb: 2\n".lines().collect();
        assert!(split(&lines).is_none());
    }
}
