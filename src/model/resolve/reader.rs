//! A reader over one syntax node that knows which properties and children the node takes,
//! reads typed values with diagnostics, and reports everything it was not asked for (with a
//! "did you mean").

use std::str::FromStr;

use crate::diag::{Diagnostic, Diagnostics, Span, Spanned, codes, did_you_mean};
use crate::syntax::{Node, Value, ValueKind};

pub(crate) struct Reader<'n> {
    pub node: &'n Node,
    known_props: &'static [&'static str],
    used_args: usize,
}

impl<'n> Reader<'n> {
    /// Starts reading `node`, which takes the properties `props`; unknown properties are
    /// reported at once.
    pub fn new(node: &'n Node, props: &'static [&'static str], diags: &mut Diagnostics) -> Self {
        for p in &node.props {
            if !props.contains(&p.name.value.as_str()) {
                let mut d = Diagnostic::new(
                    &codes::UNKNOWN_PROPERTY,
                    format!("`{}` takes no property `{}`", node.name.value, p.name.value),
                )
                .at(p.name.span)
                .label("unknown property");
                d.help = Some(match did_you_mean(&p.name.value, props.iter().copied()) {
                    _ if property_hint(node, &p.name.value).is_some() => {
                        property_hint(node, &p.name.value).unwrap_or_default()
                    }
                    Some(s) => format!("did you mean `{s}`?"),
                    None if props.is_empty() => format!("`{}` takes no properties", node.name.value),
                    None => format!("`{}` takes: {}", node.name.value, list(props)),
                });
                diags.push(d);
            }
        }
        Reader { node, known_props: props, used_args: 0 }
    }

    pub fn span(&self) -> Span {
        self.node.head_span()
    }

    fn prop_value(&self, name: &str) -> Option<&'n Value> {
        debug_assert!(self.known_props.contains(&name), "undeclared property {name}");
        self.node.prop(name).map(|p| &p.value)
    }

    pub fn has_prop(&self, name: &str) -> bool {
        self.prop_value(name).is_some()
    }

    /// Whether the node has an unknown property whose "did you mean" is `name` (`cout=3` for
    /// `count`): then a missing `name` is a consequence of that typo, already reported with
    /// its fix, and is not reported again.
    pub fn misspelt(&self, name: &str) -> bool {
        self.node.props.iter().any(|p| {
            !self.known_props.contains(&p.name.value.as_str())
                && did_you_mean(&p.name.value, self.known_props.iter().copied()) == Some(name)
        })
    }

    /// Reports that the property `name` is missing, unless a misspelling of it is there.
    pub fn report_missing(&self, name: &str, diags: &mut Diagnostics) {
        if !self.misspelt(name) {
            diags.push(missing(self.node, &format!("property `{name}`")));
        }
    }

    pub fn prop_str(&self, name: &str, diags: &mut Diagnostics) -> Option<Spanned<String>> {
        self.prop_value(name).and_then(|v| expect_str(v, &format!("`{name}`"), diags))
    }

    pub fn prop_bool(&self, name: &str, diags: &mut Diagnostics) -> Option<Spanned<bool>> {
        let v = self.prop_value(name)?;
        match v.kind {
            ValueKind::Bool(b) => Some(Spanned::new(b, v.span)),
            _ => {
                diags.push(wrong_type(v, &format!("`{name}`"), "a boolean (#true or #false)"));
                None
            }
        }
    }

    pub fn prop_int<T: IntProp>(&self, name: &str, diags: &mut Diagnostics) -> Option<Spanned<T>> {
        self.prop_value(name).and_then(|v| expect_int(v, &format!("`{name}`"), diags))
    }

    /// A string property parsed with `T::from_str`.
    pub fn prop_parsed<T: FromStr<Err = String>>(&self, name: &str, diags: &mut Diagnostics) -> Option<Spanned<T>> {
        let s = self.prop_str(name, diags)?;
        parse_at(&s, diags)
    }

    /// A size property (`"100GB"`): like [`Reader::prop_parsed`], and a number written without
    /// quotes gets the size to write, with its unit (`data-disk-size=50`).
    pub fn prop_bytes(&self, name: &str, diags: &mut Diagnostics) -> Option<Spanned<crate::model::Bytes>> {
        let v = self.prop_value(name)?;
        if let ValueKind::Integer(n) = v.kind {
            diags.push(wrong_type(v, &format!("`{name}`"), "a string").help(format!(
                "a size is a string with its unit: `{name}=\"{n}GB\"` (powers of ten) or `{name}=\"{n}GiB\"` (powers of two)"
            )));
            return None;
        }
        self.prop_parsed(name, diags)
    }

    /// A required string property.
    pub fn require_str(&self, name: &str, diags: &mut Diagnostics) -> Option<Spanned<String>> {
        if !self.has_prop(name) {
            self.report_missing(name, diags);
            return None;
        }
        self.prop_str(name, diags)
    }

