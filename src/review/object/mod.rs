//! Objects inside an artifact file: the unit a reviewer thinks in. A YAML file is a stream of
//! documents, each named by kind and name (`Application/argocd/podinfo`, a Talos document by
//! its kind and, where it has one, its name: `HostnameConfig`, `VolumeConfig/EPHEMERAL`, the
//! legacy machine config `v1alpha1`); an OpenTofu file is a list of top-level blocks, each
//! named by its labels (an address: `scaleway_rdb_instance.app`, `module.main`); a variables
//! file (`.tfvars`) is a list of assignments, each named by the variable it sets. Any other
//! file is one object, named by its path. Objects are matched across the old and new file by
//! their [`ObjectKey`], so a change is reported as "this document changed", "this block was
//! removed", not only as lines.

mod hcl_blocks;
mod yaml_docs;

pub use hcl_blocks::attribute as hcl_attribute;

/// What names an object across two versions of a file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectKey {
    /// A YAML document, as written (the fields are the document's own, absent when it has
    /// none). `unnamed` is what a document with neither kind nor name is called: `v1alpha1`
    /// for Talos's legacy machine config document (a mapping with `machine` or `cluster`,
    /// which Talos itself calls by that kind), the file's path otherwise (a schematic).
    /// `ordinal` tells apart documents with the same identity in one file, by position.
    Yaml {
        api_version: Option<String>,
        kind: Option<String>,
        namespace: Option<String>,
        name: Option<String>,
        unnamed: String,
        ordinal: usize,
    },
    /// A top-level HCL block: its type and labels (`resource "a" "b"`), and its position
    /// among blocks with the same type and labels (several `moved` blocks, say).
    Hcl { block: String, labels: Vec<String>, ordinal: usize },
    /// A file fleetc does not split (or could not: it did not parse as expected), by path.
    File { path: String },
}

impl ObjectKey {
    /// A short human name: `TalosConfigTemplate/edge-1-workers`, `Application/argocd/app`,
    /// `HostnameConfig`, `v1alpha1`, `scaleway_rdb_instance.app`, `tofu/x/y.auto.tfvars`.
    pub fn label(&self) -> String {
        match self {
            ObjectKey::Yaml { kind, namespace, name, unnamed, ordinal, .. } => {
                let ns = namespace.as_deref().map(|n| format!("{n}/")).unwrap_or_default();
                let base = match (kind, name) {
                    (Some(k), Some(n)) => format!("{k}/{ns}{n}"),
                    (Some(k), None) => k.clone(),
                    (None, Some(n)) => format!("{ns}{n}"),
                    (None, None) => unnamed.clone(),
                };
                if *ordinal > 0 { format!("{base} #{}", ordinal + 1) } else { base }
            }
            ObjectKey::Hcl { .. } => self.address().unwrap_or_default(),
            ObjectKey::File { path } => path.clone(),
        }
    }

    /// The OpenTofu address of an HCL block (`a.b`, `data.a.b`, `module.x`); other blocks
    /// are named as written (`moved #2`, `terraform`, `provider "scaleway"`).
    pub fn address(&self) -> Option<String> {
        let ObjectKey::Hcl { block, labels, ordinal } = self else { return None };
        Some(match (block.as_str(), labels.as_slice()) {
            ("resource", [t, n]) => format!("{t}.{n}"),
            ("data", [t, n]) => format!("data.{t}.{n}"),
            ("module", [n]) => format!("module.{n}"),
            ("variable", [n]) => format!("var.{n}"),
            ("output", [n]) => format!("output.{n}"),
            (hcl_blocks::VALUE, [n]) if *ordinal == 0 => n.clone(),
            ("locals", []) => format!("locals #{}", ordinal + 1),
            (b, []) if *ordinal > 0 || b == "moved" || b == "import" || b == "removed" => {
                format!("{b} #{}", ordinal + 1)
            }
            (b, ls) => {
                let mut s = b.to_owned();
                for l in ls {
                    s.push_str(&format!(" \"{l}\""));
                }
                if *ordinal > 0 {
                    s.push_str(&format!(" #{}", ordinal + 1));
                }
                s
            }
        })
    }

    pub fn kind(&self) -> Option<&str> {
        match self {
            ObjectKey::Yaml { kind, .. } => kind.as_deref(),
            _ => None,
        }
    }

    pub fn name(&self) -> Option<&str> {
        match self {
            ObjectKey::Yaml { name, .. } => name.as_deref(),
            _ => None,
        }
    }

    pub fn api_version(&self) -> Option<&str> {
        match self {
            ObjectKey::Yaml { api_version, .. } => api_version.as_deref(),
            _ => None,
        }
    }

    pub fn namespace(&self) -> Option<&str> {
        match self {
            ObjectKey::Yaml { namespace, .. } => namespace.as_deref(),
            _ => None,
        }
    }

    /// The HCL block type (`resource`, `moved`, …).
    pub fn block(&self) -> Option<&str> {
        match self {
            ObjectKey::Hcl { block, .. } => Some(block),
            _ => None,
        }
    }

    /// The resource type of a `resource` or `data` block.
    pub fn resource_type(&self) -> Option<&str> {
        match self {
            ObjectKey::Hcl { block, labels, .. } if block == "resource" || block == "data" => {
                labels.first().map(String::as_str)
            }
            _ => None,
        }
    }
}

/// One object's lines in a file: `lines[start..end]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub key: ObjectKey,
    pub start: usize,
    pub end: usize,
}

/// Splits a file's lines into objects, by the file's extension. Every line belongs to
/// exactly one segment, segments are in file order, and none is empty.
pub fn split(path: &str, lines: &[&str]) -> Vec<Segment> {
    let split = if path.ends_with(".yaml") || path.ends_with(".yml") {
        yaml_docs::split(path, lines)
    } else if path.ends_with(".tf") || path.ends_with(".tofu") {
        hcl_blocks::split(lines)
    } else if path.ends_with(".tfvars") {
        hcl_blocks::split_values(lines)
    } else {
        None
    };
    match split {
        Some(s) if !s.is_empty() => s,
        _ if lines.is_empty() => Vec::new(),
        _ => vec![Segment { key: ObjectKey::File { path: path.to_owned() }, start: 0, end: lines.len() }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        let k = ObjectKey::Yaml {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            namespace: Some("ns".into()),
            name: Some("a".into()),
            unnamed: "a.yaml".into(),
            ordinal: 0,
        };
        assert_eq!(k.label(), "ConfigMap/ns/a");
        let h = ObjectKey::Hcl {
            block: "resource".into(),
            labels: vec!["scaleway_rdb_instance".into(), "app".into()],
            ordinal: 0,
        };
        assert_eq!(h.label(), "scaleway_rdb_instance.app");
        assert_eq!(h.resource_type(), Some("scaleway_rdb_instance"));
        let m = ObjectKey::Hcl { block: "moved".into(), labels: vec![], ordinal: 1 };
        assert_eq!(m.label(), "moved #2");
        let p = ObjectKey::Hcl { block: "provider".into(), labels: vec!["scaleway".into()], ordinal: 0 };
        assert_eq!(p.label(), "provider \"scaleway\"");
    }

    #[test]
    fn unknown_files_are_one_object() {
        let s = split("README.md", &["a", "b"]);
        assert_eq!(s, vec![Segment { key: ObjectKey::File { path: "README.md".into() }, start: 0, end: 2 }]);
        assert_eq!(s[0].key.label(), "README.md");
        assert!(split("README.md", &[]).is_empty());
    }
}
