//! YAML streams split into documents. fleetc's YAML writer ([`crate::emit::yaml::documents`])
//! separates documents with a `---` line and puts its header comment before the first one;
//! each document's segment starts at its separator, so the header belongs to the first
//! document. Each document is parsed (with `serde_saphyr`) only for its identity: apiVersion,
//! kind, `metadata.namespace`, and `metadata.name` (or a top-level `name`, as Talos config
//! documents such as `VolumeConfig` carry it). Talos's legacy machine config document has no
//! kind: a mapping with `machine` or `cluster` is that document, `v1alpha1` (the kind Talos's
//! own `Config.Kind()` gives it).

use serde::Deserialize;

use super::{ObjectKey, Segment};

#[derive(Deserialize, Default)]
struct Identity {
    #[serde(rename = "apiVersion")]
    api_version: Option<serde_json::Value>,
    kind: Option<serde_json::Value>,
    name: Option<serde_json::Value>,
    metadata: Option<Metadata>,
    machine: Option<serde::de::IgnoredAny>,
    cluster: Option<serde::de::IgnoredAny>,
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
pub(super) fn split(path: &str, lines: &[&str]) -> Option<Vec<Segment>> {
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(lines.iter().enumerate().filter(|(i, l)| *i > 0 && is_separator(l)).map(|(i, _)| i));
    bounds.push(lines.len());
    let mut segments: Vec<Segment> = Vec::new();
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
        let unnamed =
            if id.machine.is_some() || id.cluster.is_some() { "v1alpha1".to_owned() } else { path.to_owned() };
        let mut key = ObjectKey::Yaml {
            api_version: text(id.api_version),
            kind: text(id.kind),
            namespace: text(meta.namespace),
            name: text(meta.name).or_else(|| text(id.name)),
            unnamed,
            ordinal: 0,
        };
        let same = segments.iter().filter(|s| same_identity(&s.key, &key)).count();
        if let ObjectKey::Yaml { ordinal, .. } = &mut key {
            *ordinal = same;
        }
        segments.push(Segment { key, start, end });
    }
    Some(segments)
}

/// Two documents' keys but for their ordinals.
fn same_identity(a: &ObjectKey, b: &ObjectKey) -> bool {
    match (a, b) {
        (
            ObjectKey::Yaml { api_version: a1, kind: k1, namespace: n1, name: m1, unnamed: u1, .. },
            ObjectKey::Yaml { api_version: a2, kind: k2, namespace: n2, name: m2, unnamed: u2, .. },
        ) => (a1, k1, n1, m1, u1) == (a2, k2, n2, m2, u2),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<(String, usize, usize)> {
        let lines: Vec<&str> = text.lines().collect();
        split("a.yaml", &lines).unwrap().into_iter().map(|s| (s.key.label(), s.start, s.end)).collect()
    }

    #[test]
    fn documents_are_named_by_kind_and_name() {
        let t = "# header\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: x\n---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\n---\nmachine:\n  install: {}\n---\ncluster: {}\n---\nkind: HostnameConfig\nhostname: a\n---\nkind: HostnameConfig\nhostname: b\n---\ncustomization: {}\n";
        assert_eq!(
            keys(t),
            vec![
                ("ConfigMap/x/a".to_owned(), 0, 6),
                ("VolumeConfig/EPHEMERAL".to_owned(), 6, 10),
                ("v1alpha1".to_owned(), 10, 13),
                ("v1alpha1 #2".to_owned(), 13, 15),
                ("HostnameConfig".to_owned(), 15, 18),
                ("HostnameConfig #2".to_owned(), 18, 21),
                ("a.yaml".to_owned(), 21, 23),
            ]
        );
    }

    #[test]
    fn a_leading_separator_opens_the_first_document() {
        assert_eq!(keys("---\nkind: A\nname: a\n"), vec![("A/a".to_owned(), 0, 3)]);
    }

    #[test]
    fn a_broken_document_makes_the_file_one_object() {
        let lines: Vec<&str> = "a: [1\n---\nb: 2\n".lines().collect();
        assert!(split("a.yaml", &lines).is_none());
    }
}
