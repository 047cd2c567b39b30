/* SPDX-License-Identifier: MIT
 * Reading the dynamic sections of loaded objects (lz_objects.h).
 *
 * dl_iterate_phdr holds the dynamic linker's lock while it calls back, so the
 * callbacks here only copy strings out; the visits happen after it returns.
 * Every address taken from a dynamic section is checked to lie inside one of
 * the object's loaded segments before it is read. */
#include "elf/lz_elfmem.h"
#include "base/lz_dl.h"
#include "process/lz_objects.h"
#include "base/lz_path.h"
#include "common/lz_ldsoargs.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>


int lz_objects_mapped(const struct dl_phdr_info *info, uintptr_t addr, size_t len)
{
    return lz_elfmem_mapped(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, addr, len);
}

/* The program headers of the object holding this code, once found: that
 * object stays loaded while its code runs, and no other object's headers
 * lie in its memory, so a pointer comparison answers every later test
 * (each walk of the loaded objects asks it of every one). */
static const ElfW(Phdr) *self_phdr;

int lz_objects_is_self(const struct dl_phdr_info *info)
{
    const ElfW(Phdr) *known = __atomic_load_n(&self_phdr, __ATOMIC_RELAXED);
    if (known)
        return info->dlpi_phdr == known;
    if (!lz_objects_mapped(info, (uintptr_t)&lz_objects_view, 1))
        return 0;
    __atomic_store_n(&self_phdr, info->dlpi_phdr, __ATOMIC_RELAXED);
    return 1;
}

/* A search walks the loaded objects several times (the copies loaded, the
 * imports, the run paths, the C library), each walk viewing every object.
 * The views are kept for the search's later walks while the dynamic linker
 * has added and removed nothing (dl_iterate_phdr's counts, which glibc and
 * musl pass every callback): every object viewed is then still loaded, and
 * its view is made once per search. Per thread, as a search is; the
 * objects past the first VIEWS_KEPT are viewed each time. */
enum { VIEWS_KEPT = 24 };
typedef struct kept_views {
    unsigned long long adds, subs;
    size_t n;
    struct {
        const ElfW(Phdr) *ph;
        lz_elfmem m;
        int ok;
    } v[VIEWS_KEPT];
} kept_views;
static __thread kept_views *kept;

static kept_views *views_kept(const struct dl_phdr_info *info)
{
    if (!lz_dl_in_search())
        return NULL;
    kept_views *k = kept;
    if (!k && (k = kept = malloc(sizeof *k)))
        k->n = 0;
    if (k && (!k->n || k->adds != info->dlpi_adds || k->subs != info->dlpi_subs)) {
        k->n = 0; /* only the counts and the count of views: the views are written as made */
        k->adds = info->dlpi_adds;
        k->subs = info->dlpi_subs;
    }
    return k;
}

void lz_objects_search_end(void)
{
    free(kept);
    kept = NULL;
}

int lz_objects_view(const struct dl_phdr_info *info, lz_objview *v)
{
    v->info = info;
    v->self = lz_objects_is_self(info);
    kept_views *k = views_kept(info);
    for (size_t i = 0; k && i < k->n; i++)
        if (k->v[i].ph == info->dlpi_phdr) {
            v->m = k->v[i].m;
            return k->v[i].ok;
        }
    int ok = lz_elfmem_view(&v->m, info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum);
    if (k && k->n < VIEWS_KEPT) {
        k->v[k->n].ph = info->dlpi_phdr;
        k->v[k->n].m = v->m;
        k->v[k->n++].ok = ok;
    }
    return ok;
}

