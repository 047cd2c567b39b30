#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A C library of one's own: a short spec, every problem of it named in one
run, headers named by a glob, one command (lazygen build) that makes its
shims without the project's build, the real library's own tools on its
drop-in, and, with the library absent, an exit status and the soname named,
never a made-up answer. Debian's GSL (266 headers, exported data,
callbacks) and libjpeg (errors through a callback that longjmps)."""
import errno
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import lztest as t
from lztest import case

LAZYGEN = os.path.join(t.SOURCE, "gen", "lazygen.py")
FIXTURES = os.path.join(t.SOURCE, "tests", "fixtures")
MULTIARCH = "/usr/lib/x86_64-linux-gnu"


def lazygen(*args, cwd=None):
    # The Python the build runs the generator with (docs/reference/spec.md).
    return t.run([sys.executable, LAZYGEN, *args], cwd=cwd)


class Own:
    """A fixture library built by `lazygen build` alone, and a program of it
    linked each way: to the real library, to the shared shim, to the static
    shim; the drop-in serves the one linked to the real library."""

    def __init__(self, name, fixture, soname, real, spec=None, src=None):
        if t.HOST_CPU != "x86_64" or not os.path.exists(real):
            raise t.Skip(f"no x86-64 {real} (its Debian -dev package)")
        if t.SANITIZE not in ("", "none"):
            raise t.Skip("lazygen build uses the plain compiler whatever the build: its shims are "
                         "the same in every build, checked once, in the default one")
        self.d = t.workdir(name)
        self.spec = spec or os.path.join(FIXTURES, fixture, f"{fixture}.toml")
        self.src = src or os.path.join(FIXTURES, fixture, "prog.c")
        self.soname, self.real, self.id = soname, real, fixture
        out = os.path.join(self.d, "out")
        start = time.monotonic()
        r = lazygen("build", self.spec, "--out", out)
        self.seconds = time.monotonic() - start
        t.equal(r.returncode, 0, f"lazygen build: {r.stderr[-3000:]}")
        t.equal(r.stdout.split(), [f"{out}/liblazy{fixture}.so.0", f"{out}/liblazy{fixture}.a",
                                   f"{out}/dropin/{soname}", f"{out}/lazy{fixture}_control.h",
                                   f"{out}/lazy{fixture}.pc", f"{out}/lazy{fixture}-static.pc",
                                   f"{out}/lazy{fixture}Config.cmake"],
                "what lazygen build made")
        self.out = out
        lib = soname.split(".so")[0][3:]
        # Linked to the real library as its pkg-config file says where it
        # has one (ncursesw.pc adds -ltinfo and its defines).
        pc = t.run(["pkg-config", "--cflags", "--libs", lib])
        real_flags = pc.stdout.split() if pc.returncode == 0 else [f"-l{lib}"]
        self.programs = {
            "real": t.compile_c(f"{self.d}/prog_real", [self.src] + real_flags + ["-lm"]),
            "shared": t.compile_c(f"{self.d}/prog_shared", [self.src] + t.run(
                ["pkg-config", "--cflags", "--libs", f"lazy{fixture}"],
                env={"PKG_CONFIG_PATH": out}, check_rc=0).stdout.split() + ["-lm"]),
            "static": t.compile_c(f"{self.d}/prog_static", [self.src] + t.run(
                ["pkg-config", "--cflags", "--libs", f"lazy{fixture}-static"],
                env={"PKG_CONFIG_PATH": out}, check_rc=0).stdout.split() + ["-lm"]),
        }

    def each(self):
        """(how, command prefix env) for the shim, the static shim, the drop-in."""
        yield "shared", self.programs["shared"], {}
        yield "static", self.programs["static"], {}
        yield "drop-in", self.programs["real"], {"LD_LIBRARY_PATH": f"{self.out}/dropin"}

    def same_as_real(self):
        want = t.run([self.programs["real"]], check_rc=0)
        for how, exe, env in self.each():
            got = t.run([exe], env=env)
            t.equal((got.returncode, got.stdout), (0, want.stdout), f"{how} against the real library")
        return want.stdout


def absent(real, cmd, env=None):
    """cmd run with the real library's file an empty file (bind-mounted in a
    private mount namespace): what a machine without it does."""
    if os.geteuid() != 0 or t.run(["unshare", "-m", "true"]).returncode != 0:
        raise t.Skip("no private mount namespace here (needs root and unshare -m)")
    empty = os.path.join(t.workdir("absent_empty"), "empty")
    open(empty, "w").close()
    target = os.path.realpath(real)
    script = f'mount --bind "{empty}" "{target}" && exec "$@"'
    return t.run(["unshare", "-m", "sh", "-c", script, "sh"] + cmd, env=env)


def stops_naming(r, soname, how):
    """Exit 127, the dynamic linker's words naming the soname, and the
    report's first candidate a real file and why it was refused (never the
    drop-in itself); nothing on standard output made from invented values."""
    t.equal(r.returncode, 127, f"{how}: exit status; stderr: {r.stderr[-1500:]}")
    t.contains(r.stderr, f"error while loading shared libraries: {soname}", f"{how}: the words")
    lines = r.stderr.splitlines()
    first = next((lines[i + 1] for i, l in enumerate(lines) if l.endswith("candidates tried:")), "")
    t.check(soname in first and "this shim itself" not in first,
            f"{how}: the report leads with a real candidate: {first!r}")


TWODIR = os.path.join(FIXTURES, "twodir")


def twodir_built(name, prog):
    """tests/fixtures/twodir: the real library, its shims by lazygen build
    (with --cc's -D), and prog.c or prog_parse.c built three ways: linked
    to the real library, and with each pkg-config file. (d, real library,
    the real program's output, {"real", "lazytwodir", "lazytwodir-static"})."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("lazygen build uses the plain compiler whatever the build: checked once, in "
                     "the default one")
    d = t.workdir(name)
    # The library's sources and the shims' directory hold a space: the
    # pkg-config files must carry each path as one argument.
    src = f"{d}/src dir"
    shutil.copytree(TWODIR, src, dirs_exist_ok=True)
    inc = [f"-I{src}/include", f"-I{src}/config", "-DTWODIR_WIDTH=64"]
    os.makedirs(f"{d}/real", exist_ok=True)
    real = t.compile_c(f"{d}/real/libtwodir.so.1", [f"{src}/twodir.c", "-Wl,-soname,libtwodir.so.1"] +
                       inc, shared=True)
    progs = {"real": t.compile_c(f"{d}/{prog}_real", [f"{src}/{prog}.c", real,
                                                       f"-Wl,-rpath,{d}/real"] + inc)}
    want = t.run([progs["real"]], check_rc=0).stdout
    r = lazygen("build", f"{src}/twodir.toml", "--out", f"{d}/out dir", "--library", real,
                "--cc", "cc -DTWODIR_EXTRA=1 '-DTWODIR_FN(x)=(x)' '-DTWODIR_GE=$<1:y>' '-DTWODIR_SEMI=a;b'")
    t.equal(r.returncode, 0, f"lazygen build: {r.stderr[-3000:]}")
    for pc in ("lazytwodir", "lazytwodir-static"):
        flags = shlex.split(t.run(["pkg-config", "--cflags", "--libs", pc],
                                  env={"PKG_CONFIG_PATH": f"{d}/out dir"}, check_rc=0).stdout)
        progs[pc] = t.compile_c(f"{d}/{prog}_{pc}", [f"{src}/{prog}.c"] + flags)
    return d, real, want, progs


@case
def build_with_link_time_optimisation_asked():
    """lazygen build with a --cc that asks for link-time optimisation
    (-flto=auto, as distributions' package flags do): the shims, whose
    tables are assembly naming C symbols, are compiled without it, and a
    program linked with -flto to the shared shim calls zlib. (And the
    archive's pkg-config file names -ldl and -lpthread once under --static.)"""
    if not os.path.exists("/usr/include/zlib.h"):
        raise t.Skip("no zlib.h (zlib1g-dev)")
    d = t.workdir("lazygen_build_lto")
    r = lazygen("build", os.path.join(t.SOURCE, "tests", "specs", "zlib.toml"), "--out", f"{d}/out",
                "--cc", "cc -flto=auto")
    t.equal((r.returncode, r.stderr[-1500:]), (0, ""), "lazygen build --cc 'cc -flto=auto'")
    with open(f"{d}/prog.c", "w") as f:
        f.write('#include <stdio.h>\n#include <zlib.h>\n'
                'int main(void) { printf("%s\\n", zlibVersion()); return 0; }\n')
    flags = t.run(["pkg-config", "--cflags", "--libs", "lazyzlib"], env={"PKG_CONFIG_PATH": f"{d}/out"},
                  check_rc=0).stdout.split()
    real = t.compile_c(f"{d}/real", [f"{d}/prog.c", "-lz"])
    shim = t.compile_c(f"{d}/shim", ["-flto=auto", f"{d}/prog.c"] + flags)
    t.equal(t.run([shim], check_rc=0).stdout, t.run([real], check_rc=0).stdout, "zlibVersion through the shim")
    static = t.run(["pkg-config", "--static", "--libs", "lazyzlib-static"], env={"PKG_CONFIG_PATH": f"{d}/out"},
                   check_rc=0).stdout.split()
    t.equal((static.count("-ldl"), static.count("-lpthread")), (1, 1), f"the archive's libraries once: {static}")


@case
def failure_sets_out_parameters_and_errno():
    """twodir_parse returns NULL and stores an error code when it fails
    (the compile-with-error-code shape); its spec says what the code gets
    on the failure path ({value = "NULL", out = {error = "-2"}}). With the
    library absent, through the shared shim, the static shim and the
    drop-in, the program reads NULL, the error code -2 (not the 12345 it
    set) and errno ELIBACC (not the ENOENT it set); with the library, what
    the library answers."""
    d, real, want, progs = twodir_built("onelib_twodir_outs", "prog_parse")
    t.equal(want, "parse yz error 0 errno -\n", "linked to the real library")
    for how, cmd, e in (("shared", progs["lazytwodir"], {}), ("static", progs["lazytwodir-static"], {}),
                        ("drop-in", progs["real"], {"LD_LIBRARY_PATH": f"{d}/out dir/dropin"})):
        r = t.run([cmd], env={**e, "LAZYTWODIR_LIBPATH": real})
        t.equal((r.returncode, r.stdout), (0, want), f"{how}: {r.stderr}")
        r = t.run([cmd], env={**e, "LAZYTWODIR_LIBPATH": f"{d}/nowhere/libtwodir.so.1"})
        t.equal((r.returncode, r.stdout), (0, "parse (null) error -2 errno Can not access a needed "
                                              "shared library\n"), f"{how}, library absent: {r.stderr}")


@case
def two_include_directories_and_a_define():
    """A library whose header includes a file from a second include_search
    directory and needs a -D (tests/fixtures/twodir): lazygen build searches
    every include_search directory in order, and the pkg-config files carry
    both directories, the spec's define and --cc's -D, so a program built
    with `pkg-config --cflags --libs` prints what it prints linked to the
    real library, through the shared and the static shim and the drop-in;
    with the library absent the program, which reads a variable, stops with
    exit 127 naming the library. The CMake package carries the same
    options: a program built with find_package prints the same. Every path
    of it holds a space."""
    d, real, want, progs = twodir_built("onelib_twodir", "prog")
    t.equal(want, "major 3 add 5 width 64 built 64\n", "linked to the real library")
    for pc in ("lazytwodir", "lazytwodir-static"):
        flags = shlex.split(t.run(["pkg-config", "--cflags", "--libs", pc],
                                  env={"PKG_CONFIG_PATH": f"{d}/out dir"}, check_rc=0).stdout)
        for want_flag in (f"-I{d}/src dir/include", f"-I{d}/src dir/config", "-DTWODIR_WIDTH=64",
                          "-DTWODIR_EXTRA=1"):
            t.check(want_flag in flags, f"{pc}.pc carries {want_flag}: {flags}")
    env = {"LAZYTWODIR_LIBPATH": real}
    for how, cmd, e in (("shared", progs["lazytwodir"], env), ("static", progs["lazytwodir-static"], env),
                        ("drop-in", progs["real"], {"LD_LIBRARY_PATH": f"{d}/out dir/dropin", **env})):
        r = t.run([cmd], env=e)
        t.equal((r.returncode, r.stdout), (0, want), f"{how}: {r.stderr}")
        r = t.run([cmd], env={**e, "LAZYTWODIR_LIBPATH": f"{d}/nowhere/libtwodir.so.1"})
        t.equal((r.returncode, r.stdout), (127, ""), f"{how}, library absent: {r.stderr}")
        t.contains(r.stderr, "error while loading shared libraries: libtwodir.so.1", f"{how}: the words")
    if not shutil.which("cmake"):
        raise t.Skip("cmake is not installed: pkg-config alone was checked")
    # The CMake package gives a program the same options as pkg-config.
    b = f"{d}/cmake"
    os.makedirs(b, exist_ok=True)
    with open(f"{b}/CMakeLists.txt", "w") as f:
        f.write("cmake_minimum_required(VERSION 3.12)\nproject(own C)\n"
                f"find_package(lazytwodir CONFIG REQUIRED PATHS \"{d}/out dir\" NO_DEFAULT_PATH)\n"
                f"add_executable(p_shared \"{d}/src dir/prog.c\")\n"
                "target_link_libraries(p_shared lazynccl::twodir)\n"
                f"add_executable(p_static \"{d}/src dir/prog.c\")\n"
                "target_link_libraries(p_static lazynccl::twodir_static)\n"
                "add_executable(p_flags flags.c)\n"
                "target_link_libraries(p_flags lazynccl::twodir)\n")
    with open(f"{b}/flags.c", "w") as f:
        f.write("#include <stdio.h>\n#define S(x) #x\n#define SS(x) S(x)\n"
                "int main(void) { puts(SS(TWODIR_GE) \" \" SS(TWODIR_FN(2))); return 0; }\n")
    for argv in (["cmake", "-S", b, "-B", f"{b}/b"], ["cmake", "--build", f"{b}/b"]):
        r = t.run(argv)
        t.equal(r.returncode, 0, f"{argv[1]}: {r.stdout[-2000:]}{r.stderr[-2000:]}")
        if argv[1] == "-S":  # a ';', which CMake cannot carry, is said
            t.contains(t.flat(r.stderr), "lazytwodir: the define TWODIR_SEMI=a;b holds a semicolon, which "
                                         "CMake cannot carry", "the define CMake cannot carry")
    for exe in ("p_shared", "p_static"):
        r = t.run([f"{b}/b/{exe}"], env=env)
        t.equal((r.returncode, r.stdout), (0, want), f"{exe} through the CMake package: {r.stderr}")
    # A function-like macro and a "$<" in a value reach the compiler as
    # written (CMake drops the one from its definitions, and reads the other
    # as a generator expression, unless the package says them so).
    r = t.run([f"{b}/b/p_flags"])
    t.equal((r.returncode, r.stdout), (0, "$<1:y> (2)\n"), "--cc's odd defines through CMake")


@case
def jpeg_built_alone_serves_its_users():
    """libjpeg from tests/fixtures/jpeg/jpeg.toml (10 lines, no failure
    values) by `lazygen build` alone: a program that compresses, decodes, and
    recovers from a corrupt stream through its error_exit callback's longjmp
    prints what it prints linked to the real library, through the shared
    shim, the static shim and the drop-in; Debian's cjpeg and djpeg on the
    drop-in write the same bytes."""
    j = Own("onelib_jpeg", "jpeg", "libjpeg.so.62", f"{MULTIARCH}/libjpeg.so.62")
    out = j.same_as_real()
    t.contains(out, "error_exit: Not a JPEG file", "the longjmp out of the library came back")
    if not (shutil.which("cjpeg") and shutil.which("djpeg")):
        raise t.Skip("no cjpeg/djpeg (Debian's libjpeg-turbo-progs): the program alone was checked")
    ppm = os.path.join(j.d, "in.ppm")
    with open(ppm, "wb") as f:
        f.write(b"P6 40 30 255\n" + bytes((x * 6 + y) % 256 for y in range(30) for x in range(40)
                                         for _ in range(3)))
    for tool, arg in (("cjpeg", ppm), ("djpeg", f"{j.d}/in.jpg")):
        if tool == "cjpeg":
            t.run(["sh", "-c", f'cjpeg "{ppm}" > "{j.d}/in.jpg"'], check_rc=0)
        plain = t.run(["sh", "-c", f'{tool} "{arg}" | md5sum'], check_rc=0).stdout
        wrapped = t.run(["sh", "-c", f'{tool} "{arg}" | md5sum'],
                        env={"LD_LIBRARY_PATH": f"{j.out}/dropin"}, check_rc=0).stdout
        t.equal(wrapped, plain, f"{tool} on the drop-in: the same bytes")


@case
def jpeg_absent_stops_everywhere():
    """libjpeg absent (its file emptied): the program linked to it stops at
    start as plain; through the shared shim, the static shim and the drop-in
    it stops at its first call (jpeg_std_error, whose pointer the API never
    gives as NULL), exit 127, the soname named; Debian's cjpeg on the
    drop-in too, where a NULL for jpeg_std_error crashed it (SIGSEGV)."""
    j = Own("onelib_jpeg_absent", "jpeg", "libjpeg.so.62", f"{MULTIARCH}/libjpeg.so.62")
    plain = absent(j.real, [j.programs["real"]])
    t.equal(plain.returncode, 127, "plain: the dynamic linker stops it")
    for how, exe, env in j.each():
        r = absent(j.real, [exe], env)
        t.equal(r.stdout, "", f"{how}: nothing printed from made-up values")
        stops_naming(r, "libjpeg.so.62", how)
    if shutil.which("cjpeg"):
        r = absent(j.real, ["cjpeg", "/dev/null"], {"LD_LIBRARY_PATH": f"{j.out}/dropin"})
        stops_naming(r, "libjpeg.so.62", "cjpeg on the drop-in")


@case
def gsl_built_alone_serves_its_users():
    """GSL from tests/fixtures/gsl/gsl.toml (one glob for its 266 headers, no
    failure values) by `lazygen build` alone: a program using an exported
    generator type, the library's default (a variable it sets), an error
    handler it calls back and a special function prints what it prints
    linked to GSL, through the shared shim, the static shim and the drop-in;
    Debian's gsl-randist on the drop-in prints the same numbers."""
    g = Own("onelib_gsl", "gsl", "libgsl.so.27", f"{MULTIARCH}/libgsl.so.27")
    out = g.same_as_real()
    t.contains(out, "handler saw 1", "GSL called the program's handler")
    print(f"lazygen build of GSL: {g.seconds:.1f} s")
    # The drop-in needs what libgsl.so.27 needs (libgslcblas.so.0 first): a
    # plugin linked to GSL alone that calls CBLAS loads and runs as plain.
    real_needed = lazygen("needed", g.real).stdout.split()
    drop_needed = [l.split("[")[1].rstrip("]") for l in t.run(
        ["readelf", "-d", f"{g.out}/dropin/libgsl.so.27"], check_rc=0).stdout.splitlines()
        if "(NEEDED)" in l]
    t.equal([n for n in drop_needed if n in real_needed], real_needed, "the real DT_NEEDED, in order")
    src = f"{g.d}/plugin.c"
    with open(src, "w") as f:
        f.write("double cblas_ddot(int, const double *, int, const double *, int);\n"
                "double dot3(void) { double a[3] = {1, 2, 3}; return cblas_ddot(3, a, 1, a, 1); }\n")
    plugin = t.compile_c(f"{g.d}/plugin.so", [src, "-Wl,--no-as-needed", "-lgsl"], shared=True)
    code = ("import ctypes, os; p = ctypes.CDLL(os.environ['P'], mode=os.RTLD_NOW); "
            "p.dot3.restype = ctypes.c_double; print(p.dot3())")
    want = t.run([sys.executable, "-c", code], env={"P": plugin}, check_rc=0).stdout
    t.equal(t.run([sys.executable, "-c", code], env={"P": plugin, "LD_LIBRARY_PATH": f"{g.out}/dropin"},
                  check_rc=0).stdout, want, "a plugin leaning on GSL's DT_NEEDED")
    if not shutil.which("gsl-randist"):
        raise t.Skip("no gsl-randist (Debian's gsl-bin): the program alone was checked")
    cmd = ["gsl-randist", "7", "20", "gaussian", "1.5"]
    plain = t.run(cmd, check_rc=0).stdout
    t.equal(t.run(cmd, env={"LD_LIBRARY_PATH": f"{g.out}/dropin"}, check_rc=0).stdout, plain,
            "gsl-randist on the drop-in")


@case
def gsl_absent_stops_everywhere():
    """GSL absent: every way stops at the first call with exit 127 and
    libgsl.so.27 named, gsl-randist on the drop-in too; never a number."""
    g = Own("onelib_gsl_absent", "gsl", "libgsl.so.27", f"{MULTIARCH}/libgsl.so.27")
    for how, exe, env in g.each():
        r = absent(g.real, [exe], env)
        t.equal(r.stdout, "", f"{how}: nothing printed")
        stops_naming(r, "libgsl.so.27", how)
    if shutil.which("gsl-randist"):
        r = absent(g.real, ["gsl-randist", "7", "3", "gaussian", "1.5"],
                   {"LD_LIBRARY_PATH": f"{g.out}/dropin"})
        t.equal(r.stdout, "", "gsl-randist: no numbers")
        stops_naming(r, "libgsl.so.27", "gsl-randist on the drop-in")


@case
def avx_vector_arguments_arrive_whole():
    """Functions taking __m256d (ymm registers) and __m128d: through the
    shared shim, the static shim and the drop-in the first call's result is
    the real library's, every lane there (the forward that first calls of
    other functions take keeps xmm0-7 only, so these are typed)."""
    if t.HOST_CPU != "x86_64" or " avx " not in open("/proc/cpuinfo").read().replace("\n", " "):
        raise t.Skip("no x86-64 processor with AVX here")
    d = t.workdir("onelib_avx")
    fx = os.path.join(FIXTURES, "avx")
    real = t.compile_c(f"{d}/libavx.so.1", [f"{fx}/avx.c", "-mavx", f"-I{fx}",
                                            "-Wl,-soname,libavx.so.1"], shared=True)
    r = lazygen("build", f"{fx}/avx.toml", "--out", f"{d}/out", "--include-dir", fx, "--library", real)
    t.equal(r.returncode, 0, f"lazygen build: {r.stderr[-2000:]}")
    prog = lambda name, link: t.compile_c(f"{d}/{name}", [f"{fx}/prog.c", "-mavx", f"-I{fx}"] + link)
    runs = {"real": (prog("real", [real, f"-Wl,-rpath,{d}"]), {}),
            "shared": (prog("shared", [f"-L{d}/out", "-llazyavx", f"-Wl,-rpath,{d}/out"]),
                       {"LD_LIBRARY_PATH": d}),
            "static": (prog("static", [f"{d}/out/liblazyavx.a", "-ldl", "-lpthread"]),
                       {"LD_LIBRARY_PATH": d})}
    runs["drop-in"] = (runs["real"][0], {"LD_LIBRARY_PATH": f"{d}/out/dropin:{d}"})
    want = t.run([runs["real"][0]], check_rc=0).stdout
    t.equal(want, "886 49\n", "the real library")
    for how, (exe, env) in runs.items():
        t.equal(t.run([exe], env=env, check_rc=0).stdout, want, how)


@case
def spec_problems_named_in_one_run():
    """A spec with seven problems in three tables: one run names them all,
    each with its table and key."""
    d = t.workdir("onelib_spec_problems")
    spec = os.path.join(d, "bad.toml")
    with open(spec, "w") as f:
        f.write('[library]\nid = "bad id"\ndisplay = "x"\nshim = "lazybad"\nheaders = ["x.h"]\n'
                'function_pattern = "(["\nsonames = ["a/b.so"]\nfeature = "x"\n'
                'description = "d"\ncolour = "red"\n'
                '[failure]\n"int" = "not a value"\n[extra]\n')
    r = lazygen("describe", spec)
    t.equal(r.returncode, 1, "refused")
    for line in (f"{spec} [library]: error: unknown key 'colour'",
                 f"{spec} [library]: error: 'function_pattern' is not a valid regular expression",
                 f"{spec} [library]: error: 'id' must be a C identifier",
                 f"{spec} [library]: error: 'sonames': 'a/b.so' is not a file name",
                 f"{spec} [failure]: error: value for 'int': 'not a value' is not a C constant",
                 f"{spec}: error: unknown table [extra]"):
        t.contains(r.stderr, line, "one of the problems")


@case
def headers_by_glob_and_directory():
    """headers = ["api/*.h"] and ["api/"] name every header of the directory,
    in one order whatever the file system's; the shim serves the functions
    of each, and generation twice writes the same file."""
    d = t.workdir("onelib_glob")
    os.makedirs(f"{d}/inc/api")
    for name, fn in (("b.h", "int glob_b(int x);\n"), ("a.h", "int glob_a(int x);\n"),
                     ("c.txt", "int glob_c(int x);\n")):
        with open(f"{d}/inc/api/{name}", "w") as f:
            f.write(fn)
    outs = []
    for i, headers in enumerate(('["api/*.h"]', '["api/"]', '["api/*.h"]')):
        spec = f"{d}/g{i}.toml"
        with open(spec, "w") as f:
            f.write(f'[library]\nid = "globbed"\ndisplay = "G"\nshim = "lazyglobbed"\n'
                    f'headers = {headers}\nfunction_pattern = "^glob_"\nsonames = ["libg.so.1"]\n'
                    f'feature = "g"\ndescription = "g"\n[failure]\n"int" = "-1"\n')
        r = lazygen("generate", spec, "--include-dir", f"{d}/inc", "--out-c", f"{d}/g{i}.c",
                    "--out-list", f"{d}/g{i}.txt")
        t.equal(r.returncode, 0, f"generation: {r.stderr}")
        with open(f"{d}/g{i}.txt") as f:
            t.equal(f.read().split()[:2], ["glob_a", "glob_b"], f"{headers}: both headers, sorted")
        with open(f"{d}/g{i}.c") as f:
            outs.append(f.read().replace(f"g{i}.toml", "G.toml"))
    t.equal(outs[2], outs[0], "the same file twice")
    spec = f"{d}/none.toml"
    with open(spec, "w") as f:
        f.write('[library]\nid = "none"\ndisplay = "N"\nshim = "lazynone"\nheaders = ["nope/*.h"]\n'
                'function_pattern = "^n"\nsonames = ["libn.so.1"]\nfeature = "n"\ndescription = "n"\n')
    r = lazygen("generate", spec, "--include-dir", f"{d}/inc", "--out-c", f"{d}/n.c")
    t.contains(r.stderr, f"{spec} [library] 'headers': error: 'nope/*.h': no such header in: {d}/inc",
               "a glob matching nothing: the key and where it looked")


@case
def launcher_serves_suite_libraries_when_named():
    """lazynccl-run in a build tree: every spec's drop-in is served; the
    suite's own test libraries (zlib, ...) only when --only names them, as
    --help says; then a Python that imports zlib maps the drop-in and, at
    its first call, the real libz."""
    zdrop = os.path.join(t.SHIMS, "dropin", "libz.so.1")
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer build's drop-in in the uninstrumented Python stops at start "
                     "(its runtime must come first); the default build runs it")
    if not os.path.exists(zdrop):
        raise t.Skip("no zlib drop-in in this build (zlib.h missing)")
    run = os.path.join(t.BUILD, "lazynccl-run")
    help_text = t.run([run, "--help"], check_rc=0).stdout
    t.contains(help_text, "zlib (the suite's test libraries)", "--help names them")
    code = ("import zlib, sys; m = lambda: sorted({l.split()[-1] for l in open('/proc/self/maps') "
            "if 'libz.so' in l}); a = m(); zlib.crc32(b'x'); print(a, m())")
    default = t.run([run, sys.executable, "-c", code], check_rc=0).stdout
    t.check("/dropin/" not in default, f"unasked, zlib is left alone: {default}")
    named = t.run([run, "--only", "zlib", sys.executable, "-c", code], check_rc=0).stdout
    t.contains(named, "/dropin/libz.so.1", "--only zlib: the drop-in stands in")


