//! Value types the model parses once, so that every emitter reads the same, valid value:
//! IPv4 networks and ranges, versions, byte sizes, and the enumerated words of the language.
//! Parsers return `Result<T, String>`; the caller attaches the span. An error's first line is
//! the message; what follows a line break is the help (how to fix it), which the resolver's
//! `parse_at` shows as the diagnostic's help.

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

/// An IPv4 network in CIDR form. The address is the network address (host bits zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ipv4Net {
    pub addr: Ipv4Addr,
    pub prefix: u8,
}

impl Ipv4Net {
    pub fn mask(&self) -> u32 {
        if self.prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(self.prefix)) }
    }
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.addr)
    }
    pub fn overlaps(&self, other: &Ipv4Net) -> bool {
        self.contains(other.addr) || other.contains(self.addr)
    }
    pub fn first_host(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) + 1)
    }
    pub fn broadcast(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) | !self.mask())
    }
    /// The `n`th address of the network (0 is the network address).
    pub fn nth(&self, n: u32) -> Option<Ipv4Addr> {
        let ip = u32::from(self.addr).checked_add(n)?;
        let ip = Ipv4Addr::from(ip);
        self.contains(ip).then_some(ip)
    }
}

impl FromStr for Ipv4Net {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (addr, prefix) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not in CIDR form (address/prefix, e.g. 10.10.0.0/22)"))?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| format!("`{addr}` is not an IPv4 address"))?;
        let prefix: u8 = prefix
            .parse()
            .ok()
            .filter(|p| *p <= 32)
            .ok_or_else(|| format!("`/{prefix}` is not a prefix length between 0 and 32"))?;
        let net = Ipv4Net { addr, prefix };
        if u32::from(addr) & net.mask() != u32::from(addr) {
            let base = Ipv4Addr::from(u32::from(addr) & net.mask());
            return Err(format!("`{s}` has host bits set; the network is `{base}/{prefix}`"));
        }
        Ok(net)
    }
}

impl fmt::Display for Ipv4Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

pub fn parse_ipv4(s: &str) -> Result<Ipv4Addr, String> {
    s.parse().map_err(|_| {
        if s.parse::<std::net::Ipv6Addr>().is_ok() {
            format!(
                "`{s}` is an IPv6 address; fleetc takes IPv4 addresses here\nfleetc supports IPv4 node addresses only: the kubelet's node IP is chosen from the private IPv4 network (R18); give the node's IPv4 address"
            )
        } else {
            format!("`{s}` is not an IPv4 address")
        }
    })
}

/// An inclusive range of IPv4 addresses, written `10.20.0.100-10.20.0.150`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ipv4Range {
    pub first: Ipv4Addr,
    pub last: Ipv4Addr,
}

impl Ipv4Range {
    pub fn len(&self) -> u32 {
        u32::from(self.last) - u32::from(self.first) + 1
    }
    pub fn is_empty(&self) -> bool {
        false
    }
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        self.first <= ip && ip <= self.last
    }
}

impl FromStr for Ipv4Range {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s
            .split_once('-')
            .ok_or_else(|| format!("`{s}` is not an address range (first-last, e.g. 10.20.0.100-10.20.0.150)"))?;
        let (first, last) = (parse_ipv4(a)?, parse_ipv4(b)?);
        if first > last {
            return Err(format!("`{s}` ends before it starts"));
        }
        Ok(Ipv4Range { first, last })
    }
}

impl fmt::Display for Ipv4Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

/// A release version `major.minor.patch`, written with or without a leading `v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version { major, minor, patch }
    }
    /// `(major, minor)`, the unit of support matrices and upgrade steps.
    pub fn minor_version(&self) -> (u32, u32) {
        (self.major, self.minor)
    }
    /// With the leading `v` Talos and Cluster API use (`v1.13.9`).
    pub fn v(&self) -> String {
        format!("v{self}")
    }
}

