/* SPDX-License-Identifier: MIT
 * The clock and the page-fault count the bench programs time a call with
 * (bench/firstcall.c, hotcall.c, probe.c, versus.c), and the spawn and
 * the median the spawning ones report (launch.c, spawnpair.c). */
#ifndef LZ_BENCH_MEASURE_H
#define LZ_BENCH_MEASURE_H

#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

/* Monotonic nanoseconds. */
static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The page faults this process has taken (on a virtual machine each costs
 * microseconds: they, not instructions, set a first call's wall time). */
static inline long faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

/* Nanoseconds from spawning argv (environment envp) to its exit; -1 when
 * it could not be spawned or did not exit with status 0. */
static inline double spawn_ns(char **argv, char **envp)
{
    pid_t pid;
    int status;
    double t0 = now();
    if (posix_spawn(&pid, argv[0], NULL, NULL, argv, envp) != 0)
        return -1;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? now() - t0 : -1;
}

static inline int measure_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), which it sorts. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, measure_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
