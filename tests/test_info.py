#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lazynccl-info: verdicts, versions, JSON, doctor checks, exit codes, and
that nothing is loaded."""
import json
import re
import os
import pty
import shutil
import subprocess

import lztest as t
from lztest import case


def info(*args, env=None, rc=None, cwd=None):
    return t.run([os.path.join(t.BUILD, "lazynccl-info"), *args], env=env or {}, check_rc=rc, cwd=cwd)


def ctor_log(path):
    return open(path).read().split() if os.path.exists(path) else []


def staged(d):
    """A text file, two good fakes: rejected, chosen, not reached."""
    os.makedirs(f"{d}/bad")
    with open(f"{d}/bad/libnccl.so.2", "w") as f:
        f.write("not a library\n")
    a = t.fake_nccl(f"{d}/a", extra=['-DFAKE_VERSION_STRING="2.28.9+fake"'])
    b = t.fake_nccl(f"{d}/b", extra=['-DFAKE_VERSION_STRING="2.27.3+fake"'])
    return f"{d}/bad/libnccl.so.2", a, b


@case
def verdicts_without_loading():
    """A line per library by default; with --verbose, every verdict with its
    reason and version; and no constructor runs."""
    d = t.workdir("info_verdicts")
    bad, a, b = staged(d)
    log = f"{d}/ctor.log"
    env = {"LAZYNCCL_LIBPATH": f"{bad}:{a}:{b}", "LZ_CTOR_LOG": log}
    t.equal(info("nccl", env=env, rc=0).stdout.splitlines()[0], f"NCCL  {a} (LAZYNCCL_LIBPATH)",
            "the short view's line")
    out = info("--verbose", "nccl", env=env, rc=0).stdout
    print(out)
    t.contains(out, f"would load: {a}\n  found by:   LAZYNCCL_LIBPATH", "summary")
    t.contains(out, f"LAZYNCCL_LIBPATH     rejected     {bad}\n        not an ELF file", "rejected")
    t.contains(out, f"* LAZYNCCL_LIBPATH     chosen       {a}\n"
                    "        SONAME libnccl.so.2, x86-64, version 2.28.9+fake (rodata)", "chosen")
    t.contains(out, f"LAZYNCCL_LIBPATH     not reached  {b}\n"
                    "        SONAME libnccl.so.2, x86-64, version 2.27.3+fake (rodata)", "not reached")
    t.equal(ctor_log(log), [], "constructors that ran")


@case
def exit_codes():
    """0 when it would load, 1 when not, 2 for a usage error."""
    d = t.workdir("info_exit_codes")
    fake = t.fake_nccl(f"{d}/fake")
    info("nccl", env={"LAZYNCCL_LIBPATH": fake}, rc=0)
    r = info("nccl", env={"LAZYNCCL_LIBPATH": f"{d}/none"}, rc=1)
    t.contains(r.stdout, f"NCCL  nothing: LAZYNCCL_LIBPATH {d}/none: No such file or directory "
                         "(LAZYNCCL_LIBPATH is set, so nothing else was tried)\n", "why, in one line")
    r = info("--verbose", "nccl", env={"LAZYNCCL_LIBPATH": f"{d}/none"}, rc=1)
    t.contains(r.stdout, "would load: nothing", "text")
    t.contains(r.stdout, "rejected     " + f"{d}/none", "candidate line")
    r = info("--bogus", rc=2)
    t.contains(r.stderr, "unknown argument '--bogus'", "usage error")
    for opt, what in (("--from", "PATH"), ("--check", "FILE"), ("--cache", "FILE"), ("--reports", "DIR")):
        t.contains(info(opt, rc=2).stderr, f"lazynccl-info: {opt} needs a {what}", f"{opt} alone")
    t.contains(info("--help", rc=0).stdout, "usage: lazynccl-info", "help")


@case
def steps_list_the_order_that_runs():
    """--steps prints the runtime's table of steps; a copy of NCCL placed
    at four of them (LAZYNCCL_LIBPATH, CONDA_PREFIX, LD_LIBRARY_PATH,
    CUDA_HOME) is found by the earliest row, then, that copy gone, by the
    next (ld.so.cache's, where this machine's cache holds one, ends it).
    --steps goes alone."""
    d = t.workdir("info_steps")
    rows = [line.split(" | ") for line in info("--steps", rc=0).stdout.splitlines()[2:]]
    number = {r[1].strip("`"): int(r[0].strip("| ")) for r in reversed(rows)}
    t.equal(len(rows), 17, "rows")
    place = {"LAZY<ID>_LIBPATH": ("LAZYNCCL_LIBPATH", f"{d}/override"),
             "search_roots_before": ("CONDA_PREFIX", f"{d}/conda"),
             "LD_LIBRARY_PATH": ("LD_LIBRARY_PATH", f"{d}/llp"),
             "search_roots_after": ("CUDA_HOME", f"{d}/cuda")}
    env = {}
    for step, (var, root) in place.items():
        t.fake_nccl(f"{root}/lib64" if var == "CUDA_HOME" else f"{root}/lib" if var == "CONDA_PREFIX" else root)
        env[var] = root
    order = sorted(place, key=lambda s: number[s])
    t.equal(order, ["LAZY<ID>_LIBPATH", "search_roots_before", "LD_LIBRARY_PATH", "search_roots_after"],
            "the four steps' order in the table")
    # This machine's ld.so.cache may hold an NCCL (CUDA's): step 13, before CUDA_HOME.
    cached = "libnccl.so.2 " in subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True,
                                                text=True).stdout
    if cached:
        place["ld.so.cache"] = ("ld.so.cache", None)
    for step in sorted(place, key=lambda s: number[s]):
        var = place[step][0]
        out = info("nccl", env=env, rc=0).stdout
        t.contains(out.splitlines()[0], f"({var})", f"found at step {number[step]} ({step})")
        if var not in env:
            break
        del env[var]
    r = info("--steps", "nccl", rc=2)
    t.contains(r.stderr, "--steps goes alone", "with another argument")


@case
def json_schema():
    """--json parses and follows docs/reference/lazynccl-info.md's schema."""
    d = t.workdir("info_json")
    bad, a, b = staged(d)
    r = info("--json", "--doctor", "nccl", "nvjitlink",
             env={"LAZYNCCL_LIBPATH": f"{bad}:{a}", "LAZYNVJITLINK_LIBPATH": f"{d}/none"}, rc=1)
    doc = json.loads(r.stdout)
    t.equal(doc["schema"], "lazynccl-info/2", "schema")
    t.equal([l["id"] for l in doc["libraries"]], ["nccl", "nvjitlink"], "libraries")
    nccl, jit = doc["libraries"]
    t.equal(set(nccl), {"id", "name", "shim", "sonames", "served", "would_load", "chosen", "loaded",
                        "error", "candidates", "candidates_not_shown"}, "library keys")
    t.equal(doc["not_served"], [], "not_served")
    t.equal(nccl["would_load"], True, "would_load")
    t.equal(nccl["chosen"], {"path": a, "step": "LAZYNCCL_LIBPATH"}, "chosen")
    t.equal(nccl["loaded"], None, "loaded without --load")
    t.equal([c["verdict"] for c in nccl["candidates"]], ["rejected", "chosen"], "verdicts")
    for c in nccl["candidates"]:
        t.equal(set(c), {"step", "path", "verdict", "reason", "soname", "machine", "version", "version_from"},
                "keys")
    t.equal(nccl["candidates"][0]["reason"], "not an ELF file", "reason")
    t.equal((nccl["candidates"][1]["version"], nccl["candidates"][1]["version_from"]), ("2.28.9+fake", "rodata"),
            "version")
    t.equal(jit["would_load"], False, "nvjitlink would not load")
    t.contains(jit["error"], "LAZYNVJITLINK_LIBPATH is set, so nothing else was tried", "error")
    t.check(isinstance(doc["doctor"], list), "doctor list")


