/* SPDX-License-Identifier: MIT
 * One NCCL client for every way of linking it (bench/versus builds it at
 * -O2 against the real library, Implib.so's stubs, and lazynccl's shared
 * and static shims; docs/concepts/performance.md, "Beside Implib.so").
 *   versus start               nothing: start-up of the program as linked
 *   versus hot N               ns per call: ncclGetVersion, then
 *                              ncclGetErrorString(ncclSuccess), N calls each
 *                              after a first call; then ns of that first
 *                              ncclGetErrorString, made after the load
 *                              (its binding included)
 *   versus first               the first ncclGetVersion: ns, page faults
 *   versus threads N           N threads make their first call at once;
 *                              prints "ok V" when every thread got version V
 *   versus absent              one call with the library absent: prints the
 *                              result code (a stub that aborts never prints)
 *   versus bare FLAGS PATH [FLOOR]
 *                              (built without NCCL) dlopen(PATH, FLAGS) +
 *                              dlsym + call, as the first call: ns, faults;
 *                              FLAGS "local" or "global" (with RTLD_LAZY).
 *                              FLOOR, before the dlopen: "probe", the least
 *                              a probe of PATH can do (open, read the ELF
 *                              header as ld.so reads it, close); "cache",
 *                              that after the least a search through
 *                              ld.so.cache can do (open, fstat, map, touch,
 *                              close): what any search that follows ld.so's
 *                              cache and reads a candidate before loading
 *                              it pays at least (docs/concepts/performance.md)
 * Every path checks the call's answer: a wrong one exits 1. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measure.h"

#ifndef BARE
#include <nccl.h>
#endif

#ifdef BARE
/* The ld.so.cache mapped and its pages faulted in, as a search reads it;
 * kept mapped, as lazynccl keeps it. 0, or -1. */
static int floor_cache(void)
{
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_size < 1) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    const volatile char *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    (void)m[sb.st_size / 2];
    return 0;
}

/* The ELF header and program headers of path read as ld.so reads them
 * (832 bytes), and checked as an ELF file: 0, or -1. */
static int floor_probe(const char *path)
{
    char head[832];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, head, sizeof head, 0);
    close(fd);
    return n == (ssize_t)sizeof head && memcmp(head, "\177ELF", 4) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if ((argc != 4 && argc != 5) || strcmp(argv[1], "bare") != 0)
        return 2;
    const char *floor = argc == 5 ? argv[4] : "";
    if (*floor && strcmp(floor, "probe") != 0 && strcmp(floor, "cache") != 0)
        return 2;
    int flags = RTLD_LAZY | (strcmp(argv[2], "global") == 0 ? RTLD_GLOBAL : RTLD_LOCAL);
    int v = 0;
    long f0 = faults();
    double t0 = now();
    if (strcmp(floor, "cache") == 0 && floor_cache() != 0)
        return 1;
    if (*floor && floor_probe(argv[3]) != 0)
        return 1;
    void *h = dlopen(argv[3], flags);
    int (*get)(int *) = h ? (int (*)(int *))dlsym(h, "ncclGetVersion") : NULL;
    int rc = get ? get(&v) : -1;
    double t1 = now();
    printf("%.0f %ld\n", t1 - t0, faults() - f0);
    return rc != 0 || v <= 0;
}
#else
static int version_seen;

static void *one_call(void *arg)
{
    int v = 0;
    *(int *)arg = ncclGetVersion(&v) == ncclSuccess ? v : -1;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "start";
    int v = 0;
    if (strcmp(mode, "start") == 0)
        return 0;
    if (strcmp(mode, "first") == 0) {
        long f0 = faults();
        double t0 = now();
        ncclResult_t rc = ncclGetVersion(&v);
        double t1 = now();
        printf("%.0f %ld\n", t1 - t0, faults() - f0);
        return rc != ncclSuccess || v <= 0;
    }
    if (strcmp(mode, "absent") == 0) {
        ncclResult_t rc = ncclGetVersion(&v);
        printf("%d\n", (int)rc);
        return 0;
    }
    if (strcmp(mode, "threads") == 0 && argc > 2) {
        int n = atoi(argv[2]);
        pthread_t t[256];
        int got[256];
        if (n < 1 || n > 256)
            return 2;
        for (int i = 0; i < n; i++)
            if (pthread_create(&t[i], NULL, one_call, &got[i]) != 0)
                return 1;
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        version_seen = got[0];
        for (int i = 1; i < n; i++)
            if (got[i] != version_seen)
                return 1;
        printf("ok %d\n", version_seen);
        return version_seen <= 0;
    }
    if (strcmp(mode, "hot") == 0 && argc > 2) {
        long n = atol(argv[2]);
        if (ncclGetVersion(&v) != ncclSuccess || v <= 0)
            return 1;
        double tb = now();
        const char *volatile msg = ncclGetErrorString(ncclSuccess);
        double t0 = now();
        for (long i = 0; i < n; i++)
            ncclGetVersion(&v);
        double t1 = now();
        for (long i = 0; i < n; i++)
            msg = ncclGetErrorString(ncclSuccess);
        double t2 = now();
        printf("%.3f %.3f %.0f\n", (t1 - t0) / n, (t2 - t1) / n, t0 - tb);
        return msg == NULL;
    }
    return 2;
}
#endif
