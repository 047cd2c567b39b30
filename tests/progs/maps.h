/* SPDX-License-Identifier: MIT
 * What the test programs read from /proc/self/maps. */
#ifndef LZ_TEST_MAPS_H
#define LZ_TEST_MAPS_H

#include <stdio.h>
#include <stdlib.h>
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

/* Distinct mapped files whose path contains one of stems (NULL-ended), in
 * files[max]; files below $LZ_NOT_REAL (the drop-in directory) are not the
 * real library and are left out. Returns the count. */
static inline int lz_maps_real(const char *const *stems, char (*files)[4096], int max)
{
    char line[8192];
    const char *skip = getenv("LZ_NOT_REAL");
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path)
            continue;
        path[strcspn(path, "\n")] = '\0';
        int match = 0;
        for (const char *const *s = stems; *s; s++)
            match |= strstr(path, *s) != NULL;
        if (!match || (skip && *skip && strncmp(path, skip, strlen(skip)) == 0))
            continue;
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= strcmp(files[i], path) == 0;
        if (!dup && n < max)
            snprintf(files[n++], 4096, "%s", path);
    }
    if (f)
        fclose(f);
    return n;
}

/* Print "<what> after <when>: FILE..." (" -" when none) for the files
 * lz_maps_real finds, and flush (the test programs fork). */
static inline void lz_maps_print(const char *what, const char *when, const char *const *stems)
{
    char files[16][4096];
    int n = lz_maps_real(stems, files, 16);
    printf("%s after %s:", what, when);
    for (int i = 0; i < n; i++)
        printf(" %s", files[i]);
    printf("%s\n", n ? "" : " -");
    fflush(stdout);
}

#endif
