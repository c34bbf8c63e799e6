// corpus-oracle: Talos machinery v1.13.9 judges every real-world patch file of the corpus
// (/work/shared/corpus: talhelper and topf fleets from public repositories) as a patch of one
// fixed Talos 1.13 cluster that fleetc builds (tests/corpus/fleet/fleet.kdl). It is a second
// command of the v1.13 talos oracle module (../go.mod: the same machinery pin and replace), so
// it judges with exactly the code oracles/talos/check uses. See tests/corpus/README.md for the
// rules (which files are patches, how templated files are handled) and oracles/corpus/check
// for the entry point.
//
// Usage: corpus-oracle --corpus DIR --base DIR --cluster NAME --endpoint URL --kubernetes V
//
//	--cp HOST --worker HOST --worker-pool POOL
//
// With --generated FILE (and no --corpus) it judges the property test's generated patches
// instead (tests/patch_property.rs), each at cluster level, in the same TSV format.
//
// --base is fleetc's out/talos/<env>/<cluster> of the fixture. The control-plane and worker
// configs are generated the way talosctl gen config generates them for `fleetc talos render`
// (the talos oracle's talosctlJobs: common.yaml, the role's document, the node's document as
// --config-patch, bundle.WithPatch), then each corpus patch is loaded with
// configpatcher.LoadPatch and applied with configpatcher.Apply to each config, and the result is
// loaded strictly (configloader.NewFromBytes) and validated (Validate) in the fixture's runtime
// mode (Scaleway boots in cloud mode), as the node does. It prints one TSV line per file:
// corpus path, kind, sha256 of the bytes judged, verdict (accept | refuse | templated), message.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/bundle"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/constants"
	"gopkg.in/yaml.v3"
)

// runtimeMode implements validation.RuntimeMode as siderolabs/talos v1.13.9
// internal/app/machined/pkg/runtime/mode.go does (the talos oracle's runtimeMode).
type runtimeMode struct{ name string }

func (m runtimeMode) String() string        { return m.name }
func (m runtimeMode) RequiresInstall() bool { return m.name == "metal" }
func (m runtimeMode) InContainer() bool     { return m.name == "container" }

// A corpus file to judge.
type entry struct {
	rel   string // path inside the corpus
	level string // cluster | control-plane | worker: where the fleet applies it
	kind  string // patch | substituted | templated
	data  []byte // the bytes judged (after substitution)
	why   string // templated: why it cannot be judged
}

