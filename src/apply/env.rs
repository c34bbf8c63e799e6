//! The operator's environment, as `apply`, `upgrade` and `talos render` may use it: what
//! fleetc refuses to run with, what it takes its credentials from, and what a child process
//! may see of it. One list of each, in this file.
//!
//! **Refused** ([`refuse_steering_vars`]), before anything runs: every variable that would
//! make a tool act on something other than what out/ describes. The Scaleway SDK prefers its
//! own variables (SCW_*, the legacy SCALEWAY_* and SCW_ORGANIZATION/SCW_REGION names,
//! SCW_PROFILE, SCW_CONFIG_PATH) over the arguments the provider passes it, and a variable
//! that is set but empty overrides too (F9): with them exported, the shell, not the variables
//! file, decides which project a root builds in (R9). The same holds for the AWS SDK's (the
//! S3 state backend: profile, session token, endpoint, config files), OpenTofu's
//! (`TF_WORKSPACE` picks another state, `TF_CLI_ARGS*` adds arguments to every command,
//! `TF_VAR_*` overrides a root's variables such as `talos_api_open`, `TF_DATA_DIR` another
//! backend cache, `TF_ENCRYPTION` another state key), the Proxmox provider's, and the client
//! configs `KUBECONFIG` and `TALOSCONFIG`. Since children start empty such a variable would
//! not reach them anyway; refusing it says so instead of silently ignoring what the operator
//! meant. A credential under its old name is refused too, with the new one.
//!
//! **Taken**: credentials come from fleetc's own variables ([`CREDENTIALS`]), which it hands
//! to the tools it starts under the names they read — and never project, region or zone.
//!
//! **Passed on**: a child starts with an **empty** environment ([`child_env`]): only the
//! operator's [`BASE`] variables (where programs live, the locale, the terminal, proxies and
//! CA bundles) and the tool's own [`per_tool`] additions pass, then the variables fleetc sets
//! for that one command ([`super::Cmd::env`]: the credentials under the names that tool
//! reads). No `FLEETC_*` variable ever reaches a child: curl to the Image Factory, talosctl,
//! kubectl and anything they start (an exec credential plugin, a provider) hold no Scaleway
//! key and no state passphrase they do not need.
//!
//! **Declared** ([`ToolPath`]): what an air-gapped or proxied operator needs the tools to use
//! instead — a provider mirror for OpenTofu, a CA bundle — is given to `fleetc apply` as a flag
//! (`--provider-mirror`, `--ca-bundle`), never taken from the shell: fleetc passes exactly
//! that to tofu (`TF_CLI_CONFIG_FILE` naming a CLI config it writes with that one mirror,
//! `AWS_CA_BUNDLE` and `SSL_CERT_FILE` naming that bundle), and the plan shows it. The
//! shell's `TF_CLI_CONFIG_FILE` and `AWS_CA_BUNDLE` stay refused, with the flag to use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Variables of the operator's environment, captured once (tests pass their own).
pub type Env = BTreeMap<String, String>;

/// Captures the process environment (non-UTF-8 values become empty, names are kept: an empty
/// `SCW_*` is still refused).
pub fn capture() -> Env {
    std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_str().map(str::to_owned).unwrap_or_default()))
        .collect()
}

/// The Scaleway API's key pair (the provider, the CCM/CSI, `scw`).
pub const ACCESS_KEY: &str = "FLEETC_SCW_ACCESS_KEY";
pub const SECRET_KEY: &str = "FLEETC_SCW_SECRET_KEY";
/// The S3 state bucket's key pair (the backend, the image upload), on every provider.
pub const STATE_ACCESS_KEY: &str = "FLEETC_STATE_ACCESS_KEY";
pub const STATE_SECRET_KEY: &str = "FLEETC_STATE_SECRET_KEY";
pub const STATE_PASSPHRASE: &str = "FLEETC_STATE_PASSPHRASE";
pub const PROXMOX_TOKEN: &str = "FLEETC_PROXMOX_API_TOKEN";

