/* SPDX-License-Identifier: MIT */
/* One entry of a search-path list (LD_LIBRARY_PATH, DT_RPATH, DT_RUNPATH)
 * read as the dynamic linker reads it, and the runtime's other path
 * strings: copies and joins (lz_path.c). Pure: no file is touched, so the
 * fuzzer drives it directly. */
#ifndef LZ_PATH_H
#define LZ_PATH_H

#include "base/lz_runtime.h"

/* What the dynamic string tokens stand for where an entry is read: $ORIGIN
 * (the directory of the object whose entry it is), $PLATFORM and $LIB
 * (ld.so's); NULL: unknown here. */
typedef struct lz_path_tokens {
    const char *origin, *platform, *lib;
} lz_path_tokens;

/* The directory entry[0..len) names, in out (size bytes): 1 when it is
 * followed, else 0 with the reason in why (wsize bytes). As ld.so: $ORIGIN,
 * $PLATFORM and $LIB (and ${...}) become tok's values; an empty entry is
 * the current directory and a relative one is relative to it (cwd);
 * trailing slashes go. In a secure-execution process (secure) only
 * absolute entries without $ORIGIN are followed. A token or cwd unknown:
 * entries needing it are not followed. */
LZ_HIDDEN int lz_path_entry(const char *entry, size_t len, const lz_path_tokens *tok, const char *cwd,
                            int secure, char *out, size_t size, char *why, size_t wsize);

/* 1 when entry[0..len) names the token $name or ${name} (as glibc's
 * is_dst reads one): its value is then needed, and only then read. */
LZ_HIDDEN int lz_path_names(const char *entry, size_t len, const char *name);

/* s into out (size bytes), cut to fit: 1 when it fit whole. Without
 * stdio: a first call that succeeds formats nothing (docs/concepts/performance.md,
 * "First calls"). */
LZ_HIDDEN int lz_copy(char *out, size_t size, const char *s);
/* dir + "/" + name into out: 1 when it fit, else 0 and out is "". */
LZ_HIDDEN int lz_path_join(char *out, size_t size, const char *dir, const char *name);
/* dir/name, malloc'd exactly (NULL: longer than PATH_MAX, or out of memory). */
LZ_HIDDEN char *lz_path_dup(const char *dir, const char *name);

/* The length of the next entry of list up to one of seps (":" for run
 * paths, ":;" for LD_LIBRARY_PATH, as ld.so splits them). */
LZ_HIDDEN size_t lz_path_next(const char *list, const char *seps);

#endif
