// talos-oracle: Talos's own code (github.com/siderolabs/talos/pkg/machinery) judges the machine
// configs that fleetc's out/ makes the consumers build. One source, built once per pinned Talos
// minor (v1.12/go.mod, v1.13/go.mod each symlink this file). See README.md.
//
// Usage: talos-oracle [--known v1.12,v1.13] [--report-unknown] OUT_DIR
//
// It prints one line per check, `ok talos: <what>` or `FAIL talos: <what>: <reason>`, for the
// clusters pinned to this binary's Talos minor (and, with --report-unknown, a FAIL line for each
// cluster pinned to a minor not listed in --known). Exit 0 when it ran, 2 when it could not.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/bundle"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/constants"
	"github.com/siderolabs/talos/pkg/machinery/gendata"
	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	"gopkg.in/yaml.v3"
)

// runtimeMode implements validation.RuntimeMode (pkg/machinery/config/validation) the way
// siderolabs/talos internal/app/machined/pkg/runtime/mode.go does: cloud (Scaleway, nocloud,
// every cloud platform) and metal; only metal requires an install.
type runtimeMode struct{ name string }

func (m runtimeMode) String() string        { return m.name }
func (m runtimeMode) RequiresInstall() bool { return m.name == "metal" }
func (m runtimeMode) InContainer() bool     { return m.name == "container" }

var (
	modeCloud = runtimeMode{"cloud"}
	modeMetal = runtimeMode{"metal"}
)

// A fixed clock: the test secrets bundle's certificates do not depend on when the check runs.
var fixedClock = secrets.NewFixedClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

type patch struct {
	name string // where it comes from, e.g. talos/staging/main/common.yaml
	data []byte
}

type job struct {
	consumer     string // tofu | talosctl | capi
	what         string
	clusterName  string
	endpoint     string
	talosVersion string
	k8sVersion   string
	machineType  machine.Type
	patches      []patch
	applyPatches []patch // talos_machine_configuration_apply.config_patches
	mode         runtimeMode
	platform     string
	installImage string
	// capi only
	podCIDRs, serviceCIDRs []string
	dnsDomain              string
	jsonPatches            []byte
	hostname               string
	mergeOnly              bool
}

// cabptMachineryMinor: github.com/siderolabs/cluster-api-bootstrap-provider-talos v0.6.11 go.mod
// requires github.com/siderolabs/talos/pkg/machinery v1.12.0.
const cabptMachineryMinor = "v1.12"

type fileCheck struct {
	rel, path    string
	talosVersion string
	mode         runtimeMode
	platform     string
}

var (
	outDir      string
	selfVersion string // machinery version this binary is built with
	selfMinor   string
	known       = map[string]bool{}
	reportUnk   bool
	lines       []string
)

func okf(what, format string, a ...any) {
	lines = append(lines, "ok talos: "+what+": "+oneLine(fmt.Sprintf(format, a...)))
}

func failf(what, format string, a ...any) {
	lines = append(lines, "FAIL talos: "+what+": "+oneLine(fmt.Sprintf(format, a...)))
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	parts := strings.Split(s, "\n")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " | ")
}

func minorOf(v string) string {
	m := regexp.MustCompile(`^v?(\d+)\.(\d+)`).FindStringSubmatch(v)
	if m == nil {
		return ""
	}
	return "v" + m[1] + "." + m[2]
}

func rel(p string) string {
	r, err := filepath.Rel(outDir, p)
	if err != nil {
		return p
	}
	return r
}

