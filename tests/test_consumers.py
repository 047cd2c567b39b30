#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lazynccl-run and a PyTorch-style consumer, on the CPU: a shared
object in a wheel-like tree with DT_RPATH to its wheel's NCCL and DT_NEEDED
libnccl.so.2, dlopened by a host program, with and without lazynccl-run."""
import os
import shutil
import subprocess

import lztest as t
from lztest import case

RUN = os.path.join(t.BUILD, "lazynccl-run")
DROPIN = os.path.join(t.BUILD, "src", "dropin")


def tree(d, site_name="site-packages"):
    """site-packages with the wheel's NCCL (2.28.9 by its answer) and the
    consumer; a 'system' NCCL (2.28.3) elsewhere."""
    site = f"{d}/venv/lib/python3/{site_name}"
    wheel = t.fake_nccl(f"{site}/nvidia/nccl/lib", version=22809)
    system = t.fake_nccl(f"{d}/system", version=22803)
    os.makedirs(f"{site}/torchlike/lib", exist_ok=True)
    consumer = t.compile_c(f"{site}/torchlike/lib/libtorchlike.so",
                           [os.path.join(t.FAKES, "torchlike.c")],
                           [f"-L{site}/nvidia/nccl/lib", "-l:libnccl.so.2",
                            "-Wl,--disable-new-dtags,-rpath,$ORIGIN/../../nvidia/nccl/lib"],
                           shared=True)
    host = t.compile_c(f"{d}/host", [os.path.join(t.PROGS, "consumer_host.c")],
                       ["-ldl"] + t.sanitizer_link_args())
    return host, consumer, wheel, system


# A TSan-built program cannot start under any LD_AUDIT module (glibc gives
# libtsan's static TLS to the audit namespace: "cannot allocate memory in
# static TLS block"), so the TSan suite runs these consumers without ours.
NO_AUDIT = "thread" in t.SANITIZE


def run(cmd, env=None):
    if "address" in t.SANITIZE:
        raise t.Skip("an ASan-built drop-in cannot be preloaded into a program without ASan "
                     "(the ASan runtime must come first in the initial library list)")
    e = dict(os.environ)
    for k in ("LAZYNCCL_LIBPATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "CONDA_PREFIX", "CUDA_HOME",
              "LAZYNCCL_DEBUG"):
        e.pop(k, None)
    e.update(env or {})
    if NO_AUDIT and cmd[0] == RUN and "--print-env" not in cmd:
        cmd = [RUN, "--no-audit"] + cmd[1:]
    r = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=60)
    return r


def lines(out):
    return dict(line.split(":", 1) for line in out.strip().splitlines() if ":" in line)


def real(paths, wheel):
    """The libnccl files mapped, drop-in left out."""
    return [p for p in paths.split() if not p.startswith(DROPIN) and p != "none"]


@case
def consumer_without_run_loads_at_import():
    """The reference: without lazynccl-run, ld.so maps the wheel's NCCL at
    import (its DT_RPATH beats LD_LIBRARY_PATH's 'system' NCCL)."""
    d = t.workdir("consumer_plain")
    host, consumer, wheel, system = tree(d)
    r = run([host, consumer, "import"], {"LD_LIBRARY_PATH": os.path.dirname(system)})
    out = lines(r.stdout)
    t.equal(real(out["after import"], wheel), [os.path.realpath(wheel)], f"mapped: {r.stdout}")
    t.equal(out["version"].strip(), "22809", "version")


@case
def consumer_under_run_is_lazy_and_gets_its_wheel():
    """Under lazynccl-run: nothing real mapped at import; the first call loads
    the file the consumer's DT_RPATH names (the wheel's 2.28.9), not the
    LD_LIBRARY_PATH one, exactly as ld.so would have; one copy."""
    d = t.workdir("consumer_run")
    # Not named site-packages, so the run path, not the wheel step, finds it.
    host, consumer, wheel, system = tree(d, "pkgs")
    r = run([RUN, host, consumer, "import"],
            {"LD_LIBRARY_PATH": os.path.dirname(system), "LAZYNCCL_DEBUG": "1"})
    out = lines(r.stdout)
    t.equal(real(out["after import"], wheel), [], f"real NCCL mapped at import: {r.stdout}")
    t.equal(out["version"].strip(), "22809", f"version: {r.stdout}{r.stderr}")
    t.equal(real(out["after first call"], wheel), [os.path.realpath(wheel)], "mapped after")
    t.contains(r.stderr, "/../../nvidia/nccl/lib/libnccl.so.2: chosen", "found by the run path")
    t.contains(r.stderr, "(found by: run path)", "found by the run path")


@case
def consumer_under_run_inherited_by_children():
    """LD_PRELOAD reaches children (a shell, then the host), as torchrun workers."""
    d = t.workdir("consumer_children")
    host, consumer, wheel, _ = tree(d)
    r = run([RUN, "/bin/sh", "-c", 'exec "$0" "$@"', host, consumer, "import"])
    out = lines(r.stdout)
    t.equal(real(out["after import"], wheel), [], f"lazy in the child: {r.stdout}")
    t.equal(out["version"].strip(), "22809", "version")


@case
def consumer_choose_nccl_at_run_time():
    """LAZYNCCL_LIBPATH picks another NCCL for the consumer: one copy, that one."""
    d = t.workdir("consumer_choose")
    host, consumer, wheel, system = tree(d)
    r = run([RUN, host, consumer, "import"], {"LAZYNCCL_LIBPATH": system})
    out = lines(r.stdout)
    t.equal(out["version"].strip(), "22803", f"version: {r.stdout}{r.stderr}")
    t.equal(real(out["after first call"], wheel), [os.path.realpath(system)], "mapped")


@case
def consumer_absent_nccl_fails_at_first_call():
    """With no NCCL to be had, the import still works under lazynccl-run and
    the first call fails with a message naming what was searched."""
    d = t.workdir("consumer_absent")
    host, consumer, wheel, _ = tree(d)
    empty = f"{d}/empty"
    os.makedirs(empty, exist_ok=True)
    r = run([RUN, host, consumer, "import"], {"LAZYNCCL_LIBPATH": empty, "LAZYNCCL_DEBUG": "1"})
    out = lines(r.stdout)
    t.equal(out["version"].strip(), "-1", f"version: {r.stdout}")
    t.contains(r.stderr, f"[LAZYNCCL_LIBPATH] {empty}: rejected: the directory holds no libnccl.so.2",
               "the message names what was searched")


def nccl_dirs_to_hide():
    """The directories outside the test's tree that hold a real libnccl
    (the CUDA Toolkit's, ld.so.cache's), or Skip when one is a system
    directory that cannot be hidden without hiding libc too."""
    dirs = set()
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in cache.splitlines():
        if "libnccl.so" in line and "=>" in line:
            dirs.add(os.path.dirname(os.path.realpath(line.split("=>")[1].strip())))
    for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/lib"):
        if os.path.exists(f"{d}/libnccl.so.2"):
            dirs.add(os.path.realpath(d))
    system = [d for d in dirs if d.startswith(("/lib", "/usr/lib"))]
    if system:
        raise t.Skip(f"a real NCCL lies in a system directory ({system[0]}): it cannot be hidden")
    return sorted(dirs)


@case
def consumer_absent_nccl_names_every_place():
    """NCCL absent everywhere (hidden in a private mount namespace): the
    failure names every place searched, in the search order, including the
    steps that found nothing (the GPU run showed only one candidate)."""
    d = t.workdir("consumer_absent_all")
    host, consumer, wheel, _ = tree(d)
    os.remove(wheel)
    os.makedirs(f"{d}/conda/lib", exist_ok=True)
    open(f"{d}/empty.cache", "w").close()
    hide = nccl_dirs_to_hide()
    script = "set -e; mount --bind \"$1\" /etc/ld.so.cache; shift; " \
             "for dir in $HIDE; do mount -t tmpfs none \"$dir\"; done; exec \"$@\""
    cmd = ["unshare", "--mount", "sh", "-c", script, "sh", f"{d}/empty.cache", RUN] + \
        (["--no-audit"] if NO_AUDIT else []) + [host, consumer, "import"]
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise t.Skip(f"no private mount namespace here: {probe.stderr.strip()}")
    r = run(cmd, {"HIDE": " ".join(hide), "CONDA_PREFIX": f"{d}/conda", "LAZYNCCL_DEBUG": "1"})
    out = lines(r.stdout)
    t.equal(out.get("version", "").strip(), "-1", f"version: {r.stdout}{r.stderr}")
    site = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(wheel))))
    expected = [
        "places searched, in order:",
        "    [already loaded] objects with SONAME libnccl.so.2",
        f"    [wheel] {site}/nvidia/nccl/lib",
        f"    [CONDA_PREFIX] {d}/conda/lib",
        f"    [run path] {site}/torchlike/lib/../../nvidia/nccl/lib",
        "    [ld.so.cache] /etc/ld.so.cache for libnccl.so.2",
        f"    [system directories] {', '.join(t.ld_so_system_dirs())}",
        "    [not set] CUDA_HOME, CUDA_PATH, NCCL_HOME",
        "    [default directories] /usr/local/cuda/lib64, /usr/local/cuda/lib",
    ]
    err = r.stderr
    at = err.find(expected[0])
    t.check(at >= 0, f"no list of places: {err}")
    listed = err[at:].splitlines()[:len(expected)]
    t.equal(listed, expected, "every place, in order")


