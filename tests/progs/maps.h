/* SPDX-License-Identifier: MIT
 * What the test programs read from /proc/self/maps. */
#ifndef LZ_TEST_MAPS_H
#define LZ_TEST_MAPS_H

#include <stdio.h>
#include <string.h>

/* Distinct files mapped whose path contains needle ("/libnccl.so"). */
static inline int count_mapped(const char *needle)
{
    char line[4096], seen[8][512];
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        const char *path = strchr(line, '/');
        if (!path || !strstr(path, needle))
            continue;
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= strncmp(seen[i], path, sizeof seen[i] - 1) == 0;
        if (!dup && n < 8)
            snprintf(seen[n++], sizeof seen[0], "%s", path);
    }
    if (f)
        fclose(f);
    return n;
}

#endif
