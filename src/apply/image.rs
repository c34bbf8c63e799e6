//! Step 2: the image pipeline on Scaleway (R22), through the `scw` CLI and `curl`.
//!
//! For each image (one per schematic and Talos version, named by
//! [`crate::model::Schematic::image_name`]): an image of that name that is available is
//! reused; a snapshot of that name is turned into an image; otherwise the disk image is
//! downloaded from the factory, its header read *before* anything is uploaded (qcow2 magic
//! `QFI\xfb` goes as is, a raw image is converted with `qemu-img`, a compressed one is
//! refused), uploaded to the state bucket under `images/`, imported as a block snapshot and
//! made an instance image. Every wait is fleetc's own poll with a timeout: a resource in
//! `error` stops the apply, since the CLI's own waits exit 0 on failure as on success.

use std::time::Duration;

use serde_json::Value;

use super::ctx::Ctx;
use super::runner::Cmd;
use super::session::{Session, StepResult};
use super::target::{ImageTarget, ProviderTarget};
use super::work::display;

/// How long a snapshot import or an image creation may take.
pub const TIMEOUT: Duration = Duration::from_secs(30 * 60);
pub const POLL: Duration = Duration::from_secs(10);
/// The size the snapshot is imported with (the Talos Scaleway guide uses 10GB; the instance's
/// root volume is larger and grows to its size).
pub const SNAPSHOT_SIZE: &str = "10GB";

/// What the first bytes of a disk image say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Qcow2,
    Raw,
    Compressed(&'static str),
    /// Not a disk image at all (an HTML error page served with status 200, a truncated
    /// download): refused before anything is converted or uploaded.
    Unknown,
}

/// How many bytes [`sniff`] needs: a raw disk's partition table signature sits at 510 (the
/// MBR's `55 AA`, also the protective MBR of a GPT disk) and 512 (`EFI PART`).
pub const HEADER_LEN: usize = 520;

/// What a download is, from its first [`HEADER_LEN`] bytes. qcow2: magic `QFI\xfb` and
/// version 2 or 3 (QEMU `docs/interop/qcow2.txt`); zstd, xz, gzip by their magic; raw only
/// with a partition table (Talos's disk images are GPT); anything else is [`Format::Unknown`].
pub fn sniff(header: &[u8]) -> Format {
    if header.starts_with(b"QFI\xfb") && matches!(header.get(4..8), Some([0, 0, 0, 2 | 3])) {
        Format::Qcow2
    } else if header.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Format::Compressed("zstd")
    } else if header.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Format::Compressed("xz")
    } else if header.starts_with(&[0x1f, 0x8b]) {
        Format::Compressed("gzip")
    } else if header.get(510..512) == Some(&[0x55, 0xaa]) || header.get(512..520) == Some(b"EFI PART") {
        Format::Raw
    } else {
        Format::Unknown
    }
}

pub fn pipeline(s: &mut Session<'_>, ctx: &Ctx<'_>) -> StepResult {
    let ProviderTarget::Scaleway { project, zone, .. } = &ctx.target.provider else {
        s.note("Proxmox: no upload pipeline; the cloud root fetches each image from the factory by its URL");
        return Ok(());
    };
    for image in &ctx.target.images {
        s.note(&format!(
            "image {} (schematic `{}` {}, Talos {})",
            image.name,
            image.schematic,
            &image.schematic_id[..12],
            image.talos.v()
        ));
        one(s, ctx, image, project, zone)?;
    }
    Ok(())
}

fn scw(ctx: &Ctx<'_>, args: &[&str]) -> Cmd {
    Cmd::new("scw").args(args.iter().copied()).envs(&ctx.scw_env())
}

