# SPDX-License-Identifier: MIT
"""Sandbox: one psrun session (docs/sessions.md) from Python."""
import asyncio
import ctypes
import errno
import json
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional, Tuple, Union

from . import _lib as C


class PsrunError(Exception):
    """psrun's one-line error; .code is the errno, .field what it names
    (the text before the first colon, e.g. "memory_limit")."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message
        field = message.split(":", 1)[0] if ":" in message else None
        # psrun_policy_set's messages begin with the key itself.
        self.field = field


class InstallDenied(PsrunError):
    """A gated install (policy approve: [install]) that the approver, or the
    lack of one, refused; the message says who denied what."""


class Cancelled(PsrunError):
    """A call ended by its Cancel (or, for AsyncSandbox, its task's
    cancellation): what it started is gone; the sandbox lives on."""


class Cancel:
    """A cancel for a call in flight (install_package(cancel=...)): cancel()
    from any thread ends it within about 50 ms; the call then raises
    Cancelled once the installer's processes and network are gone. One
    Cancel can serve several calls; once cancelled, it stays so."""

    def __init__(self):
        # Read by libpsrun's waiting thread (an aligned int: the store is
        # whole).
        self._flag = ctypes.c_int(0)

    def cancel(self) -> None:
        self._flag.value = 1

    @property
    def cancelled(self) -> bool:
        return bool(self._flag.value)


def _check(r: int, err: C.Error, denied=PsrunError) -> int:
    if r < 0:
        code = err.code or -r
        cls = denied if code == 1 else Cancelled if code == errno.ECANCELED else PsrunError
        raise cls(code, err.msg.decode("utf-8", "replace"))
    return r


def _network(p) -> Optional[dict]:
    """psrun run --json's "network" object, or None (no network)."""
    if not p:
        return None
    n = p.contents
    denied = []
    for i in range(min(n.n_denied, 32)):
        d = n.denied[i]
        if d.addr:
            denied.append({"addr": d.addr.decode(), "port": d.port, "proto": d.proto.decode(),
                           "count": d.count})
        else:
            denied.append({"name": d.name.decode("utf-8", "replace"), "count": d.count})
    return {"allowed_queries": n.allowed_queries, "denied_queries": n.denied_queries,
            "denied": denied, "denied_more": n.denied_more}


@dataclass
class GcStats:
    """What gc() removed, by kind (psrun_gc_stats)."""

    sessions: int  # sessions whose supervisor died
    cgroups: int  # cgroups of runs whose owner died
    containers: int  # OCI containers whose create died
    networks: int  # address leases of dead runs (with their veths and nft tables)
    gvisor: int  # gVisor runs' state directories

    @property
    def total(self) -> int:
        return self.sessions + self.cgroups + self.containers + self.networks + self.gvisor


def gc(*, state_dir: Optional[str] = None, cgroup_parent: Optional[str] = None,
       oci_root: Optional[str] = None) -> GcStats:
    """Remove what killed psrun processes left behind (psrun_gc, `psrun gc`):
    sessions whose supervisor died (under state_dir, default
    $PSRUN_SESSION_ROOT), runs' cgroups (below cgroup_parent, default this
    process's cgroup), OCI containers whose create died (under oci_root,
    default /run/psrun), networks and gVisor state. Root only."""
    opts = C.GcOptions(os.fsencode(cgroup_parent) if cgroup_parent else None,
                       os.fsencode(oci_root) if oci_root else None,
                       os.fsencode(state_dir) if state_dir else None)
    st = C.GcStats()
    err = C.Error()
    _check(C.lib().psrun_gc(ctypes.byref(opts), ctypes.byref(st), ctypes.byref(err)), err)
    return GcStats(st.sessions, st.cgroups, st.containers, st.networks, st.gvisor)


@dataclass
class Violation:
    """One thing a security layer refused (docs/security.md, "Violations")."""

    layer: str  # "seccomp" "landlock" "apparmor" "network" "limits"
    what: str  # "ptrace", "write_file /proc/2/oom_score_adj", "evil.test", "pids_limit 256 reached"
    count: int
    pid: int  # the (first) process's pid in the sandbox; 0: none or not known


