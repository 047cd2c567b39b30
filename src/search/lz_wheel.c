/* SPDX-License-Identifier: MIT
 * The wheel step of the search order (docs/reference/search-order.md): the
 * policy of where Python wheels put NVIDIA's libraries, in one place. */
#include "search/lz_wheel.h"
#include "common/lz_sitedirs.h"
#include "common/lz_stepnames.h"
#include "search/lz_candidate.h"
#include "process/lz_objects_sites.h"
#include "base/lz_path.h"
#include "process/lz_python.h"
#include "base/lz_env.h"
#include "search/lz_emit.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The site directories' names (common/lz_sitedirs.h). lz_objects_sites.c
 * is handed site_of, and knows no directory name itself. */
static const char *const site_dirs[LZ_NSITE_DIRS] = LZ_SITE_DIRS;

/* Whether the n bytes at name are a site directory's name. */
static int site_name(const char *name, size_t n)
{
    for (size_t i = 0; i < LZ_NSITE_DIRS; i++)
        if (strlen(site_dirs[i]) == n && strncmp(name, site_dirs[i], n) == 0)
            return 1;
    return 0;
}

/* The length of path up to and including its site directory, the first
 * component named so (0: none). */
static size_t site_of(const char *path)
{
    for (size_t i = 0; i < LZ_NSITE_DIRS; i++) {
        size_t n = strlen(site_dirs[i]);
        for (const char *hit = strstr(path, site_dirs[i]); hit; hit = strstr(hit + 1, site_dirs[i]))
            if (hit > path && hit[-1] == '/' && hit[n] == '/')
                return (size_t)(hit - path) + n;
    }
    return 0;
}

/* Python wheels, as cuda.pathfinder finds them (a step of lz_order): nvidia/<lib>/lib (the
 * spec's wheel directories) below, in order, the site-packages (or
 * dist-packages) directory holding this shim (vendored in
 * site-packages/<pkg>/ or <pkg>/_libs/), each such directory holding a
 * mapped object (a framework's extension, the object a preloaded drop-in
 * stands in for, the venv of the running interpreter), and each PYTHONPATH
 * entry (pip install --target DIR; an in-place build). The objects and
 * PYTHONPATH are the caller's choice as much as argv[0] is: not in a
 * secure-execution process. */
static int seen_site(lz_search *w, const char *dir)
{
    for (size_t off = 0; off < w->sites_len; off += strlen(w->sites + off) + 1)
        if (strcmp(w->sites + off, dir) == 0)
            return 1;
    size_t n = strlen(dir) + 1;
    if (w->sites_len + n <= sizeof w->sites) {
        memcpy(w->sites + w->sites_len, dir, n);
        w->sites_len += n;
    }
    return 0;
}

/* The spec's wheel directories below real, a site directory's real path
 * (each site once per search). */
static int try_real_site(lz_search *w, const char *real)
{
    if (seen_site(w, real))
        return 0;
    int rc = 0;
    for (const char *const *wd = w->lib->wheel_dirs; *wd && !rc; wd++) {
        char *sub = lz_join(w, LZ_STEP_WHEEL, real, *wd);
        rc = sub && lz_try_dir(w, LZ_STEP_WHEEL, sub, 1);
        free(sub);
    }
    return rc;
}

/* The same below dir, as named (realpath allocates: no PATH_MAX buffer on
 * the stack of a search; a missing directory is skipped). */
static int try_site(lz_search *w, const char *dir)
{
    char *real = dir && dir[0] ? realpath(dir, NULL) : NULL;
    int rc = real && try_real_site(w, real);
    free(real);
    return rc;
}

/* The same below the site directory nearest above file (a path without
 * symbolic links or ".."), from its last directory up. */
static int try_site_above(lz_search *w, const char *file)
{
    for (const char *end = file ? strrchr(file, '/') : NULL; end && end != file;) {
        const char *prev = end - 1;
        while (prev > file && *prev != '/')
            prev--;
        const char *base = *prev == '/' ? prev + 1 : file;
        if (site_name(base, (size_t)(end - base))) {
            char *dir = strndup(file, (size_t)(end - file));
            int rc = dir && try_real_site(w, dir);
            free(dir);
            return rc;
        }
        end = *prev == '/' ? prev : NULL;
    }
    return 0;
}

/* lz_objects_sites's visitors: the shim's own site directory first, then
 * each loaded object's (the dynamic linker's names may hold symbolic links
 * and ".."). */
static int visit_own_site(void *ctx, const char *path)
{
    return try_site_above(ctx, path);
}

static int visit_object_site(void *ctx, const char *dir, const char *why)
{
    (void)why;
    return try_site(ctx, dir);
}

static int wheel_pythonpath(lz_search *w)
{
    const char *pp = lz_getenv("PYTHONPATH");
    for (const char *p = pp; p && *p;) {
        size_t len = lz_path_next(p, ":");
        char *entry = len > 0 && len < PATH_MAX ? strndup(p, len) : NULL;
        /* Relative entries are relative to the current directory, as
         * Python reads them; a missing one is skipped. */
        int rc = try_site(w, entry);
        free(entry);
        if (rc)
            return 1;
        p += len + (p[len] == ':');
    }
    return 0;
}

/* Each sys.path entry of the running Python: below it, the spec's wheel
 * directories (an entry is a site-packages, or a `pip install --target`
 * directory that plays one). */
static int visit_sys_path(void *ctx, const char *entry)
{
    return try_site(ctx, entry);
}

static int wheel_sys_path(lz_search *w)
{
    const char *why;
    if (lz_python_path(visit_sys_path, w, &why))
        return 1;
    if (why)
        lz_looked(w, LZ_STEP_WHEEL, why);
    return 0;
}

int lz_step_wheel(lz_search *w)
{
    int secure = lz_secure();
    /* lazynccl-info --from stands for a shim elsewhere: the tool's own
     * loaded objects and Python say nothing of that process. */
    const char *origin = w->req.origin;
    int rc;
    if (origin) {
        char *real = realpath(origin, NULL);
        rc = try_site_above(w, real);
        free(real);
    } else {
        rc = lz_objects_sites(site_of, visit_own_site, secure ? NULL : visit_object_site, w);
    }
    if (rc)
        return 1;
    if (secure)
        return 0;
    if (wheel_pythonpath(w) || (!origin && wheel_sys_path(w)))
        return 1;
    if (w->sites_len == 0)
        lz_looked(w, LZ_STEP_WHEEL, "no site-packages above this shim or the loaded objects, "
                              "no PYTHONPATH entry");
    return 0;
}
