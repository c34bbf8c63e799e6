//! `fleetc talos render <env>/<cluster> --out DIR`: complete machine configs, one per node, and
//! a talosconfig, for operators who apply with talosctl instead of tofu. Talos's own generator
//! does the work (`talosctl gen config --with-secrets <bundle> --config-patch-control-plane
//! @<doc>…`, or `--config-patch-worker`: [`patch_flag`]) on
//! the decrypted bundle and the Talos documents of out/ (common, role, node, user patches):
//! once per group of nodes sharing a role, pool and installer, each node's hostname then
//! merged in as talosctl would merge it ([`compose`]); node by node where that is not
//! exact (docs/apply.md). The results
//! hold the cluster's secrets: files of mode 0600 in a directory of mode 0700, which may not
//! lie inside out/ (nothing decrypted is ever written there).

use std::path::{Path, PathBuf};

use super::ctx::Inputs;
use super::runner::{Cmd, Runner};
use super::session::{Failure, Session, Step, StepResult};
use super::target::{ClusterTarget, NodeTarget};
use super::work::{Work, display};
use crate::layout::names::TALOS_SECRETS_INPUT;
use crate::layout::paths;
use crate::model::Role;
use crate::secrets::{self, Identity};

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
    let bundle_name = format!("{cluster}-{TALOS_SECRETS_INPUT}.yaml");
    let bundle = if s.plan {
        s.note(&format!(
            "decrypts {} into a private file",
            secrets::rel_path(&inp.target.env, cluster, TALOS_SECRETS_INPUT)
        ));
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
        let plain = secrets::open_file(inp.fleet_dir, &inp.target.env, cluster, TALOS_SECRETS_INPUT, &id)
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
    // One talosctl call per group of nodes that share everything but their own document (a
    // role, a pool, an installer); each node's config is then its group's with the node's
    // hostname merged in (see `compose`). A group whose nodes carry other documents, or
    // whose generated config is not what `compose` knows, is rendered one node at a time.
    let mut groups: Vec<Vec<&NodeTarget>> = Vec::new();
    for node in c.nodes() {
        match groups
            .iter_mut()
            .find(|g| g[0].role == node.role && g[0].pool == node.pool && g[0].installer == node.installer)
        {
            Some(g) => g.push(node),
            None => groups.push(vec![node]),
        }
    }
    for (k, group) in groups.iter().enumerate() {
        let first = group[0];
        let cp = first.role == Role::ControlPlane;
        let shared = shared_patches(inp, cluster, cp, &first.pool, &work).map_err(|e| s.failure(e))?;
        let hosts: Option<Vec<&str>> = group
            .iter()
            .map(|n| {
                // A node with user patches of its own is rendered on its own.
                let mine = paths::node_patch_dir(&inp.target.env, cluster, &n.hostname);
                if inp.build.paths().any(|p| p.starts_with(&mine)) {
                    return None;
                }
                let own = paths::node_patch_candidates(&inp.target.env, cluster, cp, &n.pool, &n.hostname).pop()?;
                hostname_only(inp.build.get(&own)?).filter(|h| *h == n.hostname)
            })
            .collect();
        let touches_hostname = shared.iter().any(|(_, bytes)| contains(bytes, b"HostnameConfig"));
        let grouped = match hosts {
            Some(hosts) if group.len() > 1 && !touches_hostname => {
                let base = work.file(&format!("group-{k}.yaml"));
                let mut cmd = gen_config(c, &bundle)
                    .args(["--output-types", if cp { "controlplane" } else { "worker" }])
                    .args(["--install-image", &first.installer]);
                for (copy, _) in &shared {
                    cmd = cmd.arg(patch_flag(cp)).arg(format!("@{}", display(copy)));
                }
                let ran = s.run(cmd.args(["--output", &display(&base), "--force"]));
                private(&mut s, &base)?;
                ran?;
                if s.plan {
                    s.note(&format!(
                        "writes {} configs: the group's config with each node's HostnameConfig merged in",
                        hosts.len()
                    ));
                    true
                } else {
                    let text = std::fs::read_to_string(&base).unwrap_or_default();
                    let configs: Option<Vec<String>> = hosts.iter().map(|h| compose(&text, h)).collect();
                    match configs {
                        Some(configs) => {
                            for (h, config) in hosts.iter().zip(configs) {
                                let file = opts.dest.join(format!("{h}.yaml"));
                                write_private(&file, config.as_bytes())
                                    .map_err(|e| s.failure(format!("cannot write {}: {e}", file.display())))?;
                            }
                            true
                        }
                        None => {
                            s.note(
                                "the generated config has no plain HostnameConfig document: one talosctl call per node",
                            );
                            false
                        }
                    }
                }
            }
            _ => false,
        };
        if grouped {
            continue;
        }
        for node in group {
            let file = opts.dest.join(format!("{}.yaml", node.hostname));
            let cmd = node_config(&mut s, &work, inp.build, &inp.target.env, c, node, &bundle)?;
            // Mode 0600 whatever talosctl did, also when it failed after writing.
            let ran = s.run(cmd.args(["--output", &display(&file), "--force"]));
            private(&mut s, &file)?;
            ran?;
        }
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
    use crate::upstream::talos::{Consumer, table};
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
    let mut files: Vec<String> = paths::node_patch_candidates(env, cluster, cp, &node.pool, &node.hostname)
        .into_iter()
        .filter(|p| build.get(p).is_some())
        .collect();
    // The user's patches of the node's pool, then the node's own, last (docs/talos.md,
    // "Patches").
    for dir in
        [paths::pool_patch_dir(env, cluster, cp, &node.pool), paths::node_patch_dir(env, cluster, &node.hostname)]
    {
        files.extend(files_in(build, &dir));
    }
    for p in files {
        let Some(bytes) = build.get(&p) else { continue };
        // The checked bytes, as a private copy: out/ may change while talosctl runs.
        let copy = private_copy(work, &p, bytes).map_err(|e| s.failure(e))?;
        cmd = cmd.arg(patch_flag(cp)).arg(format!("@{}", display(&copy)));
    }
    Ok(cmd)
}

/// The patches every node of a group shares, as private copies of the checked build's bytes
/// (out/ may change while talosctl runs), in order: the cluster's common documents and the
/// role's (fleetc's own), then the pool's user patches.
fn shared_patches(
    inp: &Inputs<'_>,
    cluster: &str,
    cp: bool,
    pool: &str,
    work: &Work,
) -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
    let mut out = Vec::new();
    let mut fleetc = paths::node_patch_candidates(&inp.target.env, cluster, cp, pool, "");
    fleetc.pop(); // the node's own
    let user = paths::pool_patch_dir(&inp.target.env, cluster, cp, pool);
    for p in fleetc.into_iter().chain(files_in(inp.build, &user)) {
        if let Some(bytes) = inp.build.get(&p) {
            out.push((private_copy(work, &p, bytes)?, bytes.to_vec()));
        }
    }
    Ok(out)
}

