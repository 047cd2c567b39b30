/* SPDX-License-Identifier: MIT
 * What every runtime copy does when its object is loaded
 * (src/load/lz_once.c lz_fork_init): take the pid of the process and register
 * fork handlers. Included by the bench's stand-in objects (bench/empty.c,
 * bench/noruntime.c), so that each pays that cost as a shim does. */
#ifndef LZ_BENCH_REGISTER_AT_LOAD_H
#define LZ_BENCH_REGISTER_AT_LOAD_H

#include <pthread.h>
#include <unistd.h>

static volatile pid_t bench_owner; /* kept, as the runtime keeps it */

static void bench_on_fork(void)
{
}

__attribute__((constructor)) static void bench_register_at_load(void)
{
    bench_owner = getpid();
    pthread_atfork(bench_on_fork, bench_on_fork, bench_on_fork);
}

#endif
