/* SPDX-License-Identifier: MIT
 * Reading /etc/ld.so.cache (lz_ldcache.c). */
#ifndef LZ_LDCACHE_H
#define LZ_LDCACHE_H

#include "base/lz_runtime.h"

/* The glibc-hwcaps subdirectories ld.so searches, best first,
 * NULL-terminated (process/lz_hwcaps.h's lz_hwcaps_subdirs). */
typedef const char *const *(*lz_ldcache_hwcaps_fn)(void);

/* The path ld.so.cache gives for soname, malloc'd exactly (NULL: not found,
 * longer than PATH_MAX, or out of memory) (lz_ldcache.c). hwcaps, asked
 * only where the cache lists the name in such a subdirectory, decides
 * among those entries; NULL for none searched. */
LZ_HIDDEN char *lz_ldcache_path(const char *cache, const char *soname, lz_ldcache_hwcaps_fn hwcaps);

#endif
