//! `environment "<name>" { … }`: the environment's own children (its one provider block,
//! handed to `provider`; `state`; `network`, `gateway`, `admin-ranges`, `recipients`; the
//! services `postgres`, `bucket`, `registry`, `secret`) and its `cluster`s (handed to
//! `cluster`), into [`Environment`], [`StateBackend`], [`Postgres`], [`Bucket`], [`Registry`]
//! and [`SecretItem`]. Its `from=` chain is already applied (`inherit`).

use super::reader::{Reader, missing, unknown_child};
use super::settings::{SETTINGS, Settings};
use super::urls::{UrlUse, expect_url, parse_ip};
use super::{Resolver, duplicates};
use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{
    Bucket, Environment, Ipv4Net, METAL_SIZE, PatchLevel, Postgres, Provider, Registry, SecretItem, Spanned,
    StateBackend,
};
use crate::syntax::Node;

impl Resolver<'_> {
    pub(super) fn environment(
        &mut self,
        node: &Node,
        written: &Node,
        fleet: &str,
        inherited: &Settings,
    ) -> Option<Environment> {
        let mut r = Reader::new(node, &["from"], self.diags);
        let name = r.name_arg(self.diags);
        let from = r.prop_str("from", self.diags);
        r.finish(true, self.diags);
        let name = name?;
        let mut settings = inherited.clone();
        let mut provider = None;
        let mut state_node = None;
        let mut network = None;
        let mut gateway = None;
        let mut admin_ranges = Vec::new();
        let mut recipients = Vec::new();
        let mut postgres = Vec::new();
        let mut buckets = Vec::new();
        let mut registries = Vec::new();
        let mut secrets = Vec::new();
        let mut cluster_nodes = Vec::new();
        let mut app_nodes: Vec<&Node> = Vec::new();
        self.patch_level = PatchLevel::Environment;
        for child in node.children() {
            // A repeat is reported on the tree (`duplicates`) and not read: the first counts.
            if duplicates::is_repeat(child, node.children()) {
                continue;
            }
            if self.setting(child, &mut settings) {
                continue;
            }
            let d = &mut *self.diags;
            match child.name.value.as_str() {
                "scaleway" | "proxmox" | "metal" => {
                    if let Some(prev) = &provider {
                        let prev: &Provider = prev;
                        d.push(
                            Diagnostic::new(&codes::DUPLICATE_NAME, "an environment has one infrastructure provider")
                                .at(child.name.span)
                                .label("second provider")
                                .related(prev.span(), "first provider")
                                .help("split the environment in two, one per provider (R27: the cluster blocks can stay identical)"),
                        );
                    } else if child.name.value == "metal" {
                        provider = self.metal(child);
                    } else {
                        provider = self.provider(child);
                    }
                }
                "state" => state_node = Some(child),
                "network" => {
                    let mut r = Reader::new(child, &[], d);
                    network = r.arg_parsed::<Ipv4Net>(d, "the private network's CIDR");
                    r.finish(false, d);
                }
                "gateway" => {
                    let mut r = Reader::new(child, &[], d);
                    gateway = r
                        .arg_str(d, "the public address through which the Talos API is reached")
                        .and_then(|s| parse_ip(&s, d));
                    r.finish(false, d);
                }
                "admin-ranges" => {
                    let mut r = Reader::new(child, &[], d);
                    admin_ranges = r.rest_parsed::<Ipv4Net>(d, "source ranges in CIDR form");
                    r.finish(false, d);
                }
                "recipients" => recipients = age_recipients(child, d),
                "postgres" => postgres.extend(postgres_instance(child, d)),
                "bucket" | "registry" => store(child, fleet, &name.value, &mut buckets, &mut registries, d),
                "secret" => secrets.extend(secret(child, d)),
                "cluster" => cluster_nodes.push(child),
                "app" => app_nodes.push(child),
                _ => unknown_child(child, "environment", &[SETTINGS, ENVIRONMENT_CHILDREN].concat(), self.diags),
            }
        }
        let head = written.head_span();
        if let Some(from) = &from {
            recipients_inherited(&name, from, &recipients, written, self.diags);
        }
        // Clusters are resolved even when the environment is incomplete, so that every
        // problem of the run is reported at once.
        if let Some(Provider::Metal(m)) = &provider {
            // A machine is what it is: pools on metal name no size (docs/metal.md).
            settings.pool.size.get_or_insert_with(|| Spanned::new(METAL_SIZE.to_owned(), m.span));
        }
        let mut clusters = Vec::new();
        for c in cluster_nodes {
            if let Some(cluster) = self.cluster(c, &name.value, &settings, &app_nodes) {
                clusters.push(cluster);
            }
        }
        let (provider, state, network) = self.foundations(node, written, provider, state_node, network)?;
        Some(Environment {
            name,
            from,
            provider,
            state,
            network,
            gateway,
            admin_ranges,
            recipients,
            postgres,
            buckets,
            registries,
            secrets,
            clusters,
            span: head,
        })
    }

    /// The provider, state backend and network no environment goes without, each reported
    /// missing at the environment as `written` unless it was written with a value already
    /// reported. Bare metal has no state backend.
    fn foundations(
        &mut self,
        node: &Node,
        written: &Node,
        provider: Option<Provider>,
        state_node: Option<&Node>,
        network: Option<Spanned<Ipv4Net>>,
    ) -> Option<(Provider, Option<StateBackend>, Spanned<Ipv4Net>)> {
        let provider_written =
            node.children().iter().any(|c| matches!(c.name.value.as_str(), "scaleway" | "proxmox" | "metal"));
        let Some(provider) = provider else {
            if provider_written {
                return None;
            }
            self.diags.push(
                missing(written, "an infrastructure provider (`scaleway`, `proxmox` or `metal`)")
                    .help("an environment runs on one provider; state it, or inherit it with `from=`"),
            );
            return None;
        };
        let state =
            match state_node {
                Some(n) => Some(self.state(n, &provider)?),
                // Bare metal has no cloud to hold state for: no OpenTofu root at all.
                None if matches!(provider, Provider::Metal(_)) => None,
                None => {
                    self.diags.push(missing(written, "a `state` backend").help(
                        "OpenTofu state lives in an S3-compatible bucket with locking (R3): `state bucket=\"…\"`",
                    ));
                    return None;
                }
            };
        let Some(network) = network else {
            if node.children().iter().any(|c| c.name.value == "network") {
                return None;
            }
            self.diags.push(
                missing(written, "a private `network`")
                    .help("nodes live on a private network (R6, R12): `network \"10.10.0.0/22\"`"),
            );
            return None;
        };
        Some((provider, state, network))
    }

    fn state(&mut self, node: &Node, provider: &Provider) -> Option<StateBackend> {
        let d = &mut *self.diags;
        let r = Reader::new(node, &["bucket", "region", "endpoint", "skip-checksum"], d);
        let bucket = r.require_str("bucket", d);
        let region = r.prop_str("region", d);
        let endpoint = r.prop_str("endpoint", d);
        if let Some(e) = &endpoint {
            expect_url(e, "the state bucket's `endpoint`", UrlUse::S3, d);
        }
        let skip_checksum = r.prop_bool("skip-checksum", d).is_some_and(|b| b.value);
        r.finish(false, d);
        let (region, endpoint) = match (provider, region, endpoint) {
            (_, Some(region), Some(endpoint)) => (region, endpoint),
            (Provider::Scaleway(s), region, endpoint) => {
                let region = region.unwrap_or_else(|| s.region.clone());
                let endpoint = endpoint
                    .unwrap_or_else(|| Spanned::new(format!("https://s3.{}.scw.cloud", region.value), region.span));
                (region, endpoint)
            }
            (Provider::Proxmox(_) | Provider::Metal(_), _, _) => {
                d.push(
                    missing(node, "`region` and `endpoint`")
                        .help("outside Scaleway, say which S3-compatible store holds the state: `state bucket=\"…\" region=\"…\" endpoint=\"https://…\"`"),
                );
                return None;
            }
        };
        Some(StateBackend { bucket: bucket?, region, endpoint, skip_checksum, span: node.head_span() })
    }
}

