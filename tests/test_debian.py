#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shims against real NVIDIA libraries of other versions than the
toolkit's: CUDA 12.4's NVRTC and nvJitLink, NCCL 2.22.3 and CUDA 11.8's
NVRTC from Debian's archive (tests/fetch_real.py), next to CUDA 13.0 and
NCCL 2.28.9 in /usr/local/cuda. Each case skips, saying why, when the cache
of Debian packages is missing."""
import os
import re
import shutil
import subprocess

import lztest as t
from lztest import case

CUDA_LIB = "/usr/local/cuda/lib64"
DROPIN = os.path.join(t.BUILD, "src", "dropin")


def nvrtc124(d):
    """A directory holding NVRTC 12.4 and its builtins, as a wheel's lib/ does."""
    return t.link_dir(d, os.path.join(t.debian("libnvrtc12"), "libnvrtc.so.12"),
                      os.path.join(t.debian("libnvrtc-builtins12.4"), "libnvrtc-builtins.so.12.4"))


def nvjitlink124():
    return os.path.join(t.debian("libnvjitlink12"), "libnvJitLink.so.12")


def nccl2223():
    return os.path.join(t.debian("libnccl2"), "libnccl.so.2")


def client(d, name="client", suffix="13_0", link=(), shims=("nccl", "nvrtc", "nvjitlink"),
           include=()):
    """tests/progs/real_client.c linked to the given shims and extra link args."""
    args = [f"-DJIT_SUFFIX={suffix}", *[f"-I{i}" for i in include], f"-I{t.NCCL_INCLUDE}",
            f"-I{t.CUDA_INCLUDE}", f"-I{t.SOURCE}/include", f"-I{t.BUILD}", f"-I{t.SHIMS}"]
    args += list(link)
    if shims:
        args += [f"-L{t.SHIMS}", f"-Wl,-rpath,{t.SHIMS}"] + [f"-llazy{s}" for s in shims]
    args += t.sanitizer_link_args()
    return t.compile_c(os.path.join(d, name), [os.path.join(t.PROGS, "real_client.c")], args)


def run(cmd, env, rc=0):
    return t.run(cmd, env=env, check_rc=rc).stdout


def expect(out, *lines):
    for line in lines:
        t.contains(out, line, "output")


# --- NVRTC: companions, off the dynamic linker's path ---------------------------

@case
def nvrtc124_override_compiles():
    """NVRTC 12.4 named by LAZYNVRTC_LIBPATH compiles a kernel: its builtins,
    which it opens by bare name, are loaded from its directory first."""
    d = t.workdir("nvrtc124_override_compiles")
    lib = nvrtc124(f"{d}/nvrtc")
    out = run([client(d), "rtc-version", "rtc-ptx"], {"LAZYNVRTC_LIBPATH": lib})
    expect(out, "nvrtc=12.4 rc=0", "ptx .version 8.4", f"nvrtc loaded={lib}/libnvrtc.so.12")


@case
def nvrtc124_wheel_compiles():
    """The same from a wheel layout: site-packages/nvidia/cuda_nvrtc/lib beside
    a package vendoring the shim."""
    d = t.workdir("nvrtc124_wheel_compiles")
    site = f"{d}/venv/lib/python3.11/site-packages"
    lib = nvrtc124(f"{site}/nvidia/cuda_nvrtc/lib")
    os.makedirs(f"{site}/mypkg")
    shutil.copy(os.path.join(t.SHIMS, "liblazynvrtc.so.0"), f"{site}/mypkg/liblazynvrtc.so.0")
    os.symlink("liblazynvrtc.so.0", f"{site}/mypkg/liblazynvrtc.so")
    exe = client(d, shims=("nccl", "nvjitlink"),
                 link=[f"-L{site}/mypkg", f"-Wl,-rpath,{site}/mypkg", "-llazynvrtc"])
    out = run([exe, "rtc-version", "rtc-ptx"], {"LAZYNCCL_DEBUG": "1"})
    expect(out, "nvrtc=12.4 rc=0", "ptx .version 8.4", f"nvrtc loaded={lib}/libnvrtc.so.12")


@case
def nvrtc124_conda_compiles():
    """The same from $CONDA_PREFIX/lib, with CUDA 13.0 in $CUDA_HOME."""
    d = t.workdir("nvrtc124_conda_compiles")
    lib = nvrtc124(f"{d}/conda/lib")
    out = run([client(d), "rtc-version", "rtc-ptx"],
              {"CONDA_PREFIX": f"{d}/conda", "CUDA_HOME": "/usr/local/cuda"})
    expect(out, "nvrtc=12.4 rc=0", "ptx .version 8.4", f"nvrtc loaded={lib}/libnvrtc.so.12")


def rtc_companion(d):
    return t.compile_c(os.path.join(d, "rtc_companion"), [os.path.join(t.PROGS, "rtc_companion.c")],
                       t.link_shim_args("nvrtc"))


def builtins_after(out, when):
    line = next((l for l in out.splitlines() if l.startswith(f"builtins after {when}:")), None)
    t.check(line is not None, f"no 'builtins after {when}' in:\n{out}")
    files = line.split(":", 1)[1].split()
    return [] if files == ["-"] else files


@case
def nvrtc124_builtins_deferred_to_first_compile():
    """NVRTC 12.4 off the linker's path (LAZYNVRTC_LIBPATH): its
    builtins are not loaded by the first call (nvrtcVersion), as after a bare
    dlopen, but before the first nvrtcCompileProgram, from beside it: the
    compile works."""
    d = t.workdir("nvrtc124_builtins_deferred")
    lib = nvrtc124(f"{d}/nvrtc")
    r = t.run([rtc_companion(d)], env={"LAZYNVRTC_LIBPATH": lib}, check_rc=0)
    t.equal(builtins_after(r.stdout, "version"), [], "after the first call")
    t.contains(r.stdout, "compile ok", "the compile")
    after = builtins_after(r.stdout, "compile")
    t.equal(after, [os.path.realpath(os.path.join(lib, "libnvrtc-builtins.so.12.4"))],
            f"from beside NVRTC: {r.stdout}")


