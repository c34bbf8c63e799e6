//! The real `fleetc apply` against fake tools (one POSIX shell script linked as tofu,
//! talosctl, kubectl, curl, scw, qemu-img and ssh). Each call appends its argv to `calls`, dumps
//! its environment to `env.<n>.<tool>`, tracks the switches the cloud root's applies set
//! (`talos`, `kubernetes`: the state a real gateway would be in), answers like the real tool
//! on the happy path, and at call number `FAULT_AT` does `FAULT_MODE`: `hang` (sleeps for
//! ever), `fail` (exit 1), or a signal name (`INT`, `TERM`, `HUP`) sent to fleetc — as a
//! terminal's Ctrl-C, a `kill` or a lost terminal would — after which it keeps running
//! until fleetc forwards the signal (a closing command, which fleetc does not interrupt,
//! finishes normally).
//!
//! The fakes read their settings from the file `conf` beside them, not from the
//! environment: fleetc hands children only its allow-list.
#![allow(dead_code, clippy::disallowed_methods)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::apply_support;
pub use apply_support::{Fixture, SECRET_VALUES};

pub const TOOLS: [&str; 7] = ["tofu", "talosctl", "kubectl", "curl", "scw", "qemu-img", "ssh"];

const FAKE: &str = r#"#!/bin/sh
D=$(dirname "$0"); T=$(basename "$0")
. "$D/conf"
n=$(( $(cat "$D/count" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$D/count"
printf '%s\n' "$T $*" >> "$D/calls"
env > "$D/env.$n.$T"
case "$T $*" in
  "tofu "*cloud*" apply "*talos_api_open=true*) echo open > "$D/talos" ;;
  "tofu "*cloud*" apply "*talos_api_open=false*) echo closed > "$D/talos"; echo closed > "$D/tunnel" ;;
esac
case "$T $*" in
  "tofu "*cloud*" apply "*kubernetes_api_open=true*) echo open > "$D/kubernetes" ;;
  "tofu "*cloud*" apply "*kubernetes_api_open=false*) echo closed > "$D/kubernetes" ;;
esac
if [ "$n" = "${FAULT_AT:-0}" ]; then
  case "$FAULT_MODE" in
    hang) exec sleep 100000 ;;
    fail) echo "Error: injected failure" >&2; exit 1 ;;
    INT|TERM|HUP) kill -s "$FAULT_MODE" "$PPID"; sleep 2 ;;
  esac
fi
arg() { for a in "$@"; do case "$a" in "$P"*) echo "${a#"$P"}"; return ;; esac; done; }
val() { prev=; for a in "$@"; do if [ "$prev" = "$F" ]; then echo "$a"; fi; prev=$a; done; }
if [ "${NET:-}" = model ]; then
  # What each switch makes reachable: the Talos API only while its switch is open, the
  # Kubernetes API only while the operator's path is.
  case "$T $*" in
    "talosctl gen "*) ;;
    talosctl*) [ "$(cat "$D/talos" 2>/dev/null)" = open ] && [ "$(cat "$D/tunnel" 2>/dev/null)" = open ] || { echo "error: dial tcp 127.0.0.1: connection refused (the Talos API switch or its tunnel is closed)" >&2; exit 1; } ;;
    kubectl*) [ "$(cat "$D/kubernetes" 2>/dev/null)" = open ] || { echo "error: the server could not be reached (the Kubernetes API path is closed)" >&2; exit 1; } ;;
  esac
  case "$T $*" in
    "talosctl "*" health "*)
      # talosctl health compares the nodes it is given with the nodes that joined
      # (K8sAllNodesReportedAssertion): here, the nodes whose config was applied.
      F=--control-plane-nodes; cps=$(val "$@"); F=--worker-nodes; ws=$(val "$@")
      want=$(echo "$cps,$ws" | tr ',' '\n' | grep . | sort -u | tr '\n' ' ')
      have=$(sort -u "$D/applied" 2>/dev/null | tr '\n' ' ')
      [ "$want" = "$have" ] || { echo "error: nodes expected [$want], joined [$have]" >&2; exit 1; } ;;
  esac
