/* SPDX-License-Identifier: MIT
 * The host of the PyTorch-style consumer, as python3 is for
 * torch: it links no NCCL and dlopens the consumer ("import torch").
 *
 *   consumer_host CONSUMER [REAL_NCCL] MODE
 *   MODE import          import, then call
 *   MODE framework-first dlopen REAL_NCCL by path (as CuPy does), import, call
 *   MODE dropin-first    import, call, then dlopen REAL_NCCL by path
 * Prints, after each step, the libnccl files mapped, and the version. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static void mapped(const char *when)
{
    char line[4096], seen[8][1024];
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    printf("%s:", when);
    while (f && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, "/libnccl.so"))
            continue;
        path[strcspn(path, "\n")] = '\0';
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= strcmp(seen[i], path) == 0;
        if (!dup && n < 8) {
            snprintf(seen[n++], sizeof seen[0], "%s", path);
            printf(" %s", path);
        }
    }
    if (f)
        fclose(f);
    printf("%s\n", n ? "" : " none");
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *mode = argv[argc - 1], *real = argc > 3 ? argv[2] : NULL;
    void *fw = NULL;
    if (strcmp(mode, "framework-first") == 0 && !(fw = dlopen(real, RTLD_NOW | RTLD_LOCAL))) {
        printf("framework dlopen: %s\n", dlerror());
        return 3;
    }
    void *c = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!c) {
        printf("import: %s\n", dlerror());
        return 4;
    }
    mapped("after import");
    int (*version)(void) = (int (*)(void))dlsym(c, "torchlike_nccl_version");
    printf("version: %d\n", version());
    mapped("after first call");
    if (strcmp(mode, "dropin-first") == 0) {
        if (!(fw = dlopen(real, RTLD_NOW | RTLD_LOCAL))) {
            printf("framework dlopen: %s\n", dlerror());
            return 3;
        }
        mapped("after framework dlopen");
    }
    return 0;
}
