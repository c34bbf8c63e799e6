//! `fleetc talos render <env>/<cluster> --out DIR`: complete machine configs, one per node, and
//! a talosconfig, for operators who apply with talosctl instead of tofu. Talos's own generator
//! does the work (`talosctl gen config --with-secrets <bundle> --config-patch @<doc>…`) on
//! the decrypted bundle and the Talos documents of out/ (common, role, node). The results
//! hold the cluster's secrets: files of mode 0600 in a directory of mode 0700, which may not
//! lie inside out/ (nothing decrypted is ever written there).

use std::path::{Path, PathBuf};

use super::layout;
use super::runner::Cmd;
use super::session::{Failure, Session, Step, StepResult};
use super::target::ClusterTarget;
use super::work::{Work, display};
use super::{Inputs, Runner};
use crate::model::Role;
use crate::secrets::{self, Identity, TALOS_SECRETS};

#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    pub plan: bool,
    pub identity: Option<PathBuf>,
    pub dest: PathBuf,
}

/// Whether `path` (existing or not) lies inside `dir`: both made absolute, `.` and `..`
/// resolved, and the nearest existing ancestor canonicalized (through links).
pub fn inside(path: &Path, dir: &Path) -> bool {
    fn lexical(p: &Path) -> PathBuf {
        let abs = if p.is_absolute() { p.to_owned() } else { std::env::current_dir().unwrap_or_default().join(p) };
        let mut out = PathBuf::new();
        for c in abs.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    }
    fn canon(p: &Path) -> PathBuf {
        let p = lexical(p);
        let mut base = p.clone();
        let mut rest = Vec::new();
        loop {
            if let Ok(c) = base.canonicalize() {
                return rest.iter().rev().fold(c, |acc, part| acc.join(part));
            }
            match (base.file_name().map(ToOwned::to_owned), base.parent().map(Path::to_owned)) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    base = parent;
                }
                _ => return p,
            }
        }
    }
    canon(path).starts_with(canon(dir))
}

pub fn render(
    inp: &Inputs<'_>,
    cluster: &str,
    opts: &RenderOptions,
    runner: &mut dyn Runner,
    sink: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let mut s = Session::new(runner, opts.plan, true, sink);
    s.begin(Step::Preflight);
    let Some(c) = inp.target.clusters.iter().find(|c| c.name == cluster) else {
        return s.fail(format!("environment `{}` has no cluster `{cluster}`", inp.target.env));
    };
    if inside(&opts.dest, inp.out_dir) {
        return s.fail(format!(
            "{} lies inside {}: rendered configs hold the cluster's secrets, and nothing decrypted is ever written under out/",
            opts.dest.display(),
            inp.out_dir.display()
        ));
    }
    match inp.build.check(inp.out_dir) {
        Ok(r) if r.is_fresh() => {}
        Ok(_) => {
            return s.fail(format!("{} is not what fleet.kdl builds; run `fleetc build` first", inp.out_dir.display()));
        }
        Err(e) => return s.fail(format!("cannot read {}: {e}", inp.out_dir.display())),
    }
    let work =
        Work::new(s.plan, &[inp.out_dir]).map_err(|e| s.failure(format!("cannot create a private directory: {e}")))?;
    let bundle_name = format!("{cluster}-{TALOS_SECRETS}.yaml");
    let bundle = if s.plan {
        s.note(&format!("decrypts {} into a private file", secrets::rel_path(&inp.target.env, cluster, TALOS_SECRETS)));
        work.file(&bundle_name)
    } else {
        let Some(path) = Identity::locate(opts.identity.as_deref(), inp.env.get(secrets::IDENTITY_VAR).map(Into::into))
        else {
            return s.fail(format!(
                "rendering needs an age identity: pass --identity FILE or set {}",
                secrets::IDENTITY_VAR
            ));
        };
        let id = Identity::from_file(&path).map_err(|e| s.failure(e.to_string()))?;
        let plain = secrets::open_file(inp.fleet_dir, &inp.target.env, cluster, TALOS_SECRETS, &id)
            .map_err(|e| s.failure(e.to_string()))?;
        if let Some(t) = plain.as_str() {
            s.secret(t);
        }
        secrets::bundle::validate(plain.bytes())
            .map_err(|e| s.failure(format!("the sealed bundle is not valid: {e}")))?;
        let p = work
            .write(&bundle_name, plain.bytes())
            .map_err(|e| s.failure(format!("cannot write a private file: {e}")))?;
        create_dest(&opts.dest).map_err(|e| s.failure(format!("cannot create {}: {e}", opts.dest.display())))?;
        p
    };
    s.begin(Step::Render);
    for node in c.nodes() {
        let file = opts.dest.join(format!("{}.yaml", node.hostname));
        let cmd = node_config(&mut s, &work, inp.build, &inp.target.env, c, node, &bundle)?;
        // Mode 0600 whatever talosctl did, also when it failed after writing.
        let ran = s.run(cmd.args(["--output", &display(&file), "--force"]));
        private(&mut s, &file)?;
        ran?;
    }
    let tc = opts.dest.join("talosconfig");
    let ran =
        s.run(gen_config(c, &bundle).args(["--output-types", "talosconfig", "--output", &display(&tc), "--force"]));
    private(&mut s, &tc)?;
    ran?;
    s.note(&format!("{} configs and a talosconfig in {} (mode 0600)", c.nodes().count(), opts.dest.display()));
    Ok(())
}