    pub fn require_parsed<T: FromStr<Err = String>>(&self, name: &str, diags: &mut Diagnostics) -> Option<Spanned<T>> {
        if !self.has_prop(name) {
            self.report_missing(name, diags);
            return None;
        }
        self.prop_parsed(name, diags)
    }

    /// The single positional argument that names the node (`cluster "main"`).
    pub fn name_arg(&mut self, diags: &mut Diagnostics) -> Option<Spanned<String>> {
        self.arg_str(diags, "a name")
    }

    /// The next positional argument, as a string.
    pub fn arg_str(&mut self, diags: &mut Diagnostics, what: &str) -> Option<Spanned<String>> {
        let Some(v) = self.node.args.get(self.used_args) else {
            diags.push(missing(self.node, what));
            return None;
        };
        self.used_args += 1;
        expect_str(v, what, diags)
    }

    /// The next positional argument, parsed.
    pub fn arg_parsed<T: FromStr<Err = String>>(&mut self, diags: &mut Diagnostics, what: &str) -> Option<Spanned<T>> {
        let s = self.arg_str(diags, what)?;
        parse_at(&s, diags)
    }

    pub fn arg_bool(&mut self, diags: &mut Diagnostics) -> Option<Spanned<bool>> {
        let Some(v) = self.node.args.get(self.used_args) else {
            diags.push(missing(self.node, "#true or #false"));
            return None;
        };
        self.used_args += 1;
        match v.kind {
            ValueKind::Bool(b) => Some(Spanned::new(b, v.span)),
            _ => {
                diags.push(wrong_type(v, &format!("`{}`", self.node.name.value), "a boolean (#true or #false)"));
                None
            }
        }
    }

    /// All remaining positional arguments, as strings (at least one).
    pub fn rest_str(&mut self, diags: &mut Diagnostics, what: &str) -> Vec<Spanned<String>> {
        let rest = &self.node.args[self.used_args.min(self.node.args.len())..];
        self.used_args = self.node.args.len();
        if rest.is_empty() {
            diags.push(missing(self.node, what));
        }
        rest.iter().filter_map(|v| expect_str(v, what, diags)).collect()
    }

    pub fn rest_parsed<T: FromStr<Err = String>>(&mut self, diags: &mut Diagnostics, what: &str) -> Vec<Spanned<T>> {
        self.rest_str(diags, what).iter().filter_map(|s| parse_at(s, diags)).collect()
    }

    /// Reports arguments not read, and a children block when `children` is false.
    pub fn finish(self, children: bool, diags: &mut Diagnostics) {
        for v in self.node.args.iter().skip(self.used_args) {
            diags.push(
                Diagnostic::new(
                    &codes::UNEXPECTED_ARGUMENT,
                    format!("`{}` takes no more arguments", self.node.name.value),
                )
                .at(v.span)
                .label("unexpected argument"),
            );
        }
        if !children && self.node.children.is_some() {
            diags.push(
                Diagnostic::new(
                    &codes::UNEXPECTED_ARGUMENT,
                    format!("`{}` takes no children block", self.node.name.value),
                )
                .at(self.node.name.span)
                .label("this node has `{ … }`")
                .help("remove the braces and what they hold"),
            );
        }
    }
}

/// Where a property a newcomer writes on a node that does not take it lives instead
/// (newcomer-3.md m15b, m24).
fn property_hint(node: &Node, prop: &str) -> Option<String> {
    let name = node.args.first().and_then(|a| match &a.kind {
        ValueKind::String(s) => Some(s.as_str()),
        _ => None,
    });
    match (node.name.value.as_str(), prop) {
        ("link" | "bond" | "vlan", "mtu") => Some(format!(
            "fleetc does not model the MTU: set it in a node patch, a `LinkConfig` document (`apiVersion: v1alpha1`, `kind: LinkConfig`, `name: {}`, `mtu: …`; siderolabs/talos v1.13.9 `pkg/machinery/config/types/network/link.go`)",
            name.unwrap_or("<link>")
        )),
        ("node", "secure-boot" | "count" | "size" | "schematic" | "kubernetes") => {
            Some(format!("`{prop}` is set per pool, for all its machines: give this node a pool of its own"))
        }
        _ => None,
    }
}

pub(crate) fn list(items: &[&str]) -> String {
    items.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
}

pub(crate) fn expect_str(v: &Value, what: &str, diags: &mut Diagnostics) -> Option<Spanned<String>> {
    match &v.kind {
        ValueKind::String(s) => Some(Spanned::new(s.clone(), v.span)),
        _ => {
            diags.push(wrong_type(v, what, "a string"));
            None
        }
    }
}

/// An integer type a property takes, with its range (said when a value is outside it).
pub(crate) trait IntProp: TryFrom<i128> {
    const MIN: i128;
    const MAX: i128;
}

macro_rules! int_prop {
    ($($t:ty),*) => { $(impl IntProp for $t { const MIN: i128 = <$t>::MIN as i128; const MAX: i128 = <$t>::MAX as i128; })* };
}
int_prop!(u8, u16, u32, u64, usize, i32, i64);