func main() {
	knownFlag := flag.String("known", "", "comma-separated Talos minors that have an oracle (e.g. v1.12,v1.13)")
	flag.BoolVar(&reportUnk, "report-unknown", false, "print a FAIL line for clusters pinned to a minor not in --known")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: talos-oracle [--known v1.12,v1.13] [--report-unknown] OUT_DIR")
		os.Exit(2)
	}
	var err error
	if outDir, err = filepath.Abs(flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if st, err := os.Stat(outDir); err != nil || !st.IsDir() {
		fmt.Fprintf(os.Stderr, "talos-oracle: %s is not a directory\n", outDir)
		os.Exit(2)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/siderolabs/talos/pkg/machinery" {
				selfVersion = d.Version
			}
		}
	}
	if selfVersion == "" {
		fmt.Fprintln(os.Stderr, "talos-oracle: cannot tell which machinery version this binary holds")
		os.Exit(2)
	}
	selfMinor = minorOf(selfVersion)
	known[selfMinor] = true
	for _, k := range strings.Split(*knownFlag, ",") {
		if k = strings.TrimSpace(k); k != "" {
			known[minorOf(k)] = true
		}
	}

	var jobs []job
	var files []fileCheck
	dirInfo := map[string]*clusterDir{} // talos dir (abs) -> version/mode

	tj, tdirs := tofuJobs()
	jobs = append(jobs, tj...)
	for k, v := range tdirs {
		dirInfo[k] = v
	}
	cj, cdirs := capiJobs()
	jobs = append(jobs, cj...)
	for k, v := range cdirs {
		if _, ok := dirInfo[k]; !ok {
			dirInfo[k] = v
		}
	}
	for k, v := range metalDirs() {
		if _, ok := dirInfo[k]; !ok {
			dirInfo[k] = v
		}
	}
	jobs = append(jobs, talosctlJobs(dirInfo)...)
	files = fileChecks(dirInfo)

	if len(jobs) == 0 && len(files) == 0 && reportUnk {
		okf(outDir, "nothing to judge: no out/talos documents, no talos-cluster OpenTofu module, no Cluster API Talos object")
	}

	unknownSeen := map[string]bool{}
	skip := func(what, version string) bool {
		m := minorOf(version)
		if m == selfMinor {
			return false
		}
		if !known[m] && reportUnk {
			key := what + "|" + version
			if !unknownSeen[key] {
				unknownSeen[key] = true
				failf(what, "pinned to Talos %q: no oracle for that version (oracles: %s)", version, strings.Join(sortedKeys(known), ", "))
			}
		}
		return true
	}

	for _, j := range jobs {
		// CABPT v0.6.11 and CACPPT v0.5.12 are built on machinery v1.12.0 (their go.mod): the
		// generation and the strategic merge run that code whatever talosVersion says. The
		// v1.12 oracle repeats each Cluster API job that way (merge and strict load only: the
		// node, at the pinned version, is what validates).
		if j.consumer == "capi" && selfMinor == cabptMachineryMinor && minorOf(j.talosVersion) != selfMinor {
			j.mergeOnly = true
			j.what += " as CABPT v0.6.11 merges it (its machinery " + cabptMachineryMinor + ")"
			runJob(j)
		}
		if skip(j.what, j.talosVersion) {
			continue
		}
		runJob(j)
	}
	for _, f := range files {
		if skip("file "+f.rel, f.talosVersion) {
			continue
		}
		runFile(f)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---------------------------------------------------------------------------------------------
// Running a job: build the config as the consumer builds it, reload it strictly, validate it.

func loadPatches(ps []patch) ([]configpatcher.Patch, error) {
	out := make([]configpatcher.Patch, 0, len(ps))
	for _, p := range ps {
		// configpatcher.LoadPatches on a literal string calls LoadPatch on its bytes
		// (pkg/machinery/config/configpatcher/load.go).
		lp, err := configpatcher.LoadPatch(p.data)
		if err != nil {
			return nil, fmt.Errorf("%s: loading the patch: %w", p.name, err)
		}
		out = append(out, lp)
	}
	return out, nil
}

// culprit names the first patch whose merge fails, applying the patches one more at a time
// (the error of a merge does not say which patch it was).
func culprit(base []byte, named []patch, ps []configpatcher.Patch) string {
	for i := 1; i <= len(ps); i++ {
		if _, err := configpatcher.Apply(configpatcher.WithBytes(base), ps[:i]); err != nil {
			if i == 1 {
				return named[0].name + " onto the generated config"
			}
			return fmt.Sprintf("%s merged onto %s", named[i-1].name, patchNames(named[:i-1]))
		}
	}
	return "patches " + patchNames(named)
}

func patchNames(ps []patch) string {
	var n []string
	for _, p := range ps {
		n = append(n, p.name)
	}
	return strings.Join(n, ", ")
}

var bundles = map[string]*secrets.Bundle{}

func runJob(j job) {
	vc, err := config.ParseContractFromVersion(j.talosVersion)
	if err != nil {
		failf(j.what, "talos version %q: %v", j.talosVersion, err)
		return
	}
	// One test secrets bundle per cluster and contract, as a cluster has one (R14).
	key := j.clusterName + "|" + vc.String()
	sb := bundles[key]
	if sb == nil {
		if sb, err = secrets.NewBundle(fixedClock, vc); err != nil {
			failf(j.what, "test secrets bundle: %v", err)
			return
		}
		bundles[key] = sb
	}
	var cfgBytes []byte
	switch j.consumer {
	case "tofu", "talosctl":
		cfgBytes, err = genBundle(j, vc, sb)
	case "capi":
		cfgBytes, err = genCABPT(j, vc, sb)
	}
	if err != nil {
		failf(j.what, "%v", err)
		return
	}
	if len(j.applyPatches) > 0 {
		ps, err := loadPatches(j.applyPatches)
		if err != nil {
			failf(j.what, "talos_machine_configuration_apply: %v", err)
			return
		}
		out, err := configpatcher.Apply(configpatcher.WithBytes(cfgBytes), ps)
		if err != nil {
			failf(j.what, "talos_machine_configuration_apply: applying config_patches (%s): %v", patchNames(j.applyPatches), err)
			return
		}
		if cfgBytes, err = out.Bytes(); err != nil {
			failf(j.what, "talos_machine_configuration_apply: %v", err)
			return
		}
	}
	// What the node does with the config: load it strictly (configloader's decoder uses
	// KnownFields(true)) and validate it in the platform's runtime mode.
	cfg, err := configloader.NewFromBytes(cfgBytes)
	if err != nil {
		failf(j.what, "the generated config does not load strictly (patches: %s): %v", patchNames(j.patches), err)
		return
	}
	if j.mergeOnly {
		okf(j.what, "%s bootstrap data generated and %d patches merged by machinery %s, loads strictly (validated by the %s oracle)",
			j.machineType, len(j.patches), selfVersion, minorOf(j.talosVersion))
		return
	}
	warnings, err := cfg.Validate(j.mode)
	if err != nil {
		failf(j.what, "Validate(%s) (patches: %s): %v", j.mode, patchNames(j.patches), err)
		return
	}
	msg := fmt.Sprintf("%s config generated by machinery %s (contract %s, Kubernetes %s), %d patches merged, loads strictly, Validate(%s mode, %s) passed",
		j.machineType, selfVersion, vc, j.k8sVersion, len(j.patches)+len(j.applyPatches), j.mode, j.platform)
	if len(warnings) > 0 {
		msg += fmt.Sprintf("; %d warning(s): %s", len(warnings), strings.Join(warnings, "; "))
	}
	okf(j.what, "%s", msg)
}

// genBundle: siderolabs/terraform-provider-talos v0.11.0 pkg/talos/util.go
// (machineConfigGenerateOptions.generate) and siderolabs/talos cmd/talosctl/cmd/mgmt/gen/config.go
// (GenerateConfigBundle, writeConfig): bundle.NewBundle with the input options and the patches.
func genBundle(j job, vc *config.VersionContract, sb *secrets.Bundle) ([]byte, error) {
	var genOptions []generate.Option
	opts := []bundle.Option{bundle.WithVerbose(false)}
	ps, err := loadPatches(j.patches)
	if err != nil {
		return nil, err
	}
	switch j.consumer {
	case "tofu":
		genOptions = append(genOptions,
			generate.WithClusterDiscovery(true),
			generate.WithDNSDomain(constants.DefaultDNSDomain),
			generate.WithInstallDisk("/dev/sda"),
			generate.WithInstallImage(fmt.Sprintf("%s/%s/installer:%s", gendata.ImagesRegistry, gendata.ImagesUsername, gendata.VersionTag)),
			generate.WithSecretsBundle(sb),
			generate.WithVersionContract(vc),
		)
		if j.machineType == machine.TypeControlPlane {
			opts = append(opts, bundle.WithPatchControlPlane(ps))
		} else {
			opts = append(opts, bundle.WithPatchWorker(ps))
		}
	case "talosctl":
		if err := sb.Validate(); err != nil {
			return nil, fmt.Errorf("test secrets bundle: %w", err)
		}
		genOptions = append(genOptions,
			generate.WithVersionContract(vc),
			generate.WithSecretsBundle(sb),
			generate.WithInstallDisk("/dev/sda"),
			generate.WithInstallImage(j.installImage),
			generate.WithAdditionalSubjectAltNames(nil),
			generate.WithDNSDomain(constants.DefaultDNSDomain),
			generate.WithClusterDiscovery(true),
		)
		// --config-patch applies to every type (bundle.WithPatch).
		opts = append(opts, bundle.WithPatch(ps))
	}
	opts = append([]bundle.Option{bundle.WithInputOptions(&bundle.InputOptions{
		ClusterName: j.clusterName,
		Endpoint:    j.endpoint,
		KubeVersion: strings.TrimPrefix(j.k8sVersion, "v"),
		GenOptions:  genOptions,
	})}, opts...)
	b, err := bundle.NewBundle(opts...)
	if err != nil {
		return nil, fmt.Errorf("generating and patching (patches: %s): %w", patchNames(j.patches), err)
	}
	out, err := b.Serialize(encoder.CommentsDisabled, j.machineType)
	if err != nil {
		return nil, fmt.Errorf("serializing: %w", err)
	}
	return out, nil
}

// genCABPT: siderolabs/cluster-api-bootstrap-provider-talos v0.6.11
// controllers/talosconfig_controller.go (genConfigs, reconcileGenerate).
func genCABPT(j job, vc *config.VersionContract, sb *secrets.Bundle) ([]byte, error) {
	genOptions := []generate.Option{generate.WithDNSDomain(j.dnsDomain), generate.WithVersionContract(vc), generate.WithSecretsBundle(sb)}
	in, err := generate.NewInput(j.clusterName, j.endpoint, strings.TrimPrefix(j.k8sVersion, "v"), genOptions...)
	if err != nil {
		return nil, fmt.Errorf("generate.NewInput: %w", err)
	}
	data, err := in.Config(j.machineType)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	if j.podCIDRs != nil {
		data.RawV1Alpha1().ClusterConfig.ClusterNetwork.PodSubnet = j.podCIDRs
	}
	if j.serviceCIDRs != nil {
		data.RawV1Alpha1().ClusterConfig.ClusterNetwork.ServiceSubnet = j.serviceCIDRs
	}
	if j.hostname != "" && vc.Greater(config.TalosVersion1_11) {
		j.patches = append(j.patches, patch{name: "CABPT HostnameConfig", data: []byte(
			"apiVersion: v1alpha1\nkind: HostnameConfig\nauto: \"off\"\nhostname: " + j.hostname + "\n")})
	} else if j.hostname != "" && data.RawV1Alpha1().MachineConfig.MachineNetwork != nil {
		data.RawV1Alpha1().MachineConfig.MachineNetwork.NetworkHostname = j.hostname //nolint
	}
	s, err := data.EncodeString(encoder.WithComments(encoder.CommentsDisabled))
	if err != nil {
		return nil, err
	}
	cfgBytes := []byte(s)
	if len(j.jsonPatches) > 0 {
		p, err := configpatcher.LoadPatch(j.jsonPatches)
		if err != nil {
			return nil, fmt.Errorf("configPatches: %w", err)
		}
		o, err := configpatcher.Apply(configpatcher.WithBytes(cfgBytes), []configpatcher.Patch{p})
		if err != nil {
			return nil, fmt.Errorf("configPatches (JSON 6902): %w", err)
		}
		if cfgBytes, err = o.Bytes(); err != nil {
			return nil, err
		}
	}
	if len(j.patches) > 0 {
		ps, err := loadPatches(j.patches)
		if err != nil {
			return nil, fmt.Errorf("failure loading StrategicPatch: %w", err)
		}
		o, err := configpatcher.Apply(configpatcher.WithBytes(cfgBytes), ps)
		if err != nil {
			return nil, fmt.Errorf("failure applying StrategicPatches: %s: %w", culprit(cfgBytes, j.patches, ps), err)
		}
		c, err := o.Config()
		if err != nil {
			return nil, fmt.Errorf("failure converting result to bytes: %w", err)
		}
		s, err := c.EncodeString(encoder.WithComments(encoder.CommentsDisabled))
		if err != nil {
			return nil, fmt.Errorf("failure converting config to string: %w", err)
		}
		cfgBytes = []byte(s)
	}
	return cfgBytes, nil
}

// runFile: one emitted file on its own, loaded as every consumer loads a patch
// (configloader.NewFromBytes with WithAllowPatchDelete, strict), each non-v1alpha1 document
// validated on its own in the platform's mode.
func runFile(f fileCheck) {
	what := "file " + f.rel
	data, err := os.ReadFile(f.path)
	if err != nil {
		failf(what, "%v", err)
		return
	}
	cfg, err := configloader.NewFromBytes(data, configloader.WithAllowPatchDelete())
	if err != nil {
		failf(what, "does not load strictly with machinery %s configloader: %v", selfVersion, err)
		return
	}
	var kinds, warnings []string
	var errs []string
	for _, doc := range cfg.Documents() {
		k := doc.Kind()
		if n, ok := doc.(interface{ Name() string }); ok && n.Name() != "" {
			k += " " + n.Name()
		}
		kinds = append(kinds, k)
		if doc.Kind() == "v1alpha1" {
			continue // a partial v1alpha1 patch is judged merged (the generated-config checks)
		}
		if v, ok := doc.(config.Validator); ok {
			w, err := v.Validate(f.mode)
			warnings = append(warnings, w...)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", k, err))
			}
		}
	}
	if len(errs) > 0 {
		failf(what, "Validate(%s): %s", f.mode, strings.Join(errs, "; "))
		return
	}
	msg := fmt.Sprintf("loads strictly with machinery %s (%s); its documents validate in %s mode (%s)", selfVersion, strings.Join(kinds, ", "), f.mode, f.platform)
	if len(warnings) > 0 {
		msg += "; warning(s): " + strings.Join(warnings, "; ")
	}
	okf(what, "%s", msg)
}