/// fleetc's own credential variables, each named for what it unlocks, and the names each tool
/// reads them under: the state bucket's pair as AWS_* (the S3 backend), the Scaleway API's as
/// SCW_ACCESS_KEY/SCW_SECRET_KEY (the provider and `scw`, Scaleway environments only), set
/// only in the environment of the child that needs them ([`child_env`]); the
/// passphrase becomes the roots' `state_passphrase` variable (R3).
pub const CREDENTIALS: &[(&str, &[&str], Need)] = &[
    (STATE_ACCESS_KEY, &["AWS_ACCESS_KEY_ID"], Need::Always),
    (STATE_SECRET_KEY, &["AWS_SECRET_ACCESS_KEY"], Need::Always),
    (ACCESS_KEY, &["SCW_ACCESS_KEY"], Need::Scaleway),
    (SECRET_KEY, &["SCW_SECRET_KEY"], Need::Scaleway),
    (STATE_PASSPHRASE, &["TF_VAR_state_passphrase"], Need::Always),
    (PROXMOX_TOKEN, &["PROXMOX_VE_API_TOKEN"], Need::Proxmox),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Always,
    Scaleway,
    Proxmox,
}

/// The child-environment entries `(name, value, secret)` for an environment on `provider`,
/// or the list of missing fleetc variables. Under `--plan` missing values are shown as
/// placeholders and nothing is refused.
pub fn credentials(env: &Env, provider: &str, plan: bool) -> Result<Vec<(String, String, bool)>, Vec<&'static str>> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (ours, theirs, need) in CREDENTIALS {
        // Bare metal has no OpenTofu root: no state credentials, no cloud's.
        if (*need == Need::Proxmox && provider != "proxmox")
            || (*need == Need::Scaleway && provider != "scaleway")
            || provider == "metal"
        {
            continue;
        }
        let value = match env.get(*ours).filter(|v| !v.is_empty()) {
            Some(v) => v.clone(),
            None if plan => format!("${ours}"),
            None => {
                missing.push(*ours);
                continue;
            }
        };
        for t in *theirs {
            out.push(((*t).to_owned(), value.clone(), true));
        }
    }
    if missing.is_empty() { Ok(out) } else { Err(missing) }
}

/// Variables every child gets from the operator's environment when set. Nothing secret:
/// where programs and caches live, the locale and terminal, and the network path (proxies,
/// CA bundles) the tools need to reach their APIs.
pub const BASE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "TMPDIR",
    "XDG_CACHE_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
];

/// Prefixes of [`BASE`]-like variables (the locale categories).
pub const BASE_PREFIXES: &[&str] = &["LC_"];

/// What one tool gets from the operator's environment beyond [`BASE`].
pub fn per_tool(program: &str) -> &'static [&'static str] {
    match program {
        // The provider cache only speeds `init` up; the lock file in the working copy pins
        // what it may hold.
        "tofu" => &["TF_PLUGIN_CACHE_DIR"],
        // The operator's agent holds the key the gateway's SSH bastion authenticates (R13,
        // `tunnel.rs`): no key or passphrase on a command line.
        "ssh" => &["SSH_AUTH_SOCK"],
        _ => &[],
    }
}

/// OpenTofu variables the operator may keep exported (see [`per_tool`]); every other `TF_*`
/// is refused.
pub const TF_ALLOWED: &[&str] = &["TF_PLUGIN_CACHE_DIR"];

/// Exact names refused (see the module documentation).
pub const REFUSED: &[&str] = &["KUBECONFIG", "TALOSCONFIG"];

/// Prefixes refused: `(prefix, which tool reads it, case-insensitive)`.
pub const REFUSED_PREFIXES: &[(&str, &str, bool)] = &[
    ("SCW_", "the Scaleway SDK (F9, R9)", true),
    ("SCALEWAY_", "the Scaleway SDK (F9, R9)", true),
    ("TF_", "OpenTofu", false),
    ("AWS_", "the AWS SDK of the S3 state backend", false),
    ("PROXMOX_VE_", "the Proxmox provider", false),
];

/// Why `name` is refused, or `None`.
pub fn refused(name: &str) -> Option<&'static str> {
    if REFUSED.contains(&name) {
        return Some(if name == "KUBECONFIG" { "kubectl" } else { "talosctl" });
    }
    if TF_ALLOWED.contains(&name) {
        return None;
    }
    let upper = name.to_ascii_uppercase();
    REFUSED_PREFIXES.iter().find_map(|(prefix, who, ci)| {
        let hit = if *ci { upper.starts_with(prefix) } else { name.starts_with(prefix) };
        hit.then_some(*who)
    })
}

