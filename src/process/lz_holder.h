/* SPDX-License-Identifier: MIT
 * The loaded object holding an address (lz_holder.c): what it defines,
 * whether it is the C library's, whether the address is read-only after
 * relocation. Read in memory, without the dynamic linker's lock that
 * dladdr and dlsym take. */
#ifndef LZ_HOLDER_H
#define LZ_HOLDER_H

#include "base/lz_runtime.h"

#include <stddef.h>

/* 1 when the loaded object holding the address inside defines each of the
 * n names name(ctx, i) gives, unversioned or at a version not hidden
 * (lz_elfmem_defines: through its GNU hash table, in memory); 0 when one is
 * missing or the object has no GNU hash table. */
LZ_HIDDEN int lz_holder_defines_all(const void *inside, const char *(*name)(const void *ctx, size_t i),
                                     const void *ctx, size_t n);

/* The address of the function or variable name that the loaded object
 * holding the address inside defines (its default version), read from
 * its dynamic symbol table in memory, without the dynamic linker's lock
 * that dlsym takes; NULL when it defines none, or defines it as an
 * indirect function (whose resolver dlsym would run). */
LZ_HIDDEN void *lz_holder_lookup(const void *inside, const char *name);

/* 1 when addr lies in a loaded object other than the C library (libc,
 * libdl) and the dynamic linker: a function interposed on theirs. */
LZ_HIDDEN int lz_holder_outside_c_library(const void *addr);
/* 1 when addr lies in an object's PT_GNU_RELRO (made read-only once
 * relocated): where a copy relocation puts a program's copy of a library's
 * const variable. */
LZ_HIDDEN int lz_holder_relro(const void *addr);

#endif
