/* SPDX-License-Identifier: MIT
 * Reading /etc/ld.so.cache (lz_ldcache.c). */
#ifndef LZ_LDCACHE_H
#define LZ_LDCACHE_H

#include "base/lz_runtime.h"

/* The path ld.so.cache gives for soname, malloc'd exactly (NULL: not found,
 * longer than PATH_MAX, or out of memory) (lz_ldcache.c). */
LZ_HIDDEN char *lz_ldcache_path(const char *cache, const char *soname);

#endif
