# SPDX-License-Identifier: MIT
"""Small harness for the test scripts (standard library only).

Each test script defines cases with @case and ends with lztest.main(). Meson
runs one case per test: `python3 tests/test_x.py CASE`. Exit status: 0 pass,
1 fail, 77 skip (with the reason printed). Fake libraries and programs are
compiled by the cases themselves into a fresh directory per case.
"""

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading

BUILD = os.environ.get("LZ_BUILD_DIR", "")
# Where src/meson.build puts the shims, their generated C, export lists and
# amalgamations (the public header lazynccl_api.h stays in BUILD).
SHIMS = os.path.join(BUILD, "src")
SOURCE = os.environ.get("LZ_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CC = shlex.split(os.environ.get("LZ_CC", "cc"))
NCCL_INCLUDE = os.environ.get("LZ_NCCL_INCLUDE", "/usr/local/cuda/include")
CUDA_INCLUDE = os.environ.get("LZ_CUDA_INCLUDE", "/usr/local/cuda/include")
OPTIMIZATION = os.environ.get("LZ_OPTIMIZATION", "2")
SANITIZE = os.environ.get("LZ_SANITIZE", "none")
PROGS = os.path.join(SOURCE, "tests", "progs")
FAKES = os.path.join(SOURCE, "tests", "fakes")

CASES = {}
SKIP = 77


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def case_per(items, body, name, doc):
    """One case per item: body(item), named name.format(item), documented
    doc.format(item) (a library each, say)."""
    for item in items:
        fn = (lambda it: lambda: body(it))(item)
        fn.__name__ = name.format(item)
        fn.__doc__ = doc.format(item)
        case(fn)


def check(cond, message):
    if not cond:
        raise Fail(message)


def equal(got, want, what):
    if got != want:
        raise Fail(f"{what}: got {got!r}, want {want!r}")


def contains(text, part, what):
    if part not in text:
        raise Fail(f"{what}: {part!r} not found in:\n{text}")


def flat(text):
    """Text with every run of white space made one space (wrapped output)."""
    return " ".join(text.split())


def workdir(name):
    d = os.path.realpath(os.path.join(BUILD or "/tmp", "tests-work", name))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


EXE_WRAPPER = shlex.split(os.environ.get("LZ_EXE_WRAPPER", ""))
HOST_CPU = os.environ.get("LZ_HOST_CPU", os.uname().machine)


def _foreign_elf(path):
    """True for an ELF file of another machine than this one (a cross build's
    program, run under EXE_WRAPPER)."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return False
    if head[:4] != b"\x7fELF":
        return False
    machine = int.from_bytes(head[18:20], "little")
    return machine != {"x86_64": 62, "aarch64": 183}.get(os.uname().machine, machine)


def run(cmd, env=None, check_rc=None, cwd=None, input=None, timeout=None):
    """Run a command with a clean, explicit environment on top of os.environ;
    a program of a cross build runs under its wrapper (qemu). With timeout
    (seconds), a command still running then fails the case, with the stack
    of each of its threads (gdb) where gdb is installed."""
    if EXE_WRAPPER and cmd and _foreign_elf(cmd[0]):
        cmd = EXE_WRAPPER + list(cmd)
    e = dict(os.environ)
    # Only what a case sets: the search order reads all of these.
    for k in ("LAZYNCCL_LIBPATH", "LAZYNVRTC_LIBPATH", "LAZYNVJITLINK_LIBPATH", "LAZYZLIB_LIBPATH",
              "LAZYCURAND_LIBPATH",
              "LAZYNCCL_DEBUG", "LAZYNCCL_STRICT_VERSIONS", "LZ_CTOR_LOG", "LD_LIBRARY_PATH",
              "CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH", "NCCL_HOME", "NCCL_NET_PLUGIN",
              # lazynccl-run's node copy lies in /dev/shm (test_audit.node_copy)
              "XDG_RUNTIME_DIR", "LAZYNCCL_NODE_DIR"):
        e.pop(k, None)
    e.update(env or {})
    if timeout is not None:
        r = _run_bounded(cmd, e, cwd, input, timeout)
    else:
        r = subprocess.run(cmd, env=e, capture_output=True, text=True, cwd=cwd, input=input,
                           errors="replace")
    if check_rc is not None and r.returncode != check_rc:
        raise Fail(f"{shlex.join(cmd)} exited {r.returncode}, want {check_rc}\n"
                   f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r


def _descendants(pid):
    """The processes below pid, from /proc: [(pid, command line)]."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            cmdline = open(f"/proc/{entry}/cmdline").read().replace("\0", " ").strip()
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append((int(entry), cmdline))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


def _condensed(bt):
    """gdb's "thread apply all bt" as a line per thread, innermost function
    first ("f < caller < ..."), threads of the same stack counted once: a
    CI log is read from its tail, where a few lines must say where."""
    stacks, cur, said = [], None, []
    for line in bt.splitlines():
        if line.startswith("$"):  # a value printed before the stacks
            said.append(f"  {line[:400]}")
        elif line.startswith("Thread "):
            m = re.search(r"\(LWP (\d+)\)", line)
            cur = []
            stacks.append((m.group(1) if m else "?", cur))
        elif cur is not None and line.startswith("#"):
            m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(\S+)", line)
            if m:
                cur.append(m.group(1))
    groups = {}
    for lwp, frames in stacks:
        groups.setdefault(" < ".join(frames[:12]), []).append(lwp)
    return "\n".join(said + [f"  {len(l)} thread{'s' if len(l) > 1 else ''} "
                              f"({', '.join(l[:6])}{' ...' if len(l) > 6 else ''}): {k}"
                              for k, l in groups.items()])


def _stacks(procs):
    """Each process's command line and the stacks of its threads (gdb,
    where installed), condensed."""
    out = []
    for pid, cmdline in procs:
        out.append(f"--- process {pid}: {cmdline[:300]}")
        if shutil.which("gdb"):
            try:
                out.append(_condensed(subprocess.run(
                    # The dynamic linker's lock first: who holds it.
                    ["gdb", "-q", "-batch", "-p", str(pid), "-ex",
                     "p _rtld_global._dl_load_lock.mutex.__data", "-ex", "thread apply all bt"],
                    capture_output=True, text=True, errors="replace", timeout=60).stdout))
            except subprocess.TimeoutExpired:
                out.append("  (gdb did not finish in 60 s)")
    return "\n".join(out)


def _run_bounded(cmd, env, cwd, input, timeout):
    # A session of its own: on a hang, every process it started is killed,
    # so that none holds the pipes open.
    p = subprocess.Popen(cmd, env=env, cwd=cwd, text=True, errors="replace",
                         stdin=subprocess.PIPE if input is not None else None,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        stacks = _stacks([(p.pid, shlex.join(cmd))] + _descendants(p.pid))
        os.killpg(p.pid, signal.SIGKILL)
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            out, err = "", "(its output still held open)"
        raise Fail(f"{shlex.join(cmd)} still ran after {timeout} s (a hang); its threads:\n"
                   f"{stacks[-16000:]}\nstdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}")
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


@contextlib.contextmanager
def noexec_tmpfs(path, size="4m"):
    """A tmpfs mounted noexec at path (made, and unmounted after), where the
    dynamic linker cannot map a file; skipped where mounting needs root."""
    os.makedirs(path, exist_ok=True)
    subprocess.run(["umount", path], stderr=subprocess.DEVNULL)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"noexec,size={size}", "tmpfs", path],
                      stderr=subprocess.DEVNULL).returncode != 0:
        raise Skip("mounting a tmpfs needs root")
    try:
        yield path
    finally:
        subprocess.run(["umount", path])


