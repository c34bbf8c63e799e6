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
/// Kata's pod overhead (the VM's own CPU and memory) is the one the Talos extension documents
/// for its `kata` handler, Cloud Hypervisor: siderolabs/extensions v1.13.9 (and v1.12.6)
/// `container-runtime/kata-containers/README.md` l.17-24, `cpu: 250m`, `memory: 130Mi`
/// (160Mi is kata-deploy's `kata-qemu` value, a handler Talos does not configure).
pub fn runtime_class(runtime: Runtime) -> RuntimeClass {
    RuntimeClass {
        api_version: "node.k8s.io/v1",
        kind: "RuntimeClass",
        metadata: Metadata { name: runtime.as_str() },
        handler: runtime.handler(),
        overhead: match runtime {
            Runtime::Gvisor => None,
            Runtime::Kata => {
                Some(Overhead { pod_fixed: BTreeMap::from([("cpu", "250m"), ("memory", KATA_MEMORY_OVERHEAD)]) })
            }
        },
    }
}

/// The memory overhead of a Kata pod (see [`runtime_class`]).
pub const KATA_MEMORY_OVERHEAD: &str = "130Mi";

/// The inline manifest's name for a runtime's RuntimeClass.
pub fn manifest_name(runtime: Runtime) -> String {
    format!("runtimeclass-{}", runtime.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C2 (talos.md): the overhead is the extension's own value for the `kata` handler.
    #[test]
    fn kata_overhead_is_the_talos_extensions_value() {
        let rc = runtime_class(Runtime::Kata);
        assert_eq!(rc.handler, "kata");
        let o = rc.overhead.unwrap();
        assert_eq!(o.pod_fixed["memory"], "130Mi");
        assert_eq!(o.pod_fixed["cpu"], "250m");
        assert!(runtime_class(Runtime::Gvisor).overhead.is_none());
    }
}
