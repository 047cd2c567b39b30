#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""a spec completed by the library itself. A drop-in carries the
real library's symbol versions (read from it at build time), so a program
linked against the real library runs on it with nothing on stderr and the
same answers; headers are found where the compiler looks; a pointer
return type fails with NULL without a [failure] line; a version function
may return char *."""
import os
import re
import shutil
import subprocess
import sys

import lztest as t
from lztest import case

GEN = os.path.join(t.SOURCE, "gen", "lazygen.py")
sys.path.insert(0, os.path.join(t.SOURCE, "gen"))
from control_api import CONTROL_API  # noqa: E402
FIXTURE = os.path.join(t.SOURCE, "tests", "fixtures", "versioned")
DROPINS = os.path.join(t.BUILD, "src", "dropin")
CUDA_LIB = "/usr/local/cuda/lib64"

from real_programs import PROGRAMS  # noqa: E402

PROGRAM = """#define _GNU_SOURCE
{includes}
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
int main(void)
{{
    Dl_info info;
    if (dladdr((void *)&{fn}, &info) && info.dli_fname)
        printf("from: %s\\n", info.dli_fname);
    {body}
    return 0;
}}
"""


def real_dir(d, soname):
    """A directory holding the real library under its SONAME: the
    Toolkit's stub stands for the driver on a machine without one."""
    if soname == "libcuda.so.1":
        stub = os.path.join(CUDA_LIB, "stubs", "libcuda.so")
        if not os.path.exists(stub):
            raise t.Skip("no libcuda stub here")
        return t.link_dir(os.path.join(d, "real"), stub, name=soname)
    return os.path.dirname(t.real_library(soname))


def version_nodes(path):
    """The version nodes a file defines, with what each inherits (objdump
    -p), its base version (its own file name) left out: [(node, parents)]."""
    out = t.run(["objdump", "-p", path], check_rc=0).stdout
    if "Version definitions:" not in out:
        return []
    nodes = []
    for line in out.split("Version definitions:")[1].split("\n\n")[0].strip().splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[1] != "0x01":      # index flags hash name; 0x01: base
            nodes.append((parts[3], []))
        elif len(parts) >= 1 and line.startswith("\t") and nodes:
            nodes[-1][1].extend(parts)
    return nodes


def sanitized_env():
    # A sanitizer's leak report at exit names the real libraries' own
    # allocations; what is checked here is that the loader says nothing.
    return {"ASAN_OPTIONS": "detect_leaks=0"} if t.SANITIZE not in ("", "none") else {}


def linked_to_real(lib):
    soname, headers, body, fn = PROGRAMS[lib]
    dropin = os.path.join(DROPINS, soname)
    if not os.path.exists(dropin):
        raise t.Skip(f"the drop-in {soname} was not built (its header is missing: see meson's warning)")
    if "thread" in t.SANITIZE and lib not in ("zlib", "lzma", "curl"):
        raise t.Skip("TSan reports the CUDA libraries' own threads; zlib, lzma and curl run here")
    d = t.workdir(f"symvers_{lib}")
    real = real_dir(d, soname)
    src = os.path.join(d, "prog.c")
    with open(src, "w") as f:
        f.write(PROGRAM.format(includes="".join(f"#include <{h}>\n" for h in headers), fn=fn, body=body))
    prog = t.compile_c(os.path.join(d, "prog"), [src],
                       [f"-I{t.CUDA_INCLUDE}", f"-L{real}", f"-l:{soname}", "-ldl"]
                       + t.sanitizer_link_args())
    only = t.link_dir(os.path.join(d, "dropin"), dropin)
    env = sanitized_env()
    if lib == "cuda":
        env["LAZYCUDA_LIBPATH"] = os.path.join(real, soname)
    direct = t.run([prog], env=dict(env, LD_LIBRARY_PATH=real), check_rc=0)
    via = t.run([prog], env=dict(env, LD_LIBRARY_PATH=f"{only}:{real}"), check_rc=0)
    t.equal(via.stderr, "", f"{lib}: nothing on stderr under the drop-in (no version warning)")
    t.equal(direct.stderr, "", f"{lib}: nothing on stderr under the real library")
    real_nodes = version_nodes(os.path.join(real, soname))
    t.equal(version_nodes(dropin), real_nodes, f"{lib}: exactly the library's version nodes")
    got, want = via.stdout.splitlines(), direct.stdout.splitlines()
    t.equal(got[0], f"from: {only}/{soname}", f"{lib}: the drop-in served the call")
    t.equal(got[1:], want[1:], f"{lib}: the same answer as the real library")
    print(f"{lib}: {' | '.join(got[1:])}")


