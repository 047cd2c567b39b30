#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The same job (docs/concepts/the-same-job.md, "The rule"): each row runs one
process plain and under lazynccl-run and compares, mechanically, what the
two got: the exit status, stdout (the NCCL that answered, and the files of
NCCL mapped, by device and inode, drop-ins left out), stderr and, for the
tools' rows, their whole output. A row whose two sides differ fails,
printing both."""
import os
import re
import shutil
import subprocess
import sys

import lztest as t
from lztest import case

RUN = os.path.join(t.BUILD, "lazynccl-run")
SYSTEM_PY = "/usr/bin/python3"
DROPINS = os.path.join(t.BUILD, "src", "dropin")
FIXTURE = os.path.join(t.SOURCE, "tests", "fixtures", "fidelity")


# A sanitizer build's drop-ins and shims are instrumented, and the
# sanitizer's runtime must come before any instrumented object: every
# process of a row, plain and wrapped alike, gets it preloaded (first in
# LD_PRELOAD), as a job running instrumented code would; leaks are not
# reported, the rows running others' programs (Python, the shell).
SANITIZER_RUNTIME = {"address": "libasan.so", "thread": "libtsan.so", "undefined": "libubsan.so"}


def sanitizer_env():
    """The build's sanitizer runtimes in the order they must load (ASan's or
    TSan's before UBSan's), as LD_PRELOAD's value and options; {} in a
    build without one."""
    libs = [SANITIZER_RUNTIME[k] for k in SANITIZER_RUNTIME if k in t.SANITIZE.split(",")]
    if not libs:
        return {}
    paths = [os.path.realpath(subprocess.run(["cc", f"-print-file-name={lib}"], capture_output=True,
                                             text=True).stdout.strip()) for lib in libs]
    return {"LD_PRELOAD": " ".join(paths), "ASAN_OPTIONS": "detect_leaks=0"}


SANITIZER_ENV = sanitizer_env()


def run(cmd, env=None, **kw):
    """t.run, with the sanitizer's runtime first where the build has one."""
    e = dict(env or {})
    if SANITIZER_ENV:
        e["LD_PRELOAD"] = " ".join(p for p in (SANITIZER_ENV["LD_PRELOAD"], e.get("LD_PRELOAD")) if p)
        e.setdefault("ASAN_OPTIONS", SANITIZER_ENV["ASAN_OPTIONS"])
    return t.run(cmd, env=e, **kw)


def plain_only(why, sanitizers=("address", "thread", "undefined")):
    """A row that cannot run in a build with one of these sanitizers, and
    why; every other row runs in each build, with the runtime preloaded
    (run())."""
    if SANITIZER_ENV and set(t.SANITIZE.split(",")) & set(sanitizers):
        raise t.Skip(f"{why}; the default build runs this row")


class Job:
    """A row's world: fake NCCLs of distinct versions in directories named
    as the search steps they stand for, and the probe program."""

    def __init__(self, name):
        self.d = d = t.workdir(f"fidelity_{name}")
        self.dirs = {}
        for where, version in (("ldpath", 22101), ("conda/lib", 22202), ("runpath", 22303),
                               ("wheel/nvidia/nccl/lib", 22404), ("rpath", 22505)):
            self.dirs[where] = os.path.join(d, where)
            t.fake_nccl(self.dirs[where], version=version)
        self.probe = t.compile_c(os.path.join(d, "probe"), [os.path.join(FIXTURE, "probe.c"), "-ldl", "-lpthread"])

    def linked(self, name, dtags):
        """The probe linked to libnccl.so.2 with a run path into the
        directory of the same name: DT_RUNPATH (new dtags) or DT_RPATH."""
        where = self.dirs[name]
        return t.compile_c(os.path.join(self.d, f"probe_{name}"),
                           [os.path.join(FIXTURE, "probe.c"), "-DPROBE_LINKED", "-ldl", "-lpthread",
                            f"-L{where}", "-l:libnccl.so.2", f"-Wl,-rpath,{where}",
                            "-Wl,--enable-new-dtags" if dtags == "runpath" else "-Wl,--disable-new-dtags"])


def side(cmd, env, wrapped, wrap_env=None, cwd=None):
    """(exit status, stdout, stderr) of cmd, plain or under lazynccl-run."""
    full = ([RUN, "--"] if wrapped else []) + cmd
    e = dict(env)
    if wrapped and wrap_env:
        e.update(wrap_env)
        full = cmd
    r = run(["timeout", "60"] + full, env=e, cwd=cwd)
    return (r.returncode, r.stdout, r.stderr)


def same_job(cmd, env=None, wrap_env=None, want=None, normal=lambda s: s, cwd=None):
    """The row: plain and wrapped give the same record (normal() applied to
    stdout and stderr, for what varies from run to run by nature: load
    addresses); want, if given, is in the plain stdout (the row tests what
    it means to)."""
    env = env or {}
    plain = side(cmd, env, False, cwd=cwd)
    wrapped = side(cmd, env, True, wrap_env, cwd=cwd)
    p = (plain[0], normal(plain[1]), normal(plain[2]))
    w = (wrapped[0], normal(wrapped[1]), normal(wrapped[2]))
    t.equal(w, p, f"wrapped against plain, {' '.join(cmd)} with {env}")
    if want:
        t.contains(p[1], want, "plain did what the row means")
    return p


@case
def fidelity_by_name_ld_library_path_beats_conda():
    """dlopen("libnccl.so.2") with LD_LIBRARY_PATH naming one NCCL and
    CONDA_PREFIX another: the dynamic linker's choice, LD_LIBRARY_PATH's,
    both ways (the shim's own order would take conda's)."""
    j = Job("ldpath_conda")
    same_job([j.probe, "libnccl.so.2"], {"LD_LIBRARY_PATH": j.dirs["ldpath"],
                                         "CONDA_PREFIX": os.path.dirname(j.dirs["conda/lib"])},
             want="version 22101")


@case
def fidelity_by_name_ld_library_path_beats_wheel_on_pythonpath():
    """An NVIDIA wheel layout on PYTHONPATH and LD_LIBRARY_PATH naming
    another NCCL: LD_LIBRARY_PATH's both ways."""
    j = Job("ldpath_wheel")
    same_job([j.probe, "libnccl.so.2"], {"LD_LIBRARY_PATH": j.dirs["ldpath"],
                                         "PYTHONPATH": os.path.join(j.d, "wheel")},
             want="version 22101")


@case
def fidelity_runpath_beats_conda():
    """A program linked -lnccl with a DT_RUNPATH, under a conda
    environment holding another NCCL: its run path's both ways."""
    j = Job("runpath_conda")
    same_job([j.linked("runpath", "runpath"), "link"],
             {"CONDA_PREFIX": os.path.dirname(j.dirs["conda/lib"])}, want="version 22303")


@case
def fidelity_rpath_beats_ld_library_path():
    """A program linked -lnccl with a DT_RPATH, LD_LIBRARY_PATH naming
    another NCCL: DT_RPATH comes first, both ways."""
    j = Job("rpath_ldpath")
    same_job([j.linked("rpath", "rpath"), "link"], {"LD_LIBRARY_PATH": j.dirs["ldpath"]},
             want="version 22505")


@case
def fidelity_ld_library_path_beats_runpath():
    """A program linked -lnccl with a DT_RUNPATH and LD_LIBRARY_PATH naming
    another NCCL: LD_LIBRARY_PATH comes first, both ways."""
    j = Job("ldpath_runpath")
    same_job([j.linked("runpath", "runpath"), "link"], {"LD_LIBRARY_PATH": j.dirs["ldpath"]},
             want="version 22101")


# Each refusal of the dynamic linker's open_verify (glibc elf/dl-load.c),
# and of its reading of the program headers, as one patch of the ELF
# header: (offset, bytes). The first fail the
# request with ld.so's words; the last two it passes over (another machine,
# another class), going on to the next directory.
HEADER_FAULTS = {"OS ABI": (7, bytes([9])), "ABI version": (8, bytes([1])),
                 "GNU ABI version": (7, bytes([3, 4])), "padding": (10, bytes([1])),
                 "ident version": (6, bytes([2])), "byte order": (5, bytes([2])),
                 "e_version": (20, (2).to_bytes(4, "little")), "type ET_REL": (16, (1).to_bytes(2, "little")),
                 "type ET_EXEC": (16, (2).to_bytes(2, "little")), "phentsize": (54, (50).to_bytes(2, "little")),
                 "magic": (1, b"X"), "no program headers": (56, (0).to_bytes(2, "little")),
                 "program headers past the end": (32, (1 << 40).to_bytes(8, "little")),
                 "machine": (18, (183).to_bytes(2, "little")),
                 "class": (4, bytes([1]))}


@case
def fidelity_run_path_candidate_the_linker_refuses():
    """A program linked -lnccl whose DT_RUNPATH directory holds a copy the
    dynamic linker refuses (each refusal of its open_verify, one header
    byte each), LD_LIBRARY_PATH naming nothing and the system lacking NCCL:
    plain stops at start with ld.so's words (exit 127); wrapped the same,
    no drop-in stood in. A copy of another machine or class is passed
    over: the run path's second directory holds a good copy, which both
    ways load."""
    j = Job("open_verify")
    d = os.path.join(j.d, "refused")
    os.makedirs(d, exist_ok=True)
    good = os.path.join(j.dirs["runpath"], "libnccl.so.2")
    prog = t.compile_c(os.path.join(j.d, "probe_two_runpaths"),
                       [os.path.join(FIXTURE, "probe.c"), "-DPROBE_LINKED", "-ldl", "-lpthread",
                        f"-L{j.dirs['runpath']}", "-l:libnccl.so.2", f"-Wl,-rpath,{d}:{j.dirs['runpath']}",
                        "-Wl,--enable-new-dtags"])
    original = open(good, "rb").read()
    for fault, (off, patch) in HEADER_FAULTS.items():
        b = bytearray(original)
        b[off:off + len(patch)] = patch
        with open(os.path.join(d, "libnccl.so.2"), "wb") as f:
            f.write(b)
        passed_over = fault in ("machine", "class")
        rc, out, err = same_job([prog, "link"], {})
        if passed_over:
            t.equal(rc, 0, f"{fault}: runs ({err})")
            t.contains(out, "version 22303", f"{fault}: the next directory's copy, both ways")
        else:
            t.equal(rc, 127, f"{fault}: plain stops at start ({err})")
            t.contains(err, "error while loading shared libraries", f"{fault}: ld.so's words")


@case
def fidelity_ld_profile_profiles_the_real_library():
    """LD_PROFILE=libnccl.so.2: the dynamic linker profiles the object of
    that name, the real NCCL, both ways (its profile file is sized by the
    profiled object's text: the drop-in's would differ)."""
    j = Job("ld_profile")
    sizes = []
    for wrapped in (False, True):
        out = os.path.join(j.d, f"profile_{wrapped}")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        env = {"LD_LIBRARY_PATH": j.dirs["ldpath"], "LD_PROFILE": "libnccl.so.2", "LD_PROFILE_OUTPUT": out}
        rc, stdout, err = side([j.probe, "libnccl.so.2"], env, wrapped)
        t.equal(rc, 0, f"runs, wrapped={wrapped}: {err}")
        t.contains(stdout, "version 22101", "the real NCCL called")
        t.equal(os.listdir(out), ["libnccl.so.2.profile"], f"one profile, wrapped={wrapped}")
        sizes.append(os.path.getsize(os.path.join(out, "libnccl.so.2.profile")))
    t.equal(sizes[1], sizes[0], "the same object profiled")