@case
def real_libraries_versions():
    """The real CUDA 13.0 libraries are reported with their real versions;
    --load loads them and asks their version functions, which agree."""
    t.real_library("libnccl.so.2")
    doc = json.loads(info("--json", "--load", "nccl", "nvrtc", "nvjitlink", rc=0).stdout)
    by_id = {l["id"]: l for l in doc["libraries"]}
    chosen = {i: [c for c in l["candidates"] if c["verdict"] == "chosen"][0] for i, l in by_id.items()}
    print({i: c["version"] for i, c in chosen.items()}, {i: l["loaded"] for i, l in by_id.items()})
    nccl_v = by_id["nccl"]["loaded"]["version"]            # "2.28.9 (22809)"
    t.equal(chosen["nccl"]["version"].split("+")[0], nccl_v.split()[0], "NCCL version")
    t.equal(chosen["nvrtc"]["version"], by_id["nvrtc"]["loaded"]["version"], "NVRTC version")
    t.equal(chosen["nvjitlink"]["version"], by_id["nvjitlink"]["loaded"]["version"], "nvJitLink version")
    t.equal([chosen[i]["version_from"] for i in ("nccl", "nvrtc", "nvjitlink")],
            ["rodata", "rodata", "versioned names"], "where each was read")
    for l in by_id.values():
        t.equal(os.path.realpath(l["loaded"]["path"]), os.path.realpath(l["chosen"]["path"]),
                f"{l['id']}: loaded what it said it would")


@case
def version_from_the_file_name():
    """A library whose .rodata has no version string and that has no
    versioned names (cuBLAS, or an NCCL without its string) takes its
    version from its real file's name beyond the soname, through the
    soname's link, dotted numbers only; a file named as its soname, or
    beyond it other than so (a backup's .bak), has none."""
    d = t.workdir("info_version_file_name")
    real = t.fake_nccl(f"{d}/lib", name="libnccl.so.2.19.3")
    os.symlink(os.path.basename(real), f"{d}/lib/libnccl.so.2")
    plain = t.fake_nccl(f"{d}/plain")
    backup = t.fake_nccl(f"{d}/bak", name="libnccl.so.2.19.3.bak")
    os.symlink(os.path.basename(backup), f"{d}/bak/libnccl.so.2")
    for libpath, want in ((f"{d}/lib", ["2.19.3", "file name"]), (plain, [None, None]),
                          (f"{d}/bak", [None, None])):
        doc = json.loads(info("--json", "nccl", env={"LAZYNCCL_LIBPATH": libpath}, rc=0).stdout)
        c = doc["libraries"][0]["candidates"][0]
        t.equal([c["version"], c["version_from"]], want, f"{libpath}: {c}")
    out = info("--verbose", "nccl", env={"LAZYNCCL_LIBPATH": f"{d}/lib"}, rc=0).stdout
    t.contains(out, "SONAME libnccl.so.2, x86-64, version 2.19.3 (file name)", "text")


@case
def doctor_net_ib():
    """NCCL_NET=IB without libibverbs: a problem and its fix; with it: ok."""
    d = t.workdir("doctor_net_ib")
    have = t.run(["/sbin/ldconfig", "-p"]).stdout.count("libibverbs.so.1 ")
    if have:
        raise t.Skip("libibverbs.so.1 is installed here; the missing case cannot be staged")
    r = info("nccl", "--doctor", env={"NCCL_NET": "IB"}, rc=1)
    t.contains(r.stdout, "problem  NCCL_NET=IB, but libibverbs.so.1 is not installed\n"
                         "  fix:     install libibverbs1 (rdma-core), or set NCCL_NET=Socket\n", "doctor")
    lib = t.compile_c(f"{d}/libibverbs.so.1", [os.path.join(t.FAKES, "fake_net_plugin.c")],
                      ["-Wl,-soname,libibverbs.so.1", f"-I{t.FAKES}"], shared=True)
    r = info("nccl", "--doctor", env={"NCCL_NET": "IB", "LD_LIBRARY_PATH": d})
    t.contains(t.flat(r.stdout), f"ok NCCL_NET=IB: libibverbs.so.1 found at {lib}", "doctor")


