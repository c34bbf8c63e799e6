//! The Talos ↔ Kubernetes support matrix: each Talos minor supports a window of Kubernetes
//! minors, and fleetc emits configuration only for the Talos minors whose schema it knows.
//! The versions table (`versions/talos.kdl`), the machinery each consumer of fleetc's Talos
//! documents runs, the newest patches fleetc proposes and the add-on Kubernetes ranges, each
//! with its source. The checks that refuse a fleet outside them are `check::versions`'.

use super::{Minor, minor_text};
use crate::model::Version;

/// The versions table (`versions/talos.kdl`, embedded): per Talos minor its Kubernetes range,
/// newest patch and the document model fleetc writes; per consumer the machinery it runs.
/// docs/talos.md, "Versions", prints it; `tests/versions_table.rs` checks that it matches.
pub const TABLE_SOURCE: &str = include_str!("../../versions/talos.kdl");

/// One Talos minor of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TalosRow {
    pub minor: Minor,
    /// First and last Kubernetes minor this Talos accepts.
    pub kubernetes: (Minor, Minor),
    pub newest: Version,
    /// The Talos minor whose documents fleetc writes for nodes of this minor: its schema
    /// judges the patches, its default documents are written (for a consumer whose machinery
    /// knows them, [`Table::documents_for`]).
    pub documents: Minor,
    /// The contract every generator is told for nodes of this minor (`contract` in the
    /// table; the documents' minor when absent): the form of the v1alpha1 base fleetc's
    /// patches merge into.
    pub contract: Minor,
    /// The row was read from a pre-release (`talos "1.15" prerelease=#true`): a fleet pins
    /// its minor only with `allow-prerelease=#true` (docs/talos.md, "Release day").
    pub prerelease: bool,
    /// The document kinds fleetc writes in that model.
    pub kinds: Vec<String>,
    /// Per value (`kubernetes`, `newest`, `documents`, `kinds`, and `contract` when given),
    /// its source.
    pub sources: Vec<(String, String)>,
}

/// The Talos machinery a consumer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machinery {
    /// Built on this machinery minor (its go.mod).
    Minor(Minor),
    /// The node's own minor (talosctl of the cluster's version).
    Node,
}

/// One consumer release of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRow {
    pub name: String,
    /// `0.11` (every 0.11.x), `0.6.12` (that release), or `node`.
    pub release: String,
    pub machinery: Machinery,
    pub source: String,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub talos: Vec<TalosRow>,
    pub consumers: Vec<ConsumerRow>,
}

/// The consumers that build a machine config from fleetc's documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumer {
    /// The OpenTofu talos provider (`talos_machine_configuration`), at `release`.
    TofuProvider(Version),
    /// The Cluster API bootstrap provider (CABPT), at `release`.
    Cabpt(Version),
    /// `talosctl gen config` (`fleetc talos render`).
    Talosctl,
}

impl Consumer {
    pub fn name(&self) -> &'static str {
        match self {
            Consumer::TofuProvider(_) => "terraform-provider-talos",
            Consumer::Cabpt(_) => "cluster-api-bootstrap-provider-talos",
            Consumer::Talosctl => "talosctl",
        }
    }
}

fn parse_minor(s: &str) -> Result<Minor, String> {
    let mut it = s.trim_start_matches('v').split('.');
    let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) else {
        return Err(format!("`{s}` is not a minor version (MAJOR.MINOR)"));
    };
    Ok((a.parse().map_err(|_| format!("`{s}`: bad major"))?, b.parse().map_err(|_| format!("`{s}`: bad minor"))?))
}

