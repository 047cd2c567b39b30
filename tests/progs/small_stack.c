/* SPDX-License-Identifier: MIT */
/* A first call made on a thread of the smallest stack a program may ask
 * for (PTHREAD_STACK_MIN), as a runtime's worker pool may: argv[1] "nccl"
 * calls ncclGetVersion, "nvrtc" nvrtcVersion (whose search also judges the
 * release of what is loaded beside it), "would" asks lazynccl_would_load
 * (a search that loads nothing). Prints what the call returned. */
#include <lazynccl_control.h>
#include <nccl.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "small_thread.h"

static const char *which;

static void *first_call(void *arg)
{
    (void)arg;
    if (strcmp(which, "nccl") == 0) {
        int version = 0;
        ncclResult_t r = ncclGetVersion(&version);
        printf("ncclGetVersion: %d, version %d\n", (int)r, r == ncclSuccess ? version : 0);
    } else if (strcmp(which, "would") == 0) {
        /* The answer's buffer on the heap: the stack is the search's. */
        char *path = malloc(4096);
        int found = path ? lazynccl_would_load(path, 4096) : -1;
        printf("lazynccl_would_load: %d, %s\n", found, found == 1 ? path : "(the report)");
        free(path);
    } else {
        int major = 0, minor = 0;
        nvrtcResult r = nvrtcVersion(&major, &minor);
        printf("nvrtcVersion: %d, version %d.%d\n", (int)r, r == NVRTC_SUCCESS ? major : 0,
               r == NVRTC_SUCCESS ? minor : 0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    which = argv[1];
    return on_smallest_stack(first_call);
}
