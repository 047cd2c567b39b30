/* SPDX-License-Identifier: MIT */
/* Windows around the runtime's calls into the dynamic linker (lz_dl.h). */
#include "base/lz_dl.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

/* gate_open: threads of ours inside dlopen/dlclose/dlsym. One condition
 * serves both who waits on it: fork() (for gate_open to reach 0) and the
 * threads waiting for another's search (for it to end, or a window to open). */
static pthread_mutex_t gate_mu LZ_STARTUP_DATA = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv LZ_STARTUP_DATA = PTHREAD_COND_INITIALIZER;
static int gate_open LZ_STARTUP_DATA;
/* From fork()'s prepare handler to its parent handler: no window opens (for
 * at most LZ_FORK_WAIT_MS, so that nothing can deadlock on it). */
static int fork_pending LZ_STARTUP_DATA;
static struct timespec fork_deadline LZ_STARTUP_DATA;
/* Set in a child forked while the dynamic linker was mid-change. */
static int forked_mid_ld LZ_STARTUP_DATA;

/* The process this copy's state belongs to: claimed by the thread that
 * resets it in a child, ready once that reset is done (lz_dl_adopt). */
static pid_t owner_claim LZ_STARTUP_DATA, owner_ready LZ_STARTUP_DATA;
static void (*owner_reset)(void) LZ_STARTUP_DATA;

void lz_dl_owned(void (*reset)(void), pid_t me)
{
    __atomic_store_n(&owner_reset, reset, __ATOMIC_RELAXED);
    __atomic_store_n(&owner_claim, me, __ATOMIC_RELAXED);
    __atomic_store_n(&owner_ready, me, __ATOMIC_RELEASE);
}

/* Set while this thread runs a search: it began under lz_lock, which
 * adopted the state, and the process cannot change under the thread before
 * the search ends except by this thread forking (from a log callback), for
 * which this copy's fork handlers, registered long before, run. So
 * lz_dl_adopt skips its check (a getpid: a system call apiece)
 * inside a search: in its windows and in the lock that ends it (lz_once.c).
 * Not while a fork is under way: in the child, a handler the program
 * registered before this copy's runs before this copy's child handler, and
 * may make a first call of another library of this copy (whose lock the
 * prepare handler holds) on a thread that still reads as searching. */
static __thread int searching;

/* Set while this thread is inside lz_dlopen: the objects being relocated
 * may be a candidate the search refuses and closes once loaded. */
static __thread int opening;

int lz_dl_opening(void)
{
    return opening;
}

/* The thread's epoch: a new one each time the thread may have become
 * another process's or another search's (a search begins or ends, a
 * child's fork handler, a library's constructors, the program's chooser),
 * any of which can fork, with _Fork without a fork handler: what a search
 * keeps about its thread (lz_ldlock.c's id) holds for one epoch. */
static __thread unsigned epoch;

unsigned lz_dl_epoch(void)
{
    return epoch;
}

void lz_dl_epoch_next(void)
{
    epoch++;
}

int lz_dl_searching(int on)
{
    int was = searching;
    searching = on;
    if (!was || !on)
        epoch++;
    return was;
}

int lz_dl_in_search(void)
{
    return searching;
}

