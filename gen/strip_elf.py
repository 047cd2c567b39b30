#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Strip what a user of an installed or vendored binary does not need: the
static symbol table and the debug sections. What the dynamic linker and
lazynccl read stays (.dynsym, symbol versions, notes, .dynamic).

    strip_elf.py [--strip PROG] [--debug-dir DIR] FILE...

(`lazygen build`'s output too: gen/strip_elf.py OUT/lib*.so.0 OUT/dropin/*)

With --debug-dir, each file's debug sections are first written to
DIR/<name>.debug (objcopy --only-keep-debug) and the stripped file names
them (.gnu_debuglink): point gdb's debug-file-directory there. Run by
`meson install` for the drop-ins (Meson strips the targets it links
itself; -Dstrip=false keeps everything), and by the wheel build
(gen/lazynccl_build.py: every ELF file of the wheel; `-C debug-dir=DIR`
keeps the debug sections apart). A relative FILE is below
$MESON_INSTALL_DESTDIR_PREFIX when that is set (an install script)."""
import os
import shutil
import subprocess
import sys
import tempfile


class StripError(Exception):
    pass


def strip_file(path, strip="strip", debug_dir=None, debug_name=None):
    """debug_name: the debug file's path below debug_dir (default: the
    file's name), so that files of one name from several directories (a
    wheel's three audit modules) keep one each."""
    objcopy = os.path.join(os.path.dirname(strip), os.path.basename(strip).replace("strip", "objcopy"))
    try:
        if debug_dir:
            debug = os.path.join(os.path.abspath(debug_dir), (debug_name or os.path.basename(path)) + ".debug")
            os.makedirs(os.path.dirname(debug), exist_ok=True)
            subprocess.run([objcopy, "--only-keep-debug", path, debug], check=True, capture_output=True,
                           text=True)
            subprocess.run([strip, "--strip-all", path], check=True, capture_output=True, text=True)
            # the link names the debug file and carries its checksum
            subprocess.run([objcopy, f"--add-gnu-debuglink={debug}", path], check=True,
                           capture_output=True, text=True)
        else:
            subprocess.run([strip, "--strip-all", path], check=True, capture_output=True, text=True)
    except FileNotFoundError as e:
        raise StripError(f"{e.filename}: not found (binutils)") from None
    except subprocess.CalledProcessError as e:
        raise StripError(f"{path}: {' '.join(e.cmd[:2])} failed: {e.stderr.strip()}") from None


def strip_bytes(data, name, strip="strip", debug_dir=None):
    """The stripped form of one ELF file's bytes (name: its path in the
    wheel, which names its debug file)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, os.path.basename(name))
        with open(path, "wb") as f:
            f.write(data)
        strip_file(path, strip, debug_dir, name)
        with open(path, "rb") as f:
            return f.read()


def main(argv):
    strip, debug_dir, files = os.environ.get("STRIP", "strip"), None, []
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            return
        if a == "--strip":
            strip = next(it)
        elif a == "--debug-dir":
            debug_dir = next(it)
        else:
            files.append(a)
    if not files or not shutil.which(strip):
        sys.exit(__doc__ if not files else f"strip_elf: {strip}: not found (binutils)")
    root = os.environ.get("MESON_INSTALL_DESTDIR_PREFIX", "")
    for f in files:
        try:
            strip_file(f if os.path.isabs(f) else os.path.join(root, f), strip, debug_dir)
        except StripError as e:
            sys.exit(f"strip_elf: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
