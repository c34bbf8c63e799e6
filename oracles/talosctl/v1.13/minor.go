package main

import "github.com/siderolabs/talos/pkg/machinery/config/generate"

// What talosctl v1.13.9's writeConfig adds for the flags fleetc never passes, beyond main.go's
// list: nothing (siderolabs/talos v1.13.9 cmd/talosctl/cmd/mgmt/gen/config.go l.228-234).
var minorGenOptions []generate.Option