impl FromStr for Version {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bare = s.strip_prefix('v').unwrap_or(s);
        let parts: Vec<&str> = bare.split('.').collect();
        let num = |p: &str| -> Option<u32> {
            (!p.is_empty() && p.len() <= 6 && p.bytes().all(|b| b.is_ascii_digit())).then(|| p.parse().ok())?
        };
        match parts.as_slice() {
            [a, b, c] => match (num(a), num(b), num(c)) {
                (Some(major), Some(minor), Some(patch)) => Ok(Version { major, minor, patch }),
                _ => Err(format!("`{s}` is not a version of the form 1.2.3")),
            },
            _ => Err(format!("`{s}` is not a full version of the form 1.2.3 (pin the patch release)")),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A size in bytes, written with a unit: `100GB` (10^9) or `100GiB` (2^30); `MB`, `MiB`,
/// `TB`, `TiB` likewise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const GB: u64 = 1_000_000_000;
    pub const GIB: u64 = 1 << 30;
    /// Whole gigabytes (10^9), rounded up: the unit of cloud block volumes.
    pub fn gb_ceil(&self) -> u64 {
        self.0.div_ceil(Self::GB)
    }
    /// Whole mebibytes, rounded up: the unit of Proxmox memory.
    pub fn mib_ceil(&self) -> u64 {
        self.0.div_ceil(1 << 20)
    }
}

impl FromStr for Bytes {
    type Err = String;
    /// fleetc's own sizes: digits, then a case-sensitive unit, no space (`100GB`, `8GiB`).
    /// A near miss (`30 gb`, `50`, `8G`) is refused with the spelling to write.
    fn from_str(s: &str) -> Result<Self, String> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let (num, unit) = s.split_at(digits);
        let mult = |u: &str| -> Option<u64> {
            Some(match u {
                "MB" => 1_000_000,
                "GB" => 1_000_000_000,
                "TB" => 1_000_000_000_000,
                "MiB" => 1 << 20,
                "GiB" => 1 << 30,
                "TiB" => 1 << 40,
                _ => return None,
            })
        };
        let rules = "a size is digits and a unit, with no space between; the units are case-sensitive: `MB`, `GB`, `TB` (powers of ten) and `MiB`, `GiB`, `TiB` (powers of two)";
        let err = || {
            let spaced = unit.trim();
            // The unit as fleetc spells it, when the one written is that one in another case.
            let respelt = ["MB", "GB", "TB", "MiB", "GiB", "TiB"].into_iter().find(|u| u.eq_ignore_ascii_case(spaced));
            if num.is_empty() {
                return format!("`{s}` is not a size such as `100GB` or `8GiB`\n{rules}");
            }
            if unit.is_empty() {
                return format!(
                    "`{s}` has no unit\na size takes a unit: `{num}GB` (powers of ten, as disks are sold) or `{num}GiB` (powers of two, as memory is usually meant)"
                );
            }
            if let Some(u) = respelt {
                return format!("`{s}` is not a size fleetc reads\ndid you mean `{num}{u}`? {rules}");
            }
            match spaced {
                "G" | "M" | "T" | "Gi" | "Mi" | "Ti" | "g" | "m" | "t" | "gi" | "mi" | "ti" => {
                    let base = spaced.trim_end_matches('i').to_ascii_uppercase();
                    format!(
                        "`{s}` has no unit fleetc reads\nwrite `{num}{base}iB` (powers of two, as memory is usually meant) or `{num}{base}B` (powers of ten)"
                    )
                }
                _ => format!("`{s}` is not a size such as `100GB` or `8GiB`\n{rules}"),
            }
        };
        let n: u64 = num.parse().map_err(|_| err())?;
        let m = mult(unit).ok_or_else(err)?;
        n.checked_mul(m).map(Bytes).ok_or_else(|| format!("`{s}` is too large a size"))
    }
}

/// The comparison of an install-disk `size` matcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeOp {
    /// No operator written: Talos compares with `==`.
    Bare,
    Eq,
    Ge,
    Le,
    Gt,
    Lt,
}

impl SizeOp {
    pub fn as_str(self) -> &'static str {
        match self {
            SizeOp::Bare => "",
            SizeOp::Eq => "==",
            SizeOp::Ge => ">=",
            SizeOp::Le => "<=",
            SizeOp::Gt => ">",
            SizeOp::Lt => "<",
        }
    }
}

/// An install-disk size matcher as Talos reads it (`machine.install.diskSelector.size`):
/// siderolabs/talos v1.13.9 `pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`
/// `InstallDiskSizeMatcher.UnmarshalYAML` trims the text, takes an operator
/// `(>=|<=|>|<|==)?` and parses the rest with go-humanize v1.0.1 `ParseBytes` (digits with `.`
/// or `,`, then a unit, case-insensitive, a space allowed; no unit is bytes);
/// `v1alpha1_provider.go` `DiskMatchExpression` compares with `==` when no operator is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeMatch {
    pub op: SizeOp,
    pub bytes: u64,
    /// The size was written with no unit: Talos reads it as bytes.
    pub unitless: bool,
}

