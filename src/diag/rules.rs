//! The rules (R1–R29) and upstream facts (F1–F13) that diagnostics cite, read from
//! `docs/rules.md` (the one place they are written), so that `fleetc explain R29` prints the
//! same words the docs hold. A test fails when a cited id has no entry.

const RULES_MD: &str = include_str!("../../docs/rules.md");

/// One rule or fact: its id, what it says, and (for rules) why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    pub text: &'static str,
    pub why: Option<&'static str>,
}

/// Every rule and fact, in the order of docs/rules.md.
pub fn all() -> Vec<Rule> {
    RULES_MD
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.strip_prefix('|')?.strip_suffix('|')?.split(" | ").map(str::trim).collect();
            let id = *cells.first()?;
            let is_id = id.len() >= 2
                && (id.starts_with('R') || id.starts_with('F'))
                && id[1..].chars().all(|c| c.is_ascii_digit());
            is_id.then(|| Rule { id, text: cells.get(1).copied().unwrap_or_default(), why: cells.get(2).copied() })
        })
        .collect()
}

/// The rule or fact `id` (`R29`, `f1`: case-insensitive).
pub fn lookup(id: &str) -> Option<Rule> {
    all().into_iter().find(|r| r.id.eq_ignore_ascii_case(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_and_fact_is_found_and_every_cited_id_exists() {
        let ids: Vec<&str> = all().iter().map(|r| r.id).collect();
        for n in 1..=29 {
            assert!(ids.contains(&format!("R{n}").as_str()), "R{n}");
        }
        for n in 1..=13 {
            assert!(ids.contains(&format!("F{n}").as_str()), "F{n}");
        }
        for c in super::super::codes::ALL {
            if let Some(r) = c.rule {
                assert!(lookup(r).is_some(), "{} cites {r}", c.name);
            }
        }
        assert!(lookup("r29").unwrap().why.unwrap().contains("quorum"));
    }
}
