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
/* Only its last two steps: ld.so.cache, then the system directories. */
LZ_HIDDEN int lz_linker_system_lookup(const char *const *sonames, const lz_linker_hooks *hooks);

#endif
