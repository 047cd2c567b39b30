/* SPDX-License-Identifier: MIT */
/* dlopen(argv[1]) on a thread of the smallest stack a program may ask for
 * (PTHREAD_STACK_MIN), then ncclGetVersion through it, on that thread: what
 * lazynccl-run's audit module judges runs on the thread that asked. Prints
 * what each returned, then the NCCL files mapped. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "small_thread.h"

static const char *path;

static void *first_call(void *arg)
{
    (void)arg;
    void *h = dlopen(path, RTLD_NOW);
    printf("dlopen: %s\n", h ? "a handle" : dlerror());
    int (*get_version)(int *) = h ? (int (*)(int *))dlsym(h, "ncclGetVersion") : NULL;
    if (get_version) {
        int version = 0;
        int r = get_version(&version);
        printf("ncclGetVersion: %d, version %d\n", r, version);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    path = argv[1];
    if (on_smallest_stack(first_call) != 0)
        return 3;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps))
        if (strstr(line, "libnccl") && strstr(line, " r-xp "))
            printf("mapped: %s", strrchr(line, ' ') + 1);
    if (maps)
        fclose(maps);
    return 0;
}
