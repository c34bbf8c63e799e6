//! The `fleet::addons` code: an add-on on a Kubernetes minor its project did not test. Checked in
//! `src/check/versions.rs`, against the ranges of `upstream::talos::ADDON_KUBERNETES`.

codes! {
    ADDON_KUBERNETES_UNTESTED = "fleet::addons::kubernetes-untested", Warning, Some("R25"), None,
"## What it does
Warns when an add-on runs on a cluster whose Kubernetes minor is outside the range its project
tested that release on: an embedded add-on (`addon … version=`, e.g. Cilium), cert-manager
(`cluster-api { cert-manager version= }`), a chart app (`chart=… version=`, e.g. External
Secrets) and Argo CD (`argocd version=`) on each cluster that runs it. The ranges, each with
its source, are `upstream::talos::ADDON_KUBERNETES` (docs/talos.md, \"Add-on Kubernetes
ranges\").

## Why (R25)
A release is built against the Kubernetes APIs of its time: outside its tested range it may
call an API the server no longer serves, or miss one it now needs. Nodes are Ready only with a
working CNI and cloud controller manager, and GitOps only with a working Argo CD: an untested
pair is a risk the project itself has not taken.

## Example
    kubernetes \"1.36.2\"
    addon \"cilium\" version=\"1.18.4\" …   // Cilium 1.18 is tested on 1.30–1.33

## Instead
Pin an add-on release whose project lists the cluster's Kubernetes minor, or keep the cluster
on a minor the add-on lists. When you have tested the pair yourself, the warning stays: it
says what upstream states, not what you found.
";
}
