/* SPDX-License-Identifier: MIT
 * The run paths of the loaded objects (lz_objects_runpaths.h). */
#include "elf/lz_elfmem.h"
#include "base/lz_dl.h"
#include "base/lz_env.h"
#include "process/lz_dst.h"
#include "process/lz_objects.h"
#include "process/lz_objects_runpaths.h"
#include "base/lz_path.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>


/* --- run paths ------------------------------------------------------------ */

struct runpaths {
    const char *const *sonames;
    const char *self_soname;
    char *cwd;               /* for relative entries, read once per query */
    int cwd_read;
    int program_too;         /* the requester has no DT_RUNPATH: ld.so then
                              * tries the program's DT_RPATH after its own */
    int program_done;        /* the program was one of them */
    int requesters;          /* objects that need the library, so far: the
                              * first (the requester) decides */
    int own_no_runpath;      /* the object holding this code: 1 when it has
                              * no DT_RUNPATH, -1 when not met */
    int own_nodeflib;
    struct entry_bufs *bufs; /* allocated at the first entry */
    lz_runpaths *out;
    lz_strlist program_rpath; /* the program's DT_RPATH, kept for program_too */
    struct seen *seen;       /* the objects met so far, in load order */
    size_t nseen, capseen;
};

/* An object met in this pass, read again only while the pass holds the
 * dynamic linker's lock, which keeps every object of the list mapped. */
struct seen {
    const char *name;        /* the name ld.so gave it */
    lz_elfmem m;
    unsigned char rpath;     /* a DT_RPATH that counts (no DT_RUNPATH) */
    unsigned char added;     /* its DT_RPATH is in the list already */
    unsigned char program;
};

/* The buffers for expanding one object's run-path entries as ld.so would
 * (lz_path.c): on the heap, not the stack of a first call (the dlopen
 * after the search runs over the stack pages it wrote). */
struct entry_bufs {
    char dir[PATH_MAX], reason[768];
};

/* One object's run path as its entries are read: the object's file (the
 * program's is under /proc) and the words that name the run path are
 * found only where an entry needs them, naming $ORIGIN or failing to
 * expand; an absolute entry, the usual kind, needs neither. */
struct runpath_obj {
    const struct dl_phdr_info *info;
    long tag;
    char *path, *origin, *why;
    int tried;
};

/* "RPATH of <path>" and the origin ($ORIGIN: path's directory) of o: 0
 * when out of memory. */
static int runpath_describe(struct runpath_obj *o)
{
    if (o->tried)
        return o->why != NULL;
    o->tried = 1;
    const char *kind = o->tag == DT_RPATH ? "RPATH of " : "RUNPATH of ";
    if (!(o->path = lz_objects_file(o->info)))
        return 0;
    const char *shown = o->path[0] ? o->path : "the program";
    size_t k = strlen(kind), n = strlen(shown);
    const char *slash = strrchr(o->path, '/');
    o->why = malloc(k + n + 1);
    o->origin = strndup(o->path, slash ? (size_t)(slash - o->path) : strlen(o->path));
    if (!o->why || !o->origin) {
        free(o->why);
        free(o->origin);
        o->why = o->origin = NULL;
        return 0;
    }
    memcpy(o->why, kind, k);
    memcpy(o->why + k, shown, n + 1);
    return 1;
}

static void add_entry(struct runpaths *q, lz_strlist *out, struct runpath_obj *o, const char *entry,
                      size_t len)
{
    struct entry_bufs *b = q->bufs;
    if (memchr(entry, '$', len) && !runpath_describe(o)) {
        out->oom = 1;
        return;
    }
    /* The current directory only where an entry may be relative (a
     * syscall less for the usual "$ORIGIN/..." or absolute entry): one
     * starting with another token ($LIB, $PLATFORM: names) or a '$' of
     * its own is. */
    const char *origin = o->origin;
    int origin_first = (len >= 7 && memcmp(entry, "$ORIGIN", 7) == 0 && (len == 7 || entry[7] == '/')) ||
                       (len >= 9 && memcmp(entry, "${ORIGIN}", 9) == 0);
    int relative = len == 0 || (entry[0] != '/' && !origin_first) || (origin_first && origin && origin[0] != '/');
    if (relative && !q->cwd_read) {
        q->cwd = getcwd(NULL, 0);
        q->cwd_read = 1;
    }
    /* ld.so's values are read only for an entry that names them. */
    lz_path_tokens tok = {origin, lz_path_names(entry, len, "PLATFORM") ? lz_dst_platform() : NULL,
                          lz_path_names(entry, len, "LIB") ? lz_dst_lib() : NULL};
    if (lz_path_entry(entry, len, &tok, q->cwd, lz_secure(), b->dir, sizeof b->dir,
                      b->reason, sizeof b->reason)) {
        lz_strlist_push(out, b->dir, "");
        return;
    }
    if (!runpath_describe(o)) {
        out->oom = 1;
        return;
    }
    size_t n = strlen(o->why) + 2 + strlen(b->reason) + 1;
    char *line = malloc(n);
    if (!line) {
        out->oom = 1;
        return;
    }
    snprintf(line, n, "%s: %s", o->why, b->reason);
    lz_strlist_push(out, "", line);
    free(line);
}

