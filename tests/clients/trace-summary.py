#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summarize a CLIENTS_TRACE directory (see trace-runtime.py) as text.

  trace-summary.py TRACE_DIR > invocations.txt
  trace-summary.py TRACE_DIR --config CHECK OUT.json
      the config.json of the first container created in check CHECK (e.g.
      "docker run echo"), with the same placeholders

First every distinct command shape the clients used (paths and IDs replaced
by placeholders), then, check by check, each call in order with its exit
status and duration, and the data handed over besides argv (update's stdin,
what ps printed, the runtime's log after a failure).
"""
import collections
import json
import os
import re
import shlex
import sys

HEX64 = re.compile(r"[0-9a-f]{64}")


ID_NAMES = {}


def name_ids(text):
    """Container and exec IDs become $C1, $C2, ... in order of appearance."""
    def sub(m):
        return ID_NAMES.setdefault(m.group(0), f"$C{len(ID_NAMES) + 1}")
    return HEX64.sub(sub, text)


CG_PARENT = ""


def sanitize(text, work, bundle, keep_ids=False):
    if CG_PARENT:
        text = text.replace(CG_PARENT, "$CG_PARENT")
    if bundle:
        text = text.replace(bundle, "$BUNDLE")
    if work:
        text = text.replace(work, "$WORK")
    text = text.replace("$WORK/docker/exec/runtime-runc/moby", "$ROOT")
    text = text.replace("$WORK/containerd/runc/psrun-clients", "$ROOT")
    text = re.sub(r"\$BUNDLE/[0-9a-f]{64}\.pid", "$BUNDLE/$EXEC_ID.pid", text)
    text = re.sub(r"/tmp/runc-process[0-9]+", "$TMPDIR/runc-process$N", text)
    text = re.sub(r"/tmp/pty[0-9]+/pty\.sock", "$TMPDIR/pty$N/pty.sock", text)
    if keep_ids:
        return name_ids(text)
    text = re.sub(r"\$BUNDLE/e[0-9]+\.pid", "$BUNDLE/$EXEC_ID.pid", text)
    # The harness's ctr container names (c-run, c-exit, ...) are IDs too.
    text = re.sub(r"^c-[a-z]+$", "$ID", text)
    return HEX64.sub("$ID", text)


def shape(args):
    """The command with its variable parts as placeholders, for the index."""
    return " ".join(shlex.quote(a) if not a.startswith("$") else a for a in args)


def main(argv):
    global CG_PARENT
    if len(argv) not in (2, 5) or (len(argv) == 5 and argv[2] != "--config"):
        sys.stderr.write(__doc__)
        return 2
    tdir = argv[1]
    with open(os.path.join(tdir, "invocations.log")) as f:
        lines = f.read().splitlines()
    work = ""
    for line in lines:
        if line.startswith("# work "):
            work = line[len("# work "):]
        elif line.startswith("# cgroup-parent "):
            CG_PARENT = line[len("# cgroup-parent "):]
    lines = [line for line in lines if not line.startswith("# ")]

    sections = collections.OrderedDict()
    section = "(set-up)"
    calls = {}
    for line in lines:
        if line.startswith("## "):
            section = line[3:]
            sections.setdefault(section, [])
            continue
        pid, _, rest = line.partition(" ")
        m = re.fullmatch(r"exit=(\d+)(?: ms=(\d+))?", rest)
        if m:
            if pid in calls:
                calls[pid]["exit"] = int(m.group(1))
                calls[pid]["ms"] = m.group(2)
            continue
        words = shlex.split(rest)
        cwd, args = words[0], words[1:]
        # The shims run the runtime in the bundle directory.
        bundle = cwd if "io.containerd.runtime.v2.task" in cwd else ""
        call = {"pid": pid, "args": [sanitize(a, work, bundle) for a in args],
                "named": [sanitize(a, work, bundle, keep_ids=True) for a in args],
                "exit": None, "ms": None, "bundle": bundle,
                "cwd": "$BUNDLE" if bundle else "(the daemon's cwd)"}
        calls[pid] = call
        sections.setdefault(section, []).append(call)

    if len(argv) == 5:
        return write_config(tdir, sections, argv[3], argv[4], work)

    out = []
    # Index per client: the checks are named "docker ..." and "containerd ...";
    # the set-up calls (dockerd's --version) are dockerd's.
    clients = collections.OrderedDict()
    for name, sec in sections.items():
        client = "containerd" if name.startswith("containerd") else "docker"
        for c in sec:
            clients.setdefault(client, collections.Counter())[shape(c["args"])] += 1
    for client, shapes in clients.items():
        out.append(f"Distinct runtime command lines from {client} (count, argv after the binary):")
        for s, n in sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"  {n:3d}  {s}")
        out.append("")
    out.append("Calls by check, in order (exit status, duration):")
    for name, sec in sections.items():
        out.append("")
        out.append(f"## {name}")
        if not sec:
            out.append("  (no runtime call)")
        for c in sec:
            res = f"exit {c['exit']}" if c["exit"] is not None else "exit ?"
            if c["ms"]:
                res += f", {c['ms']} ms"
            out.append(f"  {shape(c['named'])}   -> {res}")
            for kind in ("stdin", "stdout", "log"):
                path = os.path.join(tdir, f"{kind}-{c['pid']}." + ("json" if kind == "stdin" else "txt"))
                if os.path.exists(path):
                    with open(path) as f:
                        body = f.read().strip()
                    label = {"stdin": "stdin", "stdout": "stdout", "log": "--log file, last lines"}[kind]
                    out.append(f"      {label}:")
                    for bl in body.splitlines():
                        out.append(f"        {sanitize(bl, work, '')}")
    print("\n".join(out))
    return 0


def write_config(tdir, sections, check, out_path, work):
    for c in sections.get(check, []):
        path = os.path.join(tdir, f"config-{c['pid']}.json")
        if os.path.exists(path):
            with open(path) as f:
                config = json.load(f)

            def clean(v):
                if isinstance(v, str):
                    return sanitize(v, work, c["bundle"])
                if isinstance(v, list):
                    return [clean(x) for x in v]
                if isinstance(v, dict):
                    return {k: clean(x) for k, x in v.items()}
                return v
            with open(out_path, "w") as f:
                json.dump(clean(config), f, indent=2)
                f.write("\n")
            return 0
    sys.stderr.write(f"no config.json recorded in check {check!r}\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