fn one(s: &mut Session<'_>, ctx: &Ctx<'_>, image: &ImageTarget, project: &str, zone: &str) -> StepResult {
    let z = format!("zone={zone}");
    let p = format!("project-id={project}");
    let name = format!("name={}", image.name);
    // An image that an earlier run finished is reused.
    let list = s.run(scw(ctx, &["instance", "image", "list", &name, &z, &p, "-o", "json"]).plan_stdout("[]"))?;
    if let Some(found) = exact(&list.stdout, &image.name) {
        let id = str_at(&found, &["id"]).unwrap_or_default();
        match str_at(&found, &["state"]).as_deref() {
            Some("available") => {
                s.note(&format!("reusing image {id}"));
                return Ok(());
            }
            Some("error") => {
                return s.fail(format!("image {} ({id}) is in error; delete it and run again", image.name));
            }
            _ => return wait_image(s, ctx, &id, zone),
        }
    }
    // A snapshot an earlier run imported becomes the image.
    let snaps = s.run(scw(ctx, &["block", "snapshot", "list", &name, &z, &p, "-o", "json"]).plan_stdout("[]"))?;
    let snapshot_id = match exact(&snaps.stdout, &image.name) {
        Some(found) => {
            let id = str_at(&found, &["id"]).unwrap_or_default();
            s.note(&format!("reusing snapshot {id}"));
            wait_snapshot(s, ctx, &id, zone)?;
            id
        }
        None => upload_and_import(s, ctx, image, &z, &p)?,
    };
    let created = s.run(
        scw(
            ctx,
            &[
                "instance",
                "image",
                "create",
                &z,
                &p,
                &name,
                &format!("snapshot-id={snapshot_id}"),
                "arch=x86_64",
                "-o",
                "json",
            ],
        )
        .plan_stdout("{\"image\":{\"id\":\"<image-id>\",\"state\":\"creating\"}}"),
    )?;
    let v = json(&created.stdout);
    let id = str_at(&v, &["image", "id"]).or_else(|| str_at(&v, &["id"])).unwrap_or_default();
    if id.is_empty() {
        return s.fail("`scw instance image create` returned no image id");
    }
    wait_image(s, ctx, &id, zone)
}

fn upload_and_import(s: &mut Session<'_>, ctx: &Ctx<'_>, image: &ImageTarget, z: &str, p: &str) -> StepResult<String> {
    let download = ctx.work.file(&format!("{}.download", image.name));
    s.run(
        Cmd::new("curl")
            .args(["--fail", "--silent", "--show-error", "--location", "--output"])
            .arg(display(&download))
            .arg(&image.url),
    )?;
    // R22: the header is read before anything is sent.
    let upload = if s.plan {
        s.note("reads the image header: qcow2 (`QFI\\xfb`) is uploaded as is; a raw image is converted first with:");
        s.note(&format!(
            "  qemu-img convert -f raw -O qcow2 {} {}",
            display(&download),
            display(&ctx.work.file(&format!("{}.qcow2", image.name)))
        ));
        download
    } else {
        match sniff(&header(&download).map_err(|e| s.failure(format!("cannot read {}: {e}", display(&download))))?) {
            Format::Qcow2 => download,
            Format::Compressed(kind) => {
                return s.fail(format!("{} is {kind}-compressed, not a disk image; nothing was uploaded", image.url));
            }
            Format::Unknown => {
                return s.fail(format!(
                    "what {} served is not a disk image (no qcow2 magic, no partition table: an error page or a truncated download?); nothing was converted or uploaded",
                    image.url
                ));
            }
            Format::Raw => {
                let converted = ctx.work.file(&format!("{}.qcow2", image.name));
                s.run(
                    Cmd::new("qemu-img")
                        .args(["convert", "-f", "raw", "-O", "qcow2"])
                        .arg(display(&download))
                        .arg(display(&converted)),
                )?;
                let h = header(&converted).unwrap_or_default();
                if sniff(&h) != Format::Qcow2 {
                    return s.fail("qemu-img did not produce a qcow2 image; nothing was uploaded");
                }
                converted
            }
        }
    };
    let key = format!("images/{}.qcow2", image.name);
    let curlrc = ctx
        .work
        .write(
            "s3.curlrc",
            format!("user = \"{}:{}\"\n", ctx.credential("AWS_ACCESS_KEY_ID"), ctx.credential("AWS_SECRET_ACCESS_KEY"))
                .as_bytes(),
        )
        .map_err(|e| s.failure(format!("cannot write a private file: {e}")))?;
    s.run(
        Cmd::new("curl")
            .args(["--fail", "--silent", "--show-error", "--config"])
            .arg(display(&curlrc))
            .args(["--aws-sigv4", &format!("aws:amz:{}:s3", ctx.target.state_region)])
            .arg("--upload-file")
            .arg(display(&upload))
            .arg(format!("{}/{}/{key}", ctx.target.state_endpoint.trim_end_matches('/'), ctx.target.state_bucket)),
    )?;
    let imported = s.run(
        scw(
            ctx,
            &[
                "block",
                "snapshot",
                "import-from-object-storage",
                z,
                p,
                &format!("name={}", image.name),
                &format!("bucket={}", ctx.target.state_bucket),
                &format!("key={key}"),
                &format!("size={SNAPSHOT_SIZE}"),
                "-o",
                "json",
            ],
        )
        .plan_stdout("{\"id\":\"<snapshot-id>\",\"status\":\"creating\"}"),
    )?;
    let id = str_at(&json(&imported.stdout), &["id"]).unwrap_or_default();
    if id.is_empty() {
        return s.fail("`scw block snapshot import-from-object-storage` returned no snapshot id");
    }
    wait_snapshot(s, ctx, &id, z.trim_start_matches("zone="))?;
    Ok(id)
}

