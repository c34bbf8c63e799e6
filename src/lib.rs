//! fleetc: one `fleet.kdl` compiled into deterministic artifacts: OpenTofu roots, Talos
//! machine configs, Cluster API manifests, Argo CD applications and Image Factory schematics.
//!
//! The pipeline is visible in the module tree: [`syntax`] → [`model`] → [`check`] →
//! [`emit`] → [`artifacts`] → [`review`] → [`apply`]; [`compile`] runs it end to end and [`run`] is the command line.
//! See ARCHITECTURE.md for the map and the invariants.

pub mod apply;
pub mod artifacts;
pub mod check;
pub mod cli;
pub mod compile;
pub mod completions;
pub mod diag;
pub mod digest;
pub mod emit;
pub mod git_loader;
pub mod graph;
pub mod import;
pub mod init;
pub mod inputs;
pub mod layout;
pub mod memo;
pub mod model;
pub mod parallel;
pub mod plan;
pub mod review;
mod run;
pub mod schematic;
pub mod secrets;
pub mod syntax;
#[doc(hidden)]
pub mod synth;
pub mod upstream;

pub use run::{EXIT_ERROR, EXIT_OK, EXIT_PROBLEMS, run};
