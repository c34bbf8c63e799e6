package main

import "github.com/siderolabs/talos/pkg/machinery/config/generate"

// What talosctl v1.12.6's writeConfig adds beyond main.go's list: `--persist`, default true,
// passed as generate.WithPersist (siderolabs/talos v1.12.6 cmd/talosctl/cmd/mgmt/gen/config.go
// l.236 and l.445; v1.13 dropped the flag). Everything else main.go cites is the same at both
// tags (`git diff v1.12.6 v1.13.9 -- cmd/talosctl/cmd/mgmt/gen/`: only this and --with-kubespan's
// option, a flag fleetc never passes).
var minorGenOptions = []generate.Option{generate.WithPersist(true)}
