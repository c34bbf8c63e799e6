//! The user's Talos patches (`patch "…"`): every document is checked against the Talos config
//! schema of each Talos version it reaches (`schemas/talos/<minor>/config.schema.json`,
//! embedded by `upstream::schemas`), and for key material, never accepted (R14, F11; private
//! keys as `upstream::key_material` recognizes them in fleet.kdl too). What a patch changes of
//! the fields fleetc writes and the rules it enforces (R15, R17, R18, R21, …; `overrides=`) is
//! judged against the emitted documents, in `emit::talos::owned`. Diagnostics point into the
//! patch file, with the `patch` line as related.

use std::collections::BTreeMap;

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::diag::{Diagnostic, Diagnostics, Span, codes};
use crate::model::patch::PatchDocument;
use crate::model::{Cluster, DiskSecurity, Environment, Fleet, Machine, Patch, Provider, SystemVolume, Version};
use crate::upstream::key_material::{self, Key};
use crate::upstream::schemas::{DecodedField, TalosSchema};
use crate::upstream::talos_decode::{coerce, pointers, remove, without_directives};

/// The v1alpha1 fields that hold the cluster's identity or a credential (R14): they come
/// from the sealed secrets bundle at apply time.
pub const SECRET_FIELDS: &[&str] = &[
    "/machine/ca",
    "/machine/token",
    "/cluster/id",
    "/cluster/secret",
    "/cluster/token",
    "/cluster/ca",
    "/cluster/aggregatorCA",
    "/cluster/serviceAccount",
    "/cluster/aescbcEncryptionSecret",
    "/cluster/secretboxEncryptionSecret",
    "/cluster/etcd/ca",
];

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    let mut schemas: BTreeMap<(u32, u32), Option<TalosSchema>> = BTreeMap::new();
    let mut reported: Vec<Span> = Vec::new();
    for (env, cluster) in fleet.clusters() {
        // The patch merges into the document model fleetc writes for this cluster's nodes (the
        // 1.14 model through talosctl, the 1.13 model through a consumer on 1.13 machinery,
        // versions/talos.kdl): that model's schema judges it, and the node's machinery judges
        // the merged config in the harness (oracles/talos).
        let model = crate::upstream::talos::cluster_documents(fleet, env, cluster);
        // A v1alpha1 patch merges into the base of the generators' contract (1.13 on 1.14
        // nodes): that contract's schema judges it, where 1.14's would call the fields the
        // base carries deprecated; every other kind is the model's.
        let base = model.min(crate::upstream::talos::table().generator_contract(cluster.talos.value));
        let base_talos = Version::new(base.0, base.1, 0);
        schemas.entry(base).or_insert_with(|| TalosSchema::load(base));
        let talos = Version::new(model.0, model.1, 0);
        schemas.entry(model).or_insert_with(|| TalosSchema::load(model));
        // A model capped by the consumer's machinery (the 1.13 model through the talos
        // provider 0.11 on a 1.14 node): a kind the node's own minor knows is refused for the
        // consumer's sake, and the help says so.
        let node_minor = cluster.talos.value.minor_version();
        let consumer = crate::upstream::talos::cluster_consumer(fleet, env, cluster);
        if model < node_minor {
            schemas.entry(node_minor).or_insert_with(|| TalosSchema::load(node_minor));
        }
        // Bare metal boots Talos in metal mode, the one whose validation requires the install
        // section (siderolabs/talos v1.13.9 `internal/app/machined/pkg/runtime/mode.go`
        // `RequiresInstall`; cloud images, Proxmox's nocloud among them, are installed already).
        let metal = matches!(env.provider, crate::model::Provider::Metal(_));
        for pool in cluster.pools() {
            twice(&pool.patches, None, &mut reported, diags);
            for m in &pool.machines {
                let all: Vec<Patch> = pool.patches.iter().chain(&m.settings.patches).cloned().collect();
                twice(&all, Some(&m.hostname), &mut reported, diags);
                if metal {
                    kernel_args_beside_uki(&all, &mut reported, diags);
                }
            }
            // The machines each patch reaches, for what fleetc writes them (`Reach`).
            let named: Vec<&Machine> = if cluster.is_managed() { Vec::new() } else { pool.machines.iter().collect() };
            let pool_patches = pool.patches.iter().map(|p| (p, named.clone()));
            let node_patches = named.iter().flat_map(|m| m.settings.patches.iter().map(move |p| (p, vec![*m])));
            for (patch, reach) in pool_patches.chain(node_patches) {
                check_outside_values(patch, diags);
                for doc in &patch.file.documents {
                    check_credentials(patch, doc, diags);
                    let refused = check_legacy_encryption(patch, doc, &pool.disk, diags);
                    check_link_mtu(patch, doc, diags);
                    let (at, talos) = if doc.kind() == "v1alpha1" { (base, base_talos) } else { (model, talos) };
                    if pool.role == crate::model::Role::Worker {
                        check_worker_only(patch, doc, talos, &mut reported, diags);
                    }
                    let lag = (model < node_minor
                        && schemas
                            .get_mut(&node_minor)
                            .and_then(Option::as_mut)
                            .is_some_and(|s| s.validator(doc.kind()).is_some()))
                    .then(|| lagging_help(consumer, node_minor, model));
                    if let Some(schema) = schemas.get_mut(&at).and_then(Option::as_mut) {
                        check_schema(patch, doc, talos, schema, (env, &reach), (&refused, lag), diags);
                    }
                    check_rules(patch, doc, cluster, diags);
                }
            }
        }
    }
}