/// The files directly inside `dir` of the build (a level's user patches), in path order.
fn files_in(build: &crate::artifacts::ArtifactSet, dir: &str) -> Vec<String> {
    build.paths().filter(|p| p.starts_with(dir) && !p[dir.len()..].contains('/')).map(str::to_owned).collect()
}

fn private_copy(work: &Work, path: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let name = format!("patch-{}", path.replace('/', "__"));
    if work.file(&name).exists() {
        return Ok(work.file(&name));
    }
    work.write(&name, bytes).map_err(|e| format!("cannot write a private file: {e}"))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The hostname of a node document that is exactly fleetc's `HostnameConfig` (`auto: "off"`)
/// and nothing else, when the hostname is one Talos's encoder writes as a plain scalar (a
/// letter first, then letters, digits and `-`, with a `-`: never a YAML 1.1 number, boolean,
/// null or timestamp, which gopkg.in/yaml.v3 would quote).
fn hostname_only(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines().filter(|l| !l.starts_with('#') && !l.is_empty());
    let expected = ["apiVersion: v1alpha1", "kind: HostnameConfig"];
    for e in expected {
        if lines.next()? != e {
            return None;
        }
    }
    let host = lines.next()?.strip_prefix("hostname: ")?;
    if lines.next()? != "auto: \"off\"" || lines.next().is_some() {
        return None;
    }
    let plain = host.starts_with(|c: char| c.is_ascii_lowercase())
        && host.contains('-')
        && host.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    plain.then_some(host)
}

/// A node's config from its group's: `talosctl gen config` output whose one `HostnameConfig`
/// document (Talos 1.12 and later generate `auto: stable`) is replaced by the node's, merged
/// and encoded as Talos's encoder does. This is what talosctl writes for the node with the
/// node's document among its patches: machinery encodes each document on its own, the
/// v1alpha1 one first, the others after a `---` line (pkg/machinery v1.13.9
/// `config/container/container.go`, `encodeToBuf`); a patch document whose apiVersion and
/// kind the config has is merged into it in place (`config/configpatcher/strategic.go`,
/// `StrategicMerge`), and the merged `HostnameConfig` encodes as its Go struct orders its
/// fields, `auto` then `hostname` (`config/types/network/hostname.go`), `off` quoted.
/// Checked against machinery v1.13.9 on the reference fleet (docs/performance.md). `None`
/// when the group's config is not that: the caller then renders node by node.
fn compose(base: &str, hostname: &str) -> Option<String> {
    // Documents are split at `---` lines; yaml.v3 indents every line of a scalar, so a
    // `---` at the start of a line is always a document boundary.
    let mut docs: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, _) in base.match_indices("---\n") {
        if i == 0 || base.as_bytes()[i - 1] == b'\n' {
            docs.push(&base[start..i]);
            start = i + 4;
        }
    }
    docs.push(&base[start..]);
    let is_hostname = |d: &str| d.lines().any(|l| l == "kind: HostnameConfig");
    if docs.iter().filter(|d| is_hostname(d)).count() != 1 {
        return None;
    }
    let mut out = String::with_capacity(base.len() + hostname.len());
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        if is_hostname(d) {
            // Only the fields the node's document sets, so that the merge replaces them all.
            let known = ["apiVersion: v1alpha1", "kind: HostnameConfig", "auto: ", "hostname: "];
            if !d.lines().all(|l| known.iter().any(|k| l == *k || (k.ends_with(' ') && l.starts_with(k)))) {
                return None;
            }
            out.push_str("apiVersion: v1alpha1\nkind: HostnameConfig\nauto: \"off\"\nhostname: ");
            out.push_str(hostname);
            out.push('\n');
        } else {
            out.push_str(d);
        }
    }
    Some(out)
}