@case
def doctor_net_plugin():
    """NCCL_NET_PLUGIN: missing is a problem; found, its API versions are listed."""
    d = t.workdir("doctor_net_plugin")
    r = info("nccl", "--doctor", env={"NCCL_NET_PLUGIN": "nowhere"}, rc=1)
    t.contains(r.stdout, "problem  NCCL_NET_PLUGIN=nowhere, but libnccl-net-nowhere.so is not found", "doctor")
    plugin = t.compile_c(f"{d}/libnccl-net-fake.so", [os.path.join(t.FAKES, "fake_net_plugin.c")],
                         [f"-I{t.FAKES}"], shared=True)
    # A check that passed is a line of its own only with --verbose.
    r = info("nccl", "--doctor", env={"NCCL_NET_PLUGIN": "fake", "LD_LIBRARY_PATH": d})
    t.check("net plugin" not in r.stdout and "2 other checks passed" in r.stdout, r.stdout)
    r = info("nccl", "--doctor", "--verbose", env={"NCCL_NET_PLUGIN": "fake", "LD_LIBRARY_PATH": d})
    t.contains(t.flat(r.stdout), f"ok net plugin {plugin} exports ncclCollNet_v8, ncclNetPlugin_v9, "
                                 "ncclNet_v8", "doctor")


@case
def doctor_shadowing_and_copies():
    """An older copy in LD_LIBRARY_PATH than the wheel's: a problem; two
    different copies: a warning listing both with their versions."""
    d = t.workdir("doctor_shadowing")
    site = f"{d}/site-packages"
    os.makedirs(f"{site}/pkg")
    shim = f"{site}/pkg/liblazynccl.so"
    open(shim, "w").close()
    new = t.fake_nccl(f"{site}/nvidia/nccl/lib", extra=['-DFAKE_VERSION_STRING="2.28.9"'])
    old = t.fake_nccl(f"{d}/llp", extra=['-DFAKE_VERSION_STRING="2.21.5"'])
    r = info("nccl", "--doctor", "--from", shim, env={"LD_LIBRARY_PATH": f"{d}/llp"}, rc=1)
    print(r.stdout)
    out = t.flat(r.stdout)
    t.contains(out, f"problem LD_LIBRARY_PATH shadows the wheel's libnccl.so.2: {old} "
                    f"(version 2.21.5) is older than {new} (version 2.28.9) "
                    f"fix: drop {d}/llp from LD_LIBRARY_PATH", "shadowing")
    t.contains(out, f"copies of libnccl.so.2: {new} (version 2.28.9); {old} (version 2.21.5)",
               "copies")


def run_in_pty(args, env):
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(args[0], args, env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode(errors="replace")


@case
def colour_and_columns():
    """Colour only on a terminal without NO_COLOR; lines fit in 80 columns."""
    d = t.workdir("info_colour")
    fake = t.fake_nccl(f"{d}/f")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "LD_LIBRARY_PATH")}
    env["LAZYNCCL_LIBPATH"] = fake
    exe = os.path.join(t.BUILD, "lazynccl-info")
    t.contains(run_in_pty([exe, "nccl"], env), "\033[32m", "colour on a terminal")
    t.check("\033[" not in run_in_pty([exe, "nccl"], dict(env, NO_COLOR="1")), "NO_COLOR honoured")
    out = info("nccl", "--doctor", env={"LAZYNCCL_LIBPATH": fake, "NCCL_NET": "IB"}).stdout
    t.check("\033[" not in out, "no colour into a pipe")
    long_lines = [l for l in out.splitlines() if len(l) > 80 and fake not in l]
    t.equal(long_lines, [], "lines over 80 columns (other than long paths)")


def served_ids():
    """The specs this installation serves (install is not false, built
    here): read from the spec files, not from the tool under test."""
    import glob
    import tomllib
    out = []
    for path in sorted(glob.glob(os.path.join(t.SOURCE, "stubs", "*.toml"))):
        with open(path, "rb") as f:
            lib = tomllib.load(f)["library"]
        # An optional spec whose header is not on this machine is not built.
        if lib.get("install", True) and lib.get("visibility", "default") != "hidden" \
                and os.path.exists(t.shim(lib["id"])):
            out.append(lib["id"])
    return sorted(out)


@case
def default_covers_what_is_served():
    """No argument: the libraries this installation installs (not the
    test-only shims built beside them, such as the driver API's, whose
    libcuda.so.1 this machine lacks), each marked served in JSON, and exit 0
    when the required families (NCCL, NVRTC, nvJitLink) load (another that
    would not, an optional library this machine lacks, is shown and not
    counted; named, it is); 'all' adds the test-only ones."""
    r = info("--json")
    doc = json.loads(r.stdout)
    ids = sorted(l["id"] for l in doc["libraries"])
    t.equal(ids, served_ids(), "the served libraries")
    t.check(all(l["served"] for l in doc["libraries"]), "each marked served")
    t.equal(doc["not_served"], [], "nothing asked for that is not served")
    # The required families decide the status (--help marks them *); the
    # others are shown and not counted, unless named.
    usage = info("--help", rc=0).stdout
    required = set(re.findall(r" (\w+)\*", usage.split("Served:")[1].splitlines()[0]))
    t.equal(sorted(required), ["nccl", "nvjitlink", "nvrtc"], "the required families in --help")
    t.equal(r.returncode, 0 if all(l["would_load"] for l in doc["libraries"] if l["id"] in required) else 1,
            "the exit status counts the required families")
    others = [l["id"] for l in doc["libraries"] if l["id"] not in required]
    hidden = {f"LAZY{others[0].upper()}_LIBPATH": "/nonexistent"} if others else {}
    t.equal(info(env=hidden).returncode, r.returncode, f"{others[:1]} unloadable, not named: not counted")
    if others:
        t.equal(info(others[0], env=hidden).returncode, 1, f"{others[0]} unloadable, named")
    t.equal(info(env={"LAZYNCCL_LIBPATH": "/nonexistent"}).returncode, 1, "NCCL unloadable: counted")
    everything = json.loads(info("--json", "all").stdout)["libraries"]
    extra = [l for l in everything if not l["served"]]
    t.check(len(everything) > len(ids) or not extra, "all: the test-only shims too")
    cuda = [l for l in everything if l["id"] == "cuda"]
    if cuda and not cuda[0]["would_load"]:
        info("cuda", rc=1)  # asked for by name: it counts
        print("libcuda.so.1 absent: lazynccl-info exits 0, lazynccl-info cuda exits 1")