@case
def pkg_config_for_a_shim_not_installed():
    """A spec the build does not install (zlib's, install = false) gets
    build/src/lazyzlib.pc: a program built with it alone runs on the shim."""
    pc = os.path.join(t.SHIMS, "lazyzlib.pc")
    if not os.path.exists(t.shim("zlib")):
        raise t.Skip("no zlib shim in this build")
    flags = t.run(["pkg-config", "--cflags", "--libs", "lazyzlib"],
                  env={"PKG_CONFIG_PATH": t.SHIMS}, check_rc=0).stdout.split()
    t.check(os.path.exists(pc), f"{pc} written")
    d = t.workdir("onelib_pc")
    exe = t.compile_c(f"{d}/prog", [os.path.join(t.PROGS, "zlib_client.c"), "-DLZ_SHIM", f"-I{t.PROGS}"] + flags
                      + t.sanitizer_link_args())
    r = t.run([exe, "roundtrip", d], check_rc=0)
    t.contains(r.stdout, "uncompress: rc=0 same=1", "the shim, found by its pkg-config file alone")


@case
def info_says_when_no_version_function():
    """lazynccl-info --load of a library whose spec names no version
    function says so, not an empty field."""
    if not os.path.exists(t.shim("ncurses")):
        raise t.Skip("no ncurses shim in this build")
    r = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--load", "ncurses"])
    t.contains(r.stdout, "version unknown (no version function)", "the version line")


