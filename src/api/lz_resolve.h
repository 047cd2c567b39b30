/* SPDX-License-Identifier: MIT
 * Resolving an export on its first call (lz_resolve.c). */
#ifndef LZ_RESOLVE_H
#define LZ_RESOLVE_H

#include "base/lz_runtime.h"

/* First call of export i: make sure the library is loaded, find the symbol,
 * publish it in the slot (release) and return what the caller must call. */
LZ_HIDDEN lz_fn lz_resolve(const lz_lib *lib, size_t i);
/* The same, told the call's return address (caller: its call site, or
 * NULL), so that a stop that names the object making the call names the
 * one ld.so would (lz_objects_importer). */
LZ_HIDDEN lz_fn lz_resolve_from(const lz_lib *lib, size_t i, const void *caller);

/* Publish p (NULL: not found) as export i's slot, unless another thread
 * published first, and return what the slot holds: p, its own-answer
 * wrapper once a call has failed, or the export's failure function. */
LZ_HIDDEN lz_fn lz_resolve_publish(const lz_lib *lib, size_t i, void *p);

/* Export i at a hidden symbol version of the real library (a drop-in's
 * name@node beside name@@newer), on every call: *slot once published,
 * else resolved with dlvsym and published there (only this version uses
 * it). The export's failure function when the library or that version
 * cannot be had. A call more than the default version's thunk costs: such
 * versions serve old binaries only. */
LZ_HIDDEN lz_fn lz_resolve_version(const lz_lib *lib, size_t i, const char *node, lz_fn *slot);

/* <shim>_resolve_all: load, bind every export now, and say in one
 * message (missing, and the library's last error) every name the library
 * lacks: how many, or -1 when it cannot be loaded (missing: the report). */
LZ_HIDDEN int lz_api_resolve_all(const lz_lib *lib, char *missing, size_t size);

#endif
