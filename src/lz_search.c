/* SPDX-License-Identifier: MIT
 * The search order (docs/search-order.md). Each step proposes candidates in
 * turn; the first one accepted ends the walk. */
#include "lz_search.h"
#include "lz_asked.h"
#include "lz_candidate.h"
#include "lz_linker.h"
#include "lz_report.h"
#include "lz_objects.h"
#include "lz_pathlist.h"
#include "lz_python.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* dir/name (lz_path_dup) in a walk, which says why when there is none. */
static char *join(lz_walk *w, const char *step, const char *dir, const char *name)
{
    char *out = lz_path_dup(dir, name);
    if (out)
        return out;
    if (strlen(dir) + 1 + strlen(name) + 1 > PATH_MAX) {
        char shown[96];
        snprintf(shown, sizeof shown, "%.64s.../%.16s", dir, name);
        lz_verdict(w, step, shown, LZ_REJECTED, NULL, "path longer than PATH_MAX (%d)", PATH_MAX);
    } else
        lz_note(w, "out of memory: %s/%s was not tried", dir, name);
    return NULL;
}

static void say_why_unused(lz_walk *w, const char *step, const char *dir, int quiet);

/* Try every soname in a directory. quiet: a directory of the default order
 * that holds none is not worth a line in the report. */
static int try_dir(lz_walk *w, const char *step, const char *dir, int quiet)
{
    int any = 0, rc = 0;
    lz_looked(w, step, dir);
    for (const char *const *s = w->lib->sonames; *s && !rc; s++) {
        char *path = join(w, step, dir, *s);
        if (path && lz_linker_exists(path)) {
            any = 1;
            rc = lz_try_file(w, step, path);
        }
        free(path);
    }
    if (!any)
        say_why_unused(w, step, dir, quiet);
    return rc;
}

/* Say why a directory that was named could not be used: missing, a
 * dangling link, unreadable; the default steps' absent ones say nothing. */
__attribute__((noinline)) static void say_why_unused(lz_walk *w, const char *step,
                                                     const char *dir, int quiet)
{
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        if (!quiet || errno != ENOENT || lstat(dir, &sb) == 0)
            lz_verdict(w, step, dir, LZ_REJECTED, NULL, "%s",
                       lstat(dir, &sb) == 0 ? "a dangling symbolic link" : strerror(errno));
        return;
    }
    if (!S_ISDIR(sb.st_mode) || faccessat(AT_FDCWD, dir, R_OK | X_OK, AT_EACCESS) != 0) {
        lz_verdict(w, step, dir, LZ_REJECTED, NULL, "cannot be searched: %s",
                   S_ISDIR(sb.st_mode) ? strerror(errno) : "not a directory");
        return;
    }
    if (quiet)
        return;
    char names[512], also[512] = "";
    lz_soname_list(w->lib, names, sizeof names);
    /* A soname the spec knows it cannot serve (CUDA 11 NVRTC, say) is worth naming. */
    for (const lz_unsupported *u = w->lib->unsupported; u && u->soname; u++) {
        char *path = join(w, step, dir, u->soname);
        int held = path && lz_linker_exists(path);
        free(path);
        if (held) {
            snprintf(also, sizeof also, " (it holds %s: %s, not supported by this shim)",
                     u->soname, u->what);
            break;
        }
    }
    lz_verdict(w, step, dir, LZ_REJECTED, NULL, "the directory holds no %s%s", names, also);
}

/* One entry of an override list: a file or a directory, absolute only. */
static int try_entry(lz_walk *w, const char *step, const char *entry, size_t len)
{
    if (len == 0) {
        lz_verdict(w, step, "", LZ_REJECTED, NULL, "never read as the current directory");
        return 0;
    }
    if (len >= PATH_MAX) {
        char shown[80];
        snprintf(shown, sizeof shown, "%.64s...", entry);
        lz_verdict(w, step, shown, LZ_REJECTED, NULL, "path longer than PATH_MAX (%d)", PATH_MAX);
        return 0;
    }
    char *path = strndup(entry, len);
    if (!path) {
        lz_note(w, "[%s] out of memory: an entry was not tried", step);
        return 0;
    }
    struct stat sb;
    int rc = 0;
    if (path[0] != '/')
        lz_verdict(w, step, path, LZ_REJECTED, NULL,
                   "relative path (only absolute paths are accepted)");
    else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        rc = try_dir(w, step, path, 0);
    else
        rc = lz_try_file(w, step, path);
    free(path);
    return rc;
}