const char *lz_objects_str(const lz_objview *v, size_t off)
{
    return lz_elfmem_str(&v->m, off);
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
LZ_ORDERED_BY_LD char *lz_objects_name(const struct dl_phdr_info *info)
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
 * buffer each would be a fresh page each (a page fault; docs/concepts/performance.md). */
char *lz_objects_file(const struct dl_phdr_info *info)
{
    char *name = lz_objects_name(info);
    if (!name || name[0])
        return name;
    free(name);
    char *tmp = malloc(PATH_MAX);
    char *path = tmp && lz_objects_program_path(tmp, PATH_MAX) ? strdup(tmp) : NULL;
    free(tmp);
    return path ? path : strdup("");
}


/* Add an object's file to a list (the program's too, by /proc/self/exe). */
static void push_file(lz_strlist *l, const struct dl_phdr_info *info)
{
    char *path = lz_objects_file(info);
    if (!path)
        l->oom = 1;
    else if (path[0])
        lz_strlist_push(l, path, "");
    free(path);
}

/* The object is this code's, or needs (DT_NEEDED) self_soname (NULL: none)
 * or one of sonames. */
int lz_objects_needs(const lz_objview *v, const char *const *sonames, const char *self_soname)
{
    if (v->self)
        return 1;
    for (const ElfW(Dyn) *d = v->m.dyn; d < v->m.dyn + v->m.ndyn && d->d_tag != DT_NULL; d++) {
        const char *n;
        if (d->d_tag != DT_NEEDED || !(n = lz_objects_str(v, d->d_un.d_val)))
            continue;
        if (self_soname && strcmp(n, self_soname) == 0)
            return 1;
        for (const char *const *s = sonames; *s; s++)
            if (strcmp(n, *s) == 0)
                return 1;
    }
    return 0;
}

/* --- objects by SONAME ---------------------------------------------------- */

struct by_soname {
    const char *soname;
    const char *unless;      /* a drop-in's marker: objects defining it are left out */
    lz_strlist out;
};

/* 1 when the object (viewed into v) carries soname and is a copy of the
 * library: not this object itself (a drop-in that lazynccl-run's audit
 * module mapped for a request by name is named by the path the dynamic
 * linker tried, a file that may not exist; it is never a copy to reuse),
 * nor one that defines marker (another drop-in of it; NULL: none). */
static int real_copy(const struct dl_phdr_info *info, lz_objview *v, const char *soname,
                     const char *marker)
{
    const char *so;
    return lz_objects_view(info, v) && (so = lz_elfmem_soname(&v->m)) && strcmp(so, soname) == 0 &&
           !v->self && !(marker && lz_elfmem_defines(&v->m, marker));
}

static int soname_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct by_soname *q = data;
    lz_objview v;
    if (real_copy(info, &v, q->soname, q->unless))
        push_file(&q->out, info);
    return 0;
}

int lz_objects_with_soname(const char *soname, lz_strlist_visit_fn visit, void *ctx)
{
    struct by_soname q = {.soname = soname};
    lz_dl_iterate_phdr(soname_cb, &q);
    return lz_strlist_visit(&q.out, visit, ctx);
}

int lz_objects_real_with_soname(const char *soname, const char *marker, lz_strlist_visit_fn visit,
                                void *ctx)
{
    struct by_soname q = {.soname = soname, .unless = marker};
    lz_dl_iterate_phdr(soname_cb, &q);
    return lz_strlist_visit(&q.out, visit, ctx);
}

static int self_soname_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    lz_objview v;
    if (lz_objects_is_self(info) && lz_objects_view(info, &v)) {
        const char *so = lz_elfmem_soname(&v.m);
        if (so)
            lz_copy(data, 256, so);
        return 1;
    }
    return 0;
}

static int self_path_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    lz_objview v;
    if (!lz_objects_is_self(info) || !lz_objects_view(info, &v))
        return 0;
    *(char **)data = lz_objects_file(info);
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

/* This object's SONAME (NULL: none), found once per process: it never
 * changes, and each lookup is a pass over every loaded object. */
static int ldso_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    lz_objview v;
    const ElfW(Sym) *s;
    if (!lz_objects_view(info, &v) || !(s = lz_elfmem_lookup(&v.m, "_rtld_global")) ||
        s->st_shndx == SHN_UNDEF)
        return 0;
    *(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
    return 1;
}

/* 1 when the program names no interpreter (linked -static, or
 * static-pie): its dlopen is the C library's own copy of the loader, and
 * an ld.so a dlopen brings in as a dependency is not the one loading. Where
 * ld.so runs as a command, AT_PHDR is the program's. */
static int static_program(void)
{
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    size_t n = (size_t)getauxval(AT_PHNUM);
    for (size_t i = 0; ph && i < n; i++)
        if (ph[i].p_type == PT_INTERP)
            return 0;
    return ph != NULL;
}

