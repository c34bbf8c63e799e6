"""oracles/talosctl/check OUT_DIR: `fleetc talos render` of every cluster of the fleet beside
OUT_DIR, run against fleetc's harness talosctl (oracles/talosctl: talosctl's `gen config` glue
over Talos's own generator, pkg/machinery of the node's minor), and every rendered file judged.

A scratch copy of the fleet gets a throwaway age identity per recipient (each replaces one of the
fleet's),
one secrets bundle per cluster from the stand-in's `gen secrets`, sealed with `fleetc secrets
import`. Then, per cluster:
- `fleetc talos render ENV/CLUSTER --out DIR --identity ID` exits 0, DIR is mode 0700 and every
  file in it 0600, one `<hostname>.yaml` per node document of out/ and a talosconfig;
- each node's file is byte for byte what ONE stand-in `gen config` call for that node alone
  writes (the node's own document among the patches, in node_config's order: its group's
  documents, the node's, then the user patches): the grouped path (`compose`) is exact;
- each node's config holds the bundle's CA and the cluster's name and endpoint, and the node's
  machinery (the talos oracle of its installer's minor, `--phase validate`) loads it strictly
  and validates it in its platform's mode;
- the talosconfig names the cluster as its context, with the bundle's CA and no endpoints
  (talosctl gen config never sets any: generate/talosconfig.go, WithEndpointList).
A cluster whose nodes run a minor with no stand-in gets a `skip` line with the reason.
Prints `ok talosctl: …`, `FAIL talosctl: …`, `skip talosctl: …`; exit 0 when it ran.
"""

import base64
import glob
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # nothing written into the repository
try:
    import yaml
    import agekey  # needs the `cryptography` package
except ImportError as e:
    print(f"skip talosctl: {sys.argv[1] if len(sys.argv) > 1 else '.'}: python3 lacks a module the check needs: {e}")
    sys.exit(0)

FLEETC = os.environ.get("FLEETC_BIN", os.path.join(REPO, "target/release/fleetc"))
lines = []


def say(kind, what, msg):
    line = f"{kind} talosctl: {what}: {msg}"
    lines.append(line)
    print(line, flush=True)


def run(args, cwd, path_dir=None, check=True):
    # A cleared environment: fleetc refuses steering variables (helper-common, apply).
    env = {"PATH": (path_dir + ":" if path_dir else "") + os.environ["PATH"], "HOME": os.environ["HOME"]}
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"`{' '.join(args[:4])} …` exited {p.returncode}: {last(p.stderr)}")
    return p


def last(text):
    t = [l for l in text.strip().splitlines() if l.strip()]
    return t[-1] if t else "(no output)"


standins = {}


def standin(minor):
    """The stand-in of a minor, in a directory of its own as `talosctl`; None when none builds."""
    if minor not in standins:
        p = subprocess.run([os.path.join(HERE, "build"), minor], capture_output=True, text=True)
        if p.returncode != 0:
            standins[minor] = None
        else:
            d = tempfile.mkdtemp(prefix=f"talosctl-{minor}-", dir=SCRATCH)
            real = p.stdout.strip()
            if os.environ.get("FLEETC_TALOSCTL_SELFTEST") == "broken-group":
                # selftest: a talosctl whose grouped output differs from its per-node one
                # (`debug: true`), as a wrong `compose` would; check must say FAIL.
                shim = os.path.join(d, "talosctl")
                with open(shim, "w") as f:
                    f.write('#!/usr/bin/env bash\n"%s" "$@" || exit $?\nfor a; do case "$a" in */group-*.yaml) '
                            'sed -i "s/^debug: false/debug: true/" "$a";; esac; done\n' % real)
                os.chmod(shim, 0o755)
            else:
                os.symlink(real, os.path.join(d, "talosctl"))
            standins[minor] = d
    return standins[minor]