@case
def nvrtc13_builtins_left_to_nvrtc_on_linker_path():
    """NVRTC 13 found through ld.so.cache, where it finds its
    builtins by name itself: the shim does not load them; NVRTC does, at the
    compile, from the same place a bare dlopen gives it."""
    real = t.real_library("libnvrtc.so.13")
    d = t.workdir("nvrtc13_builtins_left")
    r = t.run([rtc_companion(d)], env={"LAZYNCCL_DEBUG": "1"}, check_rc=0)
    t.equal(builtins_after(r.stdout, "version"), [], "after the first call")
    t.contains(r.stdout, "compile ok", "the compile")
    after = builtins_after(r.stdout, "compile")
    t.equal(len(after), 1, r.stdout)
    t.equal(os.path.dirname(os.path.realpath(after[0])), os.path.dirname(os.path.realpath(real)),
            "beside the NVRTC loaded")
    t.contains(r.stderr, "the library finds it by name (left to it)", "the log")


@case
def companions_follow_the_librarys_own_run_path():
    """A library that finds its companions through its own DT_RUNPATH
    ($ORIGIN, as cuDNN's wheel finds its sub-libraries): NVRTC 12.4 given
    RUNPATH $ORIGIN (patchelf), named by LAZYNVRTC_LIBPATH. With nothing in
    the way the shim leaves the builtins to it (NVRTC maps its own at the
    compile); with another copy of the builtins first on LD_LIBRARY_PATH,
    which NVRTC's own dlopen would take, the shim maps the one beside NVRTC
    before the compile. In a sanitizer build the sanitizer's dlopen stands
    between NVRTC and the C library's, so ld.so searches the sanitizer's run
    paths, not NVRTC's: NVRTC alone would not find its builtins, and the
    shim maps them itself."""
    patchelf = shutil.which("patchelf")
    if not patchelf:
        raise t.Skip("patchelf is not installed (.ci/run installs it)")
    d = t.workdir("companions_run_path")
    a, b = f"{d}/a", f"{d}/b"
    os.makedirs(a)
    os.makedirs(b)
    builtins = os.path.join(t.debian("libnvrtc-builtins12.4"), "libnvrtc-builtins.so.12.4")
    shutil.copy(os.path.join(t.debian("libnvrtc12"), "libnvrtc.so.12"), f"{a}/libnvrtc.so.12")
    t.run([patchelf, "--set-rpath", "$ORIGIN", f"{a}/libnvrtc.so.12"], check_rc=0)
    shutil.copy(builtins, a)
    shutil.copy(builtins, b)
    exe = rtc_companion(d)
    env = {"LAZYNVRTC_LIBPATH": f"{a}/libnvrtc.so.12", "LAZYNCCL_DEBUG": "1"}
    if t.SANITIZE not in ("", "none"):
        # NVRTC's own allocations outlive the program; the builtins preloaded
        # below come before ASan's runtime in the list, which it allows here.
        env["ASAN_OPTIONS"] = "detect_leaks=0:verify_asan_link_order=0"
    mine = [f"{a}/libnvrtc-builtins.so.12.4"]
    r = t.run([exe], env=env, check_rc=0)
    t.equal((builtins_after(r.stdout, "version"), builtins_after(r.stdout, "compile")), ([], mine),
            f"nothing in the way: {r.stdout}")
    interposed = t.SANITIZE not in ("", "none")
    t.contains(r.stderr, f"companion {a}/libnvrtc-builtins.so.12.4: loaded before the first call"
               if interposed else "the library finds it by name (left to it)", "nothing in the way")
    env["LD_LIBRARY_PATH"] = b + ":" + os.environ.get("LD_LIBRARY_PATH", "")
    r = t.run([exe], env=env, check_rc=0)
    t.equal((builtins_after(r.stdout, "version"), builtins_after(r.stdout, "compile")), ([], mine),
            f"another copy on LD_LIBRARY_PATH: {r.stdout}")
    t.contains(r.stderr, f"by name the library would take {b}/libnvrtc-builtins.so.12.4",
               "another copy on LD_LIBRARY_PATH")   # LD_LIBRARY_PATH wins either way
    # Another copy loaded before: the library will bind to it (ld.so
    # answers by SONAME), so the shim loads nothing and says so.
    r = t.run([exe], env=dict(env, LD_PRELOAD=f"{b}/libnvrtc-builtins.so.12.4"), check_rc=0)
    t.equal(builtins_after(r.stdout, "compile"), [f"{b}/libnvrtc-builtins.so.12.4"],
            f"another copy loaded before: {r.stdout}")
    t.contains(r.stderr, f"another copy, {b}/libnvrtc-builtins.so.12.4, is loaded already",
               "another copy loaded before")
    # ";" separates LD_LIBRARY_PATH's entries, not a run path's: ld.so reads
    # "/nonexistent;$ORIGIN" as one directory, so NVRTC would not find its
    # builtins, and the shim loads them.
    t.run([patchelf, "--set-rpath", "/nonexistent;$ORIGIN", f"{a}/libnvrtc.so.12"], check_rc=0)
    env.pop("LD_LIBRARY_PATH")
    r = t.run([exe], env=env, check_rc=0)
    t.equal(builtins_after(r.stdout, "compile"), mine, f"a run path with ';': {r.stdout}")
    t.contains(r.stderr, f"companion {a}/libnvrtc-builtins.so.12.4: loaded before the first call",
               "a run path with ';'")
    # A run path longer than a page, its last entry another copy: read whole.
    long_path = ":".join([f"/nonexistent/{'x' * 60}"] * 80 + [b])
    t.run([patchelf, "--set-rpath", long_path, f"{a}/libnvrtc.so.12"], check_rc=0)
    r = t.run([exe], env=env, check_rc=0)
    t.equal(builtins_after(r.stdout, "compile"), mine, f"a run path of {len(long_path)} bytes: {r.stdout}")
    if not interposed:
        t.contains(r.stderr, f"by name the library would take {b}/libnvrtc-builtins.so.12.4",
                   f"a run path of {len(long_path)} bytes")


