# SPDX-License-Identifier: MIT
"""One row of tests/gpu/cudnn_release.sh: load LIB (cuDNN itself, or the
lazycudnn shim) as a ctypes consumer does, call cudnnGetVersion, then
cudnnCreate and cudnnDestroy, and print as JSON the cuDNN files mapped
after each (/proc/self/maps)."""
import ctypes
import json
import sys


def mapped():
    files = set()
    for line in open("/proc/self/maps"):
        path = line.split(None, 5)[5].strip() if len(line.split(None, 5)) == 6 else ""
        if "/libcudnn" in path:
            files.add(path)
    return sorted(files)


lib = ctypes.CDLL(sys.argv[1])
row = {"version": lib.cudnnGetVersion(), "after_version": mapped()}
handle = ctypes.c_void_p()
row["create"] = lib.cudnnCreate(ctypes.byref(handle))
row["after_create"] = mapped()
row["destroy"] = lib.cudnnDestroy(handle)
print(json.dumps(row))
