#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shape of the shims: completeness against header and library, ELF
hygiene, the one-jump hot path, deterministic generation."""
import glob
import os
import re
import shutil
import sys
import tomllib

import lztest as t
from lztest import case

# Beyond the header, what the spec declares for its drop-in (extra_headers).
EXTRA = {"nccl": "nccl_device_host.h", "nvrtc": "nvrtc_legacy.h"}
LIBS = {
    # id: (header, real soname, API name pattern)
    "nccl": ("nccl.h", "libnccl.so.2", r"^p?nccl[A-Z]\w*$"),
    "nvrtc": ("nvrtc.h", "libnvrtc.so.13", r"^nvrtc[A-Z]\w*$"),
    "nvjitlink": ("nvJitLink.h", "libnvJitLink.so.13", r"^(__)?nvJitLink[A-Z]\w*$"),
}
sys.path.insert(0, os.path.join(t.SOURCE, "gen"))
from control_api import NAMES as CONTROL  # noqa: E402  (written once, gen/control_api.py)


def header_text(lib):
    inc = t.NCCL_INCLUDE if lib == "nccl" else t.CUDA_INCLUDE
    paths = [os.path.join(inc, LIBS[lib][0])]
    if lib in EXTRA:
        paths.append(os.path.join(t.SOURCE, "stubs", EXTRA[lib]))
    text = ""
    for p in paths:
        with open(p) as f:
            text += f.read()
    return text


def declared_in_header(lib):
    """Function names the header text declares or defines: NAME followed by '('."""
    return set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", header_text(lib)))


def completeness(lib):
    real = t.exported(t.real_library(LIBS[lib][1]))
    shim = t.exported(t.shim(lib))
    wanted = real & declared_in_header(lib)
    missing = sorted(wanted - shim)
    print(f"{lib}: header and library share {len(wanted)} functions; "
          f"the shim exports {len(shim)} names")
    if missing:
        print("missing from the shim: " + ", ".join(missing))
    extra = sorted((real - shim) - wanted)
    if extra:
        print("exported by the library but not declared in the header (not wrapped): "
              + ", ".join(extra))
    t.check(wanted and not missing, f"{len(missing)} functions missing")


def hygiene_needed(lib):
    out = t.run(["readelf", "-d", t.shim(lib)], check_rc=0).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    print("DT_NEEDED:", needed)
    bad = [n for n in needed if re.match(r"lib(nccl|nvrtc|nvJitLink|elf|cuda)", n)]
    t.check(not bad, f"DT_NEEDED on {bad}")
    allowed = re.compile(r"^(libc\.so|ld-linux|libdl\.so|libpthread\.so|libasan|libubsan|libtsan|"
                         r"libgcc_s|libm\.so|libstdc\+\+)")
    t.check(all(allowed.match(n) for n in needed), f"unexpected DT_NEEDED in {needed}")


def hygiene_exports(lib):
    pattern = re.compile(LIBS[lib][2])
    declared = declared_in_header(lib)
    control = {f"lazy{lib}_{c}" for c in CONTROL}
    names = t.exported(t.shim(lib))
    # The real library's own functions that no header declares are served
    # too (a drop-in stands for the whole library): its exports, by nm.
    try:
        real = t.exported(t.real_library(LIBS[lib][1]))
    except t.Skip:
        real = set()
    bad = []
    for n in sorted(names):
        if n in control or n in real:
            continue
        versioned = lib == "nvjitlink" and re.match(r"^__nvJitLink[A-Za-z]+_\d+_\d+$", n)
        if not pattern.match(n) or not (n in declared or versioned):
            bad.append(n)
    print(f"{len(names)} exports; outside the API: {bad}")
    t.check(not bad, f"exports outside the wrapped and control API: {bad}")
    t.check(control <= names, f"control API missing: {sorted(control - names)}")


for _lib in LIBS:
    t.CASES[f"completeness_{_lib}"] = (lambda lib: lambda: completeness(lib))(_lib)
    t.CASES[f"needed_{_lib}"] = (lambda lib: lambda: hygiene_needed(lib))(_lib)
    t.CASES[f"exports_{_lib}"] = (lambda lib: lambda: hygiene_exports(lib))(_lib)


def function_bodies(path):
    return t.function_bodies(path, args=("-M", "att"),
                             padding=("nop", "xchg   %ax,%ax", "data16", "cs nop", "int3"))


SLOT_LOAD = re.compile(r"^mov\s+0x[0-9a-f]+\(%rip\),(%r\w+)$")


def own_answers(lib):
    """The names of a spec's [own_answers]."""
    with open(os.path.join(t.SOURCE, "stubs", f"{lib}.toml"), "rb") as f:
        return set(tomllib.load(f).get("own_answers", {}))


RESOLVER_JUMP = re.compile(r"^jmp\s+[0-9a-f]+ <lz_bind_pick>$")


def indirect_functions(path):
    """The names a shared object exports as GNU indirect functions."""
    out = t.run(["nm", "-D", "--defined-only", path], check_rc=0).stdout
    return {p[2].split("@")[0] for p in (line.split() for line in out.splitlines())
            if len(p) == 3 and p[1] == "i"}


