//! Step 1: every schematic the environment boots is registered with the Image Factory
//! (`POST /schematics`, F2), through `curl` (fleetc links no network code). The factory
//! answers `{"id": "<sha256>"}`, the SHA-256 of the canonical bytes it stored; it must equal
//! the ID of out/'s bytes, or the factory would serve another image than the one the configs
//! name, and the apply stops.

use std::path::Path;

use super::runner::Cmd;
use super::session::{Session, StepResult};
use super::target::Target;
use crate::artifacts::ArtifactSet;
use crate::digest::sha256_hex;
use crate::layout::paths;
use crate::model::IMAGE_FACTORY;

pub fn register(s: &mut Session<'_>, target: &Target, out: &ArtifactSet, out_dir: &Path) -> StepResult {
    let mut seen = Vec::new();
    for image in &target.images {
        if seen.contains(&image.schematic) {
            continue;
        }
        seen.push(image.schematic.clone());
        let rel = paths::schematic_file(&image.schematic);
        let Some(bytes) = out.get(&rel) else {
            return s.fail(format!("out/ has no {rel}; run `fleetc build`"));
        };
        let local = sha256_hex(bytes);
        if local != image.schematic_id {
            return s.fail(format!(
                "{rel} hashes to {local}, not to the schematic ID {}; run `fleetc build`",
                image.schematic_id
            ));
        }
        let cmd = Cmd::new("curl")
            .args(["--silent", "--show-error", "--fail-with-body", "--request", "POST"])
            .args(["--header", "Content-Type: application/yaml"])
            .arg("--data-binary")
            .arg(format!("@{}", out_dir.join(&rel).display()))
            .arg(format!("https://{IMAGE_FACTORY}/schematics"))
            .plan_stdout(format!("{{\"id\":\"{local}\"}}"));
        let answer = s.run(cmd)?;
        let id = serde_json::from_slice::<serde_json::Value>(&answer.stdout)
            .ok()
            .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_owned));
        match id {
            Some(id) if id == local => s.note(&format!("schematic `{}` registered: {id}", image.schematic)),
            Some(id) => {
                return s.fail(format!(
                    "the Image Factory answered ID {id} for schematic `{}`, but out/ has {local}: the factory's canonical bytes differ from fleetc's (F2), so its images would not be the ones the configs name; nothing was built",
                    image.schematic
                ));
            }
            None => {
                return s
                    .fail(format!("the Image Factory's answer for schematic `{}` carries no `id`", image.schematic));
            }
        }
    }
    Ok(())
}