// ---------------------------------------------------------------------------------------------
// Discovery.

type clusterDir struct {
	version  string
	mode     runtimeMode
	platform string
	endpoint string
	k8s      string
	name     string
	// nodes for the talosctl path: hostname -> (controlplane, pool)
	nodes []nodeRef
}

type nodeRef struct {
	host string
	cp   bool
	pool string
}

func platformMode(platform string) runtimeMode {
	if platform == "metal" {
		return modeMetal
	}
	return modeCloud
}

// installerPlatform reads the platform out of an Image Factory installer reference
// (factory.talos.dev/<platform>-installer/<schematic>:<version>).
func installerPlatform(image string) string {
	m := regexp.MustCompile(`/([a-z0-9-]+)-installer(-secureboot)?/`).FindStringSubmatch(image)
	if m == nil {
		return ""
	}
	return m[1]
}

func fileChecks(dirs map[string]*clusterDir) []fileCheck {
	var out []fileCheck
	root := filepath.Join(outDir, "talos")
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			return nil
		}
		r, _ := filepath.Rel(root, p)
		parts := strings.Split(r, string(filepath.Separator))
		if len(parts) < 3 {
			failf("file "+rel(p), "not under talos/<env>/<cluster>/")
			return nil
		}
		d := filepath.Join(root, parts[0], parts[1])
		ci := dirs[d]
		if ci == nil {
			failf("file "+rel(p), "no OpenTofu cluster root nor Cluster API object pins a Talos version for %s", rel(d))
			return nil
		}
		out = append(out, fileCheck{rel: rel(p), path: p, talosVersion: ci.version, mode: ci.mode, platform: ci.platform})
		return nil
	})
	sort.Slice(out, func(a, b int) bool { return out[a].rel < out[b].rel })
	return out
}

