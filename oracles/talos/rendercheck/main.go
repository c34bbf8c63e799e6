// rendercheck BUNDLE CLUSTER ENDPOINT K8S TALOS TYPE INSTALLER BASEPATCHES NODEPATCH USERPATCHES
// (patch lists comma-separated paths). The design check behind `fleetc talos render`'s one
// talosctl call per pool (docs/performance.md): with Talos machinery's own generator (the
// bundle.NewBundle and Serialize that `talosctl gen config` v1.13.9 calls), it renders a node
// as one call with the node's patch among the others would, and as the group's config with
// the node's documents merged into it in place (appended when new), and prints "same" when
// the bytes are equal; else DIFFERENT, with both written to /dev/shm/rc-*.yaml.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/bundle"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/merge"
	cfgdoc "github.com/siderolabs/talos/pkg/machinery/config/config"
)

func split(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		out = append(out, "@"+p)
	}
	return out
}

func render(a []string, patches []string) []byte {
	sb, err := secrets.LoadBundle(a[0])
	must(err)
	vc, err := config.ParseContractFromVersion(a[4])
	must(err)
	ps, err := configpatcher.LoadPatches(patches)
	must(err)
	b, err := bundle.NewBundle(
		bundle.WithInputOptions(&bundle.InputOptions{ClusterName: a[1], Endpoint: a[2], KubeVersion: a[3],
			GenOptions: []generate.Option{generate.WithVersionContract(vc), generate.WithSecretsBundle(sb),
				generate.WithInstallDisk("/dev/sda"), generate.WithInstallImage(a[6]), generate.WithDNSDomain("cluster.local"),
				generate.WithClusterDiscovery(true)}}),
		bundle.WithPatch(ps))
	must(err)
	t := machine.TypeWorker
	if a[5] == "controlplane" {
		t = machine.TypeControlPlane
	}
	out, err := b.Serialize(encoder.CommentsDisabled, t)
	must(err)
	return out
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

func main() {
	a := os.Args[1:]
	base, node, user := split(a[7]), a[8], split(a[9])
	perNode := render(a, append(append(append([]string{}, base...), "@"+node), user...))
	group := render(a, append(append([]string{}, base...), user...))
	// The group's documents, each encoded alone; a node document whose ID the group has is
	// merged into it (machinery's strategic merge) and re-encoded in place, else appended.
	groupCfg, err := configloader.NewFromBytes(group)
	must(err)
	nodeCfg, err := configloader.NewFromFile(node)
	must(err)
	id := func(d cfgdoc.Document) string {
		s := d.APIVersion() + "/" + d.Kind()
		if n, ok := d.(cfgdoc.NamedDocument); ok {
			s += "/" + n.Name()
		}
		return s
	}
	docs := groupCfg.Clone().Documents()
	for _, nd := range nodeCfg.Documents() {
		found := false
		for i, gd := range docs {
			if gd.APIVersion() != "" && id(gd) == id(nd) {
				must(merge.Merge(gd, nd))
				docs[i] = gd
				found = true
			}
		}
		if !found {
			docs = append(docs, nd)
		}
	}
	var buf bytes.Buffer
	for i, d := range docs {
		b, err := encoder.NewEncoder(d, encoder.WithComments(encoder.CommentsDisabled)).Encode()
		must(err)
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	if bytes.Equal(perNode, buf.Bytes()) {
		fmt.Println("same")
		return
	}
	fmt.Println("DIFFERENT")
	os.WriteFile("/dev/shm/rc-pernode.yaml", perNode, 0o600)
	os.WriteFile("/dev/shm/rc-group.yaml", buf.Bytes(), 0o600)
}
