#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tag a lazynccl wheel for the glibc its binaries really need.

    python3 gen/retag_wheel.py dist/lazynccl-0.1.0-py3-none-any.whl

Run by the build itself (gen/lazynccl_build.py, the PEP 517 backend that
`pip wheel .` and `pip install .` use); by hand only for a wheel built
otherwise. meson-python 0.12 tags the wheel py3-none-any (every file is in
the package directory, which it reads as pure). This reads the highest GLIBC_x.y symbol
version the wheel's ELF files need (objdump -T) and writes, beside the
input, the same wheel tagged py3-none-manylinux_<x>_<y>_<arch> (WHEEL and
RECORD updated, Root-Is-Purelib false); prints its file name. The binaries
are built against glibc 2.17 symbol versions (src/arch/lz_glibc_compat.h), so
that is manylinux_2_17 (manylinux2014). Every ELF file is stripped on the
way (gen/strip_elf.py: what the dynamic linker reads stays; debug_dir keeps
the debug sections apart). Standard library and binutils only:
auditwheel, which does the same and more, is not in Debian 12."""
import base64
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile

import strip_elf


def glibc_needed(data):
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        out = subprocess.run(["objdump", "-T", f.name], capture_output=True, text=True,
                             check=True).stdout
    vers = [tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_(\d+\.\d+(?:\.\d+)?)", out)]
    return max(vers, default=(0, 0))[:2]


def machine(data):
    e_machine = int.from_bytes(data[18:20], "little")
    name = {62: "x86_64", 183: "aarch64"}.get(e_machine)
    if not name:
        raise RetagError(f"unknown ELF machine {e_machine}")
    return name


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


class RetagError(Exception):
    pass


def retag(path, strip=True, debug_dir=None):
    """Write the wheel at path retagged (and its binaries stripped) beside
    it; its path."""
    with zipfile.ZipFile(path) as z:
        files = {i.filename: (i, z.read(i)) for i in z.infolist()}
    if strip:
        try:
            files = {n: (i, strip_elf.strip_bytes(d, n, debug_dir=debug_dir)
                         if d[:4] == b"\x7fELF" else d) for n, (i, d) in files.items()}
        except strip_elf.StripError as e:
            raise RetagError(str(e)) from None
    elves = [data for _, data in files.values() if data[:4] == b"\x7fELF"]
    if not elves:
        raise RetagError("no ELF file in the wheel: nothing to tag")
    need = max(glibc_needed(d) for d in elves)
    # A 32-bit x86 object beside 64-bit ones is the audit module that
    # declines in 32-bit processes (src/audit/lib32): it needs nothing, and
    # the wheel is the 64-bit machine's.
    narrow = [d for d in elves if d[4] == 1 and int.from_bytes(d[18:20], "little") == 3]
    for d in narrow:
        if glibc_needed(d) != (0, 0):
            raise RetagError("a 32-bit x86 object that needs the C library")
    arches = {machine(d) for d in elves if not any(d is n for n in narrow)}
    if len(arches) != 1:
        raise RetagError(f"binaries of several machines: {sorted(arches)}")
    tag = f"py3-none-manylinux_{need[0]}_{need[1]}_{arches.pop()}"
    base = os.path.basename(path)
    m = re.match(r"^(.+?-[^-]+)-[^-]+-[^-]+-[^-]+\.whl$", base)
    if not m:
        raise RetagError(f"not a wheel file name: {base}")
    out = os.path.join(os.path.dirname(path), f"{m.group(1)}-{tag}.whl")
    distinfo = next(n.split("/")[0] for n in files if n.endswith(".dist-info/WHEEL"))
    wheel_name, record_name = f"{distinfo}/WHEEL", f"{distinfo}/RECORD"
    text = files[wheel_name][1].decode()
    text = re.sub(r"(?m)^Tag: .*$", f"Tag: {tag}", text)
    text = re.sub(r"(?m)^Root-Is-Purelib: .*$", "Root-Is-Purelib: false", text)
    files[wheel_name] = (files[wheel_name][0], text.encode())
    record = [record_line(n, d) for n, (_, d) in files.items() if n != record_name]
    files[record_name] = (files[record_name][0], ("\n".join(record + [f"{record_name},,"]) + "\n").encode())
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, (info, data) in files.items():
            z.writestr(info, data)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        print(os.path.basename(retag(sys.argv[1])))
    except RetagError as e:
        sys.exit(f"retag_wheel: {e}")
