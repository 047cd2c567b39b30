/* SPDX-License-Identifier: MIT
 * Recipe: an ordinary NCCL program; only the link line changed. */
#include <lazynccl.h>
#include <nccl.h>
#include <stdio.h>

int main(void)
{
    int v = 0;
    printf("before=%d ", lazynccl_is_loaded());
    ncclResult_t rc = ncclGetVersion(&v);
    printf("rc=%d version=%d after=%d\n", (int)rc, v, lazynccl_is_loaded());
    return rc != ncclSuccess;
}
