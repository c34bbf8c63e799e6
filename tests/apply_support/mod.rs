//! Shared by the apply tests: a copy of the reference fleet in a temporary directory with a
//! fresh out/, sealed inputs encrypted to a generated identity, fleetc's credential
//! variables, and a recording [`Runner`] double that fails on demand.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use fleetc::apply::{Cmd, Env, Output, Runner, Target};
use fleetc::artifacts::ArtifactSet;

pub const CRT: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJ0ZXN0Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";
pub const KEY: &str =
    "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUXRlc3QKLS0tLS1FTkQgRUMgUFJJVkFURSBLRVktLS0tLQo=";

/// A bundle in the shape `talosctl gen secrets` writes; `tag` makes bundles differ.
pub fn bundle(tag: &str) -> String {
    format!(
        "cluster:\n    id: clusterid{tag}AAAAAAAA\n    secret: clustersecret{tag}BBBBBBBB\nsecrets:\n    bootstraptoken: boot{tag}.0123456789abcdef\n    secretboxencryptionsecret: secretbox{tag}CCCCCCCCCCCC\ntrustdinfo:\n    token: trustd{tag}.0123456789abcdef\ncerts:\n    etcd:\n        crt: {CRT}\n        key: {KEY}\n    k8s:\n        crt: {CRT}\n        key: {KEY}\n    k8saggregator:\n        crt: {CRT}\n        key: {KEY}\n    k8sserviceaccount:\n        key: {KEY}\n    os:\n        crt: {CRT}\n        key: {KEY}\n"
    )
}

/// Every secret value of the fixture: none may appear in a log line.
pub const SECRET_VALUES: &[&str] = &[
    "SCWACCESSKEYVALUE0001",
    "scw-secret-key-value-0001",
    "STATEACCESSKEYVALUE01",
    "state-secret-key-value-01",
    "state-passphrase-value-01",
    "clusteridtestAAAAAAAA",
    "clustersecrettestBBBBBBBB",
    "boottest.0123456789abcdef",
    "secretboxtestCCCCCCCCCCCC",
    "scaleway-api-key-value-42",
    "SCWCCMACCESSKEY01",
    "repo-password-value-42",
];

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub out: PathBuf,
    pub build: ArtifactSet,
    pub target: Target,
    pub identity: PathBuf,
    pub env: Env,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// An extra Argo CD bootstrap document when the build has none yet, so that step 7 runs.
