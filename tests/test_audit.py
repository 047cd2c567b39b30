#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lazynccl-run's audit module: a program that loads the real
library by absolute path (as torch's _preload_cuda_deps does with ctypes),
then an object that needs it by SONAME and calls it. Counted in
/proc/self/maps: nothing real before the first call, exactly one real copy
after, the one asked for or LAZYNCCL_LIBPATH's."""
import os
import re
import shutil
import subprocess

import lztest as t
from lztest import case

HERE = os.path.join(t.SOURCE, "tests", "audit")
RUN = os.path.join(t.BUILD, "lazynccl-run")
MODULE = os.path.join(t.BUILD, "src", "audit", "liblazynccl-audit.so")
# What lazynccl-run puts in LD_AUDIT, and the file it leads this process to.
MODULE_ENTRY = t.audit_entry(os.path.dirname(os.path.realpath(MODULE)))
def audit_entry_quiet():
    return t.audit_entry(os.path.dirname(os.path.realpath(MODULE)), quiet32=True)


MODULE_HERE = MODULE_ENTRY.replace("$LIB", f"lib/{t.HOST_CPU}-linux-gnu")


def node_copy(module=MODULE_HERE, base="/dev/shm"):
    """Where lazynccl-run keeps module's node copy under base
    (src/run/run_nodecopy.c): keyed by the module's inode, size and mtime."""
    st = os.stat(module)
    key = f"{st.st_ino:x}-{st.st_size:x}-{st.st_mtime_ns // 10**9:x}.{st.st_mtime_ns % 10**9:09d}"
    return os.path.join(base, f"lazynccl-{os.geteuid()}", key, os.path.basename(module))


DROPINS = os.path.join(t.BUILD, "src", "dropin")
LIBS = {"nccl": ("libnccl.so.2", "nccl", "nccl_version"),
        "nvrtc": ("libnvrtc.so.13", "nvrtc", "nvrtc_compile"),
        "nvjitlink": ("libnvJitLink.so.13", "nvJitLink", "jit_link")}


def sanitizer_skip():
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("an audit module and preloaded drop-ins run before a sanitizer's runtime, which "
                     "must come first; the default build runs these tests")


def audit_module(out, extra=()):
    """The audit module built by hand, as src/audit/meson.build builds it."""
    src = os.path.join(t.SOURCE, "src")
    files = ("lz_audit.c", "lz_cache.c", "lz_loadlog.c", "lz_memobj.c", "lz_remote.c", "lz_sys.c", "lz_tlsfit.c")
    return t.compile_c(out, [os.path.join(src, "audit", f) for f in files] + [
                             os.path.join(src, "elf", f) for f in ("lz_elfpeek.c", "lz_elfview.c", "lz_elfmem.c")],
                       list(extra) + ["-O2", "-fvisibility=hidden", "-D_GNU_SOURCE", "-I" + src,
                                      "-ffreestanding", "-fno-builtin", "-fno-tree-loop-distribute-patterns",
                                      *(["-mno-outline-atomics"] if t.HOST_CPU == "aarch64" else []),
                                      "-ffunction-sections", "-DLZ_ELF_NO_REASONS", "-fno-stack-protector",
                                      "-nostdlib", "-Wl,--gc-sections", "-Wl,--no-undefined"], shared=True)


def consumer(d):
    return t.compile_c(os.path.join(d, "bypath_consumer"), [os.path.join(HERE, "bypath_consumer.c")],
                       ["-O1", "-ldl", "-lpthread"])


def needer(d, lib):
    soname, link, _ = LIBS[lib]
    real = t.real_library(soname)
    return t.compile_c(os.path.join(d, f"libneed_{lib}.so"), [os.path.join(HERE, "needer.c")],
                       [f"-DNEED_{lib.upper()}", f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}",
                        f"-L{os.path.dirname(real)}", f"-l{link}"], shared=True)


def run(d, lib, preload_path, under_run=True, extra_env=None, args=(), run_args=(), limit=120):
    exe = consumer(d)
    so = needer(d, lib)
    env = {"LZ_NOT_REAL": DROPINS}
    env.update(extra_env or {})
    cmd = ([RUN] + list(run_args) + ["--"] if under_run else []) + [exe, preload_path, so,
                                                                    LIBS[lib][2]] + list(args)
    return t.run(["timeout", str(limit)] + cmd, env=env)


def lines(out, prefix):
    return [line[len(prefix):].split() for line in out.splitlines() if line.startswith(prefix)]


def real_after(out, when):
    got = lines(out, f"real after {when}:")
    t.check(got, f"no 'real after {when}' line in:\n{out}")
    return [] if got[0] == ["-"] else got[0]


