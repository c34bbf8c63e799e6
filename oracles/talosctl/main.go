// A harness stand-in for talosctl v1.13.9 (and v1.12.6, v1.12/minor.go): the CLI glue of
// `talosctl gen config` and `talosctl gen secrets` (siderolabs/talos v1.13.9 cmd/talosctl/cmd/mgmt/gen/config.go,
// secrets.go, gen.go) re-typed around the real generator, pkg/machinery v1.13.9 (bundle,
// generate, configpatcher, encoder, secrets). talosctl's main module cannot be built here (the
// module proxy refuses some of its dependencies), so fleetc's harness builds this instead; it
// is not talosctl. Only the flags fleetc passes are implemented (src/apply/render.rs
// `gen_config`, `node_config`; the benchmark's `gen secrets -o`); every other subcommand or
// flag exits 2 with "not implemented by fleetc's harness talosctl". Flags not implemented
// keep talosctl's defaults (config.go l.430-450), cited at each use below.
//
// One module per minor (v1.13/, v1.12/), each with this file as a symlink and a minor.go.
// Line numbers below are of v1.13.9.
package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/siderolabs/gen/xslices"
	sideronet "github.com/siderolabs/net"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v4"

	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/bundle"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/constants"
	"github.com/siderolabs/talos/pkg/machinery/version"
)

// notImplemented: a subcommand or flag talosctl has and this stand-in does not.
type notImplemented struct{ what string }

func (e notImplemented) Error() string {
	return e.what + ": not implemented by fleetc's harness talosctl (oracles/talosctl, a stand-in for talosctl v1.13.9 gen config)"
}

const (
	controlPlaneOutputType = "controlplane"
	workerOutputType       = "worker"
	talosconfigOutputType  = "talosconfig"
	stdoutOutput           = "-"
	yamlExt                = ".yaml"
)

// config.go l.44-48.
var allOutputTypes = []string{controlPlaneOutputType, workerOutputType, talosconfigOutputType}

var force bool // gen.go l.32: `gen`'s persistent --force/-f

var cfgFlags struct {
	kubernetesVersion, talosVersion, installImage, output, withSecrets string
	outputTypes, configPatch, configPatchCP, configPatchWorker         []string
	withExamples, withDocs                                             bool
}

var secretsFlags struct{ outputFile, talosVersion string }

// gen.go l.35-43.
func validateFileExists(file string) error {
	if !force {
		if _, err := os.Stat(file); err == nil {
			return fmt.Errorf("file %q already exists, use --force to overwrite", file)
		}
	}
	return nil
}

// config.go l.105-119: the hint's URL.
func fixControlPlaneEndpoint(u *url.URL) *url.URL {
	if u.Scheme == "" && u.Host == "" && u.Path != "" {
		u.Host = u.Path
		u.Path = ""
	}
	u.Scheme = "https"
	if u.Port() == "" {
		u.Host = fmt.Sprintf("%s:%d", u.Host, constants.DefaultControlPlanePort)
	}
	return u
}

// config.go l.394-425.
func validateClusterEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		if !strings.Contains(endpoint, "/") {
			u = &url.URL{Host: endpoint}
		} else {
			return fmt.Errorf("failed to parse the cluster endpoint URL: %w", err)
		}
	}
	if u.Scheme == "" {
		if u.Port() == "" {
			return fmt.Errorf("no scheme and port specified for the cluster endpoint URL\ntry: %q", fixControlPlaneEndpoint(u))
		}
		return fmt.Errorf("no scheme specified for the cluster endpoint URL\ntry: %q", fixControlPlaneEndpoint(u))
	}
	if u.Scheme != "https" {
		return fmt.Errorf("the control plane endpoint URL should have scheme https://\ntry: %q", fixControlPlaneEndpoint(u))
	}
	if err = sideronet.ValidateEndpointURI(endpoint); err != nil {
		return fmt.Errorf("error validating the cluster endpoint URL: %w", err)
	}
	return nil
}

// config.go l.260-288 (no --output-dir here).
func validateFlags() error {
	if len(cfgFlags.outputTypes) == 0 {
		return errors.New("at least one output type must be specified")
	}
	if len(cfgFlags.outputTypes) > 1 && cfgFlags.output == stdoutOutput {
		return errors.New("can't use multiple output types with stdout")
	}
	var err error
	for _, t := range cfgFlags.outputTypes {
		if !slices.Contains(allOutputTypes, t) {
			err = multierror.Append(err, fmt.Errorf("invalid output type: %q", t))
		}
	}
	return err
}

type outputPaths struct{ controlPlane, worker, talosconfig string }

