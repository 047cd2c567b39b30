#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The packaging recipes of docs/guides/vendoring.md, each a project under
examples/vendoring/recipes/ built end to end with Debian's own tools: setuptools
(sdist, then the wheel built from it), CMake driven from setuptools (the
scikit-build way), meson-python with lazynccl as a subproject; each wheel
installed into a fresh venv, imported with nothing NVIDIA mapped, then
called; the symbol versions and DT_NEEDED a wheel may have (what auditwheel
checks for manylinux); the CMake package and pkg-config from an installed
and a moved prefix."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import lztest as t
from lztest import case

VENDOR = os.path.join(t.SOURCE, "examples", "vendoring")
RECIPES = os.path.join(VENDOR, "recipes")
# What manylinux lets an extension need (auditwheel's policy, glibc part).
MANYLINUX_LIBS = {"libc.so.6", "libdl.so.2", "libpthread.so.0", "libm.so.6", "librt.so.1",
                  "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libgcc_s.so.1"}
NVIDIA = re.compile(r"/lib(nccl|cuda|cudart|nvrtc|nvJitLink|nvidia-ml)[^/]*\.so")

PROBE = r"""
import json, re
def nvidia():
    return sorted({l.split()[-1] for l in open('/proc/self/maps')
                   if re.search(r'/lib(nccl|cuda|cudart|nvrtc|nvJitLink|nvidia-ml)[^/]*\.so', l)})
import PKG as m
out = {'after_import': nvidia(), 'file': m._nccl.__file__}
out['version'] = m.version()
out['after_call'] = nvidia()
out['path'], out['step'] = m.loaded_path(), m.loaded_step()
print(json.dumps(out))
"""


def not_sanitized():
    if t.SANITIZE not in ("", "none"):
        raise t.Skip(f"sanitizer build ({t.SANITIZE}): the recipes build their own copies from "
                     "the sources with the user's tools; the default build runs them")


def need(module, what):
    not_sanitized()
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    if r.returncode != 0:
        raise t.Skip(f"{what} is not installed for {sys.executable} ({module})")


def real_version():
    lib = t.real_library("libnccl.so.2")
    code = ("import ctypes; v = ctypes.c_int(); "
            f"ctypes.CDLL({lib!r}).ncclGetVersion(ctypes.byref(v)); print(v.value)")
    return int(t.run([sys.executable, "-c", code], check_rc=0).stdout)


def stage(recipe, d):
    """The recipe completed as docs/guides/vendoring.md says (examples/vendoring/stage.py):
    its files, the amalgamation in vendor/, the extension's source."""
    proj = f"{d}/proj"
    t.run([sys.executable, os.path.join(VENDOR, "stage.py"), recipe, proj, "--include-dir", t.NCCL_INCLUDE],
          check_rc=0)
    return proj


def build(proj, *args):
    r = t.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", f"{proj}/dist", *args,
               proj], env={"NCCL_INCLUDE": t.NCCL_INCLUDE}, cwd=proj)
    t.equal(r.returncode, 0, f"python3 -m build: {r.stdout[-3000:]}{r.stderr[-3000:]}")
    return sorted(glob.glob(f"{proj}/dist/*.whl"))[0]


def in_fresh_venv(d, wheel, package):
    venv = f"{d}/venv"
    t.run([sys.executable, "-m", "venv", venv], check_rc=0)
    t.run([f"{venv}/bin/python", "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
           wheel], check_rc=0)
    r = t.run([f"{venv}/bin/python", "-c", PROBE.replace("PKG", package)], cwd=d, check_rc=0)
    return json.loads(r.stdout)


def check_lazy(out, want):
    t.equal(out["after_import"], [], "nothing NVIDIA mapped after import")
    t.equal(out["version"], want, "the real NCCL's version at the first call")
    t.check(any("libnccl.so" in p for p in out["after_call"]), f"NCCL mapped: {out}")
    t.check("/venv/" in out["file"], f"imported from the venv: {out['file']}")


def manylinux_check(path, tag="2_17"):
    """auditwheel's symbol-version and DT_NEEDED checks, by objdump."""
    limit = tuple(int(x) for x in tag.split("_"))
    dyn = t.run(["objdump", "-T", path], check_rc=0).stdout
    too_new = sorted({v for v in re.findall(r"GLIBC_([0-9.]+)", dyn)
                      if tuple(int(x) for x in v.split(".")[:2]) > limit})
    needed = set(re.findall(r"NEEDED\s+(\S+)", t.run(["objdump", "-p", path], check_rc=0).stdout))
    t.equal(too_new, [], f"{os.path.basename(path)}: GLIBC versions above {tag}")
    t.check(needed <= MANYLINUX_LIBS, f"DT_NEEDED outside manylinux: {needed - MANYLINUX_LIBS}")


