/* SPDX-License-Identifier: MIT */
/* The load report's writer in the audit module (lz_loadlog.h). */
#include "lz_loadlog.h"
#include "lz_sys.h"
#include "common/lz_cachefile.h"
#include "common/lz_loadreport.h"

#include <fcntl.h>
#include <linux/limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#define NOTED_MAX (256u << 10)

typedef struct loadlog {
    char dir[PATH_MAX];
    char file[PATH_MAX];
    char head[512];      /* "HOST\tRANK\tPID\t" */
    size_t nhead;
    char *noted;
    size_t n;
} loadlog;

static loadlog *g LZ_HOT_DATA;

/* s into out at *at, bounded; in a field (not a separator), tabs and
 * newlines, which would break a line of the file, as '?'. 0 when it does
 * not fit. */
static int put(char *out, size_t cap, size_t *at, const char *s, int field)
{
    for (; *s; s++) {
        if (*at + 1 >= cap)
            return 0;
        out[(*at)++] = field && (*s == '\t' || *s == '\n') ? '?' : *s;
    }
    out[*at] = '\0';
    return 1;
}

static int add(char *out, size_t cap, size_t *at, const char *s)
{
    return put(out, cap, at, s, 1);
}

static int sep(char *out, size_t cap, size_t *at, const char *s)
{
    return put(out, cap, at, s, 0);
}

static int add_hex(char *out, size_t cap, size_t *at, uint64_t v)
{
    char h[17];
    lz_hex16(v, h);
    h[16] = '\0';
    size_t i = 0;
    while (i < 15 && h[i] == '0')
        i++;
    return add(out, cap, at, h + i);
}

void lz_loadlog_open(const char *dir)
{
    if (!dir || dir[0] != '/')
        return;
    loadlog *l = lz_sys_alloc(sizeof *l);
    char host[256];
    if (!l || lz_sys_nodename(host, sizeof host) != 0)
        return;
    const char *rank = 0;
    for (int i = 0; lz_report_rank_var(i) && !rank; i++)
        if ((rank = lz_sys_getenv(lz_report_rank_var(i))) && !*rank)
            rank = 0;
    size_t at = 0;
    uint64_t pid = (uint64_t)lz_sys_getpid();
    char num[24];
    size_t nn = sizeof num - 1;
    num[nn] = '\0';
    do
        num[--nn] = (char)('0' + pid % 10);
    while ((pid /= 10) && nn);
    int ok = add(l->head, sizeof l->head, &at, host) && sep(l->head, sizeof l->head, &at, "\t") &&
             add(l->head, sizeof l->head, &at, rank ? rank : "-") &&
             sep(l->head, sizeof l->head, &at, "\t") && add(l->head, sizeof l->head, &at, num + nn) &&
             sep(l->head, sizeof l->head, &at, "\t");
    l->nhead = at;
    at = 0;
    size_t d = 0;
    ok = ok && add(l->dir, sizeof l->dir, &d, dir);
    ok = ok && add(l->file, sizeof l->file, &at, dir) && sep(l->file, sizeof l->file, &at, "/") &&
         add(l->file, sizeof l->file, &at, host) && sep(l->file, sizeof l->file, &at, ".") &&
         add(l->file, sizeof l->file, &at, num + nn) && sep(l->file, sizeof l->file, &at, ".txt");
    if (ok)
        g = l;
}

void lz_loadlog_object(const char *path, const char *soname)
{
    struct stat st;
    if (!g || !path || !path[0] || lz_sys_stat(path, &st) != 0)
        return;
    /* A file ld.so named by a relative path (an LD_LIBRARY_PATH of ".")
     * is the current directory's now, while ld.so maps it: made absolute. */
    char where[PATH_MAX];
    if (path[0] != '/') {
        long n = lz_sys_getcwd(where, sizeof where);
        size_t at = n > 1 ? (size_t)n - 1 : 0;
        if (!at || !sep(where, sizeof where, &at, where[at - 1] == '/' ? "" : "/") ||
            !add(where, sizeof where, &at, path))
            return;
        path = where;
    }
    if (!g->noted && !(g->noted = lz_sys_alloc(NOTED_MAX)))
        return;
    size_t at = g->n;
    int ok = sep(g->noted, NOTED_MAX, &at, g->head) &&
             add(g->noted, NOTED_MAX, &at, soname && *soname ? soname : "-") &&
             sep(g->noted, NOTED_MAX, &at, "\t") && add(g->noted, NOTED_MAX, &at, path) &&
             sep(g->noted, NOTED_MAX, &at, "\t") && add_hex(g->noted, NOTED_MAX, &at, (uint64_t)st.st_dev) &&
             sep(g->noted, NOTED_MAX, &at, "\t") && add_hex(g->noted, NOTED_MAX, &at, (uint64_t)st.st_ino) &&
             sep(g->noted, NOTED_MAX, &at, "\n");
    if (ok)
        g->n = at;
    else
        lz_say("report: no room for ", path);
}

void lz_loadlog_flush(void)
{
    if (!g || !g->n)
        return;
    /* One file per process, appended: a restarted or exec'd process of the
     * same pid adds its lines after its predecessor's. */
    /* Never blocked (a FIFO put in its place) and never another kind of
     * file: a regular file of its own, or nothing. */
    int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
    int fd = lz_sys_create(g->file, flags, 0644);
    if (fd < 0 && lz_sys_mkdir(g->dir, 0755) == 0) /* the job's first writer makes it */
        fd = lz_sys_create(g->file, flags, 0644);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        lz_sys_close(fd);
        fd = -1;
    }
    if (fd < 0) {
        lz_say("report: cannot write ", g->file);
        g->n = 0;
        return;
    }
    const char *p = g->noted;
    size_t n = g->n;
    while (n) {
        long r = lz_sys_write(fd, p, n);
        if (r <= 0)
            break;
        p += r, n -= (size_t)r;
    }
    lz_sys_close(fd);
    g->n = 0;
}
