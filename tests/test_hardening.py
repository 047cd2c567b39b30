#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile callers and files: setuid with a crafted argv[0], FIFOs named like
the library, cancellation inside a load, a retry racing first calls, a log
callback changing the search list, impostor libraries, bytes that are not
UTF-8, unreadable directories."""
import json
import os
import re
import shutil
import stat
import subprocess

import lztest as t
from lztest import case


def nccl_client(d, static=False, name="client"):
    src = os.path.join(t.PROGS, "nccl_client.c")
    if static:
        args = [f"-I{t.SOURCE}/include", f"-I{t.BUILD}", f"-I{t.SHIMS}", f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}",
                os.path.join(t.SHIMS, "liblazynccl.a"), "-ldl", "-lpthread"]
        return t.compile_c(os.path.join(d, name), [src], args + t.sanitizer_link_args())
    return t.compile_c(os.path.join(d, name), [src], t.link_shim_args("nccl"))


def harden_client(d):
    return t.compile_c(os.path.join(d, "harden"), [os.path.join(t.PROGS, "harden_client.c")],
                       t.link_shim_args("nccl") + ["-lpthread"])


# --- secure execution: argv[0] ------------------------------------------------

def secure_client(d, kind):
    """The client linked with the shared shim, the static one, or the
    amalgamation compiled in."""
    if kind == "amalgamation":
        src = os.path.join(t.PROGS, "nccl_client.c")
        args = [f"-I{t.SOURCE}/include", f"-I{t.BUILD}", f"-I{t.SHIMS}", f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}",
                os.path.join(t.SHIMS, "lazynccl_amalg.c"), "-ldl", "-lpthread"]
        return t.compile_c(os.path.join(d, "client"), [src], args + t.sanitizer_link_args())
    return nccl_client(d, static=kind == "static")


def secure_execution(kind, how):
    """A secure-execution program (setuid root, or a file capability) run by
    nobody with everything the caller controls pointing at a fake NCCL it
    planted: argv[0] in a site-packages, LAZYNCCL_LIBPATH, CONDA_PREFIX,
    CUDA_HOME, NCCL_HOME, LD_LIBRARY_PATH. No constructor of the caller's runs."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        raise t.Skip("needs root and setpriv to run a secure-execution program as nobody")
    if how == "setcap" and not shutil.which("setcap"):
        raise t.Skip("setcap is not installed (Debian package libcap2-bin)")
    if "address" in t.SANITIZE:
        raise t.Skip("LeakSanitizer cannot run in a setuid process (ASan build)")
    d = t.workdir(f"secure_{kind}_{how}")
    os.chmod(d, 0o755)
    site = f"{d}/attacker/site-packages"
    t.fake_nccl(f"{site}/nvidia/nccl/lib", version=66)
    for sub in ("override", "conda/lib", "cuda/lib64", "ncclhome/lib", "llp"):
        t.fake_nccl(f"{d}/attacker/{sub}", version=66)
    log = f"{d}/ctor.log"
    open(log, "w").close()
    os.chmod(log, 0o666)
    for root, dirs, files in os.walk(f"{d}/attacker"):
        for x in dirs + files:
            os.chmod(os.path.join(root, x), 0o755)
    os.chmod(f"{d}/attacker", 0o755)
    exe = secure_client(d, kind)
    if how == "setuid":
        os.chmod(exe, 0o4755)  # setuid root
    else:
        os.chmod(exe, 0o755)
        t.run(["setcap", "cap_net_bind_service+ep", exe], check_rc=0)
    a = f"{d}/attacker"
    env = {"LZ_CTOR_LOG": log, "LAZYNCCL_LIBPATH": f"{a}/override",
           "CONDA_PREFIX": f"{a}/conda", "CUDA_HOME": f"{a}/cuda", "NCCL_HOME": f"{a}/ncclhome",
           "LD_LIBRARY_PATH": f"{a}/llp", "PYTHONPATH": site, "LAZYNCCL_DEBUG": "1"}
    # bash's exec -a chooses argv[0], as an attacker's execv would.
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/bash", "-c",
           'exec -a "$0" "$@"', f"{site}/x", exe, "call", "ncclGetVersion"]
    r = t.run(cmd, env=env, timeout=30)
    t.equal(r.returncode, 0, f"exit status ({r.stdout}{r.stderr})")
    t.check("value=66" not in r.stdout, f"the attacker's library answered:\n{r.stdout}")
    t.equal(r.stderr, "", "LAZYNCCL_DEBUG is the caller's too: nothing printed")
    with open(log) as f:
        t.equal(f.read().split(), [], "constructors of the caller's files that ran")


@case
def setuid_argv0_static():
    """A setuid-root program linked with liblazynccl.a, run by nobody with
    argv[0] in a site-packages the caller owns and every variable pointing
    at the caller's files: none of them runs."""
    secure_execution("static", "setuid")


@case
def setuid_argv0_shared():
    secure_execution("shared", "setuid")


@case
def setuid_amalgamation():
    secure_execution("amalgamation", "setuid")


