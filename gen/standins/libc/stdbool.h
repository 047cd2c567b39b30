/* SPDX-License-Identifier: MIT */
#include <_lz_base.h>
#define bool _Bool
#define true 1
#define false 0