/// Why a kind the node's Talos knows is refused: the consumer that builds the cluster's
/// configs runs older machinery, whose config patcher refuses a kind it does not know
/// (`configpatcher.LoadPatch`; versions/talos.kdl, the consumers that lag).
fn lagging_help(consumer: crate::upstream::talos::Consumer, node: (u32, u32), model: (u32, u32)) -> String {
    use crate::upstream::talos::Consumer;
    let who = match consumer {
        Consumer::TofuProvider(v) => format!("the OpenTofu talos provider {}.{}", v.major, v.minor),
        Consumer::Cabpt(v) => format!("CABPT {v}"),
        Consumer::Talosctl => "talosctl".to_owned(),
    };
    format!(
        "Talos {}.{} knows this document, but {who}, which builds this cluster's machine configs, runs Talos machinery {}.{}: its config patcher refuses a kind it does not know, so fleetc writes the {}.{} model for this cluster (versions/talos.kdl; docs/talos.md, \"Versions\"); the document waits for a release of it on {}.{} machinery",
        node.0, node.1, model.0, model.1, model.0, model.1, node.0, node.1
    )
}

/// `/machine/install/image` → `machine.install.image`
fn dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".").replace("~1", "/").replace("~0", "~")
}

/// `talos` is the document model's minor (its patch number is not used); `reach` the
/// machines fleetc writes node documents for that the patch reaches.
fn check_schema(
    patch: &Patch,
    doc: &PatchDocument,
    talos: Version,
    schema: &mut TalosSchema,
    (env, reach): (&Environment, &[&Machine]),
    (refused, lag): (&[String], Option<String>),
    diags: &mut Diagnostics,
) {
    let version = format!("v{}.{}", talos.major, talos.minor);
    let kind = doc.kind().to_owned();
    if schema.validator(&kind).is_none() {
        let d = Diagnostic::new(&codes::PATCH_SCHEMA, format!("Talos {version} has no config document `{kind}`"))
            .at(doc.place("/kind"))
            .label("unknown kind")
            .related(patch.span, "patch used here");
        diags.push(match lag {
            Some(help) => d.help(help),
            None => d,
        });
        return;
    }
    // A named document deleted as a whole carries only what names it.
    if doc.value.get("$patch").and_then(Value::as_str) == Some("delete") && kind != "v1alpha1" {
        return;
    }
    let mut value = without_directives(&doc.value);
    let raw = |p: &str| doc.places.get(p).and_then(|s| patch.file.text.get(s.start..s.end())).map(str::to_owned);
    if kind == "v1alpha1" {
        // Fields the machinery decodes that its schema leaves out (deprecated.json): each is
        // judged by its own subtree's schema, then taken out of what the main schema sees.
        let decoded = schema.decoded().to_vec();
        for top in decoded.iter().filter(|f| f.within.is_none()) {
            for p in pointers(&value, &top.path) {
                let Some(mut sub) = value.pointer(&p).cloned() else { continue };
                if let Some(s) = &top.schema {
                    coerce(&mut sub, s, &Value::Null, &|q: &str| raw(&format!("{p}{q}")), "");
                }
                if let Some(v) = schema.decoded_validator(&top.path) {
                    for e in v.iter_errors(&sub) {
                        let at = format!("{p}{}", e.instance_path());
                        diags.push(
                            Diagnostic::new(
                                &codes::PATCH_SCHEMA,
                                format!("`{}` is not valid for Talos {version}: {e}", dotted(&at)),
                            )
                            .at(doc.place(&at))
                            .label("invalid here")
                            .related(patch.span, "patch used here"),
                        );
                    }
                }
                deprecated_fields(patch, doc, &version, &decoded, top, &p, (env, reach), refused, diags);
                remove(&mut value, &p);
            }
        }
    }
    if let Some(root) = schema.root(&kind).cloned() {
        coerce(&mut value, &root, schema.defs(), &raw, "");
    }
    let Some(validator) = schema.validator(&kind) else { return };
    // A `required` of the schema is a docgen tag (`schemaRequired: true`), which neither the
    // decoder nor a node enforces: each document's `Validate` says what it needs, and may need
    // less (siderolabs/talos v1.13.9 `pkg/machinery/config/types/network/bridge.go`: `links`
    // is `schemaRequired` at l.77, `BridgeConfigV1Alpha1.Validate` l.166-180 asks only for the
    // name; the property test's generated set, judged by machinery, found it). The harness's
    // machinery judges what `Validate` refuses.
    for e in validator.iter_errors(&value).filter(|e| !matches!(e.kind(), ValidationErrorKind::Required { .. })) {
        let at = e.instance_path().to_string();
        let (span, message, label) = match e.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let field = unexpected.first().cloned().unwrap_or_default();
                let p = format!("{at}/{}", field.replace('~', "~0").replace('/', "~1"));
                let what = if kind == "v1alpha1" { "the machine config" } else { &kind };
                (
                    doc.key_place(&p),
                    format!("`{}` is not a field of {what} in Talos {version}", dotted(&p)),
                    "unknown field",
                )
            }
            _ => {
                let field = if at.is_empty() { kind.clone() } else { dotted(&at) };
                (doc.place(&at), format!("`{field}` is not valid for Talos {version}: {e}"), "invalid here")
            }
        };
        diags.push(
            Diagnostic::new(&codes::PATCH_SCHEMA, message).at(span).label(label).related(patch.span, "patch used here"),
        );
    }
}

