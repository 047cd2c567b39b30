/* SPDX-License-Identifier: MIT
 * What src/elf/lz_ldcache.c finds in a cache file for each soname:
 *   ldcache_lookup CACHE SONAME...  ->  one line each: "SONAME PATH" or
 *                                       "SONAME -" when not found
 * HWCAPS=A:B: the glibc-hwcaps subdirectories searched, best first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/lz_ldcache.h"

static const char *hwcaps[17];

static const char *const *subdirs(void)
{
    return hwcaps;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char *list = getenv("HWCAPS") ? strdup(getenv("HWCAPS")) : NULL;
    for (int n = 0; list && n < 16 && (hwcaps[n] = strtok(n ? NULL : list, ":")); n++)
        ;
    for (int i = 2; i < argc; i++) {
        char *path = lz_ldcache_path(argv[1], argv[i], subdirs);
        printf("%s %s\n", argv[i], path ? path : "-");
        free(path);
    }
    return 0;
}
