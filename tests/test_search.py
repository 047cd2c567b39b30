#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The search order, reuse, the probe's verdicts, versioned names, the
control API and secure execution, against fake libraries and trees staged
here. Each step has a case that shows it is used and one that it yields to
the step before it."""
import json
import os
import re
import shutil
import stat

import lztest as t
from lztest import case


def client(d, shim_dir=None):
    args = t.link_shim_args("nccl")
    if shim_dir:  # link the copy of the shim in shim_dir instead of the build's
        args = [a for a in args if not a.startswith(("-L", "-Wl,-rpath"))]
        args += [f"-L{shim_dir}", f"-Wl,-rpath,{shim_dir}"]
    return t.compile_c(os.path.join(d, "client"), [os.path.join(t.PROGS, "nccl_client.c")], args)


def call(exe, env, *names, prefix=()):
    out = t.run([exe, *prefix, "call", *(names or ["ncclGetVersion"])], env=env, check_rc=0).stdout
    return out


def loaded_line(out):
    return [l for l in out.splitlines() if l.startswith("loaded=")][0]


def ctor_log(path):
    try:
        with open(path) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


# --- 1. the override -------------------------------------------------------

@case
def step_override_wins():
    """LAZYNCCL_LIBPATH beats every other step (here CONDA_PREFIX)."""
    d = t.workdir("step_override_wins")
    a = t.fake_nccl(f"{d}/override", version=1)
    t.fake_nccl(f"{d}/conda/lib", version=2)
    out = call(client(d), {"LAZYNCCL_LIBPATH": a, "CONDA_PREFIX": f"{d}/conda"})
    t.contains(out, "ncclGetVersion: rc=0 value=1", "override answer")
    t.equal(loaded_line(out), f"loaded={a} step=LAZYNCCL_LIBPATH copies=1", "loaded")


# --- 2. a copy already loaded ------------------------------------------------

@case
def step_loaded_reuse():
    """A copy loaded by path before the first call is reused: one copy mapped."""
    d = t.workdir("step_loaded_reuse")
    pre = t.fake_nccl(f"{d}/torch", version=3)
    t.fake_nccl(f"{d}/conda/lib", version=4)
    log = f"{d}/ctor.log"
    out = call(client(d), {"CONDA_PREFIX": f"{d}/conda", "LZ_CTOR_LOG": log}, prefix=["preload", pre])
    t.contains(out, "ncclGetVersion: rc=0 value=3", "reused copy answers")
    t.equal(loaded_line(out), f"loaded={pre} step=already loaded copies=1", "loaded")
    t.equal(ctor_log(log), [pre], "constructors run")


@case
def step_loaded_yields_to_override():
    """The override is authoritative even when another copy is loaded."""
    d = t.workdir("step_loaded_yields_to_override")
    pre = t.fake_nccl(f"{d}/torch", version=3)
    a = t.fake_nccl(f"{d}/override", version=5)
    out = call(client(d), {"LAZYNCCL_LIBPATH": a}, prefix=["preload", pre])
    t.contains(out, "ncclGetVersion: rc=0 value=5", "override answer")
    t.contains(loaded_line(out), "step=LAZYNCCL_LIBPATH", "step")


# --- 3. wheels ---------------------------------------------------------------

def wheel_tree(d, version):
    """site-packages/pkg/liblazynccl.so (the shim, vendored) and
    site-packages/nvidia/nccl/lib/libnccl.so.2 (a fake wheel)."""
    site = f"{d}/venv/lib/python3.11/site-packages"
    os.makedirs(f"{site}/pkg")
    for name in ("liblazynccl.so", "liblazynccl.so.0"):
        shutil.copy(t.shim("nccl"), f"{site}/pkg/{name}")
    fake = t.fake_nccl(f"{site}/nvidia/nccl/lib", version=version)
    return site, fake


@case
def step_wheel():
    """A shim in site-packages/pkg/ finds site-packages/nvidia/nccl/lib first."""
    d = t.workdir("step_wheel")
    site, fake = wheel_tree(d, version=6)
    t.fake_nccl(f"{d}/conda/lib", version=7)
    out = call(client(d, shim_dir=f"{site}/pkg"), {"CONDA_PREFIX": f"{d}/conda"})
    t.contains(out, "ncclGetVersion: rc=0 value=6", "wheel answer")
    t.equal(loaded_line(out), f"loaded={fake} step=wheel copies=1", "loaded")


@case
def step_wheel_yields_to_loaded():
    """A copy already loaded beats the wheel layout."""
    d = t.workdir("step_wheel_yields_to_loaded")
    site, _ = wheel_tree(d, version=6)
    pre = t.fake_nccl(f"{d}/torch", version=8)
    out = call(client(d, shim_dir=f"{site}/pkg"), {}, prefix=["preload", pre])
    t.contains(out, "ncclGetVersion: rc=0 value=8", "loaded copy answers")
    t.equal(loaded_line(out), f"loaded={pre} step=already loaded copies=1", "loaded")


@case
def step_wheel_pythonpath():
    """pip install --target DIR, run with PYTHONPATH=DIR: a shim outside any
    site-packages finds DIR/nvidia/nccl/lib (after its own site-packages and
    those of loaded objects; never in secure mode, tested in test_hardening)."""
    d = t.workdir("step_wheel_pythonpath")
    fake = t.fake_nccl(f"{d}/target/nvidia/nccl/lib", version=11)
    t.fake_nccl(f"{d}/conda/lib", version=7)
    os.makedirs(f"{d}/elsewhere")
    env = {"PYTHONPATH": f"{d}/elsewhere:{d}/target", "CONDA_PREFIX": f"{d}/conda"}
    out = call(client(d), env)
    t.contains(out, "ncclGetVersion: rc=0 value=11", "the PYTHONPATH wheel answers")
    t.equal(loaded_line(out), f"loaded={fake} step=wheel copies=1", "loaded")
    info = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--json", "--from",
                  f"{d}/elsewhere/liblazynccl.so", "nccl"], env=env)
    chosen = json.loads(info.stdout)["libraries"][0]["chosen"]
    t.equal((chosen["step"], chosen["path"]), ("wheel", fake), "lazynccl-info --from agrees")


def client_with_venv_object(d, version, via=None):
    """A venv whose site-packages holds a fake NCCL wheel and an object that
    is not NCCL (site-packages/numpylike/libother.so), and a client the
    shim is linked into, outside it, that needs that object through the
    directory via (default: where it lies): (site, fake, client)."""
    site = f"{d}/venv/lib/python3.11/site-packages"
    fake = t.fake_nccl(f"{site}/nvidia/nccl/lib", version=version)
    os.makedirs(f"{site}/numpylike")
    with open(f"{d}/other.c", "w") as f:
        f.write("int numpylike_answer(void) { return 42; }\n")
    t.compile_c(f"{site}/numpylike/libother.so", [f"{d}/other.c"], [], shared=True)
    via = via(site) if via else f"{site}/numpylike"
    # The program needs it (as python3 needs numpy's objects once imported);
    # not LD_PRELOAD, which a sanitizer's runtime must come before.
    exe = t.compile_c(os.path.join(d, "client"), [os.path.join(t.PROGS, "nccl_client.c")],
                      t.link_shim_args("nccl") + ["-Wl,--no-as-needed", f"-L{via}", "-lother",
                                                  f"-Wl,-rpath,{via}"])
    return site, fake, exe


@case
def step_wheel_site_of_loaded_object():
    """A shim outside site-packages in a process that loaded an object from a
    venv's site-packages (the interpreter's own packages) finds that venv's
    nvidia/nccl/lib, before PYTHONPATH's."""
    d = t.workdir("step_wheel_loaded_site")
    _, fake, exe = client_with_venv_object(d, 12)
    t.fake_nccl(f"{d}/target/nvidia/nccl/lib", version=11)
    out = call(exe, {"PYTHONPATH": f"{d}/target"})
    t.contains(out, "ncclGetVersion: rc=0 value=12", "the loaded object's venv answers")
    t.equal(loaded_line(out), f"loaded={fake} step=wheel copies=1", "loaded")


