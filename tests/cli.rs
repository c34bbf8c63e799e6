//! The command line, end to end: the real binary in temporary directories.

#![allow(clippy::disallowed_methods)] // tests run the real binary and external oracles

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fleetc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("fleetc runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Copies the reference fleet (fleet.kdl and the files it references) into `dst`.
fn copy_reference(dst: &Path) {
    let root = common::root();
    fs::copy(root.join("fleet.kdl"), dst.join("fleet.kdl")).unwrap();
    for dir in ["vendor", "apps", "values", "patches"] {
        copy_tree(&root.join(dir), &dst.join(dir));
    }
}

fn copy_tree(src: &Path, dst: &Path) {
    if !src.exists() {
        return;
    }
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap().flatten() {
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            fs::copy(e.path(), &to).unwrap();
        }
    }
}

fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path().strip_prefix(dir).unwrap().to_owned(), fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_reference_fleet_checks_clean() {
    let o = fleetc(&common::root(), &["check"]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    // The one kind of warning the reference fleet carries: its add-ons' projects have not
    // tested Kubernetes 1.36 yet (Cilium 1.18, Argo CD 3.2, cert-manager 1.19, External
    // Secrets 0.20: `upstream::talos::ADDON_KUBERNETES`), and no single Kubernetes minor is in
    // all four ranges. Anything else is a problem.
    let err = text(&o.stderr);
    let codes: Vec<&str> = err.lines().filter(|l| l.starts_with("fleet::")).collect();
    assert!(codes.iter().all(|c| *c == "fleet::addons::kubernetes-untested"), "{err}");
    assert!(err.contains("no problems") || err.contains(" warnings"), "{err}");
}

#[test]
fn builds_are_byte_identical_across_directories_time_zones_and_locales() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let deep = b.path().join("some/deeper/place");
    fs::create_dir_all(&deep).unwrap();
    copy_reference(a.path());
    copy_reference(&deep);
    let run = |dir: &Path, tz: &str, lang: &str, home: &Path| {
        let o = Command::new(env!("CARGO_BIN_EXE_fleetc"))
            .arg("build")
            .current_dir(dir)
            .env("TZ", tz)
            .env("LANG", lang)
            .env("LC_ALL", lang)
            .env("HOME", home)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    };
    run(a.path(), "UTC", "C", a.path());
    run(&deep, "Pacific/Chatham", "fr_FR.UTF-8", b.path());
    let (ta, tb) = (tree(&a.path().join("out")), tree(&deep.join("out")));
    assert!(!ta.is_empty());
    assert_eq!(ta, tb, "two builds of one fleet differ");
    // And the committed out/ is that same output.
    assert_eq!(ta, tree(&common::root().join("out")), "the committed out/ is stale: run `cargo run -- build`");
}