@case
def unknown_library_is_said_and_counts():
    """A library it has no shim for: one line saying so and what it serves,
    exit 1, the others still reported; in JSON, listed as not served. An
    unknown option is still a usage error (2)."""
    r = info("nccl", "libfoo", env={"LAZYNCCL_LIBPATH": "/nonexistent/libnccl.so.2"}, rc=1)
    t.contains(r.stderr, "lazynccl-info: 'libfoo': this installation has no shim for it "
                         f"(it serves: {' '.join(served_ids())})", "the message")
    t.contains(r.stdout, "NCCL  nothing: LAZYNCCL_LIBPATH /nonexistent/libnccl.so.2", "nccl still reported")
    doc = json.loads(info("--json", "libfoo", rc=1).stdout)
    t.equal((doc["libraries"], doc["not_served"]), ([], ["libfoo"]), "JSON")
    info("--frobnicate", rc=2)


@case
def load_version_of_an_old_nccl_code():
    """NCCL before 2.9 codes its version as major*1000+minor*100+patch
    (nccl.h's NCCL_VERSION): a fake answering 2708 is reported 2.7.8, one
    answering 22809 2.28.9 (the spec's version_code_below, version_code)."""
    d = t.workdir("info_old_code")
    for code, want in ((2708, "2.7.8 (2708)"), (22809, "2.28.9 (22809)")):
        lib = t.fake_nccl(f"{d}/v{code}", version=code)
        doc = json.loads(info("--json", "--load", "nccl", env={"LAZYNCCL_LIBPATH": lib}, rc=0).stdout)
        t.equal(doc["libraries"][0]["loaded"]["version"], want, f"NCCL code {code}")


def check_prog(d, name, link):
    """A program calling ncclGetVersion and ncclCommWindowRegister (2.28),
    linked as link says."""
    src = os.path.join(d, f"{name}.c")
    with open(src, "w") as f:
        f.write("#include <nccl.h>\nint main(int argc, char **argv) { int v; (void)argv;\n"
                "  ncclGetVersion(&v); if (argc > 5) ncclCommWindowRegister(0, 0, 0, 0, 0);\n"
                "  return 0; }\n")
    return t.compile_c(os.path.join(d, name), [src, f"-I{t.NCCL_INCLUDE}"] + link)