/// The children an unknown child's help lists besides the settings.
const ENVIRONMENT_CHILDREN: &[&str] = &[
    "scaleway",
    "proxmox",
    "metal",
    "state",
    "network",
    "gateway",
    "admin-ranges",
    "recipients",
    "postgres",
    "bucket",
    "registry",
    "secret",
    "cluster",
    "app",
];

/// `recipients "age1…" …`: the age public keys the environment's sealed inputs are encrypted
/// to, each refused unless it is one.
fn age_recipients(child: &Node, d: &mut Diagnostics) -> Vec<Spanned<String>> {
    let mut r = Reader::new(child, &[], d);
    let recipients = r.rest_str(d, "age recipients (age1…)");
    for rcp in &recipients {
        if !rcp.value.starts_with("age1") || rcp.value.parse::<age::x25519::Recipient>().is_err() {
            d.push(
                Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is not an age x25519 recipient", rcp.value))
                    .at(rcp.span)
                    .label("not an age public key")
                    .help("recipients are the public keys `age-keygen` prints (`age1…`); never put an identity (`AGE-SECRET-KEY-…`) in fleet.kdl"),
            );
        }
    }
    r.finish(false, d);
    recipients
}

/// Warns that an environment with `from=` decrypts with its base's recipients when it
/// states none of its own.
fn recipients_inherited(
    name: &Spanned<String>,
    from: &Spanned<String>,
    recipients: &[Spanned<String>],
    written: &Node,
    diags: &mut Diagnostics,
) {
    if !recipients.is_empty() && !written.children().iter().any(|c| c.name.value == "recipients") {
        let mut d = Diagnostic::new(
            &codes::RECIPIENTS_INHERITED,
            format!(
                "environment `{}` inherits its age recipients from `{}` without stating them",
                name.value, from.value
            ),
        )
        .at(from.span)
        .label("recipients inherited from here");
        if let Some(first) = recipients.first() {
            d = d.related(first.span, "the keys that will decrypt this environment's sealed inputs");
        }
        diags.push(d);
    }
}

