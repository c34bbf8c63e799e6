//! etcd snapshots: where `fleetc upgrade` keeps them ([`dir`]), how it takes one before a
//! control-plane node ([`take`]), and how a snapshot file is checked ([`verify`]) — by
//! `upgrade` right after taking it and by `restore` before it touches a node.
//!
//! The check is the one etcd itself applies when a snapshot is restored, which
//! `talosctl etcd snapshot` does not apply when it saves one:
//!
//! * the file ends with the sha256 of the database before it (etcd-io/etcd v3.6.12
//!   `etcdutl/snapshot/v3_snapshot.go` l.93-98 `hasChecksum`: size mod 512 = 32; l.436-499
//!   `copyAndVerifyDB`: the digest of everything before the trailer must equal the trailer).
//!   talosctl (siderolabs/talos v1.13.9 `cmd/talosctl/cmd/talos/etcd.go` l.373-376) checks
//!   only the size, and renames the file into place before reading its status (l.382-396);
//! * the database is a bbolt file whose meta page validates (etcd-io/bbolt v1.4.3
//!   `internal/common/meta.go` l.25-35 `Validate`: magic `0xED0CDAED`, version 2, FNV-64a of
//!   the meta fields before the checksum; `internal/common/types.go` l.13-16; the page header,
//!   16 bytes, `internal/common/page.go` l.31-36), as bbolt checks when etcd opens it.
//!
//! A damaged snapshot is found when it is taken, not on the day it is needed.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::ctx::Inputs;
use super::nodes::{Node, talosctl};
use super::session::{Session, StepResult};
use super::target::ClusterTarget;
use super::work::display;

/// What a verified snapshot is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The database's size, without the trailer.
    pub db_bytes: u64,
    /// The trailer: the database's sha256, hex.
    pub sha256: String,
}

const SHA256_LEN: usize = 32;
const BOLT_MAGIC: u32 = 0xED0C_DAED;
const BOLT_VERSION: u32 = 2;
/// The page header before the meta fields.
const PAGE_HEADER: usize = 16;
/// The meta fields before `checksum`: magic, version, pageSize, flags (4 bytes each), root
/// bucket (16), freelist, pgid, txid (8 each).
const META_SUMMED: usize = 56;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|s| u32::from_le_bytes(s.try_into().unwrap_or_default()))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8).map(|s| u64::from_le_bytes(s.try_into().unwrap_or_default()))
}

fn fnv64a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Whether the meta page at `at` validates as bbolt's `Meta.Validate` does; its page size.
fn meta_at(db: &[u8], at: usize) -> Result<u32, &'static str> {
    let m = at + PAGE_HEADER;
    if u32_at(db, m) != Some(BOLT_MAGIC) {
        return Err("no bbolt magic");
    }
    if u32_at(db, m + 4) != Some(BOLT_VERSION) {
        return Err("a bbolt version other than 2");
    }
    let sum = db.get(m..m + META_SUMMED).map(fnv64a);
    if sum.is_none() || sum != u64_at(db, m + META_SUMMED) {
        return Err("a meta page whose checksum does not match");
    }
    u32_at(db, m + 8).ok_or("a short meta page")
}

/// Checks a snapshot's bytes as etcd does when it restores one (see the module's comment).
pub fn verify_bytes(bytes: &[u8]) -> Result<Verified, String> {
    let n = bytes.len();
    if n % 512 != SHA256_LEN || n < 512 {
        return Err(format!(
            "it has no integrity hash (size {n}, not 32 more than a multiple of 512): not a whole `talosctl etcd snapshot`"
        ));
    }
    let (db, trailer) = bytes.split_at(n - SHA256_LEN);
    let digest = Sha256::digest(db);
    if digest.as_slice() != trailer {
        return Err(format!(
            "its sha256 is {} but the snapshot says {}: the file is damaged, and etcd would refuse it at restore",
            crate::digest::sha256_hex(db),
            trailer.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ));
    }
    // bbolt keeps two meta pages (0 and 1, at the page size) and opens with the valid one.
    let first = meta_at(db, 0);
    let valid = match first {
        Ok(_) => true,
        Err(_) => [4096usize, 16384, 65536].iter().any(|p| meta_at(db, *p).is_ok()),
    };
    if !valid {
        return Err(format!("it is not an etcd database: {}", first.err().unwrap_or("no valid bbolt meta page")));
    }
    Ok(Verified { db_bytes: db.len() as u64, sha256: crate::digest::sha256_hex(db) })
}

/// [`verify_bytes`] of the file at `path`.
pub fn verify(path: &Path) -> Result<Verified, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    verify_bytes(&bytes)
}

/// The default directory under the operator's state directory (`$XDG_STATE_HOME`, else
/// `~/.local/state`): outside every repository.
const DEFAULT_UNDER_STATE: &str = "fleetc/etcd-snapshots";