// metalDirs: a bare-metal environment has no OpenTofu root nor Cluster API object; its
// inventory (out/metal/<env>/<cluster>/machines.yaml, src/emit/metal/mod.rs) pins the Talos
// and Kubernetes versions, the endpoint and the machines. `fleetc apply` renders each machine's
// config as `fleetc talos render` does (talosctl gen config + the same patches), so the
// talosctl path judges them, in metal mode (install required).
func metalDirs() map[string]*clusterDir {
	out := map[string]*clusterDir{}
	invs, _ := filepath.Glob(filepath.Join(outDir, "metal", "*", "*", "machines.yaml"))
	sort.Strings(invs)
	for _, inv := range invs {
		b, err := os.ReadFile(inv)
		if err != nil {
			failf("metal "+rel(inv), "%v", err)
			continue
		}
		var m struct {
			Cluster           string `yaml:"cluster"`
			TalosVersion      string `yaml:"talosVersion"`
			KubernetesVersion string `yaml:"kubernetesVersion"`
			Endpoint          string `yaml:"endpoint"`
			Platform          string `yaml:"platform"`
			Machines          []struct {
				Hostname string `yaml:"hostname"`
				Role     string `yaml:"role"`
				Pool     string `yaml:"pool"`
			} `yaml:"machines"`
		}
		if err := yaml.Unmarshal(b, &m); err != nil {
			failf("metal "+rel(inv), "not YAML: %v", err)
			continue
		}
		envName := filepath.Base(filepath.Dir(filepath.Dir(inv)))
		d := filepath.Join(outDir, "talos", envName, m.Cluster)
		ci := &clusterDir{version: m.TalosVersion, mode: platformMode(m.Platform), platform: m.Platform,
			endpoint: m.Endpoint, k8s: m.KubernetesVersion, name: m.Cluster}
		for _, n := range m.Machines {
			ci.nodes = append(ci.nodes, nodeRef{host: n.Hostname, cp: n.Role == "controlplane", pool: n.Pool})
		}
		out[d] = ci
	}
	return out
}

// talosctlJobs: `fleetc talos render` (src/apply/render.rs) runs, per node,
// `talosctl gen config <cluster> <endpoint> --with-secrets B --talos-version vX.Y
// --kubernetes-version K --output-types controlplane|worker --install-image I
// --config-patch @common.yaml --config-patch @controlplane.yaml|workers/<pool>.yaml
// --config-patch @nodes/<host>.yaml` (each only when the file exists).
func talosctlJobs(dirs map[string]*clusterDir) []job {
	var keys []string
	for k := range dirs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []job
	for _, d := range keys {
		ci := dirs[d]
		nodes := ci.nodes
		if len(nodes) == 0 { // a Cluster API cluster: machines are named by CAPI, one per role/pool
			nodes = append(nodes, nodeRef{host: "", cp: true})
			pools, _ := filepath.Glob(filepath.Join(d, "workers", "*.yaml"))
			for _, p := range pools {
				nodes = append(nodes, nodeRef{pool: strings.TrimSuffix(filepath.Base(p), ".yaml")})
			}
		}
		for _, n := range nodes {
			cands := []string{filepath.Join(d, "common.yaml")}
			t := machine.TypeWorker
			if n.cp {
				t = machine.TypeControlPlane
				cands = append(cands, filepath.Join(d, "controlplane.yaml"))
			} else {
				cands = append(cands, filepath.Join(d, "workers", n.pool+".yaml"))
			}
			if n.host != "" {
				cands = append(cands, filepath.Join(d, "nodes", n.host+".yaml"))
			}
			// then the user's patches of the pool, in file-name order (src/apply/render.rs)
			userDir := filepath.Join(d, "patches", "controlplane")
			if !n.cp {
				userDir = filepath.Join(d, "patches", "workers", n.pool)
			}
			if user, err := filepath.Glob(filepath.Join(userDir, "*.yaml")); err == nil {
				sort.Strings(user)
				cands = append(cands, user...)
			}
			// then a named node's own patches, last (patches/nodes/<host>/, src/apply/render.rs)
			if n.host != "" {
				if own, err := filepath.Glob(filepath.Join(d, "patches", "nodes", n.host, "*.yaml")); err == nil {
					sort.Strings(own)
					cands = append(cands, own...)
				}
			}
			var ps []patch
			for _, c := range cands {
				if b, err := os.ReadFile(c); err == nil {
					ps = append(ps, patch{name: rel(c), data: b})
				}
			}
			label := n.host
			if label == "" {
				if n.cp {
					label = "controlplane"
				} else {
					label = "pool " + n.pool
				}
			}
			image := ""
			for _, p := range ps {
				var m struct {
					Machine struct {
						Install struct {
							Image string `yaml:"image"`
						} `yaml:"install"`
					} `yaml:"machine"`
				}
				if yaml.Unmarshal(p.data, &m) == nil && m.Machine.Install.Image != "" {
					image = m.Machine.Install.Image
				}
			}
			if image == "" {
				image = fmt.Sprintf("%s/%s/installer:%s", gendata.ImagesRegistry, gendata.ImagesUsername, ci.version)
			}
			out = append(out, job{
				consumer: "talosctl", what: fmt.Sprintf("talosctl gen config %s %s (%s)", rel(d)[len("talos/"):], label, ci.version),
				clusterName: ci.name, endpoint: ci.endpoint, talosVersion: ci.version, k8sVersion: ci.k8s,
				machineType: t, patches: ps, mode: ci.mode, platform: ci.platform, installImage: image,
			})
		}
	}
	return out
}

// ---------------------------------------------------------------------------------------------
// OpenTofu: evaluate the cluster roots' HCL with hclsyntax the way OpenTofu would, as far as
// the talos_machine_configuration data sources need it.

func parseHCL(path string) (*hclsyntax.Body, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s", diags.Error())
	}
	return f.Body.(*hclsyntax.Body), nil
}

