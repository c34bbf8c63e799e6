//! Key material in fleet.kdl (F11, R14): no string the user writes may hold a private key.
//! fleet.kdl is committed to git, and its strings reach out/, machine configs and the command
//! lines of `apply`; a key belongs in a sealed input (`fleetc secrets import`). This check runs
//! over every string value of the syntax tree, whatever the model makes of it (so a key in a
//! property fleetc ignores, or in a node the model refuses, is still found), before anything
//! is emitted: a run with errors writes nothing.
//!
//! The shapes refused are those of `upstream::key_material`, the one recognizer that Talos
//! patches and vendored manifests are read with too.

use crate::diag::{Diagnostic, Diagnostics, FileId, Span, codes};
use crate::syntax::{Node, ValueKind};
use crate::upstream::key_material::find;

/// Every string value (arguments and properties) of every node, children included.
pub(crate) fn check_tree(nodes: &[Node], diags: &mut Diagnostics) {
    let mut stack: Vec<&Node> = nodes.iter().rev().collect();
    while let Some(node) = stack.pop() {
        let values = node.args.iter().map(|v| (v, None)).chain(node.props.iter().map(|p| (&p.value, Some(&p.name))));
        for (value, prop) in values {
            let ValueKind::String(s) = &value.kind else { continue };
            let Some((key, _)) = find(s) else { continue };
            let what = key.describe();
            let place = match prop {
                Some(p) => format!("the value of `{}`", p.value),
                None => format!("an argument of `{}`", node.name.value),
            };
            diags.push(
                Diagnostic::new(&codes::KEY_MATERIAL_IN_FLEET, format!("{place} holds key material: {what}"))
                    .at(value.span)
                    .label("a private key, in a file committed to git")
                    .related(node.name.span, "in this node"),
            );
        }
        stack.extend(node.children().iter().rev());
    }
}

/// Every comment of fleet.kdl (line and block comments, slashdashed nodes and entries), read
/// with the formatter's lossless lexer: the parser drops them, but they are committed with
/// the file all the same. The span is the key's marker (its PEM header or prefix), so that
/// the diagnostic does not print the key.
pub(crate) fn check_comments(file: FileId, text: &str, diags: &mut Diagnostics) {
    for range in crate::syntax::fmt::comment_ranges(text) {
        let comment = &text[range.clone()];
        let Some((key, at)) = find(comment) else { continue };
        let what = key.describe();
        let kind = if comment.starts_with("/-") { "a slashdashed (commented-out) part" } else { "a comment" };
        diags.push(
            Diagnostic::new(&codes::KEY_MATERIAL_IN_FLEET, format!("{kind} of fleet.kdl holds key material: {what}"))
                .at(Span::new(file, range.start + at.start, at.len()))
                .label("a private key, in a comment committed to git")
                .help("a comment is committed with fleet.kdl like any value: remove the key, rotate it (it has been on disk unencrypted) and seal it with `fleetc secrets import <env>/<cluster> <name> FILE` (F11, R14)"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::key_material::tests::{age, begin};

    /// Issue 19: a key pasted into a comment was not found once the check moved to the tree.
    #[test]
    fn comments_and_slashdashed_parts_are_scanned() {
        let age = age();
        let pem = begin("OPENSSH PRIVATE KEY");
        let text = format!(
            "// {age}\nfleet \"x\" {{\n    /* the old key:\n{pem} */\n    /-label \"k\" \"{}\"\n    talos \"v1.13.9\" // age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n}}\n",
            "PuTTY-User-Key-File-3"
        );
        let mut diags = Diagnostics::new();
        check_comments(FileId(0), &text, &mut diags);
        let found: Vec<(String, usize)> =
            diags.iter().map(|d| (d.message.clone(), d.span.expect("placed").start)).collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].0.starts_with("a comment") && found[0].0.contains("age identity"), "{found:?}");
        assert_eq!(found[0].1, 3, "the span starts at the identity, not at `//`");
        assert!(
            found[1].0.contains("PEM private-key") && text[found[1].1..].starts_with("-----BEGIN OPENSSH"),
            "{found:?}"
        );
        assert!(found[2].0.starts_with("a slashdashed") && found[2].0.contains("PuTTY"), "{found:?}");
        // A public recipient in a comment, and comments with no key, are fine.
        let mut diags = Diagnostics::new();
        check_comments(
            FileId(0),
            "// recipients: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\nfleet \"x\"\n",
            &mut diags,
        );
        assert!(diags.is_empty());
    }
}