@case
def consumer_one_copy_framework_first():
    """A framework dlopens the real NCCL by absolute path first (as CuPy
    does): the audit module hands that load to the drop-in, which loads the
    file asked for at its first call: one copy."""
    d = t.workdir("consumer_fw_first")
    host, consumer, wheel, system = tree(d)
    r = run([RUN, host, consumer, wheel, "framework-first"],
            {"LD_LIBRARY_PATH": os.path.dirname(system), "LAZYNCCL_DEBUG": "1"})
    out = lines(r.stdout)
    t.equal(out["version"].strip(), "22809", f"version: {r.stdout}{r.stderr}")
    t.equal(real(out["after first call"], wheel), [os.path.realpath(wheel)], "one copy")
    t.contains(r.stderr, "[already loaded]" if NO_AUDIT else "(found by: asked by path)",
               "the path the framework asked for")


@case
def consumer_one_copy_dropin_first():
    """The other order: the drop-in loaded the wheel's NCCL; the framework's
    later dlopen by path gets the same object."""
    d = t.workdir("consumer_dropin_first")
    host, consumer, wheel, system = tree(d)
    r = run([RUN, host, consumer, wheel, "dropin-first"],
            {"LD_LIBRARY_PATH": os.path.dirname(system)})
    out = lines(r.stdout)
    t.equal(real(out["after framework dlopen"], wheel), [os.path.realpath(wheel)], "one copy")


