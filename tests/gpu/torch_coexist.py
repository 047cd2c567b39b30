# SPDX-License-Identifier: MIT
"""PyTorch first initialises torch.distributed with NCCL (loading the wheel's
libnccl.so.2), then our shim is loaded through ctypes: it must reuse torch's
copy (one libnccl mapped, the same path reported by our API), and both work.
Usage: python3 torch_coexist.py BUNDLE_DIR. Prints one JSON object."""
import ctypes
import json
import os
import sys

import torch
import torch.distributed as dist


def nccl_maps():
    return sorted({l.split()[-1] for l in open("/proc/self/maps") if "/libnccl.so" in l})


os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29531")
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
t = torch.arange(8, device="cuda", dtype=torch.float32)
dist.all_reduce(t)
torch.cuda.synchronize()
out = {"torch": torch.__version__, "torch_nccl": ".".join(map(str, torch.cuda.nccl.version())),
       "maps_after_torch": nccl_maps()}

shim = ctypes.CDLL(os.path.join(sys.argv[1], "liblazynccl.so"))
shim.lazynccl_loaded_path.restype = ctypes.c_char_p
shim.lazynccl_loaded_step.restype = ctypes.c_char_p
v = ctypes.c_int()
out["shim_rc"] = shim.ncclGetVersion(ctypes.byref(v))
out["shim_version"] = v.value
uid = ctypes.create_string_buffer(128)
out["shim_unique_id_rc"] = shim.ncclGetUniqueId(uid)
out["shim_loaded_path"] = shim.lazynccl_loaded_path().decode()
out["shim_loaded_step"] = shim.lazynccl_loaded_step().decode()
out["maps_after_shim"] = nccl_maps()
t2 = torch.ones(4, device="cuda")
dist.all_reduce(t2)
torch.cuda.synchronize()
out["torch_after_shim_ok"] = bool(t2.sum().item() == 4.0) and bool(t[3].item() == 3.0)
out["same_file"] = (len(out["maps_after_shim"]) == 1 and
                    os.path.realpath(out["shim_loaded_path"]) == out["maps_after_shim"][0])
dist.destroy_process_group()
print(json.dumps(out))
