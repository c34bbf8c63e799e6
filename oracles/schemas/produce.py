#!/usr/bin/env python3
"""Produces fleetc's committed conformance schemas (`schemas/` at the repository root).

`talos/<minor>/deprecated.json` lists the v1alpha1 fields the machinery decodes that its
config.schema.json leaves out (`docgen:nodoc`), from oracles/schemas/decoded (Go, reflection over
the machinery's types and their doc comments).

Every source file is read from an upstream Go module, downloaded through the Go module proxy
with `go mod download -json MODULE@VERSION` and checked against the module hash pinned below.
Talos config schemas are stripped to their structure; CRDs are converted from each served
version's `openAPIV3Schema` to a standalone JSON Schema (draft 2020-12) and stripped the same
way. `schemas/README.md` is generated too, so the whole folder is reproducible.

Usage: produce.py [--check] [--out DIR]
  (default)  write the schemas into DIR (default: <repo>/schemas), removing stale files there
  --check    write nothing; compare DIR with what would be produced, print one
             `ok schemas: <file>` or `FAIL schemas: <file>: <reason>` line per file, exit 1 on any FAIL
"""

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]

# Doc-only keywords dropped from every schema node (never from a `properties` map, whose keys
# are field names: a field called `description` stays).
DOC_KEYS = {
    "description",
    "markdownDescription",
    "x-intellij-html-description",
    "title",
    "example",
    "examples",
    "$comment",
}
# Keywords whose value is one subschema.
SUB_ONE = {
    "items", "additionalProperties", "not", "if", "then", "else", "contains",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems",
}
# Keywords whose value is a list of subschemas.
SUB_LIST = {"allOf", "anyOf", "oneOf", "prefixItems"}
# Keywords whose value is a map of name -> subschema.
SUB_MAP = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}

# module key -> (module, [(version, h1 module hash as the proxy serves it)]): every version a
# fleet fleetc builds pins (the reference fleet and the golden fleets with an out/), where the
# proxy serves it. A schema set is (key, version); identical produced bytes are stored once.
MODULES = {
    "talos": ("github.com/siderolabs/talos/pkg/machinery", [
        ("v1.12.6", "h1:p8XG6i82Y5MTLeaPDtFv2TnE7UY9tPLbbRI8cwJdRlw="),
        ("v1.13.9", "h1:4Qch4CVfhT3C48PfiIFXYa1LAhSWA6o7NmrEO2bsLlg="),
        ("v1.14.1", "h1:dh2PkMNUkndQWSY+iUy9d9rGDKpAD9TuHylzVhY544Y="),
    ]),
    "capi": ("sigs.k8s.io/cluster-api", [("v1.13.3", "h1:BlNVnjg644NnlWnxIWHbkltleFLVQwm8FmjWCSB9wGY=")]),
    "cabpt": ("github.com/siderolabs/cluster-api-bootstrap-provider-talos", [
        ("v0.6.11", "h1:Fp5BiyVrbKlcWJi9GB3SmMQF1cPF8QREUH6mUHCzN8w="),
        ("v0.6.12", "h1:c4BNooloe7dVyE2lE08kkUkyggCU7oy5z++PCv78mfw="),
    ]),
    "cacppt": ("github.com/siderolabs/cluster-api-control-plane-provider-talos",
               [("v0.5.13", "h1:Bp/Ew/2tnMUIJfQ+gmqqtPq28rnNPWvk51N0gjwvVVg=")]),
    "capmox": ("github.com/ionos-cloud/cluster-api-provider-proxmox",
               [("v0.9.0", "h1:ZaCkjLHRPzBGn99GttQjeQCf7Z4HfhG04PyItO64CxE=")]),
    "argocd": ("github.com/argoproj/argo-cd/v3", [("v3.2.1", "h1:rvrkW/JdH4V+xJgNDZI9wa/Ygd+fWoGbd1rAhvno22c=")]),
    "ipam": ("sigs.k8s.io/cluster-api-ipam-provider-in-cluster", [
        ("v1.0.3", "h1:DO6VrWMAmkX7D50CSLiKR62kcvxtH2Zdm312KB115XE="),
        ("v1.1.0", "h1:SfF3aKymnb/kTgF7kDS2gtbtmahteYgPTpuMfdThO2I="),
    ]),
    "operator": ("sigs.k8s.io/cluster-api-operator", [("v0.23.0", "h1:0BJK4w4MPnlLyhsuTnPwNp+vM6hoeS35QgUlSTOW+vs=")]),
    "eso": ("github.com/external-secrets/external-secrets", [("v0.20.4", "h1:HhNAjWfFEshhItphr28SGsHzf2bUP7uDAOVLg76uNAg=")]),
    "certmanager": ("github.com/cert-manager/cert-manager", [("v1.19.1", "h1:Txh8L/nLWTDcb7ZnXuXbTe15BxQnLbLirXmbNk0fGgY=")]),
    "talosk8s": ("github.com/siderolabs/talos", [("v1.13.9", "h1:rTVcPmnU2nx3JewD4UnhHL9j1ZaOPHN0/b02GwLysZA=")]),
    "kubernetes": ("k8s.io/kubernetes", [
        ("v1.35.2", "h1:2HthVDfK3YJYv624imuKXPzUJ17xQop9OT5dgT+IMKE="),
        ("v1.36.3", "h1:qDQdoMiluAE2Eab6Fa52YV+WjiGz9mZFFoagEA6cI+o="),
    ]),
}