/// The network path the operator declares for the tools (issue 28), from `fleetc apply`'s
/// flags: nothing by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPath {
    /// `--provider-mirror`: where tofu installs providers from instead of the registry: an
    /// `https://` URL (a network mirror, OpenTofu's provider network mirror protocol) or a
    /// directory (a filesystem mirror, laid out as `tofu providers mirror` writes it).
    pub provider_mirror: Option<String>,
    /// `--ca-bundle`: a PEM file of the CA certificates that sign the TLS of the operator's
    /// network path (a proxy that intercepts TLS, a private registry or S3 endpoint).
    pub ca_bundle: Option<PathBuf>,
}

/// The OpenTofu CLI configuration that installs every provider from `mirror` only
/// (opentofu/opentofu v1.10 `internal/command/cliconfig/provider_installation.go`:
/// `provider_installation` with one `network_mirror { url }` or `filesystem_mirror { path }`
/// and no `direct`, so nothing is fetched from the registry). `base` makes a relative
/// directory absolute (tofu runs in the working copy, not where the operator typed it).
pub fn tofu_cli_config(mirror: &str, base: &Path) -> String {
    let quoted = |v: &str| serde_json::to_string(v).unwrap_or_default();
    if mirror.starts_with("https://") {
        let url = if mirror.ends_with('/') { mirror.to_owned() } else { format!("{mirror}/") };
        format!("provider_installation {{\n  network_mirror {{\n    url = {}\n  }}\n}}\n", quoted(&url))
    } else {
        let dir = if Path::new(mirror).is_absolute() { PathBuf::from(mirror) } else { base.join(mirror) };
        format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path = {}\n  }}\n}}\n",
            quoted(&dir.to_string_lossy())
        )
    }
}

/// Why `mirror` is no provider mirror fleetc can pass on, or `None`: a network mirror is
/// `https://` only (OpenTofu refuses another scheme for it), a directory must exist.
pub fn mirror_problem(mirror: &str, base: &Path) -> Option<String> {
    if mirror.contains("://") {
        return (!mirror.starts_with("https://")).then(|| {
            format!(
                "--provider-mirror `{mirror}`: a network mirror is an `https://` URL (OpenTofu takes no other scheme)"
            )
        });
    }
    let dir = if Path::new(mirror).is_absolute() { PathBuf::from(mirror) } else { base.join(mirror) };
    (!dir.is_dir()).then(|| format!("--provider-mirror `{mirror}` is neither an `https://` URL nor a directory"))
}

/// The flag that declares what a refused variable would have steered, for its refusal.
fn declared_instead(name: &str) -> Option<&'static str> {
    match name {
        "TF_CLI_CONFIG_FILE" | "TF_CLI_CONFIG" | "TERRAFORM_CONFIG" => Some("--provider-mirror"),
        "AWS_CA_BUNDLE" => Some("--ca-bundle"),
        _ => None,
    }
}

/// Refuses, before anything runs, an environment holding any variable that steers a tool
/// against the plan: every one of [`refused`], set or empty (the Scaleway SDK's, R9/F9, and
/// the other tools'), then a credential under its old name (`refuse_old_credential_names`).
pub fn refuse_steering_vars(env: &Env) -> Result<(), String> {
    refuse_listed(env)?;
    refuse_old_credential_names(env)
}

/// Refuses an environment holding any variable of [`refused`], set or empty.
fn refuse_listed(env: &Env) -> Result<(), String> {
    let found: Vec<(&str, &str)> = env.keys().filter_map(|k| refused(k).map(|who| (k.as_str(), who))).collect();
    if found.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = found.iter().map(|(k, who)| format!("{k} (read by {who})")).collect();
    let names: Vec<&str> = found.iter().map(|(k, _)| *k).collect();
    let instead: Vec<String> = found
        .iter()
        .filter_map(|(k, _)| declared_instead(k).map(|flag| format!("for what {k} does, pass `{flag}`")))
        .collect();
    let instead = if instead.is_empty() { String::new() } else { format!("; {}", instead.join(", ")) };
    Err(format!(
        "the environment holds variables that would steer the tools away from what out/ describes: {}. A set or even empty one overrides the roots' own settings (F9), so the shell rather than fleet.kdl would decide the project, the state or the cluster (R9). Unset them (`unset {}`): fleetc hands each tool its credentials itself{instead} (docs/apply.md, \"The environment\")",
        listed.join(", "),
        names.join(" ")
    ))
}

