# SPDX-License-Identifier: MIT
"""Build the model of a library from its real headers, read as the
compiler sees them: libclang (Debian's python3-clang-14) parses the named
header with the real system and CUDA headers, the compiler's own include
directories and the target's predefined macros. The model is every function
the named headers bring in (an umbrella's included headers too) from the
places the spec allows (by default the named header's own directory; never
the C library's headers), whose names match the spec's pattern.
"""

import glob
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
    ret_spelled: str = ""      # a C++ header's return type as written (ret is its C form):
                               # what [failure] names
    wide_vector: int = 0       # the widest vector parameter or result over 16 bytes (AVX's
                               # __m256: 32, __m512: 64), else 0: its first call must not go
                               # through the forward, which keeps only xmm0-7, and its typed
                               # code is compiled for the instructions that type needs
    param_names: tuple = ()    # each parameter's name in the header ("" where it has none):
                               # what a spec's failure out-parameters name
    param_writable: tuple = () # each parameter a pointer to what may be written (not const),
                               # read with the names: where a failure out-parameter may store
    noreturn: bool = False     # declared never to return (_Noreturn, noreturn): without its
                               # library it stops the process, never returns

@dataclass
class Variable:
    """An exported variable the header declares (served by <id>_data.c)."""
    name: str
    type: str          # as C text, e.g. "char *"
    line: int
    file: str
    function_pointer: bool  # a pointer to a function: served by a trampoline
    size: int = -1     # sizeof, -1 when the header leaves it incomplete (char v[])
    array_of: str = ""  # an incomplete array's element type
    ret: str = ""      # a function pointer's: what the function returns, as C text
    ret_pointer: bool = False  # ... a pointer, through typedefs too


def is_pattern(name):
    """A 'headers' entry naming several files: a glob ("gsl/gsl_*.h") or a
    directory ("gsl/": every .h directly in it)."""
    return name.endswith("/") or any(c in name for c in "*?[")


def headers_in(directory, name):
    """The headers an entry names in one include directory, relative to it,
    sorted (the same order on every machine); [] when none."""
    if not is_pattern(name):
        return [name] if os.path.isfile(os.path.join(directory, name)) else []
    pattern = os.path.join(directory, name + "*.h" if name.endswith("/") else name)
    return sorted(os.path.relpath(p, directory) for p in glob.glob(pattern) if os.path.isfile(p))


def expand_headers(spec, include_dirs):
    """The spec's headers with each pattern replaced by the files it matches
    in the first include directory where it matches any; every entry that
    matches nothing is named in one error."""
    out, missing = [], []
    for name in spec.headers:
        hits = next((h for h in (headers_in(d, name) for d in include_dirs) if h), None)
        if hits is None:
            missing.append(name)
        out += hits or []
    odd = [h for h in out if any(c in h for c in '"\n<>\\')]
    if odd:
        raise GenError(f"{spec.path} [library] 'headers'",
                       f"{odd[0]!r}: a header name with a quote, bracket, backslash or newline "
                       f"cannot be included")
    if missing:
        raise GenError(f"{spec.path} [library] 'headers'",
                       f"{', '.join(map(repr, missing))}: no such header in: "
                       + (", ".join(include_dirs) or "(no directories)"))
    spec.headers = list(dict.fromkeys(out))
    return spec.headers


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


def system_dirs(cc, language="c"):
    """The compiler's own include directories, in its order ("#include <...>
    search starts here"), less its private ones (stddef.h and friends, which
    libclang brings itself); for C++, the C++ library's first."""
    key = (tuple(cc), language)
    if key not in _system_dirs:
        r = subprocess.run(cc + ["-E", "-v", "-x", language, "/dev/null"], capture_output=True,
                           text=True)
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


def clang_args(cc, include_dirs, defines, language="c"):
    """What libclang is told: the target, the compiler's system directories,
    the include directories and the spec's defines, with the generated
    file's pinned ones (_FILE_OFFSET_BITS and _TIME_BITS undefined)."""
    args = (["-x", "c++", "-std=gnu++17"] if language == "c++" else ["-x", "c", "-std=gnu11"]) + \
        [f"--target={_target(cc)}", "-nostdlibinc", "-U_FILE_OFFSET_BITS", "-U_TIME_BITS"]
    args += [f"-D{x}" for x in defines]
    args += [f"-I{x}" for x in include_dirs]
    for d in system_dirs(cc, language):
        args += ["-isystem", d]
    return args


