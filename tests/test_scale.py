#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A wrapped job at scale (docs/guides/large-jobs.md): what a process
asks of the filesystem under lazynccl-run against plain (strace, file
system calls and failed lookups); the job's resolution cache (--cache):
the same libraries mapped as plain while its contract holds, and a row for
each way the contract can break; concurrent writers; refused caches; and
the load report read by lazynccl-info --reports for a job under Slurm and
Open MPI, one rank given another NCCL on purpose."""
import os
import re
import shutil
import tempfile
import subprocess
import time

import lztest as t
from lztest import case

_theirs = set(t.CASES)
import test_audit as a  # noqa: E402 (its helpers)
import test_launcher as launcher  # noqa: E402
for _name in set(t.CASES) - _theirs:
    del t.CASES[_name]

import manylibs  # noqa: E402

RUN = a.RUN
INFO = os.path.join(t.BUILD, "lazynccl-info")
PYTHON = "/usr/bin/python3"


def file_calls(cmd, env=None):
    """(file system calls, failed ones, failed ones on .so paths, processes
    started) of cmd and everything it starts: strace's %file class."""
    if not shutil.which("strace"):
        raise t.Skip("strace is not installed")
    # A file of its own: cases that count run at once.
    fd, log = tempfile.mkstemp(prefix="lazynccl-strace-")
    os.close(fd)
    try:
        t.run(["strace", "-f", "-qq", "-e", "trace=%file", "-o", log] + cmd, env=env, check_rc=0)
        with open(log) as f:
            lines = [l for l in f if not l.startswith("+++") and "--- SIG" not in l]
    finally:
        os.unlink(log)
    calls = [l for l in lines if "resumed>" not in l]
    failed = [l for l in lines if re.search(r"= -1 E[A-Z]+", l)]
    execs = [l for l in calls if re.search(r"execve\(.*\) = 0", l)]
    return len(calls), len(failed), len([l for l in failed if ".so" in l]), len(execs)


@case
def scale_wrapper_adds_no_lookups():
    """Under lazynccl-run, in the build tree and an install: /bin/true,
    /bin/sh -c /bin/true and python3 -c pass make no failed lookup more
    than plain, and no file system call more than the launcher's five (its
    exec; /proc/self/exe, read by the C library's start-up and by the
    launcher; its manifest; statfs of the drop-ins' directory, for noexec)
    and the audit module's two in each process (ld.so's open and fstat of
    it)."""
    a.sanitizer_skip()
    for where, launcher_path in {"build tree": RUN, "install": launcher.install_tree()}.items():
        for cmd in (["/bin/true"], ["/bin/sh", "-c", "/bin/true"], [PYTHON, "-c", "pass"]):
            plain = file_calls(cmd)
            wrapped = file_calls([launcher_path] + cmd)
            what = f"{where}, {' '.join(cmd)}: plain {plain[:2]}, wrapped {wrapped[:2]}"
            t.check(wrapped[0] <= plain[0] + 5 + 2 * plain[3], f"{what}: file system calls")
            t.check(wrapped[1] <= plain[1], f"{what}: failed lookups")


def audit_of(env, cmd=None):
    """(LD_AUDIT, the audit module files mapped) in a process the launcher
    (with --node-copy) starts."""
    show = 'printf "%s|" "$LD_AUDIT"; grep liblazynccl-audit /proc/self/maps | awk \'{print $6}\' | sort -u'
    out = t.run((cmd or [RUN, "--node-copy"]) + ["sh", "-c", show], env=env, check_rc=0).stdout
    entry, mapped = out.split("|", 1)
    return entry, mapped.split()