def compile_c(out, sources, args=(), shared=False):
    cmd = CC + (["-shared", "-fPIC"] if shared else []) + ["-o", out] + list(sources) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Fail(f"compile failed: {shlex.join(cmd)}\n{r.stderr}")
    return out


def dlopen_host(d, symbol, link=()):
    """A program in d that dlopens the objects its arguments name, in
    order, then prints what each one's int function symbol() returns
    ("version N", a line each), linked with link."""
    main = os.path.join(d, "host.c")
    with open(main, "w") as f:
        f.write("#include <dlfcn.h>\n#include <stdio.h>\n"
                "int main(int c, char **v) { void *h[16];\n"
                "  for (int i = 1; i < c && i < 16; i++) if (!(h[i] = dlopen(v[i], RTLD_NOW))) {\n"
                "    printf(\"dlopen: %s\\n\", dlerror()); return 1; }\n"
                "  for (int i = 1; i < c && i < 16; i++) {\n"
                f"    int (*f)(void) = (int (*)(void))dlsym(h[i], \"{symbol}\");\n"
                "    printf(\"version %d\\n\", f()); }\n  return 0; }\n")
    return compile_c(os.path.join(d, "host"), [main, "-ldl", *link])


def shim(lib, static=False):
    name = f"liblazy{lib}.a" if static else f"liblazy{lib}.so"
    return os.path.join(SHIMS, name)


