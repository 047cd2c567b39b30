#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The generator serves the whole library (issue 47): every C declaration
served or refused in one run, headers parsed together in the order given,
an exclude list."""
import os
import sys

import lztest as t
from lztest import case

GEN = os.path.join(t.SOURCE, "gen", "lazygen.py")
DECL = os.path.join(t.SOURCE, "tests", "fixtures", "declarations")


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
def bench_genscale_runs_as_documented():
    """bench/genscale (docs/performance.md) runs as documented: with N=300
    it prints the times of 300 and 3,000 functions and their ratio."""
    r = t.run([sys.executable, os.path.join(t.SOURCE, "bench", "genscale"), "300"], check_rc=0)
    t.contains(r.stdout, "| functions | 300 | 3000 | ratio (10.0: linear) |", "the header row")
    row = [x.strip() for x in r.stdout.splitlines()[-1].strip("|").split("|")]
    t.equal(row[0], "lazygen generate", "the row")
    t.check(row[1].endswith(" s") and row[2].endswith(" s") and float(row[3]) > 0, f"figures: {row}")


if __name__ == "__main__":
    raise SystemExit(t.main())
