/* SPDX-License-Identifier: MIT
 * Hostile callers of liblazynccl (tests/test_hardening.py).
 *   harden_client cancel          a thread cancelled inside its first call
 *                                 (the fake's constructor sleeps), then a call
 *   harden_client setpath-in-log  the log callback calls set_search_path
 *   harden_client retry-race GOOD a retry with a good search list racing two
 *                                 first calls, after a failed load
 *   harden_client swap            one call, printing its answer; built with
 *                                 -DLZ_WRAP_DLOPEN against the static shim and
 *                                 -Wl,--wrap=dlopen, the runtime's dlopen of
 *                                 $LZ_SWAP_TO first renames $LZ_SWAP_FROM over
 *                                 it (once): a file swapped between the probe
 *                                 and the dlopen
 * Each prints what it saw; alarm(20) turns a hang into a failure. */
#include <lazynccl.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *first_call(void *arg)
{
    int v = 0;
    (void)arg;
    ncclGetVersion(&v);
    return NULL;
}

static int cancel_test(void)
{
    pthread_t t;
    pthread_create(&t, NULL, first_call, NULL);
    usleep(100 * 1000);
    pthread_cancel(t);
    void *res;
    pthread_join(t, &res);
    int v = 0;
    ncclResult_t rc = ncclGetVersion(&v);
    printf("thread %s; then rc=%d value=%d\n", res == PTHREAD_CANCELED ? "cancelled" : "finished",
           (int)rc, v);
    return 0;
}

static int setpath_rc = 99;

static void log_cb(void *user, const char *line)
{
    (void)user;
    (void)line;
    if (setpath_rc == 99)
        setpath_rc = lazynccl_set_search_path("/nonexistent/a:/nonexistent/b");
}

static int setpath_in_log(void)
{
    lazynccl_set_log_callback(log_cb, NULL);
    int v = 0;
    ncclResult_t rc = ncclGetVersion(&v);
    printf("set_search_path from the callback: %d; rc=%d value=%d\n", setpath_rc, (int)rc, v);
    return 0;
}

#ifdef LZ_WRAP_DLOPEN
#include <dlfcn.h>
#include <stdlib.h>
void *__real_dlopen(const char *path, int flags);
void *__wrap_dlopen(const char *path, int flags);
void *__wrap_dlopen(const char *path, int flags)
{
    const char *from = getenv("LZ_SWAP_FROM"), *to = getenv("LZ_SWAP_TO");
    if (from && to && path && strcmp(path, to) == 0) {
        printf("renamed: %d\n", rename(from, to));
        unsetenv("LZ_SWAP_FROM");
    }
    return __real_dlopen(path, flags);
}
#endif

static pthread_barrier_t barrier;
static const char *good;

static void *retry(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&barrier);
    lazynccl_set_search_path(good);
    printf("retry: load=%d\n", lazynccl_load());
    return NULL;
}

static void *call_v(void *arg)
{
    int v = 0;
    pthread_barrier_wait(&barrier);
    if (arg)
        pncclGetVersion(&v);
    else
        ncclGetVersion(&v);
    return NULL;
}

static int retry_race(void)
{
    lazynccl_set_search_path("/nonexistent/libnccl.so.2");
    printf("first load=%d\n", lazynccl_load());
    pthread_t t[3];
    pthread_barrier_init(&barrier, NULL, 3);
    pthread_create(&t[0], NULL, retry, NULL);
    pthread_create(&t[1], NULL, call_v, NULL);
    pthread_create(&t[2], NULL, call_v, (void *)1);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    int v = 0, pv = 0;
    ncclResult_t a = ncclGetVersion(&v), b = pncclGetVersion(&pv);
    printf("after: ncclGetVersion rc=%d value=%d pncclGetVersion rc=%d value=%d\n", (int)a, v,
           (int)b, pv);
    return 0;
}

int main(int argc, char **argv)
{
    alarm(20);
    if (argc == 2 && strcmp(argv[1], "cancel") == 0)
        return cancel_test();
    if (argc == 2 && strcmp(argv[1], "setpath-in-log") == 0)
        return setpath_in_log();
    if (argc == 3 && strcmp(argv[1], "retry-race") == 0) {
        good = argv[2];
        return retry_race();
    }
    if (argc == 2 && strcmp(argv[1], "swap") == 0) {
        int v = 0;
        ncclResult_t rc = ncclGetVersion(&v);
        printf("rc=%d value=%d\n", (int)rc, v);
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top\n");
    return 2;
}
