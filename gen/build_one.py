# SPDX-License-Identifier: MIT
"""lazygen build: one library's shims from its spec with the C compiler
alone, no Meson and no other library's shim: the shared shim
(lib<shim>.so.0), the static one (lib<shim>.a), a drop-in per soname
(dropin/<soname>), the control header and a pkg-config file.

The same steps as the Meson build (src/meson.build, src/dropin/meson.build):
generate the shim's C files from the header, compile them with the runtime
(src/<phase>/lz_*.c, and the internal libelf shim where libelf's headers are), link.
Objects are compiled in parallel; nothing is written outside OUT."""

import concurrent.futures
import os
import shlex
import shutil
import subprocess
import sys
import types

import cmake_config
import dropin_exports
import find_header
import find_library
import install_tables
from amalgamate import runtime_files
from model import target_arch
from output import write_if_changed
from spec import GenError, load_spec

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, os.pardir, "src"))
LIBELF_SPEC = os.path.normpath(os.path.join(HERE, os.pardir, "stubs", "libelf.toml"))
# What every object of the project is compiled with (meson.build's
# warning_level=2, werror, c_std=gnu11; src/meson.build's runtime_args).
# Never link-time optimised (-fno-lto after a --cc that asks for it): the
# tables are assembly naming C symbols (src/base/lz_runtime.h, lz_fnrel),
# which LTO's partitions rename or leave in another partition.
CFLAGS = ["-std=gnu11", "-O2", "-g", "-fPIC", "-fvisibility=hidden", "-D_GNU_SOURCE",
          "-Wall", "-Wextra", "-Werror", "-fno-lto"]


def _tag(soname):
    """A file-name part per soname, one to one (libav-x.so.1 and libav_x.so.1
    differ): every character but letters and digits spelled out."""
    return "".join(c if c.isalnum() else f"_{ord(c):02x}" for c in soname)


def _run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise GenError(what, f"{' '.join(cmd[:3])} ... failed:\n{r.stderr.strip()}")
    return r