def wheel_extension(wheel, d):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        ext = [n for n in names if n.endswith(".so")]
        t.equal(len(ext), 1, f"one extension in the wheel: {names}")
        z.extract(ext[0], f"{d}/unzipped")
    return f"{d}/unzipped/{ext[0]}", names


@case
def recipe_setuptools_sdist_then_wheel():
    """setuptools: python3 -m build makes the sdist, then the wheel from the
    sdist (which must carry the amalgamation's header); installed in a fresh
    venv, the import maps nothing of NVIDIA, the first call loads NCCL."""
    need("build", "python3-build")
    want = real_version()
    d = t.workdir("recipe_setuptools")
    proj = stage("setuptools", d)
    wheel = build(proj)
    sdist = glob.glob(f"{proj}/dist/*.tar.gz")[0]
    with tarfile.open(sdist) as tf:
        members = [m.split("/", 1)[1] for m in tf.getnames() if "/" in m]
    t.check("vendor/lazynccl_amalg.h" in members, f"sdist carries the header: {members}")
    check_lazy(in_fresh_venv(d, wheel, "mypkg_st"), want)
    ext, _ = wheel_extension(wheel, d)
    manylinux_check(ext)


@case
def recipe_cmake_wheel():
    """CMake builds the extension from setuptools' build_ext (the
    scikit-build way): the same checks."""
    need("build", "python3-build")
    if not shutil.which("cmake"):
        raise t.Skip("cmake is not installed")
    want = real_version()
    d = t.workdir("recipe_cmake")
    proj = stage("cmake", d)
    wheel = build(proj)
    check_lazy(in_fresh_venv(d, wheel, "mypkg_cm"), want)
    ext, _ = wheel_extension(wheel, d)
    manylinux_check(ext)


@case
def recipe_meson_python_subproject():
    """meson-python with lazynccl as a subproject and its amalgamation
    dependency: the wheel holds the package and nothing of the subproject,
    and the same checks pass."""
    need("build", "python3-build")
    need("mesonpy", "python3-mesonpy")
    want = real_version()
    d = t.workdir("recipe_mesonpy")
    proj = stage("mesonpy", d)   # with lazynccl as its subproject
    wheel = build(proj, "--wheel")
    ext, names = wheel_extension(wheel, d)
    payload = sorted(n for n in names if ".dist-info/" not in n)
    t.equal([re.sub(r"\.cpython.*\.so$", ".so", n) for n in payload],
            ["mypkg_meson/__init__.py", "mypkg_meson/_nccl.so"], "the wheel's files")
    check_lazy(in_fresh_venv(d, wheel, "mypkg_meson"), want)
    manylinux_check(ext)


@case
def meson_subproject_static_and_amalgamation():
    """A Meson project takes the static shim (dependency('lazynccl',
    static: true)) or the amalgamation (lazynccl_amalg_dep); nothing of the
    subproject is installed."""
    not_sanitized()
    t.real_library("libnccl.so.2")
    d = t.workdir("subproject_static")
    proj = f"{d}/proj"
    os.makedirs(proj)
    for f in ("nccl_client.c", "maps.h"):
        shutil.copy(os.path.join(t.PROGS, f), f"{proj}/{f}")
    with open(f"{proj}/meson.build", "w") as f:
        f.write("project('consumer', 'c')\n"
                "lazy = subproject('lazynccl')\n"
                "executable('static', 'nccl_client.c', install: true,\n"
                "  dependencies: dependency('lazynccl', static: true))\n"
                "executable('amalg', 'nccl_client.c', install: true,\n"
                "  dependencies: lazy.get_variable('lazynccl_amalg_dep'))\n")
    t.stage_source_tree(f"{proj}/subprojects/lazynccl")
    t.run(["meson", "setup", f"{d}/build", proj, f"--prefix={d}/prefix"], check_rc=0)
    t.run(["meson", "compile", "-C", f"{d}/build"], check_rc=0)
    for exe in ("static", "amalg"):
        needed = t.run(["objdump", "-p", f"{d}/build/{exe}"], check_rc=0).stdout
        t.check("liblazynccl" not in needed, f"{exe}: no shared shim needed")
        out = t.run([f"{d}/build/{exe}", "version"], check_rc=0).stdout
        t.check(out.startswith("before=0 rc=0 version=2") and out.strip().endswith("after=1"),
                f"{exe}: {out}")
    t.run(["meson", "install", "-C", f"{d}/build"], check_rc=0)
    installed = sorted(os.path.relpath(p, f"{d}/prefix")
                       for p in glob.glob(f"{d}/prefix/**", recursive=True) if os.path.isfile(p))
    t.equal(installed, ["bin/amalg", "bin/static"], "only the project's own files installed")