uintptr_t lz_objects_ldso_base(void)
{
    static uintptr_t base;
    static int found;
    if (__atomic_load_n(&found, __ATOMIC_ACQUIRE))
        return __atomic_load_n(&base, __ATOMIC_RELAXED);
    uintptr_t b = (uintptr_t)getauxval(AT_BASE);
    if (!b && !static_program())
        lz_dl_iterate_phdr(ldso_cb, &b);
    __atomic_store_n(&base, b, __ATOMIC_RELAXED);
    __atomic_store_n(&found, 1, __ATOMIC_RELEASE);
    return b;
}

void *lz_objects_ldso_symbol(const char *name, size_t *size)
{
    uintptr_t base = lz_objects_ldso_base();
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    lz_elfmem m;
    const ElfW(Sym) *s;
    if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        !lz_elfmem_view(&m, base, (const ElfW(Phdr) *)(base + eh->e_phoff), eh->e_phnum) ||
        !(s = lz_elfmem_lookup(&m, name)) || s->st_shndx == SHN_UNDEF)
        return NULL;
    if (size)
        *size = s->st_size;
    return (void *)(base + s->st_value);
}

/* Those options, read once from /proc/self/cmdline (the arguments as the
 * kernel laid them out, before ld.so took its own off): none where ld.so
 * is the interpreter, the usual case, which reads nothing. */
const lz_ldso_options *lz_objects_ldso_options(void)
{
    static const lz_ldso_options none;
    static lz_ldso_options *read_once;
    lz_ldso_options *o = __atomic_load_n(&read_once, __ATOMIC_ACQUIRE);
    if (o)
        return o;
    if (getauxval(AT_BASE) != 0 || !lz_objects_ldso_base())
        return &none;
    o = calloc(1, sizeof *o);
    /* Read whole, however long (the kernel bounds it), growing as it comes. */
    size_t cap = 1 << 16, got = 0;
    char *text = o ? malloc(cap + 2) : NULL;
    int fd = text ? open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC) : -1;
    for (ssize_t n = 1; fd >= 0 && n > 0 && text; got += (size_t)n) {
        if (got == cap) {
            char *more = realloc(text, cap * 2 + 2);
            if (!more)
                break;
            text = more, cap *= 2;
        }
        if ((n = read(fd, text + got, cap - got)) < 0)
            n = 0;
    }
    if (fd >= 0)
        close(fd);
    if (text) /* two NULs of its own: the last argument ends, and so do they */
        text[got] = text[got + 1] = '\0';
    /* The first argument is ld.so's file; its options follow, up to "--"
     * or the program's name. */
    for (char *a = text ? text + strlen(text) + 1 : NULL; a && a < text + got && a[0] == '-' &&
         a[1] == '-' && a[2];) {
        char *value = a + strlen(a) + 1;
        int has_value = value < text + got; /* an argument follows, empty or not */
        /* The last of each wins, as ld.so keeps the last, empty or not (an
         * empty library path stands for LD_LIBRARY_PATH too: none). */
        char **keep = lz_ldsoargs_same(a + 2, "library-path")           ? &o->library_path
                      : lz_ldsoargs_same(a + 2, "preload")              ? &o->preload
                      : lz_ldsoargs_same(a + 2, "glibc-hwcaps-prepend") ? &o->hwcaps_prepend
                      : lz_ldsoargs_same(a + 2, "glibc-hwcaps-mask")    ? &o->hwcaps_mask
                                                                        : NULL;
        if (keep && has_value) {
            free(*keep);
            *keep = strdup(value);
        }
        o->inhibit_cache |= lz_ldsoargs_same(a + 2, "inhibit-cache");
        a = lz_ldsoargs_takes_value(a + 2) && has_value ? value + strlen(value) + 1 : value;
    }
    free(text);
    if (!o)
        return &none;
    lz_ldso_options *expect = NULL;
    if (!__atomic_compare_exchange_n(&read_once, &expect, o, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(o->library_path);
        free(o->preload);
        free(o->hwcaps_prepend);
        free(o->hwcaps_mask);
        free(o);
        o = expect;
    }
    return o;
}

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

struct self_defines {
    const char *name;
    int found;
};

static int self_defines_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct self_defines *q = data;
    lz_objview v;
    if (!lz_objects_is_self(info) || !lz_objects_view(info, &v))
        return 0;
    if (v.m.symtab && v.m.gnu_hash)
        q->found = lz_elfmem_lookup(&v.m, q->name) != NULL;
    for (size_t i = 1; !q->found && i < v.m.nsyms; i++) {
        const char *n;
        q->found = v.m.symtab[i].st_shndx != SHN_UNDEF && v.m.symtab[i].st_name &&
                   (n = lz_objects_str(&v, v.m.symtab[i].st_name)) && strcmp(n, q->name) == 0;
    }
    return 1;
}

