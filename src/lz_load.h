/* Once-only loading of a library (lz_load.c). */
#ifndef LZ_LOAD_H
#define LZ_LOAD_H

#include "lz_search.h"

/* Returned by lz_ensure_loaded to a call made from inside the load itself
 * (a constructor of the real library calling back into the shim). */
enum { LZ_REENTERED = 3 };

/* Load the library unless done already; LZ_LOADED, LZ_FAILED or LZ_REENTERED.
 * want (or NULL) is the export whose first call asks: a candidate that
 * exports it exactly is preferred. Thread-safe; after the first call it is
 * one acquire load. */
LZ_HIDDEN int lz_ensure_loaded(const lz_lib *lib, const lz_sym *want);
/* The same with the lock held (lz_lock): loads unless loaded or failed. */
LZ_HIDDEN int lz_load_locked(const lz_lib *lib, const lz_sym *want);
/* Take a library's lock with cancellation disabled; returns the old
 * cancellation state for lz_unlock. */
LZ_HIDDEN int lz_lock(const lz_lib *lib);
LZ_HIDDEN void lz_unlock(const lz_lib *lib, int cancel_state);

#endif