@case
def setcap_static():
    """The same with a file capability instead of setuid (AT_SECURE too)."""
    secure_execution("static", "setcap")


@case
def setcap_shared():
    secure_execution("shared", "setcap")


@case
def setcap_amalgamation():
    secure_execution("amalgamation", "setcap")


# --- FIFOs ------------------------------------------------------------------

@case
def fifo_in_override():
    d = t.workdir("fifo_in_override")
    os.makedirs(f"{d}/f")
    os.mkfifo(f"{d}/f/libnccl.so.2")
    r = t.run([nccl_client(d), "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": f"{d}/f"}, timeout=30)
    t.contains(r.stdout, f"[LAZYNCCL_LIBPATH] {d}/f/libnccl.so.2: rejected: not a regular file",
               "report")


@case
def fifo_in_ld_library_path():
    """A FIFO on LD_LIBRARY_PATH is passed over; the search goes on."""
    d = t.workdir("fifo_in_ld_library_path")
    os.makedirs(f"{d}/f")
    os.mkfifo(f"{d}/f/libnccl.so.2")
    good = t.fake_nccl(f"{d}/good", version=7)
    r = t.run([nccl_client(d), "call", "ncclGetVersion"], env={"LD_LIBRARY_PATH": f"{d}/f:{d}/good"}, timeout=30)
    t.contains(r.stdout, "ncclGetVersion: rc=0 value=7", "the next candidate answers")
    t.contains(r.stdout, f"loaded={good}", "loaded")


@case
def fifo_in_info_and_doctor():
    d = t.workdir("fifo_in_info_and_doctor")
    os.makedirs(f"{d}/f")
    os.mkfifo(f"{d}/f/libnccl.so.2")
    os.mkfifo(f"{d}/f/libnccl-net-evil.so")
    info = os.path.join(t.BUILD, "lazynccl-info")
    r = t.run([info, "--verbose", "nccl"], env={"LD_LIBRARY_PATH": f"{d}/f"}, timeout=30)
    t.contains(t.flat(r.stdout), "not a regular file", "lazynccl-info")
    r = t.run([info, "--doctor", "nccl"], env={"NCCL_NET_PLUGIN": f"{d}/f/libnccl-net-evil.so"}, timeout=30)
    t.check(r.returncode in (0, 1), f"exit status {r.returncode}: {r.stderr}")


# --- cancellation, retries, callbacks ------------------------------------------

@case
def cancel_inside_first_call():
    """A thread cancelled while its first call loads (the constructor sleeps)
    leaves no lock held: the next call completes."""
    d = t.workdir("cancel_inside_first_call")
    fake = t.fake_nccl(f"{d}/lib", version=31)
    r = t.run([harden_client(d), "cancel"], env={"LAZYNCCL_LIBPATH": fake, "LZ_CTOR_SLEEP_MS": "400"}, timeout=30)
    t.equal(r.returncode, 0, f"exit status (142 is the alarm: blocked)\n{r.stdout}{r.stderr}")
    t.contains(r.stdout, "then rc=0 value=31", "the call after the cancel")


@case
def setpath_from_log_callback():
    """set_search_path from the log callback, during the walk, is refused
    (-1) instead of freeing the list being walked."""
    d = t.workdir("setpath_from_log_callback")
    fake = t.fake_nccl(f"{d}/lib", version=32)
    r = t.run([harden_client(d), "setpath-in-log"], env={"LAZYNCCL_LIBPATH": fake}, timeout=30)
    t.equal(r.returncode, 0, f"exit status\n{r.stdout}{r.stderr}")
    t.contains(r.stdout, "set_search_path from the callback: -1; rc=0 value=32", "answer")


@case
def file_swapped_after_probe_is_refused():
    """A file renamed over the chosen one after its probe, just before the
    dlopen (the runtime's dlopen wrapped, in a program linked to the static
    shim), is refused once loaded, with a log line saying why, and the next
    round judges and loads it afresh: the answer is the new file's. The
    probe takes a file's identity from its stat alone (no fstat of its
    descriptor), so a swap anywhere between that stat and the
    dlopen ends here."""
    d = t.workdir("file_swapped_after_probe_is_refused")
    old = t.fake_nccl(f"{d}/lib", version=34)
    new = t.fake_nccl(f"{d}/other", version=35)
    args = [a for a in t.link_shim_args() if not a.startswith(("-L", "-Wl,-rpath"))]
    exe = t.compile_c(os.path.join(d, "swap"), [os.path.join(t.PROGS, "harden_client.c")],
                      ["-DLZ_WRAP_DLOPEN", "-Wl,--wrap=dlopen", f"{t.SHIMS}/liblazynccl.a", "-lpthread", "-ldl"]
                      + args)
    r = t.run([exe, "swap"], env={"LAZYNCCL_LIBPATH": old, "LAZYNCCL_DEBUG": "1", "LZ_SWAP_FROM": new,
                                "LZ_SWAP_TO": old}, timeout=30)
    t.equal(r.returncode, 0, f"exit status\n{r.stdout}{r.stderr}")
    t.contains(r.stdout, "renamed: 0", "the rename before the first dlopen")
    t.contains(r.stderr, f"[LAZYNCCL_LIBPATH] {old}: refused once loaded: "
               "the file changed between the probe and dlopen", "the refusal, logged")
    t.contains(r.stdout, "rc=0 value=35", "the new file's answer")


