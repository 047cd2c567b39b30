#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""libraries the project has not seen, each from a spec file alone
(tests/specs), read from their real headers with libclang. For each: nothing
of it mapped before the first call; a real call that works without a GPU
answers what the real library answers to the same call; lazynccl-info
reports it; its drop-in and amalgamation are built and compile; every
function the header declares and the library exports is in the shim."""
import json
import os
import subprocess
import sys

import lztest as t
from lztest import case

CUDA_LIB = "/usr/local/cuda/lib64"

# id: (real library, the call (ctypes, on library L), environment for the shim)
LIBS = {
    "cublas": ("libcublas.so.13", "v = ctypes.c_int(); r = L.cublasGetProperty(0, ctypes.byref(v)); "
               "h = ctypes.c_void_p(); c = L.cublasCreate_v2(ctypes.byref(h)); out = [r, v.value, c]", {}),
    "cublaslt": ("libcublasLt.so.13", "L.cublasLtGetVersion.restype = ctypes.c_size_t; "
                 "out = [L.cublasLtGetVersion()]", {}),
    "cufft": ("libcufft.so.12", "v = ctypes.c_int(); out = [L.cufftGetVersion(ctypes.byref(v)), v.value]", {}),
    "cusparse": ("libcusparse.so.12", "v = ctypes.c_int(); "
                 "out = [L.cusparseGetProperty(0, ctypes.byref(v)), v.value]", {}),
    "cusolver": ("libcusolver.so.12", "v = ctypes.c_int(); "
                 "out = [L.cusolverGetProperty(0, ctypes.byref(v)), v.value]", {}),
    "cudnn": ("libcudnn.so.9", "L.cudnnGetVersion.restype = ctypes.c_size_t; "
              "L.cudnnGetErrorString.restype = ctypes.c_char_p; "
              "out = [L.cudnnGetVersion(), L.cudnnGetErrorString(0).decode()]", {}),
    "cupti": ("libcupti.so.13", "v = ctypes.c_uint32(); out = [L.cuptiGetVersion(ctypes.byref(v)), v.value]", {}),
    # No driver on this machine: the Toolkit's stub libcuda (SONAME
    # libcuda.so.1) is a real library that answers CUDA_ERROR_STUB_LIBRARY.
    "cuda": ("stubs/libcuda.so", "v = ctypes.c_int(); out = [L.cuDriverGetVersion(ctypes.byref(v)), v.value]",
             {"LAZYCUDA_LIBPATH": f"{CUDA_LIB}/stubs/libcuda.so"}),
    "lzma": ("/lib/x86_64-linux-gnu/liblzma.so.5", "L.lzma_version_string.restype = ctypes.c_char_p; "
             "out = [L.lzma_version_string().decode(), L.lzma_version_number()]", {}),
}

SCRIPT = r"""
import ctypes, json, os, sys
real = os.path.realpath(sys.argv[2])
def mapped():
    return sorted({l.split()[-1] for l in open('/proc/self/maps')
                   if l.split()[-1].startswith('/') and os.path.realpath(l.split()[-1]) == real})
