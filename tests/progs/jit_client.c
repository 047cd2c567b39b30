/* SPDX-License-Identifier: MIT
 * Calls nvJitLink's GetErrorLogSize family by name, as binaries built
 * against different nvJitLink headers do, through liblazynvjitlink.
 *   jit_client NAME..  ->  NAME: rc=R size=S   (then: loaded=PATH) */
#include <lazynccl.h>
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <stdio.h>
#include <string.h>

typedef nvJitLinkResult (*logsize_fn)(nvJitLinkHandle, size_t *);
extern nvJitLinkResult __nvJitLinkGetErrorLogSize_12_8(nvJitLinkHandle, size_t *);
extern nvJitLinkResult __nvJitLinkGetErrorLogSize_12_9(nvJitLinkHandle, size_t *);
extern nvJitLinkResult nvJitLinkGetErrorLogSize(nvJitLinkHandle, size_t *);

static const struct {
    const char *name;
    logsize_fn fn;
} fns[] = {
    {"__nvJitLinkGetErrorLogSize_12_8", __nvJitLinkGetErrorLogSize_12_8},
    {"__nvJitLinkGetErrorLogSize_12_9", __nvJitLinkGetErrorLogSize_12_9},
    {"__nvJitLinkGetErrorLogSize_13_0", __nvJitLinkGetErrorLogSize_13_0},
    {"nvJitLinkGetErrorLogSize", nvJitLinkGetErrorLogSize},
};

int main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        size_t i = 0;
        while (i < sizeof fns / sizeof fns[0] && strcmp(fns[i].name, argv[a]) != 0)
            i++;
        if (i == sizeof fns / sizeof fns[0]) {
            fprintf(stderr, "unknown function %s\n", argv[a]);
            return 2;
        }
        size_t size = 0;
        nvJitLinkResult rc = fns[i].fn(NULL, &size);
        printf("%s: rc=%d size=%zu\n", argv[a], (int)rc, size);
    }
    const char *e = lazynvjitlink_last_error();
    printf("loaded=%s\nlast_error=%s\n", lazynvjitlink_loaded_path() ? lazynvjitlink_loaded_path() : "-",
           e ? e : "-");
    return 0;
}
