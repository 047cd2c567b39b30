# SPDX-License-Identifier: MIT
"""Build the model of a library from its real header.

The header is preprocessed by the C compiler against the stand-in headers in
gen/standins (pycparser cannot read the real system/CUDA headers) and parsed
with pycparser. The model is the list of functions the header itself declares
(not those of headers it includes) whose names match the spec's pattern.
"""

import copy
import os
import re
import subprocess
from dataclasses import dataclass

from pycparser import c_ast, c_generator, c_parser
from pycparser.c_parser import ParseError

from spec import GenError

STANDINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standins")


@dataclass
class Function:
    name: str
    ret: str          # return type as C text, e.g. "const char *"
    params: str       # parameter list with names a0..aN, e.g. "int *a0" or "void"
    args: str         # the forwarded argument list, e.g. "a0"
    line: int         # line in the header, for messages
    variadic: bool = False  # ends in "...": forwarded untouched by an assembly thunk


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


def preprocess(cc, header_path, include_dirs, defines, real, standins=()):
    """Preprocess header_path. real=False uses the stand-ins (for parsing):
    the spec's sets, then libc's; real=True uses the real include path and
    returns the macro definitions."""
    d = [f"-D{x}" for x in defines]
    inc = [f"-I{x}" for x in include_dirs]
    if real:
        return _cc(cc, ["-E", "-dM", "-x", "c"] + d + inc + [header_path], header_path)
    sets = []
    for s in list(standins) + ["libc"]:
        sets += ["-I", os.path.join(STANDINS, s)]
    return _cc(cc, ["-E", "-nostdinc", "-undef"] + target_predefines(cc) +
               ["-D__attribute__(x)=", "-D__extension__=", "-D__restrict=",
                "-D__inline=inline", "-D__asm__(x)="] + sets + ["-x", "c"] + d + inc + [header_path],
               header_path)


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


def _innermost_typedecl(node):
    while not isinstance(node, c_ast.TypeDecl):
        node = node.type
    return node


def _is_void(param):
    t = param.type
    return (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)
            and t.type.names == ["void"])


def _function(decl, gen, header):
    fdecl = decl.type
    line = decl.coord.line if decl.coord else 0
    where = f"{header}:{line}"
    if not isinstance(fdecl.type, (c_ast.TypeDecl, c_ast.PtrDecl)) or \
            isinstance(getattr(fdecl.type, "type", None), c_ast.FuncDecl):
        raise GenError(where, f"{decl.name}: unsupported return type")
    ret_node = copy.deepcopy(fdecl.type)
    _innermost_typedecl(ret_node).declname = None
    ret = gen.visit(ret_node).strip()

    params, args = [], []
    plist = fdecl.args.params if fdecl.args else []
    if len(plist) == 1 and _is_void(plist[0]):
        plist = []
    variadic = False
    for i, p in enumerate(plist):
        if isinstance(p, c_ast.EllipsisParam):
            variadic = True
            params.append("...")
            continue
        p = copy.deepcopy(p)
        if isinstance(p, c_ast.Typename):  # unnamed parameter
            p = c_ast.Decl(f"a{i}", p.quals, [], [], [], p.type, None, None)
        p.name = f"a{i}"
        _innermost_typedecl(p.type).declname = f"a{i}"
        params.append(gen.visit(p))
        args.append(f"a{i}")
    return Function(decl.name, ret, ", ".join(params) or "void", ", ".join(args), line, variadic)


def parse_functions(cc, spec, include_dirs):
    """Return (header paths, [Function]) for every matching declaration."""
    gen = c_generator.CGenerator()
    functions, seen, headers = [], set(), []
    extra = [(os.path.basename(p), p) for p in spec.extra_headers]
    for header, path in [(h, find_header(h, include_dirs)) for h in spec.headers] + extra:
        headers.append(path)
        text = preprocess(cc, path, include_dirs, spec.defines, real=False,
                          standins=spec.standins)
        try:
            ast = c_parser.CParser().parse(text, path)
        except ParseError as e:
            raise GenError(path, f"cannot parse (after preprocessing): {e}")
        for node in ast.ext:
            if not (isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl)):
                continue
            if not node.coord or os.path.basename(node.coord.file) != header:
                continue
            if not spec.function_pattern.search(node.name) or node.name in seen:
                continue
            seen.add(node.name)
            functions.append(_function(node, gen, path))
    if not functions:
        raise GenError(spec.path, f"no function in {', '.join(spec.headers)} matches "
                                  f"function_pattern {spec.function_pattern.pattern!r}")
    return headers, functions
