#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests against the real CUDA 13.0 libraries (skip where absent)."""
import filecmp
import os
import shutil
import sys

import lztest as t
from lztest import case


def build_client(d, direct=False):
    src = os.path.join(t.PROGS, "nccl_client.c")
    if direct:
        lib = os.path.dirname(t.real_library("libnccl.so.2"))
        return t.compile_c(os.path.join(d, "client_direct"), [src],
                           ["-DDIRECT", f"-I{t.NCCL_INCLUDE}", f"-L{lib}", f"-Wl,-rpath,{lib}",
                            "-l:libnccl.so.2"])
    return t.compile_c(os.path.join(d, "client_shim"), [src], t.link_shim_args("nccl"))


@case
def pkgconfig_lazy_version():
    """Built with `pkg-config --cflags --libs lazynccl` only: NCCL is not mapped
    before the first call, is after, and gives the direct link's version."""
    t.real_library("libnccl.so.2")
    d = t.workdir("pkgconfig_lazy_version")
    env = {"PKG_CONFIG_PATH": os.path.join(t.BUILD, "meson-uninstalled")}
    flags = t.run(["pkg-config", "--cflags", "--libs", "lazynccl"], env=env, check_rc=0).stdout.split()
    t.check("-llazynccl" in flags and not any("-lnccl" == f for f in flags),
            f"pkg-config flags: {flags}")
    exe = t.compile_c(os.path.join(d, "client"), [os.path.join(t.PROGS, "nccl_client.c")],
                      flags + [f"-Wl,-rpath,{t.SHIMS}"] + t.sanitizer_link_args())
    needed = t.run(["readelf", "-d", exe], check_rc=0).stdout
    t.check("libnccl" not in needed, "the program has a DT_NEEDED on libnccl")
    lazy = t.run([exe, "version"], check_rc=0).stdout.split()
    direct = t.run([build_client(d, direct=True), "version"], check_rc=0).stdout.split()
    t.equal(lazy[0], "before=0", "libnccl mapped before the first call")
    t.equal(lazy[3], "after=1", "libnccl mapped after the first call")
    t.equal(lazy[1:3], direct[1:3], "rc and version, shim vs direct")
    t.equal(direct[1], "rc=0", "direct ncclGetVersion")


@case
def first_call_maps_no_libelf():
    """The first call probes the real NCCL without libelf (the probe reads
    the dynamic segment): after it, NCCL is mapped once and libelf not at
    all, and the answer is the direct link's."""
    t.real_library("libnccl.so.2")
    d = t.workdir("first_call_no_libelf")
    out = t.run([build_client(d), "call", "ncclGetVersion"], check_rc=0).stdout
    direct = t.run([build_client(d, direct=True), "version"], check_rc=0).stdout.split()
    t.contains(out, f"ncclGetVersion: rc=0 value={direct[2].split('=')[1]}", "answer")
    t.contains(out, "copies=1", "NCCL mapped once")
    t.contains(out, "libelf_mapped=0", "libelf mapped")


@case
def unique_id():
    """ncclGetUniqueId through the shim answers like the direct library."""
    t.real_library("libnccl.so.2")
    d = t.workdir("unique_id")
    lazy = t.run([build_client(d), "uniqueid"], check_rc=0).stdout.strip()
    direct = t.run([build_client(d, direct=True), "uniqueid"], check_rc=0).stdout.strip()
    t.equal(lazy, direct, "ncclGetUniqueId result, address family and content")
    t.check(direct.startswith("rc=0 ") and direct.endswith("nonzero=1"), direct)


