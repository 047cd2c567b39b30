/* SPDX-License-Identifier: MIT
 * What the objects already loaded in the process say (lz_objects.c):
 * which of them carry a SONAME, which holds an address or this code, what
 * they define; the reading the other lz_objects_*.c share (their run
 * paths, site directories and imports). Read from the dynamic
 * sections the dynamic linker has mapped: no file is opened, nothing loaded. */
#ifndef LZ_OBJECTS_H
#define LZ_OBJECTS_H

#include "base/lz_runtime.h"
#include "base/lz_strlist.h"
#include "elf/lz_elfmem.h"

#include <link.h>
#include <stddef.h>
#include <stdint.h>


/* Every loaded object whose DT_SONAME is soname, in load order, passed to
 * visit (path of the file, "") until it returns 1. */
LZ_HIDDEN int lz_objects_with_soname(const char *soname, lz_strlist_visit_fn visit, void *ctx);
/* The same, leaving out every object that defines marker (another
 * library's drop-ins, which carry its soname). */
LZ_HIDDEN int lz_objects_real_with_soname(const char *soname, const char *marker,
                                          lz_strlist_visit_fn visit, void *ctx);

/* The file holding this code (malloc'd; NULL when unknown): a shared shim's
 * path as the dynamic linker mapped it, or /proc/self/exe for code in the
 * main program (never argv[0], which the caller chooses). */
LZ_HIDDEN char *lz_objects_self_path(void);

/* The running program's file (/proc/self/exe, read once per process) in
 * out: 1 when known. */
LZ_HIDDEN int lz_objects_program_path(char *out, size_t size);

/* Where the dynamic linker itself is loaded (0: a static program, whose
 * loader is the C library's own copy, or none found): AT_BASE, or, where
 * ld.so was run as the program (AT_BASE is then 0), the loaded object that
 * defines _rtld_global. Found once. */
LZ_HIDDEN uintptr_t lz_objects_ldso_base(void);

/* The address at which ld.so (lz_objects_ldso_base) defines name, its GNU
 * hash table read in memory, and the size its symbol gives it in *size
 * (NULL: not asked); NULL when it defines none or there is no ld.so. */
LZ_HIDDEN void *lz_objects_ldso_symbol(const char *name, size_t *size);

/* What ld.so run as a command (`ld.so [OPTIONS] PROG`: its file the
 * program, AT_BASE 0) took from its own options, read once from
 * /proc/self/cmdline: --library-path stands for LD_LIBRARY_PATH,
 * --inhibit-cache leaves ld.so.cache out, --preload loads its list after
 * LD_PRELOAD's, --glibc-hwcaps-prepend and --glibc-hwcaps-mask choose the
 * glibc-hwcaps subdirectories (lz_hwcaps.h). All empty where ld.so is the interpreter, the usual case,
 * which reads nothing. */
typedef struct lz_ldso_options {
    char *library_path; /* NULL: none given; "" given empty (no directory) */
    char *preload;      /* NULL: none given */
    char *hwcaps_prepend, *hwcaps_mask; /* --glibc-hwcaps-prepend, -mask; NULL: none given */
    int inhibit_cache;
} lz_ldso_options;
LZ_HIDDEN const lz_ldso_options *lz_objects_ldso_options(void);

/* The SONAME of the object holding this code (NULL: none), found once. */
LZ_HIDDEN const char *lz_objects_self_soname(void);

/* 1 when the object holding this code exports name (its dynamic symbol
 * table defines it): only then do other objects bind to its definition. */
LZ_HIDDEN int lz_objects_self_exports(const char *name);

/* Copies into out (size bytes) the value name holds in the first loaded
 * object with soname other than this code's and any that defines marker (a
 * drop-in), as dlsym without a version finds it, where no relocation of
 * that object writes into it: bytes that hold no address, so they stay
 * right whatever becomes of the object (a dlclose). 0, out untouched,
 * where no such object defines name with that size, or a relocation writes
 * into it. Callable from an indirect function's resolver: it takes no lock
 * of the dynamic linker's but the one dl_iterate_phdr takes. */
LZ_HIDDEN int lz_objects_real_value(const char *soname, const char *marker, const char *name,
                                    void *out, size_t size);

/* A symbol of the object holding this code to make an indirect function
 * (STT_GNU_IFUNC) whose resolver is resolver: name, defined at addr. */
typedef struct lz_indirect {
    const char *name;
    const void *addr;
    void *(*resolver)(void);
} lz_indirect;
/* Makes each of the n symbols so in the dynamic symbol table in memory, the
 * table made writable once for them all: the dynamic linker then binds
 * every later reference (a dlopen's relocations, dlsym) to what the
 * resolver returns, while what is bound already keeps addr. The number
 * made so; 0 leaves the table as it was (a table sharing its segment with
 * code, mprotect refused). Call it only where no other thread can look the
 * names up: in a constructor, which runs under the dynamic linker's lock. */
LZ_HIDDEN size_t lz_objects_self_indirect(const lz_indirect *syms, size_t n);

/* For the readers of the objects (lz_objects_*.c): one object's dynamic
 * section as dl_iterate_phdr shows it, and lists of string pairs filled
 * inside its callbacks (which hold the dynamic linker's lock, so they only
 * copy strings out; the visits happen after it returns). */
/* 1 when info describes the object holding this code: a test of its
 * segments alone, before any of its dynamic section is read. */
LZ_HIDDEN int lz_objects_is_self(const struct dl_phdr_info *info);

typedef struct lz_objview {
    lz_elfmem m;               /* its dynamic section (lz_elfmem.h) */
    const struct dl_phdr_info *info;
    int self;                  /* the object holding this code */
} lz_objview;

/* Fill v for the object info describes: 1 when it has a dynamic section
 * read in bounds; v->self says whether it holds this code. Inside a search
 * each object's view is made once (lz_objects_search_end lets them go). */
LZ_HIDDEN int lz_objects_view(const struct dl_phdr_info *info, lz_objview *v);
/* Called when the calling thread's outermost search ends. */
LZ_HIDDEN void lz_objects_search_end(void);
/* 1 when [addr, addr + len) lies inside one loaded segment of the object. */
LZ_HIDDEN int lz_objects_mapped(const struct dl_phdr_info *info, uintptr_t addr, size_t len);
/* The string at off of its string table, NULL when out of bounds. */
LZ_HIDDEN const char *lz_objects_str(const lz_objview *v, size_t off);
/* The name the dynamic linker gave the object (malloc'd; "" for the
 * program; NULL when out of memory). */
LZ_HIDDEN char *lz_objects_name(const struct dl_phdr_info *info);
/* The object's file (malloc'd; "" when unknown, NULL when out of memory):
 * the program's is /proc/self/exe, never argv[0]. */
LZ_HIDDEN char *lz_objects_file(const struct dl_phdr_info *info);
/* 1 when the object is this code's or needs (DT_NEEDED) self_soname (NULL:
 * none) or one of sonames (NULL-terminated). */
LZ_HIDDEN int lz_objects_needs(const lz_objview *v, const char *const *sonames, const char *self_soname);

#endif