/// The deprecated v1alpha1 fields that configure what fleetc writes its own document for:
/// (path, the document, what to write in fleet.kdl instead, Talos's refusal when both are
/// present, whether a machine gets fleetc's document).
type Conflict = (&'static str, &'static str, &'static str, Option<&'static str>, fn(&Environment, &Machine) -> bool);
const FLEETC_WRITES: &[Conflict] = &[
    // fleetc writes a LinkConfig per declared link (emit::talos node_docs); LinkConfig has no
    // V1Alpha1ConflictValidate, so Talos configures the link from both.
    ("machine.network.interfaces", "LinkConfig", "the node's `address` and `link` in fleet.kdl", None, writes_link),
    // siderolabs/talos v1.13.9 pkg/machinery/config/types/network/hostname.go l.151-160
    // (HostnameConfigV1Alpha1.V1Alpha1ConflictValidate), run by config/container/container.go
    // l.617; fleetc writes a HostnameConfig for every machine it names (node_docs).
    (
        "machine.network.hostname",
        "HostnameConfig",
        "the node's name in fleet.kdl",
        Some("static hostname is already set in v1alpha1 config"),
        |_, _| true,
    ),
    // config/types/network/resolver.go l.146-158 (ResolverConfigV1Alpha1.V1Alpha1ConflictValidate).
    (
        "machine.network.nameservers",
        "ResolverConfig",
        "the node's `nameservers` in fleet.kdl",
        Some(".machine.network.nameservers is already set in v1alpha1 config"),
        writes_resolver,
    ),
    (
        "machine.network.searchDomains",
        "ResolverConfig",
        "a `ResolverConfig` patch",
        Some(".machine.network.searchDomains is already set in v1alpha1 config"),
        writes_resolver,
    ),
    (
        "machine.network.disableSearchDomain",
        "ResolverConfig",
        "a `ResolverConfig` patch",
        Some(".machine.network.disableSearchDomain is already set in v1alpha1 config"),
        writes_resolver,
    ),
];