@case
def retry_races_first_calls():
    """After a failed load, a retry with a good list racing first calls of
    ncclGetVersion and pncclGetVersion: afterwards both work, in every run."""
    d = t.workdir("retry_races_first_calls")
    fake = t.fake_nccl(f"{d}/lib", version=33)
    exe = harden_client(d)
    bad = 0
    for _ in range(60):
        r = t.run([exe, "retry-race", fake], env={}, timeout=30)
        if "ncclGetVersion rc=0 value=33 pncclGetVersion rc=0 value=33" not in r.stdout:
            bad += 1
            last = r.stdout + r.stderr
    t.check(bad == 0, f"{bad} of 60 runs left a function failing; last:\n{bad and last}")


# --- impostors ----------------------------------------------------------------

@case
def dlsym_checked_after_dlopen():
    """A candidate exporting ncclGetVersion only under a non-default symbol
    version passes the probe; after dlopen, dlsym does not find it: it is
    closed, and the next candidate is taken."""
    d = t.workdir("dlsym_checked_after_dlopen")
    os.makedirs(f"{d}/bad")
    with open(f"{d}/bad/f.c", "w") as f:
        f.write("int ncclGetVersion_impl(int *v) { *v = 1; return 0; }\n"
                '__asm__(".symver ncclGetVersion_impl, ncclGetVersion@OLD_1");\n'
                "const char *ncclGetErrorString(int r) { (void)r; return \"x\"; }\n"
                "int ncclGetUniqueId(void *id) { (void)id; return 0; }\n"
                "int ncclCommCount(void *c, int *n) { (void)c; *n = 1; return 0; }\n")
    # every other name the client imports, so that the probe passes it
    with open(f"{d}/bad/m.map", "w") as f:
        f.write("OLD_1 { global: ncclGetVersion; };\n"
                "NEW_1 { global: ncclGetErrorString; ncclGetUniqueId; ncclCommCount; local: *; } OLD_1;\n")
    bad = t.compile_c(f"{d}/bad/libnccl.so.2", [f"{d}/bad/f.c"],
                      ["-Wl,-soname,libnccl.so.2", f"-Wl,--version-script,{d}/bad/m.map"],
                      shared=True)
    good = t.fake_nccl(f"{d}/good", version=34)
    r = t.run([nccl_client(d), "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": f"{bad}:{good}", "LAZYNCCL_DEBUG": "1"}, timeout=30)
    t.contains(r.stdout, "ncclGetVersion: rc=0 value=34", "the good candidate answers")
    t.contains(r.stderr, f"{bad}: rejected: dlsym does not find ncclGetVersion", "log")


# --- output and messages --------------------------------------------------------

@case
def json_bytes_not_utf8():
    """lazynccl-info --json stays valid JSON for a path that is not UTF-8."""
    d = t.workdir("json_bytes_not_utf8")
    raw = os.fsencode(d) + b"/caf\xe9\xff"
    os.makedirs(raw)
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env = {k.encode(): v.encode() for k, v in env.items()}
    env[b"LAZYNCCL_LIBPATH"] = raw
    r = subprocess.run([os.path.join(t.BUILD, "lazynccl-info"), "--json", "nccl"], env=env,
                       capture_output=True, timeout=60)
    text = r.stdout.decode("utf-8")  # raises on invalid UTF-8
    doc = json.loads(text)
    t.contains(json.dumps(doc), "caf\\udce9\\udcff", "the bytes as lone surrogates")
    # The bytes come back exactly, and a UTF-8 name is not mistaken for them.
    paths = [s for s in re.findall(r'"([^"]*caf[^"]*)"', json.dumps(doc))]
    t.check(any(json.loads(f'"{p}"').encode("utf-8", "surrogateescape").endswith(b"/caf\xe9\xff")
                for p in paths), f"bytes recovered: {paths}")


@case
def unreadable_and_dangling_directories():
    """A directory that cannot be read, or a dangling link, is named as such,
    not as holding no library; in CONDA_PREFIX too."""
    d = t.workdir("unreadable_and_dangling_directories")
    os.makedirs(f"{d}/locked")
    os.chmod(f"{d}/locked", 0)
    os.symlink(f"{d}/nowhere", f"{d}/dangling")
    os.makedirs(f"{d}/conda")
    os.symlink(f"{d}/nowhere", f"{d}/conda/lib")
    exe = nccl_client(d)
    env = {"LAZYNCCL_LIBPATH": f"{d}/dangling"}
    r = t.run([exe, "call", "ncclGetVersion"], env=env, timeout=30)
    t.contains(r.stdout, f"[LAZYNCCL_LIBPATH] {d}/dangling: rejected: a dangling symbolic link",
               "dangling")
    r = t.run([exe, "call", "ncclGetVersion"], env={"CONDA_PREFIX": f"{d}/conda",
                                                  "LAZYNCCL_DEBUG": "1"}, timeout=30)
    t.contains(r.stderr, f"[CONDA_PREFIX] {d}/conda/lib: rejected: a dangling symbolic link",
               "conda")
    if os.geteuid() == 0:
        # root reads anything: check as nobody
        os.chmod(d, 0o755)
        os.chmod(exe, 0o755)
        r = t.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe, "call",
                     "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": f"{d}/locked"}, timeout=30)
    else:
        r = t.run([exe, "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": f"{d}/locked"}, timeout=30)
    t.contains(r.stdout, f"[LAZYNCCL_LIBPATH] {d}/locked: rejected: cannot be searched: "
               "Permission denied", "locked")


