# SPDX-License-Identifier: MIT
"""Build the model of a library from its real headers, read as the
compiler sees them: libclang (Debian's python3-clang-14) parses the named
header with the real system and CUDA headers, the compiler's own include
directories and the target's predefined macros. The model is every function
the named headers bring in (an umbrella's included headers too) from the
places the spec allows (by default the named header's own directory; never
the C library's headers), whose names match the spec's pattern.
"""

import os
import re
import subprocess
import sys
from dataclasses import dataclass

from spec import GenError


@dataclass
class Function:
    name: str
    ret: str          # return type as C text, e.g. "const char *"
    params: str       # parameter list with names a0..aN, e.g. "int *a0" or "void"
    args: str         # the forwarded argument list, e.g. "a0"
    line: int         # line in the header, for messages
    variadic: bool = False  # ends in "...": forwarded untouched by an assembly thunk
    file: str = ""    # the header that declares it (an umbrella's included one)
    ret_pointer: bool = False  # the return type is a pointer, through typedefs too
    ret_canonical: str = ""    # the return type with typedefs resolved
    opaque: bool = False       # exported by the real library, declared by no header: forwarded
                               # untouched by an assembly thunk, its type unknown

def find_header(name, include_dirs):
    for d in include_dirs:
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    raise GenError(name, "header not found in: " + (", ".join(include_dirs) or "(no directories)"))


def _cc(cc, args, what):
    try:
        r = subprocess.run(cc + args, capture_output=True, text=True)
    except OSError as e:
        raise GenError(what, f"cannot run the C compiler {cc[0]!r}: {e.strerror}")
    if r.returncode != 0:
        raise GenError(what, "the C compiler failed:\n" + r.stderr.strip())
    return r.stdout


def preprocess(cc, header_path, include_dirs, defines):
    """The macro definitions the real header makes (cc -E -dM)."""
    d = [f"-D{x}" for x in defines]
    inc = [f"-I{x}" for x in include_dirs]
    return _cc(cc, ["-E", "-dM", "-x", "c"] + d + inc + [header_path], header_path)


_ARCH_MACROS = ("__x86_64__", "__aarch64__", "__linux__", "__LP64__", "__ILP32__",
                "__BYTE_ORDER__", "__ORDER_LITTLE_ENDIAN__", "__ORDER_BIG_ENDIAN__",
                "__SIZEOF_POINTER__", "__SIZEOF_LONG__", "__CHAR_UNSIGNED__")
_predefined = {}


def target_predefines(cc):
    """The target's own architecture macros, from the compiler that builds
    the shim (a cross compiler gives its target's): -undef drops them all."""
    key = tuple(cc)
    if key not in _predefined:
        text = _cc(cc, ["-E", "-dM", "-x", "c", "/dev/null"], "the C compiler's predefined macros")
        out = []
        for line in text.splitlines():
            m = re.match(r"#define (\w+) (.*)$", line)
            if m and m.group(1) in _ARCH_MACROS:
                out.append(f"-D{m.group(1)}={m.group(2).strip()}")
        _predefined[key] = sorted(out)
    return _predefined[key]


def target_arch(cc):
    """'x86_64', 'aarch64' or 'other': which thunks the target gets."""
    flags = target_predefines(cc)
    for arch in ("x86_64", "aarch64"):
        if any(f.startswith(f"-D__{arch}__=") for f in flags):
            return arch
    return "other"


def macro_values(macro_text, names):
    values = {}
    for line in macro_text.splitlines():
        m = re.match(r"#define (\w+) (.*)$", line)
        if m and m.group(1) in names:
            values[m.group(1)] = m.group(2).strip()
    return [(n, values.get(n, "(undefined)")) for n in names]


_system_dirs = {}


def system_dirs(cc):
    """The compiler's own include directories, in its order ("#include <...>
    search starts here"), less its private ones (stddef.h and friends, which
    libclang brings itself)."""
    key = tuple(cc)
    if key not in _system_dirs:
        r = subprocess.run(cc + ["-E", "-v", "-x", "c", "/dev/null"], capture_output=True, text=True)
        dirs, on = [], False
        for line in r.stderr.splitlines():
            if line.startswith("#include <...>"):
                on = True
            elif line.startswith("End of search list"):
                break
            elif on:
                d = os.path.normpath(line.strip())
                if not re.search(r"/gcc(-cross)?/[^/]+/\d+/include(-fixed)?$", d):
                    dirs.append(d)
        _system_dirs[key] = dirs
    return _system_dirs[key]


def _target(cc):
    return _cc(cc, ["-dumpmachine"], "the C compiler's target").strip()


