//! The part of Go's `text/template` that topf's patch templates use, evaluated against a JSON
//! value: topf renders every `*.tpl` patch per node with `text/template`, sprig's functions and
//! `missingkey=error` (postfinance/topf v0.4.2 `pkg/config/patches.go` l.144-166,
//! `RenderTemplate`). Supported: text, `{{ pipeline }}`, the `{{-`/`-}}` trim markers, comments,
//! `if`/`else if`/`else`/`end`, `range` (no variables), `with`, field chains from `.` and `$`,
//! string, number and boolean literals, `|` pipes, and the functions `eq`, `ne`, `not`, `and`,
//! `or`, `index`, `len`, `default`, `lower`, `upper`, `quote`, `trim`. Anything else is an
//! error naming it: the import then keeps nothing of that template and reports why, rather
//! than guess at what topf would render.

use serde_json::Value;

/// Renders `text` with `.` = `root`; `Err` names the first construct it cannot evaluate, or an
/// evaluation error Go's would also raise (a missing key, with `missingkey=error`).
pub fn render(text: &str, root: &Value) -> Result<String, String> {
    let toks = lex(text)?;
    let mut pos = 0;
    let nodes = parse(&toks, &mut pos, &[])?;
    if pos < toks.len() {
        return Err(format!("unexpected `{{{{ {} }}}}`", action_text(&toks[pos])));
    }
    let mut out = String::new();
    exec(&nodes, root, root, &mut out)?;
    Ok(out)
}

enum Tok {
    Text(String),
    Action(String),
}

fn action_text(t: &Tok) -> &str {
    match t {
        Tok::Text(s) | Tok::Action(s) => s,
    }
}

/// Text and actions, with the trim markers applied (Go trims every white space character,
/// newlines included, beside a `{{- ` or ` -}}`).
fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let mut rest = text;
    let mut trim_next = false;
    while let Some(i) = rest.find("{{") {
        let mut before = &rest[..i];
        if trim_next {
            before = before.trim_start();
        }
        let after = &rest[i + 2..];
        let (trim_left, after) = match after.strip_prefix("- ") {
            Some(a) => (true, a),
            None => match after.strip_prefix("-\n").or_else(|| after.strip_prefix("-\t")) {
                Some(a) => (true, a),
                None => (false, after),
            },
        };
        if trim_left {
            before = before.trim_end();
        }
        if !before.is_empty() {
            toks.push(Tok::Text(before.to_owned()));
        }
        let end = after.find("}}").ok_or("an action `{{` is not closed")?;
        let mut inner = &after[..end];
        trim_next = false;
        if let Some(s) =
            inner.strip_suffix(" -").or_else(|| inner.strip_suffix("\n-")).or_else(|| inner.strip_suffix("\t-"))
        {
            inner = s;
            trim_next = true;
        }
        let inner = inner.trim();
        if !(inner.starts_with("/*") && inner.ends_with("*/")) {
            toks.push(Tok::Action(inner.to_owned()));
        }
        rest = &after[end + 2..];
    }
    let last = if trim_next { rest.trim_start() } else { rest };
    if !last.is_empty() {
        toks.push(Tok::Text(last.to_owned()));
    }
    Ok(toks)
}

enum Node {
    Text(String),
    Print(String),
    If(Vec<(String, Vec<Node>)>, Vec<Node>),
    Range(String, Vec<Node>, Vec<Node>),
    With(String, Vec<Node>, Vec<Node>),
}

/// Parses until one of `stop` (`end`, `else…`) and leaves `pos` on it.
fn parse(toks: &[Tok], pos: &mut usize, stop: &[&str]) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    while *pos < toks.len() {
        match &toks[*pos] {
            Tok::Text(t) => {
                nodes.push(Node::Text(t.clone()));
                *pos += 1;
            }
            Tok::Action(a) => {
                let word = a.split_whitespace().next().unwrap_or("");
                if stop.contains(&word) {
                    return Ok(nodes);
                }
                *pos += 1;
                match word {
                    "if" | "range" | "with" => {
                        let arg = a[word.len()..].trim().to_owned();
                        if arg.contains(":=")
                            || arg.contains('$')
                                && arg
                                    .split_whitespace()
                                    .any(|w| w.starts_with('$') && w.len() > 1 && !w.starts_with("$."))
                        {
                            return Err(format!("template variables (`{a}`)"));
                        }
                        let body = parse(toks, pos, &["else", "end"])?;
                        let mut branches = vec![(arg, body)];
                        let mut otherwise = Vec::new();
                        loop {
                            let Some(Tok::Action(t)) = toks.get(*pos) else {
                                return Err(format!("`{{{{ {a} }}}}` has no `{{{{ end }}}}`"));
                            };
                            *pos += 1;
                            if t == "end" {
                                break;
                            }
                            let cond = t.trim_start_matches("else").trim();
                            if word == "if" && cond.starts_with("if ") {
                                let body = parse(toks, pos, &["else", "end"])?;
                                branches.push((cond[3..].trim().to_owned(), body));
                            } else if cond.is_empty() {
                                otherwise = parse(toks, pos, &["end"])?;
                            } else {
                                return Err(format!("`{{{{ {t} }}}}`"));
                            }
                        }
                        nodes.push(match word {
                            "if" => Node::If(branches, otherwise),
                            "range" => {
                                let (arg, body) = branches.remove(0);
                                Node::Range(arg, body, otherwise)
                            }
                            _ => {
                                let (arg, body) = branches.remove(0);
                                Node::With(arg, body, otherwise)
                            }
                        });
                    }
                    "end" | "else" => return Err(format!("a `{{{{ {a} }}}}` without its `if`")),
                    "define" | "template" | "block" | "break" | "continue" => {
                        return Err(format!("`{{{{ {word} }}}}`"));
                    }
                    _ => nodes.push(Node::Print(a.clone())),
                }
            }
        }
    }
    if stop.is_empty() {
        Ok(nodes)
    } else {
        Err("an `{{ if }}`, `{{ range }}` or `{{ with }}` has no `{{ end }}`".into())
    }
}