@case
def extra_spec_relative_to_the_source_root():
    """-Dextra_specs with a relative path is the source root's, from any
    directory; one that names nothing stops configuration with the reason on
    the console."""
    d = t.workdir("onelib_extra_specs")
    base = ["meson", "setup", "-Dtests=false", "-Dbench=false", "-Ddemo=false"]
    r = t.run(base + [f"{d}/ok", t.SOURCE, "-Dextra_specs=tests/fixtures/jpeg/jpeg.toml"], cwd=d)
    t.equal(r.returncode, 0, f"configured: {r.stdout[-2000:]}{r.stderr[-2000:]}")
    targets = t.run(["meson", "introspect", "--targets", f"{d}/ok"], check_rc=0).stdout
    t.contains(targets, "liblazyjpeg", "the spec's shim is a target")
    r = t.run(base + [f"{d}/bad", t.SOURCE, "-Dextra_specs=tests/fixtures/nowhere.toml"], cwd=d)
    t.check(r.returncode != 0, "refused")
    t.contains(r.stdout + r.stderr, "nowhere.toml: error: not a directory of specs nor a spec file",
               "the reason, on the console")




@case
def meson_build_with_link_time_optimisation_refused():
    """The Meson build asked for link-time optimisation (-flto in CFLAGS,
    as distributions' package flags carry it, in CC, or -Db_lto=true) stops
    at configuration saying why and what to set, where it built shims that
    export nothing (LTO objects) or failed to link; -fno-lto after it
    configures, and so does an -flto-... option that turns nothing on."""
    d = t.workdir("meson_lto")
    base = ["meson", "setup", "-Dtests=false", "-Dbench=false", "-Ddemo=false"]
    cc = " ".join(t.CC)
    for what, args, env in (("CFLAGS", [], {"CFLAGS": "-O2 -flto=auto -ffat-lto-objects"}),
                            ("CC", [], {"CC": f"{cc} -flto=auto"}),
                            ("b_lto", ["-Db_lto=true"], {})):
        r = t.run(base + [f"{d}/{what}", t.SOURCE] + args, env=env)
        t.check(r.returncode != 0, f"{what}: refused")
        t.contains(r.stdout + r.stderr, "lazynccl cannot be built with link-time optimisation (-flto in "
                   "CC, CFLAGS or LDFLAGS, or -Db_lto=true): its shims are partly assembly that LTO leaves "
                   "unlinked. Remove -flto, or add -fno-lto after it", f"{what}: the reason")
    for what, args, env in (("off", [], {"CFLAGS": "-flto=auto -fno-lto"}),
                            ("b_lto_off", ["-Db_lto=true", "-Dc_args=-fno-lto"], {}),
                            ("partition", [], {"CFLAGS": "-flto-partition=one"})):
        r = t.run(base + [f"{d}/{what}", t.SOURCE] + args, env=env)
        t.equal(r.returncode, 0, f"{what}, configured: {r.stdout[-1500:]}")