/// Writes a rendered config (it holds the cluster's keys) as a file of mode 0600.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        // Never through a link planted in DEST (nor chmod its target).
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if m.file_type().is_symlink() {
                return Err(std::io::Error::other("a symbolic link is in the way"));
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    o.open(path)?.write_all(bytes)
}

/// The flag that hands talosctl a patch for one role's config. `--config-patch` patches every
/// config the bundle generates, also the role not asked for with `--output-types`, so a patch
/// that deletes what only a control-plane config has (`$patch: delete` of the generator's
/// `node.kubernetes.io/exclude-from-external-load-balancers` label) would fail on the worker
/// config ("lookup failed"); the role's own flag patches that role only (siderolabs/talos
/// v1.13.9 `cmd/talosctl/cmd/mgmt/gen/config.go` l.143-163; machinery
/// `config/bundle/bundle.go` `applyPatches`), as Talos providers and Cluster API patch one
/// machine's config.
fn patch_flag(cp: bool) -> &'static str {
    if cp { "--config-patch-control-plane" } else { "--config-patch-worker" }
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

    /// The shape of `talosctl gen config` output (Talos 1.13): the v1alpha1 document with an
    /// inline manifest whose text holds `---` lines (indented, as yaml.v3 writes a block
    /// scalar), the generated `HostnameConfig`, then fleetc's own documents.
    pub const GROUP: &str = "version: v1alpha1\nmachine:\n    type: worker\ncluster:\n    inlineManifests:\n        - name: a\n          contents: |\n            ---\n            kind: ConfigMap\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\n";

    #[test]
    fn compose_merges_the_hostname_in_place_and_keeps_every_other_byte() {
        let got = compose(GROUP, "main-system-2").unwrap();
        let want = GROUP.replace("auto: stable\n", "auto: \"off\"\nhostname: main-system-2\n");
        assert_eq!(got, want);
    }

    #[test]
    fn compose_refuses_what_it_cannot_merge_exactly() {
        // No HostnameConfig (Talos before 1.12), two of them, or one with other fields.
        assert!(compose("version: v1alpha1\n", "a-1").is_none());
        let two = format!("{GROUP}---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n");
        assert!(compose(&two, "a-1").is_none());
        let more = GROUP.replace("auto: stable\n", "auto: stable\nextra: 1\n");
        assert!(compose(&more, "a-1").is_none());
    }

    #[test]
    fn only_fleetcs_plain_hostname_document_is_merged_in_process() {
        let doc = |h: &str| {
            format!("# Generated by fleetc\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: {h}\nauto: \"off\"\n")
        };
        assert_eq!(hostname_only(doc("main-cp-1").as_bytes()), Some("main-cp-1"));
        // Names yaml.v3 would quote (a timestamp, a number), or not fleetc's form.
        for h in ["2002-12-14", "1-2", "nohyphen", "Main-cp-1", "\"main-cp-1\""] {
            assert_eq!(hostname_only(doc(h).as_bytes()), None, "{h}");
        }
        let with_link = format!("{}---\napiVersion: v1alpha1\nkind: LinkConfig\nname: net0\n", doc("lab-cp-1"));
        assert_eq!(hostname_only(with_link.as_bytes()), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_rendered_config_is_0600_and_never_written_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.yaml");
        std::fs::write(&f, "old").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&f, b"new").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&f).unwrap().permissions().mode() & 0o777, 0o600);
        let target = d.path().join("elsewhere");
        std::fs::write(&target, "keep").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = d.path().join("b.yaml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(write_private(&link, b"secret").is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o644);
    }

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
