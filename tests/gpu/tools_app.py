# SPDX-License-Identifier: MIT
"""The program tests/gpu/tools.sh runs under NVIDIA's tools: CuPy's NCCL
version, a RawKernel doubling 1,024 floats (with "oob", each thread of one
more block writes past the end: a planted out-of-bounds write), and the real
NCCL files and the drop-ins mapped at the end ("app ..." lines)."""
import os
import sys

import cupy as cp
from cupy.cuda import nccl

SRC = r'''
extern "C" __global__ void k(float *x, int n, int oob) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + oob) x[i] = 2.0f * x[i];
}
'''


def real_nccl():
    drop = os.environ.get("LAZYNCCL_DROPIN_DIR", "\0")
    return sorted({line.split()[-1] for line in open("/proc/self/maps")
                   if "/libnccl.so" in line and not line.split()[-1].startswith(drop)})


def dropins():
    drop = os.environ.get("LAZYNCCL_DROPIN_DIR")
    return sum(1 for line in open("/proc/self/maps")
               if drop and line.split()[-1].startswith(drop) and "r-xp" in line)


def main():
    print("app nccl version", nccl.get_version(), flush=True)
    n = 1024
    oob = 256 if "oob" in sys.argv[1:] else 0
    x = cp.ones(n, dtype=cp.float32)
    cp.RawKernel(SRC, "k")((n // 256 + (1 if oob else 0),), (256,), (x, cp.int32(n), cp.int32(oob)))
    cp.cuda.runtime.deviceSynchronize()
    print("app sum", float(x.sum()), flush=True)
    print("app real nccl", " ".join(real_nccl()) or "-", flush=True)
    print("app drop-ins mapped", dropins(), flush=True)


if __name__ == "__main__":
    main()