impl FromStr for SizeMatch {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let (op, rest) =
            [(">=", SizeOp::Ge), ("<=", SizeOp::Le), ("==", SizeOp::Eq), (">", SizeOp::Gt), ("<", SizeOp::Lt)]
                .into_iter()
                .find_map(|(p, op)| t.strip_prefix(p).map(|r| (op, r)))
                .unwrap_or((SizeOp::Bare, t));
        let rest = rest.trim();
        let digits = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.' || *b == b',').count();
        let (num, unit) = rest.split_at(digits);
        let bad = || {
            format!(
                "`{s}` is not a disk size Talos reads\nTalos reads `[>=|<=|>|<|==]<number><unit>`, e.g. `>= 480GB` or `< 2TiB` (units `KB`, `MB`, `GB`, `TB`, `KiB`, `MiB`, `GiB`, `TiB`)"
            )
        };
        let n: f64 = num.replace(',', "").parse().map_err(|_| bad())?;
        let unit = unit.trim().to_ascii_lowercase();
        let mult: u64 = match unit.as_str() {
            "" | "b" => 1,
            "k" | "kb" => 1_000,
            "ki" | "kib" => 1 << 10,
            "m" | "mb" => 1_000_000,
            "mi" | "mib" => 1 << 20,
            "g" | "gb" => 1_000_000_000,
            "gi" | "gib" => 1 << 30,
            "t" | "tb" => 1_000_000_000_000,
            "ti" | "tib" => 1 << 40,
            "p" | "pb" => 1_000_000_000_000_000,
            "pi" | "pib" => 1 << 50,
            _ => return Err(bad()),
        };
        let bytes = n * mult as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(bad());
        }
        Ok(SizeMatch { op, bytes: bytes as u64, unitless: unit.is_empty() })
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units: [(u64, &str); 6] = [
            (1 << 40, "TiB"),
            (1_000_000_000_000, "TB"),
            (1 << 30, "GiB"),
            (1_000_000_000, "GB"),
            (1 << 20, "MiB"),
            (1_000_000, "MB"),
        ];
        for (m, u) in units {
            if self.0 >= m && self.0.is_multiple_of(m) {
                return write!(f, "{}{u}", self.0 / m);
            }
        }
        write!(f, "{}B", self.0)
    }
}

/// How Talos applies a changed machine config (provider spelling, F10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ApplyMode {
    Auto,
    NoReboot,
    Reboot,
    Staged,
    StagedIfNeedingReboot,
}

impl ApplyMode {
    pub const ALL: [(&'static str, ApplyMode); 5] = [
        ("auto", ApplyMode::Auto),
        ("no_reboot", ApplyMode::NoReboot),
        ("reboot", ApplyMode::Reboot),
        ("staged", ApplyMode::Staged),
        ("staged_if_needing_reboot", ApplyMode::StagedIfNeedingReboot),
    ];
    pub fn as_str(self) -> &'static str {
        Self::ALL.iter().find(|(_, m)| *m == self).map(|(s, _)| *s).unwrap_or("auto")
    }
}

/// An isolated container runtime, shipped as a Talos system extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Runtime {
    Gvisor,
    Kata,
}

impl Runtime {
    pub const ALL: [(&'static str, Runtime); 2] = [("gvisor", Runtime::Gvisor), ("kata", Runtime::Kata)];
    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::Gvisor => "gvisor",
            Runtime::Kata => "kata",
        }
    }
    /// The official system extension that carries it.
    pub fn extension(self) -> &'static str {
        match self {
            Runtime::Gvisor => "siderolabs/gvisor",
            Runtime::Kata => "siderolabs/kata-containers",
        }
    }
    /// The containerd runtime handler the RuntimeClass names.
    pub fn handler(self) -> &'static str {
        match self {
            Runtime::Gvisor => "runsc",
            Runtime::Kata => "kata",
        }
    }
}

/// A taint effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl TaintEffect {
    pub const ALL: [(&'static str, TaintEffect); 3] = [
        ("NoSchedule", TaintEffect::NoSchedule),
        ("PreferNoSchedule", TaintEffect::PreferNoSchedule),
        ("NoExecute", TaintEffect::NoExecute),
    ];
    pub fn as_str(self) -> &'static str {
        Self::ALL.iter().find(|(_, e)| *e == self).map(|(s, _)| *s).unwrap_or("NoSchedule")
    }
}