@case
def fidelity_origin_of_a_library_loaded_by_path():
    """A program loads NCCL by path and asks where it lies: dlinfo's
    RTLD_DI_ORIGIN, its link map's l_name and dladdr's file name for its
    ncclGetVersion, before and after the first call. Wrapped, all three
    name the drop-in standing for it, both times: a link map's name is what
    debuggers and symbolizers read the symbols of at its address, and the
    drop-in's code is what lies there (docs/reference/limitations.md). The
    row is plain's with the drop-in's directory for the file's, and the
    drop-in answers lazynccl_asked_path (the file asked for) at once and
    lazynccl_loaded_path (the file loaded) after the call."""
    d = t.workdir("fidelity_origin")
    real = os.path.join(d, "real")
    t.fake_nccl(real, version=22101)
    prog = t.compile_c(os.path.join(d, "origin"), [os.path.join(FIXTURE, "origin.c"), "-ldl"])
    asked = os.path.join(real, "libnccl.so.2")
    plain = side([prog, asked], {}, False)
    wrapped = side([prog, asked], {}, True)
    t.equal(plain[0], 0, f"plain: {plain}")
    t.contains(plain[1], "call: rc=0 version=22101", "plain called the file")
    lines = wrapped[1].splitlines()
    dropin_dir = lines[0].split("before: origin ", 1)[-1]
    t.equal(os.path.isfile(os.path.join(dropin_dir, "libnccl.so.2")) and dropin_dir != real, True,
            f"wrapped names a directory of its own: {wrapped}")
    extra = [f"{when}: asked {asked}" for when in ("before", "after")] + \
            ["before: loaded (none)", f"after: loaded {asked}"]
    t.equal((wrapped[0], [l for l in lines if l not in extra], sorted(set(lines) & set(extra))),
            (plain[0], plain[1].replace(real, dropin_dir).splitlines(), sorted(extra)),
            f"wrapped against plain: {wrapped}")


@case
def fidelity_racing_first_calls_through_a_dlopen_wrapper():
    """64 threads dlopen NCCL by name and call it at once, with a preloaded
    dlopen wrapper (what ASan's and TSan's runtimes are): ld.so sees the
    wrapper asking, so the audit module tells the drop-ins' own loads apart
    by their threads, each in a slot of its own. 20 runs wrapped, every
    call answered, as plain (with one slot, a thread's load overwritten by
    another's was answered with the drop-in, which refused it)."""
    j = Job("racing_wrapper")
    wrapper = t.compile_c(os.path.join(j.d, "libdlwrap.so"), [os.path.join(t.FAKES, "dlopen_wrapper.c"), "-ldl"],
                          shared=True)
    prog = t.compile_c(os.path.join(j.d, "racing"), [os.path.join(t.PROGS, "racing_dlopens.c"), "-ldl",
                                                      "-lpthread"])
    env = {"LD_LIBRARY_PATH": j.dirs["ldpath"], "LD_PRELOAD": wrapper}
    t.equal(side([prog], env, False)[:2], (0, "bad=0\n"), "plain")
    for i in range(20):
        r = side([prog], env, True)
        t.equal(r[:2], (0, "bad=0\n"), f"wrapped, run {i + 1}: {r[2][-1500:]}")


@case
def fidelity_ld_library_path_as_at_start():
    """A program started with LD_LIBRARY_PATH naming one NCCL sets it to
    another for its children, then makes its first call: linked -lnccl it
    has the first (ld.so read the variable at start), and linked to the
    shim too (the shim takes it as ld.so took it), plain and under
    lazynccl-run; the same for a program that sets its process title over
    the start's strings, and one whose getopt reorders an argument that
    reads like the variable; the variable twice in the environment (the
    last counts), run by ld.so as its interpreter and as a command, and
    ld.so run with --library-path (that list counts, the last given, even
    empty, and after an empty value of another option)."""
    j = Job("llp_at_start")
    src = os.path.join(j.d, "setenv_first.c")
    with open(src, "w") as f:
        f.write("#include <nccl.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
                "#include <unistd.h>\nextern char **environ;\n"
                "int main(int c, char **v) {\n"
                "  if (strcmp(v[1], \"title\") == 0) { /* setproctitle: environ moved, strings cleared */\n"
                "    int n = 0; while (environ[n]) n++; char **e = calloc(n + 1, sizeof *e);\n"
                "    for (int i = 0; i < n; i++) e[i] = strdup(environ[i]);\n"
                "    char *end = environ[n - 1] + strlen(environ[n - 1]);\n"
                "    memset(v[0], 0, end - v[0]); strcpy(v[0], \"title\"); environ = e;\n"
                "  } else if (strcmp(v[1], \"getopt\") == 0) { while (getopt(c, v, \"e:\") != -1) ; }\n"
                "  else setenv(\"LD_LIBRARY_PATH\", v[1], 1);\n"
                "  int ver = 0; ncclResult_t r = ncclGetVersion(&ver);\n"
                "  printf(\"rc %d version %d\\n\", (int)r, ver); return 0; }\n")
    plain = t.compile_c(os.path.join(j.d, "setenv_plain"), [src],
                        [f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}", f"-L{j.dirs['ldpath']}", "-l:libnccl.so.2"])
    shimmed = t.compile_c(os.path.join(j.d, "setenv_shim"), [src], t.link_shim_args("nccl"))
    env = {"LD_LIBRARY_PATH": j.dirs["ldpath"]}
    for prog in (plain, shimmed):
        p = same_job([prog, j.dirs["conda/lib"]], env)
        t.equal(p[:2], (0, "rc 0 version 22101\n"), f"{os.path.basename(prog)}: the start's NCCL")
        # Its title set over the start's strings (environ moved first), and
        # getopt reordering an argument that reads like the variable.
        p = same_job([prog, "title"], env)
        t.equal(p[:2], (0, "rc 0 version 22101\n"), f"{os.path.basename(prog)}: title set")
        p = same_job([prog, "getopt", "x", "-e", f"LD_LIBRARY_PATH={j.dirs['conda/lib']}"], env)
        t.equal(p[:2], (0, "rc 0 version 22101\n"), f"{os.path.basename(prog)}: getopt")
    # The variable twice in the environment: ld.so takes the last, run as
    # the program's interpreter and run as a command (which names the
    # program in AT_EXECFN instead of the file it was started by).
    ex = os.path.join(j.d, "ex.c")
    with open(ex, "w") as f:
        f.write("#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\nextern char **environ;\n"
                "/* ex ASSIGNMENT... -- PROG ARG...: PROG with the assignments after the environment */\n"
                "int main(int c, char **v) { int i = 1, n = 0; while (i < c && strcmp(v[i], \"--\")) i++;\n"
                "  while (environ[n]) n++; char **e = calloc(n + c, sizeof *e); memcpy(e, environ, n * sizeof *e);\n"
                "  memcpy(e + n, v + 1, (i - 1) * sizeof *e); execve(v[i + 1], v + i + 1, e);\n"
                "  return 127; }\n")
    ex = t.compile_c(os.path.join(j.d, "ex"), [ex])
    ldso = subprocess.run(["readelf", "-l", "/bin/true"], capture_output=True, text=True).stdout
    ldso = ldso.split("[Requesting program interpreter: ", 1)[1].split("]", 1)[0]
    for prog in (plain, shimmed):
        for via in ([], [ldso]):
            p = same_job([ex, "LD_LIBRARY_PATH=/nonexistent", f"LD_LIBRARY_PATH={j.dirs['ldpath']}", "--"] +
                         via + [prog, j.dirs["conda/lib"]])
            t.equal(p[:2], (0, "rc 0 version 22101\n"), f"{os.path.basename(prog)} {via}: the last assignment")
        # ld.so run as a command with --library-path (after another option
        # that takes a value): that list, not the variable's.
        p = same_job([ldso, "--glibc-hwcaps-prepend", "x", "--library-path", j.dirs["ldpath"], prog,
                      j.dirs["conda/lib"]],
                     {"LD_LIBRARY_PATH": "/nonexistent"})
        t.equal(p[:2], (0, "rc 0 version 22101\n"), f"{os.path.basename(prog)}: ld.so --library-path")
        # An option given an empty value takes it (ld.so goes on reading its
        # options), and the last of each counts, empty or not.
        p = same_job([ldso, "--preload", "", "--library-path", j.dirs["ldpath"], prog, j.dirs["conda/lib"]],
                     {"LD_LIBRARY_PATH": "/nonexistent"})
        t.equal(p[:2], (0, "rc 0 version 22101\n"), f"{os.path.basename(prog)}: after an empty --preload")
    # An empty --library-path, the last given, is no directory at all: not
    # the variable's, not the earlier option's.
    rows = {}
    for prog in (plain, shimmed):
        for how, argv, env in (("empty", ["--library-path", ""], {"LD_LIBRARY_PATH": j.dirs["ldpath"]}),
                               ("empty last", ["--library-path", j.dirs["ldpath"], "--library-path", ""], {})):
            rows[(prog, how)] = same_job([ldso] + argv + [prog, j.dirs["conda/lib"]], env)[:2]
    for how in ("empty", "empty last"):
        t.equal(rows[(shimmed, how)], rows[(plain, how)], f"--library-path {how}: the shim as -lnccl")
        t.check(rows[(plain, how)] != (0, "rc 0 version 22101\n"), f"{how}: not the listed NCCL")


@case
def fidelity_plugin_follows_the_programs_rpath():
    """A program with a DT_RPATH (conda's python3: $ORIGIN/../lib) dlopens a
    plugin without DT_RUNPATH that needs NCCL, LD_LIBRARY_PATH naming
    another: the program's DT_RPATH comes first, for a plugin linked -lnccl
    (ld.so's rule) and for one linked to the shim alike, plain and under
    lazynccl-run. A plugin with a DT_RUNPATH never gets the program's
    DT_RPATH: LD_LIBRARY_PATH's copy, else its DT_RUNPATH's."""
    j = Job("program_rpath")
    host = t.dlopen_host(j.d, "plugin_version", [f"-Wl,-rpath,{j.dirs['rpath']}", "-Wl,--disable-new-dtags"])
    plug = os.path.join(j.d, "plugin.c")
    with open(plug, "w") as f:
        f.write("#include <nccl.h>\nint plugin_version(void) { int v = 0; ncclGetVersion(&v); return v; }\n")
    inc = [f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}", "-Wl,--disable-new-dtags"]
    linked = t.compile_c(os.path.join(j.d, "plugin_linked.so"), [plug],
                         inc + [f"-L{j.dirs['rpath']}", "-l:libnccl.so.2"], shared=True)
    shimmed = t.compile_c(os.path.join(j.d, "plugin_shim.so"), [plug], inc + t.link_shim_args("nccl"), shared=True)
    env = {"LD_LIBRARY_PATH": j.dirs["ldpath"]}
    for plugin in (linked, shimmed):
        p = same_job([host, plugin], env)
        t.equal(p[:2], (0, "version 22505\n"), f"{os.path.basename(plugin)}: the program's DT_RPATH")
    # A plugin with a DT_RUNPATH: ld.so then takes no DT_RPATH at all, not
    # even the program's (the shim, which has none, does not ask in the
    # plugin's place): LD_LIBRARY_PATH's, else the plugin's DT_RUNPATH's.
    inc_run = [f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}", "-Wl,--enable-new-dtags",
               f"-Wl,-rpath,{j.dirs['runpath']}"]
    linked = t.compile_c(os.path.join(j.d, "plugin_runpath_linked.so"), [plug],
                         inc_run + [f"-L{j.dirs['runpath']}", "-l:libnccl.so.2"], shared=True)
    shimmed = t.compile_c(os.path.join(j.d, "plugin_runpath_shim.so"), [plug], inc_run + t.link_shim_args("nccl"),
                          shared=True)
    for plugin in (linked, shimmed):
        for env, want in (({"LD_LIBRARY_PATH": j.dirs["ldpath"]}, 22101), ({}, 22303)):
            p = same_job([host, plugin], env)
            t.equal(p[:2], (0, f"version {want}\n"), f"{os.path.basename(plugin)} with {env}: not the "
                    "program's DT_RPATH")