impl Table {
    /// Parses the table's KDL text.
    pub fn parse(text: &str) -> Result<Table, String> {
        let doc = crate::syntax::parse_kdl(text).map_err(|e| format!("versions table: {e}"))?;
        let strings = |n: &kdl::KdlNode| -> Vec<String> {
            n.entries()
                .iter()
                .filter(|e| e.name().is_none())
                .filter_map(|e| e.value().as_string().map(str::to_owned))
                .collect()
        };
        let prop =
            |n: &kdl::KdlNode, k: &str| -> Option<String> { n.get(k).and_then(|v| v.as_string()).map(str::to_owned) };
        let mut table = Table { talos: Vec::new(), consumers: Vec::new() };
        for node in doc.nodes() {
            let args = strings(node);
            match node.name().value() {
                "talos" => {
                    let minor = parse_minor(args.first().ok_or("talos: no minor")?)?;
                    let at = format!("talos {}.{}", minor.0, minor.1);
                    let mut row = TalosRow {
                        minor,
                        kubernetes: ((0, 0), (0, 0)),
                        newest: Version::new(minor.0, minor.1, 0),
                        documents: minor,
                        contract: minor,
                        prerelease: node.get("prerelease").and_then(|v| v.as_bool()).unwrap_or(false),
                        kinds: Vec::new(),
                        sources: Vec::new(),
                    };
                    for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
                        let name = child.name().value();
                        let a = strings(child);
                        let first = a.first().ok_or(format!("{at}: `{name}` has no value"))?;
                        match name {
                            "kubernetes" => {
                                let last = a.get(1).ok_or(format!("{at}: kubernetes has no last minor"))?;
                                row.kubernetes = (parse_minor(first)?, parse_minor(last)?)
                            }
                            "newest" => {
                                row.newest = first.parse().map_err(|e| format!("{at}: newest `{first}`: {e}"))?
                            }
                            "documents" => row.documents = parse_minor(first)?,
                            "contract" => row.contract = parse_minor(first)?,
                            "kinds" => row.kinds = a.clone(),
                            other => return Err(format!("{at}: unknown `{other}`")),
                        }
                        let source = prop(child, "source").ok_or(format!("{at}: `{name}` has no source"))?;
                        row.sources.push((name.to_owned(), source));
                    }
                    for need in ["kubernetes", "newest", "documents", "kinds"] {
                        if !row.sources.iter().any(|(n, _)| n == need) {
                            return Err(format!("{at}: no `{need}`"));
                        }
                    }
                    if !row.sources.iter().any(|(n, _)| n == "contract") {
                        row.contract = row.documents;
                    }
                    if row.contract > row.documents {
                        return Err(format!("{at}: contract is newer than the documents"));
                    }
                    if row.newest.minor_version() != minor {
                        return Err(format!("{at}: newest {} is another minor", row.newest));
                    }
                    table.talos.push(row);
                }
                "consumer" => {
                    let name = args.first().ok_or("consumer: no name")?.clone();
                    let release = prop(node, "release").ok_or(format!("consumer {name}: no release"))?;
                    let machinery =
                        match prop(node, "machinery").ok_or(format!("consumer {name}: no machinery"))?.as_str() {
                            "node" => Machinery::Node,
                            m => Machinery::Minor(parse_minor(m)?),
                        };
                    let source = prop(node, "source").ok_or(format!("consumer {name}: no source"))?;
                    table.consumers.push(ConsumerRow { name, release, machinery, source });
                }
                other => return Err(format!("versions table: unknown node `{other}`")),
            }
        }
        if table.talos.windows(2).any(|w| w[0].minor >= w[1].minor) {
            return Err("versions table: Talos rows are not in ascending order".into());
        }
        Ok(table)
    }

    /// The row of a Talos minor.
    pub fn row(&self, m: Minor) -> Option<&TalosRow> {
        self.talos.iter().find(|r| r.minor == m)
    }

    /// The newest Talos minor of the table.
    pub fn newest_minor(&self) -> Minor {
        self.talos.last().map_or((0, 0), |r| r.minor)
    }

    /// The machinery a consumer release runs: the row whose release is that exact version,
    /// else that minor (`0.11` for every 0.11.x); `None` when the table does not know it.
    pub fn machinery(&self, consumer: Consumer) -> Option<Machinery> {
        let release = match consumer {
            Consumer::TofuProvider(v) | Consumer::Cabpt(v) => v,
            Consumer::Talosctl => return Some(Machinery::Node),
        };
        let rows = || self.consumers.iter().filter(|c| c.name == consumer.name());
        rows()
            .find(|c| c.release == release.to_string())
            .or_else(|| rows().find(|c| c.release == format!("{}.{}", release.major, release.minor)))
            .map(|c| c.machinery)
    }

    /// The document model fleetc writes for a node of this Talos version: its row's, and for
    /// a minor newer than the table the newest row's (the policy in docs/talos.md).
    pub fn documents(&self, talos: Version) -> Minor {
        match (self.row(talos.minor_version()), self.talos.last()) {
            (Some(r), _) => r.documents,
            (None, Some(last)) if talos.minor_version() > last.minor => last.documents,
            _ => talos.minor_version(),
        }
    }

    /// The document model fleetc writes for a node of this Talos version whose config this
    /// consumer builds: the row's, capped at the machinery the consumer runs (its config
    /// patcher refuses a kind it does not know: `configpatcher.LoadPatch`). The 1.14 model
    /// on talosctl, the 1.13 model on the talos provider 0.11 and CABPT 0.6.12.
    pub fn documents_for(&self, consumer: Consumer, talos: Version) -> Minor {
        let model = self.documents(talos);
        match self.machinery(consumer) {
            Some(Machinery::Minor(m)) => model.min(m),
            Some(Machinery::Node) | None => model,
        }
    }

    /// The contract generators are told for a node of this Talos version: its row's
    /// `contract` (the documents' minor when absent), and for a minor newer than the table
    /// the newest row's.
    pub fn generator_contract(&self, talos: Version) -> Minor {
        match (self.row(talos.minor_version()), self.talos.last()) {
            (Some(r), _) => r.contract,
            (None, Some(last)) if talos.minor_version() > last.minor => last.contract,
            _ => talos.minor_version(),
        }
    }

    /// The contract a consumer is told for a node of this Talos version: the row's contract,
    /// capped at the machinery the consumer runs (it cannot generate a newer one). `None`
    /// means the node's own version (the contract is the node's minor and the consumer knows it).
    pub fn contract(&self, consumer: Consumer, talos: Version) -> Option<Minor> {
        self.contract_with(self.machinery(consumer), talos)
    }

    fn contract_with(&self, machinery: Option<Machinery>, talos: Version) -> Option<Minor> {
        let model = self.generator_contract(talos);
        let cap = match machinery {
            Some(Machinery::Minor(m)) => model.min(m),
            Some(Machinery::Node) | None => model,
        };
        (cap != talos.minor_version()).then_some(cap)
    }
}

