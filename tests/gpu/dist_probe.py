# SPDX-License-Identifier: MIT
"""One rank of a torchrun job (tests/gpu/torchrun.sh): what it maps, step by
step, and whether its results are exact. Prints one JSON object per rank.
  torchrun --nproc-per-node N dist_probe.py collectives|symm
collectives: all_reduce, all_gather, reduce_scatter_tensor, checked exactly;
symm: PyTorch's symmetric memory on NVSHMEM (set_backend("NVSHMEM"),
symm_mem.empty, rendezvous, a peer's buffer read back, one_shot_all_reduce).
Real files only: a drop-in (a path through a dropin/ directory) is not one."""
import json
import os
import sys

NVIDIA = ("libcu", "libnv", "libnccl", "libcufft", "libcurand", "libcusparse", "libcusolver")


def real_mapped():
    """The NVIDIA libraries mapped, by family (basename up to .so), drop-ins aside."""
    found = {}
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 6 or "/dropin/" in parts[5]:
                continue
            path = parts[5]
            base = os.path.basename(path)
            if base.startswith(NVIDIA) and ".so" in base and not base.startswith("libc.so"):
                found.setdefault(base.split(".so")[0], set()).add(path)
    return {k: sorted(v) for k, v in sorted(found.items())}


def copies(family):
    return real_mapped().get(family, [])


def main(mode):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    out = {"rank": rank, "world": world, "pid": os.getpid(),
           "comm": open("/proc/self/comm").read().strip(), "ld_audit": "LD_AUDIT" in os.environ}
    import torch
    import torch.distributed as dist
    out["after_import_torch"] = real_mapped()
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    out["nccl_after_init"] = copies("libnccl")
    ok = {}
    try:
        if mode == "collectives":
            x = torch.arange(1 << 20, dtype=torch.float32, device="cuda") * (rank + 1)
            dist.all_reduce(x)
            s = sum(range(1, world + 1))
            ok["all_reduce"] = bool(torch.equal(x, torch.arange(1 << 20, dtype=torch.float32, device="cuda") * s))
            y = [torch.empty(1000, dtype=torch.int64, device="cuda") for _ in range(world)]
            dist.all_gather(y, torch.full((1000,), rank * 7 + 3, dtype=torch.int64, device="cuda"))
            ok["all_gather"] = all(bool((y[r] == r * 7 + 3).all()) for r in range(world))
            inp = torch.arange(world * 4096, dtype=torch.float64, device="cuda") * (rank + 1)
            res = torch.empty(4096, dtype=torch.float64, device="cuda")
            dist.reduce_scatter_tensor(res, inp)
            want = torch.arange(rank * 4096, rank * 4096 + 4096, dtype=torch.float64, device="cuda") * s
            ok["reduce_scatter"] = bool(torch.equal(res, want))
            out["nccl_version"] = ".".join(map(str, torch.cuda.nccl.version()))
        else:
            import torch.distributed._symmetric_memory as symm_mem
            out["nvshmem_before"] = copies("libnvshmem_host")
            symm_mem.set_backend("NVSHMEM")
            out["nvshmem_available"] = bool(symm_mem.is_nvshmem_available())
            t = symm_mem.empty(4096, dtype=torch.float32, device=torch.device("cuda", local))
            hdl = symm_mem.rendezvous(t, dist.group.WORLD)
            out["nvshmem_after_rendezvous"] = copies("libnvshmem_host")
            peer = (rank + 1) % world
            t.fill_(rank + 1)
            torch.cuda.synchronize()  # the fill done before the peer may read it
            hdl.barrier(channel=0)
            dist.barrier()  # and seen done by the host of every rank (the device barrier alone
            torch.cuda.synchronize()  # let rank 1 read rank 0's buffer early on 2 x H200)
            pulled = hdl.get_buffer(peer, t.shape, t.dtype).clone()
            torch.cuda.synchronize()
            hdl.barrier(channel=0)
            ok["peer_buffer"] = bool((pulled == peer + 1).all())
            try:
                r = torch.ops.symm_mem.one_shot_all_reduce(t, "sum", dist.group.WORLD.group_name)
                torch.cuda.synchronize()
                ok["one_shot_all_reduce"] = bool((r == sum(range(1, world + 1))).all())
            except Exception as e:  # noqa: BLE001 (an op this build lacks: said, not hidden)
                out["one_shot_all_reduce_error"] = f"{type(e).__name__}: {e}"[:300]
            out["nvshmem_after"] = copies("libnvshmem_host")
    except Exception as e:  # noqa: BLE001
        out["error"] = f"{type(e).__name__}: {e}"[:600]
    out["exact"] = ok
    out["nccl_end"] = copies("libnccl")
    out["nvshmem_end"] = copies("libnvshmem_host")
    dist.barrier()
    dist.destroy_process_group()
    # one write: the ranks share the pipe, and a line under PIPE_BUF is
    # never interleaved with another's
    os.write(1, (json.dumps(out) + "\n").encode())


if __name__ == "__main__":
    main(sys.argv[1])
