/* SPDX-License-Identifier: MIT */
/* Loading a library once, and the control API around it.
 *
 * The protocol (modelled in tests/model/load.pml, docs/reliability.md):
 * a first call that finds the library untried runs the search itself, with
 * no lock held; a thread that arrives while another is searching waits for
 * it only while that searcher is outside the dynamic linker (it might be
 * waiting for the loader lock that the arriving thread holds); otherwise it
 * searches too. dlopen returns the same object for the same file, so the
 * searches agree; the first to finish publishes its result under the lock,
 * and the others drop their reference. A retry (lazynccl_load after a
 * failure) starts a new generation: a search of an older one publishes
 * nothing and starts again. */
#include "lz_load.h"
#include "lz_candidate.h"
#include "lz_report.h"
#include "lz_search.h"
#include "lz_ld.h"
#include "lz_objects.h"
#include "lz_pathlist.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fork safety: the libraries this runtime has touched, and fork handlers.
 * fork() waits (bounded) for our calls into the dynamic linker to end
 * (lz_ld.c) but never for a lock of ours: none is held across anything that
 * could wait. The child, which has only the forking thread, gives every
 * library fresh synchronisation and forgets the searches of threads it does
 * not have: a library loaded before the fork stays loaded; one that was
 * being searched for is searched for again on the child's first call.
 * glibc skips, in a child, the handlers registered while fork() was already
 * under way (another runtime copy's prepare handler was waiting): every slow
 * path first checks that the state is this process's (lz_ld_adopt) and
 * resets it itself when it is not. */
#define LZ_MAX_LIBS 16
static const lz_lib *lz_libs[LZ_MAX_LIBS];
static int lz_nlibs;
static pthread_mutex_t lz_registry = PTHREAD_MUTEX_INITIALIZER;
/* 1 once this copy's fork handlers are installed; while a thread installs
 * them, minus the pid of its process (a child forked meanwhile finds its
 * parent's pid there and installs them itself). Not pthread_once, whose
 * wake-up is a system call in every process's start-up, per shim. */
static int lz_atfork_state LZ_STARTUP_DATA;

static void fork_prepare(void)
{
    lz_ld_prefork();
    pthread_mutex_lock(&lz_registry);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lz_registry);
    lz_ld_parent();
}

static void fork_child(void)
{
    static const pthread_mutex_t fresh_mu = PTHREAD_MUTEX_INITIALIZER;
    lz_ld_child();
    for (int i = 0; i < lz_nlibs; i++) {
        lz_state *st = lz_libs[i]->st;
        st->mu = fresh_mu;
        st->loaders = 0;
        st->active = NULL;
    }
    lz_registry = fresh_mu;
    lz_ld_owned(fork_child, getpid());
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
            lz_ld_owned(fork_child, me);
            pthread_atfork(fork_prepare, fork_parent, fork_child);
            __atomic_store_n(&lz_atfork_state, 1, __ATOMIC_RELEASE);
            return;
        }
    }
}

/* The handlers are installed when the object holding this runtime is
 * loaded, not at its first call: a child must always be able to tell that
 * it is one (lz_ld_adopt), even for a copy it never called in the parent,
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

static int status_of(const lz_lib *lib)
{
    return __atomic_load_n(&lib->st->status, __ATOMIC_ACQUIRE);
}

/* The lock of a library, with cancellation off while it is held (nothing
 * under it is a cancellation point today; this keeps it so). Returns the old
 * cancellation state for lz_unlock. */
int lz_lock(const lz_lib *lib)
{
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    /* Handlers registered while another thread was forking are not run in
     * that child: the state may still be the parent's (issue 24). */
    lz_ld_adopt();
    lz_register(lib);
    pthread_mutex_lock(&lib->st->mu);
    return old;
}

void lz_unlock(const lz_lib *lib, int cancel_state)
{
    pthread_mutex_unlock(&lib->st->mu);
    pthread_setcancelstate(cancel_state, NULL);
}

/* Whether the calling thread is running a search for lib (mu held). */
static int self_loading(const lz_state *st)
{
    for (const lz_loader *l = st->active; l; l = l->next)
        if (pthread_equal(l->thread, pthread_self()))
            return 1;
    return 0;
}

static void unlink_loader(lz_state *st, lz_loader *me)
{
    for (lz_loader **pp = &st->active; *pp; pp = &(*pp)->next)
        if (*pp == me) {
            *pp = me->next;
            return;
        }
}

/* The versioned names loaded objects import from us (marks over lib->syms),
 * so that the first call, whichever it is, loads a library that serves them. */
