//! Every schema fleetc embeds, in one index: the Talos config schemas, by minor
//! (`TALOS_SCHEMAS`, `TalosSchema`), which judge the user's patches (`check::patches`)
//! and the Talos documents fleetc writes (`emit::validate`); and every CRD and Kubernetes
//! schema, by schema set, with the one function of the model that says which set judges the
//! documents a cluster receives ([`SchemaSet::of`]) and the data table that maps every
//! version fleetc accepts to the schema set in `schemas/` that judges it ([`STAND_INS`]).
//!
//! A schema set is a module and a version (`cabpt v0.6.12`, `kubernetes v1.35`), as
//! `oracles/schemas/produce` writes them (`schemas/index.rs`, generated, lists the file of each
//! `apiVersion` and `kind` per set; identical bytes are one file). A cluster's set takes its
//! Kubernetes minor, its own `cluster-api { … }` pins (a management cluster: the objects of
//! `capi/<mgmt>/…` and what Argo CD applies there go to it), the fleet's Argo CD pin, the
//! `talos.dev` CRD its Talos applies, and the External Secrets and cert-manager CRDs schemas/
//! carries (one version each, see schemas/README.md). A Kubernetes minor's built-in kinds are
//! one small file each, whose `$ref`s point into the minor's one `definitions.json`
//! ([`KindSchema::definitions`]). A pinned version with no set of its own is judged by the stand-in its
//! row names; schemas/README.md gives the evidence (same bytes at the upstream tag, or how
//! they differ).

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Value, json};

use crate::model::{Cluster, Fleet, Version};

/// The Talos config schemas fleetc carries, by minor (produced by `oracles/schemas/produce`,
/// provenance in schemas/README.md).
pub(crate) const TALOS_SCHEMAS: &[((u32, u32), &str)] = &[
    ((1, 12), include_str!("../../schemas/talos/v1.12/config.schema.json")),
    ((1, 13), include_str!("../../schemas/talos/v1.13/config.schema.json")),
    ((1, 14), include_str!("../../schemas/talos/v1.14/config.schema.json")),
];

/// The v1alpha1 fields each minor's machinery decodes but its schema leaves out (`docgen:nodoc`,
/// mostly deprecated), with the deprecation text and the schema of the subtree as the decoder
/// reads it: produced from the machinery by `oracles/schemas/produce` (oracles/schemas/decoded).
pub(crate) const TALOS_DECODED: &[((u32, u32), &str)] = &[
    ((1, 12), include_str!("../../schemas/talos/v1.12/deprecated.json")),
    ((1, 13), include_str!("../../schemas/talos/v1.13/deprecated.json")),
    ((1, 14), include_str!("../../schemas/talos/v1.14/deprecated.json")),
];

/// One field of `schemas/talos/<minor>/deprecated.json`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct DecodedField {
    /// Dotted, `[]` for the items of a list or the values of a map: `machine.network.interfaces`.
    pub path: String,
    pub go_type: String,
    /// The field's `Deprecated:` doc text in the machinery, empty when it has none.
    pub deprecated: String,
    /// The config documents the text names that the minor has.
    pub replacements: Vec<String>,
    /// The top undocumented field this one is inside of (`None` for a top one).
    pub within: Option<String>,
    /// A top field's subtree as the decoder reads it (from the Go types).
    pub schema: Option<Value>,
}

#[derive(serde::Deserialize)]
struct DecodedFile {
    fields: Vec<DecodedField>,
}

/// The undocumented fields of a minor's v1alpha1 config (empty when fleetc has no list for it).
pub fn talos_decoded(minor: (u32, u32)) -> Vec<DecodedField> {
    TALOS_DECODED
        .iter()
        .find(|(m, _)| *m == minor)
        .and_then(|(_, t)| serde_json::from_str::<DecodedFile>(t).ok())
        .map_or_else(Vec::new, |f| f.fields)
}

