/* SPDX-License-Identifier: MIT
 * The dynamic linker's lock taken between a first call's look at it and
 * the call's own dlopen: a worker's first call through the shim asks the
 * program's chooser, which waits there until a plugin's constructor
 * (running under the lock, in the main thread's dlopen) says it holds the
 * lock; the constructor then joins the worker. Built twice:
 *   -DPLUGIN   the plugin: its constructor calls race_holding()
 *   (none)     join_race PLUGIN: start the worker, dlopen PLUGIN once the
 *              worker is in the chooser, then call ncclGetVersion itself
 * With -DNESTED_ZLIB the chooser first makes a first call of zlib's shim,
 * a search inside the search: linked to the static shims, both share one
 * runtime. Each prints its call's result. A first call that waited for the
 * lock in dlopen would wait for good. */
#define _GNU_SOURCE
#include <nccl.h>
#include <stdio.h>

#ifdef PLUGIN
void race_holding(void);

__attribute__((constructor)) static void at_load(void)
{
    race_holding();
}
#else
#include <dlfcn.h>
#include <errno.h>
#include <lazynccl_control.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#ifdef NESTED_ZLIB
#include <zlib.h>
#endif

static sem_t in_chooser, holding;
static pthread_t worker;

static int wait_for(sem_t *s)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    int rc;
    while ((rc = sem_timedwait(s, &until)) != 0 && errno == EINTR)
        ;
    return rc;
}

/* The worker's search: here until the main thread holds the lock. */
static void *choose(void *user, char *path, size_t size)
{
    (void)user, (void)size;
    path[0] = '\0'; /* the usual search */
#ifdef NESTED_ZLIB
    fprintf(stderr, "chooser: zlib %s\n", zlibVersion());
#endif
    sem_post(&in_chooser);
    if (wait_for(&holding) != 0)
        fprintf(stderr, "chooser: the constructor never ran\n");
    return NULL;
}

/* Called by the plugin's constructor, under the dynamic linker's lock. */
__attribute__((visibility("default"))) void race_holding(void)
{
    sem_post(&holding);
    pthread_join(worker, NULL);
}

static void *work(void *arg)
{
    int v = -1;
    ncclResult_t rc = ncclGetVersion(&v);
    printf("%s: rc=%d version=%d\n", (const char *)arg, (int)rc, v);
    fflush(stdout);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    sem_init(&in_chooser, 0, 0);
    sem_init(&holding, 0, 0);
    lazynccl_set_chooser(choose, NULL);
    if (pthread_create(&worker, NULL, work, "worker") != 0)
        return 3;
    if (wait_for(&in_chooser) != 0) {
        fprintf(stderr, "the worker never reached the chooser\n");
        return 4;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 5;
    }
    dlclose(h);
    lazynccl_set_chooser(NULL, NULL);
    int v = -1;
    ncclResult_t rc = ncclGetVersion(&v);
    printf("main: rc=%d version=%d\n", (int)rc, v);
    return 0;
}
#endif
