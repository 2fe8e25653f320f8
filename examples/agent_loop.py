#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An agent loop you can watch: a scripted "agent" (no LLM) driving one
psrun sandbox through the Python binding, printing each tool call and what
came back. It writes a script, runs it, reads the file it produced, starts a
dev server in the background and tests it with three parallel execs, hits a
timeout and an out-of-memory kill and reports why, installs a package (with
the approval hook asked first), and tries hostile things that stay
contained.

    sudo PSRUN_LIBRARY=build/libpsrun.so python3 examples/agent_loop.py

The install step needs a package index the sandbox's install network may
reach: AGENT_LOOP_INDEX (a PEP 503 simple index URL) and AGENT_LOOP_DNS (the
resolver its name is looked up with), as tests/net/session.sh sets them
inside its fake internet. Without them the step is skipped, saying why.
AGENT_LOOP_KEYS, a JSON object, adds policy keys (the tests keep to their
own network_pool with it). Exit status: 0 when every step did what it
should.
"""
import concurrent.futures
import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "bindings", "python"))
from psrun import InstallDenied, PsrunError, Sandbox  # noqa: E402

failures = []


def call(tool, *args, **kw):
    shown = ", ".join([repr(a) if len(repr(a)) < 60 else repr(a)[:57] + "...'" for a in args] +
                      [f"{k}={v!r}" for k, v in kw.items()])
    print(f"-> {tool}({shown})")


def show(result):
    out = result.stdout.decode(errors="replace").strip()
    err = result.stderr.decode(errors="replace").strip()
    line = f"<- exit={result.exit_code} reason={result.reason} wall={result.wall_ms}ms"
    if out:
        line += f" stdout={out[:120]!r}"
    if err:
        line += f" stderr={err.splitlines()[-1][:120]!r}"
    if result.reason == "setup_error":
        line += f" error={result.error!r}"
    print(line)


def expect(what, cond):
    if not cond:
        failures.append(what)
        print(f"   !! unexpected: {what}")


def approve(action):
    # The human in the loop, scripted: installs from the index are fine,
    # anything else would be refused.
    print(f"   approval asked: {action}")
    return action.get("action") == "install" or "only installs are approved here"


def main():
    index = os.environ.get("AGENT_LOOP_INDEX")
    dns = os.environ.get("AGENT_LOOP_DNS")
    keys = dict(memory_limit="128M", pids_limit=64, timeout=60, approve_actions=["install"])
    if index and dns:
        host = urllib.parse.urlparse(index).hostname
        keys.update(install_network="restricted", install_allow_domains=[host],
                    pip_index_url=index, dns_upstream=[dns])
    else:
        keys.update(install_network="none")
    keys.update(json.loads(os.environ.get("AGENT_LOOP_KEYS", "{}")))
    print(f"sandbox: {keys}")
    with Sandbox(approve=approve, **keys) as sb:
        # 1. write a script and its input, run it, read what it wrote
        call("write_file", "analyze.py")
        sb.write_file("analyze.py", "import os\n"
                      "rows = [l.split(',') for l in open('data.csv').read().split()]\n"
                      "total = sum(int(r[1]) for r in rows)\n"
                      "os.makedirs('out', exist_ok=True)\n"
                      "open('out/report.txt', 'w').write(f'{len(rows)} rows, total {total}\\n')\n"
                      "print('report written')\n")
        call("write_file", "data.csv")
        sb.write_file("data.csv", "a,1\nb,2\nc,39\n")
        call("exec", "python3 analyze.py")
        r = sb.exec("python3 analyze.py")
        show(r)
        expect("the script ran", r.ok and b"report written" in r.stdout)
        call("read_file", "out/report.txt")
        report = sb.read_file("out/report.txt")
        print(f"<- {report!r}")
        expect("the report says 3 rows, total 42", report == b"3 rows, total 42\n")

        # 1b. a dev server in the background, tested by parallel tool calls
        call("exec", "python3 -m http.server 8000 --bind 127.0.0.1", background=True)
        server = sb.exec("python3 -m http.server 8000 --bind 127.0.0.1", background=True)
        probe = ("python3 -c \"import time, urllib.request as u\n"
                 "for i in range(100):\n"
                 "    try: print(u.urlopen('http://127.0.0.1:8000/data.csv').read().decode()); break\n"
                 "    except OSError: time.sleep(0.1)\"")
        call("exec", "(3 in parallel) fetch http://127.0.0.1:8000/data.csv")
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            fetched = list(pool.map(lambda _: sb.exec(probe), range(3)))
        for r in fetched:
            show(r)
        expect("the background server answered three parallel execs",
               all(r.ok and b"c,39" in r.stdout for r in fetched))
        log = server.output(0, "stderr")
        print(f"<- server log: {log.total} bytes, first {log.data[:60]!r}")
        expect("the server logged the requests", log.data.count(b"GET /data.csv") == 3)
        call("kill", server.id)
        server.kill()
        done = server.wait(timeout=10)
        expect("the server was killed", done.signal == 9)
        expect("no process is left running", not any(p.running for p in sb.processes()))

        # 2. a command that hangs: killed at its timeout, the sandbox lives on
        call("exec", "sleep 30", timeout=1)
        r = sb.exec("sleep 30", timeout=1)
        show(r)
        expect("the sleep was killed for its timeout", r.reason == "timeout")

        # 3. a command that eats memory: OOM-killed as a tree
        call("exec", "python3 -c 'bytearray(1 << 30)'")
        r = sb.exec("python3 -c 'b = bytearray(1 << 30)'")
        show(r)
        expect("the memory hog was OOM-killed", r.reason == "oom")

        # 4. a package from the index, approved first
        if index and dns:
            call("install_package", "psfake")
            try:
                r = sb.install_package("psfake")
                show(r)
                expect("psfake installed", r.ok)
                if r.ok:
                    print("   installed psfake")
                call("exec", "python3 -c 'import psfake; print(psfake.VALUE)'")
                r = sb.exec("python3 -c 'import psfake; print(psfake.VALUE)'")
                show(r)
                expect("psfake imports", r.stdout == b"42\n")
            except InstallDenied as e:
                print(f"<- denied: {e}")
                expect("the install was approved", False)
        else:
            print("-> install_package('psfake'): skipped: no package index to use "
                  "(AGENT_LOOP_INDEX and AGENT_LOOP_DNS unset; tests/net sets them inside its "
                  "fake internet, and psrun's tests never reach the real registries)")
            try:
                sb.install_package("psfake")
                expect("an install with no network is refused", False)
            except PsrunError as e:
                print(f"<- refused, as it should be: {e}")

        # 5. hostile: each is contained, and the result says how
        hostile = [
            ("read the host's shadow file", "cat /etc/shadow"),
            ("write outside the workspace", "echo x > /usr/bin/owned"),
            ("reach the network", "python3 -c \"import socket; "
             "socket.create_connection(('198.18.0.10', 80), 2)\""),
            ("fork bomb", "python3 -c 'import os\nwhile True: os.fork()'"),
        ]
        for what, cmd in hostile:
            call("exec", cmd)
            r = sb.exec(cmd, timeout=10)
            show(r)
            expect(f"{what} fails", not r.ok)
            if what == "fork bomb":
                # pids_limit stops it, or memory_limit when its copies fill
                # that first: either way killed as a tree.
                expect("the fork bomb was stopped by a limit", r.reason in ("pids", "oom"))
            print(f"   contained: {what} ({r.reason}, exit {r.exit_code})")
        call("exec", "ln -s /etc/shadow leak")
        sb.exec("ln -sf /etc/shadow leak")
        call("read_file", "leak")
        try:
            data = sb.read_file("leak")
            expect("a planted symlink does not reach the host", b"root:" not in data)
        except PsrunError as e:
            print(f"<- {e}")
            print("   contained: the host-side read stays in the workspace")
        call("exec", "echo still here")
        r = sb.exec("echo still here")
        show(r)
        expect("the sandbox survived all of it", r.stdout == b"still here\n")
    print("done:", "every step as expected" if not failures else f"{len(failures)} unexpected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
