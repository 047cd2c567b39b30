#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""the NVIDIA libraries PyTorch loads besides NCCL, NVRTC and
nvJitLink, served by lazynccl-run like NCCL: a torch-like consumer on the
real libraries of this machine (CUDA 13.0) preloads each by path, as
PyTorch's _preload_cuda_deps does, then loads an extension that needs it
by SONAME; nothing of the real library is mapped until the extension's
first call, which answers what the real library answers, with one copy.
cuBLAS's cuBLASLt comes from beside the chosen cuBLAS."""
import json
import os
import sys

import lztest as t
from lztest import case
from real_programs import PROGRAMS

RUN = os.path.join(t.BUILD, "lazynccl-run")
DROPINS = os.path.join(t.BUILD, "src", "dropin")
CUDA_LIB = "/usr/local/cuda/lib64"
FAMILIES = ["cublas", "cublaslt", "cudnn", "cufft", "cupti", "curand", "cusolver", "cusparse"]

EXTENSION = """#include <stdint.h>
#include <stdio.h>
{includes}
int consumer_call(char *out, int size)
{{
    {body}
    return 0;
}}
"""

HOST = r"""
import ctypes, json, os, sys
real = os.path.realpath(sys.argv[1])
def mapped():
    return sorted({l.split()[-1] for l in open('/proc/self/maps')
                   if l.split()[-1].startswith('/') and os.path.realpath(l.split()[-1]) == real})
ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)   # torch's preload, by path
after_preload = mapped()
ext = ctypes.CDLL(sys.argv[2])                      # the extension, needing it by SONAME
after_import = mapped()
buf = ctypes.create_string_buffer(512)
ext.consumer_call(buf, 512)
print(json.dumps({"after_preload": after_preload, "after_import": after_import,
                  "answer": buf.value.decode(), "after_call": mapped()}))
"""


def need_real(lib):
    soname = PROGRAMS[lib][0]
    if not os.path.exists(os.path.join(DROPINS, soname)):
        raise t.Skip(f"the drop-in {soname} was not built (its header is missing)")
    path = os.path.join(CUDA_LIB, soname)
    if not os.path.exists(path):
        raise t.Skip(f"{path} is not installed here")
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer-built drop-in cannot be loaded into a Python without that "
                     "sanitizer's runtime first; the default build runs these")
    return soname, path


def extension(d, lib):
    soname, headers, body, _ = PROGRAMS[lib]
    # The answer into the caller's buffer instead of stdout.
    body = body.replace("printf(", "snprintf(out, size, ")
    src = os.path.join(d, f"ext_{lib}.c")
    with open(src, "w") as f:
        f.write(EXTENSION.format(includes="".join(f"#include <{h}>\n" for h in headers), body=body))
    return t.compile_c(os.path.join(d, f"libext_{lib}.so"), [src],
                       [f"-I{t.CUDA_INCLUDE}", f"-L{CUDA_LIB}", f"-l:{soname}",
                        f"-Wl,-rpath,{CUDA_LIB}"], shared=True)


def host(path, ext, wrapped, env=None):
    cmd = ([RUN] if wrapped else []) + [sys.executable, "-c", HOST, path, ext]
    r = t.run(cmd, env=env or {})
    t.equal(r.returncode, 0, f"{' '.join(cmd[:3])}: {r.stderr[-3000:]}")
    return json.loads(r.stdout)


def torchlike(lib):
    soname, path = need_real(lib)
    d = t.workdir(f"stack_{lib}")
    ext = extension(d, lib)
    plain = host(path, ext, wrapped=False)
    lazy = host(path, ext, wrapped=True)
    t.equal(len(plain["after_preload"]), 1, f"{lib}: plain maps it at the preload")
    t.equal(lazy["after_preload"], [], f"{lib}: nothing real mapped after the preload by path")
    t.equal(lazy["after_import"], [], f"{lib}: nor after the extension needing it by SONAME")
    t.equal(lazy["answer"], plain["answer"], f"{lib}: the real library's answer")
    t.equal(lazy["after_call"], plain["after_call"], f"{lib}: one copy, the file preloaded")
    print(f"{lib}: {lazy['answer'].strip()} from {lazy['after_call']}")


t.case_per(FAMILIES, torchlike, "stack_{}_torchlike_lazy",
           "{}: preloaded by path and needed by SONAME under lazynccl-run: nothing real "
           "mapped before the first call, the real answer, one copy.")


