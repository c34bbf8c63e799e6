#!/usr/bin/env python3
"""The kube oracle: a real etcd and kube-apiserver on loopback, with the real CRDs of the
provider versions each tree pins, judge every manifest fleetc emits or embeds by
`kubectl apply --server-side --dry-run=server`.

Usage: check.py --kube BIN [--argocd BIN] OUT_DIR...

Each OUT_DIR's pins are read from what fleetc emitted (out/capi/<mgmt>/providers/, the Argo CD
Applications; Argo CD's own from the fleet.kdl beside it); trees are grouped by CRD set (one
scratch API server per set, with exactly that set's CRDs from crds.tsv). For each OUT_DIR (its
fleet's vendor/ is the folder beside it) it judges out/capi/**, out/argocd/**, the Talos inline
manifests inside out/talos/** and out/capi/** (extracted), and vendor/*.yaml. One line per
manifest file: `ok kube: …`, `FAIL kube: …: why`, `skip kube: …: why`; then
`ok kube: N objects judged … in K CRD set(s) …`.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


# Files under out/capi and out/argocd that are not Kubernetes manifests, by glob (relative to
# the out/ tree), with why nothing hands them to kubectl or Argo CD.
NOT_MANIFESTS = {
    "capi/*/sealed.yaml": "not a manifest: the names, namespaces and keys (never values) of the Secrets to create "
                          "by hand from sealed inputs (docs/capi.md; `fleetc apply` does not do it yet); no tool "
                          "applies this file and it holds no object, so there is nothing for the API server to judge",
}


# libyaml's loader when PyYAML has it (the same YAML 1.1 safe loader, in C: the providers' CRDs
# are megabytes).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_all(data):
    return yaml.load_all(data, Loader=_LOADER)


def line(status, what, why=None):
    print(f"{status} kube: {what}" + (f": {why}" if why else ""), flush=True)


def die(msg):
    print(f"kube check: {msg}", file=sys.stderr)
    sys.exit(3)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def go_download(mod, ver, want=None):
    env = dict(os.environ, GOFLAGS="-mod=mod")
    env["GONOSUMDB"] = "github.com/siderolabs/cluster-api-bootstrap-provider-talos"
    with tempfile.TemporaryDirectory() as cwd:
        r = subprocess.run(["go", "mod", "download", "-json", f"{mod}@{ver}"], cwd=cwd, env=env,
                           capture_output=True, text=True)
    try:
        info = json.loads(r.stdout)
    except json.JSONDecodeError:
        die(f"{mod}@{ver}: go mod download failed: {r.stderr.strip()}")
    if info.get("Error"):
        die(f"{mod}@{ver}: {info['Error']}")
    if want and info.get("Sum") != want:
        die(f"{mod}@{ver}: module hash {info.get('Sum')} is not the pinned {want}")
    return Path(info["Dir"])


MIRRORS_DEFAULT = "/work/.mirror"


def crd_table():
    """The rows of crds.tsv, in order: dicts with key, version, module, read, pin, path, note."""
    rows = []
    for raw in (HERE / "crds.tsv").read_text().splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        key, version, mod, read, pin, path, note = raw.split("\t")
        rows.append(dict(key=key, version=version, module=mod, read=read, pin=pin, path=path, note=note))
    return rows


def git_files(row):
    """{name: bytes} of the row's path in the upstream repository at tag `read`, or None when no
    copy of that repository (at the pinned commit) is here."""
    repo, commit = row["pin"][4:].split("@")
    git = Path(os.environ.get("FLEETC_ORACLES_MIRRORS", MIRRORS_DEFAULT)) / repo.replace("/", "+") / "repo"
    if not git.exists():
        return None, git
    tag = subprocess.run(["git", "-C", str(git), "rev-parse", "-q", "--verify", f"refs/tags/{row['read']}^{{commit}}"],
                         capture_output=True, text=True).stdout.strip()
    if tag != commit:
        return None, git
    path = row["path"]
    files = {}
    if path.endswith("/"):
        names = subprocess.run(["git", "-C", str(git), "ls-tree", "--name-only", f"{commit}:{path}"],
                               capture_output=True, text=True, check=True).stdout.split()
        for n in names:
            if n.endswith(".yaml"):
                files[n] = subprocess.run(["git", "-C", str(git), "show", f"{commit}:{path}{n}"],
                                          capture_output=True, check=True).stdout
    else:
        files[Path(path).name] = subprocess.run(["git", "-C", str(git), "show", f"{commit}:{path}"],
                                                capture_output=True, check=True).stdout
    return files, git


def module_files(row):
    d = go_download(row["module"], row["read"], row["pin"])
    if row["path"].endswith("/"):
        return {f.name: f.read_bytes() for f in sorted((d / row["path"]).glob("*.yaml"))}
    f = d / row["path"]
    return {f.name: f.read_bytes()}


def crd_documents(files):
    """The CustomResourceDefinitions of the files, each as its own file (a golden's `status`
    stanza dropped: the API server sets it)."""
    crds = {}
    for name, data in files.items():
        docs = [x for x in load_all(data) if x]
        if not any(x.get("kind") == "CustomResourceDefinition" for x in docs):
            continue
        if any("status" in x for x in docs):
            for x in docs:
                x.pop("status", None)
            data = yaml.safe_dump_all(docs, sort_keys=False).encode()
        crds[name] = data
    return crds


_RESOLVED = {}


def crd_source(rows, key, version, say=None):
    """(label, {name: bytes}) of the CRDs of `key` at `version`: the first row that can be read
    here; a stand-in row prints a `skip` line (once) saying which and why, through `say` (a
    `line`-like function; this family's `line` by default)."""
    say = say or line
    if (key, version) in _RESOLVED:
        return _RESOLVED[(key, version)]
    cands = [r for r in rows if r["key"] == key and r["version"] in (version, "*")]
    if not cands:
        return None
    missed = []
    for i, row in enumerate(cands):
        if row["pin"].startswith("git:"):
            files, git = git_files(row)
            if files is None:
                missed.append(f"no copy of {row['pin'][4:].split('@')[0]} at tag {row['read']} is here ({git})")
                continue
            label = f"{row['module']} tag {row['read']} (commit {row['pin'].split('@')[1][:12]}, upstream repository)"
        else:
            files = module_files(row)
            label = f"{row['module']}@{row['read']}"
        # A row that reads another release than the pinned one is a stand-in, first row or not:
        # it says so (`skip`), so no pin is judged by another release's CRDs in silence.
        if i > 0 or (row["version"] != "*" and row["read"] != version):
            label += f" (stand-in for {version})"
            why = "; ".join(missed) + ": " if missed else ""
            say("skip", f"CRDs of {key} {version}", f"{why}judged against {row['module']}@{row['read']}'s "
                 f"CRDs instead ({row['note']})")
        if row["path"] != "config/crd/bases/" and not row["path"].endswith("/"):
            label += f" {row['path'].rsplit('/', 1)[-1]}"
        crds = crd_documents(files)
        fps = {}
        for data in crds.values():
            for x in documents(data):
                if x.get("kind") == "CustomResourceDefinition":
                    fp = hashlib.sha256(json.dumps(x, sort_keys=True).encode()).hexdigest()
                    fps[(x["spec"]["group"], x["spec"]["names"]["kind"])] = fp
        _RESOLVED[(key, version)] = (label, crds, fps)
        return _RESOLVED[(key, version)]
    die(f"the CRDs of {key} {version}: {'; '.join(missed)}, and no stand-in row")


# The operator's provider objects fleetc emits (out/capi/<mgmt>/providers/20-providers/), by
# kind and name, to the crds.tsv key of the provider whose CRDs the management cluster gets.
PROVIDER_KEYS = {
    ("CoreProvider", "cluster-api"): "capi",
    ("BootstrapProvider", "talos"): "cabpt",
    ("ControlPlaneProvider", "talos"): "cacppt",
    ("InfrastructureProvider", "proxmox"): "capmox",
    ("IPAMProvider", "in-cluster"): "ipam",
}
# The controllers' images (out/capi/<mgmt>/providers/10-controllers/): their tags are the
# versions of the operator and of cert-manager the management cluster runs.
OPERATOR_IMAGE = "registry.k8s.io/capi-operator/cluster-api-operator:"
CERT_MANAGER_IMAGE = "quay.io/jetstack/cert-manager-"


def walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def tree_pins(out):
    """{key: (version, where)} of the provider versions one out/ tree pins, read from the objects
    fleetc emitted (what the management cluster will install), and Argo CD's from its fleet.kdl
    (its install manifest is not in out/). `errors` lists what contradicts itself."""
    pins, errors = {}, []

    def pin(key, ver, where):
        if key in pins and pins[key][0] != ver:
            errors.append(f"{key} is pinned both {pins[key][0]} ({pins[key][1]}) and {ver} ({where})")
        pins.setdefault(key, (ver, where))

    for f in sorted((out / "capi").glob("*/providers/**/*.yaml")):
        rel = str(f.relative_to(out))
        for d in documents(f.read_bytes()):
            kind, name = d.get("kind"), (d.get("metadata") or {}).get("name")
            if str(d.get("apiVersion", "")).startswith("operator.cluster.x-k8s.io/"):
                key = PROVIDER_KEYS.get((kind, name))
                if key is None:
                    errors.append(f"{rel}: {kind} {name}: no crds.tsv key for this provider")
                else:
                    pin(key, d["spec"]["version"], rel)
            if kind == "Deployment":
                for c in walk(d):
                    img = c.get("image") if isinstance(c.get("image"), str) else ""
                    if img.startswith(OPERATOR_IMAGE):
                        pin("operator", img[len(OPERATOR_IMAGE):], rel)
                    if img.startswith(CERT_MANAGER_IMAGE) and ":" in img:
                        pin("certmanager", img.rsplit(":", 1)[1], rel)
    for f in sorted((out / "argocd").rglob("*.yaml")):
        for d in documents(f.read_bytes()):
            if d.get("kind") == "Application":
                for src in [d["spec"].get("source")] + (d["spec"].get("sources") or []):
                    if src and src.get("chart") == "external-secrets":
                        v = str(src.get("targetRevision"))
                        pin("eso", v if v.startswith("v") else f"v{v}", str(f.relative_to(out)))
    kdl = out.parent / "fleet.kdl"
    if (out / "argocd").is_dir() and kdl.is_file():
        m = re.search(r'^\s*argocd\s+version="([^"]+)"', kdl.read_text(), re.M)
        if m:
            pin("argocd", f"v{m.group(1).lstrip('v')}", "fleet.kdl")
    return pins, errors


class Cluster:
    def __init__(self, kube, tmp):
        self.kube = kube
        self.tmp = Path(tmp)
        self.procs = []

    def start(self):
        t = self.tmp
        (t / "logs").mkdir()
        subprocess.run(["openssl", "genrsa", "-out", str(t / "sa.key"), "2048"], check=True,
                       capture_output=True)
        subprocess.run(["openssl", "rsa", "-in", str(t / "sa.key"), "-pubout", "-out", str(t / "sa.pub")],
                       check=True, capture_output=True)
        # One static token (a file the API server reads); nothing else reaches loopback.
        token = hashlib.sha256(os.urandom(32)).hexdigest()
        (t / "tokens.csv").write_text(f"{token},oracle,oracle,system:masters\n")
        client, peer = free_port(), free_port()
        etcd = [self.kube, "etcd", "--name", "oracle", "--data-dir", str(t / "etcd"),
                "--listen-client-urls", f"http://127.0.0.1:{client}",
                "--advertise-client-urls", f"http://127.0.0.1:{client}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", f"oracle=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync", "--log-level", "warn"]
        self.procs.append(subprocess.Popen(etcd, stdout=open(t / "logs/etcd.log", "w"), stderr=subprocess.STDOUT))
        self.port = free_port()
        api = [self.kube, "apiserver",
               f"--etcd-servers=http://127.0.0.1:{client}",
               # Advertised on loopback too: in the controllers family's namespaces (loopback
               # only) there is no default route to guess an address from.
               "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={self.port}",
               f"--cert-dir={t / 'certs'}",
               f"--service-account-key-file={t / 'sa.pub'}",
               f"--service-account-signing-key-file={t / 'sa.key'}",
               "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
               "--service-cluster-ip-range=10.96.0.0/12",
               f"--token-auth-file={t / 'tokens.csv'}",
               "--authorization-mode=AlwaysAllow", "--anonymous-auth=false",
               # Cilium's agent runs privileged init containers, as on every Talos node.
               "--allow-privileged=true",
               "--enable-priority-and-fairness=false",
               "--v=0"]
        self.procs.append(subprocess.Popen(api, stdout=open(t / "logs/apiserver.log", "w"), stderr=subprocess.STDOUT))
        kubeconfig = {
            "apiVersion": "v1", "kind": "Config", "current-context": "oracle",
            "clusters": [{"name": "oracle", "cluster": {"server": f"https://127.0.0.1:{self.port}",
                                                        "insecure-skip-tls-verify": True}}],
            "contexts": [{"name": "oracle", "context": {"cluster": "oracle", "user": "anon"}}],
            "users": [{"name": "anon", "user": {"token": token}}],
        }
        self.kubeconfig = t / "kubeconfig"
        self.kubeconfig.write_text(json.dumps(kubeconfig))
        start = time.time()
        while True:
            r = self.kubectl("get", "--raw", "/readyz")
            if r.returncode == 0 and r.stdout.strip() == "ok":
                break
            for p in self.procs:
                if p.poll() is not None:
                    self.stop()
                    die(f"{p.args[1]} exited ({p.returncode}); its log:\n" +
                        (t / f"logs/{'etcd' if p.args[1] == 'etcd' else 'apiserver'}.log").read_text()[-3000:])
            if time.time() - start > 180:
                self.stop()
                die("kube-apiserver was not ready within 180 s; its log:\n" +
                    (t / "logs/apiserver.log").read_text()[-3000:])
            time.sleep(1)
        return time.time() - start

    def kubectl(self, *args, stdin=None):
        return subprocess.run([self.kube, "kubectl", f"--kubeconfig={self.kubeconfig}", *args],
                              input=stdin, capture_output=True, text=True)

    def established(self, targets, timeout):
        """`kubectl wait --for=condition=Established` on `targets` (`crd/<name>` …, or `crd`,
        `--all`) within `timeout` seconds, run again while a CRD has no conditions yet: kubectl's
        wait takes the `null` conditions of a CRD the API server has not judged yet for an error
        and exits at once (`.status.conditions accessor error: <nil> is of the type <nil>,
        expected []interface{}`; knative/operator#2338 and pingcap/tidb-operator#1511 met the
        same race). Returns the last run."""
        deadline = time.monotonic() + timeout
        while True:
            left = max(1, int(deadline - time.monotonic()))
            r = self.kubectl("wait", "--for=condition=Established", f"--timeout={left}s", *targets)
            if r.returncode == 0 or "accessor error" not in r.stderr or time.monotonic() >= deadline:
                return r
            time.sleep(0.5)

    def stop(self):
        # A scratch cluster: nothing of it is kept, so no graceful shutdown is waited for (the
        # API server's takes tens of seconds, once per CRD set).
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait()


def documents(data):
    """The non-empty YAML documents of a file (PyYAML; what kubectl reads is YAML too)."""
    return [d for d in load_all(data) if d]


def inline_manifests(node, found):
    """Every cluster.inlineManifests entry anywhere in node (strings that are YAML included)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "inlineManifests" and isinstance(v, list):
                for m in v:
                    if isinstance(m, dict) and isinstance(m.get("contents"), str):
                        found.append((m.get("name", "?"), m["contents"]))
            else:
                inline_manifests(v, found)
    elif isinstance(node, list):
        for v in node:
            inline_manifests(v, found)
    elif isinstance(node, str) and "inlineManifests" in node:
        try:
            for d in load_all(node):
                inline_manifests(d, found)
        except yaml.YAMLError:
            pass


def talos_api_access(node):
    """Whether a Talos config (or a CACPPT/CABPT patch inside one, as a YAML string) turns on
    machine.features.kubernetesTalosAPIAccess: only then does Talos install the talos.dev CRD."""
    if isinstance(node, str):
        if "kubernetesTalosAPIAccess" not in node:
            return False
        try:
            return any(talos_api_access(d) for d in load_all(node))
        except yaml.YAMLError:
            return False
    if isinstance(node, dict):
        feat = node.get("kubernetesTalosAPIAccess")
        if isinstance(feat, dict) and feat.get("enabled") is True:
            return True
        return any(talos_api_access(v) for v in node.values())
    if isinstance(node, list):
        return any(talos_api_access(v) for v in node)
    return False


def manifests(out):
    """Yields (label, bytes or a skip reason, api_access) for every manifest of one out/ tree;
    api_access is whether the Talos config an inline manifest comes from installs the talos.dev
    CRD (None outside Talos configs)."""
    rel = out.relative_to(REPO) if out.is_relative_to(REPO) else out
    for fam in ("capi", "argocd"):
        for f in sorted((out / fam).rglob("*.yaml")):
            skip = next((why for g, why in NOT_MANIFESTS.items() if f.relative_to(out).match(g)), None)
            yield f"{rel}/{f.relative_to(out)}", (f.read_bytes() if skip is None else skip), None
    for fam in ("talos", "capi"):
        for f in sorted((out / fam).rglob("*.yaml")):
            found = []
            try:
                docs = list(load_all(f.read_bytes()))
            except yaml.YAMLError:
                continue
            for d in docs:
                inline_manifests(d, found)
            access = talos_api_access(docs) if found else None
            for name, contents in found:
                yield f"{rel}/{f.relative_to(out)}#inlineManifests[{name}]", contents.encode(), access
    vendor = out.parent / "vendor"
    for f in sorted(vendor.glob("*.yaml")) if vendor.is_dir() else []:
        yield f"{vendor.relative_to(REPO) if vendor.is_relative_to(REPO) else vendor}/{f.name} (vendored)", f.read_bytes(), None


def discovery(cl):
    """(group, kind) -> namespaced, from the API server's own discovery (CRDs included), in one
    `kubectl api-resources` (its last three columns: APIVERSION, NAMESPACED, KIND)."""
    scopes = {}
    r = cl.kubectl("api-resources", "--no-headers")
    if r.returncode != 0:
        die(f"kubectl api-resources: {r.stderr.strip()[:600]}")
    for ln in r.stdout.splitlines():
        cols = ln.split()
        if len(cols) >= 4:
            api, namespaced, kind = cols[-3], cols[-2], cols[-1]
            scopes[(api.rpartition("/")[0], kind)] = namespaced == "true"
    return scopes


def source_dir(fleet, repo_url, path, fleet_repos):
    """The folder of this fleet that an Application's directory source reads, or None."""
    if repo_url not in fleet_repos:
        return None
    parts = Path(path).parts
    for i in range(len(parts)):  # the fleet may live in a subfolder of its repository
        d = fleet.joinpath(*parts[i:])
        if d.is_dir():
            return d
    return None


def argocd_permissions(binary, outs, scopes, tmp, cl):
    """Argo CD's own AppProject code judges every Application of every tree."""
    for out in outs:
        out = Path(out).resolve()
        fleet = out.parent
        rel = out.relative_to(REPO) if out.is_relative_to(REPO) else out
        apps, projects = [], []
        for f in sorted((out / "argocd").rglob("*.yaml")):
            for d in documents(f.read_bytes()):
                if d.get("apiVersion") == "argoproj.io/v1alpha1" and d.get("kind") == "AppProject":
                    projects.append((f, d))
                elif d.get("apiVersion") == "argoproj.io/v1alpha1" and d.get("kind") == "Application":
                    apps.append((f, d))
        if not apps:
            continue
        # The fleet's own repository: the one the root Application reads out/argocd from.
        fleet_repos = set()
        for f, a in apps:
            for src in [a["spec"].get("source")] + (a["spec"].get("sources") or []):
                if src and (src.get("path") or "").find("out/argocd") >= 0:
                    fleet_repos.add(src["repoURL"])
        reqs = []
        for f, a in apps:
            resources, skipped = [], []
            for src in [a["spec"].get("source")] + (a["spec"].get("sources") or []):
                if not src:
                    continue
                if src.get("chart"):
                    skipped.append(f"chart {src['chart']} {src.get('targetRevision')} from {src['repoURL']} (no render here)")
                    continue
                if src.get("ref") and not src.get("path"):
                    continue  # a values-only source (`ref:`): nothing of its own is synced
                d = source_dir(fleet, src["repoURL"], src.get("path", ""), fleet_repos)
                if d is None:
                    skipped.append(f"{src['repoURL']} {src.get('path')} (not in this fleet's repository)")
                    continue
                kustomized = any((d / k).is_file() for k in ("kustomization.yaml", "kustomization.yml", "Kustomization"))
                if kustomized:
                    # Argo CD renders a directory with a kustomization with kustomize; here
                    # the kustomize inside kubectl v0.36 renders it.
                    r = cl.kubectl("kustomize", str(d))
                    if r.returncode != 0:
                        line("FAIL", f"{rel}: kustomize {d.relative_to(fleet)}", r.stderr.strip()[:600])
                        continue
                    rendered = [(d, r.stdout.encode())]
                else:
                    recurse = ((src.get("directory") or {}).get("recurse")) is True
                    rendered = [(x, x.read_bytes()) for x in sorted(d.rglob("*") if recurse else d.iterdir())
                                if x.suffix in (".yaml", ".yml", ".json") and x.is_file()]
                for x, data in rendered:
                    for doc in documents(data):
                        api = doc.get("apiVersion", "")
                        group = api.split("/")[0] if "/" in api else ""
                        kind = doc.get("kind", "")
                        md = doc.get("metadata") or {}
                        namespaced = scopes.get((group, kind))
                        if namespaced is None:
                            skipped.append(f"{kind} {api} (no such kind on the API server)")
                            continue
                        resources.append({"group": group, "kind": kind, "name": md.get("name", ""),
                                          "namespace": md.get("namespace", ""), "namespaced": namespaced,
                                          "source": str(x.relative_to(fleet))})
            reqs.append({"label": f"{rel}/{f.relative_to(out)}", "app": a, "resources": resources,
                         "skipped": skipped})
        # Each Argo CD sees only the AppProjects it holds: one request per holder, so two
        # clusters' projects of the same name never stand for each other.
        holder = argocd_holders(out, apps)
        for h in sorted({holder(f) for f, _ in apps}):
            req = tmp / "argocd-request.json"
            req.write_text(json.dumps({"projects": [p for f, p in projects if holder(f) == h],
                                       "apps": [r for (f, _), r in zip(apps, reqs) if holder(f) == h]}))
            r = subprocess.run([binary, str(req)], capture_output=True, text=True)
            sys.stdout.write(r.stdout)
            if r.returncode != 0:
                line("FAIL", f"{rel}: Argo CD's permission code did not run (the Argo CD of {h})", r.stderr.strip()[:600])
            sys.stdout.flush()


def argocd_holders(out, apps):
    """A function from a file under out/argocd to the Argo CD that holds its objects, named
    `<env>/<cluster>`: the cluster whose `bootstrap/` directory it is, or whose Applications
    (app of apps, followed to any depth) sync the directory it is in; a directory nothing leads
    to is held by the cluster its path names (docs/argocd.md, the layout of out/argocd)."""
    root = out / "argocd"
    held = {b: str(b.parent.relative_to(root)) for b in sorted(root.glob("*/*/bootstrap"))}
    by_dir = {}
    for f, a in apps:
        by_dir.setdefault(f.parent, []).append(a)
    queue = list(held)
    while queue:
        d = queue.pop()
        for a in by_dir.get(d, []):
            for src in [a["spec"].get("source")] + (a["spec"].get("sources") or []):
                path = (src or {}).get("path") or ""
                i = path.find("out/argocd/")
                if i >= 0 and not src.get("chart"):
                    target = root / path[i + len("out/argocd/"):].rstrip("/")
                    if target not in held:
                        held[target] = held[d]
                        queue.append(target)

    def holder(f):
        for d in [f.parent, *f.parent.parents]:
            if d in held:
                return held[d]
            if d == root:
                break
        parts = f.relative_to(root).parts
        return "/".join(parts[:2])

    return holder


def rel_of(p):
    return p.relative_to(REPO) if p.is_relative_to(REPO) else p


def kinds_of(data):
    """(group, kind) of every document of a manifest, or None when it is not YAML."""
    try:
        return sorted({(str(d.get("apiVersion", "")).rpartition("/")[0], str(d.get("kind", "")))
                       for d in documents(data) if isinstance(d, dict)})
    except yaml.YAMLError:
        return None


def install_own_crds(cl, label, docs, tmp):
    """The CRDs a manifest carries itself, installed (a real create) before its objects are
    judged, as their consumer applies them: Talos sorts a manifest's objects namespaces first,
    then CRDs, then the rest (siderolabs/talos v1.13.9
    internal/app/machined/pkg/controllers/k8s/manifest_apply.go l.240-270), and Argo CD syncs a
    CRD before the resources that use it. A CRD already on this API server (the CRD set's) is
    left as it is."""
    own = [d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
           and str(d.get("apiVersion", "")).startswith("apiextensions.k8s.io/")]
    if not own:
        return
    have = set(cl.kubectl("get", "crd", "-o", "name").stdout.split())
    new = [d for d in own if f"customresourcedefinition.apiextensions.k8s.io/{(d.get('metadata') or {}).get('name')}" not in have]
    if not new:
        return
    f = Path(tmp) / "own-crds.yaml"
    f.write_text(yaml.safe_dump_all(new))
    r = cl.kubectl("apply", "--server-side", "--field-manager=fleetc-oracle-own-crds", "-f", str(f))
    if r.returncode == 0:
        names = [f"crd/{d['metadata']['name']}" for d in new]
        r = cl.established(names, 120)
    if r.returncode == 0:
        line("ok", f"{label}: installed the {len(new)} CRD(s) it carries before judging its objects (Talos and Argo CD apply CRDs first)")
    # Otherwise the dry-run below fails on the CRD itself or on its objects, with the reason.


def unplaced(label, docs, scopes):
    """The namespaced objects of a manifest applied without a namespace of its own that carry
    none: Talos applies an inline manifest's namespaced object without one in `default`
    (siderolabs/talos v1.13.9 internal/app/machined/pkg/controllers/k8s/manifest_apply.go
    l.301-304), and `kubectl apply -f` an out/capi file's in its kubeconfig's namespace. Scope
    is this API server's discovery, and a CRD's `spec.scope` for the kinds the manifest's own
    CRDs serve."""
    if "#inlineManifests[" not in label and "/capi/" not in label:
        return []
    own = {(((d.get("spec") or {}).get("group")), ((d.get("spec") or {}).get("names") or {}).get("kind")):
           (d.get("spec") or {}).get("scope") == "Namespaced"
           for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"}
    found = []
    for d in docs:
        if not isinstance(d, dict):
            continue
        group = str(d.get("apiVersion", "")).rpartition("/")[0]
        key = (group, d.get("kind"))
        meta = d.get("metadata") or {}
        if scopes.get(key, own.get(key)) and not meta.get("namespace"):
            found.append(f"{d.get('kind')} {meta.get('name')}")
    return found


def fleetc_scopes(cl, scopes):
    """fleetc's table of cluster-scoped built-in kinds (src/check/namespaces.rs, CLUSTER_SCOPED
    and BUILT_IN_GROUPS, which fleet::addons::namespace-missing reads) against this API
    server's discovery: every kind of a group no CRD serves must be in a group the table knows,
    and cluster-scoped exactly when the table says so. Kinds the table names that this server
    does not serve (alpha APIs it has off) are counted, not judged."""
    src = (REPO / "src" / "check" / "namespaces.rs").read_text()
    def block(name):
        body = src.split(f"{name}: &[", 1)[1].split("];", 1)[0]
        return body
    groups = set(re.findall(r'"([^"]*)"', block("const BUILT_IN_GROUPS")))
    table = set(re.findall(r'\("([^"]*)", "([^"]*)"\)', block("pub const CLUSTER_SCOPED")))
    r = cl.kubectl("get", "crd", "-o", "jsonpath={.items[*].spec.group}")
    crd_groups = set(r.stdout.split())
    wrong = []
    served = 0
    for (group, kind), namespaced in sorted(scopes.items()):
        if group in crd_groups:
            continue
        served += 1
        if group not in groups:
            wrong.append(f"{group or 'core'} {kind}: its group is not in BUILT_IN_GROUPS")
        elif namespaced == ((group, kind) in table):
            wrong.append(f"{group or 'core'} {kind}: the server says {'namespaced' if namespaced else 'cluster-scoped'}")
    absent = [f"{g or 'core'} {k}" for g, k in sorted(table) if (g, k) not in scopes]
    label = "fleetc's cluster-scoped kinds (src/check/namespaces.rs) against kube-apiserver's discovery"
    if wrong:
        line("FAIL", label, "; ".join(wrong))
        return 1
    line("ok", f"{label}: {served} built-in kinds agree"
               + (f"; {len(absent)} the table names are not served here ({', '.join(absent)})" if absent else ""))
    return 0


def judge_tree(cl, out, cache, crd_fp, created_ns, tmp, counts, scopes):
    """Every manifest of one out/ tree, dry-run on this API server (its CRD set). The verdict on
    a manifest is reused for the same bytes when the CRDs of every kind in it are the same bytes
    too (crd_fp: (group, kind) -> sha256 of its CRD in this set), in this set or an earlier one."""
    for label, data, api_access in manifests(out):
        if isinstance(data, str):
            line("skip", label, data)
            continue
        kinds = kinds_of(data) or []
        h = (hashlib.sha256(data).hexdigest(), api_access, tuple((g, k, crd_fp.get((g, k))) for g, k in kinds))
        if h in cache:
            status, why, n = cache[h]
            if status == "ok":
                line("ok", f"{label}: {n} objects (same bytes, same CRDs, as judged above)")
            else:
                line(status, label, why)
            counts["judged"] += n if status == "ok" else 0
            counts["failed"] += 1 if status == "FAIL" else 0
            continue
        try:
            docs = documents(data)
        except yaml.YAMLError as e:
            cache[h] = ("FAIL", f"not YAML: {e}", 0)
            line("FAIL", label, f"not YAML: {e}")
            counts["failed"] += 1
            continue
        # Kinds of group talos.dev (the Talos CCM's ServiceAccount for the Talos API) are served
        # by the CRD Talos itself applies when the config turns on kubernetesTalosAPIAccess
        # (crds.tsv `talos`); the API server here has it, so they are judged like the rest, but
        # a config without the feature would have no such kind.
        talos_api = [d for d in docs if isinstance(d, dict) and str(d.get("apiVersion", "")).startswith("talos.dev/")]
        if talos_api and api_access is False:
            why = (f"{len(talos_api)} talos.dev object(s), but this Talos config does not turn on "
                   "machine.features.kubernetesTalosAPIAccess, so Talos installs no talos.dev CRD "
                   "(siderolabs/talos v1.13.9 internal/app/machined/pkg/controllers/k8s/manifest.go, TalosAPIServiceEnabled)")
            cache[h] = ("FAIL", why, 0)
            line("FAIL", label, why)
            counts["failed"] += 1
            continue
        if not docs:
            cache[h] = ("skip", "no objects in it", 0)
            line("skip", label, "no objects in it")
            continue
        for d in docs:
            if not isinstance(d, dict):
                continue
            ns = (d.get("metadata") or {}).get("namespace")
            if ns and ns not in created_ns:
                # Namespaces exist before their objects are judged (a real create).
                cl.kubectl("create", "namespace", ns)
                created_ns.add(ns)
        lost = unplaced(label, docs, scopes)
        if lost:
            why = (f"{len(lost)} namespaced object(s) without a namespace ({', '.join(lost[:5])}"
                   f"{', …' if len(lost) > 5 else ''}): applied as written they land in `default`, away from "
                   "the RBAC subjects and Secrets that name their real namespace (fleet::addons::namespace-missing)")
            cache[h] = ("FAIL", why, 0)
            line("FAIL", label, why)
            counts["failed"] += 1
            continue
        install_own_crds(cl, label, docs, tmp)
        f = Path(tmp) / "judge.yaml"
        f.write_bytes(data)
        r = cl.kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=fleetc",
                       "--force-conflicts", "-o", "name", "-f", str(f))
        n = len([x for x in r.stdout.splitlines() if x.strip()])
        if r.returncode == 0 and n == len(docs):
            cache[h] = ("ok", None, n)
            extra = f" ({len(talos_api)} of kind talos.dev)" if talos_api else ""
            line("ok", f"{label}: {n} objects{extra}")
            counts["judged"] += n
        else:
            why = " | ".join(x.strip() for x in r.stderr.strip().splitlines() if x.strip())
            why = why.replace(str(f), "<file>")
            if r.returncode == 0:
                why = f"{len(docs)} documents, {n} objects accepted {why}"
            cache[h] = ("FAIL", why[:2000], 0)
            line("FAIL", label, why[:2000])
            counts["failed"] += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kube", required=True)
    ap.add_argument("--argocd", help="the argocd oracle's binary (oracles/argocd)")
    ap.add_argument("outs", nargs="+")
    args = ap.parse_args()

    rows = crd_table()
    keys = list(dict.fromkeys(r["key"] for r in rows))
    # A key a tree does not pin (no CAPI, no Argo CD…) gets the reference fleet's version: the
    # first row of that key. Its CRDs are installed all the same; nothing of the tree uses them.
    default = {k: next(r["version"] for r in rows if r["key"] == k) for k in keys}
    sets = {}  # CRD set (tuple of (key, version)) -> [(out, its pins)]
    counts = {"judged": 0, "failed": 0, "other": 0}
    for o in args.outs:
        out = Path(o).resolve()
        pins, errors = tree_pins(out)
        for e in errors:
            line("FAIL", f"{rel_of(out)}: provider versions", e)
            counts["other"] += 1
        unknown = [f"{k} {v} ({w})" for k, (v, w) in pins.items()
                   if not any(r["key"] == k and r["version"] in (v, "*") for r in rows)]
        if unknown:
            line("FAIL", f"{rel_of(out)}: provider versions", "no CRDs for " + ", ".join(unknown) +
                 " in oracles/kube/crds.tsv: add their rows; this tree is not judged")
            counts["other"] += 1
            continue
        crdset = tuple((k, "*" if default[k] == "*" else pins[k][0] if k in pins else default[k]) for k in keys)
        sets.setdefault(crdset, []).append((out, pins))

    version = "?"
    ncrds = 0
    cache = {}
    for i, (crdset, trees) in enumerate(sets.items(), 1):
        tmp = tempfile.mkdtemp(prefix="fleetc-kube-")
        cl = Cluster(args.kube, tmp)
        try:
            took = cl.start()
            # The binary is stamped with its release (`check`: kube_version_ldflags).
            version = json.loads(cl.kubectl("get", "--raw", "/version").stdout or "{}").get("gitVersion", "?")
            desc = ", ".join(f"{k} {v}" for k, v in crdset if v != "*")
            print(f"== kube CRD set {i} ({desc}): {len(trees)} tree(s)", flush=True)
            line("ok", f"CRD set {i}: etcd and kube-apiserver {version} (k8s.io/kubernetes) ready on 127.0.0.1:{cl.port} in {took:.0f} s")
            crddir = Path(tmp) / "crds"
            crddir.mkdir()
            total = 0
            crd_fp = {}  # (group, kind) -> sha256 of its CRD in this set
            for key, ver in crdset:
                label, crds, fps = crd_source(rows, key, ver)
                crd_fp.update(fps)
                d = crddir / key
                d.mkdir()
                for n, data in crds.items():
                    (d / n).write_bytes(data)
                r = cl.kubectl("apply", "--server-side", "--field-manager=fleetc-oracle-crds", "-f", str(d))
                if r.returncode != 0:
                    line("FAIL", f"CRD set {i}: installing the CRDs of {label}", (r.stderr or r.stdout).strip()[:600])
                    counts["other"] += 1
                    continue
                total += len(crds)
                line("ok", f"CRD set {i}: installed {len(crds)} CRDs of {label}")
            r = cl.established(["crd", "--all"], 120)
            if r.returncode != 0:
                line("FAIL", f"CRD set {i}: CRDs established", r.stderr.strip()[:600])
                counts["other"] += 1
            ncrds += total
            scopes = discovery(cl)
            if i == 1:
                counts["other"] += fleetc_scopes(cl, scopes)
            created_ns = set()
            for out, pins in trees:
                read = ", ".join(f"{k} {v}" for k, (v, _w) in pins.items()) or "none (no CAPI providers, no Argo CD)"
                print(f"== kube {rel_of(out)}: CRD set {i} (pins read from the tree: {read})", flush=True)
                judge_tree(cl, out, cache, crd_fp, created_ns, tmp, counts, scopes)
            if args.argocd:
                argocd_permissions(args.argocd, [str(o) for o, _p in trees], scopes, Path(tmp), cl)
        finally:
            cl.stop()
            if os.environ.get("FLEETC_KUBE_KEEP"):
                print(f"kube check: kept {tmp}", file=sys.stderr)
            else:
                shutil.rmtree(tmp, ignore_errors=True)
    line("ok", f"{counts['judged']} objects judged by kube-apiserver {version} in {len(sets)} CRD set(s) "
               f"({ncrds} CRDs installed in all); {counts['failed']} manifest files rejected"
               + (f", {counts['other']} other failures" if counts["other"] else ""))


if __name__ == "__main__":
    main()
