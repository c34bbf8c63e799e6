#!/usr/bin/env python3
"""OpenTofu judges every root of an out/ tree.

For each root under OUT/tofu/<env>/<root>, on a private copy of the whole out/ tree (tofu never
runs in out/):

  init       `tofu init` against a loopback S3 server (moto) with the root's own backend block,
             only its endpoint pointed at loopback, and its state encryption (a test passphrase);
             providers come from a filesystem mirror of real providers built from their Go modules
  validate   `tofu validate`: every error fails; every warning fails unless warnings.allow lists it
  plan       `tofu test` runs one `command = plan` per set of -var values that
             `fleetc apply <env> --plan` passes to this root, with the cloud providers mocked
             (`mock_provider`, which keeps their real schemas) and random real
  vars       every -var and TF_VAR_ that `fleetc apply <env> --plan` passes is declared
  mirror     fleetc's own --provider-mirror path: the CLI config `fleetc apply <env> --plan
             --provider-mirror <the harness's mirror>` says it writes for tofu is handed to a
             real `tofu init` of one root (TF_CLI_CONFIG_FILE, in a network namespace with no
             network, or behind a dead proxy where none can be made), which must install every
             provider of the root from that mirror
  talos api filter  (Scaleway cloud roots) in each of those plans the public gateway's SSH
             bastion admits exactly the variables file's admin_ranges and is enabled exactly
             when talos_api_open is true, and no gateway PAT rule forwards port 50000 (R13)
  state      (roots with an S3 backend whose outputs a cluster root reads) the root's outputs, as
             the mocked apply computes them, are applied for real into the loopback S3 with the
             root's encryption and lock file, then read back through `terraform_remote_state` with
             the consumer's own data block and encryption, and every `local.cloud[...]` path the
             consumer reads must be there

Prints one line per check, `ok tofu: …`, `FAIL tofu: …` or `skip tofu: …` (a check that cannot run
here, with the reason; never counted as ok).
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

HERE = Path(__file__).resolve().parent
PASSPHRASE = "fleetc-oracles-test-passphrase-0123456789"
CLOUD_PROVIDERS = {"scaleway", "proxmox"}  # mocked: they need a cloud; random runs for real

# Values the harness supplies where `fleetc apply --plan` masks a secret (`NAME=***`).
MASKED_VALUES = {
    "state_passphrase": PASSPHRASE,
}


# Test values for inputs a root's tfvars say the user gives with -var.
USER_INPUTS = {
    "project_id": "11111111-2222-3333-4444-555555555555",
}


def emit(status, what, reason=""):
    line = f"{status} tofu: {what}"
    if reason:
        reason = " ".join(reason.split())
        line += f": {reason[:600]}"
    print(line, flush=True)
    return status == "ok"


def read_tsv(path):
    rows = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            rows.append(line.split("\t"))
    return rows


def blocks(text, head):
    """Top-level or nested blocks starting with `head` (a regex), returned as their full text."""
    out = []
    for m in re.finditer(head, text):
        i = text.index("{", m.start())
        depth = 0
        for j in range(i, len(text)):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    out.append(text[m.start() : j + 1])
                    break
    return out


def config_files(root):
    """The configuration files OpenTofu loads: `*.tf` and `*.tofu`, a `.tf` dropped when a
    `.tofu` of the same name exists (opentofu v1.12.6 internal/configs/parser_config_dir.go,
    filterTfPathsWithTofuAlternatives)."""
    tofu = {p.stem for p in root.glob("*.tofu")}
    return sorted([p for p in root.glob("*.tf") if p.stem not in tofu] + list(root.glob("*.tofu")))


def root_text(root):
    return "\n".join(p.read_text() for p in config_files(root))


def declared_vars(root):
    return set(re.findall(r'^variable "([^"]+)"', root_text(root), re.M))


def provider_names(root):
    """Local names of required_providers in the root and the modules it calls."""
    text = root_text(root)
    names = set()
    for rp in blocks(text, r"required_providers\s*\{"):
        names |= set(re.findall(r"^\s*([a-z0-9_-]+)\s*=\s*\{", rp, re.M))
    for src in re.findall(r'source\s*=\s*"(\.\.?/[^"]+)"', text):
        mod = (root / src).resolve()
        if mod.is_dir():
            names |= provider_names(mod)
    return names


def provider_sources(root):
    text = root_text(root)
    out = {}
    for rp in blocks(text, r"required_providers\s*\{"):
        for name, body in re.findall(r"^\s*([a-z0-9_-]+)\s*=\s*\{([^}]*)\}", rp, re.M):
            m = re.search(r'source\s*=\s*"([^"]+)"', body)
            if m:
                out[name] = m.group(1)
    for src in re.findall(r'source\s*=\s*"(\.\.?/[^"]+)"', text):
        mod = (root / src).resolve()
        if mod.is_dir():
            for k, v in provider_sources(mod).items():
                out.setdefault(k, v)
    return out


class Moto:
    def __init__(self, python):
        self.python = python
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [python, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("moto server did not start")

    def make_bucket(self, name):
        code = (
            "import boto3,sys\n"
            "c=boto3.client('s3',endpoint_url=sys.argv[1],region_name='us-east-1',"
            "aws_access_key_id='test',aws_secret_access_key='test')\n"
            "try:\n c.create_bucket(Bucket=sys.argv[2])\n"
            "except c.exceptions.BucketAlreadyOwnedByYou:\n pass\n"
        )
        subprocess.run([self.python, "-c", code, self.url, name], check=True)

    def keys(self, bucket):
        code = (
            "import boto3,sys,json\n"
            "c=boto3.client('s3',endpoint_url=sys.argv[1],region_name='us-east-1',"
            "aws_access_key_id='test',aws_secret_access_key='test')\n"
            "r=c.list_objects_v2(Bucket=sys.argv[2])\n"
            "print(json.dumps([o['Key'] for o in r.get('Contents',[])]))\n"
        )
        return json.loads(subprocess.run([self.python, "-c", code, self.url, bucket], check=True, capture_output=True, text=True).stdout)

    def get(self, bucket, key):
        code = (
            "import boto3,sys\n"
            "c=boto3.client('s3',endpoint_url=sys.argv[1],region_name='us-east-1',"
            "aws_access_key_id='test',aws_secret_access_key='test')\n"
            "sys.stdout.buffer.write(c.get_object(Bucket=sys.argv[2],Key=sys.argv[3])['Body'].read())\n"
        )
        return subprocess.run([self.python, "-c", code, self.url, bucket, key], check=True, capture_output=True).stdout

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Tofu:
    def __init__(self, binary, cli_config, moto):
        self.binary = binary
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            "TF_CLI_CONFIG_FILE": str(cli_config),
            "TF_IN_AUTOMATION": "1",
            "CHECKPOINT_DISABLE": "1",
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_EC2_METADATA_DISABLED": "true",
            "TF_VAR_state_passphrase": PASSPHRASE,
        }
        self.moto = moto

    def run(self, root, *args, extra_env=None, timeout=900):
        env = dict(self.env, **(extra_env or {}))
        p = subprocess.run(
            [self.binary, f"-chdir={root}", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return p.returncode, p.stdout + p.stderr


def first_error(text):
    """The `Error:` paragraphs of tofu's human output, on one line each, joined."""
    lines = text.splitlines()
    errors = []
    for i, l in enumerate(lines):
        if "Error:" in l:
            chunk = []
            for x in lines[i : i + 14]:
                if x.strip(" │╷╵") == "" and chunk:
                    if len(chunk) > 3:
                        break
                    continue
                if "Error:" in x and chunk:
                    break
                chunk.append(x.strip(" │╷╵"))
            errors.append(" ".join(x for x in chunk if x))
    if errors:
        return " || ".join(errors[:4]) + (f" || (+{len(errors) - 4} more)" if len(errors) > 4 else "")
    return " ".join(text.split()[-60:])


