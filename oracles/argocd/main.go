// Command argocd-permit is the argocd oracle: Argo CD's own AppProject code
// (github.com/argoproj/argo-cd/v3 pkg/apis/application/v1alpha1, the version go.mod pins)
// decides, for every Application of an out/ tree, whether its source repositories and
// destination are permitted by its AppProject, and whether every resource it will sync is.
//
//	argocd-permit REQUEST.json
//
// REQUEST.json (written by oracles/kube/check.py, which knows each kind's scope from the real
// API server's discovery): {"projects": [AppProject...], "apps": [{"app": Application,
// "label": "...", "resources": [{"group","kind","namespace","name","namespaced"}...]}]}.
// Prints one `ok argocd: …` or `FAIL argocd: …: …` line per Application.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

type resource struct {
	Group      string `json:"group"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Namespaced bool   `json:"namespaced"`
	Source     string `json:"source"`
}

type appRequest struct {
	Label     string               `json:"label"`
	App       v1alpha1.Application `json:"app"`
	Resources []resource           `json:"resources"`
	Skipped   []string             `json:"skipped"`
}

type request struct {
	Projects []v1alpha1.AppProject `json:"projects"`
	Apps     []appRequest          `json:"apps"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: argocd-permit REQUEST.json")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		fmt.Fprintln(os.Stderr, "argocd-permit:", err)
		os.Exit(3)
	}
	projects := map[string]v1alpha1.AppProject{}
	for _, p := range req.Projects {
		projects[p.Name] = p
	}
	noClusters := func(string) ([]*v1alpha1.Cluster, error) { return nil, nil }
	for _, a := range req.Apps {
		app := a.App
		label := fmt.Sprintf("%s: Application %s", a.Label, app.Name)
		proj, ok := projects[app.Spec.GetProject()]
		if !ok {
			fmt.Printf("FAIL argocd: %s: its project %q is in no AppProject of this tree\n", label, app.Spec.GetProject())
			continue
		}
		var why []string
		for _, src := range app.Spec.GetSources() {
			if !proj.IsSourcePermitted(src) {
				why = append(why, fmt.Sprintf("source %s is not in project %s's sourceRepos", src.RepoURL, proj.Name))
			}
		}
		dest := app.Spec.Destination
		cluster := &v1alpha1.Cluster{Server: dest.Server, Name: dest.Name}
		if ok, err := proj.IsDestinationPermitted(cluster, dest.Namespace, noClusters); err != nil || !ok {
			why = append(why, fmt.Sprintf("destination server %q name %q namespace %q matches none of project %s's destinations", dest.Server, dest.Name, dest.Namespace, proj.Name))
		}
		for _, r := range a.Resources {
			ns := r.Namespace
			if r.Namespaced && ns == "" {
				ns = dest.Namespace // Argo CD puts a namespaced resource without one there
			}
			if !r.Namespaced {
				ns = ""
			}
			gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
			permitted, err := proj.IsResourcePermitted(gk, ns, cluster, noClusters)
			if err != nil || !permitted {
				scope := "cluster-scoped"
				if r.Namespaced {
					scope = "in namespace " + ns
				}
				why = append(why, fmt.Sprintf("%s %s/%s %s (%s) is not permitted by project %s", r.Kind, r.Group, r.Name, scope, r.Source, proj.Name))
			}
		}
		if len(why) == 0 {
			extra := ""
			if len(a.Skipped) > 0 {
				extra = fmt.Sprintf("; not judged: %v", a.Skipped)
			}
			fmt.Printf("ok argocd: %s (project %s): source, destination and %d resources permitted%s\n", label, proj.Name, len(a.Resources), extra)
		} else {
			for _, w := range why {
				fmt.Printf("FAIL argocd: %s: %s\n", label, w)
			}
		}
	}
}
