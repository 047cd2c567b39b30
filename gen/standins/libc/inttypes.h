/* SPDX-License-Identifier: MIT */
#include <_lz_base.h>
