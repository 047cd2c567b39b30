#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lazynccl-run as a whole job takes it: the native program's exec count
(build tree, install, wheel), nesting, --print-env through eval in real
shells, ranks that need static TLS (jemalloc linked or preloaded, TSan)
however they are launched (bash -c, the eval form, Open MPI, a real
single-node Slurm), and gdb over the launcher. Each rank is the torch-like
consumer of test_audit: counted in /proc/self/maps, nothing real before the
first call, one copy after, the file asked for."""
import glob
import os
import shutil
import sys

import lztest as t
from lztest import case

_theirs = set(t.CASES)
import test_audit as a  # noqa: E402 (its helpers; its cases stay its own, below)
for _name in set(t.CASES) - _theirs:
    del t.CASES[_name]

RUN = a.RUN
MODULE = a.MODULE_ENTRY
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_plm_rsh_agent": "false"}


def execs(cmd, env=None):
    """The execve calls of cmd and everything it starts (strace -f)."""
    if not shutil.which("strace"):
        raise t.Skip("strace is not installed")
    d = t.workdir("launcher_strace")
    log = os.path.join(d, f"trace.{len(os.listdir(d))}")
    t.run(["strace", "-f", "-qq", "-e", "trace=execve,execveat", "-o", log] + cmd, env=env, check_rc=0)
    return [line for line in open(log) if "execve" in line and "resumed" not in line]


def install_tree():
    """meson install into a staging directory, once per build."""
    d = os.path.join(t.BUILD, "tests-work", "launcher_install")
    found = glob.glob(f"{d}/**/bin/lazynccl-run", recursive=True)
    if not found:
        shutil.rmtree(d, ignore_errors=True)
        t.run(["meson", "install", "-C", t.BUILD, "--no-rebuild", "--quiet", "--destdir", d], check_rc=0)
        found = glob.glob(f"{d}/**/bin/lazynccl-run", recursive=True)
    t.check(found, f"no bin/lazynccl-run under {d}")
    return found[0]


@case
def launcher_two_execs():
    """lazynccl-run /bin/true is two execs, itself and the command, in the
    build tree, an install and the wheel; and it is one static program
    (nothing of a wrapped parent's LD_AUDIT is loaded into it)."""
    a.sanitizer_skip()
    runs = {"build tree": RUN, "install": install_tree()}
    import test_python
    d, venv = test_python.venv_with_wheel("launcher_wheel")
    runs["wheel"] = f"{venv}/bin/lazynccl-run"
    for where, launcher in runs.items():
        printed = t.run([launcher, "--print-env"], check_rc=0).stdout
        t.contains(printed, "LAZYNCCL_AUDIT_DROPINS=", f"{where}: finds its drop-ins")
        calls = execs([launcher, "/bin/true"])
        t.equal(len(calls), 2, f"{where}: {calls}")
        t.contains(calls[1], '"/bin/true"', f"{where}: the second is the command")
        out = t.run(["readelf", "-lW", launcher], check_rc=0).stdout
        t.check("INTERP" not in out, f"{where}: a static program has no interpreter")


@case
def launcher_nested_twenty_levels():
    """Twenty launchers deep the command starts with the environment one
    gives: LD_AUDIT holds the module once (and the module is mapped once),
    VALGRIND_OPTS and GLIBC_TUNABLES are not appended to, a user's own
    audit module is kept."""
    a.sanitizer_skip()
    show = ('printf "%s|%s|%s|" "$LD_AUDIT" "$VALGRIND_OPTS" "${GLIBC_TUNABLES-unset}"; '
            'grep -c liblazynccl-audit /proc/self/maps')
    user = a.empty_module(t.workdir("launcher_nested"))
    env = {"LD_AUDIT": user, "VALGRIND_OPTS": "--leak-check=full"}
    one = t.run([RUN, "sh", "-c", show], env=env, check_rc=0).stdout
    deep = t.run([RUN] * 20 + ["sh", "-c", show], env=env, check_rc=0).stdout
    t.equal(deep, one, "20 levels as one")
    audit, valgrind, tunables, maps = one.strip().split("|")
    t.equal(audit, f"{MODULE}:{user}", "LD_AUDIT")
    t.equal(valgrind, "--run-libc-freeres=no --leak-check=full", "VALGRIND_OPTS")
    t.equal(tunables, "unset", "GLIBC_TUNABLES")
    t.check(int(maps) > 0, f"the module is mapped: {one}")
    printed = t.run([RUN, "sh", "-c", f"{RUN} --print-env"], env=env, check_rc=0).stdout
    t.equal(printed, t.run([RUN, "--print-env"], env=env, check_rc=0).stdout, "--print-env under itself")
    # Under a parent that named the module's node copy, a launcher keeps
    # that entry (one module in LD_AUDIT).
    copied = t.run([RUN, "--node-copy"] + [RUN] * 3 + ["sh", "-c", show], env=env, check_rc=0).stdout
    t.equal(copied.split("|")[0], f"{a.node_copy()}:{user}", "plain launchers under a --node-copy one")
    # A parent with --quiet-32bit names the module through $LIB (where it
    # can): a launcher without the option under it adds nothing.
    quiet = t.run([RUN, "--quiet-32bit", "sh", "-c", show], env=env, check_rc=0).stdout
    mixed = t.run([RUN, "--quiet-32bit"] + [RUN] * 3 + ["sh", "-c", show], env=env, check_rc=0).stdout
    t.equal(mixed, quiet, "plain launchers under a --quiet-32bit one")
    t.equal(quiet.split("|")[0], f"{a.audit_entry_quiet()}:{user}", "LD_AUDIT under --quiet-32bit")


HOSTILE = "a'b\"c $(touch {d}/pwned) `touch {d}/pwned2` \\n\\\\ ${{HOME}}\nline2\t'' end"


def round_trip(shell):
    """--print-env=SHELL, eval'd by that shell, sets exactly what the
    launcher sets, for values holding quotes, $, backticks, backslashes and
    newlines (an inherited VALGRIND_OPTS; LD_PRELOAD with --preload); nothing
    in them runs."""
    a.sanitizer_skip()
    path = shutil.which(shell)
    if not path:
        raise t.Skip(f"{shell} is not installed")
    d = t.workdir(f"launcher_eval_{shell}")
    hostile = HOSTILE.format(d=d)
    for mode, var in (([], "VALGRIND_OPTS"), (["--preload"], "LD_PRELOAD")):
        env = {var: hostile}
        want = t.run([RUN] + mode + [sys.executable, "-c", f"import os; print(repr(os.environ['{var}']))"],
                     env=env, check_rc=0).stdout.strip().splitlines()[-1]
        script = (f'eval "$({RUN} {" ".join(mode)} --print-env={shell})" && '
                  f'printf "%s" "${var}" > {d}/got')
        r = t.run([path, "-c", script], env=env)
        t.equal(r.returncode, 0, f"{shell} {mode}: {r.stderr}")
        got = open(f"{d}/got", encoding="utf-8", errors="replace").read()
        t.equal(repr(got), want, f"{shell} {mode}: {var} round-trips")
        t.check(not os.path.exists(f"{d}/pwned") and not os.path.exists(f"{d}/pwned2"), "nothing ran")
    without = t.run([RUN, f"--print-env={shell}"], check_rc=0).stdout
    t.equal(t.run([RUN, f"--print-env={shell}", "/bin/true", "x"], check_rc=0).stdout, without,
            "the same with or without a command")


t.case_per(("sh", "bash", "zsh"), round_trip, "launcher_print_env_round_trips_{}",
           "--print-env={0} round-trips hostile values through eval in {0}.")


def rank_programs(d):
    """The torch-like consumer three ways: plain (jemalloc preloaded by the
    job), linked to jemalloc, built with ThreadSanitizer."""
    je = a.jemalloc()
    src = [os.path.join(a.HERE, "bypath_consumer.c")]
    plain = a.consumer(d)
    linked = t.compile_c(os.path.join(d, "consumer_je"), src, ["-O1", "-ldl", "-lpthread",
                                                                f"-L{os.path.dirname(je)}", "-l:libjemalloc.so.2"])
    tsan = t.compile_c(os.path.join(d, "consumer_tsan"), src, ["-O1", "-ldl", "-lpthread", "-fsanitize=thread"])
    return {"jemalloc_preloaded": (plain, {"LD_PRELOAD": je}), "jemalloc_linked": (linked, {}),
            "tsan": (tsan, {})}


def rank_cmd(d, exe):
    real = t.real_library("libnccl.so.2")
    so = a.needer(d, "nccl")
    out = f'{d}/out.${{SLURM_PROCID:-${{OMPI_COMM_WORLD_RANK:-0}}}}'
    return ["sh", "-c", f'exec "$0" "$@" > {out} 2>&1', exe, real, so, "nccl_version"]


def check_ranks(d, n, what):
    real = t.real_library("libnccl.so.2")
    for rank in range(n):
        path = f"{d}/out.{rank}"
        t.check(os.path.exists(path), f"{what}: rank {rank} wrote nothing")
        out = open(path).read()
        os.unlink(path)
        t.equal(a.real_after(out, "preload"), [], f"{what}, rank {rank}: lazy\n{out}")
        after = a.real_after(out, "call")
        t.equal(len(after), 1, f"{what}, rank {rank}: one copy\n{out}")
        t.check(a.same_file(after[0], real), f"{what}, rank {rank}: the file asked for\n{out}")
        t.check(int(a.lines(out, "answer")[0][0]) > 0, f"{what}, rank {rank}: {out}")


def launch_ways(d, exe):
    cmd = rank_cmd(d, exe)
    quoted = " ".join(f"'{c}'" for c in cmd)
    ways = {
        "lazynccl-run bash -c": ([RUN, "bash", "-c", quoted], 1),
        "eval form": (["bash", "-c", f'eval "$({RUN} --print-env)" && {quoted}'], 1),
    }
    if shutil.which("mpirun"):
        mpirun = ["mpirun", "--oversubscribe", "-np", "2"]
        ways["lazynccl-run mpirun -n 2"] = ([RUN] + mpirun + cmd, 2)
        ways["mpirun -n 2 lazynccl-run"] = (mpirun + [RUN] + cmd, 2)
    return ways


def static_tls_ranks(kind):
    a.sanitizer_skip()
    if not shutil.which("mpirun"):
        raise t.Skip("mpirun is not installed (Debian's openmpi-bin): the MPI launches are part of the case")
    d = t.workdir(f"launcher_tls_{kind}")
    exe, env = rank_programs(d)[kind]
    for way, (cmd, n) in launch_ways(d, exe).items():
        r = t.run(["timeout", "120"] + cmd, env=dict(MPI_ENV, LZ_NOT_REAL=a.DROPINS, **env))
        t.equal(r.returncode, 0, f"{kind}, {way}: {r.stdout}{r.stderr}")
        check_ranks(d, n, f"{kind}, {way}")


t.case_per(("jemalloc_preloaded", "jemalloc_linked", "tsan"), static_tls_ranks,
           "launcher_static_tls_{}", "A rank with {0} starts and is lazy under lazynccl-run bash -c, the "
           "eval form, lazynccl-run mpirun and mpirun lazynccl-run.")


@case
def launcher_never_restarts_a_running_process():
    """A library with a large initial-exec TLS block loaded by dlopen after
    main: the process is not restarted (it has run): "start" is printed
    once, and dlopen answers as it does without lazynccl-run."""
    a.sanitizer_skip()
    d = t.workdir("launcher_late_tls")
    lib_src = os.path.join(d, "bigtls.c")
    with open(lib_src, "w") as f:
        f.write('__thread char big[4096] __attribute__((tls_model("initial-exec")));\n'
                'char *big_at(void) { return big; }\n')
    lib = t.compile_c(os.path.join(d, "libbigtls.so"), [lib_src], ["-O1"], shared=True)
    prog_src = os.path.join(d, "late.c")
    with open(prog_src, "w") as f:
        f.write('#include <dlfcn.h>\n#include <stdio.h>\n'
                'int main(int c, char **v) { (void)c; printf("start\\n"); fflush(stdout);\n'
                '  printf("dlopen %s\\n", dlopen(v[1], RTLD_NOW) ? "ok" : "failed"); return 0; }\n')
    prog = t.compile_c(os.path.join(d, "late"), [prog_src], ["-ldl"])
    plain = t.run([prog, lib], check_rc=0).stdout
    wrapped = t.run([RUN, prog, lib], env={"LAZYNCCL_DEBUG": "1"}, check_rc=0)
    t.equal(wrapped.stdout.count("start\n"), 1, wrapped.stdout)
    t.equal(wrapped.stdout.splitlines()[-1], plain.splitlines()[-1], "dlopen as without lazynccl-run")
    t.check("restarting" not in wrapped.stderr, wrapped.stderr)


@case
def launcher_32bit_program_quiet():
    """A 32-bit x86 program under lazynccl-run --quiet-32bit prints nothing
    of ours: its ld.so expands LD_AUDIT's $LIB to lib32 and finds the
    module that declines (src/audit/lib32), not the 64-bit one ("wrong ELF
    class"). Without the option the module is named directly (no token:
    no read of /proc/self/exe in every process): the program still runs,
    and ld.so's one line is all that is printed."""
    a.sanitizer_skip()
    exe = t.hello32("launcher_32bit")
    r = t.run([RUN, "--quiet-32bit", exe])
    t.equal((r.returncode, r.stdout, r.stderr), (0, "hello 32\n", ""), "under lazynccl-run --quiet-32bit")
    r = t.run([RUN, "--quiet-32bit", "sh", "-c", exe])
    t.equal((r.returncode, r.stdout, r.stderr), (0, "hello 32\n", ""), "started by a wrapped shell")
    env = t.run([RUN, "--quiet-32bit", "--print-env"], check_rc=0).stdout
    t.contains(env, "/$LIB/liblazynccl-audit.so", "--quiet-32bit names the module through $LIB")
    r = t.run([RUN, exe])
    t.equal((r.returncode, r.stdout), (0, "hello 32\n"), "the default: the program runs")
    lines = r.stderr.splitlines()
    t.equal(len(lines), 1, "the default: one line, ld.so's: " + r.stderr)
    t.contains(lines[0], "wrong ELF class", "ld.so's line")
    t.check("$LIB" not in t.run([RUN, "--print-env"], check_rc=0).stdout, "the default names no token")
    bare = t.run([exe], env={"LD_AUDIT": os.path.realpath(a.MODULE)})
    t.contains(bare.stderr, "wrong ELF class", "the 64-bit module named directly")


@case
def launcher_under_gdb():
    """gdb -batch -ex run --args lazynccl-run PROG runs the program with the
    shims in place: lazy until the call, one copy after."""
    a.sanitizer_skip()
    if not shutil.which("gdb"):
        raise t.Skip("gdb is not installed")
    d = t.workdir("launcher_gdb")
    cmd = rank_cmd(d, a.consumer(d))
    r = t.run(["timeout", "120", "gdb", "-nx", "-batch", "-ex", "run", "--args", RUN] + cmd,
              env={"LZ_NOT_REAL": a.DROPINS})
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    t.contains(r.stdout, "exited normally", "gdb ran it to the end")
    check_ranks(d, 1, "under gdb")


@case
def launcher_slurm_single_node():
    """A real single-node Slurm (Debian's slurm-wlm and munge): in each of 2
    tasks, `srun lazynccl-run prog`, `lazynccl-run srun prog`, sbatch with
    the eval in its script and srun with --export=NONE and the launcher in
    the task: lazy, then one copy, the file asked for; a task maps the
    module's node copy, and a srun nested in it the installed module; jemalloc and TSan
    ranks start through `lazynccl-run srun`; lazynccl-info --doctor inside a
    task says whether the wrapper reached it."""
    a.sanitizer_skip()
    import slurm
    d = t.workdir("launcher_slurm")
    progs = rank_programs(d)
    info = os.path.join(t.BUILD, "lazynccl-info")
    with slurm.cluster(os.path.join(d, "slurm")) as senv:
        env = dict(senv, LZ_NOT_REAL=a.DROPINS)
        srun = ["srun", "-n", "2", "--chdir", d]
        exe, _ = progs["jemalloc_preloaded"]
        cmd = rank_cmd(d, exe)
        ways = {"srun lazynccl-run": srun + [RUN] + cmd, "lazynccl-run srun": [RUN] + srun + cmd,
                "srun --export=NONE lazynccl-run": srun[:1] + ["--export=NONE"] + srun[1:] + [RUN, "env",
                                                                                    f"LZ_NOT_REAL={a.DROPINS}"] + cmd}
        for way, c in ways.items():
            r = t.run(["timeout", "120"] + c, env=env)
            t.equal(r.returncode, 0, f"{way}: {r.stdout}{r.stderr}")
            check_ranks(d, 2, way)
        # A task maps the module's node copy, the default there; a srun it
        # runs hands on the installed module, which every node has.
        show = "grep -o '[^ ]*liblazynccl-audit.so' /proc/self/maps | sort -u"
        r = t.run(["timeout", "60"] + srun[:1] + ["-n", "1", RUN, "sh", "-c",
                                                  f"{show}; srun --overlap -n 1 sh -c \"{show}\""], env=env)
        t.equal(r.stdout.split(), [a.node_copy(), a.MODULE_HERE],
                f"srun lazynccl-run, a srun nested in its task: {r.stderr}")
        for kind, (exe, extra) in progs.items():
            r = t.run(["timeout", "120", RUN] + srun + rank_cmd(d, exe), env=dict(env, **extra))
            t.equal(r.returncode, 0, f"{kind}: {r.stdout}{r.stderr}")
            check_ranks(d, 2, f"lazynccl-run srun, {kind}")
        script = os.path.join(d, "job.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n" + f'eval "$({RUN} --print-env)"\n' +
                    "srun " + " ".join(f"'{c}'" for c in rank_cmd(d, exe)) + "\n")
        job = t.run(["sbatch", "--parsable", "-n", "2", "-o", f"{d}/job.log", "--chdir", d, script],
                    env=env, check_rc=0).stdout.strip().split(";")[0]
        for _ in range(240):
            if not t.run(["squeue", "-h", "-j", job], env=env).stdout.strip():
                break
            import time
            time.sleep(0.5)
        check_ranks(d, 2, f"sbatch with the eval ({open(f'{d}/job.log').read()})")
        reached = t.run(["timeout", "60", RUN] + srun[:1] + ["-n", "1", info, "--doctor", "--verbose"], env=env).stdout
        t.contains(t.flat(reached), "through the audit module", "doctor in a task under the wrapper")
        dropped = t.run(["timeout", "60", RUN, "srun", "-n", "1", "--export=NONE", info, "--doctor", "--verbose"],
                        env=env).stdout
        t.contains(t.flat(dropped), "lazynccl-run's environment did not reach this process",
                   "doctor in a task under --export=NONE")


if __name__ == "__main__":
    raise SystemExit(t.main())
