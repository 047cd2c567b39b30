/* SPDX-License-Identifier: MIT
 * What the dynamic linker would choose for a soname (lz_linker.c): the run
 * paths of the objects that need it, LD_LIBRARY_PATH, ld.so.cache and the
 * system directories, in ld.so's order. */
#ifndef LZ_LINKER_H
#define LZ_LINKER_H

#include "base/lz_runtime.h"

/* visit(ctx, step, path) for each existing file until it returns 1. */
typedef int (*lz_visit_fn)(void *ctx, const char *step, const char *path);
/* What the search could not follow (a run-path entry with an unknown token),
 * and each place it looked in (a directory, ld.so.cache): either may be NULL. */
typedef void (*lz_note_fn)(void *ctx, const char *step, const char *text);
typedef struct lz_linker_hooks {
    lz_visit_fn visit;
    lz_note_fn note, looked;
    void *ctx;
} lz_linker_hooks;

/* One requester described, not loaded (lazynccl-info --check reads it from
 * its file): what ld.so's search for the libraries it needs depends on. */
enum { LZ_LINKER_CHAIN = 16 };
typedef struct lz_linker_asker {
    /* DT_RPATH of the requester, then of each object above it up to the
     * program (ld.so follows them only where the requester has no
     * DT_RUNPATH, and only those of objects without one), with the
     * directory $ORIGIN stands for in each. */
    const char *rpath[LZ_LINKER_CHAIN], *rpath_origin[LZ_LINKER_CHAIN];
    int nrpath;
    const char *runpath, *runpath_origin; /* the requester's DT_RUNPATH, or NULL */
    const char *llp, *llp_origin;         /* LD_LIBRARY_PATH; the program's directory */
    int nodeflib;                         /* the requester has DF_1_NODEFLIB */
} lz_linker_asker;

/* The dynamic linker's whole search for sonames as it runs for that
 * requester: 1 when a visit returned 1. */
LZ_HIDDEN int lz_linker_lookup_asker(const char *const *sonames, const lz_linker_asker *a,
                                     const lz_linker_hooks *hooks);

/* Follow the dynamic linker's whole search for sonames (in preference
 * order): 1 when a visit returned 1. */
LZ_HIDDEN int lz_linker_lookup(const char *const *sonames, const lz_linker_hooks *hooks);
/* The search of a library that opens sonames by bare name itself
 * (dlopen from its own code): where it has no DT_RUNPATH, its DT_RPATH and
 * those of the objects above it (this code's object and those needing it);
 * LD_LIBRARY_PATH; its DT_RUNPATH; then the system's. origin is its
 * directory ($ORIGIN); rpath and runpath may be NULL or "". */
LZ_HIDDEN int lz_linker_lookup_from(const char *const *sonames, const char *origin,
                                  const char *rpath, const char *runpath,
                                  const lz_linker_hooks *hooks);
/* Each of ld.so's steps, in its order (glibc's _dl_map_object): the name
 * the report gives it and what it tries, one line. Every lookup above
 * walks these steps. */
LZ_HIDDEN void lz_linker_each(void (*fn)(void *ctx, const char *name, const char *what), void *ctx);
/* How ld.so splits a search list: LD_LIBRARY_PATH on both, a DT_RPATH or
 * DT_RUNPATH on the colon alone. */
#define LZ_LINKER_LLP_SEPS ":;"
#define LZ_LINKER_RUNPATH_SEPS ":"
/* One search list as ld.so splits (seps) and expands it, $ORIGIN standing
 * for origin (NULL: an entry naming it is noted, not searched); step names
 * it to the hooks. For LD_LIBRARY_PATH, origin is the program's
 * directory. */
LZ_HIDDEN int lz_linker_list_lookup(const char *const *sonames, const char *step, const char *list,
                                    const char *seps, const char *origin,
                                    const lz_linker_hooks *hooks);
/* Only its last two steps: ld.so.cache, then the system directories. A
 * requester with DF_1_NODEFLIB (nodeflib) gets neither the system
 * directories nor a cache entry that lies in one, as ld.so. */
LZ_HIDDEN int lz_linker_system_lookup(const char *const *sonames, int nodeflib,
                                      const lz_linker_hooks *hooks);

#endif
