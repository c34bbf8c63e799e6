//! The `fleet::argocd` codes: GitOps with Argo CD, its applications, their order, sources and
//! secrets. Checked in `src/check/argocd.rs`.

codes! {
    NO_GITOPS = "fleet::argocd::no-gitops", Error, Some("R23"),
    Some("Argo CD delivers every app from the fleet's git repository (R23): add `gitops repo=\"https://…\" revision=\"main\"` to the fleet"),
"## What it does
Reports apps declared in a fleet that has no `gitops` block.

## Why (R23)
Everything after the cluster is delivered from git by Argo CD. Without the repository and the
revision Argo CD follows, fleetc cannot write the root application nor any Application.

## Example
    fleet \"acme\" {
        environment \"staging\" {
            cluster \"main\" {
                app \"platform\" path=\"apps/platform\" namespace=\"platform\"

## Instead
    fleet \"acme\" {
        gitops repo=\"https://git.example.org/acme/fleet.git\" revision=\"main\"
";

    APP_CYCLE = "fleet::argocd::after-cycle", Error, Some("F7"),
    Some("an app syncs only after the apps it waits for are healthy (F7); apps that wait for each other never start: remove one `after`"),
"## What it does
Reports apps whose `after` lists wait for each other in a circle, and shows the circle.

## Why (F7)
fleetc turns `after` into Argo CD sync waves: an app goes one wave after the apps it waits for,
and the root application moves to the next wave only when the previous one is healthy. A circle
has no first wave: no order can satisfy it.

## Example
    app \"a\" path=\"apps/a\" namespace=\"a\" after=\"b\"
    app \"b\" path=\"apps/b\" namespace=\"b\" after=\"a\"

## Instead
    app \"a\" path=\"apps/a\" namespace=\"a\"
    app \"b\" path=\"apps/b\" namespace=\"b\" after=\"a\"
";

    WAVE_BEFORE_DEPENDENCY = "fleet::argocd::wave-before-dependency", Error, Some("F7"),
    Some("an explicit `wave` overrides the order derived from `after` (F7): give the app a wave above the apps it waits for, or drop the `wave`"),
"## What it does
Reports an app whose explicit `wave` is not above the wave of an app it waits for (`after`).

## Why (F7)
Sync waves are the only order Argo CD knows between child Applications. An app in the same or
an earlier wave than its dependency starts alongside it or before it, whatever `after` says.

## Example
    app \"db\" path=\"apps/db\" namespace=\"db\" wave=5
    app \"api\" path=\"apps/api\" namespace=\"api\" after=\"db\" wave=2

## Instead
    app \"api\" path=\"apps/api\" namespace=\"api\" after=\"db\"   // wave 6, derived
";

    APP_PATH_MISSING = "fleet::argocd::path-missing", Warning, Some("R23"),
    Some("Argo CD reads the path from the fleet's repository (R23); until the directory is committed there, the app stays out of sync"),
"## What it does
Warns when a path app names a directory that does not exist beside fleet.kdl.

## Why (R23)
Argo CD reads the app's manifests from that directory of the fleet's repository. A path that
does not exist makes the Application fail to generate manifests; a typo shows up only in the
cluster, after the merge.

## Example
    app \"platform\" path=\"apps/platfrom\" namespace=\"platform\"

## Instead
    app \"platform\" path=\"apps/platform\" namespace=\"platform\"
";

    CHART_UNPINNED = "fleet::argocd::chart-unpinned", Error, Some("R28"),
    Some("a chart app without an exact version installs whatever the chart repository serves that day: a restore from git (R28) would not rebuild the same cluster"),
"## What it does
Reports a Helm chart app whose `version` is missing, or is a range or tag (`*`, `1.x`, `^1.2`,
`>=1.0`, `latest`) rather than one exact version.

## Why (R28)
The fleet's description in git is what restores a lost cluster. A chart version that is not
pinned changes under the same commit: two syncs of the same revision install different code.

## Example
    app \"external-secrets\" chart=\"external-secrets\" repo=\"https://charts.external-secrets.io\" namespace=\"external-secrets\"

## Instead
    app \"external-secrets\" chart=\"external-secrets\" repo=\"https://charts.external-secrets.io\" version=\"0.20.4\" namespace=\"external-secrets\"
";

    APPLICATION_NAME_CLASH = "fleet::argocd::application-name-clash", Error, None,
    Some("every Application of one Argo CD lives in its namespace, so their names must differ: rename one of the apps"),
"## What it does
Reports two Applications with the same name on one Argo CD: a management cluster's Argo CD
holds its own apps, the apps of the workload clusters it manages (named
`<cluster>-<app>`), and the Applications fleetc adds (`fleet-root`, `fleet-secrets`,
`fleet-capi-*`, `fleet-cluster-<cluster>`).

## Why
Applications are objects in Argo CD's namespace; a second one with the same name replaces the
first, and one of the two apps silently disappears.

## Example
    cluster \"mgmt\" { app \"edge-1-platform\" path=\"apps/x\" namespace=\"x\" }
    cluster \"edge-1\" managed-by=\"mgmt\" { app \"platform\" path=\"apps/platform\" namespace=\"platform\" }

## Instead
    cluster \"mgmt\" { app \"x\" path=\"apps/x\" namespace=\"x\" }
";

    NO_SECRET_STORE = "fleet::argocd::no-secret-store", Error, Some("R10"),
    Some("fleetc delivers postgres passwords from Scaleway Secret Manager, where the cloud root writes them (R10); this environment has none"),
"## What it does
Reports an app that reads a postgres password (`postgres \"<name>\"`) in an environment whose
provider has no Secret Manager fleetc can read from (only Scaleway has one).

## Why (R10)
The cloud root writes the database password to Secret Manager, write-only; External Secrets
Operator reads it from there into the cluster. Without that store the ExternalSecret could
never resolve and the app would wait for its password forever.

## Example
    environment \"lab\" {
        proxmox …
        cluster \"main\" { app \"api\" path=\"apps/api\" namespace=\"api\" { postgres \"app\" } }

## Instead
Deliver the password another way in that environment, or run the app in a Scaleway one.
";

    NO_SECRET_OPERATOR = "fleet::argocd::no-secret-operator", Warning, Some("R23"),
    Some("the ExternalSecrets fleetc writes need External Secrets Operator in the cluster (R23): deliver it as an app (`chart=\"external-secrets\"`)"),
"## What it does
Warns when an app reads a postgres password but no app of its cluster installs External
Secrets Operator (a chart app with `chart=\"external-secrets\"`).

## Why (R23)
The password reaches the cluster through a ClusterSecretStore and an ExternalSecret, both
custom resources of External Secrets Operator. Without the operator they are never applied
(their kinds do not exist), and fleetc cannot order the secret before the app.

## Example
    app \"platform\" path=\"apps/platform\" namespace=\"platform\" { postgres \"app\" }

## Instead
    app \"external-secrets\" chart=\"external-secrets\" repo=\"https://charts.external-secrets.io\" version=\"0.20.4\" namespace=\"external-secrets\"
    app \"platform\" path=\"apps/platform\" namespace=\"platform\" after=\"external-secrets\" { postgres \"app\" }
";

    WAITS_FOR_MANUAL = "fleet::argocd::waits-for-manual", Error, Some("F7"),
    Some("the root application waits, wave by wave, for each child to be Healthy, and an app synced by hand is not until someone syncs it (F7): only the root's last wave is not waited for, and fleetc puts every manual app there"),
"## What it does
Reports an app that waits for an app synced by hand (`after` naming a `sync=\"manual\"` app,
or, for the secrets Application fleetc adds, a manual External Secrets chart app), and a
manual app with an explicit `wave`.

## Why (F7)
Waves order the root application's sync: between two waves the root waits for every
Application of the first to be Healthy, with no timeout. An app synced by hand reads
`Missing` until someone syncs it whenever its resources include a kind with a health check (a
Deployment, a Service, any chart), so the root's sync stops at its wave and every later
wave, the workload clusters' Applications of a management cluster among them, is never
applied; later commits are not applied either, since no new sync starts while one runs
(gitops-engine `pkg/sync/sync_context.go`, argo-cd v3.2.1 `controller/appcontroller.go`).
Only the last wave is not waited for: fleetc puts every manual app there, with the workload
clusters' Applications.

## Example
    app \"dashboard\" chart=\"headlamp\" repo=\"…\" version=\"0.38.0\" namespace=\"headlamp\" sync=\"manual\" wave=1
    app \"platform\" path=\"apps/platform\" namespace=\"platform\" after=\"dashboard\"

## Instead
    app \"dashboard\" chart=\"headlamp\" repo=\"…\" version=\"0.38.0\" namespace=\"headlamp\" sync=\"manual\"
    app \"platform\" path=\"apps/platform\" namespace=\"platform\"
";

    NO_STORE_CREDENTIAL = "fleet::argocd::no-store-credential", Error, Some("R23"),
    Some("the secret store reads its Scaleway API key from a Secret that `fleetc apply` writes from the cluster's sealed `scaleway-api-key` (R23, F11); without it the store is never Ready and the secrets never reach the app"),
"## What it does
Reports an app that reads a postgres password on a cluster that does not list the sealed
input `scaleway-api-key`.

## Why (R23, F11)
External Secrets Operator reads the password from Scaleway Secret Manager through a
ClusterSecretStore whose API key is a Secret in the operator's namespace. That Secret is key
material, so it is never in out/: `fleetc apply` writes it, before the root application
delivers the store, from the cluster's sealed `scaleway-api-key`. Without the input there is
no key: the store is never Ready, the secrets Application is Degraded, and the root's sync
stops at its wave.

## Example
    cluster \"main\" {
        app \"platform\" path=\"apps/platform\" namespace=\"platform\" { postgres \"app\" }
    }

