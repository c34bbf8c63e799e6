"""Argo CD syncing each GitOps root of a tree: the real application controller and repo server
(Argo CD v3.2.1, oracles/argocd/controllers: one binary, its role chosen by ARGOCD_BINARY_NAME)
against the harness's API servers, reading the tree's fleet directory from a loopback git server
at the repository URLs fleetc wrote, unchanged.

`judge(env)` (check.py calls it when the tree has out/argocd/) returns the out/capi/<mgmt>/<cluster>
directories Argo CD delivered (synced) into env.cluster, for capi.judge. `break_cases()` lists
edits of golden/proxmox-minimal's out/ that must make this family FAIL (its self-test).

What runs, per tree (one network and mount namespace, check.py):
- git: the fleet directory (fleet.kdl and the top directories the Applications read) committed
  into one bare repository per repository URL, under the `gitops path=` prefix the root's path
  shows, with a branch per targetRevision; served over HTTPS smart HTTP on 127.0.0.1:443
  (argocd/gitserver.py, git's own git-http-backend) with a throwaway CA that Argo CD trusts as a
  user with a private CA makes it (argocd-tls-certs-cm keyed by host; the repository Secret stays
  as `fleetc apply` writes it, no `insecure`); /etc/hosts of the tree's namespace points the URLs'
  hosts at 127.0.0.1 (env.hosts).
- the repo server, one per tree, with its own in-memory redis (argocd-redis: miniredis), its
  temporary, askpass and TLS-data paths in the tree's scratch directory, and `kustomize` on its
  PATH as a shim running `kubectl kustomize` of the kube oracle's binary. No helm: chart apps
  cannot be rendered (no chart repository is reachable either) and are not judged.
- per root (out/argocd/<env>/<cluster>/bootstrap/): a cluster of its own, since every root names
  the same Argo CD objects (`fleet-root` in `argocd`): env.cluster for the root that delivers
  Cluster API objects (capi.prepare made that cluster ready for them), a fresh API server (the kube
  oracle's Cluster) for each other root, all roots at once; Argo CD v3.2.1's own
  manifests/install.yaml applied as `fleetc apply` step 7 applies the vendored one
  (src/apply/argocd.rs), what argocd-server would write at its first start (server.secretkey),
  the repository Secret, the Secrets apply writes from sealed inputs (placeholder values), then
  the bootstrap files in file order under fleetc's field manager; one application controller with
  its own redis, its environment resolved from the install manifest's StatefulSet and the live
  ConfigMaps, as the kubelet would, and ARGOCD_FAKE_IN_CLUSTER so that the in-cluster destination
  is its API server. Workload clusters an Application names (`destination.name`) get a scratch
  API server of their own, registered by a cluster Secret as docs/argocd.md tells the user to.
- knobs: argocd-cm `timeout.reconciliation: 10s` and jitter 0 (default 120 s + 60 s) and
  argocd-cmd-params-cm `controller.resource.health.persist: "true"`, each under the harness's own
  field manager (HARNESS_SETTINGS); ARGOCD_SYNC_WAVE_DELAY is left at its 2 s (the pause between
  two waves that gives other controllers a chance to react: controller/sync.go
  delayBetweenSyncWaves). Every wait polls the API server every 0.5 s.

What is not there (no kube-controller-manager, no kubelet, no Pod ever runs) decides which health
Argo CD can report here: STAND_INS and EXPECTED say, per kind, why it is not Healthy. When a wave
waits on an Application for nothing else, the harness writes the status the missing controller
would write (a SIMULATED line says so), or, when even that is refused (an admission webhook
without a server), creates the later waves' Applications in the root's place, said on each line.

Lines, per root (`argocd/<env>/<cluster>: …`): bootstrap; the root (Synced, its sync Succeeded,
its objects = the files of its apps/ directory, each Synced and in the API server, health); the
waves of each app of apps (created, and their first syncs started, in wave order); each
Application (Synced, its objects = its source directory rendered as Argo CD renders it, each among
its resources, Synced and in the API server, the destination namespace, health against what a
cluster without kubelets can report; manual ones after a sync requested as `argocd app sync`
requests it); projects (no Application refused by its project). Per tree: each repository served,
the Argo CD pin judged by v3.2.1, CRD stand-ins (and, not as a check, the time it took).

Argo CD is cited as (argoproj/argo-cd, v3.2.1, path), gitops-engine as (argoproj/gitops-engine,
13d5172d3ee2, path): the sources in the Go module cache.
"""

import base64
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ARGOCD_ORACLE = REPO / "oracles" / "argocd"
ARGOCD_MODULE = "github.com/argoproj/argo-cd/v3"
GIT_PORT = 443
REPO_SERVER_PORT = 8081
REPO_REDIS_PORT = 6379
HARNESS_MANAGER = "fleetc-controllers-harness"
INSTALL_MANAGER = "fleetc-argocd-install"   # src/layout/names.rs ARGOCD_INSTALL_FIELD_MANAGER
FLEETC_MANAGER = "fleetc"                   # src/layout/names.rs FIELD_MANAGER
REPO_SECRET = "fleet-repository"            # src/apply/argocd.rs REPO_SECRET
WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
POLL = 0.5
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# The knobs the harness sets, each under its own field manager in the ConfigMap a user would
# edit; the controller reads them through its environment as the install manifest's StatefulSet
# maps them (manifests/install.yaml, argocd-application-controller `env`).
HARNESS_SETTINGS = {
    # How often every Application is compared with git again (default 120 s, plus up to 60 s of
    # jitter: cmd/argocd-application-controller/commands/argocd_application_controller.go l.259-261).
    # The fleet's repository never changes here, so this only bounds how long a missed event
    # could delay a look; every look the judgement waits for is event-driven anyway.
    "argocd-cm": {"timeout.reconciliation": "10s", "timeout.reconciliation.jitter": "0s"},
    # Resource health in the Application's status.resources (`--persist-resource-health`, off by
    # default since 2.x moved it to the resource tree in redis): the judgement reads each
    # resource's health from the API server instead of Argo CD's cache.
    "argocd-cmd-params-cm": {"controller.resource.health.persist": "true"},
}

# Kinds whose health needs a controller or a kubelet that does not run here, and the status the
# harness writes in their place when (only when) a root waits on an Application for nothing
# else, so that the root's later waves can be judged. Each entry: why Argo CD reads it as not
# Healthy here, and the status that controller would write once its work is done.
STAND_INS = {
    ("apps", "Deployment"): (
        "no kube-controller-manager and no kubelet: status.observedGeneration is never written "
        "(gitops-engine pkg/health/health_deployment.go)",
        lambda o: {"observedGeneration": o["metadata"].get("generation", 1),
                   "replicas": _replicas(o), "updatedReplicas": _replicas(o), "readyReplicas": _replicas(o),
                   "availableReplicas": _replicas(o),
                   "conditions": [_cond("Available", "MinimumReplicasAvailable"),
                                  _cond("Progressing", "NewReplicaSetAvailable")]}),
    ("apps", "StatefulSet"): (
        "no kube-controller-manager and no kubelet: status.observedGeneration is never written "
        "(gitops-engine pkg/health/health_statefulset.go)",
        lambda o: {"observedGeneration": o["metadata"].get("generation", 1), "replicas": _replicas(o),
                   "readyReplicas": _replicas(o), "currentReplicas": _replicas(o),
                   "updatedReplicas": _replicas(o), "availableReplicas": _replicas(o),
                   "currentRevision": "harness", "updateRevision": "harness"}),
    ("apps", "DaemonSet"): (
        "no kube-controller-manager and no kubelet: status.observedGeneration is never written "
        "(gitops-engine pkg/health/health_daemonset.go)",
        lambda o: {"observedGeneration": o["metadata"].get("generation", 1), "desiredNumberScheduled": 1,
                   "currentNumberScheduled": 1, "updatedNumberScheduled": 1, "numberReady": 1,
                   "numberAvailable": 1}),
    ("external-secrets.io", "ExternalSecret"): (
        "External Secrets Operator does not run here (its chart cannot be rendered offline): no Ready "
        "condition (argo-cd v3.2.1 resource_customizations/external-secrets.io/ExternalSecret/health.lua)",
        lambda o: {"conditions": [_cond("Ready", "SecretSynced")]}),
    ("external-secrets.io", "ClusterSecretStore"): (
        "External Secrets Operator does not run here: no Ready condition (argo-cd v3.2.1 "
        "resource_customizations/external-secrets.io/ClusterSecretStore/health.lua)",
        lambda o: {"conditions": [_cond("Ready", "Valid")]}),
    ("external-secrets.io", "SecretStore"): (
        "External Secrets Operator does not run here: no Ready condition (argo-cd v3.2.1 "
        "resource_customizations/external-secrets.io/SecretStore/health.lua)",
        lambda o: {"conditions": [_cond("Ready", "Valid")]}),
    ("cert-manager.io", "Certificate"): (
        "cert-manager does not run here: no Ready condition (argo-cd v3.2.1 "
        "resource_customizations/cert-manager.io/Certificate/health.lua)",
        lambda o: {"conditions": [_cond("Ready", "Ready")]}),
    ("cert-manager.io", "Issuer"): (
        "cert-manager does not run here: no Ready condition (argo-cd v3.2.1 "
        "resource_customizations/cert-manager.io/Issuer/health.lua)",
        lambda o: {"conditions": [_cond("Ready", "IsReady")]}),
    ("cert-manager.io", "ClusterIssuer"): (
        "cert-manager does not run here: no Ready condition (argo-cd v3.2.1 "
        "resource_customizations/cert-manager.io/ClusterIssuer/health.lua)",
        lambda o: {"conditions": [_cond("Ready", "IsReady")]}),
    ("", "PersistentVolumeClaim"): (
        "no volume provisioner: the claim stays Pending (gitops-engine pkg/health/health_pvc.go)",
        lambda o: {"phase": "Bound"}),
    ("", "Service"): (
        "no load-balancer controller: a LoadBalancer Service gets no ingress address "
        "(gitops-engine pkg/health/health_service.go)",
        lambda o: {"loadBalancer": {"ingress": [{"ip": "127.0.0.1"}]}}),
}


# Kinds whose health here is expectedly not Healthy and which the harness leaves as they are
# (they never gate a wave fleetc writes: the Cluster API objects of a workload cluster are synced
# by hand in the root's last wave; capi.py follows their reconcile): why, and the statuses Argo CD
# reads for them here.
EXPECTED = {
    ("cluster.x-k8s.io", "Cluster"): (
        "no infrastructure provider runs here (CAPMOX is not built; capi.py says why): phase Provisioned "
        "never comes (argo-cd v3.2.1 resource_customizations/cluster.x-k8s.io/Cluster/health.lua)",
        ("Progressing",)),
    ("cluster.x-k8s.io", "MachineDeployment"): (
        "its Machines get no infrastructure here: phase Running never comes (argo-cd v3.2.1 "
        "resource_customizations/cluster.x-k8s.io/MachineDeployment/health.lua)", ("Progressing",)),
    ("cluster.x-k8s.io", "MachineHealthCheck"): (
        "no Machine gets a Node here: currentHealthy stays below expectedMachines (argo-cd v3.2.1 "
        "resource_customizations/cluster.x-k8s.io/MachineHealthCheck/health.lua)", ("Progressing", "Degraded")),
}