@case
def release_mismatch_in_info_doctor_and_check():
    """NVRTC 13.0.88 and nvJitLink 12.4 named by their overrides:
    `lazynccl-info --doctor` and `--check` (of a program linked to both
    shims) each say that NVRTC 13.0.88 is newer than nvJitLink 12.4 (the
    pair judged once, from the side listed first), as a warning under best_effort (exit 0 for --check) and a problem under
    strict (exit 1); off says nothing."""
    d, exe, lib124 = release_job("release_info")
    nv13 = nvrtc13_named(f"{d}/nv13")
    env = {"LAZYNVRTC_LIBPATH": nv13, "LAZYNVJITLINK_LIBPATH": f"{lib124}/libnvJitLink.so.12"}
    info = os.path.join(t.BUILD, "lazynccl-info")
    why = "version 13.0.88 is newer than nvJitLink 12.4.127"
    for policy, word, rc in (("best_effort", "warning", 0), ("strict", "problem", 1)):
        e = dict(env, LAZYNCCL_RELEASE_POLICY=policy)
        doctor = t.run([info, "--doctor", "nvrtc", "nvjitlink"], env=e)
        t.contains(t.flat(doctor.stdout), why, f"--doctor, {policy}")
        t.contains(t.flat(doctor.stdout), f"LAZYNCCL_RELEASE_POLICY={policy}", f"--doctor, {policy}")
        check = t.run([info, "--check", exe, "nvrtc", "nvjitlink"], env=e)
        line = next((l for l in check.stdout.splitlines() if why in l), "")
        t.check(line.startswith(f"NVRTC: {word}: "), f"--check, {policy}:\n{check.stdout}")
        t.equal(check.returncode, rc, f"--check's exit, {policy}:\n{check.stdout}")
    for args in (["--doctor", "nvrtc", "nvjitlink"], ["--check", exe, "nvrtc", "nvjitlink"]):
        off = t.run([info] + args, env=dict(env, LAZYNCCL_RELEASE_POLICY="off"))
        t.check(why not in t.flat(off.stdout), f"{args[0]}, off:\n{off.stdout}")


@case
def release_versions_decide_within_one_wheel_tree():
    """NVRTC 13.0.88 and nvJitLink 12.4 in two packages of one
    site-packages/nvidia/ tree (as nvidia-cuda-nvrtc and nvidia-nvjitlink
    install, each of its own version): their versions can be read, so they
    decide, and strict refuses 12.4 there as anywhere."""
    d, exe, lib124 = release_job("release_wheel_tree")
    tree = f"{d}/venv/lib/python3.11/site-packages/nvidia"
    nv13 = nvrtc13_named(f"{tree}/cuda_nvrtc/lib")
    jit = t.link_dir(f"{tree}/nvjitlink/lib", nvjitlink124())
    out = run([exe, "nvrtc", "nvjitlink"], {"LAZYNVRTC_LIBPATH": nv13,
                                             "LAZYNVJITLINK_LIBPATH": f"{jit}/libnvJitLink.so.12",
                                             "LAZYNCCL_RELEASE_POLICY": "strict"})
    expect(out, "nvrtc rc=0 version=13000", "nvjitlink rc=6 version=0 loaded=(none)",
           "version 12.4.127 is older than NVRTC 13.0.88")


# --- the dynamic linker's order -------------------------------------------------

@case
def nvrtc124_ld_library_path_beats_cuda_home():
    """LD_LIBRARY_PATH=<NVRTC 12.4> wins over CUDA_HOME=/usr/local/cuda (13.0)
    and over ld.so.cache's libnvrtc.so.13, as it does for -lnvrtc."""
    d = t.workdir("nvrtc124_ld_library_path_beats_cuda_home")
    lib = nvrtc124(f"{d}/nvrtc")
    exe = client(d)
    for env in ({"LD_LIBRARY_PATH": lib, "CUDA_HOME": "/usr/local/cuda"},
                {"LD_LIBRARY_PATH": lib}):
        out = run([exe, "rtc-version", "rtc-ptx"], env)
        expect(out, "nvrtc=12.4 rc=0", "ptx .version 8.4", f"nvrtc loaded={lib}/libnvrtc.so.12")


@case
def nvrtc124_dropin_for_real_program():
    """A program linked -lnvrtc against the real 12.4, run with the .12
    drop-in first and CUDA_HOME=/usr/local/cuda: it gets 12.4, as without
    the drop-in."""
    d = t.workdir("nvrtc124_dropin_for_real_program")
    lib = nvrtc124(f"{d}/nvrtc")
    exe = client(d, shims=("nccl", "nvjitlink"), link=[f"-L{lib}", "-l:libnvrtc.so.12"])
    direct = run([exe, "rtc-version", "rtc-ptx"], {"LD_LIBRARY_PATH": lib})
    expect(direct, "nvrtc=12.4 rc=0", "ptx .version 8.4")
    out = run([exe, "rtc-version", "rtc-ptx"],
              {"LD_LIBRARY_PATH": f"{DROPIN}:{lib}", "CUDA_HOME": "/usr/local/cuda"})
    expect(out, "nvrtc=12.4 rc=0", "ptx .version 8.4", f"nvrtc loaded={lib}/libnvrtc.so.12")


# --- nvJitLink: the major of the names the process imports ------------------------

@case
def nvjitlink124_version_first_dropin():
    """A program linked to the real 12.4 libnvJitLink.so.12 (run path to it)
    whose first call is nvJitLinkVersion, with the .12 drop-in first and 13.0
    in CUDA_HOME: 12.4 is loaded, found by the program's run path, and a PTX
    links through the __nvJitLink*_12_4 names."""
    d = t.workdir("nvjitlink124_version_first_dropin")
    real = nvjitlink124()
    libdir = os.path.dirname(real)
    exe = client(d, suffix="12_4", shims=("nccl", "nvrtc"),
                 link=[f"-L{libdir}", f"-Wl,-rpath,{libdir}", "-l:libnvJitLink.so.12"])
    r = t.run([exe, "jit-version", "jit-link"], check_rc=0,
              env={"LD_LIBRARY_PATH": DROPIN, "CUDA_HOME": "/usr/local/cuda",
                   "LAZYNCCL_DEBUG": "1"})
    expect(r.stdout, "nvjitlink=12.4 rc=0", "cubin=", f"nvjitlink loaded={real}")
    t.contains(r.stderr, f"loaded {real} (found by: run path)", "log")


@case
def nvjitlink_dropin_never_crosses_major():
    """The .12 drop-in with only 13.0 to be found fails, saying why, instead of
    answering 13.0 to a 12.x program."""
    d = t.workdir("nvjitlink_dropin_never_crosses_major")
    libdir = os.path.dirname(nvjitlink124())
    exe = client(d, suffix="12_4", shims=("nccl", "nvrtc"),
                 link=[f"-L{libdir}", "-l:libnvJitLink.so.12"])
    r = t.run([exe, "jit-version"], env={"LD_LIBRARY_PATH": DROPIN, "CUDA_HOME": "/usr/local/cuda",
                                         "LAZYNCCL_DEBUG": "1"}, check_rc=0)
    expect(r.stdout, "nvjitlink=0.0 rc=6", "nvjitlink loaded=-")
    t.contains(r.stderr, "nvJitLink is unavailable", "log")
    t.check("libnvJitLink.so.13" not in r.stderr, f"a .13 was considered:\n{r.stderr}")


