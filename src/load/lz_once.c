/* SPDX-License-Identifier: MIT */
/* Loading a library once: who searches, who waits, what is published
 * (the control API that starts a load is lz_api.c's).
 *
 * The protocol (modelled in tests/model/load.pml, docs/concepts/reliability.md):
 * a first call that finds the library untried runs the search itself, with
 * no lock held; a thread that arrives while another is searching waits for
 * it only while that searcher is outside the dynamic linker (it might be
 * waiting for the loader lock that the arriving thread holds); otherwise it
 * searches too. dlopen returns the same object for the same file, so the
 * searches agree; the first to finish publishes its result under the lock,
 * and the others drop their reference. Publishing first does, under that
 * lock, what must precede any call (the library's variables filled, from
 * a plan each search prepares outside it): a thread that reads the status
 * loaded finds the library ready to run. A retry (lazynccl_load after a
 * failure) starts a new generation: a search of an older one publishes
 * nothing and starts again, keeping what it loaded (a library the runtime
 * has loaded is never unloaded). */
#include "load/lz_once.h"
#include "process/lz_ldlock.h"
#include "process/lz_objects.h"
#include "load/lz_open.h"
#include "base/lz_dl.h"
#include "base/lz_lock.h"
#include "base/lz_log.h"

#include <stdlib.h>
#include <string.h>

enum { REFUSED_SIZE = 512 }; /* why a search was cut short */

static int status_of(const lz_lib *lib)
{
    return __atomic_load_n(&lib->st->status, __ATOMIC_ACQUIRE);
}

/* Whether the calling thread is running a search for lib (mu held). */
static int self_loading(const lz_state *st)
{
    for (const lz_loader *l = st->active; l; l = l->next)
        if (pthread_equal(l->thread, pthread_self()))
            return 1;
    return 0;
}

/* A copy of the program's search list (mu held): NULL when it set none, or
 * with *lost set when it could not be copied. */
static char *list_copy(const lz_state *st, int *lost)
{
    char *list = st->search_list ? strdup(st->search_list) : NULL;
    *lost = st->search_list && !list;
    return list;
}

/* A search this thread runs: it is on the library's list of searchers
 * (me, on this thread's stack) for one generation, with its own copy of
 * the program's search list. */
typedef struct lz_turn {
    lz_loader me;
    unsigned gen;
    char *list;
    int list_lost;           /* the program set a list that could not be copied */
} lz_turn;

/* take_turn's answers besides a status to return. */
enum { LZ_LOOK_AGAIN = -1, LZ_SEARCH = -2 };

/* The load protocol's reason to wait (lz_dl_wait asks it): the library is
 * untried and another thread's search of it is running. */
static int searched_elsewhere(const void *ctx)
{
    const lz_state *st = ((const lz_lib *)ctx)->st;
    return __atomic_load_n(&st->status, __ATOMIC_ACQUIRE) == LZ_UNTRIED &&
           __atomic_load_n(&st->loaders, __ATOMIC_ACQUIRE) > 0;
}

/* Whether this thread searches: a status to return (loaded, failed, or
 * reentered from inside its own search), LZ_LOOK_AGAIN (another thread
 * published or was waited for), or LZ_SEARCH with t filled in and this
 * thread registered as a searcher. */
static int take_turn(const lz_lib *lib, int *may_wait, lz_turn *t)
{
    lz_state *st = lib->st;
    int s = status_of(lib);
    if (s != LZ_UNTRIED)
        return s;
    int cs = lz_lock(lib);
    int wait = 0;
    if (self_loading(st)) {
        s = LZ_REENTERED;
    } else if (status_of(lib) != LZ_UNTRIED) {
        s = LZ_LOOK_AGAIN;
    } else if (st->loaders > 0 && *may_wait) {
        s = LZ_LOOK_AGAIN;
        wait = 1;
    } else {
        t->me = (lz_loader){st->active, pthread_self()};
        st->active = &t->me;
        __atomic_store_n(&st->loaders, st->loaders + 1, __ATOMIC_RELEASE);
        t->gen = st->gen;
        t->list = list_copy(st, &t->list_lost);
        s = LZ_SEARCH;
    }
    lz_unlock(lib, cs);
    /* Wait for that search unless a thread of ours is inside the dynamic
     * linker: then search too (dlopen will hand both of us the same
     * object). */
    if (wait)
        *may_wait = lz_dl_wait(searched_elsewhere, lib);
    return s;
}

