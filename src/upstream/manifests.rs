//! Reading vendored add-on manifests, without changing a byte of them: the objects they hold,
//! whether the CNI add-on replaces kube-proxy through KubePrism (F12), the cloud controller
//! managers they run, and whether any object carries key material or a credential (R20, F11;
//! private keys as [`super::key_material`] recognizes them everywhere). Pure functions of the
//! manifest text, what fleetc knows of the Cilium chart's and the controllers' upstreams,
//! shared by `emit::talos` (which embeds the manifests) and `check::talos` (which refuses the
//! bad ones).

use serde_json::Value;

use super::key_material::{self, Key};
use crate::model::Addon;

/// The port KubePrism listens on, on every node (`localhost:7445`).
pub const KUBEPRISM_PORT: u16 = 7445;

/// The Kubernetes objects of a multi-document manifest, in order (empty documents skipped).
pub fn objects(content: &str) -> Result<Vec<Value>, String> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(content).map_err(|e| e.to_string())?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// `Kind namespace/name` (or `Kind name`) of an object, for messages.
pub fn describe(object: &Value) -> String {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("?").to_owned();
    let kind = s(object.get("kind"));
    let meta = object.get("metadata");
    let name = s(meta.and_then(|m| m.get("name")));
    match meta.and_then(|m| m.get("namespace")).and_then(Value::as_str) {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// What fleetc decided about kube-proxy for a cluster, and why (F12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KubeProxy {
    /// No CNI add-on: Talos deploys its default CNI and kube-proxy; fleetc says nothing.
    TalosDefault,
    /// The CNI add-on does not replace kube-proxy through KubePrism: kube-proxy stays.
    /// `intended`: the manifest does turn kube-proxy replacement on (but not through
    /// KubePrism), so the user probably meant to disable kube-proxy.
    Kept { reason: String, intended: bool },
    /// The CNI add-on replaces kube-proxy and reaches the API through KubePrism.
    Replaced,
}

impl KubeProxy {
    pub fn disabled(&self) -> bool {
        matches!(self, KubeProxy::Replaced)
    }
}

fn config_value(data: &Value, key: &str) -> Option<String> {
    match data.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The object of `kind` named `name` in a manifest.
fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects.iter().find(|o| {
        o.get("kind").and_then(Value::as_str) == Some(kind)
            && o.pointer("/metadata/name").and_then(Value::as_str) == Some(name)
    })
}

/// Where one Cilium component reaches the Kubernetes API, as its client decides it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ApiEndpoint {
    /// `host` and `port` (either may be unknown when only one is given).
    At { host: Option<String>, port: Option<String> },
    /// Something fleetc cannot resolve from the manifest alone (a kubeconfig file, an env
    /// value taken from another object), in words.
    Unresolved(String),
}

impl ApiEndpoint {
    fn is_kubeprism(&self) -> bool {
        match self {
            ApiEndpoint::At { host, port } => {
                matches!(host.as_deref(), Some("localhost" | "127.0.0.1"))
                    && port.as_deref() == Some(&KUBEPRISM_PORT.to_string())
            }
            ApiEndpoint::Unresolved(_) => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            ApiEndpoint::At { host, port } => {
                format!("`{}:{}`", host.as_deref().unwrap_or("?"), port.as_deref().unwrap_or("?"))
            }
            ApiEndpoint::Unresolved(why) => why.clone(),
        }
    }
}