# Upstream commits of the module versions, as the proxy's .info `Origin.Hash` gave them (Argo CD's
# and Kubernetes v1.36.3's .info have no Origin). Recorded here so the README does not depend on
# what a cache holds; a served Origin that disagrees fails the producer.
COMMITS = {
    ("talos", "v1.12.6"): "a1b8bd612759ebef0faa9c80f8eeb4b8b16f34eb",
    ("talos", "v1.13.9"): "3ebd10a7c1bd0f81742bdcd0c3fe56d727db7401",
    ("talos", "v1.14.1"): "2f86b9d2a29b413deddd7122a8420b8913813615",
    ("capi", "v1.13.3"): "cf0f6c00fbf7d5c5dbf37bd09554c6389de93861",
    ("cabpt", "v0.6.11"): "14a90252985fdcaf93019a7fbd5044ac332ffae1",
    ("cabpt", "v0.6.12"): "065b6843501a9b9fad01133b30f98b891aa5aceb",
    ("cacppt", "v0.5.13"): "955bf0040d57879cd53c0091c28f565409c6573a",
    ("capmox", "v0.9.0"): "eb2360a723105450003fd7095616e3dd8cbe2b39",
    ("ipam", "v1.0.3"): "de17cdb0141de71f9484a626c239d161282cbafa",
    ("ipam", "v1.1.0"): "bc27dd724e20a0543f441d55183778a73db26294",
    ("operator", "v0.23.0"): "3846d87f00f5be0ecaf9b9d18479a058c84266d0",
    ("eso", "v0.20.4"): "9ee12d535a01dda40a1ea0c7d4fd5c545baa6dba",
    ("certmanager", "v1.19.1"): "a22e21ea38f6a8e031af99471b0a50287fed8e7f",
    ("talosk8s", "v1.13.9"): "3ebd10a7c1bd0f81742bdcd0c3fe56d727db7401",
    ("kubernetes", "v1.35.2"): "fdc9d74cbf2da6754ebf81d56f80ae2948cd6425",
}

# Modules whose versions are not in the checksum database (lookup 404): downloaded with
# GONOSUMDB for that module alone, still checked against the pinned h1: hash.
NOSUMDB = {"github.com/siderolabs/cluster-api-bootstrap-provider-talos"}

# Talos: output dir (per minor, as tests/talos_conformance.rs picks them) -> module version.
TALOS = [("v1.12", "v1.12.6"), ("v1.13", "v1.13.9"), ("v1.14", "v1.14.1")]
TALOS_PATH = "config/schemas/config.schema.json"
# The v1alpha1 fields Talos decodes but leaves out of config.schema.json (`docgen:nodoc`, mostly
# deprecated): read from the module by oracles/schemas/decoded (Go, reflection over
# v1alpha1.Config and the doc comments of TALOS_TYPES), built in a copy of
# oracles/talos/<minor>/ (its go.mod pins the same machinery version).
TALOS_TYPES = "config/types/v1alpha1"
DECODED = REPO / "oracles" / "schemas" / "decoded" / "main.go"

# CRDs: (module key, path in module, kind). Every served version of every module version
# becomes one file, `crds/<group>/<module version>/<Kind>_<apiVersion>.json`, stored under the
# oldest module version that produces those bytes.
CRDS = [
    ("capi", "config/crd/bases/cluster.x-k8s.io_clusters.yaml", "Cluster"),
    ("capi", "config/crd/bases/cluster.x-k8s.io_clusterclasses.yaml", "ClusterClass"),
    ("capi", "config/crd/bases/cluster.x-k8s.io_machinedeployments.yaml", "MachineDeployment"),
    ("capi", "config/crd/bases/cluster.x-k8s.io_machinehealthchecks.yaml", "MachineHealthCheck"),
    ("cabpt", "config/crd/bases/bootstrap.cluster.x-k8s.io_talosconfigs.yaml", "TalosConfig"),
    ("cabpt", "config/crd/bases/bootstrap.cluster.x-k8s.io_talosconfigtemplates.yaml", "TalosConfigTemplate"),
    ("cacppt", "config/crd/bases/controlplane.cluster.x-k8s.io_taloscontrolplanes.yaml", "TalosControlPlane"),
    ("capmox", "config/crd/bases/infrastructure.cluster.x-k8s.io_proxmoxclusters.yaml", "ProxmoxCluster"),
    ("capmox", "config/crd/bases/infrastructure.cluster.x-k8s.io_proxmoxmachinetemplates.yaml", "ProxmoxMachineTemplate"),
    ("argocd", "manifests/crds/application-crd.yaml", "Application"),
    ("argocd", "manifests/crds/applicationset-crd.yaml", "ApplicationSet"),
    ("argocd", "manifests/crds/appproject-crd.yaml", "AppProject"),
    ("ipam", "config/crd/bases/ipam.cluster.x-k8s.io_inclusterippools.yaml", "InClusterIPPool"),
    ("ipam", "config/crd/bases/ipam.cluster.x-k8s.io_globalinclusterippools.yaml", "GlobalInClusterIPPool"),
    ("operator", "config/crd/bases/operator.cluster.x-k8s.io_coreproviders.yaml", "CoreProvider"),
    ("operator", "config/crd/bases/operator.cluster.x-k8s.io_bootstrapproviders.yaml", "BootstrapProvider"),
    ("operator", "config/crd/bases/operator.cluster.x-k8s.io_controlplaneproviders.yaml", "ControlPlaneProvider"),
    ("operator", "config/crd/bases/operator.cluster.x-k8s.io_infrastructureproviders.yaml", "InfrastructureProvider"),
    ("operator", "config/crd/bases/operator.cluster.x-k8s.io_ipamproviders.yaml", "IPAMProvider"),
    ("eso", "config/crds/bases/external-secrets.io_externalsecrets.yaml", "ExternalSecret"),
    ("eso", "config/crds/bases/external-secrets.io_secretstores.yaml", "SecretStore"),
    ("eso", "config/crds/bases/external-secrets.io_clustersecretstores.yaml", "ClusterSecretStore"),
    ("certmanager", "deploy/crds/cert-manager.io_certificates.yaml", "Certificate"),
    ("certmanager", "deploy/crds/cert-manager.io_issuers.yaml", "Issuer"),
    ("certmanager", "deploy/crds/cert-manager.io_clusterissuers.yaml", "ClusterIssuer"),
    # The CRD Talos applies itself when `machine.features.kubernetesTalosAPIAccess` is on
    # (internal/app/machined/pkg/controllers/k8s/internal/k8stemplates: the golden file its test
    # compares `TalosServiceAccountCRDTemplate` with).
    ("talosk8s", "internal/app/machined/pkg/controllers/k8s/internal/k8stemplates/testdata/talos-service-account-crd.yaml",
     "ServiceAccount"),
]