@case
def scale_node_copy():
    """With --node-copy every process of a job opens the audit module's
    node copy (a memory filesystem's, made once per node and version by the
    launcher), not the installed file: the same bytes, this user's alone;
    without it, the installed file; LAZYNCCL_NODE_DIR names another
    directory; a directory another user made, one open to others, a link,
    a copy of another size, or a $XDG_RUNTIME_DIR another user owns is
    never taken (the installed module is named instead, or /dev/shm's);
    eight launchers making it at once leave one whole file; --print-env
    names the installed module. A directory the user names that cannot
    serve is said, in one line."""
    a.sanitizer_skip()
    module = a.MODULE_HERE
    want = a.node_copy()
    entry, mapped = audit_of({})
    t.equal((entry, mapped), (want, [want]), "default: /dev/shm")
    with open(module, "rb") as f, open(want, "rb") as g:
        t.check(f.read() == g.read(), "the copy holds the module's bytes")
    for path, mode in ((want, 0o500), (os.path.dirname(want), 0o700), (os.path.dirname(os.path.dirname(want)), 0o700)):
        st = os.lstat(path)
        t.equal((oct(st.st_mode & 0o777), st.st_uid), (oct(mode), os.geteuid()), f"{path}: mode, owner")
    t.contains(t.run([RUN, "--print-env"], check_rc=0).stdout, f"LD_AUDIT='{a.MODULE_ENTRY}'",
               "--print-env names the installed module")
    t.equal(audit_of({}, [RUN]), (a.MODULE_ENTRY, [module]), "without --node-copy")
    d = t.workdir("scale_node_copy")
    shutil.rmtree(d)
    os.makedirs(d)
    named = os.path.join(d, "named")
    os.makedirs(named)
    t.equal(audit_of({"LAZYNCCL_NODE_DIR": named})[1], [a.node_copy(base=named)], "LAZYNCCL_NODE_DIR")
    # Hostile or broken places: the installed module, and nothing written.
    own = f"lazynccl-{os.geteuid()}"
    open_dir, link, other, planted = (os.path.join(d, n) for n in ("open", "link", "other", "planted"))
    os.makedirs(os.path.join(open_dir, own))
    os.chmod(os.path.join(open_dir, own), 0o777)
    os.makedirs(os.path.join(link, "elsewhere"), mode=0o700)
    os.symlink("elsewhere", os.path.join(link, own))
    os.makedirs(os.path.join(other, own), mode=0o700)
    if os.geteuid() == 0:
        os.chown(os.path.join(other, own), 65534, 65534)
    os.makedirs(os.path.dirname(a.node_copy(base=planted)), mode=0o700)
    with open(a.node_copy(base=planted), "wb") as f:
        f.write(b"\x7fELF not the module")
    for base, what in ((open_dir, "a directory open to others"), (link, "a link"),
                       (other, "another user's directory" if os.geteuid() == 0 else "(as root only)"),
                       (planted, "a copy of another size")):
        t.equal(audit_of({"LAZYNCCL_NODE_DIR": base}), (a.MODULE_ENTRY, [module]), what)
        t.equal(t.run([RUN, "true"], env={"LAZYNCCL_NODE_DIR": base}, check_rc=0).stderr,
                f"lazynccl-run: LAZYNCCL_NODE_DIR={base}: no directory of this user's alone could hold the copy "
                "there (one of another user's, open to others, or a link; or the copy could not be written): "
                "the installed module is named instead\n", f"{what}: said")
    for base, words in (("relative/dir", "not an absolute path"),
                        (os.path.join(d, "none"), "No such file or directory")):
        r = t.run([RUN, "true"], env={"LAZYNCCL_NODE_DIR": base}, check_rc=0)
        t.equal(r.stderr, f"lazynccl-run: LAZYNCCL_NODE_DIR={base}: {words}: the installed module is named "
                          "instead\n", f"{base}: said")
    t.equal(os.listdir(os.path.join(link, "elsewhere")), [], "nothing written through the link")
    if os.geteuid() == 0:
        theirs = os.path.join(d, "theirs")
        os.makedirs(os.path.join(theirs, "run"))
        os.chown(os.path.join(theirs, "run"), 65534, 65534)
        t.equal(audit_of({"XDG_RUNTIME_DIR": os.path.join(theirs, "run")}), (want, [want]),
                "an XDG_RUNTIME_DIR of another user's: /dev/shm's copy")
        t.contains(t.run([RUN, "true"], env={"LAZYNCCL_NODE_DIR": os.path.join(theirs, "run")}).stderr,
                   "another user could change it", "a named directory of another user's: said")
    # Eight at once into a fresh directory: one whole file, no leftovers.
    race = os.path.join(d, "race")
    os.makedirs(race)
    env = dict(os.environ, LAZYNCCL_NODE_DIR=race)
    env.pop("XDG_RUNTIME_DIR", None)
    procs = [subprocess.Popen([RUN, "--node-copy", "sh", "-c", 'printf "%s" "$LD_AUDIT"'], env=env,
                              stdout=subprocess.PIPE,
                              text=True) for _ in range(8)]
    outs = {p.communicate()[0] for p in procs}
    t.equal(outs, {a.node_copy(base=race)}, "eight at once: one path")
    t.equal(os.listdir(os.path.dirname(a.node_copy(base=race))), [os.path.basename(module)], "no leftovers")
    with open(module, "rb") as f, open(a.node_copy(base=race), "rb") as g:
        t.check(f.read() == g.read(), "eight at once: the whole module")


