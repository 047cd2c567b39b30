# SPDX-License-Identifier: MIT
"""The console script lazynccl-info, and python -m lazynccl (lazynccl-run is
a native program of its own)."""

import ctypes
import os
import sys

from . import package_dir


def run(argv=None) -> int:
    """python -m lazynccl run: the native lazynccl-run beside the package's
    drop-ins (the wheel installs it as the lazynccl-run command too)."""
    argv = sys.argv[1:] if argv is None else argv
    launcher = os.path.join(package_dir(), "lazynccl-run")
    os.execv(launcher, [launcher] + list(argv))
    return 2  # not reached


def info(argv=None) -> int:
    """lazynccl-info: the tool, built as a shared object in the wheel (no
    executable's C start-up to pin a newer glibc), called in this process."""
    argv = sys.argv[1:] if argv is None else argv
    lib = ctypes.CDLL(os.path.join(package_dir(), "liblazynccl-info.so"), mode=os.RTLD_LOCAL)
    args = [b"lazynccl-info"] + [os.fsencode(a) for a in argv]
    arr = (ctypes.c_char_p * (len(args) + 1))(*args, None)
    sys.stdout.flush()
    rc = lib.lazynccl_info_main(len(args), arr)
    ctypes.CDLL(None).fflush(None)
    return rc


def info_main() -> None:
    sys.exit(info())
