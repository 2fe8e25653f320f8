# SPDX-License-Identifier: MIT
"""The image store (include/psrun.h: psrun_image_*, docs/images.md), as
`psrun image` is on the command line:

    from psrun import images
    img = images.pull("python:3.11-slim")          # verified, unpacked, recorded
    print(img.digest, img.env, img.working_dir)
    for i in images.list():
        print(i.reference, i.digest)
    images.remove("python:3.11-slim")
    images.prune()

Every function takes store= (default $PSRUN_IMAGE_STORE, else
/var/lib/psrun/images); pull also registries=, auth_file=, ca_file=,
mirrors=, insecure=. Credentials come from auth.json files only. Errors
raise PsrunError with psrun's one line."""
import builtins
import ctypes
import os
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from . import _lib as C
from ._sandbox import PsrunError, _check

_P = ctypes.POINTER
_c_int64 = ctypes.c_int64
_c_uint = ctypes.c_uint


class _Options(ctypes.Structure):
    _fields_ = [
        ("store", C.c_char_p),
        ("registries_file", C.c_char_p),
        ("auth_file", C.c_char_p),
        ("ca_file", C.c_char_p),
        ("mirrors", _P(C.c_char_p)),
        ("insecure", _P(C.c_char_p)),
        ("max_size", C.c_uint64),
        ("fetch_only", C.c_int),
    ]


class _Layer(ctypes.Structure):
    _fields_ = [("digest", ctypes.c_char * 72), ("media_type", C.c_char_p), ("size", _c_int64)]


class _Info(ctypes.Structure):
    _fields_ = [
        ("reference", C.c_char_p),
        ("digest", ctypes.c_char * 72),
        ("index", ctypes.c_char * 72),
        ("media_type", C.c_char_p),
        ("config", ctypes.c_char * 72),
        ("size", _c_int64),
        ("layers", _P(_Layer)),
        ("n_layers", C.c_size_t),
        ("unpacked", C.c_int),
        ("owners", ctypes.c_char * 24),
        ("os", C.c_char_p),
        ("architecture", C.c_char_p),
        ("created", C.c_char_p),
        ("env", _P(C.c_char_p)),
        ("n_env", C.c_size_t),
        ("entrypoint", _P(C.c_char_p)),
        ("cmd", _P(C.c_char_p)),
        ("n_entrypoint", C.c_size_t),
        ("n_cmd", C.c_size_t),
        ("working_dir", C.c_char_p),
        ("user", C.c_char_p),
        ("blobs_fetched", _c_uint),
        ("blobs_present", _c_uint),
        ("blobs_resumed", _c_uint),
        ("layers_unpacked", _c_uint),
        ("bytes_fetched", _c_int64),
        ("network", C.c_int),
    ]


class _PruneStats(ctypes.Structure):
    _fields_ = [
        ("blobs_removed", _c_uint),
        ("layers_removed", _c_uint),
        ("tmp_removed", _c_uint),
        ("kept_in_use", _c_uint),
        ("bytes_removed", _c_int64),
    ]


_lib = None


def _L():
    global _lib
    if _lib is None:
        L = C.lib()
        E = _P(C.Error)
        sigs = {
            "psrun_image_pull": (C.c_int, [C.c_char_p, _P(_Options), _P(_Info), E]),
            "psrun_image_import": (C.c_int, [C.c_char_p, _P(_Options), _P(_Info), E]),
            "psrun_image_inspect": (C.c_int, [C.c_char_p, _P(_Options), _P(_Info), E]),
            "psrun_image_list": (C.c_int, [_P(_Options), _P(_P(_Info)), _P(C.c_size_t), E]),
            "psrun_image_remove": (C.c_int, [C.c_char_p, _P(_Options), E]),
            "psrun_image_prune": (C.c_int, [_P(_Options), _P(_PruneStats), E]),
            "psrun_image_info_free": (None, [_P(_Info)]),
            "psrun_image_list_free": (None, [_P(_Info), C.c_size_t]),
            "psrun_image_store_default": (C.c_char_p, []),
        }
        for name, (res, args) in sigs.items():
            fn = getattr(L, name)
            fn.restype = res
            fn.argtypes = args
        _lib = L
    return _lib


@dataclass
class Layer:
    digest: str
    media_type: str
    size: int


@dataclass
class Image:
    """An image in the store: its manifest, the config's fields, its layers
    (lowest first), and, from pull/import_, what was fetched."""

    reference: str
    digest: str
    index: Optional[str]
    media_type: Optional[str]
    config: str
    size: int
    unpacked: bool
    layers: List[Layer]
    os: Optional[str] = None
    architecture: Optional[str] = None
    created: Optional[str] = None
    env: Optional[List[str]] = None
    entrypoint: Optional[List[str]] = None
    cmd: Optional[List[str]] = None
    working_dir: Optional[str] = None
    user: Optional[str] = None
    blobs_fetched: int = 0
    blobs_present: int = 0
    bytes_fetched: int = 0
    layers_unpacked: int = 0
    network: bool = False
    owners: str = "shifted"  # "subordinate ids" or "one id" in a user's store


@dataclass
class PruneStats:
    blobs_removed: int
    layers_removed: int
    tmp_removed: int
    kept_in_use: int
    bytes_removed: int


@dataclass
class _Keep:
    """What the options struct points into, alive for the call."""

    refs: list = field(default_factory=builtins.list)


