//! When the OpenTofu talos provider replaces `talos_machine_secrets`, the cluster's identity
//! (R14): the rule its plan modifier applies to `talos_version`, encoded once so that the
//! roots' value ([`crate::model::Cluster::secrets_talos_version`]), `fleetc check --base`
//! (`fleet::upgrade::identity-replaced`) and `fleetc diff` (the rule `secrets-version`) agree
//! with the provider.
//!
//! siderolabs/terraform-provider-talos v0.11.0 `pkg/talos/talos_machine_secrets_resource.go`
//! l.525-543, `talosMachineFeaturesVersionPlanModifier.PlanModifyString`: when the
//! configuration's value is known and the plan has a value, both the planned and the stored
//! value get one leading `v` (`"v" + strings.TrimPrefix(value, "v")`) and the resource
//! `RequiresReplace` when `semver.Compare(plan, state) < 0` (`golang.org/x/mod/semver`,
//! imported at l.27). Nothing else about the attribute replaces the resource: `Update`
//! (l.386-397) only records the new value, and after an import (l.600-614, the state's value
//! is `v1.3`, or `v1.2` for a bundle with an AES-CBC secret) a higher value is an update in
//! place. `golang.org/x/mod/semver` (v0.35.0, the provider's go.mod; `semver/semver.go`
//! `parse`, `Compare`, `comparePrerelease`) reads `vMAJOR[.MINOR[.PATCH[-PRERELEASE][+BUILD]]]`
//! (`v1.13` is `v1.13.0`), orders an invalid string below every valid one, and two invalid
//! strings as equal.

use std::cmp::Ordering;

/// Whether the provider replaces `talos_machine_secrets` when the configuration says
/// `planned` and the state holds `stored` (both as written, with or without `v`).
pub fn requires_replace(planned: &str, stored: &str) -> bool {
    compare(&provider_form(planned), &provider_form(stored)) == Ordering::Less
}

/// `"v" + strings.TrimPrefix(value, "v")`.
fn provider_form(value: &str) -> String {
    format!("v{}", value.strip_prefix('v').unwrap_or(value))
}

/// A version as `golang.org/x/mod/semver` parses it: the three numbers (shorthands filled
/// with `0`) and the pre-release identifiers; the build suffix is ignored.
struct Parsed<'a> {
    numbers: [&'a str; 3],
    pre: Option<&'a str>,
}

fn is_num(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && (!s.bytes().all(|b| b.is_ascii_digit()) || s == "0" || !s.starts_with('0'))
}

fn parse(v: &str) -> Option<Parsed<'_>> {
    let rest = v.strip_prefix('v')?;
    let (core, build) = match rest.split_once('+') {
        Some((c, b)) => (c, Some(b)),
        None => (rest, None),
    };
    let (core, pre) = match core.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (core, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() > 3 || !parts.iter().all(|p| is_num(p)) {
        return None;
    }
    // A pre-release or build suffix only follows the full `vMAJOR.MINOR.PATCH`.
    if parts.len() < 3 && (pre.is_some() || build.is_some()) {
        return None;
    }
    if pre.is_some_and(|p| !p.split('.').all(is_ident)) {
        return None;
    }
    if build.is_some_and(|b| {
        !b.split('.').all(|i| !i.is_empty() && i.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'))
    }) {
        return None;
    }
    let n = |i: usize| parts.get(i).copied().unwrap_or("0");
    Some(Parsed { numbers: [n(0), n(1), n(2)], pre })
}

/// Decimal strings without leading zeros: the longer is the larger.
fn compare_num(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn compare_pre(a: Option<&str>, b: Option<&str>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(a), Some(b)) => {
            let (mut x, mut y) = (a.split('.'), b.split('.'));
            loop {
                match (x.next(), y.next()) {
                    (None, None) => return Ordering::Equal,
                    (None, Some(_)) => return Ordering::Less,
                    (Some(_), None) => return Ordering::Greater,
                    (Some(p), Some(q)) => {
                        let (pn, qn) = (p.bytes().all(|c| c.is_ascii_digit()), q.bytes().all(|c| c.is_ascii_digit()));
                        let o = match (pn, qn) {
                            (true, true) => compare_num(p, q),
                            (true, false) => Ordering::Less,
                            (false, true) => Ordering::Greater,
                            (false, false) => p.cmp(q),
                        };
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                }
            }
        }
    }
}

/// `semver.Compare(v, w)`.
fn compare(v: &str, w: &str) -> Ordering {
    match (parse(v), parse(w)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => a
            .numbers
            .iter()
            .zip(b.numbers.iter())
            .map(|(x, y)| compare_num(x, y))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or_else(|| compare_pre(a.pre, b.pre)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The provider's rule, case by case (v0.11.0 `talos_machine_secrets_resource.go`
    /// l.537-542): the value hidden-fleets-3 D1 measured replacing the identity, and the
    /// moves that do not.
    #[test]
    fn the_provider_replaces_the_secrets_only_when_the_value_sorts_lower() {
        // D1: fleetc wrote `v1.13.9`, then `v1.13` for a 1.14 node: `v1.13` is `v1.13.0`.
        assert!(requires_replace("v1.13", "v1.13.9"));
        // A Talos downgrade.
        assert!(requires_replace("v1.12.6", "v1.13.9"));
        assert!(requires_replace("v1.13.8", "v1.13.9"));
        // Upgrades, equal values and the shorthand of the same release are not.
        assert!(!requires_replace("v1.14.1", "v1.13.9"));
        assert!(!requires_replace("v1.14.1", "v1.13"));
        assert!(!requires_replace("v1.13.9", "v1.13.9"));
        assert!(!requires_replace("v1.13.0", "v1.13"));
        // The leading `v` is optional on both sides (`strings.TrimPrefix` then `"v" +`).
        assert!(!requires_replace("1.13.9", "v1.13.9"));
        assert!(requires_replace("1.13", "1.13.9"));
        // After an import the state holds `v1.3` (or `v1.2`): any Talos fleetc pins is above.
        assert!(!requires_replace("v1.12.6", "v1.3"));
        assert!(!requires_replace("v1.12.6", "v1.2"));
        // Numbers compare as numbers, not as text.
        assert!(!requires_replace("v1.10.0", "v1.9.5"));
        assert!(requires_replace("v1.9.5", "v1.10.0"));
    }

    #[test]
    fn pre_releases_and_invalid_strings_follow_x_mod_semver() {
        // A pre-release sorts below its release; identifiers numerically, then lexically.
        assert!(requires_replace("v1.15.0-beta.1", "v1.15.0"));
        assert!(!requires_replace("v1.15.0", "v1.15.0-beta.1"));
        assert!(requires_replace("v1.15.0-alpha.2", "v1.15.0-beta.0"));
        assert!(requires_replace("v1.15.0-beta.2", "v1.15.0-beta.10"));
        assert!(requires_replace("v1.15.0-1", "v1.15.0-alpha"));
        assert!(requires_replace("v1.15.0-beta", "v1.15.0-beta.1"));
        // The build suffix is ignored.
        assert!(!requires_replace("v1.13.9+abc", "v1.13.9"));
        assert!(!requires_replace("v1.13.9", "v1.13.9+abc"));
        // An invalid string is below every valid one; two invalid strings are equal.
        assert!(requires_replace("latest", "v1.3"));
        assert!(!requires_replace("v1.3", "latest"));
        assert!(!requires_replace("latest", "nightly"));
        assert!(requires_replace("v01.13.9", "v1.13.9"));
        assert!(requires_replace("v1.13-beta.1", "v1.0.0"));
    }
}
