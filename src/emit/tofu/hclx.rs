//! Small builders over [`crate::emit::hcl`] that the OpenTofu emitter repeats: references,
//! templates, variable and output blocks, and the names fleet.kdl values become in HCL.

use crate::emit::hcl::{Body, Expr, Template, Traversal};

/// A reference from a dotted path: `r("var.name")`.
pub(super) fn r(path: &str) -> Expr {
    Expr::reference(path)
}

/// `var.<name>["<key>"].<attr>…`: a reference with one string index.
pub(super) fn idx(root: &str, key: &str, rest: &[&str]) -> Expr {
    let mut t = Traversal::path(root).index(key);
    for a in rest {
        t = t.attr(*a);
    }
    t.into()
}

/// `var.<name>[<n>].<attr>…`: a reference with one number index.
pub(super) fn nth(root: &str, n: usize, rest: &[&str]) -> Expr {
    let mut t = Traversal::path(root).index(i64::try_from(n).unwrap_or(i64::MAX));
    for a in rest {
        t = t.attr(*a);
    }
    t.into()
}

/// A template from literal text and expressions, in order.
pub(super) fn tpl(parts: Vec<Part>) -> Expr {
    let mut t = Template::new();
    for p in parts {
        t = match p {
            Part::L(s) => t.lit(s),
            Part::E(e) => t.interp(e),
        };
    }
    t.into()
}

/// One piece of [`tpl`].
pub(super) enum Part {
    L(String),
    E(Expr),
}

/// `string`, `number`, `bool`: type keywords are references in HCL.
pub(super) fn ty(name: &str) -> Expr {
    Expr::reference(name)
}

/// `object({ … })`
pub(super) fn object_ty(fields: &[(&str, Expr)]) -> Expr {
    Expr::call("object", [Expr::object(fields.iter().map(|(k, v)| ((*k).to_owned(), v.clone())))])
}

/// `map(t)`, `list(t)`, `set(t)`
pub(super) fn of(kind: &str, t: Expr) -> Expr {
    Expr::call(kind, [t])
}

/// An empty object `{}`.
pub(super) fn empty() -> Expr {
    Expr::object(Vec::<(String, Expr)>::new())
}

/// A `variable` block.
pub(super) struct Var<'a> {
    pub name: &'a str,
    pub ty: Expr,
    pub description: &'a str,
    pub sensitive: bool,
    /// `ephemeral = true` (OpenTofu 1.11): the value is kept out of plan files and state.
    pub ephemeral: bool,
    pub default: Option<Expr>,
    /// `(condition, error_message)`
    pub validation: Option<(Expr, &'a str)>,
}

impl<'a> Var<'a> {
    pub fn new(name: &'a str, ty: Expr, description: &'a str) -> Self {
        Var { name, ty, description, sensitive: false, ephemeral: false, default: None, validation: None }
    }
    pub fn sensitive(mut self) -> Self {
        self.sensitive = true;
        self
    }
    pub fn ephemeral(mut self) -> Self {
        self.ephemeral = true;
        self
    }
    pub fn default(mut self, e: impl Into<Expr>) -> Self {
        self.default = Some(e.into());
        self
    }
    pub fn validation(mut self, cond: Expr, message: &'a str) -> Self {
        self.validation = Some((cond, message));
        self
    }
    pub fn write(self, body: &mut Body) {
        body.block("variable", &[self.name], |b| {
            b.attr("description", self.description).attr("type", self.ty);
            if let Some(d) = self.default {
                b.attr("default", d);
            }
            if self.sensitive {
                b.attr("sensitive", true);
            }
            if self.ephemeral {
                b.attr("ephemeral", true);
            }
            if let Some((cond, msg)) = self.validation {
                b.block("validation", &[], |v| {
                    v.attr("condition", cond).attr("error_message", msg);
                });
            }
        });
        body.blank();
    }
}

/// An `output` block.
pub(super) fn output(body: &mut Body, name: &str, description: &str, value: Expr, sensitive: bool) {
    body.block("output", &[name], |b| {
        b.attr("description", description).attr("value", value);
        if sensitive {
            b.attr("sensitive", true);
        }
    });
    body.blank();
}

/// `var.<name>`: a reference to a variable.
pub(super) fn var(name: &str) -> Expr {
    r(&format!("var.{name}"))
}

/// A file body that starts with the generated-file header.
pub(super) fn file() -> Body {
    let mut b = Body::new();
    b.comment(crate::emit::HEADER).blank();
    b
}