/// Where the snapshots of cluster `c` go: `<etcd-snapshots>/<env>/<cluster>/`, the directory
/// fleet.kdl names (absolute, or `~/…`) or the default. Refused inside the fleet's directory
/// (a git repository: a snapshot holds every Secret of the cluster) and inside out/.
pub fn dir(inp: &Inputs<'_>, c: &ClusterTarget) -> Result<PathBuf, String> {
    let home = inp.env.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let base = match c.etcd_snapshots.as_deref() {
        Some(p) if p.starts_with("~/") => {
            home.ok_or("`etcd-snapshots` starts with `~/` and HOME is not set")?.join(&p[2..])
        }
        Some(p) if Path::new(p).is_absolute() => PathBuf::from(p),
        Some(p) => {
            return Err(format!(
                "`etcd-snapshots \"{p}\"` is relative: it would sit beside fleet.kdl, in git; give an absolute path or `~/…` (R28)"
            ));
        }
        None => match inp.env.get("XDG_STATE_HOME").filter(|x| Path::new(x).is_absolute()) {
            Some(x) => PathBuf::from(x).join(DEFAULT_UNDER_STATE),
            None => home
                .ok_or("neither `etcd-snapshots` in fleet.kdl nor HOME says where etcd snapshots go")?
                .join(".local/state")
                .join(DEFAULT_UNDER_STATE),
        },
    };
    let abs = |p: &Path| std::fs::canonicalize(p).or_else(|_| std::path::absolute(p)).unwrap_or_else(|_| p.to_owned());
    let (b, fleet, out) = (abs(&base), abs(inp.fleet_dir), abs(inp.out_dir));
    if b.starts_with(&fleet) || b.starts_with(&out) {
        return Err(format!(
            "etcd snapshots would go to {}, inside the fleet's directory: a snapshot holds every Secret of the cluster and must never reach git; set `etcd-snapshots` to a directory outside it (R28)",
            b.display()
        ));
    }
    Ok(base.join(&inp.target.env).join(&c.name))
}

/// `unix` seconds as `YYYYMMDDTHHMMSSZ` (the proleptic Gregorian calendar, UTC).
pub fn stamp(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
}

/// Takes a snapshot through `node` into `dir` (created 0700) and verifies it; returns its
/// path. Under `--plan` nothing is written or read.
pub fn take(s: &mut Session<'_>, tc: &str, node: &Node, dir: &Path) -> StepResult<PathBuf> {
    let path = dir.join(format!("{}-{}.db", stamp(s.now()), node.hostname));
    if !s.plan {
        create_private_dir(dir).map_err(|e| s.failure(format!("cannot create {}: {e}", dir.display())))?;
    }
    s.run(talosctl(tc, node).args(["etcd", "snapshot", &display(&path)]))
        .map_err(|f| s.failure(format!("no etcd snapshot through node {}: {}", node.hostname, f.message)))?;
    if s.plan {
        s.note(&format!("{}: checked as etcd checks it at restore (sha256 trailer, bbolt meta page)", path.display()));
        return Ok(path);
    }
    match verify(&path) {
        Ok(v) => {
            s.note(&format!("etcd snapshot {} verified: {} bytes, sha256 {}", path.display(), v.db_bytes, v.sha256));
            Ok(path)
        }
        Err(e) => s.fail(format!(
            "the etcd snapshot {} taken through node {} fails its check: {e}; the upgrade of node {} did not start",
            path.display(),
            node.hostname,
            node.hostname
        )),
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bbolt file's first page as bbolt writes it: meta page 0 (flags 0x04) of a 4096-byte page.
    pub fn bolt_db() -> Vec<u8> {
        let mut db = vec![0u8; 4 * 4096];
        db[8..10].copy_from_slice(&0x04u16.to_le_bytes());
        let m = PAGE_HEADER;
        db[m..m + 4].copy_from_slice(&BOLT_MAGIC.to_le_bytes());
        db[m + 4..m + 8].copy_from_slice(&BOLT_VERSION.to_le_bytes());
        db[m + 8..m + 12].copy_from_slice(&4096u32.to_le_bytes());
        let sum = fnv64a(&db[m..m + META_SUMMED]);
        db[m + META_SUMMED..m + META_SUMMED + 8].copy_from_slice(&sum.to_le_bytes());
        db
    }

    #[test]
    fn a_snapshot_is_checked_as_etcd_checks_it() {
        let mut snap = bolt_db();
        let digest = Sha256::digest(&snap);
        snap.extend_from_slice(digest.as_slice());
        assert_eq!(verify_bytes(&snap).unwrap().db_bytes, 4 * 4096);
        let mut damaged = snap.clone();
        damaged[9000] ^= 1;
        assert!(verify_bytes(&damaged).unwrap_err().contains("damaged"));
        assert!(verify_bytes(&snap[..snap.len() - 32]).unwrap_err().contains("no integrity hash"));
        let mut not_bolt = vec![7u8; 4096];
        let d = Sha256::digest(&not_bolt);
        not_bolt.extend_from_slice(d.as_slice());
        assert!(verify_bytes(&not_bolt).unwrap_err().contains("not an etcd database"));
    }

    #[test]
    fn stamps_are_utc() {
        assert_eq!(stamp(1_796_428_800 + 3 * 3600 + 61), "20261205T030101Z");
        assert_eq!(stamp(0), "19700101T000000Z");
        assert_eq!(stamp(951_782_400), "20000229T000000Z");
    }
}
