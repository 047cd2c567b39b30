/* SPDX-License-Identifier: MIT
 * The small runtime's control API: load, inspect, and set the steps a
 * program sets (docs/reference/search-order.md, "The small runtime"),
 * and those steps. Apart from the first call (lz_small.c), so that the
 * static shim of a program that calls none of it carries none of it. */
#include "small/lz_small.h"
#include "base/lz_msg.h"
#include "common/lz_stepnames.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The program's chooser, asked before the search list (a handle, or a
 * path written): the handle it answers with, or NULL; *decided where it
 * answered (nothing else is then tried). */
static void *chosen(lz_small_report *r, const char **step, int *decided)
{
    lz_state *st = r->lib->st;
    lz_choose_fn choose = __atomic_load_n(&st->chooser, __ATOMIC_ACQUIRE);
    char *path = choose ? calloc(1, PATH_MAX) : NULL;
    if (!path)
        return NULL;
    void *h = choose(__atomic_load_n(&st->chooser_user, __ATOMIC_ACQUIRE), path, PATH_MAX);
    *step = LZ_STEP_CHOSEN;
    path[PATH_MAX - 1] = '\0';
    *decided = h || path[0];
    char text[PATH_MAX / 8];
    const char *why = h ? (lz_small_is_object(h) ? lz_small_misjudged(r->lib, h, 0, text, sizeof text)
                                                 : "a handle that names no object")
                      : path[0] && path[0] != '/' ? "not an absolute path" : NULL;
    if (why)
        lz_small_refused(r, *step, h ? "the handle it returned" : path, why);
    else if (*decided && !h)
        h = lz_small_open(r, *step, path, 0);
    free(path);
    if (why || (*decided && !h)) {
        lz_small_last_line(r, "the program's chooser answered, so nothing else was tried");
        return NULL;
    }
    return h;
}

/* The steps a program sets, around the override, in the search's order:
 * a handle adopted, LAZY<ID>_LIBPATH, the chooser, the search list. */
void *lz_small_program_steps(lz_small_report *r, const char **step, int *decided)
{
    lz_state *st = r->lib->st;
    const char *adopted = __atomic_load_n(&st->adopted, __ATOMIC_ACQUIRE);
    *decided = adopted != NULL;
    if (adopted) {
        *step = LZ_STEP_ADOPTED;
        return lz_small_open(r, *step, adopted, 0);
    }
    void *h = lz_small_override(r, step, decided);
    if (!*decided)
        h = chosen(r, step, decided);
    const char *list = __atomic_load_n(&st->search_list, __ATOMIC_ACQUIRE);
    if (*decided || !list)
        return h;
    *decided = 1;
    *step = LZ_STEP_SEARCH_LIST;
    return lz_small_open_list(r, *step, list);
}

