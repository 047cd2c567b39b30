/* SPDX-License-Identifier: MIT
 * First call of NCCL, NVRTC or nvJitLink (its version function).
 *   firstcall_LIB LIB            the first call through LIB's shared shim
 *   firstcall_LIB LIB parts      <shim>_would_load() first (search + probe,
 *                                nothing loaded), then the call: two figures
 *   firstcall_dlopen LIB PATH    a bare dlopen + dlsym + call of PATH
 * LIB is nccl, nvrtc or nvjitlink. firstcall_LIB is linked to that one shim,
 * as a program using one of the libraries is: every object in the global
 * scope is searched by each of the real library's symbol lookups inside its
 * own dlopen, so a program linked to all three shims would time two more
 * hash tables per lookup that a bare program does not have (about 0.25M
 * instructions for NCCL). Prints ns (the call must succeed), then
 * the page faults the call took (on a virtual machine each costs
 * microseconds: they, not instructions, set the wall time). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "measure.h"

#ifdef SHIM
#include <lazynccl.h>
#if SHIM == 1
#include <nccl.h>
#elif SHIM == 2
#include <nvrtc.h>
#else
#include <nvJitLink.h>
#endif
#endif

#ifdef SHIM
#if SHIM == 1
#define LIB_NAME "nccl"
static int call(void)
{
    int v = 0;
    return ncclGetVersion(&v) == ncclSuccess;
}
#define WOULD lazynccl_would_load
#elif SHIM == 2
#define LIB_NAME "nvrtc"
static int call(void)
{
    int a = 0, b = 0;
    return nvrtcVersion(&a, &b) == NVRTC_SUCCESS;
}
#define WOULD lazynvrtc_would_load
#else
#define LIB_NAME "nvjitlink"
static int call(void)
{
    unsigned a = 0, b = 0;
    return nvJitLinkVersion(&a, &b) == NVJITLINK_SUCCESS;
}
#define WOULD lazynvjitlink_would_load
#endif
#endif

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *lib = argv[1];
#ifdef SHIM
    if (strcmp(lib, LIB_NAME) != 0)
        return 2;
    if (argc > 2 && strcmp(argv[2], "parts") == 0) {
        char path[4096];
        double t0 = now();
        int w = WOULD(path, sizeof path);
        double t1 = now();
        int ok = call();
        double t2 = now();
        printf("%.0f %.0f %d\n", t1 - t0, t2 - t1, w);
        return !ok;
    }
    long f0 = faults();
    double t0 = now();
    int ok = call();
    double t1 = now();
    printf("%.0f %ld\n", t1 - t0, faults() - f0);
    return !ok;
#else
    if (argc < 3)
        return 2;
    int a = 0, b = 0;
    long f0 = faults();
    double t0 = now();
    void *h = dlopen(argv[2], RTLD_LAZY | RTLD_LOCAL);
    int r = -1;
    if (h && strcmp(lib, "nccl") == 0) {
        int (*f)(int *) = (int (*)(int *))dlsym(h, "ncclGetVersion");
        r = f ? f(&a) : -1;
    } else if (h) {
        int (*f)(int *, int *) =
            (int (*)(int *, int *))dlsym(h, strcmp(lib, "nvrtc") == 0 ? "nvrtcVersion" : "nvJitLinkVersion");
        r = f ? f(&a, &b) : -1;
    }
    double t1 = now();
    printf("%.0f %ld\n", t1 - t0, faults() - f0);
    return r != 0;
#endif
}