@case
def nvrtc_nvjitlink_bytes():
    """PTX and cubin made through the shims are byte-identical to the direct ones."""
    rtc = os.path.dirname(t.real_library("libnvrtc.so.13"))
    jit = os.path.dirname(t.real_library("libnvJitLink.so.13"))
    d = t.workdir("nvrtc_nvjitlink_bytes")
    src = os.path.join(t.PROGS, "rtc_link.c")
    shim = t.compile_c(os.path.join(d, "shim"), [src], t.link_shim_args("nvrtc", "nvjitlink"))
    direct = t.compile_c(os.path.join(d, "direct"), [src],
                         [f"-I{t.CUDA_INCLUDE}", f"-L{rtc}", f"-L{jit}", f"-Wl,-rpath,{rtc}",
                          "-l:libnvrtc.so.13", "-l:libnvJitLink.so.13"])
    a = t.run([shim, f"{d}/shim.ptx", f"{d}/shim.cubin"], check_rc=0).stdout
    b = t.run([direct, f"{d}/direct.ptx", f"{d}/direct.cubin"], check_rc=0).stdout
    t.equal(a, b, "sizes")
    t.check(filecmp.cmp(f"{d}/shim.ptx", f"{d}/direct.ptx", shallow=False), "PTX differs")
    t.check(filecmp.cmp(f"{d}/shim.cubin", f"{d}/direct.cubin", shallow=False), "cubin differs")
    with open(f"{d}/shim.cubin", "rb") as f:
        t.equal(f.read(4), b"\x7fELF", "cubin magic")


@case
def callers_bound_after_load_reach_library():
    """An own-answer function's call bound after the load is one jump into
    the real library, as if linked to it (src/api/lz_bind.h): the program's PLT
    slot holds NCCL's own ncclGetErrorString and ncclGetLastError (NCCL
    2.28.9 exports every name of the spec). Every other export stays a
    plain function whose thunk is one jump from NCCL (ncclCommCount, bound
    after the load too), as does a call bound before the load; every
    answer is the real library's."""
    real = t.real_library("libnccl.so.2")
    d = t.workdir("callers_bound_after_load")
    exe = t.bind_client(d)
    out = t.run([exe, "got:ncclGetVersion", "version", "errstr", "lasterr", "count",
                 "got:ncclGetVersion", "got:ncclGetErrorString", "got:ncclGetLastError",
                 "got:ncclCommCount"], check_rc=0).stdout
    lines = out.splitlines()
    t.equal(lines[0], f"got:ncclGetVersion={exe}", "unbound before the first call: its PLT entry")
    t.equal(lines[1:5], ["version=22809 rc=0", "errstr=no error", "lasterr=", "count=4"],
            "the real library's answers")
    got = t.bound_slots(out)
    for name in ("ncclGetVersion", "ncclCommCount"):
        t.check(os.path.samefile(got[name], t.shim("nccl")), f"{name}: {out}")
    for name in ("ncclGetErrorString", "ncclGetLastError"):
        t.check(os.path.samefile(got[name], real), f"{name} bound after the load: {out}")


@case
def bind_now_callers_keep_thunk():
    """Under BIND_NOW every caller is bound at start-up, before any load: each
    keeps the thunk (one more jump), and the calls answer as before."""
    t.real_library("libnccl.so.2")
    d = t.workdir("bind_now_callers")
    out = t.run([t.bind_client(d), "version", "errstr", "count", "got:ncclGetVersion",
                 "got:ncclGetErrorString", "got:ncclCommCount"],
                env={"LD_BIND_NOW": "1"}, check_rc=0).stdout
    t.equal(out.splitlines()[:3], ["version=22809 rc=0", "errstr=no error", "count=4"], "answers")
    for name, f in t.bound_slots(out).items():
        t.check(os.path.samefile(f, t.shim("nccl")), f"{name}: {out}")


def gdb_batch(exe, env, *commands):
    """gdb's output for exe run under these commands, or Skip without gdb."""
    if not shutil.which("gdb"):
        raise t.Skip("gdb is not installed")
    cmd = ["gdb", "-q", "-batch", "-nx"]
    for k, v in env.items():
        cmd += ["-ex", f"set environment {k}={v}"]
    for c in commands:
        cmd += ["-ex", c]
    return t.run(cmd + ["--args"] + exe, check_rc=0).stdout


