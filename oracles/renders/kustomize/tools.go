//go:build tools

// The renders harness builds kustomize's own command (sigs.k8s.io/kustomize/kustomize/v5) from
// this module, at the version the Cluster API Operator's release recipe pins
// (kubernetes-sigs/cluster-api-operator v0.29.0 `Makefile` l.90, `KUSTOMIZE_VER := v5.7.1`);
// this file only pins it in go.mod.
package tools

import _ "sigs.k8s.io/kustomize/kustomize/v5"
