//! The one recognizer of private-key material (F11, R14): what fleetc refuses wherever a user
//! can write text that is committed to git or copied into out/: every string and comment of
//! fleet.kdl (`check::key_material`), every string of a Talos patch (`check::patches`) and
//! every string of a vendored manifest (`upstream::manifests`, for `check::talos`). A key
//! belongs in a sealed input (`fleetc secrets import`).
//!
//! Shapes recognized: a PEM private-key block (`-----BEGIN … PRIVATE KEY-----`, PKCS#1/#8, EC,
//! DSA, OpenSSH, encrypted, and PGP's `PRIVATE KEY BLOCK`; its `-----END …-----` line alone
//! too), the same block base64-encoded (as a Kubernetes Secret's `data` holds it), an age
//! identity (`AGE-SECRET-KEY-1…`, and a plugin identity `AGE-PLUGIN-…-1…`), and a PuTTY
//! private-key file.

use std::ops::Range;

/// A shape of private-key material.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A PEM private-key block.
    Pem,
    /// A PEM private-key block, base64-encoded.
    Base64Pem,
    /// An age identity (or plugin identity).
    Age,
    /// A PuTTY private-key file.
    Putty,
}

impl Key {
    /// The shape in words (never the key itself).
    pub fn describe(self) -> &'static str {
        match self {
            Key::Pem => "a PEM private-key block (`-----BEGIN … PRIVATE KEY-----`)",
            Key::Base64Pem => "a base64-encoded PEM private-key block (`LS0tLS1CRUdJTi…`)",
            Key::Age => "an age identity (`AGE-SECRET-KEY-1…`)",
            Key::Putty => "a PuTTY private-key file (`PuTTY-User-Key-File-…`)",
        }
    }
}

/// The first private-key material of a text: its shape, and the byte range of the key's
/// marker in it (the PEM header, the identity's prefix), where a diagnostic points without
/// echoing the key.
pub fn find(s: &str) -> Option<(Key, Range<usize>)> {
    if let Some(r) = pem_private_key(s) {
        return Some((Key::Pem, r));
    }
    if let Some(r) = base64_pem_private_key(s) {
        return Some((Key::Base64Pem, r));
    }
    if let Some(r) = age_identity(s) {
        return Some((Key::Age, r));
    }
    if let Some(i) = s.find("PuTTY-User-Key-File-") {
        return Some((Key::Putty, i..i + "PuTTY-User-Key-File-".len()));
    }
    None
}

/// `-----BEGIN <label>-----` where the label ends in `PRIVATE KEY` or `PRIVATE KEY BLOCK`:
/// the range of that header line; without one, the range of the block's `-----END
/// <label>-----` line (a key pasted without its header).
fn pem_private_key(s: &str) -> Option<Range<usize>> {
    pem_line(s, "-----BEGIN ").or_else(|| pem_line(s, "-----END "))
}

/// The first `<boundary><label>-----` of `s` whose label names a private key.
fn pem_line(s: &str, boundary: &str) -> Option<Range<usize>> {
    let mut from = 0;
    while let Some(i) = s[from..].find(boundary).map(|i| from + i) {
        let label_at = i + boundary.len();
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
fn base64_pem_private_key(s: &str) -> Option<Range<usize>> {
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
fn age_identity(s: &str) -> Option<Range<usize>> {
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn describe(s: &str) -> Option<&'static str> {
        find(s).map(|(key, _)| key.describe())
    }

    // Test keys are built at run time so that no key-shaped string sits in the source.
    pub(crate) fn begin(label: &str) -> String {
        format!("{0}BEGIN {label}{0}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n{0}END {label}{0}\n", "-".repeat(5))
    }

    /// An age identity (test data, not a key of anyone's).
    pub(crate) fn age() -> String {
        format!("AGE-SECRET-KEY-1{}", "QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS")
    }

    /// The base64 of a PEM private-key block's first line and a half, as a Secret's `data`
    /// holds it.
    pub(crate) const BASE64_PEM: &str = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURB";

    /// One key of each shape a user most likely pastes, with its shape: the callers' tests
    /// (fleet.kdl comments, Talos patches, vendored manifests) refuse each.
    pub(crate) fn samples() -> [(Key, String); 3] {
        [(Key::Pem, begin("EC PRIVATE KEY")), (Key::Base64Pem, BASE64_PEM.to_owned()), (Key::Age, age())]
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
        let age = age();
        assert!(describe(&age).is_some());
        assert!(describe(&age.to_lowercase()).is_some());
        assert!(describe(&format!("AGE-PLUGIN-YUBIKEY-1{}", "QYQSZQGPQYQSZQGPQYQSZQGPQYQ")).is_some());
        assert_eq!(decode(BASE64_PEM).lines().next(), Some(format!("{0}BEGIN PRIVATE KEY{0}", "-".repeat(5)).as_str()));
        for (key, text) in samples() {
            assert_eq!(find(&text).map(|(k, _)| k), Some(key), "{text}");
        }
        assert!(describe("PuTTY-User-Key-File-3: ssh-ed25519\n").is_some());
        // The header is the marker; a key pasted without it is found by its footer.
        let pem = begin("RSA PRIVATE KEY");
        assert_eq!(find(&pem).map(|(k, r)| (k, r.start)), Some((Key::Pem, 0)));
        let footer = &pem[pem.find("MIIE").unwrap()..];
        let (key, at) = find(footer).unwrap();
        assert_eq!((key, &footer[at]), (Key::Pem, format!("{0}END RSA PRIVATE KEY{0}", "-".repeat(5)).as_str()));
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
