/* SPDX-License-Identifier: MIT
 * Reading the dynamic sections of loaded objects (lz_objects.h).
 *
 * dl_iterate_phdr holds the dynamic linker's lock while it calls back, so the
 * callbacks here only copy strings out; the visits happen after it returns.
 * Every address taken from a dynamic section is checked to lie inside one of
 * the object's loaded segments before it is read. */
#include "lz_dynmem.h"
#include "lz_dl.h"
#include "lz_env.h"
#include "lz_objects.h"
#include "lz_path.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

typedef struct dynview {
    lz_dynmem m;               /* its dynamic section (lz_dynmem.h) */
    const struct dl_phdr_info *info;
    int self;                  /* the object holding this code */
} dynview;

static int mapped(const struct dl_phdr_info *info, uintptr_t addr, size_t len)
{
    return lz_dynmem_mapped(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, addr, len);
}

static int view(const struct dl_phdr_info *info, dynview *v)
{
    v->info = info;
    v->self = mapped(info, (uintptr_t)&view, 1);
    return lz_dynmem_view(&v->m, info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum);
}

static const char *str(const dynview *v, size_t off)
{
    return lz_dynmem_str(&v->m, off);
}

/* The program's file as the kernel names it (/proc/self/exe), kept once
 * read: a first call may ask for it several times (run paths, the
 * LD_LIBRARY_PATH $ORIGIN, the program's own site directory), and each
 * access under /proc costs a path walk there. The program never changes
 * under a process; fork keeps it. */
static char *program_noted;