def one_jump(body):
    """A slot's load and one indirect jump (or the jump alone, x86-64)."""
    if body and len(body) == 2:
        m = SLOT_LOAD.match(body[0])
        return bool(m) and bool(re.match(rf"^jmp\s+\*{re.escape(m.group(1))}$", body[1]))
    return bool(body) and len(body) == 1 and bool(re.match(r"^jmp\s+\*0x[0-9a-f]+\(%rip\)$", body[0]))


@case
def hot_path():
    """Every exported thunk is a load of its slot and one indirect jump. In
    the shared shim an own-answer function is an indirect function
    (src/api/lz_bind.h): its resolver asks lz_bind_pick, and its thunk is the
    local NAME.lzj; every other export, and every export of the static
    shim, is the thunk itself."""
    if t.OPTIMIZATION in ("0", "plain"):
        raise t.Skip(f"optimization={t.OPTIMIZATION}: thunks are only one jump in optimised builds")
    if t.SANITIZE not in ("", "none"):
        raise t.Skip(f"sanitizer build ({t.SANITIZE}) instruments the slot load")
    checked, bad = 0, []
    for lib in LIBS:
        with open(os.path.join(t.SHIMS, f"{lib}_exports.txt")) as f:
            names = [n for n in f.read().split() if not n.startswith(f"lazy{lib}_")]
        shared, static = function_bodies(t.shim(lib)), function_bodies(t.shim(lib, static=True))
        ifuncs = indirect_functions(t.shim(lib))
        answers = own_answers(lib)
        for n in names:
            resolver = shared.get(n) or []
            if n in answers:
                ok = (n in ifuncs and one_jump(shared.get(n + ".lzj")) and len(resolver) == 4
                      and bool(RESOLVER_JUMP.match(resolver[-1])))
            else:
                ok = n not in ifuncs and one_jump(resolver)
            ok = ok and one_jump(static.get(n))
            checked += 1
            if not ok:
                bad.append(f"{lib}:{n}: shared {shared.get(n + '.lzj')} resolver {resolver} "
                           f"static {static.get(n)}")
        if ifuncs != answers:
            bad.append(f"{lib}: indirect functions {sorted(ifuncs)}, own answers {sorted(answers)}")
    print(f"{checked} thunks checked")
    for b in bad[:20]:
        print(b)
    t.check(checked > 200 and not bad, f"{len(bad)} thunks are not one load and one jump")


@case
def generator_deterministic():
    """Two runs of the generator give identical output, with its provenance."""
    d = t.workdir("generator_deterministic")
    outs, controls = [], []
    for i in range(2):
        out, control = os.path.join(d, f"nccl{i}.c"), os.path.join(d, f"nccl{i}_control.c")
        t.run([sys.executable, os.path.join(t.SOURCE, "gen", "lazygen.py"), "generate",
               os.path.join(t.SOURCE, "stubs", "nccl.toml"), "--include-dir", t.NCCL_INCLUDE,
               "--cc", " ".join(t.CC), "--out-c", out, "--out-control", control], check_rc=0)
        with open(out) as f:
            outs.append(f.read())
        with open(control) as f:
            controls.append(f.read())
    t.equal(outs[0], outs[1], "generated text of two runs")
    t.equal(controls[0], controls[1], "the control API's file of two runs")
    head = outs[0][:600]
    for part in ("Spec:    stubs/nccl.toml", os.path.join(t.NCCL_INCLUDE, "nccl.h"),
                 "NCCL_MAJOR = 2", "do not edit"):
        t.contains(head, part, "provenance comment")
    with open(os.path.join(t.SHIMS, "nccl_stubs.c")) as f:
        t.equal(f.read(), outs[0], "the build's generated file vs a fresh run")
    with open(os.path.join(t.SHIMS, "nccl_control.c")) as f:
        t.equal(f.read(), controls[0], "the build's control API file vs a fresh run")