def same_file(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


def by_path(lib, run_args=()):
    sanitizer_skip()
    soname = LIBS[lib][0]
    real = t.real_library(soname)
    d = t.workdir(f"audit_{lib}{'_'.join([''] + [a.strip('-') for a in run_args])}")
    plain = run(d, lib, real, under_run=False)
    t.equal(plain.returncode, 0, f"plain run: {plain.stdout}{plain.stderr}")
    answer = lines(plain.stdout, "answer")[0][0]
    t.check(int(answer) > 0, f"the real library answers: {plain.stdout}")
    t.equal(len(real_after(plain.stdout, "preload")), 1, "without lazynccl-run the preload maps it")
    r = run(d, lib, real, run_args=run_args)
    t.equal(r.returncode, 0, f"under lazynccl-run: {r.stdout}{r.stderr}")
    t.equal(real_after(r.stdout, "preload"), [], "real files mapped after the by-path preload")
    t.equal(real_after(r.stdout, "needer"), [], "real files mapped after the DT_NEEDED object")
    t.equal(lines(r.stdout, "answer")[0][0], answer, "the answer through the drop-in")
    after = real_after(r.stdout, "call")
    mine = [f for f in after if os.path.basename(f).startswith(soname.split(".so")[0] + ".so")]
    t.equal(len(mine), 1, f"one real {soname} after the call: {after}")
    t.check(same_file(mine[0], real), f"the file asked for is loaded: {mine[0]} vs {real}")
    return r


@case
def audit_nccl_by_path():
    """NCCL preloaded by path, then needed by SONAME: nothing real mapped
    until the first call, then exactly the file asked for."""
    by_path("nccl")


@case
def audit_nvrtc_by_path_compiles():
    """NVRTC the same way, with a real compile (its builtins found beside the
    file asked for): one real NVRTC after the compile."""
    r = by_path("nvrtc")
    builtins = [f for f in real_after(r.stdout, "call") if "builtins" in f]
    t.equal(len(builtins), 1, f"the builtins beside NVRTC: {r.stdout}")


@case
def audit_nvjitlink_by_path_links():
    """nvJitLink the same way, with a real link of a PTX module."""
    by_path("nvjitlink")


@case
def audit_libpath_wins_one_copy():
    """LAZYNCCL_LIBPATH names another NCCL (a fake): the by-path preload of the
    real one maps nothing, the call answers from LAZYNCCL_LIBPATH's, and only
    that one is mapped (the real file asked for never is)."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_libpath")
    fake = t.fake_nccl(f"{d}/fake")
    r = run(d, "nccl", real, extra_env={"LAZYNCCL_LIBPATH": fake})
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    t.equal(real_after(r.stdout, "preload"), [], "after the preload")
    t.equal(lines(r.stdout, "answer")[0][0], "99999", "LAZYNCCL_LIBPATH's answer")
    t.equal(real_after(r.stdout, "call"), [fake], "mapped after the call")


@case
def audit_libpath_absent_names_asked_path():
    """LAZYNCCL_LIBPATH names a missing file: the call fails and the report
    names the path the program asked for and who asked."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_absent")
    r = run(d, "nccl", real, extra_env={"LAZYNCCL_LIBPATH": f"{d}/missing/libnccl.so.2"})
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    t.equal(lines(r.stdout, "answer")[0][0], "-1", "the call fails")
    t.contains(r.stdout, f"[asked by path] {real} (dlopen by {consumer(d)}): not tried, "
               "LAZYNCCL_LIBPATH names the library", "the report")
    t.equal(real_after(r.stdout, "call"), [], "nothing real mapped")


@case
def audit_missing_file_fails_as_without():
    """A by-path load of a file that does not exist fails as it does without
    lazynccl-run (the module redirects only files it could read)."""
    sanitizer_skip()
    d = t.workdir("audit_missing")
    t.real_library("libnccl.so.2")
    plain = run(d, "nccl", f"{d}/nowhere/libnccl.so.2", under_run=False)
    r = run(d, "nccl", f"{d}/nowhere/libnccl.so.2")
    t.equal((r.returncode, r.stdout), (plain.returncode, plain.stdout), "same failure")
    t.contains(r.stdout, "preload failed:", "dlopen's own error")


@case
def audit_own_load_not_redirected_bounded():
    """The drop-in's own load of the asked file is not redirected back to it.
    The same program under a naive module (every request redirected, built
    with -DLZ_AUDIT_NAIVE) fails: the drop-in is handed itself."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_naive")
    naive = audit_module(f"{d}/naive-audit.so", ["-DLZ_AUDIT_NAIVE"])
    r = run(d, "nccl", real)
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    t.check(int(lines(r.stdout, "answer")[0][0]) > 0, f"our module: {r.stdout}")
    bad = run(d, "nccl", real, extra_env={"LAZYNCCL_AUDIT_MODULE": naive}, limit=15)
    ok = bad.returncode == 0 and int(lines(bad.stdout, "answer")[0][0]) > 0
    t.equal(ok, False, f"the naive module must fail (timeout or error): {bad.stdout}")
    print(f"naive module: rc={bad.returncode}, {bad.stdout.splitlines()[-1] if bad.stdout else ''}")


@case
def audit_fork_child_and_parent_one_copy():
    """Fork after the by-path preload: the child's first call and the
    parent's each load the asked file, one copy in each process."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_fork")
    r = run(d, "nccl", real, args=["fork"])
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    child = real_after(r.stdout, "child call")
    parent = real_after(r.stdout, "call")
    t.equal((len(child), len(parent)), (1, 1), r.stdout)
    t.check(same_file(child[0], real) and same_file(parent[0], real), r.stdout)
    t.equal(lines(r.stdout, "child answer")[0][0], lines(r.stdout, "answer")[0][0], "answers")