/// Whether fleetc carries the config schema of this Talos minor.
pub fn has_talos_schema(minor: (u32, u32)) -> bool {
    TALOS_SCHEMAS.iter().any(|(m, _)| *m == minor)
}

/// One minor's Talos config schema: its definitions and a validator per document kind, built
/// on first use.
pub(crate) struct TalosSchema {
    defs: Value,
    by_kind: BTreeMap<String, Option<jsonschema::Validator>>,
    decoded: Vec<DecodedField>,
    by_decoded: BTreeMap<String, Option<jsonschema::Validator>>,
}

impl TalosSchema {
    pub(crate) fn load(minor: (u32, u32)) -> Option<TalosSchema> {
        let text = TALOS_SCHEMAS.iter().find(|(m, _)| *m == minor)?.1;
        let schema: Value = serde_json::from_str(text).ok()?;
        Some(TalosSchema {
            defs: schema.get("$defs")?.clone(),
            by_kind: BTreeMap::new(),
            decoded: talos_decoded(minor),
            by_decoded: BTreeMap::new(),
        })
    }
    /// The schema's definitions (`$defs`).
    pub(crate) fn defs(&self) -> &Value {
        &self.defs
    }
    /// The definition of a document kind (`v1alpha1` for the machine config).
    pub(crate) fn root(&self, kind: &str) -> Option<&Value> {
        if kind == "v1alpha1" {
            return self.defs.get("v1alpha1.Config");
        }
        self.defs.as_object()?.values().find(|d| {
            d.pointer("/properties/kind/enum").and_then(Value::as_array).is_some_and(|ks| ks.iter().any(|k| k == kind))
        })
    }
    /// The v1alpha1 fields the machinery decodes that the schema leaves out.
    pub(crate) fn decoded(&self) -> &[DecodedField] {
        &self.decoded
    }
    /// The validator of a top undocumented field's subtree (`machine.network`).
    pub(crate) fn decoded_validator(&mut self, path: &str) -> Option<&jsonschema::Validator> {
        let decoded = &self.decoded;
        self.by_decoded
            .entry(path.to_owned())
            .or_insert_with(|| {
                let schema = decoded.iter().find(|f| f.path == path)?.schema.as_ref()?;
                jsonschema::validator_for(schema).ok()
            })
            .as_ref()
    }
    /// The validator of a document kind (`v1alpha1` for the machine config), `None` when
    /// this Talos version has no such document.
    pub(crate) fn validator(&mut self, kind: &str) -> Option<&jsonschema::Validator> {
        let defs = &self.defs;
        self.by_kind
            .entry(kind.to_owned())
            .or_insert_with(|| {
                let def = if kind == "v1alpha1" {
                    Some("v1alpha1.Config".to_owned())
                } else {
                    defs.as_object()?.iter().find_map(|(name, d)| {
                        let kinds = d.pointer("/properties/kind/enum")?.as_array()?;
                        kinds.iter().any(|k| k == kind).then(|| name.clone())
                    })
                }?;
                jsonschema::validator_for(&json!({"$defs": defs, "$ref": format!("#/$defs/{def}")})).ok()
            })
            .as_ref()
    }
}

mod generated {
    include!("../../schemas/index.rs");
}
pub(crate) use generated::{DEFINITIONS, FILES, INDEX};

/// A module whose CRD or Kubernetes schemas `schemas/` carries (Talos's are `TALOS_SCHEMAS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Module {
    Kubernetes,
    Capi,
    Cabpt,
    Cacppt,
    Capmox,
    Ipam,
    Operator,
    Argocd,
    Eso,
    CertManager,
    /// The CRD Talos applies to its own cluster (`talos.dev` `ServiceAccount`).
    TalosK8s,
}

const MODULES: usize = 11;

