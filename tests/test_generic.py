#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The generic core: libraries added by a spec file alone
(tests/specs/zlib.toml, tests/specs/curand.toml) work like the CUDA ones;
exported names are the header's whatever its macros do, and the build's
export check catches a renamed one."""
import glob
import json
import os
import re
import sys

import lztest as t
from lztest import case

FIXTURE = os.path.join(t.SOURCE, "tests", "fixtures", "renamed")
GEN = os.path.join(t.SOURCE, "gen")


def need(lib):
    if not os.path.exists(t.shim(lib)):
        raise t.Skip(f"liblazy{lib} was not built (its header is missing: see meson's warning)")


def zlib_client(d, shim=True):
    src = os.path.join(t.PROGS, "zlib_client.c")
    if shim:
        return t.compile_c(f"{d}/zlib_shim", [src], ["-DLZ_SHIM"] + t.link_shim_args("zlib"))
    return t.compile_c(f"{d}/zlib_direct", [src], ["-lz"] + t.sanitizer_link_args())


def lines(out):
    return dict(line.split(": ", 1) for line in out.strip().splitlines() if ": " in line)


@case
def zlib_roundtrip_lazy():
    """compress/uncompress and gzopen/gzprintf/gzgets through the shim give
    what -lz gives; libz is mapped only after the first call."""
    need("zlib")
    d = t.workdir("zlib_roundtrip")
    via_shim = t.run([zlib_client(d), "roundtrip", d], check_rc=0).stdout
    direct = t.run([zlib_client(d, shim=False), "roundtrip", d], check_rc=0).stdout
    got, want = lines(via_shim), lines(direct)
    t.equal(got["before"], "libz mappings 0", "nothing loaded before the first call")
    t.check(got["after"] != "libz mappings 0", f"libz mapped after: {via_shim}")
    t.equal(got["uncompress"], "rc=0 same=1", "round trip")
    t.equal(got["gzgets"], "1 2 3 4 5 6 7 8|eight|3.250 -0.50", "variadic arguments arrive")
    for k in ("compress", "uncompress", "gzprintf", "gzgets", "zlibVersion"):
        t.equal(got[k], want[k], f"{k}: shim and -lz agree")
    t.equal(got["last_error"], "(none)", "no error")


@case
def zlib_first_call_variadic():
    """A variadic function as the very first call: the assembly resolver
    loads the library with every argument register saved."""
    need("zlib")
    d = t.workdir("zlib_first_variadic")
    got = lines(t.run([zlib_client(d), "first-variadic"], check_rc=0).stdout)
    want = lines(t.run([zlib_client(d, shim=False), "first-variadic"], check_rc=0).stdout)
    t.equal(got["before"], "libz mappings 0", "nothing loaded before")
    t.equal(got["gzprintf(NULL)"], want["gzprintf(NULL)"], "the real gzprintf's answer")


@case
def zlib_absent_variadic_fails_cleanly():
    """No libz to be had: the variadic function returns the spec's failure
    value and the error names the cause."""
    need("zlib")
    d = t.workdir("zlib_absent")
    r = t.run([zlib_client(d), "first-variadic"], env={"LAZYZLIB_LIBPATH": f"{d}/none"},
              check_rc=0)
    got = lines(r.stdout)
    t.equal(got["gzprintf(NULL)"], "-1", "Z_ERRNO, the spec's failure value")
    t.contains(r.stdout, f"lazyzlib: zlib could not be loaded; candidates tried:\n  "
                         f"[LAZYZLIB_LIBPATH] {d}/none: rejected: No such file or directory",
               "message")
    t.equal(got["after"], "libz mappings 0", "nothing loaded")


@case
def zlib_exports_are_the_header_names():
    """gzopen, gzseek... are exported as such (not gzopen64...), and the
    64-bit names beside them, although Meson compiles with
    -D_FILE_OFFSET_BITS=64."""
    need("zlib")
    names = t.exported(t.shim("zlib"))
    for n in ("gzopen", "gzseek", "gztell", "crc32_combine", "gzopen64", "gzseek64", "gzprintf"):
        t.check(n in names, f"{n} not exported; exports: {sorted(names)[:20]}...")
    with open(os.path.join(t.SHIMS, "zlib_exports.ok")) as f:
        t.check(f.read().endswith("exports match\n"), "the build's export check ran")


@case
def curand_version_lazy():
    """curandGetVersion through the shim answers what the real library
    answers, nothing mapped before the first call."""
    need("curand")
    real = t.real_library("libcurand.so.10")
    d = t.workdir("curand")
    src = os.path.join(t.PROGS, "curand_client.c")
    exe = t.compile_c(f"{d}/curand_shim", [src], t.link_shim_args("curand"))
    direct = t.compile_c(f"{d}/curand_direct", [src], [f"-I{t.CUDA_INCLUDE}", real,
                         f"-Wl,-rpath,{os.path.dirname(real)}"] + t.sanitizer_link_args())
    got = lines(t.run([exe], check_rc=0).stdout)
    want = lines(t.run([direct], check_rc=0).stdout)
    t.equal(got["before"], "libcurand mappings 0", "nothing loaded before the first call")
    t.check(re.match(r"^rc=0 version=\d+$", got["curandGetVersion"]), got["curandGetVersion"])
    t.equal(got["curandGetVersion"], want["curandGetVersion"], "same answer as -lcurand")
    t.equal(got["after"], "libcurand mappings 1", "loaded at the first call")


@case
def info_reports_generic_libraries():
    """lazynccl-info knows the libraries from the specs: zlib and cuRAND
    would load, and --load asks each its version through the shim."""
    need("zlib")
    need("curand")
    r = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--json", "--load", "zlib", "curand"])
    doc = json.loads(r.stdout)
    by_id = {lib["id"]: lib for lib in doc["libraries"]}
    t.equal(sorted(by_id), ["curand", "zlib"], "libraries")
    for lib in by_id.values():
        t.check(lib["would_load"], f"{lib['id']} would load: {lib}")
        t.check(lib["loaded"] and lib["loaded"]["version"], f"{lib['id']} loaded: {lib['loaded']}")
    zv = t.run([zlib_client(t.workdir("info_zlib"), shim=False), "first-variadic"]).stdout
    t.equal(by_id["zlib"]["loaded"]["version"], lines(zv)["zlibVersion"], "zlib's own version")
    t.check(re.match(r"^\d+$", by_id["curand"]["loaded"]["version"]), by_id["curand"]["loaded"])
    usage = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--help"]).stdout
    served = [s.rstrip("*") for s in usage.split("Served:")[1].split("\n")[0].split()]  # "*": must load
    listed = served + usage.split("Built for the tests only:")[1].split()
    installed = [re.search(r'^id = "(\w+)"', open(p).read(), re.M).group(1)
                 for p in glob.glob(os.path.join(t.SOURCE, "stubs", "*.toml"))
                 if not re.search(r"^(install = false|visibility = \"hidden\")", open(p).read(), re.M)]
    t.equal(sorted(served), sorted(i for i in installed if os.path.exists(t.shim(i))),
            "served: the installed specs built here")
    specs = glob.glob(os.path.join(t.SOURCE, "tests", "specs", "*.toml")) + \
        [p for p in glob.glob(os.path.join(t.SOURCE, "stubs", "*.toml"))
         if 'visibility = "hidden"' not in open(p).read()]
    ids = [re.search(r'^id = "(\w+)"', open(s).read(), re.M).group(1) for s in specs]
    ids = [i for i in ids if os.path.exists(t.shim(i))]  # optional specs without headers: none
    t.equal(sorted(listed), sorted(ids), "usage lists the specs")


def fixture_exports(d):
    """The fixture spec's generated C and export list."""
    r = t.run([sys.executable, os.path.join(GEN, "lazygen.py"), "generate", f"{FIXTURE}/renamed.toml",
               "--include-dir", FIXTURE, "--cc", " ".join(t.CC), "--out-c", f"{d}/renamed_stubs.c",
               "--out-list", f"{d}/renamed_exports.txt"])
    t.equal(r.returncode, 0, f"lazygen: {r.stderr}")
    return f"{d}/renamed_stubs.c", f"{d}/renamed_exports.txt"


