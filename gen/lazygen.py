#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lazygen: generate a lazy-loading shim from a library spec and its header.

Run by Meson at build time (custom_target, run_command); never at run time.
The command line only, one subcommand per job: `lazygen.py --help` lists
them, `lazygen.py COMMAND --help` gives one's options, and
docs/concepts/architecture.md's table says who calls each. The work lies in
the modules it imports: spec.py reads a spec, model.py the header,
emit_stubs.py and emit_data.py write the shim's C, find_header.py and
find_library.py find the header and the real library, dropin_exports.py a
drop-in's exports and versions, install_tables.py the installation's
tables, output.py how files and notes are written.
"""

import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean when run from it
HERE = os.path.dirname(os.path.abspath(__file__))

import elfvers  # noqa: E402
import symlist  # noqa: E402
from amalgamate import amalgamate  # noqa: E402
from dropin_exports import dropin  # noqa: E402
from emit_data import emit_data  # noqa: E402
from emit_stubs import emit, emit_header  # noqa: E402
from exports import export_names  # noqa: E402
from find_header import find_include, include_path  # noqa: E402
from find_library import dependency_names, find_libraries  # noqa: E402
from install_tables import control_header, public_header, python_libraries, registry  # noqa: E402
from model import enumerators, macro_values, parse_functions, preprocess, target_arch  # noqa: E402
from output import say, write_if_changed  # noqa: E402
from spec import GenError, Problems, load_spec, peers, spec_label  # noqa: E402



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


def cmd_control_header(a, cc):
    spec = load_spec(a.spec)
    if spec.hidden or not spec.control_api:
        raise GenError(a.spec, "this shim has no control API (visibility = \"hidden\" or "
                               "control_api = false)")
    write_if_changed(a.out, control_header(spec))


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
    # What dlsym finds through the library's dependencies and not in it.
    from_deps = set()
    if library and a.library and not spec.symbols:
        from_deps, missing = dependency_names(library, cc)
        from_deps -= set(library.symbols)
        if missing:
            say(f"lazygen: {spec.path}: note: {', '.join(missing)}, needed by {a.library}, not found at "
                f"build time: a name only it defines is asked of every candidate")
    enums = enumerators(cc, spec, a.include_dir) if spec.language == "c++" and headers else None
    # The functions and the variables are checked apart, and every problem
    # of both named in one run.
    problems = Problems()
    data = problems.check(emit_data, spec, spec_display, headers, variables, library, arch)
    control = [] if getattr(a, "out_control", None) else None
    shim = problems.check(emit, spec, spec_display, headers, functions, macros, arch=arch,
                          library_functions=library.functions - library.vague
                          if library else (), enums=enums, has_variables=not data or bool(data[2]),
                          control=control, dependency_functions=from_deps)
    problems.raise_any()
    c_text, exports, notes = shim
    d_text, hook_text, data_names, data_notes = data
    if data_names and not (a.out_data and a.out_hooks):
        raise GenError(spec.path, f"{len(data_names)} variable(s) to serve "
                                  f"({', '.join(data_names[:5])}): give --out-data and --out-hooks")
    if a.out_data:
        write_if_changed(a.out_data, d_text)
        write_if_changed(a.out_hooks, hook_text)
    if control:
        write_if_changed(a.out_control, control[0])
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
            p.add_argument("--out-control", help="the static archive's control API, a C file of its "
                                                 "own (compiled with -DLZ_STATIC_SHIM)")
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
