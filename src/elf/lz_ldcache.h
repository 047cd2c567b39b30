/* SPDX-License-Identifier: MIT
 * Reading /etc/ld.so.cache (lz_ldcache.c). */
#ifndef LZ_LDCACHE_H
#define LZ_LDCACHE_H

#include "base/lz_runtime.h"

/* The path ld.so.cache gives for soname, malloc'd exactly (NULL: not found,
 * longer than PATH_MAX, or out of memory) (lz_ldcache.c). hwcaps: the
 * glibc-hwcaps subdirectories ld.so searches, best first, NULL-terminated
 * (process/lz_hwcaps.h), which decide among entries from such
 * subdirectories; NULL for none. */
LZ_HIDDEN char *lz_ldcache_path(const char *cache, const char *soname, const char *const *hwcaps);

#endif