L = ctypes.CDLL(sys.argv[1])
before = mapped()
""" + "{call}" + r"""
print(json.dumps({{"before": before, "out": out, "after": mapped()}}))
"""


def spec_path(lib):
    """The proof specs served live in stubs/, the others in tests/specs."""
    for d in ("stubs", os.path.join("tests", "specs")):
        p = os.path.join(t.SOURCE, d, f"{lib}.toml")
        if os.path.exists(p):
            return p
    raise t.Fail(f"no spec for {lib}")


def real_path(lib):
    name = LIBS[lib][0]
    return name if name.startswith("/") else os.path.join(CUDA_LIB, name)


def need(lib):
    if not os.path.exists(t.shim(lib)):
        raise t.Skip(f"liblazy{lib} was not built (its header is missing: see meson's warning)")
    if not os.path.exists(real_path(lib)):
        raise t.Skip(f"{real_path(lib)} is not installed here")
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer-built shim cannot be loaded by ctypes into a Python without that "
                     "sanitizer's runtime; the default build runs these")


def call(lib, target, env):
    script = SCRIPT.replace("{call}", LIBS[lib][1]).replace("{{", "{").replace("}}", "}")
    e = dict(os.environ)
    e.update(env)
    r = subprocess.run([sys.executable, "-c", script, target, real_path(lib)], env=e,
                       capture_output=True, text=True, timeout=120)
    t.equal(r.returncode, 0, f"{lib} through {target}: {r.stderr[-2000:]}")
    return json.loads(r.stdout)


def first_call(lib):
    need(lib)
    direct = call(lib, real_path(lib), {})
    shim = call(lib, t.shim(lib), LIBS[lib][2])
    t.equal(shim["before"], [], f"{lib}: nothing mapped before the first call")
    t.equal(len(shim["after"]), 1, f"{lib}: the real library mapped after it: {shim}")
    t.equal(shim["out"], direct["out"], f"{lib}: the shim answers what the library answers")
    print(f"{lib}: {shim['out']} (direct: {direct['out']}), loaded {shim['after'][0]}")


t.case_per(LIBS, first_call, "proof_{}_first_call",
           "{}: nothing mapped before the first call; the real answer after; one copy.")


@case
def proof_driver_api_names():
    """The driver API shim exports the names a program compiled against
    cuda.h references by default (the _v2 functions: cuMemAlloc_v2,
    cuCtxCreate_v4), and, since it stands for the whole library, every
    function the library exports besides: the per-thread-stream _ptds/_ptsz
    variants a program compiled for per-thread streams references, and the
    pre-_v2 names of old binaries."""
    if not os.path.exists(t.shim("cuda")):
        raise t.Skip("liblazycuda was not built")
    names = t.exported(t.shim("cuda"))
    for want in ("cuMemAlloc_v2", "cuMemcpyHtoD_v2", "cuDriverGetVersion", "cuInit"):
        t.check(want in names, f"{want} exported")
    real = t.exported(os.path.join(CUDA_LIB, "stubs", "libcuda.so"))
    t.equal(sorted(real - names), [], "every function of the library")
    t.check(any(n.endswith("_ptsz") for n in names), "per-thread variants")


@case
def proof_info_reports_each():
    """lazynccl-info --json --load reports each proof library, loaded, from
    where its search found it (the driver's stub through its override)."""
    libs = [lib for lib in LIBS if os.path.exists(t.shim(lib)) and os.path.exists(real_path(lib))]
    if not libs:
        raise t.Skip("no proof library built here")
    env = {"LAZYCUDA_LIBPATH": f"{CUDA_LIB}/stubs/libcuda.so"}
    r = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--json", "--load"] + libs, env=env)
    doc = json.loads(r.stdout)
    by_id = {lib["id"]: lib for lib in doc["libraries"]}
    t.equal(sorted(by_id), sorted(libs), "libraries")
    for lib in libs:
        got = by_id[lib]
        t.check(got["would_load"], f"{lib} would load: {got}")
        t.check(got["loaded"] and os.path.realpath(got["loaded"]["path"]) == os.path.realpath(real_path(lib)),
                f"{lib} loaded from {got['loaded']}")


@case
def proof_dropins_and_amalgamations_build():
    """Each proof library's drop-in (its SONAME) and amalgamation exist; the
    amalgamation compiles with -Wall -Wextra -Werror against the real header."""
    built = [lib for lib in LIBS if os.path.exists(t.shim(lib))]
    if not built:
        raise t.Skip("no proof library built here")
    d = t.workdir("proof_amalg")
    for lib in built:
        spec = open(spec_path(lib)).read()
        soname = spec.split("sonames = [\"")[1].split("\"")[0]
        t.check(os.path.exists(os.path.join(t.BUILD, "src", "dropin", soname)), f"{lib}: drop-in {soname}")
        amalg = os.path.join(t.SHIMS, f"lazy{lib}_amalg.c")
        t.check(os.path.exists(amalg), f"{lib}: {amalg}")
        inc = "/usr/include" if lib == "lzma" else t.CUDA_INCLUDE
        t.compile_c(os.path.join(d, f"{lib}.o"), [amalg],
                    ["-c", "-fPIC", f"-I{inc}", f"-I{t.BUILD}", f"-I{t.SHIMS}", "-Wall", "-Wextra", "-Werror",
                     "-DLZ_HAVE_LIBELF"])


@case
def proof_export_coverage():
    """For each proof library: every function its header declares and the
    real library exports is exported by the shim (lazygen describe
    --library says which those are); prints the coverage table, with how
    many functions the library exports that the header does not declare."""
    rows = []
    for lib in LIBS:
        if not os.path.exists(t.shim(lib)) or not os.path.exists(real_path(lib)):
            continue
        spec = spec_path(lib)
        inc = "/usr/include" if lib == "lzma" else t.CUDA_INCLUDE
        r = t.run([sys.executable, os.path.join(t.SOURCE, "gen", "lazygen.py"), "describe",
                   spec, "--include-dir", inc, "--cc", " ".join(t.CC),
                   "--library", real_path(lib)], check_rc=0)
        kv = dict(line.split("\t", 1) for line in r.stdout.splitlines() if "\t" in line)
        both = kv["declared_and_exported_names"].split()
        shim = t.exported(t.shim(lib))
        t.equal(sorted(set(both) - shim), [], f"{lib}: declared and exported, not in the shim")
        t.equal(len(both), int(kv["declared_and_exported"]), f"{lib}: the count")
        rows.append((lib, kv["declared"], kv["exported_by_library"], len(both),
                     len([n for n in shim if not n.startswith(f"lazy{lib}_")]),
                     len(kv["exported_not_declared"].split())))
    if not rows:
        raise t.Skip("no proof library built here")
    print("| library | declared | exported by the library | both | in the shim | "
          "exported, not declared |")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")


if __name__ == "__main__":
    raise SystemExit(t.main())