const ROOT_APP: &str = "argocd/staging/main/bootstrap/20-root.yaml";

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::for_env("staging", &["talos-secrets", "scaleway-api-key", "argocd-repo"])
    }

    /// The reference fleet, applying environment `env`'s cluster `main`, with the sealed
    /// inputs `sealed` imported.
    pub fn for_env(env_name: &str, sealed: &[&str]) -> Fixture {
        Fixture::for_env_edited(env_name, sealed, |t| t.to_owned())
    }

    /// [`Fixture::for_env`] on the reference fleet as `edit` rewrites it.
    pub fn for_env_edited(env_name: &str, sealed: &[&str], edit: impl Fn(&str) -> String) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fleet");
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        for d in ["vendor", "values", "apps", "patches"] {
            if repo.join(d).is_dir() {
                copy_dir(&repo.join(d), &root.join(d));
            }
        }
        let identity = age::x25519::Identity::generate();
        let public = identity.to_public().to_string();
        use age::secrecy::ExposeSecret;
        let id_file = dir.path().join("identity.txt");
        std::fs::write(&id_file, format!("# test identity\n{}\n", identity.to_string().expose_secret())).unwrap();
        let text = edit(&std::fs::read_to_string(repo.join("fleet.kdl")).unwrap());
        let text = text.replace("age1wh7qxmt0740e28qvq0jjz5ylyxfctxtm4skkffn6kers9dln89eswx42s2", &public);
        std::fs::write(root.join("fleet.kdl"), &text).unwrap();
        let c = fleetc::compile::compile("fleet.kdl", &text, &fleetc::compile::FsLoader::new(&root));
        assert!(!c.diags.has_errors(), "the reference fleet compiles");
        let mut build = c.artifacts.unwrap();
        if !build.paths().any(|p| p.starts_with("argocd/staging/main/bootstrap/")) {
            build.insert(ROOT_APP, "kind: Application\n").unwrap();
        }
        let out = root.join("out");
        build.write(&out).unwrap();
        let target = fleetc::apply::target::of(c.fleet.as_ref().unwrap(), env_name).unwrap();
        for (name, value) in [
            ("talos-secrets", bundle("test")),
            ("scaleway-api-key", "access_key: SCWCCMACCESSKEY01\nsecret_key: scaleway-api-key-value-42\n".to_owned()),
            ("argocd-repo", "username: fleet-bot\npassword: repo-password-value-42\n".to_owned()),
            ("backup-s3", "access_key: BACKUPACCESSKEY01\nsecret_key: backup-secret-value-42\n".to_owned()),
        ] {
            if !sealed.contains(&name) {
                continue;
            }
            fleetc::secrets::import(&fleetc::secrets::Import {
                root: &root,
                env: env_name,
                cluster: "main",
                name,
                plaintext: value.as_bytes(),
                recipients: &target.recipients,
                identity: None,
                force: false,
            })
            .unwrap();
        }
        let env: Env = [
            ("PATH", "/usr/bin:/bin"),
            ("FLEETC_SCW_ACCESS_KEY", "SCWACCESSKEYVALUE0001"),
            ("FLEETC_SCW_SECRET_KEY", "scw-secret-key-value-0001"),
            ("FLEETC_STATE_ACCESS_KEY", "STATEACCESSKEYVALUE01"),
            ("FLEETC_STATE_SECRET_KEY", "state-secret-key-value-01"),
            ("FLEETC_STATE_PASSPHRASE", "state-passphrase-value-01"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let mut env = env;
        // The operator's home, outside the fleet: `upgrade` keeps etcd snapshots under it.
        env.insert("HOME".to_owned(), dir.path().join("home").display().to_string());
        Fixture { dir, root, out, build, target, identity: id_file, env }
    }

    pub fn inputs(&self) -> fleetc::apply::Inputs<'_> {
        fleetc::apply::Inputs {
            fleet_dir: &self.root,
            out_dir: &self.out,
            build: &self.build,
            target: &self.target,
            env: &self.env,
        }
    }

    pub fn options(&self) -> fleetc::apply::ApplyOptions {
        fleetc::apply::ApplyOptions {
            plan: false,
            yes: true,
            mode: None,
            identity: Some(self.identity.clone()),
            ..Default::default()
        }
    }
}

pub type Rule = Box<dyn Fn(&Cmd) -> Option<Output>>;

/// Records every command; answers each with its planned output (the happy path) unless a
/// rule says otherwise; writes the files tools would write (`--output`).
#[derive(Clone, Default)]
pub struct Fake {
    pub calls: Rc<RefCell<Vec<Cmd>>>,
    pub rules: Rc<RefCell<Vec<Rule>>>,
    pub sleeps: Rc<RefCell<u32>>,
    /// What a download writes.
    pub image_bytes: Rc<RefCell<Vec<u8>>>,
    /// The clock `now` answers with (seconds since the epoch, UTC); [`Fake::new`] sets
    /// [`SATURDAY_0300`].
    pub clock: Rc<RefCell<u64>>,
}

/// 2026-12-05T03:00:00Z, a Saturday.
pub const SATURDAY_0300: u64 = 1_796_439_600;

impl Fake {
    pub fn new() -> Fake {
        let f = Fake::default();
        *f.image_bytes.borrow_mut() = b"QFI\xfb\0\0\0\x03rest-of-a-qcow2".to_vec();
        *f.clock.borrow_mut() = SATURDAY_0300;
        f
    }

    /// Answers commands `matches` selects with `out` (the first matching rule wins).
    pub fn on(&self, matches: impl Fn(&Cmd) -> bool + 'static, out: Output) -> &Fake {
        self.rules.borrow_mut().push(Box::new(move |c| matches(c).then(|| out.clone())));
        self
    }