def clang_args(cc, include_dirs, defines):
    """What libclang is told: the target, the compiler's system directories,
    the include directories and the spec's defines, with the generated
    file's pinned ones (_FILE_OFFSET_BITS and _TIME_BITS undefined)."""
    args = ["-x", "c", "-std=gnu11", f"--target={_target(cc)}", "-nostdlibinc",
            "-U_FILE_OFFSET_BITS", "-U_TIME_BITS"]
    args += [f"-D{x}" for x in defines]
    args += [f"-I{x}" for x in include_dirs]
    for d in system_dirs(cc):
        args += ["-isystem", d]
    return args


def _index():
    try:
        import clang.cindex as ci
    except ImportError:
        raise GenError("lazygen", f"libclang's Python bindings are missing in {sys.executable}: "
                                  "pip install libclang (PyPI), or on Debian apt-get install "
                                  "python3-clang-14 and run the generator with /usr/bin/python3")
    try:
        return ci, ci.Index.create()
    except Exception as e:  # the bindings raise their own LibclangError
        raise GenError("lazygen", f"libclang cannot be loaded: {e}")


def _declarator(type_spelling, name):
    """A parameter's declaration from its type's spelling and a name:
    'int *' -> 'int *a0', 'void (*)(void *)' -> 'void (*a0)(void *)',
    'int [4]' -> 'int a0[4]'."""
    s = type_spelling
    if "(*)" in s:
        return s.replace("(*)", f"(*{name})", 1)
    m = re.match(r"^(.*?)\s*(\[[^\]]*\])$", s)
    if m:
        base = m.group(1)
        return f"{base}{'' if base.endswith('*') else ' '}{name}{m.group(2)}"
    return f"{s}{name}" if s.endswith("*") else f"{s} {name}"


def _allowed(spec, header_path, cc):
    """Where declarations may come from: the spec's declarations_from
    (files or directories, relative to the named header's directory, or
    absolute), else the named header's directory, or, where that is one of
    the compiler's system directories (liblzma's lzma.h in /usr/include),
    the header itself and its same-named subdirectory (lzma/)."""
    here = os.path.dirname(os.path.realpath(header_path))
    if spec.declarations_from:
        return [os.path.realpath(os.path.join(here, x)) for x in spec.declarations_from]
    if here in {os.path.realpath(d) for d in system_dirs(cc)}:
        stem = os.path.splitext(os.path.basename(header_path))[0]
        return [os.path.realpath(header_path), os.path.join(here, stem)]
    return [here]


def _inside(path, places):
    p = os.path.realpath(path)
    return any(p == x or p.startswith(x.rstrip("/") + "/") for x in places)


def parse_functions(cc, spec, include_dirs):
    """Return (header paths, [Function]) for every matching declaration."""
    ci, index = _index()
    functions, seen, headers = [], set(), []
    named = [find_header(h, include_dirs) for h in spec.headers] + list(spec.extra_headers)
    args = clang_args(cc, include_dirs, spec.defines)
    for path in named:
        headers.append(path)
        tu = index.parse(path, args=args,
                         options=ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES |
                         ci.TranslationUnit.PARSE_INCOMPLETE)
        errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        if errors:
            e = errors[0]
            f = e.location.file.name if e.location.file else path
            where = f"{f}:{e.location.line}:{e.location.column}"
            try:
                with open(f, encoding="utf-8", errors="replace") as h:
                    text = h.read().splitlines()[e.location.line - 1].strip()
            except (OSError, IndexError):
                text = ""
            raise GenError(where, f"cannot read the header: {e.spelling}" +
                           (f", in: {text}" if text else "") +
                           (f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""))
        places = _allowed(spec, path, cc)
        for c in tu.cursor.get_children():
            if c.kind != ci.CursorKind.FUNCTION_DECL or c.is_definition() or \
                    c.storage_class == ci.StorageClass.STATIC:
                continue
            name = c.spelling
            if not c.location.file or not _inside(c.location.file.name, places):
                continue
            if not spec.function_pattern.search(name) or name in seen:
                continue
            seen.add(name)
            functions.append(_function(ci, c))
    if not functions:
        raise GenError(spec.path, f"no function in {', '.join(spec.headers)} matches "
                                  f"function_pattern {spec.function_pattern.pattern!r}")
    return headers, functions


def _function(ci, c):
    where = f"{c.location.file.name}:{c.location.line}"
    ret = c.result_type.spelling
    if c.result_type.get_pointee().kind == ci.TypeKind.FUNCTIONPROTO or "(*)" in ret:
        raise GenError(where, f"{c.spelling}: returns a function pointer (give it a typedef)")
    params, args = [], []
    for i, a in enumerate(c.get_arguments()):
        params.append(_declarator(a.type.spelling, f"a{i}"))
        args.append(f"a{i}")
    variadic = c.type.kind == ci.TypeKind.FUNCTIONPROTO and c.type.is_function_variadic()
    if variadic:
        params.append("...")
    canonical = c.result_type.get_canonical()
    return Function(c.spelling, ret, ", ".join(params) or "void", ", ".join(args),
                    c.location.line, variadic, c.location.file.name,
                    canonical.kind == ci.TypeKind.POINTER, canonical.spelling)
