"""Cluster API reconciling a tree's workload clusters: the real core manager, CABPT and CACPPT
(built by `check` from oracles/controllers/capi/go.mod and cabpt/go.mod) run against the tree's
own kube-apiserver, with the CRDs of the tree's pins (oracles/kube/crds.tsv) and the providers'
contract labels, conversion and admission webhooks on loopback, and judge what fleetc wrote
under out/capi/<mgmt>/<cluster>/.

`prepare(env)`: CRDs, webhooks, the three managers (waited on until ready), and the sealed
`<cluster>-talos` Secret created first, as sealed.yaml orders (from a throwaway Talos secrets
bundle made here: fleetc never makes one, R14). Returns the handle `judge` needs.

`judge(env, handle, delivered)`: applies each cluster directory that Argo CD did not deliver
(server-side, namespace first, as docs/capi.md has a user do it), then follows the reconcile in
two steps: as far as it goes with no infrastructure provider (where each object must wait for
CAPMOX), then, after one simulated CAPMOX fact (`ProxmoxCluster status.initialization.provisioned:
true`), as far as it goes with no Proxmox machine (where the control plane, the Machines and the
pools must wait). One line per check. CAPMOX and the IPAM provider do not run (NOT_RUN says
why); nothing of theirs is judged beyond their CRDs' schemas.

Upstream is cited as (repository, tag, path, lines) at the versions that run here: core
sigs.k8s.io/cluster-api v1.12.10, CABPT siderolabs/cluster-api-bootstrap-provider-talos v0.6.12,
CACPPT siderolabs/cluster-api-control-plane-provider-talos v0.5.13 (read in the Go module cache).
"""

import base64
import json
import os
import re
import secrets as pysecrets
import ssl
import string
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent

# The managers this family runs, each on its own loopback ports (the tree's network namespace is
# its own, so fixed ports do not collide between trees): webhook, health probe, diagnostics.
MANAGERS = {
    "capi": dict(name="core", wrapper=HERE / "capi", module="sigs.k8s.io/cluster-api",
                 ports=(9443, 9440, 8440), leader="--leader-elect=false"),
    "cabpt": dict(name="CABPT", wrapper=HERE / "cabpt",
                  module="github.com/siderolabs/cluster-api-bootstrap-provider-talos",
                  ports=(9444, 9441, 8441), leader="--enable-leader-election=false"),
    "cacppt": dict(name="CACPPT", wrapper=HERE / "cabpt",
                   module="github.com/siderolabs/cluster-api-control-plane-provider-talos",
                   ports=(9445, 9442, 8442), leader="--enable-leader-election=false"),
}
PROVIDER_NAMES = {"capi": "core (Cluster API)", "cabpt": "CABPT", "cacppt": "CACPPT",
                  "capmox": "CAPMOX", "ipam": "IPAM in-cluster"}

# Why CAPMOX and the IPAM provider do not run here.
NOT_RUN = {
    "capmox": "not built: CAPMOX v0.9.0 requires sigs.k8s.io/cluster-api v1.12.9, whose module zip the Go module "
              "proxy refuses (403); and it cannot start without a Proxmox API: given the capmox-variables fleetc's "
              "InfrastructureProvider hands it (spec.configSecret), its manager asks Proxmox for its version at start "
              "and exits when that fails (ionos-cloud/cluster-api-provider-proxmox v0.9.0 cmd/main.go l.146-150, "
              "pkg/proxmox/goproxmox/api_client.go l.57-60)",
    "ipam": "not built: it needs no Proxmox API, but nothing here would give it work: the InClusterIPPool and the "
            "machines' IPAddressClaims are CAPMOX's (v0.9.0 internal/controller/proxmoxcluster_controller.go l.209-216, "
            "pkg/kubernetes/ipam/ipam.go l.250, l.573), and fleetc writes no IPAM object of its own",
}

# Kinds followed in a workload cluster's namespace: kind -> (apiVersion, plural).
KINDS = {
    "Cluster": ("cluster.x-k8s.io/v1beta2", "clusters"),
    "MachineDeployment": ("cluster.x-k8s.io/v1beta2", "machinedeployments"),
    "MachineSet": ("cluster.x-k8s.io/v1beta2", "machinesets"),
    "Machine": ("cluster.x-k8s.io/v1beta2", "machines"),
    "MachineHealthCheck": ("cluster.x-k8s.io/v1beta2", "machinehealthchecks"),
    "TalosControlPlane": ("controlplane.cluster.x-k8s.io/v1alpha3", "taloscontrolplanes"),
    "TalosConfig": ("bootstrap.cluster.x-k8s.io/v1alpha3", "talosconfigs"),
    "TalosConfigTemplate": ("bootstrap.cluster.x-k8s.io/v1alpha3", "talosconfigtemplates"),
    "ProxmoxCluster": ("infrastructure.cluster.x-k8s.io/v1alpha2", "proxmoxclusters"),
    "ProxmoxMachine": ("infrastructure.cluster.x-k8s.io/v1alpha2", "proxmoxmachines"),
    "ProxmoxMachineTemplate": ("infrastructure.cluster.x-k8s.io/v1alpha2", "proxmoxmachinetemplates"),
    "Secret": ("v1", "secrets"),
}

POLL = 0.5          # seconds between two looks at the namespace
STEP1_TIMEOUT = 20  # seconds for the reconcile to settle before the simulated CAPMOX fact
STEP2_TIMEOUT = 35  # and after it (core requeues a MachineSet 15 s after a failed preflight check)


def kube():
    return sys.modules["kube_oracle"]


# ---------------------------------------------------------------------------------------------
# The API server, read directly (kubectl costs a process per look; the polls are many)

class Api:
    def __init__(self, kubeconfig):
        cfg = json.loads(Path(kubeconfig).read_text())
        self.base = cfg["clusters"][0]["cluster"]["server"]
        self.token = cfg["users"][0]["user"]["token"]
        self.ctx = ssl._create_unverified_context()  # the scratch API server's self-signed cert

    def call(self, method, path, body=None, ctype="application/json"):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=10) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            try:
                return e.code, json.loads(e.read() or b"{}")
            except json.JSONDecodeError:
                return e.code, {}

    @staticmethod
    def path(kind, ns=None, name=None, sub=None):
        av, plural = KINDS[kind]
        p = f"/api/{av}" if "/" not in av else f"/apis/{av}"
        if ns:
            p += f"/namespaces/{ns}"
        p += f"/{plural}"
        if name:
            p += f"/{name}"
        if sub:
            p += f"/{sub}"
        return p

    def list(self, kind, ns):
        code, body = self.call("GET", self.path(kind, ns))
        return {i["metadata"]["name"]: i for i in body.get("items", [])} if code == 200 else {}

    def snapshot(self, ns):
        return {k: self.list(k, ns) for k in KINDS}


# ---------------------------------------------------------------------------------------------
# Small helpers