@case
def cmake_package_for_a_shim_not_installed():
    """A shim not installed has a CMake package where it was made, as it
    has a pkg-config file: `lazygen build`'s OUT and the Meson build's
    src/ (a suite spec, install = false). find_package(<shim> CONFIG PATHS
    DIR) gives lazynccl::<id> and lazynccl::<id>_static; a program linked
    to each serves as the real library does."""
    if not shutil.which("cmake"):
        raise t.Skip("cmake is not installed")
    own = Own("cmake_jpeg", "jpeg", "libjpeg.so.62", f"{MULTIARCH}/libjpeg.so.62")
    want = own.same_as_real()
    places = [(own.out, "lazyjpeg", "jpeg", own.src)]
    fixture = os.path.join(t.BUILD, "src", "lazyzlibConfig.cmake")
    if os.path.exists(fixture):
        places.append((os.path.dirname(fixture), "lazyzlib", "zlib", None))
    else:
        t.check(False, f"{fixture}: the Meson build writes one for its uninstalled shims")
    for where, shim, ident, src in places:
        d = t.workdir(f"cmake_{shim}")
        with open(f"{d}/CMakeLists.txt", "w") as f:
            f.write("cmake_minimum_required(VERSION 3.12)\nproject(own C)\n"
                    f"find_package({shim} CONFIG REQUIRED PATHS \"{where}\" NO_DEFAULT_PATH)\n"
                    + (f"add_executable(p_shared \"{src}\")\n"
                       f"target_link_libraries(p_shared lazynccl::{ident})\n"
                       f"add_executable(p_static \"{src}\")\n"
                       f"target_link_libraries(p_static lazynccl::{ident}_static)\n" if src else
                       "get_target_property(loc lazynccl::zlib IMPORTED_LOCATION)\n"
                       "if(NOT EXISTS \"${loc}\")\n  message(FATAL_ERROR \"no ${loc}\")\nendif()\n"
                       "get_target_property(loc lazynccl::zlib_static IMPORTED_LOCATION)\n"
                       "if(NOT EXISTS \"${loc}\")\n  message(FATAL_ERROR \"no ${loc}\")\nendif()\n"))
        r = t.run(["cmake", "-S", d, "-B", f"{d}/b"])
        t.equal(r.returncode, 0, f"cmake ({shim}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
        if not src:
            continue
        r = t.run(["cmake", "--build", f"{d}/b"])
        t.equal(r.returncode, 0, f"cmake --build ({shim}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
        for exe in ("p_shared", "p_static"):
            got = t.run([f"{d}/b/{exe}"], env={"LD_LIBRARY_PATH": own.out})
            t.equal((got.returncode, got.stdout), (0, want), f"{exe} through lazynccl::{ident}")


@case
def built_output_moves_whole():
    """lazygen build's OUT copied elsewhere still serves: its pkg-config
    files name their own directory (${pcfiledir}), so a program built from
    the copy links and runs the copy's shim, not the original's."""
    own = Own("moved_jpeg", "jpeg", "libjpeg.so.62", f"{MULTIARCH}/libjpeg.so.62")
    want = own.same_as_real()
    moved = os.path.join(own.d, "moved")
    shutil.rmtree(moved, ignore_errors=True)
    shutil.copytree(own.out, moved, symlinks=True)
    shutil.rmtree(own.out)
    for pc in ("lazyjpeg", "lazyjpeg-static"):
        flags = t.run(["pkg-config", "--cflags", "--libs", pc], env={"PKG_CONFIG_PATH": moved},
                      check_rc=0).stdout.split()
        t.check(all(own.out not in f for f in flags), f"{pc}: {flags}")
        exe = t.compile_c(f"{own.d}/prog_moved_{pc}", [own.src] + flags + ["-lm"])
        got = t.run([exe])
        t.equal((got.returncode, got.stdout), (0, want), f"{pc} from the moved directory")


@case
def array_parameters_sized_by_another():
    """A parameter declared as an array sized by an earlier parameter
    (size_t n, const unsigned char buf[n]; double a[n][m]) keeps its type:
    the shim builds (its sizes name the renamed parameters) and a program
    through it gets the real library's answers."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("lazygen build uses the plain compiler: checked once, in the default build")
    d = t.workdir("vla")
    with open(f"{d}/vla.h", "w") as f:
        f.write("#include <stddef.h>\nint vla_sum(size_t n, const unsigned char buf[n]);\n"
                "double vla_two(size_t n, size_t m, double a[n][m]);\n")
    with open(f"{d}/vla.c", "w") as f:
        f.write('#include "vla.h"\nint vla_sum(size_t n, const unsigned char buf[n]) { int s = 0; '
                "for (size_t i = 0; i < n; i++) s += buf[i]; return s; }\n"
                "double vla_two(size_t n, size_t m, double a[n][m]) { return a[n - 1][m - 1]; }\n")
    with open(f"{d}/prog.c", "w") as f:
        f.write('#include <stdio.h>\n#include "vla.h"\nint main(void) { unsigned char b[3] = {1, 2, 3}; '
                'double a[2][3] = {{0}, {0, 0, 7.5}}; printf("%d %g\\n", vla_sum(3, b), vla_two(2, 3, a)); '
                "return 0; }\n")
    with open(f"{d}/vla.toml", "w") as f:
        f.write('[library]\nid = "vla"\ndisplay = "vla"\nshim = "lazyvla"\nheaders = ["vla.h"]\n'
                'function_pattern = "^vla_"\nsonames = ["libvla.so.1"]\nfeature = "vla"\n'
                f'description = "vla"\ninclude_search = ["dir:{d}"]\n')
    real = f"{d}/lib/libvla.so.1"
    os.makedirs(os.path.dirname(real), exist_ok=True)
    t.compile_c(real, [f"{d}/vla.c"], ["-Wl,-soname,libvla.so.1"], shared=True)
    r = lazygen("build", f"{d}/vla.toml", "--out", f"{d}/out", "--library", real)
    t.equal(r.returncode, 0, f"lazygen build: {r.stderr[-2000:]}")
    exe = t.compile_c(f"{d}/prog", [f"{d}/prog.c", f"-I{d}"] + t.run(
        ["pkg-config", "--cflags", "--libs", "lazyvla"], env={"PKG_CONFIG_PATH": f"{d}/out"},
        check_rc=0).stdout.split())
    got = t.run([exe], env={"LAZYVLA_LIBPATH": real})
    t.equal((got.returncode, got.stdout), (0, "6 7.5\n"), "through the shim")


@case
def new_spec_builds_as_written():
    """`lazygen new` writes, from an installed library and its -dev
    headers, a spec that builds as written: under 20 lines, no made-up
    failure value, its headers, pattern and excluded names from what the
    headers declare and the library exports, a version function where one
    is declared. Four kinds: libjpeg (a header that needs stdio.h first, an
    internal header left out), zlib (camelCase names, versioned symbols, a
    version function, large-file names), SQLite (a package header whose API
    is macros beside the real one, 1,000 internal exports), GMP (names
    renamed by macros, exported data). Each
    spec's shims serve a program as the real library does, and without the
    library a call stops naming it."""
    cases = [("jpeg", "libjpeg.so.62", os.path.join(FIXTURES, "jpeg", "prog.c"), None,
              ['headers = ["stdio.h", "jpeglib.h"]', 'function_pattern = "^(jpeg_)"']),
             ("z", "libz.so.1", os.path.join(FIXTURES, "new", "zlib_prog.c"), "zlibVersion",
              ['headers = ["zlib.h"]', 'defines = ["_LARGEFILE64_SOURCE=1"]']),
             ("sqlite3", "libsqlite3.so.0", os.path.join(FIXTURES, "new", "sqlite_prog.c"),
              "sqlite3_libversion", ['headers = ["sqlite3.h"]', 'function_pattern = "^(sqlite3_)"']),
             ("gmp", "libgmp.so.10", os.path.join(FIXTURES, "new", "gmp_prog.c"), None,
              ['headers = ["gmp.h"]', 'function_pattern = "^(__gmp_|__gmpf_|__gmpn_|__gmpq_|__gmpz_)"'])]
    for ident, soname, src, version, lines in cases:
        real = f"{MULTIARCH}/{soname}"
        if not os.path.exists(real):
            raise t.Skip(f"no {real} (its Debian -dev package)")
        d = t.workdir(f"new_{ident}")
        spec = f"{d}/{ident}.toml"
        r = lazygen("new", soname, "--out", spec)
        t.equal(r.returncode, 0, f"lazygen new {soname}: {r.stderr}")
        text = open(spec).read()
        t.check(len(text.splitlines()) < 20, f"{soname}: {len(text.splitlines())} lines:\n{text}")
        t.equal([x for x in text.splitlines() if x.startswith("[failure")], [],
                f"{soname}: no failure value made up")
        for line in lines + [f'sonames = ["{soname}"]', f'shim = "lazy{ident}"']:
            t.contains(text, line, soname)
        t.equal(f'version_function = "{version}"' in text, bool(version), f"{soname}: {text}")
        again = lazygen("new", soname, "--out", spec)
        t.equal((again.returncode, open(spec).read()), (1, text), "an existing file is never overwritten")
        t.contains(again.stderr, f"lazygen: {spec}: error: exists: not overwritten", "why")
        own = Own(f"new_{ident}_build", ident, soname, real, spec=spec, src=src)
        out = own.same_as_real()
        t.check(out.strip(), f"{soname}: the program said nothing")
        for how, exe, env in own.each():
            stops_naming(absent(real, [exe], env), soname, f"{soname} {how}")


@case
def new_spec_finds_the_declaring_header():
    """`lazygen new` on two libraries whose main header is not named like
    them or needs a macro: expat (its expat.h, whose prose says "class",
    read as C; not the config headers beside it) builds first try; PCRE2
    without -D says to give the macro, leading with it, and with
    `-D PCRE2_CODE_UNIT_WIDTH=8` writes a spec with that define that builds
    first try, leaving out (and saying so) pcre2posix.h, the header of the
    package's other library, libpcre2-posix; ncurses, whose package holds
    C++ headers (a class after a macro word, an extern "C" block no
    __cplusplus test guards), builds first try from its C headers, with the
    defines and the other library (libtinfo) its ncursesw.pc gives its
    programs, so that one using libtinfo's functions links and runs. Each
    serves a program as the real library does; without the library a call
    stops naming it."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("lazygen build uses the plain compiler whatever the build: checked once, in "
                     "the default one")
    for ident, soname, src, args, lines in (
            ("expat", "libexpat.so.1", "expat_prog.c", [], ['headers = ["expat.h"]']),
            ("pcre28", "libpcre2-8.so.0", "pcre2_prog.c", ["-D", "PCRE2_CODE_UNIT_WIDTH=8"],
             ['defines = ["PCRE2_CODE_UNIT_WIDTH=8"]', 'headers = ["pcre2.h"]']),
            ("ncursesw", "libncursesw.so.6", "ncurses_prog.c", [],
             ['defines = ["_DEFAULT_SOURCE", "_XOPEN_SOURCE=600"]', 'libs = ["-ltinfo"]',
              'headers = ["ncurses.h"'])):
        real = f"{MULTIARCH}/{soname}"
        header = "/usr/include/" + lines[-1].split('"')[1]
        if not os.path.exists(real) or not os.path.exists(header):
            raise t.Skip(f"no {real} or {header} (its Debian -dev package)")
        d = t.workdir(f"new_{ident}")
        spec = f"{d}/{ident}.toml"
        if args:
            r = lazygen("new", soname, "--out", spec)
            t.equal(r.returncode, 1, f"lazygen new {soname} without -D: {r.stderr}")
            t.contains(r.stderr, "error: the headers want a macro defined (their #error below): give "
                                 "it with -D NAME=VALUE: ", "what to do, first")
        r = lazygen("new", soname, "--out", spec, *args)
        t.equal(r.returncode, 0, f"lazygen new {soname}: {r.stderr}")
        if ident == "pcre28":  # the package's other library's header
            t.contains(t.flat(r.stderr), "left out pcre2posix.h: every function declared there is another "
                                         "library's (none is exported by libpcre2-8.so.0)", "pcre2posix.h")
        text = open(spec).read()
        for line in lines:
            t.contains(text, line, soname)
        if ident == "ncursesw":  # the package's C++ headers are not its C API
            headers = next(x for x in text.splitlines() if x.startswith("headers = "))
            for cxx in ("cursesapp.h", "cursesw.h", "etip.h"):
                t.check(cxx not in headers, f"{cxx} left out: {headers}")
        own = Own(f"new_{ident}_build", ident, soname, real, spec=spec,
                  src=os.path.join(FIXTURES, "new", src))
        out = own.same_as_real()
        t.check(out.strip(), f"{soname}: the program said nothing")
        for how, exe, env in own.each():
            stops_naming(absent(real, [exe], env), soname, f"{soname} {how}")


@case
def new_spec_reads_a_header_as_c_compiles_it():
    """A C header whose C++ lines (a class declared ahead, the extern "C"
    block) are under #ifdef __cplusplus, as GL/glu.h's are
    (tests/fixtures/guarded): `lazygen new` takes it for C, not C++, and its
    spec builds and serves a program as the library does."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("lazygen build uses the plain compiler whatever the build: checked once, in "
                     "the default one")
    d = t.workdir("new_guarded")
    src = os.path.join(FIXTURES, "guarded")
    real = t.compile_c(f"{d}/libguarded.so.1", [f"{src}/guarded.c", "-Wl,-soname,libguarded.so.1"],
                       shared=True)
    r = lazygen("new", real, "-I", src, "--out", f"{d}/guarded.toml")
    t.equal(r.returncode, 0, f"lazygen new: {r.stderr}")
    t.contains(open(f"{d}/guarded.toml").read(), 'headers = ["guarded.h"]', "the header, read as C")
    r = lazygen("build", f"{d}/guarded.toml", "--out", f"{d}/out", "--library", real)
    t.equal(r.returncode, 0, f"lazygen build: {r.stderr[-2000:]}")
    flags = shlex.split(t.run(["pkg-config", "--cflags", "--libs", "lazyguarded"],
                              env={"PKG_CONFIG_PATH": f"{d}/out"}, check_rc=0).stdout)
    exe = t.compile_c(f"{d}/prog", [f"{src}/prog.c"] + flags)
    r = t.run([exe], env={"LAZYGUARDED_LIBPATH": real})
    t.equal((r.returncode, r.stdout), (0, "guarded 1.0 42\n"), f"through the shim: {r.stderr}")


@case
def real_tools_on_ffi_and_pcre2_drop_ins():
    """Debian's own prebuilt tools on drop-ins made by `lazygen new` and
    `lazygen build`: python3's ctypes (its _ctypes takes the addresses of
    libffi's exported type variables) and pcre2grep (PCRE2's macro-renamed
    8-bit API) print what they print on the real libraries; with the
    library absent (its override naming no file) each stops with exit 127
    and the dynamic linker's words naming it, printing nothing made up
    (ctypes said "sizeof(py_object) wrong: 0 instead of 8")."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("lazygen build uses the plain compiler whatever the build: checked once, in "
                     "the default one")
    py = "/usr/bin/python3"
    script = "import ctypes; print(ctypes.sizeof(ctypes.py_object), ctypes.CDLL(None).abs(-5))"
    grep = shutil.which("pcre2grep")
    for ident, soname, args, cmd, stdin in (
            ("ffi", "libffi.so.8", [], [py, "-c", script], None),
            ("pcre28", "libpcre2-8.so.0", ["-D", "PCRE2_CODE_UNIT_WIDTH=8"], [grep, "-c", "a+b"],
             "aab\nxyz\nab\n")):
        real = f"{MULTIARCH}/{soname}"
        if not os.path.exists(real) or not cmd[0] or not os.path.exists(cmd[0]):
            raise t.Skip(f"no {real} or {cmd[0]} (libffi-dev, pcre2-utils)")
        d = t.workdir(f"tools_{ident}")
        r = lazygen("new", soname, "--out", f"{d}/{ident}.toml", *args)
        t.equal(r.returncode, 0, f"lazygen new {soname}: {r.stderr}")
        r = lazygen("build", f"{d}/{ident}.toml", "--out", f"{d}/out")
        t.equal(r.returncode, 0, f"lazygen build {soname}: {r.stderr[-2000:]}")
        plain = t.run(cmd, input=stdin)
        t.equal(plain.returncode, 0, f"{cmd[0]} on the real library: {plain.stderr}")
        env = {"LD_LIBRARY_PATH": f"{d}/out/dropin"}
        r = t.run(cmd, env=env, input=stdin)
        t.equal((r.returncode, r.stdout), (0, plain.stdout), f"{cmd[0]} on the drop-in: {r.stderr}")
        env[f"LAZY{ident.upper()}_LIBPATH"] = f"{d}/nowhere/{soname}"
        r = t.run(cmd, env=env, input=stdin)
        t.equal((r.returncode, r.stdout), (127, ""), f"{cmd[0]}, {soname} absent: {r.stderr[-1500:]}")
        t.contains(r.stderr, f"error while loading shared libraries: {soname}", f"{soname} absent: the words")


