//! The `fleet::names` codes: names, labels, keys and identifiers that cannot become the names
//! upstream gives them (DNS labels, Kubernetes labels, Tofu identifiers). Checked in
//! `src/check/names.rs` and `src/check/nodes.rs`, and while resolving labels and keys in
//! `src/model/resolve/mod.rs` and `src/model/resolve/nodes.rs`.

codes! {
    INVALID_NAME = "fleet::names::not-dns-label", Error, None,
    Some("names become hostnames, Kubernetes object names and file paths: use lowercase letters, digits and `-`, starting with a letter and ending with a letter or digit, at most 63 characters (DNS-1123 label)"),
"## What it does
Reports a name (environment, cluster, pool, app, service) that is not a DNS-1123 label.

## Why
Names become node hostnames, Kubernetes object names, OpenTofu addresses and directories
under out/. A name that is valid in one of these and not another breaks late; fleetc
refuses it at the source.

## Example
    cluster \"Main_Cluster\"

## Instead
    cluster \"main\"
";

    INVALID_LABEL = "fleet::names::invalid-label", Error, None,
    Some("Kubernetes refuses the Node object with this label, annotation or taint (k8s.io/apimachinery `IsQualifiedName`, `IsValidLabelValue`): the node would never register it"),
"## What it does
Reports a node label, annotation or taint whose key or value Kubernetes or Talos would reject: a
key is `[prefix/]name`, the prefix a DNS subdomain (lowercase, at most 253 characters), the name
at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit; a label
or taint value is empty or follows the name's rule. An annotation's value is free text, but
Talos reserves three keys (`talos.dev/owned-labels`, `talos.dev/owned-annotations`,
`talos.dev/owned-taints`) and the keys and values of one pool's annotations together may hold at
most 256 KiB (siderolabs/talos v1.13.9 `pkg/machinery/labels/validate.go`
`ValidateAnnotations`, which the machine config's validation calls).

## Why
Talos hands the labels and taints of a pool to the kubelet and the API server; the API server
validates them with its own grammar (k8s.io/apimachinery v0.36.3
`pkg/api/validate/content/kube.go`, k8s.io/kubernetes v1.36.3
`pkg/apis/core/validation/validation.go` `validateNodeTaints`) and refuses the whole update. fleetc
checks the same grammar, so the mistake is seen in review, not on a node that never gets its
labels.

## Example
    pool \"workers\" count=2 {
        label \"my label\" \"yes please\"

## Instead
    pool \"workers\" count=2 {
        label \"example.org/tier\" \"yes-please\"
";

    DUPLICATE_KEY = "fleet::names::duplicate-key", Error, None,
    Some("a label key holds one value, and Talos holds one taint per key: the second would silently replace the first"),
"## What it does
Reports a pool or node that sets the same label key twice, two taints with the same key (even
with different effects), or a node taint whose key its pool taints too.

## Why
Node labels are a map: one key, one value. fleetc used to keep the last one written, so the
first was lost without a word. Talos's `machine.nodeTaints` is a map too, from a key to one
`value:Effect` (siderolabs/talos v1.13.9 `pkg/machinery/config/types/v1alpha1/v1alpha1_types.go`,
`MachineNodeTaints`): a second effect of the same key cannot be written. A worker's taints are
also the ones its kubelet registers with (`registerWithTaints`), a list Talos appends a node's
to its pool's: a key in both would register twice, and Kubernetes refuses taints that repeat a
(key, effect) pair (`validateNodeTaints`: \"taints must be unique by key and effect pair\").

## Example
    label \"tier\" \"a\"
    label \"tier\" \"b\"

## Instead
    label \"tier\" \"b\"
";

    INVALID_IDENTIFIER = "fleet::names::invalid-identifier", Error, None, None,
"## What it does
Reports a name that fleet.kdl passes to another tool, written in a form that tool refuses:
- the `gitops` `revision` (a branch, a tag or a commit) must be a git ref name: no space, no
  `~ ^ : ? * [ \\`, no `..` nor `@{`, no component starting with `.` or ending with `.lock`, not
  ending with `/` or `.` (git-check-ref-format(1));
- a Proxmox `node` (and each of `nodes`) is a node name, `[A-Za-z0-9]` with `-` inside
  (proxmox/pve-common `src/PVE/JSONSchema.pm` `pve_verify_node_name`); a `datastore` and an
  `image-datastore` are storage IDs, a letter, then letters, digits, `-`, `_`, `.`, ending with a
  letter or digit (`parse_id`); a `bridge` is letters, digits, `-`, `_`, `.` (`parse_bridge_id`);
- a state bucket's `region` is lowercase letters, digits and `-` (an S3 region: `fr-par`,
  `eu-west-1`);
- a cluster's `cert-sans` entry is an IP address or a DNS name (letters, digits and `-` in
  dot-separated labels, a leading `*.` allowed): the API server's certificate names it, and a
  client compares the name it dialed with it.

## Why
Each of these strings reaches out/ as written. Proxmox refuses the API call at `tofu apply`,
Argo CD never resolves the revision, the S3 backend cannot sign for the region at `tofu init`,
and a certificate SAN with a space matches no name a client dials. fleetc reports it in
fleet.kdl, where it was written.

## Example
    gitops repo=\"https://git.example/fleet.git\" revision=\"release 1\"
    proxmox endpoint=\"https://pve:8006\" node=\"pve 1\" router=\"192.168.1.1\" datastore=\"local lvm\"

## Instead
    gitops repo=\"https://git.example/fleet.git\" revision=\"release-1\"
    proxmox endpoint=\"https://pve:8006\" node=\"pve1\" router=\"192.168.1.1\" datastore=\"local-lvm\"
";

    NODE_RESTRICTED_LABEL = "fleet::names::node-restricted-label", Error, None,
    Some("a worker's labels are set with the kubelet's credentials, and NodeRestriction refuses a node the `node-role.kubernetes.io/`, `node-restriction.kubernetes.io/` and other `kubernetes.io`/`k8s.io` keys outside the kubelet's own: the update fails and none of the node's labels apply"),
"## What it does
Reports a label of a worker pool or of a worker's named node whose key the node may not set
on itself under the NodeRestriction admission plugin: `node-restriction.kubernetes.io/…`,
and any key in `kubernetes.io`, `k8s.io` or their subdomains (`node-role.kubernetes.io/worker`)
other than the kubelet's own (`kubernetes.io/hostname`, `kubernetes.io/os`,
`kubernetes.io/arch`, `topology.kubernetes.io/zone`, `topology.kubernetes.io/region`,
`node.kubernetes.io/instance-type`, their `beta` forms, and the `kubelet.kubernetes.io/` and
`node.kubernetes.io/` prefixes).

