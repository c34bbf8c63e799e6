//! The bootstrap root: local state, creates the environment's state bucket with versioning
//! on, so that every state the other roots write can be restored (R28). It runs once, before
//! the first `cloud` apply, and is the only root without the S3 backend.

use super::hclx::{Var, file, output, r, ty};
use super::{Env, Module, RootFiles};
use crate::model::Provider;

pub(super) const MODULE: &str = "scaleway-state-bucket";

/// Whether fleetc can create the state bucket: the state lives on Scaleway Object Storage.
pub(super) fn supported(env: &Env<'_>) -> bool {
    let host = env.state.endpoint.value.trim_start_matches("https://").trim_start_matches("http://");
    let host = host.split(['/', ':']).next().unwrap_or_default();
    host.ends_with(".scw.cloud")
}

pub(super) fn module() -> Module {
    let mut vars = file();
    Var::new("bucket", ty("string"), "The state bucket's name.").write(&mut vars);
    let mut main = file();
    main.comment(
        "R28: versioning keeps every state ever written, so a damaged or deleted state is restored\n\
         from an earlier version. OpenTofu refuses to destroy the bucket.",
    )
    .block("resource", &["scaleway_object_bucket", "state"], |b| {
        b.attr("name", r("var.bucket"))
            .block("versioning", &[], |v| {
                v.attr("enabled", true);
            })
            .block("lifecycle", &[], |l| {
                l.attr("prevent_destroy", true);
            });
    });
    let mut outputs = file();
    output(&mut outputs, "bucket", "The state bucket.", r("scaleway_object_bucket.state.name"), false);
    Module::new(vec![("main.tf", main), ("variables.tf", vars), ("outputs.tf", outputs)])
}

pub(super) fn root(env: &Env<'_>) -> RootFiles {
    let mut main = file();
    main.block("provider", &["scaleway"], |p| {
        p.attr("project_id", r("var.project_id")).attr("region", r("var.region"));
    })
    .blank()
    .block("module", &["state"], |m| {
        m.attr("source", format!("../../modules/{MODULE}"))
            .blank()
            .attr("project_id", r("var.project_id"))
            .attr("region", r("var.region"))
            .attr("bucket", r("var.bucket"));
    });
    let mut vars = file();
    Var::new("project_id", ty("string"), "The Scaleway project that owns the state bucket (R9).").write(&mut vars);
    Var::new("region", ty("string"), "The state bucket's region.").write(&mut vars);
    Var::new("bucket", ty("string"), "The state bucket's name.").write(&mut vars);
    super::passphrase_var(&mut vars);
    let mut values = file();
    if let Provider::Scaleway(s) = &env.env.provider {
        values.attr("project_id", s.project.value.as_str());
    } else {
        values.comment("project_id: the Scaleway project of the state bucket; give it with -var (not in fleet.kdl).");
    }
    values.attr("region", env.state.region.value.as_str()).attr("bucket", env.state.bucket.value.as_str());
    let mut outputs = file();
    output(
        &mut outputs,
        "state_bucket",
        "The bucket the other roots keep their state in.",
        r("module.state.bucket"),
        false,
    );
    RootFiles { main, variables: vars, outputs, values }
}
