//! The user's Talos patches, passed through: each pool's patches (fleet → environment →
//! cluster → role → pool, model order) are copied, byte for byte under fleetc's header (an
//! RFC 6902 JSON patch as its strategic-merge conversion, `model::patch::PatchFile::emitted`), to
//! `talos/<env>/<cluster>/patches/controlplane/` or `…/patches/workers/<pool>/`
//! (`layout::paths::pool_patches`, a named node's `layout::paths::node_patches`), named
//! `<NN>-<file name>` so that the file-name order is the apply order. Every consumer applies
//! them after fleetc's own documents with Talos's own `configpatcher` (docs/talos.md,
//! "Patches"): the OpenTofu cluster module lists the directory, CABPT gets their text as
//! `strategicPatches`, `fleetc talos render` passes each as `--config-patch`. A patch that
//! restates the EPHEMERAL `VolumeConfig` without its `provisioning.diskSelector.match` is
//! written completed with the pool's selector ([`completed`]): Talos's merge would otherwise
//! empty fleetc's (siderolabs/talos v1.13.9 `pkg/machinery/cel/cel.go`, `Expression.Merge`).

use serde_json::{Map, Value};

use super::{DocSet, HEADER, ephemeral_match, machine_ephemeral_match};
use crate::emit::EmitError;
use crate::layout::paths;
use crate::model::{Machine, Patch, Pool, Role};

/// Whether fleetc completes this patch document with its own selector: a `VolumeConfig`
/// `EPHEMERAL` (the one volume fleetc writes with a CEL selector) that is not a delete and has
/// no `provisioning.diskSelector.match`, on a `patch` line that does not override R15 (an
/// override means the selector is dropped on purpose).
pub fn completes_selector(patch: &Patch, v: &Value) -> bool {
    v.get("kind").and_then(Value::as_str) == Some("VolumeConfig")
        && v.get("name").and_then(Value::as_str) == Some("EPHEMERAL")
        && v.get("$patch").is_none()
        && v.pointer("/provisioning/diskSelector/match").is_none()
        && !patch.overrides("R15")
}

/// The patch's documents with the pool's EPHEMERAL selector added where
/// [`completes_selector`] says, as YAML under a comment that says so; `None` when no document
/// needs it (the file's own bytes are written).
pub fn completed(patch: &Patch, selector: &str) -> Option<String> {
    let docs = &patch.file.documents;
    if !docs.iter().any(|d| completes_selector(patch, &d.value)) {
        return None;
    }
    let mut out = format!(
        "# Completed by fleetc from {}: the EPHEMERAL VolumeConfig gets fleetc's provisioning.diskSelector,\n# which Talos's merge would otherwise empty (docs/talos.md, \"Patches\").\n",
        patch.path.value
    );
    for (i, d) in docs.iter().enumerate() {
        let mut v = d.value.clone();
        if completes_selector(patch, &v)
            && let Some(obj) = v.as_object_mut()
        {
            let prov = obj.entry("provisioning").or_insert_with(|| Value::Object(Map::new()));
            if !prov.is_object() {
                *prov = Value::Object(Map::new());
            }
            let sel = prov.as_object_mut()?.entry("diskSelector").or_insert_with(|| Value::Object(Map::new()));
            if !sel.is_object() {
                *sel = Value::Object(Map::new());
            }
            sel.as_object_mut()?.insert("match".into(), Value::String(selector.to_owned()));
        }
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&serde_saphyr::to_string(&v).ok()?);
    }
    Some(out)
}

/// The bytes a patch becomes for `pool`'s machines.
fn text_for(p: &Patch, selector: &str) -> String {
    let body = completed(p, selector).unwrap_or_else(|| p.file.emitted().to_owned());
    format!("# {HEADER}\n# From {} (`patch` at the {} level).\n{body}", p.path.value, p.level.as_str())
}

/// The file a patch becomes, with its place in the order.
fn file_name(i: usize, patch: &Patch) -> String {
    let base = patch.path.value.rsplit('/').next().unwrap_or(&patch.path.value);
    let stem = base.strip_suffix(".yaml").or_else(|| base.strip_suffix(".yml")).unwrap_or(base);
    format!("{:02}-{stem}.yaml", i + 1)
}

/// A pool's patch files under `dir` (the cluster's `talos/<env>/<cluster>`), in apply order.
pub fn pool_patches(dir: &str, pool: &Pool, metal: bool) -> Result<Vec<DocSet>, EmitError> {
    let selector = ephemeral_match(pool, metal);
    if pool.patches.len() > 99 {
        return Err(EmitError(format!("pool `{}` has more than 99 patches", pool.name)));
    }
    Ok(pool
        .patches
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = format!(
                "{dir}/{}/{}",
                paths::pool_patches(pool.role == Role::ControlPlane, &pool.name.value),
                file_name(i, p)
            );
            DocSet { path, docs: Vec::new(), text: text_for(p, &selector) }
        })
        .collect())
}

/// A named node's patch files (the node level's only), in apply order: they apply after its
/// pool's (docs/talos.md, "Patches").
/// On bare metal a node's patch gets the node's own EPHEMERAL selector when it declares an
/// `ephemeral-disk`.
pub fn node_patches(dir: &str, pool: &Pool, m: &Machine, metal: bool) -> Result<Vec<DocSet>, EmitError> {
    let selector = match (&m.settings.ephemeral_disk, metal) {
        (Some(d), true) => machine_ephemeral_match(d),
        _ => ephemeral_match(pool, metal),
    };
    if m.settings.patches.len() > 99 {
        return Err(EmitError(format!("node `{}` of pool `{}` has more than 99 patches", m.hostname, pool.name)));
    }
    Ok(m.settings
        .patches
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = format!("{dir}/{}/{}", paths::node_patches(&m.hostname), file_name(i, p));
            DocSet { path, docs: Vec::new(), text: text_for(p, &selector) }
        })
        .collect())
}
