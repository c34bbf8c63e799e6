//! The fleet-scale benchmark (docs/performance.md, issue 20). For each shape (one cluster of
//! 3 control-plane nodes with 10, 100 and 1,000 workers, and the 10,000-node fleet of
//! [`fleetc::synth`]) it runs, as child processes and **alternating** (run 1 of every job,
//! then run 2 of every job, …, so that a change of load hits every column alike):
//!
//! - `fleetc build` cold (out/ removed first), `build` again (no-op), `check`, `diff` after a
//!   one-line change of fleet.kdl (the Kubernetes version), `fleetc talos render` of every
//!   cluster (with `FLEETC_BENCH_TALOSCTL`, else `talosctl` on PATH, else fleetc's harness
//!   stand-in that `oracles/talosctl/build` builds: talosctl v1.13.9's `gen config` over
//!   machinery v1.13.9);
//! - the floors: `cp -r out/`, and hashing every file of out/ (`find … | xargs sha256sum`);
//! - talhelper (when `oracles/talhelper/build` gives a binary, or `FLEETC_BENCH_TALHELPER`
//!   names one): `talhelper genconfig --offline-mode` of every cluster (the same output as
//!   `talos render`: full per-node configs with secrets) and `genconfig --dry-run` after the
//!   same one-line change (the same review job as `fleetc diff`).
//!
//! Each cell is the median and the min–max of the runs, with the peak resident set of the
//! child and its descendants (`wait4`'s `ru_maxrss`, the largest of a job's processes). All
//! files live on tmpfs (`/dev/shm`) when it is writable, so the disk does not decide.
//!
//! `cargo bench --bench fleet_scale`; environment: `FLEETC_BENCH_SHAPES=3+10,3+100,3+1000,10000`
//! (`3+N`: one cluster with N workers; `N`: a fleet of N nodes), `FLEETC_BENCH_RUNS=5`,
//! `FLEETC_BENCH_DOC=docs/performance.md` (replace the text between the `bench:begin` and
//! `bench:end` markers of that file with this run's report). It prints the report (Markdown)
//! on stdout and how long it took on stderr.

#![allow(clippy::disallowed_methods)] // a benchmark measures the real binaries as child processes

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetc::synth::Shape;

/// One measured run: the wall time of all its commands and the largest peak RSS among them.
#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    max_rss_kib: u64,
}

/// Runs `cmd` to completion; its wall time and peak RSS. Panics unless it exits with one of `ok`.
///
/// The peak comes from GNU time (`/usr/bin/time -f %M`), which forks the command from its
/// own small process: `wait4`'s `ru_maxrss` of a child the benchmark spawns itself would
/// never read below the benchmark's own resident set (Linux folds the pre-exec memory's
/// high-water mark into the child's, `fs/exec.c` `setmax_mm_hiwater_rss`), and this process
/// holds a compiled fleet. Without GNU time it falls back to that floor-bound `ru_maxrss`.
#[allow(unsafe_code, reason = "wait4 reaps the child with its resource usage; libc has no safe form")]
fn measure(cmd: &mut Command, ok: &[i32]) -> Sample {
    let rss_file = TIME.as_ref().map(|_| {
        let n = RSS_FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::env::temp_dir().join(format!("fleetc-bench-rss-{}-{n}", std::process::id()))
    });
    let mut wrapped = match (TIME.as_ref(), &rss_file) {
        (Some(time), Some(f)) => {
            let mut w = Command::new(time);
            w.arg("-f").arg("%M").arg("-o").arg(f).arg(cmd.get_program()).args(cmd.get_args());
            if let Some(d) = cmd.get_current_dir() {
                w.current_dir(d);
            }
            for (k, v) in cmd.get_envs() {
                match v {
                    Some(v) => w.env(k, v),
                    None => w.env_remove(k),
                };
            }
            w
        }
        _ => std::mem::replace(cmd, Command::new("true")),
    };
    let start = Instant::now();
    let mut child = wrapped.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let mut stderr = child.stderr.take();
    // Read stderr on a thread so that a chatty child never blocks on a full pipe.
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = std::io::Read::read_to_string(e, &mut s);
        }
        s
    });
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data, zero-initialised; wait4 fills it for this child only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own unwaited child; the pointers are valid for the call.
    let r = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    let wall = start.elapsed();
    assert_eq!(r, pid, "wait4 failed");
    // Reaped by wait4 above; `Child` must not wait again.
    std::mem::forget(child);
    let err = reader.join().unwrap_or_default();
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    assert!(ok.contains(&code), "{wrapped:?} exited {code}:\n{err}");
    let max_rss_kib = match &rss_file {
        Some(f) => {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            let _ = std::fs::remove_file(f);
            // GNU time writes "Command exited with non-zero status N" first when it did.
            text.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or(0)
        }
        None => u64::try_from(usage.ru_maxrss).unwrap_or(0),
    };
    Sample { wall, max_rss_kib }
}

