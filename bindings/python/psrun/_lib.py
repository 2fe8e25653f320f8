# SPDX-License-Identifier: MIT
"""The C declarations of include/psrun.h that the binding uses, and where
libpsrun.so is found: $PSRUN_LIBRARY, next to the psrun on PATH (or in its
../lib), on the system's library path (libpsrun.so.0), or in the build tree
this package sits in (a checkout, not an installed package)."""
import ctypes
import os
import shutil

c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_int = ctypes.c_int
c_size_t = ctypes.c_size_t
c_uint64 = ctypes.c_uint64


class Error(ctypes.Structure):
    _fields_ = [("code", c_int), ("msg", ctypes.c_char * 512)]


class ViolationC(ctypes.Structure):
    _fields_ = [("layer", c_char_p), ("what", c_char_p), ("count", c_uint64), ("pid", c_int)]


class ViolationUnavailableC(ctypes.Structure):
    _fields_ = [("layer", c_char_p), ("why", c_char_p)]


class Result(ctypes.Structure):
    _fields_ = [
        ("exit_code", c_int),
        ("signal", c_int),
        ("reason", c_char_p),
        ("wall_ms", c_uint64),
        ("cpu_ms", c_uint64),
        ("peak_memory_bytes", c_uint64),
        ("error", ctypes.c_char * 512),
        ("violations_mode", c_char_p),
        ("violations", ctypes.POINTER(ViolationC)),
        ("n_violations", c_size_t),
        ("violations_more", c_uint64),
        ("violations_unavailable", ctypes.POINTER(ViolationUnavailableC)),
        ("n_violations_unavailable", c_size_t),
        ("backend", c_char_p),
    ]


class Approval(ctypes.Structure):
    _fields_ = [
        ("action", c_char_p),
        ("session", c_char_p),
        ("json", c_char_p),
        ("reason", ctypes.c_char * 256),
    ]


APPROVE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.POINTER(Approval))


class SessionOptions(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("state_dir", c_char_p),
        ("cgroup_parent", c_char_p),
        ("tie_to_caller", c_int),
        ("approve", APPROVE_FN),
        ("approve_userdata", c_void_p),
    ]


OUTPUT_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_size_t)


class ExecOptions(ctypes.Structure):
    _fields_ = [
        ("cwd", c_char_p),
        ("env", ctypes.POINTER(c_char_p)),
        ("stdin_mode", c_int),
        ("stdin_data", c_void_p),
        ("stdin_len", c_size_t),
        ("stdin_fd", c_int),
        ("timeout_ms", c_uint64),
        ("output_limit", c_uint64),
        ("on_output", OUTPUT_FN),
        ("userdata", c_void_p),
        ("pass_output", c_int),
        ("stdout_fd", c_int),
        ("stderr_fd", c_int),
        ("cancel", ctypes.POINTER(c_int)),
    ]


class NetworkDenial(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char * 254),
        ("addr", ctypes.c_char * 46),
        ("port", ctypes.c_uint16),
        ("proto", ctypes.c_char * 8),
        ("count", c_uint64),
    ]


class NetworkStats(ctypes.Structure):
    _fields_ = [
        ("allowed_queries", c_uint64),
        ("denied_queries", c_uint64),
        ("n_denied", c_size_t),
        ("denied", NetworkDenial * 32),
        ("denied_more", c_uint64),
    ]


class Layers(ctypes.Structure):
    _fields_ = [("seccomp", ctypes.c_char * 16), ("landlock", ctypes.c_char * 16),
                ("apparmor", ctypes.c_char * 16)]


class RootlessLayers(ctypes.Structure):
    _fields_ = [("active", c_int), ("identity", ctypes.c_char * 24),
                ("memory", ctypes.c_char * 16), ("cpu", ctypes.c_char * 16),
                ("pids", ctypes.c_char * 16), ("disk", ctypes.c_char * 16),
                ("timeout", ctypes.c_char * 16)]


class ExecResultC(ctypes.Structure):
    _fields_ = [
        ("result", Result),
        ("stdout_data", c_void_p),
        ("stderr_data", c_void_p),
        ("stdout_len", c_size_t),
        ("stderr_len", c_size_t),
        ("stdout_bytes", c_uint64),
        ("stderr_bytes", c_uint64),
        ("stdout_truncated", c_int),
        ("stderr_truncated", c_int),
        ("network", ctypes.POINTER(NetworkStats)),
        ("layers", Layers),
        ("rootless", RootlessLayers),
    ]


