# SPDX-License-Identifier: MIT
"""The callgrind command bench/run and bench/walk count instructions with.

Debian's /usr/bin/valgrind is a shell script that appends /usr/lib/debug to
LD_LIBRARY_PATH before it runs valgrind.bin: a first call profiled through
it walks an LD_LIBRARY_PATH the plain process does not have (the linker
step's directory probes counted in). valgrind.bin, where it exists, runs the
program in the environment it was given."""
import shutil

VALGRIND = shutil.which("valgrind.bin") or shutil.which("valgrind")


def command(out, *options):
    """The command line that profiles a program into out (callgrind's file)."""
    return [VALGRIND, "--tool=callgrind", f"--callgrind-out-file={out}", *options]
