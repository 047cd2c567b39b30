/* SPDX-License-Identifier: MIT
 * The search order (lz_order.c): its steps, each proposing candidates. */
#ifndef LZ_ORDER_H
#define LZ_ORDER_H

#include "search/lz_search.h"

/* Follow the whole search order. */
LZ_HIDDEN void lz_order(lz_search *w);

#endif
