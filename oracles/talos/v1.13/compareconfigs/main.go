// compareconfigs: compares two Talos machine configs as Talos machinery compares them, and prints
// every difference as a path with both values. A third command of the v1.13 talos oracle module
// (../go.mod: the same machinery pin, v1.13.9), used by oracles/import/check to compare the
// config `fleetc talos render` writes for a node of an imported fleet with the one
// `talhelper genconfig` writes for that node from the original talconfig.
//
// Usage: compareconfigs A.yaml B.yaml
//
// "As Talos machinery compares configs" means what `talosctl apply-config --dry-run` and the
// machine's own config-change check do: siderolabs/talos v1.13.9
// pkg/machinery/config/configdiff/configdiff.go (DiffConfigs) encodes each loaded config with
// encoder.CommentsDisabled and diffs the two texts. So each file here is
//
//  1. loaded with configloader.NewFromBytes (pkg/machinery/config/configloader/configloader.go
//     l.73), the node's own loader: the v1alpha1 document and every multi-doc (by kind) decoded
//     into machinery's types, unknown fields and unknown kinds refused;
//
//  2. re-encoded with EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
//     (pkg/machinery/config/container/container.go l.527-560, configdiff.go l.24-35): machinery
//     writes every field in its own order and drops what its encoder leaves out (empty values,
//     `omitempty`), so two configs that mean the same are the same text whatever their bytes,
//     key order or comments were;
//
//  3. split into its documents, keyed by kind and name (`v1alpha1` for the v1alpha1 document,
//     `<kind>/<name>` for a named multi-doc, `<kind>` for an unnamed one), because the container
//     holds a set of documents (container.New refuses two of the same kind and name,
//     container.go) and the order in which the two tools appended them means nothing to the node.
//
//  4. a field whose absence the node reads as one value, set to exactly that value, dropped
//     (`defaults`, each with the accessor that reads it): machinery's encoder keeps a pointer it
//     was given, so a generator that writes the default explicitly and one that leaves it out
//     encode differently for the same behaviour. A map left empty by it is dropped too.
//
// Then every document is compared as a tree: maps key by key, lists item by item. Each
// difference is one line `DIFF <doc> <path>: <a> | <b>` (values as one-line JSON, `absent` when
// a side lacks the key or the document). Exit 0 when the configs are the same, 1 when they differ,
// 2 when a file does not load (its error on stderr).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"gopkg.in/yaml.v3"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: compareconfigs A.yaml B.yaml")
		os.Exit(2)
	}

	a, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "compareconfigs: %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}

	b, err := load(os.Args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "compareconfigs: %s: %v\n", os.Args[2], err)
		os.Exit(2)
	}

	var diffs []string

	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}

	for k := range b {
		keys[k] = true
	}

	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}

	sort.Strings(sorted)

	for _, k := range sorted {
		da, oka := a[k]
		db, okb := b[k]

		switch {
		case !oka:
			diffs = append(diffs, fmt.Sprintf("DIFF %s /: absent | %s", k, show(db)))
		case !okb:
			diffs = append(diffs, fmt.Sprintf("DIFF %s /: %s | absent", k, show(da)))
		default:
			compare(k, "", da, db, &diffs)
		}
	}

	for _, d := range diffs {
		fmt.Println(d)
	}

	if len(diffs) > 0 {
		os.Exit(1)
	}
}

// load reads a machine config with the node's loader and returns its documents as machinery
// re-encodes them, keyed by kind and name.
func load(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}

	cfg, err := configloader.NewFromBytes(raw)
	if err != nil {
		return nil, err
	}

	text, err := cfg.EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
	if err != nil {
		return nil, err
	}

	docs := map[string]any{}
	dec := yaml.NewDecoder(bytes.NewReader(text))

	for {
		var doc map[string]any

		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}

			return nil, err
		}

		if doc == nil {
			continue
		}

		key := "v1alpha1"
		if kind, ok := doc["kind"].(string); ok {
			key = kind
			if name, ok := doc["name"].(string); ok {
				key += "/" + name
			}
		} else if v, ok := doc["version"].(string); ok {
			key = v
		}

		if _, dup := docs[key]; dup {
			return nil, fmt.Errorf("two documents %s", key)
		}

		dropDefaults(key, doc)
		docs[key] = doc
	}

	return docs, nil
}

// defaults: (document key, path, value) the node reads the same as an absent field.
var defaults = []struct {
	doc, path string
	value     any
	// why: the accessor, siderolabs/talos v1.13.9 pkg/machinery.
	why string
}{
	{"ResolverConfig", "/searchDomains/disableDefault", false,
		"config/types/network/resolver.go l.175-177: DisableSearchDomain() is pointer.SafeDeref(SearchDisableDefault)"},
	{"v1alpha1", "/cluster/network/cni", map[string]any{"name": "flannel"},
		"config/types/v1alpha1/v1alpha1_clusterconfig.go l.200-212: CNI() is flannel when ClusterNetwork.CNI is nil"},
}

// dropDefaults removes from doc every field of `defaults` at its default value, and the maps that
// leaves empty.
func dropDefaults(key string, doc map[string]any) {
	for _, d := range defaults {
		if d.doc != key {
			continue
		}

		segs := strings.Split(strings.TrimPrefix(d.path, "/"), "/")
		dropAt(doc, segs, d.value)
	}
}

func dropAt(m map[string]any, segs []string, value any) {
	v, ok := m[segs[0]]
	if !ok {
		return
	}

	if len(segs) == 1 {
		if show(v) == show(value) {
			delete(m, segs[0])
		}

		return
	}

	sub, ok := v.(map[string]any)
	if !ok {
		return
	}

	dropAt(sub, segs[1:], value)

	if len(sub) == 0 {
		delete(m, segs[0])
	}
}

func compare(doc, path string, a, b any, diffs *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}

		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}

		for k := range bv {
			keys[k] = true
		}

		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}

		sort.Strings(sorted)

		for _, k := range sorted {
			x, okx := av[k]
			y, oky := bv[k]
			p := path + "/" + k

			switch {
			case !okx:
				*diffs = append(*diffs, fmt.Sprintf("DIFF %s %s: absent | %s", doc, p, show(y)))
			case !oky:
				*diffs = append(*diffs, fmt.Sprintf("DIFF %s %s: %s | absent", doc, p, show(x)))
			default:
				compare(doc, p, x, y, diffs)
			}
		}

		return
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}

		for i := range av {
			compare(doc, path+"/"+strconv.Itoa(i), av[i], bv[i], diffs)
		}

		return
	default:
		if show(a) == show(b) {
			return
		}
	}

	if path == "" {
		path = "/"
	}

	*diffs = append(*diffs, fmt.Sprintf("DIFF %s %s: %s | %s", doc, path, show(a), show(b)))
}

func show(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}

	return string(out)
}