def _index():
    try:
        import clang.cindex as ci
    except ImportError as e:
        raise GenError(sys.executable, "libclang's Python bindings are missing in this Python: "
                                       "pip install libclang (PyPI), or on Debian apt-get install "
                                       "python3-clang-14 and run the generator with /usr/bin/python3 "
                                       f"(the import said: {e})")
    try:
        return ci, ci.Index.create()
    except Exception as e:  # the bindings raise their own LibclangError
        raise GenError("lazygen", f"libclang cannot be loaded: {e}")


def _declarator(type_spelling, name):
    """A declaration of name with the type spelled: 'int *' -> 'int *a0',
    'int [4]' -> 'int a0[4]'. A type with a function in it (a function
    pointer, a pointer to one, one returning one) is written through GNU C's
    __typeof__, which takes any type name: its declarator need not be
    rebuilt by hand, and the compiler still checks it against the header."""
    s = type_spelling
    if "(" in s:
        return f"__typeof__({s}) {name}"
    m = re.match(r"^(.*?)\s*((?:\[[^\]]*\])+)$", s)
    if m:
        base = m.group(1)
        return f"{base}{'' if base.endswith('*') else ' '}{name}{m.group(2)}"
    return f"{s}{name}" if s.endswith("*") else f"{s} {name}"


def type_name(type_spelling):
    """A return type as text that can stand before a function's name."""
    return f"__typeof__({type_spelling})" if "(" in type_spelling else type_spelling


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


def _umbrella(paths):
    """One translation unit including every named header in the order given,
    as a consumer does: a header meant to follow another is read after it."""
    return "".join(f'#include "{p}"\n' for p in paths)


def _declarations(ci, cursor, cxx):
    """The translation unit's top-level declarations; in C++, those inside
    extern "C" blocks too, and none of a namespace's (C++ linkage)."""
    for c in cursor.get_children():
        if cxx and c.kind in (ci.CursorKind.LINKAGE_SPEC, ci.CursorKind.UNEXPOSED_DECL):
            yield from _declarations(ci, c, cxx)
        elif not (cxx and c.kind == ci.CursorKind.FUNCTION_DECL and c.mangled_name != c.spelling):
            yield c  # a C++-linkage function's symbol is mangled: not the C API


def _parse(ci, index, named, args, cxx=False):
    source = os.path.join(os.path.dirname(named[0]), f"<lazygen headers>.{'cpp' if cxx else 'c'}")
    tu = index.parse(source, args=args, unsaved_files=[(source, _umbrella(named))],
                     options=ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES |
                     ci.TranslationUnit.PARSE_INCOMPLETE)
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        e = errors[0]
        f = e.location.file.name if e.location.file else named[0]
        where = f"{f}:{e.location.line}:{e.location.column}"
        try:
            with open(f, encoding="utf-8", errors="replace") as h:
                text = h.read().splitlines()[e.location.line - 1].strip()
        except (OSError, IndexError):
            text = ""
        # The line where the error is; an #error's line alone, which holds
        # its words already.
        more = len(errors) - 1
        said = text if text.startswith("#") and e.spelling.rstrip(".") in text else \
            e.spelling + (f", in: {text}" if text else "")
        raise GenError(where, f"cannot read the header: {said}" +
                       (f" (and {more} more error{'s' if more > 1 else ''})" if more else ""))
    return tu


