//! Talos Image Factory schematics: the factory's data structure, its canonical
//! (go-yaml v4) encoding, and the schematic ID (SHA-256 of that encoding).
//!
//! A schematic describes how the Image Factory customises a Talos image (system
//! extensions, kernel arguments, META values, an SBC overlay, ...). The factory
//! names it by the hex SHA-256 of `yaml.Marshal(schematic)` from go-yaml v4,
//! so the ID of a schematic depends on every byte of that encoding: field
//! order, omitted empty fields, indentation, quoting, literal blocks. This
//! module holds the factory's `Schematic` type field for field ([`Schematic`]),
//! reads schematic files the way the factory does ([`parse`]), and writes the
//! exact bytes the factory hashes with a small go-yaml-compatible encoder
//! ([`Schematic::canonical_yaml`], [`Schematic::id`]).
//!
//! It never hashes on a guess. [`Schematic::canonical_yaml`] returns an
//! [`EncodeError`] for values whose go-yaml encoding fleetc does not reproduce
//! with certainty:
//!
//! * strings with a line break other than `\n` (CR, NEL, U+2028, U+2029), a
//!   byte-order mark, a control character other than tab and line feed, or a
//!   character beyond U+FFFF (see `emit::check_string`);
//! * multi-line strings that are only whitespace or start with a line break
//!   (go-yaml v4 changed how those are written);
//! * overlay option keys over 128 bytes or spanning lines (written in YAML's
//!   complex-key form), non-ASCII keys side by side in one map (go-yaml sorts
//!   them with Unicode tables), keys whose natural order is inconsistent;
//! * strings that look like floats too large for 64 bits, or like Go floats
//!   starting with `.` and containing `_` (go-yaml's quoting of those hinges
//!   on Go's `strconv` error cases);
//! * a bootloader other than `none`, `dual-boot`, `sd-boot`, `grub` (the
//!   factory refuses those too).
//!
//! [`parse`] refuses what it cannot decode exactly as go-yaml does: YAML tags,
//! merge keys, non-string keys in overlay options, and plain timestamps or a
//! plain `-0` as overlay option values (decoded differently across go-yaml
//! versions).
//!
//! The reference is image-factory v1.5.0 `pkg/schematic` with go-yaml v4;
//! `oracles/factory` runs that code against fleetc, and docs/schematics.md
//! lists every refusal with its reason.

mod emit;
mod parse;
mod resolve;

use std::collections::BTreeMap;
use std::fmt;

use emit::Node;

pub use parse::parse;

/// The factory's `Schematic`, field for field (`None`, empty strings and
/// empty lists are omitted from the encoding, as Go's `omitempty` does).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schematic {
    /// `owner`: set by an Enterprise factory with authentication enabled.
    pub owner: Option<String>,
    /// `overlay`: the SBC overlay, omitted when image, name and options are
    /// all empty.
    pub overlay: Option<Overlay>,
    /// `customization`: always written (`customization: {}` when empty).
    pub customization: Customization,
}

/// The factory's `Overlay`. When present, `image` and `name` are always
/// written (they have no `omitempty`), `options` only when non-empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overlay {
    /// `image`, e.g. `siderolabs/sbc-raspberrypi`.
    pub image: String,
    /// `name`, e.g. `rpi_generic`.
    pub name: String,
    /// `options`: Go's `map[string]any`, free-form and overlay-specific.
    /// go-yaml writes map keys in its own natural order, not this map's.
    pub options: BTreeMap<String, OptionValue>,
}

/// A value inside `overlay.options`: the tree go-yaml decodes into Go's
/// `any` (plain scalars resolved by YAML 1.2 core rules, `yes` staying a
/// string). Its encoding follows go-yaml: numbers in Go's formatting (`1e+06`),
/// strings quoted when they would read back as another type.
#[derive(Debug, Clone)]
pub enum OptionValue {
    /// `null`, `~` or an empty plain value.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits Go's `int` (decimal, `0x`, `0o`, `0b`, leading-0
    /// octal and `_` separators are read like go-yaml).
    Int(i64),
    /// An integer above `i64::MAX` (Go's `uint64`).
    Uint(u64),
    /// A float (Go's `float64`); NaN and infinities included.
    Float(f64),
    /// A string.
    String(String),
    /// A sequence (`[]any`).
    List(Vec<OptionValue>),
    /// A mapping with string keys (`map[string]any`).
    Map(BTreeMap<String, OptionValue>),
}

