//! `fleetc drift` (issue 32, item 1): what runs, compared with what out/ would apply, read-only.
//! A fake talosctl, tofu and kubectl (the recording runner of `apply_support`) answer in the
//! shapes upstream prints, with one drift of each kind; each is reported with the impact the
//! review stage's rules give it, nothing drifted means an empty report (exit 0), and a secret
//! of the running config reaches neither the report, in any of diff's four formats, nor the
//! log, nor a file.
//!
//! The shapes the fakes answer in:
//! * `talosctl get machineconfig v1alpha1 -o yaml`: `node: <address>`, then the resource's
//!   `metadata` and `spec`, the spec being the machine config's YAML as one string
//!   (siderolabs/talos v1.13.9 `cmd/talosctl/cmd/talos/output/yaml.go` l.43-70;
//!   `pkg/machinery/resources/config/machine_config.go` l.21-50: type
//!   `MachineConfigs.config.talos.dev`, id `v1alpha1` the active config, `MarshalYAML`
//!   returning the config's bytes as a string, annotation `talos.dev/yaml-spec`);
//! * `talosctl gen config … --output -`: the config on standard output
//!   (`cmd/talosctl/cmd/mgmt/gen/config.go` l.39, l.330-331, l.354-357);
//! * `tofu plan -detailed-exitcode`: 0 no change, 1 an error, 2 changes (opentofu/opentofu
//!   v1.12.6 `internal/command/plan.go` l.110-119, l.265-269); `tofu show -json` of the plan:
//!   `resource_drift` and `resource_changes`, each with `address`, `type`, `change.actions`
//!   (`internal/command/jsonplan/plan.go` l.62-65, l.85-104);
//! * `kubectl get applications.argoproj.io -o json`: a List whose items carry
//!   `status.sync.status`, `status.health.status` and `status.resources[].status`
//!   (argoproj/argo-cd v3.5.1, the newest tag the mirror holds below the pinned 3.6.3,
//!   `pkg/apis/application/v1alpha1/types.go` l.1213-1219, l.1884-1889, l.1942-1968,
//!   l.2231-2245);
//! * `talosctl version`, `talosctl get extensions`, `kubectl get node`: `apply_support::
//!   running_cluster` (cited there).

use crate::apply_support;

use apply_support::{Fake, Fixture, RunningNode, SECRET_VALUES, has, running_cluster};
use fleetc::apply::{Cmd, DriftOptions, Failure, Output};
use fleetc::review::Review;
use fleetc::review::impact::Severity;

const NODES: [&str; 5] = ["main-cp-1", "main-cp-2", "main-cp-3", "main-system-1", "main-system-2"];
/// A machine secret the running config of `main-cp-2` holds and the sealed bundle does not.
const FOREIGN_SECRET: &str = "clustersecretFOREIGN0042";

/// A node's machine config as the cluster root gives it: the v1alpha1 document with the
/// bundle's secrets (`apply_support::bundle("test")`), then the node's HostnameConfig.
fn config(host: &str, edit: impl Fn(&str) -> String) -> String {
    let text = format!(
        "version: v1alpha1\nmachine:\n    type: controlplane\n    token: trustdtest.0123456789abcdef\n    ca:\n        crt: {crt}\n        key: {key}\n    certSANs:\n        - 10.10.0.10\n    features:\n        rbac: true\n    kubelet:\n        image: ghcr.io/siderolabs/kubelet:v1.36.2\ncluster:\n    secret: clustersecrettestBBBBBBBB\n    token: boottest.0123456789abcdef\n    secretboxEncryptionSecret: secretboxtestCCCCCCCCCCCC\n    clusterName: main\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: {host}\nauto: \"off\"\n",
        crt = apply_support::CRT,
        key = apply_support::KEY,
    );
    edit(&text)
}

/// `talosctl get machineconfig v1alpha1 -o yaml` of `config` on the node at `address`.
fn machineconfig_answer(address: &str, config: &str) -> String {
    let spec: String =
        config.lines().map(|l| if l.is_empty() { "\n".to_owned() } else { format!("    {l}\n") }).collect();
    format!(
        "node: {address}\nmetadata:\n    namespace: config\n    type: MachineConfigs.config.talos.dev\n    id: v1alpha1\n    version: 3\n    owner:\n    phase: running\n    created: 2026-12-05T07:00:00Z\n    updated: 2026-12-05T07:00:00Z\n    annotations:\n        talos.dev/yaml-spec: \"1\"\nspec: |\n{spec}"
    )
}

