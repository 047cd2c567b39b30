#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The AArch64 cross build (cross/aarch64-linux-gnu.ini), under qemu-user:
every thunk is a PLT entry's length (adrp, add, ldar, br), and the real
arm64 NVIDIA libraries from Debian answer through the shims: NVRTC 12.4
compiles a kernel to PTX, nvJitLink 12.4 links it (nvJitLinkVersion first),
NCCL 2.22.3 answers ncclGetVersion (under trixie's arm64 C library, which
it needs), and the probe refuses an x86-64 candidate by its ELF header."""
import os
import re
import tomllib

import lztest as t
from lztest import case

ARCH = "arm64"
THUNK = [r"adrp\s+x16, ([0-9a-f]+)",
         r"add\s+x16, x16, #(0x[0-9a-f]+)",
         r"ldar\s+x16, \[x16\]",
         r"br\s+x16"]


def need_cross():
    if t.HOST_CPU != "aarch64":
        raise t.Skip(f"this build is for {t.HOST_CPU}, not an AArch64 cross build")


def slot_tables(path):
    """[(start, end)] of the lz_slots_* tables (nm -S of the target)."""
    nm = os.environ.get("LZ_NM", "nm")
    out = t.run([nm, "-S", path], check_rc=0).stdout
    return [(int(a, 16), int(a, 16) + int(z, 16)) for a, z, _, name in
            (line.split() for line in out.splitlines() if len(line.split()) == 4)
            if name.startswith("lz_slots_")]


def exported_functions(path):
    """The names a shared object exports as functions (nm -D: T, W, i)."""
    nm = os.environ.get("LZ_NM", "nm")
    out = t.run([nm, "-D", "--defined-only", path], check_rc=0).stdout
    return {f[2].split("@")[0] for f in (line.split() for line in out.splitlines())
            if len(f) == 3 and f[1] in "TWi"}


def own_answers(lib):
    """The names of a spec's [own_answers] (none for a spec not in stubs/)."""
    path = os.path.join(t.SOURCE, "stubs", f"{lib}.toml")
    if not os.path.exists(path):
        return set()
    with open(path, "rb") as f:
        return set(tomllib.load(f).get("own_answers", {}))


@case
def thunks_are_a_plt_entry():
    """Every exported thunk of every shim (variadic ones included) is
    adrp + add + ldar + br: four instructions, as long as a PLT entry. The
    shared shim exports each own-answer function as an indirect function
    (src/api/lz_bind.h): its thunk is the local NAME.lzj, the export its
    resolver, which hands lz_bind_pick the library, the index and that
    thunk."""
    need_cross()
    checked, bad, sample = 0, [], None
    for lib in sorted(f[7:-3] for f in os.listdir(t.SHIMS)
                      if f.startswith("liblazy") and f.endswith(".so")):
        functions = exported_functions(t.shim(lib))  # the list names variables too
        with open(os.path.join(t.SHIMS, f"{lib}_exports.txt")) as f:
            names = [n for n in f.read().split()
                     if not n.startswith(f"lazy{lib}_") and n in functions]
        found = t.function_bodies(t.shim(lib), os.environ.get("LZ_OBJDUMP", "objdump"),
                                  comment="//")
        slots = slot_tables(t.shim(lib))
        answers = own_answers(lib)
        for n in names:
            body = found.get(n + ".lzj" if n in answers else n, [])
            resolver = found.get(n, []) if n in answers else None
            m = [re.match(p, b) for p, b in zip(THUNK, body)]
            ok = len(body) == 4 and all(m) and (resolver is None or (
                len(resolver) == 5 and
                bool(re.match(rf"^adr\tx2, [0-9a-f]+ <{re.escape(n)}\.lzj>$", resolver[3])) and
                bool(re.match(r"^b\t[0-9a-f]+ <lz_bind_pick>$", resolver[4]))))
            if ok:  # the address loaded from lies in the shim's slot table
                addr = int(m[0].group(1), 16) + int(m[1].group(1), 16)
                ok = any(lo <= addr < hi for lo, hi in slots)
            checked += 1
            if not ok:
                bad.append(f"{lib}:{n}: {body} resolver {resolver}")
            if n == "ncclGetVersion":
                sample = body
    print(f"{checked} thunks checked; ncclGetVersion: {sample}")
    t.check(checked > 400, f"only {checked} thunks found")
    t.check(not bad, "\n".join(bad[:20]))