@case
def dlopen_flags_from_the_spec():
    """tests/specs/zlib.toml with dlopen_flags = ["RTLD_GLOBAL"], by lazygen
    build: the first call opens libz into the global scope (the dynamic
    linker's LD_DEBUG=scopes: "add .../libz.so.1 [0] to global scope"), and
    the same spec without the key does not; a flag not in the list is named
    with the ones allowed."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("lazygen build uses the plain compiler whatever the build: checked once, "
                     "in the default one")
    d = t.workdir("onelib_dlopen_flags")
    with open(os.path.join(t.SOURCE, "tests", "specs", "zlib.toml")) as f:
        text = f.read()
    src = os.path.join(d, "first.c")
    with open(src, "w") as f:
        f.write("#include <zlib.h>\n#include <stdio.h>\n"
                "int main(void) { printf(\"zlib %s\\n\", zlibVersion()); return 0; }\n")
    seen = {}
    for name, extra in (("global", 'dlopen_flags = ["RTLD_GLOBAL"]\n'), ("plain", "")):
        os.makedirs(f"{d}/{name}", exist_ok=True)
        spec = f"{d}/{name}/zlib.toml"
        with open(spec, "w") as f:
            f.write(text.replace('sonames = ["libz.so.1"]\n', 'sonames = ["libz.so.1"]\n' + extra))
        out = f"{d}/{name}/out"
        t.equal(lazygen("build", spec, "--out", out).returncode, 0, f"{name}: lazygen build")
        exe = t.compile_c(f"{d}/{name}/first", [src, f"-I{out}", f"-L{out}", f"-Wl,-rpath,{out}",
                                               "-llazyzlib"])
        r = t.run([exe], env={"LD_DEBUG": "scopes"}, check_rc=0)
        t.contains(r.stdout, "zlib 1.", f"{name}: the call")
        seen[name] = re.search(r"add \S*/libz\.so\.1 \[0\] to global scope", r.stderr) is not None
    t.equal(seen, {"global": True, "plain": False}, "libz in the global scope")
    bad = f"{d}/bad/zlib.toml"
    os.makedirs(os.path.dirname(bad), exist_ok=True)
    with open(bad, "w") as f:
        f.write(text.replace('sonames = ["libz.so.1"]\n', 'sonames = ["libz.so.1"]\ndlopen_flags = ["RTLD_NOW"]\n'))
    r = lazygen("build", bad, "--out", f"{d}/bad/out")
    t.equal(r.returncode, 1, "a flag not allowed")
    t.contains(r.stderr, "'dlopen_flags': 'RTLD_NOW' is not one of RTLD_GLOBAL, RTLD_DEEPBIND, RTLD_NODELETE",
               "named")



def zlib_static_shim():
    """The build's static zlib shim (the small runtime's), or Skip."""
    archive = os.path.join(t.SHIMS, "liblazyzlib.a")
    if not os.path.exists(archive):
        raise t.Skip("no zlib shim in this build (zlib.h is not installed)")
    return archive


def needs_libz(d):
    """A library of SONAME libneedz.so that needs libz, in d: never libz
    itself, and it brings the system's libz in."""
    with open(f"{d}/needz.c", "w") as f:
        f.write("#include <zlib.h>\nconst char *needz(void) { return zlibVersion(); }\n")
    return t.compile_c(f"{d}/libneedz.so", [f"{d}/needz.c", "-fPIC", "-Wl,-soname,libneedz.so", "-lz"],
                       shared=True)


WHERE_LIBZ = r"""
#include <stdio.h>
#include <string.h>
#include <zlib.h>
const char *lazyzlib_loaded_step(void) __attribute__((weak));
int main(void)
{
    const char *v = zlibVersion();
    char line[4096], where[4096] = "none";
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (p && strstr(p, "/libz.so")) {
            p[strcspn(p, "\n")] = '\0';
            snprintf(where, sizeof where, "%s", p);
        }
    }
    printf("version %s mapped %s step %s\n", v, where,
           lazyzlib_loaded_step ? lazyzlib_loaded_step() : "-");
    return 0;
}
"""