func parseHCLDir(dir string) ([]*hclsyntax.Body, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	sort.Strings(files)
	var out []*hclsyntax.Body
	for _, f := range files {
		b, err := parseHCL(f)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func readTfvars(dir string) (map[string]cty.Value, error) {
	vals := map[string]cty.Value{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.tfvars"))
	sort.Strings(files)
	for _, f := range files {
		b, err := parseHCL(f)
		if err != nil {
			return nil, err
		}
		for name, a := range b.Attributes {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				return nil, fmt.Errorf("%s: %s", f, diags.Error())
			}
			vals[name] = v
		}
	}
	return vals, nil
}

func placeholder(t cty.Type, path string) cty.Value {
	switch {
	case t == cty.String:
		return cty.StringVal("placeholder-" + path)
	case t == cty.Number:
		return cty.NumberIntVal(0)
	case t == cty.Bool:
		return cty.False
	case t.IsObjectType():
		m := map[string]cty.Value{}
		for k, at := range t.AttributeTypes() {
			m[k] = placeholder(at, path+"-"+strings.ReplaceAll(k, "_", "-"))
		}
		return cty.ObjectVal(m)
	case t.IsMapType():
		return cty.MapValEmpty(t.ElementType())
	case t.IsListType():
		return cty.ListValEmpty(t.ElementType())
	case t.IsSetType():
		return cty.SetValEmpty(t.ElementType())
	}
	return cty.NullVal(cty.DynamicPseudoType)
}

// moduleVars: each `variable` of the module: the given value (converted to its type), else its
// default, else a placeholder of its type (sensitive apply-time inputs).
func moduleVars(bodies []*hclsyntax.Body, given map[string]cty.Value) map[string]cty.Value {
	vars := map[string]cty.Value{}
	for _, b := range bodies {
		for _, blk := range b.Blocks {
			if blk.Type != "variable" || len(blk.Labels) != 1 {
				continue
			}
			name := blk.Labels[0]
			ty := cty.DynamicPseudoType
			if a, ok := blk.Body.Attributes["type"]; ok {
				if t, diags := typeexpr.TypeConstraint(a.Expr); !diags.HasErrors() {
					ty = t
				}
			}
			if v, ok := given[name]; ok && !v.IsNull() {
				if cv, err := convert.Convert(v, ty); err == nil {
					v = cv
				}
				vars[name] = v
				continue
			}
			if a, ok := blk.Body.Attributes["default"]; ok {
				if v, diags := a.Expr.Value(nil); !diags.HasErrors() {
					if cv, err := convert.Convert(v, ty); err == nil && !v.IsNull() {
						v = cv
					}
					vars[name] = v
					continue
				}
			}
			vars[name] = placeholder(ty, strings.ReplaceAll(name, "_", "-"))
		}
	}
	for k, v := range given { // undeclared but given
		if _, ok := vars[k]; !ok {
			vars[k] = v
		}
	}
	return vars
}

func hclFuncs(baseDir string) map[string]function.Function {
	return map[string]function.Function{
		"concat":     stdlib.ConcatFunc,
		"coalesce":   stdlib.CoalesceFunc,
		"jsonencode": stdlib.JSONEncodeFunc,
		"yamlencode": ctyyaml.YAMLEncodeFunc,
		"tostring":   stdlib.MakeToFunc(cty.String),
		"sort":       stdlib.SortFunc,
		// fileset(path, pattern) as OpenTofu v1.11.5 has it (internal/lang/funcs/filesystem.go):
		// the matching regular files, relative to path; a missing directory matches nothing.
		"fileset": function.New(&function.Spec{
			Params: []function.Parameter{{Name: "path", Type: cty.String}, {Name: "pattern", Type: cty.String}},
			Type:   function.StaticReturnType(cty.Set(cty.String)),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				dir := args[0].AsString()
				if !filepath.IsAbs(dir) {
					dir = filepath.Join(baseDir, dir)
				}
				matches, err := filepath.Glob(filepath.Join(dir, args[1].AsString()))
				if err != nil {
					return cty.NilVal, err
				}
				var vals []cty.Value
				for _, m := range matches {
					if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
						r, _ := filepath.Rel(dir, m)
						vals = append(vals, cty.StringVal(filepath.ToSlash(r)))
					}
				}
				if len(vals) == 0 {
					return cty.SetValEmpty(cty.String), nil
				}
				return cty.SetVal(vals), nil
			},
		}),
		"file": function.New(&function.Spec{
			Params: []function.Parameter{{Name: "path", Type: cty.String}},
			Type:   function.StaticReturnType(cty.String),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				p := args[0].AsString()
				if !filepath.IsAbs(p) {
					p = filepath.Join(baseDir, p)
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return cty.NilVal, fmt.Errorf("file(%q): %v", rel(p), err)
				}
				return cty.StringVal(string(b)), nil
			},
		}),
	}
}