#[test]
fn a_second_build_rewrites_nothing() {
    let dir = tempfile::tempdir().unwrap();
    copy_reference(dir.path());
    assert_eq!(code(&fleetc(dir.path(), &["build"])), 0);
    let before: Vec<_> = tree(&dir.path().join("out"))
        .into_iter()
        .map(|(p, _)| {
            let m = fs::metadata(dir.path().join("out").join(&p)).unwrap().modified().unwrap();
            (p, m)
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let o = fleetc(dir.path(), &["build"]);
    assert!(text(&o.stderr).contains(": 0 written"), "{}", text(&o.stderr));
    for (p, m) in before {
        assert_eq!(
            fs::metadata(dir.path().join("out").join(&p)).unwrap().modified().unwrap(),
            m,
            "{} was rewritten",
            p.display()
        );
    }
}

#[test]
fn build_check_catches_edited_missing_and_extra_files() {
    let dir = tempfile::tempdir().unwrap();
    copy_reference(dir.path());
    assert_eq!(code(&fleetc(dir.path(), &["build"])), 0);
    let fresh = fleetc(dir.path(), &["build", "--check"]);
    assert_eq!(code(&fresh), 0, "{}", text(&fresh.stderr));

    let out = dir.path().join("out");
    let files = tree(&out);
    let (edited, removed) = (&files[0].0, &files[1].0);
    fs::write(out.join(edited), "edited by hand\n").unwrap();
    fs::remove_file(out.join(removed)).unwrap();
    fs::write(out.join("stray.yaml"), "x: 1\n").unwrap();
    let o = fleetc(dir.path(), &["build", "--check"]);
    assert_eq!(code(&o), 1);
    let listed = text(&o.stdout);
    assert!(listed.contains(&format!("stale: out/{}", edited.display())), "{listed}");
    assert!(listed.contains(&format!("missing: out/{}", removed.display())), "{listed}");
    assert!(listed.contains("extra: out/stray.yaml"), "{listed}");
    // --check wrote nothing.
    assert_eq!(fs::read_to_string(out.join(edited)).unwrap(), "edited by hand\n");
}

#[test]
fn a_run_with_errors_writes_nothing_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(common::root().join("golden/quorum-even-control-plane/fleet.kdl"), dir.path().join("fleet.kdl")).unwrap();
    let o = fleetc(dir.path(), &["build"]);
    assert_eq!(code(&o), 1);
    assert!(!dir.path().join("out").exists());
    assert!(text(&o.stderr).contains("fleet::quorum::even-control-plane"));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(code(&fleetc(dir.path(), &["check"])), 2, "no fleet.kdl");
    assert_eq!(code(&fleetc(dir.path(), &["frobnicate"])), 2);
    assert_eq!(code(&fleetc(dir.path(), &["explain", "no-such-code"])), 2);
}

#[test]
fn json_diagnostics_carry_the_required_fields() {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(common::root().join("golden/network-cidr-overlap/fleet.kdl"), dir.path().join("fleet.kdl")).unwrap();
    // The app's directory, so that the only diagnostic is the overlap (one cause: the service
    // CIDR over both the network and the pod CIDR is one error).
    fs::create_dir_all(dir.path().join("apps/hello")).unwrap();
    let o = fleetc(dir.path(), &["check", "--format", "json"]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    let items = v.as_array().expect("an array");
    assert_eq!(items.len(), 1, "{v}");
    for d in items {
        for key in ["code", "severity", "message", "file", "line", "column", "help"] {
            assert!(!d[key].is_null(), "{key} missing in {d}");
        }
    }
    assert_eq!(items[0]["code"], "fleet::network::cidr-overlap");
    assert_eq!(items[0]["file"], "fleet.kdl");
}

#[test]
fn explain_prints_every_code() {
    for c in fleetc::diag::codes::ALL {
        let o = fleetc(&common::root(), &["explain", c.name]);
        assert_eq!(code(&o), 0);
        assert!(text(&o.stdout).contains("## Why"), "{}", c.name);
    }
    let o = fleetc(&common::root(), &["explain", "even-control-plane"]);
    assert!(text(&o.stdout).starts_with("fleet::quorum::even-control-plane"));
}

#[test]
fn every_schematic_file_hashes_to_what_schematic_id_prints() {
    let out = common::root().join("out/schematics");
    let mut n = 0;
    for e in fs::read_dir(&out).unwrap().flatten() {
        let bytes = fs::read(e.path()).unwrap();
        let o = fleetc(&common::root(), &["schematic", "id", e.path().to_str().unwrap()]);
        assert_eq!(code(&o), 0, "{}", text(&o.stderr));
        assert_eq!(text(&o.stdout).trim(), fleetc::digest::sha256_hex(&bytes), "{}", e.path().display());
        n += 1;
    }
    assert!(n > 0, "no schematic in out/");
}

/// R27: the same cluster on Scaleway and on Proxmox differs in fleet.kdl only in its
/// provider block, and both compile.
#[test]
fn sovereignty_one_cluster_two_providers() {
    let template = r#"fleet "demo" {
    talos "v1.13.9"
    kubernetes "1.36.2"
    gitops repo="https://git.example.org/demo/fleet.git"
    schematic "base" {
        extension "siderolabs/gvisor"
    }
    environment "prod" {
PROVIDER
        state bucket="demo-tofu-state" region="fr-par" endpoint="https://s3.fr-par.scw.cloud"
        network "10.10.0.0/22"
        gateway "51.15.200.10"
        admin-ranges "203.0.113.0/24"
        cluster "main" {
            runtimes "gvisor"
            endpoint address="10.10.0.10"
            pool-defaults schematic="base"
            control-plane count=3 size="small" {
                addresses "10.10.0.11" "10.10.0.12" "10.10.0.13"
            }
            pool "workers" count=2 size="large" {
                addresses "10.10.0.21" "10.10.0.22"
            }
        }
    }
}
"#;
    let scaleway = r#"        scaleway project="11111111-2222-3333-4444-555555555555" region="fr-par" zone="fr-par-2" {
            size "small" type="PRO2-XS"
            size "large" type="PRO2-M"
        }"#;
    let proxmox = r#"        proxmox endpoint="https://pve.example:8006" node="pve1" router="10.10.0.1" {
            size "small" cores=2 memory="4GiB"
            size "large" cores=8 memory="32GiB"
        }"#;
    let a = template.replace("PROVIDER", scaleway);
    let b = template.replace("PROVIDER", proxmox);
    let changed: Vec<String> = similar::TextDiff::from_lines(&a, &b)
        .iter_all_changes()
        .filter(|c| c.tag() != similar::ChangeTag::Equal)
        .map(|c| c.value().to_owned())
        .collect();
    let provider_lines: Vec<&str> = scaleway.lines().chain(proxmox.lines()).collect();
    assert!(changed.iter().all(|l| provider_lines.contains(&l.trim_end_matches('\n'))), "{changed:?}");
    let loader = fleetc::compile::MapLoader::default();
    let (ca, cb) =
        (fleetc::compile::compile("fleet.kdl", &a, &loader), fleetc::compile::compile("fleet.kdl", &b, &loader));
    for c in [&ca, &cb] {
        assert!(
            !c.diags.has_errors(),
            "{}",
            fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN)
        );
    }
    assert_ne!(ca.artifacts, cb.artifacts, "the provider block must change the output");
}

