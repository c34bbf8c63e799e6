#!/usr/bin/env python3
"""The controllers family: the real Argo CD and Cluster API controllers reconcile what fleetc
emits, against the harness's own etcd and kube-apiserver (the kube oracle's binary), each tree
in a cluster of its own, inside a network namespace whose only interface is loopback (`check`
enters it: nothing here can reach a network, and every server binds 127.0.0.1).

Usage (from `check`): check.py [--jobs N] --bin NAME=PATH... OUT_DIR...

Each OUT_DIR with Argo CD or Cluster API objects is judged by a child of this script in a
network and mount namespace of its own (`unshare`: loopback only, a private /etc/hosts), N at a
time (FLEETC_CONTROLLERS_JOBS, default 2), so servers can keep their own fixed ports; its lines
are printed whole, in the order of the trees. In each: a fresh API server; the Cluster API
providers' CRDs, webhooks and controllers when the tree has out/capi (capi.py, `prepare`); Argo
CD's controllers syncing every GitOps root of the tree from a loopback git server (argocd.py);
then the Cluster API objects' reconcile (capi.py, `judge`). One line per check: `ok
controllers: …`, `FAIL controllers: …: why`, `skip controllers: …: why`.
"""

import argparse
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# The kube oracle's API server, CRD table and tree reading, shared (oracles/kube/check.py).
kube = _load("kube_oracle", HERE.parent / "kube" / "check.py")

FAILED = [0]


def line(status, what, why=None):
    if status == "FAIL":
        FAILED[0] += 1
    print(f"{status} controllers: {what}" + (f": {why}" if why else ""), flush=True)


def rel(out):
    out = Path(out).resolve()
    try:
        return str(out.relative_to(REPO))
    except ValueError:
        return str(out)


