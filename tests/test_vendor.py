#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Vendoring: the amalgamation in a real CPython extension (plain cc,
setuptools, CMake), two prefixes in one interpreter, the wheel layout, a
Meson subproject, the .note.dlopen note and DT_NEEDED."""
import json
import os
import shutil
import struct
import subprocess
import sys
import sysconfig

import lztest as t
from lztest import case

VENDOR = os.path.join(t.SOURCE, "tests", "vendor")
PY_INCLUDE = sysconfig.get_paths()["include"]
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def amalgamation(d, prefix):
    """The NCCL amalgamation with control API <prefix>lazynccl_*."""
    os.makedirs(d, exist_ok=True)
    t.run([sys.executable, os.path.join(t.SOURCE, "gen", "lazygen.py"), "amalgamate",
           os.path.join(t.SOURCE, "stubs", "nccl.toml"), "--include-dir", t.NCCL_INCLUDE,
           "--cc", " ".join(t.CC), "--prefix", prefix,
           "--libelf-spec", os.path.join(t.SOURCE, "stubs", "libelf.toml"),
           "--out-c", f"{d}/lazynccl_amalg.c", "--out-h", f"{d}/lazynccl_amalg.h"], check_rc=0)
    return d


def extension(d, module, prefix):
    """Build module (a .so importable from d) vendoring an amalgamation."""
    if not os.path.exists(os.path.join(PY_INCLUDE, "Python.h")):
        raise t.Skip(f"Python.h not found in {PY_INCLUDE} (python3-dev)")
    amalg = amalgamation(f"{d}/amalg_{module}", prefix)
    out = os.path.join(d, module + EXT_SUFFIX)
    t.compile_c(out, [os.path.join(VENDOR, "lazyext.c"), f"{amalg}/lazynccl_amalg.c"],
                [f"-I{PY_INCLUDE}", f"-I{amalg}", f"-I{t.NCCL_INCLUDE}", f"-DMODNAME={module}",
                 f"-DPREFIX={prefix}lazynccl_", "-DAMALG_H=<lazynccl_amalg.h>", "-fvisibility=hidden", "-O2",
                 "-Wall", "-Wextra", "-Werror"], shared=True)
    return out


PROBE = r"""
import sys, json
sys.path[:0] = {paths!r}
def mapped():
    return sorted({{l.split()[-1] for l in open('/proc/self/maps') if '/libnccl.so' in l}})
