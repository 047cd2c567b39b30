/* SPDX-License-Identifier: MIT
 * AllReduce bus bandwidth, 8 B to 1 GiB, one process driving every GPU.
 * Sizes double from 8 B to 1 GiB. Built twice by run.sh: linked to liblazynccl, and linked -lnccl to the same
 * NCCL file, then run interleaved. Prints "bytes time_us busbw_GBps" lines. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAXR 8
#define CHECK(x) do { if ((x) != 0) { fprintf(stderr, "%s failed\n", #x); return 2; } } while (0)

/* Which NCCL files this run used (the drop-in run must show the wheel's). */
static void print_mapped(void)
{
    char line[4096], last[4096] = "";
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (path && strstr(path, "libnccl") && strcmp(path, last) != 0) {
            printf("# mapped %s", path);
            snprintf(last, sizeof last, "%s", path);
        }
    }
    if (f)
        fclose(f);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Diagnostics (docs/concepts/gpu.md): BW_DLOPEN=local|global dlopens $BW_NCCL with those
 * flags before the first call, BW_DLOPEN_WHEN=before|after CUDA's initialisation. */
static void preload(const char *when)
{
    const char *how = getenv("BW_DLOPEN"), *w = getenv("BW_DLOPEN_WHEN");
    if (!how || strcmp(w ? w : "before", when) != 0)
        return;
    int flags = RTLD_NOW | (strcmp(how, "global") == 0 ? RTLD_GLOBAL : RTLD_LOCAL);
    if (!dlopen(getenv("BW_NCCL"), flags))
        fprintf(stderr, "dlopen: %s\n", dlerror());
}

int main(void)
{
    int n = 0;
    preload("before");
    CHECK(cudaGetDeviceCount(&n));
    preload("after");
    n = n < MAXR ? n : MAXR;
    ncclComm_t comms[MAXR];
    cudaStream_t s[MAXR];
    float *buf[MAXR];
    const size_t maxbytes = (size_t)1 << 30;
    CHECK(ncclCommInitAll(comms, n, NULL));
    for (int i = 0; i < n; i++) {
        CHECK(cudaSetDevice(i));
        CHECK(cudaStreamCreate(&s[i]));
        CHECK(cudaMalloc((void **)&buf[i], maxbytes));
        CHECK(cudaMemset(buf[i], 0, maxbytes));
    }
    for (size_t bytes = 8; bytes <= maxbytes; bytes *= 2) {
        size_t count = bytes / sizeof(float);
        int iters = bytes >= ((size_t)64 << 20) ? 20 : bytes >= ((size_t)1 << 20) ? 200 : 1000;
        for (int rep = -5; rep < iters; rep++) {
            if (rep == 0) {
                for (int i = 0; i < n; i++) { cudaSetDevice(i); cudaStreamSynchronize(s[i]); }
            }
            static double t0;
            if (rep == 0)
                t0 = now();
            ncclGroupStart();
            for (int i = 0; i < n; i++)
                ncclAllReduce(buf[i], buf[i], count, ncclFloat, ncclSum, comms[i], s[i]);
            CHECK(ncclGroupEnd());
            if (rep == iters - 1) {
                for (int i = 0; i < n; i++) { cudaSetDevice(i); cudaStreamSynchronize(s[i]); }
                double t = (now() - t0) / iters;
                double busbw = bytes / t * 2.0 * (n - 1) / n / 1e9;
                printf("%zu %.3f %.6g\n", bytes, t * 1e6, busbw);
            }
        }
    }
    print_mapped();
    for (int i = 0; i < n; i++)
        ncclCommDestroy(comms[i]);
    return 0;
}
