/* SPDX-License-Identifier: MIT
 * What the objects already loaded in the process say about a library
 * (lz_objects.c): which of them carry its SONAME, the run paths of those that
 * need it, and the versioned names they import. Read from the dynamic
 * sections the dynamic linker has mapped: no file is opened, nothing loaded. */
#ifndef LZ_OBJECTS_H
#define LZ_OBJECTS_H

#include "lz_runtime.h"

/* One directory (or file) proposed by the objects, with where it came from. */
typedef int (*lz_object_visit_fn)(void *ctx, const char *path, const char *why);

/* Every loaded object whose DT_SONAME is soname, in load order, passed to
 * visit (path of the file, "") until it returns 1. */
LZ_HIDDEN int lz_objects_with_soname(const char *soname, lz_object_visit_fn visit, void *ctx);
/* The same, leaving out every object that defines marker (another
 * library's drop-ins, which carry its soname). */
LZ_HIDDEN int lz_objects_real_with_soname(const char *soname, const char *marker,
                                          lz_object_visit_fn visit, void *ctx);

/* The file holding this code (malloc'd; NULL when unknown): a shared shim's
 * path as the dynamic linker mapped it, or /proc/self/exe for code in the
 * main program (never argv[0], which the caller chooses). */
LZ_HIDDEN char *lz_objects_self_path(void);

/* The site directories this process reaches through its loaded objects,
 * as the caller's site_of finds them (site_of(name): the length of the
 * name's prefix that is a site directory, 0 for none: the caller's policy,
 * lz_wheel.c). First self, with the path of the file holding this code
 * (made real where site_of finds a site directory in its name; not called
 * when unknown); then visit (NULL: the objects are not read), with each
 * loaded object's site directory (directory, "loaded"), as the dynamic
 * linker names the object, in load order, each directory once; until one
 * returns 1. The program counts when the name it was run by and the
 * kernel's name for it both hold one. The names may hold symbolic links. */
LZ_HIDDEN int lz_objects_sites(size_t (*site_of)(const char *path),
                               int (*self)(void *ctx, const char *path),
                               lz_object_visit_fn visit, void *ctx);

/* The running program's file (/proc/self/exe, read once per process) in
 * out: 1 when known. */
LZ_HIDDEN int lz_objects_program_path(char *out, size_t size);

/* The DT_RPATH (runpath 0; only of objects without DT_RUNPATH, as ld.so) or
 * DT_RUNPATH (runpath 1) directories of the loaded objects that need one of
 * sonames (DT_NEEDED) or that need or are the object holding this code, in
 * load order, read as ld.so reads them (lz_path.c); passed to visit
 * (directory, "") until it returns 1. Entries that cannot be followed (a
 * token other than $ORIGIN, $ORIGIN in a secure-execution process, a
 * relative entry) are passed with a NULL directory and the reason in why
 * ("RPATH of OBJ: ..."). */
LZ_HIDDEN int lz_objects_runpaths(const char *const *sonames, int runpath,
                                  lz_object_visit_fn visit, void *ctx);

/* Mark in marks[i] (lib->nsyms entries) every name of lib that a loaded
 * object needing the library (one of its sonames, or this shim, in its
 * DT_NEEDED) imports: an undefined, non-weak symbol of its dynamic symbol
 * table. The names the loaded library will have to serve. */
LZ_HIDDEN void lz_objects_imports(const lz_lib *lib, unsigned char *marks);
/* The first such object importing name (malloc'd), or NULL. */
LZ_HIDDEN char *lz_objects_importer(const lz_lib *lib, const char *name);

/* The SONAME of the object holding this code (NULL: none), found once. */
LZ_HIDDEN const char *lz_objects_self_soname(void);

/* The first loaded object other than this code's that needs soname
 * (DT_NEEDED) and imports one of names (n, sorted by strcmp): its name as
 * the dynamic linker has it ("the program" for the executable), NULL for
 * none. */
LZ_HIDDEN const char *lz_objects_import_any(const char *soname, const char *const *names, size_t n);

/* 1 when the object holding this code exports name (its dynamic symbol
 * table defines it): only then do other objects bind to its definition. */
LZ_HIDDEN int lz_objects_self_exports(const char *name);

/* 1 when the loaded object holding the address inside defines each of the
 * n names name(ctx, i) gives, unversioned or at a version not hidden
 * (lz_dynmem_defines: through its GNU hash table, in memory); 0 when one is
 * missing or the object has no GNU hash table. */
LZ_HIDDEN int lz_objects_defines_all(const void *inside, const char *(*name)(const void *ctx, size_t i),
                                     const void *ctx, size_t n);

/* 1 when addr lies in a loaded object other than the C library (libc,
 * libdl) and the dynamic linker: a function interposed on theirs. */
LZ_HIDDEN int lz_objects_outside_c_library(const void *addr);
/* 1 when addr lies in an object's PT_GNU_RELRO (made read-only once
 * relocated): where a copy relocation puts a program's copy of a library's
 * const variable. */
LZ_HIDDEN int lz_objects_relro(const void *addr);

#endif
