/* SPDX-License-Identifier: MIT
 * Hot calls: N calls each of ncclGetVersion, nvJitLinkVersion and
 * ncclGetErrorString (a function the shim answers itself while the library
 * is absent) after a warm-up call, through whatever this program was linked
 * with (the shared shims, the static shims, or the real libraries). Prints
 * ns per call. */
#include <nccl.h>
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>

#include "measure.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000000L;
    int v;
    unsigned a, b;
    if (ncclGetVersion(&v) != ncclSuccess || nvJitLinkVersion(&a, &b) != NVJITLINK_SUCCESS)
        return 1;
    double t0 = now();
    for (long i = 0; i < n; i++)
        ncclGetVersion(&v);
    double t1 = now();
    for (long i = 0; i < n; i++)
        nvJitLinkVersion(&a, &b);
    double t2 = now();
    const char *volatile msg;
    for (long i = 0; i < n; i++)
        msg = ncclGetErrorString(ncclSuccess);
    double t3 = now();
    (void)msg;
    printf("%.3f %.3f %.3f\n", (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n);
    return 0;
}