fn exec(nodes: &[Node], dot: &Value, root: &Value, out: &mut String) -> Result<(), String> {
    for n in nodes {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Print(p) => out.push_str(&print(&pipeline(p, dot, root)?)),
            Node::If(branches, otherwise) => {
                let mut done = false;
                for (cond, body) in branches {
                    if truth(&pipeline(cond, dot, root)?) {
                        exec(body, dot, root, out)?;
                        done = true;
                        break;
                    }
                }
                if !done {
                    exec(otherwise, dot, root, out)?;
                }
            }
            Node::With(arg, body, otherwise) => {
                let v = pipeline(arg, dot, root)?;
                if truth(&v) { exec(body, &v, root, out)? } else { exec(otherwise, dot, root, out)? }
            }
            Node::Range(arg, body, otherwise) => {
                let v = pipeline(arg, dot, root)?;
                let items: Vec<Value> = match &v {
                    Value::Array(a) => a.clone(),
                    // Go ranges over a map in its keys' order.
                    Value::Object(m) => m.values().cloned().collect(),
                    Value::Null => Vec::new(),
                    other => return Err(format!("range over {}", print(other))),
                };
                if items.is_empty() {
                    exec(otherwise, dot, root, out)?;
                }
                for item in &items {
                    exec(body, item, root, out)?;
                }
            }
        }
    }
    Ok(())
}

/// Go's truth: false, 0, nil and empty values are false.
fn truth(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A value as `fmt.Print` writes it.
fn print(v: &Value) -> String {
    match v {
        Value::Null => "<no value>".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(print).collect::<Vec<_>>().join(" ")),
        Value::Object(o) => {
            format!("map[{}]", o.iter().map(|(k, v)| format!("{k}:{}", print(v))).collect::<Vec<_>>().join(" "))
        }
        other => other.to_string(),
    }
}