@case
def fidelity_rpath_of_the_objects_above_the_requester():
    """A program without run paths dlopens an extension with a DT_RPATH
    (conda's and old setuptools' builds); the extension needs a library
    without run paths that needs NCCL, LD_LIBRARY_PATH naming another:
    ld.so follows the DT_RPATH of the objects that loaded the requester,
    so the extension's copy comes first, for a library linked -lnccl and
    one linked to the shim alike, plain and under lazynccl-run. The same
    through a middle library with a DT_RUNPATH, which leaves out only its
    own DT_RPATH, not the chain above it, and where the extension needs the
    library (one without a soname) by its path."""
    j = Job("loader_chain")
    host = t.dlopen_host(j.d, "ext_version")
    src = os.path.join(j.d, "need.c")
    with open(src, "w") as f:
        f.write("#include <nccl.h>\nint need_version(void) { int v = 0; ncclGetVersion(&v); return v; }\n")
    ext = os.path.join(j.d, "ext.c")
    with open(ext, "w") as f:
        f.write("int need_version(void);\nint ext_version(void) { return need_version(); }\n")
    inc = [f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}"]
    libs = os.path.join(j.d, "libs")
    os.makedirs(libs, exist_ok=True)
    rows = []
    for how, nccl in (("linked", [f"-L{j.dirs['rpath']}", "-l:libnccl.so.2"]), ("shim", t.link_shim_args("nccl"))):
        need = t.compile_c(os.path.join(libs, f"libneed_{how}.so"), [src], inc + nccl + ["-Wl,--disable-new-dtags"],
                           shared=True)
        # Straight: extension (DT_RPATH) -> libneed -> NCCL.
        rows.append((how, "straight", t.compile_c(
            os.path.join(j.d, f"ext_{how}.so"), [ext, f"-L{libs}", f"-l:libneed_{how}.so", "-Wl,--disable-new-dtags",
                                                 f"-Wl,-rpath,{libs}:{j.dirs['rpath']}"], shared=True)))
        # Through a middle library with a DT_RUNPATH (into libs only).
        mid_src = os.path.join(j.d, "mid.c")
        with open(mid_src, "w") as f:
            f.write("int need_version(void);\nint mid_version(void) { return need_version(); }\n")
        t.compile_c(os.path.join(libs, f"libmid_{how}.so"), [mid_src, f"-L{libs}", f"-l:libneed_{how}.so",
                                                             "-Wl,--enable-new-dtags", f"-Wl,-rpath,{libs}"],
                    shared=True)
        ext_mid = os.path.join(j.d, "ext_mid.c")
        with open(ext_mid, "w") as f:
            f.write("int mid_version(void);\nint ext_version(void) { return mid_version(); }\n")
        rows.append((how, "through DT_RUNPATH", t.compile_c(
            os.path.join(j.d, f"ext_mid_{how}.so"), [ext_mid, f"-L{libs}", f"-l:libmid_{how}.so",
                                                     "-Wl,--disable-new-dtags", f"-Wl,-rpath,{libs}:{j.dirs['rpath']}"],
            shared=True)))
        # Needed by its path: libneed has no soname, so the extension's
        # DT_NEEDED is the path it was linked with, the object's name.
        rows.append((how, "needed by path", t.compile_c(
            os.path.join(j.d, f"ext_path_{how}.so"), [ext, os.path.join(libs, f"libneed_{how}.so"),
                                                      "-Wl,--disable-new-dtags", f"-Wl,-rpath,{j.dirs['rpath']}"],
            shared=True)))
    env = {"LD_LIBRARY_PATH": j.dirs["ldpath"]}
    for how, shape, extension in rows:
        p = same_job([host, extension], env)
        t.equal(p[:2], (0, "version 22505\n"), f"{how}, {shape}: the extension's DT_RPATH before LD_LIBRARY_PATH")


@case
def fidelity_a_long_chain_of_loaders():
    """An extension with a DT_RPATH at the top of a chain of 70 libraries
    without run paths, the last needing the shim, LD_LIBRARY_PATH naming
    another NCCL: ld.so follows the chain to its top however long, and so
    does the first call (it stopped after 64 objects)."""
    j = Job("long_chain")
    host = t.dlopen_host(j.d, "ext_version")
    libs = os.path.join(j.d, "libs")
    os.makedirs(libs, exist_ok=True)
    depth = 70
    src = os.path.join(j.d, "last.c")
    with open(src, "w") as f:
        f.write("#include <nccl.h>\nint link_0(void) { int v = 0; ncclGetVersion(&v); return v; }\n")
    t.compile_c(os.path.join(libs, "liblink0.so"), [src, "-Wl,-soname,liblink0.so", f"-I{t.NCCL_INCLUDE}",
                                                     f"-I{t.CUDA_INCLUDE}", *t.link_shim_args("nccl"),
                                                     "-Wl,--disable-new-dtags"], shared=True)
    for i in range(1, depth):
        src = os.path.join(j.d, f"link{i}.c")
        with open(src, "w") as f:
            f.write(f"int link_{i - 1}(void);\nint link_{i}(void) {{ return link_{i - 1}(); }}\n")
        t.compile_c(os.path.join(libs, f"liblink{i}.so"), [src, f"-Wl,-soname,liblink{i}.so", f"-L{libs}",
                                                            f"-l:liblink{i - 1}.so"], shared=True)
    ext = os.path.join(j.d, "ext.c")
    with open(ext, "w") as f:
        f.write(f"int link_{depth - 1}(void);\nint ext_version(void) {{ return link_{depth - 1}(); }}\n")
    top = t.compile_c(os.path.join(j.d, "ext.so"), [ext, f"-L{libs}", f"-l:liblink{depth - 1}.so",
                                                    "-Wl,--disable-new-dtags", f"-Wl,-rpath,{libs}:{j.dirs['rpath']}"],
                      shared=True)
    same_job([host, top], {"LD_LIBRARY_PATH": j.dirs["ldpath"]}, want="version 22505")


@case
def fidelity_the_first_requester_decides():
    """Two plugins need NCCL, dlopened one after the other: the first with
    a DT_RUNPATH into one copy, the second with a DT_RPATH into another.
    ld.so loads NCCL for the first and hands the second the same copy, so
    the second's DT_RPATH is never searched: the first's copy for both,
    linked -lnccl and linked to the shim, plain and under lazynccl-run
    (a first call searching every requester's run paths took the
    second's DT_RPATH, which ld.so tries before any DT_RUNPATH)."""
    j = Job("first_requester")
    host = t.dlopen_host(j.d, "plugin_version")
    plug = os.path.join(j.d, "plugin.c")
    with open(plug, "w") as f:
        f.write("#include <nccl.h>\nint plugin_version(void) { int v = 0; ncclGetVersion(&v); return v; }\n")
    inc = [f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}"]
    for how in ("linked", "shim"):
        plugins = []
        for tag, dtags in (("runpath", "--enable-new-dtags"), ("rpath", "--disable-new-dtags")):
            nccl = [f"-L{j.dirs[tag]}", "-l:libnccl.so.2"] if how == "linked" else t.link_shim_args("nccl")
            plugins.append(t.compile_c(os.path.join(j.d, f"plugin_{how}_{tag}.so"), [plug],
                                       inc + nccl + [f"-Wl,{dtags}", f"-Wl,-rpath,{j.dirs[tag]}"], shared=True))
        p = same_job([host, *plugins])
        t.equal(p[:2], (0, "version 22303\nversion 22303\n"), f"{how}: the first plugin's DT_RUNPATH copy, for both")


@case
def fidelity_relative_ld_library_path_then_chdir():
    """A relative LD_LIBRARY_PATH entry, and a program that changes
    directory between its dlopen and its first call: the file of the
    directory it was in when it asked, both ways."""
    j = Job("relative")
    t.fake_nccl(os.path.join(j.d, "elsewhere", "ldpath"), version=22606)
    same_job([j.probe, "libnccl.so.2", "chdir", "elsewhere"], {"LD_LIBRARY_PATH": "ldpath"},
             want="version 22101", cwd=j.d)


@case
def fidelity_empty_ld_library_path_entry():
    """An empty LD_LIBRARY_PATH entry (the current directory, for glibc)
    before another NCCL's directory: the current directory's, both ways."""
    j = Job("empty_entry")
    same_job([j.probe, "libnccl.so.2"], {"LD_LIBRARY_PATH": f":{j.dirs['conda/lib']}"},
             want="version 22101", cwd=j.dirs["ldpath"])


@case
def fidelity_ld_so_cache_beats_conda():
    """No LD_LIBRARY_PATH, NCCL in ld.so.cache and another under
    CONDA_PREFIX: the cache's, the real NCCL, both ways."""
    j = Job("cache_conda")
    t.real_library("libnccl.so.2")
    same_job([j.probe, "libnccl.so.2"], {"CONDA_PREFIX": os.path.dirname(j.dirs["conda/lib"])},
             want="version 2")


@case
def fidelity_not_elf_on_the_path_fails_alike():
    """A file named libnccl.so.2 on LD_LIBRARY_PATH that is not ELF: the
    dynamic linker refuses the request ("invalid ELF header"), wrapped as
    plain, with the same words."""
    j = Job("not_elf")
    bad = os.path.join(j.d, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "libnccl.so.2"), "w") as f:
        f.write("not a library\n" * 100)
    same_job([j.probe, "libnccl.so.2"], {"LD_LIBRARY_PATH": f"{bad}:{j.dirs['ldpath']}"},
             want="invalid ELF header")


@case
def fidelity_other_machine_skipped_alike():
    """A libnccl.so.2 of another machine first on LD_LIBRARY_PATH: the
    dynamic linker skips it for the next directory's, both ways."""
    j = Job("other_machine")
    cross = shutil.which("aarch64-linux-gnu-gcc") if t.HOST_CPU == "x86_64" else shutil.which("gcc")
    if not cross or t.HOST_CPU not in ("x86_64",):
        raise t.Skip("no aarch64-linux-gnu-gcc (Debian's gcc-aarch64-linux-gnu) to build a foreign library")
    other = os.path.join(j.d, "other")
    os.makedirs(other)
    src = os.path.join(j.d, "empty.c")
    with open(src, "w") as f:
        f.write("int ncclGetVersion(int *v) { *v = 1; return 0; }\n")
    subprocess.run([cross, "-shared", "-fPIC", "-o", os.path.join(other, "libnccl.so.2"), src,
                    "-Wl,-soname,libnccl.so.2"], check=True)
    same_job([j.probe, "libnccl.so.2"], {"LD_LIBRARY_PATH": f"{other}:{j.dirs['ldpath']}"},
             want="version 22101")


def broken_dropins(j, how):
    """lazynccl-run's environment (--print-env) for a copy of the drop-ins
    whose NCCL drop-in is then removed or replaced by how."""
    copy = os.path.join(j.d, "dropin")
    shutil.copytree(DROPINS, copy, symlinks=True)
    module = os.path.join(t.BUILD, "src", "audit", "liblazynccl-audit.so")
    env = run([RUN, "--print-env=sh"], env={"LAZYNCCL_DROPIN_DIR": copy, "LAZYNCCL_AUDIT_MODULE": module},
                check_rc=0).stdout
    wrap = dict(re.findall(r"^export (\w+)='([^']*)'$", env, re.M))
    t.check("LAZYNCCL_AUDIT_DROPINS" in wrap, f"lazynccl-run --print-env: {env}")
    target = os.path.join(copy, "libnccl.so.2")
    os.remove(target)
    if how == "text":
        with open(target, "w") as f:
            f.write("not a library\n")
    elif how == "loop":
        os.symlink("libnccl.so.2", target)
    return wrap


def dropin_gone(how):
    j = Job(f"dropin_{how}")
    wrap = broken_dropins(j, how)
    same_job([j.probe, "libnccl.so.2"], {"LD_LIBRARY_PATH": j.dirs["ldpath"]}, wrap_env=wrap,
             want="version 22101")
    same_job([j.probe, os.path.join(j.dirs["ldpath"], "libnccl.so.2")], {}, wrap_env=wrap,
             want="version 22101")