/// The `--talos-version` of `talosctl gen config`: the contract minor talosctl is told.
fn render_contract(talos: crate::model::Version) -> String {
    use crate::check::versions::{Consumer, table};
    let (a, b) = table().contract(Consumer::Talosctl, talos).unwrap_or(talos.minor_version());
    format!("v{a}.{b}")
}

/// `talosctl gen config` of one node's complete machine config, with the Talos documents
/// of out/ as patches in their order (common, role and pool, the node's own, the pool's user
/// patches, the node's own patches), each a private copy of the checked bytes. The caller adds
/// `--output`. `fleetc talos render` and bare-metal apply (`apply/metal.rs`) build the same.
pub(super) fn node_config(
    s: &mut Session<'_>,
    work: &Work,
    build: &crate::artifacts::ArtifactSet,
    env: &str,
    c: &ClusterTarget,
    node: &super::target::NodeTarget,
    bundle: &Path,
) -> StepResult<Cmd> {
    let cluster = c.name.as_str();
    let cp = node.role == Role::ControlPlane;
    let mut cmd = gen_config(c, bundle)
        .args(["--output-types", if cp { "controlplane" } else { "worker" }])
        .args(["--install-image", &node.installer]);
    let mut files: Vec<String> = layout::node_patch_candidates(env, cluster, cp, &node.pool, &node.hostname)
        .into_iter()
        .filter(|p| build.get(p).is_some())
        .collect();
    // The user's patches of the node's pool, then the node's own, last (docs/talos.md,
    // "Patches").
    for dir in
        [layout::pool_patch_dir(env, cluster, cp, &node.pool), layout::node_patch_dir(env, cluster, &node.hostname)]
    {
        files.extend(build.paths().filter(|p| p.starts_with(&dir) && !p[dir.len()..].contains('/')).map(str::to_owned));
    }
    for p in files {
        let Some(bytes) = build.get(&p) else { continue };
        // The checked bytes, as a private copy: out/ may change while talosctl runs.
        let name = format!("patch-{}", p.replace('/', "__"));
        let copy = if work.file(&name).exists() {
            work.file(&name)
        } else {
            work.write(&name, bytes).map_err(|e| s.failure(format!("cannot write a private file: {e}")))?
        };
        cmd = cmd.arg("--config-patch").arg(format!("@{}", display(&copy)));
    }
    Ok(cmd)
}

fn gen_config(c: &ClusterTarget, bundle: &Path) -> Cmd {
    Cmd::new("talosctl")
        .args(["gen", "config", &c.name, &c.endpoint_url, "--with-secrets", &display(bundle)])
        .args([
            "--talos-version",
            // The document model fleetc writes for this Talos (versions/talos.kdl): `v1.13`
            // for a 1.14 node, whose talosctl would otherwise generate the 1.14 documents.
            &render_contract(c.talos),
            "--kubernetes-version",
            &c.kubernetes.to_string(),
        ])
        .args(["--with-docs=false", "--with-examples=false"])
}

#[cfg(unix)]
fn create_dest(dest: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if !dest.is_dir() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dest)?;
    }
    // An existing DEST is made private too: the configs hold the cluster's keys.
    std::fs::set_permissions(dest, std::fs::Permissions::from_mode(0o700))
}

#[cfg(not(unix))]
fn create_dest(dest: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dest)
}

/// Sets mode 0600 on what a tool wrote (it may have used its own umask).
fn private(s: &mut Session<'_>, file: &Path) -> StepResult {
    if s.plan {
        return Ok(());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if file.exists() {
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| s.failure(format!("cannot restrict {}: {e}", file.display())))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_sees_through_dots_and_missing_dirs() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        assert!(inside(&out.join("x/y"), &out));
        assert!(inside(&d.path().join("z/../out/r"), &out));
        assert!(!inside(&d.path().join("rendered"), &out));
    }

    /// A 1.14 node's configs are rendered with the 1.13 contract, the document model fleetc
    /// writes: talosctl 1.14 with `--talos-version v1.14` generates the 1.14 documents, which
    /// conflict with the model's v1alpha1 fields on the node (oracles/talos/README.md).
    #[test]
    fn render_passes_the_document_model_as_the_contract() {
        let v = |s: &str| s.parse::<crate::model::Version>().unwrap();
        assert_eq!(render_contract(v("v1.14.1")), "v1.13");
        assert_eq!(render_contract(v("v1.13.9")), "v1.13");
        assert_eq!(render_contract(v("v1.12.6")), "v1.12");
    }
}