class InstallOptions(ctypes.Structure):
    _fields_ = [
        ("tool", c_char_p),
        ("timeout_ms", c_uint64),
        ("on_output", OUTPUT_FN),
        ("userdata", c_void_p),
        ("cancel", ctypes.POINTER(c_int)),
    ]


class FileData(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("len", c_size_t), ("size", c_uint64), ("truncated", c_int)]


class FileEntryC(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("type", c_char_p),
        ("size", c_uint64),
        ("mode", ctypes.c_uint),
        ("mtime", ctypes.c_int64),
    ]


class ListOptions(ctypes.Structure):
    _fields_ = [("recursive", c_int), ("max_entries", c_size_t), ("max_bytes", c_size_t)]


class Listing(ctypes.Structure):
    _fields_ = [("entries", ctypes.POINTER(FileEntryC)), ("n", c_size_t), ("truncated", c_int)]


STDIN_BYTES = 1
# include/psrun.h: a read of "all of it" is refused past this many bytes.
READ_ALL_MAX = 64 << 20


class GcOptions(ctypes.Structure):
    _fields_ = [("cgroup_parent", c_char_p), ("oci_root", c_char_p), ("session_dir", c_char_p)]


class GcStats(ctypes.Structure):
    _fields_ = [("sessions", ctypes.c_uint), ("cgroups", ctypes.c_uint),
                ("containers", ctypes.c_uint), ("networks", ctypes.c_uint),
                ("gvisor", ctypes.c_uint)]


def _candidates():
    env = os.environ.get("PSRUN_LIBRARY")
    if env:
        yield env
        return
    exe = shutil.which("psrun")
    if exe:
        d = os.path.dirname(os.path.realpath(exe))
        yield os.path.join(d, "libpsrun.so")
        yield os.path.join(d, "..", "lib", "libpsrun.so")
    yield "libpsrun.so.0"
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "..", "build", "libpsrun.so")


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise OSError("psrun: libpsrun.so not found (set PSRUN_LIBRARY); tried: " + ", ".join(tried))


_lib = None


def lib():
    global _lib
    if _lib is not None:
        return _lib
    L = _load()
    P = ctypes.POINTER
    sigs = {
        "psrun_policy_new": (c_void_p, []),
        "psrun_policy_free": (None, [c_void_p]),
        "psrun_policy_load_file": (c_int, [c_void_p, c_char_p, P(Error)]),
        "psrun_policy_set": (c_int, [c_void_p, c_char_p, c_char_p, P(Error)]),
        "psrun_session_create": (c_int, [c_void_p, P(SessionOptions), P(c_void_p), P(Error)]),
        "psrun_session_destroy": (c_int, [c_void_p, P(Error)]),
        "psrun_session_id": (c_char_p, [c_void_p]),
        "psrun_session_open": (c_int, [c_char_p, c_char_p, P(c_void_p), P(Error)]),
        "psrun_session_close": (None, [c_void_p]),
        "psrun_exec": (c_int, [c_void_p, P(c_char_p), P(ExecOptions), P(ExecResultC), P(Error)]),
        "psrun_exec_result_free": (None, [P(ExecResultC)]),
        "psrun_write_file": (c_int, [c_void_p, c_char_p, c_void_p, c_size_t, ctypes.c_uint, P(Error)]),
        "psrun_read_file": (c_int, [c_void_p, c_char_p, c_uint64, c_size_t, P(FileData), P(Error)]),
        "psrun_list_dir": (c_int, [c_void_p, c_char_p, P(ListOptions), P(Listing), P(Error)]),
        "psrun_listing_free": (None, [P(Listing)]),
        "psrun_remove": (c_int, [c_void_p, c_char_p, P(Error)]),
        "psrun_install_package": (c_int, [c_void_p, c_char_p, P(InstallOptions), P(ExecResultC),
                                          P(Error)]),
        "psrun_session_set_approver": (None, [c_void_p, APPROVE_FN, c_void_p]),
        "psrun_gc": (c_int, [P(GcOptions), P(GcStats), P(Error)]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(L, name)
        fn.restype = res
        fn.argtypes = args
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [c_void_p]
    libc.free.restype = None
    L.libc_free = libc.free
    _lib = L
    return L
