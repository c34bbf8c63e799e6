//! The user's Talos patches, passed through: each pool's patches (fleet → environment →
//! cluster → role → pool, model order) are copied, byte for byte under fleetc's header (an
//! RFC 6902 JSON patch as its strategic-merge conversion, `model::patch::PatchFile::emitted`), to
//! `talos/<env>/<cluster>/patches/controlplane/` or `…/patches/workers/<pool>/`
//! (`layout::paths::pool_patches`, a named node's `layout::paths::node_patches`), named
//! `<NN>-<file name>` so that the file-name order is the apply order. Every consumer applies
//! them after fleetc's own documents with Talos's own `configpatcher` (docs/talos.md,
//! "Patches"): the OpenTofu cluster module lists the directory, CABPT gets their text as
//! `strategicPatches`, `fleetc talos render` passes each as `--config-patch`.

use super::{DocSet, HEADER};
use crate::emit::EmitError;
use crate::layout::paths;
use crate::model::{Machine, Patch, Pool, Role};

/// The file a patch becomes, with its place in the order.
fn file_name(i: usize, patch: &Patch) -> String {
    let base = patch.path.value.rsplit('/').next().unwrap_or(&patch.path.value);
    let stem = base.strip_suffix(".yaml").or_else(|| base.strip_suffix(".yml")).unwrap_or(base);
    format!("{:02}-{stem}.yaml", i + 1)
}

/// A pool's patch files under `dir` (the cluster's `talos/<env>/<cluster>`), in apply order.
pub fn pool_patches(dir: &str, pool: &Pool) -> Result<Vec<DocSet>, EmitError> {
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
            let text = format!(
                "# {HEADER}\n# From {} (`patch` at the {} level).\n{}",
                p.path.value,
                p.level.as_str(),
                p.file.emitted()
            );
            DocSet { path, docs: Vec::new(), text }
        })
        .collect())
}

/// A named node's patch files (the node level's only), in apply order: they apply after its
/// pool's (docs/talos.md, "Patches").
pub fn node_patches(dir: &str, pool: &Pool, m: &Machine) -> Result<Vec<DocSet>, EmitError> {
    if m.settings.patches.len() > 99 {
        return Err(EmitError(format!("node `{}` of pool `{}` has more than 99 patches", m.hostname, pool.name)));
    }
    Ok(m.settings
        .patches
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = format!("{dir}/{}/{}", paths::node_patches(&m.hostname), file_name(i, p));
            let text = format!(
                "# {HEADER}\n# From {} (`patch` at the {} level).\n{}",
                p.path.value,
                p.level.as_str(),
                p.file.emitted()
            );
            DocSet { path, docs: Vec::new(), text }
        })
        .collect())
}
