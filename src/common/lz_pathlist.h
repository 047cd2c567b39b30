/* SPDX-License-Identifier: MIT
 * Splitting a path list, defined once for the runtime (LD_LIBRARY_PATH, run
 * paths, LAZYNCCL_LIBPATH: base/lz_path.c), the audit module and the
 * launcher (LAZYNCCL_AUDIT_DROPINS: common/lz_dropins.h). Header-only and
 * free of library calls: the audit module has no C library. */
#ifndef LZ_PATHLIST_H
#define LZ_PATHLIST_H

#include <stddef.h>

/* The length of the entry at the start of list: up to the first of seps
 * (":" for run paths and the drop-ins' list, ":;" for LD_LIBRARY_PATH, as
 * ld.so splits each) or the end. A loop, not strcspn: a first call's
 * search is priced in pages, and strcspn's tables are a libc page nothing
 * else on the way touches. */
static inline __attribute__((unused)) size_t lz_pathlist_entry(const char *list, const char *seps)
{
    size_t n = 0;
    for (; list[n]; n++)
        for (const char *s = seps; *s; s++)
            if (list[n] == *s)
                return n;
    return n;
}

#endif