def backend_override(root, moto_url):
    """An override file that keeps the root's backend block but points it at loopback."""
    text = (root / "terraform.tf").read_text() if (root / "terraform.tf").exists() else ""
    bs = blocks(text, r'backend\s+"s3"\s*\{')
    if not bs:
        return None
    b = bs[0]
    b2 = re.sub(r"endpoints\s*=\s*\{[^}]*\}", f'endpoints = {{\n      s3 = "{moto_url}"\n    }}', b)
    b2 = b2.rstrip("}").rstrip() + "\n    use_path_style = true\n  }"
    bucket = re.search(r'bucket\s*=\s*"([^"]+)"', b).group(1)
    key = re.search(r'\bkey\s*=\s*"([^"]+)"', b).group(1)
    return f"terraform {{\n  {b2}\n}}\n", bucket, key


def local_dirs(root):
    """The root and the local modules it calls."""
    return [root] + [(root / src).resolve() for src in re.findall(r'source\s*=\s*"(\.\.?/[^"]+)"', root_text(root))]


def strip_for_test(root):
    """Removes import blocks (root) and cross-type moved blocks (root and local modules)."""
    removed = []
    dirs = local_dirs(root)
    for d in dirs:
        for f in sorted(d.glob("*.tf")):
            text = f.read_text()
            new = text
            for b in blocks(text, r"(?m)^import\s*\{"):
                new = new.replace(b, "")
                removed.append("import")
            for b in blocks(text, r"(?m)^moved\s*\{"):
                fr = re.search(r"from\s*=\s*([a-z0-9_]+)\.", b)
                to = re.search(r"to\s*=\s*([a-z0-9_]+)\.", b)
                if fr and to and fr.group(1) != to.group(1) and fr.group(1) != "module":
                    new = new.replace(b, "")
                    removed.append("moved across types")
            if new != text:
                f.write_text(new)
    return ", ".join(f"{removed.count(k)} {k} block(s)" for k in sorted(set(removed)))