@dataclass
class ExecResult:
    """The session API's exec result (psrun_exec_result)."""

    exit_code: int
    signal: int
    reason: str
    wall_ms: int
    cpu_ms: int
    peak_memory_bytes: int
    error: str
    stdout: bytes
    stderr: bytes
    stdout_bytes: int
    stderr_bytes: int
    stdout_truncated: bool
    stderr_truncated: bool
    network: Optional[dict] = None
    # What the layers refused (the policy key `violations`): the first 32
    # distinct entries, then violations_more refusals not listed; the layers
    # that cannot report on this host, with why.
    violations: List[Violation] = field(default_factory=list)
    violations_more: int = 0
    violations_unavailable: Dict[str, str] = field(default_factory=dict)
    backend: str = "native"  # or "gvisor": the policy's backend
    # What held in this exec: {"seccomp": "on", "landlock": "abi 7",
    # "apparmor": "unavailable"}; under gVisor seccomp is "not in execs".
    layers: Dict[str, str] = field(default_factory=dict)
    # Without root (docs/rootless.md): {"identity": "subordinate ids" or
    # "one id", "limits": {"memory": "rlimit_as", "timeout": "pid
    # namespace", ...}}, what held each limit; None for root's sessions.
    rootless: Optional[Dict[str, object]] = None

    @property
    def ok(self) -> bool:
        return self.reason == "exited" and self.exit_code == 0


@dataclass
class FileEntry:
    name: str
    type: str
    size: int
    mode: int
    mtime: int


class FileList(list):
    """A listing: a list of FileEntry, and whether a bound cut it short."""
    truncated = False


# The seed dict's keys (agent frameworks' sandbox={...}) and every policy
# key (psrun-policy(5)) -> policy keys.
_CONFIG_KEYS = {
    "network_mode": "network",
    "network": "network",
    "allow_domains": "allow_domains",
    "memory_limit": "memory_limit",
    "cpu_limit": "cpu_limit",
    "pids_limit": "pids_limit",
    "disk_limit": "disk_limit",
    "timeout": "timeout",
    "read_only_rootfs": "readonly_rootfs",
    "readonly_rootfs": "readonly_rootfs",
    "workdir": "workdir",
    "env": "env",
    "output_limit": "output_limit",
    "background_limit": "background_limit",
    "idle_timeout": "idle_timeout",
    "lifetime": "lifetime",
    "install_network": "install_network",
    "install_allow_domains": "install_allow_domains",
    "pip_index_url": "pip_index_url",
    "npm_registry": "npm_registry",
    "dns_upstream": "dns_upstream",
    "approve_actions": "approve",
    "allow_ports": "allow_ports",
    "allow_cidrs": "allow_cidrs",
    "allow_private": "allow_private",
    "dns_min_ttl": "dns_min_ttl",
    "dns_max_ttl": "dns_max_ttl",
    "network_pool": "network_pool",
    "network_log": "network_log",
    "name_check": "name_check",
    "user": "user",
    "backend": "backend",
    "mounts": "mounts",
    "hostname": "hostname",
    "landlock": "landlock",
    "apparmor": "apparmor",
    "apparmor_profile": "apparmor_profile",
    "pty_limit": "pty_limit",
    "inotify_limit": "inotify_limit",
    "inotify_watch_limit": "inotify_watch_limit",
    "fanotify_limit": "fanotify_limit",
    "fanotify_mark_limit": "fanotify_mark_limit",
    "namespace_limit": "namespace_limit",
    "sigpending_limit": "sigpending_limit",
    "gvisor_platform": "gvisor_platform",
    "image": "image",
    "image_store": "image_store",
    "registry_mirrors": "registry_mirrors",
    "insecure_registries": "insecure_registries",
    "image_max_size": "image_max_size",
    "tools": "tools",
}
# Not policy keys: how long the session lives (see Sandbox).
_LIFE_KEYS = ("persistent", "name")