out = {{}}
import importlib
mods = [importlib.import_module(m) for m in {modules!r}]
out['after_import'] = mapped()
out['versions'] = [m.version() for m in mods]
out['ids'] = [len(m.unique_id()) for m in mods]
out['after_call'] = mapped()
out['paths'] = [m.loaded_path() for m in mods]
out['steps'] = [m.loaded_step() for m in mods]
print(json.dumps(out))
"""


def python(paths, modules, env=None):
    r = t.run([sys.executable, "-c", PROBE.format(paths=paths, modules=modules)], env=env, check_rc=0)
    return json.loads(r.stdout)


def real_version():
    lib = t.real_library("libnccl.so.2")
    code = ("import ctypes; v = ctypes.c_int(); "
            f"ctypes.CDLL({lib!r}).ncclGetVersion(ctypes.byref(v)); print(v.value)")
    return int(t.run([sys.executable, "-c", code], check_rc=0).stdout)


@case
def import_maps_nothing():
    """import maps no libnccl; version() loads it and equals the real ncclGetVersion."""
    want = real_version()
    d = t.workdir("vendor_import")
    extension(d, "ext_a", "exta_")
    out = python([d], ["ext_a"])
    t.equal(out["after_import"], [], "libnccl mapped after import")
    t.equal(out["versions"], [want], "version() vs the real library's ncclGetVersion")
    t.equal(out["ids"], [128], "unique_id() length")
    t.equal(len(out["after_call"]), 1, "libnccl copies after the call")


@case
def two_prefixes_one_copy():
    """Two extensions with different prefixes in one interpreter: both work,
    one copy of NCCL is mapped (the second reuses the first's)."""
    want = real_version()
    d = t.workdir("vendor_two")
    extension(d, "ext_a", "exta_")
    extension(d, "ext_b", "extb_")
    out = python([d], ["ext_a", "ext_b"])
    t.equal(out["versions"], [want, want], "versions")
    t.equal(len(out["after_call"]), 1, f"copies mapped: {out['after_call']}")
    t.equal(out["steps"][1], "already loaded", "the second copy's step")


@case
def wheel_layout():
    """Vendored in site-packages/pkg/ beside site-packages/nvidia/nccl/lib,
    the extension loads the wheel's library, and lazynccl-info agrees."""
    real = t.real_library("libnccl.so.2")
    d = t.workdir("vendor_wheel")
    site = f"{d}/lib/python3/site-packages"
    os.makedirs(f"{site}/pkg")
    os.makedirs(f"{site}/nvidia/nccl/lib")
    wheel_lib = f"{site}/nvidia/nccl/lib/libnccl.so.2"
    os.symlink(os.path.realpath(real), wheel_lib)
    ext = extension(f"{site}/pkg", "ext_w", "extw_")
    out = python([f"{site}/pkg"], ["ext_w"])
    t.equal(out["paths"], [wheel_lib], "loaded path")
    t.equal(out["steps"], ["wheel"], "step")
    doc = json.loads(t.run([os.path.join(t.BUILD, "lazynccl-info"), "--json", "--from", ext, "nccl"],
                           check_rc=0).stdout)
    t.equal(doc["libraries"][0]["chosen"], {"path": wheel_lib, "step": "wheel"}, "lazynccl-info")


def notes(path):
    """(owner, type, desc) of each note in .note.dlopen."""
    d = t.workdir("notes_" + os.path.basename(path))
    raw = f"{d}/note.bin"
    t.run(["objcopy", "-O", "binary", "--only-section=.note.dlopen", path, raw], check_rc=0)
    data, out, off = open(raw, "rb").read(), [], 0
    while off + 12 <= len(data):
        namesz, descsz, ntype = struct.unpack_from("<III", data, off)
        off += 12
        name = data[off:off + namesz].rstrip(b"\0").decode()
        off += (namesz + 3) & ~3
        desc = data[off:off + descsz].rstrip(b"\0").decode()
        off += (descsz + 3) & ~3
        out.append((name, ntype, desc))
    return out


@case
def dlopen_note_and_needed():
    """Every shim and a vendored extension carry the FDO dlopen note, whose
    JSON names the sonames; none has a DT_NEEDED on NVIDIA libraries or libelf."""
    d = t.workdir("vendor_note")
    files = [t.shim("nccl"), t.shim("nvrtc"), t.shim("nvjitlink")]
    if os.path.exists(os.path.join(PY_INCLUDE, "Python.h")):
        files.append(extension(d, "ext_n", "extn_"))
    want = {"liblazynccl.so": "libnccl.so.2", "liblazynvrtc.so": "libnvrtc.so.13",
            "liblazynvjitlink.so": "libnvJitLink.so.13", "ext_n": "libnccl.so.2"}
    for f in files:
        found = notes(f)
        print(os.path.basename(f), found)
        t.check(found and all(n == "FDO" and ty == 0x407c0c0a for n, ty, _ in found), f"{f}: notes {found}")
        entries = [e for _, _, desc in found for e in json.loads(desc)]
        sonames = {s for e in entries for s in e["soname"]}
        key = next(k for k in want if os.path.basename(f).startswith(k))
        t.check(want[key] in sonames, f"{f}: {want[key]} not in the note's sonames {sonames}")
        t.check(all({"feature", "soname", "priority"} <= set(e) for e in entries), f"{f}: keys")
        needed = t.run(["readelf", "-d", f], check_rc=0).stdout
        for bad in ("libnccl", "libnvrtc", "libnvJitLink", "libelf", "libcuda"):
            t.check(bad not in needed, f"{f}: DT_NEEDED on {bad}")


@case
def build_with_setuptools():
    """The extension built by setuptools from the amalgamation imports lazily and works."""
    try:
        import setuptools  # noqa: F401
    except ImportError:
        raise t.Skip("setuptools is not installed for this Python")
    want = real_version()
    d = t.workdir("vendor_setuptools")
    amalg = amalgamation(f"{d}/amalg", "")
    for f in ("setup.py", "lazyext.c"):
        shutil.copy(os.path.join(VENDOR, f), d)
    t.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=d,
          env={"AMALG_DIR": amalg, "NCCL_INCLUDE": t.NCCL_INCLUDE}, check_rc=0)
    out = python([d], ["ext_setuptools"])
    t.equal((out["after_import"], out["versions"]), ([], [want]), "lazy import, version")