def oracle(minor):
    """The talos oracle binary of a minor: the one oracles/talos/check builds (the same
    `oracle_build` call of oracles/lib/build.sh, so the same cached binary, never a second link)."""
    d = os.path.join(REPO, "oracles/talos", minor)
    gomod = os.path.join(d, "go.mod")
    if not os.path.exists(gomod):
        return None
    ver = next(l.split()[1] for l in open(gomod) if l.strip().startswith("github.com/siderolabs/talos/pkg/machinery "))
    env = dict(os.environ, GOTOOLCHAIN="local")
    p = subprocess.run(["bash", "-c", 'source "$1/oracles/lib/build.sh" && oracle_build talos-oracle "$2" "$3" . "-s -w"',
                        "_", REPO, ver, d], env=env, capture_output=True, text=True, check=True)
    return p.stdout.strip().splitlines()[-1]


def minor_of(tag):
    m = re.match(r"v?(\d+)\.(\d+)", tag)
    return f"v{m.group(1)}.{m.group(2)}" if m else ""


def platform_of(image):
    # The talos oracle's installerPlatform: factory.talos.dev/<platform>-installer/…
    m = re.search(r"/([a-z0-9-]+)-installer(-secureboot)?/", image)
    return m.group(1) if m else ""


def docs(path):
    return [d for d in yaml.safe_load_all(open(path)) if d is not None]


def copy_fleet(src, dst):
    if os.path.realpath(src) == REPO:
        # The reference fleet: what it reads (as oracles/renders/run copies it).
        shutil.copy(os.path.join(src, "fleet.kdl"), dst)
        for d in ("vendor", "values", "apps", "patches"):
            if os.path.isdir(os.path.join(src, d)):
                shutil.copytree(os.path.join(src, d), os.path.join(dst, d), symlinks=True)
    else:
        for e in os.listdir(src):
            if e in ("out", "secrets"):
                continue
            s = os.path.join(src, e)
            (shutil.copytree(s, os.path.join(dst, e), symlinks=True) if os.path.isdir(s) else shutil.copy(s, dst))


def block_end(ls, i):
    """The index of the line closing the block that line i opens."""
    depth = 0
    for j in range(i, len(ls)):
        depth += ls[j].count("{") - ls[j].count("}")
        if depth == 0:
            return j
    return len(ls) - 1


def sealable(text, recipient):
    """The fleet with every environment opened by the throwaway key (`recipients`) and every
    cluster sealing a Talos secrets bundle (`sealed "talos-secrets"`), which a golden written
    for other checks may lack (docs/apply.md, "Sealed inputs")."""
    ls = text.split("\n")
    # A cluster of an environment with `from=` that its base environment also has inherits that
    # cluster's settings, its `sealed` list among them: a `sealed` line added to it would replace
    # the inherited list (and drop, say, `scaleway-api-key`), so such a cluster gets the input
    # through its base's block instead.
    clusters, bases, env = {}, {}, None
    for line in ls:
        m = re.match(r'\s*environment "([^"]+)"(.*)\{\s*$', line)
        if m:
            env = m.group(1)
            f = re.search(r'from="([^"]+)"', m.group(2))
            bases[env] = f.group(1) if f else None
            clusters.setdefault(env, set())
        m = re.match(r'\s*cluster "([^"]+)".*\{\s*$', line)
        if m and env is not None:
            clusters[env].add(m.group(1))
    out = []
    env = None
    i = 0
    while i < len(ls):
        line = ls[i]
        out.append(line)
        m = re.match(r"(\s*)(environment|cluster) \"([^\"]+)\".*\{\s*$", line)
        if m:
            end = block_end(ls, i)
            body = ls[i + 1:end]
            ind = m.group(1) + "    "
            if m.group(2) == "environment":
                env = m.group(3)
                if not any(l.strip().startswith("recipients ") for l in body):
                    out.append(f'{ind}recipients "{recipient}"')
            if m.group(2) == "cluster" and not any("talos-secrets" in l for l in body):
                k = next((n for n, l in enumerate(body) if l.strip().startswith("sealed ")), None)
                inherited = bases.get(env) is not None and m.group(3) in clusters.get(bases[env], set())
                if k is None and not inherited:
                    out.append(f'{ind}sealed "talos-secrets"')
                elif k is not None:
                    ls[i + 1 + k] += ' "talos-secrets"'
        i += 1
    return "\n".join(out)