    /// Answers the commands `matches` selects with `outs` in turn (the last one from then on).
    pub fn on_seq(&self, matches: impl Fn(&Cmd) -> bool + 'static, outs: Vec<Output>) -> &Fake {
        let seen = Rc::new(RefCell::new(0usize));
        self.rules.borrow_mut().push(Box::new(move |c| {
            if !matches(c) {
                return None;
            }
            let mut n = seen.borrow_mut();
            let out = outs.get(*n).or(outs.last()).cloned();
            *n += 1;
            out
        }));
        self
    }

    /// Answers with what `rule` says, where it says something (the first rule that does wins).
    pub fn on_rule(&self, rule: impl Fn(&Cmd) -> Option<Output> + 'static) -> &Fake {
        self.rules.borrow_mut().push(Box::new(rule));
        self
    }

    /// Fails commands `matches` selects.
    pub fn fail_on(&self, matches: impl Fn(&Cmd) -> bool + 'static) -> &Fake {
        self.on(matches, Output::failed(1, "Error: injected failure"))
    }

    /// Lines of the commands that ran while the Talos API switch was open (the cloud root's
    /// last switch apply said `talos_api_open=true`), and those that ran while it was closed.
    pub fn by_talos_switch(&self) -> (Vec<String>, Vec<String>) {
        let (mut open, mut closed) = (Vec::new(), Vec::new());
        let mut is_open = false;
        for c in self.calls.borrow().iter() {
            let line = format!("{} {}", c.program, c.args.join(" "));
            if c.program == "tofu"
                && c.args.iter().any(|a| a == "apply")
                && let Some(v) = c.args.iter().find_map(|a| a.strip_prefix("-var=talos_api_open="))
            {
                is_open = v == "true";
                continue;
            }
            if is_open { open.push(line) } else { closed.push(line) }
        }
        (open, closed)
    }

    pub fn lines(&self) -> Vec<String> {
        self.calls.borrow().iter().map(|c| format!("{} {}", c.program, c.args.join(" "))).collect()
    }

    /// The index of the first recorded command whose line contains every needle.
    pub fn index(&self, needles: &[&str]) -> Option<usize> {
        self.lines().iter().position(|l| needles.iter().all(|n| l.contains(n)))
    }

    /// The last value the cloud root's applies gave `var` (`None`: never set).
    pub fn last_switch(&self, var: &str) -> Option<bool> {
        let prefix = format!("-var={var}=");
        self.calls
            .borrow()
            .iter()
            .filter(|c| c.program == "tofu" && c.args.iter().any(|a| a == "apply"))
            .fold(None, |acc, c| c.args.iter().find_map(|a| a.strip_prefix(&prefix)).map(|v| v == "true").or(acc))
    }
}

impl Runner for Fake {
    fn run(&mut self, cmd: &Cmd) -> std::io::Result<Output> {
        self.calls.borrow_mut().push(cmd.clone());
        for r in self.rules.borrow().iter() {
            if let Some(out) = r(cmd) {
                return Ok(out);
            }
        }
        if let Some(path) = cmd.flag("--output") {
            let bytes = if cmd.program == "curl" { self.image_bytes.borrow().clone() } else { b"generated\n".to_vec() };
            if let Some(parent) = Path::new(path).parent() {
                std::fs::create_dir_all(parent).ok();
            }
            std::fs::write(path, bytes).ok();
        }
        if cmd.program == "talosctl"
            && let Some(i) = cmd.args.iter().position(|a| a == "kubeconfig")
            && let Some(path) = cmd.args.get(i + 1)
        {
            std::fs::write(path, b"apiVersion: v1\nkind: Config\n").ok();
        }
        if cmd.program == "qemu-img"
            && let Some(dest) = cmd.args.last()
        {
            std::fs::write(dest, b"QFI\xfb\0\0\0\x03converted").ok();
        }
        if let Some(out) = etcd_snapshot(cmd, &etcd_snapshot_bytes(4, false)) {
            return Ok(out);
        }
        Ok(Output::ok(cmd.plan_stdout.clone().into_bytes()))
    }

    fn now(&mut self) -> u64 {
        *self.clock.borrow()
    }

    fn sleep(&mut self, _: Duration) {
        *self.sleeps.borrow_mut() += 1;
    }

    fn confirm(&mut self, _: &str) -> bool {
        false
    }
}

