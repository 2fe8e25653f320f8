# SPDX-License-Identifier: MIT
"""bench/agent-faces.c's Python rows. Usage: agent-py-worker.py SESSION_ID.
For each line on stdin, sb.exec("true") timed around the call, its
milliseconds on stdout: "exec" into a Sandbox() of its own (the default
policy), "exec-shared" into the session SESSION_ID (the C driver's, opened
by id), so that the binding's own cost shows apart from its session's. The
binding comes from bindings/python (PYTHONPATH) and libpsrun.so from
PSRUN_LIBRARY, as bench/agent.sh sets them.

BENCH_PY_BALLAST_MB=N touches N MiB of memory before the Sandbox() is made:
what an exec costs when the embedding program is a big one."""
import ctypes
import os
import sys
import time

from psrun import Sandbox
from psrun import _lib as C


class _Borrowed(Sandbox):
    """A Sandbox around a session opened by id: the binding has no public
    open-by-id, so this is for this measurement only. Ending it closes the
    handle; the session is the C driver's to destroy."""

    def __init__(self, session_id: str):
        self._lib = C.lib()
        self._session = None
        self._lib.psrun_session_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                                 ctypes.POINTER(ctypes.c_void_p),
                                                 ctypes.POINTER(C.Error)]
        self._lib.psrun_session_close.argtypes = [ctypes.c_void_p]
        sess, err = ctypes.c_void_p(), C.Error()
        if self._lib.psrun_session_open(session_id.encode(), None, ctypes.byref(sess),
                                        ctypes.byref(err)) < 0:
            raise SystemExit(f"open {session_id}: {err.msg.decode()}")
        self._session = sess

    def destroy(self) -> None:
        if self._session is not None:
            sess, self._session = self._session, None
            self._lib.psrun_session_close(sess)


def main() -> int:
    ballast = bytearray(int(os.environ.get("BENCH_PY_BALLAST_MB", "0")) << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    with _Borrowed(sys.argv[1]) as shared, Sandbox() as own:
        print("ready", flush=True)
        for line in sys.stdin:
            sb = {"exec": own, "exec-shared": shared}.get(line.strip())
            if sb is None:
                print(f"bad request {line!r}", flush=True)
                return 1
            t0 = time.perf_counter_ns()
            r = sb.exec("true")
            t = time.perf_counter_ns() - t0
            if not r.ok:
                print(f"exec failed: {r.reason} {r.exit_code} {r.error}", flush=True)
                return 1
            print(f"{t / 1e6:.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