impl Table {
    /// The table as docs/talos.md prints it ("Versions"; `tests/versions_table.rs`).
    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "| Talos | Kubernetes | newest | documents fleetc writes | generators' contract | kinds | sources |\n|---|---|---|---|---|---|---|\n",
        );
        for r in &self.talos {
            let sources: Vec<String> = r.sources.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            out += &format!(
                "| {}{} | {}–{} | v{} | the {} model | v{} | {} | {} |\n",
                minor_text(r.minor),
                if r.prerelease { " (pre-release)" } else { "" },
                minor_text(r.kubernetes.0),
                minor_text(r.kubernetes.1),
                r.newest,
                minor_text(r.documents),
                minor_text(r.contract),
                r.kinds.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "),
                sources.join("; ").replace('|', "\\|"),
            );
        }
        out += "\n| consumer | release | machinery |";
        for r in &self.talos {
            out += &format!(" contract, documents on Talos {} |", minor_text(r.minor));
        }
        out += " source |\n|---|---|---|";
        out += &"---|".repeat(self.talos.len());
        out += "---|\n";
        for c in &self.consumers {
            let machinery = match c.machinery {
                Machinery::Minor(m) => minor_text(m),
                Machinery::Node => "the node's".to_owned(),
            };
            out += &format!("| {} | {} | {} |", c.name, c.release, machinery);
            for r in &self.talos {
                let contract = match self.contract_with(Some(c.machinery), r.newest) {
                    Some(m) => format!("v{}", minor_text(m)),
                    None => "its own version".to_owned(),
                };
                let model = match c.machinery {
                    Machinery::Minor(m) => r.documents.min(m),
                    Machinery::Node => r.documents,
                };
                let cell = format!("{contract}, the {} model", minor_text(model));
                out += &format!(" {cell} |");
            }
            out += &format!(" {} |\n", c.source.replace('|', "\\|"));
        }
        out
    }
}

