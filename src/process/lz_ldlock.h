/* SPDX-License-Identifier: MIT
 * Whether the dynamic linker's own lock is held by a thread that waits for
 * this one (lz_ldlock.c): a first call made then cannot load, and would
 * wait for good. */
#ifndef LZ_LDLOCK_H
#define LZ_LDLOCK_H

#include "base/lz_dl.h"
#include "base/lz_runtime.h"

#include <stddef.h>

/* Wait while another thread holds the dynamic linker's lock (dlopen,
 * dlclose and dlsym take it, a constructor or destructor runs under it):
 * 0 once it is free, held by this thread, or cannot be read; -1 with the
 * reason in why when its holder waits for this thread to end
 * (pthread_join), or sleeps in a futex wait while every other thread of
 * the process sleeps too, which no wait of this thread can outlast. */
LZ_HIDDEN int lz_ldlock_wait(char *why, size_t size);

/* The same wait, ending with the lock taken by this thread (trylock, so
 * that no holder can take it between the look and the call that needs it,
 * and then join this thread): 1 taken, to be given back with
 * lz_ldlock_give once the call into the dynamic linker returns (it takes
 * the lock again, as its holder); 0 nothing taken (the lock cannot be
 * found: the call then waits in the dynamic linker); -1 when its
 * holder waits for this thread for good, the reason kept for
 * lz_ldlock_refused. */
LZ_HIDDEN int lz_ldlock_take(void);
LZ_HIDDEN void lz_ldlock_give(int taken);

/* 1 when a take of this thread ended -1 since lz_ldlock_clear,
 * the first one's reason written to why (when not NULL); else 0. */
LZ_HIDDEN int lz_ldlock_refused(char *why, size_t size);
/* Clear this thread's refusal, returning the one it had, which
 * lz_ldlock_restore puts back (a search inside another's). */
typedef struct lz_ldlock_mark {
    int by, how;
} lz_ldlock_mark;
LZ_HIDDEN lz_ldlock_mark lz_ldlock_clear(void);
LZ_HIDDEN void lz_ldlock_restore(lz_ldlock_mark mark);

/* The calling thread's id (gettid), asked once per search and epoch of
 * the thread (lz_dl_epoch), and again after the program's log callback
 * returned. */
LZ_HIDDEN int lz_ldlock_tid(void);

/* lz_ldlock_take and lz_ldlock_give as lz_dl.c's guard. */
LZ_HIDDEN const lz_dl_guard *lz_ldlock_guard(void);

/* The holder that this thread's last -1 found, in words for a message: "a
 * thread that waits for this one to end (pthread_join)", or one asleep. */
LZ_HIDDEN const char *lz_ldlock_holder(void);

#endif
