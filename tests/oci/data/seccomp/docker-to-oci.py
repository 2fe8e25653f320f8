#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Docker seccomp profile (moby's profiles/seccomp/default.json) as the
linux.seccomp object Docker handed to its runtime in config.json, on x86_64,
for Docker's default capability set: each entry's includes/excludes decided
as Docker's setupSeccomp decided them, one entry per syscall name. The
allowlists themselves are copied as they are, nothing added or dropped.

    docker-to-oci.py < default.json > profile.json
"""
import json
import sys

ARCH = "amd64"
SECCOMP_ARCH = "SCMP_ARCH_X86_64"
# moby oci/defaults.go DefaultCapabilities (v1.12 through v19.03).
CAPS = {
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
    "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}


def kept(call):
    inc = call.get("includes") or {}
    exc = call.get("excludes") or {}
    if ARCH in (exc.get("arches") or []):
        return False
    if any(c in CAPS for c in exc.get("caps") or []):
        return False
    # minKernel: every kernel psrun runs on is newer than the profiles' 4.8.
    if exc.get("minKernel"):
        return False
    if inc.get("arches") and ARCH not in inc["arches"]:
        return False
    if any(c not in CAPS for c in inc.get("caps") or []):
        return False
    return True


def main():
    src = json.load(sys.stdin)
    out = {"defaultAction": src["defaultAction"]}
    if src.get("architectures"):
        out["architectures"] = src["architectures"]
    for a in src.get("archMap") or []:
        if a["architecture"] == SECCOMP_ARCH:
            out["architectures"] = [a["architecture"]] + a.get("subArchitectures", [])
    calls = []
    for call in src["syscalls"]:
        if not kept(call):
            continue
        names = call["names"] if call.get("names") else [call["name"]]
        for name in names:
            entry = {"names": [name], "action": call["action"]}
            args = [
                {k: a[k] for k in ("index", "value", "valueTwo", "op")}
                for a in call.get("args") or []
            ]
            if args:
                entry["args"] = args
            calls.append(entry)
    out["syscalls"] = calls
    sys.stdout.write(dump(out))


def row(call):
    """An entry on one line; a long list of names eight a line."""
    if len(call["names"]) <= 8:
        return json.dumps(call)
    names = [json.dumps(n) for n in call["names"]]
    lines = ",\n   ".join(", ".join(names[i : i + 8]) for i in range(0, len(names), 8))
    rest = json.dumps({k: v for k, v in call.items() if k != "names"})[1:]
    return '{"names": [\n   %s],\n  %s' % (lines, rest)


def dump(profile):
    """One syscall entry a line."""
    head = ",\n".join(
        " %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in profile.items() if k != "syscalls"
    )
    rows = ",\n".join("  " + row(c) for c in profile["syscalls"])
    return "{\n%s,\n \"syscalls\": [\n%s\n ]\n}\n" % (head, rows)


if __name__ == "__main__":
    main()
