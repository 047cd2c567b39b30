# SPDX-License-Identifier: MIT
"""`lazygen new LIBRARY`: a starting spec from an installed library and its
development headers, one that builds as it is written.

    the library     a path, or a soname found in ld.so.cache (libjpeg.so.62)
    its headers     the files below the include directory of the package that
                    owns the library's link-time name (lib<x>.so, dpkg -S);
                    without a package manager, the headers of the compiler's
                    directories that name its exported functions
    the pattern     the prefixes of the exported functions those headers name
    exclude         declarations the pattern takes that the library does not
                    export (inline helpers, another library's functions)
    the version     a declared function named like a version whose type
                    lazynccl-info understands, if one exists
    the versions    symbol-version nodes: read from the library at build time
                    (named in a comment)

Each choice is a key the author may change; the spec carries no [failure]
table, so every function stops the process without its library until the
author names the values the API itself uses for failure."""
import glob
import os
import re
import subprocess
import tempfile

import elfvers
from emit_stubs import version_shape
from model import parse_functions, system_dirs
from spec import GenError, load_spec

# What a library's own header may use without including it (jpeglib.h: FILE).
_PRELUDE = ["stdio.h"]  # FILE, size_t
_VERSION = re.compile(r"(^|_)(lib)?(get_?)?version(_?string|_?number)?$|Version$", re.I)


def _run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        return ""
    return r.stdout if r.returncode == 0 else ""


def find(target):
    """The library's path, from a path or a soname in ld.so.cache."""
    if os.sep in target or os.path.exists(target):
        if not os.path.isfile(target):
            raise GenError(target, "no such file")
        return os.path.abspath(target)
    for line in _run(["/sbin/ldconfig", "-p"]).splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" (")[0] == target and os.path.isfile(path):
            return path
    raise GenError(target, "not in ld.so.cache (ldconfig -p): give the library's path")


def package_headers(lib, soname, includes, pc=None):
    """The headers of the package owning lib<x>.so beside the library, as
    (include dir, paths relative to it); None without one. pc (a dict)
    gets what the package's pkg-config file for this library (the one
    whose Libs name it) gives a program besides: its defines ("defines",
    ncurses' _XOPEN_SOURCE=600) and its other libraries ("libs", -ltinfo)."""
    name = soname.split(".so")[0] + ".so"
    # The package database names one spelling of the link's directory:
    # /usr/lib/... where /lib is a link to it (merged /usr).
    places = [os.path.dirname(lib), os.path.realpath(os.path.dirname(lib))]
    places += ["/usr" + p for p in places if p.startswith("/lib")]
    for place in dict.fromkeys(places):
        owner = _run(["dpkg-query", "-S", os.path.join(place, name)]).split(":")[0].strip()
        listed = _run(["dpkg-query", "-L", owner]).splitlines() if owner else []
        files = [f for f in listed if f.endswith(".h")]
        # the include directories its pkg-config files add (libxml2's
        # /usr/include/libxml2), searched before the compiler's
        own = "-l" + name[3:-3]
        for f in (f for f in listed if f.endswith(".pc")):
            module = os.path.basename(f)[:-3]
            for flag in _run(["pkg-config", "--cflags-only-I", module]).split():
                if flag[2:] and flag[2:] not in includes:
                    includes.insert(0, flag[2:])
            libs = _run(["pkg-config", "--libs-only-l", module]).split()
            if pc is not None and own in libs and "libs" not in pc:
                pc["libs"] = [x for x in libs if x != own]
                pc["defines"] = [x[2:] for x in _run(["pkg-config", "--cflags-only-other", module]).split()
                                 if x.startswith("-D") and len(x) > 2]
        # Each header named from its own directory of the compiler's
        # (jconfig.h in the multiarch one, jpeglib.h in /usr/include).
        rel, where = [], {}
        for f in files:
            inc = next((i for i in includes if f.startswith(i.rstrip("/") + "/")), None)
            if inc and os.path.isfile(f):
                rel.append(os.path.relpath(f, inc))
                where[inc] = where.get(inc, 0) + 1
        if rel:
            return max(where, key=where.get), sorted(rel)
    return None


