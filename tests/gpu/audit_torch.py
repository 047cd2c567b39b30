# SPDX-License-Identifier: MIT
"""PyTorch as shipped under lazynccl-run with the audit module (issue 23;
tests/gpu/audit_torch.sh). Modes: import (what `import torch,
torch.distributed` maps), dist RANK WORLD (four collectives, then what the
rank maps), jit (torch.cuda.jiterator through NVRTC). One JSON line each."""
import json
import os
import sys
import time

BUNDLE = os.environ.get("LZ_BUNDLE", "/nonexistent")


def real_maps():
    out = {"nccl": set(), "nvrtc": set(), "nvjitlink": set()}
    n = 0
    with open("/proc/self/maps") as f:
        for line in f:
            n += 1
            p = line.split()[-1] if len(line.split()) >= 6 else ""
            if not p.startswith("/") or p.startswith(BUNDLE):
                continue
            name = os.path.basename(p)
            if name.startswith("libnccl.so"):
                out["nccl"].add(p)
            elif name.startswith("libnvrtc"):
                out["nvrtc"].add(p)
            elif name.startswith("libnvJitLink"):
                out["nvjitlink"].add(p)
    return {k: sorted(v) for k, v in out.items()}, n


def status():
    s = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmSize", "VmRSS"):
            s[k] = int(v.split()[0])
    return s


mode = sys.argv[1]
if mode == "import":
    t0 = time.perf_counter()
    import torch, torch.distributed  # noqa: E401,F401
    dt = time.perf_counter() - t0
    m, n = real_maps()
    print(json.dumps({"mode": mode, "import_s": dt, "maps": n, "real": m, **status()}))
elif mode == "dist":
    import torch
    import torch.distributed as dist
    rank, world = int(sys.argv[2]), int(sys.argv[3])
    torch.cuda.set_device(rank)
    before, _ = real_maps()
    dist.init_process_group("nccl", rank=rank, world_size=world, init_method="tcp://127.0.0.1:29533")
    x = torch.full((1024,), float(rank + 1), device="cuda")
    dist.all_reduce(x)
    ok = {"all_reduce": bool((x == sum(range(1, world + 1))).all())}
    g = [torch.empty(4, device="cuda") for _ in range(world)]
    dist.all_gather(g, torch.full((4,), float(rank), device="cuda"))
    ok["all_gather"] = all(bool((g[i] == i).all()) for i in range(world))
    b = torch.full((8,), float(rank), device="cuda")
    dist.broadcast(b, 0)
    ok["broadcast"] = bool((b == 0).all())
    out = torch.empty(4, device="cuda")
    dist.reduce_scatter(out, [torch.full((4,), float(rank + 1), device="cuda") for _ in range(world)])
    ok["reduce_scatter"] = bool((out == sum(range(1, world + 1))).all())
    torch.cuda.synchronize()
    after, _ = real_maps()
    dist.destroy_process_group()
    print(json.dumps({"mode": mode, "rank": rank, "ok": ok, "before_init": before, "after": after}))
elif mode == "jit":
    import torch
    before, _ = real_maps()
    f = torch.cuda.jiterator._create_jit_fn("template <typename T> T twice(T x) { return x + x; }")
    y = f(torch.arange(8.0, device="cuda"))
    after, _ = real_maps()
    print(json.dumps({"mode": mode, "ok": y.tolist() == [2.0 * i for i in range(8)],
                      "before": before, "after": after}))