@case
def step_wheel_site_of_object_named_through_dotdot():
    """A loaded object named as the dynamic linker opened it, through a run
    path with ".." ($ORIGIN/../../numpylike of a framework's library): the
    site-packages its name passes through, made real, is searched."""
    d = t.workdir("step_wheel_dotdot")
    os.makedirs(f"{d}/venv/lib/python3.11/site-packages/torchlike/lib")
    _, fake, exe = client_with_venv_object(d, 13, via=lambda site: f"{site}/torchlike/lib/../../numpylike")
    out = call(exe, {})
    t.contains(out, "ncclGetVersion: rc=0 value=13", "the object's site-packages answers")
    t.equal(loaded_line(out), f"loaded={fake} step=wheel copies=1", "loaded")


@case
def step_wheel_program_in_site_packages():
    """A program that lies in a site-packages (a wheel's executable, run by
    its path) is a loaded object too: its site-packages is searched; run
    through a symbolic link from elsewhere, the name it was run by holds no
    site-packages and the step does not look (docs/reference/search-order.md,
    "Limits of the wheel step")."""
    d = t.workdir("step_wheel_program")
    site = f"{d}/venv/lib/python3.11/site-packages"
    fake = t.fake_nccl(f"{site}/nvidia/nccl/lib", version=14)
    other = t.fake_nccl(f"{d}/conda/lib", version=7)
    os.makedirs(f"{site}/tool/bin")
    exe = t.compile_c(f"{site}/tool/bin/client", [os.path.join(t.PROGS, "nccl_client.c")],
                      t.link_shim_args("nccl"))
    env = {"CONDA_PREFIX": f"{d}/conda"}
    out = call(exe, env)
    t.contains(out, "ncclGetVersion: rc=0 value=14", "the program's site-packages answers")
    t.equal(loaded_line(out), f"loaded={fake} step=wheel copies=1", "loaded")
    os.symlink(exe, f"{d}/client-link")
    out = call(f"{d}/client-link", env)
    t.contains(out, "ncclGetVersion: rc=0 value=7", "through a link: the next step answers")
    t.equal(loaded_line(out), f"loaded={other} step=CONDA_PREFIX copies=1", "loaded")


@case
def first_call_reads_nothing_under_proc():
    """A first call that runs every step up to the dynamic linker's, in a
    program whose run path has no $ORIGIN, opens and reads nothing under
    /proc: the wheel step takes the
    loaded objects from the dynamic linker, not from /proc/self/maps. With
    $ORIGIN in the program's run path, the one access is /proc/self/exe,
    as ld.so's own expansion of it (the kernel's name for the program).
    Linked to the static shim, whose runtime is in the program, none
    either: the program's own site is looked for only where the name it
    was run by passes through a site directory."""
    d = t.workdir("first_call_proc")
    fake = t.fake_nccl(f"{d}/lib", version=15)
    srcs = [os.path.join(t.PROGS, "nccl_client.c"), os.path.join(t.PROGS, "proc_count.c")]
    plain = t.compile_c(f"{d}/plain", srcs, t.link_shim_args("nccl") + ["-ldl"])
    os.makedirs(f"{d}/bin")
    origin = t.compile_c(f"{d}/bin/origin", srcs, t.link_shim_args("nccl") + ["-ldl", "-Wl,-rpath,$ORIGIN/../lib"])
    includes = [a for a in t.link_shim_args() if a.startswith("-I")]
    static = t.compile_c(f"{d}/static", srcs, includes + [os.path.join(t.SHIMS, "liblazynccl.a"), "-ldl",
                                                          "-lpthread"] + t.sanitizer_link_args())
    for exe, want in ((plain, 0), (origin, 1), (static, 0)):
        # found by the linker's step (every step before it runs): through
        # the program's run path, or LD_LIBRARY_PATH for the plain one
        env = {} if exe == origin else {"LD_LIBRARY_PATH": f"{d}/lib"}
        out = call(exe, env)
        t.contains(out, "ncclGetVersion: rc=0 value=15", f"{exe}: the fake answers")
        path = loaded_line(out).split()[0][len("loaded="):]
        t.equal(os.path.realpath(path), os.path.realpath(fake), f"{exe}: loaded")
        t.contains(out, f"proc_accesses={want}\n", f"{exe}: accesses under /proc")


@case
def first_call_system_calls_real_nccl():
    """The first call finds the real NCCL through ld.so.cache, in a process
    whose $CONDA_PREFIX/lib holds no NCCL (a conda environment without it),
    with the system calls the search needs and no others: a quiet walk does not stat or faccessat a directory
    only to say why it was of no use (the report of a failure, which runs
    the walk again, still does: unreadable_and_dangling_directories).
    The probe reads NCCL's scattered tables (header and hash table,
    dynamic section, strings and versions, the symbols of the names asked)
    in at most five preads."""
    real = os.path.realpath(t.real_library("libnccl.so.2"))
    if not shutil.which("strace"):
        raise t.Skip("strace is not installed")
    d = t.workdir("first_call_syscalls")
    exe = client(d)
    log = f"{d}/trace"
    # LeakSanitizer refuses to run under ptrace; the leak check is not what this case asks
    env = {"ASAN_OPTIONS": "detect_leaks=0"} if t.SANITIZE not in ("", "none") else {}
    os.makedirs(f"{d}/conda/lib")
    env["CONDA_PREFIX"] = f"{d}/conda"
    out = t.run(["strace", "-qq", "-e", "trace=openat,pread64,close,newfstatat,stat,faccessat,faccessat2,getpid",
                 "-o", log, exe, "call", "ncclGetVersion"], env=env, check_rc=0).stdout
    path = loaded_line(out).split()[0][len("loaded="):]
    t.equal(os.path.realpath(path), real, "the real NCCL loaded")
    lines = open(log).read().splitlines()
    # the probe's open (O_NONBLOCK: a FIFO is never waited on), its reads, its close
    probe = [i for i, l in enumerate(lines) if l.startswith("openat(") and "O_NONBLOCK" in l
             and os.path.basename(real) in l and os.path.realpath(l.split('"')[1]) == real]
    t.equal(len(probe), 1, f"one probe of {real}")
    fd = lines[probe[0]].rsplit("= ", 1)[1].strip()
    reads = []
    for l in lines[probe[0] + 1:]:
        if l.startswith(f"close({fd})"):
            break
        if l.startswith(f"pread64({fd},"):
            reads.append(l)
    # header and hash table, dynamic section, strings and versions, and the
    # symbols of every name the process needs (two windows of NCCL's)
    t.check(1 <= len(reads) <= 5, f"the probe of NCCL read it in {len(reads)} preads (at most 5):\n"
            + "\n".join(reads))
    # the probe's identity and size are its stat's: no fstat of its descriptor
    # (a file swapped in between is refused after the dlopen, tested by
    # file_swapped_after_probe_is_refused)
    end = next(i for i in range(probe[0] + 1, len(lines)) if lines[i].startswith(f"close({fd})"))
    fstats = [l for l in lines[probe[0] + 1:end] if l.startswith(f"newfstatat({fd},")]
    t.equal(fstats, [], "fstat of the probe's descriptor")
    # after the search began, the fork check (a getpid) runs for the lookup
    # after the load and for the client's lazynccl_loaded_path, not in the
    # lock that ends the search
    if t.SANITIZE in ("", "none"):  # a sanitizer's runtime makes getpid calls of its own
        after = [l for l in lines[probe[0]:] if l.startswith("getpid(")]
        t.check(len(after) <= 2, f"{len(after)} getpid calls after the probe (at most 2)")
    # $CONDA_PREFIX/lib: its candidate is looked for (a stat of the file),
    # the directory itself is not examined (ld.so never reads CONDA_PREFIX:
    # every line naming it is ours)
    conda = [l for l in lines if f'"{d}/conda' in l]
    t.equal([l.split('"')[1] for l in conda], [f"{d}/conda/lib/libnccl.so.2"],
            "the quiet walk's system calls on $CONDA_PREFIX/lib")


