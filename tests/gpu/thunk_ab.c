/* SPDX-License-Identifier: MIT
 * The shim's cost on a collective, measured inside one process, where the
 * run-to-run spread of NCCL's latency (tens of percent between processes at
 * 8 B and 1 MiB: docs/concepts/gpu.md) cannot enter: one communicator per GPU, and
 * AllReduce batches alternating between the ncclAllReduce the program
 * binds to ("A": the shim's thunk, or a drop-in's under lazynccl-run) and
 * the real library's own ncclAllReduce ("B", dlsym in the file the shim
 * loaded). Linked -lnccl and run plain, A and B are the same function: the
 * method's own noise floor.
 *   thunk_ab [ROUNDS] [BATCH]  prints, per size, the median time per
 *   AllReduce of A and B, their ratio B/A (>1: A faster) and the range of
 *   the per-round ratios. */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXG 8
#define CHECK(x) do { if ((x) != 0) { fprintf(stderr, "%s failed\n", #x); return 2; } } while (0)

typedef ncclResult_t (*allreduce_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                     ncclComm_t, cudaStream_t);

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int ng;
static ncclComm_t comms[MAXG];
static cudaStream_t streams[MAXG];
static void *bufs[MAXG];

/* One batch of n AllReduces of count floats through f: microseconds each. */
static double batch(allreduce_fn f, size_t count, int n)
{
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        ncclGroupStart();
        for (int g = 0; g < ng; g++)
            f(bufs[g], bufs[g], count, ncclFloat, ncclSum, comms[g], streams[g]);
        ncclGroupEnd();
    }
    for (int g = 0; g < ng; g++) {
        cudaSetDevice(g);
        cudaStreamSynchronize(streams[g]);
    }
    return (now_us() - t0) / n;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200, n = argc > 2 ? atoi(argv[2]) : 50;
    CHECK(cudaGetDeviceCount(&ng));
    if (ng > MAXG)
        ng = MAXG;
    int devs[MAXG];
    for (int g = 0; g < ng; g++)
        devs[g] = g;
    CHECK(ncclCommInitAll(comms, ng, devs));
    allreduce_fn a = (allreduce_fn)dlsym(RTLD_DEFAULT, "ncclAllReduce");
    const char *(*loaded)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "lazynccl_loaded_path");
    const char *path = loaded ? loaded() : NULL;
    void *real_lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    allreduce_fn b = real_lib ? (allreduce_fn)dlsym(real_lib, "ncclAllReduce") : a;
    Dl_info ia, ib;
    dladdr((void *)a, &ia);
    dladdr((void *)b, &ib);
    printf("# %d GPU(s); A: ncclAllReduce in %s; B: in %s%s\n", ng, ia.dli_fname, ib.dli_fname,
           a == b ? " (the same function: the method's noise floor)" : "");
    size_t sizes[] = {8, 1 << 20};
    for (int g = 0; g < ng; g++) {
        cudaSetDevice(g);
        CHECK(cudaStreamCreate(&streams[g]));
        CHECK(cudaMalloc(&bufs[g], 1 << 20));
    }
    double *ta = malloc(sizeof(double) * (size_t)rounds), *tb = malloc(sizeof(double) * (size_t)rounds);
    double *r = malloc(sizeof(double) * (size_t)rounds);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t count = sizes[s] / sizeof(float);
        batch(a, count, n); /* warm-up, both */
        batch(b, count, n);
        for (int i = 0; i < rounds; i++) {
            if (i % 2) {
                ta[i] = batch(a, count, n);
                tb[i] = batch(b, count, n);
            } else {
                tb[i] = batch(b, count, n);
                ta[i] = batch(a, count, n);
            }
            r[i] = tb[i] / ta[i];
        }
        double ma = median(ta, rounds), mb = median(tb, rounds), mr = median(r, rounds);
        printf("bytes %zu: A %.3f us, B %.3f us, B/A of medians %.4f, median of per-round B/A %.4f "
               "(%.3f..%.3f)\n", sizes[s], ma, mb, mb / ma, mr, r[0], r[rounds - 1]);
    }
    for (int g = 0; g < ng; g++)
        ncclCommDestroy(comms[g]);
    return 0;
}
