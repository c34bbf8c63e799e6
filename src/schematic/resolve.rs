//! What go-yaml v4 reads an untagged plain scalar as.
//!
//! The factory's YAML library decides twice from the same table: when decoding
//! (a plain `10` is an integer, `yes` is a string) and when encoding (a string
//! that would read back as something else is written in double quotes). This
//! module reproduces that table, `resolve` in go-yaml's `resolver.go`, plus the
//! two extra quoting rules of its representer (`isBase60Float`, `isOldBool`).
//!
//! Where go-yaml's answer depends on details fleetc does not reproduce exactly
//! (numbers that overflow, Go's float syntax with underscores) the answer is
//! [`Uncertain`] and callers refuse instead of guessing.

/// The type go-yaml resolves an untagged plain scalar to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Plain {
    /// `""`, `~`, `null`, `Null`, `NULL`.
    Null,
    /// `true`/`false` in three spellings each (YAML 1.2 only: `yes` is a string).
    Bool(bool),
    /// Fits Go's `int` (64-bit).
    Int(i64),
    /// Above `i64::MAX`, fits `uint64`.
    Uint(u64),
    /// A float, including `.inf`, `-.inf`, `.nan`.
    Float(f64),
    /// A timestamp (go-yaml's four accepted layouts). Decoded as a string by
    /// go-yaml v3 but as a `time.Time` by newer versions.
    Timestamp,
    /// `-0`: an integer 0 in go-yaml v3, a float -0 in v4's resolve table.
    NegativeZero,
    /// `<<`, the merge key indicator.
    Merge,
    /// Anything else: a string.
    Str,
}

/// go-yaml's answer is not known precisely enough to rely on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Uncertain(pub(crate) &'static str);

/// Resolve an untagged plain scalar the way go-yaml's `resolve("", s)` does.
pub(crate) fn resolve_plain(s: &str) -> Result<Plain, Uncertain> {
    // The resolve map: exact spellings, checked first for every hinted
    // first character (and for the empty string).
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Plain::Null),
        "true" | "True" | "TRUE" => return Ok(Plain::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Plain::Bool(false)),
        ".nan" | ".NaN" | ".NAN" => return Ok(Plain::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Ok(Plain::Float(f64::INFINITY));
        }
        "-.inf" | "-.Inf" | "-.INF" => return Ok(Plain::Float(f64::NEG_INFINITY)),
        "-0" => return Ok(Plain::NegativeZero),
        "-0.0" => return Ok(Plain::Float(-0.0)),
        "<<" => return Ok(Plain::Merge),
        _ => {}
    }
    match s.as_bytes()[0] {
        // Hint 'M': only the map above can make these anything but a string.
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' | b'<' => Ok(Plain::Str),
        // Hint '.': Go's strconv.ParseFloat on the whole text.
        b'.' => resolve_dot(s),
        // Hints 'D' and 'S': timestamp, then int, then uint, then float.
        b'0'..=b'9' | b'+' | b'-' => resolve_number(s),
        _ => Ok(Plain::Str),
    }
}

/// A scalar starting with `.` that is not in the map: a float if Go's
/// `ParseFloat` accepts it. Starting with a dot, only `.digits[e±digits]`
/// can be a float (no hex, no `Inf`/`NaN` spellings).
fn resolve_dot(s: &str) -> Result<Plain, Uncertain> {
    let b = s.as_bytes();
    let numeric_chars = b[1..].iter().all(|c| c.is_ascii_digit() || matches!(c, b'_' | b'e' | b'E' | b'+' | b'-'));
    if !numeric_chars {
        return Ok(Plain::Str);
    }
    if s.contains('_') {
        return Err(Uncertain("a number-like scalar starting with `.` and containing `_`"));
    }
    if !is_yaml_style_float(s) {
        return Ok(Plain::Str);
    }
    float_value(s)
}

/// Digits or a sign first: go-yaml tries a timestamp, then `ParseInt`,
/// `ParseUint` (both base 0, underscores removed first), then its float regex.
fn resolve_number(s: &str) -> Result<Plain, Uncertain> {
    if is_go_yaml_timestamp(s) {
        return Ok(Plain::Timestamp);
    }
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if let Some(i) = go_parse_int(&plain) {
        return Ok(Plain::Int(i));
    }
    if let Some(u) = go_parse_uint(&plain) {
        return Ok(Plain::Uint(u));
    }
    if is_yaml_style_float(&plain) {
        return float_value(&plain);
    }
    Ok(Plain::Str)
}