def sh(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def module_dir(key):
    """The running build's module source, from its wrapper (the build put it in the module cache)."""
    m = MANAGERS[key]
    r = sh(["go", "list", "-m", "-f", "{{.Dir}}", m["module"]], cwd=m["wrapper"],
           env=dict(os.environ, GOFLAGS="-mod=mod", GOPROXY="off"))
    d = r.stdout.strip()
    return Path(d) if r.returncode == 0 and d else None


def running_version(key):
    """The version of a manager that runs here: its wrapper's go.mod requirement."""
    m = MANAGERS[key]
    mod = re.escape(m["module"])
    hit = re.search(rf"^\s*{mod}\s+(v\S+)", (m["wrapper"] / "go.mod").read_text(), re.M)
    return hit.group(1) if hit else "?"


def conds(obj):
    """(type -> condition) of an object's conditions: the v1beta2 list, then the deprecated
    v1beta1 list for types the first does not have (core v1.12 keeps both)."""
    st = obj.get("status") or {}
    out = {}
    for c in (st.get("conditions") or []):
        out[c["type"]] = c
    for c in (((st.get("deprecated") or {}).get("v1beta1") or {}).get("conditions") or []):
        out.setdefault(c["type"], c)
    return out


def owned_by(obj, kind, name):
    return any(o.get("kind") == kind and o.get("name") == name
               for o in obj.get("metadata", {}).get("ownerReferences") or [])


def short(s, n=300):
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[:n] + "…"


def cond_text(c):
    if not c:
        return "absent"
    t = f"{c.get('status')} {c.get('reason', '')}".strip()
    if c.get("message"):
        t += f" ({short(c['message'], 200)})"
    return t


# ---------------------------------------------------------------------------------------------
# Certificates: the webhooks' serving certificate and a throwaway Talos secrets bundle

def openssl(*args, cwd):
    r = sh(["openssl", *args], cwd=cwd)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {r.stderr.strip()}")


def webhook_cert(d):
    """A CA and a serving certificate for 127.0.0.1 (the address every webhook URL names), in
    the managers' cert dir as tls.crt/tls.key (controller-runtime's default names)."""
    d.mkdir(parents=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/CN=fleetc-controllers-webhook-ca", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    openssl("req", "-new", *ec, "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=127.0.0.1", cwd=d)
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "tls.crt", "-days", "2", "-extfile", "ext.cnf", cwd=d)
    return base64.b64encode((d / "ca.crt").read_bytes()).decode()


def talos_bundle(d):
    """A Talos secrets bundle of the shape `talosctl gen secrets` writes (siderolabs/talos
    pkg/machinery v1.13.0 config/generate/secrets/secrets.go: Cluster, Secrets, TrustdInfo, Certs;
    CABPT v0.6.12 controllers/secrets.go l.80-84 reads it with yaml.v2, so the keys are the
    lower-cased field names), made with openssl: the Talos API CA is Ed25519, the Kubernetes, etcd
    and aggregator CAs and the service-account key ECDSA P-256, as Talos makes them
    (config/generate/secrets/bundle.go l.196-273). Throwaway: it names no real cluster."""
    d.mkdir(parents=True)

    def ca(name, cn, algo):
        if algo == "ed25519":
            openssl("genpkey", "-algorithm", "ed25519", "-out", f"{name}.key", cwd=d)
        else:
            openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f"{name}.key", cwd=d)
        openssl("req", "-x509", "-new", "-key", f"{name}.key", "-out", f"{name}.crt", "-days", "3650",
                "-subj", f"/O={cn}", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,digitalSignature", cwd=d)
        key = (d / f"{name}.key").read_text()
        if algo == "ed25519":  # Talos's PEM type for Ed25519 keys (siderolabs/crypto x509 constants.go l.19)
            key = key.replace("BEGIN PRIVATE KEY", "BEGIN ED25519 PRIVATE KEY").replace(
                "END PRIVATE KEY", "END ED25519 PRIVATE KEY")
        return {"crt": base64.b64encode((d / f"{name}.crt").read_bytes()).decode(),
                "key": base64.b64encode(key.encode()).decode()}

    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "sa.key", cwd=d)
    alnum = string.ascii_lowercase + string.digits

    def token():
        return "".join(pysecrets.choice(alnum) for _ in range(6)) + "." + \
            "".join(pysecrets.choice(alnum) for _ in range(16))

    def b64(n):
        return base64.b64encode(os.urandom(n)).decode()

    bundle = {
        "cluster": {"id": b64(32), "secret": b64(32)},
        "secrets": {"bootstraptoken": token(), "secretboxencryptionsecret": b64(32)},
        "trustdinfo": {"token": token()},
        "certs": {
            "etcd": ca("etcd", "etcd", "ec"),
            "k8s": ca("k8s", "kubernetes", "ec"),
            "k8saggregator": ca("aggregator", "aggregator", "ec"),
            "k8sserviceaccount": {"key": base64.b64encode((d / "sa.key").read_bytes()).decode()},
            "os": ca("os", "talos", "ed25519"),
        },
    }
    return bundle


# ---------------------------------------------------------------------------------------------
# CRDs of the tree's pins, with what each provider's kustomization adds

def row_file(row, path):
    """One file of a crds.tsv row's source (module or upstream repository at the row's tag), or None."""
    k = kube()
    r = dict(row, path=path)
    try:
        if row["pin"].startswith("git:"):
            files, _ = k.git_files(r)
            return None if files is None else next(iter(files.values()))
        return next(iter(k.module_files(r).values()))
    except (SystemExit, subprocess.CalledProcessError, StopIteration, FileNotFoundError):
        return None


def contract_labels(rows, key, version):
    """The labels a provider's config/crd/kustomization.yaml puts on its CRDs (`commonLabels`, or
    `labels[].pairs`): the Cluster API contract labels (`cluster.x-k8s.io/<contract>: <versions>`)
    core reads to pick an API version and a contract (sigs.k8s.io/cluster-api v1.12.10
    internal/contract/version.go, GetLatestContractAndAPIVersionFromContract), from the same
    source as the CRDs."""
    for row in [r for r in rows if r["key"] == key and r["version"] in (version, "*")]:
        data = row_file(row, "config/crd/kustomization.yaml")
        if data is None:
            continue
        docs = [x for x in yaml.safe_load_all(data) if x]
        labels = {}
        for doc in docs:
            labels.update(doc.get("commonLabels") or {})
            for entry in doc.get("labels") or []:
                labels.update(entry.get("pairs") or {})
        return {k: v for k, v in labels.items() if k.startswith("cluster.x-k8s.io/")}
    return {}


def first_row_readable(rows, key, version):
    cands = [r for r in rows if r["key"] == key and r["version"] in (version, "*")]
    if not cands:
        return False
    row = cands[0]
    if row["pin"].startswith("git:"):
        files, _ = kube().git_files(row)
        return files is not None
    return True


