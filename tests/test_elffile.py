#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The probe reads what the dynamic linker reads (src/elf/lz_elffile.c: program
headers, the dynamic segment, the hash table's symbol count, DT_VERNEED).
These tests hold it against binutils, which read the section headers, on
every real library at hand: the NVIDIA libraries of CUDA 13.0, Debian's
CUDA 12.4 / 11.8 / NCCL 2.22.3 (amd64 and arm64), and the system's own."""
import glob
import os
import re
import struct

import lztest as t
from lztest import case


def dumper(d):
    src = os.path.join(t.SOURCE, "src")
    return t.compile_c(os.path.join(d, "elffile_dump"),
                       [os.path.join(t.PROGS, "elffile_dump.c")] + [os.path.join(src, "elf", f) for f in ("lz_elffile.c", "lz_elfview.c", "lz_elfpeek.c", "lz_version.c")],
                       [f"-I{src}", "-D_GNU_SOURCE"] + t.sanitizer_link_args())


def binutils_facts(path, readelf="readelf"):
    """(SONAME, newest GLIBC_x.y needed, defined dynamic names) per binutils."""
    dyn = t.run([readelf, "-dW", path], check_rc=0).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]*)\]", dyn)
    ver = t.run([readelf, "-VW", path], check_rc=0).stdout
    needed = ver.split("Version needs section", 1)[1] if "Version needs section" in ver else ""
    glibc = sorted({v for v in re.findall(r"Name: GLIBC_([0-9][0-9.]*)", needed)},
                   key=lambda v: [int(x) for x in v.split(".")])
    syms = t.run([readelf, "--dyn-syms", "-W", path], check_rc=0).stdout
    names = set()
    for line in syms.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) >= 8 and f[0][:-1].isdigit() and f[6] != "UND":
            names.add(f[7].split("@")[0])
    return (m.group(1) if m else "-"), (glibc[-1] if glibc else "-"), names


def ours(exe, path):
    out = t.run([exe, path]).stdout
    lines = out.splitlines()
    t.check(lines and not lines[0].startswith("error="), f"{path}: {out[:300]}")
    head = dict(kv.split("=", 1) for kv in lines[0].split())
    return head, set(lines[1:])


def real_files():
    files = []
    for pattern in ("/usr/local/cuda/lib64/lib*.so.*", "/usr/local/cuda/lib/lib*.so.*"):
        for p in sorted(glob.glob(pattern)):
            if not os.path.islink(p) and p not in files:
                files.append(p)
    for name in ("libc.so.6", "libstdc++.so.6", "libelf.so.1", "libz.so.1", "libm.so.6"):
        p = os.path.join("/lib/x86_64-linux-gnu" if t.HOST_CPU == "x86_64" else "/lib/aarch64-linux-gnu", name)
        if os.path.exists(p):
            files.append(p)
    return files


def debian_files(arch):
    out = []
    for pkg, name in (("libnccl2", "libnccl.so.2"), ("libnvrtc12", "libnvrtc.so.12"),
                      ("libnvjitlink12", "libnvJitLink.so.12"), ("libnvrtc11.2", "libnvrtc.so.11.2"),
                      ("libnvrtc-builtins12.4", "libnvrtc-builtins.so.12.4")):
        try:
            out.append(os.path.realpath(os.path.join(t.debian(pkg, arch), name)))
        except t.Skip:
            pass
    return out


def compare(exe, files, native):
    checked = 0
    for path in files:
        head, names = ours(exe, path)
        soname, glibc, want = binutils_facts(path)
        t.equal(head["native"], "1" if native else "0", f"{path}: native")
        if not native:
            continue
        t.equal(head["soname"], soname, f"{path}: SONAME")
        t.equal(head["soname_only"], soname, f"{path}: SONAME read without allocation")
        t.equal(head["glibc"], glibc, f"{path}: newest GLIBC version needed")
        t.equal(len(names ^ want), 0,
                f"{path}: defined dynamic symbols differ: ours only {sorted(names - want)[:5]}, "
                f"binutils only {sorted(want - names)[:5]}")
        checked += 1
    return checked