@case
def info_says_what_it_drops():
    """Past 64 verdicts lazynccl-info counts what it does not list, in text
    and JSON, instead of dropping it silently."""
    many = ":".join(f"/nonexistent/{i}/libnccl.so.2" for i in range(70))
    info = os.path.join(t.BUILD, "lazynccl-info")
    r = t.run([info, "--verbose", "nccl"], env={"LAZYNCCL_LIBPATH": many}, timeout=30)
    t.contains(r.stdout, "(6 more candidates not shown: the tool keeps the first 64)", "text")
    doc = json.loads(t.run([info, "--json", "nccl"], env={"LAZYNCCL_LIBPATH": many}, timeout=30).stdout)
    lib = doc["libraries"][0]
    t.equal((len(lib["candidates"]), lib["candidates_not_shown"]), (64, 6), "JSON")


@case
def messages_name_their_shim():
    """The idle messages of each shim name that shim, not lazynccl for all."""
    for lib, display in (("nvrtc", "NVRTC"), ("nvjitlink", "nvJitLink"), ("nccl", "NCCL")):
        data = open(t.shim(lib), "rb").read()
        for text in (f"lazy{lib}: no error", f"lazy{lib}: {display} not loaded yet"):
            t.check(text.encode() in data, f"{t.shim(lib)} lacks {text!r}")
        if lib != "nccl":
            t.check(b"lazynccl: no error" not in data, f"{t.shim(lib)} says lazynccl")



# --- the dynamic linker's lock (item 4) -----------------------------------------

def loader_lock_programs(d, real_dir):
    """The plugin-constructor program and its plugin, against the shim and,
    for comparison, against the real NCCL (-lnccl)."""
    inc = [f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}", f"-I{t.SOURCE}/include", f"-I{t.BUILD}", f"-I{t.SHIMS}"]
    shim = t.compile_c(os.path.join(d, "plugin_shim.so"), [os.path.join(t.FAKES, "ctor_plugin.c")],
                       t.link_shim_args("nccl"), shared=True)
    prog = t.compile_c(os.path.join(d, "loader_lock"), [os.path.join(t.PROGS, "loader_lock.c")],
                       ["-DLZ_SHIM"] + t.link_shim_args("nccl") + ["-ldl", "-lpthread", "-rdynamic"])
    real_plugin = t.compile_c(os.path.join(d, "plugin_real.so"),
                              [os.path.join(t.FAKES, "ctor_plugin.c")],
                              inc + [f"-L{real_dir}", f"-Wl,-rpath,{real_dir}", "-lnccl"] +
                              t.sanitizer_link_args(), shared=True)
    real = t.compile_c(os.path.join(d, "loader_lock_real"), [os.path.join(t.PROGS, "loader_lock.c")],
                       inc + [f"-L{real_dir}", f"-Wl,-rpath,{real_dir}", "-lnccl", "-ldl",
                              "-lpthread", "-rdynamic"] + t.sanitizer_link_args())
    return prog, shim, real, real_plugin


def loader_lock_runs(mode, runs):
    lib = t.real_library("libnccl.so.2")
    d = t.workdir(f"loader_lock_{mode or 'first'}")
    prog, plugin, real, real_plugin = loader_lock_programs(d, os.path.dirname(lib))
    want = t.run([real, real_plugin], env={}, timeout=60)
    if want.returncode != 0:
        raise t.Fail(f"the -lnccl build failed: {want.stdout}{want.stderr}")
    expect = want.stdout.strip()
    if "uniqueid=0 version=0/" not in expect or "plugin: rc=0" not in expect:
        raise t.Fail(f"the -lnccl build: {expect}")
    for i in range(runs):
        r = t.run([prog, plugin] + ([mode] if mode else []), env={}, timeout=30)
        t.equal((r.returncode, r.stdout.strip()), (0, expect), f"run {i + 1} of {runs}: {r.stderr}")


@case
def loader_lock_plugin_constructor():
    """A plugin's constructor calls NCCL while the main thread's first call
    loads it: completes like -lnccl, 100 runs out of 100."""
    # Sanitizer builds load the real NCCL ten times slower: fewer runs there.
    loader_lock_runs(None, 100 if t.SANITIZE in ("", "none") else 20)


@case
def loader_lock_after_explicit_load():
    """The same after lazynccl_load(): the first call of each other function
    takes no lock around dlsym that the constructor could wait on."""
    loader_lock_runs("load-first", 30 if t.SANITIZE in ("", "none") else 10)