# --- 4. and 5. environment directories ---------------------------------------

@case
def step_conda():
    """$CONDA_PREFIX/lib beats $CUDA_HOME."""
    d = t.workdir("step_conda")
    c = t.fake_nccl(f"{d}/conda/lib", version=9)
    t.fake_nccl(f"{d}/cuda/lib64", version=10)
    out = call(client(d), {"CONDA_PREFIX": f"{d}/conda", "CUDA_HOME": f"{d}/cuda"})
    t.contains(out, "ncclGetVersion: rc=0 value=9", "conda answer")
    t.equal(loaded_line(out), f"loaded={c} step=CONDA_PREFIX copies=1", "loaded")


def without_ld_cache(cmd, env):
    """Run cmd in a private mount namespace where /etc/ld.so.cache is empty,
    so that the real libraries it names do not come before steps 6 and 7."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        raise t.Skip("needs root and unshare to hide ld.so.cache")
    script = 'mount --bind /dev/null /etc/ld.so.cache && exec "$@"'
    r = t.run(["unshare", "-m", "sh", "-c", script, "sh"] + cmd, env=env)
    if "unshare failed" in r.stderr or "mount:" in r.stderr:
        raise t.Skip(f"no private mount namespace here: {r.stderr.strip()}")
    return r


@case
def step_cuda_home():
    """$CUDA_HOME/lib64 beats $NCCL_HOME, and yields to LD_LIBRARY_PATH (as
    for a program linked -lnccl, and in cuda.pathfinder)."""
    d = t.workdir("step_cuda_home")
    h = t.fake_nccl(f"{d}/cuda/lib64", version=11)
    t.fake_nccl(f"{d}/nccl/lib", version=12)
    llp = t.fake_nccl(f"{d}/llp", version=13)
    exe = client(d)
    env = {"CUDA_HOME": f"{d}/cuda", "NCCL_HOME": f"{d}/nccl"}
    r = without_ld_cache([exe, "call", "ncclGetVersion"], env)
    t.contains(r.stdout, "ncclGetVersion: rc=0 value=11", "CUDA_HOME answer")
    t.equal(loaded_line(r.stdout), f"loaded={h} step=CUDA_HOME copies=1", "loaded")
    out = call(exe, dict(env, LD_LIBRARY_PATH=f"{d}/llp"))
    t.equal(loaded_line(out), f"loaded={llp} step=LD_LIBRARY_PATH copies=1",
            "LD_LIBRARY_PATH before CUDA_HOME")


@case
def step_nccl_home():
    """$NCCL_HOME/lib is used after the dynamic linker's search."""
    d = t.workdir("step_nccl_home")
    n = t.fake_nccl(f"{d}/nccl/lib", version=12)
    r = without_ld_cache([client(d), "call", "ncclGetVersion"], {"NCCL_HOME": f"{d}/nccl"})
    t.equal(loaded_line(r.stdout), f"loaded={n} step=NCCL_HOME copies=1", "loaded")


# --- 6. the dynamic linker's search -------------------------------------------

@case
def step_ld_library_path():
    """LD_LIBRARY_PATH beats ld.so.cache (where the real NCCL may be)."""
    d = t.workdir("step_ld_library_path")
    llp = t.fake_nccl(f"{d}/llp", version=13)
    out = call(client(d), {"LD_LIBRARY_PATH": f"::relative:{d}/llp"})
    t.contains(out, "ncclGetVersion: rc=0 value=13", "LD_LIBRARY_PATH answer")
    t.equal(loaded_line(out), f"loaded={llp} step=LD_LIBRARY_PATH copies=1", "loaded")


@case
def ld_library_path_beside_glibc_tunables():
    """A GLIBC_TUNABLES entry after LD_LIBRARY_PATH whose value holds
    ":LD_LIBRARY_PATH=x" (a short directory, relative to the current one)
    past a setting glibc knows: glibc's start-up cuts that string in place,
    and what follows the cut is no variable. The first call searches the
    LD_LIBRARY_PATH ld.so searched, as a program linked -lnccl loads from
    it."""
    d = t.workdir("llp_tunables")
    llp = t.fake_nccl(f"{d}/llp", version=14)
    decoy = t.fake_nccl(f"{d}/x", version=15)
    env = {"LD_LIBRARY_PATH": f"{d}/llp", "GLIBC_TUNABLES": "glibc.malloc.check=0:LD_LIBRARY_PATH=x"}
    direct = t.version_prog(d, "direct", [f"-L{d}/llp", "-l:libnccl.so.2"])
    t.equal(t.run([direct], env=env, cwd=d, check_rc=0).stdout, "rc=0 version=14\n", "plain")
    out = t.run([client(d), "call", "ncclGetVersion"], env=env, cwd=d, check_rc=0).stdout
    t.contains(out, "ncclGetVersion: rc=0 value=14", f"the first call (not {decoy})")
    t.equal(loaded_line(out), f"loaded={llp} step=LD_LIBRARY_PATH copies=1", "loaded")


@case
def step_ld_so_cache():
    """With no variable set, the real NCCL comes from ld.so.cache."""
    r = t.run(["/sbin/ldconfig", "-p"])
    if "libnccl.so.2 " not in r.stdout:
        raise t.Skip("libnccl.so.2 is not in ld.so.cache here")
    d = t.workdir("step_ld_so_cache")
    out = call(client(d), {})
    t.contains(out, "ncclGetVersion: rc=0 value=2", "real NCCL version")
    t.contains(loaded_line(out), "step=ld.so.cache copies=1", "step")


def ldcache_lookup(d):
    """tests/progs/ldcache_lookup.c with the runtime's ld.so.cache reader."""
    src = os.path.join(t.SOURCE, "src")
    return t.compile_c(os.path.join(d, "ldcache_lookup"),
                       [os.path.join(t.PROGS, "ldcache_lookup.c"), os.path.join(src, "elf", "lz_ldcache.c")],
                       ["-I" + src, "-D_GNU_SOURCE"])


