/* SPDX-License-Identifier: MIT
 * The wheel step of the search order (lz_wheel.c). */
#ifndef LZ_WHEEL_H
#define LZ_WHEEL_H

#include "search/lz_search.h"

/* The wheel step: the spec's wheel directories below each site directory this
 * process reaches (the shim's own, each loaded object's, PYTHONPATH, the
 * running Python's sys.path; for lazynccl-info --from, the one above that
 * file). For a library whose spec names wheel directories (lz_order.c asks
 * first). 1 when a candidate was chosen. */
LZ_HIDDEN int lz_step_wheel(lz_search *w);

#endif
