//! The printer. It assumes a document that passed validation; the layout rules
//! it follows are listed in the module documentation.

use std::borrow::Cow;

use super::escape::{comment_text, escape_into, is_bare_key, quoted};
use super::{Body, Expr, INLINE_LIST_MAX, Item, Step, Template, TemplatePart, Traversal};

/// The whole file: the body at the top level, ending in exactly one newline
/// (an empty body gives an empty file).
pub(super) fn file(body: &Body) -> String {
    let mut out = String::new();
    write_body(&mut out, body, 0, false);
    out
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// The items of a body without leading or trailing blank lines and with runs
/// of blank lines collapsed to one.
fn normalized(body: &Body) -> Vec<&Item> {
    let mut items: Vec<&Item> = Vec::with_capacity(body.items.len());
    for item in &body.items {
        let blank = matches!(item, Item::Blank);
        let after_blank = matches!(items.last(), None | Some(Item::Blank));
        if !(blank && after_blank) {
            items.push(item);
        }
    }
    while matches!(items.last(), Some(Item::Blank)) {
        items.pop();
    }
    items
}

/// A `name = value` line in a body or an object, before alignment.
struct Assign<'a> {
    name: String,
    value: Cow<'a, Expr>,
}

/// Writes runs of `name = value` lines: the one-line ones of a run are aligned
/// on `=` (hclwrite `formatCells`); a value that spans lines ends the run and
/// takes a single space.
fn write_assigns(out: &mut String, assigns: &[Assign<'_>], level: usize) {
    let inline: Vec<Option<String>> = assigns.iter().map(|a| inline(&a.value)).collect();
    let mut start = 0;
    while start < assigns.len() {
        if inline[start].is_none() {
            let a = &assigns[start];
            indent(out, level);
            out.push_str(&a.name);
            out.push_str(" = ");
            write_expr(out, &a.value, level);
            out.push('\n');
            start += 1;
            continue;
        }
        let end = (start..assigns.len()).find(|&i| inline[i].is_none()).unwrap_or(assigns.len());
        let width = assigns[start..end].iter().map(|a| a.name.len()).max().unwrap_or(0);
        for (a, text) in assigns[start..end].iter().zip(&inline[start..end]) {
            indent(out, level);
            out.push_str(&a.name);
            for _ in a.name.len()..width {
                out.push(' ');
            }
            out.push_str(" = ");
            out.push_str(text.as_deref().unwrap_or_default());
            out.push('\n');
        }
        start = end;
    }
}

/// `in_variable`: the body of a top-level `variable` block, whose `type` gets
/// the normalization of `tofu fmt` (see [`variable_type`]).
fn write_body(out: &mut String, body: &Body, level: usize, in_variable: bool) {
    let items = normalized(body);
    let mut i = 0;
    while i < items.len() {
        match items[i] {
            Item::Attr(_) => {
                let mut assigns = Vec::new();
                while let Some(Item::Attr(attr)) = items.get(i) {
                    let fixed = (in_variable && attr.name == "type").then(|| variable_type(&attr.value)).flatten();
                    assigns.push(Assign {
                        name: attr.name.clone(),
                        value: fixed.map_or(Cow::Borrowed(&attr.value), Cow::Owned),
                    });
                    i += 1;
                }
                write_assigns(out, &assigns, level);
                continue;
            }
            Item::Block(block) => {
                indent(out, level);
                out.push_str(&block.ident);
                for label in &block.labels {
                    out.push(' ');
                    out.push_str(&quoted(label, false));
                }
                if block.body.is_empty() {
                    out.push_str(" {}\n");
                } else {
                    out.push_str(" {\n");
                    let variable = level == 0 && block.ident == "variable";
                    write_body(out, &block.body, level + 1, variable);
                    indent(out, level);
                    out.push_str("}\n");
                }
            }
            Item::Blank => out.push('\n'),
            Item::Comment(text) => {
                for line in text.split('\n') {
                    let line = line.strip_suffix('\r').unwrap_or(line);
                    indent(out, level);
                    out.push('#');
                    let line = comment_text(line);
                    if !line.is_empty() {
                        out.push(' ');
                        out.push_str(&line);
                    }
                    out.push('\n');
                }
            }
        }
        i += 1;
    }
}

/// The type constraint `tofu fmt` writes for a top-level `variable` block's
/// `type` (its `formatTypeExpr`): a bare `list`, `map` or `set` gets `(any)`,
/// and the legacy quoted `"string"`, `"list"`, `"map"` become `string`,
/// `list(string)`, `map(string)`.
fn variable_type(expr: &Expr) -> Option<Expr> {
    let text = inline(expr)?;
    let (name, element) = match text.as_str() {
        "list" | "map" | "set" => (text.as_str(), "any"),
        "\"string\"" => return Some(Expr::reference("string")),
        "\"list\"" => ("list", "string"),
        "\"map\"" => ("map", "string"),
        _ => return None,
    };
    Some(Expr::call(name, [Expr::reference(element)]))
}

/// The one-line form of `expr` when the layout rules put it on one line.
fn inline(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Object(entries) if !entries.is_empty() => None,
        Expr::List(items) if !items.is_empty() => {
            let parts = items.iter().map(inline).collect::<Option<Vec<_>>>()?;
            let text = format!("[{}]", parts.join(", "));
            (text.chars().count() <= INLINE_LIST_MAX).then_some(text)
        }
        Expr::Call(name, args) => {
            let parts = args.iter().map(inline).collect::<Option<Vec<_>>>()?;
            Some(format!("{name}({})", parts.join(", ")))
        }
        _ => Some(one_line(expr)),
    }
}

