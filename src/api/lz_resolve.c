/* SPDX-License-Identifier: MIT
 * Resolving one export on its first call, with the versioned-name policy
 * (docs/reference/search-order.md, "Versioned names"). */
#include "api/lz_resolve.h"
#include "api/lz_api.h"
#include "base/lz_msg.h"
#include "base/lz_asked.h"
#include "search/lz_companions.h"
#include "process/lz_needed.h"
#include "load/lz_once.h"
#include "base/lz_env.h"
#include "base/lz_startenv.h"
#include "base/lz_report.h"
#include "base/lz_log.h"
#include "base/lz_dl.h"
#include "process/lz_ldlock.h"
#include "process/lz_holder.h"
#include "process/lz_objects_imports.h"
#include "base/lz_text.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int strict_versions(const lz_lib *lib)
{
    const char *v = lz_getenv(lib->strict_env);
    return v && *v && strcmp(v, "0") != 0;
}

/* Record why a name could not be had. Each message is its own allocation,
 * published atomically and never changed, so a reader is never torn. */
static void add_symbol_message(const lz_lib *lib, const char *text)
{
    /* No lock: first calls of two names may fail at once. */
    lz_message_push(&lib->st->sym_msgs, text);
    lz_log(lib, "%s", text + strlen(lib->prefix) + 2);
}

static void symbol_failed(const lz_lib *lib, const char *name, const char *why)
{
    char text[1024];
    snprintf(text, sizeof text, "%s: %s: not exported by %s%s", lib->prefix, name, lib->st->path,
             why);
    add_symbol_message(lib, text);
}

/* Another member of the family: for a versioned name, an older version of the
 * same major; for the unversioned name, the newest version. The table lists a
 * family's members by ascending version, so walk it backwards. */
static void *family_fallback(const lz_lib *lib, const lz_sym *want)
{
    void *handle = lib->st->handle;
    for (size_t j = lib->nsyms; j-- > 0;) {
        const lz_sym *s = &lib->syms[j];
        if (!s->family || s->major < 0 || s->family != want->family)
            continue;
        if (want->major >= 0 && (s->major != want->major || s->minor >= want->minor))
            continue;
        void *p = lz_dlsym(handle, lz_sym_name(lib, s));
        if (p) {
            lz_log(lib, "%s: not exported by %s; using %s", lz_sym_name(lib, want), lib->st->path,
                   lz_sym_name(lib, s));
            return p;
        }
    }
    return NULL;
}

/* The loaded library's definition of name: dlsym's, or, where dlsym would
 * wait for good (the dynamic linker's lock held by a thread joining this
 * one: lz_ldlock.h), the library's own table read in memory. *busy says
 * the second was tried: a name it does not find is not published as
 * missing (the next call asks dlsym). */