/// GNU time, when installed (see [`measure`]).
static TIME: std::sync::LazyLock<Option<PathBuf>> =
    std::sync::LazyLock::new(|| Some(PathBuf::from("/usr/bin/time")).filter(|p| p.is_file()));
static RSS_FILES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A column of the table: how to prepare a run, and the commands a run measures (several
/// for the per-cluster jobs: their walls add up, their peaks do not).
struct Job<'a> {
    name: &'static str,
    prepare: Box<dyn FnMut() + 'a>,
    commands: Box<dyn Fn() -> Vec<Command> + 'a>,
    ok: &'static [i32],
    samples: Vec<Sample>,
}

impl<'a> Job<'a> {
    fn new(
        name: &'static str,
        ok: &'static [i32],
        prepare: impl FnMut() + 'a,
        commands: impl Fn() -> Vec<Command> + 'a,
    ) -> Self {
        Job { name, prepare: Box::new(prepare), commands: Box::new(commands), ok, samples: Vec::new() }
    }

    fn run_once(&mut self) {
        (self.prepare)();
        let mut total = Sample { wall: Duration::ZERO, max_rss_kib: 0 };
        for mut c in (self.commands)() {
            let s = measure(&mut c, self.ok);
            total.wall += s.wall;
            total.max_rss_kib = total.max_rss_kib.max(s.max_rss_kib);
        }
        self.samples.push(total);
    }

    fn stat(&self) -> Stat {
        let mut w: Vec<Duration> = self.samples.iter().map(|s| s.wall).collect();
        w.sort();
        Stat {
            median: w[w.len() / 2],
            min: w[0],
            max: w[w.len() - 1],
            peak_kib: self.samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0),
        }
    }
}

#[derive(Clone, Copy)]
struct Stat {
    median: Duration,
    min: Duration,
    max: Duration,
    peak_kib: u64,
}

fn tree_size(dir: &Path) -> (usize, u64) {
    let mut files = 0;
    let mut bytes = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let m = e.metadata().expect("metadata");
            if m.is_dir() {
                stack.push(e.path());
            } else {
                files += 1;
                bytes += m.len();
            }
        }
    }
    (files, bytes)
}

fn remove(dir: &Path) {
    if dir.exists() {
        std::fs::remove_dir_all(dir).expect("remove");
    }
}

/// `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|f| f.is_file()))
}

/// The talosctl `talos render` runs: `FLEETC_BENCH_TALOSCTL`, else `talosctl` on PATH, else
/// fleetc's harness stand-in (`oracles/talosctl/build`: talosctl v1.13.9's `gen config` glue
/// around Talos's own generator, pkg/machinery v1.13.9; oracles/talosctl/README.md). `None`
/// when none is found (the column then says so).
fn talosctl() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FLEETC_BENCH_TALOSCTL") {
        return Some(PathBuf::from(p));
    }
    if let Some(p) = on_path("talosctl") {
        return Some(p);
    }
    on_path("go")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracles/talosctl/build");
    let out = Command::new(script).stderr(Stdio::inherit()).output().ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
}

