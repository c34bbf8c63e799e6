//! Stable addresses: every address derives from a name in fleet.kdl, so a rename is a
//! destroy and a create unless OpenTofu is told it is the same object. A `was=` in fleet.kdl
//! (a cluster, a worker pool, a database, bucket, registry namespace or secret) becomes a
//! `moved {}` block from the old address to the new one.

use super::Env;
use crate::emit::hcl::{Body, Expr, Traversal};
use crate::layout::names::ident;
use crate::model::Cluster;

/// The environment items that can be renamed.
#[derive(Clone, Copy)]
pub enum Kind {
    Postgres,
    Bucket,
    Registry,
    Secret,
}

fn moved(body: &mut Body, from: Expr, to: Expr) {
    body.block("moved", &[], |m| {
        m.attr("from", from).attr("to", to);
    })
    .blank();
}

fn at(path: &str, key: &str) -> Expr {
    Traversal::path(path).index(key).into()
}

/// `(old, new)` names of the renamed environment items of `kind`.
fn renamed(env: &Env<'_>, kind: Kind) -> Vec<(String, String)> {
    let e = env.env;
    let pairs: Vec<(Option<&String>, &String)> = match kind {
        Kind::Postgres => {
            e.postgres.iter().map(|p| (p.former_name.as_ref().map(|f| &f.value), &p.name.value)).collect()
        }
        Kind::Bucket => e.buckets.iter().map(|p| (p.former_name.as_ref().map(|f| &f.value), &p.name.value)).collect(),
        Kind::Registry => {
            e.registries.iter().map(|p| (p.former_name.as_ref().map(|f| &f.value), &p.name.value)).collect()
        }
        Kind::Secret => e.secrets.iter().map(|p| (p.former_name.as_ref().map(|f| &f.value), &p.name.value)).collect(),
    };
    pairs.into_iter().filter_map(|(old, new)| old.map(|o| (o.clone(), new.clone()))).collect()
}

/// Renamed clusters (module calls) and renamed worker nodes (their `for_each` keys are
/// hostnames, which carry the cluster's and the pool's names).
fn clusters(body: &mut Body, env: &Env<'_>, worker_resources: &[&str]) {
    for c in &env.clusters {
        let module = format!("module.{}", ident(&c.name.value));
        if let Some(old) = &c.former_name {
            moved(body, Expr::reference(&format!("module.{}", ident(&old.value))), Expr::reference(&module));
        }
        for (old, new) in renamed_workers(c) {
            for res in worker_resources {
                let path = format!("{module}.{res}");
                moved(body, at(&path, &old), at(&path, &new));
            }
        }
    }
}

/// `(old hostname, new hostname)` of every worker whose cluster or pool was renamed.
pub fn renamed_workers(c: &Cluster) -> Vec<(String, String)> {
    let cluster_old = c.former_name.as_ref().map_or(&c.name.value, |f| &f.value);
    let mut out = Vec::new();
    for p in &c.workers {
        if c.former_name.is_none() && p.former_name.is_none() {
            continue;
        }
        let pool_old = p.former_name.as_ref().map_or(&p.name.value, |f| &f.value);
        for m in &p.machines {
            out.push((format!("{cluster_old}-{pool_old}-{}", m.index), m.hostname.clone()));
        }
    }
    out
}

/// Moves of a cloud root: environment items inside `module.cloud`, then clusters.
pub fn cloud(body: &mut Body, env: &Env<'_>, env_resources: &[(&str, Kind)], worker_resources: &[&str]) {
    for (res, kind) in env_resources {
        for (old, new) in renamed(env, *kind) {
            let path = format!("module.cloud.{res}");
            moved(body, at(&path, &old), at(&path, &new));
        }
    }
    clusters(body, env, worker_resources);
}

/// Moves of a cluster root.
pub fn cluster(body: &mut Body, env: &Env<'_>, worker_resources: &[&str]) {
    clusters(body, env, worker_resources);
}
