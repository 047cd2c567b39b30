/* SPDX-License-Identifier: MIT */
/* lazynccl-info --reports DIR: whether every process of a job loaded the
 * same file of each library (info.h; the reports, common/lz_loadreport.h).
 * Two loads are of the same file when, on one host, their device and inode
 * are (whichever path named it), and across hosts when their paths are (an
 * inode says nothing there: each node may hold its own copy). */
#include "info.h"
#include "common/lz_loadreport.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

typedef struct load {
    char *host, *rank, *pid, *soname, *path, *dev, *ino;
} load;

typedef struct loads {
    load *v;
    size_t n, cap;
} loads;

static int by_soname(const void *a, const void *b)
{
    const load *x = a, *y = b;
    return strcmp(x->soname, y->soname);
}

/* path with its "/./" and "//" made "/", in place: ld.so names a file by
 * the candidate it built (ld.so.cache's "/usr/local/cuda/lib/./libnccl.so.2"),
 * a cache or an override by the path given, one file either way. */
static void tidy(char *path)
{
    char *out = path;
    for (const char *in = path; *in;) {
        if (in[0] == '/' && in[1] == '/') {
            in++;
        } else if (in[0] == '/' && in[1] == '.' && in[2] == '/') {
            in += 2;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
}

/* One report file's lines into all: 0, or -1 naming the line in why. */
static int read_report(const char *file, loads *all, char *why, size_t whysize)
{
    /* Not blocked by a FIFO named like a report: opened without waiting,
     * read only where it is a regular file. */
    int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
    if (!f) {
        snprintf(why, whysize, "%s: %s", file, fd >= 0 ? "not a regular file" : strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int no = 0, rc = 0;
    while (getline(&line, &cap, f) > 0) {
        no++;
        line[strcspn(line, "\n")] = '\0';
        char *fld[LZ_REPORT_FIELDS + 1];
        int nf = 0;
        for (char *p = line; p && nf <= LZ_REPORT_FIELDS; nf++) {
            fld[nf] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = '\0';
        }
        if (nf != LZ_REPORT_FIELDS) {
            snprintf(why, whysize, "%s, line %d: %d fields, not %d (HOST RANK PID SONAME PATH DEV INO)",
                     file, no, nf, LZ_REPORT_FIELDS);
            rc = -1;
            break;
        }
        if (all->n == all->cap) {
            load *grown = realloc(all->v, (all->cap = all->cap ? 2 * all->cap : 256) * sizeof *grown);
            if (!grown) {
                snprintf(why, whysize, "out of memory");
                rc = -1;
                break;
            }
            all->v = grown;
        }
        load *l = &all->v[all->n++];
        char **dst[LZ_REPORT_FIELDS] = {&l->host, &l->rank, &l->pid, &l->soname, &l->path, &l->dev, &l->ino};
        for (int i = 0; i < LZ_REPORT_FIELDS; i++)
            *dst[i] = strdup(fld[i]);
        if (l->path)
            tidy(l->path);
    }
    free(line);
    fclose(f);
    return rc;
}

static void name_process(FILE *out, const load *l)
{
    fprintf(out, "host %s", l->host);
    if (strcmp(l->rank, "-") != 0)
        fprintf(out, " rank %s", l->rank);
    fprintf(out, " pid %s", l->pid);
}

/* Whether two loads are of one file: on one host, one device and inode
 * (whatever path named it); across hosts, one path. */
static int same_file(const load *x, const load *y)
{
    if (strcmp(x->host, y->host) == 0)
        return strcmp(x->dev, y->dev) == 0 && strcmp(x->ino, y->ino) == 0;
    return strcmp(x->path, y->path) == 0;
}

/* The loads [from, to) of one SONAME: 1 when they are not all of one file
 * (printed, the outliers named). */
static int judge(FILE *out, const load *v, size_t from, size_t to, int verbose)
{
    size_t n = to - from;
    size_t *group = calloc(n, sizeof *group), *size = calloc(n, sizeof *size);
    if (!group || !size) {
        free(group), free(size);
        return 0;
    }
    /* Each load joins the group of the first earlier load of its file. */
    size_t groups = 0;
    for (size_t i = 0; i < n; i++) {
        group[i] = i;
        for (size_t k = 0; k < i; k++)
            if (same_file(&v[from + i], &v[from + k])) {
                group[i] = group[k];
                break;
            }
        groups += group[i] == i;
        size[group[i]]++;
    }
    size_t best = 0;
    for (size_t i = 0; i < n; i++)
        if (size[i] > size[best])
            best = i;
    int differ = groups > 1;
    if (!differ && verbose)
        fprintf(out, "%s: the same file in all %zu processes that loaded it: %s\n", v[from].soname, n,
                v[from].path);
    if (differ) {
        fprintf(out, "%s: NOT the same file in every process: %zu of %zu loaded %s; the others:\n",
                v[from].soname, size[best], n, v[from + best].path);
        for (size_t i = 0; i < n; i++) {
            if (group[i] == best)
                continue;
            fputs("  ", out);
            name_process(out, &v[from + i]);
            fprintf(out, ": %s (device %s, inode %s)\n", v[from + i].path, v[from + i].dev, v[from + i].ino);
        }
    }
    free(group), free(size);
    return differ;
}

int reports_check(FILE *out, const char *dir, int verbose)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "lazynccl-info: --reports %s: %s\n", dir, strerror(errno));
        return 2;
    }
    loads all = {0};
    char why[PATH_MAX + 256];
    int files = 0, rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".txt") != 0)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc = read_report(path, &all, why, sizeof why);
        files++;
    }
    closedir(d);
    if (rc != 0) {
        fprintf(stderr, "lazynccl-info: --reports: %s\n", why);
        return 2;
    }
    if (!files) {
        fprintf(stderr, "lazynccl-info: --reports %s: no report (HOST.PID.txt) in it: was the job run "
                        "with lazynccl-run --report %s?\n", dir, dir);
        return 2;
    }
    qsort(all.v, all.n, sizeof *all.v, by_soname);
    int differ = 0, libs = 0;
    for (size_t i = 0; i < all.n;) {
        size_t j = i;
        while (j < all.n && strcmp(all.v[j].soname, all.v[i].soname) == 0)
            j++;
        if (strcmp(all.v[i].soname, "-") != 0) {
            libs++;
            differ += judge(out, all.v, i, j, verbose);
        }
        i = j;
    }
    fprintf(out, "%d report%s, %d librar%s: %s\n", files, files == 1 ? "" : "s", libs, libs == 1 ? "y" : "ies",
            differ ? "some loaded different files in different processes (above)"
                   : "each the same file in every process that loaded it");
    for (size_t i = 0; i < all.n; i++) {
        load *l = &all.v[i];
        free(l->host), free(l->rank), free(l->pid), free(l->soname), free(l->path), free(l->dev), free(l->ino);
    }
    free(all.v);
    return differ ? 1 : 0;
}