def conversion_targets(key, mdir, url, ca):
    """{crd name: conversion stanza} for the CRDs whose conversion the running manager serves:
    the provider's config/crd/patches/webhook_in_*.yaml (service reference -> loopback URL)."""
    out = {}
    for f in sorted((mdir / "config/crd/patches").glob("webhook_in_*.yaml")):
        for doc in yaml.safe_load_all(f.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            conv = ((doc.get("spec") or {}).get("conversion") or {})
            wh = conv.get("webhook") or {}
            out[doc["metadata"]["name"]] = {
                "strategy": "Webhook",
                "webhook": {"conversionReviewVersions": wh.get("conversionReviewVersions") or ["v1"],
                            "clientConfig": {"url": f"{url}/convert", "caBundle": ca}},
            }
    return out


# ---------------------------------------------------------------------------------------------
# prefetch (in the parent, which has a network) and prepare

def prefetch(outs):
    """Into the Go module cache, before the trees' namespaces are entered (nothing inside them
    reaches the proxy): every module crds.tsv reads for the Cluster API pins of OUTS and for the
    versions that run. What cannot be downloaded is left to `prepare`, which says so."""
    k = kube()
    rows = k.crd_table()
    want = set()
    for out in outs:
        if not any((out / "capi").glob("*/*/cluster.yaml")):
            continue
        pins, _ = k.tree_pins(out)
        for key in ("capi", "cabpt", "cacppt", "capmox", "ipam"):
            for ver in {pins.get(key, (None,))[0], running_version(key) if key in MANAGERS else None} - {None}:
                want.update((r["module"], r["read"], r["pin"]) for r in rows
                            if r["key"] == key and r["version"] in (ver, "*") and not r["pin"].startswith("git:"))
    for mod, ver, pin in sorted(want):
        try:
            k.go_download(mod, ver, pin)
        except SystemExit:  # go_download said why on stderr; prepare() skips with the reason
            pass


def prepare(env):
    t0 = time.time()
    k = kube()
    api = Api(env.cluster.kubeconfig)
    clusters = sorted((p.parent.parent.name, p.parent.name, p.parent)
                      for p in (env.out / "capi").glob("*/*/cluster.yaml"))
    pins, errors = k.tree_pins(env.out)
    if errors:
        env.line("FAIL", "Cluster API provider pins", "; ".join(errors))
    running = {key: running_version(key) for key in MANAGERS}
    for key in MANAGERS:
        pin = pins.get(key, (None, None))[0]
        if pin is None:
            env.line("skip", f"Cluster API {PROVIDER_NAMES[key]}", f"the tree pins no version of it "
                     f"(out/capi/*/providers/20-providers/): {running[key]} runs")
        elif pin != running[key]:
            env.line("skip", f"Cluster API {PROVIDER_NAMES[key]} {pin} (the tree's pin)",
                     f"reconciled by {PROVIDER_NAMES[key]} {running[key]} instead (the build of "
                     f"{MANAGERS[key]['wrapper'].relative_to(HERE.parents[1])}/go.mod, the reference fleet's pin): a stand-in, "
                     f"so what {pin} itself does differently is not judged")
    for key in ("capmox", "ipam"):
        pin = pins.get(key, ("?", None))[0]
        env.line("skip", f"Cluster API {PROVIDER_NAMES[key]} {pin}", f"does not run: {NOT_RUN[key]}; its "
                 f"objects' reconcile and its admission webhooks are not judged (its CRDs are installed)")

    # The webhooks' certificate and URLs.
    certdir = env.tmp / "capi-webhook-certs"
    ca = webhook_cert(certdir)
    mdirs = {key: module_dir(key) for key in MANAGERS}
    missing = [MANAGERS[key]["module"] for key, d in mdirs.items() if d is None]
    if missing:
        env.line("FAIL", "Cluster API", f"the module source of {', '.join(missing)} is not in the Go module "
                 "cache (the builds put it there): nothing of Cluster API is judged")
        return None
    urls = {key: f"https://127.0.0.1:{MANAGERS[key]['ports'][0]}" for key in MANAGERS}

    # CRDs: the tree's pins (crds.tsv, as the kube oracle reads them), the providers' contract
    # labels, and the conversion webhooks of the providers that run.
    rows = k.crd_table()
    crddir = env.tmp / "capi-crds"
    crddir.mkdir()
    sources = []
    for key in ("capi", "cabpt", "cacppt", "capmox", "ipam"):
        ver = pins.get(key, (None,))[0] or running.get(key)
        if ver is None:
            continue
        use = ver
        if key in running and ver != running[key] and not first_row_readable(rows, key, ver) \
                and first_row_readable(rows, key, running[key]):
            # The pinned release's CRDs cannot be read here (crds.tsv's next row would be
            # another release's): the running build's own stand in, the closer match.
            env.line("skip", f"CRDs of {key} {ver}", f"the pinned release's CRDs cannot be read here "
                     f"(crds.tsv: {next(r['note'] for r in rows if r['key'] == key and r['version'] == ver)}); "
                     f"the running {running[key]}'s stand in")
            use = running[key]
        try:
            src = k.crd_source(rows, key, use, say=env.line)  # stand-in rows say so here
        except SystemExit:
            env.line("FAIL", "Cluster API", f"the CRDs of {key} {use} cannot be read inside the tree's network "
                     "namespace (not in the Go module cache, no proxy reachable; the kube family downloads them): "
                     "nothing of Cluster API is judged")
            return None
        if src is None:
            env.line("skip", f"CRDs of {key} {ver}", "no row in oracles/kube/crds.tsv: its objects cannot be created")
            continue
        label, crds, _ = src
        labels = contract_labels(rows, key, use)
        conv = conversion_targets(key, mdirs[key], urls[key], ca) if key in MANAGERS else {}
        d = crddir / key
        d.mkdir()
        n = 0
        for data in crds.values():
            for doc in k.documents(data):
                if doc.get("kind") != "CustomResourceDefinition":
                    continue
                doc.pop("status", None)
                doc["metadata"].setdefault("labels", {}).update(labels)
                if doc["metadata"]["name"] in conv:
                    doc["spec"]["conversion"] = conv[doc["metadata"]["name"]]
                (d / f"{doc['metadata']['name']}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
                n += 1
        sources.append(f"{key} {label}: {n} CRDs" + (f", labels {labels}" if labels else "")
                       + (f", {len(conv)} converted by the running {MANAGERS[key]['name']}" if conv else ""))
    r = env.kubectl("apply", "--server-side", "--field-manager=fleetc-controllers", "-R", "-f", str(crddir))
    if r.returncode == 0:
        r = env.cluster.established(["crd", "--all"], 90)
    if r.returncode != 0:
        env.line("FAIL", "Cluster API", f"the providers' CRDs were not installed, so nothing of Cluster API "
                 f"is judged: {short(r.stderr, 800)}")
        return None

    # Admission webhooks of the running managers, from their config/webhook/manifests.yaml, each
    # service reference rewritten to the manager's loopback URL (names prefixed per provider, as
    # each provider's config/default kustomization does with its namePrefix).
    whs = []
    for key, m in MANAGERS.items():
        for doc in yaml.safe_load_all((mdirs[key] / "config/webhook/manifests.yaml").read_text()):
            if not doc:
                continue
            doc["metadata"]["name"] = f"{key}-{doc['metadata']['name']}"
            for w in doc.get("webhooks") or []:
                svc = w["clientConfig"].pop("service")
                w["clientConfig"] = {"url": urls[key] + svc.get("path", "/"), "caBundle": ca}
            whs.append(doc)
    whfile = env.tmp / "capi-webhooks.yaml"
    whfile.write_text(yaml.safe_dump_all(whs, sort_keys=False))
    r = env.kubectl("apply", "--server-side", "--field-manager=fleetc-controllers", "-f", str(whfile))
    if r.returncode != 0:
        env.line("FAIL", "Cluster API", f"the providers' webhooks were not registered: {short(r.stderr, 800)}")
        return None

    # The managers, with the arguments of their own manager.yaml (feature gates at their release
    # defaults), leader election off, every server on loopback.
    started = {}
    for key, m in MANAGERS.items():
        wp, hp, dp = m["ports"]
        argv = [env.bins[key], f"--webhook-port={wp}", f"--webhook-cert-dir={certdir}",
                f"--health-addr=127.0.0.1:{hp}", f"--diagnostics-address=127.0.0.1:{dp}",
                "--insecure-diagnostics=true", m["leader"], *feature_gates(mdirs[key])]
        env.spawn(f"capi-{key}", argv, env=dict(os.environ, KUBECONFIG=str(env.cluster.kubeconfig)))
        started[key] = time.time()
    deadline = time.time() + 90
    ready = {}
    while len(ready) < len(MANAGERS) and time.time() < deadline:
        for key, m in MANAGERS.items():
            if key in ready:
                continue
            p = env.procs[f"capi-{key}"]
            if p.poll() is not None:
                env.line("FAIL", "Cluster API", f"the {m['name']} manager exited ({p.returncode}) before it was "
                         f"ready: {short(env.log_tail('capi-' + key, 1500), 1500)}")
                return None
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{m['ports'][1]}/readyz", timeout=1) as resp:
                    if resp.status == 200:
                        ready[key] = time.time() - started[key]
            except (OSError, urllib.error.URLError):
                pass
        time.sleep(0.25)
    if len(ready) < len(MANAGERS):
        late = [MANAGERS[x]["name"] for x in MANAGERS if x not in ready]
        env.line("FAIL", "Cluster API", f"{', '.join(late)} not ready within 90 s (readyz): "
                 + " | ".join(short(env.log_tail("capi-" + x, 600), 600) for x in MANAGERS if x not in ready))
        return None
    env.line("ok", "Cluster API controllers", "; ".join(sources) + "; webhooks registered on 127.0.0.1:"
             + ",".join(str(m["ports"][0]) for m in MANAGERS.values()) + "; "
             + ", ".join(f"{MANAGERS[x]['name']} {running[x]} ready in {ready[x]:.0f} s" for x in MANAGERS)
             + f" (prepared in {time.time() - t0:.0f} s)")

    # The sealed Secrets a user creates before the cluster's objects (sealed.yaml's order).
    bundles = {}
    for mgmt, name, d in clusters:
        bundles.update(create_sealed(env, api, mgmt, name))
    return dict(api=api, clusters=clusters, bundles=bundles, pins=pins, running=running, prepared=time.time() - t0)


def feature_gates(mdir):
    """The --feature-gates argument of the provider's config/manager/manager.yaml, each
    `${VAR:=default}` at its default (what clusterctl and the operator deploy without variables)."""
    for doc in yaml.safe_load_all((mdir / "config/manager/manager.yaml").read_text()):
        if not doc or doc.get("kind") != "Deployment":
            continue
        for c in doc["spec"]["template"]["spec"]["containers"]:
            for a in c.get("args") or []:
                if a.startswith("--feature-gates="):
                    return [re.sub(r"\$\{[A-Z_]+:=([^}]*)\}", r"\1", a)]
    return []


def create_sealed(env, api, mgmt, cluster):
    """Create `<cluster>-talos` as sealed.yaml describes it, before the cluster's objects, from
    a throwaway bundle; check sealed.yaml names the Secret CABPT reads: `<Cluster name>-talos`,
    key `bundle`, in the Cluster's namespace (CABPT v0.6.12 controllers/secrets.go l.47, l.80-84;
    the namespace is the TalosConfig's, l.30-35, i.e. the Cluster's)."""
    what = f"capi/{mgmt}/sealed.yaml: {cluster}'s Talos identity"
    sealed = env.out / "capi" / mgmt / "sealed.yaml"
    cl = next((x for f in sorted((env.out / "capi" / mgmt / cluster).glob("*.yaml"))
               for x in kube().documents(f.read_bytes()) if x.get("kind") == "Cluster"), None)
    if cl is None:
        return {}
    ns, cname = cl["metadata"].get("namespace", "default"), cl["metadata"]["name"]
    entries = []
    if sealed.is_file():
        entries = [e for e in (yaml.safe_load(sealed.read_text()) or {}).get("secrets") or []
                   if e.get("sealedInput") == "talos-secrets" and e.get("cluster") == cluster]
    if not entries:
        env.line("FAIL", what, f"sealed.yaml lists no `talos-secrets` Secret for {cluster}: CABPT will generate "
                 f"a new identity at the first reconcile (controllers/secrets.go l.52-70), owned by the Cluster")
        return {}
    e = entries[0]
    wrong = []
    if e.get("name") != f"{cname}-talos":
        wrong.append(f"name {e.get('name')!r}, CABPT reads {cname}-talos")
    if e.get("namespace") != ns:
        wrong.append(f"namespace {e.get('namespace')!r}, the Cluster's is {ns}")
    if "bundle" not in (e.get("keys") or []):
        wrong.append(f"keys {e.get('keys')}, CABPT reads `bundle`")
    bundle = talos_bundle(env.tmp / f"bundle-{cluster}")
    text = yaml.safe_dump(bundle, sort_keys=False)
    api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": e.get("namespace") or ns}})
    data = {key: base64.b64encode(text.encode()).decode() if key == "bundle" else
            base64.b64encode(b"not-a-value").decode() for key in (e.get("keys") or ["bundle"])}
    code, body = api.call("POST", f"/api/v1/namespaces/{e.get('namespace') or ns}/secrets", {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": e.get("name"), "namespace": e.get("namespace") or ns, "labels": e.get("labels") or {}},
        "data": data})
    if code >= 300:
        env.line("skip", what, f"could not create it: {short(body.get('message'))}")
        return {}
    if wrong:
        env.line("FAIL", what, "; ".join(wrong) + " (CABPT v0.6.12 controllers/secrets.go l.47, l.80-84)")
    else:
        env.line("ok", what, f"{ns}/{cname}-talos, key bundle, labels {e.get('labels') or {}}: the Secret CABPT "
                 "reads (controllers/secrets.go l.47, l.80-84); created first, as sealed.yaml orders, from a throwaway "
                 "bundle made here with openssl in `talosctl gen secrets`' shape (fleetc never makes one, R14)")
    return {(ns, cname): dict(text=text, bundle=bundle, secret=e.get("name"), secret_ns=e.get("namespace") or ns)}


# ---------------------------------------------------------------------------------------------
# judge

def judge(env, handle, delivered):
    for mgmt, name, d in handle["clusters"]:
        judge_cluster(env, handle, mgmt, name, d, delivered)
    for key, m in MANAGERS.items():
        p = env.procs.get(f"capi-{key}")
        if p is not None and p.poll() is not None:
            env.line("FAIL", f"Cluster API {m['name']} manager", f"exited ({p.returncode}) while reconciling the tree's "
                     f"objects: {short(env.log_tail('capi-' + key, 1500), 1500)}")


def judge_cluster(env, h, mgmt, cluster, d, delivered):
    t0 = time.time()
    api = h["api"]
    where = f"capi/{mgmt}/{cluster}"
    objs = []  # (file, doc)
    for f in sorted(d.glob("*.yaml")):
        for doc in kube().documents(f.read_bytes()):
            objs.append((f, doc))
    by_kind = {}
    for f, doc in objs:
        by_kind.setdefault(doc.get("kind"), []).append(doc)
    cl = (by_kind.get("Cluster") or [None])[0]
    if cl is None:
        env.line("skip", where, "no Cluster object in the directory: nothing to follow")
        return
    ns = cl["metadata"].get("namespace", "default")
    cname = cl["metadata"]["name"]

    # 1. Delivered by Argo CD, or applied here as a user would (namespace first, server-side).
    was_delivered = any(str(x).rstrip("/").endswith(where) for x in delivered or ())
    if was_delivered:
        how = "delivered by Argo CD (fleet-capi-cluster-" + cluster + ")"
    else:
        how = "applied here server-side, namespace first (Argo CD did not deliver it)"
        refused = []
        files = sorted(d.glob("*.yaml"), key=lambda f: (f.name != "namespace.yaml", f.name))
        for f in files:
            r = env.kubectl("apply", "--server-side", "-f", str(f))
            if r.returncode != 0:
                refused.append(f"{f.name}: {short(r.stderr, 600)}")
        if refused:
            env.line("FAIL", f"{where}: admission", " | ".join(refused))
    missing = []
    for f, doc in objs:
        kind, name = doc.get("kind"), doc["metadata"]["name"]
        if kind == "Namespace":
            continue
        if kind not in KINDS:
            missing.append(f"{kind} {name}: not a kind this family follows")
            continue
        code, _ = api.call("GET", api.path(kind, doc["metadata"].get("namespace", ns), name))
        if code != 200:
            missing.append(f"{kind} {name} ({f.name}): not on the API server ({code})")
    n = sum(1 for _, x in objs if x.get("kind") != "Namespace")
    if missing:
        env.line("FAIL", f"{where}: objects", "; ".join(missing))
    else:
        env.line("ok", f"{where}: admission", f"all {n} objects {how}, through core's, CABPT's and CACPPT's "
                 "admission webhooks (failurePolicy Fail: an object they refused or could not judge would not exist); "
                 "CAPMOX's webhooks do not run")

    tcp = (by_kind.get("TalosControlPlane") or [None])[0]
    mds = by_kind.get("MachineDeployment") or []
    mhcs = by_kind.get("MachineHealthCheck") or []
    tcp_name = tcp["metadata"]["name"] if tcp else None
    infra_name = cl["spec"]["infrastructureRef"]["name"]
    infra_kind = cl["spec"]["infrastructureRef"]["kind"]

    # 2. Until infrastructure: the Cluster, the control plane and the pools, each at its wait.
    def settled1(s):
        c = s["Cluster"].get(cname)
        if not c or "InfrastructureReady" not in conds(c):
            return "the Cluster's InfrastructureReady condition"
        if tcp_name and not owned_by(s["TalosControlPlane"].get(tcp_name, {}), "Cluster", cname):
            return "the TalosControlPlane's owner"
        for md in mds:
            mss = [m for m in s["MachineSet"].values() if owned_by(m, "MachineDeployment", md["metadata"]["name"])]
            mdo = s["MachineDeployment"].get(md["metadata"]["name"], {})
            if not mss and "ScalingUp" not in conds(mdo):
                return f"MachineDeployment {md['metadata']['name']}'s MachineSet"
            if mss and "ScalingUp" not in conds(mss[0]):
                return f"MachineSet {mss[0]['metadata']['name']}'s ScalingUp condition"
        for m in mhcs:
            if not owned_by(s["MachineHealthCheck"].get(m["metadata"]["name"], {}), "Cluster", cname):
                return f"MachineHealthCheck {m['metadata']['name']}'s owner"
        return None

    s, took, pending1, trail1 = wait(api, ns, settled1, STEP1_TIMEOUT)
    step1 = f"{took:.0f} s after the apply" + (f", still waiting for {pending1}" if pending1 else "")
    c = s["Cluster"].get(cname, {})
    cc = conds(c)
    ir = cc.get("InfrastructureReady")
    facts, bad = [], []
    for kind, name in ((infra_kind, infra_name), ("TalosControlPlane", tcp_name)):
        if name is None:
            continue
        o = s.get(kind, {}).get(name)
        if o is None:
            bad.append(f"{kind} {name} is missing")
        elif owned_by(o, "Cluster", cname):
            facts.append(f"{kind} {name} owned by the Cluster")
        else:
            bad.append(f"{kind} {name} not owned by the Cluster (its reference did not resolve, or its CRD's "
                       "contract label did not match: core v1.12.10 internal/contract/version.go)")
    phase = (c.get("status") or {}).get("phase")
    provisioned = ((c.get("status") or {}).get("initialization") or {}).get("infrastructureProvisioned")
    if ir is None or ir.get("status") != "False" or provisioned:
        bad.append(f"InfrastructureReady {cond_text(ir)}, infrastructureProvisioned {provisioned}: expected False "
                   f"while {infra_kind} reports nothing")
    else:
        facts.append(f"InfrastructureReady {cond_text(ir)}")
    if phase != "Provisioning":
        bad.append(f"phase {phase}, expected Provisioning")
    line2(env, f"{where}: Cluster {cname}, before any infrastructure", facts, bad,
          f"waits at its infrastructure, as core v1.12.10 does until {infra_kind} status.initialization.provisioned "
          f"(the v1beta2 contract its CRD label selects; internal/contract/infrastructure_cluster.go l.58-67, "
          f"internal/controllers/cluster/cluster_controller_phases.go l.204-208); phase {phase} ({step1})")

    if tcp:
        cpm = control_plane_machines(s, cname)
        bad, facts = [], []
        if cpm:
            bad.append(f"{len(cpm)} control-plane Machine(s) exist before the infrastructure is ready")
        fin = (s["TalosControlPlane"].get(tcp_name, {}).get("metadata") or {}).get("finalizers") or []
        if fin:
            bad.append(f"finalizers {fin}: CACPPT went past its infrastructure wait")
        said = "cluster infra not ready" in (env.tmp / "logs" / "capi-cacppt.log").read_text(errors="replace")
        if not said:
            bad.append("CACPPT never logged `cluster infra not ready`")
        line2(env, f"{where}: TalosControlPlane {tcp_name}, before any infrastructure", facts, bad,
              "CACPPT waits for the Cluster's infrastructure before creating any Machine (`cluster infra not ready`: "
              "siderolabs/cluster-api-control-plane-provider-talos v0.5.13 controllers/taloscontrolplane_controller.go "
              "l.122-126): no Machine, no finalizer yet")

    for md in mds:
        judge_md_step1(env, s, where, cname, md)

    # 3. The simulated CAPMOX fact, then how far the reconcile goes with no Proxmox machine.
    code, body = api.call("PATCH", api.path(infra_kind, ns, infra_name, "status"),
                          {"status": {"initialization": {"provisioned": True}}}, "application/merge-patch+json")
    if code >= 300:
        env.line("skip", f"{where}: after infrastructure", f"could not simulate CAPMOX on {infra_kind} {infra_name}: "
                 f"{short(body.get('message'))}: the rest of the reconcile is not judged")
        return
    t1 = time.time()

    want_cp = int((tcp or {}).get("spec", {}).get("replicas", 0) or 0)

    def settled2(s):
        c = s["Cluster"].get(cname, {})
        if conds(c).get("InfrastructureReady", {}).get("status") != "True":
            return "the Cluster's InfrastructureReady True"
        if tcp:
            cpm = control_plane_machines(s, cname)
            if len(cpm) < want_cp:
                return f"{want_cp} control-plane Machines"
            o = s["TalosControlPlane"].get(tcp_name, {})
            if "MachinesBootstrapped" not in conds(o) or not (o.get("status") or {}).get("version"):
                return "the TalosControlPlane's status"
        for md in mds:
            if len(pool_machines(s, md)) < int(md["spec"].get("replicas", 1)):
                return f"MachineDeployment {md['metadata']['name']}'s Machines"
        for n, m in s["Machine"].items():
            if not (m.get("spec", {}).get("bootstrap") or {}).get("dataSecretName"):
                return f"Machine {n}'s bootstrap data"
            # What judge_machines reads: core's own record of the data, written a moment after
            # CABPT sets the reference (the Machine moves from Pending to Provisioning then).
            mst = m.get("status") or {}
            if not (mst.get("initialization") or {}).get("bootstrapDataSecretCreated") or mst.get("phase") == "Pending":
                return f"Machine {n}'s bootstrap data in its status"
            if "InfrastructureReady" not in conds(m):
                return f"Machine {n}'s InfrastructureReady condition"
        for m in mhcs:
            st = s["MachineHealthCheck"].get(m["metadata"]["name"], {}).get("status") or {}
            sel = m["spec"]["selector"]["matchLabels"]
            want = sorted(x for x, mm in s["Machine"].items()
                          if all((mm["metadata"].get("labels") or {}).get(k) == v for k, v in sel.items()))
            if st.get("expectedMachines") is None or sorted(st.get("targets") or []) != want:
                return f"MachineHealthCheck {m['metadata']['name']}'s targets"
        return None

    s, took, pending2, trail2 = wait(api, ns, settled2, STEP2_TIMEOUT)
    step2 = f"{time.time() - t1:.0f} s after the simulated CAPMOX fact" + \
        (f", still waiting for {pending2} after {STEP2_TIMEOUT} s" if pending2 else "")
    (env.tmp / f"capi-{cluster}-snapshot.json").write_text(json.dumps(dict(trail1=trail1, trail2=trail2, **s), indent=1))
    c = s["Cluster"].get(cname, {})
    cc = conds(c)
    facts, bad = [], []
    st = c.get("status") or {}
    if cc.get("InfrastructureReady", {}).get("status") != "True" or not (st.get("initialization") or {}).get("infrastructureProvisioned"):
        bad.append(f"InfrastructureReady {cond_text(cc.get('InfrastructureReady'))}, expected True")
    else:
        facts.append("InfrastructureReady True")
    if st.get("phase") != "Provisioned":
        bad.append(f"phase {st.get('phase')}, expected Provisioned")
    cpi = cc.get("ControlPlaneInitialized")
    if cpi and cpi.get("status") == "True":
        bad.append("ControlPlaneInitialized True with no machine running")
    else:
        facts.append(f"ControlPlaneInitialized {cond_text(cpi)}")
    line2(env, f"{where}: Cluster {cname}, after the simulated CAPMOX fact", facts, bad,
          f"SIMULATED: {infra_kind} {infra_name} status.initialization.provisioned=true written here in CAPMOX's place "
          f"(what v0.9.0 pkg/scope/cluster.go l.244-247 SetReady writes once Proxmox answers); core then provisions "
          f"the Cluster (phase {st.get('phase')}) and waits at its control plane ({step2})")

    if tcp:
        judge_tcp_step2(env, s, where, cname, tcp, step2)
    for md in mds:
        judge_md_step2(env, s, where, cname, md, by_kind, step2)
    judge_machines(env, s, where, step2)
    judge_bootstrap(env, s, where, cname, cl, tcp, mds, by_kind, h["bundles"].get((ns, cname)))
    for m in mhcs:
        judge_mhc(env, s, where, cname, m)
    judge_conditions(env, s, where)
    judge_logs(env, s, where, ns, objs)
    # Not a check (time is measured, not asserted): the figures for oracles/controllers/README.md.
    print(f"   controllers {env.label}: {where}: {time.time() - t0:.0f} s from the apply to the last look "
          f"(before the simulated fact {step1}, after it {time.time() - t1:.0f} s); CRDs, webhooks and "
          f"controllers took {h['prepared']:.0f} s before the tree's Argo CD part", flush=True)


def wait(api, ns, pred, timeout):
    """Poll the namespace until `pred` holds (it returns None) or the timeout: (snapshot, seconds,
    what was still pending at the last look or None, [(seconds, what was pending from then)])."""
    start = time.time()
    trail, last = [], object()
    while True:
        s = api.snapshot(ns)
        pending = pred(s)
        if pending != last:
            trail.append((round(time.time() - start, 1), pending))
            last = pending
        if pending is None or time.time() - start > timeout:
            return s, time.time() - start, pending, trail
        time.sleep(POLL)


def line2(env, what, facts, bad, why_ok):
    if bad:
        env.line("FAIL", what, "; ".join(bad) + (" (seen: " + "; ".join(facts) + ")" if facts else ""))
    else:
        env.line("ok", what, why_ok + (": " + "; ".join(facts) if facts else ""))


def control_plane_machines(s, cname):
    return {n: m for n, m in s["Machine"].items()
            if "cluster.x-k8s.io/control-plane" in (m["metadata"].get("labels") or {})
            and (m["metadata"].get("labels") or {}).get("cluster.x-k8s.io/cluster-name") == cname}


def pool_machines(s, md):
    sel = md["spec"]["selector"]["matchLabels"]
    return {n: m for n, m in s["Machine"].items()
            if all((m["metadata"].get("labels") or {}).get(k) == v for k, v in sel.items())
            and "cluster.x-k8s.io/control-plane" not in (m["metadata"].get("labels") or {})}


def template_refs(md):
    spec = md["spec"]["template"]["spec"]
    return [(r["kind"], r["name"]) for r in (spec.get("bootstrap", {}).get("configRef"), spec.get("infrastructureRef")) if r]


def judge_md_step1(env, s, where, cname, md):
    name = md["metadata"]["name"]
    o = s["MachineDeployment"].get(name, {})
    facts, bad = [], []
    for kind, tname in template_refs(md):
        t = s.get(kind, {}).get(tname)
        if t is None:
            bad.append(f"{kind} {tname} does not exist")
        elif not owned_by(t, "Cluster", cname):
            bad.append(f"{kind} {tname} not adopted by the Cluster")
        else:
            facts.append(f"{kind} {tname} resolved and owned by the Cluster")
    for ctype in ("ScalingUp", "Available"):
        cnd = conds(o).get(ctype)
        if cnd and re.search(r"does not exist|do not exist|not found", cnd.get("message", "")):
            bad.append(f"{ctype}: {cond_text(cnd)}")
    mss = [m for m in s["MachineSet"].values() if owned_by(m, "MachineDeployment", name)]
    if not mss:
        bad.append("no MachineSet created")
    else:
        su = conds(mss[0]).get("ScalingUp")
        msg = (su or {}).get("message", "")
        if "ControlPlaneIsStable" in msg and "is provisioning" in msg:
            facts.append(f"MachineSet {mss[0]['metadata']['name']} holds its scale-up: {short(msg, 220)}")
        else:
            bad.append(f"MachineSet {mss[0]['metadata']['name']} ScalingUp {cond_text(su)}: expected held by the "
                       "ControlPlaneIsStable preflight check while the TalosControlPlane has no status.version")
    line2(env, f"{where}: MachineDeployment {name}, before any infrastructure", facts, bad,
          "its templates resolve (core v1.12.10 internal/controllers/machinedeployment/machinedeployment_controller.go "
          "l.624-649 adopts them) and its MachineSet waits for the control plane: the ControlPlaneIsStable preflight "
          "holds a scale-up while TalosControlPlane status.version is unset (internal/controllers/machineset/"
          "machineset_preflight.go l.168-176, internal/contract/controlplane.go l.216-232)")


def last_error(env, key, marker):
    """The error of the last klog error line of a manager that carries `marker`, unescaped."""
    f = env.tmp / "logs" / f"capi-{key}.log"
    hits = [ln for ln in f.read_text(errors="replace").splitlines() if KLOG_ERROR.match(ln) and marker in ln]
    if not hits:
        return None
    return short(" | ".join(log_errors(hits[-1])).replace('\\"', '"'), 300)


def judge_tcp_step2(env, s, where, cname, tcp, step2):
    name = tcp["metadata"]["name"]
    o = s["TalosControlPlane"].get(name, {})
    st = o.get("status") or {}
    want = int(tcp["spec"].get("replicas", 1))
    cpm = control_plane_machines(s, cname)
    facts, bad = [], []
    if len(cpm) != want:
        err = last_error(env, "cacppt", f'TalosControlPlane="{tcp["metadata"].get("namespace")}/{name}"')
        bad.append(f"{len(cpm)} control-plane Machines, spec.replicas {want}" + (f" (CACPPT: {err})" if err else ""))
    tmpl_name = tcp["spec"]["infrastructureTemplate"]["name"]
    tmpl = s.get(tcp["spec"]["infrastructureTemplate"]["kind"], {}).get(tmpl_name)
    for mn, m in sorted(cpm.items()):
        spec = m.get("spec") or {}
        if spec.get("version") != tcp["spec"]["version"]:
            bad.append(f"Machine {mn} version {spec.get('version')}, TalosControlPlane {tcp['spec']['version']}")
        iref = spec.get("infrastructureRef") or {}
        im = s.get(iref.get("kind"), {}).get(iref.get("name"))
        if im is None:
            bad.append(f"Machine {mn}: its {iref.get('kind')} {iref.get('name')} does not exist")
        elif tmpl is not None and subset_missing(im.get("spec") or {}, tmpl["spec"]["template"]["spec"], "spec"):
            bad.append(f"Machine {mn}: {iref.get('kind')} {iref.get('name')} is not a clone of {tmpl_name}: "
                       f"{subset_missing(im.get('spec') or {}, tmpl['spec']['template']['spec'], 'spec')}")
        bref = (spec.get("bootstrap") or {}).get("configRef") or {}
        tc = s["TalosConfig"].get(bref.get("name"))
        if tc is None:
            bad.append(f"Machine {mn}: its TalosConfig {bref.get('name')} does not exist")
        else:
            miss = spec_differs(tc["spec"], tcp["spec"]["controlPlaneConfig"]["controlplane"])
            if miss:
                bad.append(f"Machine {mn}: TalosConfig {bref.get('name')} is not controlPlaneConfig.controlplane: {miss}")
    if cpm and not bad:
        facts.append(f"{len(cpm)} Machines of version {tcp['spec']['version']}, each with a "
                     f"{tcp['spec']['infrastructureTemplate']['kind']} cloned from {tmpl_name} and a TalosConfig of "
                     "controlPlaneConfig.controlplane")
    if st.get("version") != tcp["spec"]["version"]:
        bad.append(f"status.version {st.get('version')!r}, expected {tcp['spec']['version']} (CACPPT sets the lowest "
                   "Machine version)")
    mb = conds(o).get("MachinesBootstrapped")
    if mb and mb.get("status") == "False" and mb.get("reason") == "WaitingForTalosBoot" \
            and re.search(r"no addresses were found|InternalIP or ExternalIP", mb.get("message", "")):
        facts.append(f"MachinesBootstrapped {cond_text(mb)}")
    else:
        bad.append(f"MachinesBootstrapped {cond_text(mb)}: expected False WaitingForTalosBoot, no machine address yet")
    line2(env, f"{where}: TalosControlPlane {name}, after the infrastructure", facts, bad,
          "CACPPT creates every control-plane Machine at once (v0.5.13 controllers/taloscontrolplane_controller.go "
          "l.333-411, l.778-787) and waits to bootstrap etcd until a Machine has an address (l.800-813, "
          f"controllers/configs.go l.82-91), which only CAPMOX's ProxmoxMachine gives ({step2})")


def spec_differs(got, fleetc):
    """Why a generated TalosConfig's spec is not the one fleetc wrote (None when it is): every
    field fleetc wrote, with the strategic patches equal and in order (the API server may add CRD
    defaults, e.g. `hostname: {}`)."""
    if (got.get("strategicPatches") or []) != (fleetc.get("strategicPatches") or []):
        return "strategicPatches differ"
    return subset_missing(got, {k: v for k, v in fleetc.items() if k != "strategicPatches"}, "spec")


def judge_md_step2(env, s, where, cname, md, by_kind, step2):
    name = md["metadata"]["name"]
    want = int(md["spec"].get("replicas", 1))
    ws = pool_machines(s, md)
    facts, bad = [], []
    mss = [m for m in s["MachineSet"].values() if owned_by(m, "MachineDeployment", name)]
    if len(ws) != want:
        msg = "; ".join(cond_text(conds(m).get("ScalingUp")) for m in mss) or "no MachineSet"
        bad.append(f"{len(ws)} Machines, spec.replicas {want}: MachineSet ScalingUp {msg}")
    spec = md["spec"]["template"]["spec"]
    tct_name = (spec.get("bootstrap", {}).get("configRef") or {}).get("name")
    tct = next((x for x in by_kind.get("TalosConfigTemplate", []) if x["metadata"]["name"] == tct_name), None)
    pmt_name = spec["infrastructureRef"]["name"]
    pmt = next((x for x in by_kind.get(spec["infrastructureRef"]["kind"], []) if x["metadata"]["name"] == pmt_name), None)
    for mn, m in sorted(ws.items()):
        ms = m.get("spec") or {}
        if ms.get("version") != spec.get("version"):
            bad.append(f"Machine {mn} version {ms.get('version')}, the pool's {spec.get('version')}")
        bref = (ms.get("bootstrap") or {}).get("configRef") or {}
        tc = s["TalosConfig"].get(bref.get("name"))
        if tc is None:
            bad.append(f"Machine {mn}: TalosConfig {bref.get('name')} does not exist")
        elif tct is not None and spec_differs(tc["spec"], tct["spec"]["template"]["spec"]):
            bad.append(f"Machine {mn}: TalosConfig {bref.get('name')} is not TalosConfigTemplate {tct_name}'s: "
                       f"{spec_differs(tc['spec'], tct['spec']['template']['spec'])}")
        iref = ms.get("infrastructureRef") or {}
        im = s.get(iref.get("kind"), {}).get(iref.get("name"))
        if im is None:
            bad.append(f"Machine {mn}: {iref.get('kind')} {iref.get('name')} does not exist")
        elif pmt is not None and subset_missing(im.get("spec") or {}, pmt["spec"]["template"]["spec"], "spec"):
            bad.append(f"Machine {mn}: {iref.get('kind')} {iref.get('name')} is not a clone of {pmt_name}: "
                       f"{subset_missing(im.get('spec') or {}, pmt['spec']['template']['spec'], 'spec')}")
    if ws and not bad:
        facts.append(f"{len(ws)} Machines of version {spec.get('version')}, each with a TalosConfig of {tct_name} and a "
                     f"{spec['infrastructureRef']['kind']} cloned from {pmt_name}")
    line2(env, f"{where}: MachineDeployment {name}, after the infrastructure", facts, bad,
          "once CACPPT reports the control plane's version the preflight checks pass (ControlPlaneIsStable, "
          "KubernetesVersionSkew: core v1.12.10 internal/controllers/machineset/machineset_preflight.go l.89-128) and "
          f"the MachineSet creates the pool's Machines from its templates ({step2})")


def judge_machines(env, s, where, step2):
    """Every Machine, control plane and pools: bootstrap data set, waiting at its infrastructure
    machine, which only CAPMOX provisions (core v1.12.10 reads status.initialization.provisioned of
    a v1beta2-contract infrastructure machine: internal/contract/infrastructure_machine.go l.45-57)."""
    facts, bad, phases = [], [], {}
    for mn, m in sorted(s["Machine"].items()):
        st = m.get("status") or {}
        ir = conds(m).get("InfrastructureReady")
        kind = ((m.get("spec") or {}).get("infrastructureRef") or {}).get("kind", "?")
        if not (st.get("initialization") or {}).get("bootstrapDataSecretCreated"):
            bad.append(f"Machine {mn}: no bootstrap data")
        if not ir or ir.get("status") != "False" or "status.initialization.provisioned is false" not in ir.get("message", ""):
            bad.append(f"Machine {mn}: InfrastructureReady {cond_text(ir)}, expected False until its {kind} is provisioned")
        phases[st.get("phase")] = phases.get(st.get("phase"), 0) + 1
    if not s["Machine"]:
        bad.append("no Machine at all")
    if set(phases) - {"Provisioning"}:
        bad.append(f"phases {phases}, expected Provisioning")
    if not bad:
        facts.append(f"{len(s['Machine'])} Machines in phase Provisioning, bootstrap data set, InfrastructureReady False "
                     f"({cond_text(ir)})")
    line2(env, f"{where}: Machines, after the infrastructure", facts, bad,
          f"each has its bootstrap data and waits for its infrastructure machine, which only CAPMOX provisions ({step2})")


def judge_bootstrap(env, s, where, cname, cl, tcp, mds, by_kind, bundle):
    """Every TalosConfig's bootstrap data: CABPT renders it once the Cluster's infrastructure is
    ready (CABPT v0.6.12 controllers/talosconfig_controller.go l.247-252) with the Talos library it
    embeds, which loads the patched result as a config (l.333-357: LoadPatch, Apply, out.Config())."""
    ep = cl["spec"].get("controlPlaneEndpoint") or {}
    endpoint = f"https://{ep.get('host')}:{ep.get('port')}"
    groups = {}
    for mn, m in s["Machine"].items():
        bref = ((m.get("spec") or {}).get("bootstrap") or {}).get("configRef") or {}
        labels = m["metadata"].get("labels") or {}
        group = "the control plane" if "cluster.x-k8s.io/control-plane" in labels else \
            f"pool {labels.get('cluster.x-k8s.io/deployment-name', '?')}"
        groups.setdefault(group, []).append((mn, m, s["TalosConfig"].get(bref.get("name"))))
    os_crt = k8s_crt = None
    if bundle:
        os_crt = base64.b64decode(bundle["bundle"]["certs"]["os"]["crt"])
        k8s_crt = base64.b64decode(bundle["bundle"]["certs"]["k8s"]["crt"])
    for group, items in sorted(groups.items()):
        facts, bad = [], []
        sizes = []
        for mn, m, tc in sorted(items, key=lambda x: x[0]):
            if tc is None:
                bad.append(f"Machine {mn}: no TalosConfig")
                continue
            tn = tc["metadata"]["name"]
            st = tc.get("status") or {}
            dsn = st.get("dataSecretName")
            if not st.get("ready") or not dsn:
                bad.append(f"TalosConfig {tn}: not ready ({'; '.join(cond_text(x) for x in conds(tc).values())})")
                continue
            if ((m.get("spec") or {}).get("bootstrap") or {}).get("dataSecretName") != dsn:
                bad.append(f"Machine {mn} does not name the data Secret {dsn}")
            sec = s["Secret"].get(dsn)
            if sec is None:
                bad.append(f"TalosConfig {tn}: Secret {dsn} missing")
                continue
            raw = base64.b64decode((sec.get("data") or {}).get("value", ""))
            sizes.append(len(raw))
            try:
                docs = [x for x in yaml.safe_load_all(raw) if x is not None]
            except yaml.YAMLError as e:
                bad.append(f"{dsn}: not YAML: {short(e, 200)}")
                continue
            main = next((x for x in docs if isinstance(x, dict) and x.get("version") == "v1alpha1"), None)
            if main is None:
                bad.append(f"{dsn}: no `version: v1alpha1` machine config document")
                continue
            want_type = tc["spec"].get("generateType")
            if (main.get("machine") or {}).get("type") != want_type:
                bad.append(f"{dsn}: machine.type {(main.get('machine') or {}).get('type')}, generateType {want_type}")
            got_ep = (((main.get("cluster") or {}).get("controlPlane") or {}).get("endpoint"))
            if got_ep != endpoint:
                bad.append(f"{dsn}: cluster.controlPlane.endpoint {got_ep}, the Cluster's {endpoint}")
            if os_crt is not None:
                ca = base64.b64decode(((main.get("machine") or {}).get("ca") or {}).get("crt", "") or "")
                if ca != os_crt:
                    bad.append(f"{dsn}: machine.ca.crt is not the sealed bundle's Talos CA (CABPT did not use {bundle['secret']})")
                kca = base64.b64decode(((main.get("cluster") or {}).get("ca") or {}).get("crt", "") or "")
                if kca != k8s_crt:
                    bad.append(f"{dsn}: cluster.ca.crt is not the sealed bundle's Kubernetes CA")
            kv = (m.get("spec") or {}).get("version")
            kubelet = ((main.get("machine") or {}).get("kubelet") or {}).get("image", "")
            if kv and not kubelet.endswith(f":{kv}"):
                bad.append(f"{dsn}: kubelet image {kubelet}, the Machine's version {kv}")
            if want_type == "controlplane":
                apis = (((main.get("cluster") or {}).get("apiServer") or {}).get("image", ""))
                if kv and not apis.endswith(f":{kv}"):
                    bad.append(f"{dsn}: kube-apiserver image {apis}, the Machine's version {kv}")
            for i, p in enumerate(tc["spec"].get("strategicPatches") or []):
                miss = patch_missing(docs, p)
                if miss:
                    bad.append(f"{dsn}: strategic patch {i + 1} not in the result: {short(miss, 200)}")
        if not bad:
            facts.append(f"{len(items)} TalosConfig(s) ready, bootstrap data {min(sizes)}–{max(sizes)} bytes: "
                         f"YAML documents with a v1alpha1 {items[0][2]['spec'].get('generateType')} machine config for "
                         f"{endpoint}, Kubernetes {', '.join(sorted({(x[1].get('spec') or {}).get('version') for x in items}))} "
                         "(the Machines' version), every strategic patch of fleetc's present"
                         + (", CAs from the sealed bundle" if bundle else ""))
        line2(env, f"{where}: bootstrap data of {group}", facts, bad,
              "CABPT rendered it once the Cluster's infrastructure was ready (v0.6.12 controllers/talosconfig_controller.go "
              "l.247-252), loading the patched result as a Talos config with its embedded library (l.333-357)")

    if bundle:
        facts, bad = [], []
        sec = s["Secret"].get(bundle["secret"])
        if sec is None:
            bad.append(f"{bundle['secret']} is gone")
        else:
            got = base64.b64decode((sec.get("data") or {}).get("bundle", "")).decode(errors="replace")
            if got != bundle["text"]:
                bad.append(f"{bundle['secret']}'s bundle was replaced")
            if sec["metadata"].get("ownerReferences"):
                bad.append(f"{bundle['secret']} got owners {[o.get('kind') + '/' + o.get('name') for o in sec['metadata']['ownerReferences']]} "
                           "(CABPT generated its own)")
        own = s["Secret"].get(f"{cname}-talos")
        if bundle["secret"] != f"{cname}-talos" and own is not None:
            owners = [o.get("kind") + "/" + o.get("name") for o in own["metadata"].get("ownerReferences") or []]
            bad.append(f"CABPT generated its own identity {cname}-talos (owners {owners}: it dies with the Cluster)")
        cas = s["Secret"].get(f"{cname}-ca")
        if cas is None:
            bad.append(f"{cname}-ca was not derived")
        elif base64.b64decode((cas.get("data") or {}).get("tls.crt", "")) != k8s_crt:
            bad.append(f"{cname}-ca is not the sealed bundle's Kubernetes CA")
        else:
            facts.append(f"{cname}-ca holds the bundle's Kubernetes CA")
        line2(env, f"{where}: sealed identity {bundle['secret']}", facts, bad,
              "CABPT read it and generated nothing (v0.6.12 controllers/secrets.go l.50-70 generates, with the Cluster as "
              "owner, only when it is missing): the bundle is unchanged and unowned")


def patch_missing(docs, patch_text):
    """What of a strategic patch is not in the rendered documents (None when all of it is): a
    v1alpha1 patch's every mapping leaf and list item in the v1alpha1 document, a document of
    another kind in the document of that kind and name."""
    try:
        pdocs = [x for x in yaml.safe_load_all(patch_text) if x]
    except yaml.YAMLError as e:
        return f"the patch is not YAML: {e}"
    for p in pdocs:
        if "kind" in p:
            target = next((x for x in docs if isinstance(x, dict) and x.get("kind") == p["kind"]
                           and x.get("name") == p.get("name")), None)
            if target is None:
                return f"no {p['kind']} {p.get('name')} document"
            miss = subset_missing(target, p, "")
        else:
            target = next((x for x in docs if isinstance(x, dict) and x.get("version") == "v1alpha1"), {})
            miss = subset_missing(target, p, "")
        if miss:
            return miss
    return None


def subset_missing(have, want, path):
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return f"{path or '.'}: not a mapping"
        for k, v in want.items():
            if k not in have:
                return f"{path}.{k} absent"
            m = subset_missing(have[k], v, f"{path}.{k}")
            if m:
                return m
        return None
    if isinstance(want, list):
        if not isinstance(have, list):
            return f"{path}: not a list"
        for item in want:
            if not any(subset_missing(h, item, path) is None for h in have):
                return f"{path}: item {short(item, 80)} absent"
        return None
    if want != have and str(want) != str(have):
        return f"{path}: {short(have, 60)} instead of {short(want, 60)}"
    return None


def judge_mhc(env, s, where, cname, mhc):
    name = mhc["metadata"]["name"]
    o = s["MachineHealthCheck"].get(name, {})
    st = o.get("status") or {}
    sel = mhc["spec"]["selector"]["matchLabels"]
    want = sorted(x for x, m in s["Machine"].items()
                  if all((m["metadata"].get("labels") or {}).get(k) == v for k, v in sel.items()))
    facts, bad = [], []
    if not owned_by(o, "Cluster", cname):
        bad.append("not owned by the Cluster")
    got = sorted(st.get("targets") or [])
    if got != want:
        bad.append(f"targets {got}, the Machines its selector matches are {want}")
    dep = sel.get("cluster.x-k8s.io/deployment-name")
    pool = {n for n, m in s["Machine"].items()
            if (m["metadata"].get("labels") or {}).get("cluster.x-k8s.io/deployment-name") == dep}
    if dep and set(got) != pool:
        bad.append(f"targets {got}, MachineDeployment {dep}'s Machines are {sorted(pool)}")
    if not want:
        bad.append("its selector matches no Machine")
    # The remediation bound: fleetc writes an absolute count; core allows remediation while
    # expectedMachines - currentHealthy <= it (v1.12.10 machinehealthcheck_controller.go l.654-717),
    # and a Machine with no Node is not healthy: with no infrastructure, every target counts.
    bound = ((mhc["spec"].get("remediation") or {}).get("triggerIf") or {}).get("unhealthyLessThanOrEqualTo")
    ra = conds(o).get("RemediationAllowed")
    expected, healthy = st.get("expectedMachines") or 0, st.get("currentHealthy") or 0
    if isinstance(bound, int):
        allowed = expected - healthy <= bound
        if ra is None or (ra.get("status") == "True") != allowed:
            bad.append(f"RemediationAllowed {cond_text(ra)}, expected {allowed}: {expected} targets, {healthy} healthy, "
                       f"bound {bound}")
        m = re.search(r"maxUnhealthy: (\d+)", (ra or {}).get("message", ""))
        if m and int(m.group(1)) != bound:
            bad.append(f"core read the bound as {m.group(1)}, fleetc wrote {bound}")
        facts.append(f"RemediationAllowed {ra.get('status') if ra else None} ({expected} targets, {healthy} with a "
                     f"healthy Node, bound {bound}: {'within' if allowed else 'above: the short-circuit holds remediation while no Machine has started'})")
    else:
        facts.append(f"remediation bound {bound!r} (not an absolute count), RemediationAllowed {cond_text(ra)}")
    if not bad:
        facts.insert(0, f"targets {got} (expectedMachines {st.get('expectedMachines')})")
    line2(env, f"{where}: MachineHealthCheck {name}", facts, bad,
          "core adopts it into the Cluster and targets exactly its pool's Machines (v1.12.10 internal/controllers/"
          "machinehealthcheck/machinehealthcheck_controller.go l.193-229)")


# Conditions that say something is wrong rather than waiting: a reason or message of a missing,
# invalid or failed thing, or a v1beta1 condition of severity Error ...
BAD_REASON = re.compile(r"InternalError|InvalidConditionReported|DoesNotExist|NotFound|Failed|Invalid")
BAD_MESSAGE = re.compile(r"does not exist|do not exist|not found|failed to|invalid", re.I)
# ... unless it says what the absence of infrastructure causes: no workload API server to probe
# (core v1.12.10 cluster_controller_status.go setRemoteConnectionProbeCondition), no Node before
# the control plane is initialized (machine_controller_status.go), no machine address for
# CACPPT's Talos and etcd checks (CACPPT v0.5.13 controllers/configs.go l.82-91), an infrastructure
# object not provisioned.
INFRA_WAIT = re.compile(r"Remote connection not established|Waiting for Cluster control plane to be initialized|"
                        r"no addresses were found for node|doesn't have an any InternalIP|"
                        r"status\.initialization\.provisioned is false")
# A MachineSet held by the ControlPlaneIsStable preflight check while the control plane is
# provisioning: core marks it with severity Error (v1.12.10 internal/controllers/machineset/
# machineset_controller.go l.838) although it is a wait, and the MachineDeployment's mirror of it
# (MachineSetReady) lags behind the MachineSet's own update.
PREFLIGHT_WAIT = re.compile(r'^[A-Za-z]+ [^ ]+ is provisioning \("ControlPlaneIsStable" preflight check failed\)$')


def judge_conditions(env, s, where):
    seen, waits, bad = 0, {}, []
    for kind in ("Cluster", "TalosControlPlane", "MachineDeployment", "MachineSet", "Machine", "TalosConfig",
                 "MachineHealthCheck"):
        for name, o in sorted(s[kind].items()):
            st = o.get("status") or {}
            every = (st.get("conditions") or []) + \
                (((st.get("deprecated") or {}).get("v1beta1") or {}).get("conditions") or [])
            for c in every:
                seen += 1
                if not (c.get("severity") == "Error" or BAD_REASON.search(c.get("reason", ""))
                        or BAD_MESSAGE.search(c.get("message", ""))):
                    continue
                if (c.get("severity") != "Error" and INFRA_WAIT.search(c.get("message", ""))) \
                        or PREFLIGHT_WAIT.search(c.get("message", "")):
                    waits[f"{c['type']} {c.get('reason')}"] = waits.get(f"{c['type']} {c.get('reason')}", 0) + 1
                    continue
                bad.append(f"{kind} {name}: {c['type']} {cond_text(c)}")
    if bad:
        env.line("FAIL", f"{where}: conditions", "; ".join(bad[:12]) + (f"; … {len(bad) - 12} more" if len(bad) > 12 else ""))
    else:
        env.line("ok", f"{where}: conditions", f"{seen} conditions on the Cluster API objects, none an error (severity "
                 "Error, or a reason/message of a missing, invalid or failed thing) of fleetc's making; the failures "
                 "reported are the missing infrastructure's (no workload API, no Node, no machine address): "
                 + ", ".join(f"{k} ×{v}" for k, v in sorted(waits.items())))


# Error-level log lines that are not of fleetc's making, each with why: what the absence of
# machines, of a workload cluster and of the Talos API causes (nothing here routes to the
# cluster's addresses), a Secret another controller writes a moment later (accepted only when it
# exists at the end), and optimistic-concurrency conflicts the controllers retry.
KLOG_ERROR = re.compile(r"^E\d{4} ")
LOG_CAUSES = [
    (re.compile(r"no addresses were found for node|doesn't have an any InternalIP|some CP machines do not have a noderef"),
     "no machine address or Node (no ProxmoxMachine runs)", None),
    (re.compile(r"dial tcp|network is unreachable|i/o timeout|connection refused|no route to host|context deadline exceeded"),
     "the workload cluster's or Talos API is unreachable (it does not exist)", None),
    (re.compile(r'[Ss]ecrets? \\?"([a-z0-9.-]+-(?:talosconfig|kubeconfig|ca))\\?" not found'),
     "a Secret CABPT or CACPPT derives a moment later, present at the end", "secret"),
    (re.compile(r"the object has been modified; please apply your changes"), "an update conflict, retried", None),
    # Argo CD applies one sync wave's objects one after another, kinds it does not know in name
    # order (MachineDeployment before ProxmoxMachineTemplate and TalosConfigTemplate), so core
    # may reconcile a MachineDeployment a moment before its templates exist
    # (v1.12.10 internal/controllers/machinedeployment/machinedeployment_rollout_planner.go l.147): a retry,
    # accepted only when every MachineDeployment's templates exist at the end.
    (re.compile(r"cannot create a MachineSet when templates do not exist"),
     "a MachineDeployment reconciled a moment before its templates, present at the end", "templates"),
]


def md_templates_exist(s):
    """Whether every MachineDeployment's bootstrap and infrastructure templates exist."""
    for md in s["MachineDeployment"].values():
        spec = ((md.get("spec") or {}).get("template") or {}).get("spec") or {}
        for ref, kind_default in (((spec.get("bootstrap") or {}).get("configRef") or {}, "TalosConfigTemplate"),
                                  (spec.get("infrastructureRef") or {}, "ProxmoxMachineTemplate")):
            kind = ref.get("kind", kind_default)
            if ref.get("name") not in (s.get(kind) or {}):
                return False
    return True


def log_errors(ln):
    """The errors one klog line reports: the parts of an aggregated `err="[a, b]"`, else the line."""
    m = re.search(r' err="((?:[^"\\]|\\.)*)"', ln)
    if not m:
        return [ln]
    err = m.group(1)
    if err.startswith("[") and err.endswith("]"):
        return [p for p in re.split(r", (?=[a-z])", err[1:-1]) if p]
    return [err]


def log_cause(text, s):
    for rx, why, extra in LOG_CAUSES:
        m = rx.search(text)
        if m and (extra != "secret" or m.group(1) in s["Secret"]) and (extra != "templates" or md_templates_exist(s)):
            return why
    return None


def judge_logs(env, s, where, ns, objs):
    """Error-level lines (klog's `E` lines) of the three managers that name the cluster's
    namespace or one of fleetc's objects: each must have one of LOG_CAUSES (all of them when one
    line carries several errors), else it is of fleetc's making."""
    names = {doc["metadata"]["name"] for _, doc in objs}
    total, causes, bad = 0, {}, []
    for key in MANAGERS:
        f = env.tmp / "logs" / f"capi-{key}.log"
        for ln in f.read_text(errors="replace").splitlines():
            if not KLOG_ERROR.match(ln):
                continue
            if f'"{ns}"' not in ln and f"{ns}/" not in ln and f"={ns}" not in ln and not any(n in ln for n in names):
                continue
            total += 1
            whys = [log_cause(part, s) for part in log_errors(ln)]
            if all(whys):
                for why in set(whys):
                    causes[why] = causes.get(why, 0) + 1
            else:
                bad.append(f"{MANAGERS[key]['name']}: {short(ln, 400)}")
    if bad:
        env.line("FAIL", f"{where}: controller logs", f"{len(bad)} error line(s) naming the cluster's objects for a reason "
                 "other than the missing infrastructure: " + " | ".join(bad[:6]))
    else:
        env.line("ok", f"{where}: controller logs", f"{total} error-level line(s) of core, CABPT and CACPPT name the "
                 "cluster's objects, none of fleetc's making" + (": " + "; ".join(f"{v} {k}" for k, v in causes.items()) if causes else ""))


# ---------------------------------------------------------------------------------------------
# Break cases: edits of golden/capi-lab's out/ that only a controller refuses

def _edit(path, fn):
    docs = list(yaml.safe_load_all(path.read_text()))
    for d in docs:
        if d:
            fn(d)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))


