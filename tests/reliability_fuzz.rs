//! Issue 19, item 5: the audit's mutation campaign as a bounded, deterministic test.
//! `FUZZ_CASES` mutated fleets (default 1,000 in the CI run, about 20 s of CPU in a debug
//! build; the recorded campaign is `FUZZ_CASES=10000`, docs/reliability.md; `FUZZ_SEED`
//! picks another campaign), each
//! compiled in memory and every diagnostic rendered three ways (for people, JSON, short:
//! the panic of the audit lived in rendering). Asserted for every input: no panic, every
//! diagnostic has a place inside the text, a compilation with errors has no artifacts. The
//! seeds are the reference fleet and every golden fleet; the mutations are the audit's
//! operators (bytes, tokens, lines, values, numbers, nesting, long lines, crossover,
//! truncation, unicode). The figures go to docs/reliability.md.

use crate::common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use fleetc::compile::{MapLoader, compile};
use fleetc::diag::render::{Style, json, short, text as render_text};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

const TOKENS: &[&str] = &[
    "\"",
    "{",
    "}",
    ";",
    "=",
    "#",
    "/-",
    "//",
    "/*",
    "\\",
    "${x}",
    "%{ if }",
    ": ",
    "- ",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\u{202e}",
    "\u{2066}",
    "\u{200b}",
    "\u{feff}",
    "\u{2028}",
    "\u{85}",
    "\u{10ffff}",
    "\0",
    "#true",
    "#null",
    "#inf",
    "#nan",
    "0x1F",
    "1e309",
    "18446744073709551616",
    "4294967296",
    "-1",
    "0",
    "2147483649",
    "10000001",
    "count=65536",
    "count=0",
    "r#\"raw\"#",
    "\"\"\"\nmulti\n\"\"\"",
    "(type)",
    "../../etc/passwd",
    "/abs",
    "-----BEGIN EC PRIVATE KEY-----",
    "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ",
    "on",
    "yes",
    "~",
    "null",
    "1:30",
    "v1.13.9",
    "v999.999.999",
    "10.10.0.0/22",
    "0.0.0.0/0",
    "999.1.1.1",
    "12GiB",
    "99999999999999999999GiB",
    "environment from=\"staging\"",
    "cluster \"x\" {",
    "node",
    "-",
];

fn mutate(rng: &mut Rng, text: &str, other: &str) -> String {
    let mut b: Vec<u8> = text.as_bytes().to_vec();
    let len = b.len().max(1);
    // The heavy shapes (deep nesting, long lines, many lines) are one case in twenty: each
    // costs what a hundred small ones do.
    let op = if rng.below(20) == 0 {
        8 + rng.below(2) + 5 * rng.below(2)
    } else {
        [0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12][rng.below(11)]
    };
    match op {
        0 => {
            let i = rng.below(len).min(b.len().saturating_sub(1));
            if !b.is_empty() {
                b[i] ^= 1 << rng.below(7);
            }
        }
        1 => {
            let i = rng.below(len).min(b.len());
            let n = rng.below(64).min(b.len() - i);
            b.drain(i..i + n);
        }
        2 => {
            let i = rng.below(len).min(b.len());
            let n = rng.below(200).min(b.len() - i);
            let chunk = b[i..i + n].to_vec();
            b.splice(i..i, chunk);
        }
        3 | 4 => {
            let i = rng.below(len).min(b.len());
            let t = rng.pick(TOKENS).as_bytes().to_vec();
            b.splice(i..i, t);
        }
        5 => {
            // Replace a quoted value.
            let s = String::from_utf8_lossy(&b).into_owned();
            let quotes: Vec<usize> = s.match_indices('"').map(|(i, _)| i).collect();
            if quotes.len() >= 2 {
                let k = rng.below(quotes.len() / 2) * 2;
                let (a, z) = (quotes[k] + 1, quotes[k + 1]);
                let mut s2 = s.clone();
                let t: &str = rng.pick::<&str>(TOKENS);
                s2.replace_range(a..z, t);
                b = s2.into_bytes();
            }
        }
        6 => {
            let mut lines: Vec<&str> = text.lines().collect();
            if lines.len() > 2 {
                let (x, y) = (rng.below(lines.len()), rng.below(lines.len()));
                lines.swap(x, y);
            }
            b = lines.join("\n").into_bytes();
        }
        7 => {
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let x = rng.below(lines.len());
                if rng.below(2) == 0 {
                    lines.remove(x);
                } else {
                    let l = lines[x];
                    lines.insert(x, l);
                }
            }
            b = lines.join("\n").into_bytes();
        }
        8 => {
            // Deep nesting: mostly shallow, sometimes past the syntax limit.
            let depth = *rng.pick(&[8, 63, 64, 65, 200, 2000]);
            let i = rng.below(len).min(b.len());
            let nest = format!("{}{}", "n {".repeat(depth), "}".repeat(depth));
            b.splice(i..i, nest.into_bytes());
        }
        9 => {
            // A long line: a label or comment past column 65,535 (miette's width limit).
            let n = *rng.pick(&[1000, 65_536, 70_000]);
            let i = text.find("cluster \"").map_or(0, |p| p + 9);
            b.splice(i..i, "x".repeat(n).into_bytes());
        }
        10 => {
            let i = rng.below(len).min(b.len());
            b.truncate(i);
        }
        11 => {
            // Crossover with another seed.
            let i = rng.below(len).min(b.len());
            let o = other.as_bytes();
            let j = rng.below(o.len().max(1)).min(o.len());
            b.truncate(i);
            b.extend_from_slice(&o[j..]);
        }
        12 => {
            // A number property made huge or odd.
            let s = String::from_utf8_lossy(&b).into_owned();
            let spots: Vec<usize> = s.match_indices("count=").map(|(i, _)| i + 6).collect();
            if !spots.is_empty() {
                let at = *rng.pick(&spots);
                let end = s[at..].find(|c: char| !c.is_ascii_digit()).map_or(s.len(), |e| at + e);
                let mut s2 = s.clone();
                let n: &str = rng.pick::<&str>(&["2147483649", "10000001", "65536", "0", "18446744073709551616"]);
                s2.replace_range(at..end, n);
                b = s2.into_bytes();
            }
        }
        _ => {
            // Many nodes or diagnostics: a line repeated.
            let lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let l = lines[rng.below(lines.len())];
                let n = *rng.pick(&[10, 100, 1000]);
                let at = text.find('\n').unwrap_or(0);
                let rep = format!("\n{l}").repeat(n);
                b.splice(at..at, rep.into_bytes());
            }
        }
    }
    // compile() takes text: invalid UTF-8 is refused before it (run.rs), so mutate on text.
    String::from_utf8_lossy(&b).into_owned()
}