t.case_per(PROGRAMS, linked_to_real, "symvers_{}_linked_program_on_dropin",
           "{}: a program linked against the real library runs on the drop-in with empty "
           "stderr and the real library's answer.")


def lazygen(*args, cc=None, check=0):
    cmd = [sys.executable, GEN] + list(args) + ["--cc", cc or " ".join(t.CC)]
    return t.run(cmd, check_rc=check)


class Fixture:
    """libfix v1 and v2, its header in <sysroot>/usr/include/<multiarch>/
    (a directory the compiler given --sysroot searches), and its drop-in
    generated from the spec in tests/fixtures/versioned with v2 as the
    real library."""

    def __init__(self, name):
        self.d = t.workdir(name)
        arch = subprocess.run(t.CC + ["-print-multiarch"], capture_output=True,
                              text=True).stdout.strip() or "x86_64-linux-gnu"
        self.root = os.path.join(self.d, "sysroot")
        self.hdir = os.path.join(self.root, "usr", "include", arch)
        os.makedirs(self.hdir)
        os.makedirs(os.path.join(self.root, "usr", "lib", arch))  # the linker's, in the sysroot
        shutil.copy(os.path.join(FIXTURE, "fix.h"), self.hdir)
        self.cc = " ".join(t.CC + [f"--sysroot={self.root}"])
        self.v = {}
        for k in (1, 2):
            out = os.path.join(self.d, f"v{k}")
            os.makedirs(out)
            t.compile_c(os.path.join(out, "libfix.so.1"), [os.path.join(FIXTURE, "fix.c")],
                        [f"-I{self.hdir}", "-Wl,-soname,libfix.so.1",
                         f"-Wl,--version-script,{FIXTURE}/fix_v{k}.map"] + (["-DFIX_V2"] if k == 2 else []),
                        shared=True)
            self.v[k] = out
        self.spec = os.path.join(FIXTURE, "fix.toml")

    def generate(self, spec=None):
        spec = spec or self.spec
        self.stubs, self.exports = os.path.join(self.d, "fix_stubs.c"), os.path.join(self.d, "fix.txt")
        r = lazygen("generate", spec, "--include-dir", self.hdir, "--out-c", self.stubs,
                    "--out-list", self.exports, cc=self.cc)
        return r

    def dropin(self, library):
        self.map, self.symver = os.path.join(self.d, "fix.map"), os.path.join(self.d, "fix_symver.h")
        lazygen("dropin", self.spec, "--soname", "libfix.so.1", "--exports", self.exports,
                "--library", library, "--out-map", self.map, "--out-symver", self.symver, cc=self.cc)
        out = os.path.join(self.d, "dropin")
        os.makedirs(out, exist_ok=True)
        t.compile_c(os.path.join(out, "libfix.so.1"), [self.stubs],
                    [f"-I{self.hdir}", f"-I{t.SOURCE}/src", f"-I{t.BUILD}", "-fvisibility=hidden",
                     "-D_GNU_SOURCE", '-DLZ_DROPIN_SONAME="libfix.so.1"',
                     f'-DLZ_DROPIN_SYMVER="{self.symver}"', "-Wl,-soname,libfix.so.1",
                     f"-Wl,--version-script,{self.map}", "-Wl,--whole-archive",
                     os.path.join(t.SHIMS, "liblzruntime.a"), "-Wl,--no-whole-archive",
                     "-ldl", "-lpthread"] + t.sanitizer_link_args(), shared=True)
        return out

    def program(self, k):
        return t.compile_c(os.path.join(self.d, f"prog_v{k}"), [os.path.join(FIXTURE, "prog.c")],
                           (["-DFIX_V2"] if k == 2 else []) + [f"-I{self.hdir}", f"-L{self.v[k]}", "-l:libfix.so.1",
                            "-ldl"] + t.sanitizer_link_args())


