#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The first loader against fake libraries built here: the override
variable, the failure values and messages, a missing function."""
import os

import lztest as t
from lztest import case


def client(d):
    return t.compile_c(os.path.join(d, "client"), [os.path.join(t.PROGS, "nccl_client.c")],
                       t.link_shim_args("nccl"))


@case
def override_file():
    """LAZYNCCL_LIBPATH naming a fake libnccl.so.2 file serves its values."""
    d = t.workdir("override_file")
    fake = t.fake_nccl(os.path.join(d, "fake"), version=12345)
    out = t.run([client(d), "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": fake},
                check_rc=0).stdout
    t.equal(out.splitlines()[0], "ncclGetVersion: rc=0 value=12345", "fake answer")
    t.equal(out.splitlines()[1], f"loaded={fake} step=LAZYNCCL_LIBPATH copies=1", "what was loaded")


@case
def override_dir():
    """A directory entry is searched for the spec's sonames; entries are tried in order."""
    d = t.workdir("override_dir")
    t.fake_nccl(os.path.join(d, "a"), version=11111)
    t.fake_nccl(os.path.join(d, "b"), version=22222)
    log = os.path.join(d, "ctor.log")
    out = t.run([client(d), "call", "ncclGetVersion"],
                env={"LAZYNCCL_LIBPATH": f"{d}/empty:{d}/b:{d}/a", "LZ_CTOR_LOG": log},
                check_rc=0).stdout
    t.equal(out.splitlines()[0], "ncclGetVersion: rc=0 value=22222", "first directory that holds it")
    with open(log) as f:
        t.equal(f.read().split(), [f"{d}/b/libnccl.so.2"], "libraries loaded")


@case
def override_missing():
    """A missing file gives ncclSystemError and a message naming the path;
    the override is authoritative, so the real NCCL is not loaded instead."""
    d = t.workdir("override_missing")
    missing = os.path.join(d, "nowhere", "libnccl.so.2")
    out = t.run([client(d), "call", "ncclGetVersion", "ncclGetUniqueId"],
                env={"LAZYNCCL_LIBPATH": missing}, check_rc=0).stdout
    lines = out.splitlines()
    t.check(lines[0].startswith("ncclGetVersion: rc=2 value=-1 error=lazynccl: NCCL could not be loaded"),
            out)
    t.contains(out, f"[LAZYNCCL_LIBPATH] {missing}: rejected: No such file or directory", "message")
    t.contains(out, "LAZYNCCL_LIBPATH is set, so nothing else was tried", "message")
    t.contains(out, "\nncclGetUniqueId: rc=2 value=0 error=lazynccl: NCCL could not be loaded",
               "second function fails too")
    version = t.run([client(d), "version"], env={"LAZYNCCL_LIBPATH": missing}, check_rc=0).stdout
    t.equal(version.split()[-1], "after=0", "no libnccl mapped after a failed load")


@case
def missing_function():
    """A fake lacking one function fails that function alone."""
    d = t.workdir("missing_function")
    fake = t.fake_nccl(os.path.join(d, "fake"), omit=["ncclCommCount"])
    out = t.run([client(d), "call", "ncclCommCount", "ncclGetVersion", "ncclCommCount"],
                env={"LAZYNCCL_LIBPATH": fake}, check_rc=0).stdout.splitlines()
    msg = f"lazynccl: ncclCommCount: not exported by {fake}"
    t.equal(out[0], f"ncclCommCount: rc=2 value=-1 error=fake NCCL error string last_error={msg}",
            "missing function")
    t.equal(out[1], f"ncclGetVersion: rc=0 value=99999 last_error={msg}", "present function")
    t.equal(out[2], out[0], "second call of the missing function")


@case
def own_answer_after_a_later_failure():
    """ncclGetLastError, resolved to the real function (one jump) before any
    call failed, still gives our reason once a missing function fails: the
    failure switches the own-answer functions to their wrappers."""
    d = t.workdir("own_answer_later")
    fake = t.fake_nccl(os.path.join(d, "fake"), omit=["ncclCommCount"], extra=["-DWITH_LAST_ERROR"])
    out = t.run([client(d), "call", "ncclGetVersion", "ncclCommCount", "ncclGetVersion"],
                env={"LAZYNCCL_LIBPATH": fake, "LZ_SHOW_NCCL_LAST_ERROR": "1"}, check_rc=0).stdout.splitlines()
    msg = f"lazynccl: ncclCommCount: not exported by {fake}"
    t.equal(out[0], "ncclGetVersion: rc=0 value=99999 ncclGetLastError=", "before any failure: the library's own")
    t.equal(out[2], f"ncclGetVersion: rc=0 value=99999 last_error={msg} ncclGetLastError={msg}",
            "after the failure: ours")


@case
def required_symbol_missing():
    """A candidate lacking a required export is rejected with that reason."""
    d = t.workdir("required_symbol_missing")
    fake = t.fake_nccl(os.path.join(d, "fake"), omit=["ncclGetVersion"])
    out = t.run([client(d), "call", "ncclCommCount"], env={"LAZYNCCL_LIBPATH": fake},
                check_rc=0).stdout
    t.contains(out, f"[LAZYNCCL_LIBPATH] {fake}: rejected: does not export ncclGetVersion",
               "reason")
    t.check(out.startswith("ncclCommCount: rc=2 value=-1"), out)


if __name__ == "__main__":
    raise SystemExit(t.main())
