/* SPDX-License-Identifier: MIT
 * A first call from a thread that another thread, holding the dynamic
 * linker's lock, joins: in a plugin's constructor (dlopen) or destructor
 * (dlclose). Built twice:
 *   -DPLUGIN[=1|2|3] the plugin: its constructor (1) or destructor (2)
 *                   starts a worker that calls ncclGetVersion, and joins it;
 *                   (3) its constructor joins with a timeout of 1 s and
 *                   returns; join_pending (called by the program after
 *                   dlopen) joins it: no deadlock, so the call must load;
 *                   (4) its constructor's worker calls pncclGetVersion
 *                   instead, a function not yet called, of a library the
 *                   program has loaded (join_first_call PLUGIN first)
 *   (none)          join_first_call PLUGIN: dlopen and dlclose PLUGIN, then
 *                   call ncclGetVersion itself
 * Each prints its call's result. Linked -lnccl this completes; a first
 * call that waited for the lock would wait for good. */
#define _GNU_SOURCE
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#ifdef PLUGIN
static void *work(void *arg)
{
#if PLUGIN == 4
    int v = -1;
    ncclResult_t rc = pncclGetVersion(&v);
    printf("%s: pncclGetVersion rc=%d version=%d\n", (const char *)arg, (int)rc, v);
#else
    int v = -1;
    ncclResult_t rc = ncclGetVersion(&v);
    printf("%s: rc=%d version=%d\n", (const char *)arg, (int)rc, v);
#endif
    fflush(stdout);
    return NULL;
}

#if PLUGIN == 3
static pthread_t pending;
static int waiting;

void join_pending(void)
{
    if (waiting)
        pthread_join(pending, NULL);
    waiting = 0;
}
#endif

static void start_and_join(const char *who)
{
    pthread_t t;
    if (pthread_create(&t, NULL, work, (void *)who) != 0)
        return;
#if PLUGIN == 3
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    if (pthread_timedjoin_np(t, NULL, &until) != 0) {
        pending = t;
        waiting = 1;
    }
#else
    pthread_join(t, NULL);
#endif
}

#if PLUGIN == 1 || PLUGIN == 3 || PLUGIN == 4
__attribute__((constructor)) static void at_load(void)
{
    start_and_join("constructor");
}
#else
__attribute__((destructor)) static void at_unload(void)
{
    start_and_join("destructor");
}
#endif
#else
#include <dlfcn.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (argc > 2) { /* "first": the library loaded by a call before the dlopen */
        int v0 = -1;
        ncclResult_t rc0 = ncclGetVersion(&v0);
        printf("first: rc=%d version=%d\n", (int)rc0, v0);
        fflush(stdout);
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 3;
    }
    void (*join_pending)(void) = (void (*)(void))dlsym(h, "join_pending");
    if (join_pending)
        join_pending();
    dlclose(h);
    int v = -1;
    ncclResult_t rc = ncclGetVersion(&v);
    printf("main: rc=%d version=%d\n", (int)rc, v);
    return 0;
}
#endif
