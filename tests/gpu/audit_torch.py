# SPDX-License-Identifier: MIT
"""PyTorch and CuPy as shipped under lazynccl-run with the audit module
(tests/gpu/audit_torch.sh). Modes: import (what `import torch,
torch.distributed` maps), dist RANK WORLD (four collectives, then what the
rank maps), absent RANK WORLD (GPU tensors, then init_process_group, which
must fail with the report), bw RANK WORLD (all_reduce bus bandwidth at 64
MiB-1 GiB), jit (torch.cuda.jiterator through NVRTC), cupy (cupy.cuda.nccl
and a RawKernel). One JSON line each."""
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
    st = None
    try:  # the wheel's Python API, when installed
        import lazynccl
        s = lazynccl.status("nccl")
        st = {"loaded": s.loaded, "path": s.path, "version": s.version, "step": s.step,
              "found_via": s.found_via, "asked_path": s.asked_path}
    except ImportError:
        pass
    print(json.dumps({"mode": mode, "rank": rank, "ok": ok, "before_init": before, "after": after,
                      "lazynccl_status": st}))
elif mode == "jit":
    import torch
    before, _ = real_maps()
    f = torch.cuda.jiterator._create_jit_fn("template <typename T> T twice(T x) { return x + x; }")
    y = f(torch.arange(8.0, device="cuda"))
    after, _ = real_maps()
    print(json.dumps({"mode": mode, "ok": y.tolist() == [2.0 * i for i in range(8)],
                      "before": before, "after": after}))
elif mode == "absent":
    import torch
    import torch.distributed as dist
    rank, world = int(sys.argv[2]), int(sys.argv[3])
    torch.cuda.set_device(rank)
    y = (torch.arange(4.0, device="cuda") * 2).tolist()
    try:
        import datetime
        dist.init_process_group("nccl", rank=rank, world_size=world,
                                init_method="tcp://127.0.0.1:29534",
                                timeout=datetime.timedelta(seconds=30))
        x = torch.ones(4, device="cuda")
        dist.all_reduce(x)
        torch.cuda.synchronize()
        err = None
    except Exception as e:  # noqa: BLE001
        err = str(e)
    m, _ = real_maps()
    print(json.dumps({"mode": mode, "rank": rank, "tensor": y, "error": err, "real": m}))
    os._exit(0)
elif mode == "bw":
    import torch
    import torch.distributed as dist
    rank, world = int(sys.argv[2]), int(sys.argv[3])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, init_method="tcp://127.0.0.1:29535")
    res = {}
    for mib in (64, 256, 1024):
        x = torch.ones(mib * 1024 * 1024 // 4, device="cuda")
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            dist.all_reduce(x)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        times.sort()
        med = times[len(times) // 2]
        res[mib] = 2 * (world - 1) / world * x.numel() * 4 / med / 1e9
    after, _ = real_maps()
    dist.destroy_process_group()
    print(json.dumps({"mode": mode, "rank": rank, "busbw_GBps": res, "real": after}))
elif mode == "cupy":
    import cupy
    from cupy.cuda import nccl
    m0, _ = real_maps()
    v = nccl.get_version()
    uid = nccl.get_unique_id()
    comm = nccl.NcclCommunicator(1, uid, 0)
    a = cupy.ones(16, dtype=cupy.float32)
    comm.allReduce(a.data.ptr, a.data.ptr, 16, nccl.NCCL_FLOAT32, nccl.NCCL_SUM,
                   cupy.cuda.Stream.null.ptr)
    cupy.cuda.Stream.null.synchronize()
    m1, _ = real_maps()
    k = cupy.RawKernel(r'extern "C" __global__ void k(float *x) { x[threadIdx.x] *= 3.0f; }', "k")
    b = cupy.ones(8, dtype=cupy.float32)
    k((1,), (8,), (b,))
    m2, _ = real_maps()
    print(json.dumps({"mode": mode, "version": v, "allreduce": a.get().tolist()[:2],
                      "rawkernel": b.get().tolist()[:2], "after_import": m0, "after_nccl": m1,
                      "after_kernel": m2}))
