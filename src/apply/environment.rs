//! The process environment, as `apply` and `upgrade` may use it. The Scaleway SDK prefers its
//! own variables (SCW_*, the legacy SCALEWAY_* and SCW_ORGANIZATION/SCW_REGION names,
//! SCW_PROFILE, SCW_CONFIG_PATH) over the arguments the provider passes it, and a variable
//! that is set but empty overrides too (F9): with them exported, the shell, not the variables
//! file, decides which project a root builds in (R9). So fleetc refuses to run while any of
//! them is set, and takes credentials from its own variables ([`CREDENTIALS`]), which it hands
//! to the tools it starts under the names they read — and never project, region or zone.

use std::collections::BTreeMap;

/// Variables of the operator's environment, captured once (tests pass their own).
pub type Env = BTreeMap<String, String>;

/// Captures the process environment (non-UTF-8 values become empty, names are kept: an empty
/// `SCW_*` is still refused).
pub fn capture() -> Env {
    std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_str().map(str::to_owned).unwrap_or_default()))
        .collect()
}

/// Whether a variable is one the Scaleway SDK reads (F9).
pub fn is_scaleway_sdk_var(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("SCW_") || upper.starts_with("SCALEWAY_")
}

/// Refuses an environment holding any variable that steers a tool against the plan (the
/// Scaleway SDK's, set or empty, R9/F9, and the others of [`super::child_env::refused`]), or
/// a credential under its old name ([`refuse_old_credential_names`]).
pub fn refuse_scaleway_sdk_vars(env: &Env) -> Result<(), String> {
    super::child_env::refuse_steering_vars(env)?;
    refuse_old_credential_names(env)
}

/// Until issue 15, `FLEETC_SCW_ACCESS_KEY`/`FLEETC_SCW_SECRET_KEY` also opened the S3 state
/// bucket, which a Proxmox environment has too: the state bucket's key pair is now
/// [`STATE_ACCESS_KEY`]/[`STATE_SECRET_KEY`]. A shell that sets only the old pair is refused
/// with the new names, rather than handing the Scaleway key to the state backend.
pub fn refuse_old_credential_names(env: &Env) -> Result<(), String> {
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
/// only in the environment of the child that needs them (`super::child_env`); the
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

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Env {
        vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
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
            let e = refuse_scaleway_sdk_vars(&env(&[(name, ""), ("PATH", "/bin")])).unwrap_err();
            assert!(e.contains(name) && e.contains("unset"), "{e}");
        }
        refuse_scaleway_sdk_vars(&env(&[(ACCESS_KEY, "x"), (STATE_ACCESS_KEY, "x"), ("PATH", "/bin")])).unwrap();
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
        let e = refuse_scaleway_sdk_vars(&env(&[(ACCESS_KEY, "x"), (SECRET_KEY, "y")])).unwrap_err();
        assert!(e.contains(STATE_ACCESS_KEY) && e.contains("Scaleway API only"), "{e}");
        refuse_scaleway_sdk_vars(&env(&[
            (ACCESS_KEY, "x"),
            (STATE_ACCESS_KEY, "x"),
            (SECRET_KEY, "y"),
            (STATE_SECRET_KEY, "y"),
        ]))
        .unwrap();
    }
}
