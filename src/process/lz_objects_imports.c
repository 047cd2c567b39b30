/* SPDX-License-Identifier: MIT
 * The names the loaded objects import (lz_objects_imports.h). */
#include "elf/lz_elfmem.h"
#include "base/lz_dl.h"
#include "base/lz_startenv.h"
#include "base/lz_path.h"
#include "process/lz_objects.h"
#include "process/lz_objects_imports.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>


/* --- the names loaded objects import --------------------------------------- */

struct imports {
    const lz_lib *lib;
    unsigned char *marks;
    const uint32_t *index; /* lib's names, sorted (the generator's lz_lib.by_name) */
    size_t n;
    const char *self_soname;
    const char *name; /* lz_objects_importer: the name asked about */
    char *who;        /* and the first object importing it (malloc'd) */
    char *version;    /* the version its reference asks for (malloc'd), or NULL */
    int program;      /* that object is the program */
    int lazy;         /* that object was loaded at start and binds lazily */
    int any;          /* lz_objects_importer's second pass: an object that
                       * does not need the library counts too */
    const void *caller; /* lz_objects_importer: only the object holding it counts */
    struct start *start; /* lz_objects_importer: the objects loaded at start */
};

/* The objects loaded at start come first, in the order ld.so loaded them:
 * the program's DT_NEEDED closure (and LD_PRELOAD's); the first object
 * outside it, and every one after, came by dlopen, whose mode (RTLD_NOW,
 * Python's) is not known here. Apart from struct imports, and on the heap:
 * the walk of a first call needs none of it, and may run on the smallest
 * thread stack. */
struct start {
    const char *at_start[512];
    size_t nstart;
    int past_start;
    char preload[2048]; /* LD_PRELOAD's file names */
};

static int started(const struct imports *q, const char *name)
{
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    for (size_t i = 0; i < q->start->nstart; i++)
        if (strcmp(q->start->at_start[i], base) == 0)
            return 1;
    return 0;
}

/* Whether the object was loaded at start, its DT_NEEDED then counted in. */
static int loaded_at_start(struct imports *q, const struct dl_phdr_info *info, const lz_objview *v)
{
    int program = !info->dlpi_name || !info->dlpi_name[0];
    const char *so = lz_elfmem_soname(&v->m);
    if (q->start->past_start)
        return 0;
    /* The kernel's vDSO, listed second, is no DT_NEEDED of anyone's. */
    if (info->dlpi_addr == (ElfW(Addr))getauxval(AT_SYSINFO_EHDR))
        return 0;
    if (!program && !(so && started(q, so)) && !started(q, info->dlpi_name)) {
        q->start->past_start = 1;
        return 0;
    }
    struct start *st = q->start;
    for (size_t i = 0; i < v->m.ndyn && v->m.dyn[i].d_tag != DT_NULL; i++) {
        const char *n;
        if (v->m.dyn[i].d_tag == DT_NEEDED && st->nstart < sizeof st->at_start / sizeof st->at_start[0] &&
            (n = lz_objects_str(v, v->m.dyn[i].d_un.d_val)))
            st->at_start[st->nstart++] = n;
    }
    return 1;
}

/* Whether the object needs the library: one of its sonames, or this shim
 * (a program linked to liblazynccl.so.0), in its DT_NEEDED. */
static int needs_lib(const lz_objview *v, const struct imports *q)
{
    return !v->self && lz_objects_needs(v, q->lib->sonames, q->self_soname);
}

/* Each name an object needs from the library: an undefined, non-weak
 * symbol of its dynamic symbol table (a weak one it does without). */