def config_types(root, kind, provider):
    """Resource or data source types of `provider` in the root and its local modules."""
    text = root_text(root)
    for src in re.findall(r'source\s*=\s*"(\.\.?/[^"]+)"', text):
        mod = (root / src).resolve()
        if mod.is_dir():
            text += root_text(mod)
    return sorted(set(re.findall(rf'^{kind} "({provider}_[a-z0-9_]+)"', text, re.M)))


def strip_write_only(root):
    """Turns write-only arguments (`x_wo`) into their plain twins (`x`, a test value) and drops `x_wo_version`,
    in the root and its local modules (only for the copy whose mocked apply yields the outputs)."""
    dirs = local_dirs(root)
    for d in dirs:
        for f in sorted(d.glob("*.tf")):
            text = f.read_text()
            new = re.sub(r"(?m)^\s*[a-z_]+_wo_version\s*=.*\n", "", text)
            new = re.sub(r"(?m)^(\s*)([a-z_]+)_wo(\s*)=.*$", r'\1\2 \3= "Oracle-test-secret-0!"', new)
            if new != text:
                f.write_text(new)


def hcl_value(v):
    if v in ("true", "false") or re.fullmatch(r"-?[0-9]+", v):
        return v
    return json.dumps(v)


def apply_plan_vars(fleetc, fleet, env):
    """{root: (set of -var assignments as tuples, set of TF_VAR_ names)} from `fleetc apply --plan`."""
    # As a new user's shell runs it: fleetc apply refuses variables that steer its tools
    # (TF_*, AWS_*, KUBECONFIG, …, docs/apply.md), which a CI machine may set.
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    p = subprocess.run([fleetc, "apply", env, "--plan", "--fleet", str(fleet), "--color", "never"],
                       capture_output=True, text=True, env=clean)
    if p.returncode != 0 and not p.stdout:
        return None, p.stderr.strip()
    roots = {}
    global_tfvars = set()
    for line in p.stdout.splitlines():
        if line.startswith("# every tofu"):
            global_tfvars |= set(re.findall(r"TF_VAR_([A-Za-z0-9_]+)=", line))
        m = re.search(r"tofu -chdir=\S*?/tofu/([^/\s]+)/([^/\s]+)\s", line)
        if not m:
            continue
        root = m.group(2)
        sets, tfv = roots.setdefault(root, (set(), set()))
        tfv |= set(re.findall(r"TF_VAR_([A-Za-z0-9_]+)=", line.split("tofu -chdir")[0]))
        assigns = tuple(sorted(re.findall(r"(?:^|\s)'?-var=([A-Za-z0-9_]+)=([^\s']*)'?", line)))
        if " plan " in line or " apply " in line:
            sets.add(assigns)
    for root in roots:
        roots[root][1].update(global_tfvars)
    return roots, None


def variables_block(assigns):
    """A run block's `variables { … }` for a set of -var assignments (none: no block)."""
    if not assigns:
        return []
    return ["  variables {", *(f"    {k} = {hcl_value(v)}" for k, v in assigns), "  }"]


def harness_test(root, mocks, var_sets, outputs):
    """The tofu test file: cloud providers mocked, one plan per -var set, one mocked apply."""
    lines = ["# Written by fleetc's oracles into a private copy; never into out/.", ""]
    tfvars = "\n".join(p.read_text() for p in sorted(root.glob("*.auto.tfvars")))
    for m in sorted(mocks):
        lines.append(f'mock_provider "{m}" {{')
        defaults = {}
        for kind, prov, typ, attr, value in read_tsv(HERE / "mocks.tsv"):
            if prov != m:
                continue
            if typ == "*":
                used = config_types(root, kind, m)
            else:
                used = [typ]
            for t in used:
                v = value
                if v == "zoned-uuid":
                    h = hashlib.sha256(t.encode()).hexdigest()
                    v = f"fr-par-2/{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"
                elif v.startswith("json:"):
                    v = json.loads(v[5:])
                elif v.startswith("tfvar:"):
                    mv = re.search(rf'^{v[6:]}\s*=\s*"([^"]*)"', tfvars, re.M)
                    if not mv:
                        continue
                    v = mv.group(1)
                defaults.setdefault((kind, t), {})[attr] = v
        for (kind, typ), attrs in sorted(defaults.items()):
            lines.append(f'  mock_{kind} "{typ}" {{')
            lines.append("    defaults = {")
            for a, v in sorted(attrs.items()):
                lines.append(f"      {a} = {json.dumps(v)}")
            lines.append("    }")
            lines.append("  }")
        lines += ["}", ""]
    for i, assigns in enumerate(sorted(var_sets) or [()]):
        lines.append(f'run "plan_{i}" {{')
        lines.append("  command = plan")
        lines += variables_block(assigns)
        lines.append("}")
        lines.append("")
    if outputs:
        assigns = sorted(var_sets)[0] if var_sets else ()
        lines.append('run "outputs" {')
        lines.append("  command = apply")
        lines += variables_block(assigns)
        lines.append("  assert {")
        obj = ", ".join(f"{o} = output.{o}" for o in outputs)
        lines.append(f'    condition     = jsonencode({{ {obj} }}) == "never"')
        lines.append(f'    error_message = "ORACLE-OUTPUTS ${{jsonencode({{ {obj} }})}} END"')
        lines.append("  }")
        lines.append("}")
    (root / "oracle.tftest.hcl").write_text("\n".join(lines) + "\n")