def check(listed, lib):
    return t.run([sys.executable, os.path.join(GEN, "check_exports.py"), "nm", listed, lib,
                  f"{lib}.ok"])


@case
def failure_key_written_as_the_macro():
    """A [failure.functions] key and a 'required' name written as a program
    writes them (wm_compile, which the header renames to wm_compile_8 by a
    pasting macro, as PCRE2 does) stand for the function they become; where
    that function is not selected, the message names it. The drop-in's
    step, run apart, keeps a required macro's function that the real
    library lacks."""
    d = t.workdir("failure_key_macro")
    with open(f"{d}/wm.h", "w") as f:
        f.write("#define WM_SUFFIX(x) x##8\nint wm_compile_8(const char *p);\nint wm_free_8(int x);\n"
                "#define wm_compile WM_SUFFIX(wm_compile_)\n#define wm_free WM_SUFFIX(wm_free_)\n"
                "#define wm_twice(x) wm_free_8(wm_free_8(x))\n")
    spec = """[library]
id = "wm"
display = "wm"
shim = "lazywm"
headers = ["wm.h"]
function_pattern = "PATTERN"
sonames = ["libwm.so.1"]
feature = "wm"
description = "macro-renamed API"
control_api = false
required = ["wm_compile"]

[failure]
"int" = "-1"

[failure.functions]
wm_compile = "-7"
"""
    gen = [sys.executable, os.path.join(GEN, "lazygen.py"), "generate", f"{d}/wm.toml",
           "--include-dir", d, "--cc", " ".join(t.CC), "--out-c", f"{d}/out.c"]
    with open(f"{d}/wm.toml", "w") as f:
        f.write(spec.replace("PATTERN", "^wm_"))
    r = t.run(gen)
    t.equal(r.returncode, 0, f"lazygen: {r.stderr}")
    text = open(f"{d}/out.c").read()
    t.check(re.search(r"LZ_FAIL\(int, wm_compile_8, \([^)]*\), -7\)", text), f"wm_compile_8 gets -7:\n{text}")
    t.check(re.search(r"LZ_FAIL\(int, wm_free_8, \([^)]*\), -1\)", text), "wm_free_8 its type's -1")
    with open(f"{d}/wm.toml", "w") as f:
        f.write(spec.replace("PATTERN", "^wm_free"))
    r = t.run(gen)
    t.equal(r.returncode, 1, f"lazygen: {r.stderr}")
    t.contains(r.stderr, "[failure.functions]: wm_compile is not a function the header declares and "
               "function_pattern selects (the header's macros make it wm_compile_8, which "
               "function_pattern does not select)", "the message names the expansion")
    # The drop-in's own step (Meson runs it apart): a real library that
    # lacks wm_compile_8 still gets it exported, 'required' naming it as
    # the macro; the headers' directory tells the step what it becomes.
    with open(f"{d}/wm.toml", "w") as f:
        f.write(spec.replace("PATTERN", "^wm_"))
    t.run(gen + ["--out-list", f"{d}/exports.txt"], check_rc=0)
    with open(f"{d}/real.c", "w") as f:
        f.write("int wm_free_8(int x) { return x; }\n")
    real = t.compile_c(f"{d}/libwm.so.1", [f"{d}/real.c"], ["-Wl,-soname,libwm.so.1"], shared=True)
    step = [sys.executable, os.path.join(GEN, "lazygen.py"), "dropin", f"{d}/wm.toml", "--soname", "libwm.so.1",
            "--exports", f"{d}/exports.txt", "--library", real, "--cc", " ".join(t.CC),
            "--out-map", f"{d}/wm.map", "--out-symver", f"{d}/wm_symver.h"]
    r = t.run(step + ["--include-dir", d], check_rc=0)
    t.contains(open(f"{d}/wm.map").read(), "wm_compile_8;", f"required as the macro, kept: {r.stderr}")
    t.check("leaves out" not in r.stderr, f"nothing left out: {r.stderr}")
    # A function-like macro becomes no one name: the message says so.
    with open(f"{d}/wm.toml", "w") as f:
        f.write(spec.replace("PATTERN", "^wm_").replace('required = ["wm_compile"]', 'required = ["wm_twice"]'))
    r = t.run(gen)
    t.equal(r.returncode, 1, f"lazygen: {r.stderr}")
    t.contains(r.stderr, "'required': wm_twice is not a function the header declares and function_pattern "
               "selects (the header defines it as a macro that becomes no one name, a function-like "
               "macro or an expression: name the function it calls)", "a function-like macro")