int lz_objects_program_path(char *out, size_t size)
{
    const char *noted = __atomic_load_n(&program_noted, __ATOMIC_ACQUIRE);
    if (noted && lz_copy(out, size, noted))
        return 1;
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    out[n > 0 ? (size_t)n : 0] = '\0';
    if (n <= 0)
        return 0;
    char *copy = noted || (size_t)n >= size - 1 ? NULL : strdup(out), *expect = NULL;
    if (copy && !__atomic_compare_exchange_n(&program_noted, &expect, copy, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
        free(copy);
    return 1;
}

/* The name the dynamic linker gave an object (malloc'd; "" for the
 * program; NULL when out of memory). The linker writes a name before it
 * adds the object to its list, and dl_iterate_phdr reads the list under the
 * same lock, so reading the name here is ordered after that write even when
 * another thread's dlopen is adding the object at that moment. But the lock
 * is the dynamic linker's own, which ThreadSanitizer does not see: it would
 * report the copy as a race with that dlopen's allocation of the name. So
 * the copy is made by plain (volatile: never turned into a library call)
 * loads that it does not instrument. */
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#define LZ_ORDERED_BY_LD __attribute__((no_sanitize_thread, noinline))
#else
#define LZ_ORDERED_BY_LD
#endif
static LZ_ORDERED_BY_LD char *name_of(const struct dl_phdr_info *info)
{
    const volatile char *name = (const volatile char *)info->dlpi_name;
    size_t n = 0;
    while (name && name[n])
        n++;
    char *copy = malloc(n + 1);
    for (size_t i = 0; copy && i < n; i++)
        copy[i] = name[i];
    if (copy)
        copy[n] = '\0';
    return copy;
}

/* The file of an object (malloc'd, exactly as long as it is; NULL when out
 * of memory): the main program's is /proc/self/exe, never argv[0]. Exact:
 * the strings a first call keeps share a few heap pages, where a PATH_MAX
 * buffer each would be a fresh page each (11 us on a virtual machine). */
static char *object_path(const struct dl_phdr_info *info)
{
    char *name = name_of(info);
    if (!name || name[0])
        return name;
    free(name);
    char *tmp = malloc(PATH_MAX);
    char *path = tmp && lz_objects_program_path(tmp, PATH_MAX) ? strdup(tmp) : NULL;
    free(tmp);
    return path ? path : strdup("");
}

/* A growing list of NUL-separated string pairs, filled inside callbacks. */
typedef struct strlist {
    char *buf;
    size_t len, cap;
    int oom;
} strlist;

static void push(strlist *l, const char *a, const char *b)
{
    size_t na = strlen(a) + 1, nb = strlen(b) + 1;
    if (l->len + na + nb > l->cap) {
        size_t cap = (l->cap ? l->cap * 2 : 256) + na + nb;
        char *grown = realloc(l->buf, cap);
        if (!grown) {
            l->oom = 1;
            return;
        }
        l->buf = grown;
        l->cap = cap;
    }
    memcpy(l->buf + l->len, a, na);
    memcpy(l->buf + l->len + na, b, nb);
    l->len += na + nb;
}

/* push, unless a pair already starts with a (a site directory
 * named by each of a framework's many objects is visited once). */
static void push_once(strlist *l, const char *a, const char *b)
{
    for (size_t off = 0; off < l->len;) {
        const char *x = l->buf + off, *y = x + strlen(x) + 1;
        if (strcmp(x, a) == 0)
            return;
        off = (size_t)(y + strlen(y) + 1 - l->buf);
    }
    push(l, a, b);
}

/* Call visit on each pair of the list until it returns 1; free the list. */
static int visit_all(strlist *l, lz_object_visit_fn visit, void *ctx)
{
    int rc = 0;
    for (size_t off = 0; off < l->len && !rc;) {
        const char *a = l->buf + off, *b = a + strlen(a) + 1;
        off = (size_t)(b + strlen(b) + 1 - l->buf);
        rc = visit(ctx, a[0] ? a : NULL, b);
    }
    free(l->buf);
    return rc;
}

/* Add an object's file to a list (the program's too, by /proc/self/exe). */
static void push_object(strlist *l, const struct dl_phdr_info *info)
{
    char *path = object_path(info);
    if (!path)
        l->oom = 1;
    else if (path[0])
        push(l, path, "");
    free(path);
}

/* --- objects by SONAME ---------------------------------------------------- */

struct by_soname {
    const char *soname;
    const char *unless;      /* a drop-in's marker: objects defining it are left out */
    strlist out;
};

static int soname_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct by_soname *q = data;
    dynview v;
    const char *so;
    if (!view(info, &v) || !(so = lz_dynmem_soname(&v.m)) || strcmp(so, q->soname) != 0)
        return 0;
    /* Not this object itself: a drop-in that lazynccl-run's audit module
     * mapped for a request by name is named by the path the dynamic linker
     * tried (a file that may not exist); it is never a copy to reuse. */
    if (v.self || (q->unless && lz_dynmem_defines(&v.m, q->unless)))
        return 0;
    push_object(&q->out, info);
    return 0;
}

int lz_objects_with_soname(const char *soname, lz_object_visit_fn visit, void *ctx)
{
    struct by_soname q = {.soname = soname};
    lz_dl_iterate_phdr(soname_cb, &q);
    return visit_all(&q.out, visit, ctx);
}

int lz_objects_real_with_soname(const char *soname, const char *marker, lz_object_visit_fn visit,
                                void *ctx)
{
    struct by_soname q = {.soname = soname, .unless = marker};
    lz_dl_iterate_phdr(soname_cb, &q);
    return visit_all(&q.out, visit, ctx);
}

/* --- run paths ------------------------------------------------------------ */

struct runpaths {
    const char *const *sonames;
    const char *self_soname;
    int runpath;             /* 0: DT_RPATH entries, 1: DT_RUNPATH entries */
    char *cwd;               /* for relative entries, read once per query */
    int cwd_read;
    strlist out;
};

static int needs(const dynview *v, const struct runpaths *q)
{
    if (v->self)
        return 1;
    for (const ElfW(Dyn) *d = v->m.dyn; d < v->m.dyn + v->m.ndyn && d->d_tag != DT_NULL; d++) {
        const char *n;
        if (d->d_tag != DT_NEEDED || !(n = str(v, d->d_un.d_val)))
            continue;
        if (q->self_soname && strcmp(n, q->self_soname) == 0)
            return 1;
        for (const char *const *s = q->sonames; *s; s++)
            if (strcmp(n, *s) == 0)
                return 1;
    }
    return 0;
}

/* The buffers for expanding one object's run-path entries as ld.so would
 * (lz_path.c): on the heap, not the stack of a first call (the dlopen
 * after the walk runs over the stack pages it wrote). */
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
    if (!(o->path = object_path(o->info)))
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

static void add_entry(struct runpaths *q, struct entry_bufs *b, struct runpath_obj *o, const char *entry,
                      size_t len)
{
    if (memchr(entry, '$', len) && !runpath_describe(o)) {
        q->out.oom = 1;
        return;
    }
    /* The current directory only where an entry is relative (a syscall
     * less for the usual "$ORIGIN/..." or absolute entry). */
    const char *origin = o->origin;
    int relative = len == 0 || (entry[0] != '/' && entry[0] != '$') ||
                   (entry[0] == '$' && origin && origin[0] != '/');
    if (relative && !q->cwd_read) {
        q->cwd = getcwd(NULL, 0);
        q->cwd_read = 1;
    }
    if (lz_path_entry(entry, len, origin, q->cwd, lz_secure(), b->dir, sizeof b->dir,
                      b->reason, sizeof b->reason)) {
        push(&q->out, b->dir, "");
        return;
    }
    if (!runpath_describe(o)) {
        q->out.oom = 1;
        return;
    }
    size_t n = strlen(o->why) + 2 + strlen(b->reason) + 1;
    char *line = malloc(n);
    if (!line) {
        q->out.oom = 1;
        return;
    }
    snprintf(line, n, "%s: %s", o->why, b->reason);
    push(&q->out, "", line);
    free(line);
}

static int runpath_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct runpaths *q = data;
    dynview v;
    if (!view(info, &v) || !needs(&v, q))
        return 0;
    /* As ld.so: an object's DT_RPATH counts only when it has no DT_RUNPATH. */
    int has_runpath = 0, has_rpath = 0;
    for (const ElfW(Dyn) *d = v.m.dyn; d < v.m.dyn + v.m.ndyn && d->d_tag != DT_NULL; d++) {
        has_runpath |= d->d_tag == DT_RUNPATH;
        has_rpath |= d->d_tag == DT_RPATH;
    }
    long tag = q->runpath ? DT_RUNPATH : DT_RPATH;
    if (tag == DT_RPATH ? !has_rpath || has_runpath : !has_runpath)
        return 0;
    struct runpath_obj o = {.info = info, .tag = tag};
    struct entry_bufs *b = malloc(sizeof *b);
    if (!b)
        q->out.oom = 1;
    for (const ElfW(Dyn) *d = v.m.dyn; b && d < v.m.dyn + v.m.ndyn && d->d_tag != DT_NULL; d++) {
        const char *rp;
        if (d->d_tag != tag || !(rp = str(&v, d->d_un.d_val)))
            continue;
        for (const char *e = rp;;) {
            size_t len = lz_path_next(e, ":");
            add_entry(q, b, &o, e, len);
            if (!e[len])
                break;
            e += len + 1;
        }
    }
    free(o.why);
    free(o.origin);
    free(o.path);
    free(b);
    return 0;
}