def client(d, suffix="12_4"):
    args = [f"-DJIT_SUFFIX={suffix}", f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}",
            f"-I{t.SOURCE}/include", f"-I{t.BUILD}", f"-I{t.SHIMS}", f"-L{t.SHIMS}", f"-Wl,-rpath,{t.SHIMS}",
            "-llazynccl", "-llazynvrtc", "-llazynvjitlink"]
    return t.compile_c(os.path.join(d, "client"), [os.path.join(t.PROGS, "real_client.c")], args)


def nvrtc_dir(d):
    return t.link_dir(f"{d}/nvrtc", os.path.join(t.debian("libnvrtc12", ARCH), "libnvrtc.so.12"),
                      os.path.join(t.debian("libnvrtc-builtins12.4", ARCH),
                                   "libnvrtc-builtins.so.12.4"))


def run_arm64(cmd, env):
    """Under trixie's arm64 C library: NCCL 2.22.3 and Debian's arm64 libelf
    (lazynccl-info's .rodata reader) need GLIBC_2.38, above the cross
    sysroot's 2.36."""
    ldso, libc = t.newer_loader(ARCH)
    dirs = ":".join([libc] + [t.debian(p, ARCH) for p in ("libstdc++6", "libgcc-s1", "zlib1g",
                                                         "libzstd1")])
    env = dict(env, LAZYNCCL_LIBELF_PATH=os.path.join(t.debian("libelf1t64", ARCH), "libelf.so.1"))
    r = t.run([ldso, "--library-path", dirs] + cmd, env=env, check_rc=0)
    return r.stdout + r.stderr


@case
def nvrtc124_arm64_compiles_ptx():
    """NVRTC 12.4 arm64 through the shim compiles a kernel to PTX (its
    builtins loaded from beside it)."""
    need_cross()
    d = t.workdir("cross_nvrtc")
    lib = nvrtc_dir(d)
    out = run_arm64([client(d), "rtc-version", "rtc-ptx"], {"LAZYNVRTC_LIBPATH": lib})
    for line in ("nvrtc=12.4 rc=0", "ptx .version 8.4", f"nvrtc loaded={lib}/libnvrtc.so.12"):
        t.contains(out, line, "output")


@case
def nvjitlink124_arm64_links():
    """nvJitLink 12.4 arm64: nvJitLinkVersion as the first call, then it links
    the PTX NVRTC made, through the __nvJitLink*_12_4 names."""
    need_cross()
    d = t.workdir("cross_nvjitlink")
    jit = os.path.join(t.debian("libnvjitlink12", ARCH), "libnvJitLink.so.12")
    out = run_arm64([client(d), "jit-version", "rtc-ptx", "jit-link"],
                    {"LAZYNVRTC_LIBPATH": nvrtc_dir(d), "LAZYNVJITLINK_LIBPATH": jit})
    t.contains(out, "nvjitlink=12.4 rc=0", "version first")
    t.check(re.search(r"cubin=[1-9][0-9]*", out), f"a cubin: {out}")


@case
def nccl2223_arm64_version():
    """NCCL 2.22.3 arm64 answers ncclGetVersion through the shim, run under
    trixie's arm64 loader (it needs GLIBC_2.38)."""
    need_cross()
    d = t.workdir("cross_nccl")
    nccl = os.path.join(t.debian("libnccl2", ARCH), "libnccl.so.2")
    out = run_arm64([client(d), "nccl-version"], {"LAZYNCCL_LIBPATH": nccl})
    t.contains(out, "nccl=22203 rc=0", "NCCL 2.22.3 answers")