@case
def nvjitlink129_program_through_shim():
    """A program built against 12.9 (imports __nvJitLink*_12_9 from the shim)
    whose first call is nvJitLinkVersion, with 13.0 listed before 12.4: 12.4
    is loaded, and the 12.9 names fall back to 12.4's."""
    d = t.workdir("nvjitlink129_program_through_shim")
    real = nvjitlink124()
    exe = client(d, suffix="12_9")
    r = t.run([exe, "jit-version", "jit-link"], check_rc=0,
              env={"LAZYNVJITLINK_LIBPATH": f"{CUDA_LIB}:{os.path.dirname(real)}",
                   "LAZYNCCL_DEBUG": "1"})
    expect(r.stdout, "nvjitlink=12.4 rc=0", "cubin=", f"nvjitlink loaded={real}")
    t.contains(r.stderr, "__nvJitLinkCreate_12_9: not exported by", "log")
    t.contains(r.stderr, "using __nvJitLinkCreate_12_4", "log")


@case
def nvjitlink_13_minors():
    """A binary built against CUDA 13.2 links against the shim (every name of
    13.0-13.9 is exported) and runs on 13.0, the 13.2 names falling back."""
    d = t.workdir("nvjitlink_13_minors")
    names = t.exported(t.shim("nvjitlink"))
    missing = [f"__nvJitLink{f}_{a}_{b}" for f in ("Create", "GetErrorLogSize", "Complete")
               for a in (12, 13) for b in range(10)
               if f"__nvJitLink{f}_{a}_{b}" not in names]
    t.check(not missing, f"not exported: {missing}")
    r = t.run([client(d, suffix="13_2"), "jit-version", "jit-link"], check_rc=0,
              env={"LAZYNCCL_DEBUG": "1"})
    expect(r.stdout, "nvjitlink=13.", "cubin=")
    t.contains(r.stderr, "__nvJitLinkCreate_13_2: not exported by", "log")
    t.contains(r.stderr, "using __nvJitLinkCreate_13_0", "log")


# --- drop-in completeness -----------------------------------------------------

# Entry points with a leading double underscore that are not versioned API
# names (__nvrtcCPEx, __nvJitLinkAPI) are NVIDIA's private hooks for its own
# tools: no header declares them, so no program can have been built to call them.
PRIVATE = re.compile(r"^__(?!nvJitLink[A-Za-z]+_\d+_\d+$)")


def compare_exports(real, soname):
    dropin = os.path.join(DROPIN, soname)
    want = {n for n in t.exported(real) if not PRIVATE.match(n)}
    have = t.exported(dropin)
    missing = sorted(want - have)
    print(f"{real}: {len(want)} functions; the drop-in {soname} exports {len(have)}")
    print("missing from the drop-in: " + (", ".join(missing) or "none"))
    t.check(not missing, f"{len(missing)} functions of {real} missing from {dropin}")


@case
def dropin_complete_nvrtc124():
    compare_exports(os.path.join(t.debian("libnvrtc12"), "libnvrtc.so.12"), "libnvrtc.so.12")


@case
def dropin_complete_nvrtc13():
    compare_exports(t.real_library("libnvrtc.so.13"), "libnvrtc.so.13")


@case
def dropin_complete_nvjitlink124():
    compare_exports(nvjitlink124(), "libnvJitLink.so.12")


@case
def dropin_complete_nvjitlink13():
    compare_exports(t.real_library("libnvJitLink.so.13"), "libnvJitLink.so.13")


@case
def dropin_complete_nccl2223():
    compare_exports(nccl2223(), "libnccl.so.2")


@case
def dropin_complete_nccl2289():
    compare_exports(t.real_library("libnccl.so.2"), "libnccl.so.2")


# --- NCCL across versions ------------------------------------------------------

@case
def nccl_shim_from_2223_header():
    """A build whose nccl.h is Debian's 2.22.3 in its own directory (without
    cuda_runtime.h beside it) generates a shim that serves NCCL 2.28.9."""
    d = t.workdir("nccl_shim_from_2223_header")
    inc = t.debian_include("libnccl-dev")
    b = f"{d}/build"
    r = t.run(["meson", "setup", b, t.SOURCE, f"-Dnccl_include={inc}", "-Dtests=false",
               "-Dbench=false", "-Ddemo=false", f"-Dtoolkit_include={t.CUDA_INCLUDE}"])
    t.check(r.returncode == 0, f"meson setup failed:\n{r.stdout}\n{r.stderr}")
    r = t.run(["meson", "compile", "-C", b, "lazynccl:shared_library"])
    t.check(r.returncode == 0, f"meson compile failed:\n{r.stdout[-3000:]}\n{r.stderr}")
    with open(f"{b}/src/nccl_stubs.c") as f:
        head = f.read(2000)
    t.contains(head, "NCCL_VERSION_CODE = 22203", "provenance of the generated shim")
    exe = t.compile_c(f"{d}/client", [os.path.join(t.PROGS, "real_client.c")],
                      [f"-I{inc}", f"-I{t.CUDA_INCLUDE}", f"-I{t.SOURCE}/include", f"-I{t.BUILD}", f"-I{t.SHIMS}",
                       f"-L{b}/src", f"-Wl,-rpath,{b}/src", "-llazynccl", f"-L{t.SHIMS}",
                       f"-Wl,-rpath,{t.SHIMS}", "-llazynvrtc", "-llazynvjitlink"]
                      + t.sanitizer_link_args())
    real = t.real_library("libnccl.so.2")
    out = run([exe, "nccl-version"], {"LAZYNCCL_LIBPATH": real})
    expect(out, "nccl=22809 rc=0", f"nccl loaded={real}")


@case
def nccl2223_served_by_2289_shim():
    """The shim built against 2.28.9 serves NCCL 2.22.3 (run under trixie's C
    library, which 2.22.3 needs); a function only 2.28 has fails alone, and
    ncclGetLastError says why."""
    d = t.workdir("nccl2223_served_by_2289_shim")
    lib = nccl2223()
    ldso, libc = t.newer_loader()
    exe = client(d)
    out = run([ldso, "--library-path", f"{libc}:{t.SHIMS}", exe, "nccl-version", "nccl-new"],
              {"LAZYNCCL_LIBPATH": lib})
    expect(out, "nccl=22203 rc=0",
           f"ncclCommWindowRegister rc=2 last_error=lazynccl: ncclCommWindowRegister: "
           f"not exported by {lib}", f"nccl loaded={lib}")