/// The float value of text already known to match go-yaml's float syntax.
/// Go's `ParseFloat` fails on overflow (and go-yaml then falls back to a
/// string); fleetc does not rely on that corner.
fn float_value(s: &str) -> Result<Plain, Uncertain> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(Plain::Float(f)),
        _ => Err(Uncertain("a float too large for 64 bits")),
    }
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
pub(crate) fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseUint(s, 0, 64)` on text without underscores; `None` on
/// any syntax or range error.
pub(crate) fn go_parse_uint(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let (base, digits): (u64, &[u8]) = if b[0] == b'0' {
        match b.get(1).map(u8::to_ascii_lowercase) {
            Some(b'b') if b.len() >= 3 => (2, &b[2..]),
            Some(b'o') if b.len() >= 3 => (8, &b[2..]),
            Some(b'x') if b.len() >= 3 => (16, &b[2..]),
            _ => (8, &b[1..]),
        }
    } else {
        (10, b)
    };
    let mut n: u64 = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'z' | b'A'..=b'Z' => c.to_ascii_lowercase() - b'a' + 10,
            _ => return None,
        };
        if u64::from(d) >= base {
            return None;
        }
        n = n.checked_mul(base)?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Go's `strconv.ParseInt(s, 0, 64)` on text without underscores.
pub(crate) fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let un = go_parse_uint(rest)?;
    if neg { if un > 1 << 63 { None } else { Some((un as i64).wrapping_neg()) } } else { i64::try_from(un).ok() }
}

/// go-yaml's `isOldBool`: YAML 1.1 booleans, written quoted for compatibility.
pub(crate) fn is_old_bool(s: &str) -> bool {
    matches!(
        s,
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF"
    )
}

/// go-yaml's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`
/// (YAML 1.1 sexagesimal numbers like `1:30`), written quoted.
pub(crate) fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        // [0-5]?[0-9]: one digit, or two digits whose first is 0-5.
        let d1 = i < b.len() && b[i].is_ascii_digit();
        let d2 = i + 1 < b.len() && b[i + 1].is_ascii_digit();
        if d1 && d2 && b[i] <= b'5' {
            i += 2;
        } else if d1 {
            i += 1;
        } else {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml's `parseTimestamp`: four digits and `-`, then Go's `time.Parse`
/// with one of `2006-1-2T15:4:5.999999999Z07:00`,
/// `2006-1-2t15:4:5.999999999Z07:00`, `2006-1-2 15:4:5.999999999` or
/// `2006-1-2`.
pub(crate) fn is_go_yaml_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    [Layout::DateTimeUpperT, Layout::DateTimeLowerT, Layout::DateSpaceTime, Layout::Date]
        .into_iter()
        .any(|layout| go_time_parse(layout, b))
}

#[derive(Clone, Copy, PartialEq)]
enum Layout {
    DateTimeUpperT,
    DateTimeLowerT,
    DateSpaceTime,
    Date,
}