def check_env(args, tofu, moto, work, env, roots_vars, known_warnings):
    ok = True
    env_dir = work / "tofu" / env
    cloud_outputs = {}
    for root in sorted(p for p in env_dir.iterdir() if (p / "terraform.tf").exists()):
        name = f"{env}/{root.name}"
        declared = declared_vars(root)
        assigns, tfvars = roots_vars.get(root.name, (set(), set()))
        passed = {k for s in assigns for k, _ in s}
        undeclared = sorted((passed | tfvars) - declared)
        if undeclared:
            ok &= emit("FAIL", f"{name} vars", "fleetc apply passes undeclared " + ", ".join(("-var=" if v in passed else "TF_VAR_") + v for v in undeclared))
        elif passed or tfvars:
            ok &= emit("ok", f"{name} vars", f"{len(passed | tfvars)} passed by `fleetc apply --plan`, all declared")

        sources = provider_sources(root)
        missing = sorted(f"{s}" for s in sources.values() if s not in args.mirrored)
        if missing:
            emit("skip", f"{name} init/validate/plan", "provider " + ", ".join(missing) + " is not served by the Go module proxy (oracles/tofu/README.md)")
            continue

        ov = backend_override(root, moto.url)
        if ov:
            text, bucket, key = ov
            (root / "oracle_override.tf").write_text(text)
            moto.make_bucket(bucket)
        code, out = tofu.run(root, "init", "-input=false", "-no-color")
        if code != 0:
            ok &= emit("FAIL", f"{name} init", first_error(out))
            continue
        ok &= emit("ok", f"{name} init", "backend s3 on loopback, encrypted" if ov else "local state")

        code, out = tofu.run(root, "validate", "-json", "-no-color")
        try:
            res = json.loads(out[out.index("{") :])
        except ValueError:
            ok &= emit("FAIL", f"{name} validate", out)
            continue
        bad = []
        for d in res.get("diagnostics", []):
            summary = d.get("summary", "")
            where = d.get("range", {}).get("filename", "")
            if d.get("severity") == "warning" and any(w in summary for w in known_warnings):
                emit("ok", f"{name} validate warning (listed in warnings.allow)", f"{summary} at {where}")
                continue
            bad.append(f"{d.get('severity')}: {summary}: {d.get('detail', '')} at {where}:{d.get('range', {}).get('start', {}).get('line', '')}")
        if bad or not res.get("valid"):
            ok &= emit("FAIL", f"{name} validate", "; ".join(bad) or "invalid")
            continue
        ok &= emit("ok", f"{name} validate")

        mocks = {n for n in provider_names(root) if n in CLOUD_PROVIDERS}
        outputs = re.findall(r'^output "([^"]+)"', (root / "outputs.tf").read_text(), re.M) if (root / "outputs.tf").exists() else []
        want_outputs = []
        if ov and root.name == "cloud":
            # only the outputs a cluster root reads; absent a cluster root, all of them
            consumer = root.parent / "cluster" / "main.tf"
            read = set(re.findall(r"terraform_remote_state\.cloud\.outputs\.([a-z_]+)", consumer.read_text())) if consumer.exists() else set()
            want_outputs = [o for o in outputs if o in read] if read else outputs
        # Inputs the root's own tfvars tell the user to give with -var (not run by `fleetc apply`).
        user_vars = set()
        for tfvars in root.glob("*.auto.tfvars"):
            for var in re.findall(r"^# ([a-z0-9_]+):.*give it with -var", tfvars.read_text(), re.M):
                user_vars.add((var, USER_INPUTS.get(var, f"oracle-{var}")))
        if user_vars:
            assigns = {tuple(sorted(set(a) | user_vars)) for a in (assigns or {()})}
        # `tofu test` panics on import blocks and on moves across resource types under a
        # mocked provider (opentofu v1.11.5 internal/tofu/provider_for_test_framework.go:178,
        # :182): the plan runs on a second copy without them; `validate` above judged them.
        shutil.copytree(work, work.parent / "test" / env / "out" / root.name, symlinks=True)
        troot = work.parent / "test" / env / "out" / root.name / "tofu" / env / root.name
        stripped = strip_for_test(troot)
        harness_test(troot, mocks, assigns, [])
        code, out = tofu.run(troot, "test", "-no-color", "-verbose")
        plan_failed = [l for l in out.splitlines() if re.search(r'run "plan_\d+"\.\.\. fail', l)]
        plans = len(re.findall(r'run "plan_\d+"\.\.\.', out))
        if plan_failed or plans == 0:
            ok &= emit("FAIL", f"{name} plan", first_error(out))
            continue
        note = f"; without {stripped} for the test framework" if stripped else ""
        ok &= emit("ok", f"{name} plan", f"{plans} plan(s) against the real provider schemas, mocked: {', '.join(sorted(mocks)) or 'none'}{note}")
        if root.name == "cloud" and "scaleway" in mocks:
            ok &= check_talos_api_filter(name, root, assigns, out)
        if want_outputs:
            # The outputs come from a mocked apply on a third copy without write-only arguments:
            # the test framework's mock echoes them into the new state, which OpenTofu refuses
            # ("inconsistent values for sensitive attribute"; opentofu v1.11.5
            # internal/tofu/provider_for_test_framework.go), where a real provider returns null.
            oroot_top = work.parent / "outputs" / env / root.name
            shutil.copytree(work, oroot_top, symlinks=True)
            oroot = oroot_top / "tofu" / env / root.name
            strip_for_test(oroot)
            strip_write_only(oroot)
            harness_test(oroot, mocks, assigns, want_outputs)
            code, oout = tofu.run(oroot, "test", "-no-color")
            m = re.search(r"ORACLE-OUTPUTS (.*?) END", oout.replace("\n", " "), re.S)
            if not m:
                ok &= emit("FAIL", f"{name} outputs", "the mocked apply produced no outputs: " + first_error(oout))
                continue
            raw = re.sub(r"\s+", " ", m.group(1))
            try:
                values = json.loads(raw)
                nulls = [k for k, v in values.items() if v is None]
                if nulls:
                    ok &= emit("FAIL", f"{name} outputs", "the mocked apply left these outputs null: " + ", ".join(nulls))
                    continue
                cloud_outputs[root.name] = (values, bucket, key, root)
            except ValueError:
                ok &= emit("FAIL", f"{name} outputs", f"unreadable outputs JSON: {raw[:200]}")
    for src_root, (values, bucket, key, root) in cloud_outputs.items():
        ok &= check_state_path(tofu, moto, work, env, root, values, bucket, key)
    return ok