/* The outcome becomes the library's (mu held): its handle and path, or its
 * failure report (out->report is then NULL). What must precede a call
 * (ready's commit of plan: the variables filled) is done before the status
 * says loaded, so that a thread that reads it loaded finds the library
 * ready; a child forked half-way through finds the plan in
 * st->committing and finishes it (lz_lock.c). */
static void publish(const lz_lib *lib, lz_outcome *out, const lz_ready *ready, void *plan)
{
    lz_state *st = lib->st;
    if (out->handle) {
        if (ready) {
            st->committing = plan;
            ready->commit(lib, plan);
        }
        st->handle = out->handle;
        st->step = out->step;
        st->path = out->path; /* kept: published with the status */
        st->companion_files = out->companions;
        __atomic_store_n(&st->companions_pending, out->companions[0] != '\0', __ATOMIC_RELEASE);
        __atomic_store_n(&st->status, LZ_LOADED, __ATOMIC_RELEASE);
        st->committing = NULL;
        return;
    }
    if (out->report) {
        out->report->next = st->fail_msg;
        __atomic_store_n(&st->fail_msg, out->report, __ATOMIC_RELEASE);
        out->report = NULL;
    }
    __atomic_store_n(&st->status, LZ_FAILED, __ATOMIC_RELEASE);
}

/* Leave the searchers and publish the outcome if the search is still
 * current (its generation, nothing published meanwhile): 1 when
 * published. Otherwise *drop says whether this search's handle may be
 * closed: only when the library published is the very object it opened,
 * so that closing drops a reference and never unloads. Wakes the threads
 * waiting for searches. */
static int end_turn(const lz_lib *lib, lz_turn *t, lz_outcome *out, const lz_ready *ready,
                    void *plan, int *drop)
{
    lz_state *st = lib->st;
    int cs = lz_lock(lib);
    for (lz_loader **pp = &st->active; *pp; pp = &(*pp)->next)
        if (*pp == &t->me) {
            *pp = t->me.next;
            break;
        }
    __atomic_store_n(&st->loaders, st->loaders - 1, __ATOMIC_RELEASE);
    int published = !out->busy && t->gen == st->gen && status_of(lib) == LZ_UNTRIED;
    if (published)
        publish(lib, out, ready, plan);
    *drop = !published && out->handle && status_of(lib) == LZ_LOADED && st->handle == out->handle;
    lz_unlock(lib, cs);
    lz_dl_wake();
    return published;
}

/* What the library's publication must do first (NULL: nothing), prepared
 * here, outside the lock, for the handle this search opened: the plan, with
 * *ready set. Out of memory, the search fails: a library whose variables
 * cannot be filled must not be called (its handle is kept: a library the
 * runtime has loaded is never unloaded). */
static void *get_ready(const lz_lib *lib, lz_outcome *out, const lz_ready **ready)
{
    const lz_ready *r = __atomic_load_n(&lib->st->ready, __ATOMIC_ACQUIRE);
    if (!out->handle || !r)
        return NULL;
    void *plan = r->prepare(lib, out->handle);
    if (plan) {
        *ready = r;
        return plan;
    }
    lz_log(lib, "%s could not be loaded: out of memory", lib->display);
    out->handle = NULL;
    free(out->path);
    out->path = NULL;
    return NULL;
}