@case
def elffile_matches_binutils_real_libraries():
    """SONAME, the newest GLIBC version needed and every defined dynamic
    symbol, read from the dynamic segment, equal what readelf reads from the
    sections, for every NVIDIA and system library installed here."""
    files = real_files()
    if not files:
        raise t.Skip("no real library here")
    n = compare(dumper(t.workdir("elffile_real")), files, native=True)
    print(f"{n} libraries agree with readelf")


@case
def elffile_matches_binutils_debian_libraries():
    """The same for the older NVIDIA libraries from Debian's archive (CUDA
    12.4, 11.8, NCCL 2.22.3); their arm64 builds are read as another
    machine's (class and machine only, as the probe needs)."""
    files = debian_files("amd64" if t.HOST_CPU == "x86_64" else "arm64")
    if not files:
        raise t.Skip("the Debian libraries are not in the cache")
    exe = dumper(t.workdir("elffile_debian"))
    n = compare(exe, files, native=True)
    other = debian_files("arm64" if t.HOST_CPU == "x86_64" else "amd64")
    for path in other:
        head, _ = ours(exe, path)
        want = t.run(["readelf", "-hW", path], check_rc=0).stdout
        machine = {"AArch64": "183", "Advanced Micro Devices X86-64": "62"}[
            re.search(r"Machine:\s+(.*)", want).group(1).strip()]
        t.equal(head["machine"], machine, f"{path}: machine")
    print(f"{n} libraries agree with readelf; {len(other)} of the other machine read as such")


def lookups_agree(exe, path, names):
    """Every defined name looked up through the hash table is found, and
    names it does not define are not (each defined one with a letter
    added, and cut short), with the same head line as the full read."""
    absent = {n + "x" for n in names} | {n[:-1] for n in names if len(n) > 1}
    absent -= names
    asked = sorted(names) + sorted(absent)[:2000]
    out = t.run([exe, "--ask", path], input="\n".join(asked) + "\n").stdout.splitlines()
    full = t.run([exe, path]).stdout.splitlines()[0]
    t.equal(out[0], full, f"{path}: the lookup's read of the head")
    got = dict(line.rsplit(" ", 1) for line in out[1:])
    t.equal(len(got), len(asked), f"{path}: an answer for each name")
    wrong = [n for n in asked if got[n] != ("1" if n in names else "0")]
    t.check(not wrong, f"{path}: looked up wrongly: {wrong[:5]}")


@case
def elffile_lookups_match_the_full_read():
    """The probe of a library without versioned names asks only its
    required names and its marker, looked up through the file's hash table
    (DT_GNU_HASH, else DT_HASH) instead of reading every name: on every
    real library here, each defined name is found and thousands of names
    it lacks are not, and the SONAME and GLIBC version read the same; the
    same for libraries linked with only a GNU, only a SysV or both hash
    tables."""
    d = t.workdir("elffile_lookup")
    exe = dumper(d)
    files = [p for p in real_files() + debian_files("amd64" if t.HOST_CPU == "x86_64" else "arm64")]
    src = f"{d}/lib.c"
    with open(src, "w") as f:
        f.write("".join(f"int lz_name_{i}(void) {{ return {i}; }}\n" for i in range(300)))
        f.write("int lz_data_0 = 1;\n")
    for style in ("gnu", "sysv", "both"):
        files.append(t.compile_c(f"{d}/lib{style}.so", [src], ["-shared", "-fPIC",
                                  f"-Wl,--hash-style={style}", f"-Wl,-soname,lib{style}.so"]))
    for path in files:
        _, names = ours(exe, path)
        lookups_agree(exe, path, names)
    print(f"{len(files)} libraries: every lookup agrees with the full read")