func evalLocals(bodies []*hclsyntax.Body, ctx *hcl.EvalContext) map[string]cty.Value {
	locals := map[string]cty.Value{}
	pending := map[string]hcl.Expression{}
	for _, b := range bodies {
		for _, blk := range b.Blocks {
			if blk.Type == "locals" {
				for n, a := range blk.Body.Attributes {
					pending[n] = a.Expr
				}
			}
		}
	}
	for pass := 0; pass < 5 && len(pending) > 0; pass++ {
		ctx.Variables["local"] = cty.ObjectVal(locals)
		for n, e := range pending {
			if v, diags := e.Value(ctx); !diags.HasErrors() {
				locals[n] = v
				delete(pending, n)
			}
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return locals
}

// cloudOutputs stands in for data.terraform_remote_state.cloud.outputs.clusters: the cloud
// root's nodes (hostnames, in order) read from its tfvars; addresses are placeholders.
func cloudOutputs(cloudDir string) (cty.Value, map[string]string, error) {
	vals, err := readTfvars(cloudDir)
	if err != nil {
		return cty.NilVal, nil, err
	}
	platform := ""
	if bodies, err := parseHCLDir(cloudDir); err == nil {
		for _, b := range bodies {
			for _, blk := range b.Blocks {
				if blk.Type == "module" {
					if a, ok := blk.Body.Attributes["source"]; ok {
						if v, d := a.Expr.Value(nil); !d.HasErrors() {
							s := filepath.Base(v.AsString())
							switch {
							case strings.HasPrefix(s, "scaleway-"):
								platform = "scaleway"
							case strings.HasPrefix(s, "proxmox-"):
								platform = "nocloud"
							}
						}
					}
				}
			}
		}
	}
	platforms := map[string]string{}
	cl, ok := vals["clusters"]
	if !ok || cl.IsNull() {
		return cty.EmptyObjectVal, platforms, nil
	}
	out := map[string]cty.Value{}
	i := 0
	node := func(v cty.Value) cty.Value {
		i++
		host := cty.StringVal("")
		if v.Type().IsObjectType() && v.Type().HasAttribute("hostname") {
			host = v.GetAttr("hostname")
		}
		addr := cty.StringVal(fmt.Sprintf("198.51.100.%d", i))
		if v.Type().IsObjectType() && v.Type().HasAttribute("address") {
			addr = v.GetAttr("address")
		}
		return cty.ObjectVal(map[string]cty.Value{"hostname": host, "address": addr, "talos_endpoint": addr})
	}
	for it := cl.ElementIterator(); it.Next(); {
		k, v := it.Element()
		c := map[string]cty.Value{"control_plane": cty.EmptyTupleVal, "workers": cty.EmptyObjectVal}
		if v.Type().HasAttribute("control_plane") {
			var cps []cty.Value
			for it2 := v.GetAttr("control_plane").ElementIterator(); it2.Next(); {
				_, n := it2.Element()
				cps = append(cps, node(n))
			}
			if len(cps) > 0 {
				c["control_plane"] = cty.TupleVal(cps)
			}
		}
		if v.Type().HasAttribute("workers") {
			ws := map[string]cty.Value{}
			for it2 := v.GetAttr("workers").ElementIterator(); it2.Next(); {
				wk, n := it2.Element()
				ws[wk.AsString()] = node(n)
			}
			c["workers"] = cty.ObjectVal(ws)
		}
		out[k.AsString()] = cty.ObjectVal(c)
		platforms[k.AsString()] = platform
	}
	return cty.ObjectVal(out), platforms, nil
}

func str(v cty.Value) string {
	if v.IsNull() || !v.IsKnown() {
		return ""
	}
	if s, err := convert.Convert(v, cty.String); err == nil {
		return s.AsString()
	}
	return ""
}

func strList(v cty.Value) ([]string, error) {
	if v.IsNull() {
		return nil, nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		s, err := convert.Convert(e, cty.String)
		if err != nil || s.IsNull() {
			return nil, fmt.Errorf("not a list of strings")
		}
		out = append(out, s.AsString())
	}
	return out, nil
}

// tofuJobs: for each out/tofu/<env>/cluster root, each module call, each
// data "talos_machine_configuration" of the module (per for_each instance).
func tofuJobs() ([]job, map[string]*clusterDir) {
	var jobs []job
	dirs := map[string]*clusterDir{}
	roots, _ := filepath.Glob(filepath.Join(outDir, "tofu", "*", "cluster"))
	sort.Strings(roots)
	for _, root := range roots {
		env := filepath.Base(filepath.Dir(root))
		what := "tofu " + env + "/cluster"
		bodies, err := parseHCLDir(root)
		if err != nil {
			failf(what, "HCL: %v", err)
			continue
		}
		tfvars, err := readTfvars(root)
		if err != nil {
			failf(what, "tfvars: %v", err)
			continue
		}
		cloud, platforms, err := cloudOutputs(filepath.Join(filepath.Dir(root), "cloud"))
		if err != nil {
			failf(what, "cloud root tfvars: %v", err)
			continue
		}
		ctx := &hcl.EvalContext{
			Variables: map[string]cty.Value{
				"var":  cty.ObjectVal(moduleVars(bodies, tfvars)),
				"path": cty.ObjectVal(map[string]cty.Value{"root": cty.StringVal(root), "module": cty.StringVal(root), "cwd": cty.StringVal(root)}),
				"data": cty.ObjectVal(map[string]cty.Value{"terraform_remote_state": cty.ObjectVal(map[string]cty.Value{
					"cloud": cty.ObjectVal(map[string]cty.Value{"outputs": cty.ObjectVal(map[string]cty.Value{"clusters": cloud})})})}),
			},
			Functions: hclFuncs(root),
		}
		evalLocals(bodies, ctx)
		for _, b := range bodies {
			for _, blk := range b.Blocks {
				if blk.Type != "module" || len(blk.Labels) != 1 {
					continue
				}
				mwhat := what + " module." + blk.Labels[0]
				srcA, ok := blk.Body.Attributes["source"]
				if !ok {
					continue
				}
				srcV, d := srcA.Expr.Value(nil)
				if d.HasErrors() {
					failf(mwhat, "source: %s", d.Error())
					continue
				}
				mdir := filepath.Clean(filepath.Join(root, srcV.AsString()))
				if !strings.HasPrefix(filepath.Base(mdir), "talos-cluster") {
					continue
				}
				given := map[string]cty.Value{}
				var evalErrs []string
				for n, a := range blk.Body.Attributes {
					if n == "source" || n == "depends_on" || n == "providers" {
						continue
					}
					v, d := a.Expr.Value(ctx)
					if d.HasErrors() {
						evalErrs = append(evalErrs, fmt.Sprintf("%s: %s", n, d.Error()))
						continue
					}
					given[n] = v
				}
				mbodies, err := parseHCLDir(mdir)
				if err != nil {
					failf(mwhat, "module %s: %v", rel(mdir), err)
					continue
				}
				mvars := moduleVars(mbodies, given)
				clusterName := str(mvars["cluster_name"])
				talosDir := filepath.Clean(str(mvars["talos_dir"]))
				platform := platforms[clusterName]
				ci := &clusterDir{version: str(mvars["talos_version"]), endpoint: str(mvars["cluster_endpoint"]),
					k8s: str(mvars["kubernetes_version"]), name: clusterName, platform: platform}
				if ci.version == "" {
					failf(mwhat, "no talos_version (module arguments: %s)", strings.Join(evalErrs, "; "))
					continue
				}
				mctx := &hcl.EvalContext{
					Variables: map[string]cty.Value{
						"var":  cty.ObjectVal(mvars),
						"path": cty.ObjectVal(map[string]cty.Value{"root": cty.StringVal(root), "module": cty.StringVal(mdir), "cwd": cty.StringVal(root)}),
					},
					Functions: hclFuncs(root),
				}
				evalLocals(mbodies, mctx)
				// talos_machine_configuration_apply.config_patches, by data source name and key
				applyPatches := map[string][]patch{}
				for _, mb := range mbodies {
					for _, r := range mb.Blocks {
						if r.Type == "resource" && len(r.Labels) == 2 && r.Labels[0] == "talos_machine_configuration_apply" {
							if _, ok := r.Body.Attributes["config_patches"]; ok {
								for key, ps := range evalApplyPatches(r, mctx, mwhat) {
									applyPatches[key] = append(applyPatches[key], ps...)
								}
							}
						}
					}
				}
				for _, mb := range mbodies {
					for _, ds := range mb.Blocks {
						if ds.Type != "data" || len(ds.Labels) != 2 || ds.Labels[0] != "talos_machine_configuration" {
							continue
						}
						for _, inst := range instances(ds, mctx, mwhat) {
							dwhat := fmt.Sprintf("%s data.talos_machine_configuration.%s%s", mwhat, ds.Labels[1], inst.suffix)
							ictx := mctx.NewChild()
							ictx.Variables = map[string]cty.Value{}
							if inst.each != cty.NilVal {
								ictx.Variables["each"] = inst.each
							}
							get := func(n string) (cty.Value, error) {
								a, ok := ds.Body.Attributes[n]
								if !ok {
									return cty.NullVal(cty.DynamicPseudoType), nil
								}
								v, d := a.Expr.Value(ictx)
								if d.HasErrors() {
									return cty.NilVal, fmt.Errorf("%s: %s", n, d.Error())
								}
								return v, nil
							}
							vals := map[string]cty.Value{}
							var errs []string
							for _, n := range []string{"cluster_name", "cluster_endpoint", "machine_type", "talos_version", "kubernetes_version", "config_patches"} {
								v, err := get(n)
								if err != nil {
									errs = append(errs, err.Error())
									continue
								}
								vals[n] = v
							}
							if len(errs) > 0 {
								failf(dwhat, "cannot evaluate as OpenTofu would: %s", strings.Join(errs, "; "))
								continue
							}
							pstrs, err := strList(vals["config_patches"])
							if err != nil {
								failf(dwhat, "config_patches: %v", err)
								continue
							}
							// name each patch by the file it came from, when it is one
							names := patchSources(ds.Body.Attributes["config_patches"], ictx, len(pstrs))
							var ps []patch
							for i, s := range pstrs {
								ps = append(ps, patch{name: names[i], data: []byte(s)})
							}
							mt := machine.TypeWorker
							switch str(vals["machine_type"]) {
							case "controlplane":
								mt = machine.TypeControlPlane
							case "worker":
							default:
								failf(dwhat, "machine_type %q is neither controlplane nor worker", str(vals["machine_type"]))
								continue
							}
							pl := platform
							for _, p := range ps {
								var m struct {
									Machine struct {
										Install struct {
											Image string `yaml:"image"`
										} `yaml:"install"`
									} `yaml:"machine"`
								}
								if yaml.Unmarshal(p.data, &m) == nil && m.Machine.Install.Image != "" && pl == "" {
									pl = installerPlatform(m.Machine.Install.Image)
								}
							}
							if pl == "" {
								pl = "metal"
							}
							ci.platform, ci.mode = pl, platformMode(pl)
							jobs = append(jobs, job{
								consumer: "tofu", what: dwhat + " (" + str(vals["talos_version"]) + ")",
								clusterName: str(vals["cluster_name"]), endpoint: str(vals["cluster_endpoint"]),
								talosVersion: str(vals["talos_version"]), k8sVersion: str(vals["kubernetes_version"]),
								machineType: mt, patches: ps, applyPatches: applyPatches[ds.Labels[1]+inst.suffix],
								mode: platformMode(pl), platform: pl,
							})
						}
					}
				}
				if ci.platform == "" {
					ci.platform = "metal"
				}
				ci.mode = platformMode(ci.platform)
				// nodes for the talosctl path: the module's control_plane list and workers map
				if cp := mvars["control_plane"]; !cp.IsNull() && cp.CanIterateElements() {
					for it := cp.ElementIterator(); it.Next(); {
						_, n := it.Element()
						ci.nodes = append(ci.nodes, nodeRef{host: str(n.GetAttr("hostname")), cp: true})
					}
				}
				if ws := mvars["workers"]; !ws.IsNull() && ws.CanIterateElements() {
					var hosts []string
					for it := ws.ElementIterator(); it.Next(); {
						_, n := it.Element()
						hosts = append(hosts, str(n.GetAttr("hostname")))
					}
					sort.Strings(hosts)
					pools := mvars["worker_pools"]
					for _, h := range hosts {
						pool := ""
						if !pools.IsNull() && pools.Type().IsMapType() || pools.Type().IsObjectType() {
							if pools.Type().IsObjectType() && pools.Type().HasAttribute(h) {
								pool = str(pools.GetAttr(h))
							} else if pools.Type().IsMapType() && pools.HasIndex(cty.StringVal(h)).True() {
								pool = str(pools.Index(cty.StringVal(h)))
							}
						}
						if pool == "" {
							failf(mwhat, "worker %s has no pool in worker_pools", h)
							continue
						}
						ci.nodes = append(ci.nodes, nodeRef{host: h, pool: pool})
					}
				}
				dirs[talosDir] = ci
			}
		}
	}
	return jobs, dirs
}

type instance struct {
	suffix string
	each   cty.Value
}

func instances(blk *hclsyntax.Block, ctx *hcl.EvalContext, what string) []instance {
	fe, ok := blk.Body.Attributes["for_each"]
	if !ok {
		return []instance{{}}
	}
	v, d := fe.Expr.Value(ctx)
	if d.HasErrors() {
		failf(what+" "+blk.Labels[0]+"."+blk.Labels[1], "for_each: %s", d.Error())
		return nil
	}
	var out []instance
	if v.IsNull() || !v.CanIterateElements() {
		return nil
	}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		ks := str(k)
		out = append(out, instance{suffix: "[" + strconv.Quote(ks) + "]", each: cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(ks), "value": e})})
	}
	return out
}