/// `expr` on one line whatever its size: inside `${ }` and index brackets.
fn one_line(expr: &Expr) -> String {
    match expr {
        Expr::Str(s) => quoted(s, false),
        Expr::Template(t) => template(t),
        Expr::Int(n) => n.to_string(),
        Expr::Float(n) => number(*n),
        Expr::Bool(b) => b.to_string(),
        Expr::Null => "null".to_owned(),
        Expr::Ref(t) => traversal(t),
        Expr::Call(name, args) => {
            let args: Vec<String> = args.iter().map(one_line).collect();
            format!("{name}({})", args.join(", "))
        }
        Expr::List(items) => {
            let items: Vec<String> = items.iter().map(one_line).collect();
            format!("[{}]", items.join(", "))
        }
        Expr::Object(entries) if entries.is_empty() => "{}".to_owned(),
        Expr::Object(entries) => {
            let entries: Vec<String> = entries.iter().map(|(k, v)| format!("{} = {}", key(k), one_line(v))).collect();
            format!("{{ {} }}", entries.join(", "))
        }
        Expr::Cond(c, a, b) => format!("{} ? {} : {}", operand(c), operand(a), operand(b)),
        Expr::For(f) => {
            let vars = match &f.key_var {
                Some(k) => format!("{k}, {}", f.value_var),
                None => f.value_var.clone(),
            };
            let filter = f.cond.as_ref().map(|c| format!(" if {}", operand(c))).unwrap_or_default();
            match &f.key {
                Some(k) => format!(
                    "{{ for {vars} in {} : {} => {}{filter} }}",
                    operand(&f.collection),
                    operand(k),
                    operand(&f.value)
                ),
                None => format!("[for {vars} in {} : {}{filter}]", operand(&f.collection), operand(&f.value)),
            }
        }
    }
}

/// A sub-expression of a conditional or a `for`: a nested conditional gets parentheses, so
/// that the reading never depends on precedence.
fn operand(expr: &Expr) -> String {
    match expr {
        Expr::Cond(..) => format!("({})", one_line(expr)),
        _ => one_line(expr),
    }
}

