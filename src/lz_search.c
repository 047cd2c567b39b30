/* The search order (docs/search-order.md). Each step proposes candidates in
 * turn; the first one accepted ends the walk. */
#include "lz_search.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const default_dirs[] = {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", NULL};
static const char *const system_dirs[] = {
#if defined(__x86_64__)
    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
    "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
    "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL};

static int join(lz_walk *w, const char *step, char *out, const char *dir, const char *name)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
    if (n < 0 || n >= PATH_MAX) {
        char shown[96];
        snprintf(shown, sizeof shown, "%.64s.../%.16s", dir, name);
        lz_verdict(w, step, shown, LZ_REJECTED, NULL, "path longer than PATH_MAX (%d)", PATH_MAX);
        return 0;
    }
    return 1;
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Try every soname in a directory. quiet: a directory of the default order
 * that holds none is not worth a line in the report. */
static int try_dir(lz_walk *w, const char *step, const char *dir, int quiet)
{
    char path[PATH_MAX];
    int any = 0;
    for (const char *const *s = w->lib->sonames; *s; s++) {
        if (!join(w, step, path, dir, *s) || !exists(path))
            continue;
        any = 1;
        if (lz_try_file(w, step, path))
            return 1;
    }
    if (!any && !quiet)
        lz_verdict(w, step, dir, LZ_REJECTED, NULL, "the directory holds no %s",
                   w->lib->sonames[0]);
    return 0;
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
    char path[PATH_MAX];
    memcpy(path, entry, len);
    path[len] = '\0';
    if (path[0] != '/') {
        lz_verdict(w, step, path, LZ_REJECTED, NULL,
                   "relative path (only absolute paths are accepted)");
        return 0;
    }
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return try_dir(w, step, path, 0);
    return lz_try_file(w, step, path);
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
    if (env) {
        if (!try_list(w, lib->env_var, env))
            lz_note(w, "%s is set, so nothing else was tried", lib->env_var);
        return 1;
    }
    if (lib->st->search_list) {
        if (!try_list(w, "search list", lib->st->search_list))
            lz_note(w, "a search list was set by the program, so nothing else was tried");
        return 1;
    }
    return 0;
}

/* 2. A copy already in the process. */
static int step_loaded(lz_walk *w)
{
    for (const char *const *s = w->lib->sonames; *s; s++)
        if (lz_try_loaded(w, "already loaded", *s))
            return 1;
    return 0;
}

/* 3. Python wheels: the site-packages directory above the object holding
 * this code (a shim vendored in site-packages/<pkg>/ or <pkg>/_libs/). */
static int step_wheel(lz_walk *w)
{
    if (!w->lib->wheel_dirs[0])
        return 0;
    Dl_info info;
    char dir[PATH_MAX], sub[PATH_MAX];
    const char *self = w->origin;
    if (!self && dladdr((void *)step_wheel, &info))
        self = info.dli_fname;
    if (!self || !realpath(self, dir))
        return 0;
    for (char *slash = strrchr(dir, '/'); slash && slash != dir; slash = strrchr(dir, '/')) {
        *slash = '\0';
        const char *base = strrchr(dir, '/');
        base = base ? base + 1 : dir;
        if (strcmp(base, "site-packages") != 0 && strcmp(base, "dist-packages") != 0)
            continue;
        for (const char *const *wd = w->lib->wheel_dirs; *wd; wd++)
            if (join(w, "wheel", sub, dir, *wd) && try_dir(w, "wheel", sub, 1))
                return 1;
        return 0;
    }
    return 0;
}

/* 4. and 5. Directories named by environment variables. */
static int step_env_dirs(lz_walk *w, const char *var, const char *const *subdirs)
{
    const char *root = lz_getenv(var);
    if (!root || !*root)
        return 0;
    if (root[0] != '/') {
        lz_verdict(w, var, root, LZ_REJECTED, NULL,
                   "relative path (only absolute paths are accepted)");
        return 0;
    }
    char dir[PATH_MAX];
    for (const char *const *s = subdirs; *s; s++)
        if (join(w, var, dir, root, *s) && try_dir(w, var, dir, 1))
            return 1;
    return 0;
}

static int step_environment(lz_walk *w)
{
    static const char *const lib_only[] = {"lib", NULL};
    static const char *const cuda[] = {"lib64", "lib", NULL};
    if (step_env_dirs(w, "CONDA_PREFIX", lib_only))
        return 1;
    if (step_env_dirs(w, "CUDA_HOME", cuda) || step_env_dirs(w, "CUDA_PATH", cuda))
        return 1;
    for (const char *const *v = w->lib->home_vars; *v; v++)
        if (step_env_dirs(w, *v, lib_only))
            return 1;
    return 0;
}

/* The dynamic linker's search for one soname, as far as it is followed
 * here: each existing file is passed to visit until it returns 1. */
int lz_linker_lookup(const char *soname, lz_visit_fn visit, void *ctx)
{
    char path[PATH_MAX];
    const char *llp = lz_getenv("LD_LIBRARY_PATH");
    for (const char *p = llp; p && *p;) {
        size_t len = strcspn(p, ":;");
        /* Empty and relative entries are skipped, never read as ".". */
        if (len > 0 && p[0] == '/' && len + strlen(soname) + 2 <= sizeof path) {
            snprintf(path, sizeof path, "%.*s/%s", (int)len, p, soname);
            if (exists(path) && visit(ctx, "LD_LIBRARY_PATH", path))
                return 1;
        }
        p += len + (p[len] != '\0');
    }
    if (lz_ldcache_lookup("/etc/ld.so.cache", soname, path, sizeof path) &&
        visit(ctx, "ld.so.cache", path))
        return 1;
    for (const char *const *d = system_dirs; *d; d++) {
        snprintf(path, sizeof path, "%s/%s", *d, soname);
        if (exists(path) && visit(ctx, "system directories", path))
            return 1;
    }
    return 0;
}

static int visit_candidate(void *ctx, const char *step, const char *path)
{
    return lz_try_file(ctx, step, path);
}

/* 6. The dynamic linker's search, followed here so that the file it would
 * load is probed first: LD_LIBRARY_PATH, ld.so.cache, system directories. */
static int step_linker(lz_walk *w)
{
    for (const char *const *s = w->lib->sonames; *s; s++)
        if (lz_linker_lookup(*s, visit_candidate, w))
            return 1;
    return 0;
}

/* 7. The CUDA Toolkit's default location. */
static int step_default(lz_walk *w)
{
    for (const char *const *d = default_dirs; *d; d++)
        if (try_dir(w, "/usr/local/cuda", *d, 1))
            return 1;
    return 0;
}

void lz_search(lz_walk *w)
{
    w->fallback_score = -1;
    if (!step_override(w))
        (void)(step_loaded(w) || step_wheel(w) || step_environment(w) || step_linker(w) ||
               step_default(w));
    if (!w->found)
        lz_take_fallback(w);
}