@case
def meson_install():
    """meson install puts the libraries, header, .pc files, tool, drop-ins and
    amalgamations in place (into a DESTDIR)."""
    d = t.workdir("meson_install")
    t.run(["meson", "install", "-C", t.BUILD, "--no-rebuild", "--quiet", "--destdir", d], check_rc=0)
    files = {os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs}
    names = {os.path.basename(f) for f in files}
    want = {"liblazynccl.so.0.1.0", "liblazynccl.a", "liblazynvrtc.so.0.1.0", "liblazynvrtc.a",
            "liblazynvjitlink.so.0.1.0", "liblazynvjitlink.a", "lazynccl.pc", "lazynvrtc.pc",
            "lazynvjitlink.pc", "lazynccl.h", "lazynccl-info", "lazynccl_amalg.c",
            "lazynccl_amalg.h", "libnccl.so.2", "libnvrtc.so.13", "libnvJitLink.so.12"}
    t.equal(sorted(want - names), [], "missing from the installation")
    dropins = [f for f in files if os.path.basename(f) == "libnccl.so.2"]
    t.check(dropins and all("/lazynccl/dropin/" in f for f in dropins),
            f"drop-ins outside lib/lazynccl/dropin: {dropins}")
    pc = open(os.path.join(d, next(f for f in files if f.endswith("lazynccl.pc")))).read()
    t.contains(pc, "-llazynccl", "lazynccl.pc")
    t.contains(pc, f"-I{t.NCCL_INCLUDE}", "lazynccl.pc points at nccl.h")
    # Installed binaries are stripped (strip=true, the project's default;
    # the drop-ins by gen/strip_elf.py): no symbol table, no debug sections,
    # the dynamic symbols and versions kept.
    for name in ("liblazynccl.so.0.1.0", "libnccl.so.2", "libnvJitLink.so.12", "lazynccl-info"):
        path = os.path.join(d, next(f for f in files if os.path.basename(f) == name))
        secs = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", t.run(["readelf", "-SW", path], check_rc=0).stdout, re.M)
        t.equal([x for x in secs if x == ".symtab" or x.startswith(".debug")], [], f"{name}: stripped")
        t.check(".dynsym" in secs, f"{name}: {secs}")
        if name == "libnvJitLink.so.12":
            t.check(".gnu.version_d" in secs, f"{name}: its versions kept: {secs}")
    r = t.run(["nm", "-D", "--defined-only", os.path.join(d, next(f for f in files if f.endswith("/libnccl.so.2")))],
              check_rc=0)
    t.contains(r.stdout, "ncclGetVersion", "the stripped drop-in still exports the API")


SOURCE_EXT = (".c", ".h", ".py", ".sh", ".toml", ".build", ".pml", ".in")


RUNTIME_DIRS = ("arch", "common", "base", "elf", "process", "search", "load", "api", "small")


def runtime_modules():
    """Each runtime module (src/<folder>/lz_X.c with its own .h) by name,
    with its folder."""
    src = os.path.join(t.SOURCE, "src")
    return {f[:-2]: d for d in RUNTIME_DIRS if os.path.isdir(os.path.join(src, d))
            for f in os.listdir(os.path.join(src, d)) if f.startswith("lz_") and f.endswith(".c")}


def runtime_graph():
    """Which runtime module includes which other module's header (lz_X.c
    and its own lz_X.h together; headers of types only, with no .c, left
    out)."""
    src = os.path.join(t.SOURCE, "src")
    mods = runtime_modules()
    graph = {}
    for m, d in sorted(mods.items()):
        text = open(os.path.join(src, d, m + ".c")).read()
        own = os.path.join(src, d, m + ".h")
        if os.path.exists(own):
            text += open(own).read()
        graph[m] = {h for h in re.findall(r'#include "\w+/(lz_\w+)\.h"', text)} & set(mods) - {m}
    return graph


def doc_table(text, heading_cols):
    """The rows of the first Markdown table whose header row starts with
    heading_cols, as lists of cells."""
    rows, inside = [], False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells and cells[:len(heading_cols)] == heading_cols:
            inside = True
            continue
        if inside and not cells:
            break
        if inside and not set(cells[0]) <= set("- "):
            rows.append(cells)
    return rows


@case
def runtime_layers_match_architecture():
    """The runtime is a tower: the graph of which module includes which has
    no circle, so no file calls one above it; each module's layer (one
    above the highest it calls) and what it calls are what
    docs/concepts/architecture.md's two tables say."""
    graph = runtime_graph()
    t.check(len(graph) > 10, f"runtime modules found: {sorted(graph)}")
    layer, state = {}, {}

    def visit(m, path):
        t.check(state.get(m) != "open", f"include circle: {' -> '.join(path + [m])}")
        if state.get(m) == "done":
            return layer[m]
        state[m] = "open"
        layer[m] = 1 + max([visit(n, path + [m]) for n in sorted(graph[m])] or [-1])
        state[m] = "done"
        return layer[m]

    for m in graph:
        visit(m, [])
    with open(os.path.join(t.SOURCE, "docs", "concepts", "architecture.md")) as f:
        doc = f.read()
    ticks = lambda cell: set(re.findall(r"`(lz_\w+)`", cell))
    said_layer = {m: int(row[0]) for row in doc_table(doc, ["layer", "modules"]) for m in ticks(row[1])}
    t.equal(said_layer, layer, "docs/concepts/architecture.md's layers vs the includes")
    said_calls = {next(iter(ticks(row[0]))): ticks(row[2])
                  for row in doc_table(doc, ["module", "owns", "calls"])}
    t.equal(said_calls, graph, "docs/concepts/architecture.md's 'calls' column vs the includes")