@case
def nccl2223_own_answers_stay_on_thunk():
    """NCCL 2.22.3 lacks names the 2.28.9 shim exports, so a call can still
    fail after the load: the own-answer functions stay on their thunks
    (src/api/lz_bind.h), bound after the load or not, and ncclGetLastError still
    says why a missing function failed."""
    d = t.workdir("nccl2223_own_answers_stay_on_thunk")
    lib = nccl2223()
    ldso, libc = t.newer_loader()
    exe = t.bind_client(d)
    # LeakSanitizer reports a 16 KiB block trixie's ld.so (run by hand)
    # allocates inside NCCL's ncclCommCount, a thread-local block by its
    # size, referenced from where LeakSanitizer does not look: not ours (the
    # same run without "count" reports nothing).
    env = {"LAZYNCCL_LIBPATH": lib, "ASAN_OPTIONS": "detect_leaks=0"}
    out = run([ldso, "--library-path", f"{libc}:{t.SHIMS}", exe, "version", "errstr", "missing",
               "lasterr", "count", "got:ncclGetErrorString", "got:ncclGetLastError",
               "got:ncclCommCount"], env)
    expect(out, "version=22203 rc=0", "errstr=no error", "missing=2",
           f"lasterr=lazynccl: ncclCommWindowRegister: not exported by {lib}", "count=4")
    got = t.bound_slots(out)
    t.check(os.path.samefile(got["ncclGetErrorString"], t.shim("nccl")), out)
    t.check(os.path.samefile(got["ncclGetLastError"], t.shim("nccl")), out)
    t.check(os.path.samefile(got["ncclCommCount"], t.shim("nccl")), out)


@case
def glibc_too_old_rejected():
    """NCCL 2.22.3 needs GLIBC_2.38: on an older C library the probe rejects it
    (lazynccl-info and the shim alike) instead of calling it loadable."""
    d = t.workdir("glibc_too_old_rejected")
    have = t.glibc_version()
    if tuple(map(int, have.split("."))) >= (2, 38):
        raise t.Skip(f"this C library is {have}: NCCL 2.22.3 loads")
    lib = nccl2223()
    why = f"needs GLIBC_2.38, this process has {have}"
    info = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--verbose", "nccl"], env={"LAZYNCCL_LIBPATH": lib})
    t.contains(t.flat(info.stdout), why, "lazynccl-info")
    t.check("would load:" not in info.stdout or "would load: nothing" in info.stdout,
            f"lazynccl-info would load it:\n{info.stdout}")
    out = run([client(d), "nccl-version"], {"LAZYNCCL_LIBPATH": lib})
    expect(out, "nccl=-1 rc=2", "nccl loaded=-")
    r = t.run([client(d, name="client2"), "nccl-new"], env={"LAZYNCCL_LIBPATH": lib})
    t.contains(r.stdout, f"{lib}: rejected: {why}", "ncclGetLastError")


# --- messages ------------------------------------------------------------------

@case
def message_directory_names_every_soname():
    d = t.workdir("message_directory_names_every_soname")
    os.makedirs(f"{d}/empty")
    t.link_dir(f"{d}/cuda11", os.path.join(t.debian("libnvrtc11.2"), "libnvrtc.so.11.2"))
    exe = client(d)
    r = t.run([exe, "rtc-version"], env={"LAZYNVRTC_LIBPATH": f"{d}/empty"})
    t.equal(r.returncode, 0, "exit status")
    t.contains(r.stdout, "nvrtc=-1.-1 rc=", "failed")
    r = t.run([exe, "rtc-version"], env={"LAZYNVRTC_LIBPATH": f"{d}/empty", "LAZYNCCL_DEBUG": "1"})
    t.contains(r.stderr, f"[LAZYNVRTC_LIBPATH] {d}/empty: rejected: the directory holds no "
               "libnvrtc.so.13 or libnvrtc.so.12\n", "log")
    r = t.run([exe, "rtc-version"], env={"LAZYNVRTC_LIBPATH": f"{d}/cuda11", "LAZYNCCL_DEBUG": "1"})
    t.contains(r.stderr, f"[LAZYNVRTC_LIBPATH] {d}/cuda11: rejected: the directory holds no "
               "libnvrtc.so.13 or libnvrtc.so.12 (it holds libnvrtc.so.11.2: CUDA 11.x NVRTC, "
               "not supported by this shim)", "log")


@case
def message_cuda11_nvrtc():
    d = t.workdir("message_cuda11_nvrtc")
    f = os.path.join(t.debian("libnvrtc11.2"), "libnvrtc.so.11.2")
    r = t.run([client(d), "rtc-version"], env={"LAZYNVRTC_LIBPATH": f, "LAZYNCCL_DEBUG": "1"})
    t.contains(r.stderr, f"[LAZYNVRTC_LIBPATH] {f}: rejected: CUDA 11.x NVRTC, not supported by "
               "this shim (SONAME libnvrtc.so.11.2)", "log")


@case
def message_doctor_copies():
    """--doctor counts copies per soname and says which one is used and why."""
    d = t.workdir("message_doctor_copies")
    llp = nvrtc124(f"{d}/llp")
    os.makedirs(f"{d}/conda/lib")
    shutil.copy(f"{llp}/libnvrtc.so.12", f"{d}/conda/lib/libnvrtc.so.12")
    r = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--doctor", "nvrtc"],
              env={"LD_LIBRARY_PATH": llp, "CONDA_PREFIX": f"{d}/conda"})
    text = t.flat(r.stdout)
    real = os.path.realpath(f"{llp}/libnvrtc.so.12")
    t.contains(text, f"2 copies of libnvrtc.so.12: {d}/conda/lib/libnvrtc.so.12", "doctor")
    t.contains(text, real, "doctor")
    t.contains(text, f"used: {d}/conda/lib/libnvrtc.so.12 (found by CONDA_PREFIX, the first "
               "step that has one)", "doctor")
    t.check("copies of libnvrtc.so.13" not in text or "2 copies of libnvrtc.so.12" in text,
            "sonames mixed up")


# --- The names decide (docs/reference/search-order.md) ------------------------------------

