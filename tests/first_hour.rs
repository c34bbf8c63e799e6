//! The first hour with fleetc (issue 15): what a newcomer meets outside the diagnostics
//! goldens. `cni "none"` builds a cluster Talos gives no CNI; `explain` knows rules as well as
//! codes; a run outside a fleet directory says where to go; `--format short` keeps the help;
//! `--diagnostics-format` is accepted by every command.

#![allow(clippy::disallowed_methods)] // tests run the real binary

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn fleetc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fleetc")).args(args).current_dir(dir).env("NO_COLOR", "1").output().unwrap()
}

fn all(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn cni_none_gives_talos_cni_none_and_keeps_kube_proxy() {
    let starter = fleetc::init::PROXMOX_STARTER.replace("    cni \"default\"\n", "    cni \"none\"\n");
    assert_ne!(starter, fleetc::init::PROXMOX_STARTER);
    let tmp = tempfile::tempdir().unwrap();
    for (rel, content) in fleetc::init::files(fleetc::init::Platform::Proxmox) {
        let p = tmp.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, if rel == "fleet.kdl" { starter.as_str() } else { content }).unwrap();
    }
    let c = common::compile_file(&tmp.path().join("fleet.kdl"));
    let text = fleetc::diag::render::text(&c.diags, &c.sources, fleetc::diag::render::Style::PLAIN);
    assert!(!c.diags.has_errors(), "{text}");
    let set = c.artifacts.unwrap();
    let common = String::from_utf8(set.get("talos/home/main/common.yaml").unwrap().to_vec()).unwrap();
    assert!(common.contains("cni:\n      name: none"), "{common}");
    let cp = String::from_utf8(set.get("talos/home/main/controlplane.yaml").unwrap().to_vec()).unwrap();
    assert!(!cp.contains("proxy:\n      disabled: true"), "kube-proxy stays: {cp}");
}

#[test]
fn explain_knows_rules_and_facts() {
    let o = fleetc(Path::new("."), &["explain", "R29"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(all(&o).contains("odd number") && all(&o).contains("fleet::quorum::even-control-plane"), "{}", all(&o));
    let o = fleetc(Path::new("."), &["explain", "f12"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let o = fleetc(Path::new("."), &["explain", "R99"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(all(&o).contains("docs/rules.md"), "{}", all(&o));
}

#[test]
fn outside_a_fleet_directory_the_error_says_where_to_go() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("fleet.kdl"), fleetc::init::STARTER).unwrap();
    let sub = tmp.path().join("a/b");
    fs::create_dir_all(&sub).unwrap();
    let o = fleetc(&sub, &["check"]);
    assert_eq!(o.status.code(), Some(2));
    let err = all(&o);
    assert!(err.contains("hint:") && err.contains("--fleet") && err.contains("fleetc init"), "{err}");
    assert!(err.contains(&tmp.path().join("fleet.kdl").display().to_string()), "the nearest fleet.kdl above: {err}");
}

#[test]
fn short_diagnostics_keep_the_help_and_the_global_format_is_accepted_everywhere() {
    let dir = common::root().join("golden/first-misspelt-count");
    let o = fleetc(&dir, &["check", "--format", "short"]);
    let err = all(&o);
    assert!(err.contains("error[fleet::model::unknown-property]"), "{err}");
    assert!(err.contains("fleet.kdl:21:27: help: did you mean `count`?"), "{err}");
    let o = fleetc(&dir, &["--diagnostics-format", "short", "check"]);
    assert_eq!(all(&o), err, "the global option is the same choice");
    let o = fleetc(&dir, &["graph", "--diagnostics-format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(all(&o).contains("\"code\": \"fleet::model::unknown-property\""), "{}", all(&o));
}

/// The bash completion offers the fleet's environments after `apply` and `<env>/<cluster>`
/// after `upgrade-plan` and `secrets import`, from the fleet.kdl of the current directory.
#[test]
fn bash_completion_knows_the_fleets_environments_and_clusters() {
    let tmp = tempfile::tempdir().unwrap();
    let o = fleetc(tmp.path(), &["init", "--platform", "proxmox"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let script = fleetc(tmp.path(), &["completions", "bash"]);
    fs::write(tmp.path().join("c.bash"), &script.stdout).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_fleetc")).parent().unwrap().display().to_string();
    let probe = format!(
        "source ./c.bash\nPATH={bin}:$PATH\n\
         COMP_WORDS=(fleetc apply ''); COMP_CWORD=2; _fleetc_fleet_names; echo \"apply: ${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(fleetc upgrade-plan h); COMP_CWORD=2; _fleetc_fleet_names; echo \"upgrade-plan: ${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(fleetc secrets import ''); COMP_CWORD=3; _fleetc_fleet_names; echo \"secrets: ${{COMPREPLY[*]}}\"\n"
    );
    let o = Command::new("bash").arg("-c").arg(probe).current_dir(tmp.path()).output().expect("bash runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("apply: home\n"), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("upgrade-plan: home/main\n") && out.contains("secrets: home/main\n"), "{out}");
    for shell in ["zsh", "fish"] {
        let o = fleetc(tmp.path(), &["completions", shell]);
        assert!(String::from_utf8_lossy(&o.stdout).contains("__targets"), "{shell}");
    }
}
