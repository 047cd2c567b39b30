/* SPDX-License-Identifier: MIT
 * Binding callers of a shared shim's export to the real function once the
 * library is loaded (lz_bind.h). */
#include "lz_bind.h"
#include "lz_companions.h"
#include "lz_dl.h"
#include "lz_resolve.h"

/* No sanitizer's code in the part that can run before sanitizers start. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define LZ_UNINSTRUMENTED __attribute__((no_sanitize("address", "thread", "undefined")))
#endif
#endif
#ifndef LZ_UNINSTRUMENTED
#define LZ_UNINSTRUMENTED
#endif

/* Every name of the spec, under its own name: then no call can fail, so no
 * own answer will ever differ from the library's. Asked once per process. */
static int complete(const lz_lib *lib)
{
    lz_state *st = lib->st;
    int c = __atomic_load_n(&st->complete, __ATOMIC_ACQUIRE);
    if (c)
        return c == 1;
    c = 1;
    for (size_t i = 0; i < lib->nsyms && c == 1; i++) {
        lz_fn f = __atomic_load_n(&lib->slots[i], __ATOMIC_ACQUIRE);
        if (f == lz_fn_at(lib->fails, i) ||
            (f == lz_fn_at(lib->resolvers, i) && !lz_dlsym(st->handle, lz_sym_name(lib, &lib->syms[i]))))
            c = 2;
    }
    __atomic_store_n(&st->complete, c, __ATOMIC_RELEASE);
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
                   !complete(lib)))
        return thunk;
    return f;
}

LZ_UNINSTRUMENTED lz_fn lz_bind_pick(const lz_lib *lib, size_t i, lz_fn thunk)
{
    if (__atomic_load_n(&lib->st->status, __ATOMIC_ACQUIRE) != LZ_LOADED)
        return thunk;
    return pick_loaded(lib, i, thunk);
}
