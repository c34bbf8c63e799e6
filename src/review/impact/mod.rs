//! Impact: what a change of the fleet does to running clusters, the part of a review that no
//! line diff shows. [`analyze`] compares two resolved fleets (the base and the new one) and
//! the artifact diff between their builds, runs every rule of [`rules::RULES`] over them, and
//! returns a list of [`Impact`]s, the most severe first.
//!
//! The comparison goes through [`facts`]: each fleet is flattened into named values per
//! entity (environment, service, cluster, pool, app), entities renamed with `was=` are
//! matched to their former names, and the differences become [`facts::FactChange`]s. A rule
//! claims the changes it explains; every change that no rule claims, and every artifact file
//! that changed without a fleet change that explains it, is reported as an "unknown impact"
//! rather than guessed at. A new field of the model that the facts do not know yet shows up
//! the same way (see [`facts::unmodelled`]).

pub mod facts;
pub mod rules;

use std::fmt;

use crate::model::Fleet;
use crate::review::files::FileDiff;
use facts::{FactChange, Renames};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Danger,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Danger => "danger",
        }
    }
    /// As printed in text: `DANGER` stands out.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Danger => "DANGER",
        }
    }
}

/// One consequence of the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Impact {
    pub severity: Severity,
    /// The rule that found it (a name from [`rules::RULES`], or `unknown`).
    pub rule: &'static str,
    /// The domain ids it rests on (`F4`, `R14, R29`), empty when none.
    pub cites: &'static str,
    /// Where: `fleet`, an environment (`staging`) or a cluster (`staging/main`), or an
    /// artifact path when only the output tells.
    pub subject: String,
    /// What changed, in fleet.kdl's words.
    pub change: String,
    /// What it does to running clusters.
    pub effect: String,
}

impl Impact {
    /// `staging/main: worker pool `system` count 2 → 3 → nodes added: … (R29)`
    pub fn line(&self) -> String {
        let cites = if self.cites.is_empty() { String::new() } else { format!(" ({})", self.cites) };
        format!("{}: {} → {}{cites}", self.subject, self.change, self.effect)
    }
}

impl fmt::Display for Impact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.severity.label(), self.line())
    }
}

/// What the rules read.
pub struct Ctx<'a> {
    /// The base fleet; `None` when the build is compared with an output directory, which
    /// holds no model (then only the artifact rules can tell anything).
    pub old: Option<&'a Fleet>,
    pub new: &'a Fleet,
    /// Differences between the two fleets, renamed entities matched (empty without `old`).
    pub changes: Vec<FactChange>,
    pub renames: Renames,
    pub files: &'a [FileDiff],
}

/// What one rule found: impacts, and the fact changes and files they explain.
pub struct Outcome {
    rule: &'static rules::Rule,
    pub impacts: Vec<Impact>,
    /// Indices into [`Ctx::changes`].
    pub claimed: Vec<usize>,
    /// Artifact paths.
    pub claimed_files: Vec<String>,
    /// The `was=` renames ([`Ctx::renames`]) are explained.
    pub claimed_renames: bool,
}

impl Outcome {
    fn new(rule: &'static rules::Rule) -> Self {
        Outcome { rule, impacts: Vec::new(), claimed: Vec::new(), claimed_files: Vec::new(), claimed_renames: false }
    }
    /// Adds an impact of this rule.
    pub fn push(
        &mut self,
        severity: Severity,
        subject: impl Into<String>,
        change: impl Into<String>,
        effect: impl Into<String>,
    ) {
        self.impacts.push(Impact {
            severity,
            rule: self.rule.name,
            cites: self.rule.cites,
            subject: subject.into(),
            change: change.into(),
            effect: effect.into(),
        });
    }
    pub fn claim(&mut self, index: usize) {
        self.claimed.push(index);
    }
    pub fn claim_renames(&mut self) {
        self.claimed_renames = true;
    }
    pub fn claim_file(&mut self, path: &str) {
        self.claimed_files.push(path.to_owned());
    }
}

/// The impacts of going from `old` (or an output directory, when `None`) to `new`, whose
/// builds differ by `files`. Sorted: danger first, then warnings, then info; within a
/// severity, in rule order.
pub fn analyze(old: Option<&Fleet>, new: &Fleet, files: &[FileDiff]) -> Vec<Impact> {
    analyze_with(rules::RULES, old, new, files)
}

/// [`analyze`] with a chosen rule table (tests remove a rule to prove it is needed).
pub fn analyze_with(
    table: &'static [rules::Rule],
    old: Option<&Fleet>,
    new: &Fleet,
    files: &[FileDiff],
) -> Vec<Impact> {
    let (changes, renames) = match old {
        Some(o) => facts::compare(o, new),
        None => (Vec::new(), Renames::default()),
    };
    let ctx = Ctx { old, new, changes, renames, files };
    let mut impacts = Vec::new();
    let mut claimed = vec![false; ctx.changes.len()];
    let mut claimed_files: Vec<String> = Vec::new();
    let mut renames_claimed = false;
    for rule in table {
        let mut out = Outcome::new(rule);
        (rule.check)(&ctx, &mut out);
        impacts.extend(out.impacts);
        for i in out.claimed {
            if let Some(c) = claimed.get_mut(i) {
                *c = true;
            }
        }
        claimed_files.extend(out.claimed_files);
        renames_claimed |= out.claimed_renames;
    }
    impacts.extend(rules::unknown::unknown(&ctx, &claimed, &claimed_files, renames_claimed));
    impacts.sort_by_key(|i| std::cmp::Reverse(i.severity));
    impacts
}