/// Runs `fleetc apply staging` on the fixture; returns the result and the log.
pub fn run_apply(
    fx: &Fixture,
    fake: &Fake,
    opts: &fleetc::apply::ApplyOptions,
) -> (Result<(), fleetc::apply::Failure>, Vec<String>) {
    let mut log = Vec::new();
    let mut sink = |l: &str| log.push(l.to_owned());
    let mut runner = fake.clone();
    let r = fleetc::apply::apply(&fx.inputs(), opts, &mut runner, &mut sink);
    (r, log)
}

pub fn has(c: &Cmd, program: &str, needles: &[&str]) -> bool {
    c.program == program && needles.iter().all(|n| c.args.iter().any(|a| a.contains(n)))
}

pub fn map<K: Ord, V>(v: Vec<(K, V)>) -> BTreeMap<K, V> {
    v.into_iter().collect()
}

/// One bare-metal machine, as the fake talosctl models it: its static address and, until it
/// runs a config, the DHCP address it has in maintenance mode (`dhcp`; `None`: DHCP reserved
/// its static address), the MAC and names of its link, its disks, how many times it reports
/// SecureBoot off before it is on (`None`: never), whether it runs the cluster's config, and
/// its etcd (bootstrapped, and how many bootstraps Talos refuses first).
#[derive(Debug, Clone)]
pub struct Machine {
    pub address: String,
    pub dhcp: Option<String>,
    pub mac: String,
    pub links: Vec<String>,
    pub disks: Vec<FakeDisk>,
    pub secure_boot_after: Option<u32>,
    pub configured: bool,
    pub bootstrapped: bool,
    pub bootstrap_refusals: u32,
}

/// A disk a machine reports: `dev_path`, `serial`, `transport`.
#[derive(Debug, Clone)]
pub struct FakeDisk {
    pub dev: String,
    pub serial: String,
    pub transport: String,
    pub size: u64,
}

impl FakeDisk {
    pub fn nvme(serial: &str) -> FakeDisk {
        FakeDisk { dev: "/dev/nvme0n1".into(), serial: serial.into(), transport: "nvme".into(), size: 512_110_190_592 }
    }
}

impl Machine {
    /// A machine in maintenance mode at its static address, with link `eno1` and one NVMe
    /// disk of serial `serial`.
    pub fn new(address: &str, mac: &str, serial: &str) -> Machine {
        Machine {
            address: address.into(),
            dhcp: None,
            mac: mac.into(),
            links: vec!["eno1".into()],
            disks: vec![FakeDisk::nvme(serial)],
            secure_boot_after: Some(0),
            configured: false,
            bootstrapped: false,
            bootstrap_refusals: 0,
        }
    }
}

/// A resource as `talosctl get … -o json` prints it (siderolabs/talos v1.13.9
/// `cmd/talosctl/cmd/talos/output/json.go` l.47-85: the resource's YAML form, `metadata` and
/// `spec` (cosi-project/runtime v1.14.1 `pkg/resource/resource.go` l.62-70), with `node`
/// added, indented by four spaces, keys sorted as Go's encoder writes a map).
fn resource(node: &str, namespace: &str, ty: &str, id: &str, spec: serde_json::Value) -> String {
    let v = serde_json::json!({
        "metadata": {
            "namespace": namespace, "type": ty, "id": id, "version": 1,
            "owner": "", "phase": "running",
            "created": "2026-12-05T07:00:00Z", "updated": "2026-12-05T07:00:00Z",
        },
        "node": node,
        "spec": spec,
    });
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(&v, &mut ser).unwrap();
    String::from_utf8(buf).unwrap() + "\n"
}