static int self_soname_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    dynview v;
    if (view(info, &v) && v.self) {
        const char *so = lz_dynmem_soname(&v.m);
        if (so)
            lz_copy(data, 256, so);
        return 1;
    }
    return 0;
}

static int self_path_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    dynview v;
    if (!view(info, &v) || !v.self)
        return 0;
    *(char **)data = object_path(info);
    return 1;
}

char *lz_objects_self_path(void)
{
    char *path = NULL;
    lz_dl_iterate_phdr(self_path_cb, &path);
    if (path && !path[0]) {
        free(path);
        path = NULL;
    }
    return path;
}

struct sites {
    size_t (*site_of)(const char *path); /* the caller's: a site directory's length in path */
    char *self;              /* the object holding this code, as named */
    int self_canonical;      /* named by the kernel (/proc/self/exe) */
    strlist *out;
};

/* The program's file, where the name it was run by passes through a
 * site directory (site_of: a wheel's executable run by its path), else NULL: the
 * /proc access is made only for a program that may live in one. */
static char *program_in_site(const struct sites *q, const struct dl_phdr_info *info, int *oom)
{
    const char *run_as = (const char *)getauxval(AT_EXECFN);
    if (!run_as || !q->site_of(run_as))
        return NULL;
    char *exe = object_path(info);
    *oom |= !exe;
    return exe;
}

static int sites_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct sites *q = data;
    int self = !q->self && mapped(info, (uintptr_t)&sites_cb, 1);
    if (!self && !q->out)
        return 0;
    char *name = name_of(info);
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
        push_once(q->out, name, "loaded");
    }
    free(name);
    return 0;
}

int lz_objects_sites(size_t (*site_of)(const char *path), int (*self)(void *ctx, const char *path),
                     lz_object_visit_fn visit, void *ctx)
{
    strlist sites = {0};
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
    return visit_all(&sites, visit, ctx);
}

/* This object's SONAME (NULL: none), found once per process: it never
 * changes, and each lookup is a pass over every loaded object. */