class Env:
    """One tree's scratch cluster and the processes started for it."""

    def __init__(self, bins, out, tmp):
        self.bins = bins          # name -> binary: kube, argocd, capi, cabpt, cacppt
        self.out = Path(out).resolve()
        self.fleet_dir = self.out.parent
        self.label = rel(self.out)
        self.tmp = Path(tmp)
        self.procs = {}
        self.cluster = kube.Cluster(bins["kube"], self.tmp / "cluster")
        (self.tmp / "cluster").mkdir()
        (self.tmp / "logs").mkdir()

    def line(self, status, what, why=None):
        line(status, f"{self.label}: {what}", why)

    def kubectl(self, *args, stdin=None):
        return self.cluster.kubectl(*args, stdin=stdin)

    def spawn(self, name, argv, env=None, cwd=None):
        """Start a process whose output goes to logs/NAME.log; stopped with the tree."""
        log = open(self.tmp / "logs" / f"{name}.log", "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                             start_new_session=True)
        self.procs[name] = p
        return p

    def log_tail(self, name, n=2000):
        f = self.tmp / "logs" / f"{name}.log"
        return f.read_text(errors="replace")[-n:] if f.exists() else ""

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
        for p in self.procs.values():
            p.wait()
        self.cluster.stop()


    def hosts(self, names):
        """Point NAMES at 127.0.0.1 for every process of this tree (its own mount namespace: a
        private copy of /etc/hosts bind-mounted over it)."""
        if os.environ.get("FLEETC_CONTROLLERS_NS") != "1":
            raise RuntimeError("not inside the tree's own namespaces (run oracles/controllers/check)")
        f = self.tmp / "hosts"
        f.write_text("127.0.0.1 localhost " + " ".join(sorted(set(names))) + "\n::1 localhost\n")
        subprocess.run(["mount", "--bind", str(f), "/etc/hosts"], check=True)


def guarded(env, what, fn, *args):
    """fn(*args); an exception is a defect of the family's own code, not a verdict on the tree:
    a FAIL line that says so (with the traceback), and the tree's other parts still run."""
    try:
        return fn(*args)
    except Exception as e:
        import traceback
        env.line("FAIL", f"the family's own code ({what})", f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
        return None


def judged(out):
    """Whether a tree has anything for the controllers: Argo CD roots or Cluster API clusters."""
    return (out / "argocd").is_dir() or any((out / "capi").glob("*/*/cluster.yaml"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", action="append", default=[], help="NAME=PATH")
    ap.add_argument("--one", action="store_true", help="judge one tree, in this process (the child)")
    ap.add_argument("outs", nargs="+")
    args = ap.parse_args()
    if not args.one:
        return parent(args)
    bins = dict(b.split("=", 1) for b in args.bin)
    argocd = _load("controllers_argocd", HERE / "argocd.py")
    capi = _load("controllers_capi", HERE / "capi.py")
    for o in args.outs:
        out = Path(o).resolve()
        has_argo = (out / "argocd").is_dir()
        has_capi = any((out / "capi").glob("*/*/cluster.yaml"))
        tmp = tempfile.mkdtemp(prefix="fleetc-controllers-")
        env = Env(bins, out, tmp)
        start = time.time()
        print(f"== controllers {env.label}", flush=True)
        try:
            took = env.cluster.start()
            env.line("ok", f"etcd and kube-apiserver ready on 127.0.0.1:{env.cluster.port} in {took:.0f} s")
            handle = guarded(env, "capi.prepare", capi.prepare, env) if has_capi else None
            delivered = (guarded(env, "argocd.judge", argocd.judge, env) or set()) if has_argo else set()
            if handle is not None:
                guarded(env, "capi.judge", capi.judge, env, handle, delivered)
        finally:
            env.stop()
            print(f"   controllers {env.label}: {time.time() - start:.0f} s", flush=True)
            if os.environ.get("FLEETC_CONTROLLERS_KEEP"):
                print(f"controllers check: kept {tmp}", file=sys.stderr)
            else:
                shutil.rmtree(tmp, ignore_errors=True)


# What the family reads of a golden fleet directory: out/argocd and out/capi, the vendored
# stand-ins (argocd.py `missing_kinds`), fleet.kdl's Argo CD pin (argocd.py `judge`) and every
# top-level entry an Application's source names (its `path`, its Helm `valueFiles`: argocd.py
# `git` commits exactly those). Two golden trees alike in all of it are judged once.
PIN = re.compile(r'^\s*argocd\s+version="([^"]+)"', re.M)


def _source_paths(v, found):
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "path" and isinstance(x, str):
                found.add(x)
            elif k == "valueFiles" and isinstance(x, list):
                found.update(str(f) for f in x)
            else:
                _source_paths(x, found)
    elif isinstance(v, list):
        for x in v:
            _source_paths(x, found)


def inputs_key(out):
    """The digest of what the family reads of a golden tree (None for a tree outside golden/,
    which is always judged itself)."""
    fleet = out.parent
    if fleet.parent.name != "golden":
        return None
    import yaml
    files = sorted(f for d in ("argocd", "capi") for f in (out / d).rglob("*") if f.is_file())
    named = set()
    for f in files:
        if f.suffix in (".yaml", ".yml") and f.is_relative_to(out / "argocd"):
            try:
                for doc in yaml.safe_load_all(f.read_text()):
                    _source_paths(doc, named)
            except yaml.YAMLError:
                return None  # judged itself: what it reads cannot be told
    parts = {c for p in named for c in p.split("/") if c and not c.startswith("$")}
    tops = sorted(e for e in fleet.iterdir() if e.name in parts | {"vendor"} and e.name != "out")
    files += sorted(f for e in tops for f in ([e] if e.is_file() else e.rglob("*")) if f.is_file())
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(fleet).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    kdl = fleet / "fleet.kdl"
    m = PIN.search(kdl.read_text()) if kdl.is_file() else None
    h.update(b"argocd pin: " + (m.group(1).encode() if m else b"none"))
    return h.hexdigest()


def parent(args):
    """Each tree in a child of its own namespaces, FLEETC_CONTROLLERS_JOBS at a time; the
    children's lines printed whole, in the trees' order. A golden tree whose inputs are byte for
    byte an earlier tree's (`inputs_key`) is not judged again: its line gives the earlier tree's
    verdict."""
    from concurrent.futures import ThreadPoolExecutor
    outs = [Path(o).resolve() for o in args.outs]
    outs = [o for o in outs if judged(o)]
    first_of, same_as = {}, {}
    for o in outs:
        k = inputs_key(o)
        if k is not None and k in first_of:
            same_as[o] = first_of[k]
        elif k is not None:
            first_of[k] = o
    binargs = [a for b in args.bin for a in ("--bin", b)]
    # The children have no network: what they read from the Go module proxy is fetched here.
    capi = _load("controllers_capi", HERE / "capi.py")
    capi.prefetch(outs)

    def one(out):
        argv = ["unshare", "--net", "--mount", "--propagation", "private", "--",
                "env", "FLEETC_CONTROLLERS_NS=1", "bash", "-c", 'ip link set lo up && exec python3 "$@"', "_",
                str(HERE / "check.py"), "--one", *binargs, str(out)]
        r = subprocess.run(argv, capture_output=True, text=True)
        text = r.stdout
        if r.returncode != 0:
            text += f"FAIL controllers: {rel(out)}: the tree's run exited {r.returncode}: {r.stderr.strip()[-1500:]}\n"
        elif r.stderr.strip():
            sys.stderr.write(r.stderr)
        return text

    start = time.time()
    jobs = int(os.environ.get("FLEETC_CONTROLLERS_JOBS", "2"))
    own = [o for o in outs if o not in same_as]
    texts = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for o, text in zip(own, pool.map(one, own)):
            texts[o] = text
    for o in outs:
        if o in texts:
            sys.stdout.write(texts[o])
        else:
            f = same_as[o]
            lines = [l for l in texts[f].splitlines() if l.startswith(("ok ", "FAIL ", "skip "))]
            failed = sum(1 for l in lines if l.startswith("FAIL "))
            skipped = sum(1 for l in lines if l.startswith("skip "))
            line("FAIL" if failed else "ok", f"{rel(o)}: judged as {rel(f)}, whose inputs it has byte for byte "
                 f"(out/argocd, out/capi, vendor/, the apps' sources, the Argo CD pin)",
                 f"{len(lines)} lines there: {failed} FAIL, {skipped} skip")
        sys.stdout.flush()
    print(f"   controllers: {len(outs)} tree(s), {len(own)} judged, in {time.time() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
