#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Threads, forks, re-entrancy, failure caching and retry; generator errors."""
import os
import sys

import lztest as t
from lztest import case


def race_client(d):
    return t.compile_c(os.path.join(d, "race"), [os.path.join(t.PROGS, "race_client.c")],
                       t.link_shim_args("nccl", "nvrtc") + ["-lpthread"])


def ctor_log(path):
    return open(path).read().splitlines() if os.path.exists(path) else []


@case
def race_fake_64_threads():
    """64 threads released together call different functions first: all get
    the right answer, and the library is loaded exactly once."""
    d = t.workdir("race_fake")
    fake = t.fake_nccl(f"{d}/fake")
    log = f"{d}/ctor.log"
    out = t.run([race_client(d), "race", "64"],
                env={"LAZYNCCL_LIBPATH": fake, "LZ_CTOR_LOG": log, "WANT_VERSION": "99999"},
                check_rc=0).stdout
    t.equal(out.strip(), "ok calls=64 failures=0 copies=1", "race")
    t.equal(ctor_log(log), [fake], "constructor runs")


@case
def race_real_nccl():
    """The same with the real NCCL: every thread sees the real version, one copy mapped."""
    lib = t.real_library("libnccl.so.2")
    d = t.workdir("race_real_nccl")
    exe = race_client(d)
    want = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--json", "--load", "nccl"], check_rc=0).stdout
    import json
    version = json.loads(want)["libraries"][0]["loaded"]["version"].split("(")[1].rstrip(")")
    out = t.run([exe, "race", "64"], env={"WANT_VERSION": version}, check_rc=0).stdout
    t.equal(out.strip(), "ok calls=64 failures=0 copies=1", f"race against {lib}")


@case
def race_real_nvrtc():
    """64 threads make their first NVRTC calls together: all answers right."""
    t.real_library("libnvrtc.so.13")
    d = t.workdir("race_real_nvrtc")
    exe = race_client(d)
    import json
    doc = json.loads(t.run([os.path.join(t.BUILD, "lazynccl-info"), "--json", "--load", "nvrtc"],
                           check_rc=0).stdout)
    out = t.run([exe, "race-nvrtc", "64"], env={"WANT_VERSION": doc["libraries"][0]["loaded"]["version"]},
                check_rc=0).stdout
    t.equal(out.strip(), "ok calls=64 failures=0 copies=0", "race")


@case
def retry_race_never_unloads():
    """32 threads: first calls racing lazynccl_set_search_path and
    lazynccl_load (a missing file, then the library), in 100 processes: a
    search made stale by a retry keeps what it loaded, so the library's
    constructor runs exactly once in every process (a stale search that
    closed its handle unloaded the library for the next to load it again)."""
    d = t.workdir("retry_race")
    fake = t.fake_nccl(f"{d}/fake")
    exe = race_client(d)
    counts = {}
    for i in range(100):
        log = f"{d}/ctor.{i}"
        if os.path.exists(log):
            os.unlink(log)
        out = t.run([exe, "retry-race", "32", fake], env={"LZ_CTOR_LOG": log}, check_rc=0).stdout
        t.equal(out.strip(), "loaded=yes", f"process {i}")
        n = len(ctor_log(log))
        counts[n] = counts.get(n, 0) + 1
    t.equal(counts, {1: 100}, "constructor runs per process: {runs: processes}")