int lz_api_load(const lz_lib *lib)
{
    /* After a failure, search again: the environment may have been fixed. */
    int failed = LZ_FAILED;
    __atomic_compare_exchange_n(&lib->st->status, &failed, LZ_UNTRIED, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    return lz_small_ensure_loaded(lib) == LZ_LOADED ? 0 : -1;
}

int lz_api_is_loaded(const lz_lib *lib)
{
    return lz_small_status(lib) == LZ_LOADED;
}

const char *lz_api_loaded_path(const lz_lib *lib)
{
    return lz_small_status(lib) == LZ_LOADED ? lib->st->path : NULL;
}

const char *lz_api_loaded_step(const lz_lib *lib)
{
    return lz_small_status(lib) == LZ_LOADED ? lib->st->step : NULL;
}

const char *lz_api_last_error(const lz_lib *lib)
{
    return lz_small_state_message(lib, lz_small_status(lib));
}

/* A string a search may be reading is replaced, never freed. */
static int replace(const lz_lib *lib, const char **field, const char *value)
{
    char *copy = value ? strdup(value) : NULL;
    if (lz_small_status(lib) == LZ_LOADED || (value && !copy)) {
        free(copy);
        return -1;
    }
    __atomic_store_n(field, copy, __ATOMIC_RELEASE);
    return 0;
}

int lz_api_set_search_path(const lz_lib *lib, const char *list)
{
    return replace(lib, (const char **)&lib->st->search_list, list);
}

int lz_api_require(const lz_lib *lib, const char *names)
{
    const char *old = __atomic_load_n(&lib->st->required, __ATOMIC_ACQUIRE);
    if (!names)
        return -1;
    size_t size = (old ? strlen(old) : 0) + strlen(names) + 2;
    char *both = malloc(size);
    if (!both)
        return -1;
    snprintf(both, size, "%s,%s", old ? old : "", names);
    int rc = replace(lib, &lib->st->required, both);
    free(both);
    return rc;
}

void lz_api_set_chooser(const lz_lib *lib, lz_choose_fn fn, void *user)
{
    __atomic_store_n(&lib->st->chooser_user, user, __ATOMIC_RELEASE);
    __atomic_store_n(&lib->st->chooser, fn, __ATOMIC_RELEASE);
}

void lz_api_set_log_callback(const lz_lib *lib, lz_log_fn fn, void *user)
{
    __atomic_store_n(&lib->st->log_user, user, __ATOMIC_RELEASE);
    __atomic_store_n(&lib->st->log_fn, fn, __ATOMIC_RELEASE);
}

int lz_api_adopt(const lz_lib *lib, void *handle)
{
    /* Judged before it is kept: a handle refused changes nothing. */
    char *path = lz_small_file_of(handle), text[PATH_MAX / 8];
    const char *loaded = lz_small_status(lib) == LZ_LOADED ? lib->st->path : NULL;
    const char *why = !path ? "the dynamic linker names no file for it (the program itself, or "
                              "not a handle dlopen returned)"
                      : loaded ? NULL : lz_small_misjudged(lib, handle, 0, text, sizeof text);
    if (!why && loaded && strcmp(path, loaded) == 0) {
        free(path); /* the library this shim loaded: adopting it again changes nothing */
        return 0;
    }
    if (!why && !loaded) {
        __atomic_store_n(&lib->st->adopted, path, __ATOMIC_RELEASE); /* never freed */
        return lz_api_load(lib) == 0 && strcmp(lib->st->path, path) == 0 ? 0 : -1;
    }
    size_t size = (loaded ? strlen(loaded) : 0) + strlen(lib->display) + sizeof text + 256;
    char *message = malloc(size);
    if (message) {
        int n = snprintf(message, size, "%s: the handle offered to %s_adopt was refused:\n  ",
                         lib->prefix, lib->shim);
        snprintf(message + n, size - (size_t)n, why ? "%s" : "%s is loaded already (%s)",
                 why ? why : lib->display, loaded);
        lz_message_push(&lib->st->refusals, message);
    }
    free(message);
    free(path);
    return -1;
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
    /* Every export bound now, as its first call would bind it; those the
     * library lacks counted (a function with no failure value is left to
     * its first call, which stops). */
    int others = 0;
    for (size_t i = 0; i < lib->nsyms; i++) {
        int bound = __atomic_load_n(&lib->slots[i], __ATOMIC_ACQUIRE) != lz_fn_at(lib->resolvers, i);
        void *h = __atomic_load_n(&lib->st->handle, __ATOMIC_ACQUIRE);
        void *p = dlsym(h, lz_sym_name(lib, &lib->syms[i]));
        if (!p)
            dlerror();
        if (!bound && (p || lz_fn_at(lib->fails, i)))
            lz_small_publish(lib, i, p ? (lz_fn)p : lz_fn_at(lib->fails, i));
        others += !p;
    }
    void *h = __atomic_load_n(&lib->st->handle, __ATOMIC_ACQUIRE);
    int n = lz_small_required_missing(lib, h, lib->st->path, 0);
    if (missing && size && (n || others))
        snprintf(missing, size, "%s: %s at %s lacks %d of the functions this process declared it "
                 "needs; %d functions of its header are not in it", lib->prefix, lib->display,
                 lib->st->path, n, others);
    return n;
}

const char *lz_api_asked_path(const lz_lib *lib)
{
    (void)lib; /* only a drop-in is asked for by path, and a drop-in is never small */
    return NULL;
}

int lz_api_loaded_version(const lz_lib *lib, char *buf, size_t size)
{
    if (!buf || !size || !lib->version || lz_small_status(lib) != LZ_LOADED)
        return 0;
    return lib->version(buf, size) == 0;
}

int lz_api_would_load(const lz_lib *lib, char *path, size_t size)
{
    if (lz_small_status(lib) == LZ_LOADED) {
        if (path && size)
            snprintf(path, size, "%s", lib->st->path);
        return 1;
    }
    /* The dynamic linker's search cannot be asked without loading. */
    if (path && size)
        snprintf(path, size, "%s: %s would be searched for by the dynamic linker, which cannot be "
                 "asked without loading it (a static shim's small runtime: "
                 "docs/reference/search-order.md)", lib->prefix, lib->sonames[0]);
    return 0;
}