def names_job(name):
    """A workdir, NCCL 2.22.3 and 2.28.9, and trixie's loader (2.22.3 needs
    glibc 2.38): (d, old, new, [ld.so, --library-path, ...])."""
    d = t.workdir(name)
    old = nccl2223()
    new = os.path.realpath(os.path.join(CUDA_LIB, "libnccl.so.2"))
    ldso, libc = t.newer_loader()
    return d, old, new, [ldso, "--library-path", f"{libc}:{t.SHIMS}"]


@case
def names_decide_an_import_passes_over_an_older_copy():
    """A program importing ncclCommWindowRegister (2.28 only) from the shim,
    with NCCL 2.22.3 first in LAZYNCCL_LIBPATH and 2.28.9 after it: its first
    call (ncclGetVersion, which both have) gets 2.28.9, the report naming
    what 2.22.3 lacks and who imports it; with 2.22.3 alone it gets 2.22.3,
    and the 2.28 call fails saying so."""
    d, old, new, run_by = names_job("names_decide_import")
    exe = client(d)
    out = t.run(run_by + [exe, "nccl-version"], env={"LAZYNCCL_LIBPATH": f"{old}:{new}",
                                                      "LAZYNCCL_DEBUG": "1"}, check_rc=0)
    expect(out.stdout, "nccl=22809 rc=0", f"nccl loaded={new}")
    t.contains(out.stderr, f"[LAZYNCCL_LIBPATH] {old}: lacks ncclCommWindowRegister, which {exe} "
               "imports; kept as a last resort", "the reason")
    out = run(run_by + [exe, "nccl-version", "nccl-new"], {"LAZYNCCL_LIBPATH": old})
    expect(out, "nccl=22203 rc=0", f"nccl loaded={old}",
           f"ncclCommWindowRegister rc=2 last_error=lazynccl: ncclCommWindowRegister: not exported by {old}")


@case
def names_decide_what_the_program_requires():
    """A program that imports only ncclGetVersion (an amalgamation's calls
    are its own), 2.22.3 first: 2.22.3 serves it; with LAZYNCCL_REQUIRE=
    ncclCommWindowRegister, or lazynccl_require() called before the first
    call, 2.28.9 does, and the report says the program requires it; with
    2.22.3 already loaded, that copy serves (one NCCL per process), saying
    what it lacks."""
    d, old, new, run_by = names_job("names_decide_require")
    src = os.path.join(d, "small.c")
    with open(src, "w") as f:
        f.write("#include <nccl.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <lazynccl_control.h>\n"
                "#include <dlfcn.h>\n"
                "int main(void) {\n  const char *r = getenv(\"REQUIRE_BY_API\"), *pre = getenv(\"PRELOAD\");\n"
                "  if (pre && !dlopen(pre, RTLD_NOW | RTLD_GLOBAL)) return 4;\n"
                "  if (r && lazynccl_require(r) != 0) return 3;\n"
                "  int v = 0; ncclGetVersion(&v);\n"
                "  printf(\"nccl=%d loaded=%s\\n\", v, lazynccl_loaded_path());\n  return 0; }\n")
    exe = t.compile_c(os.path.join(d, "small"), [src, f"-I{t.NCCL_INCLUDE}", f"-I{t.SHIMS}", f"-I{t.BUILD}",
                                                  f"-I{t.SOURCE}/include", f"-L{t.SHIMS}",
                                                  f"-Wl,-rpath,{t.SHIMS}", "-llazynccl", "-ldl"]
                      + t.sanitizer_link_args())
    # LeakSanitizer counts trixie's ld.so's own allocations for a dlopen as
    # the program's leaks: not what this case asks.
    san = {"ASAN_OPTIONS": "detect_leaks=0"} if t.SANITIZE not in ("", "none") else {}
    both = dict(san, LAZYNCCL_LIBPATH=f"{old}:{new}")
    t.equal(run(run_by + [exe], both), f"nccl=22203 loaded={old}\n", "nothing required: the first served")
    for extra in ({"LAZYNCCL_REQUIRE": "ncclCommShrink, ncclCommWindowRegister"},
                  {"REQUIRE_BY_API": "ncclCommWindowRegister"}):
        out = t.run(run_by + [exe], env=dict(both, LAZYNCCL_DEBUG="1", **extra), check_rc=0)
        t.equal(out.stdout, f"nccl=22809 loaded={new}\n", f"required by {extra}")
        by = "LAZYNCCL_REQUIRE" if "LAZYNCCL_REQUIRE" in extra else "lazynccl_require"
        t.check(re.search(rf"{re.escape(old)}: lacks ncclComm\w+, which the program requires \({by}\)",
                          out.stderr), f"the reason, {by}: {out.stderr[-2000:]}")
    # A copy the process already holds serves, lacking the name or not: a
    # second NCCL in one process would be two.
    out = t.run(run_by + [exe], env=dict(san, PRELOAD=old, LAZYNCCL_REQUIRE="ncclCommWindowRegister",
                                         LAZYNCCL_DEBUG="1"), check_rc=0)
    t.equal(out.stdout, f"nccl=22203 loaded={old}\n", "the copy already loaded")
    t.contains(out.stderr, "lacks ncclCommWindowRegister, which the program requires (LAZYNCCL_REQUIRE); "
               "taken: it is the copy this process has", "said")


# --- Released together, loaded together -----------------------------------------

def loaded(out, what):
    """The file a release_client line says was loaded for what."""
    m = re.search(rf"^{what} rc=0 version=\d+ loaded=(\S+)", out, re.M)
    t.check(m, f"{what} loaded: {out}")
    return m.group(1)


def nvrtc13_named(d):
    """CUDA 13.0's NVRTC as a distribution ships it: the file named with its
    full version (a hard link: the same file), the soname a link to it, its
    builtins beside it."""
    os.makedirs(d, exist_ok=True)
    real = os.path.realpath(os.path.join(CUDA_LIB, "libnvrtc.so.13"))
    named = os.path.join(d, "libnvrtc.so.13.0.88")
    try:
        os.link(real, named)
    except OSError:  # another file system
        shutil.copy(real, named)
    os.symlink("libnvrtc.so.13.0.88", os.path.join(d, "libnvrtc.so.13"))
    os.symlink(os.path.realpath(os.path.join(CUDA_LIB, "libnvrtc-builtins.so.13.0")),
               os.path.join(d, "libnvrtc-builtins.so.13.0"))
    return d