/// Until issue 15, `FLEETC_SCW_ACCESS_KEY`/`FLEETC_SCW_SECRET_KEY` also opened the S3 state
/// bucket, which a Proxmox environment has too: the state bucket's key pair is now
/// [`STATE_ACCESS_KEY`]/[`STATE_SECRET_KEY`]. A shell that sets only the old pair is refused
/// with the new names, rather than handing the Scaleway key to the state backend.
fn refuse_old_credential_names(env: &Env) -> Result<(), String> {
    let set = |k: &str| env.get(k).is_some_and(|v| !v.is_empty());
    for (old, new) in [(ACCESS_KEY, STATE_ACCESS_KEY), (SECRET_KEY, STATE_SECRET_KEY)] {
        if set(old) && !set(new) {
            return Err(format!(
                "{old} is set but {new} is not: the state bucket's key pair is {STATE_ACCESS_KEY} and {STATE_SECRET_KEY} (they open the S3 state backend on every provider); {ACCESS_KEY} and {SECRET_KEY} open the Scaleway API only. Export the state bucket's key as {new} (it may be the same key)"
            ));
        }
    }
    Ok(())
}

/// The whole environment of a child running `program`: the allowed part of `parent`, then
/// `set` (fleetc's own values for this command, which win).
pub fn child_env(program: &str, parent: &Env, set: &[(String, String)]) -> Vec<(String, String)> {
    let tool = per_tool(program);
    let mut out: Vec<(String, String)> = parent
        .iter()
        .filter(|(k, _)| {
            BASE.contains(&k.as_str()) || BASE_PREFIXES.iter().any(|p| k.starts_with(p)) || tool.contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in set {
        out.retain(|(o, _)| o != k);
        out.push((k.clone(), v.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Env {
        vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn no_fleetc_variable_reaches_any_child() {
        let parent = env(&[
            ("PATH", "/bin"),
            ("LC_ALL", "C"),
            ("FLEETC_SCW_SECRET_KEY", "s"),
            ("FLEETC_STATE_PASSPHRASE", "p"),
            ("FLEETC_STATE_SECRET_KEY", "k"),
            ("FLEETC_AGE_IDENTITY", "/id"),
            ("TF_PLUGIN_CACHE_DIR", "/c"),
            ("GITHUB_TOKEN", "t"),
        ]);
        for tool in ["tofu", "talosctl", "kubectl", "scw", "curl", "qemu-img"] {
            let got = child_env(tool, &parent, &[("X".into(), "1".into())]);
            let names: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
            assert!(names.iter().all(|k| !k.starts_with("FLEETC_") && *k != "GITHUB_TOKEN"), "{tool}: {names:?}");
            assert!(names.contains(&"PATH") && names.contains(&"LC_ALL") && names.contains(&"X"), "{tool}: {names:?}");
            assert_eq!(names.contains(&"TF_PLUGIN_CACHE_DIR"), tool == "tofu");
        }
    }

    #[test]
    fn fleetc_values_win_over_the_parent() {
        let got = child_env("curl", &env(&[("HOME", "/root")]), &[("HOME".into(), "/private".into())]);
        assert_eq!(got, [("HOME".to_owned(), "/private".to_owned())]);
    }

    #[test]
    fn steering_variables_are_refused_even_empty() {
        for name in [
            "TF_WORKSPACE",
            "TF_CLI_ARGS",
            "TF_CLI_ARGS_apply",
            "TF_DATA_DIR",
            "TF_VAR_talos_api_open",
            "TF_ENCRYPTION",
            "TF_CLI_CONFIG_FILE",
            "AWS_PROFILE",
            "AWS_SESSION_TOKEN",
            "AWS_ENDPOINT_URL_S3",
            "AWS_ACCESS_KEY_ID",
            "KUBECONFIG",
            "TALOSCONFIG",
            "PROXMOX_VE_ENDPOINT",
            "SCW_PROFILE",
            "scw_profile",
            "SCALEWAY_TOKEN",
        ] {
            let e = refuse_steering_vars(&env(&[(name, ""), ("PATH", "/bin")])).unwrap_err();
            assert!(e.contains(name) && e.contains("unset"), "{e}");
        }
        refuse_listed(&env(&[
            ("FLEETC_SCW_ACCESS_KEY", "x"),
            ("TF_PLUGIN_CACHE_DIR", "/c"),
            ("PATH", "/bin"),
            ("HOME", "/root"),
        ]))
        .unwrap();
    }

    #[test]
    fn every_sdk_name_is_refused_even_empty() {
        for name in [
            "SCW_DEFAULT_PROJECT_ID",
            "SCW_ACCESS_KEY",
            "SCW_PROFILE",
            "SCW_CONFIG_PATH",
            "SCW_ORGANIZATION",
            "SCW_REGION",
            "SCALEWAY_TOKEN",
        ] {
            let e = refuse_steering_vars(&env(&[(name, ""), ("PATH", "/bin")])).unwrap_err();
            assert!(e.contains(name) && e.contains("unset"), "{e}");
        }
        refuse_steering_vars(&env(&[(ACCESS_KEY, "x"), (STATE_ACCESS_KEY, "x"), ("PATH", "/bin")])).unwrap();
    }

    #[test]
    fn a_refused_mirror_or_ca_variable_names_the_flag_that_declares_it() {
        let e = refuse_steering_vars(&env(&[("TF_CLI_CONFIG_FILE", "/etc/tofu.rc"), ("AWS_CA_BUNDLE", "/ca.pem")]))
            .unwrap_err();
        assert!(e.contains("`--provider-mirror`") && e.contains("`--ca-bundle`"), "{e}");
    }

    #[test]
    fn a_provider_mirror_becomes_a_cli_config_with_that_one_mirror() {
        let base = Path::new("/fleet");
        assert_eq!(
            tofu_cli_config("https://mirror.example/providers", base),
            "provider_installation {\n  network_mirror {\n    url = \"https://mirror.example/providers/\"\n  }\n}\n"
        );
        assert_eq!(
            tofu_cli_config("mirror", base),
            "provider_installation {\n  filesystem_mirror {\n    path = \"/fleet/mirror\"\n  }\n}\n"
        );
        assert!(mirror_problem("http://mirror.example/", base).unwrap().contains("https://"));
        assert!(mirror_problem("/nonexistent-mirror-dir", base).is_some());
        assert_eq!(mirror_problem("https://mirror.example/", base), None);
        assert_eq!(mirror_problem("/", base), None);
    }

    #[test]
    fn credentials_never_carry_project_region_or_zone() {
        let e = env(&[
            (STATE_ACCESS_KEY, "SAK"),
            (STATE_SECRET_KEY, "ssk"),
            (ACCESS_KEY, "SCWAK"),
            (SECRET_KEY, "sk"),
            (STATE_PASSPHRASE, "pp"),
        ]);
        let c = credentials(&e, "scaleway", false).unwrap();
        let names: Vec<&str> = c.iter().map(|(k, _, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY",
                "SCW_ACCESS_KEY",
                "SCW_SECRET_KEY",
                "TF_VAR_state_passphrase"
            ]
        );
        assert!(c.iter().all(|(_, _, secret)| *secret));
        assert_eq!(
            credentials(&env(&[]), "scaleway", false).unwrap_err(),
            [STATE_ACCESS_KEY, STATE_SECRET_KEY, ACCESS_KEY, SECRET_KEY, STATE_PASSPHRASE]
        );
        // A Proxmox environment needs no Scaleway key: its state bucket has its own pair.
        assert_eq!(
            credentials(&env(&[]), "proxmox", false).unwrap_err(),
            [STATE_ACCESS_KEY, STATE_SECRET_KEY, STATE_PASSPHRASE, PROXMOX_TOKEN]
        );
    }

    #[test]
    fn the_old_state_key_spelling_is_refused_with_the_new_name() {
        let e = refuse_steering_vars(&env(&[(ACCESS_KEY, "x"), (SECRET_KEY, "y")])).unwrap_err();
        assert!(e.contains(STATE_ACCESS_KEY) && e.contains("Scaleway API only"), "{e}");
        refuse_steering_vars(&env(&[
            (ACCESS_KEY, "x"),
            (STATE_ACCESS_KEY, "x"),
            (SECRET_KEY, "y"),
            (STATE_SECRET_KEY, "y"),
        ]))
        .unwrap();
    }
}