@case
def own_answers_beside_hidden_versions_refused():
    """A spec whose library has own answers and hidden symbol versions is
    refused when its drop-in is generated, with the reason: a call at a
    hidden version can fail after the load, which an own answer bound to the
    real function (src/api/lz_bind.h) would not explain."""
    fx = Fixture("symvers_own_answers_hidden")
    spec = os.path.join(fx.d, "fix.toml")
    with open(fx.spec) as f, open(spec, "w") as out:
        out.write(f.read() + '\n[own_answers]\nfix_handle_name = "@message"\n')
    fx.generate(spec)
    r = lazygen("dropin", spec, "--soname", "libfix.so.1", "--exports", fx.exports,
                "--library", os.path.join(fx.v[2], "libfix.so.1"), "--out-map",
                os.path.join(fx.d, "m"), "--out-symver", os.path.join(fx.d, "h"), cc=fx.cc, check=1)
    t.contains(r.stderr, f"{spec} [own_answers]: error: libfix.so.1 has hidden symbol versions "
               "(fix_clone@FIXBACKEND_1.0); own answers are not supported beside them", "message")
    t.check(not os.path.exists(os.path.join(fx.d, "m")), "a version script was written")


def versions_of(path):
    """{name@NODE or name@@NODE} of a file's defined dynamic symbols."""
    r = t.run([os.environ.get("LZ_NM", "nm"), "-D", "--defined-only", "--with-symbol-versions", path],
              check_rc=0)
    return {line.split()[-1] for line in r.stdout.splitlines()
            if len(line.split()) == 3 and line.split()[1] in "TW" and "@" in line}