@case
def build_with_cmake():
    """The extension built by CMake (as scikit-build does) imports lazily and works."""
    if not shutil.which("cmake"):
        raise t.Skip("cmake is not installed")
    want = real_version()
    d = t.workdir("vendor_cmake")
    amalg = amalgamation(f"{d}/amalg", "")
    t.run(["cmake", "-S", VENDOR, "-B", f"{d}/build", f"-DAMALG_DIR={amalg}",
           f"-DNCCL_INCLUDE={t.NCCL_INCLUDE}", f"-DPython3_EXECUTABLE={sys.executable}",
           f"-DPython3_INCLUDE_DIR={PY_INCLUDE}"],
          check_rc=0)
    t.run(["cmake", "--build", f"{d}/build"], check_rc=0)
    out = python([f"{d}/build"], ["ext_cmake"])
    t.equal((out["after_import"], out["versions"]), ([], [want]), "lazy import, version")


@case
def meson_subproject():
    """A Meson project using dependency('lazynccl', fallback: ...) builds a
    program that is lazy and works."""
    t.real_library("libnccl.so.2")
    d = t.workdir("vendor_meson")
    os.makedirs(f"{d}/proj/subprojects")
    shutil.copy(os.path.join(VENDOR, "consumer.meson.build"), f"{d}/proj/meson.build")
    for f in ("nccl_client.c", "maps.h"):
        shutil.copy(os.path.join(t.PROGS, f), f"{d}/proj/{f}")
    t.stage_source_tree(f"{d}/proj/subprojects/lazynccl")
    t.run(["meson", "setup", f"{d}/build", f"{d}/proj"], check_rc=0)
    t.run(["meson", "compile", "-C", f"{d}/build"], check_rc=0)
    out = t.run([f"{d}/build/consumer", "version"], check_rc=0).stdout
    t.check(out.startswith("before=0 rc=0 version=2") and out.strip().endswith("after=1"), out)


@case
def amalgamation_compiles_clean_with_gcc_and_clang():
    """The NCCL amalgamation, one translation unit with every runtime
    header in it, compiles with -Wall -Wextra -Werror under gcc and clang
    (clang warns of an unused static function of the main file, which an
    amalgamation's headers are)."""
    d = amalgamation(t.workdir("amalg_compilers"), "cc_")
    compilers = [c for c in ("gcc", "clang") if shutil.which(c)]
    t.check("clang" in compilers, f"clang on PATH (CI installs it for the fuzz build): {compilers}")
    for c in compilers:
        r = t.run([c, "-c", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{t.NCCL_INCLUDE}",
                   f"-I{t.CUDA_INCLUDE}", "-o", f"{d}/{c}.o", f"{d}/lazynccl_amalg.c"])
        t.equal((r.returncode, r.stderr.strip()), (0, ""), f"{c} on the amalgamation")


@case
def amalgamation_with_link_time_optimisation():
    """A program and a shared object built with -flto=auto (as
    distributions' package flags ask), the NCCL amalgamation compiled as
    docs/guides/vendoring.md says, with -fno-lto after it: each links, into
    the program directly and from a static archive, and the first call
    loads the real library. Without -fno-lto GCC's partitions leave the
    assembly's names unlinked: the case checks that it still does, so the
    guide's line stays needed."""
    d = amalgamation(t.workdir("amalg_lto"), "lto_")
    real = t.real_library("libnccl.so.2")
    with open(f"{d}/main.c", "w") as f:
        f.write('#include <nccl.h>\n#include <stdio.h>\n'
                'int main(void) { int v = 0; int rc = ncclGetVersion(&v);\n'
                '  printf("%d %d\\n", rc, v > 0); return rc; }\n')
    inc = [f"-I{d}", f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}", "-O2", "-fPIC", "-flto=auto"]
    r = t.run(["gcc", *inc, "-o", f"{d}/bare", f"{d}/main.c", f"{d}/lazynccl_amalg.c", "-ldl", "-lpthread"])
    t.check(r.returncode != 0, "gcc -flto=auto on the amalgamation: still unlinked without -fno-lto")
    t.run(["gcc", *inc, "-fno-lto", "-c", "-o", f"{d}/amalg.o", f"{d}/lazynccl_amalg.c"], check_rc=0)
    t.run(["ar", "rcs", f"{d}/libamalg.a", f"{d}/amalg.o"], check_rc=0)
    for what, objs in (("object", [f"{d}/amalg.o"]), ("archive", [f"-L{d}", "-lamalg"])):
        r = t.run(["gcc", *inc, "-o", f"{d}/prog", f"{d}/main.c", *objs, "-ldl", "-lpthread"])
        t.equal((r.returncode, r.stderr[-800:]), (0, ""), f"the program, the amalgamation's {what}")
        t.equal(t.run([f"{d}/prog"], env={"LAZYNCCL_LIBPATH": real}).stdout, "0 1\n", f"{what}: first call")
    r = t.run(["gcc", *inc, "-shared", "-o", f"{d}/libvendored.so", f"{d}/amalg.o", "-ldl", "-lpthread"])
    t.equal((r.returncode, r.stderr[-800:]), (0, ""), "a shared object")


