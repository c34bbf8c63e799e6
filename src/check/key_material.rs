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

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::syntax::{Node, ValueKind};

/// What a string holds, in words (never the key itself).
fn describe(s: &str) -> Option<&'static str> {
    if pem_private_key(s) {
        return Some("a PEM private-key block (`-----BEGIN … PRIVATE KEY-----`)");
    }
    if base64_pem_private_key(s) {
        return Some("a base64-encoded PEM private-key block (`LS0tLS1CRUdJTi…`)");
    }
    if age_identity(s) {
        return Some("an age identity (`AGE-SECRET-KEY-1…`)");
    }
    if s.contains("PuTTY-User-Key-File-") {
        return Some("a PuTTY private-key file (`PuTTY-User-Key-File-…`)");
    }
    None
}

/// `-----BEGIN <label>-----` where the label ends in `PRIVATE KEY` or `PRIVATE KEY BLOCK`.
fn pem_private_key(s: &str) -> bool {
    let mut rest = s;
    while let Some(i) = rest.find("-----BEGIN ") {
        let after = &rest[i + "-----BEGIN ".len()..];
        if let Some(end) = after.find("-----") {
            let label = &after[..end];
            if label.len() <= 64 && (label.ends_with("PRIVATE KEY") || label.ends_with("PRIVATE KEY BLOCK")) {
                return true;
            }
        }
        rest = after;
    }
    false
}

/// The base64 encoding of `-----BEGIN ` begins `LS0tLS1CRUdJTi`; decode what follows far
/// enough to read the label.
fn base64_pem_private_key(s: &str) -> bool {
    let mut rest = s;
    while let Some(i) = rest.find("LS0tLS1CRUdJTi") {
        let chunk: String = rest[i..]
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .take(160)
            .take_while(|c| b64(*c).is_some())
            .collect();
        if pem_private_key(&decode(&chunk)) {
            return true;
        }
        rest = &rest[i + 1..];
    }
    false
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

/// `AGE-SECRET-KEY-1` or `AGE-PLUGIN-<NAME>-1` followed by bech32 data (any case).
fn age_identity(s: &str) -> bool {
    let upper = s.to_ascii_uppercase();
    let data_after = |i: usize| upper[i..].chars().take_while(|c| bech32(*c)).count() >= 20;
    for (i, _) in upper.match_indices("AGE-SECRET-KEY-1") {
        if data_after(i + "AGE-SECRET-KEY-1".len()) {
            return true;
        }
    }
    for (i, _) in upper.match_indices("AGE-PLUGIN-") {
        let after = &upper[i + "AGE-PLUGIN-".len()..];
        let name = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.').count();
        if after[name..].starts_with("-1") && data_after(i + "AGE-PLUGIN-".len() + name + 2) {
            return true;
        }
    }
    false
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
