#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The generator serves the whole library: every C declaration
served or refused in one run, headers parsed together in the order given,
an exclude list; exported variables served by the shared and static shims
and the drop-in."""
import os
import re
import shutil
import sys
import tempfile
import tomllib

import lztest as t
from lztest import case

GEN = os.path.join(t.SOURCE, "gen", "lazygen.py")
DECL = os.path.join(t.SOURCE, "tests", "fixtures", "declarations")
VARS = os.path.join(t.SOURCE, "tests", "fixtures", "variables")
CXX = os.path.join(t.SOURCE, "tests", "fixtures", "cxx")


def lazygen(*args):
    return t.run(["timeout", "60", sys.executable, GEN, *args, "--cc", " ".join(t.CC)])


def shim_program(d, spec, include, prog, name="prog"):
    """spec's shim generated into d and linked, with the runtime, into prog."""
    r = lazygen("generate", spec, "--include-dir", include, "--out-c", f"{d}/{name}_stubs.c")
    t.equal(r.returncode, 0, f"generation: {r.stderr}")
    return t.compile_c(f"{d}/{name}", [prog, f"{d}/{name}_stubs.c"],
                       [f"-I{include}", f"-I{t.SOURCE}/src", f"-I{t.BUILD}", "-fvisibility=hidden",
                        "-D_GNU_SOURCE", "-Wall", "-Werror", "-Wno-deprecated-non-prototype",
                        os.path.join(t.SHIMS, "liblzruntime.a"), "-ldl", "-lpthread"]
                       + t.sanitizer_link_args())


def dropin_by_hand(d, spec, where, soname):
    """spec's drop-in generated into d (its functions, variables and hooks)
    and linked with the runtime as where/soname, without Meson."""
    r = lazygen("generate", spec, "--out-c", f"{d}/s.c", "--out-data", f"{d}/v.c", "--out-hooks", f"{d}/h.c")
    t.equal(r.returncode, 0, r.stderr)
    return t.compile_c(f"{where}/{soname}", [f"{d}/s.c", f"{d}/v.c", f"{d}/h.c",
                                            os.path.join(t.SHIMS, "liblzruntime.a"), "-ldl", "-lpthread",
                                            f"-I{t.SOURCE}/src", f"-I{t.BUILD}", "-fvisibility=hidden",
                                            "-D_GNU_SOURCE", f'-DLZ_DROPIN_SONAME="{soname}"',
                                            f"-Wl,-soname,{soname}"] + t.sanitizer_link_args(), shared=True)

@case
def declarations_every_shape_served():
    """decl.h, read after decl_types.h as the spec orders them: a pointer-to-
    function-pointer parameter, functions returning a function pointer and
    a pointer to an array (no typedef), and an unprototyped function called
    first with seven arguments (one on the stack) all give through the shim
    what they give linked directly; decl_internal is excluded and not
    exported; with the library absent each returns its failure value."""
    d = t.workdir("decl_shapes")
    os.makedirs(f"{d}/real")
    real = t.compile_c(f"{d}/real/libdecl.so.1", [f"{DECL}/decl.c"],
                       ["-Wl,-soname,libdecl.so.1", "-w"], shared=True)
    direct = t.compile_c(f"{d}/direct", [f"{DECL}/prog.c", real, f"-I{DECL}", "-w"])
    want = t.run([direct], env={"LD_LIBRARY_PATH": f"{d}/real"}, check_rc=0).stdout
    t.equal(want, "sum 28 swap 11 then -3 pick 42 row 7 box 77\n", "the real library linked directly")
    exe = shim_program(d, f"{DECL}/decl.toml", DECL, f"{DECL}/prog.c")
    got = t.run([exe], env={"LAZYDECL_LIBPATH": real}, check_rc=0).stdout
    t.equal(got, want, "through the shim")
    syms = t.run([os.environ.get("LZ_NM", "nm"), "--defined-only", exe], check_rc=0).stdout.split()
    t.check("decl_sum" in syms and "decl_internal" not in syms,
            "decl_internal is excluded, decl_sum served")
    absent = t.run([exe], env={"LAZYDECL_LIBPATH": f"{d}/nowhere/libdecl.so.1"})
    t.equal((absent.returncode, absent.stdout),
            (0, "sum -1 swap -1 then 4 pick -999 row -999 box -1\n"), "library absent")


@case
def declarations_refused_in_one_run():
    """Functions whose types no code outside the header can spell (an
    unnamed struct) and an exclude entry that names nothing are all listed
    in one error, each with its place; nothing is written."""
    d = t.workdir("decl_refused")
    with open(f"{d}/r.h", "w") as f:
        f.write("int r_a(struct { int x; } *p);\nstruct { int y; } *r_b(void);\nint r_ok(int);\n")
    with open(f"{d}/r.toml", "w") as f:
        f.write(open(f"{DECL}/decl.toml").read()
                .replace('["decl_types.h", "decl.h"]', '["r.h"]')
                .replace('"^decl_"', '"^r_"').replace('["decl_internal"]', '["r_gone"]'))
    r = lazygen("generate", f"{d}/r.toml", "--include-dir", d, "--out-c", f"{d}/out.c")
    t.equal(r.returncode, 1, f"exit status: {r.stderr}")
    t.check("Traceback" not in r.stderr and not os.path.exists(f"{d}/out.c"),
            f"a clean refusal, nothing written: {r.stderr}")
    t.contains(r.stderr, f"lazygen: {d}/r.toml: error: 3 declaration(s) cannot be served "
                         f"(leave them out with 'exclude'):\n  {d}/r.h:1: r_a: uses a type with no name",
               "the first refusal, with its place")
    t.contains(r.stderr, f"\n  {d}/r.h:2: r_b: uses a type with no name", "the second")
    t.contains(r.stderr, "\n  'exclude': r_gone is not a function the headers declare",
               "the unknown exclude entry")


@case
def cxx_header_read_as_cxx():
    """cxxlib.h is C++ (<cstddef>, a namespace, alignas, inline functions)
    around an extern "C" block, as cuSPARSELt's header is: with language =
    "c++" the generator reads it as C++ and serves its five extern "C"
    functions typed in C (an enum as its integer type, pointers to classes as
    void *), not its C++-linkage ones nor its static inline one; a C program
    gets through the shim what it gets linked to the library, and without
    the library the spec's failure values, an enumerator's among them."""
    if not shutil.which("g++"):
        raise t.Skip("no C++ compiler (g++) to build the real library and read <cstddef>")
    d = t.workdir("cxx_header")
    os.makedirs(f"{d}/real")
    r = t.run(["g++", "-shared", "-fPIC", "-o", f"{d}/real/libcxxlib.so.1", f"{CXX}/cxxlib.cpp",
               f"-I{CXX}", "-Wl,-soname,libcxxlib.so.1"], check_rc=0)
    direct = t.compile_c(f"{d}/direct", [f"{CXX}/prog.c", f"{d}/real/libcxxlib.so.1",
                                         f"-Wl,-rpath,{d}/real"] + t.sanitizer_link_args())
    want = t.run([direct], check_rc=0).stdout
    t.equal(want, "init 0 scale 0 3.5 6.0 8.5 name ok apply 37\n", "the real library")
    exe = shim_program(d, f"{CXX}/cxxlib.toml", CXX, f"{CXX}/prog.c")
    t.equal(t.run([exe], env={"LAZYCXXLIB_LIBPATH": f"{d}/real/libcxxlib.so.1"}, check_rc=0).stdout,
            want, "through the shim")
    syms = t.run([os.environ.get("LZ_NM", "nm"), "--defined-only", exe], check_rc=0).stdout.split()
    t.equal(sorted(n for n in syms if n.startswith("cxxlib") or "in_namespace" in n),
            ["cxxlib_apply", "cxxlib_init", "cxxlib_name", "cxxlib_reset", "cxxlib_scale"],
            "the extern \"C\" functions alone")
    r = t.run([exe], env={"LAZYCXXLIB_LIBPATH": f"{d}/nowhere/libcxxlib.so.1"})
    t.equal((r.returncode, r.stdout), (0, "init 7 scale 7 0.0 0.0 0.0 name (null) apply -1\n"),
            "library absent: CXXLIB_NOT_INITIALIZED (7), NULL, -1")


