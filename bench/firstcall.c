/* SPDX-License-Identifier: MIT
 * First call of NCCL, NVRTC or nvJitLink (its version function).
 *   firstcall_shim LIB           the first call through the shared shim
 *   firstcall_shim LIB parts     <shim>_would_load() first (search + probe,
 *                                nothing loaded), then the call: two figures
 *   firstcall_dlopen LIB PATH    a bare dlopen + dlsym + call of PATH
 * LIB is nccl, nvrtc or nvjitlink. Prints ns (the call must succeed), then
 * the page faults the call took (on a virtual machine each costs
 * microseconds: they, not instructions, set the wall time). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef SHIM
#include <lazynccl.h>
#include <nccl.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#endif

static long faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#ifdef SHIM
static int call(const char *lib)
{
    int a = 0, b = 0;
    if (strcmp(lib, "nvrtc") == 0)
        return nvrtcVersion(&a, &b) == NVRTC_SUCCESS;
    if (strcmp(lib, "nvjitlink") == 0)
        return nvJitLinkVersion((unsigned *)&a, (unsigned *)&b) == NVJITLINK_SUCCESS;
    return ncclGetVersion(&a) == ncclSuccess;
}

static int would(const char *lib, char *path, size_t size)
{
    if (strcmp(lib, "nvrtc") == 0)
        return lazynvrtc_would_load(path, size);
    if (strcmp(lib, "nvjitlink") == 0)
        return lazynvjitlink_would_load(path, size);
    return lazynccl_would_load(path, size);
}
#endif

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *lib = argv[1];
#ifdef SHIM
    if (argc > 2 && strcmp(argv[2], "parts") == 0) {
        char path[4096];
        double t0 = now();
        int w = would(lib, path, sizeof path);
        double t1 = now();
        int ok = call(lib);
        double t2 = now();
        printf("%.0f %.0f %d\n", t1 - t0, t2 - t1, w);
        return !ok;
    }
    long f0 = faults();
    double t0 = now();
    int ok = call(lib);
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