def release_job(name):
    """A workdir, tests/progs/release_client.c linked to the NVRTC, nvJitLink,
    cuBLAS and cuBLASLt shims, and a directory holding CUDA 12.4's NVRTC,
    builtins and nvJitLink together, as a distribution's lib/ does."""
    d = t.workdir(name)
    exe = t.compile_c(os.path.join(d, "release_client"), [os.path.join(t.PROGS, "release_client.c")],
                      t.link_shim_args("nvrtc", "nvjitlink", "cublas", "cublaslt"))
    lib124 = t.link_dir(f"{d}/cuda124", os.path.join(t.debian("libnvrtc12"), "libnvrtc.so.12"),
                        os.path.join(t.debian("libnvrtc-builtins12.4"), "libnvrtc-builtins.so.12.4"),
                        nvjitlink124())
    return d, exe, lib124


@case
def release_policy_nvjitlink_not_older_than_nvrtc():
    """NVRTC 13.0 loaded (its file named with its version, as distributions
    ship it), then nvJitLink with 12.4 first in LAZYNVJITLINK_LIBPATH and
    13.0 after: by default (best_effort) 12.4 is passed over as older than
    NVRTC and 13.0 taken (its release read from its versioned names); with
    12.4 alone it is taken, the log saying why it was kept; strict refuses
    it with that reason; off takes it first. NVRTC 13.0 as CUDA installs it
    (libnvrtc.so.13: no version in the name) cannot be compared with 12.4,
    which strict refuses too. NVRTC 12.4 then nvJitLink 13.0 (newer) is
    taken under strict."""
    d, exe, lib124 = release_job("release_policy_nvjitlink")
    nv13 = nvrtc13_named(f"{d}/nv13")
    jit124 = f"{lib124}/libnvJitLink.so.12"
    jit13 = os.path.realpath(os.path.join(CUDA_LIB, "libnvJitLink.so.13"))
    both = {"LAZYNVJITLINK_LIBPATH": f"{jit124}:{jit13}", "LAZYNVRTC_LIBPATH": nv13}
    out = run([exe, "nvrtc", "nvjitlink"], both)
    expect(out, f"nvjitlink rc=0 version=13000 loaded={jit13} step=LAZYNVJITLINK_LIBPATH")
    out = run([exe, "nvrtc", "nvjitlink"], dict(both, LAZYNCCL_RELEASE_POLICY="off"))
    expect(out, f"nvjitlink rc=0 version=12040 loaded={jit124} step=LAZYNVJITLINK_LIBPATH")
    nvrtc13 = loaded(out, "nvrtc")
    t.equal(nvrtc13, f"{nv13}/libnvrtc.so.13", "NVRTC from the named file")
    why = f"version 12.4.127 is older than NVRTC 13.0.88, loaded from {nvrtc13}"
    r = t.run([exe, "nvrtc", "nvjitlink"], env={"LAZYNVJITLINK_LIBPATH": jit124, "LAZYNCCL_DEBUG": "1",
                                                "LAZYNVRTC_LIBPATH": nv13}, check_rc=0)
    expect(r.stdout, f"nvjitlink rc=0 version=12040 loaded={jit124}")
    t.contains(r.stderr, f"[LAZYNVJITLINK_LIBPATH] {jit124}: {why}; kept in case no candidate is of "
               "its release (LAZYNCCL_RELEASE_POLICY=best_effort)", "best_effort says why")
    out = run([exe, "nvrtc", "nvjitlink"], {"LAZYNVJITLINK_LIBPATH": jit124, "LAZYNVRTC_LIBPATH": nv13,
                                             "LAZYNCCL_RELEASE_POLICY": "strict"})
    expect(out, "nvjitlink rc=6 version=0 loaded=(none)",
           f"[LAZYNVJITLINK_LIBPATH] {jit124}: rejected: {why} (LAZYNCCL_RELEASE_POLICY=strict)")
    out = run([exe, "nvrtc", "nvjitlink"], {"LAZYNVJITLINK_LIBPATH": jit124,
                                             "LAZYNCCL_RELEASE_POLICY": "strict"})
    expect(out, "nvjitlink rc=6 version=0 loaded=(none)",
           f"[LAZYNVJITLINK_LIBPATH] {jit124}: rejected: NVRTC is loaded from {loaded(out, 'nvrtc')}, "
           "whose version cannot be read, and this copy is not beside it "
           "(LAZYNCCL_RELEASE_POLICY=strict)")
    out = run([exe, "nvrtc", "nvjitlink"], {"LAZYNVRTC_LIBPATH": lib124,
                                             "LAZYNVJITLINK_LIBPATH": jit13,
                                             "LAZYNCCL_RELEASE_POLICY": "strict"})
    expect(out, "nvrtc rc=0 version=12040", f"nvjitlink rc=0 version=13000 loaded={jit13}")


@case
def release_nvrtc_not_newer_than_nvjitlink():
    """nvJitLink 12.4 loaded first, then NVRTC with 13.0 offered first and
    12.4 after: 13.0 is newer than the nvJitLink that must link its output,
    so 12.4 is taken; strict with 13.0 alone refuses it."""
    d, exe, lib124 = release_job("release_nvrtc_not_newer")
    nvrtc13 = f"{nvrtc13_named(d + '/nv13')}/libnvrtc.so.13"
    env = {"LAZYNVJITLINK_LIBPATH": lib124, "LAZYNVRTC_LIBPATH": f"{nvrtc13}:{lib124}"}
    out = run([exe, "nvjitlink", "nvrtc"], env)
    expect(out, "nvjitlink rc=0 version=12040", f"nvrtc rc=0 version=12040 loaded={lib124}/libnvrtc.so.12")
    out = run([exe, "nvjitlink", "nvrtc"], dict(env, LAZYNVRTC_LIBPATH=nvrtc13,
                                                 LAZYNCCL_RELEASE_POLICY="strict"))
    expect(out, f"{nvrtc13}: rejected: version 13.0.88 is newer than nvJitLink 12.4.127, loaded from "
                f"{lib124}/libnvJitLink.so.12")


@case
def release_the_second_prefers_the_first_directory():
    """NVRTC 12.4 loaded from a directory that holds nvJitLink 12.4 too: with
    no override, nvJitLink comes from that directory (step "same release"),
    not from the dynamic linker's 13.0; under off, from the dynamic linker."""
    d, exe, lib124 = release_job("release_second_prefers")
    lib = lib124
    env = {"LAZYNVRTC_LIBPATH": lib}
    out = run([exe, "nvrtc", "nvjitlink"], env)
    expect(out, f"nvjitlink rc=0 version=12040 loaded={lib}/libnvJitLink.so.12 step=same release")
    out = run([exe, "nvrtc", "nvjitlink"], dict(env, LAZYNCCL_RELEASE_POLICY="off"))
    t.check("nvjitlink rc=0 version=13000" in out, f"off: the usual search: {out}")