def build(gen, a, cc):
    """gen: the lazygen module (its generate, dropin, finish-dropin and
    control-header steps); a: the parsed arguments."""
    spec = load_spec(a.spec)
    if spec.hidden:
        raise GenError(a.spec, "visibility = \"hidden\": a shim for the runtime's own use, not "
                               "built alone")
    out = os.path.abspath(a.out)
    if os.path.exists(out) and not os.path.isdir(out):
        raise GenError(a.out, "--out names a file, not a directory")
    work = os.path.join(out, "gen")
    os.makedirs(work, exist_ok=True)
    # include: the directories a program needs beside the compiler's own
    # (every include_search directory that exists); the header's is first
    # for the generator and the library's search.
    if a.include_dir:
        include = [os.path.abspath(d) for d in a.include_dir]
        hdir = include[0]
    else:
        hdir = find_header.find_include(spec, "", cc)[0]
        include = find_header.include_path(spec, "", cc)[0]
    arch = target_arch(cc)
    library = a.library
    if not library:
        # Found as the Meson build finds it, with its warning where it is not.
        _, warnings = find_library.find_libraries(spec, cc, hdir, ())
        for w in warnings:
            print(f"lazygen: {w}", file=sys.stderr)
        library = find_library.find(spec, spec.sonames[0], cc, arch, hdir, ())[0]
    files = {k: os.path.join(work, f"{spec.id}_{k}.c") for k in ("stubs", "data", "hooks", "control")}
    exports = os.path.join(work, f"{spec.id}_exports.txt")
    gen.cmd_generate(types.SimpleNamespace(
        spec=a.spec, include_dir=[hdir] + [d for d in include if d != hdir], library=library,
        out_c=files["stubs"], out_h=None,
        out_list=exports, out_data=files["data"], out_hooks=files["hooks"],
        out_control=files["control"]), cc)

    # The runtime, with the internal libelf shim where its headers are.
    runtime_c = [os.path.join(SRC, f) for f in runtime_files(SRC)[1]]
    runtime_flags = CFLAGS + ["-Wshadow", f"-I{SRC}", f"-I{work}"]
    try:
        gen.cmd_generate(types.SimpleNamespace(
            spec=LIBELF_SPEC, include_dir=[], library=None,
            out_c=os.path.join(work, "libelf_stubs.c"), out_h=os.path.join(work, "libelf_shim.h"),
            out_list=None, out_data=None, out_hooks=None), cc)
        runtime_c.append(os.path.join(work, "libelf_stubs.c"))
        runtime_flags.append("-DLZ_HAVE_LIBELF")
    except GenError:
        pass  # no libelf headers: the probe degrades to load-then-check, as in the Meson build
    # A library's header may warn about itself (#warning: libxml2's
    # deprecated modules, which a glob names); its declarations still serve.
    shim_flags = CFLAGS + ["-Wno-cpp", f"-I{SRC}", f"-I{os.path.dirname(os.path.abspath(a.spec))}"] + \
        [f"-I{d}" for d in include] + [f"-D{d}" for d in spec.defines]

    def obj(source, flags, tag=""):
        o = os.path.join(work, os.path.splitext(os.path.basename(source))[0] + tag + ".o")
        return o, cc + ["-c", source, "-o", o] + flags

    # The small runtime, in the archive beside the full one (src/meson.build).
    # Both at -Os, as Meson builds them: they run once per process.
    small_c = [os.path.join(SRC, "small", f) for f in ("lz_small.c", "lz_small_control.c", "lz_small_roots.c")]
    jobs = [obj(c, runtime_flags + ["-Os"]) for c in runtime_c + small_c]
    ours = list(files.values())
    jobs += [obj(c, shim_flags + ["-DLZ_IFUNC_EXPORTS"], ".shared") for c in ours]
    jobs += [obj(c, shim_flags + ["-DLZ_STATIC_SHIM"], ".static") for c in ours]
    maps = {}
    for soname in spec.sonames:
        tag = _tag(soname)
        m, h = os.path.join(work, tag + ".map"), os.path.join(work, tag + "_symver.h")
        dropin_exports.dropin(spec, soname, exports, library or "-", m, h)
        maps[soname] = (m, tag)
        jobs += [obj(c, shim_flags + ["-DLZ_IFUNC_EXPORTS", f'-DLZ_DROPIN_SONAME="{soname}"',
                                      f'-DLZ_DROPIN_SYMVER="{h}"'], "." + tag) for c in ours]
    with concurrent.futures.ThreadPoolExecutor(a.jobs or os.cpu_count() or 1) as pool:
        for f in [pool.submit(_run, cmd, o) for o, cmd in jobs]:
            f.result()
    runtime_o = [obj(c, runtime_flags)[0] for c in runtime_c]

    def objs(tag):
        return [obj(c, [], tag)[0] for c in ours]

    libs = ["-ldl", "-lpthread"]
    # What the real library needs, the drop-ins need too (src/dropin/meson.build).
    needed = []
    for n in gen.needed_by(library):
        if n != "libc.so.6" and not n.startswith("ld-linux") and n not in spec.sonames:
            stub = os.path.join(work, "needed", n)
            os.makedirs(os.path.dirname(stub), exist_ok=True)
            _run(cc + ["-shared", "-fPIC", "-nostdlib", "-o", stub, f"-Wl,-soname,{n}",
                       os.path.join(SRC, "dropin", "needed_stub.c")], stub)
            needed.append(stub)
    shared = os.path.join(out, f"lib{spec.shim}.so.0")
    _run(cc + ["-shared", "-o", shared, f"-Wl,-soname,lib{spec.shim}.so.0"] + objs(".shared") +
         runtime_o + libs, shared)
    link = os.path.join(out, f"lib{spec.shim}.so")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.basename(shared), link)
    archive = os.path.join(out, f"lib{spec.shim}.a")
    if os.path.exists(archive):
        os.remove(archive)
    _run(["ar", "rcs", archive] + objs(".static") + runtime_o + [obj(c, [])[0] for c in small_c], archive)
    os.makedirs(os.path.join(out, "dropin"), exist_ok=True)
    for soname, (m, tag) in maps.items():
        linked = os.path.join(work, soname)
        _run(cc + ["-shared", "-o", linked, f"-Wl,-soname,{soname}", f"-Wl,--version-script,{m}"]
             + objs("." + tag) + runtime_o + libs + ["-Wl,--no-as-needed"] + needed, linked)
        gen.cmd_finish_dropin(types.SimpleNamespace(
            input=linked, output=os.path.join(out, "dropin", soname), library=library or "-"), cc)
    if spec.control_api:
        write_if_changed(os.path.join(out, f"{spec.shim}_control.h"), install_tables.control_header(spec))
    flags = find_header.compile_flags(cc) + [f"-D{x}" for x in spec.defines]
    for static in (False, True):
        name = f"{spec.shim}{'-static' if static else ''}.pc"
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(pkg_config(spec, out, include, static, flags=flags))
    cmake_config.one(out, spec.id, spec.shim, *include, flags=flags, libs=spec.libs)
    if not a.keep:
        shutil.rmtree(work)
    return [shared, archive] + [os.path.join(out, "dropin", s) for s in spec.sonames] + \
        [os.path.join(out, f) for f in (f"{spec.shim}_control.h", f"{spec.shim}.pc",
                                        f"{spec.shim}-static.pc", f"{spec.shim}Config.cmake")
         if os.path.exists(os.path.join(out, f))]


def _pc_escape(path):
    """A path as a pkg-config file writes it: a space escaped, as
    pkg-config escapes its own ${pcfiledir}, so that its users (Meson, a
    shell's eval) read one argument."""
    return path.replace("\\", "\\\\").replace(" ", "\\ ")


def pkg_config(spec, out, include, static=False, beside=True, flags=()):
    """A pkg-config file for the shims in OUT, where they are: the shared
    shim, with the run path to it, or (static) the archive itself, which -l
    never picks beside the .so; OUT for the control header, include for the
    library's own headers where the compiler does not look, flags for the
    -I and -D options the build's compiler command carried."""
    cflags = " ".join(["-I${prefix}"] + [f"-I{_pc_escape(d)}" for d in include] +
                      [shlex.quote(f) for f in flags])
    libs = f"${{prefix}}/lib{spec.shim}.a -ldl -lpthread" if static else \
        f"-L${{prefix}} -Wl,-rpath,${{prefix}} -l{spec.shim}"
    libs = " ".join([libs] + [shlex.quote(x) for x in spec.libs])
    # Written beside the shims: ${pcfiledir} (pkg-config's own variable,
    # which it escapes itself) keeps the file right when the directory is
    # moved or copied.
    return (f"prefix={'${pcfiledir}' if beside else _pc_escape(out)}\n\n"
            f"Name: {spec.shim}{'-static' if static else ''}\n"
            f"Description: {spec.description}\nVersion: 0\n"
            f"Cflags: {cflags}\n"
            f"Libs: {libs}\n"
            # the archive's Libs carry them already (--static would say them twice)
            + ("" if static else "Libs.private: -ldl -lpthread\n"))