@case
def fixture_dropin_is_the_library_to_linked_programs():
    """A library the project has never seen, whose spec says nothing of its
    header's place, its symbol versions or its pointers' failure values:
    its header is found in the compiler's multiarch directory; its drop-in
    has the library's two nodes (inheritance included) and every symbol
    under the same node, the old hidden fix_clone@FIXBACKEND_1.0 too; a
    program linked against v1 and one linked against v2 each print, on the
    drop-in, exactly what they print on the real v2, with empty stderr."""
    fx = Fixture("symvers_fixture")
    r = lazygen("find-include", fx.spec, "--option-dir", "", cc=fx.cc)
    t.equal(r.stdout.strip(), f"{fx.hdir}\tsystem", "found where the compiler looks")
    r = lazygen("find-libraries", fx.spec, "--include-dir", fx.hdir,
                "--library-dir", fx.v[2], cc=fx.cc)
    t.equal(r.stdout, f"libfix.so.1\t{fx.v[2]}/libfix.so.1\n", "the real library found")
    t.equal(r.stderr, "", "no warning")
    t.equal(fx.generate().stderr, "", "generation says nothing")
    out = fx.dropin(os.path.join(fx.v[2], "libfix.so.1"))
    real = versions_of(os.path.join(fx.v[2], "libfix.so.1"))
    mine = versions_of(os.path.join(out, "libfix.so.1"))
    t.equal(sorted(real - mine), [], "every version of the library's symbols is the drop-in's")
    t.check("fix_clone@FIXBACKEND_1.0" in mine and "fix_clone@@FIXBACKEND_2.0" in mine,
            f"both versions of fix_clone: {sorted(v for v in mine if 'clone' in v)}")
    t.equal(sorted(v.split("@")[-1] for v in mine - real),
            ["FIXBACKEND_1.0"] * len(CONTROL_API),
            "only the control API is added, under the main node")
    r = t.run(["objdump", "-p", os.path.join(out, "libfix.so.1")], check_rc=0)
    defs = r.stdout.split("Version definitions:")[1].split("\n\n")[0]
    t.check(re.search(r"FIXBACKEND_2\.0\s*\n\s*FIXBACKEND_1\.0", defs), f"2.0 inherits 1.0:\n{defs}")
    for k in (1, 2):
        prog = fx.program(k)
        env = sanitized_env()
        direct = t.run([prog], env=dict(env, LD_LIBRARY_PATH=fx.v[2]), check_rc=0)
        via = t.run([prog], env=dict(env, LD_LIBRARY_PATH=out,
                                     LAZYFIX_LIBPATH=os.path.join(fx.v[2], "libfix.so.1")), check_rc=0)
        t.equal(via.stderr, "", f"v{k} program: empty stderr on the drop-in")
        t.equal(via.stdout.splitlines()[0], f"from: {out}/libfix.so.1", "the drop-in served it")
        t.equal(via.stdout.splitlines()[1:], direct.stdout.splitlines()[1:], f"v{k} program: same answers")
        clone = "21 -> 21" if k == 1 else "21 -> 42"
        t.contains(via.stdout, f"clone: {clone}", f"v{k}'s fix_clone is its own version's")
        t.contains(via.stdout, "version: 2.0.0", "the char * version function forwarded")


@case
def fixture_pointers_fail_with_null():
    """No [failure] line for any of the fixture's fifteen pointer return
    types: without the library each returns NULL, and the declared ones the
    spec names return its values."""
    fx = Fixture("symvers_null")
    fx.generate()
    with open(fx.stubs) as f:
        text = f.read()
    nulls = re.findall(r"^LZ_FAIL\(.*, (fix_\w+), \(.*\), NULL\)$", text, re.M)
    t.equal(len(nulls), 15, f"the fifteen pointer-returning functions fail with NULL: {nulls}")
    out = fx.dropin(os.path.join(fx.v[2], "libfix.so.1"))
    prog = fx.program(2)
    r = t.run([prog, "absent"], env=dict(sanitized_env(), LD_LIBRARY_PATH=out,
                                         LAZYFIX_LIBPATH=os.path.join(fx.d, "none")), check_rc=0)
    t.contains(r.stdout, "nulls: 1 1 1 1 1 1 1 1 1 1 1 1 1", "every pointer function returned NULL")
    t.contains(r.stdout, "others: -1 1", "int and enum: the spec's values")


@case
def fixture_version_function_char_pointer():
    """version_function = "fix_version", a char *f(void): lazynccl-info's
    version hook is generated for it."""
    fx = Fixture("symvers_version")
    fx.generate()
    with open(fx.stubs) as f:
        text = f.read()
    t.contains(text, "static int lz_version_fix(char *out, size_t size)", "the version hook")
    t.contains(text, ".version = lz_version_fix,", "wired into the library")


