//! IMPORT-REPORT.md: everything an import did not carry over into fleet.kdl as it was, each
//! with the line of the source that holds it and why.

use std::fmt::Write as _;

/// The kinds of entry, in the report's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A placeholder marked CHANGE in fleet.kdl, refused by `fleetc check` until filled.
    Placeholder,
    /// Not in the imported fleet at all.
    NotCarried,
    /// Carried over differently on purpose: the nodes' configs differ there.
    Deliberate,
    /// Kept as a patch file rather than translated.
    Kept,
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub kind: Kind,
    /// The 1-based line of the source that holds it; 0 for none (a default the source leaves).
    pub line: usize,
    pub field: String,
    pub why: String,
}

#[derive(Debug, Default)]
pub struct Report {
    /// The source's file name.
    pub source: String,
    pub entries: Vec<Entry>,
    pub env_read: Vec<String>,
    pub env_encrypted: Vec<String>,
    /// `<env>/<cluster>`, where the secrets bundle is sealed.
    pub target: String,
    /// The tool whose config was read; empty for talhelper.
    pub tool: String,
    /// The "Secrets" section's text, when it is not talhelper's.
    pub secrets: Option<String>,
}

impl Report {
    fn push(&mut self, kind: Kind, line: usize, field: &str, why: &str) {
        let e = Entry { kind, line, field: field.to_owned(), why: why.to_owned() };
        if !self.entries.iter().any(|x| x.kind == e.kind && x.field == e.field && x.why == e.why) {
            self.entries.push(e);
        }
    }
    pub fn placeholder(&mut self, line: usize, field: &str, why: &str) {
        self.push(Kind::Placeholder, line, field, why);
    }
    pub fn not_carried(&mut self, line: usize, field: &str, why: &str) {
        self.push(Kind::NotCarried, line, field, why);
    }
    pub fn deliberate(&mut self, line: usize, field: &str, why: &str) {
        self.push(Kind::Deliberate, line, field, why);
    }
    pub fn kept(&mut self, line: usize, field: &str, why: &str) {
        self.push(Kind::Kept, line, field, why);
    }
    pub fn count(&self, kind: Kind) -> usize {
        self.entries.iter().filter(|e| e.kind == kind).count()
    }

    /// talhelper's secrets bundle and env files.
    fn talhelper_secrets(&self, out: &mut String) {
        let target = &self.target;
        let _ = writeln!(
            out,
            "The Talos secrets bundle is not read (talhelper keeps it SOPS-encrypted, talsecret.sops.yaml).\nDecrypt it and seal it for fleetc, then delete the plaintext:\n\n```sh\nsops -d talsecret.sops.yaml > secrets.yaml\nfleetc secrets import {target} talos-secrets secrets.yaml && rm secrets.yaml\n```\n"
        );
        let _ = writeln!(out, "## Env files\n");
        if self.env_read.is_empty() && self.env_encrypted.is_empty() {
            let _ = writeln!(out, "None read.\n");
        }
        for f in &self.env_read {
            let _ = writeln!(out, "- {f}: read; its values are substituted into fleet.kdl and the patches.");
        }
        for f in &self.env_encrypted {
            let _ = writeln!(out, "- {f}: SOPS-encrypted, not read.");
        }
        if !self.env_read.is_empty() || !self.env_encrypted.is_empty() {
            out.push('\n');
        }
    }

    /// The report as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# Import report: {}\n", self.source);
        let tool = if self.tool.is_empty() { "talhelper" } else { self.tool.as_str() };
        let _ = writeln!(
            out,
            "Written by `fleetc import {tool}`. fleet.kdl and patches/ hold what was carried over;\nthis file lists the rest, each with its line in {}. Run `fleetc check`: the\nplaceholders below are refused until filled, and every other diagnostic is a rule\nfleetc holds that the original broke (its R-id in `fleetc explain`).\n",
            self.source
        );
        let _ = writeln!(out, "## Secrets\n");
        if let Some(secrets) = &self.secrets {
            let _ = writeln!(out, "{secrets}");
        } else {
            self.talhelper_secrets(&mut out);
        }
        for (kind, title, none) in [
            (Kind::Placeholder, "Placeholders to fill (marked CHANGE in fleet.kdl)", "None."),
            (Kind::NotCarried, "Not carried over", "Nothing."),
            (Kind::Deliberate, "Carried over differently, on purpose", "Nothing."),
            (Kind::Kept, "Kept as patch files rather than translated", "Nothing."),
        ] {
            let _ = writeln!(out, "## {title}\n");
            let mut rows: Vec<&Entry> = self.entries.iter().filter(|e| e.kind == kind).collect();
            rows.sort_by(|a, b| a.line.cmp(&b.line).then(a.field.cmp(&b.field)));
            if rows.is_empty() {
                let _ = writeln!(out, "{none}\n");
                continue;
            }
            let _ = writeln!(out, "| line | field | why |\n|---|---|---|");
            for e in rows {
                let at = if e.line == 0 { "—".to_owned() } else { e.line.to_string() };
                let _ = writeln!(out, "| {at} | `{}` | {} |", e.field.replace('|', "\\|"), e.why.replace('|', "\\|"));
            }
            out.push('\n');
        }
        out
    }
}