static unsigned char *imported_names(const lz_lib *lib)
{
    /* Only a library with versioned names has any to mark (nvJitLink's;
     * not NCCL's): nothing to allocate or walk for the others. */
    size_t versioned = 0;
    for (size_t i = 0; i < lib->nsyms && !versioned; i++)
        versioned = lib->syms[i].major >= 0;
    if (!versioned)
        return NULL;
    unsigned char *marks = calloc(lib->nsyms, 1);
    if (marks)
        lz_objects_imports(lib, marks);
    return marks;
}

/* One round of a search, run with no lock held. list is the caller's copy
 * of the search list. The report is written into text. */
static void run_search(const lz_lib *lib, const lz_sym *want, const char *list, lz_walk *w,
                       char *text, size_t size)
{
    w->req.want = want;
    w->req.search_list = list;
    w->rep.text = text;
    w->rep.size = size;
    /* No text: search_and_open saw the log off (one getenv, not one per
     * note). */
    w->silent = !text && !w->req.on_event;
    if (text) {
        int n = snprintf(text, size, "%s: %s could not be loaded; candidates tried:\n",
                         lib->prefix, lib->display);
        w->rep.len = (size_t)n;
    }
    size_t start = w->rep.len;
    const char *unsafe = lz_ld_unsafe();
    if (unsafe) {
        lz_note(w, "%s", unsafe);
    } else {
        unsigned char *wanted = imported_names(lib);
        w->req.wanted = wanted;
        lz_search(w);
        w->req.wanted = NULL;
        free(wanted);
    }
    if (!w->res.found && w->rep.len == start)
        lz_note(w, LZ_NOTE_NOTHING_FOUND);
}

/* The failure report, for lz_state (it outlives the search). */
static lz_msg *keep_report(const char *text)
{
    size_t len = strlen(text);
    lz_msg *m = malloc(sizeof *m + len + 1);
    if (m) {
        m->next = NULL;
        memcpy(m->text, text, len + 1);
    }
    return m;
}

/* What a search ends with: the library opened (handle, and the path, step
 * and companions to publish, one allocation), or the failure report. */
typedef struct lz_outcome {
    void *handle;
    const char *step;
    char *path;              /* malloc'd; companions points into it */
    const char *companions;
    lz_msg *report;
} lz_outcome;

/* A round's walk and its report: on the heap, freed before the chosen file
 * is opened, so that the dynamic linker's allocations reuse its pages. The
 * text only where a report is wanted: a round is quiet (formats nothing)
 * unless the log is on, and a quiet round that finds nothing is run again
 * with a report, for the failure's message. */
typedef struct lz_round {
    lz_walk w;
    char text[];
} lz_round;

/* Search, then open what the walk chose, in rounds: a file whose dlopen
 * fails is skipped by the next round, which reports it with the reason.
 * The dlopen runs here, after the walk has returned, not at the bottom of
 * its calls: NCCL's dlopen is a few milliseconds, and on a virtual machine
 * every fresh page of stack or heap it would otherwise touch below the
 * walk costs about 11 us (docs/performance.md, "First calls"). */
static void search_and_open(const lz_lib *lib, const lz_sym *want, const char *list,
                            lz_outcome *out)
{
    lz_skip *skips = NULL;
    int nskips = 0;
    int report = lz_logging(lib);
    for (;;) {
        lz_round *r = malloc(sizeof *r + (report ? LZ_MESSAGE_MAX : 0));
        if (!r) {
            lz_log(lib, "%s could not be loaded: out of memory", lib->display);
            break;
        }
        lz_walk_init(&r->w, lib, NULL);
        r->w.req.skips = skips;
        r->w.req.nskips = nskips;
        run_search(lib, want, list, &r->w, report ? r->text : NULL, LZ_MESSAGE_MAX);
        if (!r->w.res.found && !report) {
            free(r);
            report = 1;
            continue;
        }
        if (!r->w.res.found) {
            out->report = r->text[0] ? keep_report(r->text) : NULL;
            free(r);
            break;
        }
        const lz_result *f = &r->w.res;
        const char *step = f->step;
        int probed = f->probed, ncomp = f->ncompanions;
        unsigned long long dev = f->dev, ino = f->ino;
        void *comp[LZ_MAX_COMPANIONS];
        memcpy(comp, f->companion_handles, sizeof comp);
        size_t plen = strlen(f->path);
        char *path = malloc(plen + 1 + f->companions_len + 1);
        if (path) {
            memcpy(path, f->path, plen + 1);
            memcpy(path + plen + 1, f->companions, f->companions_len);
            path[plen + 1 + f->companions_len] = '\0';
        }
        free(r);
        char why[512];
        void *h = path ? lz_open_chosen(lib, path, probed, dev, ino, why, sizeof why) : NULL;
        if (h) {
            lz_log(lib, "[%s] %s: chosen", step, path);
            out->handle = h;
            out->step = step;
            out->path = path;
            out->companions = path + plen + 1;
            break;
        }
        while (ncomp > 0)
            lz_dlclose(comp[--ncomp]);
        lz_skip *more = realloc(skips, (size_t)(nskips + 1) * sizeof *skips);
        if (!more) {
            free(path);
            lz_log(lib, "%s could not be loaded: out of memory", lib->display);
            break;
        }
        skips = more;
        skips[nskips].dev = dev;
        skips[nskips].ino = ino;
        snprintf(skips[nskips].reason, sizeof skips[nskips].reason, "%s",
                 path ? why : "out of memory");
        free(path);
        nskips++;
    }
    free(skips);
}