@case
def run_errors_exit_2():
    """Bad --only items, a missing drop-in, a missing command: a clear message, exit 2."""
    d = t.workdir("run_errors")
    os.makedirs(f"{d}/empty", exist_ok=True)
    for args, env, want in [
            (["--only", "foo", "true"], {}, "unknown item 'foo'"),
            (["--only", "", "true"], {}, "nothing to serve"),
            (["--only", "libnccl.so.3", "true"], {}, "no drop-in"),
            (["--only", "../x.so.1", "true"], {}, "unknown item"),
            (["--bogus", "true"], {}, "unknown option --bogus"),
            (["true"], {"LAZYNCCL_DROPIN_DIR": f"{d}/empty"}, "no drop-in"),
            (["true"], {"LAZYNCCL_DROPIN_DIR": f"{d}/none"}, "does not exist")]:
        r = run([RUN] + args, env)
        t.equal(r.returncode, 2, f"{args}: {r.stderr}")
        t.contains(r.stderr, want, f"{args}")
    r = run([RUN])
    t.equal(r.returncode, 2, "no command")


@case
def run_print_env_and_existing_preload():
    """--print-env prints the lines to use by hand: the audit module and the
    drop-ins it may stand in; an existing LD_PRELOAD is left as it is (ours
    preload nothing, so it is not printed); --no-audit preloads the drop-ins
    ahead of it."""
    r = run([RUN, "--only", "nccl", "--print-env"], {"LD_PRELOAD": "/usr/lib/x.so"})
    import test_audit
    audit = test_audit.MODULE_ENTRY
    t.equal(r.stdout, f"export LD_AUDIT='{audit}'\n"
            f"export LAZYNCCL_AUDIT_DROPINS='{os.path.realpath(DROPIN)}/libnccl.so.2'\n"
            "export VALGRIND_OPTS='--run-libc-freeres=no'\n", "print-env")
    if not NO_AUDIT:  # run() adds --no-audit in a TSan build
        r = run([RUN, "--only", "nccl,nvrtc", "/bin/sh", "-c", "echo $LAZYNCCL_AUDIT_DROPINS"])
        t.equal(r.stdout.split(),
                [f"{os.path.realpath(DROPIN)}/libnccl.so.2:{os.path.realpath(DROPIN)}/libnvrtc.so.13"],
                "named to the module")
    r = run([RUN, "--no-audit", "--only", "nccl,nvrtc", "/bin/sh", "-c", "echo $LD_PRELOAD"],
            {"LD_PRELOAD": "/usr/lib/x.so"})
    t.equal(r.stdout.split(), [f"{os.path.realpath(DROPIN)}/libnccl.so.2",
                               f"{os.path.realpath(DROPIN)}/libnvrtc.so.13", "/usr/lib/x.so"], "preloaded")



