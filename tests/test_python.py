#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""the Python user's front door. The wheel built offline from
this tree (pip wheel --no-build-isolation, Debian's python3-mesonpy),
installed into a fresh venv and a --target directory: lazynccl-run from the
venv's bin/ runs a PyTorch-style consumer lazily, and lazynccl.status(),
would_load() and load() say what happened, from Python."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import lztest as t
from lztest import case

SYSTEM_PY = "/usr/bin/python3"


def skip_unless_buildable():
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("the wheel is built by meson-python from the sources, not from this sanitizer "
                     "build; the default build runs these tests")
    if subprocess.run([SYSTEM_PY, "-c", "import mesonpy"], capture_output=True).returncode != 0:
        raise t.Skip("python3-mesonpy is not installed for /usr/bin/python3")


def wheel():
    """Build the wheel once per build directory (the cases run in parallel:
    the first builds it under a lock, the others wait and reuse it)."""
    skip_unless_buildable()
    d = os.path.join(t.BUILD, "tests-work", "python_wheel")
    os.makedirs(d, exist_ok=True)
    import fcntl
    with open(f"{d}/.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = glob.glob(f"{d}/dist/lazynccl-*.whl")
        if found:
            return found[0]
        for sub in ("src", "build-venv", "dist"):
            shutil.rmtree(f"{d}/{sub}", ignore_errors=True)
        t.stage_source_tree(f"{d}/src")
        venv = f"{d}/build-venv"
        t.run([SYSTEM_PY, "-m", "venv", "--system-site-packages", venv], check_rc=0)
        r = t.run([f"{venv}/bin/python", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                   "--no-index", "-w", f"{d}/dist", f"{d}/src"])
        t.equal(r.returncode, 0, f"pip wheel: {r.stdout[-3000:]}{r.stderr[-3000:]}")
        return glob.glob(f"{d}/dist/lazynccl-*.whl")[0]


def venv_with_wheel(name):
    whl = wheel()
    d = t.workdir(name)
    venv = f"{d}/venv"
    t.run([SYSTEM_PY, "-m", "venv", venv], check_rc=0)
    r = t.run([f"{venv}/bin/python", "-m", "pip", "install", "--no-index", "--no-deps", whl])
    t.equal(r.returncode, 0, f"pip install: {r.stdout[-2000:]}{r.stderr[-2000:]}")
    return d, venv


CONSUMER = r"""
import ctypes, json, os, sys
import lazynccl
real = sys.argv[1]
def mapped():
    return sorted({l.split()[-1] for l in open('/proc/self/maps')
                   if '/libnccl.so' in l and lazynccl.package_dir() not in l})
out = {}
ctypes.CDLL(real)                       # torch's preload, by path
out['after_preload'] = mapped()
s = lazynccl.status('nccl')
out['before'] = [s.loaded, s.asked_path, s.shim]
v = ctypes.c_int()
ctypes.CDLL('libnccl.so.2').ncclGetVersion(ctypes.byref(v))   # the first call
s = lazynccl.status('nccl')
out['after'] = [s.loaded, s.path, s.step, s.found_via, s.version, v.value]
out['after_call'] = mapped()
out['other'] = {k: (x.loaded, x.shim != '') for k, x in lazynccl.status().items()}
print(json.dumps(out))
"""


AGREE = r"""
import ctypes, json, os, sys
import lazynccl
def row(s):
    return [s.loaded, s.path, s.shim]
out = {}
if sys.argv[1] == "extension":
    # An extension linking the shim, loaded as Python loads one (RTLD_LOCAL).
    ext = ctypes.CDLL(sys.argv[2])
    out["before"] = row(lazynccl.status("nccl"))
    ext.lazynccl_load()
else:
    out["load"] = row(lazynccl.load("nccl"))
out["status"] = row(lazynccl.status("nccl"))
out["would_load"] = row(lazynccl.would_load("nccl"))
print(json.dumps(out))
"""


@case
def python_load_status_would_load_agree():
    """load(), status() and would_load() agree about one process, whichever
    shim answers, and say which file it is: after load() (the package's
    drop-in, opened RTLD_LOCAL), and with a shim an extension links (loaded
    RTLD_LOCAL, as Python loads extensions) that loaded the library."""
    real = t.real_library("libnccl.so.2")
    d, venv = venv_with_wheel("python_agree")
    script = f"{d}/agree.py"
    with open(script, "w") as f:
        f.write(AGREE)
    r = t.run([f"{venv}/bin/python", script, "load"], env={"LAZYNCCL_LIBPATH": real})
    t.equal(r.returncode, 0, r.stderr[-2000:])
    out = json.loads(r.stdout)
    t.equal(out["load"][:2], [True, real], "load()")
    t.check(out["load"][2].endswith("/lazynccl/dropin/libnccl.so.2"), f"load()'s shim: {out}")
    t.equal(out["status"], out["load"], "status() after load(): the same shim, loaded, the same file")
    t.equal(out["would_load"], out["load"], "would_load() after load(): the same")
    shim = os.path.realpath(t.shim("nccl"))
    r = t.run([f"{venv}/bin/python", script, "extension", shim], env={"LAZYNCCL_LIBPATH": real})
    t.equal(r.returncode, 0, r.stderr[-2000:])
    out = json.loads(r.stdout)
    t.equal(out["before"], [False, None, shim], "status() finds the extension's shim before a call")
    t.equal(out["status"], [True, real, shim], "status(): loaded, answered by the extension's shim")
    t.equal(out["would_load"], out["status"], "would_load() agrees")


@case
def python_build_names_what_is_missing():
    """A Python without the build's pieces (a venv without system site
    packages: not Debian's python3-mesonpy nor python3-clang-14): `pip wheel
    --no-build-isolation .` fails naming meson-python and how to get it; Meson
    run by such a Python fails naming libclang's bindings and how to get
    them (PyPI's libclang, or Debian's package)."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("builds from the sources, not from this sanitizer build")
    d = t.workdir("python_missing")
    t.stage_source_tree(f"{d}/src")
    t.run([SYSTEM_PY, "-m", "venv", f"{d}/venv"], check_rc=0)
    r = t.run([f"{d}/venv/bin/python", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
               "--no-index", "-w", f"{d}/dist", f"{d}/src"])
    t.check(r.returncode != 0, "the build fails")
    t.contains(r.stdout + r.stderr, "lazynccl is built by meson-python, which cannot be imported here "
               "(No module named 'mesonpy'): install it (pip install meson-python; Debian: apt-get "
               "install python3-mesonpy) or let pip fetch it (drop --no-build-isolation)", "the message")
    import mesonbuild  # noqa: F401  (the suite runs under the Python Meson runs with)
    only = os.path.join(d, "mesononly")
    os.makedirs(only)
    os.symlink(os.path.dirname(mesonbuild.__file__), os.path.join(only, "mesonbuild"))
    r = t.run([f"{d}/venv/bin/python", "-m", "mesonbuild.mesonmain", "setup", f"{d}/build", f"{d}/src"],
              env={"PYTHONPATH": only})
    t.check(r.returncode != 0, "configuration fails")
    t.contains(r.stdout + r.stderr, f"the code generator needs the libclang Python bindings in "
               f"{d}/venv/bin/python, which cannot import clang.cindex: pip install libclang (PyPI), "
               "or on Debian apt-get install python3-clang-14 and build with /usr/bin/python3",
               "the message")


@case
def python_wheel_run_and_status():
    """From a fresh venv: bin/lazynccl-run runs a torch-like consumer with
    nothing real mapped after its by-path preload; lazynccl.status() says
    "not loaded" (and the path asked for) before the first call, and the
    loaded path, step, found_via and version after it."""
    real = t.real_library("libnccl.so.2")
    d, venv = venv_with_wheel("python_status")
    script = f"{d}/consumer.py"
    with open(script, "w") as f:
        f.write(CONSUMER)
    r = t.run([f"{venv}/bin/lazynccl-run", f"{venv}/bin/python", script, real])
    t.equal(r.returncode, 0, r.stdout + r.stderr)
    out = json.loads(r.stdout)
    t.equal(out["after_preload"], [], "nothing real mapped after the preload")
    t.equal(out["before"][:2], [False, real], "status before the first call")
    t.check(out["before"][2].endswith("/lazynccl/dropin/libnccl.so.2"),
            f"answered by the package's drop-in, which the audit module mapped: {out['before']}")
    loaded, path, step, via, version, code = out["after"]
    t.equal((loaded, os.path.realpath(path), step, via), (True, os.path.realpath(real),
            "asked by path", "asked-by-path"), f"status after: {out}")
    t.equal(version, f"{code // 10000}.{code % 10000 // 100}.{code % 100}", "version")
    t.equal(len(out["after_call"]), 1, f"one real copy: {out}")
    t.equal(out["other"]["nccl"], [True, True], "NCCL's drop-in answers")
    t.equal({k: v for k, v in out["other"].items() if k != "nccl"},
            {k: [False, False] for k in out["other"] if k != "nccl"},
            "only NCCL was asked for: every other library served was never mapped")
    t.check({"nvrtc", "nvjitlink", "cublas", "cudnn"} <= set(out["other"]),
            f"status() covers every library the package serves: {sorted(out['other'])}")


@case
def python_would_load_hidden_maps_nothing():
    """would_load() of a library out of reach (LAZYNCCL_LIBPATH names a
    missing file) gives the shim's reason and maps nothing; load() raises
    LoadError with the report; with the library in reach would_load names
    the file, still without mapping it."""
    real = t.real_library("libnccl.so.2")
    d, venv = venv_with_wheel("python_would_load")
    probe = ("import json, lazynccl\n"
             "w = lazynccl.would_load('nccl')\n"
             "m = [l for l in open('/proc/self/maps') if '/libnccl.so' in l and lazynccl.package_dir() not in l]\n"
             "try:\n    lazynccl.load('nccl'); err = None\n"
             "except lazynccl.LoadError as e:\n    err = str(e)\n"
             "print(json.dumps([w.path, w.error, len(m), err]))")
    r = t.run([f"{venv}/bin/python", "-c", probe], env={"LAZYNCCL_LIBPATH": f"{d}/none/libnccl.so.2"},
              check_rc=0)
    path, error, mapped, err = json.loads(r.stdout)
    t.equal((path, mapped), (None, 0), r.stdout)
    t.contains(error, f"[LAZYNCCL_LIBPATH] {d}/none/libnccl.so.2: rejected: No such file or directory",
               "would_load's reason")
    t.contains(err, "LAZYNCCL_LIBPATH is set, so nothing else was tried", "load()'s exception")
    r = t.run([f"{venv}/bin/python", "-c", probe], check_rc=0)
    path, error, mapped, err = json.loads(r.stdout)
    t.equal((os.path.realpath(path), error), (os.path.realpath(real), None), r.stdout)
    t.equal(err, None, "load() succeeds")


@case
def python_target_dir_and_module_aliases():
    """pip install --target DIR: with DIR on PYTHONPATH, `python -m lazynccl
    run` and `python -m lazynccl info` work as the console scripts do."""
    t.real_library("libnccl.so.2")
    whl = wheel()
    d = t.workdir("python_target")
    target = f"{d}/target"
    r = t.run([SYSTEM_PY, "-m", "pip", "install", "--no-index", "--no-deps", "--target", target, whl])
    t.equal(r.returncode, 0, r.stderr[-2000:])
    env = {"PYTHONPATH": target}
    r = t.run([SYSTEM_PY, "-m", "lazynccl", "run", "--print-env"], env=env, check_rc=0)
    t.contains(r.stdout, f"{os.path.realpath(target)}/lazynccl/dropin/libnccl.so.2",
               "the package's drop-ins")
    t.contains(r.stdout, f"export LD_AUDIT='{t.audit_entry(os.path.realpath(target) + '/lazynccl')}'",
               "the package's audit module")
    native = t.run([f"{target}/bin/lazynccl-run", "--print-env"], check_rc=0).stdout
    t.equal(native, r.stdout, "the native command in --target/bin finds the same package")
    r = t.run([SYSTEM_PY, "-m", "lazynccl", "info", "--json", "nccl"], env=env)
    t.equal(r.returncode, 0, r.stderr)
    doc = json.loads(r.stdout)
    t.equal(doc["libraries"][0]["id"], "nccl", "lazynccl-info through python -m")
    r = t.run([SYSTEM_PY, "-m", "lazynccl"], env=env)
    t.equal(r.returncode, 2, "usage")


@case
def python_doctests():
    """The API's doctests run against the installed package."""
    d, venv = venv_with_wheel("python_doctest")
    r = t.run([f"{venv}/bin/python", "-m", "doctest", "-v",
               glob.glob(f"{venv}/lib/python3*/site-packages/lazynccl/__init__.py")[0]])
    t.equal(r.returncode, 0, r.stdout[-2000:] + r.stderr)
    t.check(re.search(r"\d+ passed and 0 failed", r.stdout), r.stdout[-500:])


@case
def python_user_site_and_prefix():
    """pip install --user (a private PYTHONUSERBASE) and --prefix (a
    conda-like prefix on PYTHONPATH): the package is found, `python -m
    lazynccl run` uses its own drop-ins and audit module, and a by-path
    preload under it maps nothing real until the first call."""
    real = t.real_library("libnccl.so.2")
    whl = wheel()
    d = t.workdir("python_user_prefix")
    script = f"{d}/consumer.py"
    with open(script, "w") as f:
        f.write(CONSUMER)
    for kind, args, env in (
            ("user", ["--user"], {"PYTHONUSERBASE": f"{d}/userbase"}),
            ("prefix", ["--prefix", f"{d}/conda"], {})):
        r = t.run([SYSTEM_PY, "-m", "pip", "install", "--no-index", "--no-deps", "--no-warn-script-location",
                   "--break-system-packages"] + args + [whl], env=env)
        if r.returncode != 0 and "--break-system-packages" in r.stderr:
            r = t.run([SYSTEM_PY, "-m", "pip", "install", "--no-index", "--no-deps",
                       "--no-warn-script-location"] + args + [whl], env=env)
        t.equal(r.returncode, 0, f"{kind}: {r.stderr[-1500:]}")
        if kind == "prefix":
            # Debian's pip puts a --prefix install in <prefix>/local/lib/pythonX.Y/dist-packages.
            sites = glob.glob(f"{d}/conda/**/lazynccl/__init__.py", recursive=True)
            t.equal(len(sites), 1, f"{kind}: one package under the prefix: {sites}")
            env = {"PYTHONPATH": os.path.dirname(os.path.dirname(sites[0]))}
        where = t.run([SYSTEM_PY, "-c", "import lazynccl; print(lazynccl.package_dir())"], env=env,
                      check_rc=0).stdout.strip()
        t.check(where.startswith(d), f"{kind}: the package from {where}")
        r = t.run([SYSTEM_PY, "-m", "lazynccl", "run", SYSTEM_PY, script, real], env=env)
        t.equal(r.returncode, 0, f"{kind}: {r.stdout}{r.stderr}")
        out = json.loads(r.stdout)
        t.equal(out["after_preload"], [], f"{kind}: nothing real after the preload")
        t.equal(out["after"][0], True, f"{kind}: loaded at the first call")


def glibc_needed(path):
    out = t.run(["objdump", "-T", path], check_rc=0).stdout
    vers = [tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_(\d+\.\d+(?:\.\d+)?)", out)]
    return max(vers) if vers else (0, 0)


@case
def python_wheel_glibc_tag():
    """Every binary in the wheel needs at most GLIBC_2.17 and no NVIDIA
    library from outside the wheel (DT_NEEDED; a drop-in's are drop-ins
    beside it); the wheel `pip wheel .` writes is tagged for that
    glibc, manylinux_2_17_<arch> (the build's backend retags it, no
    separate step), and installs; auditwheel agrees if present."""
    whl = wheel()
    d = t.workdir("python_tag")
    with zipfile.ZipFile(whl) as z:
        z.extractall(f"{d}/x")
    sos = [p for p in glob.glob(f"{d}/x/lazynccl/**/*", recursive=True)
           if os.path.isfile(p) and open(p, "rb").read(4) == b"\x7fELF"]
    t.check(len(sos) >= 7, f"binaries: {sos}")
    need = max(glibc_needed(p) for p in sos)
    t.check(need <= (2, 17), f"highest GLIBC needed: {need}")
    for p in sos:
        secs = t.run(["readelf", "-SW", p], check_rc=0).stdout
        t.check(".symtab" not in secs and ".debug_info" not in secs,
                f"{p}: stripped by the wheel's build (gen/strip_elf.py)")
        dyn = t.run(["objdump", "-p", p], check_rc=0).stdout
        needed = re.findall(r"NEEDED\s+(\S+)", dyn)
        # A drop-in needs what its real library needs; an NVIDIA library
        # among those is another drop-in of the wheel, found beside it.
        nvidia = [n for n in needed if re.match(r"lib(nccl|nvrtc|nvJitLink|cu|nvshmem)", n)]
        if nvidia:
            t.check("/dropin/" in p and re.search(r"RUNPATH\s+\$ORIGIN\n", dyn) is not None,
                    f"{p}: NVIDIA DT_NEEDED {nvidia} outside a drop-in found by $ORIGIN")
            t.equal([n for n in nvidia if not os.path.isfile(os.path.join(os.path.dirname(p), n))], [],
                    f"{p}: each a drop-in of the wheel")
    arch = os.uname().machine
    tag = f"manylinux_{need[0]}_{need[1]}_{arch}"
    t.equal(os.path.basename(whl), f"lazynccl-0.1.0-py3-none-{tag}.whl",
            "pip wheel's own output carries the manylinux tag")
    t.equal(glob.glob(os.path.join(os.path.dirname(whl), "*-any.whl")), [], "no any wheel beside it")
    with zipfile.ZipFile(whl) as z:
        meta = z.read("lazynccl-0.1.0.dist-info/WHEEL").decode()
        record = z.read("lazynccl-0.1.0.dist-info/RECORD").decode()
    t.contains(meta, f"Tag: py3-none-{tag}", "WHEEL metadata")
    t.contains(meta, "Root-Is-Purelib: false", "not pure")
    t.contains(record, "lazynccl-0.1.0.dist-info/WHEEL,sha256=", "RECORD rewritten")
    retagged = os.path.basename(whl)
    shutil.copy(whl, os.path.join(d, retagged))
    venv = f"{d}/venv"
    t.run([SYSTEM_PY, "-m", "venv", venv], check_rc=0)
    r = t.run([f"{venv}/bin/python", "-m", "pip", "install", "--no-index", "--no-deps",
               os.path.join(d, retagged)])
    t.equal(r.returncode, 0, f"pip installs the manylinux wheel here: {r.stderr[-1500:]}")
    if not shutil.which("auditwheel"):
        print("auditwheel is not installed here (not in Debian 12): its check is skipped")
        return
    r = t.run(["auditwheel", "show", os.path.join(d, retagged)])
    t.contains(r.stdout, tag, "auditwheel show")


@case
def python_wheel_glibc231_jemalloc():
    """The wheel's lazynccl-run in a Debian 11 root (glibc 2.31, no
    glibc.rtld.optional_static_tls), over a torch-like Python consumer
    loading the real NCCL by path: without jemalloc through the audit
    module; with jemalloc preloaded the process restarts itself with the
    drop-ins and the redirector preloaded instead (an audited process cannot
    get jemalloc's static TLS there: an empty audit module stops it, shown
    too). Both lazy until the call, one copy after. --print-env says what a
    job on this glibc gets, and how to spare its ranks the restart."""
    import fetch_real
    import test_audit
    root = fetch_real.bullseye_dir()
    if os.geteuid() != 0:
        raise t.Skip("chroot needs root")
    if not os.path.exists(os.path.join(root, "usr", "bin", "python3")):
        raise t.Skip(f"no Debian 11 root at {root}: tests/fetch_real.py --bullseye could not make it")
    real = os.path.realpath(t.real_library("libnccl.so.2"))
    whl = wheel()
    lz = os.path.join(root, "opt", "lz")
    shutil.rmtree(lz, ignore_errors=True)
    with zipfile.ZipFile(whl) as z:
        z.extractall(lz)
    os.chmod(os.path.join(lz, "lazynccl", "lazynccl-run"), 0o755)  # zipfile keeps no modes; pip does
    os.makedirs(os.path.join(root, "opt", "nccl"), exist_ok=True)
    inside = os.path.join(root, "opt", "nccl", "libnccl.so.2")
    if not os.path.exists(inside):
        try:
            os.link(real, inside)
        except OSError:
            shutil.copy(real, inside)
    with open(os.path.join(root, "opt", "je.py"), "w") as f:
        f.write(test_audit.JE_PY)
    shutil.copy(test_audit.empty_module(t.workdir("glibc231_empty")), os.path.join(root, "opt", "empty.so"))
    proc = os.path.join(root, "proc")
    if subprocess.run(["mount", "-t", "proc", "proc", proc], capture_output=True).returncode != 0:
        raise t.Skip(f"cannot mount /proc in {root} (the consumer counts its mappings there)")
    try:
        glibc231_runs(root)
    finally:
        subprocess.run(["umount", proc], capture_output=True)


def glibc231_runs(root):
    je = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
    base = ["chroot", root, "env", "-i", "PATH=/usr/bin:/bin"]
    ver = t.run(base + ["getconf", "GNU_LIBC_VERSION"], check_rc=0).stdout.strip()
    t.equal(ver, "glibc 2.31", "the root's C library")
    bare = t.run(base + ["LD_AUDIT=/opt/empty.so", f"LD_PRELOAD={je}", "/bin/true"])
    t.contains(bare.stderr, "cannot allocate memory in static TLS block", "an audited process on 2.31")
    ours = t.run(base + ["LD_AUDIT=/opt/lz/lazynccl/liblazynccl-audit.so", "LAZYNCCL_DEBUG=1",
                         f"LD_PRELOAD={je}", "/bin/true"])
    t.equal(ours.returncode, 0, ours.stderr)
    t.contains(ours.stderr, "cannot give an audited process", "the module says why it restarts")
    printed = t.run(base + ["/opt/lz/lazynccl/lazynccl-run", "--print-env"], check_rc=0).stdout
    t.contains(printed, "# This C library predates glibc 2.32", "--print-env on 2.31")
    doctor = t.run(base + [f"LD_PRELOAD={je}", "PYTHONPATH=/opt/lz", "python3", "-m", "lazynccl", "info",
                           "--doctor", "--json"])
    found = [f for f in json.loads(doctor.stdout)["doctor"] if f["check"] == "static-tls"]
    t.equal(len(found), 1, f"doctor's static-tls check on 2.31: {doctor.stdout[-1500:]}{doctor.stderr[-500:]}")
    t.contains(found[0]["message"], "glibc 2.31 has no glibc.rtld.optional_static_tls", "doctor on 2.31")
    t.contains(found[0]["message"], "with the drop-ins and the redirector preloaded", "what a job gets there")
    t.contains(printed, "lazynccl-run --preload --print-env", "what a job can do instead")
    for preload, audited in (([], True), ([f"LD_PRELOAD={je}"], False)):
        r = t.run(["timeout", "120"] + base + preload +
                  ["/opt/lz/lazynccl/lazynccl-run", "python3", "/opt/je.py", "/opt/nccl/libnccl.so.2",
                   "/opt/lz/lazynccl/dropin"])
        t.equal(r.returncode, 0, f"{preload}: {r.stdout}{r.stderr}")
        out = json.loads(r.stdout)
        t.equal(out["audit"], audited, f"{preload}: through the audit module")
        t.equal(out["after_preload"], [], f"{preload}: lazy")
        t.check(out["version"] > 0, r.stdout)
        t.equal(out["after_call"], ["/opt/nccl/libnccl.so.2"], f"{preload}: one copy, the file asked for")


@case
def wheel_debug_sections_kept_apart():
    """The wheel build's strip step (gen/retag_wheel.py through
    gen/strip_elf.py) with a debug directory (`-C debug-dir=DIR`): every
    binary stripped and linked (.gnu_debuglink) to its own debug file,
    DIR/<its path in the wheel>.debug, so two binaries of one name in two
    directories keep one each; the stripped drop-in still serves."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("a sanitizer build's drop-in cannot load into the uninstrumented Python "
                     "(its runtime must come first); the default build runs this test")
    sys.path.insert(0, os.path.join(t.SOURCE, "gen"))
    import retag_wheel
    d = t.workdir("wheel_debug")
    src = os.path.join(d, "in")
    shutil.rmtree(src, ignore_errors=True)
    dropin = os.path.join(t.BUILD, "src", "dropin", "libnccl.so.2")
    secs = t.run(["readelf", "-SW", dropin], check_rc=0).stdout
    if ".debug_info" not in secs:
        raise t.Skip("this build has no debug information to keep apart")
    members = {"lazynccl/dropin/libnccl.so.2": dropin, "lazynccl/other/libnccl.so.2": dropin,
               "lazynccl-0.1.0.dist-info/WHEEL": None, "lazynccl-0.1.0.dist-info/RECORD": None}
    whl = os.path.join(d, "lazynccl-0.1.0-py3-none-any.whl")
    with zipfile.ZipFile(whl, "w") as z:
        for name, path in members.items():
            z.writestr(name, open(path, "rb").read() if path else
                       b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n" if name.endswith("WHEEL")
                       else b"")
    dbg = os.path.join(d, "debug")
    shutil.rmtree(dbg, ignore_errors=True)
    out = retag_wheel.retag(whl, debug_dir=dbg)
    x = os.path.join(d, "x")
    shutil.rmtree(x, ignore_errors=True)
    with zipfile.ZipFile(out) as z:
        z.extractall(x)
    for name in ("lazynccl/dropin/libnccl.so.2", "lazynccl/other/libnccl.so.2"):
        got = t.run(["readelf", "-SW", os.path.join(x, name)], check_rc=0).stdout
        t.check(".debug_info" not in got and ".symtab" not in got and ".gnu_debuglink" in got,
                f"{name}: stripped and linked")
        debug = os.path.join(dbg, name + ".debug")
        t.contains(t.run(["readelf", "-SW", debug], check_rc=0).stdout, ".debug_info", f"{debug}: kept")
        link = t.run(["readelf", "--string-dump=.gnu_debuglink", os.path.join(x, name)], check_rc=0).stdout
        t.contains(link, os.path.basename(debug), f"{name} names its debug file")
    code = ("import ctypes; lib = ctypes.CDLL(%r); v = ctypes.c_int(); "
            "print(lib.ncclGetVersion(ctypes.byref(v)), v.value)" % os.path.join(x, "lazynccl", "dropin",
                                                                                "libnccl.so.2"))
    r = t.run([SYSTEM_PY, "-c", code])
    t.check(r.returncode == 0 and re.match(r"0 2\d{4}", r.stdout),
            f"the stripped drop-in loads NCCL at its first call: {r.stdout}{r.stderr}")


if __name__ == "__main__":
    raise SystemExit(t.main())