@case
def runtime_folders_match_architecture():
    """Each runtime module lies in the folder docs/concepts/architecture.md's folder
    table names for it, every runtime file is a module or one of the
    headers the table names, and every include names its folder."""
    with open(os.path.join(t.SOURCE, "docs", "concepts", "architecture.md")) as f:
        doc = f.read()
    rows = doc_table(doc, ["folder", "what it holds", "files"])
    said = {m: row[0].strip("`/") for row in rows for m in re.findall(r"`(lz_\w+)(?:\.[ch])?`", row[2])}
    src = os.path.join(t.SOURCE, "src")
    have = {f.rsplit(".", 1)[0]: d for d in RUNTIME_DIRS if os.path.isdir(os.path.join(src, d))
            for f in os.listdir(os.path.join(src, d)) if f.startswith("lz_")}
    t.equal(said, have, "docs/concepts/architecture.md's folder table vs src/")
    bare = []
    for d in RUNTIME_DIRS + ("audit", "run", "info", "dropin"):
        for f in sorted(os.listdir(os.path.join(src, d))) if os.path.isdir(os.path.join(src, d)) else []:
            if f.endswith((".c", ".h")):
                text = open(os.path.join(src, d, f)).read()
                bare += [f"{d}/{f}: {h}" for h in re.findall(r'#include "((?:\.\./)?lz_\w+\.h)"', text)
                         if d in RUNTIME_DIRS or h.startswith("../")]
    t.equal(bare, [], "runtime includes without their folder")
    order = {d: i for i, d in enumerate(RUNTIME_DIRS)}
    upward = [f"{m} ({have[m]}/) calls {n} ({have[n]}/)" for m, calls in sorted(runtime_graph().items())
              for n in sorted(calls) if order[have[n]] > order[have[m]]]
    t.equal(upward, [], "modules calling a module of a later folder")


_C_WORDS = {"const", "static", "inline", "int", "char", "void", "unsigned", "long", "short", "signed",
            "double", "float", "volatile", "restrict", "struct", "union", "enum", "typedef", "extern",
            "return", "if", "else", "for", "while", "do", "sizeof", "define", "defined", "ifndef", "ifdef",
            "endif", "elif", "undef", "include", "pragma", "once", "error", "size_t", "ssize_t", "bool",
            "uint8_t", "uint16_t", "uint32_t", "uint64_t", "int32_t", "int64_t", "uintptr_t", "pid_t",
            "off_t"}