# Kubernetes built-in kinds: every kind a manifest commonly carries (and every kind fleetc emits or
# a vendored manifest of the reference fleet or a golden fleet has), from the OpenAPI v3 documents
# of k8s.io/kubernetes at the served patch of each minor a fleet pins: (file in
# api/openapi-spec/v3/, group, version, [kind, ...]). Each kind is the one component of that file
# whose `x-kubernetes-group-version-kind` is exactly (group, version, kind). Stored as
# `kubernetes/<minor>/<group or core>/<Kind>_<version>.json` (the kind's own node, apiVersion and
# kind pinned; identical bytes once, under the oldest minor) beside one
# `kubernetes/<minor>/definitions.json` per minor: every component those kinds refer to,
# transitively, once (the kinds' `$ref`s point into its `$defs`).
K8S_KINDS = [
    ("api__v1_openapi.json", "", "v1", [
        "ConfigMap", "Endpoints", "LimitRange", "Namespace", "PersistentVolume", "PersistentVolumeClaim",
        "Pod", "PodTemplate", "ReplicationController", "ResourceQuota", "Secret", "Service", "ServiceAccount",
    ]),
    ("apis__admissionregistration.k8s.io__v1_openapi.json", "admissionregistration.k8s.io", "v1", [
        "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
    ]),
    ("apis__apiextensions.k8s.io__v1_openapi.json", "apiextensions.k8s.io", "v1", ["CustomResourceDefinition"]),
    ("apis__apiregistration.k8s.io__v1_openapi.json", "apiregistration.k8s.io", "v1", ["APIService"]),
    ("apis__apps__v1_openapi.json", "apps", "v1",
     ["ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"]),
    ("apis__autoscaling__v1_openapi.json", "autoscaling", "v1", ["HorizontalPodAutoscaler"]),
    ("apis__autoscaling__v2_openapi.json", "autoscaling", "v2", ["HorizontalPodAutoscaler"]),
    ("apis__batch__v1_openapi.json", "batch", "v1", ["CronJob", "Job"]),
    ("apis__certificates.k8s.io__v1_openapi.json", "certificates.k8s.io", "v1", ["CertificateSigningRequest"]),
    ("apis__coordination.k8s.io__v1_openapi.json", "coordination.k8s.io", "v1", ["Lease"]),
    ("apis__discovery.k8s.io__v1_openapi.json", "discovery.k8s.io", "v1", ["EndpointSlice"]),
    ("apis__flowcontrol.apiserver.k8s.io__v1_openapi.json", "flowcontrol.apiserver.k8s.io", "v1",
     ["FlowSchema", "PriorityLevelConfiguration"]),
    ("apis__networking.k8s.io__v1_openapi.json", "networking.k8s.io", "v1",
     ["IPAddress", "Ingress", "IngressClass", "NetworkPolicy", "ServiceCIDR"]),
    ("apis__node.k8s.io__v1_openapi.json", "node.k8s.io", "v1", ["RuntimeClass"]),
    ("apis__policy__v1_openapi.json", "policy", "v1", ["PodDisruptionBudget"]),
    ("apis__rbac.authorization.k8s.io__v1_openapi.json", "rbac.authorization.k8s.io", "v1",
     ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]),
    ("apis__resource.k8s.io__v1_openapi.json", "resource.k8s.io", "v1",
     ["DeviceClass", "ResourceClaim", "ResourceClaimTemplate"]),
    ("apis__scheduling.k8s.io__v1_openapi.json", "scheduling.k8s.io", "v1", ["PriorityClass"]),
    ("apis__storage.k8s.io__v1_openapi.json", "storage.k8s.io", "v1", [
        "CSIDriver", "CSINode", "CSIStorageCapacity", "StorageClass", "VolumeAttachment", "VolumeAttributesClass",
    ]),
]
K8S_OPENAPI_DIR = "api/openapi-spec/v3"

# Source files whose bytes are pinned because the module version fleetc pins is not served and a
# nearby served one is used instead: the sha256 must equal that of the file at the pinned tag.
PINNED_SOURCE_SHA256 = {
    ("cacppt", "config/crd/bases/controlplane.cluster.x-k8s.io_taloscontrolplanes.yaml"):
        "5bbbf26c809d7736786d646726bf191da5b66106556dca7696f1e396338e07ec",
}