/// The embedded table, parsed once.
pub fn table() -> &'static Table {
    static TABLE: std::sync::LazyLock<Table> = std::sync::LazyLock::new(|| {
        Table::parse(TABLE_SOURCE).expect("versions/talos.kdl parses (tests/versions_table.rs)")
    });
    &TABLE
}

/// The `talos_version` / `talosVersion` / `--talos-version` a consumer is given for a node of
/// this Talos version: the node's own version, or the contract minor (`v1.13`) it speaks
/// (one function for the tofu, capi and render paths; `oracles/talos` routes by it).
pub fn consumer_contract(consumer: Consumer, talos: Version) -> String {
    match table().contract(consumer, talos) {
        Some((a, b)) => format!("v{a}.{b}"),
        None => talos.v(),
    }
}

/// The version constraint of the OpenTofu talos provider every cluster root pins
/// (`emit::tofu::providers` writes it; docs/tofu.md, "Providers"): `~> 0.11.0`, every 0.11.x,
/// which the versions table maps to machinery 1.13. Here, below the checks and emitters, so
/// that both know which consumer builds a cluster's configs ([`cluster_consumer`]).
pub const TALOS_PROVIDER_PIN: &str = "~> 0.11.0";

/// The talos provider as a consumer: the release [`TALOS_PROVIDER_PIN`] allows.
pub fn tofu_consumer() -> Consumer {
    let release = TALOS_PROVIDER_PIN.trim_start_matches("~>").trim().parse().unwrap_or(Version::new(0, 0, 0));
    Consumer::TofuProvider(release)
}

/// The consumer that builds the machine configs of a cluster's nodes from fleetc's documents:
/// talosctl on bare metal (`fleetc apply` and `talos render`), CABPT (the release its management
/// cluster pins) for a managed cluster, the talos provider for a cluster OpenTofu builds.
pub fn cluster_consumer(
    fleet: &crate::model::Fleet,
    env: &crate::model::Environment,
    cluster: &crate::model::Cluster,
) -> Consumer {
    if let Some(mgmt) = &cluster.managed_by {
        let pinned = fleet
            .clusters()
            .find(|(_, c)| c.name.value == mgmt.value)
            .and_then(|(_, c)| c.cluster_api.as_ref())
            .map(|capi| capi.bootstrap_talos.value);
        return pinned.map_or(Consumer::Talosctl, Consumer::Cabpt);
    }
    match env.provider {
        crate::model::Provider::Metal(_) => Consumer::Talosctl,
        _ => tofu_consumer(),
    }
}

/// The document model fleetc writes for a cluster's nodes ([`Table::documents_for`] of its
/// [`cluster_consumer`]): what its emitter writes and the schema its patches are judged by.
pub fn cluster_documents(
    fleet: &crate::model::Fleet,
    env: &crate::model::Environment,
    cluster: &crate::model::Cluster,
) -> Minor {
    table().documents_for(cluster_consumer(fleet, env, cluster), cluster.talos.value)
}

/// The newest known Talos release of a minor.
pub fn talos_newest(m: Minor) -> Option<Version> {
    table().row(m).map(|r| r.newest)
}

/// The newest Kubernetes release of each minor fleetc knows of: 1.34.1 (`k8s.io/api` v0.34.1,
/// the Go module cache), 1.35.2 (Talos v1.12.6's default, machinery `constants/constants.go`
/// l.404), 1.36.6 and 1.37.2 (the newest `k8s.io/api` v0.36.x / v0.37.x the Go module proxy
/// served on 2026-11-25; k8s.io/api is tagged with every Kubernetes patch release).
const KUBERNETES_NEWEST: &[(Minor, u32)] = &[((1, 34), 1), ((1, 35), 2), ((1, 36), 6), ((1, 37), 2)];

/// The newest known Kubernetes release of a minor.
pub fn kubernetes_newest(m: Minor) -> Option<Version> {
    KUBERNETES_NEWEST.iter().find(|(n, _)| *n == m).map(|(n, p)| Version::new(n.0, n.1, *p))
}