/// The machines a conflict is about: the node of a node patch, else those the patch reaches
/// (one diagnostic for every pool of a cluster patch).
fn whom(patch: &Patch, m: &Machine) -> String {
    if patch.level == crate::model::PatchLevel::Node {
        format!("`{}`", m.hostname)
    } else {
        "machines this patch reaches".to_owned()
    }
}

/// Whether fleetc writes a `LinkConfig` for the machine (emit::talos `node_docs`): its declared
/// links, or on Proxmox the default link with its address.
fn writes_link(env: &Environment, m: &Machine) -> bool {
    !m.settings.links.is_empty() || (matches!(env.provider, Provider::Proxmox(_)) && m.address.is_some())
}

/// Whether fleetc writes a `ResolverConfig` for the machine: its `nameservers`, or on Proxmox
/// (with no links of its own) the environment's `dns`.
fn writes_resolver(env: &Environment, m: &Machine) -> bool {
    !m.settings.nameservers.is_empty()
        || matches!(&env.provider, Provider::Proxmox(p) if m.settings.links.is_empty() && m.address.is_some() && !p.dns.is_empty())
}

/// Warns on the deprecated fields of the top undocumented field `top` found at `at`: the most
/// specific ones with a deprecation text, naming the document that replaces each; an error
/// where Talos refuses the field beside a document fleetc writes for a machine it reaches.
#[allow(clippy::too_many_arguments)]
fn deprecated_fields(
    patch: &Patch,
    doc: &PatchDocument,
    version: &str,
    decoded: &[DecodedField],
    top: &DecodedField,
    at: &str,
    (env, reach): (&Environment, &[&Machine]),
    refused: &[String],
    diags: &mut Diagnostics,
) {
    let mut found: Vec<(String, &DecodedField)> = decoded
        .iter()
        .filter(|f| f.within.as_deref() == Some(top.path.as_str()) && !f.deprecated.is_empty())
        .flat_map(|f| pointers(&doc.value, &f.path).into_iter().filter(|p| p.starts_with(at)).map(move |p| (p, f)))
        .collect();
    let all = found.clone();
    found.retain(|(p, _)| !all.iter().any(|(q, _)| p != q && p.starts_with(&format!("{q}/"))));
    if found.is_empty() {
        found.push((at.to_owned(), top));
    }
    // A field already refused beside fleetc's document (`check_legacy_encryption`, whose help
    // says it is deprecated) is one error, not also a warning; so is the field holding it.
    let under = |a: &str, b: &str| a == b || a.starts_with(&format!("{b}/"));
    found.retain(|(p, _)| !refused.iter().any(|r| under(p, r) || under(r, p)));
    for (p, f) in found {
        let field = dotted(&p);
        let conflict = FLEETC_WRITES.iter().find(|c| c.0 == f.path);
        let hit = conflict.and_then(|c| reach.iter().find(|m| (c.4)(env, m)).map(|m| (c, *m)));
        let replacement = match (conflict, f.replacements.as_slice()) {
            (Some(c), _) => format!("write {} instead (fleetc writes it as a `{}` document)", c.2, c.1),
            (None, []) => "remove it when the machine config no longer needs it".to_owned(),
            (None, r) => format!(
                "write {} instead",
                r.iter().map(|k| format!("a `{k}` document")).collect::<Vec<_>>().join(" or ")
            ),
        };
        let text = if f.deprecated.is_empty() { String::new() } else { format!(": \"{}\"", f.deprecated) };
        let d = match hit {
            Some(((_, kind, _, Some(refusal), _), m)) => Diagnostic::new(
                &codes::PATCH_DEPRECATED_CONFLICT,
                format!("`{field}` conflicts with the `{kind}` fleetc writes for {}: Talos {version} refuses the two together (\"{refusal}\")", whom(patch, m)),
            )
            .label(format!("beside fleetc's {kind}"))
            .help(format!("{replacement}; the field is deprecated{text}")),
            Some(((_, kind, _, None, _), m)) => Diagnostic::new(
                &codes::PATCH_DEPRECATED,
                format!("`{field}` is deprecated in Talos {version}, which still reads it{text}; fleetc also writes a `{kind}` for {}, and both configure the node's network", whom(patch, m)),
            )
            .label("deprecated")
            .help(replacement),
            None => Diagnostic::new(
                &codes::PATCH_DEPRECATED,
                format!("`{field}` is deprecated in Talos {version}, which still reads it{text}"),
            )
            .label("deprecated")
            .help(replacement),
        };
        diags.push(d.at(doc.key_place(&p)).related(patch.span, "patch used here"));
    }
}