@case
def consumer_without_run_path_gets_what_the_linker_gives():
    """A CuPy-style extension in site-packages that needs libnccl.so.2 with no
    run path, LD_LIBRARY_PATH naming another NCCL: under lazynccl-run the
    drop-in loads the file the dynamic linker would have (LD_LIBRARY_PATH's),
    as plain, not the wheel's beside the extension (the shim's own order
    serves only where the dynamic linker finds nothing)."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("the default build runs it: a sanitizer build's drop-in, under a Python "
                     "built without the sanitizer, is not what a user runs")
    d = t.workdir("consumer_linker")
    host, consumer, wheel, system = tree(d)
    site = f"{d}/venv/lib/python3/site-packages"
    os.makedirs(f"{site}/cupylike/libs", exist_ok=True)
    ext = t.compile_c(f"{site}/cupylike/libs/nccl_ext.so", [os.path.join(t.FAKES, "torchlike.c")],
                      [f"-L{site}/nvidia/nccl/lib", "-l:libnccl.so.2"], shared=True)
    env = {"LD_LIBRARY_PATH": os.path.dirname(system), "LAZYNCCL_DEBUG": "1"}
    plain = lines(run([host, ext, "import"], env).stdout)
    r = run([RUN, host, ext, "import"], env)
    out = lines(r.stdout)
    t.equal(out["version"].strip(), plain["version"].strip(), f"version, plain: {plain}; wrapped: {r.stdout}{r.stderr}")
    t.equal(out["version"].strip(), "22803", "LD_LIBRARY_PATH's NCCL")
    t.contains(r.stderr, "(found by: LD_LIBRARY_PATH)", "found by the dynamic linker's step")


if __name__ == "__main__":
    raise SystemExit(t.main())