impl Module {
    /// The key `schemas/index.rs` uses.
    pub const fn key(self) -> &'static str {
        match self {
            Module::Kubernetes => "kubernetes",
            Module::Capi => "capi",
            Module::Cabpt => "cabpt",
            Module::Cacppt => "cacppt",
            Module::Capmox => "capmox",
            Module::Ipam => "ipam",
            Module::Operator => "operator",
            Module::Argocd => "argocd",
            Module::Eso => "eso",
            Module::CertManager => "certmanager",
            Module::TalosK8s => "talosk8s",
        }
    }

    fn from_key(key: &str) -> Option<Module> {
        ALL.iter().copied().find(|m| m.key() == key)
    }
}

/// Every module, in declaration order (so `m as usize` is `m`'s index here).
const ALL: [Module; MODULES] = [
    Module::Kubernetes,
    Module::Capi,
    Module::Cabpt,
    Module::Cacppt,
    Module::Capmox,
    Module::Ipam,
    Module::Operator,
    Module::Argocd,
    Module::Eso,
    Module::CertManager,
    Module::TalosK8s,
];

const MAX: u32 = u32::MAX;

/// `(major, minor, patch)`.
pub type Release = (u32, u32, u32);

/// One row of [`STAND_INS`].
pub type StandIn = (Module, Release, Release, &'static str, &'static str);

/// `(module, first, last (inclusive), schema set, why)`: the set that judges a pinned version.
/// Rows are searched in order; a version no row covers has no schema (its documents are
/// reported unjudged). Every version the acceptance tables take resolves (a test).
pub const STAND_INS: &[StandIn] = &[
    // Kubernetes: versions/talos.kdl accepts 1.30 to 1.37; schemas/ has v1.35.2 and v1.36.3.
    (Module::Kubernetes, (1, 30, 0), (1, 34, MAX), "v1.35", "not produced: the nearest produced minor stands in"),
    (Module::Kubernetes, (1, 35, 0), (1, 35, MAX), "v1.35", "k8s.io/kubernetes v1.35.2"),
    (Module::Kubernetes, (1, 36, 0), (1, 36, MAX), "v1.36", "k8s.io/kubernetes v1.36.3"),
    (Module::Kubernetes, (1, 37, 0), (1, 37, MAX), "v1.36", "not produced: the nearest produced minor stands in"),
    // Cluster API core: check::capi accepts 1.11 to 1.14.
    (Module::Capi, (1, 11, 0), (1, 11, MAX), "v1.13.3", "not produced; other CRD bytes at the tags"),
    (Module::Capi, (1, 12, 0), (1, 12, MAX), "v1.13.3", "v1.12.9 is not served; v1.13.3 adds fields, removes none"),
    (Module::Capi, (1, 13, 0), (1, 13, MAX), "v1.13.3", "v1.13.0 to v1.13.5 have v1.13.3's CRD bytes"),
    (Module::Capi, (1, 14, 0), (1, 14, MAX), "v1.13.3", "not produced: the nearest produced release stands in"),
    // CABPT: check::capi accepts 0.6.5 and later 0.6 patches.
    (Module::Cabpt, (0, 6, 5), (0, 6, 7), "v0.6.11", "not produced; other CRD bytes at the tags"),
    (Module::Cabpt, (0, 6, 8), (0, 6, 11), "v0.6.11", "v0.6.8 to v0.6.12 have the same CRD bytes"),
    (Module::Cabpt, (0, 6, 12), (0, 6, MAX), "v0.6.12", "v0.6.12 (the same bytes as v0.6.11, stored once)"),
    // CACPPT: check::capi accepts 0.5.
    (Module::Cacppt, (0, 5, 0), (0, 5, 8), "v0.5.13", "not produced; other CRD bytes at the tags"),
    (
        Module::Cacppt,
        (0, 5, 9),
        (0, 5, MAX),
        "v0.5.13",
        "v0.5.9 to v0.5.13 have the same CRD bytes; 0.5.12 is not served",
    ),
    // CAPMOX: check::capi accepts 0.9.
    (Module::Capmox, (0, 9, 0), (0, 9, MAX), "v0.9.0", "v0.9.0"),
    // IPAM in-cluster: 1.0 (v1beta1 contract) and 1.1.
    (Module::Ipam, (1, 0, 0), (1, 0, MAX), "v1.0.3", "v1.0.1 to v1.0.3 have the same CRD bytes; v1.0.0 differs"),
    (Module::Ipam, (1, 1, 0), (1, 1, MAX), "v1.1.0", "v1.1.0"),
    // The Cluster API Operator: 0.24.0 is pinned, not served.
    (Module::Operator, (0, 23, 0), (0, 24, MAX), "v0.23.0", "v0.24.0 is not served; it adds two fields, removes none"),
    // Argo CD 3.
    (Module::Argocd, (3, 0, 0), (3, MAX, MAX), "v3.2.1", "argo-cd v3.2.1"),
    // One version each (schemas/README.md): the fleet does not pin them per cluster.
    (Module::Eso, (0, 0, 0), (MAX, MAX, MAX), "v0.20.4", "external-secrets v0.20.4"),
    (Module::CertManager, (0, 0, 0), (MAX, MAX, MAX), "v1.19.1", "cert-manager v1.19.1"),
    // The cluster's Talos: the `talos.dev` CRD it applies itself (siderolabs/talos v1.13.9
    // internal/app/machined/pkg/controllers/k8s/internal/k8stemplates/testdata/talos-service-account-crd.yaml).
    (
        Module::TalosK8s,
        (1, 12, 0),
        (1, 14, MAX),
        "v1.13.9",
        "talos v1.13.9; the same CRD bytes at tags v1.12.6 and v1.14.0-rc.1 (oracles/kube/README.md)",
    ),
];

