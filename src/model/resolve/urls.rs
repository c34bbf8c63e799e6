//! URLs and addresses as fleet.kdl writes them: which URL forms each tool that receives one
//! takes ([`UrlUse`]: the Proxmox API, an S3 endpoint, a git or chart repository), and an IPv4
//! address where one is expected, with a URL written in its place refused at its cause. Read
//! by `fleet`, `environment`, `provider`, `cluster`, `pool`, `nodes` and `app`.

use std::net::Ipv4Addr;

use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{Spanned, values};

pub(super) fn parse_ip(s: &Spanned<String>, d: &mut Diagnostics) -> Option<Spanned<Ipv4Addr>> {
    if let Some((address, port)) = url_address(&s.value) {
        let port_help =
            port.map(|p| format!(" and the port as `port={p}` where the node takes one")).unwrap_or_default();
        d.push(
            Diagnostic::new(
                &codes::URL_NOT_ADDRESS,
                format!("`{}` is a URL; an IPv4 address is expected here", s.value),
            )
            .at(s.span)
            .label("a URL, not an address")
            .help(format!(
                "write the address alone: `\"{address}\"`{port_help}; fleetc builds the URLs the tools need from it"
            )),
        );
        return None;
    }
    // `10.30.0.11/24`: an interface address where a bare address is expected. The cause is
    // the prefix; the address itself is kept, so that nothing downstream reports the node
    // as having none (issue 28, one cause one error).
    if let Some((a, p)) = s.value.split_once('/')
        && let Ok(ip) = values::parse_ipv4(a)
        && p.parse::<u8>().is_ok_and(|p| p <= 32)
    {
        d.push(
            Diagnostic::new(&codes::INVALID_VALUE, format!("drop `/{p}`: `{}` is an address with a prefix", s.value))
                .at(s.span)
                .label("a single address, no prefix")
                .help(format!(
                    "write `\"{a}\"`: the prefix comes from the environment's `network` (R18); only a `link`'s `address` takes one"
                )),
        );
        return Some(Spanned::new(ip, s.span));
    }
    match values::parse_ipv4(&s.value) {
        Ok(ip) => Some(Spanned::new(ip, s.span)),
        Err(e) => {
            d.push(super::reader::invalid_value(&e, s.span, "invalid address"));
            None
        }
    }
}

/// What a URL of fleet.kdl is handed to, and so which forms it may take.
#[derive(Clone, Copy)]
pub(super) enum UrlUse {
    /// The Proxmox VE API: `https://` only (bpg v0.111.1 `proxmox/api/client.go`).
    ProxmoxApi,
    /// An S3 endpoint: `http://` or `https://`.
    S3,
    /// The S3 endpoint of a `backup` bucket, which talos-backup hands to the AWS SDK as its
    /// base endpoint (siderolabs/talos-backup v0.1.0-beta.3 `pkg/s3/s3.go` l.36).
    BackupS3,
    /// A git repository Argo CD clones: `https://`, `http://` or SSH (argo-cd v3.2.1
    /// `util/git/git.go`: `^(ssh://)?([^/:]*?)@[^@]+$` is SSH).
    GitRepo,
    /// A Helm chart repository: as a git repository's HTTP forms, or `oci://`.
    ChartRepo,
}

/// Why `s` is not a URL the tool of `usage` takes, with the URL to write instead, or `None`.
fn url_problem(s: &str, usage: UrlUse) -> Option<(String, String)> {
    let scheme = s.split_once("://").map(|(sc, _)| sc.to_ascii_lowercase());
    let rest_after = |s: &str| s.split_once("://").map_or(s.to_owned(), |(_, r)| r.to_owned());
    let host_ok = |s: &str| {
        let h = rest_after(s);
        let host = h.split(['/', ':', '?', '#']).next().unwrap_or("");
        !host.is_empty() && !h.contains(char::is_whitespace)
    };
    let ssh = |s: &str| {
        let body = s.strip_prefix("ssh://").unwrap_or(s);
        match body.split_once('@') {
            Some((user, host)) => {
                !user.contains(['/', ':'])
                    && !host.is_empty()
                    && !host.contains('@')
                    && !s.contains(char::is_whitespace)
            }
            None => false,
        }
    };
    let (allowed, example): (&[&str], String) = match usage {
        UrlUse::ProxmoxApi => {
            let hostport = rest_after(s).trim_end_matches('/').to_owned();
            let port = if hostport.split('/').next().unwrap_or("").contains(':') { "" } else { ":8006" };
            (&["https"], format!("https://{hostport}{port}"))
        }
        UrlUse::S3 | UrlUse::BackupS3 => (&["https", "http"], format!("https://{}", rest_after(s))),
        UrlUse::GitRepo => (&["https", "http", "ssh"], format!("https://{}", rest_after(s))),
        UrlUse::ChartRepo => (&["https", "http", "oci"], format!("https://{}", rest_after(s))),
    };
    if matches!(usage, UrlUse::GitRepo) && ssh(s) {
        return None;
    }
    match scheme {
        Some(sc) if allowed.contains(&sc.as_str()) && host_ok(s) => None,
        Some(sc) if allowed.contains(&sc.as_str()) => Some(("it has no host, or holds a space".to_owned(), example)),
        Some(sc) => Some((
            format!(
                "`{sc}://` is not a scheme it takes ({})",
                allowed.iter().map(|a| format!("`{a}://`")).collect::<Vec<_>>().join(", ")
            ),
            example,
        )),
        None => Some(("it has no scheme".to_owned(), example)),
    }
}

