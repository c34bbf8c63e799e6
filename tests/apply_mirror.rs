//! `fleetc apply --provider-mirror DIR --ca-bundle FILE` (issue 28): what every tofu command of
//! a real apply receives, read from the recording double ([`apply_support::Fake`]) while the
//! run's private directory exists: `TF_CLI_CONFIG_FILE` naming a file that holds exactly the
//! CLI config `env::tofu_cli_config` writes for that mirror (the text `oracles/tofu` hands to a
//! real, offline `tofu init`: its `init through fleetc --provider-mirror` check), the bundle
//! under the names tofu's clients read, and no secret in any argument, in the config or in a
//! variable that is not masked. No other tool gets the config.

use std::cell::RefCell;
use std::rc::Rc;

use crate::apply_support;

use apply_support::{Fake, Fixture, SECRET_VALUES, run_apply};
use fleetc::apply::env::{ToolPath, tofu_cli_config};

#[test]
fn every_tofu_command_gets_fleetcs_cli_config_for_the_mirror_and_no_secret() {
    let fx = Fixture::new();
    let mirror = fx.dir.path().join("providers-mirror");
    std::fs::create_dir_all(mirror.join("registry.opentofu.org")).unwrap();
    let ca = fx.dir.path().join("corp-ca.pem");
    std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\n").unwrap();
    let fake = Fake::new();
    // What each tofu command found at TF_CLI_CONFIG_FILE, read while the file exists.
    type Seen = (String, std::io::Result<String>, u32);
    let seen: Rc<RefCell<Vec<Seen>>> = Rc::default();
    let record = seen.clone();
    fake.rules.borrow_mut().push(Box::new(move |c| {
        if let Some((_, path)) = c.env.iter().find(|(k, _)| k == "TF_CLI_CONFIG_FILE") {
            let mode = file_mode(std::path::Path::new(path));
            record.borrow_mut().push((path.clone(), std::fs::read_to_string(path), mode));
        }
        None
    }));
    let opts = fleetc::apply::ApplyOptions {
        tools: ToolPath { provider_mirror: Some(mirror.to_string_lossy().into_owned()), ca_bundle: Some(ca.clone()) },
        ..fx.options()
    };
    let (r, log) = run_apply(&fx, &fake, &opts);
    r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));

    let want = tofu_cli_config(&mirror.to_string_lossy(), std::path::Path::new("/"));
    assert_eq!(
        want,
        format!("provider_installation {{\n  filesystem_mirror {{\n    path = \"{}\"\n  }}\n}}\n", mirror.display())
    );
    let calls = fake.calls.borrow();
    let tofu: Vec<_> = calls.iter().filter(|c| c.program == "tofu").collect();
    assert!(tofu.len() > 10, "{:?}", fake.lines());
    let seen = seen.borrow();
    assert_eq!(
        seen.len(),
        tofu.len(),
        "every tofu command, and only tofu, gets TF_CLI_CONFIG_FILE: {:?}",
        fake.lines()
    );
    let first = &seen[0].0;
    for (path, text, mode) in seen.iter() {
        assert_eq!(path, first, "one config for the whole run");
        assert_eq!(text.as_ref().expect("the config exists while tofu runs"), &want);
        assert_eq!(*mode, 0o600, "a private file");
    }
    // In the run's private directory, never in the fleet's tree, and gone after the run.
    assert!(first.ends_with("/tofu-cli.tfrc") && !first.starts_with(&*fx.root.to_string_lossy()), "{first}");
    assert!(!std::path::Path::new(first).exists(), "{first} left behind");
    // The plan's note shows that very text, so what the harness feeds tofu is what apply writes.
    assert!(log.iter().any(|l| l.contains(want.trim_end())), "{}", log.join("\n"));

    for c in &tofu {
        let get = |k: &str| c.env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("AWS_CA_BUNDLE").as_deref(), Some(&*ca.to_string_lossy()));
        assert_eq!(get("SSL_CERT_FILE").as_deref(), Some(&*ca.to_string_lossy()));
        assert!(!c.secret_env.contains("TF_CLI_CONFIG_FILE"), "a path, shown in the plan, not masked");
        for secret in SECRET_VALUES {
            assert!(c.args.iter().all(|a| !a.contains(secret)), "{secret} in an argument of {:?}", c.args);
            assert!(!want.contains(secret));
            for (k, v) in &c.env {
                if v.contains(secret) {
                    assert!(c.secret_env.contains(k), "{k} carries a secret and is not masked");
                }
            }
        }
    }
    for c in calls.iter().filter(|c| c.program != "tofu") {
        assert!(
            c.env.iter().all(|(k, _)| k != "TF_CLI_CONFIG_FILE" && k != "AWS_CA_BUNDLE"),
            "{} {:?}",
            c.program,
            c.env
        );
    }
    for l in &log {
        for secret in SECRET_VALUES {
            assert!(!l.contains(secret), "{secret} in the log: {l}");
        }
    }
}

#[cfg(unix)]
fn file_mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777).unwrap_or(0)
}

#[cfg(not(unix))]
fn file_mode(_: &std::path::Path) -> u32 {
    0o600
}