static void *symbol(const lz_lib *lib, const char *name, int *busy)
{
    int cs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
    /* Taken, not only looked at: a holder cannot take it between the look
     * and dlsym, and then join this thread. */
    int taken = lz_ldlock_take();
    void *p = taken >= 0 ? lz_dlsym(lib->st->handle, name) : NULL;
    lz_ldlock_give(taken);
    pthread_setcancelstate(cs, NULL);
    *busy = taken < 0;
    if (!*busy)
        return p;
    struct link_map *lm = NULL;
    if (dlinfo(lib->st->handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
        dlerror();
        return NULL;
    }
    return lz_holder_lookup((const void *)lm->l_ld, name);
}

/* A drop-in standing in, under lazynccl-run, for the file the program
 * asked for (the audit module recorded the request), and that loaded it
 * (not another file that LAZY<ID>_LIBPATH named): 1. That file is what
 * plain ld.so bound the program's references to. */
static int standing_for_asked(const lz_lib *lib)
{
    const char *asked = lz_asked_path(lib);
    struct stat a, b;
    return asked && lib->st->path && stat(asked, &a) == 0 && stat(lib->st->path, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Where that file lacks a function a loaded object imports, and ld.so
 * would have bound that reference only when first called (an object
 * loaded at start, without DF_BIND_NOW, and no LD_BIND_NOW), the program
 * stops at this call as ld.so's lazy binding stops it plain, naming that
 * object. A reference bound at load (RTLD_NOW: a Python extension's; -z
 * now; LD_BIND_NOW) failed that load plain, which cannot be undone now; a
 * name nobody imports was reached through dlsym, which plain answered
 * NULL: both get the API's failure value, as a link-time shim's call does
 * (docs/reference/limitations.md). */
static void stop_if_unbound(const lz_lib *lib, const char *name, const void *caller)
{
    char *version = NULL;
    int program = 0, lazy = 0;
    char *who = lz_objects_importer(lib, name, caller, &version, &program, &lazy);
    const char *now = lz_start_getenv("LD_BIND_NOW");
    if (who && lazy && !(now && *now)) {
        symbol_failed(lib, name, " (the file the program asked for, under lazynccl-run)");
        lz_stop_unbound(lib, name, program ? NULL : who, version);
    }
    free(who);
    free(version);
}

static void *lookup(const lz_lib *lib, size_t i, const void *caller, int *busy)
{
    const lz_sym *s = &lib->syms[i];
    const char *name = lz_sym_name(lib, s);
    void *p = symbol(lib, name, busy);
    if (!p && *busy)
        return NULL;
    /* Standing for the file asked for, no other version of a name is
     * served: plain, the reference binds to that name or to none. */
    int asked = !p && standing_for_asked(lib);
    if (asked)
        stop_if_unbound(lib, name, caller);
    if (p || !s->family || asked)
        goto out;
    if (s->major >= 0 && strict_versions(lib)) {
        char why[128];
        snprintf(why, sizeof why, " (%s is set: no fallback)", lib->strict_env);
        symbol_failed(lib, name, why);
        return NULL;
    }
    p = family_fallback(lib, s);
    if (!p && lz_ldlock_refused(NULL, 0)) {
        *busy = 1; /* the older versions asked of a dlsym refused: not missing */
        return NULL;
    }
out:
    if (!p)
        symbol_failed(lib, name, s->major >= 0 ? " nor an older version of its major "
                                                    "(another major is never used)" : "");
    return p;
}

/* What a call gets when its function cannot be had: the spec's failure
 * function, or, where the API has no failure value for it (a 0 entry: no
 * code generated), the stop, which reads the name from the table. */
static lz_fn failure(const lz_lib *lib, size_t i)
{
    lz_fn f = lz_fn_at(lib->fails, i);
    if (!f)
        lz_stop(lib, lz_sym_name(lib, &lib->syms[i]));
    return f;
}

lz_fn lz_resolve(const lz_lib *lib, size_t i)
{
    return lz_resolve_from(lib, i, NULL);
}

/* The failure of a call made while the dynamic linker's lock is held by a
 * thread that waits for this one, said. The two below are out of line:
 * their locals are not on the stack under the load, which runs on top of
 * resolve_from's frame. */
__attribute__((noinline)) static lz_fn busy_failure(const lz_lib *lib, size_t i)
{
    /* On the heap: the caller's stack may be PTHREAD_STACK_MIN bytes. */
    char small[128];
    char *text = lz_text_format(small, sizeof small, 512, "%s: %s: %s not loaded: the "
                                "dynamic linker's lock is held by %s", lib->prefix,
                                lz_sym_name(lib, &lib->syms[i]), lib->display, lz_ldlock_holder());
    lz_message_push(&lib->st->sym_msgs, text); /* lz_once.c logged it */
    lz_text_free(text, small);
    if (!lz_fn_at(lib->fails, i))
        lz_stop_busy(lib, lz_sym_name(lib, &lib->syms[i]));
    return failure(lib, i);
}

/* Export i of the loaded library, bound and published. */
__attribute__((noinline)) static lz_fn bind_loaded(const lz_lib *lib, size_t i, const void *caller)
{
    /* Loaded, for good: no lock of ours. Each call into the dynamic
     * linker takes its lock first, as a search's do (lz_once.c). */
    lz_ldlock_mark outer = lz_ldlock_clear();
    const lz_dl_guard *outer_guard = lz_dl_guarded(lz_ldlock_guard());
    lz_companions_load(lib, lz_sym_name(lib, &lib->syms[i]));
    int busy = 0;
    void *p = lookup(lib, i, caller, &busy);
    lz_dl_guarded(outer_guard);
    lz_ldlock_restore(outer);
    if (!p && busy) { /* not published: the next call asks dlsym */
        if (!lz_fn_at(lib->fails, i))
            lz_stop_busy(lib, lz_sym_name(lib, &lib->syms[i]));
        return failure(lib, i);
    }
    return lz_resolve_publish(lib, i, p);
}

static lz_fn resolve_from(const lz_lib *lib, size_t i, const void *caller)
{
    for (;;) {
        int status = lz_ensure_loaded(lib, &lib->syms[i]);
        if (status == LZ_REENTERED)
            return failure(lib, i); /* not published: the next call tries again */
        if (status == LZ_BUSY)
            return busy_failure(lib, i); /* not published either */
        if (status == LZ_FAILED) {
            if (lz_publish_failure(lib, i))
                return failure(lib, i);
            continue; /* a retry reset the library meanwhile */
        }
        return bind_loaded(lib, i, caller);
    }
}

/* Racing first calls of one name find the same symbol; the first to
 * publish it wins. */
lz_fn lz_resolve_publish(const lz_lib *lib, size_t i, void *p)
{
    lz_fn f = p ? (lz_fn)p : failure(lib, i);
    lz_fn answer = lib->answers ? lz_fn_at(lib->answers, i) : NULL;
    if (p && answer) {
        /* An own-answer function is the real one, one jump, until a
         * call fails (lz_failed_call switches it to its wrapper). */
        __atomic_store_n(&lib->reals[i], (lz_fn)p, __ATOMIC_SEQ_CST);
        f = __atomic_load_n(&lib->st->failed_calls, __ATOMIC_SEQ_CST) ? answer : (lz_fn)p;
    }
    lz_fn expect = lz_fn_at(lib->resolvers, i);
    if (!__atomic_compare_exchange_n(&lib->slots[i], &expect, f, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_ACQUIRE))
        return expect;
    if (answer && f == (lz_fn)p && __atomic_load_n(&lib->st->failed_calls, __ATOMIC_SEQ_CST)) {
        expect = f;
        __atomic_compare_exchange_n(&lib->slots[i], &expect, answer, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_ACQUIRE);
        f = answer;
    }
    return f;
}

/* Whether export i can be had from the loaded library: itself, an older
 * version of its major, or the shim's own answer. */
static void *available(const lz_lib *lib, size_t i, int *answered)
{
    const char *name = lz_sym_name(lib, &lib->syms[i]);
    void *p = lz_dlsym(lib->st->handle, name);
    if (!p && lib->syms[i].family)
        p = family_fallback(lib, &lib->syms[i]);
    *answered = !p && lib->answers && lz_fn_at(lib->answers, i);
    return p;
}

int lz_api_resolve_all(const lz_lib *lib, char *missing, size_t size)
{
    if (missing && size)
        missing[0] = '\0';
    if (lz_api_load(lib) != 0) {
        if (missing && size)
            snprintf(missing, size, "%s", lz_message(lib));
        return -1;
    }
    /* Every export bound now, as its first call would bind it (its
     * companions loaded first). Counted and named: the functions this
     * process needs (what its loaded objects import, LAZY<ID>_REQUIRE,
     * <shim>_require) that the library lacks; the header's others it lacks
     * (another major's versioned names, newer functions) only counted.
     * Each is judged afresh, whatever earlier calls published. A function
     * with no failure value is left to its first call, which stops. */
    unsigned char *need = lz_needed_marks(lib);
    char *text = malloc(LZ_MESSAGE_MAX);
    size_t len = 0;
    int n = 0, others = 0, needed = 0;
    for (size_t i = 0; i < lib->nsyms; i++) {
        int answered;
        void *p = available(lib, i, &answered);
        int bound = __atomic_load_n(&lib->slots[i], __ATOMIC_ACQUIRE) != lz_fn_at(lib->resolvers, i);
        const char *name = lz_sym_name(lib, &lib->syms[i]);
        needed += need && need[i];
        if (p && !bound) {
            lz_companions_load(lib, name);
            lz_resolve_publish(lib, i, p);
        } else if (!p && !answered && !bound && lz_fn_at(lib->fails, i)) {
            lz_resolve_publish(lib, i, NULL);
        }
        if (p || answered)
            continue;
        if (!need || !need[i]) {
            others++;
            continue;
        }
        if (text) {
            int k = snprintf(text + len, LZ_MESSAGE_MAX - len, "%s%s", n ? ", " : "", name);
            if (k > 0 && len + (size_t)k < LZ_MESSAGE_MAX)
                len += (size_t)k;
        }
        n++;
    }
    char *one = malloc(LZ_MESSAGE_MAX + 512);
    if (one && (n || others)) {
        snprintf(one, LZ_MESSAGE_MAX + 512, "%s: %s at %s lacks %d of the %d functions this "
                 "process needs%s%s; %d other functions of its header are not in it (nothing "
                 "here needs them)", lib->prefix, lib->display, lib->st->path, n, needed,
                 n ? ": " : "", n && text ? text : "", others);
        if (n)
            add_symbol_message(lib, one);
        if (missing && size)
            snprintf(missing, size, "%s", one);
    }
    free(one);
    free(text);
    free(need);
    return n;
}

static lz_fn resolve_version(const lz_lib *lib, size_t i, const char *node, lz_fn *slot)
{
    lz_fn done = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (done)
        return done;
    int status = lz_ensure_loaded(lib, &lib->syms[i]);
    if (status == LZ_BUSY && !lz_fn_at(lib->fails, i))
        lz_stop_busy(lib, lz_sym_name(lib, &lib->syms[i]));
    if (status != LZ_LOADED)
        return failure(lib, i); /* not published: a retry may load it */
    const char *name = lz_sym_name(lib, &lib->syms[i]);
    lz_ldlock_mark outer = lz_ldlock_clear();
    const lz_dl_guard *outer_guard = lz_dl_guarded(lz_ldlock_guard());
    lz_fn f = (lz_fn)lz_dlvsym(lib->st->handle, name, node);
    lz_dl_guarded(outer_guard);
    int busy = !f && lz_ldlock_refused(NULL, 0);
    lz_ldlock_restore(outer);
    if (busy) { /* not published: the next call asks dlvsym */
        if (!lz_fn_at(lib->fails, i))
            lz_stop_busy(lib, name);
        return failure(lib, i);
    }
    if (!f) {
        char why[160];
        snprintf(why, sizeof why, " at version %s", node);
        symbol_failed(lib, name, why);
        f = failure(lib, i);
    }
    lz_fn expect = NULL;
    if (!__atomic_compare_exchange_n(slot, &expect, f, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        f = expect;
    return f;
}

/* The first call leaves errno as the program left it: the search's failed
 * opens and probes are its own, and a call the library serves sets errno
 * as the library does (plain, the call finds errno untouched); one that
 * gets its failure function finds it set there (LZ_FAIL_ERRNO). */
lz_fn lz_resolve_from(const lz_lib *lib, size_t i, const void *caller)
{
    int saved = errno;
    lz_fn f = resolve_from(lib, i, caller);
    errno = saved;
    return f;
}

lz_fn lz_resolve_version(const lz_lib *lib, size_t i, const char *node, lz_fn *slot)
{
    int saved = errno;
    lz_fn f = resolve_version(lib, i, node, slot);
    errno = saved;
    return f;
}
