//! Kubernetes' own grammar for the keys and values fleetc hands to it (node labels and
//! taints), so that a value the API server would refuse is refused in fleet.kdl, at its place.
//!
//! Transcribed from k8s.io/apimachinery v0.36.3, `pkg/api/validate/content/kube.go`
//! (`IsLabelKey` = `IsQualifiedName`: an optional DNS-1123 subdomain prefix of at most 253
//! characters and `/`, then a name of at most 63 characters matching
//! `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`; `IsLabelValue`: empty, or at most 63 characters
//! of the same pattern) and `pkg/api/validate/content/dns.go` (`IsDNS1123Subdomain`: at most 253
//! characters, `[a-z0-9]([-a-z0-9]*[a-z0-9])?` labels joined by `.`). Taints are validated by
//! k8s.io/kubernetes v1.36.3 `pkg/apis/core/validation/validation.go` `validateNodeTaints`: the
//! key is a qualified name, the value a label value, and taints are unique by (key, effect).

/// The longest label value, and the longest name part of a qualified name.
pub const NAME_MAX: usize = 63;
/// The longest DNS-1123 subdomain (a qualified name's prefix).
pub const SUBDOMAIN_MAX: usize = 253;

fn is_alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn name_part_ok(s: &str) -> bool {
    let first = s.chars().next();
    let last = s.chars().next_back();
    first.is_some_and(is_alnum)
        && last.is_some_and(is_alnum)
        && s.chars().all(|c| is_alnum(c) || matches!(c, '-' | '_' | '.'))
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`, at most 253 characters.
pub fn subdomain_problem(s: &str) -> Option<String> {
    if s.len() > SUBDOMAIN_MAX {
        return Some(format!("is {} characters long, more than {SUBDOMAIN_MAX}", s.len()));
    }
    let label_ok = |l: &str| {
        let lower_alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        l.chars().next().is_some_and(lower_alnum)
            && l.chars().next_back().is_some_and(lower_alnum)
            && l.chars().all(|c| lower_alnum(c) || c == '-')
    };
    if s.split('.').all(label_ok) {
        None
    } else {
        Some("is not a DNS subdomain (lowercase letters, digits, `-` and `.`, each part starting and ending with a letter or digit)".to_owned())
    }
}

/// Why `key` is not a Kubernetes qualified name (a label, taint or annotation key), or `None`.
pub fn qualified_name_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.split('/').collect::<Vec<_>>().as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => return Some("it has more than one `/` (a key is `[prefix/]name`)".to_owned()),
    };
    if let Some(p) = prefix {
        if p.is_empty() {
            return Some("the prefix before `/` is empty".to_owned());
        }
        if let Some(why) = subdomain_problem(p) {
            return Some(format!("the prefix `{p}` {why}"));
        }
    }
    if name.is_empty() {
        return Some("the name after the prefix is empty".to_owned());
    }
    if name.len() > NAME_MAX {
        return Some(format!("the name `{name}` is {} characters long, more than {NAME_MAX}", name.len()));
    }
    if !name_part_ok(name) {
        return Some(format!(
            "the name `{name}` may hold only letters, digits, `-`, `_` and `.`, and must start and end with a letter or digit"
        ));
    }
    None
}

/// Why `value` is not a Kubernetes label value (or taint value), or `None`.
pub fn label_value_problem(value: &str) -> Option<String> {
    if value.len() > NAME_MAX {
        return Some(format!("it is {} characters long, more than {NAME_MAX}", value.len()));
    }
    if !value.is_empty() && !name_part_ok(value) {
        return Some(
            "it may hold only letters, digits, `-`, `_` and `.`, and must start and end with a letter or digit (or be empty)"
                .to_owned(),
        );
    }
    None
}

/// A suggestion that Kubernetes would accept: spaces and other characters become `-`.
pub fn suggest(s: &str) -> String {
    let mapped: String =
        s.chars().map(|c| if is_alnum(c) || matches!(c, '-' | '_' | '.' | '/') { c } else { '-' }).collect();
    mapped.trim_matches(|c: char| !is_alnum(c)).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Cases from k8s.io/apimachinery v0.36.3 `pkg/util/validation/validation_test.go`
    // (`TestIsQualifiedName`, `TestIsValidLabelValue`).
    #[test]
    fn qualified_names_as_apimachinery_reads_them() {
        for ok in [
            "simple",
            "now-with-dashes",
            "1-starts-with-num",
            "1234",
            "simple/simple",
            "now-with-dashes/simple",
            "now-with-dashes/now-with-dashes",
            "now.with.dots/simple",
            "now-with.dashes-and.dots/simple",
            "1-num.2-num/3-num",
            "1234/5678",
            "1.2.3.4/5678",
            "Uppercase_Is_OK_123",
            "example.com/Uppercase_Is_OK_123",
            "requests.storage-foo",
            "node-role.kubernetes.io/worker",
        ] {
            assert_eq!(qualified_name_problem(ok), None, "{ok}");
        }
        let long_name = "a".repeat(64);
        let long_prefix = format!("{}/b", "a".repeat(254));
        for bad in [
            "nospecialchars%^=@",
            "cantendwithadash-",
            "-cantstartwithadash-",
            "only/one/slash",
            "Example.com/abc",
            "example_com/abc",
            "example.com/",
            "/simple",
            "my label",
            long_name.as_str(),
            long_prefix.as_str(),
        ] {
            assert!(qualified_name_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn label_values_as_apimachinery_reads_them() {
        for ok in ["simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234", "", "A.B_c-9"] {
            assert_eq!(label_value_problem(ok), None, "{ok}");
        }
        let long = "a".repeat(64);
        for bad in [
            "nospecialchars%^=@",
            "Tama-nui-te-rā.is.Māori.sun",
            "\\backslashes\\are\\bad",
            "-starts",
            "yes please",
            long.as_str(),
        ] {
            assert!(label_value_problem(bad).is_some(), "{bad}");
        }
        assert_eq!(suggest("yes please"), "yes-please");
    }
}