@case
def small_runtime_loads_what_ld_so_would():
    """zlib's static shim takes the small runtime (its spec uses nothing
    but the dynamic linker's search): the program's link takes no member of
    the full runtime's search, and its first call is dlopen by name from
    the program. A program linked -lz and the same program linked to the
    static shim map the same libz, row by row: a copy on a ';'-separated
    LD_LIBRARY_PATH, a copy in a DT_RUNPATH with $ORIGIN, a DT_RPATH copy
    before LD_LIBRARY_PATH's, the system's, and under a preloaded object
    that wraps dlopen (the C library's own dlopen is called, so the search
    is still the program's); the shim's step is "dynamic linker". LAZYZLIB_LIBPATH still comes first and is authoritative; with
    it naming nothing, the calls get the spec's failure values and the
    report names the candidate."""
    archive = zlib_static_shim()
    d = t.workdir("onelib_small_runtime")
    src = f"{d}/where.c"
    with open(src, "w") as f:
        f.write(WHERE_LIBZ)
    system = os.path.realpath(t.real_library("libz.so.1"))
    for sub in ("ldlp", "bin/lib", "rpath"):
        os.makedirs(f"{d}/{sub}")
        shutil.copy(system, f"{d}/{sub}/libz.so.1")
    os.makedirs(f"{d}/bin/none", exist_ok=True)

    def both(name, args, control=True):
        plain = t.compile_c(f"{d}/bin/{name}-plain", [src], args + ["-lz"])
        mapfile = f"{d}/{name}.map"
        # The program names the control API weakly (so that its plain build
        # links): -u takes the control API's member, as a strong reference
        # would.
        shim = t.compile_c(f"{d}/bin/{name}-shim", [src], args + [
            f"-Wl,-Map={mapfile}", archive, "-ldl", "-lpthread"] + t.sanitizer_link_args() +
            (["-Wl,-u,lazyzlib_loaded_step"] if control else []))
        # The map's first section: each archive member the link took, one a
        # line ("ARCHIVE(MEMBER)", or a thin archive's member path).
        with open(mapfile) as f:
            first = f.read().split("\n\n")[1]
        taken = [os.path.basename(m.split("(")[-1].rstrip(")")) for m in first.splitlines()
                 if m and not m[0].isspace()]
        return plain, shim, taken

    plain, shim, taken = both("where", [])
    t.check("lz_small" in " ".join(taken) and not any("search" in m or "linker" in m for m in taken),
            f"the small runtime, and nothing of the full one's search: {taken}")
    t.check(any("lz_small_control" in m for m in taken) and any("zlib_control" in m for m in taken),
            f"a program calling the control API takes its members: {taken}")
    # One that calls none of it (a weak reference takes no member) takes
    # none of the control API, and still loads libz.
    _, quiet, taken_quiet = both("quiet", [], control=False)
    t.check(any("lz_small" in m for m in taken_quiet)
            and not any("control" in m for m in taken_quiet),
            f"a program calling none of the control API takes none of it: {taken_quiet}")
    t.contains(t.run([quiet], check_rc=0).stdout, f"mapped {system} step -",
               "without the control API: the calls load the library")
    runpath = both("runpath", ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib"])[:2]
    rpath = both("rpath", ["-Wl,--disable-new-dtags", f"-Wl,-rpath,{d}/rpath"])[:2]
    # A preloaded object that wraps dlopen, as a sanitizer or a profiler
    # does: glibc would search on its behalf, were it the caller.
    with open(f"{d}/wrap.c", "w") as f:
        f.write("#define _GNU_SOURCE\n#include <dlfcn.h>\n"
                "void *dlopen(const char *f, int m) { void *(*real)(const char *, int) = "
                "(void *(*)(const char *, int))dlsym(RTLD_NEXT, \"dlopen\"); return real(f, m); }\n")
    wrap = t.compile_c(f"{d}/wrap.so", [f"{d}/wrap.c", "-fPIC", "-ldl"], shared=True)
    # (A sanitizer's runtime must come first in the process: under one, it
    # is the wrapper, and the other rows are that row.)
    # The same wrapper under the C library's file name: the C library is
    # known by what it holds (glibc's gnu_get_libc_version), not its name.
    os.makedirs(f"{d}/named", exist_ok=True)
    shutil.copy(wrap, f"{d}/named/libc.so.6")
    wrapped = [] if t.SANITIZE not in ("", "none") else [
        ("DT_RUNPATH, under a preloaded dlopen wrapper", runpath, {"LD_PRELOAD": wrap},
         f"{d}/bin/lib/libz.so.1"),
        ("DT_RUNPATH, under a preloaded dlopen wrapper named libc.so.6", runpath,
         {"LD_PRELOAD": f"{d}/named/libc.so.6"}, f"{d}/bin/lib/libz.so.1")]
    rows = wrapped + [
        ("the system's", (plain, shim), {}, system),
        ("';'-separated LD_LIBRARY_PATH", (plain, shim), {"LD_LIBRARY_PATH": f"{d}/bin/none;{d}/ldlp"},
         f"{d}/ldlp/libz.so.1"),
        ("DT_RUNPATH with $ORIGIN", runpath, {}, f"{d}/bin/lib/libz.so.1"),
        ("LD_LIBRARY_PATH before DT_RUNPATH", runpath, {"LD_LIBRARY_PATH": f"{d}/ldlp"},
         f"{d}/ldlp/libz.so.1"),
        ("DT_RPATH before LD_LIBRARY_PATH", rpath, {"LD_LIBRARY_PATH": f"{d}/ldlp"},
         f"{d}/rpath/libz.so.1"),
    ]
    for what, (p, s), env, want in rows:
        a = t.run([p], env=env, check_rc=0).stdout
        b = t.run([s], env=env, check_rc=0).stdout
        t.equal(a.split(" step ")[0], b.split(" step ")[0], f"{what}: plain and the static shim")
        t.contains(b, f"mapped {os.path.realpath(want) if want == system else want} step dynamic linker",
                   f"{what}: the file and the step")
    # A copy loaded before the first call (preloaded): the dlopen by name
    # finds it and loads nothing new, and the step says so.
    # (Not under a sanitizer, whose runtime must come first.)
    if t.SANITIZE in ("", "none"):
        env = {"LD_PRELOAD": f"{d}/ldlp/libz.so.1"}
        a, b = (t.run([p], env=env, check_rc=0).stdout for p in (plain, shim))
        t.equal(b, a.replace(" step -", " step already loaded"), "a preloaded copy: plain and the static shim")
    # What the first call asks of the filesystem: what plain's start asks,
    # and the cache opened once more (ld.so unmaps it after the start, and
    # any dlopen by name opens and stats it again).
    if shutil.which("strace") and t.SANITIZE in ("", "none"):
        opened = []
        for exe in (plain, shim):
            t.run(["strace", "-f", "-qq", "-e", "trace=%file", "-o", f"{d}/trace", exe], check_rc=0)
            with open(f"{d}/trace") as f:
                calls = [c for c in f.read().splitlines() if "execve(" not in c and "+++" not in c]
            cache = sum("ld.so.cache" in c for c in calls)
            opened.append((len(calls) - 2 * cache, sum(" = -1 " in c for c in calls),
                           sum("libz.so" in c and "openat(" in c for c in calls)))
        t.equal(opened[1], opened[0], "(file calls but the cache's, failed, opens of libz): the static "
                                      "shim's and plain's")
    # What the first call asks of the C library: each function a program
    # calls for the first time is looked up in every object of the process
    # (lazy binding), so the runtime binds none it can do without.
    if t.SANITIZE in ("", "none"):
        bound = []
        for exe in (plain, shim):
            err = t.run([exe], env={"LD_DEBUG": "bindings"}, check_rc=0).stderr
            bound.append({m.group(1) for m in re.finditer(
                r"binding file \S+ \[0\] to \S+/libc\.so\.6 \[0\]: normal symbol `([^']+)'", err)})
        extra = sorted(bound[1] - bound[0])
        # (__errno_location: errno kept as the program left it;
        # gnu_get_libc_version: its address alone, which tells the C
        # library among the loaded objects.)
        t.check(set(extra) <= {"dlopen", "dlsym", "dlinfo", "dl_iterate_phdr", "secure_getenv",
                               "__errno_location", "gnu_get_libc_version"},
                f"the C library functions the static shim binds beyond plain's: {extra}")
    r = t.run([shim], env={"LAZYZLIB_LIBPATH": f"{d}/rpath", "LD_LIBRARY_PATH": f"{d}/ldlp"}, check_rc=0)
    t.contains(r.stdout, f"mapped {d}/rpath/libz.so.1 step LAZYZLIB_LIBPATH", "the override first")
    r = t.run([shim], env={"LAZYZLIB_LIBPATH": f"{d}/nowhere"}, check_rc=0)
    t.equal(r.stdout, "version lazyzlib: zlib could not be loaded; candidates tried:\n"
            f"  [LAZYZLIB_LIBPATH] {d}/nowhere: rejected: No such file or directory\n"
            "  LAZYZLIB_LIBPATH is set, so nothing else was tried\n mapped none step (null)\n",
            "absent: the failure value, the report")



THROWING_CHOOSER = r"""
#include <cstdio>
#include <stdexcept>
#include <zlib.h>
extern "C" void lazyzlib_set_log_callback(void (*fn)(void *, const char *), void *user);
static void log_line(void *, const char *) { throw std::runtime_error("from the log callback"); }
int main()
{
    lazyzlib_set_log_callback(log_line, nullptr);
    try {
        std::printf("version %s\n", zlibVersion());
    } catch (const std::exception &e) {
        std::printf("caught: %s\n", e.what());
    }
    lazyzlib_set_log_callback(nullptr, nullptr);
    std::printf("then %s\n", zlibVersion());
    return 0;
}
"""


@case
def first_call_unwinds_to_its_caller():
    """The assembly forward a first call goes through has its unwind entry,
    as the runtime's C functions have theirs: an unwinder (a debugger's
    backtrace, a profiler's, a C++ exception's) passes through it. Seen
    with an exception thrown by the program's log callback at the line
    naming the file chosen, which reaches the program's handler through the
    static shim, whose small runtime holds no lock: the next call loads.
    (Callbacks must still return: docs/reference/api.md.)"""
    archive = zlib_static_shim()
    d = t.workdir("onelib_unwinds")
    src = f"{d}/throw.cc"
    with open(src, "w") as f:
        f.write(THROWING_CHOOSER)
    exe = f"{d}/throw"
    t.run(["c++", "-O2", "-o", exe, src, archive, "-ldl", "-lpthread"] + t.sanitizer_link_args(), check_rc=0)
    r = t.run([exe], check_rc=0)
    version = t.run([sys.executable, "-c", "import zlib; print(zlib.ZLIB_RUNTIME_VERSION)"],
                    check_rc=0).stdout.strip()
    t.equal(r.stdout, f"caught: from the log callback\nthen {version}\n", "the handler, then the next call")



@case
def first_call_entries_are_landing_pads():
    """Built for indirect branch tracking (x86-64 -fcf-protection, AArch64
    -mbranch-protection, where the compiler marks the object as having a
    landing pad at every indirect branch's target), every thunk and every
    first call's entry, which are written in assembly, starts with one
    (endbr64, bti c): the compiler's mark is true of them too."""
    stubs = os.path.join(t.SHIMS, "zlib_stubs.c")
    if not os.path.exists(stubs):
        raise t.Skip("no zlib shim in this build (zlib.h is not installed)")
    d = t.workdir("onelib_landing")
    spec_dir = os.path.join(t.SOURCE, "tests", "specs")
    targets = [("cc", "-fcf-protection=full", "objdump", "endbr64")]
    if shutil.which("aarch64-linux-gnu-gcc") and shutil.which("aarch64-linux-gnu-objdump"):
        targets.append(("aarch64-linux-gnu-gcc", "-mbranch-protection=standard",
                        "aarch64-linux-gnu-objdump", "bti\tc"))
    for cc, flag, objdump, pad in targets:
        obj = f"{d}/{cc}.o"
        t.run([cc, flag, "-c", "-O2", "-fPIC", "-fvisibility=hidden", "-D_GNU_SOURCE",
               f"-I{t.SOURCE}/src", f"-I{t.BUILD}", f"-I{spec_dir}", stubs, "-o", obj], check_rc=0)
        text = t.run([objdump, "-d", "--no-show-raw-insn", obj], check_rc=0).stdout
        first = dict(re.findall(r"^[0-9a-f]+ <([^>]+)>:\n\s+[0-9a-f]+:\s+([^\n]+)", text, re.M))
        entries = {n: i for n, i in first.items() if n.startswith("lz_r_") or n in ("zlibVersion", "crc32",
                                                                                   "gzprintf")}
        t.check(len(entries) > 80, f"{cc}: the entries found: {len(entries)}")
        bare = sorted(n for n, i in entries.items() if not i.strip().startswith(pad.replace("\\t", "\t")))
        t.equal(bare, [], f"{cc} {flag}: entries without a landing pad")

ERRNO_LIBZ = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
int main(void)
{
    errno = 1234;
    const char *v = zlibVersion();
    printf("%s errno %d\n", strcmp(v, ZLIB_VERSION) == 0 ? "version" : "failure", errno);
    return 0;
}
"""


@case
def first_call_leaves_errno_as_it_was():
    """A first call the library serves finds errno as the program left it,
    as plain's call does: the search's failed opens and probes are the
    runtime's own, through the shared shim (the full runtime) and the
    static shim (the small one). One that gets its failure value finds
    errno saying a library is missing (ELIBACC)."""
    archive = zlib_static_shim()
    d = t.workdir("onelib_errno")
    src = f"{d}/errno.c"
    with open(src, "w") as f:
        f.write(ERRNO_LIBZ)
    plain = t.compile_c(f"{d}/plain", [src, "-lz"])
    shared = t.compile_c(f"{d}/shared", [src, f"-L{t.SHIMS}", "-llazyzlib", f"-Wl,-rpath,{t.SHIMS}"]
                         + t.sanitizer_link_args())
    static = t.compile_c(f"{d}/static", [src, archive, "-ldl", "-lpthread"] + t.sanitizer_link_args())
    t.equal(t.run([plain], check_rc=0).stdout, "version errno 1234\n", "plain")
    for exe in (shared, static):
        t.equal(t.run([exe], check_rc=0).stdout, "version errno 1234\n", f"{os.path.basename(exe)} shim")
        t.equal(t.run([exe], env={"LAZYZLIB_LIBPATH": f"{d}/nowhere"}, check_rc=0).stdout,
                f"failure errno {errno.ELIBACC}\n", f"{os.path.basename(exe)} shim, the library absent")


RACE_LIBZ = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
enum { MAX = 256 };
static pthread_barrier_t start;
static uLong crcs[MAX];
static int wrong, forking;
static void *first_calls(void *arg)
{
    long k = (long)arg;
    unsigned char buf[32];
    memset(buf, (int)k, sizeof buf);
    pthread_barrier_wait(&start);
    crcs[k] = crc32(0L, buf, sizeof buf);
    if (strcmp(zlibVersion(), ZLIB_VERSION) != 0 || compressBound(1000) < 1000)
        __atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
    if (forking && k % 16 == 0) {
        pid_t p = fork();
        if (p == 0)
            _exit(strcmp(zlibVersion(), ZLIB_VERSION) != 0);
        int st = 0;
        if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            __atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}
int main(int argc, char **argv)
{
    long n = atol(argv[1]);
    forking = argc > 2;
    pthread_t th[MAX];
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (long k = 0; k < n; k++)
        pthread_create(&th[k], NULL, first_calls, (void *)k);
    for (long k = 0; k < n; k++)
        pthread_join(th[k], NULL);
    for (long k = 0; k < n; k++) { /* again, the library long loaded */
        unsigned char buf[32];
        memset(buf, (int)k, sizeof buf);
        wrong += crc32(0L, buf, sizeof buf) != crcs[k];
    }
    char line[4096], first[4096] = "";
    int copies = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (p && strstr(p, "/libz.so") && strcmp(p, first) != 0) {
            copies += first[0] == '\0';
            snprintf(first, sizeof first, "%s", p);
        }
    }
    printf("%ld threads: %d wrong, %d cop%s of libz\n", n, wrong, copies, copies == 1 ? "y" : "ies");
    return 0;
}
"""


@case
def small_runtime_first_calls_at_once():
    """64 threads make their first calls into zlib's static shim (the small
    runtime, which takes no lock: every thread searches, the first to
    publish wins) at once, 20 runs, and the same with every sixteenth
    thread forking a child that calls in, and with a first candidate every
    thread refuses and unloads: every answer right (each thread's crc32
    again once loaded), no crash, no hang, and one copy of libz mapped."""
    archive = zlib_static_shim()
    d = t.workdir("onelib_small_race")
    with open(f"{d}/race.c", "w") as f:
        f.write(RACE_LIBZ)
    exe = t.compile_c(f"{d}/race", [f"{d}/race.c", archive, "-ldl", "-lpthread"] + t.sanitizer_link_args())
    # A candidate every thread refuses (and unloads) before the one it takes.
    needz = needs_libz(d)
    refused = {"LAZYZLIB_LIBPATH": f"{needz}:{os.path.realpath(t.real_library('libz.so.1'))}"}
    for fork, env in (((), {}), (("fork",), {}), ((), refused)):
        bad = []
        for _ in range(20):
            r = t.run([exe, "64", *fork], env=env, timeout=60)
            if (r.returncode, r.stdout) != (0, "64 threads: 0 wrong, 1 copy of libz\n"):
                bad.append(f"rc {r.returncode}: {r.stdout}{r.stderr[-600:]}")
        t.equal(bad, [], f"64 threads' first calls at once{' forking' if fork else ''}"
                         f"{' after a refused candidate' if env else ''}")



@case
def small_runtime_on_the_smallest_thread_stack():
    """zlib's first call through the small runtime on a thread whose stack
    is PTHREAD_STACK_MIN: loaded, and absent with its report (a chooser's
    path, a directory entry and a root each built on the heap), with the
    log on and off, answer what they answer on a large stack."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer's frames are several times a plain build's; the default "
                     "build runs it")
    archive = zlib_static_shim()
    d = t.workdir("onelib_small_stack")
    exe = t.compile_c(f"{d}/small_stack", [os.path.join(t.PROGS, "small_stack_zlib.c"), f"-I{t.PROGS}",
                                           archive, "-ldl", "-lpthread"])
    plain = t.run([exe], env={"LAZYNCCL_DEBUG": "0"}, check_rc=0).stdout
    for log in ({}, {"LAZYNCCL_DEBUG": "1"}):
        t.equal(t.run([exe], env=log, check_rc=0).stdout, plain, f"loaded {log}")
        r = t.run([exe], env={**log, "LAZYZLIB_LIBPATH": f"{d}/nowhere:{d}"})
        t.equal((r.returncode, r.stdout), (0, "zlibVersion: lazyzlib: zlib could not be loaded; "
                                              "candidates tried:\n"
                                              f"  [LAZYZLIB_LIBPATH] {d}/nowhere: rejected: No such file or "
                                              "directory\n"
                                              f"  [LAZYZLIB_LIBPATH] {d}/libz.so.1: rejected: cannot open "
                                              "shared object file: No such file or directory\n"
                                              "  LAZYZLIB_LIBPATH is set, so nothing else was tried\n\n"),
                f"absent {log}: {r.stderr[-400:]}")



JUDGED_LIBZ = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
int lazyzlib_set_chooser(void *(*fn)(void *, char *, size_t), void *user);
int lazyzlib_adopt(void *handle);
const char *lazyzlib_loaded_path(void);
const char *lazyzlib_last_error(void);
static const char *mode;
static void *choose(void *user, char *path, size_t size)
{
    (void)user;
    if (strcmp(mode, "next") == 0)
        return RTLD_NEXT;
    if (strcmp(mode, "program") == 0)
        return dlopen(NULL, RTLD_LAZY);
    snprintf(path, size, "%s", mode);
    return NULL;
}
int main(int argc, char **argv)
{
    if (argc > 1 && strncmp(argv[1], "adopt:", 6) == 0) {
        int rc = lazyzlib_adopt(dlopen(argv[1] + 6, RTLD_LAZY));
        printf("adopt %d: %s\n", rc, rc ? lazyzlib_last_error() : "");
    } else if (argc > 1 && strncmp(argv[1], "open:", 5) == 0) {
        dlopen(argv[1] + 5, RTLD_LAZY); /* before the first call */
    } else if (argc > 1) {
        mode = argv[1];
        lazyzlib_set_chooser((void *(*)(void *, char *, size_t))choose, NULL);
    }
    const char *v = zlibVersion(), *path = lazyzlib_loaded_path();
    printf("%s\nloaded %s\n", strcmp(v, ZLIB_VERSION) == 0 ? "the version" : v, path ? path : "-");
    return 0;
}
"""


@case
def small_runtime_judges_what_it_is_given():
    """The small runtime judges each object it is given once loaded: the
    dynamic linker must answer the soname with it. A chooser's RTLD_NEXT, a
    chooser's handle of the program, a chooser's bare name, and, in
    LAZYZLIB_LIBPATH, a library that needs libz (SONAME libneedz.so) or the
    shared shim are each refused with the failure value and a line saying
    why, where they crashed, hung or were taken. A relative LD_LIBRARY_PATH
    entry gives an absolute loaded path. A report of 3,000 entries says how
    many lines it left out and still ends with its closing line."""
    archive = zlib_static_shim()
    d = t.workdir("onelib_small_judged")
    with open(f"{d}/judged.c", "w") as f:
        f.write(JUDGED_LIBZ)
    exe = t.compile_c(f"{d}/judged", [f"{d}/judged.c", "-rdynamic", archive, "-ldl", "-lpthread"]
                      + t.sanitizer_link_args())
    needz = needs_libz(d)
    head = "lazyzlib: zlib could not be loaded; candidates tried:\n"
    not_it = ("the dynamic linker does not answer its soname with it (another SONAME, or none: not "
              "this library)")
    # libneedz brings the system's libz in: the soname's answer is that one
    other = (f"the dynamic linker answers its soname with another object ({{}}): a second copy, or not "
             "this library")
    rows = [
        (["next"], {}, f"  [chosen by the program] the handle it returned: rejected: a handle that "
                       "names no object\n"),
        (["program"], {}, f"  [chosen by the program] the handle it returned: rejected: {not_it}\n"),
        (["libz.so.1"], {}, "  [chosen by the program] libz.so.1: rejected: not an absolute path\n"),
        ([], {"LAZYZLIB_LIBPATH": needz}, f"  [LAZYZLIB_LIBPATH] {needz}: rejected: "),
        ([], {"LAZYZLIB_LIBPATH": os.path.join(t.SHIMS, "liblazyzlib.so")},
         f"  [LAZYZLIB_LIBPATH] {os.path.join(t.SHIMS, 'liblazyzlib.so')}: rejected: {not_it}\n"),
    ]
    for args, env, want in rows:
        r = t.run([exe, *args], env=env, timeout=30)
        t.equal(r.returncode, 0, f"{args} {env}: exit status: {r.stderr[-400:]}")
        t.check(r.stdout.startswith(head + want), f"{args} {env}: the report: {r.stdout}")
        t.check(r.stdout.endswith("\nloaded -\n"), f"{args} {env}: nothing loaded: {r.stdout}")
    os.makedirs(f"{d}/lib", exist_ok=True)
    shutil.copy(os.path.realpath(t.real_library("libz.so.1")), f"{d}/lib/libz.so.1")
    # A handle refused by adopt changes nothing: the search then runs as usual.
    r = t.run([exe, f"adopt:{needz}"], check_rc=0)
    t.check(re.match(r"adopt -1: lazyzlib: the handle offered to lazyzlib_adopt was refused:\n  "
                     + re.escape(other.format("@")).replace("@", "/[^)]*libz[^)]*")
                     + r"\nthe version\nloaded /", r.stdout), f"a refused adopt changes nothing: {r.stdout}")
    # A second copy while one is loaded (brought in by libneedz) is refused, naming that one.
    r = t.run([exe, f"open:{needz}"], env={"LAZYZLIB_LIBPATH": f"{d}/lib/libz.so.1"}, check_rc=0)
    t.check(re.match(re.escape(head + f"  [LAZYZLIB_LIBPATH] {d}/lib/libz.so.1: rejected: "
                               + other.format("@")).replace("@", "/[^)]*libz[^)]*"), r.stdout),
            f"a second copy: {r.stdout}")
    r = t.run([exe], env={"LD_LIBRARY_PATH": "."}, cwd=f"{d}/lib", check_rc=0)
    # absolute, as the dynamic linker and the full runtime name it
    t.equal(r.stdout, f"the version\nloaded {d}/lib/./libz.so.1\n", "a relative LD_LIBRARY_PATH entry")
    r = t.run([exe], env={"LAZYZLIB_LIBPATH": ":".join(f"/lz-none/{i}" for i in range(3000))}, check_rc=0)
    t.check(re.search(r"\n  LAZYZLIB_LIBPATH is set, so nothing else was tried\n  \.\.\. \d+ more lines left "
                      r"out \(a report holds 8192 bytes\)\n\nloaded -\n$", r.stdout),
            f"a long report's end: {r.stdout[-400:]}")



@case
def small_runtime_for_the_libraries_that_need_nothing_else():
    """Which static shims take the small runtime (their generated code
    names its entry points), as docs/reference/search-order.md's rule says:
    zlib and liblzma (one soname, nothing but the dynamic linker's search)
    do; NCCL (wheels, own answers), SQLite (variables), nvJitLink
    (versioned names) and NVRTC (two sonames) keep the full one. Each
    shared shim keeps the full one."""
    want = {"zlib": True, "lzma": True, "nccl": False, "sqlite": False, "nvjitlink": False,
            "nvrtc": False}
    got = {}
    for lib in want:
        archive = os.path.join(t.SHIMS, f"liblazy{lib}.a")
        if not os.path.exists(archive):
            continue
        undefined = t.run([os.environ.get("LZ_NM", "nm"), "-u", archive], check_rc=0).stdout
        got[lib] = "lz_small_resolve_from" in undefined
        shared = t.run([os.environ.get("LZ_NM", "nm"), os.path.join(t.SHIMS, f"liblazy{lib}.so")],
                       check_rc=0).stdout
        t.check("lz_small" not in shared, f"{lib}'s shared shim carries the full runtime alone")
    if len(got) < 2:
        raise t.Skip("fewer than two of the libraries' shims are built here")
    t.equal(got, {k: v for k, v in want.items() if k in got}, "the static shims that take the small runtime")


ZZ_H = "int zz_answer(void);\nconst char *zz_name(void);\n"
ZZ_PROG = r"""
#include <stdio.h>
#include "zz.h"
int main(void)
{
    printf("%d\n", zz_answer());
    fflush(stdout);
    printf("%s\n", zz_name());
    return 0;
}
"""


def linked_taking(out, args):
    """Link out from args, as t.compile_c does, and the archive members the
    link took (-Wl,-t,-t: each input as "ARCHIVE(MEMBER)" (gold, lld),
    "(ARCHIVE)MEMBER" (bfd), or a thin archive's member path), named as
    `ar x` names them (Meson's "small_lz_small.c.o" is lz_small.o)."""
    r = t.run(t.CC + ["-o", out] + list(args) + ["-Wl,-t,-t"], check_rc=0)
    taken = set()
    for line in (r.stdout + r.stderr).splitlines():
        line = line.strip()
        member = (line[line.index(")") + 1:] if line.startswith("(") and ")" in line
                  else line[line.index("(") + 1:-1] if line.endswith(".o)") and "(" in line else line)
        if member.endswith(".o"):
            name = re.sub(r"\.c\.o$", ".o", os.path.basename(member))
            own = re.search(r"lz_\w+\.o$", name)
            taken.add(own.group(0) if own else name)
    return taken


@case
def small_runtime_takes_what_its_library_needs():
    """The small runtime's parts a library may not need are archive members
    a static shim takes only where its library needs them: a library with a
    root and default directories (libzz, made here) and a function with no
    failure value takes the roots' steps and the stop, and each works: found
    through its default directory, through its root, and, absent, -1 from
    the function that has a failure value, then exit 127 with the stop's
    words from the one that has none. zlib's static shim, called by a
    program that calls none of the control API, takes neither, nor the
    control API (docs/concepts/performance.md, "Size")."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("lazygen build uses the plain compiler whatever the build: checked once, in "
                     "the default one")
    d = t.workdir("onelib_small_parts")
    os.makedirs(f"{d}/src", exist_ok=True)
    with open(f"{d}/src/zz.h", "w") as f:
        f.write(ZZ_H)
    with open(f"{d}/src/zz.c", "w") as f:
        f.write('int zz_answer(void) { return 42; }\nconst char *zz_name(void) { return "zz"; }\n')
    with open(f"{d}/src/prog.c", "w") as f:
        f.write(ZZ_PROG)
    for where in ("default", "root/lib"):
        os.makedirs(f"{d}/{where}", exist_ok=True)
        t.compile_c(f"{d}/{where}/libzz.so.1", [f"{d}/src/zz.c", "-Wl,-soname,libzz.so.1"], shared=True)
    with open(f"{d}/zz.toml", "w") as f:
        f.write(f'''[library]
id = "zz"
display = "zz"
shim = "lazyzz"
headers = ["zz.h"]
sonames = ["libzz.so.1"]
function_pattern = "^zz_"
feature = "zz"
description = "a library with a root and default directories"
search_roots_before = ["ZZ_ROOT:lib"]
default_dirs = ["{d}/default"]

[failure]
"int" = "-1"
''')
    r = lazygen("build", f"{d}/zz.toml", "--out", f"{d}/out", "--include-dir", f"{d}/src",
                "--library", f"{d}/default/libzz.so.1")
    t.equal(r.returncode, 0, f"lazygen build: {r.stderr[-2000:]}")
    archive = f"{d}/out/liblazyzz.a"
    t.contains(t.run(["nm", "-u", archive], check_rc=0).stdout, "lz_small_resolve_from",
               "libzz's static shim takes the small runtime")
    # Each linker at hand: gold once took a weak reference, undefined and
    # hidden, for an address, and a first call jumped into the program.
    for ld in linkers():
        exe = f"{d}/prog-{ld}"
        taken = linked_taking(exe, [f"{d}/src/prog.c", f"-I{d}/src", f"-fuse-ld={ld}", archive, "-ldl",
                                    "-lpthread"])
        for member in ("lz_small_roots.o", "lz_stop.o"):
            t.check(member in taken, f"{ld}: libzz's program takes {member}: {sorted(taken)}")
        for env, path in (({}, f"{d}/default/libzz.so.1"),
                          ({"ZZ_ROOT": f"{d}/root"}, f"{d}/root/lib/libzz.so.1")):
            r = t.run([exe], env={**env, "LAZYNCCL_DEBUG": "1"})
            t.equal((r.returncode, r.stdout), (0, "42\nzz\n"), f"{ld}: found {env}: {r.stderr[-600:]}")
            t.contains(r.stderr, f"loaded {path} (found by: ", f"{ld}: the file {env}")
        r = t.run([exe], env={"LAZYZZ_LIBPATH": f"{d}/nowhere"})
        t.equal((r.returncode, r.stdout), (127, "-1\n"), f"{ld}: absent: {r.stderr[-600:]}")
        t.contains(r.stderr, "zz_name was called, and no failure value is known for it", f"{ld}: the stop's words")
        t.contains(r.stderr, "error while loading shared libraries: libzz.so.1", f"{ld}: the dynamic linker's words")
    # zlib: every function has a failure value, no root, no default
    # directory; with the control API, a chooser that answers nothing.
    zlib = zlib_static_shim()
    with open(f"{d}/z.c", "w") as f:
        f.write(ZLIB_CHOOSER_SILENT)
    for ld in linkers():
        for chooser in (0, 1):
            exe = f"{d}/z-{ld}-{chooser}"
            taken = linked_taking(exe, [f"{d}/z.c", f"-DCHOOSER={chooser}", f"-fuse-ld={ld}", zlib, "-ldl",
                                        "-lpthread"])
            t.check("lz_small.o" in taken, f"{ld}: zlib's program takes the small runtime: {sorted(taken)}")
            t.equal(sorted(taken & {"lz_small_roots.o", "lz_stop.o", "lz_small_control.o"}),
                    ["lz_small_control.o"] if chooser else [], f"{ld}: the parts zlib's program takes")
            r = t.run([exe])
            t.equal((r.returncode, r.stdout), (0, f"the version, {'asked, ' if chooser else ''}dynamic linker\n"),
                    f"{ld}: zlib's first call{' after a chooser' if chooser else ''}: {r.stderr[-600:]}")


def linkers():
    """The linkers at hand for -fuse-ld (bfd always; gold with binutils)."""
    return [ld for ld in ("bfd", "gold", "lld") if shutil.which(f"ld.{ld}")]


ZLIB_CHOOSER_SILENT = r"""
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#if CHOOSER
const char *lazyzlib_loaded_step(void);
void lazyzlib_set_chooser(void *(*fn)(void *, char *, size_t), void *user);
static int asked;
static void *silent(void *user, char *path, size_t size)
{
    (void)user, (void)path, (void)size;
    asked = 1; /* nothing answered: the search goes on */
    return NULL;
}
#endif
int main(void)
{
#if CHOOSER
    lazyzlib_set_chooser(silent, NULL);
#endif
    const char *v = zlibVersion();
    printf("%s, ", strcmp(v, ZLIB_VERSION) == 0 ? "the version" : v);
#if CHOOSER
    printf("%s%s\n", asked ? "asked, " : "", lazyzlib_loaded_step());
#else
    printf("dynamic linker\n");
#endif
    return 0;
}
"""

if __name__ == "__main__":
    raise SystemExit(t.main())
