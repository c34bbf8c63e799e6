//! The first hour with fleetc (issue 15): what a newcomer meets outside the diagnostics
//! goldens. `cni "none"` builds a cluster Talos gives no CNI; `explain` knows rules as well as
//! codes; a run outside a fleet directory says where to go; `--format short` keeps the help;
//! `--diagnostics-format` is accepted by every command.

#![allow(clippy::disallowed_methods)] // tests run the real binary

use crate::common;

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
    let dir = common::root().join("golden/model-unknown-property");
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
}

/// Whether `shell` runs here. When it does not, the test says so on stderr and returns (as
/// the `git` tests do), except under `CI=true`, where a missing shell fails it.
fn shell_available(shell: &str) -> bool {
    let found = Command::new(shell).arg("-c").arg("exit 0").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var("CI").map(|v| v != "true").unwrap_or(true), "CI=true but `{shell}` is missing");
        eprintln!("skipped: `{shell}` is not installed, so its completion script was neither parsed nor run");
    }
    found
}

fn starter_with_completion(shell: &str, file: &str) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let o = fleetc(tmp.path(), &["init", "--platform", "proxmox"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let script = fleetc(tmp.path(), &["completions", shell]);
    assert_eq!(script.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&script.stdout).contains("fleetc __targets"), "{shell}");
    fs::write(tmp.path().join(file), &script.stdout).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_fleetc")).parent().unwrap().display().to_string();
    (tmp, format!("{bin}:{}", std::env::var("PATH").unwrap_or_default()))
}

/// zsh: the script passes `zsh -n`, loads after `compinit`, and its function offers the
/// fleet's names (`compadd` is replaced by a function that prints what it is given: outside a
/// completion widget the builtin refuses to run).
#[test]
fn zsh_completion_parses_and_knows_the_fleets_environments_and_clusters() {
    if !shell_available("zsh") {
        return;
    }
    let (tmp, path) = starter_with_completion("zsh", "c.zsh");
    let o = Command::new("zsh").args(["-n", "c.zsh"]).current_dir(tmp.path()).output().unwrap();
    assert!(o.status.success(), "zsh -n: {}", String::from_utf8_lossy(&o.stderr));
    let probe = "autoload -U compinit; compinit -u -D; source ./c.zsh\n\
        compadd() { [[ $1 == -a ]] && print -r -- \"${(@P)2}\" }\n\
        words=(fleetc apply ''); CURRENT=3; print -n 'apply: '; _fleetc_fleet_names\n\
        words=(fleetc upgrade-plan ''); CURRENT=3; print -n 'upgrade-plan: '; _fleetc_fleet_names\n\
        words=(fleetc secrets import ''); CURRENT=4; print -n 'secrets: '; _fleetc_fleet_names\n";
    let o = Command::new("zsh").arg("-c").arg(probe).env("PATH", path).current_dir(tmp.path()).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("apply: home\n")
            && out.contains("upgrade-plan: home/main\n")
            && out.contains("secrets: home/main\n"),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// fish: the script passes `fish --no-execute`, and fish's own `complete -C` (what a TAB
/// asks) offers the fleet's names and still the subcommands.
#[test]
fn fish_completion_parses_and_knows_the_fleets_environments_and_clusters() {
    if !shell_available("fish") {
        return;
    }
    let (tmp, path) = starter_with_completion("fish", "c.fish");
    let o = Command::new("fish").args(["--no-execute", "c.fish"]).current_dir(tmp.path()).output().unwrap();
    assert!(o.status.success(), "fish --no-execute: {}", String::from_utf8_lossy(&o.stderr));
    let ask = |line: &str| {
        let o = Command::new("fish")
            .arg("-c")
            .arg(format!("source c.fish; complete -C '{line}'"))
            .env("PATH", &path)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(ask("fleetc apply "), "home\n");
    assert_eq!(ask("fleetc upgrade-plan "), "home/main\n");
    assert_eq!(ask("fleetc secrets import "), "home/main\n");
    assert!(ask("fleetc ap").starts_with("apply\t"), "clap's subcommands stay");
}
