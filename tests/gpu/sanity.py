# SPDX-License-Identifier: MIT
"""One process of PyTorch as shipped, on the GPU machine (tests/gpu/sanity.sh):
import torch, a 256x256 matmul, a one-rank NCCL all_reduce, and after each
step the files mapped whose path holds NCCL's or cuBLAS's name
(/proc/self/maps: what is loaded, not what a framework reports). Prints one
JSON object."""
import json
import os


def maps(word):
    seen = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and word in parts[-1] and parts[-1] not in seen:
                seen.append(parts[-1])
    return seen


out = {}
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

out["after_import_nccl"] = maps("libnccl")
out["after_import_cublas"] = maps("libcublas")
a = torch.randn(256, 256, device="cuda")
(a @ a).sum().item()
out["after_matmul_cublas"] = [p for p in maps("libcublas") if "dropin" not in p]
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1)
t = torch.ones(4, device="cuda")
dist.all_reduce(t)
out["allreduce"] = t.tolist()
out["nccl_version"] = ".".join(map(str, torch.cuda.nccl.version()))
out["after_collective_nccl"] = maps("libnccl")
dist.destroy_process_group()
print(json.dumps(out))
