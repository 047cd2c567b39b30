/* SPDX-License-Identifier: MIT
 * Binding callers of a shared shim's own-answer export to the real function
 * once the library is loaded (lz_bind.h). */
#include "api/lz_bind.h"
#include "search/lz_companions.h"
#include "base/lz_dl.h"
#include "process/lz_holder.h"
#include "api/lz_resolve.h"

/* No sanitizer's code in the part that can run before sanitizers start. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define LZ_UNINSTRUMENTED __attribute__((no_sanitize("address", "thread", "undefined")))
#endif
#endif
#ifndef LZ_UNINSTRUMENTED
#define LZ_UNINSTRUMENTED
#endif

static const char *spec_name(const void *ctx, size_t i)
{
    const lz_lib *lib = ctx;
    return lz_sym_name(lib, &lib->syms[i]);
}

/* Every name of the spec, under its own name, in the object holding the
 * real function f: then no call can fail, so no own answer will ever
 * differ from the library's. Asked once per process, in memory through the
 * object's hash table, cheaper than the dlsym per name it replaced (its
 * price: bench/versus, "first ncclGetErrorString, after the load"). A name only
 * a dependency of the library defines counts as missing, which only keeps
 * own answers on their thunks. */
static int complete(const lz_lib *lib, lz_fn f)
{
    lz_state *st = lib->st;
    int c = __atomic_load_n(&st->complete, __ATOMIC_ACQUIRE);
    if (!c) {
        c = lz_holder_defines_all((const void *)f, spec_name, lib, lib->nsyms) ? 1 : 2;
        __atomic_store_n(&st->complete, c, __ATOMIC_RELEASE);
    }
    return c == 1;
}

__attribute__((noinline)) static lz_fn pick_loaded(const lz_lib *lib, size_t i, lz_fn thunk)
{
    const char *name = lz_sym_name(lib, &lib->syms[i]);
    lz_fn f = __atomic_load_n(&lib->slots[i], __ATOMIC_ACQUIRE);
    if (f == lz_fn_at(lib->resolvers, i)) {
        /* Not called yet: found here as its first call would find it under
         * its own name. Companions to load, a fallback to choose or a
         * reason to give are left to that first call. */
        if (lz_companions_waiting(lib, name))
            return thunk;
        void *p = lz_dlsym(lib->st->handle, name);
        if (!p)
            return thunk;
        f = lz_resolve_publish(lib, i, p);
    }
    if (f == lz_fn_at(lib->fails, i))
        return thunk;
    lz_fn answer = lib->answers ? lz_fn_at(lib->answers, i) : NULL;
    if (answer && (f == answer || __atomic_load_n(&lib->st->failed_calls, __ATOMIC_SEQ_CST) ||
                   !complete(lib, f)))
        return thunk;
    return f;
}

LZ_UNINSTRUMENTED lz_fn lz_bind_pick(const lz_lib *lib, size_t i, lz_fn thunk)
{
    if (__atomic_load_n(&lib->st->status, __ATOMIC_ACQUIRE) != LZ_LOADED)
        return thunk;
    return pick_loaded(lib, i, thunk);
}
