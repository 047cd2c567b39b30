/* SPDX-License-Identifier: MIT
 * The search order (lz_search.c): its steps, each proposing candidates. */
#ifndef LZ_SEARCH_H
#define LZ_SEARCH_H

#include "lz_walk.h"

/* Walk the whole search order. */
LZ_HIDDEN void lz_search(lz_walk *w);

#endif
