//! Sealed inputs: a bundle round-trips through import and decryption; re-importing the same
//! plaintext keeps the committed ciphertext byte for byte; a different bundle is refused
//! without `--force`, with the why of R14; the command line seals into secrets/.
#![allow(clippy::disallowed_methods)] // runs the real binary

use crate::apply_support;

use std::path::Path;

use apply_support::bundle;
use fleetc::secrets::{self, Identity, Import, Imported};

struct Keys {
    identity: Identity,
    recipients: Vec<String>,
}

fn keys() -> Keys {
    use age::secrecy::ExposeSecret;
    let id = age::x25519::Identity::generate();
    let text = format!("{}\n", id.to_string().expose_secret());
    Keys { identity: Identity::parse(&text).unwrap(), recipients: vec![id.to_public().to_string()] }
}

fn import<'a>(
    root: &'a Path,
    keys: &'a Keys,
    name: &'a str,
    plaintext: &'a [u8],
    identity: bool,
    force: bool,
) -> Import<'a> {
    Import {
        root,
        env: "staging",
        cluster: "main",
        name,
        plaintext,
        recipients: &keys.recipients,
        identity: identity.then_some(&keys.identity),
        force,
    }
}

#[test]
fn a_bundle_round_trips_through_import_and_decryption() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys();
    let b = bundle("one");
    assert_eq!(
        secrets::import(&import(dir.path(), &k, "talos-secrets", b.as_bytes(), false, false)).unwrap(),
        Imported::Created
    );
    let sealed = std::fs::read_to_string(dir.path().join("secrets/staging/main/talos-secrets.age")).unwrap();
    assert!(sealed.starts_with("-----BEGIN AGE ENCRYPTED FILE-----"));
    assert!(!sealed.contains("clusteridone"), "the file holds no plaintext");
    let opened = secrets::open_file(dir.path(), "staging", "main", "talos-secrets", &k.identity).unwrap();
    assert_eq!(opened.bytes(), b.as_bytes());
    // Another identity cannot.
    let other = keys();
    assert!(secrets::open_file(dir.path(), "staging", "main", "talos-secrets", &other.identity).is_err());
}

#[test]
fn reimporting_identical_plaintext_keeps_the_committed_file() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys();
    let b = bundle("one");
    secrets::import(&import(dir.path(), &k, "talos-secrets", b.as_bytes(), false, false)).unwrap();
    let path = dir.path().join("secrets/staging/main/talos-secrets.age");
    let before = std::fs::read(&path).unwrap();
    assert_eq!(
        secrets::import(&import(dir.path(), &k, "talos-secrets", b.as_bytes(), true, false)).unwrap(),
        Imported::Unchanged
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "age is randomized: an identical input must keep the bytes");
    // --force with the same plaintext seals again (for a change of recipients).
    assert_eq!(
        secrets::import(&import(dir.path(), &k, "talos-secrets", b.as_bytes(), true, true)).unwrap(),
        Imported::Resealed
    );
    assert_ne!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_different_bundle_is_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys();
    secrets::import(&import(dir.path(), &k, "talos-secrets", bundle("one").as_bytes(), false, false)).unwrap();
    let path = dir.path().join("secrets/staging/main/talos-secrets.age");
    let before = std::fs::read(&path).unwrap();
    let two = bundle("two");
    // With an identity: compared, different, refused with R14's why.
    let e = secrets::import(&import(dir.path(), &k, "talos-secrets", two.as_bytes(), true, false)).unwrap_err();
    assert!(e.0.contains("R14") && e.0.contains("another cluster") && e.0.contains("--force"), "{e}");
    // Without one: cannot compare, refused too.
    let e = secrets::import(&import(dir.path(), &k, "talos-secrets", two.as_bytes(), false, false)).unwrap_err();
    assert!(e.0.contains("--identity") && e.0.contains("R14"), "{e}");
    // An identity that cannot decrypt it cannot compare either.
    let other = keys();
    let wrong = Import {
        identity: Some(&other.identity),
        ..import(dir.path(), &k, "talos-secrets", two.as_bytes(), false, false)
    };
    assert!(secrets::import(&wrong).unwrap_err().0.contains("cannot be compared"));
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing was written");
    // --force replaces it.
    assert_eq!(
        secrets::import(&import(dir.path(), &k, "talos-secrets", two.as_bytes(), false, true)).unwrap(),
        Imported::Replaced
    );
    assert_eq!(
        secrets::open_file(dir.path(), "staging", "main", "talos-secrets", &k.identity).unwrap().bytes(),
        two.as_bytes()
    );
}

#[test]
fn only_a_talos_secrets_bundle_is_sealed_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys();
    let e =
        secrets::import(&import(dir.path(), &k, "talos-secrets", b"version: v1alpha1\nmachine: {}\n", false, false))
            .unwrap_err();
    assert!(e.0.contains("talosctl gen secrets") && e.0.contains("`cluster.id` is missing"), "{e}");
    assert!(!dir.path().join("secrets").exists());
    // Other inputs are opaque.
    secrets::import(&import(dir.path(), &k, "scaleway-api-key", b"key", false, false)).unwrap();
    // An environment without recipients cannot seal.
    let none = Keys { recipients: Vec::new(), ..keys() };
    assert!(secrets::import(&import(dir.path(), &none, "x", b"v", false, false)).unwrap_err().0.contains("recipients"));
}

fn fleetc(dir: &Path, args: &[&str], identity: Option<&Path>) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_fleetc"));
    c.current_dir(dir).args(args).env_remove(secrets::IDENTITY_VAR);
    if let Some(i) = identity {
        c.env(secrets::IDENTITY_VAR, i);
    }
    c.output().unwrap()
}

#[test]
fn the_command_line_seals_beside_fleet_kdl() {
    let fx = apply_support::Fixture::new();
    // A fresh directory: the fixture's fleet.kdl (its recipients), no sealed inputs yet.
    std::fs::remove_dir_all(fx.root.join("secrets")).unwrap();
    let b = fx.root.join("bundle.yaml");
    std::fs::write(&b, bundle("cli")).unwrap();
    let o = fleetc(&fx.root, &["secrets", "import", "staging/main", "talos-secrets", "bundle.yaml"], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let path = fx.root.join("secrets/staging/main/talos-secrets.age");
    let first = std::fs::read(&path).unwrap();
    // Same plaintext, with the identity from the environment: kept.
    let o =
        fleetc(&fx.root, &["secrets", "import", "staging/main", "talos-secrets", "bundle.yaml"], Some(&fx.identity));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unchanged"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&path).unwrap(), first);
    // A different bundle: refused, exit 1, the file untouched.
    std::fs::write(&b, bundle("other")).unwrap();
    let o =
        fleetc(&fx.root, &["secrets", "import", "staging/main", "talos-secrets", "bundle.yaml"], Some(&fx.identity));
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("R14"));
    assert_eq!(std::fs::read(&path).unwrap(), first);
    // A name the cluster does not list is refused.
    let o = fleetc(&fx.root, &["secrets", "import", "staging/main", "nope", "bundle.yaml"], None);
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not list `nope`"));
}
