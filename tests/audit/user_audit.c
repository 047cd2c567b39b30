/* SPDX-License-Identifier: MIT
 * A user's own audit module (a profiler's): counts the objects opened and
 * writes the count to $LZ_USER_AUDIT_LOG when the program starts. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int opened;

unsigned int la_version(unsigned int v)
{
    return v;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    (void)map, (void)lmid, (void)cookie;
    opened++;
    return 0;
}

void la_preinit(uintptr_t *cookie)
{
    (void)cookie;
    const char *log = getenv("LZ_USER_AUDIT_LOG");
    if (!log)
        return;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        char buf[64];
        int n = snprintf(buf, sizeof buf, "user audit: %d objects\n", opened);
        (void)!write(fd, buf, (size_t)n);
        close(fd);
    }
}
