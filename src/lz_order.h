/* SPDX-License-Identifier: MIT
 * The search order (lz_order.c): its steps, each proposing candidates. */
#ifndef LZ_ORDER_H
#define LZ_ORDER_H

#include "lz_walk.h"

/* Walk the whole search order. */
LZ_HIDDEN void lz_order(lz_walk *w);

#endif