/// `host` and `port` of an API server URL as Cilium reads `k8s-api-server-urls`: a URL without
/// a scheme is `https://`, a URL without a port is 443 for https.
fn url_endpoint(url: &str) -> ApiEndpoint {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let authority = rest.split('/').next().unwrap_or_default();
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (h, p) = v6.split_once(']').unwrap_or((v6, ""));
            (h, p.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    let default_port = if scheme == "http" { "80" } else { "443" };
    ApiEndpoint::At { host: Some(host.to_owned()), port: Some(port.unwrap_or(default_port).to_owned()) }
}

/// Where the container `container` of `workload` reaches the API server, with the precedence of
/// Cilium's client (cilium/cilium v1.18.4 `pkg/k8s/client/rest_config_provider.go`,
/// `createConfig`): a kubeconfig path, then `k8s-api-server`, then the first of
/// `k8s-api-server-urls` (all from `cilium-config`, which the agent and the operator both read),
/// then the in-cluster config, which is the container's `KUBERNETES_SERVICE_HOST`/`_PORT`
/// environment. The chart renders `k8sServiceHost`/`k8sServicePort` only as that environment
/// (`install/kubernetes/cilium/templates/cilium-agent/daemonset.yaml` and
/// `cilium-operator/deployment.yaml`), never into `cilium-config`
/// (`templates/cilium-configmap.yaml` writes `k8s-api-server-urls` only from
/// `k8s.apiServerURLs`). Without the environment, Kubernetes injects the `kubernetes` Service's
/// ClusterIP, which only kube-proxy (or Cilium itself, once running) serves.
fn api_endpoint(config: &Value, workload: &Value, container: &str) -> ApiEndpoint {
    if let Some(path) = config_value(config, "k8s-kubeconfig-path").filter(|p| !p.is_empty()) {
        return ApiEndpoint::Unresolved(format!("the kubeconfig `{path}`"));
    }
    if let Some(url) = config_value(config, "k8s-api-server").filter(|u| !u.is_empty()) {
        // `parseConfig`: this deprecated key defaults to http, the list below to https.
        return url_endpoint(&if url.starts_with("http") { url } else { format!("http://{url}") });
    }
    if let Some(urls) = config_value(config, "k8s-api-server-urls")
        && let Some(first) = urls.split([' ', ',']).find(|u| !u.is_empty())
    {
        return url_endpoint(first);
    }
    let containers = workload.pointer("/spec/template/spec/containers").and_then(Value::as_array);
    let Some(c) = containers.into_iter().flatten().find(|c| c.get("name").and_then(Value::as_str) == Some(container))
    else {
        return ApiEndpoint::Unresolved(format!("no container `{container}`"));
    };
    let env = c.get("env").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let var = |name: &str| -> Result<Option<String>, String> {
        // The last entry of a name wins, as the kubelet builds the environment.
        match env.iter().rev().find(|e| e.get("name").and_then(Value::as_str) == Some(name)) {
            None => Ok(None),
            Some(e) => match e.get("value") {
                Some(v) => Ok(config_value(&serde_json::json!({ "v": v }), "v")),
                None => Err(format!("`{name}` taken from another object")),
            },
        }
    };
    match (var("KUBERNETES_SERVICE_HOST"), var("KUBERNETES_SERVICE_PORT")) {
        (Err(why), _) | (_, Err(why)) => ApiEndpoint::Unresolved(why),
        (Ok(None), _) => ApiEndpoint::Unresolved("the `kubernetes` Service (no `KUBERNETES_SERVICE_HOST`)".into()),
        (Ok(host), Ok(port)) => ApiEndpoint::At { host, port },
    }
}

/// Reads the CNI add-on's manifest as the real Cilium chart renders it: kube-proxy may be
/// disabled only when `cilium-config` has `kube-proxy-replacement: "true"` and both the agent
/// (container `cilium-agent` of the DaemonSet `cilium`) and, when present, the operator
/// (container `cilium-operator` of the Deployment `cilium-operator`) reach the API through
/// KubePrism (`localhost` or `127.0.0.1`, port 7445), as Talos' Cilium guide sets with
/// `k8sServiceHost=localhost` and `k8sServicePort=7445`. Anything else keeps kube-proxy, with the
/// reason.
pub fn kube_proxy(cni: &Addon) -> KubeProxy {
    let kept = |reason: String| KubeProxy::Kept { reason, intended: false };
    // Parsed once, when the fleet was resolved (a manifest that does not parse is refused there).
    let objects: &[Value] = &cni.manifest.objects;
    let Some(config) = find(objects, "ConfigMap", "cilium-config") else {
        return kept("its manifest has no `cilium-config` ConfigMap".to_owned());
    };
    let data = config.get("data").cloned().unwrap_or(Value::Null);
    let replacement = config_value(&data, "kube-proxy-replacement");
    if replacement.as_deref() != Some("true") {
        return kept(format!(
            "`kube-proxy-replacement` is {}",
            replacement.map_or_else(|| "not set".to_owned(), |v| format!("`{v}`, not `true`"))
        ));
    }
    let Some(agent) = find(objects, "DaemonSet", "cilium") else {
        return KubeProxy::Kept { intended: true, reason: "its manifest has no `cilium` DaemonSet".to_owned() };
    };
    let mut components = vec![("agent", api_endpoint(&data, agent, "cilium-agent"))];
    if let Some(operator) = find(objects, "Deployment", "cilium-operator") {
        components.push(("operator", api_endpoint(&data, operator, "cilium-operator")));
    }
    match components.into_iter().find(|(_, e)| !e.is_kubeprism()) {
        None => KubeProxy::Replaced,
        Some((component, endpoint)) => KubeProxy::Kept {
            intended: true,
            reason: format!(
                "it replaces kube-proxy but its {component} reaches the API at {}, not KubePrism (`localhost:{KUBEPRISM_PORT}`)",
                endpoint.describe()
            ),
        },
    }
}

/// A cloud controller manager found in an add-on's manifest: a Deployment or DaemonSet whose
/// container runs with `--cloud-provider=<provider>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudController {
    /// The `--cloud-provider` value: `scaleway`, `talos`, …
    pub provider: String,
    /// The namespace the controller runs in (`kube-system` when the object names none).
    pub namespace: String,
}