/// A patch file listed twice at one level, or reaching one machine twice (`patches` in apply
/// order; `node` the machine when they are its pool's and its own): the second application
/// merges the file's lists again (Talos's merge appends, siderolabs/talos v1.13.9
/// pkg/machinery/config/merge/merge.go l.15-25). Each second `patch` line once.
fn twice(patches: &[Patch], node: Option<&str>, reported: &mut Vec<Span>, diags: &mut Diagnostics) {
    for (i, p) in patches.iter().enumerate() {
        let Some(first) = patches[..i].iter().find(|f| f.path.value == p.path.value) else { continue };
        if reported.contains(&p.span) {
            continue;
        }
        reported.push(p.span);
        let levels = if first.level == p.level {
            format!("at the {} level", p.level.as_str())
        } else {
            format!("at the {} and the {} level", first.level.as_str(), p.level.as_str())
        };
        let reach = match node {
            Some(n) if first.level != p.level => format!(", and both reach node `{n}`"),
            _ => String::new(),
        };
        diags.push(
            Diagnostic::new(
                &codes::PATCH_TWICE,
                format!("`{}` is listed twice ({levels}{reach})", p.path.value),
            )
            .at(p.path.span)
            .label("again")
            .related(first.path.span, "first here")
            .help("a patch applies once per machine; a second application merges its lists again (Talos appends list items): list it once, at the level that reaches every machine it is for"),
        );
    }
}

/// `machine.install.extraKernelArgs` in the patches of one bare-metal machine (in apply order)
/// that leave the generator's `grubUseUKICmdline: true` (Talos ≥ 1.12, every minor fleetc
/// configures): Talos in metal mode refuses the config (siderolabs/talos v1.13.9
/// `pkg/machinery/config/types/v1alpha1/v1alpha1_validation.go` l.101-117, under
/// `mode.RequiresInstall()`). Each place once.
fn kernel_args_beside_uki(patches: &[Patch], reported: &mut Vec<Span>, diags: &mut Diagnostics) {
    let v1 = || {
        patches
            .iter()
            .flat_map(|p| p.file.documents.iter().map(move |d| (p, d)))
            .filter(|(_, d)| d.kind() == "v1alpha1")
    };
    // The last patch that writes the flag decides it (a later patch's scalar replaces).
    let uki = v1().filter_map(|(_, d)| d.value.pointer("/machine/install/grubUseUKICmdline")).next_back();
    if uki == Some(&Value::Bool(false)) {
        return;
    }
    for (p, d) in v1() {
        let ptr = "/machine/install/extraKernelArgs";
        if d.value.pointer(ptr).and_then(Value::as_array).is_none_or(|a| a.is_empty()) {
            continue;
        }
        let at = d.key_place(ptr);
        if reported.contains(&at) {
            continue;
        }
        reported.push(at);
        diags.push(
            Diagnostic::new(
                &codes::PATCH_KERNEL_ARGS_UKI,
                format!("`{}` sets `machine.install.extraKernelArgs`, which Talos refuses beside the `grubUseUKICmdline: true` it generates (\"install.extraKernelArgs and install.grubUseUKICmdline can't be used together\")", p.path.value),
            )
            .at(at)
            .label("refused beside grubUseUKICmdline")
            .related(p.span, "patch used here"),
        );
    }
}

