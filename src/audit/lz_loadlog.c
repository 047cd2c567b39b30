/* SPDX-License-Identifier: MIT */
/* The load report's writer in the audit module (lz_loadlog.h). */
#include "lz_loadlog.h"
#include "lz_sbuf.h"
#include "lz_sys.h"
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
    char *noted;
    size_t n;
} loadlog;

static loadlog *g LZ_HOT_DATA;

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
    char pid[24];
    lz_sbuf p = {pid, 0, sizeof pid, 0};
    lz_sbuf_put_num(&p, (unsigned long long)lz_sys_getpid());
    lz_sbuf h = {l->head, 0, sizeof l->head, 0}, d = {l->dir, 0, sizeof l->dir, 0},
            f = {l->file, 0, sizeof l->file, 0};
    lz_sbuf_put_field(&h, host);
    lz_sbuf_put(&h, "\t");
    lz_sbuf_put_field(&h, rank ? rank : "-");
    lz_sbuf_put(&h, "\t");
    lz_sbuf_put(&h, pid);
    lz_sbuf_put(&h, "\t");
    lz_sbuf_put_field(&d, dir);
    lz_sbuf_put_field(&f, dir);
    lz_sbuf_put(&f, "/");
    lz_sbuf_put_field(&f, host);
    lz_sbuf_put(&f, ".");
    lz_sbuf_put(&f, pid);
    lz_sbuf_put(&f, ".txt");
    if (!h.full && !d.full && !f.full)
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
        if (n <= 1)
            return;
        lz_sbuf w = {where, (size_t)n - 1, sizeof where, 0};
        lz_sbuf_put(&w, where[w.n - 1] == '/' ? "" : "/");
        lz_sbuf_put_field(&w, path);
        if (w.full)
            return;
        path = where;
    }
    if (!g->noted && !(g->noted = lz_sys_alloc(NOTED_MAX)))
        return;
    lz_sbuf b = {g->noted, g->n, NOTED_MAX, 0};
    lz_sbuf_put(&b, g->head);
    lz_sbuf_put_field(&b, soname && *soname ? soname : "-");
    lz_sbuf_put(&b, "\t");
    lz_sbuf_put_field(&b, path);
    lz_sbuf_put(&b, "\t");
    lz_sbuf_put_hex(&b, (uint64_t)st.st_dev);
    lz_sbuf_put(&b, "\t");
    lz_sbuf_put_hex(&b, (uint64_t)st.st_ino);
    lz_sbuf_put(&b, "\n");
    if (!b.full)
        g->n = b.n;
    else
        lz_say("report: no room for ", path);
}

void lz_loadlog_flush(void)
{
    if (!g || !g->n)
        return;
    /* One file per process, appended: a restarted or exec'd process of the
     * same pid adds its lines after its predecessor's. Never blocked (a
     * FIFO put in its place) and never another kind of file: a regular
     * file of its own, or nothing. */
    int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
    int fd = lz_sys_create(g->file, flags, 0644);
    if (fd < 0 && lz_sys_mkdir(g->dir, 0755) == 0) /* the job's first writer makes it */
        fd = lz_sys_create(g->file, flags, 0644);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        lz_sys_close(fd);
        fd = -1;
    }
    if (fd < 0)
        lz_say("report: cannot write ", g->file);
    else {
        lz_sys_write_all(fd, g->noted, g->n);
        lz_sys_close(fd);
    }
    g->n = 0;
}
