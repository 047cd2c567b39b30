/* SPDX-License-Identifier: MIT */
/* lazynccl-run's options for a whole job (run_job.h). */
#include "run_job.h"
#include "common/lz_cachefile.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* path made absolute against the current directory (not resolved: the
 * job's other nodes see the same names, not this node's links). */
static int absolute(const char *path, char *out, size_t size)
{
    if (path[0] == '/')
        return (size_t)snprintf(out, size, "%s", path) < size ? 0 : -1;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    return (size_t)snprintf(out, size, "%s/%s", cwd, path) < size ? 0 : -1;
}

/* The message into why: -1. */
__attribute__((format(printf, 3, 4))) static int fail(char *why, size_t whysize, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(why, whysize, f, ap);
    va_end(ap);
    return -1;
}

int run_job_cache(const char *path, char *out, size_t size, char *why, size_t whysize)
{
    if (!*path || absolute(path, out, size) < 0)
        return fail(why, whysize, "--cache %s: not a usable path", path);
    if (strpbrk(out, "\t\n"))
        return fail(why, whysize, "--cache %s: a tab or newline in the path", path);
    struct stat st;
    if (stat(out, &st) == 0) {
        const char *refused = lz_cache_refusal(&st, geteuid());
        if (refused)
            return fail(why, whysize, "--cache %s: %s: every process would ignore it", out, refused);
        /* Read as every process would read it (lz_cachefile.h's rule): a
         * line that is not an entry would turn the cache off in all. */
        int fd = open(out, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        char *text = fd >= 0 ? malloc((size_t)st.st_size + 1) : NULL;
        size_t n = 0;
        ssize_t r;
        while (text && n < (size_t)st.st_size && (r = read(fd, text + n, (size_t)st.st_size - n)) > 0)
            n += (size_t)r;
        if (fd >= 0)
            close(fd);
        if (!text)
            return fail(why, whysize, "--cache %s: cannot be read", out);
        text[n] = '\0';
        size_t magic = sizeof LZ_CACHE_MAGIC - 1, line = 1;
        int ok = n == 0 || (n >= magic && memcmp(text, LZ_CACHE_MAGIC, magic) == 0 && strlen(text) == n);
        if (ok && n)
            line = 2;
        for (char *p = text + magic; ok && n && *p; line++) {
            char *nl = strchr(p, '\n'), *f[LZ_CACHE_FIELDS];
            ok = nl && line <= LZ_CACHE_MAX_ENTRIES;
            if (ok) {
                *nl = '\0';
                ok = lz_cache_entry(p, f);
                p = nl + 1;
            }
        }
        free(text);
        if (!ok)
            return fail(why, whysize, "--cache %s: not a lazynccl cache (line %zu is not %s): every process "
                        "would ignore it", out, line > 1 ? line - 1 : 1,
                        line > 1 ? "an entry" : "\"lazynccl-cache 1\"");
        return 0;
    }
    if (errno != ENOENT)
        return fail(why, whysize, "--cache %s: %s", out, strerror(errno));
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", out);
    *strrchr(dir, '/') = '\0';
    if (access(dir[0] ? dir : "/", W_OK) != 0)
        return fail(why, whysize, "--cache %s: its directory cannot be written (%s): the first "
                                  "process could not record it", out, strerror(errno));
    return 0;
}

int run_job_report(const char *dir, char *out, size_t size, char *why, size_t whysize)
{
    if (!*dir || absolute(dir, out, size) < 0 || strpbrk(out, "\t\n"))
        return fail(why, whysize, "--report %s: not a usable path", dir);
    /* Made by the job's first process that writes (the audit module), not
     * here: --print-env prints, and changes nothing. Its parent must be. */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", out);
    *strrchr(parent, '/') = '\0';
    struct stat st;
    if (stat(out, &st) == 0 ? !S_ISDIR(st.st_mode) || access(out, W_OK) != 0
                            : stat(parent[0] ? parent : "/", &st) != 0 || access(parent[0] ? parent : "/", W_OK) != 0)
        return fail(why, whysize, "--report %s: neither a directory this user can write nor one it can "
                                  "make", out);
    return 0;
}