@case
def fidelity_dropin_removed_mid_job():
    """The drop-in directory lazynccl-run named loses the NCCL drop-in
    (a pip upgrade, an unmount) while the job runs: a later process behaves
    as plain, by name and by path."""
    dropin_gone("removed")


@case
def fidelity_dropin_not_a_library():
    """The NCCL drop-in replaced by a text file, then by a symlink loop: the
    module never stands it in; processes behave as plain."""
    dropin_gone("text")
    dropin_gone("loop")


@case
def fidelity_unloadable_choice_is_not_replaced():
    """The file the dynamic linker would map (by name) or the program names
    (by path) needs a library that is missing: plain, the dlopen fails
    naming it. Wrapped, the drop-in does not stand in for a file that needs
    what it does not (not loaded, not among its own DT_NEEDED): the dynamic
    linker maps the file itself and fails with the same words, and no other
    NCCL is loaded in its place. Where that library is there but not loaded
    yet, the file is loaded at once, as plain (not lazily): the same
    version, the same file mapped. A needed name too long to be a file's
    fails alike."""
    j = Job("unloadable")
    nd = os.path.join(j.d, "needs_missing")
    missing = make_missing(j.d)
    t.fake_nccl(nd, version=22999, extra=["-Wl,--no-as-needed", missing])
    env = {"LD_LIBRARY_PATH": f"{nd}:{j.dirs['ldpath']}"}
    # There, not loaded: loaded at once, the same file both ways.
    for arg in ("libnccl.so.2", f"{nd}/libnccl.so.2"):
        p = same_job([j.probe, arg], {**env, "LD_LIBRARY_PATH": f"{env['LD_LIBRARY_PATH']}:{j.d}"})
        t.contains(p[1], f"version 22999", f"{arg}: the file that needs it answers")
        t.contains(p[1], f"{nd}/libnccl.so.2", f"{arg}: and is mapped")
    os.remove(missing)
    for arg in ("libnccl.so.2", f"{nd}/libnccl.so.2"):
        p = same_job([j.probe, arg], env)
        t.contains(p[1], "dlopen: libmissing.so.1: cannot open shared object file", f"{arg}: plain fails")
        t.check("mapped" not in p[1], f"{arg}: no NCCL mapped in its place: {p[1]}")
    # A needed name longer than a file name may be (ld.so: "File name too
    # long"), which the module cannot read whole: left to ld.so too.
    long_name = "lib" + "x" * 280 + ".so.1"
    src = os.path.join(j.d, "long.c")
    with open(src, "w") as f:
        f.write("int long_fn(void) { return 1; }\n")
    longlib = t.compile_c(os.path.join(j.d, "liblong.so"), [src], [f"-Wl,-soname,{long_name}"], shared=True)
    ld = os.path.join(j.d, "needs_long")
    t.fake_nccl(ld, version=22998, extra=["-Wl,--no-as-needed", longlib])
    for arg in ("libnccl.so.2", f"{ld}/libnccl.so.2"):
        p = same_job([j.probe, arg], {"LD_LIBRARY_PATH": f"{ld}:{j.dirs['ldpath']}"})
        t.contains(p[1], "cannot open shared object file: File name too long", f"{arg}: plain fails")
    r = run([RUN, "--", j.probe, f"{nd}/libnccl.so.2"], env={**env, "LAZYNCCL_DEBUG": "1"})
    t.contains(t.flat(r.stderr), "it needs libmissing.so.1 (not loaded, not needed by its drop-in): the "
                                 "dynamic linker maps that file itself", "the module says why")