/// The node a `talosctl gen config` renders, from its own document among the patches.
fn rendered_host(c: &Cmd) -> Option<String> {
    c.args.iter().find_map(|a| {
        let f = a.rsplit('/').next()?;
        f.strip_prefix("patch-talos__staging__main__nodes__")?.strip_suffix(".yaml").map(str::to_owned)
    })
}

/// Models the cluster's configs: out/ renders `config(host)` for every node; each node runs
/// `running(host)`.
fn configs(fake: &Fake, running: impl Fn(&str) -> String + 'static) {
    fake.on_rule(|c| {
        if has(c, "talosctl", &["gen", "--output-types"]) && c.flag("--output") == Some("-") {
            let host = rendered_host(c)?;
            return Some(Output::ok(config(&host, str::to_owned)));
        }
        None
    });
    fake.on_rule(move |c| {
        if !has(c, "talosctl", &["machineconfig"]) {
            return None;
        }
        let address = c.flag("--nodes")?;
        let host = address.strip_prefix('<')?.strip_suffix(".address>")?;
        Some(Output::ok(machineconfig_answer(address, &running(host))))
    });
}

/// Every node at fleet.kdl's versions and schematic, Ready.
fn at_target(fx: &Fixture) -> Vec<RunningNode> {
    let c = fx.target.clusters.iter().find(|c| c.name == "main").unwrap();
    NODES
        .iter()
        .map(|h| {
            let want = c.nodes().find(|n| n.hostname == *h).unwrap();
            RunningNode::new(h, &c.talos.v(), &want.schematic_id, &format!("v{}", c.kubernetes))
        })
        .collect()
}

const APP_SYNCED: &str = r#"{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"root","namespace":"argocd"},
  "status":{"sync":{"status":"Synced","revision":"abc"},"health":{"status":"Healthy"},
  "resources":[{"group":"apps","version":"v1","kind":"Deployment","namespace":"web","name":"web","status":"Synced","health":{"status":"Healthy"}}]}}"#;
const APP_OUT_OF_SYNC: &str = r#"{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"web","namespace":"argocd"},
  "status":{"sync":{"status":"OutOfSync","revision":"abc"},"health":{"status":"Healthy"},
  "resources":[{"group":"apps","version":"v1","kind":"Deployment","namespace":"web","name":"web","status":"OutOfSync","health":{"status":"Healthy"}},
               {"version":"v1","kind":"Service","namespace":"web","name":"web","status":"Synced"}]}}"#;

fn apps(fake: &Fake, items: &[&str]) {
    let list = format!("{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{}]}}", items.join(","));
    fake.on(|c| has(c, "kubectl", &["applications.argoproj.io"]), Output::ok(list));
}

fn run(fx: &Fixture, fake: &Fake) -> (Result<Review, Failure>, Vec<String>) {
    let mut log = Vec::new();
    let mut sink = |l: &str| log.push(l.to_owned());
    let mut runner = fake.clone();
    let opts = DriftOptions { plan: false, identity: Some(fx.identity.clone()) };
    let r = fleetc::apply::drift(&fx.inputs(), None, &opts, &mut runner, &mut sink);
    (r, log)
}

/// The four formats of `fleetc diff`.
fn rendered(review: &Review) -> Vec<String> {
    use fleetc::review::render::{json, markdown, stat, unified};
    vec![
        unified::render(review, false),
        stat::render(review, false),
        markdown::render(review, markdown::DEFAULT_CAP),
        json::render(review),
    ]
}

fn find<'a>(review: &'a Review, needle: &str) -> &'a fleetc::review::Impact {
    review
        .impacts
        .iter()
        .find(|i| i.change.contains(needle))
        .unwrap_or_else(|| panic!("no impact about {needle}:\n{:#?}", review.impacts))
}

