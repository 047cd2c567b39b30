/* SPDX-License-Identifier: MIT
 * The search order (lz_order.c): one table of steps, each proposing
 * candidates. */
#ifndef LZ_ORDER_H
#define LZ_ORDER_H

#include "search/lz_search.h"

/* Follow the whole search order. */
LZ_HIDDEN void lz_order(lz_search *w);

/* Each step in the order it runs, numbered from 1, the dynamic linker's
 * search as its own steps: its name as the report gives it (the spec names
 * three: LAZY<ID>_LIBPATH is NCCL's LAZYNCCL_LIBPATH, search_roots_before
 * its CONDA_PREFIX) and what it tries, one line. */
typedef void (*lz_order_row_fn)(void *ctx, int number, const char *name, const char *what);
LZ_HIDDEN void lz_order_each(lz_order_row_fn fn, void *ctx);

#endif