// config.go l.354-392: one output type makes --output a file, several a directory.
func paths() (outputPaths, error) {
	if cfgFlags.output == stdoutOutput {
		return outputPaths{stdoutOutput, stdoutOutput, stdoutOutput}, nil
	}
	dir := cfgFlags.output
	if dir == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return outputPaths{}, err
		}
		dir = cwd
	} else if len(cfgFlags.outputTypes) == 1 {
		return outputPaths{dir, dir, dir}, nil
	}
	return outputPaths{
		filepath.Join(dir, machine.TypeControlPlane.String()+yamlExt),
		filepath.Join(dir, machine.TypeWorker.String()+yamlExt),
		filepath.Join(dir, "talosconfig"),
	}, nil
}

// config.go l.329-352: every output, configs and talosconfig alike, written with mode 0644
// (os.WriteFile, so less the umask); "Created …" on stderr.
func writeToDestination(data []byte, destination string, perm os.FileMode) error {
	if destination == stdoutOutput {
		_, err := os.Stdout.Write(data)
		return err
	}
	if err := validateFileExists(destination); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(destination), os.ModePerm); err != nil {
		return fmt.Errorf("failed to create output dir: %w", err)
	}
	err := os.WriteFile(destination, data, perm)
	fmt.Fprintf(os.Stderr, "Created %s\n", destination)
	return err
}