def planned_resources(run_text):
    """{address: block text} of one `tofu test -verbose` run's printed plan."""
    found = {}
    for m in re.finditer(r"^  # (\S+) (?:will be|must be) [^\n]*\n(.*?)(?=^  # |\Z)", run_text, re.M | re.S):
        found[m.group(1)] = m.group(2)
    return found


def planned_list(block, attr):
    m = re.search(rf"^\s*[+~]? ?{attr}\s*=\s*\[(.*?)\]", block, re.M | re.S)
    return sorted(re.findall(r'"([^"]*)"', m.group(1))) if m else None


def planned_scalar(block, attr):
    m = re.search(rf"^\s*[+~]? ?{attr}\s*=\s*(?:\S+ -> )?(\S+)", block, re.M)
    return m.group(1).strip('"') if m else None


def check_talos_api_filter(name, root, var_sets, test_out):
    """R13 (issue 34): in every plan `fleetc apply` makes of a Scaleway cloud root, the public
    gateway's SSH bastion admits exactly the fleet's admin ranges and is enabled exactly while
    `talos_api_open` is true, and no gateway rule forwards port 50000 (a PAT rule has no source
    filter). Read from the plans the real provider schemas produced (`tofu test -verbose`)."""
    tfvars = "\n".join(p.read_text() for p in sorted(root.glob("*.auto.tfvars")))
    m = re.search(r"^admin_ranges\s*=\s*\[(.*?)\]", tfvars, re.M | re.S)
    admin = sorted(re.findall(r'"([^"]*)"', m.group(1))) if m else []
    runs = re.split(r'^\s*run "(plan_\d+)"\.\.\. \w+\s*$', test_out, flags=re.M)
    plans = {runs[i]: runs[i + 1] for i in range(1, len(runs) - 1, 2)}
    sets = sorted(var_sets) or [()]
    bad, seen = [], 0
    for i, assigns in enumerate(sets):
        text = plans.get(f"plan_{i}")
        if text is None:
            bad.append(f"plan_{i}: no plan printed")
            continue
        talos_open = dict(assigns).get("talos_api_open", "false") == "true"
        res = planned_resources(text)
        for addr, block in res.items():
            if ".scaleway_vpc_public_gateway_pat_rule." in addr and planned_scalar(block, "private_port") == "50000":
                bad.append(f"plan_{i}: {addr} forwards a gateway port to 50000 from any source")
            if re.search(r"\.scaleway_vpc_public_gateway\.[^.]+$", addr):
                seen += 1
                allowed = planned_list(block, "allowed_ip_ranges")
                enabled = planned_scalar(block, "bastion_enabled")
                if allowed != admin:
                    bad.append(f"plan_{i}: {addr} bastion admits {allowed}, not admin_ranges {admin}")
                if enabled != ("true" if talos_open else "false"):
                    bad.append(f"plan_{i}: {addr} bastion_enabled = {enabled} with talos_api_open={str(talos_open).lower()}")
    if not bad and seen == 0:
        bad.append("no public gateway in any plan")
    if bad:
        return emit("FAIL", f"{name} talos api filter", "; ".join(bad))
    return emit("ok", f"{name} talos api filter", f"{len(sets)} plan(s): the gateway's SSH bastion admits exactly {' '.join(admin)} and is enabled only with talos_api_open=true; no gateway rule forwards port 50000")