def link_shim_args(*libs):
    args = [f"-I{SOURCE}/include", f"-I{BUILD}", f"-I{SHIMS}", f"-I{NCCL_INCLUDE}", f"-I{CUDA_INCLUDE}", f"-L{SHIMS}",
            f"-Wl,-rpath,{SHIMS}"]
    args += [f"-llazy{lib}" for lib in libs]
    return args + sanitizer_link_args()


def bind_client(d):
    """tests/progs/bind_client.c, linked to the shared NCCL shim with lazy
    binding."""
    return compile_c(os.path.join(d, "bind_client"), [os.path.join(PROGS, "bind_client.c")],
                     [f"-I{NCCL_INCLUDE}", "-Wl,-z,lazy"] + link_shim_args("nccl"))


def bound_slots(out):
    """{name: file} of a bind_client's PLT slots, from its got:NAME lines."""
    return dict(line[4:].split("=", 1) for line in out.splitlines() if line.startswith("got:"))


def fake_nccl(directory, name="libnccl.so.2", soname="libnccl.so.2", version=99999,
              omit=(), extra=()):
    """A fake NCCL: a few functions with recognisable answers."""
    os.makedirs(directory, exist_ok=True)
    args = [f"-DFAKE_VERSION={version}", f"-DFAKE_NAME=\"{directory}/{name}\"", f"-I{FAKES}"]
    args += [f"-DOMIT_{o}" for o in omit] + list(extra)
    if soname:
        args.append(f"-Wl,-soname,{soname}")
    return compile_c(os.path.join(directory, name), [os.path.join(FAKES, "fake_nccl.c")],
                     args, shared=True)


def fake_nccl_tree(root, versions):
    """Fake NCCLs below root, one per relative directory ("" for root
    itself) of versions, each answering its version: root."""
    for rel, version in versions.items():
        fake_nccl(os.path.join(root, rel) if rel else root, version=version)
    return root


def version_prog(d, name, link):
    """A program printing ncclGetVersion's answer ("rc=0 version=N"),
    linked with link (the real NCCL, or the shim)."""
    src = os.path.join(d, f"{name}.c")
    with open(src, "w") as f:
        f.write("#include <nccl.h>\n#include <stdio.h>\nint main(void) { int v = -1;\n"
                "  int rc = ncclGetVersion(&v); printf(\"rc=%d version=%d\\n\", rc, v); return 0; }\n")
    return compile_c(os.path.join(d, name), [src, f"-I{NCCL_INCLUDE}"] + list(link))


def real_library(soname):
    """Path of a real library for tests that need one, else raise Skip."""
    for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/lib"):
        p = os.path.join(d, soname)
        if os.path.exists(p):
            return p
    r = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True)
    m = re.search(rf"\s{re.escape(soname)} .*=> (\S+)", r.stdout)
    if m:
        return m.group(1)
    raise Skip(f"{soname} is not installed here")


def exported(path):
    """Defined dynamic symbols (functions), version suffixes removed."""
    r = run(["nm", "-D", "--defined-only", path], check_rc=0)
    names = set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TWiu":
            names.add(parts[2].split("@")[0])
    return names


