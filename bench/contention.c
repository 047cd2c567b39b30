/* SPDX-License-Identifier: MIT
 * Contention: T threads each make M hot calls (ncclGetVersion through the
 * shim). Prints the median over threads of ns per call in thread CPU time,
 * which does not grow with threads unless the hot path shares writes (the
 * wall time would, on a machine with fewer cores than threads). */
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long calls;
static pthread_barrier_t barrier;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *worker(void *arg)
{
    double *out = arg;
    int v;
    pthread_barrier_wait(&barrier);
    double t0 = cpu_now();
    for (long i = 0; i < calls; i++)
        ncclGetVersion(&v);
    *out = (cpu_now() - t0) / calls;
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    calls = argc > 2 ? atol(argv[2]) : 10000000L;
    int v;
    ncclGetVersion(&v); /* resolve first: this measures hot calls */
    pthread_t *t = calloc((size_t)n, sizeof *t);
    double *ns = calloc((size_t)n, sizeof *ns);
    pthread_barrier_init(&barrier, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, &ns[i]);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    qsort(ns, (size_t)n, sizeof *ns, cmp);
    printf("%.3f\n", ns[n / 2]);
    return 0;
}