## Why
Talos runs the API server with NodeRestriction (siderolabs/talos v1.13.9
`internal/app/machined/pkg/controllers/k8s/control_plane_static_pod.go` l.349) and applies a
worker's `machine.nodeLabels` with the kubelet's own credentials, all labels and taints in one
Node update (`internal/app/machined/pkg/controllers/k8s/node_apply.go`, `getK8sClient`,
`syncOnce`). NodeRestriction refuses these keys from a node so that it cannot steer workloads
to itself (kubernetes v1.35.0 `plugin/pkg/admission/noderestriction/admission.go`,
`getForbiddenLabels`; the kubelet's own labels: k8s.io/kubelet v0.35.0
`pkg/apis/well_known_labels.go`, `IsKubeletLabel`). The update fails, so none of the pool's
labels apply (siderolabs/talos#10122, #6750). A control-plane node's labels are applied with
an admin client, and are not refused.

## Example
    pool \"workers\" count=2 {
        label \"node-role.kubernetes.io/worker\" \"\"
    }

## Instead
    pool \"workers\" count=2 {
        label \"node.example.com/role\" \"worker\"
    }
and, if the `ROLES` column of `kubectl get nodes` matters, set `node-role.kubernetes.io/worker`
from outside the node (`kubectl label node …`, or an operator).
";
}
