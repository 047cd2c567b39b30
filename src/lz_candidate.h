/* SPDX-License-Identifier: MIT
 * Judging one candidate file (lz_candidate.c): probe, choose; after the
 * walk, open and check. */
#ifndef LZ_CANDIDATE_H
#define LZ_CANDIDATE_H

#include "lz_walk.h"

/* Judge one file: 1 when it was chosen and the walk ends (lz_candidate.c). */
LZ_HIDDEN int lz_try_file(lz_walk *w, const char *step, const char *path);
/* Try every soname of the library in dir (1 when one was chosen); quiet: a
 * directory of a default step that holds none is not worth a line. */
LZ_HIDDEN int lz_try_dir(lz_walk *w, const char *step, const char *dir, int quiet);
/* dir/name for a walk (malloc'd), or NULL having said why in the report. */
LZ_HIDDEN char *lz_join(lz_walk *w, const char *step, const char *dir, const char *name);
/* Open the file a walk chose (path, as c says) and check it is the one
 * judged (c's dev/ino, probed or only stat'ed): the handle, or NULL with the
 * reason in why. */
LZ_HIDDEN void *lz_open_chosen(const lz_lib *lib, const char *path, const lz_chosen *c,
                               char *why, size_t size);
/* Take the fallback kept by the walk, if any (after the last step). */
LZ_HIDDEN void lz_take_fallback(lz_walk *w);

#endif