def _s(b):
    return os.fsdecode(b) if b is not None else None


def _strv(p, n):
    if not p:
        return None
    return [os.fsdecode(p[i]) for i in range(n)]


def _image(i: _Info) -> Image:
    return Image(
        reference=_s(i.reference), digest=i.digest.decode(), index=i.index.decode() or None,
        media_type=_s(i.media_type), config=i.config.decode(), size=i.size,
        unpacked=bool(i.unpacked),
        layers=[Layer(i.layers[k].digest.decode(), _s(i.layers[k].media_type), i.layers[k].size)
                for k in range(i.n_layers)],
        os=_s(i.os), architecture=_s(i.architecture), created=_s(i.created),
        env=_strv(i.env, i.n_env), entrypoint=_strv(i.entrypoint, i.n_entrypoint),
        cmd=_strv(i.cmd, i.n_cmd), working_dir=_s(i.working_dir), user=_s(i.user),
        blobs_fetched=i.blobs_fetched, blobs_present=i.blobs_present,
        bytes_fetched=i.bytes_fetched, layers_unpacked=i.layers_unpacked,
        network=bool(i.network), owners=i.owners.decode())


def _enc(v):
    return os.fsencode(v) if v is not None else None


def _strarray(keep: _Keep, items: Optional[Sequence[str]]):
    if not items:
        return None
    arr = (C.c_char_p * (len(items) + 1))(*[os.fsencode(x) for x in items], None)
    keep.refs.append(arr)
    return ctypes.cast(arr, _P(C.c_char_p))


def _options(keep: _Keep, store=None, registries=None, auth_file=None, ca_file=None,
             mirrors=None, insecure=None, max_size=0, fetch_only=False) -> _Options:
    if isinstance(mirrors, str) or isinstance(insecure, str):
        raise PsrunError(22, "mirrors, insecure: must be lists of strings")
    return _Options(_enc(store), _enc(registries), _enc(auth_file), _enc(ca_file),
                    _strarray(keep, mirrors), _strarray(keep, insecure), int(max_size),
                    1 if fetch_only else 0)


def store_default() -> Optional[str]:
    """The store's root when store= is not given: root's, or a user's own
    ($XDG_DATA_HOME/psrun/images); None for a user with no home."""
    root = _L().psrun_image_store_default()
    return os.fsdecode(root) if root is not None else None


def _one(fn, reference: str, **kw) -> Image:
    keep = _Keep()
    o = _options(keep, **kw)
    info = _Info()
    err = C.Error()
    _check(fn(os.fsencode(reference), ctypes.byref(o), ctypes.byref(info), ctypes.byref(err)), err)
    try:
        return _image(info)
    finally:
        _L().psrun_image_info_free(ctypes.byref(info))


def pull(reference: str, *, store: Optional[str] = None, registries: Optional[str] = None,
         auth_file: Optional[str] = None, ca_file: Optional[str] = None,
         mirrors: Optional[Sequence[str]] = None, insecure: Optional[Sequence[str]] = None,
         max_size: int = 0, fetch_only: bool = False) -> Image:
    """Pull a registry reference into the store (psrun_image_pull)."""
    return _one(_L().psrun_image_pull, reference, store=store, registries=registries,
                auth_file=auth_file, ca_file=ca_file, mirrors=mirrors, insecure=insecure,
                max_size=max_size, fetch_only=fetch_only)


def import_(source: str, *, store: Optional[str] = None, max_size: int = 0,
            fetch_only: bool = False) -> Image:
    """Import "oci:DIR[:TAG]" or "docker-archive:FILE" (psrun_image_import)."""
    return _one(_L().psrun_image_import, source, store=store, max_size=max_size,
                fetch_only=fetch_only)


def inspect(reference: str, *, store: Optional[str] = None) -> Image:
    """An image in the store (no registry asked); PsrunError (ENOENT) when absent."""
    return _one(_L().psrun_image_inspect, reference, store=store)


def list(*, store: Optional[str] = None) -> List[Image]:  # noqa: A001 (as `psrun image ls`)
    """Every image in the store, sorted by reference."""
    keep = _Keep()
    o = _options(keep, store=store)
    v = _P(_Info)()
    n = C.c_size_t()
    err = C.Error()
    _check(_L().psrun_image_list(ctypes.byref(o), ctypes.byref(v), ctypes.byref(n),
                                 ctypes.byref(err)), err)
    try:
        return [_image(v[i]) for i in range(n.value)]
    finally:
        _L().psrun_image_list_free(v, n)


def remove(reference: str, *, store: Optional[str] = None) -> None:
    """Remove an image's record; prune removes its blobs and layers."""
    keep = _Keep()
    o = _options(keep, store=store)
    err = C.Error()
    _check(_L().psrun_image_remove(os.fsencode(reference), ctypes.byref(o), ctypes.byref(err)),
           err)


def prune(*, store: Optional[str] = None) -> PruneStats:
    """Remove what no image refers to, never a layer a live user holds."""
    keep = _Keep()
    o = _options(keep, store=store)
    st = _PruneStats()
    err = C.Error()
    _check(_L().psrun_image_prune(ctypes.byref(o), ctypes.byref(st), ctypes.byref(err)), err)
    return PruneStats(st.blobs_removed, st.layers_removed, st.tmp_removed, st.kept_in_use,
                      st.bytes_removed)
