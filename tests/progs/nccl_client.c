/* SPDX-License-Identifier: MIT
 * A client of nccl.h for the tests, built against the real header and linked
 * either with liblazynccl or (with -DDIRECT) with the real -lnccl.
 *   nccl_client version     ->  before=0 rc=0 version=22809 after=1
 *   nccl_client uniqueid    ->  rc=0 family=2 nonzero=1
 *   nccl_client call NAME.. ->  NAME: rc=... value=... [error=...] [last_error=...]
 *                               then: loaded=PATH step=STEP copies=N
 *                               libelf_mapped=N (the probe needs no libelf)
 *   nccl_client preload FILE call NAME..   dlopen FILE first (as PyTorch would)
 *   nccl_client wouldload [SIZE] -> would=1 path=PATH loaded=0 mapped=0
 *   nccl_client searchpath LIST ...   lazynccl_set_search_path(LIST) first
 *   nccl_client logcb ...             print log lines received by a callback */
#include <dlfcn.h>
#include <nccl.h>
#ifndef DIRECT
#include <lazynccl.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"

/* $LZ_WATCH names the real library's path where a drop-in libnccl.so.2
 * is mapped too; by default any libnccl. */
static int nccl_mapped(void)
{
    const char *watch = getenv("LZ_WATCH");
    return count_mapped(watch && *watch ? watch : "/libnccl.so") > 0;
}

static void report(ncclResult_t rc)
{
    if (rc != ncclSuccess)
        printf(" error=%s", ncclGetErrorString(rc));
#ifndef DIRECT
    const char *e = lazynccl_last_error();
    if (e)
        printf(" last_error=%s", e);
#endif
    if (getenv("LZ_SHOW_NCCL_LAST_ERROR")) /* the shim's own-answer function */
        printf(" ncclGetLastError=%s", ncclGetLastError(NULL));
    printf("\n");
}

#ifndef DIRECT
static void print_log(void *user, const char *line)
{
    (void)user;
    printf("log: %s\n", line);
}
#endif

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "preload") == 0) {
        if (!dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL)) {
            printf("preload failed: %s\n", dlerror());
            return 1;
        }
        argv += 2;
        argc -= 2;
    }
#ifndef DIRECT
    if (argc >= 3 && strcmp(argv[1], "searchpath") == 0) {
        printf("set_search_path=%d\n", lazynccl_set_search_path(argv[2]));
        argv += 2;
        argc -= 2;
    }
    if (argc >= 2 && strcmp(argv[1], "logcb") == 0) {
        lazynccl_set_log_callback(print_log, NULL);
        argv += 1;
        argc -= 1;
    }
    if (argc >= 2 && strcmp(argv[1], "wouldload") == 0) {
        /* argv[2]: the buffer's size (a string of it whatever its size) */
        char path[4096];
        memset(path, 'X', sizeof path);
        size_t size = argc >= 3 ? (size_t)atoi(argv[2]) : sizeof path;
        int would = lazynccl_would_load(path, size);
        printf("would=%d path=%s loaded=%d mapped=%d\n", would, path, lazynccl_is_loaded(),
               nccl_mapped());
        return 0;
    }
#endif
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        int before = nccl_mapped(), v = 0;
        ncclResult_t rc = ncclGetVersion(&v);
        printf("before=%d rc=%d version=%d after=%d\n", before, (int)rc, v, nccl_mapped());
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "uniqueid") == 0) {
        ncclUniqueId id;
        memset(&id, 0, sizeof id);
        ncclResult_t rc = ncclGetUniqueId(&id);
        int nonzero = 0;
        for (size_t i = 0; i < sizeof id.internal; i++)
            nonzero |= id.internal[i] != 0;
        unsigned short family;
        memcpy(&family, id.internal + 8, sizeof family);
        printf("rc=%d family=%u nonzero=%d\n", (int)rc, family, nonzero);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "call") == 0) {
        for (int a = 2; a < argc; a++) {
            ncclResult_t rc = ncclInternalError;
            int value = -1;
            if (strcmp(argv[a], "ncclGetVersion") == 0)
                rc = ncclGetVersion(&value);
            else if (strcmp(argv[a], "ncclCommCount") == 0)
                rc = ncclCommCount(NULL, &value);
            else if (strcmp(argv[a], "ncclGetUniqueId") == 0) {
                ncclUniqueId id;
                memset(&id, 0, sizeof id);
                rc = ncclGetUniqueId(&id);
                value = id.internal[0];
            } else {
                fprintf(stderr, "unknown function %s\n", argv[a]);
                return 2;
            }
            printf("%s: rc=%d value=%d", argv[a], (int)rc, value);
            report(rc);
        }
#ifndef DIRECT
        printf("loaded=%s step=%s copies=%d\n",
               lazynccl_loaded_path() ? lazynccl_loaded_path() : "-",
               lazynccl_loaded_step() ? lazynccl_loaded_step() : "-", count_mapped("/libnccl.so"));
        if (argc >= 3)
            printf("set_search_path_after=%d\n", lazynccl_set_search_path("/x"));
        printf("libelf_mapped=%d\n", count_mapped("/libelf"));
#endif
        return 0;
    }
    fprintf(stderr, "usage: nccl_client version|uniqueid|call NAME\n");
    return 2;
}
