//! What a child process may see of fleetc's environment, and which variables of the
//! operator's shell fleetc refuses to run with. One list of each, in this file.
//!
//! A child starts with an **empty** environment ([`child_env`]): only the operator's
//! [`BASE`] variables (where programs live, the locale, the terminal, proxies and CA bundles)
//! and the tool's own [`per_tool`] additions pass, then the variables fleetc sets for that
//! one command ([`super::Cmd::env`]: the credentials under the names that tool reads). No
//! `FLEETC_*` variable ever reaches a child: curl to the Image Factory, talosctl, kubectl and
//! anything they start (an exec credential plugin, a provider) hold no Scaleway key and no
//! state passphrase they do not need.
//!
//! [`refuse_steering_vars`] refuses, before anything runs, every variable that would make a
//! tool act on something other than what out/ describes: the Scaleway SDK's (F9, R9), the
//! AWS SDK's (the S3 state backend: profile, session token, endpoint, config files),
//! OpenTofu's (`TF_WORKSPACE` picks another state, `TF_CLI_ARGS*` adds arguments to every
//! command, `TF_VAR_*` overrides a root's variables such as `talos_api_open`, `TF_DATA_DIR`
//! another backend cache, `TF_ENCRYPTION` another state key), the Proxmox provider's, and the
//! client configs `KUBECONFIG` and `TALOSCONFIG`. Since children start empty such a variable
//! would not reach them anyway; refusing it says so instead of silently ignoring what the
//! operator meant.

use super::environment::Env;

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

/// Refuses an environment holding any variable of [`refused`], set or empty.
pub fn refuse_steering_vars(env: &Env) -> Result<(), String> {
    let found: Vec<(&str, &str)> = env.keys().filter_map(|k| refused(k).map(|who| (k.as_str(), who))).collect();
    if found.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = found.iter().map(|(k, who)| format!("{k} (read by {who})")).collect();
    let names: Vec<&str> = found.iter().map(|(k, _)| *k).collect();
    Err(format!(
        "the environment holds variables that would steer the tools away from what out/ describes: {}. A set or even empty one overrides the roots' own settings (F9), so the shell rather than fleet.kdl would decide the project, the state or the cluster (R9). Unset them (`unset {}`): fleetc hands each tool its credentials itself (docs/apply.md, \"The environment\")",
        listed.join(", "),
        names.join(" ")
    ))
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
        refuse_steering_vars(&env(&[
            ("FLEETC_SCW_ACCESS_KEY", "x"),
            ("TF_PLUGIN_CACHE_DIR", "/c"),
            ("PATH", "/bin"),
            ("HOME", "/root"),
        ]))
        .unwrap();
    }
}