@case
def audit_threads_race_first_call():
    """16 threads make the first call together after the by-path preload:
    all get the real answer, one real copy is mapped, the file asked for."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_threads")
    r = run(d, "nccl", real, args=["threads"])
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    t.equal(lines(r.stdout, "threads agree")[0][0], "16", r.stdout)
    after = real_after(r.stdout, "call")
    t.equal(len(after), 1, r.stdout)
    t.check(same_file(after[0], real), r.stdout)


@case
def audit_dlopen_on_the_smallest_thread_stack():
    """A thread whose stack is PTHREAD_STACK_MIN dlopens NCCL (by path, by a
    path through "dir/./", by name) and calls it: the audit module judges
    each request on that thread, so it reads files into memory of its own
    and writes its log without a buffer on the stack. Wrapped, each answers
    what it answers plain and maps the same real file, the log on and off.
    (Judged on the caller's stack, the module's reads took 80 KiB: the
    process crashed, or hung inside ld.so's lock.)"""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_small_stack")
    exe = t.compile_c(os.path.join(d, "small_stack_dlopen"),
                      [os.path.join(t.PROGS, "small_stack_dlopen.c"), "-ldl", "-lpthread"])
    dotted = os.path.join(os.path.dirname(real), ".", os.path.basename(real))
    for asked in (real, dotted, "libnccl.so.2"):
        for log in ({}, {"LAZYNCCL_DEBUG": "1"}):
            plain = t.run([exe, asked], env=log, timeout=60)
            wrapped = t.run([RUN, exe, asked], env=log, timeout=60)
            what = f"{asked} {log}: {wrapped.stderr[-600:]}"
            t.equal(wrapped.returncode, plain.returncode, f"exit status, {what}")
            said = [l for l in wrapped.stdout.splitlines() if not l.startswith("mapped: ")]
            t.equal(said, [l for l in plain.stdout.splitlines() if not l.startswith("mapped: ")], what)
            t.check(said[-1].startswith("ncclGetVersion: 0, version 2"), f"the call answered: {said}")
            mapped = [os.path.realpath(l[8:]) for l in wrapped.stdout.splitlines()
                      if l.startswith("mapped: ") and not l[8:].startswith(DROPINS)]
            t.equal(mapped, [os.path.realpath(l[8:]) for l in plain.stdout.splitlines()
                             if l.startswith("mapped: ")], f"the real file mapped, {what}")
            if log:
                t.contains(wrapped.stderr, "lazynccl-audit: ", "the module's log")


@case
def audit_debug_says_who_asked():
    """LAZYNCCL_DEBUG=1: the module says which load it redirected, who asked
    and for which path; the drop-in says it loaded that path, found by
    'asked by path'."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_debug")
    r = run(d, "nccl", real, extra_env={"LAZYNCCL_DEBUG": "1"})
    exe = consumer(d)
    t.contains(r.stderr, f'lazynccl-audit: dlopen("{real}") by {exe}: the drop-in '
               f"{DROPINS}/libnccl.so.2 will load that file at its first call", "redirect line")
    t.contains(r.stderr, f"lazynccl: loaded {real} (found by: asked by path)", "the drop-in")


@case
def audit_user_module_kept():
    """A user's own LD_AUDIT (a profiler's) stays beside ours and still runs;
    --print-env prints both variables."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_user")
    user = t.compile_c(f"{d}/user-audit.so", [os.path.join(HERE, "user_audit.c")], [], shared=True)
    env = t.run([RUN, "--print-env"], env={"LD_AUDIT": user}, check_rc=0).stdout
    t.contains(env, f"export LD_AUDIT='{MODULE_ENTRY}:{user}'", "print-env")
    t.contains(env, f"{DROPINS}/libnccl.so.2:", "print-env: NCCL's drop-in among the served")
    t.check("LD_PRELOAD" not in env, f"nothing preloaded: {env}")
    log = f"{d}/user.log"
    r = run(d, "nccl", real, extra_env={"LD_AUDIT": user, "LZ_USER_AUDIT_LOG": log})
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    t.equal(real_after(r.stdout, "preload"), [], "still redirected")
    t.check(re.match(r"user audit: \d+ objects", open(log).read()), "the user's module ran")


@case
def audit_no_audit_option_and_missing_module():
    """--no-audit leaves it out (the by-path preload maps the real library);
    a missing module is said once and the command runs as without it."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_off")
    r = run(d, "nccl", real, run_args=["--no-audit"])
    t.equal(len(real_after(r.stdout, "preload")), 1, "without the module")
    env = t.run([RUN, "--no-audit", "--print-env"], check_rc=0).stdout
    t.check("LD_AUDIT" not in env, env)
    r = run(d, "nccl", real, extra_env={"LAZYNCCL_AUDIT_MODULE": f"{d}/none.so"})
    t.equal(r.stderr.count("lazynccl-run: no audit module at"), 1, r.stderr)
    t.equal(lines(r.stdout, "answer")[0][0] != "-1", True, r.stdout)


@case
def audit_module_exports_only_its_hooks():
    """The module exports la_version, la_objopen, la_objclose, la_activity,
    la_preinit and
    la_objsearch: no la_symbind or la_pltenter (binding stays at PLT speed).
    It needs no library at all, not even the dynamic linker: an audit module
    that needs libc.so.6 loads a second C library into every wrapped process,
    and one that needs ld.so makes every process search for it."""
    names = sorted(t.exported(MODULE))
    t.equal(names, ["la_activity", "la_objclose", "la_objopen", "la_objsearch", "la_preinit", "la_version"], "exports")
    if t.HOST_CPU in ("x86_64", "aarch64"):
        out = t.run(["readelf", "-dW", MODULE], check_rc=0).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*?)\]", out)
        t.equal(needed, [], "DT_NEEDED of the module")


@case
def audit_module_data_one_page():
    """What ld.so maps for the module is what it maps for an empty module
    linked the same way: two segments, the writable one ending in the page
    where its file part ends, so no zero-filled memory is mapped for it and
    a process writes only the page ld.so writes anyway (its dynamic
    section); no RELRO to mprotect, as there is no relocation to protect."""
    if t.HOST_CPU not in ("x86_64", "aarch64"):
        raise t.Skip("elsewhere the module links the C library (src/audit/meson.build)")
    out = t.run(["readelf", "-lW", MODULE], check_rc=0).stdout
    loads = [line.split() for line in out.splitlines() if line.split()[:1] == ["LOAD"]]
    t.equal(len(loads), 2, f"PT_LOAD segments:\n{out}")
    t.check("GNU_RELRO" not in out, f"no RELRO:\n{out}")
    rw = [seg for seg in loads if "W" in "".join(seg[6:-1])]
    t.equal(len(rw), 1, f"one writable segment:\n{out}")
    vaddr, filesz, memsz = (int(x, 16) for x in (rw[0][2], rw[0][4], rw[0][5]))
    page = os.sysconf("SC_PAGE_SIZE")
    t.equal((vaddr + memsz + page - 1) // page, (vaddr + filesz + page - 1) // page,
            f"the writable segment's memory ends in its file part's last page:\n{out}")
    relocs = t.run(["readelf", "-rW", MODULE], check_rc=0).stdout
    t.contains(relocs, "There are no relocations in this file.", "relocations of the module")


@case
def audit_long_dropin_list_all_served():
    """A LAZYNCCL_AUDIT_DROPINS longer than the module's page holds (30
    entries of 200-byte directories before the real ones) loses no entry:
    the NCCL drop-in, last, still stands in for a load by path."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_long_list")
    padding = [f"/{'x' * 200}/libpad{i}.so.1" for i in range(30)]
    printed = t.run([RUN, "--print-env"], check_rc=0).stdout
    listed = re.search(r"^export LAZYNCCL_AUDIT_DROPINS='([^']*)'$", printed, re.M)
    t.check(listed, f"lazynccl-run names the drop-ins:\n{printed}")
    dropins = ":".join(padding + [listed.group(1)])
    r = run(d, "nccl", real, under_run=False,
            extra_env={"LD_AUDIT": MODULE, "LAZYNCCL_AUDIT_DROPINS": dropins, "LAZYNCCL_DEBUG": "1"})
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    t.contains(r.stderr, f"the drop-in {DROPINS}/libnccl.so.2 will load that file", "the last entry served")
    t.equal(real_after(r.stdout, "preload"), [], "real files mapped after the by-path preload")
    t.equal(len(real_after(r.stdout, "call")), 1, "one real copy after the call")


