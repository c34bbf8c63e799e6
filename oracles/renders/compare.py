"""Each vendored add-on manifest against its real render: one line per add-on.

A vendored file byte-identical to its render is the real render. Otherwise it is a stand-in:
it must say so (a `# fleetc: stand-in` line among its first comment lines, which `fleetc check`
reports as `fleet::addons::stand-in`), and it must invent nothing: every object it holds (apiVersion, kind, namespace, name) is in the
render, and every field it sets has the render's value (a stand-in may leave fields out; a list
element of the stand-in must be a subset of some element of the render's list). So the kinds,
names and fields fleetc reads are exactly upstream's.

    compare.py REPO TABLE CITED   TABLE: name, vendored path, render path (tab-separated);
                                  CITED: oracles/renders/cited.tsv
"""
import hashlib
import os
import sys

import yaml


def docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def key(o):
    m = o.get("metadata") or {}
    return (o.get("apiVersion"), o.get("kind"), m.get("namespace"), m.get("name"))


def where(k):
    api, kind, ns, name = k
    return f"{kind} {ns + '/' if ns else ''}{name} ({api})"


def subset(s, r, path):
    """The first path where stand-in value s is not in render value r, or None."""
    if isinstance(s, dict):
        if not isinstance(r, dict):
            return path
        for k, v in s.items():
            if k not in r:
                return f"{path}.{k}"
            bad = subset(v, r[k], f"{path}.{k}")
            if bad:
                return bad
        return None
    if isinstance(s, list):
        if not isinstance(r, list):
            return path
        for i, e in enumerate(s):
            if all(subset(e, x, "") is not None for x in r):
                # name the deepest mismatch against the element of the same name, if any
                same = [x for x in r if isinstance(e, dict) and isinstance(x, dict) and x.get("name") == e.get("name")]
                return subset(e, same[0], f"{path}[{i}]") if same else f"{path}[{i}]"
        return None
    return None if s == r else f"{path} ({s!r}, upstream {r!r})"


# The line by which a vendored file says it is a stand-in (src/model/mod.rs, STAND_IN_MARKER).
MARKER = "# fleetc: stand-in"


def marked(text):
    """Whether one of the comment lines at the top of text is the stand-in marker."""
    for line in text.splitlines():
        line = line.rstrip()
        if line and not line.startswith("#"):
            return False
        rest = line[len(MARKER):] if line.startswith(MARKER) else None
        if rest is not None and (rest == "" or rest[0] in ": "):
            return True
    return False


def cited(repo, path):
    """Vendored copies of upstream files no registry serves: unchanged but for their header."""
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        name, vendored, sha, upstream, ours, source, namespace = line.rstrip("\n").split("\t")
        text = open(os.path.join(repo, vendored), "rb").read().decode()
        lines = [l for l in text.splitlines(keepends=True) if not l.startswith("# fleetc: ")]
        if namespace != "-":
            # `helm template` leaves a chart's objects without a namespace where `helm install`
            # sets it; the vendored file sets it, on the line after `metadata:` (its header says so).
            set_ns = f"  namespace: {namespace}\n"
            lines = [l for i, l in enumerate(lines) if not (l == set_ns and i > 0 and lines[i - 1] == "metadata:\n")]
        body = "".join(lines)
        if upstream != "-":
            body = body.replace(ours, upstream)
        got = hashlib.sha256(body.encode()).hexdigest()
        if got == sha:
            but = f" but for `{ours}`" if upstream != "-" else ""
            if namespace != "-":
                but += f"{' and' if but else ' but'} for the namespace `{namespace}` set on its namespaced objects"
            print(f"ok renders: {name}: {vendored} is {source} unchanged{but} (sha256 {sha}); "
                  "no registry serves it at the pinned version, so it is not re-rendered here")
        else:
            print(f"FAIL renders: {name}: {vendored} is not {source} as cited: sha256 {got}, upstream {sha}")


def main():
    repo, table, cited_table = sys.argv[1:]
    cited(repo, cited_table)
    for line in open(table):
        name, vendored, render = line.rstrip("\n").split("\t")
        vpath = os.path.join(repo, vendored)
        vbytes, rbytes = open(vpath, "rb").read(), open(render, "rb").read()
        if vbytes == rbytes:
            sha = hashlib.sha256(rbytes).hexdigest()
            print(f"ok renders: {name}: {vendored} is the real render, byte for byte (sha256 {sha})")
            continue
        real = {key(o): o for o in docs(render)}
        problems = []
        if not marked(vbytes.decode()):
            problems.append(f"it is not the real render and does not say it is a stand-in "
                            f"(a `{MARKER}` line among its first comment lines, which `fleetc check` reports)")
        stand_in = docs(vpath)
        for o in stand_in:
            k = key(o)
            if k not in real:
                problems.append(f"{where(k)} is not in the real render")
                continue
            bad = subset(o, real[k], "")
            if bad:
                problems.append(f"{where(k)}: {bad.lstrip('.')} is not as upstream renders it")
        if problems:
            print(f"FAIL renders: {name}: stand-in {vendored} differs from the real render: {'; '.join(problems)}")
        else:
            print(f"ok renders: {name}: stand-in {vendored}: its {len(stand_in)} objects and every field they set "
                  f"are as in the real render ({len(real)} objects)")


main()
