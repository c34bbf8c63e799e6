//! Sealed inputs: the secrets a cluster needs at apply time (its Talos machine secrets bundle,
//! API keys, Argo CD's repository credential), encrypted with age to the x25519 recipients
//! fleet.kdl declares per environment, and committed beside fleet.kdl at
//! `secrets/<env>/<cluster>/<name>.age` (ASCII-armored, so a review shows that a file changed).
//!
//! Nothing here ever writes plaintext to disk except through [`PrivateDir`]. Decryption needs
//! an identity, given per run (`--identity FILE` or [`IDENTITY_VAR`]) and never stored.
//!
//! Comparison rule (R14): age encryption is randomized, so two sealings of one plaintext
//! differ. Whether a new import equals the committed one is found by decrypting the committed
//! file with the operator's identity; fleetc stores no hash of any secret beside it (a hash
//! of a low-entropy secret, such as a repository password, can be guessed offline). Without
//! an identity an existing input is never replaced unless `--force` says so.

mod base64;
pub mod bundle;
mod private_dir;
pub mod redact;

use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use age::x25519;

use crate::layout::names::TALOS_SECRETS_INPUT;

pub use private_dir::{PrivateDir, private_file};

/// The environment variable that names the identity file when `--identity` is not given.
pub const IDENTITY_VAR: &str = "FLEETC_AGE_IDENTITY";

/// `secrets/<env>/<cluster>/<name>.age`, relative to the fleet's directory.
pub fn rel_path(env: &str, cluster: &str, name: &str) -> String {
    format!("secrets/{env}/{cluster}/{name}.age")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretsError(pub String);

impl fmt::Display for SecretsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SecretsError {}

fn err(msg: impl Into<String>) -> SecretsError {
    SecretsError(msg.into())
}

/// Decrypted bytes. Overwritten with zeros when dropped; `Debug` shows only the length.
pub struct Plaintext(Vec<u8>);

impl Plaintext {
    pub fn new(bytes: Vec<u8>) -> Self {
        Plaintext(bytes)
    }
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }
}

impl Drop for Plaintext {
    fn drop(&mut self) {
        self.0.iter_mut().for_each(|b| *b = 0);
    }
}

impl fmt::Debug for Plaintext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Plaintext(<{} bytes>)", self.0.len())
    }
}

/// Parses age x25519 recipients (`age1…`).
pub fn parse_recipients<S: AsRef<str>>(keys: &[S]) -> Result<Vec<x25519::Recipient>, SecretsError> {
    keys.iter()
        .map(|k| {
            k.as_ref()
                .parse::<x25519::Recipient>()
                .map_err(|_| err(format!("`{}` is not an age x25519 recipient", k.as_ref())))
        })
        .collect()
}

/// Encrypts `plaintext` to every recipient, ASCII-armored.
pub fn seal(recipients: &[x25519::Recipient], plaintext: &[u8]) -> Result<Vec<u8>, SecretsError> {
    let encryptor = age::Encryptor::with_recipients(recipients.iter().map(|r| r as &dyn age::Recipient))
        .map_err(|_| err("no recipient to seal to"))?;
    let mut out = Vec::new();
    let armor = age::armor::ArmoredWriter::wrap_output(&mut out, age::armor::Format::AsciiArmor)
        .map_err(|e| err(format!("cannot seal: {e}")))?;
    let mut w = encryptor.wrap_output(armor).map_err(|e| err(format!("cannot seal: {e}")))?;
    w.write_all(plaintext).map_err(|e| err(format!("cannot seal: {e}")))?;
    w.finish().and_then(|a| a.finish()).map_err(|e| err(format!("cannot seal: {e}")))?;
    Ok(out)
}

/// An operator's age identities, read from a file for one run.
pub struct Identity(Vec<x25519::Identity>);

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Identity(<{} keys>)", self.0.len())
    }
}

impl Identity {
    /// Reads an identity file (`age-keygen` output: `AGE-SECRET-KEY-1…` lines, `#` comments).
    /// Errors name a line number, never its content.
    pub fn from_file(path: &Path) -> Result<Identity, SecretsError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| err(format!("cannot read the identity {}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| err(format!("{}: {e}", path.display())))
    }

    pub fn parse(text: &str) -> Result<Identity, SecretsError> {
        let mut ids = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            ids.push(
                line.parse::<x25519::Identity>()
                    .map_err(|_| err(format!("line {} is not an age x25519 identity", i + 1)))?,
            );
        }
        if ids.is_empty() {
            return Err(err("no age identity in the file"));
        }
        Ok(Identity(ids))
    }

    /// The identity file to use: `--identity`, else [`IDENTITY_VAR`] (a path; an empty value
    /// counts as unset).
    pub fn locate(flag: Option<&Path>, env_value: Option<std::ffi::OsString>) -> Option<PathBuf> {
        flag.map(Path::to_owned).or_else(|| env_value.filter(|v| !v.is_empty()).map(PathBuf::from))
    }

    /// The recipients these identities decrypt for.
    pub fn recipients(&self) -> Vec<String> {
        self.0.iter().map(|i| i.to_public().to_string()).collect()
    }
}

/// Decrypts a sealed file's bytes.
pub fn open(identity: &Identity, ciphertext: &[u8]) -> Result<Plaintext, SecretsError> {
    let reader = age::armor::ArmoredReader::new(ciphertext);
    let decryptor = age::Decryptor::new_buffered(reader).map_err(|e| err(format!("not an age file: {e}")))?;
    let mut r = decryptor
        .decrypt(identity.0.iter().map(|i| i as &dyn age::Identity))
        .map_err(|_| err("none of the given identities can decrypt it"))?;
    let mut out = Vec::new();
    r.read_to_end(&mut out).map_err(|e| err(format!("cannot decrypt: {e}")))?;
    Ok(Plaintext(out))
}

