//! OpenTofu files split into top-level blocks. This is not an HCL parser: it reads the layout
//! that fleetc's own writer ([`crate::emit::hcl`], a `tofu fmt` fixed point) produces, where a
//! top-level block opens at column 0 with `type "label" "label" {` and closes with a `}` alone
//! at column 0. Blank and comment lines between blocks belong to the block that follows (the
//! file header to the first block). A file that does not have this shape is not split: the
//! caller treats it as one object. A parser crate (hcl-rs, a dev-dependency only) would add a
//! runtime dependency and lose line positions, which hunks need; fleetc only ever diffs files
//! it wrote itself.

use super::{ObjectKey, Segment};

/// The block type and labels of a line that opens a top-level block, and whether the block
/// also closes on that line (`terraform {}`).
fn opening(line: &str) -> Option<(String, Vec<String>, bool)> {
    let (head, one_line) =
        if let Some(h) = line.strip_suffix(" {}") { (h, true) } else { (line.strip_suffix(" {")?, false) };
    let mut rest = head;
    let ident_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(rest.len());
    if ident_len == 0 || !rest.as_bytes()[0].is_ascii_alphabetic() && rest.as_bytes()[0] != b'_' {
        return None;
    }
    let block = rest[..ident_len].to_owned();
    rest = &rest[ident_len..];
    let mut labels = Vec::new();
    while !rest.is_empty() {
        rest = rest.strip_prefix(' ')?;
        if let Some(q) = rest.strip_prefix('"') {
            let mut label = String::new();
            let mut chars = q.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, e)) = chars.next() {
                            label.push(e);
                        }
                    }
                    '"' => {
                        end = Some(i + 1);
                        break;
                    }
                    c => label.push(c),
                }
            }
            labels.push(label);
            rest = &q[end?..];
        } else {
            let n = rest.find(' ').unwrap_or(rest.len());
            let word = &rest[..n];
            if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                return None;
            }
            labels.push(word.to_owned());
            rest = &rest[n..];
        }
    }
    Some((block, labels, one_line))
}

fn is_trivia(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#') || t.starts_with("//")
}

/// The top-level blocks of a file, or `None` when it is not laid out as `tofu fmt` does.
pub(super) fn split(lines: &[&str]) -> Option<Vec<Segment>> {
    let mut segments: Vec<Segment> = Vec::new();
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    let mut pending_start = 0;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_trivia(line) {
            i += 1;
            continue;
        }
        let (block, labels, one_line) = opening(line)?;
        let end = if one_line {
            i + 1
        } else {
            let close = lines[i + 1..].iter().position(|l| *l == "}")?;
            i + 1 + close + 1
        };
        let ordinal = seen.iter().filter(|(b, l)| *b == block && *l == labels).count();
        seen.push((block.clone(), labels.clone()));
        segments.push(Segment { key: ObjectKey::Hcl { block, labels, ordinal }, start: pending_start, end });
        pending_start = end;
        i = end;
    }
    if pending_start < lines.len() {
        match segments.last_mut() {
            Some(last) => last.end = lines.len(),
            None => return None,
        }
    }
    Some(segments)
}

/// A variables file (`.tfvars`) split into its top-level assignments, each named by the
/// variable it sets (`clusters`, `images`): a line `name = …` at column 0 opens one, and it
/// runs to the next such line. Blank and comment lines belong to the assignment that
/// follows. `None` when the file has another shape.
pub(super) fn split_values(lines: &[&str]) -> Option<Vec<Segment>> {
    let mut segments: Vec<Segment> = Vec::new();
    let mut trailing_trivia = 0;
    for (i, line) in lines.iter().enumerate() {
        if is_trivia(line) {
            trailing_trivia += 1;
            continue;
        }
        let opens = !line.starts_with(' ') && !line.starts_with('}') && !line.starts_with(']');
        if opens {
            let (name, _) = line.split_once('=')?;
            let name = name.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                return None;
            }
            let start = if segments.is_empty() { 0 } else { i - trailing_trivia };
            if let Some(last) = segments.last_mut() {
                last.end = start;
            }
            let ordinal = segments
                .iter()
                .filter(|s| matches!(&s.key, ObjectKey::Hcl { labels, .. } if labels[0] == name))
                .count();
            segments.push(Segment {
                key: ObjectKey::Hcl { block: VALUE.to_owned(), labels: vec![name.to_owned()], ordinal },
                start,
                end: lines.len(),
            });
        } else if segments.is_empty() {
            return None;
        }
        trailing_trivia = 0;
    }
    if segments.is_empty() { None } else { Some(segments) }
}

/// The block type under which a variables file's assignments are keyed.
pub(super) const VALUE: &str = "value";

/// The expression of a top-level attribute `name = …` of a block (indented two spaces, as
/// `tofu fmt` writes it), e.g. the `from` of a `moved` block.
pub fn attribute(block_lines: &[&str], name: &str) -> Option<String> {
    block_lines.iter().find_map(|l| {
        let rest = l.strip_prefix("  ")?;
        if rest.starts_with(' ') {
            return None;
        }
        let (k, v) = rest.split_once('=')?;
        (k.trim_end() == name).then(|| v.trim().to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Vec<(String, usize, usize)> {
        let lines: Vec<&str> = text.lines().collect();
        split(&lines).unwrap().into_iter().map(|s| (s.key.label(), s.start, s.end)).collect()
    }

    #[test]
    fn blocks_are_named_by_address() {
        let t = "# header\n\nterraform {\n  required_version = \">= 1.11\"\n}\n\nresource \"scaleway_rdb_instance\" \"app\" {\n  name = \"x\"\n  nested {\n    a = 1\n  }\n}\n\nmoved {\n  from = scaleway_object_bucket.old\n  to   = scaleway_object_bucket.new\n}\nlocals {}\n";
        assert_eq!(
            labels(t),
            vec![
                ("terraform".to_owned(), 0, 5),
                ("scaleway_rdb_instance.app".to_owned(), 5, 12),
                ("moved #1".to_owned(), 12, 17),
                ("locals #1".to_owned(), 17, 18),
            ]
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(attribute(&lines[12..17], "from").as_deref(), Some("scaleway_object_bucket.old"));
        assert_eq!(attribute(&lines[12..17], "to").as_deref(), Some("scaleway_object_bucket.new"));
    }

    #[test]
    fn escaped_labels_and_trailing_comments() {
        let t = "module \"a\\\"b\" {\n}\n# trailing\n";
        assert_eq!(labels(t), vec![("module.a\"b".to_owned(), 0, 3)]);
    }

    #[test]
    fn variables_files_are_split_by_the_variable_they_set() {
        let t = "# header\n\nname = \"x\"\nclusters = {\n  main = {\n    a = 1\n  }\n}\n\n# images\nimages = [\n  \"a\",\n]\n";
        let lines: Vec<&str> = t.lines().collect();
        let got: Vec<(String, usize, usize)> =
            split_values(&lines).unwrap().into_iter().map(|s| (s.key.label(), s.start, s.end)).collect();
        assert_eq!(got, vec![("name".to_owned(), 0, 3), ("clusters".to_owned(), 3, 8), ("images".to_owned(), 8, 13)]);
        assert!(split_values(&["  a = 1"]).is_none());
    }

    #[test]
    fn other_layouts_are_not_split() {
        for t in ["a = 1\n", "resource \"a\" \"b\" {\n  x = 1\n", "  resource \"a\" \"b\" {\n}\n"] {
            let lines: Vec<&str> = t.lines().collect();
            assert!(split(&lines).is_none(), "{t}");
        }
    }
}