NOTES = """\
## Module versions

Pins of the fleets fleetc builds (fleet.kdl and the golden fleets with an `out/`): Talos v1.12.x,
v1.13.9 and v1.14.x; Kubernetes 1.33 to 1.37; Cluster API core 1.12.9 and 1.13.3; CABPT 0.6.11
and 0.6.12; CACPPT 0.5.12; CAPMOX 0.9.0; IPAM in-cluster 1.0.3 and 1.1.0; the operator 0.24.0;
Argo CD 3.2.1. `fleetc build` judges each document with the set of the cluster that receives it
(`src/upstream/schemas.rs`); a pinned version without a set of its own is judged by the stand-in
that table names, with the evidence below.

- `github.com/siderolabs/talos/pkg/machinery` v1.12.6, v1.13.9 and v1.14.1 are served. v1.14.0 is
  not served by the proxy; v1.14.1 is the 1.14 schema used.
- Cluster API core v1.12.9 is not served (403, tried 2026-12-01); v1.13.3 stands in for it. They
  differ: at tag v1.12.9 (commit `85c17a5f1026d61982a8bb4b2c2736aa4161f6ec` of
  kubernetes-sigs/cluster-api, read from a snapshot of the repository) `config/crd/bases/` has
  other bytes for all four CRDs, and v1.13.3's add fields only (`spec.topology.controlPlane.taints`
  and `.rollout`, the workers' `taints`, `rollout.after`, and in v1beta1 the health checks'
  `unhealthyMachineConditions`); no field is removed and no type changes; one CEL rule on
  `MachineDeployment` v1beta2 `spec.template.spec.taints[].key` is dropped. So a document v1.13.3
  refuses, v1.12.9 refuses too; a document using one of the added fields is accepted here and
  refused by a v1.12.9 API server (fleetc emits none of them). v1.12.0 to v1.12.11 have the same
  CRD bytes at their tags; v1.13.0 to v1.13.5 those of v1.13.3.
- CABPT v0.6.12 is served; its two CRDs are byte-identical to v0.6.11's (sha256
  `c68c0239…` and `2363fbfa…`), so its set points at v0.6.11's files. At the tags, v0.6.8 to
  v0.6.12 have these bytes; v0.6.5 to v0.6.7 differ (v0.6.11's set stands in for them).
  CABPT is not in the checksum database (lookup 404), so it is downloaded with `GONOSUMDB` set for
  that module alone. Every module, this one included, is checked against the `h1:` hash pinned in
  `oracles/schemas/produce.py`; a mismatch fails the producer. CABPT v0.6.4 is served too (not
  used: fleetc refuses CABPT before 0.6.5).
- `github.com/siderolabs/cluster-api-control-plane-provider-talos` v0.5.12 (the pinned one) is not
  served (the proxy answers 403, as it does for v0.5.11 and v0.6.0); v0.5.13 is. Its
  `config/crd/bases/controlplane.cluster.x-k8s.io_taloscontrolplanes.yaml` has sha256
  `5bbbf26c809d7736786d646726bf191da5b66106556dca7696f1e396338e07ec`, byte-for-byte the same as
  that file at tag v0.5.12 (commit `97b33e78ff1091bd143db6c428b8ed53ec3e0931`, read from a
  snapshot of the upstream repository), and at v0.5.9, v0.5.10 and v0.5.11; the producer refuses
  any other bytes. v0.5.5 to v0.5.8 differ (v0.5.13's set stands in for them).
- CABPT v0.6.11 serves `v1alpha3` only (`v1beta1` appears from v0.7.0-alpha); Cluster API v1.13.3
  serves `v1beta1` (deprecated) and `v1beta2` (storage). Its CRDs are under `config/crd/bases/`.
- In-cluster IPAM v1.0.3 and v1.1.0 are both served and both produced: v1.1.0's `v1alpha2` adds
  `spec.addressReuseGracePeriodSeconds` to both pools. v1.0.1 and v1.0.2 have v1.0.3's CRD bytes
  at their tags; v1.0.0 differs.
- CAPMOX v0.9.0 is served and used as pinned (v0.7.5 is not served: 403; fleetc refuses CAPMOX
  before 0.9 anyway).
- `talos.dev/v1alpha1` `ServiceAccount`: the CRD Talos applies to its cluster when
  `machine.features.kubernetesTalosAPIAccess` is on, from the module `github.com/siderolabs/talos`
  v1.13.9 (`internal/app/machined/pkg/controllers/k8s/internal/k8stemplates/testdata/talos-service-account-crd.yaml`,
  the golden file of `TalosServiceAccountCRDTemplate`); the same bytes at tags v1.12.6 and
  v1.14.0-rc.1 (oracles/kube/README.md, "The CRDs"), so it judges every Talos minor fleetc builds.
- External Secrets v0.20.4 (the chart 0.20.4 the fleet pins installs that app version),
  cert-manager v1.19.1 (its `deploy/crds/`), Argo CD v3.2.1: served, used as pinned.
- `sigs.k8s.io/cluster-api-operator` v0.24.0 (the pinned operator) is not served (403); v0.23.0 is
  and is what these operator schemas are. Its CRDs differ from v0.24.0's in structure: v0.24.0
  adds `manager.diagnosticsAddress` and `manager.insecureDiagnostics` (read at tag v0.24.0, commit
  `d21153e947365de4df356313ea229a6097b267a7`, of the upstream repository); it removes none. So a document these schemas accept is accepted
  by v0.24.0's CRDs as well; the kube oracle installs the v0.24.0 CRDs themselves where a copy of
  that repository is at hand (`oracles/kube/README.md`).
- Kubernetes built-in kinds: `kubernetes/v1.35/` from `k8s.io/kubernetes` v1.35.2 (the patch edge-1
  pins) and `kubernetes/v1.36/` from v1.36.3 (the served patch of the 1.36 minor; 1.36.2 is not
  served), `api/openapi-spec/v3/*.json`. A kind whose produced bytes are the same in both is stored
  once, under v1.35. Kubernetes 1.30 to 1.34 (accepted by versions/talos.kdl, not produced) are
  judged with v1.35's schemas and 1.37 with v1.36's: named stand-ins, not evidence of sameness
  (for instance `networking.k8s.io/v1` `ServiceCIDR` and `IPAddress` are served from 1.33 and
  `storage.k8s.io/v1` `VolumeAttributesClass` and `resource.k8s.io/v1` from 1.34: the v1.35
  stand-in accepts them for an older cluster whose API server has no such kind).

## Transformation

Talos (`config/schemas/config.schema.json`): parsed as JSON; every schema node loses the doc-only
keywords `description`, `markdownDescription`, `x-intellij-html-description`, `title`,
`example`, `examples`, `$comment` (only in schema position: a field *named* like one of them in a
`properties` map stays). Everything else (`$schema`, `$id`, `$defs`, `$ref`, `type`, `enum`,
`pattern`, `required`, `additionalProperties`, `oneOf`, ...) is kept unchanged.

CRDs: the YAML is parsed with PyYAML's safe loader restricted to YAML 1.2 core scalars (only
`true`/`false` are booleans, no timestamps). For every entry of `spec.versions` with
`served: true`, its `schema.openAPIV3Schema` is walked (`properties`, `patternProperties`,
`items`, `additionalProperties`, `allOf`/`anyOf`/`oneOf`/`not`):
- OpenAPI `nullable: true` becomes `"null"` added to `type` (and `null` to `enum`); `nullable` is dropped;
- boolean `exclusiveMinimum`/`exclusiveMaximum` become the draft 2020-12 numeric form;
- `x-kubernetes-int-or-string: true` without `type`/`anyOf` gets `anyOf: [{type: integer}, {type: string}]`;
- the doc-only keywords above are dropped;
- everything else, all `x-kubernetes-*` keys included, is kept unchanged.
The result is wrapped with `$schema` = draft 2020-12, `$id` = `urn:fleetc:crd:<group>:<Kind>:<version>`,
and `properties.apiVersion.const` = `<group>/<version>`, `properties.kind.const` = `<Kind>`,
`apiVersion` and `kind` added to the top-level `required` (the CRD's own identity).
No `additionalProperties: false` is added: the tests close object nodes themselves (strict mode).

Kubernetes built-in kinds (the list is `K8S_KINDS` in `oracles/schemas/produce.py`): per minor,
the kind's component (the one whose `x-kubernetes-group-version-kind` is exactly its group,
version and kind) in the OpenAPI v3 document of its group-version becomes the kind's file, a draft
2020-12 node with `$id` = `urn:fleetc:k8s:<group or core>:<Kind>:<version>` and
`apiVersion`/`kind` pinned and required as for CRDs. Every component the minor's kinds refer to,
transitively, is written once into `kubernetes/<minor>/definitions.json`, under `$defs` (such a
component that appears in several documents must be the same in each, or the producer fails);
each `#/components/schemas/NAME` is rewritten to `#/$defs/NAME`, and every node is converted and
stripped as a CRD's is. A kind file is judged with the definitions of the set's minor merged in as
its `$defs` (`DEFINITIONS` in `index.rs`; fleetc copies only the definitions the kind reaches).

Output: JSON with sorted keys, two-space indentation, non-ASCII kept as UTF-8, one trailing newline.

## Layout

`talos/<minor>/config.schema.json`; `crds/<group>/<module version>/<Kind>_<apiVersion>.json`;
`kubernetes/<minor>/<group or core>/<Kind>_<version>.json` and `kubernetes/<minor>/definitions.json`.
Identical kind files are stored once, under the oldest version that produces them; the definitions
are one file per minor. `index.rs` (generated, included by
`src/upstream/schemas.rs`) embeds every CRD and Kubernetes file once and lists, for every schema set
(module, version), the file of each `apiVersion` and `kind` it serves: the table below, as code.
"""