pub(crate) fn expect_int<T: IntProp>(v: &Value, what: &str, diags: &mut Diagnostics) -> Option<Spanned<T>> {
    match v.kind {
        ValueKind::Integer(i) => match T::try_from(i) {
            Ok(n) => Some(Spanned::new(n, v.span)),
            Err(_) => {
                diags.push(
                    Diagnostic::new(&codes::INVALID_VALUE, format!("{what} is out of range"))
                        .at(v.span)
                        .label(format!("not within {}–{}", T::MIN, T::MAX))
                        .help(format!("{what} takes a whole number from {} to {}", T::MIN, T::MAX)),
                );
                None
            }
        },
        _ => {
            diags.push(wrong_type(v, what, "an integer"));
            None
        }
    }
}

pub(crate) fn parse_at<T: FromStr<Err = String>>(s: &Spanned<String>, diags: &mut Diagnostics) -> Option<Spanned<T>> {
    match s.value.parse::<T>() {
        Ok(v) => Some(Spanned::new(v, s.span)),
        Err(e) => {
            diags.push(invalid_value(&e, s.span, "invalid value"));
            None
        }
    }
}

/// `fleet::model::invalid-value` from a parser's error: its first line is the message, the
/// rest (after a line break) the help (`model::values`).
pub(crate) fn invalid_value(e: &str, span: Span, label: &str) -> Diagnostic {
    let (message, help) = e.split_once('\n').map_or((e, None), |(m, h)| (m, Some(h)));
    let d = Diagnostic::new(&codes::INVALID_VALUE, message).at(span).label(label);
    match help {
        Some(h) => d.help(h),
        None => d,
    }
}

pub(crate) fn wrong_type(v: &Value, what: &str, expected: &str) -> Diagnostic {
    let mut d = Diagnostic::new(&codes::WRONG_TYPE, format!("{what} must be {expected}, not {}", v.kind.type_name()))
        .at(v.span)
        .label(format!("expected {expected}"));
    if expected == "a string" {
        d.help = Some("quote the value: KDL reads `3` as a number and `\"3\"` as a string".to_owned());
    } else if expected == "an integer"
        && let ValueKind::String(s) = &v.kind
        && s.parse::<i64>().is_ok()
    {
        d.help = Some(format!("write {s} without quotes"));
    }
    d
}

pub(crate) fn missing(node: &Node, what: &str) -> Diagnostic {
    Diagnostic::new(&codes::MISSING_VALUE, format!("`{}` needs {what}", node.name.value))
        .at(node.head_span())
        .label(format!("{what} missing"))
}

/// Reports an unknown child node, suggesting the closest known one.
pub(crate) fn unknown_child(child: &Node, parent: &str, known: &[&str], diags: &mut Diagnostics) {
    let name = child.name.value.as_str();
    if is_iam_word(name) {
        diags.push(
            Diagnostic::new(&codes::IAM, format!("fleetc cannot express IAM (`{name}`)"))
                .at(child.name.span)
                .label("IAM is never emitted"),
        );
        return;
    }
    let help = match (did_you_mean(name, known.iter().copied()), scope_hint(name, parent)) {
        (_, Some(hint)) => format!("{hint}; `{parent}` takes: {}", list(known)),
        (Some(s), None) => format!("did you mean `{s}`?"),
        (None, None) => format!("`{parent}` takes: {}", list(known)),
    };
    diags.push(
        Diagnostic::new(&codes::UNKNOWN_NODE, format!("unknown node `{name}` in `{parent}`"))
            .at(child.name.span)
            .label("unknown node")
            .help(help),
    );
}

/// What a node that fleet.kdl has no place for means, where a newcomer writes it: the
/// feature is elsewhere, or out of fleetc's scope (README, "Scope").
fn scope_hint(name: &str, parent: &str) -> Option<&'static str> {
    match (name, parent) {
        ("kernel-arg" | "extension" | "meta" | "overlay", "pool" | "control-plane" | "cluster") => Some(
            "kernel arguments and extensions live in a `schematic` at the fleet level; a pool runs one with `schematic=\"<name>\"`",
        ),
        ("flux" | "fluxcd" | "kustomization", _) => {
            Some("fleetc's GitOps engine is Argo CD (`gitops`, `argocd`, `app`); Flux is not supported")
        }
        ("patch" | "patches" | "config-patch" | "machine-config", _) => Some(
            "fleetc has no free-form Talos patches: every emitted field comes from a node of fleet.kdl (docs/talos.md)",
        ),
        ("node" | "nodes" | "machine", "pool" | "control-plane") => {
            Some("a pool is `count` identical nodes: there are no per-node settings (static addresses are `addresses`)")
        }
        _ => None,
    }
}

fn is_iam_word(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "iam"
        || n.starts_with("iam-")
        || n.starts_with("iam_")
        || n == "api-key"
        || n == "policy"
        || n == "permission-set"
}