def naming_headers(names, includes):
    """The headers of the compiler's directories that name at least one of
    the functions (no package manager to ask)."""
    wanted = set(names)
    for inc in includes:
        found = []
        for f in sorted(glob.glob(os.path.join(inc, "*.h")) + glob.glob(os.path.join(inc, "*", "*.h"))):
            try:
                text = open(f, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            if wanted & set(re.findall(r"(\w+)\s*\(", text)):
                found.append(os.path.relpath(f, inc))
        if found:
            return inc, found
    return None


def _path(rel, dirs):
    """A header named relative to the include directories dirs (the
    library's own first), as the compiler finds it."""
    return next((os.path.join(i, rel) for i in dirs if os.path.isfile(os.path.join(i, rel))),
                os.path.join(dirs[0], rel))


def _texts(rel, dirs):
    text = {}
    for r in rel:
        try:
            text[r] = open(_path(r, dirs), encoding="utf-8", errors="replace").read()
        except OSError:
            pass
    return text


def _included(rel, text):
    """Which of the headers each one includes."""
    out = {}
    for r, body in text.items():
        names = re.findall(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', body, re.M)
        out[r] = [x for x in rel if x != r and any(x == n or os.path.basename(x) == n for n in names)]
    return out


def _uncommented(body):
    """body without its comments, in one pass (a regex's lazy match over an
    unterminated comment rescans the rest of the file for each one)."""
    out, i = [], 0
    while True:
        j, k = body.find("/*", i), body.find("//", i)
        if j < 0 and k < 0:
            out.append(body[i:])
            return "".join(out)
        if k < 0 or (0 <= j < k):
            out.append(body[i:j] + " ")
            end = body.find("*/", j + 2)
            if end < 0:
                return "".join(out)
            i = end + 2
        else:
            out.append(body[i:k])
            end = body.find("\n", k)
            if end < 0:
                return "".join(out)
            i = end


_COND = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
_NOT_CXX = re.compile(r"!\s*(defined\s*\(?\s*)?__cplusplus\b")


def _c_part(code):
    """The lines a C compiler reads: the branch of an #if on __cplusplus
    that only C++ takes left out (#ifdef __cplusplus's first, #ifndef's or
    "#if !defined __cplusplus"'s #else), nested conditions followed."""
    out, stack = [], []  # per open #if: [its branch now is C++ only, its #else is]
    for line in code.split("\n"):
        m = _COND.match(line)
        if not m:
            if not any(now for now, _ in stack):
                out.append(line)
            continue
        kind, rest = m.group(1), m.group(2)
        on_cxx = "__cplusplus" in rest
        negated = kind == "ifndef" or bool(_NOT_CXX.search(rest))
        if kind in ("if", "ifdef", "ifndef"):
            stack.append([on_cxx and not negated, on_cxx and negated])
        elif kind in ("elif", "else") and stack:
            stack[-1][0] = stack[-1][1]
        elif kind == "endif" and stack:
            stack.pop()
    return "\n".join(out)


# a class after macro words too (ncurses' "class NCURSES_CXX_IMPEXP NCursesPanel;")
_CXX = re.compile(r"^[ \t]*(class[ \t]+(\w+[ \t]+)*\w+[ \t]*[:{;]|template\s*<|namespace\s*\w*\s*\{)",
                  re.M)


def _cxx(body):
    """Whether a header is C++ (a class, a template, a namespace declared
    in what a C compiler reads of it, not in a comment: expat.h's prose
    says "class", GL/glu.h declares "class GLUnurbs;" under #ifdef
    __cplusplus; or an extern "C" block that no __cplusplus test keeps from
    a C compiler)."""
    code = _c_part(_uncommented(body))
    return bool(_CXX.search(code)) or 'extern "C"' in code


def umbrellas(rel, functions, dirs):
    """The headers a program includes: those of the package no other of it
    includes (lzma.h, not its lzma/base.h) whose declarations the build
    takes (the header itself, or its same-named subdirectory: gen/model.py)
    and that declare an exported function there (its name followed by a
    parenthesis); then any declaring header none of those includes or
    covers (sqlite3.h beside sqlite3ext.h, whose API is macros). A header
    included by a chosen one for the library's own use (jpegint.h by
    jpeglib.h) is left out. Where no header declares a function by its
    exported name (a macro renames it: GMP), the headers no other includes."""
    # C++ headers of a C library's package (ncurses' cursesapp.h) are not
    # its C API
    text = {r: body for r, body in _texts(rel, dirs).items() if not _cxx(body)}
    inc = _included(rel, text)
    under = {x for xs in inc.values() for x in xs}
    tops = [r for r in rel if r in text and r not in under]
    declaring = [r for r in rel if r in text and functions & set(re.findall(r"(\w+)\s*\(", text[r]))]
    if not declaring:
        return tops or list(text)

    def covers(top, d):
        return d == top or d.startswith(os.path.splitext(top)[0] + "/")
    chosen = [t for t in tops if any(covers(t, d) for d in declaring)]
    inside = {x for c in chosen for x in inc.get(c, [])}
    chosen += [d for d in declaring if not any(covers(c, d) for c in chosen) and d not in inside]
    seen = set()  # one of the names of a header that has two (ncurses.h, ncursesw/ncurses.h)
    return [r for r in chosen if not (os.path.realpath(_path(r, dirs)) in seen or
                                      seen.add(os.path.realpath(_path(r, dirs))))]


def headers_key(inc, rel):
    """The headers as the spec writes them: a glob where they are more than
    a few, in one directory, and exactly what the glob names (gsl/gsl_*.h);
    the files otherwise."""
    dirs = {os.path.dirname(r) for r in rel}
    if len(rel) > 4 and len(dirs) == 1:
        d = dirs.pop()
        pat = os.path.join(d, os.path.commonprefix([os.path.basename(r) for r in rel]) + "*.h")
        if sorted(os.path.relpath(f, inc) for f in glob.glob(os.path.join(inc, pat))) == sorted(rel):
            return [pat]
    return rel


def prefixes(names):
    """The prefixes naming the functions: up to the first '_' (jpeg_) or
    the leading lower-case word of a camelCase name (deflateInit: deflate);
    names of neither kind share their first letters where three or more do
    (gzopen, gzread, gzwrite: gz), else stand for themselves. A prefix
    another prefix begins with is left out."""
    out, plain = set(), []
    for n in names:
        m = re.match(r"^(_*[a-z0-9]+(_|(?=[A-Z])))", n) or re.match(r"^(_*[A-Za-z0-9]+?_)", n)
        if m:
            out.add(m.group(1))
        else:
            plain.append(n)
    for n in plain:
        shared = [k for k in range(2, len(n)) if sum(x.startswith(n[:k]) for x in plain) >= 3]
        out.add(n[:shared[-1]] if shared else n)
    return sorted(p for p in out if not any(q != p and p.startswith(q) for q in out))


def draft(spec_id, soname, headers, pattern, exclude, version, nodes, prelude, defines=(), search=(),
          libs=()):
    q = lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'  # noqa: E731
    lines = [f"# {soname}: written by `lazygen new`; change what does not fit.",
             "# No [failure]: without the library every call stops the process, as the",
             "# dynamic linker would have at start. Add [failure] values only for return",
             "# types the API itself uses to say \"failed\" (docs/reference/spec.md).",
             "[library]",
             f"id = {q(spec_id)}",
             f"display = {q(soname.split('.so')[0])}",
             f"shim = {q('lazy' + spec_id)}",
             f"headers = [{', '.join(q(h) for h in prelude + headers)}]",
             f"function_pattern = {q(pattern)}",
             f"sonames = [{q(soname)}]",
             f"feature = {q(spec_id)}",
             f"description = {q(soname.split('.so')[0] + ', loaded on first call')}"]
    if search:
        lines.append(f"include_search = [{', '.join(q('dir:' + x) for x in search)}]")
    if defines:
        lines.append(f"defines = [{', '.join(q(x) for x in defines)}]")
    if libs:
        lines.append(f"libs = [{', '.join(q(x) for x in libs)}]")
    if exclude:
        lines.append(f"exclude = [{', '.join(q(x) for x in exclude)}]")
    if version:
        lines.append(f"version_function = {q(version)}")
    if nodes:
        lines.append(f"# symbol versions: read from the library at build time ({', '.join(nodes)})")
    return "\n".join(lines) + "\n"


def _parse(cc, d, text, dirs):
    path = os.path.join(d, "new.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return parse_functions(cc, load_spec(path), dirs)[1]


def _readable(cc, d, inc, rel, functions, exact, write, dirs):
    """The headers as the build will read them, with the functions they
    declare that the library exports: the package's headers by one glob
    where they read together (gsl/gsl_*.h), else its umbrellas, with the C
    library's stdio.h first where a header needs it, less a header that
    cannot be read alone (an internal one: jpegint.h wants jpeglib.h first).
    exact: a pattern taking exactly the exported functions. Returns
    (headers, prelude, functions)."""
    tries = []
    if len(headers_key(inc, rel)) == 1 and len(rel) > 1:
        tries += [(rel, []), (rel, list(_PRELUDE))]
    last = None
    for kept, prelude in tries:
        try:
            return kept, prelude, _parse(cc, d, write(headers_key(inc, kept), exact, prelude), dirs)
        except GenError as e:
            last = e
    kept, prelude = umbrellas(rel, set(functions), dirs), []
    for _ in range(len(rel) + 2):
        try:
            return kept, prelude, _parse(cc, d, write(headers_key(inc, kept), exact, prelude), dirs)
        except GenError as e:
            last = e
            bad = re.search(r"(/\S+?):\d+:\d+: error", str(e))
            bad = bad and next((r for r in kept if _path(r, dirs) == bad.group(1)), None)
            # a header not readable as C (gmpxx.h), or one that declares
            # nothing (an extension's macros): the ones it includes instead
            inner = {r: [x for x in _included(rel, _texts([r], dirs)).get(r, []) if x not in kept]
                     for r in ([bad] if bad else kept)}
            if not prelude and bad:
                prelude = list(_PRELUDE)
            elif any(inner.values()):
                kept = [r for r in kept if not inner.get(r)] + [x for xs in inner.values() for x in xs]
                prelude = []
            elif not prelude:
                prelude = list(_PRELUDE)
            else:
                break
    why = str(last).split(": error: ", 1)[-1].splitlines()[0]
    wants = re.search(r"#\s*error\b", why)
    head = ("the headers want a macro defined (their #error below): give it with -D NAME=VALUE"
            if wants else "no set of these headers reads as C declaring its functions (give -I DIR "
            "for a directory they need, -D NAME=VALUE for a macro)")
    raise GenError(f"{inc}", f"{head}: {why[:300]}\n  the package's headers tried: {', '.join(rel)}")


def new_spec(target, cc, defines=(), include_dirs=()):
    """(the spec's text, notes for the console). defines (NAME or
    NAME=VALUE) and include_dirs (searched first) are the author's -D and -I:
    what the headers need that the package does not say."""
    lib = find(target)
    v = elfvers.read(lib)
    soname = v.soname or os.path.basename(lib)
    functions = sorted(n for n in v.functions if n not in v.vague)
    if not functions:
        raise GenError(lib, "exports no function")
    spec_id = re.sub(r"\W", "", soname.split(".so")[0].removeprefix("lib")).lower() or "lib"
    includes = [os.path.abspath(i) for i in include_dirs] + list(system_dirs(cc))
    pc = {}
    found = package_headers(lib, soname, includes, pc) or naming_headers(functions, includes)
    if not found:
        raise GenError(lib, "no header names its functions in the compiler's directories "
                            f"({', '.join(includes)}): install its -dev package")
    inc, rel = found
    dirs = [inc] + [i for i in includes if i != inc]

    # The author's -D first, then those the package's pkg-config file gives
    # its programs (the declarations they see are the ones to serve).
    defines = list(defines) + [x for x in pc.get("defines", []) if x not in defines]
    libs = pc.get("libs", [])

    search = ([] if inc in system_dirs(cc) else [inc]) + \
        [os.path.abspath(i) for i in include_dirs if os.path.abspath(i) != inc]

    def write(headers, pattern, prelude, exclude=(), version=None, nodes=()):
        return draft(spec_id, soname, headers, pattern, exclude, version, nodes, prelude, defines,
                     search, libs)
    exported = set(functions)
    other_notes = []
    exact = "^(" + "|".join(re.escape(n) for n in functions) + ")$"
    with tempfile.TemporaryDirectory() as d:
        kept, prelude, declared = _readable(cc, d, inc, rel, functions, exact, write, dirs)
        headers = headers_key(inc, kept)
        # Names a header declares only for large-file programs (zlib's
        # gzopen64): declared, so typed, with the macro those programs set.
        missing = exported - {f.name for f in declared}
        if any(n.endswith("64") for n in missing) and "_LARGEFILE64_SOURCE" in "".join(
                _texts(kept, dirs).values()):
            defines.append("_LARGEFILE64_SOURCE=1")
            more = _parse(cc, d, write(headers, exact, prelude), dirs)
            if len(more) > len(declared):
                declared = more
            else:
                defines.pop()
        served = [f for f in declared if f.name in exported]
        groups = prefixes([f.name for f in served])
        pattern = "^(" + "|".join(re.escape(p) for p in groups) + ")"
        # What the prefixes take besides: declared, not exported.
        taken = _parse(cc, d, write(headers, pattern, prelude), dirs)
        # A header of another library of the same package (PCRE2's
        # pcre2posix.h beside pcre2.h): every function the prefixes take
        # there is exported by another file, none by this one. Left out,
        # and said.
        files = {}
        for f in taken:
            files.setdefault(os.path.realpath(f.file), []).append(f.name in exported)
        others = [r for r in kept if not any(files.get(os.path.realpath(_path(r, dirs)), [True]))]
        if others and len(others) < len(kept):
            kept = [r for r in kept if r not in others]
            headers = headers_key(inc, kept)
            taken = _parse(cc, d, write(headers, pattern, prelude), dirs)
            other_notes.append(f"left out {', '.join(others)}: every function declared there is "
                               f"another library's (none is exported by {os.path.basename(lib)})")
        exclude = sorted({f.name for f in taken if f.name not in exported})
    # The library's own version as text where it has one: a name that is
    # one of its prefixes and "version" (archive_version_string, not
    # archive_zlib_version), a string before a number (uv_version_string,
    # not uv_version's 76802), then the shortest.
    own = re.compile(r"^(" + "|".join(re.escape(p) for p in groups)
                     + r")(lib)?(get_?)?version(_?string|_?number)?$", re.I)
    candidates = sorted((f for f in served if _VERSION.search(f.name)
                         and version_shape(f) in ("text", "number")),
                        key=lambda f: (not own.match(f.name), version_shape(f) != "text",
                                       len(f.name), f.name))
    version = candidates[0].name if candidates else None
    # Exports no header declares that the pattern takes: the shim serves
    # them untyped (the drop-in serves every export, these too).
    untyped = sorted(n for n in exported - {f.name for f in served} if re.search(pattern, n))
    notes = [f"{lib}: {len(functions)} functions exported; {len(served)} declared by "
             f"{', '.join(headers)} ({len(rel)} header(s) in its package), "
             f"{len(exclude)} declared but not exported (exclude); version function: "
             f"{version or 'none found'}; its override variable: LAZY{spec_id.upper()}_LIBPATH"]
    notes += other_notes
    if untyped:
        notes.append(f"{len(untyped)} exported function(s) no header declares ({', '.join(untyped[:4])}"
                     f"{' ...' if len(untyped) > 4 else ''}): served untyped where the pattern "
                     f"takes them; without the library they stop unless 'opaque_failure' says "
                     f"what they return")
    return write(headers, pattern, prelude, exclude, version, [n.name for n in v.nodes]), notes
