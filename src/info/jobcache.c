/* SPDX-License-Identifier: MIT */
/* lazynccl-info --cache FILE: the job's resolution cache shown and checked
 * against the filesystem as it is now (info.h; the file,
 * common/lz_cachefile.h). */
#include "info.h"
#include "base/lz_path.h"
#include "common/lz_cachefile.h"
#include "common/lz_ldsodirs.h"
#include "common/lz_pathlist.h"
#include "common/lz_stepnames.h"
#include "elf/lz_ldcache.h"
#include "process/lz_hwcaps.h"
#include "process/lz_objects.h"

/* The multiarch directory of this machine's system libraries (Debian's). */
#if defined(__x86_64__)
#define LZ_TRIPLET "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define LZ_TRIPLET "aarch64-linux-gnu"
#else
#define LZ_TRIPLET "lib"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file whole when the audit module would read it (its rules): else
 * NULL, with why. */
static char *read_cache(const char *path, size_t *len, char *why, size_t whysize)
{
    /* Not blocked by a FIFO: opened without waiting, judged by its id. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    struct stat st;
    if (!f) {
        snprintf(why, whysize, "it cannot be read: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *buf = NULL;
    const char *refused = NULL;
    if (fstat(fileno(f), &st) != 0)
        snprintf(why, whysize, "%s", strerror(errno));
    else if ((refused = lz_cache_refusal(&st, geteuid())))
        snprintf(why, whysize, "%s (owner uid %u, mode %o): the audit module ignores it", refused,
                 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    else if ((buf = malloc((size_t)st.st_size + 1))) {
        *len = fread(buf, 1, (size_t)st.st_size, f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

struct found {
    struct stat *st;
    char *out;
    size_t size;
};

static int regular_file(void *ctx, const char *path)
{
    struct found *f = ctx;
    return stat(path, f->st) == 0 && S_ISREG(f->st->st_mode) && lz_copy(f->out, f->size, path);
}

/* Whether name is a file in dir, with its id and path: where ld.so tries
 * it (lz_hwcaps_try: dir's glibc-hwcaps subdirectories first). */
static int present(const char *dir, const char *name, struct stat *st, char *out, size_t size)
{
    char bare[PATH_MAX];
    size_t len = strlen(dir);
    if (len > 1 && dir[len - 1] == '/' && len < sizeof bare) { /* ld.so's own end in '/' */
        memcpy(bare, dir, len - 1);
        bare[len - 1] = '\0';
        dir = bare;
    }
    const char *names[] = {name, NULL};
    struct found f = {st, out, size};
    return lz_hwcaps_try(dir, names, regular_file, &f);
}

/* The dynamic linker's system directories, after ld.so.cache: a name
 * recorded as found nowhere is stale where one holds it now. Those of the
 * ld.so running this program (lz_ldsodirs.h); where it cannot be read, the
 * distributions' union. */
static int in_system_dirs(const char *name, char *out, size_t size)
{
    static const char *const dirs[] = {"/lib/" LZ_TRIPLET, "/usr/lib/" LZ_TRIPLET, "/lib64", "/usr/lib64",
                                       "/lib", "/usr/lib"};
    struct stat st;
    size_t n = 0;
    const char *p = lz_ldsodirs_find(lz_objects_ldso_base(), &n);
    for (size_t i = 0; p && i < n; i++, p += strlen(p) + 1)
        if (present(p, name, &st, out, size))
            return 1;
    for (size_t i = 0; !n && i < sizeof dirs / sizeof *dirs; i++)
        if (present(dirs[i], name, &st, out, size))
            return 1;
    return 0;
}

/* The directories of BEFORE in ld.so's order; the first holding name into
 * first (its path): 1 when one does. */
static int first_before(const char *before, const char *name, char *first, size_t size, struct stat *st)
{
    char *copy = strdup(before);
    int found = 0;
    for (char *part = copy, *next; part && !found; part = next) {
        next = strchr(part, '|');
        if (next)
            *next++ = '\0';
        if (strlen(part) < 2 || part[1] != ':')
            continue;
        /* LD_LIBRARY_PATH is split on ';' too, as glibc splits it. */
        const char *seps = part[0] == 'L' ? ":;" : ":";
        for (char *dir = part + 2; *dir && !found;) {
            size_t len = lz_pathlist_entry(dir, seps);
            char *next = dir + len + (dir[len] != '\0');
            dir[len] = '\0';
            found = len && present(dir, name, st, first, size);
            dir = next;
        }
    }
    free(copy);
    return found;
}

int cache_show(FILE *out, const char *path)
{
    size_t len = 0;
    char why[256];
    char *text = read_cache(path, &len, why, sizeof why);
    if (!text) {
        fprintf(stderr, "lazynccl-info: cache %s refused: %s\n", path, why);
        return 2;
    }
    size_t magic = sizeof LZ_CACHE_MAGIC - 1;
    if (len == 0) {
        fprintf(out, "cache %s\n0 entries: empty (the job's first process writes it)\n", path);
        free(text);
        return 0;
    }
    if (len < magic || memcmp(text, LZ_CACHE_MAGIC, magic) != 0 || strlen(text) != len) {
        fprintf(stderr, "lazynccl-info: cache %s refused: its first line is not \"%.*s\"\n", path,
                (int)magic - 1, LZ_CACHE_MAGIC);
        free(text);
        return 2;
    }
    int status = 0, n = 0, line = 1;
    fprintf(out, "cache %s\n", path);
    for (char *p = text + magic, *nl; *p; p = nl + 1) {
        line++;
        nl = strchr(p, '\n');
        if (!nl) {
            fprintf(stderr, "lazynccl-info: cache %s refused: line %d has no end\n", path, line);
            free(text);
            return 2;
        }
        *nl = '\0';
        char *f[LZ_CACHE_FIELDS];
        if (line > LZ_CACHE_MAX_ENTRIES + 1 || !lz_cache_entry(p, f)) {
            fprintf(stderr, "lazynccl-info: cache %s refused: line %d is not an entry (the audit module "
                            "ignores the whole file)\n", path, line);
            free(text);
            return 2;
        }
        const char *name = f[1], *file = f[2], *step = f[5], *before = f[6];
        unsigned long long size = strtoull(f[3], NULL, 16), mtime = strtoull(f[4], NULL, 16);
        struct stat st, first_st;
        char first[PATH_MAX], verdict[PATH_MAX + 128];
        int bad = 0;
        n++;
        if (strcmp(file, "-") == 0) {
            /* Recorded as found nowhere: stale where a searched directory or
             * ld.so.cache holds it now. */
            char *now = first_before(before, name, first, sizeof first, &first_st) ? strdup(first)
                        : lz_ldcache_path("/etc/ld.so.cache", name, lz_hwcaps_subdirs);
            if (!now && in_system_dirs(name, first, sizeof first))
                now = strdup(first);
            if (now)
                bad = snprintf(verdict, sizeof verdict, "stale: the dynamic linker would map %s now", now);
            else
                snprintf(verdict, sizeof verdict, "ok (none found: its candidates are not tried)");
            free(now);
        } else if (stat(file, &st) != 0)
            snprintf(verdict, sizeof verdict, "gone: the request falls back to the dynamic linker's search");
        else if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size != size ||
                 (unsigned long long)st.st_mtim.tv_sec != mtime)
            snprintf(verdict, sizeof verdict, "another file now: the request falls back to the dynamic "
                                              "linker's search");
        else if (first_before(before, name, first, sizeof first, &first_st) &&
                 (first_st.st_dev != st.st_dev || first_st.st_ino != st.st_ino))
            bad = snprintf(verdict, sizeof verdict, "stale: the dynamic linker would map %s now", first);
        else if (strcmp(step, LZ_STEP_LDCACHE) == 0) {
            char *now = lz_ldcache_path("/etc/ld.so.cache", name, lz_hwcaps_subdirs);
            struct stat now_st;
            if (now && stat(now, &now_st) == 0 && (now_st.st_dev != st.st_dev || now_st.st_ino != st.st_ino))
                bad = snprintf(verdict, sizeof verdict, "stale: ld.so.cache names %s now", now);
            else
                snprintf(verdict, sizeof verdict, "ok");
            free(now);
        } else
            snprintf(verdict, sizeof verdict, "ok");
        status |= bad > 0;
        fprintf(out, "  %s -> %s (%s): %s\n", name, file, step, verdict);
    }
    fprintf(out, "%d entr%s; %s\n", n, n == 1 ? "y" : "ies",
            status ? "some would give another file than the dynamic linker now: remove the cache "
                     "(the library directories changed during the job)"
                   : "each gives the file the dynamic linker would");
    free(text);
    return status;
}