@case
def constructor_binds_nothing_lazily():
    """The shared shim's constructor (its fork handlers: a child must always
    know it is one) calls into the C library only through entries ld.so
    bound while relocating the shim: while ld.so runs the shim's init, the
    shim makes no lazy binding. In a program that binds nothing lazily
    before it exits, the constructor's getpid and pthread_atfork through
    the PLT were the process's first lazy bindings, 0.2-0.6 % of its
    start-up. Bindings after the shim's init (at the first call)
    are lazy as before."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer's module constructor binds its runtime lazily from the shim's init")
    d = t.workdir("constructor_binds_nothing_lazily")
    main_c = os.path.join(d, "main.c")
    with open(main_c, "w") as f:
        f.write("int main(void) { return 0; }\n")
    exe = t.compile_c(os.path.join(d, "empty_main"), [main_c],
                      ["-Wl,--no-as-needed"] + t.link_shim_args("nccl"))
    r = t.run([exe], env={"LD_DEBUG": "bindings,libs"}, check_rc=0)
    lines = r.stderr.splitlines()
    init = [i for i, l in enumerate(lines) if "calling init:" in l and "liblazynccl" in l]
    t.equal(len(init), 1, "ld.so runs the shim's init once")
    after = lines[init[0] + 1:]
    end = next((i for i, l in enumerate(after) if "calling init:" in l or "transferring control" in l),
               len(after))
    lazy = [l.split("normal symbol")[-1].strip() for l in after[:end]
            if "binding file" in l and "liblazynccl" in l.split("binding file", 1)[1].split(" to ")[0]]
    t.equal(lazy, [], "the shim's lazy bindings while its constructor runs")


@case
def loader_lock_found_while_the_locks_after_it_are_held():
    """The dynamic linker's lock is found in _rtld_global by its shape; with
    the two locks after it held (glibc 2.35 and later: the write lock and the
    TLS lock, held at once by a dl_iterate_phdr and a thread's TLS set-up), a
    window shifted into the locks matched too, the search answered none, and
    a first call that took the lock before gave nothing back after: every
    later dlopen of the process waited for a thread that had ended (first
    calls at once hung). tests/progs/ldlock_find.c runs the search on a copy
    of this process's _rtld_global, as it is and with those locks held."""
    d = t.workdir("ldlock_find")
    exe = t.compile_c(os.path.join(d, "ldlock_find"),
                      [os.path.join(t.PROGS, "ldlock_find.c"), f"-I{t.SOURCE}/src", f"-I{t.BUILD}",
                       "-fvisibility=hidden", "-ldl", "-lpthread"] + t.sanitizer_link_args())
    out = t.run([exe], check_rc=0).stdout.split()
    t.equal(out[:3] + out[4:5], ["as", "it", "is", "held"], f"the output: {out}")
    t.check(int(out[3].rstrip(",")) > 0, f"found as it is: {out}")
    t.equal(out[5], out[3].rstrip(","), "found at the same place with the locks after it held")


@case
def first_call_on_the_smallest_thread_stack():
    """A first call on a thread whose stack is PTHREAD_STACK_MIN, into the
    real NCCL and NVRTC (whose search also judges releases): the load, and a
    failed load with its report, each with the log on and off, answer what
    they answer on a large stack; no search frame holds a path-sized buffer,
    and the log writes without stdio's buffer on the stack. lazynccl_would_load
    (a search that loads nothing) on such a thread too."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer's frames are several times a plain build's; the default "
                     "build runs it")
    t.real_library("libnccl.so.2")
    t.real_library("libnvrtc.so.13")
    d = t.workdir("small_stack")
    exe = t.compile_c(os.path.join(d, "small_stack"), [os.path.join(t.PROGS, "small_stack.c")],
                      t.link_shim_args("nccl", "nvrtc") + ["-lpthread"])
    cases = (("nccl", "LAZYNCCL_LIBPATH", "ncclGetVersion: 0, version 2", "ncclGetVersion: 2, version 0\n"),
             ("nvrtc", "LAZYNVRTC_LIBPATH", "nvrtcVersion: 0, version 1", "nvrtcVersion: 11, version 0.0\n"))
    for lib, var, loaded, failed in cases:
        for log in ({}, {"LAZYNCCL_DEBUG": "1"}):
            r = t.run([exe, lib], env=log)
            t.equal((r.returncode, r.stdout[:len(loaded)]), (0, loaded), f"{lib} {log}: {r.stderr[-400:]}")
            r = t.run([exe, lib], env={**log, var: f"{d}/nowhere"})
            t.equal((r.returncode, r.stdout), (0, failed), f"{lib} absent {log}: {r.stderr[-400:]}")
            if log:
                t.contains(r.stderr, f"[{var}] {d}/nowhere: rejected: No such file or directory",
                           f"{lib} absent: the log")
    r = t.run([exe, "would"])
    t.equal((r.returncode, r.stdout[:25]), (0, "lazynccl_would_load: 1, /"),
            f"would_load: {r.stderr[-400:]}")
    r = t.run([exe, "would"], env={"LAZYNCCL_LIBPATH": f"{d}/nowhere"})
    t.equal((r.returncode, r.stdout), (0, "lazynccl_would_load: 0, (the report)\n"),
            f"would_load, NCCL absent: {r.stderr[-400:]}")


@case
def fork_before_first_call():
    """A child forked before the first call loads on its own; the parent stays unloaded."""
    d = t.workdir("fork_before")
    fake = t.fake_nccl(f"{d}/fake", version=4242)
    out = t.run([race_client(d), "fork-before"], env={"LAZYNCCL_LIBPATH": fake}, check_rc=0).stdout
    t.equal(out, "before child: rc=0 version=4242 loaded_in_child=yes\nparent loaded=no\n", "output")


@case
def fork_after_first_call():
    """A child forked after the first call uses the parent's resolution (no new load)."""
    d = t.workdir("fork_after")
    fake = t.fake_nccl(f"{d}/fake", version=4343)
    log = f"{d}/ctor.log"
    out = t.run([race_client(d), "fork-after"], env={"LAZYNCCL_LIBPATH": fake, "LZ_CTOR_LOG": log},
                check_rc=0).stdout
    t.equal(out, "after child: rc=0 version=4343 loaded_in_child=yes\n", "output")
    t.equal(ctor_log(log), [fake], "constructor ran once (in the parent)")


@case
def fork_during_first_load():
    """A fork while another thread is inside the first load's dlopen (a slow
    constructor) waits for that dlopen to return, then forks: the child, where
    the load was never published, finishes it on its own first call."""
    d = t.workdir("fork_during")
    fake = t.fake_nccl(f"{d}/fake", version=4444, extra=["-DFAKE_CTOR_SLEEP_MS=800"])
    # The child inherits the parent's thread as a finished, unjoined one:
    # TSan would count that against the test program.
    r = t.run(["timeout", "20", race_client(d), "fork-during"],
              env={"LAZYNCCL_LIBPATH": fake, "TSAN_OPTIONS": "report_thread_leaks=0"})
    t.equal(r.returncode, 0, f"exit status (124 = deadlock): {r.stdout} {r.stderr}")
    t.equal(r.stdout, "during child: rc=0 version=4444 loaded_in_child=yes\n", "output")


@case
def fork_without_handlers_from_a_callback():
    """The program's log callback, or its chooser, forks with _Fork (no
    fork handler runs) during a first call; parent and child both go on
    with it and load, through the shared shim and the static one: the
    child's calls into the dynamic linker take its lock as the child's
    thread, not the parent's (a lock taken under the parent's thread id
    leaves every dlopen of the child waiting)."""
    d = t.workdir("fork_callback")
    fake = t.fake_nccl(f"{d}/fake", version=4646)
    os.makedirs(f"{d}/bad")
    with open(f"{d}/bad/libnccl.so.2", "w") as f:
        f.write("not a library\n")  # refused: a log line before the dlopen
    src = os.path.join(t.PROGS, "fork_in_callback.c")
    progs = {"shared": t.compile_c(os.path.join(d, "shared"), [src], t.link_shim_args("nccl")),
             "static": t.compile_c(os.path.join(d, "static"), [src, t.shim("nccl", static=True)],
                                   t.link_shim_args() + ["-ldl", "-lpthread"])}
    env = {"LD_LIBRARY_PATH": f"{d}/bad:{os.path.dirname(fake)}"}
    for kind, exe in progs.items():
        for how in ("log", "chooser"):
            r = t.run(["timeout", "30", exe, how], env=env)
            t.equal((r.returncode, r.stdout),
                    (0, "child: rc=0 version=4646\nparent: rc=0 version=4646\nchild: exited\n"),
                    f"{kind} shim, _Fork from the {how}: {r.stderr[-600:]}")


@case
def fork_handler_first_call_from_a_search():
    """A fork made from inside NCCL's first call (its log callback forks),
    in a program whose child fork handler, registered before the shims'
    (tests/progs/fork_handler_first_call.c), makes NVRTC's first call in
    the child, both static shims in one program: the child loads NVRTC and
    exits, where it waited for the lock of the shims' registry that their
    prepare handler took and their child handler had not yet given back."""
    t.real_library("libnvrtc.so.13")
    d = t.workdir("fork_handler_first_call")
    fake = t.fake_nccl(f"{d}/fake", version=4646)
    os.makedirs(f"{d}/bad")
    with open(f"{d}/bad/libnccl.so.2", "w") as f:
        f.write("not a library\n")  # refused: a log line, and the fork, before the dlopen
    exe = t.compile_c(os.path.join(d, "prog"),
                      [os.path.join(t.PROGS, "fork_handler_first_call.c"), t.shim("nccl", static=True),
                       t.shim("nvrtc", static=True)], t.link_shim_args() + ["-ldl", "-lpthread"])
    r = t.run(["timeout", "60", exe], env={"LD_LIBRARY_PATH": f"{d}/bad:{os.path.dirname(fake)}"})
    t.equal((r.returncode, r.stdout),
            (0, "child: nvrtc rc=0 major>0=1\nparent: rc=0 version=4646\nchild: exited\n"),
            f"the child's first call from a fork handler: {r.stderr[-600:]}")


def mid_map(d):
    """The fork_mid_map program, and a library whose dependency is a FIFO:
    a dlopen of it stays in the mapping phase (r_debug RT_ADD) until the
    FIFO is opened for writing."""
    with open(f"{d}/dep.c", "w") as f:
        f.write("int lz_fifo_dep(void) { return 1; }\n")
    os.makedirs(f"{d}/build")
    t.compile_c(f"{d}/build/libfifo.so", [f"{d}/dep.c"], shared=True)
    with open(f"{d}/held.c", "w") as f:
        f.write("int lz_fifo_dep(void);\nint lz_held(void) { return lz_fifo_dep(); }\n")
    held = t.compile_c(f"{d}/libheld.so", [f"{d}/held.c"],
                       [f"-L{d}/build", "-lfifo", f"-Wl,-rpath,{d}/fifo"], shared=True)
    os.makedirs(f"{d}/fifo")
    os.mkfifo(f"{d}/fifo/libfifo.so")
    exe = t.compile_c(os.path.join(d, "fork_mid_map"), [os.path.join(t.PROGS, "fork_mid_map.c")],
                      t.link_shim_args("nccl") + ["-lpthread", "-ldl"])
    return exe, held, f"{d}/fifo/libfifo.so"


MID_MAP_REFUSED = ("rc=2 version=-1 error=lazynccl: NCCL could not be loaded; candidates tried: "
                   "not loaded in this process: it was forked while another thread was inside "
                   "dlopen() or dlclose()")


@case
def fork_inside_foreign_dlopen_first_call_in_child():
    """A copy never called in the parent, forked while another thread is
    inside dlopen's mapping phase (r_debug RT_ADD, held there by a FIFO): the
    child's first call, with one thread and with two, refuses with the reason
    instead of calling dlopen over the half-changed linker (without the
    refusal this fake loads, so the check is what the case sees); the
    parent, once its dlopen ends, loads normally."""
    d = t.workdir("fork_mid_map")
    exe, held, fifo = mid_map(d)
    fake = t.fake_nccl(f"{d}/fake", version=4545)
    # TSan ends a child of a threaded process that starts a thread ("starting
    # new threads after multi-threaded fork is not supported"): one thread there.
    modes = ("parent",) if t.SANITIZE == "thread" else ("parent", "parent-threaded")
    for mode in modes:
        r = t.run(["timeout", "30", exe, mode, held, fifo], env={"LAZYNCCL_LIBPATH": fake})
        t.equal(r.returncode, 0, f"{mode}: exit status: {r.stdout} {r.stderr}")
        child, _, parent = r.stdout.partition("\nparent: ")
        t.check(t.flat(child).startswith("child: " + MID_MAP_REFUSED),
                f"{mode}: the child refuses with the reason: {child!r}")
        t.equal(("parent: " + parent).splitlines(),
                ["parent: child status 0, held dlopen failed", "parent: rc=0 version=4545 error=none"],
                f"{mode}: parent")


@case
def fork_first_call_beside_a_dlopen_in_the_child():
    """A child forked with the linker at rest whose first call meets another
    thread of its own inside dlopen's mapping phase: the call waits for that
    dlopen to end and loads; the change in progress is not mistaken for one
    inherited from the parent."""
    d = t.workdir("fork_mid_map_child")
    exe, held, fifo = mid_map(d)
    fake = t.fake_nccl(f"{d}/fake", version=4646)
    r = t.run(["timeout", "30", exe, "child", held, fifo], env={"LAZYNCCL_LIBPATH": fake})
    t.equal((r.returncode, r.stdout.splitlines()),
            (0, ["child: rc=0 version=4646 error=none", "child: held dlopen ended: failed",
                 "parent: child status 0"]), f"output: {r.stderr}")


@case
def reentrant_constructor():
    """A library whose constructor calls back into the shim: no deadlock, no
    endless recursion; the inner call gets the failure value, later calls work."""
    d = t.workdir("reentrant")
    fake = t.fake_nccl(f"{d}/fake", version=4545, extra=["-DFAKE_REENTER", "-ldl"])
    log = f"{d}/ctor.log"
    client = t.compile_c(os.path.join(d, "client"), [os.path.join(t.PROGS, "nccl_client.c")],
                         t.link_shim_args("nccl"))
    r = t.run(["timeout", "20", client, "call", "ncclGetVersion", "ncclGetVersion"],
              env={"LAZYNCCL_LIBPATH": fake, "LZ_CTOR_LOG": log})
    t.equal(r.returncode, 0, f"exit status (124 = deadlock): {r.stdout}")
    t.equal(ctor_log(log), [fake, "reentrant-call rc=2 version=-1"], "constructor log")
    t.equal(r.stdout.splitlines()[:2], ["ncclGetVersion: rc=0 value=4545"] * 2, "outer calls")


@case
def failure_cached_then_retry():
    """After a failed load calls do not search again; lazynccl_load() retries
    and, once the library is there, every function works."""
    d = t.workdir("retry")
    staged = t.fake_nccl(f"{d}/staging", version=4646)
    final = f"{d}/lib/libnccl.so.2"
    os.makedirs(f"{d}/lib")
    r = t.run([race_client(d), "retry", staged, final],
              env={"LAZYNCCL_LIBPATH": final, "LAZYNCCL_DEBUG": "1"}, check_rc=0)
    t.equal(r.stdout, "call 0: rc=2\ncall 1: rc=2\ncall 2: rc=2\n"
                      "call after fix, before retry: rc=2\nlazynccl_load: 0\n"
                      "call after retry: rc=0 version=4646\n", "output")
    searches = r.stderr.count(f"[LAZYNCCL_LIBPATH] {final}:")
    t.equal(searches, 2, "searches (the first call and the explicit retry)")


# --- generator errors ---------------------------------------------------------

def generate(d, spec, include=None):
    """lazygen generate SPEC into d/out.c (20 s at most: a spec must never be waited on)."""
    return t.run(["timeout", "20", sys.executable, os.path.join(t.SOURCE, "gen", "lazygen.py"), "generate",
                  spec, "--include-dir", include or d, "--cc", " ".join(t.CC), "--out-c", f"{d}/out.c"])


def generate_fails(d, spec, include=None):
    """generate(), which must fail as a user's mistake does: status 1, no
    traceback, nothing written. Its stderr."""
    r = generate(d, spec, include)
    t.equal(r.returncode, 1, f"exit status; stderr: {r.stderr}")
    t.check("Traceback" not in r.stderr, "a Python traceback:\n" + r.stderr)
    t.check(not os.path.exists(f"{d}/out.c"), "output written despite the error")
    return r.stderr


def lazygen(d, spec_text, header=None, include=None):
    spec = f"{d}/bad.toml"
    with open(spec, "w") as f:
        f.write(spec_text)
    if header is not None:
        with open(f"{d}/bad.h", "w") as f:
            f.write(header)
    return spec, generate_fails(d, spec, include)


GOOD = """[library]
id = "bad"
display = "Bad"
shim = "lazybad"
headers = ["bad.h"]
function_pattern = "^bad"
sonames = ["libbad.so.1"]
wheel_dirs = []
env = "LAZYBAD_LIBPATH"
required = []
feature = "bad"
description = "test"

[failure]
"int" = "-1"
"""


@case
def generator_malformed_spec():
    d = t.workdir("gen_malformed")
    spec, err = lazygen(d, GOOD.replace('shim = "lazybad"', 'shim = "lazybad'))
    t.contains(err, f"lazygen: {spec}: error: malformed TOML:", "message")
    t.contains(err, "line 4", "line number")


@case
def generator_missing_key():
    d = t.workdir("gen_missing_key")
    spec, err = lazygen(d, GOOD.replace('feature = "bad"\n', ""))
    t.contains(err, f"lazygen: {spec} [library]: error: missing key 'feature'", "message")


@case
def generator_types_without_failure_value_stop():
    """A return type the spec gives no failure value (the API has none: a
    double, a float) is not an error and gets no made-up value: its
    functions stop the process when called without the library, and one
    note names them all; a type with a value ("int") returns it."""
    d = t.workdir("gen_unknown_type")
    spec = f"{d}/bad.toml"
    with open(spec, "w") as f:
        f.write(GOOD)
    with open(f"{d}/bad.h", "w") as f:
        f.write("int bad_a(int x);\ndouble bad_b(void);\nfloat bad_c(void);\ndouble bad_d(int);\n")
    r = t.run([sys.executable, os.path.join(t.SOURCE, "gen", "lazygen.py"), "generate", spec, "--include-dir", d, "--out-c", f"{d}/bad.c",
               "--cc", " ".join(t.CC)])
    t.equal(r.returncode, 0, r.stderr)
    t.contains(t.flat(r.stderr), f"lazygen: {spec}: note: 3 function(s) stop the process when called without "
                         "the library, as the dynamic linker would have at start ([failure] gives "
                         "their return type no value): double: bad_b, bad_d; float: bad_c", "the note")
    with open(f"{d}/bad.c") as f:
        c = f.read()
    # On x86-64 and AArch64 such a function needs no typed code but its
    # thunk's type check: its first call goes through the shim's one
    # register-saving forward; it has no failure code (a 0 entry: the
    # runtime stops).
    t.contains(c, '"\\t.long 0\\n" /* bad_b: no failure value, stops */', "a stop, no value")
    t.equal(c.count("lz_f_bad_b"), 0, "no failure code of its own")
    t.contains(c, "LZ_RESOLVER_VARIADIC(bad_b, 1)", "resolved through the forward")
    t.contains(c, "LZ_THUNK(double, bad_b, bad_b, \"bad_b\", 1, (void), ())", "its type checked")
    t.contains(c, "LZ_FAIL(int, bad_a, (int a0), -1)", "the int's value")


@case
def generator_noreturn_functions_stop():
    """A function declared never to return (C11's _Noreturn, GCC's
    noreturn attribute) is never given a failure that returns, even where
    [failure] has a value for its type: without its library it stops the
    process (returning would run off the caller's end)."""
    d = t.workdir("gen_noreturn")
    spec = f"{d}/bad.toml"
    with open(spec, "w") as f:
        f.write(GOOD + '"void" = ""\n')
    with open(f"{d}/bad.h", "w") as f:
        f.write("_Noreturn void bad_exit(int code);\nvoid bad_jump(const char *why) "
                "__attribute__((noreturn));\nvoid bad_plain(void);\n")
    r = t.run([sys.executable, os.path.join(t.SOURCE, "gen", "lazygen.py"), "generate", spec,
               "--include-dir", d, "--out-c", f"{d}/bad.c", "--cc", " ".join(t.CC)])
    t.equal(r.returncode, 0, r.stderr)
    with open(f"{d}/bad.c") as f:
        c = f.read()
    t.contains(c, '/* bad_exit: no failure value, stops */', "_Noreturn")
    t.contains(c, '/* bad_jump: no failure value, stops */', "the attribute")
    t.contains(c, "LZ_FAIL_VOID(bad_plain, (void))", "a plain void function: the spec's nothing")
    t.contains(t.flat(r.stderr), "noreturn (never returns: no value applies): bad_exit, bad_jump", "the note")


@case
def generator_header_not_found():
    d = t.workdir("gen_no_header")
    spec, err = lazygen(d, GOOD)
    t.contains(err, f"lazygen: {spec} [library] 'headers': error: 'bad.h': no such header in: {d}",
               "message: the spec, the key, the header, where it was looked for")


@case
def generator_header_parse_error():
    d = t.workdir("gen_parse_error")
    spec, err = lazygen(d, GOOD, header="int bad_a(int x);\nint bad_b(int x y);\n")
    t.contains(err, f"{d}/bad.h:2:17: error: cannot read the header: expected ')', in: "
               "int bad_b(int x y);", "message: file, line, column and the construct")



@case
def generator_spec_not_utf8():
    """A spec that is not UTF-8 gets FILE: error naming the byte, not a traceback."""
    d = t.workdir("gen_not_utf8")
    spec = f"{d}/latin1.toml"
    with open(spec, "wb") as f:
        f.write(GOOD.replace('description = "test"', 'description = "caf\u00e9"').encode("latin-1"))
    t.contains(generate_fails(d, spec), f"lazygen: {spec}: error: not UTF-8 text: byte 0xe9 at offset ",
               "message")


@case
def generator_spec_fifo():
    """A FIFO named as the spec is refused at once, not waited on."""
    d = t.workdir("gen_fifo")
    fifo = f"{d}/fifo.toml"
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    t.contains(generate_fails(d, fifo), f"lazygen: {fifo}: error: cannot read spec: not a regular file",
               "message")


@case
def generator_spec_values_checked():
    """Values the C code would paste are checked: a failure value that is
    not a C constant expression (it would have compiled and exported
    `injected`), a SONAME naming a directory; each names the key."""
    d = t.workdir("gen_values")
    bad = '"-1; } int injected(void) { return 42"'
    spec, err = lazygen(d, GOOD.replace('"int" = "-1"', f'"int" = {bad}'), header="int bad_a(int x);\n")
    t.contains(err, f"lazygen: {spec} [failure]: error: value for 'int': '-1; }} int injected(void) "
                    f"{{ return 42' is not a C constant expression", "failure value")
    spec, err = lazygen(d, GOOD.replace('"int" = "-1"', '"int" = "-1"\n[failure.functions]\n'
                                        f'bad_a = {bad}'), header="int bad_a(int x);\n")
    t.contains(err, f"lazygen: {spec} [failure.functions]: error: value for 'bad_a':", "per function")
    spec, err = lazygen(d, GOOD.replace('sonames = ["libbad.so.1"]', 'sonames = ["../lib/libbad.so.1"]'))
    t.contains(err, f"lazygen: {spec} [library]: error: 'sonames': '../lib/libbad.so.1' is not a file "
                    f"name", "soname")


@case
def generator_companions_need_companions_for():
    """Companions are loaded before the first call of the functions that
    need them, never eagerly: a spec naming companions without
    companions_for is refused."""
    d = t.workdir("gen_companions")
    spec, err = lazygen(d, GOOD.replace('required = []', 'required = []\ncompanions = ["libbad-extra.so."]'))
    t.contains(err, f"lazygen: {spec} [library]: error: 'companions' needs 'companions_for'", "message")


@case
def generator_names_checked_in_one_run():
    """Names the spec gives that the header lacks (required, per-function
    failure values) and header functions named like the control API are
    all reported in one run."""
    d = t.workdir("gen_names")
    text = GOOD.replace('required = []', 'required = ["bad_missing"]').replace(
        'function_pattern = "^bad"', 'function_pattern = "^(bad|lazybad_)"').replace(
        '"int" = "-1"', '"int" = "-1"\n[failure.functions]\nbad_gone = "0"')
    spec, err = lazygen(d, text, header="int bad_a(int x);\nint lazybad_load(void);\n"
                                        "int badb(void);\n")
    t.contains(err, f"lazygen: {spec}: error: 3 name(s) cannot be served:\n"
                    "  'required': bad_missing is not a function the header declares and "
                    "function_pattern selects\n"
                    "  [failure.functions]: bad_gone is not a function the header declares and "
                    "function_pattern selects\n", "missing names")
    t.contains(err, "lazybad_load", "the clash is named")


@case
def generator_failure_per_function():
    """[failure.functions] gives one function its own failure value: with
    the library absent, bad_version() returns 0 while bad_a() returns the
    type's -1."""
    d = t.workdir("gen_per_function")
    with open(f"{d}/bad.h", "w") as f:
        f.write("int bad_a(int x);\nint bad_version(void);\n")
    with open(f"{d}/bad.toml", "w") as f:
        f.write(GOOD.replace('function_pattern = "^bad"', 'function_pattern = "^bad"\ncontrol_api = false')
                + "[failure.functions]\nbad_version = \"0\"\n")
    r = generate(d, f"{d}/bad.toml")
    t.equal(r.returncode, 0, r.stderr)
    with open(f"{d}/main.c", "w") as f:
        f.write('#include <stdio.h>\n#include "bad.h"\n'
                'int main(void) { printf("%d %d\\n", bad_a(5), bad_version()); return 0; }\n')
    exe = t.compile_c(f"{d}/main", [f"{d}/main.c", f"{d}/out.c"],
                      [f"-I{d}", f"-I{t.SOURCE}/src", f"-I{t.BUILD}", "-fvisibility=hidden", "-D_GNU_SOURCE",
                       os.path.join(t.SHIMS, "liblzruntime.a"), "-ldl", "-lpthread"] + t.sanitizer_link_args())
    out = t.run([exe], env={"LAZYBAD_LIBPATH": f"{d}/nowhere/libbad.so.1"}, check_rc=0).stdout
    t.equal(out, "-1 0\n", "bad_a's type value and bad_version's own")


@case
def generator_failure_out_parameters_checked():
    """[failure.functions]' out table: a parameter the header does not name
    is an error naming the function's parameters; a table without value, a
    key other than value and out, a value that is no C constant, and a
    parameter it may not write through (a pointer to const) are each
    said, before any compiler sees the code."""
    d = t.workdir("gen_failure_outs")
    header = "int bad_compile(const char *text, int *code);\n"
    base = GOOD.replace('function_pattern = "^bad"', 'function_pattern = "^bad"\ncontrol_api = false')
    for table, want in (
            ('{ value = "-1", out = { err = "-2" } }',
             "[failure.functions] bad_compile: out: no parameter named err (its parameters: text, code)"),
            ('{ out = { code = "-2" } }', "'bad_compile': a table takes value = \"...\""),
            ('{ value = "-1", why = "x" }', "unknown: why"),
            ('{ value = "-1", out = { code = "two words" } }',
             "'bad_compile': out: value for 'code' is not a C constant expression"),
            ('{ value = "-1", out = { text = "0" } }',
             "[failure.functions] bad_compile: out: text is not a pointer to something it may write "
             "(an out-parameter is a pointer to a type that is not const)")):
        _, err = lazygen(d, base + f"[failure.functions]\nbad_compile = {table}\n", header)
        t.contains(err, want, table)


def fork_stress(what, runs):
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("gcc 12's ASan and TSan allocators are not fork-safe: a child forked while "
                     "another thread is inside malloc hangs in its own next malloc (seen in "
                     "__sanitizer::SizeClassAllocator64::GetFromAllocator), whatever the "
                     "program; the default build runs this stress")
    t.real_library("libnccl.so.2" if what == "nccl" else "libnvrtc.so.13")
    d = t.workdir(f"fork_stress_{what}")
    exe = t.compile_c(os.path.join(d, "fork_stress"), [os.path.join(t.PROGS, "fork_stress.c")],
                      t.link_shim_args("nccl", "nvrtc") + ["-lpthread"])
    r = t.run([exe, what, str(runs)], env={"TSAN_OPTIONS": "report_thread_leaks=0"})
    print(r.stdout.strip())
    t.equal((r.returncode, r.stdout.split(" load_ms")[0]),
            (0, f"runs={runs} ok={runs} failed=0 crashed=0"), f"fork stress: {r.stderr[-3000:]}")


@case
def fork_stress_nccl():
    """1,000 forks at moments spread over a real first load of NCCL (libelf
    loaded first for the probe): every child answers the right version."""
    fork_stress("nccl", 1000)


@case
def fork_stress_nvrtc():
    """200 forks spread over a real first load of NVRTC (and its builtins)."""
    fork_stress("nvrtc", 200)


ORDERS = ["ncv", "nvc", "cnv", "cvn", "vnc", "vcn"]


def multi_fork(name, amalgamation, runs):
    """a thread makes the first calls of NCCL, NVRTC and nvJitLink
    in each of their orders while the main thread forks 8 children 300 us
    apart, after a delay spread over 0-4 ms; each child calls all three."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("gcc 12's ASan and TSan allocators are not fork-safe (see fork_stress_nccl); "
                     "the default build runs this stress")
    for soname in ("libnccl.so.2", "libnvrtc.so.13", "libnvJitLink.so.13"):
        t.real_library(soname)
    d = t.workdir(f"multi_fork_{name}")
    srcs = [os.path.join(t.PROGS, "multi_fork.c")]
    args = ["-O2", "-lpthread", "-ldl"]
    if amalgamation:
        import test_vendor
        amalg = test_vendor.amalgamation(f"{d}/amalg", "app_")
        srcs.append(f"{amalg}/lazynccl_amalg.c")
        args += [f"-I{amalg}", "-DAMALG_NCCL"] + t.link_shim_args("nvrtc", "nvjitlink")
    else:
        args += t.link_shim_args("nccl", "nvrtc", "nvjitlink")
    exe = t.compile_c(os.path.join(d, "multi_fork"), srcs, args)
    totals = {}
    for order in ORDERS:
        r = t.run(["timeout", "600", exe, order, str(runs)])
        print(f"{order}: {r.stdout.strip()}")
        first = r.stdout.splitlines()[0] if r.stdout else ""
        counts = dict(kv.split("=") for kv in first.split())
        t.equal(r.returncode, 0, f"{name} {order}: {r.stdout[-2000:]} {r.stderr[-2000:]}")
        for k, v in counts.items():
            totals[k] = totals.get(k, 0) + int(v)
        children = int(counts["children"])
        t.equal((counts["hung"], counts["crashed"], counts["wrong"]), ("0", "0", "0"),
                f"{name} {order}: {r.stdout}")
        t.check(int(counts["refused"]) * 50 <= children,
                f"{name} {order}: more than 2 % refused: {r.stdout}")
    print(f"{name} total: " + " ".join(f"{k}={v}" for k, v in totals.items()))


@case
def fork_three_shared_shims():
    """the three shared shims, 6 orders x 22 workers x 8 children
    (1,056 forks): none hangs, crashes or answers wrong; at most 2 % refused."""
    multi_fork("shared", False, 22)


@case
def fork_amalgamation_beside_shared_shims():
    """NCCL from an amalgamation compiled into the program, NVRTC
    and nvJitLink from the shared shims: 1,056 forks, the same bounds."""
    multi_fork("amalg", True, 22)


MP_SCRIPT = r"""
import ctypes, multiprocessing as mp, sys, threading, time
sys.path.insert(0, sys.argv[1])
import lazyext_mp
rtc = ctypes.CDLL(sys.argv[2])
jit = ctypes.CDLL(sys.argv[3])

def answers():
    a, b = ctypes.c_int(), ctypes.c_int()
    out = []
    try:
        out.append(lazyext_mp.version())
    except RuntimeError as e:
        out.append(str(e).splitlines()[0])
    out.append(rtc.nvrtcVersion(ctypes.byref(a), ctypes.byref(b)) == 0 and a.value * 1000 + b.value)
    out.append(jit.nvJitLinkVersion(ctypes.byref(a), ctypes.byref(b)) == 0 and a.value * 1000 + b.value)
    return out

def worker(q):
    q.put(answers())

if __name__ == "__main__":
    want = [int(x) for x in sys.argv[4].split(",")]
    delay = float(sys.argv[5])
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    th = threading.Thread(target=answers)
    th.start()
    time.sleep(delay)
    procs = []
    for _ in range(6):
        p = ctx.Process(target=worker, args=(q,))
        p.start()
        procs.append(p)
        time.sleep(0.0005)
    got = []
    for p in procs:
        try:
            got.append(q.get(timeout=20))
        except Exception:
            got.append("hung")
    for p in procs:
        p.join(5)
        if p.is_alive():
            p.kill()
    th.join()
    print(sum(g == want for g in got), len(got), [g for g in got if g != want][:2])
"""


@case
def fork_python_multiprocessing():
    """a CPython extension vendoring the NCCL amalgamation plus the
    shared NVRTC and nvJitLink shims through ctypes; multiprocessing's fork
    start method launches workers while a thread makes the first calls.
    Every worker answers (bounded), with the right versions."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer runtime cannot be preloaded into the system Python here; "
                     "the default build runs this scenario")
    for soname in ("libnccl.so.2", "libnvrtc.so.13", "libnvJitLink.so.13"):
        t.real_library(soname)
    import test_vendor
    d = t.workdir("fork_python_mp")
    test_vendor.extension(d, "lazyext_mp", "mp_")
    script = os.path.join(d, "mp.py")
    with open(script, "w") as f:
        f.write(MP_SCRIPT)
    rtc, jit = t.shim("nvrtc"), t.shim("nvjitlink")
    want = t.run([sys.executable, "-c", MP_SCRIPT.split("def worker")[0] +
                  "print(','.join(str(int(x)) for x in answers()))", d, rtc, jit],
                 check_rc=0).stdout.strip()
    total = ok = 0
    for k in range(12):
        r = t.run(["timeout", "120", sys.executable, script, d, rtc, jit, want, str(k * 0.002)])
        t.equal(r.returncode, 0, f"run {k}: {r.stdout} {r.stderr[-2000:]}")
        good, n, bad = r.stdout.split(" ", 2)
        ok, total = ok + int(good), total + int(n)
        t.equal(good, n, f"run {k} (fork {k * 2} ms after the first calls began): {bad}")
    print(f"{total} workers, {ok} answered right")


if __name__ == "__main__":
    raise SystemExit(t.main())
