/* SPDX-License-Identifier: MIT
 * A tool's injection library, as compute-sanitizer's and Nsight Compute's
 * are: preloaded into the program, it re-opens the library the program
 * uses by path, to hook it, and looks a function up through that handle.
 *
 *   tool_hook(PATH, SYMBOL) prints "tool SYMBOL in FILE handle HFILE"
 *   (the object holding the address dlsym gave, by dladdr; the object the
 *   handle is, by its link map) or "tool failed: why". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

__attribute__((visibility("default"))) void tool_hook(const char *path, const char *symbol);
void tool_hook(const char *path, const char *symbol)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("tool failed: %s\n", dlerror());
        return;
    }
    void *fn = dlsym(h, symbol);
    Dl_info info;
    if (!fn || !dladdr(fn, &info) || !info.dli_fname) {
        printf("tool failed: %s not found\n", symbol);
        return;
    }
    struct link_map *map = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &map) != 0 || !map) {
        printf("tool failed: %s\n", dlerror());
        return;
    }
    printf("tool %s in %s handle %s\n", symbol, info.dli_fname, map->l_name);
}
