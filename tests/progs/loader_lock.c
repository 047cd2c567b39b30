/* SPDX-License-Identifier: MIT
 * a thread dlopens a plugin whose constructor calls NCCL,
 * while the main thread makes its first NCCL call. Linked with -lnccl this
 * completes; a shim that holds its own lock across dlopen deadlocks (main
 * waits for the loader lock inside dlopen, the constructor waits for the
 * shim's lock). Usage: loader_lock PLUGIN [load-first]
 * load-first: lazynccl_load() before, so only first calls of functions race. */
#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#ifdef LZ_SHIM
#include <lazynccl.h>
#endif

volatile int plugin_started, main_calling;
static const char *plugin_path;
static void *plugin;

static void *open_plugin(void *arg)
{
    (void)arg;
    plugin = dlopen(plugin_path, RTLD_NOW | RTLD_GLOBAL);
    if (!plugin)
        fprintf(stderr, "dlopen %s: %s\n", plugin_path, dlerror());
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    plugin_path = argv[1];
#ifdef LZ_SHIM
    if (argc > 2 && strcmp(argv[2], "load-first") == 0 && lazynccl_load() != 0)
        return 3;
#endif
    pthread_t t;
    pthread_create(&t, NULL, open_plugin, NULL);
    while (!__atomic_load_n(&plugin_started, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    __atomic_store_n(&main_calling, 1, __ATOMIC_RELEASE);
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    ncclResult_t rc = ncclGetUniqueId(&id);
    int v = 0;
    ncclResult_t rv = ncclGetVersion(&v);
    pthread_join(t, NULL);
    if (!plugin)
        return 4;
    int *prc = dlsym(plugin, "plugin_rc"), *pv = dlsym(plugin, "plugin_version");
    printf("main: uniqueid=%d version=%d/%d plugin: rc=%d version=%d\n", (int)rc, (int)rv, v,
           prc ? *prc : -9, pv ? *pv : -9);
    return 0;
}