def complete_fake(d):
    """An arm64 libnccl.so.2 defining every name the shim exports (the test's
    own: Debian's arm64 NCCL is 2.22.3, which lacks 2.28's), ncclGetVersion
    answering 22809 and ncclGetErrorString "complete fake"."""
    with open(os.path.join(t.SHIMS, "nccl_exports.txt")) as f:
        names = [n for n in f.read().split() if not n.startswith("lazynccl_")]
    src = os.path.join(d, "complete.c")
    special = {"ncclGetVersion": "int ncclGetVersion(int *v) { *v = 22809; return 0; }\n",
               "ncclGetErrorString": "const char *ncclGetErrorString(int r) { (void)r; return \"complete fake\"; }\n"}
    with open(src, "w") as f:
        f.write("".join(special.get(n, f"int {n}(void) {{ return 0; }}\n") for n in names))
    return t.compile_c(os.path.join(d, "libnccl.so.2"), [src], ["-Wl,-soname,libnccl.so.2"], shared=True)


@case
def callers_bound_after_load_arm64():
    """On AArch64 too, an own-answer function's call bound after the load is
    the library's own function in the program's PLT slot (src/api/lz_bind.h)
    where the library defines every name of the spec (a complete fake);
    with Debian's arm64 NCCL 2.22.3, which lacks 2.28's names, it keeps its
    thunk. A plain export and a call bound before the load keep theirs."""
    need_cross()
    d = t.workdir("cross_bind")
    exe = t.compile_c(os.path.join(d, "bind_client"), [os.path.join(t.PROGS, "bind_client.c")],
                      [f"-I{t.NCCL_INCLUDE}", f"-L{t.SHIMS}", f"-Wl,-rpath,{t.SHIMS}", "-llazynccl",
                       "-Wl,-z,lazy"])
    steps = ["version", "errstr", "got:ncclGetVersion", "got:ncclGetErrorString"]
    for lib, answers, errstr_in in ((complete_fake(d), "version=22809 rc=0\nerrstr=complete fake\n", "lib"),
                                    (os.path.join(t.debian("libnccl2", ARCH), "libnccl.so.2"),
                                     "version=22203 rc=0\nerrstr=no error\n", "shim")):
        out = run_arm64([exe] + steps, {"LAZYNCCL_LIBPATH": lib})
        got = t.bound_slots(out)
        t.contains(out, answers, "answers")
        t.check(os.path.samefile(got["ncclGetVersion"], t.shim("nccl")), out)
        want = lib if errstr_in == "lib" else t.shim("nccl")
        t.check(os.path.samefile(got["ncclGetErrorString"], want), f"{lib}: {out}")


@case
def probe_rejects_other_machine_arm64():
    """The probe, on AArch64, rejects an x86-64 NCCL by its ELF header before
    anything is loaded."""
    need_cross()
    d = t.workdir("cross_probe")
    x86 = os.path.join(t.debian("libnccl2", "amd64"), "libnccl.so.2")
    out = run_arm64([client(d), "nccl-version"], {"LAZYNCCL_LIBPATH": x86, "LAZYNCCL_DEBUG": "1"})
    t.contains(out, f"[LAZYNCCL_LIBPATH] {x86}: rejected: ELF machine 62 (x86-64), this process "
                    f"is 183 (AArch64)", "the probe's verdict")


@case
def zlib_variadic_arm64():
    """zlib from its spec alone, on AArch64: gzprintf (variadic: the assembly
    resolver saves x0-x7 and q0-q7) as the very first call, then a gzprintf
    with integers past the argument registers and doubles, read back."""
    need_cross()
    if not os.path.exists(t.shim("zlib")):
        raise t.Skip("liblazyzlib was not built (zlib.h missing)")
    d = t.workdir("cross_zlib")
    exe = t.compile_c(f"{d}/zlib_shim", [os.path.join(t.PROGS, "zlib_client.c")],
                      ["-DLZ_SHIM", f"-L{t.SHIMS}", f"-Wl,-rpath,{t.SHIMS}", "-llazyzlib"])
    env = {"LAZYZLIB_LIBPATH": os.path.join(t.debian("zlib1g", ARCH), "libz.so.1")}
    first = run_arm64([exe, "first-variadic"], env)
    t.contains(first, "before: libz mappings 0\ngzprintf(NULL): -2\n", "Z_STREAM_ERROR from the real gzprintf")
    out = run_arm64([exe, "roundtrip", d], env)
    t.contains(out, "uncompress: rc=0 same=1", "round trip")
    t.contains(out, "gzgets: 1 2 3 4 5 6 7 8|eight|3.250 -0.50", "variadic arguments arrive")


if __name__ == "__main__":
    raise SystemExit(t.main())