def _translation_unit(cc, spec, include_dirs):
    """(header paths, the parsed translation unit), or None where no header
    is named or found and a symbol list serves. Parsed once per spec and
    arguments: the C++ enumerators (enumerators()) read the same unit."""
    if not spec.headers:  # a symbol list alone (spec.symbols): nothing declared
        return None
    ci, index = _index()
    # Where the caller says, then where the compiler looks (lazygen by hand).
    search = list(include_dirs) + [d for d in system_dirs(cc) if d not in include_dirs]
    try:
        named = [find_header(h, search) for h in expand_headers(spec, search)] + \
            list(spec.extra_headers)
    except GenError:
        if spec.symbols:  # no header here: the symbol list serves, untyped
            return None
        raise
    args = clang_args(cc, include_dirs, spec.defines, spec.language)
    key = (tuple(named), tuple(args))
    if key not in _units:
        _units[key] = _parse(ci, index, named, args, spec.language == "c++")
    return named, _units[key]


_units = {}


def parse_functions(cc, spec, include_dirs):
    """Return (header paths, [Function], [Variable]) for every matching
    declaration. Declarations that cannot be served are all named in one
    error."""
    unit = _translation_unit(cc, spec, include_dirs)
    if unit is None:
        return [], [], []
    ci, _ = _index()
    named, tu = unit
    cxx = spec.language == "c++"
    places = [p for path in named for p in _allowed(spec, path, cc)]
    excluded = set(spec.exclude)
    functions, variables, seen, refused = [], [], set(), []
    inside = {}  # a header's path: whether declarations from it are taken (one realpath each)
    for c in _declarations(ci, tu.cursor, cxx):
        kind = c.kind
        variable = kind == ci.CursorKind.VAR_DECL and \
            c.storage_class == ci.StorageClass.EXTERN and not cxx
        function = kind == ci.CursorKind.FUNCTION_DECL and not c.is_definition() and \
            c.storage_class != ci.StorageClass.STATIC
        if not (variable or function):
            continue
        name = c.spelling
        where = c.location.file
        if not where or not spec.function_pattern.search(name) or name in seen:
            continue
        if where.name not in inside:
            inside[where.name] = _inside(where.name, places)
        if not inside[where.name]:
            continue
        seen.add(name)
        if name in excluded:
            continue
        got = _variable(ci, c) if variable else _cxx_function(ci, c) if cxx else _function(ci, c, name, bool(spec.failure_outs))
        if isinstance(got, str):
            refused.append(got)
        else:
            (variables if variable else functions).append(got)
    refused += [f"'exclude': {n} is not a function the headers declare and function_pattern "
                f"selects" for n in spec.exclude if n not in seen]
    if refused:
        raise GenError(spec.path, "\n  ".join([f"{len(refused)} declaration(s) cannot be served "
                                               f"(leave them out with 'exclude'):"] + refused))
    if not functions:
        raise GenError(spec.path, f"no function in {', '.join(spec.headers)} matches "
                                  f"function_pattern {spec.function_pattern.pattern!r}")
    return named, functions, variables


def _variable(ci, c):
    """The Variable, or why it cannot be served."""
    name = c.spelling
    where = f"{c.location.file.name}:{c.location.line}"
    t = c.type.get_canonical()
    if "(unnamed" in c.type.spelling or "(anonymous" in c.type.spelling:
        return f"{where}: {name}: a variable of a type with no name ({c.type.spelling})"
    if getattr(c, "tls_kind", None) is not None and c.tls_kind.name != "NONE":
        return f"{where}: {name}: a thread-local variable: each thread's copy is the library's own"
    fp = t.kind == ci.TypeKind.POINTER and t.get_pointee().kind in (
        ci.TypeKind.FUNCTIONPROTO, ci.TypeKind.FUNCTIONNOPROTO)
    if t.kind == ci.TypeKind.INCOMPLETEARRAY:
        return Variable(name, c.type.spelling, c.location.line, c.location.file.name, False,
                        -1, t.element_type.spelling)
    size = c.type.get_size()
    if size < 0:
        return f"{where}: {name}: a variable of an incomplete type ({c.type.spelling})"
    res = t.get_pointee().get_result() if fp else None
    return Variable(name, c.type.spelling, c.location.line, c.location.file.name, fp, size,
                    ret=type_name(res.spelling) if res else "",
                    ret_pointer=bool(res) and res.get_canonical().kind == ci.TypeKind.POINTER)