func evalApplyPatches(r *hclsyntax.Block, ctx *hcl.EvalContext, what string) map[string][]patch {
	out := map[string][]patch{}
	in, ok := r.Body.Attributes["machine_configuration_input"]
	if !ok {
		return out
	}
	target := ""
	for _, tr := range in.Expr.Variables() {
		if tr.RootName() == "data" && len(tr) >= 3 {
			if a, ok := tr[2].(hcl.TraverseAttr); ok {
				target = a.Name
			}
		}
	}
	for _, inst := range instances(r, ctx, what) {
		ictx := ctx.NewChild()
		ictx.Variables = map[string]cty.Value{}
		if inst.each != cty.NilVal {
			ictx.Variables["each"] = inst.each
		}
		v, d := r.Body.Attributes["config_patches"].Expr.Value(ictx)
		if d.HasErrors() {
			failf(what+" talos_machine_configuration_apply."+r.Labels[1]+inst.suffix, "config_patches: %s", d.Error())
			continue
		}
		ss, err := strList(v)
		if err != nil {
			continue
		}
		for i, s := range ss {
			out[target+inst.suffix] = append(out[target+inst.suffix], patch{name: fmt.Sprintf("talos_machine_configuration_apply.%s config_patches[%d]", r.Labels[1], i), data: []byte(s)})
		}
	}
	return out
}

// patchSources names each element of config_patches by the file() it reads, else by the
// expression that makes it (e.g. var.controlplane_patches[0]).
func patchSources(a *hclsyntax.Attribute, ctx *hcl.EvalContext, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("config_patches[%d]", i)
	}
	if a == nil {
		return names
	}
	var flat []string
	var walk func(e hclsyntax.Expression)
	walk = func(e hclsyntax.Expression) {
		switch x := e.(type) {
		case *hclsyntax.FunctionCallExpr:
			if x.Name == "concat" {
				for _, arg := range x.Args {
					walk(arg)
				}
				return
			}
			if x.Name == "file" && len(x.Args) == 1 {
				if v, d := x.Args[0].Value(ctx); !d.HasErrors() {
					flat = append(flat, rel(filepath.Clean(v.AsString())))
					return
				}
			}
		case *hclsyntax.ForExpr: // the user's patches: one file per element
			if v, d := x.Value(ctx); !d.HasErrors() && v.CanIterateElements() {
				for j := 0; j < v.LengthInt(); j++ {
					flat = append(flat, fmt.Sprintf("user patch %d", j+1))
				}
				return
			}
		case *hclsyntax.TupleConsExpr:
			for _, el := range x.Exprs {
				walk(el)
			}
			return
		case *hclsyntax.ScopeTraversalExpr:
			if v, d := x.Value(ctx); !d.HasErrors() && v.CanIterateElements() {
				name := strings.TrimSpace(string(x.Range().SliceBytes(mustRead(x.Range().Filename))))
				for j := 0; j < v.LengthInt(); j++ {
					flat = append(flat, fmt.Sprintf("%s[%d]", name, j))
				}
				return
			}
		}
		flat = append(flat, "?")
	}
	walk(a.Expr)
	if len(flat) == n {
		for i := range flat {
			if flat[i] != "?" {
				names[i] = flat[i]
			}
		}
	}
	return names
}