/// `postgres "<name>" node-type=… [engine=…] [password-version=…] [was=…]`.
fn postgres_instance(child: &Node, d: &mut Diagnostics) -> Option<Postgres> {
    let mut r = Reader::new(child, &["node-type", "engine", "password-version", "was"], d);
    let pname = r.name_arg(d);
    let node_type = r.require_str("node-type", d);
    let engine = r.prop_str("engine", d).unwrap_or_else(|| Spanned::new("PostgreSQL-16".into(), r.span()));
    let password_version = r.prop_int::<u32>("password-version", d).unwrap_or_else(|| Spanned::new(1, r.span()));
    let former_name = r.prop_str("was", d);
    r.finish(false, d);
    let (Some(name), Some(node_type)) = (pname, node_type) else { return None };
    Some(Postgres { name, node_type, engine, password_version, former_name, span: child.head_span() })
}

/// `bucket "<name>"` or `registry "<name>"` [`name=…`] [`was=…`]: its global name is
/// `<fleet>-<environment>-<name>` unless `name=` says otherwise.
fn store(
    child: &Node,
    fleet: &str,
    env: &str,
    buckets: &mut Vec<Bucket>,
    registries: &mut Vec<Registry>,
    d: &mut Diagnostics,
) {
    let mut r = Reader::new(child, &["name", "was"], d);
    let lname = r.name_arg(d);
    let global = r.prop_str("name", d);
    let former_name = r.prop_str("was", d);
    r.finish(false, d);
    let Some(lname) = lname else { return };
    let global = global.unwrap_or_else(|| Spanned::new(format!("{fleet}-{env}-{}", lname.value), lname.span));
    if child.name.value == "bucket" {
        buckets.push(Bucket { name: lname, bucket_name: global, former_name, span: child.head_span() });
    } else {
        registries.push(Registry { name: lname, namespace: global, former_name, span: child.head_span() });
    }
}

/// `secret "<name>" [was=…]`.
fn secret(child: &Node, d: &mut Diagnostics) -> Option<SecretItem> {
    let mut r = Reader::new(child, &["was"], d);
    let sname = r.name_arg(d);
    let former_name = r.prop_str("was", d);
    r.finish(false, d);
    sname.map(|sname| SecretItem { name: sname, former_name, span: child.head_span() })
}
