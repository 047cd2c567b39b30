/* Loading a library once, and the control API around it. */
#include "lz_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library this thread is loading: a constructor of the real library that
 * calls back into the shim must not wait on the lock its own thread holds. */
static __thread const lz_lib *lz_loading;

static int status_of(const lz_lib *lib)
{
    return __atomic_load_n(&lib->st->status, __ATOMIC_ACQUIRE);
}

/* Run the search and record its outcome. Called with st->mu held. */
static void load_locked(const lz_lib *lib, const lz_sym *want)
{
    lz_state *st = lib->st;
    lz_walk w = {.lib = lib, .want = want, .report = st->message,
                 .report_size = sizeof st->message};
    int n = snprintf(st->message, sizeof st->message,
                     "%s: %s could not be loaded; candidates tried:\n", lib->shim,
                     lib->display);
    w.report_len = (size_t)n;
    lz_loading = lib;
    lz_search(&w);
    lz_loading = NULL;
    if (w.found) {
        st->handle = w.handle;
        st->step = w.step;
        snprintf(st->path, sizeof st->path, "%s", w.path);
        lz_log(lib, "loaded %s (found by: %s)", st->path, st->step);
        __atomic_store_n(&st->status, LZ_LOADED, __ATOMIC_RELEASE);
        return;
    }
    if (w.report_len == (size_t)n)
        lz_note(&w, "(no candidate was found)");
    lz_log(lib, "%s is unavailable", lib->display);
    __atomic_store_n(&st->status, LZ_FAILED, __ATOMIC_RELEASE);
}

int lz_ensure_loaded(const lz_lib *lib, const lz_sym *want)
{
    int s = status_of(lib);
    if (s != LZ_UNTRIED)
        return s;
    if (lz_loading == lib)
        return LZ_REENTERED;
    pthread_mutex_lock(&lib->st->mu);
    if (status_of(lib) == LZ_UNTRIED)
        load_locked(lib, want);
    s = status_of(lib);
    pthread_mutex_unlock(&lib->st->mu);
    return s;
}

const char *lz_message(const lz_lib *lib)
{
    lz_state *st = lib->st;
    switch (status_of(lib)) {
    case LZ_FAILED:
        return st->message;
    case LZ_LOADED:
    {
        lz_msg *m = __atomic_load_n(&st->sym_msgs, __ATOMIC_ACQUIRE);
        return m ? m->text : "lazynccl: no error";
    }
    default:
        return "lazynccl: library not loaded yet";
    }
}

int lz_api_load(const lz_lib *lib)
{
    lz_state *st = lib->st;
    pthread_mutex_lock(&st->mu);
    if (status_of(lib) == LZ_FAILED && lz_loading != lib) {
        /* An explicit load retries: calls that cached the failure resolve again. */
        for (size_t i = 0; i < lib->nsyms; i++)
            __atomic_store_n(&lib->slots[i], lib->resolvers[i], __ATOMIC_RELEASE);
        __atomic_store_n(&st->status, LZ_UNTRIED, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&st->mu);
    return lz_ensure_loaded(lib, NULL) == LZ_LOADED ? 0 : -1;
}

int lz_api_is_loaded(const lz_lib *lib)
{
    return status_of(lib) == LZ_LOADED;
}

const char *lz_api_loaded_path(const lz_lib *lib)
{
    return status_of(lib) == LZ_LOADED ? lib->st->path : NULL;
}

const char *lz_api_loaded_step(const lz_lib *lib)
{
    return status_of(lib) == LZ_LOADED ? lib->st->step : NULL;
}

const char *lz_api_last_error(const lz_lib *lib)
{
    int s = status_of(lib);
    if (s == LZ_FAILED)
        return lib->st->message;
    if (s == LZ_LOADED) {
        lz_msg *m = __atomic_load_n(&lib->st->sym_msgs, __ATOMIC_ACQUIRE);
        return m ? m->text : NULL;
    }
    return NULL;
}

int lz_api_set_search_path(const lz_lib *lib, const char *list)
{
    lz_state *st = lib->st;
    int rc = -1;
    pthread_mutex_lock(&st->mu);
    if (status_of(lib) != LZ_LOADED) {
        char *copy = list ? strdup(list) : NULL;
        if (!list || copy) {
            free(st->search_list);
            st->search_list = copy;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

void lz_api_set_log_callback(const lz_lib *lib, lz_log_fn fn, void *user)
{
    pthread_mutex_lock(&lib->st->mu);
    lib->st->log_user = user;
    __atomic_store_n(&lib->st->log_fn, fn, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lib->st->mu);
}

int lz_api_would_load(const lz_lib *lib, char *path, size_t size)
{
    if (status_of(lib) == LZ_LOADED) {
        if (path && size)
            snprintf(path, size, "%s", lib->st->path);
        return 1;
    }
    lz_walk w = {.lib = lib, .dry_run = 1};
    pthread_mutex_lock(&lib->st->mu);
    lz_search(&w);
    pthread_mutex_unlock(&lib->st->mu);
    if (w.found && path && size)
        snprintf(path, size, "%s", w.path);
    return w.found;
}