# A static shim linked into a plugin that is unloaded (dlclose) takes its
# state with it: the messages a failed call recorded there are unreachable
# from then on, which LeakSanitizer reports at exit. The shared shim and
# the drop-in stay loaded, and keep theirs.
UNLOADED_STATIC = {"ASAN_OPTIONS": "detect_leaks=0"}


def join_programs(d, how, where):
    """join_first_call.c's program and plugin (where: 1 constructor, 2
    destructor), linked how: "plain" (-lnccl), "shared" or "static" shim."""
    real_dir = os.path.dirname(t.real_library("libnccl.so.2"))
    inc = [f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}"]
    if how == "plain":
        link = inc + [f"-L{real_dir}", f"-Wl,-rpath,{real_dir}", "-lnccl"] + t.sanitizer_link_args()
    elif how == "shared":
        link = t.link_shim_args("nccl")
    else:
        link = inc + [t.shim("nccl", static=True), "-ldl"] + t.sanitizer_link_args()
    src = os.path.join(t.PROGS, "join_first_call.c")
    plugin = t.compile_c(os.path.join(d, f"plugin_{how}_{where}.so"), [src],
                         [f"-DPLUGIN={where}", "-fPIC"] + link + ["-lpthread"], shared=True)
    prog = t.compile_c(os.path.join(d, f"join_{how}"), [src], link + ["-ldl"])
    return [prog, plugin]


def join_case(where, who, cause="which waits for this thread to end (pthread_join)"):
    d = t.workdir(f"join_first_call_{who}_{where}")
    plain = t.run(join_programs(d, "plain", where), env={}, timeout=60)
    version = plain.stdout.split("main: rc=0 version=")[-1].strip()
    t.equal((plain.returncode, plain.stdout), (0, f"{who}: rc=0 version={version}\n"
                                                 f"main: rc=0 version={version}\n"), "-lnccl")
    # The call under the lock gets NCCL's failure value (ncclSystemError)
    # and is not remembered: the next call loads.
    want = f"{who}: rc=2 version=-1\nmain: rc=0 version={version}\n"
    runs = [("shared shim", join_programs(d, "shared", where), {}),
            ("static shim", join_programs(d, "static", where), UNLOADED_STATIC),
            ("drop-in under lazynccl-run", [os.path.join(t.BUILD, "lazynccl-run"), "--"] +
             join_programs(d, "plain", where), {})]
    # The dynamic linker run as the program (AT_BASE is 0): its lock found
    # all the same.
    interp = subprocess.run(["readelf", "-l", "/bin/true"], capture_output=True, text=True).stdout
    ldso = interp.split("[Requesting program interpreter: ", 1)[1].split("]", 1)[0]
    runs.append(("shared shim under ld.so run as a command", [ldso] + join_programs(d, "shared", where), {}))
    for what, cmd, env in runs:
        r = t.run(cmd, env=dict(env, LAZYNCCL_DEBUG="1"), timeout=60)
        t.equal((r.returncode, r.stdout), (0, want), f"{what}: {r.stderr}")
        t.contains(r.stderr, cause, f"{what}: the log")


@case
def first_call_joined_by_a_constructor_ends():
    """A plugin's constructor (under the dynamic linker's lock) joins a
    thread whose first call would load NCCL: the call ends with the failure
    value instead of waiting for good, and the next call loads; shared
    shim, static shim and drop-in."""
    join_case(1, "constructor")


@case
def first_call_joined_after_its_look_at_the_lock_ends():
    """The lock free when the worker's first call begins, then taken by a
    plugin's constructor that joins the worker while the worker is still in
    its search (the program's chooser holds it there until the constructor
    runs): the call's own dlopen finds the lock held by a thread joining it
    and ends with the failure value, and the next call loads; shared and
    static shim (the chooser is theirs), and the static shims of NCCL and
    zlib linked together, the chooser making zlib's first call: a search
    inside the search, with one runtime."""
    d = t.workdir("join_race")
    src = os.path.join(t.PROGS, "join_race.c")
    plugin = t.compile_c(os.path.join(d, "plugin.so"), [src], ["-DPLUGIN", "-fPIC",
                         f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}"] + t.sanitizer_link_args(),
                         shared=True)
    inc = [f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}", f"-I{t.SHIMS}"]
    builds = {"shared shim": (t.link_shim_args("nccl"), {}),
              "static shim": (inc + [t.shim("nccl", static=True), "-ldl"] + t.sanitizer_link_args(), {}),
              # A search inside the search (the chooser's first call of
              # zlib): the static shims share one runtime, whose marks the
              # inner search must put back.
              "static shims, a zlib first call in the chooser":
                  (inc + ["-DNESTED_ZLIB", t.shim("nccl", static=True), t.shim("zlib", static=True), "-ldl"] +
                   t.sanitizer_link_args(), UNLOADED_STATIC)}
    for what, (link, env) in builds.items():
        prog = t.compile_c(os.path.join(d, what.replace(" ", "_")), [src],
                           link + ["-ldl", "-lpthread", "-rdynamic"])
        r = t.run([prog, plugin], env=dict(env, LAZYNCCL_DEBUG="1"), timeout=60)
        version = r.stdout.split("main: rc=0 version=")[-1].strip()
        t.equal((r.returncode, r.stdout), (0, f"worker: rc=2 version=-1\nmain: rc=0 version={version}\n"),
                f"{what}: {r.stderr}")
        t.contains(r.stderr, "which waits for this thread to end (pthread_join)", f"{what}: the log")


