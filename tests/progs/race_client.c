/* SPDX-License-Identifier: MIT
 * Threads, forks and retries against liblazynccl (and liblazynvrtc).
 *   race_client race N          N threads, released together, each call a
 *                               different function first: "ok calls=N"
 *   race_client race-nvrtc N    the same with NVRTC
 *   race_client fork-before     child forked before any call loads alone
 *   race_client fork-after      child uses the parent's resolution
 *   race_client fork-during     fork while another thread is in the first load
 *   race_client retry STAGED FINAL   first call fails (nothing at FINAL),
 *                               then STAGED is renamed to FINAL and
 *                               lazynccl_load() retries
 *   race_client retry-race N GOOD    N threads released together: even ones
 *                               make a first call, odd ones point the search
 *                               at a missing file and retry, then at GOOD
 *                               and retry; at the end the library is loaded
 *                               ("loaded=yes"), its constructor having run
 *                               once (the test counts LZ_CTOR_LOG's lines) */
#include <lazynccl.h>
#include <nccl.h>
#include <nvrtc.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "maps.h"

static pthread_barrier_t barrier;
static int failures;
static int nccl_version;

static void *nccl_worker(void *arg)
{
    long i = (long)arg;
    pthread_barrier_wait(&barrier);
    int v = -1, ok = 0;
    ncclUniqueId id;
    switch (i % 4) {
    case 0:
        ok = ncclGetVersion(&v) == ncclSuccess && v == nccl_version;
        break;
    case 1:
        ok = ncclCommCount(NULL, &v) == ncclSuccess ? v == 42 : ncclGetVersion(&v) == ncclSuccess;
        break;
    case 2:
        memset(&id, 0, sizeof id);
        ok = ncclGetUniqueId(&id) == ncclSuccess;
        break;
    case 3:
        ok = ncclGetErrorString(ncclSuccess) != NULL;
        break;
    }
    if (!ok)
        __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    return NULL;
}

static int want_major, want_minor;

static void *nvrtc_worker(void *arg)
{
    long i = (long)arg;
    pthread_barrier_wait(&barrier);
    int a = -1, b = -1, ok;
    if (i % 2)
        ok = nvrtcVersion(&a, &b) == NVRTC_SUCCESS && a == want_major && b == want_minor;
    else
        ok = nvrtcGetNumSupportedArchs(&a) == NVRTC_SUCCESS && a > 0;
    if (!ok)
        __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    return NULL;
}

static int race(int n, void *(*worker)(void *))
{
    pthread_t *t = calloc((size_t)n, sizeof *t);
    pthread_barrier_init(&barrier, NULL, (unsigned)n);
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    free(t);
    printf("%s calls=%d failures=%d copies=%d\n", failures ? "FAILED" : "ok", n, failures,
           count_mapped("/libnccl.so"));
    return failures != 0;
}

static int child_calls(const char *what)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int v = 0;
        ncclResult_t r = ncclGetVersion(&v);
        printf("%s child: rc=%d version=%d loaded_in_child=%s\n", what, (int)r, v,
               lazynccl_loaded_path() ? "yes" : "no");
        fflush(stdout);
        _exit(r == ncclSuccess ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

static const char *good_path;

static void *retry_worker(void *arg)
{
    long i = (long)arg;
    pthread_barrier_wait(&barrier);
    int v;
    if (i % 2 == 0) {
        ncclGetVersion(&v);
        return NULL;
    }
    for (int k = 0; k < 3; k++) {
        lazynccl_set_search_path("/nonexistent/libnccl.so.2");
        lazynccl_load();
        lazynccl_set_search_path(good_path);
        lazynccl_load();
    }
    return NULL;
}

static void *first_load(void *arg)
{
    (void)arg;
    int v;
    ncclGetVersion(&v);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "race") == 0) {
        /* The expected version comes from the environment, not from a call. */
        nccl_version = atoi(getenv("WANT_VERSION") ? getenv("WANT_VERSION") : "0");
        return race(atoi(argv[2]), nccl_worker);
    }
    if (argc >= 3 && strcmp(argv[1], "race-nvrtc") == 0) {
        sscanf(getenv("WANT_VERSION") ? getenv("WANT_VERSION") : "0.0", "%d.%d", &want_major,
               &want_minor);
        return race(atoi(argv[2]), nvrtc_worker);
    }
    if (argc >= 4 && strcmp(argv[1], "retry-race") == 0) {
        good_path = argv[3];
        int n = atoi(argv[2]);
        pthread_t *t = calloc((size_t)n, sizeof *t);
        pthread_barrier_init(&barrier, NULL, (unsigned)n);
        /* The first searches find nothing (not the system's NCCL). */
        lazynccl_set_search_path("/nonexistent/libnccl.so.2");
        for (long i = 0; i < n; i++)
            pthread_create(&t[i], NULL, retry_worker, (void *)i);
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        lazynccl_set_search_path(good_path);
        lazynccl_load();
        const char *loaded = lazynccl_loaded_path();
        printf("loaded=%s\n", loaded && strcmp(loaded, good_path) == 0 ? "yes" : loaded ? loaded : "no");
        free(t);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "fork-before") == 0) {
        int rc = child_calls("before");
        printf("parent loaded=%s\n", lazynccl_loaded_path() ? "yes" : "no");
        return rc;
    }
    if (argc >= 2 && strcmp(argv[1], "fork-after") == 0) {
        int v;
        ncclGetVersion(&v);
        return child_calls("after");
    }
    if (argc >= 2 && strcmp(argv[1], "fork-during") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, first_load, NULL);
        usleep(200 * 1000); /* the fake's constructor sleeps longer than this */
        int rc = child_calls("during");
        pthread_join(t, NULL);
        return rc;
    }
    if (argc >= 4 && strcmp(argv[1], "retry") == 0) {
        int v = -1;
        for (int i = 0; i < 3; i++)
            printf("call %d: rc=%d\n", i, (int)ncclGetVersion(&v));
        if (rename(argv[2], argv[3]) != 0) {
            perror("rename");
            return 2;
        }
        printf("call after fix, before retry: rc=%d\n", (int)ncclGetVersion(&v));
        printf("lazynccl_load: %d\n", lazynccl_load());
        ncclResult_t r = ncclGetVersion(&v);
        printf("call after retry: rc=%d version=%d\n", (int)r, v);
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top of race_client.c\n");
    return 2;
}
