/* SPDX-License-Identifier: MIT
 * Companions (lz_companions.h): files a library opens by bare name (NVRTC's
 * builtins), recorded when the library is chosen and loaded from beside it
 * before the first call that needs them. */
#include "search/lz_companions.h"
#include "base/lz_dl.h"
#include "elf/lz_elfpeek.h"
#include "search/lz_linker.h"
#include "process/lz_holder.h"
#include "process/lz_ldlock.h"
#include "process/lz_objects.h"
#include "base/lz_path.h"
#include "elf/lz_probe.h"
#include "base/lz_report.h"
#include "base/lz_log.h"
#include "search/lz_emit.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The companion's file name (prefix "libnvrtc-builtins.so.") beside the
 * library in dir: the one name prefix + major + "." + minor there, the major
 * taken from the library's SONAME (libnvrtc.so.13). One readdir, where
 * reading the name out of the library's .rodata reads tens of megabytes;
 * that remains the fallback (no SONAME major, or several
 * minors beside it). 1 when found. */
static int companion_beside(const char *dir, const char *prefix, const char *soname, char *name,
                            size_t size)
{
    size_t plen = strlen(prefix);
    if (plen && prefix[plen - 1] != '.') /* a whole name: "libcudnn_ops.so.9" */
        return snprintf(name, size, "%s", prefix) < (int)size;
    const char *so = soname ? strstr(soname, ".so.") : NULL;
    if (!so || so[4] < '0' || so[4] > '9')
        return 0;
    char want[256];
    int wl = snprintf(want, sizeof want, "%s%.*s.", prefix, (int)strspn(so + 4, "0123456789"), so + 4);
    DIR *d = opendir(dir);
    if (!d || wl < 0 || (size_t)wl >= sizeof want) {
        if (d)
            closedir(d);
        return 0;
    }
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *minor = e->d_name + wl;
        if (strncmp(e->d_name, want, (size_t)wl) != 0 || !*minor ||
            minor[strspn(minor, "0123456789")] != '\0')
            continue;
        if (found && strcmp(name, e->d_name) != 0) {
            found = 0; /* two minors: let the library's own .rodata say */
            break;
        }
        found = strlen(e->d_name) < size;
        if (found)
            snprintf(name, size, "%s", e->d_name);
    }
    closedir(d);
    return found;
}

/* 1 when the dynamic linker, asked for name by the library itself, would
 * open file: then the library finds its companion without us, when it
 * needs it, as it does when loaded by a bare dlopen. Asked from the
 * library's code, ld.so takes an object already loaded under that SONAME,
 * else searches the library's own run paths (cuDNN's $ORIGIN) around
 * LD_LIBRARY_PATH (lz_linker_lookup_from). */
struct same_file {
    dev_t dev;
    ino_t ino;
    int same;
    int loaded;  /* the answer is an object already loaded */
    char *other; /* the file it would take instead (malloc'd), or NULL */
};

static int visit_same(void *ctx, const char *step, const char *path)
{
    (void)step;
    struct same_file *want = ctx;
    struct stat sb;
    want->same = stat(path, &sb) == 0 && sb.st_dev == want->dev && sb.st_ino == want->ino;
    if (!want->same && !want->other)
        want->other = strdup(path);
    return 1; /* the first file found is the one it would open */
}

static int loaded_same(void *ctx, const char *path, const char *why)
{
    (void)why;
    ((struct same_file *)ctx)->loaded = 1;
    return visit_same(ctx, "loaded", path);
}

/* 1 when the library's own dlopen reaches another object's first (ASan's
 * interceptor, a preloaded tracer): that object then calls the C library's,
 * and ld.so searches its run paths as the caller's, not the library's. */
static int dlopen_interposed(void)
{
    void *p = lz_dlsym(RTLD_DEFAULT, "dlopen");
    return p && lz_holder_outside_c_library(p);
}

static int found_by_name(const char *name, const struct stat *file, const char *library,
                         const char *origin, struct same_file *want)
{
    *want = (struct same_file){file->st_dev, file->st_ino, 0, 0, NULL};
    if (lz_objects_with_soname(name, loaded_same, want))
        return want->same;
    char *rpath = NULL, *runpath = NULL;
    /* On the heap: a first call's thread may have a small stack. */
    lz_elfpeek_room *room = dlopen_interposed() ? NULL : malloc(sizeof *room);
    int fd = room ? open(library, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        lz_elfpeek_run_paths(room, fd, &rpath, &runpath);
        close(fd);
    }
    free(room);
    const char *const names[] = {name, NULL};
    lz_linker_hooks h = {.visit = visit_same, .ctx = want};
    lz_linker_lookup_from(names, origin, rpath, runpath, &h);
    free(rpath);
    free(runpath);
    return want->same;
}