/// The set judging one module's documents: the set's version and the version pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pick {
    pub module: Module,
    pub set: &'static str,
    pub pinned: Option<Version>,
}

impl Pick {
    /// Whether the set is not the pinned version's own (a named stand-in).
    pub fn stands_in(&self) -> bool {
        let Some(p) = self.pinned else { return false };
        let own = if self.module == Module::Kubernetes {
            format!("v{}.{}", p.major, p.minor)
        } else {
            format!("v{}.{}.{}", p.major, p.minor, p.patch)
        };
        own != self.set
    }
}

impl fmt::Display for Pick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.module.key(), self.set)?;
        match self.pinned {
            Some(p) if self.stands_in() => write!(f, " (for {}.{}.{})", p.major, p.minor, p.patch),
            _ => Ok(()),
        }
    }
}

/// The set that judges `module` at the pinned `v`, `None` when no row covers it.
pub fn resolve(module: Module, v: Version) -> Option<Pick> {
    let key = (v.major, v.minor, v.patch);
    STAND_INS.iter().find(|(m, lo, hi, _, _)| *m == module && *lo <= key && key <= *hi).map(|(_, _, _, set, _)| Pick {
        module,
        set,
        pinned: Some(v),
    })
}

/// The schema of one `apiVersion`/`kind` in a set.
#[derive(Debug, Clone, Copy)]
pub struct KindSchema {
    /// The kind's file in schemas/ and its text.
    pub file: &'static str,
    pub text: &'static str,
    /// The file (and its text) whose `$defs` the kind's `$ref`s point into: the set's
    /// `kubernetes/<minor>/definitions.json` for a built-in kind, `None` for a CRD (standalone).
    pub definitions: Option<(&'static str, &'static str)>,
    /// The pick that chose it.
    pub pick: Pick,
}

/// Which schema set judges the documents one cluster receives (one value, one place).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SchemaSet {
    picks: [Option<Pick>; MODULES],
}

