"""oracles/import/check [FLEET_DIR…]: the proof of `fleetc import talhelper` by the machine configs
(issue 33, item 2). Per talhelper fleet (default: every folder of the corpus's talhelper/):

1. `fleetc import talhelper` of its talconfig(s) into a scratch directory (a folder holding
   talconfig.yaml is one cluster; a folder whose sub-folders hold one each is a fleet of several,
   imported together, as the import's `several-clusters` fixture);
2. the placeholders IMPORT-REPORT.md lists as user facts filled, and only those (`fill`, below);
   every other byte of the import is left as written;
3. the fleet's recipients replaced by a throwaway age identity (oracles/talosctl/agekey.py), one
   Talos secrets bundle per Talos minor for the run from the harness talosctl's `gen secrets`,
   sealed with `fleetc secrets import`; `fleetc build`, then `fleetc talos render ENV/CLUSTER`
   through the harness talosctl (oracles/talosctl/README.md);
4. `talhelper genconfig` (v3.1.16, oracles/talhelper/build) of the original, in a scratch copy,
   with the same bundle in plain (`-s FILE`: cmd/genconfig.go, pkg/talos/input.go
   NewClusterInput reads a file that is not SOPS-encrypted as is), its env files by default
   (`talenv.yaml` … beside the config, as the import reads them) and `--offline-mode` (schematic
   IDs computed, no request to the image factory);
5. per node, the two configs compared as Talos machinery compares them
   (oracles/talos/v1.13/compareconfigs: configloader, re-encoded without comments, documents by
   kind and name); each difference is deliberate when the import report's "Carried over
   differently, on purpose" table has its row (`REASONS`: the config path each row stands for),
   not carried (a limit, counted apart) when its "Not carried over" table has it, else it is a
   FAIL line.

Prints one line per fleet (`ok import: …`, `FAIL import: …`), then the summary `ok import: N
fleets: …` with the figures the README quotes. A fleet that cannot be compared (the import
refuses it, fleetc refuses the imported fleet by a rule of the original or a limit, talhelper
refuses the original) is an `ok` line with its reason: that is a figure, not a failure of the
import. A FAIL is a node whose configs differ where the report says nothing, or a harness step
that broke. Exit 0 when it ran.
"""

import collections
import glob
import importlib.util
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "oracles/talosctl"))
sys.dont_write_bytecode = True
try:
    import yaml
    import agekey  # needs the `cryptography` package
except ImportError as e:
    print(f"skip import: python3 lacks a module the check needs: {e}")
    sys.exit(0)

_spec = importlib.util.spec_from_file_location("talosctl_check", os.path.join(REPO, "oracles/talosctl/check.py"))
TALOSCTL_CHECK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(TALOSCTL_CHECK)

FLEETC = os.environ.get("FLEETC_BIN", os.path.join(REPO, "target/release/fleetc"))
SELFTEST = os.environ.get("FLEETC_IMPORT_SELFTEST", "")
# How many unlisted differences a FAIL line quotes (FLEETC_IMPORT_SHOW=N for more).
SHOWN = int(os.environ.get("FLEETC_IMPORT_SHOW", "6"))

# The report's deliberate rows (src/import/talhelper.rs, `report.deliberate`), each with the
# places of the machine config it stands for: a difference there is the row's. The key is the
# row's field as the report writes it (a regex over it); the value, (document, path prefix)
# pairs over compareconfigs' lines.
REASONS = [
    (r"^cluster\.discovery\.enabled$", [("v1alpha1", "/cluster/discovery")]),
    (r"^machine\.install\.image$", [("v1alpha1", "/machine/install/image")]),
    (r"^allowSchedulingOnControlPlanes$", [("v1alpha1", "/cluster/allowSchedulingOnControlPlanes")]),
    (r"^clusterName$", [("v1alpha1", "/cluster/clusterName")]),
    (r"^endpoint$", [("v1alpha1", "/cluster/controlPlane/endpoint")]),
    (r"^nodes\[.*\]\.hostname$", [("v1alpha1", "/machine/network/hostname"), ("HostnameConfig", "/")]),
    (r"^nodes\[.*\]\.schematic$", [("v1alpha1", "/machine/install/image")]),
    (r"^clusterPodNets$", [("v1alpha1", "/cluster/network/podSubnets")]),
    (r"^clusterSvcNets$", [("v1alpha1", "/cluster/network/serviceSubnets")]),
    (r"^nodes\[.*\]\.nodeAnnotations$", [("v1alpha1", "/machine/nodeAnnotations")]),
    (r"^machine\.install\.grubUseUKICmdline$", [("v1alpha1", "/machine/install/grubUseUKICmdline")]),
    # A patch's v1alpha1 flag, moved into the ResolverConfig fleetc writes for `nameservers`.
    (r"^machine\.network\.disableSearchDomain$", [("v1alpha1", "/machine/network/disableSearchDomain"),
                                                   ("ResolverConfig", "/searchDomains")]),
    # talhelper replaces the generated labels with the node's own (the generator's
    # exclude-from-external-load-balancers label of a control-plane node goes with them).
    (r"^nodes\[.*\]\.nodeLabels$", [("v1alpha1", "/machine/nodeLabels/node.kubernetes.io/exclude-from-external-load-balancers")]),
]