@case
def ld_so_cache_lookup_as_ldconfig():
    """The runtime's ld.so.cache lookup (a binary search, as ld.so's) gives,
    for every soname in this machine's cache, the first entry of this
    machine's kind that `ldconfig -p` lists for it; names not in the cache,
    and prefixes or extensions of names in it, give nothing."""
    import platform
    if t.HOST_CPU != platform.machine().replace("arm64", "aarch64"):
        raise t.Skip("the cache is this machine's; the runtime under test is built for another")
    tag = {"x86_64": "libc6,x86-64", "aarch64": "libc6,AArch64"}.get(t.HOST_CPU)
    if not tag or not os.path.exists("/etc/ld.so.cache"):
        raise t.Skip("no ld.so.cache of a known kind here")
    want = {}
    for line in t.run(["/sbin/ldconfig", "-p"], check_rc=0).stdout.splitlines()[1:]:
        m = re.match(r"\s+(\S+) \(([^)]*)\) => (\S+)$", line)
        if m and (m.group(2) == tag or m.group(2).startswith(tag + ",")):
            want.setdefault(m.group(1), m.group(3))
    t.check(len(want) > 20, f"ldconfig -p lists sonames: {len(want)}")
    exe = ldcache_lookup(t.workdir("ldcache_lookup"))
    absent = ["libnot-there.so.1", "libc.so", "libc.so.60", "libc.so.6.1", "lib", ""]
    names = sorted(want) + [n for n in absent if n not in want]
    out = t.run([exe, "/etc/ld.so.cache"] + names, check_rc=0).stdout.splitlines()
    got = dict(line.rsplit(" ", 1) if " " in line.strip() else ("", line.strip()) for line in out)
    for name in names:
        t.equal(got.get(name), want.get(name, "-"), f"ld.so.cache entry for {name!r}")


@case
def ld_so_cache_lookup_prefers_glibc_hwcaps():
    """ld.so.cache lists a library of a glibc-hwcaps subdirectory before the
    directory's own (ldconfig records x86-64-v2, x86-64-v4, power10 and the
    plain copy): the runtime's lookup takes the entry whose subdirectory
    comes first among those ld.so searches, passes over one it does not
    search, and takes the plain entry where it searches none. A program
    linked to the shim and one linked -lnccl, run with that cache (a mount
    namespace), load the same copy."""
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    if not os.path.exists(ldconfig):
        raise t.Skip("no ldconfig")
    d = t.workdir("ldcache_hwcaps")
    lib = t.fake_nccl_tree(f"{d}/c", {"": 2830, "glibc-hwcaps/x86-64-v2": 2831, "glibc-hwcaps/x86-64-v4": 2832,
                                      "glibc-hwcaps/power10": 2833})
    with open(f"{d}/conf", "w") as f:
        f.write(lib + "\n")
    t.run([ldconfig, "-X", "-C", f"{d}/cache", "-f", f"{d}/conf"], check_rc=0)
    exe = ldcache_lookup(d)
    name = "libnccl.so.2"
    for hwcaps, want in (("x86-64-v4:x86-64-v3:x86-64-v2", "x86-64-v4"), ("x86-64-v3:x86-64-v2", "x86-64-v2"),
                         ("power10:x86-64-v4", "power10"), ("x86-64-v9", None), ("", None)):
        out = t.run([exe, f"{d}/cache", name], env={"HWCAPS": hwcaps}, check_rc=0).stdout
        path = f"{lib}/glibc-hwcaps/{want}/{name}" if want else f"{lib}/{name}"
        t.equal(out, f"{name} {path}\n", f"searching {hwcaps or 'no subdirectory'}")
    # An extension ld.so does not read (misaligned; a section out of the
    # file; the names' list not whole words): no hwcaps entry is taken.
    import struct
    with open(f"{d}/cache", "rb") as f:
        good = f.read()
    ext = struct.unpack_from("<I", good, 32)[0]
    count = struct.unpack_from("<I", good, ext + 4)[0]
    secs = {struct.unpack_from("<I", good, ext + 8 + 16 * i)[0]: ext + 8 + 16 * i for i in range(count)}
    t.check(1 in secs, f"ldconfig wrote a glibc-hwcaps section: {secs}")
    for what in ("misaligned", "out of the file", "not whole words"):
        data = bytearray(good)
        if what == "misaligned":
            data[32:36] = struct.pack("<I", ext + 2)
        elif what == "out of the file":
            first = min(secs.values())
            data[first + 8:first + 12] = struct.pack("<I", len(good) + 64)
        else:
            size = struct.unpack_from("<I", good, secs[1] + 12)[0]
            data[secs[1] + 12:secs[1] + 16] = struct.pack("<I", size - 1)
        with open(f"{d}/cache.bad", "wb") as f:
            f.write(data)
        out = t.run([exe, f"{d}/cache.bad", name], env={"HWCAPS": "x86-64-v4:x86-64-v2"}, check_rc=0).stdout
        t.equal(out, f"{name} {lib}/{name}\n", f"an extension {what}: the plain entry")
    # Entries whose flags are not exactly this machine's C library's (ld.so's
    # _dl_cache_check_flags): passed over.
    nlibs = struct.unpack_from("<I", good, 20)[0]
    data = bytearray(good)
    for i in range(nlibs):
        at = 48 + 24 * i
        flags, key, value = struct.unpack_from("<iII", good, at)
        if good[value:good.index(b"\0", value)].decode().startswith(f"{lib}/glibc-hwcaps/"):
            struct.pack_into("<i", data, at, flags | 0x10000)
    with open(f"{d}/cache.flags", "wb") as f:
        f.write(data)
    out = t.run([exe, f"{d}/cache.flags", name], env={"HWCAPS": "x86-64-v4:x86-64-v2"}, check_rc=0).stdout
    t.equal(out, f"{name} {lib}/{name}\n", "entries of other flags: the plain entry")
    # Legacy subdirectories (glibc 2.36 and older): on x86-64, ld.so takes
    # x86_64/'s entry and passes over avx512_1/'s.
    if t.HOST_CPU == "x86_64":
        q = t.fake_nccl_tree(f"{d}/q", {"": 2840, "x86_64": 2841, "avx512_1": 2842})
        with open(f"{d}/confq", "w") as f:
            f.write(q + "\n")
        t.run([ldconfig, "-X", "-C", f"{d}/cacheq", "-f", f"{d}/confq"], check_rc=0)
        out = t.run([exe, f"{d}/cacheq", name], check_rc=0).stdout
        t.equal(out, f"{name} {q}/x86_64/{name}\n", "legacy entries: x86_64/'s")
    if t.HOST_CPU != "x86_64" or t.run(["unshare", "-m", "true"]).returncode != 0:
        return
    real = t.real_library(name)
    direct = t.version_prog(d, "direct", [f"-L{os.path.dirname(real)}", "-l:libnccl.so.2"])
    shimmed = t.version_prog(d, "shimmed", t.link_shim_args("nccl"))
    r = t.run(["unshare", "-m", "sh", "-c", f'mount --bind {d}/cache /etc/ld.so.cache && "$1" && "$2"',
               "sh", direct, shimmed], check_rc=0)
    plain, wrapped = r.stdout.splitlines()
    t.check(plain in ("rc=0 version=2831", "rc=0 version=2832"), f"plain takes a subdirectory's: {plain}")
    t.equal(wrapped, plain, "the shim's first call, as -lnccl")


# --- 7. /usr/local/cuda ------------------------------------------------------