@case
def first_call_joined_after_its_choice_publishes_nothing():
    """The lock taken after a first call's search has opened its file and
    before it reads the library's variables (SQLite's, with dlsym), by a
    plugin's constructor that joins the worker: the worker's call gets its
    failure value, nothing is published, and the main thread's SQLite then
    holds the library's values and answers as with -lsqlite3 (published
    with its variables unfilled, SQLite parsed nothing)."""
    if not os.path.exists(t.shim("sqlite")) or not os.path.exists("/usr/include/sqlite3.h"):
        raise t.Skip("liblazysqlite or sqlite3.h is missing (libsqlite3-dev)")
    d = t.workdir("join_prepare")
    src = os.path.join(t.PROGS, "join_prepare.c")
    plugin = t.compile_c(os.path.join(d, "plugin.so"), [src], ["-DPLUGIN", "-fPIC"] + t.sanitizer_link_args(),
                         shared=True)
    plain = t.compile_c(os.path.join(d, "plain"), [src], ["-lsqlite3", "-ldl", "-lpthread", "-rdynamic"] +
                        t.sanitizer_link_args())
    shimmed = t.compile_c(os.path.join(d, "shimmed"), [src], ["-DLZ_SHIM"] + t.link_shim_args("sqlite") +
                          ["-ldl", "-lpthread", "-rdynamic"])
    want = t.run([plain, plugin], env={}, timeout=60)
    version = want.stdout.split("worker: ", 1)[-1].split("\n", 1)[0]
    t.equal((want.returncode, want.stdout), (0, f"worker: {version}\nmain: LAZY 42\nmain: {version}\n"),
            f"-lsqlite3: {want.stderr}")
    r = t.run([shimmed, plugin], env={}, timeout=60)
    t.equal((r.returncode, r.stdout), (0, f"worker: (null)\nmain: LAZY 42\nmain: {version}\n"),
            f"the shared shim: {r.stderr}")


@case
def first_call_joined_by_a_destructor_ends():
    """The same from a plugin's destructor at dlclose."""
    join_case(2, "destructor")


@case
def function_first_called_under_a_join_after_the_load():
    """The library loaded already (the program's first call), a function
    not yet called is first called from a thread that a plugin's
    constructor joins: it is found in the library's own table in memory
    (dlsym would wait for the lock for good) and answers as with -lnccl,
    through the shared shim and the drop-in. A static shim linked into the
    plugin is a copy of its own, whose library is not loaded yet: its call
    is a first call, and ends with the failure value."""
    d = t.workdir("join_loaded")
    plain = t.run(join_programs(d, "plain", 4) + ["first"], env={}, timeout=60)
    t.equal(plain.returncode, 0, f"-lnccl: {plain.stderr}")
    t.contains(plain.stdout, "constructor: pncclGetVersion rc=0 version=", "-lnccl")
    busy = re.sub(r"constructor: pncclGetVersion rc=0 version=\d+", "constructor: pncclGetVersion rc=2 "
                  "version=-1", plain.stdout)
    for what, cmd, want in (("shared shim", join_programs(d, "shared", 4), plain.stdout),
                            ("static shim", join_programs(d, "static", 4), busy),
                            ("drop-in", [os.path.join(t.BUILD, "lazynccl-run"), "--"] +
                             join_programs(d, "plain", 4), plain.stdout)):
        # Under lazynccl-run in the ASan build, LeakSanitizer's own tracer
        # thread crashes at this process's exit (signal 11 in StopTheWorld,
        # after main returned): its leak check is left out of that row.
        env = UNLOADED_STATIC if what in ("static shim", "drop-in") else {}
        r = t.run(cmd + ["first"], env=env, timeout=60)
        t.equal((r.returncode, r.stdout), (0, want), f"{what}: {r.stderr}")


def loads_as_plain(name, where):
    """join_first_call.c's plugin where (no deadlock): its worker's first
    call waits for the lock and loads NCCL, answering as with -lnccl,
    through the shared shim, the static shim and the drop-in."""
    d = t.workdir(name)
    plain = t.run(join_programs(d, "plain", where), env={}, timeout=60)
    t.equal(plain.returncode, 0, f"-lnccl: {plain.stderr}")
    t.contains(plain.stdout, "constructor: rc=0 version=", "-lnccl")
    for what, cmd in (("shared shim", join_programs(d, "shared", where)),
                      ("static shim", join_programs(d, "static", where)),
                      ("drop-in", [os.path.join(t.BUILD, "lazynccl-run"), "--"] +
                       join_programs(d, "plain", where))):
        r = t.run(cmd, env=UNLOADED_STATIC if what == "static shim" else {}, timeout=60)
        t.equal((r.returncode, r.stdout), (0, plain.stdout), f"{what}: {r.stderr}")