static int ensure_loaded(const lz_lib *lib, const lz_sym *want);

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
    s = ensure_loaded(lib, want);
    pthread_setcancelstate(cs, NULL);
    return s;
}

static int ensure_loaded(const lz_lib *lib, const lz_sym *want)
{
    lz_state *st = lib->st;
    int may_wait = 1;
    for (;;) {
        int s = status_of(lib);
        if (s != LZ_UNTRIED)
            return s;
        int cs = lz_lock(lib);
        if (self_loading(st)) {
            lz_unlock(lib, cs);
            return LZ_REENTERED;
        }
        if (status_of(lib) != LZ_UNTRIED) {
            lz_unlock(lib, cs);
            continue;
        }
        if (st->loaders > 0 && may_wait) {
            lz_unlock(lib, cs);
            /* Wait for that search unless a thread of ours is inside the
             * dynamic linker: then search too (dlopen will hand both of us
             * the same object). */
            may_wait = lz_ld_wait(lib);
            continue;
        }
        lz_loader me = {st->active, pthread_self()};
        st->active = &me;
        __atomic_store_n(&st->loaders, st->loaders + 1, __ATOMIC_RELEASE);
        unsigned gen = st->gen;
        char *list = st->search_list ? strdup(st->search_list) : NULL;
        int list_lost = st->search_list && !list;
        lz_unlock(lib, cs);

        lz_outcome out = {0};
        lz_ld_searching(1);
        if (!list_lost)
            search_and_open(lib, want, list, &out);
        lz_ld_searching(0);
        free(list);
        lz_msg *report = out.report;

        cs = lz_lock(lib);
        unlink_loader(st, &me);
        __atomic_store_n(&st->loaders, st->loaders - 1, __ATOMIC_RELEASE);
        int published = gen == st->gen && status_of(lib) == LZ_UNTRIED;
        if (published && out.handle) {
            st->handle = out.handle;
            st->step = out.step;
            st->path = out.path; /* kept: published with the status */
            st->companion_files = out.companions;
            __atomic_store_n(&st->companions_pending, out.companions[0] != '\0',
                             __ATOMIC_RELEASE);
            __atomic_store_n(&st->status, LZ_LOADED, __ATOMIC_RELEASE);
        } else if (published) {
            if (report) {
                report->next = st->fail_msg;
                __atomic_store_n(&st->fail_msg, report, __ATOMIC_RELEASE);
                report = NULL;
            }
            __atomic_store_n(&st->status, LZ_FAILED, __ATOMIC_RELEASE);
        }
        lz_unlock(lib, cs);
        lz_ld_wake();

        free(report);
        if (!published) {
            /* Another search won (the same object: dlopen counted us), or a
             * retry made ours stale. */
            if (out.handle)
                lz_dlclose(out.handle);
            free(out.path);
            may_wait = 1;
            continue;
        }
        if (out.handle)
            lz_log(lib, "loaded %s (found by: %s)", out.path, out.step);
        else
            lz_log(lib, "%s is unavailable", lib->display);
        if (!out.handle)
            free(out.path); /* a loaded library's is st->path now */
        return out.handle ? LZ_LOADED : LZ_FAILED;
    }
}

int lz_publish_failure(const lz_lib *lib, size_t i)
{
    int cs = lz_lock(lib);
    /* Under the lock: a retry resets slots under it too, so a failure read
     * before a retry is never published over the retry's success. */
    int still = status_of(lib) == LZ_FAILED;
    if (still) {
        lz_fn expect = lz_fn_at(lib->resolvers, i);
        __atomic_compare_exchange_n(&lib->slots[i], &expect, lz_fn_at(lib->fails, i), 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
    lz_unlock(lib, cs);
    return still;
}

char *lz_search_list_copy(const lz_lib *lib, int *lost)
{
    int cs = lz_lock(lib);
    char *list = lib->st->search_list ? strdup(lib->st->search_list) : NULL;
    *lost = lib->st->search_list && !list;
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

unsigned char *lz_imported_names(const lz_lib *lib)
{
    return imported_names(lib);
}