def under_own_usr_local_cuda(d, fake_root, cmd, env):
    """Run cmd in a private mount namespace where /usr/local/cuda is fake_root."""
    target = os.path.realpath("/usr/local/cuda")
    if os.geteuid() != 0 or not shutil.which("unshare") or not os.path.isdir(target):
        raise t.Skip("needs root, unshare and an existing /usr/local/cuda to stage step 7")
    script = f'mount --bind "{fake_root}" "{target}" && exec "$@"'
    r = t.run(["unshare", "-m", "sh", "-c", script, "sh"] + cmd, env=env)
    if "unshare failed" in r.stderr or "mount:" in r.stderr:
        raise t.Skip(f"no private mount namespace here: {r.stderr.strip()}")
    return r


@case
def step_usr_local_cuda():
    """With nothing earlier, /usr/local/cuda/lib64 is used (staged in a private
    mount namespace); LD_LIBRARY_PATH beats it."""
    d = t.workdir("step_usr_local_cuda")
    for sysdir in t.ld_so_system_dirs():
        if os.path.exists(f"{sysdir}/libnccl.so.2"):
            raise t.Skip(f"{sysdir}/libnccl.so.2 exists: step 6 would find it before step 7")
    t.fake_nccl(f"{d}/cuda/lib64", version=70)
    llp = t.fake_nccl(f"{d}/llp", version=71)
    exe = client(d)
    r = under_own_usr_local_cuda(d, f"{d}/cuda", [exe, "call", "ncclGetVersion"], {})
    t.equal(r.returncode, 0, f"exit status: {r.stderr}")
    t.contains(r.stdout, "ncclGetVersion: rc=0 value=70", "the /usr/local/cuda copy answers")
    t.contains(loaded_line(r.stdout), "step=default directories copies=1", "step")
    r = under_own_usr_local_cuda(d, f"{d}/cuda", [exe, "call", "ncclGetVersion"],
                                 {"LD_LIBRARY_PATH": f"{d}/llp"})
    t.equal(loaded_line(r.stdout), f"loaded={llp} step=LD_LIBRARY_PATH copies=1", "step 6 wins")


# --- the probe ----------------------------------------------------------------

def patched(src, dst, offset, data):
    with open(src, "rb") as f:
        b = bytearray(f.read())
    b[offset:offset + len(data)] = data
    with open(dst, "wb") as f:
        f.write(b)
    return dst


def bad_inputs(d):
    """{name: (LAZYNCCL_LIBPATH value, expected reason)} for every bad input."""
    good = t.fake_nccl(f"{d}/good")
    os.makedirs(f"{d}/bad")
    with open(f"{d}/bad/text.so", "w") as f:
        f.write("this is not a library\n" * 20)
    with open(good, "rb") as f:
        head = f.read(2000)
    with open(f"{d}/bad/truncated.so", "wb") as f:
        f.write(head)
    patched(good, f"{d}/bad/arm64.so", 18, b"\xb7\x00")     # e_machine = EM_AARCH64
    patched(good, f"{d}/bad/class32.so", 4, b"\x01")        # EI_CLASS = ELFCLASS32
    patched(good, f"{d}/bad/osabi.so", 7, b"\x09")          # EI_OSABI = FreeBSD: ld.so refuses it
    patched(good, f"{d}/bad/padding.so", 10, b"\x01")       # e_ident padding
    os.symlink(f"{d}/bad/loop_b", f"{d}/bad/loop_a")
    os.symlink(f"{d}/bad/loop_a", f"{d}/bad/loop_b")
    os.makedirs(f"{d}/emptydir")
    wrong = t.fake_nccl(f"{d}/wrong", name="libnccl.so.2", soname="libfoo.so.1")
    long_path = "/" + "a" * 5000
    return {
        "colon": (":", "[LAZYNCCL_LIBPATH] empty entry: rejected: never read as the current directory"),
        "relative": ("lib/libnccl.so.2",
                     "[LAZYNCCL_LIBPATH] lib/libnccl.so.2: rejected: relative path (only absolute paths are accepted)"),
        "missing": (f"{d}/none/libnccl.so.2",
                    f"[LAZYNCCL_LIBPATH] {d}/none/libnccl.so.2: rejected: No such file or directory"),
        "dir_without_library": (f"{d}/emptydir",
                                f"[LAZYNCCL_LIBPATH] {d}/emptydir: rejected: the directory holds no libnccl.so.2"),
        "text_file": (f"{d}/bad/text.so", f"[LAZYNCCL_LIBPATH] {d}/bad/text.so: rejected: not an ELF file"),
        "truncated_elf": (f"{d}/bad/truncated.so",
                          f"[LAZYNCCL_LIBPATH] {d}/bad/truncated.so: rejected: truncated ELF: a loadable segment ends at byte"),
        "other_machine": (f"{d}/bad/arm64.so",
                          f"[LAZYNCCL_LIBPATH] {d}/bad/arm64.so: rejected: ELF machine 183 (AArch64), this process is 62 (x86-64)"),
        "other_class": (f"{d}/bad/class32.so",
                        f"[LAZYNCCL_LIBPATH] {d}/bad/class32.so: rejected: ELF class 32-bit, this process is 64-bit"),
        "osabi": (f"{d}/bad/osabi.so", f"[LAZYNCCL_LIBPATH] {d}/bad/osabi.so: rejected: ELF file OS ABI invalid"),
        "padding": (f"{d}/bad/padding.so",
                    f"[LAZYNCCL_LIBPATH] {d}/bad/padding.so: rejected: nonzero padding in e_ident"),
        "soname_mismatch": (wrong, f"[LAZYNCCL_LIBPATH] {wrong}: rejected: SONAME libfoo.so.1 is not libnccl.so.2"),
        "symlink_loop": (f"{d}/bad/loop_a",
                         f"[LAZYNCCL_LIBPATH] {d}/bad/loop_a: rejected: Too many levels of symbolic links"),
        "overlong_path": (long_path, "[LAZYNCCL_LIBPATH] /aaaaaaaaaaaaaaa"),
    }


@case
def long_report_says_what_it_left_out():
    """3,000 LAZYNCCL_LIBPATH entries: the failure report keeps whole lines
    only, then says how many it left out, and still ends with the closing
    line; lazynccl_last_error holds the same."""
    d = t.workdir("long_report")
    entries = [f"/none/{i}" for i in range(3000)]  # short: one variable holds at most 128 KiB
    r = t.run([client(d), "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": ":".join(entries)})
    t.equal(r.returncode, 0, r.stderr)
    report = r.stdout.split(" last_error=")[-1]
    lines = report.split("\n")
    closing = [i for i, l in enumerate(lines) if l.strip() == "LAZYNCCL_LIBPATH is set, so nothing else was tried"]
    t.equal(len(closing), 1, "the closing line, once")
    lines = lines[:closing[0] + 1]
    t.check("more lines left out" in lines[-2], lines[-3:])
    left = [l for l in lines if "more lines left out" in l]
    t.equal(len(left), 1, "one count line")
    shown = sum(1 for l in lines if l.strip().startswith("[LAZYNCCL_LIBPATH]"))
    import re
    n = int(re.search(r"\.\.\. (\d+) more lines left out", left[0]).group(1))
    t.equal(shown + n, 3000, f"shown ({shown}) and left out ({n}) are every entry")
    t.check(all(l.endswith(": rejected: No such file or directory") for l in lines
                if l.strip().startswith("[LAZYNCCL_LIBPATH]")), "whole lines only")