def oldest_talos():
    """`--talos-at-least` for every import: the first release of the oldest Talos minor fleetc's
    versions table has (versions/talos.kdl), so a fleet on an older Talos is imported (and
    compared) as its nodes will be once upgraded to it, and no other fleet changes."""
    with open(os.path.join(REPO, "versions/talos.kdl")) as f:
        minors = re.findall(r'^talos "(\d+)\.(\d+)"', f.read(), re.M)
    a, b = min((int(x), int(y)) for x, y in minors)
    return f"v{a}.{b}.0"


TALOS_AT_LEAST = oldest_talos()


def kubernetes_of_talos():
    """Per Talos minor of fleetc's versions table, the newest Kubernetes minor it accepts
    (its `kubernetes FIRST LAST` row): the version the harness fills where a talconfig names
    none (`fill`, `name_kubernetes`), on both sides of the comparison."""
    with open(os.path.join(REPO, "versions/talos.kdl")) as f:
        text = f.read()
    return {m.group(1): m.group(2) for m in re.finditer(r'^talos "(\d+\.\d+)"[^\n]*\{\s*kubernetes "[\d.]+" "([\d.]+)"', text, re.M)}


KUBERNETES_OF_TALOS = kubernetes_of_talos()


def default_kubernetes(talos):
    """The first release of the newest Kubernetes minor Talos `talos` (a tag or a version)
    accepts: what `talosctl gen config` of that Talos would pick, to the minor."""
    m = re.match(r"v?(\d+\.\d+)", talos or "")
    last = KUBERNETES_OF_TALOS.get(m.group(1)) if m else None
    return f"{last}.0" if last else None

lines = []


def say(kind, msg):
    line = f"{kind} import: {msg}"
    lines.append(line)
    print(line, flush=True)


def run(args, cwd, path_dir=None):
    env = {"PATH": (path_dir + ":" if path_dir else "") + os.environ["PATH"], "HOME": os.environ["HOME"]}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)


def last(text):
    t = [l for l in text.strip().splitlines() if l.strip()]
    return t[-1] if t else "(no output)"


