#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lazygen: generate a lazy-loading shim from a library spec and its header.

Run by Meson at build time (custom_target, run_command); never at run time.

    lazygen.py list-specs DIR...              the specs Meson builds, one a line
    lazygen.py describe S [--library PATH --include-dir D]
                                              key<TAB>value lines for meson.build
                                              (with --library: the real library's
                                              versions and coverage, for people)
    lazygen.py spec-files S                   the files generation reads besides the header
    lazygen.py find-include S [--option-dir D] --cc CC
                                              the directory holding S's header
    lazygen.py find-libraries S --cc CC [--include-dir D] [--library-dir D...]
                                              soname<TAB>path of each real library found
    lazygen.py dropin S --soname SONAME --exports X.txt --library PATH|- --out-map M --out-symver H
                                              a drop-in's symbol versions
    lazygen.py generate S --include-dir D --cc CC --out-c X.c --out-list X.txt [--out-h X.h]
    lazygen.py amalgamate S --include-dir D --cc CC --out-c X.c --out-h X.h [--prefix P]
    lazygen.py new SONAME|PATH [--out S]      a starting spec for an installed library
    lazygen.py build S --out DIR              one library's shims, without Meson
    lazygen.py public-header --out OUT.h S... the control API of every shim
    lazygen.py registry --out OUT.c S...      the list of libraries for lazynccl-info
    lazygen.py python-libraries --out OUT.py S...
                                              the libraries the Python package serves
