// Command kube is the kube oracle's one binary: the real etcd server, kube-apiserver and
// kubectl, built from their upstream Go modules (see go.mod), chosen by the first argument:
//
//	kube etcd ARGS...        go.etcd.io/etcd/server/v3/etcdmain (as the etcd binary runs it)
//	kube apiserver ARGS...   k8s.io/kubernetes/cmd/kube-apiserver/app (as cmd/kube-apiserver runs it)
//	kube kubectl ARGS...     k8s.io/kubectl/pkg/cmd (as cmd/kubectl runs it)
//
// One binary, so the shared dependency tree is compiled and linked once.
package main

import (
	"fmt"
	"os"
	_ "time/tzdata"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kube etcd|apiserver|kubectl ARGS...")
		os.Exit(2)
	}
	tool := os.Args[1]
	switch tool {
	case "etcd":
		// etcdmain reads its flags from args[1:], like the etcd binary's os.Args.
		etcdmain.Main(append([]string{"etcd"}, os.Args[2:]...))
	case "apiserver":
		os.Args = append([]string{"kube-apiserver"}, os.Args[2:]...)
		os.Exit(cli.Run(app.NewAPIServerCommand()))
	case "kubectl":
		os.Args = append([]string{"kubectl"}, os.Args[2:]...)
		logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
		if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
			util.CheckErr(err)
		}
	default:
		fmt.Fprintf(os.Stderr, "kube: unknown tool %q\n", tool)
		os.Exit(2)
	}
}
