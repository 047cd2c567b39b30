/* SPDX-License-Identifier: MIT
 * Once-only loading of a library (lz_once.c). */
#ifndef LZ_ONCE_H
#define LZ_ONCE_H

#include "search/lz_search.h"

/* Returned by lz_ensure_loaded, without a failure published (the next call
 * tries again): LZ_REENTERED to a call made from inside the load itself (a
 * constructor of the real library calling back into the shim); LZ_BUSY
 * when the dynamic linker's lock is held by a thread that waits for this
 * one to end (lz_ldlock.h). */
enum { LZ_REENTERED = 3, LZ_BUSY = 4 };

/* Load the library unless done already; LZ_LOADED, LZ_FAILED, LZ_REENTERED
 * or LZ_BUSY.
 * want (or NULL) is the export whose first call asks: a candidate that
 * exports it exactly is preferred. Thread-safe, holds no lock across the
 * search; after the first call it is one acquire load. */
LZ_HIDDEN int lz_ensure_loaded(const lz_lib *lib, const lz_sym *want);
/* Publish export i's failure value in its slot unless a retry has reset
 * the library since: 1 when published, 0 when the caller must resolve again. */
LZ_HIDDEN int lz_publish_failure(const lz_lib *lib, size_t i);
/* A copy of the search list set by the program (NULL: none; *lost when it
 * could not be copied), for a search that must not hold the lock. */
LZ_HIDDEN char *lz_search_list_copy(const lz_lib *lib, int *lost);
/* Forget a failure so that the next call searches again (an explicit
 * load): slots back to their resolvers, a new generation. */
LZ_HIDDEN void lz_retry(const lz_lib *lib);
/* LZ_UNTRIED, LZ_LOADED or LZ_FAILED (an acquire load). */
LZ_HIDDEN int lz_status(const lz_lib *lib);
/* 1 when the calling thread is running a search of lib (a constructor or a
 * log callback calling back). Call with the lock held. */
LZ_HIDDEN int lz_self_loading(const lz_lib *lib);

#endif
