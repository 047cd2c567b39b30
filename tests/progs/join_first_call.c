/* SPDX-License-Identifier: MIT
 * A first call from a thread that another thread, holding the dynamic
 * linker's lock, joins: in a plugin's constructor (dlopen) or destructor
 * (dlclose). Built twice:
 *   -DPLUGIN[=1|2]  the plugin: its constructor (1) or destructor (2)
 *                   starts a worker that calls ncclGetVersion, and joins it
 *   (none)          join_first_call PLUGIN: dlopen and dlclose PLUGIN, then
 *                   call ncclGetVersion itself
 * Each prints its call's result. Linked -lnccl this completes; a first
 * call that waited for the lock would wait for good. */
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>

#ifdef PLUGIN
static void *work(void *arg)
{
    int v = -1;
    ncclResult_t rc = ncclGetVersion(&v);
    printf("%s: rc=%d version=%d\n", (const char *)arg, (int)rc, v);
    fflush(stdout);
    return NULL;
}

static void start_and_join(const char *who)
{
    pthread_t t;
    if (pthread_create(&t, NULL, work, (void *)who) == 0)
        pthread_join(t, NULL);
}

#if PLUGIN == 1
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
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 3;
    }
    dlclose(h);
    int v = -1;
    ncclResult_t rc = ncclGetVersion(&v);
    printf("main: rc=%d version=%d\n", (int)rc, v);
    return 0;
}
#endif