## Instead
    cluster \"main\" {
        sealed \"talos-secrets\" \"scaleway-api-key\"
        app \"platform\" path=\"apps/platform\" namespace=\"platform\" { postgres \"app\" }
    }
and `fleetc secrets import staging/main scaleway-api-key key.yaml`.
";

    APP_VALUES_MISSING = "fleet::argocd::values-missing", Warning, Some("R23"),
    Some("Argo CD reads a chart's values file from the fleet's repository (R23); until the file is committed there, the app's manifests cannot be generated"),
"## What it does
Warns when a chart app's `values=` names a file that does not exist beside fleet.kdl, as
`fleet::argocd::path-missing` does for a path app.

## Why (R23)
fleetc writes the file as a value file of the chart source, `$values/<path>`, read from the
fleet's repository (the Application's second source, `ref: values`). Argo CD's repo server
drops a missing value file only when `ignoreMissingValueFiles` is set, which fleetc does not
set, and otherwise hands it to `helm template`, which fails: the Application shows a
manifest generation error instead of syncing (argoproj/argo-cd v3.2.1
`reposerver/repository/repository.go`, `helmTemplate`, the `IgnoreMissingValueFiles` test on
each value file). A typo shows only in the cluster, after the merge.

## Example
    app \"monitoring\" chart=\"kube-prometheus-stack\" repo=\"https://prometheus-community.github.io/helm-charts\" version=\"79.1.0\" values=\"values/monitoring.yaml\" namespace=\"monitoring\"
    // and no values/monitoring.yaml beside fleet.kdl

## Instead
Commit `values/monitoring.yaml`, or correct the path.
";
}