OPEN_BY_PATH = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    /* As a Python program's del os.environ[...]: ld.so read it at start. */
    if (argc > 3 && strcmp(argv[3], "unset") == 0)
        unsetenv("LD_LIBRARY_PATH");
    void *h = dlopen(argv[1], RTLD_LAZY);
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    /* The files of the companion's name mapped: the drop-in's or the real. */
    FILE *m = fopen("/proc/self/maps", "r");
    char line[4096], last[4096] = "";
    while (m && fgets(line, sizeof line, m)) {
        char *path = strchr(line, '/');
        if (path && strstr(path, argv[2]) && strcmp(path, last) != 0) {
            printf("mapped %s", path);
            strcpy(last, path);
        }
    }
    return 0;
}
"""


@case
def fidelity_companion_beside_a_path_that_needs_more():
    """cuBLAS asked for by path finds cuBLASLt beside it ($ORIGIN in its run
    path). Where the cuBLASLt there needs a library that cuBLASLt's drop-in
    does not (and that is not loaded), plain maps it at once and loads what
    it needs (here through its own $ORIGIN), or fails naming it; wrapped,
    with no LD_LIBRARY_PATH before that candidate, ld.so maps that file
    under its own name too: the same objects, the same error. A copy in a
    glibc-hwcaps subdirectory there comes first, both ways. Where
    LD_LIBRARY_PATH is searched first, the drop-in stands in for that file
    (its needs load at the first call, a documented difference)."""
    real = os.path.join(CUDA_LIB, "libcublas.so.13")
    if not os.path.exists(real):
        raise t.Skip("no cuBLAS 13 in " + CUDA_LIB)
    d = t.workdir("fidelity_companion_needs")
    chosen = t.link_dir(os.path.join(d, "chosen"), real)
    with open(os.path.join(d, "needed.c"), "w") as f:
        f.write("int needed_fn(void) { return 1; }\n")
    needed = t.compile_c(os.path.join(chosen, "libneeded.so.1"), [os.path.join(d, "needed.c")],
                         ["-Wl,-soname,libneeded.so.1"], shared=True)
    src = os.path.join(d, "lt.c")
    with open(src, "w") as f:
        f.write("int lt_fn(void) { return 1; }\n")
    t.compile_c(os.path.join(chosen, "libcublasLt.so.13"), [src],
                ["-Wl,-soname,libcublasLt.so.13", "-Wl,--no-as-needed", needed,
                 "-Wl,--enable-new-dtags,-rpath,$ORIGIN"], shared=True)
    with open(os.path.join(d, "open.c"), "w") as f:
        f.write(OPEN_BY_PATH)
    opener = t.compile_c(os.path.join(d, "open"), [os.path.join(d, "open.c"), "-ldl"])
    cmd = [opener, os.path.join(chosen, "libcublas.so.13"), "/chosen/lib"]
    # There, not loaded, found through its own $ORIGIN: mapped at once,
    # under its own name, both ways.
    p = same_job(cmd)
    t.contains(p[1], f"mapped {chosen}/libcublasLt.so.13", "plain maps that file")
    t.contains(p[1], f"mapped {chosen}/libneeded.so.1", "and what it needs")
    r = run([RUN, "--"] + cmd, env={"LAZYNCCL_DEBUG": "1"})
    t.contains(t.flat(r.stderr), "(beside the file its drop-in stands for), which needs libneeded.so.1",
               "the module says why")
    # A glibc-hwcaps subdirectory beside it holds a cuBLASLt that needs
    # nothing more: ld.so takes that one (every x86-64 CPU runs x86-64-v2);
    # wrapped, its drop-in stands for it.
    if t.HOST_CPU == "x86_64":
        caps = os.path.join(chosen, "glibc-hwcaps", "x86-64-v2")
        os.makedirs(caps)
        t.compile_c(os.path.join(caps, "libcublasLt.so.13"), [src], ["-Wl,-soname,libcublasLt.so.13"],
                    shared=True)
        plain = side(cmd[:2] + ["libcublasLt"], {}, False)
        t.contains(plain[1], f"mapped {caps}/libcublasLt.so.13", "plain: the subdirectory's")
        r = run([RUN, "--"] + cmd[:2] + ["libcublasLt"], env={"LAZYNCCL_DEBUG": "1"})
        t.contains(t.flat(r.stderr), f"the dynamic linker would map {caps}/libcublasLt.so.13",
                   "wrapped: the drop-in stands for the subdirectory's")
        shutil.rmtree(os.path.join(chosen, "glibc-hwcaps"))
    # LD_LIBRARY_PATH as the process started, then unset by the program:
    # ld.so searched it first, so the module does not hand the neighbour over.
    llp = t.fake_nccl(os.path.join(d, "llp"), name="libcublasLt.so.13", soname="libcublasLt.so.13")
    env = {"LD_LIBRARY_PATH": os.path.dirname(llp)}
    t.contains(side(cmd[:2] + ["libcublasLt", "unset"], env, False)[1], f"mapped {llp}", "plain: the first")
    r = run([RUN, "--"] + cmd[:2] + ["libcublasLt", "unset"], env=dict(env, LAZYNCCL_DEBUG="1"))
    t.contains(t.flat(r.stderr), f"the dynamic linker would map {llp};", "wrapped: the same file")
    os.remove(needed)
    p = same_job(cmd)
    t.contains(p[1], "dlopen: libneeded.so.1: cannot open shared object file", "plain fails naming it")
    # LD_LIBRARY_PATH searched before: the drop-in stands in (documented).
    env = {"LD_LIBRARY_PATH": os.path.join(d, "nowhere")}
    t.contains(side(cmd, env, False)[1], "dlopen: libneeded.so.1", "plain fails")
    t.contains(side(cmd[:2] + ["libcublasLt"], env, True)[1], "/dropin/libcublasLt.so.13",
               "wrapped: the drop-in stands in, the dlopen succeeds")
    # A neighbour ld.so cannot use (not ELF, a directory): it fails the
    # request naming that file, both ways.
    lt = os.path.join(chosen, "libcublasLt.so.13")
    os.remove(lt)
    with open(lt, "w") as f:
        f.write("x\n")
    p = same_job(cmd)
    t.contains(p[1], f"dlopen: {lt}: file too short", "plain fails naming it")
    os.remove(lt)
    os.makedirs(lt)
    same_job(cmd, want="dlopen: ")
    os.rmdir(lt)


UNBOUND_NCCL = r"""
#include <stdio.h>
#include <stdlib.h>
#include <nccl.h>
int main(void) {
    int v = 0;
    ncclGetVersion(&v);
    printf("version %d\n", v);
    fflush(stdout);
    /* For its children: ld.so took its variables at start. */
    if (getenv("SET_LD_VARS")) {
        setenv("LD_BIND_NOW", "1", 1);
        unsetenv("LD_PRELOAD");
    }
    ncclUniqueId id;
    printf("rc %d\n", (int)ncclGetUniqueId(&id));
    return 0;
}
"""

UNBOUND_JIT = r"""
#include <stddef.h>
#include <stdio.h>
int __nvJitLinkGetErrorLogSize_12_9(void *h, size_t *s);
int main(void) {
    size_t s = 0;
    printf("rc %d\n", __nvJitLinkGetErrorLogSize_12_9(NULL, &s));
    return 0;
}
"""


@case
def fidelity_missing_function_stops_as_ld_so():
    """A program linked -lnccl (lazy binding) whose NCCL, found at run time,
    lacks a function it calls: plain, ld.so stops it at that call, "PROG:
    symbol lookup error: PROG: undefined symbol: NAME", exit 127, after the
    functions the file has answered. Wrapped, the drop-in stands in for
    that file and stops the same, its report after ld.so's line. The same
    for a versioned name (nvJitLink's __nvJitLinkGetErrorLogSize_12_9,
    version libnvJitLink.so.12, on a 12.8): no older version is served
    under lazynccl-run (the drop-in alone on LD_LIBRARY_PATH serves it:
    field_failure_12_9_on_12_8). Reached through dlsym, which plain answers
    NULL, or bound at load (-z now, RTLD_NOW), which plain fails, the name
    gets the API's failure wrapped: documented differences. A program that
    sets LD_BIND_NOW after start still stops, as ld.so took it at start. A
    library preloaded (LD_PRELOAD, or ld.so's --preload) counts as loaded at
    start: its call stops as ld.so stops it. Where the program and a library
    both import the name, the stop names the one whose call it is, as ld.so
    names the object whose call it binds."""
    d = t.workdir("fidelity_missing_function")
    full = t.fake_nccl(f"{d}/full", version=22101)
    t.fake_nccl(f"{d}/part", version=22202, omit=["ncclGetUniqueId"])
    t.fake_nvjitlink(f"{d}/v129", 12, 9, version_node=True)
    t.fake_nvjitlink(f"{d}/v128", 12, 8, version_node=True)
    for name, src in (("unbound_nccl", UNBOUND_NCCL), ("unbound_jit", UNBOUND_JIT)):
        with open(f"{d}/{name}.c", "w") as f:
            f.write(src)
    nccl = t.compile_c(f"{d}/unbound_nccl", [f"{d}/unbound_nccl.c"],
                       [f"-I{t.NCCL_INCLUDE}", f"-L{os.path.dirname(full)}", "-l:libnccl.so.2", "-Wl,-z,lazy"])
    jit = t.compile_c(f"{d}/unbound_jit", [f"{d}/unbound_jit.c"],
                      [f"-L{d}/v129", "-l:libnvJitLink.so.12", "-Wl,-z,lazy"])
    # Bound at load (-z now; RTLD_NOW, as Python imports an extension):
    # plain fails that load, which the drop-in, mapped in its place, cannot
    # undo; the call gets the API's failure (docs/reference/limitations.md).
    now = t.compile_c(f"{d}/unbound_now", [f"{d}/unbound_nccl.c"],
                      [f"-I{t.NCCL_INCLUDE}", f"-L{os.path.dirname(full)}", "-l:libnccl.so.2", "-Wl,-z,now"])
    plain = side([now], {"LD_LIBRARY_PATH": f"{d}/part"}, False)
    t.equal(plain, (127, "", f"{now}: symbol lookup error: {now}: undefined symbol: ncclGetUniqueId\n"),
            "plain -z now: stopped at start")
    t.equal(side([now], {"LD_LIBRARY_PATH": f"{d}/part"}, True)[:2], (0, "version 22202\nrc 2\n"),
            "wrapped -z now: the API's failure at the call")
    # The 12 major's drop-in stands in when --only names it (by default
    # each family's newest).
    # Reached through dlsym (ctypes), plain finds nothing; wrapped, the
    # drop-in's export answers the API's failure (no object imports it).
    script = ("import ctypes, sys\nf = ctypes.CDLL(sys.argv[1])\n"
              "try:\n    g = f.ncclGetUniqueId\nexcept AttributeError:\n    print('no such function')\n"
              "else:\n    print('rc', g(ctypes.create_string_buffer(128)))\n")
    part = f"{d}/part/libnccl.so.2"
    t.equal(side([sys.executable, "-c", script, part], {}, False)[:2], (0, "no such function\n"), "plain dlsym")
    t.equal(side([sys.executable, "-c", script, part], {}, True)[:2], (0, "rc 2\n"),
            "wrapped dlsym: the drop-in's export, ncclSystemError (docs/reference/limitations.md)")
    # A library loaded at start that calls the missing function, linked to
    # NCCL or without it (its reference binds in the global scope): ld.so
    # names that library.
    with open(f"{d}/under.c", "w") as f:
        f.write("#include <nccl.h>\nint under_call(void) { ncclUniqueId id; return (int)ncclGetUniqueId(&id); }\n")
    with open(f"{d}/under_main.c", "w") as f:
        f.write("#include <stdio.h>\n#include <nccl.h>\nint under_call(void);\n"
                "int main(void) { int v = 0; ncclGetVersion(&v); printf(\"version %d\\n\", v); fflush(stdout);\n"
                "  printf(\"rc %d\\n\", under_call()); return 0; }\n")
    for lib, link in (("linked", [f"-L{os.path.dirname(full)}", "-l:libnccl.so.2"]), ("under", [])):
        under = t.compile_c(f"{d}/lib{lib}.so", [f"{d}/under.c", f"-I{t.NCCL_INCLUDE}", "-Wl,-z,lazy"] + link,
                            shared=True)
        under_main = t.compile_c(f"{d}/{lib}_main", [f"{d}/under_main.c"],
                                 [f"-I{t.NCCL_INCLUDE}", f"-L{os.path.dirname(full)}", "-l:libnccl.so.2",
                                  f"-L{d}", f"-l{lib}", f"-Wl,-rpath,{d}", "-Wl,-z,lazy"])
        env = {"LD_LIBRARY_PATH": f"{d}/part"}
        plain = side([under_main], env, False)
        t.equal(plain, (127, "version 22202\n", f"{under_main}: symbol lookup error: {under}: undefined "
                                                "symbol: ncclGetUniqueId\n"), f"plain, a library {lib}")
        wrapped = side([under_main], env, True)
        t.equal((wrapped[0], wrapped[1], wrapped[2][:len(plain[2])]), plain, f"wrapped, {lib}: {wrapped[2]}")
    # The program imports the name too, but the library calls it first: ld.so
    # names the object whose call it binds, the library.
    with open(f"{d}/both_main.c", "w") as f:
        f.write("#include <stdio.h>\n#include <nccl.h>\nint under_call(void);\n"
                "int main(int argc, char **argv) { int v = 0; ncclGetVersion(&v); (void)argv;\n"
                "  printf(\"version %d\\n\", v); fflush(stdout);\n"
                "  if (argc > 1) { ncclUniqueId id; printf(\"main %d\\n\", (int)ncclGetUniqueId(&id)); }\n"
                "  printf(\"rc %d\\n\", under_call()); return 0; }\n")
    under = f"{d}/liblinked.so"
    both = t.compile_c(f"{d}/both_main", [f"{d}/both_main.c"],
                       [f"-I{t.NCCL_INCLUDE}", f"-L{os.path.dirname(full)}", "-l:libnccl.so.2",
                        f"-L{d}", "-llinked", f"-Wl,-rpath,{d}", "-Wl,-z,lazy"])
    env = {"LD_LIBRARY_PATH": f"{d}/part"}
    plain = side([both], env, False)
    t.equal(plain, (127, "version 22202\n", f"{both}: symbol lookup error: {under}: undefined symbol: "
                                             "ncclGetUniqueId\n"), "plain, the library calls first")
    wrapped = side([both], env, True)
    t.equal((wrapped[0], wrapped[1], wrapped[2][:len(plain[2])]), plain,
            f"wrapped, the library calls first: {wrapped[2]}")
    # The same library preloaded, by LD_PRELOAD or by ld.so's --preload
    # (ld.so run as a command), into a program that reaches it through
    # dlsym: loaded at start, so ld.so stops the call.
    with open(f"{d}/pre_main.c", "w") as f:
        f.write("#include <dlfcn.h>\n#include <stdio.h>\n#include <nccl.h>\n"
                "int main(void) { int v = 0; ncclGetVersion(&v); printf(\"version %d\\n\", v); fflush(stdout);\n"
                "  int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, \"under_call\");\n"
                "  printf(\"rc %d\\n\", f ? f() : -1); return 0; }\n")
    pre_main = t.compile_c(f"{d}/pre_main", [f"{d}/pre_main.c"],
                           [f"-I{t.NCCL_INCLUDE}", f"-L{os.path.dirname(full)}", "-l:libnccl.so.2", "-ldl",
                            "-Wl,-z,lazy"])
    ldso = "/lib64/ld-linux-x86-64.so.2" if t.HOST_CPU == "x86_64" else "/lib/ld-linux-aarch64.so.1"
    for how, cmd, env in (("LD_PRELOAD", [pre_main], {"LD_PRELOAD": under}),
                          ("ld.so --preload", [ldso, "--preload", under, pre_main], {})):
        env = {"LD_LIBRARY_PATH": f"{d}/part", **env}
        plain = side(cmd, env, False)
        t.equal(plain, (127, "version 22202\n", f"{pre_main}: symbol lookup error: {under}: undefined "
                                                 "symbol: ncclGetUniqueId\n"), f"plain, {how}")
        wrapped = side(cmd, env, True)
        t.equal((wrapped[0], wrapped[1], wrapped[2][:len(plain[2])]), plain, f"wrapped, {how}: {wrapped[2]}")
    # A program that sets LD_BIND_NOW (or unsets LD_PRELOAD) for its
    # children changes nothing for its own bindings: ld.so took them at
    # start, and the stop reads them as ld.so took them.
    for exe, libdir, name, out, only, more in (
            (nccl, f"{d}/part", "ncclGetUniqueId", "version 22202\n", [], {}),
            (nccl, f"{d}/part", "ncclGetUniqueId", "version 22202\n", [], {"SET_LD_VARS": "1"}),
            (jit, f"{d}/v128", "__nvJitLinkGetErrorLogSize_12_9, version libnvJitLink.so.12", "",
             ["--only", "libnvJitLink.so.12"], {})):
        env = {"LD_LIBRARY_PATH": libdir, **more}
        plain = side([exe], env, False)
        r = run(["timeout", "60", RUN, *only, "--", exe], env=env)
        wrapped = (r.returncode, r.stdout, r.stderr)
        words = f"{exe}: symbol lookup error: {exe}: undefined symbol: {name}\n"
        t.equal(plain, (127, out, words), f"plain {exe}")
        t.equal((wrapped[0], wrapped[1], wrapped[2][:len(words)]), plain, f"wrapped {exe}: {wrapped[2]}")
        t.contains(wrapped[2][len(words):], "not exported by", f"wrapped {exe}: the report after ld.so's line")


def make_missing(d):
    """A library to link against that is then removed: the DT_NEEDED of a
    file the dynamic linker will not find."""
    src = os.path.join(d, "missing.c")
    with open(src, "w") as f:
        f.write("int missing_fn(void) { return 1; }\n")
    lib = t.compile_c(os.path.join(d, "libmissing.so.1"), [src], ["-Wl,-soname,libmissing.so.1"],
                      shared=True)
    return lib


@case
def fidelity_rows_under_memcheck():
    """The module's own reads checked: the by-name rows (LD_LIBRARY_PATH
    over conda, a relative entry with a chdir, a file that is not ELF), the
    namespace row, a missing drop-in and cuBLAS asked for by path (its
    dependency found beside it) run wrapped under valgrind's
    memcheck, which sees the audit module's code run inside the dynamic
    linker: no error (valgrind's exit status), the same answer as plain."""
    plain_only("valgrind and a sanitizer's runtime cannot run in one process")
    if not shutil.which("valgrind"):
        raise t.Skip("valgrind is not installed")
    j = Job("memcheck")
    bad = os.path.join(j.d, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "libnccl.so.2"), "w") as f:
        f.write("not a library\n" * 100)
    t.fake_nccl(os.path.join(j.d, "elsewhere", "ldpath"), version=22606)
    conda = os.path.dirname(j.dirs["conda/lib"])
    rows = [([j.probe, "libnccl.so.2"], {"LD_LIBRARY_PATH": j.dirs["ldpath"], "CONDA_PREFIX": conda}),
            ([j.probe, "libnccl.so.2", "chdir", "elsewhere"], {"LD_LIBRARY_PATH": "ldpath"}),
            ([j.probe, "libnccl.so.2"], {"LD_LIBRARY_PATH": f"{bad}:{j.dirs['ldpath']}"}),
            ([j.probe, "libnccl.so.2", "dlmopen", os.path.join(j.dirs["conda/lib"], "libnccl.so.2")],
             {"LD_LIBRARY_PATH": j.dirs["ldpath"]})]
    vg = ["valgrind", "-q", "--error-exitcode=99", "--run-libc-freeres=no"]
    for cmd, env in rows:
        plain = side(cmd, env, False, cwd=j.d)
        r = run(["timeout", "300", RUN] + vg + cmd, env=env, cwd=j.d)
        t.equal(r.returncode, plain[0], f"memcheck's verdict, {cmd[1:]}: {r.stderr[-3000:]}")
        # valgrind lays memory out its own way: the files mapped, in any order
        t.equal(sorted(r.stdout.splitlines()), sorted(plain[1].splitlines()),
                f"the answer under memcheck, {cmd[1:]}")
    # A drop-in standing for cuBLAS asked for by path: its dependency on
    # cuBLASLt searched beside the asked file (the module's $ORIGIN step).
    if os.path.exists(os.path.join(CUDA_LIB, "libcublas.so.13")):
        chosen = t.link_dir(os.path.join(j.d, "chosen"), os.path.join(CUDA_LIB, "libcublas.so.13"),
                            os.path.join(CUDA_LIB, "libcublasLt.so.13"))
        src = os.path.join(j.d, "open.c")
        with open(src, "w") as f:
            f.write("#include <dlfcn.h>\n#include <stdio.h>\nint main(int c, char **v) {\n"
                    "  void *h = dlopen(v[1], RTLD_NOW); puts(h ? \"loaded\" : dlerror()); return !h; }\n")
        opener = t.compile_c(os.path.join(j.d, "open"), [src, "-ldl"])
        cmd = vg + [opener, os.path.join(chosen, "libcublas.so.13")]
        plain = run(["timeout", "300"] + cmd)
        r = run(["timeout", "300", RUN] + cmd, env={"LAZYNCCL_DEBUG": "1"})
        # glibc 2.36's ld.so reads past "$ORIGIN" in its own strncmp while
        # decomposing a run path (is_dst): memcheck says so plain too, for
        # the real cuBLAS's. The verdicts are compared, and no error may
        # name the module or a drop-in.
        t.equal((r.returncode, r.stdout), (plain.returncode, "loaded\n"),
                f"memcheck's verdict, cuBLAS by path: {r.stderr[-3000:]}")
        ours = [l for l in r.stderr.splitlines() if l.startswith("==") and ("lazynccl" in l or "/dropin/" in l or re.search(r"\(lz_\w+\.[ch]:", l))]
        t.equal(ours, [], "no memcheck error in the module or a drop-in")
        t.contains(r.stderr, "(beside the file its drop-in stands for)", "the $ORIGIN step ran")