func main() {
	corpus := flag.String("corpus", "", "the corpus directory (README.md, MANIFEST.tsv, talhelper/, topf/)")
	base := flag.String("base", "", "fleetc's out/talos/<env>/<cluster> of the fixture fleet")
	cluster := flag.String("cluster", "", "the cluster's name")
	endpoint := flag.String("endpoint", "", "the control-plane endpoint URL")
	k8s := flag.String("kubernetes", "", "the Kubernetes version")
	cp := flag.String("cp", "", "a control-plane node's hostname (out/…/nodes/<host>.yaml)")
	worker := flag.String("worker", "", "a worker node's hostname")
	pool := flag.String("worker-pool", "", "the worker's pool (out/…/workers/<pool>.yaml)")
	mode := flag.String("mode", "cloud", "the node's runtime mode: cloud | metal")
	fleetc := flag.String("fleetc", "", "fleetc's binary: an RFC 6902 patch is judged as the strategic merge fleetc writes for it")
	fixture := flag.String("fixture", "", "the fixture's fleet.kdl (with --fleetc)")
	generated := flag.String("generated", "", "instead of the corpus: a generated set (tests/corpus/generated-v1.13.patches, `id<TAB>patch` lines), each judged at cluster level")
	flag.Parse()
	if *generated != "" && *corpus == "" {
		*corpus = "-"
	}
	if *corpus == "" || *base == "" || *cluster == "" || *endpoint == "" || *k8s == "" || *cp == "" || *worker == "" || *pool == "" {
		fmt.Fprintln(os.Stderr, "usage: corpus-oracle --corpus DIR --base DIR --cluster NAME --endpoint URL --kubernetes V --cp HOST --worker HOST --worker-pool POOL [--mode cloud|metal]")
		os.Exit(2)
	}
	rm := runtimeMode{*mode}

	// Two configs of the fixture: a control-plane node's and a worker's.
	vc, err := config.ParseContractFromVersion("v1.13")
	must(err)
	sb, err := secrets.NewBundle(secrets.NewFixedClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), vc)
	must(err)
	type target struct {
		name string
		cfg  []byte
	}
	var targets []target
	for _, t := range []struct {
		name  string
		typ   machine.Type
		files []string
	}{
		{"control-plane", machine.TypeControlPlane, []string{"common.yaml", "controlplane.yaml", "nodes/" + *cp + ".yaml"}},
		{"worker", machine.TypeWorker, []string{"common.yaml", "workers/" + *pool + ".yaml", "nodes/" + *worker + ".yaml"}},
	} {
		b, err := generateConfig(*base, t.files, t.typ, vc, sb, *cluster, *endpoint, *k8s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "corpus-oracle: the fixture's %s config: %v\n", t.name, err)
			os.Exit(2)
		}
		// The fixture itself must pass, or every verdict below would be the fixture's.
		c, err := configloader.NewFromBytes(b)
		if err == nil {
			_, err = c.Validate(rm)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "corpus-oracle: the fixture's %s config does not validate: %v\n", t.name, err)
			os.Exit(2)
		}
		targets = append(targets, target{t.name, b})
	}

	var entries []entry
	if *generated != "" {
		entries, err = readGenerated(*generated)
	} else {
		entries, err = collect(*corpus)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus-oracle:", err)
		os.Exit(2)
	}
	fmt.Println("# path\tlevel\tkind\tsha256\tverdict\tmessage")
	for _, e := range entries {
		sum := sha256.Sum256(e.data)
		h := hex.EncodeToString(sum[:])
		if e.kind == "templated" {
			fmt.Printf("%s\t%s\t%s\t%s\ttemplated\t%s\n", e.rel, e.level, e.kind, h, e.why)
			continue
		}
		verdict, msg := "accept", ""
		var warnings []string
		data, note := e.data, ""
		if *fleetc != "" && restatesEphemeralWithoutSelector(e.data) {
			// Talos's merge would empty fleetc's EPHEMERAL selector (pkg/machinery/cel/cel.go
			// Expression.Merge), so fleetc writes the patch with its selector added: judge that.
			if conv, err := convertWithFleetc(*fleetc, *fixture, e.data); err == nil {
				data, note = conv, "completed by fleetc: "
			} else {
				note = "fleetc does not complete it (" + oneLine(err.Error()) + "): "
			}
		}
		if *fleetc != "" && isJSON6902(e.data) {
			// Talos refuses a JSON 6902 patch on a multi-document config (configpatcher/apply.go,
			// json6902.go l.26-28), and every fleetc config is one: fleetc hands the consumers the
			// strategic merge it converts the file to, so those are the bytes to judge.
			if conv, err := convertWithFleetc(*fleetc, *fixture, e.data); err == nil {
				data, note = conv, "converted by fleetc: "
			} else {
				note = "fleetc does not convert it (" + oneLine(err.Error()) + "): "
			}
		}
		for _, t := range targets {
			if e.level != "cluster" && e.level != t.name {
				continue
			}
			w, err := judge(data, t.cfg, rm)
			if err != nil {
				verdict, msg = "refuse", t.name+": "+oneLine(err.Error())
				break
			}
			warnings = append(warnings, w...)
		}
		if verdict == "accept" && len(warnings) > 0 {
			msg = fmt.Sprintf("%d warning(s): %s", len(warnings), oneLine(strings.Join(dedup(warnings), "; ")))
		}
		msg = note + msg
		fmt.Printf("%s\t%s\t%s\t%s\t%s\t%s\n", e.rel, e.level, e.kind, h, verdict, msg)
	}
}