impl CloudController {
    /// The Talos cloud controller manager, which reads each node's platform metadata (the
    /// provider ID CAPMOX injects, F8) through the Talos API, and so needs
    /// `machine.features.kubernetesTalosAPIAccess` for its namespace
    /// (siderolabs/talos-cloud-controller-manager v1.11.0 `docs/install.md`).
    pub fn needs_talos_api(&self) -> bool {
        self.provider == "talos"
    }
}

/// The cloud controller managers an add-on's manifest runs, in manifest order. A node only
/// waits for one (the `uninitialized` taint, then the providerID it sets, R25) when its kubelet
/// runs with `--cloud-provider=external`, which Talos sets from
/// `cluster.externalCloudProvider.enabled` (siderolabs/talos v1.13.9
/// `internal/app/machined/pkg/controllers/k8s/kubelet_spec.go`).
pub fn cloud_controllers(content: &str) -> Vec<CloudController> {
    objects(content).map(|o| cloud_controllers_of(&o)).unwrap_or_default()
}

/// [`cloud_controllers`] of a manifest's parsed objects.
pub fn cloud_controllers_of(objects: &[Value]) -> Vec<CloudController> {
    let mut out = Vec::new();
    for o in objects {
        if !matches!(o.get("kind").and_then(Value::as_str), Some("Deployment" | "DaemonSet")) {
            continue;
        }
        let namespace = o.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("kube-system").to_owned();
        let containers = o.pointer("/spec/template/spec/containers").and_then(Value::as_array);
        for c in containers.into_iter().flatten() {
            let args = ["command", "args"].into_iter().filter_map(|f| c.get(f).and_then(Value::as_array)).flatten();
            for a in args.filter_map(Value::as_str) {
                if let Some(p) = a.strip_prefix("--cloud-provider=") {
                    let cc = CloudController { provider: p.to_owned(), namespace: namespace.clone() };
                    if p != "external" && !out.contains(&cc) {
                        out.push(cc);
                    }
                }
            }
        }
    }
    out
}

