/* SPDX-License-Identifier: MIT
 * The dynamic linker's search, followed so that the file it would load is
 * known and probed first (lz_linker.h). Used by the search order (its steps 10 to 14),
 * by a candidate's companion check and by lazynccl-info; it calls nothing
 * above it. */
#include "search/lz_linker.h"
#include "base/lz_env.h"
#include "base/lz_startenv.h"
#include "common/lz_ldsodirs.h"
#include "common/lz_stepnames.h"
#include "elf/lz_ldcache.h"
#include "process/lz_dst.h"
#include "process/lz_hwcaps.h"
#include "process/lz_objects.h"
#include "process/lz_objects_runpaths.h"
#include "base/lz_path.h"
#include "elf/lz_probe.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <string.h>
#include <unistd.h>

/* Where ld.so's system directories are not found in it: the union of the
 * distributions' (Debian's multiarch pair, then lib64, then lib). */
static const char *const fallback_system_dirs[] = {
#if defined(__x86_64__)
    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
    "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
    "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL};

/* The system directories this process's ld.so was built with
 * (lz_ldsodirs.h), without their trailing '/' (into out, NULL-terminated,
 * their text in buf); 0 when none is found. */
static int ld_so_system_dirs(const char **out, char *buf, size_t size)
{
    size_t n = 0, used = 0;
    const char *p = lz_ldsodirs_find(lz_objects_ldso_base(), &n);
    for (size_t i = 0; p && i < n; i++) {
        size_t len = strlen(p);
        if (used + len > size)
            return 0;
        memcpy(buf + used, p, len - 1);
        buf[used + len - 1] = '\0';
        out[i] = buf + used;
        used += len;
        p += len + 1;
    }
    out[p ? n : 0] = NULL;
    return p != NULL;
}

/* Read when a search first reaches them, and published whole: threads
 * that race read the same memory into buffers of their own, and the
 * first to publish wins (not pthread_once, which glibc 2.34 moved to a
 * new symbol version that a wheel's older glibc lacks). */
struct system_dirs_read {
    const char *dirs[LZ_LDSODIRS_MAX + 1];
    char buf[512];
};

static const char *const *system_dirs(void)
{
    static struct system_dirs_read *published;
    static int none;
    struct system_dirs_read *r = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
    if (r)
        return r->dirs;
    if (__atomic_load_n(&none, __ATOMIC_RELAXED))
        return fallback_system_dirs;
    r = malloc(sizeof *r);
    if (!r || !ld_so_system_dirs(r->dirs, r->buf, sizeof r->buf)) {
        free(r);
        __atomic_store_n(&none, 1, __ATOMIC_RELAXED);
        return fallback_system_dirs;
    }
    struct system_dirs_read *expect = NULL;
    if (!__atomic_compare_exchange_n(&published, &expect, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(r);
        return expect->dirs;
    }
    return r->dirs;
}

/* The dynamic linker's search (5), followed so that the file it would load
 * is probed first. One requester asks, described one of three ways: by the
 * loaded objects that need the library (a first call), by its own run
 * paths (a library that opens a companion itself), or as a file not loaded
 * (lazynccl-info --check). */
enum requester { BY_LOADED, BY_LIBRARY, BY_ASKER };

struct linker_search {
    const char *const *sonames;
    const lz_linker_hooks *h;
    enum requester by;
    const lz_linker_asker *asker;                    /* BY_ASKER */
    const char *origin, *rpath, *runpath;            /* BY_LIBRARY */
    int nodeflib;                                    /* read by the DT_RPATH step */
    lz_runpaths loaded;                              /* BY_LOADED: read by the DT_RPATH step */
};

struct linker_try {
    struct linker_search *ls;
    const char *step;
};

static int linker_try(void *ctx, const char *path)
{
    struct linker_try *lt = ctx;
    return lz_probe_exists(path) && lt->ls->h->visit(lt->ls->h->ctx, lt->step, path);
}

/* The files ld.so tries in dir for each soname, glibc-hwcaps
 * subdirectories first (lz_hwcaps_try). */
static int linker_dir(struct linker_search *ls, const char *step, const char *dir)
{
    if (ls->h->looked)
        ls->h->looked(ls->h->ctx, step, dir);
    struct linker_try lt = {ls, step};
    return lz_hwcaps_try(dir, ls->sonames, linker_try, &lt);
}

static int visit_runpath(void *ctx, const char *dir, const char *why)
{
    struct linker_search *ls = ctx;
    if (!dir) {
        if (ls->h->note)
            ls->h->note(ls->h->ctx, LZ_STEP_RUN_PATH, why);
        return 0;
    }
    return linker_dir(ls, LZ_STEP_RUN_PATH, dir);
}

/* Each directory of a search list, as ld.so splits (seps: ":;" for
 * LD_LIBRARY_PATH, ":" for a DT_RPATH or DT_RUNPATH) and expands it;
 * origin: what $ORIGIN stands for there. */
static int linker_list(struct linker_search *ls, const char *step, const char *list,
                       const char *seps, const char *origin)
{
    if (!list || !*list)
        return 0;
    struct {
        char cwd[PATH_MAX], dir[PATH_MAX], why[768];
    } *b = malloc(sizeof *b);
    if (!b) {
        if (ls->h->note)
            ls->h->note(ls->h->ctx, step, "out of memory: not searched");
        return 0;
    }
    const char *here = getcwd(b->cwd, sizeof b->cwd);
    int rc = 0;
    for (const char *p = list; *p && !rc;) {
        size_t len = lz_path_next(p, seps);
        /* ld.so's values are read only for an entry that names them. */
        lz_path_tokens tok = {origin, lz_path_names(p, len, "PLATFORM") ? lz_dst_platform() : NULL,
                              lz_path_names(p, len, "LIB") ? lz_dst_lib() : NULL};
        if (!lz_path_entry(p, len, &tok, here, lz_secure(), b->dir, sizeof b->dir, b->why,
                           sizeof b->why)) {
            if (ls->h->note)
                ls->h->note(ls->h->ctx, step, b->why);
        } else
            rc = linker_dir(ls, step, b->dir);
        p += len + (p[len] != '\0');
    }
    free(b);
    return rc;
}

/* LD_LIBRARY_PATH, where ld.so's $ORIGIN is the program's directory, read
 * (under /proc) only where an entry may name it. */
static int linker_llp_text(struct linker_search *ls, const char *llp)
{
    char *exe = strchr(llp, '$') ? malloc(PATH_MAX) : NULL;
    char *slash = exe && lz_objects_program_path(exe, PATH_MAX) ? strrchr(exe, '/') : NULL;
    const char *origin = NULL;
    if (slash) {
        *slash = '\0';
        origin = slash == exe ? "/" : exe;
    }
    int rc = linker_list(ls, LZ_STEP_LD_LIBRARY_PATH, llp, LZ_LINKER_LLP_SEPS, origin);
    free(exe);
    return rc;
}

static int linker_llp(struct linker_search *ls)
{
    const char *given = lz_objects_ldso_options()->library_path;
    const char *llp = given ? given : lz_start_getenv("LD_LIBRARY_PATH");
    return llp && *llp && linker_llp_text(ls, llp);
}

int lz_linker_list_lookup(const char *const *sonames, const char *step, const char *list,
                          const char *seps, const char *origin, const lz_linker_hooks *hooks)
{
    struct linker_search ls = {.sonames = sonames, .h = hooks, .by = BY_LIBRARY};
    return linker_list(&ls, step, list, seps, origin);
}

/* ld.so's steps (glibc's _dl_map_object), each given the requester. */

/* DT_RPATH: where the requester has no DT_RUNPATH, its own, then those of
 * the objects that loaded it, up to the program's. */
static int step_rpath(struct linker_search *ls)
{
    switch (ls->by) {
    case BY_LOADED:
        lz_objects_runpaths_read(ls->sonames, &ls->loaded);
        ls->nodeflib = ls->loaded.nodeflib;
        return lz_strlist_visit(&ls->loaded.rpath, visit_runpath, ls);
    case BY_LIBRARY:
        /* Here the objects above the library are this code's object and
         * those needing it (the shim, the program). */
        return !(ls->runpath && *ls->runpath) &&
               (linker_list(ls, LZ_STEP_RUN_PATH, ls->rpath, LZ_LINKER_RUNPATH_SEPS, ls->origin) ||
                lz_objects_runpaths(ls->sonames, 0, visit_runpath, ls, NULL));
    case BY_ASKER:
        ls->nodeflib = ls->asker->nodeflib;
        for (int k = 0; !ls->asker->runpath && k < ls->asker->nrpath && k < LZ_LINKER_CHAIN; k++)
            if (linker_list(ls, LZ_STEP_RUN_PATH, ls->asker->rpath[k], LZ_LINKER_RUNPATH_SEPS,
                            ls->asker->rpath_origin[k]))
                return 1;
        return 0;
    }
    return 0;
}

/* LD_LIBRARY_PATH: each directory tried for every soname before the next. */
static int step_llp(struct linker_search *ls)
{
    if (ls->by == BY_ASKER)
        return linker_list(ls, LZ_STEP_LD_LIBRARY_PATH, ls->asker->llp, LZ_LINKER_LLP_SEPS,
                           ls->asker->llp_origin);
    return linker_llp(ls);
}

/* DT_RUNPATH: the requester's own. */
static int step_runpath(struct linker_search *ls)
{
    if (ls->by == BY_LOADED)
        return lz_strlist_visit(&ls->loaded.runpath, visit_runpath, ls);
    const char *list = ls->by == BY_ASKER ? ls->asker->runpath : ls->runpath;
    const char *origin = ls->by == BY_ASKER ? ls->asker->runpath_origin : ls->origin;
    return linker_list(ls, LZ_STEP_RUN_PATH, list, LZ_LINKER_RUNPATH_SEPS, origin);
}

/* 1 when path lies in one of the system directories (ld.so compares the
 * directory with its trailing slash as a prefix). */
static int in_system_dir(const char *path)
{
    for (const char *const *d = system_dirs(); *d; d++) {
        size_t n = strlen(*d);
        if (strncmp(path, *d, n) == 0 && path[n] == '/')
            return 1;
    }
    return 0;
}

/* ld.so.cache, one soname after another in preference order; with
 * DF_1_NODEFLIB, no entry that lies in a system directory. */
static int step_cache(struct linker_search *ls)
{
    const lz_linker_hooks *hooks = ls->h;
    int rc = 0;
    if (lz_objects_ldso_options()->inhibit_cache) {
        if (hooks->note)
            hooks->note(hooks->ctx, LZ_STEP_LDCACHE, "ld.so runs with --inhibit-cache");
        return 0;
    }
    for (const char *const *s = ls->sonames; *s && !rc; s++) {
        if (hooks->looked) {
            char place[128];
            snprintf(place, sizeof place, "/etc/ld.so.cache for %s", *s);
            hooks->looked(hooks->ctx, LZ_STEP_LDCACHE, place);
        }
        char *path = lz_ldcache_path("/etc/ld.so.cache", *s, lz_hwcaps_subdirs);
        if (path && ls->nodeflib && in_system_dir(path)) {
            if (hooks->note)
                hooks->note(hooks->ctx, LZ_STEP_LDCACHE, "its entry lies in a system directory, "
                            "which a requester with DF_1_NODEFLIB does not search");
        } else
            rc = path && hooks->visit(hooks->ctx, LZ_STEP_LDCACHE, path);
        free(path);
    }
    return rc;
}

/* The system directories, read from ld.so only when a search reaches them;
 * none with DF_1_NODEFLIB. */
static int step_system(struct linker_search *ls)
{
    int rc = 0;
    for (const char *const *d = ls->nodeflib ? NULL : system_dirs(); d && *d && !rc; d++)
        rc = linker_dir(ls, LZ_STEP_SYSTEM_DIRS, *d);
    return rc;
}

/* The run paths of the objects needing the library after the requester,
 * which ld.so never searches (lz_runpaths.later): reached only where its
 * own search found nothing, where it would have refused to load the
 * requester at all, which laziness has loaded. */
static int step_later(struct linker_search *ls)
{
    return ls->by == BY_LOADED && lz_strlist_visit(&ls->loaded.later, visit_runpath, ls);
}

/* ld.so's order, written once: every requester walks these rows. */
static const struct linker_row {
    const char *name, *what;
    int (*run)(struct linker_search *);
} linker_rows[] = {
    {LZ_STEP_RUN_PATH, "DT_RPATH of the requester and the objects above it, where it has no DT_RUNPATH",
     step_rpath},
    {LZ_STEP_LD_LIBRARY_PATH, "each directory of LD_LIBRARY_PATH as the process started with it",
     step_llp},
    {LZ_STEP_RUN_PATH, "DT_RUNPATH of the requester", step_runpath},
    {LZ_STEP_LDCACHE, "/etc/ld.so.cache, unless DF_1_NODEFLIB and the entry lies in a system directory",
     step_cache},
    {LZ_STEP_SYSTEM_DIRS, "the system directories ld.so was built with, unless DF_1_NODEFLIB",
     step_system},
    {LZ_STEP_RUN_PATH, "run paths of the objects needing it after the requester, where ld.so "
     "would have refused the requester", step_later},
};
enum { LINKER_FIRST_SYSTEM_ROW = 3 };

static int linker_walk(struct linker_search *ls, size_t from)
{
    for (size_t i = from; i < sizeof linker_rows / sizeof linker_rows[0]; i++)
        if (linker_rows[i].run(ls))
            return 1;
    return 0;
}

void lz_linker_each(void (*fn)(void *ctx, const char *name, const char *what), void *ctx)
{
    for (size_t i = 0; i < sizeof linker_rows / sizeof linker_rows[0]; i++)
        fn(ctx, linker_rows[i].name, linker_rows[i].what);
}

int lz_linker_lookup(const char *const *sonames, const lz_linker_hooks *hooks)
{
    struct linker_search ls = {.sonames = sonames, .h = hooks, .by = BY_LOADED};
    int rc = linker_walk(&ls, 0);
    lz_runpaths_free(&ls.loaded);
    return rc;
}

int lz_linker_lookup_from(const char *const *sonames, const char *origin, const char *rpath,
                          const char *runpath, const lz_linker_hooks *hooks)
{
    struct linker_search ls = {.sonames = sonames, .h = hooks, .by = BY_LIBRARY, .origin = origin,
                               .rpath = rpath, .runpath = runpath};
    return linker_walk(&ls, 0);
}

int lz_linker_lookup_asker(const char *const *sonames, const lz_linker_asker *a,
                           const lz_linker_hooks *hooks)
{
    struct linker_search ls = {.sonames = sonames, .h = hooks, .by = BY_ASKER, .asker = a};
    return linker_walk(&ls, 0);
}

int lz_linker_system_lookup(const char *const *sonames, int nodeflib, const lz_linker_hooks *hooks)
{
    struct linker_search ls = {.sonames = sonames, .h = hooks, .by = BY_LOADED, .nodeflib = nodeflib};
    return linker_walk(&ls, LINKER_FIRST_SYSTEM_ROW);
}