impl PartialEq for OptionValue {
    fn eq(&self, other: &Self) -> bool {
        use OptionValue::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Uint(a), Uint(b)) => a == b,
            // Bitwise, so that the relation is an equivalence (NaN == NaN).
            (Float(a), Float(b)) => a.to_bits() == b.to_bits(),
            (String(a), String(b)) => a == b,
            (List(a), List(b)) => a == b,
            (Map(a), Map(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for OptionValue {}

/// The factory's `Customization`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Customization {
    /// `embeddedMachineConfiguration`: machine config documents (YAML text).
    pub embedded_machine_configuration: Option<String>,
    /// `extraKernelArgs`, in order.
    pub extra_kernel_args: Vec<String>,
    /// `meta`: initial META values, in order.
    pub meta: Vec<Meta>,
    /// `systemExtensions.officialExtensions`, e.g. `siderolabs/gvisor`.
    pub system_extensions: Vec<String>,
    /// `bootloader`: `dual-boot`, `sd-boot` or `grub` (`none`/`auto`, the
    /// default, is omitted). Matched case-insensitively, written lower case.
    pub bootloader: Option<String>,
    /// `secureboot`, omitted when empty.
    pub secureboot: Option<SecureBoot>,
    /// `diskImage`, omitted when empty.
    pub disk_image: Option<DiskImage>,
}

/// One META value (`meta[]`): a `uint8` key and a string value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    pub key: u8,
    pub value: String,
}

/// The factory's `secureboot` customization.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecureBoot {
    /// `enrollKeys`: `off`, `manual`, `if-safe` or `force`.
    pub enroll_keys: Option<String>,
    /// `includeWellKnownCertificates`.
    pub include_well_known_certificates: bool,
}

/// The factory's `diskImage` customization.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskImage {
    /// `sectorSize` in bytes (Go `uint`); 0 is omitted (factory default 512).
    pub sector_size: u64,
}

/// A schematic whose go-yaml encoding fleetc cannot reproduce with certainty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    pub message: String,
}

impl EncodeError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        EncodeError { message: message.into() }
    }

    /// Name the schematic field the error is about.
    fn at(mut self, path: &str) -> Self {
        self.message = format!("{} (at `{path}`)", self.message);
        self
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EncodeError {}

/// A schematic file the factory would reject, or that fleetc cannot read
/// exactly as the factory does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    /// Byte offset and length in the input, when known.
    pub span: Option<(usize, usize)>,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// The bootloader names the factory accepts (Talos `BootloaderKind`, whose
/// generated `BootloaderKindString` matches them exactly or lower-cased);
/// `none` is the zero value and is omitted. `auto`, a name in some upstream
/// documentation, is refused by image-factory v1.5.0 ("auto does not belong
/// to BootloaderKind values"), and so is the empty string.
const BOOTLOADERS: [&str; 3] = ["dual-boot", "sd-boot", "grub"];
const DEFAULT_BOOTLOADERS: [&str; 1] = ["none"];

/// The canonical bootloader name for `name`: `Ok(None)` for the default,
/// `Err` for a name the factory rejects.
pub(crate) fn canonical_bootloader(name: &str) -> Result<Option<&'static str>, String> {
    let lower = name.to_ascii_lowercase();
    if DEFAULT_BOOTLOADERS.contains(&lower.as_str()) {
        return Ok(None);
    }
    BOOTLOADERS
        .iter()
        .find(|b| **b == lower)
        .map(|b| Some(*b))
        .ok_or_else(|| format!("unknown bootloader `{name}`: expected `dual-boot`, `sd-boot`, `grub` or `none`"))
}

impl Schematic {
    /// The exact bytes the factory hashes: go-yaml v4 `yaml.Marshal` of the
    /// factory's `Schematic`. `Err` when fleetc cannot be certain of go-yaml's
    /// output for some value (see the module documentation).
    pub fn canonical_yaml(&self) -> Result<String, EncodeError> {
        emit::to_yaml(&self.to_node()?)
    }

