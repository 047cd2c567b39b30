/* SPDX-License-Identifier: MIT
 * The clock and the page-fault count the bench programs time a call with
 * (bench/firstcall.c, hotcall.c, probe.c, versus.c). */
#ifndef LZ_BENCH_MEASURE_H
#define LZ_BENCH_MEASURE_H

#include <sys/resource.h>
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

#endif