fn wait_snapshot(s: &mut Session<'_>, ctx: &Ctx<'_>, id: &str, zone: &str) -> StepResult {
    poll(s, &format!("snapshot {id}"), "status", "available", || {
        scw(ctx, &["block", "snapshot", "get", id, &format!("zone={zone}"), "-o", "json"])
            .plan_stdout(format!("{{\"id\":\"{id}\",\"status\":\"available\"}}"))
    })
}

fn wait_image(s: &mut Session<'_>, ctx: &Ctx<'_>, id: &str, zone: &str) -> StepResult {
    poll(s, &format!("image {id}"), "state", "available", || {
        scw(ctx, &["instance", "image", "get", id, &format!("zone={zone}"), "-o", "json"])
            .plan_stdout(format!("{{\"image\":{{\"id\":\"{id}\",\"state\":\"available\"}}}}"))
    })
}

/// Polls until `field` is `done`; `error` (or any state containing it) fails at once.
fn poll(s: &mut Session<'_>, what: &str, field: &str, done: &str, cmd: impl Fn() -> Cmd) -> StepResult {
    let mut waited = Duration::ZERO;
    loop {
        let out = s.run(cmd())?;
        let v = json(&out.stdout);
        let state = str_at(&v, &[field]).or_else(|| str_at(&v, &["image", field])).unwrap_or_default();
        if state == done {
            return Ok(());
        }
        if state.contains("error") {
            return s.fail(format!("{what} is in state `{state}`; the CLI's own wait would have exited 0 (R22)"));
        }
        if waited >= TIMEOUT {
            return s.fail(format!("{what} is still `{state}` after {} minutes", TIMEOUT.as_secs() / 60));
        }
        s.sleep(POLL);
        waited += POLL;
    }
}

fn header(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::with_capacity(HEADER_LEN);
    std::fs::File::open(path)?.take(HEADER_LEN as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

fn str_at(v: &Value, path: &[&str]) -> Option<String> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str).map(str::to_owned)
}

/// The element of a JSON list (or `{images: […]}`/`{snapshots: […]}`) named exactly `name`
/// (the CLI's `name=` filter matches substrings).
fn exact(bytes: &[u8], name: &str) -> Option<Value> {
    let v = json(bytes);
    let list = match &v {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o.values().find_map(|x| x.as_array().cloned()).unwrap_or_default(),
        _ => Vec::new(),
    };
    list.into_iter().find(|x| x.get("name").and_then(Value::as_str) == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(sniff(b"QFI\xfb\0\0\0\x03"), Format::Qcow2);
        assert_eq!(sniff(&[0x28, 0xb5, 0x2f, 0xfd, 0]), Format::Compressed("zstd"));
        assert_eq!(sniff(&[0xfd, b'7', b'z', b'X', b'Z', 0]), Format::Compressed("xz"));
        let mut mbr = vec![0u8; 1024];
        mbr[510] = 0x55;
        mbr[511] = 0xaa;
        assert_eq!(sniff(&mbr), Format::Raw);
        assert_eq!(sniff(&[0; 1024]), Format::Unknown);
        assert_eq!(sniff(b"<!DOCTYPE html><html><body>404</body></html>"), Format::Unknown);
        assert_eq!(sniff(b"QFI\xfb\0\0\0\x09"), Format::Unknown);
    }

    #[test]
    fn exact_names_only() {
        let list = br#"[{"name":"talos-v1.13.9-abc-old","id":"1"},{"name":"talos-v1.13.9-abc","id":"2"}]"#;
        assert_eq!(exact(list, "talos-v1.13.9-abc").unwrap()["id"], "2");
        assert!(exact(b"[]", "x").is_none());
    }
}