/* The entries of the object's tag (DT_RPATH or DT_RUNPATH), in order, into
 * out. */
static void add_list(struct runpaths *q, const struct dl_phdr_info *info, const lz_objview *v, long tag,
                     lz_strlist *out)
{
    if (!q->bufs && !(q->bufs = malloc(sizeof *q->bufs))) {
        out->oom = 1;
        return;
    }
    struct runpath_obj o = {.info = info, .tag = tag};
    for (const ElfW(Dyn) *d = v->m.dyn; d < v->m.dyn + v->m.ndyn && d->d_tag != DT_NULL; d++) {
        const char *rp;
        if (d->d_tag != tag || !(rp = lz_objects_str(v, d->d_un.d_val)))
            continue;
        for (const char *e = rp;;) {
            size_t len = lz_path_next(e, ":");
            add_entry(q, out, &o, e, len);
            if (!e[len])
                break;
            e += len + 1;
        }
    }
    free(o.why);
    free(o.origin);
    free(o.path);
}

/* The object that loaded object i: the first one before it that needs
 * it by its DT_SONAME or its file's name (ld.so's l_loader for a
 * DT_NEEDED load); 0 where there is none or it is the program (whose
 * DT_RPATH comes last anyway), or for an object opened by dlopen, whose
 * loader is dlopen's caller: only ld.so knows it. */
static size_t loader_of(const struct runpaths *q, size_t i)
{
    const char *so = lz_elfmem_soname(&q->seen[i].m);
    const char *name = q->seen[i].name, *slash = name ? strrchr(name, '/') : NULL;
    const char *base = slash ? slash + 1 : name;
    /* A DT_NEEDED with a slash is loaded by that path, which ld.so keeps
     * as the object's name. */
    for (size_t j = 0; j < i; j++)
        if ((so && lz_elfmem_needs(&q->seen[j].m, so)) ||
            (base && *base && lz_elfmem_needs(&q->seen[j].m, base)) ||
            (slash && lz_elfmem_needs(&q->seen[j].m, name)))
            return q->seen[j].program ? 0 : j;
    return 0;
}

/* ld.so, for a requester without DT_RUNPATH: after its own DT_RPATH,
 * that of the object that loaded it, of the one that loaded that, and on
 * up (an object's DT_RUNPATH leaves out its own DT_RPATH, not the chain
 * above it); the program's comes last (program_too). Each object's once. */
static void add_loaders(struct runpaths *q, size_t i, lz_strlist *out)
{
    /* Ends: each loader comes before the object it loaded. */
    for (size_t j = loader_of(q, i); j; j = loader_of(q, j)) {
        struct seen *o = &q->seen[j];
        if (!o->rpath || o->added)
            continue;
        o->added = 1;
        /* What add_list reads of an object: its name, for $ORIGIN. */
        struct dl_phdr_info info = {.dlpi_addr = o->m.base, .dlpi_name = o->name,
                                    .dlpi_phdr = o->m.ph, .dlpi_phnum = (ElfW(Half))o->m.phnum};
        lz_objview v = {.m = o->m, .info = &info};
        add_list(q, &info, &v, DT_RPATH, out);
    }
}

/* Add the object to q->seen: 0 when out of memory (said in the list; its
 * loaders are then not followed). */
static int remember(struct runpaths *q, const struct dl_phdr_info *info, const lz_objview *v, int rpath,
                    int program)
{
    if (q->nseen == q->capseen) {
        size_t cap = q->capseen ? 2 * q->capseen : 16;
        struct seen *grown = realloc(q->seen, cap * sizeof *grown);
        if (!grown) {
            q->out->rpath.oom = 1;
            return 0;
        }
        q->seen = grown, q->capseen = cap;
    }
    q->seen[q->nseen++] = (struct seen){.name = info->dlpi_name, .m = v->m, .rpath = (unsigned char)rpath,
                                        .program = (unsigned char)program};
    return 1;
}