@case
def gdb_breaks_on_shim_functions():
    """gdb stops on NCCL's functions through the shared shim as it does on a
    program linked to NCCL: a breakpoint on a plain export, set before the
    run, stops at the shim's thunk and then in NCCL's function; one on an
    own-answer function (an indirect function) does, with the program's
    calls bound at start-up (LD_BIND_NOW=1), the workaround that
    docs/reference/limitations.md gives for gdb's assertion on an indirect function
    whose name the loaded library defines too."""
    real = t.real_library("libnccl.so.2")
    if t.SANITIZE not in ("", "none"):
        raise t.Skip(f"sanitizer build ({t.SANITIZE}): gdb runs the default build's programs")
    d = t.workdir("gdb_breaks")
    exe = t.bind_client(d)
    for name, env in (("ncclCommCount", {}), ("ncclGetErrorString", {"LD_BIND_NOW": "1"})):
        out = gdb_batch([exe, "version", "errstr", "count"], env, f"break {name}", "run", "continue")
        t.check("internal-error" not in out, f"gdb failed on {name}:\n{out}")
        hits = [line for line in out.splitlines() if line.startswith("Breakpoint 1.")]
        t.check(any(name in h and "liblazynccl.so" in h for h in hits),
                f"no stop at the shim's thunk of {name}:\n{out}")
        t.check(any(f", {name} (" in h and "liblazynccl.so" not in h for h in hits),
                f"no stop in NCCL's {name} ({real}):\n{out}")


@case
def static_link():
    """The static shim works the same, and the program has no DT_NEEDED on NCCL."""
    t.real_library("libnccl.so.2")
    d = t.workdir("static_link")
    exe = t.compile_c(os.path.join(d, "client"), [os.path.join(t.PROGS, "nccl_client.c")],
                      [f"-I{t.SOURCE}/include", f"-I{t.BUILD}", f"-I{t.SHIMS}", f"-I{t.NCCL_INCLUDE}", t.shim("nccl", static=True),
                       "-ldl", "-lpthread"] + t.sanitizer_link_args())
    t.check("lazynccl" not in t.run(["readelf", "-d", exe], check_rc=0).stdout,
            "statically linked program still needs liblazynccl")
    out = t.run([exe, "version"], check_rc=0).stdout
    t.check(out.startswith("before=0 rc=0 version=2") and out.strip().endswith("after=1"), out)


@case
def demo():
    """The main job: lazynccl-demo shows nothing mapped before, all three after."""
    t.real_library("libnccl.so.2")
    out = t.run([os.path.join(t.BUILD, "lazynccl-demo")], check_rc=0).stdout
    before, after = out.split("loaded by the shims:")
    for lib in ("libnccl.so", "libnvrtc.so", "libnvJitLink.so"):
        t.check(f"{lib}" in before and before.count("not mapped") == 3, before)
        t.contains(after.split("after:")[1], "/" + lib, "mapped after")
    t.contains(out, "ncclGetVersion: 2", "demo output")
    t.contains(out, "sm_90 cubin", "demo output")


