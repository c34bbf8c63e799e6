//! Upstream: what fleetc knows of the upstreams it pins, as data with its sources. The
//! versions tables (Talos ↔ Kubernetes, the Talos consumers' machinery, the Cluster API
//! providers' support, the official system extensions), one index of every schema fleetc
//! embeds, the reading of vendored manifests, how Talos's decoder reads a patch (`talos_decode`),
//! and the one recognizer of private-key material.
//! It sits between [`model`](crate::model) and the two stages that consult it side by side,
//! [`check`](crate::check) (which refuses what these tables say fleetc cannot emit) and
//! [`emit`](crate::emit) (which writes what they say each consumer speaks); `plan` and `apply`
//! read it too. It imports only `model`, `diag`, `digest`, `layout`, `schematic` and `syntax`.

pub mod capi;
pub mod extensions;
pub mod key_material;
pub mod manifests;
pub mod schemas;
pub mod talos;
pub mod talos_backup;
pub mod talos_decode;
pub mod talos_secrets;

/// A `(major, minor)` pair.
pub type Minor = (u32, u32);

/// `1.13`: a minor as the tables, docs and messages print it.
pub fn minor_text(m: Minor) -> String {
    format!("{}.{}", m.0, m.1)
}
