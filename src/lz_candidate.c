/* Judging one candidate: probe it, score it against what the first call
 * asked for, and load it only when it is the one. */
#include "lz_probe.h"
#include "lz_search.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define LZ_DLOPEN_FLAGS (RTLD_LAZY | RTLD_LOCAL)

/* The file the dynamic linker mapped for a handle, or fallback. */
static const char *handle_path(void *handle, const char *fallback)
{
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
        return map->l_name;
    return fallback;
}

/* The first required symbol the handle lacks, or NULL. */
static const char *missing_required(const lz_lib *lib, void *handle)
{
    for (const char *const *r = lib->required; *r; r++)
        if (!dlsym(handle, *r))
            return *r;
    return NULL;
}

/* 1 when a loaded handle is a shim (a drop-in), not the real library. */
static int is_shim(const lz_lib *lib, void *handle)
{
    char marker[128];
    return dlsym(handle, lz_shim_marker(lib, marker, sizeof marker)) != NULL;
}

/* The walk ends at the chosen candidate, except an exhaustive one. */
static int accept(lz_walk *w, const char *step, const char *path, void *handle,
                  const lz_probe *p)
{
    w->found = 1;
    w->handle = handle;
    w->step = step;
    snprintf(w->path, sizeof w->path, "%s", path);
    lz_verdict(w, step, path, LZ_CHOSEN, p, NULL);
    return !w->exhaustive;
}

/* Load a probed (or unprobeable) file; on failure the walk goes on. */
static int load(lz_walk *w, const char *step, const char *path, const lz_probe *p)
{
    if (w->dry_run)
        return accept(w, step, path, NULL, p);
    void *handle = dlopen(path, LZ_DLOPEN_FLAGS);
    if (!handle) {
        const char *e = dlerror();
        lz_verdict(w, step, path, LZ_REJECTED, p, "%s", e ? e : "dlopen failed");
        return 0;
    }
    if (!p && is_shim(w->lib, handle)) {
        lz_verdict(w, step, path, LZ_REJECTED, NULL, "a lazynccl shim (drop-in), not the real library");
        dlclose(handle);
        return 0;
    }
    const char *missing = p ? NULL : missing_required(w->lib, handle);
    if (missing) {
        lz_verdict(w, step, path, LZ_REJECTED, NULL, "does not export %s", missing);
        dlclose(handle);
        return 0;
    }
    return accept(w, step, handle_path(handle, path), handle, p);
}

/* 2: serves the wanted name exactly; 1: only through an older version of
 * the same major; 0: not that family's major at all. */
static int score(const lz_walk *w, const lz_probe *p)
{
    const lz_sym *want = w->want;
    if (!want || !want->family || lz_probe_exports(p, want->name))
        return 2;
    int same_major = 0, any = 0;
    for (size_t j = 0; j < w->lib->nsyms; j++) {
        const lz_sym *s = &w->lib->syms[j];
        if (!s->family || strcmp(s->family, want->family) != 0 || !lz_probe_exports(p, s->name))
            continue;
        any = 1;
        if (want->major >= 0 && s->major == want->major && s->minor < want->minor)
            same_major = 1;
    }
    if (want->major < 0)
        return any ? 2 : 0; /* the unversioned name: any member serves */
    return same_major;
}

/* 1 when path is the file holding this very code (a drop-in on its own
 * search path). */
static int is_self(const char *path)
{
    Dl_info info;
    struct stat a, b;
    return dladdr((void *)is_self, &info) && info.dli_fname && stat(info.dli_fname, &a) == 0 &&
           stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int lz_try_file(lz_walk *w, const char *step, const char *path)
{
    if (w->lib->probe && is_self(path)) {
        lz_verdict(w, step, path, LZ_REJECTED, NULL, "this shim itself (a drop-in), not the real library");
        return 0;
    }
    if (!w->lib->probe)
        return load(w, step, path, NULL);
    lz_probe p;
    int rc = lz_probe_file(w->lib, path, &p);
    if (rc == LZ_PROBE_REJECTED) {
        lz_verdict(w, step, path, LZ_REJECTED, &p, "%s", p.reason);
        return 0;
    }
    if (rc == LZ_PROBE_UNAVAILABLE) {
        lz_note(w, "[%s] %s: not probed (%s)", step, path, p.reason);
        return w->found ? 0 : load(w, step, path, NULL);
    }
    if (w->found) { /* an exhaustive walk, past the chosen one */
        lz_verdict(w, step, path, LZ_NOT_REACHED, &p, NULL);
        lz_probe_free(&p);
        return 0;
    }
    int sc = score(w, &p);
    if (sc == 2) {
        rc = load(w, step, path, &p);
        lz_probe_free(&p);
        return rc;
    }
    lz_verdict(w, step, path, LZ_KEPT, &p, "does not export %s%s", w->want->name,
               sc ? "; kept in case no candidate does"
                  : " nor an older version of its major; kept as a last resort");
    lz_probe_free(&p);
    if (sc > w->fallback_score) {
        w->fallback_score = sc;
        w->fallback_step = step;
        snprintf(w->fallback_path, sizeof w->fallback_path, "%s", path);
    }
    return 0;
}

void lz_take_fallback(lz_walk *w)
{
    if (w->found || w->fallback_score < 0)
        return;
    lz_note(w, "no candidate exports %s; taking the first %s", w->want->name,
            w->fallback_score ? "that has an older version of its major"
                              : "acceptable one (that function will fail)");
    lz_probe p;
    if (lz_probe_file(w->lib, w->fallback_path, &p) == LZ_PROBE_OK) {
        load(w, w->fallback_step, w->fallback_path, &p);
        lz_probe_free(&p);
    }
}

int lz_try_loaded(lz_walk *w, const char *step, const char *soname)
{
    void *handle = dlopen(soname, LZ_DLOPEN_FLAGS | RTLD_NOLOAD);
    if (!handle)
        return 0;
    /* A copy is already mapped: reuse it, so the process never holds two.
     * Unless it is a shim (a drop-in loaded under the library's soname). */
    const char *path = handle_path(handle, soname);
    if (is_shim(w->lib, handle)) {
        lz_note(w, "[%s] %s: a lazynccl shim (drop-in), not the real library: skipped", step, path);
        dlclose(handle);
        return 0;
    }
    if (w->dry_run) {
        int rc = accept(w, step, path, NULL, NULL);
        dlclose(handle);
        return rc;
    }
    return accept(w, step, path, handle, NULL);
}