const char *lz_objects_self_soname(void)
{
    static char *cached LZ_STARTUP_DATA;
    static const char none[] = "";
    char *s = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (!s) {
        char self[256] = "";
        lz_dl_iterate_phdr(self_soname_cb, self);
        char *fresh = self[0] ? strdup(self) : (char *)none;
        if (!fresh)
            return NULL; /* out of memory: asked again next time */
        char *expect = NULL;
        if (__atomic_compare_exchange_n(&cached, &expect, fresh, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            s = fresh;
        else {
            if (fresh != none)
                free(fresh);
            s = expect;
        }
    }
    return s[0] ? s : NULL;
}

int lz_objects_runpaths(const char *const *sonames, int runpath, lz_object_visit_fn visit,
                        void *ctx)
{
    struct runpaths q = {.sonames = sonames, .self_soname = lz_objects_self_soname(), .runpath = runpath};
    lz_dl_iterate_phdr(runpath_cb, &q);
    free(q.cwd);
    return visit_all(&q.out, visit, ctx);
}

/* --- the names loaded objects import --------------------------------------- */

struct imports {
    const lz_lib *lib;
    unsigned char *marks;
    size_t *index;   /* lib's names, sorted */
    size_t n;
    const char *self_soname;
    const char *name; /* lz_objects_importer: the name asked about */
    char *who;        /* and the first object importing it (malloc'd) */
};

static int by_sym_name(const void *a, const void *b, void *lib)
{
    const lz_lib *l = lib;
    return strcmp(lz_sym_name(l, &l->syms[*(const size_t *)a]),
                  lz_sym_name(l, &l->syms[*(const size_t *)b]));
}

/* Whether the object needs the library: one of its sonames, or this shim
 * (a program linked to liblazynccl.so.0), in its DT_NEEDED. */
static int needs_lib(const dynview *v, const struct imports *q)
{
    struct runpaths r = {.sonames = q->lib->sonames, .self_soname = q->self_soname};
    return !v->self && needs(v, &r);
}

/* Each name an object needs from the library: an undefined, non-weak
 * symbol of its dynamic symbol table (a weak one it does without). */
static int imports_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct imports *q = data;
    dynview v;
    if (!view(info, &v) || !needs_lib(&v, q))
        return 0;
    for (size_t i = 1; i < v.m.nsyms; i++) {
        const ElfW(Sym) *s = &v.m.symtab[i];
        const char *name;
        if (s->st_shndx != SHN_UNDEF || ELF64_ST_BIND(s->st_info) == STB_WEAK || !s->st_name ||
            !(name = str(&v, s->st_name)))
            continue;
        if (q->name) {
            if (strcmp(name, q->name) == 0) {
                /* The main program by the path it was started as (ld.so run
                 * as a command makes that the program's, not its own). */
                const char *fn = (const char *)getauxval(AT_EXECFN);
                int main_program = !info->dlpi_name || !info->dlpi_name[0];
                q->who = strdup(!main_program ? info->dlpi_name : fn ? fn : "the program");
                return 1;
            }
            continue;
        }
        size_t lo = 0, hi = q->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            int c = strcmp(name, lz_sym_name(q->lib, &q->lib->syms[q->index[mid]]));
            if (c == 0) {
                q->marks[q->index[mid]] = 1;
                break;
            }
            if (c < 0)
                hi = mid;
            else
                lo = mid + 1;
        }
    }
    return 0;
}

void lz_objects_imports(const lz_lib *lib, unsigned char *marks)
{
    struct imports q = {.lib = lib, .marks = marks, .self_soname = lz_objects_self_soname()};
    q.index = malloc(lib->nsyms * sizeof *q.index);
    if (!q.index)
        return;
    for (size_t i = 0; i < lib->nsyms; i++)
        q.index[q.n++] = i;
    if (q.n) {
        qsort_r(q.index, q.n, sizeof *q.index, by_sym_name, (void *)lib);
        lz_dl_iterate_phdr(imports_cb, &q);
    }
    free(q.index);
}

char *lz_objects_importer(const lz_lib *lib, const char *name)
{
    struct imports q = {.lib = lib, .self_soname = lz_objects_self_soname(), .name = name};
    lz_dl_iterate_phdr(imports_cb, &q);
    return q.who;
}

/* --- imported variables ---------------------------------------------------- */