/// A directory holding `talosctl` (a link to `bin`), put first on PATH for `fleetc talos
/// render`, which runs `talosctl` by name.
#[cfg(unix)]
fn talosctl_dir(tmp: &Path, bin: &Path) -> PathBuf {
    let dir = tmp.join("talosctl-bin");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::os::unix::fs::symlink(bin, dir.join("talosctl")).expect("link talosctl");
    dir
}

/// PATH with `dir` first.
fn path_with(dir: &Path) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_owned()).chain(std::env::split_paths(&rest))).expect("PATH")
}

/// talhelper: `FLEETC_BENCH_TALHELPER`, else what `oracles/talhelper/build` builds (or finds
/// in the cache); `None` when neither gives a binary (the columns then say so).
fn talhelper() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FLEETC_BENCH_TALHELPER") {
        return Some(PathBuf::from(p));
    }
    on_path("go")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracles/talhelper/build");
    let out = Command::new(script).stderr(Stdio::inherit()).output().ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
}

enum Scratch {
    Temp(tempfile::TempDir),
    Kept(PathBuf),
}

impl Scratch {
    fn path(&self) -> &Path {
        match self {
            Scratch::Temp(t) => t.path(),
            Scratch::Kept(p) => p,
        }
    }
}

/// The benchmark's scratch directory: on tmpfs when `/dev/shm` is writable.
fn scratch() -> (tempfile::TempDir, bool) {
    if let Ok(d) = tempfile::Builder::new().prefix("fleetc-bench-").tempdir_in("/dev/shm") {
        return (d, true);
    }
    (tempfile::tempdir().expect("tempdir"), false)
}

fn parse_shapes(s: &str) -> Vec<Shape> {
    s.split(',')
        .map(str::trim)
        .map(|t| match t.strip_prefix("3+") {
            Some(w) => Shape::Cluster(w.parse().expect("FLEETC_BENCH_SHAPES: 3+N")),
            None => Shape::Fleet(t.parse().expect("FLEETC_BENCH_SHAPES: N or 3+N")),
        })
        .collect()
}

/// The one-line change `diff` and `genconfig --dry-run` review: a Kubernetes patch release.
const K8S: &str = "kubernetes \"1.33.4\"";
const K8S_CHANGED: &str = "kubernetes \"1.33.5\"";