def _function(ci, c, name=None, with_names=True):
    """The Function, or why it cannot be served (name: its spelling, read
    already; with_names: the parameters' names are wanted)."""
    name = name or name
    loc = c.location
    file, line = loc.file.name, loc.line
    where = f"{file}:{line}"
    result, ctype = c.result_type, c.type
    ret = result.spelling
    canonical = result.get_canonical()
    ftype = ctype.get_canonical()  # through a function typedef (OSSL_provider_init_fn)
    if ftype.kind == ci.TypeKind.FUNCTIONNOPROTO:
        # int f(); says nothing of its arguments: the assembly thunk forwards
        # every argument register untouched, as for a variadic function.
        return Function(name, type_name(ret), "", "", line, True,
                        file, canonical.kind == ci.TypeKind.POINTER,
                        canonical.spelling)
    if ftype.kind != ci.TypeKind.FUNCTIONPROTO:
        return f"{where}: {name}: its type ({ctype.spelling}) is not a function prototype"
    # Each libclang call costs a crossing into C: the arguments, their types
    # and spellings are read once (a header of 50,000 functions).
    arguments = list(c.get_arguments())
    types = [a.type for a in arguments]
    spelled = [t.spelling for t in types]
    # The parameters' own names only where something reads them: an array
    # sized by another parameter, a spec's failure out-parameters.
    names = [a.spelling for a in arguments] if with_names or any("[" in s for s in spelled) \
        else [""] * len(arguments)
    unnamed = [s for s in [ret] + spelled if "(unnamed" in s or "(anonymous" in s]
    if unnamed:
        return (f"{where}: {name}: uses a type with no name ({unnamed[0]}), which no "
                f"code outside the header can spell")
    params, args = [], []
    # An array parameter sized by another (size_t n, const char buf[n]):
    # its size names that parameter by the name it has here.
    renamed = {n: f"a{i}" for i, n in enumerate(names) if n}
    for i, s in enumerate(spelled):
        decl = _declarator(s, f"a{i}")
        if "[" in decl and renamed:
            head, _, dims = decl.partition("[")
            dims = re.sub(r"\b[A-Za-z_]\w*\b", lambda w: renamed.get(w.group(0), w.group(0)), dims)
            decl = f"{head}[{dims}"
        params.append(decl)
        args.append(f"a{i}")
    variadic = ftype.is_function_variadic()
    if variadic:
        params.append("...")
    vectors = (ci.TypeKind.VECTOR, ci.TypeKind.EXTVECTOR)
    # Only a type that names another (a typedef) can be a vector under
    # another spelling; a builtin or a pointer is what it says.
    plain = (ci.TypeKind.POINTER, ci.TypeKind.INT, ci.TypeKind.UINT, ci.TypeKind.LONG,
             ci.TypeKind.ULONG, ci.TypeKind.DOUBLE, ci.TypeKind.FLOAT, ci.TypeKind.CHAR_S,
             ci.TypeKind.VOID, ci.TypeKind.LONGLONG, ci.TypeKind.ULONGLONG)
    canon = [canonical] + [t if t.kind in plain else t.get_canonical() for t in types]
    wide = max([t.get_size() for t in canon if t.kind in vectors] + [0])
    wide = wide if wide > 16 else 0
    return Function(name, type_name(ret), ", ".join(params) or "void", ", ".join(args),
                    line, variadic, file,
                    canonical.kind == ci.TypeKind.POINTER, canonical.spelling,
                    wide_vector=wide, noreturn=_noreturn(ci, c, file, ctype),
                    param_names=tuple(names), param_writable=_writable(ci, types) if with_names else ())


def _writable(ci, types):
    """Each parameter: a pointer (through typedefs) to a type not const."""
    out = []
    for t in types:
        c = t.get_canonical()
        out.append(c.kind == ci.TypeKind.POINTER and not c.get_pointee().is_const_qualified())
    return tuple(out)