struct import_any {
    const char *soname;
    const char *const *names; /* sorted */
    size_t n;
    const char *who;
};

static int import_any_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct import_any *q = data;
    dynview v;
    if (!view(info, &v) || v.self || !lz_dynmem_needs(&v.m, q->soname))
        return 0;
    const char *who = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "the program";
    /* A variable a program uses is undefined in it, or defined by the copy
     * relocation that moved it there (defined, so hashed: found through the
     * hash table where the count above stops at the undefined symbols). */
    if (v.m.symtab && v.m.gnu_hash)
        for (size_t k = 0; k < q->n; k++)
            if (lz_dynmem_lookup(&v.m, q->names[k])) {
                q->who = who;
                return 1;
            }
    for (size_t i = 1; i < v.m.nsyms; i++) {
        const ElfW(Sym) *s = &v.m.symtab[i];
        const char *name;
        if (!s->st_name || !(name = str(&v, s->st_name)))
            continue;
        size_t lo = 0, hi = q->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            int c = strcmp(name, q->names[mid]);
            if (c == 0) {
                q->who = who;
                return 1;
            }
            if (c < 0)
                hi = mid;
            else
                lo = mid + 1;
        }
    }
    return 0;
}

const char *lz_objects_import_any(const char *soname, const char *const *names, size_t n)
{
    struct import_any q = {.soname = soname, .names = names, .n = n};
    lz_dl_iterate_phdr(import_any_cb, &q);
    return q.who;
}

struct self_defines {
    const char *name;
    int found;
};

static int self_defines_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct self_defines *q = data;
    dynview v;
    if (!view(info, &v) || !v.self)
        return 0;
    if (v.m.symtab && v.m.gnu_hash)
        q->found = lz_dynmem_lookup(&v.m, q->name) != NULL;
    for (size_t i = 1; !q->found && i < v.m.nsyms; i++) {
        const char *n;
        q->found = v.m.symtab[i].st_shndx != SHN_UNDEF && v.m.symtab[i].st_name &&
                   (n = str(&v, v.m.symtab[i].st_name)) && strcmp(n, q->name) == 0;
    }
    return 1;
}

int lz_objects_self_exports(const char *name)
{
    struct self_defines q = {.name = name};
    lz_dl_iterate_phdr(self_defines_cb, &q);
    return q.found;
}

/* --- every name defined ----------------------------------------------------- */

struct defines_all {
    uintptr_t inside;
    const char *(*name)(const void *ctx, size_t i);
    const void *ctx;
    size_t n;
    int all;
};

static int defines_all_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct defines_all *q = data;
    dynview v;
    if (!mapped(info, q->inside, 1))
        return 0;
    q->all = view(info, &v) && v.m.gnu_hash;
    for (size_t i = 0; q->all && i < q->n; i++)
        q->all = lz_dynmem_defines(&v.m, q->name(q->ctx, i));
    return 1;
}

int lz_objects_defines_all(const void *inside, const char *(*name)(const void *ctx, size_t i),
                           const void *ctx, size_t n)
{
    struct defines_all q = {(uintptr_t)inside, name, ctx, n, 0};
    lz_dl_iterate_phdr(defines_all_cb, &q);
    return q.all;
}

/* --- the object holding an address ------------------------------------------ */

struct holder {
    uintptr_t addr;
    int outside; /* in a loaded object other than the C library and ld.so */
};

static int holder_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct holder *h = data;
    if (!mapped(info, h->addr, 1))
        return 0;
    const char *n = info->dlpi_name ? info->dlpi_name : "";
    h->outside = !strstr(n, "/libc.so") && !strstr(n, "/libdl.so") && !strstr(n, "/ld-linux") &&
                 !strstr(n, "/ld64.so");
    return 1;
}

int lz_objects_outside_c_library(const void *addr)
{
    struct holder h = {(uintptr_t)addr, 0};
    lz_dl_iterate_phdr(holder_cb, &h);
    return h.outside;
}

/* --- read-only after relocation ---------------------------------------------- */

struct relro {
    uintptr_t addr;
    int found;
};

static int relro_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct relro *q = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_GNU_RELRO && q->addr >= lo && q->addr - lo < ph->p_memsz)
            return q->found = 1;
    }
    return 0;
}

int lz_objects_relro(const void *addr)
{
    struct relro q = {.addr = (uintptr_t)addr};
    lz_dl_iterate_phdr(relro_cb, &q);
    return q.found;
}