/// The newest published Kubernetes release of each minor a Talos row accepts: the newest
/// `k8s.io/api` v0.<minor>.x the Go module proxy served on 2026-12-03 (`go list -m -versions
/// k8s.io/api`; k8s.io/api is tagged with every Kubernetes release). A release past it is
/// one that does not exist (`fleet::versions::kubernetes-release-unknown`). Newer than
/// [`KUBERNETES_NEWEST`], which is what `upgrade-plan` proposes and was checked against
/// fleetc's output: that table's currency is the versions table's, this one only says what
/// exists.
const KUBERNETES_PUBLISHED: &[(Minor, u32)] = &[
    ((1, 30), 14),
    ((1, 31), 14),
    ((1, 32), 13),
    ((1, 33), 13),
    ((1, 34), 13),
    ((1, 35), 10),
    ((1, 36), 6),
    ((1, 37), 2),
];

/// The newest published Kubernetes release of a minor ([`KUBERNETES_PUBLISHED`]), never older
/// than the one fleetc plans with.
pub fn kubernetes_published(m: Minor) -> Option<Version> {
    let published = KUBERNETES_PUBLISHED.iter().find(|(n, _)| *n == m).map(|(n, p)| Version::new(n.0, n.1, *p));
    published.max(kubernetes_newest(m))
}

/// The Kubernetes minors each add-on release was tested against, as its project states it:
/// `(component, release minor, first and last Kubernetes minor, source)`. Running outside is
/// `fleet::addons::kubernetes-untested` (a warning: the project does not say it breaks, it
/// says it did not test it). docs/talos.md, "Add-on Kubernetes ranges", prints the same rows.
pub const ADDON_KUBERNETES: &[(&str, Minor, (Minor, Minor), &str)] = &[
    (
        "cilium",
        (1, 18),
        ((1, 30), (1, 33)),
        "cilium/cilium v1.18.14 `Documentation/network/kubernetes/compatibility.rst` (\"e2e tested and guaranteed\": 1.30, 1.31, 1.32, 1.33)",
    ),
    (
        "cilium",
        (1, 20),
        ((1, 33), (1, 36)),
        "cilium/cilium v1.20.2 `Documentation/network/kubernetes/compatibility.rst` l.16-25 (\"e2e tested and guaranteed\": 1.33, 1.34, 1.35, 1.36)",
    ),
    (
        "cert-manager",
        (1, 19),
        ((1, 31), (1, 35)),
        "cert-manager/website `content/docs/releases/README.md` (1.19: supported and tested 1.31 → 1.35; cert-manager/website#2007)",
    ),
    (
        "cert-manager",
        (1, 21),
        ((1, 33), (1, 36)),
        "cert-manager/website `content/docs/releases/README.md` (\"Currently supported releases\", 1.21: supported and tested 1.33 → 1.36)",
    ),
    (
        "argo-cd",
        (3, 2),
        ((1, 30), (1, 33)),
        "argoproj/argo-cd v3.2.1 `docs/operator-manual/tested-kubernetes-versions.md` l.3 (3.2: v1.33, v1.32, v1.31, v1.30)",
    ),
    (
        "argo-cd",
        (3, 4),
        ((1, 32), (1, 35)),
        "argoproj/argo-cd v3.6.2 `docs/operator-manual/tested-kubernetes-versions.md` (3.4: v1.35, v1.34, v1.33, v1.32)",
    ),
    (
        "argo-cd",
        (3, 5),
        ((1, 33), (1, 36)),
        "argoproj/argo-cd v3.6.2 `docs/operator-manual/tested-kubernetes-versions.md` (3.5: v1.36, v1.35, v1.34, v1.33)",
    ),
    (
        "argo-cd",
        (3, 6),
        ((1, 34), (1, 37)),
        "argoproj/argo-cd v3.6.2 `docs/operator-manual/tested-kubernetes-versions.md` (3.6: v1.37, v1.36, v1.35, v1.34)",
    ),
    (
        "external-secrets",
        (0, 20),
        ((1, 34), (1, 34)),
        "external-secrets.io `introduction/stability-support` (\"0.20.x | 1.34\")",
    ),
    (
        "external-secrets",
        (2, 9),
        ((1, 35), (1, 36)),
        "external-secrets/external-secrets v2.9.0 `docs/introduction/stability-support.md` (its newest row, 2.8: 1.35-1.36, the current minor when 2.9.0 was tagged; 2.9 has no row of its own at its tag)",
    ),
];

