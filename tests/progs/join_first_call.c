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
 *                   program has loaded (join_first_call PLUGIN first);
 *                   (5) its constructor waits on a condition variable that
 *                   the worker signals after its call; (6) on one that a
 *                   third thread signals after a sleep of 300 ms: a thread
 *                   awake may yet wake the holder, so the call must load;
 *                   both return, and join_pending joins the worker
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
#if PLUGIN == 5 || PLUGIN == 6
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int called;
#endif

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
#if PLUGIN == 5
    pthread_mutex_lock(&mu);
    called = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
#endif
    return NULL;
}

#if PLUGIN == 6
static void *wake(void *arg)
{
    struct timespec later = {0, 300000000};
    nanosleep(&later, NULL);
    pthread_mutex_lock(&mu);
    called = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return arg;
}
#endif

#if PLUGIN == 3 || PLUGIN == 5 || PLUGIN == 6
static pthread_t pending;
static int waiting;
#if PLUGIN == 6
static pthread_t waker;
#endif

void join_pending(void)
{
    if (waiting)
        pthread_join(pending, NULL);
#if PLUGIN == 6
    if (waiting)
        pthread_join(waker, NULL);
#endif
    waiting = 0;
}
#endif

static void start_and_join(const char *who)
{
    pthread_t t;
    if (pthread_create(&t, NULL, work, (void *)who) != 0)
        return;
#if PLUGIN == 5 || PLUGIN == 6
    pending = t;
    waiting = 1;
#if PLUGIN == 6
    if (pthread_create(&waker, NULL, wake, NULL) != 0)
        return;
#endif
    /* Waits for the worker's call (5) or the third thread (6), not for
     * the worker to end. */
    pthread_mutex_lock(&mu);
    while (!called)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
#elif PLUGIN == 3
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

#if PLUGIN != 2
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