void lz_dl_adopt(void)
{
    if (searching && !__atomic_load_n(&fork_pending, __ATOMIC_RELAXED))
        return;
    pid_t me = getpid();
    if (__atomic_load_n(&owner_ready, __ATOMIC_ACQUIRE) == me)
        return;
    pid_t claim = __atomic_load_n(&owner_claim, __ATOMIC_RELAXED);
    if (claim == 0)
        return; /* handlers not installed yet: no state to inherit */
    if (claim != me && __atomic_compare_exchange_n(&owner_claim, &claim, me, 0,
                                                   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        __atomic_load_n(&owner_reset, __ATOMIC_RELAXED)(); /* ends with lz_dl_owned */
        return;
    }
    /* Another thread of this process claimed it: wait for it (it exists). */
    while (__atomic_load_n(&owner_ready, __ATOMIC_ACQUIRE) != me)
        sched_yield();
}

/* The dynamic linker's live r_debug, found as debuggers find it: through
 * the main program's DT_DEBUG entry. The symbol _r_debug is no substitute:
 * an executable that references it (a vendored runtime compiled into the
 * program) gets a copy relocation, a snapshot taken at start-up that the
 * dynamic linker never updates, and every shared object then binds to that
 * stale copy too. */
static const struct r_debug *live_r_debug(void)
{
    static const struct r_debug *found;
    const struct r_debug *r = __atomic_load_n(&found, __ATOMIC_ACQUIRE);
    if (r)
        return r;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    size_t n = getauxval(AT_PHNUM);
    ElfW(Addr) bias = 0;
    const ElfW(Phdr) *dyn = NULL;
    for (size_t i = 0; ph && i < n; i++) {
        if (ph[i].p_type == PT_PHDR)
            bias = (ElfW(Addr))ph - ph[i].p_vaddr;
        else if (ph[i].p_type == PT_DYNAMIC)
            dyn = &ph[i];
    }
    r = &_r_debug;
    for (const ElfW(Dyn) *d = dyn ? (const ElfW(Dyn) *)(bias + dyn->p_vaddr) : NULL;
         d && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_DEBUG && d->d_un.d_ptr)
            r = (const struct r_debug *)d->d_un.d_ptr;
    __atomic_store_n(&found, r, __ATOMIC_RELEASE);
    return r;
}

static __thread const lz_dl_guard *guard;

const lz_dl_guard *lz_dl_guarded(const lz_dl_guard *g)
{
    const lz_dl_guard *was = guard;
    guard = g;
    return was;
}

/* The window around a call into the dynamic linker: enter's answer (the
 * guard's: -1, the call is not made) goes to leave. */
static void open_window(void)
{
    lz_dl_adopt(); /* a resolution after the load takes no lock before this */
    pthread_mutex_lock(&gate_mu);
    while (fork_pending)
        if (pthread_cond_timedwait(&gate_cv, &gate_mu, &fork_deadline) == ETIMEDOUT)
            break;
    gate_open++;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

static void close_window(void)
{
    pthread_mutex_lock(&gate_mu);
    if (--gate_open == 0)
        pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

/* Guarded calls (those that take ld.so's lock): the guard's answer, the
 * window open unless it is -1. The window first: a thread waiting for this
 * one's search sees it inside the dynamic linker while the guard waits for
 * the lock, and searches too (lz_dl_wait), rather than wait for a search
 * that waits for a holder that waits for it. */
static int enter(void)
{
    open_window();
    const lz_dl_guard *g = guard;
    int taken = g ? g->take() : 0;
    if (taken < 0)
        close_window();
    return taken;
}

static void leave(int taken)
{
    close_window();
    const lz_dl_guard *g = guard;
    if (g)
        g->give(taken);
}

int lz_dl_wait(int (*pending)(const void *ctx), const void *ctx)
{
    int cs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
    pthread_mutex_lock(&gate_mu);
    while (gate_open == 0 && pending(ctx))
        pthread_cond_wait(&gate_cv, &gate_mu);
    int ended = gate_open == 0;
    pthread_mutex_unlock(&gate_mu);
    pthread_setcancelstate(cs, NULL);
    return ended;
}

void lz_dl_wake(void)
{
    pthread_mutex_lock(&gate_mu);
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

const char *lz_dl_unsafe(void)
{
    if (__atomic_load_n(&forked_mid_ld, __ATOMIC_RELAXED))
        return "not loaded in this process: it was forked while another thread was inside "
               "dlopen() or dlclose(), and glibc leaves a child's dynamic linker half-way "
               "through that change (a dlopen here could abort the process); load before "
               "fork(), or after exec()";
    return NULL;
}

void *lz_dlopen(const char *path, int flags, const char **why)
{
    const char *unsafe = lz_dl_unsafe();
    if (unsafe) {
        *why = unsafe;
        return NULL;
    }
    int taken = enter();
    if (taken < 0) {
        *why = "the dynamic linker's lock is held by a thread that waits for this one";
        return NULL;
    }
    opening++;
    void *h = dlopen(path, flags);
    opening--;
    epoch++; /* the library's constructors ran */
    const char *e = h ? NULL : dlerror();
    leave(taken);
    *why = e ? e : "dlopen failed";
    return h;
}

int lz_dl_path_of(void *handle, char *out, size_t size)
{
    struct link_map *lm = NULL;
    /* RTLD_DEFAULT and RTLD_NEXT are no objects: dlinfo would read them as one. */
    if (!handle || handle == RTLD_NEXT || lz_dl_unsafe())
        return 0;
    int taken = enter();
    if (taken < 0)
        return 0;
    int ok = dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0] &&
             strlen(lm->l_name) < size;
    if (ok)
        memcpy(out, lm->l_name, strlen(lm->l_name) + 1);
    else
        dlerror(); /* cleared: the program's next dlerror is its own */
    /* Opened by a relative name ("./libx.so"): named from its origin, the
     * directory the dynamic linker made absolute when it loaded it (the
     * current directory may have changed since). */
    if (ok && out[0] != '/') {
        /* On the heap: a first call may run on the smallest thread stack. */
        char *origin = malloc(PATH_MAX), base[NAME_MAX + 1];
        const char *slash = strrchr(out, '/');
        ok = origin && snprintf(base, sizeof base, "%s", slash ? slash + 1 : out) < (int)sizeof base &&
             dlinfo(handle, RTLD_DI_ORIGIN, origin) == 0 &&
             snprintf(out, size, "%s/%s", origin, base) < (int)size;
        if (!ok)
            dlerror();
        free(origin);
    }
    leave(taken);
    return ok;
}

void lz_dlclose(void *handle)
{
    if (!handle || lz_dl_unsafe())
        return; /* a reference kept is harmless; an inconsistent linker is not */
    int taken = enter();
    if (taken < 0)
        return; /* a reference kept, as above */
    dlclose(handle);
    leave(taken);
}

void *lz_dlsym(void *handle, const char *name)
{
    int taken = enter();
    if (taken < 0)
        return NULL;
    void *p = dlsym(handle, name);
    leave(taken);
    return p;
}

void *lz_dlvsym(void *handle, const char *name, const char *version)
{
    int taken = enter();
    if (taken < 0)
        return NULL;
    void *p = dlvsym(handle, name, version);
    leave(taken);
    return p;
}

int lz_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    /* Unguarded: it takes ld.so's other lock, which no holder of the first
     * keeps while running a constructor or destructor. */
    open_window();
    int rc = dl_iterate_phdr(cb, data);
    close_window();
    return rc;
}

void lz_dl_prefork(void)
{
    live_r_debug(); /* found before the child needs it */
    /* Bounded: an allocator that takes its locks before the fork handlers
     * run (ASan's, TSan's) can stop a thread inside dlopen until the fork is
     * over. Past the deadline the child is told (lz_dl_child). */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += LZ_FORK_WAIT_MS / 1000;
    until.tv_nsec += (long)(LZ_FORK_WAIT_MS % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&gate_mu);
    while (gate_open > 0)
        if (pthread_cond_timedwait(&gate_cv, &gate_mu, &until) == ETIMEDOUT)
            break;
    __atomic_store_n(&fork_pending, 1, __ATOMIC_RELAXED); /* read unlocked by lz_dl_adopt */
    fork_deadline = until;
    pthread_mutex_unlock(&gate_mu);
}

void lz_dl_parent(void)
{
    pthread_mutex_lock(&gate_mu);
    __atomic_store_n(&fork_pending, 0, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

void lz_dl_child(void)
{
    static const pthread_mutex_t fresh_mu = PTHREAD_MUTEX_INITIALIZER;
    static const pthread_cond_t fresh_cv = PTHREAD_COND_INITIALIZER;
    epoch++;
    /* Ours, by the count; any thread's while it adds or removes objects,
     * by the dynamic linker's own debugger interface. */
    if (__atomic_load_n(&gate_open, __ATOMIC_RELAXED) > 0 ||
        live_r_debug()->r_state != RT_CONSISTENT)
        __atomic_store_n(&forked_mid_ld, 1, __ATOMIC_RELAXED);
    gate_open = 0;
    __atomic_store_n(&fork_pending, 0, __ATOMIC_RELAXED);
    gate_mu = fresh_mu;
    gate_cv = fresh_cv;
}