static int try_list(lz_walk *w, const char *step, const char *list)
{
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (try_entry(w, step, p, len))
            return 1;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* 1. The override: authoritative when set. 1 when the walk must stop. */
static int step_override(lz_walk *w)
{
    const lz_lib *lib = w->lib;
    if (lz_secure() && getenv(lib->env_var))
        lz_note(w, "[%s] ignored: secure-execution process (setuid/setcap)", lib->env_var);
    const char *env = lz_getenv(lib->env_var);
    const char *asked, *by;
    int was_asked = lz_asked(lib, &asked, &by);
    if (env) {
        if (was_asked)
            lz_note(w, "[asked by path] %s (dlopen by %s): not tried, %s names the library",
                    asked, by, lib->env_var);
        if (!try_list(w, lib->env_var, env))
            lz_note(w, "%s is set, so nothing else was tried", lib->env_var);
        return 1;
    }
    if (w->req.search_list) {
        if (!try_list(w, "search list", w->req.search_list))
            lz_note(w, "a search list was set by the program, so nothing else was tried");
        return 1;
    }
    return 0;
}

/* 1b. The file the program asked for by path, which lazynccl-run's audit
 * module redirected to this drop-in: what the program would have loaded. */
static int step_asked(lz_walk *w)
{
    const char *asked, *by;
    if (!lz_asked(w->lib, &asked, &by))
        return 0;
    lz_looked(w, "asked by path", asked);
    lz_log(w->lib, "the program asked for %s (dlopen by %s)", asked, by);
    return lz_try_file(w, "asked by path", asked);
}

/* 2. A copy already in the process: every loaded object carrying one of the
 * spec's sonames, in preference order (not dlopen(RTLD_NOLOAD), which sees
 * one object per soname). lz_try_file judges each like any candidate. */
static int visit_loaded(void *ctx, const char *path, const char *why)
{
    (void)why;
    return path && lz_try_file(ctx, "already loaded", path);
}

static int step_loaded(lz_walk *w)
{
    w->reusing = 1;
    int rc = 0;
    for (const char *const *s = w->lib->sonames; *s && !rc; s++) {
        if (w->rep.text) {
            char place[128];
            snprintf(place, sizeof place, "objects with SONAME %s", *s);
            lz_looked(w, "already loaded", place);
        }
        rc = lz_objects_with_soname(*s, visit_loaded, w);
    }
    w->reusing = 0;
    return rc;
}

/* 3. Python wheels, as cuda.pathfinder finds them: nvidia/<lib>/lib (the
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
        char *sub = join(w, "wheel", root, *wd);
        rc = sub && try_dir(w, "wheel", sub, 1);
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
        if (strcmp(base, "site-packages") != 0 && strcmp(base, "dist-packages") != 0)
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

static int step_wheel(lz_walk *w)
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
        int rc = lz_objects_sites(&m.self, secure ? NULL : visit_site, &m) || wheel_self(&m);
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

/* 4. and 6. Directories below the prefixes environment variables name
 * (the spec's search roots: CONDA_PREFIX, CUDA_HOME, ...). */
static int step_env_dirs(lz_walk *w, const char *var, const char *const *subdirs)
{
    const char *root = lz_getenv(var);
    if (!root || !*root) {
        lz_looked(w, "not set", var);
        return 0;
    }
    if (root[0] != '/') {
        lz_verdict(w, var, root, LZ_REJECTED, NULL,
                   "relative path (only absolute paths are accepted)");
        return 0;
    }
    int rc = 0;
    for (const char *const *s = subdirs; *s && !rc; s++) {
        char *dir = join(w, var, root, *s);
        rc = dir && try_dir(w, var, dir, 1);
        free(dir);
    }
    return rc;
}

static int step_roots(lz_walk *w, const lz_root *roots)
{
    for (const lz_root *r = roots; r && r->var; r++)
        if (step_env_dirs(w, r->var, r->subdirs))
            return 1;
    return 0;
}

static int visit_candidate(void *ctx, const char *step, const char *path)
{
    return lz_try_file(ctx, step, path);
}

static void note_candidate(void *ctx, const char *step, const char *text)
{
    lz_note(ctx, "[%s] %s", step, text);
}

static void looked_candidate(void *ctx, const char *step, const char *place)
{
    lz_looked(ctx, step, place);
}

static int step_linker(lz_walk *w)
{
    lz_linker_hooks h = {visit_candidate, note_candidate, w->rep.text ? looked_candidate : NULL, w};
    if (w->lib->system_only)
        return lz_system_lookup(w->lib->sonames, &h);
    return lz_linker_lookup(w->lib->sonames, &h);
}

/* 7. The spec's default directories (the CUDA Toolkit's, for CUDA's libraries). */
static int step_default(lz_walk *w)
{
    for (const char *const *d = w->lib->default_dirs; d && *d; d++)
        if (try_dir(w, "default directories", *d, 1))
            return 1;
    return 0;
}

void lz_search(lz_walk *w)
{
    size_t start = w->rep.len;
    w->res.fallback_score = LZ_NO_FALLBACK;
    if (step_override(w))
        ;
    else if (w->lib->system_only)
        /* The runtime's own helper (libelf): only from places the caller
         * cannot plant a file in (issue 13, item 10). */
        (void)(step_loaded(w) || step_linker(w));
    else
        (void)(step_asked(w) || step_loaded(w) || step_wheel(w) || step_roots(w, w->lib->roots_before) ||
               step_linker(w) || step_roots(w, w->lib->roots_after) || step_default(w));
    if (!w->res.found)
        lz_take_fallback(w);
    if (!w->res.found && w->rep.len == start)
        lz_note(w, LZ_NOTE_NOTHING_FOUND);
    if (!w->res.found)
        lz_report_places(w);
}
