# SPDX-License-Identifier: MIT
"""On the GPU machine: one PyTorch workload in a fresh process;
prints one JSON line: the real NVIDIA libraries mapped after import and
after the workload (real files from /proc/self/maps, drop-ins left out),
the result, import time, VmSize and VmRSS after import.

    python stack_probe.py WORKLOAD     (tests/gpu/stack.sh runs each)
"""
import json
import os
import sys
import time

DROPINS = os.environ.get("LAZYNCCL_DROPIN_DIR", "/nonexistent")
NVIDIA = ("libcublas", "libcublasLt", "libcudart", "libcudnn", "libcufft", "libcufile", "libcupti",
          "libcurand", "libcusolver", "libcusparse", "libcusparseLt", "libnccl", "libnvJitLink",
          "libnvrtc", "libnvshmem", "libcuda.so")


def mapped():
    """{library file name: [real paths]}: every NVIDIA library mapped."""
    out = {}
    for line in open("/proc/self/maps"):
        parts = line.split()
        if len(parts) < 6 or not parts[5].startswith("/"):
            continue
        path = parts[5]
        if path.startswith(DROPINS) or os.path.dirname(path) == os.path.realpath(DROPINS):
            continue
        name = os.path.basename(path)
        if name.startswith(NVIDIA):
            out.setdefault(name, set()).add(os.path.realpath(path))
    return {k: sorted(v) for k, v in sorted(out.items())}


def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])
    return 0


def workload(torch, name):
    dev = "cuda"
    g = torch.Generator(device="cpu").manual_seed(0)
    if name == "import":
        return None
    if name == "tensor":
        return float((torch.arange(1000, device=dev, dtype=torch.float32) * 2).sum().item())
    if name == "matmul":
        a = torch.randn(256, 256, generator=g).to(dev)
        return round(float((a @ a).double().sum().item()), 2)
    if name == "conv2d":
        x = torch.randn(2, 3, 32, 32, generator=g).to(dev)
        w = torch.randn(8, 3, 3, 3, generator=g).to(dev)
        return round(float(torch.nn.functional.conv2d(x, w).double().sum().item()), 2)
    if name == "fft":
        x = torch.randn(1024, generator=g).to(dev)
        return round(float(torch.fft.fft(x).abs().double().sum().item()), 2)
    if name == "cholesky":
        a = torch.randn(64, 64, generator=g, dtype=torch.float64)
        spd = (a @ a.T + 64 * torch.eye(64, dtype=torch.float64)).to(dev)
        return round(float(torch.linalg.cholesky(spd).sum().item()), 6)
    if name == "sparse":
        d = torch.randn(64, 64, generator=g)
        d[d.abs() < 1] = 0
        s = d.to(dev).to_sparse_csr()
        v = torch.randn(64, 8, generator=g).to(dev)
        return round(float((s @ v).double().sum().item()), 4)
    if name == "profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            (torch.ones(100, device=dev) * 3).sum().item()
        return sum(1 for e in p.events() if e.device_type.name == "CUDA") > 0
    if name == "jiterator":
        fn = torch.cuda.jiterator._create_jit_fn("template <typename T> T twice(T x) { return 2 * x; }")
        return float(fn(torch.ones(10, device=dev)).sum().item())
    raise SystemExit(f"unknown workload {name}")


def main():
    name = sys.argv[1]
    t0 = time.perf_counter()
    import torch
    t1 = time.perf_counter()
    at_import = mapped()
    vm, rss = status("VmSize:"), status("VmRSS:")
    result = workload(torch, name)
    torch.cuda.synchronize() if name != "import" else None
    print(json.dumps({"workload": name, "import_s": round(t1 - t0, 3), "vmsize_kb": vm,
                      "rss_kb": rss, "at_import": at_import, "after": mapped(), "result": result}))


if __name__ == "__main__":
    main()
