# SPDX-License-Identifier: MIT
"""The wheel step in a real venv (tests/gpu/run.sh, check 3b): a Python
process of PyTorch's venv imports one of the venv's C extensions that maps
no NCCL, then loads the bundle's shim (outside any site-packages) with
ctypes and makes its first call. The shim must find the venv's
nvidia/nccl/lib through the site-packages the extension's name passes
through (docs/reference/search-order.md, step 3). Prints one JSON object.
Usage: python wheel_of_loaded.py BUNDLE_DIR"""
import ctypes
import importlib
import json
import sys

bundle = sys.argv[1]
ext = None
for name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath",
             "markupsafe._speedups", "yaml._yaml", "psutil._psutil_linux"):
    try:
        mod = importlib.import_module(name)
        ext = getattr(mod, "__file__", name)
        break
    except Exception:
        continue
shim = ctypes.CDLL(f"{bundle}/liblazynccl.so.0")
for fn in ("lazynccl_loaded_path", "lazynccl_loaded_step", "lazynccl_last_error"):
    getattr(shim, fn).restype = ctypes.c_char_p
version = ctypes.c_int(0)
rc = shim.ncclGetVersion(ctypes.byref(version))


def text(fn):
    v = getattr(shim, fn)()
    return v.decode() if v else None


mapped = sorted({l.split()[-1] for l in open("/proc/self/maps") if "/libnccl.so" in l})
print(json.dumps({"extension": ext, "rc": rc, "version": version.value,
                  "step": text("lazynccl_loaded_step"), "path": text("lazynccl_loaded_path"),
                  "error": text("lazynccl_last_error"), "libnccl_mapped": mapped}))