/* Both kinds of every object at once: each object is viewed once. */
static int runpath_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct runpaths *q = data;
    lz_objview v;
    int program = !info->dlpi_name || !info->dlpi_name[0];
    if (!lz_objects_view(info, &v))
        return 0;
    /* As ld.so: an object's DT_RPATH counts only when it has no DT_RUNPATH. */
    int has_runpath = 0, has_rpath = 0;
    for (const ElfW(Dyn) *d = v.m.dyn; d < v.m.dyn + v.m.ndyn && d->d_tag != DT_NULL; d++) {
        has_runpath |= d->d_tag == DT_RUNPATH;
        has_rpath |= d->d_tag == DT_RPATH;
    }
    int rpath = has_rpath && !has_runpath;
    int known = remember(q, info, &v, rpath, program);
    if (program && rpath)
        add_list(q, info, &v, DT_RPATH, &q->program_rpath);
    if (!lz_objects_needs(&v, q->sonames, q->self_soname))
        return 0;
    int nodeflib = (lz_elfmem_dynval(&v.m, DT_FLAGS_1) & DF_1_NODEFLIB) != 0;
    if (v.self) {
        /* The object holding this code: its run paths count (a vendored
         * shim's $ORIGIN), but it asks for the library in ld.so's place
         * only where no other object needs it (dlopen'ed alone): else the
         * program's DT_RPATH, and DF_1_NODEFLIB, are the requester's to
         * decide (a plugin with DT_RUNPATH under a program with DT_RPATH
         * never gets the program's). */
        q->own_no_runpath = !has_runpath;
        q->own_nodeflib = nodeflib;
    }
    /* ld.so loads the library once, for the first object in load order
     * that needs it (breadth first at start, the first dlopen after), and
     * never searches a later one's run paths for it: they come last, for
     * where it would have refused that first one. */
    int requester = !v.self && q->requesters++ == 0, later = !v.self && !requester;
    lz_strlist *rpaths = later ? &q->out->later : &q->out->rpath;
    lz_strlist *runpaths = later ? &q->out->later : &q->out->runpath;
    if (requester) {
        q->out->nodeflib = nodeflib;
        if (!has_runpath) {
            q->program_too = 1;
            q->program_done |= program;
        }
    }
    if (rpath)
        add_list(q, info, &v, DT_RPATH, rpaths);
    /* Its DT_RPATH is in the list now: a requester after it whose loader
     * it is adds it not twice. */
    if (known) {
        q->seen[q->nseen - 1].added = 1;
        if (!has_runpath && !v.self && !program)
            add_loaders(q, q->nseen - 1, rpaths);
    }
    if (has_runpath)
        add_list(q, info, &v, DT_RUNPATH, runpaths);
    return 0;
}

void lz_objects_runpaths_read(const char *const *sonames, lz_runpaths *out)
{
    *out = (lz_runpaths){0};
    struct runpaths q = {.sonames = sonames, .self_soname = lz_objects_self_soname(), .out = out,
                         .own_no_runpath = -1};
    lz_dl_iterate_phdr(runpath_cb, &q);
    if (!q.requesters && q.own_no_runpath >= 0) {
        q.program_too = q.own_no_runpath;
        out->nodeflib = q.own_nodeflib;
    }
    /* ld.so, for a requester without DT_RUNPATH: its DT_RPATH, then the
     * program's (conda's python3: $ORIGIN/../lib), which a plugin linked
     * -lnccl follows as well. */
    if (q.program_too && !q.program_done)
        lz_strlist_append(&out->rpath, &q.program_rpath);
    else
        free(q.program_rpath.buf);
    free(q.cwd);
    free(q.bufs);
    free(q.seen);
}

void lz_runpaths_free(lz_runpaths *r)
{
    free(r->rpath.buf);
    free(r->runpath.buf);
    free(r->later.buf);
    *r = (lz_runpaths){0};
}

int lz_objects_runpaths(const char *const *sonames, int runpath, lz_strlist_visit_fn visit,
                        void *ctx, int *nodeflib)
{
    lz_runpaths r;
    lz_objects_runpaths_read(sonames, &r);
    if (nodeflib)
        *nodeflib = r.nodeflib;
    int rc = lz_strlist_visit(runpath ? &r.runpath : &r.rpath, visit, ctx);
    lz_runpaths_free(&r);
    return rc;
}
