/* SPDX-License-Identifier: MIT
 * The glibc-hwcaps subdirectories this process's dynamic linker searches,
 * in its order (lz_hwcaps.c): ld.so tries DIR/glibc-hwcaps/NAME/ before
 * each directory DIR it searches, and prefers ld.so.cache's entries from
 * such a subdirectory by the same order (glibc 2.33 and later). */
#ifndef LZ_HWCAPS_H
#define LZ_HWCAPS_H

#include "base/lz_runtime.h"

/* The names, NULL-terminated, best first, as `ld.so --help` lists them
 * "searched": those of ld.so's --glibc-hwcaps-prepend, then the built-in
 * ones this CPU runs (x86-64-v4, -v3, -v2, as glibc counts them usable),
 * kept to --glibc-hwcaps-mask's where given. Empty before glibc 2.33. Read
 * once. */
LZ_HIDDEN const char *const *lz_hwcaps_subdirs(void);

/* The legacy subdirectories (glibc before 2.37; followed on x86-64),
 * NULL-terminated, best first, as LD_DEBUG=libs shows ld.so trying them:
 * the power set of the hwcap names the mask leaves ("x86_64", Intel's
 * "avx512_1"), the platform and "tls", joined from "tls" down
 * ("tls/x86_64/x86_64", ..., "x86_64"). Empty from glibc 2.37 on. Read
 * once. */
LZ_HIDDEN const char *const *lz_hwcaps_legacy(void);

/* The files ld.so tries in dir for each of names (NULL-terminated), in its
 * order, passed to fn until it returns non-zero (that value returned; 0
 * when none does): for each name, dir/glibc-hwcaps/SUB/name for each SUB
 * above, where dir has glibc-hwcaps (one look for all the names), then
 * dir/LEGACY/name for each legacy subdirectory dir has (a look at each
 * first component, for all the names), then dir/name. dir without a
 * trailing '/'. */
typedef int (*lz_hwcaps_try_fn)(void *ctx, const char *path);
LZ_HIDDEN int lz_hwcaps_try(const char *dir, const char *const *names, lz_hwcaps_try_fn fn, void *ctx);

#endif
