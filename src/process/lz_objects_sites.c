/* SPDX-License-Identifier: MIT
 * The site directories the loaded objects lie in (lz_objects_sites.h). */
#include "elf/lz_elfmem.h"
#include "base/lz_dl.h"
#include "process/lz_objects.h"
#include "process/lz_objects_sites.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>


struct sites {
    size_t (*site_of)(const char *path); /* the caller's: a site directory's length in path */
    char *self;              /* the object holding this code, as named */
    int self_canonical;      /* named by the kernel (/proc/self/exe) */
    lz_strlist *out;
};

/* The program's file, where the name it was run by passes through a
 * site directory (site_of: a wheel's executable run by its path), else NULL: the
 * /proc access is made only for a program that may live in one. */
static char *program_in_site(const struct sites *q, const struct dl_phdr_info *info, int *oom)
{
    const char *run_as = (const char *)getauxval(AT_EXECFN);
    if (!run_as || !q->site_of(run_as))
        return NULL;
    char *exe = lz_objects_file(info);
    *oom |= !exe;
    return exe;
}

static int sites_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct sites *q = data;
    int self = !q->self && lz_objects_mapped(info, (uintptr_t)&sites_cb, 1);
    if (!self && !q->out)
        return 0;
    char *name = lz_objects_name(info);
    int program = name && !name[0];
    if (self) {
        /* This code in the program (a static shim): its file only where
         * the name it was run by passes through a site directory, as for
         * any program (program_in_site): no /proc access otherwise, in
         * every first call of every such program. */
        int oom = 0;
        q->self = program ? program_in_site(q, info, &oom) : name ? strdup(name) : NULL;
        q->self_canonical = program;
        if (q->out)
            q->out->oom |= oom;
    }
    if (!q->out) {
        free(name);
        return 0;
    }
    q->out->oom |= !name;
    if (program) {
        free(name);
        name = program_in_site(q, info, &q->out->oom);
    }
    size_t n = name ? q->site_of(name) : 0;
    if (n) {
        name[n] = '\0';
        lz_strlist_push_once(q->out, name, "loaded");
    }
    free(name);
    return 0;
}

int lz_objects_sites(size_t (*site_of)(const char *path), int (*self)(void *ctx, const char *path),
                     lz_strlist_visit_fn visit, void *ctx)
{
    lz_strlist sites = {0};
    struct sites q = {.site_of = site_of, .out = visit ? &sites : NULL};
    lz_dl_iterate_phdr(sites_cb, &q);
    /* A name that passes through a site directory is made real (it may
     * hold symbolic links and "..", as an expanded $ORIGIN/../ does): the
     * site directory above the file is the one above its real path. One
     * that does not is taken as it is: the directories it names are real
     * ones, and a symbolic link from outside into a site directory is the
     * one case not followed (a readlink per component, 8 for the bench's
     * shim, on every first call of every process for it). */
    if (q.self && !q.self[0]) { /* the program, its path unknown */
        free(q.self);
        q.self = NULL;
    } else if (q.self && !q.self_canonical && site_of(q.self)) {
        char *real = realpath(q.self, NULL);
        free(q.self);
        q.self = real;
    }
    int rc = q.self && self(ctx, q.self);
    free(q.self);
    if (rc) {
        free(sites.buf);
        return 1;
    }
    return lz_strlist_visit(&sites, visit, ctx);
}

