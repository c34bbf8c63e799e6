#!/usr/bin/env python3
"""The controllers family is tested: each deliberately broken tree of `break_cases()` (argocd.py,
capi.py: a wave before its dependency, a kind the project does not permit, a Cluster API
reference no object answers…) must make the family print a FAIL line holding the case's
expected words, on a copy of a golden fleet broken by the case; the unbroken base trees are
judged by the family itself (oracles/run). Prints ok/FAIL lines for the harness.

Usage (from `selftest`): selftest.py --bin NAME=PATH...
"""

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


# The golden fleet a case breaks when it names none: small trees of each kind.
DEFAULT_BASE = {"argocd": "golden/proxmox-minimal", "capi": "golden/capi-lab"}


def cases():
    found = []
    for fam in ("argocd", "capi"):
        spec = importlib.util.spec_from_file_location(f"selftest_{fam}", HERE / f"{fam}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for c in getattr(mod, "break_cases", lambda: [])():
            # (name, fn, expect) on the family's default base, or (name, base, fn, expect).
            name, base, fn, expect = c if len(c) == 4 else (c[0], DEFAULT_BASE[fam], c[1], c[2])
            found.append((fam, name, base, fn, expect))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", action="append", default=[])
    args = ap.parse_args()
    binargs = [a for b in args.bin for a in ("--bin", b)]
    fails = 0
    tmp = Path(tempfile.mkdtemp(prefix="fleetc-controllers-selftest-"))
    try:
        trees = []
        for i, (fam, name, base, fn, expect) in enumerate(cases()):
            fleet = tmp / f"{i}-{fam}"
            shutil.copytree(REPO / base, fleet, ignore=shutil.ignore_patterns("diagnostics.txt", "cause"))
            fn(fleet / "out")
            trees.append((fam, name, base, fleet / "out", expect))
        if not trees:
            print("FAIL controllers-selftest: no break cases (argocd.py and capi.py define break_cases())")
            sys.exit(0)
        r = subprocess.run([sys.executable, str(HERE / "check.py"), *binargs, *[str(t[3]) for t in trees]],
                           capture_output=True, text=True, env=dict(os.environ, FLEETC_CONTROLLERS_JOBS="2"))
        sys.stderr.write(r.stderr)
        blocks, cur = {}, None
        for ln in r.stdout.splitlines():
            if ln.startswith("== controllers "):
                cur = ln[len("== controllers "):]
                blocks[cur] = []
            elif cur is not None:
                blocks[cur].append(ln)
        for fam, name, base, out, expect in trees:
            got = next((v for k, v in blocks.items() if str(out).endswith(k) or k == str(out)), [])
            hit = [ln for ln in got if ln.startswith("FAIL ") and expect in ln]
            if hit:
                print(f"ok controllers-selftest: {fam}: {name} ({base}, broken) FAILs: {hit[0][:300]}")
            else:
                fails += 1
                shown = "\n    ".join(got[-12:]) or "(no lines)"
                print(f"FAIL controllers-selftest: {fam}: {name} ({base}, broken) printed no FAIL line "
                      f"with {expect!r}; its lines:\n    {shown}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
