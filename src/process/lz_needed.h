/* SPDX-License-Identifier: MIT
 * The names a process needs from a library (lz_needed.c): what its loaded
 * objects import from it and what the program declares (LAZY<ID>_REQUIRE,
 * <shim>_require), so that the first call, whichever it is, chooses a copy
 * that serves them all (docs/reference/search-order.md, "The names decide"). */
#ifndef LZ_NEEDED_H
#define LZ_NEEDED_H

#include "base/lz_runtime.h"

/* Marks over lib->syms (malloc'd, lib->nsyms entries) of every name
 * needed; NULL when out of memory. */
LZ_HIDDEN unsigned char *lz_needed_marks(const lz_lib *lib);
/* Why name is needed, as the rest of a sentence ("which libtorch_cuda.so
 * imports", "which the program requires (LAZYNCCL_REQUIRE)") into out. */
LZ_HIDDEN void lz_needed_why(const lz_lib *lib, const char *name, char *out, size_t size);

#endif
