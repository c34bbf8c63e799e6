//! The Talos machine secrets bundle, as `talosctl gen secrets` writes it: validated before it
//! is sealed, so that a wrong file (a machine config, a talosconfig, half a bundle) is refused
//! at import rather than at the first apply.
//!
//! The shape follows Talos's own `Bundle.Validate` (siderolabs/talos,
//! `pkg/machinery/config/generate/secrets/bundle.go`): `cluster.id` and `cluster.secret`;
//! `secrets.bootstraptoken` and exactly one of `secrets.secretboxencryptionsecret` (Talos ≥ 1.3)
//! and `secrets.aescbcencryptionsecret`; `trustdinfo.token`; `certs.etcd`, `certs.k8s`,
//! `certs.k8saggregator` and `certs.os` each with `crt` and `key`, and
//! `certs.k8sserviceaccount` with `key` only. Certificates and keys are base64-encoded PEM.

use serde::Deserialize;

#[derive(Deserialize)]
struct Bundle {
    cluster: Option<Cluster>,
    secrets: Option<Secrets>,
    trustdinfo: Option<TrustdInfo>,
    certs: Option<Certs>,
}

#[derive(Deserialize)]
struct Cluster {
    id: Option<String>,
    secret: Option<String>,
}

#[derive(Deserialize)]
struct Secrets {
    bootstraptoken: Option<String>,
    secretboxencryptionsecret: Option<String>,
    aescbcencryptionsecret: Option<String>,
}

#[derive(Deserialize)]
struct TrustdInfo {
    token: Option<String>,
}

#[derive(Deserialize)]
struct Certs {
    etcd: Option<Pair>,
    k8s: Option<Pair>,
    k8saggregator: Option<Pair>,
    k8sserviceaccount: Option<Pair>,
    os: Option<Pair>,
}

#[derive(Deserialize)]
struct Pair {
    crt: Option<String>,
    key: Option<String>,
}