/// Reports a string that is not the URL `usage` needs; true when it is one.
pub(super) fn expect_url(v: &Spanned<String>, what: &str, usage: UrlUse, d: &mut Diagnostics) -> bool {
    let Some((why, instead)) = url_problem(&v.value, usage) else { return true };
    let reader = match usage {
        UrlUse::ProxmoxApi => "the Proxmox provider dials `https://host:port/` only (bpg v0.111.1 `NewConnection`)",
        UrlUse::S3 => {
            "the state lives in an S3 bucket (R3), and OpenTofu's s3 backend takes its endpoint as a base URL"
        }
        UrlUse::BackupS3 => {
            "the backup job's AWS SDK takes the endpoint as a base URL (talos-backup `CUSTOM_S3_ENDPOINT`); without a scheme no snapshot is uploaded"
        }
        UrlUse::GitRepo => {
            "everything after the cluster comes from this repository through Argo CD (R23), which clones `https://`, `http://` or SSH URLs (argo-cd v3.2.1 `util/git/git.go`); anything else it reads as neither and cannot fetch"
        }
        UrlUse::ChartRepo => "Argo CD fetches a chart app (R23) from an `https://`, `http://` or `oci://` repository",
    };
    d.push(
        Diagnostic::new(&codes::NOT_A_URL, format!("{what} `{}` is not a URL the tool takes: {why}", v.value))
            .at(v.span)
            .label("not a URL")
            .help(format!("{reader}: write `{instead}`")),
    );
    false
}

/// `scheme://host[:port][/…]` or `host:port` where an address is expected: the host (and the
/// port, when one is written).
fn url_address(s: &str) -> Option<(String, Option<u16>)> {
    let (rest, had_scheme) = match s.split_once("://") {
        Some((scheme, rest)) if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphabetic()) => (rest, true),
        _ => (s, false),
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().ok()),
        None => (authority, None),
    };
    if had_scheme || (port.is_some() && values::parse_ipv4(host).is_ok()) {
        Some((host.to_owned(), port))
    } else {
        None
    }
}

#[cfg(test)]
mod url_tests {
    use super::{UrlUse, url_problem};

    /// The forms each reader takes (bpg v0.111.1 `NewConnection`; argo-cd v3.2.1
    /// `util/git/git.go` `sshURLRegex`), and the URL the help offers instead.
    #[test]
    fn urls_are_the_forms_their_readers_take() {
        for (s, usage) in [
            ("https://pve.home.arpa:8006", UrlUse::ProxmoxApi),
            ("https://pve.home.arpa:8006/", UrlUse::ProxmoxApi),
            ("http://minio.home.arpa:9000", UrlUse::S3),
            ("https://s3.fr-par.scw.cloud", UrlUse::S3),
            ("https://github.com/me/homelab.git", UrlUse::GitRepo),
            ("git@github.com:me/homelab.git", UrlUse::GitRepo),
            ("ssh://git@git.example.org/me/homelab.git", UrlUse::GitRepo),
            ("https://charts.jetstack.io", UrlUse::ChartRepo),
            ("oci://ghcr.io/stefanprodan/charts", UrlUse::ChartRepo),
        ] {
            assert_eq!(url_problem(s, usage), None, "{s}");
        }
        let instead = |s, usage| url_problem(s, usage).map(|(_, i)| i);
        assert_eq!(instead("pve.home.arpa", UrlUse::ProxmoxApi).as_deref(), Some("https://pve.home.arpa:8006"));
        assert_eq!(instead("http://pve:8006", UrlUse::ProxmoxApi).as_deref(), Some("https://pve:8006"));
        assert_eq!(instead("minio.home.arpa:9000", UrlUse::S3).as_deref(), Some("https://minio.home.arpa:9000"));
        assert_eq!(instead("github.com/me/homelab", UrlUse::GitRepo).as_deref(), Some("https://github.com/me/homelab"));
        assert!(url_problem("ftp://charts.example", UrlUse::ChartRepo).is_some());
        assert!(url_problem("oci://ghcr.io/x", UrlUse::GitRepo).is_some());
        assert!(url_problem("https://", UrlUse::S3).is_some());
        assert!(url_problem("https://git example.org/x", UrlUse::GitRepo).is_some());
    }
}
