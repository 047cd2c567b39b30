/* SPDX-License-Identifier: MIT
 * Resolving one export on its first call, with the versioned-name policy
 * (docs/search-order.md, "Versioned names"). */
#include "lz_resolve.h"
#include "lz_api.h"
#include "lz_companions.h"
#include "lz_once.h"
#include "lz_env.h"
#include "lz_report.h"
#include "lz_dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int strict_versions(const lz_lib *lib)
{
    const char *v = lz_getenv(lib->strict_env);
    return v && *v && strcmp(v, "0") != 0;
}

/* Record why a name could not be had. Each message is its own allocation,
 * published atomically and never changed, so a reader is never torn. */
static void symbol_failed(const lz_lib *lib, const char *name, const char *why)
{
    lz_state *st = lib->st;
    char text[1024];
    int n = snprintf(text, sizeof text, "%s: %s: not exported by %s%s", lib->prefix, name,
                     st->path, why);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    lz_msg *m = malloc(sizeof *m + len + 1);
    if (m) {
        memcpy(m->text, text, len);
        m->text[len] = '\0';
        /* No lock: first calls of two names may fail at once. */
        m->next = __atomic_load_n(&st->sym_msgs, __ATOMIC_ACQUIRE);
        while (!__atomic_compare_exchange_n(&st->sym_msgs, &m->next, m, 1, __ATOMIC_RELEASE,
                                            __ATOMIC_ACQUIRE))
            ;
    }
    lz_log(lib, "%s", text + strlen(lib->prefix) + 2);
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

static void *lookup(const lz_lib *lib, size_t i)
{
    const lz_sym *s = &lib->syms[i];
    const char *name = lz_sym_name(lib, s);
    void *p = lz_dlsym(lib->st->handle, name);
    if (p || !s->family)
        goto out;
    if (s->major >= 0 && strict_versions(lib)) {
        char why[128];
        snprintf(why, sizeof why, " (%s is set: no fallback)", lib->strict_env);
        symbol_failed(lib, name, why);
        return NULL;
    }
    p = family_fallback(lib, s);
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
    for (;;) {
        int status = lz_ensure_loaded(lib, &lib->syms[i]);
        if (status == LZ_REENTERED)
            return failure(lib, i); /* not published: the next call tries again */
        if (status == LZ_FAILED) {
            if (lz_publish_failure(lib, i))
                return failure(lib, i);
            continue; /* a retry reset the library meanwhile */
        }
        /* Loaded, for good: no lock. */
        lz_companions_load(lib, lz_sym_name(lib, &lib->syms[i]));
        return lz_resolve_publish(lib, i, lookup(lib, i));
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

lz_fn lz_resolve_version(const lz_lib *lib, size_t i, const char *node, lz_fn *slot)
{
    lz_fn done = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (done)
        return done;
    int status = lz_ensure_loaded(lib, &lib->syms[i]);
    if (status != LZ_LOADED)
        return failure(lib, i); /* not published: a retry may load it */
    const char *name = lz_sym_name(lib, &lib->syms[i]);
    lz_fn f = (lz_fn)lz_dlvsym(lib->st->handle, name, node);
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