@case
def failure_note_lists_only_what_is_left():
    """A spec without the fixture's int and enum failure values: generation
    succeeds, and its note names the functions of those two types, which
    stop the process without the library, and none returning a pointer or
    nothing (the spec gives them NULL and nothing)."""
    fx = Fixture("symvers_missing")
    spec = os.path.join(fx.d, "fix.toml")
    with open(fx.spec) as f:
        text = f.read()
    with open(spec, "w") as f:
        f.write(text.split("[failure]")[0] + '[failure]\n"size_t" = "0"\n"*" = "NULL"\n"void" = ""\n')
    r = lazygen("generate", spec, "--include-dir", fx.hdir, "--out-c", os.path.join(fx.d, "x.c"),
                "--out-list", os.path.join(fx.d, "x.txt"), cc=fx.cc, check=0)
    note = re.search(r"note: (\d+) function\(s\) stop the process .*?no value\): (.*?)(?= lazygen:|$)",
                     t.flat(r.stderr))
    t.check(note, f"the note: {r.stderr}")
    listed = sorted(part.split(":")[0] for part in note.group(2).split("; "))
    t.equal(listed, ["fix_status", "int"], "only the non-pointer types")


@case
def missing_library_warns_once_naming_the_key():
    """The library not found at build time and the spec silent on symbol
    versions: one warning naming 'symbol_versions' and -Dlibrary_dirs, and
    every directory searched; the key set, no warning."""
    fx = Fixture("symvers_warn")
    r = lazygen("find-libraries", fx.spec, "--include-dir", fx.hdir, cc=fx.cc)
    t.equal(r.stdout, "libfix.so.1\t-\n", "not found")
    lines = [line for line in r.stderr.splitlines() if line]
    t.equal(len(lines), 1, f"one warning: {r.stderr}")
    t.contains(lines[0], "libfix.so.1 not found at build time", "names the library")
    t.contains(lines[0], "set 'symbol_versions' in [library]", "names the key")
    t.contains(lines[0], "-Dlibrary_dirs=DIR", "names the option")
    t.contains(lines[0], f"searched: {os.path.join(fx.root, 'usr', 'lib64')}, "
                         f"{os.path.join(fx.root, 'usr', 'lib')}, ", "beside the header's prefix first")
    t.contains(lines[0], os.path.join(fx.root, "usr", "lib", os.path.basename(fx.hdir)),
               "the linker's multiarch directory in the sysroot")
    spec = os.path.join(fx.d, "keyed.toml")
    with open(fx.spec) as f:
        text = f.read()
    with open(spec, "w") as f:
        f.write(text.replace('install = false', 'install = false\nsymbol_versions = "FIXBACKEND_2.0"'))
    r = lazygen("find-libraries", spec, "--include-dir", fx.hdir, cc=fx.cc)
    t.equal((r.stdout, r.stderr), ("libfix.so.1\t-\n", ""), "the key said it: no warning")
    fx.spec = spec
    fx.generate()
    fx.dropin("-")
    with open(fx.map) as f:
        script = f.read()
    t.contains(script, "FIXBACKEND_2.0 {", "the key's node")
    t.contains(script, "from the spec: symbol_versions = 'FIXBACKEND_2.0'", "provenance")


@case
def header_search_names_every_directory():
    """A header nowhere: the message names the spec's directories and then
    each of the compiler's own."""
    fx = Fixture("symvers_nohdr")
    os.remove(os.path.join(fx.hdir, "fix.h"))
    r = lazygen("find-include", fx.spec, "--option-dir", "", cc=fx.cc, check=1)
    t.contains(r.stderr, "fix.h not found; searched: ", "the message")
    t.contains(r.stderr, f"{fx.hdir} (the compiler's)", "the multiarch directory")
    t.contains(r.stderr, f"{os.path.join(fx.root, 'usr', 'include')} (the compiler's)", "the sysroot's")


@case
def describe_library_shows_nodes():
    """lazygen describe --library lists the real library's version nodes,
    with counts and inheritance (liblzma: five nodes, hidden versions)."""
    lzma = "/lib/x86_64-linux-gnu/liblzma.so.5"
    if not os.path.exists(lzma) or not os.path.exists("/usr/include/lzma.h"):
        raise t.Skip("liblzma and its header are not here")
    r = lazygen("describe", os.path.join(t.SOURCE, "tests", "specs", "lzma.toml"),
                "--include-dir", "/usr/include", "--library", lzma)
    kv = dict(line.split("\t", 1) for line in r.stdout.splitlines() if "\t" in line)
    t.equal(kv["soname"], "liblzma.so.5", "soname")
    t.equal(kv["version_nodes"].split()[:2], ["XZ_5.0", "XZ_5.2"], "the nodes in the file's order")
    t.check(re.match(r"default \d+, hidden [1-9]\d*, inherits XZ_5.1.2alpha$", kv["node:XZ_5.2.2"]),
            f"XZ_5.2.2: {kv['node:XZ_5.2.2']}")


