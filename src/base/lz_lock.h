/* SPDX-License-Identifier: MIT
 * A library's lock, safe across fork() (lz_lock.c). */
#ifndef LZ_LOCK_H
#define LZ_LOCK_H

#include "base/lz_runtime.h"

/* Take a library's lock (short sections only) with cancellation disabled;
 * returns the old cancellation state for lz_unlock. The first time, the
 * library is registered for the fork handlers. */
LZ_HIDDEN int lz_lock(const lz_lib *lib);
LZ_HIDDEN void lz_unlock(const lz_lib *lib, int cancel_state);

#endif
