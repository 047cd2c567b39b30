/* SPDX-License-Identifier: MIT
 * Resolving an export on its first call (lz_resolve.c). */
#ifndef LZ_RESOLVE_H
#define LZ_RESOLVE_H

#include "lz_runtime.h"

/* First call of export i: make sure the library is loaded, find the symbol,
 * publish it in the slot (release) and return what the caller must call. */
LZ_HIDDEN lz_fn lz_resolve(const lz_lib *lib, size_t i);

#endif