def reason_of(gk):
    return STAND_INS[gk][0] if gk in STAND_INS else EXPECTED[gk][0]


def _replicas(o):
    r = (o.get("spec") or {}).get("replicas")
    return 1 if r is None else r


def _cond(type_, reason):
    return {"type": type_, "status": "True", "reason": reason, "message": "written by the controllers harness",
            "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def docs_of(path):
    return [d for d in yaml.load_all(Path(path).read_text(), Loader=_LOADER) if isinstance(d, dict)]


def sources(app):
    s = app.get("spec") or {}
    return [x for x in [s.get("source")] + (s.get("sources") or []) if x]


def short(s, n=400):
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[:n] + "…"


def group_of(api_version):
    return api_version.rpartition("/")[0] if "/" in str(api_version) else ""


def kube_oracle():
    """The kube oracle's module, as check.py loaded it (its Cluster, CRD table and readers)."""
    return sys.modules["kube_oracle"]


def argocd_version():
    for ln in (ARGOCD_ORACLE / "go.mod").read_text().splitlines():
        parts = ln.split()
        if ARGOCD_MODULE in parts:
            return parts[parts.index(ARGOCD_MODULE) + 1]
    return "v3.2.1"


def module_dir():
    """Argo CD's module source in the Go module cache (the build put it there; no network)."""
    r = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", ARGOCD_MODULE], cwd=ARGOCD_ORACLE,
                       env=dict(os.environ, GOFLAGS="-mod=mod", GOPROXY="off"), capture_output=True, text=True)
    d = Path(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else None
    return d if d and (d / "manifests" / "install.yaml").is_file() else None


class Api:
    """A small client of one scratch API server (its kubeconfig's token), for polling: cheaper
    than one kubectl process per look."""

    def __init__(self, kubeconfig):
        cfg = json.loads(Path(kubeconfig).read_text())
        self.server = cfg["clusters"][0]["cluster"]["server"]
        self.token = cfg["users"][0]["user"]["token"]
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                                  urllib.request.HTTPSHandler(context=ctx))

    def get(self, path):
        req = urllib.request.Request(self.server + path, headers={
            "Authorization": f"Bearer {self.token}", "Accept": "application/json"})
        try:
            with self.opener.open(req, timeout=20) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise

    def apps(self, ns):
        r = self.get(f"/apis/argoproj.io/v1alpha1/namespaces/{ns}/applications")
        return {a["metadata"]["name"]: a for a in (r or {}).get("items", [])}


# ---------------------------------------------------------------------------------------------
# The tree, read statically: roots, the Applications each reaches, the objects each should own.


class App:
    """One Application as fleetc wrote it."""

    def __init__(self, f, doc, prefix_of):
        self.file, self.doc = f, doc
        md = doc.get("metadata") or {}
        self.name = md.get("name")
        self.ns = md.get("namespace") or "argocd"
        try:
            self.wave = int((md.get("annotations") or {}).get(WAVE_ANNOTATION, "0"))
        except ValueError:
            self.wave = 0
        spec = doc.get("spec") or {}
        self.project = spec.get("project")
        self.automated = "automated" in (spec.get("syncPolicy") or {})
        self.dest = spec.get("destination") or {}
        self.sources = sources(doc)
        self.charts = [s for s in self.sources if s.get("chart")]
        self.paths = []  # (source, fleet-relative dir or None)
        for s in self.sources:
            if s.get("chart") or (s.get("ref") and not s.get("path")):
                continue
            prefix = prefix_of(s.get("repoURL"))
            p = s.get("path") or ""
            if prefix is None or not p.startswith(prefix):
                self.paths.append((s, None))
            else:
                self.paths.append((s, p[len(prefix):].strip("/")))


class Root:
    def __init__(self, bootstrap):
        self.bootstrap = bootstrap
        self.env_name, self.cluster_name = bootstrap.parent.parent.name, bootstrap.parent.name
        self.name = f"{self.env_name}/{self.cluster_name}"
        self.files = sorted(bootstrap.glob("*.yaml"))
        self.root_doc = None
        for f in self.files:
            for d in docs_of(f):
                if d.get("kind") == "Application":
                    self.root_doc = d
        self.ns = ((self.root_doc or {}).get("metadata") or {}).get("namespace") or "argocd"


class Tree:
    def __init__(self, env):
        self.env = env
        self.fleet = env.fleet_dir
        self.out = env.out
        self.roots = [Root(b) for b in sorted((env.out / "argocd").glob("*/*/bootstrap")) if any(b.glob("*.yaml"))]
        self.roots = [r for r in self.roots if r.root_doc is not None]
        # The fleet's repositories: the repoURL of each root, with the prefix its path shows
        # before out/argocd/ (`gitops path=`, docs/argocd.md "Where the repository paths come from").
        self.repos = {}
        for r in self.roots:
            for s in sources(r.root_doc):
                p = s.get("path") or ""
                if "out/argocd/" in p:
                    self.repos.setdefault(s["repoURL"], {"prefix": p.split("out/argocd/")[0], "revs": set()})
        self.apps = {}  # file dir (relative to fleet) -> [App]
        self.all_apps = []
        for f in sorted((env.out / "argocd").rglob("*.yaml")):
            for d in docs_of(f):
                if d.get("kind") == "Application" and d.get("apiVersion", "").startswith("argoproj.io/"):
                    a = App(f, d, self.prefix_of)
                    self.all_apps.append(a)
                    self.apps.setdefault(str(f.parent.relative_to(self.fleet)), []).append(a)
                    for s in a.sources:
                        if not s.get("chart") and s.get("repoURL") in self.repos:
                            self.repos[s["repoURL"]]["revs"].add(s.get("targetRevision") or "HEAD")
        for r in self.roots:
            for s in sources(r.root_doc):
                if s.get("repoURL") in self.repos:
                    self.repos[s["repoURL"]]["revs"].add(s.get("targetRevision") or "HEAD")

    def prefix_of(self, url):
        r = self.repos.get(url)
        return None if r is None else r["prefix"]

    def reach(self, root):
        """The Applications a root syncs, directly or through an app of apps (any depth), each
        with the name of the Application that syncs it."""
        root_app = App(root.files[-1], root.root_doc, self.prefix_of)
        seen, out, queue = set(), [], [root_app]
        while queue:
            parent = queue.pop(0)
            for s, d in parent.paths:
                if d is None or d in seen:
                    continue
                seen.add(d)
                for a in self.apps.get(d, []):
                    out.append((a, parent.name))
                    queue.append(a)
        return root_app, out


_RENDERED = {}


def render(fleet, rel, src, kube_bin):
    """The objects Argo CD should make of a directory source: (list of docs, how, error)."""
    key = (str(fleet), rel, ((src.get("directory") or {}).get("recurse")) is True)
    if key not in _RENDERED:
        _RENDERED[key] = _render(fleet, rel, src, kube_bin)
    docs, how, err = _RENDERED[key]
    return [json.loads(json.dumps(x)) for x in docs], how, err


def crd_needs(tree, reached, kube_bin):
    """[(crds.tsv key, version, why)]: the CRDs a cluster has, before the apps of a root sync,
    from what cannot run here: a chart app's (External Secrets: the chart cannot be rendered
    offline; its CRDs are what its later waves need) and Talos's own talos.dev CRD (applied by
    Talos when kubernetesTalosAPIAccess is on: siderolabs/talos v1.13.9
    internal/app/machined/pkg/controllers/k8s/manifest.go)."""
    want = []
    for a, _ in reached:
        for s in a.charts:
            if s.get("chart") == "external-secrets":
                v = str(s.get("targetRevision"))
                want.append(("eso", v if v.startswith("v") else f"v{v}",
                             f"the chart external-secrets {v} of app {a.name}, which cannot be rendered here"))
        for s, d in a.paths:
            if d is None:
                continue
            docs, _, _ = render(tree.fleet, d, s, kube_bin)
            if any(group_of(x.get("apiVersion")) == "talos.dev" for x in docs):
                want.append(("talos", "*", "Talos's own serviceaccounts.talos.dev (it applies it when "
                             "kubernetesTalosAPIAccess is on; the kube oracle judges that the Talos config turns it on)"))
    out, seen = [], set()
    for w in want:
        if w[:2] not in seen:
            seen.add(w[:2])
            out.append(w)
    return out


def _render(fleet, rel, src, kube_bin):
    d = fleet / rel
    if not d.is_dir():
        return [], "missing", f"{rel} does not exist in the fleet directory"
    if any((d / k).is_file() for k in ("kustomization.yaml", "kustomization.yml", "Kustomization")):
        r = subprocess.run([kube_bin, "kubectl", "kustomize", str(d)], capture_output=True, text=True)
        if r.returncode != 0:
            return [], "kustomize", r.stderr.strip()
        return [x for x in yaml.load_all(r.stdout, Loader=_LOADER) if isinstance(x, dict)], "kustomize", None
    recurse = ((src.get("directory") or {}).get("recurse")) is True
    files = sorted(d.rglob("*") if recurse else d.iterdir())
    docs = []
    for f in files:
        if f.is_file() and f.suffix in (".yaml", ".yml", ".json"):
            docs += [x for x in yaml.load_all(f.read_text(), Loader=_LOADER) if isinstance(x, dict)]
    return docs, "directory", None


# ---------------------------------------------------------------------------------------------
# Shared per tree: git server, repo server.