    /// The schematic ID: hex SHA-256 of [`Self::canonical_yaml`].
    pub fn id(&self) -> Result<String, EncodeError> {
        Ok(crate::digest::sha256_hex(self.canonical_yaml()?.as_bytes()))
    }

    /// Normalise as the factory UI does: system extensions sorted (byte
    /// order) and de-duplicated. Kernel arguments keep their order (the UI
    /// splits its command line on spaces and does not sort).
    pub fn normalized(&self) -> Schematic {
        let mut s = self.clone();
        s.customization.system_extensions.sort();
        s.customization.system_extensions.dedup();
        s
    }

    /// The document go-yaml would write, as a tree in output order.
    fn to_node(&self) -> Result<Node, EncodeError> {
        let mut root = Vec::new();
        if let Some(owner) = self.owner.as_deref().filter(|o| !o.is_empty()) {
            root.push(("owner".to_string(), Node::Str(owner.to_string())));
        }
        if let Some(overlay) = &self.overlay {
            let zero = overlay.image.is_empty() && overlay.name.is_empty() && overlay.options.is_empty();
            if !zero {
                let mut fields = vec![
                    ("image".to_string(), Node::Str(overlay.image.clone())),
                    ("name".to_string(), Node::Str(overlay.name.clone())),
                ];
                if !overlay.options.is_empty() {
                    fields.push(("options".to_string(), option_map_node(&overlay.options, "overlay.options")?));
                }
                root.push(("overlay".to_string(), Node::Map(fields)));
            }
        }
        root.push(("customization".to_string(), self.customization.to_node()?));
        // The emitter checks every string too; checking here first lets a
        // refusal name the field it comes from.
        check_strings(&root, "")?;
        Ok(Node::Map(root))
    }
}

impl Customization {
    fn to_node(&self) -> Result<Node, EncodeError> {
        let strings = |items: &[String]| Node::Seq(items.iter().map(|s| Node::Str(s.clone())).collect());
        let mut fields = Vec::new();
        if let Some(config) = self.embedded_machine_configuration.as_deref().filter(|c| !c.is_empty()) {
            fields.push(("embeddedMachineConfiguration".to_string(), Node::Str(config.to_string())));
        }
        if !self.extra_kernel_args.is_empty() {
            fields.push(("extraKernelArgs".to_string(), strings(&self.extra_kernel_args)));
        }
        if !self.meta.is_empty() {
            let items = self
                .meta
                .iter()
                .map(|m| {
                    Node::Map(vec![
                        ("key".to_string(), Node::Plain(m.key.to_string())),
                        ("value".to_string(), Node::Str(m.value.clone())),
                    ])
                })
                .collect();
            fields.push(("meta".to_string(), Node::Seq(items)));
        }
        if !self.system_extensions.is_empty() {
            fields.push((
                "systemExtensions".to_string(),
                Node::Map(vec![("officialExtensions".to_string(), strings(&self.system_extensions))]),
            ));
        }
        if let Some(name) = &self.bootloader {
            let canonical =
                canonical_bootloader(name).map_err(|m| EncodeError::new(m).at("customization.bootloader"))?;
            if let Some(canonical) = canonical {
                fields.push(("bootloader".to_string(), Node::Str(canonical.to_string())));
            }
        }
        if let Some(sb) = &self.secureboot {
            // image-factory v1.5.0 `SecureBootCustomization`: `EnrollKeys
            // string` (omitempty) then `IncludeWellKnownCertificates bool`
            // (omitempty); any string, `if-safe` included, is written.
            let mut sb_fields = Vec::new();
            if let Some(keys) = sb.enroll_keys.as_deref().filter(|k| !k.is_empty()) {
                sb_fields.push(("enrollKeys".to_string(), Node::Str(keys.to_string())));
            }
            if sb.include_well_known_certificates {
                sb_fields.push(("includeWellKnownCertificates".to_string(), Node::Plain("true".to_string())));
            }
            if !sb_fields.is_empty() {
                fields.push(("secureboot".to_string(), Node::Map(sb_fields)));
            }
        }
        if let Some(disk) = self.disk_image.as_ref().filter(|d| d.sector_size != 0) {
            fields.push((
                "diskImage".to_string(),
                Node::Map(vec![("sectorSize".to_string(), Node::Plain(disk.sector_size.to_string()))]),
            ));
        }
        Ok(Node::Map(fields))
    }
}