func mustRead(p string) []byte {
	b, _ := os.ReadFile(p)
	return b
}

// ---------------------------------------------------------------------------------------------
// Cluster API: TalosControlPlane (controlPlaneConfig.controlplane) and TalosConfigTemplate
// (template.spec) give a TalosConfigSpec that CABPT turns into bootstrap data.

func get(o any, path ...string) any {
	for _, p := range path {
		m, ok := o.(map[string]any)
		if !ok {
			return nil
		}
		o = m[p]
	}
	return o
}

func gets(o any, path ...string) string {
	switch v := get(o, path...).(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.Itoa(int(v))
	}
	return ""
}

func getList(o any, path ...string) []string {
	l, _ := get(o, path...).([]any)
	if l == nil {
		return nil
	}
	out := []string{}
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func capiJobs() ([]job, map[string]*clusterDir) {
	var jobs []job
	dirs := map[string]*clusterDir{}
	dirsGlob, _ := filepath.Glob(filepath.Join(outDir, "capi", "*", "*"))
	sort.Strings(dirsGlob)
	for _, cdir := range dirsGlob {
		if st, err := os.Stat(cdir); err != nil || !st.IsDir() || filepath.Base(cdir) == "providers" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(cdir, "*.yaml"))
		sort.Strings(files)
		type src struct {
			obj  map[string]any
			file string
		}
		var objs []src
		for _, f := range files {
			b, _ := os.ReadFile(f)
			dec := yaml.NewDecoder(strings.NewReader(string(b)))
			for {
				var o map[string]any
				if err := dec.Decode(&o); err != nil {
					break
				}
				if o != nil {
					objs = append(objs, src{o, rel(f)})
				}
			}
		}
		clusters := map[string]map[string]any{}
		infraKinds := map[string]string{}
		for _, o := range objs {
			if gets(o.obj, "kind") == "Cluster" && strings.HasPrefix(gets(o.obj, "apiVersion"), "cluster.x-k8s.io/") {
				clusters[gets(o.obj, "metadata", "name")] = o.obj
				infraKinds[gets(o.obj, "metadata", "name")] = gets(o.obj, "spec", "infrastructureRef", "kind")
			}
		}
		// MachineDeployment -> TalosConfigTemplate name, version
		mdByTemplate := map[string]map[string]any{}
		for _, o := range objs {
			if gets(o.obj, "kind") == "MachineDeployment" {
				mdByTemplate[gets(o.obj, "spec", "template", "spec", "bootstrap", "configRef", "name")] = o.obj
			}
		}
		for _, o := range objs {
			kind := gets(o.obj, "kind")
			var spec any
			var version, clusterName string
			mt := machine.TypeWorker
			name := gets(o.obj, "metadata", "name")
			clusterName = gets(o.obj, "metadata", "labels", "cluster.x-k8s.io/cluster-name")
			switch kind {
			case "TalosControlPlane":
				spec = get(o.obj, "spec", "controlPlaneConfig", "controlplane")
				if spec == nil {
					spec = get(o.obj, "spec", "controlPlaneConfig", "init")
				}
				version = gets(o.obj, "spec", "version")
				if clusterName == "" {
					clusterName = name
				}
			case "TalosConfigTemplate":
				spec = get(o.obj, "spec", "template", "spec")
				md := mdByTemplate[name]
				if md == nil {
					failf("capi "+o.file+" TalosConfigTemplate "+name, "no MachineDeployment references it")
					continue
				}
				version = gets(md, "spec", "template", "spec", "version")
				if clusterName == "" {
					clusterName = gets(md, "spec", "clusterName")
				}
			default:
				continue
			}
			what := fmt.Sprintf("capi %s %s %s", o.file, kind, name)
			cl := clusters[clusterName]
			if cl == nil {
				failf(what, "no Cluster %q in %s", clusterName, rel(cdir))
				continue
			}
			gt := gets(spec, "generateType")
			switch gt {
			case "controlplane", "init":
				mt = machine.TypeControlPlane
			case "worker", "join":
				mt = machine.TypeWorker
			case "none":
				failf(what, "generateType none is not judged by this oracle")
				continue
			default:
				// CABPT: machine.ParseType error -> worker; unknown in reconcileGenerate -> error
				failf(what, "generateType %q: CABPT fails with: unknown generate type specified", gt)
				continue
			}
			tv := gets(spec, "talosVersion")
			if tv == "" {
				failf(what, "no talosVersion: CABPT would use its own current contract (config.TalosVersionCurrent of machinery v1.12.0)")
				continue
			}
			var ps []patch
			for i, s := range getList(spec, "strategicPatches") {
				ps = append(ps, patch{name: fmt.Sprintf("%s strategicPatches[%d]", o.file, i), data: []byte(s)})
			}
			var jp []byte
			if cp := get(spec, "configPatches"); cp != nil {
				jp, _ = json.Marshal(cp)
			}
			host := gets(cl, "spec", "controlPlaneEndpoint", "host")
			port := gets(cl, "spec", "controlPlaneEndpoint", "port")
			dns := gets(cl, "spec", "clusterNetwork", "serviceDomain")
			if dns == "" {
				dns = constants.DefaultDNSDomain
			}
			var pods, svcs []string
			if get(cl, "spec", "clusterNetwork", "pods") != nil {
				pods = getList(cl, "spec", "clusterNetwork", "pods", "cidrBlocks")
			}
			if get(cl, "spec", "clusterNetwork", "services") != nil {
				svcs = getList(cl, "spec", "clusterNetwork", "services", "cidrBlocks")
			}
			hostname := ""
			if gets(spec, "hostname", "source") != "" {
				hostname = clusterName + "-machine-0"
			}
			pl := "metal"
			if strings.HasPrefix(infraKinds[clusterName], "Proxmox") {
				pl = "nocloud"
			} else {
				for _, p := range ps {
					if m := installerPlatform(string(p.data)); m != "" {
						pl = m
					}
				}
			}
			jobs = append(jobs, job{
				consumer: "capi", what: what + " (" + tv + ")", clusterName: clusterName,
				endpoint:     "https://" + net.JoinHostPort(host, port),
				talosVersion: tv, k8sVersion: version, machineType: mt, patches: ps, jsonPatches: jp,
				mode: platformMode(pl), platform: pl, podCIDRs: pods, serviceCIDRs: svcs, dnsDomain: dns, hostname: hostname,
			})
			// the Talos documents' directory of this cluster (talos/<env>/<cluster>)
			if tds, _ := filepath.Glob(filepath.Join(outDir, "talos", "*", clusterName)); len(tds) == 1 {
				if _, seen := dirs[tds[0]]; !seen || kind == "TalosControlPlane" {
					dirs[tds[0]] = &clusterDir{version: tv, mode: platformMode(pl), platform: pl,
						endpoint: "https://" + net.JoinHostPort(host, port), k8s: version, name: clusterName}
				}
			}
		}
	}
	return jobs, dirs
}