/// The tested Kubernetes range of `component` at `release`, with its source; `None` when the
/// table does not know the release's minor.
pub fn addon_kubernetes(component: &str, release: Version) -> Option<((Minor, Minor), &'static str)> {
    ADDON_KUBERNETES
        .iter()
        .find(|(c, m, _, _)| *c == component && *m == release.minor_version())
        .map(|(_, _, r, src)| (*r, *src))
}

/// Whether the versions table has a row for this Talos minor.
pub fn talos_supported(talos: Version) -> bool {
    table().row(talos.minor_version()).is_some()
}

/// Whether fleetc writes configuration for this Talos version: a row of the table, or a minor
/// newer than the table whose schema is in schemas/ (a warning,
/// `fleet::versions::talos-newer-than-table`; docs/talos.md "Versions"). The document model
/// written for each cluster is [`cluster_documents`].
pub fn talos_emittable(talos: Version) -> bool {
    talos_supported(talos)
        || (talos.minor_version() > table().newest_minor() && super::schemas::has_talos_schema(talos.minor_version()))
}

/// The Kubernetes minors a Talos version supports, first and last.
pub fn kubernetes_range(talos: Version) -> Option<((u32, u32), (u32, u32))> {
    table().row(talos.minor_version()).map(|r| r.kubernetes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn the_embedded_table_parses_and_has_a_source_for_every_value() {
        let t = Table::parse(TABLE_SOURCE).unwrap();
        assert!(t.talos.len() >= 3);
        for r in &t.talos {
            let contract = usize::from(r.sources.iter().any(|(n, _)| n == "contract"));
            assert_eq!(r.sources.len(), 4 + contract, "{:?}", r.minor);
            assert!(r.sources.iter().all(|(_, s)| !s.trim().is_empty()));
        }
        assert!(t.consumers.iter().all(|c| !c.source.trim().is_empty()));
    }

    #[test]
    fn each_consumer_is_told_the_contract_its_machinery_speaks() {
        let t = table();
        let tofu = Consumer::TofuProvider(v("0.11.0"));
        // Talos 1.14 nodes: every generator is told the row's 1.13 contract (the v1alpha1 form
        // fleetc's documents merge into); the provider and CABPT 0.6.12 (machinery 1.13.0) get
        // the 1.13 documents, talosctl the 1.14 model with its default documents.
        assert_eq!(t.contract(tofu, v("1.14.1")), Some((1, 13)));
        assert_eq!(t.contract(Consumer::Cabpt(v("0.6.12")), v("1.14.1")), Some((1, 13)));
        assert_eq!(t.contract(Consumer::Talosctl, v("1.14.1")), Some((1, 13)));
        assert_eq!(t.documents_for(tofu, v("1.14.1")), (1, 13));
        assert_eq!(t.documents_for(Consumer::Cabpt(v("0.6.12")), v("1.14.1")), (1, 13));
        assert_eq!(t.documents_for(Consumer::Talosctl, v("1.14.1")), (1, 14));
        assert_eq!(t.documents_for(Consumer::Talosctl, v("1.13.9")), (1, 13));
        // CABPT 0.6.11 is built on machinery 1.12.0.
        assert_eq!(t.contract(Consumer::Cabpt(v("0.6.11")), v("1.13.9")), Some((1, 12)));
        // A minor the consumer knows: the node's own version.
        assert_eq!(t.contract(tofu, v("1.13.9")), None);
        assert_eq!(consumer_contract(tofu, v("1.13.9")), "v1.13.9");
        assert_eq!(consumer_contract(tofu, v("1.14.1")), "v1.13");
        // A release the table does not know keeps today's behaviour: the node's version.
        assert_eq!(t.contract(Consumer::Cabpt(v("0.6.9")), v("1.13.9")), None);
    }
}
