/* SPDX-License-Identifier: MIT
 * What a shared shim's export binds its callers to (lz_bind.c).
 *
 * In a shared shim or drop-in built with glibc, each own-answer export is
 * a GNU indirect function (the others are plain thunks: an indirect function
 * of the real library's name trips gdb, docs/reference/limitations.md): ld.so asks it
 * for an address when it binds a caller (a lazily bound PLT entry at its
 * first call, every reference under BIND_NOW, dlsym). Its resolver, written beside the thunk (lz_thunk.h),
 * asks lz_bind_pick. Before the library is loaded the answer is the thunk,
 * as if the export were a plain function; once it is loaded, the real
 * function, so that a caller bound from then on reaches the library in one
 * jump, as if linked to it (docs/concepts/performance.md, "Beside Implib.so"). */
#ifndef LZ_BIND_H
#define LZ_BIND_H

#include "base/lz_runtime.h"

/* The address to bind a caller of export i to: the real function where the
 * library is loaded and the function is final, else thunk (the export's
 * own jump through its slot, which keeps every behaviour of a first call:
 * the search, companions, fallbacks, failures and their reasons).
 * An own-answer function is final only where no call can fail: no call has
 * failed and the library exports every name of the spec. Written for any
 * export; the generator makes only own answers indirect functions.
 *
 * Runs inside the dynamic linker, possibly before the process's
 * sanitizer runtimes are set up (BIND_NOW relocations): until the library
 * is loaded it reads one word and calls nothing. Cost: that read, where not
 * loaded; once loaded, a dlsym of the name the first time it is bound, and
 * once per process for an own-answer function, a pass over the loaded
 * objects and a hash-table lookup in memory of every name of the spec. */
LZ_HIDDEN lz_fn lz_bind_pick(const lz_lib *lib, size_t i, lz_fn thunk);

#endif
