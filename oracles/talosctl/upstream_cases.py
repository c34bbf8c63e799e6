"""upstream_cases.py TALOSCTL: talosctl's own CLI tests of `gen config` and `gen secrets`
(siderolabs/talos v1.13.9 internal/integration/cli/gen.go, GenSuite), the cases within the flags
the stand-in implements, run against the stand-in; a case whose flag it does not implement must
exit 2 with "not implemented by fleetc's harness talosctl". Prints `ok talosctl-selftest: …` /
`FAIL talosctl-selftest: …`; exit 1 on a FAIL.
"""

import os
import re
import subprocess
import sys
import tempfile

import yaml

TALOSCTL = sys.argv[1]
failed = 0


def cli(args, cwd):
    return subprocess.run([TALOSCTL] + args, cwd=cwd, capture_output=True, text=True)


def case(name, line, problems):
    global failed
    what = f"GenSuite.{name} (internal/integration/cli/gen.go l.{line})"
    if problems:
        failed += 1
        print(f"FAIL talosctl-selftest: {what}: {'; '.join(problems)}")
    else:
        print(f"ok talosctl-selftest: {what}: as upstream expects")


def expect(p, fail=False, stdout_empty=False, stderr=None, stdout=None):
    out = []
    if fail != (p.returncode != 0):
        out.append(f"exit {p.returncode}: {p.stderr.strip()[-200:]}")
    if stdout_empty and p.stdout:
        out.append(f"stdout not empty: {p.stdout[:80]!r}")
    if stderr and not re.search(stderr, p.stderr):
        out.append(f"stderr lacks {stderr!r}: {p.stderr.strip()[-200:]!r}")
    if stdout and stdout not in p.stdout:
        out.append(f"stdout lacks {stdout!r}")
    return out