/// Checks that `text` is a complete Talos secrets bundle. The error lists every problem by
/// field path and never quotes a value.
pub fn validate(text: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(text).map_err(|_| "it is not UTF-8 text".to_owned())?;
    let bundle: Bundle = serde_saphyr::from_str(text)
        .map_err(|_| "it is not a YAML mapping in the shape `talosctl gen secrets` writes".to_owned())?;
    let mut problems = Vec::new();
    let need = |problems: &mut Vec<String>, value: Option<&String>, path: &str| {
        if value.is_none_or(|v| v.trim().is_empty()) {
            problems.push(format!("`{path}` is missing"));
            false
        } else {
            true
        }
    };
    let cluster = bundle.cluster.as_ref();
    need(&mut problems, cluster.and_then(|c| c.id.as_ref()), "cluster.id");
    need(&mut problems, cluster.and_then(|c| c.secret.as_ref()), "cluster.secret");
    let secrets = bundle.secrets.as_ref();
    need(&mut problems, secrets.and_then(|s| s.bootstraptoken.as_ref()), "secrets.bootstraptoken");
    need(&mut problems, bundle.trustdinfo.as_ref().and_then(|t| t.token.as_ref()), "trustdinfo.token");
    let present = |v: Option<&String>| v.is_some_and(|v| !v.trim().is_empty());
    let secretbox = present(secrets.and_then(|s| s.secretboxencryptionsecret.as_ref()));
    let aescbc = present(secrets.and_then(|s| s.aescbcencryptionsecret.as_ref()));
    match (secretbox, aescbc) {
        (false, false) => problems.push("`secrets.secretboxencryptionsecret` is missing".to_owned()),
        (true, true) => problems.push(
            "`secrets.secretboxencryptionsecret` and `secrets.aescbcencryptionsecret` are both set; a bundle has one"
                .to_owned(),
        ),
        _ => {}
    }
    let certs = bundle.certs.as_ref();
    for (name, pair, with_crt) in [
        ("etcd", certs.and_then(|c| c.etcd.as_ref()), true),
        ("k8s", certs.and_then(|c| c.k8s.as_ref()), true),
        ("k8saggregator", certs.and_then(|c| c.k8saggregator.as_ref()), true),
        ("k8sserviceaccount", certs.and_then(|c| c.k8sserviceaccount.as_ref()), false),
        ("os", certs.and_then(|c| c.os.as_ref()), true),
    ] {
        let fields: &[(&str, Option<&String>)] = if with_crt {
            &[("crt", pair.and_then(|p| p.crt.as_ref())), ("key", pair.and_then(|p| p.key.as_ref()))]
        } else {
            &[("key", pair.and_then(|p| p.key.as_ref()))]
        };
        for (field, value) in fields {
            let path = format!("certs.{name}.{field}");
            if need(&mut problems, *value, &path) && !is_base64_pem(value.map_or("", String::as_str)) {
                problems.push(format!("`{path}` is not base64-encoded PEM"));
            }
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
}

fn is_base64_pem(v: &str) -> bool {
    super::base64::decode(v.trim()).is_some_and(|b| b.starts_with(b"-----BEGIN "))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        super::super::base64::encode(s.as_bytes())
    }

    /// A bundle of the shape `talosctl gen secrets` writes (the PEM bodies are not real keys).
    pub(crate) fn sample(cluster_id: &str) -> String {
        let crt = b64("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        let key = b64("-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----\n");
        format!(
            "cluster:\n    id: {cluster_id}\n    secret: c2VjcmV0LWNsdXN0ZXItc2VjcmV0\nsecrets:\n    bootstraptoken: abcdef.0123456789abcdef\n    secretboxencryptionsecret: c2VjcmV0Ym94LXNlY3JldC12YWx1ZQ==\ntrustdinfo:\n    token: ghijkl.0123456789abcdef\ncerts:\n    etcd:\n        crt: {crt}\n        key: {key}\n    k8s:\n        crt: {crt}\n        key: {key}\n    k8saggregator:\n        crt: {crt}\n        key: {key}\n    k8sserviceaccount:\n        key: {key}\n    os:\n        crt: {crt}\n        key: {key}\n"
        )
    }

    #[test]
    fn a_complete_bundle_is_accepted() {
        validate(sample("Y2x1c3Rlci1pZA==").as_bytes()).unwrap();
    }

    #[test]
    fn every_missing_field_is_named() {
        let text = sample("x")
            .replace("    bootstraptoken: abcdef.0123456789abcdef\n", "")
            .replace("    os:\n", "    other:\n");
        let err = validate(text.as_bytes()).unwrap_err();
        assert!(err.contains("`secrets.bootstraptoken` is missing"), "{err}");
        assert!(err.contains("`certs.os.crt` is missing"), "{err}");
        assert!(err.contains("`certs.os.key` is missing"), "{err}");
    }

    #[test]
    fn a_machine_config_is_not_a_bundle() {
        let err = validate(b"version: v1alpha1\nmachine:\n  type: controlplane\n").unwrap_err();
        assert!(err.contains("`cluster.id` is missing"), "{err}");
        assert!(err.contains("`certs.etcd.crt` is missing"), "{err}");
    }

    #[test]
    fn keys_must_be_base64_pem() {
        let text = sample("x").replacen("        key: ", "        key: bm90LXBlbQ==\n        old: ", 1);
        let err = validate(text.as_bytes()).unwrap_err();
        assert_eq!(err, "`certs.etcd.key` is not base64-encoded PEM");
    }

    #[test]
    fn errors_never_quote_values() {
        let text = sample("TOP-SECRET-ID")
            .replace("secretboxencryptionsecret", "aescbcencryptionsecret: x\n    secretboxencryptionsecret");
        let err = validate(text.as_bytes()).unwrap_err();
        assert!(!err.contains("TOP-SECRET"), "{err}");
        assert!(err.contains("both set"), "{err}");
    }
}
