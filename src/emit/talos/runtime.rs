//! The RuntimeClass objects of the isolated runtimes a cluster declares (F6), embedded as
//! inline manifests on the control plane (R11), and the sysctl gVisor needs on every node.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::Runtime;

/// The sysctl unprivileged user namespaces need, and the value Talos's documentation uses.
pub const MAX_USER_NAMESPACES: (&str, &str) = ("user.max_user_namespaces", "11255");

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeClass {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Metadata,
    pub handler: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Overhead>,
}

#[derive(Debug, Serialize)]
pub struct Metadata {
    pub name: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overhead {
    pub pod_fixed: BTreeMap<&'static str, &'static str>,
}

/// The RuntimeClass a pod names (`runtimeClassName: gvisor`) to run under `runtime`.
/// Kata's pod overhead is the one upstream kata-deploy ships (the VM's own CPU and memory).
pub fn runtime_class(runtime: Runtime) -> RuntimeClass {
    RuntimeClass {
        api_version: "node.k8s.io/v1",
        kind: "RuntimeClass",
        metadata: Metadata { name: runtime.as_str() },
        handler: runtime.handler(),
        overhead: match runtime {
            Runtime::Gvisor => None,
            Runtime::Kata => Some(Overhead { pod_fixed: BTreeMap::from([("cpu", "250m"), ("memory", "160Mi")]) }),
        },
    }
}

/// The inline manifest's name for a runtime's RuntimeClass.
pub fn manifest_name(runtime: Runtime) -> String {
    format!("runtimeclass-{}", runtime.as_str())
}
