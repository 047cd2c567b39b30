# SPDX-License-Identifier: MIT
"""Where a spec's header is at build time, and what a program including it
is compiled with: the directory holding it (the spec's include_search, then
the compiler's own directories), every directory it is compiled with, and
the -I/-D options of the compiler command."""

import os
import subprocess

from model import headers_in, system_dirs
from spec import GenError


def _unusable(cc, spec, header):
    """Why a header the compiler finds in its own directories cannot be
    compiled for its target, or "": a cross compiler also searches
    /usr/include, where a multiarch header's other half (openssl's
    opensslconf.h in /usr/include/x86_64-linux-gnu) is the build machine's."""
    language = "c++" if spec.language == "c++" else "c"
    r = subprocess.run(cc + ["-E", "-x", language, "-o", "/dev/null", "-"] +
                       [f"-D{x}" for x in spec.defines], input=f"#include <{header}>\n",
                       capture_output=True, text=True)
    errors = [line for line in r.stderr.splitlines() if "error" in line]
    return "" if r.returncode == 0 else (errors[0].strip() if errors else "the preprocessor failed")


def find_include(spec, option_dir, cc):
    """The first directory holding the spec's header: its include_search,
    then where the compiler that builds the shim looks (its -E -v list:
    Debian's multiarch directory, a cross compiler's sysroot). Returns
    (directory, whether the compiler searches it itself)."""
    if not spec.headers:  # a symbol list alone: nothing for the compiler to search
        return os.path.dirname(os.path.abspath(spec.path)), True
    header, tried = spec.headers[0], []
    for kind, value in spec.include_search:
        if kind == "option":
            d, shown = option_dir, f"-D{value}={option_dir}" if option_dir else f"-D{value} (unset)"
        elif kind == "env":
            v = os.environ.get(value)
            d = os.path.join(v, "include") if v else None
            shown = f"${value}/include = {d}" if v else f"${value}/include (${value} not set)"
        else:
            d, shown = value, value
        tried.append(shown)
        if d and headers_in(d, header):
            d = os.path.abspath(d)
            return d, d in system_dirs(cc)
    for d in system_dirs(cc):
        tried.append(f"{d} (the compiler's)")
        found = headers_in(d, header)
        if found:
            why = _unusable(cc, spec, found[0])
            if not why:
                return d, True
            tried[-1] += f": {header} is there but not for this target ({why})"
    if spec.symbols:  # served from its symbol list, untyped (docs/reference/spec.md)
        return os.path.dirname(os.path.abspath(spec.path)), True
    raise GenError(spec.path, f"{header} not found; searched: " + "; ".join(tried))


def include_path(spec, option_dir, cc):
    """Every directory the spec's header is compiled with, in order: the
    include_search entries that exist (a header of the library may include
    a file from the second, as GLib's glib.h includes glibconfig.h from
    the multiarch lib directory), with the directory holding the header
    (find_include) among them. Returns (directories, whether the compiler
    searches the header's directory itself)."""
    found, own = find_include(spec, option_dir, cc)
    dirs = []
    for kind, value in spec.include_search:
        if kind == "option":
            d = option_dir
        elif kind == "env":
            d = os.path.join(os.environ[value], "include") if os.environ.get(value) else None
        else:
            d = value
        if d and os.path.isdir(d) and os.path.abspath(d) not in dirs:
            dirs.append(os.path.abspath(d))
    if not own and found not in dirs:
        dirs.insert(0, found)
    compiler = system_dirs(cc)
    return [d for d in dirs if d not in compiler], own


def compile_flags(cc):
    """The -I, -isystem and -D options of the compiler command (--cc "cc
    -I..."), which a program including the header needs as the build did;
    a relative directory made absolute (the program is built elsewhere)."""
    out, i = [], 0
    while i < len(cc):
        w = cc[i]
        if w in ("-I", "-D", "-isystem") and i + 1 < len(cc):
            out += [w, cc[i + 1] if w == "-D" else os.path.abspath(cc[i + 1])]
            i += 2
            continue
        if w.startswith("-isystem"):
            out.append("-isystem" + os.path.abspath(w[len("-isystem"):]))
        elif w.startswith("-I"):
            out.append("-I" + os.path.abspath(w[2:]))
        elif w.startswith("-D"):
            out.append(w)
        i += 1
    return out