struct Row {
    shape: Shape,
    clusters: usize,
    files: usize,
    bytes: u64,
    stats: Vec<(&'static str, Option<Stat>)>,
}

impl Row {
    fn get(&self, name: &str) -> Option<Stat> {
        self.stats.iter().find(|(n, _)| *n == name).and_then(|(_, s)| *s)
    }
}

const COLUMNS: &[&str] =
    &["build cold", "build no-op", "check", "diff", "talos render", "cp -r", "hash out/", "genconfig", "genconfig -n"];

fn main() {
    let started = Instant::now();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_fleetc"));
    let shapes =
        parse_shapes(&std::env::var("FLEETC_BENCH_SHAPES").unwrap_or_else(|_| "3+10,3+100,3+1000,10000".to_owned()));
    let n: usize = std::env::var("FLEETC_BENCH_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(5).max(1);
    let talosctl = talosctl();
    let talhelper = talhelper();
    let (tmp, tmpfs) = scratch();
    // FLEETC_BENCH_KEEP=1 leaves the scratch directory in place (to look at a failure).
    let tmp =
        if std::env::var_os("FLEETC_BENCH_KEEP").is_some() { Scratch::Kept(tmp.keep()) } else { Scratch::Temp(tmp) };
    eprintln!(
        "fleet_scale: {} runs, scratch {} ({}), talosctl {}, talhelper {}",
        n,
        tmp.path().display(),
        if tmpfs { "tmpfs" } else { "not tmpfs" },
        talosctl.as_ref().map_or("absent".into(), |p| p.display().to_string()),
        talhelper.as_ref().map_or("absent".into(), |p| p.display().to_string()),
    );
    let talosctl_dir = talosctl.as_deref().map(|b| talosctl_dir(tmp.path(), b));
    // One age identity for every synthetic fleet: `talos render` decrypts the bundle with it.
    let id = age::x25519::Identity::generate();
    let recipient = id.to_public().to_string();
    let id_file = tmp.path().join("identity.txt");
    {
        use age::secrecy::ExposeSecret;
        write_private(&id_file, format!("{}\n", id.to_string().expose_secret()).as_bytes());
    }
    let mut rows = Vec::new();
    for &shape in &shapes {
        let t0 = Instant::now();
        let row = bench_shape(
            &bin,
            shape,
            n,
            tmp.path(),
            &recipient,
            &id_file,
            talosctl_dir.as_deref(),
            talhelper.as_deref(),
        );
        eprintln!("{} nodes: done in {:.0} s", shape.label(), t0.elapsed().as_secs_f64());
        rows.push(row);
    }
    let report = report(&rows, n, tmpfs, talosctl.as_deref(), talhelper.is_some(), started.elapsed());
    println!("{report}");
    if let Ok(doc) = std::env::var("FLEETC_BENCH_DOC") {
        splice(Path::new(&doc), &report);
        eprintln!("fleet_scale: wrote the report into {doc}");
    }
    eprintln!("fleet_scale: the whole benchmark took {:.0} s", started.elapsed().as_secs_f64());
}

fn write_private(path: &Path, bytes: &[u8]) {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).expect("a private file");
    f.write_all(bytes).expect("write");
}

#[allow(clippy::too_many_arguments)]
fn bench_shape(
    bin: &Path,
    shape: Shape,
    n: usize,
    tmp: &Path,
    recipient: &str,
    id_file: &Path,
    talosctl: Option<&Path>,
    talhelper: Option<&Path>,
) -> Row {
    let dir = tmp.join(format!("fleet-{}", shape.label()));
    fleetc::synth::write_of(&dir, shape, recipient).expect("write the synthetic fleet");
    let fleet = dir.join("fleet.kdl");
    let changed = dir.join("fleet-changed.kdl");
    let text = std::fs::read_to_string(&fleet).expect("fleet.kdl");
    assert!(text.contains(K8S));
    std::fs::write(&changed, text.replace(K8S, K8S_CHANGED)).expect("fleet-changed.kdl");
    let out = dir.join("out");
    let copy = dir.join("out-copy");
    let fleetc = |args: &[&str], fleet: &Path| {
        let mut c = Command::new(bin);
        c.args(args).arg("--fleet").arg(fleet);
        c
    };
    // A first build: out/ for the talconfigs, the clusters' list.
    measure(&mut fleetc(&["build", "--quiet"], &fleet), &[0]);
    let (files, bytes) = tree_size(&out);
    let compiled = {
        let mut loader = fleetc::compile::MapLoader::default();
        for (rel, t) in fleetc::synth::files_of(shape, recipient).into_iter().skip(1) {
            loader.files.insert(rel.to_owned(), t);
        }
        fleetc::compile::compile("fleet.kdl", &text, &loader)
    };
    let model = compiled.fleet.expect("the synthetic fleet compiles");
    let mut envs: Vec<String> = model.clusters().map(|(e, _)| e.name.value.clone()).collect();
    envs.dedup();
    let targets: Vec<fleetc::apply::Target> =
        envs.iter().filter_map(|e| fleetc::apply::target::of(&model, e)).collect();
    let clusters: Vec<(String, String)> =
        targets.iter().flat_map(|t| t.clusters.iter().map(|c| (t.env.clone(), c.name.clone()))).collect();

    // The secrets bundle: talhelper's own (`gensecret`, the talosctl bundle format), sealed for
    // fleetc's clusters; without talhelper, talosctl's `gen secrets`.
    let bundle = dir.join("talsecret.yaml");
    let have_bundle = if let Some(th) = talhelper {
        let o = Command::new(th).arg("gensecret").output().expect("talhelper gensecret");
        assert!(o.status.success(), "talhelper gensecret: {}", String::from_utf8_lossy(&o.stderr));
        write_private(&bundle, &o.stdout);
        true
    } else if let Some(dir) = talosctl {
        let s =
            Command::new(dir.join("talosctl")).args(["gen", "secrets", "-o"]).arg(&bundle).status().expect("talosctl");
        s.success()
    } else {
        false
    };
    if have_bundle {
        let plain = std::fs::read(&bundle).expect("bundle");
        let r = fleetc::secrets::parse_recipients(&[recipient]).expect("recipient");
        let sealed = fleetc::secrets::seal(&r, &plain).expect("seal");
        for (env, c) in &clusters {
            let p = dir.join(fleetc::secrets::rel_path(env, c, fleetc::layout::names::TALOS_SECRETS_INPUT));
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, &sealed).expect("write the sealed bundle");
        }
    }
    // talconfig.yaml per cluster (fleetc::synth::talconfig), for both versions of fleet.kdl.
    let th_dir = dir.join("talhelper");
    let talconfigs: Vec<(PathBuf, PathBuf, PathBuf)> = if talhelper.is_some() {
        std::fs::create_dir_all(&th_dir).expect("mkdir");
        let mut v = Vec::new();
        for t in &targets {
            for c in &t.clusters {
                let text = fleetc::synth::talconfig::talconfig(&t.env, c, &t.images, &out);
                let base = th_dir.join(format!("{}-{}", t.env, c.name));
                let a = base.with_extension("yaml");
                let b = base.with_extension("changed.yaml");
                let from = format!("\"kubernetesVersion\": \"v{}\"", c.kubernetes);
                assert!(text.contains(&from));
                std::fs::write(&a, &text).expect("talconfig");
                std::fs::write(&b, text.replace(&from, "\"kubernetesVersion\": \"v1.33.5\"")).expect("talconfig");
                v.push((a, b, base.with_extension("out")));
            }
        }
        v
    } else {
        Vec::new()
    };
    let keep_vars = if talhelper.is_some() { shell_variables(&out.join("talos")) } else { Vec::new() };
    let rendered = dir.join("rendered");
    let th = talhelper.map(Path::to_owned);
    let genconfig = |cfg: &Path, out: &Path, dry: bool| {
        let mut c = Command::new(th.as_deref().expect("talhelper"));
        c.current_dir(&th_dir)
            .args(["genconfig", "--offline-mode", "-c"])
            .arg(cfg)
            .arg("-s")
            .arg(&bundle)
            .arg("-o")
            .arg(out);
        if dry {
            c.arg("--dry-run");
        }
        // talhelper runs envsubst over every patch and fails on an unset variable; the
        // Cilium manifest's scripts name `${BIN_PATH}`, which must stay as it is.
        for v in &keep_vars {
            c.env(v, format!("${{{v}}}"));
        }
        c
    };