@case
def scale_node_copy_in_a_task():
    """In a task that srun or mpirun started (their marks: SLURM_STEP_ID,
    OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, FLUX_TASK_RANK), the launcher
    names the module's node copy without being asked; --no-node-copy names
    the installed one. A remote launcher below it (a program named srun,
    sbatch, mpirun.openmpi, mpiexec.hydra: common/lz_nodecopy.h) finds
    LD_AUDIT naming the installed module, lazynccl's entry swapped and a
    user's own module kept; one of another name (srunx, torchrun) keeps the
    copy, as does a program named mpirun. with nothing after the dot.
    Under a job script's --print-env variables, a task's launcher swaps
    the installed module's entry for the node copy; below a task's
    launcher, --print-env and --no-node-copy name the installed module; a
    LAZYNCCL_AUDIT_INSTALLED that is not an absolute path to a file named
    as the module, or that holds a ':', is not handed on. The real srun,
    nested in a task: launcher_slurm_single_node."""
    a.sanitizer_skip()
    want, module = a.node_copy(), a.MODULE_HERE
    for mark in ("SLURM_STEP_ID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "FLUX_TASK_RANK"):
        t.equal(audit_of({mark: "0"}, [RUN]), (want, [want]), f"{mark} set")
    t.equal(audit_of({"SLURM_STEP_ID": "0"}, [RUN, "--no-node-copy"]), (a.MODULE_ENTRY, [module]),
            "--no-node-copy in a task")
    t.equal(audit_of({"SLURM_JOB_ID": "1", "SLURM_PROCID": "0"}, [RUN]), (a.MODULE_ENTRY, [module]),
            "a batch script (no step): the installed module")
    # Under a job script's --print-env (the installed module already in
    # LD_AUDIT), a task's launcher swaps that entry for the node copy.
    given = dict(line.split("=", 1) for line in
                 t.run([RUN, "--print-env"], check_rc=0).stdout.replace("export ", "").replace("'", "").split("\n")
                 if "=" in line)
    t.equal(audit_of(dict(given, SLURM_STEP_ID="0"), [RUN]), (want, [want]), "a task under --print-env's variables")
    t.equal(audit_of(given, [RUN]), (a.MODULE_ENTRY, [module]), "--print-env's variables, no task")
    d = t.workdir("scale_node_copy_in_a_task")
    user = t.compile_c(f"{d}/user-audit.so", [os.path.join(a.HERE, "user_audit.c")], [], shared=True)
    printenv = shutil.which("printenv")
    for name, remote in (("srun", 1), ("sbatch", 1), ("mpirun.openmpi", 1), ("mpiexec.hydra", 1), ("qrsh", 1),
                         ("mpiexec_mpt", 1), ("srunx", 0), ("torchrun", 0), ("mpirun.", 0)):
        prog = os.path.join(d, name)
        shutil.copy(printenv, prog)
        r = t.run([RUN, prog, "LD_AUDIT"], env=dict(given, SLURM_STEP_ID="0", LD_AUDIT=f"{user}:{module}"),
                  check_rc=0)
        t.equal(r.stdout.strip(), f"{user}:{module if remote else want}", f"{name}, under --print-env's variables")
        for others, what in (("", "alone"), (":" + user, "with a user's module")):
            env = {"SLURM_STEP_ID": "0", "LD_AUDIT": others[1:]} if others else {"SLURM_STEP_ID": "0"}
            r = t.run([RUN, prog, "LD_AUDIT"], env=env, check_rc=0)
            first = module if remote else want
            t.equal(r.stdout.strip(), first + others, f"{name}, {what}")
            t.equal(r.stderr, "", f"{name}, {what}: nothing said")
    # What the copy's parent hands on where the copy may not go: printed
    # variables, a --no-node-copy below it; a crafted installed module is
    # not taken.
    inner = f"{RUN} --print-env | head -1; {RUN} --no-node-copy printenv LD_AUDIT; {RUN} printenv LD_AUDIT"
    out = t.run([RUN, "sh", "-c", inner], env={"SLURM_STEP_ID": "0"}, check_rc=0).stdout.splitlines()
    t.equal(out, [f"export LD_AUDIT='{a.MODULE_ENTRY}'", module, want], "below a task's launcher: "
            "--print-env and --no-node-copy name the installed module, a launcher given neither the copy")
    for crafted in ("/etc/passwd", f"/x/liblazynccl-audit.so:{module}", "relative/liblazynccl-audit.so"):
        r = t.run([RUN, "sh", "-c", f'LAZYNCCL_AUDIT_INSTALLED="{crafted}" exec {d}/srun LD_AUDIT'],
                  env={"SLURM_STEP_ID": "0"}, check_rc=0)
        t.equal(r.stdout.strip(), want, f"LAZYNCCL_AUDIT_INSTALLED={crafted}: not taken")


@case
def scale_node_copy_noexec():
    """A directory on a filesystem mounted noexec (where ld.so could not map
    the module) is passed over: the installed module is named."""
    a.sanitizer_skip()
    with t.noexec_tmpfs(os.path.join(t.workdir("scale_node_copy_noexec"), "mnt")) as mnt:
        t.equal(audit_of({"LAZYNCCL_NODE_DIR": mnt}), (a.MODULE_ENTRY, [a.MODULE_HERE]), "noexec")
        t.contains(t.run([RUN, "true"], env={"LAZYNCCL_NODE_DIR": mnt}, check_rc=0).stderr,
                   f"LAZYNCCL_NODE_DIR={mnt}: mounted noexec", "said")
        t.equal(os.listdir(mnt), [], "nothing written there")


def manylibs_fixture(name):
    d = t.workdir(name)
    exe, llp, libs = manylibs.build(os.path.join(d, "fixture"), nlibs=12, ndirs=6, cc=t.CC[0])
    return d, exe, llp, libs




def maps(exe, env):
    """The files exe maps (the program prints its own /proc/self/maps)."""
    r = t.run(list(exe) + ["maps"], env=env)
    t.equal(r.returncode, 0, f"{' '.join(exe)} runs: {r.stderr}")
    return r.stdout.splitlines()[1:]


def cache_rows(name):
    """The fixture (in a directory of the case's own: cases run at once),
    the cache file, and a function giving (plain's maps, cached run's maps)
    under an LD_LIBRARY_PATH."""
    d, exe, llp, libs = manylibs_fixture(name)
    cache = os.path.join(d, "job.cache")
    if os.path.exists(cache):
        os.unlink(cache)

    def both(path):
        env = {"LD_LIBRARY_PATH": path}
        return maps([exe], env), maps([RUN, "--cache", cache, exe], env)
    return d, exe, llp, libs, cache, both


@case
def scale_cache_maps_what_plain_maps():
    """With --cache, the first process records what ld.so found and maps
    what plain maps; the next maps the same again, its failed lookups of
    libraries at most a tenth of plain's; lazynccl-info --cache calls every
    entry ok (exit 0)."""
    a.sanitizer_skip()
    d, exe, llp, libs, cache, both = cache_rows("scale_cache_maps_what_plain_maps")
    plain, first = both(llp)
    t.equal(first, plain, "the recording process maps what plain maps")
    t.check(os.path.exists(cache), "the cache was written")
    _, again = both(llp)
    t.equal(again, plain, "a process served by the cache maps what plain maps")
    env = {"LD_LIBRARY_PATH": llp}
    p = file_calls([exe], env)
    c = file_calls([RUN, "--cache", cache, exe], env)
    t.check(c[2] <= p[2] / 10, f"failed library lookups: cached {c[2]}, plain {p[2]}")
    r = t.run([INFO, "--cache", cache])
    t.equal(r.returncode, 0, f"lazynccl-info --cache: {r.stdout}{r.stderr}")
    for lib in libs:
        t.contains(r.stdout, f"{os.path.basename(lib)} -> {lib} (LD_LIBRARY_PATH): ok", "each entry checked")


@case
def scale_cache_one_node_on_every_core():
    """The node's id in the cache's key is the same on every core of a
    node (the CPU's APIC id, another per core, left out): recorded by a
    process on the first core, a process on the last is served by the
    cache (its failed library lookups at most a tenth of plain's) and adds
    nothing to the file."""
    a.sanitizer_skip()
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        raise t.Skip("one core")
    d, exe, llp, libs, cache, both = cache_rows("scale_cache_one_node_on_every_core")
    env = {"LD_LIBRARY_PATH": llp}
    try:
        # This thread's affinity, which the processes it starts inherit.
        os.sched_setaffinity(0, {cores[0]})
        t.run([RUN, "--cache", cache, exe], env=env, check_rc=0)
        with open(cache) as f:
            recorded = f.read()
        os.sched_setaffinity(0, {cores[-1]})
        p = file_calls([exe], env)
        c = file_calls([RUN, "--cache", cache, exe], env)
    finally:
        os.sched_setaffinity(0, cores)
    t.check(recorded.count("\n") >= len(libs), f"recorded on core {cores[0]}")
    t.check(c[2] <= p[2] / 10, f"on core {cores[-1]}: failed library lookups: cached {c[2]}, plain {p[2]}")
    with open(cache) as f:
        t.equal(f.read(), recorded, "nothing learnt on another core")


@case
def scale_cache_contract_rows():
    """Each way the cache's contract can break, plain against cached:
    a recorded file removed (another copy later on the path): the same file
    as plain (the request falls back to ld.so's search); LD_LIBRARY_PATH
    changed between processes: the same as plain (another key); a new file
    earlier on the path: the recorded file where plain maps the new one
    (the documented difference), which lazynccl-info --cache names as stale
    (exit 1)."""
    a.sanitizer_skip()
    d, exe, llp, libs, cache, both = cache_rows("scale_cache_contract_rows")
    plain, first = both(llp)
    t.equal(first, plain, "recorded")
    dirs = llp.split(":")
    # A file removed: a copy of it in the last directory of the path.
    gone = libs[3]
    moved = os.path.join(dirs[-1], os.path.basename(gone))
    shutil.move(gone, moved)
    try:
        plain, cached = both(llp)
        t.check(moved in plain, f"plain finds the moved copy: {plain}")
        t.equal(cached, plain, "a recorded file removed: the cached run maps what plain maps")
        t.contains(t.run([INFO, "--cache", cache]).stdout,
                   f"{os.path.basename(gone)} -> {gone} (LD_LIBRARY_PATH): gone", "info names it gone")
    finally:
        shutil.move(moved, gone)
    # LD_LIBRARY_PATH changed: a directory of copies in front.
    front = os.path.join(d, "front")
    os.makedirs(front, exist_ok=True)
    for lib in libs[:4]:
        shutil.copy(lib, front)
    plain, cached = both(front + ":" + llp)
    t.check(os.path.join(front, os.path.basename(libs[0])) in plain, f"plain maps the front copy: {plain}")
    t.equal(cached, plain, "LD_LIBRARY_PATH changed: the cached run maps what plain maps")
    # A new file earlier on the same path: the documented difference.
    newer = os.path.join(dirs[0], os.path.basename(libs[2]))
    shutil.copy(libs[2], newer)
    try:
        plain, cached = both(llp)
        t.check(newer in plain and libs[2] not in plain, f"plain maps the new file: {plain}")
        t.check(libs[2] in cached and newer not in cached, f"cached maps the recorded file: {cached}")
        r = t.run([INFO, "--cache", cache])
        t.equal(r.returncode, 1, f"info --cache on a stale cache: {r.stdout}{r.stderr}")
        t.contains(r.stdout, f"{libs[2]} (LD_LIBRARY_PATH): stale: the dynamic linker would map {newer} now",
                   "info names the stale entry")
    finally:
        os.unlink(newer)


@case
def scale_cache_records_what_is_not_found():
    """A library ld.so finds nowhere (NCCL's optional plugins) is recorded
    as found nowhere: the next process's request fails with plain's very
    words and opens none of its candidates. Once a file of that name appears
    on the path (the contract broken), plain loads it where the cached
    process still fails: the documented difference, which lazynccl-info
    --cache names as stale (exit 1). A request whose only file is of the
    other class (a 32-bit library) is not recorded so: every process fails
    it with plain's "wrong ELF class"."""
    a.sanitizer_skip()
    d, exe, llp, libs, cache, both = cache_rows("scale_cache_records_what_is_not_found")
    name = "libzzmissing.so.1"
    prog = ("import ctypes\ntry:\n    ctypes.CDLL(%r); print('loaded')\n"
            "except OSError as e:\n    print(e)\n" % name)
    env = {"LD_LIBRARY_PATH": llp}
    plain = t.run([PYTHON, "-c", prog], env=env, check_rc=0).stdout
    t.equal(plain, f"{name}: cannot open shared object file: No such file or directory\n", "plain fails")
    first = t.run([RUN, "--cache", cache, PYTHON, "-c", prog], env=env, check_rc=0).stdout
    t.equal(first, plain, "the recording process fails as plain")
    t.contains(open(cache).read(), f"\t{name}\t-\t", "recorded as found nowhere")
    calls_log = os.path.join(d, "missing.trace")
    t.run(["strace", "-f", "-qq", "-e", "trace=%file", "-o", calls_log, RUN, "--cache", cache, PYTHON, "-c", prog],
          env=env, check_rc=0)
    tried = [l for l in open(calls_log) if name in l]
    t.equal(tried, [], "the cached process opens none of its candidates")
    again = t.run([RUN, "--cache", cache, PYTHON, "-c", prog], env=env, check_rc=0).stdout
    t.equal(again, plain, "the cached process fails with plain's words")
    t.contains(t.run([INFO, "--cache", cache], check_rc=0).stdout,
               f"{name} -> - (none): ok (none found: its candidates are not tried)", "info calls it ok")
    if shutil.which("as") and shutil.which("ld"):
        wrong = "libzzwrong.so.1"
        asm = os.path.join(d, "w32.s")
        with open(asm, "w") as f:
            f.write(".globl f\nf: ret\n")
        t.run(["as", "--32", asm, "-o", asm + ".o"], check_rc=0)
        t.run(["ld", "-m", "elf_i386", "-shared", "-soname", wrong, asm + ".o", "-o",
               os.path.join(llp.split(":")[1], wrong)], check_rc=0)
        other = prog.replace(name, wrong)
        want = t.run([PYTHON, "-c", other], env=env, check_rc=0).stdout
        t.equal(want, f"{wrong}: wrong ELF class: ELFCLASS32\n", "plain refuses the other class")
        for _ in range(2):
            t.equal(t.run([RUN, "--cache", cache, PYTHON, "-c", other], env=env, check_rc=0).stdout, want,
                    "another class: plain's words, recorded or not")
        t.check(f"\t{wrong}\t" not in open(cache).read(), "not recorded as found nowhere")
    made = os.path.join(llp.split(":")[0], name)
    shutil.copy(libs[0], made)
    try:
        t.equal(t.run([PYTHON, "-c", prog], env=env, check_rc=0).stdout, "loaded\n", "plain loads the new file")
        t.equal(t.run([RUN, "--cache", cache, PYTHON, "-c", prog], env=env, check_rc=0).stdout, plain,
                "the cached process still fails (the contract broken)")
        r = t.run([INFO, "--cache", cache])
        t.equal(r.returncode, 1, f"info --cache: {r.stdout}")
        t.contains(r.stdout, f"{name} -> - (none): stale: the dynamic linker would map {made} now", "named stale")
    finally:
        os.unlink(made)


KEY_PROBE = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* Each argument: setenv=NAME=VALUE, chdir=DIR, or a library to dlopen and
 * ask where it is from (foo_where, or foo_where2 through a chain). */
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "setenv=", 7)) {
            char *e = strdup(argv[i] + 7), *eq = strchr(e, '=');
            *eq = 0;
            setenv(e, eq + 1, 1);
            continue;
        }
        if (!strncmp(argv[i], "chdir=", 6)) {
            if (chdir(argv[i] + 6))
                return 3;
            continue;
        }
        void *h = dlopen(argv[i], RTLD_NOW);
        if (!h) {
            printf("error %s\n", dlerror());
            continue;
        }
        const char *(*f)(void) = (const char *(*)(void))dlsym(h, "foo_where2");
        if (!f)
            f = (const char *(*)(void))dlsym(h, "foo_where");
        printf("%s\n", f ? f() : "?");
    }
    return 0;
}
"""


@case
def scale_cache_keys_what_decides():
    """What decides ld.so's answer is in the key, or the request is left to
    ld.so unrecorded, each a row of plain against cached after a warm-up
    that saw another answer: LD_LIBRARY_PATH changed by the process itself
    (ld.so keeps the value it started with), an empty or relative entry in
    it (the current directory's), $ORIGIN in it, ld.so run as a command with
    --library-path, and a requester without a run path loaded by objects
    whose DT_RPATH differ (glibc's loader chain)."""
    a.sanitizer_skip()
    d = t.workdir("scale_cache_keys")
    lib = {}
    for x in "ABE":
        os.makedirs(os.path.join(d, x), exist_ok=True)
        src = os.path.join(d, x, "f.c")
        with open(src, "w") as f:
            f.write(f'const char *foo_where(void) {{ return "{x}"; }}\n')
        lib[x] = t.compile_c(os.path.join(d, x, "libfoo.so.1"), [src], ["-Wl,-soname,libfoo.so.1"], shared=True)
    os.unlink(lib["E"])
    src = os.path.join(d, "probe.c")
    with open(src, "w") as f:
        f.write(KEY_PROBE)
    probe = t.compile_c(os.path.join(d, "probe"), [src], ["-ldl"])
    with open(os.path.join(d, "mid.c"), "w") as f:
        f.write("const char *foo_where(void); const char *mid(void) { return foo_where(); }\n")
    with open(os.path.join(d, "top.c"), "w") as f:
        f.write("const char *mid(void); const char *foo_where2(void) { return mid(); }\n")
    tops = {}
    for m, x in (("M1", "A"), ("M2", "B")):
        md = os.path.join(d, m)
        os.makedirs(md, exist_ok=True)
        t.compile_c(os.path.join(md, "libmid.so"), [os.path.join(d, "mid.c")],
                    [f"-L{d}/A", "-l:libfoo.so.1", "-Wl,-soname,libmid.so"], shared=True)
        tops[m] = t.compile_c(os.path.join(md, "libtop.so"), [os.path.join(d, "top.c")],
                              [f"-L{md}", "-lmid", f"-Wl,--disable-new-dtags,-rpath,{d}/{x}:{md}"], shared=True)
    cache = os.path.join(d, "job.cache")
    ldso = "/lib64/ld-linux-x86-64.so.2"
    rows = {
        "LD_LIBRARY_PATH changed by the process": (
            ([probe, f"setenv=LD_LIBRARY_PATH={d}/B", "libfoo.so.1"], {"LD_LIBRARY_PATH": f"{d}/A"}, None),
            ([probe, "libfoo.so.1"], {"LD_LIBRARY_PATH": f"{d}/B"}, None)),
        "an empty entry in LD_LIBRARY_PATH": (
            ([probe, "libfoo.so.1"], {"LD_LIBRARY_PATH": f"{d}/E:"}, f"{d}/E"),
            ([probe, "libfoo.so.1"], {"LD_LIBRARY_PATH": f"{d}/E:"}, f"{d}/A")),
        "a relative entry, the process changing directory": (
            ([probe, "libfoo.so.1"], {"LD_LIBRARY_PATH": "."}, f"{d}/E"),
            ([probe, f"chdir={d}/B", "libfoo.so.1"], {"LD_LIBRARY_PATH": "."}, f"{d}/A")),
        "$ORIGIN in LD_LIBRARY_PATH": (
            ([probe, "libfoo.so.1"], {"LD_LIBRARY_PATH": f"$ORIGIN/A"}, None),
            ([probe, "libfoo.so.1"], {"LD_LIBRARY_PATH": f"$ORIGIN/B"}, None)),
        "a requester without a run path under loaders' DT_RPATH": (
            ([probe, tops["M1"]], {}, None), ([probe, tops["M2"]], {}, None)),
    }
    if os.path.exists(ldso):
        rows["ld.so run as a command with --library-path"] = (
            ([ldso, "--library-path", f"{d}/A", probe, "libfoo.so.1"], {}, None),
            ([ldso, "--library-path", f"{d}/B", probe, "libfoo.so.1"], {}, None))
    for what, (warm, run) in rows.items():
        if os.path.exists(cache):
            os.unlink(cache)
        cmd, env, cwd = warm
        t.run([RUN, "--cache", cache] + cmd, env=env, cwd=cwd, check_rc=0)
        cmd, env, cwd = run
        plain = t.run(cmd, env=env, cwd=cwd, check_rc=0).stdout
        cached = t.run([RUN, "--cache", cache] + cmd, env=env, cwd=cwd, check_rc=0).stdout
        t.equal(cached, plain, f"{what}: cached against plain")
        t.check(plain.strip() not in ("", "?") and not plain.startswith("error"), f"{what}: plain loads: {plain}")


@case
def scale_cache_refused():
    """A cache that is not the user's own, is writable by others or is not
    a cache: lazynccl-run refuses to start (exit 2, one line naming why),
    lazynccl-info --cache refuses it (exit 2), and the audit module, given
    it through the environment, ignores it: the process maps what plain
    maps and the file is left as it was."""
    a.sanitizer_skip()
    d, exe, llp, libs, cache, both = cache_rows("scale_cache_refused")
    env = {"LD_LIBRARY_PATH": llp}
    plain = maps([exe], env)
    printed = t.run([RUN, "--print-env"], check_rc=0).stdout
    wrapped_env = dict(env, **dict(re.findall(r"^export (\w+)='([^']*)'$", printed, re.M)))
    rows = {"not a cache": ("garbage\n", 0o644, None, "not a lazynccl cache"),
            "writable by others": ("lazynccl-cache 1\n", 0o666, None, "writable by others"),
            "another user's": ("lazynccl-cache 1\n", 0o644, 65534, "not the user's own")}
    for what, (text, mode, owner, why) in rows.items():
        with open(cache, "w") as f:
            f.write(text)
        os.chmod(cache, mode)
        if owner is not None:
            os.chown(cache, owner, owner)
        r = t.run([RUN, "--cache", cache, exe], env=env)
        t.equal(r.returncode, 2, f"{what}: the launcher refuses: {r.stdout}{r.stderr}")
        t.contains(r.stderr, why, f"{what}: the launcher says why")
        r = t.run([INFO, "--cache", cache])
        t.equal(r.returncode, 2, f"{what}: lazynccl-info refuses: {r.stdout}{r.stderr}")
        t.contains(r.stderr, f"cache {cache} refused", f"{what}: lazynccl-info says so")
        t.equal(maps([exe], dict(wrapped_env, LAZYNCCL_CACHE=cache)), plain,
                f"{what}: the module ignores it, the process as plain")
        t.equal(open(cache).read(), text, f"{what}: the file is left as it was")
        os.unlink(cache)


@case
def scale_cache_concurrent_writers():
    """Eight processes recording into one new cache at once: every one maps
    what plain maps, the file parses (lazynccl-info --cache exit 0) with one
    entry per library, and no temporary file is left. Under a lock another
    process holds and never lets go, a process starts as plain within
    moments and writes nothing; once it is free, the next one writes."""
    a.sanitizer_skip()
    d, exe, llp, libs, cache, both = cache_rows("scale_cache_concurrent_writers")
    env = dict(os.environ, LD_LIBRARY_PATH=llp)
    plain = maps([exe], {"LD_LIBRARY_PATH": llp})
    procs = [subprocess.Popen([RUN, "--cache", cache, exe, "maps"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        t.equal((p.returncode, out.splitlines()[1:]), (0, plain), f"a writer: {err}")
    r = t.run([INFO, "--cache", cache])
    t.equal(r.returncode, 0, f"the cache parses: {r.stdout}{r.stderr}")
    for lib in libs:
        t.equal(r.stdout.count(f"{os.path.basename(lib)} -> "), 1, f"one entry for {lib}")
    t.equal([f for f in os.listdir(os.path.dirname(cache)) if ".tmp." in f], [], "no temporary file left")
    # A writer that holds the lock and never lets go (stopped by a
    # debugger): the others start as plain, promptly, and write nothing.
    import fcntl
    os.unlink(cache)
    with open(cache + ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        r = t.run(["timeout", "20", RUN, "--cache", cache, exe, "maps"], env={"LD_LIBRARY_PATH": llp})
        t.equal((r.returncode, r.stdout.splitlines()[1:]), (0, plain), f"under a held lock: {r.stderr}")
        t.check(time.monotonic() - started < 5, "not waited on for good")
        t.check(not os.path.exists(cache), "nothing written under another's lock")
    t.run([RUN, "--cache", cache, exe, "maps"], env={"LD_LIBRARY_PATH": llp}, check_rc=0)
    t.check(os.path.exists(cache), "written once the lock is free")


def rank_job(fake):
    """A rank that loads NCCL by name through its drop-in and calls it; rank
    2 given another NCCL (LAZYNCCL_LIBPATH) where fake names one."""
    odd = 'if [ "${SLURM_PROCID:-$OMPI_COMM_WORLD_RANK}" = 2 ]; then export LAZYNCCL_LIBPATH="$0"; fi; '
    return ["/bin/sh", "-c", (odd if fake else "") +
            f'exec {PYTHON} -c "import ctypes; v = ctypes.c_int(); '
            'ctypes.CDLL(\'libnccl.so.2\').ncclGetVersion(ctypes.byref(v)); assert v.value > 0"', fake or "-"]


def check_reports(reports, fake, real, n, what):
    r = t.run([INFO, "--reports", reports])
    t.equal(r.returncode, 1, f"{what}: lazynccl-info --reports finds the outlier: {r.stdout}{r.stderr}")
    t.contains(r.stdout, f"libnccl.so.2: NOT the same file in every process: {n - 1} of {n} loaded",
               f"{what}: the verdict")
    t.check(re.search(rf"rank 2 pid \d+: {re.escape(fake)} \(device", r.stdout),
            f"{what}: rank 2 named with its file: {r.stdout}")
    t.check(real in r.stdout or os.path.realpath(real) in r.stdout or "libnccl.so.2" in r.stdout,
            f"{what}: the others' file named")


@case
def scale_reports_under_slurm_and_mpirun():
    """lazynccl-run --report DIR around `srun -n 4` (a real single-node
    Slurm) and around `mpirun -np 4`, rank 2 given another NCCL on purpose:
    lazynccl-info --reports DIR says NCCL was not the same file on every
    rank and names rank 2 and its file (exit 1); the same job with no rank
    given another says every library was one file (exit 0). Then the batch
    recipe examples/jobs/cached.sbatch, submitted with sbatch: the warm-up
    records, sbcast copies the cache to the node, the ranks run, and its
    closing check finds every rank alike."""
    a.sanitizer_skip()
    import slurm
    d = t.workdir("scale_reports")
    fake = t.fake_nccl(os.path.join(d, "other"))
    real = t.real_library("libnccl.so.2")
    mpi_env = dict(launcher.MPI_ENV)
    jobs = {}
    if shutil.which("mpirun"):
        jobs["mpirun -np 4"] = (["mpirun", "--oversubscribe", "-np", "4"], mpi_env)
    else:
        raise t.Skip("mpirun is not installed (Debian's openmpi-bin)")
    with slurm.cluster(os.path.join(d, "slurm")) as senv:
        jobs["srun -n 4"] = (["srun", "-n", "4", "--overcommit", "--chdir", d], dict(senv))
        for what, (launch, env) in jobs.items():
            for odd in (True, False):
                reports = os.path.join(d, f"reports-{what.split()[0]}-{odd}")
                shutil.rmtree(reports, ignore_errors=True)
                job = rank_job(fake if odd else None)
                r = t.run(["timeout", "120", RUN, "--report", reports] + launch + job, env=env)
                t.equal(r.returncode, 0, f"{what}: the job runs: {r.stdout}{r.stderr}")
                if odd:
                    check_reports(reports, fake, real, 4, what)
                else:
                    r = t.run([INFO, "--reports", reports])
                    t.equal(r.returncode, 0, f"{what}, every rank alike: {r.stdout}{r.stderr}")
                    t.contains(r.stdout, "each the same file in every process", f"{what}: the verdict")
        # The batch recipe of docs/concepts/the-same-job.md, as a user submits it.
        script = os.path.join(t.SOURCE, "examples", "jobs", "cached.sbatch")
        job_dir = os.path.join(d, "job")
        shutil.rmtree(job_dir, ignore_errors=True)
        env = dict(senv, PATH=t.BUILD + ":" + os.environ["PATH"], LAZYNCCL_JOB_DIR=job_dir)
        log = os.path.join(d, "sbatch.log")
        job = t.run(["sbatch", "--parsable", "-n", "2", "--overcommit", "-o", log, "--chdir", d, script]
                    + rank_job(None), env=env, check_rc=0).stdout.strip().split(";")[0]
        for _ in range(240):
            if not t.run(["squeue", "-h", "-j", job], env=env).stdout.strip():
                break
            time.sleep(0.5)
        out = open(log).read() if os.path.exists(log) else ""
        t.contains(out, "each the same file in every process that loaded it", f"the batch recipe's check: {out}")
        cached = open(os.path.join(job_dir, "cache")).read()
        t.contains(cached, "\tlibnccl.so.2\t", "the warm-up recorded NCCL")
        t.check(os.path.exists(f"/tmp/lazynccl-{job}.cache"), "sbcast copied the cache to the node")
        os.unlink(f"/tmp/lazynccl-{job}.cache")


if __name__ == "__main__":
    raise SystemExit(t.main())