#[test]
fn nothing_drifted_is_an_empty_report() {
    let fx = Fixture::new();
    let fake = Fake::new();
    configs(&fake, |h| config(h, str::to_owned));
    apps(&fake, &[APP_SYNCED]);
    running_cluster(&fake, at_target(&fx));
    let (r, log) = run(&fx, &fake);
    let review = r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert!(review.is_empty(), "{:#?}\n{:#?}", review.impacts, review.files);
    assert!(fake.index(&["talosctl", "get", "machineconfig", "v1alpha1", "-o", "yaml"]).is_some());
    assert!(fake.index(&["tofu", "plan", "-detailed-exitcode", "-lock=false"]).is_some());
    assert_eq!(fake.last_switch("talos_api_open"), Some(false), "the switch is closed at the end");
    let (open, _) = fake.by_talos_switch();
    assert!(open.iter().any(|l| l.contains("machineconfig")), "the nodes are read through the open switch");
    assert!(
        !open.iter().any(|l| l.contains("-chdir=") && l.contains("/cloud") && l.contains("plan")),
        "the cloud root is planned with the switch at rest"
    );
    // Read-only: nothing that changes a node, a root or a cluster ran.
    for l in fake.lines() {
        let tofu_write = l.starts_with("tofu ")
            && l.contains(" apply")
            && !l.contains("talos_api_open")
            && !l.contains("kubernetes_api_open");
        assert!(!tofu_write, "{l}");
        for verb in [
            "apply-config",
            "upgrade",
            "reboot",
            "reset",
            "bootstrap",
            "kubectl apply",
            "kubectl patch",
            "kubectl delete",
        ] {
            assert!(!l.contains(&format!(" {verb} ")) && !l.starts_with(verb), "{l}");
        }
    }
}

#[test]
fn one_drift_of_each_kind_is_reported_with_its_impact() {
    let fx = Fixture::new();
    let fake = Fake::new();
    configs(&fake, |h| {
        config(h, |t| match h {
            // live: a certificate SAN added by hand
            "main-cp-1" => t.replace("        - 10.10.0.10\n", "        - 10.10.0.10\n        - 10.10.0.99\n"),
            // identity: another cluster's secret
            "main-cp-2" => t.replace("clustersecrettestBBBBBBBB", FOREIGN_SECRET),
            // reboot: a feature outside what Talos applies live
            "main-system-1" => t.replace("rbac: true", "rbac: false"),
            _ => t.to_owned(),
        })
    });
    apps(&fake, &[APP_SYNCED, APP_OUT_OF_SYNC]);
    let mut nodes = at_target(&fx);
    nodes[4].tag = "v1.12.6".into();
    nodes[2].ready = false;
    running_cluster(&fake, nodes);
    fake.on(
        |c| has(c, "tofu", &["plan", "-detailed-exitcode"]) && c.args.iter().any(|a| a.ends_with("/cloud")),
        Output { code: 2, stdout: Vec::new(), stderr: Vec::new() },
    );
    fake.on(
        |c| has(c, "tofu", &["show", "-json"]) && c.args.iter().any(|a| a.ends_with("/cloud")),
        Output::ok(
            r#"{"format_version":"1.2","resource_drift":[{"address":"scaleway_vpc_public_gateway.main","type":"scaleway_vpc_public_gateway","change":{"actions":["update"],"before":{"bastion_enabled":true},"after":{"bastion_enabled":false}}}],
                "resource_changes":[{"address":"scaleway_instance_server.node[\"main-system-2\"]","type":"scaleway_instance_server","change":{"actions":["delete","create"]}},
                                    {"address":"scaleway_vpc_public_gateway.main","type":"scaleway_vpc_public_gateway","change":{"actions":["update"]}},
                                    {"address":"scaleway_object_bucket.backups","type":"scaleway_object_bucket","change":{"actions":["no-op"]}}]}"#,
        ),
    );
    let (r, log) = run(&fx, &fake);
    let review = r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));

    let live = find(&review, "node `main-cp-1`: Talos field `machine.certSANs` differs from out/");
    assert_eq!((live.severity, live.rule), (Severity::Info, "talos-fields"));
    assert!(live.effect.contains("applied live"), "{live}");
    let reboot = find(&review, "node `main-system-1`: Talos field `machine.features.rbac` differs from out/");
    assert_eq!(reboot.severity, Severity::Warning);
    assert!(reboot.effect.starts_with("reboot:") && reboot.effect.contains("`main-system-1`"), "{reboot}");
    let identity = find(&review, "node `main-cp-2`: secret field `cluster.secret` differs");
    assert_eq!(identity.severity, Severity::Danger);
    assert!(identity.effect.starts_with("identity:"), "{identity}");
    assert!(
        !review.impacts.iter().any(|i| i.change.contains("main-cp-2") && i.rule == "talos-fields"),
        "a redacted secret is no field change: {:#?}",
        review.impacts
    );

    let replace = find(&review, "`scaleway_instance_server.node[\"main-system-2\"]` would be replaced");
    assert!(replace.effect.starts_with("replace:") && replace.subject == "tofu/staging/cloud", "{replace}");
    assert!(replace.severity >= Severity::Warning);
    let outside = find(&review, "`scaleway_vpc_public_gateway.main` changed outside OpenTofu");
    assert!(outside.effect.starts_with("live:"), "{outside}");
    assert!(find(&review, "`scaleway_vpc_public_gateway.main` would be updated in place").effect.starts_with("live:"));
    assert!(!review.impacts.iter().any(|i| i.change.contains("backups")), "a no-op is no drift");

    let app = find(&review, "Argo CD app `web` is OutOfSync: `Deployment` web/web");
    assert_eq!((app.severity, app.rule), (Severity::Warning, "apps"));
    assert!(!app.change.contains("Service"), "only the objects out of sync: {app}");
    assert!(!review.impacts.iter().any(|i| i.change.contains("app `root`")), "a Synced, Healthy app is no drift");

    let talos = find(&review, "node `main-system-2` runs Talos v1.12.6, fleet.kdl pins v1.13.9");
    assert!(talos.effect.contains("`fleetc upgrade staging/main` upgrades it, rebooting the node"), "{talos}");
    let quorum = find(&review, "node `main-cp-3` is not Ready");
    assert_eq!(quorum.severity, Severity::Danger);
    assert!(quorum.effect.starts_with("quorum:"), "{quorum}");

    assert_eq!(review.impacts[0].severity, Severity::Danger, "the most severe first");
    assert!(!review.is_empty(), "drift: exit 1");
    let files: Vec<&str> = review.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        files,
        ["running/staging/main/main-cp-1.machineconfig.yaml", "running/staging/main/main-system-1.machineconfig.yaml"]
    );
    let unified = &rendered(&review)[0];
    assert!(
        unified.contains("+        - 10.10.0.10")
            || unified.contains("-  - 10.10.0.99")
            || unified.contains("10.10.0.99"),
        "{unified}"
    );
    assert_eq!(fake.last_switch("talos_api_open"), Some(false));
}

