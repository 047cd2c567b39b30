/* SPDX-License-Identifier: MIT
 * A library file's loadable segments placed in memory as the dynamic
 * linker places them, for reading only (lz_elfimage.c): nothing of it
 * runs, nothing is relocated, and the dynamic linker never hears of it, so
 * it may be read where dlopen may not (a variable's resolver, inside the
 * dynamic linker with its lock held). */
#ifndef LZ_ELFIMAGE_H
#define LZ_ELFIMAGE_H

#include "base/lz_runtime.h"

#include <stddef.h>

/* Copies into out (size bytes) the value the file at path gives its
 * variable name where no relocation writes into it (lz_elfmem_plain_value:
 * bytes that hold no address), as the file holds it before any constructor
 * runs: 1. Out untouched: 0 where the file does not define name with that
 * size, or a relocation writes into it; -1 where there is no file to read
 * (gone, no regular file, no shared object of this machine, or one ld.so
 * would not place). */
LZ_HIDDEN int lz_elfimage_value(const char *path, const char *name, void *out, size_t size);

#endif
