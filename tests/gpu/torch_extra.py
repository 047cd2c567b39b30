# SPDX-License-Identifier: MIT
"""On the GPU machine, under lazynccl-run (tests/gpu/torch_extra.sh):
cuSPARSELt, NVSHMEM and cuFile, served from symbol lists, stay unmapped at
`import torch`; each of a sparse semi-structured matmul, an NVSHMEM-backed
symmetric-memory allocation and a cuFile-backed save maps its own library
only, one copy. Mode: import | sparse | nvshmem RANK WORLD | gds. One JSON
line."""
import json
import os
import sys

BUNDLE = os.environ.get("LZ_BUNDLE", "/nonexistent")
WATCH = {"cusparselt": "libcusparseLt.so", "nvshmem": "libnvshmem_host.so", "cufile": "libcufile.so"}


def mapped():
    """The real files of the three libraries mapped now (the bundle's
    drop-ins left out), each path once."""
    out = {k: set() for k in WATCH}
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1] if len(line.split()) >= 6 else ""
            if not p.startswith("/") or p.startswith(BUNDLE):
                continue
            for k, stem in WATCH.items():
                if os.path.basename(p).startswith(stem):
                    out[k].add(p)
    return {k: sorted(v) for k, v in out.items()}


mode = sys.argv[1]
result = {"mode": mode}
import torch  # noqa: E402
result["after_import"] = mapped()
try:
    if mode == "sparse":
        from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured
        SparseSemiStructuredTensor._FORCE_CUTLASS = False  # cuSPARSELt
        a = torch.tensor([0, 0, 1, 1], dtype=torch.float16, device="cuda").tile((128, 32))
        b = torch.rand(128, 128, dtype=torch.float16, device="cuda")
        s = to_sparse_semi_structured(a)
        result["ok"] = bool(torch.allclose(s @ b, a @ b, rtol=1e-2, atol=1e-2))
    elif mode == "nvshmem":  # nvshmem RANK WORLD: symmetric memory needs two ranks or more
        import torch.distributed as dist
        import torch.distributed._symmetric_memory as symm_mem
        rank, world = int(sys.argv[2]), int(sys.argv[3])
        result["rank"] = rank
        torch.cuda.set_device(rank)
        dist.init_process_group("nccl", rank=rank, world_size=world,
                                init_method="tcp://127.0.0.1:29547")
        symm_mem.set_backend("NVSHMEM")
        t = symm_mem.empty(1024, device="cuda")
        h = symm_mem.rendezvous(t, dist.group.WORLD.group_name)
        t.fill_(rank + 1)
        h.barrier()
        peer = h.get_buffer((rank + 1) % world, (1024,), torch.float32)
        result["ok"] = float(peer.sum()) == 1024.0 * ((rank + 1) % world + 1)
        h.barrier()
        dist.destroy_process_group()
    elif mode == "gds":
        import torch.cuda.gds as gds
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "lz_gds.bin")
        x = torch.arange(4096, dtype=torch.float32, device="cuda")
        with open(path, "wb") as f:
            f.write(b"\0" * x.nbytes)
        g = gds.GdsFile(path, os.O_RDWR)
        g.save_storage(x.untyped_storage(), offset=0)
        y = torch.empty_like(x)
        g.load_storage(y.untyped_storage(), offset=0)
        result["ok"] = bool(torch.equal(x, y))
except Exception as e:  # what the library said, for the record
    result["error"] = f"{type(e).__name__}: {e}"[:400]
result["after"] = mapped()
print(json.dumps(result))
