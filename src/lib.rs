//! fleetc: one `fleet.kdl` compiled into deterministic artifacts.
//!
//! The pipeline is visible in the module tree: [`syntax`] → [`model`] → [`check`] →
//! [`emit`] → [`artifacts`] → [`apply`]. See ARCHITECTURE.md for the map.

pub mod emit;
pub mod schematic;
