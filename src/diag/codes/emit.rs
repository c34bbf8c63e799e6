//! The `fleet::emit` codes: a document fleetc would write into out/, or a vendored manifest it
//! embeds, that the schema of its pinned upstream version rejects; a vendored object whose kind
//! no schema fleetc carries covers. Raised by the validation that ends every build, in
//! `src/emit/validate.rs`.

codes! {
    SCHEMA_REJECTED = "fleet::emit::schema-rejected", Error, None,
    Some("fleetc validates every document it would write, and every vendored manifest it embeds, against the schema of the pinned version before writing anything: the tool that reads it would refuse it (Talos's strict config decoder, siderolabs/talos pkg/machinery/config/configloader; the API server's field validation, `Strict` under `kubectl apply` since Kubernetes 1.27)"),
"## What it does
Validates, as the last step of every build and before a single file is written, every YAML
document fleetc would write into out/ (Talos machine config documents, Cluster API and Argo CD
objects) and every vendored manifest the fleet embeds (`addon … manifest=`, Cluster API's
`cert-manager` and `operator` manifests, Argo CD's install) against the schema of the version
the fleet pins: the Talos config schema of the cluster's Talos minor, the CRD schema of the
pinned provider release, the Kubernetes core schema (schemas/, embedded in fleetc; provenance
in schemas/README.md). Object schemas that list their fields refuse any other field. The
message names the file (in out/, or the vendored file), the document (counted from 1) and the
field's JSON pointer.

## Why
A document a tool refuses breaks the fleet at apply time, after `fleetc build` has handed it
over: Talos's loader decodes strictly (siderolabs/talos, pkg/machinery/config/configloader,
unknown fields refused), and `kubectl apply` asks the API server for `Strict` field validation
(the default since Kubernetes 1.27), which refuses unknown fields and wrongly typed values. A
vendored manifest edited by hand, or rendered for another version, is caught here rather than
on a live cluster. A run with this error writes nothing.

## Example
    # vendor/cilium-1.18.4.yaml, a Deployment
    spec:
      replicas: \"two\"

## Instead
    spec:
      replicas: 2
";

    SCHEMA_MISSING = "fleet::emit::schema-missing", Warning, None,
    Some("fleetc judges a vendored object with the schema of its kind for the receiving cluster: the built-in kinds of its Kubernetes minor (k8s.io/kubernetes api/openapi-spec/v3), the CRDs schemas/ carries and the CRDs the fleet's vendored manifests install; for this kind it has none, so the API server is the first to judge it (vendor its CRD in a manifest the cluster receives, or add the CRD to oracles/schemas/produce)"),
"## What it does
Warns, once per vendored manifest (`addon … manifest=`, Cluster API's `cert-manager` and
`operator` manifests, Argo CD's install), about the objects whose `apiVersion` and `kind` no
schema covers for a cluster that receives it: not a built-in kind of the cluster's Kubernetes
minor that schemas/ carries, not a CRD schemas/ carries for the cluster's pins, and not a
custom resource of a CRD that one of the fleet's vendored manifests the cluster receives
installs. It names the manifest and the documents (counted from 1).

## Why
Every other vendored object is judged before anything is written, as `kubectl apply` would
judge it (unknown fields and wrong types refused). An object of a kind fleetc has no schema for
is passed on unjudged: the warning says so instead of staying silent, so that a typo in an
`apiVersion`, a kind the cluster does not serve, or a custom resource whose CRD the fleet does
not install is seen before apply.

## Example
    # vendor/my-operator.yaml, with no CustomResourceDefinition for widgets.example.org
    apiVersion: example.org/v1
    kind: Widget

## Instead
    # vendor/my-operator.yaml: the CRD first, then its objects
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: widgets.example.org
";
}
