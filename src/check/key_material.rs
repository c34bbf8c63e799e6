//! Key material in fleet.kdl (F11, R14): no string the user writes may hold a private key.
//! fleet.kdl is committed to git, and its strings reach out/, machine configs and the command
//! lines of `apply`; a key belongs in a sealed input (`fleetc secrets import`). This check runs
//! over every string value of the syntax tree, whatever the model makes of it (so a key in a
//! property fleetc ignores, or in a node the model refuses, is still found), before anything
//! is emitted: a run with errors writes nothing.
//!
//! Shapes refused: a PEM private-key block (`-----BEGIN … PRIVATE KEY-----`, PKCS#1/#8, EC,
//! DSA, OpenSSH, encrypted, and PGP's `PRIVATE KEY BLOCK`), the same block base64-encoded (as a
//! Kubernetes Secret's `data` holds it), an age identity (`AGE-SECRET-KEY-1…`, and a plugin
//! identity `AGE-PLUGIN-…-1…`), and a PuTTY private-key file.

use crate::diag::{Diagnostic, Diagnostics, FileId, Span, codes};
use crate::syntax::{Node, ValueKind};

/// What a string holds, in words (never the key itself).
fn describe(s: &str) -> Option<&'static str> {
    find(s).map(|(what, _)| what)
}

/// What a string holds, in words, and the byte range of the key's marker in it (the PEM
/// header, the identity's prefix): where a diagnostic points without echoing the key.
fn find(s: &str) -> Option<(&'static str, std::ops::Range<usize>)> {
    if let Some(r) = pem_private_key(s) {
        return Some(("a PEM private-key block (`-----BEGIN … PRIVATE KEY-----`)", r));
    }
    if let Some(r) = base64_pem_private_key(s) {
        return Some(("a base64-encoded PEM private-key block (`LS0tLS1CRUdJTi…`)", r));
    }
    if let Some(r) = age_identity(s) {
        return Some(("an age identity (`AGE-SECRET-KEY-1…`)", r));
    }
    if let Some(i) = s.find("PuTTY-User-Key-File-") {
        return Some(("a PuTTY private-key file (`PuTTY-User-Key-File-…`)", i..i + "PuTTY-User-Key-File-".len()));
    }
    None
}

/// `-----BEGIN <label>-----` where the label ends in `PRIVATE KEY` or `PRIVATE KEY BLOCK`:
/// the range of that header line.
fn pem_private_key(s: &str) -> Option<std::ops::Range<usize>> {
    let mut from = 0;
    while let Some(i) = s[from..].find("-----BEGIN ").map(|i| from + i) {
        let label_at = i + "-----BEGIN ".len();
        if let Some(end) = s[label_at..].find("-----") {
            let label = &s[label_at..label_at + end];
            if label.len() <= 64 && (label.ends_with("PRIVATE KEY") || label.ends_with("PRIVATE KEY BLOCK")) {
                return Some(i..label_at + end + "-----".len());
            }
        }
        from = label_at;
    }
    None
}

/// The base64 encoding of `-----BEGIN ` begins `LS0tLS1CRUdJTi`; decode what follows far
/// enough to read the label. The range is that prefix.
fn base64_pem_private_key(s: &str) -> Option<std::ops::Range<usize>> {
    const PREFIX: &str = "LS0tLS1CRUdJTi";
    let mut from = 0;
    while let Some(i) = s[from..].find(PREFIX).map(|i| from + i) {
        let chunk: String =
            s[i..].chars().filter(|c| !c.is_ascii_whitespace()).take(160).take_while(|c| b64(*c).is_some()).collect();
        if pem_private_key(&decode(&chunk)).is_some() {
            return Some(i..i + PREFIX.len());
        }
        from = i + 1;
    }
    None
}

fn b64(c: char) -> Option<u32> {
    match c {
        'A'..='Z' => Some(c as u32 - 'A' as u32),
        'a'..='z' => Some(c as u32 - 'a' as u32 + 26),
        '0'..='9' => Some(c as u32 - '0' as u32 + 52),
        '+' | '-' => Some(62),
        '/' | '_' => Some(63),
        _ => None,
    }
}

