# SPDX-License-Identifier: MIT
"""Where the real library is at build time, for what only it can say (its
symbol versions, gen/elfvers.py). Not the run-time search (src/search/lz_order.c):
that one serves the running process; this one the machine the shim is
built for, so it looks where that machine's libraries are:

  1. the directories the build names (-Dlibrary_dirs, --library-dir);
  2. the spec's search roots that are set ($CONDA_PREFIX/lib,
     $CUDA_HOME/lib64, ...);
  3. beside the header's prefix (<prefix>/include -> <prefix>/lib64, lib);
  4. the spec's default directories (/usr/local/cuda/lib64, ...);
  5. the directories the compiler's linker searches (cc -print-search-dirs:
     the multiarch and cross directories included).

A file counts when it is an ELF shared object of the target's machine
whose SONAME is the one asked for.
"""

import os
import subprocess

import elfvers
from model import target_arch
from spec import GenError

_MACHINES = {"x86_64": 62, "aarch64": 183}
_linker_dirs = {}


def linker_dirs(cc):
    key = tuple(cc)
    if key not in _linker_dirs:
        try:
            r = subprocess.run(cc + ["-print-search-dirs"], capture_output=True, text=True)
            out = r.stdout if r.returncode == 0 else ""
        except OSError:
            out = ""
        dirs = []
        for line in out.splitlines():
            if line.startswith("libraries: ="):
                dirs = [os.path.normpath(d) for d in line[len("libraries: ="):].split(":") if d]
        _linker_dirs[key] = [d for d in dirs if os.path.isdir(d)]
    return _linker_dirs[key]


def search_dirs(spec, cc, include_dir=None, extra_dirs=()):
    dirs = list(extra_dirs)
    for root in spec.roots_before + spec.roots_after:
        value = os.environ.get(root.var)
        if value:
            dirs += [os.path.join(value, sub) for sub in root.subdirs]
    if include_dir:
        # <prefix>/include, or <prefix>/include/<multiarch>: <prefix>/lib64, lib
        parts = os.path.normpath(include_dir).split(os.sep)
        if "include" in parts:
            prefix = os.sep.join(parts[:len(parts) - parts[::-1].index("include") - 1]) or os.sep
            dirs += [os.path.join(prefix, "lib64"), os.path.join(prefix, "lib")]
    dirs += spec.default_dirs + linker_dirs(cc)
    seen, out = set(), []
    for d in dirs:
        d = os.path.normpath(d)
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def find(spec, soname, cc, arch, include_dir=None, extra_dirs=()):
    """(path or None, [directories searched], [files passed over with why])."""
    dirs = search_dirs(spec, cc, include_dir, extra_dirs)
    passed = []
    # The SONAME's own file, then the link name a -dev package installs
    # (libcuda.so in the Toolkit's stubs/), which must carry that SONAME.
    link = soname[:soname.index(".so") + 3] if ".so" in soname else soname
    files = [os.path.join(d, n) for d in dirs for n in dict.fromkeys((soname, link))]
    for path in files:
        if not os.path.isfile(path):
            continue
        try:
            v = elfvers.read(path)
        except GenError as e:
            passed.append(f"{path}: {e}")
            continue
        if arch in _MACHINES and v.machine != _MACHINES[arch]:
            passed.append(f"{path}: ELF machine {v.machine}, not {arch}'s")
        elif v.soname != soname:
            passed.append(f"{path}: SONAME {v.soname or '(none)'}, not {soname}")
        else:
            return path, dirs, passed
    return None, dirs, passed


def find_libraries(spec, cc, include_dir, library_dirs):
    """soname<TAB>path (or -) lines for each soname, and the warnings: a
    spec that does not say how its drop-ins' symbols are versioned whose
    library was not found gets one warning naming the key. (A spec that
    says is searched too: its library's undeclared functions are served.)"""
    if spec.hidden:  # no drop-in
        return "".join(f"{s}\t-\n" for s in spec.sonames), []
    arch = target_arch(cc)
    lines, missing, searched, searched_passed = [], [], [], []
    for soname in spec.sonames:
        path, dirs, passed = find(spec, soname, cc, arch, include_dir, library_dirs)
        lines.append(f"{soname}\t{path or '-'}\n")
        if not path:
            missing.append(soname)
            searched = dirs
            searched_passed = passed
    warnings = []
    if missing and spec.symbol_versions is None and not spec.symbols:  # else a warning
        over = "".join(f"; passed over {p}" for p in searched_passed)
        warnings.append(
            f"{spec.path}: warning: {', '.join(missing)} not found at build time, so "
            f"{'its drop-in has' if len(missing) == 1 else 'their drop-ins have'} no symbol "
            f"versions; if the real library versions its symbols, set 'symbol_versions' in "
            f"[library] (true: one node named after the SONAME, or the node's name), or name "
            f"its directory with -Dlibrary_dirs=DIR (searched: {', '.join(searched)}{over})")
    return "".join(lines), warnings


def dependency_names(library, cc):
    """The names the real library's dependencies define (its DT_NEEDED and
    theirs, breadth first, each found beside the library or where the
    linker looks): where dlsym through the library's handle finds what the
    library itself does not define (ncurses' curses_version, libtinfo's).
    library: the real library as elfvers.read gave it. Returns (names, the
    dependencies not found)."""
    names, seen, missing = set(), set(), []
    queue = list(library.needed)
    where = [os.path.dirname(os.path.abspath(library.path))] + linker_dirs(cc)
    while queue:
        soname = queue.pop(0)
        if soname in seen:
            continue
        seen.add(soname)
        for d in where:
            path = os.path.join(d, soname)
            if not os.path.isfile(path):
                continue
            try:
                v = elfvers.read(path)
            except GenError:
                continue
            if v.machine != library.machine:
                continue
            names.update(v.symbols)
            queue += v.needed
            break
        else:
            missing.append(soname)
    return names, missing