/// A synthetic fleet of `nodes` nodes in `dir`, with `edit` applied to its fleet.kdl.
fn synth_fleet(dir: &Path, nodes: usize, edit: impl Fn(String) -> String) {
    fleetc::synth::write(dir, nodes).unwrap();
    let path = dir.join("fleet.kdl");
    fs::write(&path, edit(fs::read_to_string(&path).unwrap())).unwrap();
}

fn build_in(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["build", "--fleet", "fleet.kdl"];
    all.extend_from_slice(args);
    fleetc(dir, &all)
}

/// A build killed (SIGKILL) at any moment leaves an out/ that `build --check` reports as not
/// fresh and that the next build, of a different fleet, repairs completely. Kill points are
/// spread over the duration of a full build; the test takes a few seconds.
#[cfg(unix)]
#[test]
fn a_killed_build_is_repaired_by_the_next_build() {
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (tmp.path().join("a"), tmp.path().join("b"), tmp.path().join("c"));
    for d in [&a, &b, &c] {
        fs::create_dir_all(d).unwrap();
    }
    // A, then B (every cluster renamed: every file moves), then C (another Talos version).
    synth_fleet(&a, 1_000, |t| t);
    synth_fleet(&b, 1_000, |t| t.replace("cluster \"c", "cluster \"k"));
    synth_fleet(&c, 1_000, |t| t.replace("talos \"v1.13.9\"", "talos \"v1.13.8\""));
    let out = tmp.path().join("out");
    let out_arg = out.to_str().unwrap().to_owned();
    let started = Instant::now();
    assert_eq!(code(&build_in(&b, &["--out", &out_arg])), 0);
    let full = started.elapsed();
    fs::remove_dir_all(&out).unwrap();
    let points = 8u32;
    for i in 0..points {
        assert_eq!(code(&build_in(&a, &["--out", &out_arg])), 0);
        let mut child = Command::new(env!("CARGO_BIN_EXE_fleetc"))
            .args(["build", "--fleet", "fleet.kdl", "--out", &out_arg])
            .current_dir(&b)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(full * i / points + Duration::from_millis(u64::from(i) * 7));
        let _ = child.kill();
        let status = child.wait().unwrap();
        let check = build_in(&b, &["--out", &out_arg, "--check"]);
        if status.success() {
            assert_eq!(code(&check), 0, "kill {i} after the build finished: check must be fresh");
        } else {
            assert_eq!(code(&check), 1, "kill {i}: check must see the interrupted build: {}", text(&check.stderr));
        }
        let next = build_in(&c, &["--out", &out_arg]);
        assert_eq!(code(&next), 0, "kill {i}: the next build must repair out/: {}", text(&next.stderr));
        let check = build_in(&c, &["--out", &out_arg, "--check"]);
        assert_eq!(code(&check), 0, "kill {i}: out/ must be exactly C's: {}", text(&check.stdout));
    }
}

