//! The `fleet::addons` codes: an add-on on a Kubernetes minor its project did not test (checked
//! in `src/check/versions.rs`, against the ranges of `upstream::talos::ADDON_KUBERNETES`), and a
//! vendored manifest that says it is a stand-in (`src/check/stand_in.rs`), and a vendored
//! manifest whose namespaced objects carry no namespace (`src/check/namespaces.rs`).

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

    ADDON_STAND_IN = "fleet::addons::stand-in", Warning, Some("R11"), None,
"## What it does
Warns when a vendored manifest the fleet names (an `addon`, Argo CD's install, Cluster API's
cert-manager or operator) says in its first lines that it is a stand-in: a line
`# fleetc: stand-in: <what it leaves out>` among the comment lines at its top. The warning
quotes that line.

## Why (R11)
A cluster starts able to run a workload only when its CNI, cloud controller manager and CSI
driver run; GitOps only when Argo CD runs. A stand-in keeps some objects of the real manifest
(a CRD, a StorageClass) so that examples and tests stay small: applied as is, the add-on it
stands for does not run. fleetc cannot tell a trimmed file from a real render by its objects,
so the file says so itself.

## Example
    addon \"scaleway-csi\" version=\"0.3.4\" manifest=\"vendor/scaleway-csi.yaml\" sha256=\"…\"
    // vendor/scaleway-csi.yaml begins with
    // # fleetc: stand-in: the CSIDriver and StorageClass only, no controller or node plugin

## Instead
Vendor the add-on's real render at the pinned version (docs/addons.md gives the command for
each add-on), without the marker line, and pin its sha256. A fleet kept as an example only may
keep its stand-ins: the warning says it cannot be applied as is.
";

    ADDON_NAMESPACE_MISSING = "fleet::addons::namespace-missing", Error, Some("R11"), None,
"## What it does
Refuses a vendored manifest applied without a namespace of its own (an `addon`, which Talos
applies from the control plane's config, and Cluster API's cert-manager and operator, which
`kubectl apply -f` applies) when one of its namespaced objects (a Deployment, a
ServiceAccount, a Role…) has no `metadata.namespace`. Argo CD's install is applied into the
`argocd` block's namespace, so it may leave the namespace out.

## Why (R11)
Talos applies a namespaced object without a namespace in `default` (siderolabs/talos v1.13.9
`internal/app/machined/pkg/controllers/k8s/manifest_apply.go` l.301-304), and so does
`kubectl apply` with a default kubeconfig. `helm template --namespace X` renders a chart's
templates as they are: most charts write no `namespace:` and rely on `helm install` to set it.
Applied as rendered, the driver's Deployment and ServiceAccount land in `default`, while its
ClusterRoleBindings name the ServiceAccount in `X` and the Secret it reads is created in `X`:
the add-on never starts, and the cluster never runs a workload that needs it.

## Example
    addon \"scaleway-csi\" version=\"0.3.4\" manifest=\"vendor/scaleway-csi.yaml\" sha256=\"…\"
    // vendor/scaleway-csi.yaml, from `helm template … --namespace kube-system`:
    // kind: Deployment
    // metadata:
    //   name: scaleway-csi-controller        <- no namespace

## Instead
Give every namespaced object its namespace in the vendored file (the one the chart was rendered
for: `namespace: kube-system` under `metadata:`), say so in the file's header, and pin the new
sha256. Cluster-scoped objects (ClusterRole, StorageClass, CSIDriver, CRDs…) take none.
";
}