class Built:
    """A fixture library built every way from its spec: the real library (a
    path given, or built from fixture/<id>.c), its shared shim, its static
    shim (an archive: one member per generated file) and its drop-in."""

    def __init__(self, name, fixture, spec, soname, real=None, include=None):
        d = self.d = t.workdir(name)
        for sub in ("real", "dropin"):
            os.makedirs(f"{d}/{sub}")
        self.fixture, self.soname = fixture, soname
        self.include = include or fixture
        self.id = os.path.splitext(os.path.basename(spec))[0]
        if real is None:
            real = t.compile_c(f"{d}/real/{soname}", [f"{fixture}/{self.id}.c", f"-I{fixture}"],
                               [f"-Wl,-soname,{soname}"], shared=True)
        self.real = real
        r = lazygen("generate", spec, "--include-dir", self.include, "--library", self.real,
                    "--out-c", f"{d}/stubs.c", "--out-data", f"{d}/data.c",
                    "--out-hooks", f"{d}/hooks.c", "--out-list", f"{d}/exports.txt")
        t.equal(r.returncode, 0, f"generation: {r.stderr}")
        runtime = os.path.join(t.SHIMS, "liblzruntime.a")
        cflags = [f"-I{self.include}", f"-I{t.SOURCE}/src", f"-I{t.BUILD}", "-fvisibility=hidden",
                  "-fPIC", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror"]
        sources = [f"{d}/{f}.c" for f in ("stubs", "data", "hooks")]
        lib = f"liblazy{self.id}"
        t.compile_c(f"{d}/{lib}.so", sources + [runtime, "-ldl", "-lpthread"],
                    cflags + [f"-Wl,-soname,{lib}.so.0"] + t.sanitizer_link_args(), shared=True)
        os.symlink(f"{lib}.so", f"{d}/{lib}.so.0")
        for f in ("stubs", "data", "hooks"):
            t.compile_c(f"{d}/{f}.o", ["-c", f"{d}/{f}.c"], cflags)
        t.run(["ar", "rcs", f"{d}/{lib}.a"] + [f"{d}/{f}.o" for f in ("stubs", "data", "hooks")],
              check_rc=0)
        t.compile_c(f"{d}/dropin/{soname}", sources + [runtime, "-ldl", "-lpthread"],
                    cflags + [f'-DLZ_DROPIN_SONAME="{soname}"', f"-Wl,-soname,{soname}"]
                    + t.sanitizer_link_args(), shared=True)
        self.runtime = runtime

    def plugin(self, on, real=None):
        """The fixture's plugin_vars.c as a shared object linked to the real
        library ("real"; real: another build of it) or to the shared shim
        ("shim")."""
        real = real or self.real
        link = ([real, f"-Wl,-rpath,{os.path.dirname(real)}"] if on == "real" else
                [f"-L{self.d}", f"-llazy{self.id}", f"-Wl,-rpath,{self.d}"])
        return t.compile_c(f"{self.d}/plugin_on_{on}.so", [f"{self.fixture}/plugin_vars.c",
                                                           f"-I{self.fixture}"] + link,
                           t.sanitizer_link_args(), shared=True)

    def program(self, prog, how, export=True, extra=()):
        """prog_<prog>.c linked to the real library, the shared shim or the
        static one (with the variables exported, as docs/reference/spec.md says,
        unless export is false)."""
        d, src, i = self.d, f"{self.fixture}/prog_{prog}.c", self.id
        link = {"real": [self.real, f"-Wl,-rpath,{os.path.dirname(self.real)}"],
                "shared": [f"-L{d}", f"-llazy{i}", f"-Wl,-rpath,{d}"],
                "static": [f"{d}/liblazy{i}.a", self.runtime, "-ldl", "-lpthread"]
                + ([f"-Wl,--export-dynamic-symbol={i}_*"] if export else [])}[how]
        out = f"{d}/{prog}_{how}{'' if export else '_unexported'}"
        if not os.path.exists(out):
            t.compile_c(out, [src, f"-I{self.include}", "-lpthread"] + list(extra) + link
                        + t.sanitizer_link_args())
        return out

    def env(self, dropin=False, absent=False):
        e = {f"LAZY{self.id.upper()}_LIBPATH":
             f"{self.d}/nowhere/{self.soname}" if absent else self.real, "LAZYNCCL_DEBUG": "1"}
        if dropin:
            e["LD_LIBRARY_PATH"] = f"{self.d}/dropin"
        return e

    def run(self, prog, how, dropin=False, absent=False, export=True, args=()):
        r = t.run([self.program(prog, how, export), self.real, *args], env=self.env(dropin, absent))
        t.equal(r.returncode, 0, f"{prog} ({how}{', drop-in' if dropin else ''}): {r.stderr}")
        return r


def Vars(name):
    return Built(name, VARS, f"{VARS}/vars.toml", "libvars.so.1")


def variables_served(how, dropin=False):
    v = Vars(f"vars_{how}{'_dropin' if dropin else ''}")
    want = {p: t.run([v.program(p, "real"), v.real], check_rc=0).stdout for p in ("data", "hook", "funcs")}
    t.contains(want["data"], "version vars 1.2.3 table 10 40 counter 41\n", "the real library")
    got = {p: v.run(p, how, dropin=dropin) for p in ("data", "hook", "funcs")}
    t.equal(got["data"].stdout, want["data"], "a program using variables: the real library's values "
                                              "from main's first line, its writes seen by the library")
    t.contains(got["data"].stderr, "loading vars before main: its variables are used", "why it loads")
    lazy = {p: want[p].replace("mapped at main 1", "mapped at main 0") for p in ("hook", "funcs")}
    t.equal(got["hook"].stdout, lazy["hook"].replace("hook(5) 15 mapped 0", "hook(5) 15 mapped 1"),
            "a program using a function-pointer variable: lazy, its first call through it loads")
    t.equal(got["funcs"].stdout, lazy["funcs"], "a program using no variable: lazy")
    for p in ("hook", "funcs"):
        t.check("before main" not in got[p].stderr, f"{p}: loaded before main:\n{got[p].stderr}")
    return v


@case
def variables_shared_shim():
    """A program linked to the shared shim that reads the library's variables
    (an incomplete array, an int, a table) sees the real library's values
    at main's first line, and the library sees what it writes; one that
    calls through a function-pointer variable, or uses no variable, maps
    nothing before its first call. With the library absent, the program
    that reads variables stops before main as the dynamic linker would
    (exit 127, its words, the report; variables_absent_stop_before_main),
    and calls, through the trampoline too, return their failure values (the
    spec's for int)."""
    v = variables_served("shared")
    r = v.run("hook", "shared", absent=True)
    t.contains(r.stdout, "hook(5) -1 mapped 0\nhook is the library's 0\nown hook(5) 6\n",
               "a trampoline without its library: the int failure value of the spec")


@case
def variables_static_shim():
    """The same programs linked to the static shim: the variables' member is
    linked, and loads the library before main, only into the program that
    uses a variable; the function pointers' member loads nothing. A program
    that does not export the variables it uses gets the library's values,
    but the library keeps its own copy: the debug log says so and names the
    link option."""
    v = variables_served("static")
    syms = t.run([os.environ.get("LZ_NM", "nm"), v.program("funcs", "static")], check_rc=0).stdout
    t.check(" vars_counter" not in syms and " vars_hook" not in syms,
            "the variables' members are not linked into a program that uses none")
    r = v.run("data", "static", export=False)
    t.contains(r.stdout, "library sees counter 41 dir (unset)", "not exported: the library's own copy")
    t.contains(r.stderr, "lazyvars: vars_counter is not exported by the program, so the library "
                         "keeps its own copy and does not see the program's writes: link with "
                         "-Wl,--export-dynamic-symbol=vars_counter", "the log says why and what to do")


@case
def variables_dropin():
    """Programs linked to the real libvars.so.1, run on the drop-in: the
    same answers as on the real library; only the one using variables loads
    before main. The drop-in also defines vars_extra, a variable no header
    declares, with the real size."""
    v = variables_served("real", dropin=True)
    out = t.run(["readelf", "-W", "--dyn-syms", f"{v.d}/dropin/libvars.so.1"], check_rc=0).stdout
    t.check(re.search(r" 24 OBJECT +GLOBAL +DEFAULT +\d+ vars_extra$", out, re.M),
            f"vars_extra, 24 bytes:\n{out}")


@case
def variables_absent_stop_before_main():
    """A program that reads the library's variables, with the library
    absent (its override naming no file): through the shared shim, the
    static shim and the drop-in, the process stops before main with exit
    127, the dynamic linker's words naming libvars.so.1 and the report,
    and prints nothing: no variable is read as a value the library never
    gave it. A program using none of them starts, as before."""
    v = Vars("vars_absent")
    for how, dropin in (("shared", False), ("static", False), ("real", True)):
        r = t.run([v.program("data", how), v.real], env=v.env(dropin=dropin, absent=True))
        what = f"{how}{', drop-in' if dropin else ''}"
        t.equal((r.returncode, r.stdout), (127, ""), f"{what}: {r.stderr[-600:]}")
        t.contains(r.stderr, "lazyvars: vars cannot be loaded, and its variables are used (",
                   f"{what}: the head")
        t.contains(r.stderr, "stopping, as the dynamic linker would have at start (error while "
                             "loading shared libraries: libvars.so.1)", f"{what}: the words")
        t.contains(r.stderr, f"{v.d}/nowhere/libvars.so.1", f"{what}: the report names the override")
        r = t.run([v.program("funcs", how), v.real], env=v.env(dropin=dropin, absent=True))
        t.equal(r.returncode, 0, f"{what}: a program using no variable starts: {r.stderr[-600:]}")


@case
def variables_of_a_plugin_loaded_later():
    """A program linked to the shared shim that uses no variable starts
    without the library, then dlopens a plugin linked to the real library,
    whose dependency loads it: the plugin reads the real library's values
    before any call (not the shim's zeros), its write is the one the library
    sees, and a later dlsym of a variable answers the library's value; the
    output equals the program's linked to the real library."""
    v = Vars("vars_plugin")
    plugin = v.plugin("real")
    want = t.run([v.program("plugin", "real"), v.real, plugin], check_rc=0).stdout
    t.contains(want, "plugin reads version vars 1.2.3 table 10 40 counter 41\n"
                     "plugin wrote 7, library sees counter 7\n", "the real library")
    r = v.run("plugin", "shared", args=(plugin,))
    t.equal(r.stdout, want.replace("mapped at main 1", "mapped at main 0"),
            "through the shim: the plugin's variables are the library's")
    t.contains(r.stderr, "7 of vars's 7 variables take, when an object loaded later uses one, the "
                         "value of a copy of the library loaded by then", "the log says why")


@case
def variables_of_a_plugin_with_the_library_absent():
    """A program that uses no variable starts without the library, then
    dlopens a plugin that binds the variables: linked to the shared shim
    (the program too), or to libvars.so.1 with the drop-in standing in.
    With the library absent (its override naming no file), the process
    stops while the plugin is bound: exit 127, the dynamic linker's words
    naming libvars.so.1, the variable and the search's report, and the
    plugin never reads a value the library never gave. With the library
    there, not loaded, the plugin reads the values of the file the first
    call then loads (not the shim's zeros), and the program goes on. A chooser set
    changes nothing while the override, which wins over it, is set."""
    v = Vars("vars_plugin_absent")
    on_shim, on_real = v.plugin("shim"), v.plugin("real")
    for how, plugin, dropin in (("shared", on_shim, False), ("real", on_real, True)):
        exe = v.program("plugin", how)
        what = "the drop-in" if dropin else "the shared shim"
        r = t.run([exe, v.real, plugin], env=v.env(dropin=dropin, absent=True))
        t.equal(r.returncode, 127, f"{what}: exit status\n{r.stdout}{r.stderr[-800:]}")
        t.check("plugin reads" not in r.stdout, f"{what}: the plugin read nothing: {r.stdout}")
        t.contains(r.stderr, "lazyvars: vars cannot be loaded, and its variables are used (vars_",
                   f"{what}: the head")
        t.contains(r.stderr, ", bound after start: by an object loaded later, or dlsym): stopping, as "
                             "the dynamic linker would have at start (error while loading shared "
                             "libraries: libvars.so.1)", f"{what}: the words")
        t.contains(r.stderr, f"{v.d}/nowhere/libvars.so.1", f"{what}: the report names the override")
        # A chooser set too: the override, set, wins over it (the search
        # never reaches it), so the process stops all the same.
        r = t.run([exe, v.real, plugin, "chooser"], env=v.env(dropin=dropin, absent=True))
        t.equal(r.returncode, 127, f"{what}, a chooser set: exit status\n{r.stdout}{r.stderr[-800:]}")
        t.check("plugin reads" not in r.stdout, f"{what}, a chooser set: the plugin read nothing")
        # The library there but not loaded: the plugin reads, before any
        # call, the values of the file the first call then loads (the
        # resolver reads them from it), not the shim's zeros.
        r = t.run([exe, v.real, plugin], env=v.env(dropin=dropin))
        t.equal(r.returncode, 0, f"{what}, the library there: {r.stderr[-800:]}")
        t.contains(r.stdout, "plugin reads version vars 1.2.3 table 10 40 counter 41\n"
                             "plugin wrote 7, library sees counter 7\n", f"{what}, the library there")
    # The override names no file, but the plugin's own dependency maps a
    # copy (whose relocations bind the shim's variables too): no stop, and
    # the plugin reads that copy's values.
    r = t.run([v.program("plugin", "shared"), v.real, on_real], env=v.env(absent=True))
    t.equal(r.returncode, 0, f"a copy mapped by the plugin's dependency: {r.stderr[-800:]}")
    t.contains(r.stdout, "plugin reads version vars 1.2.3 table 10 40 counter 41\n",
               "a copy mapped by the plugin's dependency: its values")


@case
def variables_of_a_plugin_search_once():
    """A plugin binding several variables of a library present but not
    loaded: one search for them all, while the loaded objects and the
    override stay the same, and the values are the file's. The search's
    probe reads the file and maps nothing of it (a variable's value is read
    from the file mapped, and so is the load): once for the plugin's four
    variables (four times when each searched), once for the first call,
    which loads it."""
    if not shutil.which("strace"):
        raise t.Skip("strace is not installed")
    v = Vars("vars_plugin_once")
    plugin = v.plugin("shim")
    log = os.path.join(v.d, "strace.txt")
    env = v.env()
    if t.SANITIZE not in ("", "none"):
        env["ASAN_OPTIONS"] = "detect_leaks=0"  # LeakSanitizer refuses to run under ptrace
    r = t.run(["strace", "-f", "-qq", "-y", "-e", "trace=openat,mmap,close", "-o", log,
               v.program("plugin", "shared"), v.real, plugin], env=env)
    t.equal(r.returncode, 0, f"the plugin's program: {r.stderr[-800:]}")
    t.contains(r.stdout, "plugin reads version vars 1.2.3 table 10 40 counter 41\n", "the file's values")
    real = re.escape(os.path.realpath(v.real))
    mapped, probes = {}, 0  # each descriptor open on the file: whether it was mapped
    with open(log) as f:
        for line in f:
            if m := re.search(rf'openat\(.*"{real}".* = (\d+)<', line):
                mapped[m.group(1)] = False
            elif (m := re.search(rf"mmap\(.*, (\d+)<{real}>", line)) and m.group(1) in mapped:
                mapped[m.group(1)] = True
            elif (m := re.search(rf"close\((\d+)<{real}>", line)) and m.group(1) in mapped:
                probes += not mapped.pop(m.group(1))
    t.equal(probes, 2, "the searches' probes of the file (the variables', the first call's)")


@case
def a_later_requester_where_the_first_finds_none():
    """Two plugins linked to the shim, opened one after the other: the
    first's DT_RUNPATH names a directory without the library, the second's
    DT_RPATH the library's. ld.so would have refused to load the first;
    laziness loaded it, and ld.so's search for it finds nothing, so the run
    paths of the objects needing the library after it come last: both
    plugins' calls reach the library (its counter, 41), not the failure
    value."""
    v = Vars("vars_later_requester")
    empty = os.path.join(v.d, "empty")
    os.makedirs(empty, exist_ok=True)
    src = os.path.join(v.d, "counter.c")
    with open(src, "w") as f:
        f.write("int vars_get_counter(void);\nint plugin_counter(void) { return vars_get_counter(); }\n")
    exe = t.dlopen_host(v.d, "plugin_counter", t.sanitizer_link_args())
    plugins = [t.compile_c(os.path.join(v.d, f"{name}.so"), [src, f"-L{v.d}", f"-llazy{v.id}", f"-Wl,{dtags}",
                                                              f"-Wl,-rpath,{v.d}:{where}"],
                           t.sanitizer_link_args(), shared=True)
               for name, dtags, where in (("first", "--enable-new-dtags", empty),
                                          ("second", "--disable-new-dtags", os.path.dirname(v.real)))]
    r = t.run([exe, *plugins], env={"LAZYNCCL_DEBUG": "1"})
    t.equal((r.returncode, r.stdout), (0, "version 41\nversion 41\n"), f"each plugin's call\n{r.stderr[-1500:]}")


@case
def variables_kept_file_replaced_by_a_fifo():
    """A plugin binds a variable (the search's file kept), then the file is
    replaced by a FIFO, and dlsym binds another: the resolver, which holds
    the dynamic linker's lock, does not wait on the FIFO; the kept file
    gone, it searches again, which refuses the FIFO, and the process stops
    as with the library absent (exit 127, the reason said)."""
    v = Vars("vars_kept_fifo")
    lib = os.path.join(v.d, "copy", "libvars.so.1")
    os.makedirs(os.path.dirname(lib), exist_ok=True)
    shutil.copy(v.real, lib)
    plug = os.path.join(v.d, "one.c")
    with open(plug, "w") as f:
        f.write("extern int vars_counter;\nint one_counter(void) { return vars_counter; }\n")
    one = t.compile_c(os.path.join(v.d, "one.so"), [plug, f"-L{v.d}", f"-llazy{v.id}", f"-Wl,-rpath,{v.d}"],
                      t.sanitizer_link_args(), shared=True)
    host = os.path.join(v.d, "swap.c")
    with open(host, "w") as f:
        f.write("#include <dlfcn.h>\n#include <stdio.h>\n#include <sys/stat.h>\n#include <unistd.h>\n"
                "int main(int c, char **v) { (void)c; void *h = dlopen(v[1], RTLD_NOW);\n"
                "  int (*f)(void) = h ? (int (*)(void))dlsym(h, \"one_counter\") : 0;\n"
                "  if (!f) return 1;\n  printf(\"counter %d\\n\", f()); fflush(stdout);\n"
                "  unlink(v[2]); mkfifo(v[2], 0600);\n"
                "  int *t = dlsym(RTLD_DEFAULT, \"vars_table\");\n"
                "  printf(\"table %d\\n\", t ? t[0] : -1); return 0; }\n")
    exe = t.compile_c(os.path.join(v.d, "host"), [host, "-Wl,--no-as-needed", f"-L{v.d}", f"-llazy{v.id}",
                                                  f"-Wl,-rpath,{v.d}", "-ldl"], t.sanitizer_link_args())
    r = t.run(["timeout", "20", exe, one, lib], env={"LAZYVARS_LIBPATH": lib})
    t.equal((r.returncode, r.stdout), (127, "counter 41\n"), f"the second binding\n{r.stderr[-1500:]}")
    t.contains(r.stderr, f"{lib}: rejected: not a regular file", "the search again, which says why")


@case
def variables_bound_inside_the_linker_call_no_program_code():
    """A plugin binding a variable makes the shim search inside the dynamic
    linker, its lock held. The program's log callback takes a mutex that
    another thread holds while it dlopens a library: the search calls no
    program code (neither the callback nor the chooser), so neither thread
    waits for good. With the library there (the override naming it) the
    program ends; with it absent, it stops with exit 127; with a chooser
    set too, the same."""
    v = Vars("vars_plugin_callback")
    plugin = v.plugin("shim")
    exe = v.program("plugin_callback", "shared", extra=["-ldl", "-Wl,--no-as-needed"])
    for chooser in ((), ("chooser",)):
        what = "a chooser set" if chooser else "no chooser"
        r = t.run([exe, v.real, plugin, *chooser], env=v.env(), timeout=60)
        t.equal(r.returncode, 0, f"the library there, {what}: {r.stdout}{r.stderr[-800:]}")
        t.contains(r.stdout, "done\n", f"the library there, {what}")
        r = t.run([exe, v.real, plugin, *chooser], env=v.env(absent=True), timeout=60)
        t.equal(r.returncode, 127, f"the library absent, {what}: {r.stdout}{r.stderr[-800:]}")
        t.check("plugin reads" not in r.stdout, f"the library absent, {what}: the plugin read nothing")


@case
def variables_of_a_plugin_closed_before_any_call():
    """The plugin only reads and writes the variables, no call, and is
    closed before the program's first call, unmapping the copy of the
    library its dependency loaded; an object loaded at start reads a
    variable without needing the library (underlinked). Through the shared
    shim, with the override naming that copy, another one, or first a copy
    that fails once loaded: the plugin read the library's values, the
    underlinked object, a pointer from dlsym held across the dlclose and
    the library loaded later all see the plugin's write and then the
    program's write of 0 (never filled again), a pointer into the
    library's own data (vars_name, which a relocation writes) is the loaded
    library's, never the closed copy's, and the output equals the
    program's linked to the real library."""
    v = Vars("vars_plugin_close")
    plugin = v.plugin("real")
    use = t.compile_c(f"{v.d}/libuse_vars.so", [f"{VARS}/use_vars.c"],
                      ["-Wl,--allow-shlib-undefined"] + t.sanitizer_link_args(), shared=True)
    extra = [use, f"-Wl,-rpath,{v.d}", "-Wl,--allow-shlib-undefined"]
    want = t.run([v.program("plugin_close", "real", extra=extra), v.real, plugin], check_rc=0).stdout
    t.equal(want, "mapped at main 1\nplugin peeks version vars 1.2.3 table 10 40 counter 41\n"
                  "libuse reads 7, dlsym reads 7\nafter writing 0, dlsym reads 0\n"
                  "after dlclose dlsym reads 0\nbump 1 get 1 libuse reads 1\nname libvars\n",
            "the real library")
    os.makedirs(f"{v.d}/copy2")
    shutil.copy(v.real, f"{v.d}/copy2/libvars.so.1")
    # A copy the search tries first and that fails once loaded (a data
    # symbol nothing defines): its values must not stay behind.
    os.makedirs(f"{v.d}/bad")
    with open(f"{v.d}/bad/missing.c", "w") as f:
        f.write("extern int vars_nowhere;\nint *vars_needs_nowhere = &vars_nowhere;\n"
                "extern const char *vars_name;\nconst char *vars_bad_name(void) { return vars_name; }\n")
    bad = t.compile_c(f"{v.d}/bad/libvars.so.1", [f"{VARS}/vars.c", f"{v.d}/bad/missing.c",
                                                  f"-I{VARS}"], ["-Wl,-soname,libvars.so.1"],
                      shared=True)
    exe = v.program("plugin_close", "shared", extra=extra)
    for libpath in (v.real, f"{v.d}/copy2/libvars.so.1", f"{bad}:{v.real}"):
        r = t.run([exe, v.real, plugin], env={"LAZYVARS_LIBPATH": libpath})
        t.equal((r.returncode, r.stdout), (0, want.replace("mapped at main 1", "mapped at main 0")),
                f"through the shim, the override naming {libpath}: {r.stderr[-600:]}")


@case
def variables_of_a_plugin_set_by_the_librarys_constructor():
    """The real library binds its own references to its own variables
    (-Bsymbolic) and its constructor sets one (vars_extra[2], 9 in the
    file, 10 once constructed); a plugin linked to it is dlopened by a
    program linked to the shared shim, before any call: the value filled
    from the file when the plugin bound is taken for unwritten, so the load
    of the first call replaces it with the constructed one, as plain
    reads."""
    v = Vars("vars_plugin_symbolic")
    os.makedirs(f"{v.d}/symbolic")
    with open(f"{v.d}/symbolic/ctor.c", "w") as f:
        f.write("extern long vars_extra[3];\n"
                "__attribute__((constructor)) static void vars_construct(void) { vars_extra[2] = 10; }\n")
    real = t.compile_c(f"{v.d}/symbolic/libvars.so.1", [f"{VARS}/vars.c", f"{v.d}/symbolic/ctor.c",
                                                       f"-I{VARS}"],
                       ["-Wl,-soname,libvars.so.1", "-Wl,-Bsymbolic"], shared=True)
    plugin = v.plugin("real", real)
    plain = t.compile_c(f"{v.d}/symbolic_plain", [f"{VARS}/prog_plugin_symbolic.c", f"-I{VARS}", real,
                                                  f"-Wl,-rpath,{v.d}/symbolic"] + t.sanitizer_link_args())
    want = t.run([plain, real, plugin], check_rc=0).stdout
    t.equal(want, "triple(2) 6\nplugin reads extra 10\n", "the real library")
    r = t.run([v.program("plugin_symbolic", "shared"), real, plugin],
              env={"LAZYVARS_LIBPATH": real})
    t.equal((r.returncode, r.stdout), (0, want), f"through the shim: {r.stderr[-600:]}")


GMP = os.path.join(t.SOURCE, "tests", "fixtures", "gmp")
RACE = os.path.join(t.SOURCE, "tests", "fixtures", "race")
# A sanitizer build runs each program several times slower, and TSan sees a
# race in one run that the default build needs many runs to hit: a quarter
# of the runs there keeps every case inside its time limit.
RACE_RUNS = 100 if t.SANITIZE in ("", "none") else 25


def gmp_built(name):
    """GMP (Debian's libgmp-dev) behind its fixture spec: a real library whose
    functions read the variables it exports."""
    real = "/usr/lib/x86_64-linux-gnu/libgmp.so.10"
    include = "/usr/include/x86_64-linux-gnu"
    if t.HOST_CPU != "x86_64" or not os.path.exists(f"{include}/gmp.h") or not os.path.exists(real):
        raise t.Skip("no x86-64 gmp.h and libgmp.so.10 (Debian's libgmp-dev)")
    return Built(name, GMP, f"{GMP}/gmp.toml", "libgmp.so.10", real=real, include=include)


def first_calls_at_once(b, how, dropin=False, threads=(16, 64), fork=False):
    """prog_race (tests/fixtures/race/race.h) RACE_RUNS times per thread
    count: every run exits 0 with every answer right. Counts the runs that
    crashed or answered wrong, with the first one's output."""
    exe = b.program("race", how)
    env = b.env(dropin)
    env.pop("LAZYNCCL_DEBUG")
    for n in threads:
        bad, first = 0, None
        for _ in range(RACE_RUNS):
            # A run that hangs fails the case with its threads' stacks,
            # inside the case's time limit.
            r = t.run([exe, b.real, str(n)] + (["fork"] if fork else []), env=env, timeout=90)
            want = f"{n} threads, {4 if fork else 0} children: 0 wrong\n"
            if r.returncode != 0 or r.stdout != want:
                bad += 1
                first = first or f"rc {r.returncode}: {r.stdout}{r.stderr[-800:]}"
        t.equal(bad, 0, f"{n} threads' first calls at once ({how}{', drop-in' if dropin else ''}"
                        f"{', forking' if fork else ''}): {bad} of {RACE_RUNS} runs crashed or "
                        f"answered wrong; the first: {first}")


@case
def first_calls_at_once_read_filled_variables_shared():
    """16 and 64 threads make their first calls at once, RACE_RUNS runs each,
    through the shared shim, into a function of the library that reads the
    library's own variables (a table, a string, an allocation function
    pointer no header declares): no crash, no wrong answer. The load is
    published only once the variables hold the library's values."""
    first_calls_at_once(Vars("race_vars_shared"), "shared")


@case
def first_calls_at_once_read_filled_variables_static():
    """The same through the static shim (the program exports the
    variables, as docs/reference/spec.md says)."""
    first_calls_at_once(Vars("race_vars_static"), "static")


@case
def first_calls_at_once_read_filled_variables_dropin():
    """The same through the drop-in, under a program linked to the real
    library."""
    first_calls_at_once(Vars("race_vars_dropin"), "real", dropin=True)


@case
def first_calls_at_once_with_fork():
    """16 threads' first calls at once while the main thread forks four
    children that call the library too, RACE_RUNS runs, through the shared shim and
    the drop-in: every child's answer is right (a child forked during the
    filling finishes it)."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer's allocator deadlocks a child forked while other threads "
                     "allocate (its own lock, held at fork); the default build runs it")
    v = Vars("race_vars_fork")
    first_calls_at_once(v, "shared", threads=(16,), fork=True)
    first_calls_at_once(v, "real", dropin=True, threads=(16,), fork=True)


@case
def gmp_absent_stops_as_the_linker_would():
    """GMP absent, through its shared shim and its drop-in: the first call
    (mpz_init, which returns nothing and cannot fail) stops the process with
    exit 127 and the dynamic linker's words naming libgmp.so.10, as a program
    linked -lgmp stops at start; nothing is printed from made-up values."""
    b = gmp_built("gmp_absent")
    plain = t.run([b.program("race", "real"), b.real, "4"],
                  env={"LD_LIBRARY_PATH": os.path.join(b.d, "nowhere")})
    t.equal(plain.returncode, 0, "plain, with GMP installed")
    for how, dropin in (("shared", False), ("real", True)):
        r = t.run([b.program("race", how), b.real, "4"], env=b.env(dropin=dropin, absent=True))
        t.equal((r.returncode, r.stdout), (127, ""), f"{how}: {r.stderr[-600:]}")
        t.contains(r.stderr, "error while loading shared libraries: libgmp.so.10", f"{how}: the words")


@case
def gmp_first_calls_at_once_shared():
    """GMP, a real library that allocates through function pointers and
    reads digit tables it exports: 16 and 64 threads' first calls at once,
    RACE_RUNS runs each, through the shared shim; every answer that of GMP loaded."""
    first_calls_at_once(gmp_built("race_gmp_shared"), "shared")


@case
def gmp_first_calls_at_once_static():
    """The same through the static shim."""
    first_calls_at_once(gmp_built("race_gmp_static"), "static")


@case
def gmp_first_calls_at_once_dropin():
    """The same through GMP's drop-in, under a program linked to GMP."""
    first_calls_at_once(gmp_built("race_gmp_dropin"), "real", dropin=True)


def dynamic_definitions(path):
    """[(name, kind, size, version)] of what path's dynamic symbol table
    defines: functions and variables, the runtime's own names left out."""
    out = t.run(["readelf", "-W", "--dyn-syms", path], check_rc=0).stdout
    defs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or f[3] not in ("FUNC", "OBJECT") or f[6] in ("UND", "ABS"):
            continue
        name, _, version = f[7].partition("@")
        if name.startswith(("lazy", "lz_")) or f[4] != "GLOBAL":
            continue
        defs.append((name, f[3], int(f[2], 0), version.lstrip("@")))
    return defs


def stock_specs_with_variables():
    """{id: (spec path, its drop-ins' paths)} of every stock spec
    (stubs/*.toml) built here whose drop-in defines a variable."""
    lazy = [sys.executable, GEN]
    found = {}
    for spec in t.run(lazy + ["list-specs", os.path.join(t.SOURCE, "stubs")], check_rc=0).stdout.split():
        desc = dict(line.split("\t", 1) for line in
                    t.run(lazy + ["describe", spec], check_rc=0).stdout.splitlines() if "\t" in line)
        dropins = [os.path.join(t.SHIMS, "dropin", so) for so in desc["sonames"].split()]
        dropins = [p for p in dropins if os.path.exists(p)]
        if any(kind == "OBJECT" for p in dropins for _, kind, _, _ in dynamic_definitions(p)):
            found[desc["id"]] = (spec, dropins)
    return found


def stock_stand_in(d, dropin):
    """A library standing in for the real one behind dropin (the same
    SONAME, names, sizes and versions): each variable full of 0x5a, and each
    function answering how many bytes of the variables, read as the library
    reads its own (through the GOT), are not 0x5a."""
    defs = dynamic_definitions(dropin)
    soname = os.path.basename(dropin)
    src = ["/* generated by tests/test_libraries.py: a stand-in for " + soname + " */"]
    variables = [(n, size) for n, kind, size, _ in defs if kind == "OBJECT" and size > 0]
    for i, (n, size) in enumerate(variables):
        src.append(f'__attribute__((aligned(16))) unsigned char v{i}[{size}] __asm__("{n}") = '
                   f"{{[0 ... {size - 1}] = 0x5a}};")
    src.append("static unsigned char *const vars[] = {" + ", ".join(f"v{i}" for i in range(len(variables)))
               + "};")
    src.append("static const unsigned long sizes[] = {" + ", ".join(str(s) for _, s in variables) + "};")
    src.append("static long check(void) { long bad = 0; for (unsigned i = 0; i < sizeof sizes / "
               "sizeof sizes[0]; i++) for (unsigned long b = 0; b < sizes[i]; b++) bad += "
               "((volatile unsigned char *)vars[i])[b] != 0x5a; return bad; }")
    for i, (n, kind, _, _) in enumerate(defs):
        if kind == "FUNC":
            src.append(f'long f{i}(void) __asm__("{n}"); long f{i}(void) {{ return check(); }}')
    c = os.path.join(d, "standin.c")
    with open(c, "w") as f:
        f.write("\n".join(src) + "\n")
    args = [f"-Wl,-soname,{soname}"]
    vmap = os.path.join(os.path.dirname(dropin), soname.replace(".", "_") + ".map")
    if any(v for _, _, _, v in defs) and os.path.exists(vmap):
        args.append(f"-Wl,--version-script={vmap}")
    os.makedirs(os.path.join(d, "real"), exist_ok=True)
    return t.compile_c(os.path.join(d, "real", soname), [c], args, shared=True), defs


def stock_variables_filled_first(mode):
    """For every stock spec whose drop-in defines variables: 16 and 64
    threads' first calls at once, RACE_RUNS runs each, through its drop-in
    (mode "dropin") or its shared shim ("shared") in front of a stand-in
    library; every call finds the variables holding the library's values."""
    specs = stock_specs_with_variables()
    if not specs:
        raise t.Skip("no stock spec with variables is built here")
    for sid, (spec, dropins) in sorted(specs.items()):
        d = t.workdir(f"stock_vars_{mode}_{sid}")
        with open(spec, "rb") as f:
            required = tomllib.load(f)["library"].get("required", [])
        for dropin in dropins:
            real, defs = stock_stand_in(d, dropin)
            funcs = [n for n, kind, _, _ in defs if kind == "FUNC"]
            fn = next((n for n in required if n in funcs), funcs[0])
            link = ([real, f"-Wl,-rpath,{os.path.dirname(real)}"] if mode == "dropin"
                    else [t.shim(sid), f"-Wl,-rpath,{t.SHIMS}"])
            exe = t.compile_c(os.path.join(d, f"race_{os.path.basename(dropin)}"),
                              [os.path.join(RACE, "prog_stock.c"), f'-DSTOCK_FN="{fn}"', "-lpthread"]
                              + link + t.sanitizer_link_args())
            env = {f"LAZY{sid.upper()}_LIBPATH": real}
            if mode == "dropin":
                env["LD_LIBRARY_PATH"] = os.path.dirname(dropin)
            for n in (16, 64):
                bad, first = 0, None
                for _ in range(RACE_RUNS):
                    r = t.run([exe, real, str(n)], env=env)
                    if r.returncode != 0 or r.stdout != f"{n} threads, 0 children: 0 wrong\n":
                        bad += 1
                        first = first or f"rc {r.returncode}: {r.stdout}{r.stderr[-800:]}"
                t.equal(bad, 0, f"{sid} ({os.path.basename(dropin)}, {mode}), {n} threads through "
                                f"{fn}: {bad} of {RACE_RUNS} runs crashed or read unfilled "
                                f"variables; the first: {first}")
        print(f"{sid}: {len([x for x in defs if x[1] == 'OBJECT'])} variables, {fn}, {mode}: "
              f"{2 * RACE_RUNS} runs right")


@case
def stock_libraries_with_variables_dropin():
    """Every stock spec that exports variables (listed from the specs: a new
    one is covered without an edit): 16 and 64 threads' first calls at once
    through its drop-in, in front of a stand-in library with its names,
    sizes and versions, find every variable holding the library's value."""
    stock_variables_filled_first("dropin")


@case
def stock_libraries_with_variables_shared():
    """The same through each such spec's shared shim."""
    stock_variables_filled_first("shared")


def need_sqlite():
    if not os.path.exists(t.shim("sqlite")) or not os.path.exists("/usr/bin/sqlite3"):
        raise t.Skip("liblazysqlite or the sqlite3 program is missing (libsqlite3-dev, sqlite3)")


def plain_programs_on_dropins():
    """Debian's own programs are not built with the sanitizer this build's
    drop-ins are: its runtime would have to come first."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip(f"the drop-ins are built with -fsanitize={t.SANITIZE}, Debian's programs "
                     f"without it; the default build runs this")


@case
def sqlite_program_as_with_the_library():
    """A program linked to the SQLite shim (tests/specs/sqlite.toml) reads
    sqlite3_version and sqlite3_temp_directory before any call and writes
    the latter, then queries: its output is the one linked to -lsqlite3
    (the library sees the directory written), and the log says SQLite was
    loaded before main because the program uses its variables. Without
    SQLite it stops before main, as linked -lsqlite3 (exit 127)."""
    need_sqlite()
    d = t.workdir("sqlite_program")
    src = os.path.join(t.PROGS, "sqlite_client.c")
    shim = t.compile_c(f"{d}/client_shim", [src] + t.link_shim_args("sqlite"))
    direct = t.compile_c(f"{d}/client_direct", [src, "-lsqlite3"] + t.sanitizer_link_args())
    want = t.run([direct, d], check_rc=0).stdout
    t.contains(want, f"{d}\n43|3\nexec rc 0", "the library reads the directory written")
    r = t.run([shim, d], env={"LAZYNCCL_DEBUG": "1"}, check_rc=0)
    t.equal(r.stdout, want, "through the shim")
    t.contains(r.stderr, "lazysqlite: loading SQLite before main: its variables are used (the "
                         "program)", "why SQLite was loaded before main")
    r = t.run([shim, d], env={"LAZYSQLITE_LIBPATH": f"{d}/nowhere/libsqlite3.so.0"})
    t.equal((r.returncode, r.stdout), (127, ""), "SQLite absent: no variable read as made up")
    t.contains(r.stderr, "lazysqlite: SQLite cannot be loaded, and its variables are used (the "
                         "program): stopping, as the dynamic linker would have at start (error "
                         "while loading shared libraries: libsqlite3.so.0)", "SQLite absent")


@case
def sqlite_version_function_returns_a_number():
    """SQLite's version function returns a number (sqlite3_libversion_number):
    lazynccl-info --load cuts it with version_code into the version the
    sqlite3 program prints, the number beside it."""
    need_sqlite()
    r = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--load", "sqlite"], check_rc=0)
    version = t.run(["/usr/bin/sqlite3", "--version"], check_rc=0).stdout.split()[0]
    major, minor, patch = (int(x) for x in version.split("."))
    t.contains(r.stdout, f"version {version} ({major * 1000000 + minor * 1000 + patch})",
               "the loaded version")


@case
def generation_names_the_variables_that_load_before_main():
    """Generation says which variables cannot wait for a call (all of
    SQLite's but none a function pointer), naming them."""
    if not os.path.exists("/usr/include/sqlite3.h"):
        raise t.Skip("no sqlite3.h (libsqlite3-dev)")
    d = t.workdir("gen_variables_note")
    r = lazygen("generate", os.path.join(t.SOURCE, "tests", "specs", "sqlite.toml"),
                "--library", "/lib/x86_64-linux-gnu/libsqlite3.so.0", "--out-c", f"{d}/s.c",
                "--out-data", f"{d}/d.c", "--out-hooks", f"{d}/h.c")
    t.equal(r.returncode, 0, r.stderr)
    t.check(re.search(r"note: \d+ variable\(s\) are read without a call, so a process that uses "
                      r"one loads SQLite before main: sqlite3_version, sqlite3_temp_directory, "
                      r"sqlite3_data_directory, ", t.flat(r.stderr)), f"the note:\n{r.stderr}")
    long_lines = [l for l in r.stderr.splitlines() if len(l) > 100 and " " in l.strip()]
    t.equal(long_lines, [], "the notes wrap at 100 columns")


@case
def sqlite_cli_on_the_dropin():
    """Debian's own sqlite3 program, linked to the real libsqlite3.so.0, runs
    on the drop-in: the same output, SQLite loaded at its first call (the
    program uses none of its variables), found behind the drop-in. The
    drop-in defines every variable the real file exports, with its size."""
    need_sqlite()
    plain_programs_on_dropins()
    sql = "select sqlite_version(), 6*7; select hex(zeroblob(3)), typeof(1.5), upper('lazy');"
    want = t.run(["/usr/bin/sqlite3", ":memory:", sql], check_rc=0).stdout
    r = t.run(["/usr/bin/sqlite3", ":memory:", sql], check_rc=0,
              env={"LD_LIBRARY_PATH": os.path.join(t.SHIMS, "dropin"), "LAZYNCCL_DEBUG": "1"})
    t.equal(r.stdout, want, "sqlite3 on the drop-in")
    t.check("before main" not in r.stderr, f"loaded before main:\n{r.stderr}")
    t.contains(r.stderr, "libsqlite3.so.0: rejected: this shim itself (a drop-in)", "the drop-in stepped over")

    def objects(path):
        out = t.run(["readelf", "-W", "--dyn-syms", path], check_rc=0).stdout
        return {f[7].split("@")[0]: f[2] for f in (line.split() for line in out.splitlines())
                if len(f) >= 8 and f[3] == "OBJECT" and f[6] not in ("UND", "ABS")}
    real = "/lib/x86_64-linux-gnu/libsqlite3.so.0"
    t.equal(objects(os.path.join(t.SHIMS, "dropin", "libsqlite3.so.0")), objects(real),
            f"the variables of the drop-in and of {real}, with their sizes")


def need_crypto():
    if not os.path.exists(t.shim("crypto")) or not os.path.exists("/usr/bin/openssl"):
        raise t.Skip("liblazycrypto or the openssl program is missing (libssl-dev, openssl)")


@case
def crypto_program_as_with_the_library():
    """A program linked to the libcrypto shim (tests/specs/crypto.toml) gets
    what -lcrypto gives, through a function returning a function pointer
    and one taking pointers to function pointers; without libcrypto, the
    failure values (NULL, 0) and exit 1."""
    need_crypto()
    d = t.workdir("crypto_program")
    src, quiet = os.path.join(t.PROGS, "crypto_client.c"), "-Wno-deprecated-declarations"
    shim = t.compile_c(f"{d}/client_shim", [src, quiet] + t.link_shim_args("crypto"))
    direct = t.compile_c(f"{d}/client_direct", [src, quiet, "-lcrypto"] + t.sanitizer_link_args())
    want = t.run([direct], check_rc=0).stdout
    t.contains(want, "the method's write is ours 1\ndefault keygen set 1\n", "-lcrypto")
    t.equal(t.run([shim], check_rc=0).stdout, want, "through the shim")
    r = t.run([shim], env={"LAZYCRYPTO_LIBPATH": f"{d}/nowhere/libcrypto.so.3"})
    t.equal((r.returncode, r.stdout), (1, "version (null)\nEVP_Digest failed\n"), "libcrypto absent")


@case
def crypto_openssl_on_the_dropin():
    """Debian's openssl program (linked to libssl.so.3 and libcrypto.so.3)
    runs on the libcrypto drop-in: digests, a password-based encryption with
    a fixed salt, a key generation and its version give the output they give
    on the real library, found behind the drop-in. Without libcrypto it
    prints the shim's one line (say_unavailable) and exits 1."""
    need_crypto()
    plain_programs_on_dropins()
    d = t.workdir("crypto_cli")
    with open(f"{d}/in.txt", "w") as f:
        f.write("lazy loading\n")
    env = {"LD_LIBRARY_PATH": os.path.join(t.SHIMS, "dropin"), "LAZYNCCL_DEBUG": "1"}
    for cmd in (["version", "-v"], ["dgst", "-sha256", "-sha512", f"{d}/in.txt"],
                ["enc", "-aes-256-cbc", "-pbkdf2", "-k", "secret", "-S", "0011223344556677",
                 "-in", f"{d}/in.txt", "-a"],
                ["genpkey", "-algorithm", "ed25519", "-out", f"{d}/key.pem"]):
        want = t.run(["/usr/bin/openssl"] + cmd, check_rc=0).stdout
        r = t.run(["/usr/bin/openssl"] + cmd, env=env, check_rc=0)
        t.equal(r.stdout, want, f"openssl {' '.join(cmd)} on the drop-in")
        t.contains(r.stderr, "lazycrypto: loaded /", f"openssl {cmd[0]}: the real libcrypto loaded")
    # say_unavailable: openssl has no channel of its own for a missing
    # libcrypto; the shim's one line is all it prints.
    r = t.run(["/usr/bin/openssl", "dgst", "-sha256", f"{d}/in.txt"],
              env={"LD_LIBRARY_PATH": env["LD_LIBRARY_PATH"],
                   "LAZYCRYPTO_LIBPATH": f"{d}/nowhere/libcrypto.so.3"})
    t.equal((r.returncode, r.stdout, r.stderr),
            (1, "", f"lazycrypto: OpenSSL libcrypto could not be loaded; candidates tried: "
                    f"[LAZYCRYPTO_LIBPATH] {d}/nowhere/libcrypto.so.3: rejected: No such file or "
                    f"directory (the whole report: LAZYNCCL_DEBUG=1)\n"), "libcrypto absent")


@case
def ncurses_variables_both_ways():
    """A curses program (tests/progs/curses_client.c) reads ESCDELAY before
    any call and writes it, then ncurses reads it back; ncurses writes
    COLORS and COLOR_PAIRS, the program reads them: linked to the ncurses
    shim, and linked to -lncursesw and run on the drop-in, the output is the
    real library's, and the log says ncurses loaded before main for the
    variables. Debian's gdb (linked to libncursesw) runs on the drop-in."""
    if not os.path.exists(t.shim("ncurses")):
        raise t.Skip("liblazyncurses was not built (no curses.h: libncurses-dev)")
    d = t.workdir("ncurses_variables")
    src = os.path.join(t.PROGS, "curses_client.c")
    direct = t.compile_c(f"{d}/client_direct", [src, "-lncursesw"] + t.sanitizer_link_args())
    shim = t.compile_c(f"{d}/client_shim", [src] + t.link_shim_args("ncurses"))
    want = t.run([direct], input="", check_rc=0).stdout
    t.equal(want, "ESCDELAY at start 1000\nthe library reads 25\n"
                  "COLORS 256 COLOR_PAIRS 65536 has_colors 1\n", "linked to -lncursesw")
    dropin = {"LD_LIBRARY_PATH": os.path.join(t.SHIMS, "dropin"), "LAZYNCCL_DEBUG": "1"}
    for what, cmd, env in (("the shim", [shim], {"LAZYNCCL_DEBUG": "1"}),
                           ("the drop-in", [direct], dropin)):
        r = t.run(cmd, env=env, input="", check_rc=0)
        t.equal(r.stdout, want, what)
        t.contains(r.stderr, "lazyncurses: loading ncurses before main: its variables are used "
                             "(the program)", f"{what}: why ncurses loaded before main")
    if os.path.exists("/usr/bin/gdb") and t.SANITIZE in ("", "none"):  # a plain program
        r = t.run(["/usr/bin/gdb", "-nx", "-batch", "-ex", "print 6*7"], env=dropin, check_rc=0)
        t.equal(r.stdout, "$1 = 42\n", "gdb on the drop-in")


@case
def ncurses_names_of_its_dependency():
    """curses.h declares functions that libtinfo, libncursesw's dependency,
    defines (curses_version, cbreak): the build reads them there, and the
    first call does not ask a copy of libncursesw for them. A program
    whose first call is curses_version, and one that requires cbreak
    (LAZYNCURSES_REQUIRE), through the shared and the static shim: the
    output is the real library's, and the log chooses the first copy,
    with no "lacks" line for any."""
    if not os.path.exists(t.shim("ncurses")):
        raise t.Skip("liblazyncurses was not built (no curses.h: libncurses-dev)")
    d = t.workdir("ncurses_dependency_names")
    src = f"{d}/version.c"
    with open(src, "w") as f:
        f.write("#include <curses.h>\n#include <stdio.h>\n"
                "int main(void) { printf(\"%s\\n\", curses_version()); return 0; }\n")
    direct = t.compile_c(f"{d}/direct", [src, "-lncursesw"] + t.sanitizer_link_args())
    shared = t.compile_c(f"{d}/shared", [src] + t.link_shim_args("ncurses"))
    static = t.compile_c(f"{d}/static", [src, f"-I{t.SOURCE}/include", t.shim("ncurses", static=True),
                                         os.path.join(t.SHIMS, "liblzruntime.a"), "-ldl", "-lpthread"]
                         + t.sanitizer_link_args())
    want = t.run([direct], check_rc=0).stdout
    t.check(want.startswith("ncurses "), f"curses_version through -lncursesw: {want!r}")
    for prog in (shared, static):
        for env in ({}, {"LAZYNCURSES_REQUIRE": "cbreak,curs_set"}):
            what = f"{os.path.basename(prog)} {env}"
            r = t.run([prog], env=dict(env, LAZYNCCL_DEBUG="1"), check_rc=0)
            t.equal(r.stdout, want, what)
            t.check("lacks" not in r.stderr and "last resort" not in r.stderr,
                    f"{what}: a copy judged on a name of its dependency:\n{r.stderr}")
            steps = [line for line in r.stderr.splitlines() if line.endswith(": chosen")]
            t.equal(len(steps), 1, f"{what}: one candidate judged, chosen:\n{r.stderr}")
    # Still needed of the loaded library: lazyncurses_resolve_all counts it,
    # and names it where the dependency beside the copy lacks it (a libtinfo
    # whose curses_version is renamed), as the first call then fails.
    with open(f"{d}/all.c", "w") as f:
        f.write('#include <curses.h>\n#include <stdio.h>\n#include "lazyncurses_control.h"\n'
                "int main(void) { char m[4096]; int n = lazyncurses_resolve_all(m, sizeof m);\n"
                '  printf("%d %s\\n", n, m); return 0; }\n'
                "const char *(*keep)(void) = curses_version;\n")
    every = t.compile_c(f"{d}/all", [f"{d}/all.c"] + t.link_shim_args("ncurses"))
    real = os.path.realpath(t.real_library("libncursesw.so.6"))
    tinfo = os.path.realpath(os.path.join(os.path.dirname(real), "libtinfo.so.6"))
    os.makedirs(f"{d}/renamed")
    shutil.copy(real, f"{d}/renamed/libncursesw.so.6")
    with open(tinfo, "rb") as f:
        data = f.read()
    t.check(data.count(b"\0curses_version\0") == 1, "libtinfo's dynamic string table names curses_version")
    with open(f"{d}/renamed/libtinfo.so.6", "wb") as f:
        f.write(data.replace(b"\0curses_version\0", b"\0curses_versioX\0"))
    for env, want in (({}, "lacks 0 of the 1 functions this process needs"),
                      ({"LD_LIBRARY_PATH": f"{d}/renamed"},
                       "lacks 1 of the 1 functions this process needs: curses_version")):
        r = t.run([every], env=env, check_rc=0)
        t.contains(r.stdout, want, f"resolve_all {env}")
        t.check(r.stdout.startswith("0 " if not env else "1 "), f"resolve_all's count {env}: {r.stdout}")


@case
def ncurses_dependency_not_found_at_build_time():
    """Generated against a copy of libncursesw.so.6 whose DT_NEEDED names a
    libtinfo that is nowhere: the build says so in a note, and the shim
    marks no name as its dependency's (every one is asked of a candidate);
    against the real library, the note is absent and the names are marked."""
    if not os.path.exists(t.shim("ncurses")):
        raise t.Skip("liblazyncurses was not built (no curses.h: libncurses-dev)")
    d = t.workdir("ncurses_dependency_missing")
    real = os.path.realpath(t.real_library("libncursesw.so.6"))
    with open(real, "rb") as f:
        data = f.read()
    t.check(data.count(b"\0libtinfo.so.6\0") == 1, "libncursesw's DT_NEEDED names libtinfo.so.6")
    with open(f"{d}/libncursesw.so.6", "wb") as f:
        f.write(data.replace(b"\0libtinfo.so.6\0", b"\0libtinfX.so.6\0"))
    spec = os.path.join(t.SOURCE, "tests", "specs", "ncurses.toml")
    for lib, note in ((real, False), (f"{d}/libncursesw.so.6", True)):
        r = lazygen("generate", spec, "--library", lib, "--out-c", f"{d}/stubs.c", "--out-data", f"{d}/data.c",
                    "--out-hooks", f"{d}/hooks.c")
        t.equal(r.returncode, 0, f"generation against {lib}: {r.stderr[-1500:]}")
        said = f"libtinfX.so.6, needed by {lib}, not found at build time: a name only it defines is asked of every candidate"
        t.equal(said in " ".join(r.stderr.split()), note, f"the note, against {lib}:\n{r.stderr}")
        t.equal(".from_deps = " in open(f"{d}/stubs.c").read(), not note, f"names marked, against {lib}")


@case
def lazygen_by_hand_finds_system_headers():
    """lazygen generate with no --include-dir finds zlib.h where the
    compiler looks, as docs/reference/spec.md says."""
    if not os.path.exists("/usr/include/zlib.h"):
        raise t.Skip("no zlib.h (zlib1g-dev)")
    d = t.workdir("lazygen_by_hand")
    r = lazygen("generate", os.path.join(t.SOURCE, "tests", "specs", "zlib.toml"),
                "--out-c", f"{d}/z.c")
    t.equal(r.returncode, 0, f"generation: {r.stderr}")
    t.contains(open(f"{d}/z.c").read(), " * Header:  /usr/include/zlib.h\n", "the header found")


@case
def lazygen_by_hand_with_the_python_on_path():
    """gen/lazygen.py run by hand with whatever python3 is first on PATH
    (a pyenv's, a venv's): it generates where that Python has libclang's
    bindings, and otherwise stops, no traceback, naming that Python and
    the one to use."""
    py = shutil.which("python3")
    if not py:
        raise t.Skip("no python3 on PATH")
    d = t.workdir("lazygen_path_python")
    r = t.run([py, os.path.join(t.SOURCE, "gen", "lazygen.py"), "generate",
               os.path.join(t.SOURCE, "stubs", "nccl.toml"), "--include-dir", t.NCCL_INCLUDE,
               "--out-c", f"{d}/nccl.c"])
    has = t.run([py, "-c", "import clang.cindex"]).returncode == 0
    if has:
        t.equal(r.returncode, 0, f"{py} has the bindings: {r.stderr}")
        return
    t.equal(r.returncode, 1, f"{py} lacks the bindings")
    t.check("Traceback" not in r.stderr, f"no traceback: {r.stderr}")
    real = t.run([py, "-c", "import sys; print(sys.executable)"], check_rc=0).stdout.strip()
    t.contains(r.stderr, f"lazygen: {real}: error: libclang's Python bindings are missing in this Python",
               "names the Python")
    t.contains(r.stderr, "/usr/bin/python3", "names the one to use")


@case
def extra_spec_outside_the_tree():
    """A spec kept outside the source tree, with its header beside it
    (include_search = ["dir:."]), named by -Dextra_specs: Meson builds its
    shim and its control header lazyvars_control.h; a program that
    includes that header and uses the library's variables runs as on the
    real library and reports the loaded path through the control API."""
    # Outside the source tree (the suite's work directories are inside it).
    d = tempfile.mkdtemp(prefix="lz-extra-spec-")
    os.makedirs(f"{d}/spec")
    os.makedirs(f"{d}/real")
    for f in ("vars.h", "mapped.h", "prog_data.c"):
        with open(f"{VARS}/{f}") as src, open(f"{d}/spec/{f}", "w") as dst:
            dst.write(src.read())
    with open(f"{VARS}/vars.toml") as src, open(f"{d}/spec/vars.toml", "w") as dst:
        dst.write(src.read().replace('headers = ["vars.h"]',
                                     'headers = ["vars.h"]\ninclude_search = ["dir:."]'))
    real = t.compile_c(f"{d}/real/libvars.so.1", [f"{VARS}/vars.c", f"-I{VARS}"],
                       ["-Wl,-soname,libvars.so.1"], shared=True)
    build = f"{d}/build"
    r = t.run(["meson", "setup", build, t.SOURCE, f"-Dextra_specs={d}/spec/vars.toml",
               f"-Dlibrary_dirs={d}/real", "-Dtests=false", "-Dbench=false", "-Ddemo=false"])
    t.equal(r.returncode, 0, f"meson setup: {r.stdout[-3000:]}{r.stderr[-2000:]}")
    r = t.run(["meson", "compile", "-C", build, "lazyvars:shared_library", "lazyvars_control.h"])
    t.equal(r.returncode, 0, f"meson compile: {r.stdout[-3000:]}")
    with open(f"{d}/main.c", "w") as f:
        f.write('#include <stdio.h>\n#include <lazyvars_control.h>\n#include "vars.h"\n'
                'int main(void) {\n    printf("%d %s\\n", vars_counter, lazyvars_loaded_step());\n'
                '    return 0;\n}\n')
    exe = t.compile_c(f"{d}/main", [f"{d}/main.c", f"-I{d}/spec", f"-I{build}/src", f"-L{build}/src",
                                    "-llazyvars", f"-Wl,-rpath,{build}/src",
                                    "-Werror=implicit-function-declaration"])
    out = t.run([exe], env={"LAZYVARS_LIBPATH": real}, check_rc=0).stdout
    t.equal(out, "41 LAZYVARS_LIBPATH\n", "the library's value and the control API's answer")
    shutil.rmtree(d, ignore_errors=True)


SYMBOLS_SPEC = """[library]
id = "vars"
display = "vars"
shim = "lazyvars"
headers = []
symbols = "vars.symbols"
sonames = ["libvars.so.1"]
feature = "vars"
description = "a library served from its symbol list"
"""


@case
def symbol_list_dropin_without_header_or_library():
    """lazygen symbols records a versioned libvars.so.1 (functions,
    variables and their sizes, VARS_1.0); a spec naming only that list,
    outside the tree with neither vars.h nor the library beside it, builds a
    drop-in whose names and versions are the real file's; programs linked
    to the real library run on it as on the library (the one using variables
    loads before main, the other at its first call). With the library
    absent, a function served without a type stops the process with the
    report (exit 127); with opaque_failure = "-1" it returns -1."""
    d = tempfile.mkdtemp(prefix="lz-symbols-")
    for sub in ("real", "spec"):
        os.makedirs(f"{d}/{sub}")
    with open(f"{d}/vars.map", "w") as f:
        f.write("VARS_1.0 {\n  global: vars_*;\n  local: *;\n};\n")
    real = t.compile_c(f"{d}/real/libvars.so.1", [f"{VARS}/vars.c", f"-I{VARS}"],
                       ["-Wl,-soname,libvars.so.1", f"-Wl,--version-script,{d}/vars.map"], shared=True)
    r = lazygen("symbols", real, "--out", f"{d}/spec/vars.symbols")
    t.equal(r.returncode, 0, r.stderr)
    t.contains(r.stdout, "5 functions, 8 variables, 1 version nodes of libvars.so.1", "what was recorded")
    with open(f"{d}/spec/vars.toml", "w") as f:
        f.write(SYMBOLS_SPEC)
    build = f"{d}/build"
    r = t.run(["meson", "setup", build, t.SOURCE, f"-Dextra_specs={d}/spec/vars.toml",
               "-Dtests=false", "-Dbench=false", "-Ddemo=false"])
    t.equal(r.returncode, 0, f"meson setup: {r.stdout[-3000:]}")
    r = t.run(["meson", "compile", "-C", build, "libvars_so_1"])
    t.equal(r.returncode, 0, f"meson compile: {r.stdout[-3000:]}")
    dropin = f"{build}/src/dropin"
    versions = {p: t.run([os.environ.get("LZ_NM", "nm"), "-D", "--defined-only",
                          "--with-symbol-versions", p], check_rc=0).stdout.split()[2::3]
                for p in (real, f"{dropin}/libvars.so.1")}
    t.equal([n for n in versions[f"{dropin}/libvars.so.1"] if not n.startswith("lazyvars_")],
            versions[real], "the drop-in's names and versions")
    env = {"LD_LIBRARY_PATH": dropin, "LAZYVARS_LIBPATH": real, "LAZYNCCL_DEBUG": "1"}
    for prog, loaded_at_main in (("data", 1), ("funcs", 0)):
        exe = t.compile_c(f"{d}/{prog}", [f"{VARS}/prog_{prog}.c", f"-I{VARS}", real,
                                         f"-Wl,-rpath,{d}/real"] + t.sanitizer_link_args())
        want = t.run([exe, real], check_rc=0).stdout
        r = t.run([exe, real], env=env, check_rc=0)
        t.equal(r.stdout, want.replace("mapped at main 1", f"mapped at main {loaded_at_main}"),
                f"prog_{prog} on the drop-in")
    r = t.run([f"{d}/funcs", real], env={**env, "LAZYVARS_LIBPATH": f"{d}/nowhere/libvars.so.1"})
    t.equal(r.returncode, 127, f"a function without a failure value, library absent: {r.stderr}")
    t.contains(r.stderr, "lazyvars: vars_bump was called, and no failure value is known for it "
                         "(its API has none, the spec's [failure] names none for it, or no header "
                         "declares it): stopping, as the dynamic "
                         "linker would have at start (error while loading shared libraries: "
                         "libvars.so.1)\nlazyvars: vars could not be loaded", "the report")
    # opaque_failure, generated and built by hand.
    with open(f"{d}/spec/vars.toml", "w") as f:
        f.write(SYMBOLS_SPEC + 'opaque_failure = "-1"\n')
    dropin_by_hand(d, f"{d}/spec/vars.toml", d, "libvars.so.1")
    r = t.run([f"{d}/funcs", real], env={"LD_LIBRARY_PATH": d,
                                          "LAZYVARS_LIBPATH": f"{d}/nowhere/libvars.so.1"})
    t.equal((r.returncode, r.stdout), (0, "mapped at main 0\nbump -1\n"), "opaque_failure")
    shutil.rmtree(d, ignore_errors=True)


ASM_LIB = r"""
int c_answer(void) { return 1; }
#if defined(__x86_64__)
__asm__(".text\n.globl asm_answer\nasm_answer:\n movl $42, %eax\n ret\n");
#elif defined(__aarch64__)
__asm__(".text\n.globl asm_answer\nasm_answer:\n mov w0, #42\n ret\n");
#endif
"""

ASM_PROG = r"""
#include <stdio.h>
int asm_answer(void);
int c_answer(void);
int main(void) { printf("%d %d\n", asm_answer(), c_answer()); return 0; }
"""


@case
def symbol_list_keeps_assembly_functions():
    """A function written in assembly without .type is exported NOTYPE, in
    a code section: lazygen symbols records it as a function, and a drop-in
    built from the list forwards it (the program answers 42 through it, as
    on the real library)."""
    d = tempfile.mkdtemp(prefix="lz-asm-")
    os.makedirs(f"{d}/real")
    with open(f"{d}/asm.c", "w") as f:
        f.write(ASM_LIB)
    with open(f"{d}/prog.c", "w") as f:
        f.write(ASM_PROG)
    real = t.compile_c(f"{d}/real/libasm.so.1", [f"{d}/asm.c"], ["-Wl,-soname,libasm.so.1"], shared=True)
    t.contains(t.run(["readelf", "--dyn-syms", "-W", real], check_rc=0).stdout, "NOTYPE  GLOBAL DEFAULT",
               "asm_answer is exported without a type")
    r = lazygen("symbols", real, "--out", f"{d}/asm.symbols")
    t.equal(r.returncode, 0, r.stderr)
    t.contains(open(f"{d}/asm.symbols").read(), "function asm_answer -\n", "recorded as a function")
    with open(f"{d}/asm.toml", "w") as f:
        f.write('[library]\nid = "asm"\ndisplay = "asm"\nshim = "lazyasm"\nheaders = []\nsymbols = "asm.symbols"\n'
                'sonames = ["libasm.so.1"]\nfeature = "asm"\ndescription = "assembly"\n')
    os.makedirs(f"{d}/dropin")
    dropin_by_hand(d, f"{d}/asm.toml", f"{d}/dropin", "libasm.so.1")
    exe = t.compile_c(f"{d}/prog", [f"{d}/prog.c", real] + t.sanitizer_link_args())
    t.equal(t.run([exe], env={"LD_LIBRARY_PATH": f"{d}/real"}, check_rc=0).stdout, "42 1\n", "on the real library")
    r = t.run([exe], env={"LD_LIBRARY_PATH": f"{d}/dropin", "LAZYASM_LIBPATH": real}, check_rc=0)
    t.equal(r.stdout, "42 1\n", "through the drop-in")
    shutil.rmtree(d, ignore_errors=True)


@case
def bench_genscale_runs_as_documented():
    """bench/genscale (docs/concepts/performance.md) runs as documented: with N=300
    it prints the times of 300 and 3,000 functions and their ratio."""
    r = t.run([sys.executable, os.path.join(t.SOURCE, "bench", "genscale"), "300"], check_rc=0)
    t.contains(r.stdout, "| functions | 300 | 3000 | ratio (10.0: linear) |", "the header row")
    row = [x.strip() for x in r.stdout.splitlines()[-1].strip("|").split("|")]
    t.equal(row[0], "lazygen generate", "the row")
    t.check(row[1].endswith(" s") and row[2].endswith(" s") and float(row[3]) > 0, f"figures: {row}")


if __name__ == "__main__":
    raise SystemExit(t.main())
