//! The `fleet::secrets` codes: key material and sealed secrets. Private-key material in the fleet
//! is found by `src/check/key_material.rs`; inherited recipients are reported while resolving, in
//! `src/model/resolve/mod.rs`.

codes! {
    KEY_MATERIAL_IN_FLEET = "fleet::secrets::key-material", Error, Some("F11"),
    Some("fleet.kdl is committed to git, and its strings reach out/, machine configs and tools' command lines: a private key belongs in a sealed input (`fleetc secrets import <env>/<cluster> <name> FILE`, named in the cluster's `sealed`), never in fleet.kdl (F11, R14)"),
"## What it does
Reports a string anywhere in fleet.kdl (an argument or a property, of any node, whether
fleetc reads it or not), or a comment (`//`, `/* … */`, or a part commented out with `/-`),
that holds a private key: a PEM private-key block (`-----BEGIN … PRIVATE KEY-----`, PKCS#1/#8,
EC, OpenSSH, encrypted, PGP), the same block base64-encoded, an age identity
(`AGE-SECRET-KEY-1…`, or a plugin identity `AGE-PLUGIN-…-1…`), or a PuTTY key file. In a
comment it points at the key's header or prefix, so that the report does not print the key.
Nothing is built while it is there.

## Why (F11, R14)
fleet.kdl is committed, reviewed in pull requests and copied into out/ (names, labels,
descriptions, patches): a key written there is in git's history for ever, and in every
artifact and log that carries the string. Keys and credentials reach a cluster only from a
sealed input, decrypted at apply time in memory or in a 0600 file.

## Example
    cluster \"main\" {
        label \"-----BEGIN PRIVATE KEY-----\\nMIIEv…\"

## Instead
Remove the string, rotate the key (it has been on disk unencrypted), and seal it:
`fleetc secrets import staging/main scaleway-api-key key.txt`, with `sealed
\"scaleway-api-key\"` in the cluster. Public material (certificates, `age1…` recipients) is fine.
";

    RECIPIENTS_INHERITED = "fleet::secrets::recipients-inherited", Warning, Some("R14"),
    Some("whoever holds a key of the base environment can decrypt this environment's sealed inputs, its Talos secrets bundle included (R14); state `recipients` here, even the same keys, to make that a decision"),
"## What it does
Warns when an environment inherits its age `recipients` through `from=` without stating them.

## Why (R14)
Sealed inputs (the Talos secrets bundle, the cluster's identity, and API keys) are encrypted to
the environment's recipients. Inheriting them silently gives every holder of a staging key the
keys to production. Stating them in the environment, even the same ones, is the decision.

## Example
    environment \"production\" from=\"staging\" {
        network \"10.40.0.0/22\"
    }

## Instead
    environment \"production\" from=\"staging\" {
        network \"10.40.0.0/22\"
        recipients \"age1…production key…\"
    }
";

    SEALED_NOT_IMPORTED = "fleet::secrets::not-imported", Warning, Some("R14"), None,
"## What it does
Warns about a `sealed` input of a cluster whose sealed directory (`secrets/<env>/<cluster>/`)
exists, holding other inputs, but not this one (`secrets/<env>/<cluster>/<name>.age`).

## Why (R14)
`fleetc apply` decrypts every sealed input a cluster lists before anything runs, and refuses
to start while one is missing. The check looks only at whether the file exists, never at its
content: nothing secret is read. Before a cluster's first import its directory does not
exist and nothing is said (a starter's first `fleetc check` stays clean); `fleetc apply
--plan` lists each input as present or missing.

## Example
    sealed \"talos-secrets\" \"argocd-repo\"
with only `secrets/home/k8s/talos-secrets.age` committed.

## Instead
    fleetc secrets import home/k8s argocd-repo repo-credentials.yaml
";
}