def check_state_path(tofu, moto, work, env, cloud_root, values, bucket, key):
    """The cloud root's outputs, applied for real into S3, read by the cluster root's data block."""
    name = f"{env}/{cloud_root.name} → {env}/cluster state"
    writer = work / "state" / env / "writer"
    writer.mkdir(parents=True)
    tf = (cloud_root / "terraform.tf").read_text()
    tf = re.sub(r"required_providers\s*\{.*?\n  \}\n", "", tf, flags=re.S)
    (writer / "terraform.tf").write_text(tf)
    shutil.copy(cloud_root / "oracle_override.tf", writer / "oracle_override.tf")
    (writer / "variables.tf").write_text('variable "state_passphrase" {\n  type      = string\n  sensitive = true\n}\n')
    (writer / "values.json").write_text(json.dumps(values))
    (writer / "outputs.tf").write_text("".join(f'output "{k}" {{\n  value = jsondecode(file("${{path.module}}/values.json"))["{k}"]\n}}\n' for k in values))
    code, out = tofu.run(writer, "init", "-input=false", "-no-color")
    if code == 0:
        code, out = tofu.run(writer, "apply", "-input=false", "-auto-approve", "-no-color")
    if code != 0:
        return emit("FAIL", name, "writing the outputs into S3: " + first_error(out))
    stored = moto.get(bucket, key)
    if b'"encrypted_data"' not in stored and b"encrypted_data" not in stored:
        return emit("FAIL", name, f"s3://{bucket}/{key} is not encrypted")
    if any(k.endswith(".tflock") for k in moto.keys(bucket)):
        return emit("FAIL", name, "the lock file was left behind after apply")

    cluster = cloud_root.parent / "cluster"
    if not (cluster / "main.tf").exists():
        return emit("ok", name, f"outputs applied into s3://{bucket}/{key}, encrypted; no cluster root reads them")
    reader = work / "state" / env / "reader"
    reader.mkdir(parents=True)
    ctf = (cluster / "terraform.tf").read_text()
    ctf = re.sub(r"required_providers\s*\{.*?\n  \}\n", "", ctf, flags=re.S)
    ctf = re.sub(r'\n  backend\s+"s3"\s*\{.*?\n  \}\n', "\n", ctf, flags=re.S)  # reader keeps local state
    (reader / "terraform.tf").write_text(ctf)
    main = (cluster / "main.tf").read_text()
    data = blocks(main, r'data\s+"terraform_remote_state"\s+"cloud"\s*\{')
    if not data:
        return emit("FAIL", name, "the cluster root has no terraform_remote_state data block")
    paths = sorted(set(re.findall(r'local\.cloud\["([^"]+)"\]\.([a-z_]+)', main)))
    reads = "\n".join(f'output "read_{i}" {{\n  value = data.terraform_remote_state.cloud.outputs.clusters["{c}"].{f}\n}}' for i, (c, f) in enumerate(paths))
    (reader / "main.tf").write_text(data[0] + "\n\n" + reads + "\n")
    # the consumer's own variables and values, only its S3 endpoint pointed at loopback
    (reader / "variables.tf").write_text("\n".join(blocks(root_text(cluster), r'variable\s+"(cloud_state|state_passphrase)"\s*\{')) + "\n")
    tfvars = next(cluster.glob("*.auto.tfvars")).read_text()
    cs = blocks(tfvars, r"cloud_state\s*=\s*\{")[0]
    cs = re.sub(r'endpoint\s*=\s*"[^"]*"', f'endpoint = "{moto.url}"', cs)
    (reader / "oracle.auto.tfvars").write_text(cs + "\n")
    (reader / "oracle_override.tf").write_text(
        'data "terraform_remote_state" "cloud" {\n  config = merge('
        + re.sub(r"^config\s*=\s*", "", blocks(data[0], r"config\s*=\s*\{")[0])
        + ", { use_path_style = true })\n}\n"
    )
    code, out = tofu.run(reader, "init", "-input=false", "-no-color")
    if code == 0:
        code, out = tofu.run(reader, "apply", "-input=false", "-auto-approve", "-no-color")
    if code != 0:
        return emit("FAIL", name, "the cluster root's terraform_remote_state: " + first_error(out))
    code, out = tofu.run(reader, "output", "-json", "-no-color")
    got = json.loads(out[out.index("{") :]) if code == 0 else {}
    if len(got) != len(paths):
        return emit("FAIL", name, f"read {len(got)} of {len(paths)} outputs the cluster root uses")
    return emit("ok", name, f"written encrypted through the backend (use_lockfile, no lock left behind), read back through terraform_remote_state: {len(paths)} paths the cluster root uses ({', '.join(f'{c}.{f}' for c, f in paths)})")

NO_NETWORK = None  # how the mirror check keeps tofu off the network, found once


