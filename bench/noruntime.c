/* SPDX-License-Identifier: MIT
 * The runtime's entry points with nothing behind them. Linked with a shim's
 * generated code (bench/meson.build, variant (g)), it makes an object with
 * that shim's exports, thunks, slots, tables, imports and relocations, and
 * fork handlers registered at load as the runtime registers them, but none
 * of the runtime's code or data: what a shim's interface alone costs at
 * start-up, so that (c) - (g) is what the runtime itself costs there. Never
 * called. */
#include "api/lz_api.h"
#include "api/lz_resolve.h"
#include "register_at_load.h"

const char *lz_message(const lz_lib *lib)
{
    (void)lib;
    return NULL;
}

void lz_failed_call(const lz_lib *lib)
{
    (void)lib;
}

void lz_stop(const lz_lib *lib, const char *name)
{
    (void)lib;
    (void)name;
    __builtin_trap();
}

const char *lz_fill_message(const lz_lib *lib, const char *real)
{
    (void)lib;
    return real;
}

int lz_api_load(const lz_lib *lib)
{
    (void)lib;
    return -1;
}

int lz_api_is_loaded(const lz_lib *lib)
{
    (void)lib;
    return 0;
}

const char *lz_api_loaded_path(const lz_lib *lib)
{
    (void)lib;
    return NULL;
}

const char *lz_api_loaded_step(const lz_lib *lib)
{
    (void)lib;
    return NULL;
}

const char *lz_api_last_error(const lz_lib *lib)
{
    (void)lib;
    return NULL;
}

int lz_api_set_search_path(const lz_lib *lib, const char *list)
{
    (void)lib;
    (void)list;
    return -1;
}

int lz_api_require(const lz_lib *lib, const char *names)
{
    (void)lib;
    (void)names;
    return -1;
}

void lz_api_set_log_callback(const lz_lib *lib, lz_log_fn fn, void *user)
{
    (void)lib;
    (void)fn;
    (void)user;
}

int lz_api_would_load(const lz_lib *lib, char *path, size_t size)
{
    (void)lib;
    (void)path;
    (void)size;
    return 0;
}

void lz_api_set_chooser(const lz_lib *lib, lz_choose_fn fn, void *user)
{
    (void)lib;
    (void)fn;
    (void)user;
}

int lz_api_adopt(const lz_lib *lib, void *handle)
{
    (void)lib;
    (void)handle;
    return -1;
}

int lz_api_resolve_all(const lz_lib *lib, char *missing, size_t size)
{
    (void)lib;
    (void)missing;
    (void)size;
    return -1;
}

const char *lz_api_asked_path(const lz_lib *lib)
{
    (void)lib;
    return NULL;
}

int lz_api_loaded_version(const lz_lib *lib, char *buf, size_t size)
{
    return lz_api_would_load(lib, buf, size);
}

lz_fn lz_resolve_version(const lz_lib *lib, size_t i, const char *node, lz_fn *slot)
{
    (void)node;
    (void)slot;
    return lz_resolve(lib, i);
}

lz_fn lz_resolve(const lz_lib *lib, size_t i)
{
    (void)lib;
    (void)i;
    return NULL;
}

lz_fn lz_resolve_from(const lz_lib *lib, size_t i, const void *caller)
{
    (void)caller;
    return lz_resolve(lib, i);
}