def _c_ids(text):
    """Identifiers of C text, comments, strings and #include lines left out."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"^\s*#\s*include[^\n]*", " ", text, flags=re.M)
    return set(re.findall(r"\b[A-Za-z_]\w*\b", text)) - _C_WORDS


@case
def includes_each_carry_a_name():
    """Every project header a file of src/ includes declares at least one
    name that file uses (names the header only passes on from its own
    includes do not count), so a dead include fails here rather than
    passing as architecture."""
    src = os.path.join(t.SOURCE, "src")
    quoted = lambda text: re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M)
    declared = {}

    def resolve(d, inc):  # beside the file, else below src/ (the include path)
        p = os.path.normpath(os.path.join(d, inc))
        return p if os.path.isfile(p) else os.path.normpath(os.path.join(src, inc))

    def names_of(h):
        if h not in declared:
            text = open(h).read()
            mine = _c_ids(text)
            for inc in quoted(text):
                p = resolve(os.path.dirname(h), inc)
                if os.path.isfile(p):
                    mine -= _c_ids(open(p).read())
            declared[h] = mine
        return declared[h]

    dead, checked = [], 0
    for root, _, names in os.walk(src):
        for n in sorted(names):
            if not n.endswith((".c", ".h")):
                continue
            f = os.path.join(root, n)
            text = open(f).read()
            used = _c_ids(text)
            for inc in quoted(text):
                p = resolve(root, inc)
                if not os.path.isfile(p) or os.path.splitext(os.path.basename(p))[0] == n[:-2]:
                    continue  # a generated header, or the file's own
                checked += 1
                if not names_of(p) & used:
                    dead.append(f'{os.path.relpath(f, t.SOURCE)}: #include "{inc}"')
    t.check(checked > 50, f"includes checked: {checked}")
    t.equal(dead, [], "includes that carry no name the file uses")


@case
def step_names_from_one_table():
    """The search steps' names are written once, in src/common/lz_stepnames.h: no C
    file of src/ and no file of the Python package spells one as a string
    (an environment variable of the same name read by getenv aside), and
    the generator reads every one with its found_via."""
    with open(os.path.join(t.SOURCE, "src", "common", "lz_stepnames.h")) as f:
        steps = re.findall(r'#define LZ_STEP_\w+ "([^"]+)"\s*/\* found_via: \S+ \*/', f.read())
    t.check(len(steps) >= 9, f"steps in lz_stepnames.h: {steps}")
    spelled = []
    for root, _, names in os.walk(os.path.join(t.SOURCE, "src")):
        for n in names:
            if not n.endswith((".c", ".py")) or n == "lz_stepnames.h":
                continue
            for i, line in enumerate(open(os.path.join(root, n)), 1):
                if "getenv" in line or "environ" in line:
                    continue
                for step in steps:
                    q = re.escape(step)
                    # C: any string; Python: a key or a comparison (docstrings may name one)
                    if (n.endswith(".c") and f'"{step}"' in line) or (n.endswith(".py") and re.search(
                            rf"""["']{q}["']\s*:|[=!]=\s*["']{q}["']|["']{q}["']\s*[=!]=""", line)):
                        spelled.append(f"{os.path.relpath(os.path.join(root, n), t.SOURCE)}:{i}: {step!r}")
    t.equal(spelled, [], "step names spelled outside src/common/lz_stepnames.h")
    out = os.path.join(t.workdir("step_names"), "_libraries.py")
    specs = sorted(os.path.join(t.SOURCE, "stubs", f) for f in os.listdir(os.path.join(t.SOURCE, "stubs"))
                   if f.endswith(".toml"))
    t.run([sys.executable, os.path.join(t.SOURCE, "gen", "lazygen.py"), "python-libraries", "--out", out] + specs,
          check_rc=0)
    scope = {}
    exec(open(out).read(), scope)
    t.equal([s for s in steps if s not in scope["FOUND_VIA"]], [], "steps the Python package lacks")


@case
def docs_figures_name_their_runs():
    """Every section of README.md and docs/ that gives figures names the run
    in docs/data (or docs/gpu-results) they come from, and every run named
    exists (tests/figures_audit.py)."""
    r = t.run([sys.executable, os.path.join(t.SOURCE, "tests", "figures_audit.py")])
    t.equal((r.returncode, r.stdout), (0, ""), "sections with figures and no recorded run")


@case
def spdx_every_source_file():
    """Every tracked source file names its licence (MIT, as LICENSE and
    meson.build say) in an SPDX line near its top."""
    files = t.run(["git", "-C", t.SOURCE, "ls-files"], check_rc=0).stdout.split()
    if not files:
        raise t.Skip("not a git checkout")
    missing = []
    for f in files:
        if not (f.endswith(SOURCE_EXT) or os.path.basename(f) in ("run", "run-suite",
                                                                  "meson_options.txt")):
            continue
        with open(os.path.join(t.SOURCE, f), encoding="utf-8", errors="replace") as fh:
            head = fh.read(400)
        if "SPDX-License-Identifier: MIT" not in head:
            missing.append(f)
    print(f"{len(files)} files tracked")
    t.check(not missing, f"no SPDX line: {missing}")
    with open(os.path.join(t.SOURCE, "LICENSE")) as fh:
        t.check(fh.read().startswith("MIT License"), "LICENSE is the MIT licence")



@case
def ci_runs_the_readme_commands():
    """CI (.ci/run) walks a new user's path: it runs the README's two
    commands ("The two commands") as written and in order, read from the
    README at run time, so a command changed there is what CI runs."""
    with open(os.path.join(t.SOURCE, "README.md")) as f:
        readme = f.read()
    block = readme[readme.index("## The two commands"):]
    block = block[block.index("```sh\n") + 6:]
    block = block[:block.index("```")]
    want = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    t.equal(len(want), 2, f"README's commands: {want}")
    t.check(want[0].startswith("apt-get update") and want[0].endswith("build/lazynccl-demo"),
            f"command 1 sets up, builds and shows lazy loading: {want[0]}")
    t.check(want[1].endswith("tests/run-suite"), f"command 2 runs the suite: {want[1]}")
    r = t.run(["bash", os.path.join(t.SOURCE, ".ci", "run"), "--print"], check_rc=0)
    t.equal(r.stdout.splitlines(), want, "what .ci/run runs")
    with open(os.path.join(t.SOURCE, ".ci", "run")) as f:
        ci = f.read()
    t.check("apt-get install" not in ci and "run-suite" not in ci,
            ".ci/run installs and runs nothing of its own")


@case
def environment_table_names_every_variable():
    """docs/reference/environment.md's tables ("you may set", "lazynccl-run sets")
    name every variable the code reads (getenv, secure_getenv, the audit
    module's lz_sys_getenv and env_index, the runtime's lz_getenv, Python's
    os.environ, and the names behind the *_ENV macros), every "LAZY..."
    string of src/ and gen/, and each installed shim's override
    (LAZY<SHIM>_LIBPATH); a variable read and not documented fails."""
    reads = re.compile(r'(?:secure_getenv|lz_sys_getenv|lz_getenv|getenv|env_index)\("([A-Za-z_0-9]+)"\)'
                       r'|os\.environ(?:\.get)?[\[(]"([A-Za-z_0-9]+)"'
                       r'|#define \w+_ENV "([A-Z_0-9]+)"'
                       r'|"(LAZY[A-Z0-9_]+)')
    names = set()
    for top in ("src", "gen"):
        for root, _, files in os.walk(os.path.join(t.SOURCE, top)):
            for n in files:
                if n.endswith((".c", ".h", ".py")):
                    with open(os.path.join(root, n), errors="replace") as f:
                        names |= {next(g for g in m.groups() if g) for m in reads.finditer(f.read())}
    lazygen = [sys.executable, os.path.join(t.SOURCE, "gen", "lazygen.py")]
    specs = t.run(lazygen + ["list-specs", os.path.join(t.SOURCE, "stubs")], check_rc=0).stdout.split()
    for spec in specs:
        desc = dict(line.split("\t", 1) for line in
                    t.run(lazygen + ["describe", spec], check_rc=0).stdout.splitlines() if "\t" in line)
        if desc.get("install") == "yes":
            names.add(desc["shim"].upper() + "_LIBPATH")
    with open(os.path.join(t.SOURCE, "docs", "reference", "environment.md")) as f:
        table = f.read()
    t.check("lazynccl-run` sets" in table and "What you may set" in table, "the two tables")
    t.check(len(names) > 25, f"variables found: {sorted(names)}")
    t.equal(sorted(n for n in names if f"`{n}" not in table), [],
            "read by the code, not in docs/reference/environment.md's tables")


def mode_commands():
    """The command of each row of README's "Pick your mode" table (its
    second cell's first code span), for the plain build only."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("the README's commands name the plain build")
    with open(os.path.join(t.SOURCE, "README.md")) as f:
        readme = f.read()
    table = readme[readme.index("## Pick your mode"):]
    table = table[:table.index("\n## ")]
    cmds = []
    for row in table.splitlines():
        cells = row.split(" | ")
        code = re.match(r"`([^`]+)`", cells[1]) if len(cells) > 2 else None
        if code:
            cmds.append(code.group(1))
    return cmds