@case
def override_empty_is_unset():
    """An empty LAZYNCCL_LIBPATH is taken as unset, as glibc takes an empty
    LD_LIBRARY_PATH: the other steps are tried, and the log says it was
    ignored (an empty entry of a non-empty list is still rejected)."""
    d = t.workdir("override_empty")
    fake = t.fake_nccl(f"{d}/fake")
    r = t.run([client(d), "call", "ncclGetVersion"],
              env={"LAZYNCCL_LIBPATH": "", "LD_LIBRARY_PATH": f"{d}/fake", "LAZYNCCL_DEBUG": "1"})
    t.equal(r.returncode, 0, r.stderr)
    t.check(r.stdout.startswith("ncclGetVersion: rc=0 value=99999"), f"the LD_LIBRARY_PATH step served: {r.stdout}")
    t.contains(r.stderr, "[LAZYNCCL_LIBPATH] ignored: set but empty, so taken as unset", "the log")
    r = t.run([client(d), "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": ":", "LD_LIBRARY_PATH": f"{d}/fake"})
    t.contains(r.stdout, "[LAZYNCCL_LIBPATH] empty entry: rejected: never read as the current directory",
               "':' is a list of empty entries, still authoritative")


def bad_input(name):
    d = t.workdir(f"bad_input_{name}")
    value, reason = bad_inputs(d)[name]
    log = f"{d}/ctor.log"
    r = t.run([client(d), "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": value, "LZ_CTOR_LOG": log})
    t.equal(r.returncode, 0, "exit status (no crash)")
    t.check(r.stdout.startswith("ncclGetVersion: rc=2 value=-1 error=lazynccl: NCCL could not be loaded"),
            r.stdout)
    t.contains(r.stdout, reason, "reason")
    if name == "overlong_path":
        t.contains(r.stdout, "rejected: path longer than PATH_MAX (4096)", "reason")
    t.contains(r.stdout, "LAZYNCCL_LIBPATH is set, so nothing else was tried", "authoritative")
    t.equal(ctor_log(log), [], "libraries loaded")
    t.equal(r.stderr, "", "stderr (the library prints nothing unless asked)")


for _name in ["colon", "relative", "missing", "dir_without_library", "text_file",
              "truncated_elf", "other_machine", "other_class", "soname_mismatch",
              "symlink_loop", "overlong_path"]:
    t.CASES[f"bad_input_{_name}"] = (lambda n: lambda: bad_input(n))(_name)


def unloadable_nccl(d):
    """A fake NCCL the probe accepts and dlopen refuses: it needs a library
    that is gone (built, linked against, deleted)."""
    os.makedirs(f"{d}/gone", exist_ok=True)
    with open(f"{d}/gone/g.c", "w") as f:
        f.write("int lz_gone(void) { return 1; }\n")
    t.compile_c(f"{d}/gone/libgone.so", [f"{d}/gone/g.c"], ["-Wl,-soname,libgone.so"], shared=True)
    broken = t.fake_nccl(f"{d}/broken", extra=[f"-L{d}/gone", "-Wl,--no-as-needed", "-lgone"])
    shutil.rmtree(f"{d}/gone")
    return broken


@case
def dlopen_failure_next_candidate():
    """A candidate that passes the probe but fails to dlopen (a dependency is
    missing) is rejected with dlopen's own error, once, and the next one is
    loaded; alone, the failure report names it the same way."""
    d = t.workdir("dlopen_failure_next_candidate")
    broken = unloadable_nccl(d)
    good = t.fake_nccl(f"{d}/good", version=41)
    exe = client(d)
    r = t.run([exe, "call", "ncclGetVersion"],
              env={"LAZYNCCL_LIBPATH": f"{broken}:{good}", "LAZYNCCL_DEBUG": "1"}, check_rc=0)
    t.contains(r.stdout, "ncclGetVersion: rc=0 value=41", "the next candidate answers")
    line = f"[LAZYNCCL_LIBPATH] {broken}: rejected: libgone.so: cannot open shared object file"
    t.equal(r.stderr.count(line), 1, f"the rejection, logged once:\n{r.stderr}")
    t.contains(r.stderr, f"[LAZYNCCL_LIBPATH] {good}: chosen", "then the next is chosen")
    r = t.run([exe, "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": broken}, check_rc=0)
    t.check(r.stdout.startswith("ncclGetVersion: rc=2 value=-1 error=lazynccl: NCCL could not be loaded"),
            r.stdout)
    report = r.stdout.split(" last_error=")[0]  # the client prints it twice
    t.equal(report.count(line), 1, f"the report names it once:\n{report}")
    t.contains(r.stdout, "LAZYNCCL_LIBPATH is set, so nothing else was tried", "authoritative")


@case
def dlopen_failures_bounded():
    """Each file that fails to dlopen costs a round of the search; after 16
    the search opens nothing more, and the report says so for each file it
    left unopened (a good one included)."""
    d = t.workdir("dlopen_failures_bounded")
    broken = unloadable_nccl(d)
    copies = []
    for i in range(17):
        os.makedirs(f"{d}/c{i}")
        copies.append(shutil.copy(broken, f"{d}/c{i}/libnccl.so.2"))  # 17 files, 17 inodes
    good = t.fake_nccl(f"{d}/good", version=42)
    r = t.run([client(d), "call", "ncclGetVersion"],
              env={"LAZYNCCL_LIBPATH": ":".join(copies + [good])}, check_rc=0)
    t.check(r.stdout.startswith("ncclGetVersion: rc=2 value=-1"), r.stdout)
    report = r.stdout.split(" last_error=")[0]  # the client prints it twice
    for c in copies[:16]:
        t.equal(report.count(f"{c}: rejected: libgone.so: cannot open shared object file"), 1, c)
    for c in (copies[16], good):
        t.contains(report, f"{c}: rejected: not opened: 16 candidates before it failed to load, "
                   "so the search stops opening files", c)


@case
def rejected_never_loaded():
    """Candidates the probe rejects are never loaded: their constructors never run."""
    d = t.workdir("rejected_never_loaded")
    cases = bad_inputs(d)
    good = t.fake_nccl(f"{d}/good2", version=77)
    nosym = t.fake_nccl(f"{d}/nosym", omit=["ncclGetErrorString"])
    bad = [cases[k][0] for k in ("text_file", "truncated_elf", "other_machine", "other_class",
                                 "soname_mismatch")] + [nosym]
    log = f"{d}/ctor.log"
    out = call(client(d), {"LAZYNCCL_LIBPATH": ":".join(bad + [good]), "LZ_CTOR_LOG": log})
    t.contains(out, "ncclGetVersion: rc=0 value=77", "the good candidate answers")
    t.equal(ctor_log(log), [good], "constructors that ran")
    t.contains(t.run([client(d), "call", "ncclGetVersion"],
                     env={"LAZYNCCL_LIBPATH": nosym}).stdout,
               f"{nosym}: rejected: does not export ncclGetErrorString", "reason")


