/* SPDX-License-Identifier: MIT
 * Reading /etc/ld.so.cache (lz_ldcache.c). */
#ifndef LZ_LDCACHE_H
#define LZ_LDCACHE_H

#include "lz_runtime.h"

/* The path ld.so.cache gives for soname: 1 when found (lz_ldcache.c). */
LZ_HIDDEN int lz_ldcache_lookup(const char *cache, const char *soname, char *out, size_t size);

#endif