@case
def readme_modes_run_as_written():
    """The "Pick your mode" rows that need nothing but the build (the
    launcher, the drop-in, LAZYNCCL_LIBPATH, lazynccl-info) run as written,
    from the checkout, and say what the row promises; the build directory is
    the suite's own."""
    cmds = {c.split()[0]: c for c in mode_commands()
            if re.match(r"(build/lazynccl-(run|info)|LD_LIBRARY_PATH=|LAZYNCCL_LIBPATH=|"
                        r"/usr/bin/python3 gen/lazygen.py build)", c)}
    t.equal(len(cmds), 5, f"the rows found: {list(cmds)}")
    nccl = "/usr/local/cuda/lib64/libnccl.so.2"
    if not os.path.exists(nccl):
        raise t.Skip(f"no {nccl} on this machine")
    build = os.path.relpath(t.BUILD, t.SOURCE)
    outs = {}
    for key, cmd in cmds.items():
        r = t.run(["bash", "-c", cmd.replace("build/", build + "/")], cwd=t.SOURCE, env={})
        t.equal(r.returncode, 0, f"{cmd}: {r.stderr[-2000:]}")
        outs[key] = r.stdout
    t.contains(outs["build/lazynccl-run"], "/dropin/libnccl.so.2", "a load by path got the drop-in")
    t.check(outs["LD_LIBRARY_PATH=$PWD/build/src/dropin"].strip().isdigit(), "the drop-in answered a version")
    t.contains(outs["LAZYNCCL_LIBPATH=/usr/local/cuda/lib64/libnccl.so.2"],
               f"{nccl} (found by: LAZYNCCL_LIBPATH)", "the library named")
    t.contains(outs["build/lazynccl-info"], "NCCL", "lazynccl-info")
    t.contains(outs["/usr/bin/python3"], "error_exit: Not a JPEG file",
               "a library of one's own, built by lazygen build alone")