# TSan's runtime keeps a thread of its own that wakes every 100 ms: no
# thread of such a process ever sleeps for good, so a first call under a
# holder's condition wait waits, as docs/reference/limitations.md says.
NO_SLEEP_FOR_GOOD = "thread" in t.SANITIZE


@case
def first_call_under_a_condition_wait_ends():
    """A plugin's constructor waits on a condition variable that the worker
    signals after its first call, no other thread awake: the call ends with
    the failure value instead of waiting for good (the log says the holder
    sleeps while every other thread does), and the next call loads; shared
    shim, static shim, drop-in."""
    if NO_SLEEP_FOR_GOOD:
        raise t.Skip("TSan's own thread wakes every 100 ms: no thread sleeps for good here")
    join_case(5, "constructor", "which sleeps in a futex wait (a condition variable or a lock) "
              "while every other thread of the process sleeps too")


@case
def first_call_under_a_condition_wait_with_a_waker_loads():
    """The same wait, signalled by a third thread after 300 ms instead: a
    thread awake may yet wake the holder, so the worker's first call waits
    for the lock and loads NCCL, answering as with -lnccl."""
    loads_as_plain("join_condition_waker", 6)


@case
def first_call_under_a_timed_join_loads():
    """A constructor that joins the worker with a 1 s timeout, and returns
    (the program joins the worker later): no deadlock, so the worker's first
    call waits for the lock and loads NCCL, answering as with -lnccl,
    through the shared shim, the static shim and the drop-in."""
    loads_as_plain("join_timed", 3)



@case
def first_call_without_failure_value_joined_stops_saying_why():
    """The same shape with a function that has no failure value (cuDNN's
    void cudnnGetLastErrorString): the process stops with exit 127 saying
    that the dynamic linker's lock is held by a thread joining this one,
    not that the library is missing (it is never searched for)."""
    d = t.workdir("join_void")
    with open(f"{d}/plugin.c", "w") as f:
        f.write("#include <cudnn.h>\n#include <pthread.h>\n"
                "static void *work(void *a) { char m[64]; (void)a; cudnnGetLastErrorString(m, sizeof m); "
                "return 0; }\n"
                "__attribute__((constructor)) static void at_load(void) { pthread_t t; "
                "if (pthread_create(&t, 0, work, 0) == 0) pthread_join(t, 0); }\n")
    with open(f"{d}/main.c", "w") as f:
        f.write("#include <dlfcn.h>\n#include <stdio.h>\nint main(int c, char **v) { (void)c; "
                "void *h = dlopen(v[1], RTLD_NOW); printf(\"back %d\\n\", h != 0); return 0; }\n")
    plugin = t.compile_c(f"{d}/plugin.so", [f"{d}/plugin.c", "-fPIC", "-lpthread"] +
                         t.link_shim_args("cudnn"), shared=True)
    prog = t.compile_c(f"{d}/main", [f"{d}/main.c", "-ldl"] + t.sanitizer_link_args())
    r = t.run([prog, plugin], env={}, timeout=60)
    t.equal((r.returncode, r.stdout), (127, ""), f"exit status: {r.stderr}")
    t.contains(r.stderr, "lazycudnn: cudnnGetLastErrorString was called while the dynamic linker's "
                         "lock is held by a thread that waits for this one to end (pthread_join)",
               "its own words")
    t.check("error while loading shared libraries" not in r.stderr, f"not a missing library: {r.stderr}")

# --- libelf from caller-controlled places (item 10) ------------------------------

@case
def libelf_never_from_caller_places():
    """A libelf.so.1 planted in CONDA_PREFIX, CUDA_HOME, CUDA_PATH, NCCL_HOME,
    LD_LIBRARY_PATH or a run path is never loaded (it cannot be probed before
    it is loaded): lazynccl-info and would_load run no constructor, and still
    probe with the system's libelf."""
    d = t.workdir("libelf_planted")
    log = f"{d}/ctor.log"
    dirs = {k: f"{d}/{k.lower()}" for k in ("CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH", "NCCL_HOME")}
    for k, root in dirs.items():
        for sub in ("lib", "lib64"):
            os.makedirs(os.path.join(root, sub), exist_ok=True)
            t.compile_c(os.path.join(root, sub, "libelf.so.1"),
                        [os.path.join(t.FAKES, "fake_libelf.c")],
                        [f"-I{t.FAKES}", f'-DFAKE_NAME="{k}/{sub}"', "-Wl,-soname,libelf.so.1"],
                        shared=True)
    llp = f"{d}/llp"
    os.makedirs(llp, exist_ok=True)
    t.compile_c(f"{llp}/libelf.so.1", [os.path.join(t.FAKES, "fake_libelf.c")],
                [f"-I{t.FAKES}", '-DFAKE_NAME="LD_LIBRARY_PATH"', "-Wl,-soname,libelf.so.1"],
                shared=True)
    env = dict(dirs, LD_LIBRARY_PATH=llp, LZ_CTOR_LOG=log)
    r = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--json", "nccl"], env=env, timeout=30)
    doc = json.loads(r.stdout)
    t.equal(os.path.exists(log), False, "a planted libelf ran its constructor")
    t.contains(json.dumps(doc["libraries"][0]["candidates"]), "\"soname\": \"libnccl.so.2\"",
               "candidates were probed (read with the system's libelf)")
    client = nccl_client(d)
    r = t.run([client, "wouldload"], env=env, timeout=30)
    t.contains(r.stdout, "would=1", "would_load found the real NCCL")
    t.equal(os.path.exists(log), False, f"would_load ran a planted constructor: {r.stdout}")