def _policy_value(key: str, value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if key in ("timeout", "idle_timeout", "lifetime") and isinstance(value, (int, float)):
        return f"{value}s"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def _rootless(r: C.RootlessLayers) -> Optional[Dict[str, object]]:
    if not r.active:
        return None
    return {"identity": r.identity.decode(),
            "limits": {k: getattr(r, k).decode()
                       for k in ("memory", "cpu", "pids", "disk", "timeout")}}


def _result(res: C.ExecResultC) -> ExecResult:
    rr = res.result
    return ExecResult(
        exit_code=rr.exit_code, signal=rr.signal,
        reason=(rr.reason or b"").decode(), wall_ms=rr.wall_ms, cpu_ms=rr.cpu_ms,
        peak_memory_bytes=rr.peak_memory_bytes,
        error=rr.error.decode("utf-8", "replace"),
        stdout=ctypes.string_at(res.stdout_data, res.stdout_len) if res.stdout_data else b"",
        stderr=ctypes.string_at(res.stderr_data, res.stderr_len) if res.stderr_data else b"",
        stdout_bytes=res.stdout_bytes, stderr_bytes=res.stderr_bytes,
        stdout_truncated=bool(res.stdout_truncated),
        stderr_truncated=bool(res.stderr_truncated),
        network=_network(res.network),
        backend=(rr.backend or b"native").decode(),
        layers={k: getattr(res.layers, k).decode() for k in ("seccomp", "landlock", "apparmor")
                if getattr(res.layers, k)},
        rootless=_rootless(res.rootless),
        violations=[Violation(rr.violations[i].layer.decode(),
                              rr.violations[i].what.decode("utf-8", "replace"),
                              rr.violations[i].count, rr.violations[i].pid)
                    for i in range(rr.n_violations)],
        violations_more=rr.violations_more,
        violations_unavailable={
            rr.violations_unavailable[i].layer.decode():
                rr.violations_unavailable[i].why.decode("utf-8", "replace")
            for i in range(rr.n_violations_unavailable)})


class _ProcessInfoC(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32), ("pid", ctypes.c_int), ("running", ctypes.c_int),
                ("exit_code", ctypes.c_int), ("signal", ctypes.c_int),
                ("started_unix", ctypes.c_uint64), ("stdout_bytes", ctypes.c_uint64),
                ("stderr_bytes", ctypes.c_uint64), ("command", ctypes.c_char * 128)]


class _ChunkC(ctypes.Structure):
    _fields_ = [("offset", ctypes.c_uint64), ("len", ctypes.c_size_t), ("eof", ctypes.c_int),
                ("total", ctypes.c_uint64)]


@dataclass
class ProcessInfo:
    """One background process as Sandbox.processes() lists it."""

    id: int
    pid: int
    running: bool
    exit_code: int
    signal: int
    stdout_bytes: int
    stderr_bytes: int
    command: str


@dataclass
class Output:
    """Process.output(): data from offset (past the asked one when that part
    was dropped), next (the offset to ask for next), total written, eof."""

    data: bytes
    offset: int
    next: int
    total: int
    eof: bool


class Process:
    """A background process of a Sandbox (docs/sessions.md): .id (the
    session's, from 1), output by offset, signal, kill, wait."""

    def __init__(self, sandbox: "Sandbox", pid: int):
        self.sandbox = sandbox
        self.id = pid
        self.pid = pid

    def output(self, offset: int = 0, stream: str = "stdout", max_bytes: int = 65536) -> Output:
        if stream not in ("stdout", "stderr"):
            raise PsrunError(22, f"stream: {stream!r} is neither stdout nor stderr")
        L = self.sandbox._bg_lib()
        buf = ctypes.create_string_buffer(max(1, max_bytes))
        ch = _ChunkC()
        err = C.Error()
        _check(L.psrun_process_output(self.sandbox._live(), self.id,
                                      1 if stream == "stdout" else 2, offset, buf, max_bytes,
                                      ctypes.byref(ch), ctypes.byref(err)), err)
        return Output(data=buf.raw[:ch.len], offset=ch.offset, next=ch.offset + ch.len,
                      total=ch.total, eof=bool(ch.eof))

    def signal(self, sig: int = 15) -> None:
        err = C.Error()
        _check(self.sandbox._bg_lib().psrun_process_signal(self.sandbox._live(), self.id, sig,
                                                           ctypes.byref(err)), err)

    def kill(self) -> None:
        """SIGKILL: the process and whatever it started (its cgroup)."""
        self.signal(9)

    def wait(self, timeout: Optional[float] = None) -> ExecResult:
        """Its result (no output: see output()); PsrunError ETIMEDOUT (110)
        when it runs on past timeout seconds."""
        res = C.ExecResultC()
        err = C.Error()
        ms = -1 if timeout is None else max(0, int(timeout * 1000))
        r = self.sandbox._bg_lib().psrun_process_wait(self.sandbox._live(), self.id, ms,
                                                      ctypes.byref(res), ctypes.byref(err))
        try:
            _check(r, err)
            return _result(res)
        finally:
            self.sandbox._lib.psrun_exec_result_free(ctypes.byref(res))