static int ensure_loaded(const lz_lib *lib, const lz_sym *want)
{
    int may_wait = 1;
    for (;;) {
        lz_turn t;
        int s = take_turn(lib, &may_wait, &t);
        if (s == LZ_LOOK_AGAIN)
            continue;
        if (s != LZ_SEARCH)
            return s;

        lz_outcome out = {0};
        /* Every call of the search into the dynamic linker takes its lock
         * first, or is refused where the holder waits for this thread:
         * the holder cannot take it between a look and the call. The
         * thread's marks are put back after: this search may run inside
         * another's (its chooser or log callback calling a second library
         * of the same runtime: static shims linked together). */
        int was_searching = lz_dl_searching(1);
        lz_ldlock_mark outer = lz_ldlock_clear();
        const lz_dl_guard *outer_guard = lz_dl_guarded(lz_ldlock_guard());
        if (!t.list_lost)
            lz_search_and_open(lib, want, t.list, &out);
        free(t.list);
        const lz_ready *ready = NULL;
        void *plan = lz_ldlock_refused(NULL, 0) ? NULL : get_ready(lib, &out, &ready);
        lz_dl_guarded(outer_guard);
        /* Said on the heap, where said at all: the library's constructors
         * ran below this frame. */
        int busy = lz_ldlock_refused(NULL, 0);
        char *refused = busy ? malloc(REFUSED_SIZE) : NULL;
        if (refused)
            lz_ldlock_refused(refused, REFUSED_SIZE);
        lz_ldlock_restore(outer);
        if (busy) {
            /* A search cut short: nothing published, the next call searches
             * again (a handle it opened stays open: closing would wait). */
            out.busy = 1;
            free(out.report);
            out.report = NULL;
            if (ready)
                ready->discard(plan);
            ready = NULL;
            plan = NULL;
        }

        int drop;
        int published = end_turn(lib, &t, &out, ready, plan, &drop);
        lz_dl_searching(was_searching);
        if (!was_searching)
            lz_objects_search_end();
        if (busy) {
            free(out.path);
            if (status_of(lib) == LZ_LOADED) {
                free(refused);
                return LZ_LOADED; /* another thread's search, meanwhile */
            }
            lz_log(lib, "%s not loaded: %s", lib->display, refused ? refused : "out of memory");
            free(refused);
            return LZ_BUSY;
        }
        if (ready)
            ready->discard(plan);
        free(out.report); /* NULL when published */
        if (!published) {
            /* Another search won with the same object (dlopen counted us
             * twice: ours is dropped), or a retry made ours stale. A stale
             * search's library stays loaded: closing it could unload it
             * (its destructors run) for the next search to load it again
             * (its constructors run twice). */
            if (drop)
                lz_dlclose(out.handle);
            free(out.path);
            may_wait = 1;
            continue;
        }
        if (!out.handle) {
            lz_log(lib, "%s is unavailable", lib->display);
            return LZ_FAILED;
        }
        /* out.path is the library's now (st->path), never freed */
        lz_log(lib, "loaded %s (found by: %s)", out.path, out.step);
        return LZ_LOADED;
    }
}

/* Before any lock, ours or the dynamic linker's (a thread waiting for this
 * one may hold either): 1, said in the log, where the dynamic linker's lock
 * is held by a thread that waits for this one. Out of line, so that its
 * words are not on the stack under the load (the library's dlopen and
 * constructors run on top of this frame's caller). */
__attribute__((noinline)) static int ld_busy(const lz_lib *lib)
{
    char why[512];
    if (lz_ldlock_wait(why, sizeof why) == 0)
        return 0;
    lz_log(lib, "%s not loaded: %s", lib->display, why);
    return 1;
}

int lz_ensure_loaded(const lz_lib *lib, const lz_sym *want)
{
    /* One read: a failure may be reset to untried by a retry in between. */
    int s = status_of(lib);
    if (s != LZ_UNTRIED)
        return s;
    /* No cancellation during a search: a searcher that vanished would leave
     * its count behind, and waiters would wait for it forever. The request
     * is acted on at the caller's next cancellation point. */
    int cs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
    s = ld_busy(lib) ? LZ_BUSY : ensure_loaded(lib, want);
    pthread_setcancelstate(cs, NULL);
    return s;
}

int lz_publish_failure(const lz_lib *lib, size_t i)
{
    int cs = lz_lock(lib);
    /* Under the lock: a retry resets slots under it too, so a failure read
     * before a retry is never published over the retry's success. */
    int still = status_of(lib) == LZ_FAILED;
    lz_fn fail = lz_fn_at(lib->fails, i);
    if (still && fail) { /* none: the slot keeps its resolver, which stops */
        lz_fn expect = lz_fn_at(lib->resolvers, i);
        __atomic_compare_exchange_n(&lib->slots[i], &expect, fail, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
    lz_unlock(lib, cs);
    return still;
}

char *lz_search_list_copy(const lz_lib *lib, int *lost)
{
    int cs = lz_lock(lib);
    char *list = list_copy(lib->st, lost);
    lz_unlock(lib, cs);
    return list;
}

void lz_retry(const lz_lib *lib)
{
    lz_state *st = lib->st;
    int cs = lz_lock(lib);
    if (status_of(lib) == LZ_FAILED) {
        /* Calls that cached the failure resolve again; searches still
         * running belong to the old generation and will not publish. */
        for (size_t i = 0; i < lib->nsyms; i++)
            __atomic_store_n(&lib->slots[i], lz_fn_at(lib->resolvers, i), __ATOMIC_RELEASE);
        st->gen++;
        __atomic_store_n(&st->status, LZ_UNTRIED, __ATOMIC_RELEASE);
    }
    lz_unlock(lib, cs);
}

int lz_status(const lz_lib *lib)
{
    return status_of(lib);
}

int lz_self_loading(const lz_lib *lib)
{
    return self_loading(lib->st);
}