def check_cluster(tree, fleet, target, identity, handoffs):
    what = f"{tree} {target}"
    env, cluster = target.split("/")
    dest = os.path.join(SCRATCH, "rendered", env, cluster)
    plan = run([FLEETC, "talos", "render", target, "--out", dest, "--plan"], fleet)
    calls = [shlex.split(l[2:]) for l in plan.stdout.splitlines() + plan.stderr.splitlines() if l.startswith("$ talosctl gen config ")]
    images = sorted({c[c.index("--install-image") + 1] for c in calls if "--install-image" in c})
    minors = sorted({minor_of(i.rsplit(":", 1)[-1]) for i in images})
    if len(minors) != 1:
        say("FAIL", what, f"the plan's installers name {len(minors)} Talos minors ({', '.join(images)})")
        return
    minor = minors[0]
    tools = standin(minor)
    if tools is None:
        have = ", ".join(sorted(os.path.basename(p) for p in glob.glob(os.path.join(HERE, "v1.*"))))
        say("skip", what, f"its nodes run Talos {minor} and talosctl is the node's minor (versions/talos.kdl); "
            f"the harness builds talosctl stand-ins for {have} only")
        return
    bundle = os.path.join(SCRATCH, f"bundle-{env}-{cluster}.yaml")
    run(["talosctl", "gen", "secrets", "-o", bundle], fleet, tools)
    run([FLEETC, "secrets", "import", target, "talos-secrets", bundle, "--force", "--quiet"], fleet)
    p = run([FLEETC, "talos", "render", target, "--out", dest, "--identity", identity], fleet, tools, check=False)
    if p.returncode != 0:
        say("FAIL", what, f"`fleetc talos render` exited {p.returncode}: {last(p.stderr + p.stdout)}")
        return
    real = [shlex.split(l[2:]) for l in (p.stdout + p.stderr).splitlines() if l.startswith("$ talosctl gen config ")]
    grouped = sum(1 for c in real if os.path.basename(c[c.index("--output") + 1]).startswith("group-"))
    sb = yaml.safe_load(open(bundle))
    os_ca = sb["certs"]["os"]["crt"]
    # Modes.
    bad = [f for f in os.listdir(dest) if stat.S_IMODE(os.stat(os.path.join(dest, f)).st_mode) != 0o600]
    dmode = stat.S_IMODE(os.stat(dest).st_mode)
    if dmode != 0o700 or bad:
        say("FAIL", what, f"the directory is mode {dmode:o} (want 700); not mode 600: {', '.join(sorted(bad)) or 'none'}")
    else:
        say("ok", what, f"`fleetc talos render` through talosctl stand-in {minor} ({len(real)} gen config calls, "
            f"{grouped} grouped): directory 0700, every file 0600")
    nodes_dir = os.path.join(fleet, "out/talos", env, cluster, "nodes")
    # The nodes: each node document of out/, and each node the plan renders on its own.
    hosts = {f[:-5] for f in os.listdir(nodes_dir) if f.endswith(".yaml")} if os.path.isdir(nodes_dir) else set()
    hosts |= {os.path.basename(o)[:-5] for c in calls for o in [c[c.index("--output") + 1]]
              if os.path.dirname(o) == dest and o.endswith(".yaml")}
    hosts = sorted(hosts)
    got = sorted(f[:-5] for f in os.listdir(dest) if f.endswith(".yaml"))
    if hosts != got or not os.path.exists(os.path.join(dest, "talosconfig")):
        say("FAIL", what, f"rendered {got} and talosconfig={os.path.exists(os.path.join(dest, 'talosconfig'))}; out/ has nodes {hosts}")
    cfg_calls = [c for c in calls if "talosconfig" not in c]
    endpoint = calls[0][4]
    for h in hosts:
        hw = f"{what}/{h}.yaml"
        f = os.path.join(dest, f"{h}.yaml")
        if not os.path.exists(f):
            continue
        data = open(f, "rb").read()
        ds = docs(f)
        v1 = next(d for d in ds if d.get("version") == "v1alpha1")
        mtype, image = v1["machine"]["type"], v1["machine"]["install"]["image"]
        facts = []
        if v1["machine"]["ca"]["crt"] != os_ca:
            facts.append("machine.ca.crt is not the bundle's certs.os.crt")
        if v1["cluster"]["clusterName"] != cluster:
            facts.append(f"cluster.clusterName is {v1['cluster']['clusterName']!r}")
        if v1["cluster"]["controlPlane"]["endpoint"] != endpoint:
            facts.append(f"cluster.controlPlane.endpoint is {v1['cluster']['controlPlane']['endpoint']!r}, not {endpoint!r}")
        # The node alone: each plan call of its type and installer, the node's document
        # inserted before the first user patch (node_config's order), compared byte for byte.
        same = None
        # The plan's own call for the node when it renders the node alone, else its groups'.
        mine = [c for c in cfg_calls if c[c.index("--output") + 1] == f]
        for k, c in enumerate(mine or [c for c in cfg_calls if os.path.basename(c[c.index("--output") + 1]).startswith("group-")]):
            t = c[c.index("--output-types") + 1]
            if {"controlplane": "controlplane", "worker": "worker"}.get(t) != mtype or c[c.index("--install-image") + 1] != image:
                continue
            out_rel = [os.path.join(fleet, "out", os.path.basename(a[1:])[len("patch-"):-len(".yaml")].replace("__", "/") + ".yaml")
                       for a in c if a.startswith("@")]
            node_doc = os.path.join(nodes_dir, f"{h}.yaml")
            if node_doc in out_rel or not os.path.exists(node_doc):
                ordered = out_rel
            else:
                i = next((j for j, r in enumerate(out_rel) if "/patches/" in r), len(out_rel))
                ordered = out_rel[:i] + [node_doc] + out_rel[i:]
            one = os.path.join(SCRATCH, "alone.yaml")
            args = ["talosctl"] + c[1:c.index("--with-secrets") + 1] + [bundle] + c[c.index("--with-secrets") + 2:]
            flags = ("--config-patch", "--config-patch-control-plane", "--config-patch-worker")
            flag = next((a for a in c if a in flags), "--config-patch")
            args = [a for a in args if not a.startswith("@") and a not in flags]
            args = args[:args.index("--output")]
            for r in ordered:
                args += [flag, "@" + r]
            if run(args + ["--output", one, "--force"], fleet, tools, check=False).returncode != 0:
                continue  # another group's documents do not merge with this node's
            if open(one, "rb").read() == data:
                same = k
                break
        if same is None:
            facts.append("no single `talosctl gen config` call for the node alone writes these bytes")
        if facts:
            say("FAIL", hw, "; ".join(facts))
        else:
            say("ok", hw, f"byte for byte one talosctl stand-in {minor} gen config call for the node alone "
                f"({len(ordered)} patches); the bundle's CA, cluster name and endpoint")
        plat = platform_of(image)
        handoffs.append((minor_of(image.rsplit(":", 1)[-1]), {
            "What": f"talosctl {hw}", "Node": image.rsplit(":", 1)[-1], "Platform": plat,
            "Mode": "metal" if plat == "metal" else "cloud",
            "Generated": f"rendered by `fleetc talos render` through the talosctl stand-in {minor}",
            "Config": base64.b64encode(data).decode()}))
    tc = yaml.safe_load(open(os.path.join(dest, "talosconfig")))
    ctx = (tc.get("contexts") or {}).get(cluster) or {}
    facts = []
    if tc.get("context") != cluster:
        facts.append(f"context is {tc.get('context')!r}")
    if ctx.get("ca") != os_ca:
        facts.append("its CA is not the bundle's certs.os.crt")
    if ctx.get("endpoints") != []:
        facts.append(f"endpoints {ctx.get('endpoints')!r}, talosctl gen config writes none")
    say("FAIL" if facts else "ok", f"{what}/talosconfig", "; ".join(facts) or
        "context is the cluster, the bundle's CA, no endpoints (as talosctl gen config writes it)")