class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core booleans and no timestamp resolution."""


Yaml12Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _first in "tTfF":
    Yaml12Loader.yaml_implicit_resolvers.setdefault(_first, []).insert(
        0, ("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"))
    )


def fail(msg):
    print(f"produce: {msg}", file=sys.stderr)
    sys.exit(2)


def download(key, ver):
    """Downloads a module version through the proxy; returns (dir, info) after checking its hash."""
    mod, versions = MODULES[key]
    want = dict(versions)[ver]
    env = dict(os.environ)
    env.setdefault("GOPROXY", "https://proxy.golang.org")
    env["GOFLAGS"] = "-mod=mod"
    if mod in NOSUMDB:
        env["GONOSUMDB"] = mod
    with tempfile.TemporaryDirectory() as cwd:  # outside any module
        r = subprocess.run(["go", "mod", "download", "-json", f"{mod}@{ver}"], cwd=cwd, env=env,
                           capture_output=True, text=True)
    try:
        info = json.loads(r.stdout)
    except json.JSONDecodeError:
        fail(f"{mod}@{ver}: go mod download failed: {r.stderr.strip()}")
    if info.get("Error"):
        fail(f"{mod}@{ver}: {info['Error']}")
    if info.get("Sum") != want:
        fail(f"{mod}@{ver}: module hash {info.get('Sum')} is not the pinned {want}")
    origin = (info.get("Origin") or {}).get("Hash")
    if origin and origin != COMMITS.get((key, ver)):
        fail(f"{mod}@{ver}: served commit {origin} is not the recorded {COMMITS.get((key, ver))}")
    return Path(info["Dir"]), info


def strip(node):
    """Drops doc-only keywords from a schema node and its subschemas."""
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k in DOC_KEYS:
            continue
        if k in SUB_ONE:
            out[k] = strip(v)
        elif k in SUB_LIST and isinstance(v, list):
            out[k] = [strip(x) for x in v]
        elif k in SUB_MAP and isinstance(v, dict):
            out[k] = {name: strip(x) for name, x in v.items()}
        else:
            out[k] = v
    return out


def openapi_to_2020(node):
    """OpenAPI v3 (Kubernetes structural schema) node -> draft 2020-12 node."""
    if not isinstance(node, dict):
        return node
    n = {}
    for k, v in node.items():
        if k in SUB_ONE:
            n[k] = openapi_to_2020(v)
        elif k in SUB_LIST and isinstance(v, list):
            n[k] = [openapi_to_2020(x) for x in v]
        elif k in SUB_MAP and isinstance(v, dict):
            n[k] = {name: openapi_to_2020(x) for name, x in v.items()}
        else:
            n[k] = v
    if n.pop("nullable", False) is True:
        if "type" in n:
            t = n["type"] if isinstance(n["type"], list) else [n["type"]]
            n["type"] = t + ["null"] if "null" not in t else t
        if "enum" in n and None not in n["enum"]:
            n["enum"] = n["enum"] + [None]
    for bound, excl in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if isinstance(n.get(excl), bool):
            if n.pop(excl) and bound in n:
                n[excl] = n.pop(bound)
    if n.get("x-kubernetes-int-or-string") is True and "type" not in n and "anyOf" not in n:
        n["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return n


def refs(node):
    """Every component name a node refers to (`#/components/schemas/NAME`)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and v.startswith("#/components/schemas/"):
                yield v[len("#/components/schemas/"):]
            else:
                yield from refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from refs(v)


