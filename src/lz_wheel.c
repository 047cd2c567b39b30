/* SPDX-License-Identifier: MIT
 * The wheel step of the search order (docs/search-order.md, step 3): the
 * policy of where Python wheels put NVIDIA's libraries, in one place. */
#include "lz_wheel.h"
#include "lz_candidate.h"
#include "lz_objects.h"
#include "lz_pathlist.h"
#include "lz_python.h"
#include "lz_report.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The directory names the wheel step knows: a site directory is the first
 * site-packages or dist-packages component of a path; site_of gives the
 * length of the path up to and including it (0: none). lz_objects.c is
 * handed this, and knows no directory name itself. */
static int site_name(const char *base)
{
    return strcmp(base, "site-packages") == 0 || strcmp(base, "dist-packages") == 0;
}

static size_t site_of(const char *path)
{
    const char *hit = strstr(path, "/site-packages/");
    if (!hit)
        hit = strstr(path, "/dist-packages/");
    /* both names are 14 characters long */
    return hit ? (size_t)(hit - path) + sizeof "/site-packages" - 1 : 0;
}

/* Python wheels, as cuda.pathfinder finds them (step 3 of lz_search): nvidia/<lib>/lib (the
 * spec's wheel directories) below, in order, the site-packages (or
 * dist-packages) directory holding this shim (vendored in
 * site-packages/<pkg>/ or <pkg>/_libs/), each such directory holding a
 * mapped object (a framework's extension, the object a preloaded drop-in
 * stands in for, the venv of the running interpreter), and each PYTHONPATH
 * entry (pip install --target DIR; an in-place build). The objects and
 * PYTHONPATH are the caller's choice as much as argv[0] is: not in a
 * secure-execution process. */
static int seen_site(lz_walk *w, const char *dir)
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

static int try_wheel_dirs(lz_walk *w, const char *root)
{
    if (seen_site(w, root))
        return 0;
    int rc = 0;
    for (const char *const *wd = w->lib->wheel_dirs; *wd && !rc; wd++) {
        char *sub = lz_join(w, "wheel", root, *wd);
        rc = sub && lz_try_dir(w, "wheel", sub, 1);
        free(sub);
    }
    return rc;
}

/* The wheel directories below root's real path (realpath allocates: no
 * PATH_MAX buffer on the stack of a walk). */
static int try_wheel_dirs_real(lz_walk *w, const char *root)
{
    char *real = root && root[0] ? realpath(root, NULL) : NULL;
    int rc = real && try_wheel_dirs(w, real);
    free(real);
    return rc;
}

/* The site-packages above real, a canonical path (consumed). */
static int wheel_above_real(lz_walk *w, char *dir)
{
    int rc = 0;
    for (char *slash = dir ? strrchr(dir, '/') : NULL; slash && slash != dir;
         slash = strrchr(dir, '/')) {
        *slash = '\0';
        const char *base = strrchr(dir, '/');
        base = base ? base + 1 : dir;
        if (!site_name(base))
            continue;
        rc = try_wheel_dirs(w, dir);
        break;
    }
    free(dir);
    return rc;
}

static int wheel_above(lz_walk *w, const char *self)
{
    return wheel_above_real(w, self ? realpath(self, NULL) : NULL);
}

/* The wheel step's pass over the loaded objects: the shim's own
 * site-packages first, then each loaded object's. */
struct wheel_sites {
    lz_walk *w;
    char *self;              /* consumed by the first visit */
    int above_done;
};

static int wheel_self(struct wheel_sites *m)
{
    if (m->above_done)
        return 0;
    m->above_done = 1;
    char *self = m->self;
    m->self = NULL;
    return wheel_above_real(m->w, self);
}

static int visit_site(void *ctx, const char *dir, const char *why)
{
    (void)why;
    struct wheel_sites *m = ctx;
    /* the dynamic linker's names may hold symbolic links and ".." */
    return wheel_self(m) || (dir && try_wheel_dirs_real(m->w, dir));
}

static int wheel_pythonpath(lz_walk *w)
{
    const char *pp = lz_getenv("PYTHONPATH");
    for (const char *p = pp; p && *p;) {
        size_t len = lz_path_next(p, ":");
        char *entry = len > 0 && len < PATH_MAX ? strndup(p, len) : NULL;
        /* Relative entries are relative to the current directory, as
         * Python reads them; a missing one is skipped. */
        int rc = try_wheel_dirs_real(w, entry);
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
    return try_wheel_dirs_real(ctx, entry);
}

static int wheel_sys_path(lz_walk *w)
{
    const char *why;
    if (lz_python_path(visit_sys_path, w, &why))
        return 1;
    if (why)
        lz_looked(w, "wheel", why);
    return 0;
}

int lz_step_wheel(lz_walk *w)
{
    if (!w->lib->wheel_dirs[0])
        return 0;
    if (w->req.origin) {
        /* lazynccl-info --from stands for a shim elsewhere: the tool's own
         * loaded objects say nothing of that process. */
        if (wheel_above(w, w->req.origin))
            return 1;
        if (lz_secure())
            return 0;
        if (wheel_pythonpath(w))
            return 1;
    } else {
        struct wheel_sites m = {w, NULL, 0};
        int secure = lz_secure();
        int rc = lz_objects_sites(&m.self, site_of, secure ? NULL : visit_site, &m) || wheel_self(&m);
        free(m.self);
        if (rc)
            return 1;
        if (secure)
            return 0;
        if (wheel_pythonpath(w) || wheel_sys_path(w))
            return 1;
    }
    if (w->sites_len == 0)
        lz_looked(w, "wheel", "no site-packages above this shim or the loaded objects, "
                              "no PYTHONPATH entry");
    return 0;
}
