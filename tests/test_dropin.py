#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drop-in mode: binaries linked to the real libraries become lazy, and start
where a newer versioned name is missing, with the drop-in directory first on
their library path."""
import filecmp
import os
import shutil

import lztest as t
from lztest import case


def dropin_dir():
    d = os.path.join(t.BUILD, "src", "dropin")
    if not os.path.exists(os.path.join(d, "libnccl.so.2")):
        raise t.Fail(f"drop-ins not built in {d}")
    return d


@case
def nccl_program_made_lazy():
    """A program linked with plain -lnccl, run with the drop-in directory first:
    the real libnccl is not mapped before its first call, the answers are
    right after, and one real copy is mapped."""
    real = os.path.realpath(t.real_library("libnccl.so.2"))
    d = t.workdir("dropin_nccl")
    lib = os.path.dirname(t.real_library("libnccl.so.2"))
    exe = t.compile_c(f"{d}/client", [os.path.join(t.PROGS, "nccl_client.c")],
                      ["-DDIRECT", f"-I{t.NCCL_INCLUDE}", f"-L{lib}", f"-Wl,-rpath,{lib}",
                       "-l:libnccl.so.2"] + t.sanitizer_link_args())
    t.check("libnccl.so.2" in t.run(["readelf", "-d", exe], check_rc=0).stdout, "DT_NEEDED libnccl.so.2")
    direct = t.run([exe, "version"], env={"LZ_WATCH": real}, check_rc=0).stdout
    t.equal(direct.split()[0], "before=1", "without the drop-in, NCCL is mapped at start")
    lazy = t.run([exe, "version"], env={"LD_LIBRARY_PATH": dropin_dir(), "LZ_WATCH": real},
                 check_rc=0).stdout
    t.equal(lazy.split(), ["before=0"] + direct.split()[1:], "with the drop-in")
    out = t.run([exe, "call", "ncclGetVersion", "ncclGetUniqueId"],
                env={"LD_LIBRARY_PATH": dropin_dir(), "LAZYNCCL_DEBUG": "1"}, check_rc=0)
    t.contains(out.stderr, f"{dropin_dir()}/libnccl.so.2: rejected: this shim itself", "self rejected")
    t.contains(out.stdout, "ncclGetUniqueId: rc=0", "unique id")
    maps_check = t.run(["sh", "-c", f"LD_LIBRARY_PATH={dropin_dir()} {exe} call ncclGetVersion"],
                       check_rc=0).stdout
    t.contains(maps_check, "ncclGetVersion: rc=0 value=2", "version")


@case
def nvrtc_nvjitlink_program_through_dropins():
    """A program linked to the real libnvrtc.so.13 and libnvJitLink.so.13
    (versioned references) runs its pipeline through the drop-ins, with the
    same bytes as without them."""
    rtc = os.path.dirname(t.real_library("libnvrtc.so.13"))
    d = t.workdir("dropin_rtc")
    exe = t.compile_c(f"{d}/rtc", [os.path.join(t.PROGS, "rtc_link.c")],
                      [f"-I{t.CUDA_INCLUDE}", f"-L{rtc}", f"-Wl,-rpath,{rtc}",
                       "-l:libnvrtc.so.13", "-l:libnvJitLink.so.13"] + t.sanitizer_link_args())
    syms = t.run(["nm", "-D", "--undefined-only", exe], check_rc=0).stdout
    t.contains(syms, "@libnvJitLink.so.13", "versioned references")
    t.run([exe, f"{d}/a.ptx", f"{d}/a.cubin"], check_rc=0)
    r = t.run([exe, f"{d}/b.ptx", f"{d}/b.cubin"],
              env={"LD_LIBRARY_PATH": dropin_dir(), "LAZYNCCL_DEBUG": "1"}, check_rc=0)
    t.contains(r.stderr, "lazynvrtc: loaded ", "NVRTC loaded by the drop-in")
    t.contains(r.stderr, "lazynvjitlink: loaded ", "nvJitLink loaded by the drop-in")
    t.check(filecmp.cmp(f"{d}/a.ptx", f"{d}/b.ptx", shallow=False), "PTX differs")
    t.check(filecmp.cmp(f"{d}/a.cubin", f"{d}/b.cubin", shallow=False), "cubin differs")


CALLER = r"""
#include <stddef.h>
#include <stdio.h>
int __nvJitLinkGetErrorLogSize_12_9(void *h, size_t *s);
int main(void) {
    size_t s = 0;
    int rc = __nvJitLinkGetErrorLogSize_12_9(NULL, &s);
    printf("rc=%d size=%zu\n", rc, s);
    return 0;
}
"""


@case
def field_failure_12_9_on_12_8():
    """The field's failure: a binary built against a 12.9 nvJitLink (it needs
    __nvJitLinkGetErrorLogSize_12_9@libnvJitLink.so.12) where only a 12.8 one
    is found. Without the drop-in it does not start; with it, it starts and
    runs on the same-major fallback; strict mode starts and returns the error."""
    d = t.workdir("dropin_field")
    t.fake_nvjitlink(f"{d}/v129", 12, 9, version_node=True)
    old = t.fake_nvjitlink(f"{d}/v128", 12, 8, version_node=True)
    with open(f"{d}/caller.c", "w") as f:
        f.write(CALLER)
    exe = t.compile_c(f"{d}/caller", [f"{d}/caller.c"],
                      [f"-L{d}/v129", "-l:libnvJitLink.so.12", "-Wl,-z,now"] + t.sanitizer_link_args())
    t.contains(t.run(["nm", "-D", "--undefined-only", exe], check_rc=0).stdout,
               "__nvJitLinkGetErrorLogSize_12_9@libnvJitLink.so.12", "reference")
    before = t.run([exe], env={"LD_LIBRARY_PATH": f"{d}/v128"})
    print("without the drop-in:", before.returncode, before.stderr.strip())
    t.check(before.returncode != 0, "started without the drop-in")
    t.contains(before.stderr, "undefined symbol: __nvJitLinkGetErrorLogSize_12_9, version libnvJitLink.so.12",
               "the field's error")
    after = t.run([exe], env={"LD_LIBRARY_PATH": f"{dropin_dir()}:{d}/v128", "LAZYNCCL_DEBUG": "1"},
                  check_rc=0)
    print("with the drop-in:", after.stdout.strip())
    t.equal(after.stdout, "rc=0 size=1208\n", "fallback answer")
    t.contains(after.stderr, f"__nvJitLinkGetErrorLogSize_12_9: not exported by {old}; using "
                             "__nvJitLinkGetErrorLogSize_12_8", "logged fallback")
    strict = t.run([exe], env={"LD_LIBRARY_PATH": f"{dropin_dir()}:{d}/v128",
                               "LAZYNCCL_STRICT_VERSIONS": "1"}, check_rc=0)
    print("strict:", strict.stdout.strip())
    t.equal(strict.stdout, "rc=6 size=0\n", "strict answer (NVJITLINK_ERROR_INTERNAL)")


@case
def no_loop():
    """The drop-in twice on the path, and named by the override itself: never
    chosen, no loop; the real library is found, or the error says why."""
    t.real_library("libnccl.so.2")
    d = t.workdir("dropin_loop")
    copy = f"{d}/copy"
    shutil.copytree(dropin_dir(), copy, ignore=shutil.ignore_patterns("*.p", "*.map", "liblazy*"))
    lib = os.path.dirname(t.real_library("libnccl.so.2"))
    exe = t.compile_c(f"{d}/client", [os.path.join(t.PROGS, "nccl_client.c")],
                      ["-DDIRECT", f"-I{t.NCCL_INCLUDE}", f"-L{lib}", "-l:libnccl.so.2"]
                      + t.sanitizer_link_args())
    r = t.run(["timeout", "20", exe, "call", "ncclGetVersion"],
              env={"LD_LIBRARY_PATH": f"{dropin_dir()}:{copy}:{dropin_dir()}", "LAZYNCCL_DEBUG": "1"})
    t.equal(r.returncode, 0, f"exit status: {r.stderr[-2000:]}")
    t.contains(r.stdout, "ncclGetVersion: rc=0 value=2", "the real library answers")
    t.contains(r.stderr, f"{copy}/libnccl.so.2: rejected: a lazynccl shim (drop-in), not the real library",
               "the copy is recognised")
    r = t.run(["timeout", "20", exe, "call", "ncclGetVersion"],
              env={"LD_LIBRARY_PATH": dropin_dir(), "LAZYNCCL_LIBPATH": f"{dropin_dir()}/libnccl.so.2"})
    t.equal(r.returncode, 0, "exit status")
    t.contains(r.stdout, "ncclGetVersion: rc=2", "failure value")
    t.contains(r.stdout, "rejected: this shim itself (a drop-in), not the real library", "message")


if __name__ == "__main__":
    raise SystemExit(t.main())