@case
def export_check_fails_on_macro_renamed_name():
    """A shim whose thunk name went through the header's macro (as ours did
    before: zlib's gzopen became gzopen64) fails the check, which names the
    listed name and the one exported instead."""
    d = t.workdir("export_check_renamed")
    _, listed = fixture_exports(d)
    old = t.compile_c(f"{d}/librenamed_old.so", [f"{FIXTURE}/old_thunks.c"],
                      [f"-I{FIXTURE}", "-DRN_RENAME"], shared=True)
    r = check(listed, old)
    t.equal(r.returncode, 1, "the check fails")
    t.contains(r.stderr, "listed, not exported: rn_open\n", "names the header's name")
    t.contains(r.stderr, "exported, not listed: rn_open_v2\n", "names the renamed one")


@case
def export_check_passes_whatever_the_macros():
    """The generated shim of the same fixture, compiled with the renaming
    macro defined (a define generation never saw), still exports rn_open."""
    d = t.workdir("export_check_generated")
    c, listed = fixture_exports(d)
    lib = t.compile_c(f"{d}/liblazyrenamed.so", [c, os.path.join(t.SHIMS, "liblzruntime.a")],
                      [f"-I{FIXTURE}", f"-I{t.SOURCE}/src", "-DRN_RENAME", "-fvisibility=hidden",
                       "-D_GNU_SOURCE", "-ldl", "-lpthread"] + t.sanitizer_link_args(), shared=True)
    r = check(listed, lib)
    t.equal(r.returncode, 0, f"the check passes: {r.stderr}")
    t.equal(sorted(t.exported(lib)), ["rn_close", "rn_open"], "exports")


@case
def variadic_left_out_with_a_note_on_c_thunk_targets():
    """Generating zlib's shim for a target with C thunks (the generator asks
    the compiler for its predefined macros; here one that defines neither
    __x86_64__ nor __aarch64__): gzprintf is left out, and the generator
    says so."""
    cross = " ".join(t.CC) + " -U__x86_64__ -U__aarch64__"
    d = t.workdir("variadic_other")
    r = t.run([sys.executable, os.path.join(GEN, "lazygen.py"), "generate",
               os.path.join(t.SOURCE, "tests", "specs", "zlib.toml"), "--include-dir", "/usr/include",
               "--cc", cross, "--out-c", f"{d}/z.c", "--out-list", f"{d}/z.txt"])
    t.equal(r.returncode, 0, f"lazygen: {r.stderr}")
    t.contains(t.flat(r.stderr), "note: gzprintf is variadic and is not served on other "
                         "(a C thunk cannot forward '...')", "the note")
    with open(f"{d}/z.txt") as f:
        names = f.read().split()
    t.check("gzprintf" not in names and "gzputs" in names, f"exports: {names}")


if __name__ == "__main__":
    raise SystemExit(t.main())