/// Models bare metal in `fake`. In maintenance mode a machine answers `talosctl get
/// links|disks|securitystate --insecure` at its maintenance address only, with what it
/// reports (siderolabs/talos v1.13.9: `LinkStatuses.net.talos.dev`, `spec.hardwareAddr`/
/// `permanentAddr`, `pkg/machinery/resources/network/link_status.go` l.29-37;
/// `Disks.block.talos.dev`, `pkg/machinery/resources/block/disk.go` l.26-53;
/// `SecurityStates.talos.dev` `spec.secureBoot`, `pkg/machinery/resources/runtime/
/// security_status.go` l.54-62), and takes `apply-config --insecure` there. Once configured it
/// answers at its static address: `version` through the talosconfig succeeds, `get
/// etcdmembers` lists the local member once bootstrapped (`EtcdMembers.etcd.talos.dev`,
/// `spec.memberID`, `pkg/machinery/resources/etcd/member.go` l.16-30), and `bootstrap`
/// answers FailedPrecondition `bootstrap_refusals` times (`v1alpha1_server.go` l.454, "time
/// is not in sync yet"), then bootstraps, then AlreadyExists (l.458). Returns the machines, to inspect.
pub fn maintenance(fake: &Fake, machines: Vec<Machine>) -> Rc<RefCell<Vec<Machine>>> {
    let state = Rc::new(RefCell::new(machines));
    let st = state.clone();
    fake.rules.borrow_mut().push(Box::new(move |c: &Cmd| {
        if c.program != "talosctl" {
            return None;
        }
        let addr = c.flag("--nodes")?.to_owned();
        let mut machines = st.borrow_mut();
        let insecure = c.args.iter().any(|a| a == "--insecure");
        let first = c.args.iter().find(|a| !a.starts_with('-') && !a.contains('/') && !a.contains('.')).cloned();
        if insecure {
            // The maintenance service: at the machine's DHCP address until it is configured.
            let Some(m) =
                machines.iter_mut().find(|m| !m.configured && m.dhcp.as_deref().unwrap_or(&m.address) == addr)
            else {
                return Some(Output::failed(
                    1,
                    format!("error: rpc error: code = Unavailable desc = connection error: dial tcp {addr}:50000: connect: no route to host"),
                ));
            };
            if first.as_deref() == Some("apply-config") {
                m.configured = true;
                return Some(Output::ok(Vec::new()));
            }
            let json = match c.args.get(1).map(String::as_str) {
                Some("links") => {
                    let mut out = String::new();
                    for (i, l) in m.links.iter().enumerate() {
                        let mac = if i == 0 { m.mac.clone() } else { format!("3c:ec:ef:99:00:{i:02x}") };
                        out += &resource(&addr, "network", "LinkStatuses.net.talos.dev", l, serde_json::json!({
                            "alias": "", "hardwareAddr": mac, "permanentAddr": mac, "index": i + 2,
                            "kind": "", "linkState": true, "mtu": 1500, "operationalState": "up", "type": "ether",
                        }));
                    }
                    out += &resource(&addr, "network", "LinkStatuses.net.talos.dev", "lo", serde_json::json!({
                        "hardwareAddr": "00:00:00:00:00:00", "index": 1, "type": "loopback",
                    }));
                    out
                }
                Some("disks") => m
                    .disks
                    .iter()
                    .map(|d| {
                        let id = d.dev.trim_start_matches("/dev/");
                        resource(&addr, "runtime", "Disks.block.talos.dev", id, serde_json::json!({
                            "dev_path": d.dev, "size": d.size, "pretty_size": "512 GB", "io_size": 512,
                            "sector_size": 512, "readonly": false, "cdrom": false,
                            "model": "Samsung SSD 980 PRO 500GB", "serial": d.serial, "transport": d.transport,
                            "sub_system": "/sys/class/block",
                        }))
                    })
                    .collect(),
                Some("securitystate") => {
                    let on = match &mut m.secure_boot_after {
                        Some(0) => true,
                        Some(n) => {
                            *n -= 1;
                            false
                        }
                        None => false,
                    };
                    resource(&addr, "runtime", "SecurityStates.talos.dev", "securitystate", serde_json::json!({
                        "secureBoot": on, "bootedWithUKI": true,
                    }))
                }
                _ => return None,
            };
            return Some(Output::ok(json.into_bytes()));
        }
        // Through the talosconfig, at the static address: only a configured machine answers.
        let m = machines.iter_mut().find(|m| m.address == addr)?;
        if !m.configured {
            return Some(Output::failed(1, "error: tls: certificate required (maintenance mode)"));
        }
        if c.args.iter().any(|a| a == "version") {
            return Some(Output::ok(b"Server: v1.13.9\n".to_vec()));
        }
        if c.args.iter().any(|a| a == "etcdmembers") {
            let out = if m.bootstrapped {
                resource(&addr, "etcd", "EtcdMembers.etcd.talos.dev", "local", serde_json::json!({"memberID": "8a1c6d7e2f3b4c5d"}))
            } else {
                String::new()
            };
            return Some(Output::ok(out.into_bytes()));
        }
        if c.args.last().map(String::as_str) == Some("bootstrap") {
            if m.bootstrap_refusals > 0 {
                m.bootstrap_refusals -= 1;
                return Some(Output::failed(
                    1,
                    "error executing bootstrap: rpc error: code = FailedPrecondition desc = time is not in sync yet",
                ));
            }
            if m.bootstrapped {
                return Some(Output::failed(
                    1,
                    "error executing bootstrap: rpc error: code = AlreadyExists desc = etcd data directory is not empty",
                ));
            }
            m.bootstrapped = true;
            return Some(Output::ok(Vec::new()));
        }
        None
    }));
    state
}

