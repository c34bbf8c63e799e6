//! Issue 19, item 1 (the audit's defect 15): inputs that are not regular files, and links
//! out of the fleet. A FIFO given as `--fleet` or planted as a vendored file blocked
//! `fleetc check` for ever (the open waits for a writer); an app `path=` that is a link to
//! /etc was accepted because `exists` did not resolve links. The real binary, with a
//! watchdog: a run still going after 60 s is killed and counted as a hang.
#![cfg(unix)]
#![allow(clippy::disallowed_methods)] // runs the real binary

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

fn fleet_copy(dir: &Path) {
    let root = common::root();
    std::fs::copy(root.join("fleet.kdl"), dir.join("fleet.kdl")).unwrap();
    for d in ["vendor", "values", "apps"] {
        copy_dir(&root.join(d), &dir.join(d));
    }
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo(3) touches no memory of ours.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo {}", p.display());
}

/// `(exit code, stderr)`, or `None` when the run had to be killed.
fn check(dir: &Path, fleet: &str) -> Option<(i32, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fleetc"))
        .current_dir(dir)
        .args(["--color", "never", "check", "--fleet", fleet])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            return Some((status.code().unwrap_or(-1), err));
        }
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_fifo_as_the_fleet_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    mkfifo(&tmp.path().join("fleet.kdl"));
    let (code, err) = check(tmp.path(), "fleet.kdl").expect("check blocked on a FIFO");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn a_fifo_as_a_vendored_file_is_a_diagnostic_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    fleet_copy(tmp.path());
    let v = tmp.path().join("vendor/cilium-1.20.2.yaml");
    std::fs::remove_file(&v).unwrap();
    mkfifo(&v);
    let (code, err) = check(tmp.path(), "fleet.kdl").expect("check blocked on a vendored FIFO");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("fleet::model::file-unreadable") && err.contains("not a regular file"), "{err}");
}

#[test]
fn an_app_path_linked_out_of_the_fleet_is_not_found() {
    let tmp = tempfile::tempdir().unwrap();
    fleet_copy(tmp.path());
    let app = tmp.path().join("apps/platform");
    std::fs::remove_dir_all(&app).unwrap();
    std::os::unix::fs::symlink("/etc", &app).unwrap();
    let (_, err) = check(tmp.path(), "fleet.kdl").expect("check hung");
    assert!(err.contains("fleet::argocd::path-missing") && err.contains("apps/platform"), "{err}");
}