def _approver(fn: Callable[[dict], Union[bool, str]]):
    """fn(action) -> True (approve), False or a reason string (deny); an
    exception denies, naming it."""
    def call(_userdata, approval):
        a = approval.contents
        try:
            answer = fn(json.loads(a.json.decode()))
        except Exception as e:  # a broken approver must deny, never allow
            answer = f"the approver raised {type(e).__name__}: {e}"
        if answer is True:
            return 1
        if isinstance(answer, str) and answer:
            a.reason = answer.replace("\n", " ").encode("utf-8", "replace")[:255]
        return 0
    return C.APPROVE_FN(call)


class Sandbox:
    """A long-lived sandbox; the keyword arguments are policy keys
    (psrun-policy(5)) or the seed dict's names (see from_config).
    approve: a callable asked before gated actions (policy `approve`, e.g.
    approve_actions=["install"]): it gets the action as a dict and returns
    True to allow, False or a reason string to refuse.
    persistent: False (the default) destroys the session with the handle
    (close, the with block, the process's exit); True keeps it and its
    workspace past the handle, named `name` (or a random id: Sandbox.id),
    until destroy() or its idle_timeout; Sandbox.open(name) reopens it."""

    def __init__(self, *, policy_file: Optional[str] = None, state_dir: Optional[str] = None,
                 approve: Optional[Callable[[dict], Union[bool, str]]] = None,
                 persistent: bool = False, name: Optional[str] = None, **keys):
        self._lib = C.lib()
        self._session = None
        if not isinstance(persistent, bool):
            raise PsrunError(22, "persistent: must be true or false")
        if name is not None and not persistent:
            raise PsrunError(22, "name: only for a persistent sandbox (persistent=True)")
        self._persistent = persistent
        if approve is not None and not callable(approve):
            raise PsrunError(22, "approve: must be a callable; the policy key `approve` is "
                             "approve_actions here (e.g. approve_actions=[\"install\"])")
        # Kept alive as long as the session: the C side holds the pointer.
        self._approve = _approver(approve) if approve is not None else None
        err = C.Error()
        pol = self._lib.psrun_policy_new()
        if not pol:
            raise MemoryError("psrun: out of memory")
        try:
            if policy_file is not None:
                _check(self._lib.psrun_policy_load_file(pol, os.fsencode(policy_file),
                                                        ctypes.byref(err)), err)
            for kname, value in keys.items():
                if value is None:
                    continue
                key = _CONFIG_KEYS.get(kname)
                if key is None:
                    raise PsrunError(22, f"{kname}: not a sandbox setting (known: "
                                     + ", ".join(sorted(_CONFIG_KEYS)) + ")")
                _check(self._lib.psrun_policy_set(pol, key.encode(),
                                                  _policy_value(key, value).encode(),
                                                  ctypes.byref(err)), err)
            opts = C.SessionOptions(state_dir=os.fsencode(state_dir) if state_dir else None,
                                    name=name.encode() if name else None,
                                    tie_to_caller=0 if persistent else 1)
            if self._approve is not None:
                opts.approve = self._approve
            sess = ctypes.c_void_p()
            _check(self._lib.psrun_session_create(pol, ctypes.byref(opts), ctypes.byref(sess),
                                                  ctypes.byref(err)), err)
            self._session = sess
        finally:
            self._lib.psrun_policy_free(pol)

    @classmethod
    def from_policy(cls, path: str, **keys) -> "Sandbox":
        return cls(policy_file=path, **keys)

    @classmethod
    def from_config(cls, config: dict) -> "Sandbox":
        """An agent framework's sandbox dict: image, network_mode (or
        network), allow_domains, memory_limit, cpu_limit, timeout,
        read_only_rootfs, workdir, env, tools, persistent (and name), or
        any policy key."""
        return cls(**dict(config))

    @classmethod
    def open(cls, name: str, state_dir: Optional[str] = None) -> "Sandbox":
        """Reopens a persistent sandbox by its name; close() leaves it
        running again."""
        self = cls.__new__(cls)
        self._lib = C.lib()
        self._session = None
        self._approve = None
        self._persistent = True
        err = C.Error()
        sess = ctypes.c_void_p()
        _check(self._lib.psrun_session_open(name.encode(),
                                            os.fsencode(state_dir) if state_dir else None,
                                            ctypes.byref(sess), ctypes.byref(err)), err)
        self._session = sess
        return self

    @property
    def id(self) -> str:
        return self._lib.psrun_session_id(self._live()).decode()

    def _live(self):
        if self._session is None:
            raise PsrunError(9, "sandbox: already destroyed")
        return self._session

    def _bg_lib(self):
        """The background calls' signatures (psrun.h), set once on the library."""
        L = self._lib
        if not getattr(L, "_psrun_bg_ready", False):
            P = ctypes.POINTER
            sigs = {
                "psrun_exec_background": [ctypes.c_void_p, P(ctypes.c_char_p), P(C.ExecOptions),
                                          P(ctypes.c_uint32), P(C.Error)],
                "psrun_process_list": [ctypes.c_void_p, P(P(_ProcessInfoC)), P(ctypes.c_size_t),
                                       P(C.Error)],
                "psrun_process_output": [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                         ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t,
                                         P(_ChunkC), P(C.Error)],
                "psrun_process_signal": [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                         P(C.Error)],
                "psrun_process_wait": [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int64,
                                       P(C.ExecResultC), P(C.Error)],
            }
            for name, args in sigs.items():
                fn = getattr(L, name)
                fn.restype = ctypes.c_int
                fn.argtypes = args
            L._psrun_bg_ready = True
        return L

    def processes(self) -> List["ProcessInfo"]:
        """The background processes: running ones and recently ended ones, by id."""
        L = self._bg_lib()
        lst = ctypes.POINTER(_ProcessInfoC)()
        n = ctypes.c_size_t(0)
        err = C.Error()
        _check(L.psrun_process_list(self._live(), ctypes.byref(lst), ctypes.byref(n),
                                    ctypes.byref(err)), err)
        try:
            return [ProcessInfo(id=lst[i].id, pid=lst[i].pid, running=bool(lst[i].running),
                                exit_code=lst[i].exit_code, signal=lst[i].signal,
                                stdout_bytes=lst[i].stdout_bytes, stderr_bytes=lst[i].stderr_bytes,
                                command=lst[i].command.decode("utf-8", "replace"))
                    for i in range(n.value)]
        finally:
            L.libc_free(ctypes.cast(lst, ctypes.c_void_p))

    def exec(self, command: Union[str, List[str]], *, timeout: Optional[float] = None,
             stdin: Optional[bytes] = None, cwd: Optional[str] = None,
             env: Optional[dict] = None, background: bool = False):
        """Run command (a shell string, or an argv list) and wait; with
        background=True, start it and return a Process at once (no stdin)."""
        if background and stdin is not None:
            raise PsrunError(22, "stdin: a background process reads /dev/null")
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        if not argv:
            raise PsrunError(22, "argv: no command given")
        c_argv = (ctypes.c_char_p * (len(argv) + 1))(*[os.fsencode(a) for a in argv], None)
        opts = C.ExecOptions()
        if timeout is not None:
            opts.timeout_ms = max(1, int(timeout * 1000))
        if cwd is not None:
            opts.cwd = os.fsencode(cwd)
        if env:
            items = [f"{k}={v}".encode() for k, v in env.items()]
            opts.env = (ctypes.c_char_p * (len(items) + 1))(*items, None)
        if background:
            pid = ctypes.c_uint32(0)
            err = C.Error()
            _check(self._bg_lib().psrun_exec_background(self._live(), c_argv, ctypes.byref(opts),
                                                        ctypes.byref(pid), ctypes.byref(err)), err)
            return Process(self, pid.value)
        buf = None
        if stdin is not None:
            buf = ctypes.create_string_buffer(bytes(stdin), len(stdin))
            opts.stdin_mode = C.STDIN_BYTES
            opts.stdin_data = ctypes.cast(buf, ctypes.c_void_p)
            opts.stdin_len = len(stdin)
        res = C.ExecResultC()
        err = C.Error()
        r = self._lib.psrun_exec(self._live(), c_argv, ctypes.byref(opts), ctypes.byref(res),
                                 ctypes.byref(err))
        try:
            _check(r, err)
            return _result(res)
        finally:
            self._lib.psrun_exec_result_free(ctypes.byref(res))

    def install_package(self, package: str, tool: str = "python", *,
                        timeout: Optional[float] = None,
                        cancel: Optional[Cancel] = None) -> ExecResult:
        """Install one package into /workspace (python: pip, node: npm) over
        the policy's install network; the next exec finds it. Returns the
        installer's result (ok: installed). Raises PsrunError (field
        "package" or "tool") for a bad spec, InstallDenied when approval
        was refused, PsrunError when no network could reach an index,
        Cancelled when cancel.cancel() ended it (from another thread; the
        installer's processes and network are gone then), and a timeout
        ends it with reason "timeout"."""
        if cancel is not None and not isinstance(cancel, Cancel):
            raise TypeError(f"cancel: {type(cancel).__name__} is not a psrun.Cancel")
        opts = C.InstallOptions(tool=tool.encode())
        if cancel is not None:
            opts.cancel = ctypes.pointer(cancel._flag)
        if timeout is not None:
            opts.timeout_ms = max(1, int(timeout * 1000))
        res = C.ExecResultC()
        err = C.Error()
        r = self._lib.psrun_install_package(self._live(), package.encode(), ctypes.byref(opts),
                                            ctypes.byref(res), ctypes.byref(err))
        try:
            _check(r, err, denied=InstallDenied)
            return _result(res)
        finally:
            self._lib.psrun_exec_result_free(ctypes.byref(res))

    def write_file(self, path: str, data: Union[bytes, str], mode: int = 0o644) -> int:
        if isinstance(data, str):
            data = data.encode()
        err = C.Error()
        _check(self._lib.psrun_write_file(self._live(), os.fsencode(path), data, len(data), mode,
                                          ctypes.byref(err)), err)
        return len(data)

    def _read(self, path: bytes, offset: int, max_bytes: int) -> Tuple[bytes, int, bool]:
        fd = C.FileData()
        err = C.Error()
        _check(self._lib.psrun_read_file(self._live(), path, offset, max_bytes, ctypes.byref(fd),
                                         ctypes.byref(err)), err)
        try:
            # From the address as an array: ctypes.string_at takes an int
            # size, which a read of 2 GiB or more would overflow.
            data = bytes((ctypes.c_char * fd.len).from_address(fd.data)) if fd.len else b""
            return data, fd.size, bool(fd.truncated)
        finally:
            self._lib.libc_free(fd.data)

    def read_file(self, path: str, offset: int = 0, max_bytes: Optional[int] = None) -> bytes:
        """The file's bytes from offset: max_bytes of them, or (None) all of it —
        refused with PsrunError past 64 MiB, since the sandbox chooses the
        size (a sparse file costs it no disk) and this is the caller's memory:
        read such a file in parts or with iter_file."""
        if max_bytes is not None and max_bytes <= 0:
            raise PsrunError(22, "max_bytes: must be positive (None: all of it)")
        return self._read(os.fsencode(path), offset, max_bytes or 0)[0]

    def iter_file(self, path: str, chunk_size: int = 1 << 20, offset: int = 0) -> Iterator[bytes]:
        """The file from offset in chunks of at most chunk_size bytes, to its
        size when the first chunk was read: memory stays one chunk, however
        large the file."""
        if chunk_size <= 0 or chunk_size > C.READ_ALL_MAX:
            raise PsrunError(22, f"chunk_size: must be 1..{C.READ_ALL_MAX}")
        p = os.fsencode(path)
        end = None
        while end is None or offset < end:
            data, size, _ = self._read(p, offset, chunk_size)
            if end is None:
                end = size
            if not data:
                return
            offset += len(data)
            yield data

    def list_files(self, directory: str = "/workspace", recursive: bool = False,
                   max_entries: int = 0, max_bytes: int = 0) -> "FileList":
        """The entries of directory, sorted. Bounded in entries and in bytes of
        names (at most 100,000 and 16 MiB, less if asked): past a bound, the
        entries read until then, with .truncated True."""
        listing = C.Listing()
        err = C.Error()
        opts = C.ListOptions(int(recursive), max_entries, max_bytes)
        _check(self._lib.psrun_list_dir(self._live(), os.fsencode(directory), ctypes.byref(opts),
                                        ctypes.byref(listing), ctypes.byref(err)), err)
        try:
            e = listing.entries
            out = FileList(FileEntry(e[i].name.decode("utf-8", "surrogateescape"),
                                     e[i].type.decode(), e[i].size, e[i].mode, e[i].mtime)
                           for i in range(listing.n))
            out.truncated = bool(listing.truncated)
            return out
        finally:
            self._lib.psrun_listing_free(ctypes.byref(listing))

    def remove(self, path: str) -> None:
        err = C.Error()
        _check(self._lib.psrun_remove(self._live(), os.fsencode(path), ctypes.byref(err)), err)

    def destroy(self) -> None:
        if self._session is None:
            return
        sess, self._session = self._session, None
        err = C.Error()
        _check(self._lib.psrun_session_destroy(sess, ctypes.byref(err)), err)

    def close(self) -> None:
        """The handle's end: the session is destroyed, unless it is
        persistent, which lives on (Sandbox.open reopens it)."""
        if not getattr(self, "_persistent", False):
            self.destroy()
            return
        if self._session is not None:
            sess, self._session = self._session, None
            self._lib.psrun_session_close(sess)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class AsyncSandbox:
    """Sandbox for asyncio: every call runs in a thread (asyncio.to_thread);
    the C API lets calls on one session run from many threads at once."""

    def __init__(self, sandbox: Optional[Sandbox] = None, **keys):
        """AsyncSandbox(timeout=30, ...) takes Sandbox's keys and makes one
        (in this thread: `await AsyncSandbox.create(...)` does not block the
        loop); AsyncSandbox(sandbox) wraps an existing Sandbox."""
        if sandbox is not None and keys:
            raise TypeError("AsyncSandbox: a Sandbox or its keys, not both")
        if sandbox is not None and not isinstance(sandbox, Sandbox):
            raise TypeError(f"AsyncSandbox: {type(sandbox).__name__} is not a Sandbox")
        self.sandbox = sandbox if sandbox is not None else Sandbox(**keys)

    @classmethod
    async def create(cls, **keys) -> "AsyncSandbox":
        return cls(await asyncio.to_thread(Sandbox, **keys))

    @classmethod
    async def from_config(cls, config: dict) -> "AsyncSandbox":
        return cls(await asyncio.to_thread(Sandbox.from_config, config))

    async def exec(self, command, **kw) -> ExecResult:
        return await asyncio.to_thread(self.sandbox.exec, command, **kw)

    async def install_package(self, package, tool="python", **kw) -> ExecResult:
        """Sandbox.install_package in a thread; cancelling the task cancels
        the install: CancelledError is raised once its processes are gone."""
        cancel = kw.pop("cancel", None) or Cancel()
        fut = asyncio.ensure_future(
            asyncio.to_thread(self.sandbox.install_package, package, tool, cancel=cancel, **kw))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            cancel.cancel()
            try:
                await fut
            except PsrunError:
                pass
            raise

    async def write_file(self, path, data, mode=0o644) -> int:
        return await asyncio.to_thread(self.sandbox.write_file, path, data, mode)

    async def read_file(self, path, offset=0, max_bytes=None) -> bytes:
        return await asyncio.to_thread(self.sandbox.read_file, path, offset, max_bytes)

    async def list_files(self, directory="/workspace", recursive=False, max_entries=0,
                         max_bytes=0):
        return await asyncio.to_thread(self.sandbox.list_files, directory, recursive,
                                       max_entries, max_bytes)

    async def remove(self, path) -> None:
        return await asyncio.to_thread(self.sandbox.remove, path)

    async def destroy(self) -> None:
        return await asyncio.to_thread(self.sandbox.destroy)

    async def __aenter__(self) -> "AsyncSandbox":
        return self

    async def __aexit__(self, *exc) -> None:
        await asyncio.to_thread(self.sandbox.close)