// config.go l.174-258 (writeConfig), l.121-171 (GenerateConfigBundle), l.290-327
// (writeConfigBundle).
func writeConfig(args []string) error {
	if err := validateFlags(); err != nil {
		return err
	}
	out, err := paths()
	if err != nil {
		return err
	}
	var genOptions []generate.Option
	// l.186-193: --registry-mirror, default none.
	if cfgFlags.talosVersion != "" { // l.195-204
		vc, err := config.ParseContractFromVersion(cfgFlags.talosVersion)
		if err != nil {
			return fmt.Errorf("invalid talos-version: %w", err)
		}
		genOptions = append(genOptions, generate.WithVersionContract(vc))
	}
	// l.207-211: --with-kubespan, default false: no option.
	if cfgFlags.withSecrets != "" { // l.213-226
		sb, err := secrets.LoadBundle(cfgFlags.withSecrets)
		if err != nil {
			return fmt.Errorf("failed to load secrets bundle: %w", err)
		}
		if err = sb.Validate(); err != nil {
			return fmt.Errorf("failed to validate secrets bundle: %w", err)
		}
		genOptions = append(genOptions, generate.WithSecretsBundle(sb))
	}
	// l.228-234, with the defaults of the flags fleetc never passes (l.430-444):
	// --install-disk /dev/sda, --additional-sans [], --dns-domain cluster.local,
	// --with-cluster-discovery true.
	genOptions = append(genOptions,
		generate.WithInstallDisk("/dev/sda"),
		generate.WithInstallImage(cfgFlags.installImage),
		generate.WithAdditionalSubjectAltNames([]string{}),
		generate.WithDNSDomain("cluster.local"),
		generate.WithClusterDiscovery(true),
	)
	genOptions = append(genOptions, minorGenOptions...) // minor.go: what one tag adds
	// l.236-243: --with-docs=false --with-examples=false leave CommentsDisabled.
	comments := encoder.CommentsDisabled
	if cfgFlags.withDocs {
		comments |= encoder.CommentsDocs
	}
	if cfgFlags.withExamples {
		comments |= encoder.CommentsExamples
	}
	// l.132-141: the bundle's input options; KubeVersion without a leading "v".
	opts := []bundle.Option{bundle.WithInputOptions(&bundle.InputOptions{
		ClusterName: args[0],
		Endpoint:    args[1],
		KubeVersion: strings.TrimPrefix(cfgFlags.kubernetesVersion, "v"),
		GenOptions:  genOptions,
	})}
	// l.143-163: every --config-patch (in the order given; `@file` read by LoadPatches) is one
	// bundle.WithPatch, applied to every machine type; --config-patch-control-plane and
	// --config-patch-worker are bundle.WithPatchControlPlane and WithPatchWorker, applied after
	// them to that type only (machinery config/bundle/bundle.go applyPatches).
	for _, list := range []struct {
		patches []string
		opt     func([]configpatcher.Patch) bundle.Option
	}{{cfgFlags.configPatch, bundle.WithPatch}, {cfgFlags.configPatchCP, bundle.WithPatchControlPlane}, {cfgFlags.configPatchWorker, bundle.WithPatchWorker}} {
		ps, err := configpatcher.LoadPatches(list.patches)
		if err != nil {
			return fmt.Errorf("error parsing config JSON patch: %w", err)
		}
		opts = append(opts, list.opt(ps))
	}
	b, err := bundle.NewBundle(opts...) // l.165-168
	if err != nil {
		return fmt.Errorf("failed to generate config bundle: %w", err)
	}
	types := xslices.ToSet(cfgFlags.outputTypes) // l.291
	if _, ok := types[controlPlaneOutputType]; ok {
		data, err := b.Serialize(comments, machine.TypeControlPlane)
		if err != nil {
			return err
		}
		if err = writeToDestination(data, out.controlPlane, 0o644); err != nil {
			return err
		}
	}
	if _, ok := types[workerOutputType]; ok {
		data, err := b.Serialize(comments, machine.TypeWorker)
		if err != nil {
			return err
		}
		if err = writeToDestination(data, out.worker, 0o644); err != nil {
			return err
		}
	}
	if _, ok := types[talosconfigOutputType]; ok {
		// l.315-324: the bundle's talosconfig (generate/talosconfig.go: the cluster's name as
		// context, endpoints from WithEndpointList, which talosctl gen config never sets: empty).
		data, err := yaml.Marshal(b.TalosConfig())
		if err != nil {
			return fmt.Errorf("failed to marshal config: %+v", err)
		}
		if err = writeToDestination(data, out.talosconfig, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// secrets.go l.34-92 (without --from-kubernetes-pki and --from-controlplane-config).
func writeSecrets() error {
	var vc *config.VersionContract
	var err error
	if secretsFlags.talosVersion != "" {
		if vc, err = config.ParseContractFromVersion(secretsFlags.talosVersion); err != nil {
			return fmt.Errorf("invalid talos-version: %w", err)
		}
	}
	sb, err := secrets.NewBundle(secrets.NewFixedClock(time.Now()), vc)
	if err != nil {
		return fmt.Errorf("failed to create secrets bundle: %w", err)
	}
	data, err := yaml.Marshal(sb)
	if err != nil {
		return err
	}
	if secretsFlags.outputFile == stdoutOutput {
		_, err = os.Stdout.Write(data)
		return err
	}
	if err = validateFileExists(secretsFlags.outputFile); err != nil {
		return err
	}
	return os.WriteFile(secretsFlags.outputFile, data, 0o600)
}

func notImpl(cmd *cobra.Command, _ []string) error { return notImplemented{"talosctl " + cmd.Name()} }

func main() {
	root := &cobra.Command{Use: "talosctl", SilenceUsage: true, SilenceErrors: true, RunE: notImpl}
	gen := &cobra.Command{Use: "gen", RunE: notImpl, Args: cobra.ArbitraryArgs}
	gen.PersistentFlags().BoolVarP(&force, "force", "f", false, "will overwrite existing files")
	cfg := &cobra.Command{
		Use:  "config <cluster name> <cluster endpoint>",
		Args: cobra.ExactArgs(2), // config.go l.88
		RunE: func(_ *cobra.Command, args []string) error {
			if err := validateClusterEndpoint(args[1]); err != nil {
				return err
			}
			return writeConfig(args) // --version keeps its default v1alpha1 (l.95-100)
		},
	}
	f := cfg.Flags() // config.go l.431-449: the flags fleetc passes, talosctl's defaults
	f.StringVar(&cfgFlags.installImage, "install-image", "ghcr.io/siderolabs/installer:"+version.Tag, "")
	f.StringVar(&cfgFlags.talosVersion, "talos-version", "", "")
	f.StringVar(&cfgFlags.kubernetesVersion, "kubernetes-version", constants.DefaultKubernetesVersion, "")
	f.StringArrayVar(&cfgFlags.configPatch, "config-patch", nil, "")
	f.StringArrayVar(&cfgFlags.configPatchCP, "config-patch-control-plane", nil, "")
	f.StringArrayVar(&cfgFlags.configPatchWorker, "config-patch-worker", nil, "")
	f.BoolVar(&cfgFlags.withExamples, "with-examples", true, "")
	f.BoolVar(&cfgFlags.withDocs, "with-docs", true, "")
	f.StringVar(&cfgFlags.withSecrets, "with-secrets", "", "")
	f.StringSliceVarP(&cfgFlags.outputTypes, "output-types", "t", allOutputTypes, "")
	f.StringVarP(&cfgFlags.output, "output", "o", "", "")
	sec := &cobra.Command{Use: "secrets", Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error { return writeSecrets() }}
	sec.Flags().StringVarP(&secretsFlags.outputFile, "output-file", "o", "secrets.yaml", "") // secrets.go l.95
	sec.Flags().StringVar(&secretsFlags.talosVersion, "talos-version", "", "")
	gen.AddCommand(cfg, sec)
	root.AddCommand(gen)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return notImplemented{fmt.Sprintf("talosctl %s: %v", c.Name(), err)}
	})
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetHelpCommand(&cobra.Command{Use: "no-help", Hidden: true})
	err := root.Execute()
	if err == nil {
		return
	}
	var ni notImplemented
	if errors.As(err, &ni) {
		fmt.Fprintln(os.Stderr, err.Error())
		os.Exit(2)
	}
	if strings.Contains(err.Error(), "unknown command") {
		fmt.Fprintln(os.Stderr, notImplemented{err.Error()}.Error())
		os.Exit(2)
	}
	// main.go / cmd/root.go l.34-49: the error on stderr, exit 1.
	fmt.Fprintln(os.Stderr, err.Error())
	os.Exit(1)
}
