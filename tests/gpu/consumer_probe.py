# SPDX-License-Identifier: MIT
"""What a framework maps, step by step (tests/gpu/consumers.sh).
Prints one JSON object per line. Modes: import, dist, absent, cupy, cupy-rtc."""
import json
import os
import sys
import time


def maps():
    nccl, total = set(), 0
    with open("/proc/self/maps") as f:
        for line in f:
            total += 1
            parts = line.split()
            if len(parts) >= 6 and "/libnccl.so" in parts[5]:
                nccl.add(parts[5])
    return sorted(nccl), total


def smaps():
    """VmSize, RSS, PSS of the process and of the real libnccl mappings (kB)."""
    out = {"nccl_size": 0, "nccl_rss": 0, "nccl_pss": 0}
    cur = None
    with open("/proc/self/smaps") as f:
        for line in f:
            parts = line.split()
            if "-" in parts[0] and len(parts) >= 5 and ":" not in parts[0]:
                cur = parts[5] if len(parts) >= 6 else ""
            elif cur and "/libnccl.so" in cur and "/dropin/" not in cur and parts[0] in ("Size:", "Rss:", "Pss:"):
                out["nccl_" + parts[0][:-1].lower()] += int(parts[1])
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmSize:", "VmRSS:")):
                out[line.split(":")[0]] = int(line.split()[1])
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                out["Pss"] = int(line.split()[1])
    return out


def step(name, **extra):
    nccl, total = maps()
    print(json.dumps(dict(step=name, pid=os.getpid(), libnccl=nccl, mappings=total, **smaps(), **extra)),
          flush=True)


def run_import():
    t0 = time.perf_counter()
    import torch  # noqa: F401
    import torch.distributed  # noqa: F401
    step("import torch, torch.distributed", seconds=round(time.perf_counter() - t0, 3))


def worker(rank, world):
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533")
    torch.cuda.set_device(rank)
    step(f"rank {rank} before init_process_group")
    dist.init_process_group("nccl", rank=rank, world_size=world)
    step(f"rank {rank} after init_process_group")
    ok = {}
    x = torch.full((1 << 20,), float(rank + 1), device="cuda")
    dist.all_reduce(x)
    ok["all_reduce"] = bool((x == sum(range(1, world + 1))).all())
    step(f"rank {rank} after first collective")
    y = [torch.empty(4, device="cuda") for _ in range(world)]
    dist.all_gather(y, torch.full((4,), float(rank), device="cuda"))
    ok["all_gather"] = all(bool((y[r] == r).all()) for r in range(world))
    b = torch.full((8,), float(rank + 7), device="cuda")
    dist.broadcast(b, src=0)
    ok["broadcast"] = bool((b == 7).all())
    inp = torch.arange(world * 4, dtype=torch.float32, device="cuda") * (rank + 1)
    out = torch.empty(4, device="cuda")
    dist.reduce_scatter_tensor(out, inp)
    want = torch.arange(rank * 4, rank * 4 + 4, dtype=torch.float32, device="cuda") * sum(range(1, world + 1))
    ok["reduce_scatter"] = bool((out == want).all())
    step(f"rank {rank} done", exact=ok, nccl_version=".".join(map(str, torch.cuda.nccl.version())))
    dist.destroy_process_group()


def run_dist():
    import torch
    import torch.multiprocessing as mp
    step("parent after import torch")
    mp.spawn(worker, args=(torch.cuda.device_count(),), nprocs=torch.cuda.device_count())


def run_absent():
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        step("import torch failed", error=str(e)[:300])
        return
    x = torch.ones(1000, device="cuda")
    step("import torch ok; GPU tensor", sum=float(x.sum()))
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29534")
    try:
        dist.init_process_group("nccl", rank=0, world_size=1)
        dist.all_reduce(torch.ones(1, device="cuda"))
        step("init_process_group unexpectedly worked")
    except Exception as e:  # noqa: BLE001
        step("init_process_group failed", error=str(e)[:600])


def run_cupy():
    import cupy
    step("import cupy")
    from cupy.cuda import nccl
    step("from cupy.cuda import nccl")
    v = nccl.get_version()
    step("nccl.get_version()", version=v)
    comms = nccl.NcclCommunicator.initAll([0, 1])
    bufs = []
    nccl.groupStart()
    for i, c in enumerate(comms):
        with cupy.cuda.Device(i):
            a = cupy.full(1 << 20, i + 1, dtype=cupy.float32)
            bufs.append(a)
            c.allReduce(a.data.ptr, a.data.ptr, a.size, nccl.NCCL_FLOAT32, nccl.NCCL_SUM,
                        cupy.cuda.Stream.null.ptr)
    nccl.groupEnd()
    exact = []
    for i, a in enumerate(bufs):
        with cupy.cuda.Device(i):
            cupy.cuda.Stream.null.synchronize()
            exact.append(bool((a == 3).all()))
    step("initAll([0,1]) allReduce", exact=exact)


def run_cupy_rtc():
    import cupy
    step("import cupy")
    k = cupy.RawKernel(r'extern "C" __global__ void twice(float *x) { x[threadIdx.x] *= 2; }', "twice")
    x = cupy.arange(32, dtype=cupy.float32)
    k((1,), (32,), (x,))
    rtc = sorted({l.split()[5] for l in open("/proc/self/maps") if len(l.split()) >= 6 and "nvrtc" in l.split()[5]})
    step("RawKernel compiled and ran", exact=bool((x == cupy.arange(32) * 2).all()), nvrtc=rtc)


if __name__ == "__main__":  # spawned workers import this module again
    {"import": run_import, "dist": run_dist, "absent": run_absent, "cupy": run_cupy,
     "cupy-rtc": run_cupy_rtc}[sys.argv[1]]()