def build_tool(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {last(p.stderr)}")
    return p.stdout.strip().splitlines()[-1]


def configs_of(fleet):
    """The talconfigs of a corpus folder: its own, else one per sub-folder."""
    own = os.path.join(fleet, "talconfig.yaml")
    if os.path.exists(own):
        return [own]
    return sorted(glob.glob(os.path.join(fleet, "*", "talconfig.yaml")))


def report_rows(text, section):
    """The (field, why) rows of one table of IMPORT-REPORT.md (every config's section)."""
    rows, inside = [], False
    for l in text.splitlines():
        if l.startswith("## "):
            inside = l[3:].strip() == section
            continue
        m = re.match(r"^\| [^|]* \| `(.*?)` \| (.*) \|$", l)
        if inside and m:
            rows.append((m.group(1), m.group(2)))
    return rows


def fill(kdl, report):
    """The placeholders the harness supplies, each a fact only the user has. Returns the new
    text, what was filled, and the placeholders left (which make the fleet unbuildable)."""
    filled, left = [], []
    n = 0

    def mac(_m):
        nonlocal n
        n += 1
        # A locally administered unicast MAC (first octet 0x02): the machine's port, which the
        # import cannot know. `mac` is how fleetc recognises a machine (R13); it is not part of
        # the machine config (no difference comes from it).
        return f'mac "02:00:00:00:{n // 256:02x}:{n % 256:02x}"'

    kdl2 = re.sub(r'mac "CHANGE-ME"', mac, kdl)
    if n:
        filled.append(f"{n} MAC(s)")
    k = 0

    def serial(m):
        nonlocal k
        k += 1
        # The install disk's serial, which talhelper's `installDisk: /dev/…` does not say (R15):
        # a made-up one. It is the diskSelector's value, which differs from talhelper's config
        # anyway (the report's `machine.install.diskSelector` row).
        return f'{m.group(1)} serial="HARNESS-DISK-{k}"'

    kdl2 = re.sub(r"(// CHANGE: add the disk's serial .*\n\s*install-disk [^\n]*)", serial, kdl2)
    if k:
        filled.append(f"{k} install-disk serial(s)")
    j = 0

    def kubernetes(m):
        nonlocal j
        # The Kubernetes version a talconfig without `kubernetesVersion` leaves to the user
        # (talhelper refuses such a config): the newest minor the cluster's Talos accepts,
        # which `name_kubernetes` tells talhelper too.
        talos = re.findall(r'^\s*talos "([^"]+)"', kdl2[: m.start()], re.M)
        version = default_kubernetes(talos[-1] if talos else "")
        if version is None:
            return m.group(0)
        j += 1
        return f'kubernetes "{version}"'

    kdl2 = re.sub(r'kubernetes "CHANGE-ME"', kubernetes, kdl2)
    if j:
        filled.append(f"{j} Kubernetes version(s)")
    kdl2, a, nets = addresses(kdl2)
    if a:
        filled.append(f"{a} node address(es)" + (f" in {nets} made-up network(s)" if nets else ""))
    for field, _why in report_rows(report, "Placeholders to fill (marked CHANGE in fleet.kdl)"):
        unfilled = field != "kubernetesVersion" or 'kubernetes "CHANGE-ME"' in kdl2
        unfilled &= not (field == "environment network" and nets) and not (field.endswith(" address") and a)
        if unfilled and not (field.endswith(" mac") or field.endswith(" install-disk serial")):
            left.append(field)
    return kdl2, filled, left


def addresses(kdl):
    """A node the talconfig reaches by a DNS name gets `address "CHANGE-ME"` (the IPv4 address
    behind the name is a user fact): the harness gives it a free address of its environment's
    network, taken from the top of the range, and an environment whose network is a placeholder
    too (no node had an IPv4 address to derive it from) gets 192.0.2.0/24 (RFC 5737's
    TEST-NET-1). Neither is in talhelper's machine config (talhelper writes `ipAddress` into
    talosconfig only); fleetc writes the network into the rows the report lists
    (`validSubnets`, `advertisedSubnets`). Returns the text, the addresses filled and the
    networks made up."""
    filled = made = 0
    # One environment per `network` line, up to the next.
    parts = re.split(r'(?m)^(?=\s*network ")', kdl)
    for i, part in enumerate(parts):
        if 'address "CHANGE-ME"' not in part:
            continue
        m = re.match(r'\s*network "([^"]+)"', part)
        if not m:
            continue
        if m.group(1) == "CHANGE-ME":
            part = part.replace('network "CHANGE-ME"', 'network "192.0.2.0/24"', 1)
            made += 1
        net = ipaddress.ip_network(re.match(r'\s*network "([^"]+)"', part).group(1), strict=False)
        used = set(re.findall(r"\b\d+\.\d+\.\d+\.\d+\b", part))
        free = (str(h) for h in reversed(list(net.hosts())) if str(h) not in used)

        def one(_m):
            nonlocal filled
            filled += 1
            return f'address "{next(free)}"'

        parts[i] = re.sub(r'address "CHANGE-ME"', one, part)
    return "".join(parts), filled, made


def seal(kdl, recipient):
    """Every environment opened by the throwaway key: the import writes no `recipients` (the
    user's age key is a user fact), and `sealed "talos-secrets"` on every cluster, which the
    import writes. oracles/talosctl/check.py's `sealable` does exactly that."""
    return TALOSCTL_CHECK.sealable(re.sub(r"age1[0-9a-z]{58}", recipient, kdl), recipient)


def minor_of(tag):
    m = re.match(r"v?(\d+)\.(\d+)", tag)
    return f"v{m.group(1)}.{m.group(2)}" if m else ""


def places_of(field):
    """The places of the config a report row stands for: its REASONS entry, else the row's own
    name when it is a config path (`machine.certSANs` → v1alpha1 /machine/certSANs) or a
    document (`VolumeConfig EPHEMERAL` → that whole document)."""
    for pat, places in REASONS:
        if re.match(pat, field):
            return places
    # One label or annotation of a node (`nodes[x].nodeLabels.<key>`): that key.
    m = re.match(r"^nodes\[[^\]]*\]\.(nodeLabels|nodeAnnotations)\.(.+)$", field)
    if m:
        return [("v1alpha1", f"/machine/{m.group(1)}/{m.group(2)}")]
    m = re.match(r"^([A-Z][A-Za-z0-9]+) (\S+)$", field)
    if m:
        return [(f"{m.group(1)}/{m.group(2)}", "/")]
    if re.match(r"^(machine|cluster)\.[A-Za-z0-9.]+$", field):
        return [("v1alpha1", "/" + field.replace(".", "/"))]
    return []


def within(path, prefix):
    return prefix == "/" or path == prefix or path.startswith(prefix + "/")


def classify(doc, path, deliberate):
    """The deliberate row a difference belongs to, or None. A difference at an ancestor of the
    row's place (the whole map absent on one side) is the row's too."""
    for field, _why in deliberate:
        for d, prefix in places_of(field):
            if doc == d and (within(path, prefix) or within(prefix, path)):
                return re.sub(r"^nodes\[[^\]]*\]", "nodes[…]", field)
    return None


def check_fleet(name, src, tools):
    scratch = tempfile.mkdtemp(prefix="fleetc-import-", dir=SCRATCH)
    stats = {"fleet": name}
    cfgs = configs_of(src)
    if not cfgs:
        stats["refused"] = "no talconfig.yaml"
        return stats
    orig = os.path.join(scratch, "orig")
    shutil.copytree(src, orig)
    fleet = os.path.join(scratch, "fleet")
    rel = [os.path.relpath(c, src) for c in cfgs]
    p = run([FLEETC, "import", "talhelper", *[os.path.join(orig, r) for r in rel], "--talos-at-least", TALOS_AT_LEAST,
             "--out", fleet], scratch)
    if p.returncode != 0:
        codes = sorted(set(re.findall(r"fleet::[a-z0-9:-]+", p.stderr + p.stdout)))
        stats["refused"] = "import: " + (" ".join(codes) or last(p.stderr))
        return stats
    stats["imported"] = True
    report = open(os.path.join(fleet, "IMPORT-REPORT.md")).read()
    if any(f == "talosVersion" for f, _ in report_rows(report, "Carried over differently, on purpose")):
        stats["raised_import"] = True
    kdl_path = os.path.join(fleet, "fleet.kdl")
    ident, recipient = agekey.generate()
    kdl, filled, left = fill(open(kdl_path).read(), report)
    open(kdl_path, "w").write(seal(kdl, recipient))
    stats["filled"] = filled
    id_file = os.path.join(scratch, "identity.txt")
    fd = os.open(id_file, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, (ident + "\n").encode())
    os.close(fd)
    p = run([FLEETC, "build", "--quiet", "--diagnostics-format", "json"], fleet)
    if p.returncode != 0:
        try:
            diags = json.loads(p.stdout or "[]")
        except ValueError:
            diags = []
        # Each error once, by code, with its rule: a placeholder left (`CHANGE-ME` in the
        # message: a fact the harness does not invent), a rule of fleetc's the original breaks
        # (its R-id), or a limit of fleetc's model (no R-id).
        codes = set()
        for d in diags:
            if d.get("severity") != "error":
                continue
            if "CHANGE-ME" in (d.get("message", "") + d.get("label", "")):
                codes.add("placeholder")
            else:
                codes.add(d["code"] + (f"({d['rule']})" if d.get("rule") else "(no R-id)"))
        if left:
            codes.add("placeholder")
        stats["unbuilt_codes"] = sorted(codes) or [last(p.stderr)]
        stats["unbuilt"] = " ".join(stats["unbuilt_codes"])
        # Does talhelper take the original (at the version the import configures)? A fleet
        # neither tool builds is the original's problem as much as the import's.
        for r in rel:
            if stats.get("raised_import"):
                raise_talos(os.path.join(orig, r), TALOS_AT_LEAST)
            if any("Kubernetes" in f for f in filled):
                talos = re.search(r'^\s*talos "([^"]+)"', kdl, re.M)
                name_kubernetes(os.path.join(orig, r), talos.group(1) if talos else "")
            refusal = talhelper_genconfig(tools, os.path.dirname(os.path.join(orig, r)), r, [],
                                          os.path.join(scratch, "talhelper-unbuilt", r))
            if refusal:
                stats["talhelper_refuses"] = refusal
                break
        return stats
    stats["built"] = True
    deliberate = report_rows(report, "Carried over differently, on purpose")
    not_carried = report_rows(report, "Not carried over")
    targets = run([FLEETC, "__targets", "clusters"], fleet).stdout.split()
    # talconfig per target: each config's section of the report names its source and the
    # `<env>/<cluster>` its secrets are sealed for (src/import/report.rs).
    by_env = {}
    for section in report.split("\n# Import report: ")[0:]:
        src_name = section.removeprefix("# Import report: ").split("\n", 1)[0].strip()
        m = re.search(r"fleetc secrets import (\S+)/\S+ talos-secrets", section)
        r = next((r for r in rel if r == src_name or os.path.basename(r) == src_name), None)
        if m and r:
            by_env[m.group(1)] = r
    stats["nodes"] = []
    for t in targets:
        env, cluster = t.split("/")
        r = by_env.get(env) or (rel[0] if len(rel) == 1 else None)
        if r is None:
            say("FAIL", f"{name} {t}: no talconfig names clusterName {env!r}")
            stats["failed"] = True
            continue
        compare_cluster(name, scratch, fleet, orig, r, t, id_file, (deliberate, not_carried), tools, stats)
    return stats


def compare_cluster(name, scratch, fleet, orig, rel, target, id_file, rows, tools, stats):
    deliberate, not_carried = rows
    env, cluster = target.split("/")
    dest = os.path.join(scratch, "render", env, cluster)
    plan = run([FLEETC, "talos", "render", target, "--out", dest, "--plan"], fleet)
    images = sorted(set(re.findall(r"--install-image (\S+)", plan.stdout + plan.stderr)))
    minors = sorted({minor_of(i.rsplit(":", 1)[-1]) for i in images})
    if len(minors) != 1 or minors[0] not in tools["talosctl"]:
        stats["uncompared"] = f"no harness talosctl for Talos {', '.join(minors) or '?'}"
        return
    standin = tools["talosctl"][minors[0]]
    bundle = secrets_bundle(minors[0], standin)
    p = run([FLEETC, "secrets", "import", target, "talos-secrets", bundle, "--force", "--quiet"], fleet)
    if p.returncode != 0:
        raise RuntimeError(f"fleetc secrets import: {last(p.stderr)}")
    p = run([FLEETC, "talos", "render", target, "--out", dest, "--identity", id_file], fleet, standin)
    if p.returncode != 0:
        cause = next((l.strip() for l in p.stderr.splitlines() if "error" in l.lower()), last(p.stderr))
        say("FAIL", f"{name} {target}: `fleetc talos render` exited {p.returncode}: {cause}")
        stats["failed"] = True
        return
    cdir = os.path.dirname(os.path.join(orig, rel))
    tags = sorted({i.rsplit(":", 1)[-1] for i in images})
    if any(f == "talosVersion" for f, _ in deliberate) and len(tags) == 1:
        stats["raised"] = tags[0]
        raise_talos(os.path.join(orig, rel), stats["raised"])
    if any("Kubernetes" in f for f in stats.get("filled") or []) and len(tags) == 1:
        name_kubernetes(os.path.join(orig, rel), tags[0])
    tout = os.path.join(scratch, "talhelper", env)
    refusal = talhelper_genconfig(tools, cdir, rel, ["-s", bundle], tout)
    if refusal:
        stats["uncompared"] = f"talhelper genconfig refuses the original: {refusal}"
        return
    if SELFTEST == "alter":
        # selftest: one rendered config altered the way a wrong import would (a field set that
        # talhelper does not set); the node must FAIL.
        first = sorted(f for f in os.listdir(dest) if f.endswith(".yaml"))[0]
        with open(os.path.join(dest, first)) as f:
            text = f.read()
        with open(os.path.join(dest, first), "w") as f:
            f.write(text.replace("machine:\n", "machine:\n    sysctls:\n        harness.selftest: \"1\"\n", 1))
    # Nodes: talhelper writes `<clusterName>-<hostname>.yaml` (pkg/config/outputfilename.go,
    # the default template); fleetc `<cluster>-<node>.yaml`; the pairing is by the node's place
    # in the talconfig, which the import keeps: the hostname in each config, else the order.
    talcfg = yaml.safe_load(open(os.path.join(orig, rel)).read()) or {}
    theirs = {}
    for f in sorted(os.listdir(tout)):
        if f.endswith(".yaml"):
            theirs[f] = hostname_of(os.path.join(tout, f))
    ours = {f: hostname_of(os.path.join(dest, f)) for f in sorted(os.listdir(dest)) if f.endswith(".yaml")}
    pairs = []
    for n in talcfg.get("nodes") or []:
        h = str(n.get("hostname", ""))
        t = next((f for f, hh in theirs.items() if hh == h or f == f"{talcfg.get('clusterName')}-{h}.yaml"), None)
        o = next((f for f, hh in ours.items() if hh == h or f == f"{h}.yaml"), None)
        if o is None:
            # fleetc's names are DNS labels: lowercase (the report's `nodes[…].hostname` row).
            short = h.split(".")[0].lower()
            o = next((f for f in ours if f.endswith(f"-{short}.yaml") or f == f"{short}.yaml"), None)
        pairs.append((h, t, o))
    cc = tools["compareconfigs"]
    for h, t, o in pairs:
        what = f"{name} {target}/{h}"
        if t is None or o is None:
            say("FAIL", f"{what}: no config to compare (talhelper: {t}, fleetc: {o})")
            stats["failed"] = True
            stats["nodes"].append((what, "unpaired", []))
            continue
        p = subprocess.run([cc, os.path.join(tout, t), os.path.join(dest, o)], capture_output=True, text=True)
        if p.returncode == 2:
            say("FAIL", f"{what}: {last(p.stderr)}")
            stats["failed"] = True
            stats["nodes"].append((what, "unloadable", []))
            continue
        reasons, gaps, unlisted = collections.Counter(), collections.Counter(), []
        for l in p.stdout.splitlines():
            m = re.match(r"^DIFF (\S+) (\S+): (.*)$", l)
            if not m:
                continue
            why = classify(m.group(1), m.group(2), deliberate)
            gap = None if why else classify(m.group(1), m.group(2), not_carried)
            if why:
                reasons[why] += 1
            elif gap:
                gaps[gap] += 1
            else:
                unlisted.append(f"{m.group(1)} {m.group(2)}: {m.group(3)}")
        if unlisted:
            say("FAIL", f"{what}: {len(unlisted)} difference(s) the report does not list (talhelper | fleetc): "
                + "; ".join(unlisted[:SHOWN]) + (" …" if len(unlisted) > SHOWN else ""))
            stats["failed"] = True
            stats["nodes"].append((what, "unlisted", unlisted))
        elif gaps:
            # Listed by the report, but as a value the import did not carry over (a limit of
            # the import or of fleetc's model), not as a rule-backed choice: counted apart.
            stats["nodes"].append((what, "not carried", sorted(gaps) + sorted(reasons)))
        elif reasons:
            stats["nodes"].append((what, "deliberate", sorted(reasons)))
        else:
            stats["nodes"].append((what, "identical", []))


BUNDLES = {}


def secrets_bundle(minor, standin):
    """One Talos secrets bundle per minor for the whole run, from the harness talosctl's `gen
    secrets` (0.5 s of CPU each): both sides of every comparison read the same bundle, and
    which one it is makes no difference to the comparison."""
    if minor not in BUNDLES:
        path = os.path.join(tempfile.mkdtemp(prefix="fleetc-import-bundle-", dir=SCRATCH), "secrets.yaml")
        p = run(["talosctl", "gen", "secrets", "-o", path], os.path.dirname(path), standin)
        if p.returncode != 0:
            raise RuntimeError(f"talosctl gen secrets: {last(p.stderr)}")
        BUNDLES[minor] = path
    return BUNDLES[minor]


def raise_talos(path, version):
    """The import raised an older Talos (`--talos-at-least`): talhelper is told the version
    fleetc configures, in the copy's talconfig, so both sides configure the same release."""
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(re.sub(r"^talosVersion:.*$", f"talosVersion: {version}", text, count=1, flags=re.M))


def name_kubernetes(path, talos):
    """The talconfig names no `kubernetesVersion` and the import's placeholder was filled
    (`fill`): talhelper is told the same version, in the copy, as its first key."""
    with open(path) as f:
        text = f.read()
    if re.search(r"^kubernetesVersion:", text, re.M) or default_kubernetes(talos) is None:
        return
    line = f"kubernetesVersion: v{default_kubernetes(talos)}\n"
    m = re.match(r"(?:(?:#[^\n]*|\s*)\n)*---[^\n]*\n", text)
    at = m.end() if m else 0
    with open(path, "w") as f:
        f.write(text[:at] + line + text[at:])


def talhelper_genconfig(tools, cdir, rel, secrets, tout):
    """`talhelper genconfig` of the config `rel` in `cdir`; its refusal (the "failed to …" line
    and the `* …` causes after it, or its validator's first error), else None."""
    p = run([tools["talhelper"], "genconfig", "-c", os.path.basename(rel), *secrets, "--offline-mode",
             "--no-gitignore", "-o", tout], cdir)
    if p.returncode == 0:
        return None
    out = [l.strip() for l in (p.stderr + p.stdout).splitlines() if l.strip()]
    at = next((i for i, l in enumerate(out) if "failed to" in l), None)
    if at is None:
        errs = [l[2:] for l in out if l.startswith("* ") and "WARNING" not in l]
        msg = errs[0] if errs else last(p.stderr + p.stdout)
    else:
        causes = [l[2:] for l in out[at + 1:] if l.startswith("* ") and "WARNING" not in l and not l.endswith("occurred:")]
        msg = out[at] + (" " + "; ".join(causes) if causes else "")
    return re.sub(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d ", "", msg)


def hostname_of(path):
    try:
        for d in yaml.safe_load_all(open(path)):
            if not d:
                continue
            if d.get("kind") == "HostnameConfig":
                return str(d.get("hostname", ""))
            h = ((d.get("machine") or {}).get("network") or {}).get("hostname")
            if h:
                return str(h)
    except yaml.YAMLError:
        pass
    return ""


def main():
    global SCRATCH
    corpus = os.environ.get("FLEETC_CORPUS", "")
    if not corpus:
        for c in (os.path.join(REPO, "../shared/corpus"), "/work/shared/corpus"):
            if os.path.exists(os.path.join(c, "MANIFEST.tsv")):
                corpus = c
                break
    fleets = sys.argv[1:]
    if not fleets:
        if not corpus or not os.path.isdir(os.path.join(corpus, "talhelper")):
            print("skip import: no corpus (set FLEETC_CORPUS to the folder holding MANIFEST.tsv and talhelper/)")
            return
        fleets = sorted(glob.glob(os.path.join(corpus, "talhelper", "*")))
    tools = {
        "talhelper": build_tool([os.path.join(REPO, "oracles/talhelper/build")]),
        "compareconfigs": build_tool([os.path.join(HERE, "build-compare")]),
        "talosctl": {},
    }
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    SCRATCH = tempfile.mkdtemp(prefix="fleetc-import-", dir=base)
    os.chmod(SCRATCH, 0o700)
    try:
        for minor in ("v1.13", "v1.12"):
            p = subprocess.run([os.path.join(REPO, "oracles/talosctl/build"), minor], capture_output=True, text=True)
            if p.returncode == 0:
                d = os.path.join(SCRATCH, f"talosctl-{minor}")
                os.mkdir(d)
                os.symlink(p.stdout.strip(), os.path.join(d, "talosctl"))
                tools["talosctl"][minor] = d
        all_stats = []
        for f in fleets:
            name = os.path.basename(os.path.normpath(f))
            if name == "input":  # a fixture of tests/import: <case>/input
                name = os.path.basename(os.path.dirname(os.path.normpath(f)))
            try:
                s = check_fleet(name, f, tools)
            except (RuntimeError, OSError, KeyError, ValueError, yaml.YAMLError) as e:
                say("FAIL", f"{name}: {type(e).__name__}: {e}")
                s = {"fleet": name, "failed": True}
            all_stats.append(s)
            if not s.get("failed"):
                say("ok", f"{name}: {verdict(s)}")
        summary(all_stats)
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)


def verdict(s):
    if "refused" in s:
        return f"refused ({s['refused']})"
    raised = f" at Talos {TALOS_AT_LEAST} or later (`--talos-at-least`: the original runs an older Talos)" if s.get("raised_import") else ""
    if "unbuilt" in s:
        theirs = f"; talhelper refuses the original too: {s['talhelper_refuses']}" if "talhelper_refuses" in s else ""
        return f"imported{raised}, not built ({s['unbuilt']}){theirs}"
    if raised:
        return f"imported{raised}; " + verdict({k: v for k, v in s.items() if k != "raised_import"})
    nodes = s.get("nodes") or []
    if "uncompared" in s and not nodes:
        return f"imported and built, not compared ({s['uncompared']})"
    same = sum(1 for _, k, _ in nodes if k == "identical")
    delib = [(w, r) for w, k, r in nodes if k == "deliberate"]
    gaps = [(w, r) for w, k, r in nodes if k == "not carried"]
    why = sorted({x for _, r in delib for x in r})
    gap_why = sorted({x for _, r in gaps for x in r} - set(why))
    return (f"imported and built; {len(nodes)} node(s): {same} identical to talhelper's, {len(delib)} differing only by "
            f"listed reasons ({', '.join(why) or 'none'})" +
            (f", {len(gaps)} also where the report lists a value not carried over ({', '.join(gap_why)})" if gaps else "") +
            (f"; {s['uncompared']}" if "uncompared" in s else "") +
            (f"; filled {', '.join(s['filled'])}" if s.get("filled") else ""))


def summary(all_stats):
    n = len(all_stats)
    imported = sum(1 for s in all_stats if s.get("imported"))
    built = [s for s in all_stats if s.get("built")]
    nodes = [x for s in built for x in s.get("nodes") or []]
    same = sum(1 for _, k, _ in nodes if k == "identical")
    delib = collections.Counter(r for _, k, rs in nodes if k == "deliberate" for r in rs)
    ndelib = sum(1 for _, k, _ in nodes if k == "deliberate")
    gaps = sum(1 for _, k, _ in nodes if k == "not carried")
    bad = sum(1 for _, k, _ in nodes if k not in ("identical", "deliberate", "not carried"))
    refused = collections.Counter(s["refused"] for s in all_stats if "refused" in s)
    unbuilt = collections.Counter(c for s in all_stats if "unbuilt" in s for c in s["unbuilt_codes"])
    both = sum(1 for s in all_stats if "unbuilt" in s and "talhelper_refuses" in s)
    uncompared = collections.Counter(re.sub(r"nodes\[\d+\]", "nodes[…]", s["uncompared"]) for s in built if "uncompared" in s)
    fmt = lambda c: ", ".join(f"{k} ×{v}" for k, v in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"
    kind = "FAIL" if bad or any(s.get("failed") for s in all_stats) else "ok"
    raised = sum(1 for s in all_stats if s.get("raised_import"))
    raised_built = sum(1 for s in built if s.get("raised_import"))
    say(kind, f"{n} fleets: {imported} imported ({raised} at a raised Talos), {len(built)} built ({100 * len(built) // max(n, 1)}%; "
        f"{raised_built} at a raised Talos); "
        f"{len(nodes)} nodes compared: {same} identical, {ndelib} differing only by listed reasons ({fmt(delib)}), "
        f"{gaps} differing also where the report lists a value not carried over, "
        f"{bad} differing otherwise; built but not compared: {fmt(uncompared)}; "
        f"not built (errors, by code): {fmt(unbuilt)}; not built that talhelper refuses too: {both}; "
        f"refused: {fmt(refused)}")


if __name__ == "__main__":
    main()