/// One object of a manifest that holds key material or a credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMaterial {
    /// `Secret kube-system/hubble-ca`, or `the manifest` when it cannot be parsed.
    pub object: String,
    /// What was found, in words.
    pub what: String,
}

/// The private key a text holds, in words: [`key_material::find`]'s shape (a PEM block keeps
/// the words this family has always used for it).
fn private_key(s: &str) -> Option<&'static str> {
    key_material::find(s).map(|(key, _)| match key {
        Key::Pem => "a PEM private key",
        other => other.describe(),
    })
}

fn walk(v: &Value, found: &mut Vec<&'static str>) {
    match v {
        Value::String(s) => found.extend(private_key(s)),
        Value::Object(m) => {
            for (k, x) in m {
                if k == "tls.key" {
                    found.push("a `tls.key` entry");
                }
                walk(x, found);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| walk(x, found)),
        _ => {}
    }
}

/// Every object of the manifest that carries key material or a credential: a private key (in
/// any string, [`key_material::find`]), a Secret of type `kubernetes.io/tls`, a `tls.key`
/// entry, or any Secret with `data` or `stringData` (R20: generated keys differ at every
/// render; F11: credentials come at apply).
pub fn key_material(content: &str) -> Vec<KeyMaterial> {
    let Ok(objects) = objects(content) else {
        return match private_key(content) {
            Some(what) => vec![KeyMaterial { object: "the manifest".into(), what: what.into() }],
            None => Vec::new(),
        };
    };
    let mut out = Vec::new();
    for o in &objects {
        let mut found: Vec<&'static str> = Vec::new();
        if o.get("kind").and_then(Value::as_str) == Some("Secret") {
            if o.get("type").and_then(Value::as_str) == Some("kubernetes.io/tls") {
                found.push("a Secret of type `kubernetes.io/tls`");
            }
            for field in ["data", "stringData"] {
                let non_empty = match o.get(field) {
                    Some(Value::Object(m)) => !m.is_empty(),
                    Some(Value::Null) | None => false,
                    Some(_) => true,
                };
                if non_empty {
                    found.push(if field == "data" { "a Secret with `data`" } else { "a Secret with `stringData`" });
                }
            }
        }
        walk(o, &mut found);
        found.dedup();
        if !found.is_empty() {
            out.push(KeyMaterial { object: describe(o), what: found.join(", ") });
        }
    }
    // A key outside every object (in a comment): the manifest's text is embedded as it is.
    if out.is_empty()
        && let Some(what) = private_key(content)
    {
        out.push(KeyMaterial { object: "a comment of the manifest".into(), what: what.into() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Spanned, Vendored};

    fn addon(content: &str) -> Addon {
        let s = |v: &str| Spanned::new(v.to_owned(), Default::default());
        Addon {
            name: s("cilium"),
            version: s("1.18.4"),
            manifest: Vendored {
                path: s("m.yaml"),
                sha256: s(""),
                content: content.to_owned(),
                objects: std::sync::Arc::new(objects(content).unwrap_or_default()),
            },
            span: Default::default(),
        }
    }

    const CONFIG: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cilium-config\n  namespace: kube-system\ndata:\n";

    /// The objects fleetc reads, in the shape `helm template` of the cilium/cilium v1.18.4 chart
    /// renders them with `kubeProxyReplacement=true k8sServiceHost=localhost k8sServicePort=7445`
    /// (`templates/cilium-configmap.yaml`, `cilium-agent/daemonset.yaml`,
    /// `cilium-operator/deployment.yaml`): the endpoint is container environment, and
    /// `cilium-config` has no `k8s-service-host`/`k8s-service-port`.
    const REAL: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cilium-config\n  namespace: kube-system\ndata:\n  kube-proxy-replacement: \"true\"\n  kube-proxy-replacement-healthz-bind-address: \"\"\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: cilium\n  namespace: kube-system\nspec:\n  template:\n    spec:\n      containers:\n      - name: cilium-agent\n        env:\n        - name: K8S_NODE_NAME\n          valueFrom:\n            fieldRef:\n              apiVersion: v1\n              fieldPath: spec.nodeName\n        - name: KUBERNETES_SERVICE_HOST\n          value: \"localhost\"\n        - name: KUBERNETES_SERVICE_PORT\n          value: \"7445\"\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cilium-operator\n  namespace: kube-system\nspec:\n  template:\n    spec:\n      containers:\n      - name: cilium-operator\n        env:\n        - name: KUBERNETES_SERVICE_HOST\n          value: \"localhost\"\n        - name: KUBERNETES_SERVICE_PORT\n          value: \"7445\"\n";

    #[test]
    fn kube_proxy_replaced_only_through_kubeprism_as_the_real_chart_renders_it() {
        // D4: the real render is Replaced (the old reading of `k8s-service-host` in
        // `cilium-config` kept kube-proxy here, "reaches the API at `?:?`").
        assert_eq!(kube_proxy(&addon(REAL)), KubeProxy::Replaced);
        let agent_only = &REAL[..REAL.find("---\napiVersion: apps/v1\nkind: Deployment").unwrap()];
        assert_eq!(kube_proxy(&addon(agent_only)), KubeProxy::Replaced);
        let other_host = REAL.replacen("\"localhost\"", "\"10.0.0.1\"", 1);
        assert!(matches!(kube_proxy(&addon(&other_host)),
            KubeProxy::Kept { reason, intended: true } if reason.contains("agent reaches the API at `10.0.0.1:7445`")));
        let operator_port = format!("{}\"6443\"\n", REAL.trim_end().strip_suffix("\"7445\"").unwrap());
        assert!(matches!(kube_proxy(&addon(&operator_port)),
            KubeProxy::Kept { reason, intended: true } if reason.contains("operator reaches the API at `localhost:6443`")));
        // No environment: the in-cluster config is the `kubernetes` Service, which needs kube-proxy.
        let no_env = REAL.replace("KUBERNETES_SERVICE_HOST", "X").replace("KUBERNETES_SERVICE_PORT", "Y");
        assert!(matches!(kube_proxy(&addon(&no_env)),
            KubeProxy::Kept { reason, intended: true } if reason.contains("`kubernetes` Service")));
        // `k8sServiceHostRef`: the host comes from another object.
        let by_ref = REAL.replacen(
            "value: \"localhost\"",
            "valueFrom:\n            configMapKeyRef:\n              name: api\n              key: host",
            1,
        );
        assert!(matches!(kube_proxy(&addon(&by_ref)),
            KubeProxy::Kept { reason, .. } if reason.contains("taken from another object")));
        // `k8s.apiServerURLs` (`k8s-api-server-urls`) comes before the environment.
        let urls = REAL.replace(
            "  kube-proxy-replacement-healthz",
            "  k8s-api-server-urls: \"https://127.0.0.1:7445 https://10.0.0.2:6443\"\n  kube-proxy-replacement-healthz",
        );
        assert_eq!(kube_proxy(&addon(&urls)), KubeProxy::Replaced);
        let urls_elsewhere = urls.replace("https://127.0.0.1:7445 ", "");
        assert!(matches!(kube_proxy(&addon(&urls_elsewhere)),
            KubeProxy::Kept { reason, .. } if reason.contains("`10.0.0.2:6443`")));
        let kubeconfig = REAL
            .replace("  kube-proxy-replacement-healthz", "  k8s-kubeconfig-path: /k\n  kube-proxy-replacement-healthz");
        assert!(matches!(kube_proxy(&addon(&kubeconfig)),
            KubeProxy::Kept { reason, .. } if reason.contains("kubeconfig `/k`")));
        let off = REAL.replace("kube-proxy-replacement: \"true\"", "kube-proxy-replacement: \"false\"");
        assert!(matches!(kube_proxy(&addon(&off)),
            KubeProxy::Kept { reason, intended: false } if reason.contains("`false`")));
        assert!(matches!(kube_proxy(&addon("kind: ServiceAccount\n")),
            KubeProxy::Kept { reason, .. } if reason.contains("cilium-config")));
        // The shape the old stand-in had (keys in `cilium-config`, no environment) is not how
        // the chart renders it: kube-proxy is kept.
        let old_stand_in = format!(
            "{CONFIG}  kube-proxy-replacement: \"true\"\n  k8s-service-host: localhost\n  k8s-service-port: \"7445\"\n"
        );
        assert!(matches!(kube_proxy(&addon(&old_stand_in)), KubeProxy::Kept { intended: true, .. }));
    }

    /// The committed vendor/cilium-1.20.2.yaml is the real `helm template` render (oracles/renders
    /// checks it byte for byte): kube-proxy is replaced through KubePrism, which the old reading of
    /// `k8s-service-host` in `cilium-config` got wrong (D4).
    #[test]
    fn the_real_cilium_render_replaces_kube_proxy_through_kubeprism() {
        let real = include_str!("../../vendor/cilium-1.20.2.yaml");
        let config = objects(real).unwrap().into_iter().find(|o| describe(o) == "ConfigMap kube-system/cilium-config");
        let data = config.unwrap()["data"].clone();
        assert!(data.get("k8s-service-host").is_none() && data.get("k8s-service-port").is_none());
        assert_eq!(kube_proxy(&addon(real)), KubeProxy::Replaced);
        assert!(key_material(real).is_empty());
        assert!(cloud_controllers(real).is_empty());
    }

    #[test]
    fn cloud_controllers_are_found_by_their_cloud_provider_flag() {
        let ccm = "kind: Deployment\nmetadata:\n  name: ccm\n  namespace: ccm-system\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          args: [\"--cloud-provider=talos\", \"--v=2\"]\n";
        assert_eq!(
            cloud_controllers(ccm),
            vec![CloudController { provider: "talos".into(), namespace: "ccm-system".into() }]
        );
        assert!(cloud_controllers(ccm)[0].needs_talos_api());
        let scw = ccm.replace("talos", "scaleway").replace("  namespace: ccm-system\n", "");
        assert_eq!(cloud_controllers(&scw)[0].namespace, "kube-system");
        assert!(!cloud_controllers(&scw)[0].needs_talos_api());
        assert!(cloud_controllers(CONFIG).is_empty());
        assert!(cloud_controllers(&ccm.replace("Deployment", "ConfigMap")).is_empty());
    }

    #[test]
    fn key_material_is_found_and_named() {
        let tls = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: hubble-ca\n  namespace: kube-system\ntype: kubernetes.io/tls\ndata:\n  tls.crt: eA==\n  tls.key: eA==\n";
        let found = key_material(tls);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].object, "Secret kube-system/hubble-ca");
        assert!(found[0].what.contains("kubernetes.io/tls") && found[0].what.contains("`data`"));
        assert!(found[0].what.contains("tls.key"));
        let pem = "kind: ConfigMap\nmetadata:\n  name: k\ndata:\n  key: |\n    -----BEGIN EC PRIVATE KEY-----\n    x\n    -----END EC PRIVATE KEY-----\n";
        assert_eq!(key_material(pem)[0].what, "a PEM private key");
        let string_data = "kind: Secret\nmetadata:\n  name: api\nstringData:\n  token: x\n";
        assert_eq!(key_material(string_data)[0].what, "a Secret with `stringData`");
        let empty_secret = "kind: Secret\nmetadata:\n  name: filled-at-apply\n";
        assert!(key_material(empty_secret).is_empty());
        assert!(key_material(CONFIG).is_empty());
    }
}