/// True for a DNS name a host can be reached by (RFC 1123): dot-separated labels of
/// lowercase alphanumerics and `-`, each 1–63 characters, neither starting nor ending with
/// `-`, 253 characters in all, the last label not all digits (so never an IPv4 address).
pub fn is_dns_name(s: &str) -> bool {
    let label = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b.len() <= 63
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
            && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    };
    s.len() <= 253
        && s.split('.').all(label)
        && s.rsplit('.').next().is_some_and(|l| !l.bytes().all(|c| c.is_ascii_digit()))
}

/// True for a DNS-1123 label: lowercase alphanumerics and `-`, starting with a letter,
/// ending with an alphanumeric, 1–63 characters.
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr() {
        let n: Ipv4Net = "10.10.0.0/22".parse().unwrap();
        assert!(n.contains("10.10.3.254".parse().unwrap()));
        assert!(!n.contains("10.10.4.1".parse().unwrap()));
        assert!("10.10.0.1/22".parse::<Ipv4Net>().unwrap_err().contains("10.10.0.0/22"));
        assert!("10.10.0.0/33".parse::<Ipv4Net>().is_err());
        let pods: Ipv4Net = "10.0.0.0/8".parse().unwrap();
        assert!(pods.overlaps(&n) && n.overlaps(&pods));
    }

    #[test]
    fn versions() {
        assert_eq!("v1.13.9".parse::<Version>().unwrap(), Version::new(1, 13, 9));
        assert_eq!("1.36.2".parse::<Version>().unwrap().v(), "v1.36.2");
        assert!("1.36".parse::<Version>().is_err());
        assert!("1.x.2".parse::<Version>().is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!("100GB".parse::<Bytes>().unwrap().0, 100_000_000_000);
        assert_eq!("8GiB".parse::<Bytes>().unwrap().mib_ceil(), 8192);
        assert_eq!("8GiB".parse::<Bytes>().unwrap().to_string(), "8GiB");
        assert!("100 GB".parse::<Bytes>().is_err());
        assert!("100gb".parse::<Bytes>().is_err());
        // Near misses name the spelling to write (newcomer-3.md m01, m02).
        assert!("30 gb".parse::<Bytes>().unwrap_err().contains("did you mean `30GB`?"));
        assert!("30gib".parse::<Bytes>().unwrap_err().contains("did you mean `30GiB`?"));
        assert!("50".parse::<Bytes>().unwrap_err().contains("a size takes a unit: `50GB`"));
        assert!("8G".parse::<Bytes>().unwrap_err().contains("`8GiB`"));
        assert!("GB".parse::<Bytes>().unwrap_err().contains("is not a size"));
    }

    #[test]
    fn install_disk_size_matchers_read_as_talos_reads_them() {
        let m = |s: &str| s.parse::<SizeMatch>();
        assert_eq!(m("500GB"), Ok(SizeMatch { op: SizeOp::Bare, bytes: 500_000_000_000, unitless: false }));
        assert_eq!(m(" >= 480 gb ").unwrap().op, SizeOp::Ge);
        assert_eq!(m(">=480GB").unwrap().bytes, 480_000_000_000);
        assert_eq!(m("< 2TiB").unwrap(), SizeOp::Lt.with(2 << 40));
        assert_eq!(m("==1.5TB").unwrap().bytes, 1_500_000_000_000);
        assert!(m("500").unwrap().unitless);
        assert!(m("= 500GB").is_err());
        assert!(m("500 gbs").is_err());
        assert!(m("").is_err());
    }

    impl SizeOp {
        fn with(self, bytes: u64) -> SizeMatch {
            SizeMatch { op: self, bytes, unitless: false }
        }
    }

    #[test]
    fn dns_names() {
        for ok in ["k8s.example.com", "kube", "cp.k8s.goldentooth.net", "a-1.b2.io", "1password.com"] {
            assert!(is_dns_name(ok), "{ok}");
        }
        for bad in ["", "10.0.0.1", "K8s.example.com", "-a.io", "a-.io", "a..io", "a.io.", "a_b.io", "https://a.io"] {
            assert!(!is_dns_name(bad), "{bad}");
        }
        assert!(!is_dns_name(&format!("{}.io", "a".repeat(64))));
    }

    #[test]
    fn dns_labels() {
        assert!(is_dns_label("main-1"));
        assert!(!is_dns_label("Main"));
        assert!(!is_dns_label("1main"));
        assert!(!is_dns_label("main-"));
        assert!(!is_dns_label(&"a".repeat(64)));
    }
}