fn seeds() -> Vec<String> {
    let root = common::root();
    let mut v = vec![std::fs::read_to_string(root.join("fleet.kdl")).unwrap()];
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("golden")).unwrap().flatten().map(|e| e.path()).collect();
    dirs.sort();
    for d in dirs {
        if let Ok(t) = std::fs::read_to_string(d.join("fleet.kdl"))
            && t.len() < 64 * 1024
        {
            v.push(t);
        }
    }
    v
}

fn loader() -> MapLoader {
    let mut l = MapLoader::default();
    for e in std::fs::read_dir(common::root().join("vendor")).unwrap().flatten() {
        l.files
            .insert(format!("vendor/{}", e.file_name().to_string_lossy()), std::fs::read_to_string(e.path()).unwrap());
    }
    l
}

#[test]
fn mutated_fleets_never_panic_and_every_diagnostic_has_a_place() {
    let cases: usize = std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000);
    let seed: u64 = std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(19);
    let seeds = seeds();
    let loader = loader();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let (mut panics, mut unplaced, mut wrote, mut diagnostics, mut accepted) = (0, 0, 0, 0usize, 0);
    let mut first_failures = Vec::new();
    for case in 0..cases {
        // 40 % the reference fleet, else any seed; one to four mutations.
        let base = if rng.below(10) < 4 { &seeds[0] } else { rng.pick(&seeds) };
        let other = rng.pick(&seeds).clone();
        let mut text = base.clone();
        for _ in 0..1 + rng.below(4) {
            text = mutate(&mut rng, &text, &other);
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let c = compile("fleet.kdl", &text, &loader);
            let mut unplaced = 0;
            for d in c.diags.iter() {
                match d.span {
                    Some(s) if s.end() <= text.len().max(1) => {}
                    _ => unplaced += 1,
                }
            }
            let _ = render_text(&c.diags, &c.sources, Style::PLAIN);
            let _ = json(&c.diags, &c.sources);
            let _ = short(&c.diags, &c.sources);
            (unplaced, c.diags.has_errors() && c.artifacts.is_some(), c.diags.iter().count(), !c.diags.has_errors())
        }));
        match outcome {
            Ok((u, w, n, ok)) => {
                unplaced += u;
                wrote += usize::from(w);
                diagnostics += n;
                accepted += usize::from(ok);
                if (u > 0 || w) && first_failures.len() < 3 {
                    first_failures.push(format!("case {case}: {u} unplaced, artifacts with errors {w}"));
                }
            }
            Err(_) => {
                panics += 1;
                if first_failures.len() < 3 {
                    first_failures.push(format!("case {case} panicked (FUZZ_SEED={seed}, {} bytes)", text.len()));
                }
            }
        }
    }
    eprintln!(
        "fuzz: {cases} inputs (seed {seed}, {} seed fleets), {panics} panics, {unplaced} diagnostics without a place, {wrote} artifact sets despite errors, {accepted} accepted, {diagnostics} diagnostics rendered",
        seeds.len()
    );
    assert!(panics == 0 && unplaced == 0 && wrote == 0, "{}", first_failures.join("\n"));
}