impl SchemaSet {
    /// The set of the cluster `c` of `fleet`: its Kubernetes minor, its own Cluster API pins
    /// (when it is a management cluster), the fleet's Argo CD, and the fleet-wide CRDs.
    pub fn of(fleet: &Fleet, c: &Cluster) -> SchemaSet {
        let mut s = SchemaSet::default();
        s.put(resolve(Module::Kubernetes, c.kubernetes.value));
        s.put(resolve(Module::TalosK8s, c.talos.value));
        if let Some(capi) = &c.cluster_api {
            s.put(resolve(Module::Capi, capi.core.value));
            s.put(resolve(Module::Cabpt, capi.bootstrap_talos.value));
            s.put(resolve(Module::Cacppt, capi.control_plane_talos.value));
            s.put(resolve(Module::Capmox, capi.infrastructure_proxmox.value));
            s.put(resolve(Module::Ipam, capi.ipam_in_cluster.value));
            s.put(resolve(Module::Operator, capi.operator.value));
        }
        if let Some(a) = &fleet.argocd {
            s.put(resolve(Module::Argocd, a.version.value));
        }
        s.fleet_wide();
        s
    }

    /// The set for manifests no cluster receives yet (an add-on no cluster lists): the
    /// newest Kubernetes schemas, the newest Talos's CRD and the fleet-wide CRDs.
    pub fn unplaced() -> SchemaSet {
        let mut s = SchemaSet::default();
        for m in [Module::Kubernetes, Module::TalosK8s] {
            let newest = STAND_INS.iter().rev().find(|r| r.0 == m).map(|r| r.3);
            s.put(newest.map(|set| Pick { module: m, set, pinned: None }));
        }
        s.fleet_wide();
        s
    }

    fn fleet_wide(&mut self) {
        for m in [Module::Eso, Module::CertManager] {
            let set = STAND_INS.iter().find(|r| r.0 == m).map(|r| r.3);
            self.put(set.map(|set| Pick { module: m, set, pinned: None }));
        }
    }

    fn put(&mut self, p: Option<Pick>) {
        if let Some(p) = p {
            self.picks[p.module as usize] = Some(p);
        }
    }

    /// The pick of one module, `None` when this cluster has no set for it.
    pub fn pick(&self, m: Module) -> Option<Pick> {
        self.picks[m as usize]
    }

