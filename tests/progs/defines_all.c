/* SPDX-License-Identifier: MIT
 * lz_holder_defines_all (src/process/lz_holder.h) on a loaded library, beside
 * dlsym (tests/test_elffile.py):
 *   defines_all LIB ANCHOR NAME...
 * loads LIB, finds ANCHOR in it (the address that names the object), and
 * prints for each NAME "NAME ours=0|1 dlsym=0|1", then "all=0|1" for the
 * names together. Linked with the runtime's archive. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

int lz_holder_defines_all(const void *inside, const char *(*name)(const void *ctx, size_t i),
                           const void *ctx, size_t n);

static const char *nth(const void *ctx, size_t i)
{
    return ((char *const *)ctx)[i];
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    void *anchor = h ? dlsym(h, argv[2]) : NULL;
    if (!anchor) {
        printf("cannot load: %s\n", dlerror());
        return 1;
    }
    for (int i = 3; i < argc; i++)
        printf("%s ours=%d dlsym=%d\n", argv[i], lz_holder_defines_all(anchor, nth, argv + i, 1),
               dlsym(h, argv[i]) != NULL);
    printf("all=%d\n", lz_holder_defines_all(anchor, nth, argv + 3, (size_t)(argc - 3)));
    return 0;
}
