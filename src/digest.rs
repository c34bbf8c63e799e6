//! The one digest every stage shares: sha256 in lowercase hex, as `sha256sum` prints it. It
//! pins vendored files (`model`), names schematics (`schematic`) and fills
//! `MANIFEST.sha256` (`artifacts`, which re-exports it). A leaf: it imports no stage.

use sha2::{Digest, Sha256};

/// `sha256sum`'s hex form of `bytes`' digest.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
