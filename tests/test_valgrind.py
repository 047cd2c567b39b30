#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""valgrind (memcheck, --error-exitcode=1) over the real-library integration
programs: the shim's first-call path, the probe and the loader are clean."""
import os
import shutil

import lztest as t
from lztest import case


def memcheck(cmd, env=None):
    if not shutil.which("valgrind"):
        raise t.Skip("valgrind is not installed")
    if t.SANITIZE not in ("", "none"):
        raise t.Skip(f"valgrind cannot run a sanitizer build ({t.SANITIZE})")
    r = t.run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=no"] + cmd, env=env)
    t.equal(r.returncode, 0, f"valgrind exit status; stderr:\n{r.stderr[-3000:]}")
    return r.stdout


@case
def valgrind_nccl():
    t.real_library("libnccl.so.2")
    d = t.workdir("valgrind_nccl")
    exe = t.compile_c(os.path.join(d, "client"), [os.path.join(t.PROGS, "nccl_client.c")],
                      t.link_shim_args("nccl"))
    out = memcheck([exe, "version"])
    t.check(out.startswith("before=0 rc=0 version=2"), out)
    out = memcheck([exe, "uniqueid"])
    t.check(out.startswith("rc=0 "), out)


@case
def valgrind_nvrtc_nvjitlink():
    t.real_library("libnvrtc.so.13")
    d = t.workdir("valgrind_rtc")
    exe = t.compile_c(os.path.join(d, "rtc"), [os.path.join(t.PROGS, "rtc_link.c")],
                      t.link_shim_args("nvrtc", "nvjitlink"))
    out = memcheck([exe, f"{d}/k.ptx", f"{d}/k.cubin"])
    t.check(out.startswith("ptx="), out)


@case
def valgrind_failure_paths():
    """The failure report (every candidate rejected) under memcheck."""
    d = t.workdir("valgrind_fail")
    bad = f"{d}/bad.so"
    with open(bad, "w") as f:
        f.write("text\n")
    exe = t.compile_c(os.path.join(d, "client"), [os.path.join(t.PROGS, "nccl_client.c")],
                      t.link_shim_args("nccl"))
    out = memcheck([exe, "call", "ncclGetVersion"],
                   env={"LAZYNCCL_LIBPATH": f":relative:{bad}:{d}:{d}/none"})
    t.contains(out, "not an ELF file", "report")


if __name__ == "__main__":
    raise SystemExit(t.main())
