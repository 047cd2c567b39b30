/* Judging one candidate: is it there, can it serve, then load it. */
#include "lz_search.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int accept(lz_walk *w, const char *step, const char *path, void *handle)
{
    w->found = 1;
    w->handle = handle;
    w->step = step;
    snprintf(w->path, sizeof w->path, "%s", path);
    lz_note(w, "[%s] %s: chosen", step, path);
    return 1;
}

/* Load a handle and check it exports what the spec requires. */
static int take_handle(lz_walk *w, const char *step, const char *shown, void *handle)
{
    const char *missing = missing_required(w->lib, handle);
    if (missing) {
        lz_note(w, "[%s] %s: rejected: does not export %s", step, shown, missing);
        dlclose(handle);
        return 0;
    }
    return accept(w, step, handle_path(handle, shown), handle);
}

int lz_try_file(lz_walk *w, const char *step, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        lz_note(w, "[%s] %s: rejected: %s", step, path, strerror(errno));
        return 0;
    }
    if (S_ISDIR(sb.st_mode)) {
        lz_note(w, "[%s] %s: rejected: is a directory", step, path);
        return 0;
    }
    if (access(path, R_OK) != 0) {
        lz_note(w, "[%s] %s: rejected: %s", step, path, strerror(errno));
        return 0;
    }
    if (w->dry_run)
        return accept(w, step, path, NULL);
    void *handle = dlopen(path, LZ_DLOPEN_FLAGS);
    if (!handle) {
        const char *e = dlerror();
        lz_note(w, "[%s] %s: rejected: %s", step, path, e ? e : "dlopen failed");
        return 0;
    }
    return take_handle(w, step, path, handle);
}

int lz_try_soname(lz_walk *w, const char *step, const char *soname)
{
    if (w->dry_run) {
        lz_note(w, "[%s] %s: not judged without loading", step, soname);
        return 0;
    }
    void *handle = dlopen(soname, LZ_DLOPEN_FLAGS);
    if (!handle) {
        const char *e = dlerror();
        lz_note(w, "[%s] %s: rejected: %s", step, soname, e ? e : "dlopen failed");
        return 0;
    }
    return take_handle(w, step, soname, handle);
}

int lz_try_loaded(lz_walk *w, const char *step, const char *soname)
{
    void *handle = dlopen(soname, LZ_DLOPEN_FLAGS | RTLD_NOLOAD);
    if (!handle)
        return 0;
    if (w->dry_run) {
        accept(w, step, handle_path(handle, soname), NULL);
        dlclose(handle);
        return 1;
    }
    return take_handle(w, step, soname, handle);
}
