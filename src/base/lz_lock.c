/* SPDX-License-Identifier: MIT */
/* Each library's lock, and keeping it usable across fork(): the libraries
 * this runtime copy has touched and the fork handlers that reset them. */
#include "base/lz_lock.h"
#include "base/lz_dl.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

/* The constructor's calls into the C library are bound when the dynamic
 * linker relocates this object, not through the PLT at their first call:
 * in a program that binds nothing lazily before it exits, the shim's
 * constructor made the process's first lazy binding (the trampoline that
 * saves every vector register, the resolver's code run cold): 0.2-0.6 %
 * of the start-up of a program linked to the shared shim, in paired runs
 * (docs/concepts/performance.md, "Beside Implib.so"). pthread_atfork is, since
 * glibc 2.34, a static wrapper of libc_nonshared.a that calls
 * __register_atfork through the PLT: the wrapper is written out here, as
 * glibc writes it. A compiler without the attribute (clang) calls through
 * the PLT, as before. */
#if defined(__has_attribute)
#if __has_attribute(noplt)
#define LZ_NOPLT __attribute__((noplt))
#endif
#endif
#ifndef LZ_NOPLT
#define LZ_NOPLT
#endif
extern __typeof(getpid) getpid LZ_NOPLT;
#ifdef __GLIBC__
extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
                             void *dso) LZ_NOPLT;
extern void *__dso_handle __attribute__((weak, visibility("hidden")));
static int lz_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    /* the object's handle: glibc drops its handlers when it is unloaded */
    return __register_atfork(prepare, parent, child, &__dso_handle == NULL ? NULL : __dso_handle);
}
#else
#define lz_atfork pthread_atfork
#endif

/* Fork safety: the libraries this runtime has touched, and fork handlers.
 * fork() waits (bounded) for our calls into the dynamic linker to end
 * (lz_dl.c) but never for a lock of ours: none is held across anything that
 * could wait. The child, which has only the forking thread, gives every
 * library fresh synchronisation and forgets the searches of threads it does
 * not have: a library loaded before the fork stays loaded; one that was
 * being searched for is searched for again on the child's first call.
 * glibc skips, in a child, the handlers registered while fork() was already
 * under way (another runtime copy's prepare handler was waiting): every slow
 * path first checks that the state is this process's (lz_dl_adopt) and
 * resets it itself when it is not. */
#define LZ_MAX_LIBS 16
static const lz_lib *lz_libs[LZ_MAX_LIBS] LZ_STARTUP_DATA;
static int lz_nlibs LZ_STARTUP_DATA;
static pthread_mutex_t lz_registry LZ_STARTUP_DATA = PTHREAD_MUTEX_INITIALIZER;
/* 1 once this copy's fork handlers are installed; while a thread installs
 * them, minus the pid of its process (a child forked meanwhile finds its
 * parent's pid there and installs them itself). Not pthread_once, whose
 * wake-up is a system call in every process's start-up, per shim. */
static int lz_atfork_state LZ_STARTUP_DATA;

static void fork_prepare(void)
{
    lz_dl_prefork();
    pthread_mutex_lock(&lz_registry);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lz_registry);
    lz_dl_parent();
}

static void fork_child(void)
{
    static const pthread_mutex_t fresh_mu = PTHREAD_MUTEX_INITIALIZER;
    lz_dl_child();
    for (int i = 0; i < lz_nlibs; i++) {
        lz_state *st = lz_libs[i]->st;
        /* A publication forked half-way: its commit finished here, where the
         * parent's thread cannot (lz_runtime.h, lz_ready), so the library's
         * variables are whole when this process loads it. */
        if (st->committing && st->ready)
            st->ready->commit(lz_libs[i], st->committing);
        st->committing = NULL;
        st->mu = fresh_mu;
        st->loaders = 0;
        st->active = NULL;
    }
    lz_registry = fresh_mu;
    lz_dl_owned(fork_child, getpid());
}

static void install_atfork(void)
{
    if (__atomic_load_n(&lz_atfork_state, __ATOMIC_ACQUIRE) == 1)
        return;
    int me = (int)getpid();
    for (;;) {
        int s = __atomic_load_n(&lz_atfork_state, __ATOMIC_ACQUIRE);
        if (s == 1)
            return;
        if (s == -me) { /* another thread of this process is installing them */
            sched_yield();
            continue;
        }
        if (__atomic_compare_exchange_n(&lz_atfork_state, &s, -me, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            lz_dl_owned(fork_child, me);
            lz_atfork(fork_prepare, fork_parent, fork_child);
            __atomic_store_n(&lz_atfork_state, 1, __ATOMIC_RELEASE);
            return;
        }
    }
}

/* The handlers are installed when the object holding this runtime is
 * loaded, not at its first call: a child must always be able to tell that
 * it is one (lz_dl_adopt), even for a copy it never called in the parent,
 * so that it never dlopens over a dynamic linker another thread had
 * half-way through a change at fork(). Cost: one pthread_atfork. */
__attribute__((constructor)) static void lz_fork_init(void)
{
    install_atfork();
}

/* Called before a library's lock is first taken (slow paths only). */
static void lz_register(const lz_lib *lib)
{
    install_atfork();
    pthread_mutex_lock(&lz_registry);
    int known = 0;
    for (int i = 0; i < lz_nlibs; i++)
        known |= lz_libs[i] == lib;
    if (!known && lz_nlibs < LZ_MAX_LIBS)
        lz_libs[lz_nlibs++] = lib;
    pthread_mutex_unlock(&lz_registry);
}

/* The lock of a library, with cancellation off while it is held (nothing
 * under it is a cancellation point today; this keeps it so). Returns the old
 * cancellation state for lz_unlock. */
int lz_lock(const lz_lib *lib)
{
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    /* Handlers registered while another thread was forking are not run in
     * that child: the state may still be the parent's. */
    lz_dl_adopt();
    lz_register(lib);
    pthread_mutex_lock(&lib->st->mu);
    return old;
}

void lz_unlock(const lz_lib *lib, int cancel_state)
{
    pthread_mutex_unlock(&lib->st->mu);
    pthread_setcancelstate(cancel_state, NULL);
}