// generateConfig: the talos oracle's genBundle for talosctl (siderolabs/talos v1.13.9
// cmd/talosctl/cmd/mgmt/gen/config.go GenerateConfigBundle): bundle.NewBundle with fleetc's
// documents as --config-patch (bundle.WithPatch), then Serialize.
func generateConfig(base string, files []string, typ machine.Type, vc *config.VersionContract, sb *secrets.Bundle, cluster, endpoint, k8s string) ([]byte, error) {
	var ps []configpatcher.Patch
	image := ""
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(base, f))
		if err != nil {
			return nil, err
		}
		p, err := configpatcher.LoadPatch(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		ps = append(ps, p)
		var m struct {
			Machine struct {
				Install struct {
					Image string `yaml:"image"`
				} `yaml:"install"`
			} `yaml:"machine"`
		}
		if yaml.Unmarshal(b, &m) == nil && m.Machine.Install.Image != "" {
			image = m.Machine.Install.Image
		}
	}
	if image == "" {
		return nil, fmt.Errorf("no machine.install.image in %s", strings.Join(files, ", "))
	}
	b, err := bundle.NewBundle(
		bundle.WithInputOptions(&bundle.InputOptions{
			ClusterName: cluster,
			Endpoint:    endpoint,
			KubeVersion: strings.TrimPrefix(k8s, "v"),
			GenOptions: []generate.Option{
				generate.WithVersionContract(vc),
				generate.WithSecretsBundle(sb),
				generate.WithInstallDisk("/dev/sda"),
				generate.WithInstallImage(image),
				generate.WithAdditionalSubjectAltNames(nil),
				generate.WithDNSDomain(constants.DefaultDNSDomain),
				generate.WithClusterDiscovery(true),
			},
		}),
		bundle.WithVerbose(false),
		bundle.WithPatch(ps),
	)
	if err != nil {
		return nil, err
	}
	return b.Serialize(encoder.CommentsDisabled, typ)
}

// judge: the patch as every consumer applies one (configpatcher.LoadPatch, configpatcher.Apply),
// then the node's strict load and Validate (v1alpha1_server.go l.207-224 at v1.13.9).
func judge(patchBytes, cfg []byte, mode runtimeMode) ([]string, error) {
	p, err := configpatcher.LoadPatch(patchBytes)
	if err != nil {
		return nil, fmt.Errorf("LoadPatch: %w", err)
	}
	out, err := configpatcher.Apply(configpatcher.WithBytes(cfg), []configpatcher.Patch{p})
	if err != nil {
		return nil, fmt.Errorf("Apply: %w", err)
	}
	b, err := out.Bytes()
	if err != nil {
		return nil, fmt.Errorf("encoding the patched config: %w", err)
	}
	c, err := configloader.NewFromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("strict load of the patched config: %w", err)
	}
	w, err := c.Validate(mode)
	if err != nil {
		return nil, fmt.Errorf("Validate(%s): %w", mode, err)
	}
	return w, nil
}

// readGenerated: the generated patches of the property test (tests/patch_property.rs), one
// `id<TAB>patch` line each (a patch is one line of JSON, which is YAML), all at cluster level.
func readGenerated(path string) ([]entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		id, patch, ok := strings.Cut(l, "\t")
		if !ok {
			return nil, fmt.Errorf("%s: a line without a tab: %q", path, l)
		}
		out = append(out, entry{rel: id, level: "cluster", kind: "generated", data: []byte(patch + "\n")})
	}
	return out, nil
}

// isJSON6902: the file is what LoadPatch reads as an RFC 6902 JSON patch (configpatcher/load.go:
// anything that is not a strategic merge patch).
func isJSON6902(b []byte) bool {
	p, err := configpatcher.LoadPatch(b)
	if err != nil {
		return false
	}
	_, strategic := p.(configpatcher.StrategicMergePatch)
	return !strategic
}

// restatesEphemeralWithoutSelector: a document of the patch is the EPHEMERAL VolumeConfig, not a
// delete, without provisioning.diskSelector.match (the ones fleetc completes, docs/talos.md
// "Patches").
func restatesEphemeralWithoutSelector(b []byte) bool {
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			return false
		}
		if doc["kind"] != "VolumeConfig" || doc["name"] != "EPHEMERAL" || doc["$patch"] != nil {
			continue
		}
		prov, _ := doc["provisioning"].(map[string]any)
		sel, _ := prov["diskSelector"].(map[string]any)
		if sel["match"] == nil {
			return true
		}
	}
}