/// The deprecated `machine.systemDiskEncryption.<volume>` for a volume fleetc encrypts with a
/// `VolumeConfig` (`encrypt`): Talos refuses the two ("system disk encryption for %q is
/// configured in both v1alpha1.Config and VolumeConfig", siderolabs/talos v1.13.9
/// pkg/machinery/config/types/block/volume_config.go l.282-299, run by
/// config/container/container.go l.617).
/// Returns the pointers it refused.
fn check_legacy_encryption(
    patch: &Patch,
    doc: &PatchDocument,
    disk: &DiskSecurity,
    diags: &mut Diagnostics,
) -> Vec<String> {
    let mut refused = Vec::new();
    if doc.kind() != "v1alpha1" {
        return refused;
    }
    for (key, volume, label) in
        [("state", SystemVolume::State, "STATE"), ("ephemeral", SystemVolume::Ephemeral, "EPHEMERAL")]
    {
        let p = format!("/machine/systemDiskEncryption/{key}");
        let (Some(_), Some(e)) = (doc.value.pointer(&p), disk.volume(volume)) else { continue };
        diags.push(
            Diagnostic::new(
                &codes::PATCH_DEPRECATED_CONFLICT,
                format!("`{}` conflicts with the encrypted `VolumeConfig` {label} fleetc writes for `encrypt`: Talos refuses the two together (\"system disk encryption for \\\"{label}\\\" is configured in both v1alpha1.Config and VolumeConfig\")", dotted(&p)),
            )
            .at(doc.key_place(&p))
            .label("beside fleetc's VolumeConfig")
            .related(e.volume.span, "encrypted here")
            .related(patch.span, "patch used here")
            .help("remove it: `encrypt` in fleet.kdl is where the volume's encryption is set (the field is deprecated: \"Use `VolumeConfig` instead.\")"),
        );
        refused.push(p);
    }
    refused
}

/// Environment variables of an `ExtensionServiceConfig` whose name says they hold a
/// credential (`TS_AUTHKEY`, `…_TOKEN`, `…_PASSWORD`, …).
const CREDENTIAL_NAMES: &[&str] =
    &["AUTHKEY", "AUTH_KEY", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "API_KEY", "APIKEY", "PRIVATE_KEY"];