/// Go's `getnum(s, false)`: one digit, or two when the second is a digit.
fn getnum(v: &[u8]) -> Option<(u32, &[u8])> {
    let d0 = *v.first().filter(|c| c.is_ascii_digit())?;
    match v.get(1).filter(|c| c.is_ascii_digit()) {
        Some(&d1) => Some((u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0'), &v[2..])),
        None => Some((u32::from(d0 - b'0'), &v[1..])),
    }
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Go's `time.Parse` for the four layouts above, as a yes/no.
fn go_time_parse(layout: Layout, v: &[u8]) -> bool {
    // stdLongYear: four bytes (known digits), then the literal '-'.
    let year = v[..4].iter().fold(0u32, |a, &c| a * 10 + u32::from(c - b'0'));
    let v = &v[5..];
    let Some((month, v)) = getnum(v) else {
        return false;
    };
    let Some(v) = v.strip_prefix(b"-") else {
        return false;
    };
    let Some((day, mut v)) = getnum(v) else {
        return false;
    };
    if !(1..=12).contains(&month) {
        return false;
    }
    if layout != Layout::Date {
        // The separator literal. A space in a Go layout matches any run of
        // spaces (and an empty remainder).
        v = match layout {
            Layout::DateTimeUpperT => match v.strip_prefix(b"T") {
                Some(r) => r,
                None => return false,
            },
            Layout::DateTimeLowerT => match v.strip_prefix(b"t") {
                Some(r) => r,
                None => return false,
            },
            _ => {
                if !v.is_empty() && v[0] != b' ' {
                    return false;
                }
                let n = v.iter().take_while(|&&c| c == b' ').count();
                &v[n..]
            }
        };
        let Some((hour, r)) = getnum(v) else {
            return false;
        };
        let Some(r) = r.strip_prefix(b":") else {
            return false;
        };
        let Some((minute, r)) = getnum(r) else {
            return false;
        };
        let Some(r) = r.strip_prefix(b":") else {
            return false;
        };
        let Some((second, mut r)) = getnum(r) else {
            return false;
        };
        if hour >= 24 || minute >= 60 || second >= 60 {
            return false;
        }
        // stdFracSecond9: optional, '.' or ',' then any number of digits.
        if r.len() >= 2 && (r[0] == b'.' || r[0] == b',') && r[1].is_ascii_digit() {
            let n = 1 + r[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            r = &r[n..];
        }
        if layout != Layout::DateSpaceTime {
            // stdISO8601ColonTZ: 'Z', or ±hh:mm.
            if let Some(rest) = r.strip_prefix(b"Z") {
                r = rest;
            } else {
                if r.len() < 6 || r[3] != b':' {
                    return false;
                }
                let two = |x: &[u8]| {
                    x.iter().all(u8::is_ascii_digit).then(|| u32::from(x[0] - b'0') * 10 + u32::from(x[1] - b'0'))
                };
                let (Some(hh), Some(mm)) = (two(&r[1..3]), two(&r[4..6])) else {
                    return false;
                };
                if hh > 24 || mm > 60 || !(r[0] == b'+' || r[0] == b'-') {
                    return false;
                }
                r = &r[6..];
            }
        }
        v = r;
    }
    // Extra text fails the parse; the day is validated last.
    v.is_empty() && day >= 1 && day <= days_in(month, year)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Plain {
        resolve_plain(s).unwrap()
    }

    #[test]
    fn resolve_map_spellings() {
        for s in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(r(s), Plain::Null, "{s:?}");
        }
        assert_eq!(r("True"), Plain::Bool(true));
        assert_eq!(r("FALSE"), Plain::Bool(false));
        // YAML 1.2 resolution: these are strings (quoted on output only
        // because of isOldBool).
        for s in ["yes", "no", "on", "off", "y", "n", "tRUE", "nULL"] {
            assert_eq!(r(s), Plain::Str, "{s:?}");
        }
        assert_eq!(r("<<"), Plain::Merge);
        assert_eq!(r("-0"), Plain::NegativeZero);
        assert!(matches!(r(".inf"), Plain::Float(f) if f.is_infinite()));
        assert!(matches!(r(".NaN"), Plain::Float(f) if f.is_nan()));
    }

    #[test]
    fn resolve_numbers_like_go() {
        assert_eq!(r("10"), Plain::Int(10));
        assert_eq!(r("0xa"), Plain::Int(10));
        assert_eq!(r("0o12"), Plain::Int(10));
        assert_eq!(r("012"), Plain::Int(10)); // Go base 0: leading 0 is octal
        assert_eq!(r("0b1010"), Plain::Int(10));
        assert_eq!(r("1_000"), Plain::Int(1000));
        assert_eq!(r("+12"), Plain::Int(12));
        assert_eq!(r("-12"), Plain::Int(-12));
        assert_eq!(r("18446744073709551615"), Plain::Uint(u64::MAX));
        assert_eq!(r("1e3"), Plain::Float(1000.0));
        assert_eq!(r("1.5"), Plain::Float(1.5));
        assert_eq!(r("-.5"), Plain::Float(-0.5));
        assert_eq!(r(".5"), Plain::Float(0.5));
        assert_eq!(r("1."), Plain::Float(1.0));
        // `09` is no octal integer, but matches go-yaml's float regex.
        assert_eq!(r("09"), Plain::Float(9.0));
        // Not numbers.
        for s in ["0x", "1.2.3", "0x1p3", "-", "+", "-lockdown", "1e", "1_2.3_4x", "3d"] {
            assert_eq!(r(s), Plain::Str, "{s:?}");
        }
        assert!(resolve_plain("1e999").is_err());
        // Too big for uint64: go-yaml falls through to its float regex.
        assert_eq!(r("18446744073709551616"), Plain::Float(18446744073709551616.0));
    }

    #[test]
    fn timestamps_like_go_yaml() {
        for s in [
            "2015-02-24T18:19:39Z",
            "2015-02-24t18:19:39Z",
            "2015-2-3T1:2:3Z",
            "2015-02-24T18:19:39.123456789-07:00",
            "2015-02-24T18:19:39+01:00",
            "2015-02-24 18:19:39",
            "2015-02-24  18:19:39.5",
            "2015-02-24",
            "2016-02-29",
        ] {
            assert_eq!(r(s), Plain::Timestamp, "{s:?}");
        }
        for s in [
            "2015-02-29",
            "2015-13-01",
            "2015-02-24T18:19:39",
            "2015-02-24 18:19:39Z",
            "2015-02-24T25:00:00Z",
            "2015-02-24x",
            "20150-02-24",
            "2015-02-24T18:19:39+0100",
        ] {
            assert_ne!(r(s), Plain::Timestamp, "{s:?}");
        }
    }

    #[test]
    fn base60_and_old_bools() {
        for s in ["1:30", "190:20:30", "-1:30", "1:30.5", "1_0:20"] {
            assert!(is_base60_float(s), "{s:?}");
        }
        for s in ["1:60", "1:", ":30", "a:30", "1:30:"] {
            assert!(!is_base60_float(s), "{s:?}");
        }
        assert!(is_old_bool("Off") && !is_old_bool("oFF"));
    }
}