/// Reads and decrypts `secrets/<env>/<cluster>/<name>.age` under `root`.
pub fn open_file(
    root: &Path,
    env: &str,
    cluster: &str,
    name: &str,
    identity: &Identity,
) -> Result<Plaintext, SecretsError> {
    let rel = rel_path(env, cluster, name);
    let bytes = std::fs::read(root.join(&rel)).map_err(|e| err(format!("cannot read {rel}: {e}")))?;
    open(identity, &bytes).map_err(|e| err(format!("{rel}: {e}")))
}

/// One `fleetc secrets import`.
pub struct Import<'a> {
    /// The fleet's directory.
    pub root: &'a Path,
    pub env: &'a str,
    pub cluster: &'a str,
    pub name: &'a str,
    pub plaintext: &'a [u8],
    pub recipients: &'a [String],
    pub identity: Option<&'a Identity>,
    pub force: bool,
}

/// What an import did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imported {
    /// No sealed file existed; one was written.
    Created,
    /// The committed file decrypts to the same plaintext: it is kept byte for byte.
    Unchanged,
    /// The same plaintext, sealed again on `--force` (after a change of recipients).
    Resealed,
    /// A different plaintext replaced the committed one on `--force`.
    Replaced,
}

/// Why replacing the bundle is refused (R14).
pub const R14_WHY: &str = "the secrets bundle is the cluster's identity (R14): a second bundle is not a repair but another cluster, which the running nodes will not talk to, and a mistake means resetting every machine";

/// Seals `plaintext` into `secrets/<env>/<cluster>/<name>.age` (see the module doc for when an
/// existing file is kept, replaced or the import refused).
pub fn import(req: &Import<'_>) -> Result<Imported, SecretsError> {
    if req.name.is_empty() || !req.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        return Err(err(format!("`{}` is not a sealed input name (lowercase letters, digits and `-`)", req.name)));
    }
    if req.name == TALOS_SECRETS_INPUT {
        bundle::validate(req.plaintext)
            .map_err(|e| err(format!("this is not a Talos secrets bundle as `talosctl gen secrets` writes it: {e}")))?;
    }
    if req.recipients.is_empty() {
        return Err(err(format!(
            "environment `{}` declares no `recipients`; add the age public keys that may decrypt its inputs",
            req.env
        )));
    }
    let recipients = parse_recipients(req.recipients)?;
    let rel = rel_path(req.env, req.cluster, req.name);
    let path = req.root.join(&rel);
    let outcome = match std::fs::read(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Imported::Created,
        Err(e) => return Err(err(format!("cannot read {rel}: {e}"))),
        Ok(existing) => {
            let what =
                if req.name == TALOS_SECRETS_INPUT { R14_WHY.to_owned() } else { format!("`{}` is in use", req.name) };
            match (req.identity.map(|id| open(id, &existing)), req.force) {
                (Some(Ok(old)), force) if old.bytes() == req.plaintext => {
                    if force {
                        Imported::Resealed
                    } else {
                        return Ok(Imported::Unchanged);
                    }
                }
                (_, true) => Imported::Replaced,
                (Some(Ok(_)), false) => {
                    return Err(err(format!(
                        "{rel} already holds a different `{}`; refused because {what}. Pass --force only to replace it on purpose",
                        req.name
                    )));
                }
                (Some(Err(e)), false) => {
                    return Err(err(format!(
                        "{rel} exists and cannot be compared: {e}; pass --force only to replace it on purpose"
                    )));
                }
                (None, false) => {
                    return Err(err(format!(
                        "{rel} already exists; pass --identity (or {IDENTITY_VAR}) so fleetc can compare (an identical input keeps the committed file), or --force to replace it: {what}"
                    )));
                }
            }
        }
    };
    let sealed = seal(&recipients, req.plaintext)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| err(format!("cannot create {}: {e}", parent.display())))?;
    }
    let tmp = path.with_extension("age.fleetc-tmp");
    std::fs::write(&tmp, &sealed)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| err(format!("cannot write {rel}: {e}")))?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keypair() -> (Identity, String) {
        let id = x25519::Identity::generate();
        let public = id.to_public().to_string();
        (Identity(vec![id]), public)
    }

    #[test]
    fn seal_then_open_round_trips_and_is_armored() {
        let (id, public) = keypair();
        let r = parse_recipients(&[public]).unwrap();
        let sealed = seal(&r, b"hello").unwrap();
        assert!(sealed.starts_with(b"-----BEGIN AGE ENCRYPTED FILE-----"));
        assert_eq!(open(&id, &sealed).unwrap().bytes(), b"hello");
        let (other, _) = keypair();
        assert!(open(&other, &sealed).is_err());
    }

    #[test]
    fn identity_errors_never_quote_the_key() {
        let e = Identity::parse("# comment\nAGE-SECRET-KEY-1NOTAKEY\n").unwrap_err();
        assert_eq!(e.0, "line 2 is not an age x25519 identity");
    }

    #[test]
    fn the_flag_wins_over_the_variable_and_empty_is_unset() {
        let flag = Path::new("a.txt");
        assert_eq!(Identity::locate(Some(flag), Some("b.txt".into())), Some(PathBuf::from("a.txt")));
        assert_eq!(Identity::locate(None, Some("b.txt".into())), Some(PathBuf::from("b.txt")));
        assert_eq!(Identity::locate(None, Some("".into())), None);
    }

    #[test]
    fn plaintext_debug_hides_the_bytes() {
        assert_eq!(format!("{:?}", Plaintext::new(b"secret".to_vec())), "Plaintext(<6 bytes>)");
    }
}