class Shared:
    def __init__(self, env, tree):
        self.env, self.tree = env, tree
        self.tmp = env.tmp / "argocd"
        self.tmp.mkdir(exist_ok=True)
        self.hosts = sorted({u.split("/")[2] for u in tree.repos})
        self.base_env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}

    def tls(self):
        """A throwaway CA and a server certificate for the repositories' hosts (EC keys: fast)."""
        d = self.tmp / "tls"
        d.mkdir()

        def ossl(*a):
            subprocess.run(["openssl", *a], check=True, capture_output=True, cwd=d)
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        ossl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=fleetc controllers harness loopback CA")
        (d / "ext").write_text("subjectAltName=" + ",".join(f"DNS:{h}" for h in self.hosts) + "\n")
        ossl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", f"/CN={self.hosts[0]}")
        ossl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.crt", "-days", "2", "-extfile", "ext")
        self.ca = (d / "ca.crt").read_text()
        # The repo server reads a host's trusted certificates from ARGOCD_TLS_DATA_PATH/<host>
        # (argo-cd v3.2.1 util/cert/cert.go GetCertificateForConnect, GetCertBundlePathForRepository;
        # util/git/client.go hands it to git as GIT_SSL_CAINFO): the files the kubelet projects
        # from argocd-tls-certs-cm into /app/config/tls (manifests/install.yaml, tls-certs volume).
        self.tls_data = self.tmp / "tls-data"
        self.tls_data.mkdir()
        for h in self.hosts:
            (self.tls_data / h).write_text(self.ca)
        return d

    def git(self):
        """One bare repository per repository URL: the fleet directory under the URL's prefix,
        one commit, a branch per targetRevision (HEAD: the default branch, `main`)."""
        fleet = self.tree.fleet
        root = self.tmp / "git"
        genv = dict(self.base_env, GIT_AUTHOR_NAME="fleetc controllers", GIT_AUTHOR_EMAIL="harness@example.invalid",
                    GIT_COMMITTER_NAME="fleetc controllers", GIT_COMMITTER_EMAIL="harness@example.invalid",
                    GIT_AUTHOR_DATE="2000-01-01T00:00:00Z", GIT_COMMITTER_DATE="2000-01-01T00:00:00Z",
                    GIT_CONFIG_NOSYSTEM="1", HOME=str(self.tmp))
        self.commits = {}
        for url, r in self.tree.repos.items():
            host, path = url.split("/")[2], "/".join(url.split("/")[3:])
            bare = root / host / path
            stage = self.tmp / "stage" / host / path
            dest = stage / r["prefix"]
            dest.mkdir(parents=True)
            tops = {"fleet.kdl"}
            for a in self.tree.all_apps:
                for s in a.sources:
                    if s.get("repoURL") != url:
                        continue
                    rels = []
                    if s.get("path") and s["path"].startswith(r["prefix"]):
                        rels.append(s["path"][len(r["prefix"]):])
                    for src in a.sources:  # values files read through this source's `ref`
                        for v in ((src.get("helm") or {}).get("valueFiles") or []):
                            if s.get("ref") and v.startswith(f"${s['ref']}/"):
                                v = v[len(s["ref"]) + 2:]
                                rels.append(v[len(r["prefix"]):] if v.startswith(r["prefix"]) else v)
                    for rel in rels:
                        parts = Path(rel).parts
                        if parts:
                            tops.add("/".join(parts[:2]) if parts[0] == "out" and len(parts) > 1 else parts[0])
            for t in sorted(tops):
                src = fleet / t
                if src.is_dir():
                    shutil.copytree(src, dest / t, symlinks=True)
                elif src.is_file():
                    (dest / t).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dest / t)
            subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True, env=genv)
            g = ["git", f"--git-dir={bare}", f"--work-tree={stage}"]
            subprocess.run(g + ["add", "-A"], check=True, env=genv)
            tree = subprocess.run(g + ["write-tree"], check=True, env=genv, capture_output=True, text=True).stdout.strip()
            commit = subprocess.run(g + ["commit-tree", tree, "-m", f"{self.env.label} as fleetc built it"], check=True,
                                    env=genv, capture_output=True, text=True).stdout.strip()
            for rev in (r["revs"] | {"main"}) - {"HEAD"}:
                subprocess.run(g + ["update-ref", f"refs/heads/{rev}", commit], check=True, env=genv)
            self.commits[url] = (commit, sorted(tops), sorted((r["revs"] | {"main"}) - {"HEAD"}))
        return root

    def start(self):
        env = self.env
        tls = self.tls()
        gitroot = self.git()
        env.hosts(self.hosts)
        env.spawn("git-server", [sys.executable, str(HERE / "argocd" / "gitserver.py"), str(gitroot),
                                 str(tls / "server.crt"), str(tls / "server.key"), str(GIT_PORT)],
                  env=self.base_env)
        bind = self.tmp / "bin"
        bind.mkdir()
        kv = subprocess.run([env.bins["kube"], "kubectl", "version", "--client", "-o", "json"],
                            capture_output=True, text=True)
        try:
            kustomize_version = json.loads(kv.stdout).get("kustomizeVersion") or "v5.0.0"
        except json.JSONDecodeError:
            kustomize_version = "v5.0.0"
        self.kustomize_version = kustomize_version
        # Argo CD runs `kustomize build <dir>` (and `kustomize version --short`) for a directory
        # with a kustomization (argo-cd v3.2.1 util/kustomize/kustomize.go l.384-390, l.485): the
        # kustomize built into kubectl answers both.
        (bind / "kustomize").write_text(f"""#!/bin/sh
case "$1" in
  build) shift; exec {env.bins['kube']} kubectl kustomize "$@" ;;
  version) echo "{{kustomize/{kustomize_version}  }}" ;;
  *) echo "kustomize (controllers harness shim): $1 is not supported" >&2; exit 1 ;;
esac
""")
        (bind / "kustomize").chmod(0o755)
        # git's askpass helper is `argocd` with ARGOCD_BINARY_NAME=argocd-git-ask-pass
        # (util/askpass/server.go Environ); no credential is needed here, but the name resolves.
        (bind / "argocd").symlink_to(env.bins["argocd"])
        self.path = f"{bind}:/usr/local/bin:/usr/bin:/bin"
        rtmp = self.tmp / "repo-server"
        rtmp.mkdir()
        env.spawn("argocd-redis-repo", [env.bins["argocd"], f"127.0.0.1:{REPO_REDIS_PORT}"],
                  env=dict(self.base_env, ARGOCD_BINARY_NAME="argocd-redis"))
        renv = dict(self.base_env, PATH=self.path, ARGOCD_BINARY_NAME="argocd-repo-server", TMPDIR=str(rtmp),
                    HOME=str(rtmp), ARGOCD_GPG_ENABLED="false", ARGOCD_TLS_DATA_PATH=str(self.tls_data),
                    ARGOCD_ASK_PASS_SOCK=str(self.tmp / "askpass.sock"),
                    HELM_CACHE_HOME=str(rtmp / "helm-cache"), HELM_CONFIG_HOME=str(rtmp / "helm-config"),
                    HELM_DATA_HOME=str(rtmp / "helm-data"))
        env.spawn("argocd-repo-server", [env.bins["argocd"], "--address", "127.0.0.1", "--port", str(REPO_SERVER_PORT),
                                         "--disable-tls", "--redis", f"127.0.0.1:{REPO_REDIS_PORT}",
                                         "--metrics-address", "127.0.0.1", "--logformat", "text"], env=renv)
        self.check_git(tls / "ca.crt")
        self.wait_port(REPO_SERVER_PORT, "argocd-repo-server")

    def check_git(self, ca):
        """Each repository URL answers `git ls-remote` through the hosts mapping and the private CA
        (what the repo server's go-git does first: util/git/client.go LsRefs), with the branches
        the Applications name, at the commit made of the fleet directory."""
        genv = dict(self.base_env, GIT_SSL_CAINFO=str(ca), GIT_TERMINAL_PROMPT="0", HOME=str(self.tmp),
                    GIT_CONFIG_NOSYSTEM="1")
        for url, (commit, tops, revs) in self.commits.items():
            end = time.time() + 15
            while True:
                r = subprocess.run(["git", "ls-remote", url], capture_output=True, text=True, env=genv)
                if r.returncode == 0 or time.time() > end:
                    break
                time.sleep(0.3)
            if r.returncode != 0:
                raise RuntimeError(f"the loopback git server does not answer {url}: {short(r.stderr)}; its log: "
                                   + short(self.env.log_tail("git-server", 800), 800))
            heads = {ln.split()[1][len("refs/heads/"):] for ln in r.stdout.splitlines()
                     if ln.split()[1].startswith("refs/heads/") and ln.split()[0] == commit}
            if not set(revs) <= heads:
                raise RuntimeError(f"{url}: git ls-remote lists {sorted(heads)}, not {revs}")
            prefix = self.tree.repos[url]["prefix"]
            self.env.line("ok", f"argocd: git {url}", f"served by git-http-backend over HTTPS on 127.0.0.1:{GIT_PORT} "
                          f"(/etc/hosts of the tree's namespace: {url.split('/')[2]} is 127.0.0.1; a throwaway CA, trusted "
                          f"through argocd-tls-certs-cm): branch(es) {', '.join(revs)} at one commit of the fleet "
                          f"directory's {', '.join(tops)}" + (f" under {prefix.rstrip('/')}/ (the roots' path prefix, "
                                                              "`gitops path=`)" if prefix else ""))

    def wait_port(self, port, name):
        import socket
        end = time.time() + 30
        while time.time() < end:
            p = self.env.procs.get(name)
            if p is not None and p.poll() is not None:
                raise RuntimeError(f"{name} exited ({p.returncode}): {short(self.env.log_tail(name, 1500), 1500)}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"{name} does not listen on 127.0.0.1:{port} after 30 s: {short(self.env.log_tail(name, 1500), 1500)}")


# ---------------------------------------------------------------------------------------------
# One root.


class Lines:
    """A root's lines, printed together once every root is done (roots run at once)."""

    def __init__(self, env, root):
        self.env, self.prefix, self.items = env, f"argocd/{root.name}", []

    def add(self, status, what, why=None):
        self.items.append((status, f"{self.prefix}: {what}" if what else self.prefix, why))

    def flush(self):
        for s, w, y in self.items:
            self.env.line(s, w, y)


def wait_for(pred, timeout, step=POLL):
    end = time.time() + timeout
    while True:
        v = pred()
        if v or time.time() > end:
            return v
        time.sleep(step)


class RootRun:
    def __init__(self, env, tree, shared, root, idx, primary, install, lines):
        self.env, self.tree, self.shared, self.root = env, tree, shared, root
        self.idx, self.primary, self.install, self.lines = idx, primary, install, lines
        self.ns = root.ns
        self.tmp = shared.tmp / f"root-{idx}"
        self.tmp.mkdir()
        self.own_clusters = []
        self.root_app, self.reached = tree.reach(root)
        self.apps = {a.name: a for a, _ in self.reached}
        self.parent = {a.name: p for a, p in self.reached}
        self.delivered = set()
        self.timeline = {}   # app name -> record
        self.simulated = {}  # app name -> ["Kind ns/name"]
        self.simulated_objs = set()
        self.sim_failed, self.sim_failed_at = {}, {}
        self.bypassed = {}   # app name -> why the harness created it in its parent's place
        self.stalls = {}     # app of apps -> (waited-on app, why)
        self.events = []

    # -- clusters --------------------------------------------------------------------------
    def new_cluster(self, what):
        k = kube_oracle()
        d = self.tmp / f"cluster-{what}"
        d.mkdir()
        cl = k.Cluster(self.env.bins["kube"], d)
        self.own_clusters.append(cl)
        try:
            cl.start()
        except SystemExit:
            raise RuntimeError(f"the scratch API server for {what} did not start: "
                               + (d / "logs" / "apiserver.log").read_text(errors="replace")[-800:])
        return cl

    def kubectl(self, *args, stdin=None, cl=None):
        return (cl or self.cl).kubectl(*args, stdin=stdin)

    def apply(self, manager, obj, cl=None):
        return self.kubectl("apply", "--server-side", "--force-conflicts", f"--field-manager={manager}", "-f", "-",
                            stdin=json.dumps(obj), cl=cl)

    # -- run -------------------------------------------------------------------------------
    def run(self):
        try:
            self._run()
        finally:
            for name in list(self.env.procs):
                if name.endswith(f"-r{self.idx}") and self.env.procs[name].poll() is None:
                    self.env.procs[name].kill()
            for cl in self.own_clusters:
                cl.stop()

    def _run(self):
        t0 = time.time()
        L = self.lines
        self.cl = self.env.cluster if self.primary else self.new_cluster("root")
        self.api = Api(self.cl.kubeconfig)
        where = "the tree's API server" if self.primary else "an API server of its own"
        # 1. Argo CD installed as `fleetc apply` step 7 installs it (src/apply/argocd.rs).
        ns = self.ns
        self.kubectl("create", "namespace", ns)
        r = self.kubectl("apply", "--server-side", "--force-conflicts", f"--field-manager={INSTALL_MANAGER}",
                         "-n", ns, "-f", str(self.install))
        if r.returncode == 0:
            r = self.cl.established(["crd/applications.argoproj.io", "crd/appprojects.argoproj.io"], 120)
        if r.returncode != 0:
            L.add("FAIL", "Argo CD install", f"Argo CD's own install manifest did not apply: {short(r.stderr, 800)}")
            return
        # What argocd-server writes at its first start (it does not run here): the signing key
        # the settings need (argo-cd v3.2.1 util/settings/settings.go l.1514 "server.secretkey is
        # missing" otherwise, InitializeSettings l.2068).
        key = base64.b64encode(os.urandom(32)).decode()
        self.kubectl("patch", "secret", "argocd-secret", "-n", ns, f"--field-manager={HARNESS_MANAGER}",
                     "--type=merge", "-p", json.dumps({"stringData": {"server.secretkey": key}}))
        for cm, data in HARNESS_SETTINGS.items():
            self.apply(HARNESS_MANAGER, {"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": cm, "namespace": ns}, "data": data})
        # Trusting the loopback server's private CA as a user does: argocd-tls-certs-cm keyed by
        # host (`argocd cert add-tls`; docs/operator-manual/declarative-setup.md), the repository
        # Secret left as fleetc's apply writes it (no `insecure`).
        self.apply(HARNESS_MANAGER, {"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": "argocd-tls-certs-cm", "namespace": ns},
                                     "data": {h: self.shared.ca for h in self.shared.hosts}})
        self.crd_stand_ins()
        self.register_workload_clusters()
        # 2. The controller, with its own redis.
        self.start_controller()
        # 3. What `fleetc apply` step 7 applies (src/apply/argocd.rs `bootstrap`), in its order.
        url = sources(self.root.root_doc)[0]["repoURL"]
        self.apply(FLEETC_MANAGER, {"apiVersion": "v1", "kind": "Secret",
                                    "metadata": {"name": REPO_SECRET, "namespace": ns,
                                                 "labels": {"argocd.argoproj.io/secret-type": "repository"}},
                                    "stringData": {"url": url, "type": "git"}})
        for sec in self.apply_step_secrets():
            self.apply(FLEETC_MANAGER, sec)
        args = ["apply", "--server-side", f"--field-manager={FLEETC_MANAGER}"]
        for f in self.root.files:
            args += ["-f", str(f)]
        r = self.kubectl(*args)
        if r.returncode != 0:
            L.add("FAIL", "bootstrap", f"`kubectl apply --server-side --field-manager=fleetc` of "
                  f"{', '.join(f.name for f in self.root.files)} was refused: {short(r.stderr, 800)}")
            return
        self.t_boot = time.time()
        L.add("ok", "bootstrap", f"Argo CD {argocd_version()}'s install.yaml (field manager {INSTALL_MANAGER}), "
              f"the repository Secret {REPO_SECRET}, then {', '.join(f.name for f in self.root.files)} "
              f"server-side under field manager {FLEETC_MANAGER}, into namespace {ns} of {where} "
              f"({self.t_boot - t0:.0f} s)")
        self.observe()
        self.manual_syncs()
        self.judge()
        # For whoever reads the kept scratch directory (FLEETC_CONTROLLERS_KEEP=1).
        (self.tmp / "timeline.json").write_text(json.dumps(
            {"outcome": self.outcome, "settled": self.t_settled, "events": self.events,
             "apps": {n: {k: v for k, v in r.items() if k != "last"} for n, r in self.timeline.items()}},
            indent=1, default=str))

    # -- setup helpers ---------------------------------------------------------------------
    def crd_stand_ins(self):
        """CRDs of what does not run here but a cluster has before these apps sync (crd_needs),
        installed under the harness's field manager before the bootstrap."""
        k = kube_oracle()
        for key, ver, why in crd_needs(self.tree, self.reached, self.env.bins["kube"]):
            got = self.shared.crds.get((key, ver))
            if got is None:
                self.stand_in_notes.append(f"the CRDs of {key} {ver} ({why}) cannot be read here "
                                           "(oracles/kube/crds.tsv): objects of those kinds cannot be created")
                continue
            label, crds = got
            f = self.tmp / f"crds-{key}.yaml"
            docs = []
            for data in crds.values():
                for x in k.documents(data):
                    if x.get("kind") == "CustomResourceDefinition":
                        x.pop("status", None)
                        docs.append(x)
            f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
            r = self.kubectl("apply", "--server-side", f"--field-manager={HARNESS_MANAGER}", "-f", str(f))
            if r.returncode == 0:
                r = self.cl.established([f"crd/{x['metadata']['name']}" for x in docs], 60)
            if r.returncode != 0:
                self.stand_in_notes.append(f"the CRDs of {key} {ver} ({why}) were not installed: {short(r.stderr)}")
            else:
                self.stand_in_notes.append(f"{len(docs)} CRDs of {label} installed before the bootstrap, in the "
                                           f"place of {why}")

    def apply_step_secrets(self):
        """The Secrets `fleetc apply` writes from sealed inputs before the root (src/apply/argocd.rs):
        the secret store's Scaleway key (read from the ClusterSecretStore under out/, as apply reads
        it) and the backup's bucket key, each with its namespace; values are placeholders (nothing
        here reads them)."""
        out = []
        base = self.tree.out / "argocd" / self.root.env_name / self.root.cluster_name
        for f in sorted(base.rglob("*.yaml")):
            for d in docs_of(f):
                scw = (((d.get("spec") or {}).get("provider") or {}).get("scaleway")) if d.get("kind") == "ClusterSecretStore" else None
                if scw:
                    ref = (scw.get("accessKey") or {}).get("secretRef") or {}
                    ref2 = (scw.get("secretKey") or {}).get("secretRef") or {}
                    if ref.get("namespace") and ref.get("name"):
                        out.append(self.namespaced_secret(ref["namespace"], ref["name"],
                                                          {ref.get("key", "access-key"): "placeholder",
                                                           ref2.get("key", "secret-key"): "placeholder"}))
                if d.get("kind") == "CronJob" and "talos-backup-s3" in json.dumps(d):
                    ns = d["metadata"].get("namespace", "talos-backup")
                    out.append(self.namespaced_secret(ns, "talos-backup-s3", {"AWS_ACCESS_KEY_ID": "placeholder",
                                                                              "AWS_SECRET_ACCESS_KEY": "placeholder"}))
        return out

    @staticmethod
    def namespaced_secret(ns, name, data):
        return {"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns},
             "type": "Opaque", "stringData": data}]}

    def register_workload_clusters(self):
        """A workload cluster an Application names (`destination.name`) is registered the way
        docs/argocd.md tells the user to ("Registering a workload cluster"): a cluster Secret in
        Argo CD's namespace; its API is a scratch API server standing in for the workload
        cluster's (no workload cluster exists here)."""
        self.workload = {}
        names = sorted({a.dest.get("name") for a, _ in self.reached if a.dest.get("name") not in (None, "", "in-cluster")})
        for n in names:
            cl = self.new_cluster(f"workload-{n}")
            cfg = json.loads(Path(cl.kubeconfig).read_text())
            token = cfg["users"][0]["user"]["token"]
            server = cfg["clusters"][0]["cluster"]["server"]
            self.apply(FLEETC_MANAGER, {"apiVersion": "v1", "kind": "Secret",
                                        "metadata": {"name": f"cluster-{n}", "namespace": self.ns,
                                                     "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
                                        "stringData": {"name": n, "server": server, "config": json.dumps(
                                            {"bearerToken": token, "tlsClientConfig": {"insecure": True}})}})
            self.workload[n] = cl

    def resolved_env(self, kind, name):
        """The container's environment as the kubelet resolves it from install.yaml's pod spec:
        literal values, and ConfigMap/Secret keys read from the API server (optional ones that are
        absent left out)."""
        docs = self.shared.install_docs
        pod = next((d for d in docs if d.get("kind") == kind and d["metadata"]["name"] == name), None)
        if pod is None:
            return {}
        c = pod["spec"]["template"]["spec"]["containers"][0]
        cache, out = {}, {}
        for e in c.get("env") or []:
            if "value" in e:
                out[e["name"]] = str(e["value"])
                continue
            vf = e.get("valueFrom") or {}
            ref = vf.get("configMapKeyRef") or vf.get("secretKeyRef")
            if not ref:
                continue
            plural = "configmaps" if "configMapKeyRef" in vf else "secrets"
            if (plural, ref["name"]) not in cache:
                cache[(plural, ref["name"])] = self.api.get(f"/api/v1/namespaces/{self.ns}/{plural}/{ref['name']}") or {}
            data = cache[(plural, ref["name"])].get("data") or {}
            if ref["key"] in data:
                v = data[ref["key"]]
                out[e["name"]] = base64.b64decode(v).decode() if plural == "secrets" else v
        return out

    def start_controller(self):
        i = self.idx
        redis_port, metrics_port = 6390 + i, 8100 + i
        self.env.spawn(f"argocd-redis-r{i}", [self.env.bins["argocd"], f"127.0.0.1:{redis_port}"],
                       env=dict(self.shared.base_env, ARGOCD_BINARY_NAME="argocd-redis"))
        cenv = dict(self.shared.base_env)
        cenv.update(self.resolved_env("StatefulSet", "argocd-application-controller"))
        cenv.update(PATH=self.shared.path, ARGOCD_BINARY_NAME="argocd-application-controller",
                    HOME=str(self.tmp), KUBECACHEDIR=str(self.tmp / "kubecache"), TMPDIR=str(self.tmp),
                    KUBECONFIG=str(self.cl.kubeconfig),
                    # The in-cluster destination (https://kubernetes.default.svc) through KUBECONFIG
                    # instead of a service account's files (argo-cd v3.2.1
                    # pkg/apis/application/v1alpha1/types.go RawRestConfig l.3629-3640).
                    ARGOCD_FAKE_IN_CLUSTER="true")
        for k in ("REDIS_SERVER", "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER"):
            cenv.pop(k, None)
        self.controller_env = {k: v for k, v in cenv.items()
                               if k.startswith(("ARGOCD_", "REDIS", "KUBECACHEDIR")) and k != "ARGOCD_BINARY_NAME"}
        self.env.spawn(f"argocd-application-controller-r{i}",
                       [self.env.bins["argocd"], "--namespace", self.ns,
                        "--repo-server", f"127.0.0.1:{REPO_SERVER_PORT}", "--repo-server-plaintext",
                        "--redis", f"127.0.0.1:{redis_port}", "--metrics-port", str(metrics_port),
                        "--logformat", "text"], env=cenv)

    # -- observing -------------------------------------------------------------------------
    def snapshot(self):
        apps = self.api.apps(self.ns)
        now = time.time() - self.t_boot
        for name, a in apps.items():
            rec = self.timeline.setdefault(name, {"seen": now, "healthy": None, "synced": None, "ops": [],
                                                  "health_seen": []})
            st = a.get("status") or {}
            h = (st.get("health") or {}).get("status")
            s = (st.get("sync") or {}).get("status")
            if h and (not rec["health_seen"] or rec["health_seen"][-1][1] != h):
                rec["health_seen"].append((now, h))
            if h == "Healthy" and rec["healthy"] is None:
                rec["healthy"] = now
            op = st.get("operationState") or {}
            if s == "Synced" and rec["synced"] is None and op.get("phase") not in ("Running", "Terminating"):
                rec["synced"] = now
            if op:
                key = (op.get("startedAt"), op.get("phase"), short(op.get("message") or "", 300), op.get("retryCount", 0))
                if not rec["ops"] or rec["ops"][-1] != key:
                    rec["ops"].append(key)
            sig = (s, h, op.get("phase"), re.sub(r"[Rr]etrying attempt #\d+ at [^.]*\.", "", op.get("message") or ""))
            if rec.get("sig") != sig:
                rec["sig"], rec["sig_since"] = sig, now
            rec["last"] = a
        self.current = apps
        return apps

    def waited_on(self, root):
        """The Applications the root's running sync waits for (its running tasks)."""
        st = (root.get("status") or {}).get("operationState") or {}
        if st.get("phase") != "Running":
            return []
        res = ((st.get("syncResult") or {}).get("resources") or [])
        return [r["name"] for r in res if r.get("kind") == "Application" and r.get("hookPhase") == "Running"]

    def settled(self, a, manual_ok=False):
        st = a.get("status") or {}
        op = st.get("operationState") or {}
        if op.get("phase") in ("Running", "Terminating") or a.get("operation"):
            return False
        return (st.get("sync") or {}).get("status") == "Synced" or manual_ok

    def unhealthy(self, a):
        """The app's resources whose health is not Healthy: [(group, kind, ns, name, status, msg)]."""
        out = []
        for r in ((a.get("status") or {}).get("resources") or []):
            h = r.get("health") or {}
            if h.get("status") and h["status"] != "Healthy":
                out.append((r.get("group", ""), r.get("kind"), r.get("namespace", ""), r.get("name"), h["status"],
                            h.get("message", "")))
        return out

    def explain(self, a, depth=0):
        """Why an app is not Healthy, when the reason is a controller or kubelet that does not run
        here: {(group, kind): [(ns, name)]} of the objects a stand-in status would make healthy
        (empty when only child Applications are, each for such a reason), or None when something
        else is not healthy."""
        bad = self.unhealthy(a)
        if not bad:
            return None
        out = {}
        for g, k, ns, n, hs, msg in bad:
            if (g, k) == ("argoproj.io", "Application") and depth < 5:
                child = self.current.get(n)
                if hs == "Progressing" and child is not None and self.explain(child, depth + 1) is not None:
                    continue
                return None
            if (g, k) in EXPECTED:
                if hs not in EXPECTED[(g, k)][1]:
                    return None
                out.setdefault((g, k), []).append((ns, n))
                continue
            if hs not in ("Progressing", "Suspended") or (g, k) not in STAND_INS:
                return None
            if (g, k) == ("", "Service"):
                live = self.api.get(f"/api/v1/namespaces/{ns}/services/{n}") or {}
                if (live.get("spec") or {}).get("type") != "LoadBalancer":
                    return None
            out.setdefault((g, k), []).append((ns, n))
        return out

    def simulate(self, name, a, why):
        """Write, in the missing controllers' place, the status they would write: the root can go
        on to its next wave, which is then judged on that assumption (said on the app's line)."""
        done = []
        cl = self.cl_of(self.apps.get(name))
        for (g, k), objs in why.items():
            for ns, n in objs:
                if (g, k) not in STAND_INS or (name, g, k, ns, n) in self.simulated_objs:
                    continue
                self.simulated_objs.add((name, g, k, ns, n))
                res = f"{k}.{g}/{n}" if g else f"{k}/{n}"
                args = ["get", res, "-o", "json"] + (["-n", ns] if ns else [])
                live = self.kubectl(*args, cl=cl)
                if live.returncode != 0:
                    continue
                obj = json.loads(live.stdout)
                status = STAND_INS[(g, k)][1](obj)
                args = ["patch", res, "--subresource=status", "--type=merge", f"--field-manager={HARNESS_MANAGER}",
                        "-p", json.dumps({"status": status})] + (["-n", ns] if ns else [])
                r = self.kubectl(*args, cl=cl)
                if r.returncode == 0:
                    done.append(f"{k} {ns + '/' if ns else ''}{n}")
                else:
                    m = re.search(r'failed calling webhook "([^"]+)".*?Post "https://([^/"]+)', r.stderr)
                    why = (f"refused: its admission webhook {m.group(1)} ({m.group(2)}) has no server here, "
                           "failurePolicy Fail") if m else short(r.stderr, 300)
                    self.sim_failed.setdefault(name, []).append(f"{k} {ns + '/' if ns else ''}{n} {why}")
                    self.sim_failed_at.setdefault(name, time.time())
        if not done:
            return
        self.simulated.setdefault(name, []).extend(done)
        self.events.append((time.time() - self.t_boot, f"simulated {name}: {', '.join(done)}"))

    def cl_of(self, app):
        if app is not None and app.dest.get("name") in getattr(self, "workload", {}):
            return self.workload[app.dest["name"]]
        return self.cl

    def expected_automated(self):
        """The automated Applications whose settling the judgement waits for (not chart apps:
        they cannot render here, and stay sync Unknown)."""
        return [a for a in self.apps.values() if a.automated and not a.charts]

    def observe(self):
        """Polls the Applications until the root's sync is done and every automated Application it
        reaches is settled, or the deadline; releases a wave that waits only for what cannot
        become healthy here (STAND_INS)."""
        waves = sorted({a.wave for a in self.apps.values()})
        budget = 60 + 15 * len(waves) + 10 * len(self.apps)
        self.deadline = self.t_boot + min(budget, 240)
        stable = 0
        self.outcome = "timeout"
        while time.time() < self.deadline:
            apps = self.snapshot()
            root = apps.get(self.root_app.name)
            for parent in [self.root_app.name] + sorted({p for _, p in self.reached}):
                pa = apps.get(parent)
                if pa is None:
                    continue
                for w in self.waited_on(pa):
                    a = apps.get(w)
                    if a is None:
                        continue
                    if not self.settled(a):
                        # A sync that cannot succeed here for want of what does not run here (an
                        # admission webhook's server, CRDs a vendored stand-in lacks).
                        why = self.harness_blocked(a) if parent not in self.stalls else None
                        if why:
                            rec = self.timeline[w]
                            since = rec.setdefault("harness_blocked", time.time())
                            if time.time() - since > 3:
                                self.sim_failed.setdefault(w, [why])
                                self.sim_failed_at.setdefault(w, since)
                                self.bypass(parent, w)
                        continue
                    if ((a.get("status") or {}).get("health") or {}).get("status") == "Healthy":
                        continue
                    why = self.explain(a)
                    if why:
                        self.simulate(w, a, why)
                    if why is not None and not any(gk in STAND_INS for gk in why) and w not in self.sim_failed:
                        self.sim_failed[w] = [f"{k} {n}: left as it is here ({reason_of((g, k))})"
                                              for (g, k), v in why.items() for ns, n in v] or \
                            ["only Applications it syncs, each for a reason named on its own line"]
                        self.sim_failed_at[w] = time.time()
                    if why is not None and w in self.sim_failed and parent not in self.stalls \
                            and time.time() - self.sim_failed_at[w] > 3:
                        self.bypass(parent, w)
            done = root is not None and (self.root_app.name in self.stalls or (
                self.settled(root) and not self.blocked(self.root_app.name, root) and
                ((root.get("status") or {}).get("operationState") or {}).get("phase") == "Succeeded"))
            if done:
                for a in self.expected_automated():
                    x = apps.get(a.name)
                    if a.name in self.stalls or a.name in self.sim_failed:
                        continue
                    if x is None or not self.settled(x) or self.blocked(a.name, x):
                        if x is not None and self.permanent_failure(x):
                            continue
                        done = False
                        break
            stable = stable + 1 if done else 0
            if stable >= 3:
                self.outcome = "settled"
                break
            if root is not None and self.root_gave_up(root):
                self.outcome = "root failed"
                break
            stuck = self.stuck(apps)
            if stuck:
                self.outcome = "stuck"
                self.stuck_on = stuck
                break
            time.sleep(POLL)
        self.t_settled = time.time() - self.t_boot

    def bypass(self, parent, waited):
        """An app of apps waits on `waited` for what this harness cannot give: health from a
        controller that does not run here whose stand-in status was refused (an admission webhook
        without a server), or a sync that cannot succeed here (harness_blocked).
        Its later waves are created here as its sync would create them (server-side apply of
        fleetc's files, Argo CD's own field manager, common/common.go ArgoCDSSAManager), so that
        each of those Applications is judged on its own; their order is not judged."""
        w = self.apps[waited].wave
        why = "; ".join(self.sim_failed.get(waited, []))
        self.stalls[parent] = (waited, why)
        for a, par in sorted(self.reached, key=lambda x: x[0].wave):
            if par != parent or a.wave <= w:
                continue
            doc = json.loads(json.dumps(a.doc))
            r = self.kubectl("apply", "--server-side", "--field-manager=argocd-controller", "-f", "-",
                             stdin=json.dumps(doc))
            self.bypassed[a.name] = (parent, waited, None if r.returncode == 0 else short(r.stderr))
        self.events.append((time.time() - self.t_boot, f"bypassed {parent} after {waited}"))

    def admission_without_server(self, a):
        """The webhook a sync failed on, when it is one whose server cannot run here: a webhook
        configuration pointing at a Service (no Pod serves anything here; the only webhooks with a
        server are capi.prepare's, by URL). Returns the webhook's name or None."""
        st = a.get("status") or {}
        op = st.get("operationState") or {}
        texts = [op.get("message") or ""] + [r.get("message") or "" for r in ((op.get("syncResult") or {}).get("resources") or [])]
        texts += [c.get("message") or "" for c in st.get("conditions") or []]
        for tx in texts:
            m = re.search(r'failed calling webhook "([^"]+)"', tx)
            if m:
                name = m.group(1)
                cl = self.cl_of(self.apps.get(a["metadata"]["name"]))
                for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
                    r = self.kubectl("get", kind, "-o", "json", cl=cl)
                    if r.returncode != 0:
                        continue
                    for cfg in json.loads(r.stdout).get("items", []):
                        for wh in cfg.get("webhooks") or []:
                            if wh.get("name") == name and "service" in (wh.get("clientConfig") or {}):
                                svc = wh["clientConfig"]["service"]
                                return f"{name} ({cfg['metadata']['name']}: Service {svc.get('namespace')}/{svc.get('name')})"
        return None

    def unserved(self, a):
        """The kinds among the app's resources that this API server does not serve, and the
        vendored files that would have brought their CRDs but are trimmed stand-ins (their first
        line says so): ([(group, kind)], [vendor file])."""
        st = a.get("status") or {}
        kinds = sorted({(r.get("group", ""), r.get("kind")) for r in st.get("resources") or []
                        if r.get("status") != "Synced"})
        if not kinds:
            return [], []
        cl = self.cl_of(self.apps.get(a["metadata"]["name"]))
        r = self.kubectl("api-resources", "--no-headers", cl=cl)
        served = set()
        for ln in r.stdout.splitlines():
            cols = ln.split()
            if len(cols) >= 4:
                served.add((cols[-3].rpartition("/")[0], cols[-1]))
        missing = [gk for gk in kinds if gk not in served]
        stand_ins = []
        vendor = self.tree.fleet / "vendor"
        for f in sorted(vendor.glob("*.yaml")) if vendor.is_dir() else []:
            head = f.read_text(errors="replace")[:400]
            if head.startswith("# Stand-in") and any(f"group: {g}" in f.read_text(errors="replace") for g, k in missing):
                stand_ins.append(f"vendor/{f.name}")
        return missing, stand_ins

    def harness_blocked(self, a):
        """Why an app's sync cannot succeed here though nothing says fleetc's output is wrong: an
        admission webhook whose server does not run here, or kinds whose CRDs a trimmed vendored
        stand-in lacks. None otherwise."""
        op = (a.get("status") or {}).get("operationState") or {}
        if not (op.get("phase") in ("Failed", "Error") or op.get("retryCount")):
            return None
        hook = self.admission_without_server(a)
        if hook:
            return f"its sync failed on the admission webhook {hook}, whose server does not run here (failurePolicy Fail)"
        missing, stand_ins = self.unserved(a)
        if missing and stand_ins:
            return (f"its sync failed: {', '.join(k for g, k in missing)} are not served here; their CRDs would come "
                    f"from {', '.join(stand_ins)}, a trimmed stand-in")
        return None

    def permanent_failure(self, a):
        """A failed sync that no retry can heal: a refusal by the project, by the API server's
        validation, by an admission webhook, or a webhook whose server cannot run here, or kinds
        a trimmed vendored stand-in lacks. Returns a short reason or None."""
        st = a.get("status") or {}
        op = st.get("operationState") or {}
        if not op or op.get("phase") == "Succeeded" or (op.get("phase") == "Running" and not op.get("retryCount")
                                                        and not op.get("finishedAt")):
            if not any("not permitted" in (c.get("message") or "") for c in st.get("conditions") or []):
                return None
        texts = [op.get("message") or ""] + [x.get("message") or "" for x in ((op.get("syncResult") or {}).get("resources") or [])]
        texts += [c.get("message") or "" for c in st.get("conditions") or []]
        for tx in texts:
            for pat in ("not permitted", " is invalid", "denied the request"):
                if pat in tx:
                    return short(tx, 300)
        if self.admission_without_server(a):
            return "webhook without a server"
        missing, stand_ins = self.unserved(a)
        if missing and stand_ins:
            return "kinds of a trimmed stand-in"
        return None

    def blocked(self, name, a):
        """Not Healthy for a reason other than a stand-in kind (still moving, or wrong)."""
        h = ((a.get("status") or {}).get("health") or {}).get("status")
        if h == "Healthy":
            return False
        if self.explain(a) is not None:
            return False
        return True

    def stuck(self, apps):
        """An app of apps that waits on an Application whose sync failed (a retry is pending or
        none is left) and which has shown no change for 25 s: nothing here will release it (a
        wave before its dependency, typically). Returns (parent, waited) or None."""
        now = time.time() - self.t_boot
        for parent in [self.root_app.name] + sorted({p for _, p in self.reached}):
            pa = apps.get(parent)
            if pa is None or parent in self.stalls:
                continue
            for w in self.waited_on(pa):
                a = apps.get(w)
                rec = self.timeline.get(w)
                if a is None or rec is None:
                    continue
                op = (a.get("status") or {}).get("operationState") or {}
                failed = op.get("phase") in ("Failed", "Error") or op.get("retryCount") or \
                    any(o[1] in ("Failed", "Error") for o in rec["ops"])
                if failed and self.explain(a) is None and now - rec.get("sig_since", now) > 25:
                    return parent, w
        return None

    def root_gave_up(self, root):
        op = (root.get("status") or {}).get("operationState") or {}
        return op.get("phase") in ("Failed", "Error")

    # -- manual syncs ----------------------------------------------------------------------
    def manual_syncs(self):
        """A sync requested as `argocd app sync` requests it: an `operation` on the Application
        with the app's own sync options and retry (argo-cd v3.2.1 server/application/application.go
        l.2036-2097, Sync; util/argo/argo.go SetAppOperation)."""
        self.manual = {}
        for a in self.apps.values():
            if a.automated:
                continue
            live = self.current.get(a.name)
            if live is None:
                self.manual[a.name] = ("absent", None)
                continue
            if a.charts:
                self.manual[a.name] = ("chart", None)
                continue
            if a.name.startswith("fleet-capi-cluster-") and not self.capi_ready():
                self.manual[a.name] = ("no-capi", None)
                continue
            spec = live.get("spec") or {}
            pol = spec.get("syncPolicy") or {}
            rev = ((live.get("status") or {}).get("sync") or {}).get("revision")
            op = {"initiatedBy": {"username": "admin"},
                  "sync": {"revision": rev or (spec.get("source") or {}).get("targetRevision", "HEAD"),
                           "prune": False, "syncOptions": pol.get("syncOptions") or [],
                           **({"source": spec["source"]} if spec.get("source") else {})}}
            if pol.get("retry"):
                op["retry"] = pol["retry"]
            t = time.time() - self.t_boot
            r = self.kubectl("patch", "application", a.name, "-n", self.ns, "--type=merge",
                             "-p", json.dumps({"operation": op}))
            if r.returncode != 0:
                self.manual[a.name] = ("refused", short(r.stderr))
                continue
            self.manual[a.name] = ("requested", t)
        pending = [n for n, (s, _) in self.manual.items() if s == "requested"]
        if pending:
            end = time.time() + 60

            def finished():
                apps = self.snapshot()
                for n in pending:
                    op = ((apps.get(n) or {}).get("status") or {}).get("operationState") or {}
                    if (apps.get(n) or {}).get("operation") or op.get("phase") in (None, "Running", "Terminating"):
                        return False
                    if op.get("phase") == "Running" or not (op.get("operation") or {}).get("initiatedBy", {}).get("username"):
                        return False
                return True
            wait_for(finished, max(5, end - time.time()))
            time.sleep(1.5)  # one more comparison after the operation (its resources' status)
            self.snapshot()

    def capi_ready(self):
        return self.primary and self.api.get(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusters.cluster.x-k8s.io") is not None

    # -- judging ---------------------------------------------------------------------------
    def judge(self):
        L = self.lines
        apps = self.current
        t = self.t_settled
        root = apps.get(self.root_app.name)
        chart_waves = sorted({a.wave for a in self.apps.values() if a.charts and a.automated})
        rst = (root or {}).get("status") or {}
        rop = rst.get("operationState") or {}
        # The root.
        if self.root_app.name in self.stalls:
            waited, why = self.stalls[self.root_app.name]
            later = sorted(n for n, v in self.bypassed.items() if v[0] == self.root_app.name)
            L.add("skip", f"{self.root_app.name} (app of apps, project {self.root_app.project})",
                  f"its sync cannot finish here: it waits at wave {self.apps[waited].wave} for {waited}, which cannot "
                  f"become Healthy here for want of what does not run here ({why}); "
                  f"its later waves ({', '.join(later)}) were created by the harness as its sync would create them, "
                  f"so each is judged below, but not their order")
        elif root is not None and self.settled(root) and rop.get("phase") == "Succeeded":
            htext, hproblem = self.health_text(self.root_app, root)
            failed = [o for o in self.timeline.get(self.root_app.name, {}).get("ops", []) if o[1] in ("Failed", "Error") or o[3]]
            heal = (f"; an attempt failed ({short(failed[0][2], 200)}) and its syncPolicy.retry healed it"
                    if failed else "")
            expected, hows, errs, absent, unsynced, missing_live, _ = self.objects(self.root_app, root)
            bad = [x for x in [hproblem, "; ".join(errs), f"not among its resources: {', '.join(absent)}" if absent else "",
                               f"resources not Synced: {', '.join(unsynced)}" if unsynced else "",
                               "not in the API server: " + "; ".join(missing_live) if missing_live else ""] if x]
            L.add("FAIL" if bad else "ok", f"{self.root_app.name} (app of apps, project {self.root_app.project})",
                  f"Synced, its sync Succeeded ({short(rop.get('message'), 120)}); {len(expected)} object(s) from "
                  f"{', '.join(hows)}, each among its resources, Synced and in the API server; health {htext}{heal}; "
                  f"settled {t:.0f} s after the bootstrap" + (f"; {'; '.join(bad)}" if bad else ""))
        else:
            stuck = ""
            if self.outcome == "stuck":
                p, w = self.stuck_on
                stuck = (f"{p} waits at wave {self.apps[w].wave} for {w}, whose sync failed and which has not changed "
                         f"for 25 s ({self.describe(self.current.get(w))}); ")
            L.add("FAIL", f"{self.root_app.name} (app of apps, project {self.root_app.project})",
                  f"not Synced with a finished sync {t:.0f} s after the bootstrap: " + stuck + self.describe(root))
        # Waves.
        self.judge_waves(apps)
        # Each Application the root reaches.
        for a, parent in sorted(self.reached, key=lambda x: (x[0].wave, x[0].name)):
            self.judge_app(a, parent, apps.get(a.name), chart_waves)
        self.judge_projects(apps)

    def describe(self, a):
        if a is None:
            return "it does not exist"
        st = a.get("status") or {}
        op = st.get("operationState") or {}
        parts = [f"sync {(st.get('sync') or {}).get('status')}", f"health {(st.get('health') or {}).get('status')}"
                 + (f" ({short((st.get('health') or {}).get('message'), 200)})" if (st.get('health') or {}).get('message') else "")]
        if op:
            parts.append(f"operation {op.get('phase')}: {short(op.get('message'), 400)}")
            bad = [f"{r.get('kind')} {r.get('name')}: {short(r.get('message'), 300)}"
                   for r in ((op.get("syncResult") or {}).get("resources") or [])
                   if r.get("status") in ("SyncFailed",) or r.get("hookPhase") in ("Failed", "Error")]
            if bad:
                parts.append("failed: " + "; ".join(bad[:4]))
        for c in st.get("conditions") or []:
            parts.append(f"{c.get('type')}: {short(c.get('message'), 300)}")
        unh = self.unhealthy(a)
        if unh:
            parts.append("not healthy: " + "; ".join(f"{k} {n} {hs}" + (f" ({short(m, 120)})" if m else "")
                                                      for g, k, ns, n, hs, m in unh[:5]))
        return "; ".join(parts)

    def judge_waves(self, apps):
        """Per app of apps: its Applications and AppProjects created wave by wave (the API
        server's creationTimestamp), and its Applications' first sync operations started wave by
        wave (operationState.startedAt): the F7 order, Argo CD moving to a wave only once the
        Applications of the waves below read Healthy (gitops-engine pkg/sync/sync_context.go
        l.461-500, through fleetc's argocd-cm health check of argoproj.io/Application). Says,
        without failing, which Application of a lower wave had not finished its sync when a
        higher wave was created: the gate reads health only (controller/health.go l.68-71)."""
        L = self.lines
        parents = {}
        for a, p in self.reached:
            parents.setdefault(p, []).append(a)
        for p, children in sorted(parents.items()):
            # the AppProjects of that directory, with their waves
            objs = [(c.wave, "Application", c.name, self.timeline.get(c.name, {}).get("seen"),
                     self.timeline.get(c.name, {}).get("healthy")) for c in children]
            proj_dir = children[0].file.parent
            projs = []
            for f in sorted(proj_dir.glob("*.yaml")):
                for d in docs_of(f):
                    if d.get("kind") == "AppProject":
                        try:
                            w = int(((d["metadata"].get("annotations") or {}).get(WAVE_ANNOTATION, "0")))
                        except ValueError:
                            w = 0
                        projs.append((w, d["metadata"]["name"]))
            for w, n in projs:
                objs.append((w, "AppProject", n, None, None))
            # creation times: the API server's creationTimestamp (seconds) for both kinds
            ctime = {}
            for c in children:
                live = self.current.get(c.name)
                if live:
                    ctime[("Application", c.name)] = live["metadata"]["creationTimestamp"]
            for w, n in projs:
                live = self.api.get(f"/apis/argoproj.io/v1alpha1/namespaces/{self.ns}/appprojects/{n}")
                if live:
                    ctime[("AppProject", n)] = live["metadata"]["creationTimestamp"]
            wrong, missing = [], []
            order = sorted(objs)
            if len({o[0] for o in order}) < 2:
                continue
            for w1, k1, n1, _, _ in order:
                for w2, k2, n2, _, _ in order:
                    if n1 in self.bypassed or n2 in self.bypassed:
                        continue  # created by the harness, not by Argo CD
                    if w1 < w2 and (k1, n1) in ctime and (k2, n2) in ctime and ctime[(k1, n1)] > ctime[(k2, n2)]:
                        wrong.append(f"{k2} {n2} (wave {w2}) created {ctime[(k2, n2)]}, before {k1} {n1} (wave {w1}) at {ctime[(k1, n1)]}")
            for w, k, n, _, _ in order:
                if (k, n) not in ctime:
                    missing.append(f"{k} {n} (wave {w})")
            # Their first sync operations started in wave order too (startedAt, seconds; an app with
            # nothing to apply runs none), and, informative: which app of a lower wave had not
            # finished its sync when a higher wave was created (the gate reads health only).
            gate, early = [], []
            first_op = {}
            for c in children:
                ops = [o for o in self.timeline.get(c.name, {}).get("ops", []) if o[0]]
                if ops:
                    first_op[c.name] = min(o[0] for o in ops)
            for c in children:
                rc = self.timeline.get(c.name)
                if not rc or c.name in self.bypassed:
                    continue
                for b in children:
                    rb = self.timeline.get(b.name)
                    if b.wave >= c.wave or not rb or b.name in self.bypassed:
                        continue
                    if b.name in first_op and c.name in first_op and first_op[b.name] > first_op[c.name]:
                        gate.append(f"{c.name} (wave {c.wave}) started syncing at {first_op[c.name]}, "
                                    f"before {b.name} (wave {b.wave}) at {first_op[b.name]}")
                    if not b.charts and (rb["synced"] is None or rb["synced"] > rc["seen"] + 0.01):
                        early.append(f"{c.name} (wave {c.wave}) was created before {b.name} (wave {b.wave}) had synced")
            desc = " < ".join(f"wave {w}: " + ", ".join(n for ww, k, n, _, _ in order if ww == w)
                              for w in sorted({o[0] for o in order}))
            what = f"waves of {p}"
            if p in self.stalls:
                waited = self.stalls[p][0]
                desc += (f"; waves above {self.apps[waited].wave} not judged: {p} waits at {waited} (its line says why), "
                         "and the harness created them in its place")
            if wrong or missing:
                L.add("FAIL", what, "; ".join(wrong + [f"never created: {', '.join(missing)}"] if missing else wrong))
            elif gate:
                L.add("FAIL", what, "a wave started syncing before a wave below it: " + "; ".join(gate[:4]))
            else:
                note = ""
                if early:
                    note = (" (the gate reads health, not sync: " + "; ".join(sorted(set(early))[:3]) +
                            ": an app whose not-yet-applied objects have no built-in health check reads Healthy, "
                            "argo-cd v3.2.1 controller/health.go l.68-71)")
                L.add("ok", what, f"created, and their syncs started, in wave order: {desc}{note}")

    def objects(self, a, live):
        """The objects fleetc's source directory says the app owns, against the app's
        status.resources (each there and Synced) and the API server (each there, a GET through
        kubectl's resource mapper), and the destination namespace CreateNamespace makes."""
        st = live.get("status") or {}
        op = st.get("operationState") or {}
        cl = self.cl_of(a)
        # The objects fleetc's source directory says the app owns.
        expected, hows, errs = [], [], []
        for s, d in a.paths:
            if d is None:
                errs.append(f"{s.get('repoURL')} {s.get('path')} is not in this fleet's repository")
                continue
            docs, how, err = render(self.tree.fleet, d, s, self.env.bins["kube"])
            if err:
                errs.append(err)
            hows.append(f"{d} ({how})")
            expected += docs
        resources = st.get("resources") or []
        by_key = {(r.get("group", ""), r.get("kind"), r.get("name")): r for r in resources}
        absent, unsynced = [], []
        for d in expected:
            g, k, n = group_of(d.get("apiVersion")), d.get("kind"), (d.get("metadata") or {}).get("name")
            r = by_key.get((g, k, n))
            if r is None:
                absent.append(f"{k} {n}")
            elif r.get("status") != "Synced":
                unsynced.append(f"{k} {n} {r.get('status')}")
        # Every one of them in the API server (a GET each, through kubectl's resource mapper).
        missing_live = []
        by_ns = {}
        for r in resources:
            ref = f"{r['kind']}.{r['group']}/{r['name']}" if r.get("group") else f"{r['kind']}/{r['name']}"
            by_ns.setdefault(r.get("namespace", ""), []).append(ref)
        for ns, refs in by_ns.items():
            got = self.kubectl("get", *refs, "-o", "name", *(["-n", ns] if ns else []), cl=cl)
            if got.returncode != 0:
                missing_live.append(short(got.stderr, 300))
        dest_ns = a.dest.get("namespace")
        ns_note = ""
        opts = ((a.doc.get("spec") or {}).get("syncPolicy") or {}).get("syncOptions") or []
        if dest_ns and "CreateNamespace=true" in opts:
            have = self.kubectl("get", "namespace", dest_ns, "-o", "name", cl=cl).returncode == 0
            if op:
                ns_note = f"; namespace {dest_ns} {'exists' if have else 'MISSING'}"
                if not have:
                    missing_live.append(f"namespace {dest_ns} (CreateNamespace=true) was not created")
            else:
                ns_note = f"; no sync ran (nothing to apply), so CreateNamespace made no namespace {dest_ns}"
        return expected, hows, errs, absent, unsynced, missing_live, ns_note

    def judge_app(self, a, parent, live, chart_waves):
        L = self.lines
        what = f"{a.name} (wave {a.wave}, project {a.project}{', synced by hand' if not a.automated else ''})"
        if a.charts:
            chart = a.charts[0]
            L.add("skip", what, f"chart {chart.get('chart')} {chart.get('targetRevision')} from {chart.get('repoURL')}: "
                  "not judged: no chart repository is reachable here (no network) and the repo server has no helm; "
                  "Argo CD reads it as a ComparisonError with sync Unknown and health Healthy (no resources), "
                  "so the root does not wait for it")
            return
        if live is None:
            if not a.automated:
                L.add("FAIL", what, f"never created by {parent}")
            else:
                L.add("FAIL", what, f"never created by {parent} within {self.t_settled:.0f} s: "
                      + self.describe(self.current.get(parent)))
            return
        if not a.automated:
            state, info = self.manual.get(a.name, ("?", None))
            if state == "no-capi":
                L.add("skip", what, "not synced: the Cluster API CRDs and webhooks are not in this API server "
                      "(capi.prepare did not make them ready here); its objects are not judged by Argo CD")
                return
            if state == "refused":
                L.add("FAIL", what, f"the sync request was refused: {info}")
                return
            note = "sync requested as `argocd app sync` requests it (an operation on the Application); "
        else:
            note = ""
        st = live.get("status") or {}
        op = st.get("operationState") or {}
        sync = (st.get("sync") or {}).get("status")
        expected, hows, errs, absent, unsynced, missing_live, ns_note = self.objects(a, live)
        cl = self.cl_of(a)
        problems = []
        if errs:
            problems.append("its source cannot be read: " + "; ".join(errs))
        if sync != "Synced":
            problems.append(f"sync {sync}")
        if op and op.get("phase") != "Succeeded":
            problems.append(f"last operation {op.get('phase')}: {short(op.get('message'), 300)}")
        if absent:
            problems.append(f"not among its resources: {', '.join(absent[:8])}")
        if unsynced:
            problems.append(f"resources not Synced: {', '.join(unsynced[:8])}")
        if missing_live:
            problems.append("not in the API server: " + "; ".join(missing_live[:4]))
        health_text, hproblem = self.health_text(a, live)
        if hproblem:
            problems.append(hproblem)
        for c in st.get("conditions") or []:
            if c.get("type", "").endswith("Error"):
                problems.append(f"{c.get('type')}: {short(c.get('message'), 300)}")
        retried = [o for o in self.timeline.get(a.name, {}).get("ops", []) if o[1] in ("Failed", "Error") or o[3]]
        heal = ""
        if retried and not problems:
            heal = f"; a first attempt failed and the retry healed it ({short(retried[0][2], 200)})"
        dep_chart = [w for w in chart_waves if w < a.wave]
        if problems and dep_chart and any(("could not find the requested resource" in p or "no matches for kind" in p
                                           or "failed to discover" in p) for p in problems):
            L.add("skip", what, "not judged: it needs kinds that a chart app of an earlier wave would install, "
                  "and charts are not rendered here: " + "; ".join(problems))
            return
        where = "" if cl is self.cl else f" (workload cluster {a.dest.get('name')}, registered by a cluster Secret)"
        if a.name in self.bypassed:
            par, waited, err = self.bypassed[a.name]
            note = (f"created by the harness in {par}'s place (its sync waits at {waited}){': REFUSED ' + err if err else ''}; "
                    + note)
        if problems:
            missing, stand_ins = self.unserved(live)
            if missing and stand_ins:
                L.add("skip", what, f"{note}not judged: {', '.join(k for g, k in missing)} "
                      f"({', '.join(sorted({g for g, k in missing}))}) are not served here: their CRDs would come "
                      f"from {', '.join(stand_ins)}, which the tree vendors as a trimmed stand-in (its first line "
                      "says so): " + "; ".join(problems))
                return
            hook = self.admission_without_server(live)
            if hook:
                L.add("skip", what, f"{note}not judged: its sync needs the admission webhook {hook}, whose server "
                      "does not run here (no Pod runs: its controller is only applied, not started): "
                      + "; ".join(problems))
                return
            L.add("FAIL", what, note + "; ".join(problems) + " — " + self.describe(live))
        else:
            objs = (f"{len(expected)} object(s) from {', '.join(hows) or 'no path'}, each among its resources, "
                    f"Synced and in the API server{where}") if expected else \
                f"its source renders no object ({', '.join(hows) or 'no path'}){where}"
            L.add("ok", what, f"{note}Synced{' (sync Succeeded)' if op else ''}; {objs}{ns_note}; health {health_text}{heal}")
            if a.name.startswith("fleet-capi-cluster-") and not a.automated and self.primary and op.get("phase") == "Succeeded":
                for s, d in a.paths:
                    if d:
                        self.delivered.add(d)

    def health_text(self, a, live):
        """The app's health against what a cluster without kubelets can report: Healthy, or not
        Healthy only through kinds of STAND_INS (then Progressing, with the reason; and, when a
        wave waited on it, the status the harness wrote in the missing controller's place)."""
        st = live.get("status") or {}
        h = (st.get("health") or {}).get("status")
        sim = self.simulated.get(a.name)
        if a.name in self.sim_failed:
            why = self.explain(live) or {}
            reasons = sorted({reason_of(gk) for gk in why})
            objs = ", ".join(f"{k} {n}" for (g, k), v in why.items() for ns, n in v)
            return (f"{h}, as expected here: {objs}: {'; '.join(reasons)}"
                    + (f"; SIMULATED on {', '.join(sim)}" if sim else "")
                    + f"; it cannot become Healthy here: {'; '.join(self.sim_failed[a.name])}"), None
        if sim:
            kinds = sorted({x.split()[0] for x in sim})
            reasons = sorted({STAND_INS[(g, k)][0] for (g, k) in STAND_INS if k in kinds})
            pre = f"Progressing as expected here ({'; '.join(reasons)}); SIMULATED: the status those controllers " \
                  f"write once done was written on {', '.join(sim)} so that later waves could be judged; now {h}"
            return pre, (None if h == "Healthy" else f"health {h} after the simulated status")
        if h == "Healthy":
            kinds = sorted({r.get("kind") for r in st.get("resources") or []})
            return "Healthy" + (f" (kinds {', '.join(kinds)})" if kinds else " (no resources)"), None
        why = self.explain(live)
        if why is not None:
            if not why:
                return f"{h}, as expected here: only Applications it syncs are, each for a reason named on its own line", None
            reasons = sorted({reason_of(gk) for gk in why})
            objs = ", ".join(f"{k} {n}" for (g, k), v in why.items() for ns, n in v)
            return f"{h}, as expected without kubelets: {objs}: {'; '.join(reasons)}", None
        return h, f"health {h}: " + ("; ".join(f"{k} {n} {hs}" + (f" ({short(m, 150)})" if m else "")
                                              for g, k, ns, n, hs, m in self.unhealthy(live)[:5]) or
                                     short((st.get("health") or {}).get("message") or "no resource says why", 200))

    def judge_projects(self, apps):
        """No Application refused by its project: no condition or sync result saying a repository,
        destination, namespace or kind is not permitted (argo-cd v3.2.1 controller/sync.go l.310-324,
        util/argo/argo.go ValidatePermissions)."""
        L = self.lines
        refused = []
        for n, a in sorted(apps.items()):
            st = a.get("status") or {}
            texts = [c.get("message", "") for c in st.get("conditions") or []]
            op = st.get("operationState") or {}
            texts.append(op.get("message") or "")
            texts += [r.get("message", "") for r in ((op.get("syncResult") or {}).get("resources") or [])]
            for rec_op in self.timeline.get(n, {}).get("ops", []):
                texts.append(rec_op[2])
            for tx in texts:
                if "not permitted" in tx:
                    refused.append(f"{n}: {short(tx, 300)}")
                    break
        projects = sorted({a.project for a in self.apps.values()} | {self.root_app.project})
        if refused:
            L.add("FAIL", "projects", "refused by its project: " + "; ".join(refused))
        else:
            L.add("ok", "projects", f"no Application refused by its project ({', '.join(projects)}): no source, "
                  f"destination, namespace or kind outside what its project permits (argo-cd v3.2.1 "
                  f"controller/sync.go l.310-324)")


def judge(env):
    tree = Tree(env)
    if not tree.roots:
        env.line("skip", "Argo CD", "out/argocd/ has no bootstrap/20-root.yaml: no GitOps root to sync")
        return set()
    version = argocd_version()
    kdl = env.fleet_dir / "fleet.kdl"
    m = re.search(r'^\s*argocd\s+version="([^"]+)"', kdl.read_text(), re.M) if kdl.is_file() else None
    pin = f"v{m.group(1).lstrip('v')}" if m else None
    if pin is None:
        env.line("skip", "Argo CD (fleet.kdl pins none)",
                 f"`fleetc apply` installs no Argo CD then (src/apply/argocd.rs); judged with Argo CD {version} "
                 f"(oracles/argocd/go.mod) installed from its own manifests/install.yaml and the bootstrap applied "
                 "as apply's step 7 applies it")
    elif pin != version:
        env.line("skip", f"Argo CD {pin} (fleet.kdl's pin)",
                 f"judged by Argo CD {version} as a stand-in (oracles/argocd/go.mod: what the Go module proxy serves "
                 f"and this Go builds), with {version}'s own manifests/install.yaml in place of the vendored "
                 "manifest: what the pinned release does differently is not judged")
    mdir = module_dir()
    if mdir is None:
        env.line("skip", "Argo CD", f"{ARGOCD_MODULE}@{version} is not in the Go module cache: nothing judged")
        return set()
    install = mdir / "manifests" / "install.yaml"
    shared = Shared(env, tree)
    shared.install_docs = docs_of(install)
    # CRD stand-ins (kube oracle's crds.tsv), resolved once, before the roots' threads.
    k = kube_oracle()
    rows = k.crd_table()
    shared.crds = {}
    saved = k.line
    k.line = lambda status, what, why=None: env.line(status, what, why)
    try:
        for r in tree.roots:
            for key, ver, why in crd_needs(tree, tree.reach(r)[1], env.bins["kube"]):
                if (key, ver) not in shared.crds:
                    got = k.crd_source(rows, key, ver)
                    shared.crds[(key, ver)] = (got[0], got[1]) if got else None
    except SystemExit as e:
        env.line("skip", "CRD stand-ins", f"could not be read here: {e}")
    finally:
        k.line = saved
    t0 = time.time()
    shared.start()
    # The root that delivers Cluster API objects runs on env.cluster (capi.prepare's).
    primary = None
    for i, r in enumerate(tree.roots):
        _, reached = tree.reach(r)
        if any(a.name.startswith("fleet-capi-cluster-") for a, _ in reached):
            primary = i
            break
    if primary is None:
        primary = 0
    runs = []
    for i, r in enumerate(tree.roots):
        lines = Lines(env, r)
        run = RootRun(env, tree, shared, r, i, i == primary, install, lines)
        run.stand_in_notes = []
        runs.append(run)
    errors = {}

    def go(run):
        try:
            run.run()
        except Exception as e:  # a harness defect: said on the root's lines
            import traceback
            errors[run.idx] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    threads = [threading.Thread(target=go, args=(run,)) for run in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    delivered = set()
    for run in runs:
        for note in run.stand_in_notes:
            run.lines.items.insert(0, ("skip", f"argocd/{run.root.name}: stand-in", note))
        run.lines.flush()
        if run.idx in errors:
            env.line("FAIL", f"argocd/{run.root.name}: the family's own code", errors[run.idx])
        delivered |= run.delivered
    # Not a check (time is measured, not asserted): the figure for README.md's cost.
    print(f"   controllers {env.label}: Argo CD: {len(runs)} root(s) at once, {time.time() - t0:.0f} s from the git "
          "server's start", flush=True)
    return delivered


def _edit_app(out, rel, fn):
    f = out / rel
    docs = [d for d in yaml.safe_load_all(f.read_text()) if d]
    for d in docs:
        if d.get("kind") == "Application":
            fn(d)
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))


def _wave_before_dependency(out):
    """golden/proxmox-minimal, broken: `hello` (wave 0) syncs a Service into the namespace
    `hello` without CreateNamespace, and the namespace comes from a new app `hello-base` put in
    wave 1, after it. Argo CD: hello's sync fails ("namespaces \"hello\" not found"), its Service
    is Missing (a kind with a built-in health check), so the root waits for hello forever and never
    creates hello-base (gitops-engine pkg/sync/sync_context.go l.461-500)."""
    d = out / "argocd" / "lab" / "main"
    (d / "hello").mkdir()
    (d / "hello" / "service.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "hello", "namespace": "hello"},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "hello"}}}))
    (d / "base").mkdir()
    (d / "base" / "namespace.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "hello"}}))

    def hello(a):
        a["spec"]["source"]["path"] = "out/argocd/lab/main/hello"
        a["spec"]["syncPolicy"]["syncOptions"] = ["ServerSideApply=true"]
    _edit_app(out, "argocd/lab/main/apps/hello.yaml", hello)
    base = yaml.safe_load((d / "apps" / "hello.yaml").read_text())
    base["metadata"]["name"] = "hello-base"
    base["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] = "1"
    base["spec"]["source"]["path"] = "out/argocd/lab/main/base"
    (d / "apps" / "hello-base.yaml").write_text(yaml.safe_dump(base, sort_keys=False))


def _kind_not_permitted(out):
    """golden/proxmox-minimal, broken: `hello` also syncs a ClusterRole, which its project
    `main-apps` (clusterResourceWhitelist: Namespace only) does not permit. Argo CD refuses the
    sync: "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project main-apps"
    (argo-cd v3.2.1 controller/sync.go l.311-312)."""
    d = out / "argocd" / "lab" / "main" / "hello"
    d.mkdir()
    (d / "clusterrole.yaml").write_text(yaml.safe_dump({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "hello-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}))

    def hello(a):
        a["spec"]["source"]["path"] = "out/argocd/lab/main/hello"
    _edit_app(out, "argocd/lab/main/apps/hello.yaml", hello)


def break_cases():
    """Edits of a copy of golden/proxmox-minimal's out/ (the caller copies the fleet directory and
    passes its out/) that must make this family FAIL, each with a substring of its FAIL line."""
    return [
        ("wave before its dependency", _wave_before_dependency, "never created: Application hello-base"),
        ("kind the project does not permit", _kind_not_permitted,
         "ClusterRole is not permitted in project main-apps"),
    ]
