/* SPDX-License-Identifier: MIT
 * Judging one candidate file (lz_candidate.c): probe, score, choose. The
 * search opens the chosen one after the search (lz_open.c). */
#ifndef LZ_CANDIDATE_H
#define LZ_CANDIDATE_H

#include "search/lz_search.h"

/* Judge one file: 1 when it was chosen and the search ends (lz_candidate.c). */
LZ_HIDDEN int lz_try_file(lz_search *w, const char *step, const char *path);
/* Try every soname of the library in dir (1 when one was chosen); quiet: a
 * directory of a default step that holds none is not worth a line. */
LZ_HIDDEN int lz_try_dir(lz_search *w, const char *step, const char *dir, int quiet);
/* Where a step may write its candidate's path (PATH_MAX bytes) so that,
 * accepted, it is the search's result without a copy: the result itself,
 * or NULL once a candidate was accepted (an exhaustive search goes on). */
LZ_HIDDEN char *lz_candidate_buffer(lz_search *w);
/* dir/name for a search (malloc'd), or NULL having said why in the report. */
LZ_HIDDEN char *lz_join(lz_search *w, const char *step, const char *dir, const char *name);
/* Take the fallback kept by the search, if any (after the last step). */
LZ_HIDDEN void lz_take_fallback(lz_search *w);

#endif