def function_bodies(path, objdump="objdump", args=(), padding=("nop",), comment="#"):
    """{symbol: [instructions]} from objdump -d, comments (from comment on:
    "#" for x86, "//" for AArch64, where "#" starts an immediate) and the
    alignment padding (instructions starting with one of padding) dropped."""
    out = run([objdump, "-d", "--no-show-raw-insn", *args, path], check_rc=0).stdout
    bodies, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            cur = bodies.setdefault(m.group(1), [])
            continue
        m = re.match(rf"^\s+[0-9a-f]+:\s+(.*?)\s*({re.escape(comment)}.*)?$", line)
        if m and cur is not None and not m.group(1).startswith(padding):
            cur.append(m.group(1))
    return bodies


# Before meson's limit (300 s; 900 s for the two long cases, for which this
# is only early): long enough for every case to finish when it works.
WATCHDOG_SECONDS = 270


def watch_hangs(seconds):
    """A case still running after seconds prints every process it started,
    with the stack of each thread, once: the log of a case that then times
    out says where it hung. Nothing is stopped."""
    def report():
        procs = _descendants(os.getpid())
        print(f"still running after {seconds} s; the processes it started:\n{_stacks(procs)}",
              flush=True)
    timer = threading.Timer(seconds, report)
    timer.daemon = True
    timer.start()


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return 0
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print("usage: " + sys.argv[0] + " CASE; cases: " + ", ".join(CASES))
        return 2
    if not BUILD:
        # Run by hand: through meson test, which sets what a case reads
        # (the build and source directories, the compiler, the headers).
        build = os.path.join(SOURCE, "build")
        if not os.path.exists(os.path.join(build, "build.ninja")):
            print(f"{sys.argv[0]}: no build directory at {build}: run `meson setup build` in "
                  f"{SOURCE}, or `meson test -C BUILD {sys.argv[1]}`", file=sys.stderr)
            return 2
        os.execvp("meson", ["meson", "test", "-C", build, "--print-errorlogs", sys.argv[1]])
    watch_hangs(WATCHDOG_SECONDS)
    try:
        CASES[sys.argv[1]]()
    except Skip as e:
        print(f"SKIP: {e}")
        return SKIP
    except Fail as e:
        print(f"FAIL: {e}")
        return 1
    print("ok")
    return 0


def sanitizer_link_args():
    """Linking a program against an instrumented static archive needs the
    sanitizer runtime too."""
    if SANITIZE in ("", "none"):
        return []
    return [f"-fsanitize={SANITIZE}"]


def fake_nvjitlink(directory, major, minor, unversioned=False, version_node=False):
    """A fake nvJitLink of version major.minor: like the real ones, it exports
    __nvJitLinkGetErrorLogSize_<major>_<k> for every k up to minor, each
    answering size = major*100 + k."""
    os.makedirs(directory, exist_ok=True)
    soname = f"libnvJitLink.so.{major}"
    src = os.path.join(directory, "fake_nvjitlink.c")
    lines = ['#include <stddef.h>', '#include "' + os.path.join(FAKES, "fake_ctor.h") + '"']
    for k in range(minor + 1):
        lines.append(f"int __nvJitLinkGetErrorLogSize_{major}_{k}(void *h, size_t *s)"
                     f" {{ (void)h; *s = {major * 100 + k}; return 0; }}")
    if unversioned:
        lines.append(f"int nvJitLinkGetErrorLogSize(void *h, size_t *s)"
                     f" {{ (void)h; *s = {major * 100 + minor}; return 0; }}")
    with open(src, "w") as f:
        f.write("\n".join(lines) + "\n")
    path = os.path.join(directory, soname)
    args = [f"-Wl,-soname,{soname}", f"-DFAKE_NAME=\"{path}\""]
    if version_node:  # like the real ones: __nvJitLinkCreate_12_9@@libnvJitLink.so.12
        with open(os.path.join(directory, "fake.map"), "w") as f:
            f.write(f"{soname} {{ global: *; }};\n")
        args.append(f"-Wl,--version-script,{directory}/fake.map")
    return compile_c(path, [src], args, shared=True)


# --- real NVIDIA libraries from Debian's archive (tests/fetch_real.py) -------