def rewrite_refs(node):
    """`#/components/schemas/NAME` -> `#/$defs/NAME` (a standalone draft 2020-12 document)."""
    if isinstance(node, dict):
        return {k: ("#/$defs/" + v[len("#/components/schemas/"):]
                    if k == "$ref" and isinstance(v, str) and v.startswith("#/components/schemas/")
                    else rewrite_refs(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [rewrite_refs(v) for v in node]
    return node


def dump(value):
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def minor(ver):
    return ".".join(ver.split(".")[:2])


def produce():
    """Returns {relative path: bytes} for the whole schemas/ folder."""
    files = {}
    # stored file -> {"key", "path", "src", "flags", "versions": [version, ...]}
    stored = {}
    # (key, set version, apiVersion, kind, stored file): the index of every schema set
    index = []
    # (key, set version, stored file): the definitions the set's Kubernetes kinds refer to
    definitions = []
    dirs = {}
    by_bytes = {}

    def module(key, ver):
        if (key, ver) not in dirs:
            dirs[(key, ver)] = download(key, ver)
        return dirs[(key, ver)]

    def store(rel_of, data, key, ver, set_ver, path, s_src, flags, api, kind):
        """Stores `data` once: under the first version that produced it."""
        rel = by_bytes.get((key, api, kind, data))
        if rel is None:
            rel = rel_of(set_ver)
            by_bytes[(key, api, kind, data)] = rel
            files[rel] = data
            stored[rel] = {"key": key, "path": path, "src": [], "flags": flags, "versions": []}
        stored[rel]["versions"].append(ver)
        if s_src not in stored[rel]["src"]:
            stored[rel]["src"].append(s_src)
        index.append((key, set_ver, api, kind, rel))

    for out_dir, ver in TALOS:
        d, _ = module("talos", ver)
        src = (d / TALOS_PATH).read_bytes()
        data = dump(strip(json.loads(src)))
        rel = f"talos/{out_dir}/config.schema.json"
        files[rel] = data
        stored[rel] = {"key": "talos", "path": TALOS_PATH, "src": [sha256(src)], "flags": "-", "versions": [ver]}
        types_src = (d / TALOS_TYPES / "v1alpha1_types.go").read_bytes()
        rel = f"talos/{out_dir}/deprecated.json"
        files[rel] = dump(deprecated(out_dir, ver, d, json.loads(data)))
        stored[rel] = {"key": "talos", "path": TALOS_TYPES + "/v1alpha1_types.go", "src": [sha256(types_src)],
                       "flags": "-", "versions": [ver]}

    for key, path, kind in CRDS:
        for ver, _ in MODULES[key][1]:
            d, _ = module(key, ver)
            src = (d / path).read_bytes()
            pinned = PINNED_SOURCE_SHA256.get((key, path))
            if pinned and sha256(src) != pinned:
                fail(f"{path} in {MODULES[key][0]}@{ver} has sha256 {sha256(src)}, not the pinned {pinned}")
            crd = yaml.load(src, Loader=Yaml12Loader)
            if crd.get("kind") != "CustomResourceDefinition" or crd["spec"]["names"]["kind"] != kind:
                fail(f"{path}: not the CRD of {kind}")
            group = crd["spec"]["group"]
            served = [v for v in crd["spec"]["versions"] if v.get("served")]
            if not served:
                fail(f"{path}: no served version")
            for v in served:
                schema = strip(openapi_to_2020(v["schema"]["openAPIV3Schema"]))
                props = schema.setdefault("properties", {})
                props.setdefault("apiVersion", {})["const"] = f"{group}/{v['name']}"
                props.setdefault("kind", {})["const"] = kind
                req = schema.get("required", [])
                schema["required"] = req + [r for r in ("apiVersion", "kind") if r not in req]
                doc = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                       "$id": f"urn:fleetc:crd:{group}:{kind}:{v['name']}", **schema}
                flags = "/".join(str(bool(v.get(f))).lower() for f in ("served", "storage", "deprecated"))
                store(lambda sv, g=group, n=v["name"]: f"crds/{g}/{sv}/{kind}_{n}.json", dump(doc), key, ver, ver,
                      path, sha256(src), flags, f"{group}/{v['name']}", kind)

    k8s_sources = []  # (version, file, sha256) of every OpenAPI document read
    for kver, _ in MODULES["kubernetes"][1]:
        d, _ = module("kubernetes", kver)
        sv = "v" + minor(kver[1:])
        comps = {}  # component name -> (its node, the file it was first read from)
        roots = []  # (api, kind, group, version, component, file)
        for fname, group, ver, kinds in K8S_KINDS:
            path = f"{K8S_OPENAPI_DIR}/{fname}"
            src = (d / path).read_bytes()
            k8s_sources.append((kver, path, sha256(src)))
            these = json.loads(src)["components"]["schemas"]
            for name, node in these.items():
                comps.setdefault(name, []).append((node, fname))
            for kind in kinds:
                gvk = {"group": group, "version": ver, "kind": kind}
                named = [n for n, v in these.items() if v.get("x-kubernetes-group-version-kind") == [gvk]]
                if len(named) != 1:
                    fail(f"k8s.io/kubernetes@{kver} {path}: {len(named)} components are {group or 'core'}/{ver} {kind}")
                roots.append((f"{group}/{ver}" if group else ver, kind, group, ver, named[0], path))
        defs = {}

        def collect(name):
            if name in defs:
                return
            (node, first), *rest = comps[name]
            for other, fname in rest:
                if other != node:
                    fail(f"k8s.io/kubernetes@{kver}: component {name} differs between {first} and {fname}")
            defs[name] = node
            for ref in refs(node):
                collect(ref)

        for *_, comp, _ in roots:
            for ref in refs(comps[comp][0][0]):
                collect(ref)
        for api, kind, group, ver, comp, path in roots:
            root = strip(openapi_to_2020(rewrite_refs(comps[comp][0][0])))
            props = root.setdefault("properties", {})
            props.setdefault("apiVersion", {})["const"] = api
            props.setdefault("kind", {})["const"] = kind
            req = root.get("required", [])
            root["required"] = req + [r for r in ("apiVersion", "kind") if r not in req]
            doc = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                   "$id": f"urn:fleetc:k8s:{group or 'core'}:{kind}:{ver}", **root}
            store(lambda v, g=group, k=kind, n=ver: f"kubernetes/{v}/{g or 'core'}/{k}_{n}.json", dump(doc),
                  "kubernetes", kver, sv, path + "#" + comp, sha256((d / path).read_bytes()), "-", api, kind)
        doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"urn:fleetc:k8s:definitions:{sv}",
               "$defs": {n: strip(openapi_to_2020(rewrite_refs(v))) for n, v in sorted(defs.items())}}
        rel = f"kubernetes/{sv}/definitions.json"
        files[rel] = dump(doc)
        stored[rel] = {"key": "kubernetes", "path": f"{K8S_OPENAPI_DIR}/*.json (below)", "src": ["below"],
                       "flags": "-", "versions": [kver]}
        definitions.append(("kubernetes", sv, rel))

    lines = [
        "# Conformance schemas",
        "",
        "Produced by `oracles/schemas/produce` from upstream Go modules (downloaded through the Go",
        "module proxy); `oracles/schemas/produce --check` verifies that this folder is what it",
        "produces. Do not edit by hand: this README and `index.rs` are generated too. `fleetc build`",
        "embeds them (`src/upstream/schemas.rs`) and judges every document it",
        "writes with the set of the version the receiving cluster pins; the conformance tests",
        "(`tests/talos_conformance.rs`, `tests/capi_conformance.rs`, `tests/argocd_conformance.rs`)",
        "read these files and nothing outside the repository.",
        "",
        "## Files",
        "",
        "Each file is stored once; `versions` lists every module version that produces exactly its",
        "bytes. `commit` is the upstream commit of each such version as the module proxy reports it",
        "(`Origin.Hash`; `-` where it reports none). `source sha256` is that of the file in the",
        "module (one per version where they differ), `produced sha256` that of the file here.",
        "",
        "| file | module | versions | commit | path in module | served/storage/deprecated | source sha256 | produced sha256 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rel, st in stored.items():
        key = st["key"]
        mod = MODULES[key][0]
        vers = ", ".join(st["versions"])
        commits = ", ".join(f"`{COMMITS[(key, v)]}`" if (key, v) in COMMITS else "-" for v in st["versions"])
        srcs = ", ".join(f"`{x}`" for x in st["src"])
        lines.append(f"| `{rel}` | `{mod}` | {vers} | {commits} | `{st['path']}` | {st['flags']} | {srcs} | `{sha256(files[rel])}` |")
    lines += ["", "## Schema sets", "",
              "What `index.rs` says: for each module version (Kubernetes: minor), the file of each kind.", "",
              "| set | apiVersion | kind | file |", "|---|---|---|---|"]
    for key, sv, api, kind, rel in sorted(index, key=lambda r: (r[0], tuple(int(x) for x in r[1][1:].split(".")), r[2], r[3])):
        lines.append(f"| {key} {sv} | `{api}` | {kind} | `{rel}` |")
    lines += ["", "What `index.rs` calls `DEFINITIONS`: the file the `$ref`s of a set's Kubernetes kinds point into.", "",
              "| set | definitions |", "|---|---|"]
    lines += [f"| {k} {sv} | `{rel}` |" for k, sv, rel in definitions]
    lines += ["", "Kubernetes OpenAPI documents read (`k8s.io/kubernetes`, sha256 of each):", "",
              "| version | file | sha256 |", "|---|---|---|"]
    lines += [f"| {v} | `{f}` | `{h}` |" for v, f, h in k8s_sources]
    lines += ["", "Module hashes (`h1:`, as `go mod download -json` reports them):", ""]
    for key, ver in sorted(dirs, key=lambda kv: (MODULES[kv[0]][0], tuple(int(x) for x in kv[1][1:].split(".")))):
        lines.append(f"- `{MODULES[key][0]}@{ver}`: `{dict(MODULES[key][1])[ver]}`")
    lines += ["", NOTES.rstrip("\n"), ""]
    files["README.md"] = "\n".join(lines).encode("utf-8")

    rels = [r for r in files if r.startswith(("crds/", "kubernetes/"))]
    pos = {r: i for i, r in enumerate(rels)}
    rs = [
        "// Generated by oracles/schemas/produce (oracles/schemas/produce.py); do not edit.",
        "// Included by src/upstream/schemas.rs: every CRD and Kubernetes schema file of schemas/, once,",
        "// and for every schema set (module key, version) the file of each apiVersion and kind.",
        "",
        "/// `(file, text)`.",
        "pub(crate) const FILES: &[(&str, &str)] = &[",
    ]
    rs += [f'    ("{r}", include_str!("{r}")),' for r in rels]
    rs += ["];", "", "/// `(module key, version, apiVersion, kind, index into FILES)`.",
           "pub(crate) const INDEX: &[(&str, &str, &str, &str, usize)] = &["]
    rs += [f'    ("{k}", "{sv}", "{a}", "{kd}", {pos[r]}),' for k, sv, a, kd, r in index]
    rs += ["];", "", "/// `(module key, version, index into FILES)`: the definitions (`$defs`) the `$ref`s of the",
           "/// set's kind files point into (Kubernetes: one file per minor).",
           "pub(crate) const DEFINITIONS: &[(&str, &str, usize)] = &["]
    rs += [f'    ("{k}", "{sv}", {pos[r]}),' for k, sv, r in definitions]
    rs += ["];", ""]
    files["index.rs"] = "\n".join(rs).encode("utf-8")
    return files


def decoded(out_dir, mod_dir):
    """Runs oracles/schemas/decoded against the machinery of oracles/talos/<out_dir>/go.mod."""
    import shutil
    src = REPO / "oracles" / "talos" / out_dir
    with tempfile.TemporaryDirectory() as tmp:
        for p in src.iterdir():
            if p.name == "main.go":
                continue
            (shutil.copytree if p.is_dir() else shutil.copy)(p, Path(tmp) / p.name)
        shutil.copy(DECODED, Path(tmp) / "main.go")
        env = dict(os.environ, GOFLAGS="-mod=mod -buildvcs=false", GOTOOLCHAIN="local")
        env.setdefault("GOPROXY", "https://proxy.golang.org")
        r = subprocess.run(["nice", "go", "run", ".", str(mod_dir / TALOS_TYPES)], cwd=tmp, env=env,
                           capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"oracles/schemas/decoded for {out_dir}: {r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout)


def schema_has(schema, path):
    """Whether a dotted path (`machine.network`, `a[].b`) is a field of config.schema.json's v1alpha1.Config."""
    defs = schema["$defs"]
    node = defs["v1alpha1.Config"]

    def deref(n):
        while isinstance(n, dict) and "$ref" in n:
            n = defs[n["$ref"].rsplit("/", 1)[1]]
        return n

    for part in path.split("."):
        name, items = part.rstrip("[]"), part.count("[]")
        node = deref(node)
        props = node.get("properties", {}) if isinstance(node, dict) else {}
        if name not in props:
            return False
        node = props[name]
        for _ in range(items):
            node = deref(node)
            node = node.get("items") or node.get("additionalProperties") or {}
    return True


def deprecated(out_dir, ver, mod_dir, schema):
    """schemas/talos/<minor>/deprecated.json: the decoded fields config.schema.json leaves out."""
    kinds = sorted({k for d in schema["$defs"].values() for k in (d.get("properties", {}).get("kind", {}).get("enum") or [])})
    fields = []
    kept = set()
    for e in decoded(out_dir, mod_dir):
        if not e.get("within"):
            if schema_has(schema, e["path"]):
                continue  # documented after all: the schema judges it
            kept.add(e["path"])
        elif e["within"] not in kept:
            continue
        names = re.findall(r"\b[A-Z][A-Za-z0-9*]*Config\b", e["deprecated"])
        repl = []
        for n in names:
            rx = re.compile("^" + re.escape(n).replace("\\*", "[A-Za-z0-9]*") + "$")
            repl += [k for k in kinds if rx.match(k) and k not in repl]
        f = {"path": e["path"], "go_type": e["go_type"], "deprecated": e["deprecated"], "replacements": repl}
        if e.get("within"):
            f["within"] = e["within"]
        else:
            f["schema"] = e["schema"]
        fields.append(f)
    return {
        "machinery": f"{MODULES['talos'][0]}@{ver}",
        "source": f"{TALOS_TYPES}: fields marked `docgen:nodoc`, which {TALOS_PATH} leaves out but the decoder reads",
        "fields": fields,
    }


def existing(out):
    if not out.is_dir():
        return {}
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def produced():
    """produce()'s files, once per input: kept in the harness cache under a key of this script,
    the decoder's sources and the Go version, behind a lock, so `oracles/run`'s check and the
    self-test beside it (which run at the same time) produce once and compare twice."""
    cache = Path(os.environ.get("FLEETC_ORACLES_CACHE", Path.home() / ".cache/fleetc-oracles"))
    h = hashlib.sha256(Path(__file__).read_bytes())
    for f in sorted((Path(__file__).parent / "decoded").rglob("*")):
        if f.is_file():
            h.update(f.name.encode() + f.read_bytes())
    h.update(subprocess.run(["go", "version"], capture_output=True, text=True).stdout.encode())
    d = cache / "schemas-produced" / h.hexdigest()[:16]
    (cache / "locks").mkdir(parents=True, exist_ok=True)
    with open(cache / "locks" / f"schemas-{d.name}", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (d / ".complete").exists():
            return {str(p.relative_to(d)): p.read_bytes() for p in d.rglob("*") if p.is_file() and p.name != ".complete"}
        files = produce()
        d.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=d.parent))
        for rel, data in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
        (tmp / ".complete").write_text("")
        if d.exists():
            shutil.rmtree(d)
        os.replace(tmp, d)
        return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--warm", action="store_true", help="only produce into the harness cache (oracles/build)")
    ap.add_argument("--out", type=Path, default=REPO / "schemas")
    a = ap.parse_args()
    files = produced()
    if a.warm:
        print(f"produce: {len(files)} files in the harness cache")
        return
    have = existing(a.out)
    if a.check:
        bad = 0
        for rel in sorted(set(files) | set(have)):
            if rel not in have:
                print(f"FAIL schemas: {rel}: missing (not committed)")
            elif rel not in files:
                print(f"FAIL schemas: {rel}: extra (the producer does not make it)")
            elif have[rel] != files[rel]:
                print(f"FAIL schemas: {rel}: differs (sha256 {sha256(have[rel])}, produced {sha256(files[rel])})")
            else:
                print(f"ok schemas: {rel}")
                continue
            bad += 1
        sys.exit(1 if bad else 0)
    for rel in sorted(set(have) - set(files)):
        (a.out / rel).unlink()
    for rel, data in sorted(files.items()):
        p = a.out / rel
        if have.get(rel) != data:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
    for d in sorted((p for p in a.out.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()
    print(f"produce: wrote {len(files)} files to {a.out}")


if __name__ == "__main__":
    main()
