//! The fleet-scale benchmark (docs/performance.md): synthetic fleets of 10 to 10,000 nodes
//! ([`fleetc::synth`]), the release binary run as a child process, the median wall time of
//! several runs and the child's peak resident memory (`wait4`'s `ru_maxrss`) for `build`
//! (cold: empty out/; no-op: a second build), `check` and `diff`, and `cp -r` of the
//! 10,000-node out/ tree as the yardstick for the cold build.
//!
//! `cargo bench --bench fleet_scale`; `FLEETC_BENCH_SIZES=10,100` and `FLEETC_BENCH_RUNS=5`
//! narrow or widen it. It prints a Markdown table and whether each target holds.

#![allow(clippy::disallowed_methods)] // a benchmark measures the real binary and `cp -r` as child processes

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Sample {
    wall: Duration,
    max_rss_kib: u64,
}

/// Runs `cmd` to completion; its wall time and peak RSS. Panics unless it exits `ok_codes`.
fn measure(cmd: &mut Command, ok_codes: &[i32]) -> Sample {
    let start = Instant::now();
    let child = cmd.stdout(Stdio::null()).stderr(Stdio::inherit()).spawn().expect("spawn");
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data, zero-initialised; wait4 fills it for this child only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own unwaited child; the pointers are valid for the call.
    let r = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    let wall = start.elapsed();
    assert_eq!(r, pid, "wait4 failed");
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    assert!(ok_codes.contains(&code), "{cmd:?} exited {code}");
    std::mem::forget(child);
    Sample { wall, max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0) }
}

struct Stat {
    median: Duration,
    peak_kib: u64,
}

fn runs(n: usize, mut prepare: impl FnMut(), mut cmd: impl FnMut() -> Command, ok: &[i32]) -> Stat {
    let mut walls = Vec::new();
    let mut peak = 0;
    for _ in 0..n {
        prepare();
        let s = measure(&mut cmd(), ok);
        walls.push(s.wall);
        peak = peak.max(s.max_rss_kib);
    }
    walls.sort();
    Stat { median: walls[walls.len() / 2], peak_kib: peak }
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Row {
    nodes: usize,
    files: usize,
    bytes: u64,
    cold: Stat,
    noop: Stat,
    check: Stat,
    diff: Stat,
    cp: Stat,
}

fn main() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_fleetc"));
    let sizes: Vec<usize> = std::env::var("FLEETC_BENCH_SIZES")
        .unwrap_or_else(|_| "10,100,1000,10000".to_owned())
        .split(',')
        .map(|s| s.trim().parse().expect("FLEETC_BENCH_SIZES: numbers"))
        .collect();
    let n: usize = std::env::var("FLEETC_BENCH_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    // `cargo bench` passes `--bench`; any other argument is ignored.
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rows = Vec::new();
    for &nodes in &sizes {
        let dir = tmp.path().join(format!("fleet-{nodes}"));
        fleetc::synth::write(&dir, nodes).expect("write the synthetic fleet");
        let fleet = dir.join("fleet.kdl");
        let out = dir.join("out");
        let copy = dir.join("out-copy");
        let fleetc = |args: &[&str]| {
            let mut c = Command::new(&bin);
            c.args(args).arg("--fleet").arg(&fleet);
            c
        };
        let cold = runs(n, || remove(&out), || fleetc(&["build", "--quiet"]), &[0]);
        let noop = runs(n, || {}, || fleetc(&["build", "--quiet"]), &[0]);
        let check = runs(n, || {}, || fleetc(&["check", "--quiet"]), &[0]);
        let diff = runs(n, || {}, || fleetc(&["diff", "--quiet"]), &[0]);
        let cp = runs(
            n,
            || remove(&copy),
            || {
                let mut c = Command::new("cp");
                c.arg("-r").arg(&out).arg(&copy);
                c
            },
            &[0],
        );
        let (files, bytes) = tree_size(&out);
        remove(&copy);
        let row = Row { nodes, files, bytes, cold, noop, check, diff, cp };
        eprintln!(
            "{nodes} nodes: cold {:.0} ms, no-op {:.0} ms, check {:.0} ms, diff {:.0} ms, cp -r {:.0} ms",
            ms(row.cold.median),
            ms(row.noop.median),
            ms(row.check.median),
            ms(row.diff.median),
            ms(row.cp.median)
        );
        rows.push(row);
        remove(&dir);
    }
    report(&rows, n);
}

fn report(rows: &[Row], n: usize) {
    println!("median of {n} runs; peak RSS of the child in MiB\n");
    println!(
        "| nodes | files | out/ MiB | build cold ms | build no-op ms | check ms | diff ms | cp -r ms | peak MiB cold / no-op / check / diff |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mib = |k: u64| k as f64 / 1024.0;
    for r in rows {
        println!(
            "| {} | {} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} / {:.1} / {:.1} / {:.1} |",
            r.nodes,
            r.files,
            r.bytes as f64 / 1048576.0,
            ms(r.cold.median),
            ms(r.noop.median),
            ms(r.check.median),
            ms(r.diff.median),
            ms(r.cp.median),
            mib(r.cold.peak_kib),
            mib(r.noop.peak_kib),
            mib(r.check.peak_kib),
            mib(r.diff.peak_kib)
        );
    }
    println!();
    if let Some(big) = rows.iter().max_by_key(|r| r.nodes) {
        let ratio = big.cold.median.as_secs_f64() / big.cp.median.as_secs_f64();
        println!("- cold build / cp -r at {} nodes: {ratio:.2}x (target <= 3x): {}", big.nodes, verdict(ratio <= 3.0));
        let half = big.noop.median.as_secs_f64() / big.cold.median.as_secs_f64();
        println!("- no-op / cold build at {} nodes: {half:.2} (target < 0.5): {}", big.nodes, verdict(half < 0.5));
    }
    for w in rows.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let nx = b.nodes as f64 / a.nodes as f64;
        let tx = b.cold.median.as_secs_f64() / a.cold.median.as_secs_f64();
        let mx = (b.cold.peak_kib as f64 / a.cold.peak_kib as f64) / (b.bytes as f64 / a.bytes as f64);
        println!(
            "- {} -> {} nodes ({nx:.0}x): cold build {tx:.2}x (target <= {:.1}x): {}; peak memory / output size grows {mx:.2}x",
            a.nodes,
            b.nodes,
            nx * 1.1,
            verdict(tx <= nx * 1.1)
        );
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}