@case
def release_never_searches_a_relative_directory():
    """NVRTC 12.4 opened by a relative name ("./libnvrtc.so.12") from its
    directory, then the current directory changed to one holding another
    nvJitLink: the step "same release" does not search "." (where the
    dynamic linker found NVRTC is not where "." is now), and under strict a
    candidate cannot be judged against it. And strict refuses a candidate
    of another release that lacks a name as well (taken before as a last
    resort)."""
    d, exe, lib124 = release_job("release_relative")
    other = t.link_dir(f"{d}/other", nvjitlink124())
    out = t.run([exe, "open=./libnvrtc.so.12", f"chdir={other}", "nvjitlink"], cwd=lib124,
                check_rc=0).stdout
    t.check("step=same release" not in out and "loaded=./" not in out and "loaded=/" in out,
            f"never the current directory: {out}")
    nv13 = nvrtc13_named(f"{d}/nv13")
    out = run([exe, "nvrtc", "nvjitlink"], {"LAZYNVRTC_LIBPATH": nv13,
                                             "LAZYNVJITLINK_LIBPATH": f"{lib124}/libnvJitLink.so.12",
                                             "LAZYNVJITLINK_REQUIRE": "__nvJitLinkCreate_13_0",
                                             "LAZYNCCL_RELEASE_POLICY": "strict"})
    expect(out, "nvjitlink rc=6 version=0 loaded=(none)",
           f"{lib124}/libnvJitLink.so.12: rejected: version 12.4.127 is older than NVRTC 13.0.88")


# --- The program's controls -----------------------------------------------------

def controls_client(d):
    return t.compile_c(os.path.join(d, "controls_client"),
                       [os.path.join(t.PROGS, "controls_client.c")],
                       t.link_shim_args("nccl") + ["-ldl"])


@case
def controls_chooser_adopt_and_resolve_all():
    """On NCCL 2.22.3 and 2.28.9 (trixie's loader): a chooser's path and a
    chooser's handle are what loads (step "chosen by the program"), a chooser
    that answers nothing leaves the usual search, LAZYNCCL_LIBPATH wins over
    it (never called); an adopted handle is the library (step "adopted"),
    one of another library is refused with the probe's reason; resolve-all
    on 2.28.9 binds everything, on 2.22.3 names every missing function in
    one message, which last_error keeps: the names the process needs that
    it lacks (counted, and the same a second time), the header's others
    only counted."""
    d, old, new, run_by = names_job("controls")
    exe = controls_client(d)
    san = {"ASAN_OPTIONS": "detect_leaks=0"} if t.SANITIZE not in ("", "none") else {}
    out = run(run_by + [exe, f"choose-path={old}", "version"], san)
    expect(out, "version rc=0 nccl=22203", f"loaded={old} step=chosen by the program chooser_calls=1")
    out = run(run_by + [exe, f"choose-handle={old}", "version"], san)
    expect(out, "version rc=0 nccl=22203", f"loaded={old} step=chosen by the program chooser_calls=1")
    out = run(run_by + [exe, "choose-none", "version"], dict(san, LAZYNCCL_LIBPATH=f"{old}:{new}"))
    expect(out, f"loaded={old} step=LAZYNCCL_LIBPATH chooser_calls=0")
    out = run(run_by + [exe, "choose-path=/nonexistent/libnccl.so.2", "version"], san)
    expect(out, "version rc=2 nccl=0", "[chosen by the program] /nonexistent/libnccl.so.2: rejected: "
           "No such file or directory", "the program's chooser named that file, so nothing else was tried")
    out = run(run_by + [exe, f"adopt={old}", "version"], san)
    expect(out, "adopt rc=0\n", "version rc=0 nccl=22203", f"loaded={old} step=adopted")
    zlib = os.path.realpath("/lib/x86_64-linux-gnu/libz.so.1")
    out = run(run_by + [exe, f"adopt={zlib}", "version"], san)
    expect(out, "adopt rc=-1 last_error=lazynccl: the handle offered to lazynccl_adopt was refused:\n"
                f"  [adopted] {zlib}: rejected: SONAME libz.so.1 is not libnccl.so.2", "version rc=0 nccl=22809")
    out = run(run_by + [exe, "adopt-next", "version"], san)
    expect(out, "adopt rc=-1 last_error=lazynccl: the handle offered to lazynccl_adopt was refused:\n"
                "  the dynamic linker names no file for it", "version rc=0 nccl=22809")
    out = t.run(run_by + [exe, "adopt=./libnccl.so.2", "version"], env=san, cwd=os.path.dirname(new),
                check_rc=0).stdout
    expect(out, "adopt rc=0\n", "version rc=0 nccl=22809", "step=adopted")
    t.check(re.search(r"loaded=/\S*libnccl.so.2 step=adopted", out), f"named from its origin: {out}")
    out = run(run_by + [exe, "resolve-all"], dict(san, LAZYNCCL_LIBPATH=new))
    expect(out, "resolve_all=0 \n")
    need = dict(san, LAZYNCCL_LIBPATH=old, LAZYNCCL_REQUIRE="ncclCommShrink,ncclCommWindowRegister")
    for first in ([], ["resolve-all"]):  # the same answer a second time
        out = run(run_by + [exe, *first, "resolve-all"], need)
        m = re.search(r"resolve_all=(\d+) lazynccl: NCCL at (\S+) lacks (\d+) of the (\d+) functions "
                      r"this process needs: ([^;]*); (\d+) other functions of its header are not in it",
                      out.splitlines()[-2])
        t.check(m and m.groups()[:3] == ("2", old, "2"), f"one message: {out}")
        t.equal(m.group(5), "ncclCommShrink, ncclCommWindowRegister", "the names the process needs")
        t.check(int(m.group(6)) > 0, "the header's others counted")
        t.contains(out.splitlines()[-1], f"last_error=lazynccl: NCCL at {old} lacks 2 of",
                   "kept for last_error")
    out = run(run_by + [exe, "resolve-all"], dict(san, LAZYNCCL_LIBPATH=old))
    t.contains(out, "resolve_all=0 ", "nothing needed is missing")


if __name__ == "__main__":
    raise SystemExit(t.main())