def no_network_prefix():
    """A command prefix that runs tofu with no network at all: a new network namespace (only a
    loopback that is down), as root or as an unprivileged user; None where neither works."""
    global NO_NETWORK
    if NO_NETWORK is None:
        NO_NETWORK = []
        for prefix in (["unshare", "--net"], ["unshare", "--map-root-user", "--net"]):
            try:
                if subprocess.run(prefix + ["true"], capture_output=True, timeout=30).returncode == 0:
                    NO_NETWORK = prefix
                    break
            except (OSError, subprocess.TimeoutExpired):
                pass
    return NO_NETWORK or None


def fleetc_cli_config(fleetc, fleet, env, mirror):
    """(config text, env note) `fleetc apply <env> --plan --provider-mirror MIRROR` says tofu
    gets: the CLI config fleetc writes to $PRIVATE/tofu-cli.tfrc and the variables listed for
    every tofu command, or (None, why)."""
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    p = subprocess.run([fleetc, "apply", env, "--plan", "--fleet", str(fleet), "--provider-mirror", str(mirror),
                        "--format", "json", "--color", "never"], capture_output=True, text=True, env=clean)
    try:
        plan = json.loads(p.stdout)
    except ValueError:
        return None, f"`fleetc apply {env} --plan --provider-mirror` printed no plan: {p.stderr.strip()[:300]}"
    notes = [e["note"] for s in plan.get("steps", []) for e in s.get("entries", []) if "note" in e]
    config = next((n.split(" holds\n", 1)[1] for n in notes
                   if n.startswith("tofu installs providers from") and " holds\n" in n), None)
    env_note = next((n for n in notes if n.startswith("every tofu command below also gets")), "")
    if config is None:
        return None, f"`fleetc apply {env} --plan --provider-mirror` shows no CLI config: {plan.get('error')}"
    return (config, env_note), None


def check_fleetc_mirror(args, work, fleet, only_env):
    """fleetc's --provider-mirror reaches a real `tofu init`: one root whose providers are all
    in the harness's mirror, initialised with nothing but the CLI config fleetc writes, offline.
    PASSes only if tofu installed every provider of the root from that mirror."""
    roots = []
    for env_dir in sorted((work / "tofu").iterdir()):
        if env_dir.name == "modules" or not env_dir.is_dir() or (only_env and env_dir.name not in only_env):
            continue
        for root in sorted(p for p in env_dir.iterdir() if (p / "terraform.tf").exists()):
            sources = set(provider_sources(root).values())
            if sources and sources <= set(args.mirrored):
                roots.append((len(sources), env_dir.name, root))
    if not roots:
        return emit("skip", "fleetc --provider-mirror", "no root whose providers are all in the harness's mirror")
    _, env, root = max(roots, key=lambda r: r[0])  # the most providers; the first such root
    name = f"{env}/{root.name} init through fleetc --provider-mirror"
    got, why = fleetc_cli_config(args.fleetc, fleet, env, args.fleetc_mirror)
    if got is None:
        return emit("FAIL", name, why)
    config, env_note = got
    if "TF_CLI_CONFIG_FILE=$PRIVATE/tofu-cli.tfrc" not in env_note.split():
        return emit("FAIL", name, f"fleetc's plan does not give every tofu command TF_CLI_CONFIG_FILE=$PRIVATE/tofu-cli.tfrc: {env_note}")
    versions = {r[0]: r[1] for r in read_tsv(HERE / "providers.tsv")}
    sources = sorted(set(provider_sources(root).values()))
    with tempfile.TemporaryDirectory(prefix="fleetc-oracles-mirror-") as tmp:
        tmp = Path(tmp)
        rc = tmp / "tofu-cli.tfrc"
        rc.write_text(config)
        rc.chmod(0o600)
        home = tmp / "home"
        home.mkdir()
        copy = tmp / "out"
        shutil.copytree(work, copy, symlinks=True,
                        ignore=shutil.ignore_patterns(".terraform", ".terraform.lock.hcl", "oracle_override.tf", "*.tftest.hcl"))
        croot = copy / "tofu" / env / root.name
        # What fleetc gives tofu for this config (src/apply/preflight.rs tool_path), and a
        # HOME with nothing in it: no ~/.terraformrc, no implied plugin directory.
        tenv = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TF_IN_AUTOMATION": "1",
                "TF_CLI_CONFIG_FILE": str(rc)}
        prefix = no_network_prefix()
        if prefix:
            how = "in a network namespace with no network"
        else:
            # No namespace here: every HTTP client of tofu (proxy-aware net/http) meets a dead proxy.
            dead = "http://127.0.0.1:9"
            tenv.update({"HTTPS_PROXY": dead, "HTTP_PROXY": dead, "https_proxy": dead, "http_proxy": dead})
            how = "behind a dead proxy (no network namespace here)"
        init = (prefix or []) + [args.tofu, f"-chdir={croot}", "init", "-backend=false", "-input=false", "-no-color"]
        # The control: in the same environment, a CLI config that asks the registry directly
        # must fail to reach it, or "offline" is not proven.
        direct = tmp / "direct.tfrc"
        direct.write_text("provider_installation {\n  direct {}\n}\n")
        p = subprocess.run(init, env=dict(tenv, TF_CLI_CONFIG_FILE=str(direct)), capture_output=True, text=True, timeout=900)
        if p.returncode == 0 or "registry.opentofu.org" not in p.stdout + p.stderr:
            return emit("FAIL", name, f"the control init {how} asking the registry directly did not fail on the registry: " + first_error(p.stdout + p.stderr))
        shutil.rmtree(croot / ".terraform", ignore_errors=True)
        p = subprocess.run(init, env=tenv, capture_output=True, text=True, timeout=900)
        out = p.stdout + p.stderr
        if p.returncode != 0:
            return emit("FAIL", name, f"tofu init with fleetc's CLI config ({args.fleetc_mirror}) {how}: " + first_error(out))
        lock = (croot / ".terraform.lock.hcl").read_text() if (croot / ".terraform.lock.hcl").exists() else ""
        bad = []
        for src in sources:
            v = versions.get(src)
            installed = re.search(rf"- Installed {re.escape(src)} v{re.escape(v or '')} ", out)
            locked = re.search(rf'provider "registry\.opentofu\.org/{re.escape(src)}" \{{\s*version\s*=\s*"{re.escape(v or "")}"', lock)
            unpacked = croot / ".terraform" / "providers" / "registry.opentofu.org" / src / (v or "?") / "linux_amd64"
            if not (installed and locked and unpacked.exists()):
                bad.append(f"{src} {v}: installed={bool(installed)} locked={bool(locked)} unpacked={unpacked.exists()}")
        if bad:
            return emit("FAIL", name, "init did not install every provider from the mirror: " + "; ".join(bad))
        return emit("ok", name, f"{how}, tofu installed {', '.join(f'{s} {versions[s]}' for s in sources)} from the mirror fleetc's config names, and locked them (a control init asking the registry directly failed there)")