"""

import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap

sys.dont_write_bytecode = True  # keep the source tree clean when run from it
HERE = os.path.dirname(os.path.abspath(__file__))

import dropin_versions  # noqa: E402
import elfvers  # noqa: E402
import find_library  # noqa: E402
import symlist  # noqa: E402
from amalgamate import amalgamate  # noqa: E402
from control_api import declarations  # noqa: E402
from emit_data import emit_data  # noqa: E402
from emit_stubs import emit, emit_header, export_names  # noqa: E402
from model import (enumerators, headers_in, macro_values, parse_functions, preprocess, system_dirs,  # noqa: E402
                   target_arch)
from spec import GenError, Problems, load_spec, peers  # noqa: E402



def say(text):
    """A note or warning on standard error, each of its lines wrapped at
    100 columns (a list of a large library's names stays readable), the
    continuations indented; a word is never cut."""
    print("\n".join(textwrap.fill(line, 100, subsequent_indent="    ", break_long_words=False,
                                   break_on_hyphens=False) for line in text.split("\n")), file=sys.stderr)

def write_if_changed(path, text):
    """Deterministic output, rewritten only when it changes (no needless rebuilds)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def list_specs(places):
    """Every spec in the directories, sorted, except shared defaults; a
    spec file named itself (-Dextra_specs) as it is, once."""
    out = []
    for p in places:
        if os.path.isdir(p):
            out += sorted(glob.glob(os.path.join(p, "*.toml")))
        elif p.endswith(".toml") and os.path.isfile(p):
            out.append(os.path.abspath(p))
        else:
            raise GenError(p, "not a directory of specs nor a spec file (*.toml)")
    return list(dict.fromkeys(out))


def describe(spec):
    """What meson.build needs, as key<TAB>value lines (Meson splits them)."""
    rows = [("id", spec.id), ("shim", spec.shim),
            ("header", spec.headers[0] if spec.headers else ""),
            ("symbols", spec.symbols),
            ("display", spec.display), ("description", spec.description),
            ("sonames", " ".join(spec.sonames)),
            ("public", "no" if spec.hidden else "yes"),
            ("install", "yes" if spec.install else "no"),
            ("optional", "yes" if spec.optional else "no"),
            ("control_api", "yes" if spec.control_api and not spec.hidden else "no"),
            ("include_option", next((v for k, v in spec.include_search if k == "option"), ""))]
    return "".join(f"{k}\t{v}\n" for k, v in rows)


def coverage(spec, functions, library):
    """describe --library: how the header's functions meet what the real
    library exports, as key<TAB>value lines: declared, exported by the
    library, both, and the library's functions the header does not declare
    (by name: a macro rename such as cublasCreate -> cublasCreate_v2 leaves
    the old name exported, undeclared); then its version nodes. One read of
    the library (gen/elfvers.py) serves both."""
    v = elfvers.read(library)
    exported = {n for n in v.functions if spec.function_pattern.search(n)}
    declared = {f.name for f in functions}
    rows = [("declared", len(declared)), ("exported_by_library", len(exported)),
            ("declared_and_exported", len(declared & exported)),
            ("declared_and_exported_names", " ".join(sorted(declared & exported))),
            ("declared_not_exported", " ".join(sorted(declared - exported))),
            ("exported_not_declared", " ".join(sorted(exported - declared)))]
    return "".join(f"{k}\t{v}\n" for k, v in rows) + describe_versions(v)


def describe_versions(v):
    """The library's version nodes, as describe rows: the list, then one
    row per node (how many symbols have it as their default and as a
    hidden version, and the nodes it inherits from)."""
    rows = [("soname", v.soname or "(none)"),
            ("version_nodes", " ".join(n.name for n in v.nodes) or "(unversioned)")]
    for n in v.nodes:
        default = sum(1 for defs in v.symbols.values() if (n.name, True) in defs)
        hidden = sum(1 for defs in v.symbols.values() if (n.name, False) in defs)
        rows.append((f"node:{n.name}", f"default {default}, hidden {hidden}, inherits "
                                       + (" ".join(n.parents) or "-")))
    return "".join(f"{k}\t{v}\n" for k, v in rows)


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
        path, dirs, passed = find_library.find(spec, soname, cc, arch, include_dir, library_dirs)
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


def _library_has(spec, soname, names, versions):
    """The names a drop-in exports: where the real library is known, none
    it lacks (a function_pattern matching a header's other widths, or
    names the header declares for another build of the library), unless
    the spec asks for them (required, a [versioned] family's members, which
    a newer header names before the library has them); the control API is
    the drop-in's own. A note names what was left out."""
    if versions is None or spec.versioned:
        return names
    own = spec.shim + "_"
    lacking = [n for n in names if n not in versions.symbols and not n.startswith(own)
               and n not in spec.required]
    if lacking:
        shown = ", ".join(lacking[:5]) + (f" and {len(lacking) - 5} more" if len(lacking) > 5 else "")
        say(f"lazygen: {spec.path}: note: the drop-in {soname} leaves out {len(lacking)} name(s) "
            f"the header declares that {versions.path} does not define: {shown} (name one in "
            f"'required' to export it anyway)")
    return [n for n in names if n not in lacking]


def dropin(spec, soname, exports_txt, library, out_map, out_symver):
    with open(exports_txt, encoding="utf-8") as f:
        names = f.read().split()
    versions = symlist.load_versions(library) if library and library != "-" else None
    names = _library_has(spec, soname, names, versions)
    hidden = dropin_versions.plan(names, soname, spec.symbol_versions, versions).hidden
    if spec.own_answers and hidden:
        # A call at a hidden version can fail after the load (dlvsym finds no
        # such node), which an own answer bound to the real function
        # (src/api/lz_bind.h) would then not explain.
        raise GenError(f"{spec.path} [own_answers]",
                       f"{soname} has hidden symbol versions ({hidden[0][0]}@{hidden[0][1]}); "
                       f"own answers are not supported beside them")
    script, header = dropin_versions.write(names, soname, spec.symbol_versions, versions)
    write_if_changed(out_map, script)
    write_if_changed(out_symver, header)


def control_header(spec):
    """<shim>_control.h: one shim's control API, for a shim of its own (a
    spec outside the NVIDIA set, installed or not)."""
    guard = re.sub(r"\W", "_", spec.shim).upper() + "_CONTROL_H"
    return (f"/* {spec.display}'s lazy-loading control API ({spec.shim}, from "
            f"{spec_label(spec.path)}), generated by gen/lazygen.py from "
            f"gen/control_api.py: do not edit. */\n"
            f"#ifndef {guard}\n#define {guard}\n\n#include <stddef.h>\n\n"
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
            + declarations(spec.shim + "_")
            + "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n")


def cmd_control_header(a, cc):
    spec = load_spec(a.spec)
    if spec.hidden or not spec.control_api:
        raise GenError(a.spec, "this shim has no control API (visibility = \"hidden\" or "
                               "control_api = false)")
    write_if_changed(a.out, control_header(spec))


def public_header(specs):
    out = ["/* lazynccl: the control API of every shim, generated by gen/lazygen.py\n"
           " * from gen/control_api.py and the specs: do not edit. The wrapped APIs\n"
           " * come from the libraries' own headers. */\n",
           "#ifndef LAZYNCCL_API_H\n#define LAZYNCCL_API_H\n\n#include <stddef.h>\n\n",
           "#ifdef __cplusplus\nextern \"C\" {\n#endif\n"]
    for s in specs:
        if s.hidden or not s.control_api:
            continue
        out.append(f"\n/* {s.display} ({s.shim}, from {spec_label(s.path)}). */\n")
        out.append(declarations(s.shim + "_"))
    out.append("\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n")
    return "".join(out)


STEPS_H = os.path.join(HERE, os.pardir, "src", "common", "lz_stepnames.h")


def found_via(specs):
    """{step: cuda.pathfinder's found_via}: the fixed steps from
    src/common/lz_stepnames.h (the C code's own table), the steps named by a spec's
    root variable by the rule for roots (CONDA_PREFIX is pathfinder's
    "conda", CUDA_PATH counts as CUDA_HOME, others keep their name)."""
    table = {}
    with open(STEPS_H, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'#define LZ_STEP_\w+ "([^"]+)"\s*/\* found_via: (\S+) \*/', line)
            if m:
                table[m.group(1)] = m.group(2)
    if len(table) < 9:
        raise GenError(STEPS_H, f"{len(table)} steps read; every '#define LZ_STEP_' line needs "
                                f"its '/* found_via: NAME */'")
    roots = {"CONDA_PREFIX": "conda", "CUDA_PATH": "CUDA_HOME"}
    for s in specs:
        for r in s.roots_before + s.roots_after:
            table.setdefault(r.var, roots.get(r.var, r.var))
    return table


def python_libraries(specs):
    """lazynccl/_libraries.py: the libraries the Python package serves, and
    the search steps' names as cuda.pathfinder gives them."""
    out = ["# Generated by gen/lazygen.py from the specs and src/common/lz_stepnames.h: the libraries this\n",
           "# package serves; id: (control API prefix, drop-in files newest first, version function)\n",
           "LIBRARIES = {\n"]
    out += [f"    {s.id!r}: ({s.shim!r}, {tuple(s.sonames)!r}, {s.version_function!r}),\n"
            for s in specs if s.served]
    out.append("}\n\n# step (lazynccl_loaded_step()): cuda.pathfinder's LoadedDL.found_via\nFOUND_VIA = {\n")
    out += [f"    {k!r}: {v!r},\n" for k, v in found_via(specs).items()]
    out.append("}\n")
    return "".join(out)


def registry(specs):
    public = [s for s in specs if not s.hidden]
    out = ["/* Every library built, for lazynccl-info: generated by gen/lazygen.py. */\n",
           '#include "base/lz_runtime.h"\n\n']
    out += [f"LZ_DECL_DATA const lz_lib lz_lib_{s.id};\n" for s in public]
    out.append("\n__attribute__((visibility(\"hidden\"))) const lz_lib *const lz_registry[] = {\n")
    out += [f"    &lz_lib_{s.id},\n" for s in public]
    out.append("    NULL,\n};\n")
    out.append("\n/* What this installation serves (install = true): lazynccl-info's default. */\n"
               "__attribute__((visibility(\"hidden\"))) const lz_lib *const lz_served[] = {\n")
    out += [f"    &lz_lib_{s.id},\n" for s in public if s.served]
    out.append("    NULL,\n};\n")
    return "".join(out)


def cmd_list_specs(a, cc):
    print("\n".join(list_specs(a.dirs)))


def cmd_describe(a, cc):
    spec = load_spec(a.spec)
    sys.stdout.write(describe(spec))
    if a.library:
        _, functions, _ = parse_functions(cc, spec, a.include_dir)
        sys.stdout.write(coverage(spec, functions, a.library))


def cmd_spec_files(a, cc):
    spec = load_spec(a.spec)
    released = [os.path.abspath(other.path) for other, _ in peers(spec)]
    print("\n".join([os.path.abspath(a.spec)] + spec.extra_headers + spec.source_files + released))


def cmd_find_include(a, cc):
    """The header's directory, whether the compiler searches it, then every
    other directory the header is compiled with (include_path)."""
    spec = load_spec(a.spec)
    d, own = find_include(spec, a.option_dir, cc)
    others = [x for x in include_path(spec, a.option_dir, cc)[0] if x != d]
    print("\t".join([d, 'system' if own else 'extra'] + others))


def cmd_find_libraries(a, cc):
    text, warnings = find_libraries(load_spec(a.spec), cc,
                                    a.include_dir[0] if a.include_dir else None, a.library_dir)
    sys.stdout.write(text)
    for w in warnings:
        print(f"lazygen: {w}", file=sys.stderr)


def cmd_dropin(a, cc):
    spec = load_spec(a.spec)
    # A 'required' name written as a program writes it (a macro the header
    # renames, as for generate): the name it becomes, found through the
    # headers only where one is not among the exports.
    with open(a.exports, encoding="utf-8") as f:
        exported = set(f.read().split())
    asked = sorted({n for n in spec.required if n not in exported})
    if asked and a.include_dir:
        for n, x in macro_names(cc, spec, spec.headers, a.include_dir, asked).items():
            spec.required = [x if r == n and x else r for r in spec.required]
    dropin(spec, a.soname, a.exports, a.library, a.out_map, a.out_symver)


def cmd_pkg_config(a, cc):
    import build_one
    spec = load_spec(a.spec)
    libdir = os.path.abspath(a.libdir)
    write_if_changed(a.out, build_one.pkg_config(
        spec, libdir, [os.path.abspath(d) for d in a.include_dir],
        beside=os.path.dirname(os.path.abspath(a.out)) == libdir))


def cmd_needed(a, cc):
    """The real library's DT_NEEDED, one a line: what its drop-in needs too,
    so that objects that lean on them resolve as they do plain."""
    print("\n".join(needed_by(a.library)))


def needed_by(library):
    """DT_NEEDED of the real library ([] for none found at build time)."""
    return [] if not library or library == "-" else elfvers.read(library).needed


def cmd_symbols(a, cc):
    """The library's exports into a symbol list (gen/symlist.py)."""
    v = elfvers.read(a.library)
    write_if_changed(a.out, symlist.write(v, os.path.abspath(a.library)))
    print(f"{a.out}: {len(v.functions)} functions, {len(v.objects)} variables, "
          f"{len(v.nodes)} version nodes of {v.soname or a.library}")


def cmd_finish_dropin(a, cc):
    """The linked drop-in copied to its file name; names the real library
    exports unversioned made unversioned in it too."""
    tmp = a.output + ".tmp"
    shutil.copyfile(a.input, tmp)
    shutil.copymode(a.input, tmp)
    if a.library and a.library != "-":
        real = symlist.load_versions(a.library)
        if real.versioned:
            elfvers.unversion(tmp, {n for n, defs in real.symbols.items()
                                    if all(node is None for node, _ in defs)})
    os.replace(tmp, a.output)


def cmd_new(a, cc):
    import new_spec
    if a.out and os.path.lexists(a.out):
        raise GenError(a.out, "exists: not overwritten (name another file, or remove it)")
    if a.out and not os.path.isdir(os.path.dirname(os.path.abspath(a.out))):
        raise GenError(a.out, "its directory does not exist")
    text, notes = new_spec.new_spec(a.library, cc, a.define, a.include)
    for n in notes:
        say(f"lazygen: {n}")
    if not a.out:
        sys.stdout.write(text)
        return
    with open(a.out, "x", encoding="utf-8") as f:
        f.write(text)
    print(f"lazygen: wrote {a.out}; build it with: {sys.executable} {sys.argv[0]} build {a.out} "
          f"--out DIR", file=sys.stderr)


def cmd_build(a, cc):
    import build_one  # here: it calls back into this module's steps
    print("\n".join(build_one.build(sys.modules[__name__], a, cc)))


def _tables(write):
    def run(a, cc):
        write_if_changed(a.out, write([load_spec(p) for p in a.specs]))
    return run


def spec_label(path):
    """How generated files name their spec: relative to the project for its
    own specs (the same text in every build directory), else as given."""
    top = os.path.dirname(HERE)
    full = os.path.abspath(path)
    if full.startswith(top + os.sep):
        return os.path.relpath(full, top)
    return path


def macro_names(cc, spec, headers, include_dirs, names):
    """What each name becomes through the headers' macros, as a program that
    includes them and writes it gets: {name: expansion} for those a macro
    renames to one identifier (pcre2_compile -> pcre2_compile_8,
    cublasCreate -> cublasCreate_v2); "" for one a macro names that does
    not so become one identifier (a function-like macro, an expression)."""
    if not names or not headers:
        return {}
    source = "".join(f'#include "{h}"\n' for h in headers) + \
        "".join(f"__lz_name_{i} {n}\n#ifdef {n}\n__lz_macro_{i}\n#endif\n" for i, n in enumerate(names))
    language = "c++" if spec.language == "c++" else "c"
    r = subprocess.run(cc + ["-E", "-P", "-x", language, "-"] + [f"-D{x}" for x in spec.defines] +
                       [f"-I{d}" for d in include_dirs], input=source, capture_output=True, text=True)
    out, macros = {}, set()
    for line in r.stdout.splitlines() if r.returncode == 0 else []:
        m = re.match(r"^__lz_name_(\d+)\s+([A-Za-z_]\w*)\s*$", line.strip())
        if m and int(m.group(1)) < len(names) and m.group(2) != names[int(m.group(1))]:
            out[names[int(m.group(1))]] = m.group(2)
        m = re.match(r"^__lz_macro_(\d+)$", line.strip())
        if m and int(m.group(1)) < len(names):
            macros.add(names[int(m.group(1))])
    return {**{n: "" for n in macros}, **out}


def _renamed_keys(cc, spec, headers, include_dirs, functions):
    """A [failure.functions] key or 'required' name written as a program
    writes it (a macro the header renames) stands for the function it
    becomes."""
    declared = {f.name for f in functions}
    asked = [n for n in list(spec.failure_functions) + list(spec.required) if n not in declared]
    for n, x in macro_names(cc, spec, headers, include_dirs, sorted(set(asked))).items():
        if x not in declared:  # "": a macro that becomes no one name
            spec.renamed[n] = x  # for the message: the name it becomes is not served either
            continue
        if n in spec.failure_functions and x not in spec.failure_functions:
            spec.failure_functions[x] = spec.failure_functions.pop(n)
            if n in spec.failure_outs:
                spec.failure_outs[x] = spec.failure_outs.pop(n)
        if n in spec.required:
            spec.required = [x if r == n else r for r in spec.required]


def _shim_inputs(a, cc):
    """The spec, the header's functions and version macros: what generate
    and amalgamate both start from."""
    spec = load_spec(a.spec)
    headers, functions, variables = parse_functions(cc, spec, a.include_dir)
    _renamed_keys(cc, spec, headers, a.include_dir, functions)
    macros = []
    if spec.version_macros:
        text = preprocess(cc, headers[0], a.include_dir, spec.defines)
        macros = macro_values(text, spec.version_macros)
    return spec, spec_label(a.spec), headers, functions, variables, macros


def _write_shim(a, notes, c_text, h_text, names):
    for note in notes:
        say(f"lazygen: {note}")
    write_if_changed(a.out_c, c_text)
    if a.out_h and h_text is not None:
        write_if_changed(a.out_h, h_text)
    if a.out_list:
        write_if_changed(a.out_list, "".join(n + "\n" for n in names))


def cmd_generate(a, cc):
    arch = target_arch(cc)
    spec, spec_display, headers, functions, variables, macros = _shim_inputs(a, cc)
    # The spec's symbol list, else the real library found at build time.
    library = symlist.read(spec.symbols) if spec.symbols else \
        elfvers.read(a.library) if a.library else None
    enums = enumerators(cc, spec, a.include_dir) if spec.language == "c++" and headers else None
    # The functions and the variables are checked apart, and every problem
    # of both named in one run.
    problems = Problems()
    shim = problems.check(emit, spec, spec_display, headers, functions, macros, arch=arch,
                          library_functions=library.functions - library.vague
                          if library else (), enums=enums)
    data = problems.check(emit_data, spec, spec_display, headers, variables, library, arch)
    problems.raise_any()
    c_text, exports, notes = shim
    d_text, hook_text, data_names, data_notes = data
    if data_names and not (a.out_data and a.out_hooks):
        raise GenError(spec.path, f"{len(data_names)} variable(s) to serve "
                                  f"({', '.join(data_names[:5])}): give --out-data and --out-hooks")
    if a.out_data:
        write_if_changed(a.out_data, d_text)
        write_if_changed(a.out_hooks, hook_text)
    h_text = emit_header(spec, exports) if a.out_h else None
    _write_shim(a, notes + data_notes, c_text, h_text,
                export_names(spec, exports) + (data_names if a.out_data else []))


def cmd_amalgamate(a, cc):
    arch = target_arch(cc)
    spec, spec_display, headers, functions, variables, macros = _shim_inputs(a, cc)
    if not headers:  # a symbol list serves it: the amalgamation needs the header's types
        why = (f"{spec.shim}: no amalgamation: it is generated from the library's header, and "
               f"this build served {spec.display} from its symbol list")
        say(f"lazygen: {spec.path}: note: {why}")
        for out in (a.out_c, a.out_h):
            write_if_changed(out, f"/* Generated by lazynccl's gen/lazygen.py. */\n#error \"{why}\"\n")
        return
    if variables:
        say(f"lazygen: {spec.path}: note: the amalgamation serves functions only: "
            f"{len(variables)} variable(s) of the header are left out "
            f"({', '.join(v.name for v in variables[:5])})")
    prefix = a.prefix + spec.shim + "_"
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", prefix):
        raise GenError("--prefix", f"{a.prefix!r} is not a C identifier prefix")
    runtime = a.runtime_dir or os.path.join(os.path.dirname(HERE), "src")
    libelf = None
    if a.libelf_spec:
        e_spec = load_spec(a.libelf_spec)
        try:
            libelf = (e_spec,) + parse_functions(cc, e_spec, [a.libelf_include_dir])[:2]
        except GenError as e:  # no libelf headers: the probe loads, then checks
            say(f"lazygen: note: amalgamating without libelf ({e})")
    c_text, h_text, exports, notes = amalgamate(spec, spec_display, headers, functions,
                                                macros, prefix, runtime, libelf, arch)
    _write_shim(a, notes, c_text, h_text, export_names(spec, exports, prefix))


def parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, run, help, spec=True):
        p = sub.add_parser(name, help=help)
        p.set_defaults(run=run)
        p.add_argument("--cc", default="cc", help="C compiler command (split like a shell)")
        if spec:
            p.add_argument("spec", metavar="SPEC", help="the library's spec (stubs/*.toml)")
        return p

    p = command("list-specs", cmd_list_specs, "the specs in the directories, and spec files",
                spec=False)
    p.add_argument("dirs", nargs="+", metavar="DIR|SPEC")
    p = command("describe", cmd_describe, "key<TAB>value lines for meson.build")
    p.add_argument("--library", metavar="PATH",
                   help="compare the header's functions with what this real library exports "
                        "(needs --include-dir)")
    p.add_argument("--include-dir", action="append", default=[])
    command("spec-files", cmd_spec_files,
            "the files generation reads besides the header (Meson's dependencies)")
    p = command("find-include", cmd_find_include, "the directory holding the spec's header")
    p.add_argument("--option-dir", default="")
    p = command("find-libraries", cmd_find_libraries, "the real libraries found at build time")
    p.add_argument("--include-dir", action="append", default=[])
    p.add_argument("--library-dir", action="append", default=[],
                   help="a directory searched first")
    p = command("dropin", cmd_dropin, "a drop-in's version script and .symver header")
    p.add_argument("--soname", required=True)
    p.add_argument("--exports", required=True, metavar="X.txt", help="generate's --out-list")
    p.add_argument("--library", metavar="PATH|-", help="the real library: its symbol versions")
    p.add_argument("--include-dir", action="append", default=[],
                   help="where the headers are: a 'required' name a macro renames is read there")
    p.add_argument("--out-map", required=True)
    p.add_argument("--out-symver", required=True)
    p = command("pkg-config", cmd_pkg_config, "a pkg-config file naming a shim where it was "
                "built (for a shim the build does not install)")
    p.add_argument("--libdir", required=True, help="where lib<shim>.so and .a are")
    p.add_argument("--include-dir", action="append", default=[],
                   help="the header's directory, and others the shim's users need")
    p.add_argument("--out", required=True)
    p = command("needed", cmd_needed, "a real library's DT_NEEDED, one a line", spec=False)
    p.add_argument("library", metavar="LIBRARY")
    p = command("symbols", cmd_symbols, "a real library's exports into a symbol list "
                "(a spec's 'symbols': its drop-in then builds without it)", spec=False)
    p.add_argument("library", metavar="LIBRARY")
    p.add_argument("--out", required=True, metavar="FILE.symbols")
    p = command("control-header", cmd_control_header, "<shim>_control.h: one shim's control API")
    p.add_argument("--out", required=True)
    p = command("finish-dropin", cmd_finish_dropin,
                "a linked drop-in under its file name, its unversioned names as the real "
                "library's", spec=False)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--library", metavar="PATH|-", help="the real library: its symbol versions")
    p = command("build", cmd_build, "one library's shared shim, static shim, drop-ins, control "
                "header and pkg-config file into OUT, with the C compiler alone (no Meson)")
    p.add_argument("--out", required=True, metavar="OUT",
                   help="the directory written (made if need be); the files made are printed")
    p.add_argument("--include-dir", action="append", default=[],
                   help="where the header is (default: the spec's include_search, then the "
                        "compiler's directories)")
    p.add_argument("--library", metavar="PATH",
                   help="the real library, whose symbol versions the drop-ins copy (default: "
                        "found as the Meson build finds it)")
    p.add_argument("--jobs", type=int, default=0, help="compilers run at once (default: CPUs)")
    p.add_argument("--keep", action="store_true", help="keep the generated C and objects (OUT/gen)")
    p = command("new", cmd_new, "a starting spec for an installed library, from the library and "
                "its -dev headers (gen/new_spec.py)", spec=False)
    p.add_argument("library", metavar="SONAME|PATH")
    p.add_argument("--out", metavar="FILE.toml", help="write here (never over a file); default: "
                   "standard output")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]",
                   help="a macro the headers need (written into the spec's defines)")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                   help="a directory the headers need, searched first (written into "
                        "include_search)")
    for name, write, help in (("public-header", public_header, "the control API of every shim"),
                              ("registry", registry, "the libraries lazynccl-info knows"),
                              ("python-libraries", python_libraries,
                               "the libraries the Python package serves")):
        p = command(name, _tables(write), help, spec=False)
        p.add_argument("--out", required=True)
        p.add_argument("specs", nargs="+", metavar="SPEC")
    for name, run, help in (("generate", cmd_generate, "a shim's C file"),
                            ("amalgamate", cmd_amalgamate,
                             "one .c (runtime included) and one .h for vendoring")):
        p = command(name, run, help)
        p.add_argument("--include-dir", action="append", default=[])
        p.add_argument("--out-c", required=True)
        p.add_argument("--out-list", help="write the names the shim must export, one a line")
        if name == "generate":
            p.add_argument("--out-h", help="declarations of the shim's symbols (hidden shims)")
            p.add_argument("--out-data", help="the C file defining the library's variables")
            p.add_argument("--out-hooks", help="the C file defining its function-pointer variables")
            p.add_argument("--library", metavar="PATH",
                           help="also serve the functions of this real library no header "
                                "declares")
        else:
            p.add_argument("--out-h", required=True, help="the control API")
            p.add_argument("--prefix", default="",
                           help="put before <shim>_ in the control API: --prefix mypkg_ gives "
                                "mypkg_lazynccl_load() (as -Damalgamation_prefix=mypkg_ does)")
            p.add_argument("--runtime-dir", help="src/ of lazynccl")
            p.add_argument("--libelf-spec", help="stubs/libelf.toml")
            p.add_argument("--libelf-include-dir", default="/usr/include")
    return ap


def main(argv):
    a = parser().parse_args(argv)
    try:
        a.run(a, shlex.split(a.cc))
    except GenError as e:
        print(f"lazygen: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as e:  # a bug of ours: say so, with the traceback for the report
        import traceback
        traceback.print_exc()
        print(f"lazygen: internal error: {e!r} (please report it with the traceback above)",
              file=sys.stderr)
        sys.exit(2)