@case
def stack_default_families():
    """lazynccl-run serves every family whose drop-in is built, by default;
    --only narrows it, and an unknown family names those it knows."""
    r = t.run([RUN, "--print-env", "true"], check_rc=0)
    served = [line for line in r.stdout.splitlines() if "LAZYNCCL_AUDIT_DROPINS" in line][0]
    for lib in ["nccl", "nvrtc", "nvjitlink"] + FAMILIES:
        soname = PROGRAMS[lib][0]
        if os.path.exists(os.path.join(DROPINS, soname)):
            t.contains(served, f"{DROPINS}/{soname}", f"{lib} served by default")
    r = t.run([RUN, "--print-env", "--only", "cublas,cudnn", "true"], check_rc=0)
    served = [line for line in r.stdout.splitlines() if "LAZYNCCL_AUDIT_DROPINS" in line][0]
    # cuBLAS's drop-in needs libcublasLt.so.13 as the real one does: its
    # drop-in is served with it, so that it stays lazy (where cuBLAS was
    # found at build time to say so).
    want = [f"{DROPINS}/libcublas.so.13", f"{DROPINS}/libcudnn.so.9"]
    needs = t.run(["readelf", "-d", want[0]], check_rc=0).stdout
    if "[libcublasLt.so.13]" in needs and os.path.exists(f"{DROPINS}/libcublasLt.so.13"):
        want.append(f"{DROPINS}/libcublasLt.so.13")
    t.equal(served.split("=", 1)[1].strip("'").split(":"), want, "--only cublas,cudnn")
    r = t.run([RUN, "--only", "cudart", "true"], check_rc=2)
    t.contains(r.stderr, "--only: unknown item 'cudart' (known: cublas, ", "names the families")


@case
def stack_cublaslt_is_the_linkers_choice():
    """cuBLAS asked for by path (and named by LAZYCUBLAS_LIBPATH) from a
    directory that also holds a cuBLASLt, under an extension needing both
    (as libtorch_cuda.so does): the drop-in's dependency on cuBLASLt is the
    file beside the asked cuBLAS, as the real cuBLAS's is plain (its run
    path is $ORIGIN), and the extension's own request gets that same copy:
    one real cuBLASLt, stood in for by its drop-in until its first call."""
    need_real("cublas")
    d = t.workdir("stack_companion")
    chosen = t.link_dir(os.path.join(d, "chosen"), os.path.join(CUDA_LIB, "libcublas.so.13"),
                        os.path.join(CUDA_LIB, "libcublasLt.so.13"))
    soname, headers, body, _ = PROGRAMS["cublas"]
    src = os.path.join(d, "ext.c")
    with open(src, "w") as f:
        f.write(EXTENSION.format(includes="".join(f"#include <{h}>\n" for h in headers),
                                 body=body.replace("printf(", "snprintf(out, size, ")))
    ext = t.compile_c(os.path.join(d, "libext.so"), [src],
                      [f"-I{t.CUDA_INCLUDE}", f"-L{CUDA_LIB}", "-l:libcublas.so.13",
                       "-Wl,--no-as-needed", "-l:libcublasLt.so.13"], shared=True)
    script = HOST + r"""
names = []
class Info(ctypes.Structure):
    _fields_ = [("addr", ctypes.c_void_p), ("name", ctypes.c_char_p)]
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Info), ctypes.c_size_t, ctypes.c_void_p)
def each(info, size, data):
    names.append((info.contents.name or b"").decode())
    return 0
ctypes.CDLL(None).dl_iterate_phdr(CB(each), None)
lt = ctypes.CDLL(sys.argv[3], mode=os.RTLD_NOLOAD)
lt.lazycublaslt_loaded_path.restype = ctypes.c_char_p
print(json.dumps({"cublaslt_files": [n for n in names if n.endswith("/libcublasLt.so.13")],
                  "dropin_says": lt.lazycublaslt_load() == 0 and lt.lazycublaslt_loaded_path().decode()}))
"""
    dropin = os.path.join(DROPINS, "libcublasLt.so.13")
    r = t.run([RUN, sys.executable, "-c", script, os.path.join(chosen, "libcublas.so.13"), ext, dropin],
              env={"LAZYCUBLAS_LIBPATH": os.path.join(chosen, "libcublas.so.13"),
                   "LAZYNCCL_DEBUG": "1"})
    t.equal(r.returncode, 0, r.stderr[-3000:])
    out = json.loads(r.stdout.splitlines()[-1])
    beside = os.path.join(chosen, "libcublasLt.so.13")
    t.equal(out["cublaslt_files"], [dropin, beside],
            "the drop-in and one real cuBLASLt, the one beside the asked cuBLAS")
    t.equal(out["dropin_says"], beside, "the drop-in took that copy")
    t.contains(r.stderr, f"the dynamic linker would map {beside} (beside the file its drop-in stands for)",
               "the drop-in stood in for the linker's choice")


if __name__ == "__main__":
    raise SystemExit(t.main())