@case
def launcher_refuses_a_broken_installation():
    """A drop-in directory the user names (LAZYNCCL_DROPIN_DIR) is checked
    file by file, manifest or not: a text file for NCCL's drop-in makes
    lazynccl-run refuse to start the command (exit 2) with one line naming
    the file, and so does the real NCCL there (a drop-in is known by its
    note, never by its name: the real library would otherwise take every
    request by path). The build's own directory, with its manifest, is
    looked up nothing per launch. An audit module the user names that is a
    text file is refused either way."""
    d = t.workdir("fidelity_broken_install")
    copy = os.path.join(d, "dropin")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(DROPINS, copy, symlinks=True)
    os.remove(os.path.join(copy, "libnccl.so.2"))
    with open(os.path.join(copy, "libnccl.so.2"), "w") as f:
        f.write("not a library\n")
    module = os.path.join(t.BUILD, "src", "audit", "liblazynccl-audit.so")
    marker = os.path.join(d, "ran")
    env = {"LAZYNCCL_DROPIN_DIR": copy, "LAZYNCCL_AUDIT_MODULE": module}
    text = (f"lazynccl-run: drop-in {copy}/libnccl.so.2 (for libnccl.so.2) is unreadable or "
            "not a library of this machine: the installation is broken (reinstall lazynccl, "
            "or name another with LAZYNCCL_DROPIN_DIR)\n")
    for manifest in (True, False):
        if not manifest:
            os.remove(os.path.join(copy, "lazynccl-dropins"))
        r = run([RUN, "touch", marker], env=env)
        t.equal((r.returncode, os.path.exists(marker), r.stderr), (2, False, text),
                f"a text file, {'with' if manifest else 'without'} the manifest: refused")
    os.remove(os.path.join(copy, "libnccl.so.2"))
    nccl = os.path.join(CUDA_LIB, "libnccl.so.2")
    shutil.copy(nccl, os.path.join(copy, "libnccl.so.2"))
    r = run([RUN, "touch", marker], env=env)
    t.equal((r.returncode, os.path.exists(marker), r.stderr),
            (2, False, f"lazynccl-run: {copy}/libnccl.so.2 is not a lazynccl drop-in for libnccl.so.2 (it has "
                       "no drop-in note naming it): refused, as every request for libnccl.so.2 by path would "
                       "load it (LAZYNCCL_DROPIN_DIR names its directory)\n"), "the real NCCL: refused")
    # A FIFO named like a drop-in is refused, never waited on.
    os.remove(os.path.join(copy, "libnccl.so.2"))
    os.mkfifo(os.path.join(copy, "pipe"))
    os.symlink("pipe", os.path.join(copy, "libnccl.so.2"))
    r = run(["timeout", "20", RUN, "touch", marker], env=env)
    t.equal((r.returncode, os.path.exists(marker)), (2, False), f"a FIFO: refused at once ({r.stderr})")
    bad = os.path.join(d, "module.so")
    with open(bad, "w") as f:
        f.write("not a library\n")
    r = run([RUN, "touch", marker], env={"LAZYNCCL_AUDIT_MODULE": bad})
    t.equal((r.returncode, os.path.exists(marker)), (2, False), f"refused: {r.stderr}")
    t.contains(r.stderr, f"audit module {bad} is unreadable or not a library of this machine", "the message")


CUDA_LIB = "/usr/local/cuda/lib64"


def real_plugin(name, source, libs):
    """A shared object under-linked as plugins are: it calls what only a
    dependency of the library it links brings (nothing else links it)."""
    d = t.workdir(f"fidelity_{name}")
    src = os.path.join(d, f"{name}.c")
    with open(src, "w") as f:
        f.write(source)
    return t.compile_c(os.path.join(d, f"{name}.so"), [src, f"-L{CUDA_LIB}", "-Wl,--no-as-needed"] + libs,
                       shared=True)


LOAD_NOW = ("import ctypes, os, sys\n"
            "p = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)\n"
            "print(sys.argv[2], getattr(p, sys.argv[2])())\n")


@case
def fidelity_plugin_leaning_on_a_dependency():
    """A plugin linked -lcublas alone that calls cublasLtGetVersion (real
    cuBLAS needs cuBLASLt), and one linked -lnccl alone that calls
    libstdc++'s std::terminate handler (NCCL needs libstdc++), each opened
    with RTLD_NOW: loaded and answering the same, plain and wrapped (the
    drop-ins carry their real libraries' DT_NEEDED); wrapped, cuBLAS itself
    is still not mapped after the call."""
    if not os.path.exists(os.path.join(CUDA_LIB, "libcublas.so.13")):
        raise t.Skip("cuBLAS is not installed here")
    lt = real_plugin("lt_plugin", "#include <stddef.h>\nsize_t cublasLtGetVersion(void);\n"
                     "int lt(void) { return (int)cublasLtGetVersion(); }\n", ["-lcublas"])
    cxx = real_plugin("cxx_plugin", "typedef void (*handler)(void);\n"
                      "handler _ZSt13get_terminatev(void);\n"
                      "int cxx(void) { return _ZSt13get_terminatev() != 0; }\n", ["-lnccl"])
    p = same_job([SYSTEM_PY, "-c", LOAD_NOW, lt, "lt"], {"LD_LIBRARY_PATH": CUDA_LIB})
    t.check(re.fullmatch(r"lt \d{5,}\n", p[1]) is not None, f"cuBLASLt answered: {p[1]!r}")
    same_job([SYSTEM_PY, "-c", LOAD_NOW, cxx, "cxx"], want="cxx 1")
    code = LOAD_NOW + ("print(sorted({l.split()[-1].rsplit('/', 1)[-1] for l in open('/proc/self/maps')"
                       " if '/libcublas' in l and '/dropin/' not in l}))\n")
    r = run([RUN, SYSTEM_PY, "-c", code, lt, "lt"], check_rc=0)
    t.contains(r.stdout, "['libcublasLt.so.13']", "wrapped: cuBLASLt only, cuBLAS still lazy")


@case
def fidelity_ldd_sees_the_libraries():
    """ldd (LD_TRACE_LOADED_OBJECTS) and `ld.so --list` of a program linked
    -lnccl print the same lines wrapped as plain: `libnccl.so.2 => path`,
    not a drop-in (load addresses, which vary by run, left out)."""
    plain_only("ldd under TSan's runtime preloaded prints nothing (the runtime runs the tracing process again)", ("thread",))
    j = Job("ldd")
    prog = j.linked("runpath", "runpath")
    no_addr = lambda s: re.sub(r" \(0x[0-9a-f]+\)", "", s)
    p = same_job(["ldd", prog], normal=no_addr)
    t.contains(p[1], f"libnccl.so.2 => {j.dirs['runpath']}/libnccl.so.2", "ldd's line")
    ldso = "/lib64/ld-linux-x86-64.so.2" if t.HOST_CPU == "x86_64" else "/lib/ld-linux-aarch64.so.1"
    p = same_job([ldso, "--list", prog], normal=no_addr)
    t.contains(p[1], f"libnccl.so.2 => {j.dirs['runpath']}/libnccl.so.2", "ld.so --list's line")
    # Listing relocates nothing: a program whose libraries hold more static
    # TLS than an audited process keeps is listed as it is, not restarted.
    jemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
    if os.path.exists(jemalloc):
        same_job(["ldd", prog], {"LD_PRELOAD": jemalloc}, normal=no_addr)
        for cmd, trace in (([ldso, "--list", prog], {}), ([ldso, "--inhibit-cache", "--list", prog], {}),
                           ([prog], {"LD_TRACE_LOADED_OBJECTS": "1"})):
            env = dict(trace, LD_PRELOAD=jemalloc)
            same_job(cmd, env, normal=no_addr)
            r = run([RUN] + cmd, env=dict(env, LAZYNCCL_DEBUG="1"), check_rc=0)
            t.check("restarting" not in r.stderr, f"{cmd}: not restarted: {r.stderr[-1500:]}")


@case
def fidelity_dlmopen_namespace_then_base():
    """A by-path dlmopen of NCCL into a new namespace, then a load by name
    in the base namespace: the namespace's NCCL is the file it named (the
    drop-in mapped there is told it), the base namespace gets
    LD_LIBRARY_PATH's, both ways; nothing of the namespace's request is
    left for the base namespace's drop-in."""
    j = Job("dlmopen")
    p = same_job([j.probe, "libnccl.so.2", "dlmopen", os.path.join(j.dirs["conda/lib"], "libnccl.so.2")],
                 {"LD_LIBRARY_PATH": j.dirs["ldpath"]}, want="rc 0 version 22101")
    t.contains(p[1], "namespace version 22202", "the namespace's own NCCL answered")