@case
def audit_secure_mode_as_today():
    """A setuid program under lazynccl-run: glibc ignores LD_AUDIT and
    LD_PRELOAD paths there, and the program loads and calls the real library
    by path as it does without lazynccl-run."""
    sanitizer_skip()
    if os.geteuid() != 0:
        raise t.Skip("needs root to make a setuid program")
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_setuid")
    os.chmod(d, 0o755)
    exe = consumer(d)
    so = needer(d, "nccl")
    os.chmod(exe, 0o4755)
    os.chmod(so, 0o755)
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", RUN, exe, real, so,
           "nccl_version"]
    r = t.run(["timeout", "60"] + cmd, env={"LZ_NOT_REAL": DROPINS})
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    t.equal(len(real_after(r.stdout, "preload")), 1, f"the real library, as today: {r.stdout}")
    t.check(int(lines(r.stdout, "answer")[0][0]) > 0, r.stdout)


def doctor_audit(run_args=()):
    import json
    info = os.path.join(t.BUILD, "lazynccl-info")
    out = t.run([RUN] + list(run_args) + [info, "--doctor", "--json"]).stdout
    return [f for f in json.loads(out)["doctor"] if f["check"] == "audit"]


@case
def audit_doctor_says_what_is_redirected():
    """lazynccl-info --doctor under lazynccl-run names the sonames whose loads
    by path go to which drop-ins (their one directory) through which module;
    without the module it
    warns that a by-path preload maps the real library anyway."""
    sanitizer_skip()
    found = doctor_audit()
    t.equal([f["status"] for f in found], ["ok"], f"{found}")
    for soname in ("libnccl.so.2", "libnvrtc.so.13", "libnvJitLink.so.13"):
        t.contains(found[0]["message"], soname, "the sonames")
    t.contains(found[0]["message"], f"through the audit module {MODULE_HERE}", "module")
    t.contains(found[0]["message"], "by name or by path", "the rule")
    # Their directory once, not each path: sixteen drop-ins fit the line.
    t.contains(found[0]["message"], f"get the drop-ins (in {os.path.join(t.SHIMS, 'dropin')}) "
                                    f"until", "the drop-ins' directory")
    off = doctor_audit(["--no-audit"])
    t.equal([f["status"] for f in off], ["warning"], f"{off}")
    t.contains(off[0]["message"], "without the audit module", "the warning")
    pre = doctor_audit(["--preload"])
    t.equal([f["status"] for f in pre], ["ok"], f"{pre}")
    t.contains(pre[0]["message"], "with the redirector", "--preload")


CUPY_LIKE = r"""
import ctypes, json, os, sys
sys.path.insert(0, sys.argv[1])
def real():
    out = set()
    for line in open('/proc/self/maps'):
        p = line.split()[-1]
        if '/libnccl.so' in p and not p.startswith(sys.argv[3]):
            out.add(p)
    return sorted(out)
ctypes.CDLL(sys.argv[2])            # torch's preload, by path
import cupylike                     # an extension vendoring the amalgamation
r = {'after_import': real()}
r['extension'] = cupylike.version()
r['after_extension'] = real()
v = ctypes.c_int()
ctypes.CDLL('libnccl.so.2').ncclGetVersion(ctypes.byref(v))   # the drop-in, by SONAME
r['dropin'] = v.value
r['after_both'] = real()
print(json.dumps(r))
"""


@case
def audit_cupy_like_extension_one_copy():
    """A CuPy-like extension vendoring the NCCL amalgamation beside torch's
    by-path preload, under lazynccl-run: the extension's own load is not
    redirected (its .note.lazynccl), the preload is; both answer, and one
    real NCCL is mapped."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    import json
    import sys
    import test_vendor
    d = t.workdir("audit_cupylike")
    test_vendor.extension(d, "cupylike", "cl_")
    script = os.path.join(d, "cupylike.py")
    with open(script, "w") as f:
        f.write(CUPY_LIKE)
    r = t.run(["timeout", "120", RUN, sys.executable, script, d, real, DROPINS])
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    got = json.loads(r.stdout)
    t.equal(got["after_import"], [], "nothing real after the preload and the import")
    t.equal(got["extension"], got["dropin"], "both answer the same version")
    t.equal(len(got["after_both"]), 1, f"one real copy: {got}")
    t.check(same_file(got["after_both"][0], real), f"{got}")


def tool(d):
    return t.compile_c(os.path.join(d, "libtool_inject.so"), [os.path.join(HERE, "tool_inject.c")],
                       ["-ldl"], shared=True)


def tool_run(name, mode, extra_env=None, run_args=()):
    """The torch-like consumer with the tool preloaded, in mode (tool-*):
    (its run, the real file asked for)."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir(name)
    r = run(d, "nccl", real, args=[mode], extra_env=dict(extra_env or {}, LD_PRELOAD=tool(d)),
            run_args=run_args)
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    return r, real


def tool_file(out):
    """The file holding the function the tool's dlsym gave."""
    got = lines(out, "tool")
    t.check(got and got[0][0] != "failed:", f"the tool's answer: {out}")
    return got[0][2]


def tool_handle(out):
    """The file the tool's dlopen handle is."""
    return lines(out, "tool")[0][4]


@case
def audit_tool_reopens_loaded_copy():
    """A tool's injection library (preloaded, as compute-sanitizer's is)
    re-opens the loaded library by path (the kernel's name for it) after the
    first call: it gets the copy in use, whose function lies in the real
    file, and one real copy stays mapped."""
    r, real = tool_run("audit_tool_after", "tool-after")
    t.check(same_file(tool_file(r.stdout), real), f"the tool hooks the real file: {r.stdout}")
    after = real_after(r.stdout, "tool")
    t.equal(len(after), 1, f"one real copy after the tool: {r.stdout}")