fi
case "$T" in
  scw)
    case "$*" in
      "vpc-gw ip list"*) echo "[{\"id\":\"11111111-0000-0000-0000-00000000000a\",\"address\":\"$GATEWAY\",\"zone\":\"fr-par-2\"}]" ;;
      "instance image list"*) P=name=; name=$(arg "$@"); echo "[{\"name\":\"$name\",\"id\":\"img-1\",\"state\":\"available\"}]" ;;
      *) echo '{}' ;;
    esac ;;
  curl)
    P=@; f=$(arg "$@")
    if [ -n "$f" ]; then echo "{\"id\":\"$(sha256sum "$f" | cut -d' ' -f1)\"}"; fi ;;
  tofu)
    case "$*" in
      *" output -json clusters"*) cat "$D/inventory.json" ;;
      *" output -json talos_bastion"*) cat "$D/bastion.json" ;;
      *" state list"*) cat "$D/state" 2>/dev/null ;;
    esac
    P=-out=; out=$(arg "$@"); if [ -n "$out" ]; then echo plan > "$out"; fi
    case "$*" in *"cluster apply"*main-cp-1*) echo "module.main.talos_machine_bootstrap.this" >> "$D/state" ;; esac
    case "$*" in
      *"cluster apply"*.tfplan*)
        while read -r plan addrs; do
          case "$*" in *"/$plan"*) for a in $addrs; do echo "$a" >> "$D/applied"; done ;; esac
        done < "$D/plans"
        # A real apply records what it created in the state, which the next run lists.
        while read -r plan res; do
          case "$*" in *"/$plan"*) for r in $res; do echo "$r" >> "$D/state"; done ;; esac
        done < "$D/plan-states" ;;
    esac ;;
  talosctl)
    P=; prev=
    for a in "$@"; do
      if [ "$prev" = "--output" ] || [ "$prev" = "kubeconfig" ]; then echo generated > "$a"; fi
      prev=$a
    done ;;
  kubectl)
    case "$*" in *" -f -"*) cat > /dev/null ;; esac ;;
  ssh)
    # The gateway's SSH bastion exists only while the Talos API switch is open; closing the
    # switch ends the tunnel.
    case "$*" in
      *" -O exit "*) echo closed > "$D/tunnel" ;;
      *" -M "*) [ "$(cat "$D/talos" 2>/dev/null)" = open ] || { echo "ssh: connect to host $GATEWAY port 61000: Connection refused" >&2; exit 255; }
        echo open > "$D/tunnel" ;;
    esac ;;
esac
exit 0
"#;

/// One child's environment: `(call number, tool, variables)`.
pub type ChildEnv = (usize, String, Vec<(String, String)>);

/// A run's fake tools and their records.
pub struct Fakes {
    pub dir: PathBuf,
}

impl Fakes {
    pub fn new(parent: &Path, fx: &Fixture) -> Fakes {
        let dir = parent.join("fakebin");
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("fake.sh");
        std::fs::write(&script, FAKE).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        for t in TOOLS {
            std::os::unix::fs::symlink("fake.sh", dir.join(t)).unwrap();
        }
        std::fs::write(dir.join("inventory.json"), inventory(fx)).unwrap();
        let bastion = serde_json::json!({"address": "51.15.200.10", "port": 61000, "enabled": true, "allowed_ip_ranges": fx.target.admin_ranges});
        std::fs::write(dir.join("bastion.json"), bastion.to_string()).unwrap();
        std::fs::write(dir.join("plans"), plans(fx)).unwrap();
        std::fs::write(dir.join("plan-states"), plan_states(fx)).unwrap();
        let f = Fakes { dir };
        f.reset(None);
        f
    }

    /// Clears the records and the modelled world; `fault` = (call number, mode).
    pub fn reset(&self, fault: Option<(usize, &str)>) {
        self.reset_world(true);
        self.set(fault, false);
    }

    /// Clears the records; with `world`, also the switches, the state and the applied nodes.
    pub fn reset_world(&self, world: bool) {
        for e in std::fs::read_dir(&self.dir).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let record = n.starts_with("env.") || ["calls", "count"].contains(&n.as_str());
            let modelled = ["talos", "tunnel", "kubernetes", "state", "applied"].contains(&n.as_str());
            if record || (world && modelled) {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
    }

    /// The fault for the next run, and whether the network is modelled (`NET=model`).
    pub fn set(&self, fault: Option<(usize, &str)>, net: bool) {
        let (at, mode) = fault.unwrap_or((0, ""));
        let net = if net { "model" } else { "" };
        std::fs::write(
            self.dir.join("conf"),
            format!("GATEWAY=51.15.200.10\nFAULT_AT={at}\nFAULT_MODE={mode}\nNET={net}\n"),
        )
        .unwrap();
    }

    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("calls")).unwrap_or_default().lines().map(str::to_owned).collect()
    }

    /// `(call number, tool, environment)` of every call.
    pub fn envs(&self) -> Vec<ChildEnv> {
        let mut v: Vec<_> = std::fs::read_dir(&self.dir)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let rest = name.strip_prefix("env.")?;
                let (n, tool) = rest.split_once('.')?;
                let text = std::fs::read_to_string(e.path()).ok()?;
                let vars =
                    text.lines().filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned()))).collect();
                Some((n.parse().ok()?, tool.to_owned(), vars))
            })
            .collect();
        v.sort_by_key(|(n, _, _)| *n);
        v
    }

    /// The switches' last state (`true`: open).
    pub fn open(&self, which: &str) -> bool {
        std::fs::read_to_string(self.dir.join(which)).is_ok_and(|s| s.trim() == "open")
    }

    /// The call numbers (1-based) from each switch's opening to its closing, inclusive.
    pub fn window_calls(&self) -> Vec<usize> {
        let mut open = false;
        let mut v = Vec::new();
        for (i, c) in self.calls().iter().enumerate() {
            let cloud_apply = c.starts_with("tofu ") && c.contains("/cloud apply") && c.contains("-auto-approve");
            if cloud_apply && (c.contains("talos_api_open=true") || c.contains("kubernetes_api_open=true")) {
                open = true;
            }
            if open {
                v.push(i + 1);
            }
            if cloud_apply && c.contains("talos_api_open=false") && c.contains("kubernetes_api_open=false") {
                open = false;
            }
        }
        v
    }
}