@case
def without_libelf_still_probed():
    """The probe does not need libelf (it reads what the dynamic linker
    reads): with libelf out of reach a candidate lacking a required export
    is still rejected unloaded (its constructor never runs), the next one
    serves, and libelf is not mapped after the call."""
    d = t.workdir("without_libelf")
    nosym = t.fake_nccl(f"{d}/nosym", omit=["ncclGetErrorString"])
    good = t.fake_nccl(f"{d}/good", version=88)
    log = f"{d}/ctor.log"
    r = t.run([client(d), "call", "ncclGetVersion"],
              env={"LAZYNCCL_LIBPATH": f"{nosym}:{good}", "LAZYNCCL_LIBELF_PATH": f"{d}/no-libelf",
                   "LAZYNCCL_DEBUG": "1", "LZ_CTOR_LOG": log}, check_rc=0)
    t.contains(r.stdout, "ncclGetVersion: rc=0 value=88", "the good candidate answers")
    t.contains(r.stderr, f"[LAZYNCCL_LIBPATH] {nosym}: rejected: does not export ncclGetErrorString",
               "rejected by the probe")
    t.equal(ctor_log(log), [good], "constructors that ran")
    t.contains(r.stdout, "libelf_mapped=0", "libelf mapped")


@case
def section_headers_stripped_accepted():
    """A library without section headers (sstrip; ld.so never reads them)
    loads as it would with a bare dlopen; a truncated one is still refused."""
    d = t.workdir("stripped_sections")
    good = t.fake_nccl(f"{d}/good", version=91)
    with open(good, "rb") as f:
        b = bytearray(f.read())
    # e_shoff = 0, e_shnum = 0, e_shstrndx = 0 (ELF64 header offsets 40, 60, 62)
    b[40:48] = bytes(8)
    b[60:64] = bytes(4)
    os.makedirs(f"{d}/stripped")
    stripped = f"{d}/stripped/libnccl.so.2"
    with open(stripped, "wb") as f:
        f.write(b)
    out = call(client(d), {"LAZYNCCL_LIBPATH": stripped})
    t.contains(out, "ncclGetVersion: rc=0 value=91", "the section-less library answers")


# --- versioned names ----------------------------------------------------------

def jit_client(d):
    return t.compile_c(os.path.join(d, "jit"), [os.path.join(t.PROGS, "jit_client.c")],
                       t.link_shim_args("nvjitlink"))


@case
def versioned_exact_preferred():
    """_12_9 asked, a 12.8-like library first on the path and a 12.9-like one
    second: the second is loaded, the first never is."""
    d = t.workdir("versioned_exact_preferred")
    old = t.fake_nvjitlink(f"{d}/v128", 12, 8)
    new = t.fake_nvjitlink(f"{d}/v129", 12, 9)
    log = f"{d}/ctor.log"
    out = t.run([jit_client(d), "__nvJitLinkGetErrorLogSize_12_9"],
                env={"LAZYNVJITLINK_LIBPATH": f"{d}/v128:{d}/v129", "LZ_CTOR_LOG": log},
                check_rc=0).stdout
    t.contains(out, "__nvJitLinkGetErrorLogSize_12_9: rc=0 size=1209", "answer")
    t.contains(out, f"loaded={new}\n", "loaded")
    t.equal(ctor_log(log), [new], "constructors that ran")
    t.check(old not in ctor_log(log), "the 12.8 library was loaded")


@case
def versioned_fallback():
    """Only a 12.8-like library: _12_9 falls back to _12_8, and says so in the log."""
    d = t.workdir("versioned_fallback")
    old = t.fake_nvjitlink(f"{d}/v128", 12, 8)
    r = t.run([jit_client(d), "__nvJitLinkGetErrorLogSize_12_9"],
              env={"LAZYNVJITLINK_LIBPATH": old, "LAZYNCCL_DEBUG": "1"}, check_rc=0)
    t.contains(r.stdout, "__nvJitLinkGetErrorLogSize_12_9: rc=0 size=1208", "answer")
    t.contains(r.stderr, f"lazynvjitlink: __nvJitLinkGetErrorLogSize_12_9: not exported by {old}; "
                         "using __nvJitLinkGetErrorLogSize_12_8", "log")


@case
def versioned_strict():
    """LAZYNCCL_STRICT_VERSIONS=1: no fallback, the typed error instead."""
    d = t.workdir("versioned_strict")
    old = t.fake_nvjitlink(f"{d}/v128", 12, 8)
    out = t.run([jit_client(d), "__nvJitLinkGetErrorLogSize_12_9", "__nvJitLinkGetErrorLogSize_12_8"],
                env={"LAZYNVJITLINK_LIBPATH": old, "LAZYNCCL_STRICT_VERSIONS": "1"},
                check_rc=0).stdout
    t.contains(out, "__nvJitLinkGetErrorLogSize_12_9: rc=6 size=0", "strict answer")
    t.contains(out, "__nvJitLinkGetErrorLogSize_12_8: rc=0 size=1208", "exact name still works")
    t.contains(out, f"last_error=lazynvjitlink: __nvJitLinkGetErrorLogSize_12_9: not exported by "
                    f"{old} (LAZYNCCL_STRICT_VERSIONS is set: no fallback)", "message")


@case
def versioned_cross_major():
    """Only a 13.0-like library: a 12.x name is refused, never served by 13."""
    d = t.workdir("versioned_cross_major")
    v13 = t.fake_nvjitlink(f"{d}/v130", 13, 0, unversioned=True)
    out = t.run([jit_client(d), "__nvJitLinkGetErrorLogSize_12_9", "__nvJitLinkGetErrorLogSize_13_0"],
                env={"LAZYNVJITLINK_LIBPATH": v13}, check_rc=0).stdout
    t.contains(out, "__nvJitLinkGetErrorLogSize_12_9: rc=6 size=0", "cross-major refused")
    t.contains(out, "__nvJitLinkGetErrorLogSize_13_0: rc=0 size=1300", "own major works")
    t.contains(out, "another major is never used", "message")


@case
def versioned_same_major_preferred():
    """_12_9 asked, a 13.0 library first and a 12.8 one second: the 12.8 one
    (same major, older version) is taken, not the 13.0."""
    d = t.workdir("versioned_same_major_preferred")
    t.fake_nvjitlink(f"{d}/v130", 13, 0, unversioned=True)
    old = t.fake_nvjitlink(f"{d}/v128", 12, 8)
    out = t.run([jit_client(d), "__nvJitLinkGetErrorLogSize_12_9"],
                env={"LAZYNVJITLINK_LIBPATH": f"{d}/v130:{d}/v128"}, check_rc=0).stdout
    t.contains(out, "__nvJitLinkGetErrorLogSize_12_9: rc=0 size=1208", "answer")
    t.contains(out, f"loaded={old}\n", "loaded")


@case
def unversioned_takes_newest():
    """The unversioned name, where the library exports only versioned ones,
    resolves to the newest of them."""
    d = t.workdir("unversioned_takes_newest")
    old = t.fake_nvjitlink(f"{d}/v128", 12, 8)
    out = t.run([jit_client(d), "nvJitLinkGetErrorLogSize"], env={"LAZYNVJITLINK_LIBPATH": old},
                check_rc=0).stdout
    t.contains(out, "nvJitLinkGetErrorLogSize: rc=0 size=1208", "answer")


# --- control API and logging ---------------------------------------------------