@case
def audit_tool_reopen_gets_libpath_copy():
    """LAZYNCCL_LIBPATH chose another file: a tool re-opening the file the
    program asked for gets the chosen copy, and that file alone is mapped."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    if os.path.realpath(real) == real:
        raise t.Skip(f"{real} is its own real path: the test needs another name for it")
    fake = t.fake_nccl(f"{t.workdir('audit_tool_libpath_fake')}/fake")
    r, _ = tool_run("audit_tool_libpath", "tool-canonical", {"LAZYNCCL_LIBPATH": fake})
    t.check(same_file(tool_file(r.stdout), fake), f"the tool gets the copy in use: {r.stdout}")
    t.equal(real_after(r.stdout, "tool"), [fake], "mapped after the tool")


@case
def audit_tool_same_string_keeps_dropin():
    """The documented limit (docs/concepts/the-same-job.md): ld.so records the very
    string a redirected by-path request named as a name of the drop-in it
    mapped (glibc's "origname"), and answers a later request for that
    string itself, before any audit module is asked: a tool re-opening that
    string gets the drop-in, whose calls reach the one real copy."""
    r, _ = tool_run("audit_tool_same", "tool-same-string")
    t.check(same_file(tool_handle(r.stdout), os.path.join(DROPINS, "libnccl.so.2")), r.stdout)
    t.check(same_file(tool_file(r.stdout), os.path.join(DROPINS, "libnccl.so.2")), r.stdout)
    t.equal(len(real_after(r.stdout, "tool")), 1, r.stdout)


@case
def audit_tool_before_first_call_gets_dropin():
    """A tool that opens the library by path before the first call gets the
    drop-in (the program's by-path preload stays lazy); the call then loads
    the file asked for, one real copy."""
    r, real = tool_run("audit_tool_before", "tool-before")
    t.check(same_file(tool_handle(r.stdout), os.path.join(DROPINS, "libnccl.so.2")), r.stdout)
    t.check(same_file(tool_file(r.stdout), os.path.join(DROPINS, "libnccl.so.2")), r.stdout)
    after = real_after(r.stdout, "call")
    t.equal(len(after), 1, r.stdout)
    t.check(same_file(after[0], real), r.stdout)


MAPS_PY = r"""
import sys
drop = [l.split()[-1] for l in open('/proc/self/maps') if sys.argv[1] in l]
print('mapped', len(drop))
"""


@case
def audit_process_that_never_asks_maps_no_dropin():
    """Nothing is preloaded: a process of the tree that never asks for
    NCCL, NVRTC or nvJitLink maps no drop-in and no real library."""
    sanitizer_skip()
    import sys
    r = t.run([RUN, sys.executable, "-c", MAPS_PY, "/libn"], check_rc=0)
    t.equal(r.stdout.strip(), "mapped 0", r.stdout + r.stderr)
    r = t.run([RUN, "--no-audit", sys.executable, "-c", MAPS_PY, DROPINS], check_rc=0)
    t.check(r.stdout.strip() != "mapped 0", f"--no-audit preloads them: {r.stdout}")


HELLO = "#include <stdio.h>\n#include <stdlib.h>\nint main(void) { char *p = malloc(8); p[0] = 'x'; " \
        "printf(\"hello %c\\n\", p[0]); free(p); return 0; }\n"


def hello(d, name, args=()):
    src = os.path.join(d, "hello.c")
    with open(src, "w") as f:
        f.write(HELLO)
    return t.compile_c(os.path.join(d, name), [src], list(args))


@case
def audit_asan_program_runs_as_plain():
    """A consumer built with ASan (its runtime linked first, as gcc does)
    under lazynccl-run: it starts (nothing ahead of ASan's runtime), stays
    lazy, answers as plain, one real copy."""
    sanitizer_skip()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_asan")
    exe = t.compile_c(os.path.join(d, "bypath_consumer"), [os.path.join(HERE, "bypath_consumer.c")],
                      ["-O1", "-fsanitize=address", "-ldl", "-lpthread"])
    so = needer(d, "nccl")
    env = {"LZ_NOT_REAL": DROPINS, "ASAN_OPTIONS": "detect_leaks=0"}
    plain = t.run(["timeout", "120", exe, real, so, "nccl_version"], env=env)
    r = t.run(["timeout", "120", RUN, exe, real, so, "nccl_version"], env=env)
    t.equal((r.returncode, r.stderr), (0, ""), r.stdout + r.stderr)
    t.equal(lines(r.stdout, "answer"), lines(plain.stdout, "answer"), "the same answer")
    t.equal(real_after(r.stdout, "preload"), [], "lazy")
    t.equal(len(real_after(r.stdout, "call")), 1, r.stdout)


@case
def audit_valgrind_as_plain():
    """valgrind (memcheck) under lazynccl-run reports what it reports plain:
    no error. The cause it avoids is glibc's: under any audit module its
    exit-time __libc_freeres frees start-up memory, two invalid frees;
    lazynccl-run passes --run-libc-freeres=no in VALGRIND_OPTS, and a user
    who asks for it back sees them."""
    sanitizer_skip()
    if not shutil.which("valgrind"):
        raise t.Skip("valgrind is not installed")
    d = t.workdir("audit_valgrind")
    exe = hello(d, "hello")
    plain = t.run(["valgrind", "-q", "--error-exitcode=9", exe])
    r = t.run([RUN, "valgrind", "-q", "--error-exitcode=9", exe])
    t.equal((r.returncode, r.stdout, r.stderr), (plain.returncode, plain.stdout, plain.stderr), "as plain")
    t.equal(plain.returncode, 0, plain.stderr)
    back = t.run([RUN, "valgrind", "-q", "--error-exitcode=9", exe],
                 env={"VALGRIND_OPTS": "--run-libc-freeres=yes"})
    t.equal(back.returncode, 9, f"glibc's freeres under an audit module: {back.stderr}")
    t.contains(back.stderr, "Invalid free()", "what valgrind says")


@case
def audit_tsan_program_starts():
    """A ThreadSanitizer-built program needs 768 KiB of static TLS at
    start-up, which an audited process lacks by default: the audit module
    restarts it once with glibc.rtld.optional_static_tls sized for it, and
    it starts, under lazynccl-run and under a bare LD_AUDIT alike. An empty
    audit module, which does not, fails as glibc makes it."""
    sanitizer_skip()
    d = t.workdir("audit_tsan")
    exe = hello(d, "hello_tsan", ["-fsanitize=thread"])
    r = t.run(["timeout", "60", RUN, exe])
    t.equal((r.returncode, r.stdout), (0, "hello x\n"), r.stderr)
    bare = t.run([exe], env={"LD_AUDIT": MODULE, "LAZYNCCL_DEBUG": "1"})
    t.equal((bare.returncode, bare.stdout), (0, "hello x\n"), bare.stderr)
    t.contains(bare.stderr, "restarting it with glibc.rtld.optional_static_tls=", "sized by the module")
    empty = t.run([exe], env={"LD_AUDIT": empty_module(d)})
    t.contains(empty.stderr, "cannot allocate memory in static TLS block", "glibc without the tunable")


def empty_module(d):
    """An audit module that does nothing: what glibc does to any."""
    src = os.path.join(d, "empty_audit.c")
    with open(src, "w") as f:
        f.write("unsigned la_version(unsigned v) { return v; }\n")
    return t.compile_c(os.path.join(d, "empty_audit.so"), [src], ["-shared", "-fPIC", "-nostdlib"])


JEMALLOC = "/usr/lib/{}-linux-gnu/libjemalloc.so.2"


def jemalloc():
    path = JEMALLOC.format(t.HOST_CPU)
    if not os.path.exists(path):
        raise t.Skip(f"{path} is not installed (Debian's libjemalloc2)")
    return path


@case
def audit_jemalloc_preloaded_program():
    """A job that preloads jemalloc: under lazynccl-run the torch-like
    consumer starts, maps nothing real before the first call and one copy
    after; the process restarted itself with a user's GLIBC_TUNABLES kept
    and the tunable appended, which its children inherit (they start
    without a restart). The same preload under an empty audit module stops
    as glibc makes it."""
    sanitizer_skip()
    je = jemalloc()
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_jemalloc")
    for user in ("", "glibc.malloc.tcache_count=3"):
        env = {"LD_PRELOAD": je}
        if user:
            env["GLIBC_TUNABLES"] = user
        r = run(d, "nccl", real, extra_env=env)
        t.equal(r.returncode, 0, r.stdout + r.stderr)
        t.equal(real_after(r.stdout, "preload"), [], "lazy")
        after = real_after(r.stdout, "call")
        t.equal(len(after), 1, r.stdout)
        t.check(same_file(after[0], real), r.stdout)
        seen = t.run([RUN, "sh", "-c", 'echo "$GLIBC_TUNABLES|${LAZYNCCL_TLS_REEXEC-}"; '
                      'LAZYNCCL_DEBUG=1 /bin/true'], env=env, check_rc=0)
        want = (user + ":" if user else "") + "glibc.rtld.optional_static_tls="
        t.check(seen.stdout.startswith(want) and seen.stdout.rstrip().endswith("|"), seen.stdout)
        t.check("restarting" not in seen.stderr, f"the child inherits the size: {seen.stderr}")
    bare = t.run(["/bin/true"], env={"LD_AUDIT": empty_module(d), "LD_PRELOAD": je})
    t.contains(bare.stderr, "cannot allocate memory in static TLS block", "glibc without the tunable")


JE_PY = r"""
import ctypes, json, os, sys
def real():
    return sorted({l.split()[-1] for l in open('/proc/self/maps')
                   if '/libnccl.so' in l and not l.split()[-1].startswith(sys.argv[2])})
ctypes.CDLL(sys.argv[1])
out = {'after_preload': real(), 'audit': bool(os.environ.get('LD_AUDIT'))}
v = ctypes.c_int()
ctypes.CDLL('libnccl.so.2').ncclGetVersion(ctypes.byref(v))
out.update(version=v.value, after_call=real())
print(json.dumps(out))
"""


@case
def audit_jemalloc_python_one_copy():
    """A Python process with jemalloc preloaded under lazynccl-run, loading
    the real NCCL by path as torch does: nothing real until the call, then
    exactly that file."""
    jemalloc_python([], audited=True)


def jemalloc_python(run_args, audited):
    """JE_PY under lazynccl-run RUN_ARGS with jemalloc preloaded: lazy, then
    exactly the file asked for, through the audit module or not."""
    sanitizer_skip()
    import json
    import sys
    je = jemalloc()
    real = t.real_library("libnccl.so.2")
    r = t.run(["timeout", "120", RUN] + run_args + [sys.executable, "-c", JE_PY, real, DROPINS],
              env={"LD_PRELOAD": je})
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    out = json.loads(r.stdout)
    t.equal(out["audit"], audited, f"through the audit module: {r.stdout}")
    t.equal(out["after_preload"], [], r.stdout)
    t.check(out["version"] > 0, r.stdout)
    t.equal(len(out["after_call"]), 1, r.stdout)
    t.check(same_file(out["after_call"][0], real), r.stdout)


@case
def audit_two_rank_mpi_launch():
    """Two ranks launched by Debian's Open MPI: the wrapper around mpirun
    (local ranks inherit its variables), inside each rank's command, and
    its variables forwarded with -x as for remote ranks (docs/guides/launchers.md,
    "Launchers"): each rank maps nothing real after the by-path preload and
    exactly the file asked for after its call."""
    sanitizer_skip()
    if not shutil.which("mpirun"):
        raise t.Skip("mpirun is not installed (Debian's openmpi-bin)")
    real = t.real_library("libnccl.so.2")
    d = t.workdir("audit_mpi")
    exe, so = consumer(d), needer(d, "nccl")
    rank_cmd = ["sh", "-c", f'exec "$0" "$@" > {d}/out.$OMPI_COMM_WORLD_RANK 2>&1',
                exe, real, so, "nccl_version"]
    mpirun = ["mpirun", "--oversubscribe", "-np", "2"]
    printed = t.run([RUN, "--print-env"], check_rc=0).stdout
    forwarded = dict(line[len("export "):].split("=", 1) for line in printed.splitlines())
    forwarded = {k: v.strip("'") for k, v in forwarded.items()}
    env = {"LZ_NOT_REAL": DROPINS, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_plm_rsh_agent": "false"}
    ways = {
        "lazynccl-run mpirun": ([RUN] + mpirun + rank_cmd, env),
        "mpirun lazynccl-run": (mpirun + [RUN] + rank_cmd, env),
        "mpirun -x": (mpirun + [a for k in forwarded for a in ("-x", k)] + rank_cmd, dict(env, **forwarded)),
    }
    for way, (cmd, e) in ways.items():
        r = t.run(["timeout", "120"] + cmd, env=e)
        t.equal(r.returncode, 0, f"{way}: {r.stdout}{r.stderr}")
        for rank in (0, 1):
            out = open(f"{d}/out.{rank}").read()
            t.equal(real_after(out, "preload"), [], f"{way}, rank {rank}: lazy: {out}")
            after = real_after(out, "call")
            t.equal(len(after), 1, f"{way}, rank {rank}: {out}")
            t.check(same_file(after[0], real), f"{way}, rank {rank}: {out}")
            t.check(int(lines(out, "answer")[0][0]) > 0, f"{way}, rank {rank}: {out}")


REDIRECTOR = os.path.join(t.BUILD, "src", "audit", "liblazynccl-redirect.so")


@case
def redirector_nccl_by_path():
    """lazynccl-run --preload (no audit module: the drop-ins and the
    redirector preloaded): NCCL preloaded by path stays lazy until the first
    call, then exactly the file asked for."""
    by_path("nccl", ["--preload"])


@case
def redirector_nvrtc_by_path_compiles():
    """The same for NVRTC, with a real compile and its builtins."""
    by_path("nvrtc", ["--preload"])


@case
def redirector_tool_reopens_loaded_copy():
    """Under --preload a tool re-opening the library by the very string the
    program used gets the copy in use (no audit module, so ld.so never
    gave the drop-in that name)."""
    r, real = tool_run("redirector_tool", "tool-same-string", run_args=["--preload"])
    t.check(same_file(tool_file(r.stdout), real), f"the tool hooks the real file: {r.stdout}")
    t.equal(len(real_after(r.stdout, "tool")), 1, r.stdout)


@case
def redirector_dlopen_is_a_tail_call():
    """The redirector's dlopen reaches the C library's by a jump, never a
    call: glibc's dlopen reads its caller from the return address (for
    $ORIGIN, run paths and the namespace), which must stay the program's."""
    sanitizer_skip()
    objdump = os.environ.get("LZ_OBJDUMP", "objdump")
    text = t.run([objdump, "-d", "--no-show-raw-insn", REDIRECTOR], check_rc=0).stdout
    body = re.search(r"<dlopen>:\n(.*?)\n\n", text, re.S)
    t.check(body, f"no dlopen in {REDIRECTOR}")
    insns = body.group(1)
    jumps = re.findall(r"\bjmp\s+\*%r\w+|\bbr\s+x\d+", insns)
    t.check(len(jumps) >= 1, f"no jump to the next dlopen:\n{insns}")
    t.check(not re.search(r"\bcall\s+\*|\bblr\s+x", insns), f"an indirect call in dlopen:\n{insns}")


CALLER = r"""
#include <dlfcn.h>
int open_dep(void) { return dlopen("libdep_only_here.so", RTLD_NOW) != 0; }
"""


@case
def redirector_keeps_callers_run_path():
    """A library whose run path alone finds what it dlopens by name still
    finds it under --preload: the redirector leaves glibc the caller's
    return address."""
    sanitizer_skip()
    d = t.workdir("redirector_runpath")
    os.makedirs(f"{d}/sub")
    with open(f"{d}/dep.c", "w") as f:
        f.write("int dep(void) { return 1; }\n")
    with open(f"{d}/caller.c", "w") as f:
        f.write(CALLER)
    t.compile_c(f"{d}/sub/libdep_only_here.so", [f"{d}/dep.c"], [], shared=True)
    caller = t.compile_c(f"{d}/libcaller.so", [f"{d}/caller.c"],
                         ["-ldl", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/sub"], shared=True)
    script = ("import ctypes, sys; print(ctypes.CDLL(sys.argv[1]).open_dep())")
    import sys
    plain = t.run([sys.executable, "-c", script, caller], check_rc=0)
    t.equal(plain.stdout.strip(), "1", "plain")
    r = t.run([RUN, "--preload", sys.executable, "-c", script, caller], check_rc=0)
    t.equal(r.stdout.strip(), "1", f"under --preload: {r.stderr}")


@case
def redirector_jemalloc_python_one_copy():
    """--preload with jemalloc preloaded (the way glibc before 2.32 is
    served): a Python process loading NCCL by path as torch does stays lazy,
    then maps exactly that file."""
    jemalloc_python(["--preload"], audited=False)


@case
def audit_doctor_static_tls():
    """lazynccl-info --doctor names a preloaded library's static TLS and
    what this glibc gives an audited process: without LD_AUDIT, what
    lazynccl-run's module will raise the tunable to, and under the module
    that it restarts such a process; under another audit module with a
    large enough GLIBC_TUNABLES, ok (with too small a one lazynccl-info
    itself could not start); a library without TLS, no line."""
    sanitizer_skip()
    import json
    je = jemalloc()
    info = os.path.join(t.BUILD, "lazynccl-info")

    def static_tls(env):
        out = t.run([info, "--doctor", "--json"], env=env).stdout
        return [f for f in json.loads(out)["doctor"] if f["check"] == "static-tls"]

    plain = static_tls({"LD_PRELOAD": je})
    t.equal([f["status"] for f in plain], ["ok"], f"{plain}")
    t.contains(plain[0]["message"], f"{je} (2632 bytes)", "the library and its TLS")
    t.contains(plain[0]["message"], "glibc.rtld.optional_static_tls=3144", "what lazynccl-run's module sets")
    ours = static_tls({"LD_PRELOAD": je, "LD_AUDIT": MODULE})
    t.equal([f["status"] for f in ours], ["ok"], f"{ours}")
    t.contains(ours[0]["message"], "the audit module restarts such a process", "under our module")
    other = empty_module(t.workdir("audit_doctor_tls"))
    audited = static_tls({"LD_PRELOAD": je, "LD_AUDIT": other,
                          "GLIBC_TUNABLES": "glibc.rtld.optional_static_tls=4096"})
    t.equal([f["status"] for f in audited], ["ok"], f"{audited}")
    t.contains(audited[0]["message"], "gives audited processes 4096 bytes", "the tunable read")
    libz = t.real_library("libz.so.1")
    none = static_tls({"LD_PRELOAD": libz})
    t.equal(none, [], f"{libz}: a preload without static TLS")


def ldso_with_last_dir(d):
    """A copy of this machine's ld.so whose last system directory (glibc
    keeps them as one constant: "/lib/x86_64-linux-gnu/\\0...\\0/usr/lib/\\0")
    is an empty directory of the same length made here: (the copy, that
    directory)."""
    real = "/lib64/ld-linux-x86-64.so.2" if t.HOST_CPU == "x86_64" else "/lib/ld-linux-aarch64.so.1"
    with open(real, "rb") as f:
        data = f.read()
    run = re.search(rb"(?<=\0)((?:/[\x21-\x7e]*/\0){2,7})", data)
    if not run:
        raise t.Skip(f"{real}: no system directories found in it")
    last = run.group(1).split(b"\0")[-2]
    if len(last) < 8:
        raise t.Skip(f"{real}: its last system directory {last!r} is too short to stand for")
    new = ("/tmp/" + ("lzd%d" % os.getpid() + "x" * len(last))[:len(last) - 6] + "/").encode()
    os.makedirs(new.decode(), exist_ok=True)
    start = run.start(1) + len(run.group(1)) - len(last) - 1
    patched = data[:start] + new + data[start + len(new):]
    copy = os.path.join(d, "ld.so")
    with open(copy, "wb") as f:
        f.write(patched)
    os.chmod(copy, 0o755)
    return copy, new.decode()


@case
def audit_default_search_ends_at_ld_sos_last_directory():
    """A request by name that the dynamic linker cannot serve gets the
    drop-in, which then searches its own order: the audit module knows the
    request failed when ld.so tries its last system directory, read from
    ld.so itself. With an ld.so whose last system directory is not
    /usr/lib/ (a copy with another one of the same length), run as a
    command and as the program's interpreter, dlopen("libnvshmem_host.so.3")
    opens the drop-in wrapped and fails plain; with the module's old fixed
    /usr/lib/ it failed both ways. A program linked to the shim, under that
    ld.so without its cache, loads the copy of NCCL in that directory, as
    one linked -lnccl does; lazynccl-info --cache, run by that ld.so, calls
    a name recorded as found nowhere stale once that directory holds it."""
    sanitizer_skip()
    d = t.workdir("audit_last_default")
    ldso, last = ldso_with_last_dir(d)
    try:
        src = os.path.join(d, "open_by_name.c")
        with open(src, "w") as f:
            f.write("#include <dlfcn.h>\n#include <stdio.h>\n"
                    "int main(void) { void *h = dlopen(\"libnvshmem_host.so.3\", RTLD_LAZY);\n"
                    "  puts(h ? \"opened\" : dlerror()); return 0; }\n")
        by_cmd = t.compile_c(os.path.join(d, "open_by_name"), [src], ["-ldl"])
        by_interp = t.compile_c(os.path.join(d, "open_by_name_interp"), [src],
                                ["-ldl", f"-Wl,--dynamic-linker={ldso}"])
        for how, cmd in (("ld.so run as a command", [ldso, by_cmd]), ("its interpreter", [by_interp])):
            plain = t.run(cmd, env={"LAZYNCCL_DEBUG": "1"})
            t.equal((plain.returncode, plain.stdout),
                    (0, "libnvshmem_host.so.3: cannot open shared object file: No such file or directory\n"),
                    f"plain, {how}: {plain.stderr}")
            r = t.run([RUN, "--"] + cmd, env={"LAZYNCCL_DEBUG": "1"})
            t.equal((r.returncode, r.stdout), (0, "opened\n"), f"wrapped, {how}: {r.stderr[-2000:]}")
            t.contains(t.flat(r.stderr), "libnvshmem_host.so.3 needed by", f"{how}: the module's line")
            t.contains(t.flat(r.stderr), "the dynamic linker finds none", f"{how}: why it stood in")
        # The shims' linker step reads the same directories: a copy of NCCL
        # in that last one is what ld.so (without its cache) and a program
        # linked to the shim both load.
        t.fake_nccl(last, version=23456)
        src = os.path.join(d, "version.c")
        with open(src, "w") as f:
            f.write("#include <stdio.h>\n#include <nccl.h>\n"
                    "int main(void) { int v = 0; ncclGetVersion(&v); printf(\"%d\\n\", v); return 0; }\n")
        shim = t.compile_c(os.path.join(d, "version_shim"), [src],
                           [f"-I{t.NCCL_INCLUDE}", f"-L{t.SHIMS}", f"-Wl,-rpath,{t.SHIMS}", "-llazynccl"])
        direct = t.compile_c(os.path.join(d, "version_direct"), [src],
                             [f"-I{t.NCCL_INCLUDE}", f"-L{last}", "-l:libnccl.so.2"])
        for exe in (direct, shim):
            r = t.run([ldso, "--inhibit-cache", exe])
            t.equal((r.returncode, r.stdout), (0, "23456\n"), f"{os.path.basename(exe)}: {r.stderr}")
        # lazynccl-info --cache reads them too: a name the job recorded as
        # found nowhere is stale under that ld.so, whose last directory now
        # holds it, and still ok under this machine's.
        cache = os.path.join(d, "job.cache")
        name = "libzzlast.so.1"
        prog = "import ctypes\ntry:\n    ctypes.CDLL(%r)\nexcept OSError as e:\n    print(e)\n" % name
        t.run([RUN, "--cache", cache, "/usr/bin/python3", "-c", prog], check_rc=0)
        t.contains(open(cache).read(), f"\t{name}\t-\t", "recorded as found nowhere")
        shutil.copy(os.path.join(last, "libnccl.so.2"), os.path.join(last, name))
        info = os.path.join(t.BUILD, "lazynccl-info")
        t.contains(t.run([info, "--cache", cache], check_rc=0).stdout,
                   f"{name} -> - (none): ok (none found", "this machine's ld.so: ok")
        r = t.run([ldso, info, "--cache", cache])
        t.equal(r.returncode, 1, f"under the copy: {r.stdout}{r.stderr}")
        t.contains(r.stdout, f"stale: the dynamic linker would map {last}{name} now", "under the copy: stale")
    finally:
        shutil.rmtree(last, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(t.main())
