/* SPDX-License-Identifier: MIT
 * Comparing dotted version numbers, as the C library's and the libraries'
 * versions are written (lz_version.c). */
#ifndef LZ_VERSION_H
#define LZ_VERSION_H

#include "elf/lz_elfview.h"

/* "2.38" < "2.41": compare dotted version numbers (-1, 0, 1). */
LZ_ELF_API int lz_version_cmp(const char *a, const char *b);

#endif