    let mut jobs: Vec<Job<'_>> = vec![
        Job::new("build cold", &[0], || remove(&out), || vec![fleetc(&["build", "--quiet"], &fleet)]),
        Job::new("build no-op", &[0], || {}, || vec![fleetc(&["build", "--quiet"], &fleet)]),
        Job::new("check", &[0], || {}, || vec![fleetc(&["check", "--quiet"], &fleet)]),
        // diff's exit 1: a difference found (the change touches every node's config).
        Job::new("diff", &[1], || {}, || vec![fleetc(&["diff", "--quiet"], &changed)]),
        Job::new(
            "cp -r",
            &[0],
            || remove(&copy),
            || {
                let mut c = Command::new("cp");
                c.arg("-r").arg(&out).arg(&copy);
                vec![c]
            },
        ),
        Job::new(
            "hash out/",
            &[0],
            || {},
            || {
                let mut c = Command::new("sh");
                c.arg("-c").arg("find \"$1\" -type f -print0 | xargs -0 sha256sum >/dev/null").arg("sh").arg(&out);
                vec![c]
            },
        ),
    ];
    if let (Some(dir), true) = (talosctl, have_bundle) {
        jobs.push(Job::new(
            "talos render",
            &[0],
            || remove(&rendered),
            || {
                clusters
                    .iter()
                    .map(|(env, c)| {
                        let mut cmd = fleetc(&["talos", "render", &format!("{env}/{c}")], &fleet);
                        cmd.arg("--out").arg(rendered.join(env).join(c)).arg("--identity").arg(id_file);
                        cmd.env("PATH", path_with(dir));
                        cmd
                    })
                    .collect()
            },
        ));
    }
    if talhelper.is_some() {
        let outs: Vec<PathBuf> = talconfigs.iter().map(|t| t.2.clone()).collect();
        jobs.push(Job::new(
            "genconfig",
            &[0],
            move || outs.iter().for_each(|o| remove(o)),
            || talconfigs.iter().map(|(a, _, o)| genconfig(a, o, false)).collect(),
        ));
        // --dry-run compares with the last genconfig's output, which the job above leaves.
        jobs.push(Job::new(
            "genconfig -n",
            &[0],
            || {},
            || talconfigs.iter().map(|(_, b, o)| genconfig(b, o, true)).collect(),
        ));
    }
    for run in 0..n {
        for j in &mut jobs {
            j.run_once();
        }
        eprintln!("{} nodes: run {}/{n}", shape.label(), run + 1);
    }
    // The build must be in place for the next shape's nothing; free the memory-backed disk.
    let stats = COLUMNS.iter().map(|&name| (name, jobs.iter().find(|j| j.name == name).map(Job::stat))).collect();
    drop(jobs);
    remove(&dir);
    Row { shape, clusters: clusters.len(), files, bytes, stats }
}