static int imports_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct imports *q = data;
    lz_objview v;
    if (!lz_objects_view(info, &v))
        return 0;
    int at_start = q->name ? loaded_at_start(q, info, &v) : 0;
    if (!needs_lib(&v, q) && !(q->any && !v.self))
        return 0;
    if (q->caller && !lz_objects_mapped(info, (uintptr_t)q->caller, 1))
        return 0;
    for (size_t i = 1; i < v.m.nsyms; i++) {
        const ElfW(Sym) *s = &v.m.symtab[i];
        const char *name;
        if (s->st_shndx != SHN_UNDEF || ELF64_ST_BIND(s->st_info) == STB_WEAK || !s->st_name ||
            !(name = lz_objects_str(&v, s->st_name)))
            continue;
        if (q->name) {
            if (strcmp(name, q->name) == 0) {
                /* The main program by the path it was started as (ld.so run
                 * as a command makes that the program's, not its own). */
                const char *fn = (const char *)getauxval(AT_EXECFN);
                int main_program = !info->dlpi_name || !info->dlpi_name[0];
                q->who = strdup(!main_program ? info->dlpi_name : fn ? fn : "the program");
                q->program = main_program;
                q->lazy = at_start && !(lz_elfmem_dynval(&v.m, DT_FLAGS) & DF_BIND_NOW) &&
                          !(lz_elfmem_dynval(&v.m, DT_FLAGS_1) & DF_1_NOW);
                const char *version = lz_elfmem_needed_version(&v.m, i);
                q->version = version ? strdup(version) : NULL;
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
    struct imports q = {.lib = lib, .marks = marks, .self_soname = lz_objects_self_soname(),
                        .index = lib->by_name, .n = lib->nsyms};
    if (q.n && q.index)
        lz_dl_iterate_phdr(imports_cb, &q);
}

/* 1 when an object other than this code's defines name (data: the name). */
static int defines_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    lz_objview v;
    const ElfW(Sym) *s;
    return lz_objects_view(info, &v) && !v.self && (s = lz_elfmem_lookup(&v.m, data)) &&
           s->st_shndx != SHN_UNDEF;
}

/* The file names of a preload list (ld.so splits it at spaces and colons,
 * not tabs)
 * added to q's objects loaded at start, after used bytes of its preload:
 * the bytes used then. */
static size_t add_preloaded(struct imports *q, const char *list, size_t used)
{
    for (const char *p = list ? list : ""; *p;) {
        size_t len = lz_path_next(p, ": ");
        const char *base = p;
        for (const char *c = p; c < p + len; c++)
            if (*c == '/')
                base = c + 1;
        size_t blen = (size_t)(p + len - base);
        if (blen && used + blen + 1 <= sizeof q->start->preload && q->start->nstart < 64) {
            memcpy(q->start->preload + used, base, blen);
            q->start->preload[used + blen] = '\0';
            q->start->at_start[q->start->nstart++] = q->start->preload + used;
            used += blen + 1;
        }
        p += len + (p[len] != '\0');
    }
    return used;
}

/* One pass of lz_objects_importer: the objects that need the library, then,
 * where none imports name and no other object defines it, any object (one
 * linked without the library: its reference binds in the global scope, to
 * the drop-in standing in). Each walk starts with the preloaded objects
 * counted as loaded at start. */
static void importer_pass(struct imports *q, size_t preloaded)
{
    q->any = 0;
    q->start->nstart = preloaded;
    q->start->past_start = 0;
    lz_dl_iterate_phdr(imports_cb, q);
    if (!q->who && !lz_dl_iterate_phdr(defines_cb, (void *)q->name)) {
        q->any = 1;
        q->start->nstart = preloaded;
        q->start->past_start = 0;
        lz_dl_iterate_phdr(imports_cb, q);
    }
}

char *lz_objects_importer(const lz_lib *lib, const char *name, const void *caller, char **version,
                          int *program, int *lazy)
{
    struct imports *q = calloc(1, sizeof *q);
    struct start *start = calloc(1, sizeof *start);
    if (!q || !start) {
        free(q);
        free(start);
        return NULL;
    }
    *q = (struct imports){.lib = lib, .self_soname = lz_objects_self_soname(), .name = name,
                          .start = start};
    /* LD_PRELOAD's objects come right after the program, by their file
     * names, as ld.so read the variable at start; then those of ld.so's
     * --preload where ld.so ran as a command. */
    size_t used = add_preloaded(q, lz_start_getenv("LD_PRELOAD"), 0);
    add_preloaded(q, lz_objects_ldso_options()->preload, used);
    size_t preloaded = q->start->nstart;
    /* The calling object where it imports the name (ld.so binds its call);
     * else, the caller unknown or not an importer (a call through a
     * pointer, a thunk compiled without its tail call), the first. */
    q->caller = caller;
    if (caller)
        importer_pass(q, preloaded);
    q->caller = NULL;
    if (!q->who)
        importer_pass(q, preloaded);
    char *who = q->who;
    if (version)
        *version = q->version;
    else
        free(q->version);
    if (program)
        *program = q->program;
    if (lazy)
        *lazy = q->lazy;
    free(start);
    free(q);
    return who;
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
    lz_objview v;
    if (!lz_objects_view(info, &v) || v.self || !lz_elfmem_needs(&v.m, q->soname))
        return 0;
    const char *who = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "the program";
    /* A variable a program uses is undefined in it, or defined by the copy
     * relocation that moved it there (defined, so hashed: found through the
     * hash table where the count above stops at the undefined symbols). */
    if (v.m.symtab && v.m.gnu_hash)
        for (size_t k = 0; k < q->n; k++)
            if (lz_elfmem_lookup(&v.m, q->names[k])) {
                q->who = who;
                return 1;
            }
    for (size_t i = 1; i < v.m.nsyms; i++) {
        const ElfW(Sym) *s = &v.m.symtab[i];
        const char *name;
        if (!s->st_name || !(name = lz_objects_str(&v, s->st_name)))
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

