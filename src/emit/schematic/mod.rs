//! Image Factory schematics: `schematics/<name>.yaml` holds exactly the bytes the factory
//! hashes, so `sha256sum` of the file is the schematic ID (no header: a comment would change
//! the hash). The apply step posts these bytes to the factory and compares its answer (F2).

use super::EmitResult;
use crate::artifacts::set::ArtifactSet;
use crate::model::Fleet;

pub fn emit(fleet: &Fleet) -> EmitResult {
    let mut out = ArtifactSet::new();
    for s in fleet.schematics.values() {
        out.insert(crate::layout::paths::schematic_file(&s.name.value), s.canonical.as_bytes())?;
    }
    Ok(out)
}
