/* SPDX-License-Identifier: MIT
 * What src/elf/lz_ldcache.c finds in a cache file for each soname:
 *   ldcache_lookup CACHE SONAME...  ->  one line each: "SONAME PATH" or
 *                                       "SONAME -" when not found */
#include <stdio.h>
#include <stdlib.h>

#include "elf/lz_ldcache.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    for (int i = 2; i < argc; i++) {
        char *path = lz_ldcache_path(argv[1], argv[i]);
        printf("%s %s\n", argv[i], path ? path : "-");
        free(path);
    }
    return 0;
}