/// Two builds on one out/ at once: both succeed (the second waits for the first's lock), and
/// out/ is whole.
#[test]
fn concurrent_builds_serialize() {
    let tmp = tempfile::tempdir().unwrap();
    synth_fleet(tmp.path(), 500, |t| t);
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_fleetc"))
            .args(["build", "--fleet", "fleet.kdl"])
            .current_dir(tmp.path())
            .output()
    };
    for _ in 0..3 {
        let (x, y) = std::thread::scope(|s| {
            let x = s.spawn(spawn);
            let y = s.spawn(spawn);
            (x.join().unwrap().unwrap(), y.join().unwrap().unwrap())
        });
        assert_eq!((code(&x), code(&y)), (0, 0), "{}{}", text(&x.stderr), text(&y.stderr));
        assert_eq!(code(&build_in(tmp.path(), &["--check"])), 0);
        fs::remove_dir_all(tmp.path().join("out")).unwrap();
    }
}

#[test]
fn out_dirs_a_build_must_not_own_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let fleet = tmp.path().join("fleet");
    fs::create_dir_all(&fleet).unwrap();
    copy_reference(&fleet);
    for bad in [".", "..", "/", "vendor/.."] {
        let o = build_in(&fleet, &["--out", bad]);
        assert_eq!(code(&o), 2, "--out {bad}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("refusing to write into"), "{}", text(&o.stderr));
    }
    #[cfg(unix)]
    {
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, fleet.join("out")).unwrap();
        let o = build_in(&fleet, &[]);
        assert_eq!(code(&o), 2, "{}", text(&o.stderr));
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing written through the link");
    }
    assert!(!tmp.path().join("MANIFEST.sha256").exists());
}

#[test]
fn invalid_utf8_names_its_byte_offset_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("fleet.kdl"), b"fleet \"a\" {\n  talos \"v\xff1\"\n}\n").unwrap();
    for cmd in ["check", "build", "fmt"] {
        let o = fleetc(tmp.path(), &[cmd, "--fleet", "fleet.kdl"]);
        assert_eq!(code(&o), 2, "{cmd}");
        let err = text(&o.stderr);
        assert!(err.contains("byte offset 22 (line 2, column 11)"), "{cmd}: {err}");
    }
}

/// The shapes that crashed fleetc (audit, docs/performance.md): each ends in diagnostics,
/// exit 1, rendered for people and as JSON.
#[test]
fn hostile_shapes_end_in_diagnostics() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = fs::read_to_string(common::root().join("fleet.kdl")).unwrap();
    let deep = format!("{reference}\n{}", "x {".repeat(100_000));
    let wide = reference.replacen("talos \"v1.13.9\"", &format!("talos \"{}\"", "v".repeat(70_000)), 1);
    let huge = reference.replacen("count=2 ", "count=2147483649 ", 1);
    let many = format!("{reference}\n{}", "nod \"x\"\n".repeat(20_000));
    for (name, text_in, want) in [
        ("deep", deep, "fleet::limits::too-deep"),
        ("wide", wide, "fleet::limits::line-too-long"),
        ("huge", huge, "fleet::limits::count-too-large"),
        ("many", many, "fleet::limits::too-many-nodes"),
    ] {
        copy_reference(tmp.path());
        fs::write(tmp.path().join("fleet.kdl"), &text_in).unwrap();
        for format in ["human", "json"] {
            let o = fleetc(tmp.path(), &["--color", "never", "check", "--fleet", "fleet.kdl", "--format", format]);
            assert_eq!(code(&o), 1, "{name}/{format}: {}", text(&o.stderr));
            let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
            assert!(all.contains(want), "{name}/{format}: {all}");
        }
    }
}
