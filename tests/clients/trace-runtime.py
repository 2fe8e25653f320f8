#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A transparent wrapper around an OCI runtime that records how a client
(dockerd's shim, containerd's shim) calls it. run.sh installs it when
CLIENTS_TRACE=DIR is set; the recorded calls are what a runc-compatible
runtime has to answer (tests/clients/fixtures/invocations.txt).

Usage: TRACE_DIR=DIR TRACE_RUNTIME=REAL trace-runtime.py ARGS...
Appends to DIR/invocations.log one line per call,
  <pid> <cwd> <argv...>   then   <pid> exit=<status> ms=<duration>
and keeps what the runtime is handed besides argv:
  DIR/config-<pid>.json   the bundle's config.json of a create/run
  DIR/process-<pid>.json  the --process file of an exec
  DIR/stdin-<pid>.json    the resources read from stdin by update -r -
  DIR/log-<pid>.txt       the end of the --log file after a failed call
  DIR/stdout-<pid>.txt    what ps, state and --version printed

The runtime runs as this process's child, and this process waits for that
child only (waitpid on its PID, never on any child): a runtime that makes
the container's process a sibling of itself (CLONE_PARENT) leaves it to
whoever is above, as it would without the wrapper; it reaches the shim's
subreaper when this process exits.
"""
import os
import shlex
import shutil
import signal
import sys
import time

GLOBAL_WITH_VALUE = {"--root", "--log", "--log-format", "--criu", "--rootless"}


def main():
    tdir = os.environ["TRACE_DIR"]
    real = os.environ["TRACE_RUNTIME"]
    args = sys.argv[1:]
    me = os.getpid()
    start = time.monotonic()
    log_path = os.path.join(tdir, "invocations.log")

    def log(line):
        with open(log_path, "a") as f:
            f.write(line + "\n")

    log(f"{me} {shlex.quote(os.getcwd())} " + " ".join(shlex.quote(a) for a in args))

    # The subcommand past the global options, and the files it is handed.
    cmd = None
    runtime_log = bundle = process = None
    stdin_resources = False
    i = 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if cmd is None and a in GLOBAL_WITH_VALUE:
            if a == "--log":
                runtime_log = nxt
            i += 2
            continue
        if a in ("--bundle", "-b"):
            bundle = nxt
            i += 2
            continue
        if a.startswith("--bundle="):
            bundle = a.split("=", 1)[1]
        elif a in ("--process", "-p") and cmd == "exec":
            process = nxt
            i += 2
            continue
        elif a in ("--resources", "-r") and nxt == "-":
            stdin_resources = True
        elif a == "--resources=-":
            stdin_resources = True
        elif not a.startswith("-") and cmd is None:
            cmd = a
        i += 1

    try:
        if cmd in ("create", "run"):
            shutil.copy(os.path.join(bundle or ".", "config.json"),
                        os.path.join(tdir, f"config-{me}.json"))
        elif cmd == "exec" and process:
            shutil.copy(process, os.path.join(tdir, f"process-{me}.json"))
    except OSError:
        pass

    stdin_fd = 0
    if cmd == "update" and stdin_resources:
        data = sys.stdin.buffer.read()
        saved = os.path.join(tdir, f"stdin-{me}.json")
        with open(saved, "wb") as f:
            f.write(data)
        stdin_fd = os.open(saved, os.O_RDONLY)
    capture = cmd in (None, "ps", "state")
    out_path = os.path.join(tdir, f"stdout-{me}.txt")
    stdout_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if capture else 1

    pid = os.fork()
    if pid == 0:
        if stdin_fd != 0:
            os.dup2(stdin_fd, 0)
        if stdout_fd != 1:
            os.dup2(stdout_fd, 1)
        try:
            os.execv(real, [real] + args)
        finally:
            os._exit(127)
    # Pass the signals a client may send on to the runtime.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: os.kill(pid, s))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        code = 128 - code
    if capture:
        os.close(stdout_fd)
        with open(out_path, "rb") as f:
            sys.stdout.buffer.write(f.read())
        sys.stdout.flush()
    if code != 0 and runtime_log and os.path.exists(runtime_log):
        with open(runtime_log, errors="replace") as f:
            tail = f.read().splitlines()[-5:]
        with open(os.path.join(tdir, f"log-{me}.txt"), "w") as f:
            f.write("\n".join(tail) + "\n")
    log(f"{me} exit={code} ms={int((time.monotonic() - start) * 1000)}")
    return code


if __name__ == "__main__":
    sys.exit(main())
