//! [`redact`]: a Talos machine config document with its secret values taken out, in memory.
//! `fleetc drift` compares what a node runs (`talosctl get machineconfig`) with what out/
//! would apply to it; both hold the cluster's secrets, and neither may reach the output, a
//! log line or a file. This is the one place that knows which fields of a Talos document are
//! secret.
//!
//! The fields are those Talos's own redaction replaces (siderolabs/talos v1.13.9): the
//! v1alpha1 document's `machine.token`, `machine.ca.key`, a registry's `auth.{password, auth,
//! identityToken}` and `tls.clientIdentity.key`, a device's `wireguard.privateKey` and a VIP's
//! `equinixMetal.apiToken`/`hcloud.apiToken`, the system disk's `keys[].static.passphrase`,
//! `cluster.{secret, token, aescbcEncryptionSecret, secretboxEncryptionSecret}` and the `key`
//! of `cluster.{serviceAccount, ca, aggregatorCA, etcd.ca}`
//! (`pkg/machinery/config/types/v1alpha1/v1alpha1_provider.go` l.121-245, `Config.Redact`,
//! with the YAML names of `v1alpha1_types.go`); and the multi-document kinds'
//! `SecretDocument.Redact`: a volume's static `passphrase` (`types/block/encryption.go`
//! l.87-99), `RegistryAuthConfig`'s `password`, `auth`, `identityToken`
//! (`types/cri/registry_auth.go` l.150-162), `RegistryTLSConfig`'s `clientIdentity.key`
//! (`types/cri/registry_tls.go` l.187-191), `HCloudVIPConfig`'s `apiToken`
//! (`types/network/hcloud_vip.go` l.154-158), `WireguardConfig`'s `privateKey` and each
//! peer's `presharedKey` (`types/network/wireguard.go` l.311-326), `SideroLinkConfig`'s
//! `apiUrl` (its join token) and `uniqueToken` (`types/siderolink/siderolink.go` l.96-109).
//!
//! The match is by the leaf's key name, whatever document or depth it is at: a field of
//! another kind that shares one of these names is redacted too, which hides its value but
//! never shows a secret.

use serde_json::Value;

/// What a redacted value reads as.
pub const REDACTED: &str = "(redacted)";

/// The key names whose string values are secrets (see the module's documentation).
pub const SECRET_KEYS: &[&str] = &[
    "token",
    "key",
    "secret",
    "aescbcEncryptionSecret",
    "secretboxEncryptionSecret",
    "password",
    "auth",
    "identityToken",
    "privateKey",
    "presharedKey",
    "apiToken",
    "passphrase",
    "apiUrl",
    "uniqueToken",
];

/// One secret taken out of a document: where (the keys and list indices from the document's
/// root) and its value, which the caller compares and then drops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub path: Vec<String>,
    pub value: String,
}

/// Replaces every secret string of `doc` with [`REDACTED`] and returns what it took out.
pub fn redact(doc: &mut Value) -> Vec<Removed> {
    let mut out = Vec::new();
    walk(doc, &mut Vec::new(), &mut out);
    out
}

fn walk(v: &mut Value, at: &mut Vec<String>, out: &mut Vec<Removed>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                at.push(k.clone());
                match child {
                    Value::String(s) if SECRET_KEYS.contains(&k.as_str()) && !s.is_empty() => {
                        out.push(Removed { path: at.clone(), value: std::mem::replace(s, REDACTED.to_owned()) });
                    }
                    _ => walk(child, at, out),
                }
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter_mut().enumerate() {
                at.push(i.to_string());
                walk(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_field_of_talos_is_taken_out() {
        let mut doc = serde_json::json!({
            "machine": {"token": "t0k", "ca": {"crt": "CRT", "key": "K1"}, "certSANs": ["a"],
                "registries": {"config": {"r": {"auth": {"password": "pw", "username": "u"}}}}},
            "cluster": {"secret": "s", "token": "bt", "secretboxEncryptionSecret": "sb",
                "etcd": {"ca": {"crt": "CRT", "key": "K2"}}, "serviceAccount": {"key": "K3"}},
        });
        let removed = redact(&mut doc);
        let text = doc.to_string();
        for secret in ["t0k", "K1", "pw", "\"s\"", "bt", "sb", "K2", "K3"] {
            assert!(!text.contains(secret), "{secret} left in {text}");
        }
        assert!(text.contains("CRT") && text.contains("\"u\""), "certificates and usernames stay: {text}");
        assert_eq!(removed.len(), 8);
        assert!(removed.iter().any(|r| r.path == ["cluster", "etcd", "ca", "key"] && r.value == "K2"));
    }
}
