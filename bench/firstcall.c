/* SPDX-License-Identifier: MIT
 * First call: "shim" times the first ncclGetVersion through liblazynccl (and,
 * with "parts", lazynccl_would_load() first: search + probe, no load);
 * "dlopen PATH" times a bare dlopen + dlsym + call of the same file.
 * Prints ns. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef SHIM
#include <lazynccl.h>
#include <nccl.h>
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int v = 0;
#ifdef SHIM
    if (argc > 1 && strcmp(argv[1], "parts") == 0) {
        char path[4096];
        double t0 = now();
        int would = lazynccl_would_load(path, sizeof path);
        double t1 = now();
        ncclGetVersion(&v);
        double t2 = now();
        printf("%.0f %.0f %d\n", t1 - t0, t2 - t1, would);
        return 0;
    }
    double t0 = now();
    ncclResult_t r = ncclGetVersion(&v);
    printf("%.0f\n", now() - t0);
    return r != ncclSuccess;
#else
    if (argc < 2)
        return 2;
    double t0 = now();
    void *h = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    int (*f)(int *) = h ? (int (*)(int *))dlsym(h, "ncclGetVersion") : NULL;
    int r = f ? f(&v) : -1;
    printf("%.0f\n", now() - t0);
    return r != 0;
#endif
}