/// Run the emitter's style decision over every string of a subtree so that a
/// refusal names the field it comes from.
fn check_strings(fields: &[(String, Node)], path: &str) -> Result<(), EncodeError> {
    fn walk(node: &Node, path: &str) -> Result<(), EncodeError> {
        match node {
            Node::Str(s) => emit::select_style(s, false).map(|_| ()).map_err(|e| e.at(path)),
            Node::Plain(_) => Ok(()),
            Node::Seq(items) => items.iter().enumerate().try_for_each(|(i, item)| walk(item, &format!("{path}[{i}]"))),
            Node::Map(entries) => entries.iter().try_for_each(|(k, v)| {
                let child = format!("{path}.{k}");
                emit::select_style(k, true).map_err(|e| e.at(&child))?;
                walk(v, &child)
            }),
        }
    }
    let join = |k: &str| {
        if path.is_empty() { k.to_string() } else { format!("{path}.{k}") }
    };
    fields.iter().try_for_each(|(k, v)| walk(v, &join(k)))
}

/// `overlay.options` (and nested maps): keys in go-yaml's order.
fn option_map_node(map: &BTreeMap<String, OptionValue>, path: &str) -> Result<Node, EncodeError> {
    let mut entries = Vec::with_capacity(map.len());
    for (key, value) in map {
        let child = format!("{path}.{key}");
        emit::select_style(key, true).map_err(|e| e.at(&child))?;
        entries.push((key.clone(), option_node(value, &child)?));
    }
    emit::sort_keys(&mut entries).map_err(|e| e.at(path))?;
    Ok(Node::Map(entries))
}