/// The cloud root's `clusters` output for the fixture's clusters.
fn inventory(fx: &Fixture) -> String {
    let mut m = serde_json::Map::new();
    for (ci, c) in fx.target.clusters.iter().filter(|c| !c.managed).enumerate() {
        let node = |i: usize, h: &str| serde_json::json!({"hostname": h, "address": format!("10.{ci}.0.{}", 10 + i), "talos_endpoint": format!("127.0.0.1:{}", 50000 + i)});
        let cps: Vec<_> = c.control_plane.iter().enumerate().map(|(i, n)| node(i, &n.hostname)).collect();
        let workers: serde_json::Map<String, serde_json::Value> =
            c.workers.iter().enumerate().map(|(i, n)| (n.hostname.clone(), node(100 + i, &n.hostname))).collect();
        m.insert(
            c.name.clone(),
            serde_json::json!({"control_plane": cps, "workers": workers, "kubernetes_api": "51.15.200.10:6443"}),
        );
    }
    serde_json::Value::Object(m).to_string()
}

/// The node addresses each targeted plan of the cluster root configures (the fake adds them
/// to `applied` when the plan is applied): `<cluster>-cp-<i>.tfplan` and
/// `<cluster>-<hostname>.tfplan` its node (control plane and workers, one at a time), `cluster-rest.tfplan` every node.
fn plans(fx: &Fixture) -> String {
    let mut out = String::new();
    for (ci, c) in fx.target.clusters.iter().filter(|c| !c.managed).enumerate() {
        let mut all = Vec::new();
        for (i, n) in c.control_plane.iter().enumerate() {
            let a = format!("10.{ci}.0.{}", 10 + i);
            out.push_str(&format!("{}.tfplan {a}\n", n.hostname));
            all.push(a);
        }
        for (i, n) in c.workers.iter().enumerate() {
            let a = format!("10.{ci}.0.{}", 110 + i);
            out.push_str(&format!("{}-{}.tfplan {a}\n", c.name, n.hostname));
            all.push(a);
        }
        out.push_str(&format!("cluster-rest.tfplan {}\n", all.join(" ")));
    }
    out
}

/// The state address each targeted plan of the cluster root creates (`tofu state list` of the
/// next run lists it): the node's `talos_machine_configuration_apply`, as fleetc reads it
/// (`layout::names::control_plane_target`, `worker_target`).
fn plan_states(fx: &Fixture) -> String {
    use fleetc::layout::names::{control_plane_target, worker_target};
    let mut out = String::new();
    for c in fx.target.clusters.iter().filter(|c| !c.managed) {
        let mut all = Vec::new();
        for (i, n) in c.control_plane.iter().enumerate() {
            let t = control_plane_target(&c.name, i + 1);
            out.push_str(&format!("{}.tfplan {t}\n", n.hostname));
            all.push(t);
        }
        for n in &c.workers {
            let t = worker_target(&c.name, &n.hostname);
            out.push_str(&format!("{}-{}.tfplan {t}\n", c.name, n.hostname));
            all.push(t);
        }
        out.push_str(&format!("cluster-rest.tfplan {}\n", all.join(" ")));
    }
    out
}

/// What one real run did.
pub struct Run {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stderr: String,
    /// Private directories left in the run's TMPDIR.
    pub private_left: usize,
}

/// Runs `fleetc apply staging --yes` in the fixture with the fakes first on PATH, a fresh
/// TMPDIR, the fixture's credentials plus ambient variables no child may see, and `extra`.
pub fn apply(fx: &Fixture, fakes: &Fakes, tmp: &Path, extra: &[(&str, &str)]) -> Run {
    use std::os::unix::process::ExitStatusExt;
    let _ = std::fs::remove_dir_all(tmp);
    std::fs::create_dir_all(tmp).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_fleetc"));
    c.current_dir(&fx.root)
        .args(["--color", "never", "apply", "staging", "--yes", "--identity"])
        .arg(&fx.identity)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", fakes.dir.display()))
        .env("HOME", tmp)
        .env("TMPDIR", tmp)
        .env("GITHUB_TOKEN", "ambient-token-value-77")
        .env("FLEETC_AGE_IDENTITY", &fx.identity)
        .stdin(std::process::Stdio::null());
    for (k, v) in &fx.env {
        if k != "PATH" {
            c.env(k, v);
        }
    }
    for (k, v) in extra {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let private_left = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("fleetc-private-"))
        .count();
    Run {
        code: o.status.code(),
        signal: o.status.signal(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        private_left,
    }
}