@case
def text_views_show_control_bytes():
    """A directory named with a terminal escape, one with a byte that is not
    UTF-8 and one in UTF-8, in LAZYNCCL_LIBPATH: every text view (default,
    --verbose, --doctor, on a terminal with colour too) and standard error
    show the escape and the stray byte as \\xNN, the UTF-8 name as it is,
    and write no other control byte than newline and tab."""
    d = os.fsencode(t.workdir("info_control_bytes"))
    names = [b"a\x1b]0;pwned\x07b", b"caf\xe9", "café".encode()]
    for n in names:
        os.makedirs(d + b"/" + n)
    env = {k.encode(): v.encode() for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env[b"LAZYNCCL_LIBPATH"] = b":".join(d + b"/" + n for n in names)
    env[b"NO_COLOR"] = b"1"
    exe = os.path.join(t.BUILD, "lazynccl-info")
    for args in (["nccl"], ["--verbose", "nccl"], ["--doctor", "--verbose", "nccl"], ["nccl", "\x1bbad"]):
        r = subprocess.run([exe] + args, env=env, capture_output=True, timeout=60)
        both = r.stdout + r.stderr
        raw = sorted({c for c in both if (c < 0x20 and c not in b"\n\t") or c == 0x7f})
        t.equal(raw, [], f"{args}: control bytes written")
        text = both.decode("utf-8")  # raises where a stray byte was written
        if args[-1] == "nccl":
            t.contains(text, "a\\x1b]0;pwned\\x07b", f"{args}: the escape shown")
            if "--verbose" in args:  # the other views name the first only
                t.contains(text, "caf\\xe9", f"{args}: the stray byte shown")
                t.contains(text, "café", f"{args}: UTF-8 as it is")
        else:
            t.contains(text, "'\\x1bbad': this installation has no shim for it", "stderr")
    env.pop(b"NO_COLOR")
    out = run_in_pty([exe, "--verbose", "nccl"], {k.decode(): v.decode("utf-8", "surrogateescape")
                                                  for k, v in env.items()})
    t.contains(out, "a\\x1b]0;pwned\\x07b", "on a terminal: the escape shown")
    t.check("\x1b]0" not in out and "\x07" not in out, "on a terminal: the escape not written")
    t.contains(out, "\033[", "on a terminal: the views' own colour")


@case
def check_a_program_before_it_runs():
    """--check reads a program's closure without loading anything: linked to
    the shim, NCCL's search and the two functions it imports are ok (exit
    0); linked to NCCL itself with an older NCCL (a fake lacking
    ncclCommWindowRegister) first in LD_LIBRARY_PATH, the dynamic linker's
    choice is a problem naming what it lacks and who imports it (exit 1),
    and LAZYNCCL_LIBPATH naming 2.28.9 makes it ok; a soname nothing
    resolves is a problem; a file that is no ELF object exits 2."""
    real = t.real_library("libnccl.so.2")
    d = t.workdir("info_check")
    shimmed = check_prog(d, "shimmed", t.link_shim_args("nccl"))
    r = info("--check", shimmed, rc=0)
    t.contains(r.stdout, f"check: {shimmed}\n", "head")
    # Given twice, each in turn; the worst status (2: one is no object).
    two = info("--check", shimmed, "--check", shimmed + ".c", rc=2)
    t.contains(two.stdout, f"check: {shimmed}\n", "the first checked")
    t.contains(two.stderr, f"--check {shimmed}.c: ", "the second said")
    t.check(re.search(r"^NCCL: ok: \S+libnccl.so.2 \(the shim's search, step \S+\) exports all 2 "
                      r"functions the target needs$", r.stdout, re.M), r.stdout)
    t.contains(r.stdout, "verdict: ok", "verdict")
    direct = check_prog(d, "direct", [f"-L{os.path.dirname(real)}", "-l:libnccl.so.2"])
    old = t.fake_nccl(f"{d}/old")
    r = info("--check", direct, env={"LD_LIBRARY_PATH": f"{d}/old"}, rc=1)
    t.contains(r.stdout, f"NCCL: problem: {old} (the dynamic linker's choice, which a drop-in under "
               f"lazynccl-run keeps) lacks 1 of the 2 functions the target needs: ncclCommWindowRegister "
               f"(imported by {direct})", "the problem")
    t.contains(r.stdout, "verdict: problems found", "verdict")
    r = info("--check", direct, env={"LD_LIBRARY_PATH": f"{d}/old", "LAZYNCCL_LIBPATH": real}, rc=0)
    t.contains(r.stdout, f"NCCL: ok: {real} (its override, step LAZYNCCL_LIBPATH)", "the override")
    os.makedirs(f"{d}/gone", exist_ok=True)
    with open(f"{d}/gone/gone.c", "w") as f:
        f.write("int gone(void) { return 1; }\n")
    t.compile_c(f"{d}/gone/libgone.so", [f"{d}/gone/gone.c", "-Wl,-soname,libgone.so.1"], shared=True)
    with open(f"{d}/needy.c", "w") as f:
        f.write("int gone(void);\nint main(void) { return gone(); }\n")
    needy = t.compile_c(os.path.join(d, "needy"), [f"{d}/needy.c", f"-L{d}/gone", "-lgone"])
    os.remove(f"{d}/gone/libgone.so")
    r = info("--check", needy, rc=1)
    t.contains(r.stdout, f"libgone.so.1, needed by {needy}: not found", "a soname nothing resolves")
    r = t.run([os.path.join(t.BUILD, "lazynccl-info"), "--check", "shimmed"], cwd=d, check_rc=0)
    t.contains(r.stdout, "check: shimmed\n", "a target named without a slash")
    r = info("--check", shimmed, "--json", rc=2)
    t.contains(r.stderr, "--check takes none of --json, --doctor, --load, --from", "text only")
    r = info("--check", "/etc/passwd", rc=2)
    t.contains(r.stderr, "--check /etc/passwd: not an ELF file", "not ELF")
    r = info("--check", rc=2)
    t.equal(r.stderr, "lazynccl-info: --check needs a FILE: the program or library to check\n",
            "no FILE")


def ldd_of(prog, soname, env, cwd=None):
    r = t.run(["ldd", prog], env=env, cwd=cwd)
    line = next((l for l in r.stdout.splitlines() if l.strip().startswith(soname + " ")), "")
    return line.split("=>", 1)[1].split("(")[0].strip() if "=>" in line else ""


@case
def check_ldd_and_first_call_agree_on_ld_library_path():
    """An LD_LIBRARY_PATH split on ';' as well as ':' and one naming
    $ORIGIN (the program's directory): ldd, lazynccl-info --check and the
    first call all take the copy of NCCL it names, for a program linked
    -lnccl and one linked to the shim."""
    real = t.real_library("libnccl.so.2")
    d = t.workdir("check_llp")
    fake = t.fake_nccl(f"{d}/fake", version=2811)
    direct = t.version_prog(d, "direct", [f"-L{os.path.dirname(real)}", "-l:libnccl.so.2"])
    shimmed = t.version_prog(d, "shimmed", t.link_shim_args("nccl"))
    # A '$' that names no token is the directory's own, as ld.so reads it.
    os.makedirs(f"{d}/do$x", exist_ok=True)
    shutil.copy(fake, f"{d}/do$x/libnccl.so.2")
    copy = f"{d}/do$x/libnccl.so.2"
    for llp, fake in ((f"/nonexistent;{d}/fake", fake), (f"/nonexistent:{d}/fake", fake),
                      ("$ORIGIN/fake", fake), (f"{d}/do$x", copy)):
        env = {"LD_LIBRARY_PATH": llp}
        t.equal(ldd_of(direct, "libnccl.so.2", env), fake, f"ldd with {llp}")
        r = info("--check", direct, env=env)
        t.contains(r.stdout, f"NCCL: ok: {fake} (the dynamic linker's choice", f"--check -lnccl with {llp}")
        r = info("--check", shimmed, env=env)
        t.contains(r.stdout, f"NCCL: ok: {fake} (the shim's search, step LD_LIBRARY_PATH)",
                   f"--check shim with {llp}")
        r = t.run([shimmed], env=dict(env, LAZYNCCL_DEBUG="1"), check_rc=0)
        t.equal(r.stdout, "rc=0 version=2811\n", f"first call with {llp}")
        t.contains(r.stderr, f"loaded {fake} (found by: LD_LIBRARY_PATH)", f"first call with {llp}")


@case
def check_ldd_and_first_call_agree_on_glibc_hwcaps():
    """A directory of LD_LIBRARY_PATH with glibc-hwcaps subdirectories
    (x86-64-v2, one no CPU runs, power10, and the directory itself): ldd,
    lazynccl-info --check and the first call of a program linked to the
    shim take the copy ld.so takes for a program linked -lnccl, the best
    subdirectory this CPU runs; with ld.so run as a command, its
    --glibc-hwcaps-mask (the built-in subdirectories kept to a list) and
    --glibc-hwcaps-prepend (names of one's own, searched first) are
    followed too, and a gnu_get_libc_version preloaded from another
    object changes nothing. A directory without glibc-hwcaps costs the
    first call one failed lookup more, not one per subdirectory."""
    real = t.real_library("libnccl.so.2")
    if t.HOST_CPU != "x86_64":
        raise t.Skip("the built-in glibc-hwcaps subdirectories tried are x86-64's")
    d = t.workdir("check_hwcaps")
    hw = t.fake_nccl_tree(f"{d}/hw", {"": 2820, "glibc-hwcaps/x86-64-v2": 2821, "glibc-hwcaps/power10": 2822,
                                      "glibc-hwcaps/mine": 2823})
    direct = t.version_prog(d, "direct", [f"-L{os.path.dirname(real)}", "-l:libnccl.so.2"])
    shimmed = t.version_prog(d, "shimmed", t.link_shim_args("nccl"))
    env = {"LD_LIBRARY_PATH": hw}
    plain = t.run([direct], env=env, check_rc=0).stdout
    t.equal(plain, "rc=0 version=2821\n", "plain: the x86-64-v2 subdirectory's copy (every x86-64 CPU "
            "since 2009 runs it)")
    chosen = f"{hw}/glibc-hwcaps/x86-64-v2/libnccl.so.2"
    t.equal(ldd_of(direct, "libnccl.so.2", env), chosen, "ldd")
    r = info("--check", direct, env=env)
    t.contains(r.stdout, f"NCCL: ok: {chosen} (the dynamic linker's choice", "--check -lnccl")
    r = info("--check", shimmed, env=env)
    t.contains(r.stdout, f"NCCL: ok: {chosen} (the shim's search, step LD_LIBRARY_PATH)", "--check shim")
    r = t.run([shimmed], env=dict(env, LAZYNCCL_DEBUG="1"), check_rc=0)
    t.equal(r.stdout, plain, "the first call")
    t.contains(r.stderr, f"loaded {chosen} (found by: LD_LIBRARY_PATH)", "the first call's file")
    # gnu_get_libc_version preloaded, answering from another object (a
    # sandbox's, a test harness's): the C library is still found, and with
    # it the CPU's subdirectories.
    src = f"{d}/version.c"
    with open(src, "w") as f:
        f.write('static const char v[] = "%s";\nconst char *gnu_get_libc_version(void) { return v; }\n'
                % t.glibc_version())
    pre = t.compile_c(f"{d}/libversion.so", [src], shared=True)
    penv = dict(env, LD_PRELOAD=pre)
    if t.SANITIZE not in ("", "none"):
        penv["ASAN_OPTIONS"] = "verify_asan_link_order=0"  # the preload comes before ASan's runtime
    t.equal(t.run([direct], env=penv, check_rc=0).stdout, plain, "plain, gnu_get_libc_version preloaded")
    t.equal(t.run([shimmed], env=penv, check_rc=0).stdout, plain,
            "the first call, gnu_get_libc_version preloaded")
    # ld.so as a command: its options choose the subdirectories.
    ldso = t.run(["sh", "-c", "readlink -f /lib64/ld-linux-x86-64.so.2"], check_rc=0).stdout.strip()
    for opts in (["--glibc-hwcaps-mask", "x86-64-v9"], ["--glibc-hwcaps-prepend", "mine"],
                 ["--glibc-hwcaps-prepend", "nothing:mine", "--glibc-hwcaps-mask", ""]):
        p = t.run([ldso] + opts + [direct], env=env, check_rc=0).stdout
        w = t.run([ldso] + opts + [shimmed], env=env, check_rc=0).stdout
        t.equal(w, p, f"ld.so {' '.join(opts)}: the first call as -lnccl")
    t.equal(t.run([ldso, "--glibc-hwcaps-prepend", "mine", direct], env=env).stdout,
            "rc=0 version=2823\n", "plain: the prepended subdirectory first")
    # Seventeen names and a long one before: none dropped.
    many = ":".join([f"n{i}" for i in range(17)] + ["x" * 300, "mine"])
    t.equal(t.run([ldso, "--glibc-hwcaps-prepend", many, shimmed], env=env, check_rc=0).stdout,
            "rc=0 version=2823\n", "a long prepended list, the first call")
    # ld.so's options after an argument longer than 64 KiB.
    pad = ["--argv0", "p" * 70000, "--glibc-hwcaps-prepend", "mine"]
    t.equal(t.run([ldso] + pad + [shimmed], env=env, check_rc=0).stdout, "rc=0 version=2823\n",
            "options after a long argument, the first call")
    # A feature of the baseline turned off: glibc then runs no level.
    for tunables in ("glibc.cpu.hwcaps=-CX8", "glibc.cpu.hwcaps=-SSE4_2", "glibc.cpu.hwcaps=-AVX2"):
        tenv = dict(env, GLIBC_TUNABLES=tunables)
        p = t.run([direct], env=tenv, check_rc=0).stdout
        t.equal(t.run([shimmed], env=tenv, check_rc=0).stdout, p, f"{tunables}: the first call as -lnccl")
        want = "2820" if "AVX2" not in tunables else "2821"
        t.equal(p, f"rc=0 version={want}\n", f"{tunables}: plain")
    # The cost where a directory has none: one stat of DIR/glibc-hwcaps
    # (LeakSanitizer cannot run under strace).
    if shutil.which("strace") and t.SANITIZE == "none":
        empty = t.fake_nccl(f"{d}/flat", version=2824)
        r = t.run(["strace", "-f", "-e", "trace=%file", shimmed], env={"LD_LIBRARY_PATH": f"{d}/none:{d}/flat"})
        t.equal(r.returncode, 0, r.stderr[-2000:])
        # ld.so's own looks name each subdirectory; the first call's, the
        # directory of them.
        caps = [l for l in r.stderr.splitlines() if 'glibc-hwcaps"' in l]
        t.equal(len(caps), 2, "one look per directory:\n" + "\n".join(caps))
        t.contains(r.stdout, "version=2824", f"the flat directory's copy ({empty})")


@case
def check_ldd_and_first_call_agree_on_platform_and_lib():
    """Run paths and LD_LIBRARY_PATH entries naming $LIB, ${LIB},
    $PLATFORM and ${PLATFORM}, with a copy of NCCL under each name either
    token could stand for: ldd, lazynccl-info --check and the first call
    of a program linked to the shim take the copy ld.so takes for a
    program linked -lnccl (the tokens' values read from the running
    ld.so)."""
    real = t.real_library("libnccl.so.2")
    d = t.workdir("check_dst")
    names = {"lib/x86_64-linux-gnu": 2840, "lib/aarch64-linux-gnu": 2841, "lib64": 2842, "lib": 2843,
             "x86_64-linux-gnu": 2844, "p/x86_64": 2845, "p/haswell": 2846, "p/xeon_phi": 2847,
             "p/aarch64": 2848}
    tree = t.fake_nccl_tree(f"{d}/t", names)
    rows = {"$LIB in the run path": ("$ORIGIN/t/$LIB", None, None),
            "${LIB} in the run path": ("$ORIGIN/t/${LIB}", None, None),
            "$PLATFORM in the run path": ("$ORIGIN/t/p/$PLATFORM", None, None),
            "${PLATFORM} in LD_LIBRARY_PATH": (None, f"{tree}/p/${{PLATFORM}}", None),
            "$LIB in LD_LIBRARY_PATH": (None, f"{tree}/$LIB", None),
            # Relative once expanded: the current directory's.
            "$LIB alone in the run path, run from the tree": ("$LIB:lib64", None, tree)}
    for i, (what, (runpath, llp, cwd)) in enumerate(rows.items()):
        extra = [f"-Wl,-rpath,{runpath}"] if runpath else []
        direct = t.version_prog(d, f"direct{i}", [f"-L{os.path.dirname(real)}", "-l:libnccl.so.2"] + extra)
        shimmed = t.version_prog(d, f"shimmed{i}", t.link_shim_args("nccl") + extra)
        env = {"LD_LIBRARY_PATH": llp} if llp else {}
        plain = t.run([direct], env=env, cwd=cwd, check_rc=0).stdout
        t.check(plain in {f"rc=0 version={v}\n" for v in names.values()}, f"{what}: plain loads a copy: {plain}")
        chosen = ldd_of(direct, "libnccl.so.2", env, cwd=cwd)
        chosen = os.path.join(cwd, chosen) if cwd else chosen  # ldd names it as the entry did
        t.check(chosen.startswith(tree + "/"), f"{what}: ldd: {chosen}")
        r = t.run([shimmed], env=dict(env, LAZYNCCL_DEBUG="1"), cwd=cwd, check_rc=0)
        t.equal(r.stdout, plain, f"{what}: the first call")
        t.contains(r.stderr, f"loaded {chosen} (found by: ", f"{what}: the first call's file")
        r = info("--check", shimmed, env=env, cwd=cwd)
        t.contains(r.stdout, f"NCCL: ok: {chosen} (the shim's search", f"{what}: --check shim")


@case
def check_ldd_and_first_call_agree_on_legacy_hwcaps():
    """glibc before 2.37 searches each directory's legacy subdirectories too
    (tls/, the platform's, x86_64/ and their combinations, after its
    glibc-hwcaps ones and before the directory itself): in an
    LD_LIBRARY_PATH directory holding copies in several of them, ldd,
    lazynccl-info --check and the first call of a program linked to the
    shim take the copy ld.so takes for one linked -lnccl, layout by layout
    as the best is taken away. Where a directory has none of them, they
    cost the first call one failed look per name ("tls", "x86_64")."""
    real = t.real_library("libnccl.so.2")
    if t.HOST_CPU != "x86_64":
        raise t.Skip("the legacy subdirectories are followed on x86-64")
    libc = os.confstr("CS_GNU_LIBC_VERSION").split()[-1]
    if tuple(int(x) for x in libc.split(".")[:2]) >= (2, 37):
        raise t.Skip(f"glibc {libc} has no legacy subdirectories")
    d = t.workdir("check_legacy_hwcaps")
    direct = t.version_prog(d, "direct", [f"-L{os.path.dirname(real)}", "-l:libnccl.so.2"])
    shimmed = t.version_prog(d, "shimmed", t.link_shim_args("nccl"))
    platform = t.run(["sh", "-c", "LD_SHOW_AUXV=1 /bin/true"], check_rc=0).stdout
    platform = platform.split("AT_PLATFORM:", 1)[1].split()[0]
    subdirs = {"": 2830, "x86_64": 2831, "tls": 2832, f"tls/{platform}": 2833, "x86_64/x86_64": 2834,
               f"{platform}/x86_64": 2835, "glibc-hwcaps/x86-64-v2": 2836, "tls/x86_64/x86_64": 2838}
    seen = []
    while True:
        tree = t.fake_nccl_tree(f"{d}/t{len(seen)}", subdirs)
        env = {"LD_LIBRARY_PATH": tree}
        plain = t.run([direct], env=env, check_rc=0).stdout
        chosen = ldd_of(direct, "libnccl.so.2", env)
        r = t.run([shimmed], env=dict(env, LAZYNCCL_DEBUG="1"), check_rc=0)
        t.equal(r.stdout, plain, f"the first call, with {sorted(subdirs)}")
        t.contains(r.stderr, f"loaded {chosen} (found by: LD_LIBRARY_PATH)", f"the first call's file ({chosen})")
        r = info("--check", shimmed, env=env)
        t.contains(r.stdout, f"NCCL: ok: {chosen} (the shim's search, step LD_LIBRARY_PATH)", "--check shim")
        seen.append(os.path.relpath(os.path.dirname(chosen), tree))
        if seen[-1] == ".":
            break
        subdirs.pop(seen[-1])  # the best taken away: the next one's turn
    t.equal(seen, ["glibc-hwcaps/x86-64-v2", "tls/x86_64/x86_64"] + (["tls/x86_64"] if platform == "x86_64" else
            [f"tls/{platform}", "tls/x86_64"]) + ["tls", "x86_64/x86_64"] +
            (["x86_64"] if platform == "x86_64" else [f"{platform}/x86_64", platform, "x86_64"]) + ["."],
            "ld.so's order, each layout's best taken away in turn")
    # The hwcap mask as glibc 2.36 takes it: x86_64/x86_64 is searched only
    # where the mask keeps the x86_64 bit (0x2). A value's leading number
    # (garbage is 0), the first LD_HWCAP_MASK, the last setting in
    # GLIBC_TUNABLES (whose strings glibc cuts at start: read from its
    # copy), which no piece of such a string passes for a variable.
    tree = t.fake_nccl_tree(f"{d}/mask", {"": 2840, "x86_64/x86_64": 2841})
    for extra in ({"LD_HWCAP_MASK": "0"}, {"LD_HWCAP_MASK": "garbage"}, {"LD_HWCAP_MASK": "0x2"},
                  {"GLIBC_TUNABLES": "glibc.malloc.check=0:glibc.cpu.hwcap_mask=0"},
                  {"GLIBC_TUNABLES": "glibc.cpu.hwcap_mask=0:glibc.cpu.hwcap_mask=2"},
                  {"GLIBC_TUNABLES": "glibc.cpu.hwcap_mask=2:glibc.cpu.hwcap_mask=0"},
                  {"GLIBC_TUNABLES": "glibc.cpu.hwcap_mask=", "LD_HWCAP_MASK": "2"}):
        env = dict(extra, LD_LIBRARY_PATH=tree)
        plain = t.run([direct], env=env, check_rc=0).stdout
        t.equal(t.run([shimmed], env=env, check_rc=0).stdout, plain, f"{extra}: the first call as -lnccl")
    masked = [t.run([direct], env={"LD_LIBRARY_PATH": tree, "LD_HWCAP_MASK": m}, check_rc=0).stdout
              for m in ("0", "2")]
    t.equal(masked, ["rc=0 version=2840\n", "rc=0 version=2841\n"], "plain: the mask decides")
    spoof = {"GLIBC_TUNABLES": f"glibc.malloc.check=0:LD_LIBRARY_PATH={tree}"}
    t.equal(t.run([shimmed], env=spoof, check_rc=0).stdout, t.run([direct], env=spoof, check_rc=0).stdout,
            "a GLIBC_TUNABLES piece is no LD_LIBRARY_PATH")
    if shutil.which("strace") and t.SANITIZE == "none":
        flat = t.fake_nccl(f"{d}/flat", version=2837)

        def failed_looks(env):
            r = t.run(["strace", "-f", "-e", "trace=%file", shimmed], env=dict(env, LD_LIBRARY_PATH=f"{d}/flat"))
            t.contains(r.stdout, "version=2837", f"the flat directory's copy ({flat})")
            return sorted(l.split('"')[1] for l in r.stderr.splitlines()
                          if f'"{d}/flat/' in l and "ENOENT" in l)
        # ld.so's own looks at start are the same both ways; the first
        # call's are those a search adds to a load of the file named.
        searched, named = failed_looks({}), failed_looks({"LAZYNCCL_LIBPATH": flat})
        for p in named:
            searched.remove(p)
        t.equal(searched, sorted({f"{d}/flat/glibc-hwcaps", f"{d}/flat/tls", f"{d}/flat/x86_64",
                                  f"{d}/flat/{platform}"}), "the first call's failed looks in a flat directory")


@case
def check_ldd_and_first_call_agree_on_nodeflib():
    """A plugin linked -z nodefaultlib (DF_1_NODEFLIB) whose NCCL lies only
    in a system directory (an overlay on /usr/lib in a mount namespace, and
    an ld.so.cache listing it): ldd, lazynccl-info --check and the first
    call all find none, where the same plugin without the flag gets that
    copy each way. The system directories are ld.so's own (Debian's
    has no /lib64)."""
    real = t.real_library("libnccl.so.2")
    if t.run(["unshare", "-m", "true"]).returncode != 0:
        raise t.Skip("no mount namespace here (unshare -m needs root)")
    d = t.workdir("check_nodeflib")
    os.makedirs(f"{d}/sys", exist_ok=True)
    fake = t.fake_nccl(f"{d}/sys", version=2812)
    with open(f"{d}/plug.c", "w") as f:
        f.write("#include <nccl.h>\nint plug(void) { int v = -1; int rc = ncclGetVersion(&v); "
                "return rc ? -rc : v; }\n")
    with open(f"{d}/host.c", "w") as f:
        f.write("#include <dlfcn.h>\n#include <stdio.h>\nint main(int c, char **v) { (void)c;\n"
                "  void *h = dlopen(v[1], RTLD_NOW);\n  if (!h) { printf(\"dlopen failed\\n\"); return 0; }\n"
                "  int (*f)(void) = (int (*)(void))dlsym(h, \"plug\");\n"
                "  printf(\"plug=%d\\n\", f()); return 0; }\n")
    host = t.compile_c(f"{d}/host", [f"{d}/host.c", "-ldl"] + t.sanitizer_link_args())
    inc = [f"-I{t.NCCL_INCLUDE}"]
    direct = [f"-L{os.path.dirname(real)}", "-l:libnccl.so.2"]
    plugins = {}
    for how, link in (("direct", inc + direct), ("shim", t.link_shim_args("nccl"))):
        for flag in ("", "-Wl,-z,nodefaultlib"):
            name = f"{d}/lib{how}{'_ndl' if flag else ''}.so"
            plugins[name] = t.compile_c(name, [f"{d}/plug.c"] + link + ([flag] if flag else []), shared=True)
    cuda_lib = os.path.realpath(os.path.dirname(real))
    script = f"""set -e
mount -t overlay overlay -o lowerdir={d}/sys:/usr/lib /usr/lib
: > {d}/empty.conf
ldconfig -C {d}/ns.cache -f {d}/empty.conf
mount --bind {d}/ns.cache /etc/ld.so.cache
mkdir -p {d}/empty
mount --bind {d}/empty {cuda_lib}
for p in {' '.join(plugins)}; do
  echo "== $p"
  echo "ldd: $(ldd $p | grep libnccl.so.2 | sed 's/ (0x.*//')"
  echo "run: $({host} $p 2>/dev/null)"
  echo "check: $({os.path.join(t.BUILD, 'lazynccl-info')} --check $p | grep '^NCCL:')"
done
"""
    r = t.run(["unshare", "-m", "sh", "-c", script])
    if r.returncode != 0 and "overlay" in r.stderr:
        raise t.Skip(f"no overlay mount here: {r.stderr.strip()}")
    t.equal(r.returncode, 0, f"the namespace: {r.stderr}")
    for p in plugins:
        block = r.stdout.split(f"== {p}\n", 1)[1].split("\n==", 1)[0]
        ndl = p.endswith("_ndl.so")
        if "direct" in p:
            t.contains(block, "ldd: \tlibnccl.so.2 => " + ("not found" if ndl else "/lib/libnccl.so.2"),
                       f"ldd {p}")
            t.contains(block, "run: dlopen failed" if ndl else "run: plug=2812", f"plain {p}")
            t.contains(block, "needs libnccl.so.2, which the dynamic linker does not find" if ndl
                       else "check: NCCL: ok: /lib/libnccl.so.2", f"--check {p}")
        else:
            t.contains(block, "run: plug=-2" if ndl else "run: plug=2812", f"first call {p}")
            t.contains(block, "check: NCCL: problem: nothing would load" if ndl
                       else "check: NCCL: ok: /lib/libnccl.so.2", f"--check {p}")


@case
def info_output_unwritable_fails():
    """lazynccl-info whose output cannot be written (a full disk, a closed
    standard output) exits 2 saying so, whichever view it was printing: the
    default, --check, --cache, --reports, --steps and --help."""
    info = os.path.join(t.BUILD, "lazynccl-info")
    d = t.workdir("info_unwritable")
    cache = os.path.join(d, "job.cache")
    reports = os.path.join(d, "reports")
    t.run([os.path.join(t.BUILD, "lazynccl-run"), "--cache", cache, "--report", reports, "/bin/true"], check_rc=0)
    for args in ([], ["--check", "/bin/true"], ["--cache", cache], ["--reports", reports], ["--steps"],
                 ["--help"]):
        for how in (["sh", "-c", 'exec "$0" "$@" > /dev/full'], ["sh", "-c", 'exec "$0" "$@" >&-']):
            r = t.run(how + [info] + args)
            t.equal(r.returncode, 2, f"{' '.join(args) or 'default'}, {how[-1]}: {r.stderr}")
            t.contains(r.stderr, "lazynccl-info: cannot write the output", "says why")


if __name__ == "__main__":
    raise SystemExit(t.main())