# --- LD_LIBRARY_PATH entries ld.so honours (item 12) ---------------------------

@case
def ld_library_path_like_ld_so():
    """Relative, empty and $ORIGIN entries of LD_LIBRARY_PATH are followed as
    the dynamic linker follows them (checked against ld.so itself: a program
    linked -lnccl maps the same file), not skipped."""
    d = t.workdir("llp_like_ld_so")
    os.makedirs(f"{d}/bin", exist_ok=True)
    fakes = {
        "rel": t.fake_nccl(f"{d}/work/rel", version=3101),
        "empty": t.fake_nccl(f"{d}/work", version=3102),
        "origin": t.fake_nccl(f"{d}/bin/lib", version=3103),
    }
    link = t.fake_nccl(f"{d}/link", version=1)
    oracle = t.compile_c(f"{d}/bin/which_nccl", [os.path.join(t.PROGS, "which_nccl.c")],
                         [f"-L{d}/link", "-l:libnccl.so.2"])
    client = nccl_client(f"{d}/bin")
    cases = [("rel", "rel:/nonexistent"), ("empty", "/nonexistent::/nonexistent2"),
             ("origin", "$ORIGIN/lib")]
    for name, llp in cases:
        env = {"LD_LIBRARY_PATH": llp, "LAZYNCCL_DEBUG": "1"}
        e = dict(os.environ, **env)
        ld = subprocess.run([oracle], env=e, cwd=f"{d}/work", capture_output=True, text=True)
        t.equal(os.path.realpath(ld.stdout.strip()), os.path.realpath(fakes[name]),
                f"ld.so with LD_LIBRARY_PATH={llp}: {ld.stderr}")
        r = subprocess.run([client, "version"], env=e, cwd=f"{d}/work", capture_output=True,
                           text=True, timeout=30)
        want = {"rel": 3101, "empty": 3102, "origin": 3103}[name]
        t.contains(r.stdout, f"version={want}", f"the shim with LD_LIBRARY_PATH={llp}: {r.stderr}")
        t.contains(r.stderr, f"[LD_LIBRARY_PATH] {os.path.realpath(fakes[name])}: chosen",
                   "reported as an absolute path found by LD_LIBRARY_PATH")
    del link


@case
def origin_of_program_like_ld_so():
    """$ORIGIN of the program, in a directory whose name /proc/self/maps
    writes differently from the file system (a newline: "\\012") and in a
    plain one: the shim takes the program's directory from /proc/self/exe
    (the bytes of the name), as ld.so does; either way the file ld.so
    itself maps."""
    d = t.workdir("origin_of_program")
    link = t.fake_nccl(f"{d}/link", version=1)
    for i, sub in enumerate(("plain bin", "new\nline")):
        # built where a name is plain (the fake embeds its path), then copied
        stage, bin_dir = f"{d}/stage{i}", f"{d}/{sub}"
        os.makedirs(f"{bin_dir}/lib", exist_ok=True)
        fake = shutil.copy(t.fake_nccl(f"{stage}/lib", version=3201 + i), f"{bin_dir}/lib/")
        oracle = shutil.copy(t.compile_c(f"{stage}/which_nccl", [os.path.join(t.PROGS, "which_nccl.c")],
                                         [f"-L{d}/link", "-l:libnccl.so.2"]), bin_dir)
        client = shutil.copy(nccl_client(stage), bin_dir)
        e = dict(os.environ, LD_LIBRARY_PATH="$ORIGIN/lib", LAZYNCCL_DEBUG="1")
        ld = subprocess.run([oracle], env=e, capture_output=True, text=True)
        mapped = ld.stdout.strip().replace("\\012", "\n")  # the oracle reads the maps too
        t.equal(os.path.realpath(mapped), os.path.realpath(fake),
                f"ld.so with $ORIGIN/lib, program in {sub!r}: {ld.stderr}")
        r = subprocess.run([client, "version"], env=e, capture_output=True, text=True, timeout=30)
        t.contains(r.stdout, f"version={3201 + i}", f"the shim, program in {sub!r}: {r.stderr}")
        t.contains(r.stderr, f"[LD_LIBRARY_PATH] {os.path.realpath(fake)}: chosen",
                   f"found through $ORIGIN of the program in {sub!r}")
    del link


if __name__ == "__main__":
    raise SystemExit(t.main())
