# SPDX-License-Identifier: MIT
"""What cuda.pathfinder reports for NCCL, plain and under lazynccl-run
(docs/concepts/the-same-job.md, "cuda.pathfinder"): its abs_path and found_via, then a
call through the handle it gives, and the real NCCL files mapped."""
import ctypes
import json
import os

import cuda.pathfinder as pf


def real():
    drop = os.environ.get("LAZYNCCL_DROPIN_DIR", "\0")
    return sorted({line.split()[-1] for line in open("/proc/self/maps")
                   if "/libnccl.so" in line and not line.split()[-1].startswith(drop)})


lib = pf.load_nvidia_dynamic_lib("nccl")
out = {"pathfinder": getattr(pf, "__version__", "?"), "abs_path": lib.abs_path,
       "found_via": getattr(lib, "found_via", None), "real_after_load": real()}
v = ctypes.c_int()
ctypes.CDLL(lib.abs_path).ncclGetVersion(ctypes.byref(v))
out.update(version=v.value, real_after_call=real())
print(json.dumps(out))
