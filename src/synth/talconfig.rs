//! A talconfig.yaml for talhelper (github.com/budimanjojo/talhelper, v3.1.16) that describes
//! the same cluster as fleetc's build of it: the benchmark's peer (docs/performance.md,
//! "talhelper side by side").
//!
//! Everything comes from the model ([`ClusterTarget`]: names, versions, nodes, installers)
//! and from the Talos documents of the build in out/ ([`paths`]), which talhelper applies
//! as its own patches in fleetc's order: the cluster's `common.yaml` (talhelper's
//! cluster-wide `patches`), then per node its role's document (`controlplane.yaml` or
//! `workers/<pool>.yaml`), its own `nodes/<host>.yaml` and the pool's user patches (a
//! node's `patches`, applied after the cluster's: talhelper v3.1.16 `pkg/generate/config.go`).
//! The schematic is the one out/ holds (`schematics/<name>.yaml`), as talhelper's
//! `schematic`, from which `--offline-mode` computes the ID itself; the installer template
//! is fleetc's platform installer (`scaleway-installer/…`) with talhelper's placeholders.
//!
//! The text is JSON, which is YAML (talhelper reads it with gopkg.in/yaml.v3).

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::apply::target::{ClusterTarget, ImageTarget};
use crate::layout::paths;
use crate::model::Role;

/// The talconfig of cluster `c` of environment `env`, whose build is `out_dir` (absolute:
/// patches are `@<path>` file references). Nodes get synthetic addresses (talhelper asks one
/// per node for the talosconfig's endpoints; fleetc leaves them to the cloud's inventory).
pub fn talconfig(env: &str, c: &ClusterTarget, images: &[ImageTarget], out_dir: &Path) -> String {
    let dir = paths::talos_dir(env, &c.name);
    let existing = |rel: &str| -> Option<String> {
        let p = out_dir.join(rel);
        p.is_file().then(|| format!("@{}", p.display()))
    };
    let user_patches = |cp: bool, pool: &str| -> Vec<String> {
        let rel = paths::pool_patch_dir(env, &c.name, cp, pool);
        let mut files: Vec<String> = std::fs::read_dir(out_dir.join(&rel))
            .map(|rd| rd.flatten().filter(|e| e.path().is_file()).map(|e| format!("@{}", e.path().display())).collect())
            .unwrap_or_default();
        files.sort();
        files
    };
    let schematic = |id: &str| -> Value {
        let Some(img) = images.iter().find(|i| i.schematic_id == id) else { return Value::Null };
        let text = std::fs::read_to_string(out_dir.join(paths::schematic_file(&img.schematic))).unwrap_or_default();
        serde_saphyr::from_str::<Value>(&text).unwrap_or(Value::Null)
    };
    let mut nodes = Vec::new();
    for (i, n) in c.nodes().enumerate() {
        let cp = n.role == Role::ControlPlane;
        let mut patches: Vec<String> = Vec::new();
        let candidates = paths::node_patch_candidates(env, &c.name, cp, &n.pool, &n.hostname);
        // common.yaml is the cluster-wide patch; the role's and the node's follow here.
        patches.extend(candidates[1..].iter().filter_map(|p| existing(p)));
        patches.extend(user_patches(cp, &n.pool));
        let mut node = Map::new();
        node.insert("hostname".into(), json!(n.hostname));
        node.insert("ipAddress".into(), json!(format!("10.250.{}.{}", i / 250, i % 250 + 1)));
        node.insert("controlPlane".into(), json!(cp));
        // talhelper requires an install disk; fleetc's role document selects one
        // (`diskSelector`), which Talos prefers when both are set.
        node.insert("installDisk".into(), json!("/dev/sda"));
        // fleetc's HostnameConfig document names the node.
        node.insert("ignoreHostname".into(), json!(true));
        let s = schematic(&n.schematic_id);
        if !s.is_null() {
            node.insert("schematic".into(), s);
        }
        node.insert("patches".into(), json!(patches));
        nodes.push(Value::Object(node));
    }
    let installer = c.nodes().next().map(|n| n.installer.clone()).unwrap_or_default();
    let version = format!("v{}", c.talos);
    // factory.talos.dev/scaleway-installer/<id>:v1.13.9 → {{.RegistryURL}}/scaleway-installer/{{.ID}}:{{.Version}}
    let (registry, tmpl) = match installer.split_once('/') {
        Some((registry, rest)) => {
            let id = c.nodes().next().map(|n| n.schematic_id.as_str()).unwrap_or_default();
            let rest = rest.replacen(id, "{{.ID}}", 1).replacen(&format!(":{version}"), ":{{.Version}}", 1);
            (registry.to_owned(), format!("{{{{.RegistryURL}}}}/{rest}"))
        }
        None => (String::new(), String::new()),
    };
    let mut root = Map::new();
    root.insert("clusterName".into(), json!(c.name));
    root.insert("talosVersion".into(), json!(version));
    root.insert("kubernetesVersion".into(), json!(format!("v{}", c.kubernetes)));
    root.insert("endpoint".into(), json!(c.endpoint_url));
    if !registry.is_empty() {
        root.insert("imageFactory".into(), json!({ "registryURL": registry, "installerURLTmpl": tmpl }));
    }
    root.insert("patches".into(), json!(existing(&format!("{dir}/common.yaml")).into_iter().collect::<Vec<_>>()));
    root.insert("nodes".into(), Value::Array(nodes));
    let mut text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
    text.push('\n');
    text
}