TRIPLET = {"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}


def debian_cache():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fetch_real
    return fetch_real.cache_dir()


def debian(pkg, arch="amd64"):
    """The library directory of a Debian package unpacked by tests/fetch_real.py,
    or Skip, saying why, when the cache is not there."""
    cache = debian_cache()
    if not os.path.exists(os.path.join(cache, "complete")):
        raise Skip(f"the real Debian libraries are not in {cache}: Debian's archive could not "
                   f"be reached, or tests/fetch_real.py was not run")
    d = os.path.join(cache, arch, pkg, "usr", "lib", TRIPLET[arch])
    if not os.path.isdir(d):
        raise Skip(f"{pkg}:{arch} is not in {cache}")
    return d


def debian_include(pkg, arch="amd64"):
    debian(pkg, arch)
    return os.path.join(debian_cache(), arch, pkg, "usr", "include")


def ld_so_system_dirs():
    """The system directories of this machine's ld.so, as its --help lists
    them (what the runtime reads from ld.so itself)."""
    interp = subprocess.run(["readelf", "-l", "/bin/true"], capture_output=True, text=True).stdout
    ldso = interp.split("[Requesting program interpreter: ", 1)[1].split("]", 1)[0]
    text = subprocess.run([ldso, "--help"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in text.splitlines() if line.endswith("(system search path)")]


def newer_loader(arch="amd64"):
    """[ld.so, --library-path, DIRS] of trixie's C library, to run a program
    that must load a library needing a newer glibc (NCCL 2.22.3 needs 2.38)."""
    libc = debian("libc6", arch)
    ldso = os.path.join(libc, "ld-linux-x86-64.so.2" if arch == "amd64" else "ld-linux-aarch64.so.1")
    return ldso, libc


def hello32(name):
    """tests/launcher/hello32.s built as a 32-bit x86 PIE in workdir(name);
    Skip where no 32-bit dynamic linker is installed or the kernel cannot
    run 32-bit programs."""
    if HOST_CPU != "x86_64":
        raise Skip("32-bit x86 programs run on x86-64 hosts only")
    if not os.path.exists("/lib/ld-linux.so.2"):
        raise Skip("no 32-bit dynamic linker (Debian's libc6-i386)")
    exe = os.path.join(workdir(name), "hello32")
    run(["as", "--32", "-o", exe + ".o", os.path.join(SOURCE, "tests", "launcher", "hello32.s")], check_rc=0)
    run(["ld", "-m", "elf_i386", "-pie", "-dynamic-linker", "/lib/ld-linux.so.2", "-o", exe, exe + ".o"],
        check_rc=0)
    try:
        subprocess.run([exe], capture_output=True, check=False)
    except OSError as e:  # ENOEXEC: IA32 emulation off (ia32_emulation=false)
        raise Skip(f"this kernel cannot run 32-bit programs: {e.strerror}")
    return exe


def stage_source_tree(dst):
    """This repository's tree (what git would ship, as a wrap fetches it)
    copied to dst: a Meson subproject. Skip outside a git checkout."""
    files = run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                cwd=SOURCE).stdout.split()
    if not files:
        raise Skip("not a git checkout: cannot stage the subproject")
    for f in files:
        os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
        shutil.copy2(os.path.join(SOURCE, f), os.path.join(dst, f))


def link_dir(d, *files, name=None):
    """A directory holding symlinks to files (a wheel's lib/, a conda lib/...)."""
    os.makedirs(d, exist_ok=True)
    for f in files:
        os.symlink(f, os.path.join(d, name or os.path.basename(f)))
    return d


def audit_entry(module_dir, quiet32=False):
    """What lazynccl-run puts in LD_AUDIT for the audit module in
    module_dir: its own path; with --quiet-32bit (quiet32), the module
    through $LIB where its copies are there and a 32-bit ld.so is installed
    (src/run/run_modules.c)."""
    lib64 = f"lib/{HOST_CPU}-linux-gnu"
    if (quiet32 and HOST_CPU == "x86_64" and os.path.isdir(os.path.join(module_dir, lib64))
            and os.path.isdir(os.path.join(module_dir, "lib32")) and os.path.exists("/lib/ld-linux.so.2")):
        return os.path.join(module_dir, "$LIB", "liblazynccl-audit.so")
    return os.path.join(module_dir, "liblazynccl-audit.so")


def glibc_version():
    return os.confstr("CS_GNU_LIBC_VERSION").split()[1]
