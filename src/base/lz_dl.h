/* SPDX-License-Identifier: MIT */
/* Calls into the dynamic linker that the runtime makes while loading, and
 * who may wait for whom (lz_dl.c).
 *
 * Two hazards live here. A thread that waits for another thread's search
 * must not wait while any thread of ours is inside the dynamic linker: the
 * waiter may itself hold the loader lock (it runs a constructor), and the
 * searcher would wait for it forever. And a child forked while a thread was
 * inside dlopen inherits the dynamic linker half-way through a change; glibc
 * asserts (or hands out a half-relocated object) on the child's next dlopen.
 * So every dlopen/dlclose/dlsym a search makes goes through these wrappers,
 * which count the threads inside ("windows"). */
#ifndef LZ_DL_H
#define LZ_DL_H

#include "base/lz_runtime.h"

#include <dlfcn.h>
#include <sys/types.h>

/* How the runtime loads a library and its companions: bound lazily, as a
 * program's dlopen would, and kept out of the global scope. */
#define LZ_DLOPEN_FLAGS (RTLD_LAZY | RTLD_LOCAL)

/* dlopen/dlclose/dlsym inside a window. lz_dlopen refuses (NULL, *why set)
 * in a child forked while a window was open. */
LZ_HIDDEN void *lz_dlopen(const char *path, int flags, const char **why);
LZ_HIDDEN void lz_dlclose(void *handle);
/* The file of a handle dlopen returned, as the link map names it: 1 when
 * written (0 for the program itself, an unknown handle, a name too long). */
LZ_HIDDEN int lz_dl_path_of(void *handle, char *out, size_t size);
LZ_HIDDEN void *lz_dlsym(void *handle, const char *name);
/* name at one ELF symbol version (name@version), for a drop-in's hidden
 * versions (gen/dropin_versions.py). */
LZ_HIDDEN void *lz_dlvsym(void *handle, const char *name, const char *version);
/* dl_iterate_phdr inside a window: it holds a lock of the dynamic linker that
 * a forked child would find taken. */
struct dl_phdr_info;
LZ_HIDDEN int lz_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);

/* Wait while pending(ctx) (the load protocol's question, lz_once.c: is
 * another thread's search of the library still running?) and no window is
 * open: 1 when it stopped pending (look again), 0 when a window is open (the
 * caller must search itself rather than wait). pending is asked with this
 * module's lock held, and must only read. */
LZ_HIDDEN int lz_dl_wait(int (*pending)(const void *ctx), const void *ctx);
/* Wake the waiters: a search ended (called after publishing). */
LZ_HIDDEN void lz_dl_wake(void);

/* Why this process may not call dlopen for us, or NULL: a child forked while
 * a window was open, or while the dynamic linker was adding or removing
 * objects for any thread (r_debug). */
LZ_HIDDEN const char *lz_dl_unsafe(void);

/* fork() handlers, called by lz_lock.c's: wait (bounded) until no window is
 * open and keep new ones from opening until the fork is over; in the child,
 * remember whether one was open. */
LZ_HIDDEN void lz_dl_prefork(void);
LZ_HIDDEN void lz_dl_parent(void);
LZ_HIDDEN void lz_dl_child(void);

/* A child whose fork handlers did not run for this copy of the runtime
 * (glibc runs only the handlers registered before fork()'s prepare phase
 * began: a copy registered by another thread during that phase is skipped)
 * still holds its parent's locks, waiters and searches. Called on every slow
 * path before a lock of this copy is taken: when the process is not the one
 * the state belongs to, one thread runs reset (the child handlers) and the
 * others wait for that thread, which exists in this process. */
LZ_HIDDEN void lz_dl_adopt(void);
/* Called when the fork handlers are installed (reset: the child handler) and
 * by the child handler itself: the state now belongs to this process (me,
 * its pid: the caller has it). */
LZ_HIDDEN void lz_dl_owned(void (*reset)(void), pid_t me);

/* Mark the calling thread as running a search (1) or not (0): lz_dl_adopt,
 * done when the search began, is then skipped (in its calls into the
 * dynamic linker and the lock that ends it). The mark it had, for the
 * caller to put back: a search can run inside another's (a chooser or a
 * log callback calling a second library of the same runtime). */
LZ_HIDDEN int lz_dl_searching(int on);

/* 1 while the calling thread runs a search (lz_dl_searching). */
LZ_HIDDEN int lz_dl_in_search(void);

/* The calling thread's epoch (lz_dl.c): it changes whenever the thread may
 * have become another process's or another search's; lz_dl_epoch_next
 * starts a new one after the program's code ran (its chooser). */
LZ_HIDDEN unsigned lz_dl_epoch(void);
LZ_HIDDEN void lz_dl_epoch_next(void);

/* 1 while the calling thread is inside lz_dlopen (an indirect function's
 * resolver, called while the objects it loads are relocated, asks). */
LZ_HIDDEN int lz_dl_opening(void);

/* What the calling thread does before each of its calls into the dynamic
 * linker that take ld.so's lock (dlopen, dlclose, dlsym, dlvsym, dlinfo):
 * take() answers 1 (something taken, handed to give() after the call), 0
 * (nothing taken) or -1 (the call would wait for good: it is not made, and
 * answers as one that failed). NULL: none. Set by a search around itself;
 * the guard is the caller's, of a layer above this one. */
typedef struct lz_dl_guard {
    int (*take)(void);
    void (*give)(int taken);
} lz_dl_guard;
LZ_HIDDEN const lz_dl_guard *lz_dl_guarded(const lz_dl_guard *guard); /* the one it had */

/* How long fork() waits for a window to close, in milliseconds. */
#define LZ_FORK_WAIT_MS 2000

#endif