    /// The schema of `apiVersion`/`kind` in this set. `None`: schemas/ has no such kind, or
    /// this cluster no set for its module.
    pub fn schema(&self, api_version: &str, kind: &str) -> Option<KindSchema> {
        INDEX.iter().filter(|r| r.2 == api_version && r.3 == kind).find_map(|&(key, set, _, _, file)| {
            let pick = self.pick(Module::from_key(key)?)?;
            let definitions =
                DEFINITIONS.iter().find(|d| d.0 == key && d.1 == set).map(|&(_, _, d)| (FILES[d].0, FILES[d].1));
            (pick.set == set).then(|| KindSchema { file: FILES[file].0, text: FILES[file].1, definitions, pick })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::capi::{CABPT, provider_problem, support};

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    /// Every version the acceptance tables take resolves to a set that schemas/ has, so a
    /// row added to a table without a schema (or a stand-in) fails here: the Kubernetes minors
    /// of versions/talos.kdl, and every provider version `check::capi` does not refuse
    /// (`provider_problem`, CABPT's support table), probed over a wide grid.
    #[test]
    fn every_accepted_version_resolves_to_a_set_schemas_carries() {
        let has = |m: Module, set: &str| INDEX.iter().any(|r| r.0 == m.key() && r.1 == set);
        let mut probes: Vec<(Module, Version)> = Vec::new();
        for row in &crate::upstream::talos::table().talos {
            let ((a, lo), (_, hi)) = row.kubernetes;
            for minor in lo..=hi {
                probes.extend([0, 9, 99].map(|patch| (Module::Kubernetes, Version::new(a, minor, patch))));
            }
        }
        let grid = |major: u32| {
            (0..=20).flat_map(move |minor| [0, 1, 5, 9, 12, 13, 40].map(|p| Version::new(major, minor, p)))
        };
        let providers = [
            (Module::Capi, "core"),
            (Module::Cabpt, "bootstrap-talos"),
            (Module::Cacppt, "control-plane-talos"),
            (Module::Capmox, "infrastructure-proxmox"),
        ];
        for (m, name) in providers {
            for version in grid(0).chain(grid(1)) {
                let accepted = provider_problem(name, version).is_none()
                    && (m != Module::Cabpt || support(CABPT, version).is_some());
                if accepted {
                    probes.push((m, version));
                }
            }
        }
        assert!(probes.iter().any(|(m, x)| *m == Module::Capi && *x == v("1.12.9")), "the grid reaches core 1.12.9");
        for p in ["1.0.0", "1.0.3", "1.1.0", "1.1.4"] {
            probes.push((Module::Ipam, v(p)));
        }
        probes.push((Module::Operator, v("0.24.0")));
        probes.push((Module::Argocd, v("3.2.1")));
        for row in &crate::upstream::talos::table().talos {
            let (major, minor) = row.minor;
            probes.extend([0, 9, 99].map(|patch| (Module::TalosK8s, Version::new(major, minor, patch))));
        }
        for (m, version) in probes {
            let pick = resolve(m, version).unwrap_or_else(|| panic!("{} {version}: no schema set", m.key()));
            assert!(has(m, pick.set), "{} {version}: set {} is not in schemas/index.rs", m.key(), pick.set);
        }
    }

    #[test]
    fn a_modules_index_is_its_place_in_all() {
        for (i, m) in ALL.iter().enumerate() {
            assert_eq!(*m as usize, i, "{}", m.key());
        }
    }

    /// CABPT 0.6.12 pins are judged by 0.6.12's own set, not 0.6.11's (the two have the same
    /// bytes today, stored once; the selection must still name the pinned release).
    #[test]
    fn cabpt_0_6_12_is_judged_by_its_own_set() {
        let p = resolve(Module::Cabpt, v("0.6.12")).unwrap();
        assert_eq!(p.set, "v0.6.12");
        assert!(!p.stands_in());
        assert_eq!(resolve(Module::Cabpt, v("0.6.11")).unwrap().set, "v0.6.11");
        let mut s = SchemaSet::default();
        s.put(Some(p));
        let k = s.schema("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate").unwrap();
        assert_eq!(k.pick.set, "v0.6.12");
        assert!(k.file.starts_with("crds/bootstrap.cluster.x-k8s.io/"), "{}", k.file);
        assert!(k.definitions.is_none());
    }

    /// A 1.35 cluster's documents are judged with v1.35's built-in kinds and definitions, a
    /// 1.36 cluster's with v1.36's, and the two differ (PodSpec `workloadRef` in 1.35,
    /// `schedulingGroup` in 1.36), while a kind whose node is the same in both is one file.
    #[test]
    fn kubernetes_minor_selects_its_own_core_kinds() {
        let set = |k: &str| {
            let mut s = SchemaSet::default();
            s.put(resolve(Module::Kubernetes, v(k)));
            s
        };
        let k35 = set("1.35.2").schema("apps/v1", "Deployment").unwrap();
        let k36 = set("1.36.2").schema("apps/v1", "Deployment").unwrap();
        assert_eq!((k35.pick.set, k36.pick.set), ("v1.35", "v1.36"));
        let (d35, t35) = k35.definitions.unwrap();
        let (d36, t36) = k36.definitions.unwrap();
        assert_eq!((d35, d36), ("kubernetes/v1.35/definitions.json", "kubernetes/v1.36/definitions.json"));
        assert!(t35.contains("\"workloadRef\"") && !t36.contains("\"workloadRef\""));
        assert!(t36.contains("\"schedulingGroup\"") && !t35.contains("\"schedulingGroup\""));
        let r35 = set("1.35.2").schema("rbac.authorization.k8s.io/v1", "ClusterRole").unwrap();
        let r36 = set("1.36.2").schema("rbac.authorization.k8s.io/v1", "ClusterRole").unwrap();
        assert_eq!(r35.file, r36.file, "an unchanged kind is stored once");
        assert_ne!(r35.definitions, r36.definitions, "but resolved with its own minor's definitions");
        assert!(set("1.37.2").pick(Module::Kubernetes).unwrap().stands_in());
    }
}