@case
def readme_first_command_builds_what_the_modes_need():
    """The README's first command configures a build without the tests and
    benchmarks; configured as it says (in a directory of its own; nothing
    is compiled), that build makes every file of build/ that a "Pick your
    mode" row or the command itself runs, and leaves the suite's out."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("the README's commands name the plain build")
    with open(os.path.join(t.SOURCE, "README.md")) as f:
        readme = f.read()
    block = readme[readme.index("## The two commands"):]
    first = [line for line in block[block.index("```sh\n") + 6:].splitlines() if line and line[0] != "#"][0]
    setup = re.search(r"meson setup build((?: -D\w+=\w+)*)", first)
    t.check(setup is not None, f"command 1 configures build: {first}")
    d = t.workdir("readme_first_command")
    shutil.rmtree(f"{d}/build", ignore_errors=True)
    r = t.run(["meson", "setup", f"{d}/build", *setup.group(1).split()], cwd=t.SOURCE)
    t.equal(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
    targets = set(t.run(["ninja", "-C", f"{d}/build", "-t", "targets", "all"], check_rc=0).stdout.split())
    named = set(re.findall(r"\bbuild/([\w./-]+)", " ".join(mode_commands()) + " " + first))
    named = {n.rstrip(".") for n in named} | {"src/dropin/libnccl.so.2"}
    for n in sorted(named):
        if os.path.isdir(os.path.join(t.BUILD, n)):
            continue  # a directory a row names (src/dropin): its files are named one by one
        t.check(n + ":" in targets, f"build/{n}, which the README runs, is made by command 1's build")
    t.check(not any(x.startswith("tests/") or x.startswith("bench/") for x in (y.rstrip(":") for y in targets)),
            "command 1's build holds no test or benchmark program")


@case
def readme_package_rows_run_as_written():
    """The "Pick your mode" rows that build packages (vendoring the shims
    into a wheel; installing the project's own wheel into a venv) run as
    written from the checkout with what the README's first command
    installs, the vendoring row twice in a row (the second finds the first's
    leftovers; the wheel's row finds those of the suite's last run): the
    vendored wheel is built, and the installed lazynccl-info answers."""
    rows = {("vendor" if "stage.py" in c else "wheel"): c for c in mode_commands()
            if "stage.py" in c or "pip install" in c}
    t.equal(sorted(rows), ["vendor", "wheel"], "the rows found")
    want = {"vendor": "Successfully built mypkg", "wheel": "release policy:"}
    for attempt, key in ((1, "vendor"), (2, "vendor"), (1, "wheel")):
        r = t.run(["bash", "-c", rows[key]], cwd=t.SOURCE, env={})
        t.equal(r.returncode, 0, f"{key}, run {attempt}: {rows[key]}: {r.stdout[-1500:]}{r.stderr[-1500:]}")
        t.contains(r.stdout, want[key], f"{key}, run {attempt}")


@case
def docs_figures_match_their_sources():
    """Every figure between markers in README.md and docs/ (export counts,
    the libraries served, bench/versus's table) is what its source says
    now: the build's export lists, the specs, the newest recorded run
    (docs/figures.py --check; --write rewrites them)."""
    r = t.run([sys.executable, os.path.join(t.SOURCE, "docs", "figures.py"), "--build", t.BUILD, "--check"])
    t.equal((r.returncode, r.stdout), (0, ""), "figures that differ from their sources")
    with open(os.path.join(t.SOURCE, "README.md")) as f:
        t.check(f.read().count("<!-- figure: ") >= 3, "README's figures are marked")


@case
def readme_fits_a_newcomers_read():
    """README.md stays within 150 lines: the rest is in docs/."""
    with open(os.path.join(t.SOURCE, "README.md")) as f:
        n = len(f.read().splitlines())
    t.check(n <= 150, f"README.md has {n} lines")


@case
def docs_figures_verified_against_their_runs():
    """Every typed figure of README.md and docs/ is held by a run its
    section names, or is one of the known exceptions listed in
    docs/figures-unverified.txt (derived or rounded values, to be written
    from their runs), and the list holds nothing that is verified now
    (tests/figures_audit.py --verify): a new figure that parts from its
    data fails."""
    r = t.run([sys.executable, os.path.join(t.SOURCE, "tests", "figures_audit.py"), "--verify"])
    t.equal((r.returncode, r.stdout), (0, ""), "figures against their runs")

# How the work went is CHANGELOG.md's: a heading named after an issue, or a
# stage of the work (a numbered stop or round of it) anywhere else, tells a
# reader of a tracker and a process they do not have.
HISTORY = re.compile(r"\b(?:st" r"op ?\d+[a-z]?|this st" r"op|resumed st" r"op|rou" r"nd ?\d+)\b", re.I)
ISSUE_HEADING = re.compile(r"^#+ .*\biss" r"ue ?\d+", re.I | re.M)


@case
def docs_hold_no_history():
    """No heading of README.md or docs/*.md names an issue; no tracked file
    but CHANGELOG.md (and the runs in docs/data, which are records) names a
    stage of the work, and no file in docs/data is named after one; every
    run in docs/data is cited by a page, a script or a test (older runs are
    in git history)."""
    tracked = t.run(["git", "-C", t.SOURCE, "ls-files"], check_rc=0).stdout.split()
    texts = {}
    for rel in tracked:
        path = os.path.join(t.SOURCE, rel)
        if rel.startswith("docs/data/") or rel == "CHANGELOG.md" or os.path.islink(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                texts[rel] = f.read()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
    headings = [f"{rel}: {m.group(0)}" for rel, text in texts.items()
                if rel == "README.md" or (rel.startswith("docs/") and rel.endswith(".md"))
                for m in ISSUE_HEADING.finditer(text)]
    t.equal(headings, [], "headings named after an issue")
    stages = [f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
              for rel, text in texts.items() for m in HISTORY.finditer(text)]
    t.equal(stages, [], "stages of the work named")
    data = [rel[len("docs/data/"):] for rel in tracked if rel.startswith("docs/data/")]
    t.equal([n for n in data if HISTORY.search(n.replace("-", " ")) or re.search(r"iss" r"ue\d+", n)], [],
            "docs/data files named after a stage or an issue")
    everything = "\n".join(texts.values())
    t.equal([n for n in data if n not in everything], [], "docs/data files nothing cites")


# The headline quantities: each is written only through a figure that
# docs/figures.py takes from the newest run of its benchmark, so no two
# pages (or two runs) give one quantity two values. A paragraph or table row
# naming one with a typed ratio fails, unless it is about another machine.
HEADLINE = {"first call": r"\bfirst calls?\b", "hot call": r"\bhot calls?\b",
            "start-up": r"\bstart-up\b|\bstartup\b", "launcher": r"lazynccl-run /bin/true|\bthe launcher\b",
            "process tree": r"\bprocess trees?\b|\btree of `?/bin/true"}
OTHER_MACHINE = re.compile(r"H100|H200|GPU|AArch64|arm64|qemu", re.I)


@case
def one_figure_per_quantity():
    """No page of README.md or docs/ types a ratio for a headline quantity
    (first call, hot call, start-up, the launcher, a process tree) of this
    machine: each is a figure written from the newest run of its benchmark
    (docs/concepts/performance.md, "The benchmarks"), so one quantity has one value
    everywhere."""
    marker = re.compile(r"<!-- figure: [\w.-]+ -->.*?<!-- /figure -->", re.S)
    typed = re.compile(r"(?<![\w.])\d+\.\d+ ?x\b")
    found = []
    for path in [os.path.join(t.SOURCE, "README.md")] + sorted(glob.glob(os.path.join(t.SOURCE, "docs", "**", "*.md"), recursive=True)):
        text = re.sub(r"```.*?```", "", marker.sub("", open(path).read()), flags=re.S)
        # paragraphs, table rows and list items, each on its own
        for para in re.split(r"\n\s*\n|\n(?=\|)|\n(?=\s*[-*] )", text):
            if OTHER_MACHINE.search(para) or not typed.search(para):
                continue
            for q, rx in HEADLINE.items():
                if re.search(rx, para, re.I):
                    found.append(f"{os.path.relpath(path, t.SOURCE)}: {q}: {para.strip()[:80]!r}")
    t.equal(found, [], "typed figures of a headline quantity")


@case
def generator_worked_example_is_the_spec():
    """docs/reference/spec.md's cuBLAS worked example says the same keys and
    values as stubs/cublas.toml, which it says it is."""
    import tomllib
    with open(os.path.join(t.SOURCE, "docs", "reference", "spec.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("This is `stubs/cublas.toml`")
    block = re.search(r"```toml\n(.*?)```", text[start:], re.S).group(1)
    with open(os.path.join(t.SOURCE, "stubs", "cublas.toml"), "rb") as f:
        spec = tomllib.load(f)
    t.equal(tomllib.loads(block), spec, "docs/reference/spec.md's example against stubs/cublas.toml")


def heading_anchor(h):
    """The anchor a Markdown renderer gives a heading (GitHub's rule)."""
    return re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")


@case
def docs_in_folders_by_kind():
    """docs/ holds its pages in four folders by kind (getting-started,
    guides, concepts, reference), each page listed in docs/README.md; a
    guide is a short page (at most 200 lines) that links to the reference;
    every relative link of README.md and docs/ names a file that exists,
    and a heading there where it names one."""
    kinds = ("getting-started", "guides", "concepts", "reference")
    docs = os.path.join(t.SOURCE, "docs")
    pages = sorted(os.path.relpath(p, docs) for p in glob.glob(os.path.join(docs, "**", "*.md"), recursive=True)
                   if not p.startswith((os.path.join(docs, "data"), os.path.join(docs, "gpu-results"))))
    with open(os.path.join(docs, "README.md"), encoding="utf-8") as f:
        index = f.read()
    for page in pages:
        if page == "README.md":
            continue
        t.check(page.split(os.sep)[0] in kinds, f"docs/{page} lies in one of {kinds}")
        t.check(f"]({page})" in index, f"docs/{page} is listed in docs/README.md")
        if page.startswith("guides" + os.sep):
            with open(os.path.join(docs, page), encoding="utf-8") as f:
                text = f.read()
            t.check(text.count("\n") <= 200, f"docs/{page}: a guide of {text.count(chr(10))} lines (at most 200)")
            t.check("../reference/" in text, f"docs/{page} links to the reference")
    broken = []
    for path in [os.path.join(t.SOURCE, "README.md")] + [os.path.join(docs, p) for p in pages]:
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                broken.append(f"{os.path.relpath(path, t.SOURCE)}: {target}: no such file")
            elif frag and dest.endswith(".md"):
                with open(dest, encoding="utf-8") as f:
                    heads = {heading_anchor(h) for h in re.findall(r"^#+ (.*)$", f.read(), re.M)}
                if frag not in heads:
                    broken.append(f"{os.path.relpath(path, t.SOURCE)}: {target}: no such heading")
    t.equal(broken, [], "broken links")


@case
def search_step_example_is_the_source():
    """docs/concepts/architecture.md shows a search step as one row of lz_order.c's
    table: that row is in the table as written, and the step it names runs
    (its function is a row's)."""
    with open(os.path.join(t.SOURCE, "docs", "concepts", "architecture.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("The step most recently added")
    row = re.search(r"```c\n(.*?)```", text[start:], re.S).group(1).strip()
    with open(os.path.join(t.SOURCE, "src", "search", "lz_order.c"), encoding="utf-8") as f:
        source = [line.strip() for line in f]
    t.equal(row in source, True, f"docs/concepts/architecture.md's row {row!r} in src/search/lz_order.c")


if __name__ == "__main__":
    raise SystemExit(t.main())
