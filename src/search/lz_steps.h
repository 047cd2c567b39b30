/* SPDX-License-Identifier: MIT
 * The search order's steps (lz_steps.c; the wheel's is lz_wheel.h), in
 * the order lz_order.c takes them. Each answers 1 when the search must stop:
 * a candidate was accepted, or the step is authoritative. */
#ifndef LZ_STEPS_H
#define LZ_STEPS_H

#include "search/lz_search.h"

/* 1. A handle the program adopts, LAZYNCCL_LIBPATH (or the library's own
 * variable), the program's chooser, else a search list the program set:
 * authoritative when set. */
LZ_HIDDEN int lz_step_override(lz_search *w);
/* 1b. The file the program asked for by path (lazynccl-run's audit module). */
LZ_HIDDEN int lz_step_asked(lz_search *w);
/* 2. A copy already in the process. */
LZ_HIDDEN int lz_step_loaded(lz_search *w);
/* 2b. Beside a library of its release already loaded. */
LZ_HIDDEN int lz_step_release(lz_search *w);
/* 4. and 6. Directories below the prefixes the spec's roots name. */
LZ_HIDDEN int lz_step_roots(lz_search *w, const lz_root *roots);
/* 5. The dynamic linker's own search. */
LZ_HIDDEN int lz_step_linker(lz_search *w);
/* 7. The spec's default directories. */
LZ_HIDDEN int lz_step_default(lz_search *w);

#endif
