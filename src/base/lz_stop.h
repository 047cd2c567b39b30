/* SPDX-License-Identifier: MIT
 * The words a library that cannot be had says on stderr (lz_stop.c), of
 * both runtimes: the spec's say_unavailable line, and the stop of a call
 * that has no failure value to return. */
#ifndef LZ_STOP_H
#define LZ_STOP_H

#include "base/lz_runtime.h"

/* The spec's say_unavailable: the head of report m (its first line, which
 * names the shim, and its first candidate) as one line on stderr, in one
 * write (no stdio: the caller may hold its locks). */
LZ_HIDDEN void lz_say_unavailable(const lz_lib *lib, const char *m);

/* head (k bytes of a buffer of size), then the report m, then exit 127:
 * what the dynamic linker does at start when a library cannot be loaded. */
LZ_HIDDEN __attribute__((noreturn)) void lz_stop_with(const char *m, const char *head, int k,
                                                      size_t size);

/* Names this archive member: a small library's static shim whose functions
 * may stop names it (small/lz_small.h), so that the linker takes it. */
LZ_DECL_DATA const char lz_stop_part;

/* The stop of a call of name, which has no failure value, its library
 * not to be had: ld.so's words, then the report m. */
LZ_HIDDEN __attribute__((noreturn)) void lz_stop_uncalled(const lz_lib *lib, const char *name,
                                                          const char *m);

#endif