def main():
    global SCRATCH
    out = os.path.abspath(sys.argv[1])
    tree = os.path.relpath(out, REPO)
    fleet_src = os.path.dirname(out)
    if not os.path.exists(os.path.join(fleet_src, "fleet.kdl")):
        say("skip", tree, "no fleet.kdl beside it: nothing to render")
        return
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    SCRATCH = tempfile.mkdtemp(prefix="fleetc-talosctl-", dir=base)
    os.chmod(SCRATCH, 0o700)
    try:
        fleet = os.path.join(SCRATCH, "fleet")
        os.mkdir(fleet)
        copy_fleet(fleet_src, fleet)
        # Each recipient of the fleet gets its own throwaway key, so an environment sealed to
        # several recipients keeps several (one key for all would repeat a recipient, which
        # fleetc refuses); the identity file holds every throwaway identity.
        keys = {}

        def throwaway(m):
            return keys.setdefault(m.group(0), agekey.generate())[1]

        kdl = os.path.join(fleet, "fleet.kdl")
        text = re.sub(r"age1[0-9a-z]{58}", throwaway, open(kdl).read())
        first = next(iter(keys.values()), None) or keys.setdefault("", agekey.generate())
        id_file = os.path.join(SCRATCH, "identity.txt")
        fd = os.open(id_file, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, "".join(i + "\n" for i, _ in keys.values()).encode())
        os.close(fd)
        open(kdl, "w").write(sealable(text, first[1]))
        p = run([FLEETC, "build", "--quiet"], fleet, check=False)
        if p.returncode != 0:
            say("skip", tree, f"the fleet does not build (a failing golden): {last(p.stderr)}")
            return
        targets = run([FLEETC, "__targets", "clusters"], fleet).stdout.split()
        handoffs = []
        for t in targets:
            try:
                check_cluster(tree, fleet, t, id_file, handoffs)
            except (RuntimeError, KeyError, ValueError, StopIteration) as e:
                say("FAIL", f"{tree} {t}", f"{type(e).__name__}: {e}")
        # The node's side: its machinery loads each config strictly and validates it.
        for minor in sorted({m for m, _ in handoffs}):
            b = oracle(minor)
            if b is None:
                for m, h in handoffs:
                    if m == minor:
                        say("skip", h["What"][len("talosctl "):], f"no talos oracle for Talos {minor}")
                continue
            hd = tempfile.mkdtemp(dir=SCRATCH)
            for i, (m, h) in enumerate(handoffs):
                if m == minor:
                    json.dump(h, open(os.path.join(hd, f"{i:04d}.json"), "w"))
            p = subprocess.run([b, "--phase", "validate", "--handoff", hd, "--versions",
                                os.path.join(REPO, "versions/talos.kdl"), SCRATCH], capture_output=True, text=True)
            if p.returncode != 0:
                say("FAIL", tree, f"the {minor} talos oracle could not run: {last(p.stderr)}")
            for line in p.stdout.splitlines():
                lines.append(line)
                print(line, flush=True)
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)


if __name__ == "__main__":
    main()
