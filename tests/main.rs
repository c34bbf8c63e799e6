//! The one integration-test binary: each `tests/<topic>.rs` is a module of it (`golden`,
//! `apply`, `cli`, …), and the helpers they share (`common`, `apply_support`,
//! `reliability_support`) are modules declared once here. One crate links the library once,
//! instead of once per topic (Cargo.toml: `autotests = false`, one `[[test]]`); run one topic
//! with `cargo test --test integration <topic>::` (a filter on the module path).

mod apply_support;
mod common;
#[cfg(unix)]
mod reliability_support;

mod apply;
mod apply_metal;
mod apply_mirror;
mod apply_plan;
mod apply_tunnel;
mod apply_upgrade;
mod architecture;
mod argocd_conformance;
mod build_validation;
mod capi;
mod capi_conformance;
mod cause_first;
mod check_base_cli;
mod cli;
mod contracts;
mod corpus;
mod diff_cli;
mod diff_golden;
mod disk;
mod drift;
mod first_hour;
mod fmt;
mod golden;
mod graph;
mod hcl_roundtrip;
mod import;
mod import_topf;
mod init;
mod injection;
mod layering;
mod metal_disks;
mod noop_build;
mod oracle_tables;
mod owned;
mod patch_completed;
mod patch_property;
mod patches;
mod patches_decode;
mod release_day;
mod reliability_apply;
mod reliability_fuzz;
mod reliability_inputs;
mod renovate;
mod restore;
mod robustness;
mod schematic_ids;
mod secrets;
mod sovereignty;
mod stand_ins;
mod talos_conformance;
mod threads;
mod tofu;
mod upgrade_plan_cli;
mod upgrade_verify;
mod values;
mod versions_table;
mod yaml_resolver;