/// Credentials in a patch (talos-3 M3): a static LUKS passphrase (`encryption.keys[].static`,
/// what `fleet::disk::static-key-persisted` refuses for `encrypt key="static"`), a registry's
/// `password`, `auth` or `identityToken` (RegistryAuthConfig, and the deprecated
/// `machine.registries.config`), and an extension service's environment variable named as a
/// credential. The patch is committed and copied into out/ (R14, F11).
fn check_credentials(patch: &Patch, doc: &PatchDocument, diags: &mut Diagnostics) {
    let v = &doc.value;
    let mut found: Vec<(String, &str)> = Vec::new();
    let keys = |enc: &str| -> Vec<String> {
        let Some(Value::Array(keys)) = v.pointer(&format!("{enc}/keys")) else { return Vec::new() };
        (0..keys.len())
            .map(|i| format!("{enc}/keys/{i}/static/passphrase"))
            .filter(|p| v.pointer(p).is_some())
            .collect()
    };
    for p in keys("/encryption") {
        found.push((p, "holds a static disk-encryption passphrase"));
    }
    for volume in ["state", "ephemeral"] {
        for p in keys(&format!("/machine/systemDiskEncryption/{volume}")) {
            found.push((p, "holds a static disk-encryption passphrase"));
        }
    }
    if doc.kind() == "RegistryAuthConfig" {
        for f in ["password", "auth", "identityToken"] {
            if v.get(f).is_some() {
                found.push((format!("/{f}"), "holds a registry credential"));
            }
        }
    }
    if let Some(Value::Object(registries)) = v.pointer("/machine/registries/config") {
        for host in registries.keys() {
            for f in ["password", "auth", "identityToken"] {
                let p = format!("/machine/registries/config/{}/auth/{f}", host.replace('~', "~0").replace('/', "~1"));
                if v.pointer(&p).is_some() {
                    found.push((p, "holds a registry credential"));
                }
            }
        }
    }
    if doc.kind() == "ExtensionServiceConfig"
        && let Some(Value::Array(env)) = v.get("environment")
    {
        for (i, e) in env.iter().enumerate() {
            let Some((name, value)) = e.as_str().and_then(|e| e.split_once('=')) else { continue };
            let upper = name.to_ascii_uppercase();
            if !value.is_empty() && CREDENTIAL_NAMES.iter().any(|c| upper.contains(c)) {
                found.push((format!("/environment/{i}"), "holds a credential in an extension service's environment"));
            }
        }
    }
    for (p, what) in found {
        diags.push(
            Diagnostic::new(&codes::PATCH_SECRET, format!("`{}` {what} (`{}`)", patch.path.value, dotted(&p)))
                .at(doc.place(&p))
                .label("a credential")
                .related(patch.span, "patch used here")
                .help("a patch is committed and copied into out/, so a credential in it is in git and in every consumer's state; fleetc never writes one there (R14, F11): use a key that is not stored (`encrypt key=\"tpm\"` or `\"nodeid\"`), or keep the credential in a sealed input"),
        );
    }
}

/// What Talos's `Validate` refuses on a worker's config, for a patch that reaches a worker pool:
/// the Talos API from Kubernetes ("feature Kubernetes Talos API Access can only be enabled on
/// control plane machines", siderolabs/talos v1.13.9
/// `pkg/machinery/config/types/v1alpha1/v1alpha1_validation.go` l.336-339). Once per document.
fn check_worker_only(
    patch: &Patch,
    doc: &PatchDocument,
    talos: Version,
    reported: &mut Vec<Span>,
    diags: &mut Diagnostics,
) {
    const AT: &str = "/machine/features/kubernetesTalosAPIAccess/enabled";
    if doc.kind() != "v1alpha1" || doc.value.pointer(AT).and_then(Value::as_bool) != Some(true) {
        return;
    }
    let span = doc.place(AT);
    if reported.contains(&span) {
        return;
    }
    reported.push(span);
    diags.push(
        Diagnostic::new(
            &codes::PATCH_SCHEMA,
            format!(
                "`machine.features.kubernetesTalosAPIAccess` is not valid for Talos v{}.{} on a worker: \"feature Kubernetes Talos API Access can only be enabled on control plane machines\"",
                talos.major, talos.minor
            ),
        )
        .at(span)
        .label("reaches a worker pool")
        .related(patch.span, "patch used here")
        .help("Talos's validation refuses the worker's config, so the node never takes it: write the patch in `control-plane { patch … }`"),
    );
}

/// The link documents whose `mtu` Linux bounds at `ETH_MAX_MTU` (65535): Ethernet links and the
/// bonds, VLANs and bridges over them. Talos accepts any uint32 (siderolabs/talos v1.13.9
/// pkg/machinery/config/types/network/link.go l.95, no bound in `CommonLinkConfig.Validate`).
const MTU_BOUNDED: &[&str] = &["LinkConfig", "BondConfig", "VLANConfig", "BridgeConfig"];