@case
def fidelity_exit_status_and_output_of_plain_commands():
    """Exit statuses 0, 3, 126 (not executable), 127 (no such command), and
    what a shell prints, are the same wrapped."""
    d = t.workdir("fidelity_exit")
    noexec = os.path.join(d, "noexec.sh")
    with open(noexec, "w") as f:
        f.write("#!/bin/sh\necho hi\n")
    for cmd in (["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], ["/bin/true"],
                ["/bin/sh", "-c", noexec], ["/bin/sh", "-c", "no-such-command-here"]):
        same_job(cmd)


# What lazynccl-run sets, and the tunable a static-TLS restart raises: the
# only names the identity probe may print beyond plain's.
RESTART_ADDED = ("LD_AUDIT", "LAZYNCCL_AUDIT_DROPINS", "VALGRIND_OPTS", "GLIBC_TUNABLES")


def without_added(text):
    """The identity probe's lines, less those naming RESTART_ADDED."""
    return "\n".join(x for x in text.splitlines() if x.split(" ", 1)[-1] not in RESTART_ADDED)


def restarted_world(name):
    """A restarted process's row: its directory, the identity probe built
    there, and jemalloc (preloaded: more static TLS than an audited process
    gets); skipped where jemalloc is not installed."""
    jemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
    if not os.path.exists(jemalloc):
        raise t.Skip("libjemalloc2 is not installed")
    d = t.workdir(name)
    return d, t.compile_c(os.path.join(d, "identity"), [os.path.join(FIXTURE, "identity.c")]), jemalloc


@case
def fidelity_restart_keeps_identity():
    """A process restarted for static TLS (jemalloc preloaded: more than an
    audited process gets) is the same process to whoever looks: its comm,
    AT_EXECFN, /proc/self/exe, argv, the auxiliary vector right after the
    environment's NULL and the names in /proc/self/environ, as plain, but
    for what lazynccl-run sets (LD_AUDIT, LAZYNCCL_AUDIT_DROPINS, VALGRIND_OPTS) and the
    tunable the restart raised (GLIBC_TUNABLES). A program by path, by a
    relative path and through a symbolic link; a script (its interpreter
    restarts); ld.so run as a command with its own --preload (restarted as
    that command, from /proc/self/cmdline: ld.so has taken its options out
    of argv by then); a program started by fexecve, from a memfd or a file
    opened close-on-exec (restarted from that descriptor); and a caller's
    own variables kept in their order."""
    d, prog, jemalloc = restarted_world("fidelity_identity")
    link = os.path.join(d, "linked-name")
    if not os.path.lexists(link):
        os.symlink("identity", link)
    script = os.path.join(d, "ident.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho \"comm $(cat /proc/$$/comm) args $*\"\n")
    os.chmod(script, 0o755)
    normal = without_added
    env = {"LD_PRELOAD": jemalloc, "MY_FIRST": "1", "MY_SECOND": "2"}
    for cmd, cwd in (([prog, "a b", "c"], None), (["./identity", "x"], d), ([link, "y"], None),
                     ([script, "s1", "s2"], None),
                     (["/lib64/ld-linux-x86-64.so.2", "--preload", jemalloc, prog, "z"], None)):
        p = same_job(cmd, env, normal=normal, cwd=cwd)
        t.check("comm " in p[1], f"the probe ran: {p}")
    # Started by fexecve: a memfd (close-on-exec or not) and a file opened
    # close-on-exec; AT_EXECFN is /dev/fd/N and comm the file's own name.
    fexec = ("import os, sys\n"
             "how, prog = sys.argv[1], sys.argv[2]\n"
             "if how == 'file':\n"
             "    fd = os.open(prog, os.O_RDONLY | os.O_CLOEXEC)\n"
             "else:\n"
             "    fd = os.memfd_create('prog', os.MFD_CLOEXEC if how == 'memfd-cloexec' else 0)\n"
             "    os.write(fd, open(prog, 'rb').read())\n"
             "    os.set_inheritable(fd, how == 'memfd')\n"
             "os.execve(fd, ['prog', 'f'], dict(os.environ))\n")
    for how in ("memfd", "memfd-cloexec", "file"):
        p = same_job([SYSTEM_PY, "-c", fexec, how, prog], env, normal=normal)
        t.contains(p[1], "AT_EXECFN /dev/fd/", f"started by fexecve ({how})")
    # Started by execveat from a directory descriptor and a relative name
    # (AT_EXECFN /dev/fd/N/name), the descriptor close-on-exec or not.
    execat = os.path.join(d, "execat.c")
    with open(execat, "w") as f:
        f.write("#define _GNU_SOURCE\n#include <fcntl.h>\n#include <string.h>\n#include <sys/syscall.h>\n"
                "#include <unistd.h>\nextern char **environ;\n"
                "#include <stdlib.h>\n"
                "int main(int c, char **v) { (void)c; int fd = open(v[2], O_RDONLY | O_DIRECTORY |\n"
                "  (strcmp(v[1], \"cloexec\") == 0 ? O_CLOEXEC : 0));\n"
                "  if (getenv(\"CHILD_PRELOAD\")) setenv(\"LD_PRELOAD\", getenv(\"CHILD_PRELOAD\"), 1);\n"
                "  return fd < 0 ? 126 : (int)syscall(SYS_execveat, fd, v[3], v + 3, environ, 0); }\n")
    execat = t.compile_c(os.path.join(d, "execat"), [execat])
    # (jemalloc preloaded in the started program only: it is the one
    # restarted.)
    child = {"CHILD_PRELOAD": jemalloc, "MY_FIRST": "1"}
    for how in ("cloexec", "inherited"):
        p = same_job([execat, how, d, "identity", "e"], child, normal=normal)
        t.check("comm identity" in p[1], f"execveat ({how}): {p}")
        t.contains(p[1], "AT_EXECFN /dev/fd/", f"started by execveat ({how})")
    # "#!" chains: three deep, and two deep with an argument on the first
    # line (the kernel puts each interpreter, and that argument, first).
    def chain(name, interp, arg=""):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(f"#!{interp}{' ' + arg if arg else ''}\n" +
                    ("echo \"comm $(cat /proc/$$/comm) args $*\"\n" if interp == "/bin/sh" else ""))
        os.chmod(path, 0o755)
        return path
    c3 = chain("c3", "/bin/sh")
    c2 = chain("c2", c3)
    c1 = chain("c1", c2)
    a2 = chain("a2", "/bin/sh")
    a1 = chain("a1", a2, "-opt")
    for cmd in ([c1, "x"], [a1, "y"]):
        p = same_job(cmd, env, normal=normal)
        t.contains(p[1], f"comm {os.path.basename(cmd[0])}", f"{cmd[0]}: its comm")
    wrapped = run([RUN, "--", prog], env=dict(env, LAZYNCCL_DEBUG="1"))
    t.contains(wrapped.stderr, "restarting it with glibc.rtld.optional_static_tls=",
               "the row is about a restarted process")
    t.contains(wrapped.stdout, "environ GLIBC_TUNABLES", "the raised tunable is its only trace")


@case
def fidelity_restart_keeps_the_environment_layout():
    """A process restarted for static TLS (a library of 3,000 bytes of TLS
    preloaded) that writes its title over its start strings, taking its
    last environment entry for their end (the naive setproctitle): the
    GLIBC_TUNABLES entry the restart adds comes first, so the last entry
    is still the kernel's string (glibc's start-up points that entry at a
    copy of its own); wrapped runs as plain. It crashed when the entry came
    last."""
    d = t.workdir("fidelity_restart_layout")
    src = os.path.join(d, "bigtls.c")
    with open(src, "w") as f:
        f.write("__thread char big[3000]; char *touch(void) { return big; }\n")
    tls = t.compile_c(os.path.join(d, "libbigtls.so"), [src], shared=True)
    src = os.path.join(d, "title.c")
    with open(src, "w") as f:
        f.write("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
                "extern char **environ;\n"
                "int main(int c, char **v) { (void)c;\n"
                "  int n = 0; while (environ[n]) n++;\n"
                "  char *end = environ[n - 1] + strlen(environ[n - 1]);\n"
                "  memset(v[0], 0, end - v[0]); strcpy(v[0], \"title\");\n"
                "  printf(\"titled %s\\n\", getenv(\"GLIBC_TUNABLES\") ? \"restarted\" : \"as started\");\n"
                "  return 0; }\n")
    prog = t.compile_c(os.path.join(d, "title"), [src])
    env = {"LD_PRELOAD": tls}
    t.equal(side([prog], env, False)[:2], (0, "titled as started\n"), "plain")
    t.equal(side([prog], env, True)[:2], (0, "titled restarted\n"), "wrapped, restarted")


@case
def fidelity_restart_follows_the_last_tunables():
    """Two GLIBC_TUNABLES entries, the later naming a small optional static
    TLS (glibc reads every entry, later settings winning), and jemalloc
    preloaded: plain runs; wrapped, the restart raises the tunable where
    glibc will read it last, and runs the same."""
    d, prog, jemalloc = restarted_world("fidelity_two_tunables")
    dup = os.path.join(d, "dupenv.c")
    with open(dup, "w") as f:
        f.write("#include <unistd.h>\nextern char **environ;\n"
                "int main(int c, char **v) { (void)c; int n = 0; while (environ[n]) n++;\n"
                "  char *e[n + 3]; for (int i = 0; i < n; i++) e[i] = environ[i];\n"
                "  e[n] = v[1]; e[n + 1] = v[2]; e[n + 2] = 0; execve(v[3], v + 3, e); return 127; }\n")
    dupenv = t.compile_c(os.path.join(d, "dupenv"), [dup])
    cmd = [dupenv, "GLIBC_TUNABLES=glibc.malloc.tcache_count=5",
           "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=512", prog, "t"]
    p = same_job(cmd, {"LD_PRELOAD": jemalloc}, normal=without_added)
    t.equal(p[0], 0, f"plain runs: {p}")


@case
def fidelity_without_proc():
    """Without /proc (a mount namespace with an empty tmpfs over it, as a
    chroot or bwrap without --proc gives): the launcher starts (its
    directory from AT_EXECFN), and a process with jemalloc preloaded,
    restarted for static TLS from what it has without /proc, runs as plain:
    a program by path and by a relative path, and a script."""
    d, prog, jemalloc = restarted_world("fidelity_no_proc")
    if run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /proc"]).returncode != 0:
        raise t.Skip("no mount namespace here (unshare -m needs root)")
    script = os.path.join(d, "ident.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho \"script $0 args $*\"\n")
    os.chmod(script, 0o755)
    no_proc = ["unshare", "-m", "sh", "-c", 'mount -t tmpfs none /proc && exec "$@"', "sh"]
    for cmd, cwd in (([prog, "a b"], None), (["./identity", "x"], d), ([script, "s1"], None)):
        rows = []
        for wrapped in (False, True):
            r = run(["timeout", "60"] + no_proc + ([RUN, "--"] if wrapped else []) + cmd,
                      env={"LD_PRELOAD": jemalloc, "LAZYNCCL_DEBUG": "1" if wrapped else ""}, cwd=cwd)
            rows.append((r.returncode, without_added(r.stdout), r.stderr))
        t.equal(rows[1][:2], rows[0][:2], f"{cmd}: wrapped against plain without /proc ({rows[1][2]})")
        t.contains(rows[1][2], "restarting it with glibc.rtld.optional_static_tls=", f"{cmd}: restarted")
        t.check("cannot" not in rows[1][2], f"{cmd}: no failure said: {rows[1][2]}")


@case
def fidelity_dropins_on_a_noexec_mount():
    """Drop-ins on a filesystem mounted noexec, which the dynamic linker
    cannot map: none stands in (the launcher says so, once), and NCCL by
    name is the real one, as plain."""
    j = Job("noexec")
    with t.noexec_tmpfs(os.path.join(j.d, "mnt"), size="256m") as mnt:
        copy = os.path.join(mnt, "dropin")
        shutil.copytree(DROPINS, copy, symlinks=True, ignore=shutil.ignore_patterns("*.p"))
        module = os.path.join(t.BUILD, "src", "audit", "liblazynccl-audit.so")
        env = {"LD_LIBRARY_PATH": j.dirs["ldpath"]}
        plain = side([j.probe, "libnccl.so.2"], env, False)
        r = run(["timeout", "60", RUN, "--", j.probe, "libnccl.so.2"],
                  env=dict(env, LAZYNCCL_DROPIN_DIR=copy, LAZYNCCL_AUDIT_MODULE=module))
        wrapped = (r.returncode, r.stdout, r.stderr)
        t.equal(wrapped[:2], plain[:2], "wrapped against plain")
        t.contains(plain[1], "version 22101", "the real NCCL")
        t.equal(wrapped[2], f"lazynccl-run: the drop-ins' directory {copy} is on a filesystem mounted noexec, "
                            "where the dynamic linker cannot map them: none stands in, and the command loads "
                            "the real libraries as it would plain\n", "said once")


@case
def fidelity_later_dlopen_of_initial_exec_tls():
    """A program whose start-up libraries hold 1,000 bytes of initial-exec
    TLS dlopens a library of 1,400 more (it fits plain: glibc's surplus is
    for such loads): it fits wrapped too, the audited process restarted with
    the room plain keeps; and a program holding only 144 more than libc's
    keeps plain's room without a restart; and with a library of 6,000
    bytes preloaded where the user's GLIBC_TUNABLES sets the tunable in
    octal, after a blank or a sign, or in hexadecimal (read as glibc reads
    it: a value misread leaves no restart, and glibc stops the process)."""
    plain_only("the preloaded sanitizer runtime holds static TLS of its own, which the row's sizes do not allow for")
    d = t.workdir("fidelity_ie_tls")
    ie = os.path.join(d, "ie.c")
    with open(ie, "w") as f:
        f.write("__attribute__((tls_model(\"initial-exec\"))) __thread char NAME[SIZE];\n"
                "int CALL(void) { NAME[0] = 1; return NAME[0]; }\n")
    main = os.path.join(d, "main.c")
    with open(main, "w") as f:
        f.write("#include <dlfcn.h>\n#include <stdio.h>\nint start(void);\n"
                "int main(int c, char **v) { start(); void *h = dlopen(v[1], RTLD_NOW);\n"
                "  printf(\"%s\\n\", h ? \"loaded\" : dlerror()); return !h; }\n")
    later = t.compile_c(os.path.join(d, "liblater.so"), [ie, "-DNAME=later", "-DSIZE=1400", "-DCALL=later_call"],
                        shared=True)
    for start in (1000, 144):
        t.compile_c(os.path.join(d, f"libstart{start}.so"),
                    [ie, "-DNAME=early", f"-DSIZE={start}", "-DCALL=start"], shared=True)
        prog = t.compile_c(os.path.join(d, f"prog{start}"), [main, f"-L{d}", f"-l:libstart{start}.so",
                                                            f"-Wl,-rpath,{d}", "-ldl"])
        same_job([prog, later], want="loaded")
        r = run([RUN, prog, later], env={"LAZYNCCL_DEBUG": "1"}, check_rc=0)
        restarted = "restarting it with glibc.rtld.optional_static_tls=" in r.stderr
        t.equal(restarted, start == 1000, f"restarted with {start} bytes at start: {r.stderr[-800:]}")
    # The user's own tunable, written as glibc reads it: octal, a blank or
    # a sign before it (glibc's _dl_strtoul), plain and wrapped alike.
    big = t.compile_c(os.path.join(d, "libbig.so"), [ie, "-DNAME=big", "-DSIZE=6000", "-DCALL=big_call"],
                      shared=True)
    prog = os.path.join(d, "prog144")
    for value in ("010000", " 4096", "+4096", "0x1000"):
        same_job([prog, later], {"GLIBC_TUNABLES": f"glibc.rtld.optional_static_tls={value}", "LD_PRELOAD": big},
                 want="loaded")


def print_env(args):
    """The variables `lazynccl-run ARGS --print-env` sets, as a dict."""
    import shlex
    out = run([RUN] + args + ["--print-env"], check_rc=0).stdout
    return {k[len("export "):]: shlex.split(v)[0] for k, _, v in
            (line.partition("=") for line in out.splitlines() if line.startswith("export "))}


@case
def fidelity_32bit_programs():
    """A 32-bit program, alone and started by a wrapped shell: under
    `--quiet-32bit` (the module named through $LIB, its 32-bit stand-in
    declining) every stream and the exit status equal plain; by default
    they do but for ld.so's one "wrong ELF class" line, the documented
    difference."""
    plain_only("a 32-bit program cannot take the 64-bit TSan runtime, and TSan has no 32-bit one", ("thread",))
    exe = t.hello32("fidelity_32bit")
    quiet = print_env(["--quiet-32bit"])
    for cmd in ([exe], ["/bin/sh", "-c", f"{exe}; echo $?"]):
        same_job(cmd, wrap_env=quiet, want="hello 32")
        ldso_line = lambda s: "".join(l for l in s.splitlines(True) if "wrong ELF class" not in l)
        same_job(cmd, normal=ldso_line, want="hello 32")


@case
def fidelity_gdb_over_a_restarted_inferior():
    """gdb run under lazynccl-run over a program with jemalloc preloaded
    (gdb starts it through a shell; the inferior restarts for static TLS):
    the breakpoint at main is hit and the program exits normally, as plain
    (addresses and process ids aside)."""
    plain_only("gdb itself would run with the sanitizer's runtime preloaded")
    jemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
    if not os.path.exists(jemalloc) or not shutil.which("gdb"):
        raise t.Skip("needs libjemalloc2 and gdb")
    d = t.workdir("fidelity_gdb")
    prog = t.compile_c(os.path.join(d, "identity"), [os.path.join(FIXTURE, "identity.c")])

    def normal(text):
        text = re.sub(r"0x[0-9a-f]+", "ADDR", text)
        text = re.sub(r"process \d+", "process PID", text)
        return "\n".join(x for x in text.splitlines() if re.match(r"(Breakpoint|\[Inferior)", x))
    p = same_job(["gdb", "-q", "-batch", "-ex", "break main", "-ex", "run", "-ex", "continue", prog],
                 {"LD_PRELOAD": jemalloc}, normal=normal)
    t.contains(p[1], "in main ()", "plain stopped at main")
    t.contains(p[1], "exited normally", "and ran to its end")


ADDED = ("LD_AUDIT", "LAZYNCCL_AUDIT_DROPINS", "VALGRIND_OPTS", "GLIBC_TUNABLES")


def without_launcher_added(text):
    """What lazynccl-run sets, out of identity.c's environment names."""
    return "\n".join(x for x in text.splitlines() if not (x.startswith("environ ") and x[8:] in ADDED))


@case
def fidelity_process_state_rows():
    """One row each, plain against wrapped, of what identity.c reports (comm,
    AT_EXECFN, argv, signal mask and ignored signals, ids, open descriptors,
    environment names): a dynamic program; one started with a signal blocked
    and one ignored; with an extra descriptor open; a static and a
    static-pie program (no dynamic linker, so no audit module); under
    `env -i` (the wrapper's variables gone); setuid, run by another user
    (glibc ignores LD_AUDIT there); beside another audit module stacked
    before ours; and under a nested lazynccl-run."""
    plain_only("the shell of the rows dies of SIGSEGV under TSan's runtime preloaded, plain as wrapped", ("thread",))
    d = t.workdir("fidelity_state")
    src = os.path.join(FIXTURE, "identity.c")
    prog = t.compile_c(os.path.join(d, "identity"), [src])
    rows = [("dynamic", [prog, "1"], {}),
            ("a signal blocked, one ignored",
             [SYSTEM_PY, "-c", "import os, signal; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1}); "
              "signal.signal(signal.SIGPIPE, signal.SIG_IGN); os.execv(%r, [%r, '2'])" % (prog, prog)], {}),
            ("a descriptor open", ["/bin/sh", "-c", f'exec 7</etc/hostname; exec "{prog}" 3'], {}),
            ("env -i", ["env", "-i", prog, "4"], {})]
    if os.path.exists("/usr/lib/x86_64-linux-gnu/libc.a"):
        rows.append(("static", [t.compile_c(os.path.join(d, "identity_static"), [src, "-static"]), "5"], {}))
        rows.append(("static-pie",
                     [t.compile_c(os.path.join(d, "identity_spie"), [src, "-static-pie"]), "6"], {}))
    else:
        t.check(False, "libc.a (libc6-dev) is needed for the static rows")
    if os.geteuid() == 0 and shutil.which("setpriv"):
        suid = os.path.join(d, "identity_suid")
        shutil.copy(prog, suid)
        os.chown(suid, 0, 0)
        os.chmod(suid, 0o4755)
        os.chmod(d, 0o755)
        rows.append(("setuid, run by nobody",
                     ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", suid, "7"], {}))
    other = os.path.join(d, "libother-audit.so")
    with open(os.path.join(d, "other.c"), "w") as f:
        f.write("unsigned la_version(unsigned v) { return v; }\n")
    t.compile_c(other, [os.path.join(d, "other.c")], shared=True)
    rows.append(("another audit module first", [prog, "8"], {"LD_AUDIT": other}))
    rows.append(("a nested launcher", [RUN, "--", prog, "9"], {}))
    for name, cmd, env in rows:
        # A setuid program's C library takes the unsafe variables (LD_AUDIT
        # among them) out of its environment array, so the array's NULL
        # moves: glibc's doing, where nothing of lazynccl runs (glibc loads
        # no audit module there); the rest of the row must hold.
        normal = (lambda x: "\n".join(y for y in without_launcher_added(x).splitlines()
                                       if not y.startswith("auxv after environ"))) \
            if name.startswith("setuid") else without_launcher_added
        p = same_job(cmd, env, normal=normal)
        t.check("comm " in p[1], f"{name}: the probe ran: {p}")
    # what the rows mean held plain
    blocked = side(rows[1][1], {}, False)[1]
    mask = {k: int(v, 16) for k, v in re.findall(r"^(SigBlk|SigIgn):\s*([0-9a-f]+)", blocked, re.M)}
    t.check(mask.get("SigBlk", 0) & 1 << (10 - 1) and mask.get("SigIgn", 0) & 1 << (13 - 1),
            f"SIGUSR1 blocked, SIGPIPE ignored: {mask}")
    t.contains(side(rows[2][1], {}, False)[1], "fd 7 /etc/hostname", "the extra descriptor")


@case
def fidelity_dlopen_cycles_and_racing_threads():
    """10,000 rounds of dlopen, a call and dlclose of NCCL by name, and 64
    threads opening and calling it at once: the same NCCL answered every
    time, plain and wrapped (the version the dynamic linker's choice gives)."""
    j = Job("cycles")
    env = {"LD_LIBRARY_PATH": j.dirs["ldpath"]}
    same_job([j.probe, "libnccl.so.2", "cycles", "10000"], env, want="cycles 10000: version 22101, every time")
    same_job([j.probe, "libnccl.so.2", "threads", "64"], env, want="threads 64: version 22101, every time")


@case
def info_check_refuses_what_the_loader_cannot_use():
    """A program whose DT_NEEDED points outside its dynamic string table
    dies at start (the dynamic linker reads the name there); lazynccl-info
    --check says why and exits 2, never "verdict: ok"."""
    import struct
    d = t.workdir("fidelity_info_needed")
    src, good, bad = (os.path.join(d, n) for n in ("hello.c", "hello", "hello_bad"))
    with open(src, "w") as f:
        f.write("#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n")
    t.compile_c(good, [src])
    b = bytearray(open(good, "rb").read())
    sections = run(["readelf", "-SW", good], check_rc=0).stdout
    line = next(l for l in sections.splitlines() if " .dynamic " in l)
    off, size = (int(x, 16) for x in line.split("]")[1].split()[3:5])
    at = next(i for i in range(off, off + size, 16) if struct.unpack_from("<q", b, i)[0] == 1)
    struct.pack_into("<Q", b, at + 8, 0xFFFFF)
    with open(bad, "wb") as f:
        f.write(b)
    os.chmod(bad, 0o755)
    t.check(run([bad]).returncode != 0, "plain: the program dies at start")
    info = os.path.join(t.BUILD, "lazynccl-info")
    t.equal(run([info, "--check", good]).returncode, 0, "the program as built: ok")
    r = run([info, "--check", bad])
    t.equal((r.returncode, r.stdout), (2, ""), f"refused: {r.stderr}")
    t.equal(r.stderr, f"lazynccl-info: --check {bad}: DT_NEEDED points outside the dynamic string table "
                      f"(offset 1048575, table {strsz(good)} bytes): "
                      "the dynamic linker cannot use this file\n", "the message")


def strsz(path):
    """DT_STRSZ of path, as readelf prints it."""
    out = run(["readelf", "-dW", path], check_rc=0).stdout
    return int(re.search(r"\(STRSZ\)\s+(\d+)", out).group(1))


if __name__ == "__main__":
    raise SystemExit(t.main())