fn option_node(value: &OptionValue, path: &str) -> Result<Node, EncodeError> {
    Ok(match value {
        OptionValue::Null => Node::Plain("null".into()),
        OptionValue::Bool(b) => Node::Plain(b.to_string()),
        OptionValue::Int(i) => Node::Plain(i.to_string()),
        OptionValue::Uint(u) => Node::Plain(u.to_string()),
        OptionValue::Float(f) => Node::Plain(emit::go_format_float(*f)),
        OptionValue::String(s) => {
            emit::select_style(s, false).map_err(|e| e.at(path))?;
            Node::Str(s.clone())
        }
        OptionValue::List(items) => Node::Seq(
            items.iter().enumerate().map(|(i, v)| option_node(v, &format!("{path}[{i}]"))).collect::<Result<_, _>>()?,
        ),
        OptionValue::Map(map) => option_map_node(map, path)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exts(names: &[&str]) -> Schematic {
        Schematic {
            customization: Customization {
                system_extensions: names.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn vanilla() {
        let s = Schematic::default();
        assert_eq!(s.canonical_yaml().unwrap(), "customization: {}\n");
        assert_eq!(s.id().unwrap(), "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba");
    }

    #[test]
    fn empty_parts_are_omitted() {
        let s = Schematic {
            owner: Some(String::new()),
            overlay: Some(Overlay::default()),
            customization: Customization {
                embedded_machine_configuration: Some(String::new()),
                secureboot: Some(SecureBoot::default()),
                disk_image: Some(DiskImage::default()),
                bootloader: Some("None".into()),
                ..Default::default()
            },
        };
        assert_eq!(s.canonical_yaml().unwrap(), "customization: {}\n");
    }

    #[test]
    fn every_field_in_factory_order() {
        let mut options = BTreeMap::new();
        options.insert("configTxt".to_string(), OptionValue::String("a=1\nb=2\n".into()));
        // `n` is a YAML 1.1 bool: single-quoted even as a key.
        options.insert("n".to_string(), OptionValue::Int(3));
        let s = Schematic {
            owner: Some("admin".into()),
            overlay: Some(Overlay { image: "siderolabs/sbc-raspberrypi".into(), name: "rpi_generic".into(), options }),
            customization: Customization {
                embedded_machine_configuration: Some("apiVersion: v1alpha1\nkind: HostnameConfig\n".into()),
                extra_kernel_args: vec!["net.ifnames=0".into()],
                meta: vec![Meta { key: 10, value: "{}".into() }, Meta { key: 0, value: String::new() }],
                system_extensions: vec!["siderolabs/gvisor".into()],
                bootloader: Some("SD-Boot".into()),
                secureboot: Some(SecureBoot { enroll_keys: None, include_well_known_certificates: true }),
                disk_image: Some(DiskImage { sector_size: 4096 }),
            },
        };
        assert_eq!(
            s.canonical_yaml().unwrap(),
            "owner: admin\n\
             overlay:\n    image: siderolabs/sbc-raspberrypi\n    name: rpi_generic\n    options:\n        configTxt: |\n            a=1\n            b=2\n        'n': 3\n\
             customization:\n    embeddedMachineConfiguration: |\n        apiVersion: v1alpha1\n        kind: HostnameConfig\n\
             \x20   extraKernelArgs:\n        - net.ifnames=0\n\
             \x20   meta:\n        - key: 10\n          value: '{}'\n        - key: 0\n          value: \"\"\n\
             \x20   systemExtensions:\n        officialExtensions:\n            - siderolabs/gvisor\n\
             \x20   bootloader: sd-boot\n\
             \x20   secureboot:\n        includeWellKnownCertificates: true\n\
             \x20   diskImage:\n        sectorSize: 4096\n"
        );
    }

    #[test]
    fn enroll_keys() {
        let with = |keys: &str, wk: bool| Schematic {
            customization: Customization {
                secureboot: Some(SecureBoot { enroll_keys: Some(keys.into()), include_well_known_certificates: wk }),
                ..Default::default()
            },
            ..Default::default()
        };
        // `off` is a YAML 1.1 bool: single-quoted by go-yaml v4.
        assert_eq!(
            with("off", false).canonical_yaml().unwrap(),
            "customization:\n    secureboot:\n        enrollKeys: 'off'\n"
        );
        assert_eq!(
            with("force", false).canonical_yaml().unwrap(),
            "customization:\n    secureboot:\n        enrollKeys: force\n"
        );
        // A plain string field in image-factory v1.5.0: written as it is,
        // before `includeWellKnownCertificates`.
        assert_eq!(
            with("if-safe", true).canonical_yaml().unwrap(),
            "customization:\n    secureboot:\n        enrollKeys: if-safe\n        includeWellKnownCertificates: true\n"
        );
        assert!(with("always", false).canonical_yaml().is_ok());
    }

    #[test]
    fn refusal_names_the_field() {
        let mut s = exts(&["siderolabs/gvisor"]);
        s.customization.extra_kernel_args = vec!["ok".into(), "bad\r".into()];
        let err = s.canonical_yaml().unwrap_err();
        assert!(err.message.contains("`customization.extraKernelArgs[1]`"), "{err}");
        assert!(err.message.starts_with("cannot"), "{err}");
    }

    #[test]
    fn option_values_like_go() {
        let mut inner = BTreeMap::new();
        inner.insert("b".to_string(), OptionValue::Float(1e6));
        inner.insert(
            "a".to_string(),
            OptionValue::List(vec![OptionValue::Null, OptionValue::Bool(false), OptionValue::String("yes".into())]),
        );
        let mut options = BTreeMap::new();
        options.insert("x10".to_string(), OptionValue::Map(inner));
        options.insert("x9".to_string(), OptionValue::Uint(u64::MAX));
        options.insert("empty".to_string(), OptionValue::Map(BTreeMap::new()));
        let s = Schematic { overlay: Some(Overlay { options, ..Default::default() }), ..Default::default() };
        assert_eq!(
            s.canonical_yaml().unwrap(),
            "overlay:\n    image: \"\"\n    name: \"\"\n    options:\n        empty: {}\n        x9: 18446744073709551615\n        x10:\n            a:\n                - null\n                - false\n                - 'yes'\n            b: 1e+06\ncustomization: {}\n"
        );
    }

    #[test]
    fn normalized_sorts_and_dedups_extensions_only() {
        let mut s = exts(&["siderolabs/util-linux-tools", "siderolabs/iscsi-tools", "siderolabs/iscsi-tools"]);
        s.customization.extra_kernel_args = vec!["b".into(), "a".into()];
        let n = s.normalized();
        assert_eq!(n.customization.system_extensions, ["siderolabs/iscsi-tools", "siderolabs/util-linux-tools"]);
        assert_eq!(n.customization.extra_kernel_args, ["b", "a"]);
    }
}
