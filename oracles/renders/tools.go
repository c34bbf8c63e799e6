//go:build tools

// The renders harness builds helm's own command (helm.sh/helm/v3/cmd/helm) from this module;
// this file only pins it in go.mod. The chart sources (Cilium, cert-manager, External Secrets,
// Argo CD's install.yaml) are module zips downloaded with `go mod download`, not imported.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
