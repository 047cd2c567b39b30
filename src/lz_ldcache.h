/* SPDX-License-Identifier: MIT
 * Reading /etc/ld.so.cache (lz_ldcache.c). */
#ifndef LZ_LDCACHE_H
#define LZ_LDCACHE_H

#include "lz_runtime.h"

/* The path ld.so.cache gives for soname: 1 when found (lz_ldcache.c). */
LZ_HIDDEN int lz_ldcache_lookup(const char *cache, const char *soname, char *out, size_t size);
/* The same, malloc'd exactly (NULL: not found, or out of memory). */
LZ_HIDDEN char *lz_ldcache_path(const char *cache, const char *soname);

#endif
