/* SPDX-License-Identifier: MIT
 * The search order (lz_search.c): its steps, and the dynamic linker's
 * search followed step by step. */
#ifndef LZ_SEARCH_H
#define LZ_SEARCH_H

#include "lz_walk.h"

/* Walk the whole search order. */
LZ_HIDDEN void lz_search(lz_walk *w);

/* Follow the dynamic linker's search for soname: visit(ctx, step, path) for
 * each existing file until it returns 1 (lz_search.c). */
typedef int (*lz_visit_fn)(void *ctx, const char *step, const char *path);
/* What the walk could not follow (a run-path entry with an unknown token),
 * and each place it looked in (a directory, ld.so.cache): either may be NULL. */
typedef void (*lz_note_fn)(void *ctx, const char *step, const char *text);
typedef struct lz_linker_hooks {
    lz_visit_fn visit;
    lz_note_fn note, looked;
    void *ctx;
} lz_linker_hooks;
LZ_HIDDEN int lz_linker_lookup(const char *const *sonames, const lz_linker_hooks *hooks);

/* Only its last two steps: ld.so.cache, then the system directories. */
LZ_HIDDEN int lz_system_lookup(const char *const *sonames, const lz_linker_hooks *hooks);

#endif