@case
def bench_versus_runs_as_documented():
    """bench/versus (docs/concepts/performance.md, "Beside Implib.so") runs as
    documented without an Implib.so checkout: it says why Implib.so's column
    is left out, prints every row for direct linking and both shims, each
    mechanism's 32 threads agree in every process, the two floors of a
    probing first call are measured (and not held against an Implib.so it
    does not have), and with the library
    hidden the program linked to the real one stops before main (127) while
    both shims return ncclSystemError (2) and exit 0."""
    t.real_library("libnccl.so.2")
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("the bench links the static shim without a sanitizer's runtime; the default build runs it")
    env = {"LAZYNCCL_IMPLIB_DIR": "", "NCCL_INCLUDE": t.NCCL_INCLUDE}
    r = t.run([sys.executable, os.path.join(t.SOURCE, "bench", "versus"), t.BUILD, "--quick"],
              env=env, check_rc=0)
    out = r.stdout
    t.contains(out, "Implib.so left out: no Implib.so checkout", "the reason for the missing column")
    t.contains(out, "| measurement | direct | lazynccl shared | lazynccl static | target |", "the columns")
    rows = {line.split(" | ")[0].lstrip("| "): line for line in out.splitlines() if line.startswith("| ")}
    for what in ("hot ncclGetVersion", "first call / a bare dlopen with its flags",
                 "floor: the least probe", "floor: ld.so.cache mapped",
                 "32 threads' first calls at once", "library absent: ncclGetVersion"):
        t.check(any(k.startswith(what) for k in rows), f"row {what!r} in:\n{out}")
    # the floors are measured, not printed blank: a time and a ratio
    for k, line in rows.items():
        if k.startswith("floor:"):
            t.check(" ms (" in line and "Implib.so" not in k, f"floor row without Implib.so: {line}")
    t.contains(rows["32 threads' first calls at once"], "| 20/20 ok | 20/20 ok | 20/20 ok |", "threads")
    absent = rows["library absent: ncclGetVersion"]
    if "need root" not in absent:
        cells = absent.split(" | ")[1:4]
        t.check(cells[0].startswith("exit 127"), f"direct without the library: {cells[0]}")
        t.equal(cells[1:], ["exit 0, rc 2", "exit 0, rc 2"], "the shims without the library")


@case
def release_cublas_beside_cublaslt():
    """cuBLASLt loaded first, then cuBLAS (tests/progs/release_client.c):
    with no override, cuBLAS comes from the directory cuBLASLt was loaded
    from (step "same release"), a directory of links included; offered a
    copy of cuBLAS in another directory first (its version cannot be read),
    then the toolkit's: best_effort passes over the copy and takes the
    toolkit's, strict refuses the copy alone with the reason, off takes it."""
    lt = t.real_library("libcublasLt.so.13")
    blas = t.real_library("libcublas.so.13")
    d = t.workdir("release_cublas")
    exe = t.compile_c(os.path.join(d, "release_client"), [os.path.join(t.PROGS, "release_client.c")],
                      t.link_shim_args("nvrtc", "nvjitlink", "cublas", "cublaslt"))
    links = t.link_dir(f"{d}/links", lt, blas)
    r = t.run([exe, "cublaslt", "cublas"], env={"LAZYCUBLASLT_LIBPATH": links}, check_rc=0)
    t.contains(r.stdout, f"cublas rc=0 version=13 loaded={links}/libcublas.so.13 step=same release",
               "beside cuBLASLt")
    other = os.path.join(d, "other")
    os.makedirs(other, exist_ok=True)
    shutil.copy(blas, os.path.join(other, "libcublas.so.13"))
    copy = os.path.join(other, "libcublas.so.13")
    r = t.run([exe, "cublaslt", "cublas"], env={"LAZYCUBLAS_LIBPATH": f"{copy}:{blas}"}, check_rc=0)
    t.contains(r.stdout, f"cublas rc=0 version=13 loaded={blas} step=LAZYCUBLAS_LIBPATH", "best_effort")
    lt_at = r.stdout.split("cublaslt rc=0 version=")[1].split(" loaded=")[1].split()[0]
    r = t.run([exe, "cublaslt", "cublas"], env={"LAZYCUBLAS_LIBPATH": copy,
                                                "LAZYNCCL_RELEASE_POLICY": "strict"}, check_rc=0)
    t.contains(r.stdout, f"[LAZYCUBLAS_LIBPATH] {copy}: rejected: cuBLASLt is loaded from {lt_at}, "
               "whose version cannot be read, and this copy is not beside it "
               "(LAZYNCCL_RELEASE_POLICY=strict)", "strict")
    r = t.run([exe, "cublaslt", "cublas"], env={"LAZYCUBLAS_LIBPATH": f"{copy}:{blas}",
                                                "LAZYNCCL_RELEASE_POLICY": "off"}, check_rc=0)
    t.contains(r.stdout, f"cublas rc=0 version=13 loaded={copy}", "off")


if __name__ == "__main__":
    raise SystemExit(t.main())
