# SPDX-License-Identifier: MIT
"""Which NVIDIA libraries this process got, from where, and why.

The lazynccl shims (the drop-ins ``lazynccl-run`` serves, or a shim a
program or extension links) load each library at its first call. This
module asks them, through their control API, what they did. It never loads
a real library unless :func:`load` is called. The libraries are those this
package serves (``LIBRARIES``, generated from the specs it was built with).

>>> import lazynccl
>>> {"nccl", "nvrtc", "nvjitlink"} <= set(lazynccl.LIBRARIES)
True
>>> lazynccl.status("nccl").loaded in (True, False)
True
>>> lazynccl.status("libfoo")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
ValueError: unknown library 'libfoo' (known: ...nccl...)
"""

from __future__ import annotations

import ctypes
import itertools
import os
from dataclasses import dataclass
from typing import Optional, Tuple

__all__ = ["LIBRARIES", "LibraryStatus", "LoadError", "status", "would_load", "load",
           "package_dir"]

# LIBRARIES, id: (control API prefix, drop-ins newest first, version function); FOUND_VIA,
# the search steps as cuda.pathfinder names its own where they mean the same (its
# LoadedDL.found_via): both generated, the steps from the C code's table (src/common/lz_stepnames.h).
from lazynccl._libraries import FOUND_VIA as _FOUND_VIA, LIBRARIES


class LoadError(RuntimeError):
    """The library could not be loaded; the message is the shim's report:
    every candidate tried and why it was rejected, then every place searched."""


@dataclass(frozen=True)
class LibraryStatus:
    """What one shim says of its library.

    name: a key of LIBRARIES ("nccl", "cublas", ...); shim: the file holding
    the shim that answered (a drop-in, an extension's shim, "the program"
    when the program links it; "" when none is in the process); status(),
    would_load() and load() ask the same one; loaded: whether the real library
    is loaded; path: the file loaded (or, from would_load, that would be);
    version: its version, asked of it when loaded ("2.28.9", "13.0");
    step: the search step that found it ("wheel", "ld.so.cache",
    "LAZYNCCL_LIBPATH", ...); found_via: the same in cuda.pathfinder's words
    where it has one ("site-packages", "system-search", "conda",
    "CUDA_HOME"), else the step; asked_path: the file the program asked for
    by path, which lazynccl-run's audit module handed to the drop-in; error:
    why it could not be loaded, or None.
    """
    name: str
    shim: str
    loaded: bool
    path: Optional[str] = None
    version: Optional[str] = None
    step: Optional[str] = None
    found_via: Optional[str] = None
    asked_path: Optional[str] = None
    error: Optional[str] = None


def package_dir() -> str:
    """The installed package's directory: its drop-ins are in dropin/, the
    audit module and lazynccl-run beside this file."""
    return os.path.dirname(os.path.abspath(__file__))


def _check(name: str) -> Tuple[str, Tuple[str, ...], str]:
    if name not in LIBRARIES:
        raise ValueError(f"unknown library {name!r} (known: {', '.join(sorted(LIBRARIES))})")
    return LIBRARIES[name]


def _text(fn) -> Optional[str]:
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    v = fn()
    return v.decode(errors="replace") if v is not None else None


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


class _PhdrInfo(ctypes.Structure):
    _fields_ = [("dlpi_addr", ctypes.c_void_p), ("dlpi_name", ctypes.c_char_p)]


def _objects():
    """The files of every object loaded in the process (dl_iterate_phdr):
    what ld.so knows, whichever scope holds it."""
    names = []
    cb_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_PhdrInfo), ctypes.c_size_t,
                               ctypes.c_void_p)

    def each(info, size, data):
        name = info.contents.dlpi_name
        if name:
            names.append(name.decode(errors="surrogateescape"))
        return 0
    ctypes.CDLL(None).dl_iterate_phdr(cb_type(each), None)
    return names


def _file_of(h, prefix: str) -> str:
    """The file holding the answering shim (dladdr of its _is_loaded): a
    drop-in's path, an extension's shim, or the program itself."""
    info = _DlInfo()
    addr = ctypes.cast(getattr(h, prefix + "_is_loaded"), ctypes.c_void_p)
    dladdr = ctypes.CDLL(None).dladdr
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
        return os.path.realpath(info.dli_fname.decode(errors="surrogateescape"))
    return "the program"


