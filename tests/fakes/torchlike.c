/* SPDX-License-Identifier: MIT
 * A PyTorch-style consumer of NCCL: a shared object in a
 * wheel-like tree that needs libnccl.so.2 (DT_NEEDED) and finds it through a
 * DT_RPATH $ORIGIN/../../nvidia/nccl/lib, as libtorch_cuda.so does. */
int ncclGetVersion(int *version);

int torchlike_nccl_version(void)
{
    int v = -1;
    return ncclGetVersion(&v) == 0 ? v : -1;
}