/// The `${NAME}`s of the files under `dir` (patches talhelper passes through envsubst).
fn shell_variables(dir: &Path) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            for (i, _) in text.match_indices('$') {
                let rest = &text[i + 1..];
                let braced = rest.strip_prefix('{');
                let name: String =
                    braced.unwrap_or(rest).chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                    continue;
                }
                assert!(braced.is_some(), "{}: `${name}` without braces; the talconfig cannot keep it", p.display());
                names.insert(name);
            }
        }
    }
    names.into_iter().collect()
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 { format!("{:.0} ms", s * 1000.0) } else { format!("{s:.2} s") }
}

fn cell(s: Option<Stat>) -> String {
    match s {
        Some(s) => format!("{} ({}–{})", secs(s.median), secs(s.min), secs(s.max)),
        None => "–".to_owned(),
    }
}

fn mib(k: u64) -> f64 {
    k as f64 / 1024.0
}

fn ratio(a: Option<Stat>, b: Option<Stat>) -> Option<f64> {
    Some(a?.median.as_secs_f64() / b?.median.as_secs_f64())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| t.lines().next().map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse::<u64>().unwrap_or(0)))
        .unwrap_or(0);
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    format!(
        "{cores} CPUs ({cpu}), {:.0} GiB RAM, load average at the end {}",
        mem as f64 / 1048576.0,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    )
}

