/* SPDX-License-Identifier: MIT
 * A growing list of NUL-separated string pairs (lz_strlist.c): filled
 * inside dl_iterate_phdr's callbacks, which hold the dynamic linker's
 * lock and so only copy strings out; visited after it returns. */
#ifndef LZ_STRLIST_H
#define LZ_STRLIST_H

#include "base/lz_runtime.h"

#include <stddef.h>

typedef struct lz_strlist {
    char *buf;
    size_t len, cap;
    int oom;
} lz_strlist;

/* One pair visited: a directory or file (NULL where the pair's first
 * string is empty) and where it came from, or why it cannot be followed. */
typedef int (*lz_strlist_visit_fn)(void *ctx, const char *path, const char *why);

/* Append the pair (a, b); push_once: unless a pair starts with a already. */
LZ_HIDDEN void lz_strlist_push(lz_strlist *l, const char *a, const char *b);
LZ_HIDDEN void lz_strlist_push_once(lz_strlist *l, const char *a, const char *b);
/* Append every pair of from, in order, then free from (left empty). */
LZ_HIDDEN void lz_strlist_append(lz_strlist *l, lz_strlist *from);
/* Call visit on each pair until it returns 1, then free the list (left
 * empty). */
LZ_HIDDEN int lz_strlist_visit(lz_strlist *l, lz_strlist_visit_fn visit, void *ctx);

#endif