def _md_missing_bootstrap_template(out):
    def fn(d):
        if d.get("kind") == "MachineDeployment":
            d["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"] = "edge-1-workers-0000000000"
    _edit(out / "capi/mgmt/edge-1/pool-workers.yaml", fn)


def _tcp_wrong_infrastructure_template(out):
    def fn(d):
        if d.get("kind") == "TalosControlPlane":
            d["spec"]["infrastructureTemplate"]["name"] = "edge-1-cp-0000000000"
    _edit(out / "capi/mgmt/edge-1/control-plane.yaml", fn)


def _md_version_ahead_of_control_plane(out):
    def fn(d):
        if d.get("kind") == "MachineDeployment":
            d["spec"]["template"]["spec"]["version"] = "v1.37.0"
    _edit(out / "capi/mgmt/edge-1/pool-workers.yaml", fn)


def _sealed_identity_misnamed(out):
    p = out / "capi/mgmt/sealed.yaml"
    p.write_text(p.read_text().replace("name: edge-1-talos", "name: edge-1-talos-secrets"))


def break_cases():
    """(name, fn(out_copy), substring a FAIL line must contain), each on golden/capi-lab."""
    return [
        ("MachineDeployment's bootstrap configRef names no TalosConfigTemplate",
         _md_missing_bootstrap_template, "TalosConfigTemplate edge-1-workers-0000000000 does not exist"),
        ("TalosControlPlane's infrastructureTemplate names no ProxmoxMachineTemplate",
         _tcp_wrong_infrastructure_template, '"edge-1-cp-0000000000" not found'),
        ("a pool's Kubernetes version ahead of the control plane's",
         _md_version_ahead_of_control_plane, "kubernetes version skew policy"),
        ("sealed.yaml names another Secret than the one CABPT reads",
         _sealed_identity_misnamed, "CABPT reads edge-1-talos"),
    ]