/// Lossy base64 (standard or URL alphabet, no padding needed): enough to read a PEM label.
fn decode(s: &str) -> String {
    let (mut bits, mut n, mut out) = (0u32, 0u32, Vec::new());
    for v in s.chars().filter_map(b64) {
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push(((bits >> n) & 0xff) as u8);
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The bech32 alphabet (age identities are bech32, upper case).
fn bech32(c: char) -> bool {
    matches!(
        c.to_ascii_lowercase(),
        'q' | 'p'
            | 'z'
            | 'r'
            | 'y'
            | '9'
            | 'x'
            | '8'
            | 'g'
            | 'f'
            | '2'
            | 't'
            | 'v'
            | 'd'
            | 'w'
            | '0'
            | 's'
            | '3'
            | 'j'
            | 'n'
            | '5'
            | '4'
            | 'k'
            | 'h'
            | 'c'
            | 'e'
            | '6'
            | 'm'
            | 'u'
            | 'a'
            | '7'
            | 'l'
    )
}

/// `AGE-SECRET-KEY-1` or `AGE-PLUGIN-<NAME>-1` followed by bech32 data (any case): the
/// range of that prefix.
fn age_identity(s: &str) -> Option<std::ops::Range<usize>> {
    // ASCII upper-casing keeps every byte offset.
    let upper = s.to_ascii_uppercase();
    let data_after = |i: usize| upper[i..].chars().take_while(|c| bech32(*c)).count() >= 20;
    for (i, _) in upper.match_indices("AGE-SECRET-KEY-1") {
        if data_after(i + "AGE-SECRET-KEY-1".len()) {
            return Some(i..i + "AGE-SECRET-KEY-1".len());
        }
    }
    for (i, _) in upper.match_indices("AGE-PLUGIN-") {
        let after = &upper[i + "AGE-PLUGIN-".len()..];
        let name = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.').count();
        let end = i + "AGE-PLUGIN-".len() + name + 2;
        if after[name..].starts_with("-1") && data_after(end) {
            return Some(i..end);
        }
    }
    None
}

/// Every string value (arguments and properties) of every node, children included.
pub(crate) fn check_tree(nodes: &[Node], diags: &mut Diagnostics) {
    let mut stack: Vec<&Node> = nodes.iter().rev().collect();
    while let Some(node) = stack.pop() {
        let values = node.args.iter().map(|v| (v, None)).chain(node.props.iter().map(|p| (&p.value, Some(&p.name))));
        for (value, prop) in values {
            let ValueKind::String(s) = &value.kind else { continue };
            let Some(what) = describe(s) else { continue };
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
        let Some((what, at)) = find(comment) else { continue };
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

    // Test keys are built at run time so that no key-shaped string sits in the source.
    fn begin(label: &str) -> String {
        format!("{0}BEGIN {label}{0}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n{0}END {label}{0}\n", "-".repeat(5))
    }

    #[test]
    fn private_key_shapes_are_found() {
        for label in [
            "PRIVATE KEY",
            "RSA PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "PGP PRIVATE KEY BLOCK",
        ] {
            assert!(describe(&begin(label)).is_some(), "{label}");
        }
        let age = format!("AGE-SECRET-KEY-1{}", "QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS");
        assert!(describe(&age).is_some());
        assert!(describe(&age.to_lowercase()).is_some());
        assert!(describe(&format!("AGE-PLUGIN-YUBIKEY-1{}", "QYQSZQGPQYQSZQGPQYQSZQGPQYQ")).is_some());
        // base64 of a PEM private key, as a Secret's `data` holds it.
        let b64 = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURB";
        assert_eq!(decode(b64).lines().next(), Some(format!("{0}BEGIN PRIVATE KEY{0}", "-".repeat(5)).as_str()));
        assert!(describe(b64).is_some());
        assert!(describe("PuTTY-User-Key-File-3: ssh-ed25519\n").is_some());
    }

    /// Issue 19: a key pasted into a comment was not found once the check moved to the tree.
    #[test]
    fn comments_and_slashdashed_parts_are_scanned() {
        let age = format!("AGE-SECRET-KEY-1{}", "QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS");
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

    #[test]
    fn public_material_and_ordinary_strings_are_not() {
        for s in [
            begin("CERTIFICATE"),
            begin("PUBLIC KEY"),
            "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p".to_owned(),
            "AGE-SECRET-KEY-1".to_owned(),
            "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t".to_owned(),
            "factory.talos.dev/nocloud-installer".to_owned(),
            "the private key lives in a sealed input".to_owned(),
        ] {
            assert!(describe(&s).is_none(), "{s}");
        }
    }
}
