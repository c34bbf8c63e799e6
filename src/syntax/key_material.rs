//! Key material pasted into fleet.kdl: a PEM private key or an age identity. fleet.kdl is
//! committed and compiled into out/, which is committed too; a secret belongs in a sealed
//! input (`fleetc secrets import`), never in the text. One linear scan of the raw text, so a
//! key in a comment, a string of any kind or a broken file is found alike.

use crate::diag::{Diagnostic, Diagnostics, FileId, Span, codes};

/// What marks key material, and what it is called in the message.
const MARKS: &[(&str, &str)] = &[("-----BEGIN ", "a PEM private key"), ("AGE-SECRET-KEY-1", "an age identity")];

/// Every piece of key material in `text`, each at its first line.
pub fn scan(file: FileId, text: &str) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        for (mark, what) in MARKS {
            let Some(at) = line.find(mark) else { continue };
            // A PEM block counts only when it is a private key (certificates are public).
            if *mark == "-----BEGIN " && !line[at..].contains("PRIVATE KEY-----") {
                continue;
            }
            let len = line[at..].trim_end().len().min(64);
            diags.push(
                Diagnostic::new(&codes::KEY_MATERIAL, format!("fleet.kdl holds {what}"))
                    .at(Span::new(file, offset + at, len))
                    .label("key material"),
            );
        }
        offset += line.len();
    }
    diags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_keys_and_identities_are_found_certificates_are_not() {
        let text = "a \"x\"\n// -----BEGIN EC PRIVATE KEY-----\nb \"-----BEGIN CERTIFICATE-----\"\nc \"AGE-SECRET-KEY-1QQQ\"\n";
        let d = scan(FileId(0), text);
        let spans: Vec<usize> = d.iter().map(|d| d.span.unwrap().start).collect();
        assert_eq!(spans, [text.find("-----BEGIN EC").unwrap(), text.find("AGE-SECRET").unwrap()]);
        assert!(
            scan(FileId(0), "recipients \"age1wh7qxmt0740e28qvq0jjz5ylyxfctxtm4skkffn6kers9dln89eswx42s2\"").is_empty()
        );
    }
}