/* Record the companions the library opens by bare name (NVRTC's builtins)
 * from its own directory, where the library would not find them by
 * itself (a wheel, conda, CUDA_HOME, an override), for lz_companions_load
 * before the first call of a companions_for function; where it would (the
 * same file through ld.so.cache or LD_LIBRARY_PATH), leave them to it: it
 * loads them at its first compile, as after a bare dlopen. */
void lz_companions_record(lz_search *w, const char *step, const char *path, const lz_probe *p)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return;
    struct {
        char dir[PATH_MAX], name[256], file[PATH_MAX];
    } *b = malloc(sizeof *b);
    if (!b) {
        lz_note(w, "[%s] %s: out of memory: its companions were left to it", step, path);
        return;
    }
    char *dir = b->dir, *name = b->name, *file = b->file;
    lz_copy(dir, PATH_MAX, path);
    dir[slash - path < PATH_MAX ? slash - path : PATH_MAX - 1] = '\0';
    for (const char *const *c = w->lib->companions; *c; c++) {
        if (!companion_beside(dir, *c, p ? p->elf.soname : NULL, name, sizeof b->name) &&
            !lz_probe_rodata_string(path, *c, name, sizeof b->name))
            continue;
        int len = snprintf(file, sizeof b->file, "%s/%s", dir, name);
        struct stat sb;
        if (len < 0 || (size_t)len >= sizeof b->file || stat(file, &sb) != 0) {
            lz_note(w, "[%s] %s: companion %s is not beside it (left to the library)", step,
                    path, name);
            continue;
        }
        struct same_file by_name;
        if (found_by_name(name, &sb, path, dir, &by_name)) {
            lz_aside(w, "companion %s: the library finds it by name (left to it)", file);
            continue;
        }
        if (by_name.loaded) {
            /* Loading ours would add a copy the library never binds to:
             * ld.so answers its dlopen with the object of that SONAME. */
            lz_note(w, "[%s] %s: companion %s: another copy, %s, is loaded already; the library "
                    "will use it", step, path, name, by_name.other ? by_name.other : "?");
            free(by_name.other);
            continue;
        }
        if (by_name.other)
            lz_aside(w, "companion %s: by name the library would take %s", file, by_name.other);
        free(by_name.other);
        size_t used = w->res.companions_len;
        int wrote = snprintf(w->res.companions + used, sizeof w->res.companions - used, "%s%s",
                             used ? "\n" : "", file);
        if (wrote > 0 && (size_t)wrote < sizeof w->res.companions - used)
            w->res.companions_len += (size_t)wrote;
        else {
            w->res.companions[used] = '\0';
            lz_note(w, "[%s] %s: companion %s: no room left to record it (left to the library)",
                    step, path, file);
            continue;
        }
        const char *first = w->lib->companions_for[0];
        lz_aside(w, "companion %s: loaded before the first call of %s", file,
                 strcmp(first, "*") == 0 ? "any of its functions" : first);
    }
    free(b);
}

int lz_companions_waiting(const lz_lib *lib, const char *name)
{
    if (!__atomic_load_n(&lib->st->companions_pending, __ATOMIC_ACQUIRE))
        return 0;
    int wanted = 0;
    for (const char *const *f = lib->companions_for; f && *f; f++)
        wanted |= strcmp(*f, name) == 0 || strcmp(*f, "*") == 0;
    return wanted;
}

void lz_companions_load(const lz_lib *lib, const char *name)
{
    lz_state *st = lib->st;
    if (!lz_companions_waiting(lib, name))
        return;
    /* No waiting for another thread doing the same: each dlopens them
     * (the same objects; a reference more is harmless), then clears. */
    for (const char *p = st->companion_files; p && *p;) {
        size_t n = lz_path_next(p, "\n");
        /* On the heap: a first call may run on the smallest thread stack. */
        char *file = strndup(p, n);
        p += n + (p[n] == '\n');
        if (!file) {
            lz_log(lib, "a companion of %s: not loaded: out of memory", lib->display);
            continue;
        }
        /* Probed before it is loaded, as every candidate is. */
        lz_probe pr;
        const char *e;
        if (lz_probe_read(file, &pr) == LZ_PROBE_REJECTED) {
            lz_log(lib, "companion %s: not loaded: %s", file, pr.reason);
        } else {
            lz_probe_free(&pr);
            if (lz_dlopen(file, LZ_DLOPEN_FLAGS, &e))
                lz_log(lib, "loaded companion %s (before %s)", file, name);
            else
                lz_log(lib, "companion %s: not loaded: %s", file, e);
        }
        free(file);
    }
    /* A dlopen refused (the dynamic linker's lock held by a thread waiting
     * for this one): the next call loads them. */
    if (!lz_ldlock_refused(NULL, 0))
        __atomic_store_n(&st->companions_pending, 0, __ATOMIC_RELEASE);
}