def _noreturn(ci, c, file, ctype):
    """Whether the declaration says the function never returns: GCC's
    attribute shows in the type's spelling, C11's _Noreturn (and C23's
    [[noreturn]]) as an attribute whose tokens name it."""
    if "noreturn" in ctype.spelling:
        return True
    # The attribute's and the declaration's tokens are its file's: where the
    # file never spells either, none of its declarations does (and a walk
    # per declaration is most of a large header's parse).
    if not _spells(file, "oreturn"):
        return False
    for k in c.get_children():
        if k.kind == ci.CursorKind.UNEXPOSED_ATTR and any(
                "oreturn" in tok.spelling for tok in k.get_tokens()):
            return True
    if not _spells(file, "_Noreturn"):
        return False
    return any(tok.spelling == "_Noreturn" for tok in c.get_tokens())


_spelled = {}


def _spells(path, word):
    """Whether a header's text holds word, read once per run (True where it
    cannot be read: the caller then looks)."""
    key = (path, word)
    if key not in _spelled:
        try:
            with open(path, "rb") as f:
                _spelled[key] = word.encode() in f.read()
        except OSError:
            _spelled[key] = True
    return _spelled[key]


def lower_type(ci, t):
    """A C++ header's type as C text with the same calling convention on
    the targets built here: a builtin as itself, an enum as its integer
    type, a pointer to a builtin as that pointer, any other pointer (to a
    class, a function) as void *; None for what C cannot pass alike (a
    class or a reference by value)."""
    c = t.get_canonical()
    k = c.kind
    if k == ci.TypeKind.VOID:
        return "void"
    if k == ci.TypeKind.BOOL:
        return "_Bool"
    if k == ci.TypeKind.ENUM:
        return c.get_declaration().enum_type.get_canonical().spelling
    if k in (ci.TypeKind.POINTER, ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.CONSTANTARRAY):
        p = c.get_pointee() if k == ci.TypeKind.POINTER else c.element_type
        const = "const " if p.is_const_qualified() else ""
        inner = lower_type(ci, p) if p.get_canonical().kind not in (
            ci.TypeKind.RECORD, ci.TypeKind.FUNCTIONPROTO, ci.TypeKind.FUNCTIONNOPROTO,
            ci.TypeKind.POINTER, ci.TypeKind.ENUM) else None
        return f"{const}{inner or 'void'} *"
    if c.spelling.replace("const ", "") in _C_BUILTINS:
        return c.spelling.replace("const ", "")
    return None


_C_BUILTINS = {"char", "signed char", "unsigned char", "short", "unsigned short", "int",
               "unsigned int", "long", "unsigned long", "long long", "unsigned long long",
               "float", "double", "long double", "wchar_t"}


def _cxx_function(ci, c):
    """An extern "C" function of a C++ header, typed in C (lower_type), or
    why it cannot be."""
    where = f"{c.location.file.name}:{c.location.line}"
    ftype = c.type.get_canonical()
    if ftype.kind != ci.TypeKind.FUNCTIONPROTO:
        return f"{where}: {c.spelling}: its type ({c.type.spelling}) is not a function prototype"
    ret = lower_type(ci, c.result_type)
    params, args = [], []
    for i, a in enumerate(c.get_arguments()):
        low = lower_type(ci, a.type)
        if low is None:
            return (f"{where}: {c.spelling}: parameter {i + 1} ({a.type.spelling}) has no C form "
                    f"passed alike (a class or reference by value)")
        params.append(_declarator(low, f"a{i}"))
        args.append(f"a{i}")
    if ret is None:
        return f"{where}: {c.spelling}: returns {c.result_type.spelling}, which has no C form"
    variadic = ftype.is_function_variadic()
    if variadic:
        params.append("...")
    return Function(c.spelling, ret, ", ".join(params) or "void", ", ".join(args),
                    c.location.line, variadic, c.location.file.name, ret.endswith("*"), ret,
                    ret_spelled=c.result_type.spelling)


def enumerators(cc, spec, include_dirs):
    """{name: value} of every enumerator the headers declare (a C++
    header's failure values are written as enumerators the generated C,
    which cannot include it, gets as macros)."""
    unit = _translation_unit(cc, spec, include_dirs)
    if unit is None:
        return {}
    ci, _ = _index()
    out = {}
    for c in unit[1].cursor.walk_preorder():
        if c.kind == ci.CursorKind.ENUM_CONSTANT_DECL:
            out.setdefault(c.spelling, c.enum_value)
    return out