/// Writes `expr` where the current line (indented at `level`) left off; the
/// lines it adds are indented from `level`.
fn write_expr(out: &mut String, expr: &Expr, level: usize) {
    if let Some(text) = inline(expr) {
        out.push_str(&text);
        return;
    }
    match expr {
        Expr::Object(entries) => {
            out.push_str("{\n");
            let assigns: Vec<Assign<'_>> =
                entries.iter().map(|(k, v)| Assign { name: key(k), value: Cow::Borrowed(v) }).collect();
            write_assigns(out, &assigns, level + 1);
            indent(out, level);
            out.push('}');
        }
        Expr::List(items) => {
            out.push_str("[\n");
            write_elements(out, items, level + 1);
            indent(out, level);
            out.push(']');
        }
        Expr::Call(name, args) if args.len() == 1 => {
            out.push_str(name);
            out.push('(');
            write_expr(out, &args[0], level);
            out.push(')');
        }
        Expr::Call(name, args) => {
            out.push_str(name);
            out.push_str("(\n");
            write_elements(out, args, level + 1);
            indent(out, level);
            out.push(')');
        }
        // Every other expression has a one-line form.
        _ => out.push_str(&one_line(expr)),
    }
}

/// One element per line, each followed by a comma.
fn write_elements(out: &mut String, items: &[Expr], level: usize) {
    for item in items {
        indent(out, level);
        write_expr(out, item, level);
        out.push_str(",\n");
    }
}

/// An object key: bare when it is a plain identifier, else a quoted string
/// escaped down to ASCII so that its width in columns is its length in bytes.
fn key(k: &str) -> String {
    if is_bare_key(k) { k.to_owned() } else { quoted(k, true) }
}

/// A finite number as an HCL literal: plain decimal, no exponent, `-0` as `0`.
fn number(n: f64) -> String {
    if n == 0.0 { "0".to_owned() } else { n.to_string() }
}

fn traversal(t: &Traversal) -> String {
    let mut out = t.root.clone();
    for step in &t.steps {
        match step {
            Step::Attr(name) => {
                out.push('.');
                out.push_str(name);
            }
            Step::Index(key) => {
                out.push('[');
                out.push_str(&one_line(key));
                out.push(']');
            }
            Step::Splat => out.push_str("[*]"),
        }
    }
    out
}

/// A template part after normalization.
enum Part<'a> {
    Lit(String),
    Interp(&'a Expr),
}

/// The parts of a template with string, number and boolean interpolations
/// folded into literal text and adjacent literals merged.
fn template_parts(t: &Template) -> Vec<Part<'_>> {
    let mut parts: Vec<Part<'_>> = Vec::new();
    for part in &t.parts {
        let text = match part {
            TemplatePart::Lit(s) => s.clone(),
            TemplatePart::Interp(Expr::Str(s)) => s.clone(),
            TemplatePart::Interp(Expr::Int(n)) => n.to_string(),
            TemplatePart::Interp(Expr::Float(n)) => number(*n),
            TemplatePart::Interp(Expr::Bool(b)) => b.to_string(),
            TemplatePart::Interp(e) => {
                parts.push(Part::Interp(e));
                continue;
            }
        };
        match parts.last_mut() {
            Some(Part::Lit(prev)) => prev.push_str(&text),
            _ => parts.push(Part::Lit(text)),
        }
    }
    parts.retain(|p| !matches!(p, Part::Lit(s) if s.is_empty()));
    parts
}

fn template(t: &Template) -> String {
    let parts = template_parts(t);
    // `tofu fmt` unwraps "${x}" to x: write the bare expression.
    if let [Part::Interp(e)] = parts.as_slice() {
        return one_line(e);
    }
    let mut out = String::from("\"");
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Lit(s) => {
                let before_interp = matches!(parts.get(i + 1), Some(Part::Interp(_)));
                let rest = s.trim_end_matches('$');
                if before_interp && rest.len() < s.len() {
                    // A `$` right before `${` would read as the escape `$${`:
                    // the trailing dollars go in a string interpolation.
                    escape_into(&mut out, rest, false);
                    out.push_str("${\"");
                    out.push_str(&s[rest.len()..]);
                    out.push_str("\"}");
                } else {
                    escape_into(&mut out, s, false);
                }
            }
            Part::Interp(e) => {
                let inner = one_line(e);
                if inner.starts_with('{') {
                    // hclwrite spaces `${ {` and `} }` apart.
                    out.push_str("${ ");
                    out.push_str(&inner);
                    out.push_str(" }");
                } else {
                    out.push_str("${");
                    out.push_str(&inner);
                    out.push('}');
                }
            }
        }
    }
    out.push('"');
    out
}