fn report(rows: &[Row], n: usize, tmpfs: bool, talosctl: Option<&Path>, talhelper: bool, took: Duration) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "`cargo bench --bench fleet_scale`: median (min–max) of {n} alternating runs; {}; {}; the whole run took {:.0} s.\n",
        if tmpfs { "fleets, out/ and copies on tmpfs (/dev/shm)" } else { "on disk (no writable /dev/shm)" },
        machine(),
        took.as_secs_f64()
    );
    match talosctl {
        None => o.push_str(
            "`talos render`: not measured, no talosctl (`FLEETC_BENCH_TALOSCTL`, PATH and `oracles/talosctl/build` gave none).\n",
        ),
        // The stand-in's name (oracles/lib/build.sh): talosctl-standin-<machinery>-<key>.
        Some(p) if p.file_name().is_some_and(|f| f.to_string_lossy().starts_with("talosctl-standin-")) => o.push_str(
            "`talos render`: talosctl = fleetc's harness build of talosctl v1.13.9 `gen config` over machinery v1.13.9 (oracles/talosctl).\n",
        ),
        Some(_) => o.push_str("`talos render`: talosctl from PATH or `FLEETC_BENCH_TALOSCTL`.\n"),
    }
    if !talhelper {
        o.push_str("talhelper columns: not measured, no talhelper (`oracles/talhelper/build` gave none).\n");
    }
    o.push_str("\n| nodes | clusters | files | out/ MiB |");
    for c in COLUMNS {
        let _ = write!(o, " {c} |");
    }
    o.push_str("\n|---:|---:|---:|---:|");
    for _ in COLUMNS {
        o.push_str("---:|");
    }
    o.push('\n');
    for r in rows {
        let _ = write!(o, "| {} | {} | {} | {:.1} |", r.shape.label(), r.clusters, r.files, r.bytes as f64 / 1048576.0);
        for c in COLUMNS {
            let _ = write!(o, " {} |", cell(r.get(c)));
        }
        o.push('\n');
    }
    let _ = write!(
        o,
        "\nPeak resident memory (MiB, the largest process of a job; {}):\n\n| nodes |",
        if TIME.is_some() {
            "GNU time's %M"
        } else {
            "wait4's ru_maxrss, which never reads below the benchmark's own resident set"
        }
    );
    for c in COLUMNS {
        let _ = write!(o, " {c} |");
    }
    o.push_str("\n|---:|");
    for _ in COLUMNS {
        o.push_str("---:|");
    }
    o.push('\n');
    for r in rows {
        let _ = write!(o, "| {} |", r.shape.label());
        for c in COLUMNS {
            match r.get(c) {
                Some(s) => {
                    let _ = write!(o, " {:.1} |", mib(s.peak_kib));
                }
                None => o.push_str(" – |"),
            }
        }
        o.push('\n');
    }
    o.push_str("\nRatios (medians):\n\n| nodes | cold / cp -r | no-op / hash out/ | talos render / genconfig | diff / genconfig -n | peak MiB per out/ MiB (cold) |\n|---:|---:|---:|---:|---:|---:|\n");
    let x = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.2}x"));
    for r in rows {
        let per = mib(r.get("build cold").map_or(0, |s| s.peak_kib)) / (r.bytes as f64 / 1048576.0);
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {per:.2} |",
            r.shape.label(),
            x(ratio(r.get("build cold"), r.get("cp -r"))),
            x(ratio(r.get("build no-op"), r.get("hash out/"))),
            x(ratio(r.get("talos render"), r.get("genconfig"))),
            x(ratio(r.get("diff"), r.get("genconfig -n"))),
        );
    }
    o.push_str("\nTargets (issue 20), at the largest shape:\n\n");
    if let Some(big) = rows.iter().max_by_key(|r| r.shape.nodes()) {
        let l = big.shape.label();
        let t = |v: Option<f64>, max: f64| match v {
            Some(v) if v <= max => format!("{v:.2}x: met"),
            Some(v) => format!("{v:.2}x: **missed**"),
            None => "not measured".to_owned(),
        };
        let _ = writeln!(
            o,
            "- cold build within 2x of `cp -r` at {l}: {}",
            t(ratio(big.get("build cold"), big.get("cp -r")), 2.0)
        );
        let _ = writeln!(
            o,
            "- no-op build within 1.5x of hashing out/ at {l}: {}",
            t(ratio(big.get("build no-op"), big.get("hash out/")), 1.5)
        );
    }
    for r in rows {
        let _ = writeln!(
            o,
            "- `talos render` no slower than `talhelper genconfig` at {}: {}",
            r.shape.label(),
            match ratio(r.get("talos render"), r.get("genconfig")) {
                Some(v) if v <= 1.0 => format!("{v:.2}x: met"),
                Some(v) => format!("{v:.2}x: **missed**"),
                None => "not measured".to_owned(),
            }
        );
    }
    o
}

/// Replaces the text between `<!-- bench:begin -->` and `<!-- bench:end -->` of `doc`.
fn splice(doc: &Path, report: &str) {
    let text = std::fs::read_to_string(doc).expect("FLEETC_BENCH_DOC: a readable file");
    let (b, e) = ("<!-- bench:begin -->", "<!-- bench:end -->");
    let (Some(i), Some(j)) = (text.find(b), text.find(e)) else {
        panic!("{} has no {b} … {e} markers", doc.display());
    };
    let new = format!("{}{b}\n{report}{}", &text[..i], &text[j..]);
    std::fs::write(doc, new).expect("write FLEETC_BENCH_DOC");
}