fn check_link_mtu(patch: &Patch, doc: &PatchDocument, diags: &mut Diagnostics) {
    let mut at: Vec<String> = Vec::new();
    if MTU_BOUNDED.contains(&doc.kind()) {
        at.push("/mtu".into());
    }
    if let Some(Value::Array(ifaces)) = doc.value.pointer("/machine/network/interfaces") {
        at.extend((0..ifaces.len()).map(|i| format!("/machine/network/interfaces/{i}/mtu")));
    }
    for p in at {
        let Some(mtu) = doc.value.pointer(&p).and_then(Value::as_u64).filter(|m| *m > 65535) else { continue };
        diags.push(
            Diagnostic::new(&codes::PATCH_LINK_MTU, format!("MTU {mtu} is above 65535, the largest Linux sets on a link"))
                .at(doc.place(&p))
                .label("above 65535")
                .related(patch.span, "patch used here")
                .help("every Ethernet driver's maximum MTU is at most ETH_MAX_MTU (65535), and Linux refuses more when Talos configures the link; Talos's config check does not bound it (jumbo frames are 9000)"),
        );
    }
}
fn check_rules(patch: &Patch, doc: &PatchDocument, _cluster: &Cluster, diags: &mut Diagnostics) {
    // What a patch changes of fleetc's own fields and rules (R15, R17, R21, …) is judged
    // against the emitted documents, in `emit::talos::owned`; here only key material.
    let v = &doc.value;
    if doc.kind() == "v1alpha1" {
        for p in SECRET_FIELDS {
            if v.pointer(p).is_some() {
                secret(patch, doc, p, "holds the cluster's identity", diags);
            }
        }
    }
    for (p, s) in strings(v, String::new()) {
        match key_material::find(&s) {
            Some((Key::Pem, _)) => secret(patch, doc, &p, "holds a PEM private key", diags),
            Some((key, _)) => secret(patch, doc, &p, &format!("holds {}", key.describe()), diags),
            None => {}
        }
    }
}

fn secret(patch: &Patch, doc: &PatchDocument, pointer: &str, what: &str, diags: &mut Diagnostics) {
    diags.push(
        Diagnostic::new(&codes::PATCH_SECRET, format!("`{}` {what} (`{}`)", patch.path.value, dotted(pointer)))
            .at(doc.place(pointer))
            .label("key material")
            .related(patch.span, "patch used here"),
    );
}

/// A private key outside every value of a patch file: in a comment, or in a file that does not
/// parse. Its bytes reach out/ as they are (`emit::talos::patches` copies the file, comments
/// included), so such a key is refused like one in a value (R14, F11), at its place in the file.
fn check_outside_values(patch: &Patch, diags: &mut Diagnostics) {
    let in_a_value = patch
        .file
        .documents
        .iter()
        .any(|d| strings(&d.value, String::new()).iter().any(|(_, s)| key_material::find(s).is_some()));
    let Some((key, at)) = key_material::find(&patch.file.text).filter(|_| !in_a_value) else { return };
    let place = if patch.file.documents.is_empty() { "" } else { " outside its values (in a comment)" };
    diags.push(
        Diagnostic::new(&codes::PATCH_SECRET, format!("`{}` holds {}{place}", patch.path.value, key.describe()))
            .at(Span::new(patch.file.id, at.start, at.end - at.start))
            .label("key material")
            .related(patch.span, "patch used here"),
    );
}

/// Every string of a document with its JSON pointer.
fn strings(v: &Value, at: String) -> Vec<(String, String)> {
    match v {
        Value::String(s) => vec![(at, s.clone())],
        Value::Array(a) => a.iter().enumerate().flat_map(|(i, x)| strings(x, format!("{at}/{i}"))).collect(),
        Value::Object(m) => m
            .iter()
            .flat_map(|(k, x)| strings(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"))))
            .collect(),
        _ => Vec::new(),
    }
}