def dynamic_symbols(path):
    """{name: version} of every defined dynamic symbol, as nm prints it
    ("name@@NODE", "name@NODE", or "name" for an unversioned one)."""
    r = t.run([os.environ.get("LZ_NM", "nm"), "-D", "--defined-only", "--with-symbol-versions",
               path], check_rc=0)
    out = {}
    for line in r.stdout.splitlines():
        full = line.split()[-1]
        out[full.split("@")[0]] = full
    return out


def vague_undeclared(real, have):
    """Weak or unique definitions of the real file no header declares: C++'s
    vague linkage, which a drop-in never defines (docs/reference/spec.md)."""
    out = t.run(["readelf", "-W", "--dyn-syms", real], check_rc=0).stdout
    return {f[7].split("@")[0] for f in (line.split() for line in out.splitlines())
            if len(f) >= 8 and f[4] in ("WEAK", "UNIQUE") and f[6] != "UND"} - set(have)


SAME_VERSIONS = [("libz.so.1", "/lib/x86_64-linux-gnu", "zlib"),
                 ("liblzma.so.5", "/lib/x86_64-linux-gnu", "lzma"),
                 ("libcurl.so.4", "/lib/x86_64-linux-gnu", "curl"),
                 ("libcrypto.so.3", "/lib/x86_64-linux-gnu", "crypto"),
                 ("libsqlite3.so.0", "/lib/x86_64-linux-gnu", "sqlite"),
                 ("libncursesw.so.6", "/lib/x86_64-linux-gnu", "ncurses"), ("libnccl.so.2", CUDA_LIB, "nccl"),
                 ("libnvrtc.so.13", CUDA_LIB, "nvrtc"), ("libnvJitLink.so.13", CUDA_LIB, "nvjitlink"),
                 ("libcublas.so.13", CUDA_LIB, "cublas")]


def same_versions(item):
    soname, where, lib = item
    dropin, real = os.path.join(DROPINS, soname), os.path.join(where, soname)
    if not os.path.exists(dropin) or not os.path.exists(real):
        raise t.Skip(f"{dropin if not os.path.exists(dropin) else real} is not here")
    have, want = dynamic_symbols(dropin), dynamic_symbols(real)
    skip = vague_undeclared(real, have)
    differ = [f"{want[n]} -> {have.get(n, '(missing)')}" for n in sorted(want)
              if have.get(n) != want[n] and n not in skip]
    t.equal(differ[:10], [], f"{len(differ)} of {len(want)} names differ from {real}")
    with open(os.path.join(t.SHIMS, f"{lib}_exports.txt")) as f:
        header = set(f.read().split())
    extra = [n for n in have if n not in want and n not in header]
    t.equal(extra, [], "names the drop-in adds besides the header's (a versioned family's other "
                       "minors, functions a newer library has) and the control API")
    unversioned = sum("@" not in v for v in want.values())
    print(f"{soname}: {len(want)} names, {unversioned} unversioned, all as in {real}")


t.case_per(SAME_VERSIONS, same_versions, "dropin_versions_equal_real_{0[0]}",
           "readelf's view of the drop-in {0[0]} equals the real file's in {0[1]}, name by name and "
           "version by version (unversioned names included); what the drop-in adds is the header's "
           "and the control API's.")


if __name__ == "__main__":
    raise SystemExit(t.main())