/// A bbolt database of `pages` 4096-byte pages whose meta page 0 validates (etcd-io/bbolt
/// v1.4.3 `internal/common/meta.go` l.12-35: magic `0xED0CDAED`, version 2, page size, then
/// the FNV-64a of the 56 bytes of fields before `checksum`; the 16-byte page header with flag
/// 0x04, `internal/common/page.go` l.31-36, `types.go` l.13-21), followed by the sha256
/// trailer etcd's snapshot stream ends with (etcd-io/etcd v3.6.12
/// `etcdutl/snapshot/v3_snapshot.go` l.93-98), which `damaged` makes wrong by one bit.
pub fn etcd_snapshot_bytes(pages: usize, damaged: bool) -> Vec<u8> {
    use sha2::Digest;
    let mut db = vec![0u8; pages * 4096];
    db[8..10].copy_from_slice(&0x04u16.to_le_bytes());
    db[16..20].copy_from_slice(&0xED0C_DAEDu32.to_le_bytes());
    db[20..24].copy_from_slice(&2u32.to_le_bytes());
    db[24..28].copy_from_slice(&4096u32.to_le_bytes());
    let sum =
        db[16..72].iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
    db[72..80].copy_from_slice(&sum.to_le_bytes());
    for (i, b) in db.iter_mut().enumerate().skip(4096) {
        *b = (i % 251) as u8;
    }
    let mut trailer = sha2::Sha256::digest(&db).to_vec();
    if damaged {
        trailer[0] ^= 1;
    }
    db.extend_from_slice(&trailer);
    db
}

/// `talosctl etcd snapshot <path>` as siderolabs/talos v1.13.9 `cmd/talosctl/cmd/talos/etcd.go`
/// l.345-396 does it: the stream written to `<path>.part`, renamed to `<path>` once its size
/// has room for the sha256 trailer (the trailer itself is not checked), then two lines on
/// stdout. `None` when `cmd` is not that command.
pub fn etcd_snapshot(cmd: &Cmd, bytes: &[u8]) -> Option<Output> {
    let i = cmd.args.iter().position(|a| a == "etcd")?;
    if cmd.program != "talosctl" || cmd.args.get(i + 1).map(String::as_str) != Some("snapshot") {
        return None;
    }
    let path = cmd.args.get(i + 2)?;
    std::fs::write(path, bytes).ok()?;
    Some(Output::ok(format!(
        "etcd snapshot saved to \"{path}\" ({} bytes)\nsnapshot info: hash c25fd181, revision 4193, total keys 1287, total size {}\n",
        bytes.len(),
        bytes.len() - 32
    )))
}

/// A node of a running cluster as the fake talosctl and kubectl model it for `upgrade`.
#[derive(Debug, Clone)]
pub struct RunningNode {
    pub hostname: String,
    pub tag: String,
    pub schematic: String,
    pub kubelet: String,
    pub ready: bool,
    /// `talosctl upgrade` returns success and changes nothing (home-operations/tuppr#575:
    /// with talosctl >= 1.13 the install can complete without the reboot that activates it).
    pub no_reboot: bool,
    /// How many `upgrade` calls reached it.
    pub upgrades: u32,
}