@case
def defines_all_counts_default_versions_only():
    """lz_holder_defines_all, which decides whether a loaded library exports
    every name of its spec (own answers bound to the real function,
    src/api/lz_bind.h): a name defined unversioned or at its default version
    counts, one at a hidden version alone does not (where dlsym may still
    find it), nor one the library lacks; and all names together only when
    each does."""
    d = t.workdir("defines_all")
    src = os.path.join(d, "lib.c")
    with open(src, "w") as f:
        f.write("int plain(void) { return 1; }\n"
                "int cur_v2(void) { return 2; } __asm__(\".symver cur_v2, cur@@V2\");\n"
                "int cur_v1(void) { return 1; } __asm__(\".symver cur_v1, cur@V1\");\n"
                "int old_v1(void) { return 1; } __asm__(\".symver old_v1, old@V1\");\n")
    vmap = os.path.join(d, "lib.map")
    with open(vmap, "w") as f:
        f.write("V1 { global: plain; cur; old; local: *; };\nV2 { global: cur; } V1;\n")
    lib = t.compile_c(os.path.join(d, "libdef.so"), [src], [f"-Wl,--version-script,{vmap}"],
                      shared=True)
    exe = t.compile_c(os.path.join(d, "defines_all"),
                      [os.path.join(t.PROGS, "defines_all.c"), os.path.join(t.SHIMS, "liblzruntime.a")],
                      ["-ldl", "-lpthread"] + t.sanitizer_link_args())
    out = t.run([exe, lib, "plain", "plain", "cur", "old", "absent"], check_rc=0).stdout
    t.equal(out.splitlines(), ["plain ours=1 dlsym=1", "cur ours=1 dlsym=1",
                               f"old ours=0 dlsym={out.split('old ours=0 dlsym=')[1][0]}",
                               "absent ours=0 dlsym=0", "all=0"], "each name")
    out = t.run([exe, lib, "plain", "plain", "cur"], check_rc=0).stdout
    t.equal(out.splitlines()[-1], "all=1", "the defined names together")


def misaligned(b):
    """b with its last loadable segment's file offset moved by 8 bytes:
    address and offset no longer a page apart, which ld.so refuses."""
    b = bytearray(b)
    phoff, = struct.unpack_from("<Q", b, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
    loads = [phoff + i * phentsize for i in range(phnum) if struct.unpack_from("<I", b, phoff + i * phentsize)[0] == 1]
    offset, = struct.unpack_from("<Q", b, loads[-1] + 8)
    struct.pack_into("<Q", b, loads[-1] + 8, offset + 8)
    return bytes(b)


def last_load_end(b):
    """Where the file image of b's last loadable segment ends."""
    phoff, = struct.unpack_from("<Q", b, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
    ends = [struct.unpack_from("<Q", b, phoff + i * phentsize + 8)[0] +
            struct.unpack_from("<Q", b, phoff + i * phentsize + 32)[0]
            for i in range(phnum) if struct.unpack_from("<I", b, phoff + i * phentsize)[0] == 1]
    return max(ends)


@case
def elffile_rejects_bad_files():
    """Broken files give the reason and no facts: empty, text, a header only,
    program headers past the end, a loadable segment past the end, one
    whose address and file offset are not a whole number of pages apart
    (ld.so's words), no dynamic segment (an object file). A file cut inside
    its last page is read, as ld.so maps it."""
    d = t.workdir("elffile_bad")
    exe = dumper(d)
    good = t.fake_nccl(f"{d}/good")
    with open(good, "rb") as f:
        b = f.read()
    cases = {"empty": (b"", "not an ELF file"),
             "text": (b"not an ELF file at all\n" * 4, "not an ELF file"),
             "header": (b[:64], "truncated ELF: program headers end at byte"),
             "cut": (b[:2000], "truncated ELF: a loadable segment ends at byte"),
             "misaligned": (misaligned(b), "ELF load command address/offset not page-aligned")}
    for name, (data, reason) in cases.items():
        p = f"{d}/{name}.so"
        with open(p, "wb") as f:
            f.write(data)
        out = t.run([exe, p]).stdout
        t.check(out.startswith("error=" + reason), f"{name}: {out}")
    # Cut inside the last page of the last loadable segment: ld.so maps it
    # (the rest of the page reads as zeros), so the probe takes it.
    p = f"{d}/cut_in_last_page.so"
    with open(p, "wb") as f:
        f.write(b[:last_load_end(b) - 8])
    out = t.run([exe, p]).stdout
    t.check(not out.startswith("error="), f"cut inside the last page: {out}")
    obj = t.compile_c(f"{d}/x.o", [os.path.join(t.PROGS, "elffile_dump.c")],
                      ["-c", f"-I{os.path.join(t.SOURCE, 'src')}"])
    out = t.run([exe, obj]).stdout
    t.check(out.startswith("error=not a shared object (ELF type 1)"), out)


if __name__ == "__main__":
    raise SystemExit(t.main())