@case
def api_would_load_loads_nothing():
    """would_load names the file but loads nothing: no constructor, nothing mapped."""
    d = t.workdir("api_would_load_loads_nothing")
    fake = t.fake_nccl(f"{d}/fake")
    log = f"{d}/ctor.log"
    out = t.run([client(d), "wouldload"], env={"LAZYNCCL_LIBPATH": fake, "LZ_CTOR_LOG": log},
                check_rc=0).stdout
    t.equal(out.strip(), f"would=1 path={fake} loaded=0 mapped=0", "would_load")
    t.equal(ctor_log(log), [], "constructors that ran")
    out = t.run([client(d), "wouldload"], env={"LAZYNCCL_LIBPATH": f"{d}/none"}, check_rc=0).stdout
    # Without a library the buffer holds the search's report.
    t.equal(out.strip(), f"would=0 path=  [LAZYNCCL_LIBPATH] {d}/none: rejected: No such file or "
                         "directory\n  LAZYNCCL_LIBPATH is set, so nothing else was tried\n loaded=0 mapped=0",
            "would_load without a library: the reason, nothing loaded")
    for size, found in (("1", ""), ("2", "/")):
        out = t.run([client(d), "wouldload", size], env={"LAZYNCCL_LIBPATH": fake}, check_rc=0).stdout
        t.equal(out.strip(), f"would=1 path={found} loaded=0 mapped=0", f"a buffer of {size} byte(s)")
    for size in ("1", "2"):
        out = t.run([client(d), "wouldload", size], env={"LAZYNCCL_LIBPATH": f"{d}/none"}).stdout
        t.equal(out.strip(), "would=0 path= loaded=0 mapped=0", f"no library, a buffer of {size} byte(s)")


@case
def api_search_path():
    """A search list set before the first call replaces the default order;
    once loaded it can no longer be changed; the environment still wins."""
    d = t.workdir("api_search_path")
    a = t.fake_nccl(f"{d}/a", version=31)
    b = t.fake_nccl(f"{d}/b", version=32)
    out = call(client(d), {"CUDA_HOME": f"{d}/b"}, "ncclGetVersion", prefix=["searchpath", f"{d}/none:{d}/a"])
    t.contains(out, "set_search_path=0\nncclGetVersion: rc=0 value=31", "search list answer")
    t.contains(out, f"loaded={a} step=search list copies=1\nset_search_path_after=-1", "after load")
    out = call(client(d), {"LAZYNCCL_LIBPATH": b}, prefix=["searchpath", f"{d}/a"])
    t.contains(out, "ncclGetVersion: rc=0 value=32", "environment wins")


@case
def api_log_callback():
    """The log callback receives each candidate and the outcome; stderr stays silent."""
    d = t.workdir("api_log_callback")
    fake = t.fake_nccl(f"{d}/fake")
    r = t.run([client(d), "logcb", "call", "ncclGetVersion"],
              env={"LAZYNCCL_LIBPATH": f"{d}/none:{fake}"}, check_rc=0)
    t.contains(r.stdout, f"log: lazynccl: [LAZYNCCL_LIBPATH] {d}/none: rejected: No such file or directory",
               "log line")
    t.contains(r.stdout, f"log: lazynccl: loaded {fake} (found by: LAZYNCCL_LIBPATH)", "log line")
    t.equal(r.stderr, "", "stderr")


@case
def debug_env_logs():
    """LAZYNCCL_DEBUG=1 logs to stderr; unset, nothing is printed."""
    d = t.workdir("debug_env_logs")
    fake = t.fake_nccl(f"{d}/fake")
    r = t.run([client(d), "call", "ncclGetVersion"],
              env={"LAZYNCCL_LIBPATH": fake, "LAZYNCCL_DEBUG": "1"}, check_rc=0)
    t.contains(r.stderr, f"lazynccl: [LAZYNCCL_LIBPATH] {fake}: chosen", "debug log")
    r = t.run([client(d), "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": fake}, check_rc=0)
    t.equal(r.stderr, "", "stderr without LAZYNCCL_DEBUG")


# --- secure execution ----------------------------------------------------------

@case
def setuid_ignores_override():
    """A setuid copy (owner nobody) run as root ignores LAZYNCCL_LIBPATH."""
    if os.geteuid() != 0:
        raise t.Skip("needs root to make a setuid-nobody program")
    if "address" in t.SANITIZE:
        raise t.Skip("LeakSanitizer cannot run in a setuid process (ASan build)")
    d = t.workdir("setuid_ignores_override")
    os.chmod(d, 0o755)
    fake = t.fake_nccl(f"{d}/fake", version=55)
    exe = client(d)
    shutil.chown(exe, "nobody")
    os.chmod(exe, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH | stat.S_ISUID)
    log = f"{d}/ctor.log"
    open(log, "w").close()
    os.chmod(log, 0o666)
    out = t.run([exe, "call", "ncclGetVersion"], env={"LAZYNCCL_LIBPATH": fake, "LZ_CTOR_LOG": log},
                check_rc=0).stdout
    t.check("value=55" not in out and fake not in loaded_line(out), out)
    t.equal(ctor_log(log), [], "constructors that ran")
    plain = call(client(t.workdir("setuid_control")), {"LAZYNCCL_LIBPATH": fake})
    t.contains(plain, "value=55", "the same override in a normal process")


STATIC_DLOPEN = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <zlib.h>
int main(void)
{
#ifdef SHIM
    printf("%s\n", zlibVersion());
#else
    void *h = dlopen("libz.so.1", RTLD_NOW);
    struct link_map *m = NULL;
    if (!h || dlinfo(h, RTLD_DI_LINKMAP, &m) != 0)
        return 1;
    printf("%s\n", m->l_name);
#endif
    return 0;
}
"""


@case
def static_program_searches_as_its_dlopen():
    """A program linked -static with the static zlib shim: its first call
    takes the file the program's own dlopen takes (the C library's copy of
    the loader, which searches no glibc-hwcaps or legacy subdirectory),
    with copies of zlib in LD_LIBRARY_PATH's directory and in its
    glibc-hwcaps/x86-64-v2/, tls/ and x86_64/."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer's runtime cannot be linked -static")
    if not os.path.exists(t.shim("zlib", static=True)):
        raise t.Skip("liblazyzlib was not built (zlib.h missing)")
    real = t.run(["sh", "-c", "readlink -f \"$(/sbin/ldconfig -p | sed -n 's/.*libz.so.1 (libc6,x86-64) => //p' | head -1)\""],
                 check_rc=0).stdout.strip()
    if not os.path.isfile(real):
        raise t.Skip("no system libz.so.1")
    d = t.workdir("static_program_search")
    lib = os.path.join(d, "lib")
    for sub in ("", "glibc-hwcaps/x86-64-v2", "tls", "x86_64"):
        os.makedirs(os.path.join(lib, sub), exist_ok=True)
        shutil.copy(real, os.path.join(lib, sub, "libz.so.1"))
    src = os.path.join(d, "prog.c")
    with open(src, "w") as f:
        f.write(STATIC_DLOPEN)
    plain = t.compile_c(os.path.join(d, "plain"), [src, "-static", "-ldl"])
    shimmed = t.compile_c(os.path.join(d, "shimmed"), [src, "-static", "-DSHIM", t.shim("zlib", static=True),
                                                       "-ldl", "-lpthread"])
    env = {"LD_LIBRARY_PATH": lib}
    want = t.run([plain], env=env, check_rc=0).stdout.strip()
    t.equal(want, f"{lib}/libz.so.1", "plain: the directory's own copy")
    r = t.run([shimmed], env=dict(env, LAZYNCCL_DEBUG="1"), check_rc=0)
    # zlib's static shim has the small runtime: the search is the dynamic linker's own
    t.contains(r.stderr, f"loaded {want} (found by: dynamic linker)", "the first call takes it too")


if __name__ == "__main__":
    raise SystemExit(t.main())