impl RunningNode {
    pub fn new(hostname: &str, tag: &str, schematic: &str, kubelet: &str) -> RunningNode {
        RunningNode {
            hostname: hostname.into(),
            tag: tag.into(),
            schematic: schematic.into(),
            kubelet: kubelet.into(),
            ready: true,
            no_reboot: false,
            upgrades: 0,
        }
    }
}

/// Models a running cluster's nodes in `fake` (each reached as `<hostname.address>`, the
/// placeholder the fixture's inventory gives it):
/// * `talosctl version` prints the client, then `Server:`, `NODE:` and the long version block
///   whose `Tag:` is what the node runs (siderolabs/talos v1.13.9
///   `cmd/talosctl/cmd/talos/version.go` l.38-51, l.84; `pkg/machinery/version/version.go`
///   l.33);
/// * `talosctl get extensions -o json` lists the `schematic` virtual extension
///   (`ExtensionStatuses.runtime.talos.dev`, `pkg/machinery/resources/runtime/
///   extension_status.go` l.18-24, whose spec is `extensions.Layer`: `image` and `metadata`
///   with `name` and `version`, `pkg/machinery/extensions/config.go` l.23-26, `metadata.go`
///   l.16-23; the version is the schematic ID);
/// * `talosctl upgrade --image <factory>/<schematic>:<tag>` moves the node to that tag and
///   schematic unless it is `no_reboot`;
/// * `talosctl upgrade-k8s --to V` moves every kubelet to V;
/// * `kubectl get node <name> -o json` is the Node object (`status.nodeInfo.kubeletVersion`,
///   `status.conditions[type=Ready]`: kubernetes/api v0.36.3 `core/v1/types.go` l.6695,
///   l.6782, l.6805, l.6912).
pub fn running_cluster(fake: &Fake, nodes: Vec<RunningNode>) -> Rc<RefCell<Vec<RunningNode>>> {
    let state = Rc::new(RefCell::new(nodes));
    let st = state.clone();
    fake.rules.borrow_mut().push(Box::new(move |c: &Cmd| {
        let mut nodes = st.borrow_mut();
        if c.program == "kubectl" {
            let i = c.args.iter().position(|a| a == "node")?;
            let name = c.args.get(i + 1)?;
            let n = nodes.iter().find(|n| &n.hostname == name)?;
            let doc = serde_json::json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": n.hostname},
                "status": {
                    "nodeInfo": {"kubeletVersion": n.kubelet, "osImage": format!("Talos ({})", n.tag)},
                    "conditions": [
                        {"type": "MemoryPressure", "status": "False"},
                        {"type": "Ready", "status": if n.ready { "True" } else { "False" }},
                    ],
                },
            });
            return Some(Output::ok(doc.to_string()));
        }
        if c.program != "talosctl" {
            return None;
        }
        if c.args.iter().any(|a| a == "upgrade-k8s") {
            let to = c.flag("--to")?;
            for n in nodes.iter_mut() {
                n.kubelet = format!("v{to}");
            }
            return Some(Output::ok(Vec::new()));
        }
        let addr = c.flag("--nodes")?.to_owned();
        let n = nodes.iter_mut().find(|n| format!("<{}.address>", n.hostname) == addr)?;
        if c.args.iter().any(|a| a == "version") {
            return Some(Output::ok(format!(
                "Client:\n\tTag:         v1.13.9\nServer:\n\tNODE:        {addr}\n\tTag:         {}\n\tSHA:         0123abcd\n",
                n.tag
            )));
        }
        if c.args.iter().any(|a| a == "extensions") {
            return Some(Output::ok(resource(&addr, "runtime", "ExtensionStatuses.runtime.talos.dev", "1", serde_json::json!({
                "image": "", "metadata": {"name": "schematic", "version": n.schematic, "author": "Image Factory"},
            }))));
        }
        if c.args.iter().any(|a| a == "upgrade") {
            n.upgrades += 1;
            if !n.no_reboot {
                let image = c.flag("--image")?;
                let (repo, tag) = image.rsplit_once(':')?;
                n.tag = tag.to_owned();
                n.schematic = repo.rsplit('/').next()?.to_owned();
            }
            return Some(Output::ok(Vec::new()));
        }
        None
    }));
    state
}