// convertWithFleetc: the bytes fleetc writes to out/ for the patch file, from a scratch copy of
// the fixture with the file as the control plane's patch (the conversion is per file; the
// level only decides where out/ puts it).
func convertWithFleetc(fleetc, fixture string, patch []byte) ([]byte, error) {
	kdl, err := os.ReadFile(fixture)
	if err != nil {
		return nil, err
	}
	loc := controlPlaneLine.FindIndex(kdl)
	if loc == nil {
		return nil, fmt.Errorf("the fixture has no control-plane line")
	}
	i, j := loc[0], loc[1]-loc[0]
	line := strings.TrimRight(string(kdl[i:i+j]), " ")
	if strings.HasSuffix(line, "{") {
		return nil, fmt.Errorf("the fixture's control-plane has a block")
	}
	with := string(kdl[:i]) + line + " {\n                patch \"corpus-patch.yaml\"\n            }" + string(kdl[i+j:])
	dir, err := os.MkdirTemp("", "corpus-convert-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "fleet.kdl"), []byte(with), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "corpus-patch.yaml"), patch, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(fleetc, "build", "--quiet")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return nil, fmt.Errorf("fleetc build: %s", first)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "out", "talos", "*", "*", "patches", "controlplane", "*-corpus-patch.yaml"))
	if len(matches) != 1 {
		return nil, fmt.Errorf("fleetc wrote %d copies of the patch", len(matches))
	}
	return os.ReadFile(matches[0])
}

// ---------------------------------------------------------------------------------------------
// Which corpus files are patches (tests/corpus/README.md, "Which files are patches").

var (
	// a patch list entry that names a file: `- "@./patches/x.yaml"`
	topfPatchDir = regexp.MustCompile(`^(?:.*/)?(?:all|control-plane|worker|node/[^/]+)/[^/]+$`)
	// the fixture's control-plane line, which has no block of its own
	controlPlaneLine = regexp.MustCompile(`(?m)^[ \t]*control-plane [^\n]*$`)
	placeholder      = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
)

func collect(corpus string) ([]entry, error) {
	seen := map[string]int{} // rel -> index in out
	var out []entry
	add := func(rel, level string, env map[string]string) error {
		rel = filepath.ToSlash(filepath.Clean(rel))
		if i, ok := seen[rel]; ok {
			if out[i].level != level {
				out[i].level = "cluster" // referenced at two levels: it reaches both roles
			}
			return nil
		}
		b, err := os.ReadFile(filepath.Join(corpus, rel))
		if os.IsNotExist(err) {
			return nil // a dangling reference (corpus README): nothing to judge
		}
		if err != nil {
			return err
		}
		seen[rel] = len(out)
		e := classify(rel, b, env, strings.HasPrefix(rel, "talhelper/"))
		e.level = level
		out = append(out, e)
		return nil
	}
	// talhelper: every file a talconfig.yaml names with `@` in a `patches` list, relative to
	// the talconfig's folder; talenv.yaml beside it supplies ${NAME} placeholders.
	var talconfigs []string
	err := filepath.Walk(filepath.Join(corpus, "talhelper"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && info.Name() == "talconfig.yaml" {
			talconfigs = append(talconfigs, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(talconfigs)
	for _, tc := range talconfigs {
		b, err := os.ReadFile(tc)
		if err != nil {
			return nil, err
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", tc, err)
		}
		dir := filepath.Dir(tc)
		env := talenv(filepath.Join(dir, "talenv.yaml"))
		for _, r := range patchRefs(doc) {
			rel, _ := filepath.Rel(corpus, filepath.Join(dir, r.file))
			if err := add(rel, r.level, env); err != nil {
				return nil, err
			}
		}
	}
	// topf: every file in a patch directory (all/, control-plane/, worker/, node/<host>/) of a
	// topf fleet; topf renders `.tpl` files as Go templates with the node's data.
	var topf []string
	err = filepath.Walk(filepath.Join(corpus, "topf"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(corpus, p)
		rel = filepath.ToSlash(rel)
		// inside topf/<owner>__<repo>/
		parts := strings.SplitN(rel, "/", 3)
		if len(parts) == 3 && topfPatchDir.MatchString(parts[2]) {
			topf = append(topf, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(topf)
	for _, rel := range topf {
		parts := strings.SplitN(rel, "/", 3)
		roles := topfRoles(filepath.Join(corpus, parts[0], parts[1], "topf.yaml"))
		if err := add(rel, topfLevel(parts[2], roles), nil); err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, nil
}

// A patch reference and the level it applies at: cluster (every node), control-plane or worker.
type ref struct{ file, level string }

// patchRefs: the `@file` entries of every `patches` list of a talconfig, with their level: the
// top-level list is the cluster's, `controlPlane`'s and `worker`'s are those roles', a node's
// (`nodes[]`) is its role's (`controlPlane: true` or not). machineFiles' `content: "@…"` is a
// file's content, not a patch, and is not listed.
func patchRefs(doc any) []ref {
	var out []ref
	list := func(v any, level string) {
		l, _ := v.([]any)
		for _, x := range l {
			if s, ok := x.(string); ok && strings.HasPrefix(s, "@") {
				out = append(out, ref{strings.TrimPrefix(s, "@"), level})
			}
		}
	}
	top, _ := doc.(map[string]any)
	list(top["patches"], "cluster")
	if m, ok := top["controlPlane"].(map[string]any); ok {
		list(m["patches"], "control-plane")
	}
	if m, ok := top["worker"].(map[string]any); ok {
		list(m["patches"], "worker")
	}
	nodes, _ := top["nodes"].([]any)
	for _, n := range nodes {
		if m, ok := n.(map[string]any); ok {
			level := "worker"
			if cp, _ := m["controlPlane"].(bool); cp {
				level = "control-plane"
			}
			list(m["patches"], level)
		}
	}
	return out
}

// topfRoles: each node's role in a topf.yaml (`nodes: [{host, role}]`).
func topfRoles(path string) map[string]string {
	roles := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return roles
	}
	var t struct {
		Nodes []struct {
			Host string `yaml:"host"`
			Role string `yaml:"role"`
		} `yaml:"nodes"`
	}
	if yaml.Unmarshal(b, &t) == nil {
		for _, n := range t.Nodes {
			if n.Role == "control-plane" || n.Role == "worker" {
				roles[n.Host] = n.Role
			}
		}
	}
	return roles
}

// topfLevel: all/ is the cluster's, control-plane/ and worker/ their role's, node/<host>/ the
// host's role (the cluster's when topf.yaml does not say).
func topfLevel(inRepo string, roles map[string]string) string {
	parts := strings.Split(inRepo, "/")
	for i, p := range parts[:len(parts)-1] {
		switch p {
		case "control-plane", "worker":
			return p
		case "node":
			if r, ok := roles[parts[i+1]]; ok && i+1 < len(parts)-1 {
				return r
			}
			return "cluster"
		}
	}
	return "cluster"
}

// talenv: a talenv.yaml's `NAME: value` lines (talhelper loads it with godotenv.Unmarshal,
// pkg/substitute/envsubst.go LoadEnv at v3.1.16); quotes around a value are dropped.
func talenv(path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	env := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || l == "---" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env[strings.TrimSpace(k)] = v
	}
	return env
}

// classify: a templated file (by name: `.tpl`, `.j2`; by content in a talhelper file: `{{`,
// `{%`, `#{`, or a
// ${NAME} that the fleet's talenv.yaml does not define) cannot be judged as written; a file
// whose every ${NAME} talenv.yaml defines is judged substituted (`$$` is a literal `$`, as
// a8m/envsubst reads it); any other file is judged byte for byte.
func classify(rel string, b []byte, env map[string]string, talhelper bool) entry {
	base := filepath.Base(rel)
	if strings.Contains(base, ".tpl") || strings.HasSuffix(base, ".j2") {
		return entry{rel: rel, kind: "templated", data: b, why: "a template by its name (" + base + ")"}
	}
	code := codeLines(string(b))
	for _, mark := range []string{"{{", "{%", "#{"} {
		// talhelper renders every patch file as a Go template first (pkg/patcher/patcher.go
		// PatchesPatcher at v3.1.16); topf only its `.tpl` files.
		if talhelper && strings.Contains(code, mark) {
			return entry{rel: rel, kind: "templated", data: b, why: "holds template syntax `" + mark + "`"}
		}
	}
	if !placeholder.MatchString(code) {
		return entry{rel: rel, kind: "patch", data: b}
	}
	var missing []string
	for _, m := range placeholder.FindAllStringSubmatch(code, -1) {
		if _, ok := env[m[1]]; !ok {
			missing = append(missing, m[1])
		}
	}
	if len(missing) > 0 {
		return entry{rel: rel, kind: "templated", data: b, why: "${" + strings.Join(dedup(missing), "}, ${") + "} not in the fleet's talenv.yaml"}
	}
	s := strings.ReplaceAll(string(b), "$$", "\x00")
	s = placeholder.ReplaceAllStringFunc(s, func(m string) string { return env[m[2:len(m)-1]] })
	s = strings.ReplaceAll(s, "\x00", "$")
	return entry{rel: rel, kind: "substituted", data: []byte(s)}
}

// codeLines: the file without its comment-only lines (talhelper strips comments before
// envsubst, so a placeholder in a comment is never substituted).
func codeLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func dedup(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\t", " ")), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus-oracle:", err)
		os.Exit(2)
	}
}