int lz_objects_self_exports(const char *name)
{
    struct self_defines q = {.name = name};
    lz_dl_iterate_phdr(self_defines_cb, &q);
    return q.found;
}

/* --- a variable's later references ----------------------------------------- */

struct real_value {
    const char *soname, *marker, *name;
    unsigned char *out;
    size_t size;
    int done;
};

static int real_value_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct real_value *q = data;
    lz_objview v;
    if (!real_copy(info, &v, q->soname, q->marker))
        return 0;
    /* The first copy answers: the one the search would adopt. */
    const void *at = lz_elfmem_plain_value(&v.m, q->name, q->size);
    if ((q->done = at != NULL))
        memcpy(q->out, at, q->size);
    return 1;
}

int lz_objects_real_value(const char *soname, const char *marker, const char *name, void *out,
                          size_t size)
{
    struct real_value q = {soname, marker, name, out, size, 0};
    lz_dl_iterate_phdr(real_value_cb, &q);
    return q.done;
}

struct indirect {
    const lz_indirect *syms;
    size_t n, done;
};

/* The flags of the loaded segment holding [addr, addr + len), or -1. */
static long segment_flags(const lz_elfmem *m, uintptr_t addr, size_t len)
{
    for (size_t i = 0; i < m->phnum; i++) {
        const ElfW(Phdr) *p = &m->ph[i];
        uintptr_t start = m->base + p->p_vaddr;
        if (p->p_type == PT_LOAD && addr >= start && addr + len <= start + p->p_memsz)
            return (long)p->p_flags;
    }
    return -1;
}

static int indirect_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct indirect *q = data;
    lz_objview v;
    if (!lz_objects_is_self(info) || !lz_objects_view(info, &v))
        return 0;
    ElfW(Sym) **found = calloc(q->n ? q->n : 1, sizeof *found);
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    long flags = -1;
    for (size_t i = 0; found && i < q->n; i++) {
        ElfW(Sym) *sym = (ElfW(Sym) *)lz_elfmem_lookup_at(&v.m, q->syms[i].name,
                                                          (uintptr_t)q->syms[i].addr);
        long f = sym ? segment_flags(&v.m, (uintptr_t)sym, sizeof *sym) : -1;
        if (f < 0 || ELF64_ST_TYPE(sym->st_info) != STT_OBJECT ||
            (uintptr_t)q->syms[i].resolver < v.m.base || (flags >= 0 && f != flags))
            continue;
        flags = f, found[i] = sym;
        lo = (uintptr_t)sym < lo ? (uintptr_t)sym : lo;
        hi = (uintptr_t)(sym + 1) > hi ? (uintptr_t)(sym + 1) : hi;
    }
    /* Never where the table shares its segment with code (linked with
     * -z noseparate-code, or by gold): the pages made writable would stop
     * running. */
    uintptr_t page = (uintptr_t)getpagesize();
    uintptr_t start = lo & ~(page - 1);
    size_t len = (hi - start + page - 1) & ~(page - 1);
    if (found && hi && !(flags & PF_X) &&
        mprotect((void *)start, len, PROT_READ | PROT_WRITE) == 0) {
        for (size_t i = 0; i < q->n; i++) {
            if (!found[i])
                continue;
            /* The value before the type: no lookup of these names runs
             * meanwhile (lz_objects.h), and either order leaves one entry
             * half-written. */
            found[i]->st_value = (uintptr_t)q->syms[i].resolver - v.m.base;
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            found[i]->st_info = ELF64_ST_INFO(ELF64_ST_BIND(found[i]->st_info), STT_GNU_IFUNC);
            q->done++;
        }
        mprotect((void *)start, len, PROT_READ | ((flags & PF_W) ? PROT_WRITE : 0));
    }
    free(found);
    return 1;
}

size_t lz_objects_self_indirect(const lz_indirect *syms, size_t n)
{
    struct indirect q = {syms, n, 0};
    lz_dl_iterate_phdr(indirect_cb, &q);
    return q.done;
}
