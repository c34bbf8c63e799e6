//! Artifacts: the in-memory output of a build and the only code that writes files, in two
//! rooms on two floors. `set` holds [`ArtifactSet`], the sorted map from relative path to
//! bytes that emit returns (pure, below emit); `disk` holds the writer a build runs after
//! emit (the lock, the manifest, atomic writes, stale-file removal, `build --check`). The
//! set never reads the writer; this door re-exports both so callers name `artifacts::…`.

mod disk;
pub mod set;

pub use disk::{ArtifactError, CheckReport, INPUTS, LOCK, MANIFEST_PENDING, WriteReport, refuse_out_dir};
pub use set::{ArtifactSet, MANIFEST, MANIFEST_HEADER, valid_path};
