// Command argocd-controllers is the controllers family's Argo CD (oracles/controllers): the
// application controller, the repo server and the git askpass helper of
// github.com/argoproj/argo-cd/v3 at the version go.mod pins, in one binary, chosen as Argo CD's
// own cmd/main.go chooses (the ARGOCD_BINARY_NAME variable, else the name it runs under):
//
//	argocd-application-controller ARGS...   cmd/argocd-application-controller/commands
//	argocd-repo-server ARGS...              cmd/argocd-repo-server/commands
//	argocd-git-ask-pass                     cmd/argocd-git-ask-pass/commands (the repo server's GIT_ASKPASS)
//	argocd-redis ADDR                       github.com/alicebob/miniredis/v2 (Argo CD's own test dependency)
//	                                        serving Argo CD's cache on ADDR until killed
//
// Only these three: the API server, Dex, notifications and the CLI are not needed to sync, and
// leaving them out keeps the cold build short (oracles/README.md, "Cost"). The cache is an
// in-memory Redis (Argo CD keeps only a cache there), so the harness needs no Redis server.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/alicebob/miniredis/v2"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	gitaskpass "github.com/argoproj/argo-cd/v3/cmd/argocd-git-ask-pass/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	"github.com/argoproj/argo-cd/v3/util/log"
)

func init() {
	klog.SetLogger(log.NewLogrusLogger(log.NewWithCurrentConfig()))
}

func main() {
	name := filepath.Base(os.Args[0])
	if v := os.Getenv("ARGOCD_BINARY_NAME"); v != "" {
		name = v
	}
	if name == "argocd-redis" {
		if len(os.Args) != 2 {
			fmt.Fprintln(os.Stderr, "usage: ARGOCD_BINARY_NAME=argocd-redis argocd-controllers ADDR")
			os.Exit(2)
		}
		r := miniredis.NewMiniRedis()
		if err := r.StartAddr(os.Args[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		select {}
	}
	var command *cobra.Command
	switch name {
	case "argocd-application-controller":
		command = appcontroller.NewCommand()
	case "argocd-repo-server":
		command = reposerver.NewCommand()
	case "argocd-git-ask-pass", "argocd":
		command = gitaskpass.NewCommand()
	default:
		fmt.Fprintf(os.Stderr, "argocd-controllers: unknown role %q (ARGOCD_BINARY_NAME)\n", name)
		os.Exit(2)
	}
	if err := command.Execute(); err != nil {
		os.Exit(1)
	}
}