def main():
    ep = "https://192.168.0.1:6443"
    with tempfile.TemporaryDirectory() as d:
        probs = []
        for arg, hint in [("192.168.0.1", "https://192.168.0.1:6443"), ("192.168.0.1:6443", "https://192.168.0.1:6443"),
                          ("192.168.0.1:2000", "https://192.168.0.1:2000"), ("http://192.168.0.1:2000", "https://192.168.0.1:2000")]:
            probs += expect(cli(["gen", "config", "foo", arg], d), fail=True, stdout_empty=True,
                            stderr=re.escape(f'try: "{hint}"'))
        case("TestGenConfigURLValidation", 111, probs)

    with tempfile.TemporaryDirectory() as d:
        patch = yaml.safe_dump({"cluster": {"clusterName": "bar"}})
        p = cli(["gen", "config", "--force", "foo", ep, "--config-patch", patch], d)
        probs = expect(p, stdout_empty=True, stderr="generating PKI and tokens")
        for f in ("controlplane.yaml", "worker.yaml"):
            if os.path.exists(os.path.join(d, f)):
                name = next(x for x in yaml.safe_load_all(open(os.path.join(d, f))) if x)["cluster"]["clusterName"]
                if name != "bar":
                    probs.append(f"{f}: clusterName {name!r}")
            else:
                probs.append(f"no {f}")
        # The role flags patch that role's config only (machinery config/bundle/bundle.go
        # applyPatches: PatchesControlPlane to init and controlplane, PatchesWorker to worker).
        for flag, patched in (("--config-patch-control-plane", "controlplane.yaml"), ("--config-patch-worker", "worker.yaml")):
            probs += expect(cli(["gen", "config", "--force", "foo", ep, flag, patch], d), stdout_empty=True,
                            stderr="generating PKI and tokens")
            # testGenConfigPatch: the patched type reads "bar", the other one the generated
            # name. Upstream's case expects "" for an unpatched worker.yaml, from before the
            # generator wrote the cluster name into worker configs; machinery v1.12.6 and
            # v1.13.9 write it (config/generate/worker.go l.137, VersionContract
            # ClusterNameForWorkers), so an unpatched worker.yaml reads "foo" here.
            for f in ("controlplane.yaml", "worker.yaml"):
                doc = next(x for x in yaml.safe_load_all(open(os.path.join(d, f))) if x)
                name = (doc.get("cluster") or {}).get("clusterName") or ""
                want = "bar" if f == patched else "foo"
                if name != want:
                    probs.append(f"{flag}: {f}: clusterName {name!r}, not {want!r}")
        case("TestGenConfigPatchStrategic", 134, probs)

    with tempfile.TemporaryDirectory() as d:
        probs = expect(cli(["gen", "secrets"], d), stdout_empty=True)
        if not os.path.exists(os.path.join(d, "secrets.yaml")):
            probs.append("no secrets.yaml")
        probs += expect(cli(["gen", "secrets"], d), fail=True, stdout_empty=True,
                        stderr=re.escape('file "secrets.yaml" already exists, use --force to overwrite'))
        probs += expect(cli(["gen", "secrets", "--force"], d), stdout_empty=True)
        probs += expect(cli(["gen", "secrets", "--output-file", "secrets2.yaml"], d), stdout_empty=True)
        probs += expect(cli(["gen", "secrets", "-o", "secrets3.yaml", "--talos-version", "v0.8"], d), stdout_empty=True)
        for f in ("secrets2.yaml", "secrets3.yaml"):
            if not os.path.exists(os.path.join(d, f)):
                probs.append(f"no {f}")
        if oct(os.stat(os.path.join(d, "secrets.yaml")).st_mode & 0o777) != "0o600":
            probs.append("secrets.yaml is not mode 0600 (secrets.go l.91)")
        case("TestSecrets", 188, probs)

    with tempfile.TemporaryDirectory() as d:
        cli(["gen", "secrets"], d)
        probs = expect(cli(["gen", "config", "foo", ep, "--with-secrets", "secrets.yaml"], d), stdout_empty=True,
                       stderr=".")
        sb = yaml.safe_load(open(os.path.join(d, "secrets.yaml")))
        cp = next(x for x in yaml.safe_load_all(open(os.path.join(d, "controlplane.yaml"))) if x)
        if cp["machine"]["ca"]["crt"] != sb["certs"]["os"]["crt"] or cp["cluster"]["ca"]["crt"] != sb["certs"]["k8s"]["crt"]:
            probs.append("controlplane.yaml does not hold the bundle's CAs")
        # The case's second half (`gen secrets --from-controlplane-config`) is not implemented.
        if cli(["gen", "secrets", "--from-controlplane-config", "controlplane.yaml", "-o", "x.yaml"], d).returncode != 2:
            probs.append("--from-controlplane-config: exit code not 2")
        case("TestConfigWithSecrets", 243, probs)

    with tempfile.TemporaryDirectory() as d:
        for name, line, t, want in [("TestGenConfigToStdoutControlPlane", 284, "controlplane", "type: controlplane"),
                                    ("TestGenConfigToStdoutWorker", 301, "worker", "type: worker"),
                                    ("TestGenConfigToStdoutTalosconfig", 318, "talosconfig", "context: foo")]:
            case(name, line, expect(cli(["gen", "config", "foo", ep, "--output-types", t, "--output", "-"], d),
                                    stderr=".", stdout=want))
        case("TestGenConfigToStdoutMultipleTypesError", 336,
             expect(cli(["gen", "config", "foo", ep, "--output-types", "controlplane,worker", "--output", "-"], d),
                    fail=True, stdout_empty=True, stderr="can't use multiple output types with stdout"))
        inner = os.path.join(d, "inner")
        probs = expect(cli(["gen", "config", "foo", ep, "--output-types", "controlplane,worker", "--output", inner], d),
                       stdout_empty=True, stderr=".")
        if not (os.path.exists(os.path.join(inner, "controlplane.yaml")) and os.path.exists(os.path.join(inner, "worker.yaml"))):
            probs.append("controlplane.yaml and worker.yaml not both in the directory")
        if os.path.exists(os.path.join(inner, "talosconfig")):
            probs.append("a talosconfig was written")
        case("TestGenConfigMultipleTypesToDirectory", 354, probs)
        f = os.path.join(d, "worker-conf.yaml")
        probs = expect(cli(["gen", "config", "foo", ep, "--output-types", "worker", "--output", f], d),
                       stdout_empty=True, stderr=".")
        if not os.path.isfile(f):
            probs.append("no file at --output")
        elif oct(os.stat(f).st_mode & 0o777) != oct(0o644 & ~current_umask()):
            probs.append(f"mode {oct(os.stat(f).st_mode & 0o777)}, talosctl writes 0644 less the umask (config.go l.310)")
        case("TestGenConfigSingleTypeToFile", 374, probs)
        case("TestGenConfigInvalidOutputType", 410,
             expect(cli(["gen", "config", "foo", ep, "--output-types", "worker,foobar"], d),
                    fail=True, stdout_empty=True, stderr="invalid output type"))
        case("TestGenConfigNoOutputType", 426,
             expect(cli(["gen", "config", "foo", ep, "--output-types", ""], d),
                    fail=True, stdout_empty=True, stderr="at least one output type must be specified"))
    sys.exit(1 if failed else 0)


def current_umask():
    m = os.umask(0)
    os.umask(m)
    return m


if __name__ == "__main__":
    main()