class _kept:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        shutil.rmtree(self.path, ignore_errors=True)
        os.makedirs(self.path)
        return self.path

    def __exit__(self, *exc):
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tofu", required=True)
    ap.add_argument("--cli-config", required=True)
    ap.add_argument("--mirrored", required=True, help="comma-separated provider sources in the mirror")
    ap.add_argument("--python", required=True, help="python with moto[server]")
    ap.add_argument("--fleetc", required=True)
    ap.add_argument("--fleet", help="the fleet file whose `fleetc apply --plan` is read (default: OUT/../fleet.kdl)")
    ap.add_argument("--env", action="append", help="only these environments")
    ap.add_argument("--mirror", required=True, help="the harness's provider mirror (the directory the CLI config names)")
    ap.add_argument("--fleetc-mirror", help="the directory given to `fleetc apply --provider-mirror` (default: --mirror; the self-test gives one without the providers)")
    ap.add_argument("--mirror-only", action="store_true", help="only the fleetc --provider-mirror check")
    args = ap.parse_args()
    args.mirrored = set(args.mirrored.split(","))
    args.fleetc_mirror = str(Path(args.fleetc_mirror or args.mirror).resolve())
    out = Path(args.out).resolve()
    fleet = Path(args.fleet).resolve() if args.fleet else out.parent / "fleet.kdl"
    if not (out / "tofu").is_dir():
        emit("ok", f"{out.parent.name}: no OpenTofu roots")
        return 0
    known_warnings = [r[0] for r in read_tsv(HERE / "warnings.allow")] if (HERE / "warnings.allow").exists() else []
    if args.mirror_only:
        with tempfile.TemporaryDirectory(prefix="fleetc-oracles-tofu-") as tmp:
            work = Path(tmp) / "out"
            shutil.copytree(out, work, symlinks=False, ignore=shutil.ignore_patterns(".terraform", "*.tfstate*", ".terraform.lock.hcl"))
            check_fleetc_mirror(args, work, fleet, args.env)
        return 0
    moto = Moto(args.python)
    ok = True
    try:
        keep = os.environ.get("ORACLES_KEEP")  # debugging: keep the private copies
        with (tempfile.TemporaryDirectory(prefix="fleetc-oracles-tofu-") if not keep else _kept(keep)) as tmp:
            work = Path(tmp) / "out"
            shutil.copytree(out, work, symlinks=False, ignore=shutil.ignore_patterns(".terraform", "*.tfstate*", ".terraform.lock.hcl"))
            tofu = Tofu(args.tofu, args.cli_config, moto)
            ok &= check_fleetc_mirror(args, work, fleet, args.env)
            for env_dir in sorted((work / "tofu").iterdir()):
                if env_dir.name == "modules" or not env_dir.is_dir():
                    continue
                if args.env and env_dir.name not in args.env:
                    continue
                roots_vars, err = apply_plan_vars(args.fleetc, fleet, env_dir.name)
                if roots_vars is None:
                    ok &= emit("FAIL", f"{env_dir.name} apply --plan", err)
                    roots_vars = {}
                ok &= check_env(args, tofu, moto, work, env_dir.name, roots_vars, known_warnings)
    finally:
        moto.stop()
    return 0  # the FAIL lines are the verdict; the exit code says only that it ran


if __name__ == "__main__":
    sys.exit(main())