def install_tree(d):
    not_sanitized()
    root = f"{d}/root"
    t.run(["meson", "install", "-C", t.BUILD, "--destdir", root, "--no-rebuild", "--quiet"],
          check_rc=0)
    prefix = t.run(["meson", "introspect", "--buildoptions", t.BUILD], check_rc=0).stdout
    opts = {o["name"]: o["value"] for o in json.loads(prefix)}
    if not opts.get("pkgconfig.relocatable"):
        raise t.Fail("the build is not configured with pkgconfig.relocatable (the project default)")
    return root + opts["prefix"], opts["libdir"]


def cmake_consumer(d, prefix, tag):
    b = f"{d}/cmake-{tag}"
    r = t.run(["cmake", "-S", os.path.join(RECIPES, "cmake_consumer"), "-B", b,
               f"-DCMAKE_PREFIX_PATH={prefix}"])
    t.equal(r.returncode, 0, f"cmake configure ({tag}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
    t.run(["cmake", "--build", b], check_rc=0)
    return [t.run([f"{b}/consumer_{k}"], check_rc=0).stdout.strip() for k in ("shared", "static")]


@case
def cmake_package_installed_and_moved():
    """find_package(lazynccl CONFIG) from an installed prefix and from the
    same prefix moved elsewhere: lazynccl::nccl and lazynccl::nccl_static
    link programs that load NCCL on the first call."""
    if not shutil.which("cmake"):
        raise t.Skip("cmake is not installed")
    want = real_version()
    d = t.workdir("cmake_package")
    prefix, _ = install_tree(d)
    expect = f"before=0 rc=0 version={want} after=1"
    t.equal(cmake_consumer(d, prefix, "installed"), [expect, expect], "installed prefix")
    moved = f"{d}/moved"
    shutil.move(prefix, moved)
    t.equal(cmake_consumer(d, moved, "moved"), [expect, expect], "moved prefix")


@case
def pkg_config_relocatable_and_static():
    """The .pc files follow a moved prefix (${pcfiledir}); lazynccl-static
    names the archive, so a program linked with it needs no shared shim."""
    want = real_version()
    d = t.workdir("pkg_config")
    prefix, libdir = install_tree(d)
    moved = f"{d}/moved"
    shutil.move(prefix, moved)
    pcdir = f"{moved}/{libdir}/pkgconfig"
    env = {"PKG_CONFIG_PATH": pcdir}
    flags = t.run(["pkg-config", "--cflags", "--libs", "lazynccl-static"], env=env,
                  check_rc=0).stdout.split()
    t.check(f"{os.path.realpath(moved)}/{libdir}/liblazynccl.a" in
            [os.path.realpath(os.path.dirname(f)) + "/" + os.path.basename(f) for f in flags],
            f"the moved archive: {flags}")
    t.check(f"-I{t.NCCL_INCLUDE}" in flags, f"the configured CUDA include: {flags}")
    exe = t.compile_c(f"{d}/static_prog", [os.path.join(RECIPES, "cmake_consumer", "main.c")],
                      flags + t.sanitizer_link_args())
    needed = t.run(["objdump", "-p", exe], check_rc=0).stdout
    t.check("liblazynccl" not in needed, "no shared shim needed")
    t.equal(t.run([exe], check_rc=0).stdout.strip(), f"before=0 rc=0 version={want} after=1",
            "runs")
    shared = t.run(["pkg-config", "--variable=libdir", "lazynccl"], env=env, check_rc=0).stdout
    t.equal(os.path.realpath(shared.strip()), os.path.realpath(f"{moved}/{libdir}"), "libdir moved")


@case
def pkg_config_uninstalled_both_shims():
    """The uninstalled form of docs/getting-started/index.md, PKG_CONFIG_PATH=build/meson-uninstalled:
    lazynccl-static names the build tree's archive and headers (it named an
    archive under lib/ that no build tree has, and no header directory), so
    its program links and runs with nothing else set; lazynccl links the
    build tree's shared shim."""
    want = real_version()
    d = t.workdir("pkg_config_uninstalled")
    env = {"PKG_CONFIG_PATH": os.path.join(t.BUILD, "meson-uninstalled")}
    src = [os.path.join(RECIPES, "cmake_consumer", "main.c")]
    for pc, shared in (("lazynccl-static", False), ("lazynccl", True)):
        flags = t.run(["pkg-config", "--cflags", "--libs", pc], env=env, check_rc=0).stdout.split()
        exe = t.compile_c(f"{d}/{pc}", src, flags + ([f"-Wl,-rpath,{t.SHIMS}"] if shared else [])
                          + t.sanitizer_link_args())
        needed = t.run(["objdump", "-p", exe], check_rc=0).stdout
        t.equal("liblazynccl" in needed, shared, f"{pc}: the shared shim needed")
        t.equal(t.run([exe], check_rc=0).stdout.strip(), f"before=0 rc=0 version={want} after=1",
                f"{pc}: runs")


if __name__ == "__main__":
    raise SystemExit(t.main())