@case
def three_amalgamations_one_prefix():
    """The NCCL, NVRTC and nvJitLink amalgamations generated with one
    --prefix link into one object (mypkg_lazynccl_load, mypkg_lazynvrtc_load:
    no clash), which carries one .note.dlopen entry per feature (libelf once,
    not three times) and loads each library on its first call."""
    d = t.workdir("vendor_three")
    srcs = []
    for spec, inc in (("nccl", t.NCCL_INCLUDE), ("nvrtc", t.CUDA_INCLUDE), ("nvjitlink", t.CUDA_INCLUDE)):
        t.run([sys.executable, os.path.join(t.SOURCE, "gen", "lazygen.py"), "amalgamate",
               os.path.join(t.SOURCE, "stubs", f"{spec}.toml"), "--include-dir", inc,
               "--prefix", "mypkg_", "--libelf-spec",
               os.path.join(t.SOURCE, "stubs", "libelf.toml"),
               "--out-c", f"{d}/lazy{spec}_amalg.c", "--out-h", f"{d}/lazy{spec}_amalg.h"], check_rc=0)
        srcs.append(f"{d}/lazy{spec}_amalg.c")
    with open(f"{d}/main.c", "w") as f:
        f.write('#include <nvrtc.h>\n#include <stdio.h>\n#include "lazynccl_amalg.h"\n'
                '#include "lazynvrtc_amalg.h"\n#include "lazynvjitlink_amalg.h"\n'
                "int main(void) { int a = 0, b = 0;\n"
                "  int rc = nvrtcVersion(&a, &b);\n"
                '  printf("%d %d.%d %d %d %d\\n", rc, a, b, mypkg_lazynvrtc_is_loaded(),\n'
                "         mypkg_lazynccl_is_loaded(), mypkg_lazynvjitlink_is_loaded()); return rc; }\n")
    exe = t.compile_c(f"{d}/three", [f"{d}/main.c"] + srcs,
                      [f"-I{d}", f"-I{t.NCCL_INCLUDE}", f"-I{t.CUDA_INCLUDE}", "-fvisibility=hidden",
                       "-ldl", "-lpthread"])
    out = t.run([exe], check_rc=0).stdout.split()
    t.equal((out[0], out[2:]), ("0", ["1", "0", "0"]), f"NVRTC loaded alone at its first call: {out}")
    features = [e["feature"] for _, _, desc in notes(exe) for e in json.loads(desc)]
    t.equal(sorted(features), ["libelf", "nccl", "nvjitlink", "nvrtc"], "one entry per feature")


@case
def wheel_step_reads_sys_path():
    """an extension installed with `pip install --target T`
    (T on PYTHONPATH) in a venv whose own site-packages holds the NCCL wheel:
    the first call finds the venv's wheel through the running Python's
    sys.path (nothing of the venv is mapped, so neither the site-packages
    above a loaded object nor PYTHONPATH could say it), not the system's."""
    if "address" in t.SANITIZE:
        raise t.Skip("an ASan-built extension cannot be loaded into a Python without ASan")
    d = t.workdir("wheel_sys_path")
    venv = f"{d}/venv"
    t.run([sys.executable, "-m", "venv", "--without-pip", venv], check_rc=0)
    py = f"{venv}/bin/python"
    site = t.run([py, "-c", "import site; print(site.getsitepackages()[0])"], check_rc=0).stdout.strip()
    fake = t.fake_nccl(f"{site}/nvidia/nccl/lib")
    target = f"{d}/target"
    os.makedirs(target, exist_ok=True)
    extension(target, "tgtext", "tg_")
    probe = ("import tgtext; print(tgtext.version()); print(tgtext.loaded_path()); "
             "print(tgtext.loaded_step())")
    r = t.run([py, "-c", probe], env={"PYTHONPATH": target}, check_rc=0)
    version, path, step = r.stdout.split()
    t.equal((version, os.path.realpath(path), step), ("99999", os.path.realpath(fake), "wheel"),
            f"the venv's wheel through sys.path: {r.stdout}{r.stderr}")


if __name__ == "__main__":
    raise SystemExit(t.main())