def _in_process(prefix: str, dropins):
    """The shim of prefix already in the process, or None; loads nothing.
    First the global scope (a shim the program links, preloaded drop-ins);
    then, since a shim need not be global (a ctypes.CDLL by path, an
    extension Python loads, load() itself are RTLD_LOCAL), the drop-ins
    lazynccl-run's audit module names, this package's own, and every loaded
    object named like a shim (lib<shim>.so*) or a drop-in."""
    glob = ctypes.CDLL(None)
    try:
        getattr(glob, prefix + "_is_loaded")
        return glob
    except AttributeError:
        pass
    named = [p for p in os.environ.get("LAZYNCCL_AUDIT_DROPINS", "").split(":")
             if os.path.basename(p) in dropins]

    def loaded():  # followed only when the files named before hold no shim
        for p in _objects():
            if os.path.basename(p).startswith(f"lib{prefix}.so") or os.path.basename(p) in dropins:
                yield p
    seen = set()
    for path in itertools.chain(named, [os.path.join(package_dir(), "dropin", f) for f in dropins],
                                loaded()):
        if path in seen:
            continue
        seen.add(path)
        try:
            h = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY | os.RTLD_LOCAL)
            getattr(h, prefix + "_is_loaded")
            return h
        except (OSError, AttributeError):
            continue
    return None


def _shim(name: str, allow_dropin: bool):
    """(handle, where) of a shim for name: one already in the process (where:
    the file that holds it), else, when allowed, this package's drop-in
    (loading a drop-in loads no real library: that waits for a call)."""
    prefix, dropins, _ = _check(name)
    h = _in_process(prefix, dropins)
    if h is not None:
        return h, _file_of(h, prefix)
    if not allow_dropin:
        return None, ""
    for f in dropins:
        path = os.path.join(package_dir(), "dropin", f)
        if os.path.exists(path):
            return ctypes.CDLL(path, mode=os.RTLD_LOCAL | os.RTLD_LAZY), os.path.realpath(path)
    return None, ""


def _version(name: str, h) -> Optional[str]:
    """The loaded library's version as its own version function gives it
    (<shim>_loaded_version), its integer code left out: "2.28.9"."""
    fn = getattr(h, LIBRARIES[name][0] + "_loaded_version")
    fn.restype = ctypes.c_int
    buf = ctypes.create_string_buffer(128)
    if not fn(buf, ctypes.c_size_t(len(buf))):
        return None
    return buf.value.decode(errors="replace").split(" (")[0]


def _status(name: str, h, where: str) -> LibraryStatus:
    prefix = LIBRARIES[name][0]
    is_loaded = getattr(h, prefix + "_is_loaded")
    is_loaded.restype = ctypes.c_int
    loaded = bool(is_loaded())
    step = _text(getattr(h, prefix + "_loaded_step")) if loaded else None
    asked = None
    try:
        asked = _text(getattr(h, prefix + "_asked_path"))
    except AttributeError:
        pass
    return LibraryStatus(
        name=name, shim=where, loaded=loaded,
        path=_text(getattr(h, prefix + "_loaded_path")) if loaded else None,
        version=_version(name, h) if loaded else None,
        step=step, found_via=_FOUND_VIA.get(step, step) if step else None,
        asked_path=asked,
        error=None if loaded else _text(getattr(h, prefix + "_last_error")))


def status(name: Optional[str] = None):
    """What the shims in this process say: one LibraryStatus, or, without a
    name, a dict of every library served. Never loads anything: a library no shim in
    the process stands for is reported with shim "" and loaded False."""
    if name is None:
        return {n: status(n) for n in LIBRARIES}
    _check(name)
    h, where = _shim(name, allow_dropin=False)
    if h is None:
        return LibraryStatus(name=name, shim="", loaded=False,
                             error="no lazynccl shim for it in this process")
    return _status(name, h, where)


def would_load(name: str) -> LibraryStatus:
    """Which file a first call would load now, found by which step, without
    loading it (the shim's probe: no constructor runs). Once the library is
    loaded, the answer status() gives (loaded True). Otherwise loaded is
    False; path is None and error says why when nothing would load."""
    prefix = _check(name)[0]
    h, where = _shim(name, allow_dropin=True)
    if h is None:
        return LibraryStatus(name=name, shim="", loaded=False,
                             error="no lazynccl shim in the process and no drop-in in the package")
    status_now = _status(name, h, where)
    if status_now.loaded:
        return status_now  # the same answer status() and load() give
    buf = ctypes.create_string_buffer(8192)
    fn = getattr(h, prefix + "_would_load")
    fn.restype = ctypes.c_int
    if fn(buf, ctypes.c_size_t(len(buf))):
        return LibraryStatus(name=name, shim=where, loaded=False, path=buf.value.decode())
    # 0: the buffer holds the search's report (every candidate and why).
    return LibraryStatus(name=name, shim=where, loaded=False,
                         error=buf.value.decode(errors="replace") or "nothing would load")


def load(name: str) -> LibraryStatus:
    """Load the library now (a process that wants to fail early), through the
    shim in the process or this package's drop-in; raises LoadError with the
    shim's report when it cannot."""
    prefix = _check(name)[0]
    h, where = _shim(name, allow_dropin=True)
    if h is None:
        raise LoadError(f"{name}: no lazynccl shim in the process and no drop-in in the package")
    fn = getattr(h, prefix + "_load")
    fn.restype = ctypes.c_int
    if fn() != 0:
        raise LoadError(_text(getattr(h, prefix + "_last_error")) or f"{name} could not be loaded")
    return _status(name, h, where)
