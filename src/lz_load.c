/* Loading a library once, and the control API around it. */
#include "lz_load.h"
#include "lz_objects.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the calling thread is inside this library's load: a constructor
 * of the real library that calls back into the shim gets the failure value
 * instead of waiting on its own lock or loading again. Kept per library (no
 * thread-local storage: TLS in a shared object costs every process at
 * start-up). */
static int loading(const lz_lib *lib)
{
    return __atomic_load_n(&lib->st->loading, __ATOMIC_ACQUIRE) &&
           pthread_equal(lib->st->loader, pthread_self());
}

/* Fork safety: the libraries this runtime has touched, and fork handlers.
 * fork() never waits for a load in another thread (a prepare handler that
 * waited would deadlock under allocators that lock before the handlers run,
 * as ASan's does). The child, which has only the forking thread, gives every
 * library a fresh lock: a library loaded before the fork stays loaded; one
 * that another thread was still loading is untouched in the child, which
 * loads it on its own first call (dlopen finds what is already mapped). */
#define LZ_MAX_LIBS 16
static const lz_lib *lz_libs[LZ_MAX_LIBS];
static int lz_nlibs;
static pthread_mutex_t lz_registry = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t lz_atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&lz_registry);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lz_registry);
}

static void fork_child(void)
{
    static const pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    static const pthread_mutex_t fresh_plain = PTHREAD_MUTEX_INITIALIZER;
    for (int i = 0; i < lz_nlibs; i++) {
        lz_state *st = lz_libs[i]->st;
        memcpy(&st->mu, &fresh, sizeof fresh);
        /* A load another thread had not finished: start again in the child. */
        if (__atomic_load_n(&st->status, __ATOMIC_ACQUIRE) == LZ_UNTRIED) {
            st->handle = NULL;
            __atomic_store_n(&st->loading, 0, __ATOMIC_RELEASE);
        }
    }
    memcpy(&lz_registry, &fresh_plain, sizeof fresh_plain);
}

static void install_atfork(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Called before a library's lock is first taken (slow paths only). */
static void lz_register(const lz_lib *lib)
{
    pthread_once(&lz_atfork_once, install_atfork);
    pthread_mutex_lock(&lz_registry);
    int known = 0;
    for (int i = 0; i < lz_nlibs; i++)
        known |= lz_libs[i] == lib;
    if (!known && lz_nlibs < LZ_MAX_LIBS)
        lz_libs[lz_nlibs++] = lib;
    pthread_mutex_unlock(&lz_registry);
}

static void lock(const lz_lib *lib)
{
    lz_register(lib);
    pthread_mutex_lock(&lib->st->mu);
}

static int status_of(const lz_lib *lib)
{
    return __atomic_load_n(&lib->st->status, __ATOMIC_ACQUIRE);
}

/* The versioned names loaded objects import from us (marks over lib->syms),
 * so that the first call, whichever it is, loads a library that serves them. */
static unsigned char *imported_names(const lz_lib *lib)
{
    unsigned char *marks = calloc(lib->nsyms, 1);
    if (marks)
        lz_objects_imports(lib, marks);
    return marks;
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
    st->loader = pthread_self();
    __atomic_store_n(&st->loading, 1, __ATOMIC_RELEASE);
    unsigned char *wanted = imported_names(lib);
    w.wanted = wanted;
    lz_search(&w);
    free(wanted);
    __atomic_store_n(&st->loading, 0, __ATOMIC_RELEASE);
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

/* The lock of a library, with cancellation off while it is held: a thread
 * cancelled inside a load (dlopen reads files: cancellation points) must not
 * leave the lock held. The cancellation is acted on at the caller's next
 * cancellation point. */
int lz_lock(const lz_lib *lib)
{
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    lock(lib);
    return old;
}

void lz_unlock(const lz_lib *lib, int cancel_state)
{
    pthread_mutex_unlock(&lib->st->mu);
    pthread_setcancelstate(cancel_state, NULL);
}

int lz_load_locked(const lz_lib *lib, const lz_sym *want)
{
    if (status_of(lib) == LZ_UNTRIED && !loading(lib))
        load_locked(lib, want);
    return loading(lib) ? LZ_REENTERED : status_of(lib);
}

int lz_ensure_loaded(const lz_lib *lib, const lz_sym *want)
{
    int s = status_of(lib);
    if (s != LZ_UNTRIED)
        return s;
    if (loading(lib))
        return LZ_REENTERED;
    int cs = lz_lock(lib);
    s = lz_load_locked(lib, want);
    lz_unlock(lib, cs);
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
        return m ? m->text : lib->no_error;
    }
    default:
        return lib->not_loaded;
    }
}

void lz_failed_call(const lz_lib *lib)
{
    if (!__atomic_load_n(&lib->st->failed_calls, __ATOMIC_RELAXED))
        __atomic_store_n(&lib->st->failed_calls, 1, __ATOMIC_RELAXED);
}

const char *lz_fill_message(const lz_lib *lib, const char *real)
{
    if (real && *real)
        return real;
    const char *ours = __atomic_load_n(&lib->st->failed_calls, __ATOMIC_RELAXED)
                           ? lz_api_last_error(lib) : NULL;
    return ours ? ours : real;
}

int lz_api_load(const lz_lib *lib)
{
    lz_state *st = lib->st;
    int cs = lz_lock(lib);
    if (status_of(lib) == LZ_FAILED && !loading(lib)) {
        /* An explicit load retries: calls that cached the failure resolve again. */
        for (size_t i = 0; i < lib->nsyms; i++)
            __atomic_store_n(&lib->slots[i], lib->resolvers[i], __ATOMIC_RELEASE);
        __atomic_store_n(&st->status, LZ_UNTRIED, __ATOMIC_RELEASE);
    }
    int s = lz_load_locked(lib, NULL);
    lz_unlock(lib, cs);
    return s == LZ_LOADED ? 0 : -1;
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
    int cs = lz_lock(lib);
    /* Not from inside a load (a log callback, a constructor): the list is
     * being walked. */
    if (status_of(lib) != LZ_LOADED && !loading(lib)) {
        char *copy = list ? strdup(list) : NULL;
        if (!list || copy) {
            free(st->search_list);
            st->search_list = copy;
            rc = 0;
        }
    }
    lz_unlock(lib, cs);
    return rc;
}

void lz_api_set_log_callback(const lz_lib *lib, lz_log_fn fn, void *user)
{
    lock(lib);
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
    unsigned char *wanted = imported_names(lib);
    w.wanted = wanted;
    int cs = lz_lock(lib);
    lz_search(&w);
    lz_unlock(lib, cs);
    free(wanted);
    if (w.found && path && size)
        snprintf(path, size, "%s", w.path);
    return w.found;
}