/// Splits on white space outside quotes and parentheses.
fn words(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in s.chars() {
        if let Some(qc) = quote {
            cur.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == qc {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '`' => {
                quote = Some(c);
                cur.push(c);
            }
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth -= 1;
                cur.push(c);
            }
            c if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if quote.is_some() || depth != 0 {
        return Err(format!("`{s}` is not closed"));
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

fn pipeline(p: &str, dot: &Value, root: &Value) -> Result<Value, String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quote = false;
    let mut depth = 0;
    for c in p.chars() {
        match c {
            '"' => quote = !quote,
            '(' if !quote => depth += 1,
            ')' if !quote => depth -= 1,
            '|' if !quote && depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    let mut prev: Option<Value> = None;
    for part in parts {
        let w = words(part.trim())?;
        if w.is_empty() {
            return Err(format!("an empty command in `{p}`"));
        }
        prev = Some(command(&w, prev, dot, root)?);
    }
    Ok(prev.unwrap_or(Value::Null))
}

fn command(w: &[String], piped: Option<Value>, dot: &Value, root: &Value) -> Result<Value, String> {
    let head = w[0].as_str();
    let is_func =
        head.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && !matches!(head, "true" | "false" | "nil");
    if !is_func {
        if w.len() > 1 || piped.is_some() {
            return Err(format!("`{}` is not a function", w.join(" ")));
        }
        return operand(head, dot, root);
    }
    let mut args = w[1..].iter().map(|a| operand(a, dot, root)).collect::<Result<Vec<_>, _>>()?;
    if let Some(v) = piped {
        args.push(v);
    }
    let n = args.len();
    let want = |k: usize| if n == k { Ok(()) } else { Err(format!("`{head}` takes {k} arguments, given {n}")) };
    let s = |v: &Value| print(v);
    Ok(match head {
        "eq" => {
            if n < 2 {
                return Err("`eq` takes two arguments or more".into());
            }
            Value::Bool(args[1..].iter().any(|a| loose_eq(&args[0], a)))
        }
        "ne" => {
            want(2)?;
            Value::Bool(!loose_eq(&args[0], &args[1]))
        }
        "not" => {
            want(1)?;
            Value::Bool(!truth(&args[0]))
        }
        "and" => args.iter().find(|a| !truth(a)).or(args.last()).cloned().unwrap_or(Value::Null),
        "or" => args.iter().find(|a| truth(a)).or(args.last()).cloned().unwrap_or(Value::Null),
        "len" => {
            want(1)?;
            Value::from(match &args[0] {
                Value::Array(a) => a.len(),
                Value::Object(o) => o.len(),
                Value::String(t) => t.len(),
                other => return Err(format!("len of {}", print(other))),
            })
        }
        "index" => {
            let mut v = args.first().cloned().unwrap_or(Value::Null);
            for k in &args[1..] {
                v = match (&v, k) {
                    (Value::Array(a), Value::Number(i)) => a
                        .get(i.as_u64().unwrap_or(u64::MAX) as usize)
                        .cloned()
                        .ok_or_else(|| format!("index {i} out of range"))?,
                    (Value::Object(m), Value::String(key)) => {
                        m.get(key).cloned().ok_or_else(|| format!("map has no entry for key \"{key}\""))?
                    }
                    _ => return Err(format!("cannot index {} with {}", print(&v), print(k))),
                };
            }
            v
        }
        // sprig's `default d v`: v, or d when v is empty.
        "default" => {
            want(2)?;
            if truth(&args[1]) { args[1].clone() } else { args[0].clone() }
        }
        "lower" => {
            want(1)?;
            Value::String(s(&args[0]).to_lowercase())
        }
        "upper" => {
            want(1)?;
            Value::String(s(&args[0]).to_uppercase())
        }
        "trim" => {
            want(1)?;
            Value::String(s(&args[0]).trim().to_owned())
        }
        "quote" => Value::String(args.iter().map(|a| format!("{:?}", s(a))).collect::<Vec<_>>().join(" ")),
        other => return Err(format!("the function `{other}`")),
    })
}

/// Go's `eq` on basic kinds (a YAML integer and a float compare by value).
fn loose_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn operand(a: &str, dot: &Value, root: &Value) -> Result<Value, String> {
    if let Some(inner) = a.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        return pipeline(inner, dot, root);
    }
    if let Some(lit) = a.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        return Ok(Value::String(lit.replace("\\\"", "\"").replace("\\n", "\n").replace("\\\\", "\\")));
    }
    if let Some(lit) = a.strip_prefix('`').and_then(|x| x.strip_suffix('`')) {
        return Ok(Value::String(lit.to_owned()));
    }
    match a {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        "nil" => return Ok(Value::Null),
        "." => return Ok(dot.clone()),
        "$" => return Ok(root.clone()),
        _ => {}
    }
    if let Ok(i) = a.parse::<i64>() {
        return Ok(Value::from(i));
    }
    if let Ok(f) = a.parse::<f64>() {
        return Ok(Value::from(f));
    }
    let (mut v, path) = if let Some(p) = a.strip_prefix("$.") {
        (root.clone(), p)
    } else if let Some(p) = a.strip_prefix('.') {
        (dot.clone(), p)
    } else {
        return Err(format!("`{a}`"));
    };
    for key in path.split('.') {
        v = match &v {
            Value::Object(m) => {
                m.get(key).cloned().ok_or_else(|| format!("map has no entry for key \"{key}\" (`{a}`)"))?
            }
            Value::Null => return Err(format!("nil pointer evaluating `{a}`")),
            _ => return Err(format!("can't evaluate field {key} in `{a}`")),
        };
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_the_constructs_topf_templates_use() {
        let root = json!({"Node": {"Host": "cp-1", "Role": "control-plane", "IP": "10.0.0.11",
            "Data": {"disk": "", "serial": "S1", "mods": ["a", "b"], "mtu": 1500}}, "Data": {"vip": "10.0.0.10"}});
        let t = "machine:\n  install:\n    {{- if .Node.Data.disk }}\n    disk: x\n    {{- else }}\n    serial: \"{{ .Node.Data.serial }}\"\n    {{- end }}\n";
        assert_eq!(render(t, &root).unwrap(), "machine:\n  install:\n    serial: \"S1\"\n");
        let t = "{{- range .Node.Data.mods }}\n- name: {{ . }}\n{{- end }}\nmtu: {{ .Node.Data.mtu }}";
        assert_eq!(render(t, &root).unwrap(), "\n- name: a\n- name: b\nmtu: 1500");
        let t = "{{ if eq .Node.Role \"control-plane\" }}vip: {{ $.Data.vip }}{{ end }} {{ index .Node.Data.mods 1 }}";
        assert_eq!(render(t, &root).unwrap(), "vip: 10.0.0.10 b");
        assert_eq!(render("{{ .Node.Host | upper }}", &root).unwrap(), "CP-1");
    }

    #[test]
    fn what_it_cannot_evaluate_is_an_error_naming_it() {
        let root = json!({"Node": {"Data": {}}});
        assert!(render("{{ .Node.Data.x }}", &root).unwrap_err().contains("no entry for key \"x\""));
        assert!(render("{{ b64enc .Node }}", &root).unwrap_err().contains("`b64enc`"));
        assert!(render("{{ range $i, $e := .Node }}{{ end }}", &root).unwrap_err().contains("variables"));
        assert!(render("{{ if .Node }}", &root).is_err());
    }
}
