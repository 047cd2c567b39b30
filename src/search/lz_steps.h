/* SPDX-License-Identifier: MIT
 * The search order's steps (lz_steps.c; the wheel's is lz_wheel.h); their
 * order is lz_order.c's table. Each answers 1 when the search must stop:
 * a candidate was accepted, or the step is authoritative. */
#ifndef LZ_STEPS_H
#define LZ_STEPS_H

#include "search/lz_search.h"

/* A handle the program adopts (its library already in the process). */
LZ_HIDDEN int lz_step_adopted(lz_search *w);
/* LAZYNCCL_LIBPATH (or the library's own variable): authoritative when set. */
LZ_HIDDEN int lz_step_variable(lz_search *w);
/* The file or handle the program's chooser answered. */
LZ_HIDDEN int lz_step_chooser(lz_search *w);
/* A search list the program set: authoritative when set. */
LZ_HIDDEN int lz_step_search_list(lz_search *w);
/* The file the program asked for by path (lazynccl-run's audit module). */
LZ_HIDDEN int lz_step_asked(lz_search *w);
/* A copy already in the process. */
LZ_HIDDEN int lz_step_loaded(lz_search *w);
/* Beside a library of its release already loaded. */
LZ_HIDDEN int lz_step_release(lz_search *w);
/* Directories below the prefixes the spec's roots name, before and after
 * the dynamic linker's search. */
LZ_HIDDEN int lz_step_roots_before(lz_search *w);
LZ_HIDDEN int lz_step_roots_after(lz_search *w);
/* The dynamic linker's own search (its steps: lz_linker.c). */
LZ_HIDDEN int lz_step_linker(lz_search *w);
/* The spec's default directories. */
LZ_HIDDEN int lz_step_default(lz_search *w);

#endif