#[test]
fn a_secret_of_the_running_config_appears_nowhere() {
    let fx = Fixture::new();
    let fake = Fake::new();
    // main-cp-2 runs another cluster's secret and a field changed by hand: its config shows in
    // the report's files, redacted.
    configs(&fake, |h| {
        config(h, |t| {
            if h == "main-cp-2" {
                t.replace("clustersecrettestBBBBBBBB", FOREIGN_SECRET).replace("rbac: true", "rbac: false")
            } else {
                t.to_owned()
            }
        })
    });
    apps(&fake, &[APP_SYNCED]);
    running_cluster(&fake, at_target(&fx));
    let (r, log) = run(&fx, &fake);
    let review = r.unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert!(!review.is_empty());
    let secrets: Vec<&str> = SECRET_VALUES
        .iter()
        .copied()
        .chain([FOREIGN_SECRET, "trustdtest.0123456789abcdef", apply_support::KEY])
        .collect();
    let texts: Vec<String> = rendered(&review).into_iter().chain(std::iter::once(log.join("\n"))).collect();
    for text in &texts {
        for s in &secrets {
            assert!(!text.contains(s), "{s} in:\n{text}");
        }
    }
    assert!(texts[0].contains("token: (redacted)"), "the report shows where a secret was: {}", texts[0]);
    assert!(texts[3].contains("(redacted)"), "json too");
    // On disk: nothing under the fleet's directory holds one (the sealed inputs are age
    // files), and the private directory the run used is gone.
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() { walk(&p, out) } else { out.push(p) }
        }
    }
    let mut files = Vec::new();
    walk(fx.dir.path(), &mut files);
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for s in &secrets {
            assert!(!text.contains(s), "{s} in {}", f.display());
        }
    }
    let tc = fake.calls.borrow().iter().find_map(|c| c.flag("--talosconfig").map(str::to_owned)).unwrap();
    let private = std::path::Path::new(&tc).parent().unwrap().to_owned();
    assert!(!private.exists(), "{} removed", private.display());
}
