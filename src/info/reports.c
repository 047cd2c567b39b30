/* SPDX-License-Identifier: MIT */
/* lazynccl-info --reports DIR: whether every process of a job loaded the
 * same file of each library (info.h; the reports, common/lz_loadreport.h).
 * Two loads are of the same file when their paths are equal and, on one
 * host, their device and inode too (across hosts an inode says nothing:
 * each node may hold its own copy at the same path). */
#include "info.h"
#include "common/lz_loadreport.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct load {
    char *host, *rank, *pid, *soname, *path, *dev, *ino;
} load;

typedef struct loads {
    load *v;
    size_t n, cap;
} loads;

static int by_soname_then_path(const void *a, const void *b)
{
    const load *x = a, *y = b;
    int c = strcmp(x->soname, y->soname);
    return c ? c : strcmp(x->path, y->path);
}

/* One report file's lines into all: 0, or -1 naming the line in why. */
static int read_report(const char *file, loads *all, char *why, size_t whysize)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        snprintf(why, whysize, "%s: %s", file, strerror(errno));
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

/* The loads [from, to) of one SONAME, sorted by path: 1 when they are not
 * all of one file (printed with the outliers). */
static int judge(FILE *out, const load *v, size_t from, size_t to, int verbose)
{
    size_t best = from, best_n = 0, files = 0;
    for (size_t i = from; i < to;) {
        size_t j = i;
        while (j < to && strcmp(v[j].path, v[i].path) == 0)
            j++;
        files++;
        if (j - i > best_n)
            best = i, best_n = j - i;
        i = j;
    }
    /* One path: the same file unless, on one host, its id differs (the
     * file replaced while the job ran). */
    int replaced = 0;
    for (size_t i = from; files == 1 && i < to; i++)
        for (size_t k = i + 1; k < to; k++)
            if (strcmp(v[i].host, v[k].host) == 0 &&
                (strcmp(v[i].dev, v[k].dev) != 0 || strcmp(v[i].ino, v[k].ino) != 0))
                replaced = 1;
    if (files == 1 && !replaced) {
        if (verbose)
            fprintf(out, "%s: the same file in all %zu processes that loaded it: %s\n", v[from].soname,
                    to - from, v[from].path);
        return 0;
    }
    fprintf(out, "%s: NOT the same file in every process: %zu of %zu loaded %s; the others:\n",
            v[from].soname, best_n, to - from, v[best].path);
    for (size_t i = from; i < to; i++) {
        if (strcmp(v[i].path, v[best].path) == 0 && !replaced)
            continue;
        fputs("  ", out);
        name_process(out, &v[i]);
        fprintf(out, ": %s (device %s, inode %s)\n", v[i].path, v[i].dev, v[i].ino);
    }
    return 1;
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
    qsort(all.v, all.n, sizeof *all.v, by_soname_then_path);
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
